/* sqlite_bridge.c - SQLite's calls (resource_tracker/sqlite.h) answered by the static build's
 * loader helper (sqlite_bridge.h): one helper while any database is open, every call a request
 * to it under one lock; a statement's column names come with its preparation and each row whole
 * with its step, so reading a row asks nothing more. The handles given out are ours, holding
 * the helper's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "../core/bridge.h"
#include "sqlite_bridge.h"

/* How long one call may take: SQLite's own waits (busy_timeout) are shorter. */
#define CALL_SECS 600.0

typedef struct bq_db {
    int64_t remote;
    char errmsg[512];
} bq_db;

typedef struct bq_stmt {
    int64_t remote;
    int ncol;
    char **names; /* ncol, each its own allocation */
    rt_wire row;  /* the last step's answer: the texts point into it */
    int nrow;     /* the columns of the row held (0: none) */
    int *types;
    int64_t *ints;
    double *dbls;
    const char **texts;
    size_t *lens; /* of texts */
} bq_stmt;

static struct {
    pthread_mutex_t lock;
    rt_bridge b;
    int open; /* databases open */
    char err[256];
} bq = {.lock = PTHREAD_MUTEX_INITIALIZER, .b = {.pid = -1, .fd = -1}};

/* One call: q (with RT_BRIDGE_SQLITE and the call number first) out, the answer into *a. Under
 * bq.lock. Returns 0, or -1 (the helper gone; bq.err says why). */
static int call(rt_wire *q, rt_wire *a)
{
    if (bq.b.fd < 0) {
        snprintf(bq.err, sizeof bq.err, "the SQLite helper is not running");
        return -1;
    }
    return rt_bridge_call(&bq.b, q, a, rt_mono_secs() + CALL_SECS, NULL, bq.err, sizeof bq.err);
}

static void begin(rt_wire *q, rt_wire *a, int op)
{
    rt_wire_init(q);
    rt_wire_init(a);
    rt_wire_put_i64(q, RT_BRIDGE_SQLITE);
    rt_wire_put_i64(q, op);
}

/* A call whose answer is one integer (an SQLite result code, or what it asks). fail: the answer
 * when the helper is gone. */
static int64_t call_int(rt_wire *q, int64_t fail)
{
    rt_wire a;
    rt_wire_init(&a);
    pthread_mutex_lock(&bq.lock);
    int64_t v = fail;
    if (call(q, &a) == 0) {
        v = rt_wire_get_i64(&a);
        if (a.bad)
            v = fail;
    }
    pthread_mutex_unlock(&bq.lock);
    rt_wire_free(q);
    rt_wire_free(&a);
    return v;
}

static int b_open_v2(const char *path, sqlite3 **db, int flags, const char *vfs)
{
    (void)vfs; /* the default VFS: the only one the history asks for */
    *db = NULL;
    rt_wire q, a;
    begin(&q, &a, SQB_OPEN);
    rt_wire_put_str(&q, path);
    rt_wire_put_i64(&q, flags);
    int rc = SQLITE_CANTOPEN;
    pthread_mutex_lock(&bq.lock);
    if (bq.open == 0 && bq.b.fd < 0) /* a new session: an old failure is no reason any more */
        bq.err[0] = '\0';
    if (bq.open == 0 && bq.b.fd < 0 && rt_bridge_start(&bq.b, bq.err, sizeof bq.err) < 0) {
        pthread_mutex_unlock(&bq.lock);
        rt_wire_free(&q);
        return rc;
    }
    if (call(&q, &a) == 0) {
        int64_t r = rt_wire_get_i64(&a), remote = rt_wire_get_i64(&a);
        bq_db *d = remote && !a.bad ? calloc(1, sizeof *d) : NULL;
        if (d) {
            d->remote = remote;
            bq.open++;
            *db = (sqlite3 *)d;
            rc = (int)r;
        } else if (!a.bad) {
            rc = remote ? SQLITE_NOMEM : (int)r;
        }
    }
    if (bq.open == 0)
        rt_bridge_stop(&bq.b);
    pthread_mutex_unlock(&bq.lock);
    rt_wire_free(&q);
    rt_wire_free(&a);
    return rc;
}

static int b_close(sqlite3 *db)
{
    bq_db *d = (bq_db *)db;
    if (!d)
        return SQLITE_OK;
    rt_wire q, a;
    begin(&q, &a, SQB_CLOSE);
    rt_wire_put_i64(&q, d->remote);
    rt_wire_free(&a);
    int rc = (int)call_int(&q, SQLITE_ERROR);
    if (rc == SQLITE_BUSY) /* statements left open: the handle stays, as SQLite's does */
        return rc;
    free(d);
    pthread_mutex_lock(&bq.lock);
    if (bq.open > 0 && --bq.open == 0)
        rt_bridge_stop(&bq.b);
    pthread_mutex_unlock(&bq.lock);
    return rc;
}

/* A call on a database with one integer argument. */
static int db_int(int op, sqlite3 *db, int64_t arg, bool with_arg, int fail)
{
    bq_db *d = (bq_db *)db;
    if (!d)
        return SQLITE_MISUSE;
    rt_wire q, a;
    begin(&q, &a, op);
    rt_wire_free(&a);
    rt_wire_put_i64(&q, d->remote);
    if (with_arg)
        rt_wire_put_i64(&q, arg);
    return (int)call_int(&q, fail);
}

static int b_busy_timeout(sqlite3 *db, int ms)
{
    return db_int(SQB_BUSY_TIMEOUT, db, ms, true, SQLITE_ERROR);
}

static int b_extended_result_codes(sqlite3 *db, int on)
{
    return db_int(SQB_EXTENDED, db, on, true, SQLITE_ERROR);
}

static int b_get_autocommit(sqlite3 *db)
{
    return db_int(SQB_AUTOCOMMIT, db, 0, false, 1);
}

static int b_errcode(sqlite3 *db)
{
    return db ? db_int(SQB_ERRCODE, db, 0, false, SQLITE_ERROR) : SQLITE_NOMEM;
}

static int b_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg, char **errmsg)
{
    (void)arg;
    if (errmsg)
        *errmsg = NULL; /* the message is had with errmsg(), as the history reads it */
    bq_db *d = (bq_db *)db;
    if (!d || cb) /* rows to a callback: not asked for by the history, not carried */
        return SQLITE_MISUSE;
    rt_wire q, a;
    begin(&q, &a, SQB_EXEC);
    rt_wire_free(&a);
    rt_wire_put_i64(&q, d->remote);
    rt_wire_put_str(&q, sql);
    return (int)call_int(&q, SQLITE_ERROR);
}

static void stmt_free(bq_stmt *s)
{
    for (int i = 0; s->names && i < s->ncol; i++)
        free(s->names[i]);
    rt_free_all(s->names, s->types, s->ints, s->dbls, s->texts, s->lens);
    rt_wire_free(&s->row);
    free(s);
}

static int b_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **st, const char **tail)
{
    *st = NULL;
    if (tail)
        *tail = sql;
    bq_db *d = (bq_db *)db;
    if (!d || !sql)
        return SQLITE_MISUSE;
    size_t len = n < 0 ? strlen(sql) : strnlen(sql, (size_t)n < SIZE_MAX ? (size_t)n : SIZE_MAX);
    rt_wire q, a;
    begin(&q, &a, SQB_PREPARE);
    rt_wire_put_i64(&q, d->remote);
    rt_wire_put_bytes(&q, sql, len);
    int rc = SQLITE_ERROR;
    pthread_mutex_lock(&bq.lock);
    if (call(&q, &a) == 0) {
        rc = (int)rt_wire_get_i64(&a);
        int64_t remote = rt_wire_get_i64(&a), used = rt_wire_get_i64(&a), ncol = rt_wire_get_i64(&a);
        bq_stmt *s = NULL;
        if (!a.bad && remote && ncol >= 0 && ncol < 4096 && (s = calloc(1, sizeof *s))) {
            s->remote = remote;
            s->ncol = (int)ncol;
            rt_wire_init(&s->row);
            size_t k = ncol ? (size_t)ncol : 1;
            s->names = calloc(k, sizeof *s->names);
            s->types = calloc(k, sizeof *s->types);
            s->ints = calloc(k, sizeof *s->ints);
            s->dbls = calloc(k, sizeof *s->dbls);
            s->texts = calloc(k, sizeof *s->texts);
            s->lens = calloc(k, sizeof *s->lens);
            bool ok = s->names && s->types && s->ints && s->dbls && s->texts && s->lens;
            for (int i = 0; ok && i < s->ncol; i++) {
                const char *nm = rt_wire_get_bytes(&a, NULL);
                ok = (s->names[i] = rt_strdup(nm ? nm : "")) != NULL;
            }
            if (!ok || a.bad) { /* the helper's statement stays until its close: rare enough */
                stmt_free(s);
                s = NULL;
                rc = SQLITE_NOMEM;
            }
        } else if (!a.bad && remote) {
            rc = SQLITE_NOMEM;
        }
        *st = (sqlite3_stmt *)s;
        if (tail && used >= 0 && (size_t)used <= len)
            *tail = sql + used;
        if (a.bad)
            rc = SQLITE_ERROR;
    }
    pthread_mutex_unlock(&bq.lock);
    rt_wire_free(&q);
    rt_wire_free(&a);
    return rc;
}

static int b_step(sqlite3_stmt *st)
{
    bq_stmt *s = (bq_stmt *)st;
    if (!s)
        return SQLITE_MISUSE;
    rt_wire q, a;
    begin(&q, &a, SQB_STEP);
    rt_wire_free(&a);
    rt_wire_put_i64(&q, s->remote);
    s->nrow = 0;
    int rc = SQLITE_ERROR;
    pthread_mutex_lock(&bq.lock);
    if (call(&q, &s->row) == 0) {
        rt_wire *r = &s->row;
        rc = (int)rt_wire_get_i64(r);
        int64_t n = rt_wire_get_i64(r);
        if (n < 0 || n > s->ncol)
            r->bad = true;
        for (int64_t i = 0; !r->bad && i < n; i++) {
            s->types[i] = (int)rt_wire_get_i64(r);
            s->ints[i] = rt_wire_get_i64(r);
            s->dbls[i] = rt_wire_get_f64(r);
            s->texts[i] = rt_wire_get_bytes(r, &s->lens[i]);
        }
        if (r->bad)
            rc = SQLITE_ERROR;
        else
            s->nrow = (int)n;
    }
    pthread_mutex_unlock(&bq.lock);
    rt_wire_free(&q);
    return rc;
}

static int b_finalize(sqlite3_stmt *st)
{
    bq_stmt *s = (bq_stmt *)st;
    if (!s)
        return SQLITE_OK;
    rt_wire q, a;
    begin(&q, &a, SQB_FINALIZE);
    rt_wire_free(&a);
    rt_wire_put_i64(&q, s->remote);
    stmt_free(s);
    return (int)call_int(&q, SQLITE_ERROR);
}

/* A bind: the statement, the index, then the value the caller puts. */
static rt_wire *bind_begin(rt_wire *q, int op, sqlite3_stmt *st, int i)
{
    rt_wire a;
    begin(q, &a, op);
    rt_wire_free(&a);
    rt_wire_put_i64(q, ((bq_stmt *)st)->remote);
    rt_wire_put_i64(q, i);
    return q;
}

static int b_bind_double(sqlite3_stmt *st, int i, double v)
{
    rt_wire q;
    if (!st)
        return SQLITE_MISUSE;
    rt_wire_put_f64(bind_begin(&q, SQB_BIND_DOUBLE, st, i), v);
    return (int)call_int(&q, SQLITE_ERROR);
}

static int b_bind_int64(sqlite3_stmt *st, int i, sqlite3_int64 v)
{
    rt_wire q;
    if (!st)
        return SQLITE_MISUSE;
    rt_wire_put_i64(bind_begin(&q, SQB_BIND_INT64, st, i), v);
    return (int)call_int(&q, SQLITE_ERROR);
}

static int b_bind_int(sqlite3_stmt *st, int i, int v)
{
    return b_bind_int64(st, i, v);
}

static int b_bind_null(sqlite3_stmt *st, int i)
{
    rt_wire q;
    if (!st)
        return SQLITE_MISUSE;
    bind_begin(&q, SQB_BIND_NULL, st, i);
    return (int)call_int(&q, SQLITE_ERROR);
}

static int b_bind_text(sqlite3_stmt *st, int i, const char *v, int n, void (*destroy)(void *))
{
    rt_wire q;
    if (!st)
        return SQLITE_MISUSE;
    size_t len = !v ? 0 : n < 0 ? strlen(v) : (size_t)n;
    rt_wire_put_bytes(bind_begin(&q, SQB_BIND_TEXT, st, i), v, len); /* NULL: bound as NULL, as SQLite does */
    int rc = (int)call_int(&q, SQLITE_ERROR);
    if (v && destroy != SQLITE_STATIC && destroy != SQLITE_TRANSIENT)
        destroy((void *)v); /* copied: SQLite would free it once done with it */
    return rc;
}

static int b_column_count(sqlite3_stmt *st)
{
    return st ? ((bq_stmt *)st)->ncol : 0;
}

static const char *b_column_name(sqlite3_stmt *st, int i)
{
    bq_stmt *s = (bq_stmt *)st;
    return s && i >= 0 && i < s->ncol ? s->names[i] : NULL;
}

/* Column i of the row held, or -1. */
static int col(sqlite3_stmt *st, int i)
{
    bq_stmt *s = (bq_stmt *)st;
    return s && i >= 0 && i < s->nrow ? i : -1;
}

static int b_column_type(sqlite3_stmt *st, int i)
{
    int c = col(st, i);
    return c < 0 ? SQLITE_NULL : ((bq_stmt *)st)->types[c];
}

static sqlite3_int64 b_column_int64(sqlite3_stmt *st, int i)
{
    int c = col(st, i);
    return c < 0 ? 0 : ((bq_stmt *)st)->ints[c];
}

static int b_column_int(sqlite3_stmt *st, int i)
{
    return (int)(uint32_t)(uint64_t)b_column_int64(st, i); /* its low 32 bits, as SQLite's */
}

static double b_column_double(sqlite3_stmt *st, int i)
{
    int c = col(st, i);
    return c < 0 ? 0.0 : ((bq_stmt *)st)->dbls[c];
}

static const unsigned char *b_column_text(sqlite3_stmt *st, int i)
{
    int c = col(st, i);
    return c < 0 ? NULL : (const unsigned char *)((bq_stmt *)st)->texts[c];
}

static int b_column_bytes(sqlite3_stmt *st, int i)
{
    int c = col(st, i);
    return c < 0 ? 0 : (int)((bq_stmt *)st)->lens[c];
}

/* A call answered with a string, copied into out[cap]. */
static const char *call_str(rt_wire *q, char *out, size_t cap, const char *fail)
{
    rt_wire a;
    rt_wire_init(&a);
    snprintf(out, cap, "%s", fail);
    pthread_mutex_lock(&bq.lock);
    if (call(q, &a) == 0) {
        const char *s = rt_wire_get_bytes(&a, NULL);
        if (s && !a.bad)
            snprintf(out, cap, "%s", s);
    } else {
        snprintf(out, cap, "%s (%s)", fail, bq.err);
    }
    pthread_mutex_unlock(&bq.lock);
    rt_wire_free(q);
    rt_wire_free(&a);
    return out;
}

static const char *b_errmsg(sqlite3 *db)
{
    bq_db *d = (bq_db *)db;
    if (!d) { /* no handle: why the helper could not open one, else SQLite's word */
        static _Thread_local char why[sizeof bq.err];
        pthread_mutex_lock(&bq.lock);
        snprintf(why, sizeof why, "%s", bq.err[0] ? bq.err : "out of memory");
        pthread_mutex_unlock(&bq.lock);
        return why;
    }
    rt_wire q, a;
    begin(&q, &a, SQB_ERRMSG);
    rt_wire_free(&a);
    rt_wire_put_i64(&q, d->remote);
    return call_str(&q, d->errmsg, sizeof d->errmsg, "SQLite's message is lost: its helper ended");
}

static const char *b_errstr(int code)
{
    static _Thread_local char text[336];
    rt_wire q, a;
    begin(&q, &a, SQB_ERRSTR);
    rt_wire_free(&a);
    rt_wire_put_i64(&q, code);
    char fail[64];
    snprintf(fail, sizeof fail, "SQLite result code %d", code);
    pthread_mutex_lock(&bq.lock);
    bool none = bq.b.fd < 0;
    if (none) { /* no helper (every database closed, or none could start): the number, and why
                 * no helper runs when one failed */
        if (bq.err[0])
            snprintf(text, sizeof text, "%s (%s)", fail, bq.err);
        else
            snprintf(text, sizeof text, "%s", fail);
    }
    pthread_mutex_unlock(&bq.lock);
    if (none) {
        rt_wire_free(&q);
        return text;
    }
    return call_str(&q, text, sizeof text, fail);
}

int rt_sqlite_bridge_install(rt_sqlite_api *t, char *err, size_t cap)
{
    if (rt_bridge_probe("sqlite", err, cap) < 0)
        return -1;
    *t = (rt_sqlite_api){
        .open_v2 = b_open_v2,
        .close = b_close,
        .busy_timeout = b_busy_timeout,
        .exec = b_exec,
        .prepare_v2 = b_prepare_v2,
        .step = b_step,
        .finalize = b_finalize,
        .bind_double = b_bind_double,
        .bind_int = b_bind_int,
        .bind_int64 = b_bind_int64,
        .bind_null = b_bind_null,
        .bind_text = b_bind_text,
        .column_count = b_column_count,
        .column_double = b_column_double,
        .column_int = b_column_int,
        .column_int64 = b_column_int64,
        .column_name = b_column_name,
        .column_text = b_column_text,
        .column_bytes = b_column_bytes,
        .column_type = b_column_type,
        .errcode = b_errcode,
        .errmsg = b_errmsg,
        .errstr = b_errstr,
        .extended_result_codes = b_extended_result_codes,
        .get_autocommit = b_get_autocommit,
    };
    return 0;
}
