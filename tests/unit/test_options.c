/* test_options.c - the command line: flags, values checked, subcommands, the wrapped command,
 * and the precedence command line > environment > config file > default. */
#include "unit.h"
#include <stdlib.h>

#include "cli.h"

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
    expect_usage_error("--format: 'xml' is not a format (json or csv)", 3, "rt", "-f", "xml");
    expect_usage_error("--pid: '-5' is not a process id", 3, "rt", "-p", "-5");
    expect_usage_error("--pid: '12x'", 3, "rt", "--pid", "12x");
    expect_usage_error("--tag: 'novalue' is not KEY=VALUE", 3, "rt", "--tag", "novalue");
    expect_usage_error("--tag: '=v'", 3, "rt", "--tag", "=v");
    expect_usage_error("unknown option '--bogus'", 2, "rt", "--bogus", NULL);
    expect_usage_error("unknown option '-z'", 2, "rt", "-z", NULL);
    expect_usage_error("option '-i' needs a value", 2, "rt", "-i", NULL);
    expect_usage_error("option '--output' needs a value", 2, "rt", "--output", NULL);
    expect_usage_error("--output: the file name is empty", 3, "rt", "-o", "");
    expect_usage_error("--cgroup: 'on' is not a choice (auto or off)", 3, "rt", "--cgroup", "on");
    expect_usage_error("option '--cgroup' needs a value", 2, "rt", "--cgroup", NULL);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flags), cmocka_unit_test(bad_values), cmocka_unit_test(commands_and_subcommands),
        cmocka_unit_test(precedence), cmocka_unit_test(pid_with_command_rejected),
        cmocka_unit_test(cgroup_and_wait_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
