/* history_db.h - what the run history's database side (history.c) offers the `history`
 * subcommand (history_cmd.c): opening for reading, selecting runs, and two text helpers.
 * Private to the tool; the public entry points are in cli.h. */
#ifndef RT_HISTORY_DB_H
#define RT_HISTORY_DB_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "resource_tracker.h" /* rt_db: an SQLite file or a PostgreSQL URL (resource_tracker/db.h) */

/* Opens the history at path (a file, or a postgresql:// URL) for reading: an SQLite file
 * read-only, or read-write (never creating) when a crashed writer's journal must be rolled back
 * first. Returns the connection (close with rt_db_close), or NULL after saying why (missing
 * file, not a database, no runs table, no server; a URL said without its password). */
rt_db *history_open_read(const char *path);

/* Prepares sql (selecting runs, with ?1 the row limit and ?2 the job when job is not NULL)
 * into *st and binds last (<= 0: no limit) and job (not copied: it must outlive *st). Returns
 * an rt_db result code; *st is to be finalized either way. */
/* path as messages say it: a URL without its password (a static buffer: the latest call's). */
const char *history_shown(const char *path);

int history_query(rt_db *db, const char *sql, const char *job, long last, rt_db_stmt **st);

/* Steps st: true with a row, false at the end or on an error (then *rc holds it). */
bool history_next_row(rt_db_stmt *st, int *rc);

/* Appends s to buf (cap bytes, *len used, kept terminated). Returns 0, or -1 when it does not
 * fit (buf then unchanged). */
int history_put(char *buf, size_t cap, size_t *len, const char *s);

/* A JSON string for s; bytes that are not UTF-8 become '?'. Returns a new reference, or NULL
 * when out of memory. */
json_t *history_json_str_lossy(const char *s);

#endif
