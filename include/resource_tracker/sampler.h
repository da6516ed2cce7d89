/* resource_tracker/sampler.h - the sampler: reads the kernel's counters and turns two readings
 * into one sample. Part of the public C API of libresource-tracker; include <resource_tracker.h>,
 * which includes
 * every part. */
#ifndef RESOURCE_TRACKER_SAMPLER_H
#define RESOURCE_TRACKER_SAMPLER_H

#include "sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * The sampler: reads the kernel's counters and turns two readings into one sample. */

typedef struct rt_sampler rt_sampler;

typedef struct rt_sampler_options {
    size_t struct_size;    /* sizeof(rt_sampler_options) as the caller compiled it */
    const char *proc_root; /* NULL: /proc (TRACKER_PROC_ROOT in the tool) */
    const char *sys_root;  /* NULL: /sys (TRACKER_SYS_ROOT) */
    rt_log_fn log;         /* NULL: messages are dropped */
    void *log_user;
    int64_t pid;      /* root of the process tree to attribute usage to; 0: none */
    int own_children; /* also take in the caller's own children (wrapper mode: the caller runs
                       * the command and is a child subreaper, see prctl(2)); the tree is then
                       * counted from zero, not from a baseline */
    const char *nvml_library; /* NULL: libnvidia-ml.so.1 (TRACKER_NVML_LIBRARY) */
    double pss_max_age_secs;  /* the longest a PSS reading is reused (TRACKER_PSS_MAX_AGE);
                               * 0: re-read every sample. Default 30 */
    double tree_start_mono_secs; /* with own_children: when the caller started the command,
                                  * on CLOCK_MONOTONIC; the first sample's interval starts
                                  * there. 0: at the baseline reading */
    int root_only; /* non-zero (with pid > 0): the root process alone, not its descendants:
                    * its own CPU time (utime + stime, not the cutime/cstime of what it
                    * reaped), its memory and threads; child_count 0. Its I/O is the kernel's
                    * /proc/PID/io, which does include what its reaped children read and
                    * wrote (the kernel adds a reaped child's I/O into its parent's) */
    const struct rt_job_cgroup *job_cgroup; /* the group the caller started the command in
                                             * (wrapper mode, with own_children): read as the
                                             * tree's own, its counters the tree's totals */
    int cgroup_off; /* non-zero: no cgroup is read at all (--cgroup off) */
    int energy_off; /* non-zero: no energy counter is read and nothing is estimated
                     * (--energy off): rt_sample.energy is NULL */
    double cpu_tdp_watts; /* the CPU's thermal design power per package for the estimate where
                           * no counter can be read (--cpu-tdp); 0: the model table's, else
                           * the per-core rule (see "Energy and carbon") */
    const struct rt_request *request; /* what the job was given where it runs (rt_place_detect,
                                       * or the caller's own): copied with its strings, carried
                                       * on every sample (rt_sample.request); NULL: none */
    double walk_max_age_secs; /* with a group of the job's own: the oldest the walk's figures
                               * may get (see rt_process.walk_age_secs; TRACKER_WALK_MAX_AGE);
                               * the walk runs sooner when its own cost allows. 0 (and a caller
                               * whose struct ends before it): every sample walks. Default 60 */
    const struct rt_member *member; /* the run's place in a job of several (rt_place_member, or
                               * the caller's own): copied with its strings, carried on every
                               * sample (rt_sample.member); NULL or no job_id: none */
    int64_t siblings_of; /* (--per-node) also take in the children of this process other
                          * than the caller (its parent, where the node's tasks of a job step
                          * are children of one slurmstepd, orted or torchrun agent as the
                          * caller is), each with its descendants, found anew at every sample,
                          * and what it reaps of them (a task that ended counts to its end).
                          * Its own CPU and memory are not the tree's, and no cgroup is read for
                          * the tree (the tasks share none of their own). 0: none */
    double interval_secs; /* 0.20: the interval the caller samples at, which tells a sampling
                           * gap (rt_sample.sampling_gap_secs); 0 (and a caller whose struct
                           * ends before it): the intervals seen so far tell it */
} rt_sampler_options;

#define RT_SAMPLER_OPTIONS_INIT                                                                                        \
    {.struct_size = sizeof(rt_sampler_options), .pss_max_age_secs = 30.0, .walk_max_age_secs = 60.0}

/* Creates a sampler and takes its first (baseline) reading. opts may be NULL for defaults.
 * Returns RT_OK and sets *out (free with rt_sampler_free), or an error: RT_ERR_INVALID (a
 * struct_size too small, a negative pid), RT_ERR_NOT_FOUND when the proc root lacks the CPU
 * statistics or opts->pid does not exist, RT_ERR_NOMEM; the last error says which. A
 * source that finds nothing (no disks, no network) is not an error: its part of the sample is
 * empty. */
RT_API rt_error rt_sampler_new(const rt_sampler_options *opts, rt_sampler **out);

/* Takes a reading now and sets *out to the sample covering the time since the previous one.
 * The sample is owned by the sampler. A source that fails leaves its fields null (and logs).
 * Returns RT_OK, or RT_ERR_IO when not one of the machine-wide sources could be read (the
 * sample is still set, all null). */
RT_API rt_error rt_sampler_sample(rt_sampler *s, const rt_sample **out);

/* The watch between samples, for a sampler of a tree in a cgroup of the job's own
 * (wrapper mode) that reads the group's memory: with read non-zero it reads the group's memory
 * charge and its peak now (two files; memory.stat too when they moved) and raises the group's
 * unreclaimable peak with them, as a sample would, so that memory the job held for a moment
 * between samples is seen with the page cache of that moment (page cache that fills later in
 * the interval can hide it from the sample). Returns the seconds until the next call is worth
 * making: 0.05 s while the charge moves (by 1 MiB or 1/256 of it), twice as long after each
 * reading (a sample's too) that finds it still, up to 1.6 s; with read 0, that wait as the
 * last reading left it, reading nothing. INFINITY where there is nothing to watch (no tree, no
 * group of the job's own, no memory figures): never call again. The caller calls it from the
 * thread that samples, between samples; a sample is never delayed by it. */
RT_API double rt_sampler_watch(rt_sampler *s, int read);

/* Reaps pid, a zombie child of the calling process (found with waitid(P_ALL, ...,
 * WEXITED | WNOWAIT)), after reading its final I/O counters, and adds its CPU time (the
 * kernel's rusage: its own and all it reaped), its I/O and its peak RSS to the tree's totals.
 * Sets *wstatus as waitpid(2) would. Returns RT_OK, RT_ERR_INVALID without a tracked tree,
 * or RT_ERR_NOT_FOUND when pid was not a zombie child. Wrapper mode calls this for every
 * child it reaps. */
RT_API rt_error rt_sampler_reap(rt_sampler *s, int64_t pid, int *wstatus);

/* The next sample reads the GPUs' cumulative counters (NVML's energy and violation times),
 * which a sampler reads at its first sample and then every 30 s (their reading costs the
 * driver milliseconds of CPU), and at the sample after a phase's mark (rt_sampler_peek) or
 * after the tracked command was reaped (rt_sampler_reap): call it before a run's last sample
 * otherwise, so that the run's GPU energy ends on the counter's own figure. NULL is allowed. */
RT_API void rt_sampler_read_counters(rt_sampler *s);

/* Frees the sampler and everything it owns. NULL is allowed. */
RT_API void rt_sampler_free(rt_sampler *s);

#ifdef __cplusplus
}
#endif
#endif
