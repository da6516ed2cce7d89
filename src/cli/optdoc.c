/* optdoc.c - reads one option's text file (docs/options/NAME.md) into its parts: the one-line
 * fields and the blocks of --help, man and Markdown text (optdoc.h says the format); and the
 * whole of a file, for the build's document tools. It uses nothing of the tool. */
#define _GNU_SOURCE
#include "optdoc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys: a one-line field (its value on the "@" line) or a block (its lines below it), and
 * whether subcommands' names may follow it. */
static const struct {
    const char *key;
    bool field, commands;
} keys[] = {
    {"option", true, false},
    {"man-arg", true, false},
    {"md-default", true, false},
    {"help", false, true},
    {"man", false, true},
    {"md", false, false},
    {"since", true, false},
    {"contracts-flag", true, false},
    {"contracts-short", true, false},
    {"contracts-default", true, false},
    {"contracts-config", true, false},
    {"contracts-env", true, false},
    {"contracts", false, true},
};

/* Whether key is a block's (its text on the lines below it). */
static bool is_block(const char *key)
{
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strcmp(keys[k].key, key) == 0)
            return !keys[k].field;
    return false;
}

/* Whether a and b name the same commands (NULL: the tracking command's). */
static bool same_commands(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

const char *optdoc_get(const optdoc *d, const char *key, const char *commands)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->parts[i].key, key) == 0 && same_commands(d->parts[i].commands, commands))
            return d->parts[i].text;
    return NULL;
}

void optdoc_free(optdoc *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->parts[i].key);
        free(d->parts[i].commands);
        free(d->parts[i].text);
    }
    free(d->parts);
    d->parts = NULL;
    d->n = 0;
}

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        snprintf(err, errlen, __VA_ARGS__);                                                                            \
        goto fail;                                                                                                     \
    } while (0)

/* Opens part key (the n bytes at name) with the rest of its "@" line, rest (may be empty), at
 * line no. Returns the part, or NULL after writing the problem into err. */
static optdoc_part *open_part(optdoc *d, const char *name, size_t n, const char *rest, size_t line, char *err,
                              size_t errlen)
{
    size_t k = 0;
    while (k < sizeof keys / sizeof keys[0] && !(strlen(keys[k].key) == n && strncmp(keys[k].key, name, n) == 0))
        k++;
    if (k == sizeof keys / sizeof keys[0]) {
        snprintf(err, errlen, "%zu: unknown key '@%.*s' (docs/options/README.md lists them)", line, (int)n, name);
        return NULL;
    }
    if (keys[k].field && !*rest) {
        snprintf(err, errlen, "%zu: @%s without its value", line, keys[k].key);
        return NULL;
    }
    if (!keys[k].field && *rest && !keys[k].commands) {
        snprintf(err, errlen, "%zu: @%s takes no words after it", line, keys[k].key);
        return NULL;
    }
    if ((d->n == 0) != (k == 0)) {
        snprintf(err, errlen, "%zu: %s", line, d->n == 0 ? "the file must open with @option" : "@option twice");
        return NULL;
    }
    const char *commands = keys[k].field || !*rest ? NULL : rest;
    if (optdoc_get(d, keys[k].key, commands)) {
        snprintf(err, errlen, "%zu: @%s%s%s twice", line, keys[k].key, commands ? " " : "", commands ? commands : "");
        return NULL;
    }
    optdoc_part *grown = realloc(d->parts, (d->n + 1) * sizeof *grown);
    if (!grown) {
        snprintf(err, errlen, "%zu: out of memory", line);
        return NULL;
    }
    d->parts = grown;
    optdoc_part *p = &d->parts[d->n++];
    *p = (optdoc_part){strdup(keys[k].key), commands ? strdup(commands) : NULL,
                       keys[k].field ? strdup(rest) : strdup(""), line};
    if (!p->key || (commands && !p->commands) || !p->text) {
        snprintf(err, errlen, "%zu: out of memory", line);
        return NULL;
    }
    return p;
}

/* Appends the n bytes at s and a '\n' to the block p. Returns 0, or -1 (no memory). */
static int add_line(optdoc_part *p, const char *s, size_t n)
{
    size_t have = strlen(p->text);
    char *t = realloc(p->text, have + n + 2);
    if (!t)
        return -1;
    memcpy(t + have, s, n);
    t[have + n] = '\n';
    t[have + n + 1] = '\0';
    p->text = t;
    return 0;
}

int optdoc_parse(const char *text, optdoc *d, char *err, size_t errlen)
{
    *d = (optdoc){0};
    optdoc_part *block = NULL;
    size_t line = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        line++;
        if (p[0] == '@' && !(n > 1 && p[1] == '@')) {
            char head[512];
            if (n > sizeof head)
                FAIL("%zu: a line of @ over %zu bytes", line, sizeof head - 1);
            snprintf(head, sizeof head, "%.*s", (int)(n - 1), p + 1);
            size_t kn = strcspn(head, " ");
            const char *rest = head + kn + strspn(head + kn, " ");
            optdoc_part *part = open_part(d, head, kn, rest, line, err, errlen);
            if (!part)
                goto fail;
            block = is_block(part->key) ? part : NULL;
        } else if (block) {
            bool at = p[0] == '@'; /* "@@": a text "@" */
            if (add_line(block, p + at, n - at) < 0)
                FAIL("%zu: out of memory", line);
        } else if (n > 0) {
            FAIL("%zu: text outside a block (after a field, or before @option)", line);
        }
        p += n + (p[n] == '\n');
    }
    if (d->n == 0)
        FAIL("1: the file must open with @option");
    for (size_t i = 0; i < d->n; i++) {
        optdoc_part *q = &d->parts[i];
        size_t len = strlen(q->text);
        while (is_block(q->key) && len && q->text[len - 1] == '\n') /* blank lines before the next part */
            q->text[--len] = '\0';
        if (is_block(q->key) && !len)
            FAIL("%zu: @%s without lines", q->line, q->key);
        bool paired = strcmp(q->key, "help") == 0 || strcmp(q->key, "man") == 0;
        if (paired && q->commands && !optdoc_get(d, strcmp(q->key, "help") == 0 ? "man" : "help", q->commands))
            FAIL("@%s %s without @%s %s", q->key, q->commands, strcmp(q->key, "help") == 0 ? "man" : "help",
                 q->commands);
    }
    return 0;
fail:
    optdoc_free(d);
    return -1;
}

char *optdoc_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = f ? open_memstream(&buf, &len) : NULL;
    char chunk[8192];
    size_t n;
    while (m && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    int bad = !m || ferror(f);
    if (m)
        fclose(m);
    if (f)
        fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    return buf;
}
