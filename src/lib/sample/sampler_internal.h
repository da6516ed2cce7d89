/* sampler_internal.h - the sampler's state: kept-open procfs descriptors, the previous
 * reading of every counter, discovered disks, filesystems and interfaces, and the arrays the
 * public sample points into. Not public. */
#ifndef RT_SAMPLER_INTERNAL_H
#define RT_SAMPLER_INTERNAL_H

#include "../source/gpu.h"
#include "../source/proctree.h"
#include "../source/sources.h"

typedef struct disk_state {
    rt_disk_info info;
    size_t ds_index; /* its line in the last diskstats parse */
    uint64_t prev_read, prev_written, cur_read, cur_written; /* sectors */
    size_t mount_first, mount_count; /* its slice of out_mounts */
} disk_state;

typedef struct fs_state {
    char *mount_point, *fstype;
    size_t *disks; /* indexes into disks[] */
    size_t ndisks, disks_cap;
    uint64_t total, used, avail; /* bytes, from the latest statvfs */
} fs_state;

typedef struct iface_state {
    rt_netif_info info;
    size_t nd_index;
    uint64_t prev_rx, prev_tx;
    char operstate[32];
    bool have_operstate;
    int64_t speed_mbps, mtu;
    bool attrs_read; /* operstate, speed and mtu read at least once */
} iface_state;

/* How often an interface's operstate, speed and MTU are re-read. */
#define RT_NET_ATTR_REFRESH_SECS 5.0

struct rt_sampler {
    rt_roots roots;
    rt_logger log;
    rt_statvfs_fn statvfs_fn;
    void *statvfs_user;
    long clk_tck;
    int stat_fd, meminfo_fd, diskstats_fd, netdev_fd, mountinfo_fd;
    rt_buf rbuf; /* the read buffer every kept file goes through */

    /* cpu */
    rt_cpu_ticks prev_total, cur_total;
    rt_cpu_ticks *prev_cores, *cur_cores;
    size_t prev_ncores, cur_ncores, cores_cap;
    double *per_core;
    bool have_prev_cpu;

    /* disks and filesystems */
    rt_diskstat *ds;
    size_t ds_cap;
    uint64_t ds_sig;
    disk_state *disks;
    size_t ndisks;
    rt_disk *out_disks;
    fs_state *fs;
    size_t nfs, fs_cap;
    rt_mount *out_mounts;
    size_t out_mounts_cap;
    size_t *mount_fs; /* for each out_mounts slot, its fs index */
    size_t mount_fs_cap;
    bool mounts_dirty;

    /* network */
    rt_netdev *nd;
    size_t nd_cap;
    uint64_t nd_sig;
    iface_state *ifaces;
    size_t nifaces;
    rt_net_iface *out_ifaces;
    double net_attrs_mono; /* when the interface attributes were last read */

    rt_gpus *gpus;

    /* process tree */
    rt_proctree *tree;
    int64_t root_pid;
    rt_tree_totals tree_prev;    /* the previous scan's raw totals */
    uint64_t tree_ut_ns, tree_st_ns; /* accumulated since the baseline, never decreasing */
    uint64_t tree_rd, tree_wr;
    bool have_tree_prev;
    bool tree_from_zero; /* the caller started the tree: count it from zero, not a baseline */
    rt_process process;

    double prev_mono;
    bool have_prev_time;
    rt_sample sample;
};

#endif
