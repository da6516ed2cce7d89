/* cores.c - the run's duration under 1, 2, ... cores, from its records (rt_cores_table; the
 * model is written in the public header and docs/answers.md). Each record adds its interval's
 * predicted seconds to every count; since an interval's prediction stops changing past some
 * count (the work fits, and any waits are gone), it is added to each count below that point and
 * once to a running sum from it: a record costs a few steps, not RT_CORES_MAX. An interval whose
 * tasks' waits for a CPU are known (schedstat) is predicted from the job's own demand, so that
 * waits other work caused on a shared machine count for nothing; one without, by the CPU
 * pressure (the 0.18 model). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cores.h"

/* Other work beside the job from this many cores on average: the run shared its machine. */
#define SHARED_CORES 0.25
/* A demand this far above a whole count of tasks shows no row beyond it. */
#define DEMAND_SLACK 0.01

void rt_cores_init(rt_cores_acc *a)
{
    memset(a, 0, sizeof *a);
    a->peak = a->had = a->wait = a->machine = a->demand = NAN;
}

void rt_cores_free(rt_cores_acc *a)
{
    free(a->at);
    free(a->from);
    free(a->rows);
    rt_cores_init(a);
}

/* Room for every count (at[1 .. RT_CORES_MAX], from[1 .. RT_CORES_MAX + 1]), made zeroed at
 * the first interval (4 KiB); false when out of memory. Made whole at once, whatever count the
 * first intervals reach: CPU pressure can drive an interval's count anywhere up to
 * RT_CORES_MAX at any time (a core's work waiting 95% of the interval needs 20 to run
 * unhindered), and growing at a new high made a tracker's steady-state samples allocate on a
 * loaded machine (unit.alloc, twice: first at every new high, then past the 64 made at first). */
static bool room(rt_cores_acc *a)
{
    if (a->cap)
        return true;
    a->at = calloc(RT_CORES_MAX + 1, sizeof *a->at);
    a->from = a->at ? calloc(RT_CORES_MAX + 2, sizeof *a->from) : NULL;
    if (!a->from) {
        free(a->at);
        a->at = NULL;
        a->failed = 1;
        return false;
    }
    a->cap = RT_CORES_MAX;
    return true;
}

double rt_cores_interval(double dt, double u, double had, double wait, int64_t c)
{
    if (!(dt > 0) || c < 1)
        return dt > 0 ? dt : 0;
    if (!(u >= 0))
        return dt; /* nothing known of its CPU: as it was */
    if (isfinite(had) && had > 0 && u > had)
        u = had; /* a reading above what the run could use is the counters' jitter */
    double cd = (double)c;
    if (u > cd)
        return dt * u / cd; /* its work at most c wide */
    if (!isfinite(had) || cd <= had || !(wait > 0))
        return dt; /* it had these cores, or never waited: no faster */
    double floor_secs = dt - (wait < dt ? wait : dt);
    double spread = dt * u / cd;
    return spread > floor_secs ? spread : floor_secs;
}

double rt_cores_interval_demand(double dt, double u, double wait_cores, int64_t c)
{
    if (!(dt > 0))
        return 0;
    if (!(u >= 0) || !(wait_cores >= 0) || c < 1)
        return dt;
    double p = u + wait_cores, work = u * dt;
    if (p < 1) /* a chain of one at most: its waits fall away, its time off a CPU stays */
        return fmax(dt - wait_cores * dt, work);
    return work / fmin(p, (double)c);
}

rt_cores_iv rt_cores_iv_of(const rt_record *r, double w, double u)
{
    double own = r->process_cores, wc = r->process_cpu_wait_cores;
    if (isnan(u))
        u = own;
    else if (wc >= 0) /* a stretch of the record: its waits in proportion to its CPU (a stretch
                       * that ran less was less often runnable) */
        wc = own > 0 ? wc * u / own : u > 0 ? NAN : wc;
    double others = r->cpu_cores - r->process_cores;
    return (rt_cores_iv){.w = w,
                         .u = u,
                         .wait_cores = wc,
                         .had = rt_cores_had(r),
                         .some_pct = r->pressure_cpu_some_pct,
                         .machine = !(r->pressure_group == 1.0),
                         .others = isfinite(others) ? fmax(others, 0.0) : NAN,
                         .cpus = r->cpu_count > 0 ? r->cpu_count : NAN};
}

double rt_cores_had(const rt_record *r)
{
    return r->cgroup_cpu_quota_cores > 0 ? r->cgroup_cpu_quota_cores : r->cpu_count > 0 ? r->cpu_count : NAN;
}

double rt_cores_duration_at(const rt_cores_table *t, int64_t c)
{
    size_t row = (size_t)c > t->n ? t->n : (size_t)c;
    return t->rows[row - 1].duration_secs;
}

double rt_cores_core_hours(const rt_cores_table *t, int64_t cores)
{
    return t && t->n > 0 && t->rows && cores >= 1 ? rt_core_hours(cores, rt_cores_duration_at(t, cores)) : NAN;
}

void rt_cores_add(rt_cores_acc *a, const rt_record *r, double w)
{
    rt_cores_iv iv = rt_cores_iv_of(r, w, NAN);
    rt_cores_add_interval(a, &iv);
}

/* Adds an interval's prediction: value under each count below k, same from k on. */
static void add_from(rt_cores_acc *a, double k, double same, double w, double u, double had, double wait)
{
    int64_t last = k > RT_CORES_MAX ? RT_CORES_MAX : (int64_t)k - 1;
    for (int64_t c = 1; c <= last; c++)
        a->at[c] += rt_cores_interval(w, u, had, wait, c);
    if (k <= RT_CORES_MAX)
        a->from[(int64_t)k] += same;
}

/* The job's own demand (the interval's tasks' waits known): under c cores below p = u + waits,
 * its work spread over c; from ceil(p) on, over p (fewer than one task runnable: its own time). */
static void add_demand(rt_cores_acc *a, double w, double u, double wc, double had)
{
    double p = u + wc, work = u * w;
    a->wait = (isnan(a->wait) ? 0 : a->wait) + wc * w;
    a->wait_tasks = 1;
    a->demand = isnan(a->demand) || p > a->demand ? p : a->demand;
    /* its own time: at the cores it had (all it wanted where that is unknown) */
    a->own += p < 1 || !(work > 0) ? rt_cores_interval_demand(w, u, wc, 1)
                                   : work / fmin(p, isfinite(had) && had > 0 ? had : p);
    if (p < 1 || !(work > 0)) {
        a->from[1] += rt_cores_interval_demand(w, u, wc, 1);
        return;
    }
    double k = ceil(p);
    int64_t last = k > RT_CORES_MAX ? RT_CORES_MAX : (int64_t)k - 1;
    for (int64_t c = 1; c <= last; c++)
        a->at[c] += work / (double)c;
    if (k <= RT_CORES_MAX)
        a->from[(int64_t)k] += work / p;
}

void rt_cores_add_interval(rt_cores_acc *a, const rt_cores_iv *iv)
{
    double w = iv->w, u = iv->u, had = iv->had;
    if (!(w > 0) || a->failed || !room(a))
        return;
    a->secs += w;
    if (isfinite(iv->cpus))
        a->machine = isnan(a->machine) || iv->cpus > a->machine ? iv->cpus : a->machine;
    if (isfinite(iv->others) && iv->others >= 0) {
        a->others += iv->others * w;
        a->others_secs += w;
    }
    if (!(u >= 0) || !isfinite(u)) {
        a->from[1] += w; /* no CPU figure: the same under any count */
        a->own += w;
        return;
    }
    if (isfinite(had) && had > 0) {
        a->had = isnan(a->had) || had > a->had ? had : a->had;
        u = u > had ? had : u;
    } else {
        had = NAN;
    }
    a->peak = isnan(a->peak) || u > a->peak ? u : a->peak;
    if (iv->wait_cores >= 0 && isfinite(iv->wait_cores)) {
        add_demand(a, w, u, iv->wait_cores, had);
        return;
    }
    a->own += w;
    double wait = NAN;
    if (isfinite(iv->some_pct)) {
        wait = iv->some_pct / 100.0 * w;
        wait = wait < 0 ? 0 : wait > w ? w : wait;
        a->wait = isnan(a->wait) ? wait : a->wait + wait;
        if (iv->machine)
            a->wait_machine = 1;
    }
    /* the first count from which the interval's prediction is the same (k), and that value */
    double k = ceil(u) < 1 ? 1 : ceil(u), same = w;
    if (isfinite(had) && wait > 0) {
        same = w - wait;
        k = fmax(k, floor(had) + 1);
        k = same > 0 ? fmax(k, ceil(w * u / same)) : RT_CORES_MAX + 1; /* waited throughout: never */
    }
    add_from(a, k, same, w, u, had, wait);
}

const rt_cores_table *rt_cores_result(rt_cores_acc *a)
{
    if (isnan(a->peak) || a->failed)
        return NULL;
    double n = fmax(ceil(a->peak) + 1, 2);
    if (isfinite(a->had))
        n = fmax(n, ceil(a->had) + 1);
    if (isfinite(a->demand)) /* where the job's runnable tasks stop gaining (a demand a hair above
                              * a whole count, as a file's rounded figures make it, is that count:
                              * the rows past it are equal) */
        n = fmax(n, ceil(a->demand - DEMAND_SLACK) + 1);
    size_t rows = n > RT_CORES_MAX ? RT_CORES_MAX : (size_t)n;
    if (rows > a->cap_rows) {
        rt_cores_row *grown = realloc(a->rows, rows * sizeof *grown);
        if (!grown)
            return NULL;
        a->rows = grown;
        a->cap_rows = rows;
    }
    double cum = 0;
    for (size_t c = 1; c <= rows; c++) {
        /* past the counts reached: every interval's prediction is settled */
        cum += (int64_t)c <= a->cap + 1 ? a->from[c] : 0;
        rt_cores_row *row = &a->rows[c - 1];
        row->cores = (int64_t)c;
        row->duration_secs = cum + ((int64_t)c <= a->cap ? a->at[c] : 0);
        row->core_hours = rt_core_hours((int64_t)c, row->duration_secs);
        row->wait_bound = isfinite(a->had) && (double)c > a->had;
    }
    a->out = (rt_cores_table){.n = rows,
                              .rows = a->rows,
                              .duration_secs = a->secs,
                              .cores_had = a->had,
                              .peak_cores = a->peak,
                              .wait_secs = a->wait,
                              .wait_from = isnan(a->wait)    ? NULL
                                           : a->wait_tasks   ? "tasks"
                                           : a->wait_machine ? "machine"
                                                             : "group",
                              .own_secs = a->own,
                              .others_cores = a->others_secs > 0 ? a->others / a->others_secs : NAN,
                              .machine_cores = a->machine,
                              .demand_cores = a->demand};
    return &a->out;
}

size_t rt_cores_shared_words(const rt_cores_table *t, char *buf, size_t cap)
{
    if (buf && cap)
        buf[0] = '\0';
    if (!t || !(t->others_cores >= SHARED_CORES) || !buf || !cap)
        return 0;
    int n = isfinite(t->machine_cores)
                ? snprintf(buf, cap, "other work used %.2g of %.0f core%s", t->others_cores, t->machine_cores,
                           t->machine_cores == 1 ? "" : "s")
                : snprintf(buf, cap, "other work used %.2g cores", t->others_cores);
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}
