/* tree.h - the sampler's process-tree part: the tree's raw totals (source/proctree.c) turned
 * into the sample's figures: exact totals since tracking began, and per-interval CPU that
 * never exceeds what the machine itself did in the interval.
 *
 * The tree's control group (sample/cgroup.c), when it holds nothing but the tracked tree
 * ("exclusive": always so for the group made for a wrapped command), is the authority for the
 * totals, since it also counts what the walk cannot see (children that nobody reaped, or that
 * lived and died between two walks):
 *  - cpu_secs_total is the larger of the group's CPU since tracking began and the walk's own
 *    count (both are lower bounds: the group misses what a process did before it entered the
 *    group, such as a wrapped command's moments between fork and exec, the walk misses
 *    children nobody reaped), never below an earlier total;
 *    the interval's CPU is its growth, split into user and system as the group splits it
 *    (v2 cpu.stat, v1 cpuacct.usage_user/_sys), else as the tree's own walk split it, else
 *    all user; it is still held to the machine's busy cores (the carry below), and what
 *    is still carried when a reading finds nothing of the tree running (zombies aside) is
 *    dropped: no later interval shows CPU of a tree that went (cpu_secs_total keeps it);
 *  - read/write_bytes_total are the larger of the group's and the tree's own count, per
 *    counter: both are lower bounds (v1 blkio does not see buffered writes, whose writeback
 *    the kernel charges to the root group, while /proc/PID/io counts them at write(2); the
 *    walk misses what unreaped or short-lived processes did), so the larger stands;
 *  - PSS, RSS, threads, child counts and the GPU share stay the walk's.
 * The split into main, descendants and combined (rt_process_part): the interval's cores_used
 * is shared out as the walk saw it grow: main takes the root's own share of the walk's growth
 * (the root's utime + stime, not what it reaped, from the same readings; since tracking began
 * when the walk saw none this interval), descendants the rest, so that main + descendants =
 * combined = cores_used in every sample and over the run the totals stay the kernel's; memory and threads are the walk's (rt_tree_split); main's VRAM
 * is what the GPUs list for the root, the descendants' the rest of the tree's.
 * When the group is not exclusive (a pid's group shared with other processes), the totals
 * grow by the tree's own deltas, as without a group; a total never decreases either way.
 * memory_peak_mib is the group's peak charge (NaN without a group).
 * The two clocks: with the job's own group (wrapper mode) the sampler reads the group
 * first and walks only when rt_tree_part_walk_due says so; between two walks cur stays the last
 * walk's, so the walk grows by nothing, the group's growth is the interval's CPU and I/O, and
 * the walk's own figures (memory, counts, parts, GPU share) are carried with their age
 * (rt_process.walk_age_secs). A walk there runs after the group's read, so its CPU total is
 * held against the group's from the next reading on (while anything of the tree runs): what
 * the tree ran between the two reads is no CPU of the interval (floor_walk in tree.c).
 * Elsewhere every reading walks. */
#ifndef RT_SAMPLE_TREE_H
#define RT_SAMPLE_TREE_H

#include "../source/proctree.h"
#include "context.h"
#include "gpu.h"

/* The tree's control group as the cgroup part hands it over for one sample. */
typedef struct rt_tree_group {
    const rt_cgroup *cgroup;          /* the sample's figures of the group */
    bool exclusive;                   /* every process in the group is in the tree */
    uint64_t cpu_ns;                  /* CPU since tracking began; RT_NULL_U64: not read */
    double user_share;                /* the user part of the group's CPU (0..1); NaN: no split */
    uint64_t read_bytes, write_bytes; /* storage I/O since tracking began; RT_NULL_U64: not read */
} rt_tree_group;

/* The walk's clock (rt_tree_part_walk_due): what the job's own group says at this reading. */
typedef struct rt_tree_clock {
    bool group;            /* the job's own group was read, its CPU and memory with it: it stands
                            * in for the walk between two (else every reading walks) */
    int64_t pids;          /* its tasks now; RT_NULL_I64: not read */
    uint64_t memory_bytes; /* its anonymous plus shared memory now (else its charge) */
} rt_tree_clock;

/* Between two walks each reading re-reads the I/O of at most this many processes whose I/O grew
 * at the last walk, their main threads' own (the light I/O pass, rt_proctree_io_light). The
 * group's storage counters
 * count later or less than the processes' own: v2's io.stat and v1's blkio take a buffered
 * write in when the kernel writes it back (v1 charges it to the root group, so never), a v2
 * group without io has none; the processes' count a write when it dirties the page cache. The
 * pass puts a writer's bytes in the intervals it wrote them in, not all in the next walk's. */
#define RT_TREE_IO_LIGHT_MAX 8

/* The walk's budget: its CPU time over the time since the previous walk, in cores. The walk
 * runs once its figures are as old as its last cost allows at RT_WALK_BUDGET (0.05% of one
 * core), sooner (at RT_WALK_MOVED_BUDGET: 0.5%) once the group's tasks changed or its memory
 * moved by RT_WALK_MOVED_SHARE (1%) either way since the last walk, at once when it rose by
 * RT_WALK_HIGH_SHARE (5%) above the most any walk saw (a new high: the peaks feed the answers;
 * a job whose memory swings within what was walked, a fork storm's, is not walked at each
 * swing: its task count changes anyway, so it walks at the moved budget), and never later than
 * walk_max_age. (0.18 before this: a move was 5%, so a plateau up to 5% off the last walk, a
 * peak 4.6% above it or a release 4.6% below it, was carried until the walk's age was up.) */
#define RT_WALK_BUDGET 0.0005
/* A tree of at most this many live processes has its schedstat read again between walks (one
 * pread each through the walk's kept files): its demand for cores follows each interval. */
#define RT_TREE_WAITS_LIGHT_MAX 64
#define RT_WALK_MOVED_BUDGET 0.005
#define RT_WALK_MOVED_SHARE 0.01
#define RT_WALK_HIGH_SHARE 0.05
/* With the walk on the group's clock, a PSS reading whose process did not change (RSS, faults,
 * relatives) may be reused for this many walk cadences when that is longer than the PSS age
 * the caller set: the age rule's re-reads of a large quiet tree then cost no more per second
 * than the walk itself, instead of the tree's size over the PSS age (10,000 rollups every
 * 30 s is 5 ms of CPU a second). */
#define RT_WALK_PSS_CADENCES 10
/* Sharers outside the tree: a process's share of a page moves when any process maps or
 * unmaps it, in the tree or not, so a process of the tree that did nothing can see its PSS move
 * (4 processes mapping one file lose a fifth of their PSS when a fifth maps it). What no
 * reading of the tree shows, the machine's page tables do (meminfo's PageTables): a process
 * that maps M bytes of pages needs about M / (page size / 8) of tables, and gives them back when
 * it unmaps them. So when the tables moved since the last such re-read by enough to map
 * RT_SHARERS_SHARE (2.5%) of the tree's PSS, and the tree's exposed pages (those others can
 * share: all but private anonymous memory) are that much too, the reading walks at once and
 * re-reads the PSS of the most exposed processes until what is left unread is at most that
 * share. Such re-reads spend at most RT_SHARERS_BUDGET of one core over time, in bursts of at
 * most RT_SHARERS_BURST seconds of CPU or RT_SHARERS_BURST_READS times the last re-read's cost,
 * whichever is more (a quiet machine's one outside mapping is followed at every sample while it
 * grows and again when it leaves; a machine whose tables never rest, at that budget). */
#define RT_SHARERS_SHARE 0.025
#define RT_SHARERS_BUDGET 0.005
#define RT_SHARERS_BURST 0.1
#define RT_SHARERS_BURST_READS 8
/* The machine's own noise in its page tables: every process that starts or exits moves them by
 * its fixed tables (40-64 KiB before it maps anything), enough by the rule above to map 2.5% of a
 * tree of 1 GiB. A re-read for sharers that finds the tree's PSS where it was (moved by less
 * than half of RT_SHARERS_SHARE) was such noise: the move that asked for it becomes the noise
 * floor, which halves every RT_SHARERS_NOISE_HALF seconds, and a move asks for a re-read only
 * when it is more than RT_SHARERS_NOISE_OVER times that floor (a `sleep` every 50 ms beside a job
 * of 4 processes mapping 512 MiB spent the whole credit in three re-reads, and the outsider that
 * came next was never seen). A real sharer's tables grow by 1 MiB per 512 MiB it maps. The
 * re-read right after one that found a move is not noise: the tables are read before the walk,
 * and a mapping that went on while the walk read the rollups shows as a move after it. */
#define RT_SHARERS_NOISE_HALF 30.0
#define RT_SHARERS_NOISE_OVER 2.0
/* The sharers' probe (rt_proctree_probe_move; an ordinary user's on the pages' exclusive flags
 * and a sentinel's rollup): the page tables
 * say only that some process somewhere mapped or unmapped something, and a busy machine's
 * tables never rest (its noise floor kept an outsider's 200 MiB mapping from being followed for
 * 0.6 s, its unmapping until the outsider exited: 3.8 s at -i 0.1). The probe reads at every
 * reading the mapcounts of 8 of 32 pages (in turns) spread over the file-backed mappings of the
 * tree's most exposed processes (4 at most): when the PSS they stand for moved by
 * RT_SHARERS_SHARE of the tree's since the last re-read, the reading walks and re-reads the
 * exposed processes, in the same bursts, with no noise floor (a mapcount moves only when a page
 * is mapped or unmapped: every re-read it asks for finds a move) and within
 * RT_SHARERS_PROBE_BUDGET of one core over time (2%: a SysV shm segment of 200 MiB mapped and
 * unmapped every 2 s by an outsider that touches it for 0.15 s asks for 3 or 4 re-reads of
 * 10-18 ms each time; at 0.5% the second round came 0.36-1.15 s late). With the probe on, the
 * tables' rule still asks too (the probe reads its pages in turns; a process of the tree that
 * maps what another one of it holds grows the tables at once), within the same budget; with
 * a group of the job's own, a move of the tables that the group's own memory explains (its
 * anonymous plus shared memory moved since the last walk, over the tables it needs) asks for
 * nothing, and a re-read finds a move only when the tree's PSS moved by more than its RSS did
 * (a job that maps and unmaps 300 MiB of its own again and again, beside a machine whose tables
 * never rest, walked 13-25 times in 10 s for sharers before, 5-8 now: issue 68). */
#define RT_SHARERS_PROBE_BUDGET 0.02

typedef struct rt_tree_part {
    rt_proctree *tree;
    int64_t root_pid;
    bool from_zero;         /* the caller started the tree: count it from zero, no baseline */
    bool have_prev;         /* prev holds the baseline or the last counted reading */
    bool counted;           /* the last delta consumed cur (commit makes it prev) */
    rt_tree_totals cur, prev;
    uint64_t ut_ns, st_ns;  /* the walk's CPU since tracking began: exact, never decreasing */
    uint64_t rd, wr, cancelled; /* the walk's storage I/O since tracking began */
    uint64_t tot_ut_ns, tot_st_ns; /* the reported CPU totals (the walk's, or the group's) */
    uint64_t tot_rd, tot_wr;       /* the reported I/O totals */
    uint64_t shown_rd, shown_wr;   /* the totals as the last sample with I/O showed them: a
                                    * sample after one whose I/O was null shows what grew
                                    * since, so the intervals always add up to the totals */
    /* An exclusive stretch: readings in a row whose group held only the tree. Within one the
     * group counts (its growth since the stretch began, added to the totals reported then);
     * outside, the walk's own growth does, so what foreign processes did in the group while
     * they were in it never lands in the tree's totals. */
    bool stretch;
    uint64_t base_g_cpu, base_g_rd, base_g_wr;       /* the group's counters when it began */
    uint64_t base_tot_cpu, base_tot_rd, base_tot_wr; /* the reported totals then */
    uint64_t base_walk_rd, base_walk_wr;             /* the walk's I/O totals then */
    uint64_t base_walk_cpu;                          /* the walk's CPU total then (ns) */
    double carry_ut_ns, carry_st_ns; /* CPU counted but not yet reported in an interval */
    double wait_ratio; /* the tasks' run delay per second of their CPU at the last walk that saw
                        * both (rt_process.cpu_wait_cores); NaN: none yet */
    double demand;     /* the tasks runnable (running or waiting) on average at the last walk;
                        * NaN: none yet */
    double walk_threads; /* the tree's threads at the last walk */
    int64_t tasks_prev;     /* the tree's tasks at the previous reading (RT_NULL_I64: unknown) */
    double dropped_ns; /* carried CPU never shown: nothing of the tree ran any more */
    uint64_t prev_root_own; /* the root's own CPU (ns) at the previous reading; RT_NULL_U64 */
    double root_sum_ns, walk_sum_ns; /* the root's own and the walk's CPU growth, summed */
    rt_process_part parts[3]; /* main, descendants, combined */
    rt_process out;
    /* the peek's own (no sample reads them): the exact walk's offset from the samples' basis,
     * fixed at its first reading so that its totals are one counter (rt_tree_part_peek) */
    double peek_offset_ns;
    bool peek_have_offset;
    /* the walk's clock */
    double walk_max_age;    /* rt_sampler_options.walk_max_age_secs; not above 0: always walk */
    double pss_max_age;     /* rt_sampler_options.pss_max_age_secs */
    double pss_age_set;     /* the PSS age the tree was last given */
    size_t keep_set;        /* the kept files the tree was last allowed (rt_proctree_set_keep_max) */
    bool have_walk;         /* a walk ran (the first reading always walks) */
    bool walked;            /* this reading walked */
    bool group_first;       /* this reading read the job's own group before its walk */
    bool walk_now;          /* the next reading walks whatever the clock (the root was reaped) */
    double walk_mono;       /* when the last walk ran */
    double demand_mono;     /* when the tasks' schedstat was last read (a walk, or the waits'
                             * light pass); 0: never */
    double demand_span;     /* the seconds that reading covers (NaN: the first) */
    bool waits_now;         /* this reading's waits' light pass read (light_wait_ns, light_run_ns) */
    bool exits_wanted;      /* the kernel's exit records to be listened to once a walk finds a child */
    uint64_t light_wait_ns, light_run_ns;
    double snap_mono;       /* when the last reading (walk or not) was taken; 0: none yet */
    double walk_cost_secs;  /* a walk's CPU time (the calling thread's) as the clock estimates it */
    bool walk_over;         /* the last walk cost more than twice the estimate before it */
    double walk_period;     /* the cadence the clock keeps now; NaN: every reading walks */
    int64_t walk_pids;      /* the group's tasks at the last walk */
    uint64_t walk_memory;   /* and its memory (rt_tree_clock.memory_bytes) */
    uint64_t walk_memory_high; /* the most memory any walk saw (RT_NULL_U64: none yet) */
    /* the light I/O pass: its processes' growth since the last walk (0 at a walk), held in
     * the stretch's count of the walk (counted_io) */
    uint64_t light_rd, light_wr;
    /* sharers outside the tree (RT_SHARERS_SHARE) */
    double pt_span;          /* bytes of mappings per byte of page tables: page size / 8 */
    uint64_t pt_now;         /* the machine's page tables at this reading (KiB); RT_NULL_U64 */
    double pt_mark;          /* and at the last re-read for sharers, moved since by what the
                              * tree's own RSS changes take (NaN: none yet) */
    uint64_t pt_rss;         /* the tree's RSS (summed over its processes) at the last walk */
    double sharers_debt;     /* seconds of CPU the re-reads spent, not yet paid back by the budget */
    double sharers_cost;     /* the last re-read's cost (seconds of CPU) */
    double sharers_mono;     /* when the debt was last paid down */
    bool sharers_found;      /* the last re-read found the tree's PSS moved */
    double sharers_move;     /* the tables' move (KiB) this reading saw since pt_mark */
    double sharers_noise;    /* the noise floor (KiB; RT_SHARERS_NOISE_HALF) when last set */
    double sharers_noise_mono; /* and when that was */
    bool sharers_probe;      /* the tree's sharers' probe is on: its move, not the tables' (see
                              * the note on the probe above), asks for the re-reads */
    bool sharers_now;        /* this reading re-reads the exposed processes */
    bool sharers_forced;     /* and walks for that alone */
} rt_tree_part;

/* Starts tracking the tree of root (0: none) and, with own_children, the caller's children.
 * pss_max_age_secs: how long a PSS reading may be reused; walk_max_age_secs: the oldest the
 * walk's figures may get with the job's own group (not above 0: every reading walks).
 * Returns 0, or -1 on no memory. */
int rt_tree_part_open(rt_tree_part *p, rt_sample_ctx *c, int64_t root, bool own_children, double pss_max_age_secs,
                      double walk_max_age_secs);
/* The machine's page tables at the reading about to be taken (meminfo's PageTables, KiB;
 * RT_NULL_U64: unknown): the clock of sharers outside the tree (RT_SHARERS_SHARE). */
void rt_tree_part_page_tables(rt_tree_part *p, uint64_t kib);
/* Whether the reading at monotonic time mono walks the tree (k: the job's own group's clock
 * at this reading; NULL or k->group false: always; also at once when sharers outside the tree
 * may have moved its PSS, see RT_SHARERS_SHARE); sets the cadence reported. */
bool rt_tree_part_walk_due(rt_tree_part *p, const rt_tree_clock *k, double mono);
/* Takes a walk's CPU time (cost, seconds) into the clock's estimate of a walk
 * (walk_cost_secs): as it is, except that the first of a run of walks dearer than twice the
 * estimate raises it only twofold. Before have_walk is set: the first walk's cost. */
void rt_tree_part_learn_cost(rt_tree_part *p, double cost);
/* Walks the tree at monotonic time mono when walk is set (timing the walk; k as above, kept as
 * the clock's mark), else keeps the last walk's totals as this reading's. */
void rt_tree_part_snapshot(rt_tree_part *p, double mono, bool walk, const rt_tree_clock *k);
/* Fills p->out for an interval of elapsed seconds. The interval's CPU is capped at what the
 * machine did (machine: this sample's CPU figures): at most its busy cores, and never more
 * cores than it has; and at the tree's tasks: no more cores than the tree had tasks at either
 * end of the interval plus the tasks the machine made in it (forks; RT_NULL_U64: unknown, no
 * such cap); what is cut is carried into later intervals, and cpu_secs_total stays exact.
 * gpus gives the tree's GPU share at mono. group: the tree's control group this sample (NULL:
 * none; see the rules at the top). */
void rt_tree_part_delta(rt_tree_part *p, double elapsed, const rt_cpu *machine, uint64_t forks, rt_gpu_part *gpus,
                        double mono, const rt_tree_group *group);
/* The tree's counters at a phase's mark (rt_sampler_peek), from a light reading of the tree
 * (rt_proctree_peek) and its group's CPU now; NaN where unknown. */
typedef struct rt_tree_reading {
    double cpu_ns;     /* cumulative, see cpu_source */
    int cpu_source;    /* RT_PHASE_CPU_GROUP: base_tot_cpu + the group's growth since the
                        * exclusive stretch began; RT_PHASE_CPU_SCHEDSTAT: the exact walk
                        * (rt_tree_peek.exact_ns) less an offset fixed at its first reading (the
                        * ticks basis's total then); RT_PHASE_CPU_TICKS: the reported total at
                        * the last sample + the walk's growth since; RT_PHASE_CPU_NONE */
    double others_ns;  /* the light walk's total less the root's (the exact walk's when it read,
                        * else ticks): the CPU of the tree's other processes, live and departed;
                        * NaN when the root was not read */
    double read_bytes, write_bytes; /* the reported totals + the walk's growth since */
    double rss_mib;
} rt_tree_reading;

/* Fills out from the light reading k and group_cpu_ns (rt_cg_part_peek_cpu; RT_NULL_U64:
 * none), on the basis of the last sample's totals; changes nothing a sample reads (only the
 * exact walk's offset, set once). */
void rt_tree_part_peek(rt_tree_part *p, const rt_tree_peek *k, uint64_t group_cpu_ns, rt_tree_reading *out);
/* Makes the counted reading the previous one. */
void rt_tree_part_commit(rt_tree_part *p);
void rt_tree_part_close(rt_tree_part *p);

#endif
