/* test_bridge.c - the static tool's loader helper, end to end in the normal build: the message
 * format (core/wire.c) written and read back, cut short, mistyped, over-long, across a socket
 * pair larger than its buffers and past a deadline; a request and its reply (net/fetch_wire.c);
 * and the helper itself (src/lib/bridge/, built here as bridge-helper-test and run through
 * rt_bridge_use_program): loads, an HTTP request to a one-shot server on 127.0.0.1 and to a
 * closed port, the abort time, SHA-256, the run history's SQLite calls (sqlite/sqlite_bridge.c) with
 * SQLite's own conversions, and the helper gone once its socket closes. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "unit.h"
#include "unit_wait.h"

#include "core/bridge.h"
#include "core/wire.h"
#include "net/curl.h"
#include "net/fetch_wire.h"

#include "sqlite/sqlite_bridge.h"

/* ---- the message format --------------------------------------------------------------------- */

static void wire_round_trip(void **state)
{
    (void)state;
    rt_wire w;
    rt_wire_init(&w);
    rt_wire_put_i64(&w, INT64_MIN);
    rt_wire_put_i64(&w, -1);
    rt_wire_put_f64(&w, 0.1);
    rt_wire_put_f64(&w, -INFINITY);
    rt_wire_put_str(&w, NULL);
    rt_wire_put_str(&w, "");
    rt_wire_put_bytes(&w, "a\0b", 3);
    rt_wire_put_str(&w, "héllo");
    assert_false(w.bad);
    assert_int_equal(rt_wire_get_i64(&w), INT64_MIN);
    assert_int_equal(rt_wire_get_i64(&w), -1);
    assert_true(rt_wire_get_f64(&w) == 0.1);
    assert_true(rt_wire_get_f64(&w) == -INFINITY);
    size_t n = 99;
    assert_null(rt_wire_get_bytes(&w, &n));
    assert_int_equal(n, 0);
    assert_string_equal(rt_wire_get_bytes(&w, &n), "");
    const char *b = rt_wire_get_bytes(&w, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(b, "a\0b", 4); /* and NUL-terminated */
    assert_string_equal(rt_wire_get_bytes(&w, NULL), "héllo");
    assert_false(w.bad);
    assert_int_equal(w.pos, w.b.len);
    /* past the end: zeros and bad */
    assert_int_equal(rt_wire_get_i64(&w), 0);
    assert_true(w.bad);
    rt_wire_free(&w);
}

static void wire_mistyped_and_cut(void **state)
{
    (void)state;
    rt_wire w;
    rt_wire_init(&w);
    rt_wire_put_i64(&w, 7);
    rt_wire_put_str(&w, "text");
    /* an integer read as a double: bad, and everything after too */
    assert_true(rt_wire_get_f64(&w) == 0);
    assert_true(w.bad);
    assert_null(rt_wire_get_bytes(&w, NULL));
    /* cut anywhere: never a read past the end, always bad */
    size_t full = w.b.len;
    for (size_t cut = 0; cut < full; cut++) {
        w.b.len = cut;
        w.pos = 0;
        w.bad = false;
        int64_t v = rt_wire_get_i64(&w);
        const char *s = rt_wire_get_bytes(&w, NULL);
        assert_true(w.bad);
        assert_true(cut >= 9 ? v == 7 : v == 0);
        assert_null(s);
    }
    /* a string whose NUL is missing */
    w.b.len = full;
    w.pos = 0;
    w.bad = false;
    w.b.data[full - 1] = 'x';
    rt_wire_get_i64(&w);
    assert_null(rt_wire_get_bytes(&w, NULL));
    assert_true(w.bad);
    rt_wire_free(&w);
}

typedef struct sender {
    int fd;
    rt_wire *w;
    int rc;
} sender;

static void *send_thread(void *arg)
{
    sender *s = arg;
    s->rc = rt_wire_send(s->fd, s->w, INFINITY, NULL);
    return NULL;
}

static void wire_over_a_socket(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    /* 8 MiB: many times a socket's buffer, so the send is in many parts */
    size_t big = 8u << 20;
    char *data = malloc(big);
    assert_non_null(data);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)(i * 131 + 7);
    rt_wire out, in;
    rt_wire_init(&out);
    rt_wire_init(&in);
    rt_wire_put_i64(&out, 42);
    rt_wire_put_bytes(&out, data, big);
    sender s = {.fd = sv[0], .w = &out};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_thread, &s), 0);
    assert_int_equal(rt_wire_recv(sv[1], &in, rt_mono_secs() + 60, NULL), 0);
    pthread_join(t, NULL);
    assert_int_equal(s.rc, 0);
    assert_int_equal(rt_wire_get_i64(&in), 42);
    size_t n;
    const char *got = rt_wire_get_bytes(&in, &n);
    assert_int_equal(n, big);
    assert_memory_equal(got, data, big);
    free(data);

    /* nothing comes: the deadline */
    double t0 = rt_mono_secs();
    assert_int_equal(rt_wire_recv(sv[1], &in, t0 + 0.05, NULL), -1);
    assert_int_equal(errno, ETIMEDOUT);
    /* nothing comes: the stop time, moved by another (here: already passed) */
    _Atomic double stop = rt_mono_secs() - 1;
    assert_int_equal(rt_wire_recv(sv[1], &in, INFINITY, &stop), -1);
    assert_int_equal(errno, ETIMEDOUT);

    /* an announced length over the maximum: refused before any allocation */
    unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
    assert_int_equal(write(sv[0], huge, 4), 4);
    assert_int_equal(rt_wire_recv(sv[1], &in, rt_mono_secs() + 5, NULL), -1);
    assert_int_equal(errno, EMSGSIZE);

    /* half a message, then the other end closes */
    unsigned char part[6] = {10, 0, 0, 0, 'i', 1};
    assert_int_equal(write(sv[0], part, sizeof part), (ssize_t)sizeof part);
    close(sv[0]);
    assert_int_equal(rt_wire_recv(sv[1], &in, rt_mono_secs() + 5, NULL), -1);
    assert_int_equal(errno, EPIPE);
    /* and a send to a closed peer: EPIPE, no signal (SIGPIPE's default action for the send,
     * which would end this test without MSG_NOSIGNAL) */
    void (*was)(int) = signal(SIGPIPE, SIG_DFL);
    assert_int_equal(rt_wire_send(sv[1], &out, INFINITY, NULL), -1);
    assert_int_equal(errno, EPIPE);
    signal(SIGPIPE, was);
    close(sv[1]);

    /* a reader that never reads: the send gives up at its deadline, then at the stop time */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    t0 = rt_mono_secs();
    assert_int_equal(rt_wire_send(sv[0], &out, t0 + 0.05, NULL), -1);
    assert_int_equal(errno, ETIMEDOUT);
    stop = rt_mono_secs() - 1;
    assert_int_equal(rt_wire_send(sv[0], &out, INFINITY, &stop), -1);
    assert_int_equal(errno, ETIMEDOUT);
    close(sv[0]);
    close(sv[1]);
    rt_wire_free(&out);
    rt_wire_free(&in);
}

static void fetch_wire_round_trip(void **state)
{
    (void)state;
    const char *hdrs[] = {"Authorization: Bearer t0k", "X-A: 1", NULL};
    rt_fetch_request req = {.method = "PUT",
                            .url = "http://127.0.0.1:1/a b",
                            .headers = hdrs,
                            .body = "x\0y",
                            .body_len = 3,
                            .timeout_secs = 2.5,
                            .max_body = 1000,
                            .aws_sigv4 = NULL,
                            .username = "AK",
                            .password = "SK",
                            .reply_header = "ETag"};
    rt_wire w;
    rt_wire_init(&w);
    rt_fetch_wire_put_request(&w, &req);
    rt_fetch_request got;
    const char *gh[RT_FETCH_WIRE_HEADERS + 1];
    assert_true(rt_fetch_wire_get_request(&w, &got, gh));
    assert_string_equal(got.method, "PUT");
    assert_string_equal(got.url, req.url);
    assert_string_equal(got.headers[0], hdrs[0]);
    assert_string_equal(got.headers[1], hdrs[1]);
    assert_null(got.headers[2]);
    assert_int_equal(got.body_len, 3);
    assert_memory_equal(got.body, "x\0y", 3);
    assert_true(got.timeout_secs == 2.5);
    assert_int_equal(got.max_body, 1000);
    assert_null(got.aws_sigv4);
    assert_string_equal(got.username, "AK");
    assert_string_equal(got.password, "SK");
    assert_string_equal(got.reply_header, "ETag");
    /* every cut of it is refused */
    size_t full = w.b.len;
    for (size_t cut = 0; cut < full; cut++) {
        w.b.len = cut;
        w.pos = 0;
        w.bad = false;
        assert_false(rt_fetch_wire_get_request(&w, &got, gh));
    }
    rt_wire_free(&w);

    /* a string field with a NUL inside (a header cut short on the far side): refused */
    rt_wire_init(&w);
    rt_wire_put_str(&w, "GET");
    rt_wire_put_str(&w, "http://127.0.0.1:1/");
    rt_wire_put_i64(&w, 1);
    rt_wire_put_bytes(&w, "X-A: 1\0Host: elsewhere", 23);
    rt_wire_put_bytes(&w, NULL, 0);
    rt_wire_put_f64(&w, 1);
    rt_wire_put_i64(&w, 10);
    for (int i = 0; i < 4; i++)
        rt_wire_put_str(&w, NULL);
    assert_false(rt_fetch_wire_get_request(&w, &got, gh));
    rt_wire_free(&w);

    /* too many headers: the message is bad, not cut */
    const char *many[RT_FETCH_WIRE_HEADERS + 2];
    for (int i = 0; i <= RT_FETCH_WIRE_HEADERS; i++)
        many[i] = "X: y";
    many[RT_FETCH_WIRE_HEADERS + 1] = NULL;
    rt_fetch_request lots = {.url = "http://127.0.0.1:1/", .headers = many, .timeout_secs = 1};
    rt_wire_init(&w);
    rt_fetch_wire_put_request(&w, &lots);
    assert_true(w.bad);
    rt_wire_free(&w);

    /* a reply */
    rt_fetch_reply r;
    memset(&r, 0, sizeof r);
    r.status = 404;
    r.replied = true;
    rt_buf_init(&r.body, 100);
    rt_buf_append(&r.body, "nope", 4);
    snprintf(r.header, sizeof r.header, "\"etag\"");
    rt_wire_init(&w);
    rt_fetch_wire_put_reply(&w, RT_OK, "", &r);
    rt_fetch_reply back;
    char err[64] = "x";
    assert_int_equal(rt_fetch_wire_get_reply(&w, &back, err, sizeof err), RT_OK);
    assert_int_equal(back.status, 404);
    assert_int_equal(back.body.len, 4);
    assert_string_equal(back.body.data, "nope");
    assert_string_equal(back.header, "\"etag\"");
    assert_true(back.replied); /* a Keeper that answered is not taken for one offline */
    assert_string_equal(err, "");
    rt_fetch_reply_free(&back);
    w.b.len -= 2; /* cut */
    w.pos = 0;
    assert_int_equal(rt_fetch_wire_get_reply(&w, &back, err, sizeof err), RT_ERR_IO);
    assert_non_null(strstr(err, "malformed"));
    rt_fetch_reply_free(&back);
    rt_fetch_reply_free(&r);
    rt_wire_free(&w);
}

/* ---- the helper ------------------------------------------------------------------------------ */

static void helper_loads_and_refuses(void **state)
{
    (void)state;
    char err[300];
    rt_bridge_use_program("/nonexistent/helper");
    assert_int_equal(rt_bridge_probe("sqlite", err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot run the helper"));
    rt_bridge_use_program(BRIDGE_HELPER);
    assert_int_equal(rt_bridge_probe("sqlite", err, sizeof err), 0);
    assert_int_equal(rt_bridge_probe("curl", err, sizeof err), 0);
    assert_int_equal(rt_bridge_probe("zstd", err, sizeof err), -1);
    assert_non_null(strstr(err, "loads no 'zstd'"));

    /* an unknown request: the helper ends, said as such; the next start is a new helper */
    rt_bridge b;
    assert_int_equal(rt_bridge_start(&b, err, sizeof err), 0);
    rt_wire q, a;
    rt_wire_init(&q);
    rt_wire_init(&a);
    rt_wire_put_i64(&q, 99);
    assert_int_equal(rt_bridge_call(&b, &q, &a, rt_mono_secs() + 10, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "it ended"));
    assert_int_equal(b.fd, -1);

    /* SHA-256 of "abc" (FIPS 180-2's example) */
    assert_int_equal(rt_bridge_start(&b, err, sizeof err), 0);
    pid_t pid = b.pid;
    rt_wire_free(&q);
    rt_wire_init(&q);
    rt_wire_put_i64(&q, RT_BRIDGE_SHA256);
    rt_wire_put_bytes(&q, "abc", 3);
    assert_int_equal(rt_bridge_call(&b, &q, &a, rt_mono_secs() + 10, NULL, err, sizeof err), 0);
    assert_int_equal(rt_wire_get_i64(&a), RT_OK);
    assert_string_equal(rt_wire_get_bytes(&a, NULL),
                        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* --wait-all without a group: only helpers left counts as no child left */
    assert_true(rt_helper_only_left());
    pid_t other = fork();
    if (other == 0) {
        pause();
        _exit(0);
    }
    assert_false(rt_helper_only_left());
    kill(other, SIGKILL);
    assert_int_equal(waitpid(other, NULL, 0), other);
    assert_true(rt_helper_only_left());
    /* the tool's reaping knows it as a helper (not a process of the job), running or not */
    assert_int_equal(rt_helper_reap(pid), 1);
    assert_int_equal(rt_helper_reap(getpid()), 0);
    /* stopped: the helper ends and is reaped (by its owner within 200 ms; later, under the
     * sanitizers' exit, by the reaping an abandoned one gets), and is no helper any more */
    rt_bridge_stop(&b);
    UNIT_WAIT_UNTIL((rt_helper_reap(pid), !rt_bridge_is_helper(pid)), UNIT_WAIT_SECS);
    assert_false(rt_bridge_is_helper(pid));
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(rt_helper_reap(pid), 0);
    assert_false(rt_helper_only_left()); /* no helper: the caller's own answer stands */

    /* reaped by the tool's loop first (a child subreaper's waitid): its owner still stops it */
    assert_int_equal(rt_bridge_start(&b, err, sizeof err), 0);
    pid = b.pid;
    shutdown(b.fd, SHUT_WR); /* the helper sees the end and exits */
    siginfo_t si = {0}; /* until it has exited, left to reap (WNOWAIT) */
    UNIT_WAIT_UNTIL(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid,
                    UNIT_WAIT_SECS);
    assert_int_equal(rt_helper_reap(pid), 1);
    assert_int_equal(kill(pid, 0), -1); /* reaped */
    assert_false(rt_bridge_is_helper(pid));
    assert_int_equal(rt_helper_reap(pid), 0); /* its slot waits for its owner, the pid is free */
    rt_bridge_stop(&b);
    assert_int_equal(rt_helper_reap(pid), 0);
    rt_wire_free(&q);
    rt_wire_free(&a);
}

/* A one-shot HTTP server on 127.0.0.1: takes one request whole (its head and a Content-Length
 * body), keeps it, answers with a fixed reply; or, hang, answers nothing until its client goes. */
typedef struct server {
    int lfd, port;
    bool hang;
    char request[4096];
    size_t len;
} server;

static void *serve(void *arg)
{
    server *s = arg;
    int c = accept(s->lfd, NULL, NULL);
    if (c < 0)
        return NULL;
    for (;;) {
        ssize_t k = read(c, s->request + s->len, sizeof s->request - 1 - s->len);
        if (k <= 0)
            break;
        s->len += (size_t)k;
        s->request[s->len] = '\0';
        char *end = strstr(s->request, "\r\n\r\n");
        const char *cl = strcasestr(s->request, "Content-Length:");
        if (end && (!cl || s->len >= (size_t)(end + 4 - s->request) + strtoul(cl + 15, NULL, 10)))
            break;
    }
    if (!s->hang) {
        static const char reply[] = "HTTP/1.1 201 Created\r\nETag: \"v1\"\r\nContent-Length: 5\r\n\r\nhello";
        ssize_t w = write(c, reply, sizeof reply - 1);
        (void)w;
    } else {
        char b[16];
        while (read(c, b, sizeof b) > 0) /* until the client is gone */
            ;
    }
    close(c);
    return NULL;
}

static void server_start(server *s, pthread_t *t)
{
    memset(s->request, 0, sizeof s->request);
    s->len = 0;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->lfd, 1), 0);
    socklen_t l = sizeof a;
    getsockname(s->lfd, (struct sockaddr *)&a, &l);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(t, NULL, serve, s), 0);
}

static void helper_fetches(void **state)
{
    (void)state;
    rt_bridge_use_program(BRIDGE_HELPER);
    server s = {0};
    pthread_t t;
    server_start(&s, &t);
    char url[64], err[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/put/here", s.port);
    const char *hdrs[] = {"X-Token: s3cret", NULL};
    rt_fetch_request req = {.method = "PUT",
                            .url = url,
                            .headers = hdrs,
                            .body = "payload",
                            .body_len = 7,
                            .timeout_secs = 10,
                            .max_body = 100,
                            .reply_header = "etag"};
    rt_fetch_reply r;
    assert_int_equal(rt_fetch_bridged(&req, &r, err, sizeof err), RT_OK);
    pthread_join(t, NULL);
    close(s.lfd);
    assert_int_equal(r.status, 201);
    assert_string_equal(r.body.data, "hello");
    assert_string_equal(r.header, "\"v1\"");
    assert_true(strncmp(s.request, "PUT /put/here HTTP/1.1\r\n", 24) == 0);
    assert_non_null(strstr(s.request, "\r\nX-Token: s3cret\r\n"));
    assert_non_null(strstr(s.request, "\r\n\r\npayload"));
    rt_fetch_reply_free(&r);

    /* a reply larger than max_body: the helper's libcurl refuses it, in its words */
    server_start(&s, &t);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", s.port);
    rt_fetch_request small = {.url = url, .timeout_secs = 10, .max_body = 2};
    assert_int_equal(rt_fetch_bridged(&small, &r, err, sizeof err), RT_ERR_IO);
    assert_non_null(strstr(err, "larger than 2 bytes"));
    rt_fetch_reply_free(&r);
    pthread_join(t, NULL);
    close(s.lfd);

    /* a closed port: an error, not a crash, in libcurl's words */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(a.sin_port));
    close(fd);
    rt_fetch_request closed = {.url = url, .timeout_secs = 5, .max_body = 10};
    assert_int_equal(rt_fetch_bridged(&closed, &r, err, sizeof err), RT_ERR_IO);
    assert_true(err[0] != '\0');
    rt_fetch_reply_free(&r);
}

static void helper_fetch_aborts(void **state)
{
    (void)state;
    rt_bridge_use_program(BRIDGE_HELPER);
    server s = {.hang = true};
    pthread_t t;
    server_start(&s, &t);
    char url[64], err[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", s.port);
    rt_fetch_request req = {.url = url, .timeout_secs = 20, .max_body = 10};
    _Atomic double at = rt_mono_secs() + 0.3;
    rt_fetch_abort_at(&at);
    rt_fetch_reply r;
    double t0 = rt_mono_secs();
    assert_int_equal(rt_fetch_bridged(&req, &r, err, sizeof err), RT_ERR_IO);
    rt_fetch_abort_at(NULL);
    assert_non_null(strstr(err, "aborted at the caller's deadline"));
    printf("# a hanging request through the helper ended %.2f s after its start, at an abort time of 0.3 s\n",
           rt_mono_secs() - t0);
    rt_fetch_reply_free(&r);
    /* the helper, told by its closed socket, ends its transfer: the server sees its client go */
    pthread_join(t, NULL);
    close(s.lfd);
}

/* ---- SQLite through the helper ---------------------------------------------------------------- */

static void helper_runs_sqlite(void **state)
{
    (void)state;
    rt_bridge_use_program(BRIDGE_HELPER);
    rt_sqlite_api t;
    char err[300], dir[] = "/tmp/rt-bridge-XXXXXX", path[64];
    assert_int_equal(rt_sqlite_bridge_install(&t, err, sizeof err), 0);
    unit_tmpdir(dir);
    snprintf(path, sizeof path, "%s/h.db", dir);
    sqlite3 *db = NULL;
    assert_int_equal(t.open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    assert_int_equal(t.busy_timeout(db, 1000), SQLITE_OK);
    assert_int_equal(t.extended_result_codes(db, 1), SQLITE_OK);
    assert_int_equal(t.exec(db, "CREATE TABLE r (i INTEGER, d REAL, s TEXT, n)", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(t.get_autocommit(db), 1);
    assert_int_equal(t.exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(t.get_autocommit(db), 0);
    sqlite3_stmt *st = NULL;
    const char *sql = "INSERT INTO r VALUES (?, ?, ?, ?); SELECT 1", *tail = NULL;
    assert_int_equal(t.prepare_v2(db, sql, -1, &st, &tail), SQLITE_OK);
    assert_string_equal(tail, " SELECT 1");
    assert_int_equal(t.column_count(st), 0);
    assert_int_equal(t.bind_int64(st, 1, INT64_C(1) << 40), SQLITE_OK);
    assert_int_equal(t.bind_double(st, 2, 2.5), SQLITE_OK);
    assert_int_equal(t.bind_text(st, 3, "naïve \"x\"", -1, SQLITE_TRANSIENT), SQLITE_OK);
    assert_int_equal(t.bind_null(st, 4), SQLITE_OK);
    assert_int_equal(t.step(st), SQLITE_DONE);
    assert_int_equal(t.finalize(st), SQLITE_OK);
    assert_int_equal(t.exec(db, "INSERT INTO r VALUES (-7, 1e300, '42abc', x'00')", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(t.exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);

    assert_int_equal(t.prepare_v2(db, "SELECT i, d, s, n AS blank FROM r ORDER BY rowid", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(t.column_count(st), 4);
    assert_string_equal(t.column_name(st, 3), "blank");
    assert_null(t.column_name(st, 4));
    assert_int_equal(t.step(st), SQLITE_ROW);
    assert_int_equal(t.column_type(st, 0), SQLITE_INTEGER);
    assert_int_equal(t.column_int64(st, 0), INT64_C(1) << 40);
    assert_int_equal(t.column_int(st, 0), 0); /* its low 32 bits, as SQLite's own */
    assert_true(t.column_double(st, 0) == 1099511627776.0);
    assert_string_equal((const char *)t.column_text(st, 0), "1099511627776");
    assert_int_equal(t.column_type(st, 1), SQLITE_FLOAT);
    assert_true(t.column_double(st, 1) == 2.5);
    assert_int_equal(t.column_int64(st, 1), 2);
    assert_string_equal((const char *)t.column_text(st, 2), "naïve \"x\"");
    assert_int_equal(t.column_bytes(st, 2), (int)strlen("naïve \"x\""));
    assert_int_equal(t.column_type(st, 3), SQLITE_NULL);
    assert_null(t.column_text(st, 3));
    assert_int_equal(t.column_int64(st, 3), 0);
    assert_int_equal(t.step(st), SQLITE_ROW);
    assert_int_equal(t.column_int(st, 0), -7);
    assert_true(t.column_double(st, 1) == 1e300);
    assert_int_equal(t.column_int64(st, 2), 42); /* text to a number, as SQLite converts */
    assert_int_equal(t.column_type(st, 3), SQLITE_BLOB);
    assert_int_equal(t.column_bytes(st, 3), 1);
    assert_int_equal(t.step(st), SQLITE_DONE);
    assert_int_equal(t.column_type(st, 0), SQLITE_NULL); /* no row held */
    assert_int_equal(t.finalize(st), SQLITE_OK);
    assert_int_equal(t.finalize(NULL), SQLITE_OK);

    /* an error: SQLite's code and message */
    assert_int_equal(t.prepare_v2(db, "SELECT nope FROM r", -1, &st, NULL), SQLITE_ERROR);
    assert_null(st);
    assert_int_equal(t.errcode(db), SQLITE_ERROR);
    assert_non_null(strstr(t.errmsg(db), "no such column: nope"));
    assert_string_equal(t.errstr(SQLITE_BUSY), "database is locked");
    assert_int_equal(t.exec(db, "SELECT 1", (int (*)(void *, int, char **, char **))abort, NULL, NULL),
                     SQLITE_MISUSE); /* rows to a callback: not carried */
    assert_int_equal(t.close(db), SQLITE_OK);
    /* every database closed: no helper runs; errstr says the code plainly */
    assert_non_null(strstr(t.errstr(SQLITE_BUSY), "5"));

    /* the file is SQLite's own: the dynamic loading reads it back */
    rt_sqlite_use("libsqlite3.so.0");
    assert_int_equal(rt_sqlite_load(err, sizeof err), RT_OK);
    assert_int_equal(rt_sqlite_calls()->open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(rt_sqlite_calls()->prepare_v2(db, "SELECT count(*), sum(i) FROM r", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(rt_sqlite_calls()->step(st), SQLITE_ROW);
    assert_int_equal(rt_sqlite_calls()->column_int64(st, 0), 2);
    assert_int_equal(rt_sqlite_calls()->column_int64(st, 1), (INT64_C(1) << 40) - 7);
    rt_sqlite_calls()->finalize(st);
    rt_sqlite_calls()->close(db);

    /* a database that cannot be opened: SQLite's refusal through the helper, the helper stopped */
    assert_int_equal(t.open_v2("/nonexistent/dir/h.db", &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_CANTOPEN);
    assert_int_equal(t.close(db), SQLITE_OK);
    /* no helper can start: CANTOPEN, and errmsg without a handle says why */
    rt_bridge_use_program("/nonexistent/helper");
    db = NULL;
    assert_int_equal(t.open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_CANTOPEN);
    assert_null(db);
    assert_non_null(strstr(t.errmsg(NULL), "cannot run the helper"));
    rt_bridge_use_program(BRIDGE_HELPER);
    unit_rmtree(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wire_round_trip),          cmocka_unit_test(wire_mistyped_and_cut),
        cmocka_unit_test(wire_over_a_socket),       cmocka_unit_test(fetch_wire_round_trip),
        cmocka_unit_test(helper_loads_and_refuses), cmocka_unit_test(helper_fetches),
        cmocka_unit_test(helper_fetch_aborts),      cmocka_unit_test(helper_runs_sqlite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
