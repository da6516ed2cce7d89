/* fold.h - a rate's latest value held back one record, so that a record that stands for less
 * than half the time of the one before it (the short last interval after the job ended), or a
 * first record that stands for less than half the time of the next, is folded into its
 * neighbour (the time-weighted mean of both): the peaks and percentiles of rates (cores, stall
 * shares) are then of intervals of the run's own length, not of a few milliseconds' noise (a
 * process's last reaped millisecond read as 0.34 cores). Means are the same either way. Used
 * by the statistics (stats.c, usage.c); the report's buckets take the same measure of short
 * (rt_fold_short). Not public. */
#ifndef RT_ANALYSIS_FOLD_H
#define RT_ANALYSIS_FOLD_H

#include <math.h>
#include <stdbool.h>

typedef struct rt_fold {
    double x, w; /* the value held and the seconds it stands for; w 0: none */
    double last; /* the seconds the latest record added stands for alone: a record is short
                  * beside its neighbour, not beside a window that folding has grown */
    bool first;  /* the value held is the run's first */
    bool seen;   /* a value was ever added */
} rt_fold;

/* Whether a record standing for w seconds is short beside one standing for before: less than
 * half of it (the statistics' fold here, and the report's buckets, report.c). */
static inline bool rt_fold_short(double w, double before)
{
    return w < 0.5 * before;
}

/* Adds x standing for w seconds (x not finite or w not above 0: ignored). Returns true when it
 * releases the value held before into *rx, *rw (then x is held in its place); false when x was
 * folded or is the first. */
static inline bool rt_fold_add(rt_fold *f, double x, double w, double *rx, double *rw)
{
    if (!isfinite(x) || !(w > 0))
        return false;
    if (f->w > 0 && (rt_fold_short(w, f->last) || (f->first && rt_fold_short(f->last, w)))) {
        f->x = (f->x * f->w + x * w) / (f->w + w);
        f->w += w;
        f->last = w;
        f->first = false;
        return false;
    }
    bool out = f->w > 0;
    if (out) {
        *rx = f->x;
        *rw = f->w;
    }
    f->first = !f->seen;
    f->seen = true;
    f->x = x;
    f->w = w;
    f->last = w;
    return out;
}

#endif
