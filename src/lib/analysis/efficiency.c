/* efficiency.c - a run's requested figures and efficiencies (efficiency.h): each figure the
 * request's where it says it, else the job's cgroup limit, else, on a GitHub Actions runner,
 * the machine (the runner is the job's); then CPU, memory, GPU and time-limit efficiency as
 * seff and jobstats count them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/request.h"
#include "efficiency.h"

/* The place's name when req names the GitHub Actions runner. */
static int on_runner(const rt_request *req)
{
    return req && req->place && strcmp(req->place, "github-actions") == 0;
}

/* 100 x used / given, NaN unless both are known and given above 0. */
static double pct(double used, double given)
{
    return isfinite(used) && isfinite(given) && given > 0 ? 100.0 * used / given : NAN;
}

/* One requested figure and its source: the request's where it says it (above 0), else the job's
 * cgroup limit (limit_from), else the machine's (NaN: not on a runner), else left as it is. */
static void requested(double *v, const char **from, double asked, const char *asked_from, double limit,
                      const char *limit_from, double machine)
{
    if (asked_from && asked > 0) {
        *v = asked;
        *from = asked_from;
    } else if (limit > 0) {
        *v = limit;
        *from = limit_from;
    } else if (machine > 0) {
        *v = machine;
        *from = "runner";
    }
}

void rt_efficiency_of(rt_summary *s, const rt_request *req)
{
    s->request = rt_request_any(req) ? req : NULL;
    s->requested_cpu_cores = s->requested_memory_mib = s->requested_gpus = s->time_limit_secs = NAN;
    s->requested_cpu_from = s->requested_memory_from = s->requested_gpus_from = s->time_limit_from = NULL;
    s->cpu_efficiency_pct = s->memory_efficiency_pct = s->gpu_efficiency_pct = s->time_limit_used_pct = NAN;

    requested(&s->requested_cpu_cores, &s->requested_cpu_from, req ? req->cpu_cores : NAN, req ? req->cpu_from : NULL,
              s->cpu_quota_cores, "cgroup CPU quota", on_runner(req) ? s->cpu_count : NAN);
    requested(&s->requested_memory_mib, &s->requested_memory_from, req ? req->memory_mib : NAN,
              req ? req->memory_from : NULL, s->memory_limit_mib, "cgroup memory limit",
              on_runner(req) ? s->memory_total_mib : NAN);
    if (req && req->gpus_from && req->gpus >= 0) {
        s->requested_gpus = req->gpus;
        s->requested_gpus_from = req->gpus_from;
    }
    if (req && req->time_limit_from && req->time_limit_secs > 0) {
        s->time_limit_secs = req->time_limit_secs;
        s->time_limit_from = req->time_limit_from;
    }

    if (s->has_process) {
        double wall = s->duration_secs;
        s->cpu_efficiency_pct = isfinite(s->process_cpu_secs) && wall > 0
                                    ? pct(s->process_cpu_secs, s->requested_cpu_cores * wall)
                                    : NAN;
        s->memory_efficiency_pct = pct(s->memory_need.mib, s->requested_memory_mib);
        s->gpu_efficiency_pct = pct(s->process_gpu_usage.mean, s->requested_gpus);
    }
    if (isfinite(s->time_limit_secs) && isfinite(s->end_secs)) {
        double start = req && req->job_start_secs > 0 ? req->job_start_secs : s->start_secs;
        if (isfinite(start) && s->end_secs >= start)
            s->time_limit_used_pct = pct(s->end_secs - start, s->time_limit_secs);
    }
}

/* Appends "WHAT PCT% of AMOUNT (FROM)" ("<1%" for a share above 0 that rounds to 0) to buf at *n, ", " before all but the first; cut at cap. */
static void part(char *buf, size_t cap, size_t *n, const char *what, double pct, const char *amount, const char *from)
{
    if (*n + 1 >= cap)
        return;
    char p[16];
    int k = snprintf(buf + *n, cap - *n, "%s%s %s of %s (%s)", *n ? ", " : "", what, rt_share_text(pct, p, sizeof p),
                     amount, from);
    if (k > 0)
        *n += (size_t)k < cap - *n ? (size_t)k : cap - *n - 1;
}

const char *rt_share_text(double pct, char *b, size_t cap)
{
    snprintf(b, cap, pct > 0 && pct < 0.5 ? "<1%%" : "%.0f%%", pct); /* a share under 1% is not 0% */
    return b;
}

size_t rt_efficiency_words(const rt_summary *s, char *buf, size_t cap)
{
    if (!cap)
        return 0;
    buf[0] = '\0';
    size_t n = 0;
    char a[48];
    if (isfinite(s->cpu_efficiency_pct)) {
        double c = round(s->requested_cpu_cores * 100) / 100; /* 1.5 cores, 0.25 cores, 8 cores */
        snprintf(a, sizeof a, "%g core%s", c, c == 1 ? "" : "s");
        part(buf, cap, &n, "CPU", s->cpu_efficiency_pct, a, s->requested_cpu_from);
    }
    if (isfinite(s->memory_efficiency_pct)) {
        double m = s->requested_memory_mib;
        if (m < 1024)
            snprintf(a, sizeof a, "%.0f MiB", m);
        else
            snprintf(a, sizeof a, fabs(m / 1024 - round(m / 1024)) < 0.05 ? "%.0f GiB" : "%.1f GiB", m / 1024);
        part(buf, cap, &n, "memory", s->memory_efficiency_pct, a, s->requested_memory_from);
    }
    if (isfinite(s->gpu_efficiency_pct)) {
        snprintf(a, sizeof a, "%.0f GPU%s", s->requested_gpus, s->requested_gpus == 1 ? "" : "s");
        part(buf, cap, &n, "GPU", s->gpu_efficiency_pct, a, s->requested_gpus_from);
    }
    if (isfinite(s->time_limit_used_pct)) {
        double t = s->time_limit_secs;
        snprintf(a, sizeof a, t < 120 ? "%.0f s" : t < 7200 ? "%.0f min" : "%.1f h",
                 t < 120 ? t : t < 7200 ? t / 60 : t / 3600);
        part(buf, cap, &n, "time limit", s->time_limit_used_pct, a, s->time_limit_from);
    }
    return n;
}
