/* pidmap.h - a hash map from process ids (> 0) to array indexes: open addressing with linear
 * probing and backward-shift deletion, so lookups never allocate and deletions leave no
 * tombstones. The process tree finds its entries by pid through it. Not public. */
#ifndef RT_PIDMAP_H
#define RT_PIDMAP_H

#include <stddef.h>
#include <stdint.h>

#define RT_PIDMAP_NONE ((size_t)-1)

/* One slot: a pid (0: empty) and its value, 8 bytes (a pid fits 32 bits: pid_max is at most
 * 2^22; so does an index of the process tree's). */
typedef struct rt_pidmap_slot {
    int32_t pid;
    uint32_t val;
} rt_pidmap_slot;

typedef struct rt_pidmap {
    rt_pidmap_slot *slots;
    size_t nslots; /* a power of two */
    size_t count;
} rt_pidmap;

/* Prepares an empty map with room for about nslots/2 entries (rounded up to a power of two,
 * at least 16). Returns 0, or -1 on no memory. */
int rt_pidmap_init(rt_pidmap *m, size_t nslots);

/* The value stored for pid, or RT_PIDMAP_NONE. */
size_t rt_pidmap_get(const rt_pidmap *m, int64_t pid);

/* Stores val for pid (> 0), replacing an earlier value; doubles the table past half full.
 * Returns 0, or -1 on no memory, a pid <= 0 or past 32 bits, or a val past 32 bits (the map is
 * then unchanged). */
int rt_pidmap_put(rt_pidmap *m, int64_t pid, size_t val);

/* Removes pid, if there. */
void rt_pidmap_del(rt_pidmap *m, int64_t pid);

/* Frees the table; the map is empty and must be initialised again before use. */
void rt_pidmap_free(rt_pidmap *m);

#endif
