/* stream.c - the uploader of docs/contracts.md §5, its public side:
 * rt_stream_start/add/finish/free, the options copied in, and the stream thread's loop and end
 * (batch.c, spill.c, uploader.c do the rest).
 *
 * The design: rows go into a gzip member per batch under a short lock; one thread of its own
 * registers the run, closes a batch every upload interval, PUTs it to S3 as
 * {prefix}/{run_id}/{seq:06d}.csv.gz, retries what failed and finishes the run.
 *
 * Nothing is lost. A batch keeps its seq (given when it is closed, from 0, only to batches with
 * rows) until it is uploaded; one that failed once is written to a spill file
 * ({spill_dir}/{key}-{seq:06d}.csv.gz, the very gzip that would be uploaded; key: the run's local
 * key, with its record {key}.run beside them for a later delivery: record.c, deliver.c) and stays in memory
 * while the batches held there stay under memory_limit_bytes; its file is removed once it is
 * uploaded or sent inline. Before registration succeeds every closed batch is spilled at once.
 *
 * The end (rt_stream_finish, within finish_timeout_secs in all): the last batch is closed, the
 * pending ones retried until a reserve for the finish call is left, then POST /finish as the
 * Python tracker 0.5 sends it:
 *  - any batch in S3: data_source "s3" with the URIs of every uploaded object (keys 000000..
 *    without a gap: an object's seq is the count uploaded before it); the batches that could not
 *    reach S3 by the deadline stay in the spill directory for a later delivery under the same
 *    run, never sent inline as "only the rest";
 *  - no batch in S3: data_source "inline" with the CSV of every batch (header once, rows in seq
 *    order).
 * A batch whose spill file is missing or damaged is skipped with one warning and counted, never
 * blocking the batches behind it (the file is kept aside as NAME.damaged).
 * Whatever could not be sent stays in the spill directory, and one warning says how many rows.
 * Messages never hold the token or the S3 secrets: only HTTP statuses and curl's words. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include "../net/curl.h"
#include "../core/job.h"
#include "../core/locked.h"
#include "stream_add.h"
#include "stream_int.h"
#include "../source/cloud.h"

#define REG_TRIES 5 /* registrations tried in the background before waiting for the end */

/* ---- time and the options copied in ------------------------------------------------------------ */

static void free_strv(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* A heap copy of a NULL-terminated string vector (NULL stays NULL). Returns false on no memory. */
static bool copy_strv(const char *const *src, char ***out)
{
    *out = NULL;
    if (!src)
        return true;
    size_t n = 0;
    while (src[n])
        n++;
    char **v = calloc(n + 1, sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = rt_strdup(src[i]))) {
            free_strv(v);
            return false;
        }
    *out = v;
    return true;
}

/* Makes *slot a copy owned through st->host_strs. Returns false on no memory. */
static bool own_str(rt_stream *st, const char **slot)
{
    if (!*slot)
        return true;
    char *c = rt_strdup(*slot);
    if (!c)
        return false;
    st->host_strs[st->nhost_strs++] = c;
    *slot = c;
    return true;
}

/* Copies the job (strings and tags, into st->job_block) and the host (strings, owned through
 * st->host_strs) into st. Returns false on no memory (what was copied is freed with st). */
static bool copy_job_host(rt_stream *st, const rt_job *job, const rt_host *host)
{
    if (rt_job_dup(job, &st->job, &st->job_block) != RT_OK)
        return false;
    if (!host)
        return true;
    st->host = *host;
    st->have_host = true;
    const char **h[] = {&st->host.hostname, &st->host.host_id,   &st->host.ip, &st->host.cpu_model,
                        &st->host.gpu_model, &st->host.kernel,   &st->host.os, &st->host.allocation};
    st->host_strs = calloc(RT_ARRAY_LEN(h), sizeof *st->host_strs);
    if (!st->host_strs)
        return false;
    bool ok = true;
    for (size_t i = 0; i < RT_ARRAY_LEN(h); i++)
        ok = ok && own_str(st, h[i]);
    return ok;
}

/* ---- the rows ------------------------------------------------------------------------------------ */

/* The sampling loop's call: the row is formatted outside the lock, then appended under it (and,
 * until the run is registered, the sample's record fed to the dedicated/shared guess
 * registration sends: the pipeline's when it gave one). */
rt_error rt_stream_add_with(rt_stream *st, const rt_sample *sample, const rt_record *rec)
{
    if (!st || !sample)
        return RT_ERR_INVALID;
    size_t n = rt_format_sample(st->csv_format, sample, NULL, st->row, sizeof st->row);
    pthread_mutex_lock(&st->mu);
    rt_error e = RT_ERR_INVALID;
    if (!st->finishing) {
        if (!st->registered && rec)
            rt_allocation_add_record(&st->alloc, rec);
        else if (!st->registered)
            rt_allocation_add(&st->alloc, sample);
        if (n < sizeof st->row) {
            e = rt_batch_append_locked(st, st->row, n);
        } else {
            st->lost++;
            e = RT_ERR_NOMEM;
        }
    }
    pthread_mutex_unlock(&st->mu);
    return e;
}

rt_error rt_stream_add(rt_stream *st, const rt_sample *sample)
{
    return rt_stream_add_with(st, sample, NULL);
}

/* ---- the thread ---------------------------------------------------------------------------------- */

/* How much before rt_stream_finish's deadline the thread ends, and the reserve it keeps for the
 * finish call before that. */
static double finish_margin(const rt_stream *st)
{
    return fmin(st->finish_timeout * 0.05, 0.25);
}

static double finish_reserve(const rt_stream *st)
{
    return fmin(st->finish_timeout * 0.3, 2.0);
}

/* The end: last batch closed, pending ones retried, the run finished, the rest spilled; all by
 * the deadline. Sets st->result. */
static void finish_phase(rt_stream *st)
{
    pthread_mutex_lock(&st->mu);
    double deadline = st->deadline;
    int exit_code = st->exit_code;
    bool failed = st->failed;
    double finished_unix = st->finished_unix;
    pthread_mutex_unlock(&st->mu);
    rt_batch_close_all(st);
    /* the thread's own end, a little before rt_stream_finish stops waiting for it */
    deadline -= finish_margin(st);
    double reserve = finish_reserve(st);
    atomic_store(&st->abort_at, deadline); /* past the reserve's start: the phase keeps to its own times */
    if (!st->registered && deadline - reserve - rt_clock_now(st->clock) > 0.05) {
        if (st->reg_tries > 0)
            rt_upload_say_wait(st, "the Sentinel API", st->api_why, deadline - reserve);
        rt_upload_register(st, deadline - reserve - rt_clock_now(st->clock));
    }
    bool finished = false;
    if (st->registered) {
        st->s3_next = 0;
        st->s3_backoff = 0;
        while (st->pending && rt_clock_now(st->clock) < deadline - reserve) {
            rt_upload_pending(st, deadline - reserve, 0.2, 1.0);
            if (st->pending) {
                rt_upload_say_wait(st, "S3", st->s3_why, deadline - reserve);
                rt_clock_sleep_until(st->clock, fmin(st->s3_next, deadline - reserve));
            }
        }
        finished = rt_upload_finish(st, exit_code, failed, finished_unix, fmax(deadline - rt_clock_now(st->clock), 0.05));
    }
    st->ended = true; /* what the record keeps for a later delivery */
    st->end_code = exit_code;
    st->end_failed = failed;
    st->end_unix = finished_unix;
    uint64_t unsent = rt_batch_pending_rows(st);
    if (unsent) {
        rt_spill_persist(st, true);
        uint64_t kept = 0; /* rows of batches with a spill file (spilling may have been refused) */
        for (const rt_batch *b = st->pending; b; b = b->next)
            kept += b->spill ? b->rows : 0;
        if (kept == unsent)
            rt_log(&st->lg, RT_LOG_WARN, "stream: %llu rows were not sent; they are kept in %s",
                   (unsigned long long)unsent, st->spill_dir);
        else
            rt_log(&st->lg, RT_LOG_WARN, "stream: %llu rows were not sent; %llu of them are kept in %s, the rest "
                   "could not be spilled and are lost", (unsigned long long)unsent, (unsigned long long)kept,
                   st->spill_dir);
    }
    pthread_mutex_lock(&st->mu);
    uint64_t lost = st->lost;
    pthread_mutex_unlock(&st->mu);
    if (lost)
        rt_log(&st->lg, RT_LOG_WARN, "stream: %llu rows could not be kept (out of memory)", (unsigned long long)lost);
    rt_record_end(st); /* removed when all went, else kept (with the end) for a later delivery */
    st->result = finished ? RT_OK : RT_ERR_IO;
}


/* The logger the thread's messages go through: hands them to the caller's callback until
 * rt_stream_free has returned (an orphaned thread must not call into what the caller freed). */
static void stream_log(void *user, rt_log_level level, const char *msg)
{
    rt_stream *st = user;
    pthread_mutex_lock(&st->logmu);
    if (!st->log_closed && st->user_lg.fn)
        st->user_lg.fn(st->user_lg.user, level, msg);
    pthread_mutex_unlock(&st->logmu);
}

/* The stream thread: closes a batch every interval, registers (REG_TRIES tries in the
 * background), uploads and spills until rt_stream_finish, then runs the end. Frees st itself when
 * rt_stream_free gave up waiting for it (orphaned). */
static void *stream_main(void *arg)
{
    rt_stream *st = arg;
    rt_fetch_abort_at(&st->abort_at); /* a request in flight when the finish starts ends in time */
    double next_close = st->t0 + st->interval;
    st->reg_next = next_close; /* the first registration: when the first batch is due */
    double backoff_max = fmin(fmax(st->interval, 5), 60);
    double backoff_min = fmin(st->interval, 1);
    pthread_mutex_lock(&st->mu);
    for (;;) {
        double wake = next_close;
        if (!st->registered && st->reg_tries < REG_TRIES && st->reg_next < wake)
            wake = st->reg_next;
        if (st->registered && st->pending && st->s3_next < wake)
            wake = st->s3_next;
        while (!st->finishing && !rt_clock_wait(st->clock, &st->cv, &st->mu, wake))
            ;
        if (st->finishing)
            break;
        pthread_mutex_unlock(&st->mu);
        double now = rt_clock_now(st->clock);
        if (now >= next_close) {
            rt_batch_close_all(st);
            next_close += st->interval * floor((now - next_close) / st->interval + 1.0);
        }
        if (!st->registered && st->reg_tries < REG_TRIES && now >= st->reg_next)
            rt_upload_register(st, st->net_timeout);
        if (st->registered)
            rt_upload_pending(st, INFINITY, backoff_min, backoff_max);
        rt_spill_persist(st, false);
        pthread_mutex_lock(&st->mu);
        void (*then)(rt_stream *) = st->registered ? st->once_registered : NULL;
        if (then) {
            st->once_registered = NULL; /* the API is up: what the caller asked for then (older runs delivered) */
            pthread_mutex_unlock(&st->mu);
            then(st);
            pthread_mutex_lock(&st->mu);
        }
    }
    pthread_mutex_unlock(&st->mu);
    finish_phase(st);
    pthread_mutex_lock(&st->mu);
    st->done = true;
    bool orphaned = st->orphaned;
    rt_clock_broadcast(st->clock, &st->cv);
    pthread_mutex_unlock(&st->mu);
    rt_fetch_abort_at(NULL);
    if (orphaned)
        rt_stream_destroy(st);
    return NULL;
}

/* ---- the public side ------------------------------------------------------------------------------ */

rt_stream *rt_stream_alloc(const rt_stream_net *net, double finish_timeout_secs)
{
    rt_stream *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->logmu, NULL);
    rt_clock_cond_init(&st->cv);
    st->record_fd = -1;
    st->done_seq = -1;
    atomic_init(&st->abort_at, INFINITY);
    st->net = *net;
    st->finish_timeout = finish_timeout_secs > 0 ? finish_timeout_secs : 10.0;
    st->net_timeout = fmin(fmax(st->finish_timeout / 2, 1), 30);
    return st;
}

void rt_stream_destroy(rt_stream *st)
{
    if (st->record_fd >= 0)
        close(st->record_fd);
    free(st->reg_body);
    rt_batch_free(st->cur);
    rt_batch_free_list(st->full);
    rt_batch_free_list(st->pending);
    for (size_t i = 0; i < st->nuris; i++)
        free(st->uris[i]);
    free(st->uris);
    for (size_t i = 0; i < st->nhost_strs; i++)
        free(st->host_strs[i]);
    free(st->host_strs);
    free(st->job_block);
    free_strv(st->command);
    if (st->token)
        explicit_bzero(st->token, strlen(st->token));
    explicit_bzero(&st->creds, sizeof st->creds);
    rt_free_all(st->token, st->api_url, st->endpoint, st->region, st->spill_dir, st->spill_fallback);
    pthread_mutex_destroy(&st->mu);
    pthread_mutex_destroy(&st->logmu);
    pthread_cond_destroy(&st->cv);
    rt_cloud_free(st->cloud);
    free(st);
}

/* A copy of s (NULL or "" stay NULL); *ok becomes false on no memory. */
static char *dup_opt(const char *s, bool *ok)
{
    if (!s || !*s)
        return NULL;
    char *c = rt_strdup(s);
    if (!c)
        *ok = false;
    return c;
}

static bool http_url(const char *u)
{
    return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

rt_error rt_stream_start_net(const rt_stream_options *opts, const rt_stream_net *net, rt_clock *clock,
                             rt_stream **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_stream_options o = RT_STREAM_OPTIONS_INIT;
    if (!opts || !net || rt_struct_copy(&o, sizeof o, opts) < 0 || !o.token || !*o.token ||
        (o.api_url && !http_url(o.api_url)) || (o.s3_endpoint_url && *o.s3_endpoint_url && !http_url(o.s3_endpoint_url)) ||
        !(o.upload_interval_secs >= 0) || !(o.finish_timeout_secs >= 0) || isinf(o.upload_interval_secs))
        return RT_ERR_INVALID;
    char err[256];
    if (rt_gzip_available(err, sizeof err) != RT_OK)
        return RT_ERR_UNSUPPORTED;
    rt_stream *st = rt_stream_alloc(net, o.finish_timeout_secs);
    if (!st)
        return RT_ERR_NOMEM;
    st->clock = clock;
    st->user_lg.fn = o.log;
    st->user_lg.user = o.log_user;
    st->lg.fn = stream_log;
    st->lg.user = st;
    st->cloud = rt_cloud_ref(o.cloud); /* ours: the caller may free its handle */
    st->interval = o.upload_interval_secs > 0 ? o.upload_interval_secs : 60.0;
    st->mem_limit = o.memory_limit_bytes ? o.memory_limit_bytes : (size_t)8 << 20;
    st->csv_format = o.csv_energy ? RT_FORMAT_CSV_ENERGY : RT_FORMAT_CSV;
    bool ok = true;
    st->token = dup_opt(o.token, &ok);
    st->api_url = dup_opt(o.api_url ? o.api_url : RT_SENTINEL_DEFAULT_URL, &ok);
    st->endpoint = dup_opt(o.s3_endpoint_url, &ok);
    st->region = dup_opt(o.region, &ok);
    st->spill_dir = o.spill_dir && *o.spill_dir ? dup_opt(o.spill_dir, &ok) : rt_spill_default_dir();
    st->spill_fallback = dup_opt(o.spill_fallback_dir, &ok);
    ok = ok && st->spill_dir && copy_strv(o.command, &st->command) && copy_job_host(st, o.job, o.host);
    if (ok) {
        size_t n = strlen(st->api_url);
        while (n > 0 && st->api_url[n - 1] == '/')
            st->api_url[--n] = '\0';
        rt_stream_fingerprint(st->api_url, st->token, st->fp);
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        unsigned rnd = 0; /* PIDs repeat across PID namespaces (containers): the key must not */
        if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
            rnd = (unsigned)rt_mono_secs() ^ (unsigned)(uintptr_t)st;
        snprintf(st->local_key, sizeof st->local_key, "local-%s-%ld-%08x", stamp, (long)getpid(), rnd);
        st->t0 = rt_clock_now(st->clock);
        st->start_unix = rt_real_secs();
        st->start_mono = rt_mono_secs();
        st->cur = rt_batch_new(st);
    }
    if (!ok || !st->cur) {
        rt_stream_destroy(st);
        return RT_ERR_NOMEM;
    }
    int e = pthread_create(&st->th, NULL, stream_main, st);
    if (e != 0) { /* EAGAIN: a process or thread limit (a pids cgroup) */
        rt_stream_destroy(st);
        errno = e;
        return RT_ERR_SYSTEM;
    }
    *out = st;
    return RT_OK;
}

rt_error rt_stream_start(const rt_stream_options *opts, rt_stream **out)
{
    if (out)
        *out = NULL;
    if (!opts || !out || opts->struct_size < sizeof(size_t) || !opts->token || !*opts->token)
        return RT_ERR_INVALID;
    char err[256];
    if (rt_fetch_available(err, sizeof err) != RT_OK)
        return RT_ERR_UNSUPPORTED;
    return rt_stream_start_net(opts, &rt_stream_real_net, NULL, out);
}

rt_error rt_stream_finish(rt_stream *st, int exit_code, int failed)
{
    if (!st)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&st->mu);
    if (st->finishing) {
        pthread_mutex_unlock(&st->mu);
        return RT_ERR_INVALID;
    }
    st->finishing = true;
    st->exit_code = exit_code;
    st->failed = failed != 0;
    /* the start's Unix time plus the monotonic time since: never before the registration, however
     * the wall clock was set meanwhile */
    st->finished_unix = st->start_unix + fmax(rt_mono_secs() - st->start_mono, 0);
    st->deadline = rt_clock_now(st->clock) + st->finish_timeout;
    /* a request in flight ends where the finish phase keeps its reserve for the finish call */
    atomic_store(&st->abort_at, st->deadline - finish_margin(st) - finish_reserve(st));
    rt_clock_broadcast(st->clock, &st->cv);
    /* the thread keeps to a time a little before the deadline; not a moment longer here */
    while (!st->done && !rt_clock_wait(st->clock, &st->cv, &st->mu, st->deadline))
        ;
    rt_error r = st->done ? st->result : RT_ERR_IO;
    pthread_mutex_unlock(&st->mu);
    return r;
}

void rt_stream_free(rt_stream *st)
{
    if (!st)
        return;
    if (!rt_locked_flag(&st->mu, &st->finishing))
        rt_stream_finish(st, 0, 0);
    pthread_mutex_lock(&st->mu);
    if (!st->done) { /* past its deadline (a request that overran): it frees itself when done */
        pthread_mutex_lock(&st->logmu);
        st->log_closed = true; /* the caller's log callback may be gone once this returns */
        pthread_mutex_unlock(&st->logmu);
        /* detached before the thread can see orphaned and free st (st->th is read here) */
        pthread_detach(st->th);
        st->orphaned = true;
        pthread_mutex_unlock(&st->mu);
        return;
    }
    pthread_mutex_unlock(&st->mu);
    pthread_join(st->th, NULL);
    rt_stream_destroy(st);
}

void rt_stream_damaged(rt_stream *st, unsigned *batches, uint64_t *rows)
{
    pthread_mutex_lock(&st->mu);
    if (batches)
        *batches = st->damaged;
    if (rows)
        *rows = st->damaged_rows;
    pthread_mutex_unlock(&st->mu);
}

void rt_stream_counts(rt_stream *st, uint64_t *rows, uint64_t *lost, unsigned *closed, unsigned *uploaded,
                      unsigned *spilled)
{
    pthread_mutex_lock(&st->mu);
    if (rows)
        *rows = st->rows;
    if (lost)
        *lost = st->lost;
    if (closed)
        *closed = st->closed;
    if (uploaded)
        *uploaded = st->uploaded;
    if (spilled)
        *spilled = st->spilled;
    pthread_mutex_unlock(&st->mu);
}
