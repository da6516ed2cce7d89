/* resource_tracker/analysis.h - analysis of a run: records, the reader, statistics, the cores
 * table, the gpu_tracker view, recommendations, notes, Keeper, the HTML report. Part of the
 * public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_ANALYSIS_H
#define RESOURCE_TRACKER_ANALYSIS_H

#include "sample.h"
#include "host.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Analysis of a run: records, a reader for recorded runs, statistics, recommendations,
 * the Keeper server lookup and the HTML report. The same code serves a live run (records made
 * from samples) and a recorded file (records read back).
 *
 * Structs the library fills into caller storage (rt_recommendation, rt_server) begin with
 * struct_size like the options: the library fills only the fields within it. */

/* A part of the tree in a record: rt_process_part's figures as doubles (NaN: null). */
typedef struct rt_record_part {
    double total_rss_mib, private_rss_mib, shared_rss_mib;
    double cores;       /* CPU seconds per second over the interval */
    double threads;
    double gpu_vram_mib;
} rt_record_part;

/* ---- one record: the figures of one sample that the analysis uses ----------------------
 * Every figure is a double; NaN is null (not reported, or not in the file). Amounts "in the
 * interval" cover the interval_secs before timestamp_secs. Library-owned, grows at its end. */
typedef struct rt_record {
    double timestamp_secs;  /* Unix time of the reading */
    double interval_secs;   /* seconds the record covers; the reader fills it from the previous
                             * timestamp when the file has none (the first record: the second's) */
    const char *job_name;   /* NULL when none */
    /* the machine */
    double cpu_cores;              /* busy cores, fractional */
    double cpu_count;              /* online cores */
    double memory_used_mib, memory_total_mib;
    double disk_read_bytes, disk_write_bytes; /* in the interval, all disks */
    double net_recv_bytes, net_sent_bytes;    /* in the interval, all interfaces */
    double disk_space_total_bytes, disk_space_used_bytes;
    double gpu_usage;       /* busy GPUs: the sum of utilizations / 100 */
    double gpu_vram_mib;    /* VRAM used, all GPUs */
    double gpu_utilized;    /* GPUs with utilization > 0 */
    double gpu_count;       /* GPUs present (0 without) */
    double gpu_vram_total_mib;
    /* the tracked process tree: all NaN without one */
    double process_pid;
    double process_children;
    double process_cores;           /* CPU seconds per second over the interval */
    double process_cpu_secs;        /* user+system CPU seconds in the interval */
    double process_cpu_secs_total;  /* since tracking began (NaN when the file lacks it) */
    double process_pss_mib, process_rss_mib;
    double process_rss_peak_mib;    /* the kernel's peak so far (NaN when the file lacks it) */
    double process_read_bytes, process_write_bytes; /* in the interval */
    double process_gpu_usage;       /* busy GPUs of the tree */
    double process_gpu_vram_mib;
    double process_gpu_utilized;    /* GPUs the tree used */
    /* the tree's cgroup, else (no tree) the group the tracker runs in; NaN without
     * one, or when the file lacks it */
    double process_memory_peak_mib;  /* the kernel's peak charge so far */
    double cgroup_oom_kills;         /* OOM kills in the group since tracking began */
    double cgroup_memory_limit_mib;  /* NaN: no limit */
    double cgroup_memory_high_mib;
    double cgroup_cpu_quota_cores;   /* NaN: no quota */
    double cgroup_cpu_periods;       /* quota periods since tracking began */
    double cgroup_cpu_throttled_periods; /* of them, throttled */
    double cgroup_cpu_throttled_secs;    /* since tracking began */
    double cgroup_pids_peak, cgroup_pids_limit;
    /* pressure in the interval, percent: per resource the group's where the group has it (its
     * some_pct or some_avg10 is known), else the machine's */
    double pressure_cpu_some_pct, pressure_memory_some_pct, pressure_memory_full_pct;
    double pressure_io_some_pct, pressure_io_full_pct;
    /* gpu_tracker's split of the tree (all NaN without a tree, or when the file
     * lacks it), and the machine's GPUs one by one, for choosing some of them by uuid: pointers
     * into the sample, or the reader's own with uuid, utilization_pct, vram_used_bytes and
     * vram_total_bytes set (the rest null); NULL and 0 when the source has no such list (CSV,
     * a tracker's kept samples) */
    rt_record_part main, descendants, combined;
    const rt_gpu *const *gpu;
    size_t gpu_n;
    /* what the memory need and the notes are made from (NaN without a tree, or
     * when the file lacks it) */
    double process_rss_hwm_mib;            /* rt_process.rss_hwm_mib */
    double process_unreclaimable_peak_mib; /* the tree's group's memory_unreclaimable_peak_mib,
                                            * when the group holds only the tree */
    double process_gpu_vram_peak_mib;      /* rt_process.gpu_vram_peak_bytes in MiB */
    double process_cancelled_write_bytes_total; /* written bytes whose writeback was cancelled
                                            * (the file was deleted or truncated first), since
                                            * tracking began */
    double process_alive;                  /* 1 while the root runs, 0 after it exited */
    double process_cgroup_exclusive;       /* the tree's group: 1 it holds only the tree (or is
                                            * the job's own), 0 it holds other processes too;
                                            * NaN without one */
    double cgroup_pids;                    /* tasks in the tree's group now */
    /* as rt_sample.phases (NULL before the run's first mark, and past a caller's
     * rec_size) */
    const struct rt_phases *phases;
    /* "Energy and carbon": rt_sample.energy's figures (NaN, NULL where the
     * sample had no energy, and in files without them) */
    double energy_joules;            /* the machine's, in the interval */
    double process_energy_joules;    /* the tree's share, in the interval */
    const char *energy_method, *process_energy_method; /* "measured", "sampled", "estimated" */
    double idle_power_watts;         /* the machine's floor so far */
    double gpu_power_throttled_secs, gpu_thermal_throttled_secs; /* since tracking began,
                                      * summed over the GPUs that report them */
    const struct rt_energy *energy;  /* the sample's (or the reader's, with its domains);
                                      * NULL without */
    /* "Where the job runs" */
    const struct rt_request *request; /* the sample's, or the reader's from a line that holds
                                       * one (a JSON line file has it on its run's first line);
                                       * NULL without */
    double process_vms_mib;           /* rt_process.vms_mib (NaN without a tree, or when the
                                       * file lacks it) */
    double process_walk_age_secs; /* rt_process.walk_age_secs (NaN without a tree, or when the
                                   * file lacks it) */
    double process_rss_hwm_tree_mib; /* rt_process.rss_hwm_tree_mib (NaN without a tree, or when
                                      * the file lacks it) */
    double process_unreclaimable_unsure_mib; /* the tree's group's memory_unreclaimable_unsure_mib,
                                      * when the group holds only the tree */
    double pressure_group;           /* 1: every pressure figure of the record is the group's (the
                                      * tree's, else the tracker's own), 0: some are the machine's;
                                      * NaN: the record has none */
    const struct rt_member *member;  /* the sample's, or the reader's from a line that holds one;
                                      * NULL without */
} rt_record;
/* rt_record has no struct_size: where it crosses between caller and library, a size argument
 * says how much of it the caller has, sizeof(rt_record) as the caller compiled it. The
 * library writes into a caller's record (rt_record_from_sample_sized, rt_tracker_record) and
 * reads one (rt_stats_add_sized, rt_report_add_sized, rt_pipeline_add_record) no byte past
 * that size. A record it reads is taken member by member: what lies wholly within the size is the
 * caller's, the members past it (newer than the caller's header) are null: NaN, job_name and gpu
 * NULL, gpu_n 0 (gpu and gpu_n count only together). A caller that fills records itself sets
 * what it does not know to null the same way. */

/* Fills the record at out from a sample. out_size is the caller's storage,
 * sizeof(rt_record) as it compiled it: the library writes no more than that, nor more than
 * its own rt_record (a newer caller's tail is left as it was). job_name points into the
 * sample, or is NULL. RT_OK; RT_ERR_INVALID (s or out NULL, out_size 0). */
RT_API rt_error rt_record_from_sample_sized(const rt_sample *s, rt_record *out, size_t out_size);

/* ---- the reader: recorded runs, one record at a time, in constant memory --------------
 * Reads the tool's JSON lines and CSV (docs/contracts.md §2, §3) and the Python
 * resource-tracker's CSV files (ProcessTracker, SystemTracker, and the combined process_* /
 * system_* columns: docs/contracts.md §13), recognised by their first line. A malformed line is
 * logged once as "FILE:LINE: problem" (RT_LOG_WARN) and skipped. */
typedef struct rt_reader rt_reader;

typedef struct rt_reader_options {
    size_t struct_size; /* sizeof(rt_reader_options) as the caller compiled it */
    rt_log_fn log;      /* NULL: messages are dropped */
    void *log_user;
} rt_reader_options;

#define RT_READER_OPTIONS_INIT {.struct_size = sizeof(rt_reader_options)}

/* Opens path ("-" is stdin; gzip, told by its magic, is read through zlib as a stream).
 * Returns RT_OK and *out (free with rt_reader_free), RT_ERR_NOT_FOUND / RT_ERR_IO when it
 * cannot be opened, RT_ERR_PARSE when the first line is no format the reader knows or is
 * longer than 16 MiB, RT_ERR_UNSUPPORTED for gzip when zlib cannot be loaded, RT_ERR_NOMEM,
 * RT_ERR_INVALID. Every failure but the last two is also logged (RT_LOG_ERROR) with the file's
 * name and the reason, which is the last error (and so for rt_reader_open_buffer, which reads
 * no gzip). `_open`, not `_new`: it opens a file, as fopen. Memory does not grow with the
 * file: at most the longest line and 1 MiB more (docs/contracts.md §2). */
RT_API rt_error rt_reader_open(const char *path, const rt_reader_options *opts, rt_reader **out);

/* The same over a buffer in memory (name is used in messages; buf must outlive the reader). */
RT_API rt_error rt_reader_open_buffer(const char *name, const char *buf, size_t len,
                                      const rt_reader_options *opts, rt_reader **out);

/* The next record: RT_OK with *out set (valid until the next call), RT_OK with *out NULL at
 * the end, RT_ERR_IO when reading failed, RT_ERR_PARSE at a line longer than 16 MiB
 * (logged as "FILE:LINE: a line longer than 16 MiB ...", rt_reader_errmsg: no recorded run has
 * one, so the rest is not read), RT_ERR_NOMEM. Each comes after the records before it, and
 * stays: every later call returns it again. */
RT_API rt_error rt_reader_next(rt_reader *r, const rt_record **out);

/* "json", "csv" (docs/contracts.md §3), "python-process", "python-system" or "python-combined";
 * "json-rs" for the Rust resource-tracker's JSON lines (ours with --format json-rs) once
 * a line of them was read. */
RT_API const char *rt_reader_format(const rt_reader *r);

/* Records returned so far, and malformed lines skipped so far. */
RT_API uint64_t rt_reader_records(const rt_reader *r);
RT_API uint64_t rt_reader_skipped(const rt_reader *r);

/* The reader's own last problem (sqlite3_errmsg): "FILE:LINE: problem" of the last
 * malformed line skipped, or the error of rt_reader_next; "" when none. Valid until the
 * next call on r. */
RT_API const char *rt_reader_errmsg(const rt_reader *r);

/* Closes the file and frees the reader. NULL is allowed. */
RT_API void rt_reader_free(rt_reader *r);

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
 *                         peak between samples, still blind to one born and gone between them
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
} rt_summary;

/* ---- the run under other core counts ----------------------------------------------------
 * What the run would have taken with c cores, from its records (docs/answers.md, "The CPU
 * answer"). Each record's CPU work (process_cores x interval_secs core-seconds) runs at most c
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
                               * machine's: an overstatement), NULL: none */
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

/* ---- recommendations ------------------------------------------------------------------- */

typedef struct rt_recommendation {
    size_t struct_size;     /* caller sets sizeof(rt_recommendation) */
    int64_t cpu;            /* cores (rt_recommend; cpu_basis says how) */
    int64_t memory_mib;     /* rt_round_memory_mib(peak PSS x 1.2) */
    int64_t gpu;            /* GPUs used */
    int64_t vram_mib;       /* rt_round_memory_mib(peak VRAM x 1.2); 0 without GPUs */
    uint64_t runs;          /* runs it is made from */
    double duration_secs;   /* the runs' mean duration (for costs) */
    int oom_killed;         /* a run was OOM-killed: memory_mib is above the peak it reached
                             * (never less than rt_round_memory_mib(peak x 1.2) of that run) */
    double cpu_quota_cores; /* the quota that held a run back (throttled in at least 10% of
                             * its periods): cpu is then above it; NaN when none did */
    double cpu_throttled_pct; /* that run's throttled periods, percent; NaN */
    double memory_need_mib;   /* the runs' highest memory need (rt_summary.memory_need); NaN:
                               * unknown, and memory_mib is then RT_NULL_I64 unless a run was
                               * OOM-killed at a known limit */
    int memory_source;        /* rt_need_source of that need */
    int memory_sampled;       /* 1: from samples only (a lower bound) */
    double headroom_pct;      /* added to the needs: 10 + 10 / runs (20 for one run) */
    double vram_need_mib;     /* the runs' highest VRAM need; NaN: unknown */
    int vram_source;
    /* the CPU answer in time (rt_cores_table). With the tables of the runs, cpu is
     * the fewest cores under which every run is predicted within max_slowdown_pct of its own
     * duration (the cheapest such count, where a price per core-hour is known: rt_recommend_with)
     * and never below a quota that held a run back; without them, the mean rule (rt_recommend) */
    double max_slowdown_pct;      /* the bound used (rt_recommend_options; default 10) */
    double cpu_duration_secs;     /* predicted duration under cpu cores (the slowest run's); NaN:
                                   * no table */
    double cpu_run_duration_secs; /* that run's own duration */
    int64_t cpu_fewer;            /* cpu - 1 (0: none fewer) */
    double cpu_fewer_duration_secs; /* predicted under cpu_fewer cores; NaN: none */
    double cpu_cost_usd;          /* predicted money per run under cpu cores; NaN: no price */
    double time_limit_secs;       /* a time limit to ask with the cores (SLURM --time): the
                                   * predicted duration plus 50%, at least 10 minutes, rounded up
                                   * to whole minutes; NaN: no table */
    const char *cpu_basis;        /* how cpu was decided: "duration" (the tables), "throttled"
                                   * (a quota's floor above them), "mean" (no table) */
    /* the phase that decided cpu (cpu_basis "duration", cpu above 1): of the runs one core fewer
     * would slow past the bound, the phase (rt_phase_summary.cores) that core would slow the
     * most; "" when none: no phases, or an ask of 1 core */
    char cpu_phase[256];
    double cpu_phase_fewer_secs; /* the seconds one core fewer adds to that phase; NaN: none */
} rt_recommendation;

#define RT_RECOMMENDATION_INIT {.struct_size = sizeof(rt_recommendation)}

/* mib rounded up to 128, 256, 512, 1024 or 2048 MiB, above that to whole GiB (in MiB). */
RT_API int64_t rt_round_memory_mib(double mib);

/* Recommends from n runs of one job:
 *  - cpu: the fewest cores under which each run's predicted duration (its summary's
 *    rt_cores_table) is within 10% of its own; runs without a table (older summaries):
 *    max(1, round(the mean of the runs' mean cores)); either way above a CPU quota that
 *    throttled a run in 10% or more of its periods (the quota rounded up, plus one);
 *  - memory: the runs' highest memory need (never a mean: one run that needed more is one
 *    that would die under less) plus headroom_pct, rounded up (rt_round_memory_mib); after an
 *    OOM kill, never below that run's peak or limit plus 20%, rounded; RT_NULL_I64 when no
 *    figure is known;
 *  - gpu: the most GPUs a run used at once; vram: the highest VRAM need plus headroom, rounded;
 *  - headroom_pct = 10 + 10 / n: 20% for one run, less as runs agree (the highest of many runs
 *    already covers their spread).
 * Returns RT_OK, or RT_ERR_INVALID for n == 0, a NULL run or a run without a tracked tree. */
RT_API rt_error rt_recommend(const rt_summary *const *runs, size_t n, rt_recommendation *out);

/* What rt_recommend_with is asked. */
typedef struct rt_recommend_options {
    size_t struct_size;       /* sizeof(rt_recommend_options) as the caller compiled it */
    double max_slowdown_pct;  /* the predicted duration may exceed a run's own by this much,
                               * percent (RT_RECOMMEND_OPTIONS_INIT: 10; 0: no slower at all) */
    double usd_per_core_hour; /* a core-hour's price; 0 or NaN: none (the fewest cores within the
                               * bound; with a price, the cheapest within it) */
} rt_recommend_options;

#define RT_RECOMMEND_OPTIONS_INIT {.struct_size = sizeof(rt_recommend_options), .max_slowdown_pct = 10}

/* The fewest cores under which t's predicted duration is within max_slowdown_pct of its own
 * (the rule rt_recommend applies to each run, here to one table: a run's or a phase's).
 * Returns 0 for a NULL or empty table or a max_slowdown_pct negative or NaN. */
RT_API int64_t rt_cores_fewest(const struct rt_cores_table *t, double max_slowdown_pct);

/* rt_recommend with options (opts NULL: the defaults, as rt_recommend). Returns as rt_recommend,
 * and RT_ERR_INVALID for a max_slowdown_pct or price that is negative or NaN. */
RT_API rt_error rt_recommend_with(const rt_recommend_options *opts, const rt_summary *const *runs, size_t n,
                                  rt_recommendation *out);

/* What the recommended cores cost in time, in words, one line without a newline:
 * "2 cores: about 14 min, as this run; 1 core: about 22 min (+57%)", with the money where the
 * recommendation has it, and "(at best: ...)" where the count is above what the run had.
 * Returns the length needed like snprintf; 0 (buf "") when rec has no predicted duration (a
 * recommendation by the mean rule, or a caller's struct that ends before it). */
RT_API size_t rt_recommendation_time_words(const rt_recommendation *rec, char *buf, size_t cap);

/* The recommendation in a scheduler's words, one line with a newline:
 * RT_SCHED_METAFLOW  @resources(cpu=2, memory=3222, gpu=1)   (memory in MB, as Metaflow
 *                    asks: 3072 MiB is 3221.2 MB, rounded up)
 * RT_SCHED_K8S       resources: {requests: {cpu: "2", memory: "3072Mi", nvidia.com/gpu: 1}}
 * RT_SCHED_SLURM     --cpus-per-task=2 --mem=3072M --gres=gpu:1 --time=0:30:00   (the
 *                    time limit, where the recommendation has one: time_limit_secs)
 * Returns the length needed like snprintf (0 for an unknown scheduler). */
typedef enum rt_scheduler { RT_SCHED_METAFLOW = 0, RT_SCHED_K8S = 1, RT_SCHED_SLURM = 2 } rt_scheduler;
RT_API size_t rt_format_recommendation(const rt_recommendation *rec, rt_scheduler sched, char *buf, size_t cap);

/* ---- notes a person can act on ----------------------------------------------------------
 * One line each, made from the statistics: what went wrong, what was wasted, what may be
 * missing. rt_summary_notes speaks of one run (the summary, the report, the history);
 * rt_recommend_notes of a recommendation made from runs (recommend). */
typedef enum rt_note_kind {
    RT_NOTE_OOM_KILLED = 1,            /* the OOM killer killed tasks of the job */
    RT_NOTE_ACCOUNTING_INCOMPLETE = 2, /* no cgroup of the job's own: some CPU and I/O unseen */
    RT_NOTE_MEMORY_UNKNOWN = 3,        /* no memory figure at all */
    RT_NOTE_MEMORY_SAMPLED = 4,        /* the memory need is a lower bound from samples */
    RT_NOTE_MEMORY_OVERSIZED = 5,      /* the memory limit is far above the need */
    RT_NOTE_GPU_IDLE = 6,              /* GPUs on the machine, none used by the job */
    RT_NOTE_CPU_THROTTLED = 7,         /* a CPU quota throttled the job */
    RT_NOTE_PRESSURE = 8,              /* tasks stalled waiting for CPU, memory or I/O */
    RT_NOTE_LEFT_BEHIND = 9,           /* processes still ran after the command exited */
    RT_NOTE_FEW_RUNS = 10,             /* a recommendation from few runs */
    RT_NOTE_PHASE_MARKS = 11,          /* phase marks were refused, or phases left open */
    RT_NOTE_CPU_OVER_REQUESTED = 12,   /* the job used far fewer cores than it asked for */
    RT_NOTE_MEMORY_OVER_REQUESTED = 13, /* the job needed far less memory than it asked for */
    RT_NOTE_GPU_UNUSED = 14,           /* GPUs asked for and left unused */
    RT_NOTE_TIME_LIMIT = 15,           /* the job came near its time limit */
    RT_NOTE_MEMORY_SAFE_SIDE = 16,     /* a memory peak the readings could not place:
                                        * page cache taken as not there, and the ask grew */
    RT_NOTE_CPU_RUNS = 17,             /* how many of several runs ask for the same cores
                                        * on their own (rt_recommend_notes) */
} rt_note_kind;

/* One note. This struct never grows. */
typedef struct rt_note {
    int kind;        /* rt_note_kind */
    char text[320];  /* one line, no newline, UTF-8 (cut to fit) */
} rt_note;

#define RT_NOTES_MAX 12 /* the most notes either function gives */

typedef struct rt_notes_options {
    size_t struct_size;     /* sizeof(rt_notes_options) as the caller compiled it */
    const char *cgroup_why; /* why the job had no cgroup of its own, in a few words (the tool:
                             * "not root, and no cgroup delegated to this user", "--cgroup off");
                             * NULL: not known */
} rt_notes_options;

#define RT_NOTES_OPTIONS_INIT {.struct_size = sizeof(rt_notes_options)}

/* The kind's name: "oom_killed", "accounting_incomplete", "memory_unknown", "memory_sampled",
 * "memory_oversized", "gpu_idle", "cpu_throttled", "pressure", "left_behind", "few_runs",
 * "phase_marks", "cpu_over_requested", "memory_over_requested", "gpu_unused", "time_limit";
 * "note" for another number. Static. */
RT_API const char *rt_note_kind_name(int kind);

/* The notes of one run into out[0..cap) (opts may be NULL). Returns how many were written (at
 * most RT_NOTES_MAX; 0 for a NULL s). Without a tracked tree only the machine-wide notes
 * (pressure, an OOM kill in the tracker's group) are given. */
RT_API size_t rt_summary_notes(const rt_summary *s, const rt_notes_options *opts, rt_note *out, size_t cap);

/* The notes of a recommendation rec made by rt_recommend from runs[0..n): few runs, a
 * memory need that is unknown or a lower bound, runs that left processes running after their
 * command (the ask covers the command only: --wait-all counts them), an OOM kill or a CPU
 * quota it stays above. Returns how many were written (at most RT_NOTES_MAX). */
RT_API size_t rt_recommend_notes(const rt_summary *const *runs, size_t n, const rt_recommendation *rec,
                                 rt_note *out, size_t cap);

/* ---- the cheapest server: Spare Cores Keeper API (docs/contracts.md §6) --------------- */

typedef struct rt_keeper_options {
    size_t struct_size;  /* sizeof(rt_keeper_options) as the caller compiled it */
    const char *url;     /* NULL: https://keeper.sparecores.net (TRACKER_KEEPER_URL); "off":
                          * no lookup at all (RT_ERR_DISABLED, no log line) */
    double timeout_secs; /* the whole lookup; 0: 5 s */
    rt_log_fn log;
    void *log_user;
    /* NULL, or room for offline_why_cap bytes, which the call sets to "" and,
     * when the lookup failed for want of any reply from Keeper (no name, no connection, nothing
     * in time: the machine is offline or Keeper is down), to the reason in curl's words,
     * without the URL ("Could not resolve host: keeper.sparecores.net"). A Keeper that replied
     * wrongly (an HTTP error, not a list) leaves it "": only the log line says so. */
    char *offline_why;
    size_t offline_why_cap;
} rt_keeper_options;

#define RT_KEEPER_OPTIONS_INIT {.struct_size = sizeof(rt_keeper_options)}

typedef struct rt_server {
    size_t struct_size;      /* caller sets sizeof(rt_server) */
    char vendor_id[64];
    char api_reference[128]; /* instance type */
    char display_name[128];
    int64_t vcpus;
    double memory_mib;
    int64_t gpu_count;
    double price_usd_per_hour; /* NaN when unknown */
    /* Keeper's facts of the server's primary CPU, "" when it has none: the
     * manufacturer ("Intel"), the product line ("Xeon") and the model number ("8375C"); the
     * energy of a run there (rt_server_energy_estimate) comes from them */
    char cpu_manufacturer[64];
    char cpu_family[64];
    char cpu_model[128];
} rt_server;

#define RT_SERVER_INIT {.struct_size = sizeof(rt_server)}

/* The cheapest on-demand server that fits rec. Returns RT_OK and fills *out, RT_ERR_NOT_FOUND
 * when none fits, RT_ERR_IO (with a log line) when the API is down, slow past the timeout or
 * replies nonsense (not reached at all: opts->offline_why says why), RT_ERR_UNSUPPORTED
 * when no HTTPS client can be loaded, RT_ERR_DISABLED (nothing asked, nothing logged) when
 * opts->url is "off". */
RT_API rt_error rt_keeper_cheapest(const rt_keeper_options *opts, const rt_recommendation *rec, rt_server *out);

/* The on-demand Linux price of one instance type (the lowest over regions, or the region's
 * when region is not NULL), in USD per hour. Errors as rt_keeper_cheapest. */
RT_API rt_error rt_keeper_price(const rt_keeper_options *opts, const char *vendor_id, const char *api_reference,
                                const char *region, double *usd_per_hour);

/* ---- the HTML report ------------------------------------------------------------------- */

/* Collects a run's records for the charts in bounded memory: long runs are reduced to about
 * 2,000 points per series, each with the min and max of what it stands for, so that a
 * one-second spike in a day still shows. */
typedef struct rt_report rt_report;

/* Options of the report's collection: none yet but the size, room to grow. */
typedef struct rt_report_options {
    size_t struct_size; /* sizeof(rt_report_options) as the caller compiled it */
} rt_report_options;

#define RT_REPORT_OPTIONS_INIT {.struct_size = sizeof(rt_report_options)}

/* A new, empty collection (opts NULL for defaults). Returns RT_OK and *out (free with
 * rt_report_free), RT_ERR_INVALID (out NULL, struct_size too small; last error),
 * RT_ERR_NOMEM. */
RT_API rt_error rt_report_new_with(const rt_report_options *opts, rt_report **out);
/* Adds one record of rec_size bytes, sizeof(rt_record) as the caller compiled it (see
 * rt_record for what is read of it). A record whose time or interval is beyond 1e11 s (past the
 * year 5000, or nonsense) is ignored, and so is a NULL r or rec or a rec_size 0. A record
 * shorter than half the one before (the reading as the job ended) ends the last point instead
 * of making one; the reading after the job's end (process_alive 0, nothing of its tree left,
 * its memory 0) adds no memory or GPU level of the job. */
RT_API void rt_report_add_sized(rt_report *r, const rt_record *rec, size_t rec_size);
RT_API void rt_report_free(rt_report *r);

/* What the report shows besides the charts; any pointer may be NULL (then left out). */
typedef struct rt_report_info {
    size_t struct_size;                /* sizeof(rt_report_info) as the caller compiled it */
    const char *title;                 /* NULL: the job name or "resource-tracker run" */
    const rt_job *job;
    const char *command;               /* the wrapped command as one line */
    const rt_host *host;
    const rt_cloud *cloud;
    int exit_status;                   /* -1: unknown */
    const rt_summary *summary;
    const rt_recommendation *recommendation;
    const rt_server *cheapest;         /* with its price */
    const char *keeper_note;           /* e.g. why the lookup failed */
    double current_price_usd_per_hour; /* where the run ran; NaN: unknown */
    const char *current_instance;      /* "vendor:type" */
    const char *cgroup_why;            /* why the job had no cgroup of its own, for the notes
                                        * (rt_notes_options.cgroup_why); NULL: not known */
    const struct rt_job_view *job_view; /* the runs are a job's nodes (rt_job_view_new): the page
                                        * opens with the job on its nodes, and the rest of it
                                        * (summary, recommendation, charts) is of node_shown */
    const char *node_shown;            /* the node the rest of the page is of; NULL: not said */
    /* the Python package's report */
    int run_state;                     /* how the run stands (rt_run_state), a figure of the answer
                                        * that takes in the exit status; 0: not said */
    int wording;                       /* the page's words (rt_report_wording); 0: its own */
} rt_report_info;

#define RT_REPORT_INFO_INIT {.struct_size = sizeof(rt_report_info), .exit_status = -1}

/* How the run stands when its report is written (rt_report_info.run_state): the answer's
 * status figure, "Running" (or "Pending"; the figures are those so far), "Finished" or "Failed"
 * (in red; its figures may be incomplete), with the exit status when known, in place of the
 * exit status figure. RT_RUN_UNSAID: no status figure (the exit status figure alone). */
typedef enum rt_run_state {
    RT_RUN_UNSAID = 0,
    RT_RUN_RUNNING = 1,
    RT_RUN_FINISHED = 2,
    RT_RUN_FAILED = 3,
} rt_run_state;

/* The HTML page's words (rt_report_info.wording). RT_REPORT_WORDING_PY05: those the
 * Python resource-tracker 0.5's report shows, which its users know: the charts titled "CPU
 * Usage", "Memory Usage", "Disk I/O Usage", "Network Usage", "Disk Space Usage", "GPU Usage",
 * "VRAM Usage" (and "Power Usage"), their lines "Process CPU usage", "System CPU usage",
 * "Process memory usage (PSS)", ..., and the status "Pending" for a run still running (the
 * Python package sets it; the tool keeps its own words: "CPU", "job", "machine", "Running"). */
typedef enum rt_report_wording {
    RT_REPORT_WORDING_OWN = 0,
    RT_REPORT_WORDING_PY05 = 1,
} rt_report_wording;

/* Writes the report, one self-contained HTML file that makes no request, to fd: the answer
 * first (what the job used, its exit status or how it stands, what to ask for, the cost, the
 * notes), then the charts (a run under an hour in time since its start, a longer one in UTC
 * clock time; a chart of zeros or of a flat level as one line of text), then the tables; in
 * info's wording. Returns RT_OK, RT_ERR_IO (errno set), RT_ERR_NOMEM or RT_ERR_INVALID. */
RT_API rt_error rt_report_write(const rt_report *r, const rt_report_info *info, int fd);
/* The same to write(user, ...), in pieces of at most 64 KiB. */
RT_API rt_error rt_report_write_cb(const rt_report *r, const rt_report_info *info, rt_write_fn write, void *user);

#ifdef __cplusplus
}
#endif
#endif
