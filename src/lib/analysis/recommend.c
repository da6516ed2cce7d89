/* recommend.c - what a job should ask for next time, from the statistics of one or more of its
 * runs: cores from the mean, memory and VRAM from the peaks with 20% headroom, never less than
 * what a run was OOM-killed at nor a CPU quota that held a run back, and the same
 * recommendation in the words of Metaflow, Kubernetes and SLURM. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"

int64_t rt_round_memory_mib(double mib)
{
    static const double steps[] = {128, 256, 512, 1024, 2048};
    if (!(mib > 0)) /* NaN, zero or negative: the smallest step */
        return 128;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (mib <= steps[i])
            return (int64_t)steps[i];
    return (int64_t)ceil(mib / 1024.0) * 1024;
}

/* max(a, b) where NaN means "no figure" */
static double max_known(double a, double b)
{
    return isnan(a) || b > a ? b : a;
}

/* A run throttled in at least this share of its quota periods (percent) was held back. */
#define THROTTLED_PCT 10.0

/* The floors a run's cgroup puts under the recommendation: an OOM-killed run needs more than
 * the most it reached or was allowed (its peak PSS, the group's peak charge, the limit) plus
 * 20%; a run throttled in THROTTLED_PCT of its periods needs a core above its quota. Updates
 * *mem / *cpu (the largest floors so far) and r's 0.6 fields. */
static void cgroup_floors(const rt_summary *s, double *mem, double *cpu, rt_recommendation *r)
{
    if (s->oom_kills > 0) {
        double peak = max_known(max_known(s->process_pss_mib.peak, s->process_memory_peak_mib), s->memory_limit_mib);
        *mem = max_known(*mem, (double)rt_round_memory_mib(peak * 1.2));
        r->oom_killed = 1;
    }
    double pct = s->cpu_periods > 0 ? 100.0 * s->cpu_throttled_periods / s->cpu_periods : NAN;
    if (pct >= THROTTLED_PCT && s->cpu_quota_cores > 0) {
        double need = ceil(s->cpu_quota_cores) + 1;
        if (isnan(*cpu) || need > *cpu || (need == *cpu && pct > r->cpu_throttled_pct)) {
            r->cpu_quota_cores = s->cpu_quota_cores;
            r->cpu_throttled_pct = pct;
        }
        *cpu = max_known(*cpu, need);
    }
}

rt_error rt_recommend(const rt_summary *const *runs, size_t n, rt_recommendation *out)
{
    if (!out || out->struct_size < offsetof(rt_recommendation, runs) || !runs || n == 0)
        return RT_ERR_INVALID;
    double cores = 0, pss = NAN, gpus = NAN, vram = NAN, duration = 0, mem_floor = NAN, cpu_floor = NAN;
    size_t ncores = 0;
    rt_recommendation r = {.struct_size = out->struct_size, .cpu_quota_cores = NAN, .cpu_throttled_pct = NAN};
    for (size_t i = 0; i < n; i++) {
        const rt_summary *s = runs[i];
        if (!s || !s->has_process)
            return RT_ERR_INVALID;
        if (!isnan(s->process_cores.mean)) {
            cores += s->process_cores.mean;
            ncores++;
        }
        pss = max_known(pss, s->process_pss_mib.peak);
        gpus = max_known(gpus, s->process_gpus_used);
        vram = max_known(vram, s->process_gpu_vram_mib.peak);
        duration += isnan(s->duration_secs) ? 0 : s->duration_secs;
        cgroup_floors(s, &mem_floor, &cpu_floor, &r);
    }
    double mean_cores = ncores ? cores / (double)ncores : 0;
    r.cpu = (int64_t)llround(mean_cores);
    if (r.cpu < 1)
        r.cpu = 1;
    if (cpu_floor > (double)r.cpu)
        r.cpu = (int64_t)cpu_floor;
    r.memory_mib = rt_round_memory_mib(pss * 1.2);
    if (mem_floor > (double)r.memory_mib)
        r.memory_mib = (int64_t)mem_floor;
    r.gpu = gpus > 0 ? (int64_t)ceil(gpus) : 0;
    r.vram_mib = vram > 0 ? rt_round_memory_mib(vram * 1.2) : 0;
    r.runs = n;
    r.duration_secs = duration / (double)n;
    size_t n_out = out->struct_size < sizeof r ? out->struct_size : sizeof r; /* an older caller's shorter struct */
    memcpy(out, &r, n_out);
    return RT_OK;
}

size_t rt_format_recommendation(const rt_recommendation *rec, rt_scheduler sched, char *buf, size_t cap)
{
    char gpu[128] = "";
    int n = -1;
    switch (sched) {
    case RT_SCHED_METAFLOW:
        if (rec->gpu > 0)
            snprintf(gpu, sizeof gpu, ", gpu=%lld", (long long)rec->gpu);
        n = snprintf(buf, cap, "@resources(cpu=%lld, memory=%lld%s)\n", (long long)rec->cpu,
                     (long long)rec->memory_mib, gpu);
        break;
    case RT_SCHED_K8S:
        if (rec->gpu > 0)
            snprintf(gpu, sizeof gpu, ", nvidia.com/gpu: \"%lld\"}, limits: {nvidia.com/gpu: \"%lld\"",
                     (long long)rec->gpu, (long long)rec->gpu);
        n = snprintf(buf, cap, "resources: {requests: {cpu: \"%lld\", memory: \"%lldMi\"%s}}\n", (long long)rec->cpu,
                     (long long)rec->memory_mib, gpu);
        break;
    case RT_SCHED_SLURM:
        if (rec->gpu > 0)
            snprintf(gpu, sizeof gpu, " --gres=gpu:%lld", (long long)rec->gpu);
        n = snprintf(buf, cap, "--cpus-per-task=%lld --mem=%lldM%s\n", (long long)rec->cpu, (long long)rec->memory_mib,
                     gpu);
        break;
    }
    return n < 0 ? 0 : (size_t)n;
}
