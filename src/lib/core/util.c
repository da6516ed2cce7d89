/* util.c - small shared helpers: clocks, logging through the caller's callback, error
 * strings, the tolerant number and string scanners every parser uses, and secrets redacted out
 * of messages (rt_redact: the OTLP exporter's headers, the stream's token and keys). */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/clock.h"
#include "core.h"

double rt_mono_secs(void)
{
    return rt_clock_secs(CLOCK_MONOTONIC);
}

double rt_thread_cpu_secs(void)
{
    return rt_clock_secs(CLOCK_THREAD_CPUTIME_ID);
}

double rt_real_secs(void)
{
    return rt_clock_secs(CLOCK_REALTIME);
}

double rt_boot_secs(void)
{
    return rt_clock_secs(CLOCK_BOOTTIME);
}

void rt_log(const rt_logger *lg, rt_log_level level, const char *fmt, ...)
{
    if (!lg || !lg->fn)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof msg) /* truncated: mark it */
        memcpy(msg + sizeof msg - 4, "...", 4);
    lg->fn(lg->user, level, msg);
}

const char *rt_strerror(rt_error err)
{
    switch (err) {
    case RT_OK: return "no error";
    case RT_ERR_NOMEM: return "out of memory or buffer limit reached";
    case RT_ERR_INVALID: return "invalid argument";
    case RT_ERR_IO: return "input/output error";
    case RT_ERR_PARSE: return "unexpected file format";
    case RT_ERR_NOT_FOUND: return "not found";
    case RT_ERR_UNSUPPORTED: return "not supported on this machine";
    case RT_ERR_SYSTEM: return "system call failed";
    case RT_ERR_DISABLED: return "turned off by the options";
    }
    return "unknown error";
}

const char *rt_version(void)
{
    return RT_VERSION;
}

unsigned rt_version_num(void)
{
    return RT_VERSION_NUM;
}

uint64_t rt_delta_u64(uint64_t cur, uint64_t prev)
{
    return cur >= prev ? cur - prev : 0;
}

uint64_t rt_hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h * 31u + 7u;
}

int rt_struct_copy(void *dst, size_t dst_size, const void *src)
{
    if (!src)
        return 0;
    size_t n;
    memcpy(&n, src, sizeof n);
    if (n < sizeof n)
        return -1;
    memcpy(dst, src, n < dst_size ? n : dst_size);
    memcpy(dst, &dst_size, sizeof dst_size); /* dst now describes itself */
    return 0;
}

int rt_struct_copy_least(void *dst, size_t dst_size, const void *src, size_t least)
{
    if (!src)
        return 0;
    size_t n;
    memcpy(&n, src, sizeof n);
    return n < least || rt_struct_copy(dst, dst_size, src) < 0 ? -1 : 1;
}

bool rt_parse_u64(const char **pp, const char *end, uint64_t *out)
{
    const char *p = *pp;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return false;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        p++;
    }
    *out = v;
    *pp = p;
    return true;
}

bool rt_parse_u64_all(const char *s, size_t n, uint64_t *out)
{
    const char *p = s;
    uint64_t v;
    if (n == 0 || s[0] < '0' || s[0] > '9' || !rt_parse_u64(&p, s + n, &v) || p != s + n)
        return false;
    *out = v;
    return true;
}

size_t rt_copy_trim(char *dst, size_t cap, const char *src, size_t n)
{
    if (cap == 0)
        return 0;
    while (n > 0 && isspace((unsigned char)src[0])) {
        src++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)src[n - 1]))
        n--;
    if (n > cap - 1)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

/* rt_grow from first elements (when empty), zeroing the new elements or not. */
static int grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first, bool zero)
{
    void **slot = arr;
    if (need <= *cap)
        return 0;
    if (elem == 0 || need > SIZE_MAX / 2 / elem)
        return -1; /* no such size: n * elem would overflow */
    size_t n = *cap ? *cap : first;
    while (n < need)
        n *= 2;
    void *q = realloc(*slot, n * elem);
    if (!q)
        return -1;
    if (zero)
        memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
    *slot = q;
    *cap = n;
    return 0;
}

int rt_grow(void *arr, size_t *cap, size_t need, size_t elem)
{
    return grow(arr, cap, need, elem, 8, true);
}

int rt_grow_uninit(void *arr, size_t *cap, size_t need, size_t elem)
{
    return grow(arr, cap, need, elem, 8, false);
}

int rt_resize(void *arr, size_t n, size_t elem)
{
    void **slot = arr;
    if (n == 0 || elem == 0 || n > SIZE_MAX / elem)
        return -1;
    void *q = realloc(*slot, n * elem);
    if (!q)
        return -1;
    *slot = q;
    return 0;
}

int rt_grow_small(void *arr, size_t *cap, size_t need, size_t elem)
{
    return grow(arr, cap, need, elem, 1, true);
}

bool rt_pathf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < cap;
}

void rt_putf(rt_put_fn put, void *ctx, const char *fmt, ...)
{
    char t[RT_PUTF_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(ctx, t, (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
}

const char *rt_copy_cut(char *dst, size_t cap, const char *src)
{
    if (!src)
        return NULL;
    size_t n = strnlen(src, cap);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80) /* back over a split sequence */
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
    return dst;
}

const char *rt_copy_cut_said(char *dst, size_t cap, const char *src)
{
    return src && *src ? rt_copy_cut(dst, cap, src) : NULL;
}

bool rt_copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (cap == 0)
        return false;
    if (n >= cap) {
        dst[0] = '\0';
        return false;
    }
    memcpy(dst, src, n + 1);
    return true;
}

char *rt_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

int rt_set_str(char **slot, const char *s)
{
    char *c = NULL;
    if (s && !(c = strdup(s)))
        return -1;
    free(*slot);
    *slot = c;
    return 0;
}

bool rt_next_line(const char **pp, const char *end, const char **line, const char **line_end)
{
    const char *p = *pp;
    if (p >= end)
        return false;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *line = p;
    *line_end = nl ? nl : end;
    *pp = nl ? nl + 1 : end;
    return true;
}

bool rt_next_token(const char **pp, const char *end, const char **tok, size_t *len)
{
    const char *p = *pp;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end)
        return false;
    const char *s = p;
    while (p < end && *p != ' ' && *p != '\t')
        p++;
    *tok = s;
    *len = (size_t)(p - s);
    *pp = p;
    return true;
}

int rt_next_tokens(const char **p, const char *end, const char **tok, size_t *len, int max)
{
    int n = 0;
    while (n < max && rt_next_token(p, end, &tok[n], &len[n]))
        n++;
    return n;
}

void rt_redact(char *text, const char *secret)
{
    static const char mark[] = "[redacted]";
    size_t sl = secret ? strlen(secret) : 0;
    if (!text || sl == 0)
        return;
    for (char *p = text; (p = strstr(p, secret)) != NULL;) {
        /* the mark is never longer than what it replaces when the secret has 10 bytes or more;
         * a shorter secret is replaced by as much of the mark as fits */
        size_t m = sl < sizeof mark - 1 ? sl : sizeof mark - 1;
        memcpy(p, mark, m);
        memmove(p + m, p + sl, strlen(p + sl) + 1);
        p += m;
    }
}
