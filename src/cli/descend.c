/* descend.c - the processes under a process, read from /proc at the moment of asking: each
 * thread's list of children (/proc/PID/task/T/children), whether a process runs (a zombie or a
 * dying one does not), and how many descendants of the tracker run now: what the end of a run
 * without a cgroup says is left of the job (main.c), where the last sample's count would also
 * take in zombies the tracker, their subreaper, has not reaped yet. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

bool cli_proc_running(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *end = strrchr(buf, ')'); /* the name may hold anything: the state follows its last ')' */
    return end && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X' && end[2] != '\0';
}

bool cli_proc_children(long pid, bool (*fn)(long child, void *user), void *user)
{
    char path[96];
    if (pid > 0)
        snprintf(path, sizeof path, "/proc/%ld/task", pid);
    else
        snprintf(path, sizeof path, "/proc/self/task");
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool go = true;
    struct dirent *e;
    while (go && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char buf[4096];
        size_t at = strlen(path);
        snprintf(path + at, sizeof path - at, "/%.20s/children", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        path[at] = '\0';
        if (fd < 0)
            continue; /* a thread that ended */
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        for (char *q = buf, *end; go && *q; q = end) {
            long c = strtol(q, &end, 10);
            if (end == q)
                break;
            if (c > 0)
                go = fn(c, user);
        }
    }
    closedir(d);
    return true;
}

#define WALK_MAX 65536 /* processes looked at, at most */

typedef struct walk {
    long *pids;
    size_t n, cap, seen;
    bool own; /* the tracker's own children: the static build's helpers are left out */
} walk;

static bool queue(long pid, void *user)
{
    walk *w = user;
    if (w->own && rt_helper_reap(pid)) /* the tool's helper, not the job's */
        return true;
    if (w->seen >= WALK_MAX)
        return false;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        long *p = realloc(w->pids, cap * sizeof *p);
        if (!p)
            return false;
        w->pids = p;
        w->cap = cap;
    }
    w->pids[w->n++] = pid;
    w->seen++;
    return true;
}

int64_t cli_descendants_running(void)
{
    walk w = {.own = true};
    if (!cli_proc_children(0, queue, &w)) {
        free(w.pids);
        return -1;
    }
    w.own = false;
    int64_t running = 0;
    while (w.n > 0) {
        long pid = w.pids[--w.n];
        if (cli_proc_running(pid))
            running++;
        cli_proc_children(pid, queue, &w); /* a zombie has none: its children are ours already */
    }
    free(w.pids);
    return running;
}
