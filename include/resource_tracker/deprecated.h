/* resource_tracker/deprecated.h - the names kept for bindings built before their replacements,
 * each marked RT_DEPRECATED with the name to use instead (see resource_tracker.h, Conventions).
 * They stay declared and exported, behaving as before, for the rest of the MAJOR version.
 * resource_tracker.h includes this unless RT_NO_DEPRECATED is defined before it: a program
 * that defines it is sure to use none of them. */
#ifndef RESOURCE_TRACKER_DEPRECATED_H
#define RESOURCE_TRACKER_DEPRECATED_H

#include "cgroup.h"
#include "host.h"
#include "analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a cgroup of the job's own ----------------------------------------------------------- */

/* The former name of rt_job_cgroup_new. */
RT_API rt_error rt_job_cgroup_create(const rt_job_cgroup_options *opts, rt_job_cgroup **out)
    RT_DEPRECATED("rt_job_cgroup_new");
/* As rt_job_cgroup_join, returning 0 or -errno. */
RT_API int rt_job_cgroup_enter(const rt_job_cgroup *g) RT_DEPRECATED("rt_job_cgroup_join");

/* ---- the host ---------------------------------------------------------------------------- */

/* The former name of rt_host_new. */
RT_API rt_error rt_host_read(const rt_host_options *opts, rt_host **out) RT_DEPRECATED("rt_host_new");
/* The accumulator, or NULL when out of memory (rt_allocation_new_with with the defaults). */
RT_API rt_allocation *rt_allocation_new(void) RT_DEPRECATED("rt_allocation_new_with");

/* ---- analysis of a run ------------------------------------------------------------------- */

/* Fills the whole rt_record of the library's size, which overruns a caller built with an
 * older, shorter header. */
RT_API void rt_record_from_sample(const rt_sample *s, rt_record *out) RT_DEPRECATED("rt_record_from_sample_sized");
/* The former name of rt_reader_free. */
RT_API void rt_reader_close(rt_reader *r) RT_DEPRECATED("rt_reader_free");
/* rt_stats_new_with(NULL, ...): the accumulator, or NULL when out of memory. */
RT_API rt_stats *rt_stats_new(void) RT_DEPRECATED("rt_stats_new_with");
/* Reads a whole rt_record of the library's size, past the end of a shorter record of a caller
 * built with an older header. */
RT_API void rt_stats_add(rt_stats *st, const rt_record *rec) RT_DEPRECATED("rt_stats_add_sized");
/* The length needed, or 0 for an unknown unit. */
RT_API size_t rt_format_summary(const rt_summary *s, const char *memory_unit, const char *time_unit,
                                char *buf, size_t cap) RT_DEPRECATED("rt_format_summary_json");
/* The collection, or NULL when out of memory (rt_report_new_with with the defaults). */
RT_API rt_report *rt_report_new(void) RT_DEPRECATED("rt_report_new_with");
/* rt_report_add_sized with this header's sizeof(rt_record), past the end of a shorter record
 * of a caller built with an older header. */
RT_API void rt_report_add(rt_report *r, const rt_record *rec) RT_DEPRECATED("rt_report_add_sized");

#ifdef __cplusplus
}
#endif
#endif
