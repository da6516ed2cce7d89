/* energy_words.h - a run's energy by part (rt_summary_energy_part): the part a domain counts in,
 * the part's noun ("GPU", "2 GPUs", "CPU", "memory") and how it was had ("measured by NVML",
 * "estimated"), shared by the statistics, the summary's text, the report's answer and its power
 * chart. Internal. */
#ifndef RT_ANALYSIS_ENERGY_WORDS_H
#define RT_ANALYSIS_ENERGY_WORDS_H

#include <stddef.h>

#include "resource_tracker.h"

/* The part a domain counts in, by its kind: "cpu" (a package, the estimate), "dram", "gpu", or
 * another kind counted in the machine's total (in_total; "other" without a kind); NULL for none
 * (a package's core and uncore parts are inside it, a platform meter holds the others). */
const char *rt_ew_part_kind(const rt_energy_domain *d);
#define RT_ENERGY_PARTS_MAX 16 /* the parts a summary keeps at most (rt_summary_energy_part) */

/* A copy of a summary's parts that outlives the statistics' next record (the tracker hands out a
 * copy of its summary while its thread adds records): plain data, nothing allocated. */
typedef struct rt_energy_parts_copy {
    rt_summary_energy_part part[RT_ENERGY_PARTS_MAX];
    const rt_summary_energy_part *list[RT_ENERGY_PARTS_MAX];
    char kind[RT_ENERGY_PARTS_MAX][32], source[RT_ENERGY_PARTS_MAX][32], meter[32];
} rt_energy_parts_copy;

/* Copies s's parts and meter source into c and points s at the copies. */
void rt_energy_parts_copy_into(rt_energy_parts_copy *c, rt_summary *s);

/* The part's noun into b: "CPU" (kind cpu), "memory" (dram), "GPU" or "N GPUs" (gpu: devices of
 * them), else the kind as it is ("other" for NULL). The job's share of a part is said with
 * devices 1: "2 GPUs" would read as GPUs the job used, which the part does not say. */
const char *rt_ew_noun(const char *kind, double devices, char *b, size_t cap);
/* How the part was had into b: "<method> by <source>" with the source as people know it (NVML,
 * RAPL for intel-rapl and amd-rapl, perf, hwmon, else as it is); the method alone for the
 * model's estimate or no source. */
const char *rt_ew_how(const char *source, const char *method, char *b, size_t cap);

#endif
