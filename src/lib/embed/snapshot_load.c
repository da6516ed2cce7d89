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

/* What a snapshot may hold to be read back, so that reading one takes bounded memory (it is one
 * JSON document, read whole): its JSON (gunzipped: the compressed file is streamed, never held),
 * its samples (each a row of RT_NCOLS doubles while it loads, then kept by the store), and the
 * rest, which jansson parses into a tree (some 20 times its text at worst). A week at 1 s, the
 * store's default, is about 0.9 GB of JSON with 604,800 samples and under 1 MiB of the rest
 * (its 262,144 phase marks at most, some 25 MiB). docs/contracts.md §12. */
#define SNAP_DEFAULT_ROWS 604800u              /* rt_tracker_options.max_samples' default */
#define SNAP_MAX_JSON ((size_t)2 << 30)        /* bytes of JSON, plain or gunzipped */
#define SNAP_MAX_ROWS (2u * SNAP_DEFAULT_ROWS) /* samples (two weeks at 1 s) */
#define SNAP_MAX_HEAD (64u << 20)              /* bytes of JSON besides the samples */
#define SNAP_MAX_RATIO 256u                    /* gunzipped / gzip bytes, past SNAP_BOMB_FLOOR */
#define SNAP_BOMB_FLOOR (64u << 20)            /* JSON a gzip file may gunzip to at any ratio */

typedef struct ld {
    rt_logger lg;
    const char *name; /* the file, or "snapshot" */
    locale_t c_locale; /* "C", for the scanner's numbers (with_locale) */
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

/* ---- the scanner's helpers ------------------------------------------------------------------ */

/* jansson would build a tree of every number of the file (a week at 1 s: ~4.7 GB and 30 s for
 * 580 MB of JSON; the Python tracker's rows: about 9 times their JSON); the scanner
 * (core/jsonscan.h, a subset of what jansson accepts) reads the columns and the rows straight
 * into the samples, and jansson parses only the rest of the file (at most SNAP_MAX_HEAD). */

/* The raw key of a member as text (cut at cap - 1 bytes: no column name is that long). */
static void member_key(const char *raw, size_t len, char *key, size_t cap)
{
    rt_js_unescape(raw, len, key, cap);
}

/* Whether the raw key raw[0..len) is want, exactly (a key with a NUL is none of ours). */
static bool key_is(const char *raw, size_t len, const char *want)
{
    char key[64];
    size_t n = rt_js_unescape(raw, len, key, sizeof key);
    return n == strlen(want) && strcmp(key, want) == 0;
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

/* Refuses a snapshot of n samples past SNAP_MAX_ROWS (before anything is made for them). */
static rt_error too_many(const ld *l, size_t n)
{
    return bad(l, "%zu samples: more than the %u a snapshot may hold to be read back", n, SNAP_MAX_ROWS);
}

/* ---- the Python tracker's rows: a list of row objects, or an object of column lists ------------ */

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

/* What a value read into a section can be besides a number (none is infinite) or NaN (absent or
 * null): said only when the figure is asked for, as jansson's tree was asked. */
#define NOT_NUMBER INFINITY    /* a known key whose value is no number */
#define NOT_OBJECT (-INFINITY) /* every value of a row that is no object */

/* A section's keys, each with a slot of a row's values: 0 "timestamp", 1 + 2i field i's key and
 * 2 + 2i its key_alt. */
typedef struct section {
    const char *name;
    const char *p, *end; /* its value in the document; NULL when absent or null */
    bool cols;           /* an object of column lists, else a list of row objects */
    size_t n;            /* its rows */
    const in_field *f;
    size_t nf, nk; /* fields, and slots (1 + 2 nf) */
    double *v;     /* the first rows' values, nk each (section_fill) */
} section;

/* The slot of the raw key raw[0..len), or -1 when it is none the section reads. */
static int key_slot(const section *s, const char *raw, size_t len)
{
    if (key_is(raw, len, "timestamp"))
        return 0;
    for (size_t i = 0; i < s->nf; i++) {
        if (key_is(raw, len, s->f[i].key))
            return 1 + 2 * (int)i;
        if (s->f[i].key_alt && key_is(raw, len, s->f[i].key_alt))
            return 2 + 2 * (int)i;
    }
    return -1;
}

/* The name of slot k. */
static const char *slot_key(const section *s, int k)
{
    return k == 0 ? "timestamp" : k % 2 ? s->f[(k - 1) / 2].key : s->f[(k - 2) / 2].key_alt;
}

/* The section's value p[0..end) (p NULL: none) and its row count; a section of columns must have
 * lists of one length. RT_OK or RT_ERR_PARSE (logged). */
static rt_error section_open(const ld *l, const char *name, const char *p, const char *end, const in_field *f,
                             size_t nf, section *s)
{
    *s = (section){.name = name, .f = f, .nf = nf, .nk = 1 + 2 * nf};
    rt_js j = {.p = p, .end = end, .c_locale = l->c_locale};
    rt_js_type t = p ? rt_js_peek(&j) : RT_JS_NULL;
    if (t == RT_JS_NULL)
        return RT_OK;
    s->p = p;
    s->end = end;
    if (t == RT_JS_ARRAY) {
        long long n = array_len(j); /* split_document has checked the syntax */
        s->n = n > 0 ? (size_t)n : 0;
        return RT_OK;
    }
    if (t != RT_JS_OBJECT)
        return bad(l, "%s: neither a list of rows nor an object of columns", name);
    s->cols = true;
    bool first = true, any = false;
    const char *raw;
    size_t klen;
    char key[64], first_key[64] = "";
    rt_js_open(&j, '{');
    while (rt_js_member(&j, &first, &raw, &klen) == 1) {
        member_key(raw, klen, key, sizeof key);
        if (rt_js_peek(&j) != RT_JS_ARRAY)
            return bad(l, "%s.%s: not a list", name, key);
        long long n = array_len(j);
        if (!any) {
            snprintf(first_key, sizeof first_key, "%s", key);
            s->n = n > 0 ? (size_t)n : 0;
            any = true;
        } else if (n != (long long)s->n) {
            return bad(l, "%s.%s: %lld values where %s has %zu", name, key, n, first_key, s->n);
        }
        rt_js_skip(&j);
    }
    return RT_OK;
}

/* Whether the section's rows have the key (the first row tells for a list of rows). */
static bool section_has(const ld *l, const section *s, const char *key)
{
    if (!s->p)
        return false;
    rt_js j = {.p = s->p, .end = s->end, .c_locale = l->c_locale};
    bool first = true;
    const char *raw;
    size_t klen;
    if (!s->cols) { /* into the first row */
        if (!rt_js_open(&j, '[') || rt_js_element(&j, &first) != 1 || rt_js_peek(&j) != RT_JS_OBJECT)
            return false;
        first = true;
    }
    rt_js_open(&j, '{');
    while (rt_js_member(&j, &first, &raw, &klen) == 1) {
        if (key_is(raw, klen, key))
            return true;
        rt_js_skip(&j);
    }
    return false;
}

/* One value into *v: a number, NaN for null, NOT_NUMBER for anything else (skipped). */
static void slot_value(rt_js *j, double *v)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NUMBER && rt_js_number(j, v))
        return;
    *v = t == RT_JS_NULL ? NAN : NOT_NUMBER;
    rt_js_skip(j);
}

/* The values of the section's first n rows into s->v (n x nk, NaN where absent). RT_OK or
 * RT_ERR_NOMEM. */
static rt_error section_fill(const ld *l, section *s, size_t n)
{
    if (!s->n)
        return RT_OK;
    s->v = malloc(n * s->nk * sizeof *s->v);
    if (!s->v)
        return RT_ERR_NOMEM;
    for (size_t i = 0; i < n * s->nk; i++)
        s->v[i] = NAN;
    rt_js j = {.p = s->p, .end = s->end, .c_locale = l->c_locale};
    bool first = true, mfirst;
    const char *raw;
    size_t klen;
    if (s->cols) { /* column by column */
        rt_js_open(&j, '{');
        while (rt_js_member(&j, &first, &raw, &klen) == 1) {
            int k = key_slot(s, raw, klen);
            if (k < 0) {
                rt_js_skip(&j);
                continue;
            }
            rt_js_open(&j, '[');
            mfirst = true;
            for (size_t i = 0; rt_js_element(&j, &mfirst) == 1; i++) {
                if (i < n)
                    slot_value(&j, &s->v[i * s->nk + (size_t)k]);
                else
                    rt_js_skip(&j);
            }
        }
        return RT_OK;
    }
    rt_js_open(&j, '['); /* row by row */
    for (size_t i = 0; i < n && rt_js_element(&j, &first) == 1; i++) {
        double *row = &s->v[i * s->nk];
        if (rt_js_peek(&j) != RT_JS_OBJECT) {
            for (size_t k = 0; k < s->nk; k++)
                row[k] = NOT_OBJECT;
            rt_js_skip(&j);
            continue;
        }
        rt_js_open(&j, '{');
        mfirst = true;
        while (rt_js_member(&j, &mfirst, &raw, &klen) == 1) {
            int k = key_slot(s, raw, klen);
            if (k < 0)
                rt_js_skip(&j);
            else
                slot_value(&j, &row[k]); /* a key twice: the last, as jansson keeps it */
        }
    }
    return RT_OK;
}

/* Row i's figure in slot k into *out (NaN when absent or null): 1 when it is there, 0 when
 * not, -1 (logged) when the row is no object or the figure no number. */
static int section_get(const ld *l, const section *s, size_t i, int k, double *out)
{
    double v = s->v[i * s->nk + (size_t)k];
    *out = NAN;
    if (v == NOT_OBJECT) {
        bad(l, "%s[%zu]: not an object", s->name, i);
        return -1;
    }
    if (v == NOT_NUMBER) {
        if (s->cols)
            bad(l, "%s.%s[%zu]: not a number", s->name, slot_key(s, k), i);
        else
            bad(l, "%s[%zu].%s: not a number", s->name, i, slot_key(s, k));
        return -1;
    }
    if (isnan(v))
        return 0;
    *out = v;
    return 1;
}

static int read_fields(const ld *l, const section *s, size_t i, double disk_factor, double *row)
{
    for (size_t k = 0; k < s->nf; k++) {
        const in_field *f = &s->f[k];
        double v;
        int got = section_get(l, s, i, 1 + 2 * (int)k, &v);
        if (got == 0 && f->key_alt) {
            got = section_get(l, s, i, 2 + 2 * (int)k, &v);
            v *= f->alt_factor;
        }
        if (got < 0)
            return -1;
        if (f->col == RT_COL_DISK_SPACE_TOTAL_BYTES || f->col == RT_COL_DISK_SPACE_USED_BYTES ||
            f->col == RT_COL_DISK_SPACE_FREE_BYTES)
            v *= disk_factor;
        row[f->col] = v;
    }
    return 0;
}

/* The rows of process_metrics and system_metrics (their values in the document, pm and sm:
 * NULL when absent), paired by index (to the shorter list when both have rows), in the store's
 * units. server_info (root's) fills what the rows lack. */
static rt_error rows_from_metrics(const ld *l, const char *const pm[2], const char *const sm[2], json_t *root,
                                  double interval, double **out, size_t *n_out)
{
    section ps, ss;
    rt_error rc = section_open(l, "process_metrics", pm[0], pm[1], PROC_IN, RT_ARRAY_LEN(PROC_IN), &ps);
    if (rc == RT_OK)
        rc = section_open(l, "system_metrics", sm[0], sm[1], SYS_IN, RT_ARRAY_LEN(SYS_IN), &ss);
    if (rc != RT_OK)
        return rc;
    size_t n = ps.n && ss.n ? (ps.n < ss.n ? ps.n : ss.n) : ps.n + ss.n;
    if (n > SNAP_MAX_ROWS)
        return too_many(l, n);
    /* the Python tracker 0.4's disk space is GiB; 0.5's (its names ending in _mib) GB */
    double disk_factor =
        section_has(l, &ss, "memory_free_mib") || section_has(l, &ss, "memory_used_mib") ? RT_SNAP_GB : RT_SNAP_GIB;
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
    if ((n && !rows) || section_fill(l, &ps, n) != RT_OK || section_fill(l, &ss, n) != RT_OK)
        rc = RT_ERR_NOMEM;
    double cpu_total = 0, prev_ts = NAN;
    for (size_t i = 0; i < n && rc == RT_OK; i++) {
        double *row = rows + i * RT_NCOLS;
        for (int c = 0; c < RT_NCOLS; c++)
            row[c] = NAN;
        double ts = NAN, pts = NAN;
        if ((ss.n && section_get(l, &ss, i, 0, &ts) < 0) || (ps.n && section_get(l, &ps, i, 0, &pts) < 0) ||
            (ss.n && read_fields(l, &ss, i, disk_factor, row) < 0) || (ps.n && read_fields(l, &ps, i, 1, row) < 0)) {
            rc = RT_ERR_PARSE;
            break;
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
    free(ps.v);
    free(ss.v);
    if (rc != RT_OK) {
        free(rows);
        return rc;
    }
    *out = rows;
    *n_out = n;
    return RT_OK;
}

/* ---- our own "columns", read by the scanner ------------------------------------------------- */

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
            if (n > SNAP_MAX_ROWS) {
                rc = too_many(l, n);
                break;
            }
            if (n && !(rows = malloc(n * sizeof(double) * RT_NCOLS))) {
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

/* The members of the top-level object that hold samples, found by split_document: their
 * values in the document (NULL, NULL when absent, or "columns" null). */
typedef struct spans {
    const char *cols[2], *pm[2], *sm[2]; /* "columns", "process_metrics", "system_metrics" */
} spans;

/* The text of the top-level object buf without the members that hold samples (columns,
 * process_metrics, system_metrics: the scanner reads them) into head (malloc'd, for jansson),
 * and where their values are (the last of each, as jansson would keep it). RT_ERR_PARSE
 * (logged) when buf is no JSON object, or the rest is more than SNAP_MAX_HEAD; RT_ERR_NOMEM. */
static rt_error split_document(const ld *l, const char *buf, size_t len, char **head, size_t *head_len, spans *sp)
{
    *head = NULL;
    *sp = (spans){0};
    rt_js j = {.p = buf, .end = buf + len, .c_locale = l->c_locale};
    bool first = true;
    const char *raw;
    size_t klen, rest = 2;
    int r;
    rt_js_type top = rt_js_peek(&j);
    if (top != RT_JS_OBJECT && top != RT_JS_BAD)
        return bad(l, "not a JSON object");
    if (!rt_js_open(&j, '{'))
        return bad(l, "not JSON (%s at byte %zu)", j.err ? j.err : "malformed", (size_t)(j.p - buf));
    while ((r = rt_js_member(&j, &first, &raw, &klen)) == 1) { /* pass 1: where the samples are */
        rt_js_peek(&j);
        const char *v = j.p;
        if (!rt_js_skip(&j))
            break;
        const char **at = key_is(raw, klen, "columns")           ? sp->cols
                          : key_is(raw, klen, "process_metrics") ? sp->pm
                          : key_is(raw, klen, "system_metrics")  ? sp->sm
                                                                 : NULL;
        if (at) {
            bool null = j.p - v == 4 && memcmp(v, "null", 4) == 0;
            at[0] = null ? NULL : v;
            at[1] = null ? NULL : j.p;
        } else {
            rest += klen + 4 + (size_t)(j.p - v);
        }
    }
    if (r != 0 || !rt_js_at_end(&j))
        return bad(l, "not JSON (%s at byte %zu)", j.err ? j.err : "malformed", (size_t)(j.p - buf));
    if (rest > SNAP_MAX_HEAD)
        return bad(l, "%zu bytes besides its samples: more than the %u MiB a snapshot may hold", rest,
                   SNAP_MAX_HEAD >> 20);
    rt_buf h;
    rt_buf_init(&h, rest + 1); /* and the NUL rt_buf keeps */
    rt_buf_append(&h, "{", 1);
    j = (rt_js){.p = buf, .end = buf + len, .c_locale = l->c_locale};
    first = true;
    rt_js_open(&j, '{');
    bool any = false;
    while (rt_js_member(&j, &first, &raw, &klen) == 1) { /* pass 2: the other members */
        rt_js_peek(&j);
        const char *v = j.p;
        rt_js_skip(&j);
        if (key_is(raw, klen, "columns") || key_is(raw, klen, "process_metrics") || key_is(raw, klen, "system_metrics"))
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

/* Loads the snapshot buf[0..len) (plain JSON). own, when not NULL, holds buf and is freed as
 * soon as the samples and the rest are read out of it, before the tracker is filled. */
static rt_error load_json(const ld *l, const char *buf, size_t len, rt_buf *own, rt_tracker **out)
{
    char *head = NULL;
    size_t head_len = 0;
    spans sp;
    rt_error rc = split_document(l, buf, len, &head, &head_len, &sp);
    if (rc != RT_OK)
        return rc;
    json_error_t e;
    json_t *root = json_loadb(head, head_len, 0, &e);
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
        rc = sp.cols[0] ? rows_from_columns(l, sp.cols[0], sp.cols[1], &rows, &n)
                        : rows_from_metrics(l, sp.pm, sp.sm, root, m.interval, &rows, &n);
    if (own) /* all is read out of the text */
        rt_buf_free(own);
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

/* Logs that zlib could not be loaded; returns RT_ERR_UNSUPPORTED. */
static rt_error no_zlib(const ld *l)
{
    char why[320] = "";
    rt_gzip_available(why, sizeof why);
    rt_err_log(&l->lg, RT_LOG_ERROR, "%s: gzipped, and zlib could not be loaded: %s", l->name, why);
    return RT_ERR_UNSUPPORTED;
}

/* The most JSON that gzip bytes may gunzip to (SNAP_MAX_JSON, SNAP_MAX_RATIO past the floor). */
static size_t json_bound(uint64_t gzip_bytes)
{
    uint64_t most = gzip_bytes > SNAP_MAX_JSON / SNAP_MAX_RATIO ? SNAP_MAX_JSON : gzip_bytes * SNAP_MAX_RATIO;
    return most < SNAP_BOMB_FLOOR ? SNAP_BOMB_FLOOR : (size_t)most;
}

/* Says that gzip bytes (all of a buffer, or what a file's stream has read so far) gunzip to more
 * than json_bound allows (logged); returns RT_ERR_PARSE. */
static rt_error too_much_json(const ld *l, uint64_t gzip_bytes)
{
    if (json_bound(gzip_bytes) >= SNAP_MAX_JSON)
        return bad(l, "more than %zu bytes of JSON once gunzipped", SNAP_MAX_JSON);
    return bad(l, "%llu bytes of gzip gunzip to more than %u times as much (a gzip bomb? real snapshots: 10 to 20)",
               (unsigned long long)gzip_bytes, SNAP_MAX_RATIO);
}

/* Loads buf[0..len), gunzipping it first when it is gzip (a caller's buffer). */
static rt_error load_plain_or_gzip(const ld *l, const void *buf, size_t len, rt_tracker **out)
{
    if (!is_gzip(buf, len))
        return load_json(l, buf, len, NULL, out);
    rt_buf plain;
    size_t most = json_bound(len);
    rt_error rc = rt_gunzip(buf, len, most, &plain);
    if (rc == RT_OK)
        return load_json(l, plain.data, plain.len, &plain, out);
    bool over = rc == RT_ERR_NOMEM && plain.len >= most;
    rt_buf_free(&plain);
    if (rc == RT_ERR_UNSUPPORTED)
        return no_zlib(l);
    if (over)
        return too_much_json(l, len);
    return rc == RT_ERR_PARSE || rc == RT_ERR_INVALID ? bad(l, "not a complete gzip stream") : rc;
}

/* Makes l's "C" locale (the scanner's numbers): RT_OK or RT_ERR_NOMEM. */
static rt_error with_locale(ld *l)
{
    l->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return l->c_locale == (locale_t)0 ? RT_ERR_NOMEM : RT_OK;
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
    if (with_locale(&l) != RT_OK)
        return RT_ERR_NOMEM;
    rt_error rc = load_plain_or_gzip(&l, buf, len, out);
    freelocale(l.c_locale);
    return rc;
}

/* The rest of fd, whose first bytes head[0..n) are read, gunzipped into b (b's max is
 * SNAP_MAX_JSON): the compressed file is never held, only its JSON, never more than
 * json_bound of the compressed bytes read so far. RT_OK, or RT_ERR_PARSE (logged: no whole
 * gzip stream, too much JSON), RT_ERR_IO (errno kept), RT_ERR_UNSUPPORTED, RT_ERR_NOMEM (none
 * of them logged). */
static rt_error gunzip_fd(const ld *l, int fd, const char *head, size_t n, rt_buf *b)
{
    rt_gunzip_stream *z;
    rt_error rc = rt_gunzip_stream_new(fd, head, n, &z);
    if (rc != RT_OK)
        return rc;
    for (;;) {
        if (b->cap - b->len < 65536 && b->cap < b->max) {
            size_t want = b->len + (b->len > 65536 ? b->len : 65536);
            if (rt_buf_reserve(b, want < b->max ? want : b->max) < 0) {
                rc = RT_ERR_NOMEM;
                break;
            }
        }
        char spare;
        bool full = b->cap == b->len; /* at the bound: one byte more would be too much */
        ssize_t k = rt_gunzip_stream_read(z, full ? &spare : b->data + b->len, full ? 1 : b->cap - b->len);
        if (k > 0 && full) {
            rc = too_much_json(l, rt_gunzip_stream_in(z));
            break;
        }
        if (k <= 0) {
            rc = k == 0 ? RT_OK : k == -1 ? RT_ERR_IO : bad(l, "not a complete gzip stream");
            break;
        }
        b->len += (size_t)k;
        if (b->len > json_bound(rt_gunzip_stream_in(z))) {
            rc = too_much_json(l, rt_gunzip_stream_in(z));
            break;
        }
    }
    int err = errno;
    rt_gunzip_stream_free(z);
    errno = err;
    return rc;
}

/* The snapshot in fd into b (at most SNAP_MAX_JSON of JSON, gunzipped when it is gzip), its
 * failures logged (but out of memory). RT_OK or the error to return. */
static rt_error read_snapshot_fd(const ld *l, int fd, rt_buf *b)
{
    rt_buf_init(b, SNAP_MAX_JSON);
    char head[2];
    ssize_t n = 0, k;
    while (n < 2 && ((k = read(fd, head + n, 2 - (size_t)n)) > 0 || (k < 0 && errno == EINTR)))
        n += k > 0 ? k : 0;
    rt_error rc;
    if (n == 2 && is_gzip(head, 2)) {
        rc = gunzip_fd(l, fd, head, 2, b);
        if (rc == RT_ERR_UNSUPPORTED)
            return no_zlib(l);
    } else {
        ssize_t got = rt_read_fd_grow(fd, b, RT_READ_TO_EOF); /* from the start: head again */
        if (got == -EFBIG)
            return bad(l, "larger than %zu bytes", b->max);
        rc = got == -ENOMEM ? RT_ERR_NOMEM : got < 0 ? RT_ERR_IO : RT_OK;
        if (got < 0)
            errno = (int)-got;
    }
    if (rc == RT_ERR_IO) {
        int err = errno;
        rt_err_log(&l->lg, RT_LOG_ERROR, "%s: %s", l->name, strerror(err));
        errno = err;
    }
    return rc == RT_OK && b->len == 0 ? bad(l, "empty") : rc;
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
    rt_buf_init(&b, SNAP_MAX_JSON);
    rt_error rc = with_locale(&l);
    if (rc == RT_OK) {
        rc = read_snapshot_fd(&l, fd, &b);
        if (rc == RT_OK)
            rc = load_json(&l, b.data, b.len, &b, out);
        freelocale(l.c_locale);
    }
    close(fd);
    rt_buf_free(&b);
    return rc;
}
