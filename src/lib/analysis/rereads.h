/* rereads.h - what a run's re-reads say (docs/answers.md, "Re-reads"): the file data its group
 * read back after its memory evicted it (rt_summary.memory_refault_mib, the kernel's refaults),
 * as a share of its storage reads, under which limit, and the memory that would have kept
 * those files cached. notes.c says it (RT_NOTE_MEMORY_REREAD); recommend.c raises the memory
 * ask to it where the re-reads were large. Not public. */
#ifndef RT_ANALYSIS_REREADS_H
#define RT_ANALYSIS_REREADS_H

#include <stdbool.h>

#include "../core/core.h"

/* Re-reads worth a note: at least this many MiB ... */
#define RT_REREAD_MIN_MIB 64.0
/* ... and, where the job's storage reads are known, at least this share of them (percent). */
#define RT_REREAD_MIN_PCT 10.0
/* Large (the ask is raised to keep the files): the job read back at least its whole limit, and
 * at least this share of its storage reads (percent: a third, where a file read twice through
 * a cache too small for it makes a half and one read three times two thirds). */
#define RT_REREAD_LARGE_PCT 33.0

typedef struct rt_rereads {
    double reread_mib; /* file data read back after its eviction, over the run */
    double read_mib;   /* the job's storage reads (the reads that missed the page cache, re-reads
                        * among them); NaN: unknown, or fewer than the re-reads (not the same
                        * reads: a network file system's reads are no storage reads) */
    double share_pct;  /* reread_mib / read_mib x 100; NaN */
    double limit_mib;  /* the limit that evicted them: the lower of memory.max and memory.high */
    double files_mib;  /* the files it read back, at most: every re-read page was read once
                        * before, so the re-reads and the first reads (read_mib - reread_mib) each
                        * bound them; the re-reads alone without read_mib */
    double need_mib;   /* the run's memory need (what it held that no cache is) */
    double keep_mib;   /* need_mib + files_mib: the charge that keeps those files cached */
    bool large;        /* the re-reads were large (RT_REREAD_LARGE_PCT): the ask may keep them */
} rt_rereads;

/* The re-reads of run s, whose memory need is need_mib (NaN: unknown). True when they are worth
 * a note: a memory limit (or memory.high) known, re-reads from RT_REREAD_MIN_MIB and
 * RT_REREAD_MIN_PCT of the reads, the need known, and keep_mib above the limit (the limit could
 * not hold the need and the files; below it the evictions were not the limit's). out is filled
 * either way (NaN where unknown). */
bool rt_rereads_of(const rt_summary *s, double need_mib, rt_rereads *out);

#endif
