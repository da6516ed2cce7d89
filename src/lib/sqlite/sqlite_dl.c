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
#define SQ(slot) RT_DL_SYM("sqlite3_", rt_sqlite_api, slot)
/* the calls: sqlite3_NAME into rt_sqlite_api's NAME */
static const rt_dl_sym symbols[] = {
    SQ(open_v2), SQ(close), SQ(busy_timeout), SQ(exec), SQ(prepare_v2), SQ(step), SQ(finalize), SQ(bind_double),
    SQ(bind_int), SQ(bind_int64), SQ(bind_null), SQ(bind_text), SQ(column_count), SQ(column_double),
    SQ(column_int), SQ(column_int64), SQ(column_name), SQ(column_text), SQ(column_bytes), SQ(column_type),
    SQ(errcode), SQ(errmsg), SQ(errstr), SQ(extended_result_codes), SQ(get_autocommit),
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
