/* usage.c - gpu_tracker's view of a run (see usage.h): per record, the machine's and the parts'
 * (main, descendants, combined) RAM and GPU RAM, the sum of core percentages (100 per busy
 * core) and its hardware share (divided by the expected cores; the machine's by all of its
 * cores), the chosen GPUs' summed utilization and its share of them, and thread counts; kept
 * as peaks and means weighted by the seconds each record covers. No allocation per record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "usage.h"

static void mm_add(rt_meanmax *m, double v, double w)
{
    if (isnan(v))
        return;
    m->wsum += v * w;
    m->w += w;
    if (isnan(m->max) || v > m->max)
        m->max = v;
}

/* mm_add for a rate over the record's interval: the peak is of folded intervals (fold.h) */
static void mm_add_rate(rt_meanmax *m, double v, double w)
{
    if (isnan(v))
        return;
    m->wsum += v * w;
    m->w += w;
    double rx, rw;
    if (rt_fold_add(&m->held, v, w, &rx, &rw) && (isnan(m->max) || rx > m->max))
        m->max = rx;
}

/* The peak, the value held included. */
static double mm_max(const rt_meanmax *m)
{
    return m->held.w > 0 && (isnan(m->max) || m->held.x > m->max) ? m->held.x : m->max;
}

static double mm_mean(const rt_meanmax *m)
{
    return m->w > 0 ? m->wsum / m->w : NAN;
}

static void mm_reset(rt_meanmax *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m[i] = (rt_meanmax){.wsum = 0, .w = 0, .max = NAN};
}

/* *acc = max(*acc, v) where NaN is "none". */
static void keep_max(double *acc, double v)
{
    if (!isnan(v) && (isnan(*acc) || v > *acc))
        *acc = v;
}

void rt_usage_init(rt_usage_acc *a)
{
    memset(a, 0, sizeof *a);
    mm_reset(&a->ram_system, 1);
    mm_reset(&a->ram[0][0], 9);
    mm_reset(&a->gpu_ram_system, 1);
    mm_reset(a->gpu_ram, 3);
    mm_reset(a->cpu_system, 2);
    mm_reset(&a->cpu[0][0], 6);
    mm_reset(a->gpu, 2);
    mm_reset(a->threads, 3);
    a->out.ram_capacity_mib = a->out.gpu_ram_capacity_mib = NAN;
    a->out.system_core_count = a->out.system_gpu_count = NAN;
}

static void free_uuids(char **u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(u[i]);
    free(u);
}

int rt_usage_configure(rt_usage_acc *a, double expected_cores, const char *const *uuids, size_t n)
{
    char **copy = NULL;
    size_t k = 0; /* distinct uuids: one named twice is one GPU */
    if (n) {
        copy = calloc(n, sizeof *copy);
        if (!copy)
            return -1;
        for (size_t i = 0; i < n; i++) {
            const char *u = uuids[i] ? uuids[i] : "";
            bool seen = false;
            for (size_t j = 0; j < k && !seen; j++)
                seen = strcmp(copy[j], u) == 0;
            if (!seen && !(copy[k++] = rt_strdup(u))) {
                free_uuids(copy, k);
                return -1;
            }
        }
    }
    free_uuids(a->uuids, a->nuuids);
    a->uuids = copy;
    a->nuuids = k;
    a->expected_cores = expected_cores;
    return 0;
}

/* Whether GPU uuid is one of those chosen (all are when none were). */
static bool chosen(const rt_usage_acc *a, const char *uuid)
{
    if (!a->nuuids)
        return true;
    for (size_t i = 0; i < a->nuuids && uuid; i++)
        if (strcmp(a->uuids[i], uuid) == 0)
            return true;
    return false;
}

/* The record's summed utilization of the chosen GPUs (percent) into *sum and how many they
 * are into *n: with none chosen, from its total over every GPU (as a tracker's kept row has
 * it, so that a run saved and loaded again gives the same figures); else from its per-GPU
 * list. NaN when it cannot tell. Without GPUs: 0 of 0. */
static void gpu_sum(const rt_usage_acc *a, const rt_record *r, double *sum, double *n)
{
    *sum = NAN;
    *n = NAN;
    if (a->nuuids && r->gpu && r->gpu_n) {
        double s = NAN, k = 0;
        for (size_t i = 0; i < r->gpu_n; i++) {
            if (!chosen(a, r->gpu[i]->uuid))
                continue;
            k++;
            if (!isnan(r->gpu[i]->utilization_pct))
                s = isnan(s) ? r->gpu[i]->utilization_pct : s + r->gpu[i]->utilization_pct;
        }
        *sum = s;
        *n = a->nuuids ? (double)a->nuuids : k;
    } else if (r->gpu_count == 0) {
        *sum = 0;
        *n = a->nuuids ? (double)a->nuuids : 0;
    } else if (!a->nuuids) {
        *sum = r->gpu_usage * 100.0;
        *n = r->gpu_count;
    }
}

void rt_usage_add(rt_usage_acc *a, const rt_record *r, double w)
{
    rt_usage *o = &a->out;
    a->added++;
    o->duration_secs += w;
    keep_max(&o->ram_capacity_mib, r->memory_total_mib);
    keep_max(&o->gpu_ram_capacity_mib, r->gpu_vram_total_mib);
    keep_max(&o->system_core_count, r->cpu_count);
    keep_max(&o->system_gpu_count, r->gpu_count);
    mm_add(&a->ram_system, r->memory_used_mib, w);
    mm_add(&a->gpu_ram_system, r->gpu_vram_mib, w);
    const rt_record_part *part[3] = {&r->main, &r->descendants, &r->combined};
    double den = a->expected_cores > 0 ? a->expected_cores : r->cpu_count;
    for (int i = 0; i < 3; i++) {
        mm_add(&a->ram[i][0], part[i]->total_rss_mib, w);
        mm_add(&a->ram[i][1], part[i]->private_rss_mib, w);
        mm_add(&a->ram[i][2], part[i]->shared_rss_mib, w);
        mm_add(&a->gpu_ram[i], part[i]->gpu_vram_mib, w);
        double sum = part[i]->cores * 100.0;
        mm_add_rate(&a->cpu[i][0], sum, w);
        mm_add_rate(&a->cpu[i][1], den > 0 ? sum / den : NAN, w);
        mm_add(&a->threads[i], part[i]->threads, w);
    }
    double sys = r->cpu_cores * 100.0;
    mm_add_rate(&a->cpu_system[0], sys, w);
    mm_add_rate(&a->cpu_system[1], r->cpu_count > 0 ? sys / r->cpu_count : NAN, w);
    double gsum, gn;
    gpu_sum(a, r, &gsum, &gn);
    mm_add(&a->gpu[0], gsum, w);
    mm_add(&a->gpu[1], gn > 0 ? gsum / gn : gn == 0 ? 0.0 : NAN, w);
}

static void pct_out(rt_usage_pct *p, const rt_meanmax m[2])
{
    p->max_sum_pct = mm_max(&m[0]);
    p->mean_sum_pct = mm_mean(&m[0]);
    p->max_hardware_pct = mm_max(&m[1]);
    p->mean_hardware_pct = mm_mean(&m[1]);
}

const rt_usage *rt_usage_result(rt_usage_acc *a)
{
    rt_usage *o = &a->out;
    o->ram_system_peak_mib = a->ram_system.max;
    o->ram_system_mean_mib = mm_mean(&a->ram_system);
    o->gpu_ram_system_peak_mib = a->gpu_ram_system.max;
    o->gpu_ram_system_mean_mib = mm_mean(&a->gpu_ram_system);
    for (int i = 0; i < 3; i++) {
        o->ram_peak[i] = (rt_usage_rss){a->ram[i][0].max, a->ram[i][1].max, a->ram[i][2].max};
        o->ram_mean[i] = (rt_usage_rss){mm_mean(&a->ram[i][0]), mm_mean(&a->ram[i][1]), mm_mean(&a->ram[i][2])};
        o->gpu_ram_peak_mib[i] = a->gpu_ram[i].max;
        o->gpu_ram_mean_mib[i] = mm_mean(&a->gpu_ram[i]);
        pct_out(&o->cpu[i], a->cpu[i]);
        o->threads_peak[i] = a->threads[i].max;
    }
    pct_out(&o->cpu_system, a->cpu_system);
    pct_out(&o->gpu, a->gpu);
    o->expected_cores = a->expected_cores > 0 ? a->expected_cores : o->system_core_count;
    o->expected_gpus = a->nuuids ? (double)a->nuuids : isnan(o->system_gpu_count) ? 0 : o->system_gpu_count;
    return o;
}

void rt_usage_free(rt_usage_acc *a)
{
    free_uuids(a->uuids, a->nuuids);
    a->uuids = NULL;
    a->nuuids = 0;
}
