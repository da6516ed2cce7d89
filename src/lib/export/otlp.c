/* otlp.c - PLACEHOLDER (being written): the OTLP/HTTP exporter. */
#include "../core/core.h"

rt_error rt_otlp_start(const rt_otlp_options *opts, rt_otlp **out)
{
    (void)opts;
    if (out)
        *out = NULL;
    return RT_ERR_UNSUPPORTED;
}
rt_error rt_otlp_add(rt_otlp *ex, const rt_sample *sample)
{
    (void)ex, (void)sample;
    return RT_ERR_UNSUPPORTED;
}
rt_error rt_otlp_finish(rt_otlp *ex)
{
    (void)ex;
    return RT_ERR_UNSUPPORTED;
}
void rt_otlp_free(rt_otlp *ex)
{
    (void)ex;
}
