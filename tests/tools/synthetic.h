/* synthetic.h - a full synthetic sample for tests (every member of every struct set, some
 * nulls on purpose: a GPU that knows nothing, an interface without speed, pressure with
 * full_avg10 unknown; energy: a measured package and DRAM, a sampled GPU): make_full() fills the static storage below and `full`, which the test may
 * then change. Shared by tests/unit/test_prom_format.c and tests/tools/golden_views.c; include it
 * once per program. */
#ifndef RT_TESTS_SYNTHETIC_H
#define RT_TESTS_SYNTHETIC_H

#include <math.h>

#include "resource_tracker.h"

static rt_cpu cpu;
static double per_core[2] = {50, 75};
static rt_memory mem;
static rt_net_iface eth0, eth1;
static const rt_net_iface *ifaces[2] = {&eth0, &eth1};
static rt_disk sda;
static const rt_disk *disks[1] = {&sda};
static rt_gpu gpu0, gpu1;
static const rt_kv gpu0_detail[2] = {{"driver", "nvidia"}, {"driver_version", "550.54.15"}};
static const rt_gpu *gpus[2] = {&gpu0, &gpu1};
static rt_process proc;
static rt_process_part parts[3];
static rt_cgroup cg;
static rt_psi psi;
static rt_energy_domain dom_pkg, dom_dram, dom_gpu;
static const rt_energy_domain *doms[3] = {&dom_pkg, &dom_dram, &dom_gpu};
static rt_energy energy;
static rt_sample full;

static void make_full(void)
{
    cpu = (rt_cpu){.utilization_pct = 1.25, .per_core_pct = per_core, .core_count = 2, .utime_secs = 1,
                   .stime_secs = 0.5, .process_count = 3, .process_cores_used = 0.5, .process_child_count = 1};
    mem = (rt_memory){.total_mib = 2048, .free_mib = 512, .available_mib = 1024, .used_mib = 1000.5,
                      .used_pct = 50, .buffers_mib = 10, .cached_mib = 20, .active_mib = 30, .inactive_mib = 40,
                      .swap_total_mib = 100, .swap_used_mib = 1, .swap_used_pct = 1};
    eth0 = (rt_net_iface){.interface = "eth0", .rx_bytes_total = 1000, .tx_bytes_total = 2000, .speed_mbps = RT_NULL_I64,
                          .mtu = 1500};
    eth1 = (rt_net_iface){.interface = "eth1", .rx_bytes_total = 3, .tx_bytes_total = 4, .speed_mbps = 1000,
                          .mtu = 1500};
    sda = (rt_disk){.device = "sda", .capacity_bytes = 1000000, .read_bytes_total = 18446744073709551000u,
                    .write_bytes_total = 7};
    gpu0 = (rt_gpu){.uuid = "GPU-aaaa", .name = "Fake A100", .host_id = "0000:3b:00.0", .utilization_pct = 42.5,
                    .vram_total_bytes = 80000, .vram_used_bytes = 1234, .vram_used_pct = 1.5,
                    .temperature_celsius = 61, .power_watts = 250.125, .frequency_mhz = 1410, .core_count = 108,
                    .device_type = "GPU", .detail = gpu0_detail, .detail_count = 2, .power_throttled_secs = 12.5,
                    .thermal_throttled_secs = 0.25, .vram_reserved_bytes = 615,
                    /* GPM as a loop of small fp32 matmuls showed on an H200 (no MIG, no NVLink figure) */
                    .work = {.sm_active_pct = 15.9, .sm_occupancy_pct = 0.85, .tensor_active_pct = 0,
                             .tensor_hmma_active_pct = 0, .tensor_imma_active_pct = 0, .tensor_dfma_active_pct = NAN,
                             .dram_active_pct = 0.5, .fp64_active_pct = 0, .fp32_active_pct = 2.3, .fp16_active_pct = 0,
                             .pcie_tx_bytes_per_sec = 1048576, .pcie_rx_bytes_per_sec = 2097152.5,
                             .nvlink_tx_bytes_per_sec = NAN, .nvlink_rx_bytes_per_sec = NAN}};
    gpu1 = (rt_gpu){.uuid = NULL, .name = NULL, .host_id = NULL, .utilization_pct = NAN, .vram_total_bytes = RT_NULL_U64,
                    .vram_used_bytes = RT_NULL_U64, .vram_used_pct = NAN, .temperature_celsius = NAN,
                    .power_watts = NAN, .frequency_mhz = NAN, .core_count = RT_NULL_I64,
                    .power_throttled_secs = NAN, .thermal_throttled_secs = NAN, .work = RT_GPU_WORK_NULL,
                    .vram_reserved_bytes = RT_NULL_U64};
    psi.cpu = (rt_pressure){.some_avg10 = 1, .full_avg10 = NAN, .some_pct = 1, .full_pct = NAN,
                            .some_total_usec = 1234567, .full_total_usec = RT_NULL_U64};
    psi.memory = (rt_pressure){.some_total_usec = 5, .full_total_usec = 3};
    psi.io = (rt_pressure){.some_total_usec = 2000000, .full_total_usec = 1000000};
    cg = (rt_cgroup){.path = "/resource-tracker-1-1", .version = "v2", .own = 1, .exclusive = 1,
                     .cpu_secs_total = 12.3456789, .memory_mib = 64, .memory_peak_mib = 128, .pids = 3, .pids_peak = 9,
                     .read_bytes_total = 11, .write_bytes_total = 22, .cpu_quota_cores = 1.5, .cpu_period_secs = 0.1,
                     .memory_limit_mib = 1024, .memory_high_mib = NAN, .pids_limit = 100, .cpu_periods = 50,
                     .cpu_throttled_periods = 5, .cpu_throttled_secs = 0.25, .cpu_throttled_pct = 10,
                     .oom_kills = 1, .memory_max_events = 2, .memory_reclaimable_mib = 16,
                     .memory_unreclaimable_peak_mib = 100.25};
    cg.pressure = psi;
    proc = (rt_process){.pid = 42, .alive = 1, .child_count = 2, .thread_count = 7, .cores_used = 0.987654321,
                        .utime_secs = 1, .stime_secs = 1, .cpu_secs_total = 12.3456789, .pss_mib = 1.5, .rss_mib = 2,
                        .swap_mib = 0, .read_bytes_total = 4096, .write_bytes_total = 8192, .gpu_utilization_pct = 42.5,
                        .gpu_vram_used_bytes = 1234, .gpu_count_used = 1, .rss_peak_mib = 3,
                        .cancelled_write_bytes_total = 0, .memory_peak_mib = 4, .cgroup = &cg,
                        .rss_hwm_mib = 3.5, .gpu_vram_peak_bytes = 4096, .vms_mib = 1234.5,
                        .gpu_work_scope = "job", .gpu_count_busy = 1, .gpu_vram_per_gpu_max_bytes = 1234,
                        .exits_counted = 3};
    proc.gpu_work = gpu0.work; /* the tree alone on the one GPU that gives its work */
    parts[0] = (rt_process_part){.total_rss_mib = 1.5, .private_rss_mib = 1, .shared_rss_mib = 0.5, .cores_used = 0.25,
                                 .thread_count = 2, .gpu_vram_used_bytes = 1000};
    parts[1] = (rt_process_part){.total_rss_mib = 0.5, .private_rss_mib = NAN, .shared_rss_mib = NAN,
                                 .cores_used = 0.737654321, .thread_count = 5, .gpu_vram_used_bytes = 234};
    parts[2] = (rt_process_part){.total_rss_mib = 2, .private_rss_mib = 1.25, .shared_rss_mib = 0.75,
                                 .cores_used = 0.987654321, .thread_count = 7, .gpu_vram_used_bytes = RT_NULL_U64};
    proc.main = &parts[0];
    proc.descendants = &parts[1];
    proc.combined = &parts[2];
    full = (rt_sample){.timestamp_secs = 1700000000.123, .interval_secs = 0.2, .cpu = &cpu, .memory = &mem,
                       .network = ifaces, .network_count = 2, .disk = disks, .disk_count = 1, .gpu = gpus,
                       .gpu_count = 2, .disk_space_total_bytes = 500, .disk_space_used_bytes = 300,
                       .disk_space_free_bytes = 200, .process = &proc, .pressure = &psi, .cgroup = NULL,
                       .energy = &energy};
    /* energy over the 0.2 s interval: a measured package and its DRAM (the tree's share 0.4 of
     * the busy CPU time), and GPU 0's power times the time (the tree has it alone) */
    dom_pkg = (rt_energy_domain){.name = "package-0", .kind = "package", .source = "intel-rapl",
                                 .method = "measured", .in_total = 1, .energy_joules = 30.5,
                                 .energy_joules_total = 1220.5, .power_watts = 152.5, .process_share = 0.4,
                                 .process_energy_joules = 12.2, .process_energy_joules_total = 488.2};
    dom_dram = (rt_energy_domain){.name = "dram-0", .kind = "dram", .source = "intel-rapl", .method = "measured",
                                  .in_total = 1, .energy_joules = 4.25, .energy_joules_total = 170.25,
                                  .power_watts = 21.25, .process_share = 0.4, .process_energy_joules = 1.7,
                                  .process_energy_joules_total = 68.1};
    dom_gpu = (rt_energy_domain){.name = "gpu-0", .kind = "gpu", .source = "nvml", .method = "sampled",
                                 .device = "GPU-aaaa", .in_total = 1, .energy_joules = 50.025,
                                 .energy_joules_total = 2001, .power_watts = 250.125, .process_share = 1,
                                 .process_energy_joules = 50.025, .process_energy_joules_total = 2001};
    energy = (rt_energy){.domain = doms, .domain_count = 3, .energy_joules = 84.775, .energy_joules_total = 3391.75,
                         .power_watts = 423.875, .method = "sampled", .process_energy_joules = 63.925,
                         .process_energy_joules_total = 2557.3, .process_power_watts = 319.625,
                         .process_method = "sampled", .idle_power_watts = 180.5, .model = NULL,
                         .missing = "no platform meter (hwmon \"power_meter\")"};
}

#endif
