/* answer.c - what a run's answer is said in: the scheduler whose words the recommendation takes
 * (the job's orchestrator, else the environment the tool runs in), the run's notes with the
 * tool's own knowledge of why the job had no cgroup of its own, as text or JSON, and the run's
 * durations under other core counts as JSON (the library's writer, read into jansson). */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

rt_scheduler cli_scheduler_of(const rt_job *job)
{
    const char *o = job ? job->orchestrator : NULL;
    if (o && strcasestr(o, "slurm"))
        return RT_SCHED_SLURM;
    if (o && (strcasestr(o, "kube") || strcasestr(o, "k8s")))
        return RT_SCHED_K8S;
    if (o && strcasestr(o, "metaflow"))
        return RT_SCHED_METAFLOW;
    const char *env = getenv("SLURM_JOB_ID");
    if (env && *env)
        return RT_SCHED_SLURM;
    env = getenv("KUBERNETES_SERVICE_HOST");
    if (env && *env)
        return RT_SCHED_K8S;
    return RT_SCHED_SLURM;
}

size_t cli_run_notes(const rt_summary *s, const char *cgroup_why, rt_note *out)
{
    rt_notes_options no = RT_NOTES_OPTIONS_INIT;
    no.cgroup_why = cgroup_why;
    return rt_summary_notes(s, &no, out, RT_NOTES_MAX);
}

json_t *cli_notes_json(const rt_note *notes, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        json_t *text = json_string(notes[i].text);
        if (!text) /* a caller's reason that is not UTF-8: the note stays, said plainly */
            text = json_string("(a note whose text is not valid UTF-8)");
        if (!o || json_object_set_new(o, "kind", json_string(rt_note_kind_name(notes[i].kind))) < 0 ||
            json_object_set_new(o, "text", text) < 0 || json_array_append_new(a, o) < 0) {
            json_decref(o);
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *cli_cores_json(const rt_cores_table *t, double usd_per_core_hour)
{
    if (!t)
        return json_null();
    size_t n = rt_format_cores_json(t, usd_per_core_hour, NULL, 0); /* the library's one writer */
    char *text = malloc(n + 1);
    json_t *o = text && rt_format_cores_json(t, usd_per_core_hour, text, n + 1) == n ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return o;
}
