/* sampler_internal.h - the sampler's state: the shared context, one part per subsystem (each
 * with its own reading, previous reading and delta), and the public sample they fill. */
#ifndef RT_SAMPLER_INTERNAL_H
#define RT_SAMPLER_INTERNAL_H

#include "clocks.h"
#include "../core/request.h"
#include "../core/member.h"
#include "cgroup.h"
#include "context.h"
#include "cpu.h"
#include "disks.h"
#include "energy.h"
#include "gpu.h"
#include "memory.h"
#include "net.h"
#include "pressure.h"
#include "tree.h"

struct rt_sampler {
    rt_sample_ctx ctx;
    rt_cpu_part cpu;
    rt_mem_part mem;
    rt_disk_part disks;
    rt_net_part net;
    rt_gpu_part gpu;
    rt_energy_part energy; /* on unless energy_off */
    rt_tree_part tree;
    bool has_tree;
    rt_psi_part psi; /* the machine's pressure */
    rt_cg_part cg;   /* the tree's control group, or without a tree the tracker's own
                      * (cg.group NULL: none) */
    double prev_mono; /* the previous reading's time, or where the first interval starts */
    bool have_prev_time;
    rt_clocks clocks; /* the previous reading's clocks: a wall clock's step, a gap (clocks.h) */
    double root_end_mono; /* wrapper mode: the latest end of the children reaped since the last
                           * reading (the command, the orphans it left us) as the kernel's
                           * scheduler told it at the reaping (rt_sampler_reap), CLOCK_MONOTONIC;
                           * NaN: none */
    bool ends_unknown;    /* one of them had no end to be read: the interval is not cut */
    rt_sched_offsets sched; /* the scheduler's task clocks' offsets from the monotonic clock by
                             * CPU, as the live readings saw them (clocks.h); wrapper mode only */
    rt_sample sample;
    rt_request_copy request; /* rt_sampler_options.request's copy; set: on every sample */
    rt_member_copy member;   /* rt_sampler_options.member's copy; set: on every sample */
    double watch_delay; /* rt_sampler_watch's next wait: fast while the job's memory moves */
};

#endif
