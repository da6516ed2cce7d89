/* record_fields.h - the analysis record's figures listed once (htop's Process_fields[] is the
 * model): one row per double of rt_record with its offset, its store column, where it comes
 * from in the sample (a member of the tree, its cgroup or a part of its split, converted by the
 * schema's type; or made by record.c's own code), how the statistics fold it into the summary,
 * and that member's summary key and history column: RT_RECORD_ROWS, a list the compiler also
 * counts (the statistics' state, the store's RT_NCOLS). record.c (the null record, a caller's
 * record at its size, the members copied from a sample), columns.c (a record as the store's row
 * and back) and stats.c (the folds) walk its table. Not public. */
#ifndef RT_ANALYSIS_RECORD_FIELDS_H
#define RT_ANALYSIS_RECORD_FIELDS_H

#include <stddef.h>

#include "resource_tracker.h"

/* Where a figure comes from in a sample. */
typedef enum rt_rf_from {
    RT_RF_MADE = 0,    /* record.c's own code makes it (sums over devices, a choice, a rule) */
    RT_RF_PROCESS,     /* a member of the sample's rt_process (NaN without a tree) */
    RT_RF_GROUP,       /* a member of the record's rt_cgroup: the tree's, else (without one) the
                        * group the tracker runs in (NaN without either) */
    RT_RF_MAIN,        /* a member of the tree's rt_process_part main (NaN without) */
    RT_RF_DESCENDANTS, /* ... of its descendants part */
    RT_RF_COMBINED,    /* ... of its combined part */
} rt_rf_from;

/* How rt_stats folds a figure over the records into its rt_summary member. */
typedef enum rt_rf_fold {
    RT_FOLD_NONE = 0, /* not folded, or by stats.c's own code */
    RT_FOLD_LEVEL,    /* an rt_dist of a level read at the sample, weighted by the interval */
    RT_FOLD_RATE,     /* an rt_dist of a rate over the interval (a short one folded: fold.h) */
    RT_FOLD_SUM,      /* an amount in the interval: summed */
    RT_FOLD_MAX,      /* the largest */
    RT_FOLD_MIN,      /* the lowest (limits, floors) */
    RT_FOLD_TOTAL,    /* a counter since tracking began: the runs' last totals in a file summed */
} rt_rf_fold;

/* How the store keeps a column (store.c): a float where 24 bits are plenty (ratios, counts,
 * seconds in the interval, pressure percents); always a double (Unix time, the CPU total since
 * the start); or exact: a float while every value of a block round-trips through one
 * unchanged, else that block's column as doubles (MiB, bytes, counters, totals). */
typedef enum rt_keep { RT_KEEP_FLOAT = 0, RT_KEEP_DOUBLE = 1, RT_KEEP_EXACT = 2 } rt_keep;

typedef struct rt_record_field {
    const char *name;       /* the store's column name (rt_column_name), or the member's */
    size_t off;             /* of the double in rt_record */
    int col;                /* its store column (RT_COL_*), -1: none */
    rt_rf_from from;        /* RT_RF_MADE: src_off, src_type and div unused */
    size_t src_off;         /* of the member in its sample struct */
    rt_field_type src_type; /* the member's type: the schema's rule says its null (rt_schema_num) */
    double div;             /* the member divided by it (a unit's change), 0: taken as it is */
    rt_rf_fold fold;
    size_t sum_off;         /* of its rt_summary member (an rt_dist for LEVEL and RATE) */
    rt_keep keep;           /* how the store keeps its column */
    const char *json;       /* its rt_summary member's key in the summary's JSON, "object.key" (the
                             * key as sink/summary.c's tables name it, before a unit's suffix);
                             * NULL: not folded, or the summary does not show it */
    const char *history;    /* its rt_summary member's column in the history's runs table (a
                             * distribution's: with _mean, _peak, _p50, _p95); NULL: none */
} rt_record_field;

/* The rows, in the order of rt_record's members, as one list: RT_RECORD_ROWS(X) is
 * X(member, "column name", RT_COL_* or -1, where from, how the store keeps it (FLOAT, DOUBLE,
 * EXACT), the fold (NONE, LEVEL, RATE, SUM, MAX, MIN, TOTAL), its rt_summary member (_: none),
 * "its summary key" or NULL, "its history column" or NULL) for each row. record_fields.c makes the
 * table of it; the counts below and the store's columns (store.h) follow from it, so a row added
 * here sizes the statistics' state and the store without another number to change. Where from:
 * FROM_MADE (record.c's code), FROM_PROC(member of rt_process, divisor or 0), FROM_GROUP(member of
 * rt_cgroup), FROM_PART(RT_RF_MAIN..., member of rt_process_part, divisor or 0). */
#define RT_RF_PART(X, p, KIND, P)                                                                                      \
    X(p.total_rss_mib, #p "_total_rss_mib", RT_COL_##P##_TOTAL_RSS_MIB, FROM_PART(KIND, total_rss_mib, 0), EXACT,    \
      NONE, _, NULL, NULL)                                                                                             \
    X(p.private_rss_mib, #p "_private_rss_mib", RT_COL_##P##_PRIVATE_RSS_MIB, FROM_PART(KIND, private_rss_mib, 0),   \
      EXACT, NONE, _, NULL, NULL)                                                                                      \
    X(p.shared_rss_mib, #p "_shared_rss_mib", RT_COL_##P##_SHARED_RSS_MIB, FROM_PART(KIND, shared_rss_mib, 0), EXACT, \
      NONE, _, NULL, NULL)                                                                                             \
    X(p.cores, #p "_cores", RT_COL_##P##_CORES, FROM_PART(KIND, cores_used, 0), FLOAT, NONE, _, NULL, NULL)           \
    X(p.threads, #p "_threads", RT_COL_##P##_THREADS, FROM_PART(KIND, thread_count, 0), FLOAT, NONE, _, NULL, NULL)   \
    X(p.gpu_vram_mib, #p "_gpu_vram_mib", RT_COL_##P##_GPU_VRAM_MIB, FROM_PART(KIND, gpu_vram_used_bytes, MIB),     \
      EXACT, NONE, _, NULL, NULL)

/* clang-format off */
#define RT_RECORD_ROWS(X)                                                                                              \
    X(timestamp_secs, "timestamp", RT_COL_TIMESTAMP, FROM_MADE, DOUBLE, NONE, _, NULL, NULL)                         \
    X(interval_secs, "interval", RT_COL_INTERVAL, FROM_MADE, FLOAT, NONE, _, NULL, NULL)                             \
    /* the machine */                                                                                                \
    X(cpu_cores, "cpu_cores", RT_COL_CPU_CORES, FROM_MADE, FLOAT, RATE, cpu_cores, "machine.cores", "cpu_cores")     \
    X(cpu_count, "cpu_count", RT_COL_CPU_COUNT, FROM_MADE, FLOAT, MAX, cpu_count, "machine.cpu_count", "cpu_count")  \
    X(memory_used_mib, "memory_used_mib", RT_COL_MEM_USED_MIB, FROM_MADE, EXACT, LEVEL, memory_used_mib,             \
      "machine.memory_used", "memory_used_mib")                                                                      \
    X(memory_total_mib, "memory_total_mib", RT_COL_MEM_TOTAL_MIB, FROM_MADE, EXACT, MAX, memory_total_mib,           \
      "machine.memory_total", "memory_total_mib")                                                                    \
    X(disk_read_bytes, "disk_read_bytes", RT_COL_DISK_READ_BYTES, FROM_MADE, EXACT, SUM, disk_read_bytes,            \
      "machine.disk_read_bytes", "disk_read_bytes")                                                                  \
    X(disk_write_bytes, "disk_write_bytes", RT_COL_DISK_WRITE_BYTES, FROM_MADE, EXACT, SUM, disk_write_bytes,        \
      "machine.disk_write_bytes", "disk_write_bytes")                                                                \
    X(net_recv_bytes, "net_recv_bytes", RT_COL_NET_RECV_BYTES, FROM_MADE, EXACT, SUM, net_recv_bytes,                \
      "machine.net_recv_bytes", "net_recv_bytes")                                                                    \
    X(net_sent_bytes, "net_sent_bytes", RT_COL_NET_SENT_BYTES, FROM_MADE, EXACT, SUM, net_sent_bytes,                \
      "machine.net_sent_bytes", "net_sent_bytes")                                                                    \
    X(disk_space_total_bytes, "disk_space_total_bytes", RT_COL_DISK_SPACE_TOTAL_BYTES, FROM_MADE, EXACT, MAX,        \
      disk_space_total_bytes, "machine.disk_space_total_bytes", "disk_space_total_bytes")                            \
    X(disk_space_used_bytes, "disk_space_used_bytes", RT_COL_DISK_SPACE_USED_BYTES, FROM_MADE, EXACT, MAX,           \
      disk_space_used_peak_bytes, "machine.disk_space_used_peak_bytes", "disk_space_used_peak_bytes")                \
    X(gpu_usage, "gpu_usage", RT_COL_GPU_USAGE, FROM_MADE, FLOAT, LEVEL, gpu_usage, "machine.gpu_usage",             \
      "gpu_usage")                                                                                                   \
    X(gpu_vram_mib, "gpu_vram_mib", RT_COL_GPU_VRAM_MIB, FROM_MADE, EXACT, LEVEL, gpu_vram_mib, "machine.gpu_vram",  \
      "gpu_vram_mib")                                                                                                \
    X(gpu_utilized, "gpu_utilized", RT_COL_GPU_UTILIZED, FROM_MADE, FLOAT, NONE, _, NULL, NULL)                      \
    X(gpu_count, "gpu_count", RT_COL_GPU_COUNT, FROM_MADE, FLOAT, MAX, gpu_count, "machine.gpu_count", "gpu_count")  \
    X(gpu_vram_total_mib, "gpu_vram_total_mib", RT_COL_GPU_VRAM_TOTAL_MIB, FROM_MADE, EXACT, MAX,                    \
      gpu_vram_total_mib, "machine.gpu_vram_total", "gpu_vram_total_mib")                                            \
    /* the tracked tree */                                                                                           \
    X(process_pid, "process_pid", RT_COL_PROC_PID, FROM_PROC(pid, 0), EXACT, NONE, _, NULL, NULL)                    \
    X(process_children, "process_children", RT_COL_PROC_CHILDREN, FROM_PROC(child_count, 0), FLOAT, NONE, _, NULL,   \
      NULL)                                                                                                          \
    X(process_cores, "process_cores", RT_COL_PROC_CORES, FROM_PROC(cores_used, 0), FLOAT, RATE, process_cores,       \
      "process.cores", "process_cores")                                                                              \
    /* the interval's utime + stime: the store keeps both */                                                         \
    X(process_cpu_secs, "process_cpu_secs", -1, FROM_MADE, FLOAT, NONE, _, NULL, NULL)                               \
    X(process_cpu_secs_total, "process_cpu_secs_total", RT_COL_PROC_CPU_SECS_TOTAL, FROM_PROC(cpu_secs_total, 0),    \
      DOUBLE, NONE, _, NULL, NULL)                                                                                   \
    X(process_pss_mib, "process_pss_mib", RT_COL_PROC_PSS_MIB, FROM_PROC(pss_mib, 0), EXACT, LEVEL, process_pss_mib, \
      "process.pss", "process_pss_mib")                                                                              \
    X(process_rss_mib, "process_rss_mib", RT_COL_PROC_RSS_MIB, FROM_PROC(rss_mib, 0), EXACT, LEVEL, process_rss_mib, \
      "process.rss", "process_rss_mib")                                                                              \
    X(process_rss_peak_mib, "process_rss_peak_mib", RT_COL_PROC_RSS_PEAK_MIB, FROM_PROC(rss_peak_mib, 0), EXACT,     \
      NONE, _, NULL, NULL)                                                                                           \
    X(process_read_bytes, "process_read_bytes", RT_COL_PROC_READ_BYTES, FROM_PROC(read_bytes, 0), EXACT, SUM,        \
      process_read_bytes, "process.read_bytes", "process_read_bytes")                                                \
    X(process_write_bytes, "process_write_bytes", RT_COL_PROC_WRITE_BYTES, FROM_PROC(write_bytes, 0), EXACT, SUM,    \
      process_write_bytes, "process.write_bytes", "process_write_bytes")                                             \
    X(process_gpu_usage, "process_gpu_usage", RT_COL_PROC_GPU_USAGE, FROM_PROC(gpu_utilization_pct, 100), FLOAT,     \
      LEVEL, process_gpu_usage, "process.gpu_usage", "process_gpu_usage")                                            \
    X(process_gpu_vram_mib, "process_gpu_vram_mib", RT_COL_PROC_GPU_VRAM_MIB, FROM_PROC(gpu_vram_used_bytes, MIB),   \
      EXACT, LEVEL, process_gpu_vram_mib, "process.gpu_vram", "process_gpu_vram_mib")                                \
    X(process_gpu_utilized, "process_gpu_utilized", RT_COL_PROC_GPU_UTILIZED, FROM_PROC(gpu_count_used, 0), FLOAT,   \
      MAX, process_gpus_used, "process.gpus_used", "process_gpus_used")                                              \
    /* 0.6: the group's */                                                                                           \
    X(process_memory_peak_mib, "process_memory_peak_mib", RT_COL_PROC_MEMORY_PEAK_MIB, FROM_MADE, EXACT, MAX,        \
      process_memory_peak_mib, "process.memory_peak", "process_memory_peak_mib")                                     \
    X(cgroup_oom_kills, "cgroup_oom_kills", RT_COL_CGROUP_OOM_KILLS, FROM_GROUP(oom_kills), EXACT, TOTAL, oom_kills, \
      "cgroup.oom_kills", "oom_kills")                                                                               \
    X(cgroup_memory_limit_mib, "cgroup_memory_limit_mib", RT_COL_CGROUP_MEMORY_LIMIT_MIB,                            \
      FROM_GROUP(memory_limit_mib), EXACT, MIN, memory_limit_mib, "cgroup.memory_limit", "memory_limit_mib")         \
    X(cgroup_memory_high_mib, "cgroup_memory_high_mib", RT_COL_CGROUP_MEMORY_HIGH_MIB, FROM_GROUP(memory_high_mib),  \
      EXACT, MIN, memory_high_mib, "cgroup.memory_high", "memory_high_mib")                                          \
    X(cgroup_cpu_quota_cores, "cgroup_cpu_quota_cores", RT_COL_CGROUP_CPU_QUOTA_CORES, FROM_GROUP(cpu_quota_cores),  \
      FLOAT, MIN, cpu_quota_cores, "cgroup.cpu_quota_cores", "cpu_quota_cores")                                      \
    X(cgroup_cpu_periods, "cgroup_cpu_periods", RT_COL_CGROUP_CPU_PERIODS, FROM_GROUP(cpu_periods), EXACT, TOTAL,    \
      cpu_periods, "cgroup.cpu_periods", "cpu_periods")                                                              \
    X(cgroup_cpu_throttled_periods, "cgroup_cpu_throttled_periods", RT_COL_CGROUP_CPU_THROTTLED_PERIODS,             \
      FROM_GROUP(cpu_throttled_periods), EXACT, TOTAL, cpu_throttled_periods, "cgroup.cpu_throttled_periods",        \
      "cpu_throttled_periods")                                                                                       \
    X(cgroup_cpu_throttled_secs, "cgroup_cpu_throttled_secs", RT_COL_CGROUP_CPU_THROTTLED_SECS,                      \
      FROM_GROUP(cpu_throttled_secs), EXACT, TOTAL, cpu_throttled_secs, "cgroup.cpu_throttled",                      \
      "cpu_throttled_secs")                                                                                          \
    X(cgroup_pids_peak, "cgroup_pids_peak", RT_COL_CGROUP_PIDS_PEAK, FROM_GROUP(pids_peak), EXACT, MAX, pids_peak,   \
      "cgroup.pids_peak", "pids_peak")                                                                               \
    X(cgroup_pids_limit, "cgroup_pids_limit", RT_COL_CGROUP_PIDS_LIMIT, FROM_GROUP(pids_limit), EXACT, MIN,          \
      pids_limit, "cgroup.pids_limit", "pids_limit")                                                                 \
    /* pressure: the group's or the machine's, resource by resource (record.c) */                                    \
    X(pressure_cpu_some_pct, "pressure_cpu_some_pct", RT_COL_PRESSURE_CPU_SOME_PCT, FROM_MADE, FLOAT, RATE,          \
      pressure_cpu_some_pct, "pressure.cpu_some_pct", "pressure_cpu_some_pct")                                       \
    X(pressure_memory_some_pct, "pressure_memory_some_pct", RT_COL_PRESSURE_MEMORY_SOME_PCT, FROM_MADE, FLOAT, RATE, \
      pressure_memory_some_pct, "pressure.memory_some_pct", "pressure_memory_some_pct")                              \
    X(pressure_memory_full_pct, "pressure_memory_full_pct", RT_COL_PRESSURE_MEMORY_FULL_PCT, FROM_MADE, FLOAT, RATE, \
      pressure_memory_full_pct, "pressure.memory_full_pct", "pressure_memory_full_pct")                              \
    X(pressure_io_some_pct, "pressure_io_some_pct", RT_COL_PRESSURE_IO_SOME_PCT, FROM_MADE, FLOAT, RATE,             \
      pressure_io_some_pct, "pressure.io_some_pct", "pressure_io_some_pct")                                          \
    X(pressure_io_full_pct, "pressure_io_full_pct", RT_COL_PRESSURE_IO_FULL_PCT, FROM_MADE, FLOAT, RATE,             \
      pressure_io_full_pct, "pressure.io_full_pct", "pressure_io_full_pct")                                          \
    /* 0.8: gpu_tracker's split */                                                                                   \
    RT_RF_PART(X, main, MAIN, MAIN)                                                                                  \
    RT_RF_PART(X, descendants, DESCENDANTS, DESC)                                                                    \
    RT_RF_PART(X, combined, COMBINED, COMB)                                                                          \
    /* 0.9 */                                                                                                        \
    X(process_rss_hwm_mib, "process_rss_hwm_mib", RT_COL_PROC_RSS_HWM_MIB, FROM_PROC(rss_hwm_mib, 0), EXACT, MAX,    \
      process_rss_hwm_mib, "process.rss_hwm", "process_rss_hwm_mib")                                                 \
    X(process_unreclaimable_peak_mib, "process_unreclaimable_peak_mib", RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB,          \
      FROM_MADE, EXACT, MAX, process_unreclaimable_peak_mib, "process.unreclaimable_peak",                           \
      "process_unreclaimable_peak_mib")                                                                              \
    X(process_gpu_vram_peak_mib, "process_gpu_vram_peak_mib", RT_COL_PROC_GPU_VRAM_PEAK_MIB,                         \
      FROM_PROC(gpu_vram_peak_bytes, MIB), EXACT, MAX, process_gpu_vram_peak_mib, "process.gpu_vram_peak",           \
      "process_gpu_vram_peak_mib")                                                                                   \
    X(process_cancelled_write_bytes_total, "process_cancelled_write_bytes_total",                                    \
      RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL, FROM_PROC(cancelled_write_bytes_total, 0), EXACT, TOTAL,              \
      process_cancelled_write_bytes, "process.cancelled_write_bytes", "process_cancelled_write_bytes")               \
    X(process_alive, "process_alive", RT_COL_PROC_ALIVE, FROM_PROC(alive, 0), FLOAT, NONE, _, NULL, NULL)            \
    X(process_cgroup_exclusive, "process_cgroup_exclusive", RT_COL_PROC_CGROUP_EXCLUSIVE, FROM_MADE, FLOAT, NONE, _, \
      NULL, NULL)                                                                                                    \
    X(cgroup_pids, "cgroup_pids", RT_COL_CGROUP_PIDS, FROM_GROUP(pids), FLOAT, NONE, _, NULL, NULL)                  \
    /* 0.15: energy */                                                                                               \
    X(energy_joules, "energy_joules", RT_COL_ENERGY_JOULES, FROM_MADE, EXACT, SUM, energy_joules, "energy.joules",   \
      "energy_joules")                                                                                               \
    X(process_energy_joules, "process_energy_joules", RT_COL_PROC_ENERGY_JOULES, FROM_MADE, EXACT, SUM,              \
      process_energy_joules, "energy.process_joules", "process_energy_joules")                                       \
    X(idle_power_watts, "idle_power_watts", RT_COL_IDLE_POWER_WATTS, FROM_MADE, FLOAT, MIN, idle_power_watts,        \
      "energy.idle_power_watts", "idle_power_watts")                                                                 \
    X(gpu_power_throttled_secs, "gpu_power_throttled_secs", RT_COL_GPU_POWER_THROTTLED_SECS, FROM_MADE, FLOAT,       \
      TOTAL, gpu_power_throttled_secs, "energy.gpu_power_throttled", "gpu_power_throttled_secs")                     \
    X(gpu_thermal_throttled_secs, "gpu_thermal_throttled_secs", RT_COL_GPU_THERMAL_THROTTLED_SECS, FROM_MADE, FLOAT, \
      TOTAL, gpu_thermal_throttled_secs, "energy.gpu_thermal_throttled", "gpu_thermal_throttled_secs")               \
    /* 0.16, 0.18 */                                                                                                 \
    X(process_vms_mib, "process_vms_mib", RT_COL_PROC_VMS_MIB, FROM_PROC(vms_mib, 0), EXACT, MAX,                    \
      process_vms_peak_mib, "process.vms_peak", "process_vms_peak_mib")                                              \
    X(process_walk_age_secs, "process_walk_age_secs", RT_COL_PROC_WALK_AGE_SECS, FROM_PROC(walk_age_secs, 0), FLOAT, \
      MAX, process_walk_age_max_secs, "process.walk_age_max_secs", NULL)                                             \
    X(process_rss_hwm_tree_mib, "process_rss_hwm_tree_mib", RT_COL_PROC_RSS_HWM_TREE_MIB,                            \
      FROM_PROC(rss_hwm_tree_mib, 0), EXACT, MAX, process_rss_hwm_tree_mib, "process.rss_hwm_tree", NULL)            \
    X(process_unreclaimable_unsure_mib, "process_unreclaimable_unsure_mib", RT_COL_PROC_UNRECLAIMABLE_UNSURE_MIB,    \
      FROM_MADE, EXACT, NONE, _, NULL, NULL)                                                                         \
    X(pressure_group, "pressure_group", RT_COL_PRESSURE_GROUP, FROM_MADE, FLOAT, NONE, _, NULL, NULL)                \
    /* 0.19: the GPUs' work (record.c: the tree's, else the machine's) */                                            \
    X(gpu_sm_active_pct, "gpu_sm_active_pct", RT_COL_GPU_SM_ACTIVE_PCT, FROM_MADE, FLOAT, RATE, gpu_sm_active_pct,   \
      "gpu_work.sm_active_pct", "gpu_sm_active_pct")                                                                 \
    X(gpu_sm_occupancy_pct, "gpu_sm_occupancy_pct", RT_COL_GPU_SM_OCCUPANCY_PCT, FROM_MADE, FLOAT, RATE,             \
      gpu_sm_occupancy_pct, "gpu_work.sm_occupancy_pct", "gpu_sm_occupancy_pct")                                     \
    X(gpu_tensor_active_pct, "gpu_tensor_active_pct", RT_COL_GPU_TENSOR_ACTIVE_PCT, FROM_MADE, FLOAT, RATE,          \
      gpu_tensor_active_pct, "gpu_work.tensor_active_pct", "gpu_tensor_active_pct")                                  \
    X(gpu_dram_active_pct, "gpu_dram_active_pct", RT_COL_GPU_DRAM_ACTIVE_PCT, FROM_MADE, FLOAT, RATE,                \
      gpu_dram_active_pct, "gpu_work.dram_active_pct", "gpu_dram_active_pct")                                        \
    X(gpu_fp64_active_pct, "gpu_fp64_active_pct", RT_COL_GPU_FP64_ACTIVE_PCT, FROM_MADE, FLOAT, RATE,                \
      gpu_fp64_active_pct, "gpu_work.fp64_active_pct", "gpu_fp64_active_pct")                                        \
    X(gpu_fp32_active_pct, "gpu_fp32_active_pct", RT_COL_GPU_FP32_ACTIVE_PCT, FROM_MADE, FLOAT, RATE,                \
      gpu_fp32_active_pct, "gpu_work.fp32_active_pct", "gpu_fp32_active_pct")                                        \
    X(gpu_fp16_active_pct, "gpu_fp16_active_pct", RT_COL_GPU_FP16_ACTIVE_PCT, FROM_MADE, FLOAT, RATE,                \
      gpu_fp16_active_pct, "gpu_work.fp16_active_pct", "gpu_fp16_active_pct")                                        \
    X(gpu_pcie_bytes_per_sec, "gpu_pcie_bytes_per_sec", RT_COL_GPU_PCIE_BYTES_PER_SEC, FROM_MADE, FLOAT, RATE,       \
      gpu_pcie_bytes_per_sec, "gpu_work.pcie_bytes_per_sec", "gpu_pcie_bytes_per_sec")                               \
    X(gpu_nvlink_bytes_per_sec, "gpu_nvlink_bytes_per_sec", RT_COL_GPU_NVLINK_BYTES_PER_SEC, FROM_MADE, FLOAT, RATE, \
      gpu_nvlink_bytes_per_sec, "gpu_work.nvlink_bytes_per_sec", "gpu_nvlink_bytes_per_sec")                         \
    X(gpu_work_shared, "gpu_work_shared", RT_COL_GPU_WORK_SHARED, FROM_MADE, FLOAT, MAX, gpu_work_shared,            \
      "gpu_work.shared", "gpu_work_shared")                                                                          \
    X(process_gpus_busy, "process_gpus_busy", RT_COL_PROC_GPUS_BUSY, FROM_PROC(gpu_count_busy, 0), FLOAT, MAX,       \
      process_gpus_busy, "process.gpus_busy", "process_gpus_busy")                                                   \
    X(process_gpu_vram_per_gpu_mib, "process_gpu_vram_per_gpu_mib", RT_COL_PROC_GPU_VRAM_PER_GPU_MIB,                \
      FROM_PROC(gpu_vram_per_gpu_max_bytes, MIB), EXACT, MAX, process_gpu_vram_per_gpu_peak_mib,                     \
      "process.gpu_vram_per_gpu_peak", "process_gpu_vram_per_gpu_peak_mib")                                          \
    /* 0.20: the tasks' waits for a CPU (the CPU table's own demand, cores.c) */                                     \
    X(process_cpu_wait_cores, "process_cpu_wait_cores", RT_COL_PROC_CPU_WAIT_CORES, FROM_PROC(cpu_wait_cores, 0),    \
      FLOAT, NONE, _, NULL, NULL)                                                                                    \
    /* 0.20: re-reads */                                                                                             \
    X(cgroup_memory_refault_mib, "cgroup_memory_refault_mib", RT_COL_CGROUP_MEMORY_REFAULT_MIB,                      \
      FROM_GROUP(memory_refault_mib), EXACT, TOTAL, memory_refault_mib, "cgroup.memory_refault",                     \
      "memory_refault_mib")                                                                                          \
    X(process_exits_counted, "process_exits_counted", RT_COL_PROC_EXITS_COUNTED, FROM_PROC(exits_counted, 0), EXACT, \
      MAX, process_exits_counted, "process.exits_counted", "process_exits_counted")                                  \
    X(process_unwaited_parents, "process_unwaited_parents", RT_COL_PROC_UNWAITED_PARENTS,                            \
      FROM_PROC(unwaited_parents, 0), EXACT, MAX, process_unwaited_parents, "process.unwaited_parents",              \
      "process_unwaited_parents")                                                                                    \
    /* 0.21: the clocks (the sample's own; stats.c folds them into the summary's clock members) */                   \
    X(clock_step_secs, "clock_step_secs", RT_COL_CLOCK_STEP_SECS, FROM_MADE, FLOAT, NONE, _, NULL, NULL)             \
    X(sampling_gap_secs, "sampling_gap_secs", RT_COL_SAMPLING_GAP_SECS, FROM_MADE, FLOAT, NONE, _, NULL, NULL)
/* clang-format on */

/* The rows, in the order of rt_record's members (RT_RECORD_ROWS). */
extern const rt_record_field rt_record_fields[];
extern const size_t rt_record_field_count;

/* What the list holds, counted by the compiler: its rows, those with a store column, and those
 * that fold as a distribution (LEVEL or RATE) and as a TOTAL (the statistics' state holds as
 * many: stats.c). */
#define RT_RF_IS_DIST_NONE 0
#define RT_RF_IS_DIST_LEVEL 1
#define RT_RF_IS_DIST_RATE 1
#define RT_RF_IS_DIST_SUM 0
#define RT_RF_IS_DIST_MAX 0
#define RT_RF_IS_DIST_MIN 0
#define RT_RF_IS_DIST_TOTAL 0
#define RT_RF_COUNT_ROW(m, n, c, from, keep, fold, ...) +1
#define RT_RF_COUNT_COL(m, n, c, from, keep, fold, ...) +((c) >= 0)
#define RT_RF_COUNT_DIST(m, n, c, from, keep, fold, ...) +RT_RF_IS_DIST_##fold
#define RT_RF_COUNT_TOTAL(m, n, c, from, keep, fold, ...) +(RT_FOLD_##fold == RT_FOLD_TOTAL)
enum {
    RT_RECORD_NROWS = 0 RT_RECORD_ROWS(RT_RF_COUNT_ROW),
    RT_RECORD_NCOLS = 0 RT_RECORD_ROWS(RT_RF_COUNT_COL),
    RT_RECORD_NDIST = 0 RT_RECORD_ROWS(RT_RF_COUNT_DIST),
    RT_RECORD_NTOTAL = 0 RT_RECORD_ROWS(RT_RF_COUNT_TOTAL),
};

/* The double at a row's offset. */
static inline double rt_record_get(const rt_record *r, const rt_record_field *f)
{
    return *(const double *)(const void *)((const char *)r + f->off);
}

static inline void rt_record_set(rt_record *r, const rt_record_field *f, double v)
{
    *(double *)(void *)((char *)r + f->off) = v;
}

#endif
