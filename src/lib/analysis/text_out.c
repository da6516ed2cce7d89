/* text_out.c - the line writer the texts for people share (text_out.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/units.h"
#include "text_out.h"

int rt_tx_open(rt_text_out *o, rt_out dst, const rt_summary_text_options *opts)
{
    rt_summary_text_options op = RT_SUMMARY_TEXT_OPTIONS_INIT;
    if (rt_struct_copy(&op, sizeof op, opts) < 0)
        return -1;
    if (op.scheduler != RT_SCHED_METAFLOW && op.scheduler != RT_SCHED_K8S && op.scheduler != RT_SCHED_SLURM)
        return -1;
    memset(o, 0, sizeof *o);
    o->dst = dst;
    o->mem_name = op.memory_unit;
    o->time_name = op.time_unit;
    o->scheduler = (rt_scheduler)op.scheduler;
    o->width = op.width > 0 ? (size_t)op.width : RT_TX_WRAP;
    if (op.memory_unit) {
        const rt_gt_unit *u = rt_gt_unit_find(rt_gt_memory_units, RT_GT_MEMORY_UNITS, op.memory_unit);
        if (!u)
            return -1;
        o->mem_bytes = u->size;
    }
    if (op.time_unit) {
        const rt_gt_unit *u = rt_gt_unit_find(rt_gt_time_units, RT_GT_TIME_UNITS, op.time_unit);
        if (!u)
            return -1;
        o->time_secs = u->size;
    }
    return 0;
}

/* Hands what o holds to the fd or the callback (rt_out_write: short counts go on with the
 * rest). */
void rt_tx_flush(rt_text_out *o)
{
    if (o->err == RT_OK && o->n > 0 && rt_out_write(&o->dst, o->buf, o->n) < 0)
        o->err = RT_ERR_IO;
    o->n = 0;
}

void rt_tx_put(rt_text_out *o, const char *p, size_t len)
{
    while (len > 0 && o->err == RT_OK) {
        if (o->n == sizeof o->buf)
            rt_tx_flush(o);
        size_t k = sizeof o->buf - o->n < len ? sizeof o->buf - o->n : len;
        memcpy(o->buf + o->n, p, k);
        o->n += k;
        p += k;
        len -= k;
    }
    if (o->n > 0 && o->buf[o->n - 1] == '\n')
        rt_tx_flush(o);
}

void rt_tx_put_to(void *o, const char *p, size_t len)
{
    rt_tx_put(o, p, len);
}

const char *rt_tx_scheduler_name(rt_scheduler s)
{
    return s == RT_SCHED_K8S ? "Kubernetes" : s == RT_SCHED_METAFLOW ? "Metaflow" : "SLURM";
}

const char *rt_tx_number(double v, int decimals, const char *suffix, char *b, size_t cap)
{
    if (!isfinite(v))
        snprintf(b, cap, "-");
    else if (fabs(v) >= 1e12)
        snprintf(b, cap, "%.3g%s", v, suffix);
    else
        snprintf(b, cap, "%.*f%s", decimals, v, suffix);
    return b;
}

/* MiB as text into b: the forced unit, or B/KiB/MiB/GiB/TiB as fits; "-" for NaN. */
const char *rt_tx_mem(const rt_text_out *o, double mib, char *b, size_t cap)
{
    char suffix[32];
    if (!isfinite(mib))
        return rt_tx_number(mib, 0, "", b, cap);
    double bytes = mib * 1048576.0;
    if (o->mem_bytes > 0) {
        snprintf(suffix, sizeof suffix, " %s", o->mem_name);
        return rt_tx_number(bytes / o->mem_bytes, 3, suffix, b, cap);
    }
    size_t u = 0;
    while (fabs(bytes) >= 1024.0 && u + 1 < RT_BINARY_UNITS) {
        bytes /= 1024.0;
        u++;
    }
    /* 1023.96 KiB would show as "1024.0 KiB": one unit up instead */
    if (u > 0 && u + 1 < RT_BINARY_UNITS && round(fabs(bytes) * 10) >= 10240) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(suffix, sizeof suffix, " %s", rt_binary_units[u]);
    return rt_tx_number(bytes, u == 0 ? 0 : 1, suffix, b, cap);
}

/* Seconds as text: the forced unit, or "1 h 02 min 03 s", "3 min 04.5 s", "12.34 s"
 * (rounded before it is split, so never "2 min 60.0 s"), "-" for NaN. */
const char *rt_tx_dur(const rt_text_out *o, double secs, char *b, size_t cap)
{
    char suffix[32];
    if (!isfinite(secs))
        return rt_tx_number(secs, 0, "", b, cap);
    if (o->time_secs > 0) {
        snprintf(suffix, sizeof suffix, " %s", o->time_name);
        return rt_tx_number(secs / o->time_secs, 4, suffix, b, cap);
    }
    if (round(secs * 100) < 6000)
        return rt_tx_number(secs, 2, " s", b, cap);
    if (round(secs * 10) < 36000) {
        double t = round(secs * 10) / 10;
        snprintf(b, cap, "%d min %04.1f s", (int)(t / 60), fmod(t, 60));
    } else if (secs < 86400) {
        long t = (long)secs;
        snprintf(b, cap, "%ld h %02ld min %02ld s", t / 3600, t / 60 % 60, t % 60);
    } else if (secs < 1e12) {
        long long t = (long long)secs;
        snprintf(b, cap, "%lld d %02lld h %02lld min", t / 86400, t / 3600 % 24, t / 60 % 60);
    } else {
        rt_tx_number(secs, 0, " s", b, cap);
    }
    return b;
}

/* Writes text after a head already written (used columns wide), broken at spaces so that no
 * line passes o->width columns; the lines after the first start with indent spaces. A '\x1f' (a
 * unit separator) is a space no line is broken at, written as a space. */
RT_API size_t rt_text_wrap(const char *text, size_t used, size_t indent, size_t width, char *out, size_t cap)
{
    size_t at = 0, col = used;
    if (!out || !cap)
        return 0;
    bool first = true; /* no word on this line yet */
    for (const char *p = text ? text : ""; *p && at + 1 < cap;) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " "), cols = 0;
        if (!word)
            break;
        for (size_t i = 0; i < word; i++) /* columns: UTF-8 characters, not bytes */
            cols += ((unsigned char)p[i] & 0xC0) != 0x80;
        int n;
        if (!first && width && col + 1 + cols > width) {
            n = snprintf(out + at, cap - at, "\n%*s%.*s", (int)indent, "", (int)word, p);
            col = indent + cols;
        } else {
            n = snprintf(out + at, cap - at, "%s%.*s", first ? "" : " ", (int)word, p);
            col += cols + !first;
        }
        if (n < 0)
            break;
        for (size_t i = at; i < at + (size_t)n && i < cap; i++)
            out[i] = out[i] == '\x1f' ? ' ' : out[i];
        at += (size_t)n;
        first = false;
        p += word;
    }
    if (at >= cap)
        at = cap - 1;
    out[at] = '\0';
    return at;
}

void rt_tx_wrapped(rt_text_out *o, size_t used, size_t indent, const char *text)
{
    /* room for the worst case: every word one character on a line of its own */
    char small[2048];
    size_t need = strlen(text) * (indent + 2) + 2;
    char *buf = need <= sizeof small ? small : malloc(need);
    if (!buf) {
        o->err = RT_ERR_NOMEM;
        return;
    }
    size_t n = rt_text_wrap(text, used, indent, o->width, buf, need);
    rt_tx_put(o, buf, n);
    rt_tx_put(o, "\n", 1);
    if (buf != small)
        free(buf);
}

/* Joules as text: J, kJ, MJ or GJ with three significant digits at most; "-" for NaN. */
const char *rt_tx_joules(double j, char *b, size_t cap)
{
    static const char *const units[] = {"J", "kJ", "MJ", "GJ", "TJ"};
    if (!isfinite(j))
        return rt_tx_number(j, 0, "", b, cap);
    size_t u = 0;
    while (fabs(j) >= 999.95 && u + 1 < RT_ARRAY_LEN(units)) {
        j /= 1000.0;
        u++;
    }
    char suffix[8];
    snprintf(suffix, sizeof suffix, " %s", units[u]);
    return rt_tx_number(j, fabs(j) >= 99.95 ? 0 : 1, suffix, b, cap);
}
