/* report.c - collects a run's records for the report's charts in constant memory: time
 * buckets holding, per series, a time-weighted mean and the min and max of what they stand
 * for; past RPT_CAP buckets, neighbours merge pairwise (so a one-second spike survives as a max).
 * And the cgroup's marks: OOM kills, stretches of CPU throttling, the memory limit and quota;
 * the job's phases: a span per call (bounded: past the cap a name's spans merge pairwise); and
 * the parts of the energy the power chart draws one line each. */
#define _GNU_SOURCE /* strdup */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "../phase/phase.h"
#include "energy_words.h"
#include "fold.h"
#include "record.h"
#include "report_int.h"

static void bucket_init(rpt_bucket *b, double t0, double t1, bool gap)
{
    b->t0 = t0;
    b->t1 = t1;
    b->gap = gap;
    for (size_t k = 0; k < RPT_SERIES; k++) {
        b->c[k].sum = b->c[k].weight = 0;
        b->c[k].min = INFINITY;
        b->c[k].max = -INFINITY;
    }
}

rt_report *rt_report_new(void)
{
    rt_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->b = malloc(RPT_CAP * sizeof *r->b);
    if (!r->b) {
        free(r);
        return NULL;
    }
    r->oom_prev = r->thr_prev = r->mem_limit = r->cpu_quota = r->work_shared = NAN;
    return r;
}

rt_error rt_report_new_with(const rt_report_options *opts, rt_report **out)
{
    rt_err_clear();
    if (out)
        *out = NULL;
    rt_report_options o = RT_REPORT_OPTIONS_INIT;
    if (!out || rt_struct_copy(&o, sizeof o, opts) < 0) {
        rt_err_set("rt_report_new_with: %s", !out ? "out is NULL" : "rt_report_options.struct_size is too small");
        return RT_ERR_INVALID;
    }
    *out = rt_report_new();
    return *out ? RT_OK : RT_ERR_NOMEM;
}

void rt_report_free(rt_report *r)
{
    if (!r)
        return;
    if (r->ph)
        for (size_t i = 0; i < r->ph->n_names; i++)
            free(r->ph->names[i]);
    free(r->ph);
    free(r->b);
    free(r);
}

void rpt_bucket_merge(rpt_bucket *dst, const rpt_bucket *src)
{
    if (src->t1 > dst->t1)
        dst->t1 = src->t1;
    for (size_t k = 0; k < RPT_SERIES; k++) {
        rpt_cell *d = &dst->c[k];
        const rpt_cell *s = &src->c[k];
        d->sum += s->sum;
        d->weight += s->weight;
        d->min = fminf(d->min, s->min);
        d->max = fmaxf(d->max, s->max);
    }
}

/* Halves the bucket count: bucket 2i+1 folds into 2i, except across a gap (the pass that
 * honours gaps is repeated without them when gaps keep the count too high), and widens the
 * buckets to match. */
static void compact(rt_report *r)
{
    for (int pass = 0; pass < 2 && r->n > RPT_CAP * 3 / 4; pass++) {
        size_t out = 0;
        for (size_t i = 0; i < r->n; i++) {
            if (out > 0 && (i % 2 == 1) && (pass == 1 || !r->b[i].gap)) {
                rpt_bucket_merge(&r->b[out - 1], &r->b[i]);
                continue;
            }
            if (out != i)
                r->b[out] = r->b[i];
            out++;
        }
        r->n = out;
    }
    double span = r->b[r->n - 1].t1 - r->b[0].t0;
    double w = span / (RPT_CAP / 2.0);
    r->width = fmax(2 * r->width, isfinite(w) ? w : 0);
}

/* value / seconds, NaN when either is unknown */
static double rate(double v, double secs)
{
    return isnan(secs) ? NAN : v / secs;
}

/* How much a counter since tracking began rose in a record: v - *prev, or v itself at the
 * first record or when it went back (a new run in the file). *prev becomes v. 0 for NaN. */
static double counter_rise(double v, double *prev)
{
    if (isnan(v))
        return 0;
    double p = *prev;
    *prev = v;
    return isnan(p) || v < p ? v : v - p;
}

/* Adds the throttled stretch [t0, t1]: joined to the last one when it starts within slack of
 * its end; past RPT_STRETCHES, the two stretches closest in time merge first. */
static void add_stretch(rt_report *r, double t0, double t1, double slack)
{
    if (r->n_thr > 0) {
        rpt_span *last = &r->thr[r->n_thr - 1];
        if (t0 >= last->t0 && t0 <= last->t1 + slack) {
            last->t1 = fmax(last->t1, t1);
            return;
        }
    }
    if (r->n_thr == RPT_STRETCHES) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < r->n_thr; i++)
            if (r->thr[i + 1].t0 - r->thr[i].t1 < r->thr[best + 1].t0 - r->thr[best].t1)
                best = i;
        r->thr[best].t1 = fmax(r->thr[best].t1, r->thr[best + 1].t1);
        memmove(&r->thr[best + 1], &r->thr[best + 2], (r->n_thr - best - 2) * sizeof r->thr[0]);
        r->n_thr--;
    }
    r->thr[r->n_thr++] = (rpt_span){t0, t1};
}

/* The record's cgroup marks: an OOM kill when its count rose, a throttled stretch over its
 * interval when the throttled periods rose, the lowest memory limit and CPU quota. */
static void add_marks(rt_report *r, const rt_record *rec, double t0, double t1, double weight)
{
    double kills = counter_rise(rec->cgroup_oom_kills, &r->oom_prev);
    if (kills > 0 && r->n_oom < RPT_MARKS)
        r->oom[r->n_oom++] = (rpt_mark){t1, kills};
    if (counter_rise(rec->cgroup_cpu_throttled_periods, &r->thr_prev) > 0)
        add_stretch(r, t0 < t1 ? t0 : t1 - weight, t1, 0.5 * weight);
    if (rec->cgroup_memory_limit_mib > 0) /* a line at 0 would be no limit anyone set */
        rt_min_known(&r->mem_limit, rec->cgroup_memory_limit_mib);
    if (rec->cgroup_cpu_quota_cores > 0)
        rt_min_known(&r->cpu_quota, rec->cgroup_cpu_quota_cores);
}

/* ---- the phases' bands ---- */

/* The name's index (kept when new); RPT_PHASE_NAMES past the cap ("other"). */
static uint16_t phase_name(rpt_phases *p, const char *name)
{
    for (size_t i = 0; i < p->n_names; i++)
        if (strcmp(p->names[i], name) == 0)
            return (uint16_t)i;
    if (p->n_names < RPT_PHASE_NAMES && (p->names[p->n_names] = strdup(name)))
        return (uint16_t)p->n_names++;
    p->other = true;
    return RPT_PHASE_NAMES;
}

/* Past the cap: each name's spans merge pairwise (in the order kept), so about half remain. */
static void phase_compact(rpt_phases *p)
{
    long last[RPT_PHASE_NAMES + 1];
    for (size_t i = 0; i <= RPT_PHASE_NAMES; i++)
        last[i] = -1;
    size_t k = 0;
    for (size_t i = 0; i < p->n_spans; i++) {
        rpt_pspan s = p->spans[i];
        long j = last[s.name];
        if (j >= 0) {
            rpt_pspan *d = &p->spans[j];
            d->t0 = fmin(d->t0, s.t0);
            d->t1 = fmax(d->t1, s.t1);
            d->count += s.count;
            if (s.depth < d->depth)
                d->depth = s.depth;
            last[s.name] = -1;
            continue;
        }
        p->spans[k] = s;
        last[s.name] = (long)k++;
    }
    p->n_spans = k;
}

static void add_phases(rt_report *r, const rt_phases *ph, double t1)
{
    if (!r->ph && !(r->ph = calloc(1, sizeof *r->ph)))
        return;
    rpt_phases *p = r->ph;
    for (size_t i = 0; i < ph->mark_count; i++) {
        const rt_phase_mark *m = ph->marks[i];
        if (!m->name || !(fabs(m->timestamp_secs) <= RPT_MAX_SECS))
            continue;
        uint32_t h = rt_phase_name_hash(m->name);
        if (m->kind == RT_PHASE_START) {
            if (p->n_open < RPT_PHASE_OPEN) {
                uint16_t depth = (uint16_t)p->n_open;
                p->open[p->n_open++] = (rpt_popen){m->timestamp_secs, h, phase_name(p, m->name), depth};
            }
            continue;
        }
        size_t j = p->n_open; /* the latest open call of this name (names past the cap: by hash) */
        while (j > 0 && (p->open[j - 1].hash != h ||
                         (p->open[j - 1].name < RPT_PHASE_NAMES && strcmp(p->names[p->open[j - 1].name], m->name) != 0)))
            j--;
        if (j == 0)
            continue;
        rpt_popen o = p->open[j - 1];
        memmove(&p->open[j - 1], &p->open[j], (p->n_open - j) * sizeof o);
        p->n_open--;
        if (p->n_spans == RPT_PHASE_SPANS)
            phase_compact(p);
        p->spans[p->n_spans++] = (rpt_pspan){o.t0, fmax(o.t0, m->timestamp_secs), o.name, o.depth, 1};
    }
    p->last_t = t1;
}

static const char *const method_words[] = {NULL, "measured", "sampled", "estimated"};

const char *rpt_method_word(int rank)
{
    return rank > 0 && rank < (int)RT_ARRAY_LEN(method_words) ? method_words[rank] : NULL;
}

/* The rank of a method word (0: none or unknown) */
static int method_rank(const char *m)
{
    for (int i = 1; m && i < (int)RT_ARRAY_LEN(method_words); i++)
        if (strcmp(m, method_words[i]) == 0)
            return i;
    return 0;
}

/* A record's energy as power over its interval (NaN without its method: a figure without one
 * is absent); the least exact method kept. */
static double power_of(rt_report *r, double joules, const char *method, double iv)
{
    int rank = method_rank(method);
    if (!rank || isnan(iv) || !isfinite(joules))
        return NAN;
    if (rank > r->power_method)
        r->power_method = rank;
    return joules / iv;
}

/* The index of the part of kind, source and method rank; a new one when there is room; -1 when
 * not. */
static int part_index(rt_report *r, const char *kind, const char *source, int rank)
{
    for (size_t k = 0; k < r->n_parts; k++)
        if (strcmp(r->parts[k].kind, kind) == 0 && r->parts[k].method == rank &&
            (source ? r->parts[k].has_source && strcmp(r->parts[k].source, source) == 0 : !r->parts[k].has_source))
            return (int)k;
    if (r->n_parts == RPT_POWER_PARTS)
        return -1;
    size_t k = r->n_parts++;
    rt_copy_cut(r->parts[k].kind, sizeof r->parts[k].kind, kind);
    r->parts[k].has_source = rt_copy_cut(r->parts[k].source, sizeof r->parts[k].source, source) != NULL;
    r->parts[k].method = rank;
    r->parts[k].devices = 0;
    return (int)k;
}

/* A record's power by part into v[RPT_POWER_PART ..]: its energy domains summed by part (a
 * figure only with its method), over its interval; the job's share in a record with a tree,
 * else the machine's. NaN for a part the record had no figure of. */
static void power_parts(rt_report *r, const rt_record *rec, double iv, double *v)
{
    double j[RPT_POWER_PARTS], devices[RPT_POWER_PARTS] = {0};
    for (size_t k = 0; k < RPT_POWER_PARTS; k++)
        v[k] = j[k] = NAN;
    const rt_energy *e = rec->energy;
    if (!e || !e->domain)
        return;
    bool job = rec->process_energy_method != NULL;
    r->parts_job |= job;
    for (size_t i = 0; i < e->domain_count; i++) {
        const rt_energy_domain *d = e->domain[i];
        const char *kind = d ? rt_ew_part_kind(d) : NULL;
        int rank = d ? method_rank(d->method) : 0;
        int k = kind && rank ? part_index(r, kind, d->source, rank) : -1;
        if (k < 0)
            continue;
        devices[k]++;
        double x = job ? d->process_energy_joules : d->energy_joules;
        if (isfinite(x))
            j[k] = isnan(j[k]) ? x : j[k] + x;
    }
    for (size_t k = 0; k < r->n_parts; k++) {
        r->parts[k].devices = fmax(r->parts[k].devices, devices[k]);
        if (!isnan(iv))
            v[k] = j[k] / iv;
    }
}

/* NVML's utilization of the GPUs the work figures are of, percent: the tree's busy GPUs over
 * the GPUs it used, else the machine's over its GPUs; NaN without them. */
static double gpu_util_pct(const rt_record *rec)
{
    if (!isnan(rec->process_pid))
        return rec->process_gpu_utilized > 0 ? 100 * rec->process_gpu_usage / rec->process_gpu_utilized : NAN;
    return rec->gpu_count > 0 ? 100 * rec->gpu_usage / rec->gpu_count : NAN;
}

/* The record's GPU work into v[RPT_GPU_SM ..] (NaN without GPM figures, and then no utilization
 * either: the chart is of the work), and whose it was. */
static void gpu_work(rt_report *r, const rt_record *rec, double *v)
{
    v[RPT_GPU_SM] = rec->gpu_sm_active_pct;
    v[RPT_GPU_TENSOR] = rec->gpu_tensor_active_pct;
    v[RPT_GPU_DRAM] = rec->gpu_dram_active_pct;
    v[RPT_GPU_FP32] = rec->gpu_fp32_active_pct;
    v[RPT_GPU_FP16] = rec->gpu_fp16_active_pct;
    v[RPT_GPU_FP64] = rec->gpu_fp64_active_pct;
    bool any = false;
    for (int k = RPT_GPU_SM; k < RPT_GPU_UTIL; k++)
        any |= !isnan(v[k]);
    v[RPT_GPU_UTIL] = any ? gpu_util_pct(rec) : NAN;
    if (!any)
        return;
    r->work_job |= !isnan(rec->process_pid);
    if (!isnan(rec->gpu_work_shared))
        r->work_shared = isnan(r->work_shared) ? rec->gpu_work_shared : fmax(r->work_shared, rec->gpu_work_shared);
}

void rt_report_add(rt_report *r, const rt_record *rec)
{
    rt_report_add_sized(r, rec, sizeof *rec);
}

void rt_report_add_sized(rt_report *r, const rt_record *caller_rec, size_t rec_size)
{
    rt_record tmp;
    const rt_record *rec = rt_record_at_size(caller_rec, rec_size, &tmp);
    if (!r || !rec || !(fabs(rec->timestamp_secs) <= RPT_MAX_SECS)) /* NaN too */
        return;
    double iv = rec->interval_secs;
    if (!(iv > 0 && iv <= RPT_MAX_SECS))
        iv = NAN;
    double t1 = rec->timestamp_secs, t0 = isnan(iv) ? t1 : t1 - iv;
    double weight = isnan(iv) ? 1 : iv;
    double v[RPT_SERIES] = {
        [RPT_JOB_CORES] = rec->process_cores,
        [RPT_CPU_CORES] = rec->cpu_cores,
        [RPT_JOB_PSS] = rec->process_pss_mib,
        [RPT_JOB_RSS] = rec->process_rss_mib,
        [RPT_MEM_USED] = rec->memory_used_mib,
        [RPT_GPU] = rec->gpu_count > 0 ? rec->gpu_usage : NAN,
        [RPT_JOB_GPU] = rec->process_gpu_usage,
        [RPT_VRAM] = rec->gpu_count > 0 ? rec->gpu_vram_mib : NAN,
        [RPT_JOB_VRAM] = rec->process_gpu_vram_mib,
        [RPT_DISK_READ] = rate(rec->disk_read_bytes, iv),
        [RPT_DISK_WRITE] = rate(rec->disk_write_bytes, iv),
        [RPT_JOB_READ] = rate(rec->process_read_bytes, iv),
        [RPT_JOB_WRITE] = rate(rec->process_write_bytes, iv),
        [RPT_NET_RECV] = rate(rec->net_recv_bytes, iv),
        [RPT_NET_SENT] = rate(rec->net_sent_bytes, iv),
        [RPT_DISK_SPACE] = rec->disk_space_used_bytes,
        [RPT_POWER] = power_of(r, rec->energy_joules, rec->energy_method, iv),
        [RPT_JOB_POWER] = power_of(r, rec->process_energy_joules, rec->process_energy_method, iv),
    };
    power_parts(r, rec, iv, &v[RPT_POWER_PART]);
    gpu_work(r, rec, v);
    if (rec->gpu_count > 0)
        r->gpu_seen = true;
    /* The reading after the job's end (its root exited, nothing of its tree left) finds its
     * memory and GPUs at 0: that is no level the job had, and the job's lines would drop to 0
     * at their last point. Its CPU and I/O over the interval are the job's and stay. */
    if (rec->process_alive == 0 && !(rec->process_children > 0) && !(rec->cgroup_pids > 0) &&
        !(rec->process_pss_mib > 0) && !(rec->process_rss_mib > 0)) {
        v[RPT_JOB_PSS] = v[RPT_JOB_RSS] = v[RPT_JOB_GPU] = v[RPT_JOB_VRAM] = NAN;
        for (int k = RPT_GPU_SM; k < RPT_SERIES; k++) /* the GPUs' work then: the job's on no GPU */
            v[k] = NAN;
    }
    r->records++;
    add_marks(r, rec, t0, t1, weight);
    if (rec->phases)
        add_phases(r, rec->phases, t1);

    rpt_bucket *last = r->n ? &r->b[r->n - 1] : NULL;
    /* A record much shorter than the one before (the last reading, taken when the job ended a
     * moment after a sample) is the end of the last bucket, not a point of its own. */
    bool tail = last && !isnan(iv) && rt_fold_short(weight, r->last_weight) && t1 >= last->t1 && t0 <= last->t1 + weight;
    r->last_weight = weight;
    if (!tail && (!last || t1 < last->t1 || t1 - last->t0 > r->width)) {
        if (r->n == RPT_CAP) {
            compact(r);
            last = &r->b[r->n - 1];
        }
    }
    if (!tail && (!last || t1 < last->t1 || t1 - last->t0 > r->width)) {
        /* a gap: time went back (another file), or a pause well past the interval */
        bool gap = last && (t1 < last->t1 || t0 - last->t1 > 3 * weight + r->width);
        last = &r->b[r->n++];
        bucket_init(last, t0, t1, gap);
    }
    if (t1 > last->t1)
        last->t1 = t1;
    for (size_t k = 0; k < RPT_SERIES; k++) {
        if (!isfinite(v[k]))
            continue;
        rpt_cell *c = &last->c[k];
        c->sum += v[k] * weight;
        c->weight += weight;
        c->min = fminf(c->min, (float)v[k]);
        c->max = fmaxf(c->max, (float)v[k]);
    }
}
