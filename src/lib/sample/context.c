/* context.c - the sampler's shared context set up (roots, logger, clock tick, buffer) and its
 * reading helpers: kept-open procfs files opened once and re-read from offset 0 into the one
 * shared buffer (opened for each read instead where descriptors are short), failures logged;
 * and the arrays a list part (disks, network) rebuilds when its devices change. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/lasterr.h"
#include "context.h"

rt_error rt_ctx_open(rt_sample_ctx *c, const char *proc_root, const char *sys_root, rt_logger log)
{
    c->log = log;
    rt_error err = rt_roots_open(&c->roots, proc_root, sys_root);
    if (err != RT_OK) {
        rt_err_set(err == RT_ERR_NOT_FOUND ? "the proc root %s cannot be opened" : "a root path is too long (%s)",
                   c->roots.proc);
        return err;
    }
    long tck = sysconf(_SC_CLK_TCK);
    c->clk_tck = tck > 0 ? tck : 100;
    rt_buf_init(&c->rbuf, RT_CTX_FILE_MAX);
    return RT_OK;
}

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

bool rt_ctx_read_list(rt_sample_ctx *c, int fd, const char *path, rt_list_parse_fn parse, void *list, size_t *cap,
                      size_t elem, size_t name_off, size_t *n, uint64_t *sig)
{
    ssize_t len = rt_ctx_read_kept(c, fd, path, RT_READ_SHORT_LINES, path);
    if (len < 0)
        return false;
    void **arr = list;
    size_t got = parse(c->rbuf.data, (size_t)len, *arr, *cap);
    if (got > *cap) {
        if (rt_grow(list, cap, got, elem) < 0)
            return false;
        got = parse(c->rbuf.data, (size_t)len, *arr, *cap);
    }
    uint64_t h = 1469598103934665603ull ^ got;
    for (size_t i = 0; i < got; i++)
        h = rt_hash_str(h, (const char *)*arr + i * elem + name_off);
    *n = got;
    *sig = h;
    return true;
}

int rt_ctx_lists_new(rt_sample_ctx *c, const char *who, size_t n, void *states, size_t state_size, void *outs,
                     size_t out_size, void *ptrs)
{
    size_t m = n ? n : 1;
    void *s = calloc(m, state_size), *o = calloc(m, out_size), *p = calloc(m, sizeof(void *));
    if (!s || !o || !p) {
        rt_free_all(s, o, p);
        rt_log(&c->log, RT_LOG_WARN, "%s: out of memory", who);
        return -1;
    }
    *(void **)states = s;
    *(void **)outs = o;
    *(void **)ptrs = p;
    return 0;
}
