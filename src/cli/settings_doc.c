/* settings_doc.c - rt-settings-doc, run by the build: writes a document with its part made from
 * the settings table (settings_table.c, its words from docs/options/NAME.md) put in, so the
 * documents cannot drift from the table.
 *   rt-settings-doc man docs/resource-tracker.1 OUT   the man page, OPTIONS' entries (from the
 *                                                     line after ".SH OPTIONS" to the next ".PP")
 *                                                     and ENVIRONMENT's of the variables read
 *                                                     from the environment alone (between two
 *                                                     ".\" rt-settings-doc:" comments) made from
 *                                                     the table
 *   rt-settings-doc markdown docs/usage.md OUT        the rows of the flag table (after its
 *                                                     "|---|" line) made from the table
 *   rt-settings-doc man-SUB docs/resource-tracker-SUB.1 OUT
 *                                                     subcommand SUB's man page: OPTIONS' entries
 *                                                     (to the next ".PP" or ".SH") made from the
 *                                                     rows SUB takes, in the words of their files'
 *                                                     @man SUB
 *   rt-settings-doc contracts docs/contracts.md OUT   its tables of a tracking run's options, of
 *                                                     the subcommands' options and of the
 *                                                     environment-only variables (the rows after
 *                                                     each one's header) made from the table
 *   OUT "--check": writes nothing; exit 1, saying so, when the document differs from what the
 *   table makes (the test that the committed documents are the table's). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optdoc.h"
#include "settings.h"

/* The roff comments that hold the man page's ENVIRONMENT entries made from the table (those
 * of the variables read from the environment alone) between them. */
#define ENV_MARK ".\\\" rt-settings-doc:"

/* The Markdown tables' headers, by kind (the rows after them are made). */
static const char *table_head(int kind)
{
    switch (kind) {
    case CLI_DOC_MARKDOWN: return "\n| flag | short | default | meaning |\n|---|---|---|---|\n";
    case CLI_DOC_CONTRACTS:
        return "\n| flag | short | default | config | environment | meaning |\n|---|---|---|---|---|---|\n";
    case CLI_DOC_SUBCOMMANDS: return "\n| subcommand | options |\n|---|---|\n";
    case CLI_DOC_ENV: return "\n| variable | value | default | meaning |\n|---|---|---|---|\n";
    default: return NULL;
    }
}

/* Where the made part of text starts and ends (*from, *to), for kind. Returns 0, or -1. */
static int find_part(const char *text, int kind, const char **from, const char **to)
{
    if (kind == CLI_DOC_MAN) {
        const char *sh = strstr(text, "\n.SH OPTIONS\n");
        if (!sh)
            return -1;
        *from = sh + strlen("\n.SH OPTIONS\n");
        *to = strstr(*from, "\n.PP\n");
        const char *next = strstr(*from, "\n.SH ");
        if (!*to || (next && next < *to))
            *to = next;
        if (!*to)
            return -1;
        *to += 1;
        return 0;
    }
    if (kind == CLI_DOC_MAN_ENV) {
        static const char begin[] = "\n" ENV_MARK " the variables read from the environment alone";
        const char *b = strstr(text, begin);
        *from = b ? strchr(b + 1, '\n') : NULL;
        *to = *from ? strstr(*from, "\n" ENV_MARK " end\n") : NULL;
        if (!*to)
            return -1;
        *from += 1;
        *to += 1;
        return 0;
    }
    const char *want = table_head(kind);
    const char *head = strstr(text, want);
    if (!head)
        return -1;
    *from = head + strlen(want);
    const char *p = *from;
    while (*p == '|') {
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    *to = p;
    return 0;
}

/* text with its part of kind made anew (sub: a subcommand's man page) into *made (free it), for
 * the document doc. Returns 0; or -1 after saying why. */
static int fill(const char *doc, const char *text, int kind, const cli_subcommand *sub, char **made)
{
    const char *from, *to;
    *made = NULL;
    if (find_part(text, kind, &from, &to) < 0) {
        fprintf(stderr, "rt-settings-doc: %s has no %s to fill\n", doc,
                kind == CLI_DOC_MAN       ? "\".SH OPTIONS\" ... \".PP\""
                : kind == CLI_DOC_MAN_ENV ? "\"" ENV_MARK
                                            " the variables read from the environment alone\" ... \"" ENV_MARK " end\""
                                          : table_head(kind) + 1);
        return -1;
    }
    size_t len = 0;
    FILE *m = open_memstream(made, &len);
    if (!m)
        return -1;
    fwrite(text, 1, (size_t)(from - text), m);
    int rc = 0;
    if (sub)
        rc = cli_settings_doc_for(m, sub->cmd);
    else
        cli_settings_doc(m, kind);
    fputs(to, m);
    fclose(m);
    if (rc != 0)
        fprintf(stderr, "rt-settings-doc: %s: the table lacks words for an option (above)\n", doc);
    return rc;
}

int main(int argc, char **argv)
{
    const cli_subcommand *sub =
        argc == 4 && strncmp(argv[1], "man-", 4) == 0 ? cli_subcommand_by_name(argv[1] + 4) : NULL;
    /* the kinds of the parts to make, in order; -1 ends */
    static const int man[] = {CLI_DOC_MAN, CLI_DOC_MAN_ENV, -1}, man_sub[] = {CLI_DOC_MAN, -1},
                     markdown[] = {CLI_DOC_MARKDOWN, -1},
                     contracts[] = {CLI_DOC_CONTRACTS, CLI_DOC_SUBCOMMANDS, CLI_DOC_ENV, -1};
    const int *kinds = sub                                              ? man_sub
                       : argc == 4 && strcmp(argv[1], "man") == 0       ? man
                       : argc == 4 && strcmp(argv[1], "markdown") == 0  ? markdown
                       : argc == 4 && strcmp(argv[1], "contracts") == 0 ? contracts
                                                                        : NULL;
    if (!kinds) {
        fprintf(stderr, "usage: rt-settings-doc man|man-SUBCOMMAND|markdown|contracts DOCUMENT OUT|--check\n");
        return 2;
    }
    char *text = optdoc_slurp(argv[2]);
    if (!text) {
        fprintf(stderr, "rt-settings-doc: cannot read %s\n", argv[2]);
        return 1;
    }
    char *made = strdup(text);
    int rc = made ? 0 : 1;
    for (const int *k = kinds; rc == 0 && *k >= 0; k++) {
        char *next;
        rc = fill(argv[2], made, *k, sub, &next) < 0;
        free(made);
        made = next;
    }
    if (rc != 0) {
        /* said */
    } else if (strcmp(argv[3], "--check") == 0) {
        if (strcmp(made, text) != 0) {
            size_t at = 0;
            while (made[at] && made[at] == text[at])
                at++;
            size_t line = 1;
            for (size_t i = 0; i < at; i++)
                line += text[i] == '\n';
            fprintf(stderr,
                    "rt-settings-doc: %s differs from the settings table and docs/options from line %zu on "
                    "(write it anew: cmake --build BUILD --target docs)\n",
                    argv[2], line);
            rc = 1;
        }
    } else {
        size_t len = strlen(made);
        FILE *out = fopen(argv[3], "w");
        if (!out || fwrite(made, 1, len, out) != len || fclose(out) != 0) {
            fprintf(stderr, "rt-settings-doc: cannot write %s\n", argv[3]);
            rc = 1;
        }
    }
    free(made);
    free(text);
    return rc;
}
