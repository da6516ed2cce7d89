/* http.c - a small HTTP/1.1 client for cloud metadata services: plain http:// only (metadata
 * endpoints are link-local and unencrypted), one request per connection, every step bounded
 * by an absolute deadline, bodies bounded in size, chunked and Content-Length bodies decoded.
 * libcurl would do this too, but linking it costs the tracker 6-9 MiB of memory (33 shared
 * libraries), more than the tracker's whole budget, for a job this small. */
#define _GNU_SOURCE
#include "http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_HEADER_BYTES 16384

static int ms_left(double deadline)
{
    double left = deadline - rt_mono_secs();
    if (left <= 0)
        return 0;
    return left > 60 ? 60000 : (int)(left * 1000.0) + 1;
}

/* Writes the message into err; returns -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int rt_url_parse(const char *url, rt_url *out)
{
    memset(out, 0, sizeof *out);
    if (strncasecmp(url, "http://", 7) != 0)
        return -1;
    const char *h = url + 7, *end = h + strcspn(h, "/?#");
    const char *port = NULL;
    size_t hl;
    if (*h == '[') { /* [IPv6]:port */
        const char *close = memchr(h, ']', (size_t)(end - h));
        if (!close)
            return -1;
        hl = (size_t)(close - h - 1);
        if (hl == 0 || hl >= sizeof out->host)
            return -1;
        memcpy(out->host, h + 1, hl);
        if (close[1] == ':')
            port = close + 2;
        else if (close + 1 != end)
            return -1;
    } else {
        const char *colon = memchr(h, ':', (size_t)(end - h));
        hl = (size_t)((colon ? colon : end) - h);
        if (hl == 0 || hl >= sizeof out->host)
            return -1;
        memcpy(out->host, h, hl);
        if (colon)
            port = colon + 1;
    }
    out->port = 80;
    if (port) {
        char *e;
        long p = strtol(port, &e, 10);
        if (e != end || p <= 0 || p > 65535)
            return -1;
        out->port = (int)p;
    }
    const char *path = *end ? end : "/";
    if (*path != '/' || strlen(path) >= sizeof out->path)
        return -1;
    snprintf(out->path, sizeof out->path, "%s", path);
    return 0;
}

/* Connects to host:port before the deadline. Returns the socket or -1. */
static int dial(const rt_url *u, double deadline, char *err, size_t errlen)
{
    char port[8];
    snprintf(port, sizeof port, "%d", u->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    hints.ai_flags = AI_NUMERICHOST;
    if (getaddrinfo(u->host, port, &hints, &res) != 0) {
        hints.ai_flags = 0; /* a name: resolving may block, but only this probe's thread */
        if (getaddrinfo(u->host, port, &hints, &res) != 0)
            return fail(err, errlen, "cannot resolve %s", u->host);
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int so = 0;
            socklen_t sl = sizeof so;
            if (poll(&p, 1, ms_left(deadline)) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) == 0 && so == 0)
                break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return fail(err, errlen, "cannot connect to %s", u->host);
    return fd;
}

static int send_all(int fd, const char *p, size_t n, double deadline)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (poll(&pf, 1, ms_left(deadline)) != 1)
            return -1;
    }
    return 0;
}

/* Decodes a chunked body in place. Returns its length, or -1 when malformed or incomplete. */
static long dechunk(char *b, size_t n)
{
    size_t in = 0, out = 0;
    for (;;) {
        char *e;
        if (in >= n)
            return -1;
        unsigned long sz = strtoul(b + in, &e, 16);
        char *nl = memchr(b + in, '\n', n - in);
        if (!nl || e == b + in)
            return -1;
        in = (size_t)(nl - b) + 1;
        if (sz == 0)
            return (long)out;
        if (sz > n - in)
            return -1;
        memmove(b + out, b + in, sz);
        out += sz;
        in += sz;
        if (in < n && b[in] == '\r')
            in++;
        if (in < n && b[in] == '\n')
            in++;
    }
}

const char *rt_http_header(const rt_http_response *r, const char *name, char *buf, size_t cap)
{
    size_t nl = strlen(name);
    const char *p = r->headers, *end = r->headers + r->headers_len;
    while (p < end) {
        const char *le = memchr(p, '\n', (size_t)(end - p));
        if (!le)
            le = end;
        if ((size_t)(le - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            rt_copy_trim(buf, cap, p + nl + 1, (size_t)(le - p - nl - 1));
            return buf;
        }
        p = le + 1;
    }
    return NULL;
}

void rt_http_response_free(rt_http_response *r)
{
    rt_buf_free(&r->body);
}

int rt_http_request(const char *method, const char *url, const char *const *headers, const char *body,
                    double deadline, size_t max_body, rt_http_response *resp, char *err, size_t errlen)
{
    memset(resp, 0, sizeof *resp);
    rt_buf_init(&resp->body, max_body + MAX_HEADER_BYTES + 1);
    rt_url u;
    if (rt_url_parse(url, &u) < 0)
        return fail(err, errlen, "not an http:// URL: %s", url);
    int fd = dial(&u, deadline, err, errlen);
    if (fd < 0)
        return -1;
    char req[2048], host[300];
    bool v6 = strchr(u.host, ':') != NULL;
    if (v6 && u.port == 80)
        snprintf(host, sizeof host, "[%s]", u.host);
    else if (v6)
        snprintf(host, sizeof host, "[%s]:%d", u.host, u.port);
    else if (u.port == 80)
        snprintf(host, sizeof host, "%s", u.host);
    else
        snprintf(host, sizeof host, "%s:%d", u.host, u.port);
    size_t blen = body ? strlen(body) : 0;
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: resource-tracker/%s\r\n"
                                      "Accept: */*\r\nConnection: close\r\n",
                     method, u.path, host, RT_VERSION);
    for (size_t i = 0; headers && headers[i] && n > 0 && (size_t)n < sizeof req; i++)
        n += snprintf(req + n, sizeof req - (size_t)n, "%s\r\n", headers[i]);
    if (n > 0 && (size_t)n < sizeof req && (body || strcmp(method, "GET") != 0))
        n += snprintf(req + n, sizeof req - (size_t)n, "Content-Length: %zu\r\n", blen);
    if (n > 0 && (size_t)n < sizeof req)
        n += snprintf(req + n, sizeof req - (size_t)n, "\r\n");
    if (n < 0 || (size_t)n >= sizeof req || send_all(fd, req, (size_t)n, deadline) < 0 ||
        (blen && send_all(fd, body, blen, deadline) < 0)) {
        close(fd);
        return fail(err, errlen, "cannot send the request to %s", u.host);
    }
    /* read everything up to the server's close, the deadline or the size bound */
    rt_buf *b = &resp->body;
    char chunk[4096];
    bool complete = false;
    long content_length = -1;
    size_t header_end = 0;
    for (;;) {
        ssize_t k = recv(fd, chunk, sizeof chunk, 0);
        if (k > 0) {
            if (rt_buf_append(b, chunk, (size_t)k) < 0) {
                close(fd);
                return fail(err, errlen, "response from %s too large", u.host);
            }
            if (!header_end) {
                char *he = b->data ? strstr(b->data, "\r\n\r\n") : NULL;
                if (he) {
                    header_end = (size_t)(he - b->data) + 4;
                    resp->headers_len = header_end;
                    char v[32];
                    memcpy(resp->headers, b->data, header_end < sizeof resp->headers ? header_end : sizeof resp->headers - 1);
                    resp->headers[header_end < sizeof resp->headers ? header_end : sizeof resp->headers - 1] = '\0';
                    if (rt_http_header(resp, "Content-Length", v, sizeof v))
                        content_length = strtol(v, NULL, 10);
                } else if (b->len > MAX_HEADER_BYTES) {
                    close(fd);
                    return fail(err, errlen, "response headers from %s too large", u.host);
                }
            }
            if (header_end && content_length >= 0 && b->len - header_end >= (size_t)content_length) {
                complete = true;
                break;
            }
            continue;
        }
        if (k == 0) {
            complete = header_end != 0;
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN) {
            close(fd);
            return fail(err, errlen, "connection to %s failed", u.host);
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, ms_left(deadline)) != 1) {
            close(fd);
            return fail(err, errlen, "no answer from %s in time", u.host);
        }
    }
    close(fd);
    if (!complete)
        return fail(err, errlen, "incomplete response from %s", u.host);
    if (sscanf(resp->headers, "HTTP/1.%*[01] %d", &resp->status) != 1 || resp->status < 100 || resp->status > 999)
        return fail(err, errlen, "not an HTTP response from %s", u.host);
    /* the body, moved to the front of the buffer */
    size_t blen2 = b->len - header_end;
    if (content_length >= 0 && (size_t)content_length < blen2)
        blen2 = (size_t)content_length;
    memmove(b->data, b->data + header_end, blen2);
    b->len = blen2;
    b->data[b->len] = '\0';
    char te[32];
    if (rt_http_header(resp, "Transfer-Encoding", te, sizeof te) && strcasecmp(te, "chunked") == 0) {
        long d = dechunk(b->data, b->len);
        if (d < 0)
            return fail(err, errlen, "malformed chunked body from %s", u.host);
        b->len = (size_t)d;
        b->data[b->len] = '\0';
    }
    if (b->len > max_body)
        return fail(err, errlen, "response from %s too large", u.host);
    return 0;
}
