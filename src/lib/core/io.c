/* io.c - the one place files are read: whole-file reads from offset 0 into caller buffers,
 * retrying on EINTR and returning -errno, so sources can keep descriptors open and re-read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core.h"

/* The longest line of the lists read with RT_READ_SHORT_LINES (diskstats, net/dev, children). */
#define SHORT_LINE_MAX 256
/* The least a seq_file read hands over when more of the file follows: one page. */
#define SEQ_PAGE 4096

/* Reads from offset 0 until EOF (or the end mode tells without another read) or cap-1. */
static ssize_t pread_from_start(int fd, char *buf, size_t cap, rt_read_mode mode)
{
    if (cap == 0)
        return -EINVAL;
    size_t got = 0;
    while (got < cap - 1) {
        size_t want = cap - 1 - got;
        ssize_t n = pread(fd, buf + got, want, (off_t)got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            buf[got] = '\0';
            return -e;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (mode == RT_READ_SINGLE && (size_t)n < want)
            break;
        /* a seq_file read fills a page with whole lines: one that stops a line short of
         * it (or of what was asked) is the end */
        if (mode == RT_READ_SHORT_LINES && (size_t)n + SHORT_LINE_MAX < (want < SEQ_PAGE ? want : SEQ_PAGE))
            break;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

ssize_t rt_pread_all(int fd, char *buf, size_t cap)
{
    return pread_from_start(fd, buf, cap, RT_READ_TO_EOF);
}

ssize_t rt_pread_single(int fd, char *buf, size_t cap)
{
    return pread_from_start(fd, buf, cap, RT_READ_SINGLE);
}

int rt_open_at(int dirfd, const char *path)
{
    if (dirfd < 0 && dirfd != AT_FDCWD) /* a root that could not be opened */
        return -ENOENT;
    int fd;
    do {
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : fd;
}

int rt_fds_keep_below_at(long long soft)
{
    if (soft < 0 || soft > INT_MAX / 2)
        return INT_MAX;
    long long h = soft / 8;
    int headroom = h < 16 ? 16 : h > 4096 ? 4096 : (int)h;
    return soft > headroom ? (int)soft - headroom : 0;
}

int rt_fds_keep_below(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX / 2)
        return INT_MAX;
    return rt_fds_keep_below_at((long long)rl.rlim_cur);
}

void rt_fds_hold(int *fds, int n)
{
    bool small = rt_fds_keep_below() < 4096;
    for (int i = 0; i < n; i++)
        fds[i] = small ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0) : -1;
}

void rt_fds_give_back(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        rt_close(&fds[i]);
}

int rt_open_keep(int dirfd, const char *path)
{
    int fd = rt_open_at(dirfd, path);
    if (fd >= 0 && fd >= rt_fds_keep_below()) {
        close(fd);
        return -EMFILE;
    }
    return fd;
}

void rt_close(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

void rt_close_each(int *const *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rt_close(fds[i]);
}

/* write(2) on the fd *user as an rt_write_fn, again when a signal interrupted it. */
static long fd_write(void *user, const void *p, size_t n)
{
    ssize_t k;
    do
        k = write(*(const int *)user, p, n);
    while (k < 0 && errno == EINTR);
    return (long)k;
}

int rt_write_all(int fd, const void *p, size_t n)
{
    return rt_write_fn_all(fd_write, &fd, p, n);
}

int rt_write_fn_all(rt_write_fn fn, void *user, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        errno = 0;
        long k = fn(user, c, n);
        if (k <= 0 || (size_t)k > n) {
            if (errno == 0)
                errno = EIO;
            return -1;
        }
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

ssize_t rt_read_at(int dirfd, const char *path, char *buf, size_t cap)
{
    int fd = rt_open_at(dirfd, path);
    if (fd < 0) {
        if (cap)
            buf[0] = '\0';
        return fd;
    }
    ssize_t n = rt_pread_all(fd, buf, cap);
    close(fd);
    return n;
}

ssize_t rt_read_line_at(int dirfd, const char *path, char *buf, size_t cap)
{
    ssize_t n = rt_read_at(dirfd, path, buf, cap);
    if (n < 0)
        return n;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return n;
}

int rt_read_i64_at(int dirfd, const char *path, int64_t *out)
{
    char buf[64];
    ssize_t n = rt_read_line_at(dirfd, path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    if (n == 0)
        return -EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

void rt_buf_init(rt_buf *b, size_t max)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

int rt_buf_reserve(rt_buf *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    if (need > b->max)
        return -1;
    size_t cap = b->cap ? b->cap : b->max < 256 ? b->max : 256;
    while (cap < need)
        cap = cap > b->max / 2 ? b->max : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int rt_buf_append(rt_buf *b, const void *p, size_t n)
{
    if (n > b->max - b->len || rt_buf_reserve(b, b->len + n + 1) < 0)
        return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

void rt_buf_free(rt_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

ssize_t rt_read_fd_grow(int fd, rt_buf *b, rt_read_mode mode)
{
    if (rt_buf_reserve(b, 4096) < 0)
        return -ENOMEM;
    for (;;) {
        ssize_t n = pread_from_start(fd, b->data, b->cap, mode);
        if (n < 0)
            return n;
        if ((size_t)n < b->cap - 1) {
            b->len = (size_t)n;
            return n;
        }
        if (b->cap >= b->max) { /* full at the maximum: the end, or more than fits? */
            char probe;
            ssize_t more;
            do {
                more = pread(fd, &probe, 1, n);
            } while (more < 0 && errno == EINTR);
            b->len = (size_t)n;
            return more == 0 ? n : -EFBIG;
        }
        /* Filled the buffer: the file may be longer. Grow and read again from the start. */
        if (b->cap >= b->max || rt_buf_reserve(b, b->cap * 2 > b->max ? b->max : b->cap * 2) < 0) {
            b->len = (size_t)n;
            return -EFBIG;
        }
    }
}
