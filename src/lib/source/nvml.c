/* nvml.c - NVIDIA GPUs through NVML, the caller's side (see nvml.h): the library opened with dlopen (its dlerror
 * text kept, as libuv's dl.c keeps it) and every symbol resolved once; requests to the worker thread (nvml_worker.c),
 * each waited for with a deadline (a stuck driver is left behind); the API; the tree's processes accounting saw. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/dl.h" /* RT_DL_STATIC_WHY */
#include "nvml_int.h"

/* ---- the caller's state ------------------------------------------------------------------------ */

/* What of the power's estimate of the energy between two readings of the counter is handed out:
 * 15/16, exact in binary. */
#define RT_NVML_ESTIMATE_SHARE 0.9375

/* The kinds' names in messages, in K_* order. */
static const char *const kind_name[K_N] = {"utilization",
                                           "memory",
                                           "temperature",
                                           "power draw",
                                           "clock",
                                           "process list",
                                           "per-process utilization",
                                           "accounting",
                                           "energy counter",
                                           "throttle reasons",
                                           "power violation time",
                                           "thermal violation time",
                                           "GPM metrics"};

/* What the caller knows of a GPU between requests. */
typedef struct nvml_seen {
    bool read_fresh, tree_fresh; /* the latest poll's readings / lists not used yet */
    bool lost_told;
    unsigned int warned; /* bit k: kind k's failure told */
    bool acct_seen; /* its accounting mode was on at some poll: its kept processes count */
    uint64_t acct_sum; /* the sum of its kept processes' peaks */
    /* energy: the counter at the last reading that gave it and the total since the first one
     * (exact); the running total handed out (energy_given_j: the exact total at each reading of
     * the counter, and between two readings the power drawn times the time; never going back:
     * a surplus handed out before a reading (energy_credit_j) is taken off the estimates that
     * follow); whether the latest reading gave a total */
    bool energy_seen, energy_now, energy_read;
    unsigned long long energy_last_mj, energy_total_mj;
    double energy_given_j, energy_credit_j, power_last_w;
    /* the estimates' calibration: the power times the time since the last reading of the
     * counter (unscaled), the counter's total then, and the factor the last stretch found
     * between the two (1 until one did; within 0.5 .. 2) */
    double energy_raw_j, energy_exact_last_j, energy_k;
    /* throttling, power then thermal: the violation counter at the last reading that
     * gave it and the total since the first; whether the counter or else the reasons were
     * ever read; the seconds the reasons added up */
    bool viol_seen[2], reasons_seen;
    unsigned long long viol_last_ns[2], viol_total_ns[2];
    double reasons_secs[2];
    double share; /* the tree's share at the last rt_nvml_tree (NaN: none) */
    /* the MIG instances as rt_gpu shows them (ids and UUIDs borrowed from the worker, work
     * copied at each reading), and the pointer array it shows */
    rt_gpu_mig *mig;
    const rt_gpu_mig **mig_ptrs;
    bool read_seen; /* a reading was taken: read_mono is its time */
    double read_mono;
} nvml_seen;

/* A process of the tree kept for the VRAM peak: GPU, pid and start (a reused pid is another
 * process), the largest maxMemoryUsage seen, and whether it still ran at the last look (its
 * stats are then read again, in or out of the tree, until it has ended). */
typedef struct nvml_acct_ent {
    size_t dev;
    unsigned int pid;
    unsigned long long start_us, max_bytes;
    bool running;
} nvml_acct_ent;

struct rt_nvml {
    rt_logger log;
    char err[256]; /* the last dlerror text, start failure or missed deadline; "" when none */
    bool ready;
    bool stuck; /* a request missed its deadline (or the handle crossed a fork): no more requests */
    bool tree_wanted; /* rt_nvml_tree has been asked: every poll gathers the process lists */
    /* the cumulative counters (energy, violation time) and the accounting mode are read at the
     * first poll, then every RT_NVML_COUNTER_SECS, and at the poll after rt_nvml_counters_due */
    bool counters_read, counters_due;
    double counters_mono;
    double init_secs, call_secs;
    double poll_mono; /* the time of the latest poll, on the deadlines' clock */
    nvml_worker *w; /* NULL without a worker thread */
    size_t ndev;
    nvml_seen *seen;
    /* the caller's buffers for the tree's share, grown only when longer lists are seen */
    unsigned int *pids;
    size_t pids_cap;
    nvml_pid_val *best;
    size_t best_cap;
    /* the tree's processes seen by accounting, sorted by GPU, pid and start; at most
     * RT_NVML_ACCT_MAX entries */
    nvml_acct_ent *acct;
    size_t nacct, acct_cap;
};

/* Set once any request of any handle has missed its deadline: the driver is stuck, and a new
 * handle would only get stuck behind it. */
static atomic_bool nvml_hung;

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
#ifdef RT_STATIC_BUILD
    /* no loader: said as a warning where an NVIDIA driver is there (its GPUs go untracked), else
     * only in the debug log, as on any machine without one */
    snprintf(nv->err, sizeof nv->err, "%s", RT_DL_STATIC_WHY);
    bool driver = access("/proc/driver/nvidia/version", F_OK) == 0;
    rt_log(&nv->log, driver ? RT_LOG_WARN : RT_LOG_DEBUG, "NVML (%s) not loaded: %s; NVIDIA GPUs are not tracked", lib,
           nv->err);
    w->dl = NULL;
    return false;
#endif
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
    RESOLVE(acct_mode, "nvmlDeviceGetAccountingMode", NULL, NULL);
    RESOLVE(acct_pids, "nvmlDeviceGetAccountingPids", NULL, NULL);
    RESOLVE(acct_stats, "nvmlDeviceGetAccountingStats", NULL, NULL);
    RESOLVE(energy, "nvmlDeviceGetTotalEnergyConsumption", NULL, NULL);
    RESOLVE(reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons", NULL);
    RESOLVE(violation, "nvmlDeviceGetViolationStatus", NULL, NULL);
    RESOLVE(memory_v2, "nvmlDeviceGetMemoryInfo_v2", NULL, NULL);
    RESOLVE(gpm_query, "nvmlGpmQueryDeviceSupport", NULL, NULL);
    RESOLVE(gpm_alloc, "nvmlGpmSampleAlloc", NULL, NULL);
    RESOLVE(gpm_free, "nvmlGpmSampleFree", NULL, NULL);
    RESOLVE(gpm_get, "nvmlGpmSampleGet", NULL, NULL);
    RESOLVE(gpm_mig_get, "nvmlGpmMigSampleGet", NULL, NULL);
    RESOLVE(gpm_metrics, "nvmlGpmMetricsGet", NULL, NULL);
    RESOLVE(mig_mode, "nvmlDeviceGetMigMode", NULL, NULL);
    RESOLVE(mig_count, "nvmlDeviceGetMaxMigDeviceCount", NULL, NULL);
    RESOLVE(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex", NULL, NULL);
    RESOLVE(gpu_instance_id, "nvmlDeviceGetGpuInstanceId", NULL, NULL);
    return true;
}
/* ---- the caller's side: requests with a deadline --------------------------------------------- */
/* Whether this poll reads the cumulative counters (at mono): the first, one due, one
 * RT_NVML_COUNTER_SECS after the last; marks them read. */
static bool counters_now(rt_nvml *nv, double mono)
{
    if (nv->counters_read && !nv->counters_due && mono - nv->counters_mono < RT_NVML_COUNTER_SECS)
        return false;
    nv->counters_read = true;
    nv->counters_due = false;
    nv->counters_mono = mono;
    return true;
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
    double until = rt_clock_now(w->clock) + secs;
    bool counters = job == JOB_POLL || job == JOB_TREE ? counters_now(nv, until - secs) : false;
    pthread_mutex_lock(&w->mu);
    w->job = job;
    w->job_tree = tree;
    w->job_counters = counters;
    w->asked++;
    pthread_mutex_unlock(&w->mu);
    pthread_cond_signal(&w->ask_cv); /* unlocked: the worker wakes to a free mutex */
    pthread_mutex_lock(&w->mu);
    bool late = false;
    while (w->done != w->asked && !late)
        late = rt_clock_wait(w->clock, &w->done_cv, &w->mu, until);
    bool done = w->done == w->asked;
    if (!done)
        w->abandoned = true;
    pthread_mutex_unlock(&w->mu);
    if (done)
        return true;
    rt_nvw_leave_behind(w);
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
        /* the per-process samples (1.4 ms of CPU a GPU on an H200) only where another process
         * shared the GPU at the last look, or none was taken yet */
        for (size_t j = 0; with_tree && j < nv->ndev; j++)
            nv->w->dev[j].want_procutil = !(nv->seen[j].share >= 1.0);
        if (!ask(nv, tree ? JOB_TREE : JOB_POLL, with_tree, call_deadline(nv)))
            return false;
        if (!tree)
            nv->poll_mono = rt_clock_now(nv->w->clock);
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
 * frees it; a worker that misses it is left behind; in a forked child, NVML is neither called
 * nor unloaded and what the copy holds is freed. nv has no worker after. */
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
            rt_nvw_free(w);
        }
    } else if (getpid() != w->owner && !w->abandoned) {
        rt_nvw_free(w); /* the parent's copy, with no thread here to touch it */
    }
    nv->w = NULL;
}

/* Sets up what GPU d shows of its MIG instances (found at discovery; none: nothing). Returns
 * 0, or -1 on no memory. */
static int mig_out(nvml_seen *s, const nvml_dev *d)
{
    if (d->nmig == 0)
        return 0;
    s->mig = calloc(d->nmig, sizeof *s->mig);
    s->mig_ptrs = calloc(d->nmig, sizeof *s->mig_ptrs);
    if (!s->mig || !s->mig_ptrs)
        return -1;
    for (size_t k = 0; k < d->nmig; k++) {
        s->mig[k] = (rt_gpu_mig){d->mig[k].gi, d->mig[k].uuid, rt_gpu_work_null};
        s->mig_ptrs[k] = &s->mig[k];
    }
    return 0;
}

/* ---- the API ---------------------------------------------------------------------------------- */

rt_nvml *rt_nvml_open_timed(const char *path, const rt_logger *log, double init_secs, double call_secs,
                            rt_clock *clock)
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
    w->clock = clock;
    if (!load(nv, w, path)) {
        rt_nvw_free(w);
        return nv;
    }
    int e = rt_nvw_start(w);
    if (e != 0) {
        snprintf(nv->err, sizeof nv->err, "no thread for NVML: %s", strerror(e));
        rt_log(&nv->log, RT_LOG_WARN, "%s; NVIDIA GPUs are not tracked", nv->err);
        rt_nvw_free(w);
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
    for (size_t i = 0; i < nv->ndev; i++) {
        nv->seen[i].share = NAN; /* no rt_nvml_tree yet */
        if (mig_out(&nv->seen[i], &w->dev[i]) < 0) {
            rt_nvml_close(nv);
            return NULL;
        }
    }
    return nv;
}

rt_nvml *rt_nvml_open(const char *path, const rt_logger *log)
{
    return rt_nvml_open_timed(path, log, RT_NVML_INIT_DEADLINE_SECS, RT_NVML_CALL_DEADLINE_SECS, NULL);
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

/* How far a counter went from last to now; one that went backwards was reset (the driver
 * reloaded) and counted again from 0. */
static unsigned long long counter_delta(unsigned long long now, unsigned long long last)
{
    return now >= last ? now - last : now;
}

/* Takes GPU i's energy counter and throttling of the latest poll (d) into the running totals,
 * and sets o's throttled seconds: the violation counter's time since its first reading where
 * the driver gives it, else the throttle reasons seen at each reading times the time since
 * the previous one; NaN where neither was ever read. */
static void take_energy(rt_nvml *nv, size_t i, const nvml_dev *d, rt_gpu *o)
{
    static const int viol_kind[2] = {K_VIOL_POWER, K_VIOL_THERMAL};
    static const unsigned long long mask[2] = {NVML_REASONS_POWER, NVML_REASONS_THERMAL};
    nvml_seen *s = &nv->seen[i];
    double dt = s->read_seen && nv->poll_mono > s->read_mono ? nv->poll_mono - s->read_mono : 0.0;
    s->read_seen = true;
    s->read_mono = nv->poll_mono;
    double power_w = d->rc[K_POWER] == NVML_SUCCESS ? d->power_mw / 1000.0 : NAN;
    /* the power drawn (the mean of this reading's and the last one's) times the time */
    double raw = s->energy_seen && dt > 0 && !isnan(power_w)
                     ? (isnan(s->power_last_w) ? power_w : (power_w + s->power_last_w) / 2) * dt
                     : NAN;
    if (!isnan(raw))
        s->energy_raw_j += raw;
    if (d->rc[K_ENERGY] == NVML_SUCCESS) {
        if (s->energy_seen)
            s->energy_total_mj += counter_delta(d->energy_mj, s->energy_last_mj);
        s->energy_seen = s->energy_now = s->energy_read = true;
        s->energy_last_mj = d->energy_mj;
        double exact = (double)s->energy_total_mj / 1000.0;
        if (s->energy_raw_j > 0) { /* how far the power's estimates were from the counter */
            double k = (exact - s->energy_exact_last_j) / s->energy_raw_j;
            s->energy_k = k < 0.5 ? 0.5 : k > 2.0 ? 2.0 : k;
        }
        s->energy_raw_j = 0;
        s->energy_exact_last_j = exact;
        /* the total never goes back (a counter's reader takes a fall for a reset, and an
         * interval's energy below 0 is none): a surplus the estimates ran ahead is held and
         * taken off the estimates that follow */
        s->energy_credit_j = s->energy_given_j > exact ? s->energy_given_j - exact : 0.0;
        if (exact > s->energy_given_j)
            s->energy_given_j = exact;
    } else if (!isnan(raw)) {
        /* between two readings of the counter: that estimate, as the last stretch calibrated
         * it, a sixteenth short (so that the counter stays ahead of the estimates and each
         * reading makes the total its own: power readings are within a few percent of it),
         * less a surplus handed out before */
        double est = raw * (s->energy_k > 0 ? s->energy_k : 1.0) * RT_NVML_ESTIMATE_SHARE;
        double taken = est < s->energy_credit_j ? est : s->energy_credit_j;
        s->energy_credit_j -= taken;
        s->energy_given_j += est - taken;
        s->energy_now = true;
    }
    s->power_last_w = power_w;
    bool reasons = d->rc[K_REASONS] == NVML_SUCCESS;
    s->reasons_seen |= reasons;
    double *out[2] = {&o->power_throttled_secs, &o->thermal_throttled_secs};
    for (int k = 0; k < 2; k++) {
        if (reasons && (d->reasons & mask[k]))
            s->reasons_secs[k] += dt;
        if (d->rc[viol_kind[k]] == NVML_SUCCESS) {
            if (s->viol_seen[k])
                s->viol_total_ns[k] += counter_delta(d->viol[k].violation_time, s->viol_last_ns[k]);
            s->viol_seen[k] = true;
            s->viol_last_ns[k] = d->viol[k].violation_time;
        }
        *out[k] = s->viol_seen[k] ? (double)s->viol_total_ns[k] / 1e9 : s->reasons_seen ? s->reasons_secs[k] : NAN;
    }
}

void rt_nvml_read(rt_nvml *nv, size_t i, rt_gpu *o)
{
    const nvml_dev *d = &nv->w->dev[i];
    rt_gpu_facts_out(&d->facts, o);
    nv->seen[i].energy_now = nv->seen[i].energy_read = false;
    if (!take_fresh(nv, i, false))
        return;
    take_energy(nv, i, d, o);
    if (d->rc[K_UTIL] == NVML_SUCCESS)
        o->utilization_pct = d->util;
    if (d->rc[K_MEMORY] == NVML_SUCCESS) {
        o->vram_total_bytes = d->mem.total;
        o->vram_used_bytes = d->mem.used;
        o->vram_used_pct = d->mem.total ? (double)d->mem.used / (double)d->mem.total * 100.0 : NAN;
        if (d->mem_reserved != NVML_VALUE_NOT_AVAILABLE)
            o->vram_reserved_bytes = d->mem_reserved;
    }
    o->work = d->gpm.work;
    nvml_seen *s = &nv->seen[i];
    for (size_t k = 0; k < d->nmig; k++)
        s->mig[k].work = d->mig[k].gpm.work;
    o->mig = d->nmig ? s->mig_ptrs : NULL;
    o->mig_count = d->nmig;
    if (d->rc[K_TEMP] == NVML_SUCCESS)
        o->temperature_celsius = d->temp;
    if (d->rc[K_POWER] == NVML_SUCCESS)
        o->power_watts = d->power_mw / 1000.0;
    if (d->rc[K_CLOCK] == NVML_SUCCESS)
        o->frequency_mhz = d->clock_mhz;
}

/* The tree's VRAM on d from the latest lists (processes in both lists counted once) and
 * whether it has any process there. Returns false when out of memory (*vram then partial). */
static bool tree_vram(rt_nvml *nv, const nvml_dev *d, rt_pid_in_tree has, void *user, uint64_t *vram, bool *present)
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
            return false;
        nv->pids[nseen++] = e[i].pid;
        if (e[i].val != NVML_VALUE_NOT_AVAILABLE)
            *vram += e[i].val;
    }
    return true;
}

/* Fills nv->best[0..*np) with each process's highest sample of d's SM time in the interval,
 * of the processes has says are the tree's (has NULL: every process). Returns 0, or -1 on no
 * memory. */
static int best_of_samples(rt_nvml *nv, const nvml_dev *d, rt_pid_in_tree has, void *user, size_t *np)
{
    const nvml_pid_val *e = d->nutil ? nv->w->utils + d->util_off : NULL;
    size_t n = 0;
    for (size_t i = 0; i < d->nutil; i++) {
        if (has && !has(user, e[i].pid))
            continue;
        size_t j = 0;
        while (j < n && nv->best[j].pid != e[i].pid)
            j++;
        if (j == n) {
            if (n == nv->best_cap && rt_grow(&nv->best, &nv->best_cap, n + 1, sizeof *nv->best) < 0)
                return -1;
            nv->best[n++] = (nvml_pid_val){e[i].pid, NVML_NO_INSTANCE, 0};
        }
        if (e[i].val > nv->best[j].val)
            nv->best[j].val = e[i].val;
    }
    *np = n;
    return 0;
}

/* The tree's share of d's SM time from the latest samples: for each process of the tree, its
 * highest sample in the interval, summed and capped at 100. NaN when unsupported. */
static double tree_util(rt_nvml *nv, const nvml_dev *d, rt_pid_in_tree has, void *user, bool present)
{
    if (d->tree_util == TU_DEVICE) /* the tree alone on the GPU at the last look: the device's */
        return !present ? 0.0 : d->rc[K_UTIL] == NVML_SUCCESS ? (double)d->util : NAN;
    if (d->tree_util != TU_SAMPLES)
        return d->tree_util == TU_NONE ? 0.0 : NAN;
    size_t np = 0;
    if (best_of_samples(nv, d, has, user, &np) < 0)
        return NAN;
    double sum = 0;
    for (size_t j = 0; j < np; j++)
        sum += (double)nv->best[j].val;
    return sum > 100 ? 100 : sum;
}

/* ---- the tree's VRAM peak from accounting (the table on the caller's side: a stuck worker
 * never touches it) ---------------------------------------------------------------------------- */

/* The first entry at or after (dev, pid, start) in the sorted table. */
static size_t acct_lower(const rt_nvml *nv, size_t dev, unsigned int pid, unsigned long long start)
{
    size_t lo = 0, hi = nv->nacct;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const nvml_acct_ent *e = &nv->acct[mid];
        bool before = e->dev != dev ? e->dev < dev : e->pid != pid ? e->pid < pid : e->start_us < start;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether entry k exists and is a process with this pid on GPU dev. */
static bool acct_is(const rt_nvml *nv, size_t k, size_t dev, unsigned int pid)
{
    return k < nv->nacct && nv->acct[k].dev == dev && nv->acct[k].pid == pid;
}

/* Whether the table holds a process with this pid on GPU dev that still ran at the last look. */
static bool acct_running(const rt_nvml *nv, size_t dev, unsigned int pid)
{
    for (size_t k = acct_lower(nv, dev, pid, 0); acct_is(nv, k, dev, pid); k++)
        if (nv->acct[k].running)
            return true;
    return false;
}

/* Marks the processes with this pid on GPU dev, other than the one started at start, as ended:
 * the driver no longer has their data (it keeps one process per pid, the latest). */
static void acct_ended(rt_nvml *nv, size_t dev, unsigned int pid, unsigned long long start)
{
    for (size_t k = acct_lower(nv, dev, pid, 0); acct_is(nv, k, dev, pid); k++)
        if (nv->acct[k].start_us != start)
            nv->acct[k].running = false;
}

/* Removes entry k, its peak taken off its GPU's sum. */
static void acct_remove(rt_nvml *nv, size_t k)
{
    nv->seen[nv->acct[k].dev].acct_sum -= nv->acct[k].max_bytes;
    memmove(&nv->acct[k], &nv->acct[k + 1], (nv->nacct - k - 1) * sizeof *nv->acct);
    nv->nacct--;
}

/* Keeps what pid's stats on GPU dev say (a peak NVML cannot give is none): a larger peak, and
 * whether it runs, for a process already kept; a process not kept yet only when it has a peak,
 * is in the tree now (in_tree) and either runs or started after tracking began (an ended
 * process of a pid the tree reuses is not the tree's). The table is bounded: when it is full,
 * the new process replaces the kept one with the smallest peak if its own is larger (the sum
 * then leaves out the smallest peaks: a bound that errs low only past RT_NVML_ACCT_MAX). */
static void acct_keep(rt_nvml *nv, size_t dev, unsigned int pid, const nvml_acct_stats *st, bool in_tree)
{
    acct_ended(nv, dev, pid, st->start_time_us);
    bool known = st->max_memory_usage != NVML_VALUE_NOT_AVAILABLE;
    size_t k = acct_lower(nv, dev, pid, st->start_time_us);
    if (acct_is(nv, k, dev, pid) && nv->acct[k].start_us == st->start_time_us) {
        nvml_acct_ent *e = &nv->acct[k];
        if (known && st->max_memory_usage > e->max_bytes) {
            nv->seen[dev].acct_sum += st->max_memory_usage - e->max_bytes;
            e->max_bytes = st->max_memory_usage;
        }
        e->running = st->is_running != 0;
        return;
    }
    if (!known || !in_tree || (!st->is_running && st->start_time_us < nv->w->start_us))
        return;
    if (nv->nacct == RT_NVML_ACCT_MAX) {
        size_t least = 0;
        for (size_t j = 1; j < nv->nacct; j++)
            if (nv->acct[j].max_bytes < nv->acct[least].max_bytes)
                least = j;
        if (nv->acct[least].max_bytes >= st->max_memory_usage)
            return;
        acct_remove(nv, least);
        k = acct_lower(nv, dev, pid, st->start_time_us);
    }
    if (nv->nacct == nv->acct_cap && rt_grow(&nv->acct, &nv->acct_cap, nv->nacct + 1, sizeof *nv->acct) < 0)
        return;
    memmove(&nv->acct[k + 1], &nv->acct[k], (nv->nacct - k) * sizeof *nv->acct);
    nv->acct[k] = (nvml_acct_ent){dev, pid, st->start_time_us, st->max_memory_usage, st->is_running != 0};
    nv->nacct++;
    nv->seen[dev].acct_sum += st->max_memory_usage;
}

/* Updates the kept processes of GPU i from its accounting list of the latest poll: the stats
 * of its pids that are in the tree, or that a kept process still running had, asked of the
 * worker in one request (none when there are none to ask). Allocates only when more are asked
 * than ever before, or the table grows. */
static void acct_track(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user)
{
    nvml_worker *w = nv->w;
    const nvml_dev *d = &w->dev[i];
    if (!d->acct_on)
        return;
    nv->seen[i].acct_seen = true;
    const unsigned int *pids = d->nacct ? w->acct_pids + d->acct_off : NULL;
    w->nacct_ask = 0;
    for (size_t k = 0; k < d->nacct; k++) {
        if (!has(user, pids[k]) && !acct_running(nv, i, pids[k]))
            continue;
        if (w->nacct_ask == w->acct_ask_cap &&
            rt_grow(&w->acct_ask, &w->acct_ask_cap, w->nacct_ask + 1, sizeof *w->acct_ask) < 0)
            break; /* out of memory: the rest waits for the next look */
        w->acct_ask[w->nacct_ask++] = (nvml_acct_ask){.pid = pids[k]};
    }
    if (w->nacct_ask == 0)
        return;
    w->acct_dev = i;
    if (!ask(nv, JOB_ACCT, false, call_deadline(nv)))
        return;
    tell(nv);
    for (size_t k = 0; k < w->nacct_ask; k++) {
        const nvml_acct_ask *a = &w->acct_ask[k];
        if (a->rc == NVML_SUCCESS)
            acct_keep(nv, i, a->pid, &a->st, has(user, a->pid));
        else if (a->rc == NVML_ERROR_NOT_FOUND)
            acct_ended(nv, i, a->pid, NVML_VALUE_NOT_AVAILABLE);
    }
}

/* The tree's share of d from the latest lists and samples (see rt_nvml_tree_share). */
static double tree_share(rt_nvml *nv, const nvml_dev *d, rt_pid_in_tree has, void *user)
{
    /* the processes in the lists, each once: whether the tree has one, whether all are its */
    const nvml_pid_val *e = d->nproc ? nv->w->procs + d->proc_off : NULL;
    size_t n = 0;
    bool mine = false, others = false;
    uint64_t vram_all = 0, vram_mine = 0;
    for (size_t k = 0; k < d->nproc; k++) {
        size_t j = 0;
        while (j < n && nv->pids[j] != e[k].pid)
            j++;
        if (j < n)
            continue;
        if (n == nv->pids_cap && rt_grow(&nv->pids, &nv->pids_cap, n + 1, sizeof *nv->pids) < 0)
            return NAN;
        nv->pids[n++] = e[k].pid;
        bool in = has(user, e[k].pid);
        mine |= in;
        others |= !in;
        if (e[k].val != NVML_VALUE_NOT_AVAILABLE) {
            vram_all += e[k].val;
            if (in)
                vram_mine += e[k].val;
        }
    }
    if (d->lists_ok && mine && !others)
        return 1.0;
    /* the per-process samples: each process's highest, the tree's sum over everyone's */
    double util_all = 0, util_mine = 0;
    if (d->tree_util == TU_SAMPLES) {
        size_t np = 0;
        if (best_of_samples(nv, d, NULL, NULL, &np) < 0)
            return NAN;
        for (size_t j = 0; j < np; j++) {
            util_all += (double)nv->best[j].val;
            if (has(user, nv->best[j].pid))
                util_mine += (double)nv->best[j].val;
        }
        mine |= util_mine > 0;
    }
    if (util_all > 0)
        return util_mine / util_all;
    if (d->lists_ok && vram_all > 0)
        return (double)vram_mine / (double)vram_all;
    if (!mine && (d->lists_ok || d->tree_util != TU_UNKNOWN))
        return 0.0;
    return NAN;
}

bool rt_nvml_tree(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, uint64_t *vram_bytes, bool *vram_ok,
                  bool *present, double *util_pct)
{
    nv->tree_wanted = true;
    nv->seen[i].share = NAN;
    if (!take_fresh(nv, i, true))
        return false;
    const nvml_dev *d = &nv->w->dev[i];
    *vram_ok = tree_vram(nv, d, has, user, vram_bytes, present) && d->lists_ok; /* a partial sum is null */
    *util_pct = tree_util(nv, d, has, user, *present);
    nv->seen[i].share = tree_share(nv, d, has, user);
    acct_track(nv, i, has, user); /* after: its request may find the GPU lost or the driver stuck */
    return true;
}

void rt_nvml_counters_due(rt_nvml *nv)
{
    if (nv)
        nv->counters_due = true;
}

int rt_nvml_energy(const rt_nvml *nv, size_t i, double *joules)
{
    if (!nv || i >= nv->ndev || !nv->seen[i].energy_now)
        return 0;
    *joules = nv->seen[i].energy_given_j;
    return nv->seen[i].energy_read ? 1 : 2;
}

double rt_nvml_tree_share(const rt_nvml *nv, size_t i)
{
    return nv && i < nv->ndev ? nv->seen[i].share : NAN;
}

uint64_t rt_nvml_tree_vram_peak(const rt_nvml *nv)
{
    uint64_t sum = 0;
    bool known = false;
    for (size_t i = 0; nv && i < nv->ndev; i++) {
        if (nv->seen[i].acct_seen) {
            sum += nv->seen[i].acct_sum;
            known = true;
        }
    }
    return known ? sum : RT_NULL_U64;
}

/* Whether a MIG instance gi is among the tree's on d (in the caller's pids buffer, n of them). */
static bool gi_in(const rt_nvml *nv, size_t n, unsigned int gi)
{
    for (size_t j = 0; j < n; j++)
        if (nv->pids[j] == gi)
            return true;
    return false;
}

/* Adds w into sum when it has any figure. Returns whether it had. */
static bool work_add_known(rt_gpu_work_sum *sum, const rt_gpu_work *w)
{
    rt_gpu_work_sum one = {0};
    rt_gpu_work unused;
    rt_gpu_work_add(&one, w);
    if (!rt_gpu_work_mean(&one, &unused))
        return false;
    rt_gpu_work_add(sum, w);
    return true;
}

bool rt_nvml_tree_work(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, rt_gpu_work_sum *sum, bool *shared)
{
    const nvml_dev *d = &nv->w->dev[i];
    const nvml_pid_val *e = d->nproc ? nv->w->procs + d->proc_off : NULL;
    /* in MIG mode: the instances the tree's processes run in (their ids into nv->pids) */
    size_t n = 0;
    for (size_t k = 0; d->nmig && k < d->nproc; k++) {
        if (!has(user, e[k].pid) || e[k].gi == NVML_NO_INSTANCE || gi_in(nv, n, e[k].gi))
            continue;
        if (n == nv->pids_cap && rt_grow(&nv->pids, &nv->pids_cap, n + 1, sizeof *nv->pids) < 0)
            return false;
        nv->pids[n++] = e[k].gi;
    }
    bool any = false;
    for (size_t m = 0; m < d->nmig; m++)
        if (gi_in(nv, n, d->mig[m].gi))
            any |= work_add_known(sum, &d->mig[m].gpm.work);
    if (any) { /* shared: another process runs in one of those instances */
        for (size_t k = 0; k < d->nproc; k++)
            *shared |= !has(user, e[k].pid) && e[k].gi != NVML_NO_INSTANCE && gi_in(nv, n, e[k].gi);
        return true;
    }
    /* the whole device: shared when the tree's share of it is below 1 */
    if (!work_add_known(sum, &d->gpm.work))
        return false;
    *shared |= !(nv->seen[i].share >= 1.0);
    return true;
}

/* rt_pid_in_tree for one process (user: its pid). */
static bool is_pid(void *user, int64_t pid)
{
    return *(const int64_t *)user == pid;
}

bool rt_nvml_pid_vram(rt_nvml *nv, size_t i, int64_t pid, uint64_t *vram_bytes)
{
    const nvml_dev *d = &nv->w->dev[i];
    bool present;
    return tree_vram(nv, d, is_pid, &pid, vram_bytes, &present) && d->lists_ok;
}

void rt_nvml_close(rt_nvml *nv)
{
    if (!nv)
        return;
    stop_worker(nv);
    for (size_t i = 0; nv->seen && i < nv->ndev; i++)
        rt_free_all(nv->seen[i].mig, nv->seen[i].mig_ptrs);
    free(nv->seen);
    free(nv->pids);
    free(nv->best);
    free(nv->acct);
    free(nv);
}
