/* summary.c - `resource-tracker summary FILE...` and the summary a tracking run prints at exit
 * (--summary): a run's statistics as aligned text for people, with units chosen for reading
 * (like /usr/bin/time -v), or as JSON for scripts; and the reading of recorded runs that the
 * other subcommands share (recorded runs through the reader, saved tracker snapshots through
 * rt_tracker_load). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* gpu_tracker's unit names and their sizes (decimal, as gpu_tracker counts them). */
static const struct {
    const char *name;
    double bytes;
} memory_units[] = {{"bytes", 1}, {"kilobytes", 1e3}, {"megabytes", 1e6}, {"gigabytes", 1e9}, {"terabytes", 1e12}};
static const struct {
    const char *name;
    double secs;
} time_units[] = {{"seconds", 1}, {"minutes", 60}, {"hours", 3600}, {"days", 86400}};

int cli_memory_unit(const char *name, double *bytes)
{
    for (size_t i = 0; i < sizeof memory_units / sizeof memory_units[0]; i++)
        if (strcmp(name, memory_units[i].name) == 0) {
            *bytes = memory_units[i].bytes;
            return 0;
        }
    return -1;
}

int cli_time_unit(const char *name, double *secs)
{
    for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++)
        if (strcmp(name, time_units[i].name) == 0) {
            *secs = time_units[i].secs;
            return 0;
        }
    return -1;
}

/* Whether path holds a saved tracker snapshot (rt_tracker_save, or the Python tracker's
 * dump/dumps): gzip (no recorded run of the reader is gzipped) or a JSON document opening
 * with "metadata". stdin is never one (it cannot be read twice). */
static bool is_snapshot(const char *path)
{
    if (strcmp(path, "-") == 0)
        return false;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char head[64];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    if (n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b)
        return true;
    const char *p = head;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p++ != '{')
        return false;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return strncmp(p, "\"metadata\"", 10) == 0;
}

/* A snapshot's samples through the same statistics and report as a recorded run's. */
static int read_snapshot(const char *path, rt_stats *const *st, size_t nst, rt_report *rep)
{
    rt_tracker *t = NULL;
    rt_error err = rt_tracker_load(path, cli_log, NULL, &t);
    if (err != RT_OK) {
        cli_say("%s: cannot read the snapshot: %s", path, rt_strerror(err));
        return err == RT_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE;
    }
    uint64_t first = rt_tracker_first(t), end = rt_tracker_count(t);
    rt_record rec;
    for (uint64_t i = first; i < end; i++) {
        if (rt_tracker_record(t, i, &rec, sizeof rec) != RT_OK)
            continue;
        for (size_t k = 0; k < nst; k++)
            rt_stats_add(st[k], &rec);
        if (rep)
            rt_report_add(rep, &rec);
    }
    rt_tracker_free(t);
    if (end == first) {
        cli_say("%s: no valid sample in the snapshot", path);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_read_run(const char *path, rt_stats *const *st, size_t nst, rt_report *rep)
{
    if (is_snapshot(path))
        return read_snapshot(path, st, nst, rep);
    rt_reader_options ro = RT_READER_OPTIONS_INIT;
    ro.log = cli_log;
    rt_reader *r = NULL;
    rt_error err = rt_reader_open(path, &ro, &r);
    if (err != RT_OK) { /* the reader has said why, except for these */
        if (err == RT_ERR_NOMEM || err == RT_ERR_INVALID)
            cli_say("%s: cannot read: %s", path, rt_strerror(err));
        return err == RT_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE;
    }
    const rt_record *rec;
    while ((err = rt_reader_next(r, &rec)) == RT_OK && rec) {
        for (size_t i = 0; i < nst; i++)
            rt_stats_add(st[i], rec);
        if (rep)
            rt_report_add(rep, rec);
    }
    uint64_t n = rt_reader_records(r), skipped = rt_reader_skipped(r);
    rt_reader_free(r);
    if (err != RT_OK) { /* a read error: the reader has said why */
        if (err != RT_ERR_IO)
            cli_say("%s: cannot read: %s", path, rt_strerror(err));
        return EXIT_FAIL;
    }
    if (skipped > 0)
        cli_say("warning: %s: %llu malformed line%s skipped", path, (unsigned long long)skipped, skipped == 1 ? "" : "s");
    if (n == 0) {
        cli_say("%s: no valid sample in the file", path);
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- text ------------------------------------------------------------------------------ */

/* A printer for "  Label                      value" lines. */
typedef struct out {
    FILE *f;
    double mem_bytes; /* a forced memory unit's size in bytes; 0: readable automatic units */
    const char *mem_name;
    double time_secs; /* a forced time unit; 0: automatic */
    const char *time_name;
} out;

static void line(const out *o, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(const out *o, const char *label, const char *fmt, ...)
{
    char v[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    fprintf(o->f, "  %-26s %s\n", label, v);
}

/* v with `decimals` decimals and the suffix (may be ""), into b: "-" when v is NaN or
 * infinite, three significant digits when it is too large for fixed notation to be read. */
static const char *number(double v, int decimals, const char *suffix, char *b, size_t cap)
{
    if (!isfinite(v))
        snprintf(b, cap, "-");
    else if (fabs(v) >= 1e12)
        snprintf(b, cap, "%.3g%s", v, suffix);
    else
        snprintf(b, cap, "%.*f%s", decimals, v, suffix);
    return b;
}

/* MiB as text into b: the forced unit, or B/KiB/MiB/GiB/TiB as fits; "-" for NaN. */
static const char *mem(const out *o, double mib, char *b, size_t cap)
{
    char suffix[32];
    if (!isfinite(mib))
        return number(mib, 0, "", b, cap);
    double bytes = mib * 1048576.0;
    if (o->mem_bytes > 0) {
        snprintf(suffix, sizeof suffix, " %s", o->mem_name);
        return number(bytes / o->mem_bytes, 3, suffix, b, cap);
    }
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    while (fabs(bytes) >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        bytes /= 1024.0;
        u++;
    }
    /* 1023.96 KiB would show as "1024.0 KiB": one unit up instead */
    if (u > 0 && u + 1 < sizeof units / sizeof units[0] && round(fabs(bytes) * 10) >= 10240) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(suffix, sizeof suffix, " %s", units[u]);
    return number(bytes, u == 0 ? 0 : 1, suffix, b, cap);
}

/* Bytes (a counter) as text, always readable binary units. */
static const char *bytes_text(double bytes, char *b, size_t cap)
{
    out automatic = {0};
    return mem(&automatic, bytes / 1048576.0, b, cap);
}

/* Seconds as text: the forced unit, or "1 h 02 min 03 s", "3 min 04.5 s", "12.34 s"
 * (rounded before it is split, so never "2 min 60.0 s"), "-" for NaN. */
static const char *dur(const out *o, double secs, char *b, size_t cap)
{
    char suffix[32];
    if (!isfinite(secs))
        return number(secs, 0, "", b, cap);
    if (o->time_secs > 0) {
        snprintf(suffix, sizeof suffix, " %s", o->time_name);
        return number(secs / o->time_secs, 4, suffix, b, cap);
    }
    if (round(secs * 100) < 6000)
        return number(secs, 2, " s", b, cap);
    if (round(secs * 10) < 36000) {
        double t = round(secs * 10) / 10;
        snprintf(b, cap, "%d min %04.1f s", (int)(t / 60), fmod(t, 60));
    } else if (secs < 86400) {
        long t = (long)secs;
        snprintf(b, cap, "%ld h %02ld min %02ld s", t / 3600, t / 60 % 60, t % 60);
    } else if (secs < 1e12) {
        long long t = (long long)secs;
        snprintf(b, cap, "%lld d %02lld h %02lld min", t / 86400, t / 3600 % 24, t / 60 % 60);
    } else {
        number(secs, 0, " s", b, cap);
    }
    return b;
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

static void cores_line(const out *o, const char *label, const rt_dist *d)
{
    if (isnan(d->peak))
        return;
    char a[32], b[32], c[32], e[32];
    line(o, label, "mean %s  peak %s  p50 %s  p95 %s", number(d->mean, 2, "", a, sizeof a),
         number(d->peak, 2, "", b, sizeof b), number(d->p50, 2, "", c, sizeof c), number(d->p95, 2, "", e, sizeof e));
}

static void mem_line(const out *o, const char *label, const rt_dist *d, bool percentiles)
{
    if (isnan(d->peak))
        return;
    char a[64], b[64], c[64], e[64];
    if (percentiles)
        line(o, label, "mean %s  peak %s  p50 %s  p95 %s", mem(o, d->mean, a, sizeof a), mem(o, d->peak, b, sizeof b),
             mem(o, d->p50, c, sizeof c), mem(o, d->p95, e, sizeof e));
    else
        line(o, label, "mean %s  peak %s", mem(o, d->mean, a, sizeof a), mem(o, d->peak, b, sizeof b));
}

/* The exit status in words: "0", "3", "137 (killed by signal 9, SIGKILL)". */
static void exit_line(const out *o, int status)
{
    if (status > 128 && status < 128 + 65) {
        const char *name = sigabbrev_np(status - 128);
        line(o, "Exit status", "%d (killed by signal %d%s%s)", status, status - 128, name ? ", SIG" : "",
             name ? name : "");
    } else {
        line(o, "Exit status", "%d", status);
    }
}

/* Prints text after head (already written: its width is used), broken at spaces so that no
 * line passes WRAP columns; the lines after the first start with indent spaces. */
#define WRAP 110
static void wrapped(FILE *f, size_t used, size_t indent, const char *text)
{
    size_t col = used;
    bool first = true; /* no word on this line yet */
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (!word)
            break;
        if (!first && col + 1 + word > WRAP) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
            first = true;
        }
        if (!first) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, word, f);
        col += word;
        first = false;
        p += word;
    }
    fputc('\n', f);
}

/* The answer first, three labelled lines and a line per further note: what the job used (CPU
 * time, mean and peak cores, the memory need with the figure it came from), what to ask for
 * next time (in the scheduler's words), and the notes. */
static void answer_part(const out *o, const rt_summary *s, const cli_run_result *run)
{
    char a[64], b[64], c[64], d[64], sched[256];
    if (s->has_process) {
        const rt_need *m = &s->memory_need;
        char memtxt[200];
        if (m->source == RT_NEED_UNKNOWN)
            snprintf(memtxt, sizeof memtxt, "memory unknown");
        else
            snprintf(memtxt, sizeof memtxt, "memory %s (%s%s)", mem(o, m->mib, d, sizeof d),
                     rt_need_source_text(m->source), m->sampled ? ": a lower bound" : "");
        char used[400];
        snprintf(used, sizeof used, "%s CPU (mean %s cores, peak %s); %s", dur(o, s->process_cpu_secs, a, sizeof a),
                 number(s->process_cores.mean, 2, "", b, sizeof b), number(s->process_cores.peak, 2, "", c, sizeof c),
                 memtxt);
        fprintf(o->f, "%-12s", "Used");
        wrapped(o->f, 12, 12, used);
        rt_recommendation rec = RT_RECOMMENDATION_INIT;
        const rt_summary *runs[1] = {s};
        if (rt_recommend(runs, 1, &rec) == RT_OK) {
            rt_scheduler sc = cli_scheduler_of(run ? run->job : NULL);
            size_t n = rt_format_recommendation(&rec, sc, sched, sizeof sched);
            while (n > 0 && n < sizeof sched && sched[n - 1] == '\n')
                sched[--n] = '\0';
            char gpu[64] = "";
            if (rec.gpu > 0)
                snprintf(gpu, sizeof gpu, ", %lld GPU%s", (long long)rec.gpu, rec.gpu == 1 ? "" : "s");
            if (rec.memory_mib == RT_NULL_I64)
                snprintf(a, sizeof a, "memory unknown");
            else
                snprintf(a, sizeof a, "%lld MiB", (long long)rec.memory_mib);
            fprintf(o->f, "%-12s%lld core%s, %s%s: %s (%s)\n", "Ask for", (long long)rec.cpu, rec.cpu == 1 ? "" : "s",
                    a, gpu, sched, cli_scheduler_name(sc));
        }
    } else {
        fprintf(o->f, "%-12smachine: mean %s busy cores, peak %s; memory used peak %s (no job was tracked)\n", "Used",
                number(s->cpu_cores.mean, 2, "", a, sizeof a), number(s->cpu_cores.peak, 2, "", b, sizeof b),
                mem(o, s->memory_used_mib.peak, c, sizeof c));
        fprintf(o->f, "%-12s- (track a job: resource-tracker -- COMMAND, or --pid PID)\n", "Ask for");
    }
    rt_note notes[RT_NOTES_MAX];
    size_t n = cli_run_notes(s, run ? run->cgroup_why : NULL, notes);
    if (n == 0)
        fprintf(o->f, "%-12snone\n", "Notes");
    for (size_t i = 0; i < n; i++) { /* a note per item, broken to fit a terminal */
        fprintf(o->f, "%-12s- ", i == 0 ? "Notes" : "");
        wrapped(o->f, 14, 14, notes[i].text);
    }
}

static void run_part(const out *o, const rt_summary *s, const cli_run_result *run)
{
    char a[64], b[64];
    fprintf(o->f, "Run\n");
    if (s->job_name || (run && run->job && run->job->job_name))
        line(o, "Job", "%s", run && run->job && run->job->job_name ? run->job->job_name : s->job_name);
    if (run && run->command) {
        char cmd[400] = "";
        size_t n = 0;
        for (char *const *p = run->command; *p && n < sizeof cmd - 1; p++) {
            int m = snprintf(cmd + n, sizeof cmd - n, "%s%s", p == run->command ? "" : " ", *p);
            n = m < 0 ? n : n + (size_t)m;
        }
        line(o, "Command", "%s", cmd);
    } else if (run && run->pid) {
        line(o, "Process", "%ld", run->pid);
    }
    if (run && run->exit_status >= 0)
        exit_line(o, run->exit_status);
    line(o, "Started", "%s", when(s->start_secs, a, sizeof a));
    line(o, "Ended", "%s", when(s->end_secs, b, sizeof b));
    line(o, "Duration", "%s", dur(o, s->duration_secs, a, sizeof a));
    line(o, "Samples", "%llu", (unsigned long long)s->samples);
    if (run && run->host) {
        const rt_host *h = run->host;
        line(o, "Host", "%s, %lld vCPUs, %s, %s", h->hostname ? h->hostname : "-", (long long)h->vcpus,
             mem(o, h->memory_mib, a, sizeof a), h->cpu_model ? h->cpu_model : "unknown CPU");
        if (h->gpu_count > 0 && h->gpu_count != RT_NULL_I64)
            line(o, "GPUs", "%lld x %s, %s", (long long)h->gpu_count, h->gpu_model ? h->gpu_model : "GPU",
                 mem(o, h->gpu_memory_mib, b, sizeof b));
    }
    if (run && run->cloud && run->cloud->vendor_id)
        line(o, "Cloud", "%s %s %s %s", run->cloud->vendor_id, run->cloud->instance_type ? run->cloud->instance_type : "",
             run->cloud->region_id ? run->cloud->region_id : "", run->cloud->zone_id ? run->cloud->zone_id : "");
    else if (run)
        line(o, "Cloud", "none found");
    if (s->allocation)
        line(o, "Machine", "%s to the job", s->allocation);
}

static void process_part(const out *o, const rt_summary *s)
{
    char a[64], b[64], c[64];
    fprintf(o->f, "Job (the process tree)\n");
    if (!s->has_process) {
        line(o, "Tracked process", "none (the machine only)");
        return;
    }
    line(o, "CPU time", "%s", dur(o, s->process_cpu_secs, a, sizeof a));
    cores_line(o, "Cores", &s->process_cores);
    mem_line(o, "PSS", &s->process_pss_mib, true);
    mem_line(o, "RSS", &s->process_rss_mib, false);
    if (s->process_gpus_used > 0 || s->process_gpu_usage.peak > 0) {
        cores_line(o, "GPUs busy", &s->process_gpu_usage);
        mem_line(o, "VRAM", &s->process_gpu_vram_mib, false);
        line(o, "GPUs used", "%s", number(s->process_gpus_used, 0, "", a, sizeof a));
    }
    if (!isnan(s->process_rss_hwm_mib))
        line(o, "Peak RSS of a process", "%s (the kernel's high-water mark)", mem(o, s->process_rss_hwm_mib, a, sizeof a));
    if (!isnan(s->process_unreclaimable_peak_mib))
        line(o, "Memory held, peak", "%s (the job's cgroup, page cache left out)",
             mem(o, s->process_unreclaimable_peak_mib, a, sizeof a));
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

/* A percentage for people: whole numbers from 10 on (and whole ones), one decimal below. */
static const char *pct(double v, char *b, size_t cap)
{
    return number(v, v >= 10 || v == round(v) ? 0 : 1, "%", b, cap);
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
static void limits_part(const out *o, const rt_summary *s)
{
    char a[64], b[64], c[64], p[512];
    bool cg = !isnan(s->oom_kills) || !isnan(s->memory_limit_mib) || !isnan(s->cpu_quota_cores) ||
              !isnan(s->cpu_periods) || !isnan(s->pids_peak) || !isnan(s->pids_limit) || !isnan(s->memory_high_mib);
    bool psi = pressure_text(s, p, sizeof p);
    if (!cg && !psi)
        return;
    /* never a heading that claims a cgroup the run did not have */
    if (!cg)
        fprintf(o->f, "Pressure (%s)\n", s->has_process ? "no cgroup of the job's: the machine's" : "the machine");
    else if (!s->has_process)
        fprintf(o->f, "Limits (the cgroup the tracker ran in)\n");
    else if (s->process_cgroup_exclusive == 1)
        fprintf(o->f, "Limits (the job's cgroup)\n");
    else
        fprintf(o->f, "Limits (the cgroup the job ran in, shared with other processes)\n");
    double peak = isnan(s->process_memory_peak_mib) ? s->process_rss_mib.peak : s->process_memory_peak_mib;
    if (s->oom_kills > 0) {
        char lim[80] = "", at[80] = "";
        if (!isnan(s->memory_limit_mib))
            snprintf(lim, sizeof lim, " (limit %s)", mem(o, s->memory_limit_mib, b, sizeof b));
        if (!isnan(peak))
            snprintf(at, sizeof at, " at %s", mem(o, peak, a, sizeof a));
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
        line(o, "Memory limit", "%s, peak %s (%.0f%%)", mem(o, s->memory_limit_mib, a, sizeof a),
             mem(o, peak, b, sizeof b), s->memory_limit_mib > 0 ? 100.0 * peak / s->memory_limit_mib : 0.0);
    else if (!isnan(s->memory_limit_mib))
        line(o, "Memory limit", "%s", mem(o, s->memory_limit_mib, a, sizeof a));
    else if (!isnan(s->process_memory_peak_mib))
        line(o, "Memory peak", "%s (no limit; the charge, page cache included)",
             mem(o, s->process_memory_peak_mib, a, sizeof a));
    if (!isnan(s->memory_high_mib))
        line(o, "Memory high", "throttled above %s", mem(o, s->memory_high_mib, a, sizeof a));
    if (!isnan(s->cpu_quota_cores)) {
        number(s->cpu_quota_cores, s->cpu_quota_cores == round(s->cpu_quota_cores) ? 0 : 2, "", b, sizeof b);
        if (s->cpu_periods > 0)
            line(o, "CPU quota", "CPU throttled in %s of periods (quota %s core%s), %s in all",
                 pct(100.0 * s->cpu_throttled_periods / s->cpu_periods, a, sizeof a), b,
                 s->cpu_quota_cores == 1 ? "" : "s", dur(o, s->cpu_throttled_secs, c, sizeof c));
        else
            line(o, "CPU quota", "%s core%s", b, s->cpu_quota_cores == 1 ? "" : "s");
    }
    if (!isnan(s->pids_peak) || !isnan(s->pids_limit))
        line(o, "Tasks", "peak %s, limit %s", number(s->pids_peak, 0, "", a, sizeof a),
             isnan(s->pids_limit) ? "none" : number(s->pids_limit, 0, "", b, sizeof b));
    if (psi)
        line(o, "Pressure (mean)", "%s", p);
}

/* "peak 99.8% (49.9% of 2), mean ..." of a sum and its hardware share, into b. */
static const char *pct_text(const rt_usage_pct *p, double den, char *b, size_t cap)
{
    char a[5][32];
    snprintf(b, cap, "peak %s (%s of %s), mean %s (%s)", number(p->max_sum_pct, 1, "%", a[0], sizeof a[0]),
             number(p->max_hardware_pct, 1, "%", a[1], sizeof a[1]),
             number(den, isfinite(den) && den == round(den) ? 0 : 2, "", a[4], sizeof a[4]),
             number(p->mean_sum_pct, 1, "%", a[2], sizeof a[2]), number(p->mean_hardware_pct, 1, "%", a[3], sizeof a[3]));
    return b;
}

/* gpu_tracker's split of the job: its RAM peaks, CPU percentages (100 per busy core, and the
 * share of the expected cores), thread peaks and the chosen GPUs' utilization. */
static void parts_part(const out *o, const rt_summary *s)
{
    const rt_usage *g = s->usage;
    if (!s->has_process || !g || (isnan(g->cpu[2].max_sum_pct) && isnan(g->ram_peak[2].total_mib)))
        return; /* no tree, or a file without its parts */
    static const char *const names[3] = {"main", "descendants", "combined"};
    char label[64], a[64], b[64], c[64], t[200];
    fprintf(o->f, "Parts (main: the root process; descendants; combined)\n");
    for (int i = 0; i < 3; i++) {
        if (isnan(g->ram_peak[i].total_mib))
            continue;
        snprintf(label, sizeof label, "RSS peak, %s", names[i]);
        line(o, label, "%s (private %s, shared %s)", mem(o, g->ram_peak[i].total_mib, a, sizeof a),
             mem(o, g->ram_peak[i].private_mib, b, sizeof b), mem(o, g->ram_peak[i].shared_mib, c, sizeof c));
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
        line(o, "Threads peak", "main %s, descendants %s, combined %s", number(g->threads_peak[0], 0, "", a, sizeof a),
             number(g->threads_peak[1], 0, "", b, sizeof b), number(g->threads_peak[2], 0, "", c, sizeof c));
    if (g->system_gpu_count > 0 && !isnan(g->gpu.max_sum_pct))
        line(o, "GPUs", "%s", pct_text(&g->gpu, g->expected_gpus, t, sizeof t));
}

static void machine_part(const out *o, const rt_summary *s)
{
    char a[64], b[64];
    fprintf(o->f, "Machine\n");
    if (!isnan(s->cpu_count))
        line(o, "Cores", "%s", number(s->cpu_count, 0, "", a, sizeof a));
    cores_line(o, "Cores busy", &s->cpu_cores);
    if (!isnan(s->memory_total_mib))
        line(o, "Memory", "%s", mem(o, s->memory_total_mib, a, sizeof a));
    mem_line(o, "Memory used", &s->memory_used_mib, true);
    if (s->gpu_count > 0) {
        line(o, "GPUs", "%s, %s VRAM", number(s->gpu_count, 0, "", b, sizeof b),
             mem(o, s->gpu_vram_total_mib, a, sizeof a));
        cores_line(o, "GPUs busy", &s->gpu_usage);
        mem_line(o, "VRAM used", &s->gpu_vram_mib, false);
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

int cli_summary_print(FILE *f, const rt_summary *s, const cli_run_result *run, const char *memory_unit,
                      const char *time_unit)
{
    out o = {.f = f, .mem_name = memory_unit, .time_name = time_unit};
    if ((memory_unit && cli_memory_unit(memory_unit, &o.mem_bytes) < 0) ||
        (time_unit && cli_time_unit(time_unit, &o.time_secs) < 0))
        return -1;
    answer_part(&o, s, run);
    run_part(&o, s, run);
    process_part(&o, s);
    parts_part(&o, s);
    limits_part(&o, s);
    machine_part(&o, s);
    return fflush(f) == 0 ? 0 : -1;
}

/* ---- the subcommand -------------------------------------------------------------------- */

static const char summary_usage[] =
    "usage: resource-tracker summary [--json] [--memory-unit UNIT] [--time-unit UNIT]\n"
    "                                [--expected-cores N] [--gpus UUID,...] FILE...\n"
    "  UNIT for memory: bytes, kilobytes, megabytes, gigabytes, terabytes (powers of 1000);\n"
    "  for time: seconds, minutes, hours, days. Without them text picks readable units and\n"
    "  JSON uses MiB and seconds (its gpu_tracker member: gigabytes and hours, as gpu_tracker).\n"
    "  --expected-cores N: the parts' hardware percentages divide by N (default: all cores);\n"
    "  --gpus: the GPUs whose utilization counts (default: all; needs the JSON lines' GPU list).\n";

int cli_summary_main(cli_options *o)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"memory-unit", required_argument, NULL, 'm'},
                                             {"time-unit", required_argument, NULL, 't'},
                                             {"expected-cores", required_argument, NULL, 'e'},
                                             {"gpus", required_argument, NULL, 'g'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    bool json = false;
    const char *mu = NULL, *tu = NULL, *why = NULL;
    double unused, expected = 0;
    char **gpus = NULL;
    size_t ngpus = 0;
    int argc = o->nsub + 1, c;
    char **argv = o->sub_args - 1; /* argv[0] is "summary" */
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'm':
            if (cli_memory_unit(optarg, &unused) < 0) {
                cli_say("summary: --memory-unit: '%s' is not a unit (bytes, kilobytes, megabytes, gigabytes, terabytes)",
                        optarg);
                return EXIT_USAGE;
            }
            mu = optarg;
            break;
        case 't':
            if (cli_time_unit(optarg, &unused) < 0) {
                cli_say("summary: --time-unit: '%s' is not a unit (seconds, minutes, hours, days)", optarg);
                return EXIT_USAGE;
            }
            tu = optarg;
            break;
        case 'e':
            if (cli_parse_expected_cores(optarg, &expected) < 0) {
                cli_say("summary: --expected-cores: '%s' is not a number of cores above 0", optarg);
                cli_gpu_list_free(gpus, ngpus);
                return EXIT_USAGE;
            }
            break;
        case 'g':
            cli_gpu_list_free(gpus, ngpus);
            if (cli_parse_gpu_list(optarg, &gpus, &ngpus, &why) < 0) {
                cli_say("summary: --gpus: %s: '%s'", why, optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h': cli_gpu_list_free(gpus, ngpus); fputs(summary_usage, stdout); return 0;
        case ':':
            cli_say("summary: option '%s' needs a value", argv[optind - 1]);
            cli_gpu_list_free(gpus, ngpus);
            return EXIT_USAGE;
        default:
            cli_say("summary: unknown option '%s' (see summary --help)", argv[optind - 1]);
            cli_gpu_list_free(gpus, ngpus);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        cli_say("summary: no FILE given (a recorded run: JSON lines or CSV)");
        cli_gpu_list_free(gpus, ngpus);
        return EXIT_USAGE;
    }
    int rc = 0;
    for (int i = optind; i < argc && rc == 0; i++) {
        rt_stats *st = NULL;
        if (rt_stats_new_with(NULL, &st) != RT_OK || cli_gpuview_apply(expected, gpus, ngpus, st) < 0) {
            cli_say("out of memory");
            rt_stats_free(st);
            cli_gpu_list_free(gpus, ngpus);
            return EXIT_FAIL;
        }
        rc = cli_read_run(argv[i], &st, 1, NULL);
        if (rc == 0) {
            const rt_summary *s = rt_stats_summary(st);
            if (json) {
                char buf[16384];
                size_t n = 0;
                if (rt_format_summary_json(s, mu, tu, buf, sizeof buf, &n) != RT_OK || n >= sizeof buf ||
                    fwrite(buf, 1, n, stdout) != n)
                    rc = EXIT_FAIL;
            } else {
                if (argc - optind > 1)
                    printf("%s== %s\n", i > optind ? "\n" : "", argv[i]);
                if (cli_summary_print(stdout, s, NULL, mu, tu) < 0)
                    rc = EXIT_FAIL;
            }
        }
        rt_stats_free(st);
    }
    cli_gpu_list_free(gpus, ngpus);
    if (fflush(stdout) != 0 && rc == 0)
        rc = EXIT_FAIL;
    return rc;
}
