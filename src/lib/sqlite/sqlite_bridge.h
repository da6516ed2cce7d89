/* sqlite_bridge.h - SQLite in the static build through its loader helper (core/bridge.h): the
 * calls of rt_sqlite_api (resource_tracker/sqlite.h), each a request to a helper that holds the
 * target's libsqlite3.so.0 (src/lib/bridge/sqlite_serve.c answers them, sqlite_bridge.c asks). Both
 * ends share the call numbers below. Internal to the library and its helper program. */
#ifndef RT_SQLITE_BRIDGE_H
#define RT_SQLITE_BRIDGE_H

#include <stddef.h>

#include "resource_tracker.h"

/* After RT_BRIDGE_SQLITE: which call (its arguments and answer in sqlite_bridge.c). */
enum {
    SQB_OPEN = 1,     /* str path, i flags -> i rc, i db */
    SQB_CLOSE,        /* i db -> i rc */
    SQB_BUSY_TIMEOUT, /* i db, i ms -> i rc */
    SQB_EXEC,         /* i db, str sql -> i rc */
    SQB_PREPARE,      /* i db, str sql -> i rc, i stmt, i bytes used, i columns, str name... */
    SQB_STEP,         /* i stmt -> i rc, i columns, then each: i type, i int64, d double, str text */
    SQB_FINALIZE,     /* i stmt -> i rc */
    SQB_BIND_DOUBLE,  /* i stmt, i index, d value -> i rc */
    SQB_BIND_INT64,   /* i stmt, i index, i value -> i rc */
    SQB_BIND_NULL,    /* i stmt, i index -> i rc */
    SQB_BIND_TEXT,    /* i stmt, i index, str value -> i rc */
    SQB_ERRCODE,      /* i db -> i code */
    SQB_ERRMSG,       /* i db -> str message */
    SQB_ERRSTR,       /* i code -> str text */
    SQB_EXTENDED,     /* i db, i on -> i rc */
    SQB_AUTOCOMMIT,   /* i db -> i autocommit */
};

/* Fills the table with the bridged calls after a helper has loaded SQLite once. Returns 0, or -1
 * with the reason in err. A helper is started at the first open and stopped when the last
 * database is closed. */
int rt_sqlite_bridge_install(rt_sqlite_api *t, char *err, size_t cap);

#endif
