/* nvml.c - NVIDIA GPUs through NVML without a build or run-time dependency on it: the library is
 * opened with dlopen (its dlerror text kept in the handle, as libuv's dl.c keeps it), every
 * symbol resolved once (a missing one nulls the fields it feeds), then devices, their readings
 * and the tree's share from the process lists and per-process utilization samples. Every NVML
 * call runs on one worker thread that the caller hands a request and waits for with a deadline:
 * a driver that never answers is left behind with its thread, and tracking goes on without it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvml.h"

/* ---- the NVML ABI: the few types and constants used, as nvml.h defines them ---------------- */

typedef int nvml_ret;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_GPU_IS_LOST = 15,
};
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct nvml_device_st *nvml_device;
typedef struct {
    unsigned int gpu, memory;
} nvml_utilization;
typedef struct {
    unsigned long long total, free, used;
} nvml_memory;
typedef struct { /* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it */
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;
typedef struct { /* nvmlProcessInfo_v2_t (the _v2 and _v3 process lists) */
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_proc_v2;
typedef struct { /* nvmlProcessInfo_v1_t (the unversioned process lists) */
    unsigned int pid;
    unsigned long long used_gpu_memory;
} nvml_proc_v1;
typedef struct { /* nvmlProcessUtilizationSample_t */
    unsigned int pid;
    unsigned long long timestamp; /* microseconds */
    unsigned int sm_util, mem_util, enc_util, dec_util;
} nvml_proc_util;

typedef nvml_ret (*nvml_list_fn)(nvml_device, unsigned int *, void *);

typedef struct nvml_api {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*count)(unsigned int *);
    nvml_ret (*handle)(unsigned int, nvml_device *);
    nvml_ret (*name)(nvml_device, char *, unsigned int);
    nvml_ret (*uuid)(nvml_device, char *, unsigned int);
    nvml_ret (*serial)(nvml_device, char *, unsigned int);
    nvml_ret (*pci)(nvml_device, nvml_pci_info *);
    nvml_ret (*driver_version)(char *, unsigned int);
    nvml_ret (*cuda_version)(int *);
    nvml_ret (*compute_cap)(nvml_device, int *, int *);
    nvml_ret (*cores)(nvml_device, unsigned int *);
    nvml_ret (*power_limit)(nvml_device, unsigned int *);
    nvml_ret (*max_clock)(nvml_device, int, unsigned int *);
    nvml_ret (*utilization)(nvml_device, nvml_utilization *);
    nvml_ret (*memory)(nvml_device, nvml_memory *);
    nvml_ret (*temperature)(nvml_device, int, unsigned int *);
    nvml_ret (*power)(nvml_device, unsigned int *);
    nvml_ret (*clock)(nvml_device, int, unsigned int *);
    nvml_list_fn compute_procs, graphics_procs;
    bool procs_v2; /* the lists take nvml_proc_v2 (else nvml_proc_v1) */
    nvml_ret (*proc_util)(nvml_device, nvml_proc_util *, unsigned int *, unsigned long long);
} nvml_api;

/* ---- the worker's state ------------------------------------------------------------------------ */

/* The kinds of reading a poll makes, each told at most once per GPU when it fails. */
enum { K_UTIL, K_MEMORY, K_TEMP, K_POWER, K_CLOCK, K_PROCS, K_PROCUTIL, K_N };
static const char *const kind_name[K_N] = {"utilization", "memory", "temperature", "power draw", "clock",
                                           "process list", "per-process utilization"};
#define RC_NOT_CALLED (-1) /* the entry point is missing, or the GPU was lost before the call */

/* The tree's share of SM time that a GPU's per-process samples can give. */
enum { TU_UNKNOWN, TU_NONE, TU_SAMPLES };

/* One entry of a process list or of the per-process samples: a pid with its VRAM or SM %. */
typedef struct nvml_pid_val {
    unsigned int pid;
    unsigned long long val;
} nvml_pid_val;

/* A GPU. facts are written at discovery only; the rest by the worker during a request and read
 * by the caller only between requests. */
typedef struct nvml_dev {
    rt_gpu_facts facts;
    nvml_device h;
    bool lost;
    unsigned long long util_seen_us; /* newest per-process sample already counted */
    /* the latest poll: each kind's answer, and the readings of those that succeeded */
    nvml_ret rc[K_N];
    unsigned int util, temp, power_mw, clock_mhz;
    nvml_memory mem;
    /* the latest process lists: entries [proc_off, proc_off + nproc) of the worker's procs,
     * the per-process samples [util_off, util_off + nutil) of its utils */
    size_t proc_off, nproc, util_off, nutil;
    bool lists_ok;
    int tree_util; /* TU_* */
} nvml_dev;

enum { JOB_INIT = 1, JOB_POLL, JOB_TREE, JOB_SHUTDOWN };

/* The worker thread and all that NVML touches. Left behind, never freed, when a request misses
 * its deadline: the stuck call may return at any time and write here. */
typedef struct nvml_worker {
    pthread_mutex_t mu;
    pthread_cond_t ask_cv, done_cv; /* done_cv on CLOCK_MONOTONIC */
    pthread_t thread;
    pid_t owner; /* the process that started the thread (a forked child has none) */
    /* under mu: the request, its sequence numbers, and whether the caller gave up on it */
    unsigned long long asked, done;
    int job;
    bool job_tree, abandoned;
    /* the worker's own during a request; read by the caller only between requests */
    void *dl;
    nvml_api api;
    nvml_ret init_rc, count_rc;
    bool started; /* nvmlInit succeeded */
    nvml_dev *dev;
    size_t ndev, dev_cap;
    unsigned int *nohandle; /* the indices NVML gave no handle for at discovery */
    size_t nnohandle, nohandle_cap;
    void *procbuf; /* one process list as NVML fills it */
    size_t procbuf_cap; /* elements of the larger process list type */
    nvml_proc_util *utilbuf;
    size_t utilbuf_cap;
    nvml_pid_val *procs, *utils; /* every GPU's lists of the latest poll, one after the other */
    size_t nprocs, procs_cap, nutils, utils_cap;
    struct nvml_worker *next_left; /* in left_behind */
} nvml_worker;

/* What the caller knows of a GPU between requests. */
typedef struct nvml_seen {
    bool read_fresh, tree_fresh; /* the latest poll's readings / lists not used yet */
    bool lost_told;
    unsigned int warned; /* bit k: kind k's failure told */
} nvml_seen;

struct rt_nvml {
    rt_logger log;
    char err[256]; /* the last dlerror text, start failure or missed deadline; "" when none */
    bool ready;
    bool stuck; /* a request missed its deadline (or the handle crossed a fork): no more requests */
    bool tree_wanted; /* rt_nvml_tree has been asked: every poll gathers the process lists */
    double init_secs, call_secs;
    nvml_worker *w; /* NULL without a worker thread */
    size_t ndev;
    nvml_seen *seen;
    /* the caller's buffers for the tree's share, grown only when longer lists are seen */
    unsigned int *pids;
    size_t pids_cap;
    nvml_pid_val *best;
    size_t best_cap;
};

/* Set once any request of any handle has missed its deadline: the driver is stuck, and a new
 * handle would only get stuck behind it. */
static atomic_bool nvml_hung;

/* The workers left behind, kept reachable: their memory is never freed. */
static pthread_mutex_t left_mu = PTHREAD_MUTEX_INITIALIZER;
static nvml_worker *left_behind;

/* ---- strings NVML gives --------------------------------------------------------------------- */

size_t rt_nvml_text(const char *in, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    while (n < len && in[n] != '\0' && n + 1 < cap) {
        unsigned char c = (unsigned char)in[n];
        out[n] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        n++;
    }
    out[n] = '\0';
    return n;
}

/* Reads up to max hex digits at in[*at..len) into *v. Returns whether there was at least one. */
static bool hex_field(const char *in, size_t len, size_t *at, int max, unsigned *v)
{
    int k = 0;
    *v = 0;
    while (*at < len && k < max) {
        char c = in[*at];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        *v = *v << 4 | d;
        (*at)++;
        k++;
    }
    return k > 0;
}

bool rt_nvml_norm_bus_id(const char *in, size_t len, char *out, size_t cap)
{
    /* domain:bus:device.function, hex: at most 8, 2, 2 and 1 digits, nothing after */
    static const struct {
        int digits;
        char after;
    } field[4] = {{8, ':'}, {2, ':'}, {2, '.'}, {1, '\0'}};
    unsigned v[4];
    size_t at = 0;
    bool ok = true;
    for (int f = 0; f < 4 && ok; f++) {
        ok = hex_field(in, len, &at, field[f].digits, &v[f]);
        if (ok && field[f].after)
            ok = at < len && in[at++] == field[f].after;
        else if (ok)
            ok = at == len || in[at] == '\0';
    }
    if (ok) {
        int n = snprintf(out, cap, "%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3]);
        if (n > 0 && (size_t)n < cap)
            return true;
    }
    rt_nvml_text(in, len, out, cap);
    return false;
}

/* ---- loading (on the caller's thread: dlopen and dlsym do not wait on the driver) ------------ */

/* Resolves the first of the names the library has (newest version first). When it has none,
 * the dlerror text of the first name is kept as the handle's error and NULL returned. */
static void *sym(rt_nvml *nv, void *dl, const char *a, const char *b, const char *c)
{
    const char *names[3] = {a, b, c};
    char first[sizeof nv->err] = "";
    for (int i = 0; i < 3 && names[i]; i++) {
        dlerror(); /* clear */
        void *p = dlsym(dl, names[i]);
        if (p)
            return p;
        const char *e = dlerror();
        if (i == 0)
            snprintf(first, sizeof first, "%s", e ? e : a);
    }
    snprintf(nv->err, sizeof nv->err, "%s", first);
    return NULL;
}

#define RESOLVE(field, ...) (*(void **)&api->field = sym(nv, w->dl, __VA_ARGS__))

/* Opens the library into w and resolves its symbols. Returns whether it has the entry points
 * NVML cannot work without (w->dl is then set; else it is NULL, closed). */
static bool load(rt_nvml *nv, nvml_worker *w, const char *path)
{
    nvml_api *api = &w->api;
    const char *lib = path && *path ? path : "libnvidia-ml.so.1";
    w->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!w->dl) {
        const char *e = dlerror();
        snprintf(nv->err, sizeof nv->err, "%s", e ? e : lib);
        /* no NVIDIA driver: the normal case on most machines, not worth a warning */
        rt_log(&nv->log, RT_LOG_DEBUG, "NVML not loaded (%s)", nv->err);
        return false;
    }
    RESOLVE(init, "nvmlInit_v2", "nvmlInit", NULL);
    RESOLVE(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL);
    RESOLVE(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL);
    if (!api->init || !api->count || !api->handle) {
        rt_log(&nv->log, RT_LOG_WARN, "%s lacks the NVML entry points (%s); NVIDIA GPUs are not tracked", lib,
               nv->err);
        dlclose(w->dl);
        w->dl = NULL;
        return false;
    }
    RESOLVE(shutdown, "nvmlShutdown", NULL, NULL);
    RESOLVE(name, "nvmlDeviceGetName", NULL, NULL);
    RESOLVE(uuid, "nvmlDeviceGetUUID", NULL, NULL);
    RESOLVE(serial, "nvmlDeviceGetSerial", NULL, NULL);
    RESOLVE(pci, "nvmlDeviceGetPciInfo_v3", NULL, NULL);
    RESOLVE(driver_version, "nvmlSystemGetDriverVersion", NULL, NULL);
    RESOLVE(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion", NULL);
    RESOLVE(compute_cap, "nvmlDeviceGetCudaComputeCapability", NULL, NULL);
    RESOLVE(cores, "nvmlDeviceGetNumGpuCores", NULL, NULL);
    RESOLVE(power_limit, "nvmlDeviceGetPowerManagementLimit", NULL, NULL);
    RESOLVE(max_clock, "nvmlDeviceGetMaxClockInfo", NULL, NULL);
    RESOLVE(utilization, "nvmlDeviceGetUtilizationRates", NULL, NULL);
    RESOLVE(memory, "nvmlDeviceGetMemoryInfo", NULL, NULL);
    RESOLVE(temperature, "nvmlDeviceGetTemperature", NULL, NULL);
    RESOLVE(power, "nvmlDeviceGetPowerUsage", NULL, NULL);
    RESOLVE(clock, "nvmlDeviceGetClockInfo", NULL, NULL);
    RESOLVE(compute_procs, "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2", NULL);
    RESOLVE(graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
            NULL);
    api->procs_v2 = api->compute_procs || api->graphics_procs;
    if (!api->procs_v2) { /* an old driver: the first lists, with the short structure */
        RESOLVE(compute_procs, "nvmlDeviceGetComputeRunningProcesses", NULL, NULL);
        RESOLVE(graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses", NULL, NULL);
    }
    RESOLVE(proc_util, "nvmlDeviceGetProcessUtilization", NULL, NULL);
    return true;
}

/* ---- the worker's requests (on its thread: they may never return) ------------------------------ */

/* An owned copy of a string NVML wrote into buf (cap bytes, maybe without a NUL). */
static char *nvml_strdup(const char *buf, size_t cap)
{
    char s[128];
    rt_nvml_text(buf, cap, s, sizeof s);
    return rt_strdup(s);
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
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long long now_us = (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000;
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

/* Reads d's gauges; on a lost GPU, no further call. */
static void poll_dev(const nvml_api *api, nvml_dev *d)
{
    for (int k = 0; k < K_N; k++)
        d->rc[k] = RC_NOT_CALLED;
    nvml_utilization u;
    if (!d->lost && api->utilization && answered(d, K_UTIL, api->utilization(d->h, &u)))
        d->util = u.gpu;
    if (!d->lost && api->memory)
        answered(d, K_MEMORY, api->memory(d->h, &d->mem));
    if (!d->lost && api->temperature)
        answered(d, K_TEMP, api->temperature(d->h, NVML_TEMPERATURE_GPU, &d->temp));
    if (!d->lost && api->power)
        answered(d, K_POWER, api->power(d->h, &d->power_mw));
    if (!d->lost && api->clock)
        answered(d, K_CLOCK, api->clock(d->h, NVML_CLOCK_GRAPHICS, &d->clock_mhz));
}

/* Calls a process list into w->procbuf, growing it if the list is longer. Returns the number
 * of entries, or -1 when the list is not available (*rc: NVML's answer). */
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
            return (long)n;
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
                *e = (nvml_pid_val){p->pid, p->used_gpu_memory};
            } else {
                const nvml_proc_v1 *p = (const nvml_proc_v1 *)w->procbuf + i;
                *e = (nvml_pid_val){p->pid, p->used_gpu_memory};
            }
        }
    }
    d->nproc = w->nprocs - d->proc_off;
}

/* Appends d's per-process SM samples since the previous look to w->utils (pid, SM %; samples
 * over 100 left out) and moves the look on to the newest. */
static void gather_util(nvml_worker *w, nvml_dev *d)
{
    d->util_off = w->nutils;
    d->tree_util = TU_UNKNOWN;
    if (!w->api.proc_util || d->lost)
        return;
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
    if (rt_grow(&w->utilbuf, &w->utilbuf_cap, (size_t)n + 8, sizeof *w->utilbuf) < 0)
        return;
    n = (unsigned int)w->utilbuf_cap;
    rc = w->api.proc_util(d->h, w->utilbuf, &n, d->util_seen_us);
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
            w->utils[w->nutils++] = (nvml_pid_val){s->pid, s->sm_util};
    }
    d->util_seen_us = newest;
    d->nutil = w->nutils - d->util_off;
    d->tree_util = TU_SAMPLES;
}

/* Gathers every GPU's process lists and per-process samples (the worker's lists start over). */
static void job_tree(nvml_worker *w)
{
    w->nprocs = w->nutils = 0;
    for (size_t i = 0; i < w->ndev; i++) {
        nvml_dev *d = &w->dev[i];
        d->rc[K_PROCS] = d->rc[K_PROCUTIL] = RC_NOT_CALLED;
        d->nproc = d->nutil = 0;
        d->lists_ok = false;
        gather_procs(w, d);
        gather_util(w, d);
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
        for (size_t i = 0; i < w->ndev; i++)
            poll_dev(&w->api, &w->dev[i]);
        if (tree)
            job_tree(w);
        break;
    case JOB_TREE:
        job_tree(w);
        break;
    case JOB_SHUTDOWN:
        if (w->started && w->api.shutdown)
            w->api.shutdown();
        break;
    }
}

/* The worker thread: runs each request and says it is done, until the shutdown or until the
 * caller has given up on it (it then touches nothing the caller holds, and ends). */
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
        if (gone)
            return NULL;
        /* signalled unlocked, so the caller wakes to a free mutex; w stays until the caller has
         * joined this thread (shutdown) or for good (any other request) */
        pthread_cond_signal(&w->done_cv);
        if (job == JOB_SHUTDOWN)
            return NULL;
    }
}

/* ---- the caller's side: requests with a deadline --------------------------------------------- */

/* Frees w and unloads the library: only when its thread has ended or does not exist (never
 * after a missed deadline). NVML is not called. */
static void free_worker(nvml_worker *w)
{
    for (size_t i = 0; i < w->ndev; i++)
        rt_gpu_facts_free(&w->dev[i].facts);
    if (w->dl)
        dlclose(w->dl);
    free(w->dev);
    free(w->nohandle);
    free(w->procbuf);
    free(w->utilbuf);
    free(w->procs);
    free(w->utils);
    free(w);
}

/* Starts w's thread with every signal blocked in it (signals are the caller's business).
 * Returns 0, or an errno value. */
static int start_worker(nvml_worker *w)
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

/* Hands the worker a request and waits for it at most secs. Returns whether it was done. On a
 * missed deadline: one warning, the worker is left behind (detached; nothing waits on it again)
 * and NVML is not used again in this process. In a forked child (no worker there) nothing is
 * asked, and false returned. */
static bool ask(rt_nvml *nv, int job, bool tree, double secs)
{
    nvml_worker *w = nv->w;
    if (!w || nv->stuck)
        return false;
    if (getpid() != w->owner) {
        nv->stuck = true; /* a forked child: the worker stayed in the parent */
        return false;
    }
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    double whole = floor(secs);
    dl.tv_sec += (time_t)whole;
    dl.tv_nsec += (long)((secs - whole) * 1e9);
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    w->job = job;
    w->job_tree = tree;
    w->asked++;
    pthread_mutex_unlock(&w->mu);
    pthread_cond_signal(&w->ask_cv); /* unlocked: the worker wakes to a free mutex */
    pthread_mutex_lock(&w->mu);
    int e = 0;
    while (w->done != w->asked && e == 0) /* ETIMEDOUT, or (never seen) an error: given up */
        e = pthread_cond_timedwait(&w->done_cv, &w->mu, &dl);
    bool done = w->done == w->asked;
    if (!done)
        w->abandoned = true;
    pthread_mutex_unlock(&w->mu);
    if (done)
        return true;
    pthread_detach(w->thread);
    pthread_mutex_lock(&left_mu);
    w->next_left = left_behind;
    left_behind = w;
    pthread_mutex_unlock(&left_mu);
    nv->stuck = true;
    atomic_store(&nvml_hung, true);
    snprintf(nv->err, sizeof nv->err, "NVML did not answer within %g s", secs);
    rt_log(&nv->log, RT_LOG_WARN, "NVML did not answer within %g s; NVIDIA GPUs are not tracked from now on", secs);
    return false;
}

/* The deadline of a request after the start: longer with more GPUs to ask. */
static double call_deadline(const rt_nvml *nv)
{
    return nv->call_secs + (nv->ndev > 1 ? (double)(nv->ndev - 1) * RT_NVML_DEADLINE_PER_GPU_SECS : 0.0);
}

/* A GPU's name for messages. */
static const char *dev_name(const nvml_dev *d)
{
    return d->facts.uuid ? d->facts.uuid : d->facts.name ? d->facts.name : "?";
}

/* Tells, after a request, what went wrong since: a GPU fallen off the bus, and a reading that
 * failed otherwise than as unsupported; each at most once per GPU and kind. */
static void tell(rt_nvml *nv)
{
    for (size_t i = 0; i < nv->ndev; i++) {
        const nvml_dev *d = &nv->w->dev[i];
        nvml_seen *s = &nv->seen[i];
        if (d->lost) {
            if (!s->lost_told)
                rt_log(&nv->log, RT_LOG_WARN, "GPU %s has fallen off the bus; its figures are null from now on",
                       dev_name(d));
            s->lost_told = true;
            continue;
        }
        for (int k = 0; k < K_N; k++) {
            nvml_ret rc = d->rc[k];
            if (rc == NVML_SUCCESS || rc == RC_NOT_CALLED || rc == NVML_ERROR_NOT_SUPPORTED || (s->warned & 1u << k))
                continue;
            s->warned |= 1u << k;
            rt_log(&nv->log, RT_LOG_WARN, "GPU %s: NVML could not read its %s (error %d); it is null while that lasts",
                   dev_name(d), kind_name[k], rc);
        }
    }
}

/* Makes sure GPU i has a reading (tree: process lists) of the latest poll not used yet, asking
 * for a poll when it has not, and marks it used. Returns false when there is none to use. */
static bool take_fresh(rt_nvml *nv, size_t i, bool tree)
{
    nvml_seen *s = &nv->seen[i];
    if (nv->stuck)
        return false; /* what the stuck worker holds may change under us */
    if (!(tree ? s->tree_fresh : s->read_fresh)) {
        bool with_tree = tree || nv->tree_wanted;
        if (!ask(nv, tree ? JOB_TREE : JOB_POLL, with_tree, call_deadline(nv)))
            return false;
        for (size_t j = 0; j < nv->ndev; j++) {
            nv->seen[j].read_fresh |= !tree;
            nv->seen[j].tree_fresh |= with_tree;
        }
        tell(nv);
    }
    if (tree)
        s->tree_fresh = false;
    else
        s->read_fresh = false;
    return !nv->w->dev[i].lost;
}

/* Ends the worker: shuts NVML down and waits for its thread at most the call deadline, then
 * frees it; a worker that misses it is left behind; in a forked child, NVML is not called and
 * what the copy holds is freed. nv has no worker after. */
static void stop_worker(rt_nvml *nv)
{
    nvml_worker *w = nv->w;
    if (!w)
        return;
    if (!nv->stuck && getpid() == w->owner) {
        if (ask(nv, JOB_SHUTDOWN, false, call_deadline(nv))) {
            pthread_join(w->thread, NULL);
            pthread_cond_destroy(&w->ask_cv);
            pthread_cond_destroy(&w->done_cv);
            pthread_mutex_destroy(&w->mu);
            free_worker(w);
        }
    } else if (getpid() != w->owner && !w->abandoned) {
        free_worker(w); /* the parent's copy, with no thread here to touch it */
    }
    nv->w = NULL;
}

/* ---- the API ---------------------------------------------------------------------------------- */

rt_nvml *rt_nvml_open_timed(const char *path, const rt_logger *log, double init_secs, double call_secs)
{
    rt_nvml *nv = calloc(1, sizeof *nv);
    if (!nv)
        return NULL;
    if (log)
        nv->log = *log;
    nv->init_secs = init_secs;
    nv->call_secs = call_secs;
    if (atomic_load(&nvml_hung)) {
        snprintf(nv->err, sizeof nv->err, "NVML did not answer earlier in this process");
        rt_log(&nv->log, RT_LOG_DEBUG, "NVML not loaded (%s)", nv->err);
        return nv;
    }
    nvml_worker *w = calloc(1, sizeof *w);
    if (!w) {
        free(nv);
        return NULL;
    }
    if (!load(nv, w, path)) {
        free_worker(w);
        return nv;
    }
    int e = start_worker(w);
    if (e != 0) {
        snprintf(nv->err, sizeof nv->err, "no thread for NVML: %s", strerror(e));
        rt_log(&nv->log, RT_LOG_WARN, "%s; NVIDIA GPUs are not tracked", nv->err);
        free_worker(w);
        return nv;
    }
    nv->w = w;
    if (!ask(nv, JOB_INIT, false, nv->init_secs))
        return nv; /* stuck: told, and left behind */
    if (w->init_rc != NVML_SUCCESS) {
        snprintf(nv->err, sizeof nv->err, "nvmlInit failed (error %d)", w->init_rc);
        rt_log(&nv->log, RT_LOG_INFO, "NVML did not start (error %d): no NVIDIA GPUs tracked", w->init_rc);
        stop_worker(nv);
        return nv;
    }
    if (w->count_rc != NVML_SUCCESS)
        rt_log(&nv->log, RT_LOG_WARN, "NVML could not count the GPUs (error %d); NVIDIA GPUs are not tracked",
               w->count_rc);
    for (size_t k = 0; k < w->nnohandle; k++)
        rt_log(&nv->log, RT_LOG_WARN, "NVML: no handle for GPU %u", w->nohandle[k]);
    nv->ready = true;
    if (w->ndev == 0) { /* nothing to ask NVML again: no thread kept for it */
        stop_worker(nv);
        return nv;
    }
    nv->seen = calloc(w->ndev, sizeof *nv->seen);
    if (!nv->seen) {
        rt_nvml_close(nv);
        return NULL;
    }
    nv->ndev = w->ndev;
    return nv;
}

rt_nvml *rt_nvml_open(const char *path, const rt_logger *log)
{
    return rt_nvml_open_timed(path, log, RT_NVML_INIT_DEADLINE_SECS, RT_NVML_CALL_DEADLINE_SECS);
}

bool rt_nvml_ready(const rt_nvml *nv)
{
    return nv && nv->ready;
}

const char *rt_nvml_error(const rt_nvml *nv)
{
    return nv ? nv->err : "";
}

size_t rt_nvml_count(const rt_nvml *nv)
{
    return nv ? nv->ndev : 0;
}

void rt_nvml_read(rt_nvml *nv, size_t i, rt_gpu *o)
{
    const nvml_dev *d = &nv->w->dev[i];
    rt_gpu_facts_out(&d->facts, o);
    if (!take_fresh(nv, i, false))
        return;
    if (d->rc[K_UTIL] == NVML_SUCCESS)
        o->utilization_pct = d->util;
    if (d->rc[K_MEMORY] == NVML_SUCCESS) {
        o->vram_total_bytes = d->mem.total;
        o->vram_used_bytes = d->mem.used;
        o->vram_used_pct = d->mem.total ? (double)d->mem.used / (double)d->mem.total * 100.0 : NAN;
    }
    if (d->rc[K_TEMP] == NVML_SUCCESS)
        o->temperature_celsius = d->temp;
    if (d->rc[K_POWER] == NVML_SUCCESS)
        o->power_watts = d->power_mw / 1000.0;
    if (d->rc[K_CLOCK] == NVML_SUCCESS)
        o->frequency_mhz = d->clock_mhz;
}

/* The tree's VRAM on d from the latest lists (processes in both lists counted once) and
 * whether it has any process there. */
static void tree_vram(rt_nvml *nv, const nvml_dev *d, rt_pid_in_tree has, void *user, uint64_t *vram, bool *present)
{
    const nvml_pid_val *e = d->nproc ? nv->w->procs + d->proc_off : NULL;
    size_t nseen = 0;
    *vram = 0;
    *present = false;
    for (size_t i = 0; i < d->nproc; i++) {
        if (!has(user, e[i].pid))
            continue;
        *present = true;
        size_t j = 0;
        while (j < nseen && nv->pids[j] != e[i].pid)
            j++;
        if (j < nseen)
            continue;
        if (nseen == nv->pids_cap && rt_grow(&nv->pids, &nv->pids_cap, nseen + 1, sizeof *nv->pids) < 0)
            return;
        nv->pids[nseen++] = e[i].pid;
        if (e[i].val != NVML_VALUE_NOT_AVAILABLE)
            *vram += e[i].val;
    }
}

/* The tree's share of d's SM time from the latest samples: for each process of the tree, its
 * highest sample in the interval, summed and capped at 100. NaN when unsupported. */
static double tree_util(rt_nvml *nv, const nvml_dev *d, rt_pid_in_tree has, void *user)
{
    if (d->tree_util != TU_SAMPLES)
        return d->tree_util == TU_NONE ? 0.0 : NAN;
    const nvml_pid_val *e = d->nutil ? nv->w->utils + d->util_off : NULL;
    size_t np = 0;
    for (size_t i = 0; i < d->nutil; i++) {
        if (!has(user, e[i].pid))
            continue;
        size_t j = 0;
        while (j < np && nv->best[j].pid != e[i].pid)
            j++;
        if (j == np) {
            if (np == nv->best_cap && rt_grow(&nv->best, &nv->best_cap, np + 1, sizeof *nv->best) < 0)
                return NAN;
            nv->best[np++] = (nvml_pid_val){e[i].pid, 0};
        }
        if (e[i].val > nv->best[j].val)
            nv->best[j].val = e[i].val;
    }
    double sum = 0;
    for (size_t j = 0; j < np; j++)
        sum += (double)nv->best[j].val;
    return sum > 100 ? 100 : sum;
}

bool rt_nvml_tree(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, uint64_t *vram_bytes, bool *vram_ok,
                  bool *present, double *util_pct)
{
    nv->tree_wanted = true;
    if (!take_fresh(nv, i, true))
        return false;
    const nvml_dev *d = &nv->w->dev[i];
    *vram_ok = d->lists_ok;
    tree_vram(nv, d, has, user, vram_bytes, present);
    *util_pct = tree_util(nv, d, has, user);
    return true;
}

void rt_nvml_close(rt_nvml *nv)
{
    if (!nv)
        return;
    stop_worker(nv);
    free(nv->seen);
    free(nv->pids);
    free(nv->best);
    free(nv);
}
