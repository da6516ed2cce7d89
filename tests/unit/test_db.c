/* test_db.c - the history's engine layer (resource_tracker/db.h) without a server: a URL is told
 * from a file name, its password found and taken out (user:password@ and password=), ?N and ?
 * made $N for PostgreSQL outside quotes, SQLite through the same calls (numbered parameters, the
 * column types, the schema version, the dialect's words), libpq missing said with what to
 * install, and a run's id is 32 lowercase hex digits of its own. */
#include "unit.h"

#include <string.h>

#include "cli.h"
#include "db/db_engine.h"

static void urls(void **state)
{
    (void)state;
    assert_true(rt_db_is_url("postgresql://u@h/db"));
    assert_true(rt_db_is_url("postgres://h/db"));
    assert_false(rt_db_is_url("/tmp/postgresql://x"));
    assert_false(rt_db_is_url("history.db"));
    assert_false(rt_db_is_url(NULL));
    char out[256];
    size_t start = 0;
    assert_int_equal(rt_db_url_password("postgresql://alice:s3cr@t@db.example:5433/runs", &start), 6); /* the last @ ends it */
    assert_int_equal(start, strlen("postgresql://alice:"));
    assert_int_equal(rt_db_url_password("postgresql://alice@db/runs", &start), 0);
    assert_int_equal(rt_db_url_password("postgresql://db/runs?user=a:b@c", &start), 0); /* not the authority */
    rt_db_redact("postgresql://alice:pw@db.example:5433/runs?sslmode=require", out, sizeof out);
    assert_string_equal(out, "postgresql://alice@db.example:5433/runs?sslmode=require");
    rt_db_redact("postgres://alice@db/runs?password=pw&sslmode=verify-full", out, sizeof out);
    assert_string_equal(out, "postgres://alice@db/runs?sslmode=verify-full");
    rt_db_redact("postgres://alice@db/runs?sslmode=require&password=pw", out, sizeof out);
    assert_string_equal(out, "postgres://alice@db/runs?sslmode=require");
    rt_db_redact("postgres://db/runs?password=pw", out, sizeof out);
    assert_string_equal(out, "postgres://db/runs");
    rt_db_redact("/var/lib/h.db", out, sizeof out);
    assert_string_equal(out, "/var/lib/h.db");
}

/* sql as the PostgreSQL engine sends it: want, with n parameters bound by number and used of
 * them sent ($1 .. $used). */
static void pg_sql(const char *sql, const char *want, int n, int used)
{
    rt_db db = {.engine = RT_DB_POSTGRES, .pg = (PGconn *)&db}; /* prepare never calls libpq */
    rt_db_stmt st = {.db = &db};
    assert_int_equal(rt_db_pg_prepare(&db, sql, &st), RT_DB_OK);
    assert_string_equal(st.sql, want);
    assert_int_equal(st.nparams, n);
    assert_int_equal(st.nused, used);
    free(st.values);
    free(st.used);
    free(st.sql);
}

static void pg_parameters(void **state)
{
    (void)state;
    pg_sql("SELECT a FROM t WHERE b = ?2 AND c = '?' AND d = \"?x\" LIMIT ?1",
           "SELECT a FROM t WHERE b = $2 AND c = '?' AND d = \"?x\" LIMIT $1", 2, 2);
    pg_sql("INSERT INTO t (a, b, c) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
           "INSERT INTO t (a, b, c) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", 3, 3);
    /* numbers left out (the history's filters: ?2 the job, ?3 the user, ?4 the host not asked
     * for): the server gets the used ones, densely, in their order (it cannot type a parameter
     * the statement does not use) */
    pg_sql("SELECT * FROM runs WHERE start_secs >= ?5 AND n = ?5 ORDER BY id DESC LIMIT ?1",
           "SELECT * FROM runs WHERE start_secs >= $2 AND n = $2 ORDER BY id DESC LIMIT $1", 5, 2);
    /* a number PostgreSQL cannot have: refused, nothing sent */
    rt_db db = {.engine = RT_DB_POSTGRES, .pg = (PGconn *)&db};
    rt_db_stmt st = {.db = &db};
    assert_int_equal(rt_db_pg_prepare(&db, "SELECT ?0", &st), RT_DB_MISUSE);
    assert_null(st.sql);
    assert_int_equal(rt_db_pg_prepare(&db, "SELECT ?99999999999", &st), RT_DB_MISUSE);
}

static void sqlite_through_the_layer(void **state)
{
    (void)state;
    char path[] = "/tmp/rt-db-XXXXXX", file[64], err[300];
    assert_non_null(mkdtemp(path));
    snprintf(file, sizeof file, "%s/h.db", path);
    rt_db *db = NULL;
    assert_int_equal(rt_db_open(file, RT_DB_OPEN_READWRITE | RT_DB_OPEN_CREATE, 1000, 0, &db, err, sizeof err), RT_DB_OK);
    assert_int_equal(rt_db_engine_of(db), RT_DB_SQLITE);
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE TABLE runs (%s, n %s, x %s, t %s)", rt_db_sql_id(db), rt_db_sql_type(db, 'I'),
             rt_db_sql_type(db, 'R'), rt_db_sql_type(db, 'T'));
    assert_string_equal(sql, "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER, x REAL, t TEXT)");
    assert_int_equal(rt_db_begin_write(db), RT_DB_OK);
    assert_true(rt_db_in_transaction(db));
    assert_int_equal(rt_db_exec(db, sql), RT_DB_OK);
    assert_int_equal(rt_db_exec(db, "CREATE UNIQUE INDEX u ON runs (t)"), RT_DB_OK);
    for (int k = 0; k < 2; k++) { /* the second is the same run: left out */
        rt_db_stmt *st = NULL;
        snprintf(sql, sizeof sql, "%s runs (n, x, t) VALUES (?3, ?2, ?1)%s", rt_db_sql_insert_head(db),
                 rt_db_sql_insert_tail(db));
        assert_int_equal(rt_db_prepare(db, sql, &st), RT_DB_OK);
        assert_int_equal(rt_db_bind_text(st, 1, "abc"), RT_DB_OK);
        assert_int_equal(rt_db_bind_real(st, 2, 2.5), RT_DB_OK);
        assert_int_equal(rt_db_bind_int(st, 3, 7), RT_DB_OK);
        assert_int_equal(rt_db_step(st), RT_DB_DONE);
        rt_db_finalize(st);
    }
    assert_int_equal(rt_db_set_version(db, 12), RT_DB_OK);
    assert_int_equal(rt_db_exec(db, "COMMIT"), RT_DB_OK);
    int v = 0;
    assert_int_equal(rt_db_get_version(db, &v), RT_DB_OK);
    assert_int_equal(v, 12);
    rt_db_stmt *st = NULL;
    assert_int_equal(rt_db_prepare(db, "SELECT id, n, x, t, NULL AS z FROM runs", &st), RT_DB_OK);
    assert_int_equal(rt_db_step(st), RT_DB_ROW);
    assert_int_equal(rt_db_column_count(st), 5);
    assert_string_equal(rt_db_column_name(st, 4), "z");
    assert_int_equal(rt_db_column_type(st, 1), RT_DB_INTEGER);
    assert_int_equal(rt_db_column_type(st, 2), RT_DB_FLOAT);
    assert_int_equal(rt_db_column_type(st, 3), RT_DB_TEXT);
    assert_int_equal(rt_db_column_type(st, 4), RT_DB_NULL);
    assert_int_equal(rt_db_column_int64(st, 1), 7);
    assert_true(rt_db_column_double(st, 2) == 2.5);
    assert_string_equal(rt_db_column_text(st, 3), "abc");
    assert_null(rt_db_column_text(st, 4));
    assert_int_equal(rt_db_step(st), RT_DB_DONE);
    rt_db_finalize(st);
    assert_int_equal(rt_db_exec(db, "SELECT nada FROM nowhere"), RT_DB_ERROR);
    assert_non_null(strstr(rt_db_errmsg(db), "no such"));
    rt_db_close(db);
    unlink(file);
    rmdir(path);
}

static void libpq_missing(void **state)
{
    (void)state;
    rt_pg_use("libno-such-pq.so.5");
    rt_db *db = (rt_db *)1;
    char err[400];
    assert_int_equal(rt_db_open("postgresql://u:secret@127.0.0.1:9/x", 0, 0, 0, &db, err, sizeof err), RT_DB_CANTOPEN);
    assert_null(db);
    assert_non_null(strstr(err, "apt-get install libpq5"));
    assert_null(strstr(err, "secret"));
}

static void run_ids(void **state)
{
    (void)state;
    char a[33], b[33];
    cli_run_uuid(a);
    cli_run_uuid(b);
    assert_int_equal(strlen(a), 32);
    assert_int_equal(strspn(a, "0123456789abcdef"), 32);
    assert_string_not_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(urls),
        cmocka_unit_test(pg_parameters),
        cmocka_unit_test(sqlite_through_the_layer),
        cmocka_unit_test(libpq_missing),
        cmocka_unit_test(run_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
