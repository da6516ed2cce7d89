/* pidmap.c - the pid -> index hash map (see pidmap.h). Fibonacci hashing spreads the
 * consecutive pids a fork burst produces over the table. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "pidmap.h"

/* The home slot of pid in a table of nslots. */
static size_t home(int64_t pid, size_t nslots)
{
    return ((uint64_t)pid * 0x9E3779B97F4A7C15ull >> 17) & (nslots - 1);
}

int rt_pidmap_init(rt_pidmap *m, size_t nslots)
{
    size_t n = 16;
    while (n < nslots && n < ((size_t)1 << 40))
        n *= 2;
    m->nslots = n;
    m->count = 0;
    m->slots = calloc(n, sizeof *m->slots);
    return m->slots ? 0 : -1;
}

/* Whether pid can be a key: above 0 and within 32 bits. */
static bool keyable(int64_t pid)
{
    return pid > 0 && pid <= INT32_MAX;
}

size_t rt_pidmap_get(const rt_pidmap *m, int64_t pid)
{
    if (!keyable(pid))
        return RT_PIDMAP_NONE;
    for (size_t i = home(pid, m->nslots);; i = (i + 1) & (m->nslots - 1)) {
        if (m->slots[i].pid == 0)
            return RT_PIDMAP_NONE;
        if (m->slots[i].pid == pid)
            return m->slots[i].val;
    }
}

/* Puts slot e into a table known to have room and not to hold its pid. */
static void place(rt_pidmap_slot *slots, size_t nslots, rt_pidmap_slot e)
{
    size_t i = home(e.pid, nslots);
    while (slots[i].pid != 0)
        i = (i + 1) & (nslots - 1);
    slots[i] = e;
}

/* Doubles the table. Returns 0, or -1 on no memory (the map unchanged). */
static int grow(rt_pidmap *m)
{
    size_t n = m->nslots * 2;
    rt_pidmap_slot *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < m->nslots; i++)
        if (m->slots[i].pid != 0)
            place(slots, n, m->slots[i]);
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
    return 0;
}

int rt_pidmap_put(rt_pidmap *m, int64_t pid, size_t val)
{
    if (!keyable(pid) || val > UINT32_MAX)
        return -1;
    for (size_t i = home(pid, m->nslots); m->slots[i].pid != 0; i = (i + 1) & (m->nslots - 1))
        if (m->slots[i].pid == pid) {
            m->slots[i].val = (uint32_t)val;
            return 0;
        }
    if ((m->count + 1) * 2 > m->nslots && grow(m) < 0)
        return -1;
    place(m->slots, m->nslots, (rt_pidmap_slot){(int32_t)pid, (uint32_t)val});
    m->count++;
    return 0;
}

void rt_pidmap_del(rt_pidmap *m, int64_t pid)
{
    if (!keyable(pid))
        return;
    size_t mask = m->nslots - 1, i = home(pid, m->nslots);
    while (m->slots[i].pid != 0 && m->slots[i].pid != pid)
        i = (i + 1) & mask;
    if (m->slots[i].pid == 0)
        return;
    m->slots[i].pid = 0;
    m->count--;
    /* shift back the entries that probed past the hole, so every chain stays unbroken */
    for (size_t j = (i + 1) & mask; m->slots[j].pid != 0; j = (j + 1) & mask) {
        size_t h = home(m->slots[j].pid, m->nslots);
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            m->slots[i] = m->slots[j];
            m->slots[j].pid = 0;
            i = j;
        }
    }
}

void rt_pidmap_free(rt_pidmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->nslots = m->count = 0;
}
