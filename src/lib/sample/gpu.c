/* gpu.c - the sampler's GPU part (see gpu.h): the device readings as the sample's pointer
 * array, and the tree's share asked of the GPU set with the tree's membership. */
#include <stdlib.h>

#include "gpu.h"

int rt_gpu_part_open(rt_gpu_part *p, rt_sample_ctx *c, const char *nvml_library)
{
    p->gpus = rt_gpus_open(&c->roots, nvml_library, &c->log);
    return p->gpus ? 0 : -1;
}

void rt_gpu_part_snapshot(rt_gpu_part *p)
{
    size_t n = 0;
    const rt_gpu *g = rt_gpus_read(p->gpus, &n);
    p->count = 0;
    if (n > p->cap && rt_grow(&p->ptrs, &p->cap, n, sizeof *p->ptrs) < 0)
        return;
    for (size_t i = 0; i < n; i++)
        p->ptrs[i] = &g[i];
    p->count = n;
}

/* rt_pid_in_tree over the process tree. */
static bool tree_has(void *user, int64_t pid)
{
    return rt_proctree_has(user, pid);
}

uint64_t rt_gpu_part_tree(rt_gpu_part *p, rt_proctree *tree, double mono, rt_process *o)
{
    size_t nlive;
    const int64_t *live = rt_proctree_live(tree, &nlive);
    uint64_t main_vram;
    rt_gpus_tree(p->gpus, tree_has, tree, live, nlive, mono, &o->gpu_utilization_pct, &o->gpu_vram_used_bytes,
                 &o->gpu_count_used, o->pid, &main_vram);
    o->gpu_vram_peak_bytes = rt_gpus_tree_vram_peak(p->gpus); /* NVML's accounting, where it is on */
    rt_gpus_job job;
    rt_gpus_job_of(p->gpus, tree_has, tree, &job);
    o->gpu_work = job.work;
    o->gpu_work_scope = job.scope;
    o->gpu_count_busy = job.busy;
    o->gpu_vram_per_gpu_max_bytes = job.vram_one_max;
    return main_vram;
}

const rt_gpu_use *rt_gpu_part_all(rt_gpu_part *p)
{
    if (p->count == 0)
        return NULL;
    rt_gpus_all(p->gpus, &p->all.utilization_pct, &p->all.vram_used_bytes, &p->all.gpu_count_used);
    return &p->all;
}

void rt_gpu_part_close(rt_gpu_part *p)
{
    rt_gpus_close(p->gpus);
    free(p->ptrs);
}
