/* listen.c - the listener for wrapped programs' phase marks (rt_phase_listener_*, docs/contracts.md
 * §18): a unix stream socket (a path, or "@name" in the abstract namespace), non-blocking and
 * close-on-exec, whose connections carry lines of the phase protocol (parse.c). One epoll
 * descriptor is all the caller polls. Limits: 64 connections at once (more are accepted, closed
 * and counted refused, as are other users' but root's), 512 bytes a line (longer: too_long, the
 * rest discarded up to its LF), a half line at a connection's end (malformed), a connection idle
 * for 60 s closed, and a token bucket on starts (over it: flood, and the stop of a start dropped
 * so is dropped too, so a flood leaves no phase open and no stray stop). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../core/core.h"
#include "parse.h"
#include "phase.h"

#define MAX_CONNS 64
#define IDLE_SECS 60.0
#define T_MAX_AGE_NS 10000000000ULL /* a sender's t= older than this is not believed */
#define DROP_SLOTS 2048              /* names with dropped starts: a power of two */
#define DROP_NAMES 1024

typedef struct conn {
    int fd;
    int64_t pid;        /* the sender's, at connect (SO_PEERCRED) */
    double last_mono;   /* when it last sent something */
    size_t len;         /* bytes in buf */
    bool discard;       /* within a line too long: dropping up to its LF */
    char buf[RT_PHASE_LINE_MAX];
} conn;

typedef struct drop_slot {
    char *name;
    uint32_t n; /* starts dropped whose stop has not come */
} drop_slot;

struct rt_phase_listener {
    int lfd, epfd, evfd; /* the socket, the epoll set the caller polls, the "lines wait" bell */
    int spare;           /* held for the moment descriptors run out: a connection is then
                          * accepted with it and closed (refused), not left to ring forever */
    bool paused;         /* out of descriptors with no spare: the socket is out of the epoll set
                          * (the backlog waits) until a drain can take a spare again */
    char *path;          /* the socket's file (NULL: abstract) */
    dev_t dev;
    ino_t ino;
    conn *conns[MAX_CONNS];
    size_t n_conns;
    double rate, burst, tokens, tok_mono;
    rt_phase_counts counts;
    drop_slot *drops; /* DROP_SLOTS, taken at the first dropped start */
    size_t n_drops;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

rt_error rt_phase_listener_new(const rt_phase_listener_options *caller, rt_phase_listener **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_phase_listener_options o = RT_PHASE_LISTENER_OPTIONS_INIT;
    if (!caller || rt_struct_copy(&o, sizeof o, caller) < 0 || !o.address || !o.address[0])
        return RT_ERR_INVALID;
    if (!(o.rate_per_sec >= 0) || !(o.burst >= 0) || isinf(o.rate_per_sec) || isinf(o.burst))
        return RT_ERR_INVALID;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    socklen_t salen;
    bool abstract = o.address[0] == '@';
    size_t alen = strlen(o.address);
    if (alen >= sizeof sa.sun_path || (abstract && alen < 2))
        return RT_ERR_INVALID;
    if (abstract) {
        memcpy(sa.sun_path + 1, o.address + 1, alen - 1); /* sun_path[0] stays 0 */
        salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + alen);
    } else {
        memcpy(sa.sun_path, o.address, alen + 1);
        salen = (socklen_t)sizeof sa;
    }
    rt_phase_listener *l = calloc(1, sizeof *l);
    if (!l)
        return RT_ERR_NOMEM;
    l->lfd = l->epfd = l->evfd = -1;
    l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    l->rate = o.rate_per_sec > 0 ? o.rate_per_sec : 1000.0;
    l->burst = o.burst > 0 ? o.burst : 1000.0;
    l->tokens = l->burst;
    l->tok_mono = rt_mono_secs();
    rt_error err = RT_ERR_SYSTEM;
    if (!abstract && !(l->path = strdup(o.address))) {
        err = RT_ERR_NOMEM;
        goto fail;
    }
    struct stat st;
    if (l->path && lstat(l->path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(l->path); /* a socket left by a tracker that was killed; nothing else is removed */
    l->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->lfd < 0 || bind(l->lfd, (struct sockaddr *)&sa, salen) < 0)
        goto fail;
    if (l->path) {
        if (chmod(l->path, 0600) < 0 || lstat(l->path, &st) < 0) {
            int e = errno;
            unlink(l->path);
            errno = e;
            goto fail;
        }
        l->dev = st.st_dev;
        l->ino = st.st_ino;
    }
    if (listen(l->lfd, 4096) < 0)
        goto unbind;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->epfd < 0 || l->evfd < 0)
        goto unbind;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->lfd};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->lfd, &ev) < 0)
        goto unbind;
    ev.data.ptr = &l->evfd;
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &ev) < 0)
        goto unbind;
    *out = l;
    return RT_OK;
unbind:
    if (l->path) {
        int e = errno;
        unlink(l->path);
        errno = e;
    }
fail:
    {
        int e = errno;
        free(l->path);
        l->path = NULL;
        rt_phase_listener_free(l);
        errno = e;
    }
    return err;
}

int rt_phase_listener_poll_fd(const rt_phase_listener *l)
{
    return l ? l->epfd : -1;
}

rt_error rt_phase_listener_counts(const rt_phase_listener *l, rt_phase_counts *out, size_t out_size)
{
    if (!l || !out)
        return RT_ERR_INVALID;
    memcpy(out, &l->counts, out_size < sizeof l->counts ? out_size : sizeof l->counts);
    return RT_OK;
}

static void conn_close(rt_phase_listener *l, size_t i)
{
    conn *c = l->conns[i];
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
    l->conns[i] = l->conns[--l->n_conns];
}

static size_t conn_index(const rt_phase_listener *l, const conn *c)
{
    for (size_t i = 0; i < l->n_conns; i++)
        if (l->conns[i] == c)
            return i;
    return SIZE_MAX;
}

/* The slot of name in the table of dropped starts (insert: made when new); NULL when absent or
 * no room. */
static drop_slot *drop_find(rt_phase_listener *l, const char *name, bool insert)
{
    if (!l->drops) {
        if (!insert || !(l->drops = calloc(DROP_SLOTS, sizeof *l->drops)))
            return NULL;
    }
    uint32_t i = rt_phase_name_hash(name) & (DROP_SLOTS - 1);
    for (; l->drops[i].name; i = (i + 1) & (DROP_SLOTS - 1))
        if (strcmp(l->drops[i].name, name) == 0)
            return &l->drops[i];
    if (!insert || l->n_drops >= DROP_NAMES || !(l->drops[i].name = strdup(name)))
        return NULL;
    l->n_drops++;
    return &l->drops[i];
}

/* One line of connection c: a mark handed to fn, or a refusal counted. Returns 1 when handed. */
static int take_line(rt_phase_listener *l, const conn *c, const char *line, size_t len, rt_phase_mark_fn fn,
                     void *user)
{
    rt_phase_line pl;
    int why = rt_phase_parse_line(line, len, &pl);
    if (why == RT_PHASE_REFUSED_TOO_LONG) {
        l->counts.too_long++;
        return 0;
    }
    if (why != 0) {
        l->counts.malformed++;
        return 0;
    }
    char name[RT_PHASE_NAME_MAX + 1];
    memcpy(name, pl.name, pl.name_len);
    name[pl.name_len] = '\0';
    double now = rt_mono_secs();
    if (pl.kind == RT_PHASE_START) {
        l->tokens += (now - l->tok_mono) * l->rate;
        if (l->tokens > l->burst)
            l->tokens = l->burst;
        l->tok_mono = now;
        if (l->tokens < 1.0) {
            l->counts.flood++;
            drop_slot *d = drop_find(l, name, true);
            if (d)
                d->n++;
            return 0;
        }
        l->tokens -= 1.0;
    } else {
        drop_slot *d = drop_find(l, name, false);
        if (d && d->n > 0) { /* the stop of a start dropped */
            d->n--;
            l->counts.flood++;
            return 0;
        }
    }
    uint64_t now_ns = mono_ns();
    double real = rt_real_secs();
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    m.kind = pl.kind;
    m.name = name;
    m.pid = c->pid;
    m.timestamp_secs = real;
    if (pl.has_t && pl.t_ns <= now_ns && now_ns - pl.t_ns <= T_MAX_AGE_NS)
        m.timestamp_secs = real - (double)(now_ns - pl.t_ns) / 1e9;
    if (fn)
        fn(user, &m);
    return 1;
}

/* Takes the complete lines waiting in c's buffer, at most *left of them (SIZE_MAX: no bound),
 * each handed to fn or refused.
 * Returns whether a complete line still waits there. */
static bool take_lines(rt_phase_listener *l, conn *c, size_t *left, size_t *handed, rt_phase_mark_fn fn,
                       void *user)
{
    for (;;) {
        char *lf = memchr(c->buf, '\n', c->len);
        if (c->discard) {
            if (!lf) {
                c->len = 0;
                return false;
            }
            c->discard = false;
        } else if (!lf) {
            if (c->len < sizeof c->buf)
                return false; /* a line still coming */
            l->counts.too_long++; /* 512 bytes and no end in sight */
            if (*left > 0)
                (*left)--;
            c->discard = true;
            c->len = 0;
            return false;
        } else {
            if (*left == 0)
                return true;
            *handed += (size_t)take_line(l, c, c->buf, (size_t)(lf - c->buf) + 1, fn, user);
            (*left)--; /* a line refused counts too: a flood of bad lines is bounded as well */
        }
        size_t used = (size_t)(lf - c->buf) + 1;
        memmove(c->buf, lf + 1, c->len - used);
        c->len -= used;
    }
}

/* Reads what c has and hands its lines within *left. Returns false when c was closed (its end,
 * an error), true else; *waits says that a complete line is still in its buffer. */
static bool read_conn(rt_phase_listener *l, conn *c, size_t *left, size_t *handed, rt_phase_mark_fn fn,
                      void *user, bool *waits)
{
    for (;;) {
        if (take_lines(l, c, left, handed, fn, user)) {
            *waits = true;
            return true;
        }
        if (*left == 0)
            return true; /* the socket keeps the rest; its readiness brings us back */
        ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (n > 0) {
            c->len += (size_t)n;
            c->last_mono = rt_mono_secs();
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (c->len > 0 && !c->discard)
            l->counts.malformed++; /* a half line at the end */
        conn_close(l, conn_index(l, c));
        return false;
    }
}

/* Accepts every connection waiting; each new one is read at once (a one-shot sender has
 * usually written and gone). */
static void accept_all(rt_phase_listener *l, size_t *left, size_t *handed, rt_phase_mark_fn fn, void *user,
                       bool *waits)
{
    while (*left > 0) { /* past the bound the backlog waits (the socket stays readable) */
        int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if ((errno == EMFILE || errno == ENFILE) && l->spare < 0) {
                /* no spare to refuse one with: stop listening for now rather than let the
                 * caller's poll spin on a socket nothing can be taken from */
                if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->lfd, NULL) == 0)
                    l->paused = true;
                return;
            }
            if (errno == EMFILE || errno == ENFILE) {
                close(l->spare); /* out of descriptors: the first in the backlog is refused */
                fd = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd >= 0) {
                    close(fd);
                    l->counts.refused++;
                }
                l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (fd >= 0)
                    continue;
            }
            return; /* EAGAIN: none left */
        }
        struct ucred cr;
        socklen_t crlen = sizeof cr;
        int64_t pid = RT_NULL_I64;
        bool allowed = false; /* whose it is unknown: refused */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0 && crlen == sizeof cr) {
            pid = cr.pid > 0 ? cr.pid : RT_NULL_I64;
            allowed = cr.uid == 0 || cr.uid == getuid() || cr.uid == geteuid();
        }
        conn *c = NULL;
        if (!allowed || l->n_conns >= MAX_CONNS || !(c = calloc(1, sizeof *c))) {
            l->counts.refused++;
            close(fd);
            continue;
        }
        c->fd = fd;
        c->pid = pid;
        c->last_mono = rt_mono_secs();
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            l->counts.refused++;
            close(fd);
            free(c);
            continue;
        }
        l->conns[l->n_conns++] = c;
        read_conn(l, c, left, handed, fn, user, waits);
    }
}

/* At most max_marks lines are taken (a refused line counts), so at most max_marks marks are
 * handed; what is left keeps the poll descriptor readable. */
size_t rt_phase_listener_drain(rt_phase_listener *l, size_t max_marks, rt_phase_mark_fn fn, void *user)
{
    if (!l)
        return 0;
    size_t left = max_marks ? max_marks : SIZE_MAX, handed = 0;
    bool waits = false;
    uint64_t bell;
    if (read(l->evfd, &bell, sizeof bell) < 0) {
        /* not rung */
    }
    double now = rt_mono_secs();
    for (size_t i = l->n_conns; i-- > 0;)
        if (now - l->conns[i]->last_mono > IDLE_SECS)
            conn_close(l, i);
    if (l->paused && (l->spare >= 0 || (l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)) {
        struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &l->lfd};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->lfd, &lev) == 0)
            l->paused = false; /* descriptors again: listening again */
    }
    /* lines a bounded drain left in the buffers first, then what the kernel has */
    for (size_t i = 0; i < l->n_conns && left > 0; i++)
        if (take_lines(l, l->conns[i], &left, &handed, fn, user))
            waits = true;
    struct epoll_event ev[MAX_CONNS + 2];
    int n = left > 0 ? epoll_wait(l->epfd, ev, MAX_CONNS + 2, 0) : 0;
    for (int i = 0; i < n && left > 0; i++) {
        if (ev[i].data.ptr == &l->evfd)
            continue;
        if (ev[i].data.ptr == &l->lfd)
            accept_all(l, &left, &handed, fn, user, &waits);
        else
            read_conn(l, ev[i].data.ptr, &left, &handed, fn, user, &waits);
    }
    for (size_t i = 0; i < l->n_conns && !waits; i++)
        waits = memchr(l->conns[i]->buf, '\n', l->conns[i]->len) != NULL;
    if (waits) { /* the poll fd stays readable while lines wait in our buffers */
        uint64_t one = 1;
        if (write(l->evfd, &one, sizeof one) < 0) {
            /* the bell is already rung */
        }
    }
    return handed;
}

void rt_phase_listener_free(rt_phase_listener *l)
{
    if (!l)
        return;
    while (l->n_conns > 0)
        conn_close(l, l->n_conns - 1);
    if (l->lfd >= 0)
        close(l->lfd);
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->evfd >= 0)
        close(l->evfd);
    if (l->spare >= 0)
        close(l->spare);
    struct stat st;
    if (l->path && lstat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino)
        unlink(l->path); /* ours still, not another tracker's that took the name since */
    free(l->path);
    if (l->drops)
        for (size_t i = 0; i < DROP_SLOTS; i++)
            free(l->drops[i].name);
    free(l->drops);
    free(l);
}
