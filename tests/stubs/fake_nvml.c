/* fake_nvml.c - a stand-in for libnvidia-ml.so.1 for the tests: the NVML entry points the
 * tracker uses, answering from a config file that the test writes (and may rewrite while the
 * tracker runs). Built twice: complete, and with FAKE_NVML_MINIMAL only the entry points an
 * old driver would have (no energy counter, throttle reasons or violation counters either), to
 * check that a missing symbol only nulls the fields it feeds; and
 * with FAKE_NVML_NO_INIT without nvmlInit, to check that a library lacking it is refused.
 *
 * $FAKE_NVML_CONFIG, one directive per line:
 *   gpu KEY=VALUE...     a device: uuid name (underscores read as spaces) bus util mem_total
 *                        mem_used temp power_mw clock cores cc serial power_limit_mw, and
 *                        energy_mj (the total energy counter, mJ), reasons (the clocks'
 *                        throttle reasons bitmask, e.g. 0x24), viol_power_ns viol_thermal_ns
 *                        (the power and thermal violation counters, ns); a test makes the
 *                        counters grow by rewriting the config
 *   gpus N KEY=VALUE...  N such devices (at most 256 in all), uuid and bus numbered: the
 *                        uuid gets "-I" appended (GPU-fake-I when none is given), bus is
 *                        00000000:XX:00.0 with XX the device's index in hex
 *   unsupported I CALL.. calls on device I answer NVML_ERROR_NOT_SUPPORTED (util memory temp
 *                        power clock procs procutil name uuid pci acct energy reasons
 *                        violation; acct: the three accounting calls; violation: both
 *                        policies)
 *   lost I               device I answers NVML_ERROR_GPU_IS_LOST to everything
 *   fail I CODE CALL..   calls on device I answer error CODE (the calls of `unsupported`, and
 *                        handle: nvmlDeviceGetHandleByIndex)
 *   count_fail CODE      nvmlDeviceGetCount answers error CODE
 *   hang CALL            every call of CALL (those of `unsupported`, and init count handle
 *                        driver shutdown) sleeps for as long as the config says so: it is
 *                        re-read every 20 ms, so a test that removes the line lets it return
 *   hang_after N CALL    the same after the first N calls of CALL (counted from the load)
 *   overcount I          device I's process lists, on success, say far more entries were
 *                        written than fit (the rest of the buffer filled with pid 0, no VRAM)
 *   samples_after N I K  after the first N procutil calls (counted from the load), device I
 *                        has K more per-process samples (pid 0, SM 0)
 *   children I mem=B sm=P   the calling process's children run on device I
 *   pid I PID mem=B sm=P    so does PID
 *   accounting I on|off  device I's accounting mode (off unless said: the pid list and the
 *                        stats then answer NVML_ERROR_NOT_SUPPORTED)
 *   acct I PID mem=B start=US running=0|1   device I's accounting has data for PID: its
 *                        maxMemoryUsage B, startTime US (default 1), isRunning (default 1);
 *                        for a pid given twice the stats are the last line's (the driver keeps
 *                        the latest), the pid list names it twice; a pid not given: NOT_FOUND
 *   acct_children I mem=B start=US running=0|1   the same for each of the calling process's
 *                        children
 *   driver VERSION / cuda N / init_fail
 * With $FAKE_NVML_LOAD_ONCE set, the config is read once (for benchmarks: no file read per call).
 * fake_nvml_wait_hang (not NVML's) lets a test wait until a call hangs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, NOT_SUPPORTED = 3, INVALID = 2, NOT_FOUND = 6, INSUFFICIENT = 7, LOST = 15, UNKNOWN = 999 };

typedef struct {
    char uuid[80], name[96], bus[32], serial[32], cc[8];
    unsigned util, temp, power_mw, clock, cores, power_limit_mw;
    unsigned long long mem_total, mem_used;
    unsigned long long energy_mj, reasons, viol_ns[2]; /* viol_ns: power, thermal */
    char unsupported[256];
    char failing[256]; /* " CALL=CODE" for each failing call */
    int lost, overcount, acct_on;
    long samples_after;
    unsigned extra_samples;
} dev;

typedef struct {
    int dev;
    unsigned pid;
    unsigned long long mem;
    unsigned sm;
} gproc;

typedef struct { /* an accounting record */
    int dev;
    unsigned pid, running;
    unsigned long long mem, start;
} acct_rec;

enum { MAX_DEVS = 256 };
static dev devs[MAX_DEVS];
static int ndev;
static gproc procs[256];
static int nprocs;
enum { MAX_ACCT = 8192 };
static acct_rec accts[MAX_ACCT];
static int naccts;
static char driver[64] = "550.54.15";
static int cuda = 12040;
static int init_fail, count_fail;

/* hang rules: CALL hangs once it has been called more than `after` times */
enum { MAX_HANGS = 16 };
static struct {
    char call[16];
    long after;
} hangs[MAX_HANGS];
static int nhangs;
static const char *const calls[] = {"init",   "count", "handle", "driver",   "shutdown", "name",  "uuid",
                                    "serial", "pci",   "cc",     "cores",    "power",    "clock", "util",
                                    "memory", "temp",  "procs",  "procutil", "acct",
                                    "energy", "reasons", "violation"};
enum { NCALLS = sizeof calls / sizeof calls[0] };
static long ncalled[NCALLS]; /* kept across loads */

/* The calling process's children (of every thread), at most cap of them into out. */
static int children(unsigned *out, int cap)
{
    int n = 0;
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned pid;
        while (n < cap && fscanf(f, "%u", &pid) == 1)
            out[n++] = pid;
        fclose(f);
    }
    closedir(dir);
    return n;
}

/* An acct or acct_children line after its device (and pid): the record's fields. */
static acct_rec acct_fields(int d, unsigned pid, char **save)
{
    acct_rec r = {d, pid, 1, 0, 1};
    for (char *t; (t = strtok_r(NULL, " \t\n", save));) {
        if (!strncmp(t, "mem=", 4))
            r.mem = strtoull(t + 4, NULL, 10);
        else if (!strncmp(t, "start=", 6))
            r.start = strtoull(t + 6, NULL, 10);
        else if (!strncmp(t, "running=", 8))
            r.running = (unsigned)strtoul(t + 8, NULL, 10);
    }
    return r;
}

static void kv(char *tok, dev *d)
{
    char *eq = strchr(tok, '=');
    if (!eq)
        return;
    *eq = '\0';
    const char *k = tok, *v = eq + 1;
    if (!strcmp(k, "uuid"))
        snprintf(d->uuid, sizeof d->uuid, "%s", v);
    else if (!strcmp(k, "name")) {
        snprintf(d->name, sizeof d->name, "%s", v);
        for (char *c = d->name; *c; c++)
            if (*c == '_')
                *c = ' ';
    } else if (!strcmp(k, "bus"))
        snprintf(d->bus, sizeof d->bus, "%s", v);
    else if (!strcmp(k, "serial"))
        snprintf(d->serial, sizeof d->serial, "%s", v);
    else if (!strcmp(k, "cc"))
        snprintf(d->cc, sizeof d->cc, "%s", v);
    else if (!strcmp(k, "util"))
        d->util = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "temp"))
        d->temp = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "power_mw"))
        d->power_mw = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "power_limit_mw"))
        d->power_limit_mw = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "clock"))
        d->clock = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "cores"))
        d->cores = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(k, "mem_total"))
        d->mem_total = strtoull(v, NULL, 10);
    else if (!strcmp(k, "mem_used"))
        d->mem_used = strtoull(v, NULL, 10);
    else if (!strcmp(k, "energy_mj"))
        d->energy_mj = strtoull(v, NULL, 10);
    else if (!strcmp(k, "reasons"))
        d->reasons = strtoull(v, NULL, 0);
    else if (!strcmp(k, "viol_power_ns"))
        d->viol_ns[0] = strtoull(v, NULL, 10);
    else if (!strcmp(k, "viol_thermal_ns"))
        d->viol_ns[1] = strtoull(v, NULL, 10);
}

/* Re-reads the config: every call sees the test's latest word. */
static void load(void)
{
    static int loaded;
    if (loaded && getenv("FAKE_NVML_LOAD_ONCE"))
        return;
    loaded = 1;
    ndev = nprocs = naccts = init_fail = count_fail = nhangs = 0;
    const char *path = getenv("FAKE_NVML_CONFIG");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *save, *w = strtok_r(line, " \t\n", &save);
        if (!w || w[0] == '#')
            continue;
        if (!strcmp(w, "gpu") && ndev < MAX_DEVS) {
            dev *d = &devs[ndev++];
            memset(d, 0, sizeof *d);
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));)
                kv(t, d);
        } else if (!strcmp(w, "gpus")) {
            char *c = strtok_r(NULL, " \t\n", &save);
            int n = c ? (int)strtol(c, NULL, 10) : 0;
            dev proto;
            memset(&proto, 0, sizeof proto);
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));)
                kv(t, &proto);
            for (int i = 0; i < n && ndev < MAX_DEVS; i++) {
                dev *d = &devs[ndev];
                *d = proto;
                snprintf(d->uuid, sizeof d->uuid, "%.64s-%d", proto.uuid[0] ? proto.uuid : "GPU-fake", i % 1000);
                snprintf(d->bus, sizeof d->bus, "00000000:%02X:00.0", ndev);
                ndev++;
            }
        } else if (!strcmp(w, "unsupported") || !strcmp(w, "lost")) {
            char *i = strtok_r(NULL, " \t\n", &save);
            int k = i ? (int)strtol(i, NULL, 10) : -1;
            if (k < 0 || k >= ndev)
                continue;
            if (!strcmp(w, "lost"))
                devs[k].lost = 1;
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));) {
                strncat(devs[k].unsupported, " ", sizeof devs[k].unsupported - strlen(devs[k].unsupported) - 1);
                strncat(devs[k].unsupported, t, sizeof devs[k].unsupported - strlen(devs[k].unsupported) - 1);
            }
        } else if (!strcmp(w, "children") || !strcmp(w, "pid")) {
            char *i = strtok_r(NULL, " \t\n", &save);
            int k = i ? (int)strtol(i, NULL, 10) : 0;
            unsigned pid = 0;
            if (!strcmp(w, "pid")) {
                char *p = strtok_r(NULL, " \t\n", &save);
                pid = p ? (unsigned)strtoul(p, NULL, 10) : 0;
            }
            unsigned long long mem = 0;
            unsigned sm = 0;
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));) {
                if (!strncmp(t, "mem=", 4))
                    mem = strtoull(t + 4, NULL, 10);
                else if (!strncmp(t, "sm=", 3))
                    sm = (unsigned)strtoul(t + 3, NULL, 10);
            }
            if (!strcmp(w, "children")) {
                unsigned kids[256];
                for (int c = 0, n = children(kids, 256 - nprocs); c < n; c++)
                    procs[nprocs++] = (gproc){k, kids[c], mem, sm};
            } else if (nprocs < 256)
                procs[nprocs++] = (gproc){k, pid, mem, sm};
        } else if (!strcmp(w, "accounting")) {
            char *i = strtok_r(NULL, " \t\n", &save), *v = strtok_r(NULL, " \t\n", &save);
            int k = i ? (int)strtol(i, NULL, 10) : -1;
            if (k >= 0 && k < ndev && v)
                devs[k].acct_on = !strcmp(v, "on");
        } else if (!strcmp(w, "acct") || !strcmp(w, "acct_children")) {
            char *i = strtok_r(NULL, " \t\n", &save);
            int k = i ? (int)strtol(i, NULL, 10) : 0;
            if (!strcmp(w, "acct")) {
                char *p = strtok_r(NULL, " \t\n", &save);
                if (naccts < MAX_ACCT)
                    accts[naccts++] = acct_fields(k, p ? (unsigned)strtoul(p, NULL, 10) : 0, &save);
            } else {
                acct_rec r = acct_fields(k, 0, &save);
                unsigned kids[256];
                for (int c = 0, n = children(kids, 256); c < n && naccts < MAX_ACCT; c++) {
                    r.pid = kids[c];
                    accts[naccts++] = r;
                }
            }
        } else if (!strcmp(w, "driver")) {
            char *v = strtok_r(NULL, " \t\n", &save);
            if (v)
                snprintf(driver, sizeof driver, "%s", v);
        } else if (!strcmp(w, "cuda")) {
            char *v = strtok_r(NULL, " \t\n", &save);
            if (v)
                cuda = (int)strtol(v, NULL, 10);
        } else if (!strcmp(w, "init_fail")) {
            init_fail = 1;
        } else if (!strcmp(w, "count_fail")) {
            char *v = strtok_r(NULL, " \t\n", &save);
            count_fail = v ? (int)strtol(v, NULL, 10) : UNKNOWN;
        } else if (!strcmp(w, "fail")) {
            char *i = strtok_r(NULL, " \t\n", &save), *c = strtok_r(NULL, " \t\n", &save);
            int k = i ? (int)strtol(i, NULL, 10) : -1;
            if (k < 0 || k >= ndev || !c)
                continue;
            size_t len = strlen(devs[k].failing);
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));)
                len +=
                    (size_t)snprintf(devs[k].failing + len,
                                     len < sizeof devs[k].failing ? sizeof devs[k].failing - len : 0, " %s=%s", t, c);
        } else if (!strcmp(w, "overcount") || !strcmp(w, "samples_after")) {
            int after = !strcmp(w, "samples_after");
            char *n = after ? strtok_r(NULL, " \t\n", &save) : NULL, *i = strtok_r(NULL, " \t\n", &save);
            char *k = after ? strtok_r(NULL, " \t\n", &save) : NULL;
            int d = i ? (int)strtol(i, NULL, 10) : -1;
            if (d < 0 || d >= ndev)
                continue;
            if (!after)
                devs[d].overcount = 1;
            else if (n && k) {
                devs[d].samples_after = strtol(n, NULL, 10);
                devs[d].extra_samples = (unsigned)strtoul(k, NULL, 10);
            }
        } else if ((!strcmp(w, "hang") || !strcmp(w, "hang_after")) && nhangs < MAX_HANGS) {
            long after = 0;
            if (!strcmp(w, "hang_after")) {
                char *n = strtok_r(NULL, " \t\n", &save);
                after = n ? strtol(n, NULL, 10) : 0;
            }
            char *c = strtok_r(NULL, " \t\n", &save);
            if (c) {
                snprintf(hangs[nhangs].call, sizeof hangs[nhangs].call, "%s", c);
                hangs[nhangs++].after = after;
            }
        }
    }
    fclose(f);
}

typedef struct nvml_device_st *nvmlDevice_t;

/* Whether call, called for the n-th time, is to hang now. */
static int hangs_now(const char *call, long n)
{
    for (int i = 0; i < nhangs; i++)
        if (!strcmp(hangs[i].call, call) && n > hangs[i].after)
            return 1;
    return 0;
}

/* The calls of `call` so far, counted from the load (after its counting, its own included). */
static long *called(const char *call)
{
    int c = 0;
    while (c < NCALLS && strcmp(calls[c], call))
        c++;
    return c < NCALLS ? &ncalled[c] : NULL;
}

/* The calls hanging now, for fake_nvml_wait_hang. */
static pthread_mutex_t hang_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cv = PTHREAD_COND_INITIALIZER;
static int hanging;

static void count_hanging(int d)
{
    pthread_mutex_lock(&hang_mu);
    hanging += d;
    pthread_cond_broadcast(&hang_cv);
    pthread_mutex_unlock(&hang_mu);
}

/* For the tests (not NVML's): waits, at most secs of real time, until a call hangs. Returns
 * whether one does. */
EXPORT int fake_nvml_wait_hang(int secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += secs;
    pthread_mutex_lock(&hang_mu);
    int e = 0;
    while (!hanging && e != ETIMEDOUT)
        e = pthread_cond_timedwait(&hang_cv, &hang_mu, &ts);
    int r = hanging > 0;
    pthread_mutex_unlock(&hang_mu);
    return r;
}

/* Counts a call of `call` (config loaded), and hangs there while the config says so. */
static void enter(const char *call)
{
    long *p = called(call), n = p ? ++*p : 0;
    if (!hangs_now(call, n))
        return;
    count_hanging(1);
    while (hangs_now(call, n)) {
        usleep(20000);
        load();
    }
    count_hanging(-1);
}

/* The error CODE that `call` answers on d by a fail directive, or 0. */
static int failing(const dev *d, const char *call)
{
    char want[40];
    snprintf(want, sizeof want, " %s=", call);
    const char *u = strstr(d->failing, want);
    return u ? (int)strtol(u + strlen(want), NULL, 10) : 0;
}

/* The device behind a handle, or an error: NOT_SUPPORTED when `call` is listed for it. */
static int get(nvmlDevice_t h, const char *call, dev **out)
{
    load();
    enter(call);
    intptr_t i = (intptr_t)h - 1;
    if (i < 0 || i >= ndev)
        return INVALID;
    dev *d = &devs[i];
    if (d->lost)
        return LOST;
    int code = failing(d, call);
    if (code)
        return code;
    char want[40];
    snprintf(want, sizeof want, " %s", call);
    const char *u = strstr(d->unsupported, want);
    if (u && (u[strlen(want)] == ' ' || u[strlen(want)] == '\0'))
        return NOT_SUPPORTED;
    *out = d;
    return OK;
}

static int copy_str(char *dst, unsigned int len, const char *src)
{
    size_t n = strlen(src) + 1;
    if (n > len)
        return INSUFFICIENT;
    memcpy(dst, src, n);
    return OK;
}

#ifndef FAKE_NVML_NO_INIT
EXPORT int nvmlInit_v2(void)
{
    load();
    enter("init");
    return init_fail ? UNKNOWN : OK;
}
#endif
EXPORT int nvmlShutdown(void)
{
    load();
    enter("shutdown");
    return OK;
}
EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
    load();
    enter("count");
    if (count_fail)
        return count_fail;
    *n = (unsigned)ndev;
    return OK;
}
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
    load();
    enter("handle");
    if (i >= (unsigned)ndev)
        return INVALID;
    if (failing(&devs[i], "handle"))
        return failing(&devs[i], "handle");
    *h = (nvmlDevice_t)(intptr_t)(i + 1);
    return OK;
}
EXPORT int nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len)
{
    dev *d;
    int rc = get(h, "name", &d);
    return rc ? rc : copy_str(name, len, d->name);
}
typedef struct {
    unsigned long long total, free, used;
} memory_t;
EXPORT int nvmlDeviceGetMemoryInfo(nvmlDevice_t h, memory_t *m)
{
    dev *d;
    int rc = get(h, "memory", &d);
    if (rc)
        return rc;
    m->total = d->mem_total;
    m->used = d->mem_used;
    m->free = d->mem_total - d->mem_used;
    return OK;
}

#ifndef FAKE_NVML_MINIMAL
EXPORT int nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len)
{
    dev *d;
    int rc = get(h, "uuid", &d);
    return rc ? rc : copy_str(uuid, len, d->uuid);
}
EXPORT int nvmlDeviceGetSerial(nvmlDevice_t h, char *s, unsigned int len)
{
    dev *d;
    int rc = get(h, "serial", &d);
    if (rc)
        return rc;
    return d->serial[0] ? copy_str(s, len, d->serial) : NOT_SUPPORTED;
}
typedef struct {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} pci_t;
EXPORT int nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, pci_t *p)
{
    dev *d;
    int rc = get(h, "pci", &d);
    if (rc)
        return rc;
    memset(p, 0, sizeof *p);
    snprintf(p->bus_id, sizeof p->bus_id, "%s", d->bus);
    p->pci_device_id = 0x20b010de;
    p->pci_subsystem_id = 0x134f10de;
    return OK;
}
EXPORT int nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
    load();
    enter("driver");
    return copy_str(v, len, driver);
}
EXPORT int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    *v = cuda;
    return OK;
}
EXPORT int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor)
{
    dev *d;
    int rc = get(h, "cc", &d);
    if (rc)
        return rc;
    return sscanf(d->cc, "%d.%d", major, minor) == 2 ? OK : NOT_SUPPORTED;
}
EXPORT int nvmlDeviceGetNumGpuCores(nvmlDevice_t h, unsigned int *n)
{
    dev *d;
    int rc = get(h, "cores", &d);
    if (rc)
        return rc;
    *n = d->cores;
    return OK;
}
EXPORT int nvmlDeviceGetPowerManagementLimit(nvmlDevice_t h, unsigned int *mw)
{
    dev *d;
    int rc = get(h, "power", &d);
    if (rc)
        return rc;
    *mw = d->power_limit_mw;
    return OK;
}
EXPORT int nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, int type, unsigned int *mhz)
{
    dev *d;
    int rc = get(h, "clock", &d);
    if (rc)
        return rc;
    *mhz = type == 2 ? 1593 : 1410;
    return OK;
}
typedef struct {
    unsigned int gpu, memory;
} util_t;
EXPORT int nvmlDeviceGetUtilizationRates(nvmlDevice_t h, util_t *u)
{
    dev *d;
    int rc = get(h, "util", &d);
    if (rc)
        return rc;
    u->gpu = d->util;
    u->memory = d->util / 2;
    return OK;
}
EXPORT int nvmlDeviceGetTemperature(nvmlDevice_t h, int sensor, unsigned int *t)
{
    dev *d;
    int rc = get(h, "temp", &d);
    if (rc)
        return rc;
    if (sensor != 0)
        return INVALID;
    *t = d->temp;
    return OK;
}
EXPORT int nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int *mw)
{
    dev *d;
    int rc = get(h, "power", &d);
    if (rc)
        return rc;
    *mw = d->power_mw;
    return OK;
}
EXPORT int nvmlDeviceGetClockInfo(nvmlDevice_t h, int type, unsigned int *mhz)
{
    dev *d;
    int rc = get(h, "clock", &d);
    if (rc)
        return rc;
    *mhz = type == 0 ? d->clock : 0;
    return OK;
}
typedef struct {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} proc_t;
static int list_procs(nvmlDevice_t h, unsigned int *count, proc_t *out)
{
    dev *d;
    int rc = get(h, "procs", &d);
    if (rc)
        return rc;
    int idx = (int)((intptr_t)h - 1);
    unsigned n = 0;
    for (int i = 0; i < nprocs; i++)
        if (procs[i].dev == idx)
            n++;
    if (n > *count) {
        *count = n;
        return INSUFFICIENT;
    }
    n = 0;
    for (int i = 0; i < nprocs; i++)
        if (procs[i].dev == idx)
            out[n++] = (proc_t){procs[i].pid, procs[i].mem, 0xFFFFFFFF, 0xFFFFFFFF};
    if (d->overcount) { /* a misbehaving library: the buffer filled, and a count past it */
        for (; n < *count; n++)
            out[n] = (proc_t){0, 0, 0xFFFFFFFF, 0xFFFFFFFF};
        n = 0xFFFFFFF0u;
    }
    *count = n;
    return OK;
}
EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int *count, proc_t *out)
{
    return list_procs(h, count, out);
}
EXPORT int nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t h, unsigned int *count, proc_t *out)
{
    /* the same processes again, as a process using both shows in both lists */
    return list_procs(h, count, out);
}
typedef struct {
    unsigned int pid;
    unsigned long long timestamp;
    unsigned int sm, mem, enc, dec;
} putil_t;
EXPORT int nvmlDeviceGetProcessUtilization(nvmlDevice_t h, putil_t *out, unsigned int *count, unsigned long long last)
{
    dev *d;
    int rc = get(h, "procutil", &d);
    if (rc)
        return rc;
    int idx = (int)((intptr_t)h - 1);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    unsigned long long now = (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
    if (now <= last) /* asked again within the microsecond: the samples are newer all the same */
        now = last + 1;
    unsigned n = 0;
    for (int i = 0; i < nprocs; i++)
        if (procs[i].dev == idx)
            n++;
    unsigned extra = *called("procutil") > d->samples_after ? d->extra_samples : 0;
    n += extra;
    if (n == 0)
        return NOT_FOUND;
    if (!out || n > *count) {
        *count = n;
        return INSUFFICIENT;
    }
    n = 0;
    for (int i = 0; i < nprocs; i++)
        if (procs[i].dev == idx)
            out[n++] = (putil_t){procs[i].pid, now, procs[i].sm, 0, 0, 0};
    while (extra--)
        out[n++] = (putil_t){0, now, 0, 0, 0, 0};
    *count = n;
    return OK;
}
EXPORT int nvmlDeviceGetAccountingMode(nvmlDevice_t h, int *mode)
{
    dev *d;
    int rc = get(h, "acct", &d);
    if (rc)
        return rc;
    *mode = d->acct_on ? 1 : 0;
    return OK;
}
/* The index of the device behind a handle whose accounting is on, or an error (NOT_SUPPORTED
 * when it is off) as a negative number. */
static int acct_index(nvmlDevice_t h)
{
    dev *d;
    int rc = get(h, "acct", &d);
    if (rc)
        return -rc;
    return d->acct_on ? (int)((intptr_t)h - 1) : -NOT_SUPPORTED;
}
EXPORT int nvmlDeviceGetAccountingPids(nvmlDevice_t h, unsigned int *count, unsigned int *pids)
{
    int idx = acct_index(h);
    if (idx < 0)
        return -idx;
    unsigned n = 0;
    for (int i = 0; i < naccts; i++)
        if (accts[i].dev == idx)
            n++;
    if (!pids || n > *count) {
        *count = n;
        return INSUFFICIENT;
    }
    n = 0;
    for (int i = 0; i < naccts; i++)
        if (accts[i].dev == idx)
            pids[n++] = accts[i].pid;
    *count = n;
    return OK;
}
typedef struct {
    unsigned int gpu_util, mem_util;
    unsigned long long max_mem, time, start;
    unsigned int running, reserved[5];
} acct_stats_t;
EXPORT int nvmlDeviceGetAccountingStats(nvmlDevice_t h, unsigned int pid, acct_stats_t *st)
{
    int idx = acct_index(h);
    if (idx < 0)
        return -idx;
    for (int i = naccts - 1; i >= 0; i--) {
        if (accts[i].dev != idx || accts[i].pid != pid)
            continue;
        memset(st, 0, sizeof *st);
        st->max_mem = accts[i].mem;
        st->start = accts[i].start;
        st->running = accts[i].running;
        st->time = accts[i].running ? 0 : 1000;
        return OK;
    }
    return NOT_FOUND;
}
EXPORT int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long *mj)
{
    dev *d;
    int rc = get(h, "energy", &d);
    if (rc)
        return rc;
    *mj = d->energy_mj;
    return OK;
}
/* The older name only (drivers before 535 have no nvmlDeviceGetCurrentClocksEventReasons):
 * the tracker's fallback to it is what this checks. */
EXPORT int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h, unsigned long long *reasons)
{
    dev *d;
    int rc = get(h, "reasons", &d);
    if (rc)
        return rc;
    *reasons = d->reasons;
    return OK;
}
typedef struct {
    unsigned long long reference_time, violation_time; /* us (CPU timestamp), ns */
} violation_t;
EXPORT int nvmlDeviceGetViolationStatus(nvmlDevice_t h, int policy, violation_t *v)
{
    dev *d;
    int rc = get(h, "violation", &d);
    if (rc)
        return rc;
    if (policy != 0 && policy != 1) /* NVML_PERF_POLICY_POWER, NVML_PERF_POLICY_THERMAL */
        return NOT_SUPPORTED;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    v->reference_time = (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
    v->violation_time = d->viol_ns[policy];
    return OK;
}
#endif
