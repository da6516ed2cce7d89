/* prom_server.c - PLACEHOLDER (being written): the Prometheus /metrics server. */
#include "../core/core.h"

rt_error rt_prom_start(const rt_prom_options *opts, rt_prom_server **out)
{
    (void)opts;
    if (out)
        *out = NULL;
    return RT_ERR_UNSUPPORTED;
}
rt_error rt_prom_set_host(rt_prom_server *srv, const rt_host *host)
{
    (void)srv, (void)host;
    return RT_ERR_UNSUPPORTED;
}
int rt_prom_port(const rt_prom_server *srv)
{
    (void)srv;
    return -1;
}
rt_error rt_prom_publish(rt_prom_server *srv, const rt_sample *sample)
{
    (void)srv;
    (void)sample;
    return RT_ERR_UNSUPPORTED;
}
void rt_prom_free(rt_prom_server *srv)
{
    (void)srv;
}
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
