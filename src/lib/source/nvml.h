/* nvml.h - NVIDIA GPUs through NVML, opened with dlopen at run time (no build dependency):
 * loading with the dlerror text kept, devices, their readings and the tree's share. Not public. */
#ifndef RT_NVML_H
#define RT_NVML_H

#include "gpu.h"

typedef struct rt_nvml rt_nvml;

/* Loads NVML from path (NULL or "": libnvidia-ml.so.1), resolves
 * every symbol once (newest version first), starts it and finds its GPUs. Returns a handle
 * even when NVML is absent or unusable (it then has no devices: see rt_nvml_ready and
 * rt_nvml_error); NULL only when out of memory. log is borrowed and must outlive the handle.
 * Free with rt_nvml_close. */
rt_nvml *rt_nvml_open(const char *path, const rt_logger *log);

/* Whether the library loaded, has the required entry points (init, device count, handle by
 * index) and started. */
bool rt_nvml_ready(const rt_nvml *nv);

/* The last loading failure as text, owned by nv and valid until rt_nvml_close: dlopen's or
 * dlsym's dlerror text (a missing optional symbol too: NVML then still works without the
 * fields it feeds), or NVML's failure to start; "" when there was none. */
const char *rt_nvml_error(const rt_nvml *nv);

/* The number of GPUs NVML listed at open (0 when not ready). */
size_t rt_nvml_count(const rt_nvml *nv);

/* Fills o for GPU i (i < rt_nvml_count): static facts (borrowed from nv) and the readings the
 * driver gives; the others, and all of them once the GPU has fallen off the bus, are null. */
void rt_nvml_read(rt_nvml *nv, size_t i, rt_gpu *o);

/* The tree's share of GPU i over the interval since the previous call. *vram_bytes: the VRAM
 * of the tree's processes in the compute and graphics lists (a process in both counted once);
 * *present: whether any of them is on the GPU; *util_pct: per process its highest sample in
 * the interval, summed and capped at 100. Returns false (nothing set) when the GPU is lost.
 * *vram_ok is false when neither list could be read, *util_pct NaN when per-process samples
 * are not supported. Grows buffers kept in nv only when longer lists than before are seen. */
bool rt_nvml_tree(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, uint64_t *vram_bytes, bool *vram_ok,
                  bool *present, double *util_pct);

/* Shuts NVML down, unloads it and frees nv. NULL is ignored. */
void rt_nvml_close(rt_nvml *nv);

#endif
