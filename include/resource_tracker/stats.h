/* resource_tracker/stats.h - statistics over records: the run's summary (rt_summary, rt_dist,
 * rt_need), the run under other core counts (rt_cores_table), gpu_tracker's view (rt_usage),
 * rt_stats_*, the summary as JSON, units.
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_STATS_H
#define RESOURCE_TRACKER_STATS_H

#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- statistics, incrementally over records ------------------------------------------- */

/* mean: weighted by the seconds each record covers (a record without a positive interval
 * counts as 1 s); peak: the largest value; p50, p95: time-weighted percentiles from a
 * log-bucketed histogram, within 1/256 (0.39%) relative of the exact value for values from
 * 0.001 to 2^31 (above: the peak); values below 0.001 and negative values count as 0; the
 * memory is fixed (about 41 KiB per figure). NaN when no record had the figure. */
typedef struct rt_dist {
    double mean, peak, p50, p95;
} rt_dist;

/* What a run needed of memory or VRAM, and which figure said so. The memory need is the
 * most the run held that the kernel could not reclaim: the largest of the figures known, in
 * this order of preference when two are equal:
 *   RT_NEED_CGROUP        the job cgroup's unreclaimable peak (anonymous, shared and tmpfs,
 *                         kernel memory; page cache left out): the kernel's, between samples too
 *   RT_NEED_PROCESS_PEAK  the highest peak RSS of one process (VmHWM, ru_maxrss): the kernel's
 *   RT_NEED_RSS           the tree's RSS at a sample, shared pages once (the combined part;
 *                         without it, the RSS peak of the recording): sampled
 *   RT_NEED_PSS           the tree's PSS at a sample: sampled
 *   RT_NEED_PROCESS_PEAKS (without a cgroup figure only) the processes' peaks as if at once
 *                         (rt_process.rss_hwm_tree_mib): the safe side for processes that
 *                         peak between samples; as root with those born and gone between
 *                         them at their peaks (the kernel's exit records), and the job's own
 *                         tmpfs mounts and /dev/shm files
 * Without the job cgroup's figure every memory need is sampled (a lower bound: see below).
 * Page cache the kernel can reclaim is no need: a job streaming a file through the cache is
 * not told to ask for the file's size. VRAM: NVML's accounting peak where it is on
 * (RT_NEED_NVML_PEAK), else the sampled peak (RT_NEED_VRAM). */
typedef enum rt_need_source {
    RT_NEED_UNKNOWN = 0,      /* no figure: the need is unknown (mib NaN) */
    RT_NEED_CGROUP = 1,
    RT_NEED_PROCESS_PEAK = 2,
    RT_NEED_RSS = 3,
    RT_NEED_PSS = 4,
    RT_NEED_NVML_PEAK = 5,
    RT_NEED_VRAM = 6,
    RT_NEED_PROCESS_PEAKS = 7,
} rt_need_source;

typedef struct rt_need {
    double mib;  /* NaN: unknown */
    int source;  /* rt_need_source */
    int sampled; /* 1: a lower bound. Memory: no cgroup figure covers the job (whatever the
                  * source): no other figure counts
                  * memory that no process maps (tmpfs and /dev/shm files, kernel memory), a
                  * sampled one misses a peak between samples, the processes' peaks a process born
                  * and gone between them, one process's peak what the others held. VRAM: the
                  * sampled peak (RT_NEED_VRAM) */
} rt_need;

/* The source's name ("cgroup", "process_peak", "rss", "pss", "nvml_peak", "vram", "process_peaks",
 * "unknown")
 * and a few words on it for people ("cgroup peak less page cache, kernel-counted", ...);
 * static. */
RT_API const char *rt_need_source_name(int source);
RT_API const char *rt_need_source_text(int source);

/* Library-owned, grows at its end. Totals are NaN when no record had the figure. */
typedef struct rt_summary {
    uint64_t samples;
    double start_secs, end_secs; /* Unix time: the earliest record's start, the latest end */
    double duration_secs;        /* seconds covered by the records */
    const char *job_name;        /* the first one seen, or NULL */
    int has_process;             /* 1 when some record had a tracked tree */
    /* the tracked tree */
    double process_cpu_secs;     /* user+system CPU seconds of the whole run: the records'
                                  * cpu_secs_total (each run's last, summed when the file holds
                                  * several: the total going back or another pid), else the sum
                                  * of the per-interval figures */
    rt_dist process_cores, process_pss_mib, process_rss_mib; /* rss peak: the kernel's peak */
    rt_dist process_gpu_usage, process_gpu_vram_mib;
    double process_gpus_used;    /* the most GPUs the tree used at once */
    double process_read_bytes, process_write_bytes;
    /* the machine */
    double cpu_count;            /* the most cores seen */
    rt_dist cpu_cores, memory_used_mib;
    double memory_total_mib;
    rt_dist gpu_usage, gpu_vram_mib;
    double gpu_count, gpu_vram_total_mib;
    double disk_read_bytes, disk_write_bytes, net_recv_bytes, net_sent_bytes;
    double disk_space_used_peak_bytes, disk_space_total_bytes;
    const char *allocation;      /* "dedicated" or "shared" (rt_allocation's rule), NULL */
    /* the tree's cgroup; NaN when no record had the figure */
    double process_memory_peak_mib; /* the kernel's peak charge of the job's group */
    double oom_kills;               /* OOM kills in the group over the run (each run's last
                                     * count, summed when the file holds several, as
                                     * process_cpu_secs; so are the cpu_* totals below) */
    double oom_kill_secs;           /* Unix time of the first record that saw a kill; NaN */
    double memory_limit_mib, memory_high_mib; /* the lowest seen */
    double cpu_quota_cores;         /* the lowest seen */
    double cpu_periods, cpu_throttled_periods, cpu_throttled_secs; /* over the run */
    double pids_peak, pids_limit;
    /* pressure, percent of the time (the records' figures, time-weighted like the others) */
    rt_dist pressure_cpu_some_pct, pressure_memory_some_pct, pressure_memory_full_pct;
    rt_dist pressure_io_some_pct, pressure_io_full_pct;
    /* the run in gpu_tracker's terms (never NULL; see rt_usage) */
    const struct rt_usage *usage;
    /* NaN when no record had the figure */
    double process_rss_hwm_mib;            /* the highest peak RSS of one process (kernel) */
    double process_unreclaimable_peak_mib; /* the job group's unreclaimable peak */
    double process_gpu_vram_peak_mib;      /* NVML accounting's VRAM peak */
    double process_cancelled_write_bytes;  /* of process_write_bytes, the bytes whose writeback
                                            * the kernel cancelled (never stored) */
    double process_cgroup_exclusive;       /* the tree's group: 1 it held only the tree in every
                                            * record that had one, 0 it held other processes
                                            * too; NaN: no group was read */
    double left_behind;                    /* processes of the job still running at the last
                                            * record, its root gone (NaN: the root still ran,
                                            * or unknown) */
    rt_need memory_need, vram_need;        /* what the run needed (see rt_need) */
    /* the job's phases ("Phases of a job"), one per name in the order each first
     * started, and the run's counts of marks; 0, NULL and NULL when the run had no mark */
    const struct rt_phase_summary *const *phases;
    size_t phase_count;
    const struct rt_phase_counts *phase_counts;
    /* "Energy and carbon"; NaN and NULL when no record had energy */
    double energy_joules, process_energy_joules; /* the machine's and the tree's, over the run */
    const char *energy_method, *process_energy_method; /* the least exact of the run's records */
    rt_dist power_watts, process_power_watts;    /* over the intervals (peak: the highest) */
    double idle_power_watts;     /* the machine's floor: the least interval power of the run */
    double gpu_power_throttled_secs, gpu_thermal_throttled_secs; /* over the run, all GPUs */
    const char *energy_model;    /* the estimate's model in words (the last record's); NULL */
    const char *energy_missing;  /* what could not be read and how to grant it; NULL */
    /* carbon: the energy times the grid's intensity (rt_stats_set_grid); NaN when the
     * intensity is unknown (never a world average), or without energy */
    double co2e_grams, process_co2e_grams;
    const struct rt_grid *grid;  /* the intensity used; NULL: unknown */
    /* "Where the job runs": what the job was given and how much of it it used,
     * the way SLURM's seff counts. Each requested figure is the request's (rt_stats_set_request,
     * else the first record that carried one) where it says it, else the job's cgroup limit
     * (the lowest quota, memory.max), else for a GitHub Actions runner the machine's; NaN with a
     * NULL *_from when nothing said it. */
    const struct rt_request *request; /* the request used; NULL: none */
    double requested_cpu_cores, requested_memory_mib, requested_gpus;
    double time_limit_secs;           /* NaN: no limit known */
    const char *requested_cpu_from, *requested_memory_from, *requested_gpus_from, *time_limit_from;
    double cpu_efficiency_pct;    /* CPU time / (requested cores x duration) x 100 */
    double memory_efficiency_pct; /* memory need (memory_need) / requested memory x 100 */
    double gpu_efficiency_pct;    /* the tree's mean GPU usage / requested GPUs x 100 (NaN for 0
                                   * GPUs requested) */
    double time_limit_used_pct;   /* (the run's end - the job's start) / the time limit x 100 */
    double process_vms_peak_mib;  /* the tree's highest sampled vms_mib */
    double process_walk_age_max_secs; /* the oldest the walk's own figures (PSS, counts, parts)
                                       * were in a sample (the two clocks: 0 when every sample
                                       * walked; NaN without a tree or from older files) */
    double process_rss_hwm_tree_mib;  /* rt_process.rss_hwm_tree_mib, the highest (NaN without
                                       * a tree or from older files) */
    double process_unreclaimable_unsure_mib; /* of process_unreclaimable_peak_mib, the safe side's
                                       * part (rt_cgroup.memory_unreclaimable_unsure_mib) at the
                                       * record that gave the peak; NaN as the peak */
    double pressure_group;            /* 1: the pressure figures are the group's in every record
                                       * that had any (rt_record.pressure_group), 0: some are the
                                       * machine's; NaN: none */
    const struct rt_cores_table *cores; /* the run's duration under 1, 2, ... cores (see
                                       * rt_cores_table); NULL without a tracked tree */
    double max_slowdown_pct; /* the slowdown bound the run's own answers use (rt_stats_set_max_slowdown,
                              * the tool's --max-slowdown): rt_recommend without options takes the
                              * first run's; NaN: the default, 10 */
    const struct rt_member *member; /* the run's place in a job of several: the first record's
                              * that carried one; NULL: none */
    /* 0.19: what the job's GPUs did (NVML GPM; the machine's GPUs without a tree): time-weighted
     * over the records that had the figure, NaN where none had (GPUs without GPM) */
    rt_dist gpu_sm_active_pct, gpu_sm_occupancy_pct, gpu_tensor_active_pct, gpu_dram_active_pct;
    rt_dist gpu_fp64_active_pct, gpu_fp32_active_pct, gpu_fp16_active_pct;
    rt_dist gpu_pcie_bytes_per_sec, gpu_nvlink_bytes_per_sec; /* both directions */
    double gpu_work_shared;      /* 1: some records' figures were the devices', shared with other
                                  * processes; 0: the job's alone in every one; NaN: none */
    double process_gpus_busy;    /* the most GPUs the tree kept busy at once */
    double process_gpu_vram_per_gpu_peak_mib; /* the most VRAM the tree held on one GPU */
    double gpu_idle_cpu_busy_secs; /* seconds the tree kept its CPU busy (a quarter of a core
                                  * or more) while its GPUs idled (its GPU usage under 0.05 GPU,
                                  * and its SM activity under 5% where known), the interval its
                                  * command ended in left out; NaN without a tree or GPU figures */
    /* 0.19: the energy by part */
    /* what the run's energy is made of (rt_summary_energy_part), the largest first (the job's
     * figure with a tree, else the machine's); NULL and 0 when no record carried its energy's
     * domains (the embedded tracker's store keeps none) */
    const struct rt_summary_energy_part *const *energy_parts;
    size_t energy_part_count;
    /* the source of a platform meter that gave the machine's energy ("hwmon", "intel-rapl" for
     * psys), the parts then within it; NULL: the machine's energy is the parts' sum */
    const char *energy_meter_source;
    /* 0.20: file data the job's group read back after its memory evicted it, over the run
     * (rt_record.cgroup_memory_refault_mib: each run's last total, summed when the file holds
     * several); NaN when no record had it (docs/answers.md, "Re-reads") */
    double memory_refault_mib;
    /* 0.20: what the processes left behind (left_behind) held at the end: the tree's PSS in the
     * last record with its root gone (its RSS where no PSS was read); NaN when none was left */
    double left_behind_mib;
    /* 0.20: the tree's processes whose end the kernel's exit records told (the highest
     * rt_record.process_exits_counted): with it, the need's process_peaks counts those born
     * and gone between samples; NaN where the tracker could not listen to them */
    double process_exits_counted;
    /* 0.21: the tree's processes seen ignoring SIGCHLD (the highest
     * rt_record.process_unwaited_parents): without process_exits_counted, the CPU of their
     * children born and gone between samples is missing (a lower bound); NaN where no record had
     * it */
    double process_unwaited_parents;
    /* 0.21: the signal that ended the run's command (rt_stats_set_end_signal): its terminating
     * signal, or the one the tracker passed on to it before it exited (15, SIGTERM: a
     * scheduler's time limit or a preemption); 0: it exited on its own; NaN: not known (a --pid,
     * the machine, a recorded file). Ended by SIGTERM, SIGXCPU, or SIGKILL without an OOM kill,
     * its duration is a floor (docs/answers.md, "A run that was stopped") */
    double end_signal;
    /* 0.21: the clocks (rt_record.clock_step_secs, .sampling_gap_secs; docs/answers.md
     * "Clocks"): how many times the wall clock stepped, their sum and the largest (by size, with
     * its sign); how many gaps the sampling had, their sum and the longest. 0: none */
    double clock_steps, clock_step_secs, clock_step_largest_secs;
    double sampling_gaps, sampling_gap_secs, sampling_gap_longest_secs;
} rt_summary;

/* 0.19: one part of a run's energy: the domains of the records' energy (rt_energy_domain) of
 * one kind read from one source by one method, summed over the domains and the records. The
 * parts are the domains that make the machine's total (in_total) and the job's share: packages,
 * DRAM, GPUs, the estimate (a package's core and uncore parts are inside it; a platform meter,
 * when one gives the machine's total, is energy_meter_source and no part). Several GPUs of one
 * source are one part, the packages of one source likewise. At most 16 parts are kept (any
 * further ones are left out of the list, never of the totals). */
typedef struct rt_summary_energy_part {
    /* "cpu" (RAPL's or perf's packages, the estimate), "dram", "gpu", else the domains' own kind */
    const char *kind;
    /* the domains' source: "nvml", "intel-rapl", "amd-rapl", "perf", "hwmon", "model" (the
     * estimate); NULL when they named none */
    const char *source;
    const char *method;           /* "measured", "sampled" or "estimated" */
    double energy_joules;         /* the machine's, over the run */
    double process_energy_joules; /* the tracked tree's share; NaN without one */
    double devices;               /* the most domains of the part in one record (2 GPUs: 2) */
} rt_summary_energy_part;

/* The parts of s's energy in words, the largest first: "GPU 6.8 kJ measured by NVML, CPU 0.4 kJ
 * estimated" (the job's share, job nonzero; else the machine's); a part of no energy (a GPU the
 * job never used) or without its figure is left out.
 * buf is NUL-terminated when cap > 0; *len (when not NULL) is the length needed, like snprintf's
 * result. Returns RT_OK, "" when s has no parts; RT_ERR_INVALID for a NULL s. */
RT_API rt_error rt_summary_energy_words(const rt_summary *s, int job, char *buf, size_t cap, size_t *len);

/* ---- the run under other core counts ----------------------------------------------------
 * What the run would have taken with c cores, from its records (docs/answers.md, "The CPU
 * answer"). 0.20: a record with its tasks' waits for a CPU (rt_record.process_cpu_wait_cores,
 * schedstat's run delay) is predicted from the job's own demand, p = cores used + tasks
 * waiting: its CPU work takes work / min(p, c) under c cores, whatever other work made it wait
 * (fewer than one task runnable on average: its time less its waits), so a shared machine's
 * waits never look like a need for more cores and no count above what the tasks could use is
 * faster. Otherwise (older records) each record's CPU work (process_cores x interval_secs core-seconds) runs at most c
 * cores wide: an interval that used u > c cores takes u / c times as long; one that used c or
 * fewer takes as long as it did (time off a CPU, such as I/O or sleep, is unchanged). With more
 * cores than the run had (its quota, else the machine's cores) an interval is faster by at most
 * the time its tasks waited for a CPU (the CPU pressure "some" share of the interval: the job
 * group's, else the machine's), and never faster than its work spread over c cores: such a row
 * is a bound (wait_bound), and without pressure figures no gain is claimed. The model knows
 * nothing finer than an interval: a burst wider than c within one makes the real run slower. */
#define RT_CORES_MAX 256 /* the most cores a table goes to */

typedef struct rt_cores_row {
    int64_t cores;
    double duration_secs; /* predicted */
    double core_hours;    /* cores x duration / 3600 */
    int wait_bound;       /* 1: more cores than the run had: faster only by its waits, at most */
} rt_cores_row;

typedef struct rt_cores_table {
    size_t n;                 /* rows: 1 .. n cores, a little above the most the run could use */
    const rt_cores_row *rows; /* rows[c - 1] is c cores */
    double duration_secs;     /* the run's own (the records' seconds) */
    double cores_had;         /* the most the run could use (its quota, else the machine's
                               * cores); NaN: unknown */
    double peak_cores;        /* the most it used over one interval */
    double wait_secs;         /* time at least one task waited for a CPU; NaN: no pressure */
    const char *wait_from;    /* "group" (the job's own figures), "machine" (some are the
                               * machine's: an overstatement), "tasks" (0.20: the job's tasks'
                               * run delay from schedstat, summed over the tasks: the demand
                               * model), NULL: none */
    /* 0.20 */
    double own_secs;      /* the run's own duration: each interval predicted at the cores it had
                           * (with the tasks' waits known: the waits other work caused left
                           * out); the slowdown bound is judged against it */
    double others_cores;  /* the cores other work used beside the job on average (the machine's
                           * busy cores less the job's); NaN: unknown */
    double machine_cores; /* the machine's cores; NaN: unknown */
    double demand_cores;  /* the most cores the job's runnable tasks wanted over one interval
                           * (used + waiting); NaN: no interval with its waits known */
} rt_cores_table;

/* ---- gpu_tracker's view of a run --------------------------------------------------------
 * The peaks and means gpu_tracker's Tracker reports (docs/contracts.md §8, §15), from the
 * same records: RAM and GPU RAM of the machine and of the tree's parts (main, descendants,
 * combined: see rt_process_part), and utilization as a sum of percentages (100 per busy core
 * or GPU) and as a hardware percentage: the sum divided by the units expected to be used
 * (expected_cores for main, descendants and combined, default all cores; the machine's always
 * by all its cores; GPUs by the number chosen). Means are weighted by the seconds each record
 * covers; each peak is its own figure's (a part's peak total need not be its peak private plus
 * peak shared). */
typedef struct rt_usage_pct {
    double max_sum_pct, max_hardware_pct, mean_sum_pct, mean_hardware_pct;
} rt_usage_pct;

typedef struct rt_usage_rss {
    double total_mib, private_mib, shared_mib;
} rt_usage_rss;

typedef struct rt_usage {
    double duration_secs; /* seconds the records cover (gpu_tracker's compute time) */
    /* RAM, MiB */
    double ram_capacity_mib;            /* the machine's */
    double ram_system_peak_mib, ram_system_mean_mib; /* the machine's used memory */
    rt_usage_rss ram_peak[3], ram_mean[3]; /* [0] main, [1] descendants, [2] combined */
    /* GPU RAM, MiB: all GPUs (gpu_uuids chooses utilization only, as in gpu_tracker) */
    double gpu_ram_capacity_mib;
    double gpu_ram_system_peak_mib, gpu_ram_system_mean_mib;
    double gpu_ram_peak_mib[3], gpu_ram_mean_mib[3];
    /* CPU */
    double system_core_count; /* the most cores seen */
    double expected_cores;    /* the denominator for the parts */
    rt_usage_pct cpu_system, cpu[3];
    double threads_peak[3];
    /* GPUs */
    double system_gpu_count;  /* the most GPUs seen (0 without) */
    double expected_gpus;     /* the GPUs chosen (all when none were) */
    rt_usage_pct gpu;         /* of the GPUs chosen; NaN when records had no per-GPU list and
                               * some were chosen */
} rt_usage;

/* How the view counts: expected_cores (0: all the machine's cores) and the GPUs whose
 * utilization counts (gpu_uuid_count 0: all). */
typedef struct rt_usage_options {
    size_t struct_size; /* sizeof(rt_usage_options) as the caller compiled it */
    double expected_cores;
    const char *const *gpu_uuids;
    size_t gpu_uuid_count;
} rt_usage_options;

#define RT_USAGE_OPTIONS_INIT {.struct_size = sizeof(rt_usage_options)}

typedef struct rt_stats rt_stats;

/* A new, empty accumulator, counting the summary's usage (rt_usage) as usage says (NULL: the
 * defaults; see rt_stats_set_usage). Its memory does not grow with the number of records.
 * Returns RT_OK and *out (free with rt_stats_free); RT_ERR_INVALID (out NULL, a struct_size
 * too small, a negative expected_cores); RT_ERR_NOMEM. Last error. */
RT_API rt_error rt_stats_new_with(const rt_usage_options *usage, rt_stats **out);
/* Adds one record of rec_size bytes, sizeof(rt_record) as the caller compiled it (see
 * rt_record for what is read of it). A NULL st or rec, or a rec_size 0: nothing is added. */
RT_API void rt_stats_add_sized(rt_stats *st, const rt_record *rec, size_t rec_size);
/* The statistics so far (never NULL for a non-NULL st; samples 0 before any record). Valid
 * until the next rt_stats_add_sized or rt_stats_free. */
RT_API const rt_summary *rt_stats_summary(rt_stats *st);
RT_API void rt_stats_free(rt_stats *st);

/* Sets how the summary's usage (rt_usage) counts, before the first record is added: the
 * uuids are copied. RT_OK, RT_ERR_INVALID (NULL, struct_size too small, a negative
 * expected_cores, records already added), RT_ERR_NOMEM. */
RT_API rt_error rt_stats_set_usage(rt_stats *st, const rt_usage_options *opts);

/* Sets the slowdown bound of the run's own answers: its summary's max_slowdown_pct, which
 * rt_recommend without options (the summary, report, notes and card of the run) applies to its
 * cores. RT_OK; RT_ERR_INVALID for a NULL st or a pct negative or NaN. */
RT_API rt_error rt_stats_set_max_slowdown(rt_stats *st, double pct);

/* Sets how the run's command ended: its summary's end_signal (0.21), the signal that ended it
 * (0: it exited on its own). RT_OK; RT_ERR_INVALID for a NULL st or a signal outside 0-64. */
RT_API rt_error rt_stats_set_end_signal(rt_stats *st, int signal);

/* Formats the summary as one JSON object with a newline. memory_unit and time_unit are
 * gpu_tracker's names ("bytes", "kilobytes", "megabytes", "gigabytes", "terabytes";
 * "seconds", "minutes", "hours", "days"), or NULL for MiB and seconds; memory and time keys
 * end in the unit ("_mib", "_secs" by default, else "_gigabytes", "_hours", ...). buf is
 * NUL-terminated when cap > 0; *len (when not NULL) is the length needed, like snprintf's
 * result (>= cap: buf was too small). Returns RT_OK; RT_ERR_INVALID for an unknown unit (the
 * last error names it; *len 0) or a NULL s. */
RT_API rt_error rt_format_summary_json(const rt_summary *s, const char *memory_unit, const char *time_unit,
                                       char *buf, size_t cap, size_t *len);

/* gpu_tracker's units, the ones rt_format_summary takes: the bytes in the memory unit
 * called name ("bytes" 1, "kilobytes" 1e3, "megabytes" 1e6, "gigabytes" 1e9, "terabytes" 1e12:
 * decimal, as gpu_tracker counts), or the seconds in the time unit ("seconds" 1, "minutes" 60,
 * "hours" 3600, "days" 86400). Returns 0 for NULL or a name not listed. */
RT_API double rt_memory_unit_bytes(const char *name);
RT_API double rt_time_unit_secs(const char *name);

#ifdef __cplusplus
}
#endif

#endif
