/* columns.c - the runs table of a history: its columns after id, in table order, and where each
 * value lives (rt_history_columns: the one table that the tool's writer binds and the reader
 * reads back, history.h), and which of them a history's table has (rt_history_have). */
#include <stddef.h>
#include <string.h>

#include "resource_tracker.h"

/* clang-format off */
#define SRC_RUN RT_HISTORY_FROM_RUN
#define SRC_JOB RT_HISTORY_FROM_JOB
#define SRC_HOST RT_HISTORY_FROM_HOST
#define SRC_CLOUD RT_HISTORY_FROM_CLOUD
#define SRC_SUM RT_HISTORY_FROM_SUMMARY
#define RUN(n, t, x) {n, t, SRC_RUN, RT_HISTORY_RUN_##x}
#define JOB(f) {#f, 'T', SRC_JOB, offsetof(rt_job, f)}
#define HOST(n, t, f) {n, t, SRC_HOST, offsetof(rt_host, f)}
#define CLOUD(f) {"cloud_" #f, 'T', SRC_CLOUD, offsetof(rt_cloud, f)}
#define SUM(f) {#f, 'R', SRC_SUM, offsetof(rt_summary, f)}
#define NEED(n, f) {n "_mib", 'R', SRC_SUM, offsetof(rt_summary, f.mib)}, \
        {n "_source", 'N', SRC_SUM, offsetof(rt_summary, f.source)}, {n "_sampled", 'B', SRC_SUM, offsetof(rt_summary, f.sampled)}
#define METHOD(f) {#f, 'M', SRC_SUM, offsetof(rt_summary, f)}
#define DIST(f)                                                                                                        \
    {#f "_mean", 'R', SRC_SUM, offsetof(rt_summary, f.mean)}, {#f "_peak", 'R', SRC_SUM, offsetof(rt_summary, f.peak)}, \
        {#f "_p50", 'R', SRC_SUM, offsetof(rt_summary, f.p50)}, {#f "_p95", 'R', SRC_SUM, offsetof(rt_summary, f.p95)}

/* Every column after id, in table order. The SRC_SUM ones are every double of rt_summary but
 * start_secs and end_secs (the run's own times stand for them), so a summary comes back whole.
 * New columns go at the end: ALTER TABLE appends them there, so a migrated table and a new one
 * have the same order. */
static const rt_history_column cols[] = { /* its rows size it: RT_HISTORY_NCOLS must match */
    RUN("start_secs", 'R', START), RUN("end_secs", 'R', END), RUN("tool_version", 'T', VERSION),
    JOB(job_name), JOB(project_name), JOB(stage_name), JOB(task_name), JOB(team), JOB(env), JOB(language),
    JOB(orchestrator), JOB(executor), JOB(external_run_id), JOB(container_image),
    RUN("tags", 'T', TAGS), RUN("command", 'T', COMMAND), RUN("pid", 'I', PID), RUN("exit_status", 'I', EXIT),
    HOST("host_hostname", 'T', hostname), HOST("host_id", 'T', host_id), HOST("host_vcpus", 'I', vcpus),
    HOST("host_cpu_model", 'T', cpu_model), HOST("host_memory_mib", 'R', memory_mib),
    HOST("host_gpu_model", 'T', gpu_model), HOST("host_gpu_count", 'I', gpu_count),
    HOST("host_gpu_memory_mib", 'R', gpu_memory_mib), HOST("host_allocation", 'T', allocation),
    CLOUD(vendor_id), CLOUD(region_id), CLOUD(zone_id), CLOUD(instance_type),
    RUN("samples", 'I', SAMPLES), SUM(duration_secs),
    SUM(process_cpu_secs), DIST(process_cores), DIST(process_pss_mib), DIST(process_rss_mib),
    DIST(process_gpu_usage), DIST(process_gpu_vram_mib), SUM(process_gpus_used),
    SUM(process_read_bytes), SUM(process_write_bytes),
    SUM(cpu_count), DIST(cpu_cores), DIST(memory_used_mib), SUM(memory_total_mib),
    DIST(gpu_usage), DIST(gpu_vram_mib), SUM(gpu_count), SUM(gpu_vram_total_mib),
    SUM(disk_read_bytes), SUM(disk_write_bytes), SUM(net_recv_bytes), SUM(net_sent_bytes),
    SUM(disk_space_used_peak_bytes), SUM(disk_space_total_bytes),
    RUN("allocation", 'T', ALLOCATION), RUN("summary_json", 'T', SUMMARY_JSON),
    /* schema version 2: the 0.6 figures */
    SUM(process_memory_peak_mib), SUM(oom_kills), SUM(oom_kill_secs), SUM(memory_limit_mib), SUM(memory_high_mib),
    SUM(cpu_quota_cores), SUM(cpu_periods), SUM(cpu_throttled_periods), SUM(cpu_throttled_secs), SUM(pids_peak),
    SUM(pids_limit), DIST(pressure_cpu_some_pct), DIST(pressure_memory_some_pct), DIST(pressure_memory_full_pct),
    DIST(pressure_io_some_pct), DIST(pressure_io_full_pct),
    /* schema version 3: the 0.9 figures */
    SUM(process_rss_hwm_mib), SUM(process_unreclaimable_peak_mib), SUM(process_gpu_vram_peak_mib),
    SUM(process_cancelled_write_bytes), SUM(process_cgroup_exclusive), SUM(left_behind),
    NEED("memory_need", memory_need), NEED("vram_need", vram_need), RUN("notes", 'T', NOTES),
    /* schema version 4: the 0.14 phases, as the summary's JSON has them (NULL: no mark came) */
    RUN("phases", 'T', PHASES), RUN("phase_marks", 'T', PHASE_MARKS),
    /* schema version 5: the 0.15 energy and carbon (a figure is NULL without its method) */
    SUM(energy_joules), METHOD(energy_method), SUM(process_energy_joules), METHOD(process_energy_method),
    DIST(power_watts), DIST(process_power_watts), SUM(idle_power_watts), SUM(gpu_power_throttled_secs),
    SUM(gpu_thermal_throttled_secs), SUM(co2e_grams), SUM(process_co2e_grams), RUN("grid_g_per_kwh", 'R', GRID_G),
    RUN("grid_zone", 'T', GRID_ZONE), RUN("grid_source", 'T', GRID_SOURCE),
    /* schema version 6: the 0.16 place, request and efficiencies */
    RUN("place", 'T', PLACE), SUM(requested_cpu_cores), RUN("requested_cpu_from", 'T', CPU_FROM),
    SUM(requested_memory_mib), RUN("requested_memory_from", 'T', MEMORY_FROM), SUM(requested_gpus),
    RUN("requested_gpus_from", 'T', GPUS_FROM), SUM(time_limit_secs), RUN("time_limit_from", 'T', TIME_LIMIT_FROM),
    SUM(cpu_efficiency_pct), SUM(memory_efficiency_pct), SUM(gpu_efficiency_pct), SUM(time_limit_used_pct),
    SUM(process_vms_peak_mib),
    /* schema version 7: the 0.18 run under other core counts, as the summary's JSON "cores" has
     * it (NULL: no tracked tree) */
    RUN("cores", 'T', CORES),
    /* schema version 8: the 0.18 member, as the summary's JSON has it (NULL: no job of nodes) */
    RUN("member", 'T', MEMBER),
    /* schema version 9: the 0.19 GPU work (NVML GPM; NULL without it), whose figures they are
     * (gpu_work_shared 1: the devices', shared with other processes; 0: the job's), the GPUs the
     * tree kept busy, its VRAM peak on one GPU, the seconds its GPUs idled while its CPU worked */
    DIST(gpu_sm_active_pct), DIST(gpu_sm_occupancy_pct), DIST(gpu_tensor_active_pct), DIST(gpu_dram_active_pct),
    DIST(gpu_fp64_active_pct), DIST(gpu_fp32_active_pct), DIST(gpu_fp16_active_pct), DIST(gpu_pcie_bytes_per_sec),
    DIST(gpu_nvlink_bytes_per_sec), SUM(gpu_work_shared), SUM(process_gpus_busy),
    SUM(process_gpu_vram_per_gpu_peak_mib), SUM(gpu_idle_cpu_busy_secs),
    /* schema version 10: the 0.20 re-reads (file data the job's group read back after its
     * memory evicted it) */
    SUM(memory_refault_mib),
    /* and what the processes left behind held at the end (NULL: none left) */
    SUM(left_behind_mib),
    /* and the tree's processes whose end the kernel told (NULL: not listened to) */
    SUM(process_exits_counted),
    /* schema version 11: the 0.21 tree's processes seen ignoring SIGCHLD, and the
     * signal that ended the command (0: none; NULL: not known) */
    SUM(process_unwaited_parents), /* the tree's processes seen ignoring SIGCHLD */
    SUM(end_signal),
    /* schema version 12: the run's own id (32 hex digits, unique: a row written twice, a kept
     * row delivered twice, a write whose COMMIT's answer was lost or a run imported twice, is
     * stored once) */
    RUN("run_uuid", 'T', UUID),
    /* and who ran what: the real uid's login name (NULL: no passwd entry) and the uid, the node
     * (the member's, SLURMD_NODENAME, else the short host name) and the job's id (the member's
     * job_id: SLURM_JOB_ID, ...; NULL: no job of a scheduler or launcher) */
    RUN("user_name", 'T', USER_NAME), RUN("user_uid", 'I', USER_UID), RUN("node", 'T', NODE),
    RUN("job_id", 'T', JOB_ID),
};
/* clang-format on */
_Static_assert(sizeof cols / sizeof cols[0] == RT_HISTORY_NCOLS, "RT_HISTORY_NCOLS");

const rt_history_column *rt_history_columns(void)
{
    return cols;
}

/* A column name the runs table has: marked in have (rt_history_have's walk). */
static void mark_column(void *arg, const char *name)
{
    bool *have = arg;
    for (size_t i = 0; i < RT_HISTORY_NCOLS; i++)
        if (strcmp(cols[i].name, name) == 0)
            have[i] = true;
    have[RT_HISTORY_NCOLS] = true; /* the table is there */
}

int rt_history_have(rt_db *db, bool have[RT_HISTORY_NCOLS + 1])
{
    memset(have, 0, (RT_HISTORY_NCOLS + 1) * sizeof *have);
    return rt_db_columns(db, "runs", mark_column, have);
}
