/* disks.h - the sampler's disk part: whole physical disks from /proc/diskstats and sysfs,
 * the filesystems mounted on them (mountinfo, re-read only when the kernel flags a change)
 * with their space (statvfs), and bytes read and written per interval; ZFS pools (zfs.c) listed
 * beside them as disks "zfs:<pool>", as the Rust tool lists them. Between two readings of
 * diskstats (RT_DISK_PROBE_SECS apart at most), each listed disk's counters come from its own
 * sysfs stat file (the same counters, for one device instead of every one). */
#ifndef RT_SAMPLE_DISKS_H
#define RT_SAMPLE_DISKS_H

#include <sys/statvfs.h>

#include "context.h"

/* Replaces statvfs(3), e.g. to replay a fixture (see replay.h). Returns 0 or -1. */
typedef int (*rt_statvfs_fn)(void *user, const char *mount_point, struct statvfs *out);

typedef struct rt_disk_state {
    rt_disk_info info;
    size_t ds_index;                    /* its line in the current diskstats parse */
    bool have_cur;                      /* found in the current diskstats */
    uint64_t prev_read, prev_written;   /* sectors at the previous reading */
    uint64_t cur_read, cur_written;     /* sectors at the current reading */
    size_t mount_first, mount_count;    /* its slice of the mount pointer array */
    bool is_virtual;                    /* not a physical disk (rt_block_is_physical_disk) */
    int stat_fd;                        /* its sysfs stat file, kept open; -1: none (diskstats) */
} rt_disk_state;

typedef struct rt_fs_state {
    char *mount_point, *fstype;
    size_t *disks; /* indexes into the disk array */
    size_t ndisks, disks_cap;
    uint64_t total, used, avail; /* bytes, from the latest statvfs; RT_NULL_U64 when it failed */
    bool on_physical;            /* some of its disks are physical (the space sums count it) */
} rt_fs_state;

/* One ZFS pool listed as a disk "zfs:<pool>" (zfs.c): its space is its one mount's. */
typedef struct rt_pool_state {
    char device[4 + sizeof(((rt_zpool *)0)->name)]; /* "zfs:<pool>" */
    char mount_point[4096];                         /* "" when no dataset of it is mounted */
    uint64_t size, allocated, free;
    rt_disk out;
    rt_mount mount;
    const rt_mount *mount_ptr;
} rt_pool_state;

/* Seconds between two askings whether the ZFS module is loaded while it is not (disks.c). */
#define RT_ZFS_PROBE_SECS 10.0

/* Seconds at most between two readings of /proc/diskstats while every listed disk's own sysfs
 * stat file can be read (a disk added since shows by then, or at once when the mounts change;
 * one removed at once: its file fails). diskstats lists every block device (loop devices,
 * partitions) and costs 25-40 µs a sample in cold caches; the listed disks' own files 5-10 µs
 * each (bench-files --cold). */
#define RT_DISK_PROBE_SECS 10.0

typedef struct rt_disk_part {
    int diskstats_fd, mountinfo_fd;
    rt_statvfs_fn statvfs_fn; /* NULL: statvfs(3) */
    void *statvfs_user;
    rt_diskstat *ds; /* the current diskstats parse */
    size_t nds, ds_cap;
    uint64_t ds_sig; /* hash of the device names: rediscovery when it changes */
    double ds_mono;  /* when diskstats was last read (0: never) */
    bool stat_files; /* every listed disk has its sysfs stat file open */
    uint64_t ds_reads, stat_reads; /* samples read from diskstats, from the stat files (tests) */
    bool have_cur;
    rt_disk_state *disks;
    size_t ndisks;
    rt_fs_state *fs;
    size_t nfs, fs_cap;
    bool mounts_dirty;
    /* what the sample points to */
    rt_disk *out;
    const rt_disk **out_ptrs;
    rt_mount *mounts;
    const rt_mount **mount_ptrs;
    size_t *mount_fs; /* for each mount slot, its fs index */
    size_t mounts_cap, mount_ptrs_cap, mount_fs_cap;
    uint64_t space_total, space_used, space_free; /* RT_NULL_U64 when no statvfs worked */
    /* ZFS pools, only where the kernel module is loaded: zpool run at each snapshot
     * within half the time since the previous one (0.25 to 2 s; 0.5 s at the first); after one
     * failure (not found, an error, no answer in time, an answer not understood) warned once
     * and never run again by this sampler */
    bool zfs_off;
    double zfs_last_mono;
    bool zfs_loaded;       /* the module's presence at the last asking (disks.c's zfs_loaded) */
    double zfs_probe_mono; /* when it was last asked; 0: never */
    char *zfs_mountinfo; /* a copy of mountinfo's text while the module is loaded */
    size_t zfs_mountinfo_len;
    rt_zpool *zpools;
    size_t zpools_cap;
    rt_pool_state *pools;
    size_t npools, pools_cap;
    const rt_disk **list; /* the disks and the pools, sorted by name: what the sample points to */
    size_t nlist, list_cap;
} rt_disk_part;

/* Opens diskstats and mountinfo (missing files leave the disks empty). */
void rt_disk_part_open(rt_disk_part *p, rt_sample_ctx *c);
/* Reads the disks' counters at mono (monotonic seconds): from their sysfs stat files, or from
 * diskstats when RT_DISK_PROBE_SECS passed since its last reading, the mounts changed or a stat
 * file failed (rediscovering the disks when the device list changed); mountinfo when it
 * changed, and every filesystem's space. Returns whether the disks' counters could be read. */
bool rt_disk_part_snapshot(rt_disk_part *p, rt_sample_ctx *c, double mono);
/* Fills the disk and mount structs for an interval of elapsed seconds (rates null at 0), and
 * p->list: the disks and the ZFS pools sorted by name. */
void rt_disk_part_delta(rt_disk_part *p, double elapsed);
/* Makes the current sector counts the previous ones. */
void rt_disk_part_commit(rt_disk_part *p);
void rt_disk_part_close(rt_disk_part *p);

#endif
