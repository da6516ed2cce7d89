/* fuzz_place.c - libFuzzer target for where the job runs (source/place.c, place_query.c): the
 * answers of scontrol and squeue, SLURM's durations and times, Kubernetes quantities, and a whole
 * detection over an environment made of the input's lines (no command run). Any bytes are read or
 * refused without a crash; a figure said is finite and not negative. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/place.h"

static void check(double v)
{
    if (!isfinite(v) || v < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the parsers take NUL-terminated text (the environment's values, a command's output as
     * rt_place_run terminates it) */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    double v;
    rt_slurm_times t;
    if (rt_slurm_parse_duration(text, &v) == 1)
        check(v);
    if (rt_slurm_parse_time(text, &v) == 1)
        check(v);
    if (rt_k8s_parse_quantity(text, &v) == 0)
        check(v);
    if (rt_slurm_parse_scontrol(text, &t) == 0 && t.limit == 1)
        check(t.limit_secs);
    if (rt_slurm_parse_squeue(text, &t) == 0 && t.limit == 1)
        check(t.limit_secs);
    /* the input's lines as the environment */
    size_t n = 1;
    for (size_t i = 0; i < size; i++)
        n += text[i] == '\n';
    const char **envp = calloc(n + 1, sizeof *envp);
    if (envp) {
        size_t k = 0;
        for (char *line = text, *nl; line && k < n; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            envp[k++] = line;
        }
        rt_place_options o = RT_PLACE_OPTIONS_INIT;
        o.envp = envp;
        o.no_query = 1;
        rt_place *p = NULL;
        if (rt_place_detect(&o, &p) == RT_OK) {
            const rt_request *r = rt_place_request(p);
            const rt_job *j = rt_place_job(p);
            if (r->cpu_from)
                check(r->cpu_cores);
            if (r->memory_from)
                check(r->memory_mib);
            if (r->gpus_from)
                check(r->gpus);
            if (r->time_limit_from)
                check(r->time_limit_secs);
            for (size_t i = 0; i < j->tag_count; i++)
                if (!strchr(j->tags[i], '='))
                    abort();
            rt_place_free(p);
        }
        free(envp);
    }
    free(text);
    return 0;
}
