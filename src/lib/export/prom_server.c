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
