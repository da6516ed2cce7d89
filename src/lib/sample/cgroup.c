/* cgroup.c (sample) - the sampler's cgroup part (see cgroup.h): the group's raw reading
 * (source/cgroup.c) turned into the sample's rt_cgroup, counters since tracking began, the
 * interval's throttling and pressure from the previous reading, and the exclusive check. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "pressure.h"

#define MIB (1024.0 * 1024.0)

/* Whether the v2 "/" the process is in is a container's own group seen through a cgroup
 * namespace (Docker's default on v2: /proc/self/cgroup says "0::/"), not the machine's root:
 * the real root group has no cpu.max, memory.max or pids.max, a namespace's root has them. */
static bool namespace_root(rt_sample_ctx *c, const rt_cg_mounts *m)
{
    int fd = rt_cg_open_dir(&c->roots, m, RT_CG_UNIFIED, "/");
    if (fd < 0)
        return false;
    bool limits = faccessat(fd, "memory.max", F_OK, 0) == 0 || faccessat(fd, "cpu.max", F_OK, 0) == 0 ||
                  faccessat(fd, "pids.max", F_OK, 0) == 0;
    close(fd);
    return limits;
}

/* Leaves out of paths the hierarchies where the process is in the root group ("/"): a root
 * group's counters are the whole machine's (v2's root cpu.stat, v1's root cpuacct.usage), its
 * pressure the machine's, and it has no limits; it is no group of the job's. (The hybrid
 * layout often puts a process in a v1 memory group and the v2 root at once.) A v2 "/" that
 * is a cgroup namespace's root (a container's group) stays. Returns how many mounted
 * hierarchies remain. */
static int drop_root_groups(rt_sample_ctx *c, const rt_cg_mounts *m, rt_cg_paths *paths)
{
    int left = 0;
    for (int h = 0; h < RT_CG_NHIER; h++) {
        if (paths->has[h] && strcmp(paths->path[h], "/") == 0 && !(h == RT_CG_UNIFIED && namespace_root(c, m)))
            paths->has[h] = false;
        left += paths->has[h] && m->dir[h][0];
    }
    return left;
}

/* The group pid lives in (0: the caller, "self" of the proc root), in the hierarchies where
 * it is not in the root group; NULL when it has none that can be read, or is in the root group
 * everywhere (logged at debug level). */
static rt_cg_group *group_of_pid(rt_sample_ctx *c, int64_t pid)
{
    rt_cg_mounts *m = malloc(sizeof *m);
    rt_cg_paths *paths = malloc(sizeof *paths);
    rt_cg_group *g = NULL;
    char who[40] = "the tracker";
    if (pid > 0)
        (void)rt_pathf(who, sizeof who, "process %lld", (long long)pid); /* 28 bytes at most: fits */
    int n = m && paths ? rt_cg_locate(&c->roots, pid, m, paths) : -ENOMEM;
    if (n <= 0)
        rt_log(&c->log, RT_LOG_DEBUG, "%s: no cgroup to read (%s)", who,
               n < 0 ? strerror(-n) : "no group in a mounted hierarchy");
    else if (drop_root_groups(c, m, paths) == 0)
        rt_log(&c->log, RT_LOG_DEBUG, "%s is in the root cgroup: no group of its own to read", who);
    else
        g = rt_cg_group_open(&c->roots, m, paths, &c->log);
    free(m);
    free(paths);
    return g;
}

/* The part's whole state before its first reading (no group yet, nothing read, the rest zero),
 * for a group of its own (own), the process' own (self), or one whose members are checked
 * against the tree (check_members). */
static void part_start(rt_cg_part *p, bool own, bool self, bool check_members)
{
    /* an own group starts empty: its first interval counts from nothing */
    uint64_t before = own ? 0 : RT_NULL_U64;
    *p = (rt_cg_part){.own = own, .self = self, .check_members = check_members, .pids_seen = RT_NULL_I64,
                      .unreclaimable_peak = RT_NULL_U64, .last_charge = before, .last_peak = before,
                      .last_cache = before};
}

int rt_cg_part_open(rt_cg_part *p, rt_sample_ctx *c, const struct rt_job_cgroup *jg, int64_t pid, bool root_only)
{
    part_start(p, jg != NULL, false, !jg || root_only);
    if (jg)
        p->group = rt_cg_group_of_job(jg, &c->log);
    else if (pid > 0)
        p->group = group_of_pid(c, pid);
    if (p->group && p->check_members) {
        p->pids = malloc(RT_CG_EXCLUSIVE_MAX_PIDS * sizeof *p->pids);
        if (!p->pids) {
            rt_cg_group_free(p->group);
            p->group = NULL;
            return -1;
        }
    }
    return 0;
}

/* Whether every pid in the group belongs to tree: at most RT_CG_EXCLUSIVE_MAX_PIDS are
 * looked at (more: not exclusive); an empty group is exclusive (nothing foreign in it). */
static bool all_in_tree(rt_cg_part *p, rt_sample_ctx *c, rt_proctree *tree)
{
    /* every distinct path's members: a counter read from one hierarchy is the tree's only
     * when that hierarchy's group holds nothing else */
    for (int k = 0; k < rt_cg_group_memberships(p->group); k++) {
        long n = rt_cg_group_procs_at(p->group, k, &c->rbuf, p->pids, RT_CG_EXCLUSIVE_MAX_PIDS);
        if (n < 0 || n > RT_CG_EXCLUSIVE_MAX_PIDS)
            return false;
        for (long i = 0; i < n; i++)
            if (!rt_proctree_has(tree, p->pids[i]))
                return false;
    }
    return true;
}

void rt_cg_part_open_self(rt_cg_part *p, rt_sample_ctx *c)
{
    part_start(p, false, true, false);
    p->group = group_of_pid(c, 0);
}

void rt_cg_part_snapshot(rt_cg_part *p, rt_sample_ctx *c, rt_proctree *tree, double mono)
{
    p->have_cur = false;
    if (!p->group)
        return;
    p->exclusive = p->self ? false : p->check_members ? tree && all_in_tree(p, c, tree) : true;
    /* the unreclaimable memory is the job's only in a group that holds nothing else: memory.stat
     * (a few tens of lines) is read only then */
    rt_cg_group_read_memory_stat(p->group, p->exclusive);
    rt_cg_group_read_at(p->group, &c->rbuf, mono, &p->cur);
    p->have_cur = true;
    if (p->cur.pids != RT_NULL_I64 && (p->pids_seen == RT_NULL_I64 || p->cur.pids > p->pids_seen))
        p->pids_seen = p->cur.pids;
    if (!p->have_base) {
        p->base = p->cur;
        p->have_base = true;
    }
}

/* A counter since tracking began: the reading itself for an own group (made empty for the
 * command), else its growth since the first reading. RT_NULL_U64 when either lacks it. */
static uint64_t since(const rt_cg_part *p, uint64_t cur, uint64_t base)
{
    if (cur == RT_NULL_U64)
        return RT_NULL_U64;
    if (p->own)
        return cur;
    return base == RT_NULL_U64 ? RT_NULL_U64 : rt_delta_u64(cur, base);
}

/* The growth of a counter over the interval, RT_NULL_U64 when either reading lacks it. */
static uint64_t grew(uint64_t cur, uint64_t prev)
{
    return cur == RT_NULL_U64 || prev == RT_NULL_U64 ? RT_NULL_U64 : rt_delta_u64(cur, prev);
}

/* bytes in MiB; NaN for RT_NULL_U64. */
static double mib(uint64_t bytes)
{
    return bytes == RT_NULL_U64 ? NAN : (double)bytes / MIB;
}

/* a count of scale units (ns, usec) in seconds; NaN for RT_NULL_U64. */
static double secs(uint64_t v, double scale)
{
    return v == RT_NULL_U64 ? NAN : (double)v / scale;
}

/* The user share of the group's CPU: of this interval when it used any, else of everything
 * since tracking began; NaN when the layout splits nothing (v2 without user_usec, v1 without
 * cpuacct.usage_user). */
static double user_share(const rt_cg_part *p)
{
    const rt_cg_reading *r = &p->cur, *q = &p->prev;
    uint64_t du = p->have_prev ? grew(r->cpu_user_ns, q->cpu_user_ns) : RT_NULL_U64;
    uint64_t ds = p->have_prev ? grew(r->cpu_system_ns, q->cpu_system_ns) : RT_NULL_U64;
    if (du != RT_NULL_U64 && ds != RT_NULL_U64 && du + ds > 0)
        return (double)du / (double)(du + ds);
    uint64_t u = since(p, r->cpu_user_ns, p->base.cpu_user_ns), s = since(p, r->cpu_system_ns, p->base.cpu_system_ns);
    if (u != RT_NULL_U64 && s != RT_NULL_U64 && u + s > 0)
        return (double)u / (double)(u + s);
    return NAN;
}

/* a - b, or 0 below. */
static uint64_t less(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/* Whether the charge (or its peak) moved from a to b by RT_CG_WATCH_MOVE_MIN or 1/256 of the
 * charge, the more; a figure newly known or lost is a move. */
static bool moved_by(uint64_t a, uint64_t b)
{
    if (a == RT_NULL_U64 || b == RT_NULL_U64)
        return a != b;
    uint64_t d = a > b ? a - b : b - a, big = a > b ? a : b;
    return d >= RT_CG_WATCH_MOVE_MIN && d >= big / 256;
}

/* Raises p->unreclaimable_peak with the reading r (a sample's or the watch's): the charge now
 * less what the kernel could reclaim of it, and, when the kernel's peak charge rose since the
 * last reading above the charge now (a peak in between: an own group starts empty, so its
 * first interval counts from nothing), that peak less the page cache at its moment. That
 * cache is not known: cache that fell since the last reading (a reclaim, a deleted file) is
 * taken as there, which only makes the figure larger; cache that rose since may have come
 * before the peak or after it, and is taken as not there at the peak (the safe side: p->unsure
 * says how much of the peak that made). A peak within a move of the charge now (1 MiB, or
 * 1/256 of it: the kernel's charge batches, a buffer freed at the end of a burst of reading) is
 * now: exact. Remembers r as the last reading. */
static void raise_unreclaimable(rt_cg_part *p, const rt_cg_reading *r)
{
    uint64_t cache = r->memory_stat.reclaimable_bytes, charge = r->memory_bytes, peak = r->memory_peak_bytes;
    p->moved = moved_by(p->last_charge, charge) || moved_by(p->last_peak, peak);
    uint64_t last_cache = p->last_cache, last_peak = p->last_peak;
    p->last_charge = charge;
    if (peak != RT_NULL_U64)
        p->last_peak = peak;
    if (cache != RT_NULL_U64)
        p->last_cache = cache;
    if (charge == RT_NULL_U64 || cache == RT_NULL_U64)
        return;
    uint64_t need = less(charge, cache), unsure = 0;
    if (peak != RT_NULL_U64 && last_peak != RT_NULL_U64 && peak > last_peak) {
        uint64_t exact = less(peak, cache); /* with all of today's cache held at the peak */
        if (exact > need)
            need = exact;
        if (peak > charge && moved_by(peak, charge) && last_cache != RT_NULL_U64 && last_cache < cache &&
            less(peak, last_cache) > need) {
            unsure = less(peak, last_cache) - need;
            need = less(peak, last_cache);
        }
    }
    if (p->unreclaimable_peak == RT_NULL_U64 || need > p->unreclaimable_peak) {
        uint64_t was = p->unreclaimable_peak == RT_NULL_U64 ? 0 : p->unreclaimable_peak;
        /* what the safe side added above what was known already */
        p->unsure = unsure ? (need - unsure > was ? unsure : need - was) : 0;
        p->unreclaimable_peak = need;
    }
}

bool rt_cg_part_watchable(const rt_cg_part *p)
{
    return p->group && p->own && !p->check_members && p->have_cur && p->cur.memory_bytes != RT_NULL_U64 &&
           p->cur.memory_stat.reclaimable_bytes != RT_NULL_U64;
}

bool rt_cg_part_watch(rt_cg_part *p, rt_sample_ctx *c, double mono)
{
    if (!rt_cg_part_watchable(p))
        return false;
    rt_cg_reading r;
    rt_cg_group_read_memory(p->group, &c->rbuf, mono, &r);
    raise_unreclaimable(p, &r);
    return p->moved;
}

const rt_tree_group *rt_cg_part_delta(rt_cg_part *p, double elapsed)
{
    if (!p->have_cur)
        return NULL;
    const rt_cg_reading *r = &p->cur, *b = &p->base;
    rt_cgroup *o = &p->out;
    o->path = rt_cg_group_path(p->group);
    o->version = rt_cg_group_version(p->group);
    o->own = p->own;
    o->exclusive = p->exclusive;
    uint64_t cpu_ns = since(p, r->cpu_usage_ns, b->cpu_usage_ns);
    uint64_t rd = since(p, r->io_read_bytes, b->io_read_bytes), wr = since(p, r->io_write_bytes, b->io_write_bytes);
    o->cpu_secs_total = secs(cpu_ns, 1e9);
    o->memory_mib = mib(r->memory_bytes);
    o->memory_peak_mib = mib(r->memory_peak_bytes);
    raise_unreclaimable(p, r);
    o->memory_reclaimable_mib = mib(r->memory_stat.reclaimable_bytes);
    o->memory_unreclaimable_peak_mib = mib(p->unreclaimable_peak);
    o->memory_unreclaimable_unsure_mib = p->unreclaimable_peak == RT_NULL_U64 ? NAN : mib(p->unsure);
    o->memory_anon_mib = mib(r->memory_stat.anon_bytes);
    o->memory_file_mib = mib(r->memory_stat.file_bytes);
    o->memory_shmem_mib = mib(r->memory_stat.shmem_bytes);
    o->memory_refault_mib = mib(since(p, r->memory_stat.refault_file_bytes, b->memory_stat.refault_file_bytes));
    o->pids = r->pids;
    o->pids_peak = r->pids_peak != RT_NULL_I64 ? r->pids_peak : p->pids_seen;
    o->read_bytes_total = rd;
    o->write_bytes_total = wr;
    bool quota = r->cpu_quota_usec != RT_NULL_U64 && r->cpu_period_usec != RT_NULL_U64 && r->cpu_period_usec > 0;
    o->cpu_quota_cores = quota ? (double)r->cpu_quota_usec / (double)r->cpu_period_usec : NAN;
    o->cpu_period_secs = quota ? (double)r->cpu_period_usec / 1e6 : NAN;
    o->memory_limit_mib = mib(r->memory_limit_bytes);
    o->memory_high_mib = mib(r->memory_high_bytes);
    o->pids_limit = r->pids_limit;
    /* throttling: the group holding the quota may be an ancestor that ran long before the
     * job, so these are always counted from the first reading, even for an own group */
    o->cpu_periods = grew(r->cpu_periods, b->cpu_periods);
    o->cpu_throttled_periods = grew(r->cpu_throttled_periods, b->cpu_throttled_periods);
    o->cpu_throttled_secs = secs(grew(r->cpu_throttled_usec, b->cpu_throttled_usec), 1e6);
    uint64_t dper = p->have_prev ? grew(r->cpu_periods, p->prev.cpu_periods) : RT_NULL_U64;
    uint64_t dthr = p->have_prev ? grew(r->cpu_throttled_periods, p->prev.cpu_throttled_periods) : RT_NULL_U64;
    o->cpu_throttled_pct = dper != RT_NULL_U64 && dthr != RT_NULL_U64 && dper > 0
                               ? (dthr > dper ? 100.0 : (double)dthr / (double)dper * 100.0)
                               : NAN;
    o->oom_kills = since(p, r->oom_kills, b->oom_kills);
    o->memory_max_events = since(p, r->memory_max_events, b->memory_max_events);
    for (int k = 0; k < RT_PSI_N; k++)
        rt_pressure_fill(rt_psi_at(&o->pressure, k), &r->psi[k], &p->prev.psi[k], p->have_prev, elapsed);

    rt_tree_group *a = &p->auth;
    a->cgroup = o;
    a->exclusive = p->exclusive;
    a->cpu_ns = cpu_ns;
    a->user_share = user_share(p);
    a->read_bytes = rd;
    a->write_bytes = wr;
    return a;
}

uint64_t rt_cg_part_peek_cpu(rt_cg_part *p, rt_sample_ctx *c)
{
    if (!p->group || !p->have_cur || p->self || !p->exclusive)
        return RT_NULL_U64;
    return since(p, rt_cg_group_read_cpu(p->group, &c->rbuf), p->base.cpu_usage_ns);
}

void rt_cg_part_clock(const rt_cg_part *p, rt_tree_clock *out)
{
    const rt_cg_reading *r = &p->cur;
    out->group = p->have_cur && p->own && !p->check_members && r->cpu_usage_ns != RT_NULL_U64 &&
                 r->memory_bytes != RT_NULL_U64;
    out->pids = p->have_cur ? r->pids : RT_NULL_I64;
    /* what the processes' own memory follows: anonymous plus shared memory, else the charge */
    out->memory_bytes = !p->have_cur ? RT_NULL_U64
                        : r->memory_stat.anon_bytes != RT_NULL_U64 && r->memory_stat.shmem_bytes != RT_NULL_U64
                            ? r->memory_stat.anon_bytes + r->memory_stat.shmem_bytes
                            : r->memory_bytes;
}

void rt_cg_part_commit(rt_cg_part *p)
{
    if (!p->have_cur)
        return;
    p->prev = p->cur;
    p->have_prev = true;
}

void rt_cg_part_close(rt_cg_part *p)
{
    if (p->group)
        rt_cg_group_free(p->group);
    p->group = NULL;
    free(p->pids);
    p->pids = NULL;
}
