/* allocation.c - analysis of a run's samples: did the tracked job have the machine to itself
 * ("dedicated") or share it with other work ("shared")? Averages of the machine's and the
 * tree's CPU, memory, GPU time and VRAM over the samples, compared with fixed thresholds. One
 * rule over records (rt_allocation_add_record); live samples are made records first. */
#include <math.h>
#include <stdlib.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "allocation.h"

rt_allocation *rt_allocation_new(void)
{
    return calloc(1, sizeof(rt_allocation));
}

rt_error rt_allocation_new_with(const rt_allocation_options *opts, rt_allocation **out)
{
    rt_err_clear();
    if (out)
        *out = NULL;
    rt_allocation_options o = RT_ALLOCATION_OPTIONS_INIT;
    if (!out || rt_struct_copy(&o, sizeof o, opts) < 0) {
        rt_err_set("rt_allocation_new_with: %s",
                   !out ? "out is NULL" : "rt_allocation_options.struct_size is too small");
        return RT_ERR_INVALID;
    }
    *out = rt_allocation_new();
    return *out ? RT_OK : RT_ERR_NOMEM;
}

void rt_allocation_free(rt_allocation *a)
{
    free(a);
}

void rt_allocation_add_record(rt_allocation *a, const rt_record *r)
{
    if (!a || isnan(r->cpu_cores) || isnan(r->process_cores))
        return;
    a->samples++;
    a->system_cores += r->cpu_cores;
    a->process_cores += r->process_cores;
    if (!isnan(r->memory_used_mib) && !isnan(r->process_pss_mib)) {
        a->memory_samples++;
        a->system_memory_mib += r->memory_used_mib;
        a->process_memory_mib += r->process_pss_mib;
    }
    /* GPUs none of which reports count as none busy, as no VRAM figure counts as none used */
    if (!isnan(r->gpu_usage))
        a->system_gpus += r->gpu_usage;
    if (!isnan(r->gpu_vram_mib))
        a->system_vram_mib += r->gpu_vram_mib;
    if (!isnan(r->process_gpu_usage))
        a->process_gpus += r->process_gpu_usage;
    if (!isnan(r->process_gpu_vram_mib))
        a->process_vram_mib += r->process_gpu_vram_mib;
}

void rt_allocation_add(rt_allocation *a, const rt_sample *s)
{
    if (!a || !s)
        return;
    rt_record r;
    rt_record_from_sample(s, &r);
    rt_allocation_add_record(a, &r);
}

/* Others used more than `absolute` and more than a quarter of what the tree used. */
static bool others_busy(double system, double process, double n, double absolute)
{
    double others = (system - process) / n, mine = process / n;
    return others > absolute && others > 0.25 * mine;
}

const char *rt_allocation_guess(const rt_allocation *a)
{
    if (!a || a->samples <= 0)
        return NULL;
    double n = a->samples;
    if (others_busy(a->system_cores, a->process_cores, n, 0.5) ||
        (a->memory_samples > 0 &&
         others_busy(a->system_memory_mib, a->process_memory_mib, a->memory_samples, 1024.0)) ||
        others_busy(a->system_gpus, a->process_gpus, n, 0.1) ||
        others_busy(a->system_vram_mib, a->process_vram_mib, n, 1024.0))
        return "shared";
    return "dedicated";
}
