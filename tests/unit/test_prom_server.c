/* test_prom_server.c - the /metrics server: its request parser (Accept and q-values, split
 * reads, malformed and oversized heads, keep-alive) and a live server on port 0 (GET, HEAD,
 * 404, 405, keep-alive, silent and never-reading clients, 1,000 connections, EMFILE and the
 * server's last failure (rt_prom_errmsg), publishing while scraping). Prints the cost of rt_prom_publish with a sample of this machine. The tests of
 * the clients' timeouts run the server on a test clock (core/clock.h) that they step: none sleeps
 * to let a timeout pass. */
#include "unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "core/clock.h"
#include "export/prom_http.h"
#include "sample/replay.h"

#define T0 1000.0       /* the test clock's start */
#define SETTLE_SECS 30.0 /* the most a test waits for the server to block on its clock */

#define PROM_ACCEPT                                                                                     \
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"     \
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

/* Parses s from a buffer of exactly its bytes (no NUL after them), kept until the next call
 * (rq points into it). */
static rt_prom_parse parse_str(const char *s, rt_prom_request *rq)
{
    static char *b;
    free(b);
    size_t n = strlen(s);
    b = malloc(n ? n : 1);
    assert_non_null(b);
    memcpy(b, s, n);
    rt_prom_parse r = rt_prom_parse_request(b, n, rq);
    if (r == RT_PROM_DONE) { /* pointers into b: check them before it goes */
        assert_true((rq->path >= b && rq->path + rq->path_len <= b + n) || rq->path_len == 1); /* or "/" */
        assert_true(rq->consumed <= n);
        assert_int_equal(rq->path[0], '/');
    }
    return r;
}

/* Whether the request with this Accept header (NULL: none) gets OpenMetrics. */
static int accept_om(const char *accept)
{
    char req[1024];
    snprintf(req, sizeof req, "GET /metrics HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n", accept ? "Accept: " : "",
             accept ? accept : "", accept ? "\r\n" : "");
    rt_prom_request rq;
    assert_int_equal(parse_str(req, &rq), RT_PROM_DONE);
    return rq.openmetrics;
}

static void parse_accept(void **state)
{
    (void)state;
    static const struct {
        const char *accept; /* NULL: no Accept header */
        int openmetrics;
    } cases[] = {
        {PROM_ACCEPT, 1}, /* what Prometheus 2.42 sends */
        {NULL, 0},
        {"text/plain", 0},
        {"text/plain;version=0.0.4;q=0.5,*/*;q=0.1", 0}, /* Prometheus, OM off */
        {"*/*", 0},
        {"application/openmetrics-text", 1},
        {"Application/OpenMetrics-Text ; Version=1.0.0", 1},
        {"application/openmetrics-text;q=0", 0},
        {"application/openmetrics-text;q=0.3, text/plain;q=0.5", 0},
        {"text/plain;q=0.2, application/openmetrics-text;q=0.3", 1},
        {"application/openmetrics-text, */*", 1}, /* named beats the wildcard */
        {"application/openmetrics-text, text/plain", 0}, /* a tie: the text format */
        {"application/*;q=0.9, text/*;q=0.8", 1},
        {"*/*;q=0.9, text/plain;q=0.1", 1}, /* text/plain's own q is what counts */
        {"application/openmetrics-text;q=1.5", 0}, /* not a qvalue: ignored */
        {"application/openmetrics-text;x=\"a,b;q=0\";q=0.9,text/plain;q=0.8", 1},
        {"text/html, application/json", 0},
        {"", 0},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++)
        if (accept_om(cases[i].accept) != cases[i].openmetrics)
            fail_msg("Accept: %s: not %s", cases[i].accept ? cases[i].accept : "(none)",
                     cases[i].openmetrics ? "OpenMetrics" : "the text format");
    /* two Accept headers count as one list */
    rt_prom_request rq;
    assert_int_equal(parse_str("GET /metrics HTTP/1.1\r\nAccept: text/plain;q=0.1\r\n"
                               "Accept: application/openmetrics-text\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.openmetrics, 1);
}

static void parse_basics(void **state)
{
    (void)state;
    rt_prom_request rq;
    assert_int_equal(parse_str("GET /metrics?x=1&y=2 HTTP/1.1\r\nHost: a\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.method, RT_PROM_GET);
    assert_int_equal(rq.path_len, 8);
    assert_memory_equal(rq.path, "/metrics", 8);
    assert_int_equal(rq.version_minor, 1);
    assert_int_equal(rq.keep_alive, 1);
    assert_int_equal(rq.has_body, 0);
    assert_int_equal(parse_str("HEAD /metrics#frag HTTP/1.1\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.method, RT_PROM_HEAD);
    assert_int_equal(rq.path_len, 8);
    assert_int_equal(parse_str("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", &rq), RT_PROM_DONE);
    assert_int_equal(rq.method, RT_PROM_OTHER);
    assert_int_equal(rq.method_len, 4);
    assert_int_equal(rq.has_body, 1);
    assert_int_equal(rq.consumed, strlen("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\n"));
    assert_int_equal(parse_str("get /metrics HTTP/1.1\r\n\r\n", &rq), RT_PROM_DONE); /* methods are case-sensitive */
    assert_int_equal(rq.method, RT_PROM_OTHER);
    assert_int_equal(parse_str("GET /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.has_body, 1);
    assert_int_equal(parse_str("GET /x HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.has_body, 0);
    /* keep-alive */
    assert_int_equal(parse_str("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.keep_alive, 0);
    assert_int_equal(parse_str("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.keep_alive, 0);
    assert_int_equal(parse_str("GET / HTTP/1.0\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.version_minor, 0);
    assert_int_equal(rq.keep_alive, 0);
    assert_int_equal(parse_str("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.keep_alive, 1);
    /* absolute form; bare LF line ends; empty lines before the request */
    assert_int_equal(parse_str("GET http://127.0.0.1:9090/metrics?a HTTP/1.1\n\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.path_len, 8);
    assert_memory_equal(rq.path, "/metrics", 8);
    assert_int_equal(parse_str("GET http://h HTTP/1.1\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.path_len, 1);
    assert_int_equal(parse_str("\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.consumed, 4 + strlen("GET /metrics HTTP/1.1\r\n\r\n"));
    /* pipelined: only the first head is consumed */
    assert_int_equal(parse_str("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", &rq), RT_PROM_DONE);
    assert_int_equal(rq.consumed, strlen("GET /a HTTP/1.1\r\n\r\n"));
    assert_memory_equal(rq.path, "/a", 2);
}

static void parse_split(void **state)
{
    (void)state;
    const char *req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept: " PROM_ACCEPT
                      "\r\nUser-Agent: Prometheus/2.42.0\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n";
    size_t n = strlen(req);
    rt_prom_request rq;
    for (size_t i = 0; i < n; i++) { /* every prefix: more bytes are needed */
        char *b = malloc(i ? i : 1);
        memcpy(b, req, i);
        assert_int_equal(rt_prom_parse_request(b, i, &rq), RT_PROM_MORE);
        free(b);
    }
    assert_int_equal(parse_str(req, &rq), RT_PROM_DONE);
    assert_int_equal(rq.consumed, n);
    assert_int_equal(rq.openmetrics, 1);
}

static void parse_malformed(void **state)
{
    (void)state;
    rt_prom_request rq;
    const char *bad[] = {
        "GET /metrics HTTP/2.0\r\n\r\n",
        "GET /metrics HTTP/1.1 \r\n\r\n",
        "GET  /metrics HTTP/1.1\r\n\r\n",
        "GET metrics HTTP/1.1\r\n\r\n",
        "GET /metrics\r\n\r\n",
        "GET\r\n\r\n",
        "/metrics GET HTTP/1.1\r\n\r\n",
        "G(T /metrics HTTP/1.1\r\n\r\n",
        "GET /met rics HTTP/1.1\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost a\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n",
        "GET /metrics HTTP/1.1\r\n: a\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost: a\rb\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "GET ftp://h/metrics HTTP/1.1\r\n\r\n",
        "GET http:///metrics HTTP/1.1\r\n\r\n",
        "\x16\x03\x01\x02", /* a TLS hello: wrong from its first byte */
        "GE\x01", /* wrong before the request line ends */
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        if (parse_str(bad[i], &rq) != RT_PROM_BAD)
            fail_msg("accepted: %s", bad[i]);
    }
    assert_int_equal(parse_str("GET", &rq), RT_PROM_MORE);
    assert_int_equal(parse_str("GET /metrics HT", &rq), RT_PROM_MORE);
    /* a NUL is wrong before the line ends */
    char nul[] = "GET /metr\0ics";
    assert_int_equal(rt_prom_parse_request(nul, sizeof nul - 1, &rq), RT_PROM_BAD);
}

static void parse_oversized(void **state)
{
    (void)state;
    rt_prom_request rq;
    size_t n = RT_PROM_HEAD_MAX + 100;
    char *b = malloc(n);
    memset(b, 'a', n);
    memcpy(b, "GET /metrics HTTP/1.1\r\nX-Big: ", 30);
    assert_int_equal(rt_prom_parse_request(b, RT_PROM_HEAD_MAX - 1, &rq), RT_PROM_MORE);
    assert_int_equal(rt_prom_parse_request(b, RT_PROM_HEAD_MAX, &rq), RT_PROM_TOO_LARGE);
    assert_int_equal(rt_prom_parse_request(b, n, &rq), RT_PROM_TOO_LARGE);
    /* a head of exactly the limit is whole; one byte more is not */
    memcpy(b + RT_PROM_HEAD_MAX - 4, "\r\n\r\n", 4);
    assert_int_equal(rt_prom_parse_request(b, n, &rq), RT_PROM_DONE);
    assert_int_equal(rq.consumed, RT_PROM_HEAD_MAX);
    memset(b + RT_PROM_HEAD_MAX - 4, 'a', 4);
    memcpy(b + RT_PROM_HEAD_MAX - 3, "\r\n\r\n", 4);
    assert_int_equal(rt_prom_parse_request(b, n, &rq), RT_PROM_TOO_LARGE);
    free(b);
}

/* ---- a live server --------------------------------------------------------------------------- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_cv = PTHREAD_COND_INITIALIZER; /* signalled at every message */
static char log_text[4096];

static void on_log(void *user, rt_log_level level, const char *msg)
{
    (void)user, (void)level;
    pthread_mutex_lock(&log_mu);
    size_t n = strlen(log_text);
    snprintf(log_text + n, sizeof log_text - n, "%s\n", msg);
    pthread_cond_broadcast(&log_cv);
    pthread_mutex_unlock(&log_mu);
}

/* Waits (30 s at most: a guard) until what has been logged. */
static int wait_logged(const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    pthread_mutex_lock(&log_mu);
    while (!strstr(log_text, what) && pthread_cond_timedwait(&log_cv, &log_mu, &ts) == 0)
        ;
    int yes = strstr(log_text, what) != NULL;
    pthread_mutex_unlock(&log_mu);
    return yes;
}

static int logged(const char *what)
{
    pthread_mutex_lock(&log_mu);
    int yes = strstr(log_text, what) != NULL;
    pthread_mutex_unlock(&log_mu);
    return yes;
}

/* A server on port 0 with clock (NULL: the real one). */
static rt_prom_server *start_clock(size_t max_clients, double timeout, rt_clock *clock)
{
    rt_prom_options o = RT_PROM_OPTIONS_INIT;
    o.port = 0;
    o.max_clients = max_clients;
    o.client_timeout_secs = timeout;
    o.log = on_log;
    rt_prom_server *srv = NULL;
    assert_int_equal(rt_prom_start_clock(&o, clock, &srv), RT_OK);
    assert_true(rt_prom_port(srv) > 0);
    return srv;
}

static int dial(rt_prom_server *srv, int nonblock)
{
    int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)rt_prom_port(srv))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int r = connect(fd, (struct sockaddr *)&a, sizeof a);
    assert_true(r == 0 || (nonblock && errno == EINPROGRESS));
    return fd;
}

static void send_str(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        assert_true(w > 0);
        s += w;
        n -= (size_t)w;
    }
}

/* Waits (30 s at most: a guard, not a measure) for fd to be readable; false on the guard. */
static int wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 30000) == 1;
}

/* One reply read from fd: status, its head in head[], the body (malloc'd) of Content-Length
 * bytes (none for HEAD). Returns the status, or -1 when the connection ended first. */
typedef struct reply {
    int status;
    char head[1024];
    char *body;
    size_t len;
} reply;

static int read_reply(int fd, int head_only, reply *r)
{
    memset(r, 0, sizeof *r);
    size_t n = 0;
    char *end = NULL;
    while (!end) { /* byte by byte: what follows the head stays in the socket */
        if (n + 1 >= sizeof r->head || !wait_readable(fd) || recv(fd, r->head + n, 1, 0) != 1)
            return -1;
        r->head[++n] = '\0';
        end = strstr(r->head, "\r\n\r\n");
    }
    if (sscanf(r->head, "HTTP/1.1 %d", &r->status) != 1)
        return -1;
    const char *cl = strstr(r->head, "Content-Length: ");
    assert_non_null(cl);
    r->len = strtoul(cl + 16, NULL, 10);
    r->body = malloc(r->len + 1);
    assert_non_null(r->body);
    size_t got = 0;
    while (!head_only && got < r->len) {
        if (!wait_readable(fd))
            return -1;
        ssize_t k = recv(fd, r->body + got, r->len - got, 0);
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    r->body[head_only ? 0 : r->len] = '\0';
    return r->status;
}

/* Whether the server closed fd (EOF or a reset) within the guard. */
static int closed_by_server(int fd)
{
    char b[4096];
    for (;;) {
        if (!wait_readable(fd))
            return 0;
        ssize_t k = recv(fd, b, sizeof b, 0);
        if (k <= 0)
            return 1;
    }
}

static rt_prom_server *start(size_t max_clients, double timeout)
{
    return start_clock(max_clients, timeout, NULL);
}

/* Waits until the server has done what it can (its thread blocked on the clock, waiting for a
 * client or a deadline), then moves the clock on by secs. */
static void settle_step(rt_clock *clk, double secs)
{
    assert_true(rt_clock_test_idle(clk, 1, SETTLE_SECS));
    rt_clock_test_step(clk, secs);
}

/* Sends req on fd and reads the reply (its body dropped); returns its status (-1: none). */
static int status_of(int fd, const char *req)
{
    reply r;
    send_str(fd, req);
    int st = read_reply(fd, 0, &r);
    free(r.body);
    return st;
}

/* On a new connection: req gets status, then the server closes the connection. */
static void answered_then_closed(rt_prom_server *srv, const char *req, int status)
{
    int fd = dial(srv, 0);
    assert_int_equal(status_of(fd, req), status);
    assert_true(closed_by_server(fd));
    close(fd);
}

static const char text_body[] = "# TYPE up gauge\nup 1\n";
static const char om_body[] = "# TYPE up gauge\nup 1\n# EOF\n";

static void serve_basics(void **state)
{
    (void)state;
    rt_prom_server *srv = start(0, 0);
    assert_int_equal(rt_prom_set_bodies(srv, text_body, strlen(text_body), om_body, strlen(om_body)), RT_OK);
    int fd = dial(srv, 0);
    reply r;
    /* keep-alive: several requests, one connection */
    send_str(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_int_equal(read_reply(fd, 0, &r), 200);
    assert_non_null(strstr(r.head, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    assert_string_equal(r.body, text_body);
    free(r.body);
    send_str(fd, "GET /metrics HTTP/1.1\r\nAccept: " PROM_ACCEPT "\r\n\r\n");
    assert_int_equal(read_reply(fd, 0, &r), 200);
    assert_non_null(strstr(r.head, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"));
    assert_string_equal(r.body, om_body);
    free(r.body);
    send_str(fd, "HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_int_equal(read_reply(fd, 1, &r), 200);
    assert_int_equal(r.len, strlen(text_body));
    free(r.body);
    assert_int_equal(status_of(fd, "GET /other HTTP/1.1\r\n\r\n"), 404);
    send_str(fd, "DELETE /metrics HTTP/1.1\r\n\r\n");
    assert_int_equal(read_reply(fd, 0, &r), 405);
    assert_non_null(strstr(r.head, "Allow: GET, HEAD\r\n"));
    free(r.body);
    /* pipelined in one write */
    send_str(fd, "GET /metrics HTTP/1.1\r\n\r\nGET /metrics?a=b HTTP/1.1\r\n\r\n");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(read_reply(fd, 0, &r), 200);
        assert_string_equal(r.body, text_body);
        free(r.body);
    }
    /* Connection: close is honoured */
    send_str(fd, "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_int_equal(read_reply(fd, 0, &r), 200);
    assert_non_null(strstr(r.head, "Connection: close\r\n"));
    free(r.body);
    assert_true(closed_by_server(fd));
    close(fd);
    /* HTTP/1.0 closes by default; a body gets its answer, then the close */
    answered_then_closed(srv, "GET /metrics HTTP/1.0\r\n\r\n", 200);
    answered_then_closed(srv, "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 405);
    /* malformed: 400; oversized: 431 */
    answered_then_closed(srv, "GET /metrics HTTP/9.9\r\n\r\n", 400);
    fd = dial(srv, 0);
    char big[RT_PROM_HEAD_MAX + 512];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
    send_str(fd, big);
    assert_int_equal(read_reply(fd, 0, &r), 431);
    free(r.body);
    assert_true(closed_by_server(fd));
    close(fd);
    rt_prom_free(srv);
}

/* Before any publish the formatter's resource_tracker_info is served; rt_prom_publish of a real
 * sample works; its cost is printed (a figure, not a check). */
static void publish_sample(void **state)
{
    (void)state;
    const char *tags[] = {"run=42", "git.sha=abc"};
    rt_job job = RT_JOB_INIT;
    job.job_name = "train";
    job.team = "ml";
    job.tags = tags;
    job.tag_count = 2;
    rt_host *host = NULL;
    assert_int_equal(rt_host_read(NULL, &host), RT_OK);
    rt_prom_options o = RT_PROM_OPTIONS_INIT;
    o.job = &job;
    o.host = host;
    rt_prom_server *srv = NULL;
    assert_int_equal(rt_prom_start(&o, &srv), RT_OK);
    int fd = dial(srv, 0);
    reply r;
    assert_int_equal(status_of(fd, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.pid = getpid();
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new(&so, &s), RT_OK);
    const rt_sample *sample = NULL;
    /* each sample a second after the last on the clock the sampler is given: no waiting */
    double mono = rt_mono_secs(), real = rt_real_secs();
    assert_int_equal(rt_sampler_sample_at(s, mono + 1, real + 1, &sample), RT_OK);
    assert_int_equal(rt_prom_publish(srv, sample), RT_OK);
    assert_int_equal(rt_prom_publish(NULL, sample), RT_ERR_INVALID);
    assert_int_equal(rt_prom_set_host(srv, host), RT_OK); /* replaces the copy */
    assert_int_equal(rt_prom_set_host(srv, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_prom_set_host(NULL, host), RT_ERR_INVALID);
    int rounds = 2000;
    double t0 = rt_mono_secs();
    for (int i = 0; i < rounds; i++)
        assert_int_equal(rt_prom_publish(srv, sample), RT_OK);
    double per = (rt_mono_secs() - t0) / rounds;
    size_t text = rt_format_prometheus(sample, &job, host, NULL, 0, NULL, 0);
    size_t om = rt_format_prometheus(sample, &job, host, NULL, 1, NULL, 0);
    printf("rt_prom_publish: %.2f us per call (a sample of this machine: %zu disks, %zu interfaces; "
           "bodies %zu + %zu bytes)\n", per * 1e6, sample->disk_count, sample->network_count, text, om);
    send_str(fd, "GET /metrics HTTP/1.1\r\n\r\n");
    assert_int_equal(read_reply(fd, 0, &r), 200);
    assert_int_equal(r.len, text);
    free(r.body);
    /* OpenMetrics: made from the text body on the server's thread, byte for byte the formatter's
     * own, kept for the next request, and made anew after the next publish (never a stale one) */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(rt_sampler_sample_at(s, mono + 2 + k, real + 2 + k, &sample), RT_OK);
        assert_int_equal(rt_prom_publish(srv, sample), RT_OK);
        size_t n = rt_format_prometheus(sample, &job, host, NULL, 1, NULL, 0);
        char *want = malloc(n + 1);
        assert_non_null(want);
        rt_format_prometheus(sample, &job, host, NULL, 1, want, n + 1);
        for (int again = 0; again < 2; again++) {
            send_str(fd, "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n");
            assert_int_equal(read_reply(fd, 0, &r), 200);
            assert_int_equal(r.len, n);
            assert_memory_equal(r.body, want, n);
            free(r.body);
        }
        free(want);
    }
    close(fd);
    rt_sampler_free(s);
    rt_prom_free(srv);
    rt_host_free(host);
}

/* A client that sends nothing, and one that sends half a head, are closed after the timeout;
 * others are served meanwhile. */
static void silent_clients(void **state)
{
    (void)state;
    rt_clock *clk = rt_clock_test_new(T0);
    rt_prom_server *srv = start_clock(0, 0.3, clk);
    int quiet = dial(srv, 0), half = dial(srv, 0);
    send_str(half, "GET /metrics HTTP/1.1\r\nHo");
    int fd = dial(srv, 0);
    assert_int_equal(status_of(fd, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
    settle_step(clk, 0.29); /* not yet */
    int other = dial(srv, 0); /* served meanwhile, and its request seen before the next step */
    assert_int_equal(status_of(other, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
    struct pollfd p[3] = {{.fd = quiet, .events = POLLIN}, {.fd = half, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    assert_int_equal(poll(p, 3, 0), 0); /* none closed */
    settle_step(clk, 0.02); /* past the timeout */
    assert_true(closed_by_server(quiet));
    assert_true(closed_by_server(half));
    assert_true(closed_by_server(fd)); /* an idle keep-alive connection too */
    close(quiet);
    close(half);
    close(fd);
    close(other);
    rt_prom_free(srv);
    rt_clock_test_free(clk);
}

/* A client that asks for a big body and never reads does not stop others being served; it is
 * closed once the timeout passes. So does one that pipelines requests without reading. */
static void never_reading_client(void **state)
{
    (void)state;
    rt_clock *clk = rt_clock_test_new(T0);
    rt_prom_server *srv = start_clock(0, 2, clk);
    size_t n = 32u << 20;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, 'x', n);
    assert_int_equal(rt_prom_set_bodies(srv, big, n, om_body, strlen(om_body)), RT_OK);
    int lazy = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(lazy, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)rt_prom_port(srv))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(lazy, (struct sockaddr *)&a, sizeof a), 0);
    send_str(lazy, "GET /metrics HTTP/1.1\r\n\r\n");
    int pipe_fd = dial(srv, 0);
    setsockopt(pipe_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    for (int i = 0; i < 200; i++)
        send_str(pipe_fd, "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n");
    /* the server has done what it can with both (their socket buffers full) */
    assert_true(rt_clock_test_idle(clk, 1, SETTLE_SECS));
    for (int i = 0; i < 3; i++) { /* others: the big body, whole, and the small one */
        int fd = dial(srv, 0);
        reply r;
        send_str(fd, "GET /metrics HTTP/1.1\r\n\r\n");
        assert_int_equal(read_reply(fd, 0, &r), 200);
        assert_int_equal(r.len, n);
        assert_true(memcmp(r.body, big, n) == 0);
        free(r.body);
        send_str(fd, "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n");
        assert_int_equal(read_reply(fd, 0, &r), 200);
        assert_string_equal(r.body, om_body);
        free(r.body);
        close(fd);
    }
    /* the lazy client gets less than the whole reply, then the close */
    size_t got = 0;
    char b[65536];
    settle_step(clk, 2.5); /* past the timeout */
    for (;;) {
        assert_true(wait_readable(lazy));
        ssize_t k = recv(lazy, b, sizeof b, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    assert_true(got < n);
    close(lazy);
    close(pipe_fd);
    free(big);
    rt_prom_free(srv);
    rt_clock_test_free(clk);
}

/* With every slot taken, a new connection replaces the client idle the longest. */
static void full_replaces_oldest(void **state)
{
    (void)state;
    rt_clock *clk = rt_clock_test_new(T0);
    rt_prom_server *srv = start_clock(2, 0, clk);
    int a = dial(srv, 0), b = dial(srv, 0);
    reply r;
    assert_int_equal(status_of(a, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
    settle_step(clk, 0.02);
    send_str(b, "GET /metrics HTTP/1.1\r\n\r\n"); /* b moved bytes last: a is the idlest */
    assert_int_equal(read_reply(b, 0, &r), 200);
    free(r.body);
    settle_step(clk, 0.02);
    int c = dial(srv, 0);
    assert_int_equal(status_of(c, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
    assert_true(closed_by_server(a));
    assert_int_equal(status_of(b, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
    close(a);
    close(b);
    close(c);
    rt_prom_free(srv);
    rt_clock_test_free(clk);
}

/* Raises the soft limit of open files to at least want (up to the hard limit). */
static rlim_t raise_nofile(rlim_t want)
{
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur;
}

/* 1,000 connections opened at once (past max_clients): the server keeps going and a fresh client
 * is served while they are all still open. */
static void thousand_connections(void **state)
{
    (void)state;
    if (raise_nofile(2200) < 1200)
        skip(); /* the hard limit of open files is too low for 1,000 connections here */
    rt_prom_server *srv = start(0, 0);
    enum { N = 1000 };
    int *fds = malloc(N * sizeof *fds);
    for (int i = 0; i < N; i++)
        fds[i] = dial(srv, 1);
    for (int i = 0; i < N; i += 3) /* a third of them begin a request */
        send(fds[i], "GET /metr", 9, MSG_NOSIGNAL);
    for (int k = 0; k < 3; k++) {
        int fd = dial(srv, 0);
        assert_int_equal(status_of(fd, "GET /metrics HTTP/1.1\r\n\r\n"), 200);
        close(fd);
    }
    assert_true(logged("each new connection replaces the one idle the longest"));
    for (int i = 0; i < N; i++)
        close(fds[i]);
    free(fds);
    rt_prom_free(srv);
}

/* accept failing with EMFILE: logged once, the server backs off and serves once descriptors
 * are back; rt_prom_errmsg says so, "" before, and still after. */
static void out_of_descriptors(void **state)
{
    (void)state;
    rt_prom_server *srv = start(0, 0);
    assert_string_equal(rt_prom_errmsg(srv), "");
    assert_string_equal(rt_prom_errmsg(NULL), "");
    pthread_mutex_lock(&log_mu);
    log_text[0] = '\0'; /* what earlier tests logged */
    pthread_mutex_unlock(&log_mu);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct rlimit old, rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    int probe = dup(0); /* the lowest free descriptor: the limit goes just below it */
    close(probe);
    rl = old;
    rl.rlim_cur = (rlim_t)probe;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)rt_prom_port(srv))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0); /* in the backlog */
    send_str(fd, "GET /metrics HTTP/1.1\r\n\r\n");
    int said = wait_logged("cannot accept connections"); /* said after it is kept */
    char msg[256];
    snprintf(msg, sizeof msg, "%s", rt_prom_errmsg(srv));
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_true(said);
    char want[128];
    snprintf(want, sizeof want, "cannot accept connections (%s)", strerror(EMFILE));
    assert_string_equal(msg, want);
    reply r;
    assert_int_equal(read_reply(fd, 0, &r), 200);
    free(r.body);
    assert_string_equal(rt_prom_errmsg(srv), want);
    close(fd);
    rt_prom_free(srv);
}

/* Publishing while clients scrape: every reply is one whole body of those published. */
typedef struct race {
    rt_prom_server *srv;
    atomic_int stop;
} race;

static void *publisher(void *arg)
{
    race *rc = arg;
    char a[3000], b[5000];
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    for (int i = 0; !atomic_load(&rc->stop); i++) {
        int even = i % 2 == 0;
        /* odd rounds leave the OpenMetrics body to be made on the server's thread from the text
         * one (as rt_prom_publish does): "bbb...\n# EOF\n" */
        rt_error e = rt_prom_set_bodies(rc->srv, even ? a : b, even ? sizeof a : sizeof b, even ? b : NULL,
                                        even ? sizeof b : 0);
        if (e != RT_OK)
            return (void *)1;
        if (i % 16 == 0)
            sched_yield(); /* the scrapers' turn */
    }
    return NULL;
}

static void *scraper(void *arg)
{
    race *rc = arg;
    for (int c = 0; c < 20; c++) {
        int fd = dial(rc->srv, 0);
        for (int i = 0; i < 25; i++) {
            send_str(fd, i % 2 ? "GET /metrics HTTP/1.1\r\n\r\n"
                               : "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n");
            reply r;
            int st = read_reply(fd, 0, &r);
            if (st != 200) {
                fprintf(stderr, "scraper: status %d after %d/%d: %s\n", st, c, i, r.head);
                return (void *)1;
            }
            /* the line ends with the newline the converter adds, then "# EOF" */
            int made = r.len == 5007 && memcmp(r.body + 5000, "\n# EOF\n", 7) == 0 && r.body[4999] == 'b';
            int ok = made || ((r.len == 3000 || r.len == 5000) && r.body[0] == r.body[r.len - 1] &&
                              r.body[0] == (r.len == 3000 ? 'a' : 'b'));
            free(r.body);
            if (!ok) {
                fprintf(stderr, "scraper: a body of %zu bytes, not one published\n", r.len);
                return (void *)1;
            }
        }
        close(fd);
    }
    return NULL;
}

static void publish_while_scraping(void **state)
{
    (void)state;
    race rc = {.srv = start(0, 0)};
    atomic_init(&rc.stop, 0);
    char a[3000];
    memset(a, 'a', sizeof a);
    assert_int_equal(rt_prom_set_bodies(rc.srv, a, sizeof a, a, sizeof a), RT_OK); /* before the race */
    pthread_t pub, scr[3];
    assert_int_equal(pthread_create(&pub, NULL, publisher, &rc), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&scr[i], NULL, scraper, &rc), 0);
    void *res;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(scr[i], &res), 0);
        assert_null(res);
    }
    atomic_store(&rc.stop, 1);
    assert_int_equal(pthread_join(pub, &res), 0);
    assert_null(res);
    rt_prom_free(rc.srv);
}

static void start_errors(void **state)
{
    (void)state;
    rt_prom_server *srv = (rt_prom_server *)1;
    rt_prom_options o = RT_PROM_OPTIONS_INIT;
    o.address = "not-an-address";
    assert_int_equal(rt_prom_start(&o, &srv), RT_ERR_INVALID);
    assert_null(srv);
    o.address = "127.0.0.1";
    o.port = 70000;
    assert_int_equal(rt_prom_start(&o, &srv), RT_ERR_INVALID);
    o.port = 0;
    o.struct_size = 2;
    assert_int_equal(rt_prom_start(&o, &srv), RT_ERR_INVALID);
    o.struct_size = sizeof o;
    /* a taken port: EADDRINUSE */
    rt_prom_server *a = start(0, 0);
    o.port = rt_prom_port(a);
    errno = 0;
    assert_int_equal(rt_prom_start(&o, &srv), RT_ERR_IO);
    assert_int_equal(errno, EADDRINUSE);
    rt_prom_free(a);
    /* IPv6 loopback, when the machine has it */
    o.address = "[::1]";
    o.port = 0;
    if (rt_prom_start(&o, &srv) == RT_OK) {
        assert_true(rt_prom_port(srv) > 0);
        rt_prom_free(srv);
    }
    assert_int_equal(rt_prom_port(NULL), -1);
    rt_prom_free(NULL);
}

int main(void)
{
    signal(SIGPIPE, SIG_DFL); /* a SIGPIPE would kill the test: the server must never raise one */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_accept),
        cmocka_unit_test(parse_basics),
        cmocka_unit_test(parse_split),
        cmocka_unit_test(parse_malformed),
        cmocka_unit_test(parse_oversized),
        cmocka_unit_test(start_errors),
        cmocka_unit_test(serve_basics),
        cmocka_unit_test(publish_sample),
        cmocka_unit_test(silent_clients),
        cmocka_unit_test(never_reading_client),
        cmocka_unit_test(full_replaces_oldest),
        cmocka_unit_test(thousand_connections),
        cmocka_unit_test(out_of_descriptors),
        cmocka_unit_test(publish_while_scraping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
