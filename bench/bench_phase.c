/* bench_phase.c - what marking a phase costs the marking process (issue 27's budget: under 5 µs
 * a library call, under 50 µs a protocol write). Prints figures, asserts nothing.
 *  - the library call: rt_tracker_phase_start/stop on an embedded tracker at -i 0.01 tracking
 *    this process (so each call stamps the caller's exact CPU), from 1 and 4 threads, in batches
 *    of calls with pauses between them so the tracker's thread drains the ring as in real use;
 *    each call timed alone (CLOCK_MONOTONIC around it, ~25 ns of its own included): median,
 *    p99 and max over all calls, and the mean per call of whole batches; then without the CPU
 *    stamps (a tracker of the machine alone), and the ring-full path (every call refused);
 *  - the tracker's side: one rt_sampler_peek (the reading a drain takes for its marks) of this
 *    process alone and with 20 sleeping children, CPU per peek;
 *  - the protocol write (docs/contracts.md §18): a one-shot socket + connect + send + close of
 *    one line to a listening unix stream socket whose poller thread is asleep in poll(2) (marks
 *    spaced 1 ms apart), as a wrapped program's mark; and the same line on a kept connection.
 * Usage: bench-phase [CALLS] (library calls per configuration, default 200000) */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "resource_tracker.h"

#define BATCH 500       /* calls in a row */
#define PAUSE_NS 3000000 /* between one thread's batches (x threads): the tracker drains
                          * every 10 ms, and its ring holds 4096 marks */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pause_ns(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v and prints its median, p99 and max (ns, shown in µs). */
static void report(const char *what, double *v, size_t n, double batch_mean_ns, unsigned long refused)
{
    qsort(v, n, sizeof *v, cmp_double);
    printf("%-44s median %6.3f µs  p99 %6.3f µs  max %8.2f µs  batch mean %6.3f µs/call  (%zu calls, %lu refused)\n",
           what, v[n / 2] / 1e3, v[(size_t)((double)n * 0.99)] / 1e3, v[n - 1] / 1e3, batch_mean_ns / 1e3, n, refused);
}

typedef struct lib_run {
    rt_tracker *t;
    size_t calls;
    double *lat;         /* calls entries */
    double batch_ns;     /* summed over batches */
    unsigned long refused;
    int threads;
} lib_run;

static void *lib_worker(void *arg)
{
    lib_run *r = arg;
    long pause = PAUSE_NS * r->threads;
    char name[32];
    snprintf(name, sizeof name, "step-%p", (void *)r);
    size_t i = 0;
    while (i < r->calls) {
        double b0 = now_ns();
        size_t end = i + BATCH < r->calls ? i + BATCH : r->calls;
        for (; i < end; i++) {
            double t0 = now_ns();
            rt_error e = (i & 1) ? rt_tracker_phase_stop(r->t, name) : rt_tracker_phase_start(r->t, name);
            r->lat[i] = now_ns() - t0;
            r->refused += e != RT_OK;
        }
        r->batch_ns += now_ns() - b0;
        pause_ns(pause);
    }
    return NULL;
}

/* calls marks from nthreads threads on t; prints the figures. */
static void library(const char *what, rt_tracker *t, size_t calls, int nthreads)
{
    lib_run runs[8];
    pthread_t th[8];
    size_t per = calls / (size_t)nthreads;
    for (int k = 0; k < nthreads; k++) {
        runs[k] = (lib_run){t, per, calloc(per, sizeof(double)), 0, 0, nthreads};
        if (!runs[k].lat) {
            perror("calloc");
            exit(1);
        }
        pthread_create(&th[k], NULL, lib_worker, &runs[k]);
    }
    double *all = calloc(per * (size_t)nthreads, sizeof *all);
    double batch = 0;
    unsigned long refused = 0;
    for (int k = 0; k < nthreads; k++) {
        pthread_join(th[k], NULL);
        memcpy(all + per * (size_t)k, runs[k].lat, per * sizeof *all);
        batch += runs[k].batch_ns;
        refused += runs[k].refused;
        free(runs[k].lat);
    }
    report(what, all, per * (size_t)nthreads, batch / (double)(per * (size_t)nthreads), refused);
    free(all);
}

static rt_tracker *tracker(int64_t pid, double interval)
{
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT;
    o.interval_secs = interval;
    o.pid = pid;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_tracker *t = NULL;
    rt_error e = rt_tracker_start(&o, &t);
    if (e != RT_OK) {
        fprintf(stderr, "bench-phase: rt_tracker_start: %s\n", rt_strerror(e));
        exit(1);
    }
    return t;
}

/* ---- the protocol write ------------------------------------------------------------------------ */

static atomic_int poller_stop;
static atomic_ulong lines_read;

/* Accepts and reads whatever comes, asleep in poll in between (the tool's loop's part). */
static void *poller(void *arg)
{
    int lfd = *(int *)arg;
    int conns[64];
    int nconn = 0;
    char buf[4096];
    while (!atomic_load(&poller_stop)) {
        struct pollfd p[65];
        p[0] = (struct pollfd){lfd, POLLIN, 0};
        for (int i = 0; i < nconn; i++)
            p[i + 1] = (struct pollfd){conns[i], POLLIN, 0};
        if (poll(p, (nfds_t)nconn + 1, 50) <= 0)
            continue;
        if (p[0].revents & POLLIN) {
            int c;
            while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                if (nconn < 64)
                    conns[nconn++] = c;
                else
                    close(c);
            }
        }
        for (int i = 0; i < nconn; i++) {
            if (!(p[i + 1].revents & (POLLIN | POLLHUP)))
                continue;
            ssize_t n;
            while ((n = read(conns[i], buf, sizeof buf)) > 0)
                for (ssize_t k = 0; k < n; k++)
                    lines_read += buf[k] == '\n';
            if (n == 0 || (n < 0 && errno != EAGAIN)) {
                close(conns[i]);
                conns[i--] = conns[--nconn];
            }
        }
    }
    for (int i = 0; i < nconn; i++)
        close(conns[i]);
    return NULL;
}

static void protocol(size_t marks)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "rt-bench-phase-%d", (int)getpid());
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, alen) < 0 || listen(lfd, 128) < 0) {
        perror("bench-phase: listen");
        exit(1);
    }
    pthread_t th;
    pthread_create(&th, NULL, poller, &lfd);
    const char line[] = "start load\tt=123456789\n";
    double *lat = calloc(marks, sizeof *lat);
    unsigned long failed = 0;
    for (size_t i = 0; i < marks; i++) {
        pause_ns(1000000); /* the poller is asleep when the mark comes */
        double t0 = now_ns();
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        bool ok = s >= 0 && connect(s, (struct sockaddr *)&a, alen) == 0 &&
                  send(s, line, sizeof line - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof line - 1);
        if (s >= 0)
            close(s);
        lat[i] = now_ns() - t0;
        failed += !ok;
    }
    report("protocol: one-shot connect+send+close", lat, marks, NAN, failed);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, alen) == 0) {
        failed = 0;
        for (size_t i = 0; i < marks; i++) {
            pause_ns(1000000);
            double t0 = now_ns();
            failed += send(s, line, sizeof line - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof line - 1);
            lat[i] = now_ns() - t0;
        }
        report("protocol: a kept connection, send", lat, marks, NAN, failed);
    }
    if (s >= 0)
        close(s);
    pause_ns(100000000);
    atomic_store(&poller_stop, 1);
    pthread_join(th, NULL);
    close(lfd);
    printf("protocol: lines the poller read: %lu of %zu\n", (unsigned long)atomic_load(&lines_read), 2 * marks);
    free(lat);
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU per rt_sampler_peek of this process's tree with kids sleeping children. */
static void peeks(int kids, int n)
{
    pid_t pids[64];
    for (int i = 0; i < kids; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            pause();
            _exit(0);
        }
    }
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = getpid();
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_sampler *s = NULL;
    const rt_sample *smp;
    if (rt_sampler_new(&o, &s) == RT_OK && rt_sampler_sample(s, &smp) == RT_OK) {
        rt_phase_mark m = RT_PHASE_MARK_INIT;
        double c0 = cpu_ns();
        for (int i = 0; i < n; i++)
            rt_sampler_peek(s, &m);
        double per = (cpu_ns() - c0) / n;
        printf("tracker side: rt_sampler_peek, this process and %2d children: %7.2f µs CPU per peek (%d peeks; "
               "source %d)\n",
               kids, per / 1e3, n, m.cpu_source);
    }
    rt_sampler_free(s);
    for (int i = 0; i < kids; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

int main(int argc, char **argv)
{
    long calls = 200000;
    if (argc > 1) {
        char *end;
        calls = strtol(argv[1], &end, 10);
        if (*end || calls < 1000 || calls > 100000000) {
            fprintf(stderr, "usage: bench-phase [CALLS] (1000 to 100,000,000)\n");
            return 2;
        }
    }
    rt_tracker *t = tracker(0, 0.01);
    library("library, 1 thread, self-tracking (stamps)", t, (size_t)calls, 1);
    library("library, 4 threads, self-tracking (stamps)", t, (size_t)calls, 4);
    rt_tracker_free(t);
    t = tracker(-1, 0.01);
    library("library, 1 thread, machine only (no stamp)", t, (size_t)calls, 1);
    rt_tracker_free(t);

    /* the ring full: a tracker whose thread does not drain for 10 s; 4096 marks fill it */
    t = tracker(0, 10.0);
    pause_ns(100000000); /* its thread waits for its first sample: no mark yet, no drain before it */
    for (int i = 0; i < 4096; i++)
        rt_tracker_phase_start(t, "fill");
    size_t n = (size_t)calls / 4;
    double *lat = calloc(n, sizeof *lat);
    unsigned long refused = 0;
    double b0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        double t0 = now_ns();
        refused += rt_tracker_phase_start(t, "over") == RT_ERR_NOMEM;
        lat[i] = now_ns() - t0;
    }
    report("library, the ring full (each call refused)", lat, n, (now_ns() - b0) / (double)n, refused);
    free(lat);
    rt_tracker_free(t);

    peeks(0, 2000);
    peeks(20, 2000);
    protocol(calls >= 200000 ? 2000 : (size_t)calls / 100);
    return 0;
}
