/* prom_server.c - the Prometheus /metrics server: a listening socket bound on the caller's
 * thread, one thread polling it, a wake-up eventfd and non-blocking clients (bounded in number,
 * time and buffer), and the published bodies as immutable, reference-counted buffers. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "phase_label.h"
#include "prom_http.h"
#include "prom_text.h"
#include "../core/clock.h"
#include "../core/lasterr.h"
#include "../core/job.h"
#include "../source/cloud.h"

#define DEFAULT_MAX_CLIENTS 64
#define DEFAULT_TIMEOUT_SECS 10.0
#define LINGER_SECS 1.0        /* the most a closing client is drained after its last reply */
#define ACCEPT_PAUSE_SECS 0.1  /* accepts rest this long after EMFILE and the like */
#define ACCEPTS_PER_ROUND 256  /* accepts per poll round, so that clients are served between */
#define INITIAL_BODY_HINT 4096

/* A body being served: immutable once made; freed by whoever drops the last reference. */
typedef struct prom_body {
    atomic_size_t refs;
    size_t len;
    char data[];
} prom_body;

enum { C_FREE, C_READ, C_WRITE, C_LINGER };

/* One connection. Its memory is the slot's, reused by the next connection there. */
typedef struct client {
    int fd;
    int state;          /* C_* */
    int close_after;    /* close once the reply is sent */
    double deadline;    /* monotonic: the request head, or the reply's sending, ends by then */
    double last_active; /* monotonic: the last byte moved (or the accept) */
    size_t inlen;       /* bytes of in[] held (a request head, perhaps pipelined ones) */
    size_t headlen, headoff; /* the reply's status line and headers (and a short body) */
    prom_body *body;    /* a reference to the body being sent, or NULL */
    size_t bodyoff;
    char head[512];
    char in[RT_PROM_HEAD_MAX];
} client;

/* What is logged at most once (bits of rt_prom_server.logged): what fails, once per kind. */
enum { LOG_ACCEPT_FDS = 1, LOG_ACCEPT = 2, LOG_POLL = 4, LOG_FULL = 8, LOG_TIMEOUT = 16, LOG_NOMEM = 32 };

struct rt_prom_server {
    int lfd, wake_fd, port;
    pthread_t thread;
    atomic_int stop;
    atomic_uint logged;
    rt_logger log;
    size_t max_clients;
    double timeout;
    rt_clock *clock; /* the deadlines' and pauses' clock (NULL: the real one) */
    /* the server thread's own */
    client **clients;     /* max_clients slots, each allocated at its first connection */
    struct pollfd *pfds;  /* 2 + max_clients */
    size_t *pfd_slot;     /* the slot of each pfds entry from 2 on */
    double accept_pause_until;
    /* the bodies served, exchanged under mu */
    pthread_mutex_t mu;
    prom_body *text, *om;
    rt_handle_err err; /* the last failure met, for rt_prom_errmsg (its msg under mu) */
    atomic_size_t hint[2]; /* the last bodies' lengths: the first guess of the next */
    /* what the formatter labels series with (owned copies; the host under fmt_mu) */
    rt_job job;
    int have_job;
    rt_host host;
    int have_host;
    void *job_block; /* the job's strings and tags (rt_job_dup) */
    char *host_strings;
    rt_cloud_discovery *cloud;
    pthread_mutex_t fmt_mu; /* the caller's side: host and hints while a body is formatted */
    rt_phase_label phase;   /* the phase label's values so far (under fmt_mu; 0.14) */
};

/* Whether a message of this kind is to be logged: true the first time only. */
static bool first_time(rt_prom_server *srv, unsigned kind)
{
    return !(atomic_fetch_or(&srv->logged, kind) & kind);
}

/* ---- bodies --------------------------------------------------------------------------------- */

static prom_body *body_new(size_t cap)
{
    prom_body *b = malloc(sizeof *b + cap);
    if (b) {
        atomic_init(&b->refs, 1);
        b->len = 0;
    }
    return b;
}

static void body_unref(prom_body *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1)
        free(b);
}

/* A new reference to the body the next reply of this kind sends (the lock only around taking
 * references). The OpenMetrics body is made here, on the server's thread, from the text body at
 * the first request for it after a publish (rt_prom_openmetrics_of), and kept until the next
 * publish; out of memory, the text body is sent (the Accept of Prometheus takes it too), and
 * *openmetrics says which was taken. Only this thread makes one: another that was installed
 * meanwhile (rt_prom_set_bodies) is left in place. */
static prom_body *body_take(rt_prom_server *srv, int *openmetrics)
{
    pthread_mutex_lock(&srv->mu);
    prom_body *text = srv->text, *om = srv->om;
    atomic_fetch_add(&(*openmetrics && om ? om : text)->refs, 1);
    pthread_mutex_unlock(&srv->mu);
    if (!*openmetrics || om)
        return *openmetrics ? om : text;
    size_t cap = text->len + text->len / 8 + 64;
    prom_body *b = body_new(cap);
    if (b) {
        rt_ob o = {.buf = b->data, .cap = cap};
        rt_prom_openmetrics_of(text->data, text->len, &o);
        b->len = o.len;
        if (o.len > cap) { /* cannot be: the renames only shorten, "# EOF" is within the slack */
            body_unref(b);
            b = NULL;
        }
    }
    if (!b) {
        *openmetrics = 0;
        return text;
    }
    pthread_mutex_lock(&srv->mu);
    if (srv->text == text && !srv->om) { /* still the body it was made from: kept for the next */
        srv->om = b;
        atomic_fetch_add(&b->refs, 1);
    }
    pthread_mutex_unlock(&srv->mu);
    body_unref(text);
    return b;
}

/* Makes text and om the served bodies (taking their references); the old ones are dropped
 * after the lock, freed once no client sends them any more. */
static void bodies_install(rt_prom_server *srv, prom_body *text, prom_body *om)
{
    pthread_mutex_lock(&srv->mu);
    prom_body *old_text = srv->text, *old_om = srv->om;
    srv->text = text;
    srv->om = om;
    pthread_mutex_unlock(&srv->mu);
    body_unref(old_text);
    body_unref(old_om);
}

/* Formats sample (NULL: only resource_tracker_info) in the text format or OpenMetrics into a
 * new body, sized from the last one's length. NULL when out of memory. */
static prom_body *body_format(rt_prom_server *srv, const rt_sample *sample, const rt_cloud *cloud, int om,
                              const char *phase)
{
    size_t cap = atomic_load(&srv->hint[om]);
    for (int attempt = 0; attempt < 3; attempt++) {
        prom_body *b = body_new(cap);
        if (!b)
            return NULL;
        size_t n = rt_prom_format_phase(sample, srv->have_job ? &srv->job : NULL, srv->have_host ? &srv->host : NULL,
                                        cloud, om, phase, b->data, cap);
        if (n < cap) {
            b->len = n;
            atomic_store(&srv->hint[om], n + n / 16 + 256); /* room for the body to grow a little */
            return b;
        }
        free(b);
        cap = n + 1;
    }
    return NULL;
}

/* Formats the text body of sample and installs it (the OpenMetrics one is made from it when a
 * client asks: body_take). RT_OK or RT_ERR_NOMEM (nothing changed). */
static rt_error publish(rt_prom_server *srv, const rt_sample *sample)
{
    const rt_cloud *cloud = srv->cloud ? rt_cloud_result(srv->cloud, 0) : NULL;
    pthread_mutex_lock(&srv->fmt_mu); /* the server's thread never takes it */
    prom_body *text = body_format(srv, sample, cloud, 0, rt_phase_label_of(&srv->phase, sample));
    pthread_mutex_unlock(&srv->fmt_mu);
    if (!text) {
        rt_handle_err_set(&srv->err, &srv->mu, "out of memory formatting /metrics");
        if (first_time(srv, LOG_NOMEM))
            rt_log(&srv->log, RT_LOG_WARN, "prometheus: out of memory formatting /metrics; the previous figures "
                   "stay");
        return RT_ERR_NOMEM;
    }
    bodies_install(srv, text, NULL);
    return RT_OK;
}

rt_error rt_prom_set_bodies(rt_prom_server *srv, const char *text, size_t text_len, const char *om, size_t om_len)
{
    if (!srv || (!text && text_len) || (!om && om_len))
        return RT_ERR_INVALID;
    prom_body *t = body_new(text_len + 1), *o = om ? body_new(om_len + 1) : NULL;
    if (!t || (om && !o)) {
        free(t);
        free(o);
        return RT_ERR_NOMEM;
    }
    if (text_len)
        memcpy(t->data, text, text_len);
    t->len = text_len;
    if (o) {
        if (om_len)
            memcpy(o->data, om, om_len);
        o->len = om_len;
    }
    bodies_install(srv, t, o);
    return RT_OK;
}

/* ---- clients -------------------------------------------------------------------------------- */

/* Closes the connection. abort: with a reset, dropping what the kernel still holds to send (a
 * client that does not read must not keep a reply's buffers alive after its close). */
static void client_close(client *c, int abort)
{
    if (c->fd >= 0 && abort) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    if (c->fd >= 0)
        close(c->fd);
    body_unref(c->body);
    c->body = NULL;
    c->fd = -1;
    c->state = C_FREE;
}

/* Prepares the reply to a request (rq NULL for 400 and 431): status line, headers and, but for
 * HEAD, a reference to the body to send. The connection closes after it when close_after. */
static void client_reply(rt_prom_server *srv, client *c, int status, const rt_prom_request *rq, int close_after,
                         double now)
{
    static const char text_type[] = "text/plain; version=0.0.4; charset=utf-8";
    static const char om_type[] = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    const char *reason = "OK", *extra = "", *type = "text/plain; charset=utf-8", *small = "";
    prom_body *body = NULL;
    switch (status) {
    case 200: {
        int om = rq->openmetrics;
        body = body_take(srv, &om);
        type = om ? om_type : text_type;
        break;
    }
    case 404: reason = "Not Found", small = "Not Found\n"; break;
    case 405: reason = "Method Not Allowed", small = "Method Not Allowed\n", extra = "Allow: GET, HEAD\r\n"; break;
    case 431:
        reason = "Request Header Fields Too Large", small = "Request Header Fields Too Large\n";
        break;
    default: status = 400, reason = "Bad Request", small = "Bad Request\n"; break;
    }
    int head_only = rq && rq->method == RT_PROM_HEAD;
    size_t len = body ? body->len : strlen(small);
    const char *conn = close_after ? "Connection: close\r\n"
                       : rq && rq->version_minor == 0 ? "Connection: keep-alive\r\n"
                                                      : "";
    int n = snprintf(c->head, sizeof c->head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n%s",
                     status, reason, type, len, extra, conn, head_only ? "" : small);
    c->headlen = n > 0 && (size_t)n < sizeof c->head ? (size_t)n : 0; /* always fits: fixed texts */
    c->headoff = 0;
    c->bodyoff = 0;
    if (head_only || c->headlen == 0) {
        body_unref(body);
        body = NULL;
    }
    c->body = body;
    c->close_after = close_after || c->headlen == 0;
    c->state = C_WRITE;
    c->deadline = now + srv->timeout;
}

/* Sends what the socket takes of the reply. Returns 1 when the reply is all sent and the client
 * reads its next request, 0 otherwise (still sending, lingering before the close, or closed). */
static int client_send(rt_prom_server *srv, client *c, double now)
{
    while (c->headoff < c->headlen || (c->body && c->bodyoff < c->body->len)) {
        struct iovec iov[2];
        int n = 0;
        if (c->headoff < c->headlen)
            iov[n++] = (struct iovec){c->head + c->headoff, c->headlen - c->headoff};
        if (c->body && c->bodyoff < c->body->len)
            iov[n++] = (struct iovec){c->body->data + c->bodyoff, c->body->len - c->bodyoff};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                client_close(c, 1); /* EPIPE, ECONNRESET: the client went away */
            return 0;
        }
        c->last_active = now;
        size_t sent = (size_t)w, h = c->headlen - c->headoff;
        if (sent < h) {
            c->headoff += sent;
            continue;
        }
        c->headoff = c->headlen;
        c->bodyoff += sent - h;
    }
    body_unref(c->body);
    c->body = NULL;
    if (c->close_after) { /* drain what the client still sends, so that the close is no reset */
        shutdown(c->fd, SHUT_WR);
        c->state = C_LINGER;
        c->inlen = 0;
        c->deadline = now + (srv->timeout < LINGER_SECS ? srv->timeout : LINGER_SECS);
        return 0;
    }
    c->state = C_READ;
    c->deadline = now + srv->timeout;
    return 1;
}

/* Answers the complete request heads in c->in, one after the other while each reply goes out
 * at once (pipelining). */
static void client_serve(rt_prom_server *srv, client *c, double now)
{
    while (c->state == C_READ) {
        rt_prom_request rq;
        rt_prom_parse r = rt_prom_parse_request(c->in, c->inlen, &rq);
        if (r == RT_PROM_MORE)
            return;
        if (r != RT_PROM_DONE) {
            client_reply(srv, c, r == RT_PROM_TOO_LARGE ? 431 : 400, NULL, 1, now);
        } else {
            int metrics = rq.path_len == 8 && memcmp(rq.path, "/metrics", 8) == 0;
            int status = !metrics ? 404 : rq.method == RT_PROM_OTHER ? 405 : 200;
            client_reply(srv, c, status, &rq, !rq.keep_alive || rq.has_body, now);
            memmove(c->in, c->in + rq.consumed, c->inlen - rq.consumed);
            c->inlen -= rq.consumed;
        }
        if (!client_send(srv, c, now))
            return;
    }
}

/* Reads what the client sent (POLLIN, POLLHUP or POLLERR), and serves or drains it. */
static void client_readable(rt_prom_server *srv, client *c, double now)
{
    char drain[4096];
    int lingering = c->state == C_LINGER;
    char *dst = lingering ? drain : c->in + c->inlen;
    size_t room = lingering ? sizeof drain : sizeof c->in - c->inlen;
    if (room == 0) { /* cannot happen: the parser answers 431 first */
        client_close(c, 1);
        return;
    }
    ssize_t r = recv(c->fd, dst, room, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (r <= 0) {
        client_close(c, 0); /* the client closed, or the connection failed */
        return;
    }
    c->last_active = now;
    if (!lingering) {
        c->inlen += (size_t)r;
        client_serve(srv, c, now);
    }
}

/* ---- the server's thread --------------------------------------------------------------------- */

/* The slot a new connection takes: a free one, else the one idle the longest, closed. */
static client *slot_for_new(rt_prom_server *srv)
{
    client *oldest = NULL;
    for (size_t i = 0; i < srv->max_clients; i++) {
        client *c = srv->clients[i];
        if (!c) {
            c = srv->clients[i] = malloc(sizeof *c);
            if (!c)
                break; /* no memory for a new slot: replace an old client (closed below) */
            c->fd = -1;
            c->state = C_FREE;
            c->body = NULL;
        }
        if (c->state == C_FREE)
            return c;
        if (!oldest || c->last_active < oldest->last_active)
            oldest = c;
    }
    if (oldest) {
        if (first_time(srv, LOG_FULL))
            rt_log(&srv->log, RT_LOG_INFO, "prometheus: %zu clients connected: each new connection replaces the one "
                   "idle the longest", srv->max_clients);
        client_close(oldest, 1);
    }
    return oldest;
}

/* Accepts what the listening socket has (a bounded number per round). */
static void accept_clients(rt_prom_server *srv, double now)
{
    for (int i = 0; i < ACCEPTS_PER_ROUND; i++) {
        int fd = accept4(srv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e == EAGAIN || e == EWOULDBLOCK)
                return;
            if (e == EINTR || e == ECONNABORTED || e == EPROTO || e == ENETDOWN || e == ENOPROTOOPT ||
                e == EHOSTDOWN || e == ENONET || e == EHOSTUNREACH || e == EOPNOTSUPP || e == ENETUNREACH)
                continue; /* that connection's trouble, not the socket's */
            int fds = e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
            rt_handle_err_set(&srv->err, &srv->mu, "cannot accept connections (%s)", strerror(e));
            if (first_time(srv, fds ? LOG_ACCEPT_FDS : LOG_ACCEPT))
                rt_log(&srv->log, RT_LOG_WARN, "prometheus: cannot accept connections (%s); accepts pause briefly "
                       "whenever this happens", strerror(e));
            srv->accept_pause_until = now + ACCEPT_PAUSE_SECS;
            return;
        }
        client *c = slot_for_new(srv);
        if (!c) {
            close(fd);
            rt_handle_err_set(&srv->err, &srv->mu, "out of memory for a client; connection refused");
            if (first_time(srv, LOG_NOMEM))
                rt_log(&srv->log, RT_LOG_WARN, "prometheus: out of memory for a client; connection refused");
            continue;
        }
        c->fd = fd;
        c->state = C_READ;
        c->close_after = 0;
        c->inlen = 0;
        c->headlen = c->headoff = 0;
        c->bodyoff = 0;
        c->last_active = now;
        c->deadline = now + srv->timeout;
    }
}

/* Closes the clients past their deadline; returns the nearest deadline left (or `until`). */
static double expire_clients(rt_prom_server *srv, double now, double until)
{
    for (size_t i = 0; i < srv->max_clients; i++) {
        client *c = srv->clients[i];
        if (!c || c->state == C_FREE)
            continue;
        if (now >= c->deadline) {
            if (c->state != C_LINGER)
                if (first_time(srv, LOG_TIMEOUT))
                    rt_log(&srv->log, RT_LOG_DEBUG, "prometheus: a client did not send its request, or take its "
                           "reply, within %g s: closed (logged once)", srv->timeout);
            client_close(c, c->state == C_WRITE);
        } else if (c->deadline < until) {
            until = c->deadline;
        }
    }
    return until;
}

/* The server's thread: polls the wake-up eventfd, the listening socket (unless accepts rest)
 * and every client for what its state waits on; never blocks on one client (every socket is
 * non-blocking). Ends when rt_prom_free sets stop and writes the eventfd. */
static void *server_main(void *arg)
{
    rt_prom_server *srv = arg;
    while (!atomic_load(&srv->stop)) {
        double now = rt_clock_now(srv->clock);
        double until = expire_clients(srv, now, now + 3600);
        nfds_t n = 0;
        srv->pfds[n++] = (struct pollfd){.fd = srv->wake_fd, .events = POLLIN};
        int listening = now >= srv->accept_pause_until;
        srv->pfds[n++] = (struct pollfd){.fd = listening ? srv->lfd : -1, .events = POLLIN};
        if (!listening && srv->accept_pause_until < until)
            until = srv->accept_pause_until;
        for (size_t i = 0; i < srv->max_clients; i++) {
            client *c = srv->clients[i];
            if (!c || c->state == C_FREE)
                continue;
            srv->pfd_slot[n] = i;
            srv->pfds[n++] = (struct pollfd){.fd = c->fd, .events = c->state == C_WRITE ? POLLOUT : POLLIN};
        }
        int r = rt_clock_poll(srv->clock, srv->pfds, n, until, srv->wake_fd);
        if (r < 0) {
            if (errno != EINTR) {
                int e = errno;
                rt_handle_err_set(&srv->err, &srv->mu, "poll failed (%s)", strerror(e));
                errno = e;
                if (first_time(srv, LOG_POLL))
                    rt_log(&srv->log, RT_LOG_WARN, "prometheus: poll failed (%s)", strerror(errno));
                usleep(10000);
            }
            continue;
        }
        now = rt_clock_now(srv->clock);
        if (srv->pfds[0].revents) {
            uint64_t v;
            ssize_t got = read(srv->wake_fd, &v, sizeof v); /* only resets it: stop is the flag */
            (void)got;
        }
        for (nfds_t k = 2; k < n; k++) {
            short ev = srv->pfds[k].revents;
            client *c = srv->clients[srv->pfd_slot[k]];
            if (!ev || c->fd != srv->pfds[k].fd)
                continue;
            if (c->state == C_WRITE) {
                if (ev & (POLLERR | POLLNVAL))
                    client_close(c, 1);
                else if (client_send(srv, c, now))
                    client_serve(srv, c, now); /* pipelined requests already read */
            } else {
                client_readable(srv, c, now);
            }
        }
        if (srv->pfds[1].revents & POLLIN)
            accept_clients(srv, now);
    }
    return NULL;
}

/* ---- the public API ---------------------------------------------------------------------------- */

/* Copies the strings the n slots point to (NULL ones stay NULL) into one new block, pointing
 * the slots at the copies. Returns the block (free it to free them all), or NULL. */
static char *own_strings(const char **const *slots, size_t n)
{
    size_t bytes = 1;
    for (size_t i = 0; i < n; i++)
        bytes += *slots[i] ? strlen(*slots[i]) + 1 : 0;
    char *block = malloc(bytes), *w = block;
    for (size_t i = 0; block && i < n; i++) {
        if (*slots[i]) {
            size_t len = strlen(*slots[i]) + 1;
            memcpy(w, *slots[i], len);
            *slots[i] = w;
            w += len;
        }
    }
    return block;
}

/* Copies the job (fields and tags) into srv; NULL: none. Returns RT_OK, RT_ERR_INVALID
 * (struct_size too small), RT_ERR_NOMEM. */
static rt_error copy_job(rt_prom_server *srv, const rt_job *job)
{
    rt_error err = rt_job_dup(job, &srv->job, &srv->job_block);
    srv->have_job = err == RT_OK && job != NULL;
    return err;
}

/* Makes a copy of host (NULL: none) the host of the next bodies. Called with fmt_mu held (or
 * before the thread starts). Returns RT_OK or RT_ERR_NOMEM (the previous host stays). */
static rt_error copy_host(rt_prom_server *srv, const rt_host *host)
{
    rt_host h;
    memset(&h, 0, sizeof h);
    char *block = NULL;
    if (host) {
        h = *host;
        const char **slots[] = {&h.hostname, &h.host_id, &h.ip, &h.cpu_model, &h.gpu_model, &h.kernel, &h.os,
                                &h.allocation};
        block = own_strings(slots, RT_ARRAY_LEN(slots));
        if (!block)
            return RT_ERR_NOMEM;
    }
    free(srv->host_strings);
    srv->host_strings = block;
    srv->host = h;
    srv->have_host = host != NULL;
    return RT_OK;
}

/* Parses address (NULL: 127.0.0.1; an IPv6 one may come in brackets) and port into *ss. */
static int make_addr(const char *address, int port, struct sockaddr_storage *ss, socklen_t *sslen)
{
    char a[64];
    const char *s = address ? address : "127.0.0.1";
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        s++;
        n -= 2;
    }
    if (n >= sizeof a)
        return -1;
    memcpy(a, s, n);
    a[n] = '\0';
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, a, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *sslen = sizeof *v4;
        return 0;
    }
    if (inet_pton(AF_INET6, a, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *sslen = sizeof *v6;
        return 0;
    }
    return -1;
}

/* Makes the listening socket; returns it, or -1 with errno set. *port gets the bound port. */
static int listen_on(const struct sockaddr_storage *ss, socklen_t sslen, int *port)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    struct sockaddr_storage got;
    socklen_t gotlen = sizeof got;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (const struct sockaddr *)ss, sslen) < 0 || listen(fd, SOMAXCONN) < 0 || getsockname(fd, (struct sockaddr *)&got, &gotlen) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                            : ((struct sockaddr_in *)&got)->sin_port);
    return fd;
}

/* Closes every client and socket and frees srv (its thread, if any, has ended). */
static void release(rt_prom_server *srv)
{
    for (size_t i = 0; srv->clients && i < srv->max_clients; i++) {
        if (srv->clients[i]) {
            client_close(srv->clients[i], srv->clients[i]->state == C_WRITE);
            free(srv->clients[i]);
        }
    }
    rt_close_all(&srv->lfd, &srv->wake_fd);
    body_unref(srv->text);
    body_unref(srv->om);
    pthread_mutex_destroy(&srv->mu);
    pthread_mutex_destroy(&srv->fmt_mu);
    rt_phase_label_free(&srv->phase);
    rt_free_all(srv->clients, srv->pfds, srv->pfd_slot, srv->job_block, srv->host_strings);
    rt_cloud_free(srv->cloud);
    free(srv);
}

rt_error rt_prom_start(const rt_prom_options *opts, rt_prom_server **out)
{
    return rt_prom_start_clock(opts, NULL, out);
}

rt_error rt_prom_start_clock(const rt_prom_options *opts, rt_clock *clock, rt_prom_server **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    rt_prom_options o = RT_PROM_OPTIONS_INIT;
    if (!opts || rt_struct_copy(&o, sizeof o, opts) < 0 || o.port < 0 || o.port > 65535 ||
        !(o.client_timeout_secs >= 0) || o.client_timeout_secs > 1e6)
        return RT_ERR_INVALID;
    struct sockaddr_storage ss;
    socklen_t sslen = 0;
    if (make_addr(o.address, o.port, &ss, &sslen) < 0)
        return RT_ERR_INVALID;
    rt_prom_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return RT_ERR_NOMEM;
    srv->lfd = srv->wake_fd = -1;
    srv->log = (rt_logger){o.log, o.log_user};
    srv->max_clients = o.max_clients ? o.max_clients : DEFAULT_MAX_CLIENTS;
    srv->timeout = o.client_timeout_secs > 0 ? o.client_timeout_secs : DEFAULT_TIMEOUT_SECS;
    srv->cloud = rt_cloud_ref(o.cloud); /* ours: the caller may free its handle */
    srv->clock = clock;
    atomic_init(&srv->stop, 0);
    atomic_init(&srv->logged, 0u);
    atomic_init(&srv->hint[0], INITIAL_BODY_HINT);
    atomic_init(&srv->hint[1], INITIAL_BODY_HINT);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_mutex_init(&srv->fmt_mu, NULL);
    rt_error err = RT_ERR_NOMEM;
    srv->clients = srv->max_clients < SIZE_MAX / sizeof(struct pollfd) - 2
                       ? calloc(srv->max_clients, sizeof *srv->clients) : NULL;
    srv->pfds = srv->clients ? calloc(srv->max_clients + 2, sizeof *srv->pfds) : NULL;
    srv->pfd_slot = srv->pfds ? calloc(srv->max_clients + 2, sizeof *srv->pfd_slot) : NULL;
    if (!srv->pfd_slot || (err = copy_job(srv, o.job)) != RT_OK ||
        (err = copy_host(srv, o.host)) != RT_OK || (err = publish(srv, NULL)) != RT_OK)
        goto fail;
    err = RT_ERR_IO;
    srv->lfd = listen_on(&ss, sslen, &srv->port);
    if (srv->lfd < 0)
        goto fail;
    err = RT_ERR_SYSTEM;
    srv->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (srv->wake_fd < 0)
        goto fail;
    int e = pthread_create(&srv->thread, NULL, server_main, srv);
    if (e != 0) {
        errno = e;
        goto fail;
    }
    *out = srv;
    return RT_OK;
fail:;
    int saved = errno;
    release(srv);
    errno = saved;
    return err;
}

rt_error rt_prom_set_host(rt_prom_server *srv, const rt_host *host)
{
    if (!srv || !host)
        return RT_ERR_INVALID;
    pthread_mutex_lock(&srv->fmt_mu);
    rt_error err = copy_host(srv, host);
    pthread_mutex_unlock(&srv->fmt_mu);
    return err;
}

int rt_prom_port(const rt_prom_server *srv)
{
    return srv ? srv->port : -1;
}

rt_error rt_prom_publish(rt_prom_server *srv, const rt_sample *sample)
{
    if (!srv)
        return RT_ERR_INVALID;
    return publish(srv, sample);
}

const char *rt_prom_errmsg(rt_prom_server *srv)
{
    return srv ? rt_handle_err_get(&srv->err, &srv->mu) : "";
}

void rt_prom_free(rt_prom_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->stop, 1);
    uint64_t one = 1;
    while (write(srv->wake_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    pthread_join(srv->thread, NULL);
    release(srv);
}
