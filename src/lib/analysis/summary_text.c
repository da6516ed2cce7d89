/* summary_text.c - a run's statistics as aligned text for people (rt_summary_write_text_cb): the
 * answer (what the job used, what to ask for next time, the notes, the energy and carbon), then
 * the run, the job's tree, gpu_tracker's parts, the cgroup's limits and the machine, with units chosen for reading
 * (like /usr/bin/time -v), written line by line through the caller's write callback. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/core.h"
#include "../core/ob.h"
#include "../core/out.h"
#include "../core/units.h"
#include "efficiency.h"
#include "energy_words.h"
#include "gpu_work_words.h"
#include "text_out.h"
#include "words.h"






/* A printer for "  Label                      value" lines. */
static void line(rt_text_out *o, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(rt_text_out *o, const char *label, const char *fmt, ...)
{
    char v[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (!o->width || 29 + strlen(v) <= o->width) {
        rt_tx_say(o, "  %-26s %s\n", label, v);
        return;
    }
    /* broken under its column: between the figures "  " parts ("mean 1.1 GiB  peak ..."),
     * each kept whole (its spaces '\x1f', the one before it too: two spaces on a line, none
     * where a line starts), else between words */
    char g[1024], out[2048];
    size_t n = 0;
    bool parts = strstr(v, "  ") != NULL;
    for (const char *p = v; *p && n + 2 < sizeof g; p++) {
        if (parts && p[0] == ' ' && p[1] == ' ') {
            g[n++] = ' ';
            g[n++] = '\x1f';
            p++;
        } else {
            g[n++] = parts && *p == ' ' ? '\x1f' : *p;
        }
    }
    g[n] = '\0';
    n = rt_text_wrap(g, 29, 29, o->width, out, sizeof out);
    rt_tx_say(o, "  %-26s ", label);
    for (size_t i = 0; i < n; i++) {
        rt_tx_put(o, out + i, 1);
        if (out[i] == '\n' && n - i > 30 && out[i + 30] == ' ')
            rt_tx_put(o, out + i + 1, 29), i += 30; /* the part's leading space left out */
    }
    rt_tx_put(o, "\n", 1);
}



/* Bytes (a counter) as text, always readable binary units. */
static const char *bytes_text(double bytes, char *b, size_t cap)
{
    rt_text_out automatic = {0};
    return rt_tx_mem(&automatic, bytes / 1048576.0, b, cap);
}


/* A Unix time as "YYYY-MM-DD HH:MM:SS UTC". */
static const char *when(double t, char *b, size_t cap)
{
    time_t s = isfinite(t) && fabs(t) < 1e11 ? (time_t)t : 0; /* no overflow in the cast */
    struct tm tm;
    if (!isfinite(t) || fabs(t) >= 1e11 || !gmtime_r(&s, &tm) || !strftime(b, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(b, cap, "-");
    return b;
}

static void cores_line(rt_text_out *o, const char *label, const rt_dist *d)
{
    if (isnan(d->peak))
        return;
    char a[32], b[32], c[32], e[32];
    line(o, label, "mean %s  peak %s  p50 %s  p95 %s", rt_tx_number(d->mean, 2, "", a, sizeof a),
         rt_tx_number(d->peak, 2, "", b, sizeof b), rt_tx_number(d->p50, 2, "", c, sizeof c), rt_tx_number(d->p95, 2, "", e, sizeof e));
}

static void mem_line(rt_text_out *o, const char *label, const rt_dist *d, bool percentiles)
{
    if (isnan(d->peak))
        return;
    char a[64], b[64], c[64], e[64];
    if (percentiles)
        line(o, label, "mean %s  peak %s  p50 %s  p95 %s", rt_tx_mem(o, d->mean, a, sizeof a), rt_tx_mem(o, d->peak, b, sizeof b),
             rt_tx_mem(o, d->p50, c, sizeof c), rt_tx_mem(o, d->p95, e, sizeof e));
    else
        line(o, label, "mean %s  peak %s", rt_tx_mem(o, d->mean, a, sizeof a), rt_tx_mem(o, d->peak, b, sizeof b));
}

/* "  GPU work                   SM 15.9% (p95 16.0, peak 16.2), ...": what the GPUs did, broken to
 * the width under its own column between its figures, never inside one ("PCIe 30 MiB/s" stays on
 * one line); nothing when there is nothing to say (gpu_work_words.h). */
static void gpu_work_line(rt_text_out *o, const rt_summary *s)
{
    char w[512], out[4096];
    if (!rt_gw_words(s, "\x1f", w, sizeof w)) /* a space rt_text_wrap never breaks at */
        return;
    size_t n = rt_text_wrap(w, 29, 29, o->width, out, sizeof out);
    rt_tx_say(o, "  %-26s ", RT_GW_LABEL);
    rt_tx_put(o, out, n);
    rt_tx_put(o, "\n", 1);
}

/* Whether the job's section has its GPU lines: the tree used a GPU. */
static bool job_used_gpus(const rt_summary *s)
{
    return s->process_gpus_used > 0 || s->process_gpu_usage.peak > 0;
}

/* The exit status in words: "0", "3", "137 (killed by signal 9, SIGKILL)". */
static void exit_line(rt_text_out *o, int status)
{
    char w[64];
    line(o, "Exit status", "%s", rt_exit_words(w, sizeof w, status));
}


/* What goes with the GPU ask (rt_recommendation_gpu_notes: the models that hold it, the GPUs left
 * out, a smaller GPU; and how sc's words ask for the memory) as one labelled line, its notes
 * parted by "; "; nothing without a GPU asked. */
static void gpu_ask_line(rt_text_out *o, const rt_recommendation *rec, rt_scheduler sc)
{
    char notes[1500], how[400];
    size_t n = rt_recommendation_gpu_notes(rec, NULL, NULL, notes, sizeof notes);
    if (n == 0 || n >= sizeof notes)
        return;
    if (rt_recommendation_gpu_scheduler_note(rec, sc, how, sizeof how) > 0 && n + strlen(how) + 2 < sizeof notes)
        snprintf(notes + n, sizeof notes - n, "%s\n", how);
    char joined[1600];
    size_t k = 0;
    for (const char *p = notes; *p && k + 3 < sizeof joined; p++) {
        if (*p != '\n')
            joined[k++] = *p;
        else if (p[1]) {
            joined[k++] = ';';
            joined[k++] = ' ';
        }
    }
    joined[k] = '\0';
    rt_tx_say(o, "%-12s", "GPU ask");
    rt_tx_wrapped(o, 12, 12, joined);
}

/* The answer first, three labelled lines and a line per further note: what the job used (CPU
 * time, mean and peak cores, the memory need with the figure it came from), what to ask for
 * next time (in the scheduler's words), and the notes. */
static void answer_part(rt_text_out *o, const rt_summary *s, const rt_run_facts *run)
{
    char a[64], b[64], c[64], d[64], sched[512];
    if (s->has_process) {
        const rt_need *m = &s->memory_need;
        char memtxt[200];
        if (m->source == RT_NEED_UNKNOWN)
            snprintf(memtxt, sizeof memtxt, "memory unknown");
        else
            snprintf(memtxt, sizeof memtxt, "memory %s (%s%s)", rt_tx_mem(o, rt_ob_fixed_value(m->mib, 3), d, sizeof d),
                     rt_need_source_text(m->source), m->sampled ? ": a lower bound" : "");
        /* seconds and MiB with 3 decimals, cores with 4, as the JSON lines keep them, so that the
         * live summary and its recorded file's say the same (1.63500004 s is 1.64 live, and 1.63
         * from the 1.635 kept) */
        char used[400];
        snprintf(used, sizeof used, "%s CPU (mean %s cores, peak %s); %s",
                 rt_tx_dur(o, rt_ob_fixed_value(s->process_cpu_secs, 3), a, sizeof a),
                 rt_tx_number(rt_ob_fixed_value(s->process_cores.mean, 4), 2, "", b, sizeof b),
                 rt_tx_number(rt_ob_fixed_value(s->process_cores.peak, 4), 2, "", c, sizeof c), memtxt);
        rt_tx_say(o, "%-12s", "Used");
        rt_tx_wrapped(o, 12, 12, used);
        rt_recommendation rec = RT_RECOMMENDATION_INIT;
        const rt_summary *runs[1] = {s};
        if (rt_recommend(runs, 1, &rec) == RT_OK) {
            rt_scheduler sc = o->scheduler;
            size_t n = rt_format_recommendation(&rec, sc, sched, sizeof sched);
            while (n > 0 && n < sizeof sched && sched[n - 1] == '\n')
                sched[--n] = '\0';
            char gpu[160] = "", gw[150]; /* 0.19: "1 GPU with >= 40 GiB (peak 33.1 GiB)" */
            if (rt_recommendation_gpu_words(&rec, gw, sizeof gw) > 0)
                snprintf(gpu, sizeof gpu, ", %s", gw);
            if (rec.memory_mib == RT_NULL_I64)
                snprintf(a, sizeof a, "memory unknown");
            else
                snprintf(a, sizeof a, "%lld MiB", (long long)rec.memory_mib);
            char ask[1200];
            char left[160] = ""; /* what the ask leaves out: the processes left behind */
            if (s->left_behind > 0)
                snprintf(left, sizeof left, "; not in it: %.0f process%s left behind%s%s%s (--wait-all counts %s in)",
                         s->left_behind, s->left_behind == 1 ? "" : "es",
                         isfinite(s->left_behind_mib) ? ", holding " : "",
                         isfinite(s->left_behind_mib) ? rt_tx_mem(o, s->left_behind_mib, b, sizeof b) : "",
                         isfinite(s->left_behind_mib) ? " at the end" : "", s->left_behind == 1 ? "it" : "them");
            snprintf(ask, sizeof ask, "%lld core%s, %s%s: %s (%s)%s", (long long)rec.cpu, rec.cpu == 1 ? "" : "s", a,
                     gpu, sched, rt_tx_scheduler_name(sc), left);
            rt_tx_say(o, "%-12s", "Ask for");
            rt_tx_wrapped(o, 12, 12, ask);
            char when[300];
            if (rt_recommendation_time_words(&rec, when, sizeof when) > 0) { /* 0.18: what the cores cost in time */
                rt_tx_say(o, "%-12s", "Time");
                rt_tx_wrapped(o, 12, 12, when);
            }
            gpu_ask_line(o, &rec, sc);
        }
    } else {
        char used[400];
        snprintf(used, sizeof used, "machine: mean %s busy cores, peak %s; memory used peak %s (no job was tracked)",
                 rt_tx_number(s->cpu_cores.mean, 2, "", a, sizeof a), rt_tx_number(s->cpu_cores.peak, 2, "", b, sizeof b),
                 rt_tx_mem(o, s->memory_used_mib.peak, c, sizeof c));
        rt_tx_say(o, "%-12s", "Used");
        rt_tx_wrapped(o, 12, 12, used);
        rt_tx_say(o, "%-12s", "Ask for");
        rt_tx_wrapped(o, 12, 12, "- (track a job: resource-tracker -- COMMAND, or --pid PID)");
    }
    char eff[400];
    if (rt_efficiency_words(s, eff, sizeof eff) > 0) { /* 0.16: against what the job was given */
        rt_tx_say(o, "%-12s", "Efficiency");
        rt_tx_wrapped(o, 12, 12, eff);
    }
    rt_note notes[RT_NOTES_MAX];
    rt_notes_options no = RT_NOTES_OPTIONS_INIT;
    no.cgroup_why = run ? run->cgroup_why : NULL;
    size_t n = rt_summary_notes(s, &no, notes, RT_NOTES_MAX);
    if (n == 0)
        rt_tx_say(o, "%-12snone\n", "Notes");
    for (size_t i = 0; i < n; i++) { /* a note per item, broken to fit a terminal */
        rt_tx_say(o, "%-12s- ", i == 0 ? "Notes" : "");
        rt_tx_wrapped(o, 14, 14, notes[i].text);
    }
}

/* Grams of CO2e as text: µg, mg, g, kg or t, three significant digits (a short job's carbon
 * is milligrams: never rounded to a "0.0 g" that reads as none). */
static const char *grams_text(double g, char *b, size_t cap)
{
    static const struct {
        double scale;
        const char *unit;
    } u[] = {{1e6, " t"}, {1e3, " kg"}, {1.0, " g"}, {1e-3, " mg"}, {1e-6, " µg"}};
    if (!isfinite(g) || g == 0)
        return rt_tx_number(g, 0, " g", b, cap);
    size_t i = 0;
    while (i + 1 < RT_ARRAY_LEN(u) && fabs(g) < u[i].scale * 0.9995)
        i++;
    double v = g / u[i].scale;
    return rt_tx_number(v, fabs(v) >= 99.95 ? 0 : fabs(v) >= 9.995 ? 1 : 2, u[i].unit, b, cap);
}

/* The first lines' energy and carbon, only when the run had an energy figure: the job's
 * energy by its parts, each with its method and source ("GPU 6.8 kJ measured by NVML, CPU 0.4 kJ
 * estimated"; without parts, the records' domains unknown: the least exact method), the
 * machine's and its idle floor; the job's CO2e (else the machine's) with the grid it came from,
 * or what to set when the intensity is unknown. */
static void energy_lines(rt_text_out *o, const rt_summary *s)
{
    if (!s->energy_method && !s->process_energy_method)
        return;
    char a[64], b[64], c[64], text[900], parts[600], meter[96] = "";
    bool job = s->process_energy_method != NULL;
    char idle[80] = "";
    if (isfinite(s->idle_power_watts))
        snprintf(idle, sizeof idle, ", idle floor %s", rt_tx_number(s->idle_power_watts, 0, " W", c, sizeof c));
    rt_summary_energy_words(s, job, parts, sizeof parts, NULL);
    if (s->energy_meter_source && s->energy_method) /* the machine's figure is a meter's: " measured by hwmon" */
        snprintf(meter, sizeof meter, " %s", rt_ew_how(s->energy_meter_source, s->energy_method, c, sizeof c));
    if (parts[0] && job && s->energy_method)
        snprintf(text, sizeof text, "%s (%s; machine %s%s%s)", rt_tx_joules(s->process_energy_joules, a, sizeof a),
                 parts, rt_tx_joules(s->energy_joules, b, sizeof b), meter, idle);
    else if (parts[0] && job)
        snprintf(text, sizeof text, "%s (%s)", rt_tx_joules(s->process_energy_joules, a, sizeof a), parts);
    else if (parts[0])
        snprintf(text, sizeof text, "machine %s%s (%s%s%s)", rt_tx_joules(s->energy_joules, a, sizeof a), meter, parts,
                 idle[0] ? "; " : "", idle[0] ? idle + 2 : "");
    else if (job && s->energy_method)
        snprintf(text, sizeof text, "%s (%s; machine %s %s%s)", rt_tx_joules(s->process_energy_joules, a, sizeof a),
                 s->process_energy_method, rt_tx_joules(s->energy_joules, b, sizeof b), s->energy_method, idle);
    else if (job)
        snprintf(text, sizeof text, "%s (%s)", rt_tx_joules(s->process_energy_joules, a, sizeof a),
                 s->process_energy_method);
    else
        snprintf(text, sizeof text, "machine %s (%s%s)", rt_tx_joules(s->energy_joules, a, sizeof a), s->energy_method,
                 idle);
    rt_tx_say(o, "%-12s", "Energy");
    rt_tx_wrapped(o, 12, 12, text);
    const rt_grid *g = s->grid;
    double grams = job ? s->process_co2e_grams : s->co2e_grams;
    if (!g || !isfinite(grams)) {
        rt_tx_say(o, "%-12sunknown (set --grid-zone or --grid-intensity)\n", "Carbon");
        return;
    }
    char year[16] = "";
    if (g->year > 0) /* unless the source names it already ("Ember ..., 2023") */
        snprintf(year, sizeof year, ", %d", g->year);
    if (g->source && year[0] && strstr(g->source, year + 2))
        year[0] = '\0';
    snprintf(text, sizeof text, "%s CO2e%s (%s%s%s g/kWh, %s%s)", grams_text(grams, a, sizeof a),
             job ? "" : " of the machine", g->zone ? g->zone : "", g->zone ? ", " : "",
             rt_tx_number(g->g_per_kwh, 0, "", b, sizeof b), g->source ? g->source : "source unknown", year);
    rt_tx_say(o, "%-12s", "Carbon");
    rt_tx_wrapped(o, 12, 12, text);
}

static void run_part(rt_text_out *o, const rt_summary *s, const rt_run_facts *run)
{
    char a[64], b[64];
    rt_tx_say(o, "Run\n");
    if (s->job_name || (run && run->job && run->job->job_name))
        line(o, "Job", "%s", run && run->job && run->job->job_name ? run->job->job_name : s->job_name);
    if (run && run->command) {
        char cmd[400] = "";
        size_t n = 0;
        for (const char *const *p = run->command; *p && n < sizeof cmd - 1; p++) {
            int m = snprintf(cmd + n, sizeof cmd - n, "%s%s", p == run->command ? "" : " ", *p);
            n = m < 0 ? n : n + (size_t)m;
        }
        line(o, "Command", "%s", cmd);
    } else if (run && run->pid) {
        line(o, "Process", "%lld", (long long)run->pid);
    }
    if (run && run->exit_status >= 0)
        exit_line(o, run->exit_status);
    /* the caller's times when it knows them, else the first and the last sample's */
    line(o, "Started", "%s", when(run && run->start_secs > 0 ? run->start_secs : s->start_secs, a, sizeof a));
    line(o, "Ended", "%s", when(run && run->end_secs > 0 ? run->end_secs : s->end_secs, b, sizeof b));
    line(o, "Duration", "%s", rt_tx_dur(o, s->duration_secs, a, sizeof a));
    line(o, "Samples", "%llu", (unsigned long long)s->samples);
    if (run && run->host) {
        const rt_host *h = run->host;
        line(o, "Host", "%s, %lld vCPUs, %s, %s", h->hostname ? h->hostname : "-", (long long)h->vcpus,
             rt_tx_mem(o, h->memory_mib, a, sizeof a), h->cpu_model ? h->cpu_model : "unknown CPU");
        if (h->gpu_count > 0 && h->gpu_count != RT_NULL_I64)
            line(o, "GPUs", "%lld x %s, %s", (long long)h->gpu_count, h->gpu_model ? h->gpu_model : "GPU",
                 rt_tx_mem(o, h->gpu_memory_mib, b, sizeof b));
    }
    if (run && run->cloud && run->cloud->vendor_id)
        line(o, "Cloud", "%s %s %s %s", run->cloud->vendor_id,
             run->cloud->instance_type ? run->cloud->instance_type : "",
             run->cloud->region_id ? run->cloud->region_id : "", run->cloud->zone_id ? run->cloud->zone_id : "");
    else if (run)
        line(o, "Cloud", "none found");
    if (s->allocation)
        line(o, "Machine", "%s to the job", s->allocation);
}

static void process_part(rt_text_out *o, const rt_summary *s)
{
    char a[64], b[64], c[64];
    rt_tx_say(o, "Job (the process tree)\n");
    if (!s->has_process) {
        line(o, "Tracked process", "none (the machine only)");
        return;
    }
    line(o, "CPU time", "%s", rt_tx_dur(o, s->process_cpu_secs, a, sizeof a));
    cores_line(o, "Cores", &s->process_cores);
    mem_line(o, "PSS", &s->process_pss_mib, true);
    mem_line(o, "RSS", &s->process_rss_mib, false);
    if (job_used_gpus(s)) {
        cores_line(o, "GPUs busy", &s->process_gpu_usage);
        mem_line(o, "VRAM", &s->process_gpu_vram_mib, false);
        line(o, "GPUs used", "%s", rt_tx_number(s->process_gpus_used, 0, "", a, sizeof a));
        gpu_work_line(o, s);
    }
    if (!isnan(s->process_rss_hwm_mib))
        line(o, "Peak RSS of a process", "%s (the kernel's high-water mark)",
             rt_tx_mem(o, s->process_rss_hwm_mib, a, sizeof a));
    /* without the job's cgroup, and when it says more than one process's peak: the processes'
     * peaks as if at once (the need's process_peaks) */
    if (isnan(s->process_unreclaimable_peak_mib) && s->process_rss_hwm_tree_mib > s->process_rss_hwm_mib + 0.05)
        line(o, "Peaks at once", "%s (each process at its own peak, kernel-counted)",
             rt_tx_mem(o, s->process_rss_hwm_tree_mib, a, sizeof a));
    if (!isnan(s->process_unreclaimable_peak_mib))
        line(o, "Memory held, peak", "%s (the job's cgroup, page cache left out)",
             rt_tx_mem(o, s->process_unreclaimable_peak_mib, a, sizeof a));
    if (s->process_walk_age_max_secs > 0) /* the two clocks: say how old the walked figures got */
        line(o, "Walked", "every %s s at most (PSS, counts, parts; CPU and I/O every sample)",
             rt_tx_number(s->process_walk_age_max_secs, 1, "", a, sizeof a));
    /* bytes whose writeback the kernel cancelled (a file deleted or truncated first) were
     * never written: said apart */
    double cancelled = s->process_cancelled_write_bytes > 0 ? s->process_cancelled_write_bytes : 0;
    double written = s->process_write_bytes - cancelled;
    if (written < 0)
        written = 0;
    char cx[96] = "";
    if (cancelled > 0)
        snprintf(cx, sizeof cx, " (and %s cancelled before it reached storage)", bytes_text(cancelled, c, sizeof c));
    line(o, "Storage read / written", "%s / %s%s", bytes_text(s->process_read_bytes, a, sizeof a),
         isnan(s->process_write_bytes) ? "-" : bytes_text(written, b, sizeof b), cx);
}

/* "Phases": one line per name (calls, duration, CPU, cores, peak memory, the cores it asks on
 * its own), only when there are some. */
static void phases_part(rt_text_out *o, const rt_summary *s)
{
    if (!s->phase_count)
        return;
    rt_tx_say(o, "Phases (by name, in the order they first started)\n");
    for (size_t i = 0; i < s->phase_count; i++) {
        const rt_phase_summary *p = s->phases[i];
        char a[64], b[64], c[32], d[32], e[64], label[48];
        double peak = p->memory_need.mib;
        if (isnan(peak) || p->rss_peak_mib > peak)
            peak = p->rss_peak_mib;
        /* the name cut to the label's width, not splitting a UTF-8 character */
        size_t n = strlen(p->name);
        if (n > 26) {
            n = 25;
            while (n > 0 && ((unsigned char)p->name[n] & 0xC0) == 0x80)
                n--;
        }
        snprintf(label, sizeof label, "%.*s%s", (int)n, p->name, n < strlen(p->name) ? "~" : "");
        char asks[48] = ""; /* 0.18: the fewest cores within 10% of the phase's own duration */
        int64_t k = rt_cores_fewest(p->cores, s->max_slowdown_pct >= 0 ? s->max_slowdown_pct : 10);
        if (k > 0)
            snprintf(asks, sizeof asks, ", asks %lld core%s", (long long)k, k == 1 ? "" : "s");
        line(o, label, "%llu call%s%s, %s, CPU %s%s, cores mean %s peak %s, memory peak %s%s",
             (unsigned long long)p->calls, p->calls == 1 ? "" : "s",
             p->unterminated ? " (open at the end)" : "", rt_tx_dur(o, p->duration_secs, a, sizeof a),
             rt_tx_dur(o, p->cpu_secs, b, sizeof b), p->cpu_exact ? "" : " (pro-rated)",
             rt_tx_number(p->cores_mean, 2, "", c, sizeof c), rt_tx_number(p->cores_peak, 2, "", d, sizeof d),
             rt_tx_mem(o, peak, e, sizeof e), asks);
    }
}

/* A percentage for people: whole numbers from 10 on (and whole ones), one decimal below. */
static const char *pct(double v, char *b, size_t cap)
{
    return rt_tx_number(v, v >= 10 || v == round(v) ? 0 : 1, "%", b, cap);
}

/* The pressure means in one line ("CPU 12% (some), memory 3% (some) / 1% (full), I/O 0%
 * (some)"), only the ones present; false when none is. */
static bool pressure_text(const rt_summary *s, char *b, size_t cap)
{
    const struct {
        const char *name;
        const rt_dist *some, *full;
    } r[] = {{"CPU", &s->pressure_cpu_some_pct, NULL},
             {"memory", &s->pressure_memory_some_pct, &s->pressure_memory_full_pct},
             {"I/O", &s->pressure_io_some_pct, &s->pressure_io_full_pct}};
    size_t n = 0;
    b[0] = '\0';
    for (size_t i = 0; i < sizeof r / sizeof r[0] && n < cap; i++) {
        if (isnan(r[i].some->mean))
            continue;
        char a[32], c[32];
        int k = snprintf(b + n, cap - n, "%s%s %s (some)", n ? ", " : "", r[i].name, pct(r[i].some->mean, a, sizeof a));
        if (k > 0 && (size_t)k < cap - n && r[i].full && !isnan(r[i].full->mean)) {
            n += (size_t)k;
            k = snprintf(b + n, cap - n, " / %s (full)", pct(r[i].full->mean, c, sizeof c));
        }
        n = k < 0 ? n : n + (size_t)k;
    }
    return n > 0;
}

/* The job's cgroup in plain words: what its limits did (an OOM kill, CPU throttling), how near
 * the job came to them, and the pressure it met. Nothing for a run without a cgroup or PSI. */
static void limits_part(rt_text_out *o, const rt_summary *s)
{
    char a[64], b[64], c[64], p[512];
    bool cg = !isnan(s->oom_kills) || !isnan(s->memory_limit_mib) || !isnan(s->cpu_quota_cores) ||
              !isnan(s->cpu_periods) || !isnan(s->pids_peak) || !isnan(s->pids_limit) || !isnan(s->memory_high_mib);
    bool psi = pressure_text(s, p, sizeof p);
    if (!cg && !psi)
        return;
    /* never a heading that claims a cgroup the run did not have, nor pressure it did not read */
    if (!cg && s->pressure_group == 1 && s->has_process)
        rt_tx_say(o, "Pressure (%s)\n", s->process_cgroup_exclusive == 1 ? "the job's cgroup"
                                                                   : "the cgroup the job ran in, shared with other processes");
    else if (!cg && s->pressure_group == 1)
        rt_tx_say(o, "Pressure (the cgroup the tracker ran in)\n");
    else if (!cg)
        rt_tx_say(o, "Pressure (%s)\n", s->has_process ? "no cgroup of the job's: the machine's" : "the machine");
    else if (!s->has_process)
        rt_tx_say(o, "Limits (the cgroup the tracker ran in)\n");
    else if (s->process_cgroup_exclusive == 1)
        rt_tx_say(o, "Limits (the job's cgroup)\n");
    else
        rt_tx_say(o, "Limits (the cgroup the job ran in, shared with other processes)\n");
    double peak = isnan(s->process_memory_peak_mib) ? s->process_rss_mib.peak : s->process_memory_peak_mib;
    if (s->oom_kills > 0) {
        char lim[80] = "", at[80] = "";
        if (!isnan(s->memory_limit_mib))
            snprintf(lim, sizeof lim, " (limit %s)", rt_tx_mem(o, s->memory_limit_mib, b, sizeof b));
        if (!isnan(peak))
            snprintf(at, sizeof at, " at %s", rt_tx_mem(o, peak, a, sizeof a));
        snprintf(c, sizeof c, ", %.0f tasks killed", s->oom_kills);
        if (s->has_process)
            line(o, "OOM", "killed by the OOM killer%s%s%s", at, lim, s->oom_kills > 1 ? c : "");
        else /* the tracker's own group: its neighbours', not a job's */
            line(o, "OOM", "%.0f task%s in the group killed by the OOM killer%s", s->oom_kills,
                 s->oom_kills == 1 ? "" : "s", lim);
    } else if (!isnan(s->oom_kills)) {
        line(o, "OOM", "no kill");
    }
    if (!isnan(s->memory_limit_mib) && !isnan(peak))
        line(o, "Memory limit", "%s, peak %s (%.0f%%)", rt_tx_mem(o, s->memory_limit_mib, a, sizeof a),
             rt_tx_mem(o, peak, b, sizeof b), s->memory_limit_mib > 0 ? 100.0 * peak / s->memory_limit_mib : 0.0);
    else if (!isnan(s->memory_limit_mib))
        line(o, "Memory limit", "%s", rt_tx_mem(o, s->memory_limit_mib, a, sizeof a));
    else if (!isnan(s->process_memory_peak_mib))
        line(o, "Memory peak", "%s (no limit; the charge, page cache included)",
             rt_tx_mem(o, s->process_memory_peak_mib, a, sizeof a));
    if (!isnan(s->memory_high_mib))
        line(o, "Memory high", "throttled above %s", rt_tx_mem(o, s->memory_high_mib, a, sizeof a));
    if (!isnan(s->cpu_quota_cores)) {
        rt_tx_number(s->cpu_quota_cores, s->cpu_quota_cores == round(s->cpu_quota_cores) ? 0 : 2, "", b, sizeof b);
        if (s->cpu_periods > 0)
            line(o, "CPU quota", "CPU throttled in %s of periods (quota %s core%s), %s in all",
                 pct(100.0 * s->cpu_throttled_periods / s->cpu_periods, a, sizeof a), b,
                 s->cpu_quota_cores == 1 ? "" : "s", rt_tx_dur(o, s->cpu_throttled_secs, c, sizeof c));
        else
            line(o, "CPU quota", "%s core%s", b, s->cpu_quota_cores == 1 ? "" : "s");
    }
    if (!isnan(s->pids_peak) || !isnan(s->pids_limit))
        line(o, "Tasks", "peak %s, limit %s", rt_tx_number(s->pids_peak, 0, "", a, sizeof a),
             isnan(s->pids_limit) ? "none" : rt_tx_number(s->pids_limit, 0, "", b, sizeof b));
    if (psi) /* under a group's heading: whose it is when it is not the group's */
        line(o, cg && s->pressure_group != 1 ? "Pressure (machine, mean)" : "Pressure (mean)", "%s", p);
}

/* "peak 99.8% (49.9% of 2), mean ..." of a sum and its hardware share, into b. */
static const char *pct_text(const rt_usage_pct *p, double den, char *b, size_t cap)
{
    char a[5][32];
    snprintf(b, cap, "peak %s (%s of %s), mean %s (%s)", rt_tx_number(p->max_sum_pct, 1, "%", a[0], sizeof a[0]),
             rt_tx_number(p->max_hardware_pct, 1, "%", a[1], sizeof a[1]),
             rt_tx_number(den, isfinite(den) && den == round(den) ? 0 : 2, "", a[4], sizeof a[4]),
             rt_tx_number(p->mean_sum_pct, 1, "%", a[2], sizeof a[2]),
             rt_tx_number(p->mean_hardware_pct, 1, "%", a[3], sizeof a[3]));
    return b;
}

/* gpu_tracker's split of the job: its RAM peaks, CPU percentages (100 per busy core, and the
 * share of the expected cores), thread peaks and the chosen GPUs' utilization. */
static void parts_part(rt_text_out *o, const rt_summary *s)
{
    const rt_usage *g = s->usage;
    if (!s->has_process || !g || (isnan(g->cpu[2].max_sum_pct) && isnan(g->ram_peak[2].total_mib)))
        return; /* no tree, or a file without its parts */
    static const char *const names[3] = {"main", "descendants", "combined"};
    char label[64], a[64], b[64], c[64], t[200];
    rt_tx_say(o, "Parts (main: the root process; descendants; combined)\n");
    for (int i = 0; i < 3; i++) {
        if (isnan(g->ram_peak[i].total_mib))
            continue;
        snprintf(label, sizeof label, "RSS peak, %s", names[i]);
        line(o, label, "%s (private %s, shared %s)", rt_tx_mem(o, g->ram_peak[i].total_mib, a, sizeof a),
             rt_tx_mem(o, g->ram_peak[i].private_mib, b, sizeof b), rt_tx_mem(o, g->ram_peak[i].shared_mib, c, sizeof c));
    }
    for (int i = 0; i < 3; i++) {
        if (isnan(g->cpu[i].max_sum_pct))
            continue;
        snprintf(label, sizeof label, "CPU, %s", names[i]);
        line(o, label, "%s", pct_text(&g->cpu[i], g->expected_cores, t, sizeof t));
    }
    if (!isnan(g->cpu_system.max_sum_pct))
        line(o, "CPU, machine", "%s", pct_text(&g->cpu_system, g->system_core_count, t, sizeof t));
    if (!isnan(g->threads_peak[2]))
        line(o, "Threads peak", "main %s, descendants %s, combined %s", rt_tx_number(g->threads_peak[0], 0, "", a, sizeof a),
             rt_tx_number(g->threads_peak[1], 0, "", b, sizeof b), rt_tx_number(g->threads_peak[2], 0, "", c, sizeof c));
    if (g->system_gpu_count > 0 && !isnan(g->gpu.max_sum_pct))
        line(o, "GPUs", "%s", pct_text(&g->gpu, g->expected_gpus, t, sizeof t));
}

static void machine_part(rt_text_out *o, const rt_summary *s)
{
    char a[64], b[64];
    rt_tx_say(o, "Machine\n");
    if (!isnan(s->cpu_count))
        line(o, "Cores", "%s", rt_tx_number(s->cpu_count, 0, "", a, sizeof a));
    cores_line(o, "Cores busy", &s->cpu_cores);
    if (!isnan(s->memory_total_mib))
        line(o, "Memory", "%s", rt_tx_mem(o, s->memory_total_mib, a, sizeof a));
    mem_line(o, "Memory used", &s->memory_used_mib, true);
    if (s->gpu_count > 0) {
        line(o, "GPUs", "%s, %s VRAM", rt_tx_number(s->gpu_count, 0, "", b, sizeof b),
             rt_tx_mem(o, s->gpu_vram_total_mib, a, sizeof a));
        cores_line(o, "GPUs busy", &s->gpu_usage);
        mem_line(o, "VRAM used", &s->gpu_vram_mib, false);
        /* with a tree the job's section says it, unless the job's GPU use is unknown (an old
         * driver): then whether the machine's GPUs gave their work */
        if (!s->has_process || (!job_used_gpus(s) && !rt_gw_known(s)))
            gpu_work_line(o, s);
    }
    if (!isnan(s->disk_read_bytes))
        line(o, "Storage read / written", "%s / %s", bytes_text(s->disk_read_bytes, a, sizeof a),
             bytes_text(s->disk_write_bytes, b, sizeof b));
    if (!isnan(s->net_recv_bytes))
        line(o, "Network in / out", "%s / %s", bytes_text(s->net_recv_bytes, a, sizeof a),
             bytes_text(s->net_sent_bytes, b, sizeof b));
    if (!isnan(s->disk_space_used_peak_bytes))
        line(o, "Disk space used (peak)", "%s of %s", bytes_text(s->disk_space_used_peak_bytes, a, sizeof a),
             bytes_text(s->disk_space_total_bytes, b, sizeof b));
}

/* The summary to dst (a callback or an fd: checked by the callers). */
static rt_error write_text(const rt_summary *s, const rt_run_facts *run, const rt_summary_text_options *opts,
                           rt_out dst)
{
    rt_summary_text_options op = RT_SUMMARY_TEXT_OPTIONS_INIT;
    rt_run_facts facts = RT_RUN_FACTS_INIT;
    rt_text_out o;
    if (!s || rt_struct_copy(&op, sizeof op, opts) < 0 || (run && rt_struct_copy(&facts, sizeof facts, run) < 0) ||
        rt_tx_open(&o, dst, &op) < 0)
        return RT_ERR_INVALID;
    const rt_run_facts *r = run ? &facts : NULL;
    answer_part(&o, s, r);
    energy_lines(&o, s);
    if (op.brief) {
        char a[64], b[64];
        if (r && r->exit_status >= 0)
            rt_tx_say(&o, "%-12s%s, exit status %s\n", "Ran", rt_tx_dur(&o, s->duration_secs, a, sizeof a),
                rt_exit_words(b, sizeof b, r->exit_status));
        else
            rt_tx_say(&o, "%-12s%s\n", "Ran", rt_tx_dur(&o, s->duration_secs, a, sizeof a));
        rt_tx_flush(&o);
        return o.err;
    }
    run_part(&o, s, r);
    process_part(&o, s);
    phases_part(&o, s);
    parts_part(&o, s);
    limits_part(&o, s);
    machine_part(&o, s);
    rt_tx_flush(&o);
    return o.err;
}

rt_error rt_summary_write_text_cb(const rt_summary *s, const rt_run_facts *run, const rt_summary_text_options *opts,
                                  rt_write_fn write, void *user)
{
    return write ? write_text(s, run, opts, RT_OUT_CB(write, user)) : RT_ERR_INVALID;
}

rt_error rt_summary_write_text(const rt_summary *s, const rt_run_facts *run, const rt_summary_text_options *opts,
                               int fd)
{
    return fd >= 0 ? write_text(s, run, opts, RT_OUT_FD(fd)) : RT_ERR_INVALID;
}
