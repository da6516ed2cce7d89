/* gpu_ask.h - the GPU ask (gpu_ask.c): the shipped table of GPU models and their memory
 * (data/gpu-models.csv, compiled in at build time by cmake/csv-table.cmake into the build
 * directory's gpu_models_table.c), the size rule, and the recommendation's GPU figures folded
 * run by run. Not public. */
#ifndef RT_ANALYSIS_GPU_ASK_H
#define RT_ANALYSIS_GPU_ASK_H

#include <stddef.h>

#include "../core/core.h"

typedef struct rt_gpu_model_row {
    const char *vendor;   /* "NVIDIA", "AMD" */
    const char *model;    /* as sold, with its marketed memory: "A100 40GB" */
    double memory_gb;     /* marketed, GB */
    double memory_mib;    /* as the driver reports one device (nvidia-smi's memory.total) */
    const char *mib_from; /* "nvidia-smi", "rocm-smi" or "marketed" */
    const char *source;   /* the vendor's datasheet or product page */
} rt_gpu_model_row;

extern const rt_gpu_model_row rt_gpu_models[];
extern const size_t rt_gpu_models_count;
extern const char rt_gpu_models_source[]; /* the table's "# source:" line */

/* The size rule: the smallest memory_mib of the table at or above need_mib (the need with its
 * headroom); above the table's largest, rt_round_memory_mib(need_mib); 0 for a need that is not
 * above 0 (or NaN). Up to max of the models with at least that memory go into models (smallest
 * first, then in the table's order; NULL after the last when fewer), and *count (may be NULL)
 * gets how many there are in all. */
int64_t rt_gpu_ask_size(double need_mib, const char **models, size_t max, size_t *count);

/* The GPU figures of a recommendation, folded over its runs. */
typedef struct rt_gpu_fold {
    double held, did;          /* the most GPUs a run held / kept busy (busy where known, else held) */
    rt_need per_gpu;           /* the most a run held on one GPU */
    double had_mib, sm_pct, busy_pct;
} rt_gpu_fold;

void rt_gpu_fold_init(rt_gpu_fold *f);
/* Folds run s in, vram its VRAM need (rt_need_of's, or the summary's own). */
void rt_gpu_fold_run(rt_gpu_fold *f, const rt_summary *s, const rt_need *vram);
/* Sets r's gpu and its 0.19 GPU figures from f, grow the need's factor (1 + headroom). */
void rt_gpu_fold_finish(const rt_gpu_fold *f, double grow, rt_recommendation *r);

/* Kubernetes' node affinity on nvidia.com/gpu.memory for rec's per-GPU memory, "; affinity:
 * {...}", into buf (the empty string when none is asked). Returns the length like snprintf. */
size_t rt_gpu_ask_k8s_affinity(const rt_recommendation *rec, char *buf, size_t cap);

/* Whether rec is a caller's struct that has the 0.19 GPU figures. */
bool rt_gpu_ask_known(const rt_recommendation *rec);

#endif
