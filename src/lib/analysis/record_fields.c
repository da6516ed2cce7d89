/* record_fields.c - the table of rt_record's figures (record_fields.h): a row per double, in the
 * order of the struct. A figure that reaches the record from one member of the tree, its group
 * or a part of its split is a row alone: record.c copies it, the store keeps it in its column,
 * the statistics fold it as the row says. */
#include <stddef.h>

#include "../core/schema.h"
#include "record_fields.h"

#define ROW(m, n, c) .name = n, .off = offsetof(rt_record, m), .col = (c)
#define SRC(kind, type, m, d)                                                                                          \
    .from = (kind), .src_off = offsetof(type, m), .src_type = RT_FIELD_TYPE_OF(((type *)0)->m), .div = (d)
#define PROC(m, d) SRC(RT_RF_PROCESS, rt_process, m, d)
#define GROUP(m) SRC(RT_RF_GROUP, rt_cgroup, m, 0)
#define FOLD(k, s) .fold = RT_FOLD_##k, .sum_off = offsetof(rt_summary, s)
#define KEEP(k) .keep = RT_KEEP_##k
#define MIB 1048576.0

/* The six figures of one part of the tree's split, from the part kind of the sample's tree. */
#define PART(p, kind, P)                                                                                               \
    {ROW(p.total_rss_mib, #p "_total_rss_mib", RT_COL_##P##_TOTAL_RSS_MIB),                                          \
     SRC(kind, rt_process_part, total_rss_mib, 0), KEEP(EXACT)},                                                                  \
        {ROW(p.private_rss_mib, #p "_private_rss_mib", RT_COL_##P##_PRIVATE_RSS_MIB),                                \
         SRC(kind, rt_process_part, private_rss_mib, 0), KEEP(EXACT)},                                                            \
        {ROW(p.shared_rss_mib, #p "_shared_rss_mib", RT_COL_##P##_SHARED_RSS_MIB),                                   \
         SRC(kind, rt_process_part, shared_rss_mib, 0), KEEP(EXACT)},                                                             \
        {ROW(p.cores, #p "_cores", RT_COL_##P##_CORES), SRC(kind, rt_process_part, cores_used, 0)},                  \
        {ROW(p.threads, #p "_threads", RT_COL_##P##_THREADS), SRC(kind, rt_process_part, thread_count, 0)},          \
        {ROW(p.gpu_vram_mib, #p "_gpu_vram_mib", RT_COL_##P##_GPU_VRAM_MIB),                                         \
         SRC(kind, rt_process_part, gpu_vram_used_bytes, MIB), KEEP(EXACT)}

const rt_record_field rt_record_fields[] = {
    {ROW(timestamp_secs, "timestamp", RT_COL_TIMESTAMP), KEEP(DOUBLE)},
    {ROW(interval_secs, "interval", RT_COL_INTERVAL)},
    /* the machine */
    {ROW(cpu_cores, "cpu_cores", RT_COL_CPU_CORES), FOLD(RATE, cpu_cores)},
    {ROW(cpu_count, "cpu_count", RT_COL_CPU_COUNT), FOLD(MAX, cpu_count)},
    {ROW(memory_used_mib, "memory_used_mib", RT_COL_MEM_USED_MIB), FOLD(LEVEL, memory_used_mib), KEEP(EXACT)},
    {ROW(memory_total_mib, "memory_total_mib", RT_COL_MEM_TOTAL_MIB), FOLD(MAX, memory_total_mib), KEEP(EXACT)},
    {ROW(disk_read_bytes, "disk_read_bytes", RT_COL_DISK_READ_BYTES), FOLD(SUM, disk_read_bytes), KEEP(EXACT)},
    {ROW(disk_write_bytes, "disk_write_bytes", RT_COL_DISK_WRITE_BYTES), FOLD(SUM, disk_write_bytes), KEEP(EXACT)},
    {ROW(net_recv_bytes, "net_recv_bytes", RT_COL_NET_RECV_BYTES), FOLD(SUM, net_recv_bytes), KEEP(EXACT)},
    {ROW(net_sent_bytes, "net_sent_bytes", RT_COL_NET_SENT_BYTES), FOLD(SUM, net_sent_bytes), KEEP(EXACT)},
    {ROW(disk_space_total_bytes, "disk_space_total_bytes", RT_COL_DISK_SPACE_TOTAL_BYTES),
     FOLD(MAX, disk_space_total_bytes), KEEP(EXACT)},
    {ROW(disk_space_used_bytes, "disk_space_used_bytes", RT_COL_DISK_SPACE_USED_BYTES),
     FOLD(MAX, disk_space_used_peak_bytes), KEEP(EXACT)},
    {ROW(gpu_usage, "gpu_usage", RT_COL_GPU_USAGE), FOLD(LEVEL, gpu_usage)},
    {ROW(gpu_vram_mib, "gpu_vram_mib", RT_COL_GPU_VRAM_MIB), FOLD(LEVEL, gpu_vram_mib), KEEP(EXACT)},
    {ROW(gpu_utilized, "gpu_utilized", RT_COL_GPU_UTILIZED)},
    {ROW(gpu_count, "gpu_count", RT_COL_GPU_COUNT), FOLD(MAX, gpu_count)},
    {ROW(gpu_vram_total_mib, "gpu_vram_total_mib", RT_COL_GPU_VRAM_TOTAL_MIB), FOLD(MAX, gpu_vram_total_mib), KEEP(EXACT)},
    /* the tracked tree */
    {ROW(process_pid, "process_pid", RT_COL_PROC_PID), PROC(pid, 0), KEEP(EXACT)},
    {ROW(process_children, "process_children", RT_COL_PROC_CHILDREN), PROC(child_count, 0)},
    {ROW(process_cores, "process_cores", RT_COL_PROC_CORES), PROC(cores_used, 0), FOLD(RATE, process_cores)},
    {ROW(process_cpu_secs, "process_cpu_secs", -1)}, /* utime + stime; the store keeps both */
    {ROW(process_cpu_secs_total, "process_cpu_secs_total", RT_COL_PROC_CPU_SECS_TOTAL), PROC(cpu_secs_total, 0), KEEP(DOUBLE)},
    {ROW(process_pss_mib, "process_pss_mib", RT_COL_PROC_PSS_MIB), PROC(pss_mib, 0), FOLD(LEVEL, process_pss_mib), KEEP(EXACT)},
    {ROW(process_rss_mib, "process_rss_mib", RT_COL_PROC_RSS_MIB), PROC(rss_mib, 0), FOLD(LEVEL, process_rss_mib), KEEP(EXACT)},
    {ROW(process_rss_peak_mib, "process_rss_peak_mib", RT_COL_PROC_RSS_PEAK_MIB), PROC(rss_peak_mib, 0), KEEP(EXACT)},
    {ROW(process_read_bytes, "process_read_bytes", RT_COL_PROC_READ_BYTES), PROC(read_bytes, 0),
     FOLD(SUM, process_read_bytes), KEEP(EXACT)},
    {ROW(process_write_bytes, "process_write_bytes", RT_COL_PROC_WRITE_BYTES), PROC(write_bytes, 0),
     FOLD(SUM, process_write_bytes), KEEP(EXACT)},
    {ROW(process_gpu_usage, "process_gpu_usage", RT_COL_PROC_GPU_USAGE), PROC(gpu_utilization_pct, 100),
     FOLD(LEVEL, process_gpu_usage)},
    {ROW(process_gpu_vram_mib, "process_gpu_vram_mib", RT_COL_PROC_GPU_VRAM_MIB), PROC(gpu_vram_used_bytes, MIB),
     FOLD(LEVEL, process_gpu_vram_mib), KEEP(EXACT)},
    {ROW(process_gpu_utilized, "process_gpu_utilized", RT_COL_PROC_GPU_UTILIZED), PROC(gpu_count_used, 0),
     FOLD(MAX, process_gpus_used)},
    /* 0.6: the group's */
    {ROW(process_memory_peak_mib, "process_memory_peak_mib", RT_COL_PROC_MEMORY_PEAK_MIB),
     FOLD(MAX, process_memory_peak_mib), KEEP(EXACT)},
    {ROW(cgroup_oom_kills, "cgroup_oom_kills", RT_COL_CGROUP_OOM_KILLS), GROUP(oom_kills), FOLD(TOTAL, oom_kills), KEEP(EXACT)},
    {ROW(cgroup_memory_limit_mib, "cgroup_memory_limit_mib", RT_COL_CGROUP_MEMORY_LIMIT_MIB), GROUP(memory_limit_mib),
     FOLD(MIN, memory_limit_mib), KEEP(EXACT)},
    {ROW(cgroup_memory_high_mib, "cgroup_memory_high_mib", RT_COL_CGROUP_MEMORY_HIGH_MIB), GROUP(memory_high_mib),
     FOLD(MIN, memory_high_mib), KEEP(EXACT)},
    {ROW(cgroup_cpu_quota_cores, "cgroup_cpu_quota_cores", RT_COL_CGROUP_CPU_QUOTA_CORES), GROUP(cpu_quota_cores),
     FOLD(MIN, cpu_quota_cores)},
    {ROW(cgroup_cpu_periods, "cgroup_cpu_periods", RT_COL_CGROUP_CPU_PERIODS), GROUP(cpu_periods),
     FOLD(TOTAL, cpu_periods), KEEP(EXACT)},
    {ROW(cgroup_cpu_throttled_periods, "cgroup_cpu_throttled_periods", RT_COL_CGROUP_CPU_THROTTLED_PERIODS),
     GROUP(cpu_throttled_periods), FOLD(TOTAL, cpu_throttled_periods), KEEP(EXACT)},
    {ROW(cgroup_cpu_throttled_secs, "cgroup_cpu_throttled_secs", RT_COL_CGROUP_CPU_THROTTLED_SECS),
     GROUP(cpu_throttled_secs), FOLD(TOTAL, cpu_throttled_secs), KEEP(EXACT)},
    {ROW(cgroup_pids_peak, "cgroup_pids_peak", RT_COL_CGROUP_PIDS_PEAK), GROUP(pids_peak), FOLD(MAX, pids_peak), KEEP(EXACT)},
    {ROW(cgroup_pids_limit, "cgroup_pids_limit", RT_COL_CGROUP_PIDS_LIMIT), GROUP(pids_limit), FOLD(MIN, pids_limit), KEEP(EXACT)},
    /* pressure: the group's or the machine's, resource by resource (record.c) */
    {ROW(pressure_cpu_some_pct, "pressure_cpu_some_pct", RT_COL_PRESSURE_CPU_SOME_PCT),
     FOLD(RATE, pressure_cpu_some_pct)},
    {ROW(pressure_memory_some_pct, "pressure_memory_some_pct", RT_COL_PRESSURE_MEMORY_SOME_PCT),
     FOLD(RATE, pressure_memory_some_pct)},
    {ROW(pressure_memory_full_pct, "pressure_memory_full_pct", RT_COL_PRESSURE_MEMORY_FULL_PCT),
     FOLD(RATE, pressure_memory_full_pct)},
    {ROW(pressure_io_some_pct, "pressure_io_some_pct", RT_COL_PRESSURE_IO_SOME_PCT), FOLD(RATE, pressure_io_some_pct)},
    {ROW(pressure_io_full_pct, "pressure_io_full_pct", RT_COL_PRESSURE_IO_FULL_PCT), FOLD(RATE, pressure_io_full_pct)},
    /* 0.8: gpu_tracker's split */
    PART(main, RT_RF_MAIN, MAIN),
    PART(descendants, RT_RF_DESCENDANTS, DESC),
    PART(combined, RT_RF_COMBINED, COMB),
    /* 0.9 */
    {ROW(process_rss_hwm_mib, "process_rss_hwm_mib", RT_COL_PROC_RSS_HWM_MIB), PROC(rss_hwm_mib, 0),
     FOLD(MAX, process_rss_hwm_mib), KEEP(EXACT)},
    {ROW(process_unreclaimable_peak_mib, "process_unreclaimable_peak_mib", RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB),
     FOLD(MAX, process_unreclaimable_peak_mib), KEEP(EXACT)},
    {ROW(process_gpu_vram_peak_mib, "process_gpu_vram_peak_mib", RT_COL_PROC_GPU_VRAM_PEAK_MIB),
     PROC(gpu_vram_peak_bytes, MIB), FOLD(MAX, process_gpu_vram_peak_mib), KEEP(EXACT)},
    {ROW(process_cancelled_write_bytes_total, "process_cancelled_write_bytes_total",
         RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL),
     PROC(cancelled_write_bytes_total, 0), FOLD(TOTAL, process_cancelled_write_bytes), KEEP(EXACT)},
    {ROW(process_alive, "process_alive", RT_COL_PROC_ALIVE), PROC(alive, 0)},
    {ROW(process_cgroup_exclusive, "process_cgroup_exclusive", RT_COL_PROC_CGROUP_EXCLUSIVE)},
    {ROW(cgroup_pids, "cgroup_pids", RT_COL_CGROUP_PIDS), GROUP(pids)},
    /* 0.15: energy */
    {ROW(energy_joules, "energy_joules", RT_COL_ENERGY_JOULES), FOLD(SUM, energy_joules), KEEP(EXACT)},
    {ROW(process_energy_joules, "process_energy_joules", RT_COL_PROC_ENERGY_JOULES), FOLD(SUM, process_energy_joules), KEEP(EXACT)},
    {ROW(idle_power_watts, "idle_power_watts", RT_COL_IDLE_POWER_WATTS), FOLD(MIN, idle_power_watts)},
    {ROW(gpu_power_throttled_secs, "gpu_power_throttled_secs", RT_COL_GPU_POWER_THROTTLED_SECS),
     FOLD(TOTAL, gpu_power_throttled_secs)},
    {ROW(gpu_thermal_throttled_secs, "gpu_thermal_throttled_secs", RT_COL_GPU_THERMAL_THROTTLED_SECS),
     FOLD(TOTAL, gpu_thermal_throttled_secs)},
    /* 0.16, 0.18 */
    {ROW(process_vms_mib, "process_vms_mib", RT_COL_PROC_VMS_MIB), PROC(vms_mib, 0), FOLD(MAX, process_vms_peak_mib), KEEP(EXACT)},
    {ROW(process_walk_age_secs, "process_walk_age_secs", RT_COL_PROC_WALK_AGE_SECS), PROC(walk_age_secs, 0),
     FOLD(MAX, process_walk_age_max_secs)},
    {ROW(process_rss_hwm_tree_mib, "process_rss_hwm_tree_mib", RT_COL_PROC_RSS_HWM_TREE_MIB),
     PROC(rss_hwm_tree_mib, 0), FOLD(MAX, process_rss_hwm_tree_mib), KEEP(EXACT)},
    {ROW(process_unreclaimable_unsure_mib, "process_unreclaimable_unsure_mib", RT_COL_PROC_UNRECLAIMABLE_UNSURE_MIB), KEEP(EXACT)},
    {ROW(pressure_group, "pressure_group", RT_COL_PRESSURE_GROUP)},
    /* 0.19: the GPUs' work (record.c: the tree's, else the machine's) */
    {ROW(gpu_sm_active_pct, "gpu_sm_active_pct", RT_COL_GPU_SM_ACTIVE_PCT), FOLD(RATE, gpu_sm_active_pct)},
    {ROW(gpu_sm_occupancy_pct, "gpu_sm_occupancy_pct", RT_COL_GPU_SM_OCCUPANCY_PCT), FOLD(RATE, gpu_sm_occupancy_pct)},
    {ROW(gpu_tensor_active_pct, "gpu_tensor_active_pct", RT_COL_GPU_TENSOR_ACTIVE_PCT),
     FOLD(RATE, gpu_tensor_active_pct)},
    {ROW(gpu_dram_active_pct, "gpu_dram_active_pct", RT_COL_GPU_DRAM_ACTIVE_PCT), FOLD(RATE, gpu_dram_active_pct)},
    {ROW(gpu_fp64_active_pct, "gpu_fp64_active_pct", RT_COL_GPU_FP64_ACTIVE_PCT), FOLD(RATE, gpu_fp64_active_pct)},
    {ROW(gpu_fp32_active_pct, "gpu_fp32_active_pct", RT_COL_GPU_FP32_ACTIVE_PCT), FOLD(RATE, gpu_fp32_active_pct)},
    {ROW(gpu_fp16_active_pct, "gpu_fp16_active_pct", RT_COL_GPU_FP16_ACTIVE_PCT), FOLD(RATE, gpu_fp16_active_pct)},
    {ROW(gpu_pcie_bytes_per_sec, "gpu_pcie_bytes_per_sec", RT_COL_GPU_PCIE_BYTES_PER_SEC),
     FOLD(RATE, gpu_pcie_bytes_per_sec)},
    {ROW(gpu_nvlink_bytes_per_sec, "gpu_nvlink_bytes_per_sec", RT_COL_GPU_NVLINK_BYTES_PER_SEC),
     FOLD(RATE, gpu_nvlink_bytes_per_sec)},
    {ROW(gpu_work_shared, "gpu_work_shared", RT_COL_GPU_WORK_SHARED), FOLD(MAX, gpu_work_shared)},
    {ROW(process_gpus_busy, "process_gpus_busy", RT_COL_PROC_GPUS_BUSY), PROC(gpu_count_busy, 0),
     FOLD(MAX, process_gpus_busy)},
    {ROW(process_gpu_vram_per_gpu_mib, "process_gpu_vram_per_gpu_mib", RT_COL_PROC_GPU_VRAM_PER_GPU_MIB),
     PROC(gpu_vram_per_gpu_max_bytes, MIB), FOLD(MAX, process_gpu_vram_per_gpu_peak_mib), KEEP(EXACT)},
    /* 0.20: the tasks' waits for a CPU (the CPU table's own demand, cores.c) */
    {ROW(process_cpu_wait_cores, "process_cpu_wait_cores", RT_COL_PROC_CPU_WAIT_CORES), PROC(cpu_wait_cores, 0)},
    /* 0.20: re-reads */
    {ROW(cgroup_memory_refault_mib, "cgroup_memory_refault_mib", RT_COL_CGROUP_MEMORY_REFAULT_MIB),
     GROUP(memory_refault_mib), FOLD(TOTAL, memory_refault_mib), KEEP(EXACT)},
    {ROW(process_exits_counted, "process_exits_counted", RT_COL_PROC_EXITS_COUNTED), PROC(exits_counted, 0),
     FOLD(MAX, process_exits_counted), KEEP(EXACT)},
    {ROW(process_unwaited_parents, "process_unwaited_parents", RT_COL_PROC_UNWAITED_PARENTS),
     PROC(unwaited_parents, 0), FOLD(MAX, process_unwaited_parents), KEEP(EXACT)},
    /* 0.21: the clocks (the sample's own; stats.c folds them into the summary's clock members) */
    {ROW(clock_step_secs, "clock_step_secs", RT_COL_CLOCK_STEP_SECS)},
    {ROW(sampling_gap_secs, "sampling_gap_secs", RT_COL_SAMPLING_GAP_SECS)},
};

const size_t rt_record_field_count = sizeof rt_record_fields / sizeof rt_record_fields[0];

/* The rows and rt_record's other members (the job's name, gpu and gpu_n, the phases, the energy
 * methods and the energy, the request, the member) are the whole struct: a new member of
 * rt_record is a new row (or, not a double, handled like gpu in record.c). No padding on the
 * platforms the library builds for. */
_Static_assert(sizeof rt_record_fields / sizeof rt_record_fields[0] * sizeof(double) + sizeof(const char *) +
                       sizeof(const rt_gpu *const *) + sizeof(size_t) + sizeof(const rt_phases *) +
                       2 * sizeof(const char *) + sizeof(const rt_energy *) + sizeof(const rt_request *) +
                       sizeof(const rt_member *) ==
                   sizeof(rt_record),
               "rt_record gained a member: give it a row in rt_record_fields[] (or handle it like gpu)");
