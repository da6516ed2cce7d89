/* reader_priv.h - what the reader's two files share (reader.c: lines, formats, JSON, records,
 * opening; reader_csv.c: the CSV formats): the reader's state and the steps each offers the
 * other. Not public. */
#ifndef RT_READER_PRIV_H
#define RT_READER_PRIV_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"
#include "../core/jsonscan.h"
#include "jsonline.h"
#include "record.h"

#define MAX_COLS 256 /* CSV columns looked at (more are allowed, not read) */
#define MAX_TIME 1e11 /* timestamps past year 5000 are no Unix time in seconds */

typedef enum rt_reader_fmt { F_JSON, F_CSV, F_PY_PROCESS, F_PY_SYSTEM, F_PY_COMBINED } rt_reader_fmt;

struct rt_reader {
    char *name;
    rt_logger log;
    rt_reader_fmt format;
    locale_t c_locale;
    /* input: an fd (gunzipped when gz) read in chunks into buf, or a caller's buffer */
    int fd;
    bool own_fd, eof, gz_broken; /* gz_broken: the gzip stream broke (the input ends there) */
    rt_error ahead_err;          /* the read ahead failed: said once the record in hand is taken */
    struct rt_gunzip_stream *gz; /* the input is gzip: its plain bytes, else NULL */
    char *buf;        /* owned, NULL over a caller's buffer */
    const char *data; /* buf, or the caller's buffer */
    size_t cap, start, end, scan;
    size_t chunk, max_line; /* bytes asked of each read(2); a longer line ends the read */
    uint64_t lineno;
    const char *pending; /* the first line, kept for the JSON parser */
    size_t pending_len;
    bool pending_no_nl;
    /* counts */
    uint64_t records, skipped, shown;
    /* CSV (reader_csv.c): what each column feeds (NULL: not read) and its scale */
    size_t ncols;
    const struct rt_csv_col *col[MAX_COLS];
    double scale[MAX_COLS];
    char msg[160];
    /* JSON: the line being read and the previous good one */
    rt_jline *jl, *jl_prev;
    bool rs; /* a line was the Rust tool's: rt_reader_format says "json-rs" */
    bool have_prev;
    double last_pid, last_read, last_write; /* the tree's last pid and I/O totals, NaN: none */
    /* records: the one handed out and the one read ahead */
    rt_record rec[2];
    char job[2][RT_JL_JOB];
    int ci;
    /* the GPUs one by one of each of the two records (rt_record.gpu points here) */
    rt_gpu gpus[2][RT_JL_MAX_GPU];
    const rt_gpu *gpu_ptrs[2][RT_JL_MAX_GPU];
    char uuids[2][RT_JL_MAX_GPU][RT_JL_UUID];
    bool started, have_cur, have_ahead;
    double prev_ts;
    char errmsg[256]; /* the last problem (rt_reader_errmsg), "" none */
};

/* Whether t can be a Unix time in seconds. */
static inline bool rt_unix_time(double t)
{
    return t >= 0 && t <= MAX_TIME;
}

/* ---- reader_csv.c ---- */

/* Recognises line[0..n) as a CSV header we know, setting r->format and the column map.
 * Returns false when it is none (r->format then unspecified). */
bool rt_reader_csv_header(rt_reader *r, const char *line, size_t n);

/* One CSV row into rec (interval NaN, no job name). Returns NULL, or what is wrong with it
 * (static text or r->msg, valid until the next row). */
const char *rt_reader_csv_row(rt_reader *r, const char *line, size_t n, rt_record *rec);

#endif
