/* optdoc_gen.c - rt-options-gen, run by the build: makes the settings table's texts (settings.h's
 * cli_doc: --help's, the man pages' and docs/usage.md's words for each option) from the option
 * text files, one a row (docs/options/NAME.md, read by optdoc.c):
 *   rt-options-gen OUT.c OUT.h FILE...
 * writes OUT.h, declaring cli_doc_NAME for each FILE (NAME its base name without ".md", '-' as
 * '_') and cli_docs[] (all of them, by name), and OUT.c defining them. The table's rows name
 * theirs (settings_table.c: .doc = &cli_doc_interval); a file no row names is found by
 * unit.settings. Exit 1 after naming the file and line of a problem. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optdoc.h"

/* The C identifier's tail of path ("docs/options/grid-zone.md": "grid_zone") into buf. Returns
 * 0, or -1 when the name is not letters, digits, '-' and '_' before ".md" (a variable's
 * file is named as it: TRACKER_PSS_MAX_AGE.md). */
static int ident_of(const char *path, char *buf, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n <= 3 || strcmp(base + n - 3, ".md") != 0 || n - 3 >= cap)
        return -1;
    for (size_t i = 0; i < n - 3; i++) {
        char c = base[i];
        if (!(isalnum((unsigned char)c) || c == '-' || c == '_'))
            return -1;
        buf[i] = c == '-' ? '_' : c;
    }
    buf[n - 3] = '\0';
    return 0;
}

/* Writes text as a C string literal, a literal a line (each ending "\n" but the last), the
 * lines after the first indented by indent. */
static void put_string(FILE *f, const char *text, int indent)
{
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '\\': fputs("\\\\", f); break;
        case '"': fputs("\\\"", f); break;
        case '?': fputs("\\?", f); break; /* no trigraph */
        case '\t': fputs("\\t", f); break;
        case '\n': fprintf(f, "\\n\"\n%*s\"", indent, ""); break;
        default: fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Writes the CLI_CMD_* bits of commands ("summary report", "subcommands"). Returns 0, or -1 when
 * a name is not a word of lower-case letters. */
static int put_commands(FILE *f, const char *commands)
{
    if (strcmp(commands, "subcommands") == 0) {
        fputs("(CLI_CMD_ALL & ~CLI_CMD_TRACK)", f);
        return 0;
    }
    int first = 1;
    for (const char *p = commands; *p;) {
        size_t n = strcspn(p, " ");
        for (size_t i = 0; i < n; i++)
            if (!islower((unsigned char)p[i]))
                return -1;
        fprintf(f, "%sCLI_CMD_", first ? "" : " | ");
        for (size_t i = 0; i < n; i++)
            fputc(toupper((unsigned char)p[i]), f);
        first = 0;
        p += n + strspn(p + n, " ");
    }
    return first ? -1 : 0;
}

/* Writes one field ".name = TEXT," of d's key (for the tracking command), when d has it. */
static void put_field(FILE *f, const optdoc *d, const char *key, const char *name)
{
    const char *t = optdoc_get(d, key, NULL);
    if (!t)
        return;
    fprintf(f, "    .%s = ", name);
    put_string(f, t, 8 + (int)strlen(name));
    fputs(",\n", f);
}

/* Writes cli_doc_<id>'s definition from d. Returns 0, or -1 (a bad subcommand name). */
static int put_doc(FILE *f, const char *id, const optdoc *d)
{
    fprintf(f, "const cli_doc cli_doc_%s = {\n", id);
    put_field(f, d, "option", "option");
    put_field(f, d, "man-arg", "man_arg");
    put_field(f, d, "md-default", "md_default");
    put_field(f, d, "help", "help");
    put_field(f, d, "man", "man");
    put_field(f, d, "md", "md");
    put_field(f, d, "contracts", "contracts");
    put_field(f, d, "since", "since");
    put_field(f, d, "contracts-flag", "c_flag");
    put_field(f, d, "contracts-short", "c_short");
    put_field(f, d, "contracts-default", "c_default");
    put_field(f, d, "contracts-config", "c_config");
    put_field(f, d, "contracts-env", "c_env");
    int words = 0;
    for (size_t i = 0; i < d->n; i++) {
        const optdoc_part *p = &d->parts[i];
        if (!p->commands || strcmp(p->key, "contracts") != 0)
            continue;
        fputs(words++ ? "        {" : "    .contracts_sub = (const cli_sub_words[]){\n        {", f);
        if (put_commands(f, p->commands) < 0)
            return -1;
        fputs(", ", f);
        put_string(f, p->text, 12);
        fputs("},\n", f);
    }
    if (words)
        fputs("        {0}},\n", f);
    int subs = 0;
    for (size_t i = 0; i < d->n; i++) {
        const optdoc_part *p = &d->parts[i];
        if (!p->commands || strcmp(p->key, "help") != 0)
            continue;
        fputs(subs++ ? "        {.commands = " : "    .sub = (const cli_sub_text[]){\n        {.commands = ", f);
        if (put_commands(f, p->commands) < 0)
            return -1;
        fputs(",\n         .help = ", f);
        put_string(f, p->text, 17);
        fputs(",\n         .man = ", f);
        put_string(f, optdoc_get(d, "man", p->commands), 16);
        fputs("},\n", f);
    }
    if (subs)
        fputs("        {0}},\n", f);
    fputs("};\n\n", f);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rt-options-gen OUT.c OUT.h FILE...\n");
        return 2;
    }
    char **files = argv + 3;
    size_t n = (size_t)argc - 3;
    qsort(files, n, sizeof *files, by_name);
    FILE *c = fopen(argv[1], "w"), *h = fopen(argv[2], "w");
    if (!c || !h) {
        fprintf(stderr, "rt-options-gen: cannot write %s\n", !c ? argv[1] : argv[2]);
        return 1;
    }
    static const char made[] = "made by rt-options-gen (src/cli/optdoc_gen.c) from docs/options/NAME.md: edit those";
    fprintf(h,
            "/* settings_docs.h - %s. */\n#ifndef RT_CLI_SETTINGS_DOCS_H\n#define RT_CLI_SETTINGS_DOCS_H\n\n"
            "#include \"settings.h\"\n\n",
            made);
    fprintf(c, "/* settings_docs.c - %s. */\n#include \"settings_docs.h\"\n\n", made);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char id[128], err[512];
        optdoc d;
        char *text = optdoc_slurp(files[i]);
        if (ident_of(files[i], id, sizeof id) < 0) {
            fprintf(stderr, "%s: the name is not letters, digits, '-' and '_', then .md\n", files[i]);
            rc = 1;
        } else if (!text) {
            fprintf(stderr, "%s: cannot read it\n", files[i]);
            rc = 1;
        } else if (optdoc_parse(text, &d, err, sizeof err) < 0) {
            fprintf(stderr, "%s:%s\n", files[i], err);
            rc = 1;
        } else {
            fprintf(h, "extern const cli_doc cli_doc_%s;\n", id);
            if (put_doc(c, id, &d) < 0) {
                fprintf(stderr, "%s: a subcommand's name is not a word of lower-case letters\n", files[i]);
                rc = 1;
            }
            optdoc_free(&d);
        }
        free(text);
    }
    fputs("\n/* every text, by name; NULL after the last */\nextern const cli_doc *const cli_docs[];\n\n#endif\n", h);
    fputs("const cli_doc *const cli_docs[] = {\n", c);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char id[128];
        ident_of(files[i], id, sizeof id);
        fprintf(c, "    &cli_doc_%s,\n", id);
    }
    fputs("    NULL,\n};\n", c);
    if (fclose(c) != 0 || fclose(h) != 0) {
        fprintf(stderr, "rt-options-gen: cannot write %s\n", argv[1]);
        rc = 1;
    }
    if (rc != 0) { /* no half-made file stays for the build to take */
        remove(argv[1]);
        remove(argv[2]);
    }
    return rc;
}
