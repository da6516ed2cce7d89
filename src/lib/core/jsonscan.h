/* jsonscan.h - a small validating JSON tokenizer that allocates nothing (strict RFC 8259 as
 * jansson reads it, never laxer). Internal to the library. Include it with _GNU_SOURCE (or
 * _POSIX_C_SOURCE >= 200809L) defined, for locale_t. */
#ifndef RT_JSONSCAN_H
#define RT_JSONSCAN_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the tokenizer ----------------------------------------------------------------------- */

typedef struct rt_js {
    const char *p, *end; /* what is left to read */
    int depth;           /* open objects and arrays */
    const char *err;     /* static text of the first problem, NULL while all is well */
    locale_t c_locale;   /* "C" for strtod_l on numbers the fast path cannot convert exactly;
                          * (locale_t)0: such numbers are rejected */
} rt_js;

/* Deepest nesting accepted (jansson allows 2048; being stricter keeps the scanner's
 * acceptance a subset of jansson's). */
#define RT_JS_MAX_DEPTH 64
/* Longest number token accepted (a longer one is rejected, also stricter than jansson). */
#define RT_JS_MAX_NUMBER 320

typedef enum rt_js_type {
    RT_JS_BAD = 0, RT_JS_OBJECT, RT_JS_ARRAY, RT_JS_STRING, RT_JS_NUMBER, RT_JS_TRUE, RT_JS_FALSE, RT_JS_NULL
} rt_js_type;

/* Skips blanks and returns the type of the value that starts there (not consumed), or
 * RT_JS_BAD (j->err set) at the end or on a byte no value starts with. */
rt_js_type rt_js_peek(rt_js *j);

/* Consumes '{' or '['. Returns false (err set) when it is not there or nesting is too deep. */
bool rt_js_open(rt_js *j, char c);

/* The next member of an open object: returns 1 with *key / *klen the raw (still escaped) key
 * and the ':' consumed, 0 at its '}' (consumed), -1 on a syntax error (err set). first is
 * the caller's flag, true before the first member (it is updated). */
int rt_js_member(rt_js *j, bool *first, const char **key, size_t *klen);

/* The next element of an open array: 1 when a value follows, 0 at its ']' (consumed), -1 on
 * a syntax error. first as for rt_js_member. */
int rt_js_element(rt_js *j, bool *first);

/* A string value: validates it (escapes, UTF-8, no control characters) and sets *raw / *len
 * to its bytes between the quotes, still escaped. Returns false (err set) when malformed. */
bool rt_js_string(rt_js *j, const char **raw, size_t *len);

/* A number value, converted exactly as strtod (correctly rounded) would; an integer token
 * as jansson stores it ((double) of a 64-bit integer; out of range is an error). Returns
 * false (err set) when malformed or out of range. */
bool rt_js_number(rt_js *j, double *out);

/* Skips and validates any one value. Returns false (err set) when it is malformed. */
bool rt_js_skip(rt_js *j);

/* Whether nothing but blanks is left (err set otherwise). */
bool rt_js_at_end(rt_js *j);

/* Decodes the raw string raw[0..len) (validated by rt_js_string) into dst[cap], NUL-ended.
 * Returns the decoded length; when it is >= cap, dst holds the first cap-1 bytes. */
size_t rt_js_unescape(const char *raw, size_t len, char *dst, size_t cap);

/* Converts the number text p[0..n) (digits with an optional sign, fraction and exponent,
 * already checked to be that shape) to the nearest double: exactly with integers up to 2^53
 * and powers of ten up to 22, else strtod_l in loc. Returns false on overflow to infinity or
 * when loc is needed but (locale_t)0. */
bool rt_decimal_to_double(const char *p, size_t n, locale_t loc, double *out);

#endif
