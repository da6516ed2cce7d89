/* labels.h - the labels every exported series carries (Prometheus labels, OTLP attributes):
 * the job's metadata fields that are set and its tags as tag_KEY. Shared by the exporters;
 * internal to the library. */
#ifndef RT_EXPORT_LABELS_H
#define RT_EXPORT_LABELS_H

#include "../core/core.h"

/* A job's labels: keys and values, owned by the set (one allocation). */
typedef struct rt_labels {
    rt_kv *kv;    /* count pairs: keys are valid label names ([A-Za-z_][A-Za-z0-9_]*) */
    size_t count;
} rt_labels;

/* Fills *out from job (NULL: no labels): job_name, project_name, stage_name, task_name, team,
 * env, language, orchestrator, executor, external_run_id, container_image (those non-NULL, in
 * this order), then each tag "KEY=VALUE" as tag_KEY with every character of KEY outside
 * [A-Za-z0-9_] made '_' (a tag without '=' has the value ""; a later tag of the same label
 * replaces an earlier one). Values are copied as they are (escaping is the format's job).
 * Returns RT_OK, or RT_ERR_NOMEM with *out empty. Free with rt_labels_free. */
rt_error rt_labels_from_job(const rt_job *job, rt_labels *out);

void rt_labels_free(rt_labels *l);

#endif
