/* cgroup.h (sample) - the sampler's cgroup part: the tracked tree's control group (the job's
 * own group in wrapper mode, else the group the tracked process lives in) read each sample into
 * the public rt_cgroup, with the figures the tree part takes as authority when the group holds
 * nothing but the tracked tree; without a tree, the group the tracker itself runs in. */
#ifndef RT_SAMPLE_CGROUP_H
#define RT_SAMPLE_CGROUP_H

#include "../source/cgroup.h"
#include "../source/proctree.h"
#include "context.h"
#include "tree.h"

/* The most pids read from a group to decide whether it is exclusive: a group with more is
 * taken as not exclusive (a tracked tree that large is rare, and the check stays cheap). */
#define RT_CG_EXCLUSIVE_MAX_PIDS 4096

typedef struct rt_cg_part {
    rt_cg_group *group; /* NULL: no group read */
    bool own;           /* made for the command: counters from zero */
    bool self;          /* the tracker's own group (no tree tracked): never exclusive */
    bool check_members; /* exclusive only when every pid in it is in the tree (a pid's group,
                         * or an own group with the root alone tracked); else always */
    bool exclusive;     /* this reading: every pid of the group is in the tree */
    bool have_cur, have_prev, have_base;
    rt_cg_reading cur, prev, base; /* base: the first reading (subtracted in pid mode) */
    int64_t *pids;                 /* room for the exclusive check (pid mode) */
    int64_t pids_seen;             /* the most pids sampled (pids_peak without pids.peak) */
    uint64_t unreclaimable_peak;   /* the most of the charge not reclaimable so far, bytes
                                    * (rt_cgroup.memory_unreclaimable_peak_mib); RT_NULL_U64 */
    uint64_t unsure;               /* of it, page cache taken as gone at a peak it rose with
                                    * within one reading (the safe side), bytes; 0 */
    /* the memory at the last reading, a sample's or the watch's: the charge, its peak and the
     * page cache then (RT_NULL_U64 before one; an own group starts empty: 0) */
    uint64_t last_charge, last_peak, last_cache;
    bool moved; /* the last reading found the charge or its peak moved (RT_CG_WATCH_MOVE) */
    rt_cgroup out;
    rt_tree_group auth; /* what the tree part is handed */
} rt_cg_part;

/* Opens the group of the job jg (own) when jg is given, else the group pid lives in, in the
 * hierarchies where that is not the root group (a root group's figures are the whole
 * machine's); leaves p->group NULL when there is none that can be read, or when pid lives in
 * the root of every hierarchy (the whole machine, not a job's group). An own group is exclusive by
 * construction, unless root_only (the root alone tracked: its children in the group are not
 * the tree's). Returns 0, or -1 on no memory. */
int rt_cg_part_open(rt_cg_part *p, rt_sample_ctx *c, const struct rt_job_cgroup *jg, int64_t pid, bool root_only);
/* Opens the group the tracker itself lives in ("self" of the proc root: a container, a SLURM
 * step), for a sampler tracking no tree, in the hierarchies where that is not the root group;
 * leaves p->group NULL when there is none, or when the tracker is in the root group of every
 * hierarchy (or memory runs out: logged at debug level, as no group). Never own, never
 * exclusive: its counters are counted from the first reading. */
void rt_cg_part_open_self(rt_cg_part *p, rt_sample_ctx *c);
/* Reads the group at monotonic time mono (its limits every RT_CG_LIMITS_EVERY_SECS, see
 * rt_cg_group_read_at) and, in pid mode, whether every pid in it belongs to tree (walked just
 * before). */
void rt_cg_part_snapshot(rt_cg_part *p, rt_sample_ctx *c, rt_proctree *tree, double mono);
/* Fills p->out for an interval of elapsed seconds and p->auth for the tree part. Returns
 * &p->auth, or NULL without a group or a reading (the tree part then stands alone). */
const rt_tree_group *rt_cg_part_delta(rt_cg_part *p, double elapsed);
/* For a phase's mark: the group's CPU since tracking began read now (one file; the same basis
 * as rt_tree_group.cpu_ns), when the last reading found the group exclusive; RT_NULL_U64
 * otherwise (no group, a shared one, not read). Changes nothing the next delta computes. */
uint64_t rt_cg_part_peek_cpu(rt_cg_part *p, rt_sample_ctx *c);
/* What the tree's walk clock is handed of the reading just taken (rt_tree_part_walk_due): the
 * clock is the group's when the group is the job's own (made for it, holding nothing else
 * whatever the walk finds) and its CPU and memory were read. Call after rt_cg_part_snapshot. */
void rt_cg_part_clock(const rt_cg_part *p, rt_tree_clock *out);
/* The least move of the charge (or of its peak) that keeps the watch on its fast clock: 1 MiB,
 * or 1/256 of the charge when that is more. */
#define RT_CG_WATCH_MOVE_MIN (1u << 20)
/* Between samples (rt_sampler_watch): reads the job's own group's memory alone (the charge, its
 * peak, and memory.stat when they moved) at monotonic time mono and raises the unreclaimable
 * peak with it, as a sample does. Returns whether the charge or its peak moved since the last
 * reading (a sample's or the watch's); false, reading nothing, for a group that is not the
 * job's own, before the first sample, or without memory figures. */
bool rt_cg_part_watch(rt_cg_part *p, rt_sample_ctx *c, double mono);
/* Whether the group is one the watch reads (the job's own, memory figures read). */
bool rt_cg_part_watchable(const rt_cg_part *p);
/* Makes the reading the previous one. */
void rt_cg_part_commit(rt_cg_part *p);
void rt_cg_part_close(rt_cg_part *p);

#endif
