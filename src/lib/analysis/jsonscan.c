/* jsonscan.c - a validating JSON tokenizer that allocates nothing (see jsonscan.h), and the
 * walk over one of the tool's JSON lines that picks out the figures the reader maps to an
 * rt_record, skipping (but validating) everything else. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/utf8.h"
#include "../core/core.h"
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

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads 4 hex digits at p (p + 4 <= end checked by the caller). Returns the value or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
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

/* ---- rt_jline: shared by the scanner and the tests' jansson oracle ----------------------- */

void rt_jline_list_reset(rt_jl_list *l, bool present)
{
    l->present = present;
    l->n = 0;
    l->rest_rate_a = l->rest_rate_b = NAN;
}

void rt_jline_gpu_reset(rt_jline *jl, bool present)
{
    jl->gpu_present = present;
    jl->gpu_count = 0;
    jl->gpu_usage = jl->gpu_vram_mib = jl->gpu_vram_total_mib = NAN;
    jl->gpu_utilized = 0;
    jl->gpu_known = false;
}

void rt_jline_process_reset(rt_jline *jl, bool present)
{
    jl->has_process = present;
    jl->p_pid = jl->p_children = jl->p_cores = jl->p_utime = jl->p_stime = jl->p_cpu_total = NAN;
    jl->p_pss = jl->p_rss = jl->p_rss_peak = jl->p_read_total = jl->p_write_total = NAN;
    jl->p_gpu_util = jl->p_gpu_vram_bytes = jl->p_gpu_count = NAN;
}

void rt_jline_reset(rt_jline *jl)
{
    jl->timestamp = jl->interval = NAN;
    jl->has_job = false;
    jl->job[0] = '\0';
    jl->cpu_util = jl->cpu_cores_listed = NAN;
    jl->mem_used = jl->mem_total = NAN;
    rt_jline_list_reset(&jl->disk, false);
    rt_jline_list_reset(&jl->net, false);
    jl->nmount = 0;
    jl->rest_space_total = jl->rest_space_used = NAN;
    rt_jline_gpu_reset(jl, false);
    rt_jline_process_reset(jl, false);
}

void rt_jline_add_dev(rt_jl_list *l, const char *name, bool named, double ta, double tb, double ra, double rb)
{
    if (l->n >= RT_JL_MAX_DEV) {
        l->rest_rate_a = rt_add_known(l->rest_rate_a, ra);
        l->rest_rate_b = rt_add_known(l->rest_rate_b, rb);
        return;
    }
    rt_jl_dev *d = &l->dev[l->n++];
    d->named = named && strlen(name) < sizeof d->name;
    if (d->named)
        memcpy(d->name, name, strlen(name) + 1);
    else
        d->name[0] = '\0';
    d->total_a = ta;
    d->total_b = tb;
    d->rate_a = ra;
    d->rate_b = rb;
}

void rt_jline_add_mount(rt_jline *jl, const char *point, bool named, double total, double used)
{
    if (jl->nmount >= RT_JL_MAX_MOUNT) {
        if (!isnan(total)) {
            jl->rest_space_total = rt_add_known(jl->rest_space_total, total);
            jl->rest_space_used = rt_add_known(jl->rest_space_used, used);
        }
        return;
    }
    rt_jl_mount *m = &jl->mount[jl->nmount++];
    m->named = named && strlen(point) < sizeof m->point;
    if (m->named)
        memcpy(m->point, point, strlen(point) + 1);
    else
        m->point[0] = '\0';
    m->total = total;
    m->used = used;
}

void rt_jline_add_gpu(rt_jline *jl, double util_pct, double vram_used, double vram_total)
{
    jl->gpu_count += 1;
    if (!isnan(util_pct)) {
        jl->gpu_usage = rt_add_known(jl->gpu_usage, util_pct / 100.0);
        jl->gpu_utilized += util_pct > 0;
        jl->gpu_known = true;
    }
    jl->gpu_vram_mib = rt_add_known(jl->gpu_vram_mib, vram_used / 1048576.0);
    jl->gpu_vram_total_mib = rt_add_known(jl->gpu_vram_total_mib, vram_total / 1048576.0);
}

/* ---- the walk over one line ---------------------------------------------------------------- */

/* A member name and its length. */
typedef struct jkey {
    const char *s;
    size_t n;
} jkey;
#define JK(x) {x, sizeof(x) - 1}
#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the raw key k[0..n) is name (decoding escapes when there are any). */
static bool key_is(const char *k, size_t n, const jkey *name)
{
    if (n == name->n && memcmp(k, name->s, n) == 0)
        return true;
    if (n <= name->n || !memchr(k, '\\', n))
        return false;
    char buf[64];
    size_t d = rt_js_unescape(k, n, buf, sizeof buf);
    return d == name->n && memcmp(buf, name->s, d) == 0;
}

/* The index in names[0..n) of the raw key k[0..kl), or n. The search starts at *hint (the
 * member after the last one found, as the tool writes members in a fixed order). */
static size_t which(const char *k, size_t kl, const jkey *names, size_t n, size_t *hint)
{
    for (size_t c = 0, i = *hint < n ? *hint : 0; c < n; c++, i = i + 1 < n ? i + 1 : 0)
        if (key_is(k, kl, &names[i])) {
            *hint = i + 1;
            return i;
        }
    return n;
}

/* A number or null into *out (NaN for null). Other types fail with "not a number". */
static bool num_or_null(rt_js *j, double *out)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NULL) {
        *out = NAN;
        return literal(j, "null", 4);
    }
    if (t == RT_JS_NUMBER)
        return rt_js_number(j, out);
    if (t != RT_JS_BAD)
        fail(j, "a figure is neither a number nor null");
    return false;
}

/* A string or null, decoded into dst[cap] (cut to fit; "" for null). Returns false on error;
 * *is_str tells whether it was a string, *whole whether it fit. */
static bool str_or_null(rt_js *j, char *dst, size_t cap, bool *is_str, bool *whole)
{
    rt_js_type t = rt_js_peek(j);
    *is_str = *whole = false;
    dst[0] = '\0';
    if (t == RT_JS_NULL)
        return literal(j, "null", 4);
    if (t != RT_JS_STRING) {
        if (t != RT_JS_BAD)
            fail(j, "a name is neither a string nor null");
        return false;
    }
    const char *raw;
    size_t len;
    if (!rt_js_string(j, &raw, &len))
        return false;
    *is_str = true;
    *whole = rt_js_unescape(raw, len, dst, cap) < cap;
    return true;
}

/* Opens an object ('{') or array ('[') member that may be null: returns 1 when open, 0 for
 * null (consumed), -1 on error (another type: the message what). */
static int open_or_null(rt_js *j, char c, const char *what)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NULL)
        return literal(j, "null", 4) ? 0 : -1;
    if (t != (c == '{' ? RT_JS_OBJECT : RT_JS_ARRAY)) {
        if (t != RT_JS_BAD)
            fail(j, what);
        return -1;
    }
    return rt_js_open(j, c) ? 1 : -1;
}

/* Reads the members of an open object: each named in names[0..n) as a number or null into
 * *dst[i], the rest skipped. */
static bool number_members(rt_js *j, const jkey *names, double *const *dst, size_t n)
{
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, n, &hint);
        if (!(i < n ? num_or_null(j, dst[i]) : rt_js_skip(j)))
            return false;
    }
    return r == 0;
}

/* Counts the elements of per_core_pct (any values) into *count; NaN for null. */
static bool count_elements(rt_js *j, double *count)
{
    *count = NAN;
    int a = open_or_null(j, '[', "per_core_pct is not an array");
    if (a <= 0)
        return a == 0;
    bool first = true;
    double n = 0;
    while ((a = rt_js_element(j, &first)) == 1) {
        if (!rt_js_skip(j))
            return false;
        n++;
    }
    *count = n;
    return a == 0;
}

static bool scan_cpu(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("utilization_pct"), JK("per_core_pct")};
    jl->cpu_util = jl->cpu_cores_listed = NAN;
    int o = open_or_null(j, '{', "cpu is not an object");
    if (o <= 0)
        return o == 0;
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, 2, &hint);
        bool ok = i == 0 ? num_or_null(j, &jl->cpu_util) : i == 1 ? count_elements(j, &jl->cpu_cores_listed)
                                                                  : rt_js_skip(j);
        if (!ok)
            return false;
    }
    return r == 0;
}

static bool scan_memory(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("used_mib"), JK("total_mib")};
    jl->mem_used = jl->mem_total = NAN;
    int o = open_or_null(j, '{', "memory is not an object");
    if (o <= 0)
        return o == 0;
    double *const dst[] = {&jl->mem_used, &jl->mem_total};
    return number_members(j, names, dst, 2);
}

/* The "mounts" of one disk: appended to jl's mount list. */
static bool scan_mounts(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("mount_point"), JK("total_bytes"), JK("used_bytes")};
    int o = open_or_null(j, '[', "mounts is not an array");
    if (o <= 0)
        return o == 0;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, "a mount is not an object");
        rt_js_open(j, '{');
        char point[RT_JL_POINT];
        bool is_str, whole = false, f2 = true;
        double total = NAN, used = NAN;
        const char *k;
        size_t kl, hint = 0;
        int m;
        point[0] = '\0';
        while ((m = rt_js_member(j, &f2, &k, &kl)) == 1) {
            size_t i = which(k, kl, names, 3, &hint);
            bool ok = i == 0 ? str_or_null(j, point, sizeof point, &is_str, &whole)
                    : i == 1 ? num_or_null(j, &total)
                    : i == 2 ? num_or_null(j, &used)
                             : rt_js_skip(j);
            if (!ok)
                return false;
        }
        if (m < 0)
            return false;
        rt_jline_add_mount(jl, point, whole, total, used);
    }
    return r == 0;
}

/* The "disk" or "network" array (disk: with mounts). */
static bool scan_devs(rt_js *j, rt_jline *jl, bool disk)
{
    static const jkey disk_names[] = {JK("device"), JK("read_bytes_total"), JK("write_bytes_total"),
                                      JK("read_bytes_per_sec"), JK("write_bytes_per_sec"), JK("mounts")};
    static const jkey net_names[] = {JK("interface"), JK("rx_bytes_total"), JK("tx_bytes_total"),
                                     JK("rx_bytes_per_sec"), JK("tx_bytes_per_sec")};
    rt_jl_list *l = disk ? &jl->disk : &jl->net;
    rt_jline_list_reset(l, false);
    if (disk) {
        jl->nmount = 0;
        jl->rest_space_total = jl->rest_space_used = NAN;
    }
    int o = open_or_null(j, '[', disk ? "disk is not an array" : "network is not an array");
    if (o <= 0)
        return o == 0;
    l->present = true;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, disk ? "a disk is not an object" : "an interface is not an object");
        rt_js_open(j, '{');
        char name[RT_JL_NAME];
        bool is_str, whole = false, f2 = true, had_mounts = false;
        double v[4] = {NAN, NAN, NAN, NAN};
        size_t mount0 = jl->nmount;
        double rest_t = jl->rest_space_total, rest_u = jl->rest_space_used;
        const char *k;
        size_t kl, hint = 0;
        int m;
        name[0] = '\0';
        while ((m = rt_js_member(j, &f2, &k, &kl)) == 1) {
            size_t i = disk ? which(k, kl, disk_names, 6, &hint) : which(k, kl, net_names, 5, &hint);
            bool ok;
            if (i == 0) {
                ok = str_or_null(j, name, sizeof name, &is_str, &whole);
            } else if (i <= 4) {
                ok = num_or_null(j, &v[i - 1]);
            } else if (i == 5 && disk) {
                if (had_mounts) { /* a repeated member: the last one counts */
                    jl->nmount = mount0;
                    jl->rest_space_total = rest_t;
                    jl->rest_space_used = rest_u;
                }
                had_mounts = true;
                ok = scan_mounts(j, jl);
            } else {
                ok = rt_js_skip(j);
            }
            if (!ok)
                return false;
        }
        if (m < 0)
            return false;
        rt_jline_add_dev(l, name, whole, v[0], v[1], v[2], v[3]);
    }
    return r == 0;
}

static bool scan_gpus(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("utilization_pct"), JK("vram_used_bytes"), JK("vram_total_bytes")};
    rt_jline_gpu_reset(jl, false);
    int o = open_or_null(j, '[', "gpu is not an array");
    if (o <= 0)
        return o == 0;
    jl->gpu_present = true;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, "a GPU is not an object");
        rt_js_open(j, '{');
        double util = NAN, used = NAN, total = NAN;
        double *const dst[] = {&util, &used, &total};
        if (!number_members(j, names, dst, 3))
            return false;
        rt_jline_add_gpu(jl, util, used, total);
    }
    return r == 0;
}

static bool scan_process(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {
        JK("pid"),          JK("child_count"),      JK("cores_used"),        JK("utime_secs"),
        JK("stime_secs"),   JK("cpu_secs_total"),   JK("pss_mib"),           JK("rss_mib"),
        JK("rss_peak_mib"), JK("read_bytes_total"), JK("write_bytes_total"), JK("gpu_utilization_pct"),
        JK("gpu_vram_used_bytes"), JK("gpu_count_used"),
    };
    rt_jline_process_reset(jl, false);
    int o = open_or_null(j, '{', "process is not an object");
    if (o <= 0)
        return o == 0;
    jl->has_process = true;
    double *const dst[] = {
        &jl->p_pid,       &jl->p_children,   &jl->p_cores,      &jl->p_utime,       &jl->p_stime,
        &jl->p_cpu_total, &jl->p_pss,        &jl->p_rss,        &jl->p_rss_peak,    &jl->p_read_total,
        &jl->p_write_total, &jl->p_gpu_util, &jl->p_gpu_vram_bytes, &jl->p_gpu_count,
    };
    return number_members(j, names, dst, NKEYS(names));
}

enum { K_TS, K_INTERVAL, K_JOB, K_CPU, K_MEMORY, K_NETWORK, K_DISK, K_GPU, K_PROCESS, K_COUNT };

static bool scan_top_member(rt_js *j, rt_jline *jl, size_t key)
{
    bool whole;
    switch (key) {
    case K_TS: return num_or_null(j, &jl->timestamp);
    case K_INTERVAL: return num_or_null(j, &jl->interval);
    case K_JOB: return str_or_null(j, jl->job, sizeof jl->job, &jl->has_job, &whole);
    case K_CPU: return scan_cpu(j, jl);
    case K_MEMORY: return scan_memory(j, jl);
    case K_NETWORK: return scan_devs(j, jl, false);
    case K_DISK: return scan_devs(j, jl, true);
    case K_GPU: return scan_gpus(j, jl);
    case K_PROCESS: return scan_process(j, jl);
    default: return rt_js_skip(j);
    }
}

const char *rt_jline_scan(const char *line, size_t len, locale_t c_locale, rt_jline *jl)
{
    static const jkey names[K_COUNT] = {JK("timestamp_secs"), JK("interval_secs"), JK("job_name"),
                                        JK("cpu"), JK("memory"), JK("network"), JK("disk"), JK("gpu"),
                                        JK("process")};
    rt_js j = {.p = line, .end = line + len, .c_locale = c_locale};
    rt_jline_reset(jl);
    if (rt_js_peek(&j) != RT_JS_OBJECT || !rt_js_open(&j, '{'))
        return j.err ? j.err : "not a JSON object";
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(&j, &first, &k, &kl)) == 1)
        if (!scan_top_member(&j, jl, which(k, kl, names, K_COUNT, &hint)))
            return j.err ? j.err : "malformed";
    if (r < 0 || !rt_js_at_end(&j))
        return j.err ? j.err : "malformed";
    if (isnan(jl->timestamp))
        return "no timestamp_secs";
    return NULL;
}
