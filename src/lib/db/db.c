/* db.c - a run history's database, engine-neutral (resource_tracker/db.h): each call goes to
 * SQLite (rt_sqlite_calls, a file) or to the PostgreSQL engine (db_pg.c, a postgresql:// URL),
 * and the few places where their SQL differs (the column types, the id column, the write
 * transaction, the schema version, INSERT leaving out a duplicate) are answered here. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db_engine.h"

#define SQ (rt_sqlite_calls())

/* a key of PostgreSQL's advisory locks: the tool's history writers queue on it */
#define PG_WRITE_LOCK "7526341250"

bool rt_db_is_url(const char *t)
{
    return t && (strncmp(t, "postgresql://", 13) == 0 || strncmp(t, "postgres://", 11) == 0);
}

int rt_db_open(const char *target, int flags, int busy_ms, double deadline, rt_db **out, char *err, size_t cap)
{
    *out = NULL;
    rt_db *db = calloc(1, sizeof *db);
    if (!db) {
        snprintf(err, cap, "out of memory");
        return RT_DB_NOMEM;
    }
    int rc;
    if (rt_db_is_url(target)) {
        db->engine = RT_DB_POSTGRES;
        if (rt_pg_load(err, cap) != RT_OK) {
            free(db);
            return RT_DB_CANTOPEN;
        }
        rc = rt_db_pg_open(target, deadline, db);
        if (rc != RT_DB_OK) {
            snprintf(err, cap, "%s", db->msg);
            rt_db_close(db);
            return rc;
        }
        *out = db;
        return RT_DB_OK;
    }
    db->engine = RT_DB_SQLITE;
    if (rt_sqlite_load(err, cap) != RT_OK) {
        free(db);
        return RT_DB_CANTOPEN;
    }
    rc = SQ->open_v2(target, &db->sq, flags, NULL);
    if (rc == SQLITE_OK) {
        SQ->extended_result_codes(db->sq, 1);
        SQ->busy_timeout(db->sq, busy_ms);
    } else {
        snprintf(err, cap, "%s", db->sq ? SQ->errmsg(db->sq) : SQ->errstr(rc));
        rt_db_close(db);
        return rc;
    }
    *out = db;
    return RT_DB_OK;
}

void rt_db_close(rt_db *db)
{
    if (!db)
        return;
    if (db->engine == RT_DB_SQLITE && db->sq)
        SQ->close(db->sq);
    if (db->engine == RT_DB_POSTGRES)
        rt_db_pg_close(db);
    free(db);
}

rt_db_engine rt_db_engine_of(const rt_db *db)
{
    return db->engine;
}

int rt_db_exec(rt_db *db, const char *sql)
{
    return db->engine == RT_DB_SQLITE ? SQ->exec(db->sq, sql, NULL, NULL, NULL) : rt_db_pg_exec(db, sql);
}

int rt_db_prepare(rt_db *db, const char *sql, rt_db_stmt **out)
{
    rt_db_stmt *st = calloc(1, sizeof *st);
    *out = st;
    if (!st)
        return RT_DB_NOMEM;
    st->db = db;
    if (db->engine == RT_DB_SQLITE)
        return SQ->prepare_v2(db->sq, sql, -1, &st->sq, NULL);
    return rt_db_pg_prepare(db, sql, st);
}

/* PostgreSQL: parameter i's text (a copy; NULL: NULL). */
static int pg_bind(rt_db_stmt *st, int i, const char *text)
{
    if (i < 1 || i > st->nparams)
        return RT_DB_MISUSE;
    char *copy = NULL;
    if (text && !(copy = strdup(text)))
        return RT_DB_NOMEM;
    free(st->values[i - 1]);
    st->values[i - 1] = copy;
    return RT_DB_OK;
}

int rt_db_bind_text(rt_db_stmt *st, int i, const char *s)
{
    if (st->db->engine == RT_DB_SQLITE)
        return s ? SQ->bind_text(st->sq, i, s, -1, SQLITE_TRANSIENT) : SQ->bind_null(st->sq, i);
    return pg_bind(st, i, s);
}

int rt_db_bind_real(rt_db_stmt *st, int i, double v)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->bind_double(st->sq, i, v);
    if (!isfinite(v)) /* never stored: NULL (the history's writer binds none) */
        return pg_bind(st, i, NULL);
    char t[40];
    snprintf(t, sizeof t, "%.17g", v);
    return pg_bind(st, i, t);
}

int rt_db_bind_int(rt_db_stmt *st, int i, int64_t v)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->bind_int64(st->sq, i, v);
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)v);
    return pg_bind(st, i, t);
}

int rt_db_bind_null(rt_db_stmt *st, int i)
{
    return st->db->engine == RT_DB_SQLITE ? SQ->bind_null(st->sq, i) : pg_bind(st, i, NULL);
}

int rt_db_step(rt_db_stmt *st)
{
    return st->db->engine == RT_DB_SQLITE ? SQ->step(st->sq) : rt_db_pg_step(st);
}

int rt_db_finalize(rt_db_stmt *st)
{
    if (!st)
        return RT_DB_OK;
    int rc = RT_DB_OK;
    if (st->db->engine == RT_DB_SQLITE)
        rc = SQ->finalize(st->sq);
    else
        rt_db_pg_finalize(st);
    free(st);
    return rc;
}

/* PostgreSQL: the current row's result, NULL without one. */
static PGresult *pg_row(rt_db_stmt *st, int i)
{
    return st->res && i >= 0 && i < rt_pg_calls()->nfields(st->res) && rt_pg_calls()->ntuples(st->res) > 0 ? st->res
                                                                                                           : NULL;
}

int rt_db_column_count(rt_db_stmt *st)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->column_count(st->sq);
    return st->res ? rt_pg_calls()->nfields(st->res) : 0;
}

const char *rt_db_column_name(rt_db_stmt *st, int i)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->column_name(st->sq, i);
    return st->res && i >= 0 && i < rt_pg_calls()->nfields(st->res) ? rt_pg_calls()->fname(st->res, i) : "";
}

int rt_db_column_type(rt_db_stmt *st, int i)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->column_type(st->sq, i);
    return rt_db_pg_column_type(st, i);
}

const char *rt_db_column_text(rt_db_stmt *st, int i)
{
    if (st->db->engine == RT_DB_SQLITE)
        return (const char *)SQ->column_text(st->sq, i);
    PGresult *r = pg_row(st, i);
    return r && !rt_pg_calls()->getisnull(r, 0, i) ? rt_pg_calls()->getvalue(r, 0, i) : NULL;
}

double rt_db_column_double(rt_db_stmt *st, int i)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->column_double(st->sq, i);
    const char *t = rt_db_column_text(st, i);
    return t ? strtod(t, NULL) : 0.0;
}

int64_t rt_db_column_int64(rt_db_stmt *st, int i)
{
    if (st->db->engine == RT_DB_SQLITE)
        return SQ->column_int64(st->sq, i);
    const char *t = rt_db_column_text(st, i);
    if (!t)
        return 0;
    return rt_db_pg_column_type(st, i) == RT_DB_FLOAT ? (int64_t)strtod(t, NULL) : strtoll(t, NULL, 10);
}

int rt_db_errcode(rt_db *db)
{
    return db->engine == RT_DB_SQLITE ? SQ->errcode(db->sq) : db->code;
}

const char *rt_db_errmsg(rt_db *db)
{
    return db->engine == RT_DB_SQLITE ? SQ->errmsg(db->sq) : db->msg[0] ? db->msg : "not an error";
}

const char *rt_db_errstr(int code)
{
    if (SQ)
        return SQ->errstr(code);
    switch (code & 0xff) {
    case RT_DB_OK: return "not an error";
    case RT_DB_BUSY: return "database is locked";
    case RT_DB_NOMEM: return "out of memory";
    case RT_DB_FULL: return "database or disk is full";
    case RT_DB_CANTOPEN: return "unable to open database";
    case RT_DB_CONSTRAINT: return "constraint failed";
    default: return "database error";
    }
}

bool rt_db_in_transaction(rt_db *db)
{
    return db->engine == RT_DB_SQLITE ? !SQ->get_autocommit(db->sq) : rt_db_pg_in_transaction(db);
}

/* ---- where the dialects differ ---------------------------------------------------------- */

int rt_db_begin_write(rt_db *db)
{
    return rt_db_exec(db, db->engine == RT_DB_SQLITE ? "BEGIN IMMEDIATE"
                                                     : "BEGIN; SELECT pg_advisory_xact_lock(" PG_WRITE_LOCK ")");
}

/* The one integer of sql's first row into *v (left alone without a row). */
static int one_int(rt_db *db, const char *sql, int *v)
{
    rt_db_stmt *st = NULL;
    int rc = rt_db_prepare(db, sql, &st);
    if (rc == RT_DB_OK) {
        rc = rt_db_step(st);
        if (rc == RT_DB_ROW && rt_db_column_type(st, 0) != RT_DB_NULL)
            *v = (int)rt_db_column_int64(st, 0);
        rc = rc == RT_DB_ROW || rc == RT_DB_DONE ? RT_DB_OK : rc;
    }
    rt_db_finalize(st);
    return rc;
}

int rt_db_get_version(rt_db *db, int *version)
{
    *version = 0;
    if (db->engine == RT_DB_SQLITE)
        return one_int(db, "PRAGMA user_version", version);
    int has = 0;
    int rc = one_int(db, "SELECT CASE WHEN to_regclass('rt_schema') IS NULL THEN 0 ELSE 1 END", &has);
    if (rc == RT_DB_OK && has)
        rc = one_int(db, "SELECT max(version) FROM rt_schema", version);
    return rc;
}

int rt_db_set_version(rt_db *db, int version)
{
    char sql[200];
    if (db->engine == RT_DB_SQLITE)
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
    else
        snprintf(sql, sizeof sql,
                 "CREATE TABLE IF NOT EXISTS rt_schema (version INTEGER NOT NULL); DELETE FROM rt_schema; "
                 "INSERT INTO rt_schema (version) VALUES (%d)",
                 version);
    return rt_db_exec(db, sql);
}

int rt_db_columns(rt_db *db, const char *table, void (*each)(void *, const char *), void *arg)
{
    rt_db_stmt *st = NULL;
    char sql[200];
    int k = 0, rc;
    if (db->engine == RT_DB_SQLITE) {
        snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
        k = 1;
        rc = rt_db_prepare(db, sql, &st);
    } else {
        rc = rt_db_prepare(db,
                           "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                           "AND table_name = ?1 ORDER BY ordinal_position",
                           &st);
        if (rc == RT_DB_OK)
            rc = rt_db_bind_text(st, 1, table);
    }
    while (rc == RT_DB_OK && (rc = rt_db_step(st)) == RT_DB_ROW) {
        const char *name = rt_db_column_text(st, k);
        if (name)
            each(arg, name);
        rc = RT_DB_OK;
    }
    rt_db_finalize(st);
    return rc == RT_DB_DONE ? RT_DB_OK : rc;
}

const char *rt_db_sql_type(const rt_db *db, char kind)
{
    bool pg = db->engine == RT_DB_POSTGRES;
    return kind == 'T' ? "TEXT" : kind == 'I' ? (pg ? "BIGINT" : "INTEGER") : (pg ? "DOUBLE PRECISION" : "REAL");
}

const char *rt_db_sql_id(const rt_db *db)
{
    return db->engine == RT_DB_POSTGRES ? "id BIGSERIAL PRIMARY KEY" : "id INTEGER PRIMARY KEY AUTOINCREMENT";
}

const char *rt_db_sql_insert_head(const rt_db *db)
{
    return db->engine == RT_DB_POSTGRES ? "INSERT INTO" : "INSERT OR IGNORE INTO";
}

const char *rt_db_sql_insert_tail(const rt_db *db)
{
    return db->engine == RT_DB_POSTGRES ? " ON CONFLICT DO NOTHING" : "";
}
