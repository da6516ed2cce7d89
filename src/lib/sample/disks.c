/* disks.c - the sampler's disk part (see disks.h). Disks are rediscovered only when the
 * names in diskstats change, mounts only when the kernel flags mountinfo (POLLPRI), so a
 * steady sample reads each listed disk's sysfs stat file (diskstats every RT_DISK_PROBE_SECS)
 * and calls statvfs once per filesystem. Listed (as
 * the Rust tool, sorted by name): every whole block device but loop and ram, the virtual ones
 * (dm, md, zram) flagged; a filesystem is listed under the device it is mounted from and the physical disks
 * beneath it, and the space sums count each filesystem on a physical disk once. ZFS pools (zfs.c)
 * are listed beside the disks as "zfs:<pool>" with the pool's space as their one mount; the
 * space sums count each pool once (its datasets, mounted without a block device, never are). */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "disks.h"

void rt_disk_part_open(rt_disk_part *p, rt_sample_ctx *c)
{
    p->diskstats_fd = rt_ctx_open_kept(c, "diskstats");
    p->mountinfo_fd = rt_ctx_open_kept(c, "self/mountinfo");
    p->mounts_dirty = true;
    p->space_total = p->space_used = p->space_free = RT_NULL_U64;
}

/* Frees the filesystem list (the array itself is kept for reuse). */
static void free_fs_list(rt_disk_part *p)
{
    for (size_t i = 0; i < p->nfs; i++) {
        free(p->fs[i].mount_point);
        free(p->fs[i].fstype);
        free(p->fs[i].disks);
    }
    p->nfs = 0;
}

/* ---- mounts ----------------------------------------------------------------------------------- */

/* A block-device mount seen in one mountinfo parse; strings are heap copies. */
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

/* rt_mountinfo_parse callback: keeps the mounts that may sit on a block device. */
static void collect_mount(void *user, const rt_mountinfo_entry *e)
{
    cand_list *cl = user;
    if (e->major == 0 && strncmp(e->source, "/dev/", 5) != 0)
        return; /* no block device: never on a disk */
    if (rt_grow(&cl->v, &cl->cap, cl->n + 1, sizeof *cl->v) < 0) {
        cl->oom = true;
        return;
    }
    mount_cand *m = &cl->v[cl->n];
    m->major = e->major;
    m->minor = e->minor;
    m->root_is_slash = strcmp(e->root, "/") == 0;
    m->mount_point = strdup(e->mount_point);
    m->fstype = strdup(e->fstype);
    m->source = strdup(e->source);
    if (!m->mount_point || !m->fstype || !m->source) {
        free(m->mount_point);
        free(m->fstype);
        free(m->source);
        cl->oom = true;
        return;
    }
    cl->n++;
}

/* Whether a represents its filesystem better than b: the whole filesystem (root "/") over a
 * bind mount of part of it, then the shorter mount point. */
static bool better_mount(const mount_cand *a, const mount_cand *b)
{
    if (a->root_is_slash != b->root_is_slash)
        return a->root_is_slash;
    return strlen(a->mount_point) < strlen(b->mount_point);
}

/* Whether candidate i is a lesser duplicate of another mount of the same filesystem. */
static bool is_duplicate(const cand_list *cl, size_t i)
{
    const mount_cand *m = &cl->v[i];
    for (size_t j = 0; j < cl->n; j++) {
        const mount_cand *o = &cl->v[j];
        if (j == i || o->major != m->major || o->minor != m->minor)
            continue;
        if (m->major == 0 && strcmp(o->source, m->source) != 0)
            continue;
        if (better_mount(o, m) || (!better_mount(m, o) && j < i))
            return true;
    }
    return false;
}

typedef struct disk_collect {
    rt_disk_part *p;
    rt_fs_state *fs;
} disk_collect;

/* rt_block_resolve_disks callback: records that the filesystem lives on disk (once). */
static void add_fs_disk(void *user, const char *disk)
{
    disk_collect *dc = user;
    for (size_t i = 0; i < dc->p->ndisks; i++) {
        if (strcmp(dc->p->disks[i].info.name, disk) != 0)
            continue;
        for (size_t k = 0; k < dc->fs->ndisks; k++)
            if (dc->fs->disks[k] == i)
                return;
        if (rt_grow(&dc->fs->disks, &dc->fs->disks_cap, dc->fs->ndisks + 1, sizeof *dc->fs->disks) == 0) {
            dc->fs->disks[dc->fs->ndisks++] = i;
            dc->fs->on_physical |= !dc->p->disks[i].is_virtual;
        }
        return;
    }
}

/* Lays the mounts out per disk, contiguous, for the sample. Returns 0 or -1 (no memory). */
static int layout_mounts(rt_disk_part *p)
{
    size_t total = 0;
    for (size_t i = 0; i < p->nfs; i++)
        total += p->fs[i].ndisks;
    size_t need = total ? total : 1;
    if (rt_grow(&p->mounts, &p->mounts_cap, need, sizeof *p->mounts) < 0 ||
        rt_grow(&p->mount_ptrs, &p->mount_ptrs_cap, need, sizeof *p->mount_ptrs) < 0 ||
        rt_grow(&p->mount_fs, &p->mount_fs_cap, need, sizeof *p->mount_fs) < 0)
        return -1;
    size_t k = 0;
    for (size_t d = 0; d < p->ndisks; d++) {
        p->disks[d].mount_first = k;
        for (size_t i = 0; i < p->nfs; i++)
            for (size_t j = 0; j < p->fs[i].ndisks; j++)
                if (p->fs[i].disks[j] == d) {
                    p->mounts[k].mount_point = p->fs[i].mount_point;
                    p->mounts[k].filesystem = p->fs[i].fstype;
                    p->mount_ptrs[k] = &p->mounts[k];
                    p->mount_fs[k] = i;
                    k++;
                }
        p->disks[d].mount_count = k - p->disks[d].mount_first;
    }
    return 0;
}

/* Re-reads mountinfo and maps each distinct block filesystem to the disks it lives on. */
static void rebuild_mounts(rt_disk_part *p, rt_sample_ctx *c)
{
    free_fs_list(p);
    for (size_t d = 0; d < p->ndisks; d++)
        p->disks[d].mount_count = 0;
    p->mounts_dirty = false;
    ssize_t n = rt_ctx_read_kept(c, p->mountinfo_fd, "self/mountinfo", RT_READ_TO_EOF, "mountinfo");
    if (n < 0)
        return;
    free(p->zfs_mountinfo);
    p->zfs_mountinfo = NULL;
    p->zfs_mountinfo_len = 0;
    if (!p->zfs_off && rt_zfs_loaded(&c->roots) && (p->zfs_mountinfo = malloc((size_t)n + 1)) != NULL) {
        memcpy(p->zfs_mountinfo, c->rbuf.data, (size_t)n);
        p->zfs_mountinfo[n] = '\0';
        p->zfs_mountinfo_len = (size_t)n;
    }
    cand_list cl = {0};
    rt_mountinfo_parse(c->rbuf.data, (size_t)n, collect_mount, &cl);
    bool oom = cl.oom;
    for (size_t i = 0; i < cl.n && !oom; i++) {
        if (is_duplicate(&cl, i))
            continue;
        if (rt_grow(&p->fs, &p->fs_cap, p->nfs + 1, sizeof *p->fs) < 0) {
            oom = true;
            break;
        }
        rt_fs_state *f = &p->fs[p->nfs];
        memset(f, 0, sizeof *f);
        disk_collect dc = {p, f};
        rt_block_resolve_disks(&c->roots, cl.v[i].major, cl.v[i].minor, cl.v[i].source, add_fs_disk, &dc);
        if (!f->on_physical) {
            free(f->disks);
            continue; /* not on a physical disk we list (a zram device's, say) */
        }
        f->mount_point = strdup(cl.v[i].mount_point);
        f->fstype = strdup(cl.v[i].fstype);
        p->nfs++;
        oom = !f->mount_point || !f->fstype;
    }
    for (size_t i = 0; i < cl.n; i++) {
        free(cl.v[i].mount_point);
        free(cl.v[i].fstype);
        free(cl.v[i].source);
    }
    free(cl.v);
    if (oom)
        rt_log(&c->log, RT_LOG_WARN, "mountinfo: out of memory, some mounts left out");
    if (oom || layout_mounts(p) < 0) {
        free_fs_list(p);
        for (size_t d = 0; d < p->ndisks; d++)
            p->disks[d].mount_count = 0;
    }
}

/* Whether the kernel flagged a change of the mount table (POLLERR|POLLPRI on mountinfo); always
 * when mountinfo is opened for each read (descriptors short). */
static bool mountinfo_changed(const rt_disk_part *p)
{
    if (p->mountinfo_fd == RT_CTX_REOPEN)
        return true; /* no descriptor to be told on: read again each time */
    if (p->mountinfo_fd < 0)
        return false;
    struct pollfd pf = {.fd = p->mountinfo_fd, .events = POLLPRI};
    return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLERR | POLLPRI));
}

/* ---- disks ------------------------------------------------------------------------------------ */

/* qsort comparison of two disks by name. */
static int by_name(const void *a, const void *b)
{
    const rt_disk_state *x = a, *y = b;
    return strcmp(x->info.name, y->info.name);
}

/* Rebuilds the disk list from the current diskstats parse, sorted by name (as the Rust tool),
 * keeping the state of disks that stay; a new disk starts from its current counters (nothing
 * counted before we saw it). The mounts are laid out again after it (mounts_dirty). */
static void rediscover_disks(rt_disk_part *p, rt_sample_ctx *c)
{
    size_t count = 0;
    for (size_t i = 0; i < p->nds; i++)
        if (rt_block_is_listed(&c->roots, p->ds[i].name))
            count++;
    rt_disk_state *nd;
    rt_disk *od;
    const rt_disk **op;
    if (rt_ctx_lists_new(c, "disks", count, &nd, sizeof *nd, &od, sizeof *od, &op) < 0)
        return;
    size_t k = 0;
    for (size_t i = 0; i < p->nds && k < count; i++) {
        if (!rt_block_is_listed(&c->roots, p->ds[i].name))
            continue;
        rt_disk_state *d = &nd[k];
        bool reused = false;
        for (size_t j = 0; j < p->ndisks && !reused; j++) {
            if (p->disks[j].info.name && strcmp(p->disks[j].info.name, p->ds[i].name) == 0) {
                *d = p->disks[j];
                memset(&p->disks[j], 0, sizeof p->disks[j]);
                p->disks[j].stat_fd = -1; /* moved to d */
                reused = true;
            }
        }
        if (!reused) {
            d->stat_fd = -1;
            if (rt_disk_info_read(&c->roots, p->ds[i].name, &d->info) < 0)
                continue;
            d->prev_read = p->ds[i].sectors_read;
            d->prev_written = p->ds[i].sectors_written;
            d->is_virtual = !rt_block_is_physical_disk(&c->roots, p->ds[i].name);
        }
        op[k] = &od[k];
        k++;
    }
    qsort(nd, k, sizeof *nd, by_name);
    for (size_t j = 0; j < p->ndisks; j++) {
        rt_disk_info_free(&p->disks[j].info);
        rt_close(&p->disks[j].stat_fd); /* a disk gone (a moved one's is -1 here) */
    }
    rt_free_all(p->disks, p->out, p->out_ptrs);
    p->disks = nd;
    p->ndisks = k;
    p->out = od;
    p->out_ptrs = op;
    p->mounts_dirty = true;
}

/* Reads every filesystem's space (once per filesystem) and the sums over them. */
static void read_space(rt_disk_part *p)
{
    uint64_t tot = 0, used = 0, avail = 0;
    bool any = false;
    for (size_t i = 0; i < p->nfs; i++) {
        rt_fs_state *f = &p->fs[i];
        struct statvfs v;
        int rc = p->statvfs_fn ? p->statvfs_fn(p->statvfs_user, f->mount_point, &v) : statvfs(f->mount_point, &v);
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
    p->space_total = any ? tot : RT_NULL_U64;
    p->space_used = any ? used : RT_NULL_U64;
    p->space_free = any ? avail : RT_NULL_U64;
}

/* ---- ZFS pools --------------------------------------------------------------------------- */

/* qsort comparison of two pools by name. */
static int pool_by_name(const void *a, const void *b)
{
    return strcmp(((const rt_zpool *)a)->name, ((const rt_zpool *)b)->name);
}

/* Stops running zpool for good, saying why once. */
static void zfs_give_up(rt_disk_part *p, rt_sample_ctx *c, const char *why)
{
    p->zfs_off = true;
    p->npools = 0;
    rt_log(&c->log, RT_LOG_WARN, "zfs: `zpool list` %s; ZFS pools are left out of the samples", why);
}

/* Whether the ZFS module is loaded (rt_zfs_loaded): asked at each sample while it is, else
 * again when the mounts changed (an imported pool mounts its datasets) or RT_ZFS_PROBE_SECS
 * after the last asking. The answer "not loaded" costs a failed procfs lookup (a dentry made
 * and freed, 5-10 µs), which most machines would otherwise pay every sample for nothing. */
static bool zfs_loaded(rt_disk_part *p, rt_sample_ctx *c, double now, bool mounts_changed)
{
    if (p->zfs_loaded || mounts_changed || p->zfs_probe_mono <= 0 || now < p->zfs_probe_mono ||
        now - p->zfs_probe_mono >= RT_ZFS_PROBE_SECS) {
        p->zfs_loaded = rt_zfs_loaded(&c->roots);
        p->zfs_probe_mono = now;
    }
    return p->zfs_loaded;
}

/* Where the ZFS module is loaded: the pools from zpool (bounded by half the time since the
 * previous reading, 0.25 to 2 s), each with its shallowest mount, added to the space sums. */
static void read_pools(rt_disk_part *p, rt_sample_ctx *c, bool mounts_changed)
{
    double now = rt_mono_secs(), since = p->zfs_last_mono > 0 ? now - p->zfs_last_mono : 0;
    p->zfs_last_mono = now;
    p->npools = 0;
    if (p->zfs_off || !zfs_loaded(p, c, now, mounts_changed))
        return;
    /* half the interval, at most 2 s (the Rust tool's bound), at least 0.25 s (the Python
     * tracker's) so a reading right after another (a phase mark's) does not cut a healthy zpool */
    double timeout = since > 0 ? since / 2 : 0.5;
    timeout = timeout > 2 ? 2 : timeout < 0.25 ? 0.25 : timeout;
    char out[16384], why[200];
    int rc = rt_zpool_list_run(timeout, out, sizeof out, why, sizeof why);
    if (rc != 0) {
        zfs_give_up(p, c, rc == 1 ? "cannot be run: zpool is not on the PATH" : why);
        return;
    }
    size_t len = strlen(out), bad = 0;
    size_t n = rt_zpool_list_parse(out, len, p->zpools, p->zpools_cap, &bad);
    if (n > p->zpools_cap) {
        if (rt_grow(&p->zpools, &p->zpools_cap, n, sizeof *p->zpools) < 0) {
            zfs_give_up(p, c, "answered more pools than memory holds");
            return;
        }
        n = rt_zpool_list_parse(out, len, p->zpools, p->zpools_cap, &bad);
    }
    if (bad) {
        zfs_give_up(p, c, "gave an answer that is not a list of pools");
        return;
    }
    if (rt_grow(&p->pools, &p->pools_cap, n ? n : 1, sizeof *p->pools) < 0) {
        zfs_give_up(p, c, "answered more pools than memory holds");
        return;
    }
    qsort(p->zpools, n, sizeof *p->zpools, pool_by_name);
    if (n && p->space_total == RT_NULL_U64)
        p->space_total = p->space_used = p->space_free = 0;
    for (size_t i = 0; i < n; i++) {
        const rt_zpool *z = &p->zpools[i];
        rt_pool_state *st = &p->pools[i];
        rt_pathf(st->device, sizeof st->device, "zfs:%s", z->name);
        rt_zfs_pool_mount(p->zfs_mountinfo, p->zfs_mountinfo_len, z->name, st->mount_point, sizeof st->mount_point);
        st->size = z->size;
        st->allocated = z->allocated;
        st->free = z->free;
        p->space_total += z->size;
        p->space_used += z->allocated;
        p->space_free += z->free;
    }
    p->npools = n;
}

/* Opens the sysfs stat file of each listed disk that has none open; p->stat_files says whether
 * every one has. */
static void open_stat_files(rt_disk_part *p, rt_sample_ctx *c)
{
    bool all = true;
    for (size_t d = 0; d < p->ndisks; d++) {
        rt_disk_state *st = &p->disks[d];
        if (st->stat_fd < 0) {
            int fd = rt_block_stat_open(&c->roots, st->info.name);
            st->stat_fd = fd < 0 ? -1 : fd;
        }
        all &= st->stat_fd >= 0;
    }
    p->stat_files = all;
}

/* Between two readings of diskstats, each listed disk's counters from its own stat file.
 * Returns false (diskstats to be read) when it is diskstats' turn, or when a disk's file
 * cannot be read or parsed (that file is closed: reopened after diskstats, or the disk is
 * gone from it). */
static bool read_stat_files(rt_disk_part *p, double mono)
{
    if (!p->stat_files || p->ds_mono <= 0 || mono < p->ds_mono || mono - p->ds_mono >= RT_DISK_PROBE_SECS)
        return false;
    for (size_t d = 0; d < p->ndisks; d++) {
        rt_disk_state *st = &p->disks[d];
        char buf[512];
        uint64_t r, w;
        ssize_t n = rt_pread_single(st->stat_fd, buf, sizeof buf);
        if (n <= 0 || rt_blockstat_parse(buf, (size_t)n, &r, &w) < 0) {
            rt_close(&st->stat_fd);
            p->stat_files = false;
            return false;
        }
        st->cur_read = r;
        st->cur_written = w;
        st->have_cur = true;
    }
    p->stat_reads++;
    return true;
}

/* Reads diskstats: the disks rediscovered when its names changed, each disk's counters from
 * its line, the stat files (re)opened. Returns false when it cannot be read. */
static size_t parse_diskstats(const char *text, size_t len, void *out, size_t cap)
{
    return rt_diskstats_parse(text, len, out, cap);
}

static bool read_diskstats(rt_disk_part *p, rt_sample_ctx *c, double mono)
{
    uint64_t sig;
    if (!rt_ctx_read_list(c, p->diskstats_fd, "diskstats", parse_diskstats, &p->ds, &p->ds_cap, sizeof *p->ds,
                          offsetof(rt_diskstat, name), &p->nds, &sig))
        return false;
    size_t nds = p->nds;
    p->ds_mono = mono;
    p->ds_reads++;
    if (sig != p->ds_sig || !p->disks) {
        p->ds_sig = sig;
        rediscover_disks(p, c);
    }
    /* each disk's line in this parse: usually where it was last time */
    for (size_t d = 0; d < p->ndisks; d++) {
        rt_disk_state *st = &p->disks[d];
        size_t i = st->ds_index < nds && strcmp(p->ds[st->ds_index].name, st->info.name) == 0 ? st->ds_index : nds;
        for (size_t j = 0; i == nds && j < nds; j++)
            if (strcmp(p->ds[j].name, st->info.name) == 0)
                i = j;
        st->have_cur = i < nds;
        if (st->have_cur) {
            st->ds_index = i;
            st->cur_read = p->ds[i].sectors_read;
            st->cur_written = p->ds[i].sectors_written;
        }
    }
    open_stat_files(p, c);
    return true;
}

bool rt_disk_part_snapshot(rt_disk_part *p, rt_sample_ctx *c, double mono)
{
    p->have_cur = false;
    bool remounted = p->mounts_dirty || mountinfo_changed(p); /* the poll takes the kernel's flag */
    if (remounted)
        p->stat_files = false; /* a disk just attached and mounted: diskstats now, not in 10 s */
    if (!read_stat_files(p, mono) && !read_diskstats(p, c, mono)) {
        p->space_total = p->space_used = p->space_free = RT_NULL_U64;
        return false;
    }
    if (remounted || p->mounts_dirty) /* the disk list was rebuilt: its mounts laid out again */
        rebuild_mounts(p, c);
    read_space(p);
    read_pools(p, c, remounted);
    if (rt_grow(&p->list, &p->list_cap, p->ndisks + p->npools + 1, sizeof *p->list) < 0)
        p->npools = 0; /* the disks' pointers fit: their array was grown before */
    p->have_cur = true;
    return true;
}

static void list_pools(rt_disk_part *p, double elapsed);

void rt_disk_part_delta(rt_disk_part *p, double elapsed)
{
    if (!p->have_cur)
        return;
    for (size_t d = 0; d < p->ndisks; d++) {
        const rt_disk_state *st = &p->disks[d];
        rt_disk *o = &p->out[d];
        o->device = st->info.name;
        o->model = st->info.model;
        o->vendor = st->info.vendor;
        o->serial = st->info.serial;
        o->device_type = st->info.device_type;
        o->capacity_bytes = st->info.capacity_bytes;
        o->is_virtual = st->is_virtual;
        if (st->have_cur) {
            o->read_bytes_total = st->cur_read * 512u;
            o->write_bytes_total = st->cur_written * 512u;
            o->read_bytes = rt_delta_u64(st->cur_read, st->prev_read) * 512u;
            o->write_bytes = rt_delta_u64(st->cur_written, st->prev_written) * 512u;
            o->read_bytes_per_sec = elapsed > 0 ? (double)o->read_bytes / elapsed : NAN;
            o->write_bytes_per_sec = elapsed > 0 ? (double)o->write_bytes / elapsed : NAN;
        } else {
            o->read_bytes_total = o->write_bytes_total = o->read_bytes = o->write_bytes = RT_NULL_U64;
            o->read_bytes_per_sec = o->write_bytes_per_sec = NAN;
        }
        o->mounts = p->mount_ptrs + st->mount_first;
        o->mount_count = st->mount_count;
        for (size_t k = st->mount_first; k < st->mount_first + st->mount_count; k++) {
            rt_mount *m = &p->mounts[k];
            const rt_fs_state *f = &p->fs[p->mount_fs[k]];
            m->total_bytes = f->total;
            m->used_bytes = f->used;
            m->available_bytes = f->avail;
            m->used_pct = (f->used != RT_NULL_U64 && f->used + f->avail > 0)
                              ? (double)f->used / (double)(f->used + f->avail) * 100.0
                              : NAN;
        }
    }
    list_pools(p, elapsed);
}

/* Fills the pools' disk structs and merges them with the disks (both sorted) into p->list. */
static void list_pools(rt_disk_part *p, double elapsed)
{
    for (size_t i = 0; i < p->npools; i++) {
        rt_pool_state *st = &p->pools[i];
        st->mount = (rt_mount){.mount_point = st->mount_point, .filesystem = "zfs", .total_bytes = st->size,
                               .used_bytes = st->allocated, .available_bytes = st->free,
                               .used_pct = (double)st->allocated / (double)st->size * 100.0};
        st->mount_ptr = &st->mount;
        /* no I/O of its own: its devices carry it (listed as disks themselves) */
        double rate = elapsed > 0 ? 0.0 : NAN;
        st->out = (rt_disk){.device = st->device, .capacity_bytes = st->size, .read_bytes_per_sec = rate,
                            .write_bytes_per_sec = rate, .mounts = &st->mount_ptr, .mount_count = 1, .is_virtual = 1};
    }
    p->nlist = 0;
    if (p->list_cap < p->ndisks + p->npools)
        return; /* never grown (no memory): nothing listed rather than too much */
    size_t i = 0, k = 0, n = 0;
    while (i < p->ndisks || k < p->npools) {
        if (k == p->npools || (i < p->ndisks && strcmp(p->out[i].device, p->pools[k].device) <= 0))
            p->list[n++] = &p->out[i++];
        else
            p->list[n++] = &p->pools[k++].out;
    }
    p->nlist = n;
}

void rt_disk_part_commit(rt_disk_part *p)
{
    for (size_t d = 0; d < p->ndisks; d++) {
        rt_disk_state *st = &p->disks[d];
        if (!st->have_cur)
            continue;
        st->prev_read = st->cur_read;
        st->prev_written = st->cur_written;
    }
}

void rt_disk_part_close(rt_disk_part *p)
{
    rt_close(&p->diskstats_fd);
    rt_close(&p->mountinfo_fd);
    free_fs_list(p);
    free(p->fs);
    for (size_t i = 0; i < p->ndisks; i++) {
        rt_disk_info_free(&p->disks[i].info);
        rt_close(&p->disks[i].stat_fd);
    }
    free(p->disks);
    free(p->out);
    free(p->out_ptrs);
    free(p->mounts);
    free(p->mount_ptrs);
    free(p->mount_fs);
    free(p->ds);
    free(p->zfs_mountinfo);
    free(p->zpools);
    free(p->pools);
    free(p->list);
}
