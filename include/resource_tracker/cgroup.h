/* resource_tracker/cgroup.h - a cgroup of the job's own, for wrapper mode (rt_job_cgroup). Part
 * of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_CGROUP_H
#define RESOURCE_TRACKER_CGROUP_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * A cgroup of the job's own, for wrapper mode: the command runs in a group the tracker
 * made, so that the group's counters (exact CPU time, I/O, peak memory, OOM kills) cover
 * everything the job started, children reaped by nobody included. */

typedef struct rt_job_cgroup rt_job_cgroup;

typedef struct rt_job_cgroup_options {
    size_t struct_size;    /* sizeof(rt_job_cgroup_options) as the caller compiled it */
    const char *proc_root; /* NULL: /proc */
    const char *sys_root;  /* NULL: /sys */
    rt_log_fn log;         /* NULL: messages are dropped */
    void *log_user;
    char *why;             /* NULL, or room for why_cap bytes: on RT_ERR_UNSUPPORTED, why no
                            * group could be made, in a few words for people ("not root, and
                            * no cgroup delegated to this user") */
    size_t why_cap;
} rt_job_cgroup_options;

#define RT_JOB_CGROUP_OPTIONS_INIT {.struct_size = sizeof(rt_job_cgroup_options)}

/* Makes an empty group named resource-tracker-PID-N below the caller's own group in every
 * hierarchy it may write to: the v2 tree, and the v1 cpu, cpuacct, memory, blkio and pids
 * hierarchies (all that exist of them). Never moves the caller or any process. The group
 * carries the proof of a live owner: an exclusive flock(2) on its directory in each
 * hierarchy, held on descriptors g keeps open (close-on-exec) until rt_job_cgroup_free, so
 * also by a fork of the caller that holds them (the CLI's guardian) until it exits or execs.
 * Before making it, it removes the empty groups of that name whose owner is provably gone
 * (their lock is free: a tracker that was killed), in any PID namespace; it leaves alone
 * those whose lock is held or cannot be judged, and those whose PID is a live process of the
 * caller's PID namespace other than the caller (made by a tracker that took no lock). A name already
 * taken (a group left with processes, a live tracker's in another PID namespace) makes it try
 * the next N.
 * Returns RT_OK and *out (free with rt_job_cgroup_free), RT_ERR_UNSUPPORTED when no hierarchy
 * lets it make a group (the reason is logged at RT_LOG_DEBUG, and is the last error: "not
 * root, and no cgroup delegated to this user"), RT_ERR_NOMEM, RT_ERR_INVALID. */
RT_API rt_error rt_job_cgroup_new(const rt_job_cgroup_options *opts, rt_job_cgroup **out);

/* Moves the calling process into the group in every hierarchy: for the child between fork and
 * exec (async-signal-safe: write(2) to descriptors opened by rt_job_cgroup_new; it sets no
 * last error message). Returns RT_OK; RT_ERR_SYSTEM with errno of the first hierarchy that
 * refused (the others are still tried); RT_ERR_INVALID for NULL. */
RT_API rt_error rt_job_cgroup_join(const rt_job_cgroup *g);

/* The group's path in its hierarchy (the v2 one when made there), e.g. "/resource-tracker-812-1". */
RT_API const char *rt_job_cgroup_path(const rt_job_cgroup *g);

/* Processes in the group now (from cgroup.procs), or -1 when it cannot be read. */
RT_API int64_t rt_job_cgroup_procs(const rt_job_cgroup *g);

/* SIGKILLs every process in the group (v2 cgroup.kill where there is one, then SIGKILL over
 * cgroup.procs of every hierarchy, again until all are empty: at most about 5 s) and returns
 * once they are gone. For cleaning up after a tracker that died; never call it from a process
 * in the group (the caller is never killed, and the group then never empties). Returns RT_OK
 * when the group is empty, RT_ERR_SYSTEM when processes are still listed at the bound,
 * RT_ERR_IO when no cgroup.procs can be read, RT_ERR_INVALID for NULL. */
RT_API rt_error rt_job_cgroup_kill(rt_job_cgroup *g);

/* Removes the group from every hierarchy (a group that still holds processes cannot be
 * removed: that is logged and it stays, without its owner's lock), then frees g. NULL is
 * allowed. */
RT_API void rt_job_cgroup_free(rt_job_cgroup *g);

#ifdef __cplusplus
}
#endif
#endif
