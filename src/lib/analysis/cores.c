/* cores.c - the run's duration under 1, 2, ... cores, from its records (rt_cores_table; the
 * model is written in the public header and docs/answers.md). Each record adds its interval's
 * predicted seconds to every count; since an interval's prediction stops changing past some
 * count (the work fits, and any waits are gone), it is added to each count below that point and
 * once to a running sum from it: a record costs a few steps, not RT_CORES_MAX. */
#include <math.h>
#include <string.h>

#include "cores.h"

void rt_cores_init(rt_cores_acc *a)
{
    memset(a, 0, sizeof *a);
    a->peak = a->had = a->wait = NAN;
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

void rt_cores_add(rt_cores_acc *a, const rt_record *r, double w)
{
    if (!(w > 0))
        return;
    a->secs += w;
    double u = r->process_cores;
    if (!(u >= 0) || !isfinite(u)) {
        a->from[1] += w; /* no CPU figure: the same under any count */
        return;
    }
    double had = r->cgroup_cpu_quota_cores > 0 ? r->cgroup_cpu_quota_cores : r->cpu_count > 0 ? r->cpu_count : NAN;
    if (isfinite(had)) {
        a->had = isnan(a->had) || had > a->had ? had : a->had;
        u = u > had ? had : u;
    }
    a->peak = isnan(a->peak) || u > a->peak ? u : a->peak;
    double wait = NAN;
    if (isfinite(r->pressure_cpu_some_pct)) {
        wait = r->pressure_cpu_some_pct / 100.0 * w;
        wait = wait < 0 ? 0 : wait > w ? w : wait;
        a->wait = isnan(a->wait) ? wait : a->wait + wait;
        if (!(r->pressure_group == 1.0))
            a->wait_machine = 1;
    }
    /* the first count from which the interval's prediction is the same (k), and that value */
    double k = ceil(u) < 1 ? 1 : ceil(u), same = w;
    if (isfinite(had) && wait > 0) {
        same = w - wait;
        k = fmax(k, floor(had) + 1);
        k = same > 0 ? fmax(k, ceil(w * u / same)) : RT_CORES_MAX + 1; /* waited throughout: never */
    }
    int64_t last = k > RT_CORES_MAX ? RT_CORES_MAX : (int64_t)k - 1;
    for (int64_t c = 1; c <= last; c++)
        a->at[c] += rt_cores_interval(w, u, had, wait, c);
    if (k <= RT_CORES_MAX)
        a->from[(int64_t)k] += same;
}

const rt_cores_table *rt_cores_result(rt_cores_acc *a)
{
    if (isnan(a->peak))
        return NULL;
    double n = fmax(ceil(a->peak) + 1, 2);
    if (isfinite(a->had))
        n = fmax(n, ceil(a->had) + 1);
    size_t rows = n > RT_CORES_MAX ? RT_CORES_MAX : (size_t)n;
    double cum = 0;
    for (size_t c = 1; c <= rows; c++) {
        cum += a->from[c];
        rt_cores_row *row = &a->rows[c - 1];
        row->cores = (int64_t)c;
        row->duration_secs = cum + a->at[c];
        row->core_hours = (double)c * row->duration_secs / 3600.0;
        row->wait_bound = isfinite(a->had) && (double)c > a->had;
    }
    a->out = (rt_cores_table){.n = rows,
                              .rows = a->rows,
                              .duration_secs = a->secs,
                              .cores_had = a->had,
                              .peak_cores = a->peak,
                              .wait_secs = a->wait,
                              .wait_from = isnan(a->wait)    ? NULL
                                           : a->wait_machine ? "machine"
                                                             : "group"};
    return &a->out;
}
