/* cgroup_job.c - a cgroup of the job's own (the public rt_job_cgroup_*): made below the caller's
 * group in the v2 tree and the v1 cpu, cpuacct, memory, blkio and pids hierarchies, entered by
 * the command's child before exec, removed at the end (killed first by a guardian when the
 * tracker died); stale groups of dead trackers cleaned, judged by ownership: each group's
 * directory carries its owner's flock(2), which holds in every PID namespace. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "../core/lasterr.h"

#define NAME_PREFIX "resource-tracker-"

struct rt_job_cgroup {
    rt_roots roots;
    rt_logger log;
    rt_cg_mounts mounts;
    rt_cg_paths paths;        /* the job group's path per hierarchy it was made in */
    int parent_fd[RT_CG_NHIER]; /* the parent's directory where this hierarchy made it, else -1 */
    int dir_fd[RT_CG_NHIER];    /* the group's directory (also for a comounted twin), holding
                                 * the owner's lock (see "Ownership" below) */
    int procs_fd[RT_CG_NHIER];  /* its cgroup.procs open for writing, where made */
    char name[64];
    char path[RT_CG_PATH_MAX];
};

/* The counter N of resource-tracker-PID-N: several groups in one process, and the next name
 * when one is taken. */
static atomic_uint job_counter;

/* How many names are tried when the one made is taken (a group of that name left with
 * processes in it, or a live tracker's in another PID namespace with the same pid there). */
#define NAME_TRIES 8

/* Ownership. The pid in a group's name says nothing across PID namespaces (a live tracker in
 * another one has another pid here, or one that is some other process here), so it is not the
 * proof of a live owner: the proof is an exclusive flock(2) on the group's directory, taken on
 * the descriptor the owner keeps open until it has removed the group (dir_fd). A lock belongs to
 * the open file description, so the guardian (a fork holding the same descriptors) keeps it when
 * the tracker is killed, and the kernel drops it only when the last holder is gone; it is seen
 * from every PID and mount namespace (one inode per group in each hierarchy). Cleanup takes the
 * lock itself before removing a group, so it never removes a group whose owner still holds it,
 * and a group removed from under an owner between mkdir and its lock is seen by the owner
 * (own_lock), which then tries the next name. */

/* Parses "resource-tracker-P-N"; returns P, or 0 when name is not of that pattern. */
static pid_t stale_pid(const char *name)
{
    size_t pl = sizeof NAME_PREFIX - 1;
    if (strncmp(name, NAME_PREFIX, pl) != 0)
        return 0;
    const char *p = name + pl, *end = name + strlen(name);
    uint64_t pid, n;
    if (*p < '0' || *p > '9' || !rt_parse_u64(&p, end, &pid) || p + 1 >= end || *p != '-' || p[1] < '0' ||
        p[1] > '9')
        return 0;
    p++;
    if (!rt_parse_u64(&p, end, &n) || p != end || pid == 0 || pid > INT32_MAX)
        return 0;
    return (pid_t)pid;
}

/* Removes from the directory dfd the groups named resource-tracker-P-N whose owner is provably
 * gone: their lock can be taken (nobody holds it). Left alone: a group whose lock is held, one
 * that cannot be opened or locked (its owner cannot be judged), and one whose P is a live
 * process of this PID namespace other than the caller (a tracker before 0.11 took no lock: it
 * may be one). A group with processes (or child groups) in it is never removed: the kernel
 * refuses, and it stays. */
static void remove_stale(int dfd, const char *where, const rt_logger *log)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        pid_t p = stale_pid(e->d_name);
        if (p <= 0 || (p != getpid() && (kill(p, 0) == 0 || errno != ESRCH)))
            continue;
        int gfd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (gfd < 0)
            continue;
        if (flock(gfd, LOCK_EX | LOCK_NB) < 0) { /* EWOULDBLOCK: its owner lives */
            if (errno != EWOULDBLOCK)
                rt_log(log, RT_LOG_DEBUG, "cgroup: %s/%s stays: its owner cannot be judged (%s)", where, e->d_name,
                       strerror(errno));
            close(gfd);
            continue;
        }
        if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) == 0)
            rt_log(log, RT_LOG_DEBUG, "cgroup: removed the stale group %s/%s", where, e->d_name);
        else
            rt_log(log, RT_LOG_DEBUG, "cgroup: the stale group %s/%s stays: %s", where, e->d_name, strerror(errno));
        close(gfd); /* the lock goes with it */
    }
    closedir(d);
}

/* Takes the owner's lock on the group just made (dfd, named name in pfd). Returns false when
 * the group is not ours to keep: its lock is held (a cleanup judging it this moment, which
 * removes it), or the name no longer leads to it (removed between mkdir and the lock). Where
 * the file system takes no lock the group goes on without one: it then cannot be judged, so
 * nobody removes it as stale. */
static bool own_lock(int pfd, int dfd, const char *name, const rt_logger *log)
{
    if (flock(dfd, LOCK_EX | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK)
            return false;
        rt_log(log, RT_LOG_DEBUG, "cgroup: %s cannot be locked (%s): no cleanup will judge it", name, strerror(errno));
        return true;
    }
    struct stat mine, there;
    return fstat(dfd, &mine) == 0 && fstatat(pfd, name, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
           mine.st_dev == there.st_dev && mine.st_ino == there.st_ino;
}

/* Asks the parent (v2) to hand its available controllers among cpu, memory, io and pids to its
 * children. Failure is fine: a parent holding processes refuses (EBUSY), and the group still
 * has cpu.stat usage and pressure. */
static void enable_controllers(int pfd, const rt_logger *log)
{
    char avail[512], have[512];
    if (rt_read_line_at(pfd, "cgroup.controllers", avail, sizeof avail) < 0)
        return;
    if (rt_read_line_at(pfd, "cgroup.subtree_control", have, sizeof have) < 0)
        have[0] = '\0';
    static const char *const want[] = {"cpu", "memory", "io", "pids"};
    for (size_t i = 0; i < RT_ARRAY_LEN(want); i++) {
        char tokn[16];
        rt_pathf(tokn, sizeof tokn, " %s ", want[i]);
        char a[520], h[520];
        rt_pathf(a, sizeof a, " %s ", avail);
        rt_pathf(h, sizeof h, " %s ", have);
        if (!strstr(a, tokn) || strstr(h, tokn))
            continue;
        int fd = openat(pfd, "cgroup.subtree_control", O_WRONLY | O_CLOEXEC);
        char cmd[16];
        rt_pathf(cmd, sizeof cmd, "+%s", want[i]);
        size_t n = strlen(cmd);
        if (fd < 0 || write(fd, cmd, n) != (ssize_t)n)
            rt_log(log, RT_LOG_DEBUG, "cgroup: cannot enable %s for the job's group: %s", want[i], strerror(errno));
        if (fd >= 0)
            close(fd);
    }
}

/* v1 blkio counts a group's I/O on a disk only once block throttling is set up for that disk
 * (since Linux 6.9 it is set up on the first rule written, and stays). For each whole disk
 * backed by a device (rt_cg_disks), writes the rule "MAJ:MIN 0" into the job's group: 0 means
 * no limit, so this limits nothing and makes the group's blkio.throttle.io_service_bytes count
 * (only those disks: each device with a rule adds lines to read every sample). Failures are
 * fine (a kernel that counts anyway, a device that takes no rule). */
static void blkio_count_on_disks(const rt_job_cgroup *g, int gfd)
{
    rt_cg_devs disks;
    if (rt_cg_disks(&g->roots, &disks) == 0)
        return;
    int rfd = openat(gfd, "blkio.throttle.read_bps_device", O_WRONLY | O_CLOEXEC);
    for (size_t i = 0; rfd >= 0 && i < disks.n; i++) {
        char rule[64];
        rt_pathf(rule, sizeof rule, "%u:%u 0\n", (unsigned)(disks.dev[i] >> 32), (unsigned)(disks.dev[i] & 0xffffffffu));
        if (write(rfd, rule, strlen(rule)) < 0)
            rt_log(&g->log, RT_LOG_DEBUG, "cgroup: blkio of %u:%u not set up for counting: %s",
                   (unsigned)(disks.dev[i] >> 32), (unsigned)(disks.dev[i] & 0xffffffffu), strerror(errno));
    }
    if (rfd >= 0)
        close(rfd);
}

/* Why no group could be made, in a few words for people, from the last failure's error. */
static const char *why_words(int err, int found)
{
    if (found == 0)
        return "no cgroup hierarchy is mounted";
    if (found < 0)
        return "the tracker's own cgroup cannot be read";
    switch (-err) {
    case EACCES:
    case EPERM: return "not root, and no cgroup delegated to this user";
    case EROFS: return "the cgroup file system is read-only";
    case ENOSPC:
    case EAGAIN: return "the cgroup limits of the tracker's group are reached";
    default: return "no cgroup hierarchy lets the tracker make one";
    }
}

/* Removes the group from every hierarchy it was made in, each while its lock is still held (so
 * no cleanup judges it in between), then closes its descriptors; the group then has no
 * hierarchy. A directory that still holds processes cannot be removed: logged, it stays. */
static void unmake(rt_job_cgroup *g)
{
    for (int h = 0; h < RT_CG_NHIER; h++) {
        if (g->parent_fd[h] >= 0 && unlinkat(g->parent_fd[h], g->name, AT_REMOVEDIR) < 0)
            rt_log(&g->log, RT_LOG_DEBUG, "cgroup: %s%s stays (%s): it still holds processes", g->mounts.dir[h],
                   g->paths.path[h], strerror(errno));
        rt_close(&g->procs_fd[h]);
        rt_close(&g->dir_fd[h]);
        rt_close(&g->parent_fd[h]);
    }
    memset(&g->paths, 0, sizeof g->paths);
}

/* Makes the group in hierarchy h. Returns 0, or -errno (why set); -EEXIST when the name is
 * taken (the caller tries the next one). */
static int make_in(rt_job_cgroup *g, rt_cg_hier h, const rt_cg_paths *own, char *why, size_t why_cap)
{
    int pfd = rt_cg_open_dir(&g->roots, &g->mounts, h, own->path[h]);
    if (pfd < 0) {
        rt_pathf(why, why_cap, "%s%s: %s", g->mounts.dir[h], own->path[h], strerror(-pfd));
        return pfd;
    }
    remove_stale(pfd, g->mounts.dir[h], &g->log);
    const char *parent = own->path[h];
    bool root = parent[0] == '/' && parent[1] == '\0';
    /* never in the root group: that would change the machine's whole tree, for good */
    if (h == RT_CG_UNIFIED && !root)
        enable_controllers(pfd, &g->log);
    int err = 0;
    const char *what = NULL; /* set once the directory is made: what of it failed */
    if (mkdirat(pfd, g->name, 0755) < 0)
        err = -errno;
    else
        what = "";
    int dfd = err ? -1 : openat(pfd, g->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0 && !own_lock(pfd, dfd, g->name, &g->log)) {
        /* taken from under us: not ours to remove; the caller tries the next name */
        close(dfd);
        rt_pathf(why, why_cap, "%s%s/%s: taken", g->mounts.dir[h], root ? "" : parent, g->name);
        close(pfd);
        return -EEXIST;
    }
    int wfd = dfd < 0 ? -1 : openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (!err && wfd < 0) {
        err = -errno;
        what = "/cgroup.procs";
    } else if (!err && !rt_pathf(g->paths.path[h], RT_CG_PATH_MAX, "%s/%s", root ? "" : parent, g->name)) {
        err = -ENAMETOOLONG;
    }
    if (err && what != NULL) { /* made but of no use: removed while still locked, then closed */
        unlinkat(pfd, g->name, AT_REMOVEDIR);
        if (wfd >= 0)
            close(wfd);
        if (dfd >= 0)
            close(dfd);
    }
    if (err) {
        rt_pathf(why, why_cap, "%s%s/%s%s: %s", g->mounts.dir[h], root ? "" : parent, g->name, what ? what : "",
                 strerror(-err));
        close(pfd);
        return err;
    }
    g->parent_fd[h] = pfd;
    g->dir_fd[h] = dfd;
    g->procs_fd[h] = wfd;
    g->paths.has[h] = true;
    if (h == RT_CG_BLKIO)
        blkio_count_on_disks(g, dfd);
    return 0;
}

rt_error rt_job_cgroup_new(const rt_job_cgroup_options *opts, rt_job_cgroup **out)
{
    rt_err_clear();
    if (out)
        *out = NULL;
    rt_job_cgroup_options o = RT_JOB_CGROUP_OPTIONS_INIT;
    if (!out || rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    rt_job_cgroup *g = calloc(1, sizeof *g);
    rt_cg_paths *own = malloc(sizeof *own);
    if (!g || !own) {
        free(g);
        free(own);
        return RT_ERR_NOMEM;
    }
    g->log.fn = o.log;
    g->log.user = o.log_user;
    memset(g->parent_fd, 0xff, sizeof g->parent_fd);
    memset(g->dir_fd, 0xff, sizeof g->dir_fd);
    memset(g->procs_fd, 0xff, sizeof g->procs_fd);
    char why[RT_CG_PATH_MAX + 128] = "";
    rt_error rc = rt_roots_open(&g->roots, o.proc_root, o.sys_root);
    if (rc != RT_OK) {
        free(g);
        free(own);
        if (rc != RT_ERR_INVALID) {
            rt_err_set("the proc or sys root cannot be opened");
            if (o.why && o.why_cap)
                rt_copy_str(o.why, o.why_cap, rt_last_error_message());
        }
        return rc == RT_ERR_INVALID ? rc : RT_ERR_UNSUPPORTED;
    }
    int found = rt_cg_locate(&g->roots, 0, &g->mounts, own);
    if (found <= 0)
        rt_copy_str(why, sizeof why, found < 0 ? "the caller's group cannot be read" : "no cgroup hierarchy is mounted");
    int made = 0, last_err = 0;
    for (int attempt = 0; found > 0 && attempt < NAME_TRIES; attempt++) {
        rt_pathf(g->name, sizeof g->name, NAME_PREFIX "%ld-%u", (long)getpid(), atomic_fetch_add(&job_counter, 1) + 1);
        made = 0;
        last_err = 0;
        for (int h = 0; h < RT_CG_NHIER && last_err != -EEXIST; h++) {
            if (!own->has[h] || !g->mounts.dir[h][0])
                continue;
            int twin = -1; /* comounted ("cpu,cpuacct"): one directory serves both */
            for (int k = 0; k < h && twin < 0; k++)
                if (strcmp(g->mounts.dir[k], g->mounts.dir[h]) == 0 && g->dir_fd[k] >= 0)
                    twin = k;
            if (twin >= 0) {
                g->paths.has[h] = true;
                rt_copy_str(g->paths.path[h], RT_CG_PATH_MAX, g->paths.path[twin]);
                continue;
            }
            int e = make_in(g, (rt_cg_hier)h, own, why, sizeof why);
            made += e == 0;
            if (e < 0)
                last_err = e;
        }
        if (last_err != -EEXIST)
            break;
        /* one hierarchy has the name already: all of this name goes, the next name is tried */
        rt_log(&g->log, RT_LOG_DEBUG, "cgroup: %s: the next name is tried", why);
        unmake(g);
        made = 0;
    }
    free(own);
    if (!made) {
        rt_log(&g->log, RT_LOG_DEBUG, "cgroup: the job gets no group of its own: %s", why[0] ? why : "no hierarchy");
        rt_err_set("%s", why_words(last_err, found));
        if (o.why && o.why_cap)
            rt_copy_str(o.why, o.why_cap, rt_last_error_message());
        rt_job_cgroup_free(g);
        return RT_ERR_UNSUPPORTED;
    }
    int show = g->paths.has[RT_CG_UNIFIED] ? RT_CG_UNIFIED : g->paths.has[RT_CG_MEMORY] ? RT_CG_MEMORY : -1;
    for (int h = 0; show < 0 && h < RT_CG_NHIER; h++)
        if (g->paths.has[h])
            show = h;
    rt_copy_str(g->path, sizeof g->path, g->paths.path[show]);
    *out = g;
    return RT_OK;
}

rt_error rt_job_cgroup_create(const rt_job_cgroup_options *opts, rt_job_cgroup **out)
{
    return rt_job_cgroup_new(opts, out);
}

rt_error rt_job_cgroup_join(const rt_job_cgroup *g)
{
    if (!g)
        return RT_ERR_INVALID;
    int e = rt_job_cgroup_enter(g);
    if (e == 0)
        return RT_OK;
    errno = -e;
    return RT_ERR_SYSTEM;
}

int rt_job_cgroup_enter(const rt_job_cgroup *g)
{
    int first = 0;
    for (int h = 0; h < RT_CG_NHIER; h++) {
        if (g->procs_fd[h] < 0)
            continue;
        ssize_t n;
        do {
            n = write(g->procs_fd[h], "0\n", 2);
        } while (n < 0 && errno == EINTR);
        if (n < 0 && !first)
            first = -errno;
    }
    return first;
}

const char *rt_job_cgroup_path(const rt_job_cgroup *g)
{
    return g->path;
}

int64_t rt_job_cgroup_procs(const rt_job_cgroup *g)
{
    int dfd = -1;
    for (int h = 0; h < RT_CG_NHIER && dfd < 0; h++)
        dfd = g->dir_fd[h];
    int fd = dfd < 0 ? -1 : openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* one pid a line: counted as read, in a buffer on the stack (called every tick while
     * --wait-all waits) */
    char buf[4096];
    int64_t count = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        for (ssize_t i = 0; i < n; i++)
            count += buf[i] == '\n';
    close(fd);
    return n < 0 ? -1 : count;
}

/* SIGKILLs every process listed in the group's cgroup.procs behind dfd (none when it cannot be
 * read; none either when send is false: then it only counts), never the caller. Returns how
 * many were listed (the caller excluded), or -1 when the file cannot be read. pids are parsed
 * digit by digit, so a line split across reads is whole. */
static int64_t kill_listed(int dfd, bool send)
{
    int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    int64_t listed = 0;
    uint64_t pid = 0;
    bool digits = false;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9' && pid <= INT32_MAX) {
                pid = pid * 10 + (uint64_t)(buf[i] - '0');
                digits = true;
            } else if (buf[i] == '\n') {
                if (digits && pid > 0 && pid <= INT32_MAX && (pid_t)pid != getpid()) {
                    if (send)
                        kill((pid_t)pid, SIGKILL);
                    listed++;
                }
                pid = 0;
                digits = false;
            }
        }
    }
    close(fd);
    return n < 0 ? -1 : listed;
}

rt_error rt_job_cgroup_kill(rt_job_cgroup *g)
{
    if (!g)
        return RT_ERR_INVALID;
    /* v2: the kernel kills the whole group at once, forks racing with it included */
    bool v2_killed = false;
    if (g->dir_fd[RT_CG_UNIFIED] >= 0) {
        int fd = openat(g->dir_fd[RT_CG_UNIFIED], "cgroup.kill", O_WRONLY | O_CLOEXEC);
        v2_killed = fd >= 0 && write(fd, "1", 1) == 1;
        if (fd >= 0 && !v2_killed)
            rt_log(&g->log, RT_LOG_DEBUG, "cgroup: %s/cgroup.kill: %s", g->path, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    /* then wait until every hierarchy's list is empty; without cgroup.kill (v1, kernels before
     * 5.14) SIGKILL what each list holds, a fork between reading and killing caught by the next
     * round. For 0.5 s after cgroup.kill nothing is sent (a pid listed while its process dies
     * could be reused by then); a process still listed after that (one that entered only the v1
     * groups) is killed by its pid. Bounded: 500 rounds of 10 ms */
    for (int round = 0; round < 500; round++) {
        int64_t left = 0;
        bool readable = false;
        for (int h = 0; h < RT_CG_NHIER; h++) {
            if (g->dir_fd[h] < 0)
                continue;
            int64_t n = kill_listed(g->dir_fd[h], !v2_killed || round >= 50);
            readable |= n >= 0;
            left += n > 0 ? n : 0;
        }
        if (!readable)
            return RT_ERR_IO;
        if (left == 0)
            return RT_OK;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    rt_log(&g->log, RT_LOG_DEBUG, "cgroup: %s still holds processes after being killed for 5 s", g->path);
    return RT_ERR_SYSTEM;
}

rt_cg_group *rt_cg_group_of_job(const struct rt_job_cgroup *jg, const rt_logger *log)
{
    return jg ? rt_cg_group_open(&jg->roots, &jg->mounts, &jg->paths, log) : NULL;
}

void rt_job_cgroup_free(rt_job_cgroup *g)
{
    if (!g)
        return;
    unmake(g);
    rt_roots_close(&g->roots);
    free(g);
}
