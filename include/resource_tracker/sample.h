/* resource_tracker/sample.h - one sample: the plain structs a sampler fills (rt_sample and
 * everything it points to). Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_SAMPLE_H
#define RESOURCE_TRACKER_SAMPLE_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * One sample: plain structs reached through pointers. Everything a sample points to is owned
 * by the sampler that produced it and stays valid until the next rt_sampler_sample() call or
 * rt_sampler_free(). Each struct may gain fields at its end (see the ABI rules above). */

typedef struct rt_cpu {
    double utilization_pct;     /* busy cores, 0..core_count (fractional): the sum of
                                 * per_core_pct / 100; NaN when no core has data */
    const double *per_core_pct; /* core_count entries, 0..100 each; NaN for a core without data */
    size_t core_count;          /* online logical cores seen in this sample */
    double utime_secs;          /* user+nice CPU seconds over all cores in the interval */
    double stime_secs;          /* system CPU seconds over all cores in the interval */
    int64_t process_count;      /* runnable processes (procs_running) */
    double process_cores_used;  /* = process->cores_used; NaN without a tracked process */
    int64_t process_child_count; /* = process->child_count; RT_NULL_I64 without one */
    /* every process on the machine (the numbered entries of /proc, as ps, the
     * Python tracker's `processes` column and the Rust tool's cpu.process_count count them);
     * RT_NULL_I64 when /proc cannot be listed */
    int64_t all_process_count;
} rt_cpu;

typedef struct rt_memory {
    double total_mib, free_mib, available_mib, used_mib, used_pct;
    double buffers_mib, cached_mib, active_mib, inactive_mib;
    double swap_total_mib, swap_used_mib, swap_used_pct;
} rt_memory;

typedef struct rt_net_iface {
    const char *interface;   /* e.g. "eth0" */
    const char *mac_address; /* NULL when not reported */
    const char *driver;      /* kernel driver, NULL for virtual interfaces without one */
    const char *operstate;   /* "up", "down", "unknown", ...; NULL when not reported */
    int64_t speed_mbps;      /* RT_NULL_I64 when the link reports no speed */
    int64_t mtu;             /* RT_NULL_I64 when not reported */
    double rx_bytes_per_sec, tx_bytes_per_sec;
    uint64_t rx_bytes_total, tx_bytes_total; /* since boot */
    uint64_t rx_bytes, tx_bytes;             /* in this interval */
    /* the link's speed file as the kernel wrote it (-1 where the driver knows no
     * speed, which speed_mbps holds as RT_NULL_I64); RT_NULL_I64 when it cannot be read (a
     * virtual interface): the Rust tool's speed_mbps */
    int64_t speed_mbps_reported;
} rt_net_iface;

typedef struct rt_mount {
    const char *mount_point;
    const char *filesystem; /* e.g. "ext4" */
    uint64_t total_bytes, used_bytes, available_bytes; /* RT_NULL_U64 when statvfs failed */
    double used_pct; /* used / (used + available), as df computes it */
} rt_mount;

typedef struct rt_disk {
    const char *device;      /* kernel name, e.g. "nvme0n1", "sda", "vda" */
    const char *model;       /* NULL when sysfs has none */
    const char *vendor;
    const char *serial;      /* serial number or WWID */
    const char *device_type; /* "nvme", "ssd" or "hdd"; NULL when unknown */
    uint64_t capacity_bytes;
    double read_bytes_per_sec, write_bytes_per_sec;
    uint64_t read_bytes_total, write_bytes_total; /* since boot */
    uint64_t read_bytes, write_bytes;             /* in this interval */
    const rt_mount *const *mounts; /* filesystems on this disk, its partitions or volumes on it */
    size_t mount_count;
    /* 1 for a virtual device (device-mapper, md, zram, nbd: under sysfs's
     * devices/virtual), listed as the Rust tool lists it, with the filesystems mounted from it;
     * the machine's I/O sums (the CSV's, the summary's) leave it out, its bytes being counted
     * on the physical disks beneath it (or being memory, for zram). Also 1 for a ZFS pool,
     * "zfs:<pool>" (no I/O of its own, one mount: the pool's space). 0 for a physical disk */
    int is_virtual;
} rt_disk;

/* A key and a value, e.g. a GPU's driver facts. This pair never grows. */
typedef struct rt_kv {
    const char *key, *value;
} rt_kv;

/* What a GPU's units did over the interval, from NVIDIA's GPU performance monitoring (NVML's
 * GPM: Hopper and newer, driver 520 and newer), the figures DCGM's profiling metrics give:
 * not only whether a kernel ran (utilization_pct) but how busy the SMs, the tensor cores and
 * the memory were. Percents are of the interval's time (sm_occupancy_pct: resident warps
 * against the most the SMs hold); each is the mean over the interval between two GPM samples.
 * NaN where the GPU does not offer the figure: every one of them on GPUs without GPM (before
 * Hopper, AMD, Intel, an old driver). This struct never grows. */
typedef struct rt_gpu_work {
    double sm_active_pct;          /* SMs busy (a warp resident), NVML_GPM_METRIC_SM_UTIL */
    double sm_occupancy_pct;       /* warps resident against the SMs' most */
    double tensor_active_pct;      /* the tensor cores busy, any kind */
    double tensor_hmma_active_pct; /* half-precision matrix work (fp16, bf16, tf32) */
    double tensor_imma_active_pct; /* integer matrix work (int8, int4) */
    double tensor_dfma_active_pct; /* double-precision matrix work */
    double dram_active_pct;        /* device memory bandwidth used, percent of its peak */
    double fp64_active_pct, fp32_active_pct, fp16_active_pct; /* the SMs' non-tensor math */
    double pcie_tx_bytes_per_sec, pcie_rx_bytes_per_sec;      /* from and to the GPU */
    double nvlink_tx_bytes_per_sec, nvlink_rx_bytes_per_sec;  /* all links */
} rt_gpu_work;

/* An rt_gpu_work initializer with every figure null, for a caller that fills a sample itself
 * (NAN: <math.h>). */
#define RT_GPU_WORK_NULL {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}

/* A MIG GPU instance of a GPU in MIG mode, with what its own units did (NVML GPM per
 * instance). Grows at its end. */
typedef struct rt_gpu_mig {
    int64_t gpu_instance_id; /* NVML's GPU instance id */
    const char *uuid;        /* its MIG device's UUID ("MIG-..."); NULL when NVML gave none */
    rt_gpu_work work;
} rt_gpu_mig;

/* One GPU: NVIDIA through NVML, AMD and Intel through sysfs. */
typedef struct rt_gpu {
    const char *uuid;        /* NULL when the driver has none */
    const char *name;        /* e.g. "NVIDIA A100-SXM4-80GB" */
    const char *device_type; /* "GPU" */
    const char *host_id;     /* PCI address, e.g. "0000:3b:00.0" */
    const rt_kv *detail;     /* driver facts: driver, driver_version, pci ids, ... */
    size_t detail_count;
    double utilization_pct;  /* 0..100 */
    uint64_t vram_total_bytes, vram_used_bytes;
    double vram_used_pct;
    double temperature_celsius, power_watts, frequency_mhz;
    int64_t core_count;      /* RT_NULL_I64 when not reported */
    /* "Energy and carbon": the seconds since tracking began that the GPU's
     * clocks were held down by its power cap (software power cap, hardware power brake) and by
     * heat (software and hardware thermal slowdown), as DCGM's job statistics count them:
     * NVML's violation counters where the driver keeps them, else the throttle reasons seen at
     * each reading times the interval before it; NaN where the GPU reports neither (AMD,
     * Intel, an old driver). Its energy is the sample's energy domain of kind "gpu". */
    double power_throttled_secs, thermal_throttled_secs;
    /* an NVIDIA GPU's index in NVML and NVML's own spelling of its PCI address
     * ("00000000:3B:00.0"; host_id is the same address in the kernel's spelling), which the
     * Rust tool shows as host_id and detail.pci_bus_id (`--format json-rs`); RT_NULL_I64 and
     * NULL for another GPU, or where NVML did not say */
    int64_t nvml_index;
    const char *nvml_bus_id;
    /* 0.19: the GPU's work over the interval (NVML GPM; all NaN without it), the memory
     * NVML reserves for the driver and firmware (NVML's v2 memory information, which leaves
     * it out of vram_used_bytes as nvidia-smi does; RT_NULL_U64 where the driver has no v2
     * call: vram_used_bytes then counts it), and the MIG instances of a GPU in MIG mode with
     * each one's work (empty otherwise) */
    rt_gpu_work work;
    uint64_t vram_reserved_bytes;
    const rt_gpu_mig *const *mig;
    size_t mig_count;
} rt_gpu;

/* The GPUs' use by a set of processes over the interval (rt_sample.gpu_processes, every
 * process on the machine). NVIDIA: from NVML's process lists, as for a tracked tree; AMD and
 * Intel: the card's own figures (busy percent, VRAM in use). May gain fields at its end. */
typedef struct rt_gpu_use {
    double utilization_pct;   /* percent of one GPU, summed over GPUs (200: two busy GPUs); NaN
                               * when no GPU could say */
    uint64_t vram_used_bytes; /* RT_NULL_U64 when no GPU could say */
    int64_t gpu_count_used;   /* GPUs with a process on them (or busy); RT_NULL_I64 when no
                               * GPU could say */
} rt_gpu_use;

/* Pressure stall information of one resource: the share of time some (or all, "full")
 * runnable tasks waited for it. Machine-wide from /proc/pressure, per group from a cgroup v2
 * group's *.pressure files. NaN / RT_NULL_U64 where the kernel reports nothing ("full" of the
 * machine's CPU is reported by recent kernels only). This struct never grows. */
typedef struct rt_pressure {
    double some_avg10, full_avg10; /* the kernel's 10-second averages, percent */
    double some_pct, full_pct;     /* percent of this sample's interval (from the totals);
                                    * NaN for the first reading */
    uint64_t some_total_usec, full_total_usec; /* the kernel's totals, microseconds */
} rt_pressure;

/* Pressure of CPU, memory and I/O. Grows at its end. */
typedef struct rt_psi {
    rt_pressure cpu, memory, io;
} rt_psi;

/* The control group of the tracked tree: in wrapper mode the group the tracker made for
 * the command (see rt_job_cgroup_new); with a pid, the group that process lives in (a
 * container, a SLURM step, a systemd unit). Counters are since tracking began; limits are the
 * tightest of the group and its ancestors (what the kernel enforces). NaN / RT_NULL_* where the
 * layout does not offer a figure. Grows at its end. */
typedef struct rt_cgroup {
    const char *path;    /* the group's path in its hierarchy, e.g. "/resource-tracker-812-1"
                          * (the v2 path when it has one, else the memory controller's) */
    const char *version; /* "v2", "v1" or "hybrid" (v1 controllers and a v2 tree beside them) */
    int own;             /* 1: made by the tracker for the command; 0: the process's own group */
    int exclusive;       /* 1: every process in the group belongs to the tracked tree, so its
                          * counters are the tree's totals (always 1 for an own group) */
    double cpu_secs_total;     /* CPU time of everything that ran in the group (exact) */
    double memory_mib;         /* memory charged to the group now (page cache included) */
    double memory_peak_mib;    /* the kernel's peak charge (memory.peak, max_usage_in_bytes) */
    int64_t pids, pids_peak;   /* tasks now; the most (pids.peak, else the most sampled) */
    uint64_t read_bytes_total, write_bytes_total; /* storage I/O (io.stat, blkio) */
    /* limits: the tightest of the group and its ancestors */
    double cpu_quota_cores;    /* quota / period (cpu.max, cpu.cfs_quota_us); NaN: none */
    double cpu_period_secs;    /* NaN: no quota */
    double memory_limit_mib;   /* memory.max, memory.limit_in_bytes; NaN: none */
    double memory_high_mib;    /* memory.high (v2); NaN: none */
    int64_t pids_limit;        /* pids.max; RT_NULL_I64: none */
    /* what the limits did, since tracking began, and in this interval */
    uint64_t cpu_periods, cpu_throttled_periods; /* of the group that holds the quota */
    double cpu_throttled_secs;
    double cpu_throttled_pct;  /* throttled periods in this interval, percent of its periods;
                                * NaN when there were none */
    uint64_t oom_kills;        /* tasks the OOM killer killed in the group */
    uint64_t memory_max_events; /* times the group hit its memory limit (memory.events max,
                                 * memory.failcnt) */
    rt_psi pressure;           /* the group's (v2); all NaN without */
    /* what of the charge the kernel could not give back (see the memory need) */
    double memory_reclaimable_mib; /* of memory_mib now, what the kernel can reclaim: page cache
                                    * on the file LRU lists and reclaimable slab (memory.stat);
                                    * NaN without memory.stat, and for a group that holds other
                                    * processes than the tree (not exclusive; the tracker's own,
                                    * sample->cgroup): no answer uses it there */
    double memory_unreclaimable_peak_mib; /* the most of the charge the kernel could not
                                    * reclaim (anonymous memory, shared memory and tmpfs,
                                    * kernel memory) since tracking began: at each reading
                                    * memory_mib - memory_reclaimable_mib, and after an interval
                                    * in which the peak charge rose (a peak since the previous
                                    * reading) that peak less the page cache at this reading
                                    * (page cache the job added after such a peak within the
                                    * same interval is taken as held at the peak). For an own
                                    * group the first interval starts at an empty group; for
                                    * another, at the first reading. NaN without memory.stat */
    /* the charge by kind, from memory.stat (read again when the charge or its
     * peak moved, at least every 5 s, as memory_reclaimable_mib is; NaN without it, and for
     * a group that holds other processes than the tree's): with the group's own, they give
     * the job's memory between two walks of its processes (see rt_process.walk_age_secs) */
    double memory_anon_mib;  /* anonymous memory (v2 anon, v1 total_rss): heaps and stacks */
    double memory_file_mib;  /* the page cache (v2 file, v1 total_cache), shared memory included */
    double memory_shmem_mib; /* of memory_file_mib, shared memory: tmpfs, /dev/shm, memfd */
    /* of memory_unreclaimable_peak_mib, what comes of taking the safe side
     * at a peak the readings could not place: the peak charge rose since the last reading to
     * above the charge now while the page cache rose too, and that cache may have come before
     * the peak or after it; it is taken as not there at the peak (between samples the sampler
     * reads the group's charge on a fast clock of its own while it moves, rt_sampler_watch, so
     * the window is tens of milliseconds there). 0 when the peak is exact; NaN as
     * memory_unreclaimable_peak_mib */
    double memory_unreclaimable_unsure_mib;
    /* 0.20: file data the group read back after its memory evicted it (the kernel's refaults
     * of file pages: memory.stat workingset_refault_file, v1's total_workingset_refault_file,
     * workingset_refault before Linux 5.9), since tracking began, MiB: a limit that keeps the
     * job alive but not its page cache shows here (docs/answers.md, "Re-reads"). Read with
     * memory.stat (again whenever the group's reads or memory stalls moved); NaN without it, and
     * for a group that holds other processes than the tree's */
    double memory_refault_mib;
} rt_cgroup;

/* The tracked process tree: the root given with --pid or the wrapped command, every
 * descendant (found through the children of every thread), and in wrapper mode descendants
 * that daemonized and were adopted by the tracker. Totals count everything the tree used
 * since tracking began, processes that already exited included. */
/* One part of the tracked tree as gpu_tracker splits it: the root ("main"), its
 * descendants, or both ("combined"). Memory comes from the processes' smaps_rollup, re-read
 * under the PSS rule (pss_max_age_secs): private is Private_Clean + Private_Dirty, summed;
 * shared counts pages that other processes map too, each once as far as the rollups can
 * tell: the larger of the largest member's Shared_Clean + Shared_Dirty and the part's
 * proportional share of its shared pages (the sum of Pss minus private). That is exact for
 * one process (main), and for a part whose shared pages are shared only among its members or
 * all mapped by one of them; otherwise a lower bound. total = private + shared. Memory is NaN
 * when a member's rollup could not be read. Grows at its end. */
typedef struct rt_process_part {
    double total_rss_mib, private_rss_mib, shared_rss_mib;
    double cores_used;            /* CPU seconds per second over the interval: the tree's
                                   * cores_used shared out as the walk saw it grow (main: the
                                   * root's own time, not its reaped children's; descendants:
                                   * the rest); main + descendants = combined = cores_used */
    int64_t thread_count;         /* threads of the part's live processes */
    uint64_t gpu_vram_used_bytes; /* RT_NULL_U64: no GPU data */
} rt_process_part;

typedef struct rt_process {
    int64_t pid;          /* the root */
    int alive;            /* 1 while the root runs, 0 after it exited */
    int64_t child_count;  /* live descendants, the root not included */
    int64_t thread_count; /* threads of all live processes in the tree */
    double cores_used;    /* CPU seconds per second over the interval; never more than the
                           * machine's cores nor the machine's own busy cores */
    double utime_secs, stime_secs; /* CPU seconds reported for the interval */
    double cpu_secs_total;         /* user+system seconds since tracking began (exact) */
    double pss_mib, rss_mib, swap_mib; /* of the live processes (0 when none is alive) */
    double read_bytes_per_sec, write_bytes_per_sec;
    uint64_t read_bytes_total, write_bytes_total; /* storage I/O since tracking began */
    uint64_t read_bytes, write_bytes;             /* in this interval */
    double gpu_utilization_pct;   /* NaN: no GPU data */
    uint64_t gpu_vram_used_bytes; /* RT_NULL_U64: no GPU data */
    int64_t gpu_count_used;       /* RT_NULL_I64: no GPU data */
    double rss_peak_mib; /* the highest RSS the kernel has shown for the tree: the largest
                          * sampled rss_mib, and never below a reaped process's ru_maxrss */
    uint64_t cancelled_write_bytes_total; /* of write_bytes_total, bytes whose writeback was
                                           * cancelled (the file was truncated or deleted
                                           * first): they never reached storage */
    double memory_peak_mib; /* the kernel's peak memory of the job: its cgroup's peak charge
                             * (cgroup->memory_peak_mib) when the group is the job's own or
                             * holds only the tree; NaN otherwise (no cgroup, a shared one) */
    const rt_cgroup *cgroup; /* NULL without one (or with cgroup reading turned off) */
    /* gpu_tracker's split (never NULL) */
    const rt_process_part *main, *descendants, *combined;
    double rss_hwm_mib; /* the highest peak RSS of any one process of the tree, the kernel's own
                         * high-water mark, so a peak between samples counts: VmHWM of the live
                         * processes (re-read when one faulted in more pages than its RSS grew),
                         * never below a sampled RSS of one of them, nor below the ru_maxrss of a
                         * process the tracker reaped (which covers every child it reaped);
                         * never decreasing */
    uint64_t gpu_vram_peak_bytes; /* the tree's VRAM peak as NVML's accounting counts it (per
                                   * GPU, the sum of its tree processes' maxMemoryUsage, kept
                                   * after they exit): RT_NULL_U64 where accounting is off */
    int64_t unread_count; /* processes the last walk found in the tree but could not open (out
                           * of file descriptors even for one file at a time, or refused): what
                           * they and their new descendants used since their last reading is
                           * missing from this sample's figures, which are then lower bounds;
                           * 0 when every process was read */
    double vms_mib; /* virtual memory of the tree's live processes summed (VmSize, the vsize of
                     * /proc/PID/stat): what Snakemake's max_vms and Nextflow's vmem count; 0
                     * when none is alive */
    /* the two clocks. In a group of the job's own (wrapper mode), the CPU and
     * storage totals, the interval's cores and the group's memory come from the group's
     * counters every sample, whatever the tree's size; the walk over the tree's processes runs
     * on its own cadence (rt_sampler_options.walk_max_age_secs), and the figures only it gives
     * (pss_mib, rss_mib, swap_mib, vms_mib, rss_peak_mib, rss_hwm_mib, child_count,
     * thread_count, unread_count, the parts' memory and threads, the GPU share) are carried
     * from the last walk between two. Without such a group every sample walks. */
    double walk_age_secs;    /* how old those figures are: 0 when this sample walked */
    double walk_period_secs; /* the cadence the walk keeps now: the oldest they get before the
                              * next walk (the interval when every sample walks) */
    double rss_hwm_tree_mib; /* the most the processes alive at one walk may have held at once
                              * as their own high-water marks tell: the tree's RSS at that walk
                              * with shared pages once (the combined part) plus what each
                              * process's VmHWM stood above its RSS then, as if all of them
                              * peaked at the same moment (the safe side for processes that
                              * peak between samples; peaks at different moments make it more
                              * than the tree ever held); never below rss_hwm_mib; never
                              * decreasing. As root, plus the peaks of the processes that ended
                              * since the walk before (the kernel's exit records: those born and
                              * gone between two walks too; exits_counted); and what the job
                              * holds in tmpfs mounts of its own and in /dev/shm. Carried between
                              * walks as rss_hwm_mib is */
    /* 0.19: the work of the GPUs the tree has processes on (rt_gpu.work, the mean over those
     * GPUs: each figure over the GPUs that give it), the device's figures: gpu_work_scope says
     * "job" when the tree's processes were the only ones on those GPUs (the figures are the
     * job's), "device" when other processes shared them, NULL when no such GPU gives a figure
     * (all NaN). The tree on no GPU: every figure of the GPUs that give them is 0 ("job") */
    rt_gpu_work gpu_work;
    const char *gpu_work_scope;
    int64_t gpu_count_busy;   /* GPUs the tree kept busy in the interval (its utilization there
                               * above 0); RT_NULL_I64 when no GPU could say */
    uint64_t gpu_vram_per_gpu_max_bytes; /* the most VRAM the tree holds on one GPU;
                                          * RT_NULL_U64 when no GPU could say */
    /* 0.20: the tree's tasks waiting for a CPU, on average over the interval: the seconds they
     * were runnable but not running (schedstat's run delay) per second. Read from the main
     * thread of each process at each walk (between walks too for a tree of 64 live processes or
     * fewer; a larger one's last walk's demand stands) and scaled to the tree's CPU (the threads
     * and the processes not seen at two readings wait in the same proportion of their CPU time).
     * cores_used + cpu_wait_cores is the job's own demand for cores. NaN: no schedstat, or
     * nothing seen yet */
    double cpu_wait_cores;
    /* 0.20: the tree's processes whose end the kernel's exit records told so far (taskstats, as
     * root): each one's peak RSS is in rss_hwm_tree_mib, those born and gone between two walks
     * too; RT_NULL_I64 where the tracker could not listen (not root, no such kernel family) */
    int64_t exits_counted;
    /* 0.21: the tree's processes seen so far ignoring SIGCHLD (SIG_IGN, at a walk): the kernel
     * reaps any children of theirs without a wait, and the children's CPU never reaches the
     * parent's counters. As root (exits_counted not null) the exit records count it; otherwise
     * such a child counts to its last walk, one born and gone between two walks not at all, and
     * cpu_secs_total is a lower bound */
    int64_t unwaited_parents;
} rt_process;

typedef struct rt_sample {
    double timestamp_secs; /* Unix time of the reading, millisecond precision */
    double interval_secs;  /* monotonic seconds since the previous reading */
    const rt_cpu *cpu;
    const rt_memory *memory;
    const rt_net_iface *const *network; /* non-loopback interfaces */
    size_t network_count;
    const rt_disk *const *disk; /* whole disks, sorted by name (the virtual block devices
                                 * and the ZFS pools, "zfs:<pool>", too; see is_virtual) */
    size_t disk_count;
    const rt_gpu *const *gpu; /* empty without GPUs */
    size_t gpu_count;
    /* Filesystem space summed over the distinct filesystems on the physical disks, and
     * each ZFS pool once: its size, allocated and free as `zpool list` gives them. */
    uint64_t disk_space_total_bytes, disk_space_used_bytes, disk_space_free_bytes;
    const rt_process *process; /* NULL without a tracked process */
    const rt_psi *pressure; /* the machine's pressure (/proc/pressure); NULL without PSI */
    const rt_cgroup *cgroup; /* without a tracked tree: the group the tracker itself runs in (a
                              * container, a SLURM step), own 0, exclusive 0: its limits,
                              * pressure and counters; NULL when it is the root group in every
                              * hierarchy or cgroup reading is off. With a tree: NULL (see
                              * process->cgroup) */
    /* the job's phases ("Phases of a job"): the marks since the previous sample
     * and the phases open at this reading; NULL before the run's first mark */
    const struct rt_phases *phases;
    /* the energy of the machine and of the tree over the interval ("Energy and
     * carbon"); NULL when energy reading is off (rt_sampler_options.energy_off) */
    const struct rt_energy *energy;
    /* what the job was given where it runs ("Where the job runs"):
     * rt_sampler_options.request as the sampler copied it, the same on every sample; NULL
     * when none was given */
    const struct rt_request *request;
    /* every process's use of the GPUs, as the Rust tool's cpu.process_gpu_*
     * without --pid (and the CSV's process GPU columns): filled without a tracked tree; NULL
     * with one (see process->gpu_*) or on a machine without GPUs */
    const struct rt_gpu_use *gpu_processes;
    /* the run's place in a job of several nodes or tasks (rt_member):
     * rt_sampler_options.member as the sampler copied it, the same on every sample; NULL when
     * none was given or it names no job */
    const struct rt_member *member;
    /* 0.20: what the clocks say of the interval ("Clocks" in docs/contracts.md). The wall
     * clock's step in it: its progress less the time that passed (CLOCK_BOOTTIME's), where that
     * is over a second either way (the clock set back or forward), else 0; interval_secs is
     * the monotonic clock's all the same. */
    double clock_step_secs;
    /* The time since the previous reading when it was a gap in the sampling (over 4 intervals
     * and 2 s more than one: the tracker stopped, frozen or starved, or the machine
     * suspended), on the boot clock; else 0. When the tracked command ended in the gap and the
     * kernel told when (its exit record), interval_secs and timestamp_secs end there. */
    double sampling_gap_secs;
} rt_sample;

#ifdef __cplusplus
}
#endif
#endif
