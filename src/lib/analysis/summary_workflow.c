/* summary_workflow.c - a run's summary in workflow engines' own accounting formats: Snakemake's
 * `benchmark:` TSV (as snakemake/benchmark.py writes it: its header, MiB, two decimals, "-" for a
 * missing figure, "NA" when nothing was measured) and a Nextflow trace (its field names, units
 * and formats: "107.4 MB", "1.2s", "99.8%", "-"). The choices are in docs/workflows.md. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../common/utf8.h"
#include "../core/core.h"
#include "../core/lasterr.h"
#include "../core/out.h"

/* A line being built; full is set when it would not fit (then nothing is written). */
typedef struct line {
    char b[4096];
    size_t n;
    bool full;
} line;

static void add(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(line *l, const char *fmt, ...)
{
    if (l->full)
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(l->b + l->n, sizeof l->b - l->n, fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)m >= sizeof l->b - l->n)
        l->full = true;
    else
        l->n += (size_t)m;
}

/* The run's duration: the caller's start and end when it knows both, else the records'. */
static double duration_of(const rt_summary *s, const rt_run_facts *run)
{
    if (run && run->start_secs > 0 && run->end_secs >= run->start_secs)
        return run->end_secs - run->start_secs;
    return s->duration_secs;
}

static double start_of(const rt_summary *s, const rt_run_facts *run)
{
    return run && run->start_secs > 0 ? run->start_secs : s->start_secs;
}

static double end_of(const rt_summary *s, const rt_run_facts *run)
{
    return run && run->end_secs > 0 ? run->end_secs : s->end_secs;
}

/* The tree's mean load in percent of one core (100: one core busy all along); NaN unknown. */
static double cpu_pct(const rt_summary *s, double dur)
{
    return dur > 0 && !isnan(s->process_cpu_secs) ? s->process_cpu_secs / dur * 100.0 : NAN;
}

/* ---- Snakemake ---------------------------------------------------------------------------- */

/* A figure as Snakemake's to_tsv_str writes a float: two decimals; None ("-") when missing. */
static void sm_num(line *l, double v)
{
    if (isfinite(v))
        add(l, "\t%.2f", v);
    else
        add(l, "\t-");
}

/* Python's str(timedelta(seconds=d)) without the fraction: "H:MM:SS", "N day(s), H:MM:SS"
 * (timedelta keeps microseconds, rounded half to even). */
static void sm_hms(line *l, double d)
{
    double us = nearbyint(d * 1e6);
    long long secs = (long long)floor(us / 1e6);
    long long days = secs / 86400, rest = secs % 86400;
    if (days)
        add(l, "%lld day%s, ", days, days != 1 ? "s" : "");
    add(l, "%lld:%02lld:%02lld", rest / 3600, rest % 3600 / 60, rest % 60);
}

static void snakemake_row(line *l, const rt_summary *s, const rt_run_facts *run)
{
    add(l, "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n");
    double dur = duration_of(s, run);
    if (isfinite(dur) && dur >= 0) {
        add(l, "%.4f\t", dur);
        sm_hms(l, dur);
    } else {
        add(l, "-\t-");
    }
    if (!s->has_process) { /* what Snakemake writes when it measured nothing */
        add(l, "\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n");
        return;
    }
    sm_num(l, s->process_rss_mib.peak);
    sm_num(l, s->process_vms_peak_mib);
    sm_num(l, s->usage ? s->usage->ram_peak[2].private_mib : NAN);
    sm_num(l, s->process_pss_mib.peak);
    sm_num(l, s->process_read_bytes / 1048576.0);
    sm_num(l, s->process_write_bytes / 1048576.0);
    sm_num(l, cpu_pct(s, dur));
    sm_num(l, s->process_cpu_secs);
    add(l, "\n");
}

/* ---- Nextflow ----------------------------------------------------------------------------- */

static const char nf_header[] = "name\tstatus\texit\tstart\tcomplete\tduration\trealtime\t%cpu\tpeak_rss\tpeak_vmem\t"
                                "rchar\twchar\tread_bytes\twrite_bytes\n";

/* A name in a TSV cell (its first 1 KiB, cut between UTF-8 characters): tabs and line breaks
 * become spaces. */
static void nf_text(line *l, const char *v)
{
    size_t from = l->n;
    if (!v || !*v)
        v = "-";
    size_t n = strnlen(v, 1025);
    if (n > 1024) { /* cut before a character the bound would split */
        n = 1024;
        while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
            n--;
    }
    add(l, "%.*s", (int)n, v);
    for (size_t i = from; i < l->n && !l->full; i++)
        if (l->b[i] == '\t' || l->b[i] == '\n' || l->b[i] == '\r')
            l->b[i] = ' ';
}

/* The task's name: the job's name, else the command line (its first 1 KiB), else "-". */
static void nf_name(line *l, const rt_summary *s, const rt_run_facts *run)
{
    const char *job = run && run->job && run->job->job_name ? run->job->job_name : s->job_name;
    char cmd[1024] = "";
    if (!job && run && run->command) {
        size_t n = 0;
        for (const char *const *p = run->command; *p && n < sizeof cmd - 1; p++) {
            int m = snprintf(cmd + n, sizeof cmd - n, "%s%s", p == run->command ? "" : " ", *p);
            n = m < 0 ? n : n + (size_t)m < sizeof cmd ? n + (size_t)m : sizeof cmd - 1;
        }
        size_t k = n; /* a character the bound split goes whole */
        while (k > 0 && ((unsigned char)cmd[k - 1] & 0xC0) == 0x80)
            k--;
        if (k > 0 && ((unsigned char)cmd[k - 1] & 0x80) && !rt_utf8_len((const unsigned char *)cmd + k - 1, n - (k - 1)))
            cmd[k - 1] = '\0';
        job = cmd;
    }
    nf_text(l, job);
}

/* A Unix time as Nextflow's default date format, local time: "2024-01-31 13:45:07.123". */
static void nf_date(line *l, double t)
{
    if (!(t > 0)) {
        add(l, "\t-");
        return;
    }
    long long ms = llround(t * 1000.0);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char b[32];
    if (!localtime_r(&secs, &tm) || strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
        add(l, "\t-");
        return;
    }
    add(l, "\t%s.%03lld", b, ms % 1000);
}

/* Seconds as Nextflow's Duration prints them: "850ms", "1.2s", "59s", "1m 5s", "2h 1s". */
static void nf_time(line *l, double secs)
{
    if (!(secs >= 0)) {
        add(l, "\t-");
        return;
    }
    long long ms = llround(secs * 1000.0);
    if (ms < 1000) {
        add(l, "\t%lldms", ms);
        return;
    }
    if (ms < 60000) {
        long long tenths = (ms + 50) / 100; /* Math.round of the tenths: half up */
        if (tenths % 10)
            add(l, "\t%lld.%llds", tenths / 10, tenths % 10);
        else
            add(l, "\t%llds", tenths / 10);
        return;
    }
    long long s = (ms + 500) / 1000, m = s / 60, h = m / 60, d = h / 24;
    s %= 60, m %= 60, h %= 24;
    add(l, "\t");
    const char *sep = "";
    if (d)
        add(l, "%s%lldd", sep, d), sep = " ";
    if (h)
        add(l, "%s%lldh", sep, h), sep = " ";
    if (m)
        add(l, "%s%lldm", sep, m), sep = " ";
    if (s)
        add(l, "%s%llds", sep, s);
}

/* Bytes as Nextflow's MemoryUnit prints them: powers of 1024 named B, KB, MB, GB, ..., one
 * decimal at most ("107.4 MB", "2 GB"), "0" for none; "-" when missing. */
static void nf_mem(line *l, double bytes)
{
    if (!isfinite(bytes) || bytes < 0) {
        add(l, "\t-");
        return;
    }
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB"};
    long long size = llround(bytes);
    if (size <= 0) {
        add(l, "\t0");
        return;
    }
    int group = (int)(log10((double)size) / log10(1024.0));
    if (group > 7)
        group = 7;
    char v[48];
    snprintf(v, sizeof v, "%.1f", (double)size / pow(1024.0, group));
    size_t n = strlen(v);
    if (n >= 2 && strcmp(v + n - 2, ".0") == 0) /* DecimalFormat "0.#": no trailing zero */
        v[n - 2] = '\0';
    add(l, "\t%s %s", v, units[group]);
}

static void nextflow_row(line *l, const rt_summary *s, const rt_run_facts *run)
{
    add(l, "%s", nf_header);
    nf_name(l, s, run);
    int exit_status = run ? run->exit_status : -1;
    add(l, "\t%s", exit_status < 0 ? "-" : exit_status == 0 ? "COMPLETED" : "FAILED");
    if (exit_status < 0)
        add(l, "\t-");
    else
        add(l, "\t%d", exit_status);
    nf_date(l, start_of(s, run));
    nf_date(l, end_of(s, run));
    double dur = duration_of(s, run);
    nf_time(l, dur); /* duration: since submission, which is the start here */
    nf_time(l, dur); /* realtime */
    double pct = s->has_process ? cpu_pct(s, dur) : NAN;
    if (isfinite(pct))
        add(l, "\t%.1f%%", (double)(float)pct); /* String.format('%.1f%%', value.toFloat()) */
    else
        add(l, "\t-");
    nf_mem(l, s->has_process ? s->process_rss_mib.peak * 1048576.0 : NAN);
    nf_mem(l, s->has_process ? s->process_vms_peak_mib * 1048576.0 : NAN);
    add(l, "\t-\t-"); /* rchar, wchar: characters through read() and write(), not measured */
    nf_mem(l, s->has_process ? s->process_read_bytes : NAN);
    nf_mem(l, s->has_process ? s->process_write_bytes : NAN);
    add(l, "\n");
}

rt_error rt_summary_write_workflow(const rt_summary *s, const rt_run_facts *run, int format, rt_write_fn write,
                                   void *user)
{
    rt_err_clear();
    if (!s || !write) {
        rt_err_set("rt_summary_write_workflow: %s is NULL", !s ? "s" : "write");
        return RT_ERR_INVALID;
    }
    line l = {.n = 0};
    line *lp = &l;
    if (format == RT_WORKFLOW_SNAKEMAKE) {
        snakemake_row(lp, s, run);
    } else if (format == RT_WORKFLOW_NEXTFLOW) {
        nextflow_row(lp, s, run);
    } else {
        rt_err_set("rt_summary_write_workflow: %d is not a format (RT_WORKFLOW_SNAKEMAKE, RT_WORKFLOW_NEXTFLOW)",
                   format);
        return RT_ERR_INVALID;
    }
    if (lp->full) { /* cannot be: the name is cut to fit */
        rt_err_set("rt_summary_write_workflow: the row is longer than %zu bytes", sizeof lp->b);
        return RT_ERR_INVALID;
    }
    rt_out o = RT_OUT_CB(write, user);
    if (rt_out_write(&o, lp->b, lp->n) < 0) {
        rt_err_set("rt_summary_write_workflow: the write failed");
        return RT_ERR_IO;
    }
    return RT_OK;
}
