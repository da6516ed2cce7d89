/* floors.c - what a run that was stopped at one of its limits puts under the next ask (see
 * floors.h): above the memory limit an OOM-killed run died at, or the memory.high it stalled at,
 * its need is unknown, and an ask of the limit plus a little gets the next run killed again; the
 * ask is twice the limit until a run shows the need. A run that ran to its time limit, or was
 * ended by a scheduler's signal where no limit is known: its duration is a floor, and the time
 * asked twice it. */
#include <math.h>
#include <signal.h>
#include <stdbool.h>

#include "../core/core.h"
#include "floors.h"
#include "need.h"

/* Held at memory.high: a need within this share of it ... */
#define HIGH_NEAR 0.9
/* ... and tasks all stalled on memory (pressure "full", the group's own) this share of the time
 * (percent). */
#define HIGH_STALL_PCT 5.0
/* Ran to its time limit: this share of it used (percent). */
#define TIME_ENDED_PCT 99.0

/* max(a, b) where NaN means "no figure" */
static double max_known(double a, double b)
{
    return isnan(a) || b > a ? b : a;
}

double rt_run_memory_need(const rt_summary *s)
{
    if (s->memory_need.source != RT_NEED_UNKNOWN && isfinite(s->memory_need.mib))
        return s->memory_need.mib;
    rt_need m, v;
    rt_need_of(s, &m, &v);
    return m.mib;
}

/* Why s puts a floor under the memory ask (RT_FLOOR_*), and the limit it was stopped at. */
static int stopped(const rt_summary *s, double need, double *limit)
{
    if (s->oom_kills > 0) {
        *limit = s->memory_limit_mib > 0 ? s->memory_limit_mib : NAN;
        return RT_FLOOR_OOM;
    }
    double high = s->memory_high_mib;
    /* the stalls the job's own (the group's pressure): the machine's may be other work's */
    if (high > 0 && need >= HIGH_NEAR * high && s->pressure_memory_full_pct.mean >= HIGH_STALL_PCT &&
        !(s->pressure_group == 0)) {
        *limit = high;
        return RT_FLOOR_HIGH;
    }
    *limit = NAN;
    return RT_FLOOR_NONE;
}

void rt_mem_floor_of(const rt_summary *const *runs, size_t n, size_t i, rt_mem_floor *f)
{
    const rt_summary *s = runs[i];
    double need = rt_run_memory_need(s);
    double limit;
    int why = stopped(s, need, &limit);
    *f = (rt_mem_floor){.why = why, .limit_mib = limit, .reached_mib = NAN, .stall_pct = s->pressure_memory_full_pct.mean,
                        .floor_mib = NAN};
    if (f->why == RT_FLOOR_NONE)
        return;
    f->reached_mib = max_known(max_known(need, s->process_pss_mib.peak), s->process_memory_peak_mib);
    double known = isnan(f->limit_mib) ? f->reached_mib : f->limit_mib; /* what it was stopped at */
    if (isnan(known))
        return;
    for (size_t j = 0; j < n && !f->learned; j++) { /* a run that went past it, unstopped */
        double other_need = runs[j] ? rt_run_memory_need(runs[j]) : NAN, other_limit;
        if (j == i || !runs[j] || stopped(runs[j], other_need, &other_limit) != RT_FLOOR_NONE)
            continue;
        double lim = runs[j]->memory_limit_mib; /* killed with no limit: only a need above it shows it */
        f->learned = other_need > known || (!isnan(f->limit_mib) && lim > known);
    }
    double base = f->learned ? max_known(f->reached_mib, known) * 1.2 : 2.0 * known;
    f->floor_mib = (double)rt_round_memory_mib(base);
}

/* Whether the signal that ended a run stops it short of its end: a scheduler's SIGTERM (a time
 * limit, a preemption; the tracker passes its own on), RLIMIT_CPU's SIGXCPU, a SIGKILL the OOM
 * killer did not send (the grace after a SIGTERM ran out). */
static bool stopped_short(const rt_summary *s)
{
    int sig = isfinite(s->end_signal) ? (int)s->end_signal : 0;
    return sig == SIGTERM || sig == SIGXCPU || (sig == SIGKILL && !(s->oom_kills > 0));
}

int rt_time_floor_why(const rt_summary *s)
{
    if (s->time_limit_used_pct >= TIME_ENDED_PCT && s->time_limit_secs > 0)
        return RT_TIME_FLOOR_LIMIT;
    if (stopped_short(s) && s->duration_secs > 0)
        return RT_TIME_FLOOR_SIGNAL;
    return RT_TIME_FLOOR_NONE;
}

double rt_time_floor_of(const rt_summary *s)
{
    switch (rt_time_floor_why(s)) {
    case RT_TIME_FLOOR_LIMIT:
        return max_known(s->duration_secs, s->time_limit_used_pct / 100.0 * s->time_limit_secs);
    case RT_TIME_FLOOR_SIGNAL:
        return s->duration_secs;
    default:
        return NAN;
    }
}
