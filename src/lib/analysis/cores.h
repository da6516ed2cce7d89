/* cores.h - the run's duration under 1, 2, ... cores (rt_cores_table), absorbed one record at a
 * time in constant memory: the statistics (stats.c) keep one; see cores.c for the model. Not
 * public. */
#ifndef RT_ANALYSIS_CORES_H
#define RT_ANALYSIS_CORES_H

#include "../core/core.h"

typedef struct rt_cores_acc {
    /* at[c] (c = 1 .. RT_CORES_MAX): the seconds of the records whose duration still depends on
     * c there; from[c]: seconds that every count from c up gets (a record's duration is the same
     * for every count past some point: it is added once, there) */
    double at[RT_CORES_MAX + 1], from[RT_CORES_MAX + 2];
    double peak;      /* the most cores used over one interval, NaN: none */
    double had;       /* the most cores the run could use, NaN: unknown */
    double wait;      /* seconds some task waited for a CPU, NaN: no pressure figure */
    double secs;      /* the records' seconds */
    int wait_machine; /* some wait was the machine's pressure */
    rt_cores_row rows[RT_CORES_MAX];
    rt_cores_table out;
} rt_cores_acc;

/* Makes a empty. */
void rt_cores_init(rt_cores_acc *a);
/* Absorbs one record standing for w seconds. */
void rt_cores_add(rt_cores_acc *a, const rt_record *r, double w);
/* The table so far (a->out, valid until the next add); NULL when no record had the tree's cores. */
const rt_cores_table *rt_cores_result(rt_cores_acc *a);
/* The predicted duration of one record's interval (dt seconds, u cores used, had the cores it
 * could use (NaN: unknown), wait seconds some task waited (NaN: unknown)) under c cores: the
 * model, alone, for its tests. */
double rt_cores_interval(double dt, double u, double had, double wait, int64_t c);

#endif
