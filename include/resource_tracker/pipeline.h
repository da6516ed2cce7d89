/* resource_tracker/pipeline.h - sinks and the pipeline: where samples go, one fan-out (rt_sink,
 * rt_pipeline). Part of the public C API of libresource-tracker; include <resource_tracker.h>,
 * which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_PIPELINE_H)
#define RESOURCE_TRACKER_PIPELINE_H

#include "writer.h"
#include "stream.h"
#include "export.h"
#include "analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Sinks and the pipeline (experimental: may change in a minor version)
 *
 * A sink is where samples go: the writer, the Sentinel stream, the /metrics server, the OTLP
 * exporter, node_exporter's textfile, the statistics and the report are each one, and a caller
 * can make its own from three functions (add, finish, free). A pipeline hands each sample to
 * every sink it holds, in the order they were attached, and makes the sample's record
 * (rt_record) once for the sinks that read it: the figures as the embedded tracker keeps them
 * (ratios, counts and the interval's seconds as 32-bit floats; time, bytes and MiB exact), so
 * statistics fed by the tool, by the embedded tracker or by a run read back from a file see the
 * same values. The tool and the embedded tracker both fan samples out through one.
 * Not thread-safe: one thread adds, sets the host and finishes. */

typedef struct rt_sink rt_sink;
typedef struct rt_pipeline rt_pipeline;

/* What the sinks learn at the end of a run. */
typedef struct rt_run_end {
    size_t struct_size;  /* sizeof(rt_run_end) as the caller compiled it */
    int64_t exit_status; /* the tool's exit status (docs/contracts.md §1); RT_NULL_I64 without a
                          * command */
    int failed;          /* 1: the run failed (the command exited non-zero) */
} rt_run_end;

#define RT_RUN_END_INIT {.struct_size = sizeof(rt_run_end), .exit_status = RT_NULL_I64}

/* A sink's functions; every one but add may be NULL. self is the pointer given to rt_sink_new. */
typedef struct rt_sink_ops {
    size_t struct_size; /* sizeof(rt_sink_ops) as the caller compiled it */
    /* One sample (sample, valid during the call) and its record (rec: NULL unless reads_record;
     * its job_name is the pipeline's), or one record read back (sample NULL). RT_OK, or an
     * error: the pipeline then gives this sink nothing more (its finish and free still run). */
    rt_error (*add)(void *self, const rt_sample *sample, const rt_record *rec);
    /* The host's facts and the cloud, either NULL when unknown, valid during the call only:
     * the sink copies what it keeps. */
    void (*set_host)(void *self, const rt_host *host, const rt_cloud *cloud);
    /* The run ended (end valid during the call). It may start work that free completes (within
     * the sink's own bound), so that the sinks end side by side. */
    rt_error (*finish)(void *self, const rt_run_end *end);
    void (*free)(void *self);
    int reads_record; /* 1: add gets the record */
} rt_sink_ops;

#define RT_SINK_OPS_INIT {.struct_size = sizeof(rt_sink_ops)}

/* Makes a sink of the caller's functions (ops copied) and self. RT_OK and *out; RT_ERR_INVALID
 * (no ops or add, struct_size too small); RT_ERR_NOMEM. */
RT_API rt_error rt_sink_new(const rt_sink_ops *ops, void *self, rt_sink **out);

/* The library's outputs as sinks. Each takes what it is given: the sink frees it (a sink that
 * cannot be made frees it at once, and *out is NULL), except the statistics and the report,
 * which the caller keeps and reads after the run (they must outlive the sink). RT_OK and *out;
 * RT_ERR_INVALID (NULL); RT_ERR_NOMEM.
 *  - writer: each sample written; a failed write (RT_ERR_IO, errno set: EPIPE for a closed
 *    pipe) ends the sink. Freeing it does not close the writer's fd.
 *  - stream: each sample added; the run's end is rt_stream_finish with the exit status (0
 *    without a command) and the failed flag, waiting up to its finish timeout.
 *  - prom: each sample published; the host's facts set; the run's end stops serving.
 *  - otlp: each sample queued; the run's end starts the last push (rt_otlp_finish) on a thread of
 *    its own and freeing the sink waits for it (within the exporter's finish timeout).
 *  - stats, report: each record added (rt_stats_add_sized, rt_report_add_sized); a sample
 *    without a record is not counted. */
RT_API rt_error rt_writer_sink_new(rt_writer *w, rt_sink **out);
RT_API rt_error rt_stream_sink_new(rt_stream *st, rt_sink **out);
RT_API rt_error rt_prom_sink_new(rt_prom_server *srv, rt_sink **out);
RT_API rt_error rt_otlp_sink_new(rt_otlp *ex, rt_sink **out);
RT_API rt_error rt_stats_sink_new(rt_stats *st, rt_sink **out);
RT_API rt_error rt_report_sink_new(rt_report *r, rt_sink **out);

/* node_exporter's textfile while a job runs (rt_prom_textfile_write's file). */
typedef struct rt_textfile_options {
    size_t struct_size;   /* sizeof(rt_textfile_options) as the caller compiled it */
    const char *dir;      /* the collector's directory; required; copied */
    const char *name;     /* the file's NAME (rt_prom_textfile_write); copied */
    const rt_job *job;    /* copied with its strings; may be NULL */
    double every_secs;    /* the most often the file is rewritten while the job runs; 0: 5 */
    double start_secs;    /* Unix time the job started; 0: now */
    const char *label;    /* how messages name the file's setting; NULL: "textfile" */
    rt_log_fn log;        /* NULL: dropped */
    void *log_user;
} rt_textfile_options;

#define RT_TEXTFILE_OPTIONS_INIT {.struct_size = sizeof(rt_textfile_options)}

/* A sink that keeps the file up to date: written at the first sample, then at most once every
 * every_secs (the tree's CPU seconds and its peak memory so far: a null figure never wipes one
 * known), and at the run's end with its end time and exit status. A write that fails is said
 * once while the job runs (a warning through log, "LABEL: cannot write in 'DIR': why"), and
 * again at the end. RT_OK and *out; RT_ERR_INVALID (no dir, struct_size too small);
 * RT_ERR_NOMEM. */
RT_API rt_error rt_textfile_sink_new(const rt_textfile_options *opts, rt_sink **out);

/* Frees a sink that was never attached (finish is not called). NULL is allowed. */
RT_API void rt_sink_free(rt_sink *sink);

/* An empty pipeline; the records it makes carry job's job_name (copied; job may be NULL).
 * RT_OK and *out; RT_ERR_NOMEM; RT_ERR_INVALID (NULL out, a job struct_size too small). */
RT_API rt_error rt_pipeline_new(const rt_job *job, rt_pipeline **out);

/* Hands sink to the pipeline, after the sinks attached before it: the pipeline owns it from
 * here, also when this fails (then it is freed at once). RT_OK; RT_ERR_INVALID; RT_ERR_NOMEM. */
RT_API rt_error rt_pipeline_attach(rt_pipeline *p, rt_sink *sink);

/* Gives every sink attached so far the host's facts and the cloud (either may be NULL), which
 * each copies: the pipeline keeps nothing of them (a sink attached later is not given them). */
RT_API void rt_pipeline_set_host(rt_pipeline *p, const rt_host *host, const rt_cloud *cloud);

/* Hands one sample to every sink still taking them (and its record to those that read it).
 * RT_OK, or the error of the first sink that failed in this call (errno as it left it; that
 * sink gets no more samples); RT_ERR_INVALID for NULL. */
RT_API rt_error rt_pipeline_add(rt_pipeline *p, const rt_sample *sample);

/* Hands a record read back from a recorded run (rt_reader_next) to the sinks that read records,
 * its figures kept as a live sample's are; the rest get nothing. rec_size is sizeof(rt_record)
 * as the caller compiled it (see rt_record for what is read of it; the sinks get a whole record).
 * Returns as rt_pipeline_add; RT_ERR_INVALID also for a rec_size 0. */
RT_API rt_error rt_pipeline_add_record(rt_pipeline *p, const rt_record *rec, size_t rec_size);

/* Ends the run for every sink, in the order attached: call once, after the last add. */
RT_API void rt_pipeline_finish(rt_pipeline *p, const rt_run_end *end);

/* Frees every sink (each completes what its finish started) and the pipeline. NULL allowed. */
RT_API void rt_pipeline_free(rt_pipeline *p);

#ifdef __cplusplus
}
#endif
#endif
