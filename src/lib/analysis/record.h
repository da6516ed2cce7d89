/* record.h - the analysis record (rt_record) made null, and a caller's record read at the
 * caller's size: what the statistics, the report and the pipeline take from a binding built on
 * an older, shorter rt_record. Not public. */
#ifndef RT_ANALYSIS_RECORD_H
#define RT_ANALYSIS_RECORD_H

#include <stddef.h>

#include "resource_tracker.h"

/* rec with every figure NaN, job_name and gpu NULL, gpu_n 0. */
void rt_record_null(rt_record *rec);

/* The caller's record rec of rec_size bytes as a whole rt_record: rec itself when rec_size holds
 * all of this library's record, else tmp filled with the members wholly within rec_size (read
 * one by one: no byte at or past rec_size is read) and the rest null (gpu and gpu_n only
 * together). NULL for a NULL rec or a rec_size 0. */
const rt_record *rt_record_at_size(const rt_record *rec, size_t rec_size, rt_record *tmp);

#endif
