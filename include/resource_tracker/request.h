/* resource_tracker/request.h - what the job was given where it runs, and its place in a job of
 * several nodes (rt_request, rt_member). Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_REQUEST_H
#define RESOURCE_TRACKER_REQUEST_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the job was given. A figure counts only with its *_from set: NULL means not said (the
 * figure is then 0 or NaN and not used). Strings are static or owned by whoever filled it. */
typedef struct rt_request {
    size_t struct_size;       /* sizeof(rt_request) as the caller compiled it */
    const char *place;        /* "slurm", "kubernetes", "github-actions"; NULL: none of them */
    double cpu_cores;         /* cores given to the job */
    double memory_mib;        /* memory given to the job */
    double gpus;              /* GPUs given (0 said: none) */
    double time_limit_secs;   /* the job's wall-time limit */
    double job_start_secs;    /* Unix time the job began, which the limit counts from; 0 or NaN:
                               * the run's start */
    const char *cpu_from, *memory_from, *gpus_from, *time_limit_from; /* what said each: the
                               * variable ("SLURM_CPUS_PER_TASK"), the command ("scontrol"), "runner" */
} rt_request;

#define RT_REQUEST_INIT {.struct_size = sizeof(rt_request)}

/* One run's place in a job that spans several nodes or tasks: a SLURM job on several
 * nodes, torchrun, mpirun, a Kubernetes indexed Job. What every node's run shares (job_id) and
 * what tells the runs apart (node, rank), as the launchers' variables say them (docs/where.md,
 * "Jobs on several nodes") or the caller gives them (--job-id, --node). A string is NULL and a
 * number -1 when not said. Follows the stable rules: it grows only at its end. */
typedef struct rt_member {
    size_t struct_size;  /* sizeof(rt_member) as the caller compiled it */
    const char *job_id;  /* the job every node's run shares: SLURM_JOB_ID (an array task:
                          * JOB_TASK), TORCHELASTIC_RUN_ID, PMIX_NAMESPACE, a Kubernetes Job's
                          * name; NULL: the run is no member of a job of several */
    const char *step_id; /* SLURM_STEP_ID; NULL */
    const char *node;    /* the node's name: SLURMD_NODENAME, else the host name */
    int64_t rank;        /* the task's rank in the job: SLURM_PROCID, RANK, OMPI_COMM_WORLD_RANK,
                          * PMI_RANK, JOB_COMPLETION_INDEX */
    int64_t local_rank;  /* its rank on its node: SLURM_LOCALID, LOCAL_RANK, ... */
    int64_t ranks;       /* the job's tasks: SLURM_NTASKS, WORLD_SIZE, OMPI_COMM_WORLD_SIZE, ... */
    int64_t nodes;       /* the job's nodes: SLURM_JOB_NUM_NODES, GROUP_WORLD_SIZE, ... */
    int64_t node_index;  /* the node's index in the job: SLURM_NODEID, GROUP_RANK */
    const char *from;    /* what said it: "slurm", "torchrun", "mpi", "kubernetes", "given" */
    int per_node;        /* 1: the run tracks its node's tasks, not only its own (--per-node, the
                          * task of local rank 0); 0: its own task's, or the node's one task */
} rt_member;

#define RT_MEMBER_INIT                                                                                                 \
    {.struct_size = sizeof(rt_member), .rank = -1, .local_rank = -1, .ranks = -1, .nodes = -1, .node_index = -1}

#ifdef __cplusplus
}
#endif
#endif
