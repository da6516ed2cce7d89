/* stats.c - statistics of a run over its records, absorbed one at a time in constant memory:
 * time-weighted means, peaks, totals, and p50/p95 from fixed log-bucketed histograms (histogram.c:
 * within 1/256 = 0.390625% of the exact percentile for values 0.001 to 2^31; below 0.001 a value
 * counts as 0, negative ones clamp to 0, above 2^31 the percentile is the peak). */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "../core/methods.h"
#include "../core/request.h"
#include "../core/member.h"
#include "allocation.h"
#include "cores.h"
#include "energy_words.h"
#include "efficiency.h"
#include "fold.h"
#include "histogram.h"
#include "need.h"
#include "phases.h"
#include "record.h"
#include "record_fields.h"
#include "usage.h"

#define JOB_NAME_CAP 256 /* the job name is kept up to 255 bytes */

/* The record's figures that fold alone into the summary (a distribution, a sum, the largest, the
 * lowest, a counter's total over the runs of a file) are the rows of rt_record_fields[] with a
 * fold: the state below holds a histogram per distribution and a run_total per counter, in the
 * table's order. The rest (the CPU seconds, the RSS peak, the pressure's owner, the end of the
 * job, the energy) is this file's own code. */
#define NDIST RT_RECORD_NDIST

/* A folding row as rt_stats_new lays it out: its record offset and its rt_summary offset. */
typedef struct fold_map {
    size_t rec, sum;
} fold_map;
#define NROWS RT_RECORD_NROWS

/* The power distributions: the machine's and the tree's energy over each record's
 * interval, as rates folded like the others; in this order. */
enum { P_MACHINE, P_PROCESS, P_COUNT };

#define ENERGY_TEXT_CAP 512 /* the estimate's model and the missing note are kept up to 511 bytes */
#define PART_TEXT_CAP 32    /* an energy part's kind and source, and the meter's source, up to 31 */
#define GRID_TEXT_CAP 128   /* the grid's zone, name and source likewise */

#define NUM(base, off) (*(double *)((char *)(base) + (off)))
#define CNUM(base, off) (*(const double *)((const char *)(base) + (off)))

/* A counter since tracking began, over a file that may hold several runs one after another. */
typedef struct run_total {
    double cur;    /* the current run's largest total, NaN: none yet */
    double before; /* the totals of the runs before it in the same file */
    double pid;    /* the pid of the tree those totals are of, NaN: unknown */
} run_total;

/* One part of the run's energy (rt_summary_energy_part) as it is summed: its strings in its own
 * buffers (a record's domains do not outlive the record). */
typedef struct energy_part_acc {
    rt_summary_energy_part pub;
    char kind[PART_TEXT_CAP], source[PART_TEXT_CAP];
} energy_part_acc;

/* All state is plain data of a fixed size (16 histograms of RT_HIST_BUCKETS = 5250 buckets, about
 * 656 KiB in all), allocated once by rt_stats_new: nothing grows with the number of records, and
 * rt_stats_add allocates nothing (about 50 ns a record). */
struct rt_stats {
    rt_summary s;            /* samples, start/end/duration, totals and maxima kept current */
    fold_map rows[NROWS];    /* the table's folding rows by kind: rows[begin[k]] to
                              * rows[begin[k + 1]] fold as k (LEVEL first: a distribution's row is
                              * its histogram's index) */
    size_t begin[RT_FOLD_TOTAL + 2];
    char job_name[JOB_NAME_CAP];
    run_total cpu_total;     /* of process_cpu_secs_total */
    run_total totals[RT_RECORD_NTOTAL]; /* the TOTAL rows', in the order of rows[] */
    double cpu_secs_sum;     /* the sum of process_cpu_secs, NaN: none */
    double rss_peak;         /* the largest process_rss_peak_mib seen, NaN: none */
    double last_ts;          /* the latest timestamp of a record with a tree (NaN: none yet) */
    double last_left;        /* what that record left running (see left_behind), NaN */
    double last_left_mib;    /* and what they held then (see left_behind_mib), NaN */
    rt_allocation alloc;     /* the dedicated/shared rule's sums */
    rt_usage_acc usage;      /* gpu_tracker's view */
    rt_hist hist[NDIST];     /* the LEVEL and RATE rows', in the order of rows[] */
    rt_fold held[NDIST];     /* a rate's latest value, not yet in its histogram (fold.h) */
    rt_phase_stats *phases;  /* the job's phases (phases.c): NULL until a record carries some */
    /* 0.15: energy */
    rt_hist power[P_COUNT];  /* the power distributions */
    rt_fold power_held[P_COUNT];
    int method_rank, process_method_rank; /* the least exact seen (record.h's ranks), 0: none */
    double energy_ts;        /* the latest timestamp of a record with energy (NaN: none yet) */
    char model[ENERGY_TEXT_CAP], missing[ENERGY_TEXT_CAP]; /* that record's energy->model, ->missing */
    bool has_model, has_missing;
    rt_grid grid;            /* rt_stats_set_grid's copy, its strings in the buffers below */
    bool grid_known;         /* its intensity is known */
    char grid_zone[GRID_TEXT_CAP], grid_name[GRID_TEXT_CAP], grid_source[GRID_TEXT_CAP];
    /* 0.16: what the job was given: rt_stats_set_request's copy, else the first record's */
    rt_request_copy request;
    bool request_given;      /* set by rt_stats_set_request: the records' are not taken */
    /* 0.18: the run under other core counts */
    rt_cores_acc cores;
    rt_member_copy member;   /* 0.18: the first record's place in a job of several (set: one) */
    /* 0.19: the energy by part, in the order first seen (the summary's list sorts them) */
    energy_part_acc parts[RT_ENERGY_PARTS_MAX];
    size_t n_parts;
    const rt_summary_energy_part *part_list[RT_ENERGY_PARTS_MAX];
    char meter_source[PART_TEXT_CAP];
    bool has_meter;
    double clock_shift;      /* 0.20: the wall clock's steps so far (rt_record.clock_step_secs) */
};

/* *acc += x, where NaN is "no figure" (a NaN *acc becomes x). */
static inline void sum_in(double *acc, double x)
{
    if (isnan(x))
        return;
    *acc = isnan(*acc) ? x : *acc + x;
}

/* *acc = max(*acc, x), where NaN is "no figure". */
static inline void max_in(double *acc, double x)
{
    if (isnan(x))
        return;
    if (isnan(*acc) || x > *acc)
        *acc = x;
}

rt_stats *rt_stats_new(void)
{
    rt_stats *st = calloc(1, sizeof *st); /* the histograms and allocation sums: all zero is empty */
    if (!st)
        return NULL;
    rt_summary *s = &st->s;
    s->start_secs = s->end_secs = NAN;
    s->duration_secs = 0;
    s->process_cpu_secs = s->process_gpus_used = NAN;
    size_t n = 0;
    for (int k = RT_FOLD_LEVEL; k <= RT_FOLD_TOTAL; k++) {
        st->begin[k] = n;
        for (size_t i = 0; i < rt_record_field_count; i++)
            if (rt_record_fields[i].fold == (rt_rf_fold)k)
                st->rows[n++] = (fold_map){rt_record_fields[i].off, rt_record_fields[i].sum_off};
    }
    st->begin[RT_FOLD_TOTAL + 1] = n; /* the state holds as many distributions and totals as the
                                       * table has: record_fields.h counts them */
    for (size_t i = st->begin[RT_FOLD_SUM]; i < n; i++)
        NUM(s, st->rows[i].sum) = NAN;
    for (size_t i = 0; i < RT_RECORD_NTOTAL; i++)
        st->totals[i] = (run_total){NAN, 0, NAN};
    s->oom_kill_secs = NAN;
    st->cpu_total = (run_total){NAN, 0, NAN};
    st->cpu_secs_sum = st->rss_peak = st->last_ts = st->last_left = st->last_left_mib = NAN;
    s->process_cgroup_exclusive = NAN;
    s->process_unreclaimable_unsure_mib = NAN;
    s->pressure_group = NAN;
    s->gpu_idle_cpu_busy_secs = NAN;
    s->max_slowdown_pct = s->end_signal = NAN;
    s->memory_need = s->vram_need = (rt_need){NAN, RT_NEED_UNKNOWN, 0};
    rt_usage_init(&st->usage);
    s->co2e_grams = s->process_co2e_grams = NAN;
    st->energy_ts = NAN;
    rt_cores_init(&st->cores);
    return st;
}

/* Copies src (NULL: none) into buf of cap bytes, cut without splitting a UTF-8 sequence; returns
 * buf, or NULL for a NULL src. */
static const char *keep_text(char *buf, size_t cap, const char *src)
{
    return rt_copy_cut(buf, cap, src);
}

rt_error rt_stats_set_grid(rt_stats *st, const rt_grid *grid)
{
    if (!st || (grid && grid->struct_size < offsetof(rt_grid, g_per_kwh) + sizeof(double)))
        return RT_ERR_INVALID;
    rt_grid g = RT_GRID_INIT;
    g.g_per_kwh = NAN;
    if (grid && rt_struct_copy(&g, sizeof g, grid) < 0)
        return RT_ERR_INVALID;
    g.struct_size = sizeof g;
    g.zone = keep_text(st->grid_zone, sizeof st->grid_zone, g.zone);
    g.name = keep_text(st->grid_name, sizeof st->grid_name, g.name);
    g.source = keep_text(st->grid_source, sizeof st->grid_source, g.source);
    st->grid = g;
    st->grid_known = grid && isfinite(g.g_per_kwh) && g.g_per_kwh > 0;
    return RT_OK;
}

rt_error rt_stats_set_max_slowdown(rt_stats *st, double pct)
{
    if (!st || !(pct >= 0))
        return RT_ERR_INVALID;
    st->s.max_slowdown_pct = pct;
    return RT_OK;
}

rt_error rt_stats_set_end_signal(rt_stats *st, int signal)
{
    if (!st || signal < 0 || signal > 64)
        return RT_ERR_INVALID;
    st->s.end_signal = signal;
    return RT_OK;
}

/* Grams of CO2e of joules at g_per_kwh; NaN when either is unknown (as rt_co2e_grams). */
static double co2e(double joules, double g_per_kwh)
{
    if (!isfinite(joules) || !isfinite(g_per_kwh) || g_per_kwh <= 0)
        return NAN;
    return joules / 3.6e6 * g_per_kwh;
}

/* Whether two strings, either NULL, are the same. */
static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The part of kind, source and method rank; a new one when there is room; NULL when not. */
static energy_part_acc *part_of(rt_stats *st, const char *kind, const char *source, int rank)
{
    for (size_t i = 0; i < st->n_parts; i++) {
        energy_part_acc *p = &st->parts[i];
        if (strcmp(p->pub.kind, kind) == 0 && same_str(p->pub.source, source) &&
            rt_energy_method_rank(p->pub.method) == rank)
            return p;
    }
    if (st->n_parts == RT_ENERGY_PARTS_MAX)
        return NULL;
    energy_part_acc *p = &st->parts[st->n_parts++];
    p->pub = (rt_summary_energy_part){NULL, NULL, rt_energy_method_of_rank(rank), NAN, NAN, 0};
    p->pub.kind = rt_copy_cut(p->kind, sizeof p->kind, kind);
    p->pub.source = rt_copy_cut(p->source, sizeof p->source, source);
    return p;
}

/* A record's energy domains into the parts: each domain's figures summed into its part (a figure
 * only with its method), the most domains a part had in one record, and the source of a platform
 * meter that gave the machine's total. */
static void add_energy_parts(rt_stats *st, const rt_energy *e)
{
    double devices[RT_ENERGY_PARTS_MAX] = {0};
    for (size_t i = 0; i < e->domain_count; i++) {
        const rt_energy_domain *d = e->domain ? e->domain[i] : NULL;
        if (!d)
            continue;
        const char *kind = rt_ew_part_kind(d);
        int rank = rt_energy_method_rank(d->method);
        if (!kind && d->in_total && d->source && !st->has_meter) /* the platform meter */
            st->has_meter = rt_copy_cut(st->meter_source, sizeof st->meter_source, d->source) != NULL;
        energy_part_acc *p = kind && rank ? part_of(st, kind, d->source, rank) : NULL;
        if (!p)
            continue;
        sum_in(&p->pub.energy_joules, d->energy_joules);
        sum_in(&p->pub.process_energy_joules, d->process_energy_joules);
        devices[p - st->parts]++;
    }
    for (size_t i = 0; i < st->n_parts; i++)
        max_in(&st->parts[i].pub.devices, devices[i]);
}

/* The energy of one record: the methods (the least exact seen), the power distributions, the
 * parts, and the model and missing notes of the latest record with energy. */
static void add_energy(rt_stats *st, const rt_record *r, double iv, bool has_interval)
{
    int rank = rt_energy_method_rank(r->energy_method), prank = rt_energy_method_rank(r->process_energy_method);
    if (rank > st->method_rank)
        st->method_rank = rank;
    if (prank > st->process_method_rank)
        st->process_method_rank = prank;
    const double joules[P_COUNT] = {rank ? r->energy_joules : NAN, prank ? r->process_energy_joules : NAN};
    for (size_t i = 0; i < P_COUNT; i++) {
        double rx, rw;
        if (has_interval && !isnan(joules[i]) && rt_fold_add(&st->power_held[i], joules[i] / iv, iv, &rx, &rw))
            rt_hist_add(&st->power[i], rx, rw);
    }
    const rt_energy *e = r->energy;
    if (e)
        add_energy_parts(st, e);
    if (!e || (!isnan(st->energy_ts) && !(r->timestamp_secs >= st->energy_ts)))
        return;
    st->energy_ts = r->timestamp_secs;
    /* rewritten only when they change (a summary copy handed out keeps pointing at them) */
    if (!e->model || !st->has_model || strncmp(st->model, e->model, sizeof st->model - 1) != 0)
        st->has_model = keep_text(st->model, sizeof st->model, e->model) != NULL;
    if (!e->missing || !st->has_missing || strncmp(st->missing, e->missing, sizeof st->missing - 1) != 0)
        st->has_missing = keep_text(st->missing, sizeof st->missing, e->missing) != NULL;
}

rt_error rt_stats_set_request(rt_stats *st, const rt_request *req)
{
    rt_err_clear();
    if (!st) {
        rt_err_set("rt_stats_set_request: st is NULL");
        return RT_ERR_INVALID;
    }
    if (rt_request_keep(&st->request, req) < 0) {
        rt_err_set("rt_stats_set_request: struct_size too small");
        return RT_ERR_INVALID;
    }
    st->request_given = req != NULL;
    return RT_OK;
}

rt_error rt_stats_set_usage(rt_stats *st, const rt_usage_options *opts)
{
    rt_usage_options o = RT_USAGE_OPTIONS_INIT;
    if (!st || !opts || rt_struct_copy(&o, sizeof o, opts) < 0 || !(o.expected_cores >= 0) ||
        !isfinite(o.expected_cores) || st->s.samples ||
        (o.gpu_uuid_count && !o.gpu_uuids))
        return RT_ERR_INVALID;
    return rt_usage_configure(&st->usage, o.expected_cores, o.gpu_uuids, o.gpu_uuid_count) == 0 ? RT_OK
                                                                                                 : RT_ERR_NOMEM;
}

rt_error rt_stats_new_with(const rt_usage_options *usage, rt_stats **out)
{
    rt_err_clear();
    if (!out) {
        rt_err_set("rt_stats_new_with: out is NULL");
        return RT_ERR_INVALID;
    }
    *out = NULL;
    rt_stats *st = rt_stats_new();
    if (!st)
        return RT_ERR_NOMEM;
    rt_error e = usage ? rt_stats_set_usage(st, usage) : RT_OK;
    if (e != RT_OK) {
        if (e == RT_ERR_INVALID)
            rt_err_set("rt_usage_options: struct_size too small, expected_cores negative or not finite, "
                       "or gpu_uuids NULL with a count");
        rt_stats_free(st);
        return e;
    }
    *out = st;
    return RT_OK;
}

/* Copies name into st->job_name, cut at 255 bytes without splitting a UTF-8 sequence. */
static void keep_job_name(rt_stats *st, const char *name)
{
    st->s.job_name = rt_copy_cut(st->job_name, sizeof st->job_name, name);
}

/* Absorbs a record's counter since tracking began into *t. A total below the run's largest,
 * or another pid, is a new run (a file holding two runs one after the other: tracking counts
 * from zero again), so the run before it adds its last total (a live run's total never goes
 * back). Returns the run's total before this record (NaN at a run's first), or NaN when total
 * is NaN. */
static double add_run_total(run_total *t, double total, double pid)
{
    if (isnan(total))
        return NAN;
    double prev = t->cur;
    bool new_pid = !isnan(pid) && !isnan(t->pid) && pid != t->pid;
    if (!isnan(t->cur) && (total < t->cur || new_pid)) {
        t->before += t->cur;
        t->cur = total;
        prev = NAN;
    } else {
        max_in(&t->cur, total);
    }
    if (!isnan(pid))
        t->pid = pid;
    return prev;
}

/* The file's total of a counter: the runs' last totals summed, NaN when none was seen. */
static double run_total_value(const run_total *t)
{
    return isnan(t->cur) ? NAN : t->before + t->cur;
}

/* Folds the record's figures as their rows in rt_record_fields[] say (w: the seconds the record
 * stands for). The first record that saw an OOM kill (its count above the run's previous, or
 * above 0 at a run's first record) sets oom_kill_secs. */
static void add_rows(rt_stats *st, const rt_record *r, double w)
{
    rt_summary *s = &st->s;
    const fold_map *m = st->rows;
    const size_t *b = st->begin;
    for (size_t i = b[RT_FOLD_LEVEL]; i < b[RT_FOLD_RATE]; i++)
        rt_hist_add(&st->hist[i], CNUM(r, m[i].rec), w);
    for (size_t i = b[RT_FOLD_RATE]; i < b[RT_FOLD_SUM]; i++) {
        double rx, rw;
        if (rt_fold_add(&st->held[i], CNUM(r, m[i].rec), w, &rx, &rw))
            rt_hist_add(&st->hist[i], rx, rw);
    }
    for (size_t i = b[RT_FOLD_SUM]; i < b[RT_FOLD_MAX]; i++)
        sum_in(&NUM(s, m[i].sum), CNUM(r, m[i].rec));
    for (size_t i = b[RT_FOLD_MAX]; i < b[RT_FOLD_MIN]; i++)
        max_in(&NUM(s, m[i].sum), CNUM(r, m[i].rec));
    for (size_t i = b[RT_FOLD_MIN]; i < b[RT_FOLD_TOTAL]; i++)
        rt_min_known(&NUM(s, m[i].sum), CNUM(r, m[i].rec));
    for (size_t i = b[RT_FOLD_TOTAL]; i < b[RT_FOLD_TOTAL + 1]; i++) {
        double v = CNUM(r, m[i].rec);
        double prev = add_run_total(&st->totals[i - b[RT_FOLD_TOTAL]], v, r->process_pid);
        if (m[i].rec == offsetof(rt_record, cgroup_oom_kills) && !isnan(v) && v > (isnan(prev) ? 0 : prev) &&
            isfinite(r->timestamp_secs))
            rt_min_known(&s->oom_kill_secs, r->timestamp_secs);
    }
}

/* What a tree's record says of the job's end: with the root gone, the processes of the job
 * still running (the group's tasks when the group holds only the tree, else the live
 * descendants); NaN while the root runs or when unknown. The latest record's stands. */
static void add_end(rt_stats *st, const rt_record *r)
{
    if (isnan(r->process_pid) || !isfinite(r->timestamp_secs))
        return;
    rt_min_known(&st->s.process_cgroup_exclusive, r->process_cgroup_exclusive);
    if (!isnan(st->last_ts) && r->timestamp_secs < st->last_ts)
        return;
    st->last_ts = r->timestamp_secs;
    double left = NAN;
    if (r->process_alive == 0)
        left = r->process_cgroup_exclusive == 1 && !isnan(r->cgroup_pids) ? r->cgroup_pids : r->process_children;
    st->last_left = left;
    st->last_left_mib = left > 0 ? (isnan(r->process_pss_mib) ? r->process_rss_mib : r->process_pss_mib) : NAN;
}

/* The record's clocks: a step of the wall clock (counted, summed, the largest by size kept with
 * its sign, and taken off the timestamps that follow it, so that the run's end is its start
 * plus its duration) and a gap in the sampling (counted, summed, the longest). */
static void add_clocks(rt_stats *st, const rt_record *r)
{
    rt_summary *s = &st->s;
    double step = r->clock_step_secs, gap = r->sampling_gap_secs;
    if (isfinite(step) && step != 0) {
        s->clock_steps++;
        s->clock_step_secs += step;
        if (fabs(step) > fabs(s->clock_step_largest_secs))
            s->clock_step_largest_secs = step;
        st->clock_shift += step;
    }
    if (isfinite(gap) && gap > 0) {
        s->sampling_gaps++;
        s->sampling_gap_secs += gap;
        if (gap > s->sampling_gap_longest_secs)
            s->sampling_gap_longest_secs = gap;
    }
}

void rt_stats_add(rt_stats *st, const rt_record *r)
{
    rt_stats_add_sized(st, r, sizeof *r);
}

/* A tree's CPU is busy from this many cores in a record: a quarter of a core (a job that waits
 * reads 0.01 or so). A single-threaded input pipeline (one busy loop) measured 0.73-1.15 cores
 * a 0.2 s record on a 2-core machine shared with other sessions (0.9-1.0 at best), so "a whole
 * core" counted half of its records; with stress-ng --cpu 2 and other sessions busy beside it
 * (the kernel's autogroup shares the CPU out by session) the job's three busy loops read
 * 0.3-0.6 cores in all: the GPU waits for the CPU side all the same. */
#define GPU_IDLE_CPU_BUSY_CORES 0.25

/* The seconds a record stands for (w) when the tree kept its CPU busy while its GPUs idled: its
 * GPU usage under 0.05 of a GPU, and its GPUs' SM activity under 5% where known (records with
 * the tree's GPU usage only). */
static void add_gpu_idle(rt_summary *s, const rt_record *r, double w)
{
    if (isnan(r->process_gpu_usage) || isnan(r->process_cores))
        return;
    /* the interval the command ended in is its teardown, whatever the GPU did: not counted */
    bool ended = r->process_alive == 0;
    bool idle = !ended && r->process_gpu_usage < 0.05 && !(r->gpu_sm_active_pct >= 5.0);
    sum_in(&s->gpu_idle_cpu_busy_secs, idle && r->process_cores >= GPU_IDLE_CPU_BUSY_CORES ? w : 0.0);
}

void rt_stats_add_sized(rt_stats *st, const rt_record *rec, size_t rec_size)
{
    rt_record tmp;
    const rt_record *r = rt_record_at_size(rec, rec_size, &tmp);
    if (!st || !r)
        return;
    rt_summary *s = &st->s;
    double iv = r->interval_secs;
    bool has_interval = isfinite(iv) && iv > 0;
    double w = has_interval ? iv : 1.0; /* the seconds the record stands for */
    s->samples++;
    add_clocks(st, r);
    if (isfinite(r->timestamp_secs)) { /* the earliest start and latest end: records out of order too */
        double ts = r->timestamp_secs - st->clock_shift; /* on the wall clock as it was at the start */
        double start = has_interval ? ts - iv : ts;
        if (isnan(s->start_secs) || start < s->start_secs)
            s->start_secs = start;
        max_in(&s->end_secs, ts);
    }
    s->duration_secs += w;
    if (r->job_name && !s->job_name)
        keep_job_name(st, r->job_name);
    if (isfinite(r->process_pid) || isfinite(r->process_cores))
        s->has_process = 1;

    /* whose pressure: the group's only when every record that had some had the group's */
    if (!isnan(r->pressure_group))
        s->pressure_group = isnan(s->pressure_group) ? r->pressure_group : fmin(s->pressure_group, r->pressure_group);
    /* the safe side's part of the unreclaimable peak: that of the record that reached it (before
     * the peak takes this record's) */
    if (!isnan(r->process_unreclaimable_peak_mib) &&
        !(r->process_unreclaimable_peak_mib < s->process_unreclaimable_peak_mib))
        s->process_unreclaimable_unsure_mib = r->process_unreclaimable_unsure_mib;
    add_rows(st, r, w);
    add_run_total(&st->cpu_total, r->process_cpu_secs_total, r->process_pid);
    sum_in(&st->cpu_secs_sum, r->process_cpu_secs);
    max_in(&st->rss_peak, r->process_rss_peak_mib);
    add_end(st, r);
    rt_allocation_add_record(&st->alloc, r);
    rt_usage_add(&st->usage, r, w);
    /* the run under other core counts: by the stretches between phase marks where there are
     * some (as the phases' own tables), else by the record */
    bool by_stretch = false;
    if (r->phases && (st->phases || (st->phases = rt_phase_stats_new())))
        by_stretch = rt_phase_stats_add(st->phases, r, &st->cores);
    if (!by_stretch)
        rt_cores_add(&st->cores, r, w);
    add_energy(st, r, iv, has_interval);
    add_gpu_idle(s, r, w);
    if (r->request && !st->request_given && !st->request.set)
        rt_request_keep(&st->request, r->request);
    if (r->member && !st->member.set)
        rt_member_keep(&st->member, r->member);
}

/* d from histogram h and the value f holds back (a rate's latest, not yet in h): h with it, then
 * without it again, exactly as it was. */
static void dist_with_held(rt_hist *h, const rt_fold *f, rt_dist *d)
{
    if (f->w <= 0) {
        rt_hist_dist(h, d);
        return;
    }
    double weight = h->weight, weighted = h->weighted, peak = h->peak, least = h->least;
    size_t b = rt_hist_bucket(f->x < 0 ? 0 : f->x);
    double bw = h->w[b];
    rt_hist_add(h, f->x, f->w);
    rt_hist_dist(h, d);
    h->weight = weight;
    h->weighted = weighted;
    h->peak = peak;
    h->least = least;
    h->w[b] = bw;
}

/* A part's figure the list is ordered by: the job's share when the run had one, else the
 * machine's; -inf for none (last). */
static double part_key(const rt_summary_energy_part *p, bool job)
{
    double v = job ? p->process_energy_joules : p->energy_joules;
    return isnan(v) ? -INFINITY : v;
}

/* The summary's parts: the largest first, parts of equal energy in the order first seen. */
static void energy_parts_summary(rt_stats *st)
{
    rt_summary *s = &st->s;
    bool job = st->process_method_rank > 0;
    for (size_t i = 0; i < st->n_parts; i++) { /* an insertion sort: stable, a handful of parts */
        const rt_summary_energy_part *p = &st->parts[i].pub;
        size_t k = i;
        for (; k > 0 && part_key(st->part_list[k - 1], job) < part_key(p, job); k--)
            st->part_list[k] = st->part_list[k - 1];
        st->part_list[k] = p;
    }
    s->energy_parts = st->n_parts ? st->part_list : NULL;
    s->energy_part_count = st->n_parts;
    s->energy_meter_source = st->has_meter ? st->meter_source : NULL;
}

/* The summary's energy: the methods, power, the notes, and the carbon at the grid's intensity. */
static void energy_summary(rt_stats *st)
{
    rt_summary *s = &st->s;
    s->energy_method = rt_energy_method_of_rank(st->method_rank);
    s->process_energy_method = rt_energy_method_of_rank(st->process_method_rank);
    dist_with_held(&st->power[P_MACHINE], &st->power_held[P_MACHINE], &s->power_watts);
    dist_with_held(&st->power[P_PROCESS], &st->power_held[P_PROCESS], &s->process_power_watts);
    s->energy_model = st->has_model ? st->model : NULL;
    s->energy_missing = st->has_missing ? st->missing : NULL;
    s->grid = st->grid_known ? &st->grid : NULL;
    double g = st->grid_known ? st->grid.g_per_kwh : NAN;
    s->co2e_grams = co2e(s->energy_joules, g);
    s->process_co2e_grams = co2e(s->process_energy_joules, g);
    energy_parts_summary(st);
}

/* The distributions, CPU seconds, RSS peak and allocation from the accumulated state: a
 * scan of the histograms (a few tens of microseconds). */
const rt_summary *rt_stats_summary(rt_stats *st)
{
    if (!st)
        return NULL;
    rt_summary *s = &st->s;
    const size_t *b = st->begin;
    for (size_t i = 0; i < b[RT_FOLD_SUM]; i++)
        dist_with_held(&st->hist[i], &st->held[i], (rt_dist *)((char *)s + st->rows[i].sum));
    /* the tool's files carry the exact total since tracking began (per run, when a file holds
     * several); else the intervals' sum */
    s->process_cpu_secs = isnan(st->cpu_total.cur) ? st->cpu_secs_sum : run_total_value(&st->cpu_total);
    for (size_t i = b[RT_FOLD_TOTAL]; i < b[RT_FOLD_TOTAL + 1]; i++)
        NUM(s, st->rows[i].sum) = run_total_value(&st->totals[i - b[RT_FOLD_TOTAL]]);
    max_in(&s->process_rss_mib.peak, st->rss_peak);
    s->allocation = rt_allocation_guess(&st->alloc);
    s->usage = rt_usage_result(&st->usage);
    s->cores = rt_cores_result(&st->cores);
    s->left_behind = st->last_left;
    s->left_behind_mib = st->last_left_mib;
    rt_need_of(s, &s->memory_need, &s->vram_need);
    rt_phase_stats_result(st->phases, s);
    energy_summary(st);
    rt_efficiency_of(s, st->request.set ? &st->request.r : NULL);
    s->member = st->member.set ? &st->member.m : NULL;
    return s;
}

void rt_stats_free(rt_stats *st)
{
    if (st) {
        rt_usage_free(&st->usage);
        rt_cores_free(&st->cores);
        rt_phase_stats_free(st->phases);
    }
    free(st);
}
