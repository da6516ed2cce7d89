/* prom_format.c - PLACEHOLDER (the Prometheus formatter and the node_exporter textfile are
 * written on another branch; this file is replaced at the merge): stubs that link. */
#include "../core/core.h"

size_t rt_format_prometheus(const rt_sample *sample, const rt_job *job, const rt_host *host, const rt_cloud *cloud,
                            int openmetrics, char *buf, size_t cap)
{
    (void)sample, (void)job, (void)host, (void)cloud, (void)openmetrics;
    if (cap)
        buf[0] = '\0';
    return 0;
}
rt_error rt_prom_textfile_write(const char *dir, const char *name, const rt_job *job, const rt_job_status *status,
                                char *path, size_t pathlen)
{
    (void)dir, (void)name, (void)job, (void)status, (void)path, (void)pathlen;
    return RT_ERR_UNSUPPORTED;
}
