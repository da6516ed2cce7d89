/* proctree.c - the tracked process tree: finds descendants through the children of every
 * thread, keeps each process's stat, io and children files open between samples (so a
 * reused pid is never mistaken for the tracked process), and keeps exact totals:
 * live processes count own plus reaped-children time, processes that leave the tree are
 * closed into a "departed" account, and children the tracker reaps are closed with the
 * kernel's own rusage. Here: the entries, the walk, the scan, the peek (a light reading for a
 * phase's mark) and reaping. What one process's readings are is in proctree_read.c; how a scan
 * counts each process's time exactly once, although its readings are taken one after another,
 * is in proctree_settle.c; the light I/O pass between scans is in proctree_light.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/bridge.h"
#include "../core/dirwalk.h"
#include "proctree_int.h"

/* ---- entries ------------------------------------------------------------------------------ */

/* Closes p's thread children files: all of them, or those of threads not seen in scan gen. */
static void close_threads(rt_proctree *t, proc *p, bool all, unsigned gen)
{
    size_t k = 0;
    for (size_t i = 0; i < p->nthreads_fd; i++) {
        if (all || p->threads[i].gen != gen)
            rt_pt_unkeep(t, &p->threads[i].fd);
        else
            p->threads[k++] = p->threads[i];
    }
    p->nthreads_fd = k;
}

/* Marks slot idx unused and offers it for reuse. */
static void release_slot(rt_proctree *t, size_t idx)
{
    proc *p = &t->procs[idx];
    memset(p, 0, sizeof *p);
    p->stat_fd = p->io_fd = p->sched_fd = -1;
    if (rt_grow(&t->free_list, &t->free_cap, t->nfree + 1, sizeof *t->free_list) == 0)
        t->free_list[t->nfree++] = idx; /* else the slot is just not reused */
}

/* Closes every file of p's the tree keeps open. */
static void unkeep_all(rt_proctree *t, proc *p)
{
    rt_pt_unkeep(t, &p->stat_fd);
    rt_pt_unkeep(t, &p->io_fd);
    rt_pt_unkeep(t, &p->sched_fd);
    close_threads(t, p, true, 0);
}

/* Stops tracking p: unhashes it, closes its files, frees its lists and releases its slot. */
static void drop(rt_proctree *t, proc *p)
{
    rt_pidmap_del(&t->index, p->pid);
    unkeep_all(t, p);
    free(p->threads);
    free(p->kids);
    release_slot(t, (size_t)(p - t->procs));
}

/* Starts tracking pid: takes a slot and keeps its stat file open where the tree may keep one
 * more descriptor (its io and schedstat files are opened at their first read, kept by the same
 * rule). Returns the new entry, or NULL when pid is gone, cannot be opened (counted as unread),
 * or on no memory. The caller checks identity. */
static proc *track(rt_proctree *t, int64_t pid)
{
    int sfd = -1;
    bool once;
    int fd = rt_pt_fd(t, pid, &sfd, "stat", &once);
    if (fd < 0) {
        if (fd != -ENOENT && fd != -ESRCH)
            t->unread++; /* there, but not to be read: the totals miss it */
        return NULL;
    }
    if (once)
        close(fd); /* there: it is read by opening its files for each read */
    size_t idx;
    if (t->nfree) {
        idx = t->free_list[--t->nfree];
    } else {
        /* each entry is set as it is taken: the room past nprocs is not touched (10,000
         * processes of 328 bytes each, doubled to 16,384 and zeroed, held 5.4 MB) */
        if (rt_grow_uninit(&t->procs, &t->procs_cap, t->nprocs + 1, sizeof *t->procs) < 0) {
            rt_pt_unkeep(t, &sfd);
            return NULL;
        }
        idx = t->nprocs++;
    }
    proc *p = &t->procs[idx];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->stat_fd = sfd;
    p->io_fd = p->sched_fd = -1;
    p->used = true;
    if (rt_pidmap_put(&t->index, pid, idx) < 0) {
        rt_pt_unkeep(t, &p->stat_fd);
        release_slot(t, idx);
        return NULL;
    }
    return p;
}

/* ---- the walk ----------------------------------------------------------------------------- */

/* Queues pid for the walk, and records it as a child of the process being walked (if any). */
static void push(void *user, int64_t pid)
{
    rt_proctree *t = user;
    proc *cur = t->walking;
    if (cur == &t->hp && pid == t->self)
        return; /* the holder's children are the node's other tasks: never the tracker itself */
    /* remember the children of the process being read, for its quick path */
    if (cur && rt_grow_small(&cur->kids, &cur->kids_cap, cur->nkids + 1, sizeof *cur->kids) == 0)
        cur->kids[cur->nkids++] = pid;
    if (rt_grow(&t->queue, &t->qcap, t->qlen + 1, sizeof *t->queue) == 0)
        t->queue[t->qlen++] = pid;
}

/* A walk over a task directory: each thread id goes to cb(t, tid, user). */
typedef struct thread_walk {
    rt_proctree *t;
    void (*cb)(rt_proctree *, int64_t, void *);
    void *user;
} thread_walk;

/* rt_dir_walk_ids callback over <pid>/task: hands on each thread id. */
static int visit_task_entry(void *user, int64_t tid)
{
    thread_walk *w = user;
    w->cb(w->t, tid, w->user);
    return 0;
}

/* Lists the thread ids in "<base>/task" (through the directory walker: no allocation),
 * calling cb for each. Returns false when the list could not be read (not: the process is
 * gone). */
static bool list_threads(rt_proctree *t, const char *base, void (*cb)(rt_proctree *, int64_t, void *), void *user)
{
    char path[96];
    thread_walk w = {t, cb, user};
    if (!rt_pathf(path, sizeof path, "%s/task", base))
        return false;
    int fd = rt_pt_open(t, path);
    if (fd == -ENOENT || fd == -ESRCH)
        return true;
    if (fd < 0)
        return false;
    long n = rt_dir_walk_ids_fd(fd, visit_task_entry, &w);
    close(fd);
    return n >= 0 || n == -ENOENT || n == -ESRCH;
}

/* Reads a children file from its start and queues every pid in it. */
static void read_children_fd(rt_proctree *t, int fd, void (*queue)(void *, int64_t))
{
    /* one read for a list under a page (a pid and its space take at most 8 characters) */
    ssize_t n = rt_read_fd_grow(fd, &t->list, RT_READ_SHORT_LINES);
    if (n > 0)
        rt_children_parse(t->list.data, (size_t)n, queue, t);
}

/* Queues the children of thread tid of p (its children file kept, or opened for this read); a
 * list that cannot be opened leaves the walk short. */
static void visit_thread(rt_proctree *t, int64_t tid, void *user)
{
    proc *p = user;
    thread_fd *th = NULL;
    for (size_t i = 0; i < p->nthreads_fd; i++)
        if (p->threads[i].tid == tid)
            th = &p->threads[i];
    if (!th) {
        if (rt_grow_small(&p->threads, &p->threads_cap, p->nthreads_fd + 1, sizeof *p->threads) < 0) {
            t->walk_short = true;
            return;
        }
        th = &p->threads[p->nthreads_fd++];
        th->tid = tid;
        th->fd = -1;
    }
    th->gen = t->gen;
    char rel[64];
    snprintf(rel, sizeof rel, "task/%lld/children", (long long)tid);
    bool once;
    int fd = rt_pt_fd(t, p->pid, &th->fd, rel, &once);
    if (fd < 0) {
        if (fd != -ENOENT && fd != -ESRCH)
            t->walk_short = true; /* there, but its children are not to be listed now */
        return;
    }
    read_children_fd(t, fd, push);
    if (once)
        close(fd);
}

/* Pushes the children of every thread of p, and remembers them for p's quick path. A single
 * thread's children file is all there is (kept open where it may be); otherwise the thread
 * list is read. Returns false when a list could not be read: p's new children may be missing. */
static bool walk_children(rt_proctree *t, proc *p)
{
    p->nkids = 0;
    t->walking = p;
    t->walk_short = false;
    if (p->nthreads <= 1) {
        visit_thread(t, p->pid, p);
    } else {
        char base[32];
        snprintf(base, sizeof base, "%lld", (long long)p->pid);
        if (!list_threads(t, base, visit_thread, p))
            t->walk_short = true;
    }
    close_threads(t, p, false, t->gen); /* threads that ended */
    t->walking = NULL;
    return !t->walk_short;
}

/* Queues one of the tracker's own children: an adopted orphan of the job, not a loader helper
 * of the static build (core/bridge.h), which is the tool's. */
static void push_own(void *user, int64_t pid)
{
    if (!rt_bridge_is_helper(pid))
        push(user, pid);
}

/* Queues the children of the tracker's own thread tid (wrapper mode). */
static void own_child_thread(rt_proctree *t, int64_t tid, void *user)
{
    (void)user;
    char rel[64];
    snprintf(rel, sizeof rel, "self/task/%lld/children", (long long)tid);
    int fd = rt_pt_open(t, rel);
    if (fd < 0) {
        if (fd != -ENOENT && fd != -ESRCH)
            t->walk_short = true;
        return;
    }
    read_children_fd(t, fd, push_own);
    close(fd);
}

void rt_pt_read_holder(rt_proctree *t)
{
    if (!t->holder_alive)
        return;
    rt_pidstat st;
    int rc = rt_pt_read_stat(t, &t->hp, &st);
    if (rc == RT_PT_UNREAD) {
        t->unread++; /* out of descriptors, or refused: read again at the next scan */
        return;
    }
    if (rc < 0) {
        t->holder_alive = false; /* gone: what it reaped stays as last read */
        unkeep_all(t, &t->hp);
        return;
    }
    if (!t->holder_based) {
        t->holder_based = true;
        t->hp.starttime = st.starttime; /* a file opened again later must be this process's */
        t->holder_base_ut = st.cutime;
        t->holder_base_st = st.cstime;
    }
    t->hp.nthreads = st.num_threads;
    uint64_t ut = st.cutime > t->holder_base_ut ? st.cutime - t->holder_base_ut : 0;
    uint64_t stm = st.cstime > t->holder_base_st ? st.cstime - t->holder_base_st : 0;
    uint64_t ut_ns = (uint64_t)((double)ut * t->ns_per_tick + 0.5);
    uint64_t st_ns = (uint64_t)((double)stm * t->ns_per_tick + 0.5);
    t->holder_ut_ns = ut_ns > t->holder_ut_ns ? ut_ns : t->holder_ut_ns;
    t->holder_st_ns = st_ns > t->holder_st_ns ? st_ns : t->holder_st_ns;
    t->hp.read_seq = ++t->seq;
}

void rt_proctree_set_holder(rt_proctree *t, int64_t pid)
{
    t->holder = t->hp.pid = pid > 0 ? pid : 0;
    t->holder_alive = pid > 0;
    t->self = (int64_t)getpid();
}

/* Adds I/O counters to an account. */
static void add_io(rt_tree_totals *acc, const rt_pidio *io)
{
    acc->read_bytes += io->read_bytes;
    acc->write_bytes += io->write_bytes;
    acc->cancelled_write_bytes += io->cancelled_write_bytes;
}

/* Closes the last observation of p, which left the tree, into the departed account. */
static void add_departed(rt_proctree *t, const proc *p)
{
    t->departed.utime_ns += p->ut_ns;
    t->departed.stime_ns += p->st_ns;
    add_io(&t->departed, &p->io);
}

/* Adds p's last observation (all but PSS, which rt_pt_pss_pass adds) to the totals, and p to
 * the live list. */
static void add_observed(rt_proctree *t, const proc *p, rt_tree_totals *out)
{
    if (rt_grow(&t->live, &t->live_cap, t->nlive + 1, sizeof *t->live) == 0)
        t->live[t->nlive++] = p->pid;
    /* the exposed pass's ordering grows with the live list, in the walk that grew it: the pass
     * (rt_proctree_reread_exposed) comes when the machine's page tables move, maybe long after
     * the tree has its size, and then allocates nothing (a failure here: it grows it itself) */
    if (t->order_cap < t->live_cap)
        (void)rt_grow_uninit(&t->order, &t->order_cap, t->live_cap, sizeof *t->order);
    out->utime_ns += p->ut_ns;
    out->stime_ns += p->st_ns;
    add_io(out, &p->io);
    if (!p->vm_shared) /* else its parent's memory, counted there */
        out->rss_kib += p->rss_pages * (uint64_t)t->page_kib;
    out->vms_bytes += p->vsize_bytes; /* summed as Snakemake's max_vms sums it */
    out->threads += p->nthreads > 0 ? p->nthreads : 0;
    if (p->pid != t->root) {
        if (!p->zombie) /* live descendants: one that exited is no longer the job's running part */
            out->children++;
    } else if (t->root_own_ns == RT_NULL_U64 || p->own_ns > t->root_own_ns)
        t->root_own_ns = p->own_ns;
    out->processes++;
    if (!p->zombie)
        out->running++;
}

/* The walk reads each process (the quick path skips a sleeping one): the root's descendants
 * first, parents before children, then the members of the last scan not found through them.
 * rt_pt_settle() then makes the readings consistent, the live ones are summed, and the PSS
 * pass decides, per live process, whether its PSS is re-read (see rt_pt_pss_pass). */
int rt_proctree_scan(rt_proctree *t, double mono, rt_tree_totals *out)
{
    unsigned prev = t->gen++;
    t->qlen = 0;
    t->unread = 0;
    t->wait_ns = t->wait_run_ns = 0;
    rt_pt_close_light(t);
    rt_pt_fd_budget(t);
    if (t->root > 0)
        push(t, t->root);
    if (t->own_children && !t->root_only) {
        t->walk_short = false;
        if (!list_threads(t, "self", own_child_thread, NULL) || t->walk_short)
            t->unread++; /* the tracker's own children (adopted orphans) may be missing */
    }
    if (t->holder > 0 && !t->root_only) {
        /* the holder first, then its children: a child seen alive after this reading is not
         * in what it reaped yet (the settle keeps that so; proctree_settle.c) */
        rt_pt_read_holder(t);
        if (t->holder_alive && !walk_children(t, &t->hp))
            t->unread++; /* the holder's children (the node's other tasks) may be missing */
    }

    memset(out, 0, sizeof *out);
    out->root_alive = false;
    t->nlive = 0;
    bool members_queued = t->root_only;
    for (size_t qi = 0;; qi++) {
        if (qi == t->qlen && !members_queued) {
            members_queued = true; /* members seen last time stay members (daemons too) */
            for (size_t i = 0; i < t->nprocs; i++)
                if (t->procs[i].used && t->procs[i].gen == prev && !t->procs[i].reaped)
                    push(t, t->procs[i].pid);
        }
        if (qi == t->qlen)
            break;
        int64_t pid = t->queue[qi];
        proc *p = rt_pt_lookup(t, pid);
        if (p && (p->gen == t->gen || p->reaped))
            continue;
        bool fresh = !p;
        if (fresh && !(p = track(t, pid)))
            continue;
        /* Quick path: a single-threaded process that has not run since its last full read
         * cannot have changed its CPU time, I/O or children; a full read still comes at least
         * every pss_max_age seconds (RSS can shrink under reclaim without it running). One
         * that has slept through IDLE_SKIP_AFTER checks is only looked at every other scan
         * (spread by pid): what it does meanwhile is counted one scan later, never lost. */
        bool recent = !fresh && !t->read_all && p->nthreads == 1 && mono >= p->full_mono &&
                      mono - p->full_mono < rt_pt_max_age(t, p);
        bool skip = recent && pid != t->root && p->idle_checks >= IDLE_SKIP_AFTER && ((t->gen ^ (unsigned)pid) & 1u);
        uint64_t run_ns = p->run_ns;
        int run_rc = skip ? 0 : rt_pt_read_run_ns(t, p, &run_ns);
        bool have_run = run_rc == 0;
        if (recent && have_run && run_ns == p->run_ns) {
            p->io_moved = false; /* it has not run: its I/O cannot have grown */
            if (!skip) {
                p->alive_seq = ++t->seq; /* its schedstat still reads */
                if (p->idle_checks < IDLE_SKIP_AFTER)
                    p->idle_checks++;
            }
            p->gen = t->gen; /* as it was: a zombie stays one, a live root has not exited */
            for (size_t k = 0; k < p->nkids && !t->root_only; k++)
                push(t, p->kids[k]);
            continue;
        }
        if (!fresh && run_rc == RT_PT_GONE) {
            p->gone_seq = ++t->seq;
            continue; /* gone */
        }
        rt_pidstat st;
        rt_pidio io = {0};
        bool io_ok;
        int rc = rt_pt_read_stat_io(t, p, &st, &io, &io_ok);
        if (rc == RT_PT_UNREAD) {
            /* there, but not to be read now: a member keeps its last reading (never a smaller
             * total) and its children as last seen; the sample says the tree is short */
            if (fresh) {
                t->unread++;
                drop(t, p);
                continue;
            }
            rt_pt_unread(t, p);
            p->gen = t->gen;
            for (size_t k = 0; k < p->nkids && !t->root_only; k++)
                push(t, p->kids[k]);
            continue;
        }
        if (rc < 0) {
            if (fresh)
                drop(t, p); /* vanished before we could look: its time is in its parent's */
            else
                p->gone_seq = ++t->seq;
            continue;
        }
        if (pid == t->root) {
            if (t->root_start == 0 && !t->root_seen)
                t->root_start = st.starttime;
            else if (st.starttime != t->root_start)
                continue; /* not our root: the pid was reused */
            t->root_seen = true;
        }
        if (fresh)
            p->starttime = st.starttime;
        rt_jobmounts_see(t->mounts, pid); /* a mount namespace of its own (since it last ran)? */
        p->read_seq = p->alive_seq = ++t->seq;
        p->gen = t->gen;
        p->run_ns = run_ns;
        p->full_mono = mono;
        p->idle_checks = 0;
        bool changed = fresh, faulted = false; /* joined the tree, became a zombie, faulted */
        rt_pt_observe(t, p, &st, &io, io_ok, &changed, &faulted);
        if (p->io_moved && t->nlight < RT_PROCTREE_IO_MOVED)
            t->light[t->nlight++] = (io_light){.slot = (size_t)(p - t->procs), .fd = -1};
        if (st.state != 'Z' && !t->root_only) {
            if (!walk_children(t, p))
                rt_pt_unread(t, p); /* its new children may be missing, and theirs */
        } else {
            p->nkids = 0;
        }
        if (changed || faulted)
            rt_pt_mark_family(t, p);
    }
    t->read_all = false;
    if (!t->root_only) {
        rt_pt_settle(t, prev);
        rt_pt_shared_vm(t);
    }
    bool io_ok = true;
    for (size_t i = 0; i < t->nprocs; i++) {
        proc *p = &t->procs[i];
        if (!p->used || p->gen != t->gen)
            continue;
        add_observed(t, p, out);
        if (p->ign_chld && !p->unwaited) {
            p->unwaited = true; /* its children go to the kernel, not to its cutime */
            t->unwaited_parents++;
        }
        io_ok = io_ok && p->io_ok;
        if (p->pid == t->root)
            out->root_alive = !p->zombie;
    }

    rt_pt_take_exits(t); /* before the entries of the processes gone are closed and dropped */
    /* processes seen before and gone now: closed by the tracker with rusage already, reaped
     * inside the tree (their time went up into a reaper's counters), or gone elsewhere (with
     * what their exit records tell they ran since their last reading) */
    for (size_t i = 0; i < t->nprocs; i++) {
        proc *p = &t->procs[i];
        if (!p->used || p->gen != prev)
            continue;
        rt_pt_mark_family(t, p); /* left the tree */
        bool held = false;
        if (!p->reaped && !rt_pt_carried(t, p, &held)) {
            add_departed(t, p);
            rt_pt_exit_rest(t, p);
        } else if (held) {
            add_io(&t->departed, &p->io); /* its time is in what the holder reaped */
        }
    }
    for (size_t i = 0; i < t->nprocs; i++)
        if (t->procs[i].used && t->procs[i].gen != t->gen)
            drop(t, &t->procs[i]);

    out->utime_ns += t->departed.utime_ns + t->holder_ut_ns;
    out->stime_ns += t->departed.stime_ns + t->holder_st_ns;
    out->read_bytes += t->departed.read_bytes;
    out->write_bytes += t->departed.write_bytes;
    out->cancelled_write_bytes += t->departed.cancelled_write_bytes;
    out->io_ok = io_ok;
    /* the light I/O pass's processes: their base now, so that the passes count from the walk */
    for (size_t i = 0; t->light_on && i < t->nlight; i++)
        rt_pt_read_light(t, &t->light[i]);
    t->files_kib = rt_jobmounts_kib(t->mounts);
    rt_pt_pss_pass(t, mono, out);
    if (out->rss_kib > t->rss_peak_kib)
        t->rss_peak_kib = out->rss_kib;
    out->rss_peak_kib = t->rss_peak_kib;
    out->rss_hwm_kib = t->rss_hwm_kib;
    if (t->rss_hwm_kib > t->rss_hwm_tree_kib)
        t->rss_hwm_tree_kib = t->rss_hwm_kib;
    out->rss_hwm_tree_kib = t->rss_hwm_tree_kib;
    out->root_own_ns = t->root_own_ns;
    out->unread = t->unread;
    out->wait_ns = t->wait_ns;
    out->wait_run_ns = t->wait_run_ns;
    t->scanned = true;
    out->exits_seen = rt_proctree_counts_exits(t) ? t->exits_seen : -1;
    out->unwaited_parents = t->unwaited_parents;
    return 0;
}

ssize_t rt_pt_peek_read(rt_proctree *t, const proc *p, int kept, const char *rel)
{
    if (kept >= 0)
        return rt_pread_single(kept, t->buf, sizeof t->buf);
    int fd = rt_pt_open_rel(t, p->pid, rel);
    if (fd < 0)
        return -1;
    ssize_t n = rt_pread_single(fd, t->buf, sizeof t->buf);
    close(fd);
    return n;
}

/* The own CPU (ns) of pid from the kernel's per-process CPU clock; false when it cannot be read. */
static bool process_clock_ns(int64_t pid, uint64_t *ns)
{
    clockid_t id;
    struct timespec ts;
    if (clock_getcpuclockid((pid_t)pid, &id) != 0 || clock_gettime(id, &ts) != 0)
        return false;
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return true;
}

int rt_proctree_peek(rt_proctree *t, rt_tree_peek *out)
{
    memset(out, 0, sizeof *out);
    out->io_ok = true;
    out->root_ns = out->root_exact_ns = RT_NULL_U64;
    out->exact_ok = strcmp(t->roots->proc, "/proc") == 0;
    out->exact_ns = t->departed.utime_ns + t->departed.stime_ns + t->holder_ut_ns + t->holder_st_ns;
    out->utime_ns = t->departed.utime_ns + t->holder_ut_ns;
    out->stime_ns = t->departed.stime_ns + t->holder_st_ns;
    out->read_bytes = t->departed.read_bytes;
    out->write_bytes = t->departed.write_bytes;
    for (size_t i = 0; i < t->nprocs; i++) {
        const proc *p = &t->procs[i];
        if (!p->used || p->gen != t->gen || p->reaped)
            continue;
        rt_pidstat st;
        ssize_t n = rt_pt_peek_read(t, p, p->stat_fd, "stat");
        if (n <= 0 || rt_pidstat_parse(t->buf, (size_t)n, &st) < 0 ||
            (p->stat_fd < 0 && p->starttime && st.starttime != p->starttime)) {
            out->missed++; /* gone since the scan (see the header) */
            continue;
        }
        uint64_t ut = st.utime + (t->root_only ? 0 : st.cutime), stm = st.stime + (t->root_only ? 0 : st.cstime);
        uint64_t ut_ns = (uint64_t)((double)ut * t->ns_per_tick + 0.5);
        uint64_t st_ns = (uint64_t)((double)stm * t->ns_per_tick + 0.5);
        /* never below what the scan read (a reading in between two states of an exit) */
        ut_ns = ut_ns > p->ut_ns ? ut_ns : p->ut_ns;
        st_ns = st_ns > p->st_ns ? st_ns : p->st_ns;
        out->utime_ns += ut_ns;
        out->stime_ns += st_ns;
        if (!p->vm_shared || rt_pt_mm_sig(&st) != p->mm_sig) /* shared at the scan, and still */
            out->rss_kib += st.rss_pages * (uint64_t)t->page_kib;
        uint64_t own = 0, reaped = t->root_only ? 0 : st.cutime + st.cstime;
        uint64_t exact = (uint64_t)((double)reaped * t->ns_per_tick + 0.5);
        if (out->exact_ok && process_clock_ns(p->pid, &own))
            exact += own;
        else
            out->exact_ok = false;
        out->exact_ns += exact;
        if (p->pid == t->root) {
            out->root_ns = ut_ns + st_ns;
            out->root_exact_ns = exact;
        }
        rt_pidio io = p->io;
        bool io_read = false;
        if (!p->io_gone && !p->io_none && (p->io_fd >= 0 || !p->io_denied)) {
            n = rt_pt_peek_read(t, p, p->io_fd, "io");
            io_read = n > 0 && rt_pidio_parse(t->buf, (size_t)n, &io) == 0;
        }
        if (!io_read)
            io = p->io; /* its last reading stands */
        out->io_ok = out->io_ok && (io_read || p->io_gone);
        out->read_bytes += io.read_bytes > p->io.read_bytes ? io.read_bytes : p->io.read_bytes;
        out->write_bytes += io.write_bytes > p->io.write_bytes ? io.write_bytes : p->io.write_bytes;
        out->read++;
    }
    uint64_t gone_ns = t->departed.utime_ns + t->departed.stime_ns + t->holder_ut_ns + t->holder_st_ns;
    return out->read > 0 || gone_ns > 0 ? 0 : -1;
}

int rt_proctree_reap(rt_proctree *t, int64_t pid, int *wstatus)
{
    /* the zombie's I/O counters include its own reaped children; read them before reaping */
    rt_pidio io = {0, 0, 0};
    proc *p = rt_pt_lookup(t, pid);
    ssize_t n = -1;
    if (p && p->io_fd >= 0)
        n = rt_pread_single(p->io_fd, t->buf, sizeof t->buf);
    else {
        char path[64];
        snprintf(path, sizeof path, "%lld/io", (long long)pid);
        n = rt_read_at(t->roots->proc_fd, path, t->buf, sizeof t->buf);
    }
    bool io_ok = n > 0 && rt_pidio_parse(t->buf, (size_t)n, &io) == 0;
    rt_pidstat st; /* the root's zombie: its own final time (below) */
    bool root_read = p && pid == t->root && !p->reaped && rt_pt_read_stat(t, p, &st) == 0;
    struct rusage ru;
    int status = 0;
    pid_t r;
    do {
        r = wait4((pid_t)pid, &status, WNOHANG, &ru);
    } while (r < 0 && errno == EINTR);
    if (r != (pid_t)pid)
        return -1;
    if (wstatus)
        *wstatus = status;
    /* the kernel's final figures: own time plus everything it reaped, to the microsecond */
    t->departed.utime_ns += (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000ull;
    t->departed.stime_ns += (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
    if (root_read) {
        /* the root's own final time: the rusage (its own and all it reaped, to the microsecond)
         * less what it reaped (its zombie's cutime + cstime), and never below its own ticks */
        double ru_ns = (double)ru.ru_utime.tv_sec * 1e9 + (double)ru.ru_utime.tv_usec * 1e3 +
                       (double)ru.ru_stime.tv_sec * 1e9 + (double)ru.ru_stime.tv_usec * 1e3;
        double own = fmax(ru_ns - (double)(st.cutime + st.cstime) * t->ns_per_tick,
                          (double)(st.utime + st.stime) * t->ns_per_tick);
        if (t->root_own_ns == RT_NULL_U64 || own > (double)t->root_own_ns)
            t->root_own_ns = (uint64_t)(own + 0.5);
    }
    if (io_ok)
        add_io(&t->departed, &io);
    else if (p)
        add_io(&t->departed, &p->io);
    /* its peak, even when no scan caught it (ru_maxrss is in KiB on Linux) */
    if (ru.ru_maxrss > 0 && (uint64_t)ru.ru_maxrss > t->rss_peak_kib)
        t->rss_peak_kib = (uint64_t)ru.ru_maxrss;
    if (ru.ru_maxrss > 0 && (uint64_t)ru.ru_maxrss > t->rss_hwm_kib)
        t->rss_hwm_kib = (uint64_t)ru.ru_maxrss; /* the most it, or any child it reaped, held */
    if (p)
        p->reaped = true;
    return 0;
}

rt_proctree *rt_proctree_new(const rt_roots *roots, int64_t root, bool own_children, const rt_logger *log,
                             long clk_tck, double pss_max_age_secs)
{
    rt_proctree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->roots = roots;
    rt_pt_set_vm_cmp_default(t);
    rt_pt_probe_init(t);
    if (log)
        t->log = *log;
    t->root = root;
    t->root_own_ns = RT_NULL_U64;
    t->own_children = own_children;
    t->hp.stat_fd = t->hp.io_fd = t->hp.sched_fd = -1;
    t->ns_per_tick = 1e9 / (double)(clk_tck > 0 ? clk_tck : 100);
    long page = sysconf(_SC_PAGESIZE);
    t->page_kib = page > 0 ? page / 1024 : 4;
    rt_buf_init(&t->list, 8u << 20);
    t->pss_max_age = pss_max_age_secs >= 0 ? pss_max_age_secs : 0;
    t->keep_max = RT_PROCTREE_KEEP_MAX;
    if (rt_pidmap_init(&t->index, 256) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

void rt_proctree_read_all_next(rt_proctree *t)
{
    t->read_all = true;
}

/* qsort's order for rt_proctree_reread_exposed: the most exposed first. */
static int more_exposed(const void *a, const void *b)
{
    uint64_t x = ((const exposed_ent *)a)->kib, y = ((const exposed_ent *)b)->kib;
    return x > y ? -1 : x < y;
}

size_t rt_proctree_reread_exposed(rt_proctree *t, double share)
{
    if (rt_grow_uninit(&t->order, &t->order_cap, t->nlive, sizeof *t->order) < 0) {
        for (size_t i = 0; i < t->nlive; i++) { /* no memory to order them: every one is due */
            proc *p = rt_pt_lookup(t, t->live[i]);
            if (p)
                p->sharers_due = true;
        }
        return t->nlive;
    }
    size_t n = 0;
    uint64_t left = 0, pss = 0;
    for (size_t i = 0; i < t->nlive; i++) {
        proc *p = rt_pt_lookup(t, t->live[i]);
        if (!p || p->zombie || p->vm_shared)
            continue;
        pss += p->pss_kib;
        if (p->exposed_kib > 0) {
            t->order[n++] = (exposed_ent){p->exposed_kib, p};
            left += p->exposed_kib;
        }
    }
    qsort(t->order, n, sizeof *t->order, more_exposed);
    double keep = share > 0 ? share * (double)pss : 0.0;
    size_t k = 0;
    while (k < n && (double)left > keep) {
        t->order[k].p->sharers_due = true;
        left -= t->order[k].kib;
        k++;
    }
    return k;
}

double rt_proctree_sharers_secs(rt_proctree *t)
{
    double s = t->sharers_secs;
    t->sharers_secs = 0;
    return s;
}

void rt_proctree_set_vm_cmp(rt_proctree *t, rt_proctree_vm_cmp fn, void *user)
{
    t->vm_cmp = fn;
    t->vm_cmp_user = user;
}

void rt_proctree_set_keep_max(rt_proctree *t, size_t n)
{
    t->keep_max = n;
    for (size_t i = t->nprocs; i-- > 0 && t->nkept > n;) /* the last ones taken in go first */
        if (t->procs[i].used)
            unkeep_all(t, &t->procs[i]);
}

void rt_proctree_set_root_only(rt_proctree *t)
{
    t->root_only = true;
}

void rt_proctree_set_pss_max_age(rt_proctree *t, double secs)
{
    t->pss_max_age = secs >= 0 ? secs : 0;
}

void rt_proctree_free(rt_proctree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nprocs; i++)
        if (t->procs[i].used) {
            unkeep_all(t, &t->procs[i]);
            free(t->procs[i].threads);
            free(t->procs[i].kids);
        }
    rt_pt_close_light(t);
    rt_pt_probe_free(t);
    rt_pt_exits_free(t);
    rt_jobmounts_free(t->mounts);
    unkeep_all(t, &t->hp);
    rt_pidmap_free(&t->index);
    rt_free_all(t->hp.threads, t->hp.kids, t->procs, t->free_list, t->queue, t->live, t->order);
    rt_buf_free(&t->list);
    free(t);
}

bool rt_proctree_has(rt_proctree *t, int64_t pid)
{
    const proc *p = rt_pt_lookup(t, pid);
    return p && p->gen == t->gen && !p->reaped;
}

const int64_t *rt_proctree_live(const rt_proctree *t, size_t *n)
{
    *n = t->nlive;
    return t->live;
}

bool rt_proctree_root_known(const rt_proctree *t)
{
    return t->root_seen;
}
