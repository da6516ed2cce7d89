/* roots.c - the proc and sys path roots: the only place the standard mount points are named.
 * Every source opens files relative to these directory fds, so fixtures and containers work.
 * Other roots come from the caller's options (the tool takes them from TRACKER_*_ROOT). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core.h"

/* Opens path as a directory fd (O_CLOEXEC). Returns the fd or -errno. */
static int open_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

rt_error rt_roots_open(rt_roots *r, const char *proc_root, const char *sys_root)
{
    r->proc_fd = r->sys_fd = -1;
    const char *p = proc_root && *proc_root ? proc_root : "/proc";
    const char *s = sys_root && *sys_root ? sys_root : "/sys";
    int n1 = snprintf(r->proc, sizeof r->proc, "%s", p);
    int n2 = snprintf(r->sys, sizeof r->sys, "%s", s);
    if (n1 < 0 || (size_t)n1 >= sizeof r->proc || n2 < 0 || (size_t)n2 >= sizeof r->sys)
        return RT_ERR_INVALID;
    r->proc_fd = open_dir(r->proc);
    if (r->proc_fd < 0)
        return RT_ERR_NOT_FOUND;
    r->sys_fd = open_dir(r->sys);
    if (r->sys_fd < 0)
        r->sys_fd = -1; /* no sys root: sysfs-only details become null */
    return RT_OK;
}

void rt_roots_close(rt_roots *r)
{
    rt_close(&r->proc_fd);
    rt_close(&r->sys_fd);
}
