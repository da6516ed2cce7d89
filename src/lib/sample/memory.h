/* memory.h - the sampler's memory part: /proc/meminfo as the sample's MiB figures. A gauge,
 * not a counter: there is no previous reading to keep. */
#ifndef RT_SAMPLE_MEMORY_H
#define RT_SAMPLE_MEMORY_H

#include "context.h"

typedef struct rt_mem_part {
    int fd; /* /proc/meminfo, kept open; -1 when absent */
    rt_meminfo cur;
    bool have_cur;
    rt_memory out;
} rt_mem_part;

/* Opens /proc/meminfo (a missing file leaves the memory figures null). */
void rt_mem_part_open(rt_mem_part *p, rt_sample_ctx *c);
/* Reads and parses meminfo. Returns whether it could. */
bool rt_mem_part_snapshot(rt_mem_part *p, rt_sample_ctx *c);
/* The machine's page tables (KiB) at the last reading; RT_NULL_U64 without one. */
uint64_t rt_mem_part_page_tables(const rt_mem_part *p);
/* Fills p->out from the reading (all null without one). */
void rt_mem_part_delta(rt_mem_part *p);
void rt_mem_part_close(rt_mem_part *p);

#endif
