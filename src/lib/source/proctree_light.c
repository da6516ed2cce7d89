/* proctree_light.c - the process tree's light passes between scans: the I/O pass (see
 * rt_proctree_io_light: the processes whose I/O grew at the last scan's full read, each read
 * again through its main thread's own io file, from a base the scan takes (or, when it did not,
 * the first pass); the list is the scan's (proctree.c), made anew at each scan), and the waits'
 * pass (rt_proctree_waits_light: the live processes' kept schedstat files read again). */
#include <stdio.h>
#include <unistd.h>

#include "proctree_int.h"

/* Opens e's task/PID/io for the pass, making sure the pid is still the process the scan read:
 * its stat is read after the open (a pid cannot be reused while its process lives, so one
 * that still reads as the scan's process was that process at the open). */
static void open_light(rt_proctree *t, io_light *e, const proc *p)
{
    char rel[48];
    snprintf(rel, sizeof rel, "task/%lld/io", (long long)p->pid);
    int fd = rt_pt_open_rel(t, p->pid, rel);
    e->fd = -2;
    if (fd < 0)
        return;
    if (fd >= t->keep_below) {
        close(fd); /* kept past the tree's share of the descriptors: the walks alone count it */
        return;
    }
    rt_pidstat st;
    ssize_t n = rt_pt_peek_read(t, p, p->stat_fd, "stat");
    if (n <= 0 || rt_pidstat_parse(t->buf, (size_t)n, &st) < 0 || st.starttime != p->starttime) {
        close(fd);
        return;
    }
    e->fd = fd;
}

bool rt_pt_read_light(rt_proctree *t, io_light *e)
{
    const proc *p = &t->procs[e->slot];
    if (e->fd == -2)
        return false;
    if (!p->used || p->gen != t->gen || p->reaped || p->zombie || p->io_gone || p->io_none) {
        if (e->fd >= 0)
            close(e->fd);
        e->fd = -2; /* reaped or exiting: the next scan books the rest */
        return false;
    }
    if (e->fd == -1) {
        open_light(t, e, p);
        if (e->fd < 0)
            return false;
    }
    rt_pidio io;
    ssize_t len = rt_pread_single(e->fd, t->buf, sizeof t->buf);
    if (len <= 0 || rt_pidio_parse(t->buf, (size_t)len, &io) != 0) {
        close(e->fd); /* gone: what it did since is the next scan's */
        e->fd = -2;
        return false;
    }
    if (!e->based) {
        e->base_rd = io.read_bytes;
        e->base_wr = io.write_bytes;
        e->based = true;
    }
    if (io.read_bytes < e->base_rd || io.write_bytes < e->base_wr) {
        /* below its base: the pid's main thread is another thread's now (an exec from a
         * thread takes the pid over), whose counters are not the base's; its growth as last
         * read stands, the next scan counts the rest */
        close(e->fd);
        e->fd = -2;
        return false;
    }
    uint64_t r = rt_delta_u64(io.read_bytes, e->base_rd), w = rt_delta_u64(io.write_bytes, e->base_wr);
    e->grown_rd = r > e->grown_rd ? r : e->grown_rd;
    e->grown_wr = w > e->grown_wr ? w : e->grown_wr;
    return true;
}

void rt_pt_close_light(rt_proctree *t)
{
    for (size_t i = 0; i < t->nlight; i++)
        if (t->light[i].fd >= 0)
            close(t->light[i].fd);
    t->nlight = 0;
    t->light_next = 0;
}

void rt_proctree_io_light_on(rt_proctree *t, bool on)
{
    t->light_on = on;
}

int rt_proctree_io_light(rt_proctree *t, size_t max, uint64_t *read_grown, uint64_t *write_grown)
{
    *read_grown = *write_grown = 0;
    int n = 0;
    size_t next = t->light_next;
    for (size_t j = 0; j < t->nlight; j++) {
        /* from where the last pass stopped: with more entries than max, each is read in turn */
        size_t i = (t->light_next + j) % t->nlight;
        if ((size_t)n < max && rt_pt_read_light(t, &t->light[i])) {
            n++;
            next = (i + 1) % t->nlight;
        }
    }
    t->light_next = next;
    for (size_t i = 0; i < t->nlight; i++) {
        *read_grown += t->light[i].grown_rd;
        *write_grown += t->light[i].grown_wr;
    }
    return n;
}

int rt_proctree_waits_light(rt_proctree *t, size_t max, uint64_t *wait_ns, uint64_t *run_ns)
{
    *wait_ns = *run_ns = 0;
    if (t->nlive == 0 || t->nlive > max)
        return -1;
    t->wait_ns = t->wait_run_ns = 0;
    for (size_t i = 0; i < t->nlive; i++) {
        proc *p = rt_pt_lookup(t, t->live[i]);
        uint64_t run;
        if (p && !p->zombie && p->sched_fd >= 0) /* kept open by the scan: one pread, no open */
            (void)rt_pt_read_run_ns(t, p, &run);
    }
    *wait_ns = t->wait_ns;
    *run_ns = t->wait_run_ns;
    return 0;
}
