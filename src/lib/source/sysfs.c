/* sysfs.c - discovery of whole disks and network interfaces under the sys root: which block
 * devices are physical disks, their model, vendor, serial, type and size, how a mounted
 * filesystem maps onto disks (partitions, device-mapper and md slaves), and interface facts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "sources.h"

/* Reads a symlink relative to dirfd into buf (NUL-terminated). Returns length or -1. */
static ssize_t readlink_at(int dirfd, const char *path, char *buf, size_t cap)
{
    if (dirfd < 0)
        return -1;
    ssize_t n = readlinkat(dirfd, path, buf, cap - 1);
    if (n < 0 || (size_t)n >= cap - 1)
        return -1;
    buf[n] = '\0';
    return n;
}

/* The part of path p after its last slash (p itself without one); points into p. */
static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Kernel block names may contain '/', which sysfs spells '!' (cciss/c0d0 -> cciss!c0d0). */
static void sysfs_name(char *dst, size_t cap, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < cap; i++)
        dst[i] = name[i] == '/' ? '!' : name[i];
    dst[i] = '\0';
}

/* Without a sys root: a guess from the name alone. */
static bool name_looks_like_disk(const char *n)
{
    static const char *const virt[] = {"loop", "ram", "zram", "dm-", "md", "nbd", "sr", "fd"};
    for (size_t i = 0; i < RT_ARRAY_LEN(virt); i++)
        if (strncmp(n, virt[i], strlen(virt[i])) == 0)
            return false;
    size_t len = strlen(n);
    if (len == 0 || n[len - 1] < '0' || n[len - 1] > '9')
        return true;
    /* ends in a digit: nvme0n1 and mmcblk0 are disks, nvme0n1p1 / mmcblk0p1 / sda1 are not */
    if (strncmp(n, "nvme", 4) == 0 || strncmp(n, "mmcblk", 6) == 0) {
        const char *p = n + len;
        while (p > n && p[-1] >= '0' && p[-1] <= '9')
            p--;
        return !(p > n && p[-1] == 'p');
    }
    return false;
}

bool rt_block_is_physical_disk(const rt_roots *r, const char *name)
{
    if (r->sys_fd < 0)
        return name_looks_like_disk(name);
    char sname[128], path[256], target[1024];
    sysfs_name(sname, sizeof sname, name);
    if (!rt_pathf(path, sizeof path, "block/%s", sname))
        return false;
    if (readlink_at(r->sys_fd, path, target, sizeof target) < 0)
        return false; /* not a whole disk (a partition), or gone */
    return strstr(target, "/virtual/") == NULL;
}

bool rt_block_is_listed(const rt_roots *r, const char *name)
{
    if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
        return false;
    if (r->sys_fd < 0)
        return name_looks_like_disk(name) || strncmp(name, "zram", 4) == 0 || strncmp(name, "dm-", 3) == 0 ||
               strncmp(name, "md", 2) == 0;
    char sname[128], path[256], target[1024];
    sysfs_name(sname, sizeof sname, name);
    return rt_pathf(path, sizeof path, "block/%s", sname) && readlink_at(r->sys_fd, path, target, sizeof target) >= 0;
}

int rt_block_stat_open(const rt_roots *r, const char *name)
{
    if (r->sys_fd < 0)
        return -ENOENT;
    char sname[128], path[256];
    sysfs_name(sname, sizeof sname, name);
    if (!rt_pathf(path, sizeof path, "block/%s/stat", sname))
        return -ENAMETOOLONG;
    return rt_open_keep(r->sys_fd, path);
}

/* Reads the sysfs attribute at path, trimmed; returns a heap string, or NULL when it is
 * absent, unreadable or empty. */
static char *read_trimmed(const rt_roots *r, const char *path)
{
    char buf[256], out[256];
    ssize_t n = rt_read_at(r->sys_fd, path, buf, sizeof buf);
    if (n <= 0)
        return NULL;
    return rt_copy_trim(out, sizeof out, buf, (size_t)n) ? strdup(out) : NULL;
}

/* Reads attribute "block/NAME/REL" (see read_trimmed). */
static char *read_attr(const rt_roots *r, const char *sname, const char *rel)
{
    char path[512];
    return rt_pathf(path, sizeof path, "block/%s/%s", sname, rel) ? read_trimmed(r, path) : NULL;
}

static uint64_t disk_capacity(const rt_roots *r, const char *name);

int rt_disk_info_read(const rt_roots *r, const char *name, rt_disk_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = strdup(name);
    if (!out->name)
        return -1;
    out->capacity_bytes = RT_NULL_U64;
    if (r->sys_fd < 0)
        return 0;
    char sname[128], path[256];
    sysfs_name(sname, sizeof sname, name);
    out->capacity_bytes = disk_capacity(r, name);
    if (out->capacity_bytes == 0) /* no size (an unconfigured zram, a reader without media): none, as the Rust tool says */
        out->capacity_bytes = RT_NULL_U64;
    out->model = read_attr(r, sname, "device/model");
    out->vendor = read_attr(r, sname, "device/vendor");
    if (!out->vendor)
        out->vendor = read_attr(r, sname, "device/device/vendor"); /* NVMe: the PCI vendor id */
    static const char *const serial_at[] = {"device/serial", "serial", "device/wwid", "wwid"};
    for (size_t i = 0; i < RT_ARRAY_LEN(serial_at) && !out->serial; i++)
        out->serial = read_attr(r, sname, serial_at[i]);
    if (strncmp(name, "nvme", 4) == 0) {
        out->device_type = "nvme";
    } else {
        char rot[16];
        if (rt_pathf(path, sizeof path, "block/%s/queue/rotational", sname) &&
            rt_read_line_at(r->sys_fd, path, rot, sizeof rot) > 0)
            out->device_type = rot[0] == '0' ? "ssd" : rot[0] == '1' ? "hdd" : NULL;
    }
    return 0;
}

void rt_disk_info_free(rt_disk_info *d)
{
    rt_free_all(d->name, d->model, d->vendor, d->serial);
    memset(d, 0, sizeof *d);
}

/* The size of disk name in bytes (sysfs "size" counts 512-byte units), or RT_NULL_U64. */
static uint64_t disk_capacity(const rt_roots *r, const char *name)
{
    char sname[128], path[256];
    int64_t sectors;
    sysfs_name(sname, sizeof sname, name);
    if (r->sys_fd < 0 || !rt_pathf(path, sizeof path, "block/%s/size", sname) ||
        rt_read_i64_at(r->sys_fd, path, &sectors) < 0 || sectors < 0)
        return RT_NULL_U64;
    return (uint64_t)sectors * 512u;
}

int rt_disks_capacity(const rt_roots *r, uint64_t *bytes, size_t *disks, size_t *known)
{
    *bytes = 0;
    *disks = *known = 0;
    int fd = rt_open_at(r->proc_fd, "diskstats");
    if (fd < 0)
        return -1;
    rt_buf b;
    rt_buf_init(&b, 4u << 20);
    ssize_t n = rt_read_fd_grow(fd, &b, RT_READ_SHORT_LINES);
    close(fd);
    rt_diskstat *ds = NULL;
    size_t cap = 0, nds = n > 0 ? rt_diskstats_parse(b.data, (size_t)n, NULL, 0) : 0;
    if (nds && rt_grow(&ds, &cap, nds, sizeof *ds) == 0)
        rt_diskstats_parse(b.data, (size_t)n, ds, cap);
    else
        nds = 0;
    for (size_t i = 0; i < nds; i++) {
        if (!rt_block_is_physical_disk(r, ds[i].name))
            continue;
        (*disks)++;
        uint64_t c = disk_capacity(r, ds[i].name);
        if (c != RT_NULL_U64) {
            *bytes += c;
            (*known)++;
        }
    }
    free(ds);
    rt_buf_free(&b);
    return n < 0 ? -1 : 0;
}

typedef void (*disk_cb)(void *user, const char *disk);

/* A walk over the slaves of a stacked block device, resolving each to its disks. */
typedef struct slave_walk {
    const rt_roots *r;
    int depth;
    disk_cb cb;
    void *user;
    size_t found;
} slave_walk;

/* A search of block/ for the dm device of a /dev/mapper name. */
typedef struct dm_lookup {
    const rt_roots *r;
    const char *mapper_name;
    char *out;
    size_t cap;
    bool ok;
} dm_lookup;

static size_t resolve_name(const rt_roots *r, const char *name, int depth, disk_cb cb, void *user);

/* rt_dir_walk callback over a slaves directory: resolves one slave ('!' in sysfs is '/'). */
static int visit_slave(void *user, const char *name, unsigned char d_type)
{
    (void)d_type;
    slave_walk *w = user;
    char slave[256];
    if (!rt_copy_str(slave, sizeof slave, name))
        return 0;
    for (char *c = slave; *c; c++)
        if (*c == '!')
            *c = '/';
    w->found += resolve_name(w->r, slave, w->depth + 1, w->cb, w->user);
    return 0;
}

/* Calls cb for each whole disk block device name lives on (itself, its partition's disk, or
 * recursively its slaves), at most 8 levels deep. Returns the number of disks found. */
static size_t resolve_name(const rt_roots *r, const char *name, int depth, disk_cb cb, void *user)
{
    if (depth > 8 || !*name)
        return 0;
    if (rt_block_is_physical_disk(r, name)) {
        cb(user, name);
        return 1;
    }
    if (r->sys_fd < 0)
        return 0;
    if (depth == 0 && rt_block_is_listed(r, name))
        cb(user, name); /* the mount's own (virtual) device, listed too */
    char sname[128], path[512], target[1024];
    sysfs_name(sname, sizeof sname, name);
    /* A partition: its directory sits inside its disk's directory. */
    if (rt_pathf(path, sizeof path, "class/block/%s/partition", sname) && faccessat(r->sys_fd, path, F_OK, 0) == 0 &&
        rt_pathf(path, sizeof path, "class/block/%s", sname) && readlink_at(r->sys_fd, path, target, sizeof target) > 0) {
        char *slash = strrchr(target, '/');
        if (!slash)
            return 0;
        *slash = '\0';
        char parent[128];
        if (!rt_copy_str(parent, sizeof parent, base_name(target)))
            return 0;
        return resolve_name(r, parent, depth + 1, cb, user);
    }
    /* Device-mapper, md, bcache...: the devices it is built on are its slaves. */
    slave_walk w = {r, depth, cb, user, 0};
    if (rt_pathf(path, sizeof path, "class/block/%s/slaves", sname))
        rt_dir_walk(r->sys_fd, path, visit_slave, &w);
    return w.found;
}

/* rt_dir_walk callback over block/dm-*: stops at the dm device whose dm/name is the one asked. */
static int match_dm_name(void *user, const char *name, unsigned char d_type)
{
    (void)d_type;
    dm_lookup *l = user;
    char path[512], nm[256];
    if (strncmp(name, "dm-", 3) != 0 || !rt_pathf(path, sizeof path, "block/%s/dm/name", name) ||
        rt_read_line_at(l->r->sys_fd, path, nm, sizeof nm) <= 0 || strcmp(nm, l->mapper_name) != 0)
        return 0;
    l->ok = rt_copy_str(l->out, l->cap, name);
    return 1;
}

/* Finds the dm-N device whose dm/name is mapper_name; writes its kernel name into out. */
static bool find_dm_by_name(const rt_roots *r, const char *mapper_name, char *out, size_t cap)
{
    dm_lookup l = {r, mapper_name, out, cap, false};
    rt_dir_walk(r->sys_fd, "block", match_dm_name, &l);
    return l.ok;
}

size_t rt_block_resolve_disks(const rt_roots *r, unsigned major, unsigned minor, const char *source, disk_cb cb,
                              void *user)
{
    char path[64], target[1024], name[256] = "";
    if (major != 0 && r->sys_fd >= 0) {
        snprintf(path, sizeof path, "dev/block/%u:%u", major, minor);
        if (readlink_at(r->sys_fd, path, target, sizeof target) > 0)
            rt_copy_str(name, sizeof name, base_name(target));
    }
    if (!name[0] && source && strncmp(source, "/dev/", 5) == 0) {
        /* No usable device number (btrfs, some overlays): go by the mount source. */
        if (strncmp(source, "/dev/mapper/", 12) == 0) {
            if (r->sys_fd < 0 || !find_dm_by_name(r, source + 12, name, sizeof name))
                return 0;
        } else {
            rt_copy_str(name, sizeof name, source + 5);
        }
        for (char *c = name; *c; c++) /* /dev/cciss/c0d0 -> cciss!c0d0 in sysfs */
            if (*c == '/')
                *c = '!';
    }
    if (!name[0])
        return 0;
    for (char *c = name; *c; c++)
        if (*c == '!')
            *c = '/';
    return resolve_name(r, name, 0, cb, user);
}

int64_t rt_parse_attr_int(const char *buf, ssize_t n)
{
    if (n <= 0)
        return RT_NULL_I64;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    while (*end == '\n' || *end == ' ')
        end++;
    return errno || end == buf || *end != '\0' ? RT_NULL_I64 : v;
}

int64_t rt_parse_speed(const char *buf, ssize_t n)
{
    int64_t v = rt_parse_attr_int(buf, n);
    if (v == RT_NULL_I64 || v < 0 || v >= 0xFFFFFFFFLL)
        return RT_NULL_I64; /* -1 or SPEED_UNKNOWN: the link does not report a speed */
    return v;
}

/* Attribute class/net/NAME/REL, trimmed, as a heap string; NULL when absent or empty. */
static char *read_net_attr(const rt_roots *r, const char *name, const char *rel)
{
    char path[512];
    return rt_pathf(path, sizeof path, "class/net/%s/%s", name, rel) ? read_trimmed(r, path) : NULL;
}

/* Opens attribute class/net/NAME/REL to be kept and re-read. Returns the fd or -1. */
static int open_net_attr(const rt_roots *r, const char *name, const char *rel)
{
    char path[512];
    if (!rt_pathf(path, sizeof path, "class/net/%s/%s", name, rel))
        return -1;
    int fd = rt_open_keep(r->sys_fd, path); /* descriptors short: the figure is left out (null) */
    return fd < 0 ? -1 : fd;
}

int rt_netif_info_open(const rt_roots *r, const char *name, rt_netif_info *out)
{
    memset(out, 0, sizeof *out);
    out->operstate_fd = out->speed_fd = out->mtu_fd = -1;
    out->name = strdup(name);
    if (!out->name)
        return -1;
    out->loopback = strcmp(name, "lo") == 0;
    if (r->sys_fd < 0)
        return 0;
    char *flags = read_net_attr(r, name, "flags");
    if (flags) {
        out->loopback = (strtoul(flags, NULL, 16) & 0x8u) != 0; /* IFF_LOOPBACK */
        free(flags);
    }
    out->mac_address = read_net_attr(r, name, "address");
    char path[512], target[1024];
    if (rt_pathf(path, sizeof path, "class/net/%s/device/driver", name) &&
        readlink_at(r->sys_fd, path, target, sizeof target) > 0)
        out->driver = strdup(base_name(target));
    out->operstate_fd = open_net_attr(r, name, "operstate");
    out->speed_fd = open_net_attr(r, name, "speed");
    out->mtu_fd = open_net_attr(r, name, "mtu");
    return 0;
}

void rt_netif_info_free(rt_netif_info *n)
{
    rt_free_all(n->name, n->mac_address, n->driver);
    rt_close_all(&n->operstate_fd, &n->speed_fd, &n->mtu_fd);
    memset(n, 0, sizeof *n);
    n->operstate_fd = n->speed_fd = n->mtu_fd = -1;
}
