/* cgroup_job.c - a cgroup of the job's own (the public rt_job_cgroup_*). PLACEHOLDER. */
#include "cgroup.h"
