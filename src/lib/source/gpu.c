/* gpu.c - the GPU front: holds the backends (NVML in nvml.c, DRM in drm.c) and their devices
 * behind one API for the sampler and host facts, NVIDIA first; and the static facts every
 * backend's devices carry. Knows nothing of NVML or sysfs itself. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drm.h"
#include "gpu.h"
#include "nvml.h"

/* ---- device facts ------------------------------------------------------------------------------ */

const rt_gpu_work rt_gpu_work_null = RT_GPU_WORK_NULL;
_Static_assert(sizeof(rt_gpu_work) == 14 * sizeof(double), "rt_gpu_work_null names every figure");

/* rt_gpu_work's figures as an array (a struct of doubles alone: no padding). */
#define WORK_AT(w, k) (((double *)(void *)(w))[k])
#define CWORK_AT(w, k) (((const double *)(const void *)(w))[k])

void rt_gpu_work_add(rt_gpu_work_sum *s, const rt_gpu_work *w)
{
    for (size_t k = 0; k < RT_GPU_WORK_N; k++) {
        if (!isnan(CWORK_AT(w, k))) {
            s->sum[k] += CWORK_AT(w, k);
            s->n[k]++;
        }
    }
}

bool rt_gpu_work_mean(const rt_gpu_work_sum *s, rt_gpu_work *out)
{
    bool any = false;
    for (size_t k = 0; k < RT_GPU_WORK_N; k++) {
        WORK_AT(out, k) = s->n[k] ? s->sum[k] / s->n[k] : NAN;
        any |= s->n[k] > 0;
    }
    return any;
}

void rt_gpu_facts_init(rt_gpu_facts *f)
{
    memset(f, 0, sizeof *f);
    f->core_count = RT_NULL_I64;
    f->nvml_index = RT_NULL_I64;
}

int rt_gpu_facts_add(rt_gpu_facts *f, const char *key, const char *fmt, ...)
{
    char v[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (n <= 0 || rt_grow(&f->detail, &f->detail_cap, f->ndetail + 1, sizeof *f->detail) < 0)
        return -1;
    char *c = rt_strdup(v);
    if (!c)
        return -1;
    f->detail[f->ndetail].key = key; /* static strings */
    f->detail[f->ndetail].value = c;
    f->ndetail++;
    return 0;
}

void rt_gpu_facts_free(rt_gpu_facts *f)
{
    rt_free_all(f->uuid, f->name, f->host_id, f->nvml_bus_id);
    for (size_t k = 0; k < f->ndetail; k++)
        free((char *)f->detail[k].value);
    free(f->detail);
    rt_gpu_facts_init(f);
}

void rt_gpu_facts_out(const rt_gpu_facts *f, rt_gpu *o)
{
    o->uuid = f->uuid;
    o->name = f->name;
    o->device_type = "GPU";
    o->host_id = f->host_id;
    o->detail = f->detail;
    o->detail_count = f->ndetail;
    o->core_count = f->core_count;
    o->nvml_index = f->nvml_index;
    o->nvml_bus_id = f->nvml_bus_id;
    o->utilization_pct = o->vram_used_pct = o->temperature_celsius = o->power_watts = o->frequency_mhz = NAN;
    o->power_throttled_secs = o->thermal_throttled_secs = NAN;
    o->vram_total_bytes = o->vram_used_bytes = o->vram_reserved_bytes = RT_NULL_U64;
    o->work = rt_gpu_work_null;
    o->mig = NULL;
    o->mig_count = 0;
}

/* ---- the set ---------------------------------------------------------------------------------- */

struct rt_gpus {
    rt_nvml *nv;
    rt_drm *drm;
    size_t nnv, ndrm; /* devices of each: out[0..nnv) NVML, then DRM */
    rt_gpu *out;
    bool read; /* out holds a reading */
    double *share; /* the tree's share of each device at the last rt_gpus_tree */
    /* what the last rt_gpus_tree saw of each device: the tree on it, its utilization there
     * (NaN: unknown), its VRAM there (RT_NULL_U64: unknown); and whether it ran at all */
    bool *on;
    double *util;
    uint64_t *vram;
    bool tree_done;
};

rt_gpus *rt_gpus_open(const rt_roots *roots, const char *nvml_path, const rt_logger *log)
{
    rt_gpus *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->nv = rt_nvml_open(nvml_path, log);
    g->drm = rt_drm_open(roots);
    if (!g->nv || !g->drm) {
        rt_gpus_close(g);
        return NULL;
    }
    g->nnv = rt_nvml_count(g->nv);
    g->ndrm = rt_drm_count(g->drm);
    if (g->nnv + g->ndrm) {
        g->out = calloc(g->nnv + g->ndrm, sizeof *g->out);
        g->share = malloc((g->nnv + g->ndrm) * sizeof *g->share);
        g->on = calloc(g->nnv + g->ndrm, sizeof *g->on);
        g->util = malloc((g->nnv + g->ndrm) * sizeof *g->util);
        g->vram = malloc((g->nnv + g->ndrm) * sizeof *g->vram);
        if (!g->out || !g->share || !g->on || !g->util || !g->vram) {
            rt_gpus_close(g);
            return NULL;
        }
        for (size_t i = 0; i < g->nnv + g->ndrm; i++)
            g->share[i] = NAN;
    }
    return g;
}

const rt_gpu *rt_gpus_read(rt_gpus *g, size_t *count)
{
    *count = 0;
    if (!g || !g->out)
        return NULL;
    for (size_t i = 0; i < g->nnv; i++)
        rt_nvml_read(g->nv, i, &g->out[i]);
    for (size_t i = 0; i < g->ndrm; i++)
        rt_drm_read(g->drm, i, &g->out[g->nnv + i]);
    *count = g->nnv + g->ndrm;
    g->read = true;
    return g->out;
}

/* The tree's share of DRM card i (k among the DRM cards) from what the card's own files say
 * (the clients of other processes are not read): its busiest engine over the card's busy
 * percent when that covers an interval, else its VRAM over the card's VRAM in use, at most 1;
 * 0 without a client there; NaN when the card says neither (or has not been read). */
static double drm_share(const rt_gpus *g, size_t i, size_t k, double util, uint64_t vram, bool on)
{
    if (!on && !(util > 0))
        return 0.0;
    const rt_gpu *o = &g->out[i];
    if (!g->read)
        return NAN;
    if (o->utilization_pct > 0 && !isnan(util) && rt_drm_tree_card_timed(g->drm, k))
        return util >= o->utilization_pct ? 1.0 : util / o->utilization_pct;
    if (o->vram_used_bytes != RT_NULL_U64 && o->vram_used_bytes > 0)
        return vram >= o->vram_used_bytes ? 1.0 : (double)vram / (double)o->vram_used_bytes;
    return NAN;
}

/* The GPUs' figures summed over the devices a reading could read. */
typedef struct gpu_sum {
    double util;
    uint64_t vram;
    int64_t used;
    bool util_known, vram_known;
} gpu_sum;

/* Adds one device: utilization u (NaN: unknown), VRAM v when v_ok, on: it was in use. */
static void gpu_sum_add(gpu_sum *s, double u, uint64_t v, bool v_ok, bool on)
{
    if (!isnan(u)) {
        s->util += u;
        s->util_known = true;
        on = on || u > 0;
    }
    if (v_ok) {
        s->vram += v;
        s->vram_known = true;
    }
    s->used += on;
}

/* The sums into the caller's figures, each only where some device knew it. */
static void gpu_sum_out(const gpu_sum *s, double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used)
{
    if (s->util_known)
        *util_pct = s->util;
    if (s->vram_known)
        *vram_bytes = s->vram;
    if (s->util_known || s->vram_known)
        *gpus_used = s->used;
}

void rt_gpus_tree(rt_gpus *g, rt_pid_in_tree has, void *user, const int64_t *pids, size_t npids, double mono,
                  double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used, int64_t main_pid, uint64_t *main_vram)
{
    uint64_t mine_unused;
    if (!main_vram)
        main_vram = &mine_unused;
    *util_pct = NAN;
    *vram_bytes = *main_vram = RT_NULL_U64;
    *gpus_used = RT_NULL_I64;
    if (!g || g->nnv + g->ndrm == 0)
        return;
    rt_drm_set_main(g->drm, main_pid);
    rt_drm_tree(g->drm, pids, npids, mono);
    gpu_sum sum = {0};
    uint64_t mine = 0;
    for (size_t i = 0; i < g->nnv + g->ndrm; i++) {
        double u;
        uint64_t v;
        bool on, v_ok = true;
        uint64_t m = 0;
        g->share[i] = NAN;
        g->on[i] = false;
        g->util[i] = NAN;
        g->vram[i] = RT_NULL_U64;
        if (i < g->nnv) {
            if (!rt_nvml_tree(g->nv, i, has, user, &v, &v_ok, &on, &u))
                continue; /* lost */
            g->share[i] = rt_nvml_tree_share(g->nv, i);
            if (v_ok && main_pid > 0 && !rt_nvml_pid_vram(g->nv, i, main_pid, &m))
                m = 0;
        } else {
            rt_drm_tree_card(g->drm, i - g->nnv, &u, &v, &on);
            m = rt_drm_tree_card_main(g->drm, i - g->nnv);
            g->share[i] = drm_share(g, i, i - g->nnv, u, v, on);
        }
        gpu_sum_add(&sum, u, v, v_ok, on);
        if (v_ok)
            mine += m;
        g->on[i] = on || u > 0;
        g->util[i] = u;
        g->vram[i] = v_ok ? v : RT_NULL_U64;
    }
    g->tree_done = true;
    gpu_sum_out(&sum, util_pct, vram_bytes, gpus_used);
    if (sum.vram_known)
        *main_vram = mine;
}

void rt_gpus_job_of(const rt_gpus *g, rt_pid_in_tree has, void *user, rt_gpus_job *out)
{
    *out = (rt_gpus_job){rt_gpu_work_null, NULL, RT_NULL_I64, RT_NULL_U64};
    if (!g || !g->tree_done)
        return;
    rt_gpu_work_sum sum = {0}, any_gpu = {0};
    bool on_any = false, shared = false, added = false;
    for (size_t i = 0; i < g->nnv + g->ndrm; i++) {
        if (!isnan(g->util[i]))
            out->busy = (out->busy == RT_NULL_I64 ? 0 : out->busy) + (g->util[i] > 0);
        if (g->vram[i] != RT_NULL_U64 && (out->vram_one_max == RT_NULL_U64 || g->vram[i] > out->vram_one_max))
            out->vram_one_max = g->vram[i];
        if (g->read)
            rt_gpu_work_add(&any_gpu, &g->out[i].work);
        if (!g->on[i])
            continue;
        on_any = true;
        if (i < g->nnv)
            added |= rt_nvml_tree_work(g->nv, i, has, user, &sum, &shared);
    }
    if (added) {
        rt_gpu_work_mean(&sum, &out->work);
        out->scope = shared ? "device" : "job";
        return;
    }
    if (on_any)
        return;
    /* the tree on no GPU: it did none of the work those GPUs count (0 for each figure some
     * GPU gives) */
    for (size_t k = 0; k < RT_GPU_WORK_N; k++)
        any_gpu.sum[k] = 0;
    if (rt_gpu_work_mean(&any_gpu, &out->work))
        out->scope = "job";
}

/* rt_pid_in_tree for rt_gpus_all: every process is in. */
static bool every_pid(void *user, int64_t pid)
{
    (void)user;
    (void)pid;
    return true;
}

void rt_gpus_all(rt_gpus *g, double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used)
{
    *util_pct = NAN;
    *vram_bytes = RT_NULL_U64;
    *gpus_used = RT_NULL_I64;
    if (!g || g->nnv + g->ndrm == 0)
        return;
    gpu_sum sum = {0};
    for (size_t i = 0; i < g->nnv + g->ndrm; i++) {
        double u = NAN;
        uint64_t v = RT_NULL_U64;
        bool on = false, v_ok = true;
        if (i < g->nnv) {
            if (!rt_nvml_tree(g->nv, i, every_pid, NULL, &v, &v_ok, &on, &u))
                continue; /* lost */
        } else if (g->read) {
            u = g->out[i].utilization_pct;
            v = g->out[i].vram_used_bytes;
            v_ok = v != RT_NULL_U64;
            on = v_ok && v > 0;
        } else {
            continue;
        }
        gpu_sum_add(&sum, u, v, v_ok, on);
    }
    gpu_sum_out(&sum, util_pct, vram_bytes, gpus_used);
}

int rt_gpus_energy(const rt_gpus *g, size_t i, double *joules)
{
    if (!g || i >= g->nnv + g->ndrm)
        return 0;
    return i < g->nnv ? rt_nvml_energy(g->nv, i, joules) : rt_drm_energy(g->drm, i - g->nnv, joules);
}

double rt_gpus_tree_share(const rt_gpus *g, size_t i)
{
    return g && i < g->nnv + g->ndrm ? g->share[i] : NAN;
}

uint64_t rt_gpus_tree_vram_peak(const rt_gpus *g)
{
    return g ? rt_nvml_tree_vram_peak(g->nv) : RT_NULL_U64;
}

void rt_gpus_counters_due(rt_gpus *g)
{
    if (g)
        rt_nvml_counters_due(g->nv);
}

void rt_gpus_close(rt_gpus *g)
{
    if (!g)
        return;
    rt_nvml_close(g->nv);
    rt_drm_close(g->drm);
    rt_free_all(g->out, g->share, g->on, g->util, g->vram);
    free(g);
}
