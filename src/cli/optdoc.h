/* optdoc.h - the reader of one option's text file (docs/options/NAME.md: the words of one row of
 * the settings table for --help, the man pages and docs/usage.md), for rt-options-gen
 * (optdoc_gen.c), which makes the table's texts from them at build time. curl's
 * docs/cmdline-opts/ is the model. The format (docs/options/README.md):
 *   @option --FLAG          the option the file is about (or VARIABLE); first, once
 *   @man-arg CHOICES        the value in the man page's tag when not the row's arg (json|csv)
 *   @md-default TEXT        docs/usage.md's default cell
 *   @help [COMMANDS]        then the lines of --help's text; with COMMANDS (subcommands' names,
 *                           space-separated, or "subcommands" for all of them) those
 *                           subcommands' words instead of the tracking command's
 *   @man [COMMANDS]         the man page's entry (roff), as @help
 *   @md                     docs/usage.md's meaning cell (one line)
 *   @contracts [COMMANDS]   docs/contracts.md's meaning cell (one line): in its table of a
 *                           tracking run's options, or of the environment-only variables; with
 *                           COMMANDS the option's part of those subcommands' cell
 *   @since VERSION          the version that brought it, after the flag in docs/contracts.md
 *   @contracts-flag, -short, -default, -config, -env TEXT
 *                           docs/contracts.md's cell when not the one made from the row (the
 *                           default: @md-default's)
 * A block runs to the next line that starts with "@" (blank lines at its end are not its);
 * "@@" at a line's start is a text "@". */
#ifndef RT_CLI_OPTDOC_H
#define RT_CLI_OPTDOC_H

#include <stddef.h>

/* One part of the file: a one-line field or a block. */
typedef struct optdoc_part {
    char *key;      /* "option", "man-arg", "md-default", "help", "man", "md", "contracts", ... */
    char *commands; /* help's, man's and contracts' subcommands ("summary report"); NULL: the tracking command's */
    char *text;     /* the value, or the block's lines ('\n' between them, none at the end) */
    size_t line;    /* the line of its "@" */
} optdoc_part;

typedef struct optdoc {
    optdoc_part *parts; /* in the file's order; parts[0] is "option" */
    size_t n;
} optdoc;

/* Reads text (a whole file) into d. Returns 0; or -1 with "LINE: problem" in err (d left empty):
 * no "@option" first, an unknown key, a field without its value or a block without lines, a
 * key given twice (for the same commands), a subcommand's help without its man or the other way
 * round, text before the first "@", out of memory. */
int optdoc_parse(const char *text, optdoc *d, char *err, size_t errlen);

/* The text of key for commands (NULL: the tracking command's) in d, or NULL. */
const char *optdoc_get(const optdoc *d, const char *key, const char *commands);

void optdoc_free(optdoc *d);

/* The whole of file path, '\0'-terminated (free it), or NULL when it cannot be read. */
char *optdoc_slurp(const char *path);

#endif
