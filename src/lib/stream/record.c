/* record.c - the run record beside a run's spill files: {spill_dir}/{key}.run (0600, in the 0700
 * spill directory, rewritten atomically: a temporary file renamed into place) holds what a later
 * delivery needs to finish what the run could not: its POST /runs body while it is not
 * registered, else its run id and S3 target (never a credential: a delivery asks for fresh ones,
 * POST /runs/{id}/refresh-credentials); how many objects it uploaded and
 * the last batch (by local seq) that went; its end (exit status, failed, finished_at) once known;
 * whether the API took its finish call. {key}.lock is the run's lock (flock): the live run holds
 * it from its first record on, a deliverer takes it without waiting, so that one process at a
 * time sends a run.
 *
 * The record is written once the run has spill files, or at its end when something is left (its
 * finish call, or batches): a run whose batches and finish all went never writes one; it is
 * written before the run's first spill file, so that no batch is kept where no delivery could
 * find what it belongs to. It names the credentials the run was made with by a fingerprint
 * (rt_stream_fingerprint: never the token), so that a delivery with other credentials leaves
 * it alone; it counts the batches closed (a gap in the files is a batch missing) and names a
 * batch whose upload may still land (its PUT got no reply). One "name value" line each; values
 * never hold a newline (the body is compact JSON, the others are header-safe). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream_int.h"

#define RECORD_MAX ((size_t)32 << 20)

bool rt_stream_fingerprint(const char *api_url, const char *token, char out[33])
{
    out[0] = '\0';
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    size_t n = strlen(api_url);
    while (n > 0 && api_url[n - 1] == '/')
        n--;
    static const char label[] = "resource-tracker spill credentials 1";
    char hex[65], err[256];
    bool ok = rt_buf_append(&b, label, sizeof label) == 0 && rt_buf_append(&b, api_url, n) == 0 &&
              rt_buf_append(&b, "", 1) == 0 && rt_buf_append(&b, token, strlen(token)) == 0 &&
              rt_s3_sha256_hex(b.data, b.len, hex, err, sizeof err) == RT_OK;
    if (b.data)
        explicit_bzero(b.data, b.len);
    rt_buf_free(&b);
    if (ok) {
        memcpy(out, hex, 32);
        out[32] = '\0';
    }
    explicit_bzero(hex, sizeof hex);
    return ok;
}

bool rt_record_path(const char *spill_dir, const char *key, const char *ext, char *out, size_t cap)
{
    return rt_pathf(out, cap, "%s/%s.%s", spill_dir, key, ext);
}

int rt_record_lock(const char *spill_dir, const char *key)
{
    char path[4200];
    if (!rt_record_path(spill_dir, key, "lock", path, sizeof path))
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void rt_record_unlock(const char *spill_dir, const char *key, int fd, bool remove)
{
    char path[4200];
    if (remove && rt_record_path(spill_dir, key, "lock", path, sizeof path))
        unlink(path); /* while held: a deliverer that opened it first finds no record after */
    if (fd >= 0)
        close(fd);
}

/* Appends "name value\n" to b; false on no memory or a value holding a newline. */
static bool put_line(rt_buf *b, const char *name, const char *value)
{
    if (strchr(value, '\n'))
        return false;
    return rt_buf_append(b, name, strlen(name)) == 0 && rt_buf_append(b, " ", 1) == 0 &&
           rt_buf_append(b, value, strlen(value)) == 0 && rt_buf_append(b, "\n", 1) == 0;
}

static bool put_fmt(rt_buf *b, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool put_fmt(rt_buf *b, const char *name, const char *fmt, ...)
{
    char v[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < sizeof v && put_line(b, name, v);
}

bool rt_record_write(const char *spill_dir, const char *key, const rt_run_record *r)
{
    char path[4200], tmp[4300];
    rt_buf b;
    rt_buf_init(&b, RECORD_MAX);
    bool ok = put_line(&b, "rt-run", "1");
    if (r->fp[0])
        ok = ok && put_line(&b, "for", r->fp);
    if (r->reg_body)
        ok = ok && put_line(&b, "register", r->reg_body);
    if (r->run_id[0]) {
        ok = ok && put_line(&b, "run_id", r->run_id) && put_line(&b, "bucket", r->target.bucket) &&
             put_line(&b, "prefix", r->target.prefix) && put_line(&b, "region", r->target.region);
    }
    ok = ok && put_fmt(&b, "uploaded", "%zu", r->uploaded) && put_fmt(&b, "done_seq", "%lld", r->done_seq) &&
         put_fmt(&b, "closed", "%u", r->closed);
    if (r->doubt_seq >= 0)
        ok = ok && put_fmt(&b, "doubt_seq", "%lld", r->doubt_seq);
    if (r->ended)
        ok = ok && put_fmt(&b, "end", "%d %d %.17g", r->exit_code, r->failed ? 1 : 0, r->finished_unix);
    if (r->finish_sent)
        ok = ok && put_line(&b, "finish_sent", "1");
    int fd = -1;
    bool named = ok && rt_record_path(spill_dir, key, "run", path, sizeof path);
    ok = named && rt_pathf(tmp, sizeof tmp, "%s.XXXXXX", path) && (fd = mkostemp(tmp, O_CLOEXEC)) >= 0;
    if (ok) {
        ok = rt_write_all(fd, b.data, b.len) == 0;
        ok = close(fd) == 0 && ok;
        ok = ok && rename(tmp, path) == 0;
        if (!ok)
            unlink(tmp);
    }
    if (!ok && named && (errno == ENOSPC || errno == EDQUOT)) {
        /* a full disk has no room for the copy: the record is rewritten where it is (its blocks
         * are there already; a kill mid-write leaves it damaged, which a delivery says) */
        fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        ok = fd >= 0 && rt_write_all(fd, b.data, b.len) == 0 && ftruncate(fd, (off_t)b.len) == 0;
        ok = fd >= 0 && close(fd) == 0 && ok;
    }
    if (b.data)
        explicit_bzero(b.data, b.len);
    rt_buf_free(&b);
    return ok;
}

void rt_record_remove(const char *spill_dir, const char *key)
{
    char path[4200];
    if (rt_record_path(spill_dir, key, "run", path, sizeof path))
        unlink(path);
}

void rt_record_clear(rt_run_record *r)
{
    free(r->reg_body);
    explicit_bzero(r, sizeof *r);
    r->done_seq = -1;
    r->doubt_seq = -1;
}

bool rt_record_load(const char *spill_dir, const char *key, rt_run_record *r, double *mtime)
{
    memset(r, 0, sizeof *r);
    r->done_seq = -1;
    r->doubt_seq = -1;
    char path[4200];
    if (!rt_record_path(spill_dir, key, "run", path, sizeof path)) {
        errno = EINVAL;
        return false;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        errno = errno == ENOENT ? ENOENT : EINVAL;
        return false;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && mtime)
        *mtime = (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec / 1e9;
    rt_buf b;
    rt_buf_init(&b, RECORD_MAX);
    ssize_t n = rt_read_fd_grow(fd, &b, RT_READ_TO_EOF);
    close(fd);
    bool ok = n > 0 && rt_buf_append(&b, "", 1) == 0 && strncmp(b.data, "rt-run 1\n", 9) == 0;
    for (char *line = ok ? b.data : NULL, *nl; ok && line && *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break;
        *nl = '\0';
        char *v = strchr(line, ' ');
        if (!v)
            continue;
        *v++ = '\0';
        if (strcmp(line, "register") == 0)
            ok = (r->reg_body = rt_strdup(v)) != NULL;
        else if (strcmp(line, "run_id") == 0)
            ok = rt_copy_str(r->run_id, sizeof r->run_id, v);
        else if (strcmp(line, "bucket") == 0)
            ok = rt_copy_str(r->target.bucket, sizeof r->target.bucket, v);
        else if (strcmp(line, "prefix") == 0)
            ok = rt_copy_str(r->target.prefix, sizeof r->target.prefix, v);
        else if (strcmp(line, "region") == 0)
            ok = rt_copy_str(r->target.region, sizeof r->target.region, v);
        else if (strcmp(line, "uploaded") == 0)
            r->uploaded = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(line, "done_seq") == 0)
            r->done_seq = strtoll(v, NULL, 10);
        else if (strcmp(line, "doubt_seq") == 0)
            r->doubt_seq = strtoll(v, NULL, 10);
        else if (strcmp(line, "closed") == 0)
            r->closed = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(line, "for") == 0)
            ok = rt_copy_str(r->fp, sizeof r->fp, v);
        else if (strcmp(line, "end") == 0) {
            int failed = 0;
            r->ended = sscanf(v, "%d %d %lf", &r->exit_code, &failed, &r->finished_unix) == 3;
            r->failed = failed != 0;
        } else if (strcmp(line, "finish_sent") == 0)
            r->finish_sent = true;
    }
    ok = ok && (r->reg_body || r->run_id[0]);
    if (b.data)
        explicit_bzero(b.data, b.len);
    rt_buf_free(&b);
    if (!ok) {
        rt_record_clear(r);
        errno = EINVAL;
    }
    return ok;
}

/* Whether st has a batch in a spill file. */
static bool has_spill(const rt_stream *st)
{
    for (const rt_batch *b = st->pending; b; b = b->next)
        if (b->spill)
            return true;
    return false;
}

/* Says once that st's record could not be had (what: "take the lock of", "write the record of"),
 * with errno's words; errno kept. Returns false. */
static bool record_failed(rt_stream *st, const char *what)
{
    int e = errno;
    if (!st->record_warned)
        rt_log(&st->lg, RT_LOG_WARN, "stream: cannot %s run %s in %s: %s", what, st->local_key, st->spill_dir,
               strerror(e));
    st->record_warned = true;
    errno = e;
    return false;
}

bool rt_record_save(rt_stream *st)
{
    if (!st->record_on && !has_spill(st))
        return true;
    if (st->record_fd < 0 && !rt_spill_dir_ready(st)) { /* as for spill files (said there) */
        st->record_on = false;
        return false;
    }
    if (st->record_fd < 0 && (st->record_fd = rt_record_lock(st->spill_dir, st->local_key)) < 0) {
        return record_failed(st, "take the lock of");
    }
    rt_run_record r;
    memset(&r, 0, sizeof r);
    rt_buf body = {0};
    bool ok = true;
    if (!st->registered) {
        ok = rt_upload_register_body(st, 0.0, &body) == RT_OK;
        r.reg_body = body.data;
    } else {
        rt_copy_str(r.run_id, sizeof r.run_id, st->run_id);
        r.target = st->target;
    }
    r.uploaded = st->nuris;
    r.done_seq = st->done_seq;
    rt_copy_str(r.fp, sizeof r.fp, st->fp);
    r.closed = st->delivering ? st->closed_total : st->next_seq;
    r.doubt_seq = st->pending && st->pending->doubt ? (long long)st->pending->seq : -1;
    r.ended = st->ended;
    r.exit_code = st->end_code;
    r.failed = st->end_failed;
    r.finished_unix = st->end_unix;
    r.finish_sent = st->finish_sent;
    ok = ok && rt_record_write(st->spill_dir, st->local_key, &r);
    rt_buf_free(&body);
    explicit_bzero(&r, sizeof r);
    if (!ok) {
        return record_failed(st, "write the record of");
    }
    st->record_on = true;
    return true;
}

void rt_record_end(rt_stream *st)
{
    bool done = st->finish_sent && !st->pending;
    if (done) {
        if (st->record_on)
            rt_record_remove(st->spill_dir, st->local_key);
        st->record_on = false;
    } else {
        /* also without spill files: a run registered with every batch in S3 whose finish call
         * failed, or one that never registered, is finished by a later delivery */
        st->record_on = true;
        rt_record_save(st);
    }
    if (st->record_fd >= 0)
        rt_record_unlock(st->spill_dir, st->local_key, st->record_fd, done);
    st->record_fd = -1;
}
