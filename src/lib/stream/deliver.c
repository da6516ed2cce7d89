/* deliver.c - the later delivery of runs left in the spill directory (docs/contracts.md §5): for
 * each run record ({key}.run, record.c) whose lock no one holds, registers the run with its
 * recorded body when it never was, uploads its spill files ({key}-{seq:06d}.csv.gz) in seq order
 * (objects numbered on from those it uploaded), and finishes it with its recorded end (exit
 * status, failed, finished_at). Called by rt_stream_deliver (`resource-tracker upload`), and on
 * a live run's stream thread once its own run is registered when its caller asked for it
 * (rt_stream_deliver_earlier: the hook the thread runs then).
 *
 * Exactly once: one deliverer at a time holds a run's lock (flock, taken without waiting, the
 * record read again under it); the record says which batch went last before its spill file is
 * removed, so a delivery cut short (SIGKILL) neither loses a batch nor sends one twice (a PUT
 * repeated after a lost reply writes the same key with the same bytes). A run whose tracker died
 * before its end (no end in its record) is finished as failed, exit code 137, at the last time
 * its record or spill files were written. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../net/curl.h"
#include "stream_int.h"

#define BATCH_MAX ((size_t)256 << 20) /* the most raw CSV a spill file may hold */

/* A bare stream for delivering one run: the options' network settings, no thread. NULL on no
 * memory. */
static rt_stream *bare_stream(const rt_stream_options *o, const rt_stream_net *net, const char *key)
{
    rt_stream *st = rt_stream_alloc(net, o->finish_timeout_secs);
    if (!st)
        return NULL;
    st->lg.fn = o->log;
    st->lg.user = o->log_user;
    st->interval = 60;
    st->token = rt_strdup(o->token);
    st->api_url = rt_strdup(o->api_url && *o->api_url ? o->api_url : RT_SENTINEL_DEFAULT_URL);
    st->endpoint = o->s3_endpoint_url && *o->s3_endpoint_url ? rt_strdup(o->s3_endpoint_url) : NULL;
    st->region = o->region && *o->region ? rt_strdup(o->region) : NULL;
    st->spill_dir = o->spill_dir && *o->spill_dir ? rt_strdup(o->spill_dir) : rt_spill_default_dir();
    st->csv_format = RT_FORMAT_CSV; /* until its first spill file says (check_file) */
    rt_copy_str(st->local_key, sizeof st->local_key, key);
    if (!st->token || !st->api_url || !st->spill_dir) {
        rt_stream_destroy(st);
        return NULL;
    }
    size_t n = strlen(st->api_url);
    while (n > 0 && st->api_url[n - 1] == '/')
        st->api_url[--n] = '\0';
    rt_stream_fingerprint(st->api_url, st->token, st->fp);
    st->t0 = rt_clock_now(NULL) - 2.0; /* no cloud wait */
    return st;
}

static int cmp_batch(const void *a, const void *b)
{
    unsigned x = (*(rt_batch *const *)a)->seq, y = (*(rt_batch *const *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Reads a spill file whole, checks it is a gzip of a CSV header and rows: rows counted into
 * b->rows. The header is the 32 columns, or those and the energy columns (a run with csv_energy,
 * or one spilled by 0.15 to 0.17, which always wrote them); its first file decides the run's
 * (*format), and a later one with the other header is damaged. False when it is missing or
 * damaged. */
static bool check_file(rt_batch *b, rt_format *format, bool first)
{
    int fd = open(b->spill, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    rt_buf gz, raw = {0};
    rt_buf_init(&gz, BATCH_MAX);
    ssize_t n = rt_read_fd_grow(fd, &gz, RT_READ_TO_EOF);
    close(fd);
    bool ok = n > 0 && rt_gunzip(gz.data, gz.len, BATCH_MAX, &raw) == RT_OK && raw.len > 0;
    const rt_format kinds[2] = {RT_FORMAT_CSV, RT_FORMAT_CSV_ENERGY};
    size_t hl = 0;
    bool found = false;
    for (size_t k = 0; ok && !found && k < 2; k++) {
        const char *hdr = rt_format_header(kinds[k]);
        hl = strlen(hdr);
        found = (first || *format == kinds[k]) && raw.len >= hl && memcmp(raw.data, hdr, hl) == 0;
        if (found)
            *format = kinds[k];
    }
    ok = ok && found && ((char *)raw.data)[raw.len - 1] == '\n';
    size_t rows = 0;
    for (size_t i = hl; ok && i < raw.len; i++)
        rows += ((char *)raw.data)[i] == '\n';
    b->rows = rows;
    b->gzlen = gz.len;
    rt_buf_free(&gz);
    rt_buf_free(&raw);
    return ok;
}

/* Whether name is a temporary file of run key's, left by a write that a kill cut short (a spill
 * file's "<key>-NNNNNN.csv.gz.XXXXXX" or the record's "<key>.run.XXXXXX", as mkostemp makes
 * them): its writer is gone, since the deliverer holds the run's lock. */
static bool stray_temp(const char *name, const char *key, size_t klen)
{
    size_t len = strlen(name);
    if (strncmp(name, key, klen) != 0)
        return false;
    const char *rest = name + klen;
    if (len == klen + 1 + 6 + 8 + 6 && rest[0] == '-' && strncmp(rest + 7, ".csv.gz.", 8) == 0)
        return strspn(rest + 1, "0123456789") == 6;
    return len == klen + 5 + 6 && strncmp(rest, ".run.", 5) == 0;
}

/* Warns once when batches the record counts as closed, past the last that went, have no spill
 * file (v: the files found, in seq order) nor one set aside as damaged: deleted by hand, or lost
 * with a tracker killed before it spilled them. Counted with the damaged. */
static void warn_missing(rt_stream *st, rt_batch *const *v, size_t n)
{
    unsigned missing = 0, first = 0;
    size_t i = 0;
    for (long long seq = st->done_seq + 1; seq < (long long)st->closed_total; seq++) {
        while (i < n && (long long)v[i]->seq < seq)
            i++;
        if (i < n && (long long)v[i]->seq == seq)
            continue;
        char aside[4300];
        struct stat sb;
        if (rt_pathf(aside, sizeof aside, "%s/%s-%06lld.csv.gz.damaged", st->spill_dir, st->local_key, seq) &&
            stat(aside, &sb) == 0)
            continue;
        if (!missing++)
            first = (unsigned)seq;
    }
    if (!missing)
        return;
    rt_log(&st->lg, RT_LOG_WARN, "deliver: run %s: %u batch file%s missing in %s (the first %s-%06u.csv.gz): deleted, "
           "or never spilled by a tracker that was killed; %s rows are lost, the rest goes", st->local_key, missing,
           missing == 1 ? " is" : "s are", st->spill_dir, st->local_key, first, missing == 1 ? "its" : "their");
    st->damaged += missing;
}

/* The run's spill files with a seq past done_seq onto st's pending list, in seq order (those at
 * or before it went already: removed; damaged ones skipped, counted, kept aside; temporary
 * files of writes cut short removed). */
static void load_batches(rt_stream *st, long long doubt_seq)
{
    DIR *d = opendir(st->spill_dir);
    if (!d)
        return;
    size_t klen = strlen(st->local_key), n = 0, cap = 0;
    rt_batch **v = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        char path[4200];
        if (stray_temp(name, st->local_key, klen) && rt_pathf(path, sizeof path, "%s/%s", st->spill_dir, name)) {
            unlink(path);
            continue;
        }
        if (len != klen + 1 + 6 + 7 || strncmp(name, st->local_key, klen) != 0 || name[klen] != '-' ||
            strcmp(name + len - 7, ".csv.gz") != 0)
            continue;
        char *end;
        unsigned long seq = strtoul(name + klen + 1, &end, 10);
        if (end != name + len - 7)
            continue;
        if (!rt_pathf(path, sizeof path, "%s/%s", st->spill_dir, name))
            continue;
        if ((long long)seq <= st->done_seq) { /* went before a cut: its removal did not happen */
            unlink(path);
            continue;
        }
        rt_batch *b = calloc(1, sizeof *b);
        if (!b || (n == cap && rt_grow(&v, &cap, n + 1, sizeof *v) < 0) || !(b->spill = rt_strdup(path))) {
            rt_batch_free(b);
            continue;
        }
        b->seq = (unsigned)seq;
        v[n++] = b;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, cmp_batch);
    warn_missing(st, v, n);
    for (size_t i = 0; i < n; i++) {
        rt_batch *b = v[i];
        b->doubt = (long long)b->seq == doubt_seq;
        if (!check_file(b, &st->csv_format, !st->pending)) {
            char aside[4300];
            bool moved = rt_pathf(aside, sizeof aside, "%s.damaged", b->spill) && rename(b->spill, aside) == 0;
            rt_log(&st->lg, RT_LOG_WARN, "deliver: spill file %s is missing or damaged; it is skipped%s", b->spill,
                   moved ? " and kept as .damaged" : "");
            st->damaged++;
            rt_batch_free(b);
            continue;
        }
        if (st->pending_tail)
            st->pending_tail->next = b;
        else
            st->pending = b;
        st->pending_tail = b;
        st->next_seq = b->seq + 1;
    }
    free(v);
}

/* Newest mtime of the run's files (its record's given), for a run that never ended. */
static double last_written(const rt_stream *st, double record_mtime)
{
    double t = record_mtime;
    for (const rt_batch *b = st->pending; b; b = b->next) {
        struct stat sb;
        if (stat(b->spill, &sb) == 0)
            t = fmax(t, (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec / 1e9);
    }
    return t;
}

/* The earlier of deadline and *stop (read anew: another thread moves it). */
static double end_of(double deadline, const _Atomic double *stop)
{
    return stop ? fmin(deadline, atomic_load(stop)) : deadline;
}

/* What became of a run a delivery looked at. */
typedef enum { RUN_DONE, RUN_LEFT, RUN_OTHERS, RUN_DAMAGED } run_fate;

/* Delivers the run of key (its lock held in fd), within the options' finish timeout, and not
 * past *stop (NULL: no such time; a live run's finish: its requests end then too). RUN_DONE when
 * nothing of it is left; RUN_OTHERS when its record names other credentials (left as it is);
 * RUN_DAMAGED when its record cannot be read (warned about; its files stay). */
static run_fate deliver_one(const rt_stream_options *o, const rt_stream_net *net, const char *key, int fd,
                            const _Atomic double *stop)
{
    rt_run_record r;
    double mtime = 0;
    if (!rt_record_load(o->spill_dir, key, &r, &mtime)) {
        if (errno == ENOENT) { /* delivered meanwhile */
            rt_record_unlock(o->spill_dir, key, fd, true);
            return RUN_DONE;
        }
        rt_logger lg = {.fn = o->log, .user = o->log_user};
        rt_log(&lg, RT_LOG_WARN,
               "deliver: the record of run %s in %s (%s.run) cannot be read: its batches cannot be delivered; they "
               "are kept", key, o->spill_dir, key);
        rt_record_unlock(o->spill_dir, key, fd, false);
        return RUN_DAMAGED;
    }
    rt_stream *st = bare_stream(o, net, key);
    if (!st) {
        rt_record_clear(&r);
        rt_record_unlock(o->spill_dir, key, fd, false);
        return RUN_LEFT;
    }
    if (strcmp(r.fp, st->fp) != 0) { /* another token or API URL: theirs to send, not ours */
        rt_record_clear(&r);
        rt_record_unlock(o->spill_dir, key, fd, false);
        rt_stream_destroy(st);
        return RUN_OTHERS;
    }
    st->record_fd = fd;
    st->record_on = true;
    st->delivering = true;
    st->reg_body = r.reg_body;
    r.reg_body = NULL;
    st->registered = !st->reg_body;
    rt_copy_str(st->run_id, sizeof st->run_id, r.run_id);
    st->target = r.target;
    rt_copy_str(st->target.endpoint, sizeof st->target.endpoint, st->endpoint ? st->endpoint : "");
    if (!st->target.region[0])
        rt_copy_str(st->target.region, sizeof st->target.region, st->region ? st->region : "eu-central-1");
    st->creds.expires_unix = 0; /* none kept on disk: fresh ones before the first PUT */
    st->done_seq = r.done_seq;
    st->finish_sent = r.finish_sent;
    st->closed_total = r.closed;
    bool ok = true;
    for (size_t i = 0; ok && st->registered && i < r.uploaded; i++) {
        char k[1400];
        ok = rt_pathf(k, sizeof k, "%s/%06zu.csv.gz", st->run_id, i) && rt_upload_add_uri(st, k);
    }
    load_batches(st, r.doubt_seq);
    st->ended = true;
    st->end_code = r.ended ? r.exit_code : 137;
    st->end_failed = r.ended ? r.failed : true;
    st->end_unix = r.ended ? r.finished_unix : last_written(st, mtime);
    rt_record_clear(&r);
    if (!ok) {
        rt_record_end(st);
        rt_stream_destroy(st);
        return RUN_LEFT;
    }
    double deadline = rt_clock_now(NULL) + st->finish_timeout;
    double reserve = fmin(st->finish_timeout * 0.3, 2.0);
    if (!st->registered && end_of(deadline, stop) - reserve > rt_clock_now(NULL)) {
        st->reg_tries = 1; /* its warnings say "registration try failed", once each */
        rt_upload_register(st, fmax(end_of(deadline, stop) - reserve - rt_clock_now(NULL), 0.05));
        if (st->registered)
            rt_log(&st->lg, RT_LOG_INFO, "deliver: run %s registered as %s", key, st->run_id);
    }
    if (st->registered) {
        double until;
        while (st->pending && rt_clock_now(NULL) < (until = end_of(deadline, stop) - reserve)) {
            rt_upload_pending(st, until, 0.2, 1.0);
            if (st->pending && st->s3_next < until) {
                rt_upload_say_wait(st, "S3", st->s3_why, until);
                rt_clock_sleep_until(NULL, st->s3_next); /* at most 1 s */
            }
            else if (st->pending)
                break;
        }
        if (!st->finish_sent && rt_clock_now(NULL) < end_of(deadline, stop))
            rt_upload_finish(st, st->end_code, st->end_failed, st->end_unix,
                             fmax(end_of(deadline, stop) - rt_clock_now(NULL), 0.05));
    }
    uint64_t rows = rt_batch_pending_rows(st);
    bool done = st->finish_sent && !st->pending;
    if (done)
        rt_log(&st->lg, RT_LOG_INFO, "deliver: run %s delivered as run %s (%zu object%s in S3)", key, st->run_id,
               st->nuris, st->nuris == 1 ? "" : "s");
    else
        rt_log(&st->lg, RT_LOG_WARN, "deliver: run %s is not delivered yet (%llu rows left in %s; %s)", key,
               (unsigned long long)rows, st->spill_dir, rt_handle_err_get(&st->err, &st->mu));
    rt_record_end(st); /* releases the lock; removes the record when done */
    rt_stream_destroy(st);
    return done ? RUN_DONE : RUN_LEFT;
}

/* Whether dir holds the record of key. */
static bool has_record(const char *dir, const char *key)
{
    char path[4200];
    struct stat sb;
    return rt_record_path(dir, key, "run", path, sizeof path) && stat(path, &sb) == 0;
}

/* Delivers the runs recorded in opts' spill directory (each within opts' finish timeout), but not
 * skip_key's; stops starting one once rt_mono_secs() passes *stop (NULL: never). Counts runs
 * delivered and left. RT_OK when none is left. */
static rt_error deliver_all(const rt_stream_options *o, const rt_stream_net *net, const char *skip_key,
                           const _Atomic double *stop, unsigned *delivered, unsigned *left)
{
    *delivered = *left = 0;
    char *dirs[64];
    size_t ndirs = 0;
    rt_spill_dirs(o, dirs, RT_ARRAY_LEN(dirs), &ndirs);
    if (!ndirs)
        return RT_ERR_NOMEM;
    rt_logger lg = {.fn = o->log, .user = o->log_user};
    unsigned others = 0;
    for (size_t di = 0; di < ndirs; di++) {
        rt_stream_options oo = *o;
        oo.spill_dir = dirs[di];
        char **keys;
        size_t stranded, n = rt_spill_run_keys(dirs[di], &keys, &stranded);
        for (size_t i = 0; i < n; i++) {
            if (skip_key && strcmp(keys[i], skip_key) == 0)
                continue;
            if (i >= n - stranded) { /* batches with no record: a live run between its first spill and its
                                      * record (its lock held), or a record lost */
                int fd = rt_record_lock(dirs[di], keys[i]);
                if (fd >= 0 && !has_record(dirs[di], keys[i])) {
                    rt_log(&lg, RT_LOG_WARN, "deliver: run %s in %s has spill files but no record (%s.run): they "
                           "cannot be delivered; they are kept", keys[i], dirs[di], keys[i]);
                    rt_record_unlock(dirs[di], keys[i], fd, true);
                } else {
                    rt_record_unlock(dirs[di], keys[i], fd, false);
                }
                (*left)++;
                continue;
            }
            if (stop && rt_mono_secs() >= atomic_load(stop)) {
                (*left)++;
                continue;
            }
            int fd = rt_record_lock(dirs[di], keys[i]);
            if (fd < 0) { /* a live run, or another deliverer: theirs */
                (*left)++;
                continue;
            }
            switch (deliver_one(&oo, net, keys[i], fd, stop)) {
            case RUN_DONE:
                (*delivered)++;
                break;
            case RUN_OTHERS:
                others++;
                (*left)++;
                break;
            default:
                (*left)++;
            }
        }
        for (size_t i = 0; i < n; i++)
            free(keys[i]);
        free(keys);
    }
    if (others)
        rt_log(&lg, RT_LOG_WARN, "deliver: %u run%s left as %s: made with another token or API URL, %s delivered "
               "only with %s own (`resource-tracker upload --list` shows them)", others, others == 1 ? "" : "s",
               others == 1 ? "it is" : "they are", others == 1 ? "it is" : "they are", others == 1 ? "its" : "their");
    for (size_t i = 0; i < ndirs; i++)
        free(dirs[i]);
    return *left ? RT_ERR_IO : RT_OK;
}

rt_error rt_stream_deliver(const rt_stream_options *opts, unsigned *delivered, unsigned *left)
{
    unsigned dd = 0, ll = 0;
    if (delivered)
        *delivered = 0;
    if (left)
        *left = 0;
    if (!opts || opts->struct_size < sizeof(size_t) || !opts->token || !*opts->token)
        return RT_ERR_INVALID;
    rt_stream_options o = RT_STREAM_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    char err[256];
    if (rt_fetch_available(err, sizeof err) != RT_OK || rt_gzip_available(err, sizeof err) != RT_OK)
        return RT_ERR_UNSUPPORTED;
    rt_error e = deliver_all(&o, &rt_stream_real_net, NULL, NULL, &dd, &ll);
    if (delivered)
        *delivered = dd;
    if (left)
        *left = ll;
    return e;
}

/* The live run's pass over the older runs recorded in its spill directory (not its own), made
 * on its thread once its run is registered; it stops starting one when the finish starts (the
 * thread's requests end then too: its abort time). */
static void deliver_earlier(rt_stream *st)
{
    rt_stream_options o = RT_STREAM_OPTIONS_INIT;
    o.api_url = st->api_url;
    o.token = st->token;
    o.s3_endpoint_url = st->endpoint;
    o.region = st->region;
    o.spill_dir = st->spill_dir;
    o.spill_fallback_dir = st->spill_fallback;
    o.finish_timeout_secs = fmax(st->finish_timeout, 2 * st->net_timeout);
    o.log = st->lg.fn;
    o.log_user = st->lg.user;
    unsigned delivered = 0, left = 0;
    deliver_all(&o, &st->net, st->local_key, &st->abort_at, &delivered, &left);
    if (delivered)
        rt_log(&st->lg, RT_LOG_INFO, "stream: delivered %u earlier run%s", delivered, delivered == 1 ? "" : "s");
}

rt_error rt_stream_deliver_earlier(rt_stream *st)
{
    if (!st)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&st->mu);
    bool ok = !st->once_asked && !st->finishing;
    if (ok) {
        st->once_asked = true;
        st->once_registered = deliver_earlier;
    }
    pthread_mutex_unlock(&st->mu);
    return ok ? RT_OK : RT_ERR_INVALID;
}
