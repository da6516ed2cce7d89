/* member.c - a run's place in a job that spans several nodes or tasks (rt_member), read from
 * the launchers' variables: SLURM's, torchrun's, Open MPI's, MPICH's and PMIx's, a Kubernetes
 * indexed Job's (docs/where.md, "Jobs on several nodes"). A malformed number is one warning and
 * not said; without a job id the run is no member. Called by place.c's rt_place_detect. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place.h"

/* The value of name in envp, or NULL when unset or empty. */
static const char *ev(const char *const *envp, const char *name)
{
    const char *v = rt_place_getenv(envp, name);
    return v && *v ? v : NULL;
}

/* The first of names (a NULL-terminated list) set as a whole number from 0 to 10^9 into *out;
 * one that is set but not such a number is one warning and not used (the next is tried). */
static void number(const char *const *envp, const rt_logger *log, const char *const *names, int64_t *out)
{
    for (; *names; names++) {
        const char *v = ev(envp, *names);
        if (!v)
            continue;
        char *end;
        long long n = strtoll(v, &end, 10);
        if (end != v && *end == '\0' && n >= 0 && n <= 1000000000 && v[0] != '-' && v[0] != '+') {
            *out = n;
            return;
        }
        rt_log(log, RT_LOG_WARN, "%s: not a whole number: '%.80s'%s; not used", *names, v, strlen(v) > 80 ? "..." : "");
    }
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

void rt_member_detect(const char *const *envp, const rt_logger *log, rt_member_copy *out)
{
    rt_member m = RT_MEMBER_INIT;
    char array_id[128];
    const char *slurm = ev(envp, "SLURM_JOB_ID");
    const char *aj = ev(envp, "SLURM_ARRAY_JOB_ID"), *at = ev(envp, "SLURM_ARRAY_TASK_ID");
    if (slurm) {
        m.from = "slurm";
        m.job_id = slurm;
        if (aj && at && snprintf(array_id, sizeof array_id, "%s_%s", aj, at) < (int)sizeof array_id)
            m.job_id = array_id;
        m.step_id = ev(envp, "SLURM_STEP_ID");
        m.node = ev(envp, "SLURMD_NODENAME");
        number(envp, log, NAMES("SLURM_PROCID"), &m.rank);
        number(envp, log, NAMES("SLURM_LOCALID"), &m.local_rank);
        number(envp, log, NAMES("SLURM_NTASKS", "SLURM_NPROCS"), &m.ranks);
        number(envp, log, NAMES("SLURM_JOB_NUM_NODES", "SLURM_NNODES"), &m.nodes);
        number(envp, log, NAMES("SLURM_NODEID"), &m.node_index);
    } else if (ev(envp, "TORCHELASTIC_RUN_ID") || ev(envp, "GROUP_RANK")) {
        /* torchrun's workers (a tracker that torchrun starts in the worker's place) */
        m.from = "torchrun";
        m.job_id = ev(envp, "TORCHELASTIC_RUN_ID");
        number(envp, log, NAMES("RANK"), &m.rank);
        number(envp, log, NAMES("LOCAL_RANK"), &m.local_rank);
        number(envp, log, NAMES("WORLD_SIZE"), &m.ranks);
        number(envp, log, NAMES("GROUP_WORLD_SIZE"), &m.nodes);
        number(envp, log, NAMES("GROUP_RANK"), &m.node_index);
    } else if (ev(envp, "OMPI_COMM_WORLD_RANK") || ev(envp, "PMI_RANK") || ev(envp, "PMIX_RANK")) {
        m.from = "mpi";
        m.job_id = ev(envp, "PMIX_NAMESPACE"); /* Open MPI 4 and 5, PMIx launchers; MPICH says none */
        number(envp, log, NAMES("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"), &m.rank);
        number(envp, log, NAMES("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PALS_LOCAL_RANKID"), &m.local_rank);
        number(envp, log, NAMES("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"), &m.ranks);
    } else if (ev(envp, "JOB_COMPLETION_INDEX")) {
        /* a pod of a Kubernetes indexed Job: the pod is the job's node */
        m.from = "kubernetes";
        m.job_id = ev(envp, "POD_JOB_NAME");
        m.node = ev(envp, "POD_NAME");
        number(envp, log, NAMES("JOB_COMPLETION_INDEX"), &m.rank);
        m.node_index = m.rank;
    }
    char host[256];
    if (m.from && !m.node && gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = '\0';
        m.node = host;
    }
    rt_member_keep(out, &m);
}
