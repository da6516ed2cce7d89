/* nvml_int.h - the NVML module's internals shared by its three files: the NVML ABI it uses, the
 * resolved entry points, a GPU's state and the worker's (nvml.c: loading, the caller's side and
 * the API; nvml_worker.c: the worker thread). Not public: nvml.h is the module's interface. */
#ifndef RT_NVML_INT_H
#define RT_NVML_INT_H

#include <pthread.h>
#include <sys/types.h>

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
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 }; /* nvmlEnableState_t */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PERF_POLICY_POWER = 0, NVML_PERF_POLICY_THERMAL = 1 }; /* nvmlPerfPolicyType_t */
/* nvmlClocksThrottleReasons (nvmlClocksEventReasons since R535): the clocks held down by the
 * power cap (software power scaling, the hardware power brake) and by heat (software and
 * hardware thermal slowdown). HwSlowdown (0x8) alone is left out: NVML says it may be heat,
 * the power brake, a power draw too high or a clock change; drivers that know which set 0x40
 * or 0x80 beside it. */
#define NVML_REASONS_POWER (0x4ull | 0x80ull)    /* SwPowerCap | HwPowerBrakeSlowdown */
#define NVML_REASONS_THERMAL (0x20ull | 0x40ull) /* SwThermalSlowdown | HwThermalSlowdown */
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

typedef struct { /* nvmlAccountingStats_t: one process's life on a GPU, while accounting mode is on */
    unsigned int gpu_utilization, memory_utilization;
    unsigned long long max_memory_usage; /* bytes; NVML_VALUE_NOT_AVAILABLE when unsupported */
    unsigned long long time_ms, start_time_us; /* start: CPU timestamp in microseconds */
    unsigned int is_running;
    unsigned int reserved[5];
} nvml_acct_stats;
_Static_assert(sizeof(nvml_acct_stats) == 56, "nvmlAccountingStats_t is 56 bytes");

typedef struct { /* nvmlViolationTime_t */
    unsigned long long reference_time; /* CPU timestamp, microseconds */
    unsigned long long violation_time; /* nanoseconds */
} nvml_violation;

/* GPU performance monitoring (GPM: Hopper and newer, driver 520 and newer): two samples of a
 * GPU's (or a MIG instance's) counters, and the metrics between them. */
typedef struct nvml_gpm_sample_st *nvml_gpm_sample;
typedef struct { /* nvmlGpmSupport_t */
    unsigned int version; /* NVML_GPM_SUPPORT_VERSION */
    unsigned int is_supported;
} nvml_gpm_support;
#define NVML_GPM_SUPPORT_VERSION 1
typedef struct { /* nvmlGpmMetric_t */
    unsigned int id;
    nvml_ret rc;
    double value;
    struct {
        char *short_name, *long_name, *unit;
    } info;
} nvml_gpm_metric;
_Static_assert(sizeof(nvml_gpm_metric) == 40, "nvmlGpmMetric_t is 40 bytes");
/* The metrics array as the newest nvml.h sizes it (older ones: 98); NVML reads and writes
 * only the first `count`, so the larger array serves every driver. */
#define NVML_GPM_METRIC_MAX 333
typedef struct { /* nvmlGpmMetricsGet_t */
    unsigned int version; /* NVML_GPM_METRICS_GET_VERSION */
    unsigned int count;
    nvml_gpm_sample sample1, sample2;
    nvml_gpm_metric metrics[NVML_GPM_METRIC_MAX];
} nvml_gpm_get;
#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct { /* nvmlMemory_v2_t: reserved apart from used, as nvidia-smi shows them */
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvml_memory_v2;
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvml_memory_v2) | (2u << 24)))

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
    /* accounting (optional, all three or none used): the mode, the pids with data, one's stats */
    nvml_ret (*acct_mode)(nvml_device, int *);
    nvml_ret (*acct_pids)(nvml_device, unsigned int *, unsigned int *);
    nvml_ret (*acct_stats)(nvml_device, unsigned int, nvml_acct_stats *);
    /* energy and throttling (optional, each on its own; 0.15) */
    nvml_ret (*energy)(nvml_device, unsigned long long *); /* mJ since the driver loaded */
    nvml_ret (*reasons)(nvml_device, unsigned long long *);
    nvml_ret (*violation)(nvml_device, int, nvml_violation *);
    /* 0.19: memory with reserved apart (optional: else memory); GPM (all six or none used);
     * MIG (all four or none used: the mode, the instances' handles and their ids) */
    nvml_ret (*memory_v2)(nvml_device, nvml_memory_v2 *);
    nvml_ret (*gpm_query)(nvml_device, nvml_gpm_support *);
    nvml_ret (*gpm_alloc)(nvml_gpm_sample *);
    nvml_ret (*gpm_free)(nvml_gpm_sample);
    nvml_ret (*gpm_get)(nvml_device, nvml_gpm_sample);
    nvml_ret (*gpm_mig_get)(nvml_device, unsigned int, nvml_gpm_sample);
    nvml_ret (*gpm_metrics)(nvml_gpm_get *);
    nvml_ret (*mig_mode)(nvml_device, unsigned int *, unsigned int *);
    nvml_ret (*mig_count)(nvml_device, unsigned int *);
    nvml_ret (*mig_handle)(nvml_device, unsigned int, nvml_device *);
    nvml_ret (*gpu_instance_id)(nvml_device, unsigned int *);
} nvml_api;

/* ---- the worker's state ------------------------------------------------------------------------ */

/* The kinds of reading a poll makes, each told at most once per GPU when it fails. */
enum { K_UTIL, K_MEMORY, K_TEMP, K_POWER, K_CLOCK, K_PROCS, K_PROCUTIL, K_ACCT,
       K_ENERGY, K_REASONS, K_VIOL_POWER, K_VIOL_THERMAL, K_GPM, K_N };
#define RC_NOT_CALLED (-1) /* the entry point is missing, or the GPU was lost before the call */

/* The tree's share of SM time that a GPU's per-process samples can give; TU_DEVICE: not asked
 * (the tree's processes were the only ones on the GPU: the device's utilization is theirs). */
enum { TU_UNKNOWN, TU_NONE, TU_SAMPLES, TU_DEVICE };

/* One entry of a process list or of the per-process samples: a pid with its VRAM or SM %, and
 * (process lists of a GPU in MIG mode) the GPU instance it runs in, NVML_NO_INSTANCE else. */
typedef struct nvml_pid_val {
    unsigned int pid;
    unsigned int gi;
    unsigned long long val;
} nvml_pid_val;
#define NVML_NO_INSTANCE 0xFFFFFFFFu

/* Two GPM samples of a GPU or a MIG instance taken in turn (s[cur] the latest), and the work
 * between the last two (NaN where not offered; rc: the metrics call's answer). */
typedef struct nvml_gpm_pair {
    nvml_gpm_sample s[2];
    int cur;   /* the sample the next reading fills */
    bool have; /* s[1 - cur] holds a reading */
    rt_gpu_work work;
} nvml_gpm_pair;

/* A MIG GPU instance: its id, its MIG device's UUID (owned) and its GPM samples. */
typedef struct nvml_mig {
    unsigned int gi;
    char *uuid;
    nvml_gpm_pair gpm;
} nvml_mig;

/* A GPU. facts are written at discovery only; the rest by the worker during a request and read
 * by the caller only between requests. */
typedef struct nvml_dev {
    rt_gpu_facts facts;
    nvml_device h;
    bool lost;
    unsigned long long util_seen_us; /* newest per-process sample already counted */
    /* set by the caller before a request: ask for the per-process samples at this poll (else
     * the samples up to now are passed over: the next ask counts from here) */
    bool want_procutil;
    bool viol_known;  /* a violation counter answered once: the throttle reasons are not needed */
    bool acct_mode_on, acct_mode_known; /* its accounting mode at the last poll that read it */
    /* the latest poll: each kind's answer, and the readings of those that succeeded */
    nvml_ret rc[K_N];
    unsigned int util, temp, power_mw, clock_mhz;
    nvml_memory mem;
    unsigned long long mem_reserved; /* NVML_VALUE_NOT_AVAILABLE: no v2 reading (mem.used has it) */
    /* GPM: whether the GPU offers it (found at discovery), its samples and work; its MIG
     * instances (found at discovery when the GPU was in MIG mode), each with its own */
    bool gpm_on;
    nvml_gpm_pair gpm;
    nvml_mig *mig;
    size_t nmig;
    unsigned long long energy_mj, reasons;
    nvml_violation viol[2]; /* NVML_PERF_POLICY_POWER, NVML_PERF_POLICY_THERMAL */
    /* the latest process lists: entries [proc_off, proc_off + nproc) of the worker's procs,
     * the per-process samples [util_off, util_off + nutil) of its utils */
    size_t proc_off, nproc, util_off, nutil;
    bool lists_ok;
    int tree_util; /* TU_* */
    /* accounting at the latest lists: whether its mode is on, and then the pids it has data
     * for (running or ended), entries [acct_off, acct_off + nacct) of the worker's acct_pids */
    bool acct_on;
    size_t acct_off, nacct;
} nvml_dev;

/* One process's accounting stats asked of the worker: pid set by the caller, the rest by the
 * worker (rc: NVML's answer, RC_NOT_CALLED when the GPU was lost before the call). */
typedef struct nvml_acct_ask {
    unsigned int pid;
    nvml_ret rc;
    nvml_acct_stats st;
} nvml_acct_ask;

enum { JOB_INIT = 1, JOB_POLL, JOB_TREE, JOB_ACCT, JOB_SHUTDOWN };

/* The worker thread and all that NVML touches. Left behind, never freed, when a request misses
 * its deadline: the stuck call may return at any time and write here. */
typedef struct nvml_worker {
    pthread_mutex_t mu;
    pthread_cond_t ask_cv, done_cv; /* done_cv on CLOCK_MONOTONIC */
    pthread_t thread;
    pid_t owner; /* the process that started the thread (a forked child has none) */
    rt_clock *clock; /* the deadlines' (NULL: the real one); set before the thread starts */
    /* under mu: the request, its sequence numbers, and whether the caller gave up on it */
    unsigned long long asked, done;
    int job;
    bool job_tree, abandoned;
    bool job_counters; /* JOB_POLL, JOB_TREE: read the cumulative counters (energy, violation time)
                        * and the accounting mode at this poll */
    /* the worker's own during a request; read by the caller only between requests */
    void *dl;
    nvml_api api;
    nvml_ret init_rc, count_rc;
    bool started; /* nvmlInit succeeded */
    unsigned long long start_us; /* the wall clock (microseconds since the epoch) at discovery */
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
    unsigned int *acct_pids; /* every GPU's accounting pids of the latest poll, the same way */
    size_t nacct_pids, acct_pids_cap;
    /* JOB_ACCT: the stats of acct_ask[0..nacct_ask) on GPU acct_dev (written by the caller
     * between requests, the answers by the worker) */
    nvml_acct_ask *acct_ask;
    size_t nacct_ask, acct_ask_cap, acct_dev;
    nvml_gpm_get *gpm_get; /* the metrics request, allocated with the first GPU that has GPM */
    struct nvml_worker *next_left; /* in left_behind */
} nvml_worker;

/* ---- nvml_worker.c: the worker's life ---------------------------------------------------------- */

/* Starts w's thread with every signal blocked in it (signals are the caller's business).
 * Returns 0, or an errno value. */
int rt_nvw_start(nvml_worker *w);

/* Frees w and unloads the library (left loaded in a forked child: its destructors would touch
 * the parent's driver files): only when its thread has ended or does not exist (never after a
 * missed deadline). NVML is not called. */
void rt_nvw_free(nvml_worker *w);

/* Leaves w behind after a missed deadline: its thread is detached (nothing waits on it again)
 * and w kept reachable, never freed, since the stuck call may return at any time and write there;
 * counted for rt_nvml_wait_left_behind (nvml.h), which nvml_worker.c defines. */
void rt_nvw_leave_behind(nvml_worker *w);

#endif
