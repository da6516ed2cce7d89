/* sources.h - the kernel interfaces the sampler reads: pure parsers over a buffer (one per
 * procfs file, each with unit tests and a fuzz target) and the sysfs discovery of disks and
 * network interfaces. Not public. */
#ifndef RT_SOURCES_H
#define RT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

/* ---- /proc/stat ------------------------------------------------------------------------- */

/* Tick counters of one "cpu" line in /proc/stat order: user nice system idle iowait irq
 * softirq steal. Fields an old kernel lacks are 0. */
enum { RT_CPU_USER, RT_CPU_NICE, RT_CPU_SYSTEM, RT_CPU_IDLE, RT_CPU_IOWAIT, RT_CPU_IRQ, RT_CPU_SOFTIRQ, RT_CPU_STEAL, RT_CPU_NFIELDS };

typedef struct rt_cpu_ticks {
    int id; /* core number of a "cpuN" line, -1 for the aggregate line */
    uint64_t t[RT_CPU_NFIELDS];
} rt_cpu_ticks;

typedef struct rt_stat {
    rt_cpu_ticks total;
    bool has_total;
    rt_cpu_ticks *cores; /* caller-provided array of core_cap entries */
    size_t core_cap;
    size_t core_count;   /* cores found; may exceed core_cap (then only core_cap were stored) */
    uint64_t procs_running;
    bool has_procs_running;
} rt_stat;

/* Parses /proc/stat. Fills out (its cores array must be set by the caller). Returns 0, or -1
 * when the aggregate "cpu" line is missing or malformed. */
int rt_stat_parse(const char *buf, size_t len, rt_stat *out);

/* Busy and total ticks of a cpu line: busy excludes idle and iowait. */
uint64_t rt_cpu_busy(const rt_cpu_ticks *c);
uint64_t rt_cpu_total(const rt_cpu_ticks *c);

/* ---- /proc/meminfo ---------------------------------------------------------------------- */

enum {
    RT_MEM_TOTAL, RT_MEM_FREE, RT_MEM_AVAILABLE, RT_MEM_BUFFERS, RT_MEM_CACHED, RT_MEM_SRECLAIMABLE,
    RT_MEM_ACTIVE, RT_MEM_INACTIVE, RT_MEM_SWAP_TOTAL, RT_MEM_SWAP_FREE,
    RT_MEM_PAGE_TABLES, /* the machine's page tables: they grow and shrink as any process maps or
                           unmaps memory (2 MiB of mappings a 4 KiB table) */
    RT_MEM_NFIELDS
};

typedef struct rt_meminfo {
    uint64_t kib[RT_MEM_NFIELDS];
    unsigned present; /* bit i set when field i was found */
} rt_meminfo;

/* Parses /proc/meminfo (values in kB). Returns 0, or -1 when MemTotal is missing. */
int rt_meminfo_parse(const char *buf, size_t len, rt_meminfo *out);

/* ---- /proc/diskstats -------------------------------------------------------------------- */

typedef struct rt_diskstat {
    unsigned major, minor;
    char name[64];
    unsigned nfields; /* whitespace-separated fields on the line: 14, 18 or 20 on known kernels */
    uint64_t sectors_read, sectors_written; /* 512-byte units, whatever the device's sector size */
} rt_diskstat;

/* Parses /proc/diskstats into out[0..cap). Lines with fewer than 14 fields (old partition
 * lines) or unparsable numbers are skipped. Returns the number of lines parsed, which may
 * exceed cap (only cap were stored): the caller grows its array and parses again. */
size_t rt_diskstats_parse(const char *buf, size_t len, rt_diskstat *out, size_t cap);

/* Parses a block device's sysfs stat file (<sys>/block/NAME/stat: diskstats' counters for that
 * one device, without its numbers and name; 11, 15 or 17 of them on known kernels) into the
 * sectors read and written (512-byte units). Returns 0, or -1 when it is not one line of at
 * least 11 numbers. */
int rt_blockstat_parse(const char *buf, size_t len, uint64_t *sectors_read, uint64_t *sectors_written);

/* ---- /proc/net/dev ---------------------------------------------------------------------- */

typedef struct rt_netdev {
    char name[32];
    uint64_t rx_bytes, tx_bytes;
} rt_netdev;

/* Parses /proc/net/dev (two header lines, then "name: 16 counters"). Same return contract as
 * rt_diskstats_parse. */
size_t rt_netdev_parse(const char *buf, size_t len, rt_netdev *out, size_t cap);

/* ---- /proc/self/mountinfo --------------------------------------------------------------- */

typedef struct rt_mountinfo_entry {
    unsigned major, minor;
    const char *root;        /* unescaped, NUL-terminated; valid only during the callback */
    const char *mount_point;
    const char *fstype;
    const char *source;
} rt_mountinfo_entry;

typedef void (*rt_mountinfo_cb)(void *user, const rt_mountinfo_entry *e);

/* Parses mountinfo, calling cb for each well-formed line (octal escapes such as \040 undone).
 * Returns the number of malformed lines skipped. */
size_t rt_mountinfo_parse(const char *buf, size_t len, rt_mountinfo_cb cb, void *user);
/* Copies the mountinfo field s[0..n) into dst (cap bytes, NUL-terminated), undoing \ooo escapes.
 * False when it does not fit. */
bool rt_mountinfo_unescape(char *dst, size_t cap, const char *s, size_t n);

/* ---- sysfs: block devices ---------------------------------------------------------------- */

/* Static facts about one whole disk, read once when it is discovered. */
typedef struct rt_disk_info {
    char *name, *model, *vendor, *serial;
    const char *device_type; /* static string or NULL */
    uint64_t capacity_bytes;
} rt_disk_info;

/* Decides whether the block device called name is a whole physical disk (listed in the
 * sys root's block directory and not a virtual device such as loop, zram, dm or md). Without
 * a sys root, falls back on the name. */
bool rt_block_is_physical_disk(const rt_roots *r, const char *name);

/* Decides whether the block device called name is one a sample lists (as the Rust tool
 * lists them): every whole device of the sys root's block directory but loop* and ram*, so the
 * physical disks and the virtual ones built on them or on memory (device-mapper, md, zram,
 * nbd). Without a sys root, falls back on the name (a physical disk's, or zram, dm-, md). */
bool rt_block_is_listed(const rt_roots *r, const char *name);

/* Opens the block device name's stat file under the sys root (block/NAME/stat, '/' in the name
 * spelled '!'), to be kept open and re-read (rt_blockstat_parse). Returns the fd, or a negative
 * errno (none there, no sys root, descriptors short: -EMFILE). */
int rt_block_stat_open(const rt_roots *r, const char *name);

/* Reads model, vendor, serial, type and capacity of disk name. Returns 0 or -1 (no memory);
 * missing attributes stay NULL. Free with rt_disk_info_free. */
int rt_disk_info_read(const rt_roots *r, const char *name, rt_disk_info *out);
void rt_disk_info_free(rt_disk_info *d);

/* Adds up the capacity of the whole physical disks listed in <proc>/diskstats (the physical
 * disks a sample lists; not the virtual ones on them): *bytes over the *known disks whose size sysfs gives, of *disks in all.
 * Returns 0, or -1 when diskstats cannot be read (all zero). */
int rt_disks_capacity(const rt_roots *r, uint64_t *bytes, size_t *disks, size_t *known);

/* Resolves the block device major:minor (or, failing that, the mount source such as
 * "/dev/sda1" or "/dev/mapper/vg-lv") to the whole disks it lives on, through partitions and
 * the slaves of device-mapper and md devices. Calls cb with each disk name found (possibly
 * several for a volume spanning disks), and first with the device itself when it is a listed
 * virtual device (rt_block_is_listed: dm-0 for /dev/mapper/vg-lv, md0; as the Rust tool lists
 * a mount under its source's device). Returns the number of physical disks found. */
size_t rt_block_resolve_disks(const rt_roots *r, unsigned major, unsigned minor, const char *source,
                              void (*cb)(void *user, const char *disk), void *user);

/* ---- ZFS pools (zfs.c) ------------------------------------------------------------------ */

/* One line of `zpool list -Hp -o name,size,allocated,free`: bytes, exact (-p). */
typedef struct rt_zpool {
    char name[256]; /* ZFS's longest name is 255 bytes */
    uint64_t size, allocated, free;
} rt_zpool;

/* Whether the ZFS kernel module is loaded: <proc root>/spl/kstat/zfs exists (it holds a
 * directory per imported pool). A single faccessat: no command is run on other machines. */
bool rt_zfs_loaded(const rt_roots *r);

/* Parses zpool's answer: tab-separated "name size allocated free" lines (fields past the fourth
 * ignored, as both peers do). A line with fewer fields, a number that is not a whole decimal or
 * no newline at its end (the answer cut short) is skipped and counted in *bad (may be NULL); a
 * pool of size 0 or with a "-" figure (one that cannot say) is left out without counting. Returns the pools parsed, which may exceed cap (only cap were stored). Pure. */
size_t rt_zpool_list_parse(const char *buf, size_t len, rt_zpool *out, size_t cap, size_t *bad);

/* Runs `zpool list -Hp -o name,size,allocated,free` (zpool found on the PATH; never a shell;
 * its environment PATH and LC_ALL=C only) with rt_place_run: stdout into out[cap], killed and reaped past timeout_secs. Returns 0 when
 * it exited 0, 1 when zpool is not on the PATH, -1 with why set otherwise. */
int rt_zpool_list_run(double timeout_secs, char *out, size_t cap, char *why, size_t whylen);

/* The mount point of pool's shallowest zfs dataset in mountinfo (the fewest '/'-separated
 * levels in the mount source; the first of equals) into out[cap]. Returns false (out empty)
 * when the pool has no zfs mount there (or its path does not fit). Pure. */
bool rt_zfs_pool_mount(const char *mountinfo, size_t len, const char *pool, char *out, size_t cap);

/* ---- sysfs: network interfaces ---------------------------------------------------------- */

typedef struct rt_netif_info {
    char *name, *mac_address, *driver;
    bool loopback;
    int operstate_fd, speed_fd, mtu_fd; /* kept open and re-read each sample; -1 if absent */
} rt_netif_info;

/* Reads the static facts of interface name and opens its changing attributes. Returns 0 or
 * -1 (no memory). Free with rt_netif_info_free. */
int rt_netif_info_open(const rt_roots *r, const char *name, rt_netif_info *out);
void rt_netif_info_free(rt_netif_info *n);

/* The integer in a sysfs attribute's buf[0..n) (n <= 0: unread), trimmed, as written (a speed
 * of -1 too, as the Rust tool reads it), or RT_NULL_I64 when it holds anything else. */
int64_t rt_parse_attr_int(const char *buf, ssize_t n);
/* Parses the value of a sysfs "speed" file: Mbps, or RT_NULL_I64 for -1, empty or an error. */
int64_t rt_parse_speed(const char *buf, ssize_t n);

/* ---- per-process files ------------------------------------------------------------------ */

/* The fields of /proc/PID/stat the tracker uses (times in clock ticks). */
typedef struct rt_pidstat {
    int64_t pid, ppid;
    char state;
    uint64_t utime, stime, cutime, cstime;
    int64_t num_threads;
    uint64_t starttime; /* ticks after boot: with the pid, the identity of a process */
    uint64_t vsize_bytes; /* virtual memory size (field 23), bytes: 0 for a zombie */
    uint64_t rss_pages;
    uint64_t minflt, majflt; /* page faults of all its threads (fields 10 and 12); a copy-on-write
                                break is one, so they move when RSS does not */
    uint64_t start_code, start_stack; /* where its memory's code and stack start (fields 26 and
                                         28): a process in another's memory shows the other's;
                                         0 where the kernel hides them or the line stops short */
    uint64_t sigignore; /* the signals it ignores, 1-32 (field 33: bit n-1 is signal n; bit 16,
                           SIGCHLD, has the kernel reap its children without a wait); 0 where the
                           line stops short */
} rt_pidstat;

/* Parses /proc/PID/stat. The command name may hold spaces and parentheses: it ends at the last
 * ')'. Returns 0, or -1 when fields are missing or malformed. */
int rt_pidstat_parse(const char *buf, size_t len, rt_pidstat *out);

/* The storage-level counters of /proc/PID/io, in bytes. cancelled_write_bytes: dirty page
 * cache that never reached storage (the file was truncated or deleted before writeback); it
 * stays counted in write_bytes too. */
typedef struct rt_pidio {
    uint64_t read_bytes, write_bytes, cancelled_write_bytes;
} rt_pidio;

/* Parses /proc/PID/io into out. Returns 0, or -1 when read_bytes or write_bytes is missing or
 * malformed. A missing cancelled_write_bytes reads 0: every kernel that has the file prints the
 * three lines together; only hand-made files lack it. */
int rt_pidio_parse(const char *buf, size_t len, rt_pidio *out);

/* The figures of /proc/PID/smaps_rollup the tracker uses, in kB. */
typedef struct rt_rollup {
    uint64_t pss_kib, swap_kib; /* Swap: 0 when the line is missing */
    uint64_t private_kib;       /* Private_Clean + Private_Dirty: pages it alone maps */
    uint64_t shared_kib;        /* Shared_Clean + Shared_Dirty: pages others map too */
    bool split_ok;              /* all four of those lines were there */
    uint64_t exposed_kib;       /* its pages whose share another process can move by mapping or
                                   unmapping them, without this one doing anything: all but its
                                   private anonymous memory (Rss less what of Anonymous its
                                   shared pages cannot hold; the whole Rss, or private + shared,
                                   where the rollup lacks those lines) */
} rt_rollup;

/* Parses /proc/PID/smaps_rollup in one pass (the first line of each key counts). Returns 0,
 * or -1 without a Pss line. */
int rt_smaps_rollup_parse(const char *buf, size_t len, rt_rollup *out);

/* The peak resident set of /proc/PID/status ("VmHWM:  123 kB": the most the process has held
 * since it started, as the kernel counts it) into *hwm_kib. Returns 0, or -1 without that line
 * (a zombie, a kernel thread) or with a malformed value. */
int rt_status_hwm_parse(const char *buf, size_t len, uint64_t *hwm_kib);

/* Parses a /proc/PID/task/TID/children list of pids, calling cb for each. Returns how many. */
size_t rt_children_parse(const char *buf, size_t len, void (*cb)(void *user, int64_t pid), void *user);

/* ---- host facts ------------------------------------------------------------------------- */

/* These three take the bytes read (not NUL-terminated; never read past len) and write a
 * NUL-terminated string of at most cap-1 bytes into out (longer values are cut). Each returns
 * true when it found the value; on false out is "" (when cap > 0). buf may be NULL when len
 * is 0. */

/* The CPU model of /proc/cpuinfo: the first "model name" line (x86), else "Model" (arm),
 * else "Hardware" (older arm), else "cpu model" (s390, mips), its value trimmed. A key whose
 * first line has an empty value gives way to the next key. */
bool rt_cpuinfo_model_parse(const char *buf, size_t len, char *out, size_t cap);

/* PRETTY_NAME of an os-release file, without one pair of surrounding quotes (double or
 * single). True also for a quoted empty name; a bare "PRETTY_NAME=" line is skipped. */
bool rt_os_release_parse(const char *buf, size_t len, char *out, size_t cap);

/* The interface of the first IPv4 default route that is up in /proc/net/route (destination
 * 00000000, flag RTF_UP in the hex Flags column). False when there is none, or when the
 * interface name does not fit in cap. */
bool rt_net_route_default_parse(const char *buf, size_t len, char *out, size_t cap);

#endif
