/* counters.h - the counters read now (rt_counters, see the public header): the handle both
 * readings share, the machine's reading (counters.c) and the process tree's (counters_tree.c).
 * Not public. */
#ifndef RT_SAMPLE_COUNTERS_H
#define RT_SAMPLE_COUNTERS_H

#include "../core/pidmap.h"
#include "disks.h"
#include "gpu.h"
#include "memory.h"
#include "net.h"

struct rt_counters {
    rt_sample_ctx ctx;
    char nvml_path[4096]; /* "": libnvidia-ml.so.1 */
    bool gpu_off, gpu_tried;
    rt_gpus *gpus;     /* opened at the first reading that needs them; NULL: none or gpu_off */
    /* the machine */
    int stat_fd;       /* /proc/stat, kept open */
    rt_mem_part mem;
    rt_disk_part disks;
    rt_net_part net;
    rt_disk_counters *disk_out;
    const rt_disk_counters **disk_ptrs;
    size_t disk_cap, disk_ptrs_cap;
    rt_mount_space *mount_out;
    const rt_mount_space **mount_ptrs;
    size_t mount_cap, mount_ptrs_cap;
    rt_system_counters sys;
    /* the tree */
    int64_t *pids;     /* the walk's queue: every process of the tree found so far */
    size_t npids, pids_cap;
    rt_pidmap seen;    /* the pids in the queue, emptied after each walk */
    rt_buf list;       /* a children list is read into this */
    char buf[8192];    /* stat, io and smaps_rollup are read into this */
};

/* The GPUs, opened at the first call (NULL without any, or with gpu_off). */
rt_gpus *rt_counters_gpus(rt_counters *c);

#endif
