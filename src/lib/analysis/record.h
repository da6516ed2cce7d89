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

/* The record's GPU work figures (gpu_sm_active_pct to gpu_nvlink_bytes_per_sec, in rt_record's
 * order) of one GPU's work w: PCIe and NVLink as the two directions summed (one alone when the
 * other is NaN); NaN where w has none. */
enum { RT_RECORD_NWORK = 9 };
void rt_record_work_of(const rt_gpu_work *w, double out[RT_RECORD_NWORK]);
/* Sets those figures of r, in that order. */
void rt_record_set_gpu_work(rt_record *r, const double v[RT_RECORD_NWORK]);

#endif
