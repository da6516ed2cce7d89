/* resource_tracker/job.h - job metadata attached to every output line (rt_job). Part of the
 * public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_JOB_H
#define RESOURCE_TRACKER_JOB_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Job metadata, attached to every output line and to the run registration. */

typedef struct rt_job {
    size_t struct_size; /* sizeof(rt_job) as the caller compiled it */
    const char *job_name, *project_name, *stage_name, *task_name, *team, *env, *language;
    const char *orchestrator, *executor, *external_run_id, *container_image;
    const char *const *tags; /* "key=value" strings */
    size_t tag_count;
} rt_job;

#define RT_JOB_INIT {.struct_size = sizeof(rt_job)}

/* The metadata fields by number, in the fixed order above (job_name .. container_image):
 * how many there are; the name of field i, which is its key in the JSON line, the exported
 * labels, the Sentinel run and the history (NULL past the last); and field i of job (NULL when
 * unset, for a NULL job, past the last, or beyond the job's struct_size). */
RT_API size_t rt_job_field_count(void);
RT_API const char *rt_job_field_name(size_t i);
RT_API const char *rt_job_field(const rt_job *job, size_t i);

#ifdef __cplusplus
}
#endif
#endif
