/* store.h - the embedded tracker's sample store and its columns (internal). A sample is kept
 * as one row of RT_NCOLS figures (see rt_column in the public header), packed by the store
 * into compact types (doubles where exactness needs them, floats for ratios and counts), in
 * blocks of RT_STORE_BLOCK rows allocated as the run grows; past max_rows the oldest block is
 * dropped. Not thread-safe: the tracker holds its lock around every call. */
#ifndef RT_EMBED_STORE_H
#define RT_EMBED_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resource_tracker.h"

#define RT_NCOLS 114         /* RT_COL_SAMPLING_GAP_SECS + 1 */
#define RT_STORE_BLOCK 4096u /* rows per block */

typedef struct rt_store rt_store;

/* The schema's field column col is a copy of (its struct's member), or NULL for a column of the
 * analysis record's figures (or out of range). */
const struct rt_field *rt_column_field(int col);

/* An empty store keeping at most max_rows rows (at least 2; rounded up to whole blocks, plus
 * one block so that dropping the oldest block never leaves fewer than max_rows), or NULL. */
rt_store *rt_store_new(uint64_t max_rows);
/* Appends a row. 0, or -1 when out of memory (the row is not stored). */
int rt_store_append(rt_store *s, const double row[RT_NCOLS]);
/* Rows appended in all, and the index of the oldest kept row. */
uint64_t rt_store_count(const rt_store *s);
uint64_t rt_store_first(const rt_store *s);
/* Column col of up to n rows from index first into out; returns how many. */
size_t rt_store_column(const rt_store *s, int col, uint64_t first, size_t n, double *out);
/* Row idx into row: 0, or -1 when dropped or not yet appended. */
int rt_store_row(const rt_store *s, uint64_t idx, double row[RT_NCOLS]);
/* Pins (true) or unpins (false; as often as pinned) the kept rows: while pinned no row is
 * dropped (a block past max_rows is added instead), so that a reader that copies the rows a
 * chunk at a time between appends (rt_tracker_save) sees every row it started with. The first
 * block added after the last unpin drops what was kept beyond max_rows. */
void rt_store_pin(rt_store *s, bool pin);
/* Bytes the store holds (itself, and its blocks' rows as kept: 4 bytes a float figure, 8 a
 * double; a block reserves address space for doubles, whose untouched pages take no memory). */
size_t rt_store_bytes(const rt_store *s);
void rt_store_free(rt_store *s);
/* Each figure of row as the store keeps it, whatever block it goes to: a float column's figure
 * rounded to a float (beyond a float's range: infinite), the rest unchanged. A row appended
 * and read back is this row. */
void rt_store_keep(double row[RT_NCOLS]);

/* ---- columns.c ---------------------------------------------------------------------------- */

/* One sample as a row (nulls as NaN; the tree's and its cgroup's columns NaN without a tracked
 * tree, the pressure columns then the machine's). */
void rt_row_from_sample(const rt_sample *s, double row[RT_NCOLS]);
/* A record as a row: its figures in their columns, NaN in the columns the record lacks (the
 * interval's user and system CPU seconds among them: a record holds only their sum). */
void rt_row_from_record(const rt_record *r, double row[RT_NCOLS]);
/* A row as the analysis record (as rt_record_from_sample would make of the sample). */
void rt_row_to_record(const double row[RT_NCOLS], rt_record *r);
/* The row's figures written over the record's members that have a column (and the energy
 * methods the row ranks), the rest of r left as it is: a record's own pointers and its
 * process_cpu_secs (a sum the row keeps as its two parts) stay. */
void rt_row_onto_record(const double row[RT_NCOLS], rt_record *r);
/* How the store keeps each column (an rt_keep of record_fields.h), RT_NCOLS of them, from the
 * columns' rows. */
const unsigned char *rt_column_keeps(void);

#endif
