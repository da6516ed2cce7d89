/* peek.h - the sampler's reading at a phase's mark (peek.c): rt_sampler_peek, and the split the
 * embedded tracker needs to stamp its own process's exact CPU. Internal. */
#ifndef RT_SAMPLE_PEEK_H
#define RT_SAMPLE_PEEK_H

#include "resource_tracker.h"

/* As rt_sampler_peek, also setting *others_secs (may be NULL) to the CPU seconds of the tree
 * less its root (own time and what it reaped) from the same light walk, on stat ticks: the
 * other processes' part of the tree, live and departed (NaN when the root was not read). */
rt_error rt_sampler_peek_split(rt_sampler *s, rt_phase_mark *m, double *others_secs);

#endif
