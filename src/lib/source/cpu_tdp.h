/* cpu_tdp.h - the shipped table of CPU thermal design powers (data/cpu-tdp.csv, compiled in at
 * build time by cmake/csv-table.cmake into the build directory's cpu_tdp_table.c) and its
 * lookup by /proc/cpuinfo's model name. Not public. */
#ifndef RT_SOURCE_CPU_TDP_H
#define RT_SOURCE_CPU_TDP_H

#include <stddef.h>

typedef struct rt_cpu_tdp_row {
    const char *pattern; /* a model token ("8375C") or words ("EPYC 7R13") */
    double tdp_watts;    /* per package */
    double cores, threads; /* per package */
    const char *source;  /* "ark", "amd", or "like:X" (a custom part given X's TDP) */
} rt_cpu_tdp_row;

extern const rt_cpu_tdp_row rt_cpu_tdp[];
extern const size_t rt_cpu_tdp_count;
extern const char rt_cpu_tdp_source[]; /* the table's "# source:" line */

/* The row whose pattern occurs in model as whole tokens (case-insensitive; the characters on
 * either side of the match are not letters or digits), the longest such pattern when several
 * do; NULL for none (or a NULL model). */
const rt_cpu_tdp_row *rt_cpu_tdp_find(const char *model);

#endif
