/* options.c - the command line (docs/contracts.md §1): flags (read through the settings
 * table, settings_table.c), the table of subcommands and the usage text, the wrapped command,
 * the library's environment, and the merge of all layers with the config file. Usage errors
 * become one message for the caller to print; nothing here exits or starts anything. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/owned.h"
#include "cli.h"
#include "settings.h"

const cli_subcommand cli_subcommands[] = {
    {"summary", CMD_SUMMARY, cli_summary_main,
     "resource-tracker summary [--json | --format FORMAT] [--memory-unit U] "
     "[--time-unit U] [--expected-cores N] [--gpus UUID,...] FILE|DIR...",
     "statistics of recorded runs (JSON lines or CSV, also the Python tracker's CSV; a job's nodes)"},
    {"recommend", CMD_RECOMMEND, cli_recommend_main,
     "resource-tracker recommend FILE|DIR... [--json] [--instance VENDOR:TYPE]\n"
     "resource-tracker recommend --job NAME [--last N] [--any-command] [--history FILE|URL]",
     "resources to ask for, and the cheapest server"},
    {"report", CMD_REPORT, cli_report_main, "resource-tracker report FILE|DIR... -o OUT.html [--instance VENDOR:TYPE]",
     "self-contained HTML report"},
    {"history", CMD_HISTORY, cli_history_main,
     "resource-tracker history [--job NAME] [--user NAME] [--host NAME] [--since WHEN] [--last N] [--json]\n"
     "                         [--history FILE|URL]\n"
     "resource-tracker history --export FILE|--import FILE [--history FILE|URL]",
     "runs recorded with --history (newest first)"},
    {"info", CMD_INFO, cli_info_main, "resource-tracker info [--json]",
     "the host's facts and its cloud (text; --json: JSON)"},
    {"upload", CMD_UPLOAD, cli_upload_main, "resource-tracker upload", "deliver the runs left in the spill directory"},
    {"phase", CMD_PHASE, cli_phase_main, "resource-tracker phase start|stop NAME [-v]",
     "inside a tracked job: mark a phase (exits 0)"},
};
const size_t cli_nsubcommands = sizeof cli_subcommands / sizeof cli_subcommands[0];

const cli_subcommand *cli_subcommand_by_name(const char *name)
{
    for (size_t i = 0; i < cli_nsubcommands; i++)
        if (strcmp(cli_subcommands[i].name, name) == 0)
            return &cli_subcommands[i];
    return NULL;
}

/* The edit distance of the la bytes at a and b (insertions, deletions, substitutions, a swap of
 * two neighbours: "summery", "sumary", "reprot" are 1 from theirs), for names under 32 bytes; 99
 * beyond. */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    if (la >= 32 || lb >= 32)
        return 99;
    size_t d[33][33];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

void cli_near_try(cli_near *n, const char *name)
{
    if (!n->word || n->word_len < 3)
        return;
    size_t e = edit_distance(n->word, n->word_len, name);
    if (e > 0 && e < n->dist && e * 3 <= strlen(name)) {
        n->dist = e;
        n->best = name;
    }
}

const char *cli_subcommand_near(const char *word)
{
    cli_near n = CLI_NEAR(word, word ? strlen(word) : 0);
    for (size_t i = 0; i < cli_nsubcommands; i++)
        cli_near_try(&n, cli_subcommands[i].name);
    return n.best;
}

#define USAGE_COL 50 /* where the usage lines' words start */
#define ENV_COL 26   /* where the environment variables' words start */

/* The synopses in syn ('\n' between them; the last gets the words what), each broken after
 * "resource-tracker NAME ". */
static void usage_entry(FILE *f, size_t width, const char *syn, const char *what)
{
    char line[400];
    for (const char *p = syn; *p;) {
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "  %.*s", (int)n, p);
        cli_glue_brackets(line);
        const char *sp = strchr(line + 2, ' ');
        const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
        size_t hang = sp2 ? (size_t)(sp2 - line) + 1 : 4;
        cli_entry_put(f, width, line, hang, USAGE_COL, p[n] ? NULL : what);
        p += n + (p[n] == '\n');
    }
}

void cli_usage_print(FILE *f)
{
    static const struct {
        const char *var, *what;
    } streaming[] = {
        {"SENTINEL_API_TOKEN", "register the run at the Sentinel API and upload gzipped CSV batches to S3 (taken out "
                               "of the environment: the command does not inherit it)"},
        {"SENTINEL_API_URL", NULL}, /* NULL: the row's words (docs/options/VARIABLE.md) */
        {"TRACKER_UPLOAD_INTERVAL", NULL},
        {"TRACKER_FINISH_TIMEOUT", NULL},
        {"AWS_ENDPOINT_URL_S3", NULL},
    };
    size_t width = (size_t)cli_text_width(f);
    fputs("Usage:\n", f);
    usage_entry(f, width, "resource-tracker [OPTIONS]", "track the whole machine until SIGINT/SIGTERM");
    usage_entry(f, width, "resource-tracker [OPTIONS] --pid PID", "also attribute usage to the process tree of PID");
    usage_entry(f, width, "resource-tracker [OPTIONS] [--] COMMAND [ARG...]",
                "run COMMAND, track its tree, exit with its status");
    for (size_t i = 0; i < cli_nsubcommands; i++)
        usage_entry(f, width, cli_subcommands[i].synopsis, cli_subcommands[i].what);
    fputs("  (each subcommand has its own --help)\n"
          "\n"
          "Options:\n",
          f);
    cli_settings_help(f);
    cli_prose_put(f, width, "\n\nStreaming (only when SENTINEL_API_TOKEN is set; without it no connection is made):\n");
    for (size_t i = 0; i < sizeof streaming / sizeof streaming[0]; i++) {
        char tag[64], what[1024];
        snprintf(tag, sizeof tag, "  %s", streaming[i].var);
        cli_entry_put(f, width, tag, ENV_COL, ENV_COL,
                      streaming[i].what ? streaming[i].what
                                        : cli_setting_help(cli_setting_by_env(streaming[i].var), what, sizeof what));
    }
    cli_prose_put(f, width,
          "  Batches that cannot be uploaded are kept in $XDG_STATE_HOME/resource-tracker\n"
          "  (~/.local/state/resource-tracker) until they are sent.\n"
          "\n"
          "OTLP (with --otlp or an endpoint variable): OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT, _HEADERS\n"
          "  (k=v,... percent-encoded), _COMPRESSION (gzip, none), _TIMEOUT (ms); OTEL_RESOURCE_ATTRIBUTES,\n"
          "  OTEL_SERVICE_NAME. The last push waits at most TRACKER_FINISH_TIMEOUT seconds (default 10).\n"
          "\n"
          "Precedence: command line > environment > config file > built-in default.\n"
          "\n"
          "On a terminal (stderr a tty; not -q, nor --format without -o) a run shows the human view: a\n"
          "start line, a status line redrawn in place and the summary's answer at the end, at the\n"
          "terminal's width; its samples are kept with -o FILE (--view samples prints them). Where stderr\n"
          "goes to a CI's or SLURM job's log (GitHub Actions, GitLab CI, Jenkins, Buildkite, SLURM_JOB_ID)\n"
          "it shows the log view: the start line, a progress line a minute and at each phase, the answer;\n"
          "the samples go to -o FILE or to a file of their own that the start line names. Otherwise, and\n"
          "always for programs reading stderr (or --view samples), samples are written as one JSON object\n"
          "or CSV row per interval, flushed at once. A reader that stalls never holds up sampling or the exit: past 8 MiB queued,\n"
          "samples are dropped (one warning counts them), and the end waits for it at most\n"
          "TRACKER_FINISH_TIMEOUT seconds (default 10). SIGINT or SIGTERM once the command ended cuts\n"
          "the end short; the exit status stays the command's.\n"
          "\n"
          "See resource-tracker(1) for the fields, the config file and the exit status.\n");
}

static int args_next(cli_args *a, char *err, size_t errlen);

int cli_parse_args(cli_options *o, int argc, char **argv, char *err, size_t errlen)
{
    /* the tracking command's rows, read as every subcommand's are (args_next): options up to
     * the first word, which is a subcommand's name or the command to run ("--" before it: the
     * command, whatever its name) */
    cli_args a = {.command = CLI_CMD_TRACK, .argv = argv + 1, .argc = argc - 1, .mode = CLI_ARGS_WORD_ENDS};
    for (int k; (k = args_next(&a, err, errlen)) != CLI_ARG_END;) {
        if (k == CLI_ARG_ERROR)
            return -1;
        if (k == CLI_ARG_WORD) {
            const cli_subcommand *sub = a.dashdash ? NULL : cli_subcommand_by_name(a.value);
            if (!sub) {
                o->command = a.argv + a.at;
                return 0;
            }
            o->sub = sub;
            o->cmd = sub->cmd;
            o->sub_args = a.argv + a.at + 1;
            o->nsub = a.argc - a.at - 1;
            return 0;
        }
        const cli_setting *s = a.opt;
        switch (s->type) {
        case CLI_T_HELP:
            o->help = true;
            return 0;
        case CLI_T_VERSION:
            o->version = true;
            return 0;
        case CLI_T_CONFIG:
            if (cli_set_str(&o->config_path, a.value) < 0)
                USAGE_ERR("out of memory");
            o->config_explicit = true;
            break;
        default: {
            char why[768];
            if (cli_setting_read(s, &o->args, s->arg ? a.value : "", false, why, sizeof why) < 0) {
                if (strcmp(why, "out of memory") == 0)
                    USAGE_ERR("out of memory");
                USAGE_ERR("--%s: %s", s->flag, why);
            }
            break;
        }
        }
    }
    return 0;
}

void cli_args_init(cli_args *a, const cli_options *o, cli_command cmd, unsigned mode)
{
    *a = (cli_args){.name = "resource-tracker", .command = CLI_CMD(cmd), .argv = o->sub_args, .argc = o->nsub,
                    .mode = mode};
    for (size_t i = 0; i < cli_nsubcommands; i++)
        if (cli_subcommands[i].cmd == cmd)
            a->name = cli_subcommands[i].name;
}

/* The row of a's command whose long flag is the n bytes at name, or else the one flag that
 * begins with them (as getopt_long: --interv for --interval); with name NULL, whose short flag
 * is c. NULL when none, or when more than one flag begins so (*several set). */
static const cli_setting *find_option(const cli_args *a, const char *name, size_t n, char c, bool *several)
{
    const cli_setting *begun = NULL;
    for (size_t i = 0; i < cli_nsettings; i++) {
        const cli_setting *s = &cli_settings[i];
        if (!s->flag || !(s->commands & a->command))
            continue;
        if (!name) {
            if (c && s->short_flag == c)
                return s;
        } else if (n > 0 && strncmp(s->flag, name, n) == 0) {
            if (strlen(s->flag) == n)
                return s;
            *several = *several || begun;
            begun = s;
        }
    }
    return name && !*several ? begun : NULL;
}

/* "--a, --b": the flags of a's command that begin with the n bytes at name, into buf; returns buf. */
static const char *flags_begun(const cli_args *a, const char *name, size_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cli_nsettings && used < cap; i++) {
        const cli_setting *s = &cli_settings[i];
        if (s->flag && (s->commands & a->command) && strncmp(s->flag, name, n) == 0)
            used += (size_t)snprintf(buf + used, cap - used, "%s--%s", used ? ", " : "", s->flag);
    }
    return buf;
}

/* The long flag of a's command that the flag at name (up to its '=') is a typo of, or NULL. */
static const char *flag_near(const cli_args *a, const char *name)
{
    cli_near n = CLI_NEAR(name, strcspn(name, "="));
    for (size_t i = 0; i < cli_nsettings; i++)
        if (cli_settings[i].flag && (cli_settings[i].commands & a->command))
            cli_near_try(&n, cli_settings[i].flag);
    return n.best;
}

/* The messages' head and their pointer to the help: "history: " and "resource-tracker history
 * --help" for a subcommand; nothing and "--help" for the tracking command (name NULL). */
#define HEAD(a) (a)->name ? (a)->name : "", (a)->name ? ": " : ""
#define SEE(a) (a)->name ? "resource-tracker " : "", (a)->name ? (a)->name : "", (a)->name ? " " : ""

/* Short option s, a letter of a word such as "-qv" or "-i1" whose rest is after. */
static int short_option(cli_args *a, const cli_setting *s, const char *after, char *err, size_t errlen)
{
    a->opt = s;
    if (!s->arg)
        a->cluster = *after ? after : NULL; /* "-qv": -v next */
    else if (*after)                        /* "-i1" */
        a->value = after;
    else if (a->next < a->argc)
        a->value = a->argv[a->next++];
    else
        USAGE_ERR("%s%soption '-%c' needs a value", HEAD(a), s->short_flag);
    return CLI_ARG_OPTION;
}

static int args_next(cli_args *a, char *err, size_t errlen)
{
    a->opt = NULL;
    a->value = NULL;
    if (a->cluster) { /* the next letter of "-qv" */
        const char *at = a->cluster;
        a->cluster = NULL;
        const cli_setting *s = find_option(a, NULL, 0, *at, NULL);
        if (!s)
            USAGE_ERR("%s%sunknown option '-%c' (see %s%s%s--help)", HEAD(a), *at, SEE(a));
        return short_option(a, s, at + 1, err, errlen);
    }
    while (a->next < a->argc) {
        const char *w = a->argv[a->next];
        a->at = a->next++;
        if (!a->words_only && strcmp(w, "--") == 0) {
            a->words_only = a->dashdash = true;
            continue;
        }
        bool dashed = !a->words_only && w[0] == '-' && w[1] != '\0';
        if (dashed && w[1] == '-') { /* "--flag", "--flag=VALUE", "--fl" */
            const char *eq = strchr(w + 2, '=');
            size_t len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
            bool several = false;
            const cli_setting *s = find_option(a, w + 2, len, 0, &several);
            if (several) {
                char which[160];
                USAGE_ERR("%s%soption '--%.*s' is ambiguous: %s", HEAD(a), (int)(len < 64 ? len : 64), w + 2,
                          flags_begun(a, w + 2, len, which, sizeof which));
            }
            if (s && !s->arg && eq)
                USAGE_ERR("%s%soption '--%s' takes no value (given '%.64s')", HEAD(a), s->flag, w);
            if (s && s->arg && !eq && a->next >= a->argc)
                USAGE_ERR("%s%soption '%.64s' needs a value", HEAD(a), w);
            if (s) {
                a->opt = s;
                a->value = !s->arg ? NULL : eq ? eq + 1 : a->argv[a->next++];
                return CLI_ARG_OPTION;
            }
        } else if (dashed) { /* "-x", "-xVALUE", "-qv" */
            const cli_setting *s = find_option(a, NULL, 0, w[1], NULL);
            if (s)
                return short_option(a, s, w + 2, err, errlen);
        }
        if (dashed && !((a->mode & CLI_ARGS_DASH_WORDS) && a->nwords > 0)) {
            const char *near = w[1] == '-' ? flag_near(a, w + 2) : NULL;
            USAGE_ERR("%s%sunknown option '%.64s'%s%s%s (see %s%s%s--help)", HEAD(a), w, near ? "; did you mean --" : "",
                      near ? near : "", near ? "?" : "", SEE(a));
        }
        if (a->mode & CLI_ARGS_NO_WORDS)
            USAGE_ERR("%s%sunexpected argument '%.64s' (see %s%s%s--help)", HEAD(a), w, SEE(a));
        if (a->mode & CLI_ARGS_WORD_ENDS)
            a->words_only = true;
        a->nwords++;
        a->value = w;
        return CLI_ARG_WORD;
    }
    return CLI_ARG_END;
}

int cli_args_next(cli_args *a)
{
    int k = args_next(a, a->err, sizeof a->err);
    if (k == CLI_ARG_ERROR)
        cli_say("%s", a->err);
    return k;
}

int cli_args_value(cli_args *a, cli_value *out)
{
    char why[sizeof a->err - 96]; /* room for the head: the longest name and flag are under 40 */
    if (cli_setting_value(a->opt, a->value, out, why, sizeof why) == 0)
        return 0;
    snprintf(a->err, sizeof a->err, "%.16s: --%.32s: %s", a->name, a->opt->flag, why);
    cli_say("%s", a->err);
    return -1;
}

int cli_args_switch(const cli_options *o, cli_command cmd, bool *on, const char *head, const char *tail)
{
    cli_args a;
    cli_args_init(&a, o, cmd, CLI_ARGS_NO_WORDS);
    for (int k; (k = cli_args_next(&a)) != CLI_ARG_END;) {
        if (k == CLI_ARG_ERROR)
            return EXIT_USAGE;
        if (a.opt->opt == CLI_O_HELP) {
            cli_settings_help_for(stdout, cmd, head, tail);
            return 0;
        }
        *on = true;
    }
    return -1;
}

int cli_merge(cli_options *o, char *err, size_t errlen)
{
    const cli_layer *a = &o->args, *f = &o->file;
    cli_layer_free(&o->env);
    if (cli_settings_env(&o->env, err, errlen) < 0)
        return -1;
    cli_settings_merge(o);
    if (o->price_lookup_off)
        o->keeper_url = "off";
    if (o->pid && o->command)
        USAGE_ERR("--pid and a command to run cannot be combined: the command's own tree is tracked");
    if (a->wait_all_set && !o->command) /* from the config file it applies to wrapped runs only */
        USAGE_ERR("--wait-all needs a command to run: it waits for the command's whole job");
    if (a->per_node_set && !o->command) /* the environment and the config file: wrapped runs only */
        USAGE_ERR("--per-node needs a command to run: each task of the node runs its own");
    if (!o->command)
        o->per_node = false;
    /* files written at the end are refused now, before anything starts, when they are links
     * planted in a shared directory (secure.c) */
    if (o->cmd != CMD_TRACK && o->report && cli_path_refused(o->report))
        USAGE_ERR("--report: refusing '%s': %s", o->report, cli_refused_why());
    if (o->cmd != CMD_TRACK && o->history && !rt_db_is_url(o->history) && cli_path_refused(o->history))
        USAGE_ERR("--history: refusing '%s': %s", o->history, cli_refused_why());
    /* tags: the file's, then the command line's; a later tag with the same key replaces */
    free(o->tags);
    o->tags = calloc(a->ntags + f->ntags + 1, sizeof *o->tags);
    if (!o->tags)
        USAGE_ERR("out of memory");
    o->ntags = 0;
    const cli_layer *layers[2] = {f, a};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < layers[l]->ntags; i++) {
            const char *t = layers[l]->tags[i];
            size_t klen = (size_t)(strchr(t, '=') - t);
            size_t k = 0;
            while (k < o->ntags && !(strncmp(o->tags[k], t, klen + 1) == 0))
                k++;
            o->tags[k] = t;
            if (k == o->ntags)
                o->ntags++;
        }
    }
    rt_job *j = &o->job;
    const char **m = o->meta;
    if (cli_export_merge(o, err, errlen) < 0 || cli_gpuview_merge(o, err, errlen) < 0)
        return -1;
    /* every file a tracking run will write, checked before anything starts (a job of hours must
     * not lose its report at the end): the same line as a bad -o, nothing created (the
     * textfile's directory: cli_export_merge) */
    if (o->cmd == CMD_TRACK &&
        (cli_path_check("output", o->output, CLI_WRITE_FILE_OR_DIR, err, errlen) < 0 ||
         cli_path_check("report", o->report, CLI_WRITE_FILE, err, errlen) < 0 ||
         cli_path_check("history", rt_db_is_url(o->history) ? NULL : o->history, CLI_WRITE_FILE_BESIDE, err,
                        errlen) < 0))
        return -1;
    /* a PostgreSQL history needs libpq (loaded at run time): given on the command line, its
     * absence is a usage error now; from the environment or the config, one warning, and the
     * run's row is kept for later (history.c) */
    char why[400], shown[1024];
    if (o->cmd == CMD_TRACK && rt_db_is_url(o->history) && rt_pg_load(why, sizeof why) != RT_OK) {
        rt_db_redact(o->history, shown, sizeof shown);
        if (a->history)
            USAGE_ERR("--history %s: %s", shown, why);
        cli_say("warning: history %s: %s: the run's row will be kept in the state directory", shown, why);
    }
    *j = (rt_job){sizeof(rt_job),       m[META_JOB_NAME],        m[META_PROJECT_NAME],  m[META_STAGE_NAME],
                  m[META_TASK_NAME],    m[META_TEAM],            m[META_ENV],           m[META_LANGUAGE],
                  m[META_ORCHESTRATOR], m[META_EXECUTOR],        m[META_EXTERNAL_RUN_ID], m[META_CONTAINER_IMAGE],
                  o->tags,              o->ntags};
    return 0;
}

/* The value of environment variable name, or NULL when unset or empty. */
static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Whether TRACKER_CLOUD_DISCOVERY's value turns discovery off: 0, false, no or off, in any case
 * and with spaces around (the Python package reads it the same way). */
static bool discovery_off(const char *v)
{
    static const char *const off[] = {"0", "false", "no", "off"};
    while (*v == ' ' || *v == '\t')
        v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\n'))
        n--;
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strlen(off[i]) == n && strncasecmp(v, off[i], n) == 0)
            return true;
    return false;
}

int cli_state_dir(char *dir, size_t cap)
{
    const char *state = env_value("XDG_STATE_HOME"), *home = env_value("HOME");
    struct stat sb;
    if (state && state[0] == '/') /* a relative one is invalid (XDG): ignored */
        return snprintf(dir, cap, "%s/resource-tracker", state);
    if (home && home[0] == '/' && stat(home, &sb) == 0 && S_ISDIR(sb.st_mode)) /* a home that is not there is
                                                                                * not made */
        return snprintf(dir, cap, "%s/.local/state/resource-tracker", home);
    return snprintf(dir, cap, "/tmp/resource-tracker-%u", (unsigned)geteuid());
}

/* The streaming settings (docs/contracts.md §4), read only when SENTINEL_API_TOKEN is set:
 * without it nothing of them matters and no connection is made. The spill directory follows
 * the XDG base directory rules. Returns 0, or -1 with "VARIABLE: problem" in err. */
static int stream_env(cli_options *o, char *err, size_t errlen)
{
    cli_free_secret(o->sentinel_token);
    o->sentinel_token = cli_take_secret("SENTINEL_API_TOKEN");
    o->upload_interval = cli_setting_by_env("TRACKER_UPLOAD_INTERVAL")->def;
    if (!o->sentinel_token)
        return 0;
    static const struct {
        const char *var;
        size_t off;
    } urls[] = {{"SENTINEL_API_URL", offsetof(cli_options, sentinel_url)},
                {"AWS_ENDPOINT_URL_S3", offsetof(cli_options, s3_endpoint)}};
    char what[128];
    for (size_t i = 0; i < sizeof urls / sizeof *urls; i++) {
        const cli_setting *s = cli_setting_by_env(urls[i].var);
        const char *u = cli_setting_getenv(s, NULL);
        if (u && strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
            USAGE_ERR("%s: not %s: '%s'", s->env, cli_setting_what(s, false, what, sizeof what), u);
        *(const char **)((char *)o + urls[i].off) = u;
    }
    o->aws_region = cli_env("AWS_REGION");
    if (cli_setting_env_number(cli_setting_by_env("TRACKER_UPLOAD_INTERVAL"), &o->upload_interval, err, errlen) < 0)
        return -1;
    const char *rt = env_value("XDG_RUNTIME_DIR");
    char dir[4096];
    int n = cli_state_dir(dir, sizeof dir);
    free(o->spill_dir);
    o->spill_dir = NULL;
    if (n > 0 && (size_t)n < sizeof dir && !(o->spill_dir = strdup(dir)))
        USAGE_ERR("out of memory");
    free(o->spill_fallback);
    o->spill_fallback = NULL;
    n = rt && rt[0] == '/' ? snprintf(dir, sizeof dir, "%s/resource-tracker", rt) : -1;
    if (n > 0 && (size_t)n < sizeof dir && !(o->spill_fallback = strdup(dir)))
        USAGE_ERR("out of memory");
    return 0;
}

int cli_library_env(cli_options *o, char *err, size_t errlen)
{
    o->proc_root = cli_env("TRACKER_PROC_ROOT");
    o->sys_root = cli_env("TRACKER_SYS_ROOT");
    o->nvml_library = cli_env("TRACKER_NVML_LIBRARY");
    o->cloud_metadata_url = cli_env("TRACKER_CLOUD_METADATA_URL");
    o->keeper_url = cli_env("TRACKER_KEEPER_URL");
    const char *d = cli_env("TRACKER_CLOUD_DISCOVERY");
    o->cloud_disabled = d && discovery_off(d);
    if (cli_setting_env_number(cli_setting_by_env("TRACKER_PSS_MAX_AGE"), &o->pss_max_age_secs, err, errlen) < 0 ||
        cli_setting_env_number(cli_setting_by_env("TRACKER_WALK_MAX_AGE"), &o->walk_max_age_secs, err, errlen) < 0)
        return -1;
    /* the end's bound: the OTLP exporter's, the stream's and the outputs' written at the end
     * (the report subcommand's -o too) */
    const cli_setting *fin = cli_setting_by_env("TRACKER_FINISH_TIMEOUT");
    o->finish_timeout = fin->def;
    if ((o->cmd == CMD_TRACK || o->cmd == CMD_UPLOAD || o->cmd == CMD_REPORT) &&
        cli_setting_env_number(fin, &o->finish_timeout, err, errlen) < 0)
        return -1;
    /* streaming belongs to tracking runs: a subcommand is not refused over its settings (and
     * starts no command that could inherit the token) */
    return o->cmd == CMD_TRACK || o->cmd == CMD_UPLOAD ? stream_env(o, err, errlen) : 0;
}

void cli_layer_free(cli_layer *l)
{
    for (int i = 0; i < META_COUNT; i++)
        free(l->meta[i]);
    for (size_t i = 0; i < l->ntags; i++)
        free(l->tags[i]);
    rt_free_all(l->output, l->report, l->benchmark, l->history, l->prometheus, l->prometheus_textfile, l->otlp,
                l->gpus, l->grid_zone, l->job_id, l->node, l->tags, l->warnings);
    memset(l, 0, sizeof *l);
}

void cli_options_free(cli_options *o)
{
    cli_layer_free(&o->args);
    cli_layer_free(&o->env);
    cli_layer_free(&o->file);
    rt_free_all(o->config_path, o->spill_dir, o->spill_fallback, o->tags);
    cli_export_options_free(o);
    cli_gpu_list_free(o->gpu_list, o->ngpus);
    cli_free_secret(o->sentinel_token);
    cli_place_free(o);
    memset(o, 0, sizeof *o);
}
