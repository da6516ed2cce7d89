/* toml.c - the strict TOML reader behind the config file (see toml.h for the subset).
 * Table-definition rules follow TOML 1.0: a table is defined once, by a header or by dotted
 * keys in one section; inline tables and arrays are closed once written. */
#include "../common/hex.h"
#include "toml.h"

#include "../common/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Table flags. */
#define T_EXPLICIT 1u /* defined by a [header], or by dotted keys in an earlier section */
#define T_PENDING 2u  /* created by dotted keys in the current section */
#define T_FROZEN 4u   /* an inline table (or inside one): no additions */

#define MAX_DEPTH 64
#define MAX_KEY_PARTS 64

typedef struct parser {
    const char *start, *p, *end;
    int line;
    const char *line_start;
    const char *col_line, *col_at; /* col_of's last answer: col at col_at on the line at col_line */
    int col;
    char *err;
    size_t errlen;
    bool failed;
    toml_value *root;
    toml_value **pending; /* tables created by dotted keys in the current section */
    size_t npending, pending_cap;
    int depth;
} parser;

typedef struct key_part {
    char *s;
    size_t len;
    int line, col;
} key_part;

/* ---- errors and positions ------------------------------------------------------------- */

/* The column (1-based, in characters) of at on the current line: counted on (or back) from the
 * last position asked on that line, so that a long line of many values costs one pass over
 * it, not one per value (a 1 MiB line took minutes). */
static int col_of(parser *ps, const char *at)
{
    if (at > ps->end)
        at = ps->end;
    if (at < ps->line_start)
        return 1;
    if (ps->col_line != ps->line_start) {
        ps->col_line = ps->col_at = ps->line_start;
        ps->col = 1;
    }
    for (; ps->col_at < at; ps->col_at++)
        if (((unsigned char)*ps->col_at & 0xC0) != 0x80)
            ps->col++;
    while (ps->col_at > at)
        if (((unsigned char)*--ps->col_at & 0xC0) != 0x80)
            ps->col--;
    return ps->col;
}

static void fail_at(parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(parser *ps, const char *at, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "%d:%d: %s", ps->line, col_of(ps, at), msg);
}

#define FAIL(ps, ...) fail_at((ps), (ps)->p, __VA_ARGS__)

/* ---- values ----------------------------------------------------------------------------- */

static toml_value *new_value(parser *ps, toml_type t, const char *at)
{
    toml_value *v = calloc(1, sizeof *v);
    if (!v) {
        fail_at(ps, at, "out of memory");
        return NULL;
    }
    v->type = t;
    v->line = ps->line;
    v->col = col_of(ps, at);
    return v;
}

void toml_free(toml_value *v)
{
    if (!v)
        return;
    switch (v->type) {
    case TOML_STRING:
        free(v->u.str.s);
        break;
    case TOML_ARRAY:
        for (size_t i = 0; i < v->u.arr.n; i++)
            toml_free(v->u.arr.items[i]);
        free(v->u.arr.items);
        break;
    case TOML_TABLE:
        for (size_t i = 0; i < v->u.tab.n; i++) {
            free(v->u.tab.kv[i].key);
            toml_free(v->u.tab.kv[i].val);
        }
        free(v->u.tab.kv);
        break;
    default:
        break;
    }
    free(v);
}

static toml_kv *find_kv(const toml_value *t, const char *key, size_t len)
{
    for (size_t i = 0; i < t->u.tab.n; i++)
        if (t->u.tab.kv[i].key_len == len && memcmp(t->u.tab.kv[i].key, key, len) == 0)
            return &t->u.tab.kv[i];
    return NULL;
}

const toml_kv *toml_find(const toml_value *t, const char *key)
{
    if (!t || t->type != TOML_TABLE)
        return NULL;
    return find_kv(t, key, strlen(key));
}

const char *toml_type_name(toml_type t)
{
    switch (t) {
    case TOML_STRING: return "a string";
    case TOML_INTEGER: return "an integer";
    case TOML_FLOAT: return "a float";
    case TOML_BOOL: return "a boolean";
    case TOML_ARRAY: return "an array";
    case TOML_TABLE: return "a table";
    }
    return "a value";
}

/* Adds key -> v to table t (the key is copied). Returns the entry or NULL (out of memory). */
static toml_kv *add_kv(parser *ps, toml_value *t, const key_part *k, toml_value *v)
{
    if (t->u.tab.n == t->u.tab.cap) {
        size_t cap = t->u.tab.cap ? t->u.tab.cap * 2 : 8;
        toml_kv *kv = realloc(t->u.tab.kv, cap * sizeof *kv);
        if (!kv) {
            FAIL(ps, "out of memory");
            return NULL;
        }
        t->u.tab.kv = kv;
        t->u.tab.cap = cap;
    }
    char *copy = malloc(k->len + 1);
    if (!copy) {
        FAIL(ps, "out of memory");
        return NULL;
    }
    memcpy(copy, k->s, k->len);
    copy[k->len] = '\0';
    toml_kv *e = &t->u.tab.kv[t->u.tab.n++];
    e->key = copy;
    e->key_len = k->len;
    e->line = k->line;
    e->col = k->col;
    e->val = v;
    return e;
}

static bool push_item(parser *ps, toml_value *arr, toml_value *v)
{
    if (arr->u.arr.n == arr->u.arr.cap) {
        size_t cap = arr->u.arr.cap ? arr->u.arr.cap * 2 : 8;
        toml_value **items = realloc(arr->u.arr.items, cap * sizeof *items);
        if (!items) {
            FAIL(ps, "out of memory");
            return false;
        }
        arr->u.arr.items = items;
        arr->u.arr.cap = cap;
    }
    arr->u.arr.items[arr->u.arr.n++] = v;
    return true;
}

static void freeze(toml_value *v)
{
    if (v->type == TOML_TABLE) {
        v->flags |= T_FROZEN;
        for (size_t i = 0; i < v->u.tab.n; i++)
            freeze(v->u.tab.kv[i].val);
    } else if (v->type == TOML_ARRAY) {
        for (size_t i = 0; i < v->u.arr.n; i++)
            freeze(v->u.arr.items[i]);
    }
}

/* ---- characters --------------------------------------------------------------------------- */

static bool at_end(const parser *ps) { return ps->p >= ps->end; }
static int peek(const parser *ps) { return ps->p < ps->end ? (unsigned char)*ps->p : -1; }
static int peek_at(const parser *ps, size_t i) { return ps->p + i < ps->end ? (unsigned char)ps->p[i] : -1; }

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* At a newline (LF or CRLF)? Returns its length, 0 if not. */
static int newline_len(const parser *ps)
{
    if (peek(ps) == '\n')
        return 1;
    if (peek(ps) == '\r' && peek_at(ps, 1) == '\n')
        return 2;
    return 0;
}

static void take_newline(parser *ps, int n)
{
    ps->p += n;
    ps->line++;
    ps->line_start = ps->p;
}

/* A control character that TOML forbids in comments and strings (tab allowed). */
static bool bad_control(int c)
{
    return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7F;
}

/* Skips a comment starting at '#', up to (not including) the newline. */
static void skip_comment(parser *ps)
{
    ps->p++;
    while (!at_end(ps) && !ps->failed) {
        int c = peek(ps);
        if (c == '\n' || (c == '\r' && peek_at(ps, 1) == '\n'))
            return;
        if (bad_control(c)) {
            FAIL(ps, "control character U+%04X is not allowed in a comment", c);
            return;
        }
        ps->p++;
    }
}

/* Skips whitespace, comments and newlines (inside arrays). */
static void skip_ws_nl(parser *ps)
{
    for (;;) {
        skip_ws(ps);
        if (peek(ps) == '#') {
            skip_comment(ps);
            if (ps->failed)
                return;
        }
        int n = newline_len(ps);
        if (n == 0)
            return;
        take_newline(ps, n);
    }
}

/* After a key/value or header: blanks, an optional comment, then a newline or the end. */
static void expect_eol(parser *ps, const char *after)
{
    skip_ws(ps);
    if (peek(ps) == '#')
        skip_comment(ps);
    if (ps->failed || at_end(ps))
        return;
    int n = newline_len(ps);
    if (n == 0) {
        if (peek(ps) == '\r')
            FAIL(ps, "carriage return without a line feed");
        else
            FAIL(ps, "expected the end of the line after %s, found '%c'", after, peek(ps) >= 0x20 && peek(ps) < 0x7F ? peek(ps) : '?');
        return;
    }
    take_newline(ps, n);
}

/* ---- UTF-8 -------------------------------------------------------------------------------- */

static bool validate_utf8(parser *ps)
{
    const unsigned char *s = (const unsigned char *)ps->p, *end = (const unsigned char *)ps->end;
    int line = 1;
    const char *ls = ps->p;
    while (s < end) {
        size_t n = rt_utf8_len(s, (size_t)(end - s));
        if (n == 0) {
            ps->line = line;
            ps->line_start = ls;
            fail_at(ps, (const char *)s, "invalid UTF-8 byte 0x%02X", *s);
            return false;
        }
        if (*s == '\n') {
            line++;
            ls = (const char *)s + 1;
        }
        s += n;
    }
    return true;
}

/* Appends the UTF-8 encoding of cp to a growing string. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static bool sb_put(parser *ps, sbuf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            FAIL(ps, "out of memory");
            return false;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
    return true;
}

static bool sb_cp(parser *ps, sbuf *b, unsigned long cp)
{
    char o[4];
    size_t n;
    if (cp < 0x80) {
        o[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        o[0] = (char)(0xF0 | (cp >> 18));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return sb_put(ps, b, o, n);
}

/* ---- strings ------------------------------------------------------------------------------ */

/* Handles one escape after '\' in a basic string. */
static bool escape(parser *ps, sbuf *b)
{
    const char *at = ps->p - 1;
    int c = peek(ps);
    ps->p++;
    switch (c) {
    case 'b': return sb_put(ps, b, "\b", 1);
    case 't': return sb_put(ps, b, "\t", 1);
    case 'n': return sb_put(ps, b, "\n", 1);
    case 'f': return sb_put(ps, b, "\f", 1);
    case 'r': return sb_put(ps, b, "\r", 1);
    case '"': return sb_put(ps, b, "\"", 1);
    case '\\': return sb_put(ps, b, "\\", 1);
    case 'u':
    case 'U': {
        int n = c == 'u' ? 4 : 8;
        unsigned long cp = 0;
        for (int i = 0; i < n; i++) {
            int h = rt_hexval(peek(ps));
            if (h < 0) {
                fail_at(ps, at, "\\%c needs %d hexadecimal digits", c, n);
                return false;
            }
            cp = cp * 16 + (unsigned long)h;
            ps->p++;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            fail_at(ps, at, "\\%c%0*lX is not a Unicode scalar value", c, n, cp);
            return false;
        }
        return sb_cp(ps, b, cp);
    }
    default:
        if (c < 0)
            fail_at(ps, at, "unterminated string");
        else if (c >= 0x20 && c < 0x7F)
            fail_at(ps, at, "invalid escape sequence \\%c", c);
        else
            fail_at(ps, at, "invalid escape sequence");
        return false;
    }
}

/* Parses a string of any of the four kinds at ps->p. Sets out/len (heap, NUL-terminated). */
static bool parse_string(parser *ps, char **out, size_t *outlen)
{
    const char *open = ps->p;
    char q = *ps->p;
    bool basic = q == '"';
    bool multi = peek_at(ps, 1) == q && peek_at(ps, 2) == q;
    sbuf b = {0};
    if (!sb_put(ps, &b, "", 0))
        return false;
    ps->p += multi ? 3 : 1;
    if (multi) { /* a newline right after the opening delimiter is trimmed */
        int n = newline_len(ps);
        if (n)
            take_newline(ps, n);
    }
    for (;;) {
        if (at_end(ps)) {
            fail_at(ps, open, "unterminated string");
            goto bad;
        }
        int c = peek(ps);
        if (c == q) {
            if (!multi) {
                ps->p++;
                break;
            }
            size_t run = 0;
            while (peek_at(ps, run) == q)
                run++;
            if (run >= 3) {
                if (run > 5) {
                    FAIL(ps, "too many quotes at the end of a multi-line string");
                    goto bad;
                }
                if (!sb_put(ps, &b, ps->p, run - 3))
                    goto bad;
                ps->p += run;
                break;
            }
            if (!sb_put(ps, &b, ps->p, run))
                goto bad;
            ps->p += run;
            continue;
        }
        int nl = newline_len(ps);
        if (nl) {
            if (!multi) {
                fail_at(ps, open, "unterminated string (a newline in a single-line string)");
                goto bad;
            }
            if (!sb_put(ps, &b, "\n", 1)) /* CRLF is read as a newline, like LF */
                goto bad;
            take_newline(ps, nl);
            continue;
        }
        if (basic && c == '\\') {
            ps->p++;
            if (multi) { /* line-ending backslash: trim whitespace and newlines that follow */
                const char *save = ps->p;
                skip_ws(ps);
                int n = newline_len(ps);
                if (n) {
                    while (!at_end(ps)) {
                        skip_ws(ps);
                        n = newline_len(ps);
                        if (!n)
                            break;
                        take_newline(ps, n);
                    }
                    continue;
                }
                ps->p = save;
            }
            if (!escape(ps, &b))
                goto bad;
            continue;
        }
        if (bad_control(c)) {
            FAIL(ps, "control character U+%04X must be escaped in a string", c);
            goto bad;
        }
        /* copy a run of ordinary bytes (UTF-8 was validated up front) */
        const char *s = ps->p++; /* c is an ordinary character */
        while (ps->p < ps->end) {
            int d = (unsigned char)*ps->p;
            if (d == q || (basic && d == '\\') || d == '\n' || d == '\r' || bad_control(d))
                break;
            ps->p++;
        }
        if (!sb_put(ps, &b, s, (size_t)(ps->p - s)))
            goto bad;
    }
    *out = b.s;
    *outlen = b.len;
    return true;
bad:
    free(b.s);
    return false;
}

/* ---- keys ----------------------------------------------------------------------------------- */

static bool bare_key_char(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void free_key(key_part *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(k[i].s);
}

/* Parses a (dotted) key into parts. Returns the number of parts, 0 on error. */
static size_t parse_key(parser *ps, key_part *parts)
{
    size_t n = 0;
    for (;;) {
        skip_ws(ps);
        if (n == MAX_KEY_PARTS) {
            FAIL(ps, "key has too many parts");
            goto bad;
        }
        key_part *k = &parts[n];
        k->line = ps->line;
        k->col = col_of(ps, ps->p);
        int c = peek(ps);
        if (c == '"' || c == '\'') {
            if (peek_at(ps, 1) == c && peek_at(ps, 2) == c) {
                FAIL(ps, "a multi-line string cannot be a key");
                goto bad;
            }
            if (!parse_string(ps, &k->s, &k->len))
                goto bad;
        } else if (bare_key_char(c)) {
            const char *s = ps->p;
            while (bare_key_char(peek(ps)))
                ps->p++;
            k->len = (size_t)(ps->p - s);
            k->s = malloc(k->len + 1);
            if (!k->s) {
                FAIL(ps, "out of memory");
                goto bad;
            }
            memcpy(k->s, s, k->len);
            k->s[k->len] = '\0';
        } else {
            if (c < 0 || newline_len(ps))
                FAIL(ps, "expected a key");
            else if (c == '=')
                FAIL(ps, "a key is missing before '='");
            else if (c >= 0x20 && c < 0x7F)
                FAIL(ps, "'%c' cannot start a key (bare keys use A-Z a-z 0-9 _ -)", c);
            else
                FAIL(ps, "invalid character in a key");
            goto bad;
        }
        n++;
        skip_ws(ps);
        if (peek(ps) != '.')
            return n;
        ps->p++;
    }
bad:
    free_key(parts, n);
    return 0;
}

/* Prints a dotted key for messages. */
static const char *key_str(const key_part *k, size_t n, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        int w = snprintf(buf + o, cap - o, "%s%.*s", i ? "." : "", (int)k[i].len, k[i].s);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

/* ---- numbers, booleans, dates ---------------------------------------------------------- */

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* Checks digits with single underscores between digits over [s,e) in the given base. */
static bool digits_ok(const char *s, const char *e, int base)
{
    if (s >= e)
        return false;
    bool prev_digit = false;
    for (const char *q = s; q < e; q++) {
        int c = (unsigned char)*q;
        int v = rt_hexval(c);
        if (c == '_') {
            if (!prev_digit || q + 1 >= e)
                return false;
            prev_digit = false;
            continue;
        }
        if (v < 0 || v >= base)
            return false;
        prev_digit = true;
    }
    return prev_digit;
}

static toml_value *parse_number(parser *ps)
{
    const char *s = ps->p;
    const char *e = s;
    while (e < ps->end && (bare_key_char((unsigned char)*e) || *e == '+' || *e == '.' || *e == ':'))
        e++;
    size_t n = (size_t)(e - s);
    /* dates and times: 1979-05-27, 07:32:00 */
    if ((n >= 5 && is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) && s[4] == '-') ||
        (n >= 3 && is_digit(s[0]) && is_digit(s[1]) && s[2] == ':')) {
        FAIL(ps, "dates and times are not supported in this config file");
        return NULL;
    }
    toml_value *v = NULL;
    const char *body = s;
    bool neg = false;
    if (*body == '+' || *body == '-') {
        neg = *body == '-';
        body++;
    }
    size_t bn = (size_t)(e - body);
    if ((bn == 3 && memcmp(body, "inf", 3) == 0) || (bn == 3 && memcmp(body, "nan", 3) == 0)) {
        if (!(v = new_value(ps, TOML_FLOAT, s)))
            return NULL;
        v->u.f = body[0] == 'i' ? (neg ? -INFINITY : INFINITY) : (neg ? -NAN : NAN);
        ps->p = e;
        return v;
    }
    if (bn == 0 || !is_digit((unsigned char)body[0])) {
        FAIL(ps, "invalid value '%.*s' (strings need quotes)", (int)(n > 40 ? 40 : n), s);
        return NULL;
    }
    if (bn >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o' || body[1] == 'b')) {
        int base = body[1] == 'x' ? 16 : body[1] == 'o' ? 8 : 2;
        if (body != s) {
            FAIL(ps, "hexadecimal, octal and binary integers cannot have a sign");
            return NULL;
        }
        if (!digits_ok(body + 2, e, base)) {
            FAIL(ps, "invalid %s integer", base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary");
            return NULL;
        }
        uint64_t acc = 0;
        for (const char *q = body + 2; q < e; q++) {
            if (*q == '_')
                continue;
            unsigned d = (unsigned)rt_hexval((unsigned char)*q);
            if (acc > (UINT64_C(0x7FFFFFFFFFFFFFFF) - d) / (unsigned)base) {
                FAIL(ps, "integer out of range (64-bit signed)");
                return NULL;
            }
            acc = acc * (unsigned)base + d;
        }
        if (!(v = new_value(ps, TOML_INTEGER, s)))
            return NULL;
        v->u.i = (int64_t)acc;
        ps->p = e;
        return v;
    }
    /* decimal integer or float: int [. frac] [e exp] */
    const char *q = body;
    while (q < e && (is_digit((unsigned char)*q) || *q == '_'))
        q++;
    const char *int_end = q;
    if (!digits_ok(body, int_end, 10)) {
        FAIL(ps, "invalid number");
        return NULL;
    }
    if (body[0] == '0' && int_end - body > 1) {
        FAIL(ps, "leading zeros are not allowed in a number");
        return NULL;
    }
    bool is_float = false;
    if (q < e && *q == '.') {
        is_float = true;
        const char *f = ++q;
        while (q < e && (is_digit((unsigned char)*q) || *q == '_'))
            q++;
        if (!digits_ok(f, q, 10)) {
            FAIL(ps, "a decimal point must have digits on both sides");
            return NULL;
        }
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        is_float = true;
        q++;
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        const char *x = q;
        while (q < e && (is_digit((unsigned char)*q) || *q == '_'))
            q++;
        if (!digits_ok(x, q, 10)) {
            FAIL(ps, "invalid exponent");
            return NULL;
        }
    }
    if (q != e) {
        FAIL(ps, "invalid number '%.*s'", (int)(n > 40 ? 40 : n), s);
        return NULL;
    }
    char tmp[128];
    size_t t = 0;
    for (const char *c = s; c < e; c++) {
        if (*c == '_')
            continue;
        if (t + 1 >= sizeof tmp) {
            FAIL(ps, "number too long");
            return NULL;
        }
        tmp[t++] = *c;
    }
    tmp[t] = '\0';
    if (is_float) {
        if (!(v = new_value(ps, TOML_FLOAT, s)))
            return NULL;
        v->u.f = strtod(tmp, NULL);
    } else {
        errno = 0;
        long long x = strtoll(tmp, NULL, 10);
        if (errno == ERANGE) {
            FAIL(ps, "integer out of range (64-bit signed)");
            return NULL;
        }
        if (!(v = new_value(ps, TOML_INTEGER, s)))
            return NULL;
        v->u.i = x;
    }
    ps->p = e;
    return v;
}

/* ---- compound values --------------------------------------------------------------------- */

static toml_value *parse_value(parser *ps);
static bool insert_kv(parser *ps, toml_value *table, key_part *k, size_t n, toml_value *v, bool in_inline);

static toml_value *parse_array(parser *ps)
{
    toml_value *a = new_value(ps, TOML_ARRAY, ps->p);
    if (!a)
        return NULL;
    ps->p++;
    for (;;) {
        skip_ws_nl(ps);
        if (ps->failed)
            goto bad;
        if (peek(ps) == ']') {
            ps->p++;
            return a;
        }
        toml_value *item = parse_value(ps);
        if (!item)
            goto bad;
        if (!push_item(ps, a, item)) {
            toml_free(item);
            goto bad;
        }
        skip_ws_nl(ps);
        if (ps->failed)
            goto bad;
        if (peek(ps) == ',') {
            ps->p++;
            continue;
        }
        if (peek(ps) == ']') {
            ps->p++;
            return a;
        }
        if (at_end(ps))
            FAIL(ps, "unterminated array (missing ']')");
        else
            FAIL(ps, "expected ',' or ']' in an array");
        goto bad;
    }
bad:
    toml_free(a);
    return NULL;
}

static toml_value *parse_inline_table(parser *ps)
{
    toml_value *t = new_value(ps, TOML_TABLE, ps->p);
    if (!t)
        return NULL;
    ps->p++;
    skip_ws(ps);
    if (peek(ps) == '}') {
        ps->p++;
        freeze(t);
        return t;
    }
    for (;;) {
        key_part k[MAX_KEY_PARTS];
        size_t n = parse_key(ps, k);
        if (!n)
            goto bad;
        if (peek(ps) != '=') {
            FAIL(ps, "expected '=' after a key");
            free_key(k, n);
            goto bad;
        }
        ps->p++;
        skip_ws(ps);
        toml_value *v = parse_value(ps);
        if (!v || !insert_kv(ps, t, k, n, v, true)) {
            toml_free(v);
            free_key(k, n);
            goto bad;
        }
        free_key(k, n);
        skip_ws(ps);
        if (peek(ps) == ',') {
            ps->p++;
            skip_ws(ps);
            if (peek(ps) == '}') {
                FAIL(ps, "a trailing comma is not allowed in an inline table");
                goto bad;
            }
            continue;
        }
        if (peek(ps) == '}') {
            ps->p++;
            freeze(t);
            return t;
        }
        if (newline_len(ps) || peek(ps) == '\r')
            FAIL(ps, "an inline table must be on one line");
        else if (at_end(ps))
            FAIL(ps, "unterminated inline table (missing '}')");
        else
            FAIL(ps, "expected ',' or '}' in an inline table");
        goto bad;
    }
bad:
    toml_free(t);
    return NULL;
}

static bool word_at(const parser *ps, const char *w, size_t n)
{
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
        return false;
    int next = ps->p + n < ps->end ? (unsigned char)ps->p[n] : -1;
    return !bare_key_char(next) && next != '.' && next != '+' && next != ':';
}

static toml_value *parse_value(parser *ps)
{
    if (++ps->depth > MAX_DEPTH) {
        FAIL(ps, "values nested too deeply");
        return NULL;
    }
    toml_value *v = NULL;
    int c = peek(ps);
    if (c == '"' || c == '\'') {
        const char *at = ps->p;
        char *s;
        size_t len;
        if (parse_string(ps, &s, &len)) {
            v = new_value(ps, TOML_STRING, at);
            if (v) {
                v->u.str.s = s;
                v->u.str.len = len;
            } else {
                free(s);
            }
        }
    } else if (c == '[') {
        v = parse_array(ps);
    } else if (c == '{') {
        v = parse_inline_table(ps);
    } else if (c == 't' && word_at(ps, "true", 4)) {
        if ((v = new_value(ps, TOML_BOOL, ps->p)))
            v->u.b = true;
        ps->p += 4;
    } else if (c == 'f' && word_at(ps, "false", 5)) {
        if ((v = new_value(ps, TOML_BOOL, ps->p)))
            v->u.b = false;
        ps->p += 5;
    } else if (c == '+' || c == '-' || is_digit(c) || c == 'i' || c == 'n') {
        v = parse_number(ps);
    } else if (c < 0 || newline_len(ps)) {
        FAIL(ps, "a value is missing after '='");
    } else {
        FAIL(ps, "invalid value (strings need quotes)");
    }
    ps->depth--;
    return v;
}

/* ---- tables -------------------------------------------------------------------------------- */

static bool add_pending(parser *ps, toml_value *t)
{
    if (t->flags & T_PENDING)
        return true;
    if (ps->npending == ps->pending_cap) {
        size_t cap = ps->pending_cap ? ps->pending_cap * 2 : 16;
        toml_value **p = realloc(ps->pending, cap * sizeof *p);
        if (!p) {
            FAIL(ps, "out of memory");
            return false;
        }
        ps->pending = p;
        ps->pending_cap = cap;
    }
    t->flags |= T_PENDING;
    ps->pending[ps->npending++] = t;
    return true;
}

/* Walks (creating tables as needed) to the table named by k[0..n) under t. what: "table" or
 * "key" for messages; dotted: the walk is a dotted key (marks tables pending). */
static toml_value *walk(parser *ps, toml_value *t, key_part *k, size_t n, bool dotted, bool in_inline)
{
    char name[256];
    for (size_t i = 0; i < n; i++) {
        toml_kv *e = find_kv(t, k[i].s, k[i].len);
        if (!e) {
            toml_value *nt = calloc(1, sizeof *nt);
            if (!nt) {
                FAIL(ps, "out of memory");
                return NULL;
            }
            nt->type = TOML_TABLE;
            nt->line = k[i].line;
            nt->col = k[i].col;
            if (!add_kv(ps, t, &k[i], nt)) {
                free(nt);
                return NULL;
            }
            if (dotted && !in_inline && !add_pending(ps, nt))
                return NULL;
            t = nt;
            continue;
        }
        toml_value *v = e->val;
        if (v->type == TOML_ARRAY && !dotted) {
            bool aot = v->u.arr.n > 0 && v->u.arr.items[0]->type == TOML_TABLE;
            fail_at(ps, ps->p, "'%s' is %s, not a table%s", key_str(k, i + 1, name, sizeof name),
                    aot ? "an array of tables" : "an array", aot ? " (arrays of tables are not supported)" : "");
            return NULL;
        }
        if (v->type != TOML_TABLE) {
            fail_at(ps, ps->p, "'%s' already holds %s, not a table", key_str(k, i + 1, name, sizeof name),
                    toml_type_name(v->type));
            return NULL;
        }
        if (v->flags & T_FROZEN) {
            fail_at(ps, ps->p, "'%s' is an inline table and cannot be extended", key_str(k, i + 1, name, sizeof name));
            return NULL;
        }
        if (dotted && !in_inline) {
            if (v->flags & T_EXPLICIT) {
                fail_at(ps, ps->p, "table '%s' is defined elsewhere and cannot be extended with dotted keys",
                        key_str(k, i + 1, name, sizeof name));
                return NULL;
            }
            if (!add_pending(ps, v))
                return NULL;
        }
        t = v;
    }
    return t;
}

/* Inserts k[0..n) = v into table (dotted keys create sub-tables). Takes v on success. */
static bool insert_kv(parser *ps, toml_value *table, key_part *k, size_t n, toml_value *v, bool in_inline)
{
    char name[256];
    toml_value *parent = walk(ps, table, k, n - 1, true, in_inline);
    if (!parent)
        return false;
    if (find_kv(parent, k[n - 1].s, k[n - 1].len)) {
        fail_at(ps, ps->p, "duplicate key '%s'", key_str(k, n, name, sizeof name));
        return false;
    }
    if (v->type == TOML_TABLE || v->type == TOML_ARRAY)
        freeze(v);
    return add_kv(ps, parent, &k[n - 1], v) != NULL;
}

static toml_value *parse_header(parser *ps)
{
    const char *open = ps->p;
    ps->p++;
    if (peek(ps) == '[') {
        FAIL(ps, "arrays of tables ([[...]]) are not supported in this config file");
        return NULL;
    }
    /* a new section: tables made by dotted keys so far are now defined */
    for (size_t i = 0; i < ps->npending; i++) {
        ps->pending[i]->flags &= ~T_PENDING;
        ps->pending[i]->flags |= T_EXPLICIT;
    }
    ps->npending = 0;
    key_part k[MAX_KEY_PARTS];
    size_t n = parse_key(ps, k);
    if (!n)
        return NULL;
    if (peek(ps) != ']') {
        FAIL(ps, "expected ']' to close the table header");
        free_key(k, n);
        return NULL;
    }
    ps->p++;
    char name[256];
    toml_value *parent = walk(ps, ps->root, k, n - 1, false, false);
    toml_value *t = NULL;
    if (parent) {
        toml_kv *e = find_kv(parent, k[n - 1].s, k[n - 1].len);
        if (!e) {
            t = calloc(1, sizeof *t);
            if (!t) {
                FAIL(ps, "out of memory");
            } else {
                t->type = TOML_TABLE;
                t->line = ps->line;
                t->col = col_of(ps, open);
                key_part kk = k[n - 1];
                kk.line = ps->line;
                kk.col = col_of(ps, open);
                if (!add_kv(ps, parent, &kk, t)) {
                    free(t);
                    t = NULL;
                }
            }
        } else if (e->val->type != TOML_TABLE) {
            fail_at(ps, open, "'%s' already holds %s, not a table", key_str(k, n, name, sizeof name),
                    toml_type_name(e->val->type));
        } else if (e->val->flags & (T_EXPLICIT | T_FROZEN | T_PENDING)) {
            fail_at(ps, open, "table [%s] is defined more than once", key_str(k, n, name, sizeof name));
        } else {
            t = e->val; /* created implicitly by an earlier [a.b.c]: now defined */
            e->line = ps->line;
            e->col = col_of(ps, open);
        }
    }
    if (t)
        t->flags |= T_EXPLICIT;
    free_key(k, n);
    return t;
}

toml_value *toml_parse(const char *buf, size_t len, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    parser ps = {.start = buf, .p = buf, .end = buf + len, .line = 1, .line_start = buf, .err = err, .errlen = errlen};
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) { /* byte order mark */
        ps.p += 3;
        ps.line_start = ps.p;
    }
    if (!validate_utf8(&ps))
        return NULL;
    ps.root = calloc(1, sizeof *ps.root);
    if (!ps.root) {
        snprintf(err, errlen, "1:1: out of memory");
        return NULL;
    }
    ps.root->type = TOML_TABLE;
    ps.root->line = ps.root->col = 1;
    toml_value *cur = ps.root;
    while (!ps.failed) {
        skip_ws(&ps);
        if (at_end(&ps))
            break;
        int c = peek(&ps);
        if (c == '#') {
            expect_eol(&ps, "a comment");
            continue;
        }
        int nl = newline_len(&ps);
        if (nl) {
            take_newline(&ps, nl);
            continue;
        }
        if (c == '[') {
            cur = parse_header(&ps);
            if (!cur)
                break;
            expect_eol(&ps, "a table header");
            continue;
        }
        key_part k[MAX_KEY_PARTS];
        size_t n = parse_key(&ps, k);
        if (!n)
            break;
        if (peek(&ps) != '=') {
            FAIL(&ps, "expected '=' after the key");
            free_key(k, n);
            break;
        }
        ps.p++;
        skip_ws(&ps);
        toml_value *v = parse_value(&ps);
        if (!v || !insert_kv(&ps, cur, k, n, v, false)) {
            toml_free(v);
            free_key(k, n);
            break;
        }
        free_key(k, n);
        expect_eol(&ps, "a value");
    }
    free(ps.pending);
    if (ps.failed) {
        toml_free(ps.root);
        return NULL;
    }
    return ps.root;
}
