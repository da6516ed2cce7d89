/* need.h - what a run needed of memory and VRAM (rt_need), from its statistics: one rule for
 * the summary, the recommendation, the notes, the report and the history (see need.c). Not
 * public. */
#ifndef RT_ANALYSIS_NEED_H
#define RT_ANALYSIS_NEED_H

#include "../core/core.h"

/* The memory and VRAM needs of the run s (see rt_need in the public header for the rule):
 * the largest known figure with its source, or NaN and RT_NEED_UNKNOWN without any (and for
 * a run without a tracked tree). */
void rt_need_of(const rt_summary *s, rt_need *memory, rt_need *vram);

#endif
