/* db_engine.h - what the engine-neutral layer (db.c) and the PostgreSQL engine (db_pg.c) share:
 * the connection and statement structs, and the PostgreSQL side's calls. Internal to the
 * library; the calls are resource_tracker/db.h's. */
#ifndef RT_DB_ENGINE_H
#define RT_DB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resource_tracker.h"
#include "pg_dl.h"

struct sqlite3;
struct sqlite3_stmt;

struct rt_db {
    rt_db_engine engine;
    struct sqlite3 *sq; /* SQLite */
    PGconn *pg;         /* PostgreSQL; NULL once dropped (the deadline passed, the link broke) */
    double deadline;    /* CLOCK_MONOTONIC seconds; 0: none */
    int code;           /* PostgreSQL's last code, and the message */
    char msg[512];
};

struct rt_db_stmt {
    rt_db *db;
    struct sqlite3_stmt *sq;
    /* PostgreSQL: the statement with $N, its parameters as text (NULL: NULL), the current result */
    char *sql;
    int nparams;  /* the highest ?N: values[0 .. nparams) are bound by N */
    char **values;
    int nused;    /* the numbers the statement uses, in order: $1 .. $nused (a ?N not used, bound
                   * or not, is no parameter of the server's: it could not type it) */
    int *used;    /* used[j] is the N of $j+1 */
    PGresult *res;
    bool started, done;
};

int rt_db_pg_open(const char *url, double deadline, rt_db *db);
/* What a connection past its deadline says. */
#define RT_PG_BEFORE_DEADLINE "no answer from the PostgreSQL server before the deadline (the connection is dropped)"

/* Waits until fd is ready for events or the time by (CLOCK_MONOTONIC seconds; 0: no bound):
 * 1, 0 when by passed, -1 with errno when poll failed (EINTR retried). */
int rt_db_pg_poll(int fd, short events, double by);
/* pg_connect.c: the connection url names, made by the time by (CLOCK_MONOTONIC seconds) or given
 * up; RT_DB_OK and *out, or a code and the message in msg. */
int rt_db_pg_connect(const char *url, double by, PGconn **out, char *msg, size_t cap);
void rt_db_pg_close(rt_db *db);
int rt_db_pg_exec(rt_db *db, const char *sql);
int rt_db_pg_prepare(rt_db *db, const char *sql, rt_db_stmt *st);
int rt_db_pg_step(rt_db_stmt *st);
void rt_db_pg_finalize(rt_db_stmt *st);
int rt_db_pg_column_type(rt_db_stmt *st, int i);
bool rt_db_pg_in_transaction(rt_db *db);

#endif
