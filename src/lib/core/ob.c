/* ob.c - the output builder (ob.h) the views, the exporters and the snapshot share: appends
 * into a caller's fixed buffer and keeps counting past its end (so callers learn the size they
 * need, as with snprintf); numbers are formatted by hand: fixed decimals, trailing zeros trimmed (or kept). */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../common/utf8.h"
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

static void fixed(rt_ob *o, double v, int decimals, const char *null_text, bool trim)
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
