/* proctree_settle.c - the process tree scan's consistency: a scan's total counts each
 * process's time exactly once although the readings are taken one after another while the
 * tree runs on. A child C and its parent R are consistent when either C was seen alive after
 * R's reading (R's cutime cannot hold C yet: the kernel adds C to it before C's files stop
 * reading) or C was seen gone before it (R's cutime holds C). The walk (proctree.c) reads
 * parents before their children; a reaper read before (or, on the quick path, long before)
 * its child was seen gone is read again after, and a child counted alive but not confirmed
 * after its parent's latest reading is looked at again (see rt_pt_settle). Every reading and
 * every finding carries a sequence number to order them. */
#include "proctree_int.h"

/* Whether the time of p, which vanished without the tracker reaping it, went into the
 * counters of a process still in the tree: its parent reaped it, and that parent is alive or
 * was itself reaped in the tree (parents that vanished in the same interval are followed up).
 * A parent that ignored SIGCHLD at its last reading reaped nothing: the kernel did, and the time
 * of such a child (and all it reaped) went nowhere.
 * The root's reaper is outside the tree (with --pid), and so is an unknown parent, but for the
 * holder while it lives (*held then set). Sets *alive to the live process holding it, or NULL
 * when the tracker's rusage (or the holder) does. */
static bool carried_by(rt_proctree *t, proc *p, proc **alive, bool *held)
{
    *alive = NULL;
    *held = false;
    for (int depth = 0; depth < 256; depth++) {
        if (p->pid == t->root)
            return false;
        proc *pp = rt_pt_lookup(t, p->ppid);
        if (!pp) {
            *held = t->holder > 0 && p->ppid == t->holder && t->holder_alive;
            return *held;
        }
        if (pp->ign_chld && !p->zombie)
            return false; /* the kernel reaped it without a wait: its time reached no one */
        if (pp->gen == t->gen)
            *alive = pp;
        if (pp->gen == t->gen || pp->reaped)
            return true;
        p = pp;
    }
    return false;
}

bool rt_pt_carried(rt_proctree *t, proc *p, bool *held)
{
    proc *alive;
    return carried_by(t, p, &alive, held);
}

/* Marks p, counted alive so far in this scan, gone: it leaves the tree with the processes
 * that vanished since the last scan (generation prev). */
static void found_gone(rt_proctree *t, proc *p, unsigned prev)
{
    p->gen = prev;
    p->gone_seq = ++t->seq;
}

/* Reads the live reaper r again after a child it holds was found gone: its cutime, cstime
 * and I/O counters hold the child now. */
static void reread(rt_proctree *t, proc *r, unsigned prev)
{
    uint64_t run_ns = r->run_ns;
    bool have_run = rt_pt_read_run_ns(t, r, &run_ns) == 0; /* before the stat, as in the walk */
    rt_pidstat st;
    rt_pidio io = {0};
    bool io_ok;
    int rc = rt_pt_read_stat_io(t, r, &st, &io, &io_ok);
    if (rc == RT_PT_UNREAD) {
        rt_pt_unread(t, r); /* not to be read now: its last reading stands */
        return;
    }
    if (rc < 0) {
        found_gone(t, r, prev);
        return;
    }
    if (have_run)
        r->run_ns = run_ns;
    r->read_seq = r->alive_seq = ++t->seq;
    bool changed = false, faulted = false;
    rt_pt_observe(t, r, &st, &io, io_ok, &changed, &faulted);
    if (changed || faulted)
        rt_pt_mark_family(t, r);
}

/* Makes the scan's readings consistent (see the top of this file): a live reaper read before
 * a child it holds was found gone is read again, and a child counted alive but not found alive
 * since its parent's latest reading is looked at again; the holder (outside the tree) is such a
 * reaper of its children in the tree. A child found gone then makes another round (each round
 * needs a process to have gone, so they end). */
void rt_pt_settle(rt_proctree *t, unsigned prev)
{
    for (int round = 0; round < 1024; round++) {
        bool again = false;
        for (size_t i = 0; i < t->nprocs; i++) {
            proc *c = &t->procs[i], *r;
            bool held;
            if (!c->used || c->gen != prev || c->reaped || !carried_by(t, c, &r, &held))
                continue;
            if (r && r->read_seq < c->gone_seq) {
                reread(t, r, prev);
                again = again || r->gen != t->gen;
            } else if (held && t->hp.read_seq < c->gone_seq) {
                rt_pt_read_holder(t);
                again = again || !t->holder_alive;
            }
        }
        for (size_t i = 0; i < t->nprocs; i++) {
            proc *k = &t->procs[i];
            if (!k->used || k->gen != t->gen || k->pid == t->root)
                continue;
            const proc *r = rt_pt_lookup(t, k->ppid);
            uint64_t reaper_seq; /* the latest reading of its reaper, in the tree or the holder */
            if (r && r->gen == t->gen)
                reaper_seq = r->read_seq;
            else if (!r && t->holder > 0 && k->ppid == t->holder && t->holder_alive)
                reaper_seq = t->hp.read_seq;
            else
                continue;
            if (k->alive_seq > reaper_seq)
                continue;
            rt_pidstat st;
            int rc = rt_pt_read_stat(t, k, &st);
            if (rc == 0) {
                k->alive_seq = ++t->seq;
            } else if (rc == RT_PT_GONE) {
                found_gone(t, k, prev);
                again = true;
            } else {
                rt_pt_unread(t, k); /* not to be read now: it stays as last read */
            }
        }
        if (!again)
            return;
    }
}
