/* wire.c - writing, sending and receiving the bridge's messages (wire.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"

void rt_wire_init(rt_wire *w)
{
    rt_buf_init(&w->b, RT_WIRE_MAX + 16);
    w->pos = 0;
    w->bad = false;
}

void rt_wire_free(rt_wire *w)
{
    if (w->b.data)
        explicit_bzero(w->b.data, w->b.cap); /* a token or a key may have been in it */
    rt_buf_free(&w->b);
    w->pos = 0;
    w->bad = false;
}

/* Appends n bytes. The buffer grows by a copy whose old block is wiped before it is freed
 * (realloc would leave a token written early in freed memory). */
static void put(rt_wire *w, const void *p, size_t n)
{
    rt_buf *b = &w->b;
    if (w->bad)
        return;
    if (n > b->max - b->len - 1) {
        w->bad = true;
        return;
    }
    size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
            cap = cap > b->max / 2 ? b->max : cap * 2;
        char *q = malloc(cap);
        if (!q) {
            w->bad = true;
            return;
        }
        if (b->data) {
            memcpy(q, b->data, b->len);
            explicit_bzero(b->data, b->cap);
            free(b->data);
        }
        b->data = q;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void put_le(rt_wire *w, char tag, uint64_t v, size_t n)
{
    unsigned char b[9];
    size_t k = 0;
    if (tag)
        b[k++] = (unsigned char)tag;
    for (size_t i = 0; i < n; i++)
        b[k++] = (unsigned char)(v >> (8 * i));
    put(w, b, k);
}

void rt_wire_put_i64(rt_wire *w, int64_t v)
{
    put_le(w, 'i', (uint64_t)v, 8);
}

void rt_wire_put_f64(rt_wire *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_le(w, 'd', u, 8);
}

void rt_wire_put_bytes(rt_wire *w, const void *p, size_t n)
{
    if (!p) {
        put(w, "n", 1);
        return;
    }
    if (n > RT_WIRE_MAX) {
        w->bad = true;
        return;
    }
    put_le(w, 's', n, 4);
    put(w, p, n);
    put(w, "", 1);
}

void rt_wire_put_str(rt_wire *w, const char *s)
{
    rt_wire_put_bytes(w, s, s ? strlen(s) : 0);
}

/* Takes the tag and n value bytes (little-endian) of the next item; false (bad) when absent. */
static bool get_le(rt_wire *w, char tag, size_t n, uint64_t *v)
{
    *v = 0;
    if (w->bad || w->pos >= w->b.len || w->b.data[w->pos] != tag || w->b.len - w->pos - 1 < n) {
        w->bad = true;
        return false;
    }
    const unsigned char *p = (const unsigned char *)w->b.data + w->pos + 1;
    for (size_t i = 0; i < n; i++)
        *v |= (uint64_t)p[i] << (8 * i);
    w->pos += 1 + n;
    return true;
}

int64_t rt_wire_get_i64(rt_wire *w)
{
    uint64_t v;
    get_le(w, 'i', 8, &v);
    return (int64_t)v;
}

double rt_wire_get_f64(rt_wire *w)
{
    uint64_t v;
    double d = 0;
    if (get_le(w, 'd', 8, &v))
        memcpy(&d, &v, sizeof d);
    return d;
}

const char *rt_wire_get_bytes(rt_wire *w, size_t *n)
{
    if (n)
        *n = 0;
    if (!w->bad && w->pos < w->b.len && w->b.data[w->pos] == 'n') {
        w->pos++;
        return NULL;
    }
    uint64_t len;
    if (!get_le(w, 's', 4, &len))
        return NULL;
    if (w->b.len - w->pos < len + 1 || w->b.data[w->pos + len] != '\0') {
        w->bad = true;
        return NULL;
    }
    const char *p = w->b.data + w->pos;
    w->pos += len + 1;
    if (n)
        *n = len;
    return p;
}

/* Waits until fd is ready for events (POLLIN or POLLOUT), the deadline (or *stop) passing
 * first. Returns 1 when ready, 0 to look again (interrupted, or *stop checked), -1 with errno
 * (ETIMEDOUT at the deadline or *stop, else poll's). */
static int wait_ready(int fd, short events, double deadline, const _Atomic double *stop)
{
    double now = rt_mono_secs(), until = deadline;
    if (stop && atomic_load_explicit(stop, memory_order_relaxed) < until)
        until = atomic_load_explicit(stop, memory_order_relaxed);
    if (now >= until) {
        errno = ETIMEDOUT;
        return -1;
    }
    double wait = until - now;
    int ms = stop ? 100 : isinf(wait) ? -1 : wait > 60 ? 60000 : (int)ceil(wait * 1000);
    if (stop && wait < 0.1)
        ms = (int)ceil(wait * 1000);
    struct pollfd pf = {.fd = fd, .events = events};
    int r = poll(&pf, 1, ms);
    if (r < 0 && errno != EINTR)
        return -1;
    return r > 0;
}

int rt_wire_send(int fd, rt_wire *w, double deadline, const _Atomic double *stop)
{
    if (w->bad || w->b.len > RT_WIRE_MAX) {
        errno = ENOMEM;
        return -1;
    }
    unsigned char len[4];
    for (int i = 0; i < 4; i++)
        len[i] = (unsigned char)(w->b.len >> (8 * i));
    struct iovec v[2] = {{len, 4}, {w->b.data, w->b.len}};
    struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
    size_t left = 4 + w->b.len;
    while (left > 0) {
        int r = wait_ready(fd, POLLOUT, deadline, stop);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return -1;
        left -= (size_t)k;
        while (k > 0 && m.msg_iovlen > 0) { /* past what went out */
            size_t take = (size_t)k < m.msg_iov->iov_len ? (size_t)k : m.msg_iov->iov_len;
            m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + take;
            m.msg_iov->iov_len -= take;
            k -= (ssize_t)take;
            if (m.msg_iov->iov_len == 0)
                m.msg_iov++, m.msg_iovlen--;
        }
    }
    return 0;
}

/* Reads exactly n bytes into p before the deadline (or *stop). Returns 0 or -1 with errno. */
static int read_full(int fd, void *p, size_t n, double deadline, const _Atomic double *stop)
{
    size_t got = 0;
    while (got < n) {
        int r = wait_ready(fd, POLLIN, deadline, stop);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        ssize_t k = read(fd, (char *)p + got, n - got);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return -1;
        if (k == 0) {
            errno = EPIPE;
            return -1;
        }
        got += (size_t)k;
    }
    return 0;
}

int rt_wire_recv(int fd, rt_wire *w, double deadline, const _Atomic double *stop)
{
    rt_wire_free(w);
    rt_wire_init(w);
    unsigned char len[4];
    if (read_full(fd, len, 4, deadline, stop) < 0)
        return -1;
    size_t n = (size_t)len[0] | (size_t)len[1] << 8 | (size_t)len[2] << 16 | (size_t)len[3] << 24;
    if (n > RT_WIRE_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    if (rt_buf_reserve(&w->b, n + 1) < 0) {
        errno = ENOMEM;
        return -1;
    }
    if (read_full(fd, w->b.data, n, deadline, stop) < 0)
        return -1;
    w->b.len = n;
    w->b.data[n] = '\0';
    return 0;
}
