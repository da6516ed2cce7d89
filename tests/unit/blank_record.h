/* blank_record.h - a record with every figure null, for the analysis tests (test_stats,
 * test_cores) to fill in. Include after unit.h and resource_tracker.h. */
#ifndef RT_TEST_BLANK_RECORD_H
#define RT_TEST_BLANK_RECORD_H

#include <math.h>
#include <string.h>

/* A record with every figure from cpu_cores to pressure_io_full_pct NaN (no machine figure, no
 * tree) at timestamp ts standing for interval seconds; the later members zero. */
static inline rt_record blank_record(double ts, double interval)
{
    rt_record r;
    memset(&r, 0, sizeof r);
    const double nan = NAN;
    for (size_t off = offsetof(rt_record, cpu_cores); off <= offsetof(rt_record, pressure_io_full_pct);
         off += sizeof(double))
        memcpy((char *)&r + off, &nan, sizeof nan);
    r.timestamp_secs = ts;
    r.interval_secs = interval;
    r.job_name = NULL;
    return r;
}

#endif
