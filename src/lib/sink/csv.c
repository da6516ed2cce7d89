/* csv.c - the CSV view of one sample: the 32 columns the Python and Rust trackers share
 * (docs/contracts.md §3), with their meanings: `processes` every process, disk space in
 * 10^9 bytes with used = total - available; per-interval amounts summed over disks, interfaces
 * and GPUs; then, only when asked (RT_FORMAT_CSV_ENERGY, 0.18), the tool's own columns (the
 * energy of the machine and of the tree with their methods). The columns are fixed by that
 * contract, so they are written here by hand; test_schema holds each column that shows one
 * figure to its schema field (core/schema.c), unit and decimals. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>

#include "../core/core.h"
#include "../core/methods.h"
#include "sink.h"

/* the 32 shared columns, and the four energy columns that RT_FORMAT_CSV_ENERGY adds */
#define CSV_SHARED                                                                                                     \
    "timestamp,system_processes,system_utime,system_stime,system_cpu_usage,"                                           \
    "system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,system_memory_cached_mib,"              \
    "system_memory_active_mib,system_memory_inactive_mib,system_disk_read_bytes,system_disk_write_bytes,"            \
    "system_disk_space_total_gb,system_disk_space_used_gb,system_disk_space_free_gb,"                                \
    "system_net_recv_bytes,system_net_sent_bytes,system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,"          \
    "process_pid,process_children,process_utime,process_stime,process_cpu_usage,process_memory_mib,"                 \
    "process_disk_read_bytes,process_disk_write_bytes,process_gpu_usage,process_gpu_vram_mib,"                       \
    "process_gpu_utilized"
#define CSV_ENERGY ",system_energy_joules,system_energy_method,process_energy_joules,process_energy_method"

static const char csv_header[] = CSV_SHARED "\n";
static const char csv_energy_header[] = CSV_SHARED CSV_ENERGY "\n";

const char *rt_csv_header(void)
{
    return csv_header;
}

const char *rt_format_header(rt_format format)
{
    return format == RT_FORMAT_CSV ? csv_header : format == RT_FORMAT_CSV_ENERGY ? csv_energy_header : NULL;
}

/* A CSV cell: a comma, then v with at most dec decimals (empty when not finite). */
static void cnum(rt_ob *o, double v, int dec)
{
    rt_ob_put(o, ",", 1);
    rt_ob_fixed(o, v, dec, "");
}

/* A CSV cell: a comma, then v (empty for RT_NULL_U64). */
static void cu64(rt_ob *o, uint64_t v)
{
    rt_ob_put(o, ",", 1);
    if (v != RT_NULL_U64)
        rt_ob_u64(o, v);
}

/* Bytes as GB (10^9 bytes, as the Python tracker and the Rust tool write them); NaN for
 * RT_NULL_U64. */
static double gb(uint64_t b)
{
    return b == RT_NULL_U64 ? NAN : (double)b / 1e9;
}

/* A CSV cell holding a word (empty for NULL; the methods need no quoting). */
static void cword(rt_ob *o, const char *w)
{
    rt_ob_put(o, ",", 1);
    if (w)
        rt_ob_lit(o, w);
}

/* The energy columns where asked (RT_FORMAT_CSV_ENERGY), then the row's newline: the machine's
 * and the tree's joules in the interval, each with its method (a figure only with its method);
 * empty cells without energy. */
static void csv_energy(rt_ob *o, const rt_energy *e, bool asked)
{
    if (!asked) {
        rt_ob_put(o, "\n", 1);
        return;
    }
    const char *m = e ? rt_energy_method_static(e->method) : NULL;
    const char *pm = e ? rt_energy_method_static(e->process_method) : NULL;
    cnum(o, m ? e->energy_joules : NAN, 6);
    cword(o, m);
    cnum(o, pm ? e->process_energy_joules : NAN, 6);
    cword(o, pm);
    rt_ob_put(o, "\n", 1);
}

/* The three process GPU cells: fractional GPUs busy, MiB of VRAM, GPUs used (each empty when
 * unknown). */
static void csv_gpu_use(rt_ob *o, double util_pct, uint64_t vram, int64_t used)
{
    cnum(o, util_pct / 100.0, 4);
    cnum(o, vram == RT_NULL_U64 ? NAN : (double)vram / 1048576.0, 3);
    rt_ob_put(o, ",", 1);
    if (used != RT_NULL_I64)
        rt_ob_i64(o, used);
}

void rt_csv_sample(rt_ob *o, const rt_sample *s, bool energy)
{
    rt_ob_fixed_all(o, s->timestamp_secs, 3, ""); /* docs/contracts.md §3: 3 decimals, always */
    rt_ob_put(o, ",", 1);
    if (s->cpu->all_process_count != RT_NULL_I64)
        rt_ob_i64(o, s->cpu->all_process_count);
    cnum(o, s->cpu->utime_secs, 6);
    cnum(o, s->cpu->stime_secs, 6);
    cnum(o, s->cpu->utilization_pct, 4);
    cnum(o, s->memory->free_mib, 3);
    cnum(o, s->memory->used_mib, 3);
    cnum(o, s->memory->buffers_mib, 3);
    cnum(o, s->memory->cached_mib, 3);
    cnum(o, s->memory->active_mib, 3);
    cnum(o, s->memory->inactive_mib, 3);
    /* sums over physical disks (a virtual one's bytes are theirs, or memory) and interfaces;
     * with none there is a true zero: nothing was moved */
    uint64_t rd = 0, wr = 0, rx = 0, tx = 0;
    for (size_t i = 0; i < s->disk_count; i++)
        if (s->disk[i]->read_bytes != RT_NULL_U64 && !s->disk[i]->is_virtual) {
            rd += s->disk[i]->read_bytes;
            wr += s->disk[i]->write_bytes;
        }
    for (size_t i = 0; i < s->network_count; i++) {
        rx += s->network[i]->rx_bytes;
        tx += s->network[i]->tx_bytes;
    }
    cu64(o, rd);
    cu64(o, wr);
    /* used = total - available, as both peers take it (statvfs's f_blocks - f_bavail): the
     * space root's reserve counts as used, so used + free = total */
    uint64_t tot = s->disk_space_total_bytes, fr = s->disk_space_free_bytes;
    /* rounded once, to the cells' MB (3 decimals of GB), and used from the rounded two: the
     * written cells add up (270.553 - 77.377 is written 193.176, not the bytes' 193.177) */
    double tot_mb = tot == RT_NULL_U64 ? NAN : round(gb(tot) * 1000.0);
    double fr_mb = fr == RT_NULL_U64 ? NAN : round(gb(fr) * 1000.0);
    double used_mb = isnan(tot_mb) || isnan(fr_mb) ? NAN : tot_mb > fr_mb ? tot_mb - fr_mb : 0;
    cnum(o, tot_mb / 1000.0, 3);
    cnum(o, used_mb / 1000.0, 3);
    cnum(o, fr_mb / 1000.0, 3);
    cu64(o, rx);
    cu64(o, tx);
    /* GPU: sums over the machine's GPUs (fractional GPUs busy, MiB used, GPUs busy); with
     * none they are zero, and empty when no GPU could report */
    double busy = 0, vram = 0;
    int64_t utilized = 0;
    bool known = s->gpu_count == 0;
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (!isnan(g->utilization_pct)) {
            busy += g->utilization_pct / 100.0;
            utilized += g->utilization_pct > 0;
            known = true;
        }
        if (g->vram_used_bytes != RT_NULL_U64)
            vram += (double)g->vram_used_bytes / 1048576.0;
    }
    cnum(o, known ? busy : NAN, 4);
    cnum(o, known ? vram : NAN, 3);
    rt_ob_put(o, ",", 1);
    if (known)
        rt_ob_i64(o, utilized);
    const rt_process *p = s->process;
    if (!p) { /* process columns: empty without a tracked process, but the GPU ones: every
               * process on the GPUs (as the Rust tool fills them without --pid) */
        rt_ob_lit(o, ",,,,,,,,");
        const rt_gpu_use *a = s->gpu_processes;
        if (a)
            csv_gpu_use(o, a->utilization_pct, a->vram_used_bytes, a->gpu_count_used);
        else
            rt_ob_lit(o, ",,,");
        csv_energy(o, s->energy, energy);
        return;
    }
    rt_ob_put(o, ",", 1);
    rt_ob_i64(o, p->pid);
    rt_ob_put(o, ",", 1);
    rt_ob_i64(o, p->child_count);
    cnum(o, p->utime_secs, 6);
    cnum(o, p->stime_secs, 6);
    cnum(o, p->cores_used, 4);
    cnum(o, p->pss_mib, 3);
    cu64(o, p->read_bytes);
    cu64(o, p->write_bytes);
    csv_gpu_use(o, p->gpu_utilization_pct, p->gpu_vram_used_bytes, p->gpu_count_used);
    csv_energy(o, s->energy, energy);
}
