/* stream.c - the uploader of contracts §5: rows go into a gzip member per batch under a short
 * lock; one thread of its own registers the run, closes a batch every upload interval, PUTs it
 * to S3 as {prefix}/{run_id}/{seq:06d}.csv.gz, retries what failed and finishes the run.
 *
 * Nothing is lost. A batch keeps its seq (given when it is closed, from 0, only to batches with
 * rows) until it is uploaded; one that failed once is written to a spill file
 * ({spill_dir}/{run}-{seq:06d}.csv.gz, the very gzip that would be uploaded) and stays in memory
 * while the batches held there stay under memory_limit_bytes; its file is removed once it is
 * uploaded or sent inline. Before registration succeeds every closed batch is spilled at once.
 *
 * The end (rt_stream_finish, within finish_timeout_secs in all): the last batch is closed, the
 * pending ones retried until a reserve for the finish call is left, then POST /finish:
 *  - every batch in S3: data_source "s3" with the URIs of every uploaded object;
 *  - some or all batches not in S3: data_source "inline" with the CSV of the batches that did
 *    NOT reach S3 (header once, rows in seq order). The objects that did reach S3 are not named
 *    in the body then (§5 allows one data_source), but they lie under the run's own prefix
 *    {prefix}/{run_id}/ that the service handed out: the rows in S3 plus the inline rows are the
 *    rows written, each once (a PUT whose reply was lost may still have landed: then its rows
 *    are both in S3 and inline, the only duplicate possible).
 * Whatever could not be sent stays in the spill directory, and one warning says how many rows.
 * Messages never hold the token or the S3 secrets: only HTTP statuses and curl's words. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/allocation.h"
#include "../core/gzip.h"
#include "../net/curl.h"
#include "sentinel.h"
#include "stream_int.h"

#define DEFAULT_API_URL "https://api.sentinel.sparecores.net"
#define REG_TRIES 5              /* registrations tried in the background before waiting for the end */
#define REFRESH_AHEAD_SECS 300.0 /* credentials are refreshed when they expire within this */
#define INLINE_MAX (256u << 20)  /* the most raw CSV sent inline */
#define REPLY_MAX (1u << 20)

/* One batch: a gzip member of the CSV header and its rows. */
typedef struct batch {
    struct batch *next;
    unsigned seq;       /* given when closed */
    size_t rows;
    rt_gzip *z;         /* open member, or the finished one holding gz; NULL once only spilled */
    const void *gz;     /* the finished bytes (owned by z), NULL while open or once dropped */
    size_t gzlen;
    char *spill;        /* its spill file, or NULL */
    unsigned tries;
} batch;

struct rt_stream {
    rt_logger lg;
    rt_stream_net net;
    char *api_url, *token, *endpoint, *region, *spill_dir;
    rt_job job;
    char **job_strs; /* the copied metadata strings and tags, freed at the end */
    size_t njob_strs;
    char **command;
    rt_host host;
    bool have_host;
    rt_cloud_discovery *cloud;
    double interval, finish_timeout, net_timeout, t0;
    size_t mem_limit;
    char local_key[64]; /* names spill files before the run has an id */

    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    batch *cur;                      /* the batch rows go into */
    batch *full, *full_tail;         /* batches that filled up between two closes */
    rt_allocation alloc;
    bool finishing, finish_called, done, orphaned;
    int exit_code;
    bool failed;
    double finished_unix, deadline;
    rt_error result;
    uint64_t rows, lost;
    unsigned closed, uploaded, spilled;
    char row[8192]; /* the row being added (the sampling thread's only) */

    /* the stream thread's own */
    batch *pending, *pending_tail; /* closed, not yet uploaded, in seq order */
    unsigned next_seq;
    size_t mem_bytes; /* gzip bytes of pending batches held in memory */
    bool registered, reg_warned;
    unsigned reg_tries;
    double reg_next;
    char run_id[256];
    rt_s3_target target;
    rt_s3_credentials creds;
    double refresh_next;
    bool refresh_warned;
    double s3_next, s3_backoff;
    bool s3_warned, spill_warned;
    char **uris;
    size_t nuris, cap_uris;
};

/* ---- time and small helpers ----------------------------------------------------------------- */

static struct timespec abs_mono(double secs)
{
    struct timespec t;
    t.tv_sec = (time_t)floor(secs);
    t.tv_nsec = (long)((secs - floor(secs)) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void sleep_secs(double s)
{
    if (s > 0) {
        struct timespec t = abs_mono(s);
        nanosleep(&t, NULL);
    }
}

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

/* Makes *slot a copy owned through st->job_strs. Returns false on no memory. */
static bool own_str(rt_stream *st, const char **slot)
{
    if (!*slot)
        return true;
    char *c = rt_strdup(*slot);
    if (!c)
        return false;
    st->job_strs[st->njob_strs++] = c;
    *slot = c;
    return true;
}

/* Copies the job (strings and tags) and the host (strings) into st. Returns false on no memory. */
static bool copy_job_host(rt_stream *st, const rt_job *job, const rt_host *host)
{
    rt_job j = RT_JOB_INIT;
    if (job && rt_struct_copy(&j, sizeof j, job) < 0)
        return false;
    j.struct_size = sizeof j;
    size_t need = 11 + j.tag_count + 12 + 1;
    st->job_strs = calloc(need, sizeof *st->job_strs);
    const char **tags = j.tag_count ? calloc(j.tag_count, sizeof *tags) : NULL;
    if (!st->job_strs || (j.tag_count && !tags)) {
        free(tags);
        return false;
    }
    const char **f[] = {&j.job_name,     &j.project_name,    &j.stage_name, &j.task_name,
                        &j.team,         &j.env,             &j.language,   &j.orchestrator,
                        &j.executor,     &j.external_run_id, &j.container_image};
    bool ok = true;
    for (size_t i = 0; i < RT_ARRAY_LEN(f); i++)
        ok = ok && own_str(st, f[i]);
    for (size_t i = 0; i < j.tag_count; i++) {
        tags[i] = j.tags[i];
        ok = ok && own_str(st, &tags[i]);
    }
    st->job_strs[st->njob_strs++] = (char *)tags; /* freed with the strings */
    j.tags = tags;
    st->job = j;
    if (!ok || !host)
        return ok;
    st->host = *host;
    st->have_host = true;
    const char **h[] = {&st->host.hostname, &st->host.host_id,   &st->host.ip, &st->host.cpu_model,
                        &st->host.gpu_model, &st->host.kernel,   &st->host.os, &st->host.allocation};
    for (size_t i = 0; i < RT_ARRAY_LEN(h); i++)
        ok = ok && own_str(st, h[i]);
    return ok;
}

/* ---- batches (the rows side) ------------------------------------------------------------------- */

static void batch_free(batch *b)
{
    if (!b)
        return;
    rt_gzip_free(b->z);
    free(b->spill);
    free(b);
}

/* A new open batch holding the CSV header. NULL on no memory. */
static batch *batch_new(const rt_stream *st)
{
    batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    const char *h = rt_csv_header();
    /* the open batch's own bound: the memory limit, or 1 MiB when the limit is lower */
    size_t max = st->mem_limit > ((size_t)1 << 20) ? st->mem_limit : (size_t)1 << 20;
    if (rt_gzip_new(max, &b->z) != RT_OK || rt_gzip_write(b->z, h, strlen(h)) != RT_OK) {
        batch_free(b);
        return NULL;
    }
    return b;
}

/* Appends one formatted row to the open batch; under mu. A batch that is full (its gzip at the
 * memory bound) is queued for the thread to close and a new one opened. Returns RT_OK or
 * RT_ERR_NOMEM (the row counted lost). */
static rt_error append_row_locked(rt_stream *st, const char *row, size_t n)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!st->cur && !(st->cur = batch_new(st)))
            break;
        rt_error e = rt_gzip_write(st->cur->z, row, n);
        if (e == RT_OK) {
            st->cur->rows++;
            st->rows++;
            return RT_OK;
        }
        if (st->cur->rows == 0)
            break; /* a row that does not fit an empty batch */
        if (st->full_tail)
            st->full_tail->next = st->cur;
        else
            st->full = st->cur;
        st->full_tail = st->cur;
        st->cur = NULL;
    }
    st->lost++;
    return RT_ERR_NOMEM;
}

rt_error rt_stream_add(rt_stream *st, const rt_sample *sample)
{
    if (!st || !sample)
        return RT_ERR_INVALID;
    size_t n = rt_format_sample(RT_FORMAT_CSV, sample, NULL, st->row, sizeof st->row);
    pthread_mutex_lock(&st->mu);
    rt_error e = RT_ERR_INVALID;
    if (!st->finishing) {
        rt_allocation_add(&st->alloc, sample);
        if (n < sizeof st->row) {
            e = append_row_locked(st, st->row, n);
        } else {
            st->lost++;
            e = RT_ERR_NOMEM;
        }
    }
    pthread_mutex_unlock(&st->mu);
    return e;
}

/* Appends b to the pending list (the thread's). */
static void pend(rt_stream *st, batch *b)
{
    b->next = NULL;
    if (st->pending_tail)
        st->pending_tail->next = b;
    else
        st->pending = b;
    st->pending_tail = b;
}

/* Closes the open batch (if it has rows) and those that filled up, giving them their seq, and
 * opens a new one. The lock is held only to swap pointers. */
static void close_batches(rt_stream *st)
{
    batch *fresh = batch_new(st); /* made outside the lock; NULL: rt_stream_add makes one */
    pthread_mutex_lock(&st->mu);
    batch *list = st->full;
    st->full = st->full_tail = NULL;
    batch *old = NULL;
    if (!st->cur || st->cur->rows > 0) {
        old = st->cur;
        st->cur = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(&st->mu);
    batch_free(fresh);
    if (old) {
        batch **p = &list;
        while (*p)
            p = &(*p)->next;
        *p = old;
        old->next = NULL;
    }
    unsigned closed = 0;
    uint64_t lost = 0;
    while (list) {
        batch *b = list;
        list = b->next;
        if (rt_gzip_finish(b->z, &b->gz, &b->gzlen) != RT_OK) {
            lost += b->rows;
            batch_free(b);
            continue;
        }
        b->seq = st->next_seq++;
        st->mem_bytes += b->gzlen;
        pend(st, b);
        closed++;
    }
    pthread_mutex_lock(&st->mu);
    st->closed += closed;
    st->lost += lost;
    pthread_mutex_unlock(&st->mu);
    if (lost)
        rt_log(&st->lg, RT_LOG_ERROR, "stream: %llu rows lost: out of memory closing a batch",
               (unsigned long long)lost);
}

/* ---- spill files -------------------------------------------------------------------------------- */

/* mkdir -p path (0700). Returns true when it exists as a directory. */
static bool make_dirs(const char *path)
{
    char p[4096];
    if (!rt_copy_str(p, sizeof p, path))
        return false;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return false;
        *s = '/';
    }
    struct stat sb;
    return (mkdir(p, 0700) == 0 || errno == EEXIST) && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The run's name in spill file names: its id (characters outside [A-Za-z0-9._-] made '_'), or
 * the local key before registration. */
static void run_name(const rt_stream *st, char *out, size_t cap)
{
    const char *src = st->registered ? st->run_id : st->local_key;
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) {
        char c = src[i];
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
        out[i] = keep && !(i == 0 && c == '.') ? c : '_';
    }
    out[i] = '\0';
}

/* Writes all of len bytes to fd. Returns true or false (errno set). */
static bool write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Writes b's gzip into its spill file (a temporary name renamed into place, so that a file there
 * is whole). Returns true when b has a spill file. The first failure is logged. */
static bool spill(rt_stream *st, batch *b)
{
    if (b->spill)
        return true;
    if (!b->gz)
        return false;
    char name[256], path[4096], tmp[4200];
    run_name(st, name, sizeof name);
    int fd = -1;
    bool ok = make_dirs(st->spill_dir) &&
              rt_pathf(path, sizeof path, "%s/%s-%06u.csv.gz", st->spill_dir, name, b->seq) &&
              rt_pathf(tmp, sizeof tmp, "%s.tmp", path) &&
              (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0 && write_all(fd, b->gz, b->gzlen);
    int e = errno;
    if (fd >= 0 && close(fd) < 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && rename(tmp, path) < 0) {
        ok = false;
        e = errno;
    }
    if (ok && !(b->spill = rt_strdup(path)))
        e = ENOMEM, ok = false;
    if (!ok) {
        if (fd >= 0)
            unlink(tmp);
        if (!st->spill_warned)
            rt_log(&st->lg, RT_LOG_WARN, "stream: cannot spill batch %06u to %s: %s (kept in memory)", b->seq,
                   st->spill_dir, strerror(e));
        st->spill_warned = true;
        return false;
    }
    pthread_mutex_lock(&st->mu);
    st->spilled++;
    pthread_mutex_unlock(&st->mu);
    return true;
}

/* The gzip bytes of b: from memory, or read back from its spill file into *tmp (free it with
 * rt_buf_free). Returns false when neither is there. */
static bool batch_bytes(const batch *b, rt_buf *tmp, const void **data, size_t *len)
{
    rt_buf_init(tmp, b->gzlen + 4096); /* room for the reader's first 4 KiB and the NUL */
    if (b->gz) {
        *data = b->gz;
        *len = b->gzlen;
        return true;
    }
    int fd = b->spill ? open(b->spill, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return false;
    ssize_t n = rt_read_fd_grow(fd, tmp, RT_READ_TO_EOF);
    close(fd);
    if (n < 0 || (size_t)n != b->gzlen)
        return false;
    *data = tmp->data;
    *len = tmp->len;
    return true;
}

/* Drops b (uploaded or sent inline): its spill file removed, its memory freed. */
static void retire(rt_stream *st, batch *b)
{
    if (b->spill)
        unlink(b->spill);
    if (b->gz)
        st->mem_bytes -= b->gzlen;
    batch_free(b);
}

/* Spills what must be spilled: every pending batch while S3 fails (one failed) or the run is not
 * registered (or all with everything), and drops the memory copies of spilled batches,
 * oldest first, while the memory held passes the bound. */
static void persist(rt_stream *st, bool everything)
{
    for (batch *b = st->pending; b; b = b->next)
        if (everything || st->s3_backoff > 0 || b->tries > 0 || !st->registered)
            spill(st, b);
    for (batch *b = st->pending; b && st->mem_bytes > st->mem_limit; b = b->next) {
        if (b->gz && spill(st, b)) {
            st->mem_bytes -= b->gzlen;
            rt_gzip_free(b->z);
            b->z = NULL;
            b->gz = NULL;
        }
    }
}

static uint64_t pending_rows(const rt_stream *st)
{
    uint64_t n = 0;
    for (const batch *b = st->pending; b; b = b->next)
        n += b->rows;
    return n;
}

/* ---- the network side ----------------------------------------------------------------------------- */

/* POSTs body to {api_url}{path}. Returns true for a 2xx reply (its body in *reply, which the
 * caller frees), false otherwise with what went wrong in why ("HTTP 503" or curl's words). */
static bool api_post(rt_stream *st, const char *path, const char *body, size_t len, double timeout, rt_buf *reply,
                     char *why, size_t whylen)
{
    char url[2048];
    long status = 0;
    rt_buf_init(reply, REPLY_MAX);
    if (!rt_pathf(url, sizeof url, "%s%s", st->api_url, path)) {
        snprintf(why, whylen, "URL too long");
        return false;
    }
    char err[512] = "";
    rt_error e = st->net.post(st->net.user, url, st->token, body, len, timeout > 0.05 ? timeout : 0.05, &status, reply,
                              err, sizeof err);
    if (e == RT_OK && status >= 200 && status < 300)
        return true;
    if (e == RT_OK)
        snprintf(why, whylen, "HTTP %ld", status);
    else
        snprintf(why, whylen, "%s", err[0] ? err : rt_strerror(e));
    return false;
}

/* Registers the run (POST /runs), after the cloud's result (within its 2 s from the start) and
 * with the dedicated/shared guess from the samples so far. On success learns the bucket's
 * region when none was given. Failures are warned about once and retried with backoff. */
static void try_register(rt_stream *st, double timeout)
{
    double waited = rt_mono_secs() - st->t0;
    const rt_cloud *cloud = rt_cloud_result(st->cloud, waited < 2.0 ? 2.0 - waited : 0.0);
    pthread_mutex_lock(&st->mu);
    const char *guess = rt_allocation_guess(&st->alloc);
    pthread_mutex_unlock(&st->mu);
    rt_sentinel_run run = {.job = &st->job,
                           .command = (const char *const *)st->command,
                           .host = st->have_host ? &st->host : NULL,
                           .cloud = cloud,
                           .allocation = guess ? guess : (st->have_host ? st->host.allocation : NULL)};
    rt_buf body = {0}, reply = {0};
    char why[600] = "";
    bool ok = false;
    if (rt_sentinel_register_body(&run, &body) != RT_OK) {
        snprintf(why, sizeof why, "out of memory");
    } else if (api_post(st, "/runs", body.data, body.len, timeout, &reply, why, sizeof why)) {
        char perr[256] = "";
        rt_s3_target t;
        memset(&t, 0, sizeof t);
        ok = rt_sentinel_parse_register(reply.data ? reply.data : "", reply.len, st->run_id, sizeof st->run_id, &t,
                                        &st->creds, perr, sizeof perr);
        if (ok) {
            rt_copy_str(t.endpoint, sizeof t.endpoint, st->endpoint ? st->endpoint : "");
            rt_copy_str(t.region, sizeof t.region, st->region ? st->region : "");
            st->target = t;
        } else {
            snprintf(why, sizeof why, "unexpected reply: %s", perr);
        }
    }
    rt_buf_free(&body);
    rt_buf_free(&reply);
    if (ok) {
        st->registered = true;
        rt_log(&st->lg, RT_LOG_INFO, "stream: registered run %s", st->run_id);
        if (!st->target.region[0]) {
            st->net.find_region(st->net.user, &st->target, &st->creds,
                                timeout < st->net_timeout ? timeout : st->net_timeout);
            if (!st->target.region[0])
                rt_copy_str(st->target.region, sizeof st->target.region, "eu-central-1");
        }
        if (st->reg_warned)
            rt_log(&st->lg, RT_LOG_WARN, "stream: the run is registered now (run %s)", st->run_id);
        return;
    }
    st->reg_tries++;
    st->reg_next = rt_mono_secs() + ldexp(1.0, (int)st->reg_tries);
    if (!st->reg_warned)
        rt_log(&st->lg, RT_LOG_WARN,
               "stream: cannot register the run at the Sentinel API (%s); tracking goes on, batches are kept in %s "
               "and registration is retried",
               why, st->spill_dir);
    else
        rt_log(&st->lg, RT_LOG_INFO, "stream: registration try %u failed (%s)", st->reg_tries, why);
    st->reg_warned = true;
}

/* Refreshes the credentials when they expire within 300 s (not more often than every upload
 * interval or 30 s). A failure is warned about once; the old credentials are used meanwhile. */
static void refresh_if_needed(rt_stream *st, double timeout)
{
    double left = st->creds.expires_unix - rt_real_secs();
    if (!(left < REFRESH_AHEAD_SECS) || rt_mono_secs() < st->refresh_next)
        return;
    char path[512], why[600] = "";
    rt_buf reply = {0};
    bool ok = false;
    if (rt_pathf(path, sizeof path, "/runs/%s/refresh-credentials", st->run_id) &&
        api_post(st, path, NULL, 0, timeout, &reply, why, sizeof why)) {
        rt_s3_credentials c;
        memset(&c, 0, sizeof c);
        char perr[256] = "";
        ok = rt_sentinel_parse_refresh(reply.data ? reply.data : "", reply.len, &c, perr, sizeof perr);
        if (ok)
            st->creds = c;
        else
            snprintf(why, sizeof why, "unexpected reply: %s", perr);
        explicit_bzero(&c, sizeof c);
    }
    rt_buf_free(&reply);
    double gap = st->interval < 30 ? st->interval : 30;
    st->refresh_next = rt_mono_secs() + (gap > 1 ? gap : 1);
    if (ok) {
        rt_log(&st->lg, RT_LOG_INFO, "stream: upload credentials refreshed");
        st->refresh_warned = false;
    } else if (!st->refresh_warned) {
        rt_log(&st->lg, RT_LOG_WARN, "stream: cannot refresh the upload credentials (%s)", why);
        st->refresh_warned = true;
    }
}

/* The object key of seq, relative to the target's prefix (rt_s3_put puts it under it):
 * {run_id}/{seq:06d}.csv.gz. Returns false when it does not fit. */
static bool object_key(const rt_stream *st, unsigned seq, char *out, size_t cap)
{
    return rt_pathf(out, cap, "%s/%06u.csv.gz", st->run_id, seq);
}

/* Remembers the s3:// URI of an uploaded key. Returns false on no memory. */
static bool add_uri(rt_stream *st, const char *key)
{
    char uri[2048];
    if (!rt_s3_object_uri(&st->target, key, uri, sizeof uri))
        return false;
    if (st->nuris == st->cap_uris && rt_grow(&st->uris, &st->cap_uris, st->nuris + 1, sizeof *st->uris) < 0)
        return false;
    if (!(st->uris[st->nuris] = rt_strdup(uri)))
        return false;
    st->nuris++;
    return true;
}

/* PUTs the oldest pending batch. Returns true when it was uploaded (and retired). */
static bool upload_oldest(rt_stream *st, double timeout)
{
    batch *b = st->pending;
    refresh_if_needed(st, timeout);
    char key[1400], err[512] = "";
    rt_buf tmp;
    const void *data;
    size_t len;
    long status = 0;
    rt_error e = RT_ERR_IO;
    if (!object_key(st, b->seq, key, sizeof key)) {
        snprintf(err, sizeof err, "object key too long");
    } else if (!batch_bytes(b, &tmp, &data, &len)) {
        snprintf(err, sizeof err, "cannot read back %s", b->spill ? b->spill : "the batch");
        rt_buf_free(&tmp);
    } else {
        e = st->net.put(st->net.user, &st->target, &st->creds, key, data, len, timeout > 0.05 ? timeout : 0.05,
                        &status, err, sizeof err);
        rt_buf_free(&tmp);
    }
    if (e == RT_OK) {
        if (!add_uri(st, key))
            rt_log(&st->lg, RT_LOG_ERROR, "stream: out of memory remembering %s", key);
        st->pending = b->next;
        if (!st->pending)
            st->pending_tail = NULL;
        retire(st, b);
        pthread_mutex_lock(&st->mu);
        st->uploaded++;
        pthread_mutex_unlock(&st->mu);
        if (st->s3_warned)
            rt_log(&st->lg, RT_LOG_WARN, "stream: uploads to S3 work again");
        st->s3_warned = false;
        return true;
    }
    b->tries++;
    if (!st->s3_warned) {
        if (status)
            rt_log(&st->lg, RT_LOG_WARN, "stream: upload of batch %06u failed (HTTP %ld: %s); retrying", b->seq,
                   status, err);
        else
            rt_log(&st->lg, RT_LOG_WARN, "stream: upload of batch %06u failed (%s); retrying", b->seq, err);
    }
    st->s3_warned = true;
    return false;
}

/* Uploads pending batches, oldest first, while S3 takes them and until `until` (monotonic);
 * after a failure the next try waits with doubling backoff (from backoff_min up to backoff_max). */
static void upload_pending(rt_stream *st, double until, double backoff_min, double backoff_max)
{
    while (st->pending) {
        double now = rt_mono_secs();
        if (now >= until || now < st->s3_next)
            return;
        double t = until - now < st->net_timeout ? until - now : st->net_timeout;
        if (upload_oldest(st, t)) {
            st->s3_backoff = 0;
            continue;
        }
        st->s3_backoff = st->s3_backoff > 0 ? st->s3_backoff * 2 : backoff_min;
        if (st->s3_backoff > backoff_max)
            st->s3_backoff = backoff_max;
        st->s3_next = rt_mono_secs() + st->s3_backoff;
        return;
    }
}

/* ---- the thread -------------------------------------------------------------------------------------- */

/* The CSV of the pending batches (header once) into *out. Returns true, or false when a batch
 * cannot be read back or the whole is too large. */
static bool inline_csv(rt_stream *st, rt_buf *out)
{
    const char *hdr = rt_csv_header();
    rt_buf_init(out, INLINE_MAX);
    if (rt_buf_append(out, hdr, strlen(hdr)) < 0)
        return false;
    for (batch *b = st->pending; b; b = b->next) {
        rt_buf tmp, raw = {0};
        const void *data;
        size_t len;
        bool ok = batch_bytes(b, &tmp, &data, &len) && rt_gunzip(data, len, INLINE_MAX, &raw) == RT_OK;
        rt_buf_free(&tmp);
        const char *rows = ok ? memchr(raw.data, '\n', raw.len) : NULL; /* after the header */
        ok = rows && rt_buf_append(out, rows + 1, raw.len - (size_t)(rows + 1 - raw.data)) == 0;
        rt_buf_free(&raw);
        if (!ok)
            return false;
    }
    return rt_buf_append(out, "", 1) == 0 && (out->len--, true); /* NUL-terminated */
}

/* POST /runs/{id}/finish: s3 with the URIs when nothing is pending, else inline with the pending
 * rows. Returns true when the API took it (inline batches are then retired). */
static bool send_finish(rt_stream *st, int exit_code, bool failed, double finished_unix, double timeout)
{
    rt_buf csv = {0}, body = {0}, reply = {0};
    char path[512], why[600] = "";
    bool inl = st->pending || st->nuris == 0;
    bool ok = !inl || inline_csv(st, &csv);
    if (!ok)
        snprintf(why, sizeof why, "cannot gather the rows to send inline");
    else if (rt_sentinel_finish_body(exit_code, failed, finished_unix, (const char *const *)st->uris,
                                     inl ? 0 : st->nuris, inl ? csv.data : NULL, inl ? csv.len : 0, &body) != RT_OK)
        ok = false, snprintf(why, sizeof why, "out of memory");
    rt_buf_free(&csv);
    ok = ok && rt_pathf(path, sizeof path, "/runs/%s/finish", st->run_id) &&
         api_post(st, path, body.data, body.len, timeout, &reply, why, sizeof why);
    rt_buf_free(&body);
    rt_buf_free(&reply);
    if (!ok) {
        rt_log(&st->lg, RT_LOG_WARN, "stream: cannot finish the run at the Sentinel API (%s)", why);
        return false;
    }
    rt_log(&st->lg, RT_LOG_INFO, "stream: run %s finished (%s)", st->run_id, inl ? "data inline" : "data in S3");
    while (inl && st->pending) {
        batch *b = st->pending;
        st->pending = b->next;
        retire(st, b);
    }
    st->pending_tail = NULL;
    return true;
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
    close_batches(st);
    double reserve = st->finish_timeout * 0.3 < 2.0 ? st->finish_timeout * 0.3 : 2.0;
    if (!st->registered && deadline - reserve - rt_mono_secs() > 0.05)
        try_register(st, deadline - reserve - rt_mono_secs());
    bool finished = false;
    if (st->registered) {
        st->s3_next = 0;
        st->s3_backoff = 0;
        while (st->pending && rt_mono_secs() < deadline - reserve) {
            upload_pending(st, deadline - reserve, 0.2, 1.0);
            double wait = st->s3_next - rt_mono_secs();
            double left = deadline - reserve - rt_mono_secs();
            if (st->pending)
                sleep_secs(wait < left ? wait : left);
        }
        double left = deadline - rt_mono_secs();
        finished = send_finish(st, exit_code, failed, finished_unix, left > 0.2 ? left : 0.2);
    }
    uint64_t unsent = pending_rows(st);
    if (unsent) {
        persist(st, true);
        rt_log(&st->lg, RT_LOG_WARN, "stream: %llu rows were not sent; they are kept in %s",
               (unsigned long long)unsent, st->spill_dir);
    }
    pthread_mutex_lock(&st->mu);
    uint64_t lost = st->lost;
    pthread_mutex_unlock(&st->mu);
    if (lost)
        rt_log(&st->lg, RT_LOG_WARN, "stream: %llu rows could not be kept (out of memory)", (unsigned long long)lost);
    st->result = finished ? RT_OK : RT_ERR_IO;
}

static void stream_destroy(rt_stream *st);

static void *stream_main(void *arg)
{
    rt_stream *st = arg;
    double next_close = st->t0 + st->interval;
    st->reg_next = next_close; /* the first registration: when the first batch is due */
    double backoff_max = st->interval < 5 ? 5 : st->interval > 60 ? 60 : st->interval;
    double backoff_min = st->interval < 1 ? st->interval : 1;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        double wake = next_close;
        if (!st->registered && st->reg_tries < REG_TRIES && st->reg_next < wake)
            wake = st->reg_next;
        if (st->registered && st->pending && st->s3_next < wake)
            wake = st->s3_next;
        struct timespec ts = abs_mono(wake);
        while (!st->finishing && rt_mono_secs() < wake)
            if (pthread_cond_timedwait(&st->cv, &st->mu, &ts) == ETIMEDOUT)
                break;
        if (st->finishing)
            break;
        pthread_mutex_unlock(&st->mu);
        double now = rt_mono_secs();
        if (now >= next_close) {
            close_batches(st);
            next_close += st->interval * floor((now - next_close) / st->interval + 1.0);
        }
        if (!st->registered && st->reg_tries < REG_TRIES && now >= st->reg_next)
            try_register(st, st->net_timeout);
        if (st->registered)
            upload_pending(st, INFINITY, backoff_min, backoff_max);
        persist(st, false);
        pthread_mutex_lock(&st->mu);
    }
    pthread_mutex_unlock(&st->mu);
    finish_phase(st);
    pthread_mutex_lock(&st->mu);
    st->done = true;
    bool orphaned = st->orphaned;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    if (orphaned)
        stream_destroy(st);
    return NULL;
}

/* ---- the real network ------------------------------------------------------------------------------- */

static rt_error real_post(void *user, const char *url, const char *token, const char *body, size_t len,
                          double timeout, long *status, rt_buf *reply, char *err, size_t errlen)
{
    (void)user;
    size_t alen = strlen(token) + sizeof "Authorization: Bearer ";
    char *auth = malloc(alen);
    if (!auth)
        return RT_ERR_NOMEM;
    snprintf(auth, alen, "Authorization: Bearer %s", token);
    const char *headers[] = {auth, "Content-Type: application/json", "Accept: application/json", NULL};
    rt_fetch_request rq = {.method = "POST", .url = url, .headers = headers, .body = body ? body : "",
                           .body_len = body ? len : 0, .timeout_secs = timeout, .max_body = REPLY_MAX};
    rt_fetch_reply rp;
    rt_error e = rt_fetch(&rq, &rp, err, errlen);
    explicit_bzero(auth, alen);
    free(auth);
    *status = rp.status;
    rt_buf_free(reply);
    *reply = rp.body;
    memset(&rp.body, 0, sizeof rp.body);
    rt_fetch_reply_free(&rp);
    return e;
}

static rt_error real_put(void *user, const rt_s3_target *t, const rt_s3_credentials *c, const char *key,
                         const void *body, size_t len, double timeout, long *status, char *err, size_t errlen)
{
    (void)user;
    return rt_s3_put(t, c, key, body, len, "application/gzip", timeout, status, err, errlen);
}

static void real_find_region(void *user, rt_s3_target *t, const rt_s3_credentials *c, double timeout)
{
    (void)user;
    rt_s3_find_region(t, c, timeout);
}

/* ---- the public side ---------------------------------------------------------------------------------- */

static void stream_destroy(rt_stream *st)
{
    batch_free(st->cur);
    for (batch *b = st->full, *n; b; b = n) {
        n = b->next;
        batch_free(b);
    }
    for (batch *b = st->pending, *n; b; b = n) {
        n = b->next;
        batch_free(b);
    }
    for (size_t i = 0; i < st->nuris; i++)
        free(st->uris[i]);
    free(st->uris);
    for (size_t i = 0; i < st->njob_strs; i++)
        free(st->job_strs[i]);
    free(st->job_strs);
    free_strv(st->command);
    if (st->token)
        explicit_bzero(st->token, strlen(st->token));
    explicit_bzero(&st->creds, sizeof st->creds);
    free(st->token);
    free(st->api_url);
    free(st->endpoint);
    free(st->region);
    free(st->spill_dir);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st);
}

/* The default spill directory: $XDG_STATE_HOME is the caller's to pass (the library reads no
 * environment), so this is the home directory's .local/state/resource-tracker. */
static char *default_spill_dir(void)
{
    struct passwd pw, *res = NULL;
    char buf[4096], path[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) != 0 || !res || !res->pw_dir ||
        !rt_pathf(path, sizeof path, "%s/.local/state/resource-tracker", res->pw_dir))
        return rt_strdup("/tmp/resource-tracker");
    return rt_strdup(path);
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

rt_error rt_stream_start_net(const rt_stream_options *opts, const rt_stream_net *net, rt_stream **out)
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
    rt_stream *st = calloc(1, sizeof *st);
    if (!st)
        return RT_ERR_NOMEM;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, &ca);
    pthread_condattr_destroy(&ca);
    st->lg.fn = o.log;
    st->lg.user = o.log_user;
    st->net = *net;
    st->cloud = o.cloud;
    st->interval = o.upload_interval_secs > 0 ? o.upload_interval_secs : 60.0;
    st->finish_timeout = o.finish_timeout_secs > 0 ? o.finish_timeout_secs : 10.0;
    st->net_timeout = st->finish_timeout / 2 < 1 ? 1 : st->finish_timeout / 2 > 30 ? 30 : st->finish_timeout / 2;
    st->mem_limit = o.memory_limit_bytes ? o.memory_limit_bytes : (size_t)8 << 20;
    bool ok = true;
    st->token = dup_opt(o.token, &ok);
    st->api_url = dup_opt(o.api_url ? o.api_url : DEFAULT_API_URL, &ok);
    st->endpoint = dup_opt(o.s3_endpoint_url, &ok);
    st->region = dup_opt(o.region, &ok);
    st->spill_dir = o.spill_dir && *o.spill_dir ? dup_opt(o.spill_dir, &ok) : default_spill_dir();
    ok = ok && st->spill_dir && copy_strv(o.command, &st->command) && copy_job_host(st, o.job, o.host);
    if (ok) {
        size_t n = strlen(st->api_url);
        while (n > 0 && st->api_url[n - 1] == '/')
            st->api_url[--n] = '\0';
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(st->local_key, sizeof st->local_key, "local-%s-%ld", stamp, (long)getpid());
        st->t0 = rt_mono_secs();
        st->cur = batch_new(st);
    }
    if (!ok || !st->cur || pthread_create(&st->th, NULL, stream_main, st) != 0) {
        stream_destroy(st);
        return RT_ERR_NOMEM;
    }
    *out = st;
    return RT_OK;
}

rt_error rt_stream_start(const rt_stream_options *opts, rt_stream **out)
{
    static const rt_stream_net real = {.post = real_post, .put = real_put, .find_region = real_find_region};
    if (out)
        *out = NULL;
    if (!opts || !out || opts->struct_size < sizeof(size_t) || !opts->token || !*opts->token)
        return RT_ERR_INVALID;
    char err[256];
    if (rt_fetch_available(err, sizeof err) != RT_OK)
        return RT_ERR_UNSUPPORTED;
    return rt_stream_start_net(opts, &real, out);
}

rt_error rt_stream_finish(rt_stream *st, int exit_code, int failed)
{
    if (!st)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&st->mu);
    if (st->finish_called) {
        pthread_mutex_unlock(&st->mu);
        return RT_ERR_INVALID;
    }
    st->finish_called = true;
    st->finishing = true;
    st->exit_code = exit_code;
    st->failed = failed != 0;
    st->finished_unix = rt_real_secs();
    st->deadline = rt_mono_secs() + st->finish_timeout;
    pthread_cond_broadcast(&st->cv);
    /* the thread keeps to the deadline; a little grace for it to return */
    struct timespec ts = abs_mono(st->deadline + 0.5);
    while (!st->done)
        if (pthread_cond_timedwait(&st->cv, &st->mu, &ts) == ETIMEDOUT)
            break;
    rt_error r = st->done ? st->result : RT_ERR_IO;
    pthread_mutex_unlock(&st->mu);
    return r;
}

void rt_stream_free(rt_stream *st)
{
    if (!st)
        return;
    pthread_mutex_lock(&st->mu);
    bool called = st->finish_called;
    pthread_mutex_unlock(&st->mu);
    if (!called)
        rt_stream_finish(st, 0, 0);
    pthread_mutex_lock(&st->mu);
    if (!st->done) { /* past its deadline (a request that overran): it frees itself when done */
        st->orphaned = true;
        pthread_mutex_unlock(&st->mu);
        pthread_detach(st->th);
        return;
    }
    pthread_mutex_unlock(&st->mu);
    pthread_join(st->th, NULL);
    stream_destroy(st);
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
