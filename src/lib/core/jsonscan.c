/* jsonscan.c - a validating JSON tokenizer that allocates nothing (see jsonscan.h); the reader's
 * walk over one of the tool's JSON lines (analysis/jsonline.c) and the snapshot's loader
 * (embed/snapshot_load.c) are built on it. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/hex.h"
#include "../../common/utf8.h"
#include "core.h"
#include "jsonscan.h"

/* ---- the tokenizer ----------------------------------------------------------------------- */

static bool fail(rt_js *j, const char *msg)
{
    if (!j->err)
        j->err = msg;
    return false;
}

static void skip_ws(rt_js *j)
{
    const char *p = j->p, *e = j->end;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    j->p = p;
}

rt_js_type rt_js_peek(rt_js *j)
{
    skip_ws(j);
    if (j->err)
        return RT_JS_BAD;
    if (j->p >= j->end) {
        fail(j, "unexpected end of line");
        return RT_JS_BAD;
    }
    switch (*j->p) {
    case '{': return RT_JS_OBJECT;
    case '[': return RT_JS_ARRAY;
    case '"': return RT_JS_STRING;
    case 't': return RT_JS_TRUE;
    case 'f': return RT_JS_FALSE;
    case 'n': return RT_JS_NULL;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return RT_JS_NUMBER;
    default:
        fail(j, "invalid token");
        return RT_JS_BAD;
    }
}

bool rt_js_open(rt_js *j, char c)
{
    skip_ws(j);
    if (j->p >= j->end || *j->p != c)
        return fail(j, c == '{' ? "'{' expected" : "'[' expected");
    if (j->depth >= RT_JS_MAX_DEPTH)
        return fail(j, "nested too deep");
    j->depth++;
    j->p++;
    return true;
}

/* Consumes the separator before the next item of a container closed by close: returns 1 when
 * an item follows, 0 at close (consumed), -1 on error. */
static int next_item(rt_js *j, bool *first, char close)
{
    skip_ws(j);
    if (j->err || j->p >= j->end)
        return fail(j, "unexpected end of line"), -1;
    if (*j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    if (!*first) {
        if (*j->p != ',')
            return fail(j, close == '}' ? "',' or '}' expected" : "',' or ']' expected"), -1;
        j->p++;
        skip_ws(j);
        if (j->p < j->end && *j->p == close)
            return fail(j, "value expected after ','"), -1;
    }
    *first = false;
    return 1;
}

int rt_js_member(rt_js *j, bool *first, const char **key, size_t *klen)
{
    int r = next_item(j, first, '}');
    if (r <= 0)
        return r;
    skip_ws(j);
    if (j->p >= j->end || *j->p != '"')
        return fail(j, "string or '}' expected"), -1;
    if (!rt_js_string(j, key, klen))
        return -1;
    skip_ws(j);
    if (j->p >= j->end || *j->p != ':')
        return fail(j, "':' expected"), -1;
    j->p++;
    return 1;
}

int rt_js_element(rt_js *j, bool *first)
{
    return next_item(j, first, ']');
}

/* Whether byte c ends a run of plain string bytes: a quote, a backslash, a control
 * character or the start of a UTF-8 sequence. */
static inline bool str_special(unsigned char c)
{
    return c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
}

/* Reads 4 hex digits at p (p + 4 <= end checked by the caller). Returns the value or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = rt_hexval(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Validates the escape at p (p[0] == '\\'). Returns its length or 0. */
static size_t escape_len(const char *p, const char *e)
{
    if (e - p < 2)
        return 0;
    switch (p[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return 2;
    case 'u':
        break;
    default:
        return 0;
    }
    if (e - p < 6)
        return 0;
    long u = hex4(p + 2);
    if (u <= 0 || (u >= 0xDC00 && u <= 0xDFFF)) /* \u0000 is refused, as jansson does */
        return 0;
    if (u < 0xD800 || u > 0xDBFF)
        return 6;
    /* a high surrogate: a low one must follow */
    if (e - p < 12 || p[6] != '\\' || p[7] != 'u')
        return 0;
    long lo = hex4(p + 8);
    return lo >= 0xDC00 && lo <= 0xDFFF ? 12 : 0;
}

bool rt_js_string(rt_js *j, const char **raw, size_t *len)
{
    skip_ws(j);
    if (j->p >= j->end || *j->p != '"')
        return fail(j, "string expected");
    const char *s = j->p + 1, *p = s, *e = j->end;
    for (;;) {
        while (p < e && !str_special((unsigned char)*p))
            p++;
        if (p >= e)
            return fail(j, "unterminated string");
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            break;
        size_t n;
        if (c == '\\')
            n = escape_len(p, e);
        else if (c >= 0x80)
            n = rt_utf8_len((const unsigned char *)p, (size_t)(e - p));
        else
            return fail(j, "control character in string");
        if (n == 0)
            return fail(j, c == '\\' ? "invalid escape in string" : "invalid UTF-8 in string");
        p += n;
    }
    *raw = s;
    *len = (size_t)(p - s);
    j->p = p + 1;
    return true;
}

/* Appends the UTF-8 of code point u to dst (room checked against cap, counting always). */
static void put_utf8(char *dst, size_t cap, size_t *n, unsigned long u)
{
    unsigned char b[4];
    size_t k;
    if (u < 0x80) {
        b[0] = (unsigned char)u;
        k = 1;
    } else if (u < 0x800) {
        b[0] = (unsigned char)(0xC0 | (u >> 6));
        b[1] = (unsigned char)(0x80 | (u & 0x3F));
        k = 2;
    } else if (u < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (u >> 12));
        b[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (u & 0x3F));
        k = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (u >> 18));
        b[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (u & 0x3F));
        k = 4;
    }
    for (size_t i = 0; i < k; i++, (*n)++)
        if (*n + 1 < cap)
            dst[*n] = (char)b[i];
}

size_t rt_js_unescape(const char *raw, size_t len, char *dst, size_t cap)
{
    size_t n = 0;
    const char *p = raw, *e = raw + len;
    while (p < e) {
        if (*p != '\\') {
            if (n + 1 < cap)
                dst[n] = *p;
            n++;
            p++;
            continue;
        }
        char c = p[1];
        if (c == 'u') {
            unsigned long u = (unsigned long)hex4(p + 2);
            p += 6;
            if (u >= 0xD800 && u <= 0xDBFF) {
                u = 0x10000 + ((u - 0xD800) << 10) + ((unsigned long)hex4(p + 2) - 0xDC00);
                p += 6;
            }
            put_utf8(dst, cap, &n, u);
            continue;
        }
        char o = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
        if (n + 1 < cap)
            dst[n] = o;
        n++;
        p += 2;
    }
    if (cap)
        dst[n < cap ? n : cap - 1] = '\0';
    return n;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool rt_decimal_to_double(const char *p, size_t n, locale_t loc, double *out)
{
    const char *e = p + n, *s = p;
    bool neg = false;
    if (s < e && (*s == '-' || *s == '+'))
        neg = *s++ == '-';
    uint64_t m = 0;
    int digits = 0, frac = 0;
    bool exact = true;
    for (; s < e && *s >= '0' && *s <= '9'; s++) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*s - '0');
            digits += m != 0;
        } else {
            exact = false;
        }
    }
    if (s < e && *s == '.')
        for (s++; s < e && *s >= '0' && *s <= '9'; s++) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*s - '0');
                digits += m != 0;
                frac++;
            } else {
                exact = false;
            }
        }
    long ex = 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = false;
        if (s < e && (*s == '-' || *s == '+'))
            eneg = *s++ == '-';
        for (; s < e && *s >= '0' && *s <= '9'; s++)
            if (ex < 100000)
                ex = ex * 10 + (*s - '0');
        ex = eneg ? -ex : ex;
    }
    long e10 = ex - frac;
    if (exact && m <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
        double v = (double)m;
        v = e10 < 0 ? v / pow10_exact[-e10] : v * pow10_exact[e10];
        *out = neg ? -v : v;
        return true;
    }
    if (exact && m == 0) {
        *out = neg ? -0.0 : 0.0;
        return true;
    }
    if (loc == (locale_t)0 || n >= RT_JS_MAX_NUMBER + 1)
        return false;
    char buf[RT_JS_MAX_NUMBER + 1];
    memcpy(buf, p, n);
    buf[n] = '\0';
    errno = 0;
    double v = strtod_l(buf, NULL, loc);
    if ((v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE)
        return false;
    *out = v;
    return true;
}

bool rt_js_number(rt_js *j, double *out)
{
    skip_ws(j);
    const char *s = j->p, *p = s, *e = j->end;
    bool neg = p < e && *p == '-';
    if (neg)
        p++;
    if (p >= e || *p < '0' || *p > '9')
        return fail(j, "invalid number");
    if (*p == '0') {
        p++;
        if (p < e && *p >= '0' && *p <= '9')
            return fail(j, "invalid number (leading zero)");
    } else {
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    bool integer = true;
    if (p < e && *p == '.') {
        integer = false;
        p++;
        if (p >= e || *p < '0' || *p > '9')
            return fail(j, "invalid number");
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        integer = false;
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return fail(j, "invalid number");
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    size_t n = (size_t)(p - s);
    if (n > RT_JS_MAX_NUMBER)
        return fail(j, "number too long");
    j->p = p;
    if (integer) { /* a 64-bit integer, as jansson keeps it */
        uint64_t m = 0;
        for (const char *d = s + neg; d < p; d++) {
            unsigned dv = (unsigned)(*d - '0');
            if (m > (UINT64_MAX - dv) / 10)
                return fail(j, "integer out of range");
            m = m * 10 + dv;
        }
        if (m > (neg ? (UINT64_C(1) << 63) : (UINT64_C(1) << 63) - 1))
            return fail(j, "integer out of range");
        int64_t v = neg ? (int64_t)(0 - m) : (int64_t)m;
        *out = (double)v;
        return true;
    }
    if (!rt_decimal_to_double(s, n, j->c_locale, out))
        return fail(j, "real number out of range");
    return true;
}

/* Consumes the literal word w. */
static bool literal(rt_js *j, const char *w, size_t n)
{
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
        return fail(j, "invalid token");
    j->p += n;
    return true;
}

bool rt_js_skip(rt_js *j)
{
    const char *raw;
    size_t len;
    double d;
    bool first = true;
    int r;
    switch (rt_js_peek(j)) {
    case RT_JS_OBJECT:
        if (!rt_js_open(j, '{'))
            return false;
        while ((r = rt_js_member(j, &first, &raw, &len)) == 1)
            if (!rt_js_skip(j))
                return false;
        return r == 0;
    case RT_JS_ARRAY:
        if (!rt_js_open(j, '['))
            return false;
        while ((r = rt_js_element(j, &first)) == 1)
            if (!rt_js_skip(j))
                return false;
        return r == 0;
    case RT_JS_STRING: return rt_js_string(j, &raw, &len);
    case RT_JS_NUMBER: return rt_js_number(j, &d);
    case RT_JS_TRUE: return literal(j, "true", 4);
    case RT_JS_FALSE: return literal(j, "false", 5);
    case RT_JS_NULL: return literal(j, "null", 4);
    default: return false;
    }
}

bool rt_js_at_end(rt_js *j)
{
    skip_ws(j);
    if (j->p != j->end)
        return fail(j, "end of line expected after the object");
    return !j->err;
}
