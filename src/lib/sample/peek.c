/* peek.c - the sampler's reading at a phase's mark (rt_sampler_peek): the tracked tree's
 * cumulative CPU, storage I/O and RSS now, cheaply (the processes the last scan found, read
 * again through their kept stat and io files; the group's CPU counter; no smaps, no GPU) and
 * without changing what the next sample computes: nothing is committed, the figures are worked
 * out from the last sample's totals on the side.
 *
 * cpu_secs_total, by cpu_source (a phase's CPU is the difference of its two marks' totals when
 * both have the same source; within one run and one source the total is one cumulative counter):
 *  - RT_PHASE_CPU_GROUP, when the tree's group holds nothing but the tree (the tool's own group
 *    for its command; a pid's group found exclusive at the last sample): the group's usage
 *    counter (v2 cpu.stat usage_usec, v1 cpuacct.usage ns), exact, on the basis the samples
 *    count it: the total reported when the group's exclusive stretch began plus the group's
 *    growth since. Equal to rt_process.cpu_secs_total at a sample unless the walk saw more
 *    than the group (what ran before entering it).
 *  - RT_PHASE_CPU_SCHEDSTAT, otherwise with the live /proc: the light walk with each process's
 *    own time read from the kernel's per-process CPU clock (clock_getcpuclockid: the run time
 *    schedstat shows per thread, summed over every thread of the process, ended ones too, to
 *    the nanosecond) plus what it reaped (stat ticks) and the departed account, less an offset
 *    fixed at the run's first such reading (the ticks basis's total then), so that it reads
 *    close to the samples' totals; exact for the time of live processes, so a phase of a
 *    process that reaps nothing is exact whatever its length. A process born since the last
 *    sample is not seen yet, one gone since is not counted (its time reappears in its
 *    reaper's or at the next sample): a reading is a lower bound.
 *  - RT_PHASE_CPU_TICKS, where a clock cannot be read (a fixture's proc root, another pid
 *    namespace's, a process gone mid-reading): the total reported at the last sample plus the
 *    growth of the walk's sum since (each live process's utime + stime + what it reaped, from
 *    /proc/PID/stat in clock ticks, 10 ms truncation each, plus the departed account): the
 *    samples' own basis, equal to the next sample's total when nothing was born or went.
 *  - (RT_PHASE_CPU_MARKER is the embedded tracker's, embed/marks.c.)
 * Two marks of different sources cannot be compared (the analysis then pro-rates). */
#define _GNU_SOURCE
#include <math.h>

#include "../core/core.h"
#include "peek.h"
#include "sampler_internal.h"

rt_error rt_sampler_peek_split(rt_sampler *s, rt_phase_mark *m, double *others_secs)
{
    if (others_secs)
        *others_secs = NAN;
    if (!s || !m || m->struct_size < sizeof *m || !s->has_tree)
        return RT_ERR_INVALID;
    rt_gpus_counters_due(s->gpu.gpus); /* a phase's GPU energy: the counters at the next sample */
    rt_tree_peek k;
    int rc = rt_proctree_peek(s->tree.tree, &k);
    uint64_t g = rt_cg_part_peek_cpu(&s->cg, &s->ctx);
    double real = rt_real_secs();
    m->memory_peak_mib = NAN; /* no per-reader reset of the peak here (cgroup v2 memory.peak) */
    m->reading_lag_secs = isfinite(m->timestamp_secs) && m->timestamp_secs > 0
                              ? fmax(real - m->timestamp_secs, 0.0)
                              : NAN;
    if (rc < 0 && g == RT_NULL_U64) {
        m->cpu_secs_total = m->read_bytes_total = m->write_bytes_total = m->rss_mib = NAN;
        m->cpu_source = RT_PHASE_CPU_NONE;
        return RT_ERR_IO;
    }
    rt_tree_reading r;
    rt_tree_part_peek(&s->tree, &k, g, &r);
    if (rc < 0 && r.cpu_source != RT_PHASE_CPU_GROUP) {
        r.cpu_ns = NAN;
        r.cpu_source = RT_PHASE_CPU_NONE;
    }
    m->cpu_secs_total = r.cpu_ns / 1e9;
    m->cpu_source = r.cpu_source;
    m->read_bytes_total = rc < 0 ? NAN : r.read_bytes;
    m->write_bytes_total = rc < 0 ? NAN : r.write_bytes;
    m->rss_mib = rc < 0 ? NAN : r.rss_mib;
    if (others_secs && rc == 0)
        *others_secs = r.others_ns / 1e9;
    return RT_OK;
}

rt_error rt_sampler_peek(rt_sampler *s, rt_phase_mark *m)
{
    return rt_sampler_peek_split(s, m, NULL);
}
