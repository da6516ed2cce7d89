/* ob.h - the output builder (ob.c) that the JSON and CSV views, the exporters and the store's
 * snapshot append text into: a caller's fixed buffer, counting on past its end so callers learn
 * the size they need (as with snprintf). Not public. */
#ifndef RT_CORE_OB_H
#define RT_CORE_OB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_ob {
    char *buf;
    size_t cap;
    size_t len; /* bytes needed so far; may exceed cap */
    char last;  /* the last byte put, even past cap */
} rt_ob;

void rt_ob_put(rt_ob *o, const char *s, size_t n);
void rt_ob_lit(rt_ob *o, const char *s);
void rt_ob_u64(rt_ob *o, uint64_t v);
void rt_ob_i64(rt_ob *o, int64_t v);
/* v, or null_text for the figure's null mark (RT_NULL_U64, RT_NULL_I64). */
void rt_ob_u64_or(rt_ob *o, uint64_t v, const char *null_text);
void rt_ob_i64_or(rt_ob *o, int64_t v, const char *null_text);
/* v with at most `decimals` decimals, trailing zeros trimmed; null_text when not finite. */
void rt_ob_fixed(rt_ob *o, double v, int decimals, const char *null_text);
/* The same with every one of the `decimals` decimals written (1.500, 2.000). */
void rt_ob_fixed_all(rt_ob *o, double v, int decimals, const char *null_text);
/* The number rt_ob_fixed writes for v, as a double (what a reader parses back): v rounded to
 * decimals as the writer rounds it; v itself where the writer hands it to printf (past exact
 * integers) or it is not finite. */
double rt_ob_fixed_value(double v, int decimals);
/* v as serde_json writes an f64 (the Rust tool's JSON line): the fewest significant digits
 * that read back as v, "X.0" for a whole number below 10^16, 0.000ddd down to 10^-5, else
 * d.ddde-N / de N (1e-7, 1.5e16); null_text when not finite. */
void rt_ob_shortest(rt_ob *o, double v, const char *null_text);
/* s as a JSON string (escaped, invalid UTF-8 replaced by U+FFFD), or null for NULL. */
void rt_ob_json_str(rt_ob *o, const char *s);
/* A JSON object's member and its comma (the caller takes the last comma back when it closes):
 * "k":v with at most dec decimals or null when not finite; "k":"v" escaped or null for NULL;
 * "k":true or false. k is written as it is (a name of ours, no escaping needed). */
void rt_ob_member_num(rt_ob *o, const char *k, double v, int dec);
void rt_ob_member_str(rt_ob *o, const char *k, const char *v);
void rt_ob_member_bool(rt_ob *o, const char *k, bool v);
/* Closes an object or list with c over the comma of its last member (none: c after the open). */
void rt_ob_close(rt_ob *o, char c);

/* A table of a struct's members for rt_ob_members, one row a member (RT_OBM): its key, its kind
 * (taken from the member's C type) and offset, and a double's decimals. How each kind is written:
 * a double as rt_ob_member_num; an int64_t as a count (null below 0); a uint64_t (size_t) as it
 * is, null for RT_NULL_U64; an int as true or false; a const char * as a string or null. */
typedef enum { RT_OBM_DOUBLE, RT_OBM_COUNT, RT_OBM_U64, RT_OBM_FLAG, RT_OBM_STR } rt_obm_kind;
typedef struct rt_obm {
    const char *key;
    rt_obm_kind kind;
    size_t off;
    int dec;
} rt_obm;
#define RT_OBM_KIND_OF(x)                                                                                              \
    _Generic((x), double: RT_OBM_DOUBLE, int64_t: RT_OBM_COUNT, uint64_t: RT_OBM_U64, int: RT_OBM_FLAG,              \
             const char *: RT_OBM_STR)
#define RT_OBM(type, key, member, dec) {key, RT_OBM_KIND_OF(((const type *)0)->member), offsetof(type, member), dec}
#define RT_OBM_N(table) (sizeof(table) / sizeof *(table))

/* The members m[0..n) of the struct at base, in order, each "key":value and its comma. */
void rt_ob_members(rt_ob *o, const void *base, const rt_obm *m, size_t n);

#endif
