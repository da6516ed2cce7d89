/* sink.h - the sinks' shared internals: the views the writer (writer.c) calls, the JSON line
 * (json.c), the CSV row (csv.c) and the Rust tool's JSON line (json_rs.c), built with the
 * output builder of core/ob.h. Not public. */
#ifndef RT_SINK_H
#define RT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "resource_tracker.h"
#include "../core/ob.h"

void rt_json_sample(rt_ob *o, const rt_sample *s, const rt_job *job);
/* The members of a "member" object (the run's place in a job of several nodes), each with
 * its comma, a number null when not said (below 0): the JSON line's and the summary's. */
void rt_json_member_fields(rt_ob *o, const rt_member *m);
/* The JSON line's name of a mark's cpu_source ("none", "group", "schedstat", "ticks", "marker"). */
const char *rt_phase_cpu_source_name(int source);
void rt_csv_sample(rt_ob *o, const rt_sample *s, bool energy);
/* "object.key" of the summary's member written from rt_summary's double or rt_dist at offset off
 * (summary.c's member tables: the key before a unit's suffix) into buf; its length, 0 when no
 * table writes it. What a record row's json names (analysis/record_fields.h): its test's walk. */
size_t rt_summary_json_key(size_t off, char *buf, size_t cap);

/* The Rust tool's JSON line (json_rs.c). What it needs of the samples before: whether one was
 * written, and the cumulative figures its per-interval members are the change of. */
enum { RT_RS_PREV = 8 };
typedef struct rt_rs_state {
    int started;             /* a sample was written: actual_interval_ms goes in */
    double prev[RT_RS_PREV]; /* rt_rs_cpu's RS_DELTA and RS_RATE members by their index there;
                              * NaN where the previous sample had none */
} rt_rs_state;

/* A fresh state: no sample yet. */
void rt_json_rs_start(rt_rs_state *st);
/* The line of s; st NULL: no state (actual_interval_ms from the interval, deltas null). */
void rt_json_rs_sample(rt_ob *o, const rt_sample *s, const rt_job *job, const rt_rs_state *st);
/* Records in st that s was written. */
void rt_json_rs_next(rt_rs_state *st, const rt_sample *s);

#endif
