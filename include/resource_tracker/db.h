/* resource_tracker/db.h - a run history's database, one set of calls for two engines: an SQLite
 * file (through rt_sqlite_load, sqlite.h) or a PostgreSQL server named by a postgresql:// URL
 * (through libpq.so.5, loaded with dlopen at first use: neither the library nor a program built on
 * it links libpq). Open, run a statement, prepare one with numbered parameters (?N or ?, made $N
 * for PostgreSQL), bind text, real, integer or NULL, step its rows, read their columns, close; and
 * the few places the two dialects differ. Result codes are SQLite's numbers for both engines.
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_DB_H)
#define RESOURCE_TRACKER_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * A history's database (experimental: may change in a minor version) */

typedef struct rt_db rt_db;
typedef struct rt_db_stmt rt_db_stmt;

typedef enum rt_db_engine { RT_DB_SQLITE = 1, RT_DB_POSTGRES = 2 } rt_db_engine;

/* Result codes: SQLite's numbers (a PostgreSQL error is made one of them). */
enum {
    RT_DB_OK = 0,
    RT_DB_ERROR = 1,      /* any other error (the message says which) */
    RT_DB_BUSY = 5,       /* another writer holds it past the wait; PostgreSQL: a lock or the deadline */
    RT_DB_LOCKED = 6,
    RT_DB_NOMEM = 7,
    RT_DB_READONLY = 8,
    RT_DB_READONLY_ROLLBACK = 8 | (3 << 8), /* SQLite: a hot journal a read-only connection cannot roll back */
    RT_DB_CORRUPT = 11,
    RT_DB_FULL = 13,      /* PostgreSQL: disk full (SQLSTATE 53100) */
    RT_DB_CANTOPEN = 14,  /* PostgreSQL: no connection (down, refused, the password refused) */
    RT_DB_TOOBIG = 18,
    RT_DB_CONSTRAINT = 19,
    RT_DB_MISMATCH = 20,
    RT_DB_MISUSE = 21,
    RT_DB_ROW = 100,
    RT_DB_DONE = 101,
};

/* Column value types: SQLite's numbers. */
enum { RT_DB_INTEGER = 1, RT_DB_FLOAT = 2, RT_DB_TEXT = 3, RT_DB_NULL = 5 };

/* Open flags: SQLite's numbers (PostgreSQL takes none of them; it never creates a database). */
enum {
    RT_DB_OPEN_READONLY = 0x1,
    RT_DB_OPEN_READWRITE = 0x2,
    RT_DB_OPEN_CREATE = 0x4,
    RT_DB_OPEN_NOFOLLOW = 0x01000000,
};

/* Whether target is a PostgreSQL URL (postgresql:// or postgres://) rather than a file name. */
RT_API bool rt_db_is_url(const char *target);

/* target with any password taken out (the URL's user:password@ and a password= parameter), for
 * messages and files; a file name is copied as it is. Writes at most cap bytes (terminated).
 * Returns the length of the whole text (as snprintf). */
RT_API int rt_db_redact(const char *target, char *out, size_t cap);

/* The start (in target) and length of the password a URL carries in its user:password@ part; 0
 * when none. Lets a program overwrite it in its own argv once it has a copy. */
RT_API size_t rt_db_url_password(const char *target, size_t *start);

/* Loads libpq.so.5, once per process. Returns RT_OK, or RT_ERR_UNSUPPORTED with what to
 * install in err[cap] (the static build: a PostgreSQL history needs the dynamically linked
 * tool). Thread-safe. */
RT_API rt_error rt_pg_load(char *err, size_t cap);

/* For tests: the library the first rt_pg_load opens instead of libpq.so.5 (soname must outlive
 * it; no effect once loaded). */
RT_API void rt_pg_use(const char *soname);

/* Opens target: a URL through libpq (its password from the URL, PGPASSFILE, ~/.pgpass or
 * PGSERVICE as libpq finds it; sslmode as the URL says), else an SQLite file with flags
 * (RT_DB_OPEN_*; extended result codes on; busy_ms the wait for another writer's lock).
 * deadline: CLOCK_MONOTONIC seconds by which every wait of this connection ends (connecting,
 * each statement: past it a call fails with RT_DB_BUSY and the connection is dropped, the
 * server rolling back what was begun); 0: none (libpq's own connect_timeout from the URL).
 * Returns RT_DB_OK with *out, or a code with *out NULL and why in err[cap] (never the password).
 * Either way *out is closed with rt_db_close. */
RT_API int rt_db_open(const char *target, int flags, int busy_ms, double deadline, rt_db **out, char *err,
                      size_t cap);
RT_API void rt_db_close(rt_db *db);
RT_API rt_db_engine rt_db_engine_of(const rt_db *db);

/* Runs sql (one or more statements, no rows wanted). */
RT_API int rt_db_exec(rt_db *db, const char *sql);
/* Prepares one statement; its parameters ?N (or ? in order). *st is finalized either way. */
RT_API int rt_db_prepare(rt_db *db, const char *sql, rt_db_stmt **st);
RT_API int rt_db_bind_text(rt_db_stmt *st, int i, const char *s); /* copied; NULL: NULL */
RT_API int rt_db_bind_real(rt_db_stmt *st, int i, double v);
RT_API int rt_db_bind_int(rt_db_stmt *st, int i, int64_t v);
RT_API int rt_db_bind_null(rt_db_stmt *st, int i);
/* RT_DB_ROW with a row, RT_DB_DONE at the end, or an error code. */
RT_API int rt_db_step(rt_db_stmt *st);
RT_API int rt_db_finalize(rt_db_stmt *st);
RT_API int rt_db_column_count(rt_db_stmt *st);
RT_API const char *rt_db_column_name(rt_db_stmt *st, int i);
RT_API int rt_db_column_type(rt_db_stmt *st, int i); /* RT_DB_INTEGER, _FLOAT, _TEXT, _NULL */
RT_API const char *rt_db_column_text(rt_db_stmt *st, int i); /* NULL for NULL */
RT_API double rt_db_column_double(rt_db_stmt *st, int i);
RT_API int64_t rt_db_column_int64(rt_db_stmt *st, int i);

/* The last error: its code, its message (never NULL), and a code's words. */
RT_API int rt_db_errcode(rt_db *db);
RT_API const char *rt_db_errmsg(rt_db *db);
RT_API const char *rt_db_errstr(int code);
/* Whether a transaction is open (to roll back after an error). */
RT_API bool rt_db_in_transaction(rt_db *db);

/* ---- where the dialects differ ---- */

/* Begins a write transaction that writers queue on: SQLite's BEGIN IMMEDIATE; PostgreSQL's BEGIN
 * with a transaction-scoped advisory lock (so that two first runs never both create the table). */
RT_API int rt_db_begin_write(rt_db *db);
/* The schema version: SQLite's PRAGMA user_version; PostgreSQL's one-row table rt_schema
 * (0 when it has none). Set within the write transaction. */
RT_API int rt_db_get_version(rt_db *db, int *version);
RT_API int rt_db_set_version(rt_db *db, int version);
/* Calls each(arg, name) for every column of table, in order (none: no such table). */
RT_API int rt_db_columns(rt_db *db, const char *table, void (*each)(void *, const char *), void *arg);
/* The SQL type of a column kind: 'T' text, 'I' integer, 'R' real (DOUBLE PRECISION, BIGINT in
 * PostgreSQL); and the table's id column with its type. */
RT_API const char *rt_db_sql_type(const rt_db *db, char kind);
RT_API const char *rt_db_sql_id(const rt_db *db);
/* An INSERT that leaves out a row a unique index has already: the words before the table's name
 * ("INSERT OR IGNORE INTO" / "INSERT INTO") and after the values ("" / " ON CONFLICT DO NOTHING"). */
RT_API const char *rt_db_sql_insert_head(const rt_db *db);
RT_API const char *rt_db_sql_insert_tail(const rt_db *db);

#ifdef __cplusplus
}
#endif

#endif
