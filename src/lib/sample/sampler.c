/* sampler.c - whole-machine sampling: keeps the procfs files open, re-reads them with pread,
 * turns two readings into rates over the actual elapsed time, and rediscovers disks, mounts
 * and interfaces only when the kernel's lists change. No allocation in the steady state. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../source/sources.h"
#include "sampler_internal.h"

#define MAX_PROC_FILE (4u << 20) /* the most any procfs file may take in memory */

/* ---- helpers ------------------------------------------------------------------------------ */

static uint64_t delta_u64(uint64_t cur, uint64_t prev)
{
    return cur >= prev ? cur - prev : 0; /* a counter that went backwards (reset) counts 0 */
}

static uint64_t name_hash(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h * 31u + 7u;
}

/* Reads a kept-open procfs file into b; logs once per failure streak. Returns length or -1. */
static ssize_t read_kept(rt_sampler *s, int fd, rt_buf *b, const char *what)
{
    if (fd < 0)
        return -1;
    /* /proc/stat and meminfo are one record each; the others are lists */
    bool single = fd == s->stat_fd || fd == s->meminfo_fd;
    ssize_t n = rt_read_fd_grow(fd, b, single);
    if (n < 0) {
        rt_log(&s->log, RT_LOG_WARN, "cannot read %s: %s", what, strerror((int)-n));
        return -1;
    }
    return n;
}

/* ---- CPU ------------------------------------------------------------------------------------ */

static void read_cpu(rt_sampler *s)
{
    rt_cpu *out = &s->sample.cpu;
    out->utilization_pct = out->utime_secs = out->stime_secs = NAN;
    out->process_count = RT_NULL_I64;
    out->core_count = 0;
    ssize_t n = read_kept(s, s->stat_fd, &s->rbuf, "stat");
    if (n < 0)
        return;
    rt_stat st = {.cores = s->cur_cores, .core_cap = s->cores_cap};
    if (rt_stat_parse(s->rbuf.data, (size_t)n, &st) < 0) {
        rt_log(&s->log, RT_LOG_WARN, "stat: no aggregate cpu line");
        return;
    }
    if (st.core_count > s->cores_cap) { /* more cores than seen before (hotplug): grow, parse again */
        size_t cap = s->cores_cap, cap2 = s->cores_cap, cap3 = s->cores_cap;
        if (rt_grow(&s->cur_cores, &cap, st.core_count, sizeof *s->cur_cores) < 0 ||
            rt_grow(&s->prev_cores, &cap2, st.core_count, sizeof *s->prev_cores) < 0 ||
            rt_grow(&s->per_core, &cap3, st.core_count, sizeof *s->per_core) < 0)
            return;
        s->cores_cap = cap;
        st.cores = s->cur_cores;
        st.core_cap = s->cores_cap;
        rt_stat_parse(s->rbuf.data, (size_t)n, &st);
    }
    s->cur_ncores = st.core_count;
    s->cur_total = st.total;
    if (st.has_procs_running)
        out->process_count = (int64_t)st.procs_running;
    if (!s->have_prev_cpu)
        return;

    uint64_t tot = delta_u64(rt_cpu_total(&s->cur_total), rt_cpu_total(&s->prev_total));
    uint64_t busy = delta_u64(rt_cpu_busy(&s->cur_total), rt_cpu_busy(&s->prev_total));
    if (busy > tot)
        busy = tot;
    size_t ncores = s->cur_ncores ? s->cur_ncores : 1;
    if (tot > 0)
        out->utilization_pct = (double)busy / (double)tot * (double)ncores;
    uint64_t ut = delta_u64(s->cur_total.t[RT_CPU_USER] + s->cur_total.t[RT_CPU_NICE],
                            s->prev_total.t[RT_CPU_USER] + s->prev_total.t[RT_CPU_NICE]);
    uint64_t sy = delta_u64(s->cur_total.t[RT_CPU_SYSTEM], s->prev_total.t[RT_CPU_SYSTEM]);
    out->utime_secs = (double)ut / (double)s->clk_tck;
    out->stime_secs = (double)sy / (double)s->clk_tck;

    for (size_t i = 0; i < s->cur_ncores; i++) {
        const rt_cpu_ticks *c = &s->cur_cores[i], *p = NULL;
        if (i < s->prev_ncores && s->prev_cores[i].id == c->id)
            p = &s->prev_cores[i];
        for (size_t j = 0; !p && j < s->prev_ncores; j++)
            if (s->prev_cores[j].id == c->id)
                p = &s->prev_cores[j];
        s->per_core[i] = NAN;
        if (!p)
            continue; /* a core that just came online */
        uint64_t t = delta_u64(rt_cpu_total(c), rt_cpu_total(p));
        uint64_t b = delta_u64(rt_cpu_busy(c), rt_cpu_busy(p));
        if (b > t)
            b = t;
        if (t > 0)
            s->per_core[i] = (double)b / (double)t * 100.0;
    }
    out->per_core_pct = s->per_core;
    out->core_count = s->cur_ncores;
}

static void commit_cpu(rt_sampler *s)
{
    s->prev_total = s->cur_total;
    rt_cpu_ticks *t = s->prev_cores;
    s->prev_cores = s->cur_cores;
    s->cur_cores = t;
    s->prev_ncores = s->cur_ncores;
    s->have_prev_cpu = true;
}

/* ---- memory -------------------------------------------------------------------------------- */

static double mib_of(const rt_meminfo *m, int f)
{
    return (m->present & (1u << f)) ? (double)m->kib[f] / 1024.0 : NAN;
}

static void read_memory(rt_sampler *s)
{
    rt_memory *o = &s->sample.memory;
    o->total_mib = o->free_mib = o->available_mib = o->used_mib = o->used_pct = NAN;
    o->buffers_mib = o->cached_mib = o->active_mib = o->inactive_mib = NAN;
    o->swap_total_mib = o->swap_used_mib = o->swap_used_pct = NAN;
    ssize_t n = read_kept(s, s->meminfo_fd, &s->rbuf, "meminfo");
    rt_meminfo m;
    if (n < 0 || rt_meminfo_parse(s->rbuf.data, (size_t)n, &m) < 0)
        return;
    o->total_mib = mib_of(&m, RT_MEM_TOTAL);
    o->free_mib = mib_of(&m, RT_MEM_FREE);
    o->available_mib = mib_of(&m, RT_MEM_AVAILABLE);
    o->buffers_mib = mib_of(&m, RT_MEM_BUFFERS);
    double cached = mib_of(&m, RT_MEM_CACHED), srecl = mib_of(&m, RT_MEM_SRECLAIMABLE);
    o->cached_mib = isnan(cached) ? NAN : cached + (isnan(srecl) ? 0.0 : srecl);
    o->active_mib = mib_of(&m, RT_MEM_ACTIVE);
    o->inactive_mib = mib_of(&m, RT_MEM_INACTIVE);
    if (!isnan(o->free_mib) && !isnan(o->buffers_mib) && !isnan(o->cached_mib)) {
        double used = o->total_mib - o->free_mib - o->buffers_mib - o->cached_mib;
        o->used_mib = used < 0 ? 0 : used;
        o->used_pct = o->total_mib > 0 ? o->used_mib / o->total_mib * 100.0 : NAN;
    }
    o->swap_total_mib = mib_of(&m, RT_MEM_SWAP_TOTAL);
    double sfree = mib_of(&m, RT_MEM_SWAP_FREE);
    if (!isnan(o->swap_total_mib) && !isnan(sfree)) {
        o->swap_used_mib = o->swap_total_mib > sfree ? o->swap_total_mib - sfree : 0;
        o->swap_used_pct = o->swap_total_mib > 0 ? o->swap_used_mib / o->swap_total_mib * 100.0 : 0.0;
    }
}

/* ---- disks and mounts ---------------------------------------------------------------------- */

static void free_fs_list(rt_sampler *s)
{
    for (size_t i = 0; i < s->nfs; i++) {
        free(s->fs[i].mount_point);
        free(s->fs[i].fstype);
        free(s->fs[i].disks);
    }
    s->nfs = 0;
}

/* Mountinfo candidates collected during a parse. */
typedef struct mount_cand {
    unsigned major, minor;
    bool root_is_slash;
    char *mount_point, *fstype, *source;
} mount_cand;

typedef struct cand_list {
    mount_cand *v;
    size_t n, cap;
    bool oom;
} cand_list;

static void collect_mount(void *user, const rt_mountinfo_entry *e)
{
    cand_list *cl = user;
    /* filesystems without a block device are never on a disk: skip the common ones early */
    if (e->major == 0 && strncmp(e->source, "/dev/", 5) != 0)
        return;
    if (rt_grow(&cl->v, &cl->cap, cl->n + 1, sizeof *cl->v) < 0) {
        cl->oom = true;
        return;
    }
    mount_cand *c = &cl->v[cl->n];
    c->major = e->major;
    c->minor = e->minor;
    c->root_is_slash = strcmp(e->root, "/") == 0;
    c->mount_point = strdup(e->mount_point);
    c->fstype = strdup(e->fstype);
    c->source = strdup(e->source);
    if (!c->mount_point || !c->fstype || !c->source) {
        free(c->mount_point);
        free(c->fstype);
        free(c->source);
        cl->oom = true;
        return;
    }
    cl->n++;
}

/* Is candidate a a better representative of its filesystem than b? */
static bool better_mount(const mount_cand *a, const mount_cand *b)
{
    if (a->root_is_slash != b->root_is_slash)
        return a->root_is_slash;
    return strlen(a->mount_point) < strlen(b->mount_point);
}

typedef struct disk_collect {
    rt_sampler *s;
    fs_state *fs;
} disk_collect;

static void add_fs_disk(void *user, const char *disk)
{
    disk_collect *dc = user;
    for (size_t i = 0; i < dc->s->ndisks; i++) {
        if (strcmp(dc->s->disks[i].info.name, disk) != 0)
            continue;
        for (size_t k = 0; k < dc->fs->ndisks; k++)
            if (dc->fs->disks[k] == i)
                return;
        if (rt_grow(&dc->fs->disks, &dc->fs->disks_cap, dc->fs->ndisks + 1, sizeof *dc->fs->disks) == 0)
            dc->fs->disks[dc->fs->ndisks++] = i;
        return;
    }
}

/* Re-reads mountinfo and maps each distinct block filesystem to the disks it lives on. */
static void rebuild_mounts(rt_sampler *s)
{
    free_fs_list(s);
    s->mounts_dirty = false;
    if (s->mountinfo_fd < 0)
        return;
    ssize_t n = read_kept(s, s->mountinfo_fd, &s->rbuf, "mountinfo");
    if (n < 0)
        return;
    cand_list cl = {0};
    rt_mountinfo_parse(s->rbuf.data, (size_t)n, collect_mount, &cl);
    if (cl.oom)
        rt_log(&s->log, RT_LOG_WARN, "mountinfo: out of memory, some mounts left out");
    for (size_t i = 0; i < cl.n; i++) {
        mount_cand *c = &cl.v[i];
        /* keep one mount per filesystem: the best of those with the same device */
        bool dup = false;
        for (size_t j = 0; j < cl.n && !dup; j++) {
            if (j == i || cl.v[j].major != c->major || cl.v[j].minor != c->minor)
                continue;
            if (c->major == 0 && strcmp(cl.v[j].source, c->source) != 0)
                continue;
            dup = better_mount(&cl.v[j], c) || (!better_mount(c, &cl.v[j]) && j < i);
        }
        if (dup)
            continue;
        if (rt_grow(&s->fs, &s->fs_cap, s->nfs + 1, sizeof *s->fs) < 0)
            break;
        fs_state *f = &s->fs[s->nfs];
        memset(f, 0, sizeof *f);
        disk_collect dc = {s, f};
        rt_block_resolve_disks(&s->roots, c->major, c->minor, c->source, add_fs_disk, &dc);
        if (f->ndisks == 0) {
            free(f->disks);
            continue; /* not on a physical disk we list */
        }
        f->mount_point = strdup(c->mount_point);
        f->fstype = strdup(c->fstype);
        s->nfs++;
        if (!f->mount_point || !f->fstype)
            break;
    }
    for (size_t i = 0; i < cl.n; i++) {
        free(cl.v[i].mount_point);
        free(cl.v[i].fstype);
        free(cl.v[i].source);
    }
    free(cl.v);

    /* lay the mounts out per disk, contiguous, for the sample */
    size_t total = 0;
    for (size_t i = 0; i < s->nfs; i++)
        total += s->fs[i].ndisks;
    if (rt_grow(&s->out_mounts, &s->out_mounts_cap, total ? total : 1, sizeof *s->out_mounts) < 0 ||
        rt_grow(&s->mount_fs, &s->mount_fs_cap, total ? total : 1, sizeof *s->mount_fs) < 0 ||
        (s->nfs && (!s->fs[s->nfs - 1].mount_point || !s->fs[s->nfs - 1].fstype))) {
        rt_log(&s->log, RT_LOG_WARN, "mounts: out of memory");
        free_fs_list(s);
        for (size_t d = 0; d < s->ndisks; d++)
            s->disks[d].mount_count = 0;
        return;
    }
    size_t k = 0;
    for (size_t d = 0; d < s->ndisks; d++) {
        s->disks[d].mount_first = k;
        for (size_t i = 0; i < s->nfs; i++)
            for (size_t j = 0; j < s->fs[i].ndisks; j++)
                if (s->fs[i].disks[j] == d) {
                    s->out_mounts[k].mount_point = s->fs[i].mount_point;
                    s->out_mounts[k].filesystem = s->fs[i].fstype;
                    s->mount_fs[k] = i;
                    k++;
                }
        s->disks[d].mount_count = k - s->disks[d].mount_first;
    }
}

static bool mountinfo_changed(rt_sampler *s)
{
    if (s->mountinfo_fd < 0)
        return false;
    struct pollfd p = {.fd = s->mountinfo_fd, .events = POLLPRI};
    /* the kernel flags a change in the mount table with POLLERR|POLLPRI on mountinfo */
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLPRI));
}

static void rediscover_disks(rt_sampler *s, size_t nds)
{
    disk_state *old = s->disks;
    size_t nold = s->ndisks;
    size_t count = 0;
    for (size_t i = 0; i < nds; i++)
        if (rt_block_is_physical_disk(&s->roots, s->ds[i].name))
            count++;
    disk_state *nd = calloc(count ? count : 1, sizeof *nd);
    rt_disk *od = calloc(count ? count : 1, sizeof *od);
    if (!nd || !od) {
        free(nd);
        free(od);
        rt_log(&s->log, RT_LOG_WARN, "disks: out of memory");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < nds && k < count; i++) {
        if (!rt_block_is_physical_disk(&s->roots, s->ds[i].name))
            continue;
        disk_state *d = &nd[k];
        bool reused = false;
        for (size_t j = 0; j < nold; j++) {
            if (old[j].info.name && strcmp(old[j].info.name, s->ds[i].name) == 0) {
                *d = old[j];
                memset(&old[j], 0, sizeof old[j]);
                reused = true;
                break;
            }
        }
        if (!reused) {
            if (rt_disk_info_read(&s->roots, s->ds[i].name, &d->info) < 0)
                continue;
            d->prev_read = s->ds[i].sectors_read;
            d->prev_written = s->ds[i].sectors_written;
        }
        d->ds_index = i;
        k++;
    }
    for (size_t j = 0; j < nold; j++)
        rt_disk_info_free(&old[j].info);
    free(old);
    free(s->out_disks);
    s->disks = nd;
    s->ndisks = k;
    s->out_disks = od;
    s->mounts_dirty = true;
}

static void read_disks(rt_sampler *s, double elapsed)
{
    s->sample.disk_count = 0;
    s->sample.disk_space_total_bytes = s->sample.disk_space_used_bytes = s->sample.disk_space_free_bytes = RT_NULL_U64;
    ssize_t n = read_kept(s, s->diskstats_fd, &s->rbuf, "diskstats");
    if (n < 0)
        return;
    size_t nds = rt_diskstats_parse(s->rbuf.data, (size_t)n, s->ds, s->ds_cap);
    if (nds > s->ds_cap) {
        if (rt_grow(&s->ds, &s->ds_cap, nds, sizeof *s->ds) < 0)
            return;
        nds = rt_diskstats_parse(s->rbuf.data, (size_t)n, s->ds, s->ds_cap);
    }
    uint64_t sig = 1469598103934665603ull ^ nds;
    for (size_t i = 0; i < nds; i++)
        sig = name_hash(sig, s->ds[i].name);
    if (sig != s->ds_sig || !s->disks) {
        s->ds_sig = sig;
        rediscover_disks(s, nds);
    }
    if (s->mounts_dirty || mountinfo_changed(s))
        rebuild_mounts(s);

    /* filesystem space: once per filesystem */
    uint64_t tot = 0, used = 0, avail = 0;
    bool any = false;
    for (size_t i = 0; i < s->nfs; i++) {
        fs_state *f = &s->fs[i];
        struct statvfs v;
        int rc = s->statvfs_fn ? s->statvfs_fn(s->statvfs_user, f->mount_point, &v) : statvfs(f->mount_point, &v);
        if (rc != 0) {
            f->total = f->used = f->avail = RT_NULL_U64;
            continue;
        }
        uint64_t fr = v.f_frsize ? v.f_frsize : v.f_bsize;
        f->total = (uint64_t)v.f_blocks * fr;
        f->used = (uint64_t)(v.f_blocks >= v.f_bfree ? v.f_blocks - v.f_bfree : 0) * fr;
        f->avail = (uint64_t)v.f_bavail * fr;
        tot += f->total;
        used += f->used;
        avail += f->avail;
        any = true;
    }
    if (any) {
        s->sample.disk_space_total_bytes = tot;
        s->sample.disk_space_used_bytes = used;
        s->sample.disk_space_free_bytes = avail;
    }

    for (size_t d = 0; d < s->ndisks; d++) {
        disk_state *st = &s->disks[d];
        rt_disk *o = &s->out_disks[d];
        const rt_diskstat *ds = st->ds_index < nds ? &s->ds[st->ds_index] : NULL;
        if (!ds || strcmp(ds->name, st->info.name) != 0)
            ds = NULL;
        o->device = st->info.name;
        o->model = st->info.model;
        o->vendor = st->info.vendor;
        o->serial = st->info.serial;
        o->device_type = st->info.device_type;
        o->capacity_bytes = st->info.capacity_bytes;
        if (ds) {
            uint64_t dr = delta_u64(ds->sectors_read, st->prev_read);
            uint64_t dw = delta_u64(ds->sectors_written, st->prev_written);
            st->cur_read = ds->sectors_read;
            st->cur_written = ds->sectors_written;
            o->read_bytes_total = ds->sectors_read * 512u;
            o->write_bytes_total = ds->sectors_written * 512u;
            o->read_bytes = dr * 512u;
            o->write_bytes = dw * 512u;
            o->read_bytes_per_sec = elapsed > 0 ? (double)o->read_bytes / elapsed : NAN;
            o->write_bytes_per_sec = elapsed > 0 ? (double)o->write_bytes / elapsed : NAN;
        } else {
            o->read_bytes_total = o->write_bytes_total = o->read_bytes = o->write_bytes = RT_NULL_U64;
            o->read_bytes_per_sec = o->write_bytes_per_sec = NAN;
        }
        o->mounts = s->out_mounts + st->mount_first;
        o->mount_count = st->mount_count;
        for (size_t k = 0; k < st->mount_count; k++) {
            rt_mount *m = &s->out_mounts[st->mount_first + k];
            const fs_state *f = &s->fs[s->mount_fs[st->mount_first + k]];
            m->total_bytes = f->total;
            m->used_bytes = f->used;
            m->available_bytes = f->avail;
            m->used_pct = (f->used != RT_NULL_U64 && f->used + f->avail > 0)
                              ? (double)f->used / (double)(f->used + f->avail) * 100.0
                              : NAN;
        }
    }
    s->sample.disk = s->out_disks;
    s->sample.disk_count = s->ndisks;
}

static void commit_disks(rt_sampler *s)
{
    for (size_t d = 0; d < s->ndisks; d++) {
        if (s->out_disks[d].read_bytes_total == RT_NULL_U64)
            continue;
        s->disks[d].prev_read = s->disks[d].cur_read;
        s->disks[d].prev_written = s->disks[d].cur_written;
    }
}

/* ---- network -------------------------------------------------------------------------------- */

static void rediscover_ifaces(rt_sampler *s, size_t nnd)
{
    iface_state *old = s->ifaces;
    size_t nold = s->nifaces;
    iface_state *ni = calloc(nnd ? nnd : 1, sizeof *ni);
    rt_net_iface *oi = calloc(nnd ? nnd : 1, sizeof *oi);
    if (!ni || !oi) {
        free(ni);
        free(oi);
        rt_log(&s->log, RT_LOG_WARN, "network: out of memory");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < nnd; i++) {
        iface_state *f = &ni[k];
        bool reused = false;
        for (size_t j = 0; j < nold; j++) {
            if (old[j].info.name && strcmp(old[j].info.name, s->nd[i].name) == 0) {
                *f = old[j];
                memset(&old[j], 0, sizeof old[j]);
                old[j].info.operstate_fd = old[j].info.speed_fd = old[j].info.mtu_fd = -1;
                reused = true;
                break;
            }
        }
        if (!reused) {
            if (rt_netif_info_open(&s->roots, s->nd[i].name, &f->info) < 0)
                continue;
            f->prev_rx = s->nd[i].rx_bytes;
            f->prev_tx = s->nd[i].tx_bytes;
        }
        if (f->info.loopback) {
            rt_netif_info_free(&f->info);
            continue;
        }
        f->nd_index = i;
        k++;
    }
    for (size_t j = 0; j < nold; j++)
        rt_netif_info_free(&old[j].info);
    free(old);
    free(s->out_ifaces);
    s->ifaces = ni;
    s->nifaces = k;
    s->out_ifaces = oi;
}

static int64_t read_int_attr(int fd, char *buf, size_t cap, bool speed)
{
    if (fd < 0)
        return RT_NULL_I64;
    ssize_t n = rt_pread_single(fd, buf, cap);
    if (speed)
        return rt_parse_speed(buf, n);
    if (n <= 0)
        return RT_NULL_I64;
    char *end;
    long long v = strtoll(buf, &end, 10);
    return end == buf ? RT_NULL_I64 : v;
}

static void read_network(rt_sampler *s, double elapsed, double mono)
{
    s->sample.network_count = 0;
    ssize_t n = read_kept(s, s->netdev_fd, &s->rbuf, "net/dev");
    if (n < 0)
        return;
    size_t nnd = rt_netdev_parse(s->rbuf.data, (size_t)n, s->nd, s->nd_cap);
    if (nnd > s->nd_cap) {
        if (rt_grow(&s->nd, &s->nd_cap, nnd, sizeof *s->nd) < 0)
            return;
        nnd = rt_netdev_parse(s->rbuf.data, (size_t)n, s->nd, s->nd_cap);
    }
    uint64_t sig = 1469598103934665603ull ^ nnd;
    for (size_t i = 0; i < nnd; i++)
        sig = name_hash(sig, s->nd[i].name);
    if (sig != s->nd_sig || !s->ifaces) {
        s->nd_sig = sig;
        rediscover_ifaces(s, nnd);
    }
    /* link state, speed and MTU change rarely: re-read them every few seconds, not every sample */
    bool refresh = mono - s->net_attrs_mono >= RT_NET_ATTR_REFRESH_SECS || mono < s->net_attrs_mono;
    if (refresh)
        s->net_attrs_mono = mono;
    for (size_t i = 0; i < s->nifaces; i++) {
        iface_state *f = &s->ifaces[i];
        rt_net_iface *o = &s->out_ifaces[i];
        const rt_netdev *nd = &s->nd[f->nd_index];
        o->interface = f->info.name;
        o->mac_address = f->info.mac_address;
        o->driver = f->info.driver;
        if (refresh || !f->attrs_read) {
            f->attrs_read = true;
            f->have_operstate = false;
            if (f->info.operstate_fd >= 0) {
                ssize_t m = rt_pread_single(f->info.operstate_fd, f->operstate, sizeof f->operstate);
                while (m > 0 && (f->operstate[m - 1] == '\n' || f->operstate[m - 1] == ' '))
                    f->operstate[--m] = '\0';
                f->have_operstate = m > 0;
            }
            char buf[32];
            f->speed_mbps = read_int_attr(f->info.speed_fd, buf, sizeof buf, true);
            f->mtu = read_int_attr(f->info.mtu_fd, buf, sizeof buf, false);
        }
        o->operstate = f->have_operstate ? f->operstate : NULL;
        o->speed_mbps = f->speed_mbps;
        o->mtu = f->mtu;
        o->rx_bytes_total = nd->rx_bytes;
        o->tx_bytes_total = nd->tx_bytes;
        o->rx_bytes = delta_u64(nd->rx_bytes, f->prev_rx);
        o->tx_bytes = delta_u64(nd->tx_bytes, f->prev_tx);
        o->rx_bytes_per_sec = elapsed > 0 ? (double)o->rx_bytes / elapsed : NAN;
        o->tx_bytes_per_sec = elapsed > 0 ? (double)o->tx_bytes / elapsed : NAN;
    }
    s->sample.network = s->out_ifaces;
    s->sample.network_count = s->nifaces;
}

static void commit_network(rt_sampler *s)
{
    for (size_t i = 0; i < s->nifaces; i++) {
        s->ifaces[i].prev_rx = s->out_ifaces[i].rx_bytes_total;
        s->ifaces[i].prev_tx = s->out_ifaces[i].tx_bytes_total;
    }
}

/* ---- the process tree ------------------------------------------------------------------------ */

static uint64_t grow_by(uint64_t *acc, uint64_t cur, uint64_t prev)
{
    uint64_t d = delta_u64(cur, prev);
    *acc += d;
    return d;
}

static bool tree_has(void *user, int64_t pid)
{
    return rt_proctree_has(user, pid);
}

static void read_tree(rt_sampler *s, double mono, double elapsed)
{
    rt_process *o = &s->process;
    s->sample.cpu.process_cores_used = NAN;
    s->sample.cpu.process_child_count = RT_NULL_I64;
    if (!s->tree) {
        s->sample.process = NULL;
        return;
    }
    rt_tree_totals t;
    rt_proctree_scan(s->tree, mono, &t);
    if (!s->have_tree_prev) {
        /* The baseline. With --pid, what the tree used before tracking began is not counted.
         * A tree the caller started itself counts from zero: the first sample then covers the
         * command's whole life, its first milliseconds included. */
        s->have_tree_prev = true;
        if (s->tree_from_zero) { /* tree_prev stays zero; nothing accumulates at the baseline */
            memset(o, 0, sizeof *o);
            o->pid = s->root_pid;
            s->sample.process = o;
            return;
        }
        s->tree_prev = t;
    }
    const rt_tree_totals *p = &s->tree_prev;
    /* deltas of the raw totals, clamped so the reported totals never go backwards */
    uint64_t dut = grow_by(&s->tree_ut_ns, t.utime_ns, p->utime_ns);
    uint64_t dst = grow_by(&s->tree_st_ns, t.stime_ns, p->stime_ns);
    uint64_t drd = grow_by(&s->tree_rd, t.read_bytes, p->read_bytes);
    uint64_t dwr = grow_by(&s->tree_wr, t.write_bytes, p->write_bytes);
    s->tree_prev = t;

    o->pid = s->root_pid;
    o->alive = t.root_alive;
    o->child_count = t.children;
    o->thread_count = t.threads;
    o->utime_secs = (double)dut / 1e9;
    o->stime_secs = (double)dst / 1e9;
    o->cores_used = elapsed > 0 ? (o->utime_secs + o->stime_secs) / elapsed : NAN;
    o->cpu_secs_total = (double)(s->tree_ut_ns + s->tree_st_ns) / 1e9;
    o->pss_mib = t.pss_ok ? (double)t.pss_kib / 1024.0 : NAN;
    o->swap_mib = t.pss_ok ? (double)t.swap_kib / 1024.0 : NAN;
    o->rss_mib = (double)t.rss_kib / 1024.0;
    if (t.io_ok) {
        o->read_bytes = drd;
        o->write_bytes = dwr;
        o->read_bytes_total = s->tree_rd;
        o->write_bytes_total = s->tree_wr;
        o->read_bytes_per_sec = elapsed > 0 ? (double)drd / elapsed : NAN;
        o->write_bytes_per_sec = elapsed > 0 ? (double)dwr / elapsed : NAN;
    } else {
        o->read_bytes = o->write_bytes = o->read_bytes_total = o->write_bytes_total = RT_NULL_U64;
        o->read_bytes_per_sec = o->write_bytes_per_sec = NAN;
    }
    size_t nlive;
    const int64_t *live = rt_proctree_live(s->tree, &nlive);
    rt_gpus_tree(s->gpus, tree_has, s->tree, live, nlive, mono, &o->gpu_utilization_pct, &o->gpu_vram_used_bytes,
                 &o->gpu_count_used);
    s->sample.cpu.process_cores_used = o->cores_used;
    s->sample.cpu.process_child_count = o->child_count;
    s->sample.process = o;
}

rt_error rt_sampler_reap(rt_sampler *s, int64_t pid, int *wstatus)
{
    if (!s || !s->tree)
        return RT_ERR_INVALID;
    return rt_proctree_reap(s->tree, pid, wstatus) == 0 ? RT_OK : RT_ERR_NOT_FOUND;
}

/* ---- the sampler ---------------------------------------------------------------------------- */

static int open_kept(rt_sampler *s, const char *path)
{
    int fd = rt_open_at(s->roots.proc_fd, path);
    if (fd < 0)
        rt_log(&s->log, RT_LOG_WARN, "cannot open %s/%s: %s", s->roots.proc, path, strerror(-fd));
    return fd < 0 ? -1 : fd;
}

static rt_error take_reading(rt_sampler *s, double mono, double real)
{
    double elapsed = s->have_prev_time ? mono - s->prev_mono : 0.0;
    if (elapsed < 0)
        elapsed = 0;
    s->sample.timestamp_secs = real;
    s->sample.interval_secs = elapsed;
    read_cpu(s);
    read_tree(s, mono, elapsed);
    read_memory(s);
    read_disks(s, elapsed);
    read_network(s, elapsed, mono);
    s->sample.gpu = rt_gpus_read(s->gpus, &s->sample.gpu_count);
    commit_cpu(s);
    commit_disks(s);
    commit_network(s);
    s->prev_mono = mono;
    s->have_prev_time = true;
    return RT_OK;
}

rt_error rt_sampler_new(const rt_sampler_options *opts, rt_sampler **out)
{
    *out = NULL;
    rt_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return RT_ERR_NOMEM;
    s->stat_fd = s->meminfo_fd = s->diskstats_fd = s->netdev_fd = s->mountinfo_fd = -1;
    rt_sampler_options o = {0};
    if (opts)
        o = *opts;
    s->log.fn = o.log;
    s->log.user = o.log_user;
    s->statvfs_fn = o.statvfs;
    s->statvfs_user = o.statvfs_user;
    rt_error err = rt_roots_open(&s->roots, o.proc_root, o.sys_root);
    if (err != RT_OK) {
        free(s);
        return err;
    }
    long tck = sysconf(_SC_CLK_TCK);
    s->clk_tck = tck > 0 ? tck : 100;
    rt_buf_init(&s->rbuf, MAX_PROC_FILE);
    s->stat_fd = open_kept(s, "stat");
    if (s->stat_fd < 0) {
        rt_sampler_free(s);
        return RT_ERR_NOT_FOUND;
    }
    s->meminfo_fd = open_kept(s, "meminfo");
    s->diskstats_fd = open_kept(s, "diskstats");
    s->netdev_fd = open_kept(s, "net/dev");
    s->mountinfo_fd = open_kept(s, "self/mountinfo");
    s->mounts_dirty = true;
    if (o.pid < 0) {
        rt_sampler_free(s);
        return RT_ERR_INVALID;
    }
    s->gpus = rt_gpus_open(&s->roots, o.nvml_library, &s->log);
    if (!s->gpus) {
        rt_sampler_free(s);
        return RT_ERR_NOMEM;
    }
    if (o.pid > 0 || o.own_children) {
        s->root_pid = o.pid;
        s->tree_from_zero = o.own_children != 0;
        s->tree = rt_proctree_new(&s->roots, o.pid, o.own_children != 0, &s->log, s->clk_tck);
        if (!s->tree) {
            rt_sampler_free(s);
            return RT_ERR_NOMEM;
        }
    }
    take_reading(s, rt_mono_secs(), rt_real_secs());
    if (o.pid > 0 && !rt_proctree_root_known(s->tree)) {
        rt_sampler_free(s);
        return RT_ERR_NOT_FOUND; /* no such process to track */
    }
    *out = s;
    return RT_OK;
}

rt_error rt_sampler_sample_at(rt_sampler *s, double mono_secs, double real_secs, const rt_sample **out)
{
    if (!s || !out)
        return RT_ERR_INVALID;
    rt_error err = take_reading(s, mono_secs, real_secs);
    *out = &s->sample;
    return err;
}

rt_error rt_sampler_sample(rt_sampler *s, const rt_sample **out)
{
    return rt_sampler_sample_at(s, rt_mono_secs(), rt_real_secs(), out);
}

void rt_sampler_free(rt_sampler *s)
{
    if (!s)
        return;
    rt_proctree_free(s->tree);
    rt_gpus_close(s->gpus);
    rt_close(&s->stat_fd);
    rt_close(&s->meminfo_fd);
    rt_close(&s->diskstats_fd);
    rt_close(&s->netdev_fd);
    rt_close(&s->mountinfo_fd);
    free_fs_list(s);
    free(s->fs);
    for (size_t i = 0; i < s->ndisks; i++)
        rt_disk_info_free(&s->disks[i].info);
    free(s->disks);
    free(s->out_disks);
    free(s->out_mounts);
    free(s->mount_fs);
    free(s->ds);
    for (size_t i = 0; i < s->nifaces; i++)
        rt_netif_info_free(&s->ifaces[i].info);
    free(s->ifaces);
    free(s->out_ifaces);
    free(s->nd);
    free(s->cur_cores);
    free(s->prev_cores);
    free(s->per_core);
    rt_buf_free(&s->rbuf);
    rt_roots_close(&s->roots);
    free(s);
}
