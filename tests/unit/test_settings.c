/* test_settings.c - walks the settings table (src/cli/settings.c): every setting has a flag, a
 * variable or a key, none is named twice, every flag is in --help, every key is read by the config
 * file, a range is refused the same way (the same words) by flag, environment and TOML, a
 * subcommand's arguments are read by the one reader the table drives, and each subcommand's
 * --help and man page OPTIONS list the rows it takes, each in its own words. */
#include "unit.h"
#include <stdlib.h>

#include "cli.h"
#include "settings.h"
#include "settings_docs.h"

/* --help as a string (free it). */
static char *help_text(void)
{
    static char *buf; /* static: the stream writes them after this returns (as gcc sees it) */
    static size_t len;
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cli_usage_print(f);
    fclose(f);
    return buf;
}

static void every_setting_is_named_once(void **state)
{
    (void)state;
    assert_true(cli_nsettings > 20);
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (!s->flag && !s->env && !s->section)
            fail_msg("setting %zu has no flag, variable or key", i);
        assert_true(!s->section == !s->key);
        for (size_t j = 0; j < i; j++) {
            const cli_setting *t = &cli_settings[j];
            if (s->flag && t->flag && strcmp(s->flag, t->flag) == 0 && (s->commands & t->commands))
                fail_msg("--%s twice in one command", s->flag);
            if (s->short_flag && s->short_flag == t->short_flag && (s->commands & t->commands))
                fail_msg("-%c twice in one command", s->short_flag);
            if (s->env && t->env && strcmp(s->env, t->env) == 0)
                fail_msg("%s twice", s->env);
            if (s->section && t->section && strcmp(s->section, t->section) == 0 && strcmp(s->key, t->key) == 0)
                fail_msg("[%s] %s twice", s->section, s->key);
        }
        if (s->flag && (s->commands & CLI_CMD_TRACK))
            assert_ptr_equal(cli_setting_by_flag(s->flag), s);
        if (s->section)
            assert_ptr_equal(cli_setting_by_key(s->section, s->key), s);
    }
}

/* A row's fields are written by name, so a field left out is 0: every flag belongs to a command
 * (commands), none beyond the tool's, a row without a flag to none; and no two rows share a
 * value's or a mark's offset (an offset left out would be 0, another row's). */
static void every_row_is_whole(void **state)
{
    (void)state;
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->flag && (s->commands == 0 || (s->commands & ~CLI_CMD_ALL)))
            fail_msg("--%s: commands 0x%x", s->flag, s->commands);
        if (!s->flag && s->commands)
            fail_msg("setting %zu has commands but no flag", i);
        for (size_t j = 0; j < i; j++) {
            const cli_setting *t = &cli_settings[j];
            if (s->layer_off != CLI_NONE && s->layer_off == t->layer_off)
                fail_msg("settings %zu and %zu share a value", j, i);
            if (s->set_off != CLI_NONE && s->set_off == t->set_off)
                fail_msg("settings %zu and %zu share a mark", j, i);
        }
    }
}

/* Every flag is in the Options part of --help (the metadata flags in --job-name's text), with its
 * short flag beside it; a setting with its own help text has its own line. */
static void every_flag_is_in_help(void **state)
{
    (void)state;
    char *help = help_text();
    char *opts = strstr(help, "\nOptions:\n");
    assert_non_null(opts);
    char *end = strstr(opts, "\n\n\n");
    assert_non_null(end);
    *end = '\0';
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (!s->flag || !(s->commands & CLI_CMD_TRACK))
            continue;
        char want[96];
        const char *own = s->doc ? s->doc->help : NULL;
        if (own && s->short_flag)
            snprintf(want, sizeof want, "\n  -%c, --%s%s", s->short_flag, s->flag, s->arg ? " " : "");
        else if (own)
            snprintf(want, sizeof want, "\n      --%s%s", s->flag, s->arg ? " " : "");
        else
            snprintf(want, sizeof want, "--%s", s->flag);
        if (!strstr(opts, want))
            fail_msg("--help lacks '%s'", want);
    }
    free(help);
}

/* Each subcommand's --help option list and man page OPTIONS have one entry per row whose
 * commands has its bit, and no other; each such row has the subcommand's words (.sub), and no
 * row has words for a subcommand that does not take it. */
static void subcommand_docs_are_its_rows(void **state)
{
    (void)state;
    for (size_t c = 0; c < cli_nsubcommands; c++) {
        cli_command cmd = cli_subcommands[c].cmd;
        char *help = NULL, *man = NULL;
        size_t hlen = 0, mlen = 0;
        FILE *f = open_memstream(&help, &hlen), *m = open_memstream(&man, &mlen);
        assert_non_null(f);
        assert_non_null(m);
        cli_settings_help_for(f, cmd, "Options:\n", "\nEnd\n");
        int rc = cli_settings_doc_for(m, cmd);
        fclose(f);
        fclose(m);
        if (rc != 0)
            fail_msg("%s: a row it takes has no words for it", cli_subcommands[c].name);
        size_t rows = 0, lines = 0, entries = 0;
        for (size_t i = 0; i < cli_nsettings; i++) {
            const cli_setting *s = &cli_settings[i];
            for (const cli_sub_text *t = s->doc ? s->doc->sub : NULL; t && t->commands; t++)
                if ((t->commands & ~s->commands) != 0)
                    fail_msg("--%s has words for a subcommand that does not take it", s->flag);
            for (const cli_sub_words *w = s->doc ? s->doc->contracts_sub : NULL; w && w->commands; w++)
                if ((w->commands & ~s->commands) != 0)
                    fail_msg("--%s has contracts words for a subcommand that does not take it", s->flag);
            if (!s->flag || !(s->commands & CLI_CMD(cmd)))
                continue;
            rows++;
            char want[96];
            if (s->short_flag)
                snprintf(want, sizeof want, "\n  -%c, --%s%s", s->short_flag, s->flag, s->arg ? " " : "  ");
            else
                snprintf(want, sizeof want, "\n  --%s%s", s->flag, s->arg ? " " : "  ");
            if (!strstr(help, want))
                fail_msg("%s --help lacks '%s'", cli_subcommands[c].name, want + 1);
        }
        for (const char *p = help; (p = strstr(p, "\n  -")); p++)
            lines++;
        for (const char *p = man; (p = strstr(p, ".TP\n")); p++)
            entries++;
        if (lines != rows || entries != rows)
            fail_msg("%s takes %zu options; --help lists %zu, the man page %zu", cli_subcommands[c].name, rows, lines,
                     entries);
        free(help);
        free(man);
    }
}

/* A good value of s as text for the command line (toml false) or the config file. */
static const char *good_value(const cli_setting *s, bool toml, char *buf, size_t cap)
{
    switch (s->type) {
    case CLI_T_PID: return "4242";
    case CLI_T_SECS:
    case CLI_T_PCT: snprintf(buf, cap, "%.17g", s->max); return buf;
    case CLI_T_CORES:
    case CLI_T_ABOVE: return "2";
    case CLI_T_ZONE: return toml ? "'FR'" : "FR";
    case CLI_T_FORMAT: return toml ? "'csv'" : "csv";
    case CLI_T_CGROUP: return toml ? "'off'" : "off";
    case CLI_T_SWITCH: return toml ? "false" : "off";
    case CLI_T_VIEW: return toml ? "'human'" : "human";
    case CLI_T_BOOL:
    case CLI_T_OFF: return "true";
    case CLI_T_TAG: return toml ? "['a=b']" : "a=b";
    case CLI_T_GPUS: return toml ? "'GPU-1'" : "GPU-1";
    default: return toml ? "'x'" : "x";
    }
}

/* Every key of the table is read from the config file into the layer. */
static void every_key_is_read(void **state)
{
    (void)state;
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (!s->section)
            continue;
        char doc[256], v[64], err[512];
        snprintf(doc, sizeof doc, "[%s]\n%s = %s\n", s->section, s->key, good_value(s, true, v, sizeof v));
        cli_layer l;
        memset(&l, 0, sizeof l);
        if (cli_parse_config(&l, "c.toml", doc, strlen(doc), err, sizeof err) < 0)
            fail_msg("%s refused: %s", doc, err);
        if (s->type == CLI_T_TAG)
            assert_int_equal(l.ntags, 1);
        else if (s->set_off != CLI_NONE)
            assert_true(*(bool *)((char *)&l + s->set_off));
        else
            assert_non_null(*(char **)((char *)&l + s->layer_off));
        cli_layer_free(&l);
        /* and the command line's flag gives the same layer member */
        if (!s->flag)
            continue;
        char flag[64], *argv[4] = {"rt", flag, NULL, NULL};
        snprintf(flag, sizeof flag, "--%s", s->flag);
        argv[2] = s->arg ? (char *)good_value(s, false, v, sizeof v) : NULL;
        cli_options o;
        memset(&o, 0, sizeof o);
        if (cli_parse_args(&o, s->arg ? 3 : 2, argv, err, sizeof err) < 0)
            fail_msg("%s refused: %s", flag, err);
        if (s->type == CLI_T_TAG)
            assert_int_equal(o.args.ntags, 1);
        else if (s->set_off != CLI_NONE)
            assert_true(*(bool *)((char *)&o.args + s->set_off));
        else
            assert_non_null(*(char **)((char *)&o.args + s->layer_off));
        cli_options_free(&o);
    }
}

/* Every option text file (docs/options/NAME.md, made into cli_docs) is the words of one row, the
 * one whose flag (or, for a variable read from the environment only, whose variable) its
 * @option names. */
static void every_text_is_one_rows(void **state)
{
    (void)state;
    size_t n = 0;
    for (const cli_doc *const *d = cli_docs; *d; d++, n++) {
        const cli_setting *of = NULL;
        for (size_t i = 0; i < cli_nsettings; i++) {
            if (cli_settings[i].doc != *d)
                continue;
            if (of)
                fail_msg("%s: the words of two rows", (*d)->option);
            of = &cli_settings[i];
        }
        if (!of)
            fail_msg("%s: no row names its text (settings_table.c: .doc = &cli_doc_NAME)", (*d)->option);
        if (of->flag) {
            assert_true(strncmp((*d)->option, "--", 2) == 0);
            assert_string_equal((*d)->option + 2, of->flag);
        } else { /* an environment-only variable's */
            assert_string_equal((*d)->option, of->env);
            assert_non_null((*d)->contracts);
        }
        if (!(*d)->help && !(*d)->man && !(*d)->md && !(*d)->md_default && !(*d)->sub && !(*d)->contracts)
            fail_msg("%s: a text without words", (*d)->option);
    }
    assert_true(n >= 70);
}

/* Each setting with a range refuses the same values with the same words, whichever way it came:
 * "--FLAG: 'V' is not WHAT", "FILE:L:C: [SECTION] KEY must be WHAT", "VAR: not WHAT: 'V'". */
static void ranges_alike_everywhere(void **state)
{
    (void)state;
    int ranged = 0;
    char err_none[256];
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->type != CLI_T_SECS && s->type != CLI_T_PCT && s->type != CLI_T_CORES && s->type != CLI_T_ABOVE &&
            s->type != CLI_T_MS)
            continue;
        bool from_to = s->type == CLI_T_SECS || s->type == CLI_T_PCT || s->type == CLI_T_MS;
        ranged++;
        char what[128], what_toml[128];
        cli_setting_what(s, false, what, sizeof what);
        cli_setting_what(s, true, what_toml, sizeof what_toml);
        assert_string_equal(what, what_toml);
        if (from_to) {
            char want[128];
            snprintf(want, sizeof want, "from %.10g to %.10g", s->min, s->max);
            assert_non_null(strstr(what, want));
        }
        char lo[64], hi[64], edge[64];
        /* below the range: half a minimum above 0, 1 below one of 0 (which is in it) */
        snprintf(lo, sizeof lo, "%.17g", !from_to ? s->min : s->min > 0 ? s->min / 2 : s->min - 1);
        snprintf(hi, sizeof hi, "%.17g", s->max * 2);
        snprintf(edge, sizeof edge, "%.17g", !from_to ? s->max : s->min);
        const char *bad[] = {lo, hi, "nan", "inf"};
        double d;
        assert_int_equal(cli_setting_number(s, edge, &d), 0);
        /* a percentage may end with '%', once, right after the number (issue 70) */
        assert_int_equal(cli_setting_number(s, "5%", &d), s->type == CLI_T_PCT ? 0 : -1);
        assert_true(s->type != CLI_T_PCT || d == 5);
        assert_int_equal(cli_setting_number(s, "%", &d), -1);
        assert_int_equal(cli_setting_number(s, "5%%", &d), -1);
        assert_int_equal(cli_setting_number(s, "5 %", &d), -1);
        if (s->type == CLI_T_PCT && s->section) { /* and so in the config file (a string) and the environment */
            char doc[256], err[512];
            snprintf(doc, sizeof doc, "[%s]\n%s = \"5%%\"\n", s->section, s->key);
            cli_layer l;
            memset(&l, 0, sizeof l);
            assert_int_equal(cli_parse_config(&l, "c.toml", doc, strlen(doc), err, sizeof err), 0);
            assert_true(*(double *)((char *)&l + s->layer_off) == 5);
            cli_layer_free(&l);
            if (s->env) {
                setenv(s->env, "7.5%", 1);
                memset(&l, 0, sizeof l);
                assert_int_equal(cli_settings_env(&l, err, sizeof err), 0);
                assert_true(*(double *)((char *)&l + s->layer_off) == 7.5);
                cli_layer_free(&l);
                unsetenv(s->env);
            }
        }
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            char want[256], err[512];
            assert_int_equal(cli_setting_number(s, bad[b], &d), -1);
            if (s->flag) {
                char flag[64], *argv[] = {"rt", flag, (char *)bad[b], NULL};
                snprintf(flag, sizeof flag, "--%s", s->flag);
                cli_options o;
                memset(&o, 0, sizeof o);
                assert_int_equal(cli_parse_args(&o, 3, argv, err, sizeof err), -1);
                snprintf(want, sizeof want, "--%s: '%s' is not %s", s->flag, bad[b], what);
                assert_string_equal(err, want);
                cli_options_free(&o);
            }
            if (s->section && strcmp(bad[b], "nan") != 0 && strcmp(bad[b], "inf") != 0) {
                char doc[256];
                snprintf(doc, sizeof doc, "[%s]\n%s = %s\n", s->section, s->key, bad[b]);
                cli_layer l;
                memset(&l, 0, sizeof l);
                assert_int_equal(cli_parse_config(&l, "c.toml", doc, strlen(doc), err, sizeof err), -1);
                snprintf(want, sizeof want, "c.toml:2:1: [%s] %s must be %s", s->section, s->key, what);
                assert_string_equal(err, want);
                cli_layer_free(&l);
            }
            if (s->env && s->layer_off != CLI_NONE) {
                setenv(s->env, bad[b], 1);
                cli_layer l;
                memset(&l, 0, sizeof l);
                assert_int_equal(cli_settings_env(&l, err, sizeof err), -1);
                snprintf(want, sizeof want, "%s: not %s: '%s'", s->env, what, bad[b]);
                assert_string_equal(err, want);
                cli_layer_free(&l);
                unsetenv(s->env);
            }
            if (s->env && s->layer_off == CLI_NONE) { /* read by its own reader */
                setenv(s->env, bad[b], 1);
                assert_int_equal(cli_setting_env_number(s, &d, err, sizeof err), -1);
                snprintf(want, sizeof want, "%s: not %s: '%s'", s->env, what, bad[b]);
                assert_string_equal(err, want);
                unsetenv(s->env);
            }
        }
        if (s->env && s->layer_off == CLI_NONE) { /* unset or empty: the default */
            setenv(s->env, "", 1);
            assert_int_equal(cli_setting_env_number(s, &d, err_none, sizeof err_none), 0);
            assert_true(d == s->def);
            unsetenv(s->env);
        }
    }
    assert_true(ranged >= 6); /* --interval, --otlp-interval, --expected-cores, TRACKER_UPLOAD_INTERVAL,
                               * --cpu-tdp, --grid-intensity */
    /* the interval's helpers read the table's range */
    const cli_setting *iv = cli_setting_by_flag("interval");
    assert_int_equal(cli_check_interval(iv->min), 0);
    assert_int_equal(cli_check_interval(iv->max), 0);
    assert_int_equal(cli_check_interval(iv->max * 1.5), -1);
}

/* The command line > environment > config file > default, for every setting that has them. */
static void precedence_for_every_setting(void **state)
{
    (void)state;
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->layer_off == CLI_NONE)
            continue;
        cli_options o;
        memset(&o, 0, sizeof o);
        assert_int_equal(cli_setting_from(&o, s), CLI_FROM_DEFAULT);
        cli_layer *layers[] = {&o.file, &o.env, &o.args};
        int from[] = {CLI_FROM_FILE, CLI_FROM_ENV, CLI_FROM_ARGS};
        for (int l = 0; l < 3; l++) {
            if ((l == 0 && !s->section) || (l == 1 && !s->env) || (l == 2 && !s->flag))
                continue;
            char *base = (char *)layers[l];
            if (s->set_off != CLI_NONE)
                *(bool *)(base + s->set_off) = true;
            else
                *(char **)(base + s->layer_off) = strdup("v");
            assert_int_equal(cli_setting_from(&o, s), from[l]);
        }
        cli_options_free(&o);
    }
}

/* Every subcommand is in the usage text and found by its name. */
static void subcommands(void **state)
{
    (void)state;
    char *help = help_text();
    for (size_t i = 0; i < cli_nsubcommands; i++) {
        char want[64];
        snprintf(want, sizeof want, "  resource-tracker %s", cli_subcommands[i].name);
        assert_non_null(strstr(help, want));
        assert_ptr_equal(cli_subcommand_by_name(cli_subcommands[i].name), &cli_subcommands[i]);
        assert_int_equal(strncmp(cli_subcommands[i].synopsis, want + 2, strlen(want + 2)), 0);
    }
    assert_null(cli_subcommand_by_name("track"));
    free(help);
}

/* Reads argv as subcommand sub's arguments (mode: CLI_ARGS_*) into a line per argument
 * ("--json", "-o=OUT", "word x", or the error) and returns it (static). */
static const char *sub_args(const char *sub, unsigned mode, char **argv, int argc)
{
    static char out[1024];
    const cli_subcommand *c = cli_subcommand_by_name(sub);
    assert_non_null(c);
    cli_options o = {.sub_args = argv, .nsub = argc}; /* o.cmd as a test leaves it: the reader is told */
    cli_args a;
    cli_args_init(&a, &o, c->cmd, mode);
    size_t at = 0;
    out[0] = '\0';
    for (int k; (k = cli_args_next(&a)) != CLI_ARG_END && at < sizeof out;) {
        if (k == CLI_ARG_ERROR) {
            snprintf(out + at, sizeof out - at, "%s", a.err);
            break;
        }
        at += (size_t)snprintf(out + at, sizeof out - at, k == CLI_ARG_WORD ? "word %s|" : "--%s%s%s|",
                               k == CLI_ARG_WORD ? a.value : a.opt->flag, a.value && k != CLI_ARG_WORD ? "=" : "",
                               a.value && k != CLI_ARG_WORD ? a.value : "");
    }
    return out;
}

/* One reader of a subcommand's arguments, driven by the table's rows for that subcommand. */
static void subcommand_arguments(void **state)
{
    (void)state;
    char *report[] = {"a.jsonl", "-oOUT", "--instance=aws:x", "--grid-zone", "FR", "-", "--", "--json"};
    assert_string_equal(sub_args("report", 0, report, 8),
                        "word a.jsonl|--output=OUT|--instance=aws:x|--grid-zone=FR|word -|word --json|");
    char *json[] = {"--json"};
    assert_string_equal(sub_args("report", 0, json, 1),
                        "report: unknown option '--json' (see resource-tracker report --help)");
    assert_string_equal(sub_args("history", 0, json, 1), "--json|");
    char *job[] = {"--job"};
    assert_string_equal(sub_args("history", 0, job, 1), "history: option '--job' needs a value");
    char *json1[] = {"--json=1"};
    assert_string_equal(sub_args("info", 0, json1, 1), "info: option '--json' takes no value (given '--json=1')");
    char *word[] = {"x"};
    assert_string_equal(sub_args("upload", CLI_ARGS_NO_WORDS, word, 1),
                        "upload: unexpected argument 'x' (see resource-tracker upload --help)");
    char *summary[] = {"-h", "f", "--json"};
    assert_string_equal(sub_args("summary", CLI_ARGS_WORD_ENDS, summary, 3), "--help|word f|word --json|");
    char *phase[] = {"start", "-x", "-v"};
    assert_string_equal(sub_args("phase", CLI_ARGS_DASH_WORDS, phase, 3), "word start|word -x|--verbose|");
    assert_string_equal(sub_args("phase", CLI_ARGS_DASH_WORDS, phase + 1, 1),
                        "phase: unknown option '-x' (see resource-tracker phase --help)");
    /* info --json, upload --list: one switch beside -h */
    cli_options o = {.sub_args = json, .nsub = 1};
    bool on = false;
    /* an error is said (stderr; the line is sub_args' above) and ends the command as a usage error */
    assert_int_equal(cli_args_switch(&o, CMD_UPLOAD, &on, "Usage: upload\n", ""), EXIT_USAGE);
    assert_false(on);
    char *list[] = {"--list", "-h"};
    o.sub_args = list;
    o.nsub = 2;
    assert_int_equal(cli_args_switch(&o, CMD_UPLOAD, &on, "Usage: upload\n", ""), 0); /* --help printed */
    assert_true(on);
    on = false;
    o.nsub = 1;
    assert_int_equal(cli_args_switch(&o, CMD_UPLOAD, &on, "Usage: upload\n", ""), -1); /* go on */
    assert_true(on);
}

/* What sub_args' reader returns for one option of subcommand sub with value v, read through its
 * row (cli_args_value): "ok" or the line said. */
static const char *sub_value(const char *sub, const char *flag, const char *v, cli_value *out)
{
    static char err[sizeof ((cli_args *)0)->err];
    char opt[64], *argv[] = {opt, (char *)v};
    snprintf(opt, sizeof opt, "--%s", flag);
    cli_options o = {.sub_args = argv, .nsub = 2};
    cli_args a;
    cli_args_init(&a, &o, cli_subcommand_by_name(sub)->cmd, 0);
    assert_int_equal(cli_args_next(&a), CLI_ARG_OPTION);
    snprintf(err, sizeof err, "%s", cli_args_value(&a, out) == 0 ? "ok" : a.err);
    return err;
}

/* A subcommand's value goes through its row: every row that takes a value in a subcommand says
 * its type (no row left at 0, a process id), and a bad value gets the row's words, as the
 * tracking command's flags do (issue 70). */
static void subcommand_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->arg && (s->commands & ~CLI_CMD_TRACK) && s->type == CLI_T_PID)
            fail_msg("--%s: a subcommand's value without its type", s->flag);
        if (s->type == CLI_T_CHOICE)
            assert_true(s->choices && s->choices[0]);
    }
    cli_value v;
    assert_string_equal(sub_value("recommend", "max-slowdown", "5%", &v), "ok");
    assert_true(v.num == 5);
    assert_string_equal(sub_value("recommend", "max-slowdown", "0", &v), "ok");
    assert_string_equal(sub_value("recommend", "max-slowdown", "5x", &v),
                        "recommend: --max-slowdown: '5x' is not a percentage from 0 to 1000");
    assert_string_equal(sub_value("recommend", "max-slowdown", "1001", &v),
                        "recommend: --max-slowdown: '1001' is not a percentage from 0 to 1000");
    assert_true(cli_setting_by_opt(CLI_O_MAX_SLOWDOWN)->def == 10 && cli_setting_by_opt(CLI_O_LAST)->def == 5);
    assert_string_equal(sub_value("recommend", "last", "3", &v), "ok");
    assert_int_equal(v.count, 3);
    const char *no_count[] = {"0", "-3", "five", "2.5", "3x", "", "99999999999999999999"};
    for (size_t i = 0; i < sizeof no_count / sizeof no_count[0]; i++) {
        char want[160];
        snprintf(want, sizeof want, "history: --last: '%s' is not a whole number of runs from 1", no_count[i]);
        assert_string_equal(sub_value("history", "last", no_count[i], &v), want);
    }
    assert_string_equal(sub_value("recommend", "job", "", &v), "recommend: --job: the value is empty");
    assert_string_equal(sub_value("history", "export", "", &v), "history: --export: the file name is empty");
    assert_string_equal(sub_value("report", "output", "", &v), "report: --output: the file name is empty");
    /* VENDOR:TYPE: printable ASCII, one ':' between two parts that fit */
    char vendor[CLI_VENDOR_CAP], type[CLI_TYPE_CAP];
    assert_string_equal(sub_value("report", "instance", "aws:t3.medium", &v), "ok");
    cli_instance_split(v.text, vendor, type);
    assert_string_equal(vendor, "aws");
    assert_string_equal(type, "t3.medium");
    const char *no_instance[] = {"aws", "aws:", ":t3", "a:b:c", "aws:t3 medium", "aws:t3.m\xc3\xa9" "dium", "aws:x\x1b" "[2J"};
    for (size_t i = 0; i < sizeof no_instance / sizeof no_instance[0]; i++) {
        char want[160];
        snprintf(want, sizeof want, "recommend: --instance: '%s' is not a server as VENDOR:TYPE (e.g. aws:t3.medium)",
                 no_instance[i]);
        assert_string_equal(sub_value("recommend", "instance", no_instance[i], &v), want);
    }
    char long_type[200];
    memset(long_type, 'x', sizeof long_type);
    memcpy(long_type, "aws:", 4);
    long_type[sizeof long_type - 1] = '\0';
    assert_string_not_equal(sub_value("recommend", "instance", long_type, &v), "ok");
    /* summary's choices and units */
    assert_string_equal(sub_value("summary", "format", "nextflow", &v), "ok");
    assert_int_equal(v.choice, 4);
    assert_string_equal(sub_value("summary", "format", "yaml", &v),
                        "summary: --format: 'yaml' is not a format (text, json, markdown, snakemake, nextflow)");
    assert_string_equal(sub_value("summary", "memory-unit", "gigabytes", &v), "ok");
    assert_string_equal(sub_value("summary", "memory-unit", "mb", &v),
                        "summary: --memory-unit: 'mb' is not a unit (bytes, kilobytes, megabytes, gigabytes, terabytes)");
    assert_string_equal(sub_value("summary", "time-unit", "hours", &v), "ok");
    assert_string_equal(sub_value("summary", "time-unit", "weeks", &v),
                        "summary: --time-unit: 'weeks' is not a unit (seconds, minutes, hours, days)");
    assert_string_equal(sub_value("summary", "expected-cores", "0", &v),
                        "summary: --expected-cores: '0' is not a number of cores above 0");
    assert_string_equal(sub_value("summary", "gpus", "GPU-a, GPU-b", &v), "ok");
    assert_string_equal(sub_value("summary", "gpus", "GPU-a,,GPU-b", &v),
                        "summary: --gpus: an empty GPU uuid in the list: 'GPU-a,,GPU-b'");
    assert_string_equal(sub_value("report", "grid-zone", "FR", &v), "ok");
    const char *zone_said = sub_value("report", "grid-zone", "XX", &v); /* whole: its words name the table's path */
    assert_true(strncmp(zone_said, "report: --grid-zone: 'XX' is not a zone", 39) == 0);
    assert_non_null(strstr(zone_said, "grid-intensity.csv | cut -d, -f1)"));
    assert_string_equal(sub_value("history", "since", "2026-11-29", &v), "ok");
    assert_true(v.num == 1795910400.0);
    assert_string_equal(sub_value("history", "since", "yesterday", &v),
                        "history: --since: 'yesterday' is not an ISO 8601 date or time (2026-11-29, "
                        "2026-11-29T07:30:00Z) or an age (90s, 30m, 12h, 7d, 2w)");
}

/* A mistyped long flag gets the flag of its command it is a typo of (the same rule as a mistyped
 * subcommand's: one edit in a name of up to 5 letters, two beyond), the message otherwise as
 * before. */
static void did_you_mean(void **state)
{
    (void)state;
    cli_near n = CLI_NEAR("outptu", 6);
    cli_near_try(&n, "output");
    cli_near_try(&n, "quiet");
    assert_string_equal(n.best, "output");
    n = CLI_NEAR("output", 6); /* the name itself is no typo */
    cli_near_try(&n, "output");
    assert_null(n.best);
    n = CLI_NEAR("jb", 2); /* too short to guess */
    cli_near_try(&n, "job");
    assert_null(n.best);
    n = CLI_NEAR("jbo", 3); /* one edit (a swap) in 3 letters */
    cli_near_try(&n, "job");
    assert_string_equal(n.best, "job");
    n = CLI_NEAR("lats=3", 4); /* the bytes before '=' */
    cli_near_try(&n, "last");
    assert_string_equal(n.best, "last");
    n = CLI_NEAR("xyzzy", 5);
    cli_near_try(&n, "quiet");
    assert_null(n.best);
    assert_string_equal(cli_subcommand_near("summery"), "summary");
    assert_string_equal(cli_subcommand_near("reprot"), "report");
    assert_null(cli_subcommand_near("ls"));
    char *typo[] = {"--max-slowdwn", "5"};
    assert_string_equal(sub_args("recommend", 0, typo, 2),
                        "recommend: unknown option '--max-slowdwn'; did you mean --max-slowdown? (see resource-tracker "
                        "recommend --help)");
    char *typo_eq[] = {"--lsat=3"};
    assert_string_equal(sub_args("history", 0, typo_eq, 1),
                        "history: unknown option '--lsat=3'; did you mean --last? (see resource-tracker history --help)");
    char *far[] = {"--frobnicate"};
    assert_string_equal(sub_args("report", 0, far, 1),
                        "report: unknown option '--frobnicate' (see resource-tracker report --help)");
    char *other[] = {"--outptu"}; /* report's -o is --output too */
    assert_string_equal(sub_args("report", 0, other, 1),
                        "report: unknown option '--outptu'; did you mean --output? (see resource-tracker report --help)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_setting_is_named_once), cmocka_unit_test(every_row_is_whole),
        cmocka_unit_test(every_flag_is_in_help), cmocka_unit_test(subcommand_docs_are_its_rows),
        cmocka_unit_test(every_key_is_read),           cmocka_unit_test(ranges_alike_everywhere),
        cmocka_unit_test(precedence_for_every_setting), cmocka_unit_test(subcommands),
        cmocka_unit_test(subcommand_arguments),        cmocka_unit_test(subcommand_values),
        cmocka_unit_test(did_you_mean),                cmocka_unit_test(every_text_is_one_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
