/* test_phase_listen.c - the phase protocol: the line parser (verbs, names by the one rule, CRLF,
 * t= and unknown fields, the 512-byte limit, bytes not NUL-terminated) and the listener on real
 * sockets in a temporary directory (a path and the abstract namespace): marks from one-shot and
 * long-lived connections with the sender's pid, refusals counted (a line too long and the rest
 * discarded to its LF, a half line at the end, a bad line, connections past 64), the sender's
 * t= believed only when sane, the token bucket's pair-aware drops, the bound on one drain with
 * the poll descriptor still readable after it, and the socket file removed at the end. */
#include "unit.h"

#include <math.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "phase/parse.h"
#include "phase/phase.h"

/* ---- the parser ---- */

static int parse(const char *s, rt_phase_line *out)
{
    size_t n = strlen(s);
    char *copy = malloc(n ? n : 1); /* exactly the bytes: a read past them is ASan's finding */
    assert_non_null(copy);
    memcpy(copy, s, n);
    int r = rt_phase_parse_line(copy, n, out);
    if (r == 0) /* the name points into the buffer: check it before it goes */
        out->name = strndup(out->name, out->name_len);
    free(copy);
    return r;
}

static void expect(const char *line, int kind, const char *name)
{
    rt_phase_line pl;
    assert_int_equal(parse(line, &pl), 0);
    assert_int_equal(pl.kind, kind);
    assert_int_equal(pl.name_len, strlen(name));
    assert_memory_equal(pl.name, name, pl.name_len);
    free((char *)pl.name);
}

static void bad(const char *line, int why)
{
    rt_phase_line pl;
    assert_int_equal(parse(line, &pl), why);
    assert_int_equal(pl.kind, 0);
}

static void parse_lines(void **state)
{
    (void)state;
    expect("start load\n", RT_PHASE_START, "load");
    expect("stop load", RT_PHASE_STOP, "load"); /* the LF may be left out (the caller's line) */
    expect("start load data (part 2)\r\n", RT_PHASE_START, "load data (part 2)");
    expect("stop  x\n", RT_PHASE_STOP, " x"); /* the name is all after the first space */
    expect("start \xc3\xa9t\xc3\xa9\n", RT_PHASE_START, "\xc3\xa9t\xc3\xa9");
    rt_phase_line pl;
    assert_int_equal(parse("start x\tt=123\tfoo=bar\n", &pl), 0);
    assert_true(pl.has_t);
    assert_int_equal(pl.t_ns, 123);
    free((char *)pl.name);
    assert_int_equal(parse("start x\tfoo\t\tt=7\n", &pl), 0); /* unknown and empty fields ignored */
    assert_true(pl.has_t);
    assert_int_equal(pl.t_ns, 7);
    free((char *)pl.name);
    assert_int_equal(parse("start x\tt=abc\n", &pl), 0); /* a t= that is no number: ignored */
    assert_false(pl.has_t);
    free((char *)pl.name);
    assert_int_equal(parse("start x\tt=99999999999999999999999\n", &pl), 0); /* past 64 bits */
    assert_false(pl.has_t);
    free((char *)pl.name);
    assert_int_equal(parse("start x\tt=\n", &pl), 0);
    assert_false(pl.has_t);
    free((char *)pl.name);

    bad("", RT_PHASE_REFUSED_MALFORMED);
    bad("\n", RT_PHASE_REFUSED_MALFORMED);
    bad("START x\n", RT_PHASE_REFUSED_MALFORMED);
    bad("start\n", RT_PHASE_REFUSED_MALFORMED);
    bad("start \n", RT_PHASE_REFUSED_MALFORMED); /* an empty name */
    bad("start \tt=1\n", RT_PHASE_REFUSED_MALFORMED);
    bad("startx\n", RT_PHASE_REFUSED_MALFORMED);
    bad("begin x\n", RT_PHASE_REFUSED_MALFORMED);
    bad("start a\x01z\n", RT_PHASE_REFUSED_MALFORMED); /* a control character */
    bad("start \xff\n", RT_PHASE_REFUSED_MALFORMED);   /* not UTF-8 */
    bad("start a\nstop a\n", RT_PHASE_REFUSED_MALFORMED); /* two lines */
    bad("start a\r\r\n", RT_PHASE_REFUSED_MALFORMED);

    char line[700];
    memcpy(line, "start ", 6);
    memset(line + 6, 'n', 256);
    line[6 + 256] = '\0';
    bad(line, RT_PHASE_REFUSED_MALFORMED); /* a name of 256 bytes */
    line[6 + 255] = '\0';
    expect(line, RT_PHASE_START, line + 6); /* 255 */
    /* 512 bytes with the LF: taken; 513: too long */
    memset(line, 0, sizeof line);
    memcpy(line, "start x\tpad=", 12);
    memset(line + 12, 'p', 511 - 12);
    line[511] = '\n';
    expect(line, RT_PHASE_START, "x");
    line[511] = 'p';
    line[512] = '\n';
    bad(line, RT_PHASE_REFUSED_TOO_LONG);
    assert_int_equal(rt_phase_parse_line(NULL, 0, &pl), RT_PHASE_REFUSED_MALFORMED);
}

/* ---- the listener ---- */

static double rt_real_secs_test(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct got {
    int n;
    int kind[256];
    char name[256][64];
    int64_t pid[256];
    double t[256];
} got;

static void collect(void *user, const rt_phase_mark *m)
{
    got *g = user;
    if (g->n >= 256)
        return;
    g->kind[g->n] = m->kind;
    snprintf(g->name[g->n], sizeof g->name[0], "%s", m->name);
    g->pid[g->n] = m->pid;
    g->t[g->n] = m->timestamp_secs;
    assert_true(isnan(m->cpu_secs_total)); /* the readings are the caller's to fill */
    g->n++;
}

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-phase-XXXXXX");
    unit_tmpdir(dir);
    snprintf(path, sizeof path, "%s/phase.sock", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

static rt_phase_listener *listener(const char *address, double rate, double burst)
{
    rt_phase_listener_options o = RT_PHASE_LISTENER_OPTIONS_INIT;
    o.address = address;
    o.rate_per_sec = rate;
    o.burst = burst;
    rt_phase_listener *l = NULL;
    assert_int_equal(rt_phase_listener_new(&o, &l), RT_OK);
    assert_non_null(l);
    return l;
}

/* A connected client socket (blocking). */
static int client(const char *address)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof sa;
    assert_true(strlen(address) < sizeof sa.sun_path);
    if (address[0] == '@') {
        memcpy(sa.sun_path + 1, address + 1, strlen(address) - 1);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(address));
    } else {
        memcpy(sa.sun_path, address, strlen(address) + 1);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, len), 0);
    return fd;
}

static void say(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void one_shot(const char *address, const char *s)
{
    int fd = client(address);
    say(fd, s);
    close(fd);
}

static bool readable(rt_phase_listener *l, int ms)
{
    struct pollfd p = {.fd = rt_phase_listener_poll_fd(l), .events = POLLIN};
    return poll(&p, 1, ms) == 1;
}

/* Drains until n marks came or nothing more comes within a second. */
static void drain_until(rt_phase_listener *l, got *g, int n)
{
    while (g->n < n && readable(l, 1000))
        rt_phase_listener_drain(l, 0, collect, g);
    rt_phase_listener_drain(l, 0, collect, g);
}

static rt_phase_counts counts(rt_phase_listener *l)
{
    rt_phase_counts c;
    memset(&c, 0xff, sizeof c);
    assert_int_equal(rt_phase_listener_counts(l, &c, sizeof c), RT_OK);
    return c;
}

static void marks_from_connections(void **state)
{
    (void)state;
    rt_phase_listener *l = listener(path, 0, 0);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(rt_phase_listener_drain(l, 0, collect, &(got){0}), 0); /* nothing yet */
    got g = {0};
    one_shot(path, "start load\n");
    int fd = client(path); /* a long-lived writer: lines in pieces */
    say(fd, "stop lo");
    say(fd, "ad\r\nstart train data\n");
    drain_until(l, &g, 3);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.kind[0], RT_PHASE_START);
    assert_string_equal(g.name[0], "load");
    assert_int_equal(g.pid[0], getpid());
    assert_int_equal(g.kind[1], RT_PHASE_STOP);
    assert_string_equal(g.name[2], "train data");
    assert_true(g.t[0] <= rt_real_secs_test() + 0.01); /* no t=: the time it was read */
    close(fd);
    rt_phase_counts c = counts(l);
    assert_int_equal(c.too_long + c.malformed + c.flood + c.refused, 0);
    rt_phase_listener_free(l);
    assert_int_equal(lstat(path, &st), -1); /* removed at the end */
}

static void refusals_counted(void **state)
{
    (void)state;
    rt_phase_listener *l = listener(path, 0, 0);
    got g = {0};
    char longline[700];
    memset(longline, 'x', sizeof longline);
    memcpy(longline, "start ", 6);
    longline[600] = '\n';
    longline[601] = '\0';
    int fd = client(path);
    say(fd, longline);           /* too long: discarded up to its LF */
    say(fd, "start ok\n");       /* the next line is taken */
    say(fd, "start a\x01z\n");   /* a control character */
    say(fd, "begin x\n");        /* a bad verb */
    say(fd, "stop ok\nstop hal"); /* a half line at the end */
    close(fd);
    drain_until(l, &g, 2);
    while (readable(l, 200))
        rt_phase_listener_drain(l, 0, collect, &g);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.name[0], "ok");
    assert_int_equal(g.kind[1], RT_PHASE_STOP);
    rt_phase_counts c = counts(l);
    assert_int_equal(c.too_long, 1);
    assert_int_equal(c.malformed, 3);
    assert_int_equal(c.flood, 0);
    assert_int_equal(c.accepted, 0); /* the pipeline counts what it takes */
    rt_phase_listener_free(l);
}

static void sender_time(void **state)
{
    (void)state;
    rt_phase_listener *l = listener(path, 0, 0);
    double real0 = rt_real_secs_test();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long now = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
    char buf[256];
    int fd = client(path);
    snprintf(buf, sizeof buf, "start past\tt=%llu\n", now - 2000000000ULL); /* 2 s ago: believed */
    say(fd, buf);
    snprintf(buf, sizeof buf, "start future\tt=%llu\n", now + 60000000000ULL); /* ahead: not */
    say(fd, buf);
    snprintf(buf, sizeof buf, "start old\tt=%llu\n", now - 20000000000ULL); /* 20 s: not */
    say(fd, buf);
    close(fd);
    got g = {0};
    drain_until(l, &g, 3);
    double real1 = rt_real_secs_test();
    assert_int_equal(g.n, 3);
    /* believed: the sender's time, 2 s before its send (between the two readings); not believed:
     * the time it was read (between them too) */
    assert_true(g.t[0] >= real0 - 2.0 - 0.01 && g.t[0] <= real1 - 2.0 + 0.01);
    for (int i = 1; i < 3; i++)
        assert_true(g.t[i] >= real0 - 0.01 && g.t[i] <= real1 + 0.01);
    rt_phase_listener_free(l);
}

static void flood_pair_aware(void **state)
{
    (void)state;
    rt_phase_listener *l = listener(path, 0.001, 3); /* 3 starts, then next to nothing */
    int fd = client(path);
    for (int i = 0; i < 10; i++)
        say(fd, "start a\n");
    for (int i = 0; i < 10; i++)
        say(fd, "stop a\n");
    say(fd, "stop b\n"); /* a stop of no dropped start passes (the pipeline judges it) */
    close(fd);
    got g = {0};
    drain_until(l, &g, 7);
    assert_int_equal(g.n, 7);
    int starts = 0, stops = 0;
    for (int i = 0; i < g.n; i++)
        *(g.kind[i] == RT_PHASE_START ? &starts : &stops) += 1;
    assert_int_equal(starts, 3);
    assert_int_equal(stops, 4);
    assert_string_equal(g.name[6], "b");
    assert_int_equal(counts(l).flood, 14); /* 7 starts and their 7 stops */
    rt_phase_listener_free(l);
}

static void drain_bounded(void **state)
{
    (void)state;
    rt_phase_listener *l = listener("@rt-unit-phase-bounded", 0, 0);
    int fd = client("@rt-unit-phase-bounded");
    for (int i = 0; i < 100; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "start n%d\n", i);
        say(fd, buf);
    }
    got g = {0};
    assert_true(readable(l, 1000));
    assert_int_equal(rt_phase_listener_drain(l, 10, collect, &g), 10);
    assert_int_equal(g.n, 10);
    for (int turns = 0; g.n < 100 && turns < 50; turns++) {
        assert_true(readable(l, 1000)); /* what is left keeps the descriptor readable */
        assert_true(rt_phase_listener_drain(l, 10, collect, &g) <= 10);
    }
    assert_int_equal(g.n, 100);
    for (int i = 0; i < 100; i++) {
        char want[32];
        snprintf(want, sizeof want, "n%d", i);
        assert_string_equal(g.name[i], want); /* in order */
    }
    assert_false(readable(l, 0));
    close(fd);
    rt_phase_listener_free(l);
}

/* One-shot senders queued while the tracker was busy: a bounded drain takes what it may and
 * leaves the rest in the backlog, so none is refused for want of a connection slot. */
static void backlog_bounded(void **state)
{
    (void)state;
    rt_phase_listener *l = listener(path, 0, 0);
    for (int i = 0; i < 100; i++)
        one_shot(path, "start q\n");
    got g = {0};
    for (int turns = 0; g.n < 100 && turns < 100 && readable(l, 1000); turns++)
        assert_true(rt_phase_listener_drain(l, 10, collect, &g) <= 10);
    assert_int_equal(g.n, 100);
    assert_int_equal(counts(l).refused, 0);
    rt_phase_listener_free(l);
}

static void connections_capped(void **state)
{
    (void)state;
    rt_phase_listener *l = listener(path, 0, 0);
    int fds[70];
    for (int i = 0; i < 70; i++)
        fds[i] = client(path);
    got g = {0};
    while (readable(l, 200) && counts(l).refused < 6)
        rt_phase_listener_drain(l, 0, collect, &g);
    assert_int_equal(counts(l).refused, 6);
    say(fds[0], "start first\n"); /* the first 64 are served */
    drain_until(l, &g, 1);
    assert_int_equal(g.n, 1);
    for (int i = 0; i < 70; i++)
        close(fds[i]);
    rt_phase_listener_free(l);
}

static void bad_addresses(void **state)
{
    (void)state;
    rt_phase_listener *l = (rt_phase_listener *)1;
    rt_phase_listener_options o = RT_PHASE_LISTENER_OPTIONS_INIT;
    assert_int_equal(rt_phase_listener_new(&o, &l), RT_ERR_INVALID);
    assert_null(l);
    o.address = "";
    assert_int_equal(rt_phase_listener_new(&o, &l), RT_ERR_INVALID);
    o.address = "@";
    assert_int_equal(rt_phase_listener_new(&o, &l), RT_ERR_INVALID);
    char big[200];
    memset(big, 'a', sizeof big - 1);
    big[0] = '/';
    big[sizeof big - 1] = '\0';
    o.address = big;
    assert_int_equal(rt_phase_listener_new(&o, &l), RT_ERR_INVALID);
    assert_int_equal(rt_phase_listener_new(NULL, &l), RT_ERR_INVALID);
    /* a file that is not a socket is never removed: the bind fails */
    unit_put(dir, "phase.sock", "user data\n");
    o.address = path;
    assert_int_equal(rt_phase_listener_new(&o, &l), RT_ERR_SYSTEM);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    unlink(path);
    assert_int_equal(rt_phase_listener_poll_fd(NULL), -1);
    assert_int_equal(rt_phase_listener_drain(NULL, 0, collect, NULL), 0);
    rt_phase_listener_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_lines),
        cmocka_unit_test_setup_teardown(marks_from_connections, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(sender_time, setup, teardown),
        cmocka_unit_test_setup_teardown(flood_pair_aware, setup, teardown),
        cmocka_unit_test_setup_teardown(drain_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(backlog_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(connections_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_addresses, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
