/* gpu_ask.c - the GPU ask of a recommendation: how many GPUs (those that did work), how much
 * memory each (the smallest memory of the shipped table of GPU models that holds the most a run
 * held on one GPU plus headroom), which models have it, whether a smaller GPU than the job had
 * would do; and the ask in words, with its notes (the models, the GPUs left out, each
 * scheduler's way to ask for GPU memory, what the smaller GPU would save) and Kubernetes' node
 * affinity on the label NVIDIA's GPU feature discovery sets. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu_ask.h"

/* A GPU that used less than this share of its memory, and whose SMs (or, without GPM, the GPU)
 * were active less than SMALL_ACTIVE_PCT of the time, was far larger than the job. */
#define SMALL_MEMORY_SHARE 0.5
#define SMALL_ACTIVE_PCT 25.0

/* max(a, b) where NaN means "no figure" */
static double max_known(double a, double b)
{
    return isnan(a) || b > a ? b : a;
}

int64_t rt_gpu_ask_size(double need_mib, const char **models, size_t max, size_t *count)
{
    for (size_t i = 0; i < max; i++)
        models[i] = NULL;
    if (count)
        *count = 0;
    if (!(need_mib > 0))
        return 0;
    /* need_mib is a product of doubles: a need meant to sit exactly at a size may come out a
     * hair above it, so within a thousandth of a MiB counts as held */
    double size = INFINITY;
    for (size_t i = 0; i < rt_gpu_models_count; i++)
        if (rt_gpu_models[i].memory_mib >= need_mib - 1e-3 && rt_gpu_models[i].memory_mib < size)
            size = rt_gpu_models[i].memory_mib;
    if (isinf(size))
        return rt_round_memory_mib(need_mib);
    /* the models with at least that much, smallest first: a selection by passes over the
     * distinct sizes (the table is small) */
    size_t n = 0, all = 0;
    for (double at = size; isfinite(at);) {
        double next = INFINITY;
        for (size_t i = 0; i < rt_gpu_models_count; i++) {
            double m = rt_gpu_models[i].memory_mib;
            if (m == at) {
                if (n < max)
                    models[n++] = rt_gpu_models[i].model;
                all++;
            } else if (m > at && m < next) {
                next = m;
            }
        }
        at = next;
    }
    if (count)
        *count = all;
    return (int64_t)size;
}

bool rt_gpu_ask_known(const rt_recommendation *rec)
{
    return rec && rec->struct_size >= offsetof(rt_recommendation, gpu_smaller) + sizeof rec->gpu_smaller;
}

void rt_gpu_fold_init(rt_gpu_fold *f)
{
    *f = (rt_gpu_fold){.held = NAN, .did = NAN, .per_gpu = {NAN, RT_NEED_UNKNOWN, 0}, .had_mib = NAN,
                       .sm_pct = NAN, .busy_pct = NAN};
}

void rt_gpu_fold_run(rt_gpu_fold *f, const rt_summary *s, const rt_need *vram)
{
    double used = s->process_gpus_used;
    if (!(used > 0))
        return;
    f->held = max_known(f->held, used);
    f->did = max_known(f->did, isfinite(s->process_gpus_busy) ? s->process_gpus_busy : used);
    /* what one GPU held: on one GPU the run's VRAM need (NVML accounting's peak counts what the
     * samples missed); on several, the most the tree held on one of them (the need is the
     * whole tree's, over all of them) */
    double one = s->process_gpu_vram_per_gpu_peak_mib;
    rt_need n = {NAN, RT_NEED_UNKNOWN, 0};
    if (used <= 1 && vram->source != RT_NEED_UNKNOWN && isfinite(vram->mib))
        n = *vram;
    if (isfinite(one) && one >= 0 && !(one <= n.mib))
        n = (rt_need){one, RT_NEED_VRAM, 1};
    if (n.source == RT_NEED_UNKNOWN && vram->source != RT_NEED_UNKNOWN && isfinite(vram->mib))
        n = *vram; /* several GPUs and no figure per GPU: the whole need, the safe side */
    if (n.source != RT_NEED_UNKNOWN && !(n.mib <= f->per_gpu.mib))
        f->per_gpu = n;
    if (s->gpu_count > 0 && s->gpu_vram_total_mib > 0)
        f->had_mib = max_known(f->had_mib, s->gpu_vram_total_mib / s->gpu_count);
    if (isfinite(s->gpu_sm_active_pct.mean))
        f->sm_pct = max_known(f->sm_pct, s->gpu_sm_active_pct.mean);
    if (isfinite(s->process_gpu_usage.mean))
        f->busy_pct = max_known(f->busy_pct, 100.0 * s->process_gpu_usage.mean / (used > 1 ? used : 1));
}

void rt_gpu_fold_finish(const rt_gpu_fold *f, double grow, rt_recommendation *r)
{
    r->gpu_held = f->held > 0 ? (int64_t)ceil(f->held) : 0;
    /* the GPUs that did work, at least one of those held: a job that held a GPU and did nothing
     * on it may still need one to start (the notes say when none did work) */
    int64_t did = isfinite(f->did) ? (int64_t)ceil(f->did) : r->gpu_held;
    r->gpu_busy = did > r->gpu_held ? r->gpu_held : did;
    r->gpu = r->gpu_held == 0 ? 0 : r->gpu_busy < 1 ? 1 : r->gpu_busy;
    r->vram_per_gpu_need_mib = f->per_gpu.mib;
    r->vram_per_gpu_source = f->per_gpu.source;
    r->vram_per_gpu_mib =
        r->gpu > 0 ? rt_gpu_ask_size(f->per_gpu.mib * grow, r->gpu_models, RT_ARRAY_LEN(r->gpu_models),
                                     &r->gpu_models_count)
                   : 0;
    if (r->gpu == 0)
        rt_gpu_ask_size(NAN, r->gpu_models, RT_ARRAY_LEN(r->gpu_models), &r->gpu_models_count);
    r->vram_per_gpu_gib = (double)r->vram_per_gpu_mib / 1024.0;
    r->gpu_memory_had_mib = f->had_mib;
    r->gpu_sm_active_pct = f->sm_pct;
    r->gpu_busy_pct = f->busy_pct;
    double active = isfinite(f->sm_pct) ? f->sm_pct : f->busy_pct;
    r->gpu_smaller = r->vram_per_gpu_mib > 0 && f->per_gpu.mib < SMALL_MEMORY_SHARE * f->had_mib &&
                     active < SMALL_ACTIVE_PCT && (double)r->vram_per_gpu_mib < f->had_mib;
}

/* GiB rounded down to a tenth, ".0" left out: never more than the memory it stands for
 * (46068 MiB is "44.9", not "45"). */
static const char *gib_floor(double mib, char *b, size_t cap)
{
    double t = floor(mib / 1024.0 * 10.0 + 1e-9) / 10.0;
    snprintf(b, cap, fmod(t, 1.0) < 0.05 ? "%.0f" : "%.1f", t);
    return b;
}

size_t rt_recommendation_gpu_words(const rt_recommendation *rec, char *buf, size_t cap)
{
    if (buf && cap)
        buf[0] = '\0';
    if (!rt_gpu_ask_known(rec) || rec->gpu <= 0)
        return 0;
    long long g = (long long)rec->gpu;
    char size[32];
    int n;
    if (rec->vram_per_gpu_mib > 0 && isfinite(rec->vram_per_gpu_need_mib))
        n = snprintf(buf, cap, "%lld GPU%s with >= %s GiB%s (peak %.1f GiB%s)", g, g == 1 ? "" : "s",
                     gib_floor((double)rec->vram_per_gpu_mib, size, sizeof size), g == 1 ? "" : " each",
                     rec->vram_per_gpu_need_mib / 1024.0, g == 1 ? "" : " on one");
    else
        n = snprintf(buf, cap, "%lld GPU%s", g, g == 1 ? "" : "s");
    return n < 0 ? 0 : (size_t)n;
}

size_t rt_gpu_ask_k8s_affinity(const rt_recommendation *rec, char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    if (!rt_gpu_ask_known(rec) || rec->gpu <= 0 || rec->vram_per_gpu_mib <= 0)
        return 0;
    /* Gt is strict and compares whole numbers: at least N MiB is "Gt N-1" */
    int n = snprintf(buf, cap,
                     "; affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                     "[{matchExpressions: [{key: nvidia.com/gpu.memory, operator: Gt, values: [\"%lld\"]}]}]}}}",
                     (long long)rec->vram_per_gpu_mib - 1);
    return n < 0 ? 0 : (size_t)n;
}

/* A growing text: each add appends at the end, as far as the buffer goes; len counts it all. */
typedef struct text {
    char *buf;
    size_t cap, len;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = t->buf && t->len < t->cap ? t->buf + t->len : NULL;
    int n = vsnprintf(at, at ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

/* Dollars an hour to 4 significant digits, at least the cents: "$1.861", "$4.50", "$0.526". */
static const char *usd_hour(double v, char *b, size_t cap)
{
    int decimals = v > 0 ? 3 - (int)floor(log10(v)) : 2;
    int n = snprintf(b, cap, "$%.*f", decimals < 2 ? 2 : decimals > 8 ? 8 : decimals, v);
    char *dot = strchr(b, '.');
    for (char *end = n > 0 && (size_t)n < cap ? b + n - 1 : NULL; dot && end && end > dot + 2 && *end == '0'; end--)
        *end = '\0';
    return b;
}

/* The server's price where it has one. */
static bool priced(const struct rt_server *s)
{
    return s && isfinite(s->price_usd_per_hour) && s->price_usd_per_hour >= 0;
}

size_t rt_recommendation_gpu_scheduler_note(const rt_recommendation *rec, rt_scheduler sched, char *buf, size_t cap)
{
    if (buf && cap)
        buf[0] = '\0';
    if (!rt_gpu_ask_known(rec) || rec->gpu <= 0 || rec->vram_per_gpu_mib <= 0)
        return 0;
    char size[32];
    long long g = (long long)rec->gpu;
    gib_floor((double)rec->vram_per_gpu_mib, size, sizeof size);
    int n = 0;
    switch (sched) {
    case RT_SCHED_SLURM:
        n = snprintf(buf, cap,
                     "--gres=gpu:%lld takes any GPU: add --constraint=FEATURE (the site's feature name for GPUs with >= "
                     "%s GiB) or ask --gres=gpu:TYPE:%lld (sinfo -o \"%%G %%f\" lists both)",
                     g, size, g);
        break;
    case RT_SCHED_METAFLOW:
        n = snprintf(buf, cap,
                     "@resources(gpu=%lld) has no GPU memory knob: run it on a queue or node pool whose GPUs have >= %s "
                     "GiB",
                     g, size);
        break;
    case RT_SCHED_K8S:
        n = snprintf(buf, cap,
                     "the affinity reads nvidia.com/gpu.memory, each node's GPU memory in MiB as NVIDIA's GPU feature "
                     "discovery (the GPU operator) labels it");
        break;
    }
    return n < 0 ? 0 : (size_t)n;
}

size_t rt_recommendation_gpu_notes(const rt_recommendation *rec, const struct rt_server *smaller,
                                   const struct rt_server *like, char *buf, size_t cap)
{
    if (buf && cap)
        buf[0] = '\0';
    if (!rt_gpu_ask_known(rec) || rec->gpu <= 0)
        return 0;
    text t = {buf, cap, 0};
    char size[32], a[32], b[32];
    long long g = (long long)rec->gpu;
    if (rec->vram_per_gpu_mib > 0) {
        gib_floor((double)rec->vram_per_gpu_mib, size, sizeof size);
        if (rec->gpu_models_count == 0) {
            add(&t, "no GPU model of the table (share/resource-tracker/gpu-models.csv) has %s GiB\n", size);
        } else {
            add(&t, "GPUs with >= %s GiB:", size);
            size_t shown = 0;
            for (size_t i = 0; i < RT_ARRAY_LEN(rec->gpu_models) && rec->gpu_models[i]; i++, shown++)
                add(&t, "%s %s", i ? "," : "", rec->gpu_models[i]);
            if (rec->gpu_models_count > shown)
                add(&t, " (and %zu larger)", rec->gpu_models_count - shown);
            add(&t, "\n");
        }
    }
    if (rec->gpu_held > rec->gpu) {
        snprintf(a, sizeof a, "%lld", (long long)rec->gpu_busy);
        add(&t, "%lld GPUs held, %s did work: ask for %lld\n", (long long)rec->gpu_held, rec->gpu_busy > 0 ? a : "none",
            g);
    }
    if (rec->gpu_smaller) {
        double active = isfinite(rec->gpu_sm_active_pct) ? rec->gpu_sm_active_pct : rec->gpu_busy_pct;
        add(&t, "the job held %.1f GiB of its GPU's %s GiB, its %s %.1f%% active: a %s GiB GPU would do",
            rec->vram_per_gpu_need_mib / 1024.0, gib_floor(rec->gpu_memory_had_mib, a, sizeof a),
            isfinite(rec->gpu_sm_active_pct) ? "SMs" : "GPU", active, size);
        if (priced(smaller) && priced(like) && like->price_usd_per_hour > 0) {
            double pct = 100.0 * (smaller->price_usd_per_hour - like->price_usd_per_hour) / like->price_usd_per_hour;
            add(&t, ": the cheapest server with %s, %s %s, costs %s/h against %s/h for one like this (%+.0f%%)",
                g == 1 ? "one" : "them", smaller->vendor_id, smaller->api_reference,
                usd_hour(smaller->price_usd_per_hour, a, sizeof a), usd_hour(like->price_usd_per_hour, b, sizeof b),
                pct);
        }
        add(&t, "\n");
    }
    return t.len;
}
