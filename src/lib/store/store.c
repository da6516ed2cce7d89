/* store.c - the embedded tracker's sample store: rows of RT_NCOLS figures kept column by
 * column in blocks, each figure as a float where that is enough (ratios, counts, seconds in
 * the interval, pressure percents) and as a double where exactness matters (time, bytes, MiB,
 * pid, totals, the cgroup's counters). */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/record_fields.h"
#include "store.h"

/* How a column is kept (its row's rt_keep: record_fields.c, columns.c):
 *  RT_KEEP_FLOAT - a float (ratios, counts, seconds in the interval: 24 bits are plenty);
 *  RT_KEEP_DOUBLE - always a double (Unix time, the CPU total since the start);
 *  RT_KEEP_EXACT - a float while every value of the block round-trips through a float
 *          unchanged, else the block's column becomes doubles (and so do the later blocks'
 *          columns: a store learns once that e.g. the machine's MiB need doubles). */

/* A set of columns: bit c of word c / 64. */
typedef struct colmask {
    uint64_t w[2];
} colmask;
_Static_assert(RT_NCOLS <= 128, "a store's column masks hold 128 columns");

/* A block is one allocation with room for every column as doubles (large enough that malloc
 * maps fresh pages for it): a float column fills the first half of its room, and the pages of
 * the other half are never touched, so they take no memory. Widening a column is done in
 * place, without allocating. */
typedef struct block {
    colmask wide; /* column c holds doubles */
    unsigned char *mem;
} block;

struct rt_store {
    uint64_t rows_per_block; /* RT_STORE_FIRST_ROWS until the first block fills (its rows then
                              * copied into a full one), then RT_STORE_BLOCK, or max_rows when
                              * smaller (see rt_store_new) */
    uint64_t full_rows;      /* what rows_per_block becomes */
    uint64_t max_rows;
    uint64_t max_blocks;     /* ceil(max_rows / rows_per_block) + 1 */
    size_t nblocks;          /* blocks holding rows */
    size_t head;             /* ring index of the oldest block */
    uint64_t count, first;   /* rows appended in all; index of the oldest kept (a block start) */
    colmask wide;            /* columns that needed doubles in some block */
    size_t bytes;            /* what the store holds */
    unsigned pins;           /* rt_store_pin calls not yet undone: no block is dropped */
    size_t cap;              /* slots of ring: grown (doubling) as blocks are added */
    block **ring;
    const unsigned char *keep; /* how each column is kept (rt_column_keeps) */
};

static bool is_wide(colmask mask, int c)
{
    return (mask.w[c / 64] >> (c % 64)) & 1u;
}

static void set_wide(colmask *mask, int c)
{
    mask->w[c / 64] |= (uint64_t)1 << (c % 64);
}

static bool fits_float(double v)
{
    return isnan(v) || (fabs(v) <= FLT_MAX && (double)(float)v == v) || isinf(v);
}

/* The bytes a column's rows take (float or double), which is what the store counts as held. */
static size_t col_bytes(const rt_store *s, bool wide)
{
    return (size_t)s->rows_per_block * (wide ? sizeof(double) : sizeof(float));
}

static unsigned char *col_at(const rt_store *s, const block *b, int c)
{
    return b->mem + (size_t)c * col_bytes(s, true);
}

/* A block's rooms are as long as rows_per_block doubles each, so the first row of a block
 * touches a page of every column: 114 pages, 456 KiB, for a store of a few rows (an embedded
 * tracker of a short job; the Python package's footprint). The first block is therefore
 * RT_STORE_FIRST_ROWS rows (its rooms share pages: 114 KiB in all), and once it is full its rows
 * move into a block of the full size, which every block after it has. */
#define RT_STORE_FIRST_ROWS 128u

static void blocks_for(rt_store *s)
{
    uint64_t max_rows = s->max_rows;
    s->max_blocks = max_rows / s->rows_per_block + (max_rows % s->rows_per_block != 0) + 1;
}

rt_store *rt_store_new(uint64_t max_rows)
{
    if (max_rows < 2)
        max_rows = 2;
    rt_store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_rows = max_rows;
    s->full_rows = max_rows < RT_STORE_BLOCK ? max_rows : RT_STORE_BLOCK;
    s->rows_per_block = s->full_rows < RT_STORE_FIRST_ROWS ? s->full_rows : RT_STORE_FIRST_ROWS;
    /* without overflow for any max_rows; the ring grows with the blocks, so a huge max_rows
     * reserves nothing up front */
    blocks_for(s);
    s->keep = rt_column_keeps();
    for (int c = 0; c < RT_NCOLS; c++)
        if (s->keep[c] == RT_KEEP_DOUBLE)
            set_wide(&s->wide, c);
    s->bytes = sizeof *s;
    return s;
}

/* A ring with room for one more block (head 0 after it moved): 0, or -1 out of memory. */
static int ring_room(rt_store *s)
{
    if (s->nblocks < s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 4;
    if (cap > s->max_blocks && s->nblocks < s->max_blocks)
        cap = (size_t)s->max_blocks; /* exactly what the store needs when it is not pinned */
    if (cap <= s->nblocks || cap > SIZE_MAX / sizeof *s->ring)
        return -1;
    block **r = calloc(cap, sizeof *r);
    if (!r)
        return -1;
    for (size_t k = 0; k < s->nblocks; k++)
        r[k] = s->ring[(s->head + k) % s->cap];
    free(s->ring);
    s->bytes += (cap - s->cap) * sizeof *r;
    s->ring = r;
    s->cap = cap;
    s->head = 0;
    return 0;
}

static void block_free(rt_store *s, block *b)
{
    if (!b)
        return;
    for (int c = 0; c < RT_NCOLS; c++)
        s->bytes -= col_bytes(s, is_wide(b->wide, c));
    s->bytes -= sizeof *b;
    free(b->mem);
    free(b);
}

/* Column c of b as doubles, keeping its first n values: converted in place from the last
 * (double i covers floats 2i and 2i+1, which are converted already, for i > 0). */
static void widen(rt_store *s, block *b, int c, uint64_t n)
{
    unsigned char *m = col_at(s, b, c);
    for (uint64_t i = n; i-- > 0;) {
        float f;
        memcpy(&f, m + i * sizeof f, sizeof f);
        double d = f;
        memcpy(m + i * sizeof d, &d, sizeof d);
    }
    set_wide(&b->wide, c);
    set_wide(&s->wide, c);
    s->bytes += col_bytes(s, true) - col_bytes(s, false);
}

/* A block whose columns are as wide as the store has learnt they must be: the oldest one
 * recycled when the ring is full (no allocation in the steady state), else a new one. */
/* The oldest block taken out of the ring (its rows dropped). */
static block *drop_oldest(rt_store *s)
{
    block *b = s->ring[s->head];
    s->ring[s->head] = NULL;
    s->head = (s->head + 1) % s->cap;
    s->nblocks--;
    s->first += s->rows_per_block;
    return b;
}

static block *next_block(rt_store *s)
{
    block *b;
    if (s->nblocks >= s->max_blocks && !s->pins) {
        while (s->nblocks > s->max_blocks) /* blocks added while pinned */
            block_free(s, drop_oldest(s));
        b = drop_oldest(s);
        for (int c = 0; c < RT_NCOLS; c++)
            if (is_wide(s->wide, c) && !is_wide(b->wide, c))
                widen(s, b, c, 0);
    } else {
        if (ring_room(s) < 0)
            return NULL;
        b = calloc(1, sizeof *b);
        if (!b || !(b->mem = malloc(col_bytes(s, true) * RT_NCOLS))) {
            free(b);
            return NULL;
        }
        b->wide = s->wide;
        s->bytes += sizeof *b;
        for (int c = 0; c < RT_NCOLS; c++)
            s->bytes += col_bytes(s, is_wide(b->wide, c));
    }
    s->ring[(s->head + s->nblocks) % s->cap] = b;
    s->nblocks++;
    return b;
}

/* A figure as a float: beyond a float's range, infinite (a plain conversion would be undefined). */
static float to_float(double v)
{
    if (v > FLT_MAX)
        return INFINITY;
    if (v < -FLT_MAX)
        return -INFINITY;
    return (float)v;
}

void rt_store_keep(double row[RT_NCOLS])
{
    const unsigned char *keep = rt_column_keeps();
    for (int c = 0; c < RT_NCOLS; c++)
        if (keep[c] == RT_KEEP_FLOAT)
            row[c] = to_float(row[c]);
}

/* The first block, full at RT_STORE_FIRST_ROWS rows, made one of the full size: its rows
 * copied column by column (each as wide as it was), the small one freed. 0, or -1 out of
 * memory (the store then goes on with blocks of the small size, which read back the same). */
static int grow_first(rt_store *s)
{
    block *small = s->ring[s->head], *b = calloc(1, sizeof *b);
    uint64_t rows = s->rows_per_block;
    if (!b || !(b->mem = malloc((size_t)s->full_rows * sizeof(double) * RT_NCOLS))) {
        free(b);
        return -1;
    }
    b->wide = small->wide;
    for (int c = 0; c < RT_NCOLS; c++) {
        size_t each = is_wide(small->wide, c) ? sizeof(double) : sizeof(float);
        memcpy(b->mem + (size_t)c * s->full_rows * sizeof(double), col_at(s, small, c), rows * each);
    }
    block_free(s, small);
    s->rows_per_block = s->full_rows;
    blocks_for(s);
    s->bytes += sizeof *b;
    for (int c = 0; c < RT_NCOLS; c++)
        s->bytes += col_bytes(s, is_wide(b->wide, c));
    s->ring[s->head] = b;
    return 0;
}

int rt_store_append(rt_store *s, const double row[RT_NCOLS])
{
    uint64_t at = s->count - s->first; /* position among the kept rows */
    block *b;
    if (at == s->rows_per_block && s->nblocks == 1 && s->rows_per_block < s->full_rows && s->first == 0 &&
        !s->pins)
        grow_first(s); /* (out of memory: small blocks from here on) */
    if (at == (uint64_t)s->nblocks * s->rows_per_block) {
        b = next_block(s);
        if (!b)
            return -1;
        at = s->count - s->first;
    } else {
        b = s->ring[(s->head + at / s->rows_per_block) % s->cap];
    }
    uint64_t i = at % s->rows_per_block;
    for (int c = 0; c < RT_NCOLS; c++) {
        if (!is_wide(b->wide, c) && s->keep[c] == RT_KEEP_EXACT && !fits_float(row[c]))
            widen(s, b, c, i);
        unsigned char *m = col_at(s, b, c);
        if (is_wide(b->wide, c)) {
            memcpy(m + i * sizeof(double), &row[c], sizeof(double));
        } else {
            float f = to_float(row[c]);
            memcpy(m + i * sizeof f, &f, sizeof f);
        }
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
    const block *b = s->ring[(s->head + at / s->rows_per_block) % s->cap];
    uint64_t i = at % s->rows_per_block;
    const unsigned char *m = col_at(s, b, c);
    if (is_wide(b->wide, c)) {
        double d;
        memcpy(&d, m + i * sizeof d, sizeof d);
        return d;
    }
    float f;
    memcpy(&f, m + i * sizeof f, sizeof f);
    return f;
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

void rt_store_pin(rt_store *s, bool pin)
{
    if (pin)
        s->pins++;
    else if (s->pins)
        s->pins--;
}

size_t rt_store_bytes(const rt_store *s)
{
    return s->bytes;
}

void rt_store_free(rt_store *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->cap; k++)
        block_free(s, s->ring[k]);
    free(s->ring);
    free(s);
}
