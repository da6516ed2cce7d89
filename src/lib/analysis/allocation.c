/* allocation.c - analysis of a run's samples: did the tracked job have the machine to itself
 * ("dedicated") or share it with other work ("shared")? Averages of the machine's and the
 * tree's CPU, memory, GPU time and VRAM over the samples, compared with fixed thresholds. */
#include <math.h>
#include <stdlib.h>

#include "../core/core.h"

struct rt_allocation {
    double samples;
    double system_cores, process_cores;
    double system_memory_mib, process_memory_mib;
    double system_gpus, process_gpus;
    double system_vram_mib, process_vram_mib;
};

rt_allocation *rt_allocation_new(void)
{
    return calloc(1, sizeof(rt_allocation));
}

void rt_allocation_free(rt_allocation *a)
{
    free(a);
}

void rt_allocation_add(rt_allocation *a, const rt_sample *s)
{
    const rt_process *p = s->process;
    if (!a || !p || isnan(s->cpu->utilization_pct) || isnan(p->cores_used))
        return;
    a->samples++;
    a->system_cores += s->cpu->utilization_pct;
    a->process_cores += p->cores_used;
    if (!isnan(s->memory->used_mib) && !isnan(p->pss_mib)) {
        a->system_memory_mib += s->memory->used_mib;
        a->process_memory_mib += p->pss_mib;
    }
    double gpus = 0, vram = 0;
    for (size_t i = 0; i < s->gpu_count; i++) {
        if (!isnan(s->gpu[i]->utilization_pct))
            gpus += s->gpu[i]->utilization_pct / 100.0;
        if (s->gpu[i]->vram_used_bytes != RT_NULL_U64)
            vram += (double)s->gpu[i]->vram_used_bytes / 1048576.0;
    }
    a->system_gpus += gpus;
    a->system_vram_mib += vram;
    if (!isnan(p->gpu_utilization_pct))
        a->process_gpus += p->gpu_utilization_pct / 100.0;
    if (p->gpu_vram_used_bytes != RT_NULL_U64)
        a->process_vram_mib += (double)p->gpu_vram_used_bytes / 1048576.0;
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
        others_busy(a->system_memory_mib, a->process_memory_mib, n, 1024.0) ||
        others_busy(a->system_gpus, a->process_gpus, n, 0.1) ||
        others_busy(a->system_vram_mib, a->process_vram_mib, n, 1024.0))
        return "shared";
    return "dedicated";
}
