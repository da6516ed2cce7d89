/* gpu.c - GPUs without a build or run-time dependency on any GPU stack: NVML is opened with
 * dlopen and every symbol resolved once (a missing one nulls the fields it feeds); AMD and
 * Intel cards are read from sysfs; the tracked tree's share comes from NVML's process lists
 * and per-process utilization samples, and from DRM fdinfo engine counters. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

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

typedef struct nvml_api {
    void *dl;
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
    nvml_ret (*compute_procs)(nvml_device, unsigned int *, void *);
    nvml_ret (*graphics_procs)(nvml_device, unsigned int *, void *);
    bool procs_v2; /* the lists take nvml_proc_v2 (else nvml_proc_v1) */
    nvml_ret (*proc_util)(nvml_device, nvml_proc_util *, unsigned int *, unsigned long long);
} nvml_api;

/* ---- devices ---------------------------------------------------------------------------------- */

#define MAX_DETAIL 12

enum { KIND_NVML, KIND_DRM };

typedef struct gpu_dev {
    int kind;
    /* NVML */
    nvml_device h;
    bool lost;
    unsigned long long util_seen_us; /* newest per-process sample already counted */
    /* DRM: attribute files kept open */
    int busy_fd, vram_used_fd, vram_total_fd, temp_fd, power_fd, freq_fd;
    double freq_to_mhz; /* Hz files: 1e-6; MHz files: 1 */
    /* static facts */
    char *uuid, *name, *host_id;
    rt_kv detail[MAX_DETAIL];
    size_t ndetail;
    int64_t core_count;
} gpu_dev;

/* The tree's DRM clients, to turn engine counters into utilization between samples. */
typedef struct drm_seen {
    char pdev[32];
    uint64_t client_id;
    rt_drm_engine engines[RT_DRM_MAX_ENGINES];
    size_t nengines;
    double mono;
    unsigned gen;
} drm_seen;

struct rt_gpus {
    const rt_roots *roots;
    rt_logger log;
    nvml_api nv;
    bool nv_ok;
    gpu_dev *dev;
    size_t ndev, dev_cap;
    rt_gpu *out;
    bool have_drm;
    drm_seen *seen;
    size_t nseen, seen_cap;
    unsigned gen;
    void *procbuf;
    size_t procbuf_cap; /* elements of the largest process list type */
    nvml_proc_util *utilbuf;
    size_t utilbuf_cap;
    char buf[4096];
};

static void add_detail(gpu_dev *d, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_detail(gpu_dev *d, const char *key, const char *fmt, ...)
{
    if (d->ndetail == MAX_DETAIL)
        return;
    char v[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    char *c = strdup(v);
    if (!c)
        return;
    d->detail[d->ndetail].key = key; /* static strings */
    d->detail[d->ndetail].value = c;
    d->ndetail++;
}

static gpu_dev *new_dev(rt_gpus *g, int kind)
{
    if (rt_grow(&g->dev, &g->dev_cap, g->ndev + 1, sizeof *g->dev) < 0)
        return NULL;
    gpu_dev *d = &g->dev[g->ndev++];
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->busy_fd = d->vram_used_fd = d->vram_total_fd = d->temp_fd = d->power_fd = d->freq_fd = -1;
    d->core_count = RT_NULL_I64;
    return d;
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

/* ---- NVML ----------------------------------------------------------------------------------- */

/* Resolves the first of the names the library has (newest version first). */
static void *sym(void *dl, const char *a, const char *b, const char *c)
{
    void *p = dlsym(dl, a);
    if (!p && b)
        p = dlsym(dl, b);
    if (!p && c)
        p = dlsym(dl, c);
    return p;
}

#define RESOLVE(field, ...) (*(void **)&nv->field = sym(nv->dl, __VA_ARGS__))

static bool nvml_load(rt_gpus *g, const char *path)
{
    nvml_api *nv = &g->nv;
    const char *env = getenv("TRACKER_NVML_LIBRARY");
    const char *lib = path && *path ? path : env && *env ? env : "libnvidia-ml.so.1";
    nv->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!nv->dl) {
        /* no NVIDIA driver: the normal case on most machines, not worth a warning */
        rt_log(&g->log, RT_LOG_DEBUG, "NVML not loaded (%s)", dlerror());
        return false;
    }
    RESOLVE(init, "nvmlInit_v2", "nvmlInit", NULL);
    RESOLVE(shutdown, "nvmlShutdown", NULL, NULL);
    RESOLVE(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL);
    RESOLVE(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL);
    if (!nv->init || !nv->count || !nv->handle) {
        rt_log(&g->log, RT_LOG_WARN, "%s lacks the NVML entry points; NVIDIA GPUs are not tracked", lib);
        return false;
    }
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
    nv->procs_v2 = nv->compute_procs || nv->graphics_procs;
    if (!nv->procs_v2) { /* an old driver: the first lists, with the short structure */
        RESOLVE(compute_procs, "nvmlDeviceGetComputeRunningProcesses", NULL, NULL);
        RESOLVE(graphics_procs, "nvmlDeviceGetGraphicsRunningProcesses", NULL, NULL);
    }
    RESOLVE(proc_util, "nvmlDeviceGetProcessUtilization", NULL, NULL);
    nvml_ret rc = nv->init();
    if (rc != NVML_SUCCESS) {
        rt_log(&g->log, RT_LOG_INFO, "NVML did not start (error %d): no NVIDIA GPUs tracked", rc);
        return false;
    }
    return true;
}

static void nvml_discover(rt_gpus *g)
{
    nvml_api *nv = &g->nv;
    unsigned int n = 0;
    if (nv->count(&n) != NVML_SUCCESS)
        return;
    char dv[96] = "", cuda[32] = "";
    if (nv->driver_version && nv->driver_version(dv, sizeof dv) != NVML_SUCCESS)
        dv[0] = '\0';
    int cv;
    if (nv->cuda_version && nv->cuda_version(&cv) == NVML_SUCCESS)
        snprintf(cuda, sizeof cuda, "%d.%d", cv / 1000, (cv % 1000) / 10);
    for (unsigned int i = 0; i < n; i++) {
        nvml_device h;
        if (nv->handle(i, &h) != NVML_SUCCESS) {
            rt_log(&g->log, RT_LOG_WARN, "NVML: no handle for GPU %u", i);
            continue;
        }
        gpu_dev *d = new_dev(g, KIND_NVML);
        if (!d)
            return;
        d->h = h;
        char s[128];
        if (nv->name && nv->name(h, s, sizeof s) == NVML_SUCCESS)
            d->name = strdup(s);
        if (nv->uuid && nv->uuid(h, s, sizeof s) == NVML_SUCCESS)
            d->uuid = strdup(s);
        add_detail(d, "driver", "nvidia");
        if (dv[0])
            add_detail(d, "driver_version", "%s", dv);
        if (cuda[0])
            add_detail(d, "cuda_driver_version", "%s", cuda);
        nvml_pci_info pci;
        if (nv->pci && nv->pci(h, &pci) == NVML_SUCCESS) {
            pci.bus_id[sizeof pci.bus_id - 1] = '\0';
            norm_bus_id(pci.bus_id, s, sizeof s);
            d->host_id = strdup(s);
            add_detail(d, "pci_device_id", "0x%08x", pci.pci_device_id);
            add_detail(d, "pci_subsystem_id", "0x%08x", pci.pci_subsystem_id);
        }
        int major, minor;
        if (nv->compute_cap && nv->compute_cap(h, &major, &minor) == NVML_SUCCESS)
            add_detail(d, "compute_capability", "%d.%d", major, minor);
        if (nv->serial && nv->serial(h, s, sizeof s) == NVML_SUCCESS && s[0])
            add_detail(d, "serial", "%s", s);
        unsigned int v;
        if (nv->power_limit && nv->power_limit(h, &v) == NVML_SUCCESS)
            add_detail(d, "power_limit_watts", "%.1f", v / 1000.0);
        if (nv->max_clock && nv->max_clock(h, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
            add_detail(d, "max_sm_clock_mhz", "%u", v);
        if (nv->max_clock && nv->max_clock(h, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
            add_detail(d, "max_memory_clock_mhz", "%u", v);
        if (nv->cores && nv->cores(h, &v) == NVML_SUCCESS)
            d->core_count = v;
        /* per-process samples from before tracking began are not ours: start from now */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        d->util_seen_us = (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000;
    }
}

/* Notes a lost GPU once; returns whether rc says the GPU is gone. */
static bool nvml_lost(rt_gpus *g, gpu_dev *d, nvml_ret rc)
{
    if (rc != NVML_ERROR_GPU_IS_LOST)
        return false;
    if (!d->lost)
        rt_log(&g->log, RT_LOG_WARN, "GPU %s has fallen off the bus; its figures are null from now on",
               d->uuid ? d->uuid : "?");
    d->lost = true;
    return true;
}

static void nvml_read(rt_gpus *g, gpu_dev *d, rt_gpu *o)
{
    nvml_api *nv = &g->nv;
    if (d->lost)
        return;
    nvml_ret rc;
    nvml_utilization u;
    if (nv->utilization && (rc = nv->utilization(d->h, &u)) == NVML_SUCCESS)
        o->utilization_pct = u.gpu;
    else if (nv->utilization && nvml_lost(g, d, rc))
        return;
    nvml_memory m;
    if (nv->memory && nv->memory(d->h, &m) == NVML_SUCCESS) {
        o->vram_total_bytes = m.total;
        o->vram_used_bytes = m.used;
        o->vram_used_pct = m.total ? (double)m.used / (double)m.total * 100.0 : NAN;
    }
    unsigned int v;
    if (nv->temperature && nv->temperature(d->h, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        o->temperature_celsius = v;
    if (nv->power && nv->power(d->h, &v) == NVML_SUCCESS)
        o->power_watts = v / 1000.0;
    if (nv->clock && nv->clock(d->h, NVML_CLOCK_GRAPHICS, &v) == NVML_SUCCESS)
        o->frequency_mhz = v;
}

/* Calls a process list into g->procbuf, growing it once if the list is longer. Returns the
 * number of entries, or -1 when the list is not available. */
static long nvml_procs(rt_gpus *g, nvml_ret (*fn)(nvml_device, unsigned int *, void *), nvml_device h)
{
    /* the buffer is counted in the larger structure, so it fits either */
    if (!fn || rt_grow(&g->procbuf, &g->procbuf_cap, 64, sizeof(nvml_proc_v2)) < 0)
        return -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        unsigned int n = (unsigned int)g->procbuf_cap;
        nvml_ret rc = fn(h, &n, g->procbuf);
        if (rc == NVML_SUCCESS)
            return (long)n;
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE ||
            rt_grow(&g->procbuf, &g->procbuf_cap, (size_t)n + 16, sizeof(nvml_proc_v2)) < 0)
            return -1;
    }
    return -1;
}

static void proc_at(const rt_gpus *g, long i, unsigned int *pid, unsigned long long *mem)
{
    if (g->nv.procs_v2) {
        const nvml_proc_v2 *p = (const nvml_proc_v2 *)g->procbuf + i;
        *pid = p->pid;
        *mem = p->used_gpu_memory;
    } else {
        const nvml_proc_v1 *p = (const nvml_proc_v1 *)g->procbuf + i;
        *pid = p->pid;
        *mem = p->used_gpu_memory;
    }
}

/* The tree's VRAM on device d (processes in both lists counted once) and whether it has any
 * process there. Returns false when neither list could be read. */
static bool nvml_tree_vram(rt_gpus *g, gpu_dev *d, rt_pid_in_tree has, void *user, uint64_t *vram, bool *present)
{
    nvml_ret (*fns[2])(nvml_device, unsigned int *, void *) = {g->nv.compute_procs, g->nv.graphics_procs};
    unsigned int seen[64];
    size_t nseen = 0;
    bool any_list = false;
    *vram = 0;
    *present = false;
    for (int k = 0; k < 2; k++) {
        long n = nvml_procs(g, fns[k], d->h);
        if (n < 0)
            continue;
        any_list = true;
        for (long i = 0; i < n; i++) {
            unsigned int pid;
            unsigned long long mem;
            proc_at(g, i, &pid, &mem);
            if (!has(user, pid))
                continue;
            *present = true;
            bool dup = false;
            for (size_t j = 0; j < nseen; j++)
                dup = dup || seen[j] == pid;
            if (dup)
                continue;
            if (nseen < 64)
                seen[nseen++] = pid;
            if (mem != NVML_VALUE_NOT_AVAILABLE)
                *vram += mem;
        }
    }
    return any_list;
}

/* The tree's share of device d's SM time since the previous call: for each process of the
 * tree, its highest sample in the interval, summed and capped at 100. NaN when unsupported. */
static double nvml_tree_util(rt_gpus *g, gpu_dev *d, rt_pid_in_tree has, void *user)
{
    if (!g->nv.proc_util)
        return NAN;
    unsigned int n = 0;
    nvml_ret rc = g->nv.proc_util(d->h, NULL, &n, d->util_seen_us);
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && n == 0))
        return 0.0; /* no samples since the last look: nothing ran */
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE && rc != NVML_SUCCESS)
        return NAN;
    if (rt_grow(&g->utilbuf, &g->utilbuf_cap, (size_t)n + 8, sizeof *g->utilbuf) < 0)
        return NAN;
    n = (unsigned int)g->utilbuf_cap;
    rc = g->nv.proc_util(d->h, g->utilbuf, &n, d->util_seen_us);
    if (rc == NVML_ERROR_NOT_FOUND)
        return 0.0;
    if (rc != NVML_SUCCESS)
        return NAN;
    unsigned int pids[64], best[64];
    size_t np = 0;
    unsigned long long newest = d->util_seen_us;
    for (unsigned int i = 0; i < n; i++) {
        const nvml_proc_util *s = &g->utilbuf[i];
        if (s->timestamp > newest)
            newest = s->timestamp;
        if (!has(user, s->pid))
            continue;
        size_t j = 0;
        while (j < np && pids[j] != s->pid)
            j++;
        if (j == np) {
            if (np == 64)
                continue;
            pids[np] = s->pid;
            best[np++] = 0;
        }
        if (s->sm_util > best[j] && s->sm_util <= 100)
            best[j] = s->sm_util;
    }
    d->util_seen_us = newest;
    double sum = 0;
    for (size_t j = 0; j < np; j++)
        sum += best[j];
    return sum > 100 ? 100 : sum;
}

/* ---- AMD and Intel through sysfs -------------------------------------------------------------- */

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int open_attr(const rt_gpus *g, const char *card, const char *rel)
{
    char path[256];
    if (!rt_pathf(path, sizeof path, "class/drm/%s/%s", card, rel))
        return -1;
    int fd = rt_open_at(g->roots->sys_fd, path);
    return fd < 0 ? -1 : fd;
}

static char *read_card_str(const rt_gpus *g, const char *card, const char *rel)
{
    char buf[1024];
    int fd = open_attr(g, card, rel);
    if (fd < 0)
        return NULL;
    ssize_t n = rt_pread_single(fd, buf, sizeof buf);
    close(fd);
    char out[1024];
    return n > 0 && rt_copy_trim(out, sizeof out, buf, (size_t)n) ? strdup(out) : NULL;
}

/* The first hwmon directory of the card's device, e.g. "device/hwmon/hwmon3". */
static bool card_hwmon(const rt_gpus *g, const char *card, char *out, size_t cap)
{
    char path[256];
    if (!rt_pathf(path, sizeof path, "class/drm/%s/device/hwmon", card))
        return false;
    int fd = openat(g->roots->sys_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return false;
    }
    bool ok = false;
    struct dirent *de;
    while (!ok && (de = readdir(dir)) != NULL)
        if (strncmp(de->d_name, "hwmon", 5) == 0)
            ok = rt_pathf(out, cap, "device/hwmon/%s", de->d_name);
    closedir(dir);
    return ok;
}

static void drm_card(rt_gpus *g, const char *card)
{
    char path[256], target[512];
    if (!rt_pathf(path, sizeof path, "class/drm/%s/device/driver", card))
        return;
    ssize_t n = readlinkat(g->roots->sys_fd, path, target, sizeof target - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    char driver[32];
    if (!rt_copy_str(driver, sizeof driver, base_of(target)))
        return;
    bool amd = strcmp(driver, "amdgpu") == 0, intel = strcmp(driver, "i915") == 0 || strcmp(driver, "xe") == 0;
    if (!amd && !intel)
        return; /* NVIDIA cards come through NVML; display-only drivers are not GPUs to track */
    /* the PCI address: the device's uevent names it; else the last part of the link */
    char *host = NULL, *uevent = read_card_str(g, card, "device/uevent");
    const char *slot = uevent ? strstr(uevent, "PCI_SLOT_NAME=") : NULL;
    if (slot) {
        slot += 14;
        host = strndup(slot, strcspn(slot, "\n"));
    } else if (rt_pathf(path, sizeof path, "class/drm/%s/device", card) &&
               (n = readlinkat(g->roots->sys_fd, path, target, sizeof target - 1)) > 0) {
        target[n] = '\0';
        host = strdup(base_of(target));
    }
    free(uevent);
    gpu_dev *d = new_dev(g, KIND_DRM);
    if (!d) {
        free(host);
        return;
    }
    d->host_id = host;
    d->uuid = read_card_str(g, card, "device/unique_id");
    char *product = read_card_str(g, card, "device/product_name");
    char *vendor = read_card_str(g, card, "device/vendor");
    char *device = read_card_str(g, card, "device/device");
    if (product) {
        d->name = product;
    } else {
        char nm[96];
        snprintf(nm, sizeof nm, "%s GPU %s", amd ? "AMD" : "Intel", device ? device : "");
        d->name = strdup(nm);
    }
    add_detail(d, "driver", "%s", driver);
    if (vendor)
        add_detail(d, "pci_vendor_id", "%s", vendor);
    if (device)
        add_detail(d, "pci_device_id", "%s", device);
    free(vendor);
    free(device);
    char *vbios = read_card_str(g, card, "device/vbios_version");
    if (vbios)
        add_detail(d, "vbios_version", "%s", vbios);
    free(vbios);
    add_detail(d, "card", "%s", card);
    d->busy_fd = open_attr(g, card, "device/gpu_busy_percent");
    d->vram_used_fd = open_attr(g, card, "device/mem_info_vram_used");
    d->vram_total_fd = open_attr(g, card, "device/mem_info_vram_total");
    char hw[128], rel[192];
    if (card_hwmon(g, card, hw, sizeof hw)) {
        rt_pathf(rel, sizeof rel, "%s/temp1_input", hw);
        d->temp_fd = open_attr(g, card, rel);
        rt_pathf(rel, sizeof rel, "%s/power1_average", hw);
        d->power_fd = open_attr(g, card, rel);
        if (d->power_fd < 0) {
            rt_pathf(rel, sizeof rel, "%s/power1_input", hw);
            d->power_fd = open_attr(g, card, rel);
        }
        rt_pathf(rel, sizeof rel, "%s/freq1_input", hw);
        d->freq_fd = open_attr(g, card, rel);
        d->freq_to_mhz = 1e-6; /* hwmon frequencies are in Hz */
    }
    if (d->freq_fd < 0) { /* Intel: the GPU's actual frequency in MHz */
        static const char *const freq_files[] = {"gt_act_freq_mhz", "device/tile0/gt0/freq0/act_freq"};
        for (size_t i = 0; i < RT_ARRAY_LEN(freq_files) && d->freq_fd < 0; i++)
            d->freq_fd = open_attr(g, card, freq_files[i]);
        d->freq_to_mhz = 1.0;
    }
    g->have_drm = true;
}

static void drm_discover(rt_gpus *g)
{
    if (g->roots->sys_fd < 0)
        return;
    int fd = openat(g->roots->sys_fd, "class/drm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return;
    }
    char names[32][32];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL && n < 32) {
        const char *q = de->d_name;
        if (strncmp(q, "card", 4) != 0 || !q[4] || strspn(q + 4, "0123456789") != strlen(q + 4))
            continue; /* connectors (card0-DP-1) and render nodes are not devices */
        if (rt_copy_str(names[n], sizeof names[0], q))
            n++;
    }
    closedir(dir);
    /* card0, card1, ... in number order */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strtol(names[j] + 4, NULL, 10) < strtol(names[i] + 4, NULL, 10)) {
                char t[32];
                memcpy(t, names[i], sizeof t);
                memcpy(names[i], names[j], sizeof t);
                memcpy(names[j], t, sizeof t);
            }
    for (size_t i = 0; i < n; i++)
        drm_card(g, names[i]);
}

static bool read_u64_fd(rt_gpus *g, int fd, uint64_t *out)
{
    if (fd < 0)
        return false;
    ssize_t n = rt_pread_single(fd, g->buf, sizeof g->buf);
    const char *q = g->buf;
    return n > 0 && rt_parse_u64(&q, g->buf + n, out);
}

static void drm_read(rt_gpus *g, gpu_dev *d, rt_gpu *o)
{
    uint64_t v, t;
    if (read_u64_fd(g, d->busy_fd, &v) && v <= 100)
        o->utilization_pct = (double)v;
    if (read_u64_fd(g, d->vram_total_fd, &t)) {
        o->vram_total_bytes = t;
        if (read_u64_fd(g, d->vram_used_fd, &v)) {
            o->vram_used_bytes = v;
            o->vram_used_pct = t ? (double)v / (double)t * 100.0 : NAN;
        }
    }
    if (read_u64_fd(g, d->temp_fd, &v))
        o->temperature_celsius = (double)v / 1000.0; /* millidegrees */
    if (read_u64_fd(g, d->power_fd, &v))
        o->power_watts = (double)v / 1e6; /* microwatts */
    if (read_u64_fd(g, d->freq_fd, &v))
        o->frequency_mhz = (double)v * d->freq_to_mhz;
}

/* ---- DRM fdinfo ----------------------------------------------------------------------------------- */

static rt_drm_engine *engine(rt_drm_client *c, const char *name, size_t len)
{
    if (len == 0 || len >= sizeof c->engines[0].name)
        return NULL;
    for (size_t i = 0; i < c->nengines; i++)
        if (strlen(c->engines[i].name) == len && memcmp(c->engines[i].name, name, len) == 0)
            return &c->engines[i];
    if (c->nengines == RT_DRM_MAX_ENGINES)
        return NULL;
    rt_drm_engine *e = &c->engines[c->nengines++];
    memset(e, 0, sizeof *e);
    memcpy(e->name, name, len);
    e->capacity = 1;
    return e;
}

/* A number with an optional unit: KiB, MiB, GiB scale memory to bytes. */
static bool value_bytes(const char *p, const char *end, uint64_t *out)
{
    uint64_t v;
    if (!rt_parse_u64(&p, end, &v))
        return false;
    while (p < end && *p == ' ')
        p++;
    uint64_t mul = 1;
    if (end - p >= 3 && memcmp(p, "KiB", 3) == 0)
        mul = 1024;
    else if (end - p >= 3 && memcmp(p, "MiB", 3) == 0)
        mul = 1024 * 1024;
    else if (end - p >= 3 && memcmp(p, "GiB", 3) == 0)
        mul = 1024ull * 1024 * 1024;
    *out = v * mul;
    return true;
}

static bool starts(const char *k, size_t kl, const char *prefix, size_t *rest)
{
    size_t pl = strlen(prefix);
    if (kl <= pl || memcmp(k, prefix, pl) != 0)
        return false;
    *rest = pl;
    return true;
}

int rt_drm_fdinfo_parse(const char *buf, size_t len, rt_drm_client *out)
{
    memset(out, 0, sizeof *out);
    bool has_driver = false;
    uint64_t resident = 0, memory = 0, total = 0;
    bool has_resident = false, has_memory = false, has_total = false;
    const char *p = buf, *end = buf + len, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon || le - line < 5 || memcmp(line, "drm-", 4) != 0)
            continue;
        const char *k = line;
        size_t kl = (size_t)(colon - line);
        const char *v = colon + 1;
        while (v < le && (*v == ' ' || *v == '\t'))
            v++;
        size_t r;
        uint64_t x;
        if (kl == 10 && memcmp(k, "drm-driver", 10) == 0) {
            has_driver = rt_copy_trim(out->driver, sizeof out->driver, v, (size_t)(le - v)) > 0;
        } else if (kl == 8 && memcmp(k, "drm-pdev", 8) == 0) {
            rt_copy_trim(out->pdev, sizeof out->pdev, v, (size_t)(le - v));
        } else if (kl == 13 && memcmp(k, "drm-client-id", 13) == 0) {
            const char *q = v;
            out->has_client_id = rt_parse_u64(&q, le, &out->client_id);
        } else if (starts(k, kl, "drm-engine-capacity-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e && rt_parse_u64(&q, le, &x) && x > 0)
                e->capacity = x;
        } else if (starts(k, kl, "drm-engine-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e && rt_parse_u64(&q, le, &e->busy_ns))
                e->has_ns = true;
        } else if (starts(k, kl, "drm-total-cycles-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e)
                rt_parse_u64(&q, le, &e->total_cycles);
        } else if (starts(k, kl, "drm-cycles-", &r)) {
            rt_drm_engine *e = engine(out, k + r, kl - r);
            const char *q = v;
            if (e && rt_parse_u64(&q, le, &e->cycles))
                e->has_cycles = true;
        } else {
            /* memory regions: drm-resident-<r>, drm-total-<r>, drm-memory-<r> (older); the
             * device's own memory is called vram (amdgpu, xe) or local (i915) */
            const char *prefixes[] = {"drm-resident-", "drm-total-", "drm-memory-"};
            uint64_t *acc[] = {&resident, &total, &memory};
            bool *flag[] = {&has_resident, &has_total, &has_memory};
            for (int i = 0; i < 3; i++) {
                if (!starts(k, kl, prefixes[i], &r))
                    continue;
                size_t rl = kl - r;
                const char *region = k + r;
                bool vram = (rl >= 4 && memcmp(region, "vram", 4) == 0) || (rl >= 5 && memcmp(region, "local", 5) == 0);
                if (vram && value_bytes(v, le, &x)) {
                    *acc[i] += x;
                    *flag[i] = true;
                }
                break;
            }
        }
    }
    if (has_resident || has_memory || has_total) {
        out->has_vram = true;
        out->vram_bytes = has_resident ? resident : has_memory ? memory : total;
    }
    return has_driver && out->has_client_id ? 0 : -1;
}

/* ---- the tree's share ---------------------------------------------------------------------------- */

static size_t dev_by_pdev(const rt_gpus *g, const char *pdev)
{
    for (size_t i = 0; i < g->ndev; i++)
        if (g->dev[i].kind == KIND_DRM && g->dev[i].host_id && strcmp(g->dev[i].host_id, pdev) == 0)
            return i;
    return (size_t)-1;
}

/* Adds what client c did since it was last seen to the per-device engine totals. */
static void drm_account(rt_gpus *g, const rt_drm_client *c, double mono, double *busy, uint64_t *vram, bool *present)
{
    size_t di = dev_by_pdev(g, c->pdev);
    if (di == (size_t)-1)
        return;
    present[di] = true;
    drm_seen *s = NULL;
    for (size_t i = 0; i < g->nseen; i++)
        if (g->seen[i].client_id == c->client_id && strcmp(g->seen[i].pdev, c->pdev) == 0)
            s = &g->seen[i];
    if (s && s->gen == g->gen)
        return; /* the same client through another fd: counted once */
    if (c->has_vram)
        vram[di] += c->vram_bytes;
    if (s && mono > s->mono) {
        double dt_ns = (mono - s->mono) * 1e9;
        double dev_best = busy[di];
        for (size_t e = 0; e < c->nengines; e++) {
            const rt_drm_engine *now = &c->engines[e];
            const rt_drm_engine *was = NULL;
            for (size_t k = 0; k < s->nengines; k++)
                if (strcmp(s->engines[k].name, now->name) == 0)
                    was = &s->engines[k];
            if (!was)
                continue;
            double u = 0;
            if (now->has_ns && now->busy_ns >= was->busy_ns)
                u = (double)(now->busy_ns - was->busy_ns) / dt_ns / (double)now->capacity;
            else if (now->has_cycles && now->total_cycles > was->total_cycles && now->cycles >= was->cycles)
                u = (double)(now->cycles - was->cycles) / (double)(now->total_cycles - was->total_cycles);
            if (u > dev_best)
                dev_best = u;
        }
        busy[di] = dev_best;
    }
    if (!s) {
        if (rt_grow(&g->seen, &g->seen_cap, g->nseen + 1, sizeof *g->seen) < 0)
            return;
        s = &g->seen[g->nseen++];
        rt_copy_str(s->pdev, sizeof s->pdev, c->pdev);
        s->client_id = c->client_id;
    }
    memcpy(s->engines, c->engines, sizeof s->engines);
    s->nengines = c->nengines;
    s->mono = mono;
    s->gen = g->gen;
}

/* Reads the DRM clients among pid's open files. */
static void drm_scan_pid(rt_gpus *g, int64_t pid, double mono, double *busy, uint64_t *vram, bool *present)
{
    char path[64];
    snprintf(path, sizeof path, "%lld/fd", (long long)pid);
    int dfd = openat(g->roots->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    char dbuf[4096] __attribute__((aligned(8)));
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, dbuf, sizeof dbuf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct dirent64 *de = (struct dirent64 *)(dbuf + off);
            off += de->d_reclen;
            if (de->d_name[0] == '.')
                continue;
            char target[64];
            ssize_t tl = readlinkat(dfd, de->d_name, target, sizeof target - 1);
            if (tl < 9 || memcmp(target, "/dev/dri/", 9) != 0)
                continue; /* only GPU device nodes carry DRM usage statistics */
            char info[320];
            if (!rt_pathf(info, sizeof info, "%lld/fdinfo/%s", (long long)pid, de->d_name))
                continue;
            ssize_t m = rt_read_at(g->roots->proc_fd, info, g->buf, sizeof g->buf);
            rt_drm_client c;
            if (m > 0 && rt_drm_fdinfo_parse(g->buf, (size_t)m, &c) == 0)
                drm_account(g, &c, mono, busy, vram, present);
        }
    }
    close(dfd);
}

void rt_gpus_tree(rt_gpus *g, rt_pid_in_tree has, void *user, const int64_t *pids, size_t npids, double mono,
                  double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used)
{
    *util_pct = NAN;
    *vram_bytes = RT_NULL_U64;
    *gpus_used = RT_NULL_I64;
    if (!g || g->ndev == 0)
        return;
    double busy_drm[64] = {0};
    uint64_t vram_drm[64] = {0};
    bool present[64] = {false};
    g->gen++;
    if (g->have_drm)
        for (size_t i = 0; i < npids; i++)
            drm_scan_pid(g, pids[i], mono, busy_drm, vram_drm, present);
    size_t k = 0;
    for (size_t i = 0; i < g->nseen; i++) /* clients gone: forget them */
        if (g->seen[i].gen == g->gen)
            g->seen[k++] = g->seen[i];
    g->nseen = k;

    double util = 0;
    uint64_t vram = 0;
    int64_t used = 0;
    bool util_known = false, vram_known = false;
    for (size_t i = 0; i < g->ndev && i < 64; i++) {
        gpu_dev *d = &g->dev[i];
        double u = NAN;
        uint64_t v = 0;
        bool on = false, v_ok = false;
        if (d->kind == KIND_NVML) {
            if (d->lost)
                continue;
            v_ok = nvml_tree_vram(g, d, has, user, &v, &on);
            u = nvml_tree_util(g, d, has, user);
        } else {
            u = busy_drm[i] * 100.0;
            if (u > 100)
                u = 100;
            v = vram_drm[i];
            v_ok = true;
            on = present[i];
        }
        if (!isnan(u)) {
            util += u;
            util_known = true;
            on = on || u > 0;
        }
        if (v_ok) {
            vram += v;
            vram_known = true;
        }
        used += on;
    }
    if (util_known)
        *util_pct = util;
    if (vram_known)
        *vram_bytes = vram;
    if (util_known || vram_known)
        *gpus_used = used;
}

/* ---- the set ---------------------------------------------------------------------------------- */

rt_gpus *rt_gpus_open(const rt_roots *roots, const char *nvml_path, const rt_logger *log)
{
    rt_gpus *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->roots = roots;
    if (log)
        g->log = *log;
    g->nv_ok = nvml_load(g, nvml_path);
    if (g->nv_ok)
        nvml_discover(g);
    drm_discover(g);
    if (g->ndev) {
        g->out = calloc(g->ndev, sizeof *g->out);
        if (!g->out) {
            rt_gpus_close(g);
            return NULL;
        }
    }
    return g;
}

const rt_gpu *rt_gpus_read(rt_gpus *g, size_t *count)
{
    *count = 0;
    if (!g || !g->ndev)
        return NULL;
    for (size_t i = 0; i < g->ndev; i++) {
        gpu_dev *d = &g->dev[i];
        rt_gpu *o = &g->out[i];
        o->uuid = d->uuid;
        o->name = d->name;
        o->device_type = "GPU";
        o->host_id = d->host_id;
        o->detail = d->detail;
        o->detail_count = d->ndetail;
        o->core_count = d->core_count;
        o->utilization_pct = o->vram_used_pct = o->temperature_celsius = o->power_watts = o->frequency_mhz = NAN;
        o->vram_total_bytes = o->vram_used_bytes = RT_NULL_U64;
        if (d->kind == KIND_NVML)
            nvml_read(g, d, o);
        else
            drm_read(g, d, o);
    }
    *count = g->ndev;
    return g->out;
}

void rt_gpus_close(rt_gpus *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->ndev; i++) {
        gpu_dev *d = &g->dev[i];
        free(d->uuid);
        free(d->name);
        free(d->host_id);
        for (size_t k = 0; k < d->ndetail; k++)
            free((char *)d->detail[k].value);
        rt_close(&d->busy_fd);
        rt_close(&d->vram_used_fd);
        rt_close(&d->vram_total_fd);
        rt_close(&d->temp_fd);
        rt_close(&d->power_fd);
        rt_close(&d->freq_fd);
    }
    if (g->nv.dl) {
        if (g->nv_ok && g->nv.shutdown)
            g->nv.shutdown();
        dlclose(g->nv.dl);
    }
    free(g->dev);
    free(g->out);
    free(g->seen);
    free(g->procbuf);
    free(g->utilbuf);
    free(g);
}
