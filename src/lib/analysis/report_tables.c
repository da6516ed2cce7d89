/* report_tables.c - the report's tables: the run's statistics (the job, the machine, its
 * cgroup and pressure), the recommendation and why, and the run's facts; figures in readable
 * units. Written through the page's buffer (rpt_hw, report_html.c). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/core.h"
#include "../core/job.h"
#include "../core/units.h"
#include "efficiency.h"
#include "energy_words.h"
#include "gpu_work_words.h"
#include "report_int.h"
#include "words.h"

/* ---- readable figures ------------------------------------------------------------------ */


static const char *fmt_num(rpt_figure f, double v, int decimals)
{
    if (!isfinite(v))
        snprintf(f, sizeof(rpt_figure), "\xE2\x80\x94"); /* an em dash: not known */
    else
        snprintf(f, sizeof(rpt_figure), "%.*f", decimals, v);
    return f;
}

/* v in the unit of scale 1 (B or MiB), with a binary prefix that keeps it under 1024 */
static const char *fmt_scaled(rpt_figure f, double v, const char *const *units, size_t nunits)
{
    if (!isfinite(v))
        return fmt_num(f, v, 0);
    size_t u = 0;
    while (fabs(v) >= 1024 && u + 1 < nunits) {
        v /= 1024;
        u++;
    }
    snprintf(f, sizeof(rpt_figure), u == 0 && v == floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
    return f;
}

const char *rpt_fmt_bytes(rpt_figure f, double v)
{
    return fmt_scaled(f, v, rt_binary_units, RT_BINARY_UNITS);
}
#define fmt_bytes rpt_fmt_bytes

static const char *fmt_mib(rpt_figure f, double v)
{
    return fmt_scaled(f, v, rt_binary_units + 2, RT_BINARY_UNITS - 2); /* from MiB up */
}

const char *rpt_fmt_duration(rpt_figure f, double secs)
{
    if (!isfinite(secs) || secs < 0)
        return fmt_num(f, NAN, 0);
    if (secs > RPT_MAX_SECS) { /* past llround's range in days: no calendar for it */
        snprintf(f, sizeof(rpt_figure), "%.3g s", secs);
        return f;
    }
    if (secs < 60) {
        snprintf(f, sizeof(rpt_figure), "%.1f s", secs);
        return f;
    }
    long long s = llround(secs);
    long long d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
    if (d > 0)
        snprintf(f, sizeof(rpt_figure), "%lld d %lld h %lld min", d, h, m);
    else if (h > 0)
        snprintf(f, sizeof(rpt_figure), "%lld h %lld min %lld s", h, m, s % 60);
    else
        snprintf(f, sizeof(rpt_figure), "%lld min %lld s", m, s % 60);
    return f;
}

const char *rpt_fmt_time(rpt_figure f, double unix_secs)
{
    if (!(fabs(unix_secs) <= RPT_MAX_SECS)) /* NaN, or out of time_t's range: no date */
        return fmt_num(f, NAN, 0);
    time_t t = (time_t)floor(unix_secs);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(f, sizeof(rpt_figure), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        return fmt_num(f, NAN, 0);
    return f;
}

const char *rpt_fmt_exit(rpt_figure f, int status)
{
    return rt_exit_words(f, sizeof(rpt_figure), status);
}

static const char *fmt_usd(rpt_figure f, double v)
{
    if (!isfinite(v))
        return fmt_num(f, v, 0);
    if (v != 0 && fabs(v) < 0.001) /* a short run's cost: four significant digits, not $0.0000 */
        snprintf(f, sizeof(rpt_figure), "$%.*f", (int)ceil(-log10(fabs(v))) + 3, v);
    else
        snprintf(f, sizeof(rpt_figure), fabs(v) < 1 ? "$%.4f" : "$%.2f", v);
    return f;
}

/* ---- tables ------------------------------------------------------------------------------ */

/* one key/value row; a NULL or empty value leaves the row out */
static void row(rpt_hw *w, const char *key, const char *value)
{
    if (!value || !*value)
        return;
    rpt_hw_lit(w, "<tr><th>");
    rpt_hw_html(w, key);
    rpt_hw_lit(w, "</th><td>");
    rpt_hw_html(w, value);
    rpt_hw_lit(w, "</td></tr>\n");
}

static void row_i64(rpt_hw *w, const char *key, int64_t v)
{
    if (v == RT_NULL_I64)
        return;
    rpt_figure f;
    snprintf(f, sizeof f, "%lld", (long long)v);
    row(w, key, f);
}

typedef const char *(*fmt_fn)(rpt_figure f, double v);

static const char *fmt_cores(rpt_figure f, double v)
{
    return fmt_num(f, v, 2);
}

static const char *fmt_count(rpt_figure f, double v)
{
    return fmt_num(f, v, 0);
}

static const char *fmt_pct(rpt_figure f, double v)
{
    if (!isfinite(v))
        return fmt_num(f, v, 0);
    snprintf(f, sizeof(rpt_figure), "%.1f%%", v);
    return f;
}

/* a distribution row of the summary: mean, p50, p95, peak */
static void dist_row(rpt_hw *w, const char *name, const rt_dist *d, fmt_fn fmt)
{
    if (isnan(d->mean) && isnan(d->peak))
        return;
    rpt_figure a, b, c, e;
    rpt_hw_lit(w, "<tr><th>");
    rpt_hw_html(w, name);
    rpt_hw_lit(w, "</th><td>");
    rpt_hw_html(w, fmt(a, d->mean));
    rpt_hw_lit(w, "</td><td>");
    rpt_hw_html(w, fmt(b, d->p50));
    rpt_hw_lit(w, "</td><td>");
    rpt_hw_html(w, fmt(c, d->p95));
    rpt_hw_lit(w, "</td><td>");
    rpt_hw_html(w, fmt(e, d->peak));
    rpt_hw_lit(w, "</td></tr>\n");
}

static void total_row(rpt_hw *w, const char *name, double v, fmt_fn fmt)
{
    rpt_figure f;
    if (isfinite(v))
        row(w, name, fmt(f, v));
}

/* bytes the job wrote that reached storage: those whose writeback the kernel cancelled are
 * said apart */
static double job_written(const rt_summary *s)
{
    double w = s->process_write_bytes - (s->process_cancelled_write_bytes > 0 ? s->process_cancelled_write_bytes : 0);
    return w < 0 ? 0 : w;
}

/* whether the run saw a GPU: without one, no GPU row is shown */
static bool had_gpus(const rt_summary *s)
{
    return s && s->gpu_count > 0;
}

/* "vendor type (display name)" */
static const char *server_name(char *buf, size_t size, const rt_server *sv)
{
    snprintf(buf, size, "%s %s%s%s%s", sv->vendor_id, sv->api_reference, *sv->display_name ? " (" : "",
             sv->display_name, *sv->display_name ? ")" : "");
    return buf;
}

/* What the run cost where it ran and would on the cheapest server that fits (USD; NaN: not
 * known), over the run's seconds (the recommendation's when it has them). */
typedef struct run_costs {
    double secs, here, cheapest;
} run_costs;

static run_costs costs_of(const rt_report_info *in)
{
    run_costs c = {in->summary ? in->summary->duration_secs : NAN, NAN, NAN};
    const rt_recommendation *rec = in->recommendation;
    if (rec && isfinite(rec->duration_secs) && rec->duration_secs > 0)
        c.secs = rec->duration_secs;
    if (in->cheapest && isfinite(in->cheapest->price_usd_per_hour))
        c.cheapest = in->cheapest->price_usd_per_hour * c.secs / 3600;
    if (isfinite(in->current_price_usd_per_hour))
        c.here = in->current_price_usd_per_hour * c.secs / 3600;
    return c;
}

#define fmt_joules rpt_fmt_joules

/* The run's energy on the cheapest server: "363 J (estimated: AMD EPYC 7543, 225 W TDP /
 * 64 threads)" into buf; "" when its CPU is not in the TDP table or the run's CPU time is not
 * known (a caller's rt_server from before 0.15 has no CPU: nothing). */
static const char *cheapest_energy(char *buf, size_t size, const rt_report_info *in, double secs)
{
    buf[0] = '\0';
    rt_server_energy e = RT_SERVER_ENERGY_INIT;
    if (in->cheapest && in->summary &&
        rt_server_energy_estimate(in->cheapest, in->summary->process_cpu_secs, secs, &e) == RT_OK) {
        rpt_figure f;
        snprintf(buf, size, "%s (%s)", fmt_joules(f, e.energy_joules), e.words);
    }
    return buf;
}

/* one figure of the answer: the value large, what it is under it */
static void figure(rpt_hw *w, const char *id, const char *value, const char *what, bool bad)
{
    rpt_hw_lit(w, "<div class=\"fig");
    rpt_hw_lit(w, bad ? " bad\"" : "\"");
    if (id) {
        rpt_hw_lit(w, " id=\"");
        rpt_hw_lit(w, id);
        rpt_hw_lit(w, "\"");
    }
    rpt_hw_lit(w, "><b>");
    rpt_hw_html(w, value);
    rpt_hw_lit(w, "</b><span>");
    rpt_hw_html(w, what);
    rpt_hw_lit(w, "</span></div>\n");
}

/* How the run stands (rt_report_info.run_state), one figure with the exit status when
 * known: "Running" ("Pending" in the Python tracker 0.5's words), "Finished", "Failed" (red). */
static void status_figure(rpt_hw *w, const rt_report_info *in)
{
    static const char *const words[] = {"", "Running", "Finished", "Failed"};
    const char *word = in->run_state == RT_RUN_RUNNING && in->wording == RT_REPORT_WORDING_PY05 ? "Pending"
                                                                                                 : words[in->run_state];
    rpt_figure e;
    char what[160], exit[96] = "";
    if (in->exit_status >= 0)
        snprintf(exit, sizeof exit, ", exit status %s", rpt_fmt_exit(e, in->exit_status));
    if (in->run_state == RT_RUN_RUNNING)
        snprintf(what, sizeof what, "status%s: still running, the figures so far", exit);
    else if (in->run_state == RT_RUN_FAILED)
        snprintf(what, sizeof what, "status%s: the figures may be incomplete", exit);
    else
        snprintf(what, sizeof what, "status%s", exit);
    figure(w, "answer-status", word, what, in->run_state == RT_RUN_FAILED);
}

/* The answer's figures: what the job used (the summary's first lines: duration, CPU time,
 * mean and peak cores, the memory need and the figure it came from, storage read and
 * written), or the machine's without a job; and how the job ended. */
static void answer_figures(rpt_hw *w, const rt_report_info *in)
{
    const rt_summary *s = in->summary;
    rpt_figure a, b;
    char v[160], what[160];
    rpt_hw_lit(w, "<div class=\"figs\" id=\"answer-used\">\n");
    figure(w, NULL, rpt_fmt_duration(a, s->duration_secs), "duration", false);
    if (s->has_process) {
        const rt_need *m = &s->memory_need;
        figure(w, NULL, rpt_fmt_duration(a, s->process_cpu_secs), "CPU time", false);
        snprintf(v, sizeof v, "%s / %s", fmt_cores(a, s->process_cores.mean), fmt_cores(b, s->process_cores.peak));
        figure(w, NULL, v, "cores, mean / peak", false);
        if (m->source == RT_NEED_UNKNOWN)
            snprintf(what, sizeof what, "memory (no memory figure)");
        else
            snprintf(what, sizeof what, "memory: %s%s", rt_need_source_text(m->source),
                     m->sampled ? ", a lower bound" : "");
        figure(w, NULL, m->source == RT_NEED_UNKNOWN ? "unknown" : fmt_mib(a, m->mib), what, false);
        snprintf(v, sizeof v, "%s / %s", fmt_bytes(a, s->process_read_bytes), fmt_bytes(b, job_written(s)));
        figure(w, NULL, v, "storage read / written", false);
    } else {
        snprintf(v, sizeof v, "%s / %s", fmt_cores(a, s->cpu_cores.mean), fmt_cores(b, s->cpu_cores.peak));
        figure(w, NULL, v, "machine cores busy, mean / peak (no job was tracked)", false);
        figure(w, NULL, fmt_mib(a, s->memory_used_mib.peak), "machine memory used, peak", false);
        snprintf(v, sizeof v, "%s / %s", fmt_bytes(a, s->disk_read_bytes), fmt_bytes(b, s->disk_write_bytes));
        figure(w, NULL, v, "disks read / written", false);
    }
    if (in->run_state > RT_RUN_UNSAID && in->run_state <= RT_RUN_FAILED)
        status_figure(w, in);
    else if (in->exit_status >= 0)
        figure(w, "answer-exit", rpt_fmt_exit(a, in->exit_status), "exit status", in->exit_status != 0);
    rpt_hw_lit(w, "</div>\n");
}

/* Whether the answer's cost row says the lookup's note (no cost and no server known): the
 * Recommendation section then leaves it out, so that the page says it once. */
static bool note_in_answer(const rt_report_info *in)
{
    return in->summary && in->keeper_note && !in->cheapest && !isfinite(costs_of(in).here);
}

/* The rows "price" (per hour, on demand) and run_key (what the run cost there) of a server;
 * none when its price is not known. Returns whether it was. */
static bool price_rows(rpt_hw *w, double usd_per_hour, const char *run_key, double run_usd)
{
    if (!isfinite(usd_per_hour))
        return false;
    rpt_figure f;
    char p[96];
    snprintf(p, sizeof p, "%s per hour (on demand)", fmt_usd(f, usd_per_hour));
    row(w, "price", p);
    row(w, run_key, fmt_usd(f, run_usd));
    return true;
}

/* The answer's cost: the run where it ran, the cheapest server that fits and the run there;
 * else why they are not known (the lookup's note: "prices: offline (...)" without a network);
 * nothing when neither. */
static void answer_cost(rpt_hw *w, const rt_report_info *in)
{
    run_costs c = costs_of(in);
    const rt_server *sv = in->cheapest;
    if (!isfinite(c.here) && !sv && !in->keeper_note)
        return;
    rpt_figure a, b, m;
    char line[640], name[400];
    rpt_hw_lit(w, "<tr id=\"answer-cost\"><th>Cost</th><td>");
    if (isfinite(c.here)) {
        snprintf(line, sizeof line, "%s this run%s%s (%s per hour)", fmt_usd(a, c.here), in->current_instance ? " on " : "",
                 in->current_instance ? in->current_instance : "", fmt_usd(b, in->current_price_usd_per_hour));
        rpt_hw_html(w, line);
    }
    if (sv) {
        rpt_hw_lit(w, isfinite(c.here) ? "<br>" : "");
        snprintf(line, sizeof line, "cheapest server that fits: %s, %lld vCPUs, %s", server_name(name, sizeof name, sv),
                 (long long)sv->vcpus, fmt_mib(m, sv->memory_mib));
        rpt_hw_html(w, line);
        if (isfinite(c.cheapest)) {
            snprintf(line, sizeof line, ": %s per hour, %s this run", fmt_usd(a, sv->price_usd_per_hour),
                     fmt_usd(b, c.cheapest));
            rpt_hw_html(w, line);
        }
        char e[400];
        if (*cheapest_energy(e, sizeof e, in, c.secs)) {
            rpt_hw_lit(w, "<br><span id=\"answer-cheapest-energy\">energy of this run there: ");
            rpt_hw_html(w, e);
            rpt_hw_lit(w, "</span>");
        }
    }
    if (!isfinite(c.here) && !sv)
        rpt_hw_html(w, in->keeper_note);
    rpt_hw_lit(w, "</td></tr>\n");
}

/* joules as J, kJ, MJ or GJ with 3 significant digits */
const char *rpt_fmt_joules(rpt_figure f, double j)
{
    static const char *const u[] = {"J", "kJ", "MJ", "GJ"};
    size_t k = 0;
    while (isfinite(j) && fabs(j) >= 1000 && k + 1 < RT_ARRAY_LEN(u)) {
        j /= 1000;
        k++;
    }
    if (!isfinite(j))
        return fmt_num(f, j, 0);
    snprintf(f, sizeof(rpt_figure), "%.3g %s", j, u[k]);
    return f;
}

/* grams of CO2e as mg (under 0.1 g), g or kg (t past a million grams), 3 significant digits */
static const char *fmt_grams(rpt_figure f, double g)
{
    if (!isfinite(g))
        return fmt_num(f, g, 0);
    if (fabs(g) >= 1e6)
        snprintf(f, sizeof(rpt_figure), "%.3g t", g / 1e6);
    else if (fabs(g) >= 1000)
        snprintf(f, sizeof(rpt_figure), "%.3g kg", g / 1000);
    else if (g != 0 && fabs(g) < 0.1)
        snprintf(f, sizeof(rpt_figure), "%.3g mg", g * 1000);
    else
        snprintf(f, sizeof(rpt_figure), "%.3g g", g);
    return f;
}

/* "1.23 kJ (estimated)" into buf, "" when the figure has no method */
static const char *energy_words(char *buf, size_t size, double joules, const char *method)
{
    rpt_figure a;
    buf[0] = '\0';
    if (method && isfinite(joules))
        snprintf(buf, size, "%s (%s)", fmt_joules(a, joules), method);
    return buf;
}

/* The answer's energy, on the first screen: the job's and the machine's with their
 * methods; their CO2e and the grid it came from, or "unknown" and how to set a grid; the
 * estimate's model and what could not be read, in small type. Nothing when no record had
 * energy. */
static void answer_energy(rpt_hw *w, const rt_summary *s)
{
    char job[700], machine[700], line[1400], parts[600];
    energy_words(job, sizeof job, s->process_energy_joules, s->process_energy_method);
    energy_words(machine, sizeof machine, s->energy_joules, s->energy_method);
    /* 0.19: by part where the records carried their domains: "job 611 J (GPU 600 J measured by
     * NVML, CPU 11.4 J estimated), machine 612 J" (the machine's parts when there is no job) */
    bool by_job = job[0] != '\0';
    rt_summary_energy_words(s, by_job, parts, sizeof parts, NULL);
    if (parts[0]) {
        rpt_figure a;
        char how[96] = "";
        if (s->energy_meter_source && s->energy_method)
            snprintf(how, sizeof how, " %s", rt_ew_how(s->energy_meter_source, s->energy_method, line, sizeof line));
        if (by_job)
            snprintf(job, sizeof job, "%s (%s)", fmt_joules(a, s->process_energy_joules), parts);
        if (machine[0])
            snprintf(machine, sizeof machine, "%s%s%s%s%s", fmt_joules(a, s->energy_joules), how,
                     by_job ? "" : " (", by_job ? "" : parts, by_job ? "" : ")");
    }
    if (!job[0] && !machine[0])
        return;
    rpt_figure a, b;
    rpt_hw_lit(w, "<tr id=\"answer-energy\"><th>Energy</th><td>");
    snprintf(line, sizeof line, "%s%s%s%s%s", job[0] ? "job " : "", job, job[0] && machine[0] ? ", " : "",
             machine[0] ? "machine " : "", machine);
    rpt_hw_html(w, line);
    rpt_hw_lit(w, "<br><span id=\"answer-co2e\">");
    const rt_grid *g = s->grid;
    bool known = g && isfinite(g->g_per_kwh) && g->g_per_kwh > 0 &&
                 (isfinite(s->process_co2e_grams) || isfinite(s->co2e_grams));
    if (known) {
        char where[400];
        /* "FR (France): 56 g/kWh, Ember yearly electricity data, 2023"; a given one: "40 g/kWh, given" */
        snprintf(where, sizeof where, "%.40s%s%.60s%s%s%.0f g/kWh%s%.200s", g->zone ? g->zone : "",
                 g->zone && g->name ? " (" : "", g->name ? g->name : "", g->zone && g->name ? ")" : "",
                 g->zone || g->name ? ": " : "", g->g_per_kwh, g->source ? "; " : "", g->source ? g->source : "");
        if (g->year > 0) {
            size_t n = strlen(where);
            snprintf(where + n, sizeof where - n, ", %d", g->year);
        }
        snprintf(line, sizeof line, "CO2e: %s%s%s%s%s (grid %s)", isfinite(s->process_co2e_grams) ? "job " : "",
                 isfinite(s->process_co2e_grams) ? fmt_grams(a, s->process_co2e_grams) : "",
                 isfinite(s->process_co2e_grams) && isfinite(s->co2e_grams) ? ", " : "",
                 isfinite(s->co2e_grams) ? "machine " : "", isfinite(s->co2e_grams) ? fmt_grams(b, s->co2e_grams) : "",
                 where);
    } else {
        snprintf(line, sizeof line, "CO2e: unknown (no grid intensity: set where the electricity came from with "
                                    "--grid-zone, e.g. FR or aws:eu-west-3, or its g/kWh with --grid-intensity)");
    }
    rpt_hw_html(w, line);
    rpt_hw_lit(w, "</span>");
    if (s->energy_model) {
        rpt_hw_lit(w, "<br><span class=\"note\" id=\"answer-energy-model\">estimated: ");
        rpt_hw_html(w, s->energy_model);
        rpt_hw_lit(w, "</span>");
    }
    if (s->energy_missing) {
        rpt_hw_lit(w, "<br><span class=\"note\" id=\"answer-energy-missing\">");
        rpt_hw_html(w, s->energy_missing);
        rpt_hw_lit(w, "</span>");
    }
    rpt_hw_lit(w, "</td></tr>\n");
}

/* The cores' time: the asked cores' predicted duration in words, and the run's table of
 * durations under 1, 2, ... cores (the first RPT_CORES_ROWS counts), the asked row marked. */
#define RPT_CORES_ROWS 8
static void answer_cores(rpt_hw *w, const rt_recommendation *rec, const rt_cores_table *t)
{
    char line[400];
    if (rt_recommendation_time_words(rec, line, sizeof line) == 0 || !t)
        return;
    rpt_hw_lit(w, "<tr id=\"answer-time\"><th>Time</th><td>");
    rpt_hw_html(w, line);
    char shared[96];
    if (rt_cores_shared_words(t, shared, sizeof shared) > 0) { /* 0.20 */
        rpt_hw_lit(w, "<div class=\"note\" id=\"answer-shared\">");
        rpt_hw_html(w, shared);
        rpt_hw_lit(w, ": the times below are the job's own, a quiet machine may be faster</div>");
    }
    rpt_hw_lit(w, "<table class=\"cores\" id=\"answer-cores\"><tr><th>cores</th><th>predicted</th>"
                  "<th>vs its own</th><th>core-hours</th></tr>\n");
    double own = rt_cores_own_secs(t);
    for (size_t i = 0; i < t->n && i < RPT_CORES_ROWS; i++) {
        const rt_cores_row *r = &t->rows[i];
        double pct = own > 0 ? 100.0 * (r->duration_secs - own) / own : 0;
        snprintf(line, sizeof line, "<tr%s><td>%lld%s</td><td>%.1f s</td><td>%+.0f%%</td><td>%.4f</td></tr>\n",
                 r->cores == rec->cpu ? " class=\"asked\"" : "", (long long)r->cores, r->wait_bound ? "*" : "",
                 r->duration_secs, fabs(pct) < 0.5 ? 0.0 : pct, r->core_hours);
        rpt_hw_lit(w, line);
    }
    bool tasks = t->wait_from && strcmp(t->wait_from, "tasks") == 0;
    rpt_hw_lit(w, tasks ? "</table><span class=\"note\">each interval's CPU work spread over its runnable tasks, at "
                          "most that many cores wide (other work's waits left out), time off a CPU unchanged"
                        : "</table><span class=\"note\">each interval's CPU work at most that many cores wide, time "
                          "off a CPU unchanged");
    if (isfinite(t->cores_had) && (double)(t->n < RPT_CORES_ROWS ? t->n : RPT_CORES_ROWS) > t->cores_had)
        rpt_hw_lit(w, tasks ? "; * above the cores the run had: from its tasks' own demand"
                            : "; * above the cores the run had: faster only by the time its tasks waited for a CPU, "
                              "at best");
    rpt_hw_lit(w, "</span></td></tr>\n");
}

/* The GPU ask's notes (rt_recommendation_gpu_notes: the models that hold it, the GPUs left out, a
 * smaller GPU with what it saves where both servers' prices are known) and each scheduler's way
 * to that memory, a line each; no row without a GPU asked. */
static void answer_gpu(rpt_hw *w, const rt_report_info *in)
{
    const rt_recommendation *rec = in->recommendation;
    char notes[2048], how[400];
    if (rt_recommendation_gpu_notes(rec, in->cheapest, in->gpu_like_this, notes, sizeof notes) == 0)
        return;
    rpt_hw_lit(w, "<tr id=\"answer-gpu\"><th>GPU ask</th><td>");
    bool first = true;
    for (char *p = notes, *nl; *p && (nl = strchr(p, '\n')); p = nl + 1, first = false) {
        *nl = '\0';
        rpt_hw_lit(w, first ? "" : "<br>");
        rpt_hw_html(w, p);
    }
    static const rt_scheduler scheds[] = {RT_SCHED_SLURM, RT_SCHED_K8S, RT_SCHED_METAFLOW};
    static const char *const names[] = {"SLURM", "Kubernetes", "Metaflow"};
    for (size_t i = 0; i < RT_ARRAY_LEN(scheds); i++)
        if (rt_recommendation_gpu_scheduler_note(rec, scheds[i], how, sizeof how) > 0) {
            rpt_hw_lit(w, first ? "<span class=\"note\">" : "<br><span class=\"note\">");
            rpt_hw_html(w, names[i]);
            rpt_hw_lit(w, ": ");
            rpt_hw_html(w, how);
            rpt_hw_lit(w, "</span>");
            first = false;
        }
    rpt_hw_lit(w, "</td></tr>\n");
}

/* The answer first, on the first screen: what the job used, how it ended, what to ask for next
 * time (in each scheduler's words), the cost, and the run's notes. Nothing without a summary. */
void rpt_answer_section(rpt_hw *w, const rt_report_info *in)
{
    const rt_summary *s = in->summary;
    if (!s)
        return;
    rpt_figure a;
    char line[512];
    rpt_hw_lit(w, "<section id=\"answer\"><h2>The answer");
    if (in->job_view && in->node_shown) { /* a job's node: the job's answer is above */
        rpt_hw_lit(w, " for ");
        rpt_hw_html(w, in->node_shown);
    }
    rpt_hw_lit(w, "</h2>\n");
    answer_figures(w, in);
    rpt_hw_lit(w, "<table class=\"kv\">\n");
    const rt_recommendation *rec = in->recommendation;
    if (rec && rec->struct_size >= sizeof *rec) {
        rpt_hw_lit(w, "<tr id=\"answer-ask\"><th>Ask for</th><td>");
        char gpus[200] = "", gw[180]; /* 0.19: "1 GPU with >= 40 GiB (peak 33.1 GiB)" */
        if (rt_recommendation_gpu_words(rec, gw, sizeof gw) > 0)
            snprintf(gpus, sizeof gpus, ", %s", gw);
        snprintf(line, sizeof line, "%lld core%s, %s%s", (long long)rec->cpu, rec->cpu == 1 ? "" : "s",
                 rec->memory_mib == RT_NULL_I64 ? "memory unknown" : fmt_mib(a, (double)rec->memory_mib), gpus);
        rpt_hw_html(w, line);
        static const rt_scheduler scheds[] = {RT_SCHED_SLURM, RT_SCHED_K8S, RT_SCHED_METAFLOW};
        static const char *const names[] = {"SLURM", "Kubernetes", "Metaflow"};
        for (size_t i = 0; i < RT_ARRAY_LEN(scheds); i++) {
            size_t n = rt_format_recommendation(rec, scheds[i], line, sizeof line);
            if (n == 0 || n >= sizeof line)
                continue;
            line[n - 1] = '\0'; /* its newline */
            rpt_hw_lit(w, "<br>");
            rpt_hw_html(w, names[i]);
            rpt_hw_lit(w, " <code>");
            rpt_hw_html(w, line);
            rpt_hw_lit(w, "</code>");
        }
        rpt_hw_lit(w, "</td></tr>\n");
        answer_gpu(w, in);
        answer_cores(w, rec, s->cores);
    }
    char eff[400]; /* 0.16: against what the job was given where it ran */
    if (rt_efficiency_words(s, eff, sizeof eff) > 0) {
        rpt_hw_lit(w, "<tr id=\"answer-efficiency\"><th>Efficiency</th><td>");
        rpt_hw_html(w, eff);
        rpt_hw_lit(w, "</td></tr>\n");
    }
    answer_energy(w, s);
    answer_cost(w, in);
    rt_note notes[RT_NOTES_MAX];
    rt_notes_options no = RT_NOTES_OPTIONS_INIT;
    no.cgroup_why = in->cgroup_why;
    size_t n = rt_summary_notes(s, &no, notes, RT_NOTES_MAX);
    rpt_hw_lit(w, "<tr id=\"answer-notes\"><th>Notes</th><td>");
    if (n == 0)
        rpt_hw_lit(w, "none");
    else
        rpt_hw_lit(w, "<ul>");
    for (size_t i = 0; i < n; i++) {
        rpt_hw_lit(w, "<li>");
        rpt_hw_html(w, notes[i].text);
        rpt_hw_lit(w, "</li>");
    }
    rpt_hw_lit(w, n ? "</ul></td></tr>\n</table></section>\n" : "</td></tr>\n</table></section>\n");
}

static const char *fmt_rate(rpt_figure f, double v)
{
    return rt_gw_rate(v, f, sizeof(rpt_figure));
}

/* 0.19: what the GPUs did (NVML GPM), the job's GPUs' (else the machine's): a row per figure that
 * some record had. */
static void work_rows(rpt_hw *w, const rt_summary *s)
{
    const struct {
        const char *name;
        const rt_dist *d;
    } f[] = {{"SM active", &s->gpu_sm_active_pct},       {"SM occupancy", &s->gpu_sm_occupancy_pct},
             {"tensor cores active", &s->gpu_tensor_active_pct}, {"DRAM bandwidth", &s->gpu_dram_active_pct},
             {"FP64 active", &s->gpu_fp64_active_pct},   {"FP32 active", &s->gpu_fp32_active_pct},
             {"FP16 active", &s->gpu_fp16_active_pct},   {"PCIe traffic", &s->gpu_pcie_bytes_per_sec},
             {"NVLink traffic", &s->gpu_nvlink_bytes_per_sec}};
    for (size_t i = 0; i < RT_ARRAY_LEN(f); i++) {
        char name[80];
        snprintf(name, sizeof name, "%s GPUs' %s", s->has_process ? "job" : "machine", f[i].name);
        dist_row(w, name, f[i].d, strstr(f[i].name, "traffic") ? fmt_rate : fmt_pct);
    }
}

void rpt_summary_section(rpt_hw *w, const rt_summary *s)
{
    rpt_figure f, g;
    double written = job_written(s);
    bool gpus = had_gpus(s);
    rpt_hw_lit(w, "<section id=\"summary\"><h2>Summary</h2>\n<div class=\"cols\"><div class=\"wide\"><table class=\"dist\">\n"
              "<tr><th></th><th>mean</th><th>p50</th><th>p95</th><th>peak</th></tr>\n");
    if (s->has_process) {
        dist_row(w, "job CPU (cores)", &s->process_cores, fmt_cores);
        dist_row(w, "job memory (PSS)", &s->process_pss_mib, fmt_mib);
        dist_row(w, "job memory (RSS)", &s->process_rss_mib, fmt_mib);
        if (gpus) {
            dist_row(w, "job GPU (GPUs busy)", &s->process_gpu_usage, fmt_cores);
            dist_row(w, "job VRAM", &s->process_gpu_vram_mib, fmt_mib);
        }
    }
    dist_row(w, "machine CPU (cores)", &s->cpu_cores, fmt_cores);
    dist_row(w, "machine memory used", &s->memory_used_mib, fmt_mib);
    if (gpus) {
        dist_row(w, "machine GPU (GPUs busy)", &s->gpu_usage, fmt_cores);
        dist_row(w, "machine VRAM", &s->gpu_vram_mib, fmt_mib);
        work_rows(w, s);
    }
    dist_row(w, "CPU pressure (some)", &s->pressure_cpu_some_pct, fmt_pct);
    dist_row(w, "memory pressure (some)", &s->pressure_memory_some_pct, fmt_pct);
    dist_row(w, "memory pressure (full)", &s->pressure_memory_full_pct, fmt_pct);
    dist_row(w, "I/O pressure (some)", &s->pressure_io_some_pct, fmt_pct);
    dist_row(w, "I/O pressure (full)", &s->pressure_io_full_pct, fmt_pct);
    rpt_hw_lit(w, "</table></div>\n<table class=\"kv\">\n");
    row(w, "start", rpt_fmt_time(f, s->start_secs));
    row(w, "end", rpt_fmt_time(f, s->end_secs));
    row(w, "duration", rpt_fmt_duration(f, s->duration_secs));
    snprintf(f, sizeof f, "%llu", (unsigned long long)s->samples);
    row(w, "samples", f);
    enum { ONLY_JOB = 1, ONLY_GPU = 2 };
    const struct {
        const char *name;
        double v;
        fmt_fn fmt;
        int only; /* ONLY_JOB: shown with a tracked tree; ONLY_GPU: when the run saw a GPU */
    } totals[] = {
        {"job CPU time", s->process_cpu_secs, rpt_fmt_duration, ONLY_JOB},
        {"job GPUs used (most at once)", s->process_gpus_used, fmt_count, ONLY_JOB | ONLY_GPU},
        {"job read from disk", s->process_read_bytes, fmt_bytes, ONLY_JOB},
        {"job written to disk", written, fmt_bytes, ONLY_JOB},
        {"job writes cancelled before storage", s->process_cancelled_write_bytes > 0 ? s->process_cancelled_write_bytes
                                                                                     : NAN, fmt_bytes, ONLY_JOB},
        {"job memory need", s->memory_need.mib, fmt_mib, ONLY_JOB},
        {"job memory held, peak (cgroup, less page cache)", s->process_unreclaimable_peak_mib, fmt_mib, ONLY_JOB},
        {"job peak RSS of one process (kernel)", s->process_rss_hwm_mib, fmt_mib, ONLY_JOB},
        {"job memory peak (cgroup, page cache included)", s->process_memory_peak_mib, fmt_mib, ONLY_JOB},
        {"job VRAM peak (NVML accounting)", s->process_gpu_vram_peak_mib, fmt_mib, ONLY_JOB | ONLY_GPU},
        {"job memory limit", s->memory_limit_mib, fmt_mib, ONLY_JOB},
        {"job memory.high", s->memory_high_mib, fmt_mib, ONLY_JOB},
        {"job OOM kills", s->oom_kills, fmt_count, ONLY_JOB},
        {"job CPU quota (cores)", s->cpu_quota_cores, fmt_cores, ONLY_JOB},
        {"job CPU throttled (periods)", s->cpu_periods > 0 ? 100 * s->cpu_throttled_periods / s->cpu_periods : NAN,
         fmt_pct, ONLY_JOB},
        {"job CPU throttled (time)", s->cpu_throttled_secs, rpt_fmt_duration, ONLY_JOB},
        {"job tasks (peak)", s->pids_peak, fmt_count, ONLY_JOB},
        {"job tasks (limit)", s->pids_limit, fmt_count, ONLY_JOB},
        {"machine cores", s->cpu_count, fmt_count, 0},
        {"machine memory", s->memory_total_mib, fmt_mib, 0},
        {"GPUs", s->gpu_count, fmt_count, ONLY_GPU},
        {"GPU memory", s->gpu_vram_total_mib, fmt_mib, ONLY_GPU},
        {"disk read", s->disk_read_bytes, fmt_bytes, 0},
        {"disk written", s->disk_write_bytes, fmt_bytes, 0},
        {"network received", s->net_recv_bytes, fmt_bytes, 0},
        {"network sent", s->net_sent_bytes, fmt_bytes, 0},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(totals); i++)
        if ((s->has_process || !(totals[i].only & ONLY_JOB)) && (gpus || !(totals[i].only & ONLY_GPU)))
            total_row(w, totals[i].name, totals[i].v, totals[i].fmt);
    if (isfinite(s->disk_space_used_peak_bytes)) {
        char both[160];
        snprintf(both, sizeof both, "%s of %s", fmt_bytes(f, s->disk_space_used_peak_bytes),
                 fmt_bytes(g, s->disk_space_total_bytes));
        row(w, "disk space used (peak)", both);
    }
    char work[512]; /* 0.19: the GPU work in words: whose, or that the GPUs give utilization only */
    if (gpus && rt_gw_words(s, NULL, work, sizeof work))
        row(w, RT_GW_LABEL, work);
    row(w, "machine", s->allocation);
    rpt_hw_lit(w, "</table></div></section>\n");
}

/* the recommendation, the cheapest server and the run's costs */
/* One cell of the phase table. */
void rpt_td(rpt_hw *w, const char *text)
{
    rpt_hw_lit(w, "<td>");
    rpt_hw_html(w, text);
    rpt_hw_lit(w, "</td>");
}

void rpt_phase_section(rpt_hw *w, const rt_summary *s)
{
    if (!s->phase_count)
        return;
    bool gpus = had_gpus(s);
    rpt_figure bound;
    snprintf(bound, sizeof bound, "%.4g", s->max_slowdown_pct >= 0 ? s->max_slowdown_pct : 10.0);
    rpt_hw_lit(w, "<section id=\"phases\"><h2>Phases</h2>\n<p class=\"note\">By name, in the order each first "
              "started; a name's figures are over all its calls. CPU marked ~ is pro-rated from the samples (no "
              "reading at both marks of every call). Asks: the fewest cores under which the phase alone is "
              "predicted within ");
    rpt_hw_html(w, bound);
    rpt_hw_lit(w, "% of its own duration, and that duration (docs/answers.md).</p>\n"
              "<div class=\"wide\"><table class=\"dist\" id=\"phase-table\">\n"
              "<tr><th style=\"text-align:left\">phase</th><th>calls</th><th>duration</th><th>CPU</th><th>cores mean</th><th>cores peak</th>"
              "<th>asks</th>"
              "<th>memory need</th><th>memory peak</th>");
    if (gpus)
        rpt_hw_lit(w, "<th>GPU mean</th><th>GPU peak</th><th>VRAM mean</th><th>VRAM peak</th>");
    rpt_hw_lit(w, "<th>read</th><th>written</th></tr>\n");
    for (size_t i = 0; i < s->phase_count; i++) {
        const rt_phase_summary *p = s->phases[i];
        rpt_figure f;
        rpt_hw_lit(w, "<tr><th>");
        rpt_hw_html(w, p->name);
        rpt_hw_lit(w, "</th>");
        snprintf(f, sizeof f, "%llu%s", (unsigned long long)p->calls, p->unterminated ? " (open at end)" : "");
        rpt_td(w, f);
        rpt_td(w, rpt_fmt_duration(f, p->duration_secs));
        rpt_fmt_duration(f, p->cpu_secs);
        if (!p->cpu_exact && isfinite(p->cpu_secs)) {
            size_t n = strlen(f);
            snprintf(f + n, sizeof f - n, " ~");
        }
        rpt_td(w, f);
        rpt_td(w, fmt_cores(f, p->cores_mean));
        rpt_td(w, fmt_cores(f, p->cores_peak));
        int64_t asks = rt_cores_fewest(p->cores, s->max_slowdown_pct >= 0 ? s->max_slowdown_pct : 10);
        if (asks > 0) { /* "12 (1 h 02 min 03 s)": a duration in a figure of its own */
            rpt_figure d;
            char both[sizeof d + 32];
            snprintf(both, sizeof both, "%lld (%s)", (long long)asks,
                     rpt_fmt_duration(d, p->cores->rows[asks - 1].duration_secs));
            snprintf(f, sizeof f, "%.*s", (int)sizeof f - 1, both);
        } else {
            snprintf(f, sizeof f, "-");
        }
        rpt_td(w, f);
        rpt_td(w, fmt_mib(f, p->memory_need.mib));
        double peak = p->rss_peak_mib;
        if (isnan(peak) || p->memory_peak_mib > peak)
            peak = p->memory_peak_mib;
        rpt_td(w, fmt_mib(f, peak));
        if (gpus) {
            rpt_td(w, fmt_cores(f, p->gpu_usage_mean));
            rpt_td(w, fmt_cores(f, p->gpu_usage_peak));
            rpt_td(w, fmt_mib(f, p->gpu_vram_mean_mib));
            rpt_td(w, fmt_mib(f, p->gpu_vram_peak_mib));
        }
        rpt_td(w, fmt_bytes(f, p->read_bytes));
        rpt_td(w, fmt_bytes(f, p->write_bytes));
        rpt_hw_lit(w, "</tr>\n");
    }
    rpt_hw_lit(w, "</table></div></section>\n");
}

void rpt_recommendation_section(rpt_hw *w, const rt_report_info *in)
{
    const rt_recommendation *rec = in->recommendation;
    bool note = in->keeper_note && !note_in_answer(in);
    if (!rec && !in->cheapest && !note && !in->current_instance)
        return;
    rpt_figure f;
    rpt_hw_lit(w, "<section id=\"recommendation\"><h2>Recommendation</h2>\n");
    run_costs cost = costs_of(in);
    if (rec) {
        rpt_hw_lit(w, "<div class=\"cols\"><table class=\"kv\">\n");
        row_i64(w, "CPU cores", rec->cpu);
        row(w, "memory", rec->memory_mib == RT_NULL_I64 ? "unknown" : fmt_mib(f, (double)rec->memory_mib));
        if (rec->struct_size >= sizeof *rec && rec->memory_source != RT_NEED_UNKNOWN) {
            char from[256], files[96] = "";
            rpt_figure g, h;
            if (isfinite(rec->memory_reread_files_mib)) /* 0.20: the files re-read, kept cached */
                snprintf(files, sizeof files, " + %s of files re-read, kept cached",
                         fmt_mib(h, rec->memory_reread_files_mib));
            snprintf(from, sizeof from, "%s needed (%s%s)%s + %.0f%% headroom, rounded up", fmt_mib(g, rec->memory_need_mib),
                     rt_need_source_text(rec->memory_source), rec->memory_sampled ? ": a lower bound" : "", files,
                     rec->headroom_pct);
            row(w, "memory from", from);
        }
        char gw[180];
        if (rt_recommendation_gpu_words(rec, gw, sizeof gw) > 0) /* 0.19: the GPU ask */
            row(w, "GPUs", gw);
        else if (rec->gpu > 0 || had_gpus(in->summary))
            row_i64(w, "GPUs", rec->gpu);
        if (rec->struct_size >= sizeof *rec && rec->vram_per_gpu_mib > 0) {
            row(w, "GPU memory, each", fmt_mib(f, (double)rec->vram_per_gpu_mib));
            if (rec->gpu_held > rec->gpu)
                row_i64(w, "GPUs held", rec->gpu_held);
        } else if (rec->vram_mib > 0) {
            row(w, "GPU memory", fmt_mib(f, (double)rec->vram_mib));
        }
        snprintf(f, sizeof f, "%llu", (unsigned long long)rec->runs);
        row(w, "from runs", f);
        if (rec->struct_size >= offsetof(rt_recommendation, cpu_throttled_pct) + sizeof rec->cpu_throttled_pct) {
            char why[160];
            bool floors = rec->struct_size >= sizeof *rec; /* 0.20: after a kill, ask to learn */
            if (floors && rec->memory_learn)
                row(w, "memory floor", "twice the limit a run was stopped at (its need above it unknown)");
            else if (rec->oom_killed)
                row(w, "memory above", "the peak of a run the OOM killer ended");
            if (floors && rec->time_floor_secs > 0)
                row(w, "time floor", "twice a run stopped by its time limit or a scheduler's signal");
            if (isfinite(rec->cpu_quota_cores)) {
                snprintf(why, sizeof why, "the quota of %.2f cores (throttled in %.0f%% of its periods)",
                         rec->cpu_quota_cores, rec->cpu_throttled_pct);
                row(w, "cores above", why);
            }
        }
        rpt_hw_lit(w, "</table>\n<div><p>In a scheduler's words:</p><pre>");
        static const rt_scheduler scheds[] = {RT_SCHED_METAFLOW, RT_SCHED_K8S, RT_SCHED_SLURM};
        for (size_t i = 0; i < RT_ARRAY_LEN(scheds); i++) {
            char line[512];
            size_t n = rt_format_recommendation(rec, scheds[i], line, sizeof line);
            if (n > 0 && n < sizeof line)
                rpt_hw_html(w, line);
        }
        rpt_hw_lit(w, "</pre></div></div>\n");
    }
    const rt_server *sv = in->cheapest;
    if (sv) {
        rpt_hw_lit(w, "<h3>Cheapest server that fits</h3>\n<table class=\"kv\">\n");
        char name[400];
        row(w, "server", server_name(name, sizeof name, sv));
        row_i64(w, "vCPUs", sv->vcpus);
        row(w, "memory", fmt_mib(f, sv->memory_mib));
        if (sv->gpu_count > 0)
            row_i64(w, "GPUs", sv->gpu_count);
        price_rows(w, sv->price_usd_per_hour, "this run there", cost.cheapest);
        char e[400];
        row(w, "energy of this run there", cheapest_energy(e, sizeof e, in, cost.secs));
        rpt_hw_lit(w, "</table>\n");
    }
    if (in->current_instance || isfinite(in->current_price_usd_per_hour)) {
        rpt_hw_lit(w, "<h3>Where it ran</h3>\n<table class=\"kv\">\n");
        row(w, "server", in->current_instance);
        if (price_rows(w, in->current_price_usd_per_hour, "this run", cost.here)) {
            if (isfinite(cost.cheapest) && isfinite(cost.here) && cost.here > 0) {
                char s[128];
                rpt_figure g;
                snprintf(s, sizeof s, "%s per run (%.0f%%)", fmt_usd(g, cost.here - cost.cheapest),
                         100 * (cost.here - cost.cheapest) / cost.here);
                row(w, "saving on the cheapest server", s);
            }
        }
        rpt_hw_lit(w, "</table>\n");
    }
    if (note) {
        rpt_hw_lit(w, "<p class=\"note\">");
        rpt_hw_html(w, in->keeper_note);
        rpt_hw_lit(w, "</p>\n");
    }
    rpt_hw_lit(w, "</section>\n");
}

/* the job's facts as rows (job metadata, tags, command, exit status); with w NULL, only whether
 * there is one */
static bool job_rows(rpt_hw *w, const rt_report_info *in)
{
    rpt_figure f;
    bool any = false;
    const rt_job *j = in->job;
#define JOB_ROW(key, value)                                                                                     \
    do {                                                                                                       \
        const char *v_ = (value);                                                                               \
        any |= v_ && *v_;                                                                                      \
        if (w)                                                                                                 \
            row(w, key, v_);                                                                                   \
    } while (0)
    if (j && j->struct_size >= offsetof(rt_job, container_image) + sizeof j->container_image) {
        for (size_t i = 0; i < RT_JOB_NFIELDS; i++)
            JOB_ROW(rt_job_field_word(i), rt_job_field(j, i));
        if (j->struct_size >= offsetof(rt_job, tag_count) + sizeof j->tag_count)
            for (size_t i = 0; i < j->tag_count && j->tags; i++)
                JOB_ROW("tag", j->tags[i]);
    }
    JOB_ROW("command", in->command);
    if (in->exit_status >= 0)
        JOB_ROW("exit status", rpt_fmt_exit(f, in->exit_status));
#undef JOB_ROW
    return any;
}

/* the run: job metadata, command, exit status, host, cloud; nothing when none is known (a
 * recorded file's report) */
void rpt_run_section(rpt_hw *w, const rt_report_info *in)
{
    rpt_figure f;
    const rt_cloud *c = in->cloud;
    bool job = job_rows(NULL, in), cloud = c && (c->vendor_id || c->instance_type);
    if (!job && !in->host && !cloud)
        return;
    rpt_hw_lit(w, "<section id=\"run\"><h2>The run</h2>\n<div class=\"cols\">");
    if (job) {
        rpt_hw_lit(w, "<div><h3>Job</h3><table class=\"kv\">\n");
        job_rows(w, in);
        rpt_hw_lit(w, "</table></div>\n");
    }
    if (in->host) {
        const rt_host *h = in->host;
        rpt_hw_lit(w, "<div><h3>Host</h3><table class=\"kv\">\n");
        row(w, "hostname", h->hostname);
        row(w, "host id", h->host_id);
        row(w, "IP address", h->ip);
        row_i64(w, "vCPUs", h->vcpus);
        row(w, "CPU", h->cpu_model);
        total_row(w, "memory", h->memory_mib, fmt_mib);
        row(w, "GPU", h->gpu_model);
        if (h->gpu_count > 0 && h->gpu_count != RT_NULL_I64)
            row_i64(w, "GPUs", h->gpu_count);
        if (h->gpu_count > 0 && h->gpu_count != RT_NULL_I64)
            total_row(w, "GPU memory", h->gpu_memory_mib, fmt_mib);
        if (isfinite(h->storage_gb)) {
            snprintf(f, sizeof f, "%.0f GB", h->storage_gb);
            row(w, "storage", f);
        }
        row(w, "kernel", h->kernel);
        row(w, "OS", h->os);
        row(w, "allocation", h->allocation);
        rpt_hw_lit(w, "</table></div>\n");
    }
    if (cloud) {
        rpt_hw_lit(w, "<div><h3>Cloud</h3><table class=\"kv\">\n");
        row(w, "vendor", c->vendor_id);
        row(w, "account", c->account_id);
        row(w, "region", c->region_id);
        row(w, "zone", c->zone_id);
        row(w, "instance type", c->instance_type);
        rpt_hw_lit(w, "</table></div>\n");
    }
    rpt_hw_lit(w, "</div></section>\n");
}

