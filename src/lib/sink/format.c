/* format.c - the JSON-lines and CSV views of one sample (contracts §2 and §3), written into a
 * caller's buffer with snprintf-like sizing, and the writer that sends each line with one
 * write(2). Numbers are formatted by hand: fixed decimals, trailing zeros trimmed. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/utf8.h"
#include "../core/core.h"
#include "sink.h"

void rt_ob_put(rt_ob *o, const char *s, size_t n)
{
    if (n == 0)
        return;
    if (o->len < o->cap) {
        size_t room = o->cap - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
    o->last = s[n - 1];
}

void rt_ob_lit(rt_ob *o, const char *s)
{
    rt_ob_put(o, s, strlen(s));
}

void rt_ob_u64(rt_ob *o, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    rt_ob_put(o, tmp + i, sizeof tmp - i);
}

void rt_ob_i64(rt_ob *o, int64_t v)
{
    if (v < 0) {
        rt_ob_put(o, "-", 1);
        rt_ob_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        rt_ob_u64(o, (uint64_t)v);
    }
}

void rt_ob_fixed(rt_ob *o, double v, int decimals, const char *null_text)
{
    if (!isfinite(v)) {
        rt_ob_lit(o, null_text);
        return;
    }
    static const double pow10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    double scaled = fabs(v) * pow10[decimals];
    if (scaled >= 9e15) { /* beyond exact integers: let printf do it */
        char tmp[64];
        int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
        if (n > 0)
            rt_ob_put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
        return;
    }
    uint64_t r = (uint64_t)llround(scaled);
    uint64_t div = (uint64_t)pow10[decimals];
    uint64_t ip = r / div, fp = r % div;
    if (v < 0 && r != 0)
        rt_ob_put(o, "-", 1);
    rt_ob_u64(o, ip);
    if (fp == 0)
        return;
    char frac[12];
    int nd = decimals;
    for (int i = nd - 1; i >= 0; i--) {
        frac[i] = (char)('0' + fp % 10);
        fp /= 10;
    }
    while (nd > 0 && frac[nd - 1] == '0')
        nd--;
    rt_ob_put(o, ".", 1);
    rt_ob_put(o, frac, (size_t)nd);
}

void rt_ob_json_str(rt_ob *o, const char *s)
{
    if (!s) {
        rt_ob_lit(o, "null");
        return;
    }
    rt_ob_put(o, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            size_t j = i;
            while (j < n && p[j] >= 0x20 && p[j] != '"' && p[j] != '\\' && p[j] < 0x80)
                j++;
            rt_ob_put(o, s + i, j - i);
            i = j;
            continue;
        }
        switch (c) {
        case '"': rt_ob_lit(o, "\\\""); i++; continue;
        case '\\': rt_ob_lit(o, "\\\\"); i++; continue;
        case '\n': rt_ob_lit(o, "\\n"); i++; continue;
        case '\r': rt_ob_lit(o, "\\r"); i++; continue;
        case '\t': rt_ob_lit(o, "\\t"); i++; continue;
        default: break;
        }
        if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            rt_ob_lit(o, esc);
            i++;
            continue;
        }
        size_t l = rt_utf8_len(p + i, n - i);
        if (l == 0) {
            rt_ob_lit(o, "\\ufffd"); /* not UTF-8: keep the JSON valid */
            i++;
        } else {
            rt_ob_put(o, s + i, l);
            i += l;
        }
    }
    rt_ob_put(o, "\"", 1);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

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
    jobject(o, "process", s->process, process_fields, RT_ARRAY_LEN(process_fields));
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

/* ---- CSV ------------------------------------------------------------------------------------ */

static const char csv_header[] =
    "timestamp,system_processes,system_utime,system_stime,system_cpu_usage,"
    "system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,system_memory_cached_mib,"
    "system_memory_active_mib,system_memory_inactive_mib,system_disk_read_bytes,system_disk_write_bytes,"
    "system_disk_space_total_gb,system_disk_space_used_gb,system_disk_space_free_gb,"
    "system_net_recv_bytes,system_net_sent_bytes,system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,"
    "process_pid,process_children,process_utime,process_stime,process_cpu_usage,process_memory_mib,"
    "process_disk_read_bytes,process_disk_write_bytes,process_gpu_usage,process_gpu_vram_mib,"
    "process_gpu_utilized\n";

const char *rt_csv_header(void)
{
    return csv_header;
}

/* A CSV cell: a comma, then v with at most dec decimals (empty when not finite). */
static void cnum(rt_ob *o, double v, int dec)
{
    rt_ob_put(o, ",", 1);
    rt_ob_fixed(o, v, dec, "");
}

/* A CSV cell: a comma, then v (empty for RT_NULL_U64). */
static void cu64(rt_ob *o, uint64_t v)
{
    rt_ob_put(o, ",", 1);
    if (v != RT_NULL_U64)
        rt_ob_u64(o, v);
}

/* Bytes as GiB; NaN for RT_NULL_U64. */
static double gib(uint64_t b)
{
    return b == RT_NULL_U64 ? NAN : (double)b / (1024.0 * 1024.0 * 1024.0);
}

void rt_csv_sample(rt_ob *o, const rt_sample *s)
{
    rt_ob_fixed(o, s->timestamp_secs, 3, "");
    rt_ob_put(o, ",", 1);
    if (s->cpu->process_count != RT_NULL_I64)
        rt_ob_i64(o, s->cpu->process_count);
    cnum(o, s->cpu->utime_secs, 6);
    cnum(o, s->cpu->stime_secs, 6);
    cnum(o, s->cpu->utilization_pct, 4);
    cnum(o, s->memory->free_mib, 3);
    cnum(o, s->memory->used_mib, 3);
    cnum(o, s->memory->buffers_mib, 3);
    cnum(o, s->memory->cached_mib, 3);
    cnum(o, s->memory->active_mib, 3);
    cnum(o, s->memory->inactive_mib, 3);
    /* sums over disks and interfaces; with none there is a true zero: nothing was moved */
    uint64_t rd = 0, wr = 0, rx = 0, tx = 0;
    for (size_t i = 0; i < s->disk_count; i++)
        if (s->disk[i]->read_bytes != RT_NULL_U64) {
            rd += s->disk[i]->read_bytes;
            wr += s->disk[i]->write_bytes;
        }
    for (size_t i = 0; i < s->network_count; i++) {
        rx += s->network[i]->rx_bytes;
        tx += s->network[i]->tx_bytes;
    }
    cu64(o, rd);
    cu64(o, wr);
    cnum(o, gib(s->disk_space_total_bytes), 3);
    cnum(o, gib(s->disk_space_used_bytes), 3);
    cnum(o, gib(s->disk_space_free_bytes), 3);
    cu64(o, rx);
    cu64(o, tx);
    /* GPU: sums over the machine's GPUs (fractional GPUs busy, MiB used, GPUs busy); with
     * none they are zero, and empty when no GPU could report */
    double busy = 0, vram = 0;
    int64_t utilized = 0;
    bool known = s->gpu_count == 0;
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (!isnan(g->utilization_pct)) {
            busy += g->utilization_pct / 100.0;
            utilized += g->utilization_pct > 0;
            known = true;
        }
        if (g->vram_used_bytes != RT_NULL_U64)
            vram += (double)g->vram_used_bytes / 1048576.0;
    }
    cnum(o, known ? busy : NAN, 4);
    cnum(o, known ? vram : NAN, 3);
    rt_ob_put(o, ",", 1);
    if (known)
        rt_ob_i64(o, utilized);
    const rt_process *p = s->process;
    if (!p) { /* process columns: empty without a tracked process */
        rt_ob_lit(o, ",,,,,,,,,,,\n");
        return;
    }
    rt_ob_put(o, ",", 1);
    rt_ob_i64(o, p->pid);
    rt_ob_put(o, ",", 1);
    rt_ob_i64(o, p->child_count);
    cnum(o, p->utime_secs, 6);
    cnum(o, p->stime_secs, 6);
    cnum(o, p->cores_used, 4);
    cnum(o, p->pss_mib, 3);
    cu64(o, p->read_bytes);
    cu64(o, p->write_bytes);
    cnum(o, p->gpu_utilization_pct / 100.0, 4);
    cnum(o, p->gpu_vram_used_bytes == RT_NULL_U64 ? NAN : (double)p->gpu_vram_used_bytes / 1048576.0, 3);
    rt_ob_put(o, ",", 1);
    if (p->gpu_count_used != RT_NULL_I64)
        rt_ob_i64(o, p->gpu_count_used);
    rt_ob_put(o, "\n", 1);
}

size_t rt_format_sample(rt_format format, const rt_sample *sample, const rt_job *job, char *buf, size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_job j = RT_JOB_INIT;
    bool have_job = job && rt_struct_copy(&j, sizeof j, job) == 0;
    if (format == RT_FORMAT_CSV)
        rt_csv_sample(&o, sample);
    else
        rt_json_sample(&o, sample, have_job ? &j : NULL);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

/* ---- writer ---------------------------------------------------------------------------------- */

#define WRITER_MAX (16u << 20)

struct rt_writer {
    rt_format format;
    int fd;
    rt_job job;
    bool have_job;
    bool header_done;
    char *buf;
    size_t cap;
};

rt_error rt_writer_new(rt_format format, int fd, const rt_job *job, rt_writer **out)
{
    *out = NULL;
    rt_job j = RT_JOB_INIT;
    if (fd < 0 || (format != RT_FORMAT_JSON && format != RT_FORMAT_CSV) || rt_struct_copy(&j, sizeof j, job) < 0)
        return RT_ERR_INVALID;
    rt_writer *w = calloc(1, sizeof *w);
    if (!w)
        return RT_ERR_NOMEM;
    w->format = format;
    w->fd = fd;
    w->job = j;
    w->have_job = job != NULL;
    w->cap = 8192;
    w->buf = malloc(w->cap);
    if (!w->buf) {
        free(w);
        return RT_ERR_NOMEM;
    }
    *out = w;
    return RT_OK;
}

/* Writes all n bytes (retrying short writes and EINTR). Returns RT_OK, or RT_ERR_IO with errno. */
static rt_error write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return RT_ERR_IO;
        }
        p += k;
        n -= (size_t)k;
    }
    return RT_OK;
}

rt_error rt_writer_write(rt_writer *w, const rt_sample *sample)
{
    for (;;) {
        rt_ob o = {.buf = w->buf, .cap = w->cap};
        if (w->format == RT_FORMAT_CSV) {
            if (!w->header_done)
                rt_ob_lit(&o, csv_header);
            rt_csv_sample(&o, sample);
        } else {
            rt_json_sample(&o, sample, w->have_job ? &w->job : NULL);
        }
        if (o.len <= w->cap) {
            rt_error e = write_all(w->fd, w->buf, o.len);
            if (e == RT_OK)
                w->header_done = true;
            return e;
        }
        if (o.len > WRITER_MAX)
            return RT_ERR_NOMEM;
        char *nb = realloc(w->buf, o.len + 1024);
        if (!nb)
            return RT_ERR_NOMEM;
        w->buf = nb;
        w->cap = o.len + 1024;
    }
}

void rt_writer_free(rt_writer *w)
{
    if (!w)
        return;
    free(w->buf);
    free(w);
}
