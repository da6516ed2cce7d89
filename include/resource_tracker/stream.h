/* resource_tracker/stream.h - streaming a run to the Sentinel API and S3 (rt_stream). Part of the
 * public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_STREAM_H
#define RESOURCE_TRACKER_STREAM_H

#include "host.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Streaming a run to the Sentinel API and S3 (docs/contracts.md §5): register the run, upload the
 * samples as gzipped CSV batches every upload interval, close the run at the end. All network
 * work is done on the stream's own thread: rt_stream_add never waits on the network. Nothing
 * is lost: a batch that fails is retried with backoff and kept (in memory up to a bound, then
 * in a spill file) until it is uploaded or, at the end, sent inline. The token, the S3 secret
 * and the session token never appear in any log message. */
typedef struct rt_stream rt_stream;

typedef struct rt_stream_options {
    size_t struct_size;          /* sizeof(rt_stream_options) as the caller compiled it */
    const char *api_url;         /* NULL: https://api.sentinel.sparecores.net (SENTINEL_API_URL) */
    const char *token;           /* SENTINEL_API_TOKEN; required */
    double upload_interval_secs; /* 0: 60 (TRACKER_UPLOAD_INTERVAL) */
    const char *s3_endpoint_url; /* AWS_ENDPOINT_URL_S3 (path style); NULL: AWS */
    const char *region;          /* AWS_REGION; NULL: asked of the bucket, else eu-central-1 */
    const rt_job *job;           /* copied with its strings */
    const char *const *command;  /* the wrapped argv, NULL-terminated, or NULL; copied */
    const rt_host *host;         /* may be NULL; the fields are copied at rt_stream_start */
    rt_cloud_discovery *cloud;   /* may be NULL; the stream asks it for the result (within its
                                  * 2 s bound) before registering; the stream holds a reference
                                  * of its own: the caller may free its handle at once */
    const char *spill_dir;       /* where batches go when memory is full or at a failed end;
                                  * NULL: $XDG_STATE_HOME/resource-tracker (~/.local/state/...) */
    size_t memory_limit_bytes;   /* gzip bytes kept in memory before spilling; 0: 8 MiB */
    double finish_timeout_secs;  /* the most rt_stream_finish waits; 0: 10 */
    rt_log_fn log;               /* NULL: messages are dropped; called from the stream's thread */
    void *log_user;
    const char *spill_fallback_dir; /* a directory of the user's own for when spill_dir
                                  * cannot be made or is not ours alone (an unwritable home, one
                                  * planted by another user): $XDG_RUNTIME_DIR/resource-tracker;
                                  * then /tmp/resource-tracker-EUID, then a fresh
                                  * /tmp/resource-tracker-EUID-XXXXXX, the move said once */
    int csv_energy;              /* non-zero: the batches' rows (and the inline CSV) carry
                                  * the four energy columns after the 32 (RT_FORMAT_CSV_ENERGY);
                                  * 0: the 32 of the Sentinel's contract */
} rt_stream_options;

#define RT_STREAM_OPTIONS_INIT {.struct_size = sizeof(rt_stream_options)}

/* Starts the stream's thread (registration happens there, with retries). Returns at once:
 * RT_OK and *out; RT_ERR_INVALID (no token, a bad URL, struct_size too small);
 * RT_ERR_UNSUPPORTED (libcurl or zlib cannot be loaded: nothing started); RT_ERR_NOMEM;
 * RT_ERR_SYSTEM when the thread cannot be started (errno tells why: EAGAIN at a task limit). */
RT_API rt_error rt_stream_start(const rt_stream_options *opts, rt_stream **out);

/* Adds one sample to the current batch (its CSV row, docs/contracts.md §3). Never blocks on the
 * network; O(row). RT_OK, or RT_ERR_NOMEM when even the spill failed (the row is counted lost). */
RT_API rt_error rt_stream_add(rt_stream *st, const rt_sample *sample);

/* Ends the run: the last batch is uploaded, then POST /runs/{id}/finish with exit_code and the
 * status ("failed" when failed is non-zero), within opts->finish_timeout_secs in all. What could
 * not be sent stays in the spill directory and is logged (how many rows). RT_OK when the run was
 * finished at the API; RT_ERR_IO otherwise. Call once. */
RT_API rt_error rt_stream_finish(rt_stream *st, int exit_code, int failed);

/* The stream's last failure (as rt_otlp_errmsg): what its thread last could not do, in
 * the words of its log message without the "stream: " ("cannot register the run at the
 * Sentinel API (HTTP 503)", "upload of batch 000003 failed (HTTP 403: ...)", "cannot refresh the
 * upload credentials (...)", "cannot spill batch ...", "cannot finish the run at the Sentinel
 * API (...)"); "" when none so far. A later success does not clear it: after rt_stream_finish
 * returned RT_ERR_IO it says why. Never the token nor the S3 keys. Copied under the stream's
 * lock into storage of st, valid until the next rt_stream_errmsg on st or its rt_stream_free:
 * call it from one thread at a time. "" for NULL. */
RT_API const char *rt_stream_errmsg(rt_stream *st);

/* Frees the stream (finishing it first with exit code 0 if rt_stream_finish was not called).
 * NULL is allowed. */
RT_API void rt_stream_free(rt_stream *st);

/* Delivers the runs left in the spill directory: a run that could not register or could
 * not send every batch keeps a record beside its spill files ({key}.run, 0600, with its
 * registration body or run id, what it uploaded and its end; never a credential: a delivery asks
 * for fresh upload credentials); each run whose lock no other
 * process holds (a live run, another deliverer: skipped, counted as left) is registered with
 * its recorded body when it never was, its batches uploaded in order, and finished with its
 * recorded exit status and time, each within opts->finish_timeout_secs. Uses opts' api_url,
 * token, s3_endpoint_url, region, spill_dir, finish_timeout_secs and log (called from the
 * calling thread). *delivered and *left (may be NULL) count runs. RT_OK when none is left;
 * RT_ERR_IO when some are (kept for a later try); RT_ERR_INVALID (no token);
 * RT_ERR_UNSUPPORTED (libcurl or zlib cannot be loaded). A live stream does the same for older
 * runs once its own run is registered when its caller asks (rt_stream_deliver_earlier). */
RT_API rt_error rt_stream_deliver(const rt_stream_options *opts, unsigned *delivered, unsigned *left);

/* Asks the live stream st to deliver the older runs left in its spill directory (as
 * rt_stream_deliver does, with st's options; st's own run skipped) on its own thread, once its
 * run is registered (the API answers): each run within st's finish timeout, none started after
 * rt_stream_finish began (a request in flight then ends with the thread's). Made once a stream:
 * RT_OK; RT_ERR_INVALID (NULL, asked before, or rt_stream_finish called). (0.22; before it, a
 * stream did this on its own.) */
RT_API rt_error rt_stream_deliver_earlier(rt_stream *st);

/* One run left in a spill directory, as rt_stream_list sees it. */
typedef struct rt_spilled_run {
    const char *key;      /* its local key (local-TIME-PID-RANDOM) */
    const char *dir;      /* the spill directory it is in */
    const char *run_id;   /* its run at the API; "" while it never registered */
    unsigned batches;     /* spill files of batches still to upload */
    uint64_t rows;        /* their rows (0 for a file that cannot be read) */
    unsigned missing;     /* batches its record counts that have no file (deleted, or lost with
                           * a tracker killed before it spilled them) */
    int ended;            /* its end is known: exit_code then holds its exit status */
    int exit_code;
    int finish_sent;      /* the API took its finish call: only batches are left */
    int ours;             /* made with the options' token and API URL: rt_stream_deliver sends it */
    int held;             /* a live tracker or a delivery holds it now */
    int damaged;          /* its record cannot be read: its batches cannot be delivered */
} rt_spilled_run;

/* Calls fn for each run left in opts' spill directory and its fallbacks (what
 * rt_stream_deliver would look at; a record that is damaged, and spill files with no record,
 * included), oldest first, without sending anything or taking any run's lock for longer than
 * a look. opts->token may be NULL (then no run is "ours"). Returns RT_OK, RT_ERR_INVALID or
 * RT_ERR_NOMEM. */
RT_API rt_error rt_stream_list(const rt_stream_options *opts, void (*fn)(const rt_spilled_run *run, void *user),
                               void *user);

#ifdef __cplusplus
}
#endif
#endif
