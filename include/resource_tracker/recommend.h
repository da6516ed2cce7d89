/* resource_tracker/recommend.h - recommendations: what to ask for next time (rt_recommendation,
 * rt_recommend_*, rt_format_recommendation).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_RECOMMEND_H
#define RESOURCE_TRACKER_RECOMMEND_H

#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- recommendations ------------------------------------------------------------------- */

typedef struct rt_recommendation {
    size_t struct_size;     /* caller sets sizeof(rt_recommendation) */
    int64_t cpu;            /* cores (rt_recommend; cpu_basis says how) */
    int64_t memory_mib;     /* rt_round_memory_mib(peak PSS x 1.2) */
    int64_t gpu;            /* GPUs used */
    int64_t vram_mib;       /* rt_round_memory_mib(peak VRAM x 1.2); 0 without GPUs */
    uint64_t runs;          /* runs it is made from */
    double duration_secs;   /* the runs' mean duration (for costs) */
    int oom_killed;         /* a run was OOM-killed: memory_mib is above the limit it died at
                             * (0.20: memory_floor_mib, memory_learn) */
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
    /* 0.19: the GPU ask (docs/answers.md, "The GPU ask"). gpu above is the GPUs asked: the most a
     * run kept busy at once (rt_summary.process_gpus_busy; at least 1, at most gpu_held) where
     * known, else the most it used; vram_mib stays the whole tree's VRAM need plus headroom */
    int64_t gpu_held;             /* the most GPUs a run held at once (process_gpus_used) */
    int64_t gpu_busy;             /* the most GPUs a run kept busy at once (process_gpus_busy;
                                   * gpu_held where no run knows it) */
    double vram_per_gpu_need_mib; /* the most VRAM a run held on one GPU: a run on one GPU, its
                                   * vram_need (NVML accounting's peak where on, else the sampled
                                   * peak); on several, process_gpu_vram_per_gpu_peak_mib; NaN:
                                   * unknown */
    int vram_per_gpu_source;      /* rt_need_source of it: RT_NEED_NVML_PEAK or RT_NEED_VRAM */
    int64_t vram_per_gpu_mib;     /* the memory asked of each GPU, in MiB as the driver reports a
                                   * GPU's (nvidia-smi's memory.total): the smallest memory of the
                                   * table of GPU models (data/gpu-models.csv) that holds
                                   * vram_per_gpu_need_mib plus headroom_pct; above the table's
                                   * largest, that need rounded up (rt_round_memory_mib); 0: no
                                   * GPU asked, or no need known */
    double vram_per_gpu_gib;      /* the same in GiB */
    const char *gpu_models[4];    /* the first four models of the table with at least
                                   * vram_per_gpu_mib, the smallest memory first (then in the
                                   * table's order): "A100 40GB"; NULL after the last; the
                                   * library's own strings */
    size_t gpu_models_count;      /* how many models of the table have at least that much */
    double gpu_memory_had_mib;    /* the memory of each GPU the runs had (rt_summary's
                                   * gpu_vram_total_mib / gpu_count, the largest of the runs');
                                   * NaN: unknown */
    double gpu_sm_active_pct;     /* the runs' highest mean SM activity (NVML GPM); NaN without */
    double gpu_busy_pct;          /* the runs' highest mean GPU usage per GPU held, percent; NaN */
    int gpu_smaller;              /* 1: the job used far less than its GPU: its need under half of
                                   * gpu_memory_had_mib, its SMs under 25% active (without GPM: its
                                   * GPU usage under 25%), and a GPU of vram_per_gpu_mib, smaller
                                   * than the one it had, holds it (rt_recommendation_gpu_notes) */
    /* 0.20: after a kill, ask to learn (docs/answers.md). A run OOM-killed at its memory limit, or
     * held at its memory.high with reclaim stalls, needed more than the limit by an amount nobody
     * saw: memory_mib is at least twice that limit (twice the most the run reached where it had
     * no limit of its own), rounded, until a run not stopped so under a larger limit shows the
     * need (then the limit plus 20%, as before). A run that ran to its time limit: its duration
     * is a floor, and time_limit_secs at least twice it. */
    double memory_floor_mib;      /* the floor such runs put under memory_mib; NaN: none */
    int memory_learn;             /* 1: the floor is to learn a need above a limit (no run showed
                                   * it): memory_mib is a floor, not a need plus headroom */
    double time_floor_secs;       /* the longest run that ran to its time limit (it used 99% of it
                                   * or more), or (0.21) that a scheduler's signal ended where no
                                   * limit was known (rt_summary.end_signal), seconds: a floor of
                                   * the time it needs; NaN: none */
    /* 0.20: the files a run read back after its memory limit evicted them, which memory_mib keeps
     * cached (docs/answers.md, "Re-reads": where the re-reads were large, memory_mib is at least
     * that run's memory need plus these files, plus headroom_pct); NaN: the ask keeps none */
    double memory_reread_files_mib;
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
 *    OOM kill (or a run held at its memory.high with reclaim stalls) at least twice its limit,
 *    rounded, to learn the need above it, unless a run not stopped so ran under a larger limit:
 *    then never below the stopped run's peak or limit plus 20%, rounded (memory_floor_mib);
 *    RT_NULL_I64 when no figure is known;
 *  - gpu: the most GPUs a run kept busy at once (where known, else used); vram: the highest VRAM
 *    need plus headroom, rounded; each GPU's memory: the smallest of the GPU table that holds the
 *    most a run held on one GPU plus headroom (0.19: vram_per_gpu_mib, the GPU ask);
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

/* 0.21: the run's own duration of table t, which its slowdown bound is judged against: own_secs,
 * else (a table without it: from an older history, or a caller's) duration_secs; NaN for a NULL
 * t. */
RT_API double rt_cores_own_secs(const struct rt_cores_table *t);

/* 0.23: the core-hours of t's run under cores cores: cores x its predicted duration there (past
 * the table's last row, the last row's) / 3600, as each row's core_hours (a price per core-hour
 * times it is the run's money under them). NaN for a NULL or empty t or cores below 1. */
RT_API double rt_cores_core_hours(const struct rt_cores_table *t, int64_t cores);

/* 0.23: t as recommend --json's table of the run under other core counts (docs/contracts.md
 * §8): one JSON object without a newline, the table's members as the summary's "cores" has them
 * (in seconds) and "rows":[{"cores","duration_secs","core_hours","wait_bound","cost_usd"},..],
 * each row's cost its core-hours times usd_per_core_hour (null for NaN: no price), each number
 * the double it is. Returns the length needed like snprintf (buf NUL-terminated when cap > 0);
 * 0 for a NULL t. */
RT_API size_t rt_format_cores_json(const struct rt_cores_table *t, double usd_per_core_hour, char *buf, size_t cap);

/* 0.20: where t's run shared its machine (other work used a quarter of a core or more beside the
 * job, on average), the words that say so: "other work used 1.4 of 2 cores"; "" otherwise.
 * buf is NUL-terminated when cap > 0. Returns the length written (0: not shared, or NULL t). */
RT_API size_t rt_cores_shared_words(const struct rt_cores_table *t, char *buf, size_t cap);

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
 * RT_SCHED_K8S       resources: {requests: {cpu: "2", memory: "3072Mi", nvidia.com/gpu: "1"},
 *                    limits: {nvidia.com/gpu: "1"}}   and (0.19) where each GPU's memory is asked
 *                    (vram_per_gpu_mib), "; affinity: {nodeAffinity: {...: [{key:
 *                    nvidia.com/gpu.memory, operator: Gt, values: ["40959"]}]...}}", the node
 *                    label NVIDIA's GPU feature discovery sets (MiB; Gt is strict: the ask - 1)
 * RT_SCHED_SLURM     --cpus-per-task=2 --mem=3072M --gres=gpu:1 --time=0:30:00   (the
 *                    time limit, where the recommendation has one: time_limit_secs)
 * Returns the length needed like snprintf (0 for an unknown scheduler). */
typedef enum rt_scheduler { RT_SCHED_METAFLOW = 0, RT_SCHED_K8S = 1, RT_SCHED_SLURM = 2 } rt_scheduler;
RT_API size_t rt_format_recommendation(const rt_recommendation *rec, rt_scheduler sched, char *buf, size_t cap);

/* The GPU ask in words, one line without a newline: "1 GPU with >= 40 GiB (peak 33.1 GiB)",
 * "2 GPUs with >= 79.6 GiB each (peak 70.2 GiB on one)" (GiB rounded down to a tenth, so never
 * more than the GPU has), "1 GPU" when no VRAM need is known. Returns the length needed like
 * snprintf; 0 (buf "") when no GPU is asked or rec is a caller's struct older than 0.19. */
RT_API size_t rt_recommendation_gpu_words(const rt_recommendation *rec, char *buf, size_t cap);

struct rt_server;
/* What goes with the GPU ask, in words, one line each with a newline, in this order:
 *  - the models that hold it: "GPUs with >= 40 GiB: A100 40GB, L40S 48GB, L40 48GB, A40 48GB
 *    (and 13 larger)" (or that none of the table's does);
 *  - where fewer GPUs are asked than a run held: "4 GPUs held, 1 did work: ask for 1";
 *  - rec->gpu_smaller: "the job held 33.1 GiB of its GPU's 140.4 GiB, its SMs 15.9% active: a 40
 *    GiB GPU would do", and with the prices of smaller (the cheapest server for rec) and like (the
 *    cheapest with GPUs like the one the job had), both non-NULL with a price: ": the cheapest
 *    server with one, VENDOR TYPE, costs $A/h against $B/h for one like this (-NN%)".
 * Returns the length needed like snprintf; 0 (buf "") when no GPU is asked. */
RT_API size_t rt_recommendation_gpu_notes(const rt_recommendation *rec, const struct rt_server *smaller,
                                          const struct rt_server *like, char *buf, size_t cap);

/* How sched's words get each GPU's memory asked, one line without a newline: SLURM's
 * --gres=gpu:N takes any GPU (--constraint=FEATURE or --gres=gpu:TYPE:N picks one), Metaflow's
 * @resources has no GPU memory knob, Kubernetes' affinity reads the node label NVIDIA's GPU
 * feature discovery sets. Returns the length needed like snprintf; 0 (buf "") when no GPU
 * memory is asked or sched is unknown. */
RT_API size_t rt_recommendation_gpu_scheduler_note(const rt_recommendation *rec, rt_scheduler sched, char *buf,
                                                   size_t cap);

/* 0.23: rec as recommend --json's "recommendation" object (docs/contracts.md §8), one JSON object
 * without a newline: its members in that order, a number as the double a JSON parser reads back
 * the same (a real with its decimal point, an integer as one; null for NaN and RT_NULL_I64), the
 * GPU ask's notes with the prices of smaller and like as rt_recommendation_gpu_notes takes them
 * (either NULL: none). The summary's "recommendation" object is written from the same members.
 * Returns the length needed like snprintf (buf, cap bytes, NUL-terminated when cap > 0); 0 for a
 * NULL rec or a caller's struct older than this library's. */
RT_API size_t rt_format_recommendation_json(const rt_recommendation *rec, const struct rt_server *smaller,
                                            const struct rt_server *like, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
