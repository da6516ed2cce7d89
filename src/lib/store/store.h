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
#include "../analysis/record_fields.h"

/* The store's own columns (not the record's: a sample member the record lacks, or an energy
 * method), listed once: OWN(column, its row as columns.c makes it). */
#define RT_STORE_OWN_COLUMNS(OWN)                                                                                      \
    OWN(RT_COL_CPU_RUNNABLE, SMP(cpu, process_count, "cpu_runnable"))                                                  \
    OWN(RT_COL_CPU_UTIME, SMP(cpu, utime_secs, "cpu_utime"))                                                           \
    OWN(RT_COL_CPU_STIME, SMP(cpu, stime_secs, "cpu_stime"))                                                           \
    OWN(RT_COL_MEM_FREE_MIB, SMP_KEEP(memory, free_mib, "memory_free_mib", EXACT))                                     \
    OWN(RT_COL_MEM_BUFFERS_MIB, SMP_KEEP(memory, buffers_mib, "memory_buffers_mib", EXACT))                            \
    OWN(RT_COL_MEM_CACHED_MIB, SMP_KEEP(memory, cached_mib, "memory_cached_mib", EXACT))                               \
    OWN(RT_COL_MEM_ACTIVE_MIB, SMP_KEEP(memory, active_mib, "memory_active_mib", EXACT))                               \
    OWN(RT_COL_MEM_INACTIVE_MIB, SMP_KEEP(memory, inactive_mib, "memory_inactive_mib", EXACT))                         \
    OWN(RT_COL_MEM_AVAILABLE_MIB, SMP_KEEP(memory, available_mib, "memory_available_mib", EXACT))                      \
    OWN(RT_COL_SWAP_USED_MIB, SMP_KEEP(memory, swap_used_mib, "swap_used_mib", EXACT))                                 \
    OWN(RT_COL_DISK_SPACE_FREE_BYTES, SMP_KEEP(sample, disk_space_free_bytes, "disk_space_free_bytes", EXACT))         \
    OWN(RT_COL_PROC_THREADS, SMP(process, thread_count, "process_threads"))                                            \
    OWN(RT_COL_PROC_UTIME, SMP(process, utime_secs, "process_utime"))                                                  \
    OWN(RT_COL_PROC_STIME, SMP(process, stime_secs, "process_stime"))                                                  \
    OWN(RT_COL_PROC_SWAP_MIB, SMP_KEEP(process, swap_mib, "process_swap_mib", EXACT))                                  \
    OWN(RT_COL_ENERGY_METHOD, METHOD(energy_method, "energy_method"))                                                  \
    OWN(RT_COL_PROC_ENERGY_METHOD, METHOD(process_energy_method, "process_energy_method"))
#define RT_STORE_COUNT_OWN(c, row) +1
/* The columns: the record's rows with one (analysis/record_fields.h) and the store's own. A new
 * rt_column (at the public enum's end) is a row of either list, nothing else. */
enum { RT_NCOLS = RT_RECORD_NCOLS + (0 RT_STORE_OWN_COLUMNS(RT_STORE_COUNT_OWN)) };
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
