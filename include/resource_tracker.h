/* resource_tracker.h - the public C API of libresource-tracker.
 * Samples CPU, memory, disk, network and GPUs of a Linux machine and of a process tree, and
 * formats each sample as a JSON line or a CSV row. The resource-tracker tool uses only this.
 *
 * Contents (the sections below, in order; search for the heading's words):
 *   Versions, errors, the last error message, logging, deprecation ...... stable
 *   Missing values ........................................................ stable
 *   One sample (rt_sample and the structs it points to) ................... stable
 *   The sample's schema (rt_schema_field_*) ........................ EXPERIMENTAL
 *   The sampler ........................................................... stable
 *   Counters read now: a process tree's and the machine's (rt_counters) .... stable
 *   A cgroup of the job's own ............................................. stable
 *   The host and the cloud it runs in (rt_host, rt_allocation, rt_cloud) .. stable
 *   Job metadata (rt_job) ................................................. stable
 *   Output: the writer (JSON lines, CSV) .................................. stable
 *   Analysis of a run: records, the reader, statistics, needs, the
 *     gpu_tracker view, recommendations, notes, Keeper, the HTML report ... stable
 *   A run for people (the text summary), any recorded run read back ....... stable
 *   Streaming a run to the Sentinel API and S3 ............................ stable
 *   Embedding: a background tracker, its columns, saving and loading ...... stable
 *   Export: Prometheus /metrics, node_exporter textfile, OTLP/HTTP ........ stable
 *   Sinks and the pipeline: where samples go, one fan-out ........... EXPERIMENTAL
 *   Phases of a job: named stretches marked by the job ............... EXPERIMENTAL
 *   Energy and carbon: measured, sampled or estimated, and the job's share  EXPERIMENTAL
 *   Where the job runs: SLURM, Kubernetes, GitHub Actions (rt_place) .. EXPERIMENTAL
 *     (rt_request, which samples and summaries point to, is stable)
 *   A run's summary for CI and workflow engines (Markdown, Snakemake) . EXPERIMENTAL
 * Stable parts follow the ABI rules below. An EXPERIMENTAL part (its heading says so) may
 * change or go in a minor version (0.x to 0.x+1): a binding looks each of its symbols up at
 * load time and copes without it.
 *
 * ABI rules (what a binding compiled against an older copy of this header may rely on):
 *  - The shared library's SONAME is libresource-tracker.so.MAJOR. Within one MAJOR version the
 *    ABI only grows: functions, enum values and error codes are added, never removed, renamed
 *    or renumbered, and never change meaning. Anything else bumps MAJOR, and so the SONAME.
 *  - Structs the library fills and hands out by pointer (rt_sample and everything it points to,
 *    rt_host, rt_cloud) grow only at their end. Every struct of a sample is reached through a
 *    pointer, and its arrays are arrays of pointers, so a caller never depends on a size.
 *  - Structs the caller fills (the *_options structs, rt_job) begin with `size_t struct_size`,
 *    which the caller sets to sizeof as it was compiled (the *_INIT macros do this). The
 *    library reads only the fields within struct_size and takes the default for the rest.
 *  - Structs the library fills in the caller's memory take the caller's size: a struct_size
 *    member the caller sets (rt_recommendation, rt_server) or a size argument (rt_record:
 *    rt_record_from_sample_sized, rt_tracker_record). The library writes no byte past it. A
 *    record the caller hands in takes its size too (rt_stats_add_sized, rt_report_add_sized,
 *    rt_pipeline_add_record): the library reads no byte past it, and its newer members
 *    are null.
 *  - The library reads no environment variable: the front end (the tool, a binding) turns
 *    TRACKER_* variables into options.
 *
 * Conventions (0.10; the names from before are deprecated aliases, see the last point):
 *  - Making a handle: `rt_error rt_X_new(..., rt_X **out)` makes it on the calling thread;
 *    `rt_X_start(...)` also starts a thread of its own; `rt_X_free(x)` releases it (NULL is
 *    allowed). On an error *out is NULL. Two verbs say what the argument is, as fopen and
 *    sqlite3_open do: `rt_reader_open` reads a recorded file or buffer, `rt_tracker_load` a
 *    saved snapshot. Where the pointer-returning `_new` of an accumulator came first
 *    (rt_stats_new, rt_report_new, rt_allocation_new), the conforming form is `_new_with`,
 *    which also takes the options (NULL: the defaults).
 *  - Errors: a call that can fail returns rt_error, never -errno nor a 0 that means "failed"
 *    (the two that did, rt_job_cgroup_enter and rt_format_summary, are deprecated). Only
 *    formatters into a caller's buffer return the length needed, like snprintf, and getters
 *    NULL or -1 where their contracts say. The calls whose contract says "last error" clear
 *    the calling thread's last error message when they begin and set it when they fail
 *    (rt_last_error_message: the file and line, the option, the reason in words, as the log
 *    callback also hears it); a reader keeps its own (rt_reader_errmsg), and a handle with a
 *    thread of its own the last failure that thread met (rt_otlp_errmsg, rt_stream_errmsg,
 *    rt_prom_errmsg: sqlite3_errmsg for handles whose failures come later than any call).
 *  - Output: every call that writes to a file descriptor has a `_cb` twin that hands the
 *    bytes to an rt_write_fn instead (a binding captures output without a temporary file).
 *  - Deprecated names are marked RT_DEPRECATED: the compiler warns where they are used,
 *    unless RT_NO_DEPRECATED_WARNINGS is defined before this header is included. They stay
 *    declared and exported, behaving as before, for the rest of the MAJOR version (the ABI
 *    rules), and go with the next MAJOR. */
#ifndef RESOURCE_TRACKER_H
#define RESOURCE_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_VERSION_MAJOR 0
#define RT_VERSION_MINOR 18
#define RT_VERSION_PATCH 0
#define RT_VERSION "0.18.0"
/* 0xMMmmpp: compare with rt_version_num() to learn whether the loaded library is as new as
 * the header a binding was written for. */
#define RT_VERSION_NUM ((RT_VERSION_MAJOR << 16) | (RT_VERSION_MINOR << 8) | RT_VERSION_PATCH)

/* Symbols exported from the shared library; everything else stays internal. */
#if defined(RT_BUILDING_LIBRARY) && defined(__GNUC__)
#define RT_API __attribute__((visibility("default")))
#else
#define RT_API
#endif

/* Marks a name kept for bindings built before its replacement (see Conventions above). */
#if defined(RT_BUILDING_LIBRARY) || defined(RT_NO_DEPRECATED_WARNINGS)
#define RT_DEPRECATED(replacement)
#elif defined(__GNUC__)
#define RT_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#else
#define RT_DEPRECATED(replacement)
#endif

/* Error codes. The numbers never change; new codes are only added at the end. */
typedef enum rt_error {
    RT_OK = 0,
    RT_ERR_NOMEM = 1,       /* an allocation failed or a buffer reached its maximum */
    RT_ERR_INVALID = 2,     /* an argument is out of range or inconsistent */
    RT_ERR_IO = 3,          /* a read or write failed */
    RT_ERR_PARSE = 4,       /* a kernel file had an unexpected shape */
    RT_ERR_NOT_FOUND = 5,   /* a file, process or device does not exist */
    RT_ERR_UNSUPPORTED = 6, /* the machine lacks what the call needs */
    RT_ERR_SYSTEM = 7,      /* a system call failed; errno tells more */
    RT_ERR_DISABLED = 8,    /* the caller's options turned the feature off */
} rt_error;

/* Returns a static, never-NULL English description of err. */
RT_API const char *rt_strerror(rt_error err);

/* Returns the library version string, e.g. "0.2.0" (static storage). */
RT_API const char *rt_version(void);

/* Returns the library's RT_VERSION_NUM (the loaded library's, not the header's). */
RT_API unsigned rt_version_num(void);

/* Log levels passed to the log callback. */
typedef enum rt_log_level { RT_LOG_DEBUG = 0, RT_LOG_INFO = 1, RT_LOG_WARN = 2, RT_LOG_ERROR = 3 } rt_log_level;

/* The library never prints: it hands messages to this callback, if set. msg is valid only
 * during the call. The callback may be called from the cloud discovery's threads. */
typedef void (*rt_log_fn)(void *user, rt_log_level level, const char *msg);

/* The last error message of the calling thread (0.10; libgit2's git_error_last): what the
 * last failing call among those whose contract says "last error" could say beyond its code,
 * in one line for people ("run.jsonl:12: not a JSON object", "unknown memory unit \"mb\"").
 * Those calls clear it when they begin, so after one of them failed it is its own message, or
 * "" when it had nothing to add to rt_strerror. Never NULL; valid until the thread's next call
 * into the library. Read it only after such a call failed: other calls may leave it as it
 * was or change it. */
RT_API const char *rt_last_error_message(void);

/* Where a `_cb` output call sends its bytes (0.10), instead of a file descriptor: called on
 * the caller's thread, in order, with len > 0. Returns how many bytes of buf it took (it is
 * called again with the rest), or -1 to fail the output (errno, when set, is kept: the call
 * returns RT_ERR_IO). A return of 0 also fails it (as EIO). */
typedef long (*rt_write_fn)(void *user, const void *buf, size_t len);

/* ------------------------------------------------------------------------------------------
 * Missing values. A figure the machine cannot report is "null": NaN for doubles,
 * RT_NULL_U64 / RT_NULL_I64 for integers, NULL for strings. Never a made-up zero. */
#define RT_NULL_U64 UINT64_MAX
#define RT_NULL_I64 INT64_MIN

/* ------------------------------------------------------------------------------------------
 * One sample: plain structs reached through pointers. Everything a sample points to is owned
 * by the sampler that produced it and stays valid until the next rt_sampler_sample() call or
 * rt_sampler_free(). Each struct may gain fields at its end (see the ABI rules above). */

typedef struct rt_cpu {
    double utilization_pct;     /* busy cores, 0..core_count (fractional): the sum of
                                 * per_core_pct / 100; NaN when no core has data */
    const double *per_core_pct; /* core_count entries, 0..100 each; NaN for a core without data */
    size_t core_count;          /* online logical cores seen in this sample */
    double utime_secs;          /* user+nice CPU seconds over all cores in the interval */
    double stime_secs;          /* system CPU seconds over all cores in the interval */
    int64_t process_count;      /* runnable processes (procs_running) */
    double process_cores_used;  /* = process->cores_used; NaN without a tracked process */
    int64_t process_child_count; /* = process->child_count; RT_NULL_I64 without one */
    /* added in 0.17: every process on the machine (the numbered entries of /proc, as ps, the
     * Python tracker's `processes` column and the Rust tool's cpu.process_count count them);
     * RT_NULL_I64 when /proc cannot be listed */
    int64_t all_process_count;
} rt_cpu;

typedef struct rt_memory {
    double total_mib, free_mib, available_mib, used_mib, used_pct;
    double buffers_mib, cached_mib, active_mib, inactive_mib;
    double swap_total_mib, swap_used_mib, swap_used_pct;
} rt_memory;

typedef struct rt_net_iface {
    const char *interface;   /* e.g. "eth0" */
    const char *mac_address; /* NULL when not reported */
    const char *driver;      /* kernel driver, NULL for virtual interfaces without one */
    const char *operstate;   /* "up", "down", "unknown", ...; NULL when not reported */
    int64_t speed_mbps;      /* RT_NULL_I64 when the link reports no speed */
    int64_t mtu;             /* RT_NULL_I64 when not reported */
    double rx_bytes_per_sec, tx_bytes_per_sec;
    uint64_t rx_bytes_total, tx_bytes_total; /* since boot */
    uint64_t rx_bytes, tx_bytes;             /* in this interval */
    /* added in 0.18: the link's speed file as the kernel wrote it (-1 where the driver knows no
     * speed, which speed_mbps holds as RT_NULL_I64); RT_NULL_I64 when it cannot be read (a
     * virtual interface): the Rust tool's speed_mbps */
    int64_t speed_mbps_reported;
} rt_net_iface;

typedef struct rt_mount {
    const char *mount_point;
    const char *filesystem; /* e.g. "ext4" */
    uint64_t total_bytes, used_bytes, available_bytes; /* RT_NULL_U64 when statvfs failed */
    double used_pct; /* used / (used + available), as df computes it */
} rt_mount;

typedef struct rt_disk {
    const char *device;      /* kernel name, e.g. "nvme0n1", "sda", "vda" */
    const char *model;       /* NULL when sysfs has none */
    const char *vendor;
    const char *serial;      /* serial number or WWID */
    const char *device_type; /* "nvme", "ssd" or "hdd"; NULL when unknown */
    uint64_t capacity_bytes;
    double read_bytes_per_sec, write_bytes_per_sec;
    uint64_t read_bytes_total, write_bytes_total; /* since boot */
    uint64_t read_bytes, write_bytes;             /* in this interval */
    const rt_mount *const *mounts; /* filesystems on this disk, its partitions or volumes on it */
    size_t mount_count;
    /* added in 0.17: 1 for a virtual device (device-mapper, md, zram, nbd: under sysfs's
     * devices/virtual), listed as the Rust tool lists it, with the filesystems mounted from it;
     * the machine's I/O sums (the CSV's, the summary's) leave it out, its bytes being counted
     * on the physical disks beneath it (or being memory, for zram). Also 1 for a ZFS pool,
     * "zfs:<pool>" (no I/O of its own, one mount: the pool's space). 0 for a physical disk */
    int is_virtual;
} rt_disk;

/* A key and a value, e.g. a GPU's driver facts. This pair never grows. */
typedef struct rt_kv {
    const char *key, *value;
} rt_kv;

/* One GPU: NVIDIA through NVML, AMD and Intel through sysfs. */
typedef struct rt_gpu {
    const char *uuid;        /* NULL when the driver has none */
    const char *name;        /* e.g. "NVIDIA A100-SXM4-80GB" */
    const char *device_type; /* "GPU" */
    const char *host_id;     /* PCI address, e.g. "0000:3b:00.0" */
    const rt_kv *detail;     /* driver facts: driver, driver_version, pci ids, ... */
    size_t detail_count;
    double utilization_pct;  /* 0..100 */
    uint64_t vram_total_bytes, vram_used_bytes;
    double vram_used_pct;
    double temperature_celsius, power_watts, frequency_mhz;
    int64_t core_count;      /* RT_NULL_I64 when not reported */
    /* added in 0.15 ("Energy and carbon"): the seconds since tracking began that the GPU's
     * clocks were held down by its power cap (software power cap, hardware power brake) and by
     * heat (software and hardware thermal slowdown), as DCGM's job statistics count them:
     * NVML's violation counters where the driver keeps them, else the throttle reasons seen at
     * each reading times the interval before it; NaN where the GPU reports neither (AMD,
     * Intel, an old driver). Its energy is the sample's energy domain of kind "gpu". */
    double power_throttled_secs, thermal_throttled_secs;
    /* added in 0.18: an NVIDIA GPU's index in NVML and NVML's own spelling of its PCI address
     * ("00000000:3B:00.0"; host_id is the same address in the kernel's spelling), which the
     * Rust tool shows as host_id and detail.pci_bus_id (`--format json-rs`); RT_NULL_I64 and
     * NULL for another GPU, or where NVML did not say */
    int64_t nvml_index;
    const char *nvml_bus_id;
} rt_gpu;

/* The GPUs' use by a set of processes over the interval (0.17: rt_sample.gpu_processes, every
 * process on the machine). NVIDIA: from NVML's process lists, as for a tracked tree; AMD and
 * Intel: the card's own figures (busy percent, VRAM in use). May gain fields at its end. */
typedef struct rt_gpu_use {
    double utilization_pct;   /* percent of one GPU, summed over GPUs (200: two busy GPUs); NaN
                               * when no GPU could say */
    uint64_t vram_used_bytes; /* RT_NULL_U64 when no GPU could say */
    int64_t gpu_count_used;   /* GPUs with a process on them (or busy); RT_NULL_I64 when no
                               * GPU could say */
} rt_gpu_use;

/* Pressure stall information of one resource (0.6): the share of time some (or all, "full")
 * runnable tasks waited for it. Machine-wide from /proc/pressure, per group from a cgroup v2
 * group's *.pressure files. NaN / RT_NULL_U64 where the kernel reports nothing ("full" of the
 * machine's CPU is reported by recent kernels only). This struct never grows. */
typedef struct rt_pressure {
    double some_avg10, full_avg10; /* the kernel's 10-second averages, percent */
    double some_pct, full_pct;     /* percent of this sample's interval (from the totals);
                                    * NaN for the first reading */
    uint64_t some_total_usec, full_total_usec; /* the kernel's totals, microseconds */
} rt_pressure;

/* Pressure of CPU, memory and I/O. Grows at its end. */
typedef struct rt_psi {
    rt_pressure cpu, memory, io;
} rt_psi;

/* The control group of the tracked tree (0.6): in wrapper mode the group the tracker made for
 * the command (see rt_job_cgroup_new); with a pid, the group that process lives in (a
 * container, a SLURM step, a systemd unit). Counters are since tracking began; limits are the
 * tightest of the group and its ancestors (what the kernel enforces). NaN / RT_NULL_* where the
 * layout does not offer a figure. Grows at its end. */
typedef struct rt_cgroup {
    const char *path;    /* the group's path in its hierarchy, e.g. "/resource-tracker-812-1"
                          * (the v2 path when it has one, else the memory controller's) */
    const char *version; /* "v2", "v1" or "hybrid" (v1 controllers and a v2 tree beside them) */
    int own;             /* 1: made by the tracker for the command; 0: the process's own group */
    int exclusive;       /* 1: every process in the group belongs to the tracked tree, so its
                          * counters are the tree's totals (always 1 for an own group) */
    double cpu_secs_total;     /* CPU time of everything that ran in the group (exact) */
    double memory_mib;         /* memory charged to the group now (page cache included) */
    double memory_peak_mib;    /* the kernel's peak charge (memory.peak, max_usage_in_bytes) */
    int64_t pids, pids_peak;   /* tasks now; the most (pids.peak, else the most sampled) */
    uint64_t read_bytes_total, write_bytes_total; /* storage I/O (io.stat, blkio) */
    /* limits: the tightest of the group and its ancestors */
    double cpu_quota_cores;    /* quota / period (cpu.max, cpu.cfs_quota_us); NaN: none */
    double cpu_period_secs;    /* NaN: no quota */
    double memory_limit_mib;   /* memory.max, memory.limit_in_bytes; NaN: none */
    double memory_high_mib;    /* memory.high (v2); NaN: none */
    int64_t pids_limit;        /* pids.max; RT_NULL_I64: none */
    /* what the limits did, since tracking began, and in this interval */
    uint64_t cpu_periods, cpu_throttled_periods; /* of the group that holds the quota */
    double cpu_throttled_secs;
    double cpu_throttled_pct;  /* throttled periods in this interval, percent of its periods;
                                * NaN when there were none */
    uint64_t oom_kills;        /* tasks the OOM killer killed in the group */
    uint64_t memory_max_events; /* times the group hit its memory limit (memory.events max,
                                 * memory.failcnt) */
    rt_psi pressure;           /* the group's (v2); all NaN without */
    /* added in 0.9: what of the charge the kernel could not give back (see the memory need) */
    double memory_reclaimable_mib; /* of memory_mib now, what the kernel can reclaim: page cache
                                    * on the file LRU lists and reclaimable slab (memory.stat);
                                    * NaN without memory.stat, and for a group that holds other
                                    * processes than the tree (not exclusive; the tracker's own,
                                    * sample->cgroup): no answer uses it there */
    double memory_unreclaimable_peak_mib; /* the most of the charge the kernel could not
                                    * reclaim (anonymous memory, shared memory and tmpfs,
                                    * kernel memory) since tracking began: at each reading
                                    * memory_mib - memory_reclaimable_mib, and after an interval
                                    * in which the peak charge rose (a peak since the previous
                                    * reading) that peak less the page cache at this reading
                                    * (page cache the job added after such a peak within the
                                    * same interval is taken as held at the peak). For an own
                                    * group the first interval starts at an empty group; for
                                    * another, at the first reading. NaN without memory.stat */
    /* added in 0.18: the charge by kind, from memory.stat (read again when the charge or its
     * peak moved, at least every 5 s, as memory_reclaimable_mib is; NaN without it, and for
     * a group that holds other processes than the tree's): with the group's own, they give
     * the job's memory between two walks of its processes (see rt_process.walk_age_secs) */
    double memory_anon_mib;  /* anonymous memory (v2 anon, v1 total_rss): heaps and stacks */
    double memory_file_mib;  /* the page cache (v2 file, v1 total_cache), shared memory included */
    double memory_shmem_mib; /* of memory_file_mib, shared memory: tmpfs, /dev/shm, memfd */
    /* added in 0.18 too: of memory_unreclaimable_peak_mib, what comes of taking the safe side
     * at a peak the readings could not place: the peak charge rose since the last reading to
     * above the charge now while the page cache rose too, and that cache may have come before
     * the peak or after it; it is taken as not there at the peak (between samples the sampler
     * reads the group's charge on a fast clock of its own while it moves, rt_sampler_watch, so
     * the window is tens of milliseconds there). 0 when the peak is exact; NaN as
     * memory_unreclaimable_peak_mib */
    double memory_unreclaimable_unsure_mib;
} rt_cgroup;

/* The tracked process tree: the root given with --pid or the wrapped command, every
 * descendant (found through the children of every thread), and in wrapper mode descendants
 * that daemonized and were adopted by the tracker. Totals count everything the tree used
 * since tracking began, processes that already exited included. */
/* One part of the tracked tree as gpu_tracker splits it (0.8): the root ("main"), its
 * descendants, or both ("combined"). Memory comes from the processes' smaps_rollup, re-read
 * under the PSS rule (pss_max_age_secs): private is Private_Clean + Private_Dirty, summed;
 * shared counts pages that other processes map too, each once as far as the rollups can
 * tell: the larger of the largest member's Shared_Clean + Shared_Dirty and the part's
 * proportional share of its shared pages (the sum of Pss minus private). That is exact for
 * one process (main), and for a part whose shared pages are shared only among its members or
 * all mapped by one of them; otherwise a lower bound. total = private + shared. Memory is NaN
 * when a member's rollup could not be read. Grows at its end. */
typedef struct rt_process_part {
    double total_rss_mib, private_rss_mib, shared_rss_mib;
    double cores_used;            /* CPU seconds per second over the interval: the tree's
                                   * cores_used shared out as the walk saw it grow (main: the
                                   * root's own time, not its reaped children's; descendants:
                                   * the rest); main + descendants = combined = cores_used */
    int64_t thread_count;         /* threads of the part's live processes */
    uint64_t gpu_vram_used_bytes; /* RT_NULL_U64: no GPU data */
} rt_process_part;

typedef struct rt_process {
    int64_t pid;          /* the root */
    int alive;            /* 1 while the root runs, 0 after it exited */
    int64_t child_count;  /* live descendants, the root not included */
    int64_t thread_count; /* threads of all live processes in the tree */
    double cores_used;    /* CPU seconds per second over the interval; never more than the
                           * machine's cores nor the machine's own busy cores */
    double utime_secs, stime_secs; /* CPU seconds reported for the interval */
    double cpu_secs_total;         /* user+system seconds since tracking began (exact) */
    double pss_mib, rss_mib, swap_mib; /* of the live processes (0 when none is alive) */
    double read_bytes_per_sec, write_bytes_per_sec;
    uint64_t read_bytes_total, write_bytes_total; /* storage I/O since tracking began */
    uint64_t read_bytes, write_bytes;             /* in this interval */
    double gpu_utilization_pct;   /* NaN: no GPU data */
    uint64_t gpu_vram_used_bytes; /* RT_NULL_U64: no GPU data */
    int64_t gpu_count_used;       /* RT_NULL_I64: no GPU data */
    /* added in 0.2 */
    double rss_peak_mib; /* the highest RSS the kernel has shown for the tree: the largest
                          * sampled rss_mib, and never below a reaped process's ru_maxrss */
    uint64_t cancelled_write_bytes_total; /* of write_bytes_total, bytes whose writeback was
                                           * cancelled (the file was truncated or deleted
                                           * first): they never reached storage */
    /* added in 0.6 */
    double memory_peak_mib; /* the kernel's peak memory of the job: its cgroup's peak charge
                             * (cgroup->memory_peak_mib) when the group is the job's own or
                             * holds only the tree; NaN otherwise (no cgroup, a shared one) */
    const rt_cgroup *cgroup; /* NULL without one (or with cgroup reading turned off) */
    /* added in 0.8: gpu_tracker's split (never NULL) */
    const rt_process_part *main, *descendants, *combined;
    /* added in 0.9 */
    double rss_hwm_mib; /* the highest peak RSS of any one process of the tree, the kernel's own
                         * high-water mark, so a peak between samples counts: VmHWM of the live
                         * processes (re-read when one faulted in more pages than its RSS grew),
                         * never below a sampled RSS of one of them, nor below the ru_maxrss of a
                         * process the tracker reaped (which covers every child it reaped);
                         * never decreasing */
    uint64_t gpu_vram_peak_bytes; /* the tree's VRAM peak as NVML's accounting counts it (per
                                   * GPU, the sum of its tree processes' maxMemoryUsage, kept
                                   * after they exit): RT_NULL_U64 where accounting is off */
    int64_t unread_count; /* processes the last walk found in the tree but could not open (out
                           * of file descriptors even for one file at a time, or refused): what
                           * they and their new descendants used since their last reading is
                           * missing from this sample's figures, which are then lower bounds;
                           * 0 when every process was read */
    /* added in 0.16 */
    double vms_mib; /* virtual memory of the tree's live processes summed (VmSize, the vsize of
                     * /proc/PID/stat): what Snakemake's max_vms and Nextflow's vmem count; 0
                     * when none is alive */
    /* added in 0.18: the two clocks. In a group of the job's own (wrapper mode), the CPU and
     * storage totals, the interval's cores and the group's memory come from the group's
     * counters every sample, whatever the tree's size; the walk over the tree's processes runs
     * on its own cadence (rt_sampler_options.walk_max_age_secs), and the figures only it gives
     * (pss_mib, rss_mib, swap_mib, vms_mib, rss_peak_mib, rss_hwm_mib, child_count,
     * thread_count, unread_count, the parts' memory and threads, the GPU share) are carried
     * from the last walk between two. Without such a group every sample walks. */
    double walk_age_secs;    /* how old those figures are: 0 when this sample walked */
    double walk_period_secs; /* the cadence the walk keeps now: the oldest they get before the
                              * next walk (the interval when every sample walks) */
    double rss_hwm_tree_mib; /* the most the processes alive at one walk may have held at once
                              * as their own high-water marks tell: the tree's RSS at that walk
                              * with shared pages once (the combined part) plus what each
                              * process's VmHWM stood above its RSS then, as if all of them
                              * peaked at the same moment (the safe side for processes that
                              * peak between samples; peaks at different moments make it more
                              * than the tree ever held); never below rss_hwm_mib; never
                              * decreasing. A process born and gone between two walks is not in
                              * it. Carried between walks as rss_hwm_mib is */
} rt_process;

typedef struct rt_sample {
    double timestamp_secs; /* Unix time of the reading, millisecond precision */
    double interval_secs;  /* monotonic seconds since the previous reading */
    const rt_cpu *cpu;
    const rt_memory *memory;
    const rt_net_iface *const *network; /* non-loopback interfaces */
    size_t network_count;
    const rt_disk *const *disk; /* whole disks, sorted by name (0.17: the virtual block devices
                                 * and the ZFS pools, "zfs:<pool>", too; see is_virtual) */
    size_t disk_count;
    const rt_gpu *const *gpu; /* empty without GPUs */
    size_t gpu_count;
    /* Filesystem space summed over the distinct filesystems on the physical disks, and (0.17)
     * each ZFS pool once: its size, allocated and free as `zpool list` gives them. */
    uint64_t disk_space_total_bytes, disk_space_used_bytes, disk_space_free_bytes;
    const rt_process *process; /* NULL without a tracked process */
    /* added in 0.6 */
    const rt_psi *pressure; /* the machine's pressure (/proc/pressure); NULL without PSI */
    const rt_cgroup *cgroup; /* without a tracked tree: the group the tracker itself runs in (a
                              * container, a SLURM step), own 0, exclusive 0: its limits,
                              * pressure and counters; NULL when it is the root group in every
                              * hierarchy or cgroup reading is off. With a tree: NULL (see
                              * process->cgroup) */
    /* added in 0.14: the job's phases ("Phases of a job"): the marks since the previous sample
     * and the phases open at this reading; NULL before the run's first mark */
    const struct rt_phases *phases;
    /* added in 0.15: the energy of the machine and of the tree over the interval ("Energy and
     * carbon"); NULL when energy reading is off (rt_sampler_options.energy_off) */
    const struct rt_energy *energy;
    /* added in 0.16: what the job was given where it runs ("Where the job runs"):
     * rt_sampler_options.request as the sampler copied it, the same on every sample; NULL
     * when none was given */
    const struct rt_request *request;
    /* added in 0.17: every process's use of the GPUs, as the Rust tool's cpu.process_gpu_*
     * without --pid (and the CSV's process GPU columns): filled without a tracked tree; NULL
     * with one (see process->gpu_*) or on a machine without GPUs */
    const struct rt_gpu_use *gpu_processes;
    /* added in 0.18: the run's place in a job of several nodes or tasks (rt_member):
     * rt_sampler_options.member as the sampler copied it, the same on every sample; NULL when
     * none was given or it names no job */
    const struct rt_member *member;
} rt_sample;

/* The sample's schema (0.9). EXPERIMENTAL: the figures' names, units and types stay, but these
 * calls may change in a minor version while the schema becomes one descriptor table per struct.
 * Every figure of the structs above (and of rt_host and rt_cloud),
 * listed once; the JSON line and the Prometheus families are made from the same list, and a
 * binding reads names, units and types from here. Field i (0 .. rt_schema_field_count() - 1)
 * is the member rt_schema_field_name(i) of struct rt_<rt_schema_field_struct(i)> ("process",
 * "process_part", "net_iface", ...); the member's name is its key in the JSON line (a few,
 * the interval's byte counts and the summed filesystem space, are not in it). Its unit is one
 * of "MiB", "bytes", "bytes/s", "s", "cores", "%", "usec", "count", "pid", "Celsius", "W",
 * "MHz", "Mbit/s", "GB" (10^9 bytes), "J" (0.15), or "" (strings, flags); since is the version that
 * added it. Past the last: NULL, and -1 for the type. The order is fixed within a version;
 * later versions add fields. */
typedef enum rt_field_type {
    RT_FIELD_STRING = 0, /* const char *, NULL: null */
    RT_FIELD_U64 = 1,    /* uint64_t, RT_NULL_U64: null */
    RT_FIELD_I64 = 2,    /* int64_t, RT_NULL_I64: null */
    RT_FIELD_DOUBLE = 3, /* double, NaN: null */
    RT_FIELD_FLAG = 4    /* int, 0 or 1 */
} rt_field_type;

RT_API size_t rt_schema_field_count(void);
RT_API const char *rt_schema_field_struct(size_t i);
RT_API const char *rt_schema_field_name(size_t i);
RT_API int rt_schema_field_type(size_t i);
RT_API const char *rt_schema_field_unit(size_t i);
RT_API const char *rt_schema_field_since(size_t i);
RT_API const char *rt_schema_field_help(size_t i);

/* ------------------------------------------------------------------------------------------
 * The sampler: reads the kernel's counters and turns two readings into one sample. */

typedef struct rt_sampler rt_sampler;

typedef struct rt_sampler_options {
    size_t struct_size;    /* sizeof(rt_sampler_options) as the caller compiled it */
    const char *proc_root; /* NULL: /proc (TRACKER_PROC_ROOT in the tool) */
    const char *sys_root;  /* NULL: /sys (TRACKER_SYS_ROOT) */
    rt_log_fn log;         /* NULL: messages are dropped */
    void *log_user;
    int64_t pid;      /* root of the process tree to attribute usage to; 0: none */
    int own_children; /* also take in the caller's own children (wrapper mode: the caller runs
                       * the command and is a child subreaper, see prctl(2)); the tree is then
                       * counted from zero, not from a baseline */
    const char *nvml_library; /* NULL: libnvidia-ml.so.1 (TRACKER_NVML_LIBRARY) */
    double pss_max_age_secs;  /* the longest a PSS reading is reused (TRACKER_PSS_MAX_AGE);
                               * 0: re-read every sample. Default 30 */
    double tree_start_mono_secs; /* with own_children: when the caller started the command,
                                  * on CLOCK_MONOTONIC; the first sample's interval starts
                                  * there. 0: at the baseline reading */
    /* added in 0.5 */
    int root_only; /* non-zero (with pid > 0): the root process alone, not its descendants:
                    * its own CPU time (utime + stime, not the cutime/cstime of what it
                    * reaped), its memory and threads; child_count 0. Its I/O is the kernel's
                    * /proc/PID/io, which does include what its reaped children read and
                    * wrote (the kernel adds a reaped child's I/O into its parent's) */
    /* added in 0.6 */
    const struct rt_job_cgroup *job_cgroup; /* the group the caller started the command in
                                             * (wrapper mode, with own_children): read as the
                                             * tree's own, its counters the tree's totals */
    int cgroup_off; /* non-zero: no cgroup is read at all (--cgroup off) */
    /* added in 0.15 */
    int energy_off; /* non-zero: no energy counter is read and nothing is estimated
                     * (--energy off): rt_sample.energy is NULL */
    double cpu_tdp_watts; /* the CPU's thermal design power per package for the estimate where
                           * no counter can be read (--cpu-tdp); 0: the model table's, else
                           * the per-core rule (see "Energy and carbon") */
    /* added in 0.16 */
    const struct rt_request *request; /* what the job was given where it runs (rt_place_detect,
                                       * or the caller's own): copied with its strings, carried
                                       * on every sample (rt_sample.request); NULL: none */
    /* added in 0.18 */
    double walk_max_age_secs; /* with a group of the job's own: the oldest the walk's figures
                               * may get (see rt_process.walk_age_secs; TRACKER_WALK_MAX_AGE);
                               * the walk runs sooner when its own cost allows. 0 (and a caller
                               * compiled before 0.18): every sample walks. Default 60 */
    const struct rt_member *member; /* the run's place in a job of several (rt_place_member, or
                               * the caller's own): copied with its strings, carried on every
                               * sample (rt_sample.member); NULL or no job_id: none */
    int64_t siblings_of; /* (0.18, --per-node) also take in the children of this process other
                          * than the caller (its parent, where the node's tasks of a job step
                          * are children of one slurmstepd, orted or torchrun agent as the
                          * caller is), each with its descendants, found anew at every sample,
                          * and what it reaps of them (a task that ended counts to its end).
                          * Its own CPU and memory are not the tree's, and no cgroup is read for
                          * the tree (the tasks share none of their own). 0: none */
} rt_sampler_options;

#define RT_SAMPLER_OPTIONS_INIT                                                                                        \
    {.struct_size = sizeof(rt_sampler_options), .pss_max_age_secs = 30.0, .walk_max_age_secs = 60.0}

/* Creates a sampler and takes its first (baseline) reading. opts may be NULL for defaults.
 * Returns RT_OK and sets *out (free with rt_sampler_free), or an error: RT_ERR_INVALID (a
 * struct_size too small, a negative pid), RT_ERR_NOT_FOUND when the proc root lacks the CPU
 * statistics or opts->pid does not exist, RT_ERR_NOMEM; the last error says which (0.10). A
 * source that finds nothing (no disks, no network) is not an error: its part of the sample is
 * empty. */
RT_API rt_error rt_sampler_new(const rt_sampler_options *opts, rt_sampler **out);

/* Takes a reading now and sets *out to the sample covering the time since the previous one.
 * The sample is owned by the sampler. A source that fails leaves its fields null (and logs).
 * Returns RT_OK, or RT_ERR_IO when not one of the machine-wide sources could be read (the
 * sample is still set, all null). */
RT_API rt_error rt_sampler_sample(rt_sampler *s, const rt_sample **out);

/* The watch between samples (0.18), for a sampler of a tree in a cgroup of the job's own
 * (wrapper mode) that reads the group's memory: with read non-zero it reads the group's memory
 * charge and its peak now (two files; memory.stat too when they moved) and raises the group's
 * unreclaimable peak with them, as a sample would, so that memory the job held for a moment
 * between samples is seen with the page cache of that moment (page cache that fills later in
 * the interval can hide it from the sample). Returns the seconds until the next call is worth
 * making: 0.05 s while the charge moves (by 1 MiB or 1/256 of it), twice as long after each
 * reading (a sample's too) that finds it still, up to 1.6 s; with read 0, that wait as the
 * last reading left it, reading nothing. INFINITY where there is nothing to watch (no tree, no
 * group of the job's own, no memory figures): never call again. The caller calls it from the
 * thread that samples, between samples; a sample is never delayed by it. */
RT_API double rt_sampler_watch(rt_sampler *s, int read);

/* Reaps pid, a zombie child of the calling process (found with waitid(P_ALL, ...,
 * WEXITED | WNOWAIT)), after reading its final I/O counters, and adds its CPU time (the
 * kernel's rusage: its own and all it reaped), its I/O and its peak RSS to the tree's totals.
 * Sets *wstatus as waitpid(2) would. Returns RT_OK, RT_ERR_INVALID without a tracked tree,
 * or RT_ERR_NOT_FOUND when pid was not a zombie child. Wrapper mode calls this for every
 * child it reaps. */
RT_API rt_error rt_sampler_reap(rt_sampler *s, int64_t pid, int *wstatus);

/* Frees the sampler and everything it owns. NULL is allowed. */
RT_API void rt_sampler_free(rt_sampler *s);

/* ------------------------------------------------------------------------------------------
 * Counters read now (added in 0.13): a process tree's and the machine's cumulative counters
 * as the kernel shows them at the moment of the call, with no baseline and no interval (the
 * sampler's figures are per interval and since tracking began). For callers that keep their
 * own history, such as the Python tracker's get_process_stats / get_system_stats. One call
 * reads the files it needs once and allocates nothing once the handle has seen a tree and a
 * machine as large before. A handle is used by one thread at a time. */

typedef struct rt_counters rt_counters;

typedef struct rt_counters_options {
    size_t struct_size;       /* sizeof(rt_counters_options) as the caller compiled it */
    const char *proc_root;    /* NULL: /proc */
    const char *sys_root;     /* NULL: /sys */
    rt_log_fn log;            /* NULL: messages are dropped */
    void *log_user;
    const char *nvml_library; /* NULL: libnvidia-ml.so.1 */
    int gpu_off;              /* non-zero: no GPU is looked for (the GPU figures are null) */
} rt_counters_options;

#define RT_COUNTERS_OPTIONS_INIT {.struct_size = sizeof(rt_counters_options)}

/* Opens the proc and sys roots (the GPUs are found at the first call that needs them).
 * opts may be NULL. Returns RT_OK and *out (free with rt_counters_free); RT_ERR_INVALID (a
 * struct_size too small, a root path too long), RT_ERR_NOT_FOUND (the proc root cannot be
 * opened), RT_ERR_NOMEM; the last error says which. */
RT_API rt_error rt_counters_new(const rt_counters_options *opts, rt_counters **out);

/* A process tree's counters, filled in the caller's memory (set struct_size first: the
 * library writes no byte past it). */
typedef struct rt_tree_counters {
    size_t struct_size;     /* sizeof(rt_tree_counters) as the caller compiled it */
    double timestamp_secs;  /* Unix time of the reading */
    int64_t pid;            /* the root */
    int64_t child_count;    /* live descendants (zombies included), the root not; RT_NULL_I64
                             * for the root alone (children 0) */
    double utime_secs, stime_secs; /* CPU seconds since each process started: the root's
                             * utime + cutime (stime + cstime) plus each descendant's, i.e. what
                             * the tree used and what it reaped; for the root alone, its own
                             * utime (stime) only */
    double pss_mib;         /* PSS of the tree's processes, from smaps_rollup read now (a
                             * zombie has none); NaN when the root's could not be read */
    uint64_t read_bytes, write_bytes; /* storage I/O since start, /proc/PID/io summed over the
                             * tree (each counts what it reaped); processes whose io could not
                             * be read (another user's) are left out and counted in unread */
    double gpu_usage;       /* busy GPUs the tree's processes use, 0..GPU count (the sum of
                             * their utilization / 100) since the previous call on this handle;
                             * NaN when no GPU could say (none, or gpu_off) */
    double gpu_vram_mib;    /* VRAM the tree's processes hold; NaN as gpu_usage */
    int64_t gpu_utilized;   /* GPUs the tree uses; RT_NULL_I64 as gpu_usage */
    int64_t unread_count;   /* processes of the tree whose stat, io or rollup could not be read
                             * (gone mid-walk, refused): what they used is missing */
} rt_tree_counters;

/* Reads the tree rooted at pid now: with children non-zero, the root and every descendant
 * (found through the children lists of every thread), else the root alone. Each process is
 * read before its children, so a child reaped during the walk is counted once at most (never
 * in both its own and its parent's figures); a listed child counts only when its stat names a
 * member as its parent (a pid taken meanwhile by another process is not the tree's). No
 * reading is kept between calls, except the GPU backend's own. out->struct_size must be set. Returns RT_OK;
 * RT_ERR_NOT_FOUND when pid is not there (out then holds the timestamp and pid, the rest
 * null); RT_ERR_INVALID for pid <= 0, NULL, or a struct_size too small; RT_ERR_NOMEM. */
RT_API rt_error rt_counters_tree(rt_counters *c, int64_t pid, int children, rt_tree_counters *out);

/* One whole physical disk's counters (as rt_disk lists them). */
typedef struct rt_disk_counters {
    const char *device;              /* e.g. "nvme0n1" */
    uint64_t read_bytes, write_bytes; /* since boot (diskstats sectors of 512 bytes) */
} rt_disk_counters;

/* One filesystem on those disks (as rt_mount lists them), from statvfs(3); or (0.17) a ZFS
 * pool, its mount_point "zfs:<pool>" as the Python tracker keys it, its figures zpool's
 * size, allocated and free. */
typedef struct rt_mount_space {
    const char *mount_point;
    uint64_t total_bytes, used_bytes, free_bytes; /* free: what an unprivileged user may
                                                   * still use (f_bavail); used = total - free;
                                                   * RT_NULL_U64 when statvfs failed */
} rt_mount_space;

/* The machine's counters. Owned by the handle, valid until the next rt_counters_system or
 * rt_counters_free; grows at its end. Null where the machine does not say. */
typedef struct rt_system_counters {
    double timestamp_secs;          /* Unix time of the reading */
    int64_t pid_count;              /* processes: numeric entries of the proc root */
    double utime_secs, stime_secs;  /* CPU seconds of all cores since boot: user + nice,
                                     * system (/proc/stat's aggregate line) */
    double memory_free_mib;         /* MemFree */
    double memory_used_mib;         /* MemTotal - MemAvailable */
    double memory_buffers_mib;      /* Buffers */
    double memory_cached_mib;       /* Cached + SReclaimable */
    double memory_active_mib, memory_inactive_mib; /* Active, Inactive */
    const rt_disk_counters *const *disks; /* whole physical disks */
    size_t disk_count;
    const rt_mount_space *const *mounts;  /* filesystems mounted on them; ZFS pools (0.17) */
    size_t mount_count;
    uint64_t net_rx_bytes, net_tx_bytes; /* since boot, summed over the interfaces but the
                                          * loopback */
    double gpu_usage;     /* busy GPUs, 0..GPU count (the sum of utilization / 100); NaN: no GPU */
    double gpu_vram_mib;  /* VRAM used on all GPUs; NaN: no GPU */
    int64_t gpu_utilized; /* GPUs busy now (utilization > 0); RT_NULL_I64: no GPU */
} rt_system_counters;

/* Reads the machine's counters now into the handle's struct and sets *out to it. Returns
 * RT_OK (a file that cannot be read leaves its figures null), RT_ERR_INVALID for NULL, or
 * RT_ERR_IO when not even the proc root's stat could be read (*out is still set, all null). */
RT_API rt_error rt_counters_system(rt_counters *c, const rt_system_counters **out);

/* Frees the handle and what it owns. NULL is allowed. */
RT_API void rt_counters_free(rt_counters *c);

/* ------------------------------------------------------------------------------------------
 * A cgroup of the job's own (0.6), for wrapper mode: the command runs in a group the tracker
 * made, so that the group's counters (exact CPU time, I/O, peak memory, OOM kills) cover
 * everything the job started, children reaped by nobody included. */

typedef struct rt_job_cgroup rt_job_cgroup;

typedef struct rt_job_cgroup_options {
    size_t struct_size;    /* sizeof(rt_job_cgroup_options) as the caller compiled it */
    const char *proc_root; /* NULL: /proc */
    const char *sys_root;  /* NULL: /sys */
    rt_log_fn log;         /* NULL: messages are dropped */
    void *log_user;
    /* added in 0.9 */
    char *why;             /* NULL, or room for why_cap bytes: on RT_ERR_UNSUPPORTED, why no
                            * group could be made, in a few words for people ("not root, and
                            * no cgroup delegated to this user") */
    size_t why_cap;
} rt_job_cgroup_options;

#define RT_JOB_CGROUP_OPTIONS_INIT {.struct_size = sizeof(rt_job_cgroup_options)}

/* Makes an empty group named resource-tracker-PID-N below the caller's own group in every
 * hierarchy it may write to: the v2 tree, and the v1 cpu, cpuacct, memory, blkio and pids
 * hierarchies (all that exist of them). Never moves the caller or any process. The group
 * carries the proof of a live owner (0.11): an exclusive flock(2) on its directory in each
 * hierarchy, held on descriptors g keeps open (close-on-exec) until rt_job_cgroup_free, so
 * also by a fork of the caller that holds them (the CLI's guardian) until it exits or execs.
 * Before making it, it removes the empty groups of that name whose owner is provably gone
 * (their lock is free: a tracker that was killed), in any PID namespace; it leaves alone
 * those whose lock is held or cannot be judged, and those whose PID is a live process of the
 * caller's PID namespace other than the caller (made before 0.11: no lock). A name already
 * taken (a group left with processes, a live tracker's in another PID namespace) makes it try
 * the next N.
 * Returns RT_OK and *out (free with rt_job_cgroup_free), RT_ERR_UNSUPPORTED when no hierarchy
 * lets it make a group (the reason is logged at RT_LOG_DEBUG, and is the last error: "not
 * root, and no cgroup delegated to this user"), RT_ERR_NOMEM, RT_ERR_INVALID. */
RT_API rt_error rt_job_cgroup_new(const rt_job_cgroup_options *opts, rt_job_cgroup **out);
/* The name before 0.10. */
RT_API rt_error rt_job_cgroup_create(const rt_job_cgroup_options *opts, rt_job_cgroup **out)
    RT_DEPRECATED("rt_job_cgroup_new");

/* Moves the calling process into the group in every hierarchy: for the child between fork and
 * exec (async-signal-safe: write(2) to descriptors opened by rt_job_cgroup_new; it sets no
 * last error message). Returns RT_OK; RT_ERR_SYSTEM with errno of the first hierarchy that
 * refused (the others are still tried); RT_ERR_INVALID for NULL. */
RT_API rt_error rt_job_cgroup_join(const rt_job_cgroup *g);
/* Before 0.10: as rt_job_cgroup_join, returning 0 or -errno. */
RT_API int rt_job_cgroup_enter(const rt_job_cgroup *g) RT_DEPRECATED("rt_job_cgroup_join");

/* The group's path in its hierarchy (the v2 one when made there), e.g. "/resource-tracker-812-1". */
RT_API const char *rt_job_cgroup_path(const rt_job_cgroup *g);

/* Processes in the group now (from cgroup.procs), or -1 when it cannot be read. */
RT_API int64_t rt_job_cgroup_procs(const rt_job_cgroup *g);

/* SIGKILLs every process in the group (v2 cgroup.kill where there is one, then SIGKILL over
 * cgroup.procs of every hierarchy, again until all are empty: at most about 5 s) and returns
 * once they are gone. For cleaning up after a tracker that died; never call it from a process
 * in the group (the caller is never killed, and the group then never empties). Returns RT_OK
 * when the group is empty, RT_ERR_SYSTEM when processes are still listed at the bound,
 * RT_ERR_IO when no cgroup.procs can be read, RT_ERR_INVALID for NULL. */
RT_API rt_error rt_job_cgroup_kill(rt_job_cgroup *g);

/* Removes the group from every hierarchy (a group that still holds processes cannot be
 * removed: that is logged and it stays, without its owner's lock), then frees g. NULL is
 * allowed. */
RT_API void rt_job_cgroup_free(rt_job_cgroup *g);

/* ------------------------------------------------------------------------------------------
 * The host and the cloud it runs in. */

typedef struct rt_host {
    const char *hostname;
    const char *host_id;   /* /etc/machine-id */
    const char *ip;        /* the address of the interface of the default route */
    int64_t vcpus;         /* online logical CPUs */
    const char *cpu_model;
    double memory_mib;
    const char *gpu_model; /* the GPUs' name (the first one's when they differ); NULL without */
    int64_t gpu_count;
    double gpu_memory_mib; /* VRAM over all GPUs */
    double storage_gb;     /* capacity of the physical disks, in 10^9 bytes */
    const char *kernel, *os;
    const char *allocation; /* "dedicated" or "shared" to the tracked job (see rt_allocation);
                             * NULL when not known */
} rt_host;

typedef struct rt_host_options {
    size_t struct_size;       /* sizeof(rt_host_options) as the caller compiled it */
    const char *proc_root;    /* NULL: /proc */
    const char *sys_root;     /* NULL: /sys */
    rt_log_fn log;            /* NULL: messages are dropped */
    void *log_user;
    const char *nvml_library; /* NULL: libnvidia-ml.so.1 */
} rt_host_options;

#define RT_HOST_OPTIONS_INIT {.struct_size = sizeof(rt_host_options)}

/* Reads the host's facts (opts NULL for defaults). Missing facts are NULL / NaN /
 * RT_NULL_I64. Returns RT_OK and *out (free with rt_host_free), or RT_ERR_NOMEM,
 * RT_ERR_INVALID (struct_size too small) or RT_ERR_NOT_FOUND (no proc root); last error. */
RT_API rt_error rt_host_new(const rt_host_options *opts, rt_host **out);
/* The name before 0.10. */
RT_API rt_error rt_host_read(const rt_host_options *opts, rt_host **out) RT_DEPRECATED("rt_host_new");
RT_API void rt_host_free(rt_host *h);

/* Whether the machine looks dedicated to the tracked tree or shared with other work, from the
 * run's samples: shared when, on average, the rest of the machine used at least 0.5 cores and
 * a quarter of what the tree used, or 1 GiB of memory and a quarter of the tree's PSS, or the
 * like for GPU time (0.1 GPU) and VRAM (1 GiB). */
typedef struct rt_allocation rt_allocation;

/* Options of the accumulator (0.10): none yet but the size, room to grow. */
typedef struct rt_allocation_options {
    size_t struct_size; /* sizeof(rt_allocation_options) as the caller compiled it */
} rt_allocation_options;

#define RT_ALLOCATION_OPTIONS_INIT {.struct_size = sizeof(rt_allocation_options)}

/* A new, empty accumulator (opts NULL for defaults). Returns RT_OK and *out (free with
 * rt_allocation_free), RT_ERR_INVALID (out NULL, struct_size too small; last error),
 * RT_ERR_NOMEM. */
RT_API rt_error rt_allocation_new_with(const rt_allocation_options *opts, rt_allocation **out);
/* Before 0.10: the accumulator, or NULL when out of memory. */
RT_API rt_allocation *rt_allocation_new(void) RT_DEPRECATED("rt_allocation_new_with");
/* Adds one sample (one with a tracked process; others are ignored). */
RT_API void rt_allocation_add(rt_allocation *a, const rt_sample *s);
/* "dedicated" or "shared" (static strings), or NULL without samples. */
RT_API const char *rt_allocation_guess(const rt_allocation *a);
RT_API void rt_allocation_free(rt_allocation *a);

typedef struct rt_cloud {
    const char *vendor_id;     /* aws, gcp, azure, hcloud, upcloud, alicloud, ovh, vultr */
    const char *account_id, *region_id, *zone_id, *instance_type;
    double discovery_secs;     /* how long discovery took */
} rt_cloud;

typedef struct rt_cloud_options {
    size_t struct_size;       /* sizeof(rt_cloud_options) as the caller compiled it */
    int disabled;             /* non-zero: no discovery, no request at all
                               * (TRACKER_CLOUD_DISCOVERY=0 in the tool) */
    const char *metadata_url; /* replaces scheme, host and port of every endpoint (tests:
                               * TRACKER_CLOUD_METADATA_URL); NULL: the vendors' addresses */
    rt_log_fn log;            /* NULL: messages are dropped; called from the probe threads */
    void *log_user;
} rt_cloud_options;

#define RT_CLOUD_OPTIONS_INIT {.struct_size = sizeof(rt_cloud_options)}

typedef struct rt_cloud_discovery rt_cloud_discovery;

/* Starts asking every vendor's metadata service at once, in the background, for at most 2
 * seconds in all; returns at once. opts NULL for defaults. Returns RT_OK and *out (free with
 * rt_cloud_free); RT_ERR_DISABLED when opts turn discovery off (*out NULL, nothing asked);
 * RT_ERR_INVALID for a metadata_url that is not http:// or a struct_size too small;
 * RT_ERR_NOMEM. */
RT_API rt_error rt_cloud_start(const rt_cloud_options *opts, rt_cloud_discovery **out);

/* The result, waiting at most wait_secs for discovery to end (0: just look). NULL while it
 * runs (and for a NULL d). Once known it is cached: fields are NULL where a value was not
 * found, and all are NULL off a cloud. Valid until rt_cloud_free. */
RT_API const rt_cloud *rt_cloud_result(rt_cloud_discovery *d, double wait_secs);

/* Frees the discovery; probes still running finish on their own, within the 2 s bound.
 * NULL is allowed. */
RT_API void rt_cloud_free(rt_cloud_discovery *d);

/* Formats {"host": {...}, "cloud": {...}} with a newline into buf; either may be NULL (then
 * null). Returns the length needed, like snprintf. */
RT_API size_t rt_format_info(const rt_host *host, const rt_cloud *cloud, char *buf, size_t cap);

/* ------------------------------------------------------------------------------------------
 * Job metadata, attached to every output line and to the run registration. */

typedef struct rt_job {
    size_t struct_size; /* sizeof(rt_job) as the caller compiled it */
    const char *job_name, *project_name, *stage_name, *task_name, *team, *env, *language;
    const char *orchestrator, *executor, *external_run_id, *container_image;
    const char *const *tags; /* "key=value" strings */
    size_t tag_count;
} rt_job;

#define RT_JOB_INIT {.struct_size = sizeof(rt_job)}

/* The metadata fields by number (0.9), in the fixed order above (job_name .. container_image):
 * how many there are; the name of field i, which is its key in the JSON line, the exported
 * labels, the Sentinel run and the history (NULL past the last); and field i of job (NULL when
 * unset, for a NULL job, past the last, or beyond the job's struct_size). */
RT_API size_t rt_job_field_count(void);
RT_API const char *rt_job_field_name(size_t i);
RT_API const char *rt_job_field(const rt_job *job, size_t i);

/* ------------------------------------------------------------------------------------------
 * Output: JSON lines (one object per sample) or CSV (header once, one row per sample). */

/* RT_FORMAT_CSV: the 32 columns the Python and Rust trackers share (docs/contracts.md §3; 0.18:
 * only those, as the Rust tool writes them). RT_FORMAT_JSON_RS (0.17): the JSON line of the Rust
 * resource-tracker 0.1.14 (its sample's names, nesting, key order, types and units; docs/output.md
 * "The Rust tool's JSON lines"). RT_FORMAT_CSV_ENERGY (0.18): the 32 columns, then the four
 * energy columns (system_energy_joules, system_energy_method, process_energy_joules,
 * process_energy_method), as every CSV had them from 0.15 to 0.17. Values are only ever added at
 * the end. */
typedef enum rt_format {
    RT_FORMAT_JSON = 0,
    RT_FORMAT_CSV = 1,
    RT_FORMAT_JSON_RS = 2,
    RT_FORMAT_CSV_ENERGY = 3
} rt_format;

typedef struct rt_writer rt_writer;

/* Creates a writer that writes each sample to fd with a single write(2) (so a reader sees
 * whole lines at once). The fd stays owned by the caller. job may be NULL; it is copied, but
 * the strings it points to must outlive the writer. Returns RT_OK and *out, or RT_ERR_NOMEM /
 * RT_ERR_INVALID (a bad format or fd, a job struct_size too small; the last error says which,
 * 0.10). */
RT_API rt_error rt_writer_new(rt_format format, int fd, const rt_job *job, rt_writer **out);
/* The same handing each sample (the CSV header with the first) to write(user, ...) in one
 * call (0.10); write must not be NULL. */
RT_API rt_error rt_writer_new_cb(rt_format format, rt_write_fn write, void *user, const rt_job *job,
                                 rt_writer **out);

/* Formats and writes one sample (the CSV header first, once). Returns RT_OK, or RT_ERR_IO
 * with errno set when the write failed (EPIPE for a closed pipe). */
RT_API rt_error rt_writer_write(rt_writer *w, const rt_sample *sample);

/* Frees the writer (does not close the fd). NULL is allowed. */
RT_API void rt_writer_free(rt_writer *w);

/* Formats one sample into buf (NUL-terminated, with the trailing newline). Returns the length
 * it needs, excluding the NUL, like snprintf: a result >= cap means buf was too small. With
 * RT_FORMAT_CSV this is one row without the header. job may be NULL. It keeps no state: with
 * RT_FORMAT_JSON_RS, actual_interval_ms comes from the sample's interval (a writer leaves it out
 * of its first sample, as the Rust tool does) and the per-interval cgroup figures, which need
 * the previous sample, are null (a writer has them from its second sample on). */
RT_API size_t rt_format_sample(rt_format format, const rt_sample *sample, const rt_job *job, char *buf, size_t cap);

/* Returns the CSV header line of docs/contracts.md §3, with its newline (static storage): the 32
 * shared columns (0.18; before, the four energy columns followed them). */
RT_API const char *rt_csv_header(void);

/* The header line of a CSV format (0.18): rt_csv_header() for RT_FORMAT_CSV, the 32 columns and
 * the four energy columns for RT_FORMAT_CSV_ENERGY; NULL for the JSON formats. */
RT_API const char *rt_format_header(rt_format format);

/* ==========================================================================================
 * Analysis of a run (0.3): records, a reader for recorded runs, statistics, recommendations,
 * the Keeper server lookup and the HTML report. The same code serves a live run (records made
 * from samples) and a recorded file (records read back).
 *
 * Structs the library fills into caller storage (rt_recommendation, rt_server) begin with
 * struct_size like the options: the library fills only the fields within it. */

/* A part of the tree in a record (0.8): rt_process_part's figures as doubles (NaN: null). */
typedef struct rt_record_part {
    double total_rss_mib, private_rss_mib, shared_rss_mib;
    double cores;       /* CPU seconds per second over the interval */
    double threads;
    double gpu_vram_mib;
} rt_record_part;

/* ---- one record: the figures of one sample that the analysis uses ----------------------
 * Every figure is a double; NaN is null (not reported, or not in the file). Amounts "in the
 * interval" cover the interval_secs before timestamp_secs. Library-owned, grows at its end. */
typedef struct rt_record {
    double timestamp_secs;  /* Unix time of the reading */
    double interval_secs;   /* seconds the record covers; the reader fills it from the previous
                             * timestamp when the file has none (the first record: the second's) */
    const char *job_name;   /* NULL when none */
    /* the machine */
    double cpu_cores;              /* busy cores, fractional */
    double cpu_count;              /* online cores */
    double memory_used_mib, memory_total_mib;
    double disk_read_bytes, disk_write_bytes; /* in the interval, all disks */
    double net_recv_bytes, net_sent_bytes;    /* in the interval, all interfaces */
    double disk_space_total_bytes, disk_space_used_bytes;
    double gpu_usage;       /* busy GPUs: the sum of utilizations / 100 */
    double gpu_vram_mib;    /* VRAM used, all GPUs */
    double gpu_utilized;    /* GPUs with utilization > 0 */
    double gpu_count;       /* GPUs present (0 without) */
    double gpu_vram_total_mib;
    /* the tracked process tree: all NaN without one */
    double process_pid;
    double process_children;
    double process_cores;           /* CPU seconds per second over the interval */
    double process_cpu_secs;        /* user+system CPU seconds in the interval */
    double process_cpu_secs_total;  /* since tracking began (NaN when the file lacks it) */
    double process_pss_mib, process_rss_mib;
    double process_rss_peak_mib;    /* the kernel's peak so far (NaN when the file lacks it) */
    double process_read_bytes, process_write_bytes; /* in the interval */
    double process_gpu_usage;       /* busy GPUs of the tree */
    double process_gpu_vram_mib;
    double process_gpu_utilized;    /* GPUs the tree used */
    /* added in 0.6: the tree's cgroup, else (no tree) the group the tracker runs in; NaN without
     * one, or when the file lacks it */
    double process_memory_peak_mib;  /* the kernel's peak charge so far */
    double cgroup_oom_kills;         /* OOM kills in the group since tracking began */
    double cgroup_memory_limit_mib;  /* NaN: no limit */
    double cgroup_memory_high_mib;
    double cgroup_cpu_quota_cores;   /* NaN: no quota */
    double cgroup_cpu_periods;       /* quota periods since tracking began */
    double cgroup_cpu_throttled_periods; /* of them, throttled */
    double cgroup_cpu_throttled_secs;    /* since tracking began */
    double cgroup_pids_peak, cgroup_pids_limit;
    /* pressure in the interval, percent: per resource the group's where the group has it (its
     * some_pct or some_avg10 is known), else the machine's */
    double pressure_cpu_some_pct, pressure_memory_some_pct, pressure_memory_full_pct;
    double pressure_io_some_pct, pressure_io_full_pct;
    /* added in 0.8: gpu_tracker's split of the tree (all NaN without a tree, or when the file
     * lacks it), and the machine's GPUs one by one, for choosing some of them by uuid: pointers
     * into the sample, or the reader's own with uuid, utilization_pct, vram_used_bytes and
     * vram_total_bytes set (the rest null); NULL and 0 when the source has no such list (CSV,
     * a tracker's kept samples) */
    rt_record_part main, descendants, combined;
    const rt_gpu *const *gpu;
    size_t gpu_n;
    /* added in 0.9: what the memory need and the notes are made from (NaN without a tree, or
     * when the file lacks it) */
    double process_rss_hwm_mib;            /* rt_process.rss_hwm_mib */
    double process_unreclaimable_peak_mib; /* the tree's group's memory_unreclaimable_peak_mib,
                                            * when the group holds only the tree */
    double process_gpu_vram_peak_mib;      /* rt_process.gpu_vram_peak_bytes in MiB */
    double process_cancelled_write_bytes_total; /* written bytes whose writeback was cancelled
                                            * (the file was deleted or truncated first), since
                                            * tracking began */
    double process_alive;                  /* 1 while the root runs, 0 after it exited */
    double process_cgroup_exclusive;       /* the tree's group: 1 it holds only the tree (or is
                                            * the job's own), 0 it holds other processes too;
                                            * NaN without one */
    double cgroup_pids;                    /* tasks in the tree's group now */
    /* added in 0.14: as rt_sample.phases (NULL before the run's first mark, and past a caller's
     * rec_size) */
    const struct rt_phases *phases;
    /* added in 0.15 ("Energy and carbon"): rt_sample.energy's figures (NaN, NULL where the
     * sample had no energy, and in files without them) */
    double energy_joules;            /* the machine's, in the interval */
    double process_energy_joules;    /* the tree's share, in the interval */
    const char *energy_method, *process_energy_method; /* "measured", "sampled", "estimated" */
    double idle_power_watts;         /* the machine's floor so far */
    double gpu_power_throttled_secs, gpu_thermal_throttled_secs; /* since tracking began,
                                      * summed over the GPUs that report them */
    const struct rt_energy *energy;  /* the sample's (or the reader's, with its domains);
                                      * NULL without */
    /* added in 0.16 ("Where the job runs") */
    const struct rt_request *request; /* the sample's, or the reader's from a line that holds
                                       * one (a JSON line file has it on its run's first line);
                                       * NULL without */
    double process_vms_mib;           /* rt_process.vms_mib (NaN without a tree, or when the
                                       * file lacks it) */
    /* added in 0.18 */
    double process_walk_age_secs; /* rt_process.walk_age_secs (NaN without a tree, or when the
                                   * file lacks it) */
    double process_rss_hwm_tree_mib; /* rt_process.rss_hwm_tree_mib (NaN without a tree, or when
                                      * the file lacks it) */
    double process_unreclaimable_unsure_mib; /* the tree's group's memory_unreclaimable_unsure_mib,
                                      * when the group holds only the tree */
    double pressure_group;           /* 1: every pressure figure of the record is the group's (the
                                      * tree's, else the tracker's own), 0: some are the machine's;
                                      * NaN: the record has none */
    const struct rt_member *member;  /* the sample's, or the reader's from a line that holds one;
                                      * NULL without */
} rt_record;
/* rt_record has no struct_size: where it crosses between caller and library, a size argument
 * says how much of it the caller has, sizeof(rt_record) as the caller compiled it (0.10). The
 * library writes into a caller's record (rt_record_from_sample_sized, rt_tracker_record) and
 * reads one (rt_stats_add_sized, rt_report_add_sized, rt_pipeline_add_record) no byte past
 * that size. A record it reads is taken member by member: what lies wholly within the size is the
 * caller's, the members past it (newer than the caller's header) are null: NaN, job_name and gpu
 * NULL, gpu_n 0 (gpu and gpu_n count only together). A caller that fills records itself sets
 * what it does not know to null the same way. */

/* Fills the record at out from a sample (0.10). out_size is the caller's storage,
 * sizeof(rt_record) as it compiled it: the library writes no more than that, nor more than
 * its own rt_record (a newer caller's tail is left as it was). job_name points into the
 * sample, or is NULL. RT_OK; RT_ERR_INVALID (s or out NULL, out_size 0). */
RT_API rt_error rt_record_from_sample_sized(const rt_sample *s, rt_record *out, size_t out_size);
/* Before 0.10: fills the whole rt_record of the library's size, which overruns a caller
 * built with an older, shorter header. */
RT_API void rt_record_from_sample(const rt_sample *s, rt_record *out) RT_DEPRECATED("rt_record_from_sample_sized");

/* ---- the reader: recorded runs, one record at a time, in constant memory --------------
 * Reads the tool's JSON lines and CSV (docs/contracts.md §2, §3) and the Python
 * resource-tracker's CSV files (ProcessTracker, SystemTracker, and the combined process_* /
 * system_* columns: docs/contracts.md §13), recognised by their first line. A malformed line is
 * logged once as "FILE:LINE: problem" (RT_LOG_WARN) and skipped. */
typedef struct rt_reader rt_reader;

typedef struct rt_reader_options {
    size_t struct_size; /* sizeof(rt_reader_options) as the caller compiled it */
    rt_log_fn log;      /* NULL: messages are dropped */
    void *log_user;
} rt_reader_options;

#define RT_READER_OPTIONS_INIT {.struct_size = sizeof(rt_reader_options)}

/* Opens path ("-" is stdin; gzip, told by its magic, is read through zlib as a stream, 0.18).
 * Returns RT_OK and *out (free with rt_reader_free), RT_ERR_NOT_FOUND / RT_ERR_IO when it
 * cannot be opened, RT_ERR_PARSE when the first line is no format the reader knows or is
 * longer than 16 MiB, RT_ERR_UNSUPPORTED for gzip when zlib cannot be loaded, RT_ERR_NOMEM,
 * RT_ERR_INVALID. Every failure but the last two is also logged (RT_LOG_ERROR) with the file's
 * name and the reason, which is the last error (and so for rt_reader_open_buffer, which reads
 * no gzip). `_open`, not `_new`: it opens a file, as fopen. Memory does not grow with the
 * file: at most the longest line and 1 MiB more (docs/contracts.md §2). */
RT_API rt_error rt_reader_open(const char *path, const rt_reader_options *opts, rt_reader **out);

/* The same over a buffer in memory (name is used in messages; buf must outlive the reader). */
RT_API rt_error rt_reader_open_buffer(const char *name, const char *buf, size_t len,
                                      const rt_reader_options *opts, rt_reader **out);

/* The next record: RT_OK with *out set (valid until the next call), RT_OK with *out NULL at
 * the end, RT_ERR_IO when reading failed, RT_ERR_PARSE at a line longer than 16 MiB (0.18;
 * logged as "FILE:LINE: a line longer than 16 MiB ...", rt_reader_errmsg: no recorded run has
 * one, so the rest is not read), RT_ERR_NOMEM. Each comes after the records before it, and
 * stays: every later call returns it again. */
RT_API rt_error rt_reader_next(rt_reader *r, const rt_record **out);

/* "json", "csv" (docs/contracts.md §3), "python-process", "python-system" or "python-combined";
 * "json-rs" (0.17) for the Rust resource-tracker's JSON lines (ours with --format json-rs) once
 * a line of them was read. */
RT_API const char *rt_reader_format(const rt_reader *r);

/* Records returned so far, and malformed lines skipped so far. */
RT_API uint64_t rt_reader_records(const rt_reader *r);
RT_API uint64_t rt_reader_skipped(const rt_reader *r);

/* The reader's own last problem (0.10; sqlite3_errmsg): "FILE:LINE: problem" of the last
 * malformed line skipped, or the error of rt_reader_next; "" when none. Valid until the
 * next call on r. */
RT_API const char *rt_reader_errmsg(const rt_reader *r);

/* Closes the file and frees the reader (0.10). NULL is allowed. */
RT_API void rt_reader_free(rt_reader *r);
/* The name before 0.10. */
RT_API void rt_reader_close(rt_reader *r) RT_DEPRECATED("rt_reader_free");

/* ---- statistics, incrementally over records ------------------------------------------- */

/* mean: weighted by the seconds each record covers (a record without a positive interval
 * counts as 1 s); peak: the largest value; p50, p95: time-weighted percentiles from a
 * log-bucketed histogram, within 1/256 (0.39%) relative of the exact value for values from
 * 0.001 to 2^31 (above: the peak); values below 0.001 and negative values count as 0; the
 * memory is fixed (about 41 KiB per figure). NaN when no record had the figure. */
typedef struct rt_dist {
    double mean, peak, p50, p95;
} rt_dist;

/* What a run needed of memory or VRAM (0.9), and which figure said so. The memory need is the
 * most the run held that the kernel could not reclaim: the largest of the figures known, in
 * this order of preference when two are equal:
 *   RT_NEED_CGROUP        the job cgroup's unreclaimable peak (anonymous, shared and tmpfs,
 *                         kernel memory; page cache left out): the kernel's, between samples too
 *   RT_NEED_PROCESS_PEAK  the highest peak RSS of one process (VmHWM, ru_maxrss): the kernel's
 *   RT_NEED_RSS           the tree's RSS at a sample, shared pages once (the combined part;
 *                         without it, the RSS peak of the recording): sampled
 *   RT_NEED_PSS           the tree's PSS at a sample: sampled
 *   RT_NEED_PROCESS_PEAKS (without a cgroup figure only) the processes' peaks as if at once
 *                         (rt_process.rss_hwm_tree_mib): the safe side for processes that
 *                         peak between samples, still blind to one born and gone between them
 * Without the job cgroup's figure every memory need is sampled (a lower bound: see below).
 * Page cache the kernel can reclaim is no need: a job streaming a file through the cache is
 * not told to ask for the file's size. VRAM: NVML's accounting peak where it is on
 * (RT_NEED_NVML_PEAK), else the sampled peak (RT_NEED_VRAM). */
typedef enum rt_need_source {
    RT_NEED_UNKNOWN = 0,      /* no figure: the need is unknown (mib NaN) */
    RT_NEED_CGROUP = 1,
    RT_NEED_PROCESS_PEAK = 2,
    RT_NEED_RSS = 3,
    RT_NEED_PSS = 4,
    RT_NEED_NVML_PEAK = 5,
    RT_NEED_VRAM = 6,
    RT_NEED_PROCESS_PEAKS = 7, /* 0.18 */
} rt_need_source;

typedef struct rt_need {
    double mib;  /* NaN: unknown */
    int source;  /* rt_need_source */
    int sampled; /* 1: a lower bound. Memory: no cgroup figure covers the job (0.18: whatever the
                  * source; before, only RT_NEED_RSS and RT_NEED_PSS): no other figure counts
                  * memory that no process maps (tmpfs and /dev/shm files, kernel memory), a
                  * sampled one misses a peak between samples, the processes' peaks a process born
                  * and gone between them, one process's peak what the others held. VRAM: the
                  * sampled peak (RT_NEED_VRAM) */
} rt_need;

/* The source's name ("cgroup", "process_peak", "rss", "pss", "nvml_peak", "vram", "process_peaks",
 * "unknown")
 * and a few words on it for people ("cgroup peak less page cache, kernel-counted", ...);
 * static. */
RT_API const char *rt_need_source_name(int source);
RT_API const char *rt_need_source_text(int source);

/* Library-owned, grows at its end. Totals are NaN when no record had the figure. */
typedef struct rt_summary {
    uint64_t samples;
    double start_secs, end_secs; /* Unix time: the earliest record's start, the latest end */
    double duration_secs;        /* seconds covered by the records */
    const char *job_name;        /* the first one seen, or NULL */
    int has_process;             /* 1 when some record had a tracked tree */
    /* the tracked tree */
    double process_cpu_secs;     /* user+system CPU seconds of the whole run: the records'
                                  * cpu_secs_total (each run's last, summed when the file holds
                                  * several: the total going back or another pid), else the sum
                                  * of the per-interval figures */
    rt_dist process_cores, process_pss_mib, process_rss_mib; /* rss peak: the kernel's peak */
    rt_dist process_gpu_usage, process_gpu_vram_mib;
    double process_gpus_used;    /* the most GPUs the tree used at once */
    double process_read_bytes, process_write_bytes;
    /* the machine */
    double cpu_count;            /* the most cores seen */
    rt_dist cpu_cores, memory_used_mib;
    double memory_total_mib;
    rt_dist gpu_usage, gpu_vram_mib;
    double gpu_count, gpu_vram_total_mib;
    double disk_read_bytes, disk_write_bytes, net_recv_bytes, net_sent_bytes;
    double disk_space_used_peak_bytes, disk_space_total_bytes;
    const char *allocation;      /* "dedicated" or "shared" (rt_allocation's rule), NULL */
    /* added in 0.6: the tree's cgroup; NaN when no record had the figure */
    double process_memory_peak_mib; /* the kernel's peak charge of the job's group */
    double oom_kills;               /* OOM kills in the group over the run (each run's last
                                     * count, summed when the file holds several, as
                                     * process_cpu_secs; so are the cpu_* totals below) */
    double oom_kill_secs;           /* Unix time of the first record that saw a kill; NaN */
    double memory_limit_mib, memory_high_mib; /* the lowest seen */
    double cpu_quota_cores;         /* the lowest seen */
    double cpu_periods, cpu_throttled_periods, cpu_throttled_secs; /* over the run */
    double pids_peak, pids_limit;
    /* pressure, percent of the time (the records' figures, time-weighted like the others) */
    rt_dist pressure_cpu_some_pct, pressure_memory_some_pct, pressure_memory_full_pct;
    rt_dist pressure_io_some_pct, pressure_io_full_pct;
    /* added in 0.8: the run in gpu_tracker's terms (never NULL; see rt_usage) */
    const struct rt_usage *usage;
    /* added in 0.9 (NaN when no record had the figure) */
    double process_rss_hwm_mib;            /* the highest peak RSS of one process (kernel) */
    double process_unreclaimable_peak_mib; /* the job group's unreclaimable peak */
    double process_gpu_vram_peak_mib;      /* NVML accounting's VRAM peak */
    double process_cancelled_write_bytes;  /* of process_write_bytes, the bytes whose writeback
                                            * the kernel cancelled (never stored) */
    double process_cgroup_exclusive;       /* the tree's group: 1 it held only the tree in every
                                            * record that had one, 0 it held other processes
                                            * too; NaN: no group was read */
    double left_behind;                    /* processes of the job still running at the last
                                            * record, its root gone (NaN: the root still ran,
                                            * or unknown) */
    rt_need memory_need, vram_need;        /* what the run needed (see rt_need) */
    /* added in 0.14: the job's phases ("Phases of a job"), one per name in the order each first
     * started, and the run's counts of marks; 0, NULL and NULL when the run had no mark */
    const struct rt_phase_summary *const *phases;
    size_t phase_count;
    const struct rt_phase_counts *phase_counts;
    /* added in 0.15 ("Energy and carbon"); NaN and NULL when no record had energy */
    double energy_joules, process_energy_joules; /* the machine's and the tree's, over the run */
    const char *energy_method, *process_energy_method; /* the least exact of the run's records */
    rt_dist power_watts, process_power_watts;    /* over the intervals (peak: the highest) */
    double idle_power_watts;     /* the machine's floor: the least interval power of the run */
    double gpu_power_throttled_secs, gpu_thermal_throttled_secs; /* over the run, all GPUs */
    const char *energy_model;    /* the estimate's model in words (the last record's); NULL */
    const char *energy_missing;  /* what could not be read and how to grant it; NULL */
    /* carbon: the energy times the grid's intensity (rt_stats_set_grid); NaN when the
     * intensity is unknown (never a world average), or without energy */
    double co2e_grams, process_co2e_grams;
    const struct rt_grid *grid;  /* the intensity used; NULL: unknown */
    /* added in 0.16 ("Where the job runs"): what the job was given and how much of it it used,
     * the way SLURM's seff counts. Each requested figure is the request's (rt_stats_set_request,
     * else the first record that carried one) where it says it, else the job's cgroup limit
     * (the lowest quota, memory.max), else for a GitHub Actions runner the machine's; NaN with a
     * NULL *_from when nothing said it. */
    const struct rt_request *request; /* the request used; NULL: none */
    double requested_cpu_cores, requested_memory_mib, requested_gpus;
    double time_limit_secs;           /* NaN: no limit known */
    const char *requested_cpu_from, *requested_memory_from, *requested_gpus_from, *time_limit_from;
    double cpu_efficiency_pct;    /* CPU time / (requested cores x duration) x 100 */
    double memory_efficiency_pct; /* memory need (memory_need) / requested memory x 100 */
    double gpu_efficiency_pct;    /* the tree's mean GPU usage / requested GPUs x 100 (NaN for 0
                                   * GPUs requested) */
    double time_limit_used_pct;   /* (the run's end - the job's start) / the time limit x 100 */
    double process_vms_peak_mib;  /* the tree's highest sampled vms_mib */
    /* added in 0.18 */
    double process_walk_age_max_secs; /* the oldest the walk's own figures (PSS, counts, parts)
                                       * were in a sample (the two clocks: 0 when every sample
                                       * walked; NaN without a tree or from older files) */
    double process_rss_hwm_tree_mib;  /* rt_process.rss_hwm_tree_mib, the highest (NaN without
                                       * a tree or from older files) */
    double process_unreclaimable_unsure_mib; /* of process_unreclaimable_peak_mib, the safe side's
                                       * part (rt_cgroup.memory_unreclaimable_unsure_mib) at the
                                       * record that gave the peak; NaN as the peak */
    double pressure_group;            /* 1: the pressure figures are the group's in every record
                                       * that had any (rt_record.pressure_group), 0: some are the
                                       * machine's; NaN: none */
    const struct rt_cores_table *cores; /* the run's duration under 1, 2, ... cores (see
                                       * rt_cores_table); NULL without a tracked tree */
    double max_slowdown_pct; /* the slowdown bound the run's own answers use (rt_stats_set_max_slowdown,
                              * the tool's --max-slowdown): rt_recommend without options takes the
                              * first run's; NaN: the default, 10 (0.18) */
    const struct rt_member *member; /* the run's place in a job of several: the first record's
                              * that carried one; NULL: none (0.18) */
} rt_summary;

/* ---- the run under other core counts (0.18) --------------------------------------------
 * What the run would have taken with c cores, from its records (docs/answers.md, "The CPU
 * answer"). Each record's CPU work (process_cores x interval_secs core-seconds) runs at most c
 * cores wide: an interval that used u > c cores takes u / c times as long; one that used c or
 * fewer takes as long as it did (time off a CPU, such as I/O or sleep, is unchanged). With more
 * cores than the run had (its quota, else the machine's cores) an interval is faster by at most
 * the time its tasks waited for a CPU (the CPU pressure "some" share of the interval: the job
 * group's, else the machine's), and never faster than its work spread over c cores: such a row
 * is a bound (wait_bound), and without pressure figures no gain is claimed. The model knows
 * nothing finer than an interval: a burst wider than c within one makes the real run slower. */
#define RT_CORES_MAX 256 /* the most cores a table goes to */

typedef struct rt_cores_row {
    int64_t cores;
    double duration_secs; /* predicted */
    double core_hours;    /* cores x duration / 3600 */
    int wait_bound;       /* 1: more cores than the run had: faster only by its waits, at most */
} rt_cores_row;

typedef struct rt_cores_table {
    size_t n;                 /* rows: 1 .. n cores, a little above the most the run could use */
    const rt_cores_row *rows; /* rows[c - 1] is c cores */
    double duration_secs;     /* the run's own (the records' seconds) */
    double cores_had;         /* the most the run could use (its quota, else the machine's
                               * cores); NaN: unknown */
    double peak_cores;        /* the most it used over one interval */
    double wait_secs;         /* time at least one task waited for a CPU; NaN: no pressure */
    const char *wait_from;    /* "group" (the job's own figures), "machine" (some are the
                               * machine's: an overstatement), NULL: none */
} rt_cores_table;

/* ---- gpu_tracker's view of a run (0.8) --------------------------------------------------
 * The peaks and means gpu_tracker's Tracker reports (docs/contracts.md §8, §15), from the
 * same records: RAM and GPU RAM of the machine and of the tree's parts (main, descendants,
 * combined: see rt_process_part), and utilization as a sum of percentages (100 per busy core
 * or GPU) and as a hardware percentage: the sum divided by the units expected to be used
 * (expected_cores for main, descendants and combined, default all cores; the machine's always
 * by all its cores; GPUs by the number chosen). Means are weighted by the seconds each record
 * covers; each peak is its own figure's (a part's peak total need not be its peak private plus
 * peak shared). */
typedef struct rt_usage_pct {
    double max_sum_pct, max_hardware_pct, mean_sum_pct, mean_hardware_pct;
} rt_usage_pct;

typedef struct rt_usage_rss {
    double total_mib, private_mib, shared_mib;
} rt_usage_rss;

typedef struct rt_usage {
    double duration_secs; /* seconds the records cover (gpu_tracker's compute time) */
    /* RAM, MiB */
    double ram_capacity_mib;            /* the machine's */
    double ram_system_peak_mib, ram_system_mean_mib; /* the machine's used memory */
    rt_usage_rss ram_peak[3], ram_mean[3]; /* [0] main, [1] descendants, [2] combined */
    /* GPU RAM, MiB: all GPUs (gpu_uuids chooses utilization only, as in gpu_tracker) */
    double gpu_ram_capacity_mib;
    double gpu_ram_system_peak_mib, gpu_ram_system_mean_mib;
    double gpu_ram_peak_mib[3], gpu_ram_mean_mib[3];
    /* CPU */
    double system_core_count; /* the most cores seen */
    double expected_cores;    /* the denominator for the parts */
    rt_usage_pct cpu_system, cpu[3];
    double threads_peak[3];
    /* GPUs */
    double system_gpu_count;  /* the most GPUs seen (0 without) */
    double expected_gpus;     /* the GPUs chosen (all when none were) */
    rt_usage_pct gpu;         /* of the GPUs chosen; NaN when records had no per-GPU list and
                               * some were chosen */
} rt_usage;

/* How the view counts: expected_cores (0: all the machine's cores) and the GPUs whose
 * utilization counts (gpu_uuid_count 0: all). */
typedef struct rt_usage_options {
    size_t struct_size; /* sizeof(rt_usage_options) as the caller compiled it */
    double expected_cores;
    const char *const *gpu_uuids;
    size_t gpu_uuid_count;
} rt_usage_options;

#define RT_USAGE_OPTIONS_INIT {.struct_size = sizeof(rt_usage_options)}

typedef struct rt_stats rt_stats;

/* A new, empty accumulator, counting the summary's usage (rt_usage) as usage says (NULL: the
 * defaults; see rt_stats_set_usage). Its memory does not grow with the number of records.
 * Returns RT_OK and *out (free with rt_stats_free); RT_ERR_INVALID (out NULL, a struct_size
 * too small, a negative expected_cores); RT_ERR_NOMEM. Last error (0.10). */
RT_API rt_error rt_stats_new_with(const rt_usage_options *usage, rt_stats **out);
/* Before 0.10: rt_stats_new_with(NULL, ...), the accumulator or NULL when out of memory. */
RT_API rt_stats *rt_stats_new(void) RT_DEPRECATED("rt_stats_new_with");
/* Adds one record of rec_size bytes, sizeof(rt_record) as the caller compiled it (0.10; see
 * rt_record for what is read of it). A NULL st or rec, or a rec_size 0: nothing is added. */
RT_API void rt_stats_add_sized(rt_stats *st, const rt_record *rec, size_t rec_size);
/* Before 0.10: reads a whole rt_record of the library's size, past the end of a shorter record
 * of a caller built with an older header. */
RT_API void rt_stats_add(rt_stats *st, const rt_record *rec) RT_DEPRECATED("rt_stats_add_sized");
/* The statistics so far (never NULL for a non-NULL st; samples 0 before any record). Valid
 * until the next rt_stats_add_sized or rt_stats_free. */
RT_API const rt_summary *rt_stats_summary(rt_stats *st);
RT_API void rt_stats_free(rt_stats *st);

/* Sets how the summary's usage (rt_usage) counts, before the first record is added (0.8): the
 * uuids are copied. RT_OK, RT_ERR_INVALID (NULL, struct_size too small, a negative
 * expected_cores, records already added), RT_ERR_NOMEM. */
RT_API rt_error rt_stats_set_usage(rt_stats *st, const rt_usage_options *opts);

/* Sets the slowdown bound of the run's own answers (0.18): its summary's max_slowdown_pct, which
 * rt_recommend without options (the summary, report, notes and card of the run) applies to its
 * cores. RT_OK; RT_ERR_INVALID for a NULL st or a pct negative or NaN. */
RT_API rt_error rt_stats_set_max_slowdown(rt_stats *st, double pct);

/* Formats the summary as one JSON object with a newline. memory_unit and time_unit are
 * gpu_tracker's names ("bytes", "kilobytes", "megabytes", "gigabytes", "terabytes";
 * "seconds", "minutes", "hours", "days"), or NULL for MiB and seconds; memory and time keys
 * end in the unit ("_mib", "_secs" by default, else "_gigabytes", "_hours", ...). buf is
 * NUL-terminated when cap > 0; *len (when not NULL) is the length needed, like snprintf's
 * result (>= cap: buf was too small). Returns RT_OK; RT_ERR_INVALID for an unknown unit (the
 * last error names it; *len 0) or a NULL s (0.10). */
RT_API rt_error rt_format_summary_json(const rt_summary *s, const char *memory_unit, const char *time_unit,
                                       char *buf, size_t cap, size_t *len);
/* Before 0.10: the length needed, or 0 for an unknown unit. */
RT_API size_t rt_format_summary(const rt_summary *s, const char *memory_unit, const char *time_unit,
                                char *buf, size_t cap) RT_DEPRECATED("rt_format_summary_json");

/* gpu_tracker's units (0.10), the ones rt_format_summary takes: the bytes in the memory unit
 * called name ("bytes" 1, "kilobytes" 1e3, "megabytes" 1e6, "gigabytes" 1e9, "terabytes" 1e12:
 * decimal, as gpu_tracker counts), or the seconds in the time unit ("seconds" 1, "minutes" 60,
 * "hours" 3600, "days" 86400). Returns 0 for NULL or a name not listed. */
RT_API double rt_memory_unit_bytes(const char *name);
RT_API double rt_time_unit_secs(const char *name);

/* ---- recommendations ------------------------------------------------------------------- */

typedef struct rt_recommendation {
    size_t struct_size;     /* caller sets sizeof(rt_recommendation) */
    int64_t cpu;            /* cores (rt_recommend; cpu_basis says how) */
    int64_t memory_mib;     /* rt_round_memory_mib(peak PSS x 1.2) */
    int64_t gpu;            /* GPUs used */
    int64_t vram_mib;       /* rt_round_memory_mib(peak VRAM x 1.2); 0 without GPUs */
    uint64_t runs;          /* runs it is made from */
    double duration_secs;   /* the runs' mean duration (for costs) */
    /* added in 0.6 */
    int oom_killed;         /* a run was OOM-killed: memory_mib is above the peak it reached
                             * (never less than rt_round_memory_mib(peak x 1.2) of that run) */
    double cpu_quota_cores; /* the quota that held a run back (throttled in at least 10% of
                             * its periods): cpu is then above it; NaN when none did */
    double cpu_throttled_pct; /* that run's throttled periods, percent; NaN */
    /* added in 0.9 */
    double memory_need_mib;   /* the runs' highest memory need (rt_summary.memory_need); NaN:
                               * unknown, and memory_mib is then RT_NULL_I64 unless a run was
                               * OOM-killed at a known limit */
    int memory_source;        /* rt_need_source of that need */
    int memory_sampled;       /* 1: from samples only (a lower bound) */
    double headroom_pct;      /* added to the needs: 10 + 10 / runs (20 for one run) */
    double vram_need_mib;     /* the runs' highest VRAM need; NaN: unknown */
    int vram_source;
    /* added in 0.18: the CPU answer in time (rt_cores_table). With the tables of the runs, cpu is
     * the fewest cores under which every run is predicted within max_slowdown_pct of its own
     * duration (the cheapest such count, where a price per core-hour is known: rt_recommend_with)
     * and never below a quota that held a run back; without them, the mean rule of 0.5 */
    double max_slowdown_pct;      /* the bound used (rt_recommend_options; default 10) */
    double cpu_duration_secs;     /* predicted duration under cpu cores (the slowest run's); NaN:
                                   * no table */
    double cpu_run_duration_secs; /* that run's own duration */
    int64_t cpu_fewer;            /* cpu - 1 (0: none fewer) */
    double cpu_fewer_duration_secs; /* predicted under cpu_fewer cores; NaN: none */
    double cpu_cost_usd;          /* predicted money per run under cpu cores; NaN: no price */
    double time_limit_secs;       /* a time limit to ask with the cores (SLURM --time): the
                                   * predicted duration plus 50%, at least 10 minutes, rounded up
                                   * to whole minutes; NaN: no table */
    const char *cpu_basis;        /* how cpu was decided: "duration" (the tables), "throttled"
                                   * (a quota's floor above them), "mean" (no table) */
    /* the phase that decided cpu (cpu_basis "duration", cpu above 1): of the runs one core fewer
     * would slow past the bound, the phase (rt_phase_summary.cores) that core would slow the
     * most; "" when none: no phases, or an ask of 1 core */
    char cpu_phase[256];
    double cpu_phase_fewer_secs; /* the seconds one core fewer adds to that phase; NaN: none */
} rt_recommendation;

#define RT_RECOMMENDATION_INIT {.struct_size = sizeof(rt_recommendation)}

/* mib rounded up to 128, 256, 512, 1024 or 2048 MiB, above that to whole GiB (in MiB). */
RT_API int64_t rt_round_memory_mib(double mib);

/* Recommends from n runs of one job:
 *  - cpu (0.18): the fewest cores under which each run's predicted duration (its summary's
 *    rt_cores_table) is within 10% of its own; runs without a table (older summaries):
 *    max(1, round(the mean of the runs' mean cores)); either way above a CPU quota that
 *    throttled a run in 10% or more of its periods (the quota rounded up, plus one);
 *  - memory: the runs' highest memory need (never a mean: one run that needed more is one
 *    that would die under less) plus headroom_pct, rounded up (rt_round_memory_mib); after an
 *    OOM kill, never below that run's peak or limit plus 20%, rounded; RT_NULL_I64 when no
 *    figure is known;
 *  - gpu: the most GPUs a run used at once; vram: the highest VRAM need plus headroom, rounded;
 *  - headroom_pct = 10 + 10 / n: 20% for one run, less as runs agree (the highest of many runs
 *    already covers their spread).
 * Returns RT_OK, or RT_ERR_INVALID for n == 0, a NULL run or a run without a tracked tree. */
RT_API rt_error rt_recommend(const rt_summary *const *runs, size_t n, rt_recommendation *out);

/* What rt_recommend_with is asked (0.18). */
typedef struct rt_recommend_options {
    size_t struct_size;       /* sizeof(rt_recommend_options) as the caller compiled it */
    double max_slowdown_pct;  /* the predicted duration may exceed a run's own by this much,
                               * percent (RT_RECOMMEND_OPTIONS_INIT: 10; 0: no slower at all) */
    double usd_per_core_hour; /* a core-hour's price; 0 or NaN: none (the fewest cores within the
                               * bound; with a price, the cheapest within it) */
} rt_recommend_options;

#define RT_RECOMMEND_OPTIONS_INIT {.struct_size = sizeof(rt_recommend_options), .max_slowdown_pct = 10}

/* The fewest cores under which t's predicted duration is within max_slowdown_pct of its own
 * (the rule rt_recommend applies to each run, here to one table: a run's or a phase's) (0.18).
 * Returns 0 for a NULL or empty table or a max_slowdown_pct negative or NaN. */
RT_API int64_t rt_cores_fewest(const struct rt_cores_table *t, double max_slowdown_pct);

/* rt_recommend with options (opts NULL: the defaults, as rt_recommend). Returns as rt_recommend,
 * and RT_ERR_INVALID for a max_slowdown_pct or price that is negative or NaN. */
RT_API rt_error rt_recommend_with(const rt_recommend_options *opts, const rt_summary *const *runs, size_t n,
                                  rt_recommendation *out);

/* What the recommended cores cost in time, in words, one line without a newline (0.18):
 * "2 cores: about 14 min, as this run; 1 core: about 22 min (+57%)", with the money where the
 * recommendation has it, and "(at best: ...)" where the count is above what the run had.
 * Returns the length needed like snprintf; 0 (buf "") when rec has no predicted duration (a
 * recommendation by the mean rule, or a caller's struct older than 0.18). */
RT_API size_t rt_recommendation_time_words(const rt_recommendation *rec, char *buf, size_t cap);

/* The recommendation in a scheduler's words, one line with a newline:
 * RT_SCHED_METAFLOW  @resources(cpu=2, memory=3222, gpu=1)   (0.13: memory in MB, as Metaflow
 *                    asks: 3072 MiB is 3221.2 MB, rounded up)
 * RT_SCHED_K8S       resources: {requests: {cpu: "2", memory: "3072Mi", nvidia.com/gpu: 1}}
 * RT_SCHED_SLURM     --cpus-per-task=2 --mem=3072M --gres=gpu:1 --time=0:30:00   (0.18: the
 *                    time limit, where the recommendation has one: time_limit_secs)
 * Returns the length needed like snprintf (0 for an unknown scheduler). */
typedef enum rt_scheduler { RT_SCHED_METAFLOW = 0, RT_SCHED_K8S = 1, RT_SCHED_SLURM = 2 } rt_scheduler;
RT_API size_t rt_format_recommendation(const rt_recommendation *rec, rt_scheduler sched, char *buf, size_t cap);

/* ---- notes a person can act on (0.9) ----------------------------------------------------
 * One line each, made from the statistics: what went wrong, what was wasted, what may be
 * missing. rt_summary_notes speaks of one run (the summary, the report, the history);
 * rt_recommend_notes of a recommendation made from runs (recommend). */
typedef enum rt_note_kind {
    RT_NOTE_OOM_KILLED = 1,            /* the OOM killer killed tasks of the job */
    RT_NOTE_ACCOUNTING_INCOMPLETE = 2, /* no cgroup of the job's own: some CPU and I/O unseen */
    RT_NOTE_MEMORY_UNKNOWN = 3,        /* no memory figure at all */
    RT_NOTE_MEMORY_SAMPLED = 4,        /* the memory need is a lower bound from samples */
    RT_NOTE_MEMORY_OVERSIZED = 5,      /* the memory limit is far above the need */
    RT_NOTE_GPU_IDLE = 6,              /* GPUs on the machine, none used by the job */
    RT_NOTE_CPU_THROTTLED = 7,         /* a CPU quota throttled the job */
    RT_NOTE_PRESSURE = 8,              /* tasks stalled waiting for CPU, memory or I/O */
    RT_NOTE_LEFT_BEHIND = 9,           /* processes still ran after the command exited */
    RT_NOTE_FEW_RUNS = 10,             /* a recommendation from few runs */
    RT_NOTE_PHASE_MARKS = 11,          /* (0.14) phase marks were refused, or phases left open */
    RT_NOTE_CPU_OVER_REQUESTED = 12,   /* (0.16) the job used far fewer cores than it asked for */
    RT_NOTE_MEMORY_OVER_REQUESTED = 13, /* (0.16) the job needed far less memory than it asked for */
    RT_NOTE_GPU_UNUSED = 14,           /* (0.16) GPUs asked for and left unused */
    RT_NOTE_TIME_LIMIT = 15,           /* (0.16) the job came near its time limit */
    RT_NOTE_MEMORY_SAFE_SIDE = 16,     /* (0.18) a memory peak the readings could not place:
                                        * page cache taken as not there, and the ask grew */
    RT_NOTE_CPU_RUNS = 17,             /* (0.18) how many of several runs ask for the same cores
                                        * on their own (rt_recommend_notes) */
} rt_note_kind;

/* One note. This struct never grows. */
typedef struct rt_note {
    int kind;        /* rt_note_kind */
    char text[320];  /* one line, no newline, UTF-8 (cut to fit) */
} rt_note;

#define RT_NOTES_MAX 12 /* the most notes either function gives */

typedef struct rt_notes_options {
    size_t struct_size;     /* sizeof(rt_notes_options) as the caller compiled it */
    const char *cgroup_why; /* why the job had no cgroup of its own, in a few words (the tool:
                             * "not root, and no cgroup delegated to this user", "--cgroup off");
                             * NULL: not known */
} rt_notes_options;

#define RT_NOTES_OPTIONS_INIT {.struct_size = sizeof(rt_notes_options)}

/* The kind's name: "oom_killed", "accounting_incomplete", "memory_unknown", "memory_sampled",
 * "memory_oversized", "gpu_idle", "cpu_throttled", "pressure", "left_behind", "few_runs",
 * "phase_marks", "cpu_over_requested", "memory_over_requested", "gpu_unused", "time_limit";
 * "note" for another number. Static. */
RT_API const char *rt_note_kind_name(int kind);

/* The notes of one run into out[0..cap) (opts may be NULL). Returns how many were written (at
 * most RT_NOTES_MAX; 0 for a NULL s). Without a tracked tree only the machine-wide notes
 * (pressure, an OOM kill in the tracker's group) are given. */
RT_API size_t rt_summary_notes(const rt_summary *s, const rt_notes_options *opts, rt_note *out, size_t cap);

/* The notes of a recommendation rec made by rt_recommend from runs[0..n): few runs, a
 * memory need that is unknown or a lower bound, runs that left processes running after their
 * command (the ask covers the command only: --wait-all counts them), an OOM kill or a CPU
 * quota it stays above. Returns how many were written (at most RT_NOTES_MAX). */
RT_API size_t rt_recommend_notes(const rt_summary *const *runs, size_t n, const rt_recommendation *rec,
                                 rt_note *out, size_t cap);

/* ---- the cheapest server: Spare Cores Keeper API (docs/contracts.md §6) --------------- */

typedef struct rt_keeper_options {
    size_t struct_size;  /* sizeof(rt_keeper_options) as the caller compiled it */
    const char *url;     /* NULL: https://keeper.sparecores.net (TRACKER_KEEPER_URL); "off":
                          * no lookup at all (RT_ERR_DISABLED, no log line) */
    double timeout_secs; /* the whole lookup; 0: 5 s */
    rt_log_fn log;
    void *log_user;
    /* added in 0.18: NULL, or room for offline_why_cap bytes, which the call sets to "" and,
     * when the lookup failed for want of any reply from Keeper (no name, no connection, nothing
     * in time: the machine is offline or Keeper is down), to the reason in curl's words,
     * without the URL ("Could not resolve host: keeper.sparecores.net"). A Keeper that replied
     * wrongly (an HTTP error, not a list) leaves it "": only the log line says so. */
    char *offline_why;
    size_t offline_why_cap;
} rt_keeper_options;

#define RT_KEEPER_OPTIONS_INIT {.struct_size = sizeof(rt_keeper_options)}

typedef struct rt_server {
    size_t struct_size;      /* caller sets sizeof(rt_server) */
    char vendor_id[64];
    char api_reference[128]; /* instance type */
    char display_name[128];
    int64_t vcpus;
    double memory_mib;
    int64_t gpu_count;
    double price_usd_per_hour; /* NaN when unknown */
    /* added in 0.15: Keeper's facts of the server's primary CPU, "" when it has none: the
     * manufacturer ("Intel"), the product line ("Xeon") and the model number ("8375C"); the
     * energy of a run there (rt_server_energy_estimate) comes from them */
    char cpu_manufacturer[64];
    char cpu_family[64];
    char cpu_model[128];
} rt_server;

#define RT_SERVER_INIT {.struct_size = sizeof(rt_server)}

/* The cheapest on-demand server that fits rec. Returns RT_OK and fills *out, RT_ERR_NOT_FOUND
 * when none fits, RT_ERR_IO (with a log line) when the API is down, slow past the timeout or
 * replies nonsense (not reached at all: opts->offline_why says why, 0.18), RT_ERR_UNSUPPORTED
 * when no HTTPS client can be loaded, RT_ERR_DISABLED (nothing asked, nothing logged) when
 * opts->url is "off". */
RT_API rt_error rt_keeper_cheapest(const rt_keeper_options *opts, const rt_recommendation *rec, rt_server *out);

/* The on-demand Linux price of one instance type (the lowest over regions, or the region's
 * when region is not NULL), in USD per hour. Errors as rt_keeper_cheapest. */
RT_API rt_error rt_keeper_price(const rt_keeper_options *opts, const char *vendor_id, const char *api_reference,
                                const char *region, double *usd_per_hour);

/* ---- the HTML report ------------------------------------------------------------------- */

/* Collects a run's records for the charts in bounded memory: long runs are reduced to about
 * 2,000 points per series, each with the min and max of what it stands for, so that a
 * one-second spike in a day still shows. */
typedef struct rt_report rt_report;

/* Options of the report's collection (0.10): none yet but the size, room to grow. */
typedef struct rt_report_options {
    size_t struct_size; /* sizeof(rt_report_options) as the caller compiled it */
} rt_report_options;

#define RT_REPORT_OPTIONS_INIT {.struct_size = sizeof(rt_report_options)}

/* A new, empty collection (opts NULL for defaults). Returns RT_OK and *out (free with
 * rt_report_free), RT_ERR_INVALID (out NULL, struct_size too small; last error),
 * RT_ERR_NOMEM. */
RT_API rt_error rt_report_new_with(const rt_report_options *opts, rt_report **out);
/* Before 0.10: the collection, or NULL when out of memory. */
RT_API rt_report *rt_report_new(void) RT_DEPRECATED("rt_report_new_with");
/* Adds one record of rec_size bytes, sizeof(rt_record) as the caller compiled it (0.10; see
 * rt_record for what is read of it). A record whose time or interval is beyond 1e11 s (past the
 * year 5000, or nonsense) is ignored, and so is a NULL r or rec or a rec_size 0. A record
 * shorter than half the one before (the reading as the job ended) ends the last point instead
 * of making one; the reading after the job's end (process_alive 0, nothing of its tree left,
 * its memory 0) adds no memory or GPU level of the job. */
RT_API void rt_report_add_sized(rt_report *r, const rt_record *rec, size_t rec_size);
/* Before 0.10: rt_report_add_sized with this header's sizeof(rt_record), past the end of a
 * shorter record of a caller built with an older header. */
RT_API void rt_report_add(rt_report *r, const rt_record *rec) RT_DEPRECATED("rt_report_add_sized");
RT_API void rt_report_free(rt_report *r);

/* What the report shows besides the charts; any pointer may be NULL (then left out). */
typedef struct rt_report_info {
    size_t struct_size;                /* sizeof(rt_report_info) as the caller compiled it */
    const char *title;                 /* NULL: the job name or "resource-tracker run" */
    const rt_job *job;
    const char *command;               /* the wrapped command as one line */
    const rt_host *host;
    const rt_cloud *cloud;
    int exit_status;                   /* -1: unknown */
    const rt_summary *summary;
    const rt_recommendation *recommendation;
    const rt_server *cheapest;         /* with its price */
    const char *keeper_note;           /* e.g. why the lookup failed */
    double current_price_usd_per_hour; /* where the run ran; NaN: unknown */
    const char *current_instance;      /* "vendor:type" */
    /* added in 0.9 */
    const char *cgroup_why;            /* why the job had no cgroup of its own, for the notes
                                        * (rt_notes_options.cgroup_why); NULL: not known */
    /* added in 0.18 */
    const struct rt_job_view *job_view; /* the runs are a job's nodes (rt_job_view_new): the page
                                        * opens with the job on its nodes, and the rest of it
                                        * (summary, recommendation, charts) is of node_shown */
    const char *node_shown;            /* the node the rest of the page is of; NULL: not said */
    /* added in 0.18 too (the Python package's report) */
    int run_state;                     /* how the run stands (rt_run_state), a figure of the answer
                                        * that takes in the exit status; 0: not said */
    int wording;                       /* the page's words (rt_report_wording); 0: its own */
} rt_report_info;

#define RT_REPORT_INFO_INIT {.struct_size = sizeof(rt_report_info), .exit_status = -1}

/* How the run stands when its report is written (rt_report_info.run_state, 0.18): the answer's
 * status figure, "Running" (or "Pending"; the figures are those so far), "Finished" or "Failed"
 * (in red; its figures may be incomplete), with the exit status when known, in place of the
 * exit status figure. RT_RUN_UNSAID: no status figure (the exit status figure alone). */
typedef enum rt_run_state {
    RT_RUN_UNSAID = 0,
    RT_RUN_RUNNING = 1,
    RT_RUN_FINISHED = 2,
    RT_RUN_FAILED = 3,
} rt_run_state;

/* The HTML page's words (rt_report_info.wording, 0.18). RT_REPORT_WORDING_PY05: those the
 * Python resource-tracker 0.5's report shows, which its users know: the charts titled "CPU
 * Usage", "Memory Usage", "Disk I/O Usage", "Network Usage", "Disk Space Usage", "GPU Usage",
 * "VRAM Usage" (and "Power Usage"), their lines "Process CPU usage", "System CPU usage",
 * "Process memory usage (PSS)", ..., and the status "Pending" for a run still running (the
 * Python package sets it; the tool keeps its own words: "CPU", "job", "machine", "Running"). */
typedef enum rt_report_wording {
    RT_REPORT_WORDING_OWN = 0,
    RT_REPORT_WORDING_PY05 = 1,
} rt_report_wording;

/* Writes the report, one self-contained HTML file that makes no request, to fd: the answer
 * first (what the job used, its exit status or how it stands, what to ask for, the cost, the
 * notes), then the charts (a run under an hour in time since its start, a longer one in UTC
 * clock time; a chart of zeros or of a flat level as one line of text), then the tables; in
 * info's wording. Returns RT_OK, RT_ERR_IO (errno set), RT_ERR_NOMEM or RT_ERR_INVALID. */
RT_API rt_error rt_report_write(const rt_report *r, const rt_report_info *info, int fd);
/* The same to write(user, ...) (0.10), in pieces of at most 64 KiB. */
RT_API rt_error rt_report_write_cb(const rt_report *r, const rt_report_info *info, rt_write_fn write, void *user);

/* ---- a run for people, and any recorded run read back (0.10) -----------------------------
 * rt_summary_write_text_cb: the summary `resource-tracker summary` and --summary print.
 * rt_run_read: a recorded run of any kind the library writes or reads (JSON lines, CSV, the
 * Python resource-tracker's CSV files, a saved tracker snapshot), told apart by its content,
 * fed to statistics and a report. */

/* Text goes to an rt_write_fn (above): a short count is called again with the rest; -1 or 0
 * fails the output (nothing more is written). */

/* What the one who ran a job knows of it that its statistics do not hold. The caller fills it
 * (the pointers are only read during the call). */
typedef struct rt_run_facts {
    size_t struct_size;         /* sizeof(rt_run_facts) as the caller compiled it */
    const rt_job *job;          /* NULL: none; its job_name is shown before the statistics' */
    const char *const *command; /* the command's argv, NULL-terminated; NULL: none */
    int64_t pid;                /* the process tracked (shown when there is no command); 0: none */
    int exit_status;            /* -1: none (a --pid or the machine); above 128: killed by
                                 * signal exit_status - 128 */
    double start_secs;          /* Unix time; 0 or NaN: the first sample's */
    double end_secs;            /* Unix time; 0 or NaN: the last sample's */
    const rt_host *host;        /* NULL: not read */
    const rt_cloud *cloud;      /* NULL (or no vendor_id): said to be "none found" */
    const char *cgroup_why;     /* as rt_notes_options.cgroup_why; NULL: not known */
} rt_run_facts;

#define RT_RUN_FACTS_INIT {.struct_size = sizeof(rt_run_facts), .exit_status = -1}

typedef struct rt_summary_text_options {
    size_t struct_size;      /* sizeof(rt_summary_text_options) as the caller compiled it */
    const char *memory_unit; /* gpu_tracker's names as rt_format_summary; NULL: B, KiB, MiB,
                              * GiB, TiB as fits each figure */
    const char *time_unit;   /* gpu_tracker's names; NULL: "12.34 s", "3 min 04.5 s", ... */
    int scheduler;           /* rt_scheduler whose words the "Ask for" line takes */
    int width;               /* the answer's lines break before this column; 0: 100 (before 0.18: 110) */
    int brief;               /* (0.12) nonzero: the answer and one line of the run only (how long it
                              * ran, its exit status): the end of the tool's view on a terminal */
} rt_summary_text_options;

#define RT_SUMMARY_TEXT_OPTIONS_INIT {.struct_size = sizeof(rt_summary_text_options), .scheduler = RT_SCHED_SLURM}

/* Writes the summary of s as aligned text, UTF-8, lines ending in a newline: the answer (what
 * the job used, what to ask for, the notes), the run (with run's facts; NULL run: a recorded
 * file, whose job, command, host and cloud are not known), the job's process tree,
 * gpu_tracker's parts, the cgroup's limits and pressure, the machine (with opts->brief: the
 * answer and a line "Ran DURATION, exit status N" only). write is handed whole
 * lines (a line, or a note broken over a few; more than 1 KiB in pieces). opts may be NULL. Returns RT_OK;
 * RT_ERR_INVALID for a NULL s or write, an unknown unit or scheduler, a struct_size smaller
 * than a size_t (nothing written); RT_ERR_IO when write failed (what came before stays
 * written). */
RT_API rt_error rt_summary_write_text_cb(const rt_summary *s, const rt_run_facts *run,
                                         const rt_summary_text_options *opts, rt_write_fn write, void *user);

/* The same to a file descriptor (short writes and EINTR retried); RT_ERR_IO with errno set
 * when a write failed, RT_ERR_INVALID for a negative fd. */
RT_API rt_error rt_summary_write_text(const rt_summary *s, const rt_run_facts *run,
                                      const rt_summary_text_options *opts, int fd);

/* (0.18) text written after used columns into out[cap], broken at spaces so that no line passes
 * width columns (UTF-8 characters, not bytes; 0: never broken; a word longer than a line stands
 * alone on its line), each line after the first starting with indent spaces: how the summary's
 * answer breaks its lines (rt_summary_text_options.width), for a caller's lines beside it.
 * Returns the bytes written; out is always terminated (cut at cap). */
RT_API size_t rt_text_wrap(const char *text, size_t used, size_t indent, size_t width, char *out, size_t cap);

/* ---- a job on several nodes (0.18; experimental) -------------------------------------------
 * The runs of one job that ran on several nodes (each node's tracker wrote its own file: a SLURM
 * job on several nodes, torchrun, mpirun, a Kubernetes indexed Job; rt_member) put together:
 * the whole job's CPU and energy, each node's figures and ask, the imbalance between them, the
 * nodes that ended late or idled, and the ask per node in the scheduler's words, sized by the
 * node that needs most (docs/answers.md, "A job on several nodes"). */

typedef struct rt_job_node {
    const char *node;         /* the node's name (its runs' member node; "?" when none said) */
    size_t runs;              /* its runs: one per task, or one for the node (--per-node) */
    int64_t node_index;       /* member node_index; -1 */
    int64_t first_rank;       /* the lowest rank of its runs; -1 */
    double start_secs, end_secs; /* its runs' earliest start and latest end (its own clock) */
    double cpu_secs;          /* its runs' CPU time, summed */
    double cores_mean;        /* cpu_secs over its duration */
    double cores_peak;        /* its runs' peaks summed (a bound: they may peak apart) */
    double memory_need_mib;   /* its runs' memory needs summed; NaN: unknown */
    int memory_sampled;       /* 1: a run's need is from samples only (a lower bound) */
    double gpu_usage_mean;    /* GPUs its runs kept busy on average, summed; NaN: no GPU */
    double gpu_count;         /* GPUs on the node; NaN: none seen */
    double energy_joules;     /* its runs' energy (the tracked trees'), summed; NaN: none */
    int64_t ask_cores;        /* cores to ask for on the node: its runs' answers summed */
    int64_t ask_cores_task;   /* the most any one of its runs asks */
    int64_t ask_memory_mib;   /* memory to ask for the node: its runs' answers summed;
                               * RT_NULL_I64: unknown (a run without one: no tracked tree) */
    int64_t ask_gpus;         /* GPUs to ask for */
    double time_limit_secs;   /* the longest of its runs' time limits to ask (rt_recommendation's);
                               * NaN: none */
    double late_secs;         /* how much later than the median node it ended */
    int straggler;            /* 1: ended late: late_secs over 10 s and 10% of the job's span */
    int idled;                /* 1: its cores' mean under half the median node's */
    int gpus_idle;            /* 1: GPUs on the node, each kept busy under 5% of the time on average */
    int64_t tasks;            /* the tasks its runs stand for: one a run; a --per-node run (its
                               * member's per_node) the job's tasks over its nodes (ranks / nodes,
                               * rounded up; 1 when not said) */
} rt_job_node;

typedef struct rt_job_view {
    size_t struct_size;       /* sizeof(rt_job_view) as the caller compiled it */
    const char *job_id, *step_id, *from; /* the runs' member (the first run's step and from) */
    size_t runs;              /* runs put together */
    size_t node_count;
    const rt_job_node *nodes; /* by node index, else by name (owned by the view) */
    int64_t nodes_said;       /* the job's nodes as the runs say it (the most said); -1 */
    int64_t ranks_said;       /* the job's tasks as the runs say it; -1 */
    size_t ranks_seen;        /* distinct ranks among the runs */
    int64_t duplicate_rank;   /* a rank two runs claim; -1: none */
    const char *duplicate_nodes[2]; /* the nodes of those two runs */
    double start_secs, end_secs; /* the earliest start and latest end over the nodes */
    double start_spread_secs; /* the latest node's start less the earliest's */
    double cpu_secs;          /* the whole job's CPU time */
    double core_hours;        /* cores asked per node x nodes x the job's span, in hours: what
                               * the ask below reserves */
    double energy_joules;     /* the tracked trees' energy over the nodes; NaN: none */
    double cpu_median_secs;   /* the median node's CPU time */
    size_t cpu_most, cpu_least; /* the nodes that used the most and the least CPU (indices) */
    double cpu_imbalance_pct; /* (the most - the median) / the median x 100 */
    size_t memory_most;       /* the node that needs the most memory (index) */
    size_t cores_most;        /* the node that asks the most cores (index) */
    int64_t ask_nodes, ask_tasks_per_node, ask_cores_per_task, ask_memory_mib_per_node, ask_gpus_per_node;
    double ask_time_limit_secs; /* the longest of the nodes' time limits; NaN: none */
    int per_node;             /* 1: a run tracked its node's tasks (--per-node): a node's tasks
                               * share its ask, cores_per_task its cores over its tasks */
} rt_job_view;

/* Puts runs[0..n) (each a file's summary with a member; rt_stats_summary) together as one job:
 * every run must name the same job_id (RT_ERR_INVALID otherwise, or for a run without one, or
 * n 0). Runs on one node (the same member node) are summed as that node's. Returns RT_OK and
 * *out (rt_job_view_free), RT_ERR_NOMEM. The view keeps pointers into the runs' summaries: they
 * must outlive it. */
RT_API rt_error rt_job_view_new(const rt_summary *const *runs, size_t n, rt_job_view **out);
RT_API void rt_job_view_free(rt_job_view *v);
/* The ask per node in sched's words: "--nodes=3 --ntasks-per-node=1 --cpus-per-task=2
 * --mem=3072M --time=0:30:00" (SLURM), as rt_format_recommendation does for one run. Returns the
 * length needed like snprintf. */
RT_API size_t rt_job_view_ask(const rt_job_view *v, rt_scheduler sched, char *buf, size_t cap);
/* The view as aligned text for people (write as rt_summary_write_text_cb; opts' units and
 * scheduler used, NULL: the defaults): the job's line, what it used, a line per node, the
 * imbalance, stragglers and idle nodes, the ask and what decided it, what is missing. */
RT_API rt_error rt_job_view_write_text_cb(const rt_job_view *v, const rt_summary_text_options *opts, rt_write_fn write,
                                          void *user);
/* The view as one JSON object (docs/contracts.md section 8, "A job on several nodes"): into buf
 * (cap bytes), *len the length it needs (as rt_format_summary_json). */
RT_API rt_error rt_format_job_view_json(const rt_job_view *v, char *buf, size_t cap, size_t *len);

typedef struct rt_run_read_options {
    size_t struct_size; /* sizeof(rt_run_read_options) as the caller compiled it */
    rt_log_fn log;      /* the reader's "FILE:LINE: problem" warnings and errors; NULL: dropped */
    void *log_user;
} rt_run_read_options;

#define RT_RUN_READ_OPTIONS_INIT {.struct_size = sizeof(rt_run_read_options)}

/* What rt_run_read found; the library fills it (the caller sets struct_size). */
typedef struct rt_run_read_info {
    size_t struct_size; /* caller sets sizeof(rt_run_read_info) */
    const char *format; /* rt_reader_format's names, or "snapshot"; NULL until known (static) */
    uint64_t records;   /* samples fed to the statistics */
    uint64_t skipped;   /* malformed lines skipped (each logged as a warning) */
    int opened;         /* 1 once the file was open and its kind known: a failure after that
                         * is one while reading (a snapshot is read whole when it opens) */
    int logged;         /* 1: message was handed to opts->log as well (the reader's own) */
    char message[512];  /* why it failed, "FILE: problem" or "FILE:LINE: problem"; "" on RT_OK */
} rt_run_read_info;

/* Reads the recorded run at path ("-": stdin, never a snapshot) and feeds every sample to
 * each of stats[0..nstats) and to report (NULL: none). A snapshot is known as a JSON document
 * opening with "metadata", gzipped or not (0.18: before, any gzip file was taken for one);
 * anything else goes to the reader (rt_reader_open), which streams it, gzipped or not.
 * Malformed lines are skipped and logged, never fatal; a line longer than 16 MiB ends the read
 * (RT_ERR_PARSE, what came before fed). info may be NULL. Returns RT_OK (at least one sample
 * read); RT_ERR_NOT_FOUND or RT_ERR_IO when the file cannot be opened;
 * RT_ERR_PARSE for no format known, a line too long or no valid sample at all (a snapshot
 * that does not load: rt_tracker_load's error);
 * RT_ERR_IO when reading failed midway (info->opened 1: the statistics hold what came
 * before); RT_ERR_NOMEM; RT_ERR_INVALID (a NULL path, stats NULL with nstats > 0, a
 * struct_size smaller than a size_t). */
RT_API rt_error rt_run_read(const char *path, const rt_run_read_options *opts, rt_stats *const *stats,
                            size_t nstats, rt_report *report, rt_run_read_info *info);

/* ==========================================================================================
 * Streaming a run to the Sentinel API and S3 (docs/contracts.md §5): register the run, upload the
 * samples as gzipped CSV batches every upload interval, close the run at the end. All network
 * work is done on the stream's own thread: rt_stream_add never waits on the network. Nothing
 * is lost: a batch that fails is retried with backoff and kept (in memory up to a bound, then
 * in a spill file) until it is uploaded or, at the end, sent inline. The token, the S3 secret
 * and the session token never appear in any log message. */
typedef struct rt_stream rt_stream;

typedef struct rt_stream_options {
    size_t struct_size;          /* sizeof(rt_stream_options) as the caller compiled it */
    const char *api_url;         /* NULL: https://api.sentinel.sparecores.net (SENTINEL_API_URL) */
    const char *token;           /* SENTINEL_API_TOKEN; required */
    double upload_interval_secs; /* 0: 60 (TRACKER_UPLOAD_INTERVAL) */
    const char *s3_endpoint_url; /* AWS_ENDPOINT_URL_S3 (path style); NULL: AWS */
    const char *region;          /* AWS_REGION; NULL: asked of the bucket, else eu-central-1 */
    const rt_job *job;           /* copied with its strings */
    const char *const *command;  /* the wrapped argv, NULL-terminated, or NULL; copied */
    const rt_host *host;         /* may be NULL; the fields are copied at rt_stream_start */
    rt_cloud_discovery *cloud;   /* may be NULL; the stream asks it for the result (within its
                                  * 2 s bound) before registering; the stream holds a reference
                                  * of its own (0.10): the caller may free its handle at once */
    const char *spill_dir;       /* where batches go when memory is full or at a failed end;
                                  * NULL: $XDG_STATE_HOME/resource-tracker (~/.local/state/...) */
    size_t memory_limit_bytes;   /* gzip bytes kept in memory before spilling; 0: 8 MiB */
    double finish_timeout_secs;  /* the most rt_stream_finish waits; 0: 10 */
    rt_log_fn log;               /* NULL: messages are dropped; called from the stream's thread */
    void *log_user;
    const char *spill_fallback_dir; /* (0.18) a directory of the user's own for when spill_dir
                                  * cannot be made or is not ours alone (an unwritable home, one
                                  * planted by another user): $XDG_RUNTIME_DIR/resource-tracker;
                                  * then /tmp/resource-tracker-EUID, then a fresh
                                  * /tmp/resource-tracker-EUID-XXXXXX, the move said once */
    int csv_energy;              /* (0.18) non-zero: the batches' rows (and the inline CSV) carry
                                  * the four energy columns after the 32 (RT_FORMAT_CSV_ENERGY);
                                  * 0: the 32 of the Sentinel's contract */
} rt_stream_options;

#define RT_STREAM_OPTIONS_INIT {.struct_size = sizeof(rt_stream_options)}

/* Starts the stream's thread (registration happens there, with retries). Returns at once:
 * RT_OK and *out; RT_ERR_INVALID (no token, a bad URL, struct_size too small);
 * RT_ERR_UNSUPPORTED (libcurl or zlib cannot be loaded: nothing started); RT_ERR_NOMEM;
 * RT_ERR_SYSTEM when the thread cannot be started (errno tells why: EAGAIN at a task limit). */
RT_API rt_error rt_stream_start(const rt_stream_options *opts, rt_stream **out);

/* Adds one sample to the current batch (its CSV row, docs/contracts.md §3). Never blocks on the
 * network; O(row). RT_OK, or RT_ERR_NOMEM when even the spill failed (the row is counted lost). */
RT_API rt_error rt_stream_add(rt_stream *st, const rt_sample *sample);

/* Ends the run: the last batch is uploaded, then POST /runs/{id}/finish with exit_code and the
 * status ("failed" when failed is non-zero), within opts->finish_timeout_secs in all. What could
 * not be sent stays in the spill directory and is logged (how many rows). RT_OK when the run was
 * finished at the API; RT_ERR_IO otherwise. Call once. */
RT_API rt_error rt_stream_finish(rt_stream *st, int exit_code, int failed);

/* The stream's last failure (0.10; as rt_otlp_errmsg): what its thread last could not do, in
 * the words of its log message without the "stream: " ("cannot register the run at the
 * Sentinel API (HTTP 503)", "upload of batch 000003 failed (HTTP 403: ...)", "cannot refresh the
 * upload credentials (...)", "cannot spill batch ...", "cannot finish the run at the Sentinel
 * API (...)"); "" when none so far. A later success does not clear it: after rt_stream_finish
 * returned RT_ERR_IO it says why. Never the token nor the S3 keys. Copied under the stream's
 * lock into storage of st, valid until the next rt_stream_errmsg on st or its rt_stream_free:
 * call it from one thread at a time. "" for NULL. */
RT_API const char *rt_stream_errmsg(rt_stream *st);

/* Frees the stream (finishing it first with exit code 0 if rt_stream_finish was not called).
 * NULL is allowed. */
RT_API void rt_stream_free(rt_stream *st);

/* Delivers the runs left in the spill directory (0.11): a run that could not register or could
 * not send every batch keeps a record beside its spill files ({key}.run, 0600, with its
 * registration body or run id, what it uploaded and its end; never a credential: a delivery asks
 * for fresh upload credentials); each run whose lock no other
 * process holds (a live run, another deliverer: skipped, counted as left) is registered with
 * its recorded body when it never was, its batches uploaded in order, and finished with its
 * recorded exit status and time, each within opts->finish_timeout_secs. Uses opts' api_url,
 * token, s3_endpoint_url, region, spill_dir, finish_timeout_secs and log (called from the
 * calling thread). *delivered and *left (may be NULL) count runs. RT_OK when none is left;
 * RT_ERR_IO when some are (kept for a later try); RT_ERR_INVALID (no token);
 * RT_ERR_UNSUPPORTED (libcurl or zlib cannot be loaded). A live stream does the same for older
 * runs once its own run is registered. */
RT_API rt_error rt_stream_deliver(const rt_stream_options *opts, unsigned *delivered, unsigned *left);

/* One run left in a spill directory, as rt_stream_list sees it (0.18). */
typedef struct rt_spilled_run {
    const char *key;      /* its local key (local-TIME-PID-RANDOM) */
    const char *dir;      /* the spill directory it is in */
    const char *run_id;   /* its run at the API; "" while it never registered */
    unsigned batches;     /* spill files of batches still to upload */
    uint64_t rows;        /* their rows (0 for a file that cannot be read) */
    unsigned missing;     /* batches its record counts that have no file (deleted, or lost with
                           * a tracker killed before it spilled them) */
    int ended;            /* its end is known: exit_code then holds its exit status */
    int exit_code;
    int finish_sent;      /* the API took its finish call: only batches are left */
    int ours;             /* made with the options' token and API URL: rt_stream_deliver sends it */
    int held;             /* a live tracker or a delivery holds it now */
    int damaged;          /* its record cannot be read: its batches cannot be delivered */
} rt_spilled_run;

/* Calls fn for each run left in opts' spill directory and its fallbacks (what
 * rt_stream_deliver would look at; a record that is damaged, and spill files with no record,
 * included), oldest first, without sending anything or taking any run's lock for longer than
 * a look. opts->token may be NULL (then no run is "ours"). Returns RT_OK, RT_ERR_INVALID or
 * RT_ERR_NOMEM. */
RT_API rt_error rt_stream_list(const rt_stream_options *opts, void (*fn)(const rt_spilled_run *run, void *user),
                               void *user);

/* ==========================================================================================
 * Embedding (0.5): a background tracker on a thread of the calling program, for a process
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
    /* added in 0.8: how the summary's usage (rt_usage) counts: see rt_usage_options */
    double expected_cores;        /* 0: all cores */
    const char *const *gpu_uuids; /* copied; the GPUs whose utilization counts */
    size_t gpu_uuid_count;        /* 0: all */
    /* added in 0.14: phases (rt_tracker_phase_start/stop) */
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
    /* added in 0.6: the tree's cgroup (NaN without one; see rt_record), then the pressure in
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
    /* added in 0.8: gpu_tracker's split of the tree (rt_process_part; NaN without a tree):
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
    /* added in 0.9: what the memory need and the notes are made from (see rt_record) */
    RT_COL_PROC_RSS_HWM_MIB = 78,               /* the highest peak RSS of one process (kernel) */
    RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB = 79,    /* the job group's, when it holds only the tree */
    RT_COL_PROC_GPU_VRAM_PEAK_MIB = 80,         /* NVML accounting's VRAM peak */
    RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL = 81, /* since tracking began */
    RT_COL_PROC_CGROUP_EXCLUSIVE = 82,          /* 1: the group holds only the tree; 0: others too */
    RT_COL_CGROUP_PIDS = 83,                    /* tasks in the group now */
    /* added in 0.15: rt_record's energy figures ("Energy and carbon") */
    RT_COL_ENERGY_JOULES = 84,                  /* the machine's, in the interval */
    RT_COL_PROC_ENERGY_JOULES = 85,             /* the tree's share, in the interval */
    RT_COL_ENERGY_METHOD = 86,                  /* of the machine's: 1 measured, 2 sampled,
                                                 * 3 estimated; NaN: no figure */
    RT_COL_PROC_ENERGY_METHOD = 87,             /* of the tree's, the same way */
    RT_COL_IDLE_POWER_WATTS = 88,               /* the machine's floor so far */
    RT_COL_GPU_POWER_THROTTLED_SECS = 89,       /* since tracking began, over the GPUs */
    RT_COL_GPU_THERMAL_THROTTLED_SECS = 90,
    /* added in 0.16 */
    RT_COL_PROC_VMS_MIB = 91,                   /* the tree's virtual memory now (rt_process.vms_mib) */
    /* added in 0.18 */
    RT_COL_PROC_WALK_AGE_SECS = 92, /* how old the walk's own figures are (rt_process.walk_age_secs) */
    RT_COL_PROC_RSS_HWM_TREE_MIB = 93, /* the processes' peaks at once (rt_process.rss_hwm_tree_mib) */
    RT_COL_PROC_UNRECLAIMABLE_UNSURE_MIB = 94, /* the safe side's part of the unreclaimable peak */
    RT_COL_PRESSURE_GROUP = 95,        /* 1: the pressure columns are the group's, 0: the machine's */
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
/* The same to write(user, ...) (0.10; see rt_report_write_cb). write runs with the tracker's
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
#define RT_SAVE_PY05 2 /* (0.13) the rows with the Python tracker 0.5's names and units (memory_mib
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
/* The same to write(user, ...) (0.10), in pieces; extra_json that is no JSON object is the
 * last error (and so for rt_tracker_save). The tracker's lock is not held during write. */
RT_API rt_error rt_tracker_save_cb(rt_tracker *t, const char *extra_json, int flags, rt_write_fn write,
                                   void *user);

/* A stopped tracker holding the samples of a snapshot (gzipped or not: recognised by its
 * first bytes), with its statistics, recommendation and report as for a live run. Bounds
 * (0.18; RT_ERR_PARSE past them, docs/contracts.md §12): at most 2 GiB of JSON, plain or
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
/* ==========================================================================================
 * Export (0.7): into the systems fleets already run. Prometheus scrapes /metrics from a small
 * server on its own thread; node_exporter's textfile collector reads a batch job's figures from
 * a file replaced atomically; OTLP/HTTP (JSON) pushes metrics to any OpenTelemetry collector.
 * Each exporter takes samples on the caller's thread without I/O and never waits on a client
 * or the network there. Every series carries the job's metadata as labels (attributes in
 * OTLP): job_name, project_name, stage_name, task_name, team, env, language, orchestrator,
 * executor, external_run_id, container_image (those set) and each tag KEY=VALUE as tag_KEY
 * (characters outside [A-Za-z0-9_] of KEY become '_'); never a label per process. */

/* ---- Prometheus /metrics ------------------------------------------------------------------ */
typedef struct rt_prom_server rt_prom_server;

typedef struct rt_prom_options {
    size_t struct_size;         /* sizeof(rt_prom_options) as the caller compiled it */
    const char *address;        /* numeric IPv4 or IPv6 address to listen on; NULL: 127.0.0.1 */
    int port;                   /* 0..65535; 0: a free port (rt_prom_port tells which) */
    const rt_job *job;          /* labels of every series; copied with its strings */
    const rt_host *host;        /* resource_tracker_info's host labels; copied; may be NULL */
    rt_cloud_discovery *cloud;  /* once it has a result, the cloud's labels join
                                 * resource_tracker_info (never waited for); may be NULL; the
                                 * server holds a reference of its own (0.10) */
    size_t max_clients;         /* connections held at once; 0: 64. When all are taken, a new
                                 * connection replaces the one idle the longest */
    double client_timeout_secs; /* a request must arrive, and its reply be taken, within this;
                                 * 0: 10 */
    rt_log_fn log;              /* NULL: messages are dropped; also called from the server's thread */
    void *log_user;
} rt_prom_options;

#define RT_PROM_OPTIONS_INIT {.struct_size = sizeof(rt_prom_options)}

/* Listens (on the caller's thread, so that a taken port is known at once) and starts the
 * server's thread. It answers GET and HEAD of /metrics with the Prometheus text format 0.0.4,
 * or OpenMetrics 1.0.0 when the request's Accept asks for application/openmetrics-text;
 * another path 404, another method 405. Before the first rt_prom_publish only
 * resource_tracker_info is served. Returns RT_OK and *out; RT_ERR_INVALID (a bad address or
 * port, struct_size too small); RT_ERR_IO with errno set when the socket cannot listen
 * (EADDRINUSE, EACCES, EADDRNOTAVAIL, ...); RT_ERR_SYSTEM when the thread cannot be started
 * (errno); RT_ERR_NOMEM. */
RT_API rt_error rt_prom_start(const rt_prom_options *opts, rt_prom_server **out);

/* Sets the host whose facts label resource_tracker_info from the next rt_prom_publish on
 * (copied; for a server started before the host was read). RT_OK, RT_ERR_NOMEM (the previous
 * host stays), RT_ERR_INVALID (NULL). */
RT_API rt_error rt_prom_set_host(rt_prom_server *srv, const rt_host *host);

/* The port the server listens on (the one the kernel chose for port 0); -1 for NULL. */
RT_API int rt_prom_port(const rt_prom_server *srv);

/* Makes sample the figures served from now on. The formatting happens here; what the server's
 * thread is sending is swapped under a lock held only for the exchange of two pointers.
 * Returns RT_OK, RT_ERR_NOMEM (the previous figures stay), RT_ERR_INVALID (NULL). */
RT_API rt_error rt_prom_publish(rt_prom_server *srv, const rt_sample *sample);

/* The server's last failure (0.10; as rt_otlp_errmsg): "cannot accept connections (Too many open
 * files)", "poll failed (...)", "out of memory for a client; connection refused", "out of
 * memory formatting /metrics"; "" when none so far. A later success does not clear it. A
 * client that is slow or sends a bad request is its own trouble, not the server's: not here.
 * Copied under the server's lock into storage of srv, valid until the next rt_prom_errmsg on
 * srv or its rt_prom_free: call it from one thread at a time. "" for NULL. */
RT_API const char *rt_prom_errmsg(rt_prom_server *srv);

/* Stops the thread, closes every connection and the socket, and frees. NULL is allowed. */
RT_API void rt_prom_free(rt_prom_server *srv);

/* Formats one sample as the body /metrics serves: the Prometheus text format 0.0.4
 * (openmetrics 0) or OpenMetrics 1.0.0 (openmetrics 1, ending with "# EOF"). Gauges and
 * counters (counters end in _total and never go back within a run), units in the names
 * (_bytes, _seconds, _cores, _ratio, _celsius, _watts), the job's labels on every series, one
 * series per disk, interface and GPU (labelled device, interface, gpu); host and cloud, when
 * not NULL, label resource_tracker_info, which is always there (with version). While a phase
 * is open at the sample (sample->phases, 0.14), the tree's and its parts' series are labelled
 * phase="NAME" with the innermost one's name (as it is: the /metrics server caps the values at
 * 64 names, later ones "other"). sample may be NULL (only resource_tracker_info). Returns the
 * length needed like snprintf (buf NUL-terminated when cap > 0). */
RT_API size_t rt_format_prometheus(const rt_sample *sample, const rt_job *job, const rt_host *host,
                                   const rt_cloud *cloud, int openmetrics, char *buf, size_t cap);

/* ---- node_exporter textfile --------------------------------------------------------------- */

/* A batch job's figures, as Prometheus documents them for batch jobs. Filled by the caller. */
typedef struct rt_job_status {
    size_t struct_size;       /* sizeof(rt_job_status) as the caller compiled it */
    double start_secs;        /* Unix time tracking (and the command) started */
    double end_secs;          /* Unix time it ended; NaN while it runs */
    double duration_secs;     /* seconds so far, or of the whole run */
    double cpu_secs;          /* CPU seconds of the tracked tree (cpu_secs_total); NaN: no tree */
    double memory_peak_bytes; /* the tree's peak memory (the cgroup's peak charge, else the
                               * peak RSS); NaN: no tree */
    int64_t exit_status;      /* the tool's exit status (docs/contracts.md §1); RT_NULL_I64
                               * while the job runs, or without a command */
    uint64_t samples;         /* samples taken */
    /* added in 0.15 ("Energy and carbon"): the tracked tree's energy since tracking began
     * (rt_energy's process_energy_joules_total) and its method ("measured", "sampled",
     * "estimated"); a NULL method (RT_JOB_STATUS_INIT's) or a NaN: no figure */
    double energy_joules;
    const char *energy_method;
    /* added in 0.16 ("Where the job runs"): what the job was given (NULL: nothing said); the
     * file then has each requested figure and the efficiencies so far (CPU seconds / (cores x
     * duration), peak memory / memory, time since the job began / its time limit) */
    const struct rt_request *request;
} rt_job_status;

#define RT_JOB_STATUS_INIT {.struct_size = sizeof(rt_job_status)}

/* Writes DIR/resource_tracker_NAME.prom for node_exporter's textfile collector: the status as
 * gauges (resource_tracker_job_*), labelled with the job's metadata; NAME is name with every
 * character outside [A-Za-z0-9_.-] made '_' ("job" for NULL or empty). Atomic: a temporary
 * file in DIR (a name node_exporter ignores, mode 0666 less the umask) is written and renamed
 * over the target, so a reader sees the old file or the new one, and a symlink at the target
 * is replaced, never followed. The file and the directory are synced (fsync) only for the
 * status of an ended job (end_secs set): the writes while it runs cost no disk flush. The full path goes to path (pathlen
 * bytes) when not NULL. The tree's energy (0.15) is resource_tracker_job_energy_joules{method}
 * where the status has it (a struct_size that covers it); what the job was given (0.16) is
 * resource_tracker_job_requested_{cpu_cores,memory_bytes,gpus}{from},
 * resource_tracker_job_time_limit_seconds{from} and
 * resource_tracker_job_efficiency_ratio{resource="cpu"|"memory"|"time_limit"}. Returns RT_OK; RT_ERR_IO with errno set
 * (nothing left behind); RT_ERR_INVALID (NULL dir or status, struct_size smaller than rt_job_status
 * of 0.14, a path too long); RT_ERR_NOMEM. */
RT_API rt_error rt_prom_textfile_write(const char *dir, const char *name, const rt_job *job,
                                       const rt_job_status *status, char *path, size_t pathlen);

/* ---- OTLP/HTTP push ----------------------------------------------------------------------- */
typedef struct rt_otlp rt_otlp;

typedef struct rt_otlp_options {
    size_t struct_size;           /* sizeof(rt_otlp_options) as the caller compiled it */
    const char *url;              /* the metrics endpoint, e.g. http://127.0.0.1:4318/v1/metrics
                                   * (http:// or https://); required */
    const char *const *headers;   /* extra request headers "Name: value", NULL-terminated (e.g.
                                   * OTEL_EXPORTER_OTLP_HEADERS), or NULL; copied; their values
                                   * never appear in a log message */
    const rt_kv *resource;        /* resource attributes the user gave (OTEL_RESOURCE_ATTRIBUTES,
                                   * OTEL_SERVICE_NAME as service.name); copied; they win over
                                   * the tracker's own of the same key */
    size_t resource_count;
    double interval_secs;         /* seconds between pushes; 0: 10 */
    double timeout_secs;          /* the most one request takes; 0: 10 */
    int no_gzip;                  /* 1: bodies uncompressed; 0: gzip (Content-Encoding) */
    size_t max_queue_samples;     /* samples kept while the receiver cannot take them; 0: 1024.
                                   * Past it the oldest are dropped (counted; one warning) */
    double finish_timeout_secs;   /* the most rt_otlp_finish waits; 0: 10 */
    const rt_job *job;            /* copied with its strings; may be NULL */
    const char *const *command;   /* the wrapped argv, NULL-terminated, or NULL; copied */
    const rt_host *host;          /* copied; may be NULL */
    rt_cloud_discovery *cloud;    /* may be NULL; its result (waited for before the first push,
                                   * at most 2 s from the start; copied) adds cloud.* attributes;
                                   * the exporter holds a reference of its own (0.10) and does
                                   * not look at it once rt_otlp_finish returned */
    rt_log_fn log;                /* NULL: dropped; called from the exporter's thread */
    void *log_user;
} rt_otlp_options;

#define RT_OTLP_OPTIONS_INIT {.struct_size = sizeof(rt_otlp_options)}

/* Starts the exporter's thread, which pushes every interval_secs one ExportMetricsServiceRequest
 * (OTLP/HTTP, JSON encoding) holding a data point of each metric for every sample added since
 * the last push that was accepted (at most 512 samples and 64 MiB of JSON a request: more goes
 * in several, in order; a sample larger than that alone is dropped). Metric names follow
 * OpenTelemetry's semantic conventions where they exist (system.cpu.utilization,
 * system.cpu.time, system.memory.usage, process.cpu.time, ...; resource attributes
 * service.name, host.name, cloud.*). A push is
 * retried, with exponential backoff, only on HTTP 429, 502, 503 and 504 (honouring
 * Retry-After) and when the receiver cannot be reached or does not answer in time; any other
 * reply drops the push (one warning). Returns at once: RT_OK and *out; RT_ERR_INVALID (no URL
 * or not http(s), a header without ':', struct_size too small); RT_ERR_UNSUPPORTED (libcurl,
 * or zlib with gzip, cannot be loaded: nothing started); RT_ERR_NOMEM; RT_ERR_SYSTEM when the
 * thread cannot be started (errno). */
RT_API rt_error rt_otlp_start(const rt_otlp_options *opts, rt_otlp **out);

/* Queues one sample's figures (copied; no formatting, no I/O). RT_OK, RT_ERR_NOMEM,
 * RT_ERR_INVALID (NULL, or once rt_otlp_finish was called: the sample is not queued). */
RT_API rt_error rt_otlp_add(rt_otlp *ex, const rt_sample *sample);

/* Pushes everything queued, retrying within opts->finish_timeout_secs in all, and stops the
 * thread. RT_OK when every sample added was delivered; RT_ERR_IO otherwise (logged: how many
 * samples were not). Call once. */
RT_API rt_error rt_otlp_finish(rt_otlp *ex);

/* The exporter's last failure (0.10; sqlite3_errmsg for a handle with a thread of its own): the
 * last push that failed, as the receiver or libcurl put it ("HTTP 503", "HTTP 400: what the
 * receiver said", "Couldn't connect to server", "Timeout was reached"), samples dropped (a full
 * queue, a sample too large), or samples left undelivered at the end; "" when none so far. A
 * later success does not clear it: after rt_otlp_finish returned RT_ERR_IO it says why. Never
 * the values of the options' headers (redacted as in the log messages). Copied under the
 * exporter's lock into storage of ex, valid until the next rt_otlp_errmsg on ex or its
 * rt_otlp_free: call it from one thread at a time. "" for NULL. */
RT_API const char *rt_otlp_errmsg(rt_otlp *ex);

/* Frees the exporter (finishing it first if rt_otlp_finish was not called). NULL is allowed. */
RT_API void rt_otlp_free(rt_otlp *ex);

/* ==========================================================================================
 * Sinks and the pipeline (0.10; experimental: may change in a minor version)
 *
 * A sink is where samples go: the writer, the Sentinel stream, the /metrics server, the OTLP
 * exporter, node_exporter's textfile, the statistics and the report are each one, and a caller
 * can make its own from three functions (add, finish, free). A pipeline hands each sample to
 * every sink it holds, in the order they were attached, and makes the sample's record
 * (rt_record) once for the sinks that read it: the figures as the embedded tracker keeps them
 * (ratios, counts and the interval's seconds as 32-bit floats; time, bytes and MiB exact), so
 * statistics fed by the tool, by the embedded tracker or by a run read back from a file see the
 * same values. The tool and the embedded tracker both fan samples out through one.
 * Not thread-safe: one thread adds, sets the host and finishes. */

typedef struct rt_sink rt_sink;
typedef struct rt_pipeline rt_pipeline;

/* What the sinks learn at the end of a run. */
typedef struct rt_run_end {
    size_t struct_size;  /* sizeof(rt_run_end) as the caller compiled it */
    int64_t exit_status; /* the tool's exit status (docs/contracts.md §1); RT_NULL_I64 without a
                          * command */
    int failed;          /* 1: the run failed (the command exited non-zero) */
} rt_run_end;

#define RT_RUN_END_INIT {.struct_size = sizeof(rt_run_end), .exit_status = RT_NULL_I64}

/* A sink's functions; every one but add may be NULL. self is the pointer given to rt_sink_new. */
typedef struct rt_sink_ops {
    size_t struct_size; /* sizeof(rt_sink_ops) as the caller compiled it */
    /* One sample (sample, valid during the call) and its record (rec: NULL unless reads_record;
     * its job_name is the pipeline's), or one record read back (sample NULL). RT_OK, or an
     * error: the pipeline then gives this sink nothing more (its finish and free still run). */
    rt_error (*add)(void *self, const rt_sample *sample, const rt_record *rec);
    /* The host's facts and the cloud, either NULL when unknown, valid during the call only:
     * the sink copies what it keeps. */
    void (*set_host)(void *self, const rt_host *host, const rt_cloud *cloud);
    /* The run ended (end valid during the call). It may start work that free completes (within
     * the sink's own bound), so that the sinks end side by side. */
    rt_error (*finish)(void *self, const rt_run_end *end);
    void (*free)(void *self);
    int reads_record; /* 1: add gets the record */
} rt_sink_ops;

#define RT_SINK_OPS_INIT {.struct_size = sizeof(rt_sink_ops)}

/* Makes a sink of the caller's functions (ops copied) and self. RT_OK and *out; RT_ERR_INVALID
 * (no ops or add, struct_size too small); RT_ERR_NOMEM. */
RT_API rt_error rt_sink_new(const rt_sink_ops *ops, void *self, rt_sink **out);

/* The library's outputs as sinks. Each takes what it is given: the sink frees it (a sink that
 * cannot be made frees it at once, and *out is NULL), except the statistics and the report,
 * which the caller keeps and reads after the run (they must outlive the sink). RT_OK and *out;
 * RT_ERR_INVALID (NULL); RT_ERR_NOMEM.
 *  - writer: each sample written; a failed write (RT_ERR_IO, errno set: EPIPE for a closed
 *    pipe) ends the sink. Freeing it does not close the writer's fd.
 *  - stream: each sample added; the run's end is rt_stream_finish with the exit status (0
 *    without a command) and the failed flag, waiting up to its finish timeout.
 *  - prom: each sample published; the host's facts set; the run's end stops serving.
 *  - otlp: each sample queued; the run's end starts the last push (rt_otlp_finish) on a thread of
 *    its own and freeing the sink waits for it (within the exporter's finish timeout).
 *  - stats, report: each record added (rt_stats_add_sized, rt_report_add_sized); a sample
 *    without a record is not counted. */
RT_API rt_error rt_writer_sink_new(rt_writer *w, rt_sink **out);
RT_API rt_error rt_stream_sink_new(rt_stream *st, rt_sink **out);
RT_API rt_error rt_prom_sink_new(rt_prom_server *srv, rt_sink **out);
RT_API rt_error rt_otlp_sink_new(rt_otlp *ex, rt_sink **out);
RT_API rt_error rt_stats_sink_new(rt_stats *st, rt_sink **out);
RT_API rt_error rt_report_sink_new(rt_report *r, rt_sink **out);

/* node_exporter's textfile while a job runs (rt_prom_textfile_write's file). */
typedef struct rt_textfile_options {
    size_t struct_size;   /* sizeof(rt_textfile_options) as the caller compiled it */
    const char *dir;      /* the collector's directory; required; copied */
    const char *name;     /* the file's NAME (rt_prom_textfile_write); copied */
    const rt_job *job;    /* copied with its strings; may be NULL */
    double every_secs;    /* the most often the file is rewritten while the job runs; 0: 5 */
    double start_secs;    /* Unix time the job started; 0: now */
    const char *label;    /* how messages name the file's setting; NULL: "textfile" */
    rt_log_fn log;        /* NULL: dropped */
    void *log_user;
} rt_textfile_options;

#define RT_TEXTFILE_OPTIONS_INIT {.struct_size = sizeof(rt_textfile_options)}

/* A sink that keeps the file up to date: written at the first sample, then at most once every
 * every_secs (the tree's CPU seconds and its peak memory so far: a null figure never wipes one
 * known), and at the run's end with its end time and exit status. A write that fails is said
 * once while the job runs (a warning through log, "LABEL: cannot write in 'DIR': why"), and
 * again at the end. RT_OK and *out; RT_ERR_INVALID (no dir, struct_size too small);
 * RT_ERR_NOMEM. */
RT_API rt_error rt_textfile_sink_new(const rt_textfile_options *opts, rt_sink **out);

/* Frees a sink that was never attached (finish is not called). NULL is allowed. */
RT_API void rt_sink_free(rt_sink *sink);

/* An empty pipeline; the records it makes carry job's job_name (copied; job may be NULL).
 * RT_OK and *out; RT_ERR_NOMEM; RT_ERR_INVALID (NULL out, a job struct_size too small). */
RT_API rt_error rt_pipeline_new(const rt_job *job, rt_pipeline **out);

/* Hands sink to the pipeline, after the sinks attached before it: the pipeline owns it from
 * here, also when this fails (then it is freed at once). RT_OK; RT_ERR_INVALID; RT_ERR_NOMEM. */
RT_API rt_error rt_pipeline_attach(rt_pipeline *p, rt_sink *sink);

/* Gives every sink attached so far the host's facts and the cloud (either may be NULL), which
 * each copies: the pipeline keeps nothing of them (a sink attached later is not given them). */
RT_API void rt_pipeline_set_host(rt_pipeline *p, const rt_host *host, const rt_cloud *cloud);

/* Hands one sample to every sink still taking them (and its record to those that read it).
 * RT_OK, or the error of the first sink that failed in this call (errno as it left it; that
 * sink gets no more samples); RT_ERR_INVALID for NULL. */
RT_API rt_error rt_pipeline_add(rt_pipeline *p, const rt_sample *sample);

/* Hands a record read back from a recorded run (rt_reader_next) to the sinks that read records,
 * its figures kept as a live sample's are; the rest get nothing. rec_size is sizeof(rt_record)
 * as the caller compiled it (see rt_record for what is read of it; the sinks get a whole record).
 * Returns as rt_pipeline_add; RT_ERR_INVALID also for a rec_size 0. */
RT_API rt_error rt_pipeline_add_record(rt_pipeline *p, const rt_record *rec, size_t rec_size);

/* Ends the run for every sink, in the order attached: call once, after the last add. */
RT_API void rt_pipeline_finish(rt_pipeline *p, const rt_run_end *end);

/* Frees every sink (each completes what its finish started) and the pipeline. NULL allowed. */
RT_API void rt_pipeline_free(rt_pipeline *p);

/* ==========================================================================================
 * Phases of a job (0.14; experimental: may change in a minor version)
 *
 * A phase is a named stretch of a job ("load", "train", "write"), opened and closed by marks:
 * the embedded tracker's rt_tracker_phase_start/stop, a wrapped program's lines on the tool's
 * socket (docs/contracts.md §18), or a front end's own rt_pipeline_mark. Phases are matched by
 * name: a stop closes the most recent open instance of that name, from whichever thread or
 * process of the job it comes, so phases nest (outer, inner) and overlap freely. Each mark
 * carries the tree's cumulative counters read at it (rt_sampler_peek), so a phase's CPU
 * seconds and bytes are differences of two readings, exact also for a phase shorter than the
 * interval; memory and GPU figures come from the samples within the phase and the readings at
 * its marks. Marks travel with the samples through the pipeline (rt_sample.phases,
 * rt_record.phases) to every sink: the JSON lines, the statistics (rt_summary.phases), the
 * report, the exporters (a `phase` label while a phase is open). CSV carries none. */

typedef enum rt_phase_kind {
    RT_PHASE_START = 1,
    RT_PHASE_STOP = 2
} rt_phase_kind;

/* Where a mark's cpu_secs_total came from. */
typedef enum rt_phase_cpu_source {
    RT_PHASE_CPU_NONE = 0,      /* no reading: the analysis pro-rates the samples' figures */
    RT_PHASE_CPU_GROUP = 1,     /* the job's own cgroup's usage counter (ns or µs, exact) */
    RT_PHASE_CPU_SCHEDSTAT = 2, /* the tree's processes' schedstat run times (ns) */
    RT_PHASE_CPU_TICKS = 3,     /* the tree's /proc stat times (clock ticks: 10 ms truncation) */
    RT_PHASE_CPU_MARKER = 4     /* the marking process's own exact CPU (CLOCK_PROCESS_CPUTIME_ID
                                 * and its reaped children) plus the others' reading */
} rt_phase_cpu_source;

/* One mark. The caller fills kind, name, timestamp_secs and pid and starts from
 * RT_PHASE_MARK_INIT (every reading NaN: unknown); rt_sampler_peek fills the readings. The
 * library's marks (rt_sample.phases) have the same shape, names valid as the sample is. */
typedef struct rt_phase_mark {
    size_t struct_size;      /* sizeof(rt_phase_mark) as the caller compiled it */
    int kind;                /* rt_phase_kind */
    const char *name;        /* 1..255 bytes of UTF-8 without control characters */
    double timestamp_secs;   /* Unix time of the mark */
    int64_t pid;             /* who marked; RT_NULL_I64: unknown */
    /* the tracked tree's counters at the mark, since tracking began (NaN: unknown) */
    double cpu_secs_total;   /* on the basis of rt_process.cpu_secs_total, from cpu_source */
    int cpu_source;          /* rt_phase_cpu_source */
    double read_bytes_total, write_bytes_total; /* as rt_process's read/write totals */
    double rss_mib;          /* the tree's resident memory at the reading */
    double memory_peak_mib;  /* the job group's peak since the previous mark, where the kernel
                              * resets it per reader (cgroup v2 memory.peak): not read in 0.14
                              * (NaN); a caller's own figure is used as given */
    double reading_lag_secs; /* the reading's time less the mark's (>= 0): the bound on its
                              * error; NaN without a reading */
} rt_phase_mark;

/* NaN as a constant expression (GCC and clang), for RT_PHASE_MARK_INIT. */
#define RT_PHASE_NAN __builtin_nan("")

#define RT_PHASE_MARK_INIT                                                                         \
    {.struct_size = sizeof(rt_phase_mark), .pid = RT_NULL_I64, .cpu_secs_total = RT_PHASE_NAN,    \
     .read_bytes_total = RT_PHASE_NAN, .write_bytes_total = RT_PHASE_NAN, .rss_mib = RT_PHASE_NAN, \
     .memory_peak_mib = RT_PHASE_NAN, .reading_lag_secs = RT_PHASE_NAN}

/* The run's counts of marks: accepted, and refused by why. Library-filled, grows at its end. */
typedef struct rt_phase_counts {
    uint64_t accepted;       /* marks taken (starts and stops) */
    uint64_t unknown_stop;   /* a stop with no open phase of its name: ignored */
    uint64_t unterminated;   /* phases still open at the run's end: closed there */
    uint64_t too_long;       /* a protocol line over 512 bytes */
    uint64_t malformed;      /* a bad verb, an empty name, a name over 255 bytes, bad UTF-8, a
                              * control character, a half line at the end of a connection */
    uint64_t flood;          /* over the listener's rate (a start's stop goes with it) */
    uint64_t dropped;        /* no room to queue it (the embedded tracker's ring, the marks
                              * one sample can carry: 4096) */
    uint64_t too_many_names; /* a start of a new name past the run's 1024 names */
    uint64_t too_deep;       /* a start with 256 phases open */
    uint64_t refused;        /* a connection refused (over 64 at once, another user) */
} rt_phase_counts;

/* What rt_sample.phases and rt_record.phases point to, valid as the sample or record is. */
typedef struct rt_phases {
    const rt_phase_mark *const *marks; /* the marks since the previous sample, in order */
    size_t mark_count;
    const char *const *open;           /* the phases open at this reading, in the order they
                                        * opened (the innermost last) */
    size_t open_count;
    const rt_phase_counts *counts;     /* the run's counts so far */
} rt_phases;

/* A phase of the run, by name (rt_summary.phases). Library-filled, grows at its end. Figures are
 * NaN where unknown. A call is one start with its stop (or the run's end: unterminated). */
typedef struct rt_phase_summary {
    const char *name;
    uint64_t calls;          /* calls started */
    uint64_t unterminated;   /* of calls, those open at the run's end (closed there) */
    uint64_t samples;        /* records read within a call (gpu_tracker's timepoints) */
    uint64_t empty_calls;    /* calls with no record within them */
    double first_start_secs; /* Unix time of the first call's start */
    double duration_secs;    /* the sum of the calls' durations (a call of a name nested in
                              * another call of the same name counts too) */
    double call_min_secs, call_max_secs, call_mean_secs; /* one call's duration */
    double cpu_secs;         /* the tree's CPU seconds within the calls */
    int cpu_exact;           /* 1: every call's CPU is a difference of readings at its marks;
                              * 0: some were pro-rated from the samples */
    double cores_mean;       /* cpu_secs / duration_secs */
    double cores_peak;       /* the highest cores over the stretches between samples and marks */
    double rss_peak_mib, pss_peak_mib; /* the tree's, at the samples and marks within */
    double memory_peak_mib;  /* the job group's peak within (exact where the kernel resets it) */
    rt_need memory_need;     /* the memory the phase needed, rt_need's rules within the calls */
    double gpu_usage_mean, gpu_usage_peak;       /* GPUs' worth of utilization (samples) */
    double gpu_vram_mean_mib, gpu_vram_peak_mib; /* the tree's VRAM (samples) */
    double read_bytes, write_bytes;              /* the tree's, within the calls */
    /* added in 0.18: the phase under 1, 2, ... cores (rt_cores_table's model over the stretches
     * between samples and marks within its calls: duration_secs there is theirs, which is the
     * calls' up to the last record); NULL without the tree's cores */
    const struct rt_cores_table *cores;
} rt_phase_summary;

/* Embedded tracker (rt_tracker_start): opens or closes the phase name. Any thread, no lock, no
 * allocation, async-signal-safe, and never waits for the tracker's thread: the mark is queued
 * and the tracker takes it within a few milliseconds, reading the tree's counters then (the
 * calling process's own CPU is stamped at the call). RT_OK (queued); RT_ERR_INVALID (t NULL, a
 * name NULL, empty, over 255 bytes, bad UTF-8 or with a control character: counted as
 * malformed); RT_ERR_NOMEM (the queue is full: dropped and counted); RT_ERR_DISABLED (the
 * tracker is stopped, was loaded, or is a forked child's copy). Async-signal-safe on Linux: it
 * makes system calls (clock_gettime, getrusage) and atomic operations only. But a call that
 * never returns (a signal handler that leaves it by siglongjmp, a thread cancelled
 * asynchronously in it) keeps its place in the queue: the marks after it wait behind it and
 * are dropped once the queue is full. A mark made while rt_tracker_stop runs may be lost though
 * RT_OK was returned; the calls must not race rt_tracker_free. Once the run has had a mark, the
 * tracker's thread wakes every phase_check_secs (10 ms) to take marks: about 100 wake-ups a
 * second, a few µs each. */
/* The CPU a mark carries (cpu_secs_total): when the tracker tracks the calling process (pid 0
 * or its own pid), RT_PHASE_CPU_MARKER: the caller's own CPU time stamped at the call
 * (CLOCK_PROCESS_CPUTIME_ID, plus RUSAGE_CHILDREN unless no_children: the children it reaped),
 * less the same at rt_tracker_start, plus the CPU of the tree's other processes (the
 * descendants, live and departed: stat ticks) read when the thread takes the mark, so a
 * single-process job's phase CPU is exact to the nanosecond; otherwise the tree's reading when
 * the thread takes it (rt_sampler_peek's sources). */
RT_API rt_error rt_tracker_phase_start(rt_tracker *t, const char *name);
RT_API rt_error rt_tracker_phase_stop(rt_tracker *t, const char *name);

/* Reads the tracked tree's cumulative counters now into m's readings (cpu_secs_total and
 * cpu_source, read/write totals, rss_mib, reading_lag_secs from m->timestamp_secs; 0.14 leaves
 * memory_peak_mib NaN), cheaply (no PSS, no GPU) and without changing what
 * the next rt_sampler_sample computes. RT_OK; RT_ERR_INVALID (NULL, struct_size too small, no
 * tracked tree); RT_ERR_IO (nothing could be read: the readings stay NaN). */
RT_API rt_error rt_sampler_peek(rt_sampler *s, rt_phase_mark *m);

/* Hands a mark to the pipeline (copied, its name kept): it travels with the next sample or row
 * added (rt_sample.phases, rt_record.phases). Marks must come in time order, each before the
 * first sample read after it. RT_OK (accepted); RT_ERR_INVALID (NULL, a bad name: counted as
 * malformed; a stop with no open phase of its name: counted as unknown_stop); RT_ERR_NOMEM
 * (too many names, phases open or marks before one sample: counted). */
RT_API rt_error rt_pipeline_mark(rt_pipeline *p, const rt_phase_mark *m);

/* Why a mark was refused before it reached the pipeline (a listener's, a ring's counts). */
typedef enum rt_phase_refusal {
    RT_PHASE_REFUSED_TOO_LONG = 1,
    RT_PHASE_REFUSED_MALFORMED = 2,
    RT_PHASE_REFUSED_FLOOD = 3,
    RT_PHASE_REFUSED_DROPPED = 4,
    RT_PHASE_REFUSED_CONNECTION = 5
} rt_phase_refusal;

/* Adds n refused marks of the kind why to the pipeline's counts (rt_phases.counts). */
RT_API void rt_pipeline_mark_refused(rt_pipeline *p, int why, uint64_t n);

/* The pipeline's counts of marks so far, into the caller's out of out_size bytes. RT_OK;
 * RT_ERR_INVALID (NULL). Zeros when no mark came. */
RT_API rt_error rt_pipeline_phase_counts(const rt_pipeline *p, rt_phase_counts *out, size_t out_size);

/* The listener for wrapped programs (the tool's TRACKER_PHASE_SOCKET; docs/contracts.md §18):
 * a unix stream socket taking lines `start NAME` / `stop NAME`. Its limits: 512 bytes a line,
 * 64 connections at once, a rate of marks (burst and per second), a connection idle for 60 s
 * closed. It never blocks: rt_phase_listener_poll_fd becomes readable when something waits. */
typedef struct rt_phase_listener rt_phase_listener;

typedef struct rt_phase_listener_options {
    size_t struct_size;  /* sizeof(rt_phase_listener_options) as the caller compiled it */
    const char *address; /* a path (its directory must exist), or "@name" for the abstract
                          * namespace; required; copied */
    double rate_per_sec; /* 0: 1000 marks a second */
    double burst;        /* 0: 1000 marks */
} rt_phase_listener_options;

#define RT_PHASE_LISTENER_OPTIONS_INIT {.struct_size = sizeof(rt_phase_listener_options)}

/* Called by rt_phase_listener_drain for each mark taken: kind, name (valid during the call),
 * timestamp_secs (Unix time: the sender's t= where given and sane, else receipt), pid (the
 * sender's, from its credentials). */
typedef void (*rt_phase_mark_fn)(void *user, const rt_phase_mark *m);

/* Binds and listens at opts->address (a path is unlinked first, and at rt_phase_listener_free).
 * RT_OK and *out; RT_ERR_INVALID (no address, too long for a unix socket); RT_ERR_SYSTEM
 * (errno: the bind failed); RT_ERR_NOMEM. */
RT_API rt_error rt_phase_listener_new(const rt_phase_listener_options *opts, rt_phase_listener **out);

/* A descriptor to poll for reading: readable when a connection or a line waits. -1 for NULL. */
RT_API int rt_phase_listener_poll_fd(const rt_phase_listener *l);

/* Accepts what waits and reads lines, handing at most max_marks marks to fn (0: no bound);
 * refusals are counted (rt_phase_listener_counts). Returns the number of marks handed. */
RT_API size_t rt_phase_listener_drain(rt_phase_listener *l, size_t max_marks, rt_phase_mark_fn fn,
                                      void *user);

/* The listener's counts of refusals (too_long, malformed, flood, refused), into out. */
RT_API rt_error rt_phase_listener_counts(const rt_phase_listener *l, rt_phase_counts *out,
                                         size_t out_size);

/* Closes every connection and the socket (a path is removed). NULL allowed. */
RT_API void rt_phase_listener_free(rt_phase_listener *l);

/* ==========================================================================================
 * Energy and carbon (0.15; experimental: may change in a minor version)
 *
 * Energy is read where the hardware counts it and every figure names how it was obtained:
 *   "measured"   a hardware energy counter: powercap RAPL (intel-rapl, amd-rapl), the perf
 *                power PMU, hwmon energy*_input (amdgpu, i915, xe), NVML's total energy;
 *   "sampled"    a power reading times the time (hwmon power*_average or power1_input,
 *                NVML's power draw on a GPU without the counter), the mean of the interval's
 *                two readings;
 *   "estimated"  a model, where no counter can be read (a virtual machine, a root-only
 *                energy_uj): the CPU's thermal design power from a table of models, or a
 *                per-core figure, scaled by the CPU time used (docs/energy.md states the model
 *                and its expected error).
 * A figure with no method is absent (NaN, NULL), never a number without its method.
 *
 * The job's share (docs/energy.md): in each interval a CPU domain's energy (package, its core
 * and uncore parts, DRAM, the estimate) is split by the tree's share of the machine's busy CPU
 * time; a GPU's by the tree's share of that GPU (all of it when only the tree's processes use
 * it; else its share of the per-process utilization, else of the VRAM used). The machine's
 * idle floor, the least power it drew over an interval of the run, is stated apart. */

typedef struct rt_energy_domain {
    const char *name;   /* unique in the sample and stable over the run: "package-0",
                         * "core-0", "uncore-0", "dram-0" (per package, its id), "psys",
                         * "platform-0" (hwmon power meters), "gpu-0" (the index in
                         * rt_sample.gpu), "cpu" (the estimate) */
    const char *kind;   /* "package", "core", "uncore", "dram", "psys", "platform", "gpu", "cpu" */
    const char *source; /* "intel-rapl", "amd-rapl", "perf", "hwmon", "nvml", "model" */
    const char *method; /* "measured", "sampled" or "estimated" (never NULL) */
    const char *device; /* a gpu domain's GPU: its uuid, else host_id; NULL for others */
    int in_total;       /* 1: counted in rt_energy.energy_joules (see there) */
    double energy_joules;       /* in the interval; NaN: not read this time (the first
                                 * reading, a failed read) */
    double energy_joules_total; /* since tracking began (a failed read adds nothing) */
    double power_watts;         /* mean power over the interval; NaN with energy_joules */
    double process_share;       /* the tree's share of the interval's energy, 0..1; NaN
                                 * without a tree, or when the share cannot be told */
    double process_energy_joules, process_energy_joules_total; /* the tree's part: in the
                                 * interval, and since tracking began (NaN until a share is known) */
} rt_energy_domain;

typedef struct rt_energy {
    const rt_energy_domain *const *domain;
    size_t domain_count;
    /* the machine: a platform meter's figure (psys, an ACPI power meter) where there is one,
     * else the sum of the packages, DRAM and GPUs (each counted once: a package's core and
     * uncore parts are inside it); the domains summed have in_total 1 */
    double energy_joules, energy_joules_total, power_watts;
    const char *method;  /* the least exact method of the domains summed (measured, then
                          * sampled, then estimated); NULL: no figure */
    /* the tracked tree's share: the process figures of the packages, DRAM, GPUs and the estimate
     * summed (a core or uncore part is inside its package; NaN without a tree) */
    double process_energy_joules, process_energy_joules_total, process_power_watts;
    const char *process_method;
    double idle_power_watts; /* the machine's floor: the least power_watts of a whole interval so
                              * far (every summed domain read over it), the estimate's part taken
                              * at the model's idle power; NaN before the first */
    const char *model;   /* the estimate's model in words (e.g. "AMD EPYC: not in the TDP
                          * table; 4.0 W per busy logical core"); NULL when nothing is estimated */
    const char *missing; /* what could not be read and how to grant it (one sentence: the
                          * files, the udev rule or chmod line); NULL when nothing is missing */
} rt_energy;

/* A grid's carbon intensity: grams of CO2-equivalent per kWh of electricity used there. The
 * table shipped with the library (data/grid-intensity.csv: its source and year in its first
 * lines) holds countries by ISO 3166-1 alpha-2 code ("FR"), some sub-national zones ("US-CA",
 * as the table names them) and the cloud regions of the vendors rt_cloud names, each mapped to
 * the zone it draws from ("aws:eu-west-3"). A value the user gives has source "given". */
typedef struct rt_grid {
    size_t struct_size;  /* sizeof(rt_grid) as the caller compiled it */
    double g_per_kwh;    /* NaN or <= 0: unknown */
    const char *zone;    /* the zone or region asked for, as the table spells it; NULL */
    const char *name;    /* the zone's name in words ("France"); NULL */
    const char *source;  /* "Ember yearly electricity data, 2023" (the table's), "given" */
    int year;            /* the table's year for the zone; 0: not known */
} rt_grid;

#define RT_GRID_INIT {.struct_size = sizeof(rt_grid)}

/* Looks zone up in the shipped table: a country code, a zone, or "vendor:region" (rt_cloud's
 * vendor_id and region_id), case-insensitive. Returns RT_OK with out filled (static strings),
 * RT_ERR_NOT_FOUND (out's g_per_kwh NaN, the rest NULL; last error names the zone),
 * RT_ERR_INVALID (NULL arguments, struct_size too small). */
RT_API rt_error rt_grid_lookup(const char *zone, rt_grid *out);

/* The carbon of a summary: every later rt_stats_summary gives co2e_grams from the energy and
 * grid->g_per_kwh (copied; NULL or an unknown intensity: carbon unknown). */
RT_API rt_error rt_stats_set_grid(rt_stats *st, const rt_grid *grid);

/* The same for a tracker's statistics (live or loaded; 0.15): every later rt_tracker_summary
 * and rt_tracker_report gives the carbon at grid->g_per_kwh (copied, with its strings; NULL or
 * an unknown intensity: carbon unknown). Thread-safe against the tracker's thread. RT_OK,
 * RT_ERR_INVALID (t NULL, grid's struct_size too small). */
RT_API rt_error rt_tracker_set_grid(rt_tracker *t, const rt_grid *grid);

/* Grams of CO2e of joules at g_per_kwh (joules / 3.6e6 * g_per_kwh); NaN when either is
 * unknown (NaN, or an intensity <= 0). */
RT_API double rt_co2e_grams(double joules, double g_per_kwh);

/* The energy a run would take on another server (0.15): the estimate's CPU power model
 * (docs/energy.md) for the server's CPU (rt_server.cpu_family and cpu_model, Keeper's) found in
 * the TDP table, over the run's duration on the server's vCPUs with the run's CPU time:
 *   watts = vcpus x idle_watts + (cpu_secs / duration_secs) x (busy_watts - idle_watts)
 * (busy cores held to 0..vcpus), energy = watts x duration_secs; method "estimated". */
typedef struct rt_server_energy {
    size_t struct_size;      /* caller sets sizeof(rt_server_energy) */
    double energy_joules;    /* NaN: not known */
    const char *method;      /* "estimated" (static); NULL when not known */
    double tdp_watts;        /* per package, from the table */
    int threads_per_package;
    double busy_watts, idle_watts; /* per logical core in the model */
    char cpu[160];           /* the CPU as named: "Intel Xeon 8375C" */
    char words[256];         /* "estimated: Intel Xeon 8375C, 265 W TDP / 64 threads" */
} rt_server_energy;

#define RT_SERVER_ENERGY_INIT {.struct_size = sizeof(rt_server_energy)}

/* Fills out with the energy of a run of cpu_secs CPU seconds over duration_secs on sv.
 * Returns RT_OK; RT_ERR_NOT_FOUND (energy, TDP and watts NaN, method NULL, the rest 0 or "")
 * when the CPU is not in the table, or the CPU time or duration is not known (NaN, negative, a
 * duration of 0) or the server's vCPUs are; RT_ERR_INVALID for NULL arguments or a struct_size
 * too small. */
RT_API rt_error rt_server_energy_estimate(const rt_server *sv, double cpu_secs, double duration_secs,
                                          rt_server_energy *out);

/* ------------------------------------------------------------------------------------------
 * Where the job runs (0.16; experimental: may change in a minor version, except rt_request,
 * which rt_sample, rt_record and rt_summary point to: it follows the stable rules, growing only
 * at its end)
 *
 * What a job was given where it runs, and who it is there: SLURM (its variables; the time
 * limit from `scontrol show job` or `squeue` when one is on the PATH), Kubernetes (the downward
 * API variables a pod spec sets), GitHub Actions (the runner: the machine is the job's). The
 * job's own cgroup limits come with the samples (rt_cgroup); the statistics join both into the
 * requested figures and efficiencies of rt_summary, and the notes say what was over-requested.
 * docs/where.md names every variable read. */

/* What the job was given. A figure counts only with its *_from set: NULL means not said (the
 * figure is then 0 or NaN and not used). Strings are static or owned by whoever filled it. */
typedef struct rt_request {
    size_t struct_size;       /* sizeof(rt_request) as the caller compiled it */
    const char *place;        /* "slurm", "kubernetes", "github-actions"; NULL: none of them */
    double cpu_cores;         /* cores given to the job */
    double memory_mib;        /* memory given to the job */
    double gpus;              /* GPUs given (0 said: none) */
    double time_limit_secs;   /* the job's wall-time limit */
    double job_start_secs;    /* Unix time the job began, which the limit counts from; 0 or NaN:
                               * the run's start */
    const char *cpu_from, *memory_from, *gpus_from, *time_limit_from; /* what said each: the
                               * variable ("SLURM_CPUS_PER_TASK"), the command ("scontrol"), "runner" */
} rt_request;

#define RT_REQUEST_INIT {.struct_size = sizeof(rt_request)}

/* One run's place in a job that spans several nodes or tasks (0.18): a SLURM job on several
 * nodes, torchrun, mpirun, a Kubernetes indexed Job. What every node's run shares (job_id) and
 * what tells the runs apart (node, rank), as the launchers' variables say them (docs/where.md,
 * "Jobs on several nodes") or the caller gives them (--job-id, --node). A string is NULL and a
 * number -1 when not said. Follows the stable rules: it grows only at its end. */
typedef struct rt_member {
    size_t struct_size;  /* sizeof(rt_member) as the caller compiled it */
    const char *job_id;  /* the job every node's run shares: SLURM_JOB_ID (an array task:
                          * JOB_TASK), TORCHELASTIC_RUN_ID, PMIX_NAMESPACE, a Kubernetes Job's
                          * name; NULL: the run is no member of a job of several */
    const char *step_id; /* SLURM_STEP_ID; NULL */
    const char *node;    /* the node's name: SLURMD_NODENAME, else the host name */
    int64_t rank;        /* the task's rank in the job: SLURM_PROCID, RANK, OMPI_COMM_WORLD_RANK,
                          * PMI_RANK, JOB_COMPLETION_INDEX */
    int64_t local_rank;  /* its rank on its node: SLURM_LOCALID, LOCAL_RANK, ... */
    int64_t ranks;       /* the job's tasks: SLURM_NTASKS, WORLD_SIZE, OMPI_COMM_WORLD_SIZE, ... */
    int64_t nodes;       /* the job's nodes: SLURM_JOB_NUM_NODES, GROUP_WORLD_SIZE, ... */
    int64_t node_index;  /* the node's index in the job: SLURM_NODEID, GROUP_RANK */
    const char *from;    /* what said it: "slurm", "torchrun", "mpi", "kubernetes", "given" */
    int per_node;        /* 1: the run tracks its node's tasks, not only its own (--per-node, the
                          * task of local rank 0); 0: its own task's, or the node's one task */
} rt_member;

#define RT_MEMBER_INIT                                                                                                 \
    {.struct_size = sizeof(rt_member), .rank = -1, .local_rank = -1, .ranks = -1, .nodes = -1, .node_index = -1}

typedef struct rt_place rt_place;

typedef struct rt_place_options {
    size_t struct_size;        /* sizeof(rt_place_options) as the caller compiled it */
    const char *const *envp;   /* the environment read, "NAME=value" strings, NULL-terminated;
                                * NULL: the process's own */
    int no_query;              /* non-zero: run no command (scontrol, squeue) */
    double query_timeout_secs; /* the most a command may take, then it is killed; 0: 2 s */
    rt_log_fn log;             /* one warning per value that could not be read; NULL: dropped */
    void *log_user;
} rt_place_options;

#define RT_PLACE_OPTIONS_INIT {.struct_size = sizeof(rt_place_options)}

/* Finds where the job runs and what it was given, from the environment (and the commands the
 * place offers). Never fails for what it finds: a malformed value is one warning and not said.
 * RT_OK (a place with no request when nothing was found), RT_ERR_NOMEM, RT_ERR_INVALID. */
RT_API rt_error rt_place_detect(const rt_place_options *opts, rt_place **out);
/* What was found; never NULL, owned by p. */
RT_API const rt_request *rt_place_request(const rt_place *p);
/* The job's identity there as metadata (owned by p, never NULL): job_name, orchestrator
 * ("slurm", "kubernetes", "github-actions"), external_run_id, and tags "key=value" (user,
 * account, partition, cluster, array_task, namespace, pod, node, workflow, repository,
 * run_attempt, ...; docs/where.md). Fields the place does not say are NULL. */
RT_API const rt_job *rt_place_job(const rt_place *p);
/* The run's place in a job of several nodes or tasks (0.18; owned by p, never NULL): job_id
 * NULL when no launcher's variables say one. */
RT_API const rt_member *rt_place_member(const rt_place *p);
RT_API void rt_place_free(rt_place *p);

/* The request every later rt_stats_summary uses (copied with its strings; NULL: none, then the
 * first record that carries one is used). RT_OK, RT_ERR_INVALID (st NULL, struct_size too
 * small), RT_ERR_NOMEM. */
RT_API rt_error rt_stats_set_request(rt_stats *st, const rt_request *req);
/* The same for a tracker's statistics (live or loaded). Thread-safe against its thread. */
RT_API rt_error rt_tracker_set_request(rt_tracker *t, const rt_request *req);

/* ---- a run's summary for CI and workflow engines (0.16; experimental) --------------------- */

typedef struct rt_markdown_options {
    size_t struct_size;   /* sizeof(rt_markdown_options) as the caller compiled it */
    int scheduler;        /* rt_scheduler whose words the request line takes */
    size_t chart_points;  /* the most points of the CPU and memory chart; 0: 200 */
    size_t max_bytes;     /* the whole text's bound; past it the chart, then the tables are left
                           * out (the answer is always written); 0: 1 MiB less 4 KiB */
} rt_markdown_options;

#define RT_MARKDOWN_OPTIONS_INIT {.struct_size = sizeof(rt_markdown_options), .scheduler = RT_SCHED_SLURM}

/* Writes the run as GitHub-flavoured Markdown (what $GITHUB_STEP_SUMMARY renders): a heading
 * "### resource-tracker: NAME" (info's title, else the job's name, else the command), the answer
 * (the summary text's lines: used, ask for in opts->scheduler's words, energy, carbon, ran; an
 * efficiency line of rt_summary's *_efficiency_pct with the requested figures and their *_from,
 * a figure left out where it is NaN), a table of the main figures, the recommendation in each
 * scheduler's words (info's, else the run's own), the notes as a list, and Mermaid xychart-beta
 * charts of the job's cores and memory (PSS, else RSS; the machine's without a job) over time
 * from r's buckets, merged to at most chart_points points a chart. Job names, commands and notes
 * are escaped (Markdown, HTML, Mermaid's labels). Past max_bytes the charts, then the tables are
 * left out and a line says so; the answer is always written, even past it. info as
 * rt_report_write (NULL or without samples: the heading and "No samples."); r NULL: no charts.
 * The text is made whole before the first call of write. RT_OK, RT_ERR_INVALID (NULL write, an
 * unknown scheduler, a struct_size too small), RT_ERR_IO, RT_ERR_NOMEM. */
RT_API rt_error rt_report_write_markdown_cb(const rt_report *r, const rt_report_info *info,
                                            const rt_markdown_options *opts, rt_write_fn write, void *user);

/* The formats of workflow engines' own accounting files. */
typedef enum rt_workflow_format {
    RT_WORKFLOW_SNAKEMAKE = 0, /* a `benchmark:` TSV: its header line and one row */
    RT_WORKFLOW_NEXTFLOW = 1,  /* a trace: its header line (Nextflow's field names) and one row */
} rt_workflow_format;

/* Writes s (with run's facts: NULL allowed) in a workflow engine's format, header line
 * included. RT_OK, RT_ERR_INVALID (NULL s or write, an unknown format), RT_ERR_IO. */
RT_API rt_error rt_summary_write_workflow(const rt_summary *s, const rt_run_facts *run, int format,
                                          rt_write_fn write, void *user);

#ifdef __cplusplus
}
#endif
#endif
