/* stream_int.h - the uploader's private header: the seam a unit test fakes (the three network
 * calls, rt_stream_start_net, rt_stream_counts), and what stream.c, batch.c, spill.c,
 * uploader.c, failure.c, record.c and deliver.c share (the batch, the stream's state, their
 * functions). Internal. */
#ifndef RT_STREAM_INT_H
#define RT_STREAM_INT_H

#include <pthread.h>

#include "../analysis/allocation.h"
#include "../core/clock.h"
#include "../core/core.h"
#include "../core/gzip.h"
#include "../core/lasterr.h"
#include "../net/s3.h"

#define RT_SENTINEL_DEFAULT_URL "https://api.sentinel.sparecores.net" /* SENTINEL_API_URL's default */

/* ---- the seam for tests ------------------------------------------------------------------------ */

typedef struct rt_stream_net {
    /* POSTs body (len bytes, JSON; len 0: an empty body) to url with the bearer token and, when
     * idem is not NULL, the header "Idempotency-Key: idem". Returns RT_OK with any HTTP status in
     * *status and the reply in *reply (NUL-terminated; freed by the caller with rt_buf_free
     * whatever the result), or an error with err set (never the token). */
    rt_error (*post)(void *user, const char *url, const char *token, const char *idem, const char *body, size_t len,
                     double timeout, long *status, rt_buf *reply, char *err, size_t errlen);
    /* As rt_s3_put with Content-Type application/gzip (*status -1: the request never left). */
    rt_error (*put)(void *user, const rt_s3_target *t, const rt_s3_credentials *c, const char *key, const void *body,
                    size_t len, double timeout, long *status, char *err, size_t errlen);
    /* As rt_s3_find_region. */
    void (*find_region)(void *user, rt_s3_target *t, const rt_s3_credentials *c, double timeout);
    void *user;
} rt_stream_net;

/* rt_stream_start with the network calls of net (copied) instead of libcurl's, and clock (NULL:
 * the real one) for every wait, backoff and deadline; libcurl is then not loaded (zlib still is).
 * Same results as rt_stream_start. */
rt_error rt_stream_start_net(const rt_stream_options *opts, const rt_stream_net *net, rt_clock *clock,
                             rt_stream **out);

/* Counters for tests: rows added, rows lost (not even spillable), batches closed, batches
 * uploaded, spill files written. Any pointer may be NULL. Thread-safe. */
void rt_stream_counts(rt_stream *st, uint64_t *rows, uint64_t *lost, unsigned *closed, unsigned *uploaded,
                      unsigned *spilled);

/* Batches (and their rows) skipped because their spill file was missing or damaged. Any pointer
 * may be NULL. Thread-safe. */
void rt_stream_damaged(rt_stream *st, unsigned *batches, uint64_t *rows);

/* ---- shared by the uploader's files ------------------------------------------------------------ */

/* What a run's record holds (record.c). */
typedef struct rt_run_record {
    char *reg_body;          /* the POST /runs body while not registered (heap), else NULL */
    char run_id[256];        /* "" while not registered */
    rt_s3_target target;     /* bucket, prefix, region (the endpoint is the deliverer's setting) */
    rt_s3_credentials creds; /* never written: a delivery refreshes them */
    size_t uploaded;         /* objects uploaded: the next object's seq */
    long long done_seq;      /* the last batch (local seq) uploaded or skipped; -1: none */
    bool ended;              /* the run's end is known: */
    int exit_code;
    bool failed;
    double finished_unix;
    bool finish_sent;        /* the API took the finish call */
    char fp[33];             /* the credentials' fingerprint (rt_stream_fingerprint); "" when unknown */
    unsigned closed;         /* batches closed (local seqs 0..closed-1): a gap is a missing file */
    long long doubt_seq;     /* the batch whose last PUT got no reply (it may have landed); -1: none */
} rt_run_record;

/* One batch: a gzip member of the CSV header and its rows. */
typedef struct rt_batch {
    struct rt_batch *next;
    unsigned seq;   /* given when closed */
    size_t rows;
    rt_gzip *z;     /* open member, or the finished one holding gz; NULL once only spilled */
    const void *gz; /* the finished bytes (owned by z), NULL while open or once dropped */
    size_t gzlen;
    char *spill;    /* its spill file, or NULL */
    unsigned tries;
    bool doubt;     /* a PUT of it got no reply: it may have landed under its key (sticky until one
                     * is answered 2xx): never sent inline, and the run is not finished before */
} rt_batch;

struct rt_stream {
    rt_logger lg;       /* the thread's messages: through stream_log, to user_lg until rt_stream_free */
    rt_logger user_lg;  /* the caller's callback */
    pthread_mutex_t logmu;
    bool log_closed;    /* under logmu: rt_stream_free returned, the callback is no longer called */
    rt_stream_net net;
    char *api_url, *token, *endpoint, *region, *spill_dir;
    rt_job job;
    void *job_block; /* the job's copied strings and tags (rt_job_dup) */
    char **host_strs; /* the host's copied strings, freed at the end */
    size_t nhost_strs;
    char **command;
    rt_host host;
    bool have_host;
    rt_cloud_discovery *cloud;
    rt_clock *clock; /* NULL: the real one */
    double interval, finish_timeout, net_timeout, t0;
    double start_unix, start_mono; /* the start's Unix time, CLOCK_MONOTONIC's then: the finish is
                                    * dated from them (a wall clock set back moves it not) */
    _Atomic double abort_at; /* the thread's requests end at this monotonic time (rt_fetch_abort_at):
                              * INFINITY until rt_stream_finish sets where the finish call's reserve
                              * begins; the finish phase moves it to its own end */
    size_t mem_limit;
    char local_key[64]; /* names spill files before the run has an id */
    char fp[33];        /* the fingerprint of api_url and token (rt_stream_fingerprint) */
    char *spill_fallback; /* the caller's private directory for when spill_dir cannot be ours */
    rt_format csv_format; /* RT_FORMAT_CSV, or RT_FORMAT_CSV_ENERGY (opts.csv_energy) */
    bool spill_moved;   /* spill_dir was replaced by a fallback (said once) */

    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    rt_batch *cur;                /* the batch rows go into */
    rt_batch *full, *full_tail;   /* batches that filled up between two closes */
    rt_allocation alloc;          /* the samples' dedicated/shared sums, kept until registered */
    bool finishing, done, orphaned; /* finishing: rt_stream_finish was called */
    bool mem_full;                /* pending batches past memory_limit_bytes and not spillable: rows are lost */
    int exit_code;
    bool failed;
    double finished_unix, deadline;
    rt_error result;
    uint64_t rows, lost;
    unsigned closed, uploaded, spilled;
    rt_handle_err err;    /* the last failure met, for rt_stream_errmsg (its msg under mu) */
    char row[8192]; /* the row being added (the sampling thread's only) */

    /* the stream thread's own; registered is also written under mu, as rt_stream_add reads it */
    bool registered;
    rt_batch *pending, *pending_tail; /* closed, not yet uploaded, in seq order */
    unsigned next_seq;
    size_t mem_bytes; /* gzip bytes of pending batches held in memory */
    unsigned reg_tries; /* failed registrations (warned about at the first) */
    double reg_next;
    char run_id[256];
    rt_s3_target target;
    rt_s3_credentials creds;
    double refresh_next;
    bool refresh_warned;
    double s3_next, s3_backoff;
    bool s3_warned, spill_warned, record_warned;
    char **uris;
    size_t nuris, cap_uris; /* nuris: objects uploaded, the next object's seq */
    bool finish_sent;       /* the API took the finish call */
    unsigned damaged;       /* under mu: batches skipped, their spill file missing or damaged */
    uint64_t damaged_rows;  /* under mu: their rows */
    /* the run record (record.c), the thread's own */
    char *reg_body;         /* a delivered run's POST /runs body (sent as it is), or NULL */
    int record_fd;          /* the run's lock, held from the first record on; -1 before */
    bool record_on;         /* the run has a record on disk */
    long long done_seq;     /* the last batch (local seq) uploaded or skipped; -1: none */
    bool ended;             /* the run's end is known (end_* below) */
    int end_code;
    bool end_failed;
    double end_unix;
    bool delivering;        /* a later delivery (deliver.c), not a live run */
    unsigned closed_total;  /* a delivered run's recorded count of closed batches */
    void (*once_registered)(rt_stream *st); /* under mu: run on the thread once, when the run is
                             * registered (rt_stream_deliver_earlier's pass over older runs) */
    bool once_asked;        /* under mu: once_registered was set (it is set only once) */
    char s3_why[96];        /* the last failed PUT, short: "HTTP 403 AccessDenied", curl's words */
    char api_why[96];       /* the last failed registration's why ("HTTP 503") */
    bool wait_said;         /* the end's wait on S3 or the API was said (once a run) */
};

/* record.c */

/* The fingerprint of the credentials a run is delivered with: the first 32 hex digits of the
 * SHA-256 of a fixed label, api_url (no trailing '/') and token, so that a spilled run goes only
 * where its own token sends it; never the token itself. False (out "") when SHA-256 cannot be had. */
bool rt_stream_fingerprint(const char *api_url, const char *token, char out[33]);

/* {spill_dir}/{key}.{ext} into out. False when it does not fit. */
bool rt_record_path(const char *spill_dir, const char *key, const char *ext, char *out, size_t cap);
/* Takes the run's lock ({key}.lock, created 0600) without waiting. Returns its fd, or -1 when
 * another process holds it (or it cannot be made). */
int rt_record_lock(const char *spill_dir, const char *key);
/* Closes the lock fd (-1 ignored); with remove, unlinks the lock file first (while held). */
void rt_record_unlock(const char *spill_dir, const char *key, int fd, bool remove);
/* Writes r as {key}.run atomically (0600). False on failure. Secrets in it are wiped from memory. */
bool rt_record_write(const char *spill_dir, const char *key, const rt_run_record *r);
/* Reads {key}.run into r (rt_record_clear it after) and its mtime (may be NULL). False when it is
 * absent or not a record (r cleared; errno ENOENT when absent, EINVAL when damaged). */
bool rt_record_load(const char *spill_dir, const char *key, rt_run_record *r, double *mtime);
/* Removes {key}.run. */
void rt_record_remove(const char *spill_dir, const char *key);
/* Frees and wipes r. */
void rt_record_clear(rt_run_record *r);
/* Writes st's record from its state (taking its lock at the first), when it has spill files or
 * a record already. Returns false when it could not (one warning). */
bool rt_record_save(rt_stream *st);
/* The end of a live or delivered run: removes its record and lock when nothing is left (the
 * finish taken and nothing pending), else writes the record (spill files or not); releases the
 * lock. */
void rt_record_end(rt_stream *st);

/* uploader.c: the end of a run (or a delivery) is about to wait on `on` ("S3", "the Sentinel
 * API") until the monotonic time until, after a failure (why: st->s3_why or st->api_why): one
 * warning says for how long at most and why, once a run ("waiting up to 8 s for S3 (HTTP 403
 * so far); TRACKER_FINISH_TIMEOUT sets it"); nothing when less than a second is left. */
void rt_upload_say_wait(rt_stream *st, const char *on, const char *why, double until);

/* deliver.c */

/* The directories a run's spill files may be in, the options' first (its default when none):
 * then its fallback, /tmp/resource-tracker-EUID and each /tmp/resource-tracker-EUID-XXXXXX, those
 * that exist and are ours alone. *n of them into out[cap] (heap strings: free each). */
void rt_spill_dirs(const rt_stream_options *o, char **out, size_t cap, size_t *n);

/* failure.c */

/* Keeps the words of a failure (the stream thread's, a spill's, a delivery's) as the stream's
 * last, for rt_stream_errmsg: every secret the stream holds taken out; under mu (not held). */
void rt_stream_failed(rt_stream *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes every secret the stream holds (the token, the S3 keys) out of msg, in place: messages
 * are made of HTTP statuses and curl's or S3's words, and none should ever echo one. */
void rt_stream_redact(const rt_stream *st, char *msg);

/* stream.c */

/* Frees st and all it holds (the thread is done or was never started). */
void rt_stream_destroy(rt_stream *st);
/* A new stream with nothing in it yet that rt_stream_destroy frees: its locks, no record file,
 * no request to abort, the network settings net and the finish timeout (0: 10 s) with the
 * requests' timeout from it. NULL on no memory. */
rt_stream *rt_stream_alloc(const rt_stream_net *net, double finish_timeout_secs);

/* batch.c */

/* A new open batch holding the CSV header. NULL on no memory. */
rt_batch *rt_batch_new(const rt_stream *st);
/* rt_batch_free frees b (NULL is ignored); rt_batch_free_list frees b and every batch after it. */
void rt_batch_free(rt_batch *b);
void rt_batch_free_list(rt_batch *b);
/* Appends one formatted row to the open batch; under mu. Returns RT_OK or RT_ERR_NOMEM (the row
 * counted lost). */
rt_error rt_batch_append_locked(rt_stream *st, const char *row, size_t n);
/* Closes the open batch (if it has rows) and those that filled up onto the pending list with
 * their seq (the thread's). */
void rt_batch_close_all(rt_stream *st);
/* Takes the oldest pending batch off the list and returns it (the list is not empty). */
rt_batch *rt_batch_pop(rt_stream *st);
/* Rows in the pending batches. */
uint64_t rt_batch_pending_rows(const rt_stream *st);

/* spill.c */

/* Writes b's gzip into its spill file. Returns true when b has one; the first failure is logged. */
bool rt_spill_batch(rt_stream *st, rt_batch *b);
/* The gzip bytes of b, from memory or its spill file (*tmp: free with rt_buf_free). */
bool rt_spill_read(const rt_batch *b, rt_buf *tmp, const void **data, size_t *len);
/* Drops b (uploaded or sent inline, off the pending list): spill file removed, memory freed. */
void rt_spill_drop(rt_stream *st, rt_batch *b);
/* Spills what must be spilled (all pending batches with everything) and keeps memory bounded. */
void rt_spill_persist(rt_stream *st, bool everything);
/* Makes the spill directory (0700) and tells whether it is ours alone (as rt_spill_batch
 * requires: no planted link, our owner, writable by no one else). When it cannot be (a home
 * that is not writable, a directory planted by another user) and the run has nothing there yet,
 * st->spill_dir moves to the first of its fallbacks that can (st->spill_fallback,
 * /tmp/resource-tracker-EUID, a fresh /tmp/resource-tracker-EUID-XXXXXX), said once. */
bool rt_spill_dir_ready(rt_stream *st);
/* The run keys in dir, oldest first (keys begin with their time): those with a record, and then
 * those with spill files but no record (*stranded of them, last in *out). Heap strings in *out
 * (free each and the array). Returns the count; 0 when dir cannot be read. */
size_t rt_spill_run_keys(const char *dir, char ***out, size_t *stranded);
/* Where the last fallbacks are made and looked for: "/tmp" (a test points it elsewhere). */
extern const char *rt_spill_tmp_root;

/* The default spill directory (heap; NULL on no memory). */
char *rt_spill_default_dir(void);

/* uploader.c */

/* libcurl's POST and the S3 helpers: what rt_stream_start streams through. */
extern const rt_stream_net rt_stream_real_net;
/* POST /runs; failures warned about once and retried later with backoff. */
void rt_upload_register(rt_stream *st, double timeout);
/* PUTs pending batches, oldest first, until `until` (monotonic), with backoff after a failure. */
void rt_upload_pending(rt_stream *st, double until, double backoff_min, double backoff_max);
/* The POST /runs body of st (its reg_body when it has one) into *out. RT_OK or RT_ERR_NOMEM. */
rt_error rt_upload_register_body(rt_stream *st, double cloud_wait, rt_buf *out);
/* Remembers the s3:// URI of an uploaded key (relative to the target's prefix). False on no memory. */
bool rt_upload_add_uri(rt_stream *st, const char *key);
/* POST /runs/{id}/finish. Returns true when the API took it. */
bool rt_upload_finish(rt_stream *st, int exit_code, bool failed, double finished_unix, double timeout);

#endif
