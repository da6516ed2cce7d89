/* cpu.c - the sampler's CPU part (see cpu.h): per-core ticks of /proc/stat, read through a
 * kept-open file, matched core by core (cores come and go with hotplug) and turned into
 * busy fractions; every machine-wide figure is the sum over the cores. The count of all
 * processes (the numbered entries of /proc) is read beside it. */
#include <math.h>
#include <stdlib.h>

#include "../core/dirwalk.h"
#include "cpu.h"

int rt_cpu_part_open(rt_cpu_part *p, rt_sample_ctx *c)
{
    p->fd = rt_ctx_open_kept(c, "stat");
    p->procs_running = p->all_processes = RT_NULL_I64;
    return p->fd == -1 ? -1 : 0;
}

/* Grows the three per-core arrays to hold n cores. Returns 0 or -1 (unchanged). */
static int grow_cores(rt_cpu_part *p, size_t n)
{
    size_t c1 = p->cap, c2 = p->cap, c3 = p->cap;
    if (rt_grow(&p->cur, &c1, n, sizeof *p->cur) < 0 || rt_grow(&p->prev, &c2, n, sizeof *p->prev) < 0 ||
        rt_grow(&p->per_core, &c3, n, sizeof *p->per_core) < 0)
        return -1;
    p->cap = c1;
    return 0;
}

bool rt_cpu_part_snapshot(rt_cpu_part *p, rt_sample_ctx *c)
{
    p->have_cur = false;
    p->procs_running = RT_NULL_I64;
    int64_t procs = rt_dir_count_ids(c->roots.proc_fd, "."); /* every process: the proc root's numbers */
    p->all_processes = procs < 0 ? RT_NULL_I64 : procs;
    ssize_t n = rt_ctx_read_kept(c, p->fd, "stat", RT_READ_SINGLE, "stat");
    if (n < 0)
        return false;
    rt_stat st = {.cores = p->cur, .core_cap = p->cap};
    if (rt_stat_parse(c->rbuf.data, (size_t)n, &st) < 0) {
        rt_log(&c->log, RT_LOG_WARN, "stat: no aggregate cpu line");
        return false;
    }
    if (st.core_count > p->cap) { /* more cores than seen before (hotplug): grow, parse again */
        if (grow_cores(p, st.core_count) < 0)
            return false;
        st.cores = p->cur;
        st.core_cap = p->cap;
        rt_stat_parse(c->rbuf.data, (size_t)n, &st);
    }
    p->ncur = st.core_count;
    if (st.has_procs_running)
        p->procs_running = (int64_t)st.procs_running;
    p->have_cur = true;
    return true;
}

/* The previous reading of the core with the same id as cur[i], or NULL (it just came online). */
static const rt_cpu_ticks *prev_of(const rt_cpu_part *p, size_t i)
{
    int id = p->cur[i].id;
    if (i < p->nprev && p->prev[i].id == id)
        return &p->prev[i];
    for (size_t j = 0; j < p->nprev; j++)
        if (p->prev[j].id == id)
            return &p->prev[j];
    return NULL;
}

void rt_cpu_part_delta(rt_cpu_part *p, const rt_sample_ctx *c)
{
    rt_cpu *o = &p->out;
    o->utilization_pct = o->utime_secs = o->stime_secs = NAN;
    o->process_count = p->procs_running;
    o->all_process_count = p->all_processes;
    o->per_core_pct = p->per_core;
    o->core_count = p->have_cur ? p->ncur : 0;
    if (!p->have_cur || !p->have_prev)
        return;
    double busy_cores = 0;
    uint64_t user = 0, sys = 0;
    bool any = false, matched = false;
    for (size_t i = 0; i < p->ncur; i++) {
        const rt_cpu_ticks *now = &p->cur[i], *was = prev_of(p, i);
        p->per_core[i] = NAN;
        if (!was)
            continue;
        matched = true;
        user += rt_delta_u64(now->t[RT_CPU_USER] + now->t[RT_CPU_NICE], was->t[RT_CPU_USER] + was->t[RT_CPU_NICE]);
        sys += rt_delta_u64(now->t[RT_CPU_SYSTEM], was->t[RT_CPU_SYSTEM]);
        uint64_t t = rt_delta_u64(rt_cpu_total(now), rt_cpu_total(was));
        uint64_t b = rt_delta_u64(rt_cpu_busy(now), rt_cpu_busy(was));
        if (t == 0)
            continue; /* no tick on this core in the interval: cannot tell */
        if (b > t)
            b = t;
        p->per_core[i] = (double)b / (double)t * 100.0;
        busy_cores += (double)b / (double)t;
        any = true;
    }
    if (any)
        o->utilization_pct = busy_cores;
    if (matched) {
        o->utime_secs = (double)user / (double)c->clk_tck;
        o->stime_secs = (double)sys / (double)c->clk_tck;
    }
}

void rt_cpu_part_commit(rt_cpu_part *p)
{
    if (!p->have_cur)
        return;
    rt_cpu_ticks *t = p->prev;
    p->prev = p->cur;
    p->cur = t;
    p->nprev = p->ncur;
    p->have_prev = true;
}

void rt_cpu_part_close(rt_cpu_part *p)
{
    rt_close(&p->fd);
    free(p->cur);
    free(p->prev);
    free(p->per_core);
}
