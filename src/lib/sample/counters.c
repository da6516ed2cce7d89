/* counters.c - the counters read now (see counters.h): the handle, and the machine's reading,
 * which reuses the sampler's memory, disk and network parts for their readings (not their
 * deltas) and reads /proc/stat's aggregate line and the number of processes itself. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "../core/lasterr.h"
#include "counters.h"

rt_error rt_counters_new(const rt_counters_options *opts, rt_counters **out)
{
    rt_err_clear();
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0) {
        rt_err_set("rt_counters_options: struct_size too small");
        return RT_ERR_INVALID;
    }
    rt_counters *c = calloc(1, sizeof *c);
    if (!c)
        return RT_ERR_NOMEM;
    if (o.nvml_library && !rt_copy_str(c->nvml_path, sizeof c->nvml_path, o.nvml_library)) {
        free(c);
        rt_err_set("rt_counters_options: nvml_library is too long");
        return RT_ERR_INVALID;
    }
    rt_sample_ctx *x = &c->ctx;
    rt_error err = rt_ctx_open(x, o.proc_root, o.sys_root, (rt_logger){o.log, o.log_user});
    if (err != RT_OK) {
        free(c);
        return err;
    }
    rt_buf_init(&c->list, RT_CTX_FILE_MAX);
    c->gpu_off = o.gpu_off != 0;
    c->stat_fd = rt_ctx_open_kept(x, "stat");
    c->mem.fd = c->disks.diskstats_fd = c->disks.mountinfo_fd = c->net.fd = -1;
    rt_mem_part_open(&c->mem, x);
    rt_disk_part_open(&c->disks, x);
    rt_net_part_open(&c->net, x);
    if (rt_pidmap_init(&c->seen, 64) < 0) {
        rt_counters_free(c);
        return RT_ERR_NOMEM;
    }
    *out = c;
    return RT_OK;
}

rt_gpus *rt_counters_gpus(rt_counters *c)
{
    if (!c->gpu_tried && !c->gpu_off) {
        c->gpu_tried = true; /* NULL on no memory: the GPU figures stay null */
        c->gpus = rt_gpus_open(&c->ctx.roots, c->nvml_path[0] ? c->nvml_path : NULL, &c->ctx.log);
    }
    return c->gpus;
}

/* The CPU seconds since boot and the process count. Returns whether /proc/stat was read. */
static bool read_cpu(rt_counters *c, rt_system_counters *o)
{
    int64_t n = rt_dir_count_ids(c->ctx.roots.proc_fd, ".");
    if (n >= 0)
        o->pid_count = n;
    ssize_t len = rt_ctx_read_kept(&c->ctx, c->stat_fd, "stat", RT_READ_SINGLE, "stat");
    rt_stat st = {0};
    if (len < 0 || rt_stat_parse(c->ctx.rbuf.data, (size_t)len, &st) < 0 || !st.has_total)
        return false;
    double tck = (double)c->ctx.clk_tck;
    o->utime_secs = (double)(st.total.t[RT_CPU_USER] + st.total.t[RT_CPU_NICE]) / tck;
    o->stime_secs = (double)st.total.t[RT_CPU_SYSTEM] / tck;
    return true;
}

/* Field f of m in MiB, or NaN when meminfo did not have it. */
static double mib_of(const rt_meminfo *m, int f)
{
    return (m->present & (1u << f)) ? (double)m->kib[f] / 1024.0 : NAN;
}

static void read_memory(rt_counters *c, rt_system_counters *o)
{
    if (!rt_mem_part_snapshot(&c->mem, &c->ctx))
        return;
    const rt_meminfo *m = &c->mem.cur;
    o->memory_free_mib = mib_of(m, RT_MEM_FREE);
    double avail = mib_of(m, RT_MEM_AVAILABLE), total = mib_of(m, RT_MEM_TOTAL);
    o->memory_used_mib = isnan(avail) ? NAN : total > avail ? total - avail : 0.0;
    o->memory_buffers_mib = mib_of(m, RT_MEM_BUFFERS);
    double cached = mib_of(m, RT_MEM_CACHED), srecl = mib_of(m, RT_MEM_SRECLAIMABLE);
    o->memory_cached_mib = isnan(cached) ? NAN : cached + (isnan(srecl) ? 0.0 : srecl);
    o->memory_active_mib = mib_of(m, RT_MEM_ACTIVE);
    o->memory_inactive_mib = mib_of(m, RT_MEM_INACTIVE);
}

/* The disks' counters and their filesystems' space, as the disk part reads them. */
static void read_disks(rt_counters *c, rt_system_counters *o)
{
    rt_disk_part *p = &c->disks;
    if (!rt_disk_part_snapshot(p, &c->ctx, rt_mono_secs()))
        return;
    if (rt_grow(&c->disk_out, &c->disk_cap, p->ndisks, sizeof *c->disk_out) < 0 ||
        rt_grow(&c->disk_ptrs, &c->disk_ptrs_cap, p->ndisks, sizeof *c->disk_ptrs) < 0 ||
        rt_grow(&c->mount_out, &c->mount_cap, p->nfs + p->npools, sizeof *c->mount_out) < 0 ||
        rt_grow(&c->mount_ptrs, &c->mount_ptrs_cap, p->nfs + p->npools, sizeof *c->mount_ptrs) < 0)
        return; /* no memory: no disks this time */
    size_t k = 0;
    for (size_t i = 0; i < p->ndisks; i++) {
        const rt_disk_state *d = &p->disks[i];
        if (!d->have_cur || d->is_virtual)
            continue; /* the physical disks only: each byte counted once */
        rt_disk_counters *dc = &c->disk_out[k];
        dc->device = d->info.name;
        dc->read_bytes = d->cur_read * 512u;
        dc->write_bytes = d->cur_written * 512u;
        c->disk_ptrs[k++] = dc;
    }
    o->disks = c->disk_ptrs;
    o->disk_count = k;
    for (size_t i = 0; i < p->nfs; i++) {
        const rt_fs_state *f = &p->fs[i];
        rt_mount_space *m = &c->mount_out[i];
        m->mount_point = f->mount_point;
        m->total_bytes = f->total;
        m->free_bytes = f->avail;
        m->used_bytes = f->total == RT_NULL_U64 || f->avail == RT_NULL_U64 ? RT_NULL_U64
                        : f->total > f->avail                              ? f->total - f->avail
                                                                           : 0;
        c->mount_ptrs[i] = m;
    }
    /* the ZFS pools, each once, named as the Python tracker keys them: "zfs:<pool>" */
    for (size_t i = 0; i < p->npools; i++) {
        const rt_pool_state *z = &p->pools[i];
        rt_mount_space *m = &c->mount_out[p->nfs + i];
        *m = (rt_mount_space){.mount_point = z->device, .total_bytes = z->size, .used_bytes = z->allocated,
                              .free_bytes = z->free};
        c->mount_ptrs[p->nfs + i] = m;
    }
    o->mounts = c->mount_ptrs;
    o->mount_count = p->nfs + p->npools;
}

static void read_net(rt_counters *c, rt_system_counters *o)
{
    rt_net_part *p = &c->net;
    if (!rt_net_part_snapshot(p, &c->ctx, rt_mono_secs()))
        return;
    uint64_t rx = 0, tx = 0;
    for (size_t i = 0; i < p->nifaces; i++) {
        rx += p->nd[p->ifaces[i].nd_index].rx_bytes;
        tx += p->nd[p->ifaces[i].nd_index].tx_bytes;
    }
    o->net_rx_bytes = rx;
    o->net_tx_bytes = tx;
}

static void read_gpus(rt_counters *c, rt_system_counters *o)
{
    rt_gpus *g = rt_counters_gpus(c);
    size_t n = 0;
    const rt_gpu *d = g ? rt_gpus_read(g, &n) : NULL;
    double usage = NAN, vram = NAN;
    int64_t busy = RT_NULL_I64;
    for (size_t i = 0; i < n; i++) {
        double u = d[i].utilization_pct;
        if (!isnan(u)) {
            usage = rt_add_known(usage, u / 100.0);
            busy = (busy == RT_NULL_I64 ? 0 : busy) + (u > 0);
        }
        if (d[i].vram_used_bytes != RT_NULL_U64)
            vram = rt_add_known(vram, (double)d[i].vram_used_bytes / 1048576.0);
    }
    o->gpu_usage = usage;
    o->gpu_vram_mib = vram;
    o->gpu_utilized = busy;
}

rt_error rt_counters_system(rt_counters *c, const rt_system_counters **out)
{
    if (!c || !out)
        return RT_ERR_INVALID;
    rt_system_counters *o = &c->sys;
    *o = (rt_system_counters){
        .timestamp_secs = rt_real_secs(),
        .pid_count = RT_NULL_I64,
        .utime_secs = NAN,
        .stime_secs = NAN,
        .memory_free_mib = NAN,
        .memory_used_mib = NAN,
        .memory_buffers_mib = NAN,
        .memory_cached_mib = NAN,
        .memory_active_mib = NAN,
        .memory_inactive_mib = NAN,
        .disks = c->disk_ptrs,
        .mounts = c->mount_ptrs,
        .net_rx_bytes = RT_NULL_U64,
        .net_tx_bytes = RT_NULL_U64,
        .gpu_usage = NAN,
        .gpu_vram_mib = NAN,
        .gpu_utilized = RT_NULL_I64,
    };
    *out = o;
    if (!read_cpu(c, o))
        return RT_ERR_IO;
    read_memory(c, o);
    read_disks(c, o);
    read_net(c, o);
    read_gpus(c, o);
    return RT_OK;
}

void rt_counters_free(rt_counters *c)
{
    if (!c)
        return;
    rt_gpus_close(c->gpus);
    rt_net_part_close(&c->net);
    rt_disk_part_close(&c->disks);
    rt_mem_part_close(&c->mem);
    rt_close(&c->stat_fd);
    rt_free_all(c->disk_out, c->disk_ptrs, c->mount_out, c->mount_ptrs, c->pids);
    rt_pidmap_free(&c->seen);
    rt_buf_free(&c->list);
    rt_buf_free(&c->ctx.rbuf);
    rt_roots_close(&c->ctx.roots);
    free(c);
}
