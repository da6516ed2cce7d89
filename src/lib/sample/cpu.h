/* cpu.h - the sampler's CPU part: /proc/stat per core, turned into busy cores per interval.
 * The machine's figures follow from the per-core lines alone (the aggregate line is rounded
 * apart from them by the kernel), so utilization always equals the sum of the cores. */
#ifndef RT_SAMPLE_CPU_H
#define RT_SAMPLE_CPU_H

#include "context.h"

typedef struct rt_cpu_part {
    int fd;                    /* /proc/stat, kept open */
    rt_cpu_ticks *cur, *prev;  /* per-core readings, cap entries each */
    size_t ncur, nprev, cap;
    double *per_core;          /* cap entries: the sample's per_core_pct */
    bool have_cur, have_prev;
    int64_t procs_running;     /* RT_NULL_I64 when not reported */
    int64_t all_processes;     /* numbered entries of /proc; RT_NULL_I64 when not listed */
    rt_cpu out;
} rt_cpu_part;

/* Opens /proc/stat. Returns 0, or -1 when it cannot be opened (nothing to sample). */
int rt_cpu_part_open(rt_cpu_part *p, rt_sample_ctx *c);
/* Reads and parses /proc/stat into the current reading. Returns whether it could. */
bool rt_cpu_part_snapshot(rt_cpu_part *p, rt_sample_ctx *c);
/* Fills p->out from the current and previous readings (null where either is missing). */
void rt_cpu_part_delta(rt_cpu_part *p, const rt_sample_ctx *c);
/* Makes the current reading the previous one (a failed snapshot keeps the old previous). */
void rt_cpu_part_commit(rt_cpu_part *p);
void rt_cpu_part_close(rt_cpu_part *p);

#endif
