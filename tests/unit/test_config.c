/* test_config.c - the config file's keys: every metadata key, tags in both shapes, types and
 * ranges checked, errors named with FILE:LINE:COL; unknown keys and tables are warnings naming
 * FILE:LINE:COL and the known keys, the rest of the file still read. */
#include "unit.h"
#include <unistd.h>

#include "cli.h"

static int parse(const char *doc, cli_layer *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    return cli_parse_config(l, "conf.toml", doc, strlen(doc), err, errlen);
}

static void full_config(void **state)
{
    (void)state;
    const char *doc = "[job]\n"
                      "name = 'train'\npid = 4242\nproject_name = 'p'\nstage_name = 's'\ntask_name = 't'\n"
                      "team = 'ml'\nenv = 'prod'\nlanguage = 'python'\norchestrator = 'slurm'\nexecutor = 'x'\n"
                      "external_run_id = 'r-1'\ncontainer_image = 'img:1'\ntags = ['a=1', 'b=2']\n"
                      "[tracker]\ninterval_secs = 0.5\nformat = 'csv'\noutput = 'out.csv'\nquiet = true\n";
    cli_layer l;
    char err[512];
    assert_int_equal(parse(doc, &l, err, sizeof err), 0);
    assert_string_equal(l.meta[META_JOB_NAME], "train");
    assert_string_equal(l.meta[META_CONTAINER_IMAGE], "img:1");
    assert_string_equal(l.meta[META_EXTERNAL_RUN_ID], "r-1");
    assert_true(l.pid_set && l.pid == 4242);
    assert_true(l.interval_set && l.interval == 0.5);
    assert_true(l.format_set && l.format == RT_FORMAT_CSV);
    assert_string_equal(l.output, "out.csv");
    assert_true(l.quiet_set && l.quiet);
    assert_int_equal(l.ntags, 2);
    assert_string_equal(l.tags[1], "b=2");
    cli_layer_free(&l);
}

static void tags_as_table_and_integer_interval(void **state)
{
    (void)state;
    cli_layer l;
    char err[512];
    assert_int_equal(parse("[job.tags]\nteam = 'ml'\nowner = 'ana'\n[tracker]\ninterval_secs = 10\n", &l, err, sizeof err), 0);
    assert_int_equal(l.ntags, 2);
    assert_string_equal(l.tags[0], "team=ml");
    assert_true(l.interval == 10.0);
    cli_layer_free(&l);
}

static void expect_error(const char *doc, const char *want)
{
    cli_layer l;
    char err[512];
    int rc = parse(doc, &l, err, sizeof err);
    cli_layer_free(&l);
    if (rc == 0)
        fail_msg("accepted: %s", doc);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
}

static void errors(void **state)
{
    (void)state;
    expect_error("[tracker]\ninterval_secs = 0\n", "conf.toml:2:1: [tracker] interval_secs must be a number of seconds from 0.01 to 86400");
    expect_error("[tracker]\ninterval_secs = '1'\n", "interval_secs must be a number");
    expect_error("[tracker]\nformat = 'xml'\n", "format must be \"json\", \"csv\" or \"json-rs\"");
    expect_error("[tracker]\nquiet = 'yes'\n", "quiet must be true or false");
    expect_error("[tracker]\noutput = ''\n", "output must be a file name");
    expect_error("[job]\npid = -3\n", "pid must be a positive integer");
    expect_error("[job]\npid = 1.5\n", "pid must be a positive integer");
    expect_error("[job]\nname = 3\n", "[job] name must be a string, not an integer");
    expect_error("[job]\ntags = ['nokey']\n", "conf.toml:2:9: [job] tags: each tag must be");
    expect_error("[job]\ntags = 5\n", "tags must be an array");
    expect_error("job = 5\n", "'job' must be a table");
    expect_error("[tracker]\ninterval_secs = 1979-05-27\n", "conf.toml:2:17: dates and times are not supported");
    expect_error("[tracker\n", "conf.toml:1:9: expected ']'");
    expect_error("[tracker]\ncgroup = 'on'\n", "conf.toml:2:1: [tracker] cgroup must be \"auto\" or \"off\"");
    expect_error("[tracker]\ncgroup = false\n", "conf.toml:2:1: [tracker] cgroup must be");
    expect_error("[tracker]\nwait_all = 'yes'\n", "conf.toml:2:1: [tracker] wait_all must be true or false");
    /* a key with a NUL inside is not the key before it, in every table */
}

/* Expects doc to load, with a warning holding want, and the known keys around it read. */
static void expect_warning(const char *doc, const char *want)
{
    cli_layer l;
    char err[512] = "";
    if (parse(doc, &l, err, sizeof err) != 0)
        fail_msg("refused: %s (%s)", doc, err);
    if (!l.warnings || !strstr(l.warnings, want))
        fail_msg("warnings '%s' lack '%s'", l.warnings ? l.warnings : "(none)", want);
    cli_layer_free(&l);
}

/* Unknown keys and tables: one warning line each with FILE:LINE:COL and the known keys, and
 * every known key of the file still read (a config written for a newer version loads). */
static void unknown_keys_warn(void **state)
{
    (void)state;
    expect_warning("[tracker]\nintervall = 1\n", "conf.toml:2:1: unknown key 'intervall' in [tracker] left out (known keys: interval_secs, format, csv_energy, output, quiet, view, summary, report, benchmark, cgroup, wait_all, expected_cores, gpus, price_lookup, energy, step_summary, place, cpu_tdp, max_slowdown_pct, grid_zone, grid_intensity)");
    expect_warning("[job]\nnmae = 'x'\n", "conf.toml:2:1: unknown key 'nmae' in [job] left out (known keys: name, pid, project_name");
    expect_warning("[jobs]\n", "conf.toml:1:1: unknown table 'jobs' left out (known tables: [job], [tracker], [history], [export])");
    expect_warning("interval_secs = 1\n", "conf.toml:1:1: unknown key 'interval_secs' left out");
    /* a key with a NUL inside is not the key before it, in every table */
    expect_warning("[tracker]\n\"quiet\\u0000x\" = true\n", "conf.toml:2:1: unknown key 'quiet' in [tracker]");
    expect_warning("[job]\n\"pid\\u0000\" = 1\n", "conf.toml:2:1: unknown key 'pid' in [job]");
    expect_warning("[export]\nprom = 'x'\n", "conf.toml:2:1: unknown key 'prom' in [export] left out (known keys: prometheus, prometheus_textfile");
    /* the rest is read: known keys before and after, two warnings in order */
    cli_layer l;
    char err[512];
    assert_int_equal(parse("[tracker]\ninterval_secs = 2\nsentinel_batch = 5\nformat = 'csv'\n[sentinel]\nurl = 'x'\n"
                           "[job]\nname = 'j'\n", &l, err, sizeof err), 0);
    assert_true(l.interval_set && l.interval == 2);
    assert_true(l.format_set && l.format == RT_FORMAT_CSV);
    assert_string_equal(l.meta[META_JOB_NAME], "j");
    assert_string_equal(l.warnings, "conf.toml:3:1: unknown key 'sentinel_batch' in [tracker] left out (known keys: "
                                    "interval_secs, format, csv_energy, output, quiet, view, summary, report, benchmark, cgroup, "
                                    "wait_all, expected_cores, gpus, price_lookup, energy, step_summary, place, "
                                    "cpu_tdp, max_slowdown_pct, grid_zone, grid_intensity)\n"
                                    "conf.toml:5:1: unknown table 'sentinel' left out (known tables: [job], [tracker], "
                                    "[history], [export])\n");
    cli_layer_free(&l);
    /* a known key with a bad value next to an unknown one is still an error */
    expect_error("[tracker]\nfoo = 1\ninterval_secs = 0\n", "conf.toml:3:1: [tracker] interval_secs must be");
}

/* [export]: the four keys read; wrong types named with their place. */
static void export_keys(void **state)
{
    (void)state;
    cli_layer l;
    char err[512];
    assert_int_equal(parse("[export]\nprometheus = ':9101'\nprometheus_textfile = '/tmp'\notlp = 'http://127.0.0.1:4318'\n"
                           "otlp_interval = 2.5\n", &l, err, sizeof err), 0);
    assert_string_equal(l.prometheus, ":9101");
    assert_string_equal(l.prometheus_textfile, "/tmp");
    assert_string_equal(l.otlp, "http://127.0.0.1:4318");
    assert_true(l.otlp_interval_set && l.otlp_interval == 2.5);
    cli_layer_free(&l);
    expect_error("[export]\nprometheus = 9101\n", "conf.toml:2:1: [export] prometheus must be a non-empty string (\"ADDR:PORT\")");
    expect_error("[export]\notlp = ''\n", "conf.toml:2:1: [export] otlp must be a non-empty string (a URL)");
    expect_error("[export]\notlp_interval = 0\n", "conf.toml:2:1: [export] otlp_interval must be a number of seconds");
    expect_error("export = 1\n", "'export' must be a table");
}

/* [tracker] cgroup and wait_all: read, and marked as given. */
static void cgroup_keys(void **state)
{
    (void)state;
    cli_layer l;
    char err[512];
    assert_int_equal(parse("[tracker]\ncgroup = 'off'\nwait_all = true\n", &l, err, sizeof err), 0);
    assert_true(l.cgroup_set && l.cgroup_off);
    assert_true(l.wait_all_set && l.wait_all);
    cli_layer_free(&l);
    assert_int_equal(parse("[tracker]\ncgroup = 'auto'\nwait_all = false\n", &l, err, sizeof err), 0);
    assert_true(l.cgroup_set && !l.cgroup_off);
    assert_true(l.wait_all_set && !l.wait_all);
    cli_layer_free(&l);
    assert_int_equal(parse("[tracker]\nquiet = true\n", &l, err, sizeof err), 0);
    assert_false(l.cgroup_set || l.wait_all_set);
    cli_layer_free(&l);
}

static void load_files(void **state)
{
    (void)state;
    cli_options o = {0};
    char err[512];
    o.config_path = strdup("/nonexistent/resource-tracker.toml");
    assert_int_equal(cli_load_config(&o, err, sizeof err), 0); /* a default that is missing: fine */
    o.config_explicit = true;
    assert_int_equal(cli_load_config(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/resource-tracker.toml: cannot read the config file"));
    cli_options_free(&o);
    char path[] = "/tmp/rt-conf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *doc = "[tracker]\nformat = 'csv'\n";
    assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
    close(fd);
    cli_options p = {0};
    p.config_path = strdup(path);
    p.config_explicit = true;
    assert_int_equal(cli_load_config(&p, err, sizeof err), 0);
    assert_true(p.file.format_set && p.file.format == RT_FORMAT_CSV);
    cli_options_free(&p);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_config), cmocka_unit_test(tags_as_table_and_integer_interval),
        cmocka_unit_test(errors), cmocka_unit_test(unknown_keys_warn), cmocka_unit_test(load_files), cmocka_unit_test(cgroup_keys), cmocka_unit_test(export_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
