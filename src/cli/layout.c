/* layout.c - text for people laid out at the width of where it goes (cli_text_width: the
 * terminal's columns, else COLUMNS, else 80), broken between words only, by the one routine
 * that breaks the summary's lines too (rt_text_wrap): a paragraph, a two-column entry with a
 * hanging indent (--help's options, as man and GNU help lay them out; stacked, the text under
 * its tag, where the width leaves the text too little room), and the hand-written help texts
 * reflowed (cli_prose_put). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "status.h"

#define ENTRY_MIN_TEXT 40 /* fewer columns than this for an entry's text: stacked under its tag */
#define STACK_INDENT 6    /* where a stacked entry's text starts */
#define HANG_MIN_TEXT 30  /* a hanging indent that leaves fewer columns is cut to STACK_INDENT */
#define GLUE '\x1f' /* a space no line is broken at (rt_text_wrap writes it as a space) */

void cli_glue_brackets(char *s)
{
    int depth = 0;
    for (; *s; s++) {
        depth += *s == '[' ? 1 : *s == ']' && depth > 0 ? -1 : 0;
        if (*s == ' ' && depth > 0)
            *s = GLUE;
    }
}

int cli_text_width(FILE *f)
{
    int w = cli_term_width(fileno(f));
    if (w <= 0) {
        const char *c = getenv("COLUMNS");
        char *end;
        long v = c && *c ? strtol(c, &end, 10) : 0;
        w = v > 0 && v < 100000 && !*end ? (int)v : 80;
    }
    return w < 40 ? 40 : w;
}

/* The columns of the n bytes at s (UTF-8 characters, not bytes). */
static size_t columns(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

size_t cli_wrap_put(FILE *f, size_t width, size_t used, size_t indent, const char *text)
{
    if (width && indent + HANG_MIN_TEXT > width) /* a narrow terminal: a hanging indent it can hold */
        indent = STACK_INDENT < indent ? STACK_INDENT : indent;
    /* room for the worst case: every word alone on a line */
    size_t need = strlen(text) * (indent + 2) + 2;
    char small[4096];
    char *buf = need <= sizeof small ? small : malloc(need);
    if (!buf) { /* unbroken rather than nothing */
        fputs(text, f);
        return used + columns(text, strlen(text));
    }
    size_t n = rt_text_wrap(text, used, indent, width, buf, need);
    fwrite(buf, 1, n, f);
    const char *last = memrchr(buf, '\n', n);
    size_t end = last ? indent + columns(last + 1, n - (size_t)(last + 1 - buf)) : used + columns(buf, n);
    if (buf != small)
        free(buf);
    return end;
}

void cli_entry_put(FILE *f, size_t width, const char *tag, size_t hang, size_t col, const char *text)
{
    size_t lead = strspn(tag, " ");
    fprintf(f, "%.*s", (int)lead, tag);
    size_t at = cli_wrap_put(f, width, lead, hang, tag + lead);
    if (!text || !*text) {
        fputc('\n', f);
        return;
    }
    if (width < col + ENTRY_MIN_TEXT) { /* stacked: the text under its tag */
        col = STACK_INDENT;
        at = width; /* a line of its own */
    }
    if (at + 2 <= col)
        fprintf(f, "%*s", (int)(col - at), "");
    else
        fprintf(f, "\n%*s", (int)col, "");
    cli_wrap_put(f, width, col, col, text);
    fputc('\n', f);
}

/* The indent of the line at p (its leading spaces). */
static size_t indent_of(const char *p)
{
    return strspn(p, " ");
}

/* The hanging indent of the synopsis line at p (len bytes): the column after "Usage:
 * resource-tracker NAME " ("resource-tracker NAME " on a line of its own); its indent when it is
 * no synopsis. */
static size_t synopsis_hang(const char *p, size_t len)
{
    size_t i = indent_of(p);
    int words = strncmp(p + i, "Usage:", 6) == 0 ? 3 : strncmp(p + i, "resource-tracker ", 17) == 0 ? 2 : 0;
    size_t hang = i;
    for (; words > 0 && i < len; words--) {
        i += strcspn(p + i, " \n");
        i += indent_of(p + i);
        hang = i < len ? i : hang;
    }
    return hang;
}

/* Writes the item made of the lines [from, to) of text joined by spaces, after the indent of
 * its first line, broken at width with the lines after the first at hang (a synopsis: never
 * inside [...]). */
static void item_put(FILE *f, size_t width, const char *from, const char *to, size_t hang, bool synopsis)
{
    char *joined = malloc((size_t)(to - from) + 1);
    if (!joined) {
        fwrite(from, 1, (size_t)(to - from), f);
        return;
    }
    size_t n = 0, lead = indent_of(from);
    for (const char *p = from + lead; p < to;) {
        const char *nl = memchr(p, '\n', (size_t)(to - p));
        const char *end = nl ? nl : to;
        if (n)
            joined[n++] = ' ';
        memcpy(joined + n, p, (size_t)(end - p));
        n += (size_t)(end - p);
        p = nl ? nl + 1 + indent_of(nl + 1) : to;
    }
    joined[n] = '\0';
    if (synopsis)
        cli_glue_brackets(joined);
    fprintf(f, "%*s", (int)lead, "");
    cli_wrap_put(f, width, lead, hang, joined);
    fputc('\n', f);
    free(joined);
}

void cli_prose_put(FILE *f, size_t width, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *eol = nl ? nl : p + strlen(p);
        if (eol == p + indent_of(p)) { /* a blank line stays */
            fputc('\n', f);
            p = nl ? nl + 1 : eol;
            continue;
        }
        /* the paragraph: up to a blank line */
        const char *end = p;
        while (*end && end[indent_of(end)] != '\n' && end[indent_of(end)] != '\0') {
            const char *e = strchr(end, '\n');
            end = e ? e + 1 : end + strlen(end);
        }
        if (strncmp(p, "Usage:", 6) == 0) {
            /* a synopsis a line, its deeper lines continuing it */
            size_t start = 6 + indent_of(p + 6);
            for (const char *item = p; item < end;) {
                const char *q = strchr(item, '\n');
                q = q && q < end ? q + 1 : end;
                while (q < end && indent_of(q) > start)
                    q = strchr(q, '\n') ? strchr(q, '\n') + 1 : end;
                const char *line_end = memchr(item, '\n', (size_t)(q - item));
                item_put(f, width, item, q, synopsis_hang(item, line_end ? (size_t)(line_end - item) : (size_t)(q - item)), true);
                item = q;
            }
        } else {
            const char *second = strchr(p, '\n');
            size_t hang = second && second + 1 < end ? indent_of(second + 1) : indent_of(p);
            item_put(f, width, p, end, hang, false);
        }
        p = end;
    }
}

void cli_fold_put(FILE *f, size_t width, const char *line)
{
    size_t lead = indent_of(line);
    if (columns(line, strlen(line)) <= width) {
        fputs(line, f);
    } else {
        fprintf(f, "%*s", (int)lead, "");
        cli_wrap_put(f, width, lead, lead + 2, line + lead);
    }
    fputc('\n', f);
}
