/* phases.h - the statistics of a run's phases (rt_summary.phases): small per-name accumulators
 * fed by each record's phases and figures (phases.c), kept beside rt_stats; and the copy of the
 * result a holder of a summary keeps as its own (the embedded tracker's rt_tracker_summary).
 * Not public. */
#ifndef RT_ANALYSIS_PHASES_H
#define RT_ANALYSIS_PHASES_H

#include <stdbool.h>

#include "cores.h"
#include "resource_tracker.h"

typedef struct rt_phase_stats rt_phase_stats;

/* An empty accumulator; NULL when out of memory. */
rt_phase_stats *rt_phase_stats_new(void);

/* Absorbs one record (in time order) whose phases are not NULL: its marks open and close calls,
 * its figures go to the calls open over its interval. Allocates only when a new name, more open
 * calls or more marks than any record before come. The stretches between its marks, which
 * cover its interval, go to run (the run's table under other core counts; NULL: none) as well:
 * returns true when they did (false: a record without a time or an interval, left to the
 * caller). */
bool rt_phase_stats_add(rt_phase_stats *ps, const rt_record *r, rt_cores_acc *run);

/* Fills s->phases, s->phase_count and s->phase_counts (0, NULL, NULL for a NULL ps): the calls
 * still open at the last record are closed there (unterminated), in the result only. The
 * storage is ps's, valid until the next call on ps. */
void rt_phase_stats_result(rt_phase_stats *ps, rt_summary *s);

void rt_phase_stats_free(rt_phase_stats *ps);

/* A copy of a summary's phases owned by *keep (made or grown as needed; names still point at
 * the statistics' own, which live as long as they do): s->phases and s->phase_counts are
 * pointed at the copy. Out of memory: no phases (0, NULL), the counts kept when they could be. */
typedef struct rt_phase_copy rt_phase_copy;
void rt_phase_copy_into(rt_phase_copy **keep, rt_summary *s);
void rt_phase_copy_free(rt_phase_copy *keep);

#endif
