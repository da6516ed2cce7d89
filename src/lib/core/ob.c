/* ob.c - the output builder (ob.h) the views, the exporters and the snapshot share: appends
 * into a caller's fixed buffer and keeps counting past its end (so callers learn the size they
 * need, as with snprintf); numbers are formatted by hand: fixed decimals, trailing zeros trimmed
 * (or kept), or the shortest digits that read back as the same double. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/utf8.h"
#include "resource_tracker.h"
#include "ob.h"

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

void rt_ob_u64_or(rt_ob *o, uint64_t v, const char *null_text)
{
    if (v == RT_NULL_U64)
        rt_ob_lit(o, null_text);
    else
        rt_ob_u64(o, v);
}

void rt_ob_i64_or(rt_ob *o, int64_t v, const char *null_text)
{
    if (v == RT_NULL_I64)
        rt_ob_lit(o, null_text);
    else
        rt_ob_i64(o, v);
}

/* v with `decimals` decimals, trailing zeros trimmed when trim is set. */
static void fixed(rt_ob *o, double v, int decimals, const char *null_text, bool trim);

void rt_ob_fixed(rt_ob *o, double v, int decimals, const char *null_text)
{
    fixed(o, v, decimals, null_text, true);
}

void rt_ob_fixed_all(rt_ob *o, double v, int decimals, const char *null_text)
{
    fixed(o, v, decimals, null_text, false);
}

/* 10^0 .. 10^9: the decimals fixed numbers have */
static const double tens[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

double rt_ob_fixed_value(double v, int decimals)
{
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    double scaled = fabs(v) * tens[decimals];
    if (!isfinite(v) || scaled >= 9e15)
        return v;
    double r = (double)llround(scaled) / tens[decimals];
    return v < 0 ? -r : r;
}

static void fixed(rt_ob *o, double v, int decimals, const char *null_text, bool trim)
{
    if (!isfinite(v)) {
        rt_ob_lit(o, null_text);
        return;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    double scaled = fabs(v) * tens[decimals];
    if (scaled >= 9e15) { /* beyond exact integers: let printf do it */
        char tmp[64];
        int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
        if (n > 0)
            rt_ob_put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
        return;
    }
    uint64_t r = (uint64_t)llround(scaled);
    uint64_t div = (uint64_t)tens[decimals];
    uint64_t ip = r / div, fp = r % div;
    if (v < 0 && r != 0)
        rt_ob_put(o, "-", 1);
    rt_ob_u64(o, ip);
    if (decimals == 0 || (fp == 0 && trim))
        return;
    char frac[12];
    int nd = decimals;
    for (int i = nd - 1; i >= 0; i--) {
        frac[i] = (char)('0' + fp % 10);
        fp /= 10;
    }
    while (trim && nd > 0 && frac[nd - 1] == '0')
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

/* The fewest significant digits (at most 17) that read back as v > 0: the digits into d (no
 * point), their count returned, the decimal exponent of the first digit into *exp10. */
static int shortest_digits(double v, char d[24], int *exp10)
{
    char e[40];
    int p = 1;
    for (; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    if (p == 17)
        snprintf(e, sizeof e, "%.16e", v);
    int n = 0;
    const char *c = e;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && n < 23)
            d[n++] = *c;
    while (n > 1 && d[n - 1] == '0')
        n--;
    d[n] = '\0';
    *exp10 = *c == 'e' ? (int)strtol(c + 1, NULL, 10) : 0;
    return n;
}

void rt_ob_shortest(rt_ob *o, double v, const char *null_text)
{
    if (!isfinite(v)) {
        rt_ob_lit(o, null_text);
        return;
    }
    if (signbit(v))
        rt_ob_put(o, "-", 1);
    v = fabs(v);
    if (v == 0) {
        rt_ob_lit(o, "0.0");
        return;
    }
    char d[24], ex[16];
    int x, n = shortest_digits(v, d, &x);
    int kk = x + 1; /* 10^(kk-1) <= v < 10^kk */
    if (kk >= n && kk <= 16) {  /* 1234e3 -> 1234000.0 */
        rt_ob_put(o, d, (size_t)n);
        for (int i = n; i < kk; i++)
            rt_ob_put(o, "0", 1);
        rt_ob_put(o, ".0", 2);
    } else if (kk > 0 && kk <= 16) { /* 1234e-2 -> 12.34 */
        rt_ob_put(o, d, (size_t)kk);
        rt_ob_put(o, ".", 1);
        rt_ob_put(o, d + kk, (size_t)(n - kk));
    } else if (kk > -5 && kk <= 0) { /* 1234e-6 -> 0.001234 */
        rt_ob_put(o, "0.", 2);
        for (int i = kk; i < 0; i++)
            rt_ob_put(o, "0", 1);
        rt_ob_put(o, d, (size_t)n);
    } else { /* 1e30, 1.234e33, 1e-7 */
        rt_ob_put(o, d, 1);
        if (n > 1) {
            rt_ob_put(o, ".", 1);
            rt_ob_put(o, d + 1, (size_t)(n - 1));
        }
        int m = snprintf(ex, sizeof ex, "e%d", kk - 1);
        rt_ob_put(o, ex, (size_t)m);
    }
}

/* "k": */
static void member_key(rt_ob *o, const char *k)
{
    rt_ob_put(o, "\"", 1);
    rt_ob_lit(o, k);
    rt_ob_put(o, "\":", 2);
}

void rt_ob_member_num(rt_ob *o, const char *k, double v, int dec)
{
    member_key(o, k);
    rt_ob_fixed(o, v, dec, "null");
    rt_ob_put(o, ",", 1);
}

void rt_ob_member_str(rt_ob *o, const char *k, const char *v)
{
    member_key(o, k);
    rt_ob_json_str(o, v);
    rt_ob_put(o, ",", 1);
}

void rt_ob_member_bool(rt_ob *o, const char *k, bool v)
{
    member_key(o, k);
    rt_ob_lit(o, v ? "true," : "false,");
}

void rt_ob_members(rt_ob *o, const void *base, const rt_obm *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *at = (const char *)base + m[i].off;
        double d;
        int64_t i64;
        uint64_t u64;
        int flag;
        const char *str;
        switch (m[i].kind) {
        case RT_OBM_DOUBLE:
            memcpy(&d, at, sizeof d);
            rt_ob_member_num(o, m[i].key, d, m[i].dec);
            break;
        case RT_OBM_COUNT:
            memcpy(&i64, at, sizeof i64);
            rt_ob_member_num(o, m[i].key, i64 >= 0 ? (double)i64 : NAN, 0);
            break;
        case RT_OBM_U64:
            memcpy(&u64, at, sizeof u64);
            member_key(o, m[i].key);
            rt_ob_u64_or(o, u64, "null");
            rt_ob_put(o, ",", 1);
            break;
        case RT_OBM_FLAG:
            memcpy(&flag, at, sizeof flag);
            rt_ob_member_bool(o, m[i].key, flag != 0);
            break;
        case RT_OBM_STR:
            memcpy(&str, at, sizeof str);
            rt_ob_member_str(o, m[i].key, str);
            break;
        }
    }
}

void rt_ob_close(rt_ob *o, char c)
{
    if (o->last == ',')
        o->len--; /* the byte stays in buf but is overwritten next */
    rt_ob_put(o, &c, 1);
}
