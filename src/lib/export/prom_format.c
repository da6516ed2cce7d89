/* prom_format.c - one sample as the body of /metrics: the Prometheus text format 0.0.4 or
 * OpenMetrics 1.0.0 (rt_format_prometheus), and the family writer both formats share
 * (prom_text.h). A pure function of its arguments: nothing is cached across calls. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../common/utf8.h"
#include "prom_text.h"

/* ---- the family writer (prom_text.h) ------------------------------------------------------ */

void rt_prom_family(rt_prom_out *f, const char *name, rt_prom_kind kind, const char *help)
{
    f->name = name;
    f->kind = kind;
    f->help = help;
    f->head_done = false;
}

void rt_prom_label_value(rt_ob *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != '\\' && p[j] != '"' && p[j] != '\n' && p[j] < 0x80)
            j++;
        rt_ob_put(o, s + i, j - i);
        if (j >= n)
            break;
        i = j;
        unsigned char c = p[i];
        if (c == '\\' || c == '"' || c == '\n') {
            rt_ob_lit(o, c == '\\' ? "\\\\" : c == '"' ? "\\\"" : "\\n");
            i++;
            continue;
        }
        size_t l = rt_utf8_len(p + i, n - i);
        if (l == 0) {
            rt_ob_lit(o, "\xef\xbf\xbd"); /* U+FFFD: Prometheus refuses a scrape that is not UTF-8 */
            i++;
        } else {
            rt_ob_put(o, s + i, l);
            i += l;
        }
    }
}

/* What follows a family's name in its series' names, by kind. */
static const char *const kind_suffix[] = {"", "_total", "_info"};

/* The family's name as its HELP and TYPE lines give it, and its type's word. */
static void family_head(rt_prom_out *f)
{
    const char *sfx = f->openmetrics ? "" : kind_suffix[f->kind];
    const char *type = f->kind == RT_PROM_COUNTER ? "counter"
                       : f->kind == RT_PROM_INFO && f->openmetrics ? "info"
                                                                    : "gauge";
    for (int line = 0; line < 2; line++) {
        rt_ob_lit(f->o, line == 0 ? "# HELP " : "# TYPE ");
        rt_ob_lit(f->o, f->name);
        rt_ob_lit(f->o, sfx);
        rt_ob_put(f->o, " ", 1);
        rt_ob_lit(f->o, line == 0 ? f->help : type);
        rt_ob_put(f->o, "\n", 1);
    }
    f->head_done = true;
}

/* One label: key="value", preceded by a comma unless it is the first. */
static void label(rt_ob *o, bool *first, const char *key, const char *value)
{
    if (!*first)
        rt_ob_put(o, ",", 1);
    *first = false;
    rt_ob_lit(o, key);
    rt_ob_put(o, "=\"", 2);
    rt_prom_label_value(o, value ? value : "");
    rt_ob_put(o, "\"", 1);
}

/* The family's head (once), then a series' name and labels and the space before its value. */
static void series_start(rt_prom_out *f, const rt_kv *extra, size_t n)
{
    if (!f->head_done)
        family_head(f);
    rt_ob *o = f->o;
    rt_ob_lit(o, f->name);
    rt_ob_lit(o, kind_suffix[f->kind]);
    size_t nl = f->labels ? f->labels->count : 0;
    if (nl + n > 0) {
        bool first = true;
        rt_ob_put(o, "{", 1);
        for (size_t i = 0; i < nl; i++)
            label(o, &first, f->labels->kv[i].key, f->labels->kv[i].value);
        for (size_t i = 0; i < n; i++)
            label(o, &first, extra[i].key, extra[i].value);
        rt_ob_put(o, "}", 1);
    }
    rt_ob_put(o, " ", 1);
}

void rt_prom_num(rt_prom_out *f, const rt_kv *extra, size_t n, double v, int dec)
{
    if (!isfinite(v))
        return;
    series_start(f, extra, n);
    rt_ob_fixed(f->o, v, dec, "NaN");
    rt_ob_put(f->o, "\n", 1);
}

void rt_prom_u64(rt_prom_out *f, const rt_kv *extra, size_t n, uint64_t v)
{
    if (v == RT_NULL_U64)
        return;
    series_start(f, extra, n);
    rt_ob_u64(f->o, v);
    rt_ob_put(f->o, "\n", 1);
}

void rt_prom_i64(rt_prom_out *f, const rt_kv *extra, size_t n, int64_t v)
{
    if (v == RT_NULL_I64)
        return;
    series_start(f, extra, n);
    rt_ob_i64(f->o, v);
    rt_ob_put(f->o, "\n", 1);
}

/* ---- figures read from the structs through tables ----------------------------------------- */

/* How a member is read and shown: a double with `dec` decimals; an integer; MiB shown as
 * bytes; percent shown as a ratio 0..1; an int flag as 1/0; microseconds as seconds. */
typedef enum { V_NUM, V_U64, V_I64, V_MIB, V_PCT, V_BOOL, V_USEC } vtype;

typedef struct metric {
    const char *name; /* the family (rt_prom_out.name rules) */
    rt_prom_kind kind;
    vtype type;
    size_t off;
    int dec;
    const char *help;
} metric;

#define G RT_PROM_GAUGE
#define C RT_PROM_COUNTER
#define M(name, kind, type, st, member, dec, help) {"resource_tracker_" name, kind, type, offsetof(st, member), dec, help}

/* Seconds to the microsecond, ratios and cores to 10^-6. */
enum { DEC_FINE = 6 };

/* The series of the member m of the struct at base. */
static void put_member(rt_prom_out *f, const rt_kv *extra, size_t n, const void *base, const metric *m)
{
    const char *at = (const char *)base + m->off;
    switch (m->type) {
    case V_NUM: rt_prom_num(f, extra, n, *(const double *)at, m->dec); break;
    case V_U64: rt_prom_u64(f, extra, n, *(const uint64_t *)at); break;
    case V_I64: rt_prom_i64(f, extra, n, *(const int64_t *)at); break;
    case V_MIB: rt_prom_num(f, extra, n, *(const double *)at * 1048576.0, 0); break;
    case V_PCT: rt_prom_num(f, extra, n, *(const double *)at / 100.0, DEC_FINE); break;
    case V_BOOL: rt_prom_u64(f, extra, n, *(const int *)at != 0); break;
    case V_USEC: {
        uint64_t us = *(const uint64_t *)at;
        if (us != RT_NULL_U64)
            rt_prom_num(f, extra, n, (double)us / 1e6, DEC_FINE);
        break;
    }
    }
}

/* The label value naming item i of a list (a disk, an interface, a GPU): name_of's answer, or
 * the index when it has none (so that two unnamed items never make one series). */
typedef const char *(*name_fn)(const void *item);

/* Every metric of table[0..nt), a family each, with a series per item of items[0..count)
 * labelled key="its name" (no label when key is NULL). */
static void put_table(rt_prom_out *f, const metric *table, size_t nt, const void *const *items, size_t count,
                      const char *key, name_fn name_of)
{
    for (size_t m = 0; m < nt; m++) {
        rt_prom_family(f, table[m].name, table[m].kind, table[m].help);
        for (size_t i = 0; i < count; i++) {
            if (!items[i])
                continue;
            char idx[24];
            rt_kv kv = {key, name_of ? name_of(items[i]) : NULL};
            if (key && !kv.value) {
                snprintf(idx, sizeof idx, "%zu", i);
                kv.value = idx;
            }
            put_member(f, &kv, key ? 1 : 0, items[i], &table[m]);
        }
    }
}

/* ---- the machine -------------------------------------------------------------------------- */

static const metric cpu_metrics[] = {
    M("cpu_usage_cores", G, V_NUM, rt_cpu, utilization_pct, DEC_FINE,
      "Busy logical cores of the machine over the last interval (0 to the core count)."),
    M("cpu_cores", G, V_U64, rt_cpu, core_count, 0, "Online logical cores of the machine."),
    M("processes_running", G, V_I64, rt_cpu, process_count, 0, "Runnable processes on the machine."),
};

static const metric swap_metrics[] = {
    M("memory_total_bytes", G, V_MIB, rt_memory, total_mib, 0, "Memory of the machine."),
    M("swap_total_bytes", G, V_MIB, rt_memory, swap_total_mib, 0, "Swap space of the machine."),
    M("swap_used_bytes", G, V_MIB, rt_memory, swap_used_mib, 0, "Swap space in use."),
};

/* resource_tracker_memory_bytes{state=...}. */
static void put_memory(rt_prom_out *f, const rt_memory *m)
{
    static const struct {
        const char *state;
        size_t off;
    } states[] = {
        {"used", offsetof(rt_memory, used_mib)},         {"free", offsetof(rt_memory, free_mib)},
        {"available", offsetof(rt_memory, available_mib)}, {"buffers", offsetof(rt_memory, buffers_mib)},
        {"cached", offsetof(rt_memory, cached_mib)},     {"active", offsetof(rt_memory, active_mib)},
        {"inactive", offsetof(rt_memory, inactive_mib)},
    };
    rt_prom_family(f, "resource_tracker_memory_bytes", G,
                   "Memory of the machine by state (used, free, available, buffers, cached, active, inactive).");
    for (size_t i = 0; i < RT_ARRAY_LEN(states); i++) {
        rt_kv kv = {"state", states[i].state};
        rt_prom_num(f, &kv, 1, *(const double *)(const void *)((const char *)m + states[i].off) * 1048576.0, 0);
    }
    put_table(f, swap_metrics, RT_ARRAY_LEN(swap_metrics), (const void *const *)&m, 1, NULL, NULL);
}

static const char *disk_name(const void *d)
{
    return ((const rt_disk *)d)->device;
}

static const metric disk_metrics[] = {
    M("disk_read_bytes", C, V_U64, rt_disk, read_bytes_total, 0, "Bytes read from the disk since boot."),
    M("disk_written_bytes", C, V_U64, rt_disk, write_bytes_total, 0, "Bytes written to the disk since boot."),
    M("disk_capacity_bytes", G, V_U64, rt_disk, capacity_bytes, 0, "Capacity of the disk."),
};

static const char *iface_name(const void *n)
{
    return ((const rt_net_iface *)n)->interface;
}

static const metric net_metrics[] = {
    M("network_receive_bytes", C, V_U64, rt_net_iface, rx_bytes_total, 0,
      "Bytes received on the interface since boot."),
    M("network_transmit_bytes", C, V_U64, rt_net_iface, tx_bytes_total, 0,
      "Bytes sent on the interface since boot."),
};

static const metric fs_metrics[] = {
    M("filesystem_size_bytes", G, V_U64, rt_sample, disk_space_total_bytes, 0,
      "Space of the filesystems on the physical disks, summed."),
    M("filesystem_used_bytes", G, V_U64, rt_sample, disk_space_used_bytes, 0,
      "Space in use on the filesystems on the physical disks, summed."),
    M("filesystem_free_bytes", G, V_U64, rt_sample, disk_space_free_bytes, 0,
      "Space available to users on the filesystems on the physical disks, summed."),
};

/* The pressure counters of ps (machine or group): NAME_some/full_seconds_total{resource=...}. */
static void put_psi(rt_prom_out *f, const rt_psi *ps, const char *some_name, const char *full_name, const char *whose)
{
    const char *res[] = {"cpu", "memory", "io"};
    const rt_pressure *each[] = {&ps->cpu, &ps->memory, &ps->io};
    char help[160];
    for (int full = 0; full < 2; full++) {
        snprintf(help, sizeof help,
                 "Seconds in which %s tasks of %s waited for the resource (pressure stall information).",
                 full ? "all non-idle" : "some", whose);
        rt_prom_family(f, full ? full_name : some_name, C, help);
        for (size_t i = 0; i < RT_ARRAY_LEN(each); i++) {
            uint64_t us = full ? each[i]->full_total_usec : each[i]->some_total_usec;
            rt_kv kv = {"resource", res[i]};
            if (us != RT_NULL_U64)
                rt_prom_num(f, &kv, 1, (double)us / 1e6, DEC_FINE);
        }
    }
}

/* ---- GPUs --------------------------------------------------------------------------------- */

static const char *gpu_name(const void *g)
{
    const rt_gpu *gpu = g;
    return gpu->uuid ? gpu->uuid : gpu->host_id;
}

static const metric gpu_metrics[] = {
    M("gpu_utilization_ratio", G, V_PCT, rt_gpu, utilization_pct, 0, "Busy share of the GPU (0 to 1)."),
    M("gpu_memory_used_bytes", G, V_U64, rt_gpu, vram_used_bytes, 0, "GPU memory in use."),
    M("gpu_memory_total_bytes", G, V_U64, rt_gpu, vram_total_bytes, 0, "GPU memory."),
    M("gpu_temperature_celsius", G, V_NUM, rt_gpu, temperature_celsius, 3, "Temperature of the GPU."),
    M("gpu_power_watts", G, V_NUM, rt_gpu, power_watts, 3, "Power the GPU draws."),
};

/* resource_tracker_gpu_info{gpu, name}: the GPUs' models. */
static void put_gpu_info(rt_prom_out *f, const rt_sample *s)
{
    rt_prom_family(f, "resource_tracker_gpu", RT_PROM_INFO, "The GPU's model (value 1).");
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (!g)
            continue;
        char idx[24];
        rt_kv kv[2] = {{"gpu", gpu_name(g)}, {"name", g->name}};
        if (!kv[0].value) {
            snprintf(idx, sizeof idx, "%zu", i);
            kv[0].value = idx;
        }
        rt_prom_u64(f, kv, g->name ? 2 : 1, 1);
    }
}

/* ---- the tracked tree and its group ------------------------------------------------------- */

static const metric process_metrics[] = {
    M("process_cpu_seconds", C, V_NUM, rt_process, cpu_secs_total, DEC_FINE,
      "CPU seconds (user and system) of the tracked process tree since tracking began."),
    M("process_cpu_usage_cores", G, V_NUM, rt_process, cores_used, DEC_FINE,
      "CPU seconds per second of the tracked tree over the last interval."),
    M("process_rss_bytes", G, V_MIB, rt_process, rss_mib, 0, "Resident memory of the tree's live processes."),
    M("process_pss_bytes", G, V_MIB, rt_process, pss_mib, 0, "Proportional set size of the tree's live processes."),
    M("process_swap_bytes", G, V_MIB, rt_process, swap_mib, 0, "Swapped-out memory of the tree's live processes."),
    M("process_rss_peak_bytes", G, V_MIB, rt_process, rss_peak_mib, 0, "The highest resident memory of the tree."),
    M("process_memory_peak_bytes", G, V_MIB, rt_process, memory_peak_mib, 0,
      "The kernel's peak memory charge of the job's control group."),
    M("process_threads", G, V_I64, rt_process, thread_count, 0, "Threads of the tree's live processes."),
    M("process_children", G, V_I64, rt_process, child_count, 0, "Live descendants of the tracked root."),
    M("process_alive", G, V_BOOL, rt_process, alive, 0, "1 while the tracked root runs, 0 after it exited."),
    M("process_read_bytes", C, V_U64, rt_process, read_bytes_total, 0,
      "Bytes the tree read from storage since tracking began."),
    M("process_written_bytes", C, V_U64, rt_process, write_bytes_total, 0,
      "Bytes the tree wrote to storage since tracking began."),
    M("process_cancelled_written_bytes", C, V_U64, rt_process, cancelled_write_bytes_total, 0,
      "Of the bytes written, those whose writeback was cancelled (never reached storage)."),
    M("process_gpu_utilization_ratio", G, V_PCT, rt_process, gpu_utilization_pct, 0,
      "GPU busy share of the tree (0 to 1 per GPU, summed over GPUs)."),
    M("process_gpu_memory_used_bytes", G, V_U64, rt_process, gpu_vram_used_bytes, 0, "GPU memory the tree uses."),
    M("process_gpus_used", G, V_I64, rt_process, gpu_count_used, 0, "GPUs the tree uses."),
};

/* The tree's parts (rt_process_part), a series each labelled part="main|descendants|combined". */
static const metric part_metrics[] = {
    M("process_part_rss_bytes", G, V_MIB, rt_process_part, total_rss_mib, 0,
      "Resident memory of the part (main: the tracked root; descendants: the rest of the tree; combined: both): "
      "private plus shared."),
    M("process_part_private_rss_bytes", G, V_MIB, rt_process_part, private_rss_mib, 0,
      "Private resident memory of the part (private clean and dirty pages, from smaps_rollup)."),
    M("process_part_shared_rss_bytes", G, V_MIB, rt_process_part, shared_rss_mib, 0,
      "Shared resident memory of the part, counted once as far as the rollups tell."),
    M("process_part_cpu_usage_cores", G, V_NUM, rt_process_part, cores_used, DEC_FINE,
      "The part's share of the tree's CPU seconds per second over the last interval."),
    M("process_part_threads", G, V_I64, rt_process_part, thread_count, 0, "Threads of the part's live processes."),
    M("process_part_gpu_memory_used_bytes", G, V_U64, rt_process_part, gpu_vram_used_bytes, 0,
      "GPU memory the part uses."),
};

static void put_parts(rt_prom_out *f, const rt_process *p)
{
    static const char *const names[3] = {"main", "descendants", "combined"};
    const rt_process_part *parts[3] = {p->main, p->descendants, p->combined};
    for (size_t m = 0; m < RT_ARRAY_LEN(part_metrics); m++) {
        rt_prom_family(f, part_metrics[m].name, part_metrics[m].kind, part_metrics[m].help);
        for (size_t i = 0; i < 3; i++) {
            rt_kv kv = {"part", names[i]};
            if (parts[i])
                put_member(f, &kv, 1, parts[i], &part_metrics[m]);
        }
    }
}

static const metric cgroup_metrics[] = {
    M("cgroup_cpu_seconds", C, V_NUM, rt_cgroup, cpu_secs_total, DEC_FINE,
      "CPU seconds of everything that ran in the control group since tracking began."),
    M("cgroup_memory_bytes", G, V_MIB, rt_cgroup, memory_mib, 0, "Memory charged to the group (page cache included)."),
    M("cgroup_memory_peak_bytes", G, V_MIB, rt_cgroup, memory_peak_mib, 0, "The kernel's peak memory charge of the group."),
    M("cgroup_pids", G, V_I64, rt_cgroup, pids, 0, "Tasks in the group."),
    M("cgroup_pids_peak", G, V_I64, rt_cgroup, pids_peak, 0, "The most tasks in the group."),
    M("cgroup_read_bytes", C, V_U64, rt_cgroup, read_bytes_total, 0, "Bytes the group read from storage."),
    M("cgroup_written_bytes", C, V_U64, rt_cgroup, write_bytes_total, 0, "Bytes the group wrote to storage."),
    M("cgroup_cpu_quota_cores", G, V_NUM, rt_cgroup, cpu_quota_cores, DEC_FINE,
      "The group's CPU limit in cores (quota / period), the tightest on its path."),
    M("cgroup_cpu_period_seconds", G, V_NUM, rt_cgroup, cpu_period_secs, DEC_FINE, "The period of the CPU quota."),
    M("cgroup_memory_limit_bytes", G, V_MIB, rt_cgroup, memory_limit_mib, 0, "The group's memory limit."),
    M("cgroup_memory_high_bytes", G, V_MIB, rt_cgroup, memory_high_mib, 0, "The group's memory.high throttle limit."),
    M("cgroup_pids_limit", G, V_I64, rt_cgroup, pids_limit, 0, "The group's task limit."),
    M("cgroup_cpu_periods", C, V_U64, rt_cgroup, cpu_periods, 0, "CPU quota periods elapsed."),
    M("cgroup_cpu_throttled_periods", C, V_U64, rt_cgroup, cpu_throttled_periods, 0,
      "CPU quota periods in which the group was throttled."),
    M("cgroup_cpu_throttled_seconds", C, V_NUM, rt_cgroup, cpu_throttled_secs, DEC_FINE,
      "Seconds the group's tasks were throttled by the CPU quota."),
    M("cgroup_oom_kills", C, V_U64, rt_cgroup, oom_kills, 0, "Tasks of the group the OOM killer killed."),
    M("cgroup_memory_max_events", C, V_U64, rt_cgroup, memory_max_events, 0, "Times the group hit its memory limit."),
};

/* The group's info (path, version, own, exclusive), figures and pressure. */
static void put_cgroup(rt_prom_out *f, const rt_cgroup *g)
{
    rt_prom_family(f, "resource_tracker_cgroup", RT_PROM_INFO,
                   "The control group the figures resource_tracker_cgroup_* come from (value 1).");
    rt_kv kv[4] = {{"cgroup", g->path}, {"version", g->version}, {"own", g->own ? "1" : "0"},
                   {"exclusive", g->exclusive ? "1" : "0"}};
    rt_prom_u64(f, kv, 4, 1);
    put_table(f, cgroup_metrics, RT_ARRAY_LEN(cgroup_metrics), (const void *const *)&g, 1, NULL, NULL);
    put_psi(f, &g->pressure, "resource_tracker_cgroup_pressure_some_seconds",
            "resource_tracker_cgroup_pressure_full_seconds", "the group");
}

/* ---- the whole body ----------------------------------------------------------------------- */

/* resource_tracker_info{version, host, cloud_*, instance_type} 1. */
static void put_info(rt_prom_out *f, const rt_host *host, const rt_cloud *cloud)
{
    rt_kv kv[6];
    size_t n = 0;
    kv[n++] = (rt_kv){"version", RT_VERSION};
    const char *vals[5] = {host ? host->hostname : NULL, cloud ? cloud->vendor_id : NULL,
                           cloud ? cloud->region_id : NULL, cloud ? cloud->zone_id : NULL,
                           cloud ? cloud->instance_type : NULL};
    const char *keys[5] = {"host", "cloud_vendor", "cloud_region", "cloud_zone", "instance_type"};
    for (size_t i = 0; i < 5; i++)
        if (vals[i])
            kv[n++] = (rt_kv){keys[i], vals[i]};
    rt_prom_family(f, "resource_tracker", RT_PROM_INFO,
                   "The tracker's version and the host and cloud it runs on (value 1).");
    rt_prom_u64(f, kv, n, 1);
}

static const metric sample_metrics[] = {
    M("sample_timestamp_seconds", G, V_NUM, rt_sample, timestamp_secs, 3,
      "Unix time of the sample these figures come from."),
    M("sample_interval_seconds", G, V_NUM, rt_sample, interval_secs, DEC_FINE,
      "Seconds the sample's interval lasted."),
};

/* Everything of one sample, after the info metric. */
static void put_sample(rt_prom_out *f, const rt_sample *s)
{
    put_table(f, sample_metrics, RT_ARRAY_LEN(sample_metrics), (const void *const *)&s, 1, NULL, NULL);
    if (s->cpu)
        put_table(f, cpu_metrics, RT_ARRAY_LEN(cpu_metrics), (const void *const *)&s->cpu, 1, NULL, NULL);
    if (s->memory)
        put_memory(f, s->memory);
    put_table(f, disk_metrics, RT_ARRAY_LEN(disk_metrics), (const void *const *)s->disk, s->disk_count, "device",
              disk_name);
    put_table(f, net_metrics, RT_ARRAY_LEN(net_metrics), (const void *const *)s->network, s->network_count,
              "interface", iface_name);
    put_table(f, fs_metrics, RT_ARRAY_LEN(fs_metrics), (const void *const *)&s, 1, NULL, NULL);
    if (s->pressure)
        put_psi(f, s->pressure, "resource_tracker_pressure_some_seconds", "resource_tracker_pressure_full_seconds",
                "the machine");
    if (s->gpu_count) {
        put_gpu_info(f, s);
        put_table(f, gpu_metrics, RT_ARRAY_LEN(gpu_metrics), (const void *const *)s->gpu, s->gpu_count, "gpu",
                  gpu_name);
    }
    if (s->process) {
        put_table(f, process_metrics, RT_ARRAY_LEN(process_metrics), (const void *const *)&s->process, 1, NULL,
                  NULL);
        put_parts(f, s->process);
    }
    const rt_cgroup *g = s->process ? s->process->cgroup : s->cgroup;
    if (g)
        put_cgroup(f, g);
}

/* Whether [s, s + n) ends with the NUL-terminated sfx. */
static bool ends_with(const char *s, size_t n, const char *sfx)
{
    size_t k = strlen(sfx);
    return n >= k && memcmp(s + n - k, sfx, k) == 0;
}

void rt_prom_openmetrics_of(const char *text, size_t len, rt_ob *o)
{
    size_t i = 0;
    while (i < len) {
        const char *line = text + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) : len - i;
        i += n + (nl ? 1 : 0);
        bool help = n > 7 && memcmp(line, "# HELP ", 7) == 0, type = n > 7 && memcmp(line, "# TYPE ", 7) == 0;
        if (!help && !type) {
            rt_ob_put(o, line, n);
            rt_ob_put(o, "\n", 1);
            continue;
        }
        const char *name = line + 7;
        const char *sp = memchr(name, ' ', n - 7);
        size_t nlen = sp ? (size_t)(sp - name) : n - 7;
        /* the family's type: this line's word, or for HELP the TYPE line after it */
        const char *tl = type ? line : text + i;
        size_t tn = type ? n : (memchr(tl, '\n', len - i) ? (size_t)((const char *)memchr(tl, '\n', len - i) - tl)
                                                          : len - i);
        bool counter = tn >= 8 && ends_with(tl, tn, " counter"), gauge = tn >= 6 && ends_with(tl, tn, " gauge");
        bool is_info = gauge && ends_with(name, nlen, "_info");
        size_t keep = counter && ends_with(name, nlen, "_total") ? nlen - 6 : is_info ? nlen - 5 : nlen;
        rt_ob_put(o, line, 7 + keep);
        if (type && is_info)
            rt_ob_lit(o, " info");
        else
            rt_ob_put(o, name + nlen, n - 7 - nlen);
        rt_ob_put(o, "\n", 1);
    }
    rt_ob_lit(o, "# EOF\n");
}

size_t rt_format_prometheus(const rt_sample *sample, const rt_job *job, const rt_host *host, const rt_cloud *cloud,
                            int openmetrics, char *buf, size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_labels labels;
    /* out of memory: the figures still go out, without the job's labels (nothing to report
     * the failure through) */
    if (rt_labels_from_job(job, &labels) != RT_OK)
        memset(&labels, 0, sizeof labels);
    rt_prom_out f = {.o = &o, .labels = &labels, .openmetrics = openmetrics != 0};
    put_info(&f, host, cloud);
    if (sample)
        put_sample(&f, sample);
    if (f.openmetrics)
        rt_ob_lit(&o, "# EOF\n");
    rt_labels_free(&labels);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}
