/* settings_doc.c - rt-settings-doc, run by the build: writes a document with its part made from
 * the settings table (settings_table.c, its words from docs/options/NAME.md) put in, so the
 * documents cannot drift from the table.
 *   rt-settings-doc man docs/resource-tracker.1 OUT   the man page, OPTIONS' entries (from the
 *                                                     line after ".SH OPTIONS" to the next ".PP")
 *                                                     made from the table
 *   rt-settings-doc markdown docs/usage.md OUT        the rows of the flag table (after its
 *                                                     "|---|" line) made from the table
 *   rt-settings-doc man-SUB docs/resource-tracker-SUB.1 OUT
 *                                                     subcommand SUB's man page: OPTIONS' entries
 *                                                     (to the next ".PP" or ".SH") made from the
 *                                                     rows SUB takes, in the words of their files'
 *                                                     @man SUB
 *   OUT "--check": writes nothing; exit 1, saying so, when the document differs from what the
 *   table makes (the test that the committed documents are the table's). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optdoc.h"
#include "settings.h"

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
    const char *head = strstr(text, "\n| flag | short | default | meaning |\n|---|---|---|---|\n");
    if (!head)
        return -1;
    *from = strstr(head + 1, "|---|") + strlen("|---|---|---|---|\n");
    const char *p = *from;
    while (*p == '|') {
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    *to = p;
    return 0;
}

int main(int argc, char **argv)
{
    const cli_subcommand *sub =
        argc == 4 && strncmp(argv[1], "man-", 4) == 0 ? cli_subcommand_by_name(argv[1] + 4) : NULL;
    int kind = argc == 4 && (strcmp(argv[1], "man") == 0 || sub) ? CLI_DOC_MAN
               : argc == 4 && strcmp(argv[1], "markdown") == 0   ? CLI_DOC_MARKDOWN
                                                                 : -1;
    if (kind < 0) {
        fprintf(stderr, "usage: rt-settings-doc man|man-SUBCOMMAND|markdown DOCUMENT OUT|--check\n");
        return 2;
    }
    char *text = optdoc_slurp(argv[2]);
    if (!text) {
        fprintf(stderr, "rt-settings-doc: cannot read %s\n", argv[2]);
        return 1;
    }
    const char *from, *to;
    if (find_part(text, kind, &from, &to) < 0) {
        fprintf(stderr, "rt-settings-doc: %s has no %s to fill\n", argv[2],
                kind == CLI_DOC_MAN ? "\".SH OPTIONS\" ... \".PP\""
                                    : "flag table (| flag | short | default | meaning |)");
        free(text);
        return 1;
    }
    char *made = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&made, &len);
    if (!m) {
        free(text);
        return 1;
    }
    fwrite(text, 1, (size_t)(from - text), m);
    int rc = 0;
    if (sub)
        rc = cli_settings_doc_for(m, sub->cmd) < 0;
    else
        cli_settings_doc(m, kind);
    fputs(to, m);
    fclose(m);
    if (rc != 0) {
        fprintf(stderr, "rt-settings-doc: %s: the table lacks words for an option (above)\n", argv[2]);
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
