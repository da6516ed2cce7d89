/* cgroup.h - control groups (internal): where the hierarchies are mounted, the group a
 * process lives in, one group's counters, limits and pressure on v1, v2 and hybrid layouts,
 * and the pure parsers of their files. cgroup_parse.c parses, cgroup.c finds and reads groups;
 * cgroup_job.c makes a job's own group (the public rt_job_cgroup_*). */
#ifndef RT_SOURCE_CGROUP_H
#define RT_SOURCE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

/* The hierarchies read. v1 "cpu,cpuacct" mounted together fill both with the same place. */
typedef enum rt_cg_hier {
    RT_CG_UNIFIED = 0, /* the v2 tree (pure v2, or the hybrid layout's "unified" mount) */
    RT_CG_CPU,         /* v1 */
    RT_CG_CPUACCT,
    RT_CG_MEMORY,
    RT_CG_BLKIO,
    RT_CG_PIDS,
    RT_CG_NHIER
} rt_cg_hier;

#define RT_CG_PATH_MAX 512

/* Mount points of the hierarchies as /proc/self/mountinfo gives them ("" when absent). */
typedef struct rt_cg_mounts {
    char dir[RT_CG_NHIER][RT_CG_PATH_MAX];
    /* the root of the mount inside its hierarchy (mountinfo's 4th field: "/" unless the mount
     * is of a subtree, as in a container) */
    char root[RT_CG_NHIER][RT_CG_PATH_MAX];
} rt_cg_mounts;

/* Parses /proc/self/mountinfo for cgroup and cgroup2 mounts (the first of each hierarchy).
 * Returns how many hierarchies were found (0: none). */
int rt_cg_mounts_parse(const char *buf, size_t len, rt_cg_mounts *out);

/* A process's group per hierarchy, from /proc/PID/cgroup ("N:ctrl,ctrl:/path" lines; the v2
 * line is "0::/path"). */
typedef struct rt_cg_paths {
    char path[RT_CG_NHIER][RT_CG_PATH_MAX];
    bool has[RT_CG_NHIER];
} rt_cg_paths;

/* Parses /proc/PID/cgroup. Returns how many hierarchies were found, -1 when a line is malformed. */
int rt_cg_paths_parse(const char *buf, size_t len, rt_cg_paths *out);

/* Reads the mounts (<proc root>/self/mountinfo) and the groups of pid (<proc root>/PID/cgroup;
 * pid 0: the caller, "self"). Returns how many hierarchies pid has a mounted group in (0:
 * none), or -errno when a file cannot be read (-EINVAL when one is malformed). */
int rt_cg_locate(const rt_roots *roots, int64_t pid, rt_cg_mounts *mounts, rt_cg_paths *paths);

/* Opens rel relative to dirfd and reads it whole into b (growing it up to its maximum), to EOF.
 * Returns the length or -errno. */
ssize_t rt_cg_read_file(int dirfd, const char *rel, rt_buf *b);

/* Opens (O_DIRECTORY|O_CLOEXEC) the directory of group path in hierarchy h: its mount point
 * (one under /sys looked up under the sys root) joined with the path less the mount's root.
 * Returns the fd or -errno (-ENOENT when h is not mounted, -EXDEV when the path lies outside
 * the mount or the mount outside the sys root). */
int rt_cg_open_dir(const rt_roots *roots, const rt_cg_mounts *mounts, rt_cg_hier h, const char *path);

/* ---- pure parsers of a group's files ------------------------------------------------------ */

/* The value of "key VALUE" in a flat keyed file (cpu.stat, memory.events, memory.stat,
 * memory.oom_control). Returns 0, or -1 when the key is missing or its value is no number. */
int rt_cg_keyed_u64(const char *buf, size_t len, const char *key, uint64_t *out);

/* What the kernel can reclaim of a group's charge, from memory.stat: the page cache on the file
 * LRU lists (active_file + inactive_file; v1's hierarchical total_active_file +
 * total_inactive_file when present) plus reclaimable slab (v2's slab_reclaimable; v1 has none).
 * Shared memory (tmpfs, memfd, /dev/shm) is on the anon lists and is not reclaimable without
 * swap, so it is never counted here. Returns 0, or -1 when the file LRU lines are missing. */
int rt_cg_parse_memory_stat(const char *buf, size_t len, uint64_t *reclaimable_bytes);

/* The kinds of a group's charge, from memory.stat in one pass: anonymous memory (v2 anon, v1
 * total_rss), the page cache (v2 file, v1 total_cache; shared memory included) and, of it,
 * shared memory (v2 shmem, v1 total_shmem). v1's hierarchical total_* lines win over the
 * group's own. Each is RT_NULL_U64 when its line is missing. */
void rt_cg_parse_memory_kinds(const char *buf, size_t len, uint64_t *anon, uint64_t *file, uint64_t *shmem);

/* File pages a group read back after they were evicted (the kernel's refaults, a count of
 * pages), from memory.stat: workingset_refault_file (v2 since 5.9, and v1 where the kernel lists it: 6.1, 6.18),
 * v1's hierarchical total_workingset_refault_file winning, else workingset_refault (v2 before
 * 5.9, when only file pages were tracked). Returns 0, or -1 when no such line is there. */
int rt_cg_parse_memory_refault(const char *buf, size_t len, uint64_t *pages);

/* A single-value file: a decimal number, or "max" (v2) / a value at or above 2^62 (v1's
 * "unlimited", PAGE_COUNTER_MAX rounded to pages) / "-1" (v1's cpu.cfs_quota_us) as
 * RT_NULL_U64. Returns 0 or -1 (no number, or more than one token). */
int rt_cg_parse_limit(const char *buf, size_t len, uint64_t *out);

/* cpu.max: "QUOTA PERIOD" with QUOTA "max" for none (quota RT_NULL_U64). Returns 0 or -1. */
int rt_cg_parse_cpu_max(const char *buf, size_t len, uint64_t *quota_usec, uint64_t *period_usec);

/* One resource's pressure as the kernel gives it. */
typedef struct rt_cg_psi_raw {
    bool has_some, has_full;
    double some_avg10, full_avg10;
    uint64_t some_total_usec, full_total_usec;
} rt_cg_psi_raw;

/* A pressure file ("some avg10=.. avg60=.. avg300=.. total=..", and a "full" line). Returns 0,
 * or -1 when neither line is there. */
int rt_cg_parse_pressure(const char *buf, size_t len, rt_cg_psi_raw *out);

/* io.stat ("MAJ:MIN rbytes=.. wbytes=.. rios=.. ..." per device): rbytes and wbytes summed over
 * the devices. Returns 0 (an empty file is 0 bytes), -1 when malformed. */
int rt_cg_parse_io_stat(const char *buf, size_t len, uint64_t *read_bytes, uint64_t *write_bytes);

/* blkio.throttle.io_service_bytes[_recursive] ("MAJ:MIN Read N" ..., "Total N"): Read and Write
 * summed over the devices. Returns 0, -1 when malformed. */
int rt_cg_parse_blkio(const char *buf, size_t len, uint64_t *read_bytes, uint64_t *write_bytes);

/* The whole disks to count I/O on (MAJ << 32 | MIN); none (n 0) or NULL: every device. The
 * kernel charges a bio to a group again on the disk under a device-mapper or md device, so
 * summing every line counts LVM and dm-crypt I/O twice. */
#define RT_CG_MAX_DISKS 64
typedef struct rt_cg_devs {
    uint64_t dev[RT_CG_MAX_DISKS];
    size_t n;
} rt_cg_devs;

/* Whether dev is among only (always, for NULL or an empty set). */
bool rt_cg_devs_has(const rt_cg_devs *only, uint64_t dev);

/* As rt_cg_parse_io_stat and rt_cg_parse_blkio, summing only the devices in only (NULL: all);
 * the other lines are still checked for shape. */
int rt_cg_parse_io_stat_on(const char *buf, size_t len, const rt_cg_devs *only, uint64_t *read_bytes,
                           uint64_t *write_bytes);
int rt_cg_parse_blkio_on(const char *buf, size_t len, const rt_cg_devs *only, uint64_t *read_bytes,
                         uint64_t *write_bytes);

/* The whole disks of the machine backed by a device (<sys>/block/X with a "device" link: not
 * loop, zram, ram, dm or md devices), up to RT_CG_MAX_DISKS, read through the sys root.
 * Returns how many (0: none found, or no sys root). */
size_t rt_cg_disks(const rt_roots *roots, rt_cg_devs *out);

/* cgroup.procs: one pid a line. Stores up to cap pids into out (out may be NULL with cap 0)
 * and returns how many there are, or -1 when malformed. */
long rt_cg_parse_procs(const char *buf, size_t len, int64_t *out, size_t cap);

/* ---- one group ---------------------------------------------------------------------------- */

enum { RT_PSI_CPU, RT_PSI_MEMORY, RT_PSI_IO, RT_PSI_N };

/* What a group's memory.stat says of its charge; RT_NULL_U64 where it is not read (or says
 * nothing of it). */
typedef struct rt_cg_memstat {
    uint64_t reclaimable_bytes; /* of the charge, page cache and reclaimable slab (rt_cg_parse_memory_stat) */
    uint64_t anon_bytes, file_bytes, shmem_bytes; /* rt_cg_parse_memory_kinds */
    uint64_t refault_file_bytes; /* rt_cg_parse_memory_refault's pages x the page size */
} rt_cg_memstat;

/* One reading of a group: raw counters as the kernel keeps them. RT_NULL_U64 / RT_NULL_I64
 * where the layout has no such file (or it could not be read). */
typedef struct rt_cg_reading {
    uint64_t cpu_usage_ns, cpu_user_ns, cpu_system_ns; /* cpu.stat usage_usec.. x1000, cpuacct.usage* */
    uint64_t io_read_bytes, io_write_bytes;
    uint64_t memory_bytes, memory_peak_bytes;
    rt_cg_memstat memory_stat; /* of memory_bytes */
    int64_t pids, pids_peak;
    /* limits: the tightest of the group and its ancestors up to the mount's root */
    uint64_t cpu_quota_usec, cpu_period_usec; /* quota RT_NULL_U64: none */
    uint64_t memory_limit_bytes, memory_high_bytes;
    int64_t pids_limit;
    /* the group holding the tightest quota (the group itself without one) */
    uint64_t cpu_periods, cpu_throttled_periods, cpu_throttled_usec;
    uint64_t oom_kills, memory_max_events;
    rt_cg_psi_raw psi[RT_PSI_N]; /* has_some false without the file */
} rt_cg_reading;

/* A group open for reading: a directory descriptor per hierarchy it is in. */
typedef struct rt_cg_group rt_cg_group;

/* Opens the group pid lives in (found through <proc root>/PID/cgroup and the mounts in
 * <proc root>/self/mountinfo; a mount point under /sys is looked up under the sys root).
 * NULL when it has none that can be read (logged at debug level). */
rt_cg_group *rt_cg_group_of_pid(const rt_roots *roots, int64_t pid, const rt_logger *log);

/* The descriptors the group's first kept files take while rt_cg_group_open opens them: one
 * directory at a time and the counters a run is judged by (v2's cpu.stat, memory's peak and
 * charge, tasks' peak and count, cpuacct's usage), with one to spare. */
#define RT_CG_FIRST_FDS 8

/* Opens the group at paths (each relative to its hierarchy's root, as in /proc/PID/cgroup):
 * every file read later is opened now and kept open (about 20 descriptors on a hybrid layout,
 * a few more per ancestor), so that a read is one pread per file. The ancestors' limit files
 * are those up to the mount's root, less the hierarchy's own root (which holds no limit).
 * NULL when no hierarchy's directory can be opened (logged at debug level). */
rt_cg_group *rt_cg_group_open(const rt_roots *roots, const rt_cg_mounts *mounts, const rt_cg_paths *paths,
                              const rt_logger *log);

/* Reads every file of the group (and its ancestors' limits) through buf. No allocation once
 * buf has grown to the largest file. */
void rt_cg_group_read(rt_cg_group *g, rt_buf *buf, rt_cg_reading *out);

/* How long rt_cg_group_read_at keeps the limits it read (they rarely change; reading the
 * group's and each ancestor's limit files every sample would cost a third of the read; at
 * least several samples at the default 1 s interval). */
#define RT_CG_LIMITS_EVERY_SECS 10.0

/* The oldest rt_cg_group_read_at lets what memory.stat said get while the group's charge, its
 * peak, its storage reads and its memory pressure hold to the byte (memory.stat is the group's dearest file: 15-20 µs a sample cold,
 * against 3-6 for a counter). */
#define RT_CG_MEMSTAT_MAX_AGE_SECS 5.0

/* As rt_cg_group_read at monotonic time mono, re-reading the limits (quota, memory, pids) only
 * when RT_CG_LIMITS_EVERY_SECS passed since they were (or time went back, or mono is NaN), and
 * memory.stat only when the charge, its peak, the storage read bytes or the memory pressure's
 * total moved (a page read back after its eviction is a read, and a stall when it was the
 * working set's: the refault count follows them) or RT_CG_MEMSTAT_MAX_AGE_SECS passed; the
 * counters, throttling, OOM events and pressure are read every time. */
void rt_cg_group_read_at(rt_cg_group *g, rt_buf *buf, double mono, rt_cg_reading *out);

/* The group's CPU usage counter alone, now (the same file and rule as rt_cg_group_read's
 * cpu_usage_ns: v2 cpu.stat usage_usec x 1000, else v1 cpuacct.usage): one pread, for a phase's
 * mark. RT_NULL_U64 when it cannot be read. */
uint64_t rt_cg_group_read_cpu(rt_cg_group *g, rt_buf *buf);

/* The group's memory alone, now: the charge and its peak (the same files and rule as
 * rt_cg_group_read_at: two preads) and what memory.stat says (read again only when they moved,
 * or RT_CG_MEMSTAT_MAX_AGE_SECS passed), into out's memory_bytes, memory_peak_bytes and the
 * memory.stat members; nothing else of out is touched. For watching the charge between
 * samples (rt_sampler_watch). */
void rt_cg_group_read_memory(rt_cg_group *g, rt_buf *buf, double mono, rt_cg_reading *out);

/* The pids in the group (cgroup.procs of the v2 tree, else of the first v1 hierarchy): up to
 * cap into out, returns how many there are, or -1 when it cannot be read. */
long rt_cg_group_procs(rt_cg_group *g, rt_buf *buf, int64_t *out, size_t cap);

/* The group's path ("/..."), and "v2", "v1" or "hybrid". Valid while g is. */
const char *rt_cg_group_path(const rt_cg_group *g);
const char *rt_cg_group_version(const rt_cg_group *g);

/* How many distinct paths the group has over the hierarchies it was opened in (a process can
 * be in /a for memory and /b for cpuacct): each has its own members. At least 1. */
int rt_cg_group_memberships(const rt_cg_group *g);

/* As rt_cg_group_procs, of the k-th distinct path (0: the one rt_cg_group_procs reads). */
long rt_cg_group_procs_at(rt_cg_group *g, int k, rt_buf *buf, int64_t *out, size_t cap);

/* Whether the reads that follow read memory.stat (on by default; off: memory_stat
 * is RT_NULL_U64), for a group whose unreclaimable memory no answer uses: the tracker's own,
 * or one that holds other processes than the tracked tree. */
void rt_cg_group_read_memory_stat(rt_cg_group *g, bool on);

void rt_cg_group_free(rt_cg_group *g);

/* The group a job cgroup made (cgroup_job.c) opened for reading; NULL when it cannot be. */
struct rt_job_cgroup;
rt_cg_group *rt_cg_group_of_job(const struct rt_job_cgroup *jg, const rt_logger *log);

#endif
