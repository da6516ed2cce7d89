/* reader_csv.c - the reader's CSV side: a header recognised as the tool's CSV or one of the
 * Python resource-tracker's, its columns mapped through a table, and each row into a record.
 *
 *  - "csv": the header rt_csv_header() (docs/contracts.md §3). Interval amounts as written;
 *    *_gb are GB of 10^9 bytes (from 0.17, as both peers write them; 0.16 and before wrote
 *    GiB under the same header, which nothing in the file tells, so such a file's disk space
 *    reads 6.9% low); process_utime + process_stime is the process's CPU seconds;
 *    process_memory_mib PSS.
 *  - "python-process", "python-system", "python-combined": the Python resource-tracker's
 *    ProcessTracker and SystemTracker CSV, and get_combined_metrics() (system_ / process_
 *    prefixes; docs/contracts.md §13). From the Python resource-tracker 0.4's source (its
 *    tracker module's diff_stats): utime, stime, read_bytes, write_bytes, disk_*_bytes and
 *    net_*_bytes are amounts in the interval; memory and memory_used are kB (KiB from
 *    /proc, PSS for the process): divided by 1024 for MiB; disk_space_*_gb are divided by
 *    1024**3, so GiB; gpu_vram is MiB; cpu_usage and gpu_usage are fractional cores and
 *    GPUs. Its header cells are quoted (QUOTE_NONNUMERIC) and None is written as "", both
 *    read. The Python resource-tracker 0.5's names are read too (memory_mib and
 *    memory_used_mib in MiB, disk_read_bytes / disk_write_bytes for the process,
 *    gpu_vram_mib; a file with them has disk_space_*_gb in GB of 1000**3 bytes); its
 *    combined metrics share the tool's names and are told from the tool's CSV by their
 *    quoted header (the tool never quotes it).
 *    From 0.15 the tool's CSV may have the energy columns after the 32 shared ones
 *    (system_energy_joules, system_energy_method, process_energy_joules,
 *    process_energy_method): read when present, a figure only with its method's word.
 * Rows carry no interval: reader.c takes it from the timestamps. Figures a format lacks are
 * NaN (the CSVs have no core count, total memory, GPU count, RSS). */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../core/methods.h"
#include "reader_priv.h"

/* What a CSV column feeds: a double of rt_record as it is (C_FIG, at off), or a figure the row
 * works out (the timestamp, the CPU seconds from two columns, an energy with its method). */
typedef enum col_kind {
    C_FIG, C_TS, C_P_UTIME, C_P_STIME, C_ENERGY, C_ENERGY_METHOD, C_P_ENERGY, C_P_ENERGY_METHOD, C_KINDS
} col_kind;

/* A column read: its header name, what it feeds and the scale its cells are multiplied by. */
typedef struct rt_csv_col {
    const char *name;
    col_kind kind;
    size_t off; /* C_FIG: of the double in rt_record */
    double scale;
} colmap;

#define REC(member) offsetof(rt_record, member) /* C_FIG's off */
#define GIB (1024.0 * 1024.0 * 1024.0)
#define GB 1e9 /* the Python tracker 0.5's disk_space_*_gb */

/* The tool's CSV (docs/contracts.md §3); "timestamp", read in every format, is in column_for. */
static const colmap tool_cols[] = {
    {"system_cpu_usage", C_FIG, REC(cpu_cores), 1},
    {"system_memory_used_mib", C_FIG, REC(memory_used_mib), 1},
    {"system_disk_read_bytes", C_FIG, REC(disk_read_bytes), 1},
    {"system_disk_write_bytes", C_FIG, REC(disk_write_bytes), 1},
    {"system_disk_space_total_gb", C_FIG, REC(disk_space_total_bytes), GB},
    {"system_disk_space_used_gb", C_FIG, REC(disk_space_used_bytes), GB},
    {"system_net_recv_bytes", C_FIG, REC(net_recv_bytes), 1},
    {"system_net_sent_bytes", C_FIG, REC(net_sent_bytes), 1},
    {"system_gpu_usage", C_FIG, REC(gpu_usage), 1},
    {"system_gpu_vram_mib", C_FIG, REC(gpu_vram_mib), 1},
    {"system_gpu_utilized", C_FIG, REC(gpu_utilized), 1},
    {"process_pid", C_FIG, REC(process_pid), 1},
    {"process_children", C_FIG, REC(process_children), 1},
    {"process_utime", C_P_UTIME, 0, 1},
    {"process_stime", C_P_STIME, 0, 1},
    {"process_cpu_usage", C_FIG, REC(process_cores), 1},
    {"process_memory_mib", C_FIG, REC(process_pss_mib), 1},
    {"process_disk_read_bytes", C_FIG, REC(process_read_bytes), 1},
    {"process_disk_write_bytes", C_FIG, REC(process_write_bytes), 1},
    {"process_gpu_usage", C_FIG, REC(process_gpu_usage), 1},
    {"process_gpu_vram_mib", C_FIG, REC(process_gpu_vram_mib), 1},
    {"process_gpu_utilized", C_FIG, REC(process_gpu_utilized), 1},
    /* 0.15: after the 32 shared columns, read when present; a method is a word */
    {"system_energy_joules", C_ENERGY, 0, 1},
    {"system_energy_method", C_ENERGY_METHOD, 0, 1},
    {"process_energy_joules", C_P_ENERGY, 0, 1},
    {"process_energy_method", C_P_ENERGY_METHOD, 0, 1},
};

/* The Python SystemTracker's columns (also after "system_" in the combined metrics). */
static const colmap py_system_cols[] = {
    {"cpu_usage", C_FIG, REC(cpu_cores), 1},
    {"memory_used", C_FIG, REC(memory_used_mib), 1.0 / 1024},
    {"memory_used_mib", C_FIG, REC(memory_used_mib), 1}, /* 0.5 */
    {"disk_read_bytes", C_FIG, REC(disk_read_bytes), 1},
    {"disk_write_bytes", C_FIG, REC(disk_write_bytes), 1},
    {"disk_space_total_gb", C_FIG, REC(disk_space_total_bytes), GIB},
    {"disk_space_used_gb", C_FIG, REC(disk_space_used_bytes), GIB},
    {"net_recv_bytes", C_FIG, REC(net_recv_bytes), 1},
    {"net_sent_bytes", C_FIG, REC(net_sent_bytes), 1},
    {"gpu_usage", C_FIG, REC(gpu_usage), 1},
    {"gpu_vram", C_FIG, REC(gpu_vram_mib), 1},
    {"gpu_vram_mib", C_FIG, REC(gpu_vram_mib), 1}, /* 0.5 */
    {"gpu_utilized", C_FIG, REC(gpu_utilized), 1},
};

/* The Python ProcessTracker's columns (also after "process_" in the combined metrics). */
static const colmap py_process_cols[] = {
    {"pid", C_FIG, REC(process_pid), 1},
    {"children", C_FIG, REC(process_children), 1},
    {"utime", C_P_UTIME, 0, 1},
    {"stime", C_P_STIME, 0, 1},
    {"cpu_usage", C_FIG, REC(process_cores), 1},
    {"memory", C_FIG, REC(process_pss_mib), 1.0 / 1024},
    {"read_bytes", C_FIG, REC(process_read_bytes), 1},
    {"write_bytes", C_FIG, REC(process_write_bytes), 1},
    {"gpu_usage", C_FIG, REC(process_gpu_usage), 1},
    {"gpu_vram", C_FIG, REC(process_gpu_vram_mib), 1},
    /* 0.5's names */
    {"memory_mib", C_FIG, REC(process_pss_mib), 1},
    {"disk_read_bytes", C_FIG, REC(process_read_bytes), 1},
    {"disk_write_bytes", C_FIG, REC(process_write_bytes), 1},
    {"gpu_vram_mib", C_FIG, REC(process_gpu_vram_mib), 1},
    {"gpu_utilized", C_FIG, REC(process_gpu_utilized), 1},
};

/* The next cell of the row at *p (up to e): sets its content [*cs, *ce) (without quotes) and
 * moves *p past the cell and its comma. Returns 1 when a cell was read and more follow, 0
 * for the last cell, -1 for a malformed quoted cell. *quoted tells whether it was quoted. */
static int next_cell(const char **p, const char *e, const char **cs, const char **ce, bool *quoted)
{
    const char *s = *p;
    *quoted = s < e && *s == '"';
    if (*quoted) {
        const char *q = s + 1;
        for (;;) {
            q = memchr(q, '"', (size_t)(e - q));
            if (!q)
                return -1;
            if (q + 1 < e && q[1] == '"') {
                q += 2;
                continue;
            }
            break;
        }
        *cs = s + 1;
        *ce = q;
        s = q + 1;
        if (s < e && *s != ',')
            return -1;
    } else {
        const char *c = memchr(s, ',', (size_t)(e - s));
        *cs = s;
        *ce = s = c ? c : e;
    }
    if (s >= e)
        return 0;
    *p = s + 1;
    return 1;
}

/* Whether s[0..n) equals word, ignoring ASCII case. */
static bool word_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* Parses a CSV number cell: empty, "nan" or "inf" (any case, signed) are NaN. Returns false
 * when the cell holds anything else than a decimal number. */
static bool cell_number(const char *s, size_t n, locale_t loc, double *out)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    *out = NAN;
    if (n == 0)
        return true;
    const char *w = s + (*s == '-' || *s == '+');
    size_t wn = n - (size_t)(w - s);
    if (word_is(w, wn, "nan") || word_is(w, wn, "inf") || word_is(w, wn, "infinity"))
        return true;
    const char *p = w, *e = s + n;
    size_t digits = 0;
    for (; p < e && *p >= '0' && *p <= '9'; p++)
        digits++;
    if (p < e && *p == '.')
        for (p++; p < e && *p >= '0' && *p <= '9'; p++)
            digits++;
    if (digits == 0)
        return false;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return false;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    return p == e && rt_decimal_to_double(s, n, loc, out);
}

/* Looks a column name up in a table; returns the entry or NULL. */
static const colmap *lookup(const colmap *t, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && memcmp(t[i].name, name, len) == 0)
            return &t[i];
    return NULL;
}

/* The entry for column name[0..len) in format f, or NULL when the column is not read. */
static const colmap *column_for(rt_reader_fmt f, const char *name, size_t len)
{
    static const colmap ts = {"timestamp", C_TS, 0, 1};
    if (len == 9 && memcmp(name, "timestamp", 9) == 0)
        return &ts;
    switch (f) {
    case F_CSV: return lookup(tool_cols, RT_ARRAY_LEN(tool_cols), name, len);
    case F_PY_SYSTEM: return lookup(py_system_cols, RT_ARRAY_LEN(py_system_cols), name, len);
    case F_PY_PROCESS: return lookup(py_process_cols, RT_ARRAY_LEN(py_process_cols), name, len);
    case F_PY_COMBINED:
        if (len > 7 && memcmp(name, "system_", 7) == 0)
            return lookup(py_system_cols, RT_ARRAY_LEN(py_system_cols), name + 7, len - 7);
        if (len > 8 && memcmp(name, "process_", 8) == 0)
            return lookup(py_process_cols, RT_ARRAY_LEN(py_process_cols), name + 8, len - 8);
        return NULL;
    default: return NULL;
    }
}

/* Whether the header row line[0..n) has a column named name. */
static bool has_column(const char *line, size_t n, const char *name)
{
    const char *p = line, *e = line + n, *cs, *ce;
    bool q;
    int more = 1;
    while (more == 1) {
        more = next_cell(&p, e, &cs, &ce, &q);
        if (more < 0)
            return false;
        if ((size_t)(ce - cs) == strlen(name) && memcmp(cs, name, (size_t)(ce - cs)) == 0)
            return true;
    }
    return false;
}

/* Recognises a CSV header and maps its columns. Returns false when it is none we know. */
bool rt_reader_csv_header(rt_reader *r, const char *line, size_t n)
{
    if (!has_column(line, n, "timestamp"))
        return false;
    bool v05 = false; /* the Python tracker 0.5's names: its disk space is GB */
    if (has_column(line, n, "system_memory_used_mib") && n > 0 && line[0] == '"')
        r->format = F_PY_COMBINED, v05 = true;
    else if (has_column(line, n, "system_memory_used_mib"))
        r->format = F_CSV;
    else if (has_column(line, n, "system_memory_used") || has_column(line, n, "process_memory") ||
             has_column(line, n, "process_memory_mib"))
        r->format = F_PY_COMBINED, v05 = has_column(line, n, "process_memory_mib");
    else if (has_column(line, n, "memory_used") && has_column(line, n, "cpu_usage"))
        r->format = F_PY_SYSTEM;
    else if (has_column(line, n, "memory_used_mib") && has_column(line, n, "cpu_usage"))
        r->format = F_PY_SYSTEM, v05 = true;
    else if (has_column(line, n, "pid") && (has_column(line, n, "memory") || has_column(line, n, "memory_mib")))
        r->format = F_PY_PROCESS;
    else
        return false;
    const char *p = line, *e = line + n, *cs, *ce;
    bool q;
    int more = 1;
    r->ncols = 0;
    while (more == 1) {
        more = next_cell(&p, e, &cs, &ce, &q);
        if (more < 0)
            return false;
        const colmap *m = column_for(r->format, cs, (size_t)(ce - cs));
        if (r->ncols < MAX_COLS) {
            r->col[r->ncols] = m;
            r->scale[r->ncols] = m ? m->scale : 1;
            if (v05 && m && m->kind == C_FIG &&
                (m->off == offsetof(rt_record, disk_space_total_bytes) ||
                 m->off == offsetof(rt_record, disk_space_used_bytes)))
                r->scale[r->ncols] = GB;
        }
        r->ncols++;
    }
    return true;
}

/* One CSV row into rec. Returns NULL or what is wrong with it (static or in r->msg). */
const char *rt_reader_csv_row(rt_reader *r, const char *line, size_t n, rt_record *rec)
{
    double v[MAX_COLS]; /* the cells read, scaled (an energy method: its rank), by column */
    const char *p = line, *e = line + n, *cs, *ce;
    bool quoted;
    size_t ncol = 0;
    int more = 1;
    while (more == 1) {
        more = next_cell(&p, e, &cs, &ce, &quoted);
        if (more < 0)
            return "malformed quoted cell";
        const colmap *m = ncol < MAX_COLS && ncol < r->ncols ? r->col[ncol] : NULL;
        if (m && (m->kind == C_ENERGY_METHOD || m->kind == C_P_ENERGY_METHOD)) {
            /* a word: measured, sampled or estimated (empty: none) as its rank */
            char w[16];
            size_t wn = (size_t)(ce - cs);
            int rank = 0;
            if (wn > 0 && wn < sizeof w) {
                memcpy(w, cs, wn);
                w[wn] = '\0';
                rank = rt_energy_method_rank(w);
            }
            if (wn > 0 && rank == 0) {
                snprintf(r->msg, sizeof r->msg, "column %zu is no energy method (measured, sampled, estimated)",
                         ncol + 1);
                return r->msg;
            }
            v[ncol] = rank ? rank : NAN;
        } else if (m) {
            double x;
            if (!cell_number(cs, (size_t)(ce - cs), r->c_locale, &x)) {
                int cl = ce - cs > 24 ? 24 : (int)(ce - cs);
                snprintf(r->msg, sizeof r->msg, "column %zu is not a number: \"%.*s\"", ncol + 1, cl, cs);
                return r->msg;
            }
            v[ncol] = x * r->scale[ncol];
        }
        ncol++;
    }
    if (ncol != r->ncols) {
        snprintf(r->msg, sizeof r->msg, "%zu columns where the header has %zu", ncol, r->ncols);
        return r->msg;
    }
    /* the row's own figures, then the cells into the record (a later column of a figure wins) */
    double own[C_KINDS];
    for (size_t k = 0; k < C_KINDS; k++)
        own[k] = NAN;
    for (size_t i = 0; i < ncol && i < MAX_COLS; i++)
        if (r->col[i] && r->col[i]->kind != C_FIG)
            own[r->col[i]->kind] = v[i];
    if (isnan(own[C_TS]))
        return "no timestamp";
    if (!rt_unix_time(own[C_TS]))
        return "the timestamp is no Unix time in seconds";
    rt_record_null(rec);
    for (size_t i = 0; i < ncol && i < MAX_COLS; i++)
        if (r->col[i] && r->col[i]->kind == C_FIG)
            memcpy((char *)rec + r->col[i]->off, &v[i], sizeof v[i]);
    rec->timestamp_secs = own[C_TS];
    rec->process_cpu_secs = own[C_P_UTIME] + own[C_P_STIME];
    double method = own[C_ENERGY_METHOD], process_method = own[C_P_ENERGY_METHOD];
    rec->energy_method = isnan(method) ? NULL : rt_energy_method_of_rank((int)method);
    rec->process_energy_method = isnan(process_method) ? NULL : rt_energy_method_of_rank((int)process_method);
    rec->energy_joules = rec->energy_method ? own[C_ENERGY] : NAN;
    rec->process_energy_joules = rec->process_energy_method ? own[C_P_ENERGY] : NAN;
    return NULL;
}
