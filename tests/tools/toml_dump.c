/* toml_dump.c - test helper: reads a TOML file with the config reader and prints it in the
 * toml-test tagged JSON form ({"type": ..., "value": ...} for every scalar), or prints the
 * reader's error to stderr and exits 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

static void json_string(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void dump(const toml_value *v)
{
    switch (v->type) {
    case TOML_STRING:
        fputs("{\"type\":\"string\",\"value\":", stdout);
        json_string(v->u.str.s, v->u.str.len);
        putchar('}');
        break;
    case TOML_INTEGER:
        printf("{\"type\":\"integer\",\"value\":\"%lld\"}", (long long)v->u.i);
        break;
    case TOML_FLOAT:
        if (isnan(v->u.f))
            printf("{\"type\":\"float\",\"value\":\"nan\"}");
        else if (isinf(v->u.f))
            printf("{\"type\":\"float\",\"value\":\"%sinf\"}", v->u.f < 0 ? "-" : "");
        else
            printf("{\"type\":\"float\",\"value\":\"%.17g\"}", v->u.f);
        break;
    case TOML_BOOL:
        printf("{\"type\":\"bool\",\"value\":\"%s\"}", v->u.b ? "true" : "false");
        break;
    case TOML_ARRAY:
        putchar('[');
        for (size_t i = 0; i < v->u.arr.n; i++) {
            if (i)
                putchar(',');
            dump(v->u.arr.items[i]);
        }
        putchar(']');
        break;
    case TOML_TABLE:
        putchar('{');
        for (size_t i = 0; i < v->u.tab.n; i++) {
            if (i)
                putchar(',');
            json_string(v->u.tab.kv[i].key, v->u.tab.kv[i].key_len);
            putchar(':');
            dump(v->u.tab.kv[i].val);
        }
        putchar('}');
        break;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: toml-dump FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf)
        return 2;
    char err[512];
    toml_value *root = toml_parse(buf, len, err, sizeof err);
    free(buf);
    if (!root) {
        fprintf(stderr, "%s: %s\n", argv[1], err);
        return 1;
    }
    dump(root);
    putchar('\n');
    toml_free(root);
    return 0;
}
