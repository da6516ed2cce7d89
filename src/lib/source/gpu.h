/* gpu.h - GPUs: the front over the backends (NVIDIA through NVML in nvml.c, AMD and Intel
 * through sysfs and DRM fdinfo in drm.c) and the facts every backend's devices carry. Not public. */
#ifndef RT_GPU_H
#define RT_GPU_H

#include "sources.h"

/* ---- what every backend's device carries ---------------------------------------------------- */

/* A device's static facts, found once at discovery. The strings are owned (NULL when unknown);
 * detail keys are static strings, their values owned. */
typedef struct rt_gpu_facts {
    char *uuid, *name, *host_id;
    rt_kv *detail;
    size_t ndetail, detail_cap;
    int64_t core_count; /* RT_NULL_I64 when unknown */
    int64_t nvml_index; /* NVIDIA: the device's NVML index; RT_NULL_I64 for other GPUs */
    char *nvml_bus_id;  /* NVIDIA: NVML's spelling of the PCI address; NULL when unknown */
} rt_gpu_facts;

/* Every figure of a GPU's work null (NaN): a GPU without GPM. */
extern const rt_gpu_work rt_gpu_work_null;

/* Work figures averaged over several GPUs (or MIG instances), each figure over those that give
 * it: rt_gpu_work_add each, then rt_gpu_work_mean. */
#define RT_GPU_WORK_N (sizeof(rt_gpu_work) / sizeof(double))
typedef struct rt_gpu_work_sum {
    double sum[RT_GPU_WORK_N];
    unsigned n[RT_GPU_WORK_N];
} rt_gpu_work_sum;
void rt_gpu_work_add(rt_gpu_work_sum *s, const rt_gpu_work *w);
/* The means into *out (NaN where none gave the figure). Returns whether any figure is known. */
bool rt_gpu_work_mean(const rt_gpu_work_sum *s, rt_gpu_work *out);

/* Sets f empty (no strings, no detail, core_count unknown). */
void rt_gpu_facts_init(rt_gpu_facts *f);

/* Appends a detail key (a static string) with a printf-formatted value (at most 127 bytes).
 * Returns 0, or -1 when formatting or allocation failed (f is then unchanged). */
int rt_gpu_facts_add(rt_gpu_facts *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Frees what f owns and sets it empty. */
void rt_gpu_facts_free(rt_gpu_facts *f);

/* Points o's static fields at f (borrowed: valid while f lives) and sets every reading to
 * null (NaN, RT_NULL_U64), for the backend to fill what it can. */
void rt_gpu_facts_out(const rt_gpu_facts *f, rt_gpu *o);

/* Whether pid is in the tracked tree. */
typedef bool (*rt_pid_in_tree)(void *user, int64_t pid);

/* ---- the set of GPUs -------------------------------------------------------------------------- */

typedef struct rt_gpus rt_gpus;

/* Finds the GPUs: NVML from nvml_path (NULL: libnvidia-ml.so.1; waited for at most
 * RT_NVML_INIT_DEADLINE_SECS, see nvml.h) and AMD/Intel DRM cards under the sys root, NVIDIA
 * first. Never fails for want of GPUs (there are then none); returns NULL only when out of
 * memory. roots and log are borrowed and must outlive the set; free it with rt_gpus_close. */
rt_gpus *rt_gpus_open(const rt_roots *roots, const char *nvml_path, const rt_logger *log);

/* Reads every device (NVML waited for at most RT_NVML_CALL_DEADLINE_SECS). Returns the array
 * (owned by g, valid until the next call or close) and its length in *count; NULL and 0 without
 * GPUs. A reading a device cannot give is null. */
const rt_gpu *rt_gpus_read(rt_gpus *g, size_t *count);

/* The tracked tree's use of the GPUs over the interval ending at mono. has(user, pid) says
 * whether pid is in the tree; pids[0..npids) are its live processes (for DRM fdinfo). Sets
 * *util_pct (sum over GPUs, percent), *vram_bytes, *gpus_used; NaN / RT_NULL_* when no GPU
 * could say. main_pid (0: none) is the tree's root: *main_vram (when not NULL) is its own
 * VRAM (RT_NULL_U64 when no GPU could say). Allocates only when more GPU processes or DRM
 * clients are seen than ever before. */
void rt_gpus_tree(rt_gpus *g, rt_pid_in_tree has, void *user, const int64_t *pids, size_t npids, double mono,
                  double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used, int64_t main_pid, uint64_t *main_vram);

/* What the last rt_gpus_tree call says of the tree beyond its sums (rt_process's 0.19 figures). */
typedef struct rt_gpus_job {
    rt_gpu_work work;      /* the work of the GPUs the tree is on (rt_process.gpu_work) */
    const char *scope;     /* "job", "device" or NULL (rt_process.gpu_work_scope) */
    int64_t busy;          /* GPUs the tree kept busy; RT_NULL_I64 when no GPU could say */
    uint64_t vram_one_max; /* the most VRAM the tree held on one GPU; RT_NULL_U64 likewise */
} rt_gpus_job;

/* Fills *out for the interval of the last rt_gpus_tree call (has and user as given to it) from
 * the devices' readings of the last rt_gpus_read: the work of the GPUs the tree had a process
 * on, each figure the mean over those that give it (the device's, or on a GPU in MIG mode the
 * mean of the MIG instances the tree's processes run in), "job" when nothing else ran there,
 * "device" when other processes did; the tree on no GPU: 0 for each figure some GPU gives.
 * Everything null before any rt_gpus_tree or without GPUs. Asks nothing of the drivers. */
void rt_gpus_job_of(const rt_gpus *g, rt_pid_in_tree has, void *user, rt_gpus_job *out);

/* Every process's use of the GPUs over the interval since the previous call (for a
 * sample without a tracked tree, as the Rust tool fills its process GPU figures then): NVIDIA
 * GPUs from NVML's process lists as rt_gpus_tree with every process in the tree; DRM cards
 * from their own figures as of the last rt_gpus_read (busy percent, VRAM in use; in use when
 * their VRAM in use is above 0 or they are busy). Fields as rt_gpus_tree's. Not to be mixed
 * with rt_gpus_tree on one set (they share NVML's interval). */
void rt_gpus_all(rt_gpus *g, double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used);

/* The tree's VRAM peak in bytes as NVIDIA's accounting counts it, as of the last rt_gpus_tree
 * call: per NVIDIA GPU whose accounting mode has been seen on (root turns it on: nvidia-smi
 * -am 1), the sum of the largest maxMemoryUsage of each of the tree's processes there, exited
 * ones included, summed over those GPUs (see rt_nvml_tree_vram_peak). An upper bound of what
 * the tree held at once, the safe side for a request. RT_NULL_U64 when no GPU's accounting has
 * been seen on (NVML absent, too old, the mode off or not supported) or g is NULL; AMD and
 * Intel cards have no such figure and are not in it. Asks nothing of the driver. */
uint64_t rt_gpus_tree_vram_peak(const rt_gpus *g);

/* The energy of device i (in rt_gpus_read's order) as of the last rt_gpus_read: returns 1
 * (the counter read now) or 2 (NVML's counter, read every 30 s, estimated between two readings:
 * rt_nvml_energy) and sets *joules to a running total (its origin is the first reading: 0
 * there) from the device's own energy counter (NVML's total energy in mJ, hwmon energy1_input
 * in uJ), which only grows; or returns 0 when the device has no such counter or this reading
 * failed (then its power_watts, when known, is what the caller multiplies by time). */
int rt_gpus_energy(const rt_gpus *g, size_t i, double *joules);

/* The tracked tree's share of device i over the interval of the last rt_gpus_tree call, 0..1:
 * 1 when every process using it (NVML's process lists, DRM clients) is the tree's and the tree
 * has one there; else the tree's part of the per-process utilization; else of the VRAM used
 * by processes; 0 when the tree has nothing there; NaN when it cannot be told. */
double rt_gpus_tree_share(const rt_gpus *g, size_t i);

/* The next rt_gpus_read reads the devices' cumulative counters (NVML's energy and violation
 * times) whatever their cadence (rt_nvml_counters_due). NULL is ignored. */
void rt_gpus_counters_due(rt_gpus *g);

/* Frees the set, its devices and backends (NVML is shut down and unloaded, unless it stopped
 * answering: see rt_nvml_close). NULL is ignored. */
void rt_gpus_close(rt_gpus *g);

#endif
