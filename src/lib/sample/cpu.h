/* cpu.h - the sampler's CPU part: /proc/stat per core, turned into busy cores per interval.
 * The machine's figures follow from the per-core lines alone (the aggregate line is rounded
 * apart from them by the kernel), so utilization always equals the sum of the cores. */
#ifndef RT_SAMPLE_CPU_H
#define RT_SAMPLE_CPU_H

#include "context.h"

/* The count of every process (the proc root's numbered entries, the sample's
 * all_process_count) is walked again only when the kernel's counters say the set of processes
 * may have changed (see cpu.c), and then within a budget: the walks' CPU may average at most
 * RT_CPU_WALK_SHARE of one core, beyond a burst of RT_CPU_WALK_BURST_SECS of CPU (a token
 * bucket, full at the start). */
#define RT_CPU_WALK_SHARE 0.00005       /* 50 µs of walking a second at most, over time */
#define RT_CPU_WALK_BURST_SECS 0.0005  /* walks up to 0.5 ms of CPU before the share applies */

/* The kernel's counters a process count is valid for (see cpu.c). */
typedef struct rt_proc_key {
    uint64_t forks;   /* /proc/stat's `processes`: every task ever created (threads too) */
    uint64_t threads; /* /proc/loadavg's tasks now (after the slash) */
    uint64_t last_pid; /* /proc/loadavg's last field: the newest pid of the reader's namespace */
} rt_proc_key;

typedef struct rt_cpu_part {
    int fd;                    /* /proc/stat, kept open */
    rt_cpu_ticks *cur, *prev;  /* per-core readings, cap entries each */
    size_t ncur, nprev, cap;
    double *per_core;          /* cap entries: the sample's per_core_pct */
    bool have_cur, have_prev;
    int64_t procs_running;     /* RT_NULL_I64 when not reported */
    int64_t all_processes;     /* numbered entries of /proc; RT_NULL_I64 when not listed */
    /* the process count's walk (cpu.c) */
    int loadavg_fd;            /* /proc/loadavg, kept open; -1 without one (a walk every sample) */
    int list_fd;               /* the proc root opened for listing, kept open; -1: opened per walk */
    bool walk_always;          /* no shortcut: hidepid hides processes that neither fork nor exit */
    bool key_valid;            /* key holds the counters read right before the count's walk */
    rt_proc_key key;
    double walk_share, walk_burst; /* the budget (RT_CPU_WALK_SHARE, _BURST_SECS; tests change them) */
    double walk_tokens;        /* CPU seconds of walking left to spend (negative: overspent) */
    double walk_tokens_mono;   /* when walk_tokens was last topped up (0: never) */
    uint64_t walks;            /* walks done (tests and benchmarks read it) */
    uint64_t walks_deferred;   /* samples that carried a count the counters said may be stale */
    uint64_t forks, prev_forks; /* /proc/stat's `processes` (tasks made since boot) now and at the
                                 * previous reading; RT_NULL_U64 when not read */
    uint64_t forks_delta;      /* tasks the machine made in the interval; RT_NULL_U64: unknown */
    rt_cpu out;
} rt_cpu_part;

/* Opens /proc/stat. Returns 0, or -1 when it cannot be opened (nothing to sample). */
int rt_cpu_part_open(rt_cpu_part *p, rt_sample_ctx *c);
/* Reads and parses /proc/stat into the current reading, and counts every process when the
 * count may have changed (within the walk budget). Returns whether /proc/stat could be read. */
bool rt_cpu_part_snapshot(rt_cpu_part *p, rt_sample_ctx *c);
/* Fills p->out and p->forks_delta from the current and previous readings (null where either
 * is missing). */
void rt_cpu_part_delta(rt_cpu_part *p, const rt_sample_ctx *c);
/* Makes the current reading the previous one (a failed snapshot keeps the old previous). */
void rt_cpu_part_commit(rt_cpu_part *p);
void rt_cpu_part_close(rt_cpu_part *p);

/* Whether mountinfo's text (len bytes) shows the procfs of device dev ("MAJ:MIN") mounted with
 * hidepid=invisible or ptraceable (2, 4), or does not show it at all. Pure. */
bool rt_mountinfo_hides_pids(const char *text, size_t len, const char *dev);

#endif
