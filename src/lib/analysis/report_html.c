/* report_html.c - writes the report: one self-contained HTML page (inline CSS, the embedded
 * dygraphs library, the data as inline arrays), charts over time with synchronized zoom and
 * crosshair, then the tables. Streams through one fixed buffer: memory does not grow with the run. */
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
#include "report_int.h"

/* the chart library, generated from libjs-dygraphs at build time (cmake/embed.cmake) */
extern const char rt_asset_dygraph_js[], rt_asset_dygraph_css[], rt_asset_synchronizer_js[], rt_asset_crosshair_js[];
extern const size_t rt_asset_dygraph_js_len, rt_asset_dygraph_css_len, rt_asset_synchronizer_js_len,
    rt_asset_crosshair_js_len;

/* ---- the output: one buffer, flushed to the fd when full ------------------------------- */

typedef struct hw {
    int fd;
    int err; /* errno of the first failed write; later output is dropped */
    size_t len;
    char buf[1 << 16];
} hw;

static void hw_flush(hw *w)
{
    size_t off = 0;
    while (!w->err && off < w->len) {
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            w->err = n < 0 ? errno : EIO;
        else
            off += (size_t)n;
    }
    w->len = 0;
}

static void hw_put(hw *w, const char *s, size_t n)
{
    while (n > 0) {
        if (w->len == sizeof w->buf)
            hw_flush(w);
        size_t room = sizeof w->buf - w->len, k = n < room ? n : room;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

static void hw_lit(hw *w, const char *s)
{
    hw_put(w, s, strlen(s));
}

/* printf-style, for short pieces (numbers, units): longer results are cut at 255 bytes */
__attribute__((format(printf, 2, 3))) static void hw_fmt(hw *w, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        hw_put(w, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* s as HTML text or attribute value: & < > " ' escaped, control characters dropped (tab and
 * newline kept), invalid UTF-8 replaced by U+FFFD. */
static void hw_html(hw *w, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n > 0) {
        size_t k = rt_utf8_len(p, n);
        if (k == 0) {
            hw_lit(w, "\xEF\xBF\xBD");
            k = 1;
        } else if (k == 1) {
            switch (*p) {
            case '&': hw_lit(w, "&amp;"); break;
            case '<': hw_lit(w, "&lt;"); break;
            case '>': hw_lit(w, "&gt;"); break;
            case '"': hw_lit(w, "&quot;"); break;
            case '\'': hw_lit(w, "&#39;"); break;
            default:
                if (*p >= 0x20 || *p == '\t' || *p == '\n')
                    hw_put(w, (const char *)p, 1);
            }
        } else {
            hw_put(w, (const char *)p, k);
        }
        p += k;
        n -= k;
    }
}

/* a number for the page's script: null when not finite, else 6 significant digits */
static void hw_num(hw *w, double v)
{
    if (!isfinite(v))
        hw_lit(w, "null");
    else if (v == 0)
        hw_lit(w, "0");
    else
        hw_fmt(w, "%.6g", v);
}

/* seconds for the page's script with 3 decimals: null when not finite (never "inf" or "nan") */
static void hw_secs(hw *w, double v)
{
    if (isfinite(v))
        hw_fmt(w, "%.3f", v);
    else
        hw_lit(w, "null");
}

/* ---- readable figures ------------------------------------------------------------------ */

typedef char figure[64];

static const char *fmt_num(figure f, double v, int decimals)
{
    if (!isfinite(v))
        snprintf(f, sizeof(figure), "\xE2\x80\x94"); /* an em dash: not known */
    else
        snprintf(f, sizeof(figure), "%.*f", decimals, v);
    return f;
}

/* v in the unit of scale 1 (B or MiB), with a binary prefix that keeps it under 1024 */
static const char *fmt_scaled(figure f, double v, const char *const *units, size_t nunits)
{
    if (!isfinite(v))
        return fmt_num(f, v, 0);
    size_t u = 0;
    while (fabs(v) >= 1024 && u + 1 < nunits) {
        v /= 1024;
        u++;
    }
    snprintf(f, sizeof(figure), u == 0 && v == floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
    return f;
}

static const char *fmt_bytes(figure f, double v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    return fmt_scaled(f, v, units, RT_ARRAY_LEN(units));
}

static const char *fmt_mib(figure f, double v)
{
    static const char *const units[] = {"MiB", "GiB", "TiB", "PiB"};
    return fmt_scaled(f, v, units, RT_ARRAY_LEN(units));
}

static const char *fmt_duration(figure f, double secs)
{
    if (!isfinite(secs) || secs < 0)
        return fmt_num(f, NAN, 0);
    if (secs > RPT_MAX_SECS) { /* past llround's range in days: no calendar for it */
        snprintf(f, sizeof(figure), "%.3g s", secs);
        return f;
    }
    if (secs < 60) {
        snprintf(f, sizeof(figure), "%.1f s", secs);
        return f;
    }
    long long s = llround(secs);
    long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
    if (d > 0)
        snprintf(f, sizeof(figure), "%lld d %lld h %lld min", d, h, m);
    else if (h > 0)
        snprintf(f, sizeof(figure), "%lld h %lld min %lld s", h, m, s % 60);
    else
        snprintf(f, sizeof(figure), "%lld min %lld s", m, s % 60);
    return f;
}

static const char *fmt_time(figure f, double unix_secs)
{
    if (!(fabs(unix_secs) <= RPT_MAX_SECS)) /* NaN, or out of time_t's range: no date */
        return fmt_num(f, NAN, 0);
    time_t t = (time_t)floor(unix_secs);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(f, sizeof(figure), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        return fmt_num(f, NAN, 0);
    return f;
}

static const char *fmt_usd(figure f, double v)
{
    if (!isfinite(v))
        return fmt_num(f, v, 0);
    if (v != 0 && fabs(v) < 0.001) /* a short run's cost: four significant digits, not $0.0000 */
        snprintf(f, sizeof(figure), "$%.*f", (int)ceil(-log10(fabs(v))) + 3, v);
    else
        snprintf(f, sizeof(figure), fabs(v) < 1 ? "$%.4f" : "$%.2f", v);
    return f;
}

/* ---- tables ------------------------------------------------------------------------------ */

/* one key/value row; a NULL or empty value leaves the row out */
static void row(hw *w, const char *key, const char *value)
{
    if (!value || !*value)
        return;
    hw_lit(w, "<tr><th>");
    hw_html(w, key);
    hw_lit(w, "</th><td>");
    hw_html(w, value);
    hw_lit(w, "</td></tr>\n");
}

static void row_i64(hw *w, const char *key, int64_t v)
{
    if (v == RT_NULL_I64)
        return;
    figure f;
    snprintf(f, sizeof f, "%lld", (long long)v);
    row(w, key, f);
}

typedef const char *(*fmt_fn)(figure f, double v);

static const char *fmt_cores(figure f, double v)
{
    return fmt_num(f, v, 2);
}

static const char *fmt_count(figure f, double v)
{
    return fmt_num(f, v, 0);
}

static const char *fmt_pct(figure f, double v)
{
    if (!isfinite(v))
        return fmt_num(f, v, 0);
    snprintf(f, sizeof(figure), "%.1f%%", v);
    return f;
}

/* a distribution row of the summary: mean, p50, p95, peak */
static void dist_row(hw *w, const char *name, const rt_dist *d, fmt_fn fmt)
{
    if (isnan(d->mean) && isnan(d->peak))
        return;
    figure a, b, c, e;
    hw_lit(w, "<tr><th>");
    hw_html(w, name);
    hw_lit(w, "</th><td>");
    hw_html(w, fmt(a, d->mean));
    hw_lit(w, "</td><td>");
    hw_html(w, fmt(b, d->p50));
    hw_lit(w, "</td><td>");
    hw_html(w, fmt(c, d->p95));
    hw_lit(w, "</td><td>");
    hw_html(w, fmt(e, d->peak));
    hw_lit(w, "</td></tr>\n");
}

static void total_row(hw *w, const char *name, double v, fmt_fn fmt)
{
    figure f;
    if (isfinite(v))
        row(w, name, fmt(f, v));
}

static void summary_section(hw *w, const rt_summary *s)
{
    figure f, g;
    hw_lit(w, "<section id=\"summary\"><h2>Summary</h2>\n<div class=\"cols\"><table class=\"dist\">\n"
              "<tr><th></th><th>mean</th><th>p50</th><th>p95</th><th>peak</th></tr>\n");
    if (s->has_process) {
        dist_row(w, "job CPU (cores)", &s->process_cores, fmt_cores);
        dist_row(w, "job memory (PSS)", &s->process_pss_mib, fmt_mib);
        dist_row(w, "job memory (RSS)", &s->process_rss_mib, fmt_mib);
        dist_row(w, "job GPU (GPUs busy)", &s->process_gpu_usage, fmt_cores);
        dist_row(w, "job VRAM", &s->process_gpu_vram_mib, fmt_mib);
    }
    dist_row(w, "machine CPU (cores)", &s->cpu_cores, fmt_cores);
    dist_row(w, "machine memory used", &s->memory_used_mib, fmt_mib);
    dist_row(w, "machine GPU (GPUs busy)", &s->gpu_usage, fmt_cores);
    dist_row(w, "machine VRAM", &s->gpu_vram_mib, fmt_mib);
    dist_row(w, "CPU pressure (some)", &s->pressure_cpu_some_pct, fmt_pct);
    dist_row(w, "memory pressure (some)", &s->pressure_memory_some_pct, fmt_pct);
    dist_row(w, "memory pressure (full)", &s->pressure_memory_full_pct, fmt_pct);
    dist_row(w, "I/O pressure (some)", &s->pressure_io_some_pct, fmt_pct);
    dist_row(w, "I/O pressure (full)", &s->pressure_io_full_pct, fmt_pct);
    hw_lit(w, "</table>\n<table class=\"kv\">\n");
    row(w, "start", fmt_time(f, s->start_secs));
    row(w, "end", fmt_time(f, s->end_secs));
    row(w, "duration", fmt_duration(f, s->duration_secs));
    snprintf(f, sizeof f, "%llu", (unsigned long long)s->samples);
    row(w, "samples", f);
    const struct {
        const char *name;
        double v;
        fmt_fn fmt;
        bool job; /* shown only with a tracked tree */
    } totals[] = {
        {"job CPU time", s->process_cpu_secs, fmt_duration, true},
        {"job GPUs used (most at once)", s->process_gpus_used, fmt_count, true},
        {"job read from disk", s->process_read_bytes, fmt_bytes, true},
        {"job written to disk", s->process_write_bytes, fmt_bytes, true},
        {"job memory peak (cgroup)", s->process_memory_peak_mib, fmt_mib, true},
        {"job memory limit", s->memory_limit_mib, fmt_mib, true},
        {"job memory.high", s->memory_high_mib, fmt_mib, true},
        {"job OOM kills", s->oom_kills, fmt_count, true},
        {"job CPU quota (cores)", s->cpu_quota_cores, fmt_cores, true},
        {"job CPU throttled (periods)", s->cpu_periods > 0 ? 100 * s->cpu_throttled_periods / s->cpu_periods : NAN,
         fmt_pct, true},
        {"job CPU throttled (time)", s->cpu_throttled_secs, fmt_duration, true},
        {"job tasks (peak)", s->pids_peak, fmt_count, true},
        {"job tasks (limit)", s->pids_limit, fmt_count, true},
        {"machine cores", s->cpu_count, fmt_count, false},
        {"machine memory", s->memory_total_mib, fmt_mib, false},
        {"GPUs", s->gpu_count, fmt_count, false},
        {"GPU memory", s->gpu_vram_total_mib, fmt_mib, false},
        {"disk read", s->disk_read_bytes, fmt_bytes, false},
        {"disk written", s->disk_write_bytes, fmt_bytes, false},
        {"network received", s->net_recv_bytes, fmt_bytes, false},
        {"network sent", s->net_sent_bytes, fmt_bytes, false},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(totals); i++)
        if (s->has_process || !totals[i].job)
            total_row(w, totals[i].name, totals[i].v, totals[i].fmt);
    if (isfinite(s->disk_space_used_peak_bytes)) {
        char both[160];
        snprintf(both, sizeof both, "%s of %s", fmt_bytes(f, s->disk_space_used_peak_bytes),
                 fmt_bytes(g, s->disk_space_total_bytes));
        row(w, "disk space used (peak)", both);
    }
    row(w, "machine", s->allocation);
    hw_lit(w, "</table></div></section>\n");
}

/* the recommendation, the cheapest server and the run's costs */
static void recommendation_section(hw *w, const rt_report_info *in)
{
    const rt_recommendation *rec = in->recommendation;
    if (!rec && !in->cheapest && !in->keeper_note && !in->current_instance)
        return;
    figure f;
    hw_lit(w, "<section id=\"recommendation\"><h2>Recommendation</h2>\n");
    double duration = in->summary ? in->summary->duration_secs : NAN;
    if (rec) {
        hw_lit(w, "<div class=\"cols\"><table class=\"kv\">\n");
        row_i64(w, "CPU cores", rec->cpu);
        row(w, "memory", fmt_mib(f, (double)rec->memory_mib));
        row_i64(w, "GPUs", rec->gpu);
        if (rec->vram_mib > 0)
            row(w, "GPU memory", fmt_mib(f, (double)rec->vram_mib));
        snprintf(f, sizeof f, "%llu", (unsigned long long)rec->runs);
        row(w, "from runs", f);
        hw_lit(w, "</table>\n<div><p>In a scheduler's words:</p><pre>");
        static const rt_scheduler scheds[] = {RT_SCHED_METAFLOW, RT_SCHED_K8S, RT_SCHED_SLURM};
        for (size_t i = 0; i < RT_ARRAY_LEN(scheds); i++) {
            char line[512];
            size_t n = rt_format_recommendation(rec, scheds[i], line, sizeof line);
            if (n > 0 && n < sizeof line)
                hw_html(w, line);
        }
        hw_lit(w, "</pre></div></div>\n");
        if (isfinite(rec->duration_secs) && rec->duration_secs > 0)
            duration = rec->duration_secs;
    }
    const rt_server *sv = in->cheapest;
    double cheap_cost = NAN;
    if (sv) {
        hw_lit(w, "<h3>Cheapest server that fits</h3>\n<table class=\"kv\">\n");
        char name[400];
        snprintf(name, sizeof name, "%s %s%s%s%s", sv->vendor_id, sv->api_reference, *sv->display_name ? " (" : "",
                 sv->display_name, *sv->display_name ? ")" : "");
        row(w, "server", name);
        row_i64(w, "vCPUs", sv->vcpus);
        row(w, "memory", fmt_mib(f, sv->memory_mib));
        row_i64(w, "GPUs", sv->gpu_count);
        if (isfinite(sv->price_usd_per_hour)) {
            char p[96];
            snprintf(p, sizeof p, "%s per hour (on demand)", fmt_usd(f, sv->price_usd_per_hour));
            row(w, "price", p);
            cheap_cost = sv->price_usd_per_hour * duration / 3600;
            row(w, "this run there", fmt_usd(f, cheap_cost));
        }
        hw_lit(w, "</table>\n");
    }
    if (in->current_instance || isfinite(in->current_price_usd_per_hour)) {
        hw_lit(w, "<h3>Where it ran</h3>\n<table class=\"kv\">\n");
        row(w, "server", in->current_instance);
        if (isfinite(in->current_price_usd_per_hour)) {
            char p[96];
            snprintf(p, sizeof p, "%s per hour (on demand)", fmt_usd(f, in->current_price_usd_per_hour));
            row(w, "price", p);
            double cost = in->current_price_usd_per_hour * duration / 3600;
            row(w, "this run", fmt_usd(f, cost));
            if (isfinite(cheap_cost) && isfinite(cost) && cost > 0) {
                char s[128];
                figure g;
                snprintf(s, sizeof s, "%s per run (%.0f%%)", fmt_usd(g, cost - cheap_cost),
                         100 * (cost - cheap_cost) / cost);
                row(w, "saving on the cheapest server", s);
            }
        }
        hw_lit(w, "</table>\n");
    }
    if (in->keeper_note) {
        hw_lit(w, "<p class=\"note\">");
        hw_html(w, in->keeper_note);
        hw_lit(w, "</p>\n");
    }
    hw_lit(w, "</section>\n");
}

/* the run: job metadata, command, exit status, host, cloud */
static void run_section(hw *w, const rt_report_info *in)
{
    figure f;
    hw_lit(w, "<section id=\"run\"><h2>The run</h2>\n<div class=\"cols\"><div><h3>Job</h3><table class=\"kv\">\n");
    const rt_job *j = in->job;
    if (j && j->struct_size >= offsetof(rt_job, container_image) + sizeof j->container_image) {
        const struct {
            const char *name, *value;
        } meta[] = {{"job", j->job_name}, {"project", j->project_name}, {"stage", j->stage_name},
                    {"task", j->task_name}, {"team", j->team}, {"environment", j->env},
                    {"language", j->language}, {"orchestrator", j->orchestrator}, {"executor", j->executor},
                    {"external run id", j->external_run_id}, {"container image", j->container_image}};
        for (size_t i = 0; i < RT_ARRAY_LEN(meta); i++)
            row(w, meta[i].name, meta[i].value);
        if (j->struct_size >= offsetof(rt_job, tag_count) + sizeof j->tag_count)
            for (size_t i = 0; i < j->tag_count && j->tags; i++)
                row(w, "tag", j->tags[i]);
    }
    row(w, "command", in->command);
    if (in->exit_status >= 0) {
        snprintf(f, sizeof f, "%d%s", in->exit_status, in->exit_status == 0 ? " (success)" : " (failure)");
        row(w, "exit status", f);
    }
    hw_lit(w, "</table></div>\n");
    if (in->host) {
        const rt_host *h = in->host;
        hw_lit(w, "<div><h3>Host</h3><table class=\"kv\">\n");
        row(w, "hostname", h->hostname);
        row(w, "host id", h->host_id);
        row(w, "IP address", h->ip);
        row_i64(w, "vCPUs", h->vcpus);
        row(w, "CPU", h->cpu_model);
        total_row(w, "memory", h->memory_mib, fmt_mib);
        row(w, "GPU", h->gpu_model);
        if (h->gpu_count > 0)
            row_i64(w, "GPUs", h->gpu_count);
        total_row(w, "GPU memory", h->gpu_memory_mib, fmt_mib);
        if (isfinite(h->storage_gb)) {
            snprintf(f, sizeof f, "%.0f GB", h->storage_gb);
            row(w, "storage", f);
        }
        row(w, "kernel", h->kernel);
        row(w, "OS", h->os);
        row(w, "allocation", h->allocation);
        hw_lit(w, "</table></div>\n");
    }
    const rt_cloud *c = in->cloud;
    if (c && (c->vendor_id || c->instance_type)) {
        hw_lit(w, "<div><h3>Cloud</h3><table class=\"kv\">\n");
        row(w, "vendor", c->vendor_id);
        row(w, "account", c->account_id);
        row(w, "region", c->region_id);
        row(w, "zone", c->zone_id);
        row(w, "instance type", c->instance_type);
        hw_lit(w, "</table></div>\n");
    }
    hw_lit(w, "</div></section>\n");
}

/* ---- charts ------------------------------------------------------------------------------ */

typedef struct chart_def {
    const char *title, *unit; /* unit: the page script's formatter: cores, gpus, mib, rate, bytes */
    int series[4];            /* RPT_* indices, -1 ends */
    const char *names[4];
    const char *colors[4];
    bool gpu_only;
    int marks; /* the cgroup's marks it shows: 0 none, 1 CPU (throttling, quota), 2 memory (OOM kills, limit) */
} chart_def;

static const chart_def charts[] = {
    {"CPU", "cores", {RPT_JOB_CORES, RPT_CPU_CORES, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"}, false, 1},
    {"Memory", "mib", {RPT_JOB_PSS, RPT_JOB_RSS, RPT_MEM_USED, -1}, {"job PSS", "job RSS", "machine used"},
     {"#d62728", "#ff7f0e", "#1f77b4"}, false, 2},
    {"GPU utilization", "gpus", {RPT_JOB_GPU, RPT_GPU, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"}, true, 0},
    {"GPU memory (VRAM)", "mib", {RPT_JOB_VRAM, RPT_VRAM, -1, -1}, {"job", "machine"}, {"#d62728", "#1f77b4"}, true, 0},
    {"Disk I/O", "rate", {RPT_JOB_READ, RPT_JOB_WRITE, RPT_DISK_READ, RPT_DISK_WRITE},
     {"job read", "job write", "disk read", "disk write"}, {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"}, false, 0},
    {"Network", "rate", {RPT_NET_RECV, RPT_NET_SENT, -1, -1}, {"received", "sent"}, {"#1f77b4", "#2ca02c"}, false, 0},
    {"Disk space used", "bytes", {RPT_DISK_SPACE, -1, -1, -1}, {"used"}, {"#9467bd"}, false, 0},
};

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

/* which series have any figure */
static void present_series(const rt_report *r, bool present[RPT_SERIES])
{
    memset(present, 0, RPT_SERIES * sizeof *present);
    for (size_t i = 0; i < r->n; i++)
        for (size_t k = 0; k < RPT_SERIES; k++)
            present[k] |= r->b[i].c[k].weight > 0;
}

/* whether chart i is drawn: it has a series with a figure (GPU charts: a GPU was seen) */
static bool chart_shown(const rt_report *r, const bool present[RPT_SERIES], size_t i)
{
    if (charts[i].gpu_only && !r->gpu_seen)
        return false;
    for (int k = 0; k < 4 && charts[i].series[k] >= 0; k++)
        if (present[charts[i].series[k]])
            return true;
    return false;
}

/* The cgroup's marks as script, times in seconds after t0: MK.oom ([time, kills] per OOM
 * kill), MK.thr ([start, end] per throttled stretch), MK.limit (MiB) and MK.quota (cores),
 * null when none. */
static void write_marks(hw *w, const rt_report *r, double t0)
{
    hw_lit(w, "var MK={oom:[");
    for (size_t i = 0; i < r->n_oom; i++) {
        hw_lit(w, i ? ",[" : "[");
        hw_secs(w, r->oom[i].t - t0);
        hw_put(w, ",", 1);
        hw_num(w, r->oom[i].kills);
        hw_put(w, "]", 1);
    }
    hw_lit(w, "],thr:[");
    for (size_t i = 0; i < r->n_thr; i++) {
        hw_lit(w, i ? ",[" : "[");
        hw_secs(w, r->thr[i].t0 - t0);
        hw_put(w, ",", 1);
        hw_secs(w, r->thr[i].t1 - t0);
        hw_put(w, "]", 1);
    }
    hw_lit(w, "],limit:");
    hw_num(w, r->mem_limit);
    hw_lit(w, ",quota:");
    hw_num(w, r->cpu_quota);
    hw_lit(w, "};\n");
}

/* The data and the chart definitions as script: T (seconds after T0, one per point), G (1
 * where a gap comes before the point), S[k] (low, mean, high per point, null when none). */
static int write_data(hw *w, const rt_report *r)
{
    bool present[RPT_SERIES];
    present_series(r, present);
    double t0 = r->n ? r->b[0].t0 : 0;
    hw_lit(w, "var T0=");
    hw_secs(w, t0);
    for (int pass = 0; pass < 2; pass++) {
        hw_lit(w, pass == 0 ? ";\nvar T=[" : "];\nvar G=[");
        point_iter it = {r, 0, r->n > RPT_POINTS};
        rpt_bucket p;
        for (bool first = true; next_point(&it, &p); first = false) {
            if (!first)
                hw_put(w, ",", 1);
            if (pass == 0)
                hw_secs(w, p.t0 + (p.t1 - p.t0) / 2 - t0);
            else
                hw_put(w, p.gap ? "1" : "0", 1);
        }
    }
    hw_lit(w, "];\nvar S=[");
    for (size_t k = 0; k < RPT_SERIES; k++) {
        hw_lit(w, k ? ",\n[" : "\n[");
        point_iter it = {r, 0, r->n > RPT_POINTS};
        rpt_bucket p;
        for (bool first = true; present[k] && next_point(&it, &p); first = false) {
            const rpt_cell *c = &p.c[k];
            if (!first)
                hw_put(w, ",", 1);
            if (c->weight > 0) {
                hw_num(w, c->min);
                hw_put(w, ",", 1);
                hw_num(w, c->sum / c->weight);
                hw_put(w, ",", 1);
                hw_num(w, c->max);
            } else {
                hw_lit(w, "null,null,null");
            }
        }
        hw_put(w, "]", 1);
    }
    hw_lit(w, "];\nvar CH=[");
    int nchart = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(charts); i++) {
        const chart_def *c = &charts[i];
        if (!chart_shown(r, present, i))
            continue;
        hw_fmt(w, "%s\n{id:%d,title:\"%s\",unit:\"%s\",m:%d,s:[", nchart ? "," : "", nchart, c->title, c->unit,
               c->marks);
        bool first = true;
        for (int k = 0; k < 4 && c->series[k] >= 0; k++) {
            if (!present[c->series[k]])
                continue;
            hw_fmt(w, "%s[%d,\"%s\",\"%s\"]", first ? "" : ",", c->series[k], c->names[k], c->colors[k]);
            first = false;
        }
        hw_lit(w, "]}");
        nchart++;
    }
    hw_lit(w, "];\n");
    write_marks(w, r, t0);
    return nchart;
}

/* the page's own styles: screen, and print (no chart cut across pages) */
static const char page_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;margin:0 auto;"
    "max-width:1200px;padding:16px 24px;background:#fff}\n"
    "h1{font-size:24px;margin:8px 0 2px}h2{font-size:19px;border-bottom:2px solid #1f77b4;padding-bottom:3px;"
    "margin:28px 0 10px}h3{font-size:15px;margin:14px 0 6px}\n"
    ".sub{color:#555;margin:0 0 8px}.note{color:#666;font-size:12px;margin:4px 0}\n"
    ".chart-block{margin:0 0 18px;break-inside:avoid;page-break-inside:avoid}\n"
    ".chart-block h3{display:inline-block;margin:0 12px 2px 0}.legend{display:inline-block;font-size:12px;color:#333}\n"
    ".legend .dygraph-legend-line{bottom:.3ex}\n"
    ".chart{width:100%;height:220px}\n"
    ".cols{display:flex;flex-wrap:wrap;gap:12px 32px;align-items:flex-start}\n"
    "table{border-collapse:collapse;font-size:13px}th,td{padding:3px 10px 3px 0;text-align:left;vertical-align:top}"
    "table.kv th{color:#555;font-weight:600;white-space:nowrap}table.dist td{text-align:right;padding-left:14px}"
    "table.dist tr:first-child th{text-align:right;color:#555}tr+tr{border-top:1px solid #eee}\n"
    "pre{background:#f5f7fa;border:1px solid #e1e4e8;padding:8px 10px;font-size:12px;white-space:pre-wrap}\n"
    "footer{color:#888;font-size:12px;margin-top:30px}\n"
    "@media print{body{max-width:none;padding:0;font-size:11px}"
    "section{break-before:page;page-break-before:always}section#charts{break-before:auto;page-break-before:auto}"
    ".chart-block,table,pre{break-inside:avoid;page-break-inside:avoid}.chart{height:190px}"
    "h2,h3{break-after:avoid;page-break-after:avoid}.hint{display:none}}\n";

/* the page's own script: builds the rows, draws the charts (the band's top edge stroked, so
 * that a spike one point wide shows), synchronizes them, and records on <body> how many were
 * drawn (data-charts-drawn) and on each chart its y range and plot area */
static const char page_js[] =
    "(function(){\n"
    "function si(v,u,base,sfx){if(v===null||v===undefined||isNaN(v))return '\\u2014';var i=0,a=Math.abs(v);"
    "while(a>=base&&i<u.length-1){a/=base;v/=base;i++;}return (Math.abs(v)>=100||i==0&&v==Math.round(v)?v.toFixed(0):"
    "v.toPrecision(3))+' '+u[i]+sfx;}\n"
    "var F={cores:function(v){return v===null?'\\u2014':v.toFixed(2)},gpus:function(v){return v===null?'\\u2014':"
    "v.toFixed(2)},mib:function(v){return si(v,['MiB','GiB','TiB'],1024,'')},"
    "rate:function(v){return si(v,['B','KiB','MiB','GiB','TiB'],1024,'/s')},"
    "bytes:function(v){return si(v,['B','KiB','MiB','GiB','TiB','PiB'],1024,'')}};\n"
    "function edge(e){var c=e.drawingContext,a=e.plotArea,p=e.points,pen=false;c.save();c.strokeStyle=e.color;"
    "c.globalAlpha=0.55;c.lineWidth=1;c.beginPath();for(var i=0;i<p.length;i++){var t=Math.min(p[i].y_top,"
    "p[i].y_bottom);if(p[i].yval===null||isNaN(t)){pen=false;continue;}var y=a.h*t+a.y;if(pen)c.lineTo(p[i].canvasx,y);"
    "else c.moveTo(p[i].canvasx,y);pen=true;}c.stroke();c.restore();}\n"
    "var P=Dygraph.Plotters,plotter=[edge,P.errorPlotter,P.linePlotter];\n"
    "function level(c){return c.m==1?MK.quota:c.m==2?MK.limit:null;}\n"
    "function marks(c,div){return function(x,a,g){var n=0,L=level(c);function X(t){return g.toDomXCoord(new Date((T0+t)*1000));}\n"
    " x.save();x.font='11px sans-serif';\n"
    " if(c.m==1){x.fillStyle='rgba(148,103,189,0.22)';MK.thr.forEach(function(s){var x0=Math.max(X(s[0]),a.x),"
    "x1=Math.min(X(s[1]),a.x+a.w);if(x1<a.x||x0>a.x+a.w)return;x.fillRect(x0,a.y,Math.max(x1-x0,1),a.h);n++;});}\n"
    " if(L!==null){var y=g.toDomYCoord(L),lab=(c.m==1?'CPU quota ':'memory limit ')+F[c.unit](L);"
    "if(y<a.y){y=a.y;lab+=' (above)';}x.strokeStyle='#555';x.fillStyle='#555';x.setLineDash([6,4]);x.beginPath();"
    "x.moveTo(a.x,y);x.lineTo(a.x+a.w,y);x.stroke();x.setLineDash([]);x.fillText(lab,a.x+4,y>a.y+12?y-3:y+12);n++;}\n"
    " if(c.m==2){x.strokeStyle='#c00';x.fillStyle='#c00';x.lineWidth=2;MK.oom.forEach(function(o){var t=X(o[0]);"
    "if(t<a.x||t>a.x+a.w)return;x.beginPath();x.moveTo(t,a.y);x.lineTo(t,a.y+a.h);x.stroke();"
    "x.fillText(o[1]>1?'OOM kill ('+o[1]+')':'OOM kill',Math.min(t+3,a.x+a.w-60),a.y+12);n++;});}\n"
    " x.restore();div.setAttribute('data-marks',n);};}\n"
    "var n=T.length,drawn=0,gs=[];\n"
    "CH.forEach(function(c){\n"
    " var rows=[],labels=['time'],colors=[],mx=-Infinity;\n"
    " c.s.forEach(function(s){labels.push(s[1]);colors.push(s[2]);});\n"
    " for(var i=0;i<n;i++){var d=new Date((T0+T[i])*1000);\n"
    "  if(G[i]&&i>0){var gr=[new Date((T0+(T[i-1]+T[i])/2)*1000)];c.s.forEach(function(){gr.push(null)});rows.push(gr);}\n"
    "  var r=[d];c.s.forEach(function(s){var a=S[s[0]];if(a[3*i]===null){r.push(null);return;}"
    "r.push([a[3*i],a[3*i+1],a[3*i+2]]);if(a[3*i+2]>mx)mx=a[3*i+2];});rows.push(r);}\n"
    " var div=document.getElementById('c'+c.id),f=F[c.unit],L=level(c);\n"
    " var g=new Dygraph(div,rows,{labels:labels,colors:colors,customBars:true,fillAlpha:0.3,plotter:plotter,strokeWidth:1.4,"
    "labelsKMG2:c.unit!='cores'&&c.unit!='gpus',labelsDiv:document.getElementById('l'+c.id),legend:'always',labelsUTC:true,includeZero:true,connectSeparatedPoints:false,"
    "xRangePad:2,underlayCallback:marks(c,div),valueRange:L!==null&&L>mx&&L<=2*mx?[0,L*1.08]:null,axes:{x:{axisLabelWidth:66},y:{valueFormatter:f,axisLabelFormatter:f,axisLabelWidth:72}},"
    "plugins:[new Dygraph.Plugins.Crosshair({direction:'vertical'})]});\n"
    " div.setAttribute('data-series-max',mx);\n"
    " g.ready(function(){var a=g.getArea(),b=div.getBoundingClientRect(),y=g.yAxisRange();\n"
    "  div.setAttribute('data-ymax',y[1]);div.setAttribute('data-plot',[Math.round(b.left+window.scrollX+a.x),"
    "Math.round(b.top+window.scrollY+a.y),Math.round(a.w),Math.round(a.h)].join(','));\n"
    "  drawn++;document.body.setAttribute('data-charts-drawn',drawn);});\n"
    " gs.push(g);});\n"
    "if(gs.length>1)Dygraph.synchronize(gs,{zoom:true,selection:true,range:false});\n"
    "function fit(){gs.forEach(function(g){g.resize();});}\n"
    "window.addEventListener('beforeprint',fit);window.addEventListener('afterprint',fit);\n"
    "})();\n";

static void write_head(hw *w, const char *title, int expected)
{
    hw_lit(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<meta name=\"generator\" content=\"resource-tracker " RT_VERSION "\">\n<title>");
    hw_html(w, title);
    hw_lit(w, " \xE2\x80\x94 resource-tracker report</title>\n<style>\n");
    hw_put(w, rt_asset_dygraph_css, rt_asset_dygraph_css_len);
    hw_lit(w, "\n");
    hw_lit(w, page_css);
    hw_lit(w, "</style>\n<script>\n");
    hw_put(w, rt_asset_dygraph_js, rt_asset_dygraph_js_len);
    hw_lit(w, "\n</script>\n<script>\n");
    hw_put(w, rt_asset_synchronizer_js, rt_asset_synchronizer_js_len);
    hw_lit(w, "\n</script>\n<script>\n");
    hw_put(w, rt_asset_crosshair_js, rt_asset_crosshair_js_len);
    hw_fmt(w, "\n</script>\n</head>\n<body data-charts-expected=\"%d\" data-charts-drawn=\"0\">\n", expected);
}

/* the line under the title: when, how long, where, how it ended */
static void write_subtitle(hw *w, const rt_report_info *in)
{
    figure a, b;
    const rt_summary *s = in->summary;
    hw_lit(w, "<p class=\"sub\">");
    if (s && s->samples > 0) {
        hw_html(w, fmt_time(a, s->start_secs));
        hw_lit(w, " \xC2\xB7 ");
        hw_html(w, fmt_duration(b, s->duration_secs));
    }
    if (in->host && in->host->hostname) {
        hw_lit(w, " \xC2\xB7 on ");
        hw_html(w, in->host->hostname);
    }
    if (in->exit_status >= 0)
        hw_fmt(w, " \xC2\xB7 exit status %d", in->exit_status);
    hw_lit(w, "</p>\n");
}

rt_error rt_report_write(const rt_report *r, const rt_report_info *info, int fd)
{
    if (!r || fd < 0)
        return RT_ERR_INVALID;
    rt_report_info in = RT_REPORT_INFO_INIT;
    in.current_price_usd_per_hour = NAN;
    if (info && rt_struct_copy(&in, sizeof in, info) < 0)
        return RT_ERR_INVALID;
    if (in.summary && in.summary->samples == 0)
        in.summary = NULL;
    hw *w = malloc(sizeof *w);
    if (!w)
        return RT_ERR_NOMEM;
    w->fd = fd;
    w->err = 0;
    w->len = 0;

    const char *title = in.title;
    if (!title && in.job && in.job->job_name)
        title = in.job->job_name;
    if (!title && in.summary && in.summary->job_name)
        title = in.summary->job_name;
    if (!title)
        title = "resource-tracker run";
    bool present[RPT_SERIES];
    present_series(r, present);
    int expected = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(charts); i++)
        expected += chart_shown(r, present, i);
    write_head(w, title, expected);
    hw_lit(w, "<header><h1>");
    hw_html(w, title);
    hw_lit(w, "</h1>\n");
    write_subtitle(w, &in);
    hw_lit(w, "</header>\n<section id=\"charts\"><h2>Over time</h2>\n"
              "<p class=\"note hint\">Drag to zoom (all charts follow), double-click to zoom out; the line is the "
              "mean of each point, the band the least and greatest value it stands for.</p>\n");
    if (expected == 0)
        hw_lit(w, "<p>No samples.</p>\n");
    for (size_t i = 0, k = 0; i < RT_ARRAY_LEN(charts); i++) { /* in write_data's order */
        if (!chart_shown(r, present, i))
            continue;
        hw_fmt(w, "<div class=\"chart-block\"><h3>%s</h3><div class=\"legend\" id=\"l%zu\"></div>"
                  "<div class=\"chart\" id=\"c%zu\"></div></div>\n", charts[i].title, k, k);
        k++;
    }
    hw_lit(w, "</section>\n");
    if (in.summary)
        summary_section(w, in.summary);
    recommendation_section(w, &in);
    run_section(w, &in);
    hw_lit(w, "<footer>resource-tracker " RT_VERSION "; charts: dygraphs 2.2.1 (MIT licence), embedded.</footer>\n"
              "<script>\n");
    write_data(w, r);
    hw_lit(w, page_js);
    hw_lit(w, "</script>\n</body>\n</html>\n");
    hw_flush(w);
    int err = w->err;
    free(w);
    if (err) {
        errno = err;
        return RT_ERR_IO;
    }
    return RT_OK;
}
