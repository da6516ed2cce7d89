/* context.c - the sampler's shared reading helpers: kept-open procfs files opened once and
 * re-read from offset 0 into the one shared buffer (opened for each read instead where
 * descriptors are short), failures logged. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "context.h"

int rt_ctx_open_kept(rt_sample_ctx *c, const char *path)
{
    int fd = rt_open_keep(c->roots.proc_fd, path);
    if (fd == -EMFILE || fd == -ENFILE)
        return RT_CTX_REOPEN; /* there may be one for each read later */
    if (fd < 0)
        rt_log(&c->log, RT_LOG_WARN, "cannot open %s/%s: %s", c->roots.proc, path, strerror(-fd));
    return fd < 0 ? -1 : fd;
}

ssize_t rt_ctx_read_kept(rt_sample_ctx *c, int fd, const char *path, rt_read_mode mode, const char *what)
{
    int once = -1;
    if (fd == RT_CTX_REOPEN) {
        fd = once = rt_open_at(c->roots.proc_fd, path);
        if (fd < 0) {
            rt_log(&c->log, RT_LOG_DEBUG, "cannot open %s/%s: %s", c->roots.proc, path, strerror(-fd));
            return -1;
        }
    }
    if (fd < 0)
        return -1;
    ssize_t n = rt_read_fd_grow(fd, &c->rbuf, mode);
    rt_close(&once);
    if (n < 0) {
        rt_log(&c->log, RT_LOG_WARN, "cannot read %s: %s", what, strerror((int)-n));
        return -1;
    }
    return n;
}
