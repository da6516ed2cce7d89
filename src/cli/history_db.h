/* history_db.h - what the run history's database side (history.c) offers the `history`
 * subcommand (history_cmd.c) and its export and import (history_io.c): opening, selecting runs,
 * the columns, and text helpers.
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

/* path as messages say it: a URL without its password (a static buffer: the latest call's). */
const char *history_shown(const char *path);

/* Opens the history at path (a file, or a postgresql:// URL) for writing (an SQLite file made
 * when missing; a link refused as a tracking run's history is; the network file system warning
 * said) and begins its write transaction (rt_db_begin_write), its table made or migrated; every
 * wait of a PostgreSQL connection ends by deadline (CLOCK_MONOTONIC seconds). Returns the
 * connection with *rc the result code so far (not RT_DB_OK: say it, roll back and close); or
 * NULL with *rc -1 after a warning ending in "(what)" (the path refused, a newer tool's
 * history), or NULL with *rc the open's code and why[whycap] its reason, not said (no SQLite,
 * no libpq, no server). */
rt_db *history_begin_write(const char *path, const char *what, double deadline, int *rc, char *why, size_t whycap);

/* The history's columns after id, in table order (history.c's table): how many, the name of the
 * i-th (NULL past the end), what it holds ('T' text, 'I' integer, 'R' real; 0 past the end), and
 * all their names joined by ", " into buf[cap] (0, or -1 when it does not fit). */
size_t history_ncols(void);
const char *history_col_name(size_t i);
char history_col_kind(size_t i);
int history_col_names(char *buf, size_t cap);

/* `history --export FILE` (history_io.c): every run of the history at path, oldest first, as JSON
 * lines to file ("-": stdout). `--import FILE`: the runs of such lines added to the history at path
 * (made when missing), a run whose run_uuid is there skipped; all or nothing. Each returns the
 * exit status after saying what it did or why not. */
int cli_history_export(const char *path, const char *file);
int cli_history_import(const char *path, const char *file);

/* Whether the runs table of db has the column called name (one of the tool's: an older database
 * lacks the newer columns until its next write). */
bool history_has_column(rt_db *db, const char *name);

/* Steps st: true with a row, false at the end or on an error (then *rc holds it). */
bool history_next_row(rt_db_stmt *st, int *rc);

/* Appends s to buf (cap bytes, *len used, kept terminated). Returns 0, or -1 when it does not
 * fit (buf then unchanged). */
int history_put(char *buf, size_t cap, size_t *len, const char *s);

/* A JSON string for s; bytes that are not UTF-8 become '?'. Returns a new reference, or NULL
 * when out of memory. */
json_t *history_json_str_lossy(const char *s);

#endif
