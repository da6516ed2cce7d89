/* schema.c - the sample's schema (schema.h): one table per public sample struct, and the public
 * listing of every figure's name, unit, type, version and help (rt_schema_field_*). Adding a
 * figure to a sample is its member in the header, its line here and what the sampler fills in:
 * the JSON line, the Prometheus families and the OTLP metrics follow from this line. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core.h"
#include "schema.h"

/* One field: F(struct, member, unit, since, JSON decimals, help, optional view settings). */
#define F(st, m, u, v, jd, h, ...)                                                                                     \
    {                                                                                                                  \
        .name = #m, .nlen = sizeof(#m) - 1, .type = RT_FIELD_TYPE_OF(((st *)0)->m), .off = offsetof(st, m),            \
        .size = sizeof(((st *)0)->m), .unit = u, .since = v, .jdec = jd, .help = h, __VA_ARGS__                        \
    }

/* Prometheus: a gauge or a counter at place s of its struct's families, named n, d decimals
 * (doubles shown as they are); GL: a gauge family of several members, this one's series
 * labelled k="val" (fh: the family's help, given on its first member). */
#define PG(s, n, d) .prom = {.name = "resource_tracker_" n, .seq = s, .dec = d}
#define PC(s, n, d) .prom = {.name = "resource_tracker_" n, .seq = s, .dec = d, .counter = 1}
#define GL(s, n, k, val, fh) .prom = {.name = "resource_tracker_" n, .seq = s, .label = k, .value = val, .help = fh}

/* A figure of an embedded rt_gpu_work (member base of st), named pre + its member's name. */
#define FW(st, base, pre, m, u, v, jd, h, ...)                                                                         \
    {                                                                                                                  \
        .name = pre #m, .nlen = sizeof(pre #m) - 1, .type = RT_FIELD_TYPE_OF(((st *)0)->base.m),                       \
        .off = offsetof(st, base.m), .size = sizeof(((st *)0)->base.m), .unit = u, .since = v, .jdec = jd, .help = h,  \
        __VA_ARGS__                                                                                                    \
    }

/* rt_gpu_work's figures (NVML GPM) in a table of st, its member base, named pre + the member,
 * since v; P(seq, family) each one's Prometheus gauge (P ignoring both: none). */
#define GPU_WORK_ROWS(st, base, pre, v, P, s0, fam)                                                                    \
    FW(st, base, pre, sm_active_pct, U_PCT, v, 2, "Time the SMs were busy (a warp resident), GPM's SM activity.",       \
       P(s0 + 0, fam "sm_active_ratio")),                                                                              \
    FW(st, base, pre, sm_occupancy_pct, U_PCT, v, 2, "Warps resident against the most the SMs hold (occupancy).",       \
       P(s0 + 1, fam "sm_occupancy_ratio")),                                                                           \
    FW(st, base, pre, tensor_active_pct, U_PCT, v, 2, "Time the tensor cores were busy, any kind.",                    \
       P(s0 + 2, fam "tensor_active_ratio")),                                                                          \
    FW(st, base, pre, tensor_hmma_active_pct, U_PCT, v, 2,                                                             \
       "Time the tensor cores did half-precision matrix work (fp16, bf16, tf32).",                                   \
       P(s0 + 3, fam "tensor_hmma_active_ratio")),                                                                     \
    FW(st, base, pre, tensor_imma_active_pct, U_PCT, v, 2, "Time the tensor cores did integer matrix work (int8).",     \
       P(s0 + 4, fam "tensor_imma_active_ratio")),                                                                     \
    FW(st, base, pre, tensor_dfma_active_pct, U_PCT, v, 2, "Time the tensor cores did double-precision matrix work.",   \
       P(s0 + 5, fam "tensor_dfma_active_ratio")),                                                                     \
    FW(st, base, pre, dram_active_pct, U_PCT, v, 2, "Device memory bandwidth used, as a share of its peak.",            \
       P(s0 + 6, fam "dram_active_ratio")),                                                                            \
    FW(st, base, pre, fp64_active_pct, U_PCT, v, 2, "Time the SMs did non-tensor FP64 math.",                           \
       P(s0 + 7, fam "fp64_active_ratio")),                                                                            \
    FW(st, base, pre, fp32_active_pct, U_PCT, v, 2, "Time the SMs did non-tensor FP32 math.",                           \
       P(s0 + 8, fam "fp32_active_ratio")),                                                                            \
    FW(st, base, pre, fp16_active_pct, U_PCT, v, 2, "Time the SMs did non-tensor FP16 math.",                           \
       P(s0 + 9, fam "fp16_active_ratio")),                                                                            \
    FW(st, base, pre, pcie_tx_bytes_per_sec, U_BYTES_S, v, 0, "PCIe traffic from the GPU per second.",                 \
       P(s0 + 10, fam "pcie_transmit_bytes_per_second")),                                                              \
    FW(st, base, pre, pcie_rx_bytes_per_sec, U_BYTES_S, v, 0, "PCIe traffic to the GPU per second.",                   \
       P(s0 + 11, fam "pcie_receive_bytes_per_second")),                                                               \
    FW(st, base, pre, nvlink_tx_bytes_per_sec, U_BYTES_S, v, 0, "NVLink traffic from the GPU per second, all links.",  \
       P(s0 + 12, fam "nvlink_transmit_bytes_per_second")),                                                            \
    FW(st, base, pre, nvlink_rx_bytes_per_sec, U_BYTES_S, v, 0, "NVLink traffic to the GPU per second, all links.",    \
       P(s0 + 13, fam "nvlink_receive_bytes_per_second"))

/* GPU_WORK_ROWS' P: a Prometheus gauge. */
#define WORK_PG(s, n) PG(s, n, 6)

/* OTLP: the metric named n (kind GAUGE, COUNTER or UPDOWN, unit u, description d) at place s of all
 * the OTLP metrics' members (export/otlp_json.c merges them with the metrics it makes by hand);
 * consecutive places with the same name make one metric, each member's points carrying ATTR. */
#define OT(s, k, n, u, d, ...) .otlp = {.name = n, .seq = s, .kind = RT_OTLP_##k, .unit = u, .desc = d, __VA_ARGS__}
#define ATTR(k, v) .key = k, .value = v

#define TABLE(var, label, arr) const rt_fstruct var = {label, arr, RT_ARRAY_LEN(arr)}

/* Doubles in seconds, ratios and cores go to Prometheus to the microsecond / 10^-6. */
enum { FINE = 6 };

/* ---- the machine -------------------------------------------------------------------------- */

static const rt_field sample_fields[] = {
    F(rt_sample, timestamp_secs, U_S, "0.1", 3, "Unix time of the sample these figures come from.",
      PG(0, "sample_timestamp_seconds", 3)),
    F(rt_sample, interval_secs, U_S, "0.1", 3, "Seconds the sample's interval lasted.",
      PG(1, "sample_interval_seconds", FINE)),
    F(rt_sample, disk_space_total_bytes, U_BYTES, "0.1", RT_NO_JSON,
      "Space of the filesystems on the physical disks, summed.", PG(2, "filesystem_size_bytes", 0)),
    F(rt_sample, disk_space_used_bytes, U_BYTES, "0.1", RT_NO_JSON,
      "Space in use on the filesystems on the physical disks, summed.", PG(3, "filesystem_used_bytes", 0),
      OT(13, UPDOWN, "system.filesystem.usage", "By", "Filesystem space of the disks' filesystems by state",
         ATTR("system.filesystem.state", "used"))),
    F(rt_sample, disk_space_free_bytes, U_BYTES, "0.1", RT_NO_JSON,
      "Space available to users on the filesystems on the physical disks, summed.", PG(4, "filesystem_free_bytes", 0),
      OT(14, UPDOWN, "system.filesystem.usage", "By", 0, ATTR("system.filesystem.state", "free"))),
    /* 0.20: the clocks (the JSON line's "clock" member, written by hand: only on a marked line) */
    F(rt_sample, clock_step_secs, U_S, "0.20", RT_NO_JSON,
      "The wall clock's step in the interval (its progress less the time that passed), from 1 s either way; else 0."),
    F(rt_sample, sampling_gap_secs, U_S, "0.20", RT_NO_JSON,
      "The time since the previous sample when it was a gap in the sampling; else 0."),
};

static const rt_field cpu_fields[] = {
    F(rt_cpu, utilization_pct, U_CORES, "0.1", 4,
      "Busy logical cores of the machine over the last interval (0 to the core count).",
      PG(0, "cpu_usage_cores", FINE)),
    F(rt_cpu, core_count, U_COUNT, "0.1", RT_NO_JSON, "Online logical cores of the machine.", PG(1, "cpu_cores", 0)),
    F(rt_cpu, utime_secs, U_S, "0.1", 2, "User and nice CPU seconds over all cores in the interval."),
    F(rt_cpu, stime_secs, U_S, "0.1", 2, "System CPU seconds over all cores in the interval."),
    F(rt_cpu, process_count, U_COUNT, "0.1", 0, "Runnable processes on the machine.", PG(2, "processes_running", 0),
      OT(3, UPDOWN, "system.process.count", "{process}", "Runnable processes", ATTR("process.status", "running"))),
    F(rt_cpu, process_cores_used, U_CORES, "0.1", 4, "The tracked tree's cores_used (NaN without a tree)."),
    F(rt_cpu, process_child_count, U_COUNT, "0.1", 0, "The tracked tree's child_count (null without a tree)."),
    F(rt_cpu, all_process_count, U_COUNT, "0.17", 0,
      "Every process on the machine (the numbered entries of /proc), as ps and the Python tracker count them."),
};

static const rt_field memory_fields[] = {
    F(rt_memory, total_mib, U_MIB, "0.1", 3, "Memory of the machine.", PG(7, "memory_total_bytes", 0),
      OT(8, UPDOWN, "system.memory.limit", "By", "Total memory")),
    F(rt_memory, free_mib, U_MIB, "0.1", 3, "Memory not in use at all.", GL(1, "memory_bytes", "state", "free", 0),
      OT(5, UPDOWN, "system.memory.usage", "By", 0, ATTR("system.memory.state", "free"))),
    F(rt_memory, available_mib, U_MIB, "0.1", 3, "Memory available to new work without swapping.",
      GL(2, "memory_bytes", "state", "available", 0)),
    F(rt_memory, used_mib, U_MIB, "0.1", 3, "Memory in use: total less available (MemAvailable), as procps 4's free and psutil.",
      GL(0, "memory_bytes", "state", "used",
         "Memory of the machine by state (used, free, available, buffers, cached, active, inactive)."),
      OT(4, UPDOWN, "system.memory.usage", "By", "Memory in use by state", ATTR("system.memory.state", "used"))),
    F(rt_memory, used_pct, U_PCT, "0.1", 2, "used_mib as a share of total_mib."),
    F(rt_memory, buffers_mib, U_MIB, "0.1", 3, "Block device buffers.", GL(3, "memory_bytes", "state", "buffers", 0),
      OT(7, UPDOWN, "system.memory.usage", "By", 0, ATTR("system.memory.state", "buffers"))),
    F(rt_memory, cached_mib, U_MIB, "0.1", 3, "Page cache and reclaimable slab.",
      GL(4, "memory_bytes", "state", "cached", 0),
      OT(6, UPDOWN, "system.memory.usage", "By", 0, ATTR("system.memory.state", "cached"))),
    F(rt_memory, active_mib, U_MIB, "0.1", 3, "Memory used recently.", GL(5, "memory_bytes", "state", "active", 0)),
    F(rt_memory, inactive_mib, U_MIB, "0.1", 3, "Memory not used recently.",
      GL(6, "memory_bytes", "state", "inactive", 0)),
    F(rt_memory, swap_total_mib, U_MIB, "0.1", 3, "Swap space of the machine.", PG(8, "swap_total_bytes", 0)),
    F(rt_memory, swap_used_mib, U_MIB, "0.1", 3, "Swap space in use.", PG(9, "swap_used_bytes", 0)),
    F(rt_memory, swap_used_pct, U_PCT, "0.1", 2, "swap_used_mib as a share of swap_total_mib."),
};

static const rt_field net_iface_fields[] = {
    F(rt_net_iface, interface, U_NONE, "0.1", 0, "The interface's name, e.g. eth0."),
    F(rt_net_iface, mac_address, U_NONE, "0.1", 0, "Its MAC address (null when not reported)."),
    F(rt_net_iface, driver, U_NONE, "0.1", 0, "Its kernel driver (null for a virtual interface without one)."),
    F(rt_net_iface, operstate, U_NONE, "0.1", 0, "up, down, unknown, ... (null when not reported)."),
    F(rt_net_iface, speed_mbps, U_MBIT_S, "0.1", 0, "The link's speed (null when it reports none)."),
    F(rt_net_iface, mtu, U_BYTES, "0.1", 0, "The interface's MTU."),
    F(rt_net_iface, rx_bytes_per_sec, U_BYTES_S, "0.1", 2, "Bytes received per second over the interval."),
    F(rt_net_iface, tx_bytes_per_sec, U_BYTES_S, "0.1", 2, "Bytes sent per second over the interval."),
    F(rt_net_iface, rx_bytes_total, U_BYTES, "0.1", 0, "Bytes received on the interface since boot.",
      PC(0, "network_receive_bytes", 0)),
    F(rt_net_iface, tx_bytes_total, U_BYTES, "0.1", 0, "Bytes sent on the interface since boot.",
      PC(1, "network_transmit_bytes", 0)),
    F(rt_net_iface, rx_bytes, U_BYTES, "0.1", RT_NO_JSON, "Bytes received in the interval."),
    F(rt_net_iface, tx_bytes, U_BYTES, "0.1", RT_NO_JSON, "Bytes sent in the interval."),
};

static const rt_field disk_fields[] = {
    F(rt_disk, device, U_NONE, "0.1", 0, "The disk's kernel name, e.g. nvme0n1."),
    F(rt_disk, model, U_NONE, "0.1", 0, "Its model (null when sysfs has none)."),
    F(rt_disk, vendor, U_NONE, "0.1", 0, "Its vendor."),
    F(rt_disk, serial, U_NONE, "0.1", 0, "Its serial number or WWID."),
    F(rt_disk, device_type, U_NONE, "0.1", 0, "nvme, ssd or hdd (null when unknown)."),
    F(rt_disk, capacity_bytes, U_BYTES, "0.1", 0, "Capacity of the disk.", PG(2, "disk_capacity_bytes", 0)),
    F(rt_disk, read_bytes_per_sec, U_BYTES_S, "0.1", 2, "Bytes read per second over the interval."),
    F(rt_disk, write_bytes_per_sec, U_BYTES_S, "0.1", 2, "Bytes written per second over the interval."),
    F(rt_disk, read_bytes_total, U_BYTES, "0.1", 0, "Bytes read from the disk since boot.",
      PC(0, "disk_read_bytes", 0)),
    F(rt_disk, write_bytes_total, U_BYTES, "0.1", 0, "Bytes written to the disk since boot.",
      PC(1, "disk_written_bytes", 0)),
    F(rt_disk, read_bytes, U_BYTES, "0.1", RT_NO_JSON, "Bytes read in the interval (null when unknown)."),
    F(rt_disk, write_bytes, U_BYTES, "0.1", RT_NO_JSON, "Bytes written in the interval (null when unknown)."),
    F(rt_disk, is_virtual, U_NONE, "0.17", 0,
      "1 for a virtual device (dm, md, zram), left out of the machine's I/O sums; 0 for a physical disk."),
};

static const rt_field mount_fields[] = {
    F(rt_mount, mount_point, U_NONE, "0.1", 0, "Where the filesystem is mounted."),
    F(rt_mount, filesystem, U_NONE, "0.1", 0, "Its type, e.g. ext4."),
    F(rt_mount, total_bytes, U_BYTES, "0.1", 0, "Its size (null when statvfs failed)."),
    F(rt_mount, used_bytes, U_BYTES, "0.1", 0, "Space in use."),
    F(rt_mount, available_bytes, U_BYTES, "0.1", 0, "Space available to users."),
    F(rt_mount, used_pct, U_PCT, "0.1", 2, "used / (used + available), as df computes it."),
};

static const rt_field gpu_fields[] = {
    F(rt_gpu, uuid, U_NONE, "0.1", 0, "The GPU's UUID (null when the driver has none)."),
    F(rt_gpu, name, U_NONE, "0.1", 0, "Its model, e.g. NVIDIA A100-SXM4-80GB."),
    F(rt_gpu, device_type, U_NONE, "0.1", 0, "GPU."),
    F(rt_gpu, host_id, U_NONE, "0.1", 0, "Its PCI address."),
    F(rt_gpu, utilization_pct, U_PCT, "0.1", 2, "Busy share of the GPU (0 to 1).", PG(0, "gpu_utilization_ratio", 0)),
    F(rt_gpu, vram_total_bytes, U_BYTES, "0.1", 0, "GPU memory.", PG(2, "gpu_memory_total_bytes", 0)),
    F(rt_gpu, vram_used_bytes, U_BYTES, "0.1", 0, "GPU memory in use.", PG(1, "gpu_memory_used_bytes", 0)),
    F(rt_gpu, vram_used_pct, U_PCT, "0.1", 2, "vram_used_bytes as a share of vram_total_bytes."),
    F(rt_gpu, temperature_celsius, U_CELSIUS, "0.1", 1, "Temperature of the GPU.", PG(3, "gpu_temperature_celsius", 3)),
    F(rt_gpu, power_watts, U_W, "0.1", 3, "Power the GPU draws.", PG(4, "gpu_power_watts", 3)),
    F(rt_gpu, frequency_mhz, U_MHZ, "0.1", 1, "Its graphics clock."),
    F(rt_gpu, core_count, U_COUNT, "0.1", 0, "Its cores (null when not reported)."),
    F(rt_gpu, power_throttled_secs, U_S, "0.15", 3,
      "Seconds since tracking began that its clocks were held down by its power cap (NVML's power violation "
      "counter, else the power throttle reasons times the interval; null on AMD, Intel and old drivers).",
      PC(5, "gpu_power_throttled_seconds", FINE)),
    F(rt_gpu, thermal_throttled_secs, U_S, "0.15", 3,
      "Seconds since tracking began that its clocks were held down by heat (NVML's thermal violation counter, "
      "else the thermal throttle reasons times the interval; null on AMD, Intel and old drivers).",
      PC(6, "gpu_thermal_throttled_seconds", FINE)),
    GPU_WORK_ROWS(rt_gpu, work, "", "0.19", WORK_PG, 7, "gpu_"),
    F(rt_gpu, vram_reserved_bytes, U_BYTES, "0.19", 0,
      "GPU memory NVML reserves for the driver and firmware, apart from vram_used_bytes as nvidia-smi shows it "
      "(null where the driver has no v2 memory call: vram_used_bytes then counts it).",
      PG(21, "gpu_memory_reserved_bytes", 0)),
};

/* A MIG GPU instance (the "mig" array of a GPU in MIG mode). */
static const rt_field gpu_mig_fields[] = {
    F(rt_gpu_mig, gpu_instance_id, U_COUNT, "0.19", 0, "NVML's GPU instance id."),
    F(rt_gpu_mig, uuid, U_NONE, "0.19", 0, "Its MIG device's UUID (MIG-...)."),
    GPU_WORK_ROWS(rt_gpu_mig, work, "", "0.19", WORK_PG, 0, "gpu_mig_"),
};

static const rt_field pressure_fields[] = {
    F(rt_pressure, some_avg10, U_PCT, "0.6", 2, "The kernel's 10-second average of time some tasks waited."),
    F(rt_pressure, full_avg10, U_PCT, "0.6", 2, "The kernel's 10-second average of time all non-idle tasks waited."),
    F(rt_pressure, some_pct, U_PCT, "0.6", 2, "Time some tasks waited, as a share of the interval."),
    F(rt_pressure, full_pct, U_PCT, "0.6", 2, "Time all non-idle tasks waited, as a share of the interval."),
    F(rt_pressure, some_total_usec, U_USEC, "0.6", 0, "The kernel's total of time some tasks waited."),
    F(rt_pressure, full_total_usec, U_USEC, "0.6", 0, "The kernel's total of time all non-idle tasks waited."),
};

/* ---- the tracked tree and its group ------------------------------------------------------- */

static const rt_field cgroup_fields[] = {
    F(rt_cgroup, path, U_NONE, "0.6", 0, "The group's path in its hierarchy."),
    F(rt_cgroup, version, U_NONE, "0.6", 0, "v2, v1 or hybrid."),
    F(rt_cgroup, own, U_NONE, "0.6", 0, "Whether the tracker made the group for the command."),
    F(rt_cgroup, exclusive, U_NONE, "0.6", 0, "Whether every process in the group belongs to the tracked tree."),
    F(rt_cgroup, cpu_secs_total, U_S, "0.6", 3,
      "CPU seconds of everything that ran in the control group since tracking began.",
      PC(0, "cgroup_cpu_seconds", FINE),
      OT(37, COUNTER, "resource_tracker.cgroup.cpu.time", "s", "CPU seconds of the cgroup since tracking began")),
    F(rt_cgroup, memory_mib, U_MIB, "0.6", 3, "Memory charged to the group (page cache included).",
      PG(1, "cgroup_memory_bytes", 0),
      OT(38, UPDOWN, "resource_tracker.cgroup.memory.usage", "By", "Memory charged to the cgroup")),
    F(rt_cgroup, memory_peak_mib, U_MIB, "0.6", 3, "The kernel's peak memory charge of the group.",
      PG(2, "cgroup_memory_peak_bytes", 0),
      OT(39, GAUGE, "resource_tracker.cgroup.memory.peak", "By", "The cgroup's peak memory charge")),
    F(rt_cgroup, pids, U_COUNT, "0.6", 0, "Tasks in the group.", PG(3, "cgroup_pids", 0),
      OT(43, UPDOWN, "resource_tracker.cgroup.pids", "{process}", "Tasks in the cgroup")),
    F(rt_cgroup, pids_peak, U_COUNT, "0.6", 0, "The most tasks in the group.", PG(4, "cgroup_pids_peak", 0)),
    F(rt_cgroup, read_bytes_total, U_BYTES, "0.6", 0, "Bytes the group read from storage.",
      PC(5, "cgroup_read_bytes", 0)),
    F(rt_cgroup, write_bytes_total, U_BYTES, "0.6", 0, "Bytes the group wrote to storage.",
      PC(6, "cgroup_written_bytes", 0)),
    F(rt_cgroup, cpu_quota_cores, U_CORES, "0.6", 4,
      "The group's CPU limit in cores (quota / period), the tightest on its path.",
      PG(7, "cgroup_cpu_quota_cores", FINE),
      OT(41, GAUGE, "resource_tracker.cgroup.cpu.quota", "{cpu}", "The cgroup's CPU quota in cores")),
    F(rt_cgroup, cpu_period_secs, U_S, "0.6", 3, "The period of the CPU quota.",
      PG(8, "cgroup_cpu_period_seconds", FINE)),
    F(rt_cgroup, memory_limit_mib, U_MIB, "0.6", 3, "The group's memory limit.", PG(9, "cgroup_memory_limit_bytes", 0),
      OT(40, UPDOWN, "resource_tracker.cgroup.memory.limit", "By", "The cgroup's memory limit")),
    F(rt_cgroup, memory_high_mib, U_MIB, "0.6", 3, "The group's memory.high throttle limit.",
      PG(10, "cgroup_memory_high_bytes", 0)),
    F(rt_cgroup, pids_limit, U_COUNT, "0.6", 0, "The group's task limit.", PG(11, "cgroup_pids_limit", 0)),
    F(rt_cgroup, cpu_periods, U_COUNT, "0.6", 0, "CPU quota periods elapsed.", PC(12, "cgroup_cpu_periods", 0)),
    F(rt_cgroup, cpu_throttled_periods, U_COUNT, "0.6", 0, "CPU quota periods in which the group was throttled.",
      PC(13, "cgroup_cpu_throttled_periods", 0)),
    F(rt_cgroup, cpu_throttled_secs, U_S, "0.6", 3, "Seconds the group's tasks were throttled by the CPU quota.",
      PC(14, "cgroup_cpu_throttled_seconds", FINE),
      OT(42, COUNTER, "resource_tracker.cgroup.cpu.throttled_time", "s",
         "Seconds the cgroup was throttled since tracking began")),
    F(rt_cgroup, cpu_throttled_pct, U_PCT, "0.6", 2, "Throttled periods in the interval, as a share of its periods."),
    F(rt_cgroup, oom_kills, U_COUNT, "0.6", 0, "Tasks of the group the OOM killer killed.",
      PC(15, "cgroup_oom_kills", 0),
      OT(44, COUNTER, "resource_tracker.cgroup.oom_kills", "{kill}",
         "Tasks the OOM killer killed in the cgroup since tracking began")),
    F(rt_cgroup, memory_max_events, U_COUNT, "0.6", 0, "Times the group hit its memory limit.",
      PC(16, "cgroup_memory_max_events", 0)),
    F(rt_cgroup, memory_reclaimable_mib, U_MIB, "0.9", 3,
      "Of the charge now, what the kernel can reclaim: page cache and reclaimable slab."),
    F(rt_cgroup, memory_unreclaimable_peak_mib, U_MIB, "0.9", 3,
      "The most of the charge the kernel could not reclaim since tracking began."),
    F(rt_cgroup, memory_anon_mib, U_MIB, "0.18", 3,
      "Anonymous memory of the group now (memory.stat anon, total_rss): heaps and stacks.",
      PG(17, "cgroup_memory_anon_bytes", 0)),
    F(rt_cgroup, memory_file_mib, U_MIB, "0.18", 3,
      "Page cache of the group now (memory.stat file, total_cache), shared memory included.",
      PG(18, "cgroup_memory_file_bytes", 0)),
    F(rt_cgroup, memory_shmem_mib, U_MIB, "0.18", 3,
      "Of the page cache, shared memory of the group now (memory.stat shmem): tmpfs, /dev/shm, memfd.",
      PG(19, "cgroup_memory_shmem_bytes", 0)),
    F(rt_cgroup, memory_unreclaimable_unsure_mib, U_MIB, "0.18", 3,
      "Of the unreclaimable peak, page cache taken as not there at a peak it rose with within one reading "
      "(the safe side); 0 when the peak is exact."),
    F(rt_cgroup, memory_refault_mib, U_MIB, "0.20", 3,
      "File data the group read back after its memory evicted it (memory.stat workingset_refault_file), since "
      "tracking began.",
      PC(20, "cgroup_memory_refault_bytes", 0)),
};

static const rt_field part_fields[] = {
    F(rt_process_part, total_rss_mib, U_MIB, "0.8", 3,
      "Resident memory of the part (main: the tracked root; descendants: the rest of the tree; combined: both): "
      "private plus shared.",
      PG(0, "process_part_rss_bytes", 0),
      OT(31, UPDOWN, "resource_tracker.process.part.memory.usage", "By",
         "Resident memory of a part of the tree (main: its root; descendants: the rest; combined: both)")),
    F(rt_process_part, private_rss_mib, U_MIB, "0.8", 3,
      "Private resident memory of the part (private clean and dirty pages, from smaps_rollup).",
      PG(1, "process_part_private_rss_bytes", 0),
      OT(32, UPDOWN, "resource_tracker.process.part.memory.private", "By",
         "Private resident memory of a part of the tree")),
    F(rt_process_part, shared_rss_mib, U_MIB, "0.8", 3,
      "Shared resident memory of the part, counted once as far as the rollups tell.",
      PG(2, "process_part_shared_rss_bytes", 0),
      OT(33, UPDOWN, "resource_tracker.process.part.memory.shared", "By",
         "Shared resident memory of a part, counted once")),
    F(rt_process_part, cores_used, U_CORES, "0.8", 4,
      "The part's share of the tree's CPU seconds per second over the last interval.",
      PG(3, "process_part_cpu_usage_cores", FINE),
      OT(34, GAUGE, "resource_tracker.process.part.cpu.usage", "{cpu}",
         "A part's share of the tree's cores in the interval")),
    F(rt_process_part, thread_count, U_COUNT, "0.8", 0, "Threads of the part's live processes.",
      PG(4, "process_part_threads", 0),
      OT(35, UPDOWN, "resource_tracker.process.part.thread.count", "{thread}", "Threads of a part of the tree")),
    F(rt_process_part, gpu_vram_used_bytes, U_BYTES, "0.8", 0, "GPU memory the part uses.",
      PG(5, "process_part_gpu_memory_used_bytes", 0),
      OT(36, UPDOWN, "resource_tracker.process.part.gpu.memory.usage", "By", "GPU memory of a part of the tree")),
};

static const rt_field process_fields[] = {
    F(rt_process, pid, U_PID, "0.1", 0, "The tracked root's process id."),
    F(rt_process, alive, U_NONE, "0.1", 0, "1 while the tracked root runs, 0 after it exited.",
      PG(9, "process_alive", 0)),
    F(rt_process, child_count, U_COUNT, "0.1", 0, "Live descendants of the tracked root.", PG(8, "process_children", 0),
      OT(28, UPDOWN, "resource_tracker.process.children", "{process}", "Live descendants of the tree's root")),
    F(rt_process, thread_count, U_COUNT, "0.1", 0, "Threads of the tree's live processes.", PG(7, "process_threads", 0),
      OT(21, UPDOWN, "process.thread.count", "{thread}", "Threads of the tree")),
    F(rt_process, cores_used, U_CORES, "0.1", 4, "CPU seconds per second of the tracked tree over the last interval.",
      PG(1, "process_cpu_usage_cores", FINE)),
    F(rt_process, utime_secs, U_S, "0.1", 3, "User CPU seconds of the tree in the interval."),
    F(rt_process, stime_secs, U_S, "0.1", 3, "System CPU seconds of the tree in the interval."),
    F(rt_process, cpu_secs_total, U_S, "0.1", 3,
      "CPU seconds (user and system) of the tracked process tree since tracking began.",
      PC(0, "process_cpu_seconds", FINE),
      OT(18, COUNTER, "process.cpu.time", "s", "CPU seconds of the tracked tree since tracking began")),
    F(rt_process, pss_mib, U_MIB, "0.1", 3, "Proportional set size of the tree's live processes.",
      PG(3, "process_pss_bytes", 0),
      OT(24, UPDOWN, "resource_tracker.process.memory.pss", "By", "Proportional set size of the tree")),
    F(rt_process, rss_mib, U_MIB, "0.1", 3, "Resident memory of the tree's live processes.",
      PG(2, "process_rss_bytes", 0), OT(20, UPDOWN, "process.memory.usage", "By", "Resident memory of the tree")),
    F(rt_process, rss_peak_mib, U_MIB, "0.2", 3, "The highest resident memory of the tree.",
      PG(5, "process_rss_peak_bytes", 0),
      OT(26, GAUGE, "resource_tracker.process.memory.rss_peak", "By", "The tree's highest resident memory so far")),
    F(rt_process, swap_mib, U_MIB, "0.1", 3, "Swapped-out memory of the tree's live processes.",
      PG(4, "process_swap_bytes", 0),
      OT(25, UPDOWN, "resource_tracker.process.memory.swap", "By", "Swapped-out memory of the tree")),
    F(rt_process, read_bytes_per_sec, U_BYTES_S, "0.1", 2, "Bytes the tree read from storage per second."),
    F(rt_process, write_bytes_per_sec, U_BYTES_S, "0.1", 2, "Bytes the tree wrote to storage per second."),
    F(rt_process, read_bytes_total, U_BYTES, "0.1", 0, "Bytes the tree read from storage since tracking began.",
      PC(10, "process_read_bytes", 0),
      OT(22, COUNTER, "process.disk.io", "By", "Storage bytes of the tree since tracking began",
         ATTR("disk.io.direction", "read"))),
    F(rt_process, write_bytes_total, U_BYTES, "0.1", 0, "Bytes the tree wrote to storage since tracking began.",
      PC(11, "process_written_bytes", 0),
      OT(23, COUNTER, "process.disk.io", "By", 0, ATTR("disk.io.direction", "write"))),
    F(rt_process, cancelled_write_bytes_total, U_BYTES, "0.2", 0,
      "Of the bytes written, those whose writeback was cancelled (never reached storage).",
      PC(12, "process_cancelled_written_bytes", 0)),
    F(rt_process, gpu_utilization_pct, U_PCT, "0.1", 2,
      "GPU busy share of the tree (0 to 1 per GPU, summed over GPUs).", PG(13, "process_gpu_utilization_ratio", 0),
      OT(29, GAUGE, "resource_tracker.process.gpu.utilization", "1", "Busy GPUs of the tree")),
    F(rt_process, gpu_vram_used_bytes, U_BYTES, "0.1", 0, "GPU memory the tree uses.",
      PG(14, "process_gpu_memory_used_bytes", 0),
      OT(30, UPDOWN, "resource_tracker.process.gpu.memory.usage", "By", "GPU memory of the tree")),
    F(rt_process, gpu_count_used, U_COUNT, "0.1", 0, "GPUs the tree uses.", PG(15, "process_gpus_used", 0)),
    F(rt_process, memory_peak_mib, U_MIB, "0.6", 3, "The kernel's peak memory charge of the job's control group.",
      PG(6, "process_memory_peak_bytes", 0),
      OT(27, GAUGE, "resource_tracker.process.memory.peak", "By",
         "The kernel's peak memory charge of the job's cgroup")),
    F(rt_process, rss_hwm_mib, U_MIB, "0.9", 3,
      "The highest peak RSS of any one process of the tree, the kernel's own high-water mark."),
    F(rt_process, gpu_vram_peak_bytes, U_BYTES, "0.9", 0,
      "The tree's VRAM peak as NVML's accounting counts it (null where accounting is off)."),
    F(rt_process, unread_count, U_COUNT, "0.9", 0,
      "Processes the last walk found in the tree but could not open (out of file descriptors, or refused): "
      "the tree's figures are lower bounds while it is above 0.",
      PG(16, "process_unread", 0)),
    F(rt_process, vms_mib, U_MIB, "0.16", 3,
      "Virtual memory of the tree's live processes summed (VmSize): what Snakemake's max_vms and Nextflow's "
      "vmem count."),
    F(rt_process, walk_age_secs, U_S, "0.18", 3,
      "Seconds since the walk over the tree's processes that gave its PSS, RSS, counts, parts and GPU share: 0 "
      "when this sample walked (in the job's own control group the walk keeps its own cadence; CPU, I/O and the "
      "group's memory are read every sample).",
      PG(17, "process_walk_age_seconds", 3)),
    F(rt_process, walk_period_secs, U_S, "0.18", 3,
      "The cadence the walk keeps now: the oldest the walked figures get before the next walk.",
      PG(18, "process_walk_period_seconds", 3)),
    F(rt_process, rss_hwm_tree_mib, U_MIB, "0.18", 3,
      "The most the processes alive at one walk may have held at once as their own high-water marks tell: the "
      "tree's RSS then (shared pages once) plus what each process's VmHWM stood above its RSS, as if all peaked "
      "together (the safe side where no control group counts the job's memory); as root plus the peaks of the "
      "processes that ended since the walk before (the kernel's exit records), and what the job holds in tmpfs "
      "mounts of its own and in /dev/shm."),
    GPU_WORK_ROWS(rt_process, gpu_work, "gpu_", "0.19", WORK_PG, 19, "process_gpu_"),
    F(rt_process, gpu_work_scope, U_NONE, "0.19", 0,
      "job: the gpu_* work figures are the job's (its processes were the only ones on its GPUs); device: other "
      "processes shared those GPUs, the figures are the devices'; null: no GPU gave them."),
    F(rt_process, gpu_count_busy, U_COUNT, "0.19", 0, "GPUs the tree kept busy in the interval (its utilization above 0).",
      PG(33, "process_gpus_busy", 0)),
    F(rt_process, gpu_vram_per_gpu_max_bytes, U_BYTES, "0.19", 0, "The most GPU memory the tree holds on one GPU.",
      PG(34, "process_gpu_memory_per_gpu_max_bytes", 0)),
    F(rt_process, cpu_wait_cores, U_CORES, "0.20", 4,
      "The tree's tasks waiting for a CPU, on average over the interval: the seconds they were runnable but not "
      "running (schedstat's run delay) per second, read from each process's main thread at each walk and scaled "
      "to the tree's CPU time. cores_used + cpu_wait_cores is the job's own demand for cores.",
      PG(35, "process_cpu_wait_cores", 4)),
    F(rt_process, exits_counted, U_COUNT, "0.20", 0,
      "The tree's processes whose end the kernel's exit records (taskstats, as root) told so far, each counted at "
      "its peak in rss_hwm_tree_mib, those born and gone between two walks too; null where the tracker could not "
      "listen to them."),
    F(rt_process, unwaited_parents, U_COUNT, "0.20", 0,
      "The tree's processes seen so far ignoring SIGCHLD: the kernel reaps any children of theirs without a wait. "
      "As root the kernel's exit records count those children's CPU; otherwise a child born and gone between two "
      "walks is missing from it, a lower bound."),
    F(rt_process, read_bytes, U_BYTES, "0.1", RT_NO_JSON, "Bytes the tree read from storage in the interval."),
    F(rt_process, write_bytes, U_BYTES, "0.1", RT_NO_JSON, "Bytes the tree wrote to storage in the interval."),
};

/* ---- energy ----------------------------------------------------------------------- */

static const rt_field energy_domain_fields[] = {
    F(rt_energy_domain, name, U_NONE, "0.15", 0,
      "The domain's name, unique in the sample: package-0, core-0, uncore-0, dram-0, psys, platform-0, gpu-0, cpu."),
    F(rt_energy_domain, kind, U_NONE, "0.15", 0, "package, core, uncore, dram, psys, platform, gpu or cpu."),
    F(rt_energy_domain, source, U_NONE, "0.15", 0, "intel-rapl, amd-rapl, perf, hwmon, nvml or model."),
    F(rt_energy_domain, method, U_NONE, "0.15", 0,
      "measured (a hardware counter), sampled (power times time) or estimated (a model)."),
    F(rt_energy_domain, device, U_NONE, "0.15", 0, "A gpu domain's GPU: its uuid, else its PCI address (null for others)."),
    F(rt_energy_domain, in_total, U_NONE, "0.15", 0, "Whether the domain is counted in the machine's energy."),
    F(rt_energy_domain, energy_joules, U_J, "0.15", 6,
      "Energy of the domain in the interval (null when not read this time)."),
    F(rt_energy_domain, energy_joules_total, U_J, "0.15", 6, "Energy of the domain since tracking began."),
    F(rt_energy_domain, power_watts, U_W, "0.15", 3, "Mean power of the domain over the interval."),
    F(rt_energy_domain, process_share, U_NONE, "0.15", 4,
      "The tracked tree's share of the domain's energy in the interval, 0 to 1 (null without a tree)."),
    F(rt_energy_domain, process_energy_joules, U_J, "0.15", 6, "The tracked tree's part of the interval's energy."),
    F(rt_energy_domain, process_energy_joules_total, U_J, "0.15", 6,
      "The tracked tree's part of the domain's energy since tracking began."),
};

static const rt_field energy_fields[] = {
    F(rt_energy, energy_joules, U_J, "0.15", 6,
      "Energy of the machine in the interval: a platform meter, else its packages, DRAM and GPUs summed."),
    F(rt_energy, energy_joules_total, U_J, "0.15", 6, "Energy of the machine since tracking began."),
    F(rt_energy, power_watts, U_W, "0.15", 3, "Mean power of the machine over the interval."),
    F(rt_energy, method, U_NONE, "0.15", 0,
      "The least exact method of the domains summed: measured, sampled or estimated (null: no figure)."),
    F(rt_energy, process_energy_joules, U_J, "0.15", 6,
      "The tracked tree's share of the machine's energy in the interval (null without a tree)."),
    F(rt_energy, process_energy_joules_total, U_J, "0.15", 6, "The tracked tree's energy since tracking began."),
    F(rt_energy, process_power_watts, U_W, "0.15", 3, "The tracked tree's mean power over the interval."),
    F(rt_energy, process_method, U_NONE, "0.15", 0, "The least exact method of the tree's figures."),
    F(rt_energy, idle_power_watts, U_W, "0.15", 3,
      "The machine's floor: the least power of an interval so far (the model's idle when estimated)."),
    F(rt_energy, model, U_NONE, "0.15", 0, "The estimate's model in words (null when nothing is estimated)."),
    F(rt_energy, missing, U_NONE, "0.15", 0,
      "What could not be read and how to grant it (null when nothing is missing)."),
};

/* ---- what the job was given ---------------------------------------------------------
 * The JSON line writes it by hand (a figure is null when its *_from is); listed for its names. */

static const rt_field request_fields[] = {
    F(rt_request, place, U_NONE, "0.16", 0, "Where the job runs: slurm, kubernetes or github-actions (null: none)."),
    F(rt_request, cpu_cores, U_CORES, "0.16", 4, "Cores the job was given (null: not said)."),
    F(rt_request, memory_mib, U_MIB, "0.16", 3, "Memory the job was given (null: not said)."),
    F(rt_request, gpus, U_COUNT, "0.16", 0, "GPUs the job was given (null: not said)."),
    F(rt_request, time_limit_secs, U_S, "0.16", 3, "The job's wall-time limit (null: none known)."),
    F(rt_request, job_start_secs, U_S, "0.16", 3, "Unix time the job began, which the time limit counts from."),
    F(rt_request, cpu_from, U_NONE, "0.16", 0, "What said the cores: a variable's name, a command, runner."),
    F(rt_request, memory_from, U_NONE, "0.16", 0, "What said the memory."),
    F(rt_request, gpus_from, U_NONE, "0.16", 0, "What said the GPUs."),
    F(rt_request, time_limit_from, U_NONE, "0.16", 0, "What said the time limit: scontrol, squeue or a variable."),
};

/* ---- host and cloud (resource-tracker info) ----------------------------------------------- */

static const rt_field host_fields[] = {
    F(rt_host, hostname, U_NONE, "0.1", 0, "The host's name."),
    F(rt_host, host_id, U_NONE, "0.1", 0, "/etc/machine-id."),
    F(rt_host, ip, U_NONE, "0.1", 0, "The address of the interface of the default route."),
    F(rt_host, vcpus, U_COUNT, "0.1", 0, "Online logical CPUs."),
    F(rt_host, cpu_model, U_NONE, "0.1", 0, "The CPU's model."),
    F(rt_host, memory_mib, U_MIB, "0.1", 3, "Memory of the machine."),
    F(rt_host, gpu_model, U_NONE, "0.1", 0, "The GPUs' name (null without)."),
    F(rt_host, gpu_count, U_COUNT, "0.1", 0, "GPUs of the machine."),
    F(rt_host, gpu_memory_mib, U_MIB, "0.1", 3, "VRAM over all GPUs."),
    F(rt_host, storage_gb, U_GB, "0.1", 3, "Capacity of the physical disks, in 10^9 bytes."),
    F(rt_host, kernel, U_NONE, "0.1", 0, "The kernel's release."),
    F(rt_host, os, U_NONE, "0.1", 0, "The operating system's name."),
    F(rt_host, allocation, U_NONE, "0.9", 0, "dedicated or shared to the tracked job (null when not known)."),
};

static const rt_field cloud_fields[] = {
    F(rt_cloud, vendor_id, U_NONE, "0.1", 0, "aws, gcp, azure, hcloud, upcloud, alicloud, ovh or vultr."),
    F(rt_cloud, account_id, U_NONE, "0.1", 0, "The cloud account."),
    F(rt_cloud, region_id, U_NONE, "0.1", 0, "The region."),
    F(rt_cloud, zone_id, U_NONE, "0.1", 0, "The zone."),
    F(rt_cloud, instance_type, U_NONE, "0.1", 0, "The instance type."),
    F(rt_cloud, discovery_secs, U_S, "0.1", 3, "How long discovery took."),
};

TABLE(rt_schema_sample, "sample", sample_fields);
TABLE(rt_schema_cpu, "cpu", cpu_fields);
TABLE(rt_schema_memory, "memory", memory_fields);
TABLE(rt_schema_net_iface, "net_iface", net_iface_fields);
TABLE(rt_schema_disk, "disk", disk_fields);
TABLE(rt_schema_mount, "mount", mount_fields);
TABLE(rt_schema_gpu, "gpu", gpu_fields);
TABLE(rt_schema_pressure, "pressure", pressure_fields);
TABLE(rt_schema_cgroup, "cgroup", cgroup_fields);
TABLE(rt_schema_process, "process", process_fields);
TABLE(rt_schema_part, "process_part", part_fields);
TABLE(rt_schema_host, "host", host_fields);
TABLE(rt_schema_cloud, "cloud", cloud_fields);
TABLE(rt_schema_energy, "energy", energy_fields);
TABLE(rt_schema_energy_domain, "energy_domain", energy_domain_fields);
TABLE(rt_schema_request, "request", request_fields);

static const rt_field gpu_use_fields[] = {
    F(rt_gpu_use, utilization_pct, U_PCT, "0.17", 2,
      "Percent of one GPU the processes kept busy, summed over the GPUs (NVIDIA: their SM samples; AMD, Intel: the card's)."),
    F(rt_gpu_use, vram_used_bytes, U_BYTES, "0.17", 0, "VRAM the processes hold (AMD, Intel: the card's in use)."),
    F(rt_gpu_use, gpu_count_used, U_COUNT, "0.17", 0, "GPUs with a process on them, or busy."),
};
TABLE(rt_schema_gpu_use, "gpu_use", gpu_use_fields);
TABLE(rt_schema_gpu_mig, "gpu_mig", gpu_mig_fields);

size_t rt_schema_prom_order(const rt_fstruct *st, size_t order[RT_SCHEMA_MAX_FIELDS])
{
    size_t k = 0;
    for (size_t i = 0; i < st->n && i < RT_SCHEMA_MAX_FIELDS; i++) {
        int s = st->f[i].prom.name ? st->f[i].prom.seq : -1;
        if (s >= 0 && s < RT_SCHEMA_MAX_FIELDS) {
            order[s] = i;
            k++;
        }
    }
    return k; /* seq runs 0..k-1 in every table (test_schema holds it so) */
}

const rt_field *rt_schema_at(const rt_fstruct *st, size_t off)
{
    for (size_t i = 0; st && i < st->n; i++)
        if (st->f[i].off == off)
            return &st->f[i];
    return NULL;
}

/* ---- the public listing ------------------------------------------------------------------- */

static const rt_fstruct *const listed[] = {
    &rt_schema_sample, &rt_schema_cpu,  &rt_schema_memory,   &rt_schema_net_iface, &rt_schema_disk,
    &rt_schema_mount,  &rt_schema_gpu,  &rt_schema_pressure, &rt_schema_cgroup,    &rt_schema_process,
    &rt_schema_part,   &rt_schema_host, &rt_schema_cloud,    &rt_schema_energy,    &rt_schema_energy_domain,
    &rt_schema_request, &rt_schema_gpu_use, &rt_schema_gpu_mig,
};

/* Field i of the listing, with its struct in *st; NULL past the last. */
static const rt_field *listed_field(size_t i, const rt_fstruct **st)
{
    for (size_t s = 0; s < RT_ARRAY_LEN(listed); s++) {
        if (i < listed[s]->n) {
            *st = listed[s];
            return &listed[s]->f[i];
        }
        i -= listed[s]->n;
    }
    return NULL;
}

size_t rt_schema_field_count(void)
{
    size_t n = 0;
    for (size_t s = 0; s < RT_ARRAY_LEN(listed); s++)
        n += listed[s]->n;
    return n;
}

const char *rt_schema_field_struct(size_t i)
{
    const rt_fstruct *st;
    return listed_field(i, &st) ? st->name : NULL;
}

const char *rt_schema_field_name(size_t i)
{
    const rt_fstruct *st;
    const rt_field *f = listed_field(i, &st);
    return f ? f->name : NULL;
}

const char *rt_schema_field_unit(size_t i)
{
    const rt_fstruct *st;
    const rt_field *f = listed_field(i, &st);
    return f ? rt_unit_name(f->unit) : NULL;
}

const char *rt_unit_name(rt_unit u)
{
    static const char *const names[] = {
        [U_NONE] = "",           [U_MIB] = "MiB", [U_BYTES] = "bytes", [U_BYTES_S] = "bytes/s", [U_S] = "s",
        [U_CORES] = "cores",     [U_PCT] = "%",   [U_USEC] = "usec",   [U_COUNT] = "count",     [U_PID] = "pid",
        [U_CELSIUS] = "Celsius", [U_W] = "W",     [U_MHZ] = "MHz",     [U_MBIT_S] = "Mbit/s",   [U_GB] = "GB",
        [U_J] = "J",
    };
    return (unsigned)u < RT_ARRAY_LEN(names) ? names[u] : NULL;
}

int rt_schema_field_type(size_t i)
{
    const rt_fstruct *st;
    const rt_field *f = listed_field(i, &st);
    return f ? (int)f->type : -1;
}

const char *rt_schema_field_since(size_t i)
{
    const rt_fstruct *st;
    const rt_field *f = listed_field(i, &st);
    return f ? f->since : NULL;
}

const char *rt_schema_field_help(size_t i)
{
    const rt_fstruct *st;
    const rt_field *f = listed_field(i, &st);
    return f ? f->help : NULL;
}
