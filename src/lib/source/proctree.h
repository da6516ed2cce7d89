/* proctree.h - the tracked process tree (see proctree.c). Not public. */
#ifndef RT_PROCTREE_H
#define RT_PROCTREE_H

#include "sources.h"
#include "taskstats.h"

typedef struct rt_proctree rt_proctree;

/* gpu_tracker's view of a part of the live tree (the root, its descendants, or both), from
 * the rollups the PSS pass reads: private is Private_Clean + Private_Dirty summed over the
 * part; shared counts the pages that other processes map too, each once as far as rollups can
 * tell: the larger of the largest member's Shared_Clean + Shared_Dirty and the part's
 * proportional share of its shared pages (the sum of Pss - private). That is exact for one
 * process, and for a part whose shared pages are shared only among its own members, or all
 * mapped by one of them; otherwise it is a lower bound. */
typedef struct rt_tree_split {
    uint64_t private_kib, shared_kib;
    int64_t threads;
    bool mem_ok; /* every live member's rollup had the Private_ and Shared_ lines */
} rt_tree_split;

/* Cumulative figures of the tree: live processes plus those that left it. */
typedef struct rt_tree_totals {
    uint64_t utime_ns, stime_ns;     /* user and system CPU, own plus reaped children */
    uint64_t read_bytes, write_bytes; /* storage I/O */
    uint64_t cancelled_write_bytes;   /* of write_bytes, the part truncated or deleted before
                                         writeback (counted like write_bytes) */
    bool io_ok;                       /* every live process's I/O counters were readable */
    uint64_t pss_kib, swap_kib, rss_kib;
    uint64_t vms_bytes;    /* virtual memory (stat's vsize) of the live processes summed */
    uint64_t rss_peak_kib; /* the highest rss_kib of any scan, and never below the ru_maxrss of
                              a child closed by rt_proctree_reap; never decreases */
    uint64_t rss_hwm_kib;  /* the highest peak RSS of any one process of the tree as the kernel
                              counts it: VmHWM of live processes (re-read when one faulted in more
                              pages than its RSS grew), never below a sampled RSS of one process nor
                              the ru_maxrss of a child closed by rt_proctree_reap (which includes
                              every child it reaped); never decreases */
    uint64_t rss_hwm_tree_kib; /* the most the processes alive at one scan may have held at
                              once as their own peaks tell: the tree's RSS at that scan with
                              shared pages once (the combined split; without it, each process's
                              RSS) plus what each process's peak (VmHWM) stands above its RSS
                              then, as if every one of them peaked at the same moment (the safe
                              side for processes that peak between scans), plus, with the
                              kernel's exit records, the peaks of the processes that ended since
                              the last scan (born and gone between scans too), and with
                              rt_proctree_count_files what the job held then in tmpfs mounts of
                              its own and in /dev/shm's growth; never below
                              rss_hwm_kib; never decreases */
    int64_t exits_seen;    /* the tree's processes whose end the kernel's exit records told so
                              far; -1 without them (rt_proctree_count_exits) */
    int64_t unwaited_parents; /* the tree's processes seen so far ignoring SIGCHLD (at a walk):
                              the kernel reaps any children of theirs without a wait, so without
                              the exit records such a child counts to its last walk only, and
                              one born and gone between two walks not at all */
    bool pss_ok;
    uint64_t exposed_kib; /* of the live processes' memory as their rollups last read, the pages
                             whose shares processes outside the tree can move by mapping or
                             unmapping them (rt_rollup.exposed_kib), summed */
    int64_t processes, children, threads; /* children: the root's descendants that are no zombies */
    int64_t running; /* of processes, those not zombies (exited, not yet reaped) */
    int64_t unread;  /* processes found this scan whose stat could not be opened (out of file
                      * descriptors, or refused): neither they nor their descendants are in
                      * the totals */
    bool root_alive;
    /* the split (see rt_tree_split); main is the root, or empty when it is not live */
    rt_tree_split main, descendants, combined;
    /* the tasks' waits for a CPU in the interval (0.20): of each process whose schedstat was
     * read, its main thread's run delay (time runnable but not running) and on-CPU time grown
     * since its last reading (since its birth for one born in the interval); wait_run_ns is the
     * CPU time over which wait_ns was seen, so that the waits can be scaled to the tree's whole
     * CPU (threads and processes not seen at both ends wait in the same proportion) */
    uint64_t wait_ns, wait_run_ns;
    uint64_t root_own_ns; /* the root's own user+system time (not what it reaped) as last read,
                           * kept once it is gone (its zombie is read when the tracker reaps
                           * it); RT_NULL_U64 until it has been seen */
} rt_tree_totals;

/* Creates a tree rooted at root (0: none) that also takes in the calling process's own
 * children when own_children is set (wrapper mode, as a subreaper). pss_max_age_secs: no PSS
 * reading is older than this (75-100% of it, spread by pid) at any scan; 0 re-reads every
 * scan. Returns NULL on no memory. roots and log are borrowed and must outlive the tree. */
rt_proctree *rt_proctree_new(const rt_roots *roots, int64_t root, bool own_children, const rt_logger *log,
                             long clk_tck, double pss_max_age_secs);

/* Tracks the root alone from now on (call before the first scan): no descendant is walked,
 * children is 0, and its CPU time is its own (utime + stime), not what it reaped (cutime,
 * cstime). Its I/O counters are the kernel's /proc/PID/io, which do include the I/O of the
 * children it reaped (the kernel folds a reaped child's I/O into its parent's). */
void rt_proctree_set_root_only(rt_proctree *t);
/* Takes in the children of pid other than the calling process, each with its descendants, from
 * the next scan on (call before the first scan), found anew at every scan: the node's other
 * tasks of a job step, children of one slurmstepd (or orted, a torchrun agent) as the tracker is
 * (--per-node). pid itself is no member: its own CPU, memory and I/O are not the tree's. What
 * it reaps of its children from its first reading on is (its cutime and cstime's growth: a
 * child of it that ended is counted to its end, to the tick, though the tracker never reaps
 * it; such a child's I/O is counted as last read). Once pid is gone it is read no more. */
void rt_proctree_set_holder(rt_proctree *t, int64_t pid);
/* Sets how long a PSS reading (and a sleeping process's full read) may be reused from the next
 * scan on: the age given at rt_proctree_new, or longer when the walk itself is rarer. */
void rt_proctree_set_pss_max_age(rt_proctree *t, double secs);
/* Has the next scan read every process in full, none by the quick path (a sleeping process's
 * figures kept as last read): memory may have been taken from processes asleep since (reclaim
 * or swap lowers their RSS, and their PSS with it, without their running). */
void rt_proctree_read_all_next(rt_proctree *t);
/* Has the next scan re-read the PSS of the live processes most exposed to sharers outside the
 * tree (rt_tree_totals.exposed_kib), the most exposed first, until what is left unread is at
 * most share of the tree's PSS as last read: another process mapped or unmapped pages they map
 * (the machine's page tables moved), which moves their shares without their doing anything.
 * Returns how many processes were marked. */
size_t rt_proctree_reread_exposed(rt_proctree *t, double share);
/* The sharers' probe (proctree_probe.c): after a scan, takes the most exposed processes'
 * file-backed mappings (shared files, SysV shm, memfds) and the mapcounts of a few of their
 * pages (as root; an ordinary user's pagemap says only whether one process maps a page, and a
 * sentinel, one probed process's rollup, follows the pages already shared), or keeps those it
 * had; reread: the scan re-read the exposed processes (rt_proctree_reread_exposed), so the
 * pages' mapcounts (and the sentinel's PSS) as the last rt_proctree_probe_move read them
 * (before the scan) become the base the next moves are measured from. */
void rt_proctree_probe_arm(rt_proctree *t, bool reread);
/* Reads the probed pages' mapcounts now and returns how far the tree's PSS moved with them
 * since the base (KiB, estimated: each page stands for its stretch of the mappings, and the
 * tree's mappers of a page are taken as the fewer of its two counts and the tree's processes
 * with memory of their own; without the frames, 1 or 2, and the sentinel's move times those
 * processes, whichever is more), or -1 when there is no probe (a fixture's /proc, nothing
 * exposed). */
double rt_proctree_probe_move(rt_proctree *t);
/* For tests: the probe as an ordinary user has it, root or not (the pages' exclusive flags and
 * the sentinel, no /proc/kpagecount); returns the sentinel's reads so far. */
uint64_t rt_proctree_probe_flags_only(rt_proctree *t);
/* The CPU time (seconds, the calling thread's) of the rollups read since the last call only
 * because rt_proctree_reread_exposed marked them (not due by any other rule); resets it. */
double rt_proctree_sharers_secs(rt_proctree *t);

/* The most per-process files (stat, io, schedstat, a thread's children) the tree keeps open
 * between scans by default, and while a slower clock walks it (the job's own group stands in
 * between walks: a walk's opens are rare). Each kept /proc file holds about 4.5 KiB of the
 * kernel's memory once read (a page for its seq_file, the file and its seq_file structs),
 * charged to the tracker's memory cgroup: a --pid walk of 3,000 processes keeping all four
 * of each held 54 MB. A kept file saves about 4 µs a read (an open and a close). */
#define RT_PROCTREE_KEEP_MAX 1024
#define RT_PROCTREE_KEEP_MAX_SLOW 64
/* Sets how many per-process files the tree may keep open from now on; kept files past it are
 * closed at once (the first ones walked stay kept). */
void rt_proctree_set_keep_max(rt_proctree *t, size_t n);

/* How the tree tells whether a process runs in its parent's memory: 0 when pid's memory is
 * parent's, above 0 when it is its own, -1 with errno when it cannot tell (kcmp(2)'s
 * KCMP_VM). */
typedef long (*rt_proctree_vm_cmp)(void *user, int64_t parent, int64_t pid);

/* Replaces kcmp(2) for the tree's memory comparisons (tests over a fixture's /proc, where
 * there is none by default). */
void rt_proctree_set_vm_cmp(rt_proctree *t, rt_proctree_vm_cmp fn, void *user);

/* Walks the tree and fills out with its totals. mono: the reading's monotonic time (decides
 * when PSS is re-read: see rt_proctree_scan in proctree.c for the rule). Returns 0. */
int rt_proctree_scan(rt_proctree *t, double mono, rt_tree_totals *out);

/* A light reading of the tree now, for a phase's mark (rt_sampler_peek): the processes the
 * last scan found, each read once more through its kept stat and io files (no walk for new
 * children, no smaps, no status), and the departed account as it stands. */
typedef struct rt_tree_peek {
    uint64_t utime_ns, stime_ns;      /* as rt_tree_totals' (own plus reaped children; the root
                                       * alone: its own), ticks as ns */
    uint64_t read_bytes, write_bytes; /* as rt_tree_totals' */
    bool io_ok;                       /* every process's I/O read now (else its last reading) */
    uint64_t rss_kib;                 /* of the processes read */
    uint64_t root_ns;                 /* the root's utime + stime as the tree counts them (with
                                       * what it reaped unless the root alone is tracked);
                                       * RT_NULL_U64 when the root was not read */
    int64_t read, missed;             /* processes read now, and not (gone since the scan) */
    /* the same CPU with each process's own time from the kernel's per-process CPU clock (ns,
     * every thread, ended ones too: clock_getcpuclockid) instead of its stat ticks; what it
     * reaped (and the departed account) as above. Only with the live /proc (the clocks are of
     * this pid namespace's processes): exact_ok false otherwise, or when one clock failed */
    bool exact_ok;
    uint64_t exact_ns, root_exact_ns; /* the tree's; the root's (RT_NULL_U64: not read) */
} rt_tree_peek;

/* Reads the tree's counters now into out without changing anything the next scan computes (no
 * descriptor kept, no reading stored). What it misses: processes born since the last scan, and
 * a process gone since then (not counted: its time is in its reaper's counters when a process
 * of the tree reaped it, and the next scan books the rest), so its totals are lower bounds of
 * what a scan would say. Returns 0, or -1 when no process could be read and none departed. */
int rt_proctree_peek(rt_proctree *t, rt_tree_peek *out);

/* The light I/O pass, between two scans: the storage I/O of the processes whose I/O grew at
 * their full read in the last scan (the first RT_PROCTREE_IO_MOVED of them the scan found; at
 * most max read now, the passes taking the list in turns), each through its main thread's own
 * counters (task/PID/io: never what it reaped, which the scan counts through the child's own; the
 * other threads' wait for the next scan), opened by the scan (rt_proctree_io_light_on) or else at
 * the first pass after it (the process's start time checked after the open) and kept until the
 * next scan, within the descriptors the tree may keep (past them the scans alone count it). Sets
 * *read_grown and *write_grown to their growth since that first reading, each process's largest
 * (one gone since keeps what it grew; one read below its base, its pid taken over by an exec
 * from another thread, keeps what it grew before and is read no more). Changes nothing the next
 * scan computes. Returns the processes read now. */
int rt_proctree_io_light(rt_proctree *t, size_t max, uint64_t *read_grown, uint64_t *write_grown);

/* The waits' light pass between scans (0.20): the schedstat of each process the last scan found
 * alive, through the file the scan kept open (one pread each; a process whose file is not kept
 * waits for the next scan), its run delay and on-CPU time grown since its last reading into
 * *wait_ns and *run_ns (as rt_tree_totals.wait_ns and wait_run_ns, which the next scan then
 * counts from here). -1 (nothing read) when the last scan found no process alive or more than
 * max: a large tree's waits keep the scans' cadence. */
int rt_proctree_waits_light(rt_proctree *t, size_t max, uint64_t *wait_ns, uint64_t *run_ns);

/* Whether light I/O passes may run between the next scans: a scan then takes the base of each
 * process of the pass when it reads it (an open, a stat and an io read each, 16 at most), so
 * that the passes count from the scan. Off (the default) where no clock of the group's stands
 * in for the walk, or while the walk's cadence is no longer than the sampling interval (every
 * reading scans); on otherwise. */
void rt_proctree_io_light_on(rt_proctree *t, bool on);
#define RT_PROCTREE_IO_MOVED 16

/* Reaps the zombie child pid of the calling process (found with waitid(WNOWAIT)), closing its
 * books with its final I/O counters and the kernel's rusage (its ru_maxrss raises the peak
 * RSS). Sets *wstatus. Returns 0, or -1 when pid was not a zombie child. */
int rt_proctree_reap(rt_proctree *t, int64_t pid, int *wstatus);

/* Has the tree count its processes that end between two scans at their peaks, from the kernel's
 * exit records (taskstats.c: root only, the live /proc only): from the next scan on, each scan's
 * rss_hwm_tree_kib adds the peaks of the processes that ended since the last scan to those alive
 * at it, and rss_hwm_kib is never below one of them. The CPU too, where it reached no process
 * the tree counts: a process the kernel reaped for a parent that ignores SIGCHLD (its time never
 * reaches the parent's cutime), or one whose reaper is outside the tree, counts to its end (what
 * it ran after its last reading; all of it for one no walk saw). Without the records such a
 * process counts to its last reading, and one no walk saw not at all. Nothing else changes where
 * it cannot listen. */
void rt_proctree_count_exits(rt_proctree *t);
/* Has the tree count what the job holds in files no process maps (jobmounts.c: the tmpfs mounts
 * it made in a mount namespace of its own, the growth of /dev/shm), read at each scan and added
 * to its rss_hwm_tree_kib (the live /proc only); as root also their peaks between scans, at their
 * writes (fswatch.c: /dev/shm only for a tree of the caller's children). */
void rt_proctree_count_files(rt_proctree *t);
/* Stops listening to the kernel's exit records (a group of the job's own counts its memory, between
 * samples too: its figure is the need); what they counted stays (exits_seen keeps its count). */
void rt_proctree_stop_exits(rt_proctree *t);
/* Whether exit records are counted (rt_proctree_count_exits could listen, or a test set its own). */
bool rt_proctree_counts_exits(const rt_proctree *t);
/* Replaces the kernel's exit records with those fn hands over at each scan (tests over a
 * fixture's /proc): *out and *n, valid until the next call. */
typedef void (*rt_proctree_exits_fn)(void *user, const rt_exit_rec **out, size_t *n);
void rt_proctree_set_exits_source(rt_proctree *t, rt_proctree_exits_fn fn, void *user);

/* Whether pid was in the tree (alive) at the last scan. */
bool rt_proctree_has(rt_proctree *t, int64_t pid);

/* The processes alive in the tree at the last scan (valid until the next scan). */
const int64_t *rt_proctree_live(const rt_proctree *t, size_t *n);

/* Whether the root has been seen alive at least once. */
bool rt_proctree_root_known(const rt_proctree *t);

void rt_proctree_free(rt_proctree *t);

#endif
