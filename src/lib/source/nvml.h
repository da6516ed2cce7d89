/* nvml.h - NVIDIA GPUs through NVML, opened with dlopen at run time (no build dependency):
 * loading with the dlerror text kept, devices, their readings, the tree's share and its VRAM peak
 * (accounting); every NVML call on one worker thread, waited for with a deadline. Not public. */
#ifndef RT_NVML_H
#define RT_NVML_H

#include "../core/clock.h"
#include "gpu.h"

/* How long the caller waits for NVML: to start and list its GPUs; and for one poll of every
 * GPU (readings and the tree's process lists), the tree's lists alone, or the shutdown: the
 * call deadline, longer by RT_NVML_DEADLINE_PER_GPU_SECS for each GPU after the first. A
 * request that misses its deadline is the driver stuck (nvidia-smi hangs the same way): NVML
 * is then not used again in this process. */
#define RT_NVML_INIT_DEADLINE_SECS 10.0
#define RT_NVML_CALL_DEADLINE_SECS 2.0
#define RT_NVML_DEADLINE_PER_GPU_SECS 0.5

/* How often the cumulative counters are read: the energy (3.7-4.1 ms of CPU a call on an H200),
 * the violation times (0.4-0.7 ms) and the accounting mode; also at the first poll and at the
 * one after rt_nvml_counters_due. */
#define RT_NVML_COUNTER_SECS 30.0

typedef struct rt_nvml rt_nvml;

/* Loads NVML from path (NULL or "": libnvidia-ml.so.1), resolves every symbol once (newest
 * version first), then starts its worker thread (only when the library loaded), which starts
 * NVML and finds its GPUs while the caller waits at most RT_NVML_INIT_DEADLINE_SECS. Returns a
 * handle even when NVML is absent, unusable or stuck (it then has no devices: see rt_nvml_ready
 * and rt_nvml_error); NULL only when out of memory. Once any request of any handle has missed
 * its deadline, later handles do not load NVML at all. log is borrowed and must outlive the
 * handle; it is called only from the calling thread. Free with rt_nvml_close. */
rt_nvml *rt_nvml_open(const char *path, const rt_logger *log);

/* rt_nvml_open with the deadlines given in seconds (init_secs to start, call_secs for every
 * later request, before the per-GPU part) and measured on clock (NULL: the real one; a test
 * clock must outlive the handle, and a worker left behind does not touch it): for the tests. */
rt_nvml *rt_nvml_open_timed(const char *path, const rt_logger *log, double init_secs, double call_secs,
                            rt_clock *clock);

/* Waits (at most bound_secs of real time) until every worker left behind after a missed
 * deadline, in this process, has come back from its stuck call and ended (it touches nothing
 * more then). Returns whether they all have. For the tests: a driver that comes back late. */
bool rt_nvml_wait_left_behind(double bound_secs);

/* Whether the library loaded, has the required entry points (init, device count, handle by
 * index) and started. */
bool rt_nvml_ready(const rt_nvml *nv);

/* The last loading failure as text, owned by nv and valid until rt_nvml_close: dlopen's or
 * dlsym's dlerror text (a missing optional symbol too: NVML then still works without the
 * fields it feeds), NVML's failure to start, or its missed deadline; "" when there was none. */
const char *rt_nvml_error(const rt_nvml *nv);

/* The number of GPUs NVML listed at open (0 when not ready). */
size_t rt_nvml_count(const rt_nvml *nv);

/* Fills o for GPU i (i < rt_nvml_count): static facts (borrowed from nv) and the readings the
 * driver gave at the latest poll (with the throttled seconds since the first poll: see
 * rt_gpu, and the energy counter for rt_nvml_energy); the others are null, and all of them once the GPU has fallen
 * off the bus or NVML missed a deadline. When GPU i's reading of the latest poll was already
 * used, polls every GPU first (one request to the worker; with the tree's process lists too
 * once rt_nvml_tree has been asked). A call that fails is told once per GPU and kind. */
void rt_nvml_read(rt_nvml *nv, size_t i, rt_gpu *o);

/* The tree's share of GPU i over the interval since the previous call, from the process lists
 * of the latest poll (a poll of its own when they were already used). *vram_bytes: the VRAM
 * of the tree's processes in the compute and graphics lists (a process in both counted once);
 * *present: whether any of them is on the GPU; *util_pct: per process its highest sample in
 * the interval, summed and capped at 100. Returns false (nothing set) when the GPU is lost or
 * NVML missed a deadline. *vram_ok is false when neither list could be read (or out of
 * memory), *util_pct NaN when per-process samples are not supported. has is called on the
 * calling thread only. When GPU i's accounting mode is on, also updates the processes kept
 * for rt_nvml_tree_vram_peak (one more request to the worker, only when some of the GPU's
 * accounting pids are the tree's or were). Grows buffers kept in nv only when longer lists
 * than before are seen, and the kept processes up to RT_NVML_ACCT_MAX. */
bool rt_nvml_tree(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, uint64_t *vram_bytes, bool *vram_ok,
                  bool *present, double *util_pct);

/* The next poll reads the cumulative counters (energy, violation time) and the accounting mode,
 * whatever their cadence: at a phase mark, at the end of a run. NULL is ignored. */
void rt_nvml_counters_due(rt_nvml *nv);

/* The energy of GPU i as of the last rt_nvml_read of it: returns 1 (the counter was read) or 2
 * (an estimate between two readings) and sets *joules to the
 * running total since its first reading (0 there) of NVML's total energy counter (mJ; a
 * counter that goes backwards, the driver reloaded, counts again from 0), which is read every
 * RT_NVML_COUNTER_SECS: at a reading of the counter the total is its own, exact (after
 * estimates that ran ahead of it, the total handed out: it never goes back), and between two
 * readings it grows by 15/16 of the power the GPU drew times the time (the mean of two readings,
 * scaled by what the last stretch between two readings found of the power against the counter:
 * short of it, so that the counter stays ahead and its readings give the total), less what an
 * estimate before ran ahead; returns 0 before the counter's first reading, when the
 * driver has no counter (before Volta, or an old library), when that reading failed (and no
 * power was read to go on with), or for a NULL nv. */
int rt_nvml_energy(const rt_nvml *nv, size_t i, double *joules);

/* The tree's share of GPU i over the interval, as of the last rt_nvml_tree of it (taken from
 * its lists before it asked anything more), 0..1: 1 when the process lists hold the tree's
 * processes and no other; else the tree's part of the per-process samples (each process's
 * highest, the tree's sum over everyone's) when any process has a sample above 0; else the
 * tree's part of the VRAM the listed processes use; 0 when the tree has no process there and
 * no sample; NaN when the lists and the samples could not be read, out of memory, before any
 * rt_nvml_tree of i or after one that returned false, or nv is NULL. Asks nothing of NVML. */
double rt_nvml_tree_share(const rt_nvml *nv, size_t i);

/* The work of GPU i for the tree, from the lists of the last rt_nvml_tree of i (call it only
 * after one that returned true): added into *sum, the device's work (rt_gpu.work of the last
 * rt_nvml_read), or on a GPU in MIG mode the work of each MIG instance the tree's processes
 * run in. *shared is set when a process not the tree's was on that device or those instances
 * (the lists of a GPU not in MIG mode: the tree's share below 1). Returns whether any figure
 * was added. */
bool rt_nvml_tree_work(rt_nvml *nv, size_t i, rt_pid_in_tree has, void *user, rt_gpu_work_sum *sum, bool *shared);

/* The most processes kept for the VRAM peak, all GPUs together (about 160 KiB). */
#define RT_NVML_ACCT_MAX 4096

/* The tree's VRAM peak as NVML's accounting counts it, as of the last rt_nvml_tree calls:
 * per GPU whose accounting mode was on at some poll, the sum of the largest maxMemoryUsage
 * (bytes) seen of each process of the tree on it (a process is a pid and its start time, so a
 * reused pid is another process), summed over those GPUs. A process that was seen running is
 * read again after it leaves the tree, until the driver says it has ended, and stays counted
 * after (also when its GPU is lost, its accounting goes off, or NVML stops answering). The
 * sum is an upper bound of what the tree held at once; it misses a process that used a GPU and
 * left the tree between two calls, and past RT_NVML_ACCT_MAX processes only the largest peaks
 * are kept. RT_NULL_U64 when no GPU's accounting mode was seen on: NVML absent, without the
 * accounting entry points, the mode off, or NOT_SUPPORTED. NULL gives RT_NULL_U64. */
uint64_t rt_nvml_tree_vram_peak(const rt_nvml *nv);

/* The VRAM of process pid on GPU i, from the lists the last rt_nvml_tree of i used (call it
 * only after one that returned true). Returns false when the lists could not be read. */
bool rt_nvml_pid_vram(rt_nvml *nv, size_t i, int64_t pid, uint64_t *vram_bytes);

/* Shuts NVML down (waiting at most the call deadline), unloads it and frees nv. After a missed
 * deadline the stuck worker, its buffers and the library are left as they are (never freed,
 * unloaded or shut down), and in a forked child NVML is not called. NULL is ignored. */
void rt_nvml_close(rt_nvml *nv);

/* NVML's PCI bus id ("00000000:3B:00.0", or the legacy "0000:3B:00.0") given as the len bytes
 * of its buffer, NUL-terminated or not, in the form sysfs and DRM fdinfo use ("0000:3b:00.0"),
 * into out (cap > 0: always terminated). Returns true when it was normalised; false when it has
 * another form (out then holds it as rt_nvml_text copies it). Pure. */
bool rt_nvml_norm_bus_id(const char *in, size_t len, char *out, size_t cap);

/* Copies a string NVML wrote into a buffer of len bytes (NVML may leave it without a NUL) into
 * out (cap > 0: always terminated): up to its first NUL or len, control bytes as '?', truncated
 * to cap - 1. Returns the length copied. Pure. */
size_t rt_nvml_text(const char *in, size_t len, char *out, size_t cap);

#endif
