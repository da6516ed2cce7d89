/* recommend.c - what a job should ask for next time, from the statistics of one or more of its
 * runs: cores from the runs' predicted durations (the fewest within a slowdown bound; cores.c
 * makes the tables), memory and VRAM from the highest need (need.c) with headroom that
 * shrinks as runs agree, never less than the floors a run stopped at a limit puts under them
 * (floors.c: twice the memory limit it was OOM-killed or stalled at, twice the time it ran to its
 * time limit) nor a CPU quota that held a run back, GPUs and each GPU's memory by the GPU ask (gpu_ask.c), and the same recommendation
 * in the words of Metaflow, Kubernetes (with a node affinity on the GPUs' memory) and SLURM; and
 * the phase that decided the cores. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "cores.h"
#include "floors.h"
#include "gpu_ask.h"
#include "need.h"
#include "rereads.h"

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

/* The floors a run puts under the recommendation: the memory of a run stopped at a limit
 * (floors.c), into *mem and r's memory_floor_mib, memory_learn, oom_killed; a run throttled in
 * THROTTLED_PCT of its periods needs a core above its quota (*cpu, r's 0.6 fields); the time of
 * a run that ran to its time limit (r->time_floor_secs). */
static void run_floors(const rt_summary *const *runs, size_t n, size_t i, double *mem, double *cpu,
                       rt_recommendation *r)
{
    const rt_summary *s = runs[i];
    rt_mem_floor f;
    rt_mem_floor_of(runs, n, i, &f);
    r->oom_killed |= f.why == RT_FLOOR_OOM;
    if (!isnan(f.floor_mib) && !(f.floor_mib <= *mem)) {
        *mem = f.floor_mib;
        r->memory_learn = !f.learned;
    }
    r->time_floor_secs = max_known(r->time_floor_secs, rt_time_floor_of(s));
    double pct = s->cpu_periods > 0 ? 100.0 * s->cpu_throttled_periods / s->cpu_periods : NAN;
    if (pct >= THROTTLED_PCT && s->cpu_quota_cores > 0) {
        double need_cpu = ceil(s->cpu_quota_cores) + 1;
        if (isnan(*cpu) || need_cpu > *cpu || (need_cpu == *cpu && pct > r->cpu_throttled_pct)) {
            r->cpu_quota_cores = s->cpu_quota_cores;
            r->cpu_throttled_pct = pct;
        }
        *cpu = max_known(*cpu, need_cpu);
    }
}

/* The cache a run's re-reads ask for (docs/answers.md, "Re-reads"): where they were large, the
 * run's need plus the files it read back (rereads.h), the largest so far in *keep, with those
 * files in *files. */
static void cache_floor(const rt_summary *s, double need, double *keep, double *files)
{
    rt_rereads rr;
    if (rt_rereads_of(s, need, &rr) && rr.large && !(rr.keep_mib <= *keep)) {
        *keep = rr.keep_mib;
        *files = rr.files_mib;
    }
}

/* The run's needs: as its statistics made them, or (a summary restored from a history written
 * before 0.9) from its figures by the same rule. */
static void needs_of(const rt_summary *s, rt_need *mem, rt_need *vram)
{
    bool mem_known = s->memory_need.source != RT_NEED_UNKNOWN && isfinite(s->memory_need.mib);
    bool vram_known = s->vram_need.source != RT_NEED_UNKNOWN && isfinite(s->vram_need.mib);
    if (!mem_known || !vram_known) /* figures are looked at only for what the summary lacks */
        rt_need_of(s, mem, vram);
    if (mem_known)
        *mem = s->memory_need;
    if (vram_known)
        *vram = s->vram_need;
}

/* *best = n when n is known and above it (the first of equals stays). */
static void keep_highest(rt_need *best, const rt_need *n)
{
    if (n->source != RT_NEED_UNKNOWN && isfinite(n->mib) && !(n->mib <= best->mib))
        *best = *n;
}

/* Run table t's own duration: at the cores it had, the waits other work caused left out
 * (0.20; a table restored from an older history: the records' seconds). */
double rt_cores_own_secs(const rt_cores_table *t)
{
    if (!t)
        return NAN;
    return t->own_secs > 0 ? t->own_secs : t->duration_secs;
}

/* Whether run table t's predicted duration under c cores is within slow percent of its own. */
static bool within(const rt_cores_table *t, int64_t c, double slow)
{
    return rt_cores_duration_at(t, c) <= rt_cores_own_secs(t) * (1.0 + slow / 100.0) + 1e-9;
}

int64_t rt_cores_fewest(const rt_cores_table *t, double max_slowdown_pct)
{
    if (!t || t->n == 0 || !t->rows || !(max_slowdown_pct >= 0))
        return 0;
    for (int64_t c = 1; c < (int64_t)t->n; c++)
        if (within(t, c, max_slowdown_pct))
            return c;
    return (int64_t)t->n;
}

/* The CPU answer from the runs' tables (every run has one): the fewest cores (with a price, the
 * cheapest count) under which every run is predicted within slow percent of its own duration. */
static int64_t cores_from_tables(const rt_summary *const *runs, size_t n, double slow, double price)
{
    size_t most = 0;
    for (size_t i = 0; i < n; i++)
        most = runs[i]->cores->n > most ? runs[i]->cores->n : most;
    int64_t best = (int64_t)most;
    double best_cost = INFINITY;
    for (int64_t c = 1; c <= (int64_t)most; c++) {
        bool ok = true;
        double cost = 0;
        for (size_t i = 0; i < n && ok; i++) {
            const rt_cores_table *t = runs[i]->cores;
            ok = within(t, c, slow);
            cost += (double)c * rt_cores_duration_at(t, c);
        }
        if (!ok)
            continue;
        if (!(price > 0))
            return c; /* the fewest */
        if (cost < best_cost * (1.0 - 1e-9)) {
            best_cost = cost;
            best = c;
        }
    }
    return best;
}

/* The time limit to ask with a predicted duration: half again, at least 10 minutes, whole
 * minutes. */
static double time_limit_for(double secs)
{
    double t = secs * 1.5;
    return ceil((t < 600 ? 600 : t) / 60.0) * 60.0;
}

/* The phase that decided the ask (r->cpu_phase): of the runs one core fewer would slow past
 * slow percent, the phase that core slows the most against the ask. */
static void deciding_phase(const rt_summary *const *runs, size_t n, double slow, rt_recommendation *r)
{
    if (r->cpu < 2 || strcmp(r->cpu_basis, "duration") != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (within(runs[i]->cores, r->cpu - 1, slow))
            continue;
        for (size_t k = 0; k < runs[i]->phase_count; k++) {
            const rt_phase_summary *p = runs[i]->phases[k];
            if (!p->cores || p->cores->n == 0 || !p->name)
                continue;
            double more = rt_cores_duration_at(p->cores, r->cpu - 1) - rt_cores_duration_at(p->cores, r->cpu);
            if (more > 1e-9 && !(more <= r->cpu_phase_fewer_secs)) {
                r->cpu_phase_fewer_secs = more;
                (void)rt_copy_cut(r->cpu_phase, sizeof r->cpu_phase, p->name);
            }
        }
    }
}

/* The 0.18 figures of the ask: the slowest run's predicted duration under cpu and one fewer. */
static void cpu_times(const rt_summary *const *runs, size_t n, double price, rt_recommendation *r)
{
    double worst = -1;
    for (size_t i = 0; i < n; i++) {
        const rt_cores_table *t = runs[i]->cores;
        double d = rt_cores_duration_at(t, r->cpu);
        if (d > worst) {
            worst = d;
            r->cpu_duration_secs = d;
            r->cpu_run_duration_secs = t->duration_secs;
        }
        if (r->cpu > 1) {
            double f = rt_cores_duration_at(t, r->cpu - 1);
            r->cpu_fewer_duration_secs =
                isnan(r->cpu_fewer_duration_secs) || f > r->cpu_fewer_duration_secs ? f : r->cpu_fewer_duration_secs;
        }
    }
    r->cpu_fewer = r->cpu - 1;
    r->time_limit_secs = time_limit_for(r->cpu_duration_secs);
    if (price > 0)
        r->cpu_cost_usd = price * rt_core_hours(r->cpu, r->cpu_duration_secs);
}

rt_error rt_recommend_with(const rt_recommend_options *opts, const rt_summary *const *runs, size_t n,
                           rt_recommendation *out)
{
    if (!out || out->struct_size < offsetof(rt_recommendation, runs) || !runs || n == 0)
        return RT_ERR_INVALID;
    double slow = 10, price = NAN;
    if (!opts && runs[0] && runs[0]->max_slowdown_pct >= 0)
        slow = runs[0]->max_slowdown_pct; /* the run's own bound (rt_stats_set_max_slowdown) */
    if (opts) {
        if (opts->struct_size < offsetof(rt_recommend_options, usd_per_core_hour) + sizeof(double) ||
            !(opts->max_slowdown_pct >= 0) || opts->usd_per_core_hour < 0 || isnan(opts->usd_per_core_hour))
            return RT_ERR_INVALID;
        slow = opts->max_slowdown_pct;
        if (opts->usd_per_core_hour > 0)
            price = opts->usd_per_core_hour;
    }
    double cores = 0, duration = 0, mem_floor = NAN, cpu_floor = NAN, keep = NAN, files = NAN;
    size_t ncores = 0, tables = 0;
    rt_need mem = {NAN, RT_NEED_UNKNOWN, 0}, vram = {NAN, RT_NEED_UNKNOWN, 0};
    rt_gpu_fold gpus;
    rt_gpu_fold_init(&gpus);
    rt_recommendation r = {.struct_size = out->struct_size,
                           .cpu_quota_cores = NAN,
                           .cpu_throttled_pct = NAN,
                           .max_slowdown_pct = slow,
                           .cpu_duration_secs = NAN,
                           .cpu_run_duration_secs = NAN,
                           .cpu_fewer_duration_secs = NAN,
                           .cpu_cost_usd = NAN,
                           .time_limit_secs = NAN,
                           .cpu_phase_fewer_secs = NAN,
                           .memory_floor_mib = NAN,
                           .time_floor_secs = NAN,
                           .memory_reread_files_mib = NAN};
    for (size_t i = 0; i < n; i++) {
        const rt_summary *s = runs[i];
        if (!s || !s->has_process)
            return RT_ERR_INVALID;
        if (!isnan(s->process_cores.mean)) {
            cores += s->process_cores.mean;
            ncores++;
        }
        tables += s->cores && s->cores->n > 0;
        rt_need m, v;
        needs_of(s, &m, &v);
        keep_highest(&mem, &m);
        keep_highest(&vram, &v);
        rt_gpu_fold_run(&gpus, s, &v);
        duration += isnan(s->duration_secs) ? 0 : s->duration_secs;
        run_floors(runs, n, i, &mem_floor, &cpu_floor, &r);
        cache_floor(s, m.mib, &keep, &files);
    }
    if (tables == n) {
        r.cpu = cores_from_tables(runs, n, slow, price);
        r.cpu_basis = "duration";
    } else {
        double mean_cores = ncores ? cores / (double)ncores : 0;
        r.cpu = (int64_t)llround(mean_cores);
        r.cpu_basis = "mean";
    }
    if (r.cpu < 1)
        r.cpu = 1;
    if (cpu_floor > (double)r.cpu) {
        r.cpu = (int64_t)cpu_floor;
        r.cpu_basis = "throttled";
    }
    if (tables == n) {
        cpu_times(runs, n, price, &r);
        deciding_phase(runs, n, slow, &r);
    }
    r.headroom_pct = 10.0 + 10.0 / (double)n;
    double grow = 1.0 + r.headroom_pct / 100.0;
    r.memory_mib = isfinite(mem.mib) ? rt_round_memory_mib(mem.mib * grow) : RT_NULL_I64;
    if (mem_floor > (double)r.memory_mib || (r.memory_mib == RT_NULL_I64 && !isnan(mem_floor)))
        r.memory_mib = (int64_t)mem_floor;
    if (isfinite(keep) && rt_round_memory_mib(keep * grow) > r.memory_mib) { /* the files re-read kept */
        r.memory_mib = rt_round_memory_mib(keep * grow);
        r.memory_reread_files_mib = files;
    }
    if (mem_floor < (double)r.memory_mib)
        r.memory_learn = 0; /* a need plus headroom above the floor: the ask is that */
    r.memory_floor_mib = mem_floor;
    if (r.time_floor_secs > 0) /* ran to its time limit: twice that, whole minutes */
        r.time_limit_secs = max_known(r.time_limit_secs, ceil(2.0 * r.time_floor_secs / 60.0) * 60.0);
    r.memory_need_mib = mem.mib;
    r.memory_source = mem.source;
    r.memory_sampled = mem.sampled;
    rt_gpu_fold_finish(&gpus, grow, &r); /* r.gpu and the GPU ask */
    r.vram_mib = vram.mib > 0 ? rt_round_memory_mib(vram.mib * grow) : 0;
    r.vram_need_mib = vram.mib;
    r.vram_source = vram.source;
    r.runs = n;
    r.duration_secs = duration / (double)n;
    size_t n_out = out->struct_size < sizeof r ? out->struct_size : sizeof r; /* an older caller's shorter struct */
    memcpy(out, &r, n_out);
    return RT_OK;
}

rt_error rt_recommend(const rt_summary *const *runs, size_t n, rt_recommendation *out)
{
    return rt_recommend_with(NULL, runs, n, out);
}

size_t rt_format_recommendation(const rt_recommendation *rec, rt_scheduler sched, char *buf, size_t cap)
{
    char gpu[128] = "", mem[64] = "";
    bool known = rec->memory_mib != RT_NULL_I64 && rec->memory_mib > 0; /* unknown: no memory asked */
    long long cpu = (long long)rec->cpu, mib = (long long)rec->memory_mib, g = (long long)rec->gpu;
    int n = -1;
    switch (sched) {
    case RT_SCHED_METAFLOW:
        if (rec->gpu > 0)
            snprintf(gpu, sizeof gpu, ", gpu=%lld", g);
        if (known) /* Metaflow's memory is MB: Kubernetes gets it as "<n>M" (10^6 bytes), AWS Batch
                    * as MiB; MB rounded up never asks for less than the MiB recommended */
            snprintf(mem, sizeof mem, ", memory=%lld", (mib * 1048576LL + 999999) / 1000000);
        n = snprintf(buf, cap, "@resources(cpu=%lld%s%s)\n", cpu, mem, gpu);
        break;
    case RT_SCHED_K8S: {
        char affinity[320]; /* 0.19: each GPU's memory, on GPU feature discovery's node label */
        if (rec->gpu > 0)
            snprintf(gpu, sizeof gpu, ", nvidia.com/gpu: \"%lld\"}, limits: {nvidia.com/gpu: \"%lld\"", g, g);
        if (known)
            snprintf(mem, sizeof mem, ", memory: \"%lldMi\"", mib);
        rt_gpu_ask_k8s_affinity(rec, affinity, sizeof affinity);
        n = snprintf(buf, cap, "resources: {requests: {cpu: \"%lld\"%s%s}}%s\n", cpu, mem, gpu, affinity);
        break;
    }
    case RT_SCHED_SLURM: {
        char when[64] = "";
        /* 0.18: the time limit that goes with the cores (a caller's older, shorter struct has none) */
        bool timed = rec->struct_size >= offsetof(rt_recommendation, time_limit_secs) + sizeof(double) &&
                     rec->time_limit_secs > 0 && rec->time_limit_secs < 1e9;
        if (timed) {
            long long t = (long long)ceil(rec->time_limit_secs);
            if (t >= 86400)
                snprintf(when, sizeof when, " --time=%lld-%02lld:%02lld:%02lld", t / 86400, t / 3600 % 24, t / 60 % 60,
                         t % 60);
            else
                snprintf(when, sizeof when, " --time=%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
        }
        if (rec->gpu > 0)
            snprintf(gpu, sizeof gpu, " --gres=gpu:%lld", g);
        if (known)
            snprintf(mem, sizeof mem, " --mem=%lldM", mib);
        n = snprintf(buf, cap, "--cpus-per-task=%lld%s%s%s\n", cpu, mem, gpu, when);
        break;
    }
    }
    return n < 0 ? 0 : (size_t)n;
}

/* secs roughly, as a person reads a prediction: "8.4 s", "42 s", "1.6 min", "14 min", "2.5 h". */
static void approx(double secs, char *b, size_t cap)
{
    if (secs < 10)
        snprintf(b, cap, "%.1f s", secs);
    else if (secs < 90)
        snprintf(b, cap, "%.0f s", secs);
    else if (secs < 600)
        snprintf(b, cap, "%.1f min", secs / 60);
    else if (secs < 5400)
        snprintf(b, cap, "%.0f min", secs / 60);
    else if (secs < 172800)
        snprintf(b, cap, "%.1f h", secs / 3600);
    else
        snprintf(b, cap, "%.1f days", secs / 86400);
}

size_t rt_recommendation_time_words(const rt_recommendation *rec, char *buf, size_t cap)
{
    if (buf && cap)
        buf[0] = '\0';
    if (!rec || rec->struct_size < offsetof(rt_recommendation, cpu_basis) + sizeof(const char *) ||
        !(rec->cpu_duration_secs >= 0) || !(rec->cpu_run_duration_secs > 0))
        return 0;
    char a[32], b[32], money[48] = "", fewer[224] = "";
    double own = rec->cpu_run_duration_secs, d = rec->cpu_duration_secs;
    approx(d, a, sizeof a);
    approx(own, b, sizeof b);
    if (rec->cpu_cost_usd >= 0)
        snprintf(money, sizeof money, ", $%.4g a run", rec->cpu_cost_usd);
    char how[96];
    double pct = 100.0 * (d - own) / own;
    bool floor = rec->struct_size >= offsetof(rt_recommendation, time_floor_secs) + sizeof(double) &&
                 rec->time_floor_secs > 0; /* 0.20: a run stopped before its end */
    if (floor)
        snprintf(how, sizeof how, "or more: a run was stopped before its end");
    else if (fabs(pct) < 2)
        snprintf(how, sizeof how, "as this run");
    else if (pct < 0)
        snprintf(how, sizeof how, "at best, %.0f%% less than this run's %s (its tasks waited for a CPU)", -pct, b);
    else
        snprintf(how, sizeof how, "%+.0f%% on this run's %s", pct, b);
    if (rec->cpu_fewer > 0 && rec->cpu_fewer_duration_secs >= 0) {
        char f[32], phase[128] = "";
        approx(rec->cpu_fewer_duration_secs, f, sizeof f);
        if (rec->struct_size >= offsetof(rt_recommendation, cpu_phase_fewer_secs) + sizeof(double) &&
            rec->cpu_phase[0] && rec->cpu_phase_fewer_secs > 0) {
            /* the phase that decided it, its name cut short without splitting a character */
            char name[48], more[32];
            rt_copy_cut(name, sizeof name, rec->cpu_phase);
            approx(rec->cpu_phase_fewer_secs, more, sizeof more);
            snprintf(phase, sizeof phase, ": phase \"%s%s\" +%s", name,
                     strlen(name) < strnlen(rec->cpu_phase, sizeof rec->cpu_phase) ? "~" : "", more);
        }
        snprintf(fewer, sizeof fewer, "; %lld core%s: about %s (%+.0f%%%s)", (long long)rec->cpu_fewer,
                 rec->cpu_fewer == 1 ? "" : "s", f, 100.0 * (rec->cpu_fewer_duration_secs - own) / own, phase);
    }
    int n = snprintf(buf, cap, "%lld core%s: about %s, %s%s%s", (long long)rec->cpu, rec->cpu == 1 ? "" : "s", a, how,
                     money, fewer);
    return n < 0 ? 0 : (size_t)n;
}
