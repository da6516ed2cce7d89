/* cores.h - the run's duration under 1, 2, ... cores (rt_cores_table), absorbed one record at a
 * time in constant memory: the statistics (stats.c) keep one; see cores.c for the model. Not
 * public. */
#ifndef RT_ANALYSIS_CORES_H
#define RT_ANALYSIS_CORES_H

#include <stdbool.h>

#include "../core/core.h"

typedef struct rt_cores_acc {
    /* at[c] (c = 1 .. cap): the seconds of the intervals whose duration still depends on c
     * there; from[c] (c = 1 .. cap + 1): seconds that every count from c up gets (an interval's
     * duration is the same for every count past some point: it is added once, there). Made
     * for every count up to RT_CORES_MAX at the first interval (4 KiB; cores.c's room()) */
    double *at, *from;
    int64_t cap;
    int failed;       /* out of memory once: no table */
    double peak;      /* the most cores used over one interval, NaN: none */
    double had;       /* the most cores the run could use, NaN: unknown */
    double wait;      /* seconds some task waited for a CPU, NaN: no pressure figure */
    double secs;      /* the intervals' seconds */
    int wait_machine; /* some wait was the machine's pressure */
    int wait_tasks;   /* some interval had its tasks' own waits (schedstat: the demand model) */
    double own;       /* the intervals' predicted seconds at the cores the run had */
    double others, others_secs; /* core-seconds other work used beside the job, and the seconds
                                 * that figure covers */
    double machine;   /* the most cores the machine had, NaN: unknown */
    double demand;    /* the most cores the job's runnable tasks wanted over one interval */
    rt_cores_row *rows;
    size_t cap_rows;
    rt_cores_table out;
} rt_cores_acc;

/* Makes a empty (it holds no memory yet). */
void rt_cores_init(rt_cores_acc *a);
/* Frees what a holds (then empty again). */
void rt_cores_free(rt_cores_acc *a);
/* Absorbs one record standing for w seconds. */
void rt_cores_add(rt_cores_acc *a, const rt_record *r, double w);
/* One interval as the model takes it: w seconds over which u cores were used (NaN: unknown),
 * wait_cores of the job's tasks waited for a CPU on average (schedstat's run delay per second;
 * NaN: unknown, then some_pct stands in), had the most the run could use then (NaN: unknown),
 * some_pct the CPU pressure "some" share (NaN: none), machine whether that share is the
 * machine's rather than the job group's, others the cores other work used beside the job (NaN:
 * unknown), cpus the machine's cores (NaN: unknown). */
typedef struct rt_cores_iv {
    double w, u, wait_cores, had, some_pct;
    bool machine;
    double others, cpus;
} rt_cores_iv;
/* Absorbs one interval. */
void rt_cores_add_interval(rt_cores_acc *a, const rt_cores_iv *iv);
/* Record r's interval of w seconds (u: its CPU in cores, NaN: r's own). */
rt_cores_iv rt_cores_iv_of(const rt_record *r, double w, double u);
/* The table so far (a->out, valid until the next add); NULL when no interval had the tree's
 * cores, or memory ran out. */
const rt_cores_table *rt_cores_result(rt_cores_acc *a);
/* The most cores record r's run could use: its quota, else the machine's cores; NaN: unknown. */
double rt_cores_had(const rt_record *r);
/* Table t's predicted duration under c cores (c >= 1; past its last row, the last: only waits
 * fall away beyond it, so the last row is the slower side). */
double rt_cores_duration_at(const rt_cores_table *t, int64_t c);
/* The core-hours of c cores for secs seconds: the one product of cores and time every table row,
 * recommendation's cost and history row read back is (a price times it is money). */
static inline double rt_core_hours(int64_t c, double secs)
{
    return (double)c * secs / 3600.0;
}
/* The predicted duration of one record's interval (dt seconds, u cores used, had the cores it
 * could use (NaN: unknown), wait seconds some task waited (NaN: unknown)) under c cores: the
 * model, alone, for its tests. */
double rt_cores_interval(double dt, double u, double had, double wait, int64_t c);
/* The same from the job's own demand (an interval with its tasks' waits known): dt seconds,
 * u cores used, wait_cores of its tasks waiting on average: with p = u + wait_cores tasks
 * runnable, under c cores its CPU work takes u dt / min(p, c); an interval with fewer than one
 * task runnable on average takes dt less its waits (a chain of one: its time off a CPU stays). */
double rt_cores_interval_demand(double dt, double u, double wait_cores, int64_t c);

#endif
