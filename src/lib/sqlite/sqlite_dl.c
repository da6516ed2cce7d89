/* sqlite_dl.c - SQLite loaded at first use (resource_tracker/sqlite.h): libsqlite3.so.0 opened
 * and its calls resolved into one table by core/dl.c's rt_dl_load, or in the static build the
 * table of calls that the loader helper answers (sqlite_bridge.h). Also built into the helper program
 * (src/lib/bridge/), which loads the target's SQLite with it. */
#include <stdio.h>
#include <string.h>

#include "../core/dl.h"
#include "resource_tracker.h"
#include "sqlite_bridge.h"

static rt_sqlite_api calls;
static char load_error[256];
static rt_dl_lazy lib = RT_DL_LAZY_INIT("libsqlite3.so.0", load_error);

void rt_sqlite_use(const char *name)
{
    lib.soname = name;
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
        rt_dl_lazy_done(&lib, &calls);
        return;
    }
    if (strncmp(why, "cannot load ", 12) == 0) /* the helper's own words */
        snprintf(load_error, sizeof load_error, "%s", why);
    else
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", lib.soname, why);
#else
    rt_sqlite_api t;
    char why[sizeof load_error - 40];
    if (!rt_dl_load(lib.soname, symbols, sizeof symbols / sizeof symbols[0], &t, why, sizeof why)) {
        snprintf(load_error, sizeof load_error, "cannot load %s (%s)", lib.soname, why);
        return;
    }
    calls = t;
    rt_dl_lazy_done(&lib, &calls);
#endif
}

rt_error rt_sqlite_load(char *err, size_t cap)
{
    return rt_dl_lazy_load(&lib, load, err, cap);
}

const rt_sqlite_api *rt_sqlite_calls(void)
{
    return rt_dl_lazy_calls(&lib);
}
