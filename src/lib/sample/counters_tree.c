/* counters_tree.c - a process tree's counters read now (rt_counters_tree): a walk from the
 * root through the children lists of every thread, each process's stat, io and smaps_rollup
 * read once through the pure parsers of the sources, summed; the GPUs' share asked of the GPU
 * set with the walk's membership. Each process is read before its children are listed. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "counters.h"

/* Reads the one-record file "<pid>/<rel>" under the proc root into c->buf. Returns the length
 * or -errno. */
static ssize_t read_single(rt_counters *c, int64_t pid, const char *rel)
{
    char path[96];
    if (!rt_pathf(path, sizeof path, "%lld/%s", (long long)pid, rel))
        return -ENAMETOOLONG;
    int fd = rt_open_at(c->ctx.roots.proc_fd, path);
    if (fd < 0)
        return fd;
    ssize_t n = rt_pread_single(fd, c->buf, sizeof c->buf);
    close(fd);
    return n;
}

/* Queues pid for the walk unless it is already there (a process reparented mid-walk to a
 * member can show in two lists). */
static void push(void *user, int64_t pid)
{
    rt_counters *c = user;
    if (pid <= 0 || rt_pidmap_get(&c->seen, pid) != RT_PIDMAP_NONE)
        return;
    if (rt_grow(&c->pids, &c->pids_cap, c->npids + 1, sizeof *c->pids) < 0 ||
        rt_pidmap_put(&c->seen, pid, c->npids) < 0)
        return; /* no memory: the walk is short of it */
    c->pids[c->npids++] = pid;
}

/* Queues the children listed in "<pid>/task/<tid>/children". */
static void read_children(rt_counters *c, int64_t pid, int64_t tid)
{
    char path[96];
    if (!rt_pathf(path, sizeof path, "%lld/task/%lld/children", (long long)pid, (long long)tid))
        return;
    int fd = rt_open_at(c->ctx.roots.proc_fd, path);
    if (fd < 0)
        return;
    ssize_t n = rt_read_fd_grow(fd, &c->list, RT_READ_SHORT_LINES);
    close(fd);
    if (n > 0)
        rt_children_parse(c->list.data, (size_t)n, push, c);
}

typedef struct task_walk {
    rt_counters *c;
    int64_t pid;
} task_walk;

/* rt_dir_walk_ids callback over <pid>/task: the children of each thread. */
static int visit_task(void *user, int64_t tid)
{
    task_walk *w = user;
    read_children(w->c, w->pid, tid);
    return 0;
}

/* Queues the children of every thread of pid (threads: its thread count from stat). */
static void list_children(rt_counters *c, int64_t pid, int64_t threads)
{
    if (threads <= 1) {
        read_children(c, pid, pid);
        return;
    }
    char path[64];
    task_walk w = {c, pid};
    if (rt_pathf(path, sizeof path, "%lld/task", (long long)pid))
        rt_dir_walk_ids(c->ctx.roots.proc_fd, path, visit_task, &w);
}

/* rt_pid_in_tree over the walk's members. */
static bool walked(void *user, int64_t pid)
{
    rt_counters *c = user;
    return rt_pidmap_get(&c->seen, pid) != RT_PIDMAP_NONE;
}

/* Reads one process of the walk into the sums. Returns false when its stat could not be read
 * (it is gone). */
static bool read_process(rt_counters *c, size_t i, bool children, rt_tree_counters *o, uint64_t ticks[2],
                         uint64_t *pss_kib, bool *pss_ok)
{
    int64_t pid = c->pids[i];
    rt_pidstat st;
    ssize_t n = read_single(c, pid, "stat");
    if (n < 0 || rt_pidstat_parse(c->buf, (size_t)n, &st) < 0)
        return false;
    /* a descendant's parent is a member: else the child listed has gone and its pid is another
     * process's now (or it was reparented out of the tree), which is not the tree's */
    if (i > 0 && rt_pidmap_get(&c->seen, st.ppid) == RT_PIDMAP_NONE)
        return false;
    ticks[0] += st.utime + (children ? st.cutime : 0);
    ticks[1] += st.stime + (children ? st.cstime : 0);
    bool unread = false;
    rt_pidio io;
    n = read_single(c, pid, "io");
    if (n >= 0 && rt_pidio_parse(c->buf, (size_t)n, &io) == 0) {
        o->read_bytes += io.read_bytes;
        o->write_bytes += io.write_bytes;
    } else {
        unread = true;
    }
    rt_rollup r;
    n = read_single(c, pid, "smaps_rollup");
    if (n >= 0 && rt_smaps_rollup_parse(c->buf, (size_t)n, &r) == 0) {
        *pss_kib += r.pss_kib;
    } else if (st.state != 'Z') { /* a zombie holds no memory */
        unread = true;
        if (i == 0)
            *pss_ok = false; /* the root's own memory is not known */
    }
    if (unread)
        o->unread_count++;
    if (children)
        list_children(c, pid, st.num_threads);
    return true;
}

rt_error rt_counters_tree(rt_counters *c, int64_t pid, int children, rt_tree_counters *out)
{
    if (!c || !out || pid <= 0 || out->struct_size < sizeof(size_t))
        return RT_ERR_INVALID;
    rt_tree_counters o = {
        .struct_size = out->struct_size,
        .timestamp_secs = rt_real_secs(),
        .pid = pid,
        .child_count = RT_NULL_I64,
        .utime_secs = NAN,
        .stime_secs = NAN,
        .pss_mib = NAN,
        .gpu_usage = NAN,
        .gpu_vram_mib = NAN,
        .gpu_utilized = RT_NULL_I64,
    };
    uint64_t ticks[2] = {0, 0}, pss_kib = 0;
    bool pss_ok = true, want = children != 0, root_ok = false;
    int64_t descendants = 0;
    c->npids = 0;
    push(c, pid);
    for (size_t i = 0; i < c->npids; i++) {
        if (read_process(c, i, want, &o, ticks, &pss_kib, &pss_ok)) {
            if (i == 0)
                root_ok = true;
            else
                descendants++;
        } else if (i == 0) {
            break; /* the root is not there */
        } else {
            o.unread_count++; /* gone between its parent's list and its reading */
        }
    }
    if (root_ok) {
        double tck = (double)c->ctx.clk_tck;
        o.utime_secs = (double)ticks[0] / tck;
        o.stime_secs = (double)ticks[1] / tck;
        o.pss_mib = pss_ok ? (double)pss_kib / 1024.0 : NAN;
        o.child_count = want ? descendants : RT_NULL_I64;
        rt_gpus *g = rt_counters_gpus(c);
        if (g) {
            double util = NAN;
            uint64_t vram = RT_NULL_U64;
            int64_t used = RT_NULL_I64;
            rt_gpus_tree(g, walked, c, c->pids, c->npids, rt_mono_secs(), &util, &vram, &used, pid, NULL);
            o.gpu_usage = isnan(util) ? NAN : util / 100.0;
            o.gpu_vram_mib = vram == RT_NULL_U64 ? NAN : (double)vram / 1048576.0;
            o.gpu_utilized = used;
        }
    } else {
        o.read_bytes = o.write_bytes = RT_NULL_U64;
        o.unread_count = 0;
    }
    for (size_t i = 0; i < c->npids; i++)
        rt_pidmap_del(&c->seen, c->pids[i]);
    c->npids = 0;
    /* the caller's struct takes its own size: no byte past it is written */
    memcpy(out, &o, out->struct_size < sizeof o ? out->struct_size : sizeof o);
    return root_ok ? RT_OK : RT_ERR_NOT_FOUND;
}
