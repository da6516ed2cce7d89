/* gpu.h - GPUs: NVIDIA through NVML loaded at run time, AMD and Intel through sysfs, and the
 * tracked tree's share from NVML's process lists and DRM fdinfo. Not public. */
#ifndef RT_GPU_H
#define RT_GPU_H

#include "sources.h"

/* ---- DRM fdinfo (pure parser) ------------------------------------------------------------- */

#define RT_DRM_MAX_ENGINES 16

typedef struct rt_drm_engine {
    char name[24];
    uint64_t busy_ns;      /* drm-engine-<name> */
    uint64_t capacity;     /* drm-engine-capacity-<name>, 1 when absent */
    uint64_t cycles;       /* drm-cycles-<name> */
    uint64_t total_cycles; /* drm-total-cycles-<name> */
    bool has_ns, has_cycles;
} rt_drm_engine;

typedef struct rt_drm_client {
    char driver[32];
    char pdev[32];      /* PCI address, e.g. 0000:03:00.0; "" when not given */
    uint64_t client_id;
    bool has_client_id;
    rt_drm_engine engines[RT_DRM_MAX_ENGINES];
    size_t nengines;
    uint64_t vram_bytes; /* resident (or total) in VRAM-like regions: vram*, local* */
    bool has_vram;
} rt_drm_client;

/* Parses one /proc/PID/fdinfo/FD. Returns 0 when it is a DRM client (a drm-driver line and a
 * client id), -1 otherwise. */
int rt_drm_fdinfo_parse(const char *buf, size_t len, rt_drm_client *out);

/* ---- devices and the tree's share --------------------------------------------------------- */

typedef struct rt_gpus rt_gpus;

/* Finds the GPUs: NVML from nvml_path (NULL: $TRACKER_NVML_LIBRARY, else libnvidia-ml.so.1)
 * and AMD/Intel DRM cards under the sys root. Never fails for want of GPUs (there are then
 * none); returns NULL only when out of memory. */
rt_gpus *rt_gpus_open(const rt_roots *roots, const char *nvml_path, const rt_logger *log);

/* Reads every device; the results stay valid until the next call. */
const rt_gpu *rt_gpus_read(rt_gpus *g, size_t *count);

/* The tracked tree's use of the GPUs over the interval ending at mono. has(user, pid) says
 * whether pid is in the tree; pids[0..npids) are its live processes (for DRM fdinfo). Sets
 * *util_pct (sum over GPUs, percent), *vram_bytes, *gpus_used; NaN / RT_NULL_* when no GPU
 * could say. */
typedef bool (*rt_pid_in_tree)(void *user, int64_t pid);
void rt_gpus_tree(rt_gpus *g, rt_pid_in_tree has, void *user, const int64_t *pids, size_t npids, double mono,
                  double *util_pct, uint64_t *vram_bytes, int64_t *gpus_used);

void rt_gpus_close(rt_gpus *g);

#endif
