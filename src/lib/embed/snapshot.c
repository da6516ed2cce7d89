/* snapshot.c - saving a run in the Python resource-tracker 0.4's snapshot layout (its
 * ResourceTracker.snapshot, metadata.version 1; docs/contracts.md §12): rt_tracker_save writes
 * the metadata (the caller's extra_json merged in: its "metadata" members replace ours but
 * "version", its other members go to the top level), the kept rows as that tracker's
 * process_metrics / system_metrics rows (its names and units: kB, GiB, seconds in the
 * interval, so that the Python tracker's load reads the file; with RT_SAVE_PY05 0.5's names
 * and units: memory_mib, MiB, GB) and "columns": every store
 * column at full precision (the shortest decimal that reads back as the same double; NaN as
 * null), which rt_tracker_load prefers; and, when the run had phase marks, "phases": the
 * marks taken (each with the index among the saved rows of the sample it came before) and the
 * refusals that happened before the pipeline. The JSON is built by hand into a buffer flushed to fd
 * (or to gzip) every 256 KiB. Also rt_tracker_saved_info. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/core.h"
#include "../core/gzip.h"
#include "../core/lasterr.h"
#include "../core/ob.h"
#include "../core/out.h"
#include "../pipeline/pipeline.h"
#include "snapshot.h"
#include "tracker_int.h"

#define SNAP_FLUSH ((size_t)1 << 18) /* bytes gathered before a write / compression */
#define SNAP_COPY_ROWS 1024u         /* rows copied per lock taken while saving (368 KiB) */

typedef struct wr {
    rt_buf b;
    rt_out out;
    rt_gzip *z;   /* NULL: plain */
    rt_error err; /* the first failure; nothing more is written after it */
    int saved_errno;
} wr;

/* Writes len bytes of p to the output: RT_OK, or RT_ERR_IO with w->saved_errno set. */
static rt_error w_write(wr *w, const void *p, size_t len)
{
    if (rt_out_write(&w->out, p, len) == 0)
        return RT_OK;
    w->saved_errno = errno;
    return RT_ERR_IO;
}

static void w_flush(wr *w)
{
    if (w->err == RT_OK && w->b.len > 0)
        w->err = w->z ? rt_gzip_write(w->z, w->b.data, w->b.len) : w_write(w, w->b.data, w->b.len);
    w->b.len = 0;
}

static void w_put(wr *w, const char *s, size_t n)
{
    if (w->err != RT_OK)
        return;
    if (rt_buf_append(&w->b, s, n) < 0) {
        w->err = RT_ERR_NOMEM;
        return;
    }
    if (w->b.len >= SNAP_FLUSH)
        w_flush(w);
}

static void w_lit(wr *w, const char *s)
{
    w_put(w, s, strlen(s));
}

/* v in the shortest decimal that strtod reads back as v (null when not finite). A value with
 * at most 9 decimals is checked without strtod: for an integer r below 2^53 and d <= 9,
 * r / 10^d is one correctly rounded division, the double that the text "r/10^d" reads as. */
static size_t fmt_shortest(char *out, size_t cap, double v)
{
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (!isfinite(v))
        return (size_t)snprintf(out, cap, "null");
    if (v == 0)
        return (size_t)snprintf(out, cap, signbit(v) ? "-0.0" : "0");
    double a = fabs(v);
    for (int d = 0; d <= 9 && a * p10[d] < 9e15; d++) { /* rt_ob_fixed's exact range */
        double r = (double)llround(a * p10[d]);         /* as rt_ob_fixed rounds */
        if (r / p10[d] != a)
            continue;
        rt_ob o = {.buf = out, .cap = cap};
        rt_ob_fixed(&o, v, d, "null");
        if (o.len < cap) {
            out[o.len] = '\0';
            return o.len;
        }
        break;
    }
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v) /* both in the current locale */
            break;
    }
    for (char *c = out; *c; c++) /* a locale's decimal comma: JSON wants a point */
        if (!(*c >= '0' && *c <= '9') && *c != 'e' && *c != '+' && *c != '-')
            *c = '.';
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static void w_short(wr *w, double v)
{
    char tmp[48];
    w_put(w, tmp, fmt_shortest(tmp, sizeof tmp, v));
}

/* v rounded to dec decimals (trailing zeros trimmed), null when not finite; from 1e15 on, as
 * w_short (fixed notation would write an integer too long for JSON parsers, jansson's too).
 * Rounded as Python's round(v, dec) rounds, which the frames of the same rows use: the double's
 * exact value, a tie to even (printf's %.*f; 129.90625 is 129.9062 in both, where rt_ob_fixed
 * would write 129.9063) */
static void w_dec(wr *w, double v, int dec)
{
    if (fabs(v) >= 1e15 && isfinite(v)) {
        w_short(w, v);
        return;
    }
    if (!isfinite(v)) {
        w_lit(w, "null");
        return;
    }
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.*f", dec, v);
    if (n <= 0 || (size_t)n >= sizeof tmp) {
        w_short(w, v);
        return;
    }
    if (strchr(tmp, '.')) { /* trailing zeros, then a bare point, trimmed */
        while (n > 0 && tmp[n - 1] == '0')
            n--;
        if (n > 0 && tmp[n - 1] == '.')
            n--;
    }
    if (n == 2 && tmp[0] == '-' && tmp[1] == '0') /* -0 rounds to 0 */
        tmp[0] = '0', n = 1;
    w_put(w, tmp, (size_t)n);
}

/* v rounded to an integer (null when not finite) */
static void w_int(wr *w, double v)
{
    if (isfinite(v) && fabs(v) < 9e15)
        w_dec(w, nearbyint(v), 0);
    else
        w_short(w, isfinite(v) ? nearbyint(v) : v);
}

/* ---- the Python tracker 0.4's rows ----------------------------------------------------------- */

/* F_KIB: MiB written as integer kB; F_GPU_*: as F_INT / F_DEC, but 0 for null (no GPU), as the
 * Python tracker writes it and its statistics expect; "columns" keeps the null */
typedef enum out_fmt { F_INT, F_DEC, F_KIB, F_GPU_INT, F_GPU_DEC } out_fmt;

typedef struct field {
    const char *key;
    int col;     /* -1: the process' pid (fixed) */
    out_fmt how;
    int dec;     /* F_DEC: decimals */
    double div;  /* the store's figure divided by this (1: as is) */
} field;

static const field PROC_FIELDS[] = {
    {"pid", RT_COL_PROC_PID, F_INT, 0, 1},
    {"children", RT_COL_PROC_CHILDREN, F_INT, 0, 1},
    {"utime", RT_COL_PROC_UTIME, F_DEC, 6, 1},
    {"stime", RT_COL_PROC_STIME, F_DEC, 6, 1},
    {"cpu_usage", RT_COL_PROC_CORES, F_DEC, 4, 1},
    {"memory", RT_COL_PROC_PSS_MIB, F_KIB, 0, 1},
    {"read_bytes", RT_COL_PROC_READ_BYTES, F_INT, 0, 1},
    {"write_bytes", RT_COL_PROC_WRITE_BYTES, F_INT, 0, 1},
    {"gpu_usage", RT_COL_PROC_GPU_USAGE, F_GPU_DEC, 4, 1},
    {"gpu_vram", RT_COL_PROC_GPU_VRAM_MIB, F_GPU_DEC, 4, 1},
    {"gpu_utilized", RT_COL_PROC_GPU_UTILIZED, F_GPU_INT, 0, 1},
};

static const field SYS_FIELDS[] = {
    {"processes", RT_COL_CPU_RUNNABLE, F_INT, 0, 1},
    {"utime", RT_COL_CPU_UTIME, F_DEC, 6, 1},
    {"stime", RT_COL_CPU_STIME, F_DEC, 6, 1},
    {"cpu_usage", RT_COL_CPU_CORES, F_DEC, 4, 1},
    {"memory_free", RT_COL_MEM_FREE_MIB, F_KIB, 0, 1},
    {"memory_used", RT_COL_MEM_USED_MIB, F_KIB, 0, 1},
    {"memory_buffers", RT_COL_MEM_BUFFERS_MIB, F_KIB, 0, 1},
    {"memory_cached", RT_COL_MEM_CACHED_MIB, F_KIB, 0, 1},
    {"memory_active", RT_COL_MEM_ACTIVE_MIB, F_KIB, 0, 1},
    {"memory_inactive", RT_COL_MEM_INACTIVE_MIB, F_KIB, 0, 1},
    {"disk_read_bytes", RT_COL_DISK_READ_BYTES, F_INT, 0, 1},
    {"disk_write_bytes", RT_COL_DISK_WRITE_BYTES, F_INT, 0, 1},
    {"disk_space_total_gb", RT_COL_DISK_SPACE_TOTAL_BYTES, F_DEC, 2, RT_SNAP_GIB},
    {"disk_space_used_gb", RT_COL_DISK_SPACE_USED_BYTES, F_DEC, 2, RT_SNAP_GIB},
    {"disk_space_free_gb", RT_COL_DISK_SPACE_FREE_BYTES, F_DEC, 2, RT_SNAP_GIB},
    {"net_recv_bytes", RT_COL_NET_RECV_BYTES, F_INT, 0, 1},
    {"net_sent_bytes", RT_COL_NET_SENT_BYTES, F_INT, 0, 1},
    {"gpu_usage", RT_COL_GPU_USAGE, F_GPU_DEC, 4, 1},
    {"gpu_vram", RT_COL_GPU_VRAM_MIB, F_GPU_DEC, 4, 1},
    {"gpu_utilized", RT_COL_GPU_UTILIZED, F_GPU_INT, 0, 1},
};

/* The same rows with the Python tracker 0.5's names and units (RT_SAVE_PY05): memory and VRAM
 * in MiB with 4 decimals, disk space in GB of 1000**3 bytes, the process' disk_*_bytes. */
static const field PROC_FIELDS_05[] = {
    {"pid", RT_COL_PROC_PID, F_INT, 0, 1},
    {"children", RT_COL_PROC_CHILDREN, F_INT, 0, 1},
    {"utime", RT_COL_PROC_UTIME, F_DEC, 6, 1},
    {"stime", RT_COL_PROC_STIME, F_DEC, 6, 1},
    {"cpu_usage", RT_COL_PROC_CORES, F_DEC, 4, 1},
    {"memory_mib", RT_COL_PROC_PSS_MIB, F_DEC, 4, 1},
    {"disk_read_bytes", RT_COL_PROC_READ_BYTES, F_INT, 0, 1},
    {"disk_write_bytes", RT_COL_PROC_WRITE_BYTES, F_INT, 0, 1},
    {"gpu_usage", RT_COL_PROC_GPU_USAGE, F_GPU_DEC, 4, 1},
    {"gpu_vram_mib", RT_COL_PROC_GPU_VRAM_MIB, F_GPU_DEC, 4, 1},
    {"gpu_utilized", RT_COL_PROC_GPU_UTILIZED, F_GPU_INT, 0, 1},
};

static const field SYS_FIELDS_05[] = {
    {"processes", RT_COL_CPU_RUNNABLE, F_INT, 0, 1},
    {"utime", RT_COL_CPU_UTIME, F_DEC, 6, 1},
    {"stime", RT_COL_CPU_STIME, F_DEC, 6, 1},
    {"cpu_usage", RT_COL_CPU_CORES, F_DEC, 4, 1},
    {"memory_free_mib", RT_COL_MEM_FREE_MIB, F_DEC, 4, 1},
    {"memory_used_mib", RT_COL_MEM_USED_MIB, F_DEC, 4, 1},
    {"memory_buffers_mib", RT_COL_MEM_BUFFERS_MIB, F_DEC, 4, 1},
    {"memory_cached_mib", RT_COL_MEM_CACHED_MIB, F_DEC, 4, 1},
    {"memory_active_mib", RT_COL_MEM_ACTIVE_MIB, F_DEC, 4, 1},
    {"memory_inactive_mib", RT_COL_MEM_INACTIVE_MIB, F_DEC, 4, 1},
    {"disk_read_bytes", RT_COL_DISK_READ_BYTES, F_INT, 0, 1},
    {"disk_write_bytes", RT_COL_DISK_WRITE_BYTES, F_INT, 0, 1},
    {"disk_space_total_gb", RT_COL_DISK_SPACE_TOTAL_BYTES, F_DEC, 2, RT_SNAP_GB},
    {"disk_space_used_gb", RT_COL_DISK_SPACE_USED_BYTES, F_DEC, 2, RT_SNAP_GB},
    {"disk_space_free_gb", RT_COL_DISK_SPACE_FREE_BYTES, F_DEC, 2, RT_SNAP_GB},
    {"net_recv_bytes", RT_COL_NET_RECV_BYTES, F_INT, 0, 1},
    {"net_sent_bytes", RT_COL_NET_SENT_BYTES, F_INT, 0, 1},
    {"gpu_usage", RT_COL_GPU_USAGE, F_GPU_DEC, 4, 1},
    {"gpu_vram_mib", RT_COL_GPU_VRAM_MIB, F_GPU_DEC, 4, 1},
    {"gpu_utilized", RT_COL_GPU_UTILIZED, F_GPU_INT, 0, 1},
};

/* The kept rows from first on, n of them: copied SNAP_COPY_ROWS at a time under the lock into
 * the caller's buffer (the store is pinned: none is dropped meanwhile). */
typedef struct rows_src {
    rt_tracker *t;
    uint64_t first;
    size_t n;
    double *chunk; /* SNAP_COPY_ROWS rows */
} rows_src;

/* Rows i .. i + SNAP_COPY_ROWS (or to n) into src->chunk; returns how many. */
static size_t copy_chunk(const rows_src *src, size_t i)
{
    size_t k = 0;
    pthread_mutex_lock(&src->t->mu);
    for (; k < SNAP_COPY_ROWS && i + k < src->n; k++)
        if (rt_store_row(src->t->store, src->first + i + k, src->chunk + k * RT_NCOLS) < 0)
            break; /* cannot happen while pinned */
    pthread_mutex_unlock(&src->t->mu);
    return k;
}

static void w_rows(wr *w, const rows_src *src, size_t n, const field *f, size_t nf)
{
    w_lit(w, "[");
    for (size_t i = 0, got = 0, base = 0; i < n && w->err == RT_OK; i++) {
        if (i == base + got) {
            base = i;
            if (!(got = copy_chunk(src, i)))
                break;
        }
        const double *row = src->chunk + (i - base) * RT_NCOLS;
        w_lit(w, i ? ",{\"timestamp\":" : "{\"timestamp\":");
        w_dec(w, row[RT_COL_TIMESTAMP], 3);
        for (size_t k = 0; k < nf; k++) {
            double v = row[f[k].col] / f[k].div;
            if ((f[k].how == F_GPU_INT || f[k].how == F_GPU_DEC) && isnan(v))
                v = 0;
            w_lit(w, ",\"");
            w_lit(w, f[k].key);
            w_lit(w, "\":");
            if (f[k].how == F_DEC || f[k].how == F_GPU_DEC)
                w_dec(w, v, f[k].dec);
            else
                w_int(w, f[k].how == F_KIB ? v * RT_SNAP_KIB_PER_MIB : v);
        }
        w_lit(w, "}");
    }
    w_lit(w, "]");
}

static void w_columns(wr *w, const rows_src *src)
{
    w_lit(w, "{");
    for (int c = 0; c < RT_NCOLS && w->err == RT_OK; c++) {
        w_lit(w, c ? ",\"" : "\"");
        w_lit(w, rt_column_name(c));
        w_lit(w, "\":[");
        for (size_t i = 0; i < src->n && w->err == RT_OK;) {
            pthread_mutex_lock(&src->t->mu);
            size_t got = rt_store_column(src->t->store, c, src->first + i,
                                         src->n - i < SNAP_COPY_ROWS ? src->n - i : SNAP_COPY_ROWS, src->chunk);
            pthread_mutex_unlock(&src->t->mu);
            if (!got)
                break; /* cannot happen while pinned */
            for (size_t k = 0; k < got; k++) {
                if (i + k)
                    w_put(w, ",", 1);
                w_short(w, src->chunk[k]);
            }
            i += got;
        }
        w_lit(w, "]");
    }
    w_lit(w, "}");
}

/* ---- metadata and the caller's members -------------------------------------------------------- */

/* val as compact JSON (null for NULL) */
static void w_json(wr *w, const json_t *val)
{
    if (!val) {
        w_lit(w, "null");
        return;
    }
    char *s = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (s)
        w_lit(w, s);
    else if (w->err == RT_OK)
        w->err = RT_ERR_NOMEM;
    free(s);
}

/* The members of obj (an object) but those in skip[] (NULL ended), each after a comma. */
static void w_members(wr *w, json_t *obj, const char *const *skip)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        bool skipped = false;
        for (size_t i = 0; skip[i]; i++)
            skipped |= strcmp(skip[i], key) == 0;
        if (skipped)
            continue;
        json_t *k = json_string(key);
        if (!k && w->err == RT_OK)
            w->err = RT_ERR_NOMEM;
        w_lit(w, ",");
        w_json(w, k);
        w_lit(w, ":");
        w_json(w, val);
        json_decref(k);
    }
}

/* key:value for one of our metadata members, unless the caller's metadata has the key */
static bool w_meta_key(wr *w, json_t *extra_meta, const char *key, bool first)
{
    if (extra_meta && json_object_get(extra_meta, key))
        return false;
    w_lit(w, first ? "\"" : ",\"");
    w_lit(w, key);
    w_lit(w, "\":");
    return true;
}

static void w_metadata(wr *w, const rt_snap_meta *m, json_t *extra)
{
    json_t *em = extra ? json_object_get(extra, "metadata") : NULL;
    if (em && !json_is_object(em))
        em = NULL;
    bool server = extra && json_object_get(extra, "server_info") && !json_is_null(json_object_get(extra, "server_info"));
    bool cloud = extra && json_object_get(extra, "cloud_info") && !json_is_null(json_object_get(extra, "cloud_info"));
    w_lit(w, "{\"version\":1");
    if (w_meta_key(w, em, "resource_tracker", false))
        w_lit(w, "{\"version\":\"" RT_VERSION "\",\"implementation\":\"libresource-tracker\"}");
    if (w_meta_key(w, em, "pid", false)) {
        if (m->pid)
            w_short(w, (double)m->pid);
        else
            w_lit(w, "null");
    }
    if (w_meta_key(w, em, "children", false))
        w_lit(w, m->children ? "true" : "false");
    if (w_meta_key(w, em, "interval", false))
        w_short(w, m->interval);
    if (w_meta_key(w, em, "method", false))
        w_lit(w, "null");
    if (w_meta_key(w, em, "autostart", false))
        w_lit(w, "false");
    if (w_meta_key(w, em, "track_processes", false))
        w_lit(w, m->pid ? "true" : "false");
    if (w_meta_key(w, em, "track_system", false))
        w_lit(w, "true");
    if (w_meta_key(w, em, "discover_server", false))
        w_lit(w, server ? "true" : "false");
    if (w_meta_key(w, em, "discover_cloud", false))
        w_lit(w, cloud ? "true" : "false");
    if (w_meta_key(w, em, "start_time", false))
        w_short(w, m->start);
    if (w_meta_key(w, em, "stop_time", false))
        w_short(w, m->stop);
    if (w_meta_key(w, em, "duration", false))
        w_short(w, round((m->stop - m->start + m->interval) * 100.0) / 100.0);
    if (em) {
        static const char *const skip[] = {"version", NULL};
        w_members(w, em, skip);
    }
    w_lit(w, "}");
}

/* The run's phase marks (marks.c's log, copied under the lock), after a comma: {"names": [...],
 * "marks": [[kind, name index, timestamp, pid, cpu_secs_total, cpu_source, read_bytes_total,
 * write_bytes_total, rss_mib, memory_peak_mib, reading_lag_secs, before], ...], "refused":
 * {...}}, before the index among the saved rows (first: the first saved row's index) of the
 * sample the mark came before. Nothing when the run had no mark. */
static void w_phases(wr *w, rt_tracker *t, uint64_t first)
{
    pthread_mutex_lock(&t->mu);
    size_t n = t->marks.n, nn = t->marks.nnames;
    rt_mark_entry *e = n ? malloc(n * sizeof *e) : NULL;
    if (e)
        memcpy(e, t->marks.e, n * sizeof *e);
    char *const *names = t->marks.names; /* the slots never move, the strings never change */
    rt_phase_counts c = {0};
    rt_pipeline_phase_counts(t->pipe, &c, sizeof c);
    pthread_mutex_unlock(&t->mu);
    if (!n && !c.too_long && !c.malformed && !c.flood && !c.dropped && !c.refused)
        return;
    if (n && !e) {
        w->err = w->err == RT_OK ? RT_ERR_NOMEM : w->err;
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < nn; i++)
        if (json_array_append_new(arr, json_string(names[i])) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    if (!arr && w->err == RT_OK)
        w->err = RT_ERR_NOMEM;
    w_lit(w, ",\"phases\":{\"names\":");
    w_json(w, arr);
    json_decref(arr);
    w_lit(w, ",\"marks\":[");
    for (size_t i = 0; i < n; i++) {
        const rt_mark_entry *m = &e[i];
        char head[64];
        snprintf(head, sizeof head, "%s[%d,%u,", i ? "," : "", m->kind, m->name);
        w_lit(w, head);
        w_short(w, m->timestamp);
        w_lit(w, ",");
        w_int(w, m->pid == RT_NULL_I64 ? NAN : (double)m->pid);
        w_lit(w, ",");
        w_short(w, m->cpu);
        snprintf(head, sizeof head, ",%d,", m->cpu_source);
        w_lit(w, head);
        w_short(w, m->read_bytes);
        w_lit(w, ",");
        w_short(w, m->write_bytes);
        w_lit(w, ",");
        w_short(w, m->rss_mib);
        w_lit(w, ",");
        w_short(w, m->memory_peak_mib);
        w_lit(w, ",");
        w_short(w, m->lag);
        snprintf(head, sizeof head, ",%llu]", (unsigned long long)(m->before > first ? m->before - first : 0));
        w_lit(w, head);
    }
    char tail[256];
    snprintf(tail, sizeof tail,
             "],\"refused\":{\"too_long\":%llu,\"malformed\":%llu,\"flood\":%llu,\"dropped\":%llu,"
             "\"refused\":%llu}}",
             (unsigned long long)c.too_long, (unsigned long long)c.malformed, (unsigned long long)c.flood,
             (unsigned long long)c.dropped, (unsigned long long)c.refused);
    w_lit(w, tail);
    free(e);
}

/* The run's metadata and its kept rows, the store pinned (pin true) or unpinned, under the lock. */
static void pin_rows(rt_tracker *t, bool pin, rows_src *src, rt_snap_meta *m)
{
    pthread_mutex_lock(&t->mu);
    rt_store_pin(t->store, pin);
    if (pin) {
        src->t = t;
        src->first = rt_store_first(t->store);
        src->n = (size_t)(rt_store_count(t->store) - src->first);
        m->pid = t->pid;
        m->children = t->children;
        m->interval = t->interval_secs;
        m->start = t->start_time;
        m->stop = t->stop_time > 0 ? t->stop_time : rt_real_secs();
    }
    pthread_mutex_unlock(&t->mu);
}

static rt_error save(rt_tracker *t, const char *extra_json, int flags, rt_out out);

rt_error rt_tracker_save(rt_tracker *t, const char *extra_json, int flags, int fd)
{
    rt_err_clear();
    return fd < 0 ? RT_ERR_INVALID : save(t, extra_json, flags, RT_OUT_FD(fd));
}

rt_error rt_tracker_save_cb(rt_tracker *t, const char *extra_json, int flags, rt_write_fn write, void *user)
{
    rt_err_clear();
    return !write ? RT_ERR_INVALID : save(t, extra_json, flags, RT_OUT_CB(write, user));
}

static rt_error save(rt_tracker *t, const char *extra_json, int flags, rt_out out)
{
    if (!t || (flags & ~(RT_SAVE_GZIP | RT_SAVE_PY05)))
        return RT_ERR_INVALID;
    json_t *extra = NULL;
    if (extra_json) {
        json_error_t e;
        extra = json_loads(extra_json, 0, &e);
        if (!json_is_object(extra)) {
            rt_logger lg = {t->log, t->log_user};
            rt_err_log(&lg, RT_LOG_ERROR, "save: extra_json is not a JSON object (%s)",
                       extra ? "another JSON value" : e.text);
            json_decref(extra);
            return RT_ERR_INVALID;
        }
    }
    wr w = {.out = out};
    rt_buf_init(&w.b, SIZE_MAX / 2);
    if (flags & RT_SAVE_GZIP)
        w.err = rt_gzip_new(SIZE_MAX / 2, &w.z);
    rt_snap_meta m;
    rows_src src = {0};
    if (w.err == RT_OK && !(src.chunk = malloc(SNAP_COPY_ROWS * RT_NCOLS * sizeof(double))))
        w.err = RT_ERR_NOMEM;
    if (w.err == RT_OK) {
        pin_rows(t, true, &src, &m);
        static const char *const reserved[] = {"metadata", "server_info", "cloud_info", "process_metrics",
                                               "system_metrics", "columns", "phases", NULL};
        w_lit(&w, "{\"metadata\":");
        w_metadata(&w, &m, extra);
        w_lit(&w, ",\"server_info\":");
        w_json(&w, extra ? json_object_get(extra, "server_info") : NULL);
        w_lit(&w, ",\"cloud_info\":");
        w_json(&w, extra ? json_object_get(extra, "cloud_info") : NULL);
        if (extra)
            w_members(&w, extra, reserved);
        w_lit(&w, ",\"process_metrics\":");
        bool v05 = (flags & RT_SAVE_PY05) != 0;
        w_rows(&w, &src, m.pid ? src.n : 0, v05 ? PROC_FIELDS_05 : PROC_FIELDS,
               v05 ? RT_ARRAY_LEN(PROC_FIELDS_05) : RT_ARRAY_LEN(PROC_FIELDS));
        w_lit(&w, ",\"system_metrics\":");
        w_rows(&w, &src, src.n, v05 ? SYS_FIELDS_05 : SYS_FIELDS, v05 ? RT_ARRAY_LEN(SYS_FIELDS_05) : RT_ARRAY_LEN(SYS_FIELDS));
        w_phases(&w, t, src.first);
        w_lit(&w, ",\"columns\":");
        w_columns(&w, &src);
        w_lit(&w, "}\n");
        w_flush(&w);
        pin_rows(t, false, &src, &m);
    }
    if (w.err == RT_OK && w.z) {
        const void *data;
        size_t len;
        w.err = rt_gzip_finish(w.z, &data, &len);
        if (w.err == RT_OK)
            w.err = w_write(&w, data, len);
    }
    free(src.chunk);
    json_decref(extra);
    rt_gzip_free(w.z);
    rt_buf_free(&w.b);
    if (w.err == RT_ERR_IO)
        errno = w.saved_errno;
    return w.err;
}

const char *rt_tracker_saved_info(const rt_tracker *t)
{
    return t ? t->saved_info : NULL;
}
