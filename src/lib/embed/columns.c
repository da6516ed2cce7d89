/* columns.c - the embedded tracker's columns: their public names, one sample turned into a
 * row of them, and a row turned back into the analysis record (the same figures that
 * rt_record_from_sample makes of the sample, so the tracker's statistics match the tool's). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "store.h"

static const char *const col_names[RT_NCOLS] = {
    [RT_COL_TIMESTAMP] = "timestamp",
    [RT_COL_INTERVAL] = "interval",
    [RT_COL_CPU_RUNNABLE] = "cpu_runnable",
    [RT_COL_CPU_UTIME] = "cpu_utime",
    [RT_COL_CPU_STIME] = "cpu_stime",
    [RT_COL_CPU_CORES] = "cpu_cores",
    [RT_COL_CPU_COUNT] = "cpu_count",
    [RT_COL_MEM_TOTAL_MIB] = "memory_total_mib",
    [RT_COL_MEM_FREE_MIB] = "memory_free_mib",
    [RT_COL_MEM_USED_MIB] = "memory_used_mib",
    [RT_COL_MEM_BUFFERS_MIB] = "memory_buffers_mib",
    [RT_COL_MEM_CACHED_MIB] = "memory_cached_mib",
    [RT_COL_MEM_ACTIVE_MIB] = "memory_active_mib",
    [RT_COL_MEM_INACTIVE_MIB] = "memory_inactive_mib",
    [RT_COL_MEM_AVAILABLE_MIB] = "memory_available_mib",
    [RT_COL_SWAP_USED_MIB] = "swap_used_mib",
    [RT_COL_DISK_READ_BYTES] = "disk_read_bytes",
    [RT_COL_DISK_WRITE_BYTES] = "disk_write_bytes",
    [RT_COL_DISK_SPACE_TOTAL_BYTES] = "disk_space_total_bytes",
    [RT_COL_DISK_SPACE_USED_BYTES] = "disk_space_used_bytes",
    [RT_COL_DISK_SPACE_FREE_BYTES] = "disk_space_free_bytes",
    [RT_COL_NET_RECV_BYTES] = "net_recv_bytes",
    [RT_COL_NET_SENT_BYTES] = "net_sent_bytes",
    [RT_COL_GPU_USAGE] = "gpu_usage",
    [RT_COL_GPU_VRAM_MIB] = "gpu_vram_mib",
    [RT_COL_GPU_UTILIZED] = "gpu_utilized",
    [RT_COL_GPU_COUNT] = "gpu_count",
    [RT_COL_GPU_VRAM_TOTAL_MIB] = "gpu_vram_total_mib",
    [RT_COL_PROC_PID] = "process_pid",
    [RT_COL_PROC_ALIVE] = "process_alive",
    [RT_COL_PROC_CHILDREN] = "process_children",
    [RT_COL_PROC_THREADS] = "process_threads",
    [RT_COL_PROC_UTIME] = "process_utime",
    [RT_COL_PROC_STIME] = "process_stime",
    [RT_COL_PROC_CORES] = "process_cores",
    [RT_COL_PROC_CPU_SECS_TOTAL] = "process_cpu_secs_total",
    [RT_COL_PROC_PSS_MIB] = "process_pss_mib",
    [RT_COL_PROC_RSS_MIB] = "process_rss_mib",
    [RT_COL_PROC_RSS_PEAK_MIB] = "process_rss_peak_mib",
    [RT_COL_PROC_SWAP_MIB] = "process_swap_mib",
    [RT_COL_PROC_READ_BYTES] = "process_read_bytes",
    [RT_COL_PROC_WRITE_BYTES] = "process_write_bytes",
    [RT_COL_PROC_GPU_USAGE] = "process_gpu_usage",
    [RT_COL_PROC_GPU_VRAM_MIB] = "process_gpu_vram_mib",
    [RT_COL_PROC_GPU_UTILIZED] = "process_gpu_utilized",
    [RT_COL_PROC_MEMORY_PEAK_MIB] = "process_memory_peak_mib",
    [RT_COL_CGROUP_OOM_KILLS] = "cgroup_oom_kills",
    [RT_COL_CGROUP_MEMORY_LIMIT_MIB] = "cgroup_memory_limit_mib",
    [RT_COL_CGROUP_MEMORY_HIGH_MIB] = "cgroup_memory_high_mib",
    [RT_COL_CGROUP_CPU_QUOTA_CORES] = "cgroup_cpu_quota_cores",
    [RT_COL_CGROUP_CPU_PERIODS] = "cgroup_cpu_periods",
    [RT_COL_CGROUP_CPU_THROTTLED_PERIODS] = "cgroup_cpu_throttled_periods",
    [RT_COL_CGROUP_CPU_THROTTLED_SECS] = "cgroup_cpu_throttled_secs",
    [RT_COL_CGROUP_PIDS_PEAK] = "cgroup_pids_peak",
    [RT_COL_CGROUP_PIDS_LIMIT] = "cgroup_pids_limit",
    [RT_COL_PRESSURE_CPU_SOME_PCT] = "pressure_cpu_some_pct",
    [RT_COL_PRESSURE_MEMORY_SOME_PCT] = "pressure_memory_some_pct",
    [RT_COL_PRESSURE_MEMORY_FULL_PCT] = "pressure_memory_full_pct",
    [RT_COL_PRESSURE_IO_SOME_PCT] = "pressure_io_some_pct",
    [RT_COL_PRESSURE_IO_FULL_PCT] = "pressure_io_full_pct",
    [RT_COL_MAIN_TOTAL_RSS_MIB] = "main_total_rss_mib",
    [RT_COL_MAIN_PRIVATE_RSS_MIB] = "main_private_rss_mib",
    [RT_COL_MAIN_SHARED_RSS_MIB] = "main_shared_rss_mib",
    [RT_COL_MAIN_CORES] = "main_cores",
    [RT_COL_MAIN_THREADS] = "main_threads",
    [RT_COL_MAIN_GPU_VRAM_MIB] = "main_gpu_vram_mib",
    [RT_COL_DESC_TOTAL_RSS_MIB] = "descendants_total_rss_mib",
    [RT_COL_DESC_PRIVATE_RSS_MIB] = "descendants_private_rss_mib",
    [RT_COL_DESC_SHARED_RSS_MIB] = "descendants_shared_rss_mib",
    [RT_COL_DESC_CORES] = "descendants_cores",
    [RT_COL_DESC_THREADS] = "descendants_threads",
    [RT_COL_DESC_GPU_VRAM_MIB] = "descendants_gpu_vram_mib",
    [RT_COL_COMB_TOTAL_RSS_MIB] = "combined_total_rss_mib",
    [RT_COL_COMB_PRIVATE_RSS_MIB] = "combined_private_rss_mib",
    [RT_COL_COMB_SHARED_RSS_MIB] = "combined_shared_rss_mib",
    [RT_COL_COMB_CORES] = "combined_cores",
    [RT_COL_COMB_THREADS] = "combined_threads",
    [RT_COL_COMB_GPU_VRAM_MIB] = "combined_gpu_vram_mib",
    [RT_COL_PROC_RSS_HWM_MIB] = "process_rss_hwm_mib",
    [RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB] = "process_unreclaimable_peak_mib",
    [RT_COL_PROC_GPU_VRAM_PEAK_MIB] = "process_gpu_vram_peak_mib",
    [RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL] = "process_cancelled_write_bytes_total",
    [RT_COL_PROC_CGROUP_EXCLUSIVE] = "process_cgroup_exclusive",
    [RT_COL_CGROUP_PIDS] = "cgroup_pids",
};

/* The 0.6, 0.8 and 0.9 columns: each one figure of the record, the same in both directions. */
static const struct {
    int col;
    size_t off; /* of the double in rt_record */
} rec_cols[] = {
    {RT_COL_PROC_MEMORY_PEAK_MIB, offsetof(rt_record, process_memory_peak_mib)},
    {RT_COL_CGROUP_OOM_KILLS, offsetof(rt_record, cgroup_oom_kills)},
    {RT_COL_CGROUP_MEMORY_LIMIT_MIB, offsetof(rt_record, cgroup_memory_limit_mib)},
    {RT_COL_CGROUP_MEMORY_HIGH_MIB, offsetof(rt_record, cgroup_memory_high_mib)},
    {RT_COL_CGROUP_CPU_QUOTA_CORES, offsetof(rt_record, cgroup_cpu_quota_cores)},
    {RT_COL_CGROUP_CPU_PERIODS, offsetof(rt_record, cgroup_cpu_periods)},
    {RT_COL_CGROUP_CPU_THROTTLED_PERIODS, offsetof(rt_record, cgroup_cpu_throttled_periods)},
    {RT_COL_CGROUP_CPU_THROTTLED_SECS, offsetof(rt_record, cgroup_cpu_throttled_secs)},
    {RT_COL_CGROUP_PIDS_PEAK, offsetof(rt_record, cgroup_pids_peak)},
    {RT_COL_CGROUP_PIDS_LIMIT, offsetof(rt_record, cgroup_pids_limit)},
    {RT_COL_PRESSURE_CPU_SOME_PCT, offsetof(rt_record, pressure_cpu_some_pct)},
    {RT_COL_PRESSURE_MEMORY_SOME_PCT, offsetof(rt_record, pressure_memory_some_pct)},
    {RT_COL_PRESSURE_MEMORY_FULL_PCT, offsetof(rt_record, pressure_memory_full_pct)},
    {RT_COL_PRESSURE_IO_SOME_PCT, offsetof(rt_record, pressure_io_some_pct)},
    {RT_COL_PRESSURE_IO_FULL_PCT, offsetof(rt_record, pressure_io_full_pct)},
    {RT_COL_MAIN_TOTAL_RSS_MIB, offsetof(rt_record, main.total_rss_mib)},
    {RT_COL_MAIN_PRIVATE_RSS_MIB, offsetof(rt_record, main.private_rss_mib)},
    {RT_COL_MAIN_SHARED_RSS_MIB, offsetof(rt_record, main.shared_rss_mib)},
    {RT_COL_MAIN_CORES, offsetof(rt_record, main.cores)},
    {RT_COL_MAIN_THREADS, offsetof(rt_record, main.threads)},
    {RT_COL_MAIN_GPU_VRAM_MIB, offsetof(rt_record, main.gpu_vram_mib)},
    {RT_COL_DESC_TOTAL_RSS_MIB, offsetof(rt_record, descendants.total_rss_mib)},
    {RT_COL_DESC_PRIVATE_RSS_MIB, offsetof(rt_record, descendants.private_rss_mib)},
    {RT_COL_DESC_SHARED_RSS_MIB, offsetof(rt_record, descendants.shared_rss_mib)},
    {RT_COL_DESC_CORES, offsetof(rt_record, descendants.cores)},
    {RT_COL_DESC_THREADS, offsetof(rt_record, descendants.threads)},
    {RT_COL_DESC_GPU_VRAM_MIB, offsetof(rt_record, descendants.gpu_vram_mib)},
    {RT_COL_COMB_TOTAL_RSS_MIB, offsetof(rt_record, combined.total_rss_mib)},
    {RT_COL_COMB_PRIVATE_RSS_MIB, offsetof(rt_record, combined.private_rss_mib)},
    {RT_COL_COMB_SHARED_RSS_MIB, offsetof(rt_record, combined.shared_rss_mib)},
    {RT_COL_COMB_CORES, offsetof(rt_record, combined.cores)},
    {RT_COL_COMB_THREADS, offsetof(rt_record, combined.threads)},
    {RT_COL_COMB_GPU_VRAM_MIB, offsetof(rt_record, combined.gpu_vram_mib)},
    {RT_COL_PROC_RSS_HWM_MIB, offsetof(rt_record, process_rss_hwm_mib)},
    {RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB, offsetof(rt_record, process_unreclaimable_peak_mib)},
    {RT_COL_PROC_GPU_VRAM_PEAK_MIB, offsetof(rt_record, process_gpu_vram_peak_mib)},
    {RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL, offsetof(rt_record, process_cancelled_write_bytes_total)},
    {RT_COL_PROC_CGROUP_EXCLUSIVE, offsetof(rt_record, process_cgroup_exclusive)},
    {RT_COL_CGROUP_PIDS, offsetof(rt_record, cgroup_pids)},
    {RT_COL_PROC_ALIVE, offsetof(rt_record, process_alive)},
};

int rt_column_count(void)
{
    return RT_NCOLS;
}

const char *rt_column_name(int col)
{
    return col >= 0 && col < RT_NCOLS ? col_names[col] : NULL;
}

int rt_column_by_name(const char *name)
{
    if (!name)
        return -1;
    for (int c = 0; c < RT_NCOLS; c++)
        if (strcmp(col_names[c], name) == 0)
            return c;
    return -1;
}

static double i64_or_nan(int64_t v)
{
    return v == RT_NULL_I64 ? NAN : (double)v;
}

/* The figures of a sample that the record has, taken from the record itself (so that
 * rt_row_to_record gives back exactly what rt_record_from_sample gave), and the rest from
 * the sample with the record's conventions for nulls. */
void rt_row_from_sample(const rt_sample *s, double row[RT_NCOLS])
{
    rt_record r;
    rt_record_from_sample(s, &r);
    for (int c = 0; c < RT_NCOLS; c++)
        row[c] = NAN;
    row[RT_COL_TIMESTAMP] = r.timestamp_secs;
    row[RT_COL_INTERVAL] = r.interval_secs;
    const rt_cpu *cpu = s->cpu;
    if (cpu) {
        row[RT_COL_CPU_RUNNABLE] = i64_or_nan(cpu->process_count);
        row[RT_COL_CPU_UTIME] = cpu->utime_secs;
        row[RT_COL_CPU_STIME] = cpu->stime_secs;
    }
    row[RT_COL_CPU_CORES] = r.cpu_cores;
    row[RT_COL_CPU_COUNT] = r.cpu_count;
    const rt_memory *m = s->memory;
    row[RT_COL_MEM_TOTAL_MIB] = r.memory_total_mib;
    row[RT_COL_MEM_USED_MIB] = r.memory_used_mib;
    if (m) {
        row[RT_COL_MEM_FREE_MIB] = m->free_mib;
        row[RT_COL_MEM_BUFFERS_MIB] = m->buffers_mib;
        row[RT_COL_MEM_CACHED_MIB] = m->cached_mib;
        row[RT_COL_MEM_ACTIVE_MIB] = m->active_mib;
        row[RT_COL_MEM_INACTIVE_MIB] = m->inactive_mib;
        row[RT_COL_MEM_AVAILABLE_MIB] = m->available_mib;
        row[RT_COL_SWAP_USED_MIB] = m->swap_used_mib;
    }
    row[RT_COL_DISK_READ_BYTES] = r.disk_read_bytes;
    row[RT_COL_DISK_WRITE_BYTES] = r.disk_write_bytes;
    row[RT_COL_DISK_SPACE_TOTAL_BYTES] = r.disk_space_total_bytes;
    row[RT_COL_DISK_SPACE_USED_BYTES] = r.disk_space_used_bytes;
    row[RT_COL_DISK_SPACE_FREE_BYTES] =
        s->disk_space_free_bytes == RT_NULL_U64 ? NAN : (double)s->disk_space_free_bytes;
    row[RT_COL_NET_RECV_BYTES] = r.net_recv_bytes;
    row[RT_COL_NET_SENT_BYTES] = r.net_sent_bytes;
    row[RT_COL_GPU_USAGE] = r.gpu_usage;
    row[RT_COL_GPU_VRAM_MIB] = r.gpu_vram_mib;
    row[RT_COL_GPU_UTILIZED] = r.gpu_utilized;
    row[RT_COL_GPU_COUNT] = r.gpu_count;
    row[RT_COL_GPU_VRAM_TOTAL_MIB] = r.gpu_vram_total_mib;
    /* the cgroup's figures and the pressure (the machine's also without a tree) */
    for (size_t i = 0; i < sizeof rec_cols / sizeof rec_cols[0]; i++)
        memcpy(&row[rec_cols[i].col], (const char *)&r + rec_cols[i].off, sizeof(double));
    const rt_process *p = s->process;
    if (!p)
        return; /* the columns of the tree stay NaN, as the record's */
    row[RT_COL_PROC_PID] = r.process_pid;
    row[RT_COL_PROC_CHILDREN] = r.process_children;
    row[RT_COL_PROC_THREADS] = i64_or_nan(p->thread_count);
    row[RT_COL_PROC_UTIME] = p->utime_secs;
    row[RT_COL_PROC_STIME] = p->stime_secs;
    row[RT_COL_PROC_CORES] = r.process_cores;
    row[RT_COL_PROC_CPU_SECS_TOTAL] = r.process_cpu_secs_total;
    row[RT_COL_PROC_PSS_MIB] = r.process_pss_mib;
    row[RT_COL_PROC_RSS_MIB] = r.process_rss_mib;
    row[RT_COL_PROC_RSS_PEAK_MIB] = r.process_rss_peak_mib;
    row[RT_COL_PROC_SWAP_MIB] = p->swap_mib;
    row[RT_COL_PROC_READ_BYTES] = r.process_read_bytes;
    row[RT_COL_PROC_WRITE_BYTES] = r.process_write_bytes;
    row[RT_COL_PROC_GPU_USAGE] = r.process_gpu_usage;
    row[RT_COL_PROC_GPU_VRAM_MIB] = r.process_gpu_vram_mib;
    row[RT_COL_PROC_GPU_UTILIZED] = r.process_gpu_utilized;
}

void rt_row_to_record(const double row[RT_NCOLS], rt_record *r)
{
    memset(r, 0, sizeof *r);
    r->timestamp_secs = row[RT_COL_TIMESTAMP];
    r->interval_secs = row[RT_COL_INTERVAL];
    r->job_name = NULL;
    r->cpu_cores = row[RT_COL_CPU_CORES];
    r->cpu_count = row[RT_COL_CPU_COUNT];
    r->memory_used_mib = row[RT_COL_MEM_USED_MIB];
    r->memory_total_mib = row[RT_COL_MEM_TOTAL_MIB];
    r->disk_read_bytes = row[RT_COL_DISK_READ_BYTES];
    r->disk_write_bytes = row[RT_COL_DISK_WRITE_BYTES];
    r->net_recv_bytes = row[RT_COL_NET_RECV_BYTES];
    r->net_sent_bytes = row[RT_COL_NET_SENT_BYTES];
    r->disk_space_total_bytes = row[RT_COL_DISK_SPACE_TOTAL_BYTES];
    r->disk_space_used_bytes = row[RT_COL_DISK_SPACE_USED_BYTES];
    r->gpu_usage = row[RT_COL_GPU_USAGE];
    r->gpu_vram_mib = row[RT_COL_GPU_VRAM_MIB];
    r->gpu_utilized = row[RT_COL_GPU_UTILIZED];
    r->gpu_count = row[RT_COL_GPU_COUNT];
    r->gpu_vram_total_mib = row[RT_COL_GPU_VRAM_TOTAL_MIB];
    r->process_pid = row[RT_COL_PROC_PID];
    r->process_children = row[RT_COL_PROC_CHILDREN];
    r->process_cores = row[RT_COL_PROC_CORES];
    /* as rt_record_from_sample: utime + stime of the interval (NaN without a tree) */
    r->process_cpu_secs = row[RT_COL_PROC_UTIME] + row[RT_COL_PROC_STIME];
    r->process_cpu_secs_total = row[RT_COL_PROC_CPU_SECS_TOTAL];
    r->process_pss_mib = row[RT_COL_PROC_PSS_MIB];
    r->process_rss_mib = row[RT_COL_PROC_RSS_MIB];
    r->process_rss_peak_mib = row[RT_COL_PROC_RSS_PEAK_MIB];
    r->process_read_bytes = row[RT_COL_PROC_READ_BYTES];
    r->process_write_bytes = row[RT_COL_PROC_WRITE_BYTES];
    r->process_gpu_usage = row[RT_COL_PROC_GPU_USAGE];
    r->process_gpu_vram_mib = row[RT_COL_PROC_GPU_VRAM_MIB];
    r->process_gpu_utilized = row[RT_COL_PROC_GPU_UTILIZED];
    for (size_t i = 0; i < sizeof rec_cols / sizeof rec_cols[0]; i++)
        memcpy((char *)r + rec_cols[i].off, &row[rec_cols[i].col], sizeof(double));
}
