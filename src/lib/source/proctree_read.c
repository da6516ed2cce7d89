/* proctree_read.c - the readings of one tracked process of the process tree: its kept stat
 * and schedstat files, its I/O counters, its PSS and swap (re-read by the freshness rule of
 * the PSS pass), which relatives' PSS may have moved with it, and whether it runs in its
 * parent's memory (kcmp); and the descriptors they are read through: kept open between scans
 * while the limit leaves room, else opened for one read. */
#define _GNU_SOURCE /* syscall */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proctree_int.h"

void rt_pt_fd_budget(rt_proctree *t)
{
    struct rlimit rl;
    t->keep_below = rt_fds_keep_below();
    t->can_raise = t->keep_below != INT_MAX && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
                   (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur);
}

/* Raises the soft RLIMIT_NOFILE to the hard one (once: can_raise is cleared) and works out the
 * budget again. Returns whether it was raised. */
static bool raise_soft(rt_proctree *t)
{
    if (!t->can_raise)
        return false;
    t->can_raise = false;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
        return false;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return false;
    rt_log(&t->log, RT_LOG_DEBUG, "process tree: raised the open files limit to the hard limit");
    rt_pt_fd_budget(t);
    t->can_raise = false;
    return true;
}

int rt_pt_open(rt_proctree *t, const char *path)
{
    int fd = rt_open_at(t->roots->proc_fd, path);
    if ((fd == -EMFILE || fd == -ENFILE) && raise_soft(t))
        fd = rt_open_at(t->roots->proc_fd, path);
    if ((fd == -EMFILE || fd == -ENFILE) && !t->warned_fds) {
        t->warned_fds = true;
        rt_log(&t->log, RT_LOG_WARN,
               "process tree: out of file descriptors even for one file at a time: what cannot be read is "
               "counted in process.unread_count and the tree's figures are lower bounds; raise the open files limit");
    }
    return fd;
}

int rt_pt_open_rel(rt_proctree *t, int64_t pid, const char *rel)
{
    char path[96];
    snprintf(path, sizeof path, "%lld/%s", (long long)pid, rel);
    return rt_pt_open(t, path);
}

int rt_pt_fd(rt_proctree *t, int64_t pid, int *slot, const char *rel, bool *once)
{
    *once = false;
    if (*slot >= 0)
        return *slot;
    int fd = rt_pt_open_rel(t, pid, rel);
    if (fd < 0)
        return fd;
    if (t->nkept < t->keep_max && (fd < t->keep_below || (raise_soft(t) && fd < t->keep_below))) {
        *slot = fd;
        t->nkept++;
    } else {
        *once = true;
    }
    return fd;
}

void rt_pt_unkeep(rt_proctree *t, int *slot)
{
    if (*slot < 0)
        return;
    rt_close(slot);
    t->nkept--;
}

/* What a failed open of a process's file means: gone, or there but not to be read now. */
static int open_failed(int err)
{
    return err == -ENOENT || err == -ESRCH ? RT_PT_GONE : RT_PT_UNREAD;
}

/* Reads p's stat file, kept or opened for this read; one opened now must be the process first
 * seen (its start time): a pid reused by another process is not p. */
int rt_pt_read_stat(rt_proctree *t, proc *p, rt_pidstat *st)
{
    bool once, opened = p->stat_fd < 0;
    int fd = rt_pt_fd(t, p->pid, &p->stat_fd, "stat", &once);
    if (fd < 0)
        return open_failed(fd);
    ssize_t n = rt_pread_single(fd, t->buf, sizeof t->buf);
    if (once)
        close(fd);
    if (n <= 0 || rt_pidstat_parse(t->buf, (size_t)n, st) < 0)
        return RT_PT_GONE;
    if (opened && p->starttime && st->starttime != p->starttime) {
        rt_pt_unkeep(t, &p->stat_fd);
        return RT_PT_GONE;
    }
    return 0;
}

bool rt_pt_exiting(rt_proctree *t, int64_t pid)
{
    int fd = rt_pt_open_rel(t, pid, "status");
    if (fd < 0)
        return true;
    ssize_t n = rt_pread_single(fd, t->buf, sizeof t->buf);
    close(fd);
    uint64_t hwm;
    return n <= 0 || rt_status_hwm_parse(t->buf, (size_t)n, &hwm) < 0;
}

/* Reads p's stat file, then its I/O counters into *io (*io_ok: whether they read). Returns 0,
 * RT_PT_UNREAD when the stat file could not be opened, or RT_PT_GONE when p is gone: its stat
 * no longer reads, or it was reaped between the two reads (the I/O file then answers ESRCH, or
 * is no longer there to open), so that it leaves the tree then, with no half reading and no
 * warning about its I/O. A process refused in the middle of its exit (see exiting) keeps its
 * last reading: whoever reaps it gets its final counters. */
int rt_pt_read_stat_io(rt_proctree *t, proc *p, rt_pidstat *st, rt_pidio *io, bool *io_ok)
{
    *io_ok = false;
    int rc = rt_pt_read_stat(t, p, st);
    if (rc < 0)
        return rc;
    ssize_t n = -EBADF; /* not to be read: refused before */
    if (!p->io_gone && (p->io_fd >= 0 || (!p->io_denied && !p->io_none))) {
        bool once;
        int fd = rt_pt_fd(t, p->pid, &p->io_fd, "io", &once);
        n = fd;
        if (fd >= 0) {
            n = rt_pread_single(fd, t->buf, sizeof t->buf);
            if (once)
                close(fd);
        }
    }
    if (n == -ENOENT) { /* gone since its stat was read, or it has no io file */
        rt_pidstat again;
        if (rt_pt_read_stat(t, p, &again) != 0)
            return RT_PT_GONE;
        p->io_none = true;
    }
    if (n == -ESRCH)
        return RT_PT_GONE;
    if ((n == -EACCES || n == -EPERM) && rt_pt_exiting(t, p->pid))
        p->io_gone = true;
    if (p->io_gone) {
        *io_ok = true;
        *io = p->io; /* its last reading, or none (zeros: it was first seen in its exit) */
        return 0;
    }
    if (n == -EACCES || n == -EPERM)
        p->io_denied = true;
    *io_ok = n > 0 && rt_pidio_parse(t->buf, (size_t)n, io) == 0;
    return 0;
}

/* Reads the on-CPU time of p's main thread (first field of schedstat), and adds what its
 * on-CPU time and run delay (the second: time runnable, waiting for a CPU) grew since its last
 * reading to the scan's (t->wait_run_ns, t->wait_ns); for a process first seen after the tree's
 * first scan, all of them: it was born in the interval. */
int rt_pt_read_run_ns(rt_proctree *t, proc *p, uint64_t *run_ns)
{
    if (p->sched_none)
        return RT_PT_UNREAD;
    bool once, kept = p->sched_fd >= 0;
    int fd = rt_pt_fd(t, p->pid, &p->sched_fd, "schedstat", &once);
    if (fd == -ENOENT)
        p->sched_none = true; /* none to open (or gone: then it leaves the tree anyway) */
    if (fd < 0)
        return RT_PT_UNREAD; /* gone, or no schedstat: the full read tells */
    char b[96];
    ssize_t n = rt_pread_single(fd, b, sizeof b);
    if (once)
        close(fd);
    const char *q = b;
    uint64_t delay;
    if (!(n > 0 && rt_parse_u64(&q, b + n, run_ns)))
        return kept ? RT_PT_GONE : RT_PT_UNREAD;
    if (rt_parse_u64(&q, b + n, &delay)) {
        bool from_birth = !p->ss_seen && t->scanned;
        if (p->ss_seen || from_birth) {
            t->wait_run_ns += rt_delta_u64(*run_ns, from_birth ? 0 : p->ss_run_ns);
            t->wait_ns += rt_delta_u64(delay, from_birth ? 0 : p->ss_delay_ns);
        }
        p->ss_run_ns = *run_ns;
        p->ss_delay_ns = delay;
        p->ss_seen = true;
    }
    return 0;
}

/* How stale p's PSS (and, for a sleeping process, its whole reading) may get: between 75%
 * and 100% of pss_max_age, spread by pid so that the refreshes of a large idle tree fall on
 * different samples instead of all on one. */
double rt_pt_max_age(const rt_proctree *t, const proc *p)
{
    uint64_t h = ((uint64_t)p->pid * 0x9E3779B97F4A7C15ull) >> 54; /* 0..1023 */
    return t->pss_max_age * (0.75 + 0.25 * (double)h / 1024.0);
}

/* Marks p's PSS to be re-read, with that of every process it may share copy-on-write pages
 * with: its children, its siblings, and its ancestors in the tree. A fork, an exit, or a
 * copy-on-write break (a fault) in p changes their shares of the pages too. */
void rt_pt_mark_family(rt_proctree *t, proc *p)
{
    p->pss_due = true;
    for (size_t k = 0; k < p->nkids; k++) {
        proc *c = rt_pt_lookup(t, p->kids[k]);
        if (c)
            c->pss_due = true;
    }
    proc *up = p->pid == t->root ? NULL : rt_pt_lookup(t, p->ppid);
    for (size_t k = 0; up && k < up->nkids; k++) {
        proc *c = rt_pt_lookup(t, up->kids[k]);
        if (c)
            c->pss_due = true;
    }
    for (int depth = 0; up && depth < 256; depth++) {
        up->pss_due = true;
        up = up->pid == t->root ? NULL : rt_pt_lookup(t, up->ppid);
    }
}

/* Takes p's CPU time, threads, RSS, faults and state from st and its I/O counters from io
 * when io_ok (both from rt_pt_read_stat_io). Sets *changed when p became a zombie and *faulted
 * when its fault count moved by more than its RSS grew (what copy-on-write breaks do). */
void rt_pt_observe(rt_proctree *t, proc *p, const rt_pidstat *st, const rt_pidio *io, bool io_ok, bool *changed,
                   bool *faulted)
{
    p->ppid = st->ppid;
    /* the root alone counts its own time, not what it reaped (its children's) */
    uint64_t ut = st->utime + (t->root_only ? 0 : st->cutime);
    uint64_t stm = st->stime + (t->root_only ? 0 : st->cstime);
    p->ut_ns = (uint64_t)((double)ut * t->ns_per_tick + 0.5);
    p->st_ns = (uint64_t)((double)stm * t->ns_per_tick + 0.5);
    p->own_ns = (uint64_t)((double)(st->utime + st->stime) * t->ns_per_tick + 0.5);
    p->nthreads = st->num_threads;
    p->ign_chld = (st->sigignore >> (SIGCHLD - 1)) & 1u;
    /* A copy-on-write break faults without growing RSS (the page was mapped, shared, before);
     * a fresh page faults and grows it. Faults beyond the growth may have un-shared pages. */
    uint64_t faults = st->minflt + st->majflt;
    uint64_t grew = st->rss_pages > p->rss_pages ? st->rss_pages - p->rss_pages : 0;
    if (faults < p->faults || faults - p->faults > grew) {
        *faulted = true;
        /* pages came and went: its RSS may have peaked since the last scan, by at most a
         * huge page per fault (a page table's worth of pages: page size / 8 entries); only a
         * peak above the one last read needs VmHWM read again */
        if (faults < p->faults) {
            p->hwm_due = true; /* the counter went back: nothing to bound it by */
        } else {
            uint64_t per_fault = (uint64_t)t->page_kib * 1024 / 8;
            uint64_t could = (p->rss_pages + (faults - p->faults) * per_fault) * (uint64_t)t->page_kib;
            if (could > p->hwm_kib)
                p->hwm_due = true;
        }
    }
    p->faults = faults;
    p->rss_pages = st->rss_pages;
    p->vsize_bytes = st->vsize_bytes;
    p->mm_sig = rt_pt_mm_sig(st);
    bool zombie = st->state == 'Z' || st->state == 'X';
    if (zombie != p->zombie)
        *changed = true; /* its memory went back: its sharers' PSS grew */
    p->zombie = zombie;
    p->io_ok = io_ok;
    p->io_moved = io_ok && (io->read_bytes > p->io.read_bytes || io->write_bytes > p->io.write_bytes);
    if (io_ok)
        p->io = *io;
    /* a process that vanished is no one's business: only one we may not read is said */
    if (!p->io_ok && p->io_denied && !t->warned_io) {
        t->warned_io = true;
        rt_log(&t->log, RT_LOG_WARN, "process %lld: its I/O counters are not readable (another user's process?)",
               (long long)p->pid);
    }
}

/* kcmp(2)'s KCMP_VM of two processes of the tracker's pid namespace. */
static long kcmp_vm(void *user, int64_t parent, int64_t pid)
{
    (void)user;
    return syscall(SYS_kcmp, (pid_t)parent, (pid_t)pid, KCMP_VM, 0L, 0L);
}

void rt_pt_set_vm_cmp_default(rt_proctree *t)
{
    /* none over a fixture's /proc: its pids are not this machine's */
    t->vm_cmp = strcmp(t->roots->proc, "/proc") == 0 ? kcmp_vm : NULL;
    t->vm_cmp_user = NULL;
}

uint64_t rt_pt_mm_sig(const rt_pidstat *st)
{
    return st->start_code ^ (st->start_stack * 0x9E3779B97F4A7C15ull);
}

/* Takes p's memory figures from a reading of its stat after it was found in memory of its own:
 * the walk's reading may have come while it still ran in its parent's (a vfork child that made
 * its exec in between). Gone since, it held nothing of its own worth counting. */
static void own_memory_now(rt_proctree *t, proc *p)
{
    rt_pidstat st;
    int rc = rt_pt_read_stat(t, p, &st);
    if (rc == 0) {
        p->rss_pages = st.rss_pages;
        p->vsize_bytes = st.vsize_bytes;
        p->mm_sig = rt_pt_mm_sig(&st);
    } else if (rc == RT_PT_GONE) {
        p->rss_pages = 0;
    }
}

void rt_pt_shared_vm(rt_proctree *t)
{
    for (size_t i = 0; i < t->nprocs; i++) {
        proc *p = &t->procs[i];
        if (!p->used || p->gen != t->gen)
            continue;
        bool was = p->vm_shared;
        p->vm_shared = false;
        if (t->vm_cmp && !p->vm_own && !p->zombie && p->pid != t->root) {
            const proc *pp = rt_pt_lookup(t, p->ppid);
            if (pp && pp->gen == t->gen && !pp->zombie && pp->mm_sig == p->mm_sig) {
                long r = t->vm_cmp(t->vm_cmp_user, pp->pid, p->pid);
                if (r == 0) {
                    p->vm_shared = true;
                } else if (r > 0 || errno == EPERM) {
                    /* its own, or not to be compared (another user's, a container's seccomp):
                     * counted as its own, from a reading taken now */
                    p->vm_own = true;
                    own_memory_now(t, p);
                } else if (errno == ENOSYS) {
                    t->vm_cmp = NULL; /* no kcmp in this kernel */
                }
            }
        }
        if (was && !p->vm_shared)
            p->pss_due = true; /* its own memory now (its exec) */
    }
}

/* A change of a process's shared pages that moves its relatives' shares enough to re-read
 * them (a shared mapping attached or detached; smaller moves wait for the age rule). */
#define SHARED_MOVE_KIB 1024

/* Takes r as p's PSS figures, read at mono. Returns whether its shared pages moved by
 * SHARED_MOVE_KIB or more since the last figures. */
static bool take_rollup(proc *p, const rt_rollup *r, double mono)
{
    uint64_t was = p->shared_kib;
    bool moved = p->pss_ok && (r->shared_kib > was ? r->shared_kib - was : was - r->shared_kib) >= SHARED_MOVE_KIB;
    p->pss_kib = r->pss_kib;
    p->swap_kib = r->swap_kib;
    p->private_kib = r->private_kib;
    p->shared_kib = r->shared_kib;
    p->exposed_kib = r->exposed_kib;
    p->split_ok = r->split_ok;
    p->pss_ok = true;
    p->pss_rss_pages = p->rss_pages;
    p->pss_mono = mono;
    return moved;
}

/* What a process without memory holds: a zombie, or one exiting whose memory the kernel
 * already released (RSS 0 in its stat before it becomes a zombie; its rollup fails, ESRCH). */
static const rt_rollup NO_MEMORY = {.split_ok = true};

/* Re-reads p's PSS, swap, private and shared from smaps_rollup (a page-table walk). When the
 * file cannot be read or p's kept stat no longer reads (the pid opened was not this process's:
 * p is gone, and leaves the tree at the next scan), leaves them, and pss_ok, as they were;
 * unless p had no resident page at its last reading: then it holds none (PSS <= RSS), not its
 * last rollup's figure (a 69 MiB PSS beside 0 of RSS, caught under valgrind). Returns whether
 * its shared pages moved by SHARED_MOVE_KIB or more since the last read. */
static bool read_pss(rt_proctree *t, proc *p, double mono)
{
    int fd = rt_pt_open_rel(t, p->pid, "smaps_rollup");
    ssize_t n = fd < 0 ? -1 : rt_pread_single(fd, t->buf, sizeof t->buf);
    if (fd >= 0)
        close(fd);
    rt_rollup r;
    rt_pidstat again;
    if (n > 0 && rt_smaps_rollup_parse(t->buf, (size_t)n, &r) == 0 && rt_pt_read_stat(t, p, &again) == 0)
        return take_rollup(p, &r, mono);
    return p->rss_pages == 0 ? take_rollup(p, &NO_MEMORY, mono) : false;
}

/* Re-reads p's peak RSS (VmHWM of its status file: the kernel's own high-water mark, so a
 * peak between scans is seen). Leaves it as it was when the file cannot be read or has no
 * VmHWM (p exited: a zombie has none). */
static void read_hwm(rt_proctree *t, proc *p)
{
    int fd = rt_pt_open_rel(t, p->pid, "status");
    if (fd < 0)
        return;
    ssize_t n = rt_pread_single(fd, t->buf, sizeof t->buf);
    close(fd);
    uint64_t hwm;
    if (n > 0 && rt_status_hwm_parse(t->buf, (size_t)n, &hwm) == 0 && hwm > p->hwm_kib)
        p->hwm_kib = hwm;
}

/* What the PSS pass gathers of one part of the tree for its shared figure. */
typedef struct split_acc {
    uint64_t pss_shared; /* the sum of Pss - private: the part's share of its shared pages */
    uint64_t shared_max; /* the largest member's shared pages */
} split_acc;

/* Adds p's rollup and threads to a part of the split. */
static void split_add(rt_tree_split *s, split_acc *a, const proc *p)
{
    s->private_kib += p->private_kib;
    a->pss_shared += p->pss_kib > p->private_kib ? p->pss_kib - p->private_kib : 0;
    if (p->shared_kib > a->shared_max)
        a->shared_max = p->shared_kib;
    s->threads += p->nthreads > 0 ? p->nthreads : 0;
    s->mem_ok = s->mem_ok && p->pss_ok && p->split_ok;
}

/* The part's shared pages, each counted once as far as rollups tell (see rt_tree_split). */
static void split_end(rt_tree_split *s, const split_acc *a)
{
    s->shared_kib = a->shared_max > a->pss_shared ? a->shared_max : a->pss_shared;
}

/* The PSS pass over the processes alive at this scan, adding their PSS and swap to out, and
 * their rollups and threads to the split into the root and its descendants; it also re-reads
 * the peak RSS (VmHWM) of the processes that faulted in more pages than their RSS grew by and
 * raises the tree's largest one-process peak (rss_hwm_kib). A process's
 * rollup is re-read when it is due (a relative joined, left or faulted: see
 * rt_pt_mark_family), when it has none yet, when its RSS changed since the last read, or when
 * it is rt_pt_max_age(p) old: never older than that at any scan. A process whose shared pages
 * moved by SHARED_MOVE_KIB or more (it attached or dropped a shared mapping) changed its
 * relatives' shares too: they are re-read in the same pass. A zombie has none. */
void rt_pt_pss_pass(rt_proctree *t, double mono, rt_tree_totals *out)
{
    bool ok = true, moved = false;
    for (size_t i = 0; i < t->nlive; i++) {
        proc *p = rt_pt_lookup(t, t->live[i]);
        if (!p)
            continue;
        if (p->zombie || p->vm_shared) {
            take_rollup(p, &NO_MEMORY, mono); /* none, or its parent's, counted there */
            p->sharers_due = false;
        } else if (p->pss_due || !p->pss_ok || p->pss_rss_pages != p->rss_pages ||
                   mono - p->pss_mono >= rt_pt_max_age(t, p) || mono < p->pss_mono) {
            p->pss_due = p->sharers_due = false;
            if (read_pss(t, p, mono)) {
                rt_pt_mark_family(t, p);
                moved = true;
            }
        }
        p->pss_due = false; /* (sharers_due waits for the second loop: a relative may make it due) */
        if (p->hwm_due && !p->zombie)
            read_hwm(t, p);
        p->hwm_due = false;
        uint64_t one = p->rss_pages * (uint64_t)t->page_kib; /* its RSS now: never above its peak */
        if (p->hwm_kib < one)
            p->hwm_kib = one;
        if (p->hwm_kib > t->rss_hwm_kib)
            t->rss_hwm_kib = p->hwm_kib;
    }
    split_acc am = {0, 0}, ad = {0, 0}, ac = {0, 0};
    out->main = out->descendants = out->combined = (rt_tree_split){.mem_ok = true};
    uint64_t above = 0, hwm_sum = 0; /* the peaks above the rollups' RSS; the peaks summed */
    for (size_t i = 0; i < t->nlive; i++) {
        proc *p = rt_pt_lookup(t, t->live[i]);
        if (!p)
            continue;
        bool family = moved && p->pss_due; /* read before a relative's shared mapping moved its share */
        if ((family || p->sharers_due) && !p->zombie && !p->vm_shared) {
            double before = family ? 0.0 : rt_thread_cpu_secs(); /* the sharers' cost alone */
            read_pss(t, p, mono);
            if (!family)
                t->sharers_secs += fmax(rt_thread_cpu_secs() - before, 0.0);
        }
        p->pss_due = p->sharers_due = false;
        if (!p->zombie && !p->vm_shared) { /* a zombie holds nothing; a CLONE_VM one, its parent's */
            uint64_t held = p->private_kib + p->shared_kib;
            above += p->hwm_kib > held ? p->hwm_kib - held : 0;
            hwm_sum += p->hwm_kib;
        }
        out->pss_kib += p->pss_kib;
        out->swap_kib += p->swap_kib;
        out->exposed_kib += p->exposed_kib;
        ok = ok && p->pss_ok;
        if (p->pid == t->root)
            split_add(&out->main, &am, p);
        else
            split_add(&out->descendants, &ad, p);
        split_add(&out->combined, &ac, p);
    }
    out->pss_ok = ok;
    split_end(&out->main, &am);
    split_end(&out->descendants, &ad);
    split_end(&out->combined, &ac);
    /* the tree's RSS with shared pages once, plus what each peak stood above its RSS: each
     * process as if at its peak, all at once, with the peaks of those that ended since the last
     * scan (the kernel's exit records); without every rollup, the peaks summed (shared
     * pages then count in each process: more, never less) */
    uint64_t bound = out->combined.mem_ok ? out->combined.private_kib + out->combined.shared_kib + above : hwm_sum;
    bound += t->exit_kib;  /* and those that ended since the last scan, each at its peak */
    bound += t->files_kib; /* and the job's files no process maps (tmpfs of its own, /dev/shm) */
    if (bound > t->rss_hwm_tree_kib)
        t->rss_hwm_tree_kib = bound;
}
