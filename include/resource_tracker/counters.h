/* resource_tracker/counters.h - counters read now: a process tree's and the machine's cumulative
 * counters (rt_counters). Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_COUNTERS_H
#define RESOURCE_TRACKER_COUNTERS_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Counters read now: a process tree's and the machine's cumulative counters
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

/* One filesystem on those disks (as rt_mount lists them), from statvfs(3); or a ZFS
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
    const rt_mount_space *const *mounts;  /* filesystems mounted on them; ZFS pools */
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

#ifdef __cplusplus
}
#endif
#endif
