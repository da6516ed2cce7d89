/* sqlite_dl.h - SQLite for the run history, loaded at first use by the library
 * (resource_tracker/sqlite.h: dlopen of libsqlite3.so.0, or the static build's loader helper):
 * linked in, the library costs every tracking run about 0.9 MiB of RSS at start even when it
 * keeps no history. history.c, history_cmd.c and recommend.c include this (the first two through
 * history_db.h) after <sqlite3.h> and call rt_sqlite_load before any sqlite3_* call, which then
 * goes through the library's table. */
#ifndef RT_CLI_SQLITE_DL_H
#define RT_CLI_SQLITE_DL_H

#include <sqlite3.h>

#include "resource_tracker.h"

/* Each call the library's, once rt_sqlite_load has returned RT_OK. */
#define sqlite3_open_v2 (rt_sqlite_calls()->open_v2)
#define sqlite3_close (rt_sqlite_calls()->close)
#define sqlite3_busy_timeout (rt_sqlite_calls()->busy_timeout)
#define sqlite3_exec (rt_sqlite_calls()->exec)
#define sqlite3_prepare_v2 (rt_sqlite_calls()->prepare_v2)
#define sqlite3_step (rt_sqlite_calls()->step)
#define sqlite3_finalize (rt_sqlite_calls()->finalize)
#define sqlite3_bind_double (rt_sqlite_calls()->bind_double)
#define sqlite3_bind_int (rt_sqlite_calls()->bind_int)
#define sqlite3_bind_int64 (rt_sqlite_calls()->bind_int64)
#define sqlite3_bind_null (rt_sqlite_calls()->bind_null)
#define sqlite3_bind_text (rt_sqlite_calls()->bind_text)
#define sqlite3_column_count (rt_sqlite_calls()->column_count)
#define sqlite3_column_double (rt_sqlite_calls()->column_double)
#define sqlite3_column_int (rt_sqlite_calls()->column_int)
#define sqlite3_column_int64 (rt_sqlite_calls()->column_int64)
#define sqlite3_column_name (rt_sqlite_calls()->column_name)
#define sqlite3_column_text (rt_sqlite_calls()->column_text)
#define sqlite3_column_bytes (rt_sqlite_calls()->column_bytes)
#define sqlite3_column_type (rt_sqlite_calls()->column_type)
#define sqlite3_errcode (rt_sqlite_calls()->errcode)
#define sqlite3_errmsg (rt_sqlite_calls()->errmsg)
#define sqlite3_errstr (rt_sqlite_calls()->errstr)
#define sqlite3_extended_result_codes (rt_sqlite_calls()->extended_result_codes)
#define sqlite3_get_autocommit (rt_sqlite_calls()->get_autocommit)

#endif
