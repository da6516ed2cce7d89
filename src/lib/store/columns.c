/* columns.c - the embedded tracker's columns, listed once: each one's public name and where its
 * figure comes from (a member of the analysis record, or a sample member the record lacks, known
 * to the schema); one sample turned into a row of them, and a row turned back into the record
 * (the same figures that rt_record_from_sample makes of the sample, so the tracker's statistics
 * match the tool's). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../core/methods.h"
#include "../core/schema.h"
#include "store.h"

/* Where a column's figure comes from: a member of rt_record (both directions: the record read
 * back from a row is the record the sample made), or a member of one of the sample's structs
 * that the record does not carry (the schema's field: its type says what null is), or an energy
 * method of the record (a string member kept as its rank: 1 measured, 2 sampled, 3 estimated). */
typedef enum src { REC_ = 0, SRC_SAMPLE, SRC_CPU, SRC_MEMORY, SRC_PROCESS, SRC_METHOD } src;

typedef struct column {
    const char *name;
    src from;
    size_t off;         /* of the double in rt_record, or of the member in its struct */
    rt_field_type type; /* the member's */
} column;

#define REC(m, n)                                                                                                      \
    {                                                                                                                  \
        .name = n, .from = REC_, .off = offsetof(rt_record, m)                                                         \
    }
#define SMP(st, m, n)                                                                                                  \
    {                                                                                                                  \
        .name = n, .from = SRC_##st, .off = offsetof(RT_STRUCT_##st, m),                                               \
        .type = RT_FIELD_TYPE_OF(((RT_STRUCT_##st *)0)->m)                                                             \
    }
#define RT_STRUCT_sample rt_sample
#define RT_STRUCT_cpu rt_cpu
#define RT_STRUCT_memory rt_memory
#define RT_STRUCT_process rt_process
#define SRC_sample SRC_SAMPLE
#define SRC_cpu SRC_CPU
#define SRC_memory SRC_MEMORY
#define SRC_process SRC_PROCESS

static const column cols[RT_NCOLS] = {
    [RT_COL_TIMESTAMP] = REC(timestamp_secs, "timestamp"),
    [RT_COL_INTERVAL] = REC(interval_secs, "interval"),
    [RT_COL_CPU_RUNNABLE] = SMP(cpu, process_count, "cpu_runnable"),
    [RT_COL_CPU_UTIME] = SMP(cpu, utime_secs, "cpu_utime"),
    [RT_COL_CPU_STIME] = SMP(cpu, stime_secs, "cpu_stime"),
    [RT_COL_CPU_CORES] = REC(cpu_cores, "cpu_cores"),
    [RT_COL_CPU_COUNT] = REC(cpu_count, "cpu_count"),
    [RT_COL_MEM_TOTAL_MIB] = REC(memory_total_mib, "memory_total_mib"),
    [RT_COL_MEM_FREE_MIB] = SMP(memory, free_mib, "memory_free_mib"),
    [RT_COL_MEM_USED_MIB] = REC(memory_used_mib, "memory_used_mib"),
    [RT_COL_MEM_BUFFERS_MIB] = SMP(memory, buffers_mib, "memory_buffers_mib"),
    [RT_COL_MEM_CACHED_MIB] = SMP(memory, cached_mib, "memory_cached_mib"),
    [RT_COL_MEM_ACTIVE_MIB] = SMP(memory, active_mib, "memory_active_mib"),
    [RT_COL_MEM_INACTIVE_MIB] = SMP(memory, inactive_mib, "memory_inactive_mib"),
    [RT_COL_MEM_AVAILABLE_MIB] = SMP(memory, available_mib, "memory_available_mib"),
    [RT_COL_SWAP_USED_MIB] = SMP(memory, swap_used_mib, "swap_used_mib"),
    [RT_COL_DISK_READ_BYTES] = REC(disk_read_bytes, "disk_read_bytes"),
    [RT_COL_DISK_WRITE_BYTES] = REC(disk_write_bytes, "disk_write_bytes"),
    [RT_COL_DISK_SPACE_TOTAL_BYTES] = REC(disk_space_total_bytes, "disk_space_total_bytes"),
    [RT_COL_DISK_SPACE_USED_BYTES] = REC(disk_space_used_bytes, "disk_space_used_bytes"),
    [RT_COL_DISK_SPACE_FREE_BYTES] = SMP(sample, disk_space_free_bytes, "disk_space_free_bytes"),
    [RT_COL_NET_RECV_BYTES] = REC(net_recv_bytes, "net_recv_bytes"),
    [RT_COL_NET_SENT_BYTES] = REC(net_sent_bytes, "net_sent_bytes"),
    [RT_COL_GPU_USAGE] = REC(gpu_usage, "gpu_usage"),
    [RT_COL_GPU_VRAM_MIB] = REC(gpu_vram_mib, "gpu_vram_mib"),
    [RT_COL_GPU_UTILIZED] = REC(gpu_utilized, "gpu_utilized"),
    [RT_COL_GPU_COUNT] = REC(gpu_count, "gpu_count"),
    [RT_COL_GPU_VRAM_TOTAL_MIB] = REC(gpu_vram_total_mib, "gpu_vram_total_mib"),
    [RT_COL_PROC_PID] = REC(process_pid, "process_pid"),
    [RT_COL_PROC_ALIVE] = REC(process_alive, "process_alive"),
    [RT_COL_PROC_CHILDREN] = REC(process_children, "process_children"),
    [RT_COL_PROC_THREADS] = SMP(process, thread_count, "process_threads"),
    [RT_COL_PROC_UTIME] = SMP(process, utime_secs, "process_utime"),
    [RT_COL_PROC_STIME] = SMP(process, stime_secs, "process_stime"),
    [RT_COL_PROC_CORES] = REC(process_cores, "process_cores"),
    [RT_COL_PROC_CPU_SECS_TOTAL] = REC(process_cpu_secs_total, "process_cpu_secs_total"),
    [RT_COL_PROC_PSS_MIB] = REC(process_pss_mib, "process_pss_mib"),
    [RT_COL_PROC_RSS_MIB] = REC(process_rss_mib, "process_rss_mib"),
    [RT_COL_PROC_RSS_PEAK_MIB] = REC(process_rss_peak_mib, "process_rss_peak_mib"),
    [RT_COL_PROC_SWAP_MIB] = SMP(process, swap_mib, "process_swap_mib"),
    [RT_COL_PROC_READ_BYTES] = REC(process_read_bytes, "process_read_bytes"),
    [RT_COL_PROC_WRITE_BYTES] = REC(process_write_bytes, "process_write_bytes"),
    [RT_COL_PROC_GPU_USAGE] = REC(process_gpu_usage, "process_gpu_usage"),
    [RT_COL_PROC_GPU_VRAM_MIB] = REC(process_gpu_vram_mib, "process_gpu_vram_mib"),
    [RT_COL_PROC_GPU_UTILIZED] = REC(process_gpu_utilized, "process_gpu_utilized"),
    [RT_COL_PROC_MEMORY_PEAK_MIB] = REC(process_memory_peak_mib, "process_memory_peak_mib"),
    [RT_COL_CGROUP_OOM_KILLS] = REC(cgroup_oom_kills, "cgroup_oom_kills"),
    [RT_COL_CGROUP_MEMORY_LIMIT_MIB] = REC(cgroup_memory_limit_mib, "cgroup_memory_limit_mib"),
    [RT_COL_CGROUP_MEMORY_HIGH_MIB] = REC(cgroup_memory_high_mib, "cgroup_memory_high_mib"),
    [RT_COL_CGROUP_CPU_QUOTA_CORES] = REC(cgroup_cpu_quota_cores, "cgroup_cpu_quota_cores"),
    [RT_COL_CGROUP_CPU_PERIODS] = REC(cgroup_cpu_periods, "cgroup_cpu_periods"),
    [RT_COL_CGROUP_CPU_THROTTLED_PERIODS] = REC(cgroup_cpu_throttled_periods, "cgroup_cpu_throttled_periods"),
    [RT_COL_CGROUP_CPU_THROTTLED_SECS] = REC(cgroup_cpu_throttled_secs, "cgroup_cpu_throttled_secs"),
    [RT_COL_CGROUP_PIDS_PEAK] = REC(cgroup_pids_peak, "cgroup_pids_peak"),
    [RT_COL_CGROUP_PIDS_LIMIT] = REC(cgroup_pids_limit, "cgroup_pids_limit"),
    [RT_COL_PRESSURE_CPU_SOME_PCT] = REC(pressure_cpu_some_pct, "pressure_cpu_some_pct"),
    [RT_COL_PRESSURE_MEMORY_SOME_PCT] = REC(pressure_memory_some_pct, "pressure_memory_some_pct"),
    [RT_COL_PRESSURE_MEMORY_FULL_PCT] = REC(pressure_memory_full_pct, "pressure_memory_full_pct"),
    [RT_COL_PRESSURE_IO_SOME_PCT] = REC(pressure_io_some_pct, "pressure_io_some_pct"),
    [RT_COL_PRESSURE_IO_FULL_PCT] = REC(pressure_io_full_pct, "pressure_io_full_pct"),
    [RT_COL_MAIN_TOTAL_RSS_MIB] = REC(main.total_rss_mib, "main_total_rss_mib"),
    [RT_COL_MAIN_PRIVATE_RSS_MIB] = REC(main.private_rss_mib, "main_private_rss_mib"),
    [RT_COL_MAIN_SHARED_RSS_MIB] = REC(main.shared_rss_mib, "main_shared_rss_mib"),
    [RT_COL_MAIN_CORES] = REC(main.cores, "main_cores"),
    [RT_COL_MAIN_THREADS] = REC(main.threads, "main_threads"),
    [RT_COL_MAIN_GPU_VRAM_MIB] = REC(main.gpu_vram_mib, "main_gpu_vram_mib"),
    [RT_COL_DESC_TOTAL_RSS_MIB] = REC(descendants.total_rss_mib, "descendants_total_rss_mib"),
    [RT_COL_DESC_PRIVATE_RSS_MIB] = REC(descendants.private_rss_mib, "descendants_private_rss_mib"),
    [RT_COL_DESC_SHARED_RSS_MIB] = REC(descendants.shared_rss_mib, "descendants_shared_rss_mib"),
    [RT_COL_DESC_CORES] = REC(descendants.cores, "descendants_cores"),
    [RT_COL_DESC_THREADS] = REC(descendants.threads, "descendants_threads"),
    [RT_COL_DESC_GPU_VRAM_MIB] = REC(descendants.gpu_vram_mib, "descendants_gpu_vram_mib"),
    [RT_COL_COMB_TOTAL_RSS_MIB] = REC(combined.total_rss_mib, "combined_total_rss_mib"),
    [RT_COL_COMB_PRIVATE_RSS_MIB] = REC(combined.private_rss_mib, "combined_private_rss_mib"),
    [RT_COL_COMB_SHARED_RSS_MIB] = REC(combined.shared_rss_mib, "combined_shared_rss_mib"),
    [RT_COL_COMB_CORES] = REC(combined.cores, "combined_cores"),
    [RT_COL_COMB_THREADS] = REC(combined.threads, "combined_threads"),
    [RT_COL_COMB_GPU_VRAM_MIB] = REC(combined.gpu_vram_mib, "combined_gpu_vram_mib"),
    [RT_COL_PROC_RSS_HWM_MIB] = REC(process_rss_hwm_mib, "process_rss_hwm_mib"),
    [RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB] = REC(process_unreclaimable_peak_mib, "process_unreclaimable_peak_mib"),
    [RT_COL_PROC_GPU_VRAM_PEAK_MIB] = REC(process_gpu_vram_peak_mib, "process_gpu_vram_peak_mib"),
    [RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL] =
        REC(process_cancelled_write_bytes_total, "process_cancelled_write_bytes_total"),
    [RT_COL_PROC_CGROUP_EXCLUSIVE] = REC(process_cgroup_exclusive, "process_cgroup_exclusive"),
    [RT_COL_CGROUP_PIDS] = REC(cgroup_pids, "cgroup_pids"),
    [RT_COL_ENERGY_JOULES] = REC(energy_joules, "energy_joules"),
    [RT_COL_PROC_ENERGY_JOULES] = REC(process_energy_joules, "process_energy_joules"),
    [RT_COL_ENERGY_METHOD] = {.name = "energy_method", .from = SRC_METHOD, .off = offsetof(rt_record, energy_method)},
    [RT_COL_PROC_ENERGY_METHOD] = {.name = "process_energy_method",
                                   .from = SRC_METHOD,
                                   .off = offsetof(rt_record, process_energy_method)},
    [RT_COL_IDLE_POWER_WATTS] = REC(idle_power_watts, "idle_power_watts"),
    [RT_COL_GPU_POWER_THROTTLED_SECS] = REC(gpu_power_throttled_secs, "gpu_power_throttled_secs"),
    [RT_COL_GPU_THERMAL_THROTTLED_SECS] = REC(gpu_thermal_throttled_secs, "gpu_thermal_throttled_secs"),
    [RT_COL_PROC_VMS_MIB] = REC(process_vms_mib, "process_vms_mib"),
    [RT_COL_PROC_WALK_AGE_SECS] = REC(process_walk_age_secs, "process_walk_age_secs"),
    [RT_COL_PROC_RSS_HWM_TREE_MIB] = REC(process_rss_hwm_tree_mib, "process_rss_hwm_tree_mib"),
    [RT_COL_PROC_UNRECLAIMABLE_UNSURE_MIB] = REC(process_unreclaimable_unsure_mib, "process_unreclaimable_unsure_mib"),
    [RT_COL_PRESSURE_GROUP] = REC(pressure_group, "pressure_group"),
};

static const rt_fstruct *const src_table[] = {[SRC_SAMPLE] = &rt_schema_sample,
                                              [SRC_CPU] = &rt_schema_cpu,
                                              [SRC_MEMORY] = &rt_schema_memory,
                                              [SRC_PROCESS] = &rt_schema_process};

const rt_field *rt_column_field(int c)
{
    if (c < 0 || c >= RT_NCOLS || cols[c].from == REC_ || cols[c].from == SRC_METHOD)
        return NULL;
    return rt_schema_at(src_table[cols[c].from], cols[c].off);
}

int rt_column_count(void)
{
    return RT_NCOLS;
}

const char *rt_column_name(int col)
{
    return col >= 0 && col < RT_NCOLS ? cols[col].name : NULL;
}

int rt_column_by_name(const char *name)
{
    if (!name)
        return -1;
    for (int c = 0; c < RT_NCOLS; c++)
        if (strcmp(cols[c].name, name) == 0)
            return c;
    return -1;
}

/* A sample member as a double: NaN when null or when the sample lacks its struct. */
static double member(const rt_sample *s, const column *c)
{
    const void *st = c->from == SRC_SAMPLE   ? (const void *)s
                     : c->from == SRC_CPU    ? (const void *)s->cpu
                     : c->from == SRC_MEMORY ? (const void *)s->memory
                                             : (const void *)s->process;
    if (!st)
        return NAN;
    return rt_schema_num(c->type, (const char *)st + c->off);
}

/* A method member of the record as its rank (NaN: none). */
static double method_rank(const rt_record *r, const column *c)
{
    const char *m;
    memcpy(&m, (const char *)r + c->off, sizeof m);
    int rank = rt_energy_method_rank(m);
    return rank ? rank : NAN;
}

/* The figures the record has, taken from the record itself (so that rt_row_to_record gives back
 * exactly what rt_record_from_sample gave), and the rest from the sample. */
void rt_row_from_sample(const rt_sample *s, double row[RT_NCOLS])
{
    rt_record r;
    rt_record_from_sample(s, &r);
    for (int c = 0; c < RT_NCOLS; c++) {
        if (cols[c].from == REC_)
            memcpy(&row[c], (const char *)&r + cols[c].off, sizeof(double));
        else if (cols[c].from == SRC_METHOD)
            row[c] = method_rank(&r, &cols[c]);
        else
            row[c] = member(s, &cols[c]);
    }
}

void rt_row_from_record(const rt_record *r, double row[RT_NCOLS])
{
    for (int c = 0; c < RT_NCOLS; c++) {
        if (cols[c].from == REC_)
            memcpy(&row[c], (const char *)r + cols[c].off, sizeof(double));
        else if (cols[c].from == SRC_METHOD)
            row[c] = method_rank(r, &cols[c]);
        else
            row[c] = NAN;
    }
}

void rt_row_to_record(const double row[RT_NCOLS], rt_record *r)
{
    memset(r, 0, sizeof *r);
    r->job_name = NULL;
    for (int c = 0; c < RT_NCOLS; c++)
        if (cols[c].from == REC_)
            memcpy((char *)r + cols[c].off, &row[c], sizeof(double));
        else if (cols[c].from == SRC_METHOD) {
            const char *m = row[c] == row[c] ? rt_energy_method_of_rank((int)row[c]) : NULL;
            memcpy((char *)r + cols[c].off, &m, sizeof m);
        }
    /* as rt_record_from_sample: utime + stime of the interval (NaN without a tree) */
    r->process_cpu_secs = row[RT_COL_PROC_UTIME] + row[RT_COL_PROC_STIME];
}
