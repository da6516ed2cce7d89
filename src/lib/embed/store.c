/* store.c - the embedded tracker's sample store: rows of RT_NCOLS figures kept column by
 * column in blocks, each figure as a float where that is enough (ratios, counts, seconds in
 * the interval) and as a double where exactness matters (time, bytes, MiB, pid, totals). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* How a column is kept:
 *  COL_F - a float (ratios, counts, seconds in the interval: 24 bits are plenty);
 *  COL_D - always a double (Unix time, the CPU total since the start);
 *  COL_X - exact: a float while every value of the block round-trips through a float
 *          unchanged, else the block's column becomes doubles (and so do the later blocks'
 *          columns: a store learns once that e.g. the machine's MiB need doubles). */
enum { COL_F = 0, COL_D = 1, COL_X = 2 };

static const unsigned char col_kind[RT_NCOLS] = {
    [RT_COL_TIMESTAMP] = COL_D,
    [RT_COL_MEM_TOTAL_MIB] = COL_X,
    [RT_COL_MEM_FREE_MIB] = COL_X,
    [RT_COL_MEM_USED_MIB] = COL_X,
    [RT_COL_MEM_BUFFERS_MIB] = COL_X,
    [RT_COL_MEM_CACHED_MIB] = COL_X,
    [RT_COL_MEM_ACTIVE_MIB] = COL_X,
    [RT_COL_MEM_INACTIVE_MIB] = COL_X,
    [RT_COL_MEM_AVAILABLE_MIB] = COL_X,
    [RT_COL_SWAP_USED_MIB] = COL_X,
    [RT_COL_DISK_READ_BYTES] = COL_X,
    [RT_COL_DISK_WRITE_BYTES] = COL_X,
    [RT_COL_DISK_SPACE_TOTAL_BYTES] = COL_X,
    [RT_COL_DISK_SPACE_USED_BYTES] = COL_X,
    [RT_COL_DISK_SPACE_FREE_BYTES] = COL_X,
    [RT_COL_NET_RECV_BYTES] = COL_X,
    [RT_COL_NET_SENT_BYTES] = COL_X,
    [RT_COL_GPU_VRAM_MIB] = COL_X,
    [RT_COL_GPU_VRAM_TOTAL_MIB] = COL_X,
    [RT_COL_PROC_PID] = COL_X,
    [RT_COL_PROC_CPU_SECS_TOTAL] = COL_D,
    [RT_COL_PROC_PSS_MIB] = COL_X,
    [RT_COL_PROC_RSS_MIB] = COL_X,
    [RT_COL_PROC_RSS_PEAK_MIB] = COL_X,
    [RT_COL_PROC_SWAP_MIB] = COL_X,
    [RT_COL_PROC_READ_BYTES] = COL_X,
    [RT_COL_PROC_WRITE_BYTES] = COL_X,
    [RT_COL_PROC_GPU_VRAM_MIB] = COL_X,
};

typedef struct block {
    uint64_t wide; /* bit c: column c holds doubles */
    void *col[RT_NCOLS];
} block;

struct rt_store {
    uint64_t rows_per_block; /* RT_STORE_BLOCK, or max_rows when smaller */
    size_t max_blocks;       /* ceil(max_rows / rows_per_block) + 1 */
    size_t nblocks;          /* blocks holding rows */
    size_t head;             /* ring index of the oldest block */
    uint64_t count, first;   /* rows appended in all; index of the oldest kept (a block start) */
    uint64_t wide;           /* columns that needed doubles in some block */
    size_t bytes;            /* what the store holds */
    block **ring;            /* max_blocks slots, allocated as needed */
};

static bool is_wide(uint64_t mask, int c)
{
    return (mask >> c) & 1u;
}

static bool fits_float(double v)
{
    return isnan(v) || (double)(float)v == v;
}

static size_t col_bytes(const rt_store *s, bool wide)
{
    return (size_t)s->rows_per_block * (wide ? sizeof(double) : sizeof(float));
}

rt_store *rt_store_new(uint64_t max_rows)
{
    if (max_rows < 2)
        max_rows = 2;
    rt_store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->rows_per_block = max_rows < RT_STORE_BLOCK ? max_rows : RT_STORE_BLOCK;
    uint64_t nb = (max_rows + s->rows_per_block - 1) / s->rows_per_block + 1;
    s->max_blocks = (size_t)nb;
    s->ring = calloc(s->max_blocks, sizeof *s->ring);
    if (!s->ring) {
        free(s);
        return NULL;
    }
    for (int c = 0; c < RT_NCOLS; c++)
        if (col_kind[c] == COL_D)
            s->wide |= (uint64_t)1 << c;
    s->bytes = sizeof *s + s->max_blocks * sizeof *s->ring;
    return s;
}

static void block_free(rt_store *s, block *b)
{
    if (!b)
        return;
    for (int c = 0; c < RT_NCOLS; c++) {
        free(b->col[c]);
        s->bytes -= col_bytes(s, is_wide(b->wide, c));
    }
    s->bytes -= sizeof *b;
    free(b);
}

/* Column c of b as doubles, keeping its first n values. -1 when out of memory. */
static int widen(rt_store *s, block *b, int c, uint64_t n)
{
    double *d = malloc(col_bytes(s, true));
    if (!d)
        return -1;
    const float *f = b->col[c];
    for (uint64_t i = 0; i < n; i++)
        d[i] = f[i];
    free(b->col[c]);
    b->col[c] = d;
    b->wide |= (uint64_t)1 << c;
    s->bytes += col_bytes(s, true) - col_bytes(s, false);
    return 0;
}

/* A block whose columns are as wide as the store has learnt they must be: the oldest one
 * recycled when the ring is full (no allocation in the steady state), else a new one. */
static block *next_block(rt_store *s)
{
    block *b;
    if (s->nblocks == s->max_blocks) {
        b = s->ring[s->head];
        s->ring[s->head] = NULL;
        s->head = (s->head + 1) % s->max_blocks;
        s->nblocks--;
        s->first += s->rows_per_block;
        for (int c = 0; c < RT_NCOLS; c++)
            if (is_wide(s->wide, c) && !is_wide(b->wide, c) && widen(s, b, c, 0) < 0) {
                block_free(s, b);
                return NULL;
            }
    } else {
        b = calloc(1, sizeof *b);
        if (!b)
            return NULL;
        b->wide = s->wide;
        for (int c = 0; c < RT_NCOLS; c++)
            if (!(b->col[c] = malloc(col_bytes(s, is_wide(b->wide, c))))) {
                for (int k = 0; k < c; k++)
                    free(b->col[k]);
                free(b);
                return NULL;
            }
        s->bytes += sizeof *b;
        for (int c = 0; c < RT_NCOLS; c++)
            s->bytes += col_bytes(s, is_wide(b->wide, c));
    }
    s->ring[(s->head + s->nblocks) % s->max_blocks] = b;
    s->nblocks++;
    return b;
}

int rt_store_append(rt_store *s, const double row[RT_NCOLS])
{
    uint64_t at = s->count - s->first; /* position among the kept rows */
    block *b;
    if (at == (uint64_t)s->nblocks * s->rows_per_block) {
        b = next_block(s);
        if (!b)
            return -1;
        at = s->count - s->first;
    } else {
        b = s->ring[(s->head + at / s->rows_per_block) % s->max_blocks];
    }
    uint64_t i = at % s->rows_per_block;
    for (int c = 0; c < RT_NCOLS; c++)
        if (!is_wide(b->wide, c) && col_kind[c] == COL_X && !fits_float(row[c])) {
            if (widen(s, b, c, i) < 0)
                return -1;
            s->wide |= (uint64_t)1 << c;
        }
    for (int c = 0; c < RT_NCOLS; c++) {
        if (is_wide(b->wide, c))
            ((double *)b->col[c])[i] = row[c];
        else
            ((float *)b->col[c])[i] = (float)row[c];
    }
    s->count++;
    return 0;
}

uint64_t rt_store_count(const rt_store *s)
{
    return s->count;
}

uint64_t rt_store_first(const rt_store *s)
{
    return s->first;
}

static double cell(const rt_store *s, uint64_t idx, int c)
{
    uint64_t at = idx - s->first;
    const block *b = s->ring[(s->head + at / s->rows_per_block) % s->max_blocks];
    uint64_t i = at % s->rows_per_block;
    return is_wide(b->wide, c) ? ((const double *)b->col[c])[i] : (double)((const float *)b->col[c])[i];
}

size_t rt_store_column(const rt_store *s, int col, uint64_t first, size_t n, double *out)
{
    if (col < 0 || col >= RT_NCOLS || first < s->first || first >= s->count)
        return 0;
    if (n > s->count - first)
        n = (size_t)(s->count - first);
    for (size_t k = 0; k < n; k++)
        out[k] = cell(s, first + k, col);
    return n;
}

int rt_store_row(const rt_store *s, uint64_t idx, double row[RT_NCOLS])
{
    if (idx < s->first || idx >= s->count)
        return -1;
    for (int c = 0; c < RT_NCOLS; c++)
        row[c] = cell(s, idx, c);
    return 0;
}

size_t rt_store_bytes(const rt_store *s)
{
    return s->bytes;
}

void rt_store_free(rt_store *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->max_blocks; k++)
        block_free(s, s->ring[k]);
    free(s->ring);
    free(s);
}
