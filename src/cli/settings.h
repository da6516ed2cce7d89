/* settings.h - the tool's one table of settings: each setting's flag, short flag, environment
 * variable, TOML table and key, type, range, default and its words for people (cli_doc: made
 * from docs/options/NAME.md at build time), with the parsers that read
 * a value of each type and the merge of the layers (command line > environment > config file >
 * built-in default, docs/contracts.md §1). The command line (options.c), the config file
 * (config.c), --help and the tests all walk this table; curl's tool_getparam.c aliases[] is the
 * model: one row a setting, written with designated initializers (a field left out is 0 or
 * NULL; the three offsets are always written, CLI_NONE being none). The value parsers here use
 * nothing of the tool's other files. */
#ifndef RT_CLI_SETTINGS_H
#define RT_CLI_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* How a setting's value is read and where it goes. */
typedef enum cli_type {
    CLI_T_PID,     /* a process id: long, 1..INT_MAX */
    CLI_T_SECS,    /* seconds: double in [min, max] */
    CLI_T_PCT,     /* a percentage: double in [min, max]; the text may end with '%' ("5%") */
    CLI_T_CORES,   /* a number of cores: double in (min, max] */
    CLI_T_FORMAT,  /* json, csv or json-rs: rt_format */
    CLI_T_CGROUP,  /* auto or off: bool (true: off); --cgroup, --energy */
    CLI_T_VIEW,    /* auto, human or samples: cli_view */
    CLI_T_SWITCH,  /* auto or off as CLI_T_CGROUP; in TOML also true (auto) or false (off):
                    * --step-summary */
    CLI_T_BOOL,    /* a flag without value; true or false in TOML */
    CLI_T_OFF,     /* a flag without value that turns a thing off (--no-X): bool true; in TOML the
                    * thing's own key, true (on, the default) or false (off) */
    CLI_T_FILE,    /* a non-empty file name: char * */
    CLI_T_TEXT,    /* a non-empty string: char * */
    CLI_T_META,    /* a job metadata string: char * */
    CLI_T_GPUS,    /* UUID,... (a TOML array too): char * as given */
    CLI_T_TAG,     /* KEY=VALUE, repeatable: the layer's tags */
    CLI_T_ABOVE,   /* a number of unit: double in (min, max] (watts, grams per kWh, seconds) */
    CLI_T_MS,      /* milliseconds: double in [min, max] (an OTEL_* variable's) */
    CLI_T_ZONE,    /* a zone of the grid intensity table (rt_grid_lookup): char * as given */
    CLI_T_CONFIG,  /* -c FILE: the config file's path */
    CLI_T_HELP,    /* -h */
    CLI_T_VERSION, /* -V */
    /* the types of subcommands' values only (cli_setting_value) */
    CLI_T_COUNT,     /* a whole number in [min, max]: long (--last) */
    CLI_T_CHOICE,    /* one of the row's choices: its index (summary --format) */
    CLI_T_MEM_UNIT,  /* a memory unit the library knows (rt_memory_unit_bytes): the text */
    CLI_T_TIME_UNIT, /* a time unit the library knows (rt_time_unit_secs): the text */
    CLI_T_INSTANCE,  /* VENDOR:TYPE, printable ASCII, each part non-empty and shorter than
                      * CLI_VENDOR_CAP / CLI_TYPE_CAP: the text */
    CLI_T_WHEN,      /* an ISO 8601 date or time, or an age (cli_since_parse): Unix time */
} cli_type;

/* The rooms of an instance's two parts (CLI_T_INSTANCE), their NUL included. */
#define CLI_VENDOR_CAP 64
#define CLI_TYPE_CAP 128

/* In a parser of the layers that returns 0 or -1 with the reason in err (errlen bytes): says
 * the reason and returns -1. */
#define USAGE_ERR(...)                                                                                                 \
    do {                                                                                                               \
        snprintf(err, errlen, __VA_ARGS__);                                                                            \
        return -1;                                                                                                     \
    } while (0)

#define CLI_NONE ((size_t)-1) /* an offset that is not there */

/* The commands a flag belongs to, a bit each (cli_command's values): CLI_CMD_TRACK is the
 * tool's own command line (before a subcommand's name, or a tracking run's), the others a
 * subcommand's arguments. */
#define CLI_CMD(c) (1u << (c))
#define CLI_CMD_TRACK CLI_CMD(CMD_TRACK)
#define CLI_CMD_SUMMARY CLI_CMD(CMD_SUMMARY)
#define CLI_CMD_RECOMMEND CLI_CMD(CMD_RECOMMEND)
#define CLI_CMD_REPORT CLI_CMD(CMD_REPORT)
#define CLI_CMD_INFO CLI_CMD(CMD_INFO)
#define CLI_CMD_HISTORY CLI_CMD(CMD_HISTORY)
#define CLI_CMD_UPLOAD CLI_CMD(CMD_UPLOAD)
#define CLI_CMD_PHASE CLI_CMD(CMD_PHASE)
#define CLI_CMD_ALL (CLI_CMD(CMD_PHASE + 1) - 1u)

/* What a subcommand's option is, for the subcommand's own code (cli_args_next returns the row):
 * the rows of the options of subcommands have one; CLI_O_NONE: a tracking run's setting only. */
typedef enum cli_opt {
    CLI_O_NONE,
    CLI_O_HELP,
    CLI_O_JSON,
    CLI_O_FORMAT,
    CLI_O_MEMORY_UNIT,
    CLI_O_TIME_UNIT,
    CLI_O_EXPECTED_CORES,
    CLI_O_GPUS,
    CLI_O_GRID_ZONE,
    CLI_O_GRID_INTENSITY,
    CLI_O_EACH,
    CLI_O_OUTPUT,
    CLI_O_INSTANCE,
    CLI_O_NO_PRICE_LOOKUP,
    CLI_O_JOB,
    CLI_O_LAST,
    CLI_O_HISTORY,
    CLI_O_MAX_SLOWDOWN,
    CLI_O_LIST,
    CLI_O_VERBOSE,
    CLI_O_USER,
    CLI_O_HOST,
    CLI_O_SINCE,
    CLI_O_ANY_COMMAND,
    CLI_O_EXPORT,
    CLI_O_IMPORT,
} cli_opt;

/* A subcommand's own words for an option it takes (cli_doc.sub): the line(s) of its --help
 * ('\n' between lines) and its man page's OPTIONS entry (roff). A list ended by commands 0. */
typedef struct cli_sub_text {
    unsigned commands; /* the subcommands these words are for: CLI_CMD_* bits */
    const char *help, *man;
} cli_sub_text;

/* Words of an option for some subcommands (commands: CLI_CMD_* bits). */
typedef struct cli_sub_words {
    unsigned commands;
    const char *text;
} cli_sub_words;

/* A row's words for people, made from its text file docs/options/NAME.md by rt-options-gen
 * (optdoc_gen.c) as cli_doc_NAME (the build's settings_docs.h). */
typedef struct cli_doc {
    const char *option; /* the option the file is about ("--interval") */
    const char *help;   /* --help's text, '\n' between lines ({min}, {max}, {def}: the row's figures);
                         * NULL: not listed on its own */
    /* the documents made from the table (cli_settings_doc): the man page's OPTIONS entry (roff,
     * its tag made from flag, short_flag and arg) and docs/usage.md's row (Markdown: the default
     * and the meaning); NULL: the row is not listed (a job metadata flag: --job-name's lists it) */
    const char *man;
    const char *man_arg; /* the value in the man page's tag when not arg: the choices ("json|csv") */
    const char *md_default, *md;
    /* the subcommands' words for the flag (commands beyond CLI_CMD_TRACK): each subcommand of
     * commands has one entry here, its --help and man page made of them (cli_settings_help_for,
     * cli_settings_doc_for) */
    const cli_sub_text *sub;
    /* docs/contracts.md's (cli_settings_doc: CLI_DOC_CONTRACTS, CLI_DOC_SUBCOMMANDS, CLI_DOC_ENV):
     * the meaning cell; the version after the flag; the cells when not the ones made from the
     * row (flag, short flag, default, config key, variable) */
    const char *contracts, *since, *c_flag, *c_short, *c_default, *c_config, *c_env;
    const cli_sub_words *contracts_sub; /* its part of subcommands' cells, ended by commands 0 */
} cli_doc;

typedef struct cli_setting {
    const char *flag;  /* long option without dashes; NULL: none */
    char short_flag;   /* 0: none */
    unsigned commands; /* where the flag is taken: CLI_CMD_* bits; 0: not on a command line */
    cli_opt opt;       /* what it is to a subcommand (commands beyond CLI_CMD_TRACK) */
    const char *arg;   /* the value's name in --help ("SECS"); NULL: the flag takes no value */
    const char *env;   /* the environment variable; NULL: none */
    const char *section, *key; /* TOML table and key; NULL: not in the config file */
    cli_type type;
    double min, max;   /* CLI_T_SECS, CLI_T_PCT, CLI_T_CORES, CLI_T_ABOVE, CLI_T_MS and CLI_T_COUNT */
    double def;        /* the built-in default of a number */
    size_t layer_off;  /* the value in cli_layer; CLI_NONE: none */
    size_t set_off;    /* its bool "given" mark in cli_layer; CLI_NONE: a NULL string says */
    size_t merged_off; /* the merged value in cli_options; CLI_NONE: merged by its own code */
    const char *what;  /* what a value must be, after "is not" ("a format (json or csv)"); NULL:
                        * made from the type and range; CLI_T_CHOICE: its noun ("a format"), the
                        * choices after it in parentheses */
    const char *const *choices; /* CLI_T_CHOICE: the words it takes, NULL-ended */
    const char *must;  /* the same for the config file, after "must be"; NULL: what */
    const char *unit;  /* CLI_T_ABOVE's figure in the made what ("watts": "a number of watts above
                        * 0, at most 10000") */
    const char *env_over; /* a variable read before env, which wins over it (OTEL's
                           * OTEL_EXPORTER_OTLP_METRICS_TIMEOUT over OTEL_EXPORTER_OTLP_TIMEOUT) */
    bool lead;         /* listed first among its table's keys in messages */
    const cli_doc *doc; /* its words for people (--help, the man pages, docs/usage.md): made from
                         * docs/options/NAME.md at build time (rt-options-gen); NULL: none */
} cli_setting;

extern const cli_setting cli_settings[];
extern const size_t cli_nsettings;

/* The setting whose long flag is flag / variable is env / TOML key is section.key; NULL when
 * none. */
/* Replaces *slot with a heap copy of v (the old one freed). Returns 0 or -1 (no memory). */
int cli_set_str(char **slot, const char *v);

const cli_setting *cli_setting_by_flag(const char *flag); /* a tracking run's flags only */
const cli_setting *cli_setting_by_opt(cli_opt opt); /* a subcommand's option: the first row of it */
const cli_setting *cli_setting_by_env(const char *env);
const cli_setting *cli_setting_by_key(const char *section, const char *key);

/* What a value of s must be ("a number of seconds from 0.01 to 86400"), for the command line
 * and the environment (toml false) or the config file (toml true), into buf. Returns buf. */
const char *cli_setting_what(const cli_setting *s, bool toml, char *buf, size_t cap);

/* Whether v is in s's range. */
bool cli_setting_in_range(const cli_setting *s, double v);

/* Reads text as a number of s (CLI_T_SECS, CLI_T_PCT, CLI_T_CORES, CLI_T_ABOVE, CLI_T_MS) in its range. Returns 0
 * and *out, or -1. */
int cli_setting_number(const cli_setting *s, const char *text, double *out);

/* A subcommand's value read through its row (cli_setting_value): the member its type fills. */
typedef struct cli_value {
    const char *text; /* the text as given (every type) */
    double num;       /* CLI_T_SECS, CLI_T_PCT, CLI_T_CORES, CLI_T_ABOVE; CLI_T_WHEN: Unix time */
    long count;       /* CLI_T_COUNT, CLI_T_PID */
    int choice;       /* CLI_T_CHOICE: the index of the word in choices */
} cli_value;

/* Reads text as a subcommand's value of s by its type and range into *out. Returns 0; or -1
 * with the problem in err, after "--FLAG: " ("'5x' is not a percentage from 0 to 1000", "the
 * value is empty"): the words the tracking command's flags get (cli_setting_read). */
int cli_setting_value(const cli_setting *s, const char *text, cli_value *out, char *err, size_t errlen);

/* The two parts of text, a value of CLI_T_INSTANCE (cli_setting_value took it): VENDOR, TYPE. */
void cli_instance_split(const char *text, char vendor[CLI_VENDOR_CAP], char type[CLI_TYPE_CAP]);

/* The value of s's variable (its env_over first), NULL when unset or empty; *name (may be
 * NULL) the variable that gave it, else s->env. The one reader of a variable the table names
 * outside the layers (the environment-only rows). */
const char *cli_setting_getenv(const cli_setting *s, const char **name);

/* The variable named env's row's value, as cli_setting_getenv; NULL also when no row names it. */
const char *cli_env(const char *env);

/* A number of s from its variable (cli_setting_getenv): s->def when unset or empty. Returns 0
 * and *out; or -1 with the environment's message "VAR: not WHAT: 'VALUE'" in err. */
int cli_setting_env_number(const cli_setting *s, double *out, char *err, size_t errlen);

/* Stores number v as s's value in layer l, by s's type: a process id (CLI_T_PID: a whole number,
 * 1..INT_MAX) as long, a number of CLI_T_SECS, CLI_T_PCT, CLI_T_CORES or CLI_T_ABOVE in its range
 * as double; its *_set mark is the caller's. The one store of a number read from text (the
 * command line, the environment) or from TOML. Returns 0, or -1 (out of range, or no number). */
int cli_setting_put_number(const cli_setting *s, cli_layer *l, double v);

/* Reads text (a flag's or a variable's value) as s's value into layer l (its *_set mark set).
 * Returns 0; or -1 with the problem in err, after "WHERE: " ("--interval: " for a flag); with
 * env, the message has the environment's shape "VAR: not WHAT: 'VALUE'". */
int cli_setting_read(const cli_setting *s, cli_layer *l, const char *text, bool env, char *err, size_t errlen);

/* Reads every variable of the table that is set and not empty into l. Returns 0, or -1 with
 * "VAR: problem" in err. */
int cli_settings_env(cli_layer *l, char *err, size_t errlen);

/* A subcommand's arguments, read one at a time through the table (the rows whose commands has
 * the subcommand's bit): "--flag VALUE", "--flag=VALUE", "-x VALUE", "-xVALUE", words (a FILE;
 * "-" is one), and "--" after which all are words. Every subcommand reads its arguments so;
 * what a value must be is the subcommand's to say. */
typedef struct cli_args {
    const char *name;  /* the subcommand's name, for messages */
    unsigned command;  /* its CLI_CMD_* bit */
    char **argv;
    int argc;
    unsigned mode;     /* CLI_ARGS_* */
    int next;          /* the index of the next argument */
    bool words_only;   /* after "--" (or the first word, with CLI_ARGS_WORD_ENDS) */
    int nwords;        /* the words returned */
    int at;            /* the index of what cli_args_next returned */
    const cli_setting *opt; /* the option returned (NULL with a word) */
    const char *value; /* the option's value (NULL: it takes none), or the word */
    char err[1024];    /* what cli_args_next or cli_args_value found wrong (they say it too; a
                        * zone's words name the table's path) */
    bool dashdash;     /* "--" was read */
    const char *cluster; /* the letters of "-qv" still to read ("v"), or NULL */
} cli_args;

enum {
    CLI_ARGS_WORD_ENDS = 1u,  /* the first word ends the options (summary FILE... --x: a file) */
    CLI_ARGS_DASH_WORDS = 2u, /* after the first word, "-x" that is no option is a word (phase
                               * start -NAME) */
    CLI_ARGS_NO_WORDS = 4u,   /* a word is an error (history, info, upload) */
};

/* What cli_args_next found. */
enum { CLI_ARG_ERROR = -1, CLI_ARG_END, CLI_ARG_OPTION, CLI_ARG_WORD };

/* Starts reading o's subcommand arguments (o->sub_args, o->nsub) as subcommand cmd's. */
void cli_args_init(cli_args *a, const cli_options *o, cli_command cmd, unsigned mode);

/* The next argument: CLI_ARG_OPTION (a->opt, a->value), CLI_ARG_WORD (a->value), CLI_ARG_END;
 * or CLI_ARG_ERROR after saying one line (cli_say; kept in a->err), the subcommand's name first
 * ("history: unknown option '--bogus' (see resource-tracker history --help)", "report: option
 * '-o' needs a value"): the caller ends with EXIT_USAGE. */
int cli_args_next(cli_args *a);

/* Reads the value of the option cli_args_next returned (a->opt, a->value) through its row
 * (cli_setting_value) into *out. Returns 0; or -1 after saying one line, "recommend:
 * --max-slowdown: '5x' is not a percentage from 0 to 1000" (cli_say): the caller ends with
 * EXIT_USAGE. */
int cli_args_value(cli_args *a, cli_value *out);

/* The name a word is a typo of, among the names offered to cli_near_try one by one: one edit
 * (an insertion, deletion, substitution or swap of neighbours) from a name of up to 5 letters,
 * two beyond; a word under 3 letters is none's. For subcommands ("summery": main.c) and flags
 * ("--outptu": "did you mean --output?"). Start with CLI_NEAR(word); best is NULL when none. */
typedef struct cli_near {
    const char *word;
    size_t word_len; /* the bytes of word compared (a flag's before its '=') */
    const char *best;
    size_t dist;
} cli_near;
#define CLI_NEAR(w, n) ((cli_near){.word = (w), .word_len = (n), .dist = 3})
void cli_near_try(cli_near *n, const char *name);

/* Reads the arguments of a subcommand that takes no words and one flag without value beside
 * -h (info --json, upload --list): *on set when that flag is given. Returns -1 to go on; else
 * the exit status: EXIT_USAGE after saying what is wrong, 0 after printing cmd's --help (its
 * usage head and tail as cli_settings_help_for). */
int cli_args_switch(const cli_options *o, cli_command cmd, bool *on, const char *head, const char *tail);

/* Layers in order of precedence. */
enum { CLI_FROM_ARGS, CLI_FROM_ENV, CLI_FROM_FILE, CLI_FROM_DEFAULT };

/* Precedence, the one place it is decided: which layer of o (args, env, file) gives s, or
 * CLI_FROM_DEFAULT. */
int cli_setting_from(const cli_options *o, const cli_setting *s);

/* The value of a string setting s after precedence (NULL: none given), and where it came from
 * ("--prometheus", "TRACKER_HISTORY", "[export] prometheus") into where (may be NULL). */
const char *cli_setting_str(const cli_options *o, const cli_setting *s, char *where, size_t wcap);

/* Sets the merged value (merged_off) of every setting that has one. */
void cli_settings_merge(cli_options *o);

/* s's --help words (its file's @help) with its figures ({min}, {max}, {def}) and its lines
 * joined, into buf; "" when it has none. Returns buf. */
const char *cli_setting_help(const cli_setting *s, char *buf, size_t cap);

/* Writes --help's option list (the tracking command's rows with help text, in table order). */
void cli_settings_help(FILE *f);

/* Writes subcommand cmd's --help: head (its usage and what it does, ending "Options:\n"), the
 * options it takes (the rows whose commands has its bit: its own first, the shared ones, -h
 * last; each with its cli_sub_text's help), then tail (the exit status). */
void cli_settings_help_for(FILE *f, cli_command cmd, const char *head, const char *tail);

/* The documents made from the table: the tracking command's rows with a man or md text, in
 * table order, as the man page's OPTIONS entries (".TP", the tag, the text) or as the rows of
 * docs/usage.md's flag table; and docs/contracts.md's tables: the tracking command's options
 * (the rows with contracts words: | flag | short | default | config | environment | meaning |),
 * the subcommands' (| `NAME` | each option it takes but -h, its words, "; " between |) and the
 * environment-only variables' (| variable | value | default | meaning |); and those variables'
 * entries of the man page's ENVIRONMENT (CLI_DOC_MAN_ENV: ".TP", the tag, the text with the
 * row's {min}, {max} and {def}). */
enum { CLI_DOC_MAN, CLI_DOC_MARKDOWN, CLI_DOC_CONTRACTS, CLI_DOC_SUBCOMMANDS, CLI_DOC_ENV, CLI_DOC_MAN_ENV };
void cli_settings_doc(FILE *f, int kind);

/* Subcommand cmd's man page OPTIONS entries, in cli_settings_help_for's order, from the rows'
 * cli_sub_text man. Returns 0; or -1 after naming on stderr a row of cmd without its words. */
int cli_settings_doc_for(FILE *f, cli_command cmd);

/* The table's keys of section, comma-separated, into buf (for "unknown key" messages). */
void cli_settings_keys(const char *section, char *buf, size_t cap);

/* The TOML tables of the table, in order, as "[job], [tracker], ..." into buf. */
void cli_settings_sections(char *buf, size_t cap);

#endif
