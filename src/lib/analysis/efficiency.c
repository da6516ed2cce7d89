/* efficiency.c - a run's requested figures and efficiencies (efficiency.h): each figure the
 * request's where it says it, else the job's cgroup limit, else, on a GitHub Actions runner,
 * the machine (the runner is the job's); then CPU, memory, GPU and time-limit efficiency as
 * seff and jobstats count them. */
#include <math.h>
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

void rt_efficiency_of(rt_summary *s, const rt_request *req)
{
    s->request = rt_request_any(req) ? req : NULL;
    s->requested_cpu_cores = s->requested_memory_mib = s->requested_gpus = s->time_limit_secs = NAN;
    s->requested_cpu_from = s->requested_memory_from = s->requested_gpus_from = s->time_limit_from = NULL;
    s->cpu_efficiency_pct = s->memory_efficiency_pct = s->gpu_efficiency_pct = s->time_limit_used_pct = NAN;

    if (req && req->cpu_from && req->cpu_cores > 0) {
        s->requested_cpu_cores = req->cpu_cores;
        s->requested_cpu_from = req->cpu_from;
    } else if (s->cpu_quota_cores > 0) {
        s->requested_cpu_cores = s->cpu_quota_cores;
        s->requested_cpu_from = "cgroup CPU quota";
    } else if (on_runner(req) && s->cpu_count > 0) {
        s->requested_cpu_cores = s->cpu_count;
        s->requested_cpu_from = "runner";
    }
    if (req && req->memory_from && req->memory_mib > 0) {
        s->requested_memory_mib = req->memory_mib;
        s->requested_memory_from = req->memory_from;
    } else if (s->memory_limit_mib > 0) {
        s->requested_memory_mib = s->memory_limit_mib;
        s->requested_memory_from = "cgroup memory limit";
    } else if (on_runner(req) && s->memory_total_mib > 0) {
        s->requested_memory_mib = s->memory_total_mib;
        s->requested_memory_from = "runner";
    }
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
