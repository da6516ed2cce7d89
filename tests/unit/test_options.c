/* test_options.c - the command line: flags, values checked, subcommands, the wrapped command,
 * and the precedence command line > environment > config file > default. */
#include "unit.h"
#include <stdlib.h>

#include "cli.h"
#include "settings.h"

static int parse_argv(cli_options *o, char *err, size_t n, int argc, ...)
{
    static char *argv[32];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    argv[argc] = NULL;
    memset(o, 0, sizeof *o);
    return cli_parse_args(o, argc, argv, err, n);
}

static void flags(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 10, "rt", "-i", "0.25", "-f", "csv", "-o", "-", "--job-name", "j",
                                "--tag=a=b"), 0);
    assert_true(o.args.interval == 0.25);
    assert_true(o.args.format == RT_FORMAT_CSV);
    assert_string_equal(o.args.output, "-");
    assert_string_equal(o.args.meta[META_JOB_NAME], "j");
    assert_int_equal(o.args.ntags, 1);
    assert_null(o.command);
    cli_options_free(&o);
}

static void expect_usage_error(const char *want, int argc, char *a0, char *a1, char *a2)
{
    cli_options o;
    char err[256];
    int rc = parse_argv(&o, err, sizeof err, argc, a0, a1, a2);
    cli_options_free(&o);
    assert_int_equal(rc, -1);
    if (!strstr(err, want))
        fail_msg("'%s' lacks '%s'", err, want);
}

static void bad_values(void **state)
{
    (void)state;
    expect_usage_error("--interval: '0' is not a number of seconds from 0.01 to 86400", 3, "rt", "-i", "0");
    expect_usage_error("--interval: 'abc'", 3, "rt", "--interval", "abc");
    expect_usage_error("--interval: '86401'", 3, "rt", "-i", "86401");
    expect_usage_error("--interval: 'nan'", 3, "rt", "-i", "nan");
    expect_usage_error("--format: 'xml' is not a format (json, csv or json-rs)", 3, "rt", "-f", "xml");
    expect_usage_error("--pid: '-5' is not a process id", 3, "rt", "-p", "-5");
    expect_usage_error("--pid: '12x'", 3, "rt", "--pid", "12x");
    expect_usage_error("--tag: 'novalue' is not KEY=VALUE", 3, "rt", "--tag", "novalue");
    expect_usage_error("unknown option '--outptu'; did you mean --output? (see --help)", 3, "rt", "--outptu", "x");
    expect_usage_error("unknown option '--intervl=1'; did you mean --interval? (see --help)", 2, "rt", "--intervl=1",
                       NULL);
    expect_usage_error("--tag: '=v'", 3, "rt", "--tag", "=v");
    expect_usage_error("unknown option '--bogus'", 2, "rt", "--bogus", NULL);
    expect_usage_error("unknown option '-z'", 2, "rt", "-z", NULL);
    expect_usage_error("option '-i' needs a value", 2, "rt", "-i", NULL);
    expect_usage_error("option '--output' needs a value", 2, "rt", "--output", NULL);
    expect_usage_error("--output: the file name is empty", 3, "rt", "-o", "");
    expect_usage_error("--cgroup: 'on' is not a choice (auto or off)", 3, "rt", "--cgroup", "on");
    expect_usage_error("option '--cgroup' needs a value", 2, "rt", "--cgroup", NULL);
}

/* getopt_long's spellings, which the one reader of every command keeps: a long flag by a
 * prefix only it has, short flags in one word ("-qi0.5"), a short flag's value in its word. */
static void abbreviations_and_clusters(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 5, "rt", "--interv", "0.5", "--job-n=j", "true"), 0);
    assert_true(o.args.interval == 0.5);
    assert_string_equal(o.args.meta[META_JOB_NAME], "j");
    assert_string_equal(o.command[0], "true");
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "-qi0.25", "true"), 0);
    assert_true(o.args.quiet_set && o.args.quiet);
    assert_true(o.args.interval == 0.25);
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 4, "rt", "-qi", "2", "true"), 0);
    assert_true(o.args.interval == 2);
    cli_options_free(&o);
    expect_usage_error("option '--p' is ambiguous: --pid, --project-name, --per-node, --prometheus", 2, "rt", "--p", NULL);
    expect_usage_error("option '--pro' is ambiguous: --project-name, --prometheus, --prometheus-textfile", 2, "rt",
                       "--pro=1", NULL);
    expect_usage_error("unknown option '-z' (see --help)", 2, "rt", "-qz", NULL);
    expect_usage_error("option '-i' needs a value", 2, "rt", "-qi", NULL);
    expect_usage_error("option '--quiet' takes no value (given '--qu=1')", 2, "rt", "--qu=1", NULL);
    /* a subcommand reads its rows the same way */
    char *sub[] = {"--js", "-h"};
    o = (cli_options){.sub_args = sub, .nsub = 2};
    cli_args a;
    cli_args_init(&a, &o, CMD_HISTORY, CLI_ARGS_NO_WORDS);
    assert_int_equal(cli_args_next(&a), CLI_ARG_OPTION);
    assert_string_equal(a.opt->flag, "json");
    assert_int_equal(cli_args_next(&a), CLI_ARG_OPTION);
    assert_int_equal(a.opt->opt, CLI_O_HELP);
    assert_int_equal(cli_args_next(&a), CLI_ARG_END);
    char *cluster[] = {"-hz"};
    o = (cli_options){.sub_args = cluster, .nsub = 1};
    cli_args_init(&a, &o, CMD_HISTORY, CLI_ARGS_NO_WORDS);
    assert_int_equal(cli_args_next(&a), CLI_ARG_OPTION);
    assert_int_equal(cli_args_next(&a), CLI_ARG_ERROR);
    assert_string_equal(a.err, "history: unknown option '-z' (see resource-tracker history --help)");
}

/* --cgroup and --wait-all: parsed, merged over the config file (default auto, no wait), and
 * --wait-all refused without a command (from the config file it is ignored there). */
static void cgroup_and_wait_all(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_false(o.cgroup_off); /* auto by default */
    assert_false(o.wait_all);
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 5, "rt", "--cgroup", "off", "--wait-all", "true"), 0);
    assert_true(o.args.cgroup_set && o.args.cgroup_off && o.args.wait_all);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_true(o.cgroup_off && o.wait_all);
    cli_options_free(&o);
    /* the file says off and wait_all; the command line says auto */
    assert_int_equal(parse_argv(&o, err, sizeof err, 4, "rt", "--cgroup=auto", "sleep", "1"), 0);
    const char *doc = "[tracker]\ncgroup = 'off'\nwait_all = true\n";
    assert_int_equal(cli_parse_config(&o.file, "c.toml", doc, strlen(doc), err, sizeof err), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_false(o.cgroup_off);
    assert_true(o.wait_all);
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "--wait-all"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "--wait-all needs a command"));
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 1, "rt"), 0);
    assert_int_equal(cli_parse_config(&o.file, "c.toml", doc, strlen(doc), err, sizeof err), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0); /* the file's wait_all: no error */
    cli_options_free(&o);
}

static void commands_and_subcommands(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 5, "rt", "-q", "--", "python3", "-c"), 0);
    assert_string_equal(o.command[0], "python3");
    assert_string_equal(o.command[1], "-c"); /* options after the command are the command's */
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "sleep", "1"), 0);
    assert_string_equal(o.command[0], "sleep");
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "summary", "run.jsonl"), 0);
    assert_int_equal(o.cmd, CMD_SUMMARY);
    assert_int_equal(o.nsub, 1);
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "--", "info"), 0);
    assert_int_equal(o.cmd, CMD_TRACK); /* after --, "info" is a command to run */
    assert_string_equal(o.command[0], "info");
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "--help"), 0);
    assert_true(o.help);
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "-V"), 0);
    assert_true(o.version);
    cli_options_free(&o);
}

static void precedence(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "--team", "cli-team"), 0);
    const char *doc = "[job]\nname = 'file-job'\nteam = 'file-team'\nenv = 'file-env'\ntags = ['k=file', 'x=1']\n"
                      "[tracker]\ninterval_secs = 5\n";
    assert_int_equal(cli_parse_config(&o.file, "c.toml", doc, strlen(doc), err, sizeof err), 0);
    assert_int_equal(cli_add_tag(&o.args, "k=cli"), 0);
    setenv("TRACKER_JOB_NAME", "env-job", 1);
    setenv("TRACKER_TEAM", "env-team", 1);
    setenv("TRACKER_ENV", "", 1); /* empty: as if unset */
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_string_equal(o.meta[META_JOB_NAME], "env-job");    /* env > file */
    assert_string_equal(o.meta[META_TEAM], "cli-team");       /* cli > env */
    assert_string_equal(o.meta[META_ENV], "file-env");        /* file when env is empty */
    assert_null(o.meta[META_STAGE_NAME]);
    assert_true(o.interval == 5.0);                            /* file > default */
    assert_true(o.format == RT_FORMAT_JSON);                   /* default */
    assert_int_equal(o.ntags, 2);
    assert_string_equal(o.tags[0], "k=cli");                   /* same key: the command line wins */
    assert_string_equal(o.job.job_name, "env-job");
    unsetenv("TRACKER_JOB_NAME");
    unsetenv("TRACKER_TEAM");
    unsetenv("TRACKER_ENV");
    cli_options_free(&o);
}

/* The Rust tool's spellings: -n NAME, TRACKER_OUTPUT, TRACKER_QUIET (true or false as it takes
 * them, and 1/0, yes/no, on/off in any case); anything else in TRACKER_QUIET is refused. */
static void rust_tool_spellings(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "-n", "nightly"), 0);
    assert_string_equal(o.args.meta[META_JOB_NAME], "nightly");
    cli_options_free(&o);
    static const char *const on[] = {"true", "TRUE", "1", "yes", "On"}, *const off[] = {"false", "False", "0", "no", "OFF"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        for (int want = 1; want >= 0; want--) {
            assert_int_equal(parse_argv(&o, err, sizeof err, 1, "rt"), 0);
            setenv("TRACKER_QUIET", want ? on[i] : off[i], 1);
            setenv("TRACKER_OUTPUT", "env.jsonl", 1);
            assert_int_equal(cli_merge(&o, err, sizeof err), 0);
            assert_int_equal(o.quiet, want);
            assert_string_equal(o.output, "env.jsonl");
            cli_options_free(&o);
        }
    }
    /* the command line wins over both */
    assert_int_equal(parse_argv(&o, err, sizeof err, 3, "rt", "-o", "cli.jsonl"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_string_equal(o.output, "cli.jsonl");
    cli_options_free(&o);
    setenv("TRACKER_QUIET", "maybe", 1);
    assert_int_equal(parse_argv(&o, err, sizeof err, 1, "rt"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), -1);
    assert_string_equal(err, "TRACKER_QUIET: not true or false: 'maybe'");
    cli_options_free(&o);
    unsetenv("TRACKER_QUIET");
    unsetenv("TRACKER_OUTPUT");
}

/* --prometheus's ADDR:PORT: loopback unless told otherwise; IPv6 bracketed; ports 0-65535. */
static void listen_values(void **state)
{
    (void)state;
    char a[64];
    int port = -1;
    assert_int_equal(cli_parse_listen("127.0.0.1:9101", a, sizeof a, &port), 0);
    assert_string_equal(a, "127.0.0.1");
    assert_int_equal(port, 9101);
    assert_int_equal(cli_parse_listen(":0", a, sizeof a, &port), 0);
    assert_string_equal(a, "127.0.0.1");
    assert_int_equal(port, 0);
    assert_int_equal(cli_parse_listen("9100", a, sizeof a, &port), 0);
    assert_string_equal(a, "127.0.0.1");
    assert_int_equal(cli_parse_listen("localhost:65535", a, sizeof a, &port), 0);
    assert_int_equal(port, 65535);
    assert_int_equal(cli_parse_listen("[::1]:80", a, sizeof a, &port), 0);
    assert_string_equal(a, "::1");
    assert_int_equal(cli_parse_listen("0.0.0.0:80", a, sizeof a, &port), 0);
    assert_string_equal(a, "0.0.0.0");
    const char *bad[] = {"", ":", "x:80", "::1:80", "[::1]", "1.2.3.4:65536", "1.2.3.4:-1", "1.2.3.4:8o",
                         "1.2.3.4:123456", "[::1:80", "example.com:80", "1.2.3:80", "[]:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli_parse_listen(bad[i], a, sizeof a, &port) == 0)
            fail_msg("accepted '%s'", bad[i]);
}

/* OTEL_* lists: trimmed, percent-decoded, empty members skipped; broken ones named. */
static void otel_lists(void **state)
{
    (void)state;
    cli_pairs p;
    char err[256];
    assert_int_equal(cli_parse_otel_list(" a = 1 ,, b=x%2Cy%3D ,c=", false, &p, err, sizeof err), 0);
    assert_int_equal(p.count, 3);
    assert_string_equal(p.kv[0].key, "a");
    assert_string_equal(p.kv[0].value, "1");
    assert_string_equal(p.kv[1].value, "x,y=");
    assert_string_equal(p.kv[2].key, "c");
    assert_string_equal(p.kv[2].value, "");
    cli_pairs_free(&p);
    assert_int_equal(cli_parse_otel_list("Authorization=Bearer%20abc,x-team=ml", true, &p, err, sizeof err), 0);
    assert_string_equal(p.kv[0].value, "Bearer abc");
    cli_pairs_free(&p);
    assert_int_equal(cli_parse_otel_list("", false, &p, err, sizeof err), 0);
    assert_int_equal(p.count, 0);
    cli_pairs_free(&p);
    struct {
        const char *in;
        bool headers;
        const char *want;
    } bad[] = {{"novalue", false, "'novalue' is not KEY=VALUE"}, {"=v", false, "a member without a key"},
               {"a=%4", false, "broken %XX"}, {"a=%zz", false, "broken %XX"}, {"a=%00", false, "broken %XX"},
               {"bad name=v", true, "the key of member 1 is not a header name"},
               {"a=1,Authorization: Bearer sekrit", true, "member 2 is not KEY=VALUE (not shown"},
               {"Authorization: Bearer sekrit%zz=x", true, "the key of member 1: a broken %XX"}, {"h=a%0Db", true, "control character"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(cli_parse_otel_list(bad[i].in, bad[i].headers, &p, err, sizeof err), -1);
        assert_null(p.kv);
        if (!strstr(err, bad[i].want))
            fail_msg("'%s': '%s' lacks '%s'", bad[i].in, err, bad[i].want);
        if (bad[i].headers && strstr(err, "sekrit"))
            fail_msg("a header's value in '%s'", err);
    }
}

/* The merged OTLP settings: /v1/metrics appended to the base endpoint, the signal-specific one
 * used as it is, headers as "Name: value", OTEL_SERVICE_NAME over the attributes' service.name,
 * --otlp over the environment over [export]. */
static void otlp_settings(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 4, "rt", "--otlp", "http://127.0.0.1:4318/", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_string_equal(o.otlp_url, "http://127.0.0.1:4318/v1/metrics");
    assert_true(o.otlp_interval == 10.0 && o.otlp_timeout == 10.0 && !o.otlp_no_gzip);
    cli_options_free(&o);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/base", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret", 1);
    setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=a,deployment.environment=ci", 1);
    setenv("OTEL_SERVICE_NAME", "train", 1);
    setenv("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "none", 1);
    setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", 1);
    setenv("OTEL_METRIC_EXPORT_INTERVAL", "500", 1);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_string_equal(o.otlp_url, "http://127.0.0.1:9/base/v1/metrics");
    assert_string_equal(o.otlp_headers[0], "api-key: s=cret");
    assert_null(o.otlp_headers[1]);
    assert_int_equal(o.otlp_resource.count, 2);
    assert_string_equal(o.otlp_resource.kv[0].key, "service.name");
    assert_string_equal(o.otlp_resource.kv[0].value, "train");
    assert_true(o.otlp_no_gzip && o.otlp_timeout == 2.5 && o.otlp_interval == 0.5);
    cli_options_free(&o);
    setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://127.0.0.1:9/exact", 1);
    assert_int_equal(parse_argv(&o, err, sizeof err, 4, "rt", "--otlp-interval", "3", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_string_equal(o.otlp_url, "http://127.0.0.1:9/exact");
    assert_true(o.otlp_interval == 3.0);
    cli_options_free(&o);
    /* asked for only by the environment (perhaps the wrapped program's): a problem there turns
     * OTLP off with a warning, and the job runs; with --otlp it is a usage error */
    setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", 1);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_null(o.otlp_url);
    assert_non_null(strstr(o.otlp_warning, "OTEL_EXPORTER_OTLP_TIMEOUT: not a number of milliseconds"));
    cli_options_free(&o);
    assert_int_equal(parse_argv(&o, err, sizeof err, 4, "rt", "--otlp", "http://127.0.0.1:9", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "OTEL_EXPORTER_OTLP_TIMEOUT: not a number of milliseconds"));
    cli_options_free(&o);
    const char *vars[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_RESOURCE_ATTRIBUTES",
                          "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "OTEL_EXPORTER_OTLP_TIMEOUT",
                          "OTEL_METRIC_EXPORT_INTERVAL", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    /* the environment's endpoint unusable (no scheme: meant for a gRPC client) and the config
     * file naming one: the config file's is used, with a warning */
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317", 1);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "true"), 0);
    o.file.otlp = strdup("http://127.0.0.1:4318");
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_string_equal(o.otlp_url, "http://127.0.0.1:4318/v1/metrics");
    assert_non_null(strstr(o.otlp_warning, "OTEL_EXPORTER_OTLP_ENDPOINT: not an http:// or https:// URL"));
    assert_non_null(strstr(o.otlp_warning, "to [export] otlp instead"));
    cli_options_free(&o);
    unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
    /* without any endpoint the OTEL_* settings are not looked at, and nothing is pushed */
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "broken", 1);
    setenv("OTEL_METRIC_EXPORT_INTERVAL", "abc", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
    assert_int_equal(parse_argv(&o, err, sizeof err, 2, "rt", "true"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), 0);
    assert_null(o.otlp_url);
    assert_string_equal(o.otlp_warning, "");
    cli_options_free(&o);
    unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
    unsetenv("OTEL_METRIC_EXPORT_INTERVAL");
    unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
}

static void pid_with_command_rejected(void **state)
{
    (void)state;
    cli_options o;
    char err[256];
    assert_int_equal(parse_argv(&o, err, sizeof err, 5, "rt", "-p", "1", "sleep", "1"), 0);
    assert_int_equal(cli_merge(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot be combined"));
    cli_options_free(&o);
}

/* -o DIR (an existing directory without its '/'): the line a file that cannot be opened gets,
 * and a hint that DIR/ is what writes into it; --report's check gets no such hint (issue 70). */
static void output_directory_hint(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-unit-odir-XXXXXX", slashed[64], err[512], want[256];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(cli_path_check("output", dir, CLI_WRITE_FILE_OR_DIR, err, sizeof err), -1);
    snprintf(want, sizeof want, "--output: cannot open '%s': Is a directory; to write into it, end it with '/': -o %s/",
             dir, dir);
    assert_string_equal(err, want);
    snprintf(slashed, sizeof slashed, "%s/", dir);
    assert_int_equal(cli_path_check("output", slashed, CLI_WRITE_FILE_OR_DIR, err, sizeof err), 0);
    assert_int_equal(cli_path_check("report", dir, CLI_WRITE_FILE, err, sizeof err), -1);
    assert_null(strstr(err, "end it with"));
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flags), cmocka_unit_test(abbreviations_and_clusters), cmocka_unit_test(bad_values), cmocka_unit_test(commands_and_subcommands),
        cmocka_unit_test(precedence), cmocka_unit_test(pid_with_command_rejected),
        cmocka_unit_test(cgroup_and_wait_all), cmocka_unit_test(listen_values), cmocka_unit_test(otel_lists),
        cmocka_unit_test(otlp_settings), cmocka_unit_test(rust_tool_spellings), cmocka_unit_test(output_directory_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
