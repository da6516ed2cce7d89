/* sqlite_serve.c - the loader helper answering the static build's SQLite calls
 * (lib/sqlite/sqlite_bridge.h) with the target's libsqlite3.so.0, loaded as the dynamic build
 * loads it (rt_sqlite_load, lib/sqlite/sqlite_dl.c). Handles cross as the helper's own pointers,
 * given back as integers: the tool that sent them is the one that received them. */
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "../sqlite/sqlite_bridge.h"
#include "resource_tracker.h"
#include "sqlite_serve.h"

static const rt_sqlite_api *sq; /* the loaded SQLite's calls */

#define DB(v) ((sqlite3 *)(intptr_t)(v))
#define ST(v) ((sqlite3_stmt *)(intptr_t)(v))

static void prepare(rt_wire *q, rt_wire *a)
{
    sqlite3 *db = DB(rt_wire_get_i64(q));
    size_t n;
    const char *sql = rt_wire_get_bytes(q, &n);
    sqlite3_stmt *st = NULL;
    const char *tail = sql;
    int rc = q->bad || !sql || n > INT32_MAX ? SQLITE_MISUSE : sq->prepare_v2(db, sql, (int)n, &st, &tail);
    int ncol = st ? sq->column_count(st) : 0;
    rt_wire_put_i64(a, rc);
    rt_wire_put_i64(a, (int64_t)(intptr_t)st);
    rt_wire_put_i64(a, tail && sql ? tail - sql : 0);
    rt_wire_put_i64(a, ncol);
    for (int i = 0; i < ncol; i++)
        rt_wire_put_str(a, sq->column_name(st, i));
}

static void step(rt_wire *q, rt_wire *a)
{
    sqlite3_stmt *st = ST(rt_wire_get_i64(q));
    int rc = q->bad ? SQLITE_MISUSE : sq->step(st);
    int n = rc == SQLITE_ROW ? sq->column_count(st) : 0;
    rt_wire_put_i64(a, rc);
    rt_wire_put_i64(a, n);
    for (int i = 0; i < n; i++) {
        int type = sq->column_type(st, i); /* before any conversion */
        rt_wire_put_i64(a, type);
        rt_wire_put_i64(a, sq->column_int64(st, i));
        rt_wire_put_f64(a, sq->column_double(st, i));
        const unsigned char *t = type == SQLITE_NULL ? NULL : sq->column_text(st, i);
        rt_wire_put_bytes(a, t, t ? (size_t)sq->column_bytes(st, i) : 0);
    }
}

void rt_bridge_sqlite_serve(rt_wire *q, rt_wire *a)
{
    int64_t op = rt_wire_get_i64(q);
    char why[300];
    if (rt_sqlite_load(why, sizeof why) != RT_OK) { /* each helper loads it at its first call */
        if (op == SQB_ERRMSG || op == SQB_ERRSTR) { /* their answer is a text: the reason */
            rt_wire_put_str(a, why);
            return;
        }
        rt_wire_put_i64(a, SQLITE_CANTOPEN);
        if (op == SQB_OPEN)
            rt_wire_put_i64(a, 0);
        else if (op == SQB_PREPARE) /* no statement, no columns */
            rt_wire_put_i64(a, 0), rt_wire_put_i64(a, 0), rt_wire_put_i64(a, 0);
        else if (op == SQB_STEP)
            rt_wire_put_i64(a, 0);
        return;
    }
    sq = rt_sqlite_calls();
    if (op == SQB_PREPARE) {
        prepare(q, a);
        return;
    }
    if (op == SQB_STEP) {
        step(q, a);
        return;
    }
    if (op == SQB_OPEN) {
        const char *path = rt_wire_get_bytes(q, NULL);
        int flags = (int)rt_wire_get_i64(q);
        sqlite3 *db = NULL;
        int rc = q->bad || !path ? SQLITE_MISUSE : sq->open_v2(path, &db, flags, NULL);
        rt_wire_put_i64(a, rc);
        rt_wire_put_i64(a, (int64_t)(intptr_t)db);
        return;
    }
    if (op == SQB_ERRSTR) {
        rt_wire_put_str(a, sq->errstr((int)rt_wire_get_i64(q)));
        return;
    }
    int64_t h = rt_wire_get_i64(q); /* every other call names a database or a statement first */
    if (q->bad) {
        rt_wire_put_i64(a, SQLITE_MISUSE);
        return;
    }
    if (op == SQB_ERRMSG) {
        rt_wire_put_str(a, sq->errmsg(DB(h)));
        return;
    }
    int64_t rc = SQLITE_MISUSE;
    switch (op) {
    case SQB_CLOSE: rc = sq->close(DB(h)); break;
    case SQB_BUSY_TIMEOUT: rc = sq->busy_timeout(DB(h), (int)rt_wire_get_i64(q)); break;
    case SQB_EXEC: {
        const char *sql = rt_wire_get_bytes(q, NULL);
        rc = sql ? sq->exec(DB(h), sql, NULL, NULL, NULL) : SQLITE_MISUSE;
        break;
    }
    case SQB_FINALIZE: rc = sq->finalize(ST(h)); break;
    case SQB_BIND_DOUBLE: {
        int i = (int)rt_wire_get_i64(q);
        rc = sq->bind_double(ST(h), i, rt_wire_get_f64(q));
        break;
    }
    case SQB_BIND_INT64: {
        int i = (int)rt_wire_get_i64(q);
        rc = sq->bind_int64(ST(h), i, rt_wire_get_i64(q));
        break;
    }
    case SQB_BIND_NULL: rc = sq->bind_null(ST(h), (int)rt_wire_get_i64(q)); break;
    case SQB_BIND_TEXT: {
        int i = (int)rt_wire_get_i64(q);
        size_t n;
        const char *v = rt_wire_get_bytes(q, &n);
        rc = !v              ? sq->bind_null(ST(h), i)
             : n > INT32_MAX ? SQLITE_TOOBIG
                             : sq->bind_text(ST(h), i, v, (int)n, SQLITE_TRANSIENT);
        break;
    }
    case SQB_ERRCODE: rc = sq->errcode(DB(h)); break;
    case SQB_EXTENDED: rc = sq->extended_result_codes(DB(h), (int)rt_wire_get_i64(q)); break;
    case SQB_AUTOCOMMIT: rc = sq->get_autocommit(DB(h)); break;
    default: break;
    }
    rt_wire_put_i64(a, rc);
}
