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

#include "../core/core.h"
#include "sink.h"

void rt_ob_put(rt_ob *o, const char *s, size_t n)
{
    if (o->len < o->cap) {
        size_t room = o->cap - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
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

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length, or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
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
        size_t l = utf8_len(p + i, n - i);
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

static void key(rt_ob *o, const char *k)
{
    rt_ob_put(o, "\"", 1);
    rt_ob_lit(o, k);
    rt_ob_put(o, "\":", 2);
}

static void jnum(rt_ob *o, const char *k, double v, int dec)
{
    key(o, k);
    rt_ob_fixed(o, v, dec, "null");
}

static void ju64(rt_ob *o, const char *k, uint64_t v)
{
    key(o, k);
    if (v == RT_NULL_U64)
        rt_ob_lit(o, "null");
    else
        rt_ob_u64(o, v);
}

static void ji64(rt_ob *o, const char *k, int64_t v)
{
    key(o, k);
    if (v == RT_NULL_I64)
        rt_ob_lit(o, "null");
    else
        rt_ob_i64(o, v);
}

static void jstr(rt_ob *o, const char *k, const char *v)
{
    key(o, k);
    rt_ob_json_str(o, v);
}

static void json_cpu(rt_ob *o, const rt_cpu *c)
{
    rt_ob_lit(o, "\"cpu\":{");
    jnum(o, "utilization_pct", c->utilization_pct, 4);
    rt_ob_lit(o, ",\"per_core_pct\":[");
    for (size_t i = 0; i < c->core_count; i++) {
        if (i)
            rt_ob_put(o, ",", 1);
        rt_ob_fixed(o, c->per_core_pct[i], 2, "null");
    }
    rt_ob_lit(o, "],");
    jnum(o, "utime_secs", c->utime_secs, 2);
    rt_ob_put(o, ",", 1);
    jnum(o, "stime_secs", c->stime_secs, 2);
    rt_ob_put(o, ",", 1);
    ji64(o, "process_count", c->process_count);
    rt_ob_put(o, ",", 1);
    jnum(o, "process_cores_used", c->process_cores_used, 4);
    rt_ob_put(o, ",", 1);
    ji64(o, "process_child_count", c->process_child_count);
    rt_ob_put(o, "}", 1);
}

static void json_process(rt_ob *o, const rt_process *p)
{
    rt_ob_lit(o, "\"process\":");
    if (!p) {
        rt_ob_lit(o, "null");
        return;
    }
    rt_ob_put(o, "{", 1);
    ji64(o, "pid", p->pid);
    rt_ob_lit(o, p->alive ? ",\"alive\":true," : ",\"alive\":false,");
    ji64(o, "child_count", p->child_count);
    rt_ob_put(o, ",", 1);
    ji64(o, "thread_count", p->thread_count);
    rt_ob_put(o, ",", 1);
    jnum(o, "cores_used", p->cores_used, 4);
    rt_ob_put(o, ",", 1);
    jnum(o, "utime_secs", p->utime_secs, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "stime_secs", p->stime_secs, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "cpu_secs_total", p->cpu_secs_total, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "pss_mib", p->pss_mib, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "rss_mib", p->rss_mib, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "swap_mib", p->swap_mib, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "read_bytes_per_sec", p->read_bytes_per_sec, 2);
    rt_ob_put(o, ",", 1);
    jnum(o, "write_bytes_per_sec", p->write_bytes_per_sec, 2);
    rt_ob_put(o, ",", 1);
    ju64(o, "read_bytes_total", p->read_bytes_total);
    rt_ob_put(o, ",", 1);
    ju64(o, "write_bytes_total", p->write_bytes_total);
    rt_ob_put(o, ",", 1);
    jnum(o, "gpu_utilization_pct", p->gpu_utilization_pct, 2);
    rt_ob_put(o, ",", 1);
    ju64(o, "gpu_vram_used_bytes", p->gpu_vram_used_bytes);
    rt_ob_put(o, ",", 1);
    ji64(o, "gpu_count_used", p->gpu_count_used);
    rt_ob_put(o, "}", 1);
}

static void json_memory(rt_ob *o, const rt_memory *m)
{
    static const struct {
        const char *name;
        size_t off;
        int dec;
    } f[] = {
#define F(n, d) {#n, offsetof(rt_memory, n), d}
        F(total_mib, 3),    F(free_mib, 3),       F(available_mib, 3), F(used_mib, 3),
        F(used_pct, 2),     F(buffers_mib, 3),    F(cached_mib, 3),    F(active_mib, 3),
        F(inactive_mib, 3), F(swap_total_mib, 3), F(swap_used_mib, 3), F(swap_used_pct, 2),
#undef F
    };
    rt_ob_lit(o, "\"memory\":{");
    for (size_t i = 0; i < RT_ARRAY_LEN(f); i++) {
        if (i)
            rt_ob_put(o, ",", 1);
        jnum(o, f[i].name, *(const double *)((const char *)m + f[i].off), f[i].dec);
    }
    rt_ob_put(o, "}", 1);
}

static void json_network(rt_ob *o, const rt_sample *s)
{
    rt_ob_lit(o, "\"network\":[");
    for (size_t i = 0; i < s->network_count; i++) {
        const rt_net_iface *n = &s->network[i];
        rt_ob_lit(o, i ? ",{" : "{");
        jstr(o, "interface", n->interface);
        rt_ob_put(o, ",", 1);
        jstr(o, "mac_address", n->mac_address);
        rt_ob_put(o, ",", 1);
        jstr(o, "driver", n->driver);
        rt_ob_put(o, ",", 1);
        jstr(o, "operstate", n->operstate);
        rt_ob_put(o, ",", 1);
        ji64(o, "speed_mbps", n->speed_mbps);
        rt_ob_put(o, ",", 1);
        ji64(o, "mtu", n->mtu);
        rt_ob_put(o, ",", 1);
        jnum(o, "rx_bytes_per_sec", n->rx_bytes_per_sec, 2);
        rt_ob_put(o, ",", 1);
        jnum(o, "tx_bytes_per_sec", n->tx_bytes_per_sec, 2);
        rt_ob_put(o, ",", 1);
        ju64(o, "rx_bytes_total", n->rx_bytes_total);
        rt_ob_put(o, ",", 1);
        ju64(o, "tx_bytes_total", n->tx_bytes_total);
        rt_ob_put(o, "}", 1);
    }
    rt_ob_put(o, "]", 1);
}

static void json_disks(rt_ob *o, const rt_sample *s)
{
    rt_ob_lit(o, "\"disk\":[");
    for (size_t i = 0; i < s->disk_count; i++) {
        const rt_disk *d = &s->disk[i];
        rt_ob_lit(o, i ? ",{" : "{");
        jstr(o, "device", d->device);
        rt_ob_put(o, ",", 1);
        jstr(o, "model", d->model);
        rt_ob_put(o, ",", 1);
        jstr(o, "vendor", d->vendor);
        rt_ob_put(o, ",", 1);
        jstr(o, "serial", d->serial);
        rt_ob_put(o, ",", 1);
        jstr(o, "device_type", d->device_type);
        rt_ob_put(o, ",", 1);
        ju64(o, "capacity_bytes", d->capacity_bytes);
        rt_ob_put(o, ",", 1);
        jnum(o, "read_bytes_per_sec", d->read_bytes_per_sec, 2);
        rt_ob_put(o, ",", 1);
        jnum(o, "write_bytes_per_sec", d->write_bytes_per_sec, 2);
        rt_ob_put(o, ",", 1);
        ju64(o, "read_bytes_total", d->read_bytes_total);
        rt_ob_put(o, ",", 1);
        ju64(o, "write_bytes_total", d->write_bytes_total);
        rt_ob_lit(o, ",\"mounts\":[");
        for (size_t k = 0; k < d->mount_count; k++) {
            const rt_mount *m = &d->mounts[k];
            rt_ob_lit(o, k ? ",{" : "{");
            jstr(o, "mount_point", m->mount_point);
            rt_ob_put(o, ",", 1);
            jstr(o, "filesystem", m->filesystem);
            rt_ob_put(o, ",", 1);
            ju64(o, "total_bytes", m->total_bytes);
            rt_ob_put(o, ",", 1);
            ju64(o, "used_bytes", m->used_bytes);
            rt_ob_put(o, ",", 1);
            ju64(o, "available_bytes", m->available_bytes);
            rt_ob_put(o, ",", 1);
            jnum(o, "used_pct", m->used_pct, 2);
            rt_ob_put(o, "}", 1);
        }
        rt_ob_lit(o, "]}");
    }
    rt_ob_put(o, "]", 1);
}

void rt_json_sample(rt_ob *o, const rt_sample *s, const rt_job *job)
{
    rt_ob_put(o, "{", 1);
    jnum(o, "timestamp_secs", s->timestamp_secs, 3);
    rt_ob_put(o, ",", 1);
    jnum(o, "interval_secs", s->interval_secs, 3);
    rt_ob_put(o, ",", 1);
    jstr(o, "job_name", job ? job->job_name : NULL);
    rt_ob_put(o, ",", 1);
    json_cpu(o, &s->cpu);
    rt_ob_put(o, ",", 1);
    json_memory(o, &s->memory);
    rt_ob_put(o, ",", 1);
    json_network(o, s);
    rt_ob_put(o, ",", 1);
    json_disks(o, s);
    rt_ob_lit(o, ",\"gpu\":[],");
    json_process(o, s->process);
    rt_ob_lit(o, "}\n");
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

static void cnum(rt_ob *o, double v, int dec)
{
    rt_ob_put(o, ",", 1);
    rt_ob_fixed(o, v, dec, "");
}

static void cu64(rt_ob *o, uint64_t v)
{
    rt_ob_put(o, ",", 1);
    if (v != RT_NULL_U64)
        rt_ob_u64(o, v);
}

static double gib(uint64_t b)
{
    return b == RT_NULL_U64 ? NAN : (double)b / (1024.0 * 1024.0 * 1024.0);
}

void rt_csv_sample(rt_ob *o, const rt_sample *s)
{
    rt_ob_fixed(o, s->timestamp_secs, 3, "");
    rt_ob_put(o, ",", 1);
    if (s->cpu.process_count != RT_NULL_I64)
        rt_ob_i64(o, s->cpu.process_count);
    cnum(o, s->cpu.utime_secs, 6);
    cnum(o, s->cpu.stime_secs, 6);
    cnum(o, s->cpu.utilization_pct, 4);
    cnum(o, s->memory.free_mib, 3);
    cnum(o, s->memory.used_mib, 3);
    cnum(o, s->memory.buffers_mib, 3);
    cnum(o, s->memory.cached_mib, 3);
    cnum(o, s->memory.active_mib, 3);
    cnum(o, s->memory.inactive_mib, 3);
    /* sums over disks and interfaces; with none there is a true zero: nothing was moved */
    uint64_t rd = 0, wr = 0, rx = 0, tx = 0;
    for (size_t i = 0; i < s->disk_count; i++)
        if (s->disk[i].read_bytes != RT_NULL_U64) {
            rd += s->disk[i].read_bytes;
            wr += s->disk[i].write_bytes;
        }
    for (size_t i = 0; i < s->network_count; i++) {
        rx += s->network[i].rx_bytes;
        tx += s->network[i].tx_bytes;
    }
    cu64(o, rd);
    cu64(o, wr);
    cnum(o, gib(s->disk_space_total_bytes), 3);
    cnum(o, gib(s->disk_space_used_bytes), 3);
    cnum(o, gib(s->disk_space_free_bytes), 3);
    cu64(o, rx);
    cu64(o, tx);
    /* GPU: sums over the machine's GPUs; with none they are zero */
    rt_ob_lit(o, ",0,0,0");
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
    rt_ob o = {buf, cap, 0};
    if (format == RT_FORMAT_CSV)
        rt_csv_sample(&o, sample);
    else
        rt_json_sample(&o, sample, job);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

/* ---- writer ---------------------------------------------------------------------------------- */

#define WRITER_MAX (16u << 20)

struct rt_writer {
    rt_format format;
    int fd;
    const rt_job *job;
    bool header_done;
    char *buf;
    size_t cap;
};

rt_error rt_writer_new(rt_format format, int fd, const rt_job *job, rt_writer **out)
{
    *out = NULL;
    if (fd < 0 || (format != RT_FORMAT_JSON && format != RT_FORMAT_CSV))
        return RT_ERR_INVALID;
    rt_writer *w = calloc(1, sizeof *w);
    if (!w)
        return RT_ERR_NOMEM;
    w->format = format;
    w->fd = fd;
    w->job = job;
    w->cap = 8192;
    w->buf = malloc(w->cap);
    if (!w->buf) {
        free(w);
        return RT_ERR_NOMEM;
    }
    *out = w;
    return RT_OK;
}

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
        rt_ob o = {w->buf, w->cap, 0};
        if (w->format == RT_FORMAT_CSV) {
            if (!w->header_done)
                rt_ob_lit(&o, csv_header);
            rt_csv_sample(&o, sample);
        } else {
            rt_json_sample(&o, sample, w->job);
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
