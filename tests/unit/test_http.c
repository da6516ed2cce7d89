/* test_http.c - the metadata HTTP client: URL splitting, the reply parser (lengths, chunks,
 * status lines, header caps, over buffers that are not NUL-terminated) and real requests to a
 * tiny server on 127.0.0.1 (a chunked reply; one that never answers, against the deadline). */
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/http.h"

static void urls(void **state)
{
    (void)state;
    rt_url u;
    assert_int_equal(rt_url_parse("http://169.254.169.254", &u), 0);
    assert_string_equal(u.host, "169.254.169.254");
    assert_int_equal(u.port, 80);
    assert_string_equal(u.path, "/");
    assert_int_equal(rt_url_parse("http://127.0.0.1:8080/latest/api/token", &u), 0);
    assert_int_equal(u.port, 8080);
    assert_string_equal(u.path, "/latest/api/token");
    assert_int_equal(rt_url_parse("http://[fd00:ec2::254]:80/x?y=1", &u), 0);
    assert_string_equal(u.host, "fd00:ec2::254");
    assert_string_equal(u.path, "/x?y=1");
    assert_int_equal(rt_url_parse("https://example.com/", &u), -1); /* plain http only */
    assert_int_equal(rt_url_parse("http://host:99999/", &u), -1);
    assert_int_equal(rt_url_parse("http://:80/", &u), -1);
    assert_int_equal(rt_url_parse("http://[::1/", &u), -1);
    assert_int_equal(rt_url_parse("ftp://x/", &u), -1);
}

static void urls_rejected(void **state)
{
    (void)state;
    rt_url u;
    assert_int_equal(rt_url_parse("http://[::1]", &u), 0);
    assert_string_equal(u.host, "::1");
    assert_int_equal(rt_url_parse("http://metadata.google.internal:65535", &u), 0);
    assert_int_equal(u.port, 65535);
    assert_string_equal(u.path, "/");
    const char *const bad[] = {
        "http://host: 80/",        /* blanks, signs: digits only */
        "http://host:+80/",
        "http://host:0/",
        "http://host:/",
        "http://host:80x/",
        "http://host:999999999999999999999/",
        "http://ho st/",           /* odd characters in the host */
        "http://host\r\nX: y/",
        "http://user@host/",
        "http://::1/",             /* IPv6 without brackets */
        "http://[]/",
        "http://[::1]x/",
        "http://host/a b",         /* the path goes into the request line */
        "http://host/a\r\nX: y",
        "http://host?q",
        "http://",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (rt_url_parse(bad[i], &u) != -1)
            fail_msg("accepted %s", bad[i]);
    char long_host[400];
    snprintf(long_host, sizeof long_host, "http://%0300d/", 0);
    assert_int_equal(rt_url_parse(long_host, &u), -1);
}

/* ---- the reply parser ----------------------------------------------------------------------- */

/* A heap copy of text[0..len) of exactly len bytes, no NUL after it, so that a read past the
 * end is caught under ASan. Free it. */
static char *exact_copy(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    return copy;
}

/* Parses the first len bytes of text from an exact copy; checks that rt_http_response_complete
 * agrees. Returns what the parser returns. */
static int parse_n(const char *text, size_t len, size_t max_body, rt_http_response *r, char *err, size_t errlen)
{
    char *copy = exact_copy(text, len);
    int complete = rt_http_response_complete(copy, len);
    int rc = rt_http_parse_response(copy, len, max_body, r, err, errlen);
    free(copy);
    if (complete == -1)
        assert_int_equal(rc, -1); /* never valid means never parsed */
    if (complete == 1 && len <= max_body)
        assert_int_equal(rc, 0); /* whole means parsed */
    return rc;
}

static int parse(const char *text, size_t max_body, rt_http_response *r)
{
    char err[160] = "";
    int rc = parse_n(text, strlen(text), max_body, r, err, sizeof err);
    if (rc < 0 && err[0] == '\0')
        fail_msg("a rejection without a message: %s", text);
    return rc;
}

static int complete(const char *text)
{
    char *copy = exact_copy(text, strlen(text));
    int rc = rt_http_response_complete(copy, strlen(text));
    free(copy);
    return rc;
}

/* Fails the test unless every reply in bad[0..n) is rejected (with max_body 1 MiB) and
 * rt_http_response_complete says want_complete of it. */
static void all_rejected(const char *const *bad, size_t n, int want_complete)
{
    for (size_t i = 0; i < n; i++) {
        rt_http_response r;
        int rc = parse(bad[i], 1 << 20, &r);
        rt_http_response_free(&r);
        if (rc != -1)
            fail_msg("accepted \"%s\"", bad[i]);
        if (complete(bad[i]) != want_complete)
            fail_msg("rt_http_response_complete is not %d for \"%s\"", want_complete, bad[i]);
    }
}

static void content_length_body(void **state)
{
    (void)state;
    rt_http_response r;
    const char *t = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
    assert_int_equal(complete(t), 1);
    assert_int_equal(parse(t, 1024, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body.len, 5);
    assert_string_equal(r.body.data, "hello");
    assert_int_equal(r.headers_len, strlen(t) - 5);
    assert_string_equal(r.headers + r.headers_len - 4, "\r\n\r\n");
    rt_http_response_free(&r);

    t = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello, and more"; /* bytes past it are dropped */
    assert_int_equal(complete(t), 1);
    assert_int_equal(parse(t, 1024, &r), 0);
    assert_string_equal(r.body.data, "hello");
    rt_http_response_free(&r);

    t = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"; /* the connection closed early */
    assert_int_equal(complete(t), 0);
    assert_int_equal(parse(t, 1024, &r), -1);
    rt_http_response_free(&r);

    t = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"; /* an empty body is still a string */
    assert_int_equal(complete(t), 1);
    assert_int_equal(parse(t, 1024, &r), 0);
    assert_int_equal(r.status, 204);
    assert_non_null(r.body.data);
    assert_string_equal(r.body.data, "");
    rt_http_response_free(&r);

    t = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\nhello"; /* the same twice: fine */
    assert_int_equal(parse(t, 1024, &r), 0);
    rt_http_response_free(&r);
}

static void bad_content_length(void **state)
{
    (void)state;
    const char *const bad[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\nx", /* 2^64 */
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", /* conflicting */
    };
    all_rejected(bad, sizeof bad / sizeof *bad, -1);
    rt_http_response r; /* within 64 bits but past max_body */
    assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nx", 1024, &r), -1);
    rt_http_response_free(&r);
}

static const char chunked_reply[] = "HTTP/1.1 200 OK\r\n"
                                    "Transfer-Encoding: chunked\r\n"
                                    "\r\n"
                                    "4;name=value\r\n"
                                    "Wiki\r\n"
                                    "5 ; a=\"q;uoted\"\r\n" /* blanks before an extension */
                                    "pedia\r\n"
                                    "E\n"                   /* bare LF line ends */
                                    " in\r\n\r\nchunks.\n"
                                    "0\r\n"
                                    "Expires: never\r\n" /* a trailer */
                                    "X-Checksum: 1\r\n"
                                    "\r\n";

static void chunked_with_extensions_and_trailers(void **state)
{
    (void)state;
    rt_http_response r;
    assert_int_equal(complete(chunked_reply), 1);
    assert_int_equal(parse(chunked_reply, 1024, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.data, "Wikipedia in\r\n\r\nchunks.");
    assert_int_equal(r.body.len, 23);
    char v[32];
    assert_null(rt_http_header(&r, "Expires", v, sizeof v)); /* trailers are not headers */
    rt_http_response_free(&r);
    /* the body must fit max_body when decoded, framing aside */
    assert_int_equal(parse(chunked_reply, 23, &r), 0);
    rt_http_response_free(&r);
    assert_int_equal(parse(chunked_reply, 22, &r), -1);
    rt_http_response_free(&r);
    /* upper-case hex, leading zeros, and Transfer-Encoding winning over Content-Length */
    const char *t = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: Chunked\r\n\r\n"
                    "0000A\r\n0123456789\r\n0\r\n\r\n";
    assert_int_equal(parse(t, 1024, &r), 0);
    assert_string_equal(r.body.data, "0123456789");
    rt_http_response_free(&r);
}

static void truncated_chunked(void **state)
{
    (void)state;
    /* cut anywhere before the end, a chunked reply is never whole and never parses */
    size_t len = strlen(chunked_reply);
    for (size_t cut = 0; cut < len; cut++) {
        rt_http_response r;
        char err[160];
        char *copy = exact_copy(chunked_reply, cut);
        int c = rt_http_response_complete(copy, cut);
        int rc = rt_http_parse_response(copy, cut, 1024, &r, err, sizeof err);
        free(copy);
        rt_http_response_free(&r);
        if (c != 0 || rc != -1)
            fail_msg("cut at %zu: complete %d, parse %d", cut, c, rc);
    }
    const char *const bad[] = {
        /* no last zero-size chunk */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        /* the zero chunk without its final blank line */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n",
        /* a chunk longer than what came */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\nshort\r\n0\r\n\r\n",
    };
    all_rejected(bad, sizeof bad / sizeof *bad, 0);
}

static void malformed_chunked(void **state)
{
    (void)state;
    const char *const bad[] = {
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nnot a chunk\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n", /* a blank first */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5x\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n", /* no line end */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\rX0\r\n\r\n",
        /* sizes that overflow 64 bits */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\nx\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffffffffff\r\nx\r\n0\r\n\r\n",
        /* codings other than chunked are not decoded */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    };
    all_rejected(bad, sizeof bad / sizeof *bad, -1);
    /* a size that is merely huge can still be waiting for its data */
    rt_http_response r;
    const char *t = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\nx";
    assert_int_equal(complete(t), 0);
    assert_int_equal(parse(t, 1 << 20, &r), -1); /* past max_body */
    rt_http_response_free(&r);
}

static void bad_status_line(void **state)
{
    (void)state;
    const char *const bad[] = {
        "this is not http at all\r\n\r\n",
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.2 200 OK\r\n\r\n",
        "HTTP/1.10 200 OK\r\n\r\n",
        "HTTP/9 999999 What\r\n\r\n",
        "HTTP/1.1 99 Too Small\r\n\r\n",
        "HTTP/1.1 099 Leading Zero\r\n\r\n",
        "HTTP/1.1 1000 Too Big\r\n\r\n",
        "HTTP/1.1 -200 Negative\r\n\r\n",
        "HTTP/1.1 +200 Signed\r\n\r\n",
        "HTTP/1.1 20x OK\r\n\r\n",
        "HTTP/1.1 OK\r\n\r\n",
        "HTTP/1.1 \r\n\r\n",
        "HTTP/1.1200 OK\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n",
        "\r\nHTTP/1.1 200 OK\r\n\r\n",
        "HTTX",
        "\xff\xfe",
    };
    all_rejected(bad, sizeof bad / sizeof *bad, -1); /* never an HTTP reply, whatever comes next */
    assert_int_equal(complete("HTTP/1.1 200 OK\r\n"), 0); /* not yet */
    assert_int_equal(complete("HTTP/1."), 0);
    rt_http_response r;
    assert_int_equal(complete(""), 0);
    assert_int_equal(parse("", 1024, &r), -1); /* an empty reply */
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.1 999 Top\r\nContent-Length: 0\r\n\r\n", 0, &r), 0);
    assert_int_equal(r.status, 999);
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.1 100\r\nContent-Length: 0\r\n\r\n", 0, &r), 0); /* no reason phrase */
    assert_int_equal(r.status, 100);
    rt_http_response_free(&r);
    static const char nul[] = "HTTP/1.1 200 O\0K\r\nContent-Length: 0\r\n\r\n";
    char err[160];
    assert_int_equal(parse_n(nul, sizeof nul - 1, 1024, &r, err, sizeof err), -1);
    rt_http_response_free(&r);
}

static void http_1_0_body_to_close(void **state)
{
    (void)state;
    rt_http_response r;
    const char *t = "HTTP/1.0 404 Not Found\nServer: old\n\nnope\n"; /* bare LF line ends too */
    assert_int_equal(complete(t), 0); /* without a length, the body runs to the close */
    assert_int_equal(parse(t, 1024, &r), 0);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.body.data, "nope\n");
    char v[32];
    assert_string_equal(rt_http_header(&r, "server", v, sizeof v), "old");
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.0 200 OK\r\n\r\n", 1024, &r), 0);
    assert_int_equal(r.body.len, 0);
    assert_string_equal(r.body.data, "");
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.0 200 OK\r\n\r\n0123456789", 9, &r), -1); /* past max_body */
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.0 200 OK\r\n\r\n0123456789", 10, &r), 0);
    rt_http_response_free(&r);
}

static void header_lookup(void **state)
{
    (void)state;
    rt_http_response r;
    const char *t = "HTTP/1.1 200 OK\r\n"
                    "metadata-flavor: Google\r\n"
                    "X-Spaced:   padded value \t\r\n"
                    "X-Empty:\r\n"
                    "X-Twice: first\r\n"
                    "X-Twice: second\r\n"
                    "Content-Length: 2\r\n"
                    "\r\n"
                    "{}";
    assert_int_equal(parse(t, 1024, &r), 0);
    char v[64];
    assert_string_equal(rt_http_header(&r, "Metadata-Flavor", v, sizeof v), "Google");
    assert_string_equal(rt_http_header(&r, "METADATA-FLAVOR", v, sizeof v), "Google");
    assert_string_equal(rt_http_header(&r, "x-spaced", v, sizeof v), "padded value");
    assert_string_equal(rt_http_header(&r, "X-Empty", v, sizeof v), "");
    assert_string_equal(rt_http_header(&r, "X-Twice", v, sizeof v), "first");
    assert_null(rt_http_header(&r, "X-Missing", v, sizeof v));
    assert_null(rt_http_header(&r, "Metadata", v, sizeof v)); /* a prefix is not the name */
    assert_null(rt_http_header(&r, "HTTP/1.1 200 OK", v, sizeof v)); /* nor is the status line */
    char small[4];
    assert_string_equal(rt_http_header(&r, "Metadata-Flavor", small, sizeof small), "Goo"); /* cut to fit */
    rt_http_response_free(&r);

    const char *const bad[] = {
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Space : before colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: no name\r\n\r\n",
        "HTTP/1.1 200 OK\r\n folded: line\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-A: b\rc\r\n\r\n",
    };
    all_rejected(bad, sizeof bad / sizeof *bad, -1);
}

/* Builds a reply whose status line and headers take exactly head_bytes, then "body". */
static char *reply_with_head_of(size_t head_bytes, size_t *len)
{
    const char *start = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nX-Pad: ";
    size_t fixed = strlen(start) + 4; /* the pad's CRLF and the blank line */
    char *t = malloc(head_bytes + 4);
    assert_non_null(t);
    assert_true(head_bytes > fixed);
    memcpy(t, start, strlen(start));
    memset(t + strlen(start), 'p', head_bytes - fixed);
    memcpy(t + head_bytes - 4, "\r\n\r\nbody", 8);
    *len = head_bytes + 4;
    return t;
}

static void oversized_headers_and_body(void **state)
{
    (void)state;
    rt_http_response r;
    char err[160];
    size_t len;
    char *t = reply_with_head_of(RT_HTTP_MAX_HEADER_BYTES, &len); /* just fits */
    assert_int_equal(parse_n(t, len, 1024, &r, err, sizeof err), 0);
    assert_int_equal(r.headers_len, RT_HTTP_MAX_HEADER_BYTES);
    assert_string_equal(r.body.data, "body");
    char v[8];
    assert_string_equal(rt_http_header(&r, "Content-Length", v, sizeof v), "4");
    rt_http_response_free(&r);
    free(t);
    t = reply_with_head_of(RT_HTTP_MAX_HEADER_BYTES + 1, &len); /* one byte over */
    assert_int_equal(rt_http_response_complete(t, len), -1);
    assert_int_equal(parse_n(t, len, 1024, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "headers"));
    rt_http_response_free(&r);
    free(t);

    /* a flood of headers, cut before its end: rejected as soon as the cap is passed */
    size_t flood_len = 17 + 5000 * 14;
    char *flood = malloc(flood_len);
    assert_non_null(flood);
    memcpy(flood, "HTTP/1.1 200 OK\r\n", 17);
    for (size_t i = 0; i < 5000; i++)
        memcpy(flood + 17 + i * 14, "X-Flood: yes\r\n", 14);
    assert_int_equal(rt_http_response_complete(flood, RT_HTTP_MAX_HEADER_BYTES - 1), 0);
    assert_int_equal(rt_http_response_complete(flood, RT_HTTP_MAX_HEADER_BYTES), -1);
    assert_int_equal(parse_n(flood, flood_len, 1024, &r, err, sizeof err), -1);
    rt_http_response_free(&r);
    free(flood);

    /* a body over max_body, by length, by chunks */
    assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", 10, &r), -1);
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhelloworld", 10, &r), 0);
    assert_string_equal(r.body.data, "helloworld");
    rt_http_response_free(&r);
    assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
                           10, &r),
                     -1);
    rt_http_response_free(&r);
}

/* ---- real requests to a tiny server on 127.0.0.1 ---------------------------------------------- */

typedef struct server {
    int fd;              /* listening */
    int port;
    const char *reply;   /* sent after the request's headers; NULL: never answer */
    char request[2048];  /* what the client sent, NUL-terminated */
    pthread_t thread;
} server;

/* Serves one connection: reads the request's headers, sends the reply, and holds the
 * connection open until the client closes it (so the client must see on its own that the
 * reply is whole). Every wait is bounded, so a broken client cannot hang the test. */
static void *serve(void *arg)
{
    server *s = arg;
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    if (poll(&p, 1, 5000) != 1)
        return NULL;
    int c = accept(s->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    struct timeval tv = {.tv_sec = 5};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t n = 0;
    while (n < sizeof s->request - 1 && !strstr(s->request, "\r\n\r\n")) {
        ssize_t k = recv(c, s->request + n, sizeof s->request - 1 - n, 0);
        if (k <= 0)
            break;
        n += (size_t)k;
        s->request[n] = '\0';
    }
    if (s->reply)
        send(c, s->reply, strlen(s->reply), MSG_NOSIGNAL);
    char sink[256];
    while (recv(c, sink, sizeof sink, 0) > 0)
        ;
    close(c);
    return NULL;
}

static void server_start(server *s, const char *reply)
{
    memset(s, 0, sizeof *s);
    s->reply = reply;
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 4), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* Asks the server started with reply for path, with a deadline secs from now, and stops the
 * server. Returns what rt_http_request returns; *took: the seconds it took. */
static int ask(const char *reply, const char *method, const char *path, const char *const *headers, double secs,
               server *s, rt_http_response *r, char *err, size_t errlen, double *took)
{
    server_start(s, reply);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, path);
    double t0 = rt_mono_secs();
    int rc = rt_http_request(method, url, headers, NULL, t0 + secs, 1024, r, err, errlen);
    *took = rt_mono_secs() - t0;
    pthread_join(s->thread, NULL);
    close(s->fd);
    return rc;
}

static void real_chunked_request(void **state)
{
    (void)state;
    server s;
    char err[256] = "";
    const char *headers[] = {"Metadata-Flavor: Google", NULL};
    rt_http_response r;
    double took;
    int rc = ask("HTTP/1.1 200 OK\r\nMetadata-Flavor: Google\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "7;ext=1\r\neu-west\r\n2\r\n-1\r\n0\r\n\r\n",
                 "GET", "/computeMetadata/v1/instance/zone", headers, 3.0, &s, &r, err, sizeof err, &took);
    if (rc != 0)
        fail_msg("request failed: %s", err);
    assert_true(took < 1.0); /* it saw the last chunk; it did not wait for the close */
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.data, "eu-west-1");
    char v[32];
    assert_string_equal(rt_http_header(&r, "metadata-flavor", v, sizeof v), "Google");
    rt_http_response_free(&r);
    char line[160];
    snprintf(line, sizeof line, "GET /computeMetadata/v1/instance/zone HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n", s.port);
    assert_non_null(strstr(s.request, line));
    assert_non_null(strstr(s.request, "\r\nMetadata-Flavor: Google\r\n"));
    assert_non_null(strstr(s.request, "\r\nConnection: close\r\n"));
    assert_null(strstr(s.request, "Content-Length")); /* a GET without a body */
}

static void real_put_with_length(void **state)
{
    (void)state;
    server s;
    char err[256] = "";
    rt_http_response r;
    double took;
    int rc = ask("HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\n\r\nUnauthorized", "PUT", "/latest/api/token",
                 NULL, 3.0, &s, &r, err, sizeof err, &took);
    if (rc != 0)
        fail_msg("request failed: %s", err);
    assert_true(took < 1.0); /* stopped at Content-Length */
    assert_int_equal(r.status, 401);
    assert_string_equal(r.body.data, "Unauthorized");
    rt_http_response_free(&r);
    assert_non_null(strstr(s.request, "PUT /latest/api/token HTTP/1.1\r\n"));
    assert_non_null(strstr(s.request, "\r\nContent-Length: 0\r\n"));
}

static void real_request_never_answered(void **state)
{
    (void)state;
    server s;
    char err[256] = "";
    rt_http_response r;
    double took;
    int rc = ask(NULL, "GET", "/", NULL, 0.2, &s, &r, err, sizeof err, &took);
    rt_http_response_free(&r);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "in time"));
    if (took < 0.19 || took > 0.6)
        fail_msg("gave up after %.3f s, not about 0.2 s", took);
}

static void bad_url_request(void **state)
{
    (void)state;
    rt_http_response r;
    char err[256] = "";
    assert_int_equal(rt_http_request("GET", "https://127.0.0.1/", NULL, NULL, rt_mono_secs() + 1, 1024, &r, err,
                                     sizeof err),
                     -1);
    assert_non_null(strstr(err, "http://"));
    rt_http_response_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(urls),
        cmocka_unit_test(urls_rejected),
        cmocka_unit_test(content_length_body),
        cmocka_unit_test(bad_content_length),
        cmocka_unit_test(chunked_with_extensions_and_trailers),
        cmocka_unit_test(truncated_chunked),
        cmocka_unit_test(malformed_chunked),
        cmocka_unit_test(bad_status_line),
        cmocka_unit_test(http_1_0_body_to_close),
        cmocka_unit_test(header_lookup),
        cmocka_unit_test(oversized_headers_and_body),
        cmocka_unit_test(real_chunked_request),
        cmocka_unit_test(real_put_with_length),
        cmocka_unit_test(real_request_never_answered),
        cmocka_unit_test(bad_url_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
