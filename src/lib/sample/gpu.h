/* gpu.h - the sampler's GPU part: the set of GPUs (NVML, AMD, Intel; see source/gpu.h) read
 * each sample, and the tracked tree's share of them. GPU figures are gauges, and the tree's
 * share is computed by the source over the interval it keeps itself. */
#ifndef RT_SAMPLE_GPU_H
#define RT_SAMPLE_GPU_H

#include "../source/gpu.h"
#include "../source/proctree.h"
#include "context.h"

typedef struct rt_gpu_part {
    rt_gpus *gpus;
    const rt_gpu **ptrs; /* the sample's array: one pointer per device */
    size_t count, cap;
    rt_gpu_use all; /* the sample's gpu_processes (no tracked tree) */
} rt_gpu_part;

/* Finds the GPUs (nvml_library: NULL for libnvidia-ml.so.1). Returns 0, or -1 on no memory. */
int rt_gpu_part_open(rt_gpu_part *p, rt_sample_ctx *c, const char *nvml_library);
/* Reads every device. */
void rt_gpu_part_snapshot(rt_gpu_part *p);
/* The tree's use of the GPUs over the interval ending at mono, into o's gpu_* fields (null
 * when no GPU could say; gpu_vram_peak_bytes null unless NVML's accounting is on). Returns the VRAM of the tree's root (o->pid) alone, RT_NULL_U64
 * when no GPU could say. */
uint64_t rt_gpu_part_tree(rt_gpu_part *p, rt_proctree *tree, double mono, rt_process *o);
/* Every process's use of the GPUs over the interval (no tracked tree: rt_gpus_all), into
 * p->all; returns it, or NULL on a machine without GPUs. */
const rt_gpu_use *rt_gpu_part_all(rt_gpu_part *p);
void rt_gpu_part_close(rt_gpu_part *p);

#endif
