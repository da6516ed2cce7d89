/* record.c - one sample reduced to the flat figures the analysis uses (rt_record): what the
 * statistics and the report take, whether the sample was just taken or read back from a file;
 * the null record, and a caller's record read at the caller's size (record.h). The figures that
 * are one member of the sample are copied as record_fields.c's rows say; the code here makes the
 * rest (sums over the devices, the group's or the machine's pressure, the energy by its method). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "../core/core.h"
#include "../core/methods.h"
#include "../core/schema.h"
#include "record.h"
#include "record_fields.h"

static double u64_or_nan(uint64_t v)
{
    return v == RT_NULL_U64 ? NAN : (double)v;
}

static void machine_part(const rt_sample *s, rt_record *r)
{
    const rt_cpu *c = s->cpu;
    r->cpu_cores = c ? c->utilization_pct : NAN;
    r->cpu_count = c && c->core_count ? (double)c->core_count : NAN;
    r->memory_used_mib = s->memory ? s->memory->used_mib : NAN;
    r->memory_total_mib = s->memory ? s->memory->total_mib : NAN;
    /* as in the CSV: with no disk or interface nothing was moved, a true zero */
    r->disk_read_bytes = r->disk_write_bytes = r->net_recv_bytes = r->net_sent_bytes = 0;
    for (size_t i = 0; i < s->disk_count; i++)
        if (s->disk[i]->read_bytes != RT_NULL_U64 && !s->disk[i]->is_virtual) { /* each byte once */
            r->disk_read_bytes += (double)s->disk[i]->read_bytes;
            r->disk_write_bytes += (double)s->disk[i]->write_bytes;
        }
    for (size_t i = 0; i < s->network_count; i++) {
        r->net_recv_bytes += (double)s->network[i]->rx_bytes;
        r->net_sent_bytes += (double)s->network[i]->tx_bytes;
    }
    r->disk_space_total_bytes = u64_or_nan(s->disk_space_total_bytes);
    r->disk_space_used_bytes = u64_or_nan(s->disk_space_used_bytes);
    r->gpu_count = (double)s->gpu_count;
    bool known = s->gpu_count == 0;
    for (size_t i = 0; i < s->gpu_count; i++)
        known |= !isnan(s->gpu[i]->utilization_pct);
    /* as in the CSV: no GPU is a true zero; GPUs none of which reports are null */
    r->gpu_usage = r->gpu_vram_mib = r->gpu_vram_total_mib = s->gpu_count ? NAN : 0;
    r->gpu_utilized = 0;
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (!isnan(g->utilization_pct)) {
            r->gpu_usage = rt_add_known(r->gpu_usage, g->utilization_pct / 100.0);
            r->gpu_utilized += g->utilization_pct > 0;
        }
        r->gpu_vram_mib = rt_add_known(r->gpu_vram_mib, u64_or_nan(g->vram_used_bytes) / 1048576.0);
        r->gpu_vram_total_mib = rt_add_known(r->gpu_vram_total_mib, u64_or_nan(g->vram_total_bytes) / 1048576.0);
    }
    if (!known)
        r->gpu_utilized = NAN;
}

/* The rows of the table that are a member of the tree, of its group g (the tree's, else the
 * tracker's own) or of a part of its split, each converted by its type's rule (NaN where the sample
 * lacks the struct: no tree, no group, a caller's pre-0.8 sample without the split). */
static void copied_part(const rt_process *p, const rt_cgroup *g, rt_record *r)
{
    const char *const base[] = {
        [RT_RF_MADE] = NULL,
        [RT_RF_PROCESS] = (const char *)p,
        [RT_RF_GROUP] = (const char *)g,
        [RT_RF_MAIN] = p ? (const char *)p->main : NULL,
        [RT_RF_DESCENDANTS] = p ? (const char *)p->descendants : NULL,
        [RT_RF_COMBINED] = p ? (const char *)p->combined : NULL,
    };
    for (size_t i = 0; i < rt_record_field_count; i++) {
        const rt_record_field *f = &rt_record_fields[i];
        if (f->from == RT_RF_MADE)
            continue;
        const char *b = base[f->from];
        double v = b ? rt_schema_num(f->src_type, b + f->src_off) : NAN;
        rt_record_set(r, f, f->div != 0 ? v / f->div : v);
    }
    r->process_cpu_secs = p ? p->utime_secs + p->stime_secs : NAN;
}

/* The 0.6 figures: the group's limits and totals (the tree's group, else without one the
 * group the tracker itself runs in, sample->cgroup; NaN without either: the table's GROUP rows,
 * with the tree's own and its split's), and per resource the
 * pressure of the tree's group when it has pressure (its some_pct or some_avg10 is known: the
 * first reading has no some_pct yet), else the machine's (NaN without either). */
static void cgroup_part(const rt_sample *s, rt_record *r)
{
    const rt_process *p = s->process;
    const rt_cgroup *tree_g = p ? p->cgroup : NULL, *g = tree_g ? tree_g : s->cgroup;
    copied_part(p, g, r);
    /* NaN without a cgroup (as the header has it; a caller's sample from before 0.6 leaves 0) */
    r->process_memory_peak_mib = tree_g ? p->memory_peak_mib : NAN;
    /* like the peak charge, the group's unreclaimable peak is the job's only when the group
     * holds nothing else */
    bool whole = tree_g && (tree_g->own || tree_g->exclusive);
    r->process_unreclaimable_peak_mib = whole ? tree_g->memory_unreclaimable_peak_mib : NAN;
    r->process_unreclaimable_unsure_mib = whole ? tree_g->memory_unreclaimable_unsure_mib : NAN;
    r->process_cgroup_exclusive = tree_g ? (whole ? 1 : 0) : NAN;
    const rt_pressure *group[3] = {NULL, NULL, NULL}, *machine[3] = {NULL, NULL, NULL};
    if (tree_g) {
        group[0] = &tree_g->pressure.cpu;
        group[1] = &tree_g->pressure.memory;
        group[2] = &tree_g->pressure.io;
    }
    if (s->pressure) {
        machine[0] = &s->pressure->cpu;
        machine[1] = &s->pressure->memory;
        machine[2] = &s->pressure->io;
    }
    double *const some[3] = {&r->pressure_cpu_some_pct, &r->pressure_memory_some_pct, &r->pressure_io_some_pct};
    double *const full[3] = {NULL, &r->pressure_memory_full_pct, &r->pressure_io_full_pct};
    bool any = false, all_group = true;
    for (size_t i = 0; i < 3; i++) {
        const rt_pressure *src = group[i] && (!isnan(group[i]->some_pct) || !isnan(group[i]->some_avg10)) ? group[i] : machine[i];
        *some[i] = src ? src->some_pct : NAN;
        if (full[i])
            *full[i] = src ? src->full_pct : NAN;
        if (src && !isnan(src->some_pct)) {
            any = true;
            all_group = all_group && src == group[i];
        }
    }
    r->pressure_group = any ? (all_group ? 1 : 0) : NAN;
}

/* The 0.15 figures: the sample's energy (a figure only with its method), and the GPUs' throttle
 * seconds summed over those that report them (NaN when none does). */
static void energy_part(const rt_sample *s, rt_record *r)
{
    const rt_energy *e = s->energy;
    r->energy = e;
    r->energy_method = e ? rt_energy_method_static(e->method) : NULL;
    r->process_energy_method = e ? rt_energy_method_static(e->process_method) : NULL;
    r->energy_joules = r->energy_method ? e->energy_joules : NAN;
    r->process_energy_joules = r->process_energy_method ? e->process_energy_joules : NAN;
    r->idle_power_watts = e ? e->idle_power_watts : NAN;
    r->gpu_power_throttled_secs = r->gpu_thermal_throttled_secs = NAN;
    for (size_t i = 0; i < s->gpu_count; i++) {
        r->gpu_power_throttled_secs = rt_add_known(r->gpu_power_throttled_secs, s->gpu[i]->power_throttled_secs);
        r->gpu_thermal_throttled_secs = rt_add_known(r->gpu_thermal_throttled_secs, s->gpu[i]->thermal_throttled_secs);
    }
}

/* The record's GPU work figures, in the order rt_record_set_gpu_work takes them: the members of
 * rt_gpu_work they are made of (pcie and nvlink: the two directions summed). */
static const struct {
    size_t off, off2; /* off2: a second member added to the first; SIZE_MAX: none */
} work_src[RT_RECORD_NWORK] = {
    {offsetof(rt_gpu_work, sm_active_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, sm_occupancy_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, tensor_active_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, dram_active_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, fp64_active_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, fp32_active_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, fp16_active_pct), SIZE_MAX},
    {offsetof(rt_gpu_work, pcie_tx_bytes_per_sec), offsetof(rt_gpu_work, pcie_rx_bytes_per_sec)},
    {offsetof(rt_gpu_work, nvlink_tx_bytes_per_sec), offsetof(rt_gpu_work, nvlink_rx_bytes_per_sec)},
};

#define WORK(w, off) (*(const double *)(const void *)((const char *)(w) + (off)))

void rt_record_work_of(const rt_gpu_work *w, double out[RT_RECORD_NWORK])
{
    for (size_t k = 0; k < RT_RECORD_NWORK; k++) {
        double v = WORK(w, work_src[k].off);
        if (work_src[k].off2 != SIZE_MAX) {
            double v2 = WORK(w, work_src[k].off2);
            v = isnan(v) ? v2 : isnan(v2) ? v : v + v2;
        }
        out[k] = v;
    }
}

void rt_record_set_gpu_work(rt_record *r, const double v[RT_RECORD_NWORK])
{
    double *const dst[RT_RECORD_NWORK] = {
        &r->gpu_sm_active_pct,   &r->gpu_sm_occupancy_pct, &r->gpu_tensor_active_pct,
        &r->gpu_dram_active_pct, &r->gpu_fp64_active_pct,  &r->gpu_fp32_active_pct,
        &r->gpu_fp16_active_pct, &r->gpu_pcie_bytes_per_sec, &r->gpu_nvlink_bytes_per_sec,
    };
    for (size_t k = 0; k < RT_RECORD_NWORK; k++)
        *dst[k] = v[k];
}

/* The 0.19 figures: the work of the tree's GPUs (its gpu_work, scope: shared or not), else
 * without a tree the mean over the machine's GPUs, each figure over those that give it. */
static void gpu_work_part(const rt_sample *s, rt_record *r)
{
    double v[RT_RECORD_NWORK];
    const rt_process *p = s->process;
    if (p) {
        rt_record_work_of(&p->gpu_work, v);
        r->gpu_work_shared = !p->gpu_work_scope ? NAN : strcmp(p->gpu_work_scope, "device") == 0 ? 1 : 0;
    } else {
        double sum[RT_RECORD_NWORK] = {0}, one[RT_RECORD_NWORK];
        unsigned n[RT_RECORD_NWORK] = {0};
        for (size_t i = 0; i < s->gpu_count; i++) {
            rt_record_work_of(&s->gpu[i]->work, one);
            for (size_t k = 0; k < RT_RECORD_NWORK; k++)
                if (!isnan(one[k])) {
                    sum[k] += one[k];
                    n[k]++;
                }
        }
        for (size_t k = 0; k < RT_RECORD_NWORK; k++)
            v[k] = n[k] ? sum[k] / n[k] : NAN;
        r->gpu_work_shared = NAN;
    }
    rt_record_set_gpu_work(r, v);
}

rt_error rt_record_from_sample_sized(const rt_sample *s, rt_record *out, size_t out_size)
{
    if (!s || !out || out_size == 0)
        return RT_ERR_INVALID;
    rt_record rec;
    rt_record_from_sample(s, &rec);
    memcpy(out, &rec, out_size < sizeof rec ? out_size : sizeof rec);
    return RT_OK;
}

void rt_record_from_sample(const rt_sample *s, rt_record *out)
{
    memset(out, 0, sizeof *out);
    out->timestamp_secs = s->timestamp_secs;
    out->interval_secs = s->interval_secs;
    out->clock_step_secs = s->clock_step_secs;
    out->sampling_gap_secs = s->sampling_gap_secs;
    out->job_name = NULL;
    machine_part(s, out);
    cgroup_part(s, out);
    out->gpu = s->gpu_count ? s->gpu : NULL;
    out->gpu_n = s->gpu_count;
    out->phases = s->phases;
    energy_part(s, out);
    gpu_work_part(s, out);
    out->request = s->request;
    out->member = s->member;
}

/* ---- the null record; a caller's record at its size ------------------------------------------- */

#define D(m) offsetof(rt_record, m)

void rt_record_null(rt_record *rec)
{
    memset(rec, 0, sizeof *rec);
    const double nan = NAN;
    for (size_t i = 0; i < rt_record_field_count; i++)
        memcpy((char *)rec + rt_record_fields[i].off, &nan, sizeof nan);
    rec->job_name = NULL;
    rec->gpu = NULL;
    rec->gpu_n = 0;
    rec->phases = NULL;
    rec->energy_method = rec->process_energy_method = NULL;
    rec->energy = NULL;
    rec->request = NULL;
    rec->member = NULL;
}

/* Whether the member at off of n bytes lies wholly within size. */
static bool within(size_t off, size_t n, size_t size)
{
    return off + n <= size;
}

const rt_record *rt_record_at_size(const rt_record *rec, size_t rec_size, rt_record *tmp)
{
    if (!rec || rec_size == 0)
        return NULL;
    if (rec_size >= sizeof *rec)
        return rec;
    rt_record_null(tmp);
    const char *src = (const char *)rec;
    for (size_t i = 0; i < rt_record_field_count; i++) {
        size_t off = rt_record_fields[i].off;
        if (within(off, sizeof(double), rec_size))
            memcpy((char *)tmp + off, src + off, sizeof(double));
    }
    /* the pointer members, each whole within the size or left null; gpu and gpu_n only together */
    static const struct {
        size_t off, n;
    } ptrs[] = {
        {D(job_name), sizeof tmp->job_name}, {D(phases), sizeof tmp->phases},
        {D(energy_method), sizeof tmp->energy_method}, {D(process_energy_method), sizeof tmp->process_energy_method},
        {D(energy), sizeof tmp->energy}, {D(request), sizeof tmp->request},
        {D(member), sizeof tmp->member},
    };
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; i++)
        if (within(ptrs[i].off, ptrs[i].n, rec_size))
            memcpy((char *)tmp + ptrs[i].off, src + ptrs[i].off, ptrs[i].n);
    if (within(D(gpu), sizeof tmp->gpu, rec_size) && within(D(gpu_n), sizeof tmp->gpu_n, rec_size)) {
        memcpy(&tmp->gpu, src + D(gpu), sizeof tmp->gpu);
        memcpy(&tmp->gpu_n, src + D(gpu_n), sizeof tmp->gpu_n);
    }
    return tmp;
}
