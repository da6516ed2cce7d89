/* snapshot_load.c - loading a run saved in the Python resource-tracker's snapshot layout
 * (rt_tracker_load, rt_tracker_load_buffer): gzip recognised by its magic, the JSON through
 * jansson; the store's own "columns" when present (what rt_tracker_save writes, at full
 * precision), else the Python tracker's process_metrics / system_metrics rows (lists of row
 * objects or objects of column lists, the Python tracker 0.4's names in kB and GiB or 0.5's
 * in MiB and GB: docs/contracts.md §12) converted to the store's units. Every row is replayed
 * through rt_tracker_add_row, so a loaded run has the statistics, recommendation and report of
 * a live one; the marks of "phases" (what rt_tracker_save keeps of a run's phases) are handed to
 * the pipeline again before the same rows, so the phases reach the statistics and the report as
 * they did live. Malformed input is logged with the path to the problem and gives RT_ERR_PARSE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/core.h"
#include "../core/jsonscan.h"
#include "../core/gzip.h"
#include "../core/lasterr.h"
#include "../pipeline/pipeline.h"
#include "snapshot.h"
#include "tracker_int.h"

#define SNAP_DEFAULT_ROWS 604800u       /* rt_tracker_options.max_samples' default */
#define SNAP_MAX_FILE ((size_t)1 << 30) /* the most a snapshot file may hold (compressed) */
#define SNAP_MAX_JSON ((size_t)4 << 30) /* ... and its JSON, uncompressed */

typedef struct ld {
    rt_logger lg;
    const char *name; /* the file, or "snapshot" */
    locale_t c_locale; /* "C", for the scanner's numbers (load_any's) */
} ld;

/* Logs why the input is no snapshot; returns RT_ERR_PARSE. */
__attribute__((format(printf, 2, 3))) static rt_error bad(const ld *l, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rt_err_log(&l->lg, RT_LOG_ERROR, "%s: %s", l->name, msg);
    return RT_ERR_PARSE;
}

/* A number member of obj: absent or null leave *out; 0, or -1 when it is another type. */
static int num_member(json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* ---- the Python tracker's rows: a list of row objects, or an object of column lists ------------ */

typedef struct section {
    const char *name;
    json_t *rows; /* a list of objects */
    json_t *cols; /* or an object of lists */
    size_t n;
} section;

static rt_error section_open(const ld *l, json_t *root, const char *name, section *s)
{
    *s = (section){.name = name};
    json_t *v = json_object_get(root, name);
    if (!v || json_is_null(v))
        return RT_OK;
    if (json_is_array(v)) {
        s->rows = v;
        s->n = json_array_size(v);
        return RT_OK;
    }
    if (!json_is_object(v))
        return bad(l, "%s: neither a list of rows nor an object of columns", name);
    s->cols = v;
    const char *key, *first = NULL;
    json_t *col;
    json_object_foreach(v, key, col) {
        if (!json_is_array(col))
            return bad(l, "%s.%s: not a list", name, key);
        if (!first) {
            first = key;
            s->n = json_array_size(col);
        } else if (json_array_size(col) != s->n) {
            return bad(l, "%s.%s: %zu values where %s has %zu", name, key, json_array_size(col), first, s->n);
        }
    }
    return RT_OK;
}

/* Whether the section's rows have the key (the first row tells for a list of rows). */
static bool section_has(const section *s, const char *key)
{
    if (s->cols)
        return json_object_get(s->cols, key) != NULL;
    json_t *row = s->n ? json_array_get(s->rows, 0) : NULL;
    return json_is_object(row) && json_object_get(row, key);
}

/* Row i's figure under key into *out (NaN when absent or null): 1 when it is there, 0 when
 * not, -1 (logged) when the row is no object or the figure no number. */
static int section_get(const ld *l, const section *s, size_t i, const char *key, double *out)
{
    *out = NAN;
    json_t *v;
    if (s->cols) {
        json_t *col = json_object_get(s->cols, key);
        v = col ? json_array_get(col, i) : NULL;
    } else {
        json_t *row = json_array_get(s->rows, i);
        if (!json_is_object(row)) {
            bad(l, "%s[%zu]: not an object", s->name, i);
            return -1;
        }
        v = json_object_get(row, key);
    }
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v)) {
        if (s->cols)
            bad(l, "%s.%s[%zu]: not a number", s->name, key, i);
        else
            bad(l, "%s[%zu].%s: not a number", s->name, i, key);
        return -1;
    }
    *out = json_number_value(v);
    return 1;
}

/* One figure whose name says its unit: key_mib as is, else key_alt times alt_factor. */
typedef struct in_field {
    int col;
    const char *key;     /* the Python tracker 0.5's name (MiB, GB, bytes, cores) */
    const char *key_alt; /* the Python tracker 0.4's (kB), or NULL */
    double alt_factor;
} in_field;

static const in_field PROC_IN[] = {
    {RT_COL_PROC_PID, "pid", NULL, 1},
    {RT_COL_PROC_CHILDREN, "children", NULL, 1},
    {RT_COL_PROC_UTIME, "utime", NULL, 1},
    {RT_COL_PROC_STIME, "stime", NULL, 1},
    {RT_COL_PROC_CORES, "cpu_usage", NULL, 1},
    {RT_COL_PROC_PSS_MIB, "memory_mib", "memory", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_PROC_READ_BYTES, "disk_read_bytes", "read_bytes", 1},
    {RT_COL_PROC_WRITE_BYTES, "disk_write_bytes", "write_bytes", 1},
    {RT_COL_PROC_GPU_USAGE, "gpu_usage", NULL, 1},
    {RT_COL_PROC_GPU_VRAM_MIB, "gpu_vram_mib", "gpu_vram", 1},
    {RT_COL_PROC_GPU_UTILIZED, "gpu_utilized", NULL, 1},
};

static const in_field SYS_IN[] = {
    {RT_COL_CPU_RUNNABLE, "processes", NULL, 1},
    {RT_COL_CPU_UTIME, "utime", NULL, 1},
    {RT_COL_CPU_STIME, "stime", NULL, 1},
    {RT_COL_CPU_CORES, "cpu_usage", NULL, 1},
    {RT_COL_MEM_FREE_MIB, "memory_free_mib", "memory_free", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_MEM_USED_MIB, "memory_used_mib", "memory_used", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_MEM_BUFFERS_MIB, "memory_buffers_mib", "memory_buffers", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_MEM_CACHED_MIB, "memory_cached_mib", "memory_cached", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_MEM_ACTIVE_MIB, "memory_active_mib", "memory_active", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_MEM_INACTIVE_MIB, "memory_inactive_mib", "memory_inactive", 1 / RT_SNAP_KIB_PER_MIB},
    {RT_COL_DISK_READ_BYTES, "disk_read_bytes", NULL, 1},
    {RT_COL_DISK_WRITE_BYTES, "disk_write_bytes", NULL, 1},
    {RT_COL_DISK_SPACE_TOTAL_BYTES, "disk_space_total_gb", NULL, 1}, /* scaled by disk_factor */
    {RT_COL_DISK_SPACE_USED_BYTES, "disk_space_used_gb", NULL, 1},
    {RT_COL_DISK_SPACE_FREE_BYTES, "disk_space_free_gb", NULL, 1},
    {RT_COL_NET_RECV_BYTES, "net_recv_bytes", NULL, 1},
    {RT_COL_NET_SENT_BYTES, "net_sent_bytes", NULL, 1},
    {RT_COL_GPU_USAGE, "gpu_usage", NULL, 1},
    {RT_COL_GPU_VRAM_MIB, "gpu_vram_mib", "gpu_vram", 1},
    {RT_COL_GPU_UTILIZED, "gpu_utilized", NULL, 1},
};

static int read_fields(const ld *l, const section *s, size_t i, const in_field *f, size_t nf, double disk_factor,
                       double *row)
{
    for (size_t k = 0; k < nf; k++) {
        double v;
        int got = section_get(l, s, i, f[k].key, &v);
        if (got == 0 && f[k].key_alt) {
            got = section_get(l, s, i, f[k].key_alt, &v);
            v *= f[k].alt_factor;
        }
        if (got < 0)
            return -1;
        if (f[k].col == RT_COL_DISK_SPACE_TOTAL_BYTES || f[k].col == RT_COL_DISK_SPACE_USED_BYTES ||
            f[k].col == RT_COL_DISK_SPACE_FREE_BYTES)
            v *= disk_factor;
        row[f[k].col] = v;
    }
    return 0;
}

/* The rows of process_metrics and system_metrics, paired by index (to the shorter list when
 * both have rows), in the store's units. server_info fills what the rows lack. */
static rt_error rows_from_metrics(const ld *l, json_t *root, double interval, double **out, size_t *n_out)
{
    section ps, ss;
    rt_error rc = section_open(l, root, "process_metrics", &ps);
    if (rc == RT_OK)
        rc = section_open(l, root, "system_metrics", &ss);
    if (rc != RT_OK)
        return rc;
    size_t n = ps.n && ss.n ? (ps.n < ss.n ? ps.n : ss.n) : ps.n + ss.n;
    /* the Python tracker 0.4's disk space is GiB; 0.5's (its names ending in _mib) GB */
    double disk_factor = section_has(&ss, "memory_free_mib") || section_has(&ss, "memory_used_mib") ? RT_SNAP_GB : RT_SNAP_GIB;
    double cpus = NAN, mem = NAN, gpus = NAN, vram = NAN;
    json_t *si = json_object_get(root, "server_info");
    if (json_is_object(si)) {
        num_member(si, "vcpus", &cpus);
        num_member(si, "memory_mib", &mem);
        num_member(si, "gpu_count", &gpus);
        num_member(si, "gpu_memory_mib", &vram);
        if (mem != mem) /* the Python tracker 0.4's names */
            num_member(si, "memory_mb", &mem);
        if (vram != vram)
            num_member(si, "gpu_memory_mb", &vram);
    }
    double *rows = n ? malloc(n * sizeof(double) * RT_NCOLS) : NULL;
    if (n && !rows)
        return RT_ERR_NOMEM;
    double cpu_total = 0, prev_ts = NAN;
    for (size_t i = 0; i < n; i++) {
        double *row = rows + i * RT_NCOLS;
        for (int c = 0; c < RT_NCOLS; c++)
            row[c] = NAN;
        double ts = NAN, pts = NAN;
        if ((ss.n && section_get(l, &ss, i, "timestamp", &ts) < 0) ||
            (ps.n && section_get(l, &ps, i, "timestamp", &pts) < 0) ||
            (ss.n && read_fields(l, &ss, i, SYS_IN, RT_ARRAY_LEN(SYS_IN), disk_factor, row) < 0) ||
            (ps.n && read_fields(l, &ps, i, PROC_IN, RT_ARRAY_LEN(PROC_IN), 1, row) < 0)) {
            free(rows);
            return RT_ERR_PARSE;
        }
        if (ts != ts)
            ts = pts;
        row[RT_COL_TIMESTAMP] = ts;
        double d = ts - prev_ts;
        row[RT_COL_INTERVAL] = d > 0 ? d : interval; /* the first row, or times out of order */
        prev_ts = ts;
        row[RT_COL_CPU_COUNT] = cpus;
        row[RT_COL_MEM_TOTAL_MIB] = mem;
        row[RT_COL_GPU_COUNT] = gpus;
        row[RT_COL_GPU_VRAM_TOTAL_MIB] = vram;
        if (ps.n) {
            cpu_total = rt_add_known(cpu_total, rt_add_known(row[RT_COL_PROC_UTIME], row[RT_COL_PROC_STIME]));
            row[RT_COL_PROC_CPU_SECS_TOTAL] = cpu_total;
        }
    }
    *out = rows;
    *n_out = n;
    return RT_OK;
}

/* ---- our own "columns", read by the scanner ------------------------------------------------- */

/* jansson would build a tree of every number of the file (a week at 1 s: ~4.7 GB and 30 s for
 * 580 MB of JSON); the scanner (core/jsonscan.h, a subset of what jansson accepts) reads
 * the columns straight into the rows, and jansson parses only the rest of the file. */

/* The raw key of a member as text (cut at cap - 1 bytes: no column name is that long). */
static void member_key(const char *raw, size_t len, char *key, size_t cap)
{
    rt_js_unescape(raw, len, key, cap);
}

/* The elements of the array at j (not consumed), or -1 when it is no valid array. */
static long long array_len(rt_js j)
{
    bool first = true;
    long long n = 0;
    int r;
    if (!rt_js_open(&j, '['))
        return -1;
    while ((r = rt_js_element(&j, &first)) == 1) {
        if (!rt_js_skip(&j))
            return -1;
        n++;
    }
    return r == 0 ? n : -1;
}

static rt_error rows_from_columns(const ld *l, const char *p, const char *end, double **out, size_t *n_out)
{
    rt_js j = {.p = p, .end = end, .c_locale = l->c_locale};
    double *rows = NULL;
    size_t n = 0;
    char first_key[64] = "", key[64];
    rt_error rc = RT_OK;
    bool first = true;
    const char *raw;
    size_t klen;
    int r = 0;
    if (rt_js_peek(&j) != RT_JS_OBJECT || !rt_js_open(&j, '{'))
        rc = bad(l, "columns: not an object");
    while (rc == RT_OK && (r = rt_js_member(&j, &first, &raw, &klen)) == 1) {
        member_key(raw, klen, key, sizeof key);
        int c = rt_column_by_name(key);
        if (c < 0 || c >= RT_NCOLS) { /* a newer library's column */
            if (!rt_js_skip(&j))
                break;
            continue;
        }
        if (rt_js_peek(&j) != RT_JS_ARRAY) {
            rc = j.err ? RT_OK : bad(l, "columns.%s: not a list", key);
            break;
        }
        long long len = array_len(j);
        if (len < 0)
            break; /* a syntax error: the scan below reports it */
        if (!first_key[0]) {
            snprintf(first_key, sizeof first_key, "%s", key);
            n = (size_t)len;
            if (n > SIZE_MAX / sizeof(double) / RT_NCOLS || (n && !(rows = malloc(n * sizeof(double) * RT_NCOLS)))) {
                rc = RT_ERR_NOMEM;
                break;
            }
            for (size_t i = 0; i < n * RT_NCOLS; i++)
                rows[i] = NAN;
        } else if ((size_t)len != n) {
            rc = bad(l, "columns.%s: %lld values where %s has %zu", key, len, first_key, n);
            break;
        }
        bool efirst = true;
        rt_js_open(&j, '[');
        for (size_t i = 0; rc == RT_OK && rt_js_element(&j, &efirst) == 1; i++) {
            rt_js_type ty = rt_js_peek(&j);
            if (ty == RT_JS_NULL) {
                rt_js_skip(&j);
            } else if (ty != RT_JS_NUMBER) {
                rc = bad(l, "columns.%s[%zu]: not a number", key, i);
            } else if (!rt_js_number(&j, &rows[i * RT_NCOLS + (size_t)c])) {
                rc = bad(l, "columns.%s[%zu]: %s", key, i, j.err ? j.err : "not a number");
            }
        }
    }
    if (rc == RT_OK && (r < 0 || j.err))
        rc = bad(l, "columns: not JSON (%s at byte %zu of the columns)", j.err ? j.err : "malformed",
                 (size_t)(j.p - p));
    if (rc != RT_OK) {
        free(rows);
        return rc;
    }
    *out = rows;
    *n_out = n;
    return RT_OK;
}

/* The text of the top-level object buf without its "columns" member (and, when it has one, without
 * the rows the columns replace), into head (malloc'd, for jansson), and where that member's value
 * is (*cols NULL when there is none, or it is null). RT_ERR_PARSE (logged) when buf is no JSON
 * object; RT_ERR_NOMEM. */
static rt_error split_columns(const ld *l, const char *buf, size_t len, char **head, size_t *head_len,
                              const char **cols, const char **cols_end)
{
    *head = NULL;
    *cols = *cols_end = NULL;
    rt_js j = {.p = buf, .end = buf + len, .c_locale = l->c_locale};
    bool first = true;
    const char *raw;
    size_t klen;
    char key[32];
    int r;
    rt_js_type top = rt_js_peek(&j);
    if (top != RT_JS_OBJECT && top != RT_JS_BAD)
        return bad(l, "not a JSON object");
    if (!rt_js_open(&j, '{'))
        return bad(l, "not JSON (%s at byte %zu)", j.err ? j.err : "malformed", (size_t)(j.p - buf));
    while ((r = rt_js_member(&j, &first, &raw, &klen)) == 1) { /* pass 1: the (last) columns member */
        member_key(raw, klen, key, sizeof key);
        rt_js_peek(&j);
        const char *v = j.p;
        if (!rt_js_skip(&j))
            break;
        if (strcmp(key, "columns") == 0) {
            bool null = j.p - v == 4 && memcmp(v, "null", 4) == 0;
            *cols = null ? NULL : v;
            *cols_end = null ? NULL : j.p;
        }
    }
    if (r != 0 || !rt_js_at_end(&j))
        return bad(l, "not JSON (%s at byte %zu)", j.err ? j.err : "malformed", (size_t)(j.p - buf));
    if (!*cols)
        return RT_OK; /* no head: jansson reads buf */
    rt_buf h;
    rt_buf_init(&h, len + 2);
    rt_buf_append(&h, "{", 1);
    j = (rt_js){.p = buf, .end = buf + len, .c_locale = l->c_locale};
    first = true;
    rt_js_open(&j, '{');
    bool any = false;
    while (rt_js_member(&j, &first, &raw, &klen) == 1) { /* pass 2: the other members */
        member_key(raw, klen, key, sizeof key);
        rt_js_peek(&j);
        const char *v = j.p;
        rt_js_skip(&j);
        if (strcmp(key, "columns") == 0 || strcmp(key, "process_metrics") == 0 || strcmp(key, "system_metrics") == 0)
            continue;
        if ((any && rt_buf_append(&h, ",", 1) < 0) || rt_buf_append(&h, raw - 1, klen + 2) < 0 ||
            rt_buf_append(&h, ":", 1) < 0 || rt_buf_append(&h, v, (size_t)(j.p - v)) < 0) {
            rt_buf_free(&h);
            return RT_ERR_NOMEM;
        }
        any = true;
    }
    if (rt_buf_append(&h, "}", 1) < 0) {
        rt_buf_free(&h);
        return RT_ERR_NOMEM;
    }
    *head = h.data;
    *head_len = h.len;
    return RT_OK;
}

/* ---- the whole snapshot ----------------------------------------------------------------------- */

static rt_error read_meta(const ld *l, json_t *meta, rt_snap_meta *m)
{
    if (!json_is_object(meta))
        return bad(l, "metadata: missing or not an object");
    json_t *v = json_object_get(meta, "version");
    if (!json_is_number(v) || json_number_value(v) != RT_SNAP_VERSION) {
        if (json_is_number(v))
            return bad(l, "metadata.version: %g (only version 1 is known)", json_number_value(v));
        return bad(l, "metadata.version: missing or not a number");
    }
    *m = (rt_snap_meta){.children = true, .start = NAN, .stop = NAN, .interval = NAN};
    v = json_object_get(meta, "interval");
    m->interval = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(m->interval > 0) || !isfinite(m->interval))
        return bad(l, "metadata.interval: not a positive number");
    v = json_object_get(meta, "pid");
    if (v && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return bad(l, "metadata.pid: not a process id");
        m->pid = json_integer_value(v);
    }
    v = json_object_get(meta, "children");
    if (v && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return bad(l, "metadata.children: not true or false");
        m->children = json_is_true(v);
    }
    if (num_member(meta, "start_time", &m->start) < 0)
        return bad(l, "metadata.start_time: not a number");
    if (num_member(meta, "stop_time", &m->stop) < 0)
        return bad(l, "metadata.stop_time: not a number");
    return RT_OK;
}

/* {"metadata", "server_info", "cloud_info"} of root as compact JSON (malloc'd), or NULL */
static char *saved_info(json_t *root)
{
    static const char *const keys[] = {"metadata", "server_info", "cloud_info"};
    json_t *o = json_object();
    for (size_t i = 0; o && i < RT_ARRAY_LEN(keys); i++) {
        json_t *v = json_object_get(root, keys[i]);
        if (json_object_set(o, keys[i], v ? v : json_null()) < 0) {
            json_decref(o);
            o = NULL;
        }
    }
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    return s;
}

/* The saved phases (see w_phases in snapshot.c): checks their shape; RT_OK (also without
 * them: *marks NULL), or RT_ERR_PARSE (logged). */
static rt_error phases_check(const ld *l, json_t *ph, json_t **names, json_t **marks, json_t **refused)
{
    *names = *marks = *refused = NULL;
    if (!ph || json_is_null(ph))
        return RT_OK;
    *names = json_object_get(ph, "names");
    *marks = json_object_get(ph, "marks");
    *refused = json_object_get(ph, "refused");
    if (!json_is_object(ph) || !json_is_array(*names) || !json_is_array(*marks))
        return bad(l, "phases: not an object with \"names\" and \"marks\" lists");
    for (size_t i = 0; i < json_array_size(*names); i++)
        if (!json_is_string(json_array_get(*names, i)))
            return bad(l, "phases.names[%zu]: not a string", i);
    uint64_t before = 0;
    for (size_t i = 0; i < json_array_size(*marks); i++) {
        json_t *m = json_array_get(*marks, i);
        json_t *kind = json_array_get(m, 0), *name = json_array_get(m, 1), *b = json_array_get(m, 11);
        if (!json_is_array(m) || json_array_size(m) != 12 || !json_is_integer(kind) || !json_is_integer(name) ||
            json_integer_value(name) < 0 || (size_t)json_integer_value(name) >= json_array_size(*names) ||
            !json_is_integer(b) || json_integer_value(b) < 0 || (uint64_t)json_integer_value(b) < before)
            return bad(l, "phases.marks[%zu]: not [kind, name, ..., before] in order", i);
        before = (uint64_t)json_integer_value(b);
        for (size_t k = 2; k < 11; k++)
            if (!json_is_number(json_array_get(m, k)) && !json_is_null(json_array_get(m, k)))
                return bad(l, "phases.marks[%zu][%zu]: not a number", i, k);
    }
    if (*refused && !json_is_object(*refused))
        return bad(l, "phases.refused: not an object");
    return RT_OK;
}

/* A number of a saved mark (null: NaN). */
static double mark_num(json_t *m, size_t k)
{
    json_t *v = json_array_get(m, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Hands the saved mark i to t's pipeline (and keeps it for a later save). */
static void mark_again(rt_tracker *t, json_t *names, json_t *marks, size_t i)
{
    json_t *a = json_array_get(marks, i);
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    json_int_t kind = json_integer_value(json_array_get(a, 0));
    m.kind = kind == RT_PHASE_START || kind == RT_PHASE_STOP ? (int)kind : 0; /* 0: refused, malformed */
    m.name = json_string_value(json_array_get(names, (size_t)json_integer_value(json_array_get(a, 1))));
    m.timestamp_secs = mark_num(a, 2);
    double pid = mark_num(a, 3);
    m.pid = pid >= 1 && pid <= 4194304.0 * 1024 ? (int64_t)pid : RT_NULL_I64; /* a number a pid can be */
    m.cpu_secs_total = mark_num(a, 4);
    double src = mark_num(a, 5);
    m.cpu_source = src >= RT_PHASE_CPU_NONE && src <= RT_PHASE_CPU_MARKER ? (int)src : RT_PHASE_CPU_NONE;
    m.read_bytes_total = mark_num(a, 6);
    m.write_bytes_total = mark_num(a, 7);
    m.rss_mib = mark_num(a, 8);
    m.memory_peak_mib = mark_num(a, 9);
    m.reading_lag_secs = mark_num(a, 10);
    pthread_mutex_lock(&t->mu);
    rt_tracker_mark_locked(t, &m); /* a refusal is counted again, as it was live */
    pthread_mutex_unlock(&t->mu);
}

/* The refusals saved (those the pipeline cannot count again from the marks) to t's pipeline. */
static void refused_again(rt_tracker *t, json_t *refused)
{
    static const struct {
        const char *key;
        int why;
    } kinds[] = {{"too_long", RT_PHASE_REFUSED_TOO_LONG}, {"malformed", RT_PHASE_REFUSED_MALFORMED},
                 {"flood", RT_PHASE_REFUSED_FLOOD},       {"dropped", RT_PHASE_REFUSED_DROPPED},
                 {"refused", RT_PHASE_REFUSED_CONNECTION}};
    for (size_t i = 0; refused && i < RT_ARRAY_LEN(kinds); i++) {
        json_t *v = json_object_get(refused, kinds[i].key);
        if (json_is_integer(v) && json_integer_value(v) > 0)
            rt_pipeline_mark_refused(t->pipe, kinds[i].why, (uint64_t)json_integer_value(v));
    }
}

static rt_error load_json(const ld *l, const char *buf, size_t len, rt_tracker **out)
{
    char *head = NULL;
    size_t head_len = 0;
    const char *cols, *cols_end;
    rt_error rc = split_columns(l, buf, len, &head, &head_len, &cols, &cols_end);
    if (rc != RT_OK)
        return rc;
    json_error_t e;
    json_t *root = head ? json_loadb(head, head_len, 0, &e) : json_loadb(buf, len, 0, &e);
    free(head);
    if (!root)
        return bad(l, "not JSON (line %d, column %d: %s)", e.line, e.column, e.text);
    rt_snap_meta m = {0}; /* read_meta fills it; zero keeps gcc sure of that */
    double *rows = NULL;
    size_t n = 0;
    if (!json_is_object(root))
        rc = bad(l, "not a JSON object");
    if (rc == RT_OK)
        rc = read_meta(l, json_object_get(root, "metadata"), &m);
    json_t *names = NULL, *marks = NULL, *refused = NULL;
    if (rc == RT_OK)
        rc = phases_check(l, json_object_get(root, "phases"), &names, &marks, &refused);
    if (rc == RT_OK)
        rc = cols ? rows_from_columns(l, cols, cols_end, &rows, &n) : rows_from_metrics(l, root, m.interval, &rows, &n);
    rt_tracker *t = NULL;
    if (rc == RT_OK) {
        rc = rt_tracker_new_stopped(n > SNAP_DEFAULT_ROWS ? n : SNAP_DEFAULT_ROWS, NULL, &t);
        if (rc == RT_OK && !(t->saved_info = saved_info(root)))
            rc = RT_ERR_NOMEM;
    }
    if (rc == RT_OK) {
        if (!m.pid && n && isfinite(rows[RT_COL_PROC_PID]) && rows[RT_COL_PROC_PID] > 0 &&
            rows[RT_COL_PROC_PID] < 4194305.0)
            m.pid = (int64_t)rows[RT_COL_PROC_PID]; /* metadata without it, rows with it */
        t->pid = m.pid;
        t->children = m.children;
        t->interval_secs = m.interval;
        t->start_time = isfinite(m.start) ? m.start : n ? rows[RT_COL_TIMESTAMP] - m.interval : 0;
        t->stop_time = isfinite(m.stop) ? m.stop : n ? rows[(n - 1) * RT_NCOLS + RT_COL_TIMESTAMP] : t->start_time;
        size_t k = 0, nm = json_array_size(marks); /* 0 for NULL */
        refused_again(t, refused);
        for (size_t i = 0; i < n && rc == RT_OK; i++) {
            for (; k < nm && (uint64_t)json_integer_value(json_array_get(json_array_get(marks, k), 11)) <= i; k++)
                mark_again(t, names, marks, k);
            if (rt_tracker_add_row(t, rows + i * RT_NCOLS) < 0)
                rc = RT_ERR_NOMEM;
        }
        for (; k < nm && rc == RT_OK; k++)
            mark_again(t, names, marks, k); /* after the last sample */
    }
    if (rc != RT_OK) {
        rt_tracker_free(t);
        t = NULL;
    }
    free(rows);
    json_decref(root);
    *out = t;
    return rc;
}

static bool is_gzip(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static rt_error load_plain_or_gzip(const ld *l, const void *buf, size_t len, rt_tracker **out)
{
    if (!is_gzip(buf, len))
        return load_json(l, buf, len, out);
    rt_buf plain;
    rt_error rc = rt_gunzip(buf, len, SNAP_MAX_JSON, &plain);
    if (rc == RT_ERR_UNSUPPORTED) {
        char why[320] = "";
        rt_gzip_available(why, sizeof why);
        rt_err_log(&l->lg, RT_LOG_ERROR, "%s: gzipped, and zlib could not be loaded: %s", l->name, why);
    }
    else if (rc == RT_ERR_NOMEM && plain.len >= SNAP_MAX_JSON)
        rc = bad(l, "more than %zu bytes of JSON once uncompressed", SNAP_MAX_JSON);
    else if (rc == RT_ERR_PARSE || rc == RT_ERR_INVALID)
        rc = bad(l, "not a complete gzip stream");
    if (rc == RT_OK)
        rc = load_json(l, plain.data, plain.len, out);
    rt_buf_free(&plain);
    return rc;
}

static rt_error load_any(ld *l, const void *buf, size_t len, rt_tracker **out)
{
    l->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (l->c_locale == (locale_t)0)
        return RT_ERR_NOMEM;
    rt_error rc = load_plain_or_gzip(l, buf, len, out);
    freelocale(l->c_locale);
    return rc;
}

rt_error rt_tracker_load_buffer(const void *buf, size_t len, rt_log_fn log, void *log_user, rt_tracker **out)
{
    rt_err_clear();
    if (!out || (!buf && len))
        return RT_ERR_INVALID;
    *out = NULL;
    ld l = {.lg = {log, log_user}, .name = "snapshot"};
    if (len == 0)
        return bad(&l, "empty");
    return load_any(&l, buf, len, out);
}

rt_error rt_tracker_load(const char *path, rt_log_fn log, void *log_user, rt_tracker **out)
{
    rt_err_clear();
    if (!path || !out)
        return RT_ERR_INVALID;
    *out = NULL;
    ld l = {.lg = {log, log_user}, .name = path};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        rt_err_log(&l.lg, RT_LOG_ERROR, "%s: %s", path, strerror(err));
        errno = err;
        return err == ENOENT || err == ENOTDIR ? RT_ERR_NOT_FOUND : RT_ERR_IO;
    }
    rt_buf b;
    rt_buf_init(&b, SNAP_MAX_FILE);
    ssize_t n = rt_read_fd_grow(fd, &b, RT_READ_TO_EOF);
    close(fd);
    rt_error rc;
    if (n == -EFBIG) {
        rc = bad(&l, "larger than %zu bytes", SNAP_MAX_FILE);
    } else if (n < 0) {
        rt_err_log(&l.lg, RT_LOG_ERROR, "%s: %s", path, strerror((int)-n));
        rc = n == -ENOMEM ? RT_ERR_NOMEM : RT_ERR_IO;
        errno = (int)-n;
    } else {
        rc = n == 0 ? bad(&l, "empty") : load_any(&l, b.data, (size_t)n, out);
    }
    rt_buf_free(&b);
    return rc;
}
