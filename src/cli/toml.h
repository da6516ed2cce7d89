/* toml.h - a strict reader for the subset of TOML 1.0 that resource-tracker's config needs:
 * tables, dotted keys, basic and literal strings (single- and multi-line, with escapes),
 * integers, floats, booleans, arrays and inline tables. Dates/times and arrays of tables are
 * rejected with a message naming them; nothing outside the subset is ever misread. */
#ifndef RT_TOML_H
#define RT_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum toml_type { TOML_STRING, TOML_INTEGER, TOML_FLOAT, TOML_BOOL, TOML_ARRAY, TOML_TABLE } toml_type;

typedef struct toml_value toml_value;

typedef struct toml_kv {
    char *key; /* NUL-terminated; may also contain NULs (from \u0000): use key_len */
    size_t key_len;
    int line, col; /* where the key was written (for tables: the header or first dotted key) */
    toml_value *val;
} toml_kv;

struct toml_value {
    toml_type type;
    int line, col; /* where the value starts */
    unsigned flags; /* internal: how a table was defined */
    union {
        struct {
            char *s; /* NUL-terminated; may contain NULs: use len */
            size_t len;
        } str;
        int64_t i;
        double f;
        bool b;
        struct {
            toml_value **items;
            size_t n, cap;
        } arr;
        struct {
            toml_kv *kv;
            size_t n, cap;
        } tab;
    } u;
};

/* Parses a whole document. Returns the root table (free with toml_free), or NULL with a
 * message "LINE:COL: problem" in err. Never reads past buf+len; buf need not be NUL-ended. */
toml_value *toml_parse(const char *buf, size_t len, char *err, size_t errlen);

/* Frees a value and everything below it. NULL is allowed. */
void toml_free(toml_value *v);

/* Returns the entry named key in table t, or NULL. */
const toml_kv *toml_find(const toml_value *t, const char *key);

/* Returns a short English name of a type, e.g. "a string". */
const char *toml_type_name(toml_type t);

#endif
