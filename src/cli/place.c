/* place.c - where a tracking run's job runs (--place auto|off): the library's rt_place found at
 * the start, its request handed to the sampler, and its job metadata merged under the user's
 * (a field or a tag key the user gave wins). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Whether tags[0..n) has one with the key of kv ("key=..."). */
static bool has_key(const char *const *tags, size_t n, const char *kv)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < n; i++)
        if (strncmp(tags[i], kv, klen) == 0 && tags[i][klen] == '=')
            return true;
    return false;
}

void cli_place_apply(cli_options *o)
{
    if (o->place_off || o->place)
        return;
    rt_place_options po = RT_PLACE_OPTIONS_INIT;
    po.log = cli_log;
    rt_place *p = NULL;
    if (rt_place_detect(&po, &p) != RT_OK) {
        cli_say("warning: out of memory: where the job runs is not known");
        return;
    }
    const rt_job *pj = rt_place_job(p);
    const char **tags = calloc(o->job.tag_count + pj->tag_count + 1, sizeof *tags);
    if (!tags) {
        rt_place_free(p);
        cli_say("warning: out of memory: where the job runs is not known");
        return;
    }
    o->place = p;
    o->request = rt_place_request(p);
    rt_job *j = &o->job;
    /* the fields the user did not give */
    const char **mine[] = {&j->job_name, &j->project_name, &j->stage_name, &j->task_name, &j->team, &j->env,
                           &j->language, &j->orchestrator, &j->executor, &j->external_run_id, &j->container_image};
    const char *const theirs[] = {pj->job_name, pj->project_name, pj->stage_name, pj->task_name,
                                  pj->team, pj->env, pj->language, pj->orchestrator, pj->executor,
                                  pj->external_run_id, pj->container_image};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (!*mine[i] && theirs[i])
            *mine[i] = theirs[i];
    size_t n = 0;
    for (size_t i = 0; i < j->tag_count; i++)
        tags[n++] = j->tags[i];
    for (size_t i = 0; i < pj->tag_count; i++)
        if (!has_key(tags, n, pj->tags[i]))
            tags[n++] = pj->tags[i];
    o->place_tags = tags;
    j->tags = tags;
    j->tag_count = n;
}

void cli_place_free(cli_options *o)
{
    free(o->place_tags);
    o->place_tags = NULL;
    rt_place_free(o->place);
    o->place = NULL;
    o->request = NULL;
}
