/* proctree_int.h - the process tree's internals shared by its six files: the tree, its walk
 * and its scan (proctree.c), the readings of one tracked process (proctree_read.c), the
 * scan's consistency rules (proctree_settle.c), the light I/O pass between scans
 * (proctree_light.c), the sharers' probe (proctree_probe.c) and the processes that ended between
 * scans, from the kernel's exit records (proctree_exits.c). Not public. */
#ifndef RT_PROCTREE_INT_H
#define RT_PROCTREE_INT_H

#include "../core/pidmap.h"
#include "proctree.h"
#include "jobmounts.h"
#include "taskstats.h"

/* A process found asleep at this many checks in a row is checked every other scan only. */
#define IDLE_SKIP_AFTER 8

/* What a reading of a tracked process's file gives besides 0 (read): the process is gone, or
 * it is there but its file could not be opened now (out of descriptors even for one file at a
 * time, or refused): its last reading stands and the scan counts it as unread. */
#define RT_PT_GONE (-1)
#define RT_PT_UNREAD (-2)

typedef struct thread_fd {
    int64_t tid;
    int fd; /* task/TID/children, -1 while it is opened for each read (see rt_pt_fd) */
    unsigned gen;
} thread_fd;

typedef struct proc {
    /* (ordered by size, flags last: 10,000 processes hold one each; 320 bytes on x86-64) */
    int64_t pid, ppid;
    uint64_t starttime;
    uint64_t run_ns;   /* on-CPU time of the main thread at the last full read */
    uint64_t ss_run_ns, ss_delay_ns; /* its main thread's schedstat at its last reading: on-CPU
                                        and runnable-but-waiting time (rt_pt_read_run_ns) */
    double full_mono;  /* when all its files were last read */
    int64_t *kids;     /* children found at the last full read */
    size_t nkids, kids_cap;
    thread_fd *threads; /* children files, one per thread */
    size_t nthreads_fd, threads_cap;
    uint64_t read_seq;  /* when its figures (stat) were read */
    uint64_t alive_seq; /* when it was last found not yet reaped */
    uint64_t gone_seq;  /* when it was found gone */
    /* the last observation */
    uint64_t ut_ns, st_ns; /* utime+cutime, stime+cstime */
    rt_pidio io;
    uint64_t rss_pages;
    uint64_t vsize_bytes; /* its virtual memory as last read (stat's vsize) */
    uint64_t faults; /* minflt+majflt */
    int64_t nthreads;
    uint64_t mm_sig; /* its memory's start_code and start_stack as last read, mixed: a process in
                        its parent's memory shows the parent's (rt_pt_shared_vm) */
    uint64_t pss_kib, swap_kib, pss_rss_pages;
    uint64_t private_kib, shared_kib; /* from the same rollup as pss_kib */
    uint64_t exposed_kib;             /* and its pages others can move its share of (rt_rollup) */
    uint64_t own_ns;                  /* own utime+stime (without cutime, cstime) */
    uint64_t exit_ut_ns, exit_st_ns;  /* the user and system CPU of its threads whose exit records
                                         came while it was tracked, summed (rt_pt_take_exits) */
    uint64_t hwm_kib; /* its peak RSS (VmHWM) as last read, 0 before */
    double pss_mono;
    int stat_fd, io_fd, sched_fd; /* kept open, or -1: opened for each read (see rt_pt_fd) */
    unsigned idle_checks; /* checks in a row that found it had not run (up to IDLE_SKIP_AFTER) */
    unsigned gen; /* scan generation when last seen alive */
    unsigned unread_gen; /* the scan generation that counted it unread (rt_pt_unread) */
    bool used, reaped;
    bool io_ok;
    bool io_denied; /* its io could not be opened for want of permission (not: it vanished) */
    bool io_gone;   /* refused in the middle of its exit (rt_pt_exiting): its last reading (none:
                       zeros) stands, whoever reaps it gets its final counters */
    bool io_none, sched_none; /* it has no io (schedstat) file to open: a kernel without I/O
                                 accounting (schedstats), or a fixture */
    bool ss_seen;    /* ss_run_ns and ss_delay_ns hold a reading */
    bool pss_due;    /* its PSS may have moved with a relative's: re-read at the next PSS pass */
    bool zombie;
    bool split_ok;   /* the rollup of pss_kib had private_kib and shared_kib */
    bool hwm_due;    /* it faulted in more pages than its RSS grew by, enough to have passed
                        hwm_kib: its RSS may have peaked between scans, so VmHWM is re-read at
                        the next PSS pass */
    bool pss_ok;
    bool sharers_due; /* its PSS may have moved with sharers outside the tree: re-read at the next
                         PSS pass (rt_proctree_reread_exposed) */
    bool io_moved; /* its I/O grew at its last full read: the light I/O pass reads it again */
    bool vm_shared; /* at this scan it runs in its parent's memory (a vfork child, or one cloned
                       with CLONE_VM, before its exec): its RSS and PSS are the parent's, counted
                       once, there (rt_pt_shared_vm) */
    bool vm_own;    /* its memory was found its own: a process never comes to share its
                       parent's later (only an exec changes its memory, to a new one) */
    bool ign_chld;  /* it ignored SIGCHLD at its last reading (stat's sigignore): the kernel reaps
                       its children without a wait, and their CPU never reaches its cutime */
    bool unwaited;  /* counted in unwaited_parents (it was seen ignoring SIGCHLD) */
} proc;

/* One process of the light I/O pass (rt_proctree_io_light). It reads the process's main
 * thread's own counters (task/PID/io): those of the whole process take in a child's lifetime
 * I/O when it reaps one, which the scan counted already through the child's own. */
typedef struct io_light {
    size_t slot;                 /* the process's entry in procs */
    int fd;                      /* task/PID/io, opened by the scan when passes will run (else
                                  * at the first pass) and kept until the next scan; -1: not yet;
                                  * -2: not to be read (gone, refused, its pid another
                                  * process's by then, past the descriptors the tree may
                                  * keep, or read below its base) */
    bool based;                  /* base_* read */
    uint64_t base_rd, base_wr;   /* that file at its first reading */
    uint64_t grown_rd, grown_wr; /* its growth since, as last read (kept once it reads no more) */
} io_light;

/* The sharers' probe (proctree_probe.c): at most RT_PT_PROBE_PROCS processes, the most exposed,
 * and RT_PT_PROBE_PAGES pages spread over their file-backed mappings (RT_PT_PROBE_VMAS at
 * most, the largest kept beyond that), a quarter of the pages' mapcounts read at every sample. */
#define RT_PT_PROBE_PROCS 4
#define RT_PT_PROBE_PAGES 32
#define RT_PT_PROBE_VMAS 256
/* A sample reads every RT_PT_PROBE_TURNS-th page of the probe, in turns (8 of the 32). */
#define RT_PT_PROBE_TURNS 4
/* Where the page frames are hidden (not root), the sentinel: one probed process's smaps_rollup,
 * read at every sample within RT_PT_SENTINEL_BUDGET of one core over time (a page-table walk of
 * all its memory: 2.3 ms for a process mapping a 200 MiB file in 4 KiB pages, 4.1 ms beside
 * stress-ng --cpu 2, where 3% skipped one sample in four at -i 0.1), in credit of at most
 * RT_PT_SENTINEL_BURST reads. */
#define RT_PT_SENTINEL_BUDGET 0.05
#define RT_PT_SENTINEL_BURST 2.0
/* The share of the tree's PSS one more (or one fewer) sharer must be able to move for the
 * sentinel to be read (the sampler's RT_SHARERS_SHARE). */
#define RT_PT_PROBE_SHARE 0.025

typedef struct probe_proc {
    int64_t pid;
    uint64_t starttime, vsize; /* as the walk last read them: a new mapping changes vsize */
    int fd;                    /* its pagemap, kept open while it is probed; -1: none */
} probe_proc;

typedef struct probe_page {
    uint64_t vaddr;
    double span_kib; /* the stretch of the mappings it stands for */
    uint64_t base;   /* its mapcount when the tree's PSS was last re-read for it */
    uint64_t now;    /* and at the last probe */
    unsigned who;    /* its process: procs[who] */
} probe_page;

typedef struct probe_vma {
    uint64_t start, end;
    unsigned who;
} probe_vma;

typedef struct pt_probe {
    bool off;      /* no probe: a fixture's /proc */
    bool excl;     /* the frames are hidden (not root): a page's pagemap says only whether one
                      process maps it (PM_MMAP_EXCLUSIVE), its mapcount is taken as 1 or 2 */
    bool have_now; /* the pages' now was read by the probes since the last arming */
    size_t turn;   /* the pages the next probe reads: turn, turn + RT_PT_PROBE_TURNS, ... */
    int kpc_fd;    /* /proc/kpagecount; -1: not open */
    uint64_t members; /* the tree's processes with memory of their own at the last arming */
    probe_proc procs[RT_PT_PROBE_PROCS];
    size_t nprocs;
    probe_page pages[RT_PT_PROBE_PAGES];
    size_t npages;
    double total_kib; /* the mappings the pages were spread over */
    probe_vma vmas[RT_PT_PROBE_VMAS]; /* the choice's scratch: the mappings */
    uint64_t seen[RT_PT_PROBE_VMAS][2]; /* and their device and inode */
    /* the sentinel (excl only): the probed process whose shared pages an outsider could move
     * the tree's PSS most through, when by RT_PT_PROBE_SHARE of it or more */
    int sent_fd;          /* its smaps_rollup, kept open; -1: no sentinel */
    double sent_base;     /* its PSS of shared pages (Pss less the private pages) at the base */
    double sent_now;      /* and as the last sample read it */
    bool sent_have_now;   /* sent_now read by the probes since the last arming */
    double sent_credit;   /* CPU seconds it may spend now (RT_PT_SENTINEL_BUDGET) */
    double sent_mono;     /* when the credit was last topped up; 0: never */
    double sent_cost;     /* its last read's CPU seconds */
    uint64_t sent_reads;  /* its reads (for tests) */
} pt_probe;

/* A live process and its exposed pages, as rt_proctree_reread_exposed orders them. */
typedef struct exposed_ent {
    uint64_t kib;
    proc *p;
} exposed_ent;

struct rt_proctree {
    const rt_roots *roots;
    rt_logger log;
    int64_t root;
    uint64_t root_start; /* the root's start time, its identity */
    bool own_children;
    bool root_only; /* the root alone: no descendants, its own CPU time only */
    double ns_per_tick;
    long page_kib;
    proc *procs;
    size_t nprocs, procs_cap;
    size_t *free_list;
    size_t nfree, free_cap;
    rt_pidmap index; /* pid -> its entry in procs */
    int64_t *queue;
    size_t qlen, qcap;
    int64_t *live; /* the processes seen alive in the last scan */
    size_t nlive, live_cap;
    unsigned gen;
    uint64_t seq; /* orders readings and findings (see proctree_settle.c) */
    rt_tree_totals departed;
    uint64_t rss_peak_kib;
    uint64_t rss_hwm_kib; /* the largest peak RSS of one process (see rt_tree_totals) */
    uint64_t rss_hwm_tree_kib; /* the processes' peaks summed over a scan (see rt_tree_totals) */
    rt_taskstats *exits; /* the kernel's exit records (rt_proctree_count_exits), or NULL */
    int64_t me;          /* the caller's pid (its children join the tree with own_children) */
    uint64_t exit_kib;   /* this scan: the peaks of the tree's processes that ended since the last
                            one, summed, each once (rt_pt_take_exits) */
    int64_t exits_seen;  /* the tree's processes whose end the kernel reported, so far */
    int64_t unwaited_parents; /* processes seen ignoring SIGCHLD, so far */
    struct rt_pt_exits_scratch *exits_scratch; /* rt_pt_take_exits's, kept between scans */
    rt_proctree_exits_fn exits_fn; /* the records instead of the kernel's (a test's), or NULL */
    void *exits_user;
    rt_jobmounts *mounts; /* the job's tmpfs and /dev/shm (rt_proctree_count_files), or NULL */
    uint64_t files_kib;   /* this scan: what the job held in them (rt_jobmounts_kib) */
    uint64_t root_own_ns; /* the root's own CPU as last read (RT_NULL_U64: not yet) */
    bool root_seen;
    double pss_max_age;
    bool read_all; /* the next scan reads every process in full (rt_proctree_read_all_next) */
    /* the light I/O pass's processes: the first whose I/O grew at the last scan's full read
     * (so a pass costs nothing for the rest of a large tree) */
    io_light light[RT_PROCTREE_IO_MOVED];
    size_t nlight;
    size_t light_next; /* the entry the next pass reads first (the passes take turns) */
    bool light_on; /* passes will run: a scan takes its processes' bases (rt_proctree_io_light_on) */
    bool warned_io, warned_fds;
    rt_proctree_vm_cmp vm_cmp; /* compares two processes' memory: kcmp(2), a test's, or NULL:
                                  none (a fixture's /proc, a kernel without kcmp) */
    void *vm_cmp_user;
    /* descriptors: the tree keeps a file open between scans only while its number is below
     * keep_below (the soft RLIMIT_NOFILE less a headroom for the rest of the process, worked
     * out at each scan); past it each read opens and closes its file. can_raise: the soft limit
     * is below the hard one (raised once the tree reaches keep_below) */
    int keep_below;
    bool can_raise;
    /* and only while it keeps fewer than keep_max per-process files (rt_proctree_set_keep_max):
     * each kept /proc file holds about 4.5 KiB of the kernel's memory once read (its seq_file
     * buffer, a page, charged to the tracker's memory cgroup); nkept counts them */
    size_t keep_max, nkept;
    bool walk_short; /* a children list of the process being walked could not be read */
    int64_t unread; /* processes of this scan not fully read (rt_tree_totals.unread) */
    uint64_t wait_ns, wait_run_ns; /* this scan's schedstat growth (rt_tree_totals.wait_ns) */
    bool scanned;   /* a scan has run: a process found after it was born in the interval */
    proc *walking; /* the process whose children are being read */
    char buf[8192];
    rt_buf list; /* children lists are read into this */
    struct exposed_ent *order; /* rt_proctree_reread_exposed's ordering of the live processes */
    size_t order_cap;
    pt_probe probe;      /* the sharers' probe (proctree_probe.c) */
    double sharers_secs; /* CPU time of the rollups read for sharers alone (rt_proctree_sharers_secs) */
    /* the holder (rt_proctree_set_holder): a process outside the tree whose other children than
     * the caller join it, each with its descendants (the node's tasks of a job step under
     * slurmstepd: --per-node). Its own CPU and memory are not the tree's; what it reaps of its
     * children is (their time, as its cutime and cstime grew since its first reading), so that a
     * task that ended is counted to its end although the tracker never reaps it */
    int64_t holder;    /* its pid; 0: none */
    int64_t self;      /* the caller: never one of its children taken in */
    proc hp;           /* its entry, outside procs and the index: its stat file kept (its identity)
                        * and its threads' children files, as a member's; read_seq orders its
                        * readings as a reaper's */
    bool holder_alive; /* its stat read at its last reading (false once it is gone) */
    bool holder_based; /* holder_base_* read */
    uint64_t holder_base_ut, holder_base_st; /* its cutime and cstime (ticks) at the first reading */
    uint64_t holder_ut_ns, holder_st_ns;     /* what it reaped since, at its last reading */
};

/* The entry tracking pid, or NULL. */
static inline proc *rt_pt_lookup(rt_proctree *t, int64_t pid)
{
    size_t i = rt_pidmap_get(&t->index, pid);
    return i == RT_PIDMAP_NONE ? NULL : &t->procs[i];
}

/* Counts p (NULL: a process not tracked) as not fully read in this scan, once. */
static inline void rt_pt_unread(rt_proctree *t, proc *p)
{
    if (p && p->unread_gen == t->gen)
        return;
    if (p)
        p->unread_gen = t->gen;
    t->unread++;
}

/* ---- proctree_exits.c: the processes that ended between scans ---------------------------- */

/* Takes the exit records received since the last scan (none without rt_proctree_count_exits):
 * those of the tree's processes (a member, or whose parent is a member or another of them)
 * raise rss_hwm_kib to their peaks, and exit_kib is the sum of the peaks of those not alive in
 * this scan's walk; a member's CPU is kept in its entry (exit_ut_ns), that of one no walk saw is
 * added to the departed account where it reached no process the tree counts. Call after the
 * walk and its settling, before the processes gone are closed into the departed account. */
void rt_pt_take_exits(rt_proctree *t);
/* Adds to the departed account what p, found gone with its time reaching no process the tree
 * counts (not carried, not reaped by the tracker), ran after its last reading, as its threads'
 * exit records tell (nothing without them). */
void rt_pt_exit_rest(rt_proctree *t, const proc *p);
/* Closes the listener and frees what rt_pt_take_exits kept. */
void rt_pt_exits_free(rt_proctree *t);

/* ---- proctree_read.c: the readings of one tracked process --------------------------------- */

/* Marks each process of this scan that runs in its parent's memory (vm_shared): one whose
 * memory starts where its parent's does (mm_sig), and whose memory kcmp(2) finds the parent's.
 * One found with its own is not compared again (vm_own), and its stat is read again: it may
 * have left the parent's memory (its exec) after the walk read it there. One that stops sharing
 * has its PSS re-read at the next PSS pass. */
void rt_pt_shared_vm(rt_proctree *t);
/* The memory comparison by kcmp(2), off over a fixture's /proc (rt_proctree_new). */
void rt_pt_set_vm_cmp_default(rt_proctree *t);
/* The mixed start_code and start_stack of a stat reading (mm_sig). */
uint64_t rt_pt_mm_sig(const rt_pidstat *st);

/* Works out keep_below and can_raise from RLIMIT_NOFILE (at the start of each scan). */
void rt_pt_fd_budget(rt_proctree *t);
/* Opens path under the proc root; out of descriptors, raises the soft limit where the hard one
 * allows and tries again, and says once that the tree is short of them. Returns the fd, or
 * -errno. */
int rt_pt_open(rt_proctree *t, const char *path);
/* Opens "<pid>/<rel>" under the proc root (as rt_pt_open). Returns the fd, or -errno. */
int rt_pt_open_rel(rt_proctree *t, int64_t pid, const char *rel);
/* The descriptor to read "<pid>/<rel>" through: *slot when it is kept open, else one opened
 * now, left in *slot when the tree may keep one more (see keep_below), otherwise for this one
 * read: *once is then set and the caller closes it after reading. Returns the fd, or -errno. */
int rt_pt_fd(rt_proctree *t, int64_t pid, int *slot, const char *rel, bool *once);
/* Closes the kept descriptor in *slot (if any) and sets it to -1. */
void rt_pt_unkeep(rt_proctree *t, int *slot);
/* Reads p's stat file. Returns 0, RT_PT_GONE when the process is gone (or its pid is another
 * process's now), or RT_PT_UNREAD when the file could not be opened. */
int rt_pt_read_stat(rt_proctree *t, proc *p, rt_pidstat *st);
/* Reads p's stat file, then its I/O counters. Returns 0, RT_PT_GONE when p is gone (also when
 * it was reaped between the two reads), or RT_PT_UNREAD (as rt_pt_read_stat). */
int rt_pt_read_stat_io(rt_proctree *t, proc *p, rt_pidstat *st, rt_pidio *io, bool *io_ok);
/* Whether p is exiting: its memory is gone (its status has no VmHWM: the kernel released its
 * mm, which makes its /proc files root's for the moment before it becomes a zombie) or its
 * status no longer reads. */
bool rt_pt_exiting(rt_proctree *t, int64_t pid);
/* Reads the on-CPU time of p's main thread. Returns 0, RT_PT_GONE when its kept file no longer
 * reads, or RT_PT_UNREAD when there is no figure now (the file could not be opened). */
int rt_pt_read_run_ns(rt_proctree *t, proc *p, uint64_t *run_ns);
/* How stale p's PSS (and, for a sleeping process, its whole reading) may get. */
double rt_pt_max_age(const rt_proctree *t, const proc *p);
/* Marks p's PSS to be re-read, with that of every process it may share pages with. */
void rt_pt_mark_family(rt_proctree *t, proc *p);
/* Takes p's figures from st, and its I/O counters from io when io_ok. */
void rt_pt_observe(rt_proctree *t, proc *p, const rt_pidstat *st, const rt_pidio *io, bool io_ok, bool *changed,
                   bool *faulted);
/* The PSS pass over the processes alive at this scan, adding their PSS and swap to out. */
void rt_pt_pss_pass(rt_proctree *t, double mono, rt_tree_totals *out);

/* ---- proctree_settle.c: the scan's consistency -------------------------------------------- */

/* Whether the time of p, which vanished without the tracker reaping it, is in a process still
 * in the tree (or in the tracker's rusage), or in what the holder reaped (*held then set: p's
 * I/O is not, the holder's own counters being out of reach). */
bool rt_pt_carried(rt_proctree *t, proc *p, bool *held);
/* Reads the holder's stat: what it reaped since its first reading (holder_ut_ns, holder_st_ns)
 * and hp.read_seq; holder_alive false once it is gone (then it is read no more). */
void rt_pt_read_holder(rt_proctree *t);
/* Makes the scan's readings consistent; prev is the previous scan's generation. */
void rt_pt_settle(rt_proctree *t, unsigned prev);

/* ---- proctree.c: the walk's reads outside the scan ---------------------------------------- */

/* Reads "<pid>/<rel>" of p through its kept descriptor kept, or one opened for this read only
 * (a stat file so opened must be p's: its start time); into t->buf. Returns the length, or -1. */
ssize_t rt_pt_peek_read(rt_proctree *t, const proc *p, int kept, const char *rel);

/* ---- proctree_probe.c: the sharers' probe ----------------------------------------------- */

/* Sets the probe up, off over a fixture's /proc (at rt_proctree_new). */
void rt_pt_probe_init(rt_proctree *t);
/* Closes the probe's files (at rt_proctree_free). */
void rt_pt_probe_free(rt_proctree *t);

/* ---- proctree_light.c: the light I/O pass ------------------------------------------------- */

/* Reads e's process for the light I/O pass (opening its file first where it is not open): its
 * base at the first reading, its growth since at the next ones. Returns whether it was read. */
bool rt_pt_read_light(rt_proctree *t, io_light *e);
/* Ends the light I/O pass's list (each scan makes a new one): closes its files. */
void rt_pt_close_light(rt_proctree *t);

#endif
