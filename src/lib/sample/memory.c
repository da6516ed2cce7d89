/* memory.c - the sampler's memory part (see memory.h): meminfo's kB figures as MiB, with
 * used = total - available, as procps 4's free(1), psutil, the Python tracker 0.5 and the Rust
 * tool compute it (before MemAvailable, Linux 3.14: available = free + buffers + cached, cached
 * including reclaimable slab, as the Python tracker falls back). */
#include <math.h>

#include "memory.h"

void rt_mem_part_open(rt_mem_part *p, rt_sample_ctx *c)
{
    p->fd = rt_ctx_open_kept(c, "meminfo");
}

bool rt_mem_part_snapshot(rt_mem_part *p, rt_sample_ctx *c)
{
    ssize_t n = rt_ctx_read_kept(c, p->fd, "meminfo", RT_READ_SINGLE, "meminfo");
    p->have_cur = n >= 0 && rt_meminfo_parse(c->rbuf.data, (size_t)n, &p->cur) == 0;
    return p->have_cur;
}

uint64_t rt_mem_part_page_tables(const rt_mem_part *p)
{
    return p->have_cur && (p->cur.present & (1u << RT_MEM_PAGE_TABLES)) ? p->cur.kib[RT_MEM_PAGE_TABLES] : RT_NULL_U64;
}

/* Field f of m in MiB, or NaN when meminfo did not have it. */
static double mib_of(const rt_meminfo *m, int f)
{
    return (m->present & (1u << f)) ? (double)m->kib[f] / 1024.0 : NAN;
}

void rt_mem_part_delta(rt_mem_part *p)
{
    rt_memory *o = &p->out;
    o->total_mib = o->free_mib = o->available_mib = o->used_mib = o->used_pct = NAN;
    o->buffers_mib = o->cached_mib = o->active_mib = o->inactive_mib = NAN;
    o->swap_total_mib = o->swap_used_mib = o->swap_used_pct = NAN;
    if (!p->have_cur)
        return;
    const rt_meminfo *m = &p->cur;
    o->total_mib = mib_of(m, RT_MEM_TOTAL);
    o->free_mib = mib_of(m, RT_MEM_FREE);
    o->available_mib = mib_of(m, RT_MEM_AVAILABLE);
    o->buffers_mib = mib_of(m, RT_MEM_BUFFERS);
    double cached = mib_of(m, RT_MEM_CACHED), srecl = mib_of(m, RT_MEM_SRECLAIMABLE);
    o->cached_mib = isnan(cached) ? NAN : cached + (isnan(srecl) ? 0.0 : srecl);
    o->active_mib = mib_of(m, RT_MEM_ACTIVE);
    o->inactive_mib = mib_of(m, RT_MEM_INACTIVE);
    double avail = o->available_mib;
    if (isnan(avail) && !isnan(o->free_mib) && !isnan(o->buffers_mib) && !isnan(o->cached_mib))
        avail = o->free_mib + o->buffers_mib + o->cached_mib;
    if (!isnan(o->total_mib) && !isnan(avail)) {
        o->used_mib = o->total_mib > avail ? o->total_mib - avail : 0;
        o->used_pct = o->total_mib > 0 ? o->used_mib / o->total_mib * 100.0 : NAN;
    }
    o->swap_total_mib = mib_of(m, RT_MEM_SWAP_TOTAL);
    double sfree = mib_of(m, RT_MEM_SWAP_FREE);
    if (!isnan(o->swap_total_mib) && !isnan(sfree)) {
        o->swap_used_mib = o->swap_total_mib > sfree ? o->swap_total_mib - sfree : 0;
        o->swap_used_pct = o->swap_total_mib > 0 ? o->swap_used_mib / o->swap_total_mib * 100.0 : 0.0;
    }
}

void rt_mem_part_close(rt_mem_part *p)
{
    rt_close(&p->fd);
}
