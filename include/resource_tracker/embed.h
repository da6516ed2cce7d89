/* resource_tracker/embed.h - embedding: a background tracker, its columns, saving and loading
 * (rt_tracker). Part of the public C API of libresource-tracker; include <resource_tracker.h>,
 * which includes
 * every part. */
#ifndef RESOURCE_TRACKER_EMBED_H
#define RESOURCE_TRACKER_EMBED_H

#include "analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Embedding: a background tracker on a thread of the calling program, for a process
 * tree (the calling process by default) and the machine. It samples on a monotonic grid,
 * keeps the samples for reading while it runs (a bounded store), and feeds every sample to
 * the statistics, the allocation guess and the report of the analysis section, so that a
 * summary, a recommendation and a report come from the same code as the tool's. No process
 * is started. After fork(2) the child holds a stopped copy: its tracker has no thread, keeps
 * the samples taken before the fork, and every call on it is safe (stop does nothing).
 *
 * Memory: about 350 bytes per kept sample (352 measured on a 24 GiB machine; at least 344, at
 * most 548 when every exact figure needs a double), in blocks of 4,096 samples allocated as
 * the run grows, plus a fixed ~1.2 MiB (the statistics' histograms and the report's reduced
 * series). Figures are kept as floats where 24 bits are enough (ratios, counts, seconds in
 * the interval, pressure percents) and exactly (as doubles, or floats when the value is
 * exactly one) for times, bytes, MiB, pid, the CPU total and the cgroup's counters and limits.
 * The store keeps at least max_samples samples (default 604,800: a week at 1 s, about 215 MB)
 * and at most max_samples rounded up to whole blocks plus one block (610,304 for the
 * default); past that the oldest block is dropped (reused),
 * while the statistics and the report keep covering every sample. Blocks hold
 * min(4096, max_samples) samples each; a huge max_samples reserves nothing up front (the
 * blocks and their index grow with the run).
 * Thread safety: every rt_tracker_* call may be made from any thread, concurrently with the
 * tracker's own thread and with each other, but rt_tracker_free must be the last call on a
 * tracker: it waits out callers blocked in rt_tracker_wait or rt_tracker_stop, and no other
 * call may be in progress or follow. rt_tracker_report and rt_tracker_save hold the tracker's
 * lock only briefly (save: 1,024 samples at a time), the report for the whole write to fd.
 * Fork: the callbacks (log, on_sample) run on the tracker's thread; one that forks gets a
 * child whose only thread is inside the tracker: that child must exec or _exit before the
 * callback returns. The log callback runs while a sample is being taken, which fork(2) in
 * another thread waits for: it must not call rt_tracker_* (of any tracker), or a fork at that
 * moment deadlocks. */
typedef struct rt_tracker rt_tracker;

/* Called on the tracker's thread after each sample is stored (no lock held). The sample is
 * valid during the call only. Other rt_tracker_* calls work from it; rt_tracker_stop returns
 * RT_ERR_INVALID there, and it must not call rt_tracker_free. */
typedef void (*rt_sample_fn)(void *user, const rt_sample *sample);

typedef struct rt_tracker_options {
    size_t struct_size;       /* sizeof(rt_tracker_options) as the caller compiled it */
    int64_t pid;              /* the tree's root: 0 the calling process, -1 none (the machine
                               * only), else that process (it must exist) */
    int no_children;          /* non-zero: the root alone (rt_sampler_options.root_only) */
    double interval_secs;     /* 0: 1 s; from 0.01 to 86400 */
    uint64_t max_samples;     /* samples kept for reading; 0: 604,800 (a week at 1 s); from 2 */
    const char *proc_root;    /* NULL: /proc */
    const char *sys_root;     /* NULL: /sys */
    const char *nvml_library; /* NULL: libnvidia-ml.so.1 */
    double pss_max_age_secs;  /* as in rt_sampler_options; 0: re-read every sample */
    const rt_job *job;        /* NULL: none; copied with its strings (the report's title) */
    rt_log_fn log;            /* NULL: messages are dropped; called from the tracker's thread
                               * (no lock held: it may call rt_tracker_* but rt_tracker_free),
                               * and from rt_tracker_start's and rt_tracker_save's caller */
    void *log_user;
    rt_sample_fn on_sample;   /* NULL: none */
    void *on_sample_user;
    /* how the summary's usage (rt_usage) counts: see rt_usage_options */
    double expected_cores;        /* 0: all cores */
    const char *const *gpu_uuids; /* copied; the GPUs whose utilization counts */
    size_t gpu_uuid_count;        /* 0: all */
    /* phases (rt_tracker_phase_start/stop) */
    double phase_check_secs; /* how often the thread takes the queued marks (with one reading of
                              * the tree for them all) once the run has had a mark: 0 gives
                              * 0.01 s; up to 86400. A run without marks keeps its wait: its first
                              * mark is taken at the next sample at the latest */
} rt_tracker_options;

#define RT_TRACKER_OPTIONS_INIT {.struct_size = sizeof(rt_tracker_options), .pss_max_age_secs = 30.0}

/* Takes the baseline reading on the calling thread and starts the tracker's thread; the
 * first sample comes one interval later, then one per interval on the same grid of
 * CLOCK_MONOTONIC (a late sample does not shift the ones after it; ticks missed while one ran
 * late are skipped, and RT_COL_INTERVAL says how long each sample covers); timestamps are the
 * real-time clock's, so a clock step shows in them but not in the grid. opts NULL: the
 * defaults. Returns RT_OK and *out (free with rt_tracker_free); RT_ERR_INVALID (out NULL, an
 * option out of range, struct_size smaller than a size_t);
 * RT_ERR_NOT_FOUND (the pid does not exist, or no proc root); RT_ERR_SYSTEM (no thread);
 * RT_ERR_NOMEM. */
RT_API rt_error rt_tracker_start(const rt_tracker_options *opts, rt_tracker **out);

/* Stops the thread after one last sample covering the time since the previous one (when at
 * least 10 ms passed, or phase marks wait for a sample), so that the totals reach the moment
 * of the call. Returns at once when
 * already stopped (or a loaded or forked copy); a second caller while one stops waits until
 * the thread ended. RT_OK; RT_ERR_INVALID for NULL or when called on the tracker's own thread
 * (from a callback). */
RT_API rt_error rt_tracker_stop(rt_tracker *t);

/* 1 while the thread runs, 0 after rt_tracker_stop, for a loaded tracker and in a forked
 * child. The thread runs until stopped, also after the tracked root exited (RT_COL_PROC_ALIVE
 * says so): the machine is still sampled. */
RT_API int rt_tracker_running(const rt_tracker *t);

/* Samples taken in all (kept or dropped), and the index of the oldest one kept: indexes run
 * from rt_tracker_first to rt_tracker_count - 1. */
RT_API uint64_t rt_tracker_count(const rt_tracker *t);
RT_API uint64_t rt_tracker_first(const rt_tracker *t);

/* Waits until at least n samples were taken in all, the tracker stopped, or timeout_secs
 * passed (0: just look; negative: no limit). Returns rt_tracker_count. */
RT_API uint64_t rt_tracker_wait(rt_tracker *t, uint64_t n, double timeout_secs);

/* The columns of the store, each one figure of every sample (a double; NaN is null). The
 * numbers never change; new columns are only added at the end. */
typedef enum rt_column {
    RT_COL_TIMESTAMP = 0,        /* Unix time of the reading */
    RT_COL_INTERVAL = 1,         /* seconds since the previous reading */
    /* the machine */
    RT_COL_CPU_RUNNABLE = 2,     /* runnable processes (procs_running) */
    RT_COL_CPU_UTIME = 3,        /* user+nice CPU seconds in the interval, all cores */
    RT_COL_CPU_STIME = 4,        /* system CPU seconds in the interval */
    RT_COL_CPU_CORES = 5,        /* busy cores, fractional */
    RT_COL_CPU_COUNT = 6,        /* online cores */
    RT_COL_MEM_TOTAL_MIB = 7,
    RT_COL_MEM_FREE_MIB = 8,
    RT_COL_MEM_USED_MIB = 9,
    RT_COL_MEM_BUFFERS_MIB = 10,
    RT_COL_MEM_CACHED_MIB = 11,
    RT_COL_MEM_ACTIVE_MIB = 12,
    RT_COL_MEM_INACTIVE_MIB = 13,
    RT_COL_MEM_AVAILABLE_MIB = 14,
    RT_COL_SWAP_USED_MIB = 15,
    RT_COL_DISK_READ_BYTES = 16,  /* in the interval, all physical disks */
    RT_COL_DISK_WRITE_BYTES = 17,
    RT_COL_DISK_SPACE_TOTAL_BYTES = 18,
    RT_COL_DISK_SPACE_USED_BYTES = 19,
    RT_COL_DISK_SPACE_FREE_BYTES = 20,
    RT_COL_NET_RECV_BYTES = 21,   /* in the interval, all interfaces but loopback */
    RT_COL_NET_SENT_BYTES = 22,
    RT_COL_GPU_USAGE = 23,        /* busy GPUs: the sum of utilizations / 100 */
    RT_COL_GPU_VRAM_MIB = 24,
    RT_COL_GPU_UTILIZED = 25,     /* GPUs with utilization > 0 */
    RT_COL_GPU_COUNT = 26,
    RT_COL_GPU_VRAM_TOTAL_MIB = 27,
    /* the tracked tree: NaN without one */
    RT_COL_PROC_PID = 28,
    RT_COL_PROC_ALIVE = 29,       /* 1 while the root runs, 0 after */
    RT_COL_PROC_CHILDREN = 30,    /* live descendants */
    RT_COL_PROC_THREADS = 31,
    RT_COL_PROC_UTIME = 32,       /* CPU seconds in the interval */
    RT_COL_PROC_STIME = 33,
    RT_COL_PROC_CORES = 34,
    RT_COL_PROC_CPU_SECS_TOTAL = 35, /* user+system since tracking began (exact) */
    RT_COL_PROC_PSS_MIB = 36,
    RT_COL_PROC_RSS_MIB = 37,
    RT_COL_PROC_RSS_PEAK_MIB = 38,
    RT_COL_PROC_SWAP_MIB = 39,
    RT_COL_PROC_READ_BYTES = 40,  /* storage I/O in the interval */
    RT_COL_PROC_WRITE_BYTES = 41,
    RT_COL_PROC_GPU_USAGE = 42,
    RT_COL_PROC_GPU_VRAM_MIB = 43,
    RT_COL_PROC_GPU_UTILIZED = 44,
    /* the tree's cgroup (NaN without one; see rt_record), then the pressure in
     * the interval, percent: the group's where it has it, else the machine's (NaN without PSI) */
    RT_COL_PROC_MEMORY_PEAK_MIB = 45,        /* the kernel's peak charge of the group */
    RT_COL_CGROUP_OOM_KILLS = 46,            /* since tracking began */
    RT_COL_CGROUP_MEMORY_LIMIT_MIB = 47,     /* NaN: no limit */
    RT_COL_CGROUP_MEMORY_HIGH_MIB = 48,
    RT_COL_CGROUP_CPU_QUOTA_CORES = 49,      /* NaN: no quota */
    RT_COL_CGROUP_CPU_PERIODS = 50,          /* quota periods since tracking began */
    RT_COL_CGROUP_CPU_THROTTLED_PERIODS = 51,
    RT_COL_CGROUP_CPU_THROTTLED_SECS = 52,   /* since tracking began */
    RT_COL_CGROUP_PIDS_PEAK = 53,
    RT_COL_CGROUP_PIDS_LIMIT = 54,
    RT_COL_PRESSURE_CPU_SOME_PCT = 55,
    RT_COL_PRESSURE_MEMORY_SOME_PCT = 56,
    RT_COL_PRESSURE_MEMORY_FULL_PCT = 57,
    RT_COL_PRESSURE_IO_SOME_PCT = 58,
    RT_COL_PRESSURE_IO_FULL_PCT = 59,
    /* gpu_tracker's split of the tree (rt_process_part; NaN without a tree):
     * per part its total, private and shared RSS (MiB), cores, threads and VRAM (MiB) */
    RT_COL_MAIN_TOTAL_RSS_MIB = 60,
    RT_COL_MAIN_PRIVATE_RSS_MIB = 61,
    RT_COL_MAIN_SHARED_RSS_MIB = 62,
    RT_COL_MAIN_CORES = 63,
    RT_COL_MAIN_THREADS = 64,
    RT_COL_MAIN_GPU_VRAM_MIB = 65,
    RT_COL_DESC_TOTAL_RSS_MIB = 66,
    RT_COL_DESC_PRIVATE_RSS_MIB = 67,
    RT_COL_DESC_SHARED_RSS_MIB = 68,
    RT_COL_DESC_CORES = 69,
    RT_COL_DESC_THREADS = 70,
    RT_COL_DESC_GPU_VRAM_MIB = 71,
    RT_COL_COMB_TOTAL_RSS_MIB = 72,
    RT_COL_COMB_PRIVATE_RSS_MIB = 73,
    RT_COL_COMB_SHARED_RSS_MIB = 74,
    RT_COL_COMB_CORES = 75,
    RT_COL_COMB_THREADS = 76,
    RT_COL_COMB_GPU_VRAM_MIB = 77,
    /* what the memory need and the notes are made from (see rt_record) */
    RT_COL_PROC_RSS_HWM_MIB = 78,               /* the highest peak RSS of one process (kernel) */
    RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB = 79,    /* the job group's, when it holds only the tree */
    RT_COL_PROC_GPU_VRAM_PEAK_MIB = 80,         /* NVML accounting's VRAM peak */
    RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL = 81, /* since tracking began */
    RT_COL_PROC_CGROUP_EXCLUSIVE = 82,          /* 1: the group holds only the tree; 0: others too */
    RT_COL_CGROUP_PIDS = 83,                    /* tasks in the group now */
    /* rt_record's energy figures ("Energy and carbon") */
    RT_COL_ENERGY_JOULES = 84,                  /* the machine's, in the interval */
    RT_COL_PROC_ENERGY_JOULES = 85,             /* the tree's share, in the interval */
    RT_COL_ENERGY_METHOD = 86,                  /* of the machine's: 1 measured, 2 sampled,
                                                 * 3 estimated; NaN: no figure */
    RT_COL_PROC_ENERGY_METHOD = 87,             /* of the tree's, the same way */
    RT_COL_IDLE_POWER_WATTS = 88,               /* the machine's floor so far */
    RT_COL_GPU_POWER_THROTTLED_SECS = 89,       /* since tracking began, over the GPUs */
    RT_COL_GPU_THERMAL_THROTTLED_SECS = 90,
    RT_COL_PROC_VMS_MIB = 91,                   /* the tree's virtual memory now (rt_process.vms_mib) */
    RT_COL_PROC_WALK_AGE_SECS = 92, /* how old the walk's own figures are (rt_process.walk_age_secs) */
    RT_COL_PROC_RSS_HWM_TREE_MIB = 93, /* the processes' peaks at once (rt_process.rss_hwm_tree_mib) */
    RT_COL_PROC_UNRECLAIMABLE_UNSURE_MIB = 94, /* the safe side's part of the unreclaimable peak */
    RT_COL_PRESSURE_GROUP = 95,        /* 1: the pressure columns are the group's, 0: the machine's */
    /* 0.19: the work of the job's GPUs (the machine's without a tree; NVML GPM), percent */
    RT_COL_GPU_SM_ACTIVE_PCT = 96,
    RT_COL_GPU_SM_OCCUPANCY_PCT = 97,
    RT_COL_GPU_TENSOR_ACTIVE_PCT = 98,
    RT_COL_GPU_DRAM_ACTIVE_PCT = 99,
    RT_COL_GPU_FP64_ACTIVE_PCT = 100,
    RT_COL_GPU_FP32_ACTIVE_PCT = 101,
    RT_COL_GPU_FP16_ACTIVE_PCT = 102,
    RT_COL_GPU_PCIE_BYTES_PER_SEC = 103,   /* both directions */
    RT_COL_GPU_NVLINK_BYTES_PER_SEC = 104, /* both directions, all links */
    RT_COL_GPU_WORK_SHARED = 105,          /* 1: the figures are the devices', shared with other
                                            * processes; 0: the job's alone; NaN */
    RT_COL_PROC_GPUS_BUSY = 106,           /* GPUs the tree kept busy (rt_process.gpu_count_busy) */
    RT_COL_PROC_GPU_VRAM_PER_GPU_MIB = 107, /* the most VRAM the tree held on one GPU */
    RT_COL_PROC_CPU_WAIT_CORES = 108,      /* 0.20: the tree's tasks waiting for a CPU */
    /* 0.20: file data the tree's group read back after its memory evicted it, since tracking
     * began (rt_cgroup.memory_refault_mib) */
    RT_COL_CGROUP_MEMORY_REFAULT_MIB = 109,
    RT_COL_PROC_EXITS_COUNTED = 110,        /* the tree's processes whose end the kernel told
                                             * (rt_process.exits_counted) */
    RT_COL_PROC_UNWAITED_PARENTS = 111,     /* the tree's processes seen ignoring SIGCHLD
                                             * (rt_process.unwaited_parents) */
    RT_COL_CLOCK_STEP_SECS = 112,           /* 0.21: the wall clock's step (rt_sample.clock_step_secs) */
    RT_COL_SAMPLING_GAP_SECS = 113,         /* 0.21: a gap in the sampling (rt_sample.sampling_gap_secs) */
} rt_column;

/* How many columns this library has (columns 0 .. n-1), a column's name ("timestamp",
 * "cpu_cores", "process_pss_mib", ...: the snapshot's key, static storage; NULL past the
 * end), and the column of a name (-1 when unknown). */
RT_API int rt_column_count(void);
RT_API const char *rt_column_name(int col);
RT_API int rt_column_by_name(const char *name);

/* Copies column col of up to n samples, from index first on, into out. Returns how many were
 * copied (0 when first is past the end or was dropped, or col is unknown). Figures kept as
 * floats (see Memory above) come back as the float's value; beyond a float's range, infinite. */
RT_API size_t rt_tracker_column(rt_tracker *t, int col, uint64_t first, size_t n, double *out);

/* The record (the analysis figures) of sample index into out, of which the caller has
 * out_size bytes (sizeof(rt_record) as it compiled it; the library fills no more).
 * RT_OK, RT_ERR_NOT_FOUND (dropped or not yet taken), RT_ERR_INVALID. job_name is the
 * tracker's job name (valid until rt_tracker_free) or NULL. */
RT_API rt_error rt_tracker_record(rt_tracker *t, uint64_t index, rt_record *out, size_t out_size);

/* The statistics of every sample so far: a copy owned by the tracker, valid until the next
 * rt_tracker_summary call or rt_tracker_free (samples 0 before the first sample). */
RT_API const rt_summary *rt_tracker_summary(rt_tracker *t);

/* rt_recommend over this run. RT_OK, RT_ERR_INVALID without a tracked tree or samples. */
RT_API rt_error rt_tracker_recommend(rt_tracker *t, rt_recommendation *out);

/* Writes the report of the run so far to fd (see rt_report_write). info may be NULL; its
 * summary, recommendation and job, when NULL, are the tracker's own. */
RT_API rt_error rt_tracker_report(rt_tracker *t, const rt_report_info *info, int fd);
/* The same to write(user, ...) (see rt_report_write_cb). write runs with the tracker's
 * lock held: it must not call rt_tracker_* on t. */
RT_API rt_error rt_tracker_report_cb(rt_tracker *t, const rt_report_info *info, rt_write_fn write, void *user);

/* ---- saving and loading a run ----------------------------------------------------------
 * The snapshot layout of the Python resource-tracker 0.4 (its ResourceTracker.snapshot,
 * metadata.version 1; docs/contracts.md §12), as JSON:
 *   {"metadata": {"version": 1, "resource_tracker": {"version", "implementation"}, "pid",
 *    "children", "interval", "start_time", "stop_time", "duration", ...},
 *    "server_info": ..., "cloud_info": ..., "process_metrics": [{row}, ...],
 *    "system_metrics": [{row}, ...], "columns": {"<rt_column_name>": [...], ...}}
 * process_metrics and system_metrics hold the Python tracker's columns and units (kB, GiB,
 * seconds in the interval), so that its ResourceTracker.load reads the file; "columns" holds
 * every column of the store at full precision (NaN as null), which is what rt_tracker_load
 * reads back when present (else the Python tracker's rows, converted). */

#define RT_SAVE_GZIP 1 /* gzip the JSON (the Python tracker's dump/load format) */
#define RT_SAVE_PY05 2 /* the rows with the Python tracker 0.5's names and units (memory_mib
                        * and memory_*_mib in MiB, disk_read_bytes / disk_write_bytes for the
                        * process, gpu_vram_mib, disk_space_*_gb in GB of 1000**3 bytes) */

/* Writes the kept samples to fd. extra_json, when not NULL, is a JSON object whose members
 * are added at the top level (e.g. "server_info", "cloud_info"), its "metadata" member's
 * members merged into the metadata. The samples are copied 1,024 at a time (the store keeps
 * every one of them until the save ends, even past max_samples); beside the store, save needs
 * ~0.5 MiB, plus the compressed file when gzipped (built in memory, written at the end). A
 * week at 1 s (604,800 samples): ~625 MB of JSON, ~29 MB gzipped. Returns RT_OK,
 * RT_ERR_INVALID (t NULL, fd negative, unknown flags, extra_json no JSON object),
 * RT_ERR_UNSUPPORTED (gzip asked and no zlib), RT_ERR_IO (errno set), RT_ERR_NOMEM. */
RT_API rt_error rt_tracker_save(rt_tracker *t, const char *extra_json, int flags, int fd);
/* The same to write(user, ...), in pieces; extra_json that is no JSON object is the
 * last error (and so for rt_tracker_save). The tracker's lock is not held during write. */
RT_API rt_error rt_tracker_save_cb(rt_tracker *t, const char *extra_json, int flags, rt_write_fn write,
                                   void *user);

/* A stopped tracker holding the samples of a snapshot (gzipped or not: recognised by its
 * first bytes), with its statistics, recommendation and report as for a live run. Bounds
 * (RT_ERR_PARSE past them, docs/contracts.md §12): at most 2 GiB of JSON, plain or
 * gunzipped (a file is gunzipped as a stream, never held), and past 64 MiB no more than 256
 * times the gzip (a gzip bomb); at most 1,209,600 samples; at most 64 MiB besides the samples.
 * "columns" and the Python tracker's rows are read by a scanner, the rest by jansson (peak
 * memory: the JSON text, plus ~1.3 KB a sample while loading, then the store; a week at 1 s:
 * ~1.3 GB in all). Returns RT_OK and *out; RT_ERR_INVALID
 * (path/out NULL, buf NULL with len); RT_ERR_NOT_FOUND / RT_ERR_IO (the file; errno set);
 * RT_ERR_PARSE (not a snapshot: the log, when given, says why, and so does the last error);
 * RT_ERR_UNSUPPORTED (gzipped, and zlib could not be loaded); RT_ERR_NOMEM. `_load`, not
 * `_new`: it reads a saved file back. */
RT_API rt_error rt_tracker_load(const char *path, rt_log_fn log, void *log_user, rt_tracker **out);
RT_API rt_error rt_tracker_load_buffer(const void *buf, size_t len, rt_log_fn log, void *log_user,
                                       rt_tracker **out);

/* For a loaded tracker: {"metadata": ..., "server_info": ..., "cloud_info": ...} as the file
 * had them (JSON text, valid until rt_tracker_free). NULL for a live tracker. */
RT_API const char *rt_tracker_saved_info(const rt_tracker *t);

/* Stops the tracker (as rt_tracker_stop) and frees it. NULL is allowed. */
RT_API void rt_tracker_free(rt_tracker *t);

#ifdef __cplusplus
}
#endif
#endif
