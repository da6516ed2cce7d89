/* proctree_probe.c - the sharers' probe (rt_proctree_probe_move): whether a process outside
 * the tree mapped or unmapped pages the tree shares, read at every sample. A page's share in
 * PSS is its size over its mapcount, which the kernel shows root for each page frame
 * (/proc/kpagecount, the frame of a process's page from /proc/PID/pagemap). After each walk
 * the probe takes a few pages spread over the file-backed mappings (shared files, SysV shm,
 * memfds, private file mappings) of the tree's most exposed processes, each file (device and
 * inode) in one process only, and their mapcounts; each sample reads those mapcounts again and
 * estimates how far the tree's PSS moved with them. Where the frames are hidden (not root), the
 * pagemap's own flag stands in: a page that one process alone maps is "exclusive"
 * (PM_MMAP_EXCLUSIVE; per folio for large ones), so a page's mapcount reads as 1 or 2 (two or
 * more): a sharer that comes to (leaves) pages the tree maps once shows, one that comes to pages
 * already shared does not; for those the sentinel, one probed process's smaps_rollup read at
 * every sample (its PSS of shared pages moves with every mapper more or fewer), within its own
 * budget. Over a fixture's /proc there is no probe and the page-tables rule of the sampler
 * stands. */
#define _GNU_SOURCE /* pread */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proctree_int.h"

/* pagemap's entry: present (bit 63), mapped by one process alone (bit 56, shown to any reader)
 * and the frame number (bits 0-54, 0 when hidden) */
#define PM_PRESENT (1ull << 63)
#define PM_MMAP_EXCLUSIVE (1ull << 56)
#define PM_PFN_MASK ((1ull << 55) - 1)

void rt_pt_probe_init(rt_proctree *t)
{
    pt_probe *pr = &t->probe;
    pr->kpc_fd = pr->sent_fd = -1;
    for (size_t k = 0; k < RT_PT_PROBE_PROCS; k++)
        pr->procs[k].fd = -1;
    /* none over a fixture's /proc: its pids are not this machine's */
    pr->off = strcmp(t->roots->proc, "/proc") != 0;
}

/* Forgets the probed processes and pages (closes their pagemap files). */
static void disarm(pt_probe *pr)
{
    for (size_t k = 0; k < pr->nprocs; k++)
        rt_close(&pr->procs[k].fd);
    rt_close(&pr->sent_fd);
    pr->nprocs = pr->npages = 0;
}

void rt_pt_probe_free(rt_proctree *t)
{
    disarm(&t->probe);
    rt_close(&t->probe.kpc_fd);
}

/* The mapcount of the page at vaddr of the probed process fd's (0: not present, or its pagemap
 * no longer reads: the process is gone or unmapped it); where the frames are hidden (excl: no
 * kpagecount, or a frame read 0, no CAP_SYS_ADMIN), 1 when it alone maps the page, else 2. */
static uint64_t mapcount(pt_probe *pr, int fd, uint64_t vaddr, long page)
{
    uint64_t e, n;
    if (fd < 0 || pread(fd, &e, sizeof e, (off_t)(vaddr / (uint64_t)page * sizeof e)) != (ssize_t)sizeof e ||
        !(e & PM_PRESENT))
        return 0;
    if ((e & PM_PFN_MASK) == 0 && !pr->excl) { /* root without CAP_SYS_ADMIN (a container's) */
        pr->excl = true;
        rt_close(&pr->kpc_fd);
    }
    if (pr->excl)
        return e & PM_MMAP_EXCLUSIVE ? 1 : 2;
    if (pread(pr->kpc_fd, &n, sizeof n, (off_t)((e & PM_PFN_MASK) * sizeof n)) != (ssize_t)sizeof n)
        return 0;
    return n;
}

/* Reads the mapcounts of every stride-th probed page from first on into their now. */
static void read_now(rt_proctree *t, size_t first, size_t stride)
{
    pt_probe *pr = &t->probe;
    long page = t->page_kib * 1024;
    for (size_t k = first; k < pr->npages; k += stride) {
        probe_page *g = &pr->pages[k];
        g->now = mapcount(pr, pr->procs[g->who].fd, g->vaddr, page);
    }
}

/* The sentinel's PSS of shared pages now (KiB: Pss less the private pages), or -1 when its
 * rollup no longer reads (the process is gone). */
static double sentinel_read(rt_proctree *t)
{
    ssize_t n = rt_pread_single(t->probe.sent_fd, t->buf, sizeof t->buf);
    rt_rollup r;
    if (n <= 0 || rt_smaps_rollup_parse(t->buf, (size_t)n, &r) != 0)
        return -1.0;
    return r.split_ok && r.private_kib <= r.pss_kib ? (double)(r.pss_kib - r.private_kib) : (double)r.pss_kib;
}

/* How far the tree's PSS moved with the sentinel's (KiB: its move times the tree's processes
 * with memory, each of which may map the same pages), reading it when its credit allows; 0
 * without a sentinel or credit. */
static double sentinel_move(rt_proctree *t)
{
    pt_probe *pr = &t->probe;
    if (pr->sent_fd < 0)
        return 0.0;
    double mono = rt_mono_secs();
    double cap = RT_PT_SENTINEL_BURST * pr->sent_cost;
    if (pr->sent_mono > 0 && mono > pr->sent_mono)
        pr->sent_credit = fmin(cap, pr->sent_credit + (mono - pr->sent_mono) * RT_PT_SENTINEL_BUDGET);
    pr->sent_mono = mono;
    if (pr->sent_credit < 0)
        return pr->sent_have_now ? fabs(pr->sent_now - pr->sent_base) * (double)pr->members : 0.0;
    double before = rt_thread_cpu_secs();
    double v = sentinel_read(t);
    double cost = rt_thread_cpu_secs() - before;
    pr->sent_cost = cost > 0 ? cost : pr->sent_cost;
    pr->sent_credit -= cost > 0 ? cost : 0.0;
    pr->sent_reads++;
    if (v < 0) {
        rt_close(&pr->sent_fd);
        return 0.0;
    }
    pr->sent_now = v;
    pr->sent_have_now = true;
    return fabs(v - pr->sent_base) * (double)pr->members;
}

double rt_proctree_probe_move(rt_proctree *t)
{
    pt_probe *pr = &t->probe;
    /* a quarter of the pages at each sample, in turns (every RT_PT_PROBE_TURNS-th: still
     * spread over the mappings) */
    size_t first = pr->turn;
    pr->turn = (pr->turn + 1) % RT_PT_PROBE_TURNS;
    if (pr->off || pr->npages == 0)
        return -1.0;
    read_now(t, first, RT_PT_PROBE_TURNS);
    double kib = 0.0, now = 0.0;
    size_t nread = 0;
    for (size_t k = 0; k < pr->npages; k++) {
        const probe_page *g = &pr->pages[k];
        double was = kib;
        uint64_t hi = g->now > g->base ? g->now : g->base, lo = g->now > g->base ? g->base : g->now;
        /* the tree's mappers of the page: at most the fewer of the two counts and the tree's
         * processes (a library's page mapped by 300 processes of the machine moves a 1-process
         * tree's share by 1/300 - 1/301 of it when one more maps it), each moved by 1/lo - 1/hi */
        if (hi > lo && lo == 0) {
            kib += g->span_kib / (double)hi; /* the probed process itself faulted it in or let it go */
        } else if (hi > lo) {
            double mine = (double)(lo < pr->members ? lo : pr->members);
            kib += g->span_kib * mine * (double)(hi - lo) / ((double)lo * (double)hi);
        }
        if (k % RT_PT_PROBE_TURNS == first) {
            now += kib - was;
            nread++;
        }
    }
    pr->have_now = true;
    /* every page as last read, or the pages read now standing for all of them, whichever
     * moved more: a move of the whole mapping shows at once, a part of it within the turns */
    double scaled = nread ? now * (double)pr->npages / (double)nread : 0.0;
    /* and the sentinel's, where there is one: what the pages' flags cannot see */
    return fmax(fmax(scaled, kib), sentinel_move(t));
}

/* Whether the probed processes are still those of top[0..n), in any order (the most exposed of
 * a few alike swap places from walk to walk), as they were: the same start times, and virtual
 * sizes within a probed page's stretch or 1 MiB, whichever is more (a mapping made or dropped
 * that could hold a page of the probe; a heap's growth is not one). */
static bool same_procs(const pt_probe *pr, proc *const *top, size_t n)
{
    if (n != pr->nprocs)
        return false;
    double slack = pr->total_kib / RT_PT_PROBE_PAGES * 1024.0;
    if (slack < 1048576.0)
        slack = 1048576.0;
    for (size_t k = 0; k < n; k++) {
        const probe_proc *q = NULL;
        for (size_t j = 0; j < pr->nprocs && !q; j++)
            q = pr->procs[j].pid == top[k]->pid ? &pr->procs[j] : NULL;
        if (!q || q->starttime != top[k]->starttime || fabs((double)q->vsize - (double)top[k]->vsize_bytes) >= slack)
            return false;
    }
    return true;
}

/* Adds the file-backed mappings of the process pr->procs[who] to vmas (whose dev+inode no
 * earlier process had: seen[0..*nseen)), from its maps file. */
static void add_vmas(rt_proctree *t, unsigned who, probe_vma *vmas, size_t *nvmas, uint64_t (*seen)[2], size_t *nseen)
{
    int fd = rt_pt_open_rel(t, t->probe.procs[who].pid, "maps");
    if (fd < 0)
        return;
    ssize_t n = rt_read_fd_grow(fd, &t->list, RT_READ_TO_EOF);
    close(fd);
    if (n <= 0)
        return;
    size_t first = *nseen;
    for (char *line = t->list.data, *end = t->list.data + n; line < end;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (nl)
            *nl = '\0';
        uint64_t start, stop, off, inode;
        unsigned maj, mnr;
        char perms[8];
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64, &start, &stop, perms, &off, &maj,
                   &mnr, &inode) == 7 &&
            inode != 0 && stop > start) {
            uint64_t dev = ((uint64_t)maj << 32) | mnr;
            bool dup = false;
            for (size_t k = 0; k < first && !dup; k++)
                dup = seen[k][0] == dev && seen[k][1] == inode;
            if (!dup) {
                if (*nseen < RT_PT_PROBE_VMAS) {
                    seen[*nseen][0] = dev;
                    seen[*nseen][1] = inode;
                    (*nseen)++;
                }
                if (*nvmas < RT_PT_PROBE_VMAS) {
                    vmas[(*nvmas)++] = (probe_vma){start, stop, who};
                } else { /* full: this one takes the place of the smallest, when larger */
                    size_t s = 0;
                    for (size_t k = 1; k < *nvmas; k++)
                        if (vmas[k].end - vmas[k].start < vmas[s].end - vmas[s].start)
                            s = k;
                    if (stop - start > vmas[s].end - vmas[s].start)
                        vmas[s] = (probe_vma){start, stop, who};
                }
            }
        }
        line = nl ? nl + 1 : end;
    }
}

/* Takes the probe's processes (top[0..n)) and spreads RT_PT_PROBE_PAGES pages evenly over
 * their file-backed mappings; each page stands for its stretch of them (span_kib). */
static void choose(rt_proctree *t, proc *const *top, size_t n)
{
    pt_probe *pr = &t->probe;
    disarm(pr);
    probe_vma *vmas = pr->vmas;
    uint64_t(*seen)[2] = pr->seen;
    size_t nvmas = 0, nseen = 0;
    for (size_t k = 0; k < n; k++) {
        pr->procs[k] = (probe_proc){top[k]->pid, top[k]->starttime, top[k]->vsize_bytes, -1};
        pr->nprocs = k + 1;
        add_vmas(t, (unsigned)k, vmas, &nvmas, seen, &nseen);
    }
    uint64_t total = 0;
    for (size_t k = 0; k < nvmas; k++)
        total += vmas[k].end - vmas[k].start;
    pr->total_kib = (double)total / 1024.0;
    if (total == 0)
        return;
    double step = (double)total / RT_PT_PROBE_PAGES, at = step / 2;
    uint64_t passed = 0;
    uint64_t page = (uint64_t)t->page_kib * 1024;
    for (size_t k = 0; k < nvmas && pr->npages < RT_PT_PROBE_PAGES; k++) {
        uint64_t len = vmas[k].end - vmas[k].start;
        double span = (step < (double)len ? step : (double)len) / 1024.0;
        while (at < (double)(passed + len) && pr->npages < RT_PT_PROBE_PAGES) {
            uint64_t va = vmas[k].start + (uint64_t)(at - (double)passed);
            pr->pages[pr->npages++] = (probe_page){va - va % page, span, 0, 0, vmas[k].who};
            at += step;
        }
        passed += len;
    }
    /* each process's pagemap, kept open while it is probed */
    for (size_t k = 0; k < pr->nprocs; k++) {
        int fd = rt_pt_open_rel(t, pr->procs[k].pid, "pagemap");
        pr->procs[k].fd = fd >= 0 ? fd : -1;
    }
}

/* The sentinel (excl only): of the probed processes whose last rollup's shared pages an
 * outsider could move the tree's PSS through by RT_PT_PROBE_SHARE of pss_kib or more (one more
 * mapper of a page that m map moves each of the tree's mappers' share by 1/(m + 1) of it: the
 * process's PSS of shared pages over their mean mapcount plus one, that mapcount its RSS of
 * shared pages over that PSS, times the tree's processes with memory), the one of least RSS
 * (its rollup walks all its pages). Opens its rollup. */
static void sentinel_choose(rt_proctree *t, proc *const *top, size_t n, uint64_t pss_kib)
{
    pt_probe *pr = &t->probe;
    rt_close(&pr->sent_fd);
    size_t who = n;
    for (size_t k = 0; k < n; k++) {
        const proc *p = top[k];
        if (!p->pss_ok || !p->split_ok || p->private_kib >= p->pss_kib || p->shared_kib == 0)
            continue;
        double spss = (double)(p->pss_kib - p->private_kib), m = (double)p->shared_kib / spss;
        double could = spss / (m + 1.0) * (double)pr->members;
        if (could >= RT_PT_PROBE_SHARE * (double)pss_kib && (who == n || p->rss_pages < top[who]->rss_pages))
            who = k;
    }
    if (who == n)
        return;
    int fd = rt_pt_open_rel(t, top[who]->pid, "smaps_rollup");
    pr->sent_fd = fd >= 0 ? fd : -1;
    pr->sent_have_now = false;
    if (pr->sent_mono == 0)
        pr->sent_credit = 0; /* the first read is free; the budget then pays for the next */
}

uint64_t rt_proctree_probe_flags_only(rt_proctree *t)
{
    t->probe.excl = true;
    rt_close(&t->probe.kpc_fd);
    return t->probe.sent_reads;
}

void rt_proctree_probe_arm(rt_proctree *t, bool reread)
{
    pt_probe *pr = &t->probe;
    if (pr->off)
        return;
    if (pr->kpc_fd < 0 && !pr->excl) {
        pr->kpc_fd = rt_pt_open(t, "kpagecount");
        if (pr->kpc_fd < 0) {
            rt_log(&t->log, RT_LOG_DEBUG,
                   "sharers' probe: no /proc/kpagecount to read (not root): the pages' exclusive flags and a sentinel");
            pr->kpc_fd = -1;
            pr->excl = true;
        }
    }
    /* the most exposed live processes, most first; and the processes with memory */
    proc *top[RT_PT_PROBE_PROCS];
    size_t n = 0;
    uint64_t pss_kib = 0;
    pr->members = 0;
    for (size_t i = 0; i < t->nlive; i++) {
        proc *p = rt_pt_lookup(t, t->live[i]);
        if (!p || p->zombie || p->vm_shared)
            continue;
        pr->members++;
        pss_kib += p->pss_ok ? p->pss_kib : 0;
        if (p->exposed_kib == 0)
            continue;
        size_t at = n < RT_PT_PROBE_PROCS ? n++ : RT_PT_PROBE_PROCS;
        if (at == RT_PT_PROBE_PROCS) {
            if (p->exposed_kib <= top[n - 1]->exposed_kib)
                continue;
            at = n - 1;
        }
        while (at > 0 && top[at - 1]->exposed_kib < p->exposed_kib) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = p;
    }
    bool same = same_procs(pr, top, n) && pr->npages > 0;
    if (!same) {
        choose(t, top, n);
        pr->have_now = false;
    } else if (!reread) {
        return; /* the base stands: what moved since, below the rule's share, adds up */
    }
    /* (pages chosen anew after a walk that re-read nothing for sharers take their base now: what
     * the old pages had moved, below the rule's share, is let go) */
    /* the base: the mapcounts this sample's probe read before the walk (which then re-read the
     * exposed processes), and the other pages' read now (their last reading, an earlier turn's,
     * may be older than the walk's rollups: a move between the two would then hide the next
     * move back); all of them read now when this sample read none */
    if (pr->npages == 0)
        return;
    if (pr->have_now) {
        size_t last = (pr->turn + RT_PT_PROBE_TURNS - 1) % RT_PT_PROBE_TURNS;
        for (size_t k = 1; k < RT_PT_PROBE_TURNS; k++)
            read_now(t, (last + k) % RT_PT_PROBE_TURNS, RT_PT_PROBE_TURNS);
    } else {
        read_now(t, 0, 1);
    }
    for (size_t k = 0; k < pr->npages; k++)
        pr->pages[k].base = pr->pages[k].now;
    pr->have_now = false;
    if (!pr->excl)
        return;
    /* the sentinel's base likewise: as this sample read it, else now (the walk just re-read it) */
    if (!same || pr->sent_fd < 0)
        sentinel_choose(t, top, n, pss_kib);
    if (pr->sent_fd >= 0 && !pr->sent_have_now) {
        double v = sentinel_read(t);
        if (v < 0)
            rt_close(&pr->sent_fd);
        pr->sent_now = v;
    }
    pr->sent_base = pr->sent_now;
    pr->sent_have_now = false;
}
