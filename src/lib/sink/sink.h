/* sink.h - the sinks' shared internals: the two views the writer (writer.c) calls, the JSON
 * line (json.c) and the CSV row (csv.c), built with the output builder of core/ob.h. Not
 * public. */
#ifndef RT_SINK_H
#define RT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "resource_tracker.h"
#include "../core/ob.h"

void rt_json_sample(rt_ob *o, const rt_sample *s, const rt_job *job);
/* The JSON line's name of a mark's cpu_source ("none", "group", "schedstat", "ticks", "marker"). */
const char *rt_phase_cpu_source_name(int source);
void rt_csv_sample(rt_ob *o, const rt_sample *s);

#endif
