/* resource_tracker/jobview.h - a job on several nodes: the runs of one job put together
 * (rt_job_view). Part of the public C API of libresource-tracker; include <resource_tracker.h>,
 * which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_JOBVIEW_H)
#define RESOURCE_TRACKER_JOBVIEW_H

#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a job on several nodes (experimental) -------------------------------------------
 * The runs of one job that ran on several nodes (each node's tracker wrote its own file: a SLURM
 * job on several nodes, torchrun, mpirun, a Kubernetes indexed Job; rt_member) put together:
 * the whole job's CPU and energy, each node's figures and ask, the imbalance between them, the
 * nodes that ended late or idled, and the ask per node in the scheduler's words, sized by the
 * node that needs most (docs/answers.md, "A job on several nodes"). */

typedef struct rt_job_node {
    const char *node;         /* the node's name (its runs' member node; "?" when none said) */
    size_t runs;              /* its runs: one per task, or one for the node (--per-node) */
    int64_t node_index;       /* member node_index; -1 */
    int64_t first_rank;       /* the lowest rank of its runs; -1 */
    double start_secs, end_secs; /* its runs' earliest start and latest end (its own clock) */
    double cpu_secs;          /* its runs' CPU time, summed */
    double cores_mean;        /* cpu_secs over its duration */
    double cores_peak;        /* its runs' peaks summed (a bound: they may peak apart) */
    double memory_need_mib;   /* its runs' memory needs summed; NaN: unknown */
    int memory_sampled;       /* 1: a run's need is from samples only (a lower bound) */
    double gpu_usage_mean;    /* GPUs its runs kept busy on average, summed; NaN: no GPU */
    double gpu_count;         /* GPUs on the node; NaN: none seen */
    double energy_joules;     /* its runs' energy (the tracked trees'), summed; NaN: none */
    int64_t ask_cores;        /* cores to ask for on the node: its runs' answers summed */
    int64_t ask_cores_task;   /* the most any one of its runs asks */
    int64_t ask_memory_mib;   /* memory to ask for the node: its runs' answers summed;
                               * RT_NULL_I64: unknown (a run without one: no tracked tree) */
    int64_t ask_gpus;         /* GPUs to ask for */
    double time_limit_secs;   /* the longest of its runs' time limits to ask (rt_recommendation's);
                               * NaN: none */
    double late_secs;         /* how much later than the median node it ended */
    int straggler;            /* 1: ended late: late_secs over 10 s and 10% of the job's span */
    int idled;                /* 1: its cores' mean under half the median node's */
    int gpus_idle;            /* 1: GPUs on the node, each kept busy under 5% of the time on average */
    int64_t tasks;            /* the tasks its runs stand for: one a run; a --per-node run (its
                               * member's per_node) the job's tasks over its nodes (ranks / nodes,
                               * rounded up; 1 when not said) */
} rt_job_node;

typedef struct rt_job_view {
    size_t struct_size;       /* sizeof(rt_job_view) as the caller compiled it */
    const char *job_id, *step_id, *from; /* the runs' member (the first run's step and from) */
    size_t runs;              /* runs put together */
    size_t node_count;
    const rt_job_node *nodes; /* by node index, else by name (owned by the view) */
    int64_t nodes_said;       /* the job's nodes as the runs say it (the most said); -1 */
    int64_t ranks_said;       /* the job's tasks as the runs say it; -1 */
    size_t ranks_seen;        /* distinct ranks among the runs */
    int64_t duplicate_rank;   /* a rank two runs claim; -1: none */
    const char *duplicate_nodes[2]; /* the nodes of those two runs */
    double start_secs, end_secs; /* the earliest start and latest end over the nodes */
    double start_spread_secs; /* the latest node's start less the earliest's */
    double cpu_secs;          /* the whole job's CPU time */
    double core_hours;        /* cores asked per node x nodes x the job's span, in hours: what
                               * the ask below reserves */
    double energy_joules;     /* the tracked trees' energy over the nodes; NaN: none */
    double cpu_median_secs;   /* the median node's CPU time */
    size_t cpu_most, cpu_least; /* the nodes that used the most and the least CPU (indices) */
    double cpu_imbalance_pct; /* (the most - the median) / the median x 100 */
    size_t memory_most;       /* the node that needs the most memory (index) */
    size_t cores_most;        /* the node that asks the most cores (index) */
    int64_t ask_nodes, ask_tasks_per_node, ask_cores_per_task, ask_memory_mib_per_node, ask_gpus_per_node;
    double ask_time_limit_secs; /* the longest of the nodes' time limits; NaN: none */
    int per_node;             /* 1: a run tracked its node's tasks (--per-node): a node's tasks
                               * share its ask, cores_per_task its cores over its tasks */
} rt_job_view;

/* Which of runs[0..n) (each a file's summary; rt_stats_summary) are one job: group[i] (n of
 * them, the caller's) becomes the index of the first run that names run i's job (the same member
 * job_id), i itself for a run that names none; the runs with one group index are what
 * rt_job_view_new puts together (the tool's `summary FILE...` shows a view of each job of two
 * runs or more, in the order of its first run, and each other run on its own). Returns the
 * number of jobs named (distinct job_ids; 0 when none is, or for NULL). (0.22) */
RT_API size_t rt_job_group(const rt_summary *const *runs, size_t n, size_t *group);

/* Which of runs[0..n) are the one job the tool answers for (`recommend`, `report`): with newest
 * (runs newest first, as rt_history_runs gives them: `recommend --job NAME`) the runs that name
 * the job of runs[0] (none when it names none), else the runs of the first job that two runs or
 * more name (a job's files: `recommend FILE...`, `report FILE...`); which runs are one job as
 * rt_job_group says. Their indices, in order, into idx[] (n of them, the caller's). Returns their
 * count (0: no such job, or NULL). (0.23) */
RT_API size_t rt_job_pick(const rt_summary *const *runs, size_t n, int newest, size_t *idx);

/* Puts runs[0..n) (each a file's summary with a member; rt_stats_summary) together as one job:
 * every run must name the same job_id (RT_ERR_INVALID otherwise, or for a run without one, or
 * n 0). Runs on one node (the same member node) are summed as that node's. Returns RT_OK and
 * *out (rt_job_view_free), RT_ERR_NOMEM. The view keeps pointers into the runs' summaries: they
 * must outlive it. */
RT_API rt_error rt_job_view_new(const rt_summary *const *runs, size_t n, rt_job_view **out);
RT_API void rt_job_view_free(rt_job_view *v);
/* The run among runs[0..n) (those v was made of) that stands for the job where one run's
 * details are shown (the job's report): on the node that needs the most memory, its run that
 * needs the most (the first when none says). 0 for NULL or a view of no node. (0.22) */
RT_API size_t rt_job_view_shown(const rt_job_view *v, const rt_summary *const *runs, size_t n);
/* The ask per node in sched's words: "--nodes=3 --ntasks-per-node=1 --cpus-per-task=2
 * --mem=3072M --time=0:30:00" (SLURM), as rt_format_recommendation does for one run. Returns the
 * length needed like snprintf. */
RT_API size_t rt_job_view_ask(const rt_job_view *v, rt_scheduler sched, char *buf, size_t cap);
/* The view as aligned text for people (write as rt_summary_write_text_cb; opts' units and
 * scheduler used, NULL: the defaults): the job's line, what it used, a line per node, the
 * imbalance, stragglers and idle nodes, the ask and what decided it, what is missing. */
RT_API rt_error rt_job_view_write_text_cb(const rt_job_view *v, const rt_summary_text_options *opts, rt_write_fn write,
                                          void *user);
/* The view as one JSON object (docs/contracts.md section 8, "A job on several nodes"): into buf
 * (cap bytes), *len the length it needs (as rt_format_summary_json). */
RT_API rt_error rt_format_job_view_json(const rt_job_view *v, char *buf, size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
