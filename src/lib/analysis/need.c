/* need.c - what a run needed of memory and VRAM (rt_need): the largest of the kernel's peaks
 * and the sampled figures of its statistics, with which figure it was, so that every answer
 * (summary, recommendation, notes, report, history) says the same and can say why. */
#include <math.h>

#include "need.h"

const char *rt_need_source_name(int source)
{
    switch (source) {
    case RT_NEED_CGROUP: return "cgroup";
    case RT_NEED_PROCESS_PEAK: return "process_peak";
    case RT_NEED_RSS: return "rss";
    case RT_NEED_PSS: return "pss";
    case RT_NEED_NVML_PEAK: return "nvml_peak";
    case RT_NEED_VRAM: return "vram";
    case RT_NEED_PROCESS_PEAKS: return "process_peaks";
    default: return "unknown";
    }
}

const char *rt_need_source_text(int source)
{
    switch (source) {
    case RT_NEED_CGROUP: return "cgroup peak less page cache, kernel-counted";
    case RT_NEED_PROCESS_PEAK: return "largest process's peak RSS, kernel-counted";
    case RT_NEED_RSS: return "RSS peak of the samples";
    case RT_NEED_PSS: return "PSS peak of the samples";
    case RT_NEED_NVML_PEAK: return "VRAM peak, NVML's accounting";
    case RT_NEED_VRAM: return "VRAM peak of the samples";
    case RT_NEED_PROCESS_PEAKS: return "each process at its own peak, all at once, kernel-counted";
    default: return "no memory figure";
    }
}

/* One candidate figure. */
typedef struct cand {
    double mib;
    int source;
    int sampled;
} cand;

/* The largest known of c[0..n) (the first of equals: the candidates come in order of
 * preference); unknown when none is known. */
static rt_need largest(const cand *c, size_t n)
{
    rt_need out = {NAN, RT_NEED_UNKNOWN, 0};
    for (size_t i = 0; i < n; i++)
        if (isfinite(c[i].mib) && c[i].mib >= 0 && !(c[i].mib <= out.mib)) {
            out.mib = c[i].mib;
            out.source = c[i].source;
        }
    return out;
}

void rt_need_of(const rt_summary *s, rt_need *memory, rt_need *vram)
{
    *memory = *vram = (rt_need){NAN, RT_NEED_UNKNOWN, 0};
    if (!s || !s->has_process)
        return;
    /* the tree's RSS with shared pages once (gpu_tracker's combined part); a recording
     * without the parts (or a rollup that could not be read) has only the sum of its
     * processes' RSS (shared pages counted in each process: more, never less) */
    double rss = s->usage ? s->usage->ram_peak[2].total_mib : NAN;
    if (isnan(rss))
        rss = s->process_rss_mib.peak;
    /* with the job's cgroup, its figure counts the whole tree between samples; without it,
     * the processes' own peaks as if all at once stand in (the safe side: more than the tree
     * held when they peaked apart) */
    bool cg = isfinite(s->process_unreclaimable_peak_mib);
    const cand mem[] = {
        {s->process_unreclaimable_peak_mib, RT_NEED_CGROUP, 0},
        {s->process_rss_hwm_mib, RT_NEED_PROCESS_PEAK, 0},
        {rss, RT_NEED_RSS, 1},
        {s->process_pss_mib.peak, RT_NEED_PSS, 1},
        {cg ? NAN : s->process_rss_hwm_tree_mib, RT_NEED_PROCESS_PEAKS, 1},
    };
    *memory = largest(mem, sizeof mem / sizeof mem[0]);
    /* without the cgroup every figure is a lower bound: none counts kernel memory, and only the
     * processes' peaks count files no process maps (tmpfs mounts of the job's own, /dev/shm's
     * growth) and, as root, a process born and gone between samples (the kernel's exit records);
     * a sampled one misses a peak between samples, one process's peak the others */
    memory->sampled = !cg && memory->source != RT_NEED_UNKNOWN;
    const cand gpu[] = {
        {s->process_gpu_vram_peak_mib, RT_NEED_NVML_PEAK, 0},
        {s->process_gpu_vram_mib.peak, RT_NEED_VRAM, 1},
    };
    *vram = largest(gpu, sizeof gpu / sizeof gpu[0]);
    vram->sampled = vram->source == RT_NEED_VRAM;
}
