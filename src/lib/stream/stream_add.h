/* stream_add.h - the stream's entry for the pipeline's sink (pipeline/sinks.c): a sample with
 * the record the pipeline made of it, so that the stream reads its figures from that record
 * instead of making its own copy. Internal. */
#ifndef RT_STREAM_ADD_H
#define RT_STREAM_ADD_H

#include "resource_tracker.h"

/* rt_stream_add with the sample's record (rec: its figures as the pipeline keeps them; NULL: made
 * from the sample here), which feeds the dedicated/shared guess until the run is registered. */
rt_error rt_stream_add_with(rt_stream *st, const rt_sample *sample, const rt_record *rec);

#endif
