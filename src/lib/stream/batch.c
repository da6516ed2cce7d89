/* batch.c - the uploader's batches: gzip members of the CSV header and rows, filled under the
 * stream's lock by rt_stream_add, closed by the stream thread (seq from 0, only batches with rows)
 * onto the pending list in seq order, their gzip bytes counted against the memory limit. */
#include <stdlib.h>
#include <string.h>

#include "stream_int.h"

void rt_batch_free(rt_batch *b)
{
    if (!b)
        return;
    rt_gzip_free(b->z);
    free(b->spill);
    free(b);
}

void rt_batch_free_list(rt_batch *b)
{
    for (rt_batch *n; b; b = n) {
        n = b->next;
        rt_batch_free(b);
    }
}

/* A new open batch holding the CSV header, bounded by the memory limit (or 1 MiB when the limit is
 * lower). Returns it (the caller owns it; rt_batch_free), or NULL on no memory. */
rt_batch *rt_batch_new(const rt_stream *st)
{
    rt_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    const char *h = rt_format_header(st->csv_format);
    size_t max = st->mem_limit > ((size_t)1 << 20) ? st->mem_limit : (size_t)1 << 20;
    if (rt_gzip_new(max, &b->z) != RT_OK || rt_gzip_write(b->z, h, strlen(h)) != RT_OK) {
        rt_batch_free(b);
        return NULL;
    }
    return b;
}

/* Appends one formatted row to the open batch; under mu. A batch that is full (its gzip at the
 * memory bound) is queued for the thread to close and a new one opened. Returns RT_OK or
 * RT_ERR_NOMEM (the row counted lost). */
rt_error rt_batch_append_locked(rt_stream *st, const char *row, size_t n)
{
    for (int attempt = st->mem_full ? 2 : 0; attempt < 2; attempt++) {
        if (!st->cur && !(st->cur = rt_batch_new(st)))
            break;
        if (rt_gzip_write(st->cur->z, row, n) == RT_OK) {
            st->cur->rows++;
            st->rows++;
            return RT_OK;
        }
        if (st->cur->rows == 0)
            break; /* a row that does not fit an empty batch */
        if (st->full_tail)
            st->full_tail->next = st->cur;
        else
            st->full = st->cur;
        st->full_tail = st->cur;
        st->cur = NULL;
    }
    st->lost++;
    return RT_ERR_NOMEM;
}

/* Appends b to the pending list (the thread's). */
static void pend(rt_stream *st, rt_batch *b)
{
    b->next = NULL;
    if (st->pending_tail)
        st->pending_tail->next = b;
    else
        st->pending = b;
    st->pending_tail = b;
}

rt_batch *rt_batch_pop(rt_stream *st)
{
    rt_batch *b = st->pending;
    st->pending = b->next;
    if (!st->pending)
        st->pending_tail = NULL;
    return b;
}

/* Closes the open batch (if it has rows) and those that filled up, giving them their seq, and
 * opens a new one. The lock is held only to swap pointers. A batch whose member cannot be
 * finished (no memory) is freed and its rows counted lost, with one error logged. */
void rt_batch_close_all(rt_stream *st)
{
    rt_batch *fresh = rt_batch_new(st); /* made outside the lock; NULL: rt_stream_add makes one */
    pthread_mutex_lock(&st->mu);
    rt_batch *list = st->full, *tail = st->full_tail;
    st->full = st->full_tail = NULL;
    if (!st->cur || st->cur->rows > 0) {
        rt_batch *old = st->cur;
        st->cur = fresh;
        fresh = NULL;
        if (old) {
            old->next = NULL;
            if (tail)
                tail->next = old;
            else
                list = old;
        }
    }
    pthread_mutex_unlock(&st->mu);
    rt_batch_free(fresh);
    unsigned closed = 0;
    uint64_t lost = 0;
    while (list) {
        rt_batch *b = list;
        list = b->next;
        if (rt_gzip_finish(b->z, &b->gz, &b->gzlen) != RT_OK) {
            lost += b->rows;
            rt_batch_free(b);
            continue;
        }
        b->seq = st->next_seq++;
        st->mem_bytes += b->gzlen;
        pend(st, b);
        closed++;
    }
    pthread_mutex_lock(&st->mu);
    st->closed += closed;
    st->lost += lost;
    pthread_mutex_unlock(&st->mu);
    if (lost)
        rt_log(&st->lg, RT_LOG_ERROR, "stream: %llu rows lost: out of memory closing a batch",
               (unsigned long long)lost);
}

uint64_t rt_batch_pending_rows(const rt_stream *st)
{
    uint64_t n = 0;
    for (const rt_batch *b = st->pending; b; b = b->next)
        n += b->rows;
    return n;
}
