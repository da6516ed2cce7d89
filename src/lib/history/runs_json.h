/* runs_json.h - what runs_json.c offers the history's reader (read.c): the pool of a read's
 * strings, and the "cores", "phases" and "member" columns' JSON text parsed. Private to the
 * library. */
#ifndef RT_HISTORY_RUNS_JSON_H
#define RT_HISTORY_RUNS_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "resource_tracker.h"

/* A growing pool of NUL-terminated strings. */
typedef struct history_pool {
    char *text;
    size_t len, cap;
    bool oom; /* a string could not be added */
} history_pool;

/* A copy of t into the pool; returns its offset + 1, or 0 for NULL (or out of memory, which
 * p->oom records). */
size_t history_pool_put(history_pool *p, const char *t);

/* A run's member from its JSON text (NULL: none): its numbers into *m, its strings into the pool
 * (offsets + 1 into off: job_id, step_id, node, from; 0 for none). */
void history_member_parse(const char *text, rt_member *m, size_t off[4], history_pool *p);

/* A run's table read back from its "cores" column: the table, its rows on the heap. */
typedef struct history_cores {
    rt_cores_table t; /* n 0: none */
    rt_cores_row *rows;
} history_cores;

/* Reads the "cores" column text (the summary's JSON "cores", in seconds) into *h: n 0 when the
 * text is NULL, not such an object, or out of memory (the run then asks by the mean rule). */
void history_cores_parse(const char *text, history_cores *h);

/* A phase summary with every figure null (NaN) but its name and table, set after. */
void history_phase_clear(rt_phase_summary *p);

/* A run's phases as the history has them (the summary's JSON "phases", 0.14; each phase's
 * table since 0.18): the names and tables of those with a table. */
typedef struct history_phases {
    size_t n;
    char **names;
    history_cores *tabs;
    size_t rows, name_bytes; /* the tables' rows, and the names' bytes with their NULs */
} history_phases;

/* Reads the "phases" column text into *h (n 0: none with a table, or out of memory: the run
 * then names no phase); history_phases_free frees what it holds. */
void history_phases_parse(const char *text, history_phases *h);
void history_phases_free(history_phases *h);

#endif
