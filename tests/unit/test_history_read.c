/* test_history_read.c - the library's history reader (resource_tracker/history.h) on an SQLite
 * file made here: an older table (schema 2's columns and a few newer) read by the column names
 * it has (the others NaN, NULL), the runs `recommend --job` answers from (succeeded, or the OOM
 * killer's) newest first, a job's and the last N, their strings, table under other core counts,
 * member and who ran each; what an answer is based on (hosts, users); a missing file and a
 * database without runs said; the column table's names unique. */
#include "unit.h"

#include <math.h>
#include <string.h>

#include "resource_tracker.h" /* experimental parts: the unit tests define RT_EXPERIMENTAL_API */

static void columns_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < RT_HISTORY_NCOLS; i++) {
        assert_non_null(rt_history_columns()[i].name);
        for (size_t k = 0; k < i; k++)
            assert_string_not_equal(rt_history_columns()[i].name, rt_history_columns()[k].name);
    }
    assert_string_equal(rt_history_columns()[0].name, "start_secs");
    assert_string_equal(rt_history_columns()[RT_HISTORY_NCOLS - 1].name, "job_id");
}

/* What an answer is based on (rt_history_basis_of): distinct hosts and users, runs without a
 * user; of the runs idx names, or of all. */
static void basis_counted(void **state)
{
    (void)state;
    const rt_history_who who[4] = {
        {"node0", "ann", NULL}, {"node1", "ann", NULL}, {"node0", NULL, NULL}, {NULL, "bob", NULL}};
    rt_history_basis b;
    assert_int_equal(rt_history_basis_of(who, NULL, 4, &b), RT_OK);
    assert_int_equal(b.runs, 4);
    assert_int_equal(b.hosts, 2);
    assert_int_equal(b.users, 2);
    assert_int_equal(b.runs_without_user, 1);
    const size_t idx[2] = {2, 0};
    assert_int_equal(rt_history_basis_of(who, idx, 2, &b), RT_OK);
    assert_int_equal(b.runs, 2);
    assert_int_equal(b.hosts, 1);
    assert_int_equal(b.users, 1);
    assert_int_equal(b.runs_without_user, 1);
    assert_int_equal(rt_history_basis_of(who, NULL, 0, &b), RT_OK);
    assert_int_equal(b.hosts, 0);
    assert_int_equal(rt_history_basis_of(NULL, NULL, 1, &b), RT_ERR_INVALID);
    assert_int_equal(rt_history_basis_of(who, NULL, 1, NULL), RT_ERR_INVALID);
}

/* The runs of the newest run's command line: equal text, or both without one. */
static void same_command_kept(void **state)
{
    (void)state;
    const rt_history_who who[5] = {{"h", "u", "[\"train\"]"}, {"h", "u", "[\"train\",\"-v\"]"},
                                   {"h", "u", "[\"train\"]"}, {"h", "u", NULL}, {"h", "u", "[\"train\"]"}};
    size_t idx[5];
    assert_int_equal(rt_history_same_command(who, 5, idx), 3);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 2);
    assert_int_equal(idx[2], 4);
    assert_int_equal(rt_history_same_command(who + 3, 2, idx), 1); /* no command: only the runs without one */
    assert_int_equal(idx[0], 0);
    assert_int_equal(rt_history_same_command(who, 0, idx), 0);
    assert_int_equal(rt_history_same_command(NULL, 5, idx), 0);
    assert_int_equal(rt_history_same_command(who, 5, NULL), 0);
}

/* A history of an older tool's shape in dir: 5 runs, the 2nd failed (left out), the 4th killed
 * by the OOM killer (kept); 3 of job "a". */
static void make_history(const char *path)
{
    rt_db *db = NULL;
    char err[300];
    assert_int_equal(rt_db_open(path, RT_DB_OPEN_READWRITE | RT_DB_OPEN_CREATE, 1000, 0, &db, err, sizeof err),
                     RT_DB_OK);
    assert_int_equal(
        rt_db_exec(db, "CREATE TABLE runs (id INTEGER PRIMARY KEY, job_name TEXT, allocation TEXT, samples INTEGER,"
                       " start_secs REAL, end_secs REAL, exit_status INTEGER, host_hostname TEXT, command TEXT,"
                       " duration_secs REAL, process_cpu_secs REAL, process_cores_mean REAL,"
                       " process_pss_mib_peak REAL, oom_kills REAL, cores TEXT, member TEXT, node TEXT);"
                       "INSERT INTO runs VALUES (NULL, 'a', 'dedicated', 10, 100, 110, 0, 'h1', '[\"x\"]', 10, 5,"
                       " 0.5, 100, 0, NULL, NULL, NULL);"
                       "INSERT INTO runs VALUES (NULL, 'a', NULL, 3, 200, 203, 1, 'h1', '[\"x\"]', 3, 1, 0.3, 50,"
                       " 0, NULL, NULL, NULL);"
                       "INSERT INTO runs VALUES (NULL, 'b', NULL, 4, 300, 304, 0, 'h2', NULL, 4, NULL, NULL, NULL,"
                       " NULL, NULL, NULL, NULL);"
                       "INSERT INTO runs VALUES (NULL, 'a', NULL, 5, 400, 405, 137, 'h2', '[\"x\"]', 5, 4, 0.8,"
                       " 900, 1, NULL, '{\"job_id\":\"77\",\"node\":\"n1\",\"rank\":1,\"ranks\":2}', 'n1');"
                       "INSERT INTO runs VALUES (NULL, 'a', NULL, 6, 500, 520, 0, 'h3', '[\"y\"]', 20, 20, 1.0,"
                       " 200, 0, '{\"durations_secs\":[20,11],\"duration_secs\":20}', NULL, NULL)"),
        RT_DB_OK);
    rt_db_close(db);
}

static void runs_read_back(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-histread-XXXXXX", path[64], err[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h.db", dir);
    make_history(path);
    rt_summary *runs = NULL;
    rt_history_who *who = NULL;
    size_t n = 0;
    assert_int_equal(rt_history_runs(path, "a", 0, &runs, &n, &who, err, sizeof err), RT_DB_OK);
    assert_int_equal(n, 3); /* the failed run left out, the OOM-killed one kept */
    assert_non_null(who);
    assert_true(runs[0].start_secs == 500 && runs[1].start_secs == 400 && runs[2].start_secs == 100);
    assert_string_equal(runs[0].job_name, "a");
    assert_string_equal(runs[2].allocation, "dedicated");
    assert_null(runs[0].allocation);
    assert_true(runs[0].process_cpu_secs == 20 && runs[1].oom_kills == 1 && runs[2].process_pss_mib.peak == 100);
    assert_true(isnan(runs[0].energy_joules) && isnan(runs[0].process_rss_mib.peak)); /* no such column */
    assert_true(runs[0].has_process);
    assert_non_null(runs[0].cores);
    assert_int_equal(runs[0].cores->n, 2);
    assert_true(runs[0].cores->rows[1].duration_secs == 11);
    assert_null(runs[1].cores);
    assert_non_null(runs[1].member);
    assert_string_equal(runs[1].member->job_id, "77");
    assert_string_equal(runs[1].member->node, "n1");
    assert_int_equal(runs[1].member->rank, 1);
    assert_null(runs[0].member);
    assert_string_equal(who[0].host, "h3"); /* no node: its host */
    assert_string_equal(who[1].host, "n1");
    assert_null(who[0].user);
    assert_string_equal(who[0].command, "[\"y\"]");
    rt_history_free(runs);

    assert_int_equal(rt_history_runs(path, "a", 1, &runs, &n, NULL, err, sizeof err), RT_DB_OK);
    assert_int_equal(n, 1);
    assert_true(runs[0].start_secs == 500);
    rt_history_free(runs);
    assert_int_equal(rt_history_runs(path, NULL, 0, &runs, &n, NULL, err, sizeof err), RT_DB_OK);
    assert_int_equal(n, 4);
    assert_string_equal(runs[1].job_name, "a"); /* the OOM-killed run of a; b the third */
    assert_string_equal(runs[2].job_name, "b");
    rt_history_free(runs);
    assert_int_equal(rt_history_runs(path, "none", 0, &runs, &n, &who, err, sizeof err), RT_DB_OK);
    assert_int_equal(n, 0);
    assert_null(runs);

    /* a missing file, and a database without runs */
    char missing[80];
    snprintf(missing, sizeof missing, "%s/missing.db", dir);
    assert_int_not_equal(rt_history_runs(missing, NULL, 0, &runs, &n, NULL, err, sizeof err), RT_DB_OK);
    assert_non_null(strstr(err, "no such file"));
    assert_null(runs);
    rt_db *db = NULL;
    snprintf(missing, sizeof missing, "%s/empty.db", dir);
    assert_int_equal(rt_db_open(missing, RT_DB_OPEN_READWRITE | RT_DB_OPEN_CREATE, 1000, 0, &db, err, sizeof err),
                     RT_DB_OK);
    assert_int_equal(rt_db_exec(db, "CREATE TABLE other (x)"), RT_DB_OK);
    rt_db_close(db);
    assert_int_not_equal(rt_history_runs(missing, NULL, 0, &runs, &n, NULL, err, sizeof err), RT_DB_OK);
    assert_string_equal(err, "no runs recorded there (not a run history)");
    unlink(missing);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_table),
        cmocka_unit_test(runs_read_back),
        cmocka_unit_test(basis_counted),
        cmocka_unit_test(same_command_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
