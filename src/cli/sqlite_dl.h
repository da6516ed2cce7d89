/* sqlite_dl.h - SQLite for the run history, loaded at first use (dlopen of libsqlite3.so.0):
 * linked in, the library costs every tracking run about 0.9 MiB of RSS at start even when it
 * keeps no history. history.c and history_cmd.c include this (through history_db.h) after
 * <sqlite3.h>; their sqlite3_* calls go through the table below. */
#ifndef RT_CLI_SQLITE_DL_H
#define RT_CLI_SQLITE_DL_H

#include <stddef.h>

#include <sqlite3.h>

/* The functions history.c calls, resolved by cli_sqlite_load(). */
typedef struct cli_sqlite {
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*close)(sqlite3 *);
    int (*busy_timeout)(sqlite3 *, int);
    int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*step)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    int (*bind_double)(sqlite3_stmt *, int, double);
    int (*bind_int)(sqlite3_stmt *, int, int);
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
    int (*column_count)(sqlite3_stmt *);
    double (*column_double)(sqlite3_stmt *, int);
    int (*column_int)(sqlite3_stmt *, int);
    sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
    const char *(*column_name)(sqlite3_stmt *, int);
    const unsigned char *(*column_text)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
    int (*column_type)(sqlite3_stmt *, int);
    int (*errcode)(sqlite3 *);
    const char *(*errmsg)(sqlite3 *);
    const char *(*errstr)(int);
    int (*extended_result_codes)(sqlite3 *, int);
    int (*get_autocommit)(sqlite3 *);
} cli_sqlite;

extern cli_sqlite cli_sq;

/* Loads libsqlite3.so.0 and resolves the table, once (later calls return the first answer).
 * Returns 0, or -1 with the reason (the dlerror text) in err. */
int cli_sqlite_load(char *err, size_t cap);

/* For tests: the library the first cli_sqlite_load opens instead of libsqlite3.so.0 (soname
 * must outlive it; no effect once loaded). */
void cli_sqlite_use(const char *soname);

#ifndef CLI_SQLITE_DL_IMPL
#define sqlite3_open_v2 cli_sq.open_v2
#define sqlite3_close cli_sq.close
#define sqlite3_busy_timeout cli_sq.busy_timeout
#define sqlite3_exec cli_sq.exec
#define sqlite3_prepare_v2 cli_sq.prepare_v2
#define sqlite3_step cli_sq.step
#define sqlite3_finalize cli_sq.finalize
#define sqlite3_bind_double cli_sq.bind_double
#define sqlite3_bind_int cli_sq.bind_int
#define sqlite3_bind_int64 cli_sq.bind_int64
#define sqlite3_bind_null cli_sq.bind_null
#define sqlite3_bind_text cli_sq.bind_text
#define sqlite3_column_count cli_sq.column_count
#define sqlite3_column_double cli_sq.column_double
#define sqlite3_column_int cli_sq.column_int
#define sqlite3_column_int64 cli_sq.column_int64
#define sqlite3_column_name cli_sq.column_name
#define sqlite3_column_text cli_sq.column_text
#define sqlite3_column_bytes cli_sq.column_bytes
#define sqlite3_column_type cli_sq.column_type
#define sqlite3_errcode cli_sq.errcode
#define sqlite3_errmsg cli_sq.errmsg
#define sqlite3_errstr cli_sq.errstr
#define sqlite3_extended_result_codes cli_sq.extended_result_codes
#define sqlite3_get_autocommit cli_sq.get_autocommit
#endif

#endif
