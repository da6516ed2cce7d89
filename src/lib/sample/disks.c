/* disks.c - the sampler's disk part (see disks.h). Disks are rediscovered only when the
 * names in diskstats change, mounts only when the kernel flags mountinfo (POLLPRI), so a
 * steady sample reads diskstats once and calls statvfs once per filesystem. Listed (0.17, as
 * the Rust tool, sorted by name): every whole block device but loop and ram, the virtual ones
 * (dm, md, zram) flagged; a filesystem is listed under the device it is mounted from and the physical disks
 * beneath it, and the space sums count each filesystem on a physical disk once. */
#define _GNU_SOURCE
#include <math.h>
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
    rt_disk_state *nd = calloc(count ? count : 1, sizeof *nd);
    rt_disk *od = calloc(count ? count : 1, sizeof *od);
    const rt_disk **op = calloc(count ? count : 1, sizeof *op);
    if (!nd || !od || !op) {
        free(nd);
        free(od);
        free(op);
        rt_log(&c->log, RT_LOG_WARN, "disks: out of memory");
        return;
    }
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
                reused = true;
            }
        }
        if (!reused) {
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
    for (size_t j = 0; j < p->ndisks; j++)
        rt_disk_info_free(&p->disks[j].info);
    free(p->disks);
    free(p->out);
    free(p->out_ptrs);
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

bool rt_disk_part_snapshot(rt_disk_part *p, rt_sample_ctx *c)
{
    p->have_cur = false;
    ssize_t n = rt_ctx_read_kept(c, p->diskstats_fd, "diskstats", RT_READ_SHORT_LINES, "diskstats");
    if (n < 0) {
        p->space_total = p->space_used = p->space_free = RT_NULL_U64;
        return false;
    }
    size_t nds = rt_diskstats_parse(c->rbuf.data, (size_t)n, p->ds, p->ds_cap);
    if (nds > p->ds_cap) {
        if (rt_grow(&p->ds, &p->ds_cap, nds, sizeof *p->ds) < 0)
            return false;
        nds = rt_diskstats_parse(c->rbuf.data, (size_t)n, p->ds, p->ds_cap);
    }
    p->nds = nds;
    uint64_t sig = 1469598103934665603ull ^ nds;
    for (size_t i = 0; i < nds; i++)
        sig = rt_hash_str(sig, p->ds[i].name);
    if (sig != p->ds_sig || !p->disks) {
        p->ds_sig = sig;
        rediscover_disks(p, c);
    }
    if (p->mounts_dirty || mountinfo_changed(p))
        rebuild_mounts(p, c);
    read_space(p);
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
    p->have_cur = true;
    return true;
}

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
    for (size_t i = 0; i < p->ndisks; i++)
        rt_disk_info_free(&p->disks[i].info);
    free(p->disks);
    free(p->out);
    free(p->out_ptrs);
    free(p->mounts);
    free(p->mount_ptrs);
    free(p->mount_fs);
    free(p->ds);
}
