/* histogram.h - one figure's running statistics (time-weighted mean, peak) and a fixed-size
 * log-bucketed histogram for its time-weighted percentiles (histogram.c). Not public. */
#ifndef RT_HISTOGRAM_H
#define RT_HISTOGRAM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "resource_tracker.h"

/* Buckets: one for values below RT_HIST_MIN (they count as 0), then RT_HIST_SUB linear
 * sub-buckets in each power of two from 2^RT_HIST_MIN_EXP to 2^RT_HIST_MAX_EXP, then one for
 * larger values. A value v in [2^e, 2^(e+1)) falls in a bucket 2^e/RT_HIST_SUB wide whose
 * midpoint is at most 2^e/(2*RT_HIST_SUB) away: a relative error of at most
 * 1/(2*RT_HIST_SUB) = 1/256 = 0.390625%. */
#define RT_HIST_SUB_BITS 7
#define RT_HIST_SUB (1 << RT_HIST_SUB_BITS)
#define RT_HIST_MIN 0.001
#define RT_HIST_MIN_EXP (-10) /* 2^-10 = 0.000977 < RT_HIST_MIN */
#define RT_HIST_MAX_EXP 31    /* 2^31 = 2.1e9 (MiB: 2 PiB; cores, GPUs: far beyond) */
#define RT_HIST_BUCKETS ((RT_HIST_MAX_EXP - RT_HIST_MIN_EXP) * RT_HIST_SUB + 2)

typedef struct rt_hist {
    double weight;      /* total weight of the values added; 0: none */
    double weighted;    /* sum of weight * value */
    double peak, least; /* the largest and smallest value added (least after clamping to 0) */
    double w[RT_HIST_BUCKETS];
} rt_hist;

/* Empties h (all zero; the struct is plain data, so calloc'd memory is already empty). */
void rt_hist_init(rt_hist *h);

/* The weighted percentile q (0 < q <= 1): the smallest bucket value v such that the weight of
 * values <= v is at least q of the total, as the bucket's midpoint clamped to
 * [least, peak]; 0 for values below RT_HIST_MIN; NaN when h is empty. Within 1/256 relative
 * of the exact percentile for values from RT_HIST_MIN to 2^RT_HIST_MAX_EXP; above that, the
 * peak. */
double rt_hist_percentile(const rt_hist *h, double q);

/* The bucket of x (x >= 0, finite): 0 below RT_HIST_MIN, the last one from 2^RT_HIST_MAX_EXP. */
static inline size_t rt_hist_bucket(double x)
{
    if (x < RT_HIST_MIN)
        return 0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023; /* x >= 0.001 is a normal double */
    if (e >= RT_HIST_MAX_EXP)
        return RT_HIST_BUCKETS - 1;
    size_t sub = (size_t)((bits >> (52 - RT_HIST_SUB_BITS)) & (RT_HIST_SUB - 1));
    return 1 + (size_t)(e - RT_HIST_MIN_EXP) * RT_HIST_SUB + sub;
}

/* Adds x with weight w (> 0). NaN and infinite x are ignored; negative x counts as 0 in the
 * percentiles, -0 as 0 everywhere. O(1), no allocation; inline, as it runs for every figure
 * of every record. */
static inline void rt_hist_add(rt_hist *h, double x, double w)
{
    if (!isfinite(x))
        return;
    x += 0.0; /* -0 + 0 is +0: a peak of "-0" would print as "-0.00" */
    if (h->weight == 0) {
        h->peak = x;
        h->least = x < 0 ? 0 : x;
    } else {
        if (x > h->peak)
            h->peak = x;
        if (x < h->least)
            h->least = x < 0 ? 0 : x;
    }
    h->weight += w;
    h->weighted += w * x;
    h->w[rt_hist_bucket(x < 0 ? 0 : x)] += w;
}

/* mean, peak, p50 and p95 of h (all NaN when empty) into *out. */
void rt_hist_dist(const rt_hist *h, rt_dist *out);

#endif
