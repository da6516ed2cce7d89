/* efficiency.h - what the job was given against what it used, the way SLURM's seff counts
 * (the requested figures and efficiencies of rt_summary). Internal. */
#ifndef RT_ANALYSIS_EFFICIENCY_H
#define RT_ANALYSIS_EFFICIENCY_H

#include "resource_tracker.h"

/* Fills s's requested_*, *_from, time_limit_* and *_efficiency_pct from req (NULL: none) and
 * the summary's own figures (its cgroup limits, its machine), which must be final: the memory
 * need, the CPU time, the GPU usage. s->request is set to req when it says anything. */
void rt_efficiency_of(rt_summary *s, const rt_request *req);

/* The efficiencies in words into buf (cap bytes, NUL-terminated): "CPU 12% of 8 cores
 * (SLURM_CPUS_PER_TASK), memory 7% of 1 GiB (SLURM_MEM_PER_NODE), GPU 40% of 2 GPUs (SLURM_GPUS),
 * time limit 94% of 1.0 h (scontrol)", each part only when known. Returns the length written
 * (0: nothing known, buf ""). */
size_t rt_efficiency_words(const rt_summary *s, char *buf, size_t cap);

#endif
