/* json.c - the JSON-lines view of one sample (docs/contracts.md §2), and of the host and cloud
 * facts (`resource-tracker info`, docs/contracts.md §10): members read from the structs
 * through tables of offsets. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdbool.h>

#include "../core/core.h"
#include "sink.h"

/* Each member is written as "key":value followed by a comma; jclose() takes the last comma back
 * and closes the object or array. */

static void key(rt_ob *o, const char *k)
{
    rt_ob_put(o, "\"", 1);
    rt_ob_lit(o, k);
    rt_ob_put(o, "\":", 2);
}

/* Closes an object or array with c, replacing the trailing comma of its last member. */
static void jclose(rt_ob *o, char c)
{
    if (o->last == ',')
        o->len--; /* the byte stays in buf but is overwritten next */
    rt_ob_put(o, &c, 1);
    rt_ob_put(o, ",", 1);
}

/* "k":v with at most dec decimals, or "k":null when v is not finite; then a comma. */
static void jnum(rt_ob *o, const char *k, double v, int dec)
{
    key(o, k);
    rt_ob_fixed(o, v, dec, "null");
    rt_ob_put(o, ",", 1);
}

/* "k":v, or "k":null for RT_NULL_U64; then a comma. */
static void ju64(rt_ob *o, const char *k, uint64_t v)
{
    key(o, k);
    if (v == RT_NULL_U64)
        rt_ob_lit(o, "null");
    else
        rt_ob_u64(o, v);
    rt_ob_put(o, ",", 1);
}

/* "k":v, or "k":null for RT_NULL_I64; then a comma. */
static void ji64(rt_ob *o, const char *k, int64_t v)
{
    key(o, k);
    if (v == RT_NULL_I64)
        rt_ob_lit(o, "null");
    else
        rt_ob_i64(o, v);
    rt_ob_put(o, ",", 1);
}

/* "k":"v" escaped, or "k":null for NULL; then a comma. */
static void jstr(rt_ob *o, const char *k, const char *v)
{
    key(o, k);
    rt_ob_json_str(o, v);
    rt_ob_put(o, ",", 1);
}

/* "k":true or "k":false; then a comma. */
static void jbool(rt_ob *o, const char *k, bool v)
{
    key(o, k);
    rt_ob_lit(o, v ? "true," : "false,");
}

/* The "cpu" member, per-core figures included. */
static void json_cpu(rt_ob *o, const rt_cpu *c)
{
    rt_ob_lit(o, "\"cpu\":{");
    jnum(o, "utilization_pct", c->utilization_pct, 4);
    rt_ob_lit(o, "\"per_core_pct\":[");
    for (size_t i = 0; i < c->core_count; i++) {
        rt_ob_fixed(o, c->per_core_pct[i], 2, "null");
        rt_ob_put(o, ",", 1);
    }
    jclose(o, ']');
    jnum(o, "utime_secs", c->utime_secs, 2);
    jnum(o, "stime_secs", c->stime_secs, 2);
    ji64(o, "process_count", c->process_count);
    jnum(o, "process_cores_used", c->process_cores_used, 4);
    ji64(o, "process_child_count", c->process_child_count);
    jclose(o, '}');
}

/* A member of a JSON object, read from a struct at its offset. */
typedef enum { F_STR, F_U64, F_I64, F_NUM, F_BOOL } ftype;
typedef struct field {
    const char *name;
    ftype type;
    size_t off;
    int dec; /* decimals of an F_NUM */
} field;

#define FS(st, m) {#m, F_STR, offsetof(st, m), 0}
#define FU(st, m) {#m, F_U64, offsetof(st, m), 0}
#define FI(st, m) {#m, F_I64, offsetof(st, m), 0}
#define FN(st, m, d) {#m, F_NUM, offsetof(st, m), d}
#define FB(st, m) {#m, F_BOOL, offsetof(st, m), 0}

/* Writes the members fields[0..n) of the struct at base, without the braces. */
static void jfields(rt_ob *o, const void *base, const field *f, size_t n)
{
    const char *b = base;
    for (size_t i = 0; i < n; i++) {
        const void *at = b + f[i].off;
        switch (f[i].type) {
        case F_STR: jstr(o, f[i].name, *(const char *const *)at); break;
        case F_U64: ju64(o, f[i].name, *(const uint64_t *)at); break;
        case F_I64: ji64(o, f[i].name, *(const int64_t *)at); break;
        case F_NUM: jnum(o, f[i].name, *(const double *)at, f[i].dec); break;
        case F_BOOL: jbool(o, f[i].name, *(const int *)at != 0); break;
        }
    }
}

static const field process_fields[] = {
    FI(rt_process, pid),           FB(rt_process, alive),
    FI(rt_process, child_count),   FI(rt_process, thread_count),
    FN(rt_process, cores_used, 4), FN(rt_process, utime_secs, 3),
    FN(rt_process, stime_secs, 3), FN(rt_process, cpu_secs_total, 3),
    FN(rt_process, pss_mib, 3),    FN(rt_process, rss_mib, 3),
    FN(rt_process, rss_peak_mib, 3), FN(rt_process, swap_mib, 3),
    FN(rt_process, read_bytes_per_sec, 2), FN(rt_process, write_bytes_per_sec, 2),
    FU(rt_process, read_bytes_total),      FU(rt_process, write_bytes_total),
    FU(rt_process, cancelled_write_bytes_total), FN(rt_process, gpu_utilization_pct, 2),
    FU(rt_process, gpu_vram_used_bytes),    FI(rt_process, gpu_count_used),
    FN(rt_process, memory_peak_mib, 3),    FN(rt_process, rss_hwm_mib, 3),
    FU(rt_process, gpu_vram_peak_bytes),
};

static const field part_fields[] = {
    FN(rt_process_part, total_rss_mib, 3), FN(rt_process_part, private_rss_mib, 3),
    FN(rt_process_part, shared_rss_mib, 3), FN(rt_process_part, cores_used, 4),
    FI(rt_process_part, thread_count),     FU(rt_process_part, gpu_vram_used_bytes),
};

static const field cgroup_fields[] = {
    FS(rt_cgroup, path),                  FS(rt_cgroup, version),
    FB(rt_cgroup, own),                   FB(rt_cgroup, exclusive),
    FN(rt_cgroup, cpu_secs_total, 3),     FN(rt_cgroup, memory_mib, 3),
    FN(rt_cgroup, memory_peak_mib, 3),    FI(rt_cgroup, pids),
    FI(rt_cgroup, pids_peak),             FU(rt_cgroup, read_bytes_total),
    FU(rt_cgroup, write_bytes_total),     FN(rt_cgroup, cpu_quota_cores, 4),
    FN(rt_cgroup, cpu_period_secs, 3),    FN(rt_cgroup, memory_limit_mib, 3),
    FN(rt_cgroup, memory_high_mib, 3),    FI(rt_cgroup, pids_limit),
    FU(rt_cgroup, cpu_periods),           FU(rt_cgroup, cpu_throttled_periods),
    FN(rt_cgroup, cpu_throttled_secs, 3), FN(rt_cgroup, cpu_throttled_pct, 2),
    FU(rt_cgroup, oom_kills),             FU(rt_cgroup, memory_max_events),
    FN(rt_cgroup, memory_reclaimable_mib, 3), FN(rt_cgroup, memory_unreclaimable_peak_mib, 3),
};

static const field pressure_fields[] = {
    FN(rt_pressure, some_avg10, 2),      FN(rt_pressure, full_avg10, 2),
    FN(rt_pressure, some_pct, 2),        FN(rt_pressure, full_pct, 2),
    FU(rt_pressure, some_total_usec),    FU(rt_pressure, full_total_usec),
};

static const field memory_fields[] = {
    FN(rt_memory, total_mib, 3),      FN(rt_memory, free_mib, 3),      FN(rt_memory, available_mib, 3),
    FN(rt_memory, used_mib, 3),       FN(rt_memory, used_pct, 2),      FN(rt_memory, buffers_mib, 3),
    FN(rt_memory, cached_mib, 3),     FN(rt_memory, active_mib, 3),    FN(rt_memory, inactive_mib, 3),
    FN(rt_memory, swap_total_mib, 3), FN(rt_memory, swap_used_mib, 3), FN(rt_memory, swap_used_pct, 2),
};

static const field iface_fields[] = {
    FS(rt_net_iface, interface),           FS(rt_net_iface, mac_address),         FS(rt_net_iface, driver),
    FS(rt_net_iface, operstate),           FI(rt_net_iface, speed_mbps),          FI(rt_net_iface, mtu),
    FN(rt_net_iface, rx_bytes_per_sec, 2), FN(rt_net_iface, tx_bytes_per_sec, 2), FU(rt_net_iface, rx_bytes_total),
    FU(rt_net_iface, tx_bytes_total),
};

static const field disk_fields[] = {
    FS(rt_disk, device),                FS(rt_disk, model),                  FS(rt_disk, vendor),
    FS(rt_disk, serial),                FS(rt_disk, device_type),            FU(rt_disk, capacity_bytes),
    FN(rt_disk, read_bytes_per_sec, 2), FN(rt_disk, write_bytes_per_sec, 2), FU(rt_disk, read_bytes_total),
    FU(rt_disk, write_bytes_total),
};

static const field mount_fields[] = {
    FS(rt_mount, mount_point), FS(rt_mount, filesystem),      FU(rt_mount, total_bytes),
    FU(rt_mount, used_bytes),  FU(rt_mount, available_bytes), FN(rt_mount, used_pct, 2),
};

/* "name":{members}, or "name":null for a NULL base. */
static void jobject(rt_ob *o, const char *name, const void *base, const field *f, size_t n)
{
    key(o, name);
    if (!base) {
        rt_ob_lit(o, "null,");
        return;
    }
    rt_ob_put(o, "{", 1);
    jfields(o, base, f, n);
    jclose(o, '}');
}

/* "name":[{members},...] over the n structs items[0..n) point to. */
static void jarray(rt_ob *o, const char *name, const void *const *items, size_t n, const field *f, size_t nf)
{
    key(o, name);
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < n; i++) {
        rt_ob_put(o, "{", 1);
        jfields(o, items[i], f, nf);
        jclose(o, '}');
    }
    jclose(o, ']');
}

static const field gpu_fields[] = {
    FS(rt_gpu, uuid),                FS(rt_gpu, name),                FS(rt_gpu, device_type),
    FS(rt_gpu, host_id),             FN(rt_gpu, utilization_pct, 2),  FU(rt_gpu, vram_total_bytes),
    FU(rt_gpu, vram_used_bytes),     FN(rt_gpu, vram_used_pct, 2),    FN(rt_gpu, temperature_celsius, 1),
    FN(rt_gpu, power_watts, 3),      FN(rt_gpu, frequency_mhz, 1),    FI(rt_gpu, core_count),
};

/* The "gpu" array: each GPU with its "detail" object between its identity and its figures. */
static void json_gpus(rt_ob *o, const rt_sample *s)
{
    rt_ob_lit(o, "\"gpu\":[");
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        rt_ob_put(o, "{", 1);
        jfields(o, g, gpu_fields, 4);
        rt_ob_lit(o, "\"detail\":{");
        for (size_t k = 0; k < g->detail_count; k++)
            jstr(o, g->detail[k].key, g->detail[k].value);
        jclose(o, '}');
        jfields(o, g, gpu_fields + 4, RT_ARRAY_LEN(gpu_fields) - 4);
        jclose(o, '}');
    }
    jclose(o, ']');
}

/* The "disk" array: each disk with its "mounts". */
static void json_disks(rt_ob *o, const rt_sample *s)
{
    rt_ob_lit(o, "\"disk\":[");
    for (size_t i = 0; i < s->disk_count; i++) {
        const rt_disk *d = s->disk[i];
        rt_ob_put(o, "{", 1);
        jfields(o, d, disk_fields, RT_ARRAY_LEN(disk_fields));
        jarray(o, "mounts", (const void *const *)d->mounts, d->mount_count, mount_fields, RT_ARRAY_LEN(mount_fields));
        jclose(o, '}');
    }
    jclose(o, ']');
}

/* Whether the kernel gave any figure of this pressure (a group without *.pressure files has
 * none: its member is null). */
static bool pressure_known(const rt_pressure *p)
{
    return p->some_total_usec != RT_NULL_U64 || p->full_total_usec != RT_NULL_U64 || !isnan(p->some_avg10) ||
           !isnan(p->full_avg10);
}

/* "name":{"cpu":P,"memory":P,"io":P}, or "name":null for NULL; each P null when unknown. */
static void json_psi(rt_ob *o, const char *name, const rt_psi *ps)
{
    key(o, name);
    if (!ps) {
        rt_ob_lit(o, "null,");
        return;
    }
    rt_ob_put(o, "{", 1);
    const char *names[] = {"cpu", "memory", "io"};
    const rt_pressure *each[] = {&ps->cpu, &ps->memory, &ps->io};
    for (size_t i = 0; i < RT_ARRAY_LEN(each); i++)
        jobject(o, names[i], pressure_known(each[i]) ? each[i] : NULL, pressure_fields, RT_ARRAY_LEN(pressure_fields));
    jclose(o, '}');
}

/* "cgroup":{figures,"pressure":{..}}, or "cgroup":null for NULL. */
static void json_cgroup(rt_ob *o, const rt_cgroup *g)
{
    key(o, "cgroup");
    if (!g) {
        rt_ob_lit(o, "null,");
        return;
    }
    rt_ob_put(o, "{", 1);
    jfields(o, g, cgroup_fields, RT_ARRAY_LEN(cgroup_fields));
    json_psi(o, "pressure", &g->pressure);
    jclose(o, '}');
}

/* The "process" member: the tree's figures, its "cgroup" (null without one), then its split
 * into "main", "descendants" and "combined" (0.8). */
static void json_process(rt_ob *o, const rt_process *p)
{
    key(o, "process");
    if (!p) {
        rt_ob_lit(o, "null,");
        return;
    }
    rt_ob_put(o, "{", 1);
    jfields(o, p, process_fields, RT_ARRAY_LEN(process_fields));
    json_cgroup(o, p->cgroup);
    jobject(o, "main", p->main, part_fields, RT_ARRAY_LEN(part_fields));
    jobject(o, "descendants", p->descendants, part_fields, RT_ARRAY_LEN(part_fields));
    jobject(o, "combined", p->combined, part_fields, RT_ARRAY_LEN(part_fields));
    jclose(o, '}');
}

void rt_json_sample(rt_ob *o, const rt_sample *s, const rt_job *job)
{
    rt_ob_put(o, "{", 1);
    jnum(o, "timestamp_secs", s->timestamp_secs, 3);
    jnum(o, "interval_secs", s->interval_secs, 3);
    jstr(o, "job_name", job ? job->job_name : NULL);
    json_cpu(o, s->cpu);
    jobject(o, "memory", s->memory, memory_fields, RT_ARRAY_LEN(memory_fields));
    jarray(o, "network", (const void *const *)s->network, s->network_count, iface_fields, RT_ARRAY_LEN(iface_fields));
    json_disks(o, s);
    json_gpus(o, s);
    json_process(o, s->process);
    json_psi(o, "pressure", s->pressure);
    json_cgroup(o, s->cgroup); /* the tracker's own group (whole machine only) */
    jclose(o, '}');
    o->len--; /* no comma after the sample: a newline */
    rt_ob_put(o, "\n", 1);
}

/* ---- host and cloud ----------------------------------------------------------------------- */

static const field host_fields[] = {
    FS(rt_host, hostname),        FS(rt_host, host_id),        FS(rt_host, ip),
    FI(rt_host, vcpus),           FS(rt_host, cpu_model),      FN(rt_host, memory_mib, 3),
    FS(rt_host, gpu_model),       FI(rt_host, gpu_count),      FN(rt_host, gpu_memory_mib, 3),
    FN(rt_host, storage_gb, 3),   FS(rt_host, kernel),         FS(rt_host, os),
    FS(rt_host, allocation),
};

static const field cloud_fields[] = {
    FS(rt_cloud, vendor_id), FS(rt_cloud, account_id),    FS(rt_cloud, region_id),
    FS(rt_cloud, zone_id),   FS(rt_cloud, instance_type), FN(rt_cloud, discovery_secs, 3),
};

size_t rt_format_info(const rt_host *host, const rt_cloud *cloud, char *buf, size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_ob_put(&o, "{", 1);
    jobject(&o, "host", host, host_fields, RT_ARRAY_LEN(host_fields));
    jobject(&o, "cloud", cloud, cloud_fields, RT_ARRAY_LEN(cloud_fields));
    jclose(&o, '}');
    o.len--; /* the newline instead of the comma */
    rt_ob_put(&o, "\n", 1);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}
