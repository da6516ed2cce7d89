/* tree.h - the sampler's process-tree part: the tree's raw totals (source/proctree.c) turned
 * into the sample's figures: exact totals since tracking began, and per-interval CPU that
 * never exceeds what the machine itself did in the interval. */
#ifndef RT_SAMPLE_TREE_H
#define RT_SAMPLE_TREE_H

#include "../source/proctree.h"
#include "context.h"
#include "gpu.h"

typedef struct rt_tree_part {
    rt_proctree *tree;
    int64_t root_pid;
    bool from_zero;         /* the caller started the tree: count it from zero, no baseline */
    bool have_prev;         /* prev holds the baseline or the last counted reading */
    bool counted;           /* the last delta consumed cur (commit makes it prev) */
    rt_tree_totals cur, prev;
    uint64_t ut_ns, st_ns;  /* CPU since tracking began: exact, never decreasing */
    uint64_t rd, wr, cancelled; /* storage I/O since tracking began */
    double carry_ut_ns, carry_st_ns; /* CPU counted but not yet reported in an interval */
    rt_process out;
} rt_tree_part;

/* Starts tracking the tree of root (0: none) and, with own_children, the caller's children.
 * pss_max_age_secs: how long a PSS reading may be reused. Returns 0, or -1 on no memory. */
int rt_tree_part_open(rt_tree_part *p, rt_sample_ctx *c, int64_t root, bool own_children, double pss_max_age_secs);
/* Walks the tree at monotonic time mono. */
void rt_tree_part_snapshot(rt_tree_part *p, double mono);
/* Fills p->out for an interval of elapsed seconds. The interval's CPU is capped at what the
 * machine did (machine: this sample's CPU figures): at most its busy cores, and never more
 * cores than it has; what is cut is carried into later intervals, and cpu_secs_total stays
 * exact. gpus gives the tree's GPU share at mono. */
void rt_tree_part_delta(rt_tree_part *p, double elapsed, const rt_cpu *machine, rt_gpu_part *gpus, double mono);
/* Makes the counted reading the previous one. */
void rt_tree_part_commit(rt_tree_part *p);
void rt_tree_part_close(rt_tree_part *p);

#endif
