/* cli.h - the command line tool's settings: what the command line, the environment and the
 * TOML config file say, merged with the precedence of docs/contracts.md §1 (command line >
 * environment > config file > built-in default). Each setting's flag, variable, key, type,
 * range and help: the settings table (settings.h). */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "resource_tracker.h"

/* Job metadata fields, in docs/contracts.md §4 order (their flags, variables and keys: the
 * settings table, settings.h). */
enum {
    META_JOB_NAME, META_PROJECT_NAME, META_STAGE_NAME, META_TASK_NAME, META_TEAM, META_ENV, META_LANGUAGE,
    META_ORCHESTRATOR, META_EXECUTOR, META_EXTERNAL_RUN_ID, META_CONTAINER_IMAGE, META_COUNT
};

/* What a tracking run shows (--view, [tracker] view, TRACKER_VIEW): auto (status.c,
 * cli_view_resolve), human (a start line, a status line on a tty, the summary's answer; no
 * sample lines on stderr), log (where a person reads a log: a start line, a progress line a
 * minute and at each phase, the answer; the samples in a file of their own: logview.c), or
 * samples (JSON lines or CSV rows on stderr or -o, as before the view existed). */
typedef enum cli_view { CLI_VIEW_AUTO, CLI_VIEW_HUMAN, CLI_VIEW_SAMPLES, CLI_VIEW_LOG } cli_view;

typedef enum cli_command { CMD_TRACK, CMD_SUMMARY, CMD_RECOMMEND, CMD_REPORT, CMD_INFO, CMD_HISTORY, CMD_UPLOAD, CMD_PHASE } cli_command;

/* One layer of settings (command line, environment, or config file); *_set says whether it was
 * given. What fills each member: the settings table (settings.h). */
typedef struct cli_layer {
    long pid;
    bool pid_set;
    double interval;
    bool interval_set;
    rt_format format;
    bool format_set;
    char *output;
    bool output_set;
    bool quiet;
    bool quiet_set;
    cli_view view;
    bool view_set;
    char *meta[META_COUNT];
    char **tags; /* "key=value" */
    size_t ntags;
    bool summary; /* --summary, [tracker] summary */
    bool summary_set;
    char *report;  /* --report FILE, [tracker] report */
    char *benchmark; /* --benchmark FILE, TRACKER_BENCHMARK, [tracker] benchmark */
    char *history; /* --history FILE, [history] path */
    bool cgroup_off; /* --cgroup off, [tracker] cgroup = "off" (auto otherwise) */
    bool cgroup_set;
    bool wait_all; /* --wait-all, [tracker] wait_all */
    bool wait_all_set;
    /* export (export.c): --prometheus, --prometheus-textfile, --otlp, --otlp-interval; [export] */
    char *prometheus;          /* ADDR:PORT as given */
    char *prometheus_textfile; /* DIR */
    char *otlp;                /* URL as given */
    double otlp_interval;
    bool otlp_interval_set;
    /* gpu_tracker's view (gpuview.c): --expected-cores, --gpus; [tracker] expected_cores, gpus */
    double expected_cores;
    bool expected_cores_set;
    char *gpus; /* UUID,... as given */
    bool price_lookup_off; /* --no-price-lookup, [tracker] price_lookup = false */
    bool price_lookup_off_set;
    /* energy and carbon: --energy, --cpu-tdp, --grid-zone, --grid-intensity; [tracker] */
    bool energy_off;
    bool energy_set;
    bool step_summary_off; /* --step-summary off, TRACKER_STEP_SUMMARY=off, [tracker] step_summary = false */
    bool step_summary_set;
    double cpu_tdp;
    bool cpu_tdp_set;
    double max_slowdown; /* --max-slowdown, TRACKER_MAX_SLOWDOWN, [tracker] max_slowdown_pct */
    bool max_slowdown_set;
    bool place_off; /* --place off, TRACKER_PLACE, [tracker] place = "off" (auto otherwise) */
    bool place_set;
    char *grid_zone; /* a zone of the table, as given */
    char *job_id;    /* --job-id, TRACKER_JOB_ID, [job] job_id */
    char *node;      /* --node, TRACKER_NODE, [job] node */
    bool per_node;   /* --per-node, TRACKER_PER_NODE, [job] per_node */
    bool per_node_set;
    bool csv_energy; /* --csv-energy, TRACKER_CSV_ENERGY, [tracker] csv_energy */
    bool csv_energy_set;
    double grid_intensity;
    bool grid_intensity_set;
    /* the config file's unknown keys and tables, one "FILE:LINE:COL: ..." line each (config.c);
     * a config written for a newer version still loads, and the tool says what it left out */
    char *warnings;
} cli_layer;

/* KEY=VALUE members of an OTEL_* list (export.c): the pairs point into store. */
typedef struct cli_pairs {
    rt_kv *kv;
    size_t count;
    char *store;
} cli_pairs;

typedef struct cli_options {
    cli_command cmd;
    cli_layer args;   /* from the command line */
    cli_layer env;    /* from the environment (cli_merge reads it) */
    cli_layer file;   /* from the config file */
    const struct cli_subcommand *sub; /* the subcommand asked for (NULL: tracking) */
    char *config_path;
    bool config_explicit; /* given with -c: a missing file is an error */
    char **command;       /* wrapped command (argv, NULL-terminated), or NULL */
    char **sub_args;      /* arguments of a subcommand */
    int nsub;
    bool help, version;

    /* merged result */
    long pid; /* 0: none */
    double interval;
    rt_format format;
    bool csv_energy;    /* the CSV (and the Sentinel batches) with the energy columns */
    const char *output; /* NULL: stderr; "-": stdout */
    char *output_named; /* -o DIR/: the file named in DIR (cli_output_in_dir; owned) */
    bool output_gzip;   /* the log view's samples file on a CI runner: gzipped at the end */
    bool quiet;          /* nothing on the terminal (-o FILE is still written) */
    cli_view view;       /* as given; cli_view_resolve says what auto becomes */
    const char *meta[META_COUNT];
    const char **tags;
    size_t ntags;
    rt_job job;
    bool summary;        /* print the summary to stderr at exit */
    const char *report;  /* write the HTML report here at exit; NULL: none */
    const char *benchmark; /* write Snakemake's benchmark file here at exit; NULL: none */
    const char *history; /* append the run to this history database; NULL: none */
    bool cgroup_off;     /* --cgroup off: make no group for the command and read none */
    bool wait_all;       /* --wait-all: after the command, wait until the whole job is over */
    double expected_cores; /* --expected-cores: the parts' hardware share's denominator; 0: all */
    char **gpu_list;       /* --gpus: the GPUs whose utilization counts (owned); NULL: all */
    size_t ngpus;
    bool energy_off;       /* --energy off: no energy read or estimated */
    bool step_summary_off; /* --step-summary off: nothing appended to $GITHUB_STEP_SUMMARY */
    double cpu_tdp;        /* --cpu-tdp: the CPU's TDP per package for the estimate; 0: the model's */
    double max_slowdown;   /* --max-slowdown: the run's own answers' slowdown bound, percent */
    const char *grid_zone; /* --grid-zone: where the electricity comes from; NULL: the cloud region */
    double grid_intensity; /* --grid-intensity: g CO2e per kWh; 0: from the zone */
    rt_grid grid;          /* the run's grid (cli_grid_of_run): g_per_kwh NaN while unknown */
    bool place_off;        /* --place off: where the job runs is not looked for */
    struct rt_place *place; /* where the job runs (cli_place_apply; owned); NULL: off or not looked for */
    const rt_request *request; /* what the job was given there (the place's); NULL: none */
    const char *job_id, *node; /* --job-id, --node: the run's place in a job of several nodes */
    rt_member member;          /* that place (cli_place_apply: the launchers' variables under
                                * --job-id and --node); job_id NULL: none */
    bool per_node;             /* --per-node: one tracker for the node's tasks (local rank 0's;
                                * the others run their command untracked: cli_per_node) */
    const char **place_tags;   /* the job's tags: the user's, then the place's keys the user did not
                                * give (owned; the strings are the user's and the place's) */

    /* library settings from the environment (docs/contracts.md §4): the library reads none */
    const char *proc_root, *sys_root; /* TRACKER_PROC_ROOT, TRACKER_SYS_ROOT; NULL: default */
    const char *nvml_library;         /* TRACKER_NVML_LIBRARY */
    double pss_max_age_secs;          /* TRACKER_PSS_MAX_AGE; default 30 */
    double walk_max_age_secs;         /* TRACKER_WALK_MAX_AGE; default 60 (0: walk every sample) */
    bool cloud_disabled;              /* TRACKER_CLOUD_DISCOVERY=0 */
    const char *cloud_metadata_url;   /* TRACKER_CLOUD_METADATA_URL */
    const char *keeper_url;           /* TRACKER_KEEPER_URL; NULL: the library's default; "off"
                                       * (or --no-price-lookup, [tracker] price_lookup = false):
                                       * no Keeper lookup at all */
    bool price_lookup_off;            /* the merged --no-price-lookup */
    /* streaming to the Sentinel API and S3 (docs/contracts.md §5); the rest is read only with
     * a token */
    char *sentinel_token;       /* SENTINEL_API_TOKEN, taken out of the environment (cli_take_secret);
                                 * NULL (absent or empty): no connection at all. Owned, wiped when freed */
    const char *sentinel_url;   /* SENTINEL_API_URL; NULL: the library's default */
    double upload_interval;     /* TRACKER_UPLOAD_INTERVAL, seconds; default 60 */
    double finish_timeout;      /* TRACKER_FINISH_TIMEOUT, the most seconds the end waits; default 10 */
    const char *s3_endpoint;    /* AWS_ENDPOINT_URL_S3 */
    const char *aws_region;     /* AWS_REGION */
    char *spill_dir;            /* $XDG_STATE_HOME/resource-tracker, else ~/.local/state/resource-tracker
                                 * ($HOME, when it is a directory), else /tmp/resource-tracker-EUID.
                                 * Owned */
    char *spill_fallback;       /* $XDG_RUNTIME_DIR/resource-tracker (when spill_dir cannot be ours),
                                 * or NULL. Owned */
    /* export (export.c), merged and checked by cli_export_merge */
    bool prom_on;               /* --prometheus, [export] prometheus */
    char prom_addr[64];         /* the numeric address to listen on */
    int prom_port;              /* 0: any free port (said at the start) */
    const char *textfile_dir;   /* --prometheus-textfile, [export] prometheus_textfile; NULL: none */
    char *otlp_url;             /* the OTLP metrics URL (.../v1/metrics); NULL: no OTLP. Owned */
    double otlp_interval;       /* --otlp-interval, OTEL_METRIC_EXPORT_INTERVAL (ms), [export]; default 10 */
    double otlp_timeout;        /* OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT (ms); default 10 s */
    bool otlp_no_gzip;          /* OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION=none */
    char **otlp_headers;        /* "Name: value" from OTEL_EXPORTER_OTLP_[METRICS_]HEADERS, NULL-terminated. Owned */
    cli_pairs otlp_header_pairs;
    cli_pairs otlp_resource;    /* OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME as service.name */
    char otlp_warning[320];     /* what became of OTLP asked for by an unusable OTEL_* environment
                                 * (off, or the config file's URL instead); "" */
} cli_options;

/* The subcommands (options.c): name, the function that runs it (NULL: main.c's info), its
 * lines in the usage text. cli_parse_args finds them here; main() runs them. */
typedef struct cli_subcommand {
    const char *name;
    cli_command cmd;
    int (*run)(cli_options *o);
    const char *synopsis; /* "resource-tracker NAME ..." ('\n' between its forms), for --help */
    const char *what;     /* what it does, in a few words */
} cli_subcommand;

extern const cli_subcommand cli_subcommands[];
extern const size_t cli_nsubcommands;

/* The subcommand named name, or NULL. */
const cli_subcommand *cli_subcommand_by_name(const char *name);
/* The subcommand a mistyped word stands for ("summery": "summary"; 1 edit for a name of 3 to 5
 * letters, 2 for a longer one); NULL when none is that near, or for the name itself. */
const char *cli_subcommand_near(const char *word);

/* Writes the whole --help text: the subcommands' usage and the settings table's options. */
void cli_usage_print(FILE *f);

/* Parses argv into opts->args and friends. On a usage error writes one line into err and
 * returns -1; returns 0 otherwise. Never exits. */
int cli_parse_args(cli_options *opts, int argc, char **argv, char *err, size_t errlen);

/* Reads the config file (opts->config_path, default "resource-tracker.toml") into opts->file.
 * A missing default file is not an error. On error writes "FILE:LINE:COL: problem" (or
 * "FILE: problem") into err and returns -1. */
int cli_load_config(cli_options *opts, char *err, size_t errlen);

/* Parses a config document already in memory (name is used in messages). */
int cli_parse_config(cli_layer *out, const char *name, const char *buf, size_t len, char *err, size_t errlen);

/* Merges command line, environment and config file into the result fields, and checks what
 * needs the merged view. Returns 0, or -1 with a message. */
int cli_merge(cli_options *opts, char *err, size_t errlen);

/* Reads the TRACKER_* variables that set library options into the fields above. An invalid
 * value writes "VARIABLE: problem" into err and returns -1; returns 0 otherwise. */
int cli_library_env(cli_options *opts, char *err, size_t errlen);

/* Frees everything the options own. */
void cli_options_free(cli_options *opts);
/* What the static build refuses or leaves off before anything starts (static_build.c): a subcommand
 * or a flag or config setting that needs a library it cannot load: -1 with the reason in err (a
 * usage error); such a setting from the environment: one warning, and the setting cleared. The
 * dynamic build: always 0. */
int cli_static_check(cli_options *opts, char *err, size_t errlen);
void cli_layer_free(cli_layer *l);

/* Helpers shared by the command line and the config reader (settings.c); the interval's range is
 * the settings table's. Each returns 0 or -1. */
int cli_check_interval(double v);
int cli_parse_pid(const char *s, long *out);
int cli_parse_format(const char *s, rt_format *out);
/* A boolean in an environment variable: true or false (the Rust tool's words, any case), 1 or 0,
 * yes or no, on or off into *out; anything else returns -1. */
int cli_parse_bool_word(const char *s, bool *out);
/* "auto" sets *off to false, "off" to true; anything else returns -1. */
int cli_parse_cgroup(const char *s, bool *off);
/* "auto", "human" or "samples" into *out; anything else returns -1. */
int cli_parse_view(const char *s, cli_view *out);
int cli_check_tag(const char *s);
int cli_add_tag(cli_layer *l, const char *tag);


/* Writes "resource-tracker: MESSAGE" and a newline to stderr with one write(2) (say.c). */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The library's log callback: warnings and errors through cli_say, the rest dropped. */
void cli_log(void *user, rt_log_level level, const char *msg);

/* Files and secrets (secure.c). */
/* Opens path for writing what the tool creates (flags as open(2); O_CLOEXEC added), never
 * following a symlink as the last component that sits in a world-writable sticky directory and
 * is owned by neither the euid nor the directory's owner (the kernel's fs.protected_symlinks
 * rule); other symlinks are followed as usual (-o /dev/stdout works). Returns the descriptor, or
 * -1 with errno; *refused (may be NULL) says that the rule refused it (errno EACCES). */
int cli_open_create(const char *path, int flags, mode_t mode, bool *refused);
/* What path's last component is, from one lstat: a symlink that cli_open_create would refuse, one
 * it would follow, or anything else (no link, nothing there, or it cannot be looked at). */
typedef enum { CLI_PATH_OTHER, CLI_PATH_LINK, CLI_PATH_REFUSED } cli_path_kind;
cli_path_kind cli_path_look(const char *path);
/* Whether path's last component is a symlink that cli_open_create would refuse: 1 or 0 (also
 * when it cannot be looked at: opening it says why). "-" is 0. */
int cli_path_refused(const char *path);
/* Why such a path is refused, for messages. */
const char *cli_refused_why(void);
/* The one line that says why a file given with --flag cannot be written (into buf): "--FLAG:
 * refusing 'PATH': WHY" for a refused symlink (refused), else "--FLAG: cannot open 'PATH':
 * strerror(err)". Returns buf. */
const char *cli_path_message(char *buf, size_t cap, const char *flag, const char *path, bool refused, int err);
/* Checks, creating nothing, that the run will be able to write the file path given with
 * --flag: kind CLI_WRITE_FILE, a file that exists and is writable, or whose directory exists
 * and is writable; CLI_WRITE_FILE_BESIDE, the same and its directory writable even when the
 * file exists (SQLite's journal is created beside it), and no FIFO. A path ending in '/' is a
 * directory that exists and is writable (-o DIR/: the run names its file in it); with
 * CLI_WRITE_FILE_OR_DIR (-o) a directory given without its '/' gets a hint after the line: "; to
 * write into it, end it with '/': -o DIR/". "-" (stdout) and NULL pass. Returns 0,
 * or -1 with cli_path_message's line in err. */
typedef enum { CLI_WRITE_FILE, CLI_WRITE_FILE_BESIDE, CLI_WRITE_FILE_OR_DIR } cli_write_kind;
int cli_path_check(const char *flag, const char *path, cli_write_kind kind, char *err, size_t errlen);
/* Takes the secret in environment variable name: a heap copy (NULL when unset or empty); the
 * variable's value is wiped in place and removed from the environment (the wrapped command does
 * not inherit it), and while a secret is held the process is not dumpable (no core dump, its
 * /proc files root's). Free with cli_free_secret, which wipes it. */
char *cli_take_secret(const char *name);
void cli_free_secret(char *secret);

/* Export (export.c). */
/* Parses --prometheus's ADDR:PORT: a numeric IPv4 address, [IPv6], "localhost" or nothing (both:
 * 127.0.0.1, loopback unless told otherwise), ':' and a port 0-65535 ("PORT" alone too). Writes
 * the numeric address into addr (addrlen bytes). Returns 0, or -1. */
int cli_parse_listen(const char *s, char *addr, size_t addrlen, int *port);
/* Parses an OTEL_* list "k1=v1,k2=v2" (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS):
 * members split at ',', spaces and tabs trimmed, empty members skipped, keys and values
 * percent-decoded (%00 refused). With header_names, keys must be HTTP header names and values
 * hold no control character. Returns 0 and *out (free with cli_pairs_free), or -1 with the
 * problem in err and *out empty. */
int cli_parse_otel_list(const char *s, bool header_names, cli_pairs *out, char *err, size_t errlen);
void cli_pairs_free(cli_pairs *p);
/* Merges and checks the export settings of opts (command line > environment > config file) into
 * its export fields. Returns 0, or -1 with "WHERE: problem" in err. */
int cli_export_merge(cli_options *opts, char *err, size_t errlen);
/* Frees (and wipes: headers may hold credentials) what cli_export_merge allocated. */
void cli_export_options_free(cli_options *opts);

/* Where a tracking run's samples go (sinks.c). */
/* Starts the /metrics server opts asks for, before the command starts (cloud may be NULL; it
 * a reference is kept), as a sink in *out (NULL when none is asked for, or out of memory:
 * said). Returns 0, or -1 after saying why when it cannot listen (a usage error: nothing else
 * was started). */
int cli_sinks_prom(const cli_options *opts, rt_cloud_discovery *cloud, rt_sink **out);

/* The streaming options the run's stream and `upload` share (sinks.c): the API, token, S3
 * endpoint, region, spill directory, finish timeout and the tool's log, from opts. */
void cli_stream_options(const cli_options *opts, rt_stream_options *so);
/* What a run's pipeline is made with besides the settings. */
typedef struct cli_run_sinks {
    rt_sink *prom;              /* cli_sinks_prom's; NULL: none */
    int out_fd;                 /* where samples are written; -1: nowhere (--quiet) */
    rt_stats *stats;            /* the run's answers read them at the end; NULL: none */
    rt_report *report;
    const rt_host *host;        /* NULL: not read */
    rt_cloud_discovery *cloud;  /* NULL: none (the sinks keep references of their own) */
    double start_secs;          /* Unix time the run started */
} cli_run_sinks;
/* The run's pipeline: the textfile, the server, the OTLP exporter, the stream, the statistics,
 * the report and the output, as opts asks (those that cannot start are said and left out), the
 * host's facts pushed to them. It owns in->prom from here. NULL when out of memory (said). */
rt_pipeline *cli_sinks_pipeline(const cli_options *opts, const cli_run_sinks *in);

/* gpu_tracker's view (gpuview.c; the value parsers in settings.c). */
/* Splits "UUID,UUID,..." (blanks around each trimmed; none may be empty; at most 1024) into
 * *out (free with cli_gpu_list_free). Returns 0, or -1 with the problem in *why. */
int cli_parse_gpu_list(const char *s, char ***out, size_t *n, const char **why);
void cli_gpu_list_free(char **list, size_t n);
/* Merges --expected-cores and --gpus with the config file's into opts. Returns 0, or -1 with
 * "WHERE: problem" in err. */
int cli_gpuview_merge(cli_options *opts, char *err, size_t errlen);
/* Sets how st's usage counts (before its first record). Returns 0, or -1. */
int cli_gpuview_apply(double expected_cores, char *const *gpus, size_t ngpus, rt_stats *st);

/* The grid's carbon intensity (grid.c), chosen in one place: g_per_kwh > 0 (source "given"),
 * else zone looked up in the table, else the cloud's "vendor:region" (zone NULL), else unknown
 * (g_per_kwh NaN, the rest NULL). cli_grid_of_run: the run's, from o's merged settings, into
 * o->grid (returned). */
void cli_grid_choose(rt_grid *out, const char *zone, double g_per_kwh, const rt_cloud *cloud);
const rt_grid *cli_grid_of_run(cli_options *o, const rt_cloud *cloud);
/* Warns, one line each, of chosen GPUs that are not among the GPUs of the run's last sample
 * (NULL: none taken, nothing said). */
void cli_gpuview_check(char *const *gpus, size_t ngpus, const rt_sample *last);

#define EXIT_USAGE 2
#define EXIT_FAIL 1

/* The subcommands (one file each). Each parses o->sub_args itself, reads what
 * cli_library_env set, and returns the tool's exit status (2 for a usage error). */
/* clock.c: the tool's clocks, CLOCK_MONOTONIC and CLOCK_REALTIME in seconds */
double cli_mono_secs(void);
double cli_real_secs(void);

/* lookup.c: the whole Keeper lookup (both requests) of recommend and report finishes within this. */
#define CLI_LOOKUP_SECS 5.0

/* What cli_keeper_lookup found. An *_err of RT_ERR_DISABLED: that lookup was not asked. */
typedef struct cli_lookup {
    rt_error cheapest_err;      /* RT_OK, RT_ERR_NOT_FOUND (no server fits), or Keeper down */
    rt_server cheapest;
    rt_error price_err;         /* RT_OK, RT_ERR_NOT_FOUND (no price known), or Keeper down */
    bool price_late;            /* not asked: no time was left for it */
    double price;               /* USD per hour; NaN unknown */
    char cheapest_warning[600]; /* the last warning each lookup logged, "" when none */
    char price_warning[600];
    char offline[300];          /* why Keeper was not reached at all (no name, no connection,
                                 * nothing in time), in curl's words; "" when it was or nothing
                                 * was asked */
    rt_error like_err;          /* 0.19, a smaller GPU would do (rt_recommendation.gpu_smaller):
                                 * the cheapest server with GPUs like the job's, for the saving;
                                 * RT_ERR_DISABLED when not asked */
    rt_server like;
} cli_lookup;

/* The cheapest server for rec (NULL: not asked), when a smaller GPU would do the cheapest with GPUs
 * like the one the job had (each GPU's memory that GPU's), and the price of vendor:type in region
 * (NULL vendor or type: not asked; NULL region: the lowest of all), CLI_LOOKUP_SECS at most in all,
 * from Keeper at url (NULL: the default); the price is not asked when the first lookup found
 * Keeper down or unusable. Messages go to log as well (NULL: only kept). */
void cli_keeper_lookup(const char *url, rt_log_fn log, void *log_user, const rt_recommendation *rec,
                       const char *vendor, const char *type, const char *region, cli_lookup *out);

/* How to stop the lookups, as the quiet line of a failed one ends (cli_prices_line). */
#define CLI_PRICES_STOP "TRACKER_KEEPER_URL=off or --no-price-lookup stops the lookup"

/* The one quiet line a failed lookup leaves in the answer (report, a run's --report, recommend's
 * text; never a warning on stderr), into buf[cap]: "WHAT: offline (Keeper not reached: REASON;
 * CLI_PRICES_STOP)" when k found Keeper unreachable, else "WHAT: unavailable (WARNING;
 * CLI_PRICES_STOP)" with the lookup's warning (else the error's name). what: "prices", or
 * "price of VENDOR:TYPE". Returns buf. */
const char *cli_prices_line(const cli_lookup *k, const char *what, const char *warning, rt_error err, char *buf,
                            size_t cap);

int cli_summary_main(cli_options *o);   /* summary.c */
int cli_recommend_main(cli_options *o); /* recommend.c */
int cli_report_main(cli_options *o);    /* report.c */
int cli_history_main(cli_options *o);   /* history.c */
int cli_info_main(cli_options *o);      /* info.c */
int cli_upload_main(cli_options *o);    /* upload.c */
int cli_phase_main(cli_options *o);     /* phase.c */

/* Where the tool runs (info.c): cloud discovery started in the background as the environment
 * asks (NULL when it is turned off or cannot start: said), and the host's facts read with the
 * roots the environment names (rt_host_new's contract). */
rt_cloud_discovery *cli_start_cloud(const cli_options *opts);

/* Where the job runs (place.c), for a tracking run: unless --place off, finds the place
 * (rt_place_detect: its warnings said through cli_log, once each) and fills the job metadata the
 * user did not give from it (a field the user set wins; a tag the user gave wins by key), and
 * sets opts->request. Never fails the run: out of memory is one warning and no place. */
void cli_place_apply(cli_options *opts);
/* --per-node: this task's rank on its node as the launchers' variables say it (SLURM_LOCALID,
 * LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, ...: rt_member.local_rank), read alone (no query, no
 * warning); -1 when none says one, or with --place off. */
int64_t cli_per_node_rank(const cli_options *opts);
/* -o DIR/ (a path ending in '/'): the run's own file in DIR, named by its place in a job of
 * several (opts->member): JOB.NODE[.rRANK].EXT, else HOST.PID.EXT (EXT jsonl or csv as the
 * format); opts->output then names it. 0, or -1 out of memory (said). */
int cli_output_in_dir(cli_options *opts);
/* The name of the run's own file, without directory or extension (-o DIR/'s, and the log view's
 * samples file's): JOB.NODE[.rRANK] in a job of several (opts->member), else HOST.PID; every
 * character a file name should not hold made '_'. */
void cli_run_file_name(const cli_options *opts, char *name, size_t cap);

/* logview.c: where a person reads a log. The place a run's stderr goes to a log people read,
 * from the variables of each (GITHUB_ACTIONS=true, GITLAB_CI=true, JENKINS_URL, BUILDKITE=true,
 * SLURM_JOB_ID): its name ("GitHub Actions", "a SLURM job"), or NULL for none; *dir (when dir is
 * not NULL) a CI runner's temporary directory (RUNNER_TEMP, RUNNER_TEMP_PROJECT_DIR or
 * $CI_PROJECT_DIR.tmp, WORKSPACE_TMP; else TMPDIR, else /tmp: an existing absolute directory), or
 * NULL for the working directory (a SLURM job's). */
const char *cli_log_place(const char **dir);
/* The log view's samples file: DIR/resource-tracker-NAME.EXT (cli_run_file_name; "-2", "-3" ...
 * added where one exists), made now in the CI runner's temporary directory (opts->output_gzip
 * set) or the working directory; opts->output then names it. 0, or -1 when none could be made
 * (said: the samples are not kept). */
int cli_log_output(cli_options *opts);
/* At the run's end, with opts->output_gzip: the samples file gzipped to FILE.gz (the plain one
 * removed, opts->output naming the .gz; one line says where); where that fails, one warning and
 * the plain file stays. */
void cli_log_gzip(cli_options *opts);
/* Frees what cli_place_apply kept (cli_options_free calls it). */
void cli_place_free(cli_options *opts);
rt_error cli_read_host(const cli_options *opts, rt_host **out);

/* What a tracking run leaves behind, for --summary, --report and --history at its end. */
typedef struct cli_run_result {
    const rt_job *job;
    char *const *command;     /* the wrapped argv (NULL-terminated), or NULL */
    long pid;                 /* --pid, 0 without */
    int exit_status;          /* the tool's exit status; -1 when tracking a --pid or the machine */
    double start_secs, end_secs; /* Unix time */
    const rt_host *host;      /* NULL when not read */
    const rt_cloud *cloud;    /* NULL when not known */
    const rt_summary *summary;
    const char *cgroup_why;   /* why the job had no cgroup of its own (wrapper mode), for the
                               * accounting note; NULL when it had one or it is not known */
    char run_uuid[33];        /* the run's own id (32 lowercase hex, made at its start by
                               * cli_run_uuid): a history stores a run once, however often written */
} cli_run_result;

/* A new run id into out[33]: 32 lowercase hex digits of getrandom(2) (the clock and the pid
 * mixed when it has none to give). */
void cli_run_uuid(char out[33]);

/* The scheduler whose words a run's answer is given in: the job's orchestrator (--orchestrator:
 * slurm, kubernetes/k8s, metaflow), else the environment the tool runs in (SLURM_JOB_ID,
 * KUBERNETES_SERVICE_HOST), else SLURM's (batch jobs). */
rt_scheduler cli_scheduler_of(const rt_job *job);

/* The notes of a run (rt_summary_notes with the tool's reason for a missing cgroup) into
 * out[RT_NOTES_MAX]; returns how many. */
size_t cli_run_notes(const rt_summary *s, const char *cgroup_why, rt_note *out);

/* The notes as a JSON array of {"kind", "text"} (a new reference; NULL when out of memory). */
struct json_t;
struct json_t *cli_notes_json(const rt_note *notes, size_t n);

/* A run's table of durations under 1, 2, ... cores (rt_cores_table) as the library writes it
 * (rt_format_cores_json: {"duration_secs", "cores_had", ..., "rows": [{"cores", "duration_secs",
 * "core_hours", "wait_bound", "cost_usd"}, ...]}) read into jansson, or JSON null for NULL (a new
 * reference; NULL when out of memory). */
struct json_t *cli_cores_json(const rt_cores_table *t, double usd_per_core_hour);

/* Prints the summary as aligned text (summary.c, through rt_summary_write_text_cb): run (job,
 * command, exit status, host, cloud: those of run, which may be NULL for a recorded file), the
 * job's tree, the machine; the answer in the words of cli_scheduler_of(run's job).
 * memory_unit / time_unit: gpu_tracker's names, or NULL for readable automatic units. Returns
 * 0, or -1 for an unknown unit or a failed write. brief: the answer and one line of the run only
 * (the end of the human view without --summary). */
/* The summary of s as one JSON line (docs/contracts.md section 8) to f, ending in a newline or
 * not; a run with many phases takes a buffer of its size. 0, or -1 when not written. */
int cli_summary_json(FILE *f, const rt_summary *s, const char *memory_unit, const char *time_unit, bool newline);
/* summary's, report's and recommend's (cmd) FILE arguments (jobfiles.c) with each directory
 * replaced by its run files (*.jsonl, *.csv, *.json, gzipped or not; sorted): 0 and *out
 * (cli_run_paths_free), EXIT_USAGE for a directory that cannot be read or has none (said),
 * EXIT_FAIL out of memory. */
int cli_run_paths(const char *cmd, char *const *args, size_t nargs, char ***out, size_t *nout);
void cli_run_paths_free(char **paths, size_t n);
typedef struct cli_jobs_options {
    bool json, each; /* one JSON line per job or file; each run's summary after its job's view */
    const char *memory_unit, *time_unit;
} cli_jobs_options;
/* Prints the runs sums[0..n) (read from paths): the runs that name one job together as its
 * view (rt_job_view), the others one by one as `summary` does; says which were left out of a
 * job. 0, or EXIT_FAIL when a write failed. */
int cli_print_jobs(const rt_summary *const *sums, char *const *paths, size_t n, const cli_jobs_options *jo);
/* The job report and recommend give their answer of (jobfiles.c): the runs, among sums[0..n)
 * (read from paths), of the first job that two runs or more name (rt_job_pick): their indices
 * into idx (room for n), how many returned; the other files are said to be left out, and why (cmd's words).
 * 0: no job has two runs (nothing said). */
size_t cli_job_runs(const char *cmd, const rt_summary *const *sums, char *const *paths, size_t n, size_t *idx);
/* The run among runs[0..n) (the view v's) a page of the job shows: of the node whose memory
 * sizes the ask, the run that needs most. */
size_t cli_job_shown(const rt_job_view *v, const rt_summary *const *runs, size_t n);
/* Text for people laid out at a width (layout.c). The width texts written to f break at: the
 * terminal's columns when f is a terminal, else COLUMNS when set, else 80; 40 at least. */
int cli_text_width(FILE *f);
/* text after used columns, broken between words so that no line passes width, the lines after
 * the first indented to indent (6 where indent leaves under 30 columns; rt_text_wrap: never at
 * a space cli_glue_brackets made); no newline after it. Returns the column it ends at. */
size_t cli_wrap_put(FILE *f, size_t width, size_t used, size_t indent, const char *text);
/* A two-column entry: tag (its leading spaces kept; its own further lines at hang), then text
 * from column col (on the tag's last line when it ends 2 columns short of col, else on the next),
 * its further lines at col; stacked (text on the lines under the tag, at column 6) when width
 * leaves it under 40 columns. Ends with a newline. */
void cli_entry_put(FILE *f, size_t width, const char *tag, size_t hang, size_t col, const char *text);
/* Hand-written help text reflowed at width: blank lines kept; each paragraph (lines up to a blank
 * one) joined and broken again, after its first line's indent, its further lines at its second
 * line's indent; a paragraph starting "Usage:" a synopsis a line (a line indented deeper than
 * "Usage: " continues the one before), each hanging after "Usage: resource-tracker NAME ". */
void cli_prose_put(FILE *f, size_t width, const char *text);
/* One line (no newline in it) and a newline: as it is when it fits width, else broken between
 * words, its further lines indented 2 past its own indent. */
void cli_fold_put(FILE *f, size_t width, const char *line);
/* The spaces inside [...] of s made ones no line is broken at (a synopsis' optional parts stay
 * whole): written as spaces by cli_wrap_put. */
void cli_glue_brackets(char *s);
/* An rt_write_fn writing to the FILE * user (summary.c): len, or -1 when fwrite fell short. */
long cli_write_stdio(void *user, const void *buf, size_t len);
int cli_summary_print(FILE *f, const rt_summary *s, const cli_run_result *run, const char *memory_unit,
                      const char *time_unit, bool brief);

/* Reads the recorded run at path (rt_run_read: JSON lines, CSV or a saved tracker snapshot) into
 * each of the nst accumulators st (and rep when not NULL). Returns 0, or the exit
 * status after saying why: 2 when the file cannot be opened, is no known format or has no
 * valid sample; 1 when reading failed midway. Malformed lines are warned about, not fatal. */
int cli_read_run(const char *path, rt_stats *const *st, size_t nst, rt_report *rep);

/* Writes the HTML report of a tracking run that fed rep to path (report.c): statistics,
 * recommendation and the Keeper lookup as `report` does. Failures are one warning; returns 0
 * or -1. */
int cli_report_run(cli_options *o, const char *path, rt_report *rep, const cli_run_result *run);

/* Writes the run as Snakemake's benchmark file at path (workflow.c: --benchmark): to path.tmp,
 * then renamed over path. Never fails the job: a path that cannot be written is one warning.
 * Returns 0, or -1 after warning. */
int cli_benchmark_write(const char *path, const cli_run_result *run);
/* GitHub Actions' job summary (step_summary.c): the file the run's Markdown is appended to
 * (GITHUB_ACTIONS=true, GITHUB_STEP_SUMMARY set and not empty, --step-summary not off), else
 * NULL. */
const char *cli_step_summary_path(const cli_options *o);
/* Appends the run (its summary, rep's charts) to that file as Markdown, keeping the file under
 * GitHub's 1 MiB a step (past it a one-line note or nothing, with a warning). A file that cannot
 * be written is one warning; nothing else changes. */
void cli_step_summary(const cli_options *o, const rt_report *rep, const cli_run_result *run);

/* The end of a tracking run (finish.c), from the moment the job's status is settled. */
/* Starts watching sfd (the run's signalfd, its signals blocked; -1: none) for a terminating
 * signal to stop (SIGINT, SIGTERM, SIGQUIT): the first cuts the end short (one line says so,
 * every wait of cli_late_open and cli_late_write returns at once), and when the end still goes
 * on a second later, or at a second signal, the process exits with status after removing jcg
 * (the job's group; may be NULL). Other signals read from sfd meanwhile are dropped. */
void cli_finish_begin(int sfd, int status, rt_job_cgroup *jcg);
/* Whether the end was cut short by a signal (false outside cli_finish_begin .. _end). */
bool cli_finish_cut(void);
/* Stops watching (before sfd is closed); from here nothing ends the process early. */
void cli_finish_end(void);
/* Whether path is (or a symlink to) a FIFO. */
bool cli_is_fifo(const char *path);
/* Opens path (cli_open_create's flags, mode and *refused) without blocking: a FIFO that has no
 * reader is opened again until deadline (CLOCK_MONOTONIC seconds). The descriptor has
 * O_NONBLOCK: write it with cli_late_write. Returns it, or -1 with errno: ENXIO no reader came
 * by the deadline, EINTR the end was cut short, else open(2)'s. */
int cli_late_open(const char *path, int flags, mode_t mode, double deadline, bool *refused);
/* A file opened by cli_late_open, written until deadline (CLOCK_MONOTONIC seconds). */
typedef struct cli_late_file {
    int fd;
    double deadline;
    size_t written; /* bytes its reader took so far */
} cli_late_file;
/* rt_write_fn for a cli_late_file (user): writes what the file takes, waiting for room while
 * its reader is slow; -1 with errno ETIMEDOUT at the deadline, EINTR when the end was cut
 * short, else write(2)'s (EPIPE: the reader went away). */
long cli_late_write(void *user, const void *buf, size_t len);
/* All len bytes of buf with cli_late_write. Returns 0, or -1 with its errno. */
int cli_late_write_all(cli_late_file *f, const void *buf, size_t len);
/* Why a late file failed with err, in a few words for a warning (into buf): ENXIO "a FIFO that
 * no reader opened within WAITED s", ETIMEDOUT (f given) "its reader took N bytes and no more
 * within WAITED s", else strerror. Returns buf. */
const char *cli_late_why(char *buf, size_t cap, int err, const cli_late_file *f, double waited);

/* Appends the run to the history database at path (history.c). Never fails the job: a
 * database that cannot be opened or written is one warning. Returns 0, or -1 after warning. */
int cli_history_append(const char *path, const cli_run_result *r);
/* The CLOCK_MONOTONIC second by which a PostgreSQL history's writes (cli_history_append and the
 * deliveries after it) end: the run's end plus TRACKER_FINISH_TIMEOUT. */
void cli_history_deadline(double mono_secs);

/* Warns once a process when the SQLite history at path lies on a network file system (NFS, CIFS,
 * Lustre, GPFS, ...: rt_sqlite_network_fs; TRACKER_TEST_MOUNTINFO names a mount table to read in
 * place of /proc/self/mountinfo, for the tests alone): the risk, and the PostgreSQL option. */
void cli_history_fs_warn(const char *path);

/* Writes into their histories the rows kept for later (history.c: the history held by another
 * writer past the busy timeout when its run ended), each once, and removes their files; only
 * those for the history at only (NULL: all). Counts them into *written and *left (those not
 * written now, said). Returns 0, or -1 when some are left. */
int cli_history_deliver(const char *only, unsigned *written, unsigned *left);

/* The history database a subcommand reads: flag (its --history FILE) if not NULL, else
 * TRACKER_HISTORY, else [history] path of the config file (read here; -c is honoured).
 * Returns the path, or NULL after saying why (a bad config, or none named: how to name one). */
const char *cli_history_path(cli_options *o, const char *flag);

/* The runs of job `recommend --job` answers from (the last `last`, newest first; see
 * rt_history_runs) from the history at path (history.c, through the library's reader). Sets
 * *out to an array of *n summaries (free with rt_history_free; strings inside live as long as
 * the array). Returns 0 (n may be 0), or -1 after saying why. */
int cli_history_summaries(const char *path, const char *job, int last, rt_summary **out, size_t *n);

/* Who ran each run of a history (schema version 12; recommend --job reads them with its runs:
 * rt_history_job_runs): the library's rt_history_who. */
typedef rt_history_who cli_history_who;

/* A point in time as `history --since` takes it (since.c): an ISO 8601 date or date and time
 * (UTC without a zone; Z or +HH:MM), or an age before now (a Unix time): 90s, 30m, 12h, 7d, 2w.
 * Returns 0 with the Unix time in *out, or -1 when s is neither. */
int cli_since_parse(const char *s, double now, double *out);

/* Where the newest successful run of job ran, as cloud discovery found it (history.c): vendor,
 * instance type and region into the buffers ("" when unknown). Returns 0, or -1 after saying
 * why. */
int cli_history_instance(const char *path, const char *job, char *vendor, size_t vcap, char *type, size_t tcap,
                         char *region, size_t rcap);

/* The tool's state directory (options.c; XDG: $XDG_STATE_HOME/resource-tracker, else
 * ~/.local/state/resource-tracker for a home that is there, else /tmp/resource-tracker-UID),
 * where the stream spills and a history row that could not be written waits, into dir[cap].
 * Returns snprintf's count (cap or more: it did not fit). */
int cli_state_dir(char *dir, size_t cap);

/* Whether process pid runs (descend.c): its stat can be read and it is no zombie nor dying. */
bool cli_proc_running(long pid);

/* Calls fn(child, user) for each child of every thread of pid (0: the calling process), in the
 * order /proc lists them, until fn returns false. Returns false when the list cannot be read
 * (pid gone). */
bool cli_proc_children(long pid, bool (*fn)(long child, void *user), void *user);

/* The calling process's descendants that run now (zombies not yet reaped and the library's
 * helpers left out), read from /proc: -1 when its children cannot be listed. */
int64_t cli_descendants_running(void);

/* Starts wrapper mode's guardian (guardian.c) for the job's group jcg: a process that is not
 * the tracker's child (double-forked, in a session of its own, named rt-guardian, deaf to
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2 and SIGPIPE) and waits for the tracker to end.
 * Call it before the tracker becomes a child subreaper, with no thread running. close_fd (the
 * output, or -1) is closed in the guardian. Returns the descriptor (close-on-exec) to hand to
 * cli_guardian_release at the normal end, or -1 after one warning (the run goes on without).
 * When the tracker dies without that release, the guardian kills every process in jcg, removes
 * its directories and exits; after a release it exits doing nothing. */
int cli_guardian_start(rt_job_cgroup *jcg, int close_fd);

/* The tracker's normal end: tells the guardian behind fd (from cli_guardian_start; -1 is
 * allowed) that nothing is to be cleaned up, waits (at most 2 s) until it has exited, and
 * closes fd. */
void cli_guardian_release(int fd);

#endif
