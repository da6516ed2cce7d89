/* churn.c - soak workload: a tree that never settles. N long-lived workers each start short-lived
 * children at a steady rate (some fork and wait for a grandchild, some double-fork, some touch a
 * few MiB, some do small file I/O, some spin, some start threads) and create/join threads; with
 * --grow, one more long-lived process grows and frees a large block over and over.
 *   churn [--seconds S] [--workers N] [--procs R] [--threads T] [--exit CODE] [--report SECS]
 *         [--dir DIR] [--grow MIB] [--grow-every SECS]
 * R and T are the whole tree's process and thread starts a second (defaults 100 and 200). With
 * --grow MIB (default 0: none), every --grow-every seconds (default 10) a grower process maps MIB
 * MiB and writes every page of it over about a second (so the tree's RSS really rises by MIB), holds
 * it to half the period, then unmaps it (RSS falls back). Every
 * child exits with a status its parent can predict ((pid % 101) + 1) and the parent checks it.
 * Prints "churn: t=.. procs=.. threads=.. bad=.." every --report seconds (0: only at the end)
 * and "churn: done ..." with the rates achieved at the end, on stdout. Exits CODE (default 0)
 * when every status checked was right, 99 when one was not, 2 on a usage error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS 10000000L /* the workers' pacing step: 10 ms */
#define MAX_IN_FLIGHT 32  /* a worker's children not yet reaped before it waits for one */

/* Counters shared by the whole tree (an anonymous shared mapping); updated atomically. */
struct shared {
    uint64_t procs;   /* fork() calls that succeeded, anywhere in the tree */
    uint64_t threads; /* pthread_create() calls that succeeded */
    uint64_t bad;     /* children that exited with a status other than the one predicted */
    uint64_t errors;  /* fork/thread/file failures (counted, never fatal) */
    uint64_t grows;   /* blocks the grower mapped, touched in full and unmapped */
};

static struct shared *g_sh;
static const char *g_dir = "/tmp";

/* Adds n to *c atomically (the counters live in memory shared across processes). */
static void bump(uint64_t *c, uint64_t n)
{
    __atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* Returns *c read atomically. */
static uint64_t load(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Returns CLOCK_MONOTONIC in seconds. */
static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The exit status a child with this pid must end with (1..101: never 0, so a crash or a plain
 * exit(0) is caught). */
static int expected_status(pid_t pid)
{
    return (int)(pid % 101) + 1;
}

/* Touches `mib` MiB (one write a page) and returns a byte of it, so the work is not elided. */
static unsigned touch_mib(size_t mib)
{
    size_t n = mib << 20;
    volatile unsigned char *p = malloc(n);
    if (!p) {
        bump(&g_sh->errors, 1);
        return 0;
    }
    for (size_t i = 0; i < n; i += 4096)
        p[i] = (unsigned char)i;
    unsigned r = p[n / 2];
    free((void *)p);
    return r;
}

/* Spins for about `us` microseconds of CPU. */
static void spin_us(long us)
{
    double end = mono() + (double)us / 1e6;
    volatile uint64_t x = 1;
    while (mono() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ULL + 1;
}

/* Writes 64 KiB to a fresh file in g_dir, reads it back, removes it. Counts failures. */
static void small_io(void)
{
    char path[512];
    int n = snprintf(path, sizeof path, "%s/churn-XXXXXX", g_dir);
    if (n < 0 || (size_t)n >= sizeof path) {
        bump(&g_sh->errors, 1);
        return;
    }
    int fd = mkstemp(path);
    if (fd < 0) {
        bump(&g_sh->errors, 1);
        return;
    }
    unlink(path);
    static char buf[16384];
    memset(buf, 'c', sizeof buf);
    for (int i = 0; i < 4; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            bump(&g_sh->errors, 1);
    if (fdatasync(fd) < 0)
        bump(&g_sh->errors, 1);
    for (int i = 0; i < 4; i++)
        if (pread(fd, buf, sizeof buf, (off_t)i * (off_t)sizeof buf) < 0)
            bump(&g_sh->errors, 1);
    close(fd);
}

/* A thread's body: `arg` picks the work (200 us of CPU, or 1 MiB touched). */
static void *thread_body(void *arg)
{
    uintptr_t kind = (uintptr_t)arg;
    if (kind % 2)
        spin_us(200);
    else
        (void)touch_mib(1);
    return NULL;
}

/* Starts `n` threads (n <= 8) and joins them all. */
static void threads_burst(int n, unsigned seed)
{
    pthread_t t[8];
    int started = 0;
    for (int i = 0; i < n && i < 8; i++) {
        if (pthread_create(&t[started], NULL, thread_body, (void *)(uintptr_t)(seed + (unsigned)i)) == 0)
            started++;
        else
            bump(&g_sh->errors, 1);
    }
    bump(&g_sh->threads, (uint64_t)started);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
}

/* Waits for child `pid` and counts it as bad unless it exited with expected_status(pid). */
static void check_child(pid_t pid, int st)
{
    if (!WIFEXITED(st) || WEXITSTATUS(st) != expected_status(pid))
        bump(&g_sh->bad, 1);
}

/* The body of a short-lived child of kind `kind`; never returns. */
static void child_body(unsigned kind)
{
    int code = expected_status(getpid());
    switch (kind % 7) {
    case 0: /* straight out */
        break;
    case 1: /* a few MiB */
        (void)touch_mib(2 + kind % 4);
        break;
    case 2: /* small file I/O */
        small_io();
        break;
    case 3: { /* a grandchild, waited for */
        pid_t g = fork();
        if (g == 0) {
            spin_us(500);
            _exit(expected_status(getpid()));
        }
        if (g < 0) {
            bump(&g_sh->errors, 1);
            break;
        }
        bump(&g_sh->procs, 1);
        int st = 0;
        while (waitpid(g, &st, 0) < 0 && errno == EINTR)
            ;
        check_child(g, st);
        break;
    }
    case 4: { /* double fork: the grandchild outlives us and is re-parented (to the tracker) */
        pid_t g = fork();
        if (g == 0) {
            struct timespec ts = {0, 20000000L};
            nanosleep(&ts, NULL);
            (void)touch_mib(1);
            _exit(0);
        }
        if (g < 0)
            bump(&g_sh->errors, 1);
        else
            bump(&g_sh->procs, 1);
        break;
    }
    case 5: /* a little CPU */
        spin_us(2000);
        break;
    case 6: /* a multi-threaded child */
        threads_burst(2, kind);
        break;
    }
    _exit(code);
}

/* Reaps whatever of this worker's children has ended (blocking for one when `block`); returns
 * how many were reaped. */
static int reap(int block)
{
    int n = 0;
    for (;;) {
        int st = 0;
        pid_t p = waitpid(-1, &st, block && n == 0 ? 0 : WNOHANG);
        if (p < 0 && errno == EINTR)
            continue;
        if (p <= 0)
            return n;
        check_child(p, st);
        n++;
    }
}

/* A worker: until `end` (monotonic seconds), starts `procs` children and `threads` threads a
 * second, on a 10 ms tick; then reaps every child and exits 0. */
static void worker(double end, double procs, double threads, unsigned id)
{
    double owe_p = 0, owe_t = 0;
    unsigned k = id * 7919u;
    int in_flight = 0;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (mono() < end) {
        owe_p += procs * (double)TICK_NS / 1e9;
        owe_t += threads * (double)TICK_NS / 1e9;
        for (; owe_p >= 1; owe_p -= 1) {
            if (in_flight >= MAX_IN_FLIGHT)
                in_flight -= reap(1);
            unsigned kind = k++;
            pid_t c = fork();
            if (c == 0)
                child_body(kind);
            if (c < 0) {
                bump(&g_sh->errors, 1);
                continue;
            }
            bump(&g_sh->procs, 1);
            in_flight++;
        }
        if (owe_t >= 1) {
            int n = (int)owe_t > 8 ? 8 : (int)owe_t;
            threads_burst(n, k);
            owe_t -= n;
        }
        in_flight -= reap(0);
        next.tv_nsec += TICK_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
    }
    while (in_flight > 0) {
        int r = reap(1);
        if (r == 0)
            break;
        in_flight -= r;
    }
    _exit(0);
}

/* The grower: until `end`, every `every` seconds maps `mib` MiB, writes each page of it in ten
 * steps over about a second, holds it until half the period, unmaps it; then exits 0. */
static void grower(double end, double mib, double every)
{
    size_t n = (size_t)(mib * 1048576.0) & ~(size_t)4095;
    double next = mono();
    while (next < end) {
        unsigned char *p = n ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
        if (p == MAP_FAILED) {
            bump(&g_sh->errors, 1);
        } else {
            for (int step = 0; step < 10; step++) {
                for (size_t i = n / 10 * (size_t)step; i < (step == 9 ? n : n / 10 * (size_t)(step + 1)); i += 4096)
                    p[i] = (unsigned char)(i >> 12);
                struct timespec ts = {0, 100000000L};
                nanosleep(&ts, NULL);
            }
            double hold = next + every / 2;
            while (mono() < hold && mono() < end) {
                struct timespec ts = {0, 50000000L};
                nanosleep(&ts, NULL);
            }
            munmap(p, n);
            bump(&g_sh->grows, 1);
        }
        next += every;
        while (mono() < next && mono() < end) {
            struct timespec ts = {0, 50000000L};
            nanosleep(&ts, NULL);
        }
    }
    _exit(0);
}

/* Parses a positive number for option `name`; exits 2 when it is not one. */
static double num(const char *name, const char *s)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < 0) {
        fprintf(stderr, "churn: %s wants a number >= 0, not '%s'\n", name, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    double secs = 10, procs = 100, threads = 200, report = 0, grow = 0, grow_every = 10;
    int workers = 4, code = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            fprintf(stderr, "churn: %s: missing value\n", a);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--seconds"))
            secs = num(a, v);
        else if (!strcmp(a, "--workers"))
            workers = (int)num(a, v);
        else if (!strcmp(a, "--procs"))
            procs = num(a, v);
        else if (!strcmp(a, "--threads"))
            threads = num(a, v);
        else if (!strcmp(a, "--exit"))
            code = (int)num(a, v);
        else if (!strcmp(a, "--report"))
            report = num(a, v);
        else if (!strcmp(a, "--grow"))
            grow = num(a, v);
        else if (!strcmp(a, "--grow-every"))
            grow_every = num(a, v);
        else if (!strcmp(a, "--dir"))
            g_dir = v;
        else {
            fprintf(stderr, "churn: unknown option %s\n", a);
            return 2;
        }
    }
    if (workers < 1 || workers > 256 || code > 255 || grow_every <= 0) {
        fprintf(stderr, "churn: --workers 1..256, --exit 0..255, --grow-every > 0\n");
        return 2;
    }
    g_sh = mmap(NULL, sizeof *g_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g_sh == MAP_FAILED) {
        perror("churn: mmap");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    double start = mono(), end = start + secs;
    /* The main process's children are workers plus children it never made: orphans re-parented
     * to it are not (the tracker is the subreaper), so every child here is a worker. */
    for (int w = 0; w < workers; w++) {
        pid_t p = fork();
        if (p == 0)
            /* 2 kinds in 7 start a grandchild too: 9 processes for every 7 children */
            worker(end, procs / workers * 7 / 9, threads / workers, (unsigned)w + 1);
        if (p < 0) {
            perror("churn: fork");
            return 1;
        }
    }
    int children = workers;
    if (grow > 0) {
        pid_t p = fork();
        if (p == 0)
            grower(end, grow, grow_every);
        if (p < 0) {
            perror("churn: fork");
            return 1;
        }
        children++;
    }
    double next_report = report > 0 ? start + report : end + 1;
    while (mono() < end) {
        double now = mono(), until = end < next_report ? end : next_report;
        if (until > now) {
            struct timespec ts = {(time_t)(until - now), (long)((until - now - (double)(time_t)(until - now)) * 1e9)};
            nanosleep(&ts, NULL);
        }
        if (report > 0 && mono() >= next_report) {
            printf("churn: t=%.1f procs=%llu threads=%llu bad=%llu errors=%llu\n", mono() - start,
                   (unsigned long long)load(&g_sh->procs), (unsigned long long)load(&g_sh->threads),
                   (unsigned long long)load(&g_sh->bad), (unsigned long long)load(&g_sh->errors));
            next_report += report;
        }
    }
    int failed = 0;
    for (int w = 0; w < children; w++) {
        int st = 0;
        pid_t p;
        while ((p = wait(&st)) < 0 && errno == EINTR)
            ;
        if (p < 0)
            break;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed++;
    }
    /* the double-forked grandchildren live 20 ms and some: let the last of them end, so the
     * tree is empty when this process exits */
    struct timespec grace = {0, 300000000L};
    nanosleep(&grace, NULL);
    double took = mono() - start;
    uint64_t np = load(&g_sh->procs), nt = load(&g_sh->threads), bad = load(&g_sh->bad);
    printf("churn: done seconds=%.1f procs=%llu threads=%llu procs_per_sec=%.1f threads_per_sec=%.1f "
           "bad=%llu errors=%llu workers_failed=%d grows=%llu\n",
           took, (unsigned long long)np, (unsigned long long)nt, (double)np / took, (double)nt / took,
           (unsigned long long)bad, (unsigned long long)load(&g_sh->errors), failed,
           (unsigned long long)load(&g_sh->grows));
    return bad || failed ? 99 : code;
}
