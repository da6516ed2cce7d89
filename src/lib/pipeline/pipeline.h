/* pipeline.h - the pipeline's internals for the embedded tracker, which keeps each sample as a
 * row of its store before the sinks see it: the row (as the store keeps it) handed on with the
 * sample it came from. Internal. */
#ifndef RT_PIPELINE_PIPELINE_H
#define RT_PIPELINE_PIPELINE_H

#include "../store/store.h"
#include "resource_tracker.h"

/* What a sink is: its functions and its self (sink.c makes them, the pipeline calls them). */
struct rt_sink {
    rt_sink_ops ops;
    void *self;
    bool done; /* its add failed: the pipeline gives it nothing more */
};

/* Hands a sample (or NULL for a row of a loaded run) with its row, already as the store keeps it
 * (rt_store_keep), to the sinks; the record is made from the row. Returns as rt_pipeline_add. */
rt_error rt_pipeline_add_row(rt_pipeline *p, const rt_sample *sample, const double row[RT_NCOLS]);

#endif
