/* settings_help.c - the settings table written out for people: the option lines of the
 * tracking command's and each subcommand's --help, the man pages' OPTIONS entries and
 * docs/usage.md's flag table and docs/contracts.md's tables of options and variables
 * (rt-settings-doc), each from the rows a command takes. */
#define _GNU_SOURCE
#include "settings.h"

#include <stdio.h>
#include <string.h>

/* s's text field of its cli_doc, or NULL. */
#define DOC(s, field) ((s)->doc ? (s)->doc->field : NULL)

/* text with {min}, {max} and {def} replaced by s's figures and, with join, its line breaks by
 * spaces (--help's: the lines are broken again at the output's width), into buf. */
static void fill_text(const cli_setting *s, const char *text, bool join, char *buf, size_t cap)
{
    static const char *const names[] = {"{min}", "{max}", "{def}"};
    const double vals[] = {s->min, s->max, s->def};
    size_t at = 0;
    for (size_t i = 0; text[i] && at + 1 < cap;) {
        int k = -1;
        for (int t = 0; t < 3 && text[i] == '{'; t++)
            if (strncmp(text + i, names[t], 5) == 0)
                k = t;
        if (k >= 0) {
            int n = snprintf(buf + at, cap - at, "%.10g", vals[k]);
            at = n > 0 && (size_t)n < cap - at ? at + (size_t)n : at;
            i += 5;
        } else {
            buf[at++] = text[i] == '\n' && join ? ' ' : text[i];
            i++;
        }
    }
    buf[at] = '\0';
}

const char *cli_setting_help(const cli_setting *s, char *buf, size_t cap)
{
    fill_text(s, DOC(s, help) ? s->doc->help : "", true, buf, cap);
    return buf;
}

#define HELP_COL 26 /* where the tracking command's option text starts */

/* --help's tag of s ("  -o, --output OUT.html"; pad: "      --json" where there is no short
 * flag, as the tracking command's list) into buf. Returns its length. */
static int help_tag(const cli_setting *s, bool pad, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "  %c%c%s--%s%s%s", s->short_flag ? '-' : ' ', s->short_flag ? s->short_flag : ' ',
                     s->short_flag ? ", " : "  ", s->flag, s->arg ? " " : "", s->arg ? s->arg : "");
    if (!pad && !s->short_flag && n > 6) { /* "  --json" */
        memmove(buf + 2, buf + 6, (size_t)n - 5);
        n -= 4;
    }
    return n;
}

/* One option of a --help list: its tag, then text from column col, broken at width with a
 * hanging indent (stacked under the tag where width leaves it too little room). */
static void help_entry(FILE *f, size_t width, const cli_setting *s, const char *text, bool pad, int col)
{
    char left[96], words[4096];
    help_tag(s, pad, left, sizeof left);
    fill_text(s, text, true, words, sizeof words);
    cli_entry_put(f, width, left, (size_t)col, (size_t)col, words);
}

void cli_settings_help(FILE *f)
{
    size_t width = (size_t)cli_text_width(f);
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (DOC(s, help) && s->flag && (s->commands & CLI_CMD_TRACK))
            help_entry(f, width, s, s->doc->help, true, HELP_COL);
    }
}

/* s's words for subcommand cmd; NULL when it has none. */
static const cli_sub_text *sub_text(const cli_setting *s, cli_command cmd)
{
    for (const cli_sub_text *t = DOC(s, sub); t && t->commands; t++)
        if (t->commands & CLI_CMD(cmd))
            return t;
    return NULL;
}

/* The next option of subcommand cmd after *k (start with 0), in its documents' order: the
 * subcommands' own options first, then those shared with the tracking command, -h last, each
 * part in table order. NULL after the last. */
static const cli_setting *next_sub_option(cli_command cmd, size_t *k)
{
    for (; *k < 3 * cli_nsettings; ++*k) {
        const cli_setting *s = &cli_settings[*k % cli_nsettings];
        size_t part = s->opt == CLI_O_HELP ? 2 : (s->commands & CLI_CMD_TRACK) ? 1 : 0;
        if (s->flag && (s->commands & CLI_CMD(cmd)) && part == *k / cli_nsettings) {
            ++*k;
            return s;
        }
    }
    return NULL;
}

void cli_settings_help_for(FILE *f, cli_command cmd, const char *head, const char *tail)
{
    char tag[96];
    int col = 0;
    const cli_setting *s;
    for (size_t k = 0; (s = next_sub_option(cmd, &k));) {
        int n = help_tag(s, false, tag, sizeof tag) + 2;
        col = n > col ? n : col;
    }
    size_t width = (size_t)cli_text_width(f);
    cli_prose_put(f, width, head);
    for (size_t k = 0; (s = next_sub_option(cmd, &k));) {
        const cli_sub_text *t = sub_text(s, cmd);
        help_entry(f, width, s, t && t->help ? t->help : "", false, col);
    }
    cli_prose_put(f, width, tail);
}

/* Writes the n bytes of text with every '-' as roff's "\-". */
static void put_roff(FILE *f, const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputs(text[i] == '-' ? "\\-" : (char[2]){text[i], '\0'}, f);
}

/* The man page's tag of s: ".BR \-p ", " \-\-pid " " \fIPID\fR", ".BI \-\-tag " KEY=VALUE",
 * ".B \-\-summary"; a choice (auto|off) in bold words. */
static void man_tag(FILE *f, const cli_setting *s)
{
    const char *arg = DOC(s, man_arg) ? s->doc->man_arg : s->arg;
    bool choice = arg && strchr(arg, '|');
    fputs(s->short_flag || choice ? ".BR " : arg ? ".BI " : ".B ", f);
    if (s->short_flag)
        fprintf(f, "\\-%c \", \" ", s->short_flag);
    fputs("\\-\\-", f);
    put_roff(f, s->flag, strlen(s->flag));
    if (arg && (s->short_flag || choice)) {
        fputs(" \" \" ", f);
        for (const char *a = arg; *a;) {
            size_t n = strcspn(a, "|");
            fputs(choice ? "\\fB" : "\\fI", f);
            put_roff(f, a, n);
            fputs("\\fR", f);
            a += n;
            if (*a)
                fputc(*a++, f);
        }
    } else if (arg) {
        fprintf(f, " \" %s\"", arg);
    }
    fputc('\n', f);
}

/* s's flag and value in Markdown, "`--history FILE\|URL`", into f. */
static void md_flag(FILE *f, const cli_setting *s)
{
    fprintf(f, "`--%s", s->flag);
    if (s->arg) {
        fputc(' ', f);
        for (const char *a = s->arg; *a; a++)
            fputs(*a == '|' ? "\\|" : (char[2]){*a, '\0'}, f);
    }
    fputc('`', f);
}

/* docs/usage.md's row of s: | `--flag ARG` | `-x` | default | meaning |, an empty cell "| |";
 * --job-name's row names every job metadata flag. */
static void md_row(FILE *f, const cli_setting *s)
{
    fputs("| ", f);
    if (s->type == CLI_T_META) {
        for (size_t i = 0, n = 0; i < cli_nsettings; i++)
            if (cli_settings[i].type == CLI_T_META && cli_settings[i].flag)
                fprintf(f, "%s`--%s`", n++ ? ", " : "", cli_settings[i].flag);
    } else {
        md_flag(f, s);
    }
    fputs(" | ", f);
    if (s->short_flag && s->type == CLI_T_META) /* the others have none */
        fprintf(f, "`-%c` (`--%s`) ", s->short_flag, s->flag);
    else if (s->short_flag)
        fprintf(f, "`-%c` ", s->short_flag);
    const char *def = DOC(s, md_default), *md = DOC(s, md);
    fprintf(f, "| %s%s| %s%s|\n", def ? def : "", def ? " " : "", md ? md : "", md ? " " : "");
}

/* docs/contracts.md's row of a tracking run's option s: | flag | short | default | config |
 * environment | meaning |, each cell the file's words where it has them, else made from the
 * row. */
static void contracts_row(FILE *f, const cli_setting *s)
{
    const cli_doc *d = s->doc;
    fputs("| ", f);
    if (d->c_flag)
        fputs(d->c_flag, f);
    else
        md_flag(f, s);
    if (d->since)
        fprintf(f, " (%s)", d->since);
    fputs(" | ", f);
    if (d->c_short)
        fprintf(f, "%s ", d->c_short);
    else if (s->short_flag)
        fprintf(f, "`-%c` ", s->short_flag);
    const char *def = d->c_default ? d->c_default : d->md_default;
    fprintf(f, "| %s%s| ", def ? def : "", def ? " " : "");
    if (d->c_config)
        fprintf(f, "%s ", d->c_config);
    else if (s->section)
        fprintf(f, "`[%s] %s` ", s->section, s->key);
    fputs("| ", f);
    if (d->c_env)
        fprintf(f, "%s ", d->c_env);
    else if (s->env)
        fprintf(f, "`%s` ", s->env);
    fprintf(f, "| %s |\n", d->contracts);
}

/* docs/contracts.md's row of an environment-only variable s: | variable | value | default |
 * meaning |, the value and the default made from the row's type, range and default. */
static void env_row(FILE *f, const cli_setting *s)
{
    const cli_doc *d = s->doc;
    char what[320] = "";
    if (s->env_over)
        fprintf(f, "| `%s`, `%s` | ", s->env_over, s->env);
    else
        fprintf(f, "| `%s` | ", s->env);
    bool number = s->type == CLI_T_SECS || s->type == CLI_T_ABOVE || s->type == CLI_T_MS;
    if (number || s->what)
        cli_setting_what(s, false, what, sizeof what);
    fprintf(f, "%s%s| ", what, *what ? " " : "");
    if (d->c_default)
        fprintf(f, "%s ", d->c_default);
    else if (number)
        fprintf(f, "%.10g ", s->def);
    fprintf(f, "| %s |\n", d->contracts);
}

/* docs/contracts.md's row of subcommand sub: its options (but -h) in its --help's order, each
 * in its file's words for sub (@contracts SUB), else its flag alone. */
static void subcommand_row(FILE *f, const cli_subcommand *sub)
{
    fprintf(f, "| `%s` | ", sub->name);
    const cli_setting *s;
    int n = 0;
    for (size_t k = 0; (s = next_sub_option(sub->cmd, &k));) {
        if (s->opt == CLI_O_HELP)
            continue;
        const char *w = NULL;
        for (const cli_sub_words *t = DOC(s, contracts_sub); t && t->commands && !w; t++)
            w = t->commands & CLI_CMD(sub->cmd) ? t->text : NULL;
        fputs(n++ ? "; " : "", f);
        if (w)
            fputs(w, f);
        else
            md_flag(f, s);
    }
    fputs(n ? " |\n" : "none |\n", f);
}

void cli_settings_doc(FILE *f, int kind)
{
    if (kind == CLI_DOC_SUBCOMMANDS) {
        for (size_t i = 0; i < cli_nsubcommands; i++)
            subcommand_row(f, &cli_subcommands[i]);
        return;
    }
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (kind == CLI_DOC_ENV && !s->flag && s->env && DOC(s, contracts))
            env_row(f, s);
        if (kind == CLI_DOC_MAN_ENV && !s->flag && s->env && DOC(s, man)) {
            char text[4096];
            fill_text(s, s->doc->man, false, text, sizeof text);
            if (s->env_over)
                fprintf(f, ".TP\n.BR %s \", \" %s\n%s\n", s->env, s->env_over, text);
            else
                fprintf(f, ".TP\n.B %s\n%s\n", s->env, text);
        }
        if (kind == CLI_DOC_CONTRACTS && s->flag && (s->commands & CLI_CMD_TRACK) && DOC(s, contracts))
            contracts_row(f, s);
        if (!s->flag || !(s->commands & CLI_CMD_TRACK))
            continue;
        if (kind == CLI_DOC_MAN && DOC(s, man)) {
            fputs(".TP\n", f);
            man_tag(f, s);
            fprintf(f, "%s\n", s->doc->man);
        } else if (kind == CLI_DOC_MARKDOWN && (DOC(s, md) || DOC(s, md_default))) {
            md_row(f, s);
        }
    }
}

int cli_settings_doc_for(FILE *f, cli_command cmd)
{
    const cli_setting *s;
    int rc = 0;
    for (size_t k = 0; (s = next_sub_option(cmd, &k));) {
        const cli_sub_text *t = sub_text(s, cmd);
        if (!t || !t->help || !t->man) {
            const char *name = "?";
            for (size_t i = 0; i < cli_nsubcommands; i++)
                name = cli_subcommands[i].cmd == cmd ? cli_subcommands[i].name : name;
            fprintf(
                stderr,
                "settings: %s takes --%s but its text file has no words for it (docs/options: @help %s and @man %s)\n",
                name, s->flag, name, name);
            rc = -1;
            continue;
        }
        fputs(".TP\n", f);
        man_tag(f, s);
        fprintf(f, "%s\n", t->man);
    }
    return rc;
}
