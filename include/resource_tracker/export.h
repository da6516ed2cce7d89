/* resource_tracker/export.h - export: Prometheus /metrics, node_exporter textfile, OTLP/HTTP.
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_EXPORT_H
#define RESOURCE_TRACKER_EXPORT_H

#include "host.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Export: into the systems fleets already run. Prometheus scrapes /metrics from a small
 * server on its own thread; node_exporter's textfile collector reads a batch job's figures from
 * a file replaced atomically; OTLP/HTTP (JSON) pushes metrics to any OpenTelemetry collector.
 * Each exporter takes samples on the caller's thread without I/O and never waits on a client
 * or the network there. Every series carries the job's metadata as labels (attributes in
 * OTLP): job_name, project_name, stage_name, task_name, team, env, language, orchestrator,
 * executor, external_run_id, container_image (those set) and each tag KEY=VALUE as tag_KEY
 * (characters outside [A-Za-z0-9_] of KEY become '_'); never a label per process. */

/* ---- Prometheus /metrics ------------------------------------------------------------------ */
typedef struct rt_prom_server rt_prom_server;

typedef struct rt_prom_options {
    size_t struct_size;         /* sizeof(rt_prom_options) as the caller compiled it */
    const char *address;        /* numeric IPv4 or IPv6 address to listen on; NULL: 127.0.0.1 */
    int port;                   /* 0..65535; 0: a free port (rt_prom_port tells which) */
    const rt_job *job;          /* labels of every series; copied with its strings */
    const rt_host *host;        /* resource_tracker_info's host labels; copied; may be NULL */
    rt_cloud_discovery *cloud;  /* once it has a result, the cloud's labels join
                                 * resource_tracker_info (never waited for); may be NULL; the
                                 * server holds a reference of its own */
    size_t max_clients;         /* connections held at once; 0: 64. When all are taken, a new
                                 * connection replaces the one idle the longest */
    double client_timeout_secs; /* a request must arrive, and its reply be taken, within this;
                                 * 0: 10 */
    rt_log_fn log;              /* NULL: messages are dropped; also called from the server's thread */
    void *log_user;
} rt_prom_options;

#define RT_PROM_OPTIONS_INIT {.struct_size = sizeof(rt_prom_options)}

/* Listens (on the caller's thread, so that a taken port is known at once) and starts the
 * server's thread. It answers GET and HEAD of /metrics with the Prometheus text format 0.0.4,
 * or OpenMetrics 1.0.0 when the request's Accept asks for application/openmetrics-text;
 * another path 404, another method 405. Before the first rt_prom_publish only
 * resource_tracker_info is served. Returns RT_OK and *out; RT_ERR_INVALID (a bad address or
 * port, struct_size too small); RT_ERR_IO with errno set when the socket cannot listen
 * (EADDRINUSE, EACCES, EADDRNOTAVAIL, ...); RT_ERR_SYSTEM when the thread cannot be started
 * (errno); RT_ERR_NOMEM. */
RT_API rt_error rt_prom_start(const rt_prom_options *opts, rt_prom_server **out);

/* Sets the host whose facts label resource_tracker_info from the next rt_prom_publish on
 * (copied; for a server started before the host was read). RT_OK, RT_ERR_NOMEM (the previous
 * host stays), RT_ERR_INVALID (NULL). */
RT_API rt_error rt_prom_set_host(rt_prom_server *srv, const rt_host *host);

/* The port the server listens on (the one the kernel chose for port 0); -1 for NULL. */
RT_API int rt_prom_port(const rt_prom_server *srv);

/* Makes sample the figures served from now on. The formatting happens here; what the server's
 * thread is sending is swapped under a lock held only for the exchange of two pointers.
 * Returns RT_OK, RT_ERR_NOMEM (the previous figures stay), RT_ERR_INVALID (NULL). */
RT_API rt_error rt_prom_publish(rt_prom_server *srv, const rt_sample *sample);

/* The server's last failure (as rt_otlp_errmsg): "cannot accept connections (Too many open
 * files)", "poll failed (...)", "out of memory for a client; connection refused", "out of
 * memory formatting /metrics"; "" when none so far. A later success does not clear it. A
 * client that is slow or sends a bad request is its own trouble, not the server's: not here.
 * Copied under the server's lock into storage of srv, valid until the next rt_prom_errmsg on
 * srv or its rt_prom_free: call it from one thread at a time. "" for NULL. */
RT_API const char *rt_prom_errmsg(rt_prom_server *srv);

/* Stops the thread, closes every connection and the socket, and frees. NULL is allowed. */
RT_API void rt_prom_free(rt_prom_server *srv);

/* Formats one sample as the body /metrics serves: the Prometheus text format 0.0.4
 * (openmetrics 0) or OpenMetrics 1.0.0 (openmetrics 1, ending with "# EOF"). Gauges and
 * counters (counters end in _total and never go back within a run), units in the names
 * (_bytes, _seconds, _cores, _ratio, _celsius, _watts), the job's labels on every series, one
 * series per disk, interface and GPU (labelled device, interface, gpu); host and cloud, when
 * not NULL, label resource_tracker_info, which is always there (with version). While a phase
 * is open at the sample (sample->phases), the tree's and its parts' series are labelled
 * phase="NAME" with the innermost one's name (as it is: the /metrics server caps the values at
 * 64 names, later ones "other"). sample may be NULL (only resource_tracker_info). Returns the
 * length needed like snprintf (buf NUL-terminated when cap > 0). */
RT_API size_t rt_format_prometheus(const rt_sample *sample, const rt_job *job, const rt_host *host,
                                   const rt_cloud *cloud, int openmetrics, char *buf, size_t cap);

/* ---- node_exporter textfile --------------------------------------------------------------- */

/* A batch job's figures, as Prometheus documents them for batch jobs. Filled by the caller. */
typedef struct rt_job_status {
    size_t struct_size;       /* sizeof(rt_job_status) as the caller compiled it */
    double start_secs;        /* Unix time tracking (and the command) started */
    double end_secs;          /* Unix time it ended; NaN while it runs */
    double duration_secs;     /* seconds so far, or of the whole run */
    double cpu_secs;          /* CPU seconds of the tracked tree (cpu_secs_total); NaN: no tree */
    double memory_peak_bytes; /* the tree's peak memory (the cgroup's peak charge, else the
                               * peak RSS); NaN: no tree */
    int64_t exit_status;      /* the tool's exit status (docs/contracts.md §1); RT_NULL_I64
                               * while the job runs, or without a command */
    uint64_t samples;         /* samples taken */
    /* "Energy and carbon": the tracked tree's energy since tracking began
     * (rt_energy's process_energy_joules_total) and its method ("measured", "sampled",
     * "estimated"); a NULL method (RT_JOB_STATUS_INIT's) or a NaN: no figure */
    double energy_joules;
    const char *energy_method;
    /* "Where the job runs": what the job was given (NULL: nothing said); the
     * file then has each requested figure and the efficiencies so far (CPU seconds / (cores x
     * duration), peak memory / memory, time since the job began / its time limit) */
    const struct rt_request *request;
} rt_job_status;

#define RT_JOB_STATUS_INIT {.struct_size = sizeof(rt_job_status)}

/* Writes DIR/resource_tracker_NAME.prom for node_exporter's textfile collector: the status as
 * gauges (resource_tracker_job_*), labelled with the job's metadata; NAME is name with every
 * character outside [A-Za-z0-9_.-] made '_' ("job" for NULL or empty). Atomic: a temporary
 * file in DIR (a name node_exporter ignores, mode 0666 less the umask) is written and renamed
 * over the target, so a reader sees the old file or the new one, and a symlink at the target
 * is replaced, never followed. The file and the directory are synced (fsync) only for the
 * status of an ended job (end_secs set): the writes while it runs cost no disk flush. The full path goes to path (pathlen
 * bytes) when not NULL. The tree's energy is resource_tracker_job_energy_joules{method}
 * where the status has it (a struct_size that covers it); what the job was given is
 * resource_tracker_job_requested_{cpu_cores,memory_bytes,gpus}{from},
 * resource_tracker_job_time_limit_seconds{from} and
 * resource_tracker_job_efficiency_ratio{resource="cpu"|"memory"|"time_limit"}. Returns RT_OK; RT_ERR_IO with errno set
 * (nothing left behind); RT_ERR_INVALID (NULL dir or status, struct_size that does not
 * reach samples, a path too long); RT_ERR_NOMEM. */
RT_API rt_error rt_prom_textfile_write(const char *dir, const char *name, const rt_job *job,
                                       const rt_job_status *status, char *path, size_t pathlen);

/* ---- OTLP/HTTP push ----------------------------------------------------------------------- */
typedef struct rt_otlp rt_otlp;

typedef struct rt_otlp_options {
    size_t struct_size;           /* sizeof(rt_otlp_options) as the caller compiled it */
    const char *url;              /* the metrics endpoint, e.g. http://127.0.0.1:4318/v1/metrics
                                   * (http:// or https://); required */
    const char *const *headers;   /* extra request headers "Name: value", NULL-terminated (e.g.
                                   * OTEL_EXPORTER_OTLP_HEADERS), or NULL; copied; their values
                                   * never appear in a log message */
    const rt_kv *resource;        /* resource attributes the user gave (OTEL_RESOURCE_ATTRIBUTES,
                                   * OTEL_SERVICE_NAME as service.name); copied; they win over
                                   * the tracker's own of the same key */
    size_t resource_count;
    double interval_secs;         /* seconds between pushes; 0: 10 */
    double timeout_secs;          /* the most one request takes; 0: 10 */
    int no_gzip;                  /* 1: bodies uncompressed; 0: gzip (Content-Encoding) */
    size_t max_queue_samples;     /* samples kept while the receiver cannot take them; 0: 1024.
                                   * Past it the oldest are dropped (counted; one warning) */
    double finish_timeout_secs;   /* the most rt_otlp_finish waits; 0: 10 */
    const rt_job *job;            /* copied with its strings; may be NULL */
    const char *const *command;   /* the wrapped argv, NULL-terminated, or NULL; copied */
    const rt_host *host;          /* copied; may be NULL */
    rt_cloud_discovery *cloud;    /* may be NULL; its result (waited for before the first push,
                                   * at most 2 s from the start; copied) adds cloud.* attributes;
                                   * the exporter holds a reference of its own and does
                                   * not look at it once rt_otlp_finish returned */
    rt_log_fn log;                /* NULL: dropped; called from the exporter's thread */
    void *log_user;
} rt_otlp_options;

#define RT_OTLP_OPTIONS_INIT {.struct_size = sizeof(rt_otlp_options)}

/* Starts the exporter's thread, which pushes every interval_secs one ExportMetricsServiceRequest
 * (OTLP/HTTP, JSON encoding) holding a data point of each metric for every sample added since
 * the last push that was accepted (at most 512 samples and 64 MiB of JSON a request: more goes
 * in several, in order; a sample larger than that alone is dropped). Metric names follow
 * OpenTelemetry's semantic conventions where they exist (system.cpu.utilization,
 * system.cpu.time, system.memory.usage, process.cpu.time, ...; resource attributes
 * service.name, host.name, cloud.*). A push is
 * retried, with exponential backoff, only on HTTP 429, 502, 503 and 504 (honouring
 * Retry-After) and when the receiver cannot be reached or does not answer in time; any other
 * reply drops the push (one warning). Returns at once: RT_OK and *out; RT_ERR_INVALID (no URL
 * or not http(s), a header without ':', struct_size too small); RT_ERR_UNSUPPORTED (libcurl,
 * or zlib with gzip, cannot be loaded: nothing started); RT_ERR_NOMEM; RT_ERR_SYSTEM when the
 * thread cannot be started (errno). */
RT_API rt_error rt_otlp_start(const rt_otlp_options *opts, rt_otlp **out);

/* Queues one sample's figures (copied; no formatting, no I/O). RT_OK, RT_ERR_NOMEM,
 * RT_ERR_INVALID (NULL, or once rt_otlp_finish was called: the sample is not queued). */
RT_API rt_error rt_otlp_add(rt_otlp *ex, const rt_sample *sample);

/* Pushes everything queued, retrying within opts->finish_timeout_secs in all, and stops the
 * thread. RT_OK when every sample added was delivered; RT_ERR_IO otherwise (logged: how many
 * samples were not). Call once. */
RT_API rt_error rt_otlp_finish(rt_otlp *ex);

/* The exporter's last failure (sqlite3_errmsg for a handle with a thread of its own): the
 * last push that failed, as the receiver or libcurl put it ("HTTP 503", "HTTP 400: what the
 * receiver said", "Couldn't connect to server", "Timeout was reached"), samples dropped (a full
 * queue, a sample too large), or samples left undelivered at the end; "" when none so far. A
 * later success does not clear it: after rt_otlp_finish returned RT_ERR_IO it says why. Never
 * the values of the options' headers (redacted as in the log messages). Copied under the
 * exporter's lock into storage of ex, valid until the next rt_otlp_errmsg on ex or its
 * rt_otlp_free: call it from one thread at a time. "" for NULL. */
RT_API const char *rt_otlp_errmsg(rt_otlp *ex);

/* Frees the exporter (finishing it first if rt_otlp_finish was not called). NULL is allowed. */
RT_API void rt_otlp_free(rt_otlp *ex);

#ifdef __cplusplus
}
#endif
#endif
