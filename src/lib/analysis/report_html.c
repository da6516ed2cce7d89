/* report_html.c - writes the report: one self-contained HTML page (inline CSS, the embedded
 * dygraphs library, the data as inline arrays), charts over time with synchronized zoom and
 * crosshair, then the tables (report_tables.c). Streams through one fixed buffer (rpt_hw):
 * memory does not grow with the run. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/utf8.h"
#include "../core/core.h"
#include "energy_words.h"
#include "report_int.h"

/* the chart library, generated from libjs-dygraphs at build time (cmake/embed.cmake) */
extern const char rt_asset_dygraph_js[], rt_asset_dygraph_css[], rt_asset_synchronizer_js[], rt_asset_crosshair_js[];
extern const size_t rt_asset_dygraph_js_len, rt_asset_dygraph_css_len, rt_asset_synchronizer_js_len,
    rt_asset_crosshair_js_len;

/* ---- the output: one buffer, flushed to the fd when full ------------------------------- */


static void rpt_hw_flush(rpt_hw *w)
{
    if (!w->err && w->len > 0 && rt_out_write(&w->out, w->buf, w->len) < 0)
        w->err = errno ? errno : EIO;
    w->len = 0;
}

void rpt_hw_put(rpt_hw *w, const char *s, size_t n)
{
    while (n > 0) {
        if (w->len == sizeof w->buf)
            rpt_hw_flush(w);
        size_t room = sizeof w->buf - w->len, k = n < room ? n : room;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

void rpt_hw_lit(rpt_hw *w, const char *s)
{
    rpt_hw_put(w, s, strlen(s));
}

/* printf-style, for short pieces (numbers, units) */
static void hw_put_to(void *w, const char *s, size_t n)
{
    rpt_hw_put(w, s, n);
}
#define rpt_hw_fmt(w, ...) rt_putf(hw_put_to, 1 ? (w) : (rpt_hw *)0, __VA_ARGS__)

/* Walks s by UTF-8 character: an invalid byte written as bad (U+FFFD as the output writes it),
 * each character handed to put (its k bytes at p). */
static void each_char(rpt_hw *w, const char *s, const char *bad, void (*put)(rpt_hw *, const unsigned char *, size_t))
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n > 0) {
        size_t k = rt_utf8_len(p, n);
        if (k == 0) {
            rpt_hw_lit(w, bad);
            k = 1;
        } else {
            put(w, p, k);
        }
        p += k;
        n -= k;
    }
}

/* One character of HTML text (rpt_hw_html). */
static void html_char(rpt_hw *w, const unsigned char *p, size_t k)
{
    if (k > 1) {
        rpt_hw_put(w, (const char *)p, k);
        return;
    }
    switch (*p) {
    case '&': rpt_hw_lit(w, "&amp;"); break;
    case '<': rpt_hw_lit(w, "&lt;"); break;
    case '>': rpt_hw_lit(w, "&gt;"); break;
    case '"': rpt_hw_lit(w, "&quot;"); break;
    case '\'': rpt_hw_lit(w, "&#39;"); break;
    default:
        if (*p >= 0x20 || *p == '\t' || *p == '\n')
            rpt_hw_put(w, (const char *)p, 1);
    }
}

/* s as HTML text or attribute value: & < > " ' escaped, control characters dropped (tab and
 * newline kept), invalid UTF-8 replaced by U+FFFD. */
void rpt_hw_html(rpt_hw *w, const char *s)
{
    each_char(w, s, "\xEF\xBF\xBD", html_char);
}

/* a number for the page's script: null when not finite, else 6 significant digits */
static void rpt_hw_num(rpt_hw *w, double v)
{
    if (!isfinite(v))
        rpt_hw_lit(w, "null");
    else if (v == 0)
        rpt_hw_lit(w, "0");
    else
        rpt_hw_fmt(w, "%.6g", v);
}

/* seconds for the page's script with 3 decimals: null when not finite (never "inf" or "nan") */
static void rpt_hw_secs(rpt_hw *w, double v)
{
    if (isfinite(v))
        rpt_hw_fmt(w, "%.3f", v);
    else
        rpt_hw_lit(w, "null");
}

/* ---- charts ------------------------------------------------------------------------------ */

#define CHART_SERIES 8 /* the most lines a chart defines (its series end at a -1) */

typedef struct chart_def {
    const char *key, *title, *unit; /* unit: the page script's formatter: cores, gpus, mib, rate, bytes,
                                     * watts, pct */
    int series[CHART_SERIES];       /* RPT_* indices, -1 ends */
    const char *names[CHART_SERIES];
    const char *colors[CHART_SERIES];
    bool gpu_only;
    int marks; /* the cgroup's marks it shows: 0 none, 1 CPU (throttling, quota), 2 memory (OOM kills, limit) */
    const char *zero; /* what a chart of zeros says instead, NULL: drawn anyway; "" a level:
                       * one that never changed says "VALUE throughout" */
    const char *title05, *names05[CHART_SERIES]; /* the title and lines in the Python resource-tracker
                                                  * 0.5's words (RT_REPORT_WORDING_PY05) */
    unsigned required; /* lines (bit k: series[k]) of which one must have a figure for the chart to
                        * show at all; 0: any line */
    unsigned quiet;    /* lines left out when they never rose above 0 */
    unsigned right;    /* lines drawn on an axis of their own at the right when a line of the job's
                        * is drawn beside them (the machine's memory: the job's own peak sets the
                        * scale, not the machine's gigabytes) */
} chart_def;

static const chart_def charts[] = {
    {"cpu", "CPU", "cores", {RPT_JOB_CORES, RPT_CPU_CORES, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"}, false, 1,
     NULL, "CPU Usage", {"Process CPU usage", "System CPU usage"}, 0, 0, 0},
    {"memory", "Memory", "mib", {RPT_JOB_PSS, RPT_JOB_RSS, RPT_MEM_USED, -1}, {"job PSS", "job RSS", "machine used"},
     {"#d62728", "#ff7f0e", "#1f77b4"}, false, 2, NULL, "Memory Usage",
     {"Process memory usage (PSS)", "Process memory usage (RSS)", "System used memory"}, 0, 0, 0x4},
    {"gpu", "GPU utilization", "gpus", {RPT_JOB_GPU, RPT_GPU, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"}, true,
     0, "every GPU idle", "GPU Usage", {"Process GPU usage", "System GPU usage"}, 0, 0, 0},
    /* 0.19: what the GPUs did (NVML GPM), beside their utilization; the FP units' lines only where
     * they worked; not at all without a GPM figure */
    {"gpuwork", "GPU work", "pct",
     {RPT_GPU_SM, RPT_GPU_TENSOR, RPT_GPU_DRAM, RPT_GPU_FP32, RPT_GPU_FP16, RPT_GPU_FP64, RPT_GPU_UTIL, -1},
     {"SM active", "tensor cores", "DRAM bandwidth", "FP32", "FP16", "FP64", "utilization (NVML)"},
     {"#d62728", "#9467bd", "#2ca02c", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"}, true, 0, "no work on the GPUs",
     "GPU Work", {"SM active", "Tensor cores", "DRAM bandwidth", "FP32", "FP16", "FP64", "GPU utilization (NVML)"},
     0x3f, 0x38, 0},
    {"vram", "GPU memory (VRAM)", "mib", {RPT_JOB_VRAM, RPT_VRAM, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"},
     true, 0, "none used", "VRAM Usage", {"Process VRAM used", "System VRAM used"}, 0, 0, 0},
    {"disk", "Disk I/O", "rate", {RPT_JOB_READ, RPT_JOB_WRITE, RPT_DISK_READ, RPT_DISK_WRITE, -1},
     {"job read", "job write", "disk read", "disk write"}, {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"}, false, 0,
     "nothing read or written", "Disk I/O Usage",
     {"Process disk read", "Process disk write", "System disk read", "System disk write"}, 0, 0, 0},
    {"network", "Network", "rate", {RPT_NET_RECV, RPT_NET_SENT, -1, -1}, {"received", "sent"}, {"#1f77b4", "#2ca02c"},
     false, 0, "nothing sent or received", "Network Usage",
     {"System inbound network traffic", "System outbound network traffic"}, 0, 0, 0},
    {"space", "Disk space used", "bytes", {RPT_DISK_SPACE, -1, -1, -1}, {"used"}, {"#9467bd"}, false, 0, "",
     "Disk Space Usage", {"System disk space used"}, 0, 0, 0},
    /* 0.15: its title names the method (chart_title), the least exact of its records' */
    {"power", "Power", "watts", {RPT_JOB_POWER, RPT_POWER, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"},
     false, 0, "", "Power Usage", {"Process power", "System power"}, 0, 0, 0},
};

/* One line of a chart as the page draws it: its series (RPT_*), name and colour. */
typedef struct chart_line {
    int series;
    char name[192];
    const char *color;
} chart_line;
#define CHART_LINES (RPT_POWER_PARTS + 2) /* the most lines of a chart: the power chart's */

/* The energy a series stands for in the run (its cells' power x seconds summed). */
static double series_joules(const rt_report *r, int k)
{
    double j = 0;
    for (size_t i = 0; i < r->n; i++)
        j += r->b[i].c[k].sum;
    return j;
}

/* The power chart's lines by part (0.19), where the records carried their energy's domains:
 * each part's ("job GPU (measured by NVML)": the job's share, or the machine's without a tree),
 * the largest first, each in its kind's colour; then the job's total when there are several
 * parts, then the machine's (left out without a tree when it is the one part's line). Returns
 * how many, 0 when no part has a figure (the chart is then as before 0.19). */
static size_t power_part_lines(const rt_report *r, const bool present[RPT_SERIES], int wording, chart_line *out)
{
    /* a kind's own colour (GPU green, CPU orange, memory purple) where no other line took it */
    static const char *const colors[] = {"#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
    static const char *const kinds[] = {"gpu", "cpu", "dram"};
    bool taken[RT_ARRAY_LEN(colors)] = {false};
    bool py05 = wording == RT_REPORT_WORDING_PY05, job = r->parts_job;
    size_t order[RPT_POWER_PARTS], n = 0;
    double joules[RPT_POWER_PARTS];
    for (size_t k = 0; k < r->n_parts; k++) { /* an insertion sort, the largest first: stable */
        if (!present[RPT_POWER_PART + k])
            continue;
        joules[k] = series_joules(r, RPT_POWER_PART + (int)k);
        size_t at = n++;
        for (; at > 0 && joules[order[at - 1]] < joules[k]; at--)
            order[at] = order[at - 1];
        order[at] = k;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = order[i];
        char noun[48], how[96];
        rt_ew_noun(r->parts[k].kind, job ? 1 : r->parts[k].devices, noun, sizeof noun);
        rt_ew_how(r->parts[k].has_source ? r->parts[k].source : NULL, rpt_method_word(r->parts[k].method), how,
                  sizeof how);
        size_t c = 0;
        while (c < RT_ARRAY_LEN(kinds) && strcmp(r->parts[k].kind, kinds[c]) != 0)
            c++;
        if (c >= RT_ARRAY_LEN(kinds) || taken[c])
            for (c = 0; taken[c];) /* the first free one: 7 colours, at most 5 parts */
                c++;
        taken[c] = true;
        out[i].series = RPT_POWER_PART + (int)k;
        out[i].color = colors[c];
        if (py05)
            snprintf(out[i].name, sizeof out[i].name, "%s %s power (%s)", job ? "Process" : "System", noun, how);
        else
            snprintf(out[i].name, sizeof out[i].name, "%s%s (%s)", job ? "job " : "", noun, how);
    }
    if (!n)
        return 0;
    size_t m = n;
    if (job && n > 1 && present[RPT_JOB_POWER])
        out[m++] = (chart_line){RPT_JOB_POWER, "", "#d62728"};
    double machine = present[RPT_POWER] ? series_joules(r, RPT_POWER) : NAN, one = joules[order[0]];
    if (present[RPT_POWER] && (job || n > 1 || fabs(machine - one) > 1e-3 * fabs(machine)))
        out[m++] = (chart_line){RPT_POWER, "", "#1f77b4"};
    for (size_t i = n; i < m; i++)
        snprintf(out[i].name, sizeof out[i].name, "%s",
                 out[i].series == RPT_POWER ? (py05 ? "System power" : "machine") : (py05 ? "Process power" : "job"));
    return m;
}

/* Whether series k ever rose above 0. */
static bool series_rose(const rt_report *r, int k)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->b[i].c[k].weight > 0 && r->b[i].c[k].max > 0)
            return true;
    return false;
}

/* Chart i's lines with a figure, in the page's wording: the chart's own (none when none of its
 * required lines has a figure; a quiet line only when it rose above 0), the power chart's by part
 * where it has parts. Returns how many. */
static size_t chart_lines(const rt_report *r, const bool present[RPT_SERIES], size_t i, int wording,
                          chart_line out[CHART_LINES])
{
    const chart_def *c = &charts[i];
    size_t n = strcmp(c->unit, "watts") == 0 ? power_part_lines(r, present, wording, out) : 0;
    if (n)
        return n;
    bool required = !c->required;
    for (int k = 0; k < CHART_SERIES && c->series[k] >= 0; k++)
        required |= (c->required >> k & 1) && present[c->series[k]];
    for (int k = 0; required && k < CHART_SERIES && c->series[k] >= 0 && n < CHART_LINES; k++) {
        if (!present[c->series[k]] || ((c->quiet >> k & 1) && !series_rose(r, c->series[k])))
            continue;
        out[n].series = c->series[k];
        snprintf(out[n].name, sizeof out[n].name, "%s",
                 wording == RT_REPORT_WORDING_PY05 ? c->names05[k] : c->names[k]);
        out[n++].color = c->colors[k];
    }
    return n;
}

/* The chart's title as the page shows it, in the page's wording: the power chart's with its
 * method ("Power (estimated)"), or "(by source)" when its lines are the parts' (each line then
 * names its method and source). */
static const char *chart_title(const rt_report *r, const bool present[RPT_SERIES], size_t i, int wording, char *buf,
                               size_t size)
{
    const char *t = wording == RT_REPORT_WORDING_PY05 ? charts[i].title05 : charts[i].title;
    if (strcmp(charts[i].unit, "watts") != 0)
        return t;
    chart_line lines[CHART_LINES];
    const char *m = rpt_method_word(r->power_method);
    if (power_part_lines(r, present, wording, lines))
        m = "by source";
    if (!m)
        return t;
    snprintf(buf, size, "%s (%s)", t, m);
    return buf;
}

/* A level in the chart's unit, for its line of text: bytes, or watts */
static const char *fmt_level(rpt_figure f, const char *unit, double v)
{
    if (strcmp(unit, "watts") != 0)
        return rpt_fmt_bytes(f, v);
    snprintf(f, sizeof(rpt_figure), fabs(v) >= 1000 ? "%.3g kW" : "%.3g W", fabs(v) >= 1000 ? v / 1000 : v);
    return f;
}

/* How a chart shows: not at all, as one line of text, or drawn. */
typedef enum { CHART_NONE, CHART_TEXT, CHART_DRAWN } chart_how;

/* Streams the points the page gets: buckets, pairs of them folded when there are more than
 * RPT_POINTS (never across a gap). Returns false after the last. */
typedef struct point_iter {
    const rt_report *r;
    size_t i;
    bool fold;
} point_iter;

static bool next_point(point_iter *it, rpt_bucket *out)
{
    const rt_report *r = it->r;
    if (it->i >= r->n)
        return false;
    *out = r->b[it->i++];
    if (it->fold && it->i < r->n && !r->b[it->i].gap)
        rpt_bucket_merge(out, &r->b[it->i++]);
    return true;
}

/* which series have any rpt_figure */
static void present_series(const rt_report *r, bool present[RPT_SERIES])
{
    memset(present, 0, RPT_SERIES * sizeof *present);
    for (size_t i = 0; i < r->n; i++)
        for (size_t k = 0; k < RPT_SERIES; k++)
            present[k] |= r->b[i].c[k].weight > 0;
}

/* How chart i shows: not at all without a figure (GPU charts: without a GPU); as a line of
 * text (into text) when all its figures are 0, or for a level, when its least and greatest
 * are within 1% ("Disk space used: 17.9 GiB throughout"); else drawn. */
static chart_how chart_shown(const rt_report *r, const bool present[RPT_SERIES], size_t i, int wording, char *text,
                             size_t size)
{
    const chart_def *c = &charts[i];
    if (c->gpu_only && !r->gpu_seen)
        return CHART_NONE;
    float lo = INFINITY, hi = -INFINITY;
    chart_line lines[CHART_LINES];
    size_t n = chart_lines(r, present, i, wording, lines);
    for (size_t k = 0; k < n; k++) {
        for (size_t j = 0; j < r->n; j++) {
            const rpt_cell *cell = &r->b[j].c[lines[k].series];
            if (cell->weight > 0) {
                lo = fminf(lo, cell->min);
                hi = fmaxf(hi, cell->max);
            }
        }
    }
    if (!n)
        return CHART_NONE;
    char tbuf[64];
    const char *title = chart_title(r, present, i, wording, tbuf, sizeof tbuf);
    if (c->zero && *c->zero && lo == 0 && hi == 0) {
        snprintf(text, size, "%.40s: %s", title, c->zero);
        return CHART_TEXT;
    }
    if (c->zero && !*c->zero && hi - lo <= 0.01 * fabsf(hi)) { /* a line flat within 2 pixels */
        rpt_figure a, b;
        if (strcmp(fmt_level(a, c->unit, lo), fmt_level(b, c->unit, hi)) == 0)
            snprintf(text, size, "%.40s: %.40s throughout", title, a);
        else
            snprintf(text, size, "%.40s: between %.40s and %.40s throughout", title, a, b);
        return CHART_TEXT;
    }
    return CHART_DRAWN;
}

/* how many charts are drawn */
static int charts_drawn(const rt_report *r, const bool present[RPT_SERIES])
{
    char text[160];
    int n = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(charts); i++)
        n += chart_shown(r, present, i, RT_REPORT_WORDING_OWN, text, sizeof text) == CHART_DRAWN;
    return n;
}

/* where the time axis ends, in seconds after the first bucket's start */
static double time_span(const rt_report *r)
{
    double t1 = 0;
    for (size_t i = 0; i < r->n; i++)
        t1 = fmax(t1, r->b[i].t1 - r->b[0].t0);
    return t1;
}

#define RPT_ELAPSED_BELOW 3600 /* seconds: a run shorter reads in elapsed time */

/* s as a JavaScript string literal inside <script>: quotes and backslashes escaped, and < > &,
 * control characters and U+2028/U+2029 as \u escapes (so no "</script>" can end the script);
 * invalid UTF-8 as U+FFFD. */
/* One character of a JavaScript string literal (rpt_hw_js_str). */
static void js_char(rpt_hw *w, const unsigned char *p, size_t k)
{
    if (k == 1 && (*p == '"' || *p == '\\')) {
        rpt_hw_put(w, "\\", 1);
        rpt_hw_put(w, (const char *)p, 1);
    } else if (k == 1 && (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&')) {
        rpt_hw_fmt(w, "\\u%04x", *p);
    } else if (k == 3 && p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
        rpt_hw_lit(w, p[2] == 0xA8 ? "\\u2028" : "\\u2029");
    } else {
        rpt_hw_put(w, (const char *)p, k);
    }
}

static void rpt_hw_js_str(rpt_hw *w, const char *s)
{
    rpt_hw_put(w, "\"", 1);
    each_char(w, s, "\\ufffd", js_char);
    rpt_hw_put(w, "\"", 1);
}

/* One phase span as script: [start, end, name index, depth, calls]. */
static void write_span(rpt_hw *w, bool first, double t0, double a, double b, unsigned name, unsigned depth,
                       unsigned count)
{
    rpt_hw_lit(w, first ? "[" : ",[");
    rpt_hw_secs(w, a - t0);
    rpt_hw_put(w, ",", 1);
    rpt_hw_secs(w, b - t0);
    rpt_hw_fmt(w, ",%u,%u,%u]", name, depth, count);
}

/* The phases as script: ,ph:[[start,end,name,depth,calls],..] (the calls still open run
 * to the last record) and ,pn:["name",..] ("other" last when names past the cap came); nothing
 * when the run had none. */
static void write_phases(rpt_hw *w, const rt_report *r, double t0)
{
    const rpt_phases *p = r->ph;
    if (!p || (!p->n_spans && !p->n_open))
        return;
    rpt_hw_lit(w, ",ph:[");
    for (size_t i = 0; i < p->n_spans; i++)
        write_span(w, i == 0, t0, p->spans[i].t0, p->spans[i].t1, p->spans[i].name, p->spans[i].depth,
                   p->spans[i].count);
    for (size_t i = 0; i < p->n_open; i++)
        write_span(w, i == 0 && !p->n_spans, t0, p->open[i].t0, fmax(p->open[i].t0, p->last_t), p->open[i].name,
                   p->open[i].depth, 1);
    rpt_hw_lit(w, "],pn:[");
    for (size_t i = 0; i < p->n_names; i++) {
        if (i)
            rpt_hw_put(w, ",", 1);
        rpt_hw_js_str(w, p->names[i]);
    }
    if (p->other) {
        for (size_t i = p->n_names; i < RPT_PHASE_NAMES; i++) /* "other" at its index */
            rpt_hw_lit(w, i ? ",null" : "null");
        rpt_hw_lit(w, ",\"other\"");
    }
    rpt_hw_put(w, "]", 1);
}

/* The cgroup's marks as script, times in seconds after t0: MK.oom ([time, kills] per OOM
 * kill), MK.thr ([start, end] per throttled stretch), MK.limit (MiB) and MK.quota (cores),
 * null when none. */
static void write_marks(rpt_hw *w, const rt_report *r, double t0)
{
    rpt_hw_lit(w, "var MK={oom:[");
    for (size_t i = 0; i < r->n_oom; i++) {
        rpt_hw_lit(w, i ? ",[" : "[");
        rpt_hw_secs(w, r->oom[i].t - t0);
        rpt_hw_put(w, ",", 1);
        rpt_hw_num(w, r->oom[i].kills);
        rpt_hw_put(w, "]", 1);
    }
    rpt_hw_lit(w, "],thr:[");
    for (size_t i = 0; i < r->n_thr; i++) {
        rpt_hw_lit(w, i ? ",[" : "[");
        rpt_hw_secs(w, r->thr[i].t0 - t0);
        rpt_hw_put(w, ",", 1);
        rpt_hw_secs(w, r->thr[i].t1 - t0);
        rpt_hw_put(w, "]", 1);
    }
    rpt_hw_lit(w, "],limit:");
    rpt_hw_num(w, r->mem_limit);
    rpt_hw_lit(w, ",quota:");
    rpt_hw_num(w, r->cpu_quota);
    write_phases(w, r, t0);
    rpt_hw_lit(w, "};\n");
}

/* Which series the drawn charts draw. */
static void drawn_series(const rt_report *r, const bool present[RPT_SERIES], int wording, bool drawn[RPT_SERIES])
{
    memset(drawn, 0, RPT_SERIES * sizeof *drawn);
    char text[160];
    for (size_t i = 0; i < RT_ARRAY_LEN(charts); i++) {
        if (chart_shown(r, present, i, wording, text, sizeof text) != CHART_DRAWN)
            continue;
        chart_line lines[CHART_LINES];
        size_t n = chart_lines(r, present, i, wording, lines);
        for (size_t k = 0; k < n; k++)
            drawn[lines[k].series] = true;
    }
}

/* The data and the chart definitions as script: T (seconds after T0, one per point), G (1
 * where a gap comes before the point), S[k] (low, mean, high per point, null when none), CH
 * (the charts drawn), MK (the marks), TE (the axis' end, seconds after T0) and EL (1: the
 * time axis reads in time since the start, a run under an hour; 0: in UTC clock time). */
static int write_data(rpt_hw *w, const rt_report *r, int wording)
{
    bool present[RPT_SERIES];
    present_series(r, present);
    double t0 = r->n ? r->b[0].t0 : 0;
    rpt_hw_lit(w, "var T0=");
    rpt_hw_secs(w, t0);
    for (int pass = 0; pass < 2; pass++) {
        rpt_hw_lit(w, pass == 0 ? ";\nvar T=[" : "];\nvar G=[");
        point_iter it = {r, 0, r->n > RPT_POINTS};
        rpt_bucket p;
        for (bool first = true; next_point(&it, &p); first = false) {
            if (!first)
                rpt_hw_put(w, ",", 1);
            if (pass == 0)
                rpt_hw_secs(w, p.t0 + (p.t1 - p.t0) / 2 - t0);
            else
                rpt_hw_put(w, p.gap ? "1" : "0", 1);
        }
    }
    rpt_hw_lit(w, "];\nvar S=[");
    bool drawn[RPT_SERIES];
    drawn_series(r, present, wording, drawn);
    for (size_t k = 0; k < RPT_SERIES; k++) {
        rpt_hw_lit(w, k ? ",\n[" : "\n[");
        point_iter it = {r, 0, r->n > RPT_POINTS};
        rpt_bucket p;
        /* the GPU work's series only where its chart draws them (the page's size: up to 7 more) */
        bool written = present[k] && (k < RPT_GPU_SM || drawn[k]);
        for (bool first = true; written && next_point(&it, &p); first = false) {
            const rpt_cell *c = &p.c[k];
            if (!first)
                rpt_hw_put(w, ",", 1);
            if (c->weight > 0) {
                rpt_hw_num(w, c->min);
                rpt_hw_put(w, ",", 1);
                rpt_hw_num(w, c->sum / c->weight);
                rpt_hw_put(w, ",", 1);
                rpt_hw_num(w, c->max);
            } else {
                rpt_hw_lit(w, "null,null,null");
            }
        }
        rpt_hw_put(w, "]", 1);
    }
    rpt_hw_lit(w, "];\nvar CH=[");
    int nchart = 0;
    char text[160];
    for (size_t i = 0; i < RT_ARRAY_LEN(charts); i++) {
        const chart_def *c = &charts[i];
        if (chart_shown(r, present, i, wording, text, sizeof text) != CHART_DRAWN)
            continue;
        char title[64];
        rpt_hw_fmt(w, "%s\n{id:%d,title:\"%s\",unit:\"%s\",m:%d,s:[", nchart ? "," : "", nchart,
                   chart_title(r, present, i, wording, title, sizeof title), c->unit, c->marks);
        chart_line lines[CHART_LINES];
        size_t n = chart_lines(r, present, i, wording, lines);
        for (size_t k = 0; k < n; k++) { /* a part's name holds what a file said: escaped */
            int right = 0;
            for (int j = 0; j < CHART_SERIES && c->series[j] >= 0; j++)
                right |= c->series[j] == lines[k].series && (c->right >> j & 1u);
            rpt_hw_fmt(w, "%s[%d,", k ? "," : "", lines[k].series);
            rpt_hw_js_str(w, lines[k].name);
            rpt_hw_fmt(w, ",\"%s\"%s]", lines[k].color, right ? ",1" : "");
        }
        rpt_hw_lit(w, "]}");
        nchart++;
    }
    rpt_hw_lit(w, "];\n");
    write_marks(w, r, t0);
    double span = time_span(r);
    rpt_hw_lit(w, "var TE=");
    rpt_hw_secs(w, span);
    rpt_hw_fmt(w, ",EL=%d;\n", span < RPT_ELAPSED_BELOW);
    return nchart;
}

/* the page's own styles: screen, and print (no chart cut across pages; the charts' copies drawn
 * at a page's width) */
static const char page_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;margin:0 auto;"
    "max-width:1200px;padding:12px 24px;background:#fff}\n"
    "h1{font-size:22px;margin:4px 0 0}h2{font-size:19px;border-bottom:2px solid #1f77b4;padding-bottom:3px;"
    "margin:24px 0 10px}h3{font-size:15px;margin:14px 0 6px}\n"
    ".sub{color:#555;margin:0 0 6px}.note{color:#666;font-size:12px;margin:4px 0}\n"
    ".chart-block{margin:0 0 14px;break-inside:avoid;page-break-inside:avoid}\n"
    ".chart-block h3{display:inline-block;margin:0 12px 2px 0}.legend{display:inline-block;font-size:12px;color:#333}"
    "\n"
    ".legend .dygraph-legend-line{bottom:.3ex}\n"
    ".chart{width:100%;height:220px;overflow:hidden}.chart-print{position:absolute;left:-10000px;top:0;width:680px;"
    "height:220px}.chart-text{margin:4px 0 12px}\n"
    ".cols{display:flex;flex-wrap:wrap;gap:12px 32px;align-items:flex-start}.cols>*{min-width:0;max-width:100%}.wide{"
    "overflow-x:auto}\n"
    "table{border-collapse:collapse;font-size:13px}th,td{padding:3px 10px 3px 0;text-align:left;vertical-align:top}"
    "td{overflow-wrap:anywhere}\n"
    "table.kv th{color:#555;font-weight:600;white-space:nowrap}table.dist td{text-align:right;padding-left:14px;"
    "white-space:nowrap}\n"
    "table.dist tr:first-child th{text-align:right;color:#555}tr+tr{border-top:1px solid #eee}\n"
    "table.cores{margin:6px 0 2px}table.cores td{text-align:right;padding-left:12px;white-space:nowrap}"
    "table.cores th{text-align:right;padding-left:12px;font-weight:400;color:#555;overflow-wrap:normal}table.cores tr.asked td{"
    "font-weight:700}\n"
    "pre{background:#f5f7fa;border:1px solid #e1e4e8;padding:8px 10px;font-size:12px;white-space:pre-wrap;"
    "overflow-wrap:anywhere}\n"
    "footer{color:#888;font-size:12px;margin-top:30px}\n"
    "#job table.kv{font-size:14px}#job ul{margin:0;padding-left:18px}#job code{background:#f5f7fa;border:1px solid "
    "#e1e4e8;padding:0 4px;font-size:12px;overflow-wrap:anywhere}table.dist tr.shown th,table.dist tr.shown td{"
    "font-weight:700}\n"
    "#answer{background:#f5f9fd;border:1px solid #cfe0f1;border-radius:6px;padding:6px 14px 8px;margin:10px 0}\n"
    "#answer h2{border:0;font-size:17px;margin:2px 0 6px}#answer table{font-size:14px}#answer ul{margin:0;"
    "padding-left:18px}\n"
    "#answer code{background:#fff;border:1px solid #e1e4e8;padding:0 4px;font-size:12px;overflow-wrap:anywhere}\n"
    ".figs{display:flex;flex-wrap:wrap;gap:6px 32px;margin:0 0 8px}.fig b{display:block;font-size:20px;"
    "font-weight:600;line-height:1.3}\n"
    ".fig span{color:#555;font-size:12px}.fig.bad b{color:#b00}\n"
    "@media (max-width:600px){body{padding:10px 12px}.fig b{font-size:17px}.figs{gap:6px 20px}table.kv th{"
    "white-space:normal}table.dist td{padding-left:8px}}\n"
    "@media print{body{max-width:none;padding:0;font-size:11px}#answer,.chart-block,.chart-text,table,pre{"
    "break-inside:avoid;page-break-inside:avoid}h2,h3{break-after:avoid;page-break-after:avoid}.hint{display:none}"
    ".chart{display:none}.chart-print{position:static}}\n";

/* the page's own script: builds the rows (a lone missing value bridged), draws the charts (the
 * band's top edge stroked, so that a spike one point wide shows; the time axis in time since the
 * start or in UTC clock time) and their copies for print, synchronizes them, and records on
 * <body> how many were drawn (data-charts-drawn) and on each chart its y range and plot area */
static const char page_js[] =
    "(function(){\n"
    "function si(v,u,sfx,tick){if(v===null||v===undefined||isNaN(v))return '\\u2014';var i=0,a=Math.abs(v);while("
    "a>=1024&&i<u.length-1){a/=1024;v/=1024;i++;}var t=Math.abs(v)>=100||i==0&&v==Math.round(v)?v.toFixed("
    "0):v.toPrecision(3);return (tick?String(parseFloat(t)):t)+' '+u[i]+sfx;}\n"
    "function count(one,many){return function(v,tick){if(v===null||v===undefined||isNaN(v))return '\\u2014';var "
    "t=tick?String(parseFloat(v.toFixed(2))):v.toFixed(2);return t+' '+(t==='1'?one:many);};}\n"
    "var M=['MiB','GiB','TiB'],B=['B','KiB','MiB','GiB','TiB','PiB'];\n"
    "var F={cores:count('core','cores'),gpus:count('GPU','GPUs'),mib:function(v,t){return si(v,M,'',t)},"
    "rate:function(v,t){return si(v,B,'/s',t)},bytes:function(v,t){return si(v,B,'',t)},pct:function(v,t){if(v===null||v===undefined||isNaN(v))return '\\u2014';return (t?String(parseFloat(v.toFixed(1))):v.toFixed(1))+'%';},watts:function(v,t){if("
    "v===null||v===undefined||isNaN(v))return '\\u2014';var k=Math.abs(v)>=1000,a=k?v/1000:v,s=t?String("
    "parseFloat(a.toPrecision(3))):a.toPrecision(3);return s+(k?' kW':' W');}};\n"
    "function el(v,exact){var s=Math.abs(v)<1e-9?0:Math.abs(v),neg=v<-1e-9?'-':'';if(s<60)return neg+("
    "exact?s.toFixed(s<10?1:0):String(parseFloat(s.toFixed(1))))+' s';var m=Math.floor(s/60+1e-9),r=Math.round("
    "s-60*m);if(r>=60){m++;r=0;}return neg+m+' min'+(r?' '+r+' s':'');}\n"
    "var STEPS=[0.1,0.2,0.5,1,2,5,10,15,30,60,120,300,600,900,1800,3600,7200];\n"
    "function eticks(a,b,px,opt){var n=Math.max(1,Math.floor(px/opt('pixelsPerLabel'))),k=0;while(k<STEPS.length-1&&("
    "b-a)/STEPS[k]>n)k++;var s=STEPS[k],out=[];for(var i=Math.ceil(a/s-1e-9);i*s<=b+1e-9;i++)out.push({v:i*s,"
    "label:el(i*s)});return out;}\n"
    "function X(t){return EL?t:new Date((T0+t)*1000);}\n"
    "function edge(e){var c=e.drawingContext,a=e.plotArea,p=e.points,pen=false;c.save();c.strokeStyle=e.color;"
    "c.globalAlpha=0.55;c.lineWidth=1;c.beginPath();for(var i=0;i<p.length;i++){var t=Math.min(p[i].y_top,"
    "p[i].y_bottom);if(p[i].yval===null||isNaN(t)){pen=false;continue;}var y=a.h*t+a.y;if(pen)c.lineTo(p[i].canvasx,"
    "y);else c.moveTo(p[i].canvasx,y);pen=true;}c.stroke();c.restore();}\n"
    "var P=Dygraph.Plotters,plotter=[edge,P.errorPlotter,P.linePlotter];\n"
    "function level(c){return c.m==1?MK.quota:c.m==2?MK.limit:null;}\n"
    "var PC=['#1f77b4','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#7f7f7f','#bcbd22','#17becf','#ff7f0e'];\n"
    "function marks(c,div){return function(x,a,g){var n=0,L=level(c);function D(t){return g.toDomXCoord(X(t));}\n"
    " x.save();x.font='11px sans-serif';\n"
    " if(MK.ph)MK.ph.forEach(function(s){var x0=Math.max(D(s[0]),a.x),x1=Math.min(D(s[1]),a.x+a.w);if(x1<a.x||x0>"
    "a.x+a.w)return;var col=PC[s[2]%PC.length],d=Math.min(s[3],4),top=a.y+4*d,lab=(MK.pn[s[2]]||'other')+(s[4]>1?"
    "' \\u00d7'+s[4]:'');x.globalAlpha=d?0.10:0.14;x.fillStyle=col;x.fillRect(x0,top,Math.max(x1-x0,1),a.h-4*d);"
    "x.globalAlpha=0.8;x.fillRect(x0,top,1,a.h-4*d);x.globalAlpha=1;if(x1-x0>x.measureText(lab).width+6)x.fillText("
    "lab,x0+3,top+11+11*d);n++;});\n"
    " if(c.m==1){x.fillStyle='rgba(148,103,189,0.22)';MK.thr.forEach(function(s){var x0=Math.max(D(s[0]),a.x),"
    "x1=Math.min(D(s[1]),a.x+a.w);if(x1<a.x||x0>a.x+a.w)return;x.fillRect(x0,a.y,Math.max(x1-x0,1),a.h);n++;});}\n"
    " if(L!==null){var y=g.toDomYCoord(L),lab=(c.m==1?'CPU quota ':'memory limit ')+F[c.unit](L);if(y<a.y){y=a.y;"
    "lab+=' (above)';}x.strokeStyle='#555';x.fillStyle='#555';x.setLineDash([6,4]);x.beginPath();x.moveTo(a.x,y);"
    "x.lineTo(a.x+a.w,y);x.stroke();x.setLineDash([]);x.fillText(lab,a.x+4,y>a.y+12?y-3:y+12);n++;}\n"
    " if(c.m==2){x.strokeStyle='#c00';x.fillStyle='#c00';x.lineWidth=2;MK.oom.forEach(function(o){var t=D(o[0]);if("
    "t<a.x||t>a.x+a.w)return;x.beginPath();x.moveTo(t,a.y);x.lineTo(t,a.y+a.h);x.stroke();x.fillText(o[1]>1?'OOM "
    "kill ('+o[1]+')':'OOM kill',Math.min(t+3,a.x+a.w-60),a.y+12);n++;});}\n"
    " x.restore();div.setAttribute('data-marks',n);};}\n"
    "function at(a,i){return a[3*i]===null?null:[a[3*i],a[3*i+1],a[3*i+2]];}\n"
    "/* a copy of each chart drawn off the screen at a page's width is the one printed (Chromium does\n"
    "   not print a canvas resized or drawn for the print) */\n"
    "var n=T.length,drawn=0,gs=[],PW=680;\n"
    "CH.forEach(function(c){\n"
    " var rows=[],labels=['time'],colors=[],mx=-Infinity,bridged=0;\n"
    " var y2=c.s.some(function(s){return s[3]})&&c.s.some(function(s){return !s[3]}),ser={};\n"
    " c.s.forEach(function(s){var l=s[1]+(y2&&s[3]?' (right axis)':'');labels.push(l);colors.push(s[2]);if(y2&&s[3])"
    "ser[l]={axis:'y2'};});\n"
    " for(var i=0;i<n;i++){\n"
    "  if(G[i]&&i>0){var gr=[X((T[i-1]+T[i])/2)];c.s.forEach(function(){gr.push(null)});rows.push(gr);}\n"
    "  var r=[X(T[i])];c.s.forEach(function(s){var a=S[s[0]],v=at(a,i);\n"
    "   if(v===null&&i>0&&i<n-1&&!G[i]&&!G[i+1]&&a[3*i-3]!==null&&a[3*i+3]!==null){var f=(T[i]-T[i-1])/("
    "T[i+1]-T[i-1]),p=at(a,i-1),q=at(a,i+1);v=[0,1,2].map(function(j){return p[j]+f*(q[j]-p[j]);});bridged++;}\n"
    "   r.push(v);if(v!==null&&v[2]>mx&&!(y2&&s[3]))mx=v[2];});rows.push(r);}\n"
    " var div=document.getElementById('c'+c.id),f=F[c.unit],L=level(c),pad=TE*24/Math.max(100,div.clientWidth-100);\n"
    " var xa=EL?{ticker:eticks,axisLabelFormatter:function(v){return el(v)},valueFormatter:function(v){return el(v,"
    "1)},pixelsPerLabel:85,axisLabelWidth:84}:{pixelsPerLabel:80,axisLabelWidth:80};\n"
    " var opts={labels:labels,colors:colors,customBars:true,fillAlpha:0.3,plotter:plotter,strokeWidth:1.4,"
    "labelsKMG2:c.unit!='cores'&&c.unit!='gpus'&&c.unit!='watts'&&c.unit!='pct',labelsDiv:document.getElementById('l'+c.id),legend:'always',"
    "labelsUTC:true,includeZero:true,connectSeparatedPoints:false,axisLabelFontSize:12,\n"
    "  xRangePad:EL?0:24,dateWindow:EL?[-pad,TE+pad/4]:null,underlayCallback:marks(c,div),"
    "valueRange:L!==null&&L>mx&&L<=2*mx?[0,L*1.08]:y2&&mx>0?[0,mx*1.15]:null,series:ser,axes:{x:xa,y:{"
    "valueFormatter:function(v){return f(v)},axisLabelFormatter:function(v){return f(v,1)},axisLabelWidth:80},\n"
    "  y2:{valueFormatter:function(v){return f(v)},axisLabelFormatter:function(v){return f(v,1)},axisLabelWidth:70,"
    "independentTicks:true,drawGrid:false,ticker:function(a,b,px,o,g,v){return Dygraph.numericTicks(a,b,px,o,g,v)"
    ".filter(function(t){return t.v>a})}}},\n"
    "  plugins:[new Dygraph.Plugins.Crosshair({direction:'vertical'})]};\n"
    " var g=new Dygraph(div,rows,opts),pd=document.getElementById('p'+c.id),pp=TE*24/(PW-100);\n"
    " new Dygraph(pd,rows,Object.assign({},opts,{labelsDiv:null,legend:'never',plugins:[],underlayCallback:marks(c,"
    "pd),\n"
    "  dateWindow:EL?[-pp,TE+pp/4]:null}));\n"
    " div.setAttribute('data-series-max',mx);div.setAttribute('data-bridged',bridged);\n"
    " g.ready(function(){var a=g.getArea(),b=div.getBoundingClientRect(),y=g.yAxisRange();\n"
    "  div.setAttribute('data-ymax',y[1]);div.setAttribute('data-plot',[Math.round(b.left+window.scrollX+a.x),"
    "Math.round(b.top+window.scrollY+a.y),Math.round(a.w),Math.round(a.h)].join(','));\n"
    "  drawn++;document.body.setAttribute('data-charts-drawn',drawn);});\n"
    " gs.push(g);});\n"
    "if(gs.length>1)Dygraph.synchronize(gs,{zoom:true,selection:true,range:false});\n"
    "})();\n";

static void write_head(rpt_hw *w, const char *title, int expected, bool elapsed)
{
    rpt_hw_lit(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<meta name=\"generator\" content=\"resource-tracker " RT_VERSION "\">\n<title>");
    rpt_hw_html(w, title);
    rpt_hw_lit(w, " \xE2\x80\x94 resource-tracker report</title>\n<style>\n");
    rpt_hw_put(w, rt_asset_dygraph_css, rt_asset_dygraph_css_len);
    rpt_hw_lit(w, "\n");
    rpt_hw_lit(w, page_css);
    rpt_hw_lit(w, "</style>\n<script>\n");
    rpt_hw_put(w, rt_asset_dygraph_js, rt_asset_dygraph_js_len);
    rpt_hw_lit(w, "\n</script>\n<script>\n");
    rpt_hw_put(w, rt_asset_synchronizer_js, rt_asset_synchronizer_js_len);
    rpt_hw_lit(w, "\n</script>\n<script>\n");
    rpt_hw_put(w, rt_asset_crosshair_js, rt_asset_crosshair_js_len);
    rpt_hw_fmt(w, "\n</script>\n</head>\n<body data-charts-expected=\"%d\" data-charts-drawn=\"0\" data-time-axis=\"%s\">\n",
               expected, elapsed ? "elapsed" : "clock");
}

/* the line under the title: when, how long, where (how it ended is in the answer) */
static void write_subtitle(rpt_hw *w, const rt_report_info *in)
{
    rpt_figure a, b;
    const rt_summary *s = in->summary;
    rpt_hw_lit(w, "<p class=\"sub\">");
    const rt_job_view *v = in->job_view && in->job_view->struct_size >= sizeof *in->job_view ? in->job_view : NULL;
    if (v && isfinite(v->start_secs) && isfinite(v->end_secs) && v->end_secs >= v->start_secs) {
        /* a job's page: the job's span, from its earliest start to its latest end over the nodes;
         * the node shown below it, its own */
        rpt_hw_html(w, rpt_fmt_time(a, v->start_secs));
        rpt_hw_lit(w, " \xC2\xB7 ");
        rpt_hw_html(w, rpt_fmt_duration(b, v->end_secs - v->start_secs));
        rpt_hw_fmt(w, " on %zu node%s", v->node_count, v->node_count == 1 ? "" : "s");
        if (s && s->samples > 0 && in->node_shown) {
            rpt_hw_lit(w, " (");
            rpt_hw_html(w, in->node_shown);
            rpt_hw_lit(w, ", shown below: ");
            rpt_hw_html(w, rpt_fmt_duration(b, s->duration_secs));
            rpt_hw_lit(w, ")");
        }
        rpt_hw_lit(w, "</p>\n");
        return;
    }
    if (s && s->samples > 0) {
        rpt_hw_html(w, rpt_fmt_time(a, s->start_secs));
        rpt_hw_lit(w, " \xC2\xB7 ");
        rpt_hw_html(w, rpt_fmt_duration(b, s->duration_secs));
    }
    if (in->host && in->host->hostname) {
        rpt_hw_lit(w, " \xC2\xB7 on ");
        rpt_hw_html(w, in->host->hostname);
    }
    rpt_hw_lit(w, "</p>\n");
}

static rt_error report_write(const rt_report *r, const rt_report_info *info, rt_out out);

/* The GPU work chart's caption: whose the figures are (the job's, the devices' shared with other
 * processes, or the machine's GPUs without a job) and what utilization is beside them. */
static void write_work_caption(rpt_hw *w, const rt_report *r)
{
    const char *whose = !r->work_job ? "The machine's GPUs (no job tracked), the mean over those that measure it."
                        : r->work_shared == 1
                            ? "The job's GPUs, shared with other processes: the figures are the devices', not the "
                              "job's alone."
                            : "The job's GPUs, the job's alone: its processes were the only ones on them.";
    rpt_hw_lit(w, "<p class=\"note\" id=\"cap-gpuwork\">");
    rpt_hw_html(w, whose);
    rpt_hw_lit(w, " Percent of the time the SMs, the tensor cores and the FP units were busy and of the peak DRAM "
                  "bandwidth used (NVML's GPM); NVML's utilization beside them only says that a kernel was "
                  "running.</p>");
}

rt_error rt_report_write(const rt_report *r, const rt_report_info *info, int fd)
{
    return fd < 0 ? RT_ERR_INVALID : report_write(r, info, RT_OUT_FD(fd));
}

rt_error rt_report_write_cb(const rt_report *r, const rt_report_info *info, rt_write_fn write, void *user)
{
    return !write ? RT_ERR_INVALID : report_write(r, info, RT_OUT_CB(write, user));
}

static rt_error report_write(const rt_report *r, const rt_report_info *info, rt_out out)
{
    if (!r)
        return RT_ERR_INVALID;
    rt_report_info in = RT_REPORT_INFO_INIT;
    in.current_price_usd_per_hour = NAN;
    if (info && rt_struct_copy(&in, sizeof in, info) < 0)
        return RT_ERR_INVALID;
    if (in.summary && in.summary->samples == 0)
        in.summary = NULL;
    rpt_hw *w = malloc(sizeof *w);
    if (!w)
        return RT_ERR_NOMEM;
    w->out = out;
    w->err = 0;
    w->len = 0;

    const char *title = in.title;
    if (!title && in.job && in.job->job_name)
        title = in.job->job_name;
    if (!title && in.summary && in.summary->job_name)
        title = in.summary->job_name;
    char job_title[160];
    if (!title && in.job_view && in.job_view->struct_size >= sizeof *in.job_view && in.job_view->job_id) {
        snprintf(job_title, sizeof job_title, "job %.100s on %zu node%s", in.job_view->job_id, in.job_view->node_count,
                 in.job_view->node_count == 1 ? "" : "s");
        title = job_title;
    }
    if (!title)
        title = "resource-tracker run";
    bool present[RPT_SERIES];
    present_series(r, present);
    int expected = charts_drawn(r, present);
    bool elapsed = time_span(r) < RPT_ELAPSED_BELOW;
    write_head(w, title, expected, elapsed);
    rpt_hw_lit(w, "<header><h1>");
    rpt_hw_html(w, title);
    rpt_hw_lit(w, "</h1>\n");
    write_subtitle(w, &in);
    rpt_hw_lit(w, "</header>\n");
    rpt_job_section(w, &in);
    rpt_answer_section(w, &in);
    rpt_hw_lit(w, "<section id=\"charts\"><h2>Over time</h2>\n<p class=\"note\">");
    rpt_hw_lit(w, elapsed ? "Time since the start of the run." : "Time of day, UTC.");
    rpt_hw_lit(w, "<span class=\"hint\"> Drag to zoom (all charts follow), double-click to zoom out; the line is the "
              "mean of each point, the band the least and greatest value it stands for.</span></p>\n");
    if (r->records == 0)
        rpt_hw_lit(w, "<p>No samples.</p>\n");
    char text[160];
    for (size_t i = 0, k = 0; i < RT_ARRAY_LEN(charts); i++) { /* in write_data's order */
        chart_how how = chart_shown(r, present, i, in.wording, text, sizeof text);
        if (how == CHART_TEXT) {
            rpt_hw_fmt(w, "<p class=\"chart-text\" id=\"t-%s\">", charts[i].key);
            rpt_hw_html(w, text);
            rpt_hw_lit(w, "</p>\n");
        }
        if (how != CHART_DRAWN)
            continue;
        char ctitle[64];
        rpt_hw_fmt(w, "<div class=\"chart-block\" id=\"b-%s\"><h3>%s</h3>", charts[i].key,
                   chart_title(r, present, i, in.wording, ctitle, sizeof ctitle));
        if (charts[i].series[0] == RPT_GPU_SM)
            write_work_caption(w, r);
        rpt_hw_fmt(w, "<div class=\"legend\" id=\"l%zu\"></div><div class=\"chart\" id=\"c%zu\"></div>"
                      "<div class=\"chart-print\" id=\"p%zu\"></div></div>\n", k, k, k);
        k++;
    }
    rpt_hw_lit(w, "</section>\n");
    if (in.summary)
        rpt_summary_section(w, in.summary);
    if (in.summary)
        rpt_phase_section(w, in.summary);
    rpt_recommendation_section(w, &in);
    rpt_run_section(w, &in);
    rpt_hw_lit(w, "<footer>resource-tracker " RT_VERSION "; charts: dygraphs 2.2.1 (MIT licence), embedded.</footer>\n"
              "<script>\n");
    write_data(w, r, in.wording);
    rpt_hw_lit(w, page_js);
    rpt_hw_lit(w, "</script>\n</body>\n</html>\n");
    rpt_hw_flush(w);
    int err = w->err;
    free(w);
    if (err) {
        errno = err;
        return RT_ERR_IO;
    }
    return RT_OK;
}
