/* usage.h - gpu_tracker's view of a run (rt_usage), absorbed one record at a time in constant
 * memory: peaks and time-weighted means of the machine's and the tree's parts' memory, and
 * utilization as sums of percentages and as shares of the hardware expected to be used.
 * Kept by the statistics (stats.c); see usage.c. Not public. */
#ifndef RT_ANALYSIS_USAGE_H
#define RT_ANALYSIS_USAGE_H

#include "../core/core.h"
#include "fold.h"

/* A figure's time-weighted sum and weight, and its peak (NaN: none yet); a rate's latest value
 * is held back for the peak (fold.h) and counted in it when the view is read. */
typedef struct rt_meanmax {
    double wsum, w, max;
    rt_fold held;
} rt_meanmax;

typedef struct rt_usage_acc {
    rt_usage out;
    double expected_cores; /* 0: each record's cores */
    char **uuids;          /* the GPUs chosen (NULL: all) */
    size_t nuuids;
    size_t added;          /* records absorbed */
    rt_meanmax ram_system, ram[3][3]; /* [part][total, private, shared] */
    rt_meanmax gpu_ram_system, gpu_ram[3];
    rt_meanmax cpu_system[2], cpu[3][2]; /* [sum, hardware] */
    rt_meanmax gpu[2];
    rt_meanmax threads[3];
} rt_usage_acc;

/* Makes a empty (counting every core and GPU). */
void rt_usage_init(rt_usage_acc *a);
/* Sets expected_cores (0: all) and the GPUs chosen (copied; none: all). Returns 0, -1 on no
 * memory (a is then unchanged). */
int rt_usage_configure(rt_usage_acc *a, double expected_cores, const char *const *uuids, size_t n);
/* Absorbs one record standing for w seconds. */
void rt_usage_add(rt_usage_acc *a, const rt_record *r, double w);
/* The view so far (a->out, valid until the next add). */
const rt_usage *rt_usage_result(rt_usage_acc *a);
/* Frees what a owns. */
void rt_usage_free(rt_usage_acc *a);

#endif
