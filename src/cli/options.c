/* options.c - the command line (docs/contracts.md §1): flags, subcommands, the wrapped
 * command, the environment, and the merge of all layers with the config file. Usage errors
 * become one message for the caller to print; nothing here exits or starts anything. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

const meta_field cli_meta_fields[META_COUNT] = {
    [META_JOB_NAME] = {"job-name", "TRACKER_JOB_NAME", "name"},
    [META_PROJECT_NAME] = {"project-name", "TRACKER_PROJECT_NAME", "project_name"},
    [META_STAGE_NAME] = {"stage-name", "TRACKER_STAGE_NAME", "stage_name"},
    [META_TASK_NAME] = {"task-name", "TRACKER_TASK_NAME", "task_name"},
    [META_TEAM] = {"team", "TRACKER_TEAM", "team"},
    [META_ENV] = {"env", "TRACKER_ENV", "env"},
    [META_LANGUAGE] = {"language", "TRACKER_LANGUAGE", "language"},
    [META_ORCHESTRATOR] = {"orchestrator", "TRACKER_ORCHESTRATOR", "orchestrator"},
    [META_EXECUTOR] = {"executor", "TRACKER_EXECUTOR", "executor"},
    [META_EXTERNAL_RUN_ID] = {"external-run-id", "TRACKER_EXTERNAL_RUN_ID", "external_run_id"},
    [META_CONTAINER_IMAGE] = {"container-image", "TRACKER_CONTAINER_IMAGE", "container_image"},
};

const char cli_usage[] =
    "Usage:\n"
    "  resource-tracker [OPTIONS]                      track the whole machine until SIGINT/SIGTERM\n"
    "  resource-tracker [OPTIONS] --pid PID            also attribute usage to the process tree of PID\n"
    "  resource-tracker [OPTIONS] [--] COMMAND [ARG...]\n"
    "                                                  run COMMAND, track its tree, exit with its status\n"
    "  resource-tracker summary [--json] [--memory-unit U] [--time-unit U]\n"
    "                           [--expected-cores N] [--gpus UUID,...] FILE...\n"
    "                                                  statistics of recorded runs (JSON lines or CSV,\n"
    "                                                  also the Python tracker's CSV)\n"
    "  resource-tracker recommend FILE... [--json] [--instance VENDOR:TYPE]\n"
    "  resource-tracker recommend --job NAME [--last N] [--history FILE]\n"
    "                                                  resources to ask for, and the cheapest server\n"
    "  resource-tracker report FILE... -o OUT.html [--instance VENDOR:TYPE]\n"
    "                                                  self-contained HTML report\n"
    "  resource-tracker history [--job NAME] [--last N] [--json] [--history FILE]\n"
    "                                                  runs recorded with --history (newest first)\n"
    "  resource-tracker info                           host and cloud discovery as JSON\n"
    "  (each subcommand has its own --help)\n"
    "\n"
    "Options:\n"
    "  -p, --pid PID           root of the process tree to attribute usage to\n"
    "  -i, --interval SECS     seconds between samples, 0.01 to 86400 (default 1)\n"
    "  -c, --config FILE       TOML config (default resource-tracker.toml; a missing default is ignored)\n"
    "  -f, --format FMT        json (one object per line, default) or csv\n"
    "  -o, --output FILE       where samples go (default stderr; - is stdout)\n"
    "  -q, --quiet             no sample output\n"
    "      --job-name NAME     job metadata; also --project-name, --stage-name, --task-name, --team,\n"
    "                          --env, --language, --orchestrator, --executor, --external-run-id,\n"
    "                          --container-image (or TRACKER_JOB_NAME, TRACKER_PROJECT_NAME, ...)\n"
    "      --tag KEY=VALUE     a tag for the run (repeatable)\n"
    "      --summary           print the run's summary to stderr at exit\n"
    "      --report FILE       write the run's HTML report at exit\n"
    "      --history FILE      append the run's summary to this run history (SQLite; or TRACKER_HISTORY)\n"
    "      --cgroup auto|off   auto (default): run the command in a cgroup of its own where one can be\n"
    "                          made, and read the tracked tree's cgroup (limits, OOM kills, throttling,\n"
    "                          pressure); off: make and read no cgroup\n"
    "      --wait-all          after the command exits, go on until every process it started has\n"
    "                          ended (default: exit with the command, saying how many were left)\n"
    "      --prometheus ADDR:PORT  serve /metrics (Prometheus text, or OpenMetrics) while tracking;\n"
    "                          ADDR 127.0.0.1 when left out (:9101), 0.0.0.0 or [::] for every interface,\n"
    "                          PORT 0 for a free one (said at the start)\n"
    "      --prometheus-textfile DIR  write DIR/resource_tracker_JOB.prom (node_exporter's textfile\n"
    "                          collector) while the job runs and at its end, replaced atomically\n"
    "      --otlp URL          push metrics over OTLP/HTTP (JSON, gzip) to URL (/v1/metrics appended\n"
    "                          unless there; or OTEL_EXPORTER_OTLP_ENDPOINT)\n"
    "      --otlp-interval SECS  seconds between OTLP pushes (default 10; OTEL_METRIC_EXPORT_INTERVAL ms)\n"
    "      --expected-cores N  cores the job is expected to use: the summary's hardware percentages of\n"
    "                          the command (main), its descendants and both divide by N (default: all)\n"
    "      --gpus UUID,...     GPUs whose utilization the summary's GPU percentages count (default: all)\n"
    "  -h, --help              this text\n"
    "  -V, --version           the version\n"
    "\n"
    "\n"
    "Streaming (only when SENTINEL_API_TOKEN is set; without it no connection is made):\n"
    "  SENTINEL_API_TOKEN      register the run at the Sentinel API and upload gzipped CSV batches to S3\n"
    "                          (taken out of the environment: the command does not inherit it)\n"
    "  SENTINEL_API_URL        API base (default https://api.sentinel.sparecores.net)\n"
    "  TRACKER_UPLOAD_INTERVAL seconds between batches, fractional allowed (default 60)\n"
    "  TRACKER_FINISH_TIMEOUT  the most seconds the end of the run waits for uploads and the API (default 10)\n"
    "  AWS_ENDPOINT_URL_S3     S3 endpoint (path style); AWS_REGION the bucket's region\n"
    "  Batches that cannot be uploaded are kept in $XDG_STATE_HOME/resource-tracker\n"
    "  (~/.local/state/resource-tracker) until they are sent.\n"
    "\n"
    "OTLP (with --otlp or an endpoint variable): OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT, _HEADERS\n"
    "  (k=v,... percent-encoded), _COMPRESSION (gzip, none), _TIMEOUT (ms); OTEL_RESOURCE_ATTRIBUTES,\n"
    "  OTEL_SERVICE_NAME. The last push waits at most TRACKER_FINISH_TIMEOUT seconds (default 10).\n"
    "\n"
    "Precedence: command line > environment > config file > built-in default.\n"
    "Samples are written as one JSON object or CSV row per interval, flushed at once.\n"
    "See resource-tracker(1) for the fields, the config file and the exit status.\n";

enum {
    OPT_TAG = 900, OPT_SUMMARY, OPT_REPORT, OPT_HISTORY, OPT_CGROUP, OPT_WAIT_ALL, OPT_PROMETHEUS, OPT_TEXTFILE,
    OPT_OTLP, OPT_OTLP_INTERVAL, OPT_EXPECTED_CORES, OPT_GPUS, OPT_META = 1000
};

int cli_check_interval(double v)
{
    return (isfinite(v) && v >= 0.01 && v <= 86400.0) ? 0 : -1;
}

int cli_parse_interval(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || cli_check_interval(v) < 0)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_pid(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v <= 0 || v > INT_MAX)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_format(const char *s, rt_format *out)
{
    if (strcmp(s, "json") == 0 || strcmp(s, "jsonl") == 0)
        *out = RT_FORMAT_JSON;
    else if (strcmp(s, "csv") == 0)
        *out = RT_FORMAT_CSV;
    else
        return -1;
    return 0;
}

int cli_parse_cgroup(const char *s, bool *off)
{
    if (strcmp(s, "auto") == 0)
        *off = false;
    else if (strcmp(s, "off") == 0)
        *off = true;
    else
        return -1;
    return 0;
}

int cli_check_tag(const char *s)
{
    const char *eq = strchr(s, '=');
    return (eq && eq != s) ? 0 : -1;
}

int cli_add_tag(cli_layer *l, const char *tag)
{
    char **t = realloc(l->tags, (l->ntags + 1) * sizeof *t);
    if (!t)
        return -1;
    l->tags = t;
    if (!(t[l->ntags] = strdup(tag)))
        return -1;
    l->ntags++;
    return 0;
}

/* Replaces *slot with a heap copy of v. Returns 0 or -1 (no memory). */
static int set_str(char **slot, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return -1;
    free(*slot);
    *slot = c;
    return 0;
}

#define USAGE_ERR(...)                                                                                                 \
    do {                                                                                                               \
        snprintf(err, errlen, __VA_ARGS__);                                                                            \
        return -1;                                                                                                     \
    } while (0)

int cli_parse_args(cli_options *o, int argc, char **argv, char *err, size_t errlen)
{
    struct option longopts[22 + META_COUNT];
    static const struct option base[] = {
        {"pid", required_argument, NULL, 'p'},    {"interval", required_argument, NULL, 'i'},
        {"config", required_argument, NULL, 'c'}, {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
        {"tag", required_argument, NULL, OPT_TAG},     {"summary", no_argument, NULL, OPT_SUMMARY},
        {"report", required_argument, NULL, OPT_REPORT}, {"history", required_argument, NULL, OPT_HISTORY},
        {"cgroup", required_argument, NULL, OPT_CGROUP}, {"wait-all", no_argument, NULL, OPT_WAIT_ALL},
        {"prometheus", required_argument, NULL, OPT_PROMETHEUS},
        {"prometheus-textfile", required_argument, NULL, OPT_TEXTFILE},
        {"otlp", required_argument, NULL, OPT_OTLP},   {"otlp-interval", required_argument, NULL, OPT_OTLP_INTERVAL},
        {"expected-cores", required_argument, NULL, OPT_EXPECTED_CORES}, {"gpus", required_argument, NULL, OPT_GPUS},
    };
    size_t n = 0;
    for (; n < sizeof base / sizeof base[0]; n++)
        longopts[n] = base[n];
    for (int i = 0; i < META_COUNT; i++)
        longopts[n++] = (struct option){cli_meta_fields[i].flag, required_argument, NULL, OPT_META + i};
    longopts[n] = (struct option){NULL, 0, NULL, 0};

    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+:p:i:c:f:o:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (cli_parse_pid(optarg, &o->args.pid) < 0)
                USAGE_ERR("--pid: '%s' is not a process id (a positive integer)", optarg);
            o->args.pid_set = true;
            break;
        case 'i':
            if (cli_parse_interval(optarg, &o->args.interval) < 0)
                USAGE_ERR("--interval: '%s' is not a number of seconds from 0.01 to 86400", optarg);
            o->args.interval_set = true;
            break;
        case 'c':
            if (set_str(&o->config_path, optarg) < 0)
                USAGE_ERR("out of memory");
            o->config_explicit = true;
            break;
        case 'f':
            if (cli_parse_format(optarg, &o->args.format) < 0)
                USAGE_ERR("--format: '%s' is not a format (json or csv)", optarg);
            o->args.format_set = true;
            break;
        case 'o':
            if (!*optarg)
                USAGE_ERR("--output: the file name is empty");
            if (set_str(&o->args.output, optarg) < 0)
                USAGE_ERR("out of memory");
            o->args.output_set = true;
            break;
        case 'q':
            o->args.quiet = o->args.quiet_set = true;
            break;
        case 'h':
            o->help = true;
            return 0;
        case 'V':
            o->version = true;
            return 0;
        case OPT_SUMMARY:
            o->args.summary = o->args.summary_set = true;
            break;
        case OPT_CGROUP:
            if (cli_parse_cgroup(optarg, &o->args.cgroup_off) < 0)
                USAGE_ERR("--cgroup: '%s' is not a choice (auto or off)", optarg);
            o->args.cgroup_set = true;
            break;
        case OPT_WAIT_ALL:
            o->args.wait_all = o->args.wait_all_set = true;
            break;
        case OPT_REPORT:
        case OPT_HISTORY:
            if (!*optarg)
                USAGE_ERR("--%s: the file name is empty", c == OPT_REPORT ? "report" : "history");
            if (set_str(c == OPT_REPORT ? &o->args.report : &o->args.history, optarg) < 0)
                USAGE_ERR("out of memory");
            break;
        case OPT_PROMETHEUS:
        case OPT_TEXTFILE:
        case OPT_OTLP: {
            char **slot = c == OPT_PROMETHEUS ? &o->args.prometheus
                          : c == OPT_TEXTFILE ? &o->args.prometheus_textfile
                                              : &o->args.otlp;
            if (!*optarg)
                USAGE_ERR("--%s: the value is empty",
                          c == OPT_PROMETHEUS ? "prometheus" : c == OPT_TEXTFILE ? "prometheus-textfile" : "otlp");
            if (set_str(slot, optarg) < 0)
                USAGE_ERR("out of memory");
            break;
        }
        case OPT_OTLP_INTERVAL:
            if (cli_parse_interval(optarg, &o->args.otlp_interval) < 0)
                USAGE_ERR("--otlp-interval: '%s' is not a number of seconds from 0.01 to 86400", optarg);
            o->args.otlp_interval_set = true;
            break;
        case OPT_EXPECTED_CORES:
            if (cli_parse_expected_cores(optarg, &o->args.expected_cores) < 0)
                USAGE_ERR("--expected-cores: '%s' is not a number of cores above 0", optarg);
            o->args.expected_cores_set = true;
            break;
        case OPT_GPUS: {
            char **list;
            size_t count;
            const char *why;
            if (cli_parse_gpu_list(optarg, &list, &count, &why) < 0)
                USAGE_ERR("--gpus: %s: '%s'", why, optarg);
            cli_gpu_list_free(list, count);
            if (set_str(&o->args.gpus, optarg) < 0)
                USAGE_ERR("out of memory");
            break;
        }
        case OPT_TAG:
            if (cli_check_tag(optarg) < 0)
                USAGE_ERR("--tag: '%s' is not KEY=VALUE", optarg);
            if (cli_add_tag(&o->args, optarg) < 0)
                USAGE_ERR("out of memory");
            break;
        case ':':
            USAGE_ERR("option '%s' needs a value", argv[optind - 1]);
        case '?':
            if (optopt > 0 && optopt < 256)
                USAGE_ERR("unknown option '-%c' (see --help)", optopt);
            USAGE_ERR("unknown option '%s' (see --help)", argv[optind - 1]);
        default:
            if (c >= OPT_META && c < OPT_META + META_COUNT) {
                if (set_str(&o->args.meta[c - OPT_META], optarg) < 0)
                    USAGE_ERR("out of memory");
                break;
            }
            USAGE_ERR("unknown option (see --help)");
        }
    }
    if (optind >= argc)
        return 0;
    bool after_dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    static const struct {
        const char *name;
        cli_command cmd;
    } subs[] = {{"summary", CMD_SUMMARY}, {"recommend", CMD_RECOMMEND}, {"report", CMD_REPORT}, {"info", CMD_INFO},
                 {"history", CMD_HISTORY}};
    if (!after_dashdash) {
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
            if (strcmp(argv[optind], subs[i].name) == 0) {
                o->cmd = subs[i].cmd;
                o->sub_args = argv + optind + 1;
                o->nsub = argc - optind - 1;
                return 0;
            }
        }
    }
    o->command = argv + optind;
    return 0;
}

int cli_merge(cli_options *o, char *err, size_t errlen)
{
    const cli_layer *a = &o->args, *f = &o->file;
    o->pid = a->pid_set ? a->pid : f->pid_set ? f->pid : 0;
    o->interval = a->interval_set ? a->interval : f->interval_set ? f->interval : 1.0;
    o->format = a->format_set ? a->format : f->format_set ? f->format : RT_FORMAT_JSON;
    o->output = a->output_set ? a->output : f->output_set ? f->output : NULL;
    o->quiet = a->quiet_set ? a->quiet : f->quiet_set ? f->quiet : false;
    o->summary = a->summary_set ? a->summary : f->summary_set ? f->summary : false;
    o->report = a->report ? a->report : f->report;
    o->cgroup_off = a->cgroup_set ? a->cgroup_off : f->cgroup_set ? f->cgroup_off : false;
    o->wait_all = a->wait_all_set ? a->wait_all : f->wait_all_set ? f->wait_all : false;
    const char *hist_env = getenv("TRACKER_HISTORY");
    o->history = a->history ? a->history : (hist_env && *hist_env) ? hist_env : f->history;
    for (int i = 0; i < META_COUNT; i++) {
        const char *e = getenv(cli_meta_fields[i].env);
        o->meta[i] = a->meta[i] ? a->meta[i] : (e && *e) ? e : f->meta[i];
    }
    if (o->pid && o->command)
        USAGE_ERR("--pid and a command to run cannot be combined: the command's own tree is tracked");
    if (a->wait_all_set && !o->command) /* from the config file it applies to wrapped runs only */
        USAGE_ERR("--wait-all needs a command to run: it waits for the command's whole job");
    /* files written at the end are refused now, before anything starts, when they are links
     * planted in a shared directory (secure.c) */
    if (o->report && cli_path_refused(o->report))
        USAGE_ERR("--report: refusing '%s': %s", o->report, cli_refused_why());
    if (o->history && cli_path_refused(o->history))
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

/* Parses a number of seconds in (0, max]. Returns 0 and *out, or -1. */
static int parse_secs(const char *s, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(v > 0 && v <= max))
        return -1;
    *out = v;
    return 0;
}

/* The streaming settings (docs/contracts.md §4), read only when SENTINEL_API_TOKEN is set:
 * without it nothing of them matters and no connection is made. The spill directory follows
 * the XDG base directory rules. Returns 0, or -1 with "VARIABLE: problem" in err. */
static int stream_env(cli_options *o, char *err, size_t errlen)
{
    cli_free_secret(o->sentinel_token);
    o->sentinel_token = cli_take_secret("SENTINEL_API_TOKEN");
    o->upload_interval = 60.0;
    o->finish_timeout = 10.0;
    const char *v = env_value("TRACKER_FINISH_TIMEOUT"); /* the OTLP exporter's end too */
    if (v && parse_secs(v, 3600.0, &o->finish_timeout) < 0)
        USAGE_ERR("TRACKER_FINISH_TIMEOUT: not a number of seconds above 0, at most 3600: '%s'", v);
    if (!o->sentinel_token)
        return 0;
    o->sentinel_url = env_value("SENTINEL_API_URL");
    if (o->sentinel_url && strncmp(o->sentinel_url, "http://", 7) != 0 && strncmp(o->sentinel_url, "https://", 8) != 0)
        USAGE_ERR("SENTINEL_API_URL: not an http:// or https:// URL: '%s'", o->sentinel_url);
    o->s3_endpoint = env_value("AWS_ENDPOINT_URL_S3");
    if (o->s3_endpoint && strncmp(o->s3_endpoint, "http://", 7) != 0 && strncmp(o->s3_endpoint, "https://", 8) != 0)
        USAGE_ERR("AWS_ENDPOINT_URL_S3: not an http:// or https:// URL: '%s'", o->s3_endpoint);
    o->aws_region = env_value("AWS_REGION");
    v = env_value("TRACKER_UPLOAD_INTERVAL");
    if (v && (parse_secs(v, 86400.0, &o->upload_interval) < 0 || o->upload_interval < 0.01))
        USAGE_ERR("TRACKER_UPLOAD_INTERVAL: not a number of seconds from 0.01 to 86400: '%s'", v);
    const char *state = env_value("XDG_STATE_HOME"), *home = env_value("HOME");
    char dir[4096];
    int n = -1;
    if (state && state[0] == '/') /* a relative one is invalid (XDG): ignored */
        n = snprintf(dir, sizeof dir, "%s/resource-tracker", state);
    else if (home)
        n = snprintf(dir, sizeof dir, "%s/.local/state/resource-tracker", home);
    free(o->spill_dir);
    o->spill_dir = NULL;
    if (n > 0 && (size_t)n < sizeof dir && !(o->spill_dir = strdup(dir)))
        USAGE_ERR("out of memory");
    return 0;
}

int cli_library_env(cli_options *o, char *err, size_t errlen)
{
    o->proc_root = env_value("TRACKER_PROC_ROOT");
    o->sys_root = env_value("TRACKER_SYS_ROOT");
    o->nvml_library = env_value("TRACKER_NVML_LIBRARY");
    o->cloud_metadata_url = env_value("TRACKER_CLOUD_METADATA_URL");
    o->keeper_url = env_value("TRACKER_KEEPER_URL");
    const char *d = env_value("TRACKER_CLOUD_DISCOVERY");
    o->cloud_disabled = d && discovery_off(d);
    o->pss_max_age_secs = 30.0;
    const char *age = env_value("TRACKER_PSS_MAX_AGE");
    if (age) {
        char *end;
        errno = 0;
        double v = strtod(age, &end);
        if (errno || end == age || *end != '\0' || !(v >= 0 && v <= 86400))
            USAGE_ERR("TRACKER_PSS_MAX_AGE: not a number of seconds from 0 to 86400: '%s'", age);
        o->pss_max_age_secs = v;
    }
    /* streaming belongs to tracking runs: a subcommand is not refused over its settings (and
     * starts no command that could inherit the token) */
    return o->cmd == CMD_TRACK ? stream_env(o, err, errlen) : 0;
}

const char *cli_history_path(cli_options *o, const char *flag)
{
    if (flag && *flag)
        return flag;
    const char *e = env_value("TRACKER_HISTORY");
    if (e)
        return e;
    char err[1024];
    if (cli_load_config(o, err, sizeof err) < 0) {
        cli_say("%s", err);
        return NULL;
    }
    if (o->file.history)
        return o->file.history;
    cli_say("no run history named: give --history FILE, set TRACKER_HISTORY, or set [history] path in the config");
    return NULL;
}

void cli_layer_free(cli_layer *l)
{
    free(l->output);
    free(l->report);
    free(l->history);
    free(l->prometheus);
    free(l->prometheus_textfile);
    free(l->otlp);
    free(l->gpus);
    for (int i = 0; i < META_COUNT; i++)
        free(l->meta[i]);
    for (size_t i = 0; i < l->ntags; i++)
        free(l->tags[i]);
    free(l->tags);
    memset(l, 0, sizeof *l);
}

void cli_options_free(cli_options *o)
{
    cli_layer_free(&o->args);
    cli_layer_free(&o->file);
    free(o->config_path);
    free(o->spill_dir);
    free(o->tags);
    cli_export_options_free(o);
    cli_gpu_list_free(o->gpu_list, o->ngpus);
    cli_free_secret(o->sentinel_token);
    memset(o, 0, sizeof *o);
}
