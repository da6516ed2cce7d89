/* gpuview.c - the settings of gpu_tracker's view of a run (rt_usage): --expected-cores N and
 * --gpus UUID,... ([tracker] expected_cores and gpus in the config file; their values are read
 * by settings.c), merged and handed to the statistics; and the same two options of `summary`. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "settings.h"

int cli_gpuview_merge(cli_options *o, char *err, size_t errlen)
{
    char where[32]; /* expected_cores is merged with the other settings (settings.c) */
    const char *gpus = cli_setting_str(o, cli_setting_by_flag("gpus"), where, sizeof where);
    cli_gpu_list_free(o->gpu_list, o->ngpus);
    o->gpu_list = NULL;
    o->ngpus = 0;
    const char *why = NULL;
    if (gpus && cli_parse_gpu_list(gpus, &o->gpu_list, &o->ngpus, &why) < 0) {
        snprintf(err, errlen, "%s: %s: '%s'", where, why, gpus);
        return -1;
    }
    return 0;
}

int cli_gpuview_apply(double expected_cores, char *const *gpus, size_t ngpus, rt_stats *st)
{
    rt_usage_options u = RT_USAGE_OPTIONS_INIT;
    u.expected_cores = expected_cores;
    u.gpu_uuids = (const char *const *)gpus;
    u.gpu_uuid_count = ngpus;
    return rt_stats_set_usage(st, &u) == RT_OK ? 0 : -1;
}

/* Whether uuid is the uuid of one of the sample's GPUs. */
static bool has_gpu(const rt_sample *s, const char *uuid)
{
    for (size_t i = 0; i < s->gpu_count; i++)
        if (s->gpu[i]->uuid && strcmp(s->gpu[i]->uuid, uuid) == 0)
            return true;
    return false;
}

void cli_gpuview_check(char *const *gpus, size_t ngpus, const rt_sample *last)
{
    for (size_t i = 0; last && i < ngpus; i++)
        if (!has_gpu(last, gpus[i]))
            cli_say("--gpus: no GPU '%s' was seen (%zu GPU%s); its utilization is missing from the summary", gpus[i],
                    last->gpu_count, last->gpu_count == 1 ? "" : "s");
}
