/* resource_tracker/place.h - where the job runs: SLURM, Kubernetes, GitHub Actions (rt_place).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_PLACE_H)
#define RESOURCE_TRACKER_PLACE_H

#include "request.h"
#include "embed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Where the job runs (experimental: may change in a minor version, except rt_request,
 * which rt_sample, rt_record and rt_summary point to: it follows the stable rules, growing only
 * at its end)
 *
 * What a job was given where it runs, and who it is there: SLURM (its variables; the time
 * limit from `scontrol show job` or `squeue` when one is on the PATH), Kubernetes (the downward
 * API variables a pod spec sets), GitHub Actions (the runner: the machine is the job's). The
 * job's own cgroup limits come with the samples (rt_cgroup); the statistics join both into the
 * requested figures and efficiencies of rt_summary, and the notes say what was over-requested.
 * docs/where.md names every variable read. */


typedef struct rt_place rt_place;

typedef struct rt_place_options {
    size_t struct_size;        /* sizeof(rt_place_options) as the caller compiled it */
    const char *const *envp;   /* the environment read, "NAME=value" strings, NULL-terminated;
                                * NULL: the process's own */
    int no_query;              /* non-zero: run no command (scontrol, squeue) */
    double query_timeout_secs; /* the most a command may take, then it is killed; 0: 2 s */
    rt_log_fn log;             /* one warning per value that could not be read; NULL: dropped */
    void *log_user;
} rt_place_options;

#define RT_PLACE_OPTIONS_INIT {.struct_size = sizeof(rt_place_options)}

/* Finds where the job runs and what it was given, from the environment (and the commands the
 * place offers). Never fails for what it finds: a malformed value is one warning and not said.
 * RT_OK (a place with no request when nothing was found), RT_ERR_NOMEM, RT_ERR_INVALID. */
RT_API rt_error rt_place_detect(const rt_place_options *opts, rt_place **out);
/* What was found; never NULL, owned by p. */
RT_API const rt_request *rt_place_request(const rt_place *p);
/* The job's identity there as metadata (owned by p, never NULL): job_name, orchestrator
 * ("slurm", "kubernetes", "github-actions"), external_run_id, and tags "key=value" (user,
 * account, partition, cluster, array_task, namespace, pod, node, workflow, repository,
 * run_attempt, ...; docs/where.md). Fields the place does not say are NULL. */
RT_API const rt_job *rt_place_job(const rt_place *p);
/* The run's place in a job of several nodes or tasks (owned by p, never NULL): job_id
 * NULL when no launcher's variables say one. */
RT_API const rt_member *rt_place_member(const rt_place *p);
RT_API void rt_place_free(rt_place *p);

/* The request every later rt_stats_summary uses (copied with its strings; NULL: none, then the
 * first record that carries one is used). RT_OK, RT_ERR_INVALID (st NULL, struct_size too
 * small), RT_ERR_NOMEM. */
RT_API rt_error rt_stats_set_request(rt_stats *st, const rt_request *req);
/* The same for a tracker's statistics (live or loaded). Thread-safe against its thread. */
RT_API rt_error rt_tracker_set_request(rt_tracker *t, const rt_request *req);

#ifdef __cplusplus
}
#endif
#endif
