/* allocation.h - the dedicated/shared rule over records (allocation.c), shared by the public
 * rt_allocation_* (live samples) and the statistics (stats.c). Not public. */
#ifndef RT_ALLOCATION_H
#define RT_ALLOCATION_H

#include "resource_tracker.h"

/* Sums over the records that had a tracked tree and the machine's CPU figure. Plain data:
 * all zero is empty, so it can be embedded and zeroed with memset. */
struct rt_allocation {
    double samples;        /* records taken (with both CPU figures) */
    double memory_samples; /* of them, records with both memory figures: the memory means' count */
    double system_cores, process_cores;
    double system_memory_mib, process_memory_mib;
    double system_gpus, process_gpus;
    double system_vram_mib, process_vram_mib;
};

/* Adds one record to a (NULL a is ignored). Records without a tree, or without the machine's
 * or the tree's CPU figure, say nothing and are skipped. O(1). */
void rt_allocation_add_record(rt_allocation *a, const rt_record *r);

#endif
