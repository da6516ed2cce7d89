/* recorded.c - any recorded run read back (rt_run_read): a saved tracker snapshot (known by its
 * content, gzipped or not) through rt_tracker_load, anything else (gzipped or not) through the
 * reader, which streams it; every record fed through a pipeline (its figures kept as a live
 * sample's are) to the caller's statistics and report. It sits above both, which is why it
 * lives with the tracker. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../core/core.h"
#include "../core/gzip.h"
#include "../pipeline/pipeline.h"

/* The caller's log, and where the last error it was given is kept. */
typedef struct relay {
    rt_log_fn log;
    void *user;
    rt_run_read_info *info;
} relay;

static void relay_log(void *user, rt_log_level level, const char *msg)
{
    relay *r = user;
    if (level >= RT_LOG_ERROR) {
        snprintf(r->info->message, sizeof r->info->message, "%s", msg);
        r->info->logged = r->log != NULL;
    }
    if (r->log)
        r->log(r->user, level, msg);
}

static void why(rt_run_read_info *info, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(rt_run_read_info *info, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(info->message, sizeof info->message, fmt, ap);
    va_end(ap);
    info->logged = 0;
}

/* Whether head (NUL-terminated) opens a JSON document with a "metadata" member. */
static bool opens_with_metadata(const char *head)
{
    const char *p = head;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p++ != '{')
        return false;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return strncmp(p, "\"metadata\"", 10) == 0;
}

/* Whether path holds a saved tracker snapshot (rt_tracker_save, or the Python tracker's
 * dump/dumps): a JSON document opening with "metadata", gzipped or not (a gzipped file's first
 * plain bytes tell; any other gzip file is a recorded run for the reader, which streams it).
 * stdin is never one (it cannot be read twice). */
static bool is_snapshot(const char *path)
{
    if (strcmp(path, "-") == 0)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char head[64];
    ssize_t n;
    do
        n = read(fd, head, sizeof head - 1);
    while (n < 0 && errno == EINTR);
    rt_gunzip_stream *z = NULL;
    if (n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b &&
        rt_gunzip_stream_new(fd, head, (size_t)n, &z) == RT_OK) {
        ssize_t k;
        n = 0;
        while (n < (ssize_t)sizeof head - 1 &&
               (k = rt_gunzip_stream_read(z, head + n, sizeof head - 1 - (size_t)n)) > 0)
            n += k;
        rt_gunzip_stream_free(z);
    }
    close(fd);
    head[n > 0 ? n : 0] = '\0';
    return opens_with_metadata(head);
}

/* A pipeline into the statistics and the report: the records read back are kept as a live
 * sample's figures are, so the statistics see what they would have seen live. */
static rt_error feeding(rt_stats *const *st, size_t nst, rt_report *rep, rt_pipeline **out)
{
    rt_error err = rt_pipeline_new(NULL, out);
    rt_sink *s;
    for (size_t i = 0; i < nst && err == RT_OK; i++)
        if ((err = rt_stats_sink_new(st[i], &s)) == RT_OK)
            err = rt_pipeline_attach(*out, s);
    if (err == RT_OK && rep && (err = rt_report_sink_new(rep, &s)) == RT_OK)
        err = rt_pipeline_attach(*out, s);
    return err;
}

/* A snapshot's samples through the same statistics and report as a recorded run's. */
static rt_error read_snapshot(const char *path, relay *lg, rt_pipeline *p, rt_run_read_info *info)
{
    info->format = "snapshot";
    rt_tracker *t = NULL;
    rt_error err = rt_tracker_load(path, relay_log, lg, &t);
    if (err != RT_OK) {
        why(info, "%s: cannot read the snapshot: %s", path, rt_strerror(err));
        return err;
    }
    info->opened = 1;
    uint64_t first = rt_tracker_first(t), end = rt_tracker_count(t);
    rt_record rec;
    for (uint64_t i = first; i < end && err == RT_OK; i++) {
        if (rt_tracker_record(t, i, &rec, sizeof rec) != RT_OK)
            continue;
        err = rt_pipeline_add_record(p, &rec, sizeof rec);
        info->records++;
    }
    rt_tracker_free(t);
    if (err != RT_OK) {
        why(info, "%s: cannot read the snapshot: %s", path, rt_strerror(err));
        return err;
    }
    if (end == first) {
        why(info, "%s: no valid sample in the snapshot", path);
        return RT_ERR_PARSE;
    }
    return RT_OK;
}

static rt_error read_records(const char *path, relay *lg, rt_pipeline *p, rt_run_read_info *info)
{
    rt_reader_options ro = RT_READER_OPTIONS_INIT;
    ro.log = relay_log;
    ro.log_user = lg;
    rt_reader *r = NULL;
    rt_error err = rt_reader_open(path, &ro, &r);
    if (err != RT_OK) { /* the reader has said why, except for these */
        if (err == RT_ERR_NOMEM || err == RT_ERR_INVALID || !info->message[0])
            why(info, "%s: cannot read: %s", path, rt_strerror(err));
        return err;
    }
    info->opened = 1;
    info->format = rt_reader_format(r);
    const rt_record *rec;
    while ((err = rt_reader_next(r, &rec)) == RT_OK && rec && (err = rt_pipeline_add_record(p, rec, sizeof *rec)) == RT_OK)
        ;
    info->records = rt_reader_records(r);
    info->skipped = rt_reader_skipped(r);
    rt_reader_free(r);
    if (err != RT_OK) { /* a read error or a line too long: the reader has said why, except for these */
        if ((err != RT_ERR_IO && err != RT_ERR_PARSE) || !info->message[0])
            why(info, "%s: cannot read: %s", path, rt_strerror(err));
        return err;
    }
    if (info->records == 0) {
        why(info, "%s: no valid sample in the file", path);
        return RT_ERR_PARSE;
    }
    return RT_OK;
}

rt_error rt_run_read(const char *path, const rt_run_read_options *opts, rt_stats *const *stats, size_t nstats,
                     rt_report *report, rt_run_read_info *info)
{
    rt_run_read_options o = RT_RUN_READ_OPTIONS_INIT;
    rt_run_read_info got = {.struct_size = sizeof got};
    if (info && info->struct_size < sizeof(size_t))
        return RT_ERR_INVALID;
    if (!path || (nstats > 0 && !stats) || rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    for (size_t i = 0; i < nstats; i++)
        if (!stats[i])
            return RT_ERR_INVALID;
    relay lg = {.log = o.log, .user = o.log_user, .info = &got};
    rt_pipeline *p = NULL;
    rt_error err = feeding(stats, nstats, report, &p);
    if (err == RT_OK)
        err = is_snapshot(path) ? read_snapshot(path, &lg, p, &got) : read_records(path, &lg, p, &got);
    else
        why(&got, "%s: cannot read: %s", path, rt_strerror(err));
    rt_pipeline_free(p);
    if (err == RT_OK)
        got.message[0] = '\0';
    if (info) { /* only what the caller's struct holds */
        size_t n = info->struct_size < sizeof got ? info->struct_size : sizeof got;
        got.struct_size = info->struct_size;
        memcpy(info, &got, n);
    }
    return err;
}
