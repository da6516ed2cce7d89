/* histogram.c - one figure's time-weighted mean, peak and percentiles in constant memory: a
 * log-bucketed histogram (128 linear sub-buckets per power of two, bucket found from the
 * double's exponent and top mantissa bits, no log() call), see histogram.h for the bound. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "histogram.h"

void rt_hist_init(rt_hist *h)
{
    memset(h, 0, sizeof *h);
}

/* The value bucket b stands for, clamped to what was seen. */
static double bucket_value(const rt_hist *h, size_t b)
{
    if (b == 0)
        return 0;
    if (b == RT_HIST_BUCKETS - 1)
        return h->peak;
    size_t k = b - 1;
    double mid = ldexp(1.0 + ((double)(k % RT_HIST_SUB) + 0.5) / RT_HIST_SUB,
                       (int)(k / RT_HIST_SUB) + RT_HIST_MIN_EXP);
    if (mid > h->peak)
        mid = h->peak;
    if (mid < h->least)
        mid = h->least;
    return mid;
}

/* Fills out[i] with the percentile qs[i] (qs ascending) in one pass over the buckets. */
static void percentiles(const rt_hist *h, const double *qs, double *out, size_t n)
{
    size_t i = 0;
    double cum = 0;
    for (size_t b = 0; b < RT_HIST_BUCKETS && i < n; b++) {
        if (h->w[b] == 0)
            continue;
        cum += h->w[b];
        while (i < n && cum >= qs[i] * h->weight)
            out[i++] = bucket_value(h, b);
    }
    /* rounding left the total a hair short of q * weight: the last value there is */
    for (; i < n; i++)
        out[i] = h->peak;
}

double rt_hist_percentile(const rt_hist *h, double q)
{
    if (h->weight <= 0)
        return NAN;
    double v;
    percentiles(h, &q, &v, 1);
    return v;
}

void rt_hist_dist(const rt_hist *h, rt_dist *out)
{
    if (h->weight <= 0) {
        out->mean = out->peak = out->p50 = out->p95 = NAN;
        return;
    }
    static const double qs[2] = {0.50, 0.95};
    double p[2];
    percentiles(h, qs, p, 2);
    out->mean = h->weighted / h->weight;
    out->peak = h->peak;
    out->p50 = p[0];
    out->p95 = p[1];
}
