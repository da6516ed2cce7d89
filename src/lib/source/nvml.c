/* nvml.c - NVIDIA GPUs through NVML without a build or run-time dependency on it: the library is
 * opened with dlopen (its dlerror text kept in the handle, as libuv's dl.c keeps it), every
 * symbol resolved once (a missing one nulls the fields it feeds), then devices, their readings
 * and the tree's share from the process lists and per-process utilization samples. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- the handle ---------------------------------------------------------------------------------- */

typedef struct nvml_dev {
    rt_gpu_facts facts;
    nvml_device h;
    bool lost;
    unsigned long long util_seen_us; /* newest per-process sample already counted */
} nvml_dev;

/* One process of the tree on a GPU: its pid and highest SM sample in the interval. */
typedef struct nvml_pid_util {
    unsigned int pid, best;
} nvml_pid_util;

struct rt_nvml {
    rt_logger log;
    void *dl;
    char err[256]; /* the last dlerror text or start failure; "" when none */
    nvml_api api;
    bool ready;
    nvml_dev *dev;
    size_t ndev, dev_cap;
    /* per-sample buffers, grown only when a longer list than ever before is seen */
    void *procbuf;
    size_t procbuf_cap; /* elements of the larger process list type */
    unsigned int *pids;
    size_t pids_cap;
    nvml_proc_util *utilbuf;
    size_t utilbuf_cap;
    nvml_pid_util *best;
    size_t best_cap;
};

/* ---- loading ------------------------------------------------------------------------------------- */

/* Resolves the first of the names the library has (newest version first). When it has none,
 * the dlerror text of the first name is kept as the handle's error and NULL returned. */
static void *sym(rt_nvml *nv, const char *a, const char *b, const char *c)
{
    const char *names[3] = {a, b, c};
    char first[sizeof nv->err] = "";
    for (int i = 0; i < 3 && names[i]; i++) {
        dlerror(); /* clear */
        void *p = dlsym(nv->dl, names[i]);
        if (p)
            return p;
        const char *e = dlerror();
        if (i == 0)
            snprintf(first, sizeof first, "%s", e ? e : a);
    }
    snprintf(nv->err, sizeof nv->err, "%s", first);
    return NULL;
}

#define RESOLVE(field, ...) (*(void **)&api->field = sym(nv, __VA_ARGS__))

/* Opens the library and resolves its symbols. Returns whether NVML is usable. */
static bool load(rt_nvml *nv, const char *path)
{
    nvml_api *api = &nv->api;
    const char *lib = path && *path ? path : "libnvidia-ml.so.1";
    nv->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!nv->dl) {
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
    nvml_ret rc = api->init();
    if (rc != NVML_SUCCESS) {
        snprintf(nv->err, sizeof nv->err, "nvmlInit failed (error %d)", rc);
        rt_log(&nv->log, RT_LOG_INFO, "NVML did not start (error %d): no NVIDIA GPUs tracked", rc);
        return false;
    }
    return true;
}

/* "00000000:3B:00.0" -> "0000:3b:00.0", the form sysfs and DRM fdinfo use. */
static void norm_bus_id(const char *in, char *out, size_t cap)
{
    unsigned dom, bus, dev, fn;
    if (sscanf(in, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
        snprintf(out, cap, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    else
        snprintf(out, cap, "%s", in);
}

/* Lists the GPUs and their static facts. Stops early only when out of memory. */
static void discover(rt_nvml *nv)
{
    const nvml_api *api = &nv->api;
    unsigned int n = 0;
    if (api->count(&n) != NVML_SUCCESS)
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
            rt_log(&nv->log, RT_LOG_WARN, "NVML: no handle for GPU %u", i);
            continue;
        }
        if (rt_grow(&nv->dev, &nv->dev_cap, nv->ndev + 1, sizeof *nv->dev) < 0)
            return;
        nvml_dev *d = &nv->dev[nv->ndev++];
        rt_gpu_facts_init(&d->facts);
        d->h = h;
        d->util_seen_us = now_us;
        rt_gpu_facts *f = &d->facts;
        char s[128];
        if (api->name && api->name(h, s, sizeof s) == NVML_SUCCESS)
            f->name = rt_strdup(s);
        if (api->uuid && api->uuid(h, s, sizeof s) == NVML_SUCCESS)
            f->uuid = rt_strdup(s);
        rt_gpu_facts_add(f, "driver", "nvidia");
        if (dv[0])
            rt_gpu_facts_add(f, "driver_version", "%s", dv);
        if (cuda[0])
            rt_gpu_facts_add(f, "cuda_driver_version", "%s", cuda);
        nvml_pci_info pci;
        if (api->pci && api->pci(h, &pci) == NVML_SUCCESS) {
            pci.bus_id[sizeof pci.bus_id - 1] = '\0';
            norm_bus_id(pci.bus_id, s, sizeof s);
            f->host_id = rt_strdup(s);
            rt_gpu_facts_add(f, "pci_device_id", "0x%08x", pci.pci_device_id);
            rt_gpu_facts_add(f, "pci_subsystem_id", "0x%08x", pci.pci_subsystem_id);
        }
        int major, minor;
        if (api->compute_cap && api->compute_cap(h, &major, &minor) == NVML_SUCCESS)
            rt_gpu_facts_add(f, "compute_capability", "%d.%d", major, minor);
        if (api->serial && api->serial(h, s, sizeof s) == NVML_SUCCESS && s[0])
            rt_gpu_facts_add(f, "serial", "%s", s);
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

rt_nvml *rt_nvml_open(const char *path, const rt_logger *log)
{
    rt_nvml *nv = calloc(1, sizeof *nv);
    if (!nv)
        return NULL;
    if (log)
        nv->log = *log;
    nv->ready = load(nv, path);
    if (nv->ready)
        discover(nv);
    return nv;
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

/* ---- readings -------------------------------------------------------------------------------------- */

/* Notes a lost GPU once; returns whether rc says the GPU is gone. */
static bool gone(rt_nvml *nv, nvml_dev *d, nvml_ret rc)
{
    if (rc != NVML_ERROR_GPU_IS_LOST)
        return false;
    if (!d->lost)
        rt_log(&nv->log, RT_LOG_WARN, "GPU %s has fallen off the bus; its figures are null from now on",
               d->facts.uuid ? d->facts.uuid : "?");
    d->lost = true;
    return true;
}

void rt_nvml_read(rt_nvml *nv, size_t i, rt_gpu *o)
{
    nvml_dev *d = &nv->dev[i];
    const nvml_api *api = &nv->api;
    rt_gpu_facts_out(&d->facts, o);
    if (d->lost)
        return;
    nvml_ret rc = NVML_SUCCESS;
    nvml_utilization u;
    if (api->utilization && (rc = api->utilization(d->h, &u)) == NVML_SUCCESS)
        o->utilization_pct = u.gpu;
    else if (api->utilization && gone(nv, d, rc))
        return;
    nvml_memory m;
    if (api->memory && api->memory(d->h, &m) == NVML_SUCCESS) {
        o->vram_total_bytes = m.total;
        o->vram_used_bytes = m.used;
        o->vram_used_pct = m.total ? (double)m.used / (double)m.total * 100.0 : NAN;
    }
    unsigned int v;
    if (api->temperature && api->temperature(d->h, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        o->temperature_celsius = v;
    if (api->power && api->power(d->h, &v) == NVML_SUCCESS)
        o->power_watts = v / 1000.0;
    if (api->clock && api->clock(d->h, NVML_CLOCK_GRAPHICS, &v) == NVML_SUCCESS)
        o->frequency_mhz = v;
}

/* ---- the tree's share ------------------------------------------------------------------------------ */

/* Calls a process list into nv->procbuf, growing it if the list is longer. Returns the number
 * of entries, or -1 when the list is not available. */
static long list_procs(rt_nvml *nv, nvml_list_fn fn, nvml_device h)
{
    /* the buffer is counted in the larger structure, so it fits either */
    if (!fn || rt_grow(&nv->procbuf, &nv->procbuf_cap, 64, sizeof(nvml_proc_v2)) < 0)
        return -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned int n = (unsigned int)nv->procbuf_cap;
        nvml_ret rc = fn(h, &n, nv->procbuf);
        if (rc == NVML_SUCCESS)
            return (long)n;
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE ||
            rt_grow(&nv->procbuf, &nv->procbuf_cap, (size_t)n + 16, sizeof(nvml_proc_v2)) < 0)
            return -1;
    }
    return -1;
}

/* The pid and VRAM of entry i of the list in nv->procbuf, whichever structure it holds. */
static void proc_at(const rt_nvml *nv, long i, unsigned int *pid, unsigned long long *mem)
{
    if (nv->api.procs_v2) {
        const nvml_proc_v2 *p = (const nvml_proc_v2 *)nv->procbuf + i;
        *pid = p->pid;
        *mem = p->used_gpu_memory;
    } else {
        const nvml_proc_v1 *p = (const nvml_proc_v1 *)nv->procbuf + i;
        *pid = p->pid;
        *mem = p->used_gpu_memory;
    }
}

/* The tree's VRAM on d (processes in both lists counted once) and whether it has any process
 * there. Returns false when neither list could be read. */
static bool tree_vram(rt_nvml *nv, nvml_dev *d, rt_pid_in_tree has, void *user, uint64_t *vram, bool *present)
{
    const nvml_list_fn fns[2] = {nv->api.compute_procs, nv->api.graphics_procs};
    size_t nseen = 0;
    bool any_list = false;
    *vram = 0;
    *present = false;
    for (int k = 0; k < 2; k++) {
        long n = list_procs(nv, fns[k], d->h);
        if (n < 0)
            continue;
        any_list = true;
        if (rt_grow(&nv->pids, &nv->pids_cap, nseen + (size_t)n, sizeof *nv->pids) < 0)
            return false;
        for (long i = 0; i < n; i++) {
            unsigned int pid;
            unsigned long long mem;
            proc_at(nv, i, &pid, &mem);
            if (!has(user, pid))
                continue;
            *present = true;
            size_t j = 0;
            while (j < nseen && nv->pids[j] != pid)
                j++;
            if (j < nseen)
                continue;
            nv->pids[nseen++] = pid;
            if (mem != NVML_VALUE_NOT_AVAILABLE)
                *vram += mem;
        }
    }
    return any_list;
}

/* The tree's share of d's SM time since the previous call: for each process of the tree, its
 * highest sample in the interval, summed and capped at 100. NaN when unsupported. */
static double tree_util(rt_nvml *nv, nvml_dev *d, rt_pid_in_tree has, void *user)
{
    if (!nv->api.proc_util)
        return NAN;
    unsigned int n = 0;
    nvml_ret rc = nv->api.proc_util(d->h, NULL, &n, d->util_seen_us);
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && n == 0))
        return 0.0; /* no samples since the last look: nothing ran */
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE && rc != NVML_SUCCESS)
        return NAN;
    if (rt_grow(&nv->utilbuf, &nv->utilbuf_cap, (size_t)n + 8, sizeof *nv->utilbuf) < 0)
        return NAN;
    n = (unsigned int)nv->utilbuf_cap;
    rc = nv->api.proc_util(d->h, nv->utilbuf, &n, d->util_seen_us);
    if (rc == NVML_ERROR_NOT_FOUND)
        return 0.0;
    if (rc != NVML_SUCCESS || rt_grow(&nv->best, &nv->best_cap, n, sizeof *nv->best) < 0)
        return NAN;
    size_t np = 0;
    unsigned long long newest = d->util_seen_us;
    for (unsigned int i = 0; i < n; i++) {
        const nvml_proc_util *s = &nv->utilbuf[i];
        if (s->timestamp > newest)
            newest = s->timestamp;
        if (!has(user, s->pid))
            continue;
        size_t j = 0;
        while (j < np && nv->best[j].pid != s->pid)
            j++;
        if (j == np)
            nv->best[np++] = (nvml_pid_util){s->pid, 0};
        if (s->sm_util > nv->best[j].best && s->sm_util <= 100)
            nv->best[j].best = s->sm_util;
    }
    d->util_seen_us = newest;
    double sum = 0;
    for (size_t j = 0; j < np; j++)
        sum += nv->best[j].best;
    return sum > 100 ? 100 : sum;
}

bool rt_nvml_tree(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, uint64_t *vram_bytes, bool *vram_ok,
                  bool *present, double *util_pct)
{
    nvml_dev *d = &nv->dev[i];
    if (d->lost)
        return false;
    *vram_ok = tree_vram(nv, d, has, user, vram_bytes, present);
    *util_pct = tree_util(nv, d, has, user);
    return true;
}

void rt_nvml_close(rt_nvml *nv)
{
    if (!nv)
        return;
    for (size_t i = 0; i < nv->ndev; i++)
        rt_gpu_facts_free(&nv->dev[i].facts);
    if (nv->dl) {
        if (nv->ready && nv->api.shutdown)
            nv->api.shutdown();
        dlclose(nv->dl);
    }
    free(nv->dev);
    free(nv->procbuf);
    free(nv->pids);
    free(nv->utilbuf);
    free(nv->best);
    free(nv);
}
