/* floors.h - what a run that was stopped at one of its limits puts under the next ask
 * (docs/answers.md, "After a kill, ask to learn"): a run OOM-killed, or held at its memory.high
 * with reclaim stalls, needed more memory than it was let have, by an amount nobody saw; a run
 * that ran to its time limit needed more time. recommend.c applies the floors, notes.c says
 * them. Not public. */
#ifndef RT_ANALYSIS_FLOORS_H
#define RT_ANALYSIS_FLOORS_H

#include "../core/core.h"

/* Why a run puts a floor under the memory ask. */
enum {
    RT_FLOOR_NONE = 0, /* none: not killed, not held at memory.high */
    RT_FLOOR_OOM = 1,  /* OOM-killed (rt_summary.oom_kills > 0) */
    RT_FLOOR_HIGH = 2, /* held at its memory.high with reclaim stalls, not killed */
};

/* The memory floor of one run. */
typedef struct rt_mem_floor {
    int why;            /* RT_FLOOR_* */
    double limit_mib;   /* the limit it died or stalled at (memory.max, memory.high); NaN: no
                         * limit of its own known (the machine's OOM killer) */
    double reached_mib; /* the most it was seen to hold: its need, its PSS peak, its group's
                         * charge; NaN: nothing known */
    double stall_pct;   /* RT_FLOOR_HIGH: its memory pressure "full", percent of the time */
    int learned;        /* 1: another run of those given, not killed nor held, ran under a larger
                         * limit (or held more without one): the need above this run's limit is
                         * known from it, and the floor is the limit plus 20% */
    double floor_mib;   /* the floor, rounded (rt_round_memory_mib): learned, the most it
                         * reached or the limit plus 20%; else twice the limit (twice the most
                         * it reached without one), so that the next run shows the need; NaN:
                         * no floor (nothing known, or no floor at all) */
} rt_mem_floor;

/* The memory floor run runs[i] of runs[0..n) puts under the ask. */
void rt_mem_floor_of(const rt_summary *const *runs, size_t n, size_t i, rt_mem_floor *f);

/* The run's need of memory (rt_summary.memory_need, or for a summary from a history written
 * before 0.9 the rule's figure); NaN: unknown. */
double rt_run_memory_need(const rt_summary *s);

/* Why a run puts a floor under the time asked. */
enum {
    RT_TIME_FLOOR_NONE = 0,   /* none: it ended on its own */
    RT_TIME_FLOOR_LIMIT = 1,  /* it ran to its time limit (it used 99% of it or more) */
    RT_TIME_FLOOR_SIGNAL = 2, /* no limit known, and a signal ended it short (rt_summary.end_signal:
                               * SIGTERM, SIGXCPU, SIGKILL without an OOM kill) */
};

/* Why s puts a floor under the time asked (RT_TIME_FLOOR_*). */
int rt_time_floor_why(const rt_summary *s);

/* A run stopped before its end (rt_time_floor_why): the seconds it ran, a floor of its need
 * (its records' duration, or at a time limit the time from the job's start to its end where
 * longer); NaN for any other run. The time asked is at least twice it. */
double rt_time_floor_of(const rt_summary *s);

#endif
