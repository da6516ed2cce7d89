/* http.c - a small HTTP/1.1 client for cloud metadata services: plain http:// only, one request per
 * connection, every step bounded by a deadline and a size; the reply parser is pure and fuzzed. Not
 * libcurl: linking it costs 6-9 MiB of memory (33 shared libraries), more than the tracker's budget. */
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

/* Milliseconds until deadline (monotonic seconds), for poll: 0 when past, at most 60000. */
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

/* True for the characters a host may have: a name or IPv4 address, or inside brackets an
 * IPv6 address with an optional zone. */
static bool host_char(char c, bool bracketed)
{
    return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_' || (bracketed && (c == ':' || c == '%'));
}

int rt_url_parse(const char *url, rt_url *out)
{
    memset(out, 0, sizeof *out);
    if (strncasecmp(url, "http://", 7) != 0)
        return -1;
    const char *h = url + 7, *end = h + strcspn(h, "/?#");
    const char *port = NULL;
    bool bracketed = *h == '[';
    if (bracketed) { /* [IPv6]:port */
        const char *close = memchr(h, ']', (size_t)(end - h));
        if (!close)
            return -1;
        h++;
        if (close + 1 != end && close[1] != ':')
            return -1;
        port = close[1] == ':' ? close + 2 : NULL;
        end = close;
    } else {
        const char *colon = memchr(h, ':', (size_t)(end - h));
        if (colon) {
            port = colon + 1;
            end = colon;
        }
    }
    size_t hl = (size_t)(end - h);
    if (hl == 0 || hl >= sizeof out->host)
        return -1;
    for (size_t i = 0; i < hl; i++)
        if (!host_char(h[i], bracketed))
            return -1;
    memcpy(out->host, h, hl);
    out->port = 80;
    const char *rest = bracketed ? end + 1 : end; /* past the host (and the bracket) */
    if (port) {
        long p = 0;
        for (rest = port; isdigit((unsigned char)*rest) && p <= 65535; rest++)
            p = p * 10 + (*rest - '0');
        if (rest == port || p <= 0 || p > 65535 || !(*rest == '\0' || strchr("/?#", *rest)))
            return -1;
        out->port = (int)p;
    }
    const char *path = *rest ? rest : "/";
    size_t pl = strlen(path);
    if (*path != '/' || pl >= sizeof out->path)
        return -1;
    for (size_t i = 0; i < pl; i++)
        if ((unsigned char)path[i] <= ' ' || path[i] == 0x7f) /* it goes into the request line */
            return -1;
    memcpy(out->path, path, pl + 1);
    return 0;
}

/* ---- the reply parser: pure, over buf[0..len), never past it -------------------------------- */

enum { BODY_TO_CLOSE, BODY_LENGTH, BODY_CHUNKED };

/* What the status line and headers say. */
typedef struct reply_head {
    int status;
    size_t end;      /* offset just past the blank line */
    int framing;     /* BODY_* */
    uint64_t length; /* with BODY_LENGTH */
} reply_head;

/* Finds the line at pos: sets *n to its length without the line end (LF or CRLF) and *next to
 * the offset past the LF. Returns false when no LF comes before len. */
static bool line_at(const char *buf, size_t len, size_t pos, size_t *n, size_t *next)
{
    const char *lf = pos < len ? memchr(buf + pos, '\n', len - pos) : NULL;
    if (!lf)
        return false;
    *n = (size_t)(lf - (buf + pos));
    if (*n && buf[pos + *n - 1] == '\r')
        (*n)--;
    *next = (size_t)(lf - buf) + 1;
    return true;
}

static bool tchar(char c)
{
    return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Splits the header line p[0..n) into a name (p[0..*name_len)) and a value (trimmed of blanks).
 * Returns false when there is no colon or the name is empty or not a token. */
static bool split_field(const char *p, size_t n, size_t *name_len, const char **val, size_t *val_len)
{
    const char *colon = n ? memchr(p, ':', n) : NULL;
    if (!colon || colon == p)
        return false;
    *name_len = (size_t)(colon - p);
    for (size_t i = 0; i < *name_len; i++)
        if (!tchar(p[i]))
            return false;
    const char *v = colon + 1, *e = p + n;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *val = v;
    *val_len = (size_t)(e - v);
    return true;
}

static bool name_is(const char *p, size_t n, const char *name)
{
    return n == strlen(name) && strncasecmp(p, name, n) == 0;
}

/* Parses "HTTP/1.x NNN[ reason]" in s[0..n). Returns the status, 0 for a status with other than
 * three digits or below 100, -1 for no HTTP/1.x status line. */
static int parse_status(const char *s, size_t n)
{
    if (n < 10 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ')
        return -1;
    size_t i = 9, digits = 0;
    int status = 0;
    while (i < n && s[i] == ' ')
        i++;
    for (; i < n && isdigit((unsigned char)s[i]); i++, digits++)
        if (digits < 3)
            status = status * 10 + (s[i] - '0');
    if (digits == 0 || (i < n && s[i] != ' '))
        return -1;
    return digits == 3 && status >= 100 ? status : 0;
}

/* Reads the status line and headers. Returns 1 with *h filled, 0 when they are not all there
 * yet, -1 (message in err) when they are malformed or too large. */
static int scan_head(const char *buf, size_t len, reply_head *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (len == 0)
        return 0;
    if (memcmp(buf, "HTTP/1.", len < 7 ? len : 7) != 0)
        return fail(err, errlen, "not an HTTP/1.x reply");
    size_t window = len < RT_HTTP_MAX_HEADER_BYTES ? len : RT_HTTP_MAX_HEADER_BYTES;
    size_t n, pos, next;
    if (!line_at(buf, window, 0, &n, &pos))
        return len >= RT_HTTP_MAX_HEADER_BYTES ? fail(err, errlen, "status line too long") : 0;
    h->status = memchr(buf, '\0', n) || memchr(buf, '\r', n) ? -1 : parse_status(buf, n);
    if (h->status < 0)
        return fail(err, errlen, "not an HTTP/1.x status line");
    if (h->status == 0)
        return fail(err, errlen, "status outside 100..999");
    bool have_length = false, chunked = false;
    for (;; pos = next) {
        if (!line_at(buf, window, pos, &n, &next))
            return len >= RT_HTTP_MAX_HEADER_BYTES ? fail(err, errlen, "headers larger than %d bytes",
                                                          RT_HTTP_MAX_HEADER_BYTES)
                                                   : 0;
        if (n == 0)
            break;
        const char *line = buf + pos, *v;
        size_t name_len, vl;
        if (memchr(line, '\0', n) || memchr(line, '\r', n) || !split_field(line, n, &name_len, &v, &vl))
            return fail(err, errlen, "malformed header line");
        uint64_t cl;
        if (name_is(line, name_len, "Content-Length")) {
            if (!rt_parse_u64_all(v, vl, &cl))
                return fail(err, errlen, "bad Content-Length");
            if (have_length && cl != h->length)
                return fail(err, errlen, "conflicting Content-Length headers");
            h->length = cl;
            have_length = true;
        } else if (name_is(line, name_len, "Transfer-Encoding")) {
            if (chunked || !name_is(v, vl, "chunked"))
                return fail(err, errlen, "unsupported Transfer-Encoding");
            chunked = true;
        }
    }
    h->end = next;
    h->framing = chunked ? BODY_CHUNKED : have_length ? BODY_LENGTH : BODY_TO_CLOSE; /* chunked wins */
    return 1;
}

/* Walks the chunked body buf[0..len): chunk-size in hex, optional blanks and ;extensions, a
 * line end (CRLF or LF), the data, a line end; after the zero-size chunk, trailer lines up to
 * a blank one. Appends the data to out when out is not NULL. Returns 1 at the end of the
 * last chunk's trailers, 0 when the bytes end first, -1 (message in err) when malformed, a
 * size overflows, the data pass max_body, or out cannot grow. */
static int walk_chunks(const char *buf, size_t len, size_t max_body, rt_buf *out, char *err, size_t errlen)
{
    size_t pos = 0, total = 0;
    for (;;) {
        size_t size = 0, i = pos;
        if (i < len && !isxdigit((unsigned char)buf[i]))
            return fail(err, errlen, "malformed chunk size");
        for (; i < len && isxdigit((unsigned char)buf[i]); i++) {
            if (size > (SIZE_MAX >> 4))
                return fail(err, errlen, "chunk size overflows");
            char c = (char)tolower((unsigned char)buf[i]);
            size = size * 16 + (size_t)(isdigit((unsigned char)c) ? c - '0' : c - 'a' + 10);
        }
        while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        size_t n, next;
        if (i < len && buf[i] != ';' && buf[i] != '\r' && buf[i] != '\n')
            return fail(err, errlen, "malformed chunk size line");
        if (i < len && buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n')
            return fail(err, errlen, "malformed chunk size line");
        if (!line_at(buf, len, i, &n, &next)) /* the extensions, if any, up to the line end */
            return 0;
        if (size == 0) {
            for (pos = next; line_at(buf, len, pos, &n, &next); pos = next)
                if (n == 0)
                    return 1;
            return 0;
        }
        if (size > max_body - total)
            return fail(err, errlen, "response body larger than %zu bytes", max_body);
        if (size > len - next)
            return 0;
        if (out && rt_buf_append(out, buf + next, size) < 0)
            return fail(err, errlen, "no memory for the response body");
        total += size;
        i = next + size;
        if (i < len && buf[i] == '\r')
            i++;
        if (i >= len)
            return 0;
        if (buf[i] != '\n')
            return fail(err, errlen, "chunk data not followed by a line end");
        pos = i + 1;
    }
}

int rt_http_response_complete(const char *buf, size_t len)
{
    reply_head h;
    int r = scan_head(buf, len, &h, NULL, 0);
    if (r <= 0)
        return r;
    switch (h.framing) {
    case BODY_LENGTH: return (uint64_t)(len - h.end) >= h.length;
    case BODY_CHUNKED: return walk_chunks(buf + h.end, len - h.end, SIZE_MAX, NULL, NULL, 0);
    default: return 0; /* to the connection's close */
    }
}

int rt_http_parse_response(const char *buf, size_t len, size_t max_body, rt_http_response *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof *out);
    rt_buf_init(&out->body, max_body < SIZE_MAX ? max_body + 1 : SIZE_MAX); /* + the NUL */
    reply_head h;
    int r = scan_head(buf, len, &h, err, errlen);
    if (r < 0)
        return -1;
    if (r == 0)
        return fail(err, errlen, len ? "reply cut short in its headers" : "empty reply");
    out->status = h.status;
    out->headers_len = h.end;
    memcpy(out->headers, buf, h.end); /* h.end <= RT_HTTP_MAX_HEADER_BYTES */
    out->headers[h.end] = '\0';
    const char *body = buf + h.end;
    size_t avail = len - h.end;
    if (h.framing == BODY_CHUNKED) {
        r = walk_chunks(body, avail, max_body, &out->body, err, errlen);
        if (r < 0)
            return -1;
        if (r == 0)
            return fail(err, errlen, "chunked body cut short (no last chunk)");
    } else {
        if (h.framing == BODY_LENGTH) {
            if (h.length > max_body)
                return fail(err, errlen, "response body larger than %zu bytes", max_body);
            if (avail < h.length)
                return fail(err, errlen, "body shorter than its Content-Length");
            avail = (size_t)h.length; /* bytes past it are ignored */
        }
        if (avail > max_body)
            return fail(err, errlen, "response body larger than %zu bytes", max_body);
        if (avail && rt_buf_append(&out->body, body, avail) < 0)
            return fail(err, errlen, "no memory for the response body");
    }
    if (!out->body.data) { /* an empty body is still a string */
        if (rt_buf_reserve(&out->body, 1) < 0)
            return fail(err, errlen, "no memory for the response body");
        out->body.data[0] = '\0';
    }
    return 0;
}

const char *rt_http_header(const rt_http_response *r, const char *name, char *buf, size_t cap)
{
    size_t len = r->headers_len < sizeof r->headers ? r->headers_len : sizeof r->headers - 1;
    size_t n, pos, next;
    if (!line_at(r->headers, len, 0, &n, &pos)) /* past the status line */
        return NULL;
    for (; line_at(r->headers, len, pos, &n, &next) && n > 0; pos = next) {
        const char *v;
        size_t name_len, vl;
        if (split_field(r->headers + pos, n, &name_len, &v, &vl) && name_is(r->headers + pos, name_len, name)) {
            rt_copy_trim(buf, cap, v, vl);
            return buf;
        }
    }
    return NULL;
}

void rt_http_response_free(rt_http_response *r)
{
    rt_buf_free(&r->body);
}

/* ---- the network side ----------------------------------------------------------------------- */

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

int rt_http_request(const char *method, const char *url, const char *const *headers, const char *body,
                    double deadline, size_t max_body, rt_http_response *resp, char *err, size_t errlen)
{
    memset(resp, 0, sizeof *resp);
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
    /* read until the reply is whole, the server closes, the deadline or the size bound */
    rt_buf raw;
    size_t head_room = RT_HTTP_MAX_HEADER_BYTES + 1; /* raw bytes: headers, chunk framing, the NUL */
    rt_buf_init(&raw, max_body < SIZE_MAX - head_room ? max_body + head_room : SIZE_MAX);
    char chunk[4096];
    const char *lost = NULL; /* why the network side gave up, if it did */
    while (!lost) {
        ssize_t k = recv(fd, chunk, sizeof chunk, 0);
        if (k > 0) {
            if (rt_buf_append(&raw, chunk, (size_t)k) < 0)
                lost = "response too large";
            else if (rt_http_response_complete(raw.data, raw.len) != 0)
                break; /* whole, or never going to be: the parser says which */
        } else if (k == 0) {
            break;
        } else if (errno != EINTR && errno != EAGAIN) {
            lost = "connection failed";
        } else if (errno == EAGAIN && poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, ms_left(deadline)) != 1) {
            lost = "no answer in time";
        }
    }
    close(fd);
    char why[160];
    int rc = lost ? -1 : rt_http_parse_response(raw.data, raw.len, max_body, resp, why, sizeof why);
    rt_buf_free(&raw);
    if (rc < 0)
        return fail(err, errlen, "%s from %s", lost ? lost : why, u.host);
    return 0;
}
