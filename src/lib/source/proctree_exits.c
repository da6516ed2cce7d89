/* proctree_exits.c - the tree's processes that ended between two walks, from the kernel's exit
 * records (taskstats.c): which records are the tree's (a process it tracked, or one whose parent
 * is one of them or of the records: a process born and gone between walks), the peaks they
 * add to the walk's bound of what the tree held at once (rt_tree_totals.rss_hwm_tree_kib), and
 * the CPU of those whose time reached no process the tree counts (the kernel reaped them for a
 * parent that ignored SIGCHLD, or their reaper is outside the tree); and
 * what the job holds in files that no process maps (jobmounts.c), added to the same bound. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/bridge.h"
#include "proctree_int.h"

void rt_proctree_count_files(rt_proctree *t)
{
    if (!t->mounts)
        t->mounts = rt_jobmounts_new(t->roots, t->own_children); /* /dev/shm watched: a command's */
}

bool rt_proctree_counts_exits(const rt_proctree *t)
{
    return t->exits_scratch != NULL;
}

/* Whether pid is one of the tree's processes as this scan ends (alive now, or at the last
 * scan and gone since: its entry is dropped after the exits are taken). */
static bool member(rt_proctree *t, int64_t pid)
{
    return pid > 0 && (pid == t->root || rt_pt_lookup(t, pid) != NULL);
}

/* Whether the process tgid whose parent is ppid joins the tree (the parent a member, the tracker
 * taking in its own children but a loader helper of the static build's, or the holder's). A
 * helper reaped before its record is read counts as the job's: the safe side. */
static bool parent_in(rt_proctree *t, int64_t tgid, int64_t ppid)
{
    if (t->root_only)
        return false;
    return member(t, ppid) || (t->own_children && ppid == t->me && !rt_bridge_is_helper(tgid)) ||
           (t->holder > 0 && ppid == t->holder);
}

/* One process of the records taken: its peak, whether its end (not a thread's) came, its
 * parent and the CPU of its threads' records (the process's own: its reaped children are not in
 * them). */
typedef struct exited {
    int64_t tgid, ppid;
    uint64_t peak;
    uint64_t ut_ns, st_ns;
    bool ended;
} exited;

/* The records of one scan being taken: scratch kept in the tree between scans (grown, never
 * shrunk: a steady tree allocates nothing). */
typedef struct rt_pt_exits_scratch {
    bool *taken;
    exited *ps;
    size_t cap, nps;
    rt_pidmap by_tgid; /* tgid -> its entry in ps, emptied after each scan */
    bool map_ok;
} taking;

static bool room(taking *k, size_t n)
{
    if (!k->map_ok) {
        if (rt_pidmap_init(&k->by_tgid, 256) < 0)
            return false;
        k->map_ok = true;
    }
    if (n <= k->cap)
        return true;
    size_t cap = k->cap ? k->cap : 256;
    while (cap < n)
        cap *= 2;
    bool *taken = realloc(k->taken, cap * sizeof *taken);
    if (taken)
        k->taken = taken;
    exited *ps = realloc(k->ps, cap * sizeof *ps);
    if (ps)
        k->ps = ps;
    if (!taken || !ps)
        return false;
    k->cap = cap;
    return true;
}

static void take(taking *k, const rt_exit_rec *r, size_t i)
{
    k->taken[i] = true;
    size_t at = rt_pidmap_get(&k->by_tgid, r->tgid);
    if (at == RT_PIDMAP_NONE) {
        if (rt_pidmap_put(&k->by_tgid, r->tgid, k->nps) < 0)
            return;
        at = k->nps++;
        k->ps[at] = (exited){.tgid = r->tgid, .ppid = r->ppid};
    }
    exited *e = &k->ps[at];
    if (r->hiwater_rss_kib > e->peak)
        e->peak = r->hiwater_rss_kib; /* its threads' records tell the same memory's */
    e->ended = e->ended || r->group || r->pid == r->tgid;
    if (!r->group) { /* the group's record holds no CPU of its own: its threads' records do */
        uint64_t ut = r->utime_us * 1000u, st = r->stime_us * 1000u;
        if (r->run_ns > 0) {
            /* the scheduler's exact time, split as the ticks split it (as the kernel's own
             * figures of a process are: cputime_adjust); the ticks alone were 1.8% low over
             * eight children of 0.2 s each on a busy machine, 46 to 51 of 4 ms */
            uint64_t ticks = ut + st;
            ut = ticks ? (uint64_t)((double)r->run_ns * (double)ut / (double)ticks + 0.5) : r->run_ns;
            st = r->run_ns - (ut < r->run_ns ? ut : r->run_ns);
        }
        e->ut_ns += ut;
        e->st_ns += st;
        if (r->ppid > 0)
            e->ppid = r->ppid;
    }
}

/* Whether the CPU of e, a process of the records that no walk saw, reached no one the tree
 * counts. Up its parents (one of the records waited for its children, as every process does
 * unless it says otherwise to the kernel), the first the walks know decides: one that ignored
 * SIGCHLD had the kernel reap e's line without a wait (their CPU went nowhere); one alive at this
 * walk holds it in its cutime (now or at its next reading); one gone holds it only where its
 * own time was carried on to the tree (else its last reading, before e ended, did not hold it).
 * A parent the walks never knew: the tracker's own children or the holder's (their rusage counts
 * them). */
static bool escapes(rt_proctree *t, taking *k, const exited *e)
{
    for (int depth = 0; depth < 64; depth++) {
        proc *pp = rt_pt_lookup(t, e->ppid);
        if (pp) {
            bool held;
            if (pp->ign_chld)
                return true;
            return pp->gen != t->gen && !pp->reaped && !rt_pt_carried(t, pp, &held);
        }
        size_t at = rt_pidmap_get(&k->by_tgid, e->ppid);
        if (at == RT_PIDMAP_NONE || k->ps[at].tgid == e->tgid)
            return false;
        e = &k->ps[at];
    }
    return false;
}

void rt_pt_exit_rest(rt_proctree *t, const proc *p)
{
    uint64_t rec = p->exit_ut_ns + p->exit_st_ns;
    if (rec <= p->own_ns)
        return; /* no record (lost, not root), or no more than its last reading's */
    /* what it ran after its last reading, split as its records split it */
    double more = (double)(rec - p->own_ns), ut = more * (double)p->exit_ut_ns / (double)rec;
    t->departed.utime_ns += (uint64_t)(ut + 0.5);
    t->departed.stime_ns += (uint64_t)(more - ut + 0.5);
}

void rt_pt_take_exits(rt_proctree *t)
{
    t->exit_kib = 0;
    taking *k = t->exits_scratch; /* made with the listener (rt_proctree_count_exits) */
    if (!k || (!t->exits && !t->exits_fn))
        return; /* none, or stopped (rt_proctree_stop_exits) */
    const rt_exit_rec *r;
    size_t n;
    if (t->exits_fn)
        t->exits_fn(t->exits_user, &r, &n);
    else
        rt_taskstats_drain(t->exits, &r, &n);
    if (n == 0)
        return;
    if (!room(k, n))
        return;
    memset(k->taken, 0, n * sizeof *k->taken);
    k->nps = 0;
    /* the tree's: a member's record, then those whose parent is a member or a record taken (a
     * child and its parent both born and gone since the last walk), until none more joins; a
     * chain longer than the passes is cut there (rare: each pass takes a generation) */
    for (size_t i = 0; i < n; i++)
        if (member(t, r[i].tgid) || parent_in(t, r[i].tgid, r[i].ppid))
            take(k, &r[i], i);
    for (int pass = 0; pass < 8 && !t->root_only; pass++) {
        size_t before = k->nps;
        for (size_t i = 0; i < n; i++)
            if (!k->taken[i] && r[i].ppid > 0 && rt_pidmap_get(&k->by_tgid, r[i].ppid) != RT_PIDMAP_NONE)
                take(k, &r[i], i);
        if (k->nps == before)
            break;
    }
    /* the CPU: a tracked process's records wait in its entry until it is found gone (then, if
     * its time went nowhere, rt_pt_exit_rest adds what it ran after its last reading); one no
     * walk saw is added whole where its time went nowhere (escapes) */
    for (size_t i = 0; i < k->nps; i++) {
        const exited *e = &k->ps[i];
        proc *p = rt_pt_lookup(t, e->tgid);
        if (p) {
            p->exit_ut_ns += e->ut_ns;
            p->exit_st_ns += e->st_ns;
        } else if (escapes(t, k, e)) {
            t->departed.utime_ns += e->ut_ns;
            t->departed.stime_ns += e->st_ns;
        }
    }
    /* each process once, at its peak; one still alive in the walk counts there, unless its end
     * came after the walk read it (counted in both: the safe side) */
    for (size_t i = 0; i < k->nps; i++) {
        const exited *e = &k->ps[i];
        proc *p = rt_pt_lookup(t, e->tgid);
        bool alive = p && p->gen == t->gen && !p->zombie;
        if (e->peak > t->rss_hwm_kib)
            t->rss_hwm_kib = e->peak;
        rt_pidmap_del(&k->by_tgid, e->tgid); /* empty for the next scan */
        if (alive && !e->ended)
            continue; /* a thread's end: the process's memory is the walk's */
        t->exit_kib += e->peak;
        t->exits_seen += e->ended;
    }
}

void rt_pt_exits_free(rt_proctree *t)
{
    taking *k = t->exits_scratch;
    rt_taskstats_close(t->exits);
    t->exits = NULL;
    if (!k)
        return;
    if (k->map_ok)
        rt_pidmap_free(&k->by_tgid);
    free(k->taken);
    free(k->ps);
    free(k);
    t->exits_scratch = NULL;
}

void rt_proctree_count_exits(rt_proctree *t)
{
    if (t->exits || strcmp(t->roots->proc, "/proc") != 0)
        return; /* the kernel's pids are the live /proc's only */
    t->exits = rt_taskstats_open(&t->log);
    t->me = getpid();
    /* the scratch of a scan's records now, so that a steady tree allocates nothing */
    if (t->exits && !(t->exits_scratch = calloc(1, sizeof *t->exits_scratch)))
        rt_pt_exits_free(t);
    else if (t->exits && !room(t->exits_scratch, 256))
        rt_pt_exits_free(t);
}

void rt_proctree_set_exits_source(rt_proctree *t, rt_proctree_exits_fn fn, void *user)
{
    t->exits_fn = fn;
    t->exits_user = user;
    t->me = getpid();
    if (!t->exits_scratch && (t->exits_scratch = calloc(1, sizeof *t->exits_scratch)) &&
        !room(t->exits_scratch, 256))
        rt_pt_exits_free(t);
}

void rt_proctree_stop_exits(rt_proctree *t)
{
    if (!t->exits)
        return;
    rt_taskstats_close(t->exits);
    t->exits = NULL; /* the scratch stays: exits_seen is still reported */
}
