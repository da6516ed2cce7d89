/* disks.h - the sampler's disk part: whole physical disks from /proc/diskstats and sysfs,
 * the filesystems mounted on them (mountinfo, re-read only when the kernel flags a change)
 * with their space (statvfs), and bytes read and written per interval. */
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
} rt_disk_state;

typedef struct rt_fs_state {
    char *mount_point, *fstype;
    size_t *disks; /* indexes into the disk array */
    size_t ndisks, disks_cap;
    uint64_t total, used, avail; /* bytes, from the latest statvfs; RT_NULL_U64 when it failed */
    bool on_physical;            /* some of its disks are physical (the space sums count it) */
} rt_fs_state;

typedef struct rt_disk_part {
    int diskstats_fd, mountinfo_fd;
    rt_statvfs_fn statvfs_fn; /* NULL: statvfs(3) */
    void *statvfs_user;
    rt_diskstat *ds; /* the current diskstats parse */
    size_t nds, ds_cap;
    uint64_t ds_sig; /* hash of the device names: rediscovery when it changes */
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
} rt_disk_part;

/* Opens diskstats and mountinfo (missing files leave the disks empty). */
void rt_disk_part_open(rt_disk_part *p, rt_sample_ctx *c);
/* Reads diskstats (rediscovering the disks when the device list changed), mountinfo when it
 * changed, and every filesystem's space. Returns whether diskstats could be read. */
bool rt_disk_part_snapshot(rt_disk_part *p, rt_sample_ctx *c);
/* Fills the disk and mount structs for an interval of elapsed seconds (rates null at 0). */
void rt_disk_part_delta(rt_disk_part *p, double elapsed);
/* Makes the current sector counts the previous ones. */
void rt_disk_part_commit(rt_disk_part *p);
void rt_disk_part_close(rt_disk_part *p);

#endif
