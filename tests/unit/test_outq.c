/* test_outq.c - the sample output's queue (src/cli/outq.c) against real pipes: a reader that
 * keeps up gets each line from one write; one that never reads never blocks a push, and the end
 * returns at its deadline with what was delivered plus what was dropped equal to what was pushed
 * (the lines in the pipe are the delivered ones, exactly); a slow reader gets everything while
 * the end waits; a queue over its bound drops whole samples; a closed reader ends the output with
 * EPIPE; a thread stuck in a blocking write is left behind and does not hold up the end. */
#include "unit.h"
#include "unit_wait.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <dirent.h>
#include <time.h>

#include "outq.h"

/* The number of threads of this process (its task directory's entries). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A pipe whose write end takes at most one page (F_SETPIPE_SZ). */
static void small_pipe(int p[2])
{
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    assert_true(fcntl(p[1], F_SETPIPE_SZ, 4096) >= 4096);
}

/* What a read of the (non-blocking) fd gives now, at most cap bytes: 0 when nothing is there. */
static size_t read_some(int fd, char *buf, size_t cap)
{
    ssize_t k = read(fd, buf, cap);
    return k > 0 ? (size_t)k : 0;
}

/* Line i: "i:" then filler, n bytes with the newline. */
static void line_of(char *buf, size_t n, int i)
{
    memset(buf, 'x', n);
    int k = snprintf(buf, n, "%d:", i);
    buf[k] = 'x';
    buf[n - 1] = '\n';
}

/* Reads everything now in the pipe (its write end closed or not) and returns the complete
 * lines; each must be line_of(_, n, next) in order. */
static int drain_lines(int rfd, size_t n, int *next)
{
    int fl = fcntl(rfd, F_GETFL);
    fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
    static char acc[1 << 20];
    size_t len = 0;
    ssize_t k;
    while (len < sizeof acc && (k = read(rfd, acc + len, sizeof acc - len)) > 0)
        len += (size_t)k;
    fcntl(rfd, F_SETFL, fl);
    int lines = 0;
    char want[8192];
    for (size_t at = 0; at + n <= len && acc[at + n - 1] == '\n'; at += n) {
        line_of(want, n, *next);
        assert_memory_equal(acc + at, want, n);
        (*next)++;
        lines++;
    }
    return lines;
}

/* flags 0: the pusher writes a line that finds the queue empty; CLI_OUTQ_BLOCKING: the thread
 * does (as for a regular file). */
static void keeps_up(int flags)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0); /* the reader's end only */
    cli_outq *q = cli_outq_new(p[1], 0, flags);
    assert_non_null(q);
    char line[6000], got[65536];
    for (int i = 0; i < 20; i++) {
        size_t n = i % 2 ? 6000 : 300; /* above PIPE_BUF too */
        line_of(line, n, i);
        assert_int_equal(cli_outq_push(q, line, n, true), 0);
        /* the line's bytes and no more: a second write of it would be read at the head of the
         * next line (or left in the pipe at the end) */
        size_t k = 0;
        UNIT_WAIT_UNTIL((k += read_some(p[0], got + k, n - k)) == n, UNIT_WAIT_SECS);
        assert_int_equal(k, n); /* the whole line */
        assert_memory_equal(got, line, n);
    }
    cli_outq_counts c;
    cli_outq_end(q, mono() + 10, &c);
    assert_int_equal(c.samples, 20);
    assert_int_equal(c.delivered, 20);
    assert_int_equal(read_some(p[0], got, sizeof got), 0); /* nothing written twice */
    assert_int_equal(c.dropped, 0);
    assert_int_equal(c.err, 0);
    assert_false(c.stalled);
    cli_outq_free(q);
    close(p[0]);
    close(p[1]);
}

static void keeps_up_one_write_per_line(void **state)
{
    (void)state;
    keeps_up(0);
}

static void keeps_up_one_write_per_line_thread(void **state)
{
    (void)state;
    keeps_up(CLI_OUTQ_BLOCKING);
}

/* Never read: pushes return at once; the end returns at its deadline; the lines in the pipe are
 * exactly the delivered ones; delivered + dropped = pushed. The tool's own lines are no samples. */
static void never_read(void **state)
{
    (void)state;
    int p[2];
    small_pipe(p);
    cli_outq *q = cli_outq_new(p[1], 0, 0);
    assert_non_null(q);
    char line[1000];
    for (int i = 0; i < 300; i++) {
        line_of(line, sizeof line, i);
        assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    }
    assert_int_equal(cli_outq_push(q, "note\n", 5, false), 0);
    cli_outq_counts c;
    cli_outq_end(q, mono() + 0.2, &c);
    assert_true(c.stalled);
    assert_int_equal(c.samples, 300);
    assert_true(c.delivered > 0 && c.delivered < 300);
    assert_int_equal(c.delivered + c.dropped, 300);
    int next = 0;
    assert_int_equal(drain_lines(p[0], sizeof line, &next), (int)c.delivered);
    cli_outq_free(q);
    close(p[0]);
    close(p[1]);
}

/* A reader slower than the pushes: it reads nothing until the test has pushed every line (the
 * gate, a pipe the test writes a byte to), then reads to the end in small reads. */
typedef struct slow_reader {
    int fd;
    int gate[2];
    size_t got;
} slow_reader;

static void *read_slowly(void *arg)
{
    slow_reader *r = arg;
    char buf[700];
    if (read(r->gate[0], buf, 1) != 1)
        return NULL;
    ssize_t k;
    while ((k = read(r->fd, buf, sizeof buf)) > 0)
        r->got += (size_t)k;
    return NULL;
}

static void slow_reader_start(slow_reader *r, int fd, pthread_t *t)
{
    *r = (slow_reader){.fd = fd};
    assert_int_equal(pipe2(r->gate, O_CLOEXEC), 0);
    assert_int_equal(pthread_create(t, NULL, read_slowly, r), 0);
}

/* The pushes are done: the reader starts. */
static void slow_reader_open(slow_reader *r)
{
    assert_int_equal(write(r->gate[1], "g", 1), 1);
}

static void slow_reader_join(slow_reader *r, pthread_t t)
{
    pthread_join(t, NULL);
    close(r->gate[0]);
    close(r->gate[1]);
}

/* Over the bound: samples are dropped whole at the push, counted; the rest still arrives, and
 * the tool's own lines may go past the bound. */
static void bound_drops_whole_samples(void **state)
{
    (void)state;
    int p[2];
    small_pipe(p);
    cli_outq *q = cli_outq_new(p[1], 10000, 0);
    assert_non_null(q);
    slow_reader r;
    pthread_t t;
    slow_reader_start(&r, p[0], &t);
    char line[1000];
    for (int i = 0; i < 100; i++) {
        line_of(line, sizeof line, i);
        assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    }
    assert_int_equal(cli_outq_push(q, "note\n", 5, false), 0);
    slow_reader_open(&r);
    cli_outq_counts c;
    cli_outq_end(q, mono() + 60, &c);
    assert_false(c.stalled);
    assert_int_equal(c.samples, 100);
    assert_true(c.dropped > 0);
    assert_int_equal(c.delivered + c.dropped, 100);
    cli_outq_free(q);
    close(p[1]);
    slow_reader_join(&r, t);
    assert_int_equal(r.got, c.delivered * sizeof line + 5);
    close(p[0]);
}

/* A reader slower than the pushes: nothing is dropped, the end waits for it. */
static void slow_reader_gets_all(void **state)
{
    (void)state;
    int p[2];
    small_pipe(p);
    cli_outq *q = cli_outq_new(p[1], 0, 0);
    assert_non_null(q);
    slow_reader r;
    pthread_t t;
    slow_reader_start(&r, p[0], &t);
    char line[1500];
    for (int i = 0; i < 200; i++) {
        line_of(line, sizeof line, i);
        assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    }
    slow_reader_open(&r);
    cli_outq_counts c;
    cli_outq_end(q, mono() + 60, &c);
    assert_false(c.stalled);
    assert_int_equal(c.delivered, 200);
    assert_int_equal(c.dropped, 0);
    cli_outq_free(q);
    close(p[1]);
    slow_reader_join(&r, t);
    assert_int_equal(r.got, 200 * sizeof line);
    close(p[0]);
}

/* The reader went away: the next push after the thread met it returns -1 with EPIPE. */
static void reader_gone(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    close(p[0]);
    cli_outq *q = cli_outq_new(p[1], 0, 0);
    assert_non_null(q);
    char line[100];
    line_of(line, sizeof line, 0);
    int rc = 0; /* until the thread has met the reader's absence */
    UNIT_WAIT_UNTIL((rc = cli_outq_push(q, line, sizeof line, true)) != 0, UNIT_WAIT_SECS);
    assert_int_equal(rc, -1);
    assert_int_equal(errno, EPIPE);
    cli_outq_counts c;
    cli_outq_end(q, mono() + 10, &c);
    assert_int_equal(c.err, EPIPE);
    assert_true(c.err_told);
    assert_int_equal(c.dropped, 0);
    cli_outq_free(q);
    close(p[1]);
}

/* A blocking write that never returns (a hung NFS file's stand-in): the end still returns at its
 * deadline, the thread is left behind with its queue; reading the pipe afterwards lets it end. */
static void stuck_thread_left_behind(void **state)
{
    (void)state;
    int p[2];
    small_pipe(p);
    int threads = unit_threads();
    cli_outq *q = cli_outq_new(p[1], 0, CLI_OUTQ_BLOCKING);
    assert_non_null(q);
    char line[3000];
    for (int i = 0; i < 10; i++) {
        line_of(line, sizeof line, i);
        assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    }
    cli_outq_counts c;
    cli_outq_end(q, mono() + 0.2, &c);
    assert_true(c.stalled);
    assert_int_equal(c.samples, 10);
    assert_int_equal(c.delivered + c.dropped, 10);
    assert_true(c.dropped > 0);
    cli_outq_free(q); /* left behind: not freed under its thread */
    char buf[1 << 16];
    int fl = fcntl(p[0], F_GETFL);
    fcntl(p[0], F_SETFL, fl | O_NONBLOCK);
    /* unstick it: it ends without writing more (the process's threads back to the test's own) */
    UNIT_WAIT_UNTIL((read_some(p[0], buf, sizeof buf), unit_threads() <= threads), UNIT_WAIT_SECS);
    assert_true(unit_threads() <= threads);
    close(p[0]);
    close(p[1]);
}

/* A regular file on a local file system is written directly with no thread (one more task of the
 * job's user would count against its RLIMIT_NPROC); a pipe's thread starts only once a write
 * would have blocked. */
static void threads_only_where_needed(void **state)
{
    (void)state;
    int before = thread_count();
    char path[] = "/tmp/test_outq_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    cli_outq *q = cli_outq_new(fd, 0, 0);
    assert_non_null(q);
    char line[100];
    for (int i = 0; i < 3; i++) {
        line_of(line, sizeof line, i);
        assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    }
    assert_int_equal(thread_count(), before);
    cli_outq_counts c;
    cli_outq_end(q, mono() + 1, &c);
    assert_int_equal(c.samples, 3);
    assert_int_equal(c.delivered, 3);
    assert_int_equal(lseek(fd, 0, SEEK_END), 3 * (off_t)sizeof line);
    cli_outq_free(q);
    close(fd);

    int p[2];
    small_pipe(p);
    q = cli_outq_new(p[1], 0, 0);
    assert_non_null(q);
    line_of(line, sizeof line, 0);
    assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    assert_int_equal(thread_count(), before); /* room in the pipe: written at once */
    for (int i = 1; i < 100; i++) { /* past the pipe's page: a write would block */
        line_of(line, sizeof line, i);
        assert_int_equal(cli_outq_push(q, line, sizeof line, true), 0);
    }
    assert_int_equal(thread_count(), before + 1);
    cli_outq_end(q, mono() + 0.2, &c);
    assert_int_equal(c.samples, 100);
    assert_int_equal(c.delivered + c.dropped, 100);
    cli_outq_free(q);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keeps_up_one_write_per_line),
        cmocka_unit_test(keeps_up_one_write_per_line_thread),
        cmocka_unit_test(never_read),
        cmocka_unit_test(bound_drops_whole_samples),
        cmocka_unit_test(slow_reader_gets_all),
        cmocka_unit_test(reader_gone),
        cmocka_unit_test(stuck_thread_left_behind),
        cmocka_unit_test(threads_only_where_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
