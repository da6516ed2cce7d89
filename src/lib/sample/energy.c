/* energy.c - the sampler's energy part (see energy.h): one domain per machine counter, per GPU
 * with an energy counter or a power reading, and the CPU estimate where no CPU counter can be
 * read; each interval their energy (counter differences, power x time, the model), the
 * machine's total, the tree's share (CPU domains by its share of the busy CPU time, GPUs by its
 * share of each GPU) and the idle floor. Allocates only at open. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/methods.h"
#include "energy.h"

#define M_MEASURED rt_energy_method_of_rank(1)
#define M_SAMPLED rt_energy_method_of_rank(2)
#define M_ESTIMATED rt_energy_method_of_rank(3)

/* Whether a domain of this kind is a part of the CPU: split by the tree's share of CPU time. */
static bool cpu_kind(const char *kind)
{
    return !strcmp(kind, "package") || !strcmp(kind, "core") || !strcmp(kind, "uncore") || !strcmp(kind, "dram") ||
           !strcmp(kind, "cpu");
}

/* Whether a domain of this kind meters the whole platform: it is then the machine's total. */
static bool platform_kind(const char *kind)
{
    return !strcmp(kind, "platform") || !strcmp(kind, "psys");
}

static void domain_init(rt_energy_domain *d, rt_energy_track *t, const char *kind, const char *source,
                        const char *method)
{
    d->name = t->name;
    d->kind = kind;
    d->source = source;
    d->method = method;
    d->device = NULL;
    d->in_total = 0;
    d->energy_joules = d->power_watts = d->process_share = d->process_energy_joules = NAN;
    d->energy_joules_total = 0;
    d->process_energy_joules_total = NAN; /* until a share is known */
    t->last_j = t->last_mono = t->prev_w = t->cur_j = t->cur_w = NAN;
}

int rt_energy_part_open(rt_energy_part *p, rt_sample_ctx *c, rt_gpu_part *g, double tdp_given)
{
    memset(p, 0, sizeof *p);
    p->on = true;
    p->idle_w = NAN;
    p->out.idle_power_watts = NAN;
    p->out.process_energy_joules_total = NAN;
    p->gpus = g->gpus;
    p->src = rt_energy_src_open(&c->roots, &c->log);
    if (!p->src)
        return -1;
    size_t ns = rt_energy_src_count(p->src);
    bool cpu_counter = false;
    for (size_t i = 0; i < ns; i++)
        if (cpu_kind(rt_energy_src_counter(p->src, i)->kind))
            cpu_counter = true;
    p->estimate = !cpu_counter;
    if (p->estimate)
        rt_cpu_power_model(&c->roots, tdp_given, &p->model);
    p->src_j = calloc(ns ? ns : 1, sizeof *p->src_j);
    p->src_w = calloc(ns ? ns : 1, sizeof *p->src_w);
    if (!p->src_j || !p->src_w)
        return -1;
    for (size_t i = 0; i < ns; i++)
        p->src_j[i] = p->src_w[i] = NAN;
    p->out.missing = rt_energy_src_missing(p->src);
    return 0;
}

/* The domains, made at the first reading (the baseline, within rt_sampler_new), when the GPUs
 * have been read once: the source's counters, each GPU with an energy counter or a power
 * reading, and the estimate. Returns 0, or -1 on no memory (the part is then off). */
static int build(rt_energy_part *p, const rt_gpu_part *g)
{
    size_t ns = rt_energy_src_count(p->src), ng = g->count;
    size_t cap = ns + ng + 1;
    p->track = calloc(cap, sizeof *p->track);
    p->dom = calloc(cap, sizeof *p->dom);
    p->ptrs = calloc(cap, sizeof *p->ptrs);
    if (!p->track || !p->dom || !p->ptrs)
        return -1;
    for (size_t i = 0; i < ns; i++) {
        const rt_energy_counter *k = rt_energy_src_counter(p->src, i);
        rt_energy_track *t = &p->track[p->n];
        t->src = (int)i;
        t->gpu = -1;
        t->counter = !strcmp(k->method, M_MEASURED);
        snprintf(t->name, sizeof t->name, "%s", k->name);
        domain_init(&p->dom[p->n], t, k->kind, k->source, t->counter ? M_MEASURED : M_SAMPLED);
        p->n++;
    }
    /* a GPU is a domain when it has an energy counter or a power reading at the first reading */
    for (size_t i = 0; i < ng; i++) {
        double j;
        const rt_gpu *gpu = g->ptrs[i];
        bool counter = p->gpus && rt_gpus_energy(p->gpus, i, &j) > 0;
        if (!counter && isnan(gpu->power_watts))
            continue;
        rt_energy_track *t = &p->track[p->n];
        t->src = -1;
        t->gpu = (int)i;
        t->counter = counter;
        snprintf(t->name, sizeof t->name, "gpu-%zu", i);
        const char *source = "hwmon";
        for (size_t k = 0; k < gpu->detail_count; k++)
            if (!strcmp(gpu->detail[k].key, "driver") && gpu->detail[k].value &&
                !strncmp(gpu->detail[k].value, "nvidia", 6))
                source = "nvml";
        if (gpu->uuid && !strncmp(gpu->uuid, "GPU-", 4))
            source = "nvml";
        domain_init(&p->dom[p->n], t, "gpu", source, counter ? M_MEASURED : M_SAMPLED);
        p->dom[p->n].device = gpu->uuid ? gpu->uuid : gpu->host_id;
        p->n++;
    }
    if (p->estimate) {
        rt_energy_track *t = &p->track[p->n];
        t->src = t->gpu = -1;
        snprintf(t->name, sizeof t->name, "cpu");
        domain_init(&p->dom[p->n], t, "cpu", "model", M_ESTIMATED);
        p->n++;
        p->out.model = p->model.words;
    }
    /* the machine's total: a platform meter where there is one (hwmon's, at the wall, before
     * RAPL's psys), else the CPU and GPU domains, each package once */
    int platform = -1;
    for (size_t i = 0; i < p->n; i++)
        if (platform_kind(p->dom[i].kind) &&
            (platform < 0 || (strcmp(p->dom[platform].kind, "platform") && !strcmp(p->dom[i].kind, "platform"))))
            platform = (int)i;
    for (size_t i = 0; i < p->n; i++) {
        rt_energy_track *t = &p->track[i];
        t->part = t->src >= 0 ? rt_energy_src_counter(p->src, (size_t)t->src)->in_total : true;
        p->dom[i].in_total = platform >= 0 ? (int)i == platform : t->part;
        p->ptrs[i] = &p->dom[i];
    }
    p->out.domain = p->ptrs;
    p->out.domain_count = p->n;
    p->built = true;
    return 0;
}

void rt_energy_part_snapshot(rt_energy_part *p, double mono)
{
    if (!p->on)
        return;
    p->mono = mono;
    if (rt_energy_src_count(p->src))
        rt_energy_src_read(p->src, p->src_j, p->src_w);
}

/* The energy of a counter domain since its last good reading, and the seconds it covers; the
 * reading becomes the last good one. NaN when this reading or the first is missing. */
static double counter_delta(rt_energy_track *t, double mono, double *secs)
{
    double e = NAN;
    *secs = NAN;
    if (isnan(t->cur_j))
        return NAN;
    if (!isnan(t->last_j)) {
        e = t->cur_j - t->last_j;
        if (e < 0) /* the source undoes wrap-around: a counter that went back was reset */
            e = NAN;
        *secs = mono - t->last_mono;
    }
    t->last_j = t->cur_j;
    t->last_mono = mono;
    return e;
}

/* The energy of a power domain over elapsed seconds: the mean of the interval's two readings,
 * or this one alone after a missing one. */
static double power_delta(rt_energy_track *t, double elapsed)
{
    double w = t->cur_w, e = NAN;
    if (!isnan(w) && elapsed > 0)
        e = (isnan(t->prev_w) ? w : (w + t->prev_w) / 2) * elapsed;
    t->prev_w = w;
    return e;
}

/* The tree's share of a GPU counter domain's energy this reading: between two readings of the
 * counter (its energy estimated) the interval's own; at a reading, whose energy settles the
 * estimates of the stretch since the last one, the time-weighted share over the stretch's
 * estimated intervals (the job's GPU energy stays its own when the job ended in the interval
 * of the reading), this interval's own without any. */
static double stretch_share(rt_energy_track *t, double share, double elapsed)
{
    if (!t->read_now) {
        if (elapsed > 0 && !isnan(share)) {
            t->stretch_secs += elapsed;
            t->stretch_share_secs += share * elapsed;
        }
        return share;
    }
    double s = t->stretch_secs > 0 ? t->stretch_share_secs / t->stretch_secs : share;
    t->stretch_secs = t->stretch_share_secs = 0;
    return s;
}

const rt_energy *rt_energy_part_delta(rt_energy_part *p, double elapsed, const rt_cpu *cpu, const rt_gpu_part *g,
                                      const rt_process *proc)
{
    if (!p->on)
        return NULL;
    if (!p->built && build(p, g) < 0) {
        p->on = false;
        return NULL;
    }
    /* the machine's busy cores in the interval; in one where no core ticked (/proc/stat moves
     * at the tick: a first sample of a few milliseconds, a short job's only one, under load)
     * at least the tree's, which its own clocks measured */
    double busy_now = cpu ? cpu->utilization_pct : NAN;
    if (cpu && isnan(busy_now) && proc && proc->cores_used >= 0)
        busy_now = cpu->core_count > 0 ? fmin(proc->cores_used, (double)cpu->core_count) : proc->cores_used;
    /* the tree's share of the machine's busy CPU time in the interval */
    double cpu_share = NAN;
    if (proc) {
        double busy = busy_now, mine = proc->cores_used;
        if (!isnan(busy) && !isnan(mine))
            cpu_share = busy > 0 ? fmin(1.0, fmax(0.0, mine / busy)) : 0.0;
    }
    rt_energy *o = &p->out;
    int rank = 0, prank = 0;
    double total = 0, ptotal = 0, floor_w = 0; /* floor_w: this interval's machine power, the
                                                * estimate's part at the model's idle */
    double watts = 0, pwatts = 0; /* the domains' own powers summed: a catch-up after a failed
                                   * read spans more than this interval */
    bool any = false, pany = false, whole = elapsed > 0; /* whole: every summed domain read over
                                                          * just this interval */
    for (size_t i = 0; i < p->n; i++) {
        rt_energy_track *t = &p->track[i];
        rt_energy_domain *d = &p->dom[i];
        double e = NAN, secs = elapsed;
        if (t->src >= 0) {
            t->cur_j = p->src_j[t->src];
            t->cur_w = p->src_w[t->src];
            e = t->counter ? counter_delta(t, p->mono, &secs) : power_delta(t, elapsed);
        } else if (t->gpu >= 0) {
            double j;
            int got = p->gpus && (size_t)t->gpu < g->count ? rt_gpus_energy(p->gpus, (size_t)t->gpu, &j) : 0;
            bool have = got > 0;
            t->read_now = got == 1;
            if (t->counter) {
                t->cur_j = have ? j : NAN;
                e = counter_delta(t, p->mono, &secs);
            } else {
                t->cur_w = (size_t)t->gpu < g->count ? g->ptrs[t->gpu]->power_watts : NAN;
                e = power_delta(t, elapsed);
            }
        } else if (cpu && elapsed > 0) { /* the estimate */
            e = rt_cpu_power_watts(&p->model, busy_now, (double)cpu->core_count) * elapsed;
        }
        d->energy_joules = e;
        d->power_watts = !isnan(e) && secs > 0 ? e / secs : NAN;
        if (!isnan(e))
            d->energy_joules_total += e;
        /* the tree's part */
        double share = NAN;
        if (proc) {
            if (cpu_kind(d->kind))
                share = cpu_share;
            else if (t->gpu >= 0)
                share = p->gpus ? rt_gpus_tree_share(p->gpus, (size_t)t->gpu) : NAN;
        }
        if (t->gpu >= 0 && t->counter)
            share = stretch_share(t, share, elapsed);
        d->process_share = share;
        d->process_energy_joules = !isnan(share) && !isnan(e) ? share * e : NAN;
        if (!isnan(d->process_energy_joules)) {
            d->process_energy_joules_total = d->process_energy_joules +
                                             (isnan(d->process_energy_joules_total) ? 0 : d->process_energy_joules_total);
            if (t->part) { /* a core or uncore part is inside its package: counted there */
                ptotal += d->process_energy_joules;
                pwatts += share * d->power_watts;
                pany = true;
                if (rt_energy_method_rank(d->method) > prank)
                    prank = rt_energy_method_rank(d->method);
            }
        }
        if (d->in_total && (isnan(e) || fabs(secs - elapsed) > 1e-6))
            whole = false;
        if (d->in_total && !isnan(e)) {
            floor_w += t->src < 0 && t->gpu < 0 ? rt_cpu_power_watts(&p->model, 0, (double)cpu->core_count)
                                                : e / elapsed;
            total += e;
            watts += d->power_watts;
            any = true;
            if (rt_energy_method_rank(d->method) > rank)
                rank = rt_energy_method_rank(d->method);
        }
    }
    o->energy_joules = any ? total : NAN;
    if (any)
        o->energy_joules_total += total;
    o->power_watts = any && elapsed > 0 ? watts : NAN;
    o->method = rt_energy_method_of_rank(rank);
    if (proc) {
        o->process_energy_joules = pany ? ptotal : NAN;
        if (pany)
            o->process_energy_joules_total = ptotal + (isnan(o->process_energy_joules_total) ? 0 : o->process_energy_joules_total);
        o->process_power_watts = pany && elapsed > 0 ? pwatts : NAN;
        o->process_method = rt_energy_method_of_rank(prank);
    } else {
        o->process_energy_joules = o->process_power_watts = NAN;
        o->process_method = NULL;
    }
    /* the floor from whole intervals only: a failed read or the catch-up after it is not one */
    if (whole && any && !isnan(floor_w) && (isnan(p->idle_w) || floor_w < p->idle_w))
        p->idle_w = floor_w;
    o->idle_power_watts = p->idle_w;
    return o;
}

void rt_energy_part_close(rt_energy_part *p)
{
    rt_energy_src_close(p->src);
    rt_free_all(p->track, p->dom, p->ptrs, p->src_j, p->src_w);
    memset(p, 0, sizeof *p);
}
