/* sqlite_dl.c - SQLite loaded at first use (resource_tracker/sqlite.h): libsqlite3.so.0 opened
 * and its calls resolved into one table by core/dl.c's rt_dl_load, or in the static build the
 * table of calls that the loader helper answers (sqlite_bridge.h). Also built into the helper program
 * (src/lib/bridge/), which loads the target's SQLite with it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/dl.h"
#include "resource_tracker.h"
#include "sqlite_bridge.h"

static rt_sqlite_api calls;
static const rt_sqlite_api *_Atomic ready; /* &calls once loaded */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];
static const char *soname = "libsqlite3.so.0";

void rt_sqlite_use(const char *name)
{
    soname = name;
}

#ifndef RT_STATIC_BUILD
/* name -> offset of its pointer in rt_sqlite_api */
static const rt_dl_sym symbols[] = {
    {"sqlite3_open_v2", offsetof(rt_sqlite_api, open_v2)},
    {"sqlite3_close", offsetof(rt_sqlite_api, close)},
    {"sqlite3_busy_timeout", offsetof(rt_sqlite_api, busy_timeout)},
    {"sqlite3_exec", offsetof(rt_sqlite_api, exec)},
    {"sqlite3_prepare_v2", offsetof(rt_sqlite_api, prepare_v2)},
    {"sqlite3_step", offsetof(rt_sqlite_api, step)},
    {"sqlite3_finalize", offsetof(rt_sqlite_api, finalize)},
    {"sqlite3_bind_double", offsetof(rt_sqlite_api, bind_double)},
    {"sqlite3_bind_int", offsetof(rt_sqlite_api, bind_int)},
    {"sqlite3_bind_int64", offsetof(rt_sqlite_api, bind_int64)},
    {"sqlite3_bind_null", offsetof(rt_sqlite_api, bind_null)},
    {"sqlite3_bind_text", offsetof(rt_sqlite_api, bind_text)},
    {"sqlite3_column_count", offsetof(rt_sqlite_api, column_count)},
    {"sqlite3_column_double", offsetof(rt_sqlite_api, column_double)},
    {"sqlite3_column_int", offsetof(rt_sqlite_api, column_int)},
    {"sqlite3_column_int64", offsetof(rt_sqlite_api, column_int64)},
    {"sqlite3_column_name", offsetof(rt_sqlite_api, column_name)},
    {"sqlite3_column_text", offsetof(rt_sqlite_api, column_text)},
    {"sqlite3_column_bytes", offsetof(rt_sqlite_api, column_bytes)},
    {"sqlite3_column_type", offsetof(rt_sqlite_api, column_type)},
    {"sqlite3_errcode", offsetof(rt_sqlite_api, errcode)},
    {"sqlite3_errmsg", offsetof(rt_sqlite_api, errmsg)},
    {"sqlite3_errstr", offsetof(rt_sqlite_api, errstr)},
    {"sqlite3_extended_result_codes", offsetof(rt_sqlite_api, extended_result_codes)},
    {"sqlite3_get_autocommit", offsetof(rt_sqlite_api, get_autocommit)},
};
#endif

static void load(void)
{
#ifdef RT_STATIC_BUILD /* no loader here: a helper loads the target's SQLite (sqlite_bridge.h) */
    char why[sizeof load_error - 40];
    if (rt_sqlite_bridge_install(&calls, why, sizeof why) == 0) {
        atomic_store(&ready, &calls);
        return;
    }
    if (strncmp(why, "cannot load ", 12) == 0) /* the helper's own words */
        snprintf(load_error, sizeof load_error, "%s", why);
    else
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", soname, why);
#else
    rt_sqlite_api t;
    char why[sizeof load_error - 40];
    if (!rt_dl_load(soname, symbols, sizeof symbols / sizeof symbols[0], &t, why, sizeof why)) {
        snprintf(load_error, sizeof load_error, "cannot load %s (%s)", soname, why);
        return;
    }
    calls = t;
    atomic_store(&ready, &calls);
#endif
}

rt_error rt_sqlite_load(char *err, size_t cap)
{
    pthread_once(&once, load);
    if (atomic_load(&ready))
        return RT_OK;
    snprintf(err, cap, "%s", load_error);
    return RT_ERR_UNSUPPORTED;
}

const rt_sqlite_api *rt_sqlite_calls(void)
{
    return atomic_load(&ready);
}
