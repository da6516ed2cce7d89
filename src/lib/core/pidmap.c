/* pidmap.c - the pid -> index hash map (see pidmap.h). Fibonacci hashing spreads the
 * consecutive pids a fork burst produces over the table. */
#include <stdbool.h>
#include <stdlib.h>

#include "pidmap.h"

/* The home slot of pid in a table of nslots. */
static size_t home(int64_t pid, size_t nslots)
{
    return ((uint64_t)pid * 0x9E3779B97F4A7C15ull >> 17) & (nslots - 1);
}

/* Allocates an empty table of n slots into keys/vals. Returns 0 or -1. */
static int alloc_table(int64_t **keys, size_t **vals, size_t n)
{
    *keys = calloc(n, sizeof **keys);
    *vals = malloc(n * sizeof **vals);
    if (!*keys || !*vals) {
        free(*keys);
        free(*vals);
        return -1;
    }
    return 0;
}

int rt_pidmap_init(rt_pidmap *m, size_t nslots)
{
    size_t n = 16;
    while (n < nslots && n < ((size_t)1 << 40))
        n *= 2;
    m->nslots = n;
    m->count = 0;
    return alloc_table(&m->keys, &m->vals, n);
}

size_t rt_pidmap_get(const rt_pidmap *m, int64_t pid)
{
    if (pid <= 0)
        return RT_PIDMAP_NONE;
    for (size_t i = home(pid, m->nslots);; i = (i + 1) & (m->nslots - 1)) {
        if (m->keys[i] == 0)
            return RT_PIDMAP_NONE;
        if (m->keys[i] == pid)
            return m->vals[i];
    }
}

/* Puts pid -> val into a table known to have room and not to hold pid. */
static void place(int64_t *keys, size_t *vals, size_t nslots, int64_t pid, size_t val)
{
    size_t i = home(pid, nslots);
    while (keys[i] != 0)
        i = (i + 1) & (nslots - 1);
    keys[i] = pid;
    vals[i] = val;
}

/* Doubles the table. Returns 0, or -1 on no memory (the map unchanged). */
static int grow(rt_pidmap *m)
{
    int64_t *keys;
    size_t *vals, n = m->nslots * 2;
    if (alloc_table(&keys, &vals, n) < 0)
        return -1;
    for (size_t i = 0; i < m->nslots; i++)
        if (m->keys[i] != 0)
            place(keys, vals, n, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->nslots = n;
    return 0;
}

int rt_pidmap_put(rt_pidmap *m, int64_t pid, size_t val)
{
    if (pid <= 0)
        return -1;
    for (size_t i = home(pid, m->nslots); m->keys[i] != 0; i = (i + 1) & (m->nslots - 1))
        if (m->keys[i] == pid) {
            m->vals[i] = val;
            return 0;
        }
    if ((m->count + 1) * 2 > m->nslots && grow(m) < 0)
        return -1;
    place(m->keys, m->vals, m->nslots, pid, val);
    m->count++;
    return 0;
}

void rt_pidmap_del(rt_pidmap *m, int64_t pid)
{
    if (pid <= 0)
        return;
    size_t mask = m->nslots - 1, i = home(pid, m->nslots);
    while (m->keys[i] != 0 && m->keys[i] != pid)
        i = (i + 1) & mask;
    if (m->keys[i] == 0)
        return;
    m->keys[i] = 0;
    m->count--;
    /* shift back the entries that probed past the hole, so every chain stays unbroken */
    for (size_t j = (i + 1) & mask; m->keys[j] != 0; j = (j + 1) & mask) {
        size_t h = home(m->keys[j], m->nslots);
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->keys[j] = 0;
            i = j;
        }
    }
}

void rt_pidmap_free(rt_pidmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->nslots = m->count = 0;
}
