/* efficiency.h - what the job was given against what it used, the way SLURM's seff counts
 * (the requested figures and efficiencies of rt_summary). Internal. */
#ifndef RT_ANALYSIS_EFFICIENCY_H
#define RT_ANALYSIS_EFFICIENCY_H

#include "resource_tracker.h"

/* Fills s's requested_*, *_from, time_limit_* and *_efficiency_pct from req (NULL: none) and
 * the summary's own figures (its cgroup limits, its machine), which must be final: the memory
 * need, the CPU time, the GPU usage. s->request is set to req when it says anything. */
void rt_efficiency_of(rt_summary *s, const rt_request *req);

#endif
