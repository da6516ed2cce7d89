/* sqlite_dl.c - loads SQLite at first use for the run history (see sqlite_dl.h). */
#define CLI_SQLITE_DL_IMPL
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sqlite_bridge.h"
#include "sqlite_dl.h"

cli_sqlite cli_sq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];
static const char *soname = "libsqlite3.so.0";

void cli_sqlite_use(const char *name)
{
    soname = name;
}

/* name -> offset of its pointer in cli_sqlite */
static const struct {
    const char *name;
    size_t offset;
} symbols[] = {
    {"sqlite3_open_v2", offsetof(cli_sqlite, open_v2)},
    {"sqlite3_close", offsetof(cli_sqlite, close)},
    {"sqlite3_busy_timeout", offsetof(cli_sqlite, busy_timeout)},
    {"sqlite3_exec", offsetof(cli_sqlite, exec)},
    {"sqlite3_prepare_v2", offsetof(cli_sqlite, prepare_v2)},
    {"sqlite3_step", offsetof(cli_sqlite, step)},
    {"sqlite3_finalize", offsetof(cli_sqlite, finalize)},
    {"sqlite3_bind_double", offsetof(cli_sqlite, bind_double)},
    {"sqlite3_bind_int", offsetof(cli_sqlite, bind_int)},
    {"sqlite3_bind_int64", offsetof(cli_sqlite, bind_int64)},
    {"sqlite3_bind_null", offsetof(cli_sqlite, bind_null)},
    {"sqlite3_bind_text", offsetof(cli_sqlite, bind_text)},
    {"sqlite3_column_count", offsetof(cli_sqlite, column_count)},
    {"sqlite3_column_double", offsetof(cli_sqlite, column_double)},
    {"sqlite3_column_int", offsetof(cli_sqlite, column_int)},
    {"sqlite3_column_int64", offsetof(cli_sqlite, column_int64)},
    {"sqlite3_column_name", offsetof(cli_sqlite, column_name)},
    {"sqlite3_column_text", offsetof(cli_sqlite, column_text)},
    {"sqlite3_column_bytes", offsetof(cli_sqlite, column_bytes)},
    {"sqlite3_column_type", offsetof(cli_sqlite, column_type)},
    {"sqlite3_errcode", offsetof(cli_sqlite, errcode)},
    {"sqlite3_errmsg", offsetof(cli_sqlite, errmsg)},
    {"sqlite3_errstr", offsetof(cli_sqlite, errstr)},
    {"sqlite3_extended_result_codes", offsetof(cli_sqlite, extended_result_codes)},
    {"sqlite3_get_autocommit", offsetof(cli_sqlite, get_autocommit)},
};

static void load(void)
{
#ifdef RT_STATIC_BUILD /* no loader here: a helper loads the target's SQLite (sqlite_bridge.h) */
    char why[sizeof load_error - 40];
    if (cli_sqlite_bridge_install(&cli_sq, why, sizeof why) == 0)
        return;
    if (strncmp(why, "cannot load ", 12) == 0) /* the helper's own words */
        snprintf(load_error, sizeof load_error, "%s", why);
    else
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", soname, why);
    return;
#endif
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s (%s)", soname, e ? e : "unknown error");
        return;
    }
    cli_sqlite t;
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *f = dlsym(h, symbols[i].name);
        if (!f) {
            snprintf(load_error, sizeof load_error, "%s lacks %s", soname, symbols[i].name);
            dlclose(h);
            return;
        }
        memcpy((char *)&t + symbols[i].offset, &f, sizeof f); /* a data pointer into a function pointer slot, as dlsym(3) allows */
    }
    cli_sq = t;
}

int cli_sqlite_load(char *err, size_t cap)
{
    pthread_once(&once, load);
    if (!load_error[0])
        return 0;
    snprintf(err, cap, "%s", load_error);
    return -1;
}
