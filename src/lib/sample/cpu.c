/* cpu.c - the sampler's CPU part (see cpu.h): per-core ticks of /proc/stat, read through a
 * kept-open file, matched core by core (cores come and go with hotplug) and turned into
 * busy fractions; every machine-wide figure is the sum over the cores. The count of all
 * processes (the numbered entries of /proc) is kept beside it, walked again only when the
 * kernel's counters say it may have changed.
 *
 * Why the count can be carried (Linux's kernel/fork.c and kernel/exit.c): a process enters
 * /proc's listing when copy_process attaches its pid as a thread group's (PIDTYPE_TGID), and
 * copy_process counts every task it makes, threads and kernel threads too, in total_forks
 * (/proc/stat's `processes`) and nr_threads (/proc/loadavg's fourth field, after the slash),
 * and allocates its pid in the reader's namespace (the cursor /proc/loadavg's last field
 * shows). A process leaves the listing only when __unhash_process detaches that pid, and that
 * lowers nr_threads; nothing else raises it. So when `processes`, nr_threads and the last pid
 * all read as they did right before a walk, nothing forked since then (forks and the last pid
 * only grow; the last pid wraps only after pid_max forks) and, with no fork, nr_threads can
 * only have fallen, so no task was released either: the walk's count still holds, exactly.
 * Anything else (a thread exiting, an exec by a thread, a fork) counts again. The one thing
 * that changes a listing without a fork or a release is procfs's hidepid=invisible or
 * ptraceable (a process's visibility follows its credentials): there every sample walks.
 *
 * When the counters moved, the walk (0.3 µs a process warm, 1-2.5 µs in a sample's cold
 * caches: 150-200 µs at 80 processes, about 10 ms at 10,000) is taken within a budget: a token
 * bucket of RT_CPU_WALK_SHARE of a core beyond a burst of RT_CPU_WALK_BURST_SECS. While a
 * machine forks or exits without pause and the budget is spent, the sample carries the last
 * count: stale, by at most the time the budget takes to pay for a walk (about 4-8 s at 280
 * processes, 3 minutes at 10,000); walks_deferred counts those samples. The share is what
 * keeps the tool's whole-machine sample near vmstat's cost on a busy machine; a machine whose
 * processes neither start nor end never walks after the first sample. Without /proc/loadavg
 * or the `processes` line (a fixture proc root), every sample walks. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "cpu.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* Whether the token [t, t+n) is s. */
static bool tok_is(const char *t, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(t, s, n) == 0;
}

bool rt_mountinfo_hides_pids(const char *text, size_t len, const char *dev)
{
    bool found = false, hides = false;
    const char *q = text, *end = text + len, *line, *le;
    while (rt_next_line(&q, end, &line, &le)) {
        /* ID PARENT MAJ:MIN ROOT MOUNT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTS */
        const char *t, *p = line;
        size_t tl;
        int i = 0, after = 0;
        bool past = false;
        while (rt_next_token(&p, le, &t, &tl)) {
            i++;
            if (i == 3 && !tok_is(t, tl, dev))
                break; /* another file system's mount */
            if (!past) {
                past = i > 6 && tok_is(t, tl, "-");
                continue;
            }
            after++;
            if (after == 1 && !tok_is(t, tl, "proc"))
                break;
            found |= after == 1;
            if (after != 3)
                continue;
            for (const char *o = t, *oe; o < t + tl; o = oe + 1) { /* rw,nosuid,hidepid=invisible */
                oe = memchr(o, ',', (size_t)(t + tl - o));
                if (!oe)
                    oe = t + tl;
                if ((size_t)(oe - o) > 8 && memcmp(o, "hidepid=", 8) == 0) {
                    const char *v = o + 8;
                    size_t vl = (size_t)(oe - v);
                    hides |= !(tok_is(v, vl, "0") || tok_is(v, vl, "1") || tok_is(v, vl, "off") ||
                               tok_is(v, vl, "noaccess"));
                }
            }
        }
    }
    return !found || hides;
}

/* Whether the proc root's listing can change without a fork or a release (see the top): a
 * procfs mounted hiding pids, or one whose mount cannot be told. A proc root that is not procfs
 * (a fixture) hides nothing. */
static bool proc_hides_pids(const rt_sample_ctx *c)
{
    struct statfs sf;
    struct stat st;
    if (fstatfs(c->roots.proc_fd, &sf) != 0 || fstat(c->roots.proc_fd, &st) != 0)
        return true;
    if (sf.f_type != PROC_SUPER_MAGIC)
        return false;
    int fd = rt_open_at(c->roots.proc_fd, "self/mountinfo");
    if (fd < 0)
        return true;
    rt_buf b;
    rt_buf_init(&b, 16u << 20);
    ssize_t n = rt_read_fd_grow(fd, &b, RT_READ_TO_EOF);
    close(fd);
    char dev[32];
    snprintf(dev, sizeof dev, "%u:%u", major(st.st_dev), minor(st.st_dev));
    bool hides = n <= 0 || rt_mountinfo_hides_pids(b.data, (size_t)n, dev);
    rt_buf_free(&b);
    return hides;
}

int rt_cpu_part_open(rt_cpu_part *p, rt_sample_ctx *c)
{
    p->loadavg_fd = p->list_fd = -1;
    p->fd = rt_ctx_open_kept(c, "stat");
    p->procs_running = p->all_processes = RT_NULL_I64;
    p->forks = p->prev_forks = p->forks_delta = RT_NULL_U64;
    p->walk_share = RT_CPU_WALK_SHARE;
    p->walk_burst = p->walk_tokens = RT_CPU_WALK_BURST_SECS;
    if (p->fd == -1)
        return -1;
    p->walk_always = proc_hides_pids(c);
    if (!p->walk_always) {
        int fd = rt_open_keep(c->roots.proc_fd, "loadavg"); /* none (a fixture): walked each sample */
        p->loadavg_fd = fd < 0 ? -1 : fd;
    }
    int fd = rt_open_keep(c->roots.proc_fd, "."); /* none (descriptors short): opened per walk */
    p->list_fd = fd < 0 ? -1 : fd;
    return 0;
}

/* Grows the three per-core arrays to hold n cores. Returns 0 or -1 (unchanged). */
static int grow_cores(rt_cpu_part *p, size_t n)
{
    size_t c1 = p->cap, c2 = p->cap, c3 = p->cap;
    if (rt_grow(&p->cur, &c1, n, sizeof *p->cur) < 0 || rt_grow(&p->prev, &c2, n, sizeof *p->prev) < 0 ||
        rt_grow(&p->per_core, &c3, n, sizeof *p->per_core) < 0)
        return -1;
    p->cap = c1;
    return 0;
}

/* /proc/stat's `processes` (tasks created since boot) out of its text. Returns whether found. */
static bool stat_forks(const char *buf, size_t len, uint64_t *out)
{
    static const char key[] = "\nprocesses ";
    const char *h = memmem(buf, len, key, sizeof key - 1);
    if (!h)
        return false;
    const char *q = h + sizeof key - 1;
    return rt_parse_u64(&q, buf + len, out);
}

/* Whether [t, t+n) is a whole decimal number; sets *v. */
static bool whole_u64(const char *t, size_t n, uint64_t *v)
{
    const char *q = t;
    return n > 0 && *t >= '0' && *t <= '9' && rt_parse_u64(&q, t + n, v) && q == t + n;
}

/* /proc/loadavg's tasks (after the slash of its fourth field) and last pid (its fifth) into k.
 * Returns whether both were there. */
static bool read_loadavg(const rt_cpu_part *p, rt_proc_key *k)
{
    char buf[160];
    ssize_t n = p->loadavg_fd >= 0 ? rt_pread_single(p->loadavg_fd, buf, sizeof buf) : -1;
    if (n <= 0)
        return false;
    const char *q = buf, *end = buf + n, *line, *le, *t = NULL;
    size_t tl = 0;
    if (!rt_next_line(&q, end, &line, &le))
        return false;
    q = line;
    for (int i = 0; i < 4; i++)
        if (!rt_next_token(&q, le, &t, &tl))
            return false;
    const char *slash = memchr(t, '/', tl);
    if (!slash || !whole_u64(slash + 1, (size_t)(t + tl - slash - 1), &k->threads))
        return false;
    return rt_next_token(&q, le, &t, &tl) && whole_u64(t, tl, &k->last_pid);
}

/* Adds the walk budget's share for the time since the last top-up, up to the burst. */
static void top_up(rt_cpu_part *p, double now)
{
    if (p->walk_tokens_mono > 0 && now > p->walk_tokens_mono)
        p->walk_tokens += (now - p->walk_tokens_mono) * p->walk_share;
    if (p->walk_tokens > p->walk_burst)
        p->walk_tokens = p->walk_burst;
    p->walk_tokens_mono = now;
}

/* Sets p->all_processes from a walk of the proc root, or carries the last count: exactly when
 * the counters (forks: /proc/stat's `processes` of this sample, NULL when not read; then
 * /proc/loadavg's) read as they did right before the last walk, and (stale, see the top) when
 * they moved but the walk budget is spent. */
static void count_processes(rt_cpu_part *p, rt_sample_ctx *c, const uint64_t *forks)
{
    rt_proc_key k = {0};
    bool keyed = forks && !p->walk_always && p->loadavg_fd >= 0, read = false;
    if (keyed && p->key_valid && p->all_processes != RT_NULL_I64) {
        if (*forks == p->key.forks) { /* no fork: loadavg tells whether a task was released */
            k.forks = *forks;
            read = keyed = read_loadavg(p, &k);
            if (keyed && k.threads == p->key.threads && k.last_pid == p->key.last_pid)
                return; /* nothing forked or was released since the walk: its count holds */
        }
        if (keyed) {
            top_up(p, rt_mono_secs());
            if (p->walk_tokens <= 0) {
                p->walks_deferred++; /* over the budget: the last count, carried (see the top) */
                return;
            }
        }
    }
    if (keyed && !read) {
        k.forks = *forks;
        keyed = read_loadavg(p, &k);
    }
    double t0 = keyed ? rt_thread_cpu_secs() : 0;
    int64_t n = p->list_fd >= 0 ? rt_dir_count_ids_fd(p->list_fd) : rt_dir_count_ids(c->roots.proc_fd, ".");
    p->walks++;
    if (keyed) {
        top_up(p, rt_mono_secs());
        p->walk_tokens -= rt_thread_cpu_secs() - t0;
    }
    p->all_processes = n < 0 ? RT_NULL_I64 : n;
    p->key_valid = keyed && n >= 0;
    if (p->key_valid)
        p->key = k; /* read before the walk: a change during it shows at the next sample */
}

bool rt_cpu_part_snapshot(rt_cpu_part *p, rt_sample_ctx *c)
{
    p->have_cur = false;
    p->procs_running = RT_NULL_I64;
    ssize_t n = rt_ctx_read_kept(c, p->fd, "stat", RT_READ_SINGLE, "stat");
    /* the counters first (stat, then loadavg), the walk after them */
    uint64_t forks;
    bool have_forks = n >= 0 && stat_forks(c->rbuf.data, (size_t)n, &forks);
    count_processes(p, c, have_forks ? &forks : NULL); /* c->rbuf (stat's text) is left as it is */
    p->forks = have_forks ? forks : RT_NULL_U64;
    if (n < 0)
        return false;
    rt_stat st = {.cores = p->cur, .core_cap = p->cap};
    if (rt_stat_parse(c->rbuf.data, (size_t)n, &st) < 0) {
        rt_log(&c->log, RT_LOG_WARN, "stat: no aggregate cpu line");
        return false;
    }
    if (st.core_count > p->cap) { /* more cores than seen before (hotplug): grow, parse again */
        if (grow_cores(p, st.core_count) < 0)
            return false;
        st.cores = p->cur;
        st.core_cap = p->cap;
        rt_stat_parse(c->rbuf.data, (size_t)n, &st);
    }
    p->ncur = st.core_count;
    if (st.has_procs_running)
        p->procs_running = (int64_t)st.procs_running;
    p->have_cur = true;
    return true;
}

/* The previous reading of the core with the same id as cur[i], or NULL (it just came online). */
static const rt_cpu_ticks *prev_of(const rt_cpu_part *p, size_t i)
{
    int id = p->cur[i].id;
    if (i < p->nprev && p->prev[i].id == id)
        return &p->prev[i];
    for (size_t j = 0; j < p->nprev; j++)
        if (p->prev[j].id == id)
            return &p->prev[j];
    return NULL;
}

void rt_cpu_part_delta(rt_cpu_part *p, const rt_sample_ctx *c)
{
    rt_cpu *o = &p->out;
    o->utilization_pct = o->utime_secs = o->stime_secs = NAN;
    o->process_count = p->procs_running;
    o->all_process_count = p->all_processes;
    o->per_core_pct = p->per_core;
    o->core_count = p->have_cur ? p->ncur : 0;
    p->forks_delta = RT_NULL_U64;
    if (!p->have_cur || !p->have_prev)
        return;
    if (p->forks != RT_NULL_U64 && p->prev_forks != RT_NULL_U64)
        p->forks_delta = rt_delta_u64(p->forks, p->prev_forks);
    double busy_cores = 0;
    uint64_t user = 0, sys = 0;
    bool any = false, matched = false;
    for (size_t i = 0; i < p->ncur; i++) {
        const rt_cpu_ticks *now = &p->cur[i], *was = prev_of(p, i);
        p->per_core[i] = NAN;
        if (!was)
            continue;
        matched = true;
        user += rt_delta_u64(now->t[RT_CPU_USER] + now->t[RT_CPU_NICE], was->t[RT_CPU_USER] + was->t[RT_CPU_NICE]);
        sys += rt_delta_u64(now->t[RT_CPU_SYSTEM], was->t[RT_CPU_SYSTEM]);
        uint64_t t = rt_delta_u64(rt_cpu_total(now), rt_cpu_total(was));
        uint64_t b = rt_delta_u64(rt_cpu_busy(now), rt_cpu_busy(was));
        if (t == 0)
            continue; /* no tick on this core in the interval: cannot tell */
        if (b > t)
            b = t;
        p->per_core[i] = (double)b / (double)t * 100.0;
        busy_cores += (double)b / (double)t;
        any = true;
    }
    if (any)
        o->utilization_pct = busy_cores;
    if (matched) {
        o->utime_secs = (double)user / (double)c->clk_tck;
        o->stime_secs = (double)sys / (double)c->clk_tck;
    }
}

void rt_cpu_part_commit(rt_cpu_part *p)
{
    if (!p->have_cur)
        return;
    rt_cpu_ticks *t = p->prev;
    p->prev = p->cur;
    p->cur = t;
    p->nprev = p->ncur;
    p->prev_forks = p->forks;
    p->have_prev = true;
}

void rt_cpu_part_close(rt_cpu_part *p)
{
    rt_close_all(&p->fd, &p->loadavg_fd, &p->list_fd);
    rt_free_all(p->cur, p->prev, p->per_core);
}
