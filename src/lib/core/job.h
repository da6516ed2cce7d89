/* job.h - the job's metadata fields, listed once (RT_JOB_FIELDS): each field's key (the JSON
 * line's, the exported labels', the Sentinel run's and the history's) and the word the report
 * shows for it, and one deep copy of an rt_job (strings and tags in one block) for every part
 * of the library that keeps a job beyond the call that gave it. Internal to the library; the
 * names are public through rt_job_field_name. */
#ifndef RT_CORE_JOB_H
#define RT_CORE_JOB_H

#include "resource_tracker.h"

/* X(member, report word), in the fixed order of the fields (docs/contracts.md §4). */
#define RT_JOB_FIELDS(X)                                                                            \
    X(job_name, "job")                                                                              \
    X(project_name, "project")                                                                      \
    X(stage_name, "stage")                                                                          \
    X(task_name, "task")                                                                            \
    X(team, "team")                                                                                 \
    X(env, "environment")                                                                           \
    X(language, "language")                                                                         \
    X(orchestrator, "orchestrator")                                                                 \
    X(executor, "executor")                                                                         \
    X(external_run_id, "external run id")                                                           \
    X(container_image, "container image")

#define RT_JOB_NFIELDS 11

/* The word the report shows for field i ("environment" for env), NULL past the last. */
const char *rt_job_field_word(size_t i);

/* *out = a copy of src (NULL: an empty job) whose strings and tags live in one block, *block,
 * that the caller frees with free(); the copy's struct_size is the library's. Tags that are
 * NULL are left out. Returns RT_OK, RT_ERR_INVALID (src's struct_size too small: *out and
 * *block untouched), RT_ERR_NOMEM. */
rt_error rt_job_dup(const rt_job *src, rt_job *out, void **block);

#endif
