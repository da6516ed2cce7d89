/* phases.c - the figures of a run's phases, per name, from the records' marks and figures
 * (rt_summary.phases; the rules are rt_phase_summary's and docs/contracts.md §8's):
 *  - a call runs from its start mark to its stop mark (or the last record: unterminated); its
 *    duration is the marks' difference, exact;
 *  - its CPU seconds and bytes are the differences of the readings at its two marks when both
 *    have them (the CPU's from the same source): exact, also for a call inside one interval;
 *    else the records' interval figures pro-rated by time overlap, through the readings at
 *    marks inside the interval where there are some;
 *  - its peak cores is the highest rate over the stretches between samples and marks (short
 *    stretches folded as fold.h does; a call shorter than half an interval: its mean);
 *  - memory from the readings at the records and marks within it, and the kernel's running
 *    peaks where they rose in an interval wholly within it; GPU figures overlap-weighted;
 *  - its duration under 1, 2, ... cores: cores.c's model over the same stretches (each at its
 *    own rate, with its record's quota or cores and CPU pressure).
 * A name's accumulator is about 350 bytes (no histogram), and 16 bytes per core its stretches
 * reached (rt_cores_acc); at most 1024 names and 256 open calls, as the pipeline keeps them. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../phase/phase.h"
#include "cores.h"
#include "fold.h"
#include "phases.h"

#define HASH_SLOTS 2048 /* a power of two, twice RT_PHASE_MAX_NAMES */

/* The figures of one call while it runs, or of a name's calls closed so far. */
typedef struct figs {
    double rss, pss, mem_peak;               /* peaks (NaN: none) */
    double need_cg, need_hwm, need_rss, need_pss; /* candidates of the need (rt_need's order) */
    double need_tree; /* the processes' peaks at once (process_peaks: without a cgroup only) */
    bool has_cg;      /* a record within had the job group's unreclaimable peak */
    double gpu_sum, gpu_w, gpu_peak;         /* overlap-weighted */
    double vram_sum, vram_w, vram_peak;
    uint64_t samples;
} figs;

typedef struct call {
    uint32_t name;
    double t0;                 /* the start mark's time */
    double cpu0, rd0, wr0;     /* the readings at the start (NaN: none) */
    int src0;                  /* cpu0's source */
    double pro_cpu, pro_rd, pro_wr; /* pro-rated from the records (NaN: none) */
    rt_fold fold;              /* the stretches' rates (peak cores) */
    double peak;
    figs f;
} call;

typedef struct acc {
    char *name;
    uint64_t calls, unterminated, empty;
    double first, dur, cmin, cmax, cpu, cores_peak, rd, wr;
    bool inexact;
    figs f;
    rt_cores_acc cores; /* its stretches under 1, 2, ... cores (4 KiB once it has one) */
} acc;

struct rt_phase_stats {
    acc *names;
    size_t n_names, cap_names;
    uint32_t *slots;           /* HASH_SLOTS: 0 empty, else index + 1 */
    call open[RT_PHASE_MAX_OPEN];
    size_t n_open;
    rt_phase_counts counts;    /* the latest record's */
    double last_b, last_iv;    /* the latest record's end and interval */
    double shift;              /* 0.20: the wall clock's steps so far (rt_record.clock_step_secs) */
    double prev_cg, prev_hwm, prev_mem, prev_tree; /* the running peaks at the latest record (NaN) */
    rt_cores_acc *run;         /* the run's table, fed every stretch during rt_phase_stats_add (NULL: none) */
    double carry;              /* CPU seconds a stretch of this record read above the cores the run
                                * could use, carried into the next (a mark's reading is late) */
    double *scratch;           /* 2 per mark of a record: its time and CPU within the interval */
    size_t cap_scratch;
    /* the result */
    acc *res;
    size_t cap_res;
    rt_phase_summary *out;
    const rt_phase_summary **outp;
    size_t cap_out;
    rt_phase_counts out_counts;
};

static inline void max_in(double *v, double x)
{
    if (!isnan(x) && !(x <= *v))
        *v = x;
}

static inline void sum_in(double *v, double x)
{
    if (!isnan(x))
        *v = isnan(*v) ? x : *v + x;
}

static void figs_init(figs *f)
{
    *f = (figs){.rss = NAN, .pss = NAN, .mem_peak = NAN, .need_cg = NAN, .need_hwm = NAN, .need_rss = NAN,
                .need_pss = NAN, .need_tree = NAN, .gpu_peak = NAN, .vram_peak = NAN};
}

static void figs_merge(figs *to, const figs *from)
{
    max_in(&to->rss, from->rss);
    max_in(&to->pss, from->pss);
    max_in(&to->mem_peak, from->mem_peak);
    max_in(&to->need_cg, from->need_cg);
    max_in(&to->need_hwm, from->need_hwm);
    max_in(&to->need_rss, from->need_rss);
    max_in(&to->need_pss, from->need_pss);
    max_in(&to->need_tree, from->need_tree);
    to->has_cg = to->has_cg || from->has_cg;
    to->gpu_sum += from->gpu_sum;
    to->gpu_w += from->gpu_w;
    max_in(&to->gpu_peak, from->gpu_peak);
    to->vram_sum += from->vram_sum;
    to->vram_w += from->vram_w;
    max_in(&to->vram_peak, from->vram_peak);
    to->samples += from->samples;
}

rt_phase_stats *rt_phase_stats_new(void)
{
    rt_phase_stats *ps = calloc(1, sizeof *ps);
    if (!ps)
        return NULL;
    ps->last_b = ps->last_iv = NAN;
    ps->prev_cg = ps->prev_hwm = ps->prev_mem = ps->prev_tree = NAN;
    return ps;
}

/* The name's index; new is set when it was interned now. -1: no room. */
static long intern(rt_phase_stats *ps, const char *name, bool *fresh)
{
    *fresh = false;
    if (!ps->slots && !(ps->slots = calloc(HASH_SLOTS, sizeof *ps->slots)))
        return -1;
    uint32_t i = rt_phase_name_hash(name) & (HASH_SLOTS - 1);
    for (; ps->slots[i]; i = (i + 1) & (HASH_SLOTS - 1))
        if (strcmp(ps->names[ps->slots[i] - 1].name, name) == 0)
            return (long)ps->slots[i] - 1;
    if (ps->n_names >= RT_PHASE_MAX_NAMES)
        return -1;
    if (rt_grow_uninit(&ps->names, &ps->cap_names, ps->n_names + 1, sizeof *ps->names) < 0)
        return -1;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    acc *a = &ps->names[ps->n_names];
    *a = (acc){.name = copy, .first = NAN, .dur = 0, .cmin = NAN, .cmax = NAN, .cpu = NAN,
               .cores_peak = NAN, .rd = NAN, .wr = NAN};
    figs_init(&a->f);
    rt_cores_init(&a->cores);
    ps->slots[i] = (uint32_t)++ps->n_names;
    *fresh = true;
    return (long)ps->n_names - 1;
}

/* Ends call c at t1 (stop: its mark, NULL at the run's end) into a; iv: the interval it ended in. */
static void close_into(acc *a, const call *c, const rt_phase_mark *stop, double t1, double iv)
{
    double d = t1 - c->t0;
    if (!(d >= 0))
        d = 0;
    a->calls++;
    if (!stop)
        a->unterminated++;
    a->dur += d;
    rt_min_known(&a->cmin, d);
    max_in(&a->cmax, d);
    double cpu = c->pro_cpu;
    bool exact = false;
    if (stop && c->src0 != RT_PHASE_CPU_NONE && stop->cpu_source == c->src0 && isfinite(c->cpu0) &&
        isfinite(stop->cpu_secs_total)) {
        cpu = stop->cpu_secs_total - c->cpu0;
        if (cpu < 0)
            cpu = 0;
        exact = true;
    }
    if (!exact)
        a->inexact = true;
    sum_in(&a->cpu, cpu);
    double rd = c->pro_rd, wr = c->pro_wr;
    if (stop && isfinite(c->rd0) && isfinite(stop->read_bytes_total))
        rd = fmax(0, stop->read_bytes_total - c->rd0);
    if (stop && isfinite(c->wr0) && isfinite(stop->write_bytes_total))
        wr = fmax(0, stop->write_bytes_total - c->wr0);
    sum_in(&a->rd, rd);
    sum_in(&a->wr, wr);
    double peak = c->peak;
    if (c->fold.w > 0)
        max_in(&peak, c->fold.x);
    if (isfinite(cpu) && d > 0 && (isnan(peak) || !(d >= 0.5 * iv)))
        peak = cpu / d; /* shorter than half an interval (or no stretch): its mean */
    max_in(&a->cores_peak, peak);
    if (c->f.samples == 0)
        a->empty++;
    figs_merge(&a->f, &c->f);
}

/* Room for the scratch of n marks. */
static bool scratch_room(rt_phase_stats *ps, size_t n)
{
    if (n <= ps->cap_scratch)
        return true;
    double *s = realloc(ps->scratch, 2 * n * sizeof *s);
    if (!s)
        return false;
    ps->scratch = s;
    ps->cap_scratch = n;
    return true;
}

/* The stretch t0..t1 of record r (interval iv), over which the cumulative CPU within the
 * interval went from l0 to l1: to every call open over it. */
static void stretch(rt_phase_stats *ps, const rt_record *r, double iv, double t0, double t1, double l0, double l1)
{
    double dt = t1 - t0;
    if (!(dt > 0))
        return;
    double dl = l1 - l0, frac = iv > 0 ? dt / iv : NAN;
    double had = rt_cores_had(r);
    /* the cores model's rate: a stretch cannot use more cores than the run could; what its
     * reading puts above them (a mark read a few ms late counts the next stretch's CPU in this
     * one) goes on to the next stretch of the record, not lost */
    double u = NAN;
    if (isfinite(dl)) {
        double work = dl + ps->carry;
        ps->carry = 0;
        if (isfinite(had) && had > 0 && work > had * dt) {
            ps->carry = work - had * dt;
            work = had * dt;
        }
        u = work / dt;
    }
    rt_cores_iv civ = rt_cores_iv_of(r, dt, u);
    civ.u = u; /* NaN: the stretch's CPU unknown, whatever the record's */
    if (ps->run)
        rt_cores_add_interval(ps->run, &civ);
    for (size_t i = 0; i < ps->n_open; i++) {
        call *c = &ps->open[i];
        rt_cores_add_interval(&ps->names[c->name].cores, &civ);
        if (isfinite(dl)) {
            sum_in(&c->pro_cpu, dl);
            double rx, rw;
            if (rt_fold_add(&c->fold, dl / dt, dt, &rx, &rw))
                max_in(&c->peak, rx);
        }
        sum_in(&c->pro_rd, r->process_read_bytes * frac);
        sum_in(&c->pro_wr, r->process_write_bytes * frac);
        if (isfinite(r->process_gpu_usage)) {
            c->f.gpu_sum += r->process_gpu_usage * dt;
            c->f.gpu_w += dt;
            max_in(&c->f.gpu_peak, r->process_gpu_usage);
        }
        if (isfinite(r->process_gpu_vram_mib)) {
            c->f.vram_sum += r->process_gpu_vram_mib * dt;
            c->f.vram_w += dt;
            max_in(&c->f.vram_peak, r->process_gpu_vram_mib);
        }
    }
}

/* The record's reading (at its timestamp, the interval a..b behind it) within call c. */
static void reading(rt_phase_stats *ps, call *c, const rt_record *r, double a, bool whole)
{
    c->f.samples++;
    c->f.has_cg = c->f.has_cg || isfinite(r->process_unreclaimable_peak_mib);
    max_in(&c->f.rss, r->process_rss_mib);
    max_in(&c->f.pss, r->process_pss_mib);
    max_in(&c->f.need_rss, isfinite(r->combined.total_rss_mib) ? r->combined.total_rss_mib : r->process_rss_mib);
    max_in(&c->f.need_pss, r->process_pss_mib);
    /* the kernel's running peaks: a rise in an interval wholly within the call was reached in it */
    if (whole && c->t0 <= a) {
        if (!(r->process_unreclaimable_peak_mib <= ps->prev_cg))
            max_in(&c->f.need_cg, r->process_unreclaimable_peak_mib);
        if (!(r->process_rss_hwm_mib <= ps->prev_hwm))
            max_in(&c->f.need_hwm, r->process_rss_hwm_mib);
        if (!(r->process_rss_hwm_tree_mib <= ps->prev_tree))
            max_in(&c->f.need_tree, r->process_rss_hwm_tree_mib);
        if (!(r->process_memory_peak_mib <= ps->prev_mem))
            max_in(&c->f.mem_peak, r->process_memory_peak_mib);
    }
}

/* A mark's readings to the calls open at it (the peak since the previous mark to those open
 * before it). */
static void mark_readings(rt_phase_stats *ps, const rt_phase_mark *m, double t)
{
    for (size_t i = 0; i < ps->n_open; i++) {
        call *c = &ps->open[i];
        max_in(&c->f.rss, m->rss_mib);
        max_in(&c->f.need_rss, m->rss_mib);
        if (t > c->t0)
            max_in(&c->f.mem_peak, m->memory_peak_mib);
    }
}

static void start(rt_phase_stats *ps, const rt_phase_mark *m, double t)
{
    bool fresh;
    long idx = m->name ? intern(ps, m->name, &fresh) : -1;
    if (idx < 0 || ps->n_open >= RT_PHASE_MAX_OPEN)
        return;
    if (fresh || !(ps->names[idx].first <= t))
        ps->names[idx].first = t;
    call *c = &ps->open[ps->n_open++];
    bool cpu = m->cpu_source != RT_PHASE_CPU_NONE && isfinite(m->cpu_secs_total);
    *c = (call){.name = (uint32_t)idx, .t0 = t, .cpu0 = cpu ? m->cpu_secs_total : NAN,
                .src0 = cpu ? m->cpu_source : RT_PHASE_CPU_NONE, .rd0 = m->read_bytes_total,
                .wr0 = m->write_bytes_total, .pro_cpu = NAN, .pro_rd = NAN, .pro_wr = NAN, .peak = NAN};
    figs_init(&c->f);
    max_in(&c->f.rss, m->rss_mib);
    max_in(&c->f.need_rss, m->rss_mib);
}

/* The most recent open call of m's name closed at m (at_reading: the record's reading is at
 * the mark's time or before it, so within the call). */
static void stop(rt_phase_stats *ps, const rt_phase_mark *m, double t, const rt_record *r, double a, bool whole,
                 bool at_reading, double iv)
{
    size_t i = ps->n_open;
    while (i > 0 && (!m->name || strcmp(ps->names[ps->open[i - 1].name].name, m->name) != 0))
        i--;
    if (i == 0)
        return;
    call *c = &ps->open[i - 1];
    if (at_reading)
        reading(ps, c, r, a, whole);
    close_into(&ps->names[c->name], c, m, t, iv);
    memmove(c, c + 1, (ps->n_open - i) * sizeof *c);
    ps->n_open--;
}

/* Mark m's time with the wall clock's steps so far taken off; in the interval [a, b] a step
 * came in (stepped), within it (a mark before the step wears the clock before it). */
static double mark_time(const rt_phase_stats *ps, const rt_phase_mark *m, bool stepped, double a, double b)
{
    double t = m->timestamp_secs - ps->shift;
    if (stepped && isfinite(a) && isfinite(b))
        t = t < a ? a : t > b ? b : t;
    return t;
}

bool rt_phase_stats_add(rt_phase_stats *ps, const rt_record *r, rt_cores_acc *run)
{
    const rt_phases *ph = r ? r->phases : NULL;
    if (!ps || !ph)
        return false;
    if (ph->counts)
        ps->counts = *ph->counts;
    /* on the wall clock as it was at the run's start: the steps it took so far taken off (the
     * marks of the interval a step came in placed within it) */
    bool stepped = isfinite(r->clock_step_secs) && r->clock_step_secs != 0;
    if (stepped)
        ps->shift += r->clock_step_secs;
    double b = r->timestamp_secs - ps->shift, iv = r->interval_secs;
    bool has_iv = isfinite(iv) && iv > 0, timed = isfinite(b);
    double a = timed && has_iv ? b - iv : b;
    double iv_peak = has_iv ? iv : ps->last_iv;
    /* the CPU of the interval, and the total before it (the basis of the marks' readings) */
    double q = r->process_cpu_secs;
    if (isnan(q) && has_iv)
        q = r->process_cores * iv;
    double base = r->process_cpu_secs_total - q;
    size_t n = ph->mark_count;
    double *tm = NULL, *lm = NULL;
    if (n && timed && scratch_room(ps, n)) {
        tm = ps->scratch;
        lm = ps->scratch + n;
        /* each mark's place in the interval, and its CPU since the interval's start where read */
        double tp = a, lp = 0;
        for (size_t i = 0; i < n; i++) {
            const rt_phase_mark *m = ph->marks[i];
            double t = mark_time(ps, m, stepped, a, b);
            tm[i] = tp = !(t >= tp) ? tp : t > b ? b : t;
            lm[i] = NAN;
            if (isfinite(base) && isfinite(q) && m->cpu_source != RT_PHASE_CPU_NONE && isfinite(m->cpu_secs_total)) {
                double l = m->cpu_secs_total - base;
                lm[i] = lp = l < lp ? lp : l > q ? q : l;
            }
        }
        /* the others by the straight line between the known points around them */
        double t0 = a, l0 = 0;
        for (size_t i = 0; i < n; i++) {
            if (!isnan(lm[i])) {
                t0 = tm[i], l0 = lm[i];
                continue;
            }
            size_t j = i;
            while (j < n && isnan(lm[j]))
                j++;
            double t1 = j < n ? tm[j] : b, l1 = j < n ? lm[j] : q;
            for (size_t k = i; k < j; k++)
                lm[k] = t1 > t0 ? l0 + (l1 - l0) * (tm[k] - t0) / (t1 - t0) : l0;
            i = j - 1;
        }
    }
    double tp = a, lp = 0;
    ps->run = timed && has_iv ? run : NULL;
    ps->carry = 0;
    for (size_t i = 0; i < n; i++) {
        const rt_phase_mark *m = ph->marks[i];
        if (tm) {
            stretch(ps, r, iv, tp, tm[i], lp, lm[i]);
            tp = tm[i];
            lp = lm[i];
        }
        double t = mark_time(ps, m, stepped, a, b);
        mark_readings(ps, m, t);
        if (m->kind == RT_PHASE_START)
            start(ps, m, t);
        else if (m->kind == RT_PHASE_STOP)
            stop(ps, m, t, r, a, has_iv, timed && t >= b, iv_peak);
    }
    if (timed) {
        ps->run = has_iv ? run : NULL; /* the last stretch ends the interval: the run's table gets it whole */
        stretch(ps, r, iv, tp, b, lp, q);
        ps->run = NULL;
        for (size_t i = 0; i < ps->n_open; i++)
            reading(ps, &ps->open[i], r, a, has_iv);
        ps->last_b = b;
    }
    if (has_iv)
        ps->last_iv = iv;
    max_in(&ps->prev_cg, r->process_unreclaimable_peak_mib);
    max_in(&ps->prev_hwm, r->process_rss_hwm_mib);
    max_in(&ps->prev_mem, r->process_memory_peak_mib);
    max_in(&ps->prev_tree, r->process_rss_hwm_tree_mib);
    return timed && has_iv;
}

static rt_need need_of(const figs *f)
{
    const struct {
        double mib;
        int source;
    } c[] = {{f->need_cg, RT_NEED_CGROUP},
             {f->need_hwm, RT_NEED_PROCESS_PEAK},
             {f->need_rss, RT_NEED_RSS},
             {f->need_pss, RT_NEED_PSS},
             {f->has_cg ? NAN : f->need_tree, RT_NEED_PROCESS_PEAKS}};
    rt_need n = {NAN, RT_NEED_UNKNOWN, 0};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (isfinite(c[i].mib) && c[i].mib >= 0 && !(c[i].mib <= n.mib)) {
            n.mib = c[i].mib;
            n.source = c[i].source;
        }
    /* a peak between samples unseen; without the job's cgroup, any figure (rt_need_of's rule) */
    n.sampled = n.source == RT_NEED_RSS || n.source == RT_NEED_PSS || (!f->has_cg && n.source != RT_NEED_UNKNOWN);
    return n;
}

static void to_summary(const acc *a, rt_phase_summary *o)
{
    *o = (rt_phase_summary){0};
    o->name = a->name;
    o->calls = a->calls;
    o->unterminated = a->unterminated;
    o->samples = a->f.samples;
    o->empty_calls = a->empty;
    o->first_start_secs = a->first;
    o->duration_secs = a->dur;
    o->call_min_secs = a->cmin;
    o->call_max_secs = a->cmax;
    o->call_mean_secs = a->calls ? a->dur / (double)a->calls : NAN;
    o->cpu_secs = a->cpu;
    o->cpu_exact = a->calls && !a->inexact && isfinite(a->cpu);
    o->cores_mean = isfinite(a->cpu) && a->dur > 0 ? a->cpu / a->dur : NAN;
    o->cores_peak = a->cores_peak;
    if (isfinite(o->cores_mean) && !(o->cores_peak >= o->cores_mean))
        o->cores_peak = o->cores_mean;
    o->rss_peak_mib = a->f.rss;
    o->pss_peak_mib = a->f.pss;
    o->memory_peak_mib = a->f.mem_peak;
    o->memory_need = need_of(&a->f);
    o->gpu_usage_mean = a->f.gpu_w > 0 ? a->f.gpu_sum / a->f.gpu_w : NAN;
    o->gpu_usage_peak = a->f.gpu_peak;
    o->gpu_vram_mean_mib = a->f.vram_w > 0 ? a->f.vram_sum / a->f.vram_w : NAN;
    o->gpu_vram_peak_mib = a->f.vram_peak;
    o->read_bytes = a->rd;
    o->write_bytes = a->wr;
}

void rt_phase_stats_result(rt_phase_stats *ps, rt_summary *s)
{
    s->phases = NULL;
    s->phase_count = 0;
    s->phase_counts = NULL;
    if (!ps)
        return;
    ps->out_counts = ps->counts;
    if (ps->out_counts.unterminated < ps->n_open)
        ps->out_counts.unterminated = ps->n_open;
    s->phase_counts = &ps->out_counts;
    size_t n = ps->n_names;
    if (!n)
        return;
    if (n > ps->cap_res) {
        acc *res = realloc(ps->res, n * sizeof *res);
        if (!res)
            return;
        ps->res = res;
        ps->cap_res = n;
    }
    if (n > ps->cap_out) {
        if (rt_resize(&ps->out, n, sizeof *ps->out) < 0 || rt_resize(&ps->outp, n, sizeof *ps->outp) < 0)
            return;
        ps->cap_out = n;
    }
    memcpy(ps->res, ps->names, n * sizeof *ps->res);
    for (size_t i = 0; i < ps->n_open; i++) /* closed at the last record, in the result only */
        close_into(&ps->res[ps->open[i].name], &ps->open[i], NULL, isnan(ps->last_b) ? ps->open[i].t0 : ps->last_b,
                   ps->last_iv);
    for (size_t i = 0; i < n; i++) {
        to_summary(&ps->res[i], &ps->out[i]);
        ps->out[i].cores = rt_cores_result(&ps->names[i].cores); /* the stretches so far: none open */
        ps->outp[i] = &ps->out[i];
    }
    s->phases = (const rt_phase_summary *const *)ps->outp;
    s->phase_count = n;
}

void rt_phase_stats_free(rt_phase_stats *ps)
{
    if (!ps)
        return;
    for (size_t i = 0; i < ps->n_names; i++) {
        free(ps->names[i].name);
        rt_cores_free(&ps->names[i].cores);
    }
    rt_free_all(ps->names, ps->slots, ps->scratch, ps->res, ps->out, ps->outp);
    free(ps);
}

/* ---- a holder's own copy --------------------------------------------------------------- */

struct rt_phase_copy {
    rt_phase_counts counts;
    size_t cap;
    rt_phase_summary *items;
    const rt_phase_summary **ptrs;
    rt_cores_table *tables; /* each phase's table (cap), its rows in rows */
    rt_cores_row *rows;
    size_t cap_rows;
};

/* Copies each phase's table into c (items[i].cores pointed at the copy); a table that finds no
 * room is left out (NULL). */
static void copy_tables(rt_phase_copy *c, size_t n)
{
    size_t rows = 0;
    for (size_t i = 0; i < n; i++)
        rows += c->items[i].cores ? c->items[i].cores->n : 0;
    if (rows > c->cap_rows) {
        rt_cores_row *grown = realloc(c->rows, rows * sizeof *grown);
        if (grown) {
            c->rows = grown;
            c->cap_rows = rows;
        }
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const rt_cores_table *t = c->items[i].cores;
        c->items[i].cores = NULL;
        if (!t || !c->tables || at + t->n > c->cap_rows)
            continue;
        c->tables[i] = *t;
        memcpy(c->rows + at, t->rows, t->n * sizeof *t->rows);
        c->tables[i].rows = c->rows + at;
        at += t->n;
        c->items[i].cores = &c->tables[i];
    }
}

void rt_phase_copy_into(rt_phase_copy **keep, rt_summary *s)
{
    if (!s->phase_counts)
        return;
    rt_phase_copy *c = *keep;
    if (!c && !(c = *keep = calloc(1, sizeof *c))) {
        s->phases = NULL, s->phase_count = 0, s->phase_counts = NULL;
        return;
    }
    c->counts = *s->phase_counts;
    s->phase_counts = &c->counts;
    size_t n = s->phase_count;
    if (n > c->cap) {
        if (rt_resize(&c->items, n, sizeof *c->items) < 0 || rt_resize(&c->ptrs, n, sizeof *c->ptrs) < 0 ||
            rt_resize(&c->tables, n, sizeof *c->tables) < 0) {
            s->phases = NULL, s->phase_count = 0;
            return;
        }
        c->cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        c->items[i] = *s->phases[i];
        c->ptrs[i] = &c->items[i];
    }
    copy_tables(c, n);
    s->phases = n ? (const rt_phase_summary *const *)c->ptrs : NULL;
}

void rt_phase_copy_free(rt_phase_copy *keep)
{
    if (!keep)
        return;
    rt_free_all(keep->items, keep->ptrs, keep->tables, keep->rows);
    free(keep);
}
