/* report.c - collects a run's records for the report's charts in constant memory: time
 * buckets holding, per series, a time-weighted mean and the min and max of what they stand
 * for; past RPT_CAP buckets, neighbours merge pairwise (so a one-second spike survives as a max). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "report_int.h"

static void bucket_init(rpt_bucket *b, double t0, double t1, bool gap)
{
    b->t0 = t0;
    b->t1 = t1;
    b->gap = gap;
    for (size_t k = 0; k < RPT_SERIES; k++) {
        b->c[k].sum = b->c[k].weight = 0;
        b->c[k].min = INFINITY;
        b->c[k].max = -INFINITY;
    }
}

rt_report *rt_report_new(void)
{
    rt_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->b = malloc(RPT_CAP * sizeof *r->b);
    if (!r->b) {
        free(r);
        return NULL;
    }
    return r;
}

void rt_report_free(rt_report *r)
{
    if (!r)
        return;
    free(r->b);
    free(r);
}

void rpt_bucket_merge(rpt_bucket *dst, const rpt_bucket *src)
{
    if (src->t1 > dst->t1)
        dst->t1 = src->t1;
    for (size_t k = 0; k < RPT_SERIES; k++) {
        rpt_cell *d = &dst->c[k];
        const rpt_cell *s = &src->c[k];
        d->sum += s->sum;
        d->weight += s->weight;
        d->min = fminf(d->min, s->min);
        d->max = fmaxf(d->max, s->max);
    }
}

/* Halves the bucket count: bucket 2i+1 folds into 2i, except across a gap (the pass that
 * honours gaps is repeated without them when gaps keep the count too high), and widens the
 * buckets to match. */
static void compact(rt_report *r)
{
    for (int pass = 0; pass < 2 && r->n > RPT_CAP * 3 / 4; pass++) {
        size_t out = 0;
        for (size_t i = 0; i < r->n; i++) {
            if (out > 0 && (i % 2 == 1) && (pass == 1 || !r->b[i].gap)) {
                rpt_bucket_merge(&r->b[out - 1], &r->b[i]);
                continue;
            }
            if (out != i)
                r->b[out] = r->b[i];
            out++;
        }
        r->n = out;
    }
    double span = r->b[r->n - 1].t1 - r->b[0].t0;
    double w = span / (RPT_CAP / 2.0);
    r->width = fmax(2 * r->width, isfinite(w) ? w : 0);
}

/* value / seconds, NaN when either is unknown */
static double rate(double v, double secs)
{
    return isnan(secs) ? NAN : v / secs;
}

void rt_report_add(rt_report *r, const rt_record *rec)
{
    if (!r || !rec || !(fabs(rec->timestamp_secs) <= RPT_MAX_SECS)) /* NaN too */
        return;
    double iv = rec->interval_secs;
    if (!(iv > 0 && iv <= RPT_MAX_SECS))
        iv = NAN;
    double t1 = rec->timestamp_secs, t0 = isnan(iv) ? t1 : t1 - iv;
    double weight = isnan(iv) ? 1 : iv;
    double v[RPT_SERIES] = {
        [RPT_JOB_CORES] = rec->process_cores,
        [RPT_CPU_CORES] = rec->cpu_cores,
        [RPT_JOB_PSS] = rec->process_pss_mib,
        [RPT_JOB_RSS] = rec->process_rss_mib,
        [RPT_MEM_USED] = rec->memory_used_mib,
        [RPT_GPU] = rec->gpu_count > 0 ? rec->gpu_usage : NAN,
        [RPT_JOB_GPU] = rec->process_gpu_usage,
        [RPT_VRAM] = rec->gpu_count > 0 ? rec->gpu_vram_mib : NAN,
        [RPT_JOB_VRAM] = rec->process_gpu_vram_mib,
        [RPT_DISK_READ] = rate(rec->disk_read_bytes, iv),
        [RPT_DISK_WRITE] = rate(rec->disk_write_bytes, iv),
        [RPT_JOB_READ] = rate(rec->process_read_bytes, iv),
        [RPT_JOB_WRITE] = rate(rec->process_write_bytes, iv),
        [RPT_NET_RECV] = rate(rec->net_recv_bytes, iv),
        [RPT_NET_SENT] = rate(rec->net_sent_bytes, iv),
        [RPT_DISK_SPACE] = rec->disk_space_used_bytes,
    };
    if (rec->gpu_count > 0)
        r->gpu_seen = true;
    r->records++;

    rpt_bucket *last = r->n ? &r->b[r->n - 1] : NULL;
    if (!last || t1 < last->t1 || t1 - last->t0 > r->width) {
        if (r->n == RPT_CAP) {
            compact(r);
            last = &r->b[r->n - 1];
        }
    }
    if (!last || t1 < last->t1 || t1 - last->t0 > r->width) {
        /* a gap: time went back (another file), or a pause well past the interval */
        bool gap = last && (t1 < last->t1 || t0 - last->t1 > 3 * weight + r->width);
        last = &r->b[r->n++];
        bucket_init(last, t0, t1, gap);
    }
    if (t1 > last->t1)
        last->t1 = t1;
    for (size_t k = 0; k < RPT_SERIES; k++) {
        if (!isfinite(v[k]))
            continue;
        rpt_cell *c = &last->c[k];
        c->sum += v[k] * weight;
        c->weight += weight;
        c->min = fminf(c->min, (float)v[k]);
        c->max = fmaxf(c->max, (float)v[k]);
    }
}
