/* request.c - copies of an rt_request that own their strings (request.h). */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "request.h"

/* A figure and its source: kept when both say something sensible, else not said. */
static void figure(double *v, const char **from, char *buf, size_t cap)
{
    *from = rt_copy_cut_said(buf, cap, *from);
    if (!*from || !isfinite(*v) || *v < 0) {
        *v = 0;
        *from = NULL;
    }
}

int rt_request_keep(rt_request_copy *dst, const rt_request *src)
{
    memset(dst, 0, sizeof *dst);
    dst->r.struct_size = sizeof dst->r;
    /* the copy's struct_size: its own */
    int got =
        rt_struct_copy_least(&dst->r, sizeof dst->r, src, offsetof(rt_request, time_limit_from) + sizeof(const char *));
    if (got <= 0)
        return got;
    rt_request *r = &dst->r;
    r->place = rt_copy_cut_said(dst->place, sizeof dst->place, r->place);
    figure(&r->cpu_cores, &r->cpu_from, dst->cpu_from, sizeof dst->cpu_from);
    figure(&r->memory_mib, &r->memory_from, dst->memory_from, sizeof dst->memory_from);
    figure(&r->gpus, &r->gpus_from, dst->gpus_from, sizeof dst->gpus_from);
    figure(&r->time_limit_secs, &r->time_limit_from, dst->time_limit_from, sizeof dst->time_limit_from);
    if (!isfinite(r->job_start_secs) || r->job_start_secs <= 0)
        r->job_start_secs = 0;
    if (r->cpu_cores == 0) /* no cores is not a request */
        r->cpu_from = NULL;
    if (r->memory_mib == 0)
        r->memory_from = NULL;
    if (r->time_limit_secs == 0)
        r->time_limit_from = NULL;
    dst->set = true;
    return 0;
}

bool rt_request_any(const rt_request *req)
{
    return req && (req->place || req->cpu_from || req->memory_from || req->gpus_from || req->time_limit_from);
}
