/* fake_nvml.c - a stand-in for libnvidia-ml.so.1 for the tests: the NVML entry points the
 * tracker uses, answering from a config file that the test writes (and may rewrite while the
 * tracker runs), each costing the calling thread as much CPU as the real call costs on an H200
 * (driver 580). Built twice: complete, and with FAKE_NVML_MINIMAL only the entry points an
 * old driver would have (no energy counter, throttle reasons, violation counters, GPM, MIG or
 * v2 memory info either), to check that a missing symbol only nulls the fields it feeds; and
 * with FAKE_NVML_NO_INIT without nvmlInit, to check that a library lacking it is refused.
 *
 * $FAKE_NVML_CONFIG, one directive per line:
 *   gpu KEY=VALUE...     a device: uuid name (underscores read as spaces) bus util mem_total
 *                        mem_used mem_reserved temp power_mw clock cores cc serial
 *                        power_limit_mw, and energy_mj (the total energy counter, mJ), reasons
 *                        (the clocks' throttle reasons bitmask, e.g. 0x24), viol_power_ns
 *                        viol_thermal_ns (the power and thermal violation counters, ns); a test
 *                        makes the counters grow by rewriting the config. Memory: v2
 *                        (nvmlDeviceGetMemoryInfo_v2) answers used = mem_used, reserved =
 *                        mem_reserved (default 0), free = the rest; v1 counts the reserved
 *                        memory as used, as the real v1 does
 *   gpus N KEY=VALUE...  N such devices (at most 256 in all), uuid and bus numbered: the
 *                        uuid gets "-I" appended (GPU-fake-I when none is given), bus is
 *                        00000000:XX:00.0 with XX the device's index in hex
 *   gpm I KEY=VALUE...   device I supports GPM (nvmlGpmQueryDeviceSupport says so) with these
 *                        metric values: graphics sm occ int tensor dfma hmma imma dram fp64
 *                        fp32 fp16 (percent), pcie_tx pcie_rx nvlink_tx nvlink_rx (MiB/s); a
 *                        metric not given answers NOT_SUPPORTED in its nvmlReturn. A device
 *                        without a gpm (or mig) line is not supported (isSupportedDevice 0).
 *                        The metric between two samples is the time-weighted mean of the
 *                        values the config held between them (the fake integrates each value
 *                        over time, brought up to date at each re-read and each sample; two
 *                        samples at the same instant: the value held then)
 *   mig I GI KEY=VALUE.. device I is in MIG mode (nvmlDeviceGetMigMode 1, else 0) with a GPU
 *                        instance GI (its own GPM values, the keys of gpm); its handle
 *                        (nvmlDeviceGetMigDeviceHandleByIndex, in the order of the lines, of
 *                        at most 7 slots, or as many as there are lines) answers
 *                        nvmlDeviceGetGpuInstanceId GI and nvmlDeviceGetUUID
 *                        "MIG-<the parent's uuid without GPU->-<GI>", and nothing else (it is
 *                        no device handle: NVML_ERROR_INVALID_ARGUMENT);
 *                        nvmlGpmMigSampleGet(device I, GI) samples the instance (NOT_FOUND for
 *                        a GI without a line)
 *   unsupported I CALL.. calls on device I answer NVML_ERROR_NOT_SUPPORTED (util memory temp
 *                        power clock procs procutil name uuid pci acct energy reasons
 *                        violation mig gpm; acct: the three accounting calls; violation: both
 *                        policies; memory: v1 and v2; gpm: nvmlGpmQueryDeviceSupport and the
 *                        sample calls; each call's own name below works too)
 *   lost I               device I answers NVML_ERROR_GPU_IS_LOST to everything
 *   fail I CODE CALL..   calls on device I answer error CODE (the calls of `unsupported`, and
 *                        handle: nvmlDeviceGetHandleByIndex)
 *   count_fail CODE      nvmlDeviceGetCount answers error CODE
 *   hang CALL            every call of CALL (those of `unsupported`, and init count handle
 *                        driver cuda shutdown gpm_alloc gpm_metrics) sleeps for as long as the
 *                        config says so: it is re-read every 20 ms, so a test that removes the
 *                        line lets it return
 *   hang_after N CALL    the same after the first N calls of CALL (counted from the load)
 *   cost CALL=US...      each call of CALL burns US microseconds of the calling thread's CPU
 *                        (a busy wait on its CPU clock, as the real call costs CPU, not wall
 *                        time); the defaults are the real calls' on an H200: init 37000,
 *                        energy 3900, procutil 1400, violation 550, gpm_sample and
 *                        gpm_mig_sample 230, every other call 20
 *   cost off             every call free (for tests that are not about cost); a later
 *                        `cost CALL=US` still sets that call's
 *   overcount I          device I's process lists, on success, say far more entries were
 *                        written than fit (the rest of the buffer filled with pid 0, no VRAM)
 *   samples_after N I K  after the first N procutil calls (counted from the load), device I
 *                        has K more per-process samples (pid 0, SM 0)
 *   children I mem=B sm=P gi=N   the calling process's children run on device I (in MIG
 *                        instance N: the lists' gpuInstanceId N and computeInstanceId 0; without
 *                        gi= both 0xFFFFFFFF)
 *   pid I PID mem=B sm=P gi=N    so does PID
 *   accounting I on|off  device I's accounting mode (off unless said: the pid list and the
 *                        stats then answer NVML_ERROR_NOT_SUPPORTED)
 *   acct I PID mem=B start=US running=0|1   device I's accounting has data for PID: its
 *                        maxMemoryUsage B, startTime US (default 1), isRunning (default 1);
 *                        for a pid given twice the stats are the last line's (the driver keeps
 *                        the latest), the pid list names it twice; a pid not given: NOT_FOUND
 *   acct_children I mem=B start=US running=0|1   the same for each of the calling process's
 *                        children
 *   driver VERSION / cuda N / init_fail
 *   clock SECS           the fake's monotonic clock (the GPM samples' times) reads SECS while
 *                        the config says so, CLOCK_MONOTONIC otherwise: a test moves time by
 *                        rewriting the config, and sleeps for none. It never runs back: a
 *                        sample's time is its integrals' (the latest either clock reached)
 * A CALL is one of the call names (init count handle driver cuda shutdown name uuid serial pci
 * cc cores power clock util memory memory_v2 temp procs procutil acct energy reasons violation
 * mig gpm_support gpm_alloc gpm_sample gpm_mig_sample gpm_metrics) or a group of them (memory:
 * memory and memory_v2; gpm: gpm_support, gpm_sample and gpm_mig_sample).
 * With $FAKE_NVML_LOAD_ONCE set, the config is read once (for benchmarks: no file read per call).
 * With $FAKE_NVML_CALLS_OUT set, each call name and how often it was called since the load
 * ("energy 12", a line each, zeros too) is written to that file, whole, at nvmlShutdown and as
 * the library is unloaded (or the process ends).
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

enum {
    OK = 0,
    NOT_SUPPORTED = 3,
    INVALID = 2,
    NOT_FOUND = 6,
    INSUFFICIENT = 7,
    LOST = 15,
    VERSION_MISMATCH = 25,
    UNKNOWN = 999
};

/* ---- the calls: a name each (counted, costed, hung, failed by it), a group, a default cost ---- */

enum call {
    C_INIT, C_COUNT, C_HANDLE, C_DRIVER, C_CUDA, C_SHUTDOWN, C_NAME, C_UUID, C_SERIAL, C_PCI, C_CC, C_CORES,
    C_POWER, C_CLOCK, C_UTIL, C_MEMORY, C_MEMORY_V2, C_TEMP, C_PROCS, C_PROCUTIL, C_ACCT, C_ENERGY, C_REASONS,
    C_VIOLATION, C_MIG, C_GPM_SUPPORT, C_GPM_ALLOC, C_GPM_SAMPLE, C_GPM_MIG_SAMPLE, C_GPM_METRICS, NCALLS
};
enum { DEFAULT_COST_US = 20 }; /* the middle of the 1-40 us most calls cost on the H200 */
static const struct {
    const char *name, *group; /* group: NULL when the call is in none */
    unsigned cost_us;         /* 0: DEFAULT_COST_US */
} call_info[NCALLS] = {
    [C_INIT] = {"init", NULL, 37000},
    [C_COUNT] = {"count", NULL, 0},
    [C_HANDLE] = {"handle", NULL, 0},
    [C_DRIVER] = {"driver", NULL, 0},
    [C_CUDA] = {"cuda", NULL, 0},
    [C_SHUTDOWN] = {"shutdown", NULL, 0},
    [C_NAME] = {"name", NULL, 0},
    [C_UUID] = {"uuid", NULL, 0},
    [C_SERIAL] = {"serial", NULL, 0},
    [C_PCI] = {"pci", NULL, 0},
    [C_CC] = {"cc", NULL, 0},
    [C_CORES] = {"cores", NULL, 0},
    [C_POWER] = {"power", NULL, 0},
    [C_CLOCK] = {"clock", NULL, 0},
    [C_UTIL] = {"util", NULL, 0},
    [C_MEMORY] = {"memory", "memory", 0},
    [C_MEMORY_V2] = {"memory_v2", "memory", 0},
    [C_TEMP] = {"temp", NULL, 0},
    [C_PROCS] = {"procs", NULL, 0},
    [C_PROCUTIL] = {"procutil", NULL, 1400},
    [C_ACCT] = {"acct", NULL, 0},
    [C_ENERGY] = {"energy", NULL, 3900},
    [C_REASONS] = {"reasons", NULL, 0},
    [C_VIOLATION] = {"violation", NULL, 550},
    [C_MIG] = {"mig", NULL, 0},
    [C_GPM_SUPPORT] = {"gpm_support", "gpm", 0},
    [C_GPM_ALLOC] = {"gpm_alloc", NULL, 0},
    [C_GPM_SAMPLE] = {"gpm_sample", "gpm", 230},
    [C_GPM_MIG_SAMPLE] = {"gpm_mig_sample", "gpm", 230},
    [C_GPM_METRICS] = {"gpm_metrics", NULL, 0},
};
typedef uint64_t callset; /* a bit per call */
_Static_assert(NCALLS <= 64, "a callset holds every call");

/* The calls a directive's word names: the call of that name, or every call of that group. */
static callset calls_named(const char *w)
{
    callset s = 0;
    for (int c = 0; c < NCALLS; c++)
        if (!strcmp(call_info[c].name, w) || (call_info[c].group && !strcmp(call_info[c].group, w)))
            s |= (callset)1 << c;
    return s;
}

/* ---- GPM metrics: NVML's ids, the config's keys ------------------------------------------------ */

static const struct {
    unsigned id;
    const char *key, *long_name, *unit;
} metric_info[] = {
    {1, "graphics", "graphics engine activity", "%"},
    {2, "sm", "SM activity", "%"},
    {3, "occ", "SM occupancy", "%"},
    {4, "int", "integer pipe activity", "%"},
    {5, "tensor", "any tensor pipe activity", "%"},
    {6, "dfma", "DFMA tensor pipe activity", "%"},
    {7, "hmma", "HMMA tensor pipe activity", "%"},
    {9, "imma", "IMMA tensor pipe activity", "%"},
    {10, "dram", "DRAM bandwidth", "%"},
    {11, "fp64", "FP64 pipe activity", "%"},
    {12, "fp32", "FP32 pipe activity", "%"},
    {13, "fp16", "FP16 pipe activity", "%"},
    {20, "pcie_tx", "PCIe traffic sent", "MiB/s"},
    {21, "pcie_rx", "PCIe traffic received", "MiB/s"},
    {60, "nvlink_rx", "NVLink traffic received", "MiB/s"},
    {61, "nvlink_tx", "NVLink traffic sent", "MiB/s"},
};
enum { NMETRICS = sizeof metric_info / sizeof metric_info[0], GPM_METRIC_MAX = 333 };

typedef struct { /* a device's or MIG instance's GPM values */
    double v[NMETRICS]; /* 0 where not given */
    unsigned given;     /* a bit per metric */
} gpm_vals;

/* ---- the config's state (replaced at each re-read) ---------------------------------------------- */

typedef struct {
    char uuid[80], name[96], bus[32], serial[32], cc[8];
    unsigned util, temp, power_mw, clock, cores, power_limit_mw;
    unsigned long long mem_total, mem_used, mem_reserved;
    unsigned long long energy_mj, reasons, viol_ns[2]; /* viol_ns: power, thermal */
    callset unsupported;
    int fail[NCALLS]; /* the error code each call answers by a fail directive, or 0 */
    int lost, overcount, acct_on, gpm_on;
    long samples_after;
    unsigned extra_samples;
    gpm_vals gpm;
} dev;

typedef struct {
    int dev;
    unsigned pid;
    unsigned long long mem;
    unsigned sm, gi;
} gproc;

typedef struct { /* an accounting record */
    int dev;
    unsigned pid, running;
    unsigned long long mem, start;
} acct_rec;

typedef struct { /* a MIG GPU instance */
    int dev;
    unsigned gi;
    gpm_vals gpm;
} mig_inst;

enum { MAX_DEVS = 256, MAX_MIGS = 256, MIG_SLOTS = 7 };
enum { NO_GI = 0xFFFFFFFFu };
static dev devs[MAX_DEVS];
static int ndev;
static gproc procs[256];
static int nprocs;
enum { MAX_ACCT = 8192 };
static acct_rec accts[MAX_ACCT];
static int naccts;
static mig_inst migs[MAX_MIGS];
static int nmigs;
static char driver[64] = "550.54.15";
static int cuda = 12040;
static int init_fail, count_fail;
static unsigned cost_us[NCALLS]; /* what each call burns */

/* hang rules: a call of the set hangs once it has been called more than `after` times */
enum { MAX_HANGS = 16 };
static struct {
    callset calls;
    long after;
} hangs[MAX_HANGS];
static int nhangs;

/* ---- kept across loads: the calls so far, the GPM integrals ------------------------------------ */

static long ncalled[NCALLS];

/* A device's (gi NO_GI) or MIG instance's GPM values integrated over time since it was first
 * sampled: integral[k] += held.v[k] x the seconds since t, at each re-read and sample. */
typedef struct {
    int dev;
    unsigned gi;
    double t;
    gpm_vals held; /* the config's values since t */
    double integral[NMETRICS];
} gpm_integ;
static gpm_integ integs[MAX_DEVS + MAX_MIGS];
static int ninteg;

static double fixed_clock = -1; /* the config's clock line (seconds), -1: none */

static double mono_secs(void)
{
    if (fixed_clock >= 0)
        return fixed_clock;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The config's GPM values of device d (gi NO_GI) or of its instance gi; NULL when it gives
 * none. */
static const gpm_vals *gpm_config(int d, unsigned gi)
{
    if (d < 0 || d >= ndev)
        return NULL;
    if (gi == NO_GI)
        return devs[d].gpm_on ? &devs[d].gpm : NULL;
    for (int i = 0; i < nmigs; i++)
        if (migs[i].dev == d && migs[i].gi == gi)
            return &migs[i].gpm;
    return NULL;
}

/* Brings an integral up to now: the values held since its last update count for the time
 * since, then the config's values now are the ones held. */
static void integ_advance(gpm_integ *e, double now)
{
    double dt = now - e->t;
    if (dt > 0)
        for (int k = 0; k < NMETRICS; k++)
            e->integral[k] += e->held.v[k] * dt;
    if (now > e->t)
        e->t = now;
    const gpm_vals *g = gpm_config(e->dev, e->gi);
    if (g)
        e->held = *g;
    else
        memset(&e->held, 0, sizeof e->held);
}


/* ---- reading the config ---------------------------------------------------------------------------- */

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

/* A gpm or mig line's KEY=VALUE words: the metric values given. */
static void gpm_fields(char **save, gpm_vals *g)
{
    memset(g, 0, sizeof *g);
    for (char *t; (t = strtok_r(NULL, " \t\n", save));) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = '\0';
        for (int k = 0; k < NMETRICS; k++)
            if (!strcmp(metric_info[k].key, t)) {
                g->v[k] = strtod(eq + 1, NULL);
                g->given |= 1u << k;
            }
    }
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
    else if (!strcmp(k, "mem_reserved"))
        d->mem_reserved = strtoull(v, NULL, 10);
    else if (!strcmp(k, "energy_mj"))
        d->energy_mj = strtoull(v, NULL, 10);
    else if (!strcmp(k, "reasons"))
        d->reasons = strtoull(v, NULL, 0);
    else if (!strcmp(k, "viol_power_ns"))
        d->viol_ns[0] = strtoull(v, NULL, 10);
    else if (!strcmp(k, "viol_thermal_ns"))
        d->viol_ns[1] = strtoull(v, NULL, 10);
}

/* The device a directive names by its next word, or -1. */
static int dev_word(char **save)
{
    char *i = strtok_r(NULL, " \t\n", save);
    int k = i ? (int)strtol(i, NULL, 10) : -1;
    return k >= 0 && k < ndev ? k : -1;
}

/* A cost line's words: `off`, or CALL=US. */
static void cost_fields(char **save)
{
    for (char *t; (t = strtok_r(NULL, " \t\n", save));) {
        if (!strcmp(t, "off")) {
            memset(cost_us, 0, sizeof cost_us);
            continue;
        }
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = '\0';
        callset s = calls_named(t);
        unsigned us = (unsigned)strtoul(eq + 1, NULL, 10);
        for (int c = 0; c < NCALLS; c++)
            if (s >> c & 1)
                cost_us[c] = us;
    }
}

/* A children or pid line after its device: its processes. */
static void proc_fields(const char *w, int k, char **save)
{
    unsigned pid = 0;
    if (!strcmp(w, "pid")) {
        char *p = strtok_r(NULL, " \t\n", save);
        pid = p ? (unsigned)strtoul(p, NULL, 10) : 0;
    }
    unsigned long long mem = 0;
    unsigned sm = 0, gi = NO_GI;
    for (char *t; (t = strtok_r(NULL, " \t\n", save));) {
        if (!strncmp(t, "mem=", 4))
            mem = strtoull(t + 4, NULL, 10);
        else if (!strncmp(t, "sm=", 3))
            sm = (unsigned)strtoul(t + 3, NULL, 10);
        else if (!strncmp(t, "gi=", 3))
            gi = (unsigned)strtoul(t + 3, NULL, 10);
    }
    if (!strcmp(w, "children")) {
        unsigned kids[256];
        for (int c = 0, n = children(kids, 256 - nprocs); c < n; c++)
            procs[nprocs++] = (gproc){k, kids[c], mem, sm, gi};
    } else if (nprocs < 256)
        procs[nprocs++] = (gproc){k, pid, mem, sm, gi};
}

/* Re-reads the config: every call sees the test's latest word. */
static void load(void)
{
    static int loaded;
    if (loaded && getenv("FAKE_NVML_LOAD_ONCE"))
        return;
    loaded = 1;
    ndev = nprocs = naccts = nmigs = init_fail = count_fail = nhangs = 0;
    fixed_clock = -1;
    for (int c = 0; c < NCALLS; c++)
        cost_us[c] = call_info[c].cost_us ? call_info[c].cost_us : DEFAULT_COST_US;
    const char *path = getenv("FAKE_NVML_CONFIG");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
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
            int k = dev_word(&save);
            if (k < 0)
                continue;
            if (!strcmp(w, "lost"))
                devs[k].lost = 1;
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));)
                devs[k].unsupported |= calls_named(t);
        } else if (!strcmp(w, "gpm")) {
            int k = dev_word(&save);
            if (k < 0)
                continue;
            devs[k].gpm_on = 1;
            gpm_fields(&save, &devs[k].gpm);
        } else if (!strcmp(w, "mig")) {
            int k = dev_word(&save);
            char *g = strtok_r(NULL, " \t\n", &save);
            if (k < 0 || !g || nmigs == MAX_MIGS)
                continue;
            mig_inst *m = &migs[nmigs++];
            m->dev = k;
            m->gi = (unsigned)strtoul(g, NULL, 10);
            gpm_fields(&save, &m->gpm);
        } else if (!strcmp(w, "children") || !strcmp(w, "pid")) {
            char *i = strtok_r(NULL, " \t\n", &save);
            proc_fields(w, i ? (int)strtol(i, NULL, 10) : 0, &save);
        } else if (!strcmp(w, "accounting")) {
            int k = dev_word(&save);
            char *v = strtok_r(NULL, " \t\n", &save);
            if (k >= 0 && v)
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
        } else if (!strcmp(w, "clock")) {
            char *v = strtok_r(NULL, " \t\n", &save);
            fixed_clock = v ? strtod(v, NULL) : -1;
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
            int k = dev_word(&save);
            char *c = strtok_r(NULL, " \t\n", &save);
            if (k < 0 || !c)
                continue;
            int code = (int)strtol(c, NULL, 10);
            for (char *t; (t = strtok_r(NULL, " \t\n", &save));)
                for (int n = 0; n < NCALLS; n++)
                    if (calls_named(t) >> n & 1)
                        devs[k].fail[n] = code;
        } else if (!strcmp(w, "overcount") || !strcmp(w, "samples_after")) {
            int after = !strcmp(w, "samples_after");
            char *n = after ? strtok_r(NULL, " \t\n", &save) : NULL;
            int d = dev_word(&save);
            char *k = after ? strtok_r(NULL, " \t\n", &save) : NULL;
            if (d < 0)
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
                hangs[nhangs].calls = calls_named(c);
                hangs[nhangs++].after = after;
            }
        } else if (!strcmp(w, "cost")) {
            cost_fields(&save);
        }
    }
    if (f)
        fclose(f);
    double now = mono_secs(); /* the values held so far count until now; the new ones from now */
    for (int i = 0; i < ninteg; i++)
        integ_advance(&integs[i], now);
}

/* ---- each call's entry: counted, its cost burnt, hung while the config says so ---------------- */

typedef struct nvml_device_st *nvmlDevice_t;

/* A MIG instance's handle: this bit, the parent's index and the instance's id; a device's is its
 * index + 1. */
#define MIG_HANDLE_BIT ((uintptr_t)1 << 30)

/* Whether call, called for the n-th time, is to hang now. */
static int hangs_now(int call, long n)
{
    for (int i = 0; i < nhangs; i++)
        if ((hangs[i].calls >> call & 1) && n > hangs[i].after)
            return 1;
    return 0;
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

/* Spends us microseconds of the calling thread's CPU (not of wall time: a thread kept off the
 * CPU takes longer, as with the real calls). */
static void burn(unsigned us)
{
    if (!us)
        return;
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    long long want = (long long)us * 1000;
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((long long)(t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < want);
}

/* Counts a call (config loaded), burns its cost, and hangs there while the config says so. */
static void enter(int call)
{
    long n = __atomic_add_fetch(&ncalled[call], 1, __ATOMIC_RELAXED);
    burn(cost_us[call]);
    if (!hangs_now(call, n))
        return;
    count_hanging(1);
    while (hangs_now(call, n)) {
        usleep(20000);
        load();
    }
    count_hanging(-1);
}

/* The device behind a handle (and, where mig_gi is given, a MIG instance's handle: its parent,
 * and its instance id into *mig_gi, else NO_GI), or an error: NOT_SUPPORTED when the call is
 * listed for the device. */
static int get_any(nvmlDevice_t h, int call, dev **out, unsigned *mig_gi)
{
    load();
    enter(call);
    uintptr_t v = (uintptr_t)h;
    intptr_t i = (intptr_t)v - 1;
    unsigned gi = NO_GI;
    if (mig_gi && (v & MIG_HANDLE_BIT)) {
        i = (intptr_t)(v >> 16 & 0x3FFF);
        gi = (unsigned)(v & 0xFFFF);
        if (!gpm_config((int)i, gi)) /* no such instance (any mig line gives its values) */
            return INVALID;
    }
    if (i < 0 || i >= ndev)
        return INVALID;
    dev *d = &devs[i];
    if (d->lost)
        return LOST;
    if (d->fail[call])
        return d->fail[call];
    if (d->unsupported >> call & 1)
        return NOT_SUPPORTED;
    *out = d;
    if (mig_gi)
        *mig_gi = gi;
    return OK;
}

/* The device behind a device handle, or an error. */
static int get(nvmlDevice_t h, int call, dev **out)
{
    return get_any(h, call, out, NULL);
}

static int copy_str(char *dst, unsigned int len, const char *src)
{
    size_t n = strlen(src) + 1;
    if (n > len)
        return INSUFFICIENT;
    memcpy(dst, src, n);
    return OK;
}

/* ---- the calls' counts, for $FAKE_NVML_CALLS_OUT ------------------------------------------------ */

static pid_t loader_pid; /* a forked child's copy of the counts is not the process's */

__attribute__((constructor)) static void at_load(void)
{
    loader_pid = getpid();
}

/* Writes every call's count to $FAKE_NVML_CALLS_OUT, whole (a new file renamed over it). */
static void write_counts(void)
{
    const char *path = getenv("FAKE_NVML_CALLS_OUT");
    if (!path || !*path || getpid() != loader_pid)
        return;
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
        return;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    for (int c = 0; c < NCALLS; c++)
        fprintf(f, "%s %ld\n", call_info[c].name, __atomic_load_n(&ncalled[c], __ATOMIC_RELAXED));
    if (fclose(f) == 0)
        rename(tmp, path);
    else
        unlink(tmp);
}

__attribute__((destructor)) static void at_unload(void)
{
    write_counts();
}

/* ---- the entry points ------------------------------------------------------------------------------ */

#ifndef FAKE_NVML_NO_INIT
EXPORT int nvmlInit_v2(void)
{
    load();
    enter(C_INIT);
    return init_fail ? UNKNOWN : OK;
}
#endif
EXPORT int nvmlShutdown(void)
{
    load();
    enter(C_SHUTDOWN);
    write_counts();
    return OK;
}
EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
    load();
    enter(C_COUNT);
    if (count_fail)
        return count_fail;
    *n = (unsigned)ndev;
    return OK;
}
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
    load();
    enter(C_HANDLE);
    if (i >= (unsigned)ndev)
        return INVALID;
    if (devs[i].fail[C_HANDLE])
        return devs[i].fail[C_HANDLE];
    *h = (nvmlDevice_t)(intptr_t)(i + 1);
    return OK;
}
EXPORT int nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len)
{
    dev *d;
    int rc = get(h, C_NAME, &d);
    return rc ? rc : copy_str(name, len, d->name);
}
typedef struct {
    unsigned long long total, free, used;
} memory_t;
EXPORT int nvmlDeviceGetMemoryInfo(nvmlDevice_t h, memory_t *m)
{
    dev *d;
    int rc = get(h, C_MEMORY, &d);
    if (rc)
        return rc;
    m->total = d->mem_total;
    m->used = d->mem_used + d->mem_reserved; /* v1 counts the driver's reserved memory as used */
    m->free = d->mem_total - m->used;
    return OK;
}
#ifndef FAKE_NVML_MINIMAL
/* The index of a device in the config. */
static int index_of(const dev *d)
{
    return (int)(d - devs);
}

EXPORT int nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len)
{
    dev *d;
    unsigned gi;
    int rc = get_any(h, C_UUID, &d, &gi);
    if (rc)
        return rc;
    if (gi == NO_GI)
        return copy_str(uuid, len, d->uuid);
    char mig[128];
    const char *u = !strncmp(d->uuid, "GPU-", 4) ? d->uuid + 4 : d->uuid;
    snprintf(mig, sizeof mig, "MIG-%s-%u", u, gi);
    return copy_str(uuid, len, mig);
}
EXPORT int nvmlDeviceGetSerial(nvmlDevice_t h, char *s, unsigned int len)
{
    dev *d;
    int rc = get(h, C_SERIAL, &d);
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
    int rc = get(h, C_PCI, &d);
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
    enter(C_DRIVER);
    return copy_str(v, len, driver);
}
EXPORT int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    load();
    enter(C_CUDA);
    *v = cuda;
    return OK;
}
EXPORT int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor)
{
    dev *d;
    int rc = get(h, C_CC, &d);
    if (rc)
        return rc;
    return sscanf(d->cc, "%d.%d", major, minor) == 2 ? OK : NOT_SUPPORTED;
}
EXPORT int nvmlDeviceGetNumGpuCores(nvmlDevice_t h, unsigned int *n)
{
    dev *d;
    int rc = get(h, C_CORES, &d);
    if (rc)
        return rc;
    *n = d->cores;
    return OK;
}
EXPORT int nvmlDeviceGetPowerManagementLimit(nvmlDevice_t h, unsigned int *mw)
{
    dev *d;
    int rc = get(h, C_POWER, &d);
    if (rc)
        return rc;
    *mw = d->power_limit_mw;
    return OK;
}
EXPORT int nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, int type, unsigned int *mhz)
{
    dev *d;
    int rc = get(h, C_CLOCK, &d);
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
    int rc = get(h, C_UTIL, &d);
    if (rc)
        return rc;
    u->gpu = d->util;
    u->memory = d->util / 2;
    return OK;
}
EXPORT int nvmlDeviceGetTemperature(nvmlDevice_t h, int sensor, unsigned int *t)
{
    dev *d;
    int rc = get(h, C_TEMP, &d);
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
    int rc = get(h, C_POWER, &d);
    if (rc)
        return rc;
    *mw = d->power_mw;
    return OK;
}
EXPORT int nvmlDeviceGetClockInfo(nvmlDevice_t h, int type, unsigned int *mhz)
{
    dev *d;
    int rc = get(h, C_CLOCK, &d);
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
    int rc = get(h, C_PROCS, &d);
    if (rc)
        return rc;
    int idx = index_of(d);
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
            out[n++] = (proc_t){procs[i].pid, procs[i].mem, procs[i].gi, procs[i].gi == NO_GI ? NO_GI : 0};
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
    int rc = get(h, C_PROCUTIL, &d);
    if (rc)
        return rc;
    int idx = index_of(d);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    unsigned long long now = (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
    if (now <= last) /* asked again within the microsecond: the samples are newer all the same */
        now = last + 1;
    unsigned n = 0;
    for (int i = 0; i < nprocs; i++)
        if (procs[i].dev == idx)
            n++;
    unsigned extra = ncalled[C_PROCUTIL] > d->samples_after ? d->extra_samples : 0;
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
    int rc = get(h, C_ACCT, &d);
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
    int rc = get(h, C_ACCT, &d);
    if (rc)
        return -rc;
    return d->acct_on ? index_of(d) : -NOT_SUPPORTED;
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
    int rc = get(h, C_ENERGY, &d);
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
    int rc = get(h, C_REASONS, &d);
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
    int rc = get(h, C_VIOLATION, &d);
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

/* ---- v2 memory info (drivers since 510): reserved memory apart ---------------------------------- */

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} memory_v2_t;
#define MEMORY_V2_VERSION ((unsigned)(sizeof(memory_v2_t) | (2u << 24)))
EXPORT int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, memory_v2_t *m)
{
    dev *d;
    int rc = get(h, C_MEMORY_V2, &d);
    if (rc)
        return rc;
    if (!m)
        return INVALID;
    if (m->version != MEMORY_V2_VERSION)
        return VERSION_MISMATCH;
    m->total = d->mem_total;
    m->used = d->mem_used;
    m->reserved = d->mem_reserved;
    m->free = d->mem_total - d->mem_used - d->mem_reserved;
    return OK;
}

/* ---- MIG: the mode, the instances' handles ------------------------------------------------------ */

/* The handle of device d's instance gi (MIG_HANDLE_BIT above). */
static nvmlDevice_t mig_handle(int d, unsigned gi)
{
    return (nvmlDevice_t)(MIG_HANDLE_BIT | (uintptr_t)d << 16 | (gi & 0xFFFFu));
}

/* Device d's MIG instances (its mig lines), and the slots NVML says it has for them. */
static int mig_count(int d)
{
    int n = 0;
    for (int i = 0; i < nmigs; i++)
        n += migs[i].dev == d;
    return n;
}
static unsigned mig_slots(int d)
{
    int n = mig_count(d);
    return n == 0 ? 0 : n > MIG_SLOTS ? (unsigned)n : MIG_SLOTS;
}

EXPORT int nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *current, unsigned int *pending)
{
    dev *d;
    int rc = get(h, C_MIG, &d);
    if (rc)
        return rc;
    if (!current || !pending)
        return INVALID;
    *current = *pending = mig_count(index_of(d)) > 0;
    return OK;
}
EXPORT int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *count)
{
    dev *d;
    int rc = get(h, C_MIG, &d);
    if (rc)
        return rc;
    if (!count)
        return INVALID;
    *count = mig_slots(index_of(d));
    return OK;
}
EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int index, nvmlDevice_t *mig)
{
    dev *d;
    int rc = get(h, C_MIG, &d);
    if (rc)
        return rc;
    int k = index_of(d);
    if (!mig || index >= mig_slots(k))
        return INVALID;
    for (int i = 0, seen = 0; i < nmigs; i++)
        if (migs[i].dev == k && (unsigned)seen++ == index) {
            *mig = mig_handle(k, migs[i].gi);
            return OK;
        }
    return NOT_FOUND; /* an empty slot */
}
EXPORT int nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int *id)
{
    dev *d;
    unsigned gi;
    int rc = get_any(h, C_MIG, &d, &gi);
    if (rc)
        return rc;
    if (!id || gi == NO_GI) /* a device's handle, not a MIG instance's */
        return INVALID;
    *id = gi;
    return OK;
}

/* ---- GPM: samples, and the metrics between two -------------------------------------------------- */

typedef struct {
    unsigned int version, isSupportedDevice;
} gpm_support_t;
EXPORT int nvmlGpmQueryDeviceSupport(nvmlDevice_t h, gpm_support_t *s)
{
    dev *d;
    int rc = get(h, C_GPM_SUPPORT, &d);
    if (rc)
        return rc;
    if (!s)
        return INVALID;
    if (s->version != 1) /* NVML_GPM_SUPPORT_VERSION */
        return VERSION_MISMATCH;
    s->isSupportedDevice = d->gpm_on || mig_count(index_of(d)) > 0;
    return OK;
}

enum { SAMPLE_MAGIC = 0x6770u };
typedef struct gpm_sample_st { /* NVML's nvmlGpmSample_t points at one: opaque to the caller */
    unsigned magic, filled;
    int dev;
    unsigned gi;
    double t;
    double integral[NMETRICS];
    double held[NMETRICS]; /* the values held at t */
} gpm_sample;

EXPORT int nvmlGpmSampleAlloc(gpm_sample **out)
{
    load();
    enter(C_GPM_ALLOC);
    if (!out)
        return INVALID;
    gpm_sample *s = calloc(1, sizeof *s);
    if (!s)
        return 255; /* NVML_ERROR_MEMORY */
    s->magic = SAMPLE_MAGIC;
    *out = s;
    return OK;
}
EXPORT int nvmlGpmSampleFree(gpm_sample *s)
{
    load();
    enter(C_GPM_ALLOC);
    if (!s || s->magic != SAMPLE_MAGIC)
        return INVALID;
    s->magic = 0;
    free(s);
    return OK;
}

/* The integral of a device or instance, brought up to now (started at now when new); NULL when
 * the table is full. */
static gpm_integ *integ_now(int d, unsigned gi, double now)
{
    for (int i = 0; i < ninteg; i++)
        if (integs[i].dev == d && integs[i].gi == gi) {
            integ_advance(&integs[i], now);
            return &integs[i];
        }
    if (ninteg == (int)(sizeof integs / sizeof integs[0]))
        return NULL;
    gpm_integ *e = &integs[ninteg++];
    memset(e, 0, sizeof *e);
    e->dev = d;
    e->gi = gi;
    e->t = now;
    integ_advance(e, now);
    return e;
}

/* Fills a sample of device d (gi NO_GI) or of its instance gi: the time and the integrals. */
static int sample_fill(gpm_sample *s, int d, unsigned gi)
{
    if (!s || s->magic != SAMPLE_MAGIC)
        return INVALID;
    double now = mono_secs();
    gpm_integ *e = integ_now(d, gi, now);
    if (!e)
        return UNKNOWN;
    s->filled = 1;
    s->dev = d;
    s->gi = gi;
    s->t = e->t; /* now, or later where the clock ran back: the integrals' time */
    memcpy(s->integral, e->integral, sizeof s->integral);
    memcpy(s->held, e->held.v, sizeof s->held);
    return OK;
}
EXPORT int nvmlGpmSampleGet(nvmlDevice_t h, gpm_sample *s)
{
    dev *d;
    int rc = get(h, C_GPM_SAMPLE, &d);
    if (rc)
        return rc;
    if (!d->gpm_on && mig_count(index_of(d)) == 0)
        return NOT_SUPPORTED;
    return sample_fill(s, index_of(d), NO_GI);
}
EXPORT int nvmlGpmMigSampleGet(nvmlDevice_t h, unsigned int gi, gpm_sample *s)
{
    dev *d;
    int rc = get(h, C_GPM_MIG_SAMPLE, &d);
    if (rc)
        return rc;
    if (!gpm_config(index_of(d), gi))
        return NOT_FOUND;
    return sample_fill(s, index_of(d), gi);
}

/* The index of a metric by its NVML id, or -1. */
static int metric_by_id(unsigned id)
{
    for (int k = 0; k < NMETRICS; k++)
        if (metric_info[k].id == id)
            return k;
    return -1;
}

typedef struct {
    unsigned int metricId;
    int nvmlReturn;
    double value;
    struct {
        const char *shortName, *longName, *unit;
    } metricInfo;
} gpm_metric;
_Static_assert(sizeof(gpm_metric) == 40, "nvmlGpmMetric_t is 40 bytes");
typedef struct {
    unsigned int version, numMetrics;
    gpm_sample *sample1, *sample2;
    gpm_metric metrics[]; /* NVML_GPM_METRIC_MAX of them: 98 in older headers, 333 in newer */
} gpm_metrics_get;

EXPORT int nvmlGpmMetricsGet(gpm_metrics_get *m)
{
    load();
    enter(C_GPM_METRICS);
    if (!m)
        return INVALID;
    if (m->version != 1) /* NVML_GPM_METRICS_GET_VERSION */
        return VERSION_MISMATCH;
    const gpm_sample *a = m->sample1, *b = m->sample2;
    if (m->numMetrics > GPM_METRIC_MAX || !a || !b || a->magic != SAMPLE_MAGIC || b->magic != SAMPLE_MAGIC ||
        !a->filled || !b->filled || a->dev != b->dev || a->gi != b->gi || b->t < a->t)
        return INVALID;
    const gpm_vals *g = gpm_config(a->dev, a->gi);
    for (unsigned i = 0; i < m->numMetrics; i++) {
        gpm_metric *x = &m->metrics[i];
        int k = metric_by_id(x->metricId);
        x->value = 0;
        memset(&x->metricInfo, 0, sizeof x->metricInfo);
        if (k < 0 || !g || !(g->given >> k & 1)) {
            x->nvmlReturn = NOT_SUPPORTED;
            continue;
        }
        x->nvmlReturn = OK;
        x->value = b->t > a->t ? (b->integral[k] - a->integral[k]) / (b->t - a->t) : b->held[k];
        x->metricInfo.shortName = metric_info[k].key;
        x->metricInfo.longName = metric_info[k].long_name;
        x->metricInfo.unit = metric_info[k].unit;
    }
    return OK;
}
#endif
