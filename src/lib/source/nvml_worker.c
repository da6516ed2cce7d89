/* nvml_worker.c - the NVML worker thread: the NVML calls of each request, run on it (they may
 * never return), and the thread's life: started with signals blocked, freed once it has ended,
 * or left behind for good when the caller gave up on a request (and counted when it ends). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvml_int.h"

/* ---- the worker's requests (on its thread: they may never return) ------------------------------ */

/* The wall clock in microseconds since the epoch, as NVML stamps its per-process samples. */
static unsigned long long wall_us(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000;
}

/* An owned copy of a string NVML wrote into buf (cap bytes, maybe without a NUL). */
static char *nvml_strdup(const char *buf, size_t cap)
{
    char s[128];
    rt_nvml_text(buf, cap, s, sizeof s);
    return rt_strdup(s);
}

static bool answered(nvml_dev *d, int k, nvml_ret rc);

/* ---- GPM: what the GPU's units did -------------------------------------------------------------- */

/* The metrics asked of GPM, in rt_gpu_work's order: NVML's metric id, and the factor from
 * its unit (percent, MiB/s) to ours (percent, bytes/s). */
static const struct {
    unsigned int id;
    size_t off;
    double scale;
} gpm_metrics[] = {
    {2, offsetof(rt_gpu_work, sm_active_pct), 1},             /* SM_UTIL */
    {3, offsetof(rt_gpu_work, sm_occupancy_pct), 1},          /* SM_OCCUPANCY */
    {5, offsetof(rt_gpu_work, tensor_active_pct), 1},         /* ANY_TENSOR_UTIL */
    {7, offsetof(rt_gpu_work, tensor_hmma_active_pct), 1},    /* HMMA_TENSOR_UTIL */
    {9, offsetof(rt_gpu_work, tensor_imma_active_pct), 1},    /* IMMA_TENSOR_UTIL */
    {6, offsetof(rt_gpu_work, tensor_dfma_active_pct), 1},    /* DFMA_TENSOR_UTIL */
    {10, offsetof(rt_gpu_work, dram_active_pct), 1},          /* DRAM_BW_UTIL */
    {11, offsetof(rt_gpu_work, fp64_active_pct), 1},          /* FP64_UTIL */
    {12, offsetof(rt_gpu_work, fp32_active_pct), 1},          /* FP32_UTIL */
    {13, offsetof(rt_gpu_work, fp16_active_pct), 1},          /* FP16_UTIL */
    {20, offsetof(rt_gpu_work, pcie_tx_bytes_per_sec), 1048576.0},   /* PCIE_TX_PER_SEC */
    {21, offsetof(rt_gpu_work, pcie_rx_bytes_per_sec), 1048576.0},   /* PCIE_RX_PER_SEC */
    {61, offsetof(rt_gpu_work, nvlink_tx_bytes_per_sec), 1048576.0}, /* NVLINK_TOTAL_TX_PER_SEC */
    {60, offsetof(rt_gpu_work, nvlink_rx_bytes_per_sec), 1048576.0}, /* NVLINK_TOTAL_RX_PER_SEC */
};
_Static_assert(sizeof gpm_metrics / sizeof gpm_metrics[0] == sizeof(rt_gpu_work) / sizeof(double),
               "every figure of rt_gpu_work has its GPM metric");

/* Whether the GPM entry points are all there. */
static bool gpm_api(const nvml_api *api)
{
    return api->gpm_query && api->gpm_alloc && api->gpm_free && api->gpm_get && api->gpm_metrics;
}

/* Allocates p's two samples. Returns whether both were. */
static bool gpm_pair_alloc(const nvml_api *api, nvml_gpm_pair *p)
{
    p->work = rt_gpu_work_null;
    if (api->gpm_alloc(&p->s[0]) != NVML_SUCCESS) {
        p->s[0] = NULL;
        return false;
    }
    if (api->gpm_alloc(&p->s[1]) != NVML_SUCCESS) {
        p->s[1] = NULL;
        return false;
    }
    return true;
}

/* Frees p's samples (those allocated). */
static void gpm_pair_free(const nvml_api *api, nvml_gpm_pair *p)
{
    for (int k = 0; k < 2; k++)
        if (p->s[k] && api->gpm_free)
            api->gpm_free(p->s[k]);
    p->s[0] = p->s[1] = NULL;
}

/* Finds d's MIG instances (a GPU in MIG mode at discovery): each one's GPU instance id, its
 * UUID and two GPM samples. An instance NVML gives no id for is left out. */
static void mig_init(nvml_worker *w, nvml_dev *d)
{
    const nvml_api *api = &w->api;
    unsigned int cur = 0, pending = 0, max = 0;
    if (!api->mig_mode || !api->mig_count || !api->mig_handle || !api->gpu_instance_id || !api->gpm_mig_get ||
        api->mig_mode(d->h, &cur, &pending) != NVML_SUCCESS || cur != NVML_FEATURE_ENABLED ||
        api->mig_count(d->h, &max) != NVML_SUCCESS || max == 0 || max > 64)
        return;
    d->mig = calloc(max, sizeof *d->mig);
    if (!d->mig)
        return;
    for (unsigned int k = 0; k < max; k++) {
        nvml_device m;
        unsigned int gi;
        if (api->mig_handle(d->h, k, &m) != NVML_SUCCESS || api->gpu_instance_id(m, &gi) != NVML_SUCCESS)
            continue;
        nvml_mig *e = &d->mig[d->nmig];
        char s[128];
        e->gi = gi;
        e->uuid = api->uuid && api->uuid(m, s, sizeof s) == NVML_SUCCESS ? nvml_strdup(s, sizeof s) : NULL;
        if (!gpm_pair_alloc(api, &e->gpm)) {
            gpm_pair_free(api, &e->gpm);
            free(e->uuid);
            continue;
        }
        d->nmig++;
    }
}

/* Finds whether d offers GPM (the driver's word), and then allocates its samples, the
 * metrics request (once per worker) and its MIG instances'. */
static void gpm_init(nvml_worker *w, nvml_dev *d)
{
    const nvml_api *api = &w->api;
    d->gpm.work = rt_gpu_work_null;
    nvml_gpm_support sup = {.version = NVML_GPM_SUPPORT_VERSION};
    if (!gpm_api(api) || api->gpm_query(d->h, &sup) != NVML_SUCCESS || !sup.is_supported)
        return;
    if (!w->gpm_get && !(w->gpm_get = calloc(1, sizeof *w->gpm_get)))
        return;
    mig_init(w, d);
    if (!gpm_pair_alloc(api, &d->gpm)) {
        gpm_pair_free(api, &d->gpm);
        return;
    }
    d->gpm_on = true;
}

/* Takes a new GPM sample into p (of the GPU, or of MIG instance gi when mig) and, when p held
 * one before, the work between the two into p->work (NaN where a metric is not offered; all
 * NaN when the sample or the metrics failed). Returns NVML's answer (the sample's, else the
 * metrics'). */
static nvml_ret gpm_take(nvml_worker *w, nvml_dev *d, nvml_gpm_pair *p, bool mig, unsigned int gi)
{
    const nvml_api *api = &w->api;
    p->work = rt_gpu_work_null;
    nvml_ret rc = mig ? api->gpm_mig_get(d->h, gi, p->s[p->cur]) : api->gpm_get(d->h, p->s[p->cur]);
    if (rc != NVML_SUCCESS) {
        p->have = false; /* the next reading starts a new pair */
        return rc;
    }
    bool had = p->have;
    p->have = true;
    p->cur = 1 - p->cur;
    if (!had)
        return rc;
    nvml_gpm_get *g = w->gpm_get;
    g->version = NVML_GPM_METRICS_GET_VERSION;
    g->count = (unsigned int)(sizeof gpm_metrics / sizeof gpm_metrics[0]);
    g->sample1 = p->s[p->cur]; /* the older: the slot the next reading fills */
    g->sample2 = p->s[1 - p->cur];
    for (unsigned int k = 0; k < g->count; k++)
        g->metrics[k] = (nvml_gpm_metric){.id = gpm_metrics[k].id};
    rc = api->gpm_metrics(g);
    if (rc != NVML_SUCCESS)
        return rc;
    for (unsigned int k = 0; k < g->count; k++) {
        const nvml_gpm_metric *m = &g->metrics[k];
        if (m->rc == NVML_SUCCESS && isfinite(m->value))
            *(double *)((char *)&p->work + gpm_metrics[k].off) = m->value * gpm_metrics[k].scale;
    }
    return rc;
}

/* One GPM reading of d and of its MIG instances (d on, not lost). */
static void gpm_poll(nvml_worker *w, nvml_dev *d)
{
    if (!d->gpm_on || d->lost)
        return;
    answered(d, K_GPM, gpm_take(w, d, &d->gpm, false, 0));
    for (size_t k = 0; k < d->nmig && !d->lost; k++)
        gpm_take(w, d, &d->mig[k].gpm, true, d->mig[k].gi);
}

/* Starts NVML and lists the GPUs with their static facts. Stops early only when out of memory.
 * What is to be told (a failed start or count, GPUs without a handle) is kept for the caller. */
static void job_init(nvml_worker *w)
{
    const nvml_api *api = &w->api;
    w->init_rc = api->init();
    if (w->init_rc != NVML_SUCCESS)
        return;
    w->started = true;
    unsigned int n = 0;
    w->count_rc = api->count(&n);
    if (w->count_rc != NVML_SUCCESS)
        return;
    char dv[96] = "", cuda[32] = "";
    if (api->driver_version && api->driver_version(dv, sizeof dv) != NVML_SUCCESS)
        dv[0] = '\0';
    int cv;
    if (api->cuda_version && api->cuda_version(&cv) == NVML_SUCCESS)
        snprintf(cuda, sizeof cuda, "%d.%d", cv / 1000, (cv % 1000) / 10);
    /* per-process samples from before tracking began are not ours: start from now */
    unsigned long long now_us = wall_us();
    w->start_us = now_us;
    for (unsigned int i = 0; i < n; i++) {
        nvml_device h;
        if (api->handle(i, &h) != NVML_SUCCESS) {
            if (rt_grow(&w->nohandle, &w->nohandle_cap, w->nnohandle + 1, sizeof *w->nohandle) == 0)
                w->nohandle[w->nnohandle++] = i;
            continue;
        }
        if (rt_grow(&w->dev, &w->dev_cap, w->ndev + 1, sizeof *w->dev) < 0)
            return;
        nvml_dev *d = &w->dev[w->ndev++];
        memset(d, 0, sizeof *d);
        rt_gpu_facts_init(&d->facts);
        d->facts.nvml_index = i;
        d->h = h;
        d->util_seen_us = now_us;
        rt_gpu_facts *f = &d->facts;
        char s[128];
        if (api->name && api->name(h, s, sizeof s) == NVML_SUCCESS)
            f->name = nvml_strdup(s, sizeof s);
        if (api->uuid && api->uuid(h, s, sizeof s) == NVML_SUCCESS)
            f->uuid = nvml_strdup(s, sizeof s);
        rt_gpu_facts_add(f, "driver", "nvidia");
        if (dv[0])
            rt_gpu_facts_add(f, "driver_version", "%.*s", (int)sizeof dv, dv);
        if (cuda[0])
            rt_gpu_facts_add(f, "cuda_driver_version", "%s", cuda);
        nvml_pci_info pci;
        if (api->pci && api->pci(h, &pci) == NVML_SUCCESS) {
            rt_nvml_norm_bus_id(pci.bus_id, sizeof pci.bus_id, s, sizeof s);
            f->host_id = rt_strdup(s);
            if (rt_nvml_text(pci.bus_id, sizeof pci.bus_id, s, sizeof s) > 0) /* as NVML spells it */
                f->nvml_bus_id = rt_strdup(s);
            rt_gpu_facts_add(f, "pci_device_id", "0x%08x", pci.pci_device_id);
            rt_gpu_facts_add(f, "pci_subsystem_id", "0x%08x", pci.pci_subsystem_id);
        }
        int major, minor;
        if (api->compute_cap && api->compute_cap(h, &major, &minor) == NVML_SUCCESS)
            rt_gpu_facts_add(f, "compute_capability", "%d.%d", major, minor);
        if (api->serial && api->serial(h, s, sizeof s) == NVML_SUCCESS) {
            char t[128];
            if (rt_nvml_text(s, sizeof s, t, sizeof t) > 0)
                rt_gpu_facts_add(f, "serial", "%s", t);
        }
        unsigned int v;
        if (api->power_limit && api->power_limit(h, &v) == NVML_SUCCESS)
            rt_gpu_facts_add(f, "power_limit_watts", "%.1f", v / 1000.0);
        if (api->max_clock && api->max_clock(h, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
            rt_gpu_facts_add(f, "max_sm_clock_mhz", "%u", v);
        if (api->max_clock && api->max_clock(h, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
            rt_gpu_facts_add(f, "max_memory_clock_mhz", "%u", v);
        if (api->cores && api->cores(h, &v) == NVML_SUCCESS)
            f->core_count = v;
        d->mem_reserved = NVML_VALUE_NOT_AVAILABLE;
        gpm_init(w, d);
    }
}

/* Keeps rc as kind k's answer on d (a lost GPU stays lost). Returns whether it succeeded. */
static bool answered(nvml_dev *d, int k, nvml_ret rc)
{
    d->rc[k] = rc;
    if (rc == NVML_ERROR_GPU_IS_LOST)
        d->lost = true;
    return rc == NVML_SUCCESS;
}

/* Reads d's gauges, and with counters its cumulative counters (the throttle reasons, a state
 * read at every poll, only where no violation counter ever answered); on a lost GPU, no further
 * call. */
static void poll_dev(const nvml_api *api, nvml_dev *d, bool counters)
{
    for (int k = 0; k < K_N; k++)
        d->rc[k] = RC_NOT_CALLED;
    nvml_utilization u;
    if (!d->lost && api->utilization && answered(d, K_UTIL, api->utilization(d->h, &u)))
        d->util = u.gpu;
    if (!d->lost && api->memory_v2) {
        /* the v2 rule (nvidia-smi's): the memory NVML reserves is apart from what is used */
        nvml_memory_v2 m = {.version = NVML_MEMORY_V2_VERSION};
        if (answered(d, K_MEMORY, api->memory_v2(d->h, &m))) {
            d->mem = (nvml_memory){m.total, m.free, m.used};
            d->mem_reserved = m.reserved;
        }
    } else if (!d->lost && api->memory) {
        answered(d, K_MEMORY, api->memory(d->h, &d->mem));
    }
    if (!d->lost && api->temperature)
        answered(d, K_TEMP, api->temperature(d->h, NVML_TEMPERATURE_GPU, &d->temp));
    if (!d->lost && api->power)
        answered(d, K_POWER, api->power(d->h, &d->power_mw));
    if (!d->lost && api->clock)
        answered(d, K_CLOCK, api->clock(d->h, NVML_CLOCK_GRAPHICS, &d->clock_mhz));
    if (counters && !d->lost && api->energy)
        answered(d, K_ENERGY, api->energy(d->h, &d->energy_mj));
    if (counters && !d->lost && api->violation) {
        bool both = answered(d, K_VIOL_POWER, api->violation(d->h, NVML_PERF_POLICY_POWER, &d->viol[0]));
        both = !d->lost && answered(d, K_VIOL_THERMAL, api->violation(d->h, NVML_PERF_POLICY_THERMAL, &d->viol[1])) &&
               both;
        d->viol_known |= both;
    }
    if (!d->lost && api->reasons && !d->viol_known)
        answered(d, K_REASONS, api->reasons(d->h, &d->reasons));
}

/* Calls a process list into w->procbuf, growing it if the list is longer. Returns the number
 * of entries (at most the buffer's, whatever NVML says), or -1 when the list is not available
 * (*rc: NVML's answer). */
static long list_procs(nvml_worker *w, nvml_list_fn fn, nvml_device h, nvml_ret *rc)
{
    /* the buffer is counted in the larger structure, so it fits either */
    *rc = RC_NOT_CALLED;
    if (rt_grow(&w->procbuf, &w->procbuf_cap, 64, sizeof(nvml_proc_v2)) < 0)
        return -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned int n = (unsigned int)w->procbuf_cap;
        *rc = fn(h, &n, w->procbuf);
        if (*rc == NVML_SUCCESS)
            return n <= w->procbuf_cap ? (long)n : (long)w->procbuf_cap;
        if (*rc != NVML_ERROR_INSUFFICIENT_SIZE ||
            rt_grow(&w->procbuf, &w->procbuf_cap, (size_t)n + 16, sizeof(nvml_proc_v2)) < 0)
            return -1;
    }
    return -1;
}

/* Appends d's compute and graphics lists (pid and VRAM) to w->procs. */
static void gather_procs(nvml_worker *w, nvml_dev *d)
{
    const nvml_list_fn fns[2] = {w->api.compute_procs, w->api.graphics_procs};
    d->proc_off = w->nprocs;
    for (int k = 0; k < 2 && !d->lost; k++) {
        nvml_ret rc;
        long n = fns[k] ? list_procs(w, fns[k], d->h, &rc) : -1;
        if (!fns[k] || (n < 0 && d->lists_ok))
            continue;
        answered(d, K_PROCS, rc); /* the first list's failure is told unless the other answers */
        if (n < 0 || rt_grow(&w->procs, &w->procs_cap, w->nprocs + (size_t)n, sizeof *w->procs) < 0)
            continue;
        d->lists_ok = true;
        for (long i = 0; i < n; i++) {
            nvml_pid_val *e = &w->procs[w->nprocs++];
            if (w->api.procs_v2) {
                const nvml_proc_v2 *p = (const nvml_proc_v2 *)w->procbuf + i;
                *e = (nvml_pid_val){p->pid, p->gpu_instance_id, p->used_gpu_memory};
            } else {
                const nvml_proc_v1 *p = (const nvml_proc_v1 *)w->procbuf + i;
                *e = (nvml_pid_val){p->pid, NVML_NO_INSTANCE, p->used_gpu_memory};
            }
        }
    }
    d->nproc = w->nprocs - d->proc_off;
}

/* Appends d's per-process SM samples since the previous look to w->utils (pid, SM %; samples
 * over 100 left out) and moves the look on to the newest. Samples that arrive between the
 * size asked and the fetch grow the buffer and are asked again (three fetches at most). */
static void gather_util(nvml_worker *w, nvml_dev *d)
{
    d->util_off = w->nutils;
    d->tree_util = TU_UNKNOWN;
    if (!w->api.proc_util || d->lost)
        return;
    if (!d->want_procutil) {
        /* not asked (the tree alone on the GPU): the samples up to now are passed over, so the
         * next ask counts only what came after this poll */
        d->util_seen_us = wall_us();
        d->tree_util = TU_DEVICE;
        return;
    }
    unsigned int n = 0;
    nvml_ret rc = w->api.proc_util(d->h, NULL, &n, d->util_seen_us);
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && n == 0)) {
        d->tree_util = TU_NONE; /* no samples since the last look: nothing ran */
        d->rc[K_PROCUTIL] = NVML_SUCCESS;
        return;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE && rc != NVML_SUCCESS) {
        answered(d, K_PROCUTIL, rc);
        return;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        if (rt_grow(&w->utilbuf, &w->utilbuf_cap, (size_t)n + 8, sizeof *w->utilbuf) < 0)
            return;
        n = (unsigned int)w->utilbuf_cap;
        rc = w->api.proc_util(d->h, w->utilbuf, &n, d->util_seen_us);
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
            break;
    }
    if (rc == NVML_ERROR_NOT_FOUND) {
        d->tree_util = TU_NONE;
        d->rc[K_PROCUTIL] = NVML_SUCCESS;
        return;
    }
    if (!answered(d, K_PROCUTIL, rc) || rt_grow(&w->utils, &w->utils_cap, w->nutils + n, sizeof *w->utils) < 0)
        return;
    unsigned long long newest = d->util_seen_us;
    for (unsigned int i = 0; i < n && i < w->utilbuf_cap; i++) {
        const nvml_proc_util *s = &w->utilbuf[i];
        if (s->timestamp > newest)
            newest = s->timestamp;
        if (s->sm_util <= 100)
            w->utils[w->nutils++] = (nvml_pid_val){s->pid, NVML_NO_INSTANCE, s->sm_util};
    }
    d->util_seen_us = newest;
    d->nutil = w->nutils - d->util_off;
    d->tree_util = TU_SAMPLES;
}

/* Whether d's accounting mode is on (all three accounting entry points there), asked of NVML at
 * the first look and then with the counters (a mode root turns on or off; between, the last
 * answer); NVML's answer is kept as K_ACCT's (told when it failed otherwise than as
 * NOT_SUPPORTED). */
static bool acct_enabled(const nvml_api *api, nvml_dev *d, bool counters)
{
    if (!api->acct_mode || !api->acct_pids || !api->acct_stats || d->lost)
        return false;
    if (!counters && d->acct_mode_known)
        return d->acct_mode_on;
    d->acct_mode_known = true;
    int mode = NVML_FEATURE_DISABLED;
    d->acct_mode_on = answered(d, K_ACCT, api->acct_mode(d->h, &mode)) && mode == NVML_FEATURE_ENABLED;
    return d->acct_mode_on;
}

/* Appends the pids d's accounting has data for (running or ended) to w->acct_pids, when its
 * mode is on; d->acct_on says whether the list was read. A list that grows between the size
 * NVML asked for and the next call is asked again (three calls at most). */
static void gather_acct(nvml_worker *w, nvml_dev *d, bool counters)
{
    d->acct_on = false;
    d->acct_off = w->nacct_pids;
    d->nacct = 0;
    if (!acct_enabled(&w->api, d, counters))
        return;
    size_t want = 64;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (rt_grow(&w->acct_pids, &w->acct_pids_cap, w->nacct_pids + want, sizeof *w->acct_pids) < 0)
            return;
        size_t room = w->acct_pids_cap - w->nacct_pids;
        unsigned int n = room > 0xFFFFFFFFu ? 0xFFFFFFFFu : (unsigned int)room;
        nvml_ret rc = w->api.acct_pids(d->h, &n, w->acct_pids + w->nacct_pids);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 2) {
            want = (size_t)n + 16;
            continue;
        }
        if (!answered(d, K_ACCT, rc)) {
            d->acct_mode_on = false; /* NOT_SUPPORTED: the mode went off meanwhile (untold); else told */
            return;
        }
        d->nacct = n <= room ? n : room; /* never past the buffer, whatever NVML says */
        w->nacct_pids += d->nacct;
        d->acct_on = true;
        return;
    }
}

/* Gathers every GPU's process lists, per-process samples (where asked) and accounting pids
 * (the worker's lists start over). */
static void job_tree(nvml_worker *w, bool counters)
{
    w->nprocs = w->nutils = w->nacct_pids = 0;
    for (size_t i = 0; i < w->ndev; i++) {
        nvml_dev *d = &w->dev[i];
        d->rc[K_PROCS] = d->rc[K_PROCUTIL] = d->rc[K_ACCT] = RC_NOT_CALLED;
        d->nproc = d->nutil = 0;
        d->lists_ok = false;
        gather_procs(w, d);
        gather_util(w, d);
        gather_acct(w, d, counters);
    }
}

/* Reads the accounting stats the caller asked for, of GPU w->acct_dev; on a lost GPU, no
 * further call. A pid without data (NOT_FOUND: it left the driver's buffer) is no failure. */
static void job_acct(nvml_worker *w)
{
    nvml_dev *d = &w->dev[w->acct_dev];
    for (size_t k = 0; k < w->nacct_ask; k++) {
        nvml_acct_ask *a = &w->acct_ask[k];
        a->rc = RC_NOT_CALLED;
        if (d->lost)
            continue;
        a->rc = w->api.acct_stats(d->h, a->pid, &a->st);
        if (a->rc != NVML_SUCCESS && a->rc != NVML_ERROR_NOT_FOUND)
            answered(d, K_ACCT, a->rc);
    }
}

/* Runs one request. */
static void run_job(nvml_worker *w, int job, bool tree)
{
    switch (job) {
    case JOB_INIT:
        job_init(w);
        break;
    case JOB_POLL:
        for (size_t i = 0; i < w->ndev; i++) {
            poll_dev(&w->api, &w->dev[i], w->job_counters);
            gpm_poll(w, &w->dev[i]);
        }
        if (tree)
            job_tree(w, w->job_counters);
        break;
    case JOB_TREE:
        job_tree(w, w->job_counters);
        break;
    case JOB_ACCT:
        job_acct(w);
        break;
    case JOB_SHUTDOWN:
        /* the GPM samples are NVML's memory: given back before it shuts down */
        for (size_t i = 0; i < w->ndev; i++) {
            for (size_t k = 0; k < w->dev[i].nmig; k++)
                gpm_pair_free(&w->api, &w->dev[i].mig[k].gpm);
            gpm_pair_free(&w->api, &w->dev[i].gpm);
        }
        if (w->started && w->api.shutdown)
            w->api.shutdown();
        break;
    }
}

static void left_ended(void);

/* The worker thread: runs each request and says it is done, until the shutdown or until the
 * caller has given up on it (it then touches nothing the caller holds, its clock included, and
 * ends). */
static void *worker_main(void *arg)
{
    nvml_worker *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (w->done == w->asked)
            pthread_cond_wait(&w->ask_cv, &w->mu);
        int job = w->job;
        bool tree = w->job_tree;
        pthread_mutex_unlock(&w->mu);
        run_job(w, job, tree);
        pthread_mutex_lock(&w->mu);
        bool gone = w->abandoned;
        if (!gone)
            w->done = w->asked;
        pthread_mutex_unlock(&w->mu);
        if (gone) {
            left_ended();
            return NULL;
        }
        /* signalled unlocked, so the caller wakes to a free mutex; w stays until the caller has
         * joined this thread (shutdown) or for good (any other request) */
        rt_clock_broadcast(w->clock, &w->done_cv);
        if (job == JOB_SHUTDOWN)
            return NULL;
    }
}

/* ---- the worker's life (on the caller's thread) ------------------------------------------------ */

void rt_nvw_free(nvml_worker *w)
{
    for (size_t i = 0; i < w->ndev; i++) {
        nvml_dev *d = &w->dev[i];
        rt_gpu_facts_free(&d->facts);
        for (size_t k = 0; k < d->nmig; k++)
            free(d->mig[k].uuid);
        free(d->mig);
    }
    /* in a forked child, unloading would run the library's destructors on the driver's files
     * it shares with the parent: the handle is left open there */
    if (w->dl && (w->owner == 0 || w->owner == getpid()))
        dlclose(w->dl);
    rt_free_all(w->dev, w->nohandle, w->procbuf, w->utilbuf, w->procs, w->utils, w->acct_pids, w->acct_ask,
                w->gpm_get);
    free(w);
}

int rt_nvw_start(nvml_worker *w)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return ENOMEM;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int e = pthread_mutex_init(&w->mu, NULL);
    if (e == 0 && (e = pthread_cond_init(&w->done_cv, &ca)) != 0)
        pthread_mutex_destroy(&w->mu);
    if (e == 0 && (e = pthread_cond_init(&w->ask_cv, NULL)) != 0) {
        pthread_cond_destroy(&w->done_cv);
        pthread_mutex_destroy(&w->mu);
    }
    pthread_condattr_destroy(&ca);
    if (e != 0)
        return e;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&w->thread, NULL, worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        pthread_cond_destroy(&w->ask_cv);
        pthread_cond_destroy(&w->done_cv);
        pthread_mutex_destroy(&w->mu);
        return e;
    }
    w->owner = getpid();
    return 0;
}

/* The workers left behind, kept reachable: their memory is never freed. How many there are and
 * how many of their threads have ended (either may be counted first). */
static pthread_mutex_t left_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t left_cv = PTHREAD_COND_INITIALIZER; /* on CLOCK_REALTIME */
static nvml_worker *left_behind;
static unsigned long left_count, left_done;

void rt_nvw_leave_behind(nvml_worker *w)
{
    pthread_detach(w->thread);
    pthread_mutex_lock(&left_mu);
    w->next_left = left_behind;
    left_behind = w;
    left_count++;
    pthread_mutex_unlock(&left_mu);
}

/* Counts, on the thread of a worker left behind, that it has come back and ends. */
static void left_ended(void)
{
    pthread_mutex_lock(&left_mu);
    left_done++;
    pthread_cond_broadcast(&left_cv);
    pthread_mutex_unlock(&left_mu);
}

bool rt_nvml_wait_left_behind(double bound_secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)bound_secs;
    pthread_mutex_lock(&left_mu);
    int e = 0;
    while (left_done < left_count && e != ETIMEDOUT)
        e = pthread_cond_timedwait(&left_cv, &left_mu, &ts);
    bool all = left_done >= left_count;
    pthread_mutex_unlock(&left_mu);
    return all;
}
