/* schema_rs.c - the Rust tool's view of the schema (schema.h): for each object of the Rust
 * resource-tracker 0.1.14's sample, its members in serde_json's order, each naming the figure
 * of our tables it shows, its type there and the conversion of its unit. sink/json_rs.c walks
 * these tables; nothing of the Rust line's names is written anywhere else. */
#include <stddef.h>

#include "core.h"
#include "schema.h"

/* A member showing the figure m of our struct type ty (schema table t), written as wt. */
#define RS(key, t, ty, m, wt, cv, opt)                                                                                 \
    {                                                                                                                  \
        .name = key, .st = &rt_schema_##t, .off = offsetof(ty, m), .type = RS_##wt, .conv = RS_##cv, .option = opt     \
    }
/* The same, with the figure m2 of struct ty2 (schema table t2) where ty's struct is absent. */
#define RS_OR(key, t, ty, m, t2, ty2, m2, wt, cv, opt)                                                                 \
    {                                                                                                                  \
        .name = key, .st = &rt_schema_##t, .off = offsetof(ty, m), .type = RS_##wt, .conv = RS_##cv, .option = opt,    \
        .alt = &rt_schema_##t2, .alt_off = offsetof(ty2, m2)                                                           \
    }
/* A member the sink writes by hand. */
#define HAND(key)                                                                                                      \
    {                                                                                                                  \
        .name = key, .type = RS_HAND                                                                                   \
    }

#define OBJECT(var, label, arr) const rt_rs_object var = {label, arr, RT_ARRAY_LEN(arr)}

/* Sample: actual_interval_ms is left out of the first sample (skip_serializing_if); the version
 * key is the one the Rust tool adds to the serialized sample. */
static const rt_rs_field sample_rs[] = {
    HAND("actual_interval_ms"),
    HAND("cpu"),
    HAND("disk"),
    HAND("gpu"),
    HAND("job_name"),
    HAND("memory"),
    HAND("network"),
    HAND("resource-tracker-version"),
    RS("timestamp_secs", sample, rt_sample, timestamp_secs, INT, SAME, 0),
    RS("tracked_pid", process, rt_process, pid, INT, SAME, 1),
};

/* CpuMetrics: the machine's figures, the tracked tree's (null without one; its GPU figures
 * without one are every process's, as the Rust tool fills them without --pid), and the
 * cgroup's per-interval CPU (the tracker's own group, or the tree's). process_count is every
 * process (the Rust tool counts the numbered entries of /proc, whatever its comment says). */
static const rt_rs_field cpu_rs[] = {
    RS("cgroup_usage_secs", cgroup, rt_cgroup, cpu_secs_total, FLOAT, DELTA, 1),
    RS("cgroup_utilization_pct", cgroup, rt_cgroup, cpu_secs_total, FLOAT, RATE, 1),
    HAND("per_core_pct"),
    RS("process_child_count", cpu, rt_cpu, process_child_count, INT, SAME, 1),
    RS("process_cores_used", cpu, rt_cpu, process_cores_used, FLOAT, SAME, 1),
    RS("process_count", cpu, rt_cpu, all_process_count, INT, SAME, 0),
    RS("process_disk_read_bytes", process, rt_process, read_bytes, INT, SAME, 1),
    RS("process_disk_write_bytes", process, rt_process, write_bytes, INT, SAME, 1),
    RS_OR("process_gpu_usage", process, rt_process, gpu_utilization_pct, gpu_use, rt_gpu_use, utilization_pct, FLOAT,
          PER_100, 1),
    RS_OR("process_gpu_utilized", process, rt_process, gpu_count_used, gpu_use, rt_gpu_use, gpu_count_used, INT, SAME,
          1),
    RS_OR("process_gpu_vram_mib", process, rt_process, gpu_vram_used_bytes, gpu_use, rt_gpu_use, vram_used_bytes,
          FLOAT, TO_MIB, 1),
    RS("process_pss_mib", process, rt_process, pss_mib, INT, SAME, 1),
    RS("process_rss_mib", process, rt_process, rss_mib, INT, SAME, 1),
    RS("process_stime_secs", process, rt_process, stime_secs, FLOAT, SAME, 1),
    RS("process_utime_secs", process, rt_process, utime_secs, FLOAT, SAME, 1),
    RS("stime_secs", cpu, rt_cpu, stime_secs, FLOAT, SAME, 0),
    RS("utilization_pct", cpu, rt_cpu, utilization_pct, FLOAT, SAME, 0),
    RS("utime_secs", cpu, rt_cpu, utime_secs, FLOAT, SAME, 0),
};

/* MemoryMetrics: whole MiB (the Rust tool divides kB by 1024 in integers: our MiB truncated). */
static const rt_rs_field memory_rs[] = {
    RS("active_mib", memory, rt_memory, active_mib, INT, SAME, 0),
    RS("available_mib", memory, rt_memory, available_mib, INT, SAME, 0),
    RS("buffers_mib", memory, rt_memory, buffers_mib, INT, SAME, 0),
    RS("cached_mib", memory, rt_memory, cached_mib, INT, SAME, 0),
    RS("free_mib", memory, rt_memory, free_mib, INT, SAME, 0),
    RS("inactive_mib", memory, rt_memory, inactive_mib, INT, SAME, 0),
    RS("swap_total_mib", memory, rt_memory, swap_total_mib, INT, SAME, 0),
    RS("swap_used_mib", memory, rt_memory, swap_used_mib, INT, SAME, 0),
    RS("swap_used_pct", memory, rt_memory, swap_used_pct, FLOAT, SAME, 0),
    RS("total_mib", memory, rt_memory, total_mib, INT, SAME, 0),
    RS("used_mib", memory, rt_memory, used_mib, INT, SAME, 0),
    RS("used_pct", memory, rt_memory, used_pct, FLOAT, SAME, 0),
};

/* NetworkMetrics: one per interface. */
static const rt_rs_field network_rs[] = {
    RS("driver", net_iface, rt_net_iface, driver, STR, SAME, 1),
    RS("interface", net_iface, rt_net_iface, interface, STR, SAME, 0),
    RS("mac_address", net_iface, rt_net_iface, mac_address, STR, SAME, 1),
    RS("mtu", net_iface, rt_net_iface, mtu, INT, SAME, 1),
    RS("operstate", net_iface, rt_net_iface, operstate, STR, SAME, 1),
    RS("rx_bytes_per_sec", net_iface, rt_net_iface, rx_bytes_per_sec, FLOAT, SAME, 0),
    RS("rx_bytes_total", net_iface, rt_net_iface, rx_bytes_total, INT, SAME, 0),
    HAND("speed_mbps"), /* the speed file's number, -1 too (speed_mbps_reported, not in our line) */
    RS("tx_bytes_per_sec", net_iface, rt_net_iface, tx_bytes_per_sec, FLOAT, SAME, 0),
    RS("tx_bytes_total", net_iface, rt_net_iface, tx_bytes_total, INT, SAME, 0),
};

/* DiskMetrics: one per disk, its filesystems under "mounts". */
static const rt_rs_field disk_rs[] = {
    RS("capacity_bytes", disk, rt_disk, capacity_bytes, INT, SAME, 1),
    RS("device", disk, rt_disk, device, STR, SAME, 0),
    RS("device_type", disk, rt_disk, device_type, STR, SAME, 1),
    RS("model", disk, rt_disk, model, STR, SAME, 1),
    HAND("mounts"),
    RS("read_bytes_per_sec", disk, rt_disk, read_bytes_per_sec, FLOAT, SAME, 0),
    RS("read_bytes_total", disk, rt_disk, read_bytes_total, INT, SAME, 0),
    RS("serial", disk, rt_disk, serial, STR, SAME, 1),
    RS("vendor", disk, rt_disk, vendor, STR, SAME, 1),
    RS("write_bytes_per_sec", disk, rt_disk, write_bytes_per_sec, FLOAT, SAME, 0),
    RS("write_bytes_total", disk, rt_disk, write_bytes_total, INT, SAME, 0),
};

/* DiskMountMetrics: one per filesystem of a disk. */
static const rt_rs_field mount_rs[] = {
    RS("available_bytes", mount, rt_mount, available_bytes, INT, SAME, 0),
    RS("filesystem", mount, rt_mount, filesystem, STR, SAME, 0),
    RS("mount_point", mount, rt_mount, mount_point, STR, SAME, 0),
    RS("total_bytes", mount, rt_mount, total_bytes, INT, SAME, 0),
    RS("used_bytes", mount, rt_mount, used_bytes, INT, SAME, 0),
    RS("used_pct", mount, rt_mount, used_pct, FLOAT, SAME, 0),
};

/* GpuMetrics: one per GPU; "detail" is a map (its keys sorted too). */
static const rt_rs_field gpu_rs[] = {
    RS("core_count", gpu, rt_gpu, core_count, INT, SAME, 1),
    HAND("detail"),
    RS("device_type", gpu, rt_gpu, device_type, STR, SAME, 0),
    RS("frequency_mhz", gpu, rt_gpu, frequency_mhz, INT, SAME, 0),
    HAND("host_id"), /* NVIDIA: its NVML index ("0"); AMD: the PCI address */
    RS("name", gpu, rt_gpu, name, STR, SAME, 0),
    RS("power_watts", gpu, rt_gpu, power_watts, FLOAT, SAME, 0),
    RS("temperature_celsius", gpu, rt_gpu, temperature_celsius, INT, SAME, 0),
    RS("utilization_pct", gpu, rt_gpu, utilization_pct, FLOAT, SAME, 0),
    HAND("uuid"), /* NVIDIA: NVML's (else "nvidia-INDEX"); AMD: the PCI address */
    RS("vram_total_bytes", gpu, rt_gpu, vram_total_bytes, INT, SAME, 0),
    RS("vram_used_bytes", gpu, rt_gpu, vram_used_bytes, INT, SAME, 0),
    RS("vram_used_pct", gpu, rt_gpu, vram_used_pct, FLOAT, SAME, 0),
};

OBJECT(rt_rs_sample, "Sample", sample_rs);
OBJECT(rt_rs_cpu, "CpuMetrics", cpu_rs);
OBJECT(rt_rs_memory, "MemoryMetrics", memory_rs);
OBJECT(rt_rs_network, "NetworkMetrics", network_rs);
OBJECT(rt_rs_disk, "DiskMetrics", disk_rs);
OBJECT(rt_rs_mount, "DiskMountMetrics", mount_rs);
OBJECT(rt_rs_gpu, "GpuMetrics", gpu_rs);
