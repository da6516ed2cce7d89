/* gpu_work_words.h - what a run's GPUs did (rt_summary's gpu_* work figures, NVML GPM) in one
 * line of words, shared by the summary's text, its Markdown and the report: "SM 15.9% (p95 16.0,
 * peak 16.2), tensor 0%, DRAM 0.5%, FP32 2.3%; PCIe 30 MiB/s", said to be the devices' when other
 * processes shared them; or, for GPUs that give no such figure, that utilization is all there is.
 * Internal. */
#ifndef RT_ANALYSIS_GPU_WORK_WORDS_H
#define RT_ANALYSIS_GPU_WORK_WORDS_H

#include <stddef.h>

#include "resource_tracker.h"

/* The line's label, as each view shows it */
#define RT_GW_LABEL "GPU work"

/* Whether s holds a GPU work figure (some record had GPM's). */
int rt_gw_known(const rt_summary *s);

/* The run's GPU work in words into b (cap bytes, cut when longer, NUL-terminated when cap > 0):
 * with figures, SM activity's mean (its p95 and peak), the tensor cores', DRAM bandwidth's, the
 * FP units' that did any work (FP64, FP32, FP16, means), then the PCIe and NVLink traffic (both
 * directions, mean), and " (the devices', shared with other processes)" when they were; the job's
 * GPUs with a tree, else the machine's. Without figures, where GPUs were used (the tree's usage
 * above 0; the machine's busy GPUs without a tree or where no process's usage is known: an old
 * driver): "utilization only (a kernel was running): this GPU gives no SM
 * or tensor figures (GPM: Hopper and newer)". glue (NULL: a space) goes between the words of one
 * figure ("SM", "15.9%", "(p95", ...; "30", "MiB/s"), plain spaces between the figures: a caller
 * that breaks lines at spaces can keep each figure whole. Returns the length of the words, 0 when
 * there is nothing to say (no GPU, or none used). */
size_t rt_gw_words(const rt_summary *s, const char *glue, char *b, size_t cap);

/* A percent of the work as the words show it: "0" for 0, else one decimal ("15.9"); "-" for NaN. */
const char *rt_gw_pct(double v, char *b, size_t cap);

/* Bytes per second as "30 MiB/s", "1.5 GiB/s", "0 B/s" (binary units, a decimal below 10). */
const char *rt_gw_rate(double bytes_per_sec, char *b, size_t cap);

#endif
