/* test_tracker.c - the embedded background tracker, run for real on this process: its CPU
 * total against the kernel's own (getrusage), children counted or not, the machine alone,
 * bad arguments, reading while it runs, a small store, the callback, fork while it runs, the
 * summary, recommendation and report of the run, and the machine's pressure and the process's
 * cgroup in the 0.6 columns. The tests about when samples are taken (the grid, a late sample,
 * the last sample at stop, fork at chosen points of the cycle) run it on a test clock
 * (core/clock.h) that they step: none waits for time to pass. */
#include "unit.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "embed/tracker_int.h" /* the count of blocked callers, rt_tracker_start_clock */
#include "resource_tracker.h"
#include "unit_clock.h"

#define NO_NVML "/nonexistent/libnvidia-ml.so.1"

static double cpu_of(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double self_and_children(void)
{
    return cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN);
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile double burn_sink;

static void burn(double secs)
{
    double x = 0;
    double end = thread_cpu() + secs;
    while (thread_cpu() < end)
        for (int i = 0; i < 10000; i++)
            x += i * 0.5;
    burn_sink = x;
}

static void *burn_thread(void *arg)
{
    burn(*(double *)arg);
    return NULL;
}

static rt_tracker_options opts_at(double interval)
{
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT;
    o.interval_secs = interval;
    o.nvml_library = NO_NVML;
    return o;
}

/* A tracker started with o on the test clock c. */
static rt_tracker *start_on(rt_clock *c, const rt_tracker_options *o)
{
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start_clock(o, c, &t), RT_OK);
    return t;
}

/* Until the tracker's thread waits on c for its next sample (it is then done with the last). */
static void settle(rt_clock *c)
{
    if (!rt_clock_test_idle(c, 1, CLOCK_SETTLE_SECS))
        fail_msg("the tracker's thread did not wait on the clock within %.0f s", CLOCK_SETTLE_SECS);
}

/* Steps c to the tracker's next sample (the time its thread waits for) and waits until it is
 * taken. */
static void next_sample(rt_clock *c)
{
    settle(c);
    rt_clock_test_set(c, rt_clock_test_next(c));
    settle(c);
}

static double last_of(rt_tracker *t, int col)
{
    double v = NAN;
    uint64_t n = rt_tracker_count(t);
    if (n)
        rt_tracker_column(t, col, n - 1, 1, &v);
    return v;
}

/* The kernel counts a process's CPU in ticks in /proc/PID/stat: allow two ticks at each
 * end, plus the window between the kernel's reading and ours. */
#define TICKS_TOL (3.0 / (double)sysconf(_SC_CLK_TCK))

static void self_cpu_matches_kernel(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.05);
    double before = cpu_of(RUSAGE_SELF);
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    double after_start = cpu_of(RUSAGE_SELF);
    assert_true(rt_tracker_running(t));
    pthread_t th;
    double secs = 0.4;
    pthread_create(&th, NULL, burn_thread, &secs);
    pthread_join(th, NULL);
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    double end = cpu_of(RUSAGE_SELF);
    assert_false(rt_tracker_running(t));
    double total = last_of(t, RT_COL_PROC_CPU_SECS_TOTAL);
    print_message("tracker %.4f s, kernel %.4f..%.4f s\n", total, end - after_start, end - before);
    assert_true(total >= end - after_start - TICKS_TOL);
    assert_true(total <= end - before + TICKS_TOL);
    assert_true(last_of(t, RT_COL_PROC_PID) == (double)getpid());
    assert_true(last_of(t, RT_COL_PROC_CHILDREN) == 0);
    assert_true(last_of(t, RT_COL_PROC_THREADS) >= 1);
    uint64_t n = rt_tracker_count(t);
    assert_true(n >= 2);
    assert_int_equal(rt_tracker_stop(t), RT_OK); /* again: nothing */
    assert_int_equal(rt_tracker_count(t), n);
    rt_tracker_free(t);
}

/* A child that burns CPU and is reaped: in the tree's total with children, not without. */
static double run_child_case(int no_children, double *kernel_lo, double *kernel_hi)
{
    rt_tracker_options o = opts_at(0.05);
    o.no_children = no_children;
    rt_clock *c = rt_clock_test_new(100.0);
    double before = self_and_children();
    rt_tracker *t = start_on(c, &o);
    double after_start = self_and_children();
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        burn(0.4);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    next_sample(c); /* two samples after the child was reaped */
    next_sample(c);
    rt_tracker_stop(t);
    double end = self_and_children();
    double total = last_of(t, RT_COL_PROC_CPU_SECS_TOTAL);
    *kernel_lo = end - after_start;
    *kernel_hi = end - before;
    rt_tracker_free(t);
    rt_clock_test_free(c);
    return total;
}

static void children_counted_or_not(void **state)
{
    (void)state;
    double lo, hi;
    double with = run_child_case(0, &lo, &hi);
    print_message("with children: tracker %.4f s, kernel %.4f..%.4f s\n", with, lo, hi);
    assert_true(with >= lo - TICKS_TOL && with <= hi + TICKS_TOL);
    assert_true(with >= 0.4 - TICKS_TOL);
    double without = run_child_case(1, &lo, &hi);
    print_message("without children: tracker %.4f s, kernel (with the child) %.4f..%.4f s\n", without, lo, hi);
    assert_true(without < lo - 0.3); /* the child's 0.4 s is not there */
}

static void machine_only_and_errors(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.01);
    o.pid = -1;
    rt_clock *clk = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(clk, &o);
    clock_run_to(clk, 1, 100.03);
    rt_tracker_stop(t);
    assert_int_equal(rt_tracker_count(t), 3);
    for (int c = RT_COL_PROC_PID; c <= RT_COL_PROC_GPU_UTILIZED; c++)
        assert_true(isnan(last_of(t, c)));
    assert_false(isnan(last_of(t, RT_COL_CPU_COUNT)));
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_tracker_recommend(t, &rec), RT_ERR_INVALID); /* no tree */
    rt_tracker_free(t);
    rt_clock_test_free(clk);

    o = opts_at(0.01);
    o.pid = 0x3fffff0; /* beyond pid_max */
    t = (rt_tracker *)1;
    assert_int_equal(rt_tracker_start(&o, &t), RT_ERR_NOT_FOUND);
    assert_null(t);
    double bad[] = {0.001, -1, 86401, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = opts_at(bad[i]);
        assert_int_equal(rt_tracker_start(&o, &t), RT_ERR_INVALID);
    }
    o = opts_at(0.01);
    o.max_samples = 1;
    assert_int_equal(rt_tracker_start(&o, &t), RT_ERR_INVALID);
    o = opts_at(0.01);
    o.struct_size = 2;
    assert_int_equal(rt_tracker_start(&o, &t), RT_ERR_INVALID);
    rt_tracker_free(NULL);
    assert_int_equal(rt_tracker_running(NULL), 0);
}

static void reading_while_running(void **state)
{
    (void)state;
    rt_job job = RT_JOB_INIT;
    const char *tags[] = {"k=v"};
    job.job_name = "embed-test";
    job.tags = tags;
    job.tag_count = 1;
    rt_tracker_options o = opts_at(0.01);
    o.job = &job;
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    assert_int_equal(rt_tracker_wait(t, 1, 0), 0); /* just a look: none before the first is due */
    clock_run_to(c, 1, 100.05);
    assert_int_equal(rt_tracker_wait(t, 5, 0), 5);
    assert_int_equal(rt_tracker_first(t), 0);
    double ts[5], iv[5];
    assert_int_equal(rt_tracker_column(t, RT_COL_TIMESTAMP, 0, 5, ts), 5);
    assert_int_equal(rt_tracker_column(t, RT_COL_INTERVAL, 0, 5, iv), 5);
    for (int i = 1; i < 5; i++)
        assert_true(ts[i] > ts[i - 1]);
    assert_true(iv[0] > 0);
    assert_int_equal(rt_tracker_column(t, rt_column_count(), 0, 5, ts), 0);
    rt_record r;
    assert_int_equal(rt_tracker_record(t, 2, &r, sizeof r), RT_OK);
    assert_true(r.timestamp_secs == ts[2]);
    assert_string_equal(r.job_name, "embed-test");
    assert_true(r.process_pid == (double)getpid());
    assert_int_equal(rt_tracker_record(t, 1u << 30, &r, sizeof r), RT_ERR_NOT_FOUND);
    assert_int_equal(rt_tracker_record(t, 0, NULL, sizeof r), RT_ERR_INVALID);
    /* a caller with a shorter rt_record gets no more than it has */
    unsigned char small[sizeof(double) * 2 + 8];
    memset(small, 0x5a, sizeof small);
    assert_int_equal(rt_tracker_record(t, 0, (rt_record *)(void *)small, sizeof(double) * 2), RT_OK);
    assert_int_equal(small[sizeof small - 1], 0x5a);
    rt_tracker_stop(t);
    /* after stop: wait returns at once */
    uint64_t n = rt_tracker_count(t);
    assert_int_equal(rt_tracker_wait(t, n + 100, -1), n);
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

static void small_store_drops_oldest(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.01);
    o.max_samples = 4;
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    clock_run_to(c, 1, 100.2);
    rt_tracker_stop(t); /* no time since the last: no last sample */
    uint64_t n = rt_tracker_count(t), first = rt_tracker_first(t);
    assert_int_equal(n, 20);
    assert_true(first > 0);
    assert_true(n - first >= 4 && n - first <= 8);
    rt_record r;
    assert_int_equal(rt_tracker_record(t, 0, &r, sizeof r), RT_ERR_NOT_FOUND);
    assert_int_equal(rt_tracker_record(t, n - 1, &r, sizeof r), RT_OK);
    double v;
    assert_int_equal(rt_tracker_column(t, RT_COL_TIMESTAMP, 0, 1, &v), 0);
    const rt_summary *s = rt_tracker_summary(t);
    assert_int_equal(s->samples, n); /* the statistics saw every sample */
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

static int calls;
static pthread_t cb_thread;
static void on_sample(void *user, const rt_sample *s)
{
    assert_non_null(s);
    assert_non_null(s->cpu);
    cb_thread = pthread_self();
    __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    /* no lock is held: reading the tracker from the callback works */
    rt_tracker *t = *(rt_tracker *volatile *)user;
    if (t)
        (void)rt_tracker_count(t);
}

static void callback_each_sample(void **state)
{
    (void)state;
    static rt_tracker *volatile tp;
    tp = NULL;
    calls = 0;
    rt_tracker_options o = opts_at(0.01);
    o.on_sample = on_sample;
    o.on_sample_user = (void *)&tp;
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    tp = t;
    clock_run_to(c, 1, 100.1);
    assert_int_equal(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 10);
    rt_clock_test_step(c, 0.005);
    rt_tracker_stop(t);
    assert_int_equal(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), (int)rt_tracker_count(t));
    assert_false(pthread_equal(cb_thread, pthread_self()));
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

/* The grid, on a test clock at an interval of 0.5 s from 100: sample k falls due at 100 + k x
 * 0.5, and not before; a late sample is taken once (the ticks it missed are skipped) and does
 * not move the grid; stop takes a last sample when 10 ms or more passed since the last one,
 * and then ends the run at its time. */
static void grid_late_sample_and_stop(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.5);
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    settle(c);
    assert_true(rt_clock_test_next(c) == 100.5);
    clock_run_to(c, 1, 100.499); /* just before it is due: none */
    assert_int_equal(rt_tracker_count(t), 0);
    assert_true(rt_clock_test_next(c) == 100.5);
    clock_run_to(c, 1, 100.5); /* due: taken */
    assert_int_equal(rt_tracker_count(t), 1);
    assert_true(rt_clock_test_next(c) == 101.0);
    rt_clock_test_set(c, 102.25); /* 1.25 s late: one sample, then 102.5 (101.5 and 102 skipped) */
    settle(c);
    assert_int_equal(rt_tracker_count(t), 2);
    assert_true(rt_clock_test_next(c) == 102.5);
    rt_clock_test_set(c, 102.6); /* 0.1 s late: the next is still at 103 */
    settle(c);
    assert_int_equal(rt_tracker_count(t), 3);
    assert_true(rt_clock_test_next(c) == 103.0);
    rt_clock_test_step(c, 0.005); /* stop 5 ms after a sample: no last one */
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    assert_int_equal(rt_tracker_count(t), 3);
    rt_tracker_free(t);

    t = start_on(c, &o); /* from 102.605: due at 103.105 */
    next_sample(c);
    assert_int_equal(rt_tracker_count(t), 1);
    rt_clock_test_step(c, 0.2); /* stop 0.2 s after a sample: a last one, which ends the run */
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    assert_int_equal(rt_tracker_count(t), 2);
    rt_record r;
    assert_int_equal(rt_tracker_record(t, 1, &r, sizeof r), RT_OK);
    assert_true(t->stop_time == r.timestamp_secs);
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

/* The on_sample callback of fork_while_running: when asked, it parks the tracker's thread (the
 * row in the store, no lock held) until the test lets it go. */
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static enum { PASS, PARK, PARKED, GO } park;

static void park_in_callback(void *user, const rt_sample *s)
{
    (void)user;
    (void)s;
    pthread_mutex_lock(&park_mu);
    if (park == PARK) {
        park = PARKED;
        pthread_cond_broadcast(&park_cv);
        while (park == PARKED)
            pthread_cond_wait(&park_cv, &park_mu);
        park = PASS;
    }
    pthread_mutex_unlock(&park_mu);
}

/* Forks again and again while the tracker samples every 10 ms (of a test clock), at three points
 * of its cycle in turn: its thread waiting for the next sample; the next sample just due (the
 * fork races the thread's waking and sampling: the fork handlers wait out a sample under way);
 * its thread in the callback, the row in. Each child holds a stopped copy (running 0, a frozen
 * count that is the parent's at the fork, whole statistics, stop and free work, nothing
 * deadlocks); the parent goes on, one sample per step. */
static void fork_while_running(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.01);
    o.on_sample = park_in_callback;
    park = PASS;
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    clock_run_to(c, 1, 100.02);
    uint64_t n = rt_tracker_count(t);
    assert_int_equal(n, 2);
    for (int i = 0; i < 30; i++) {
        int where = i % 3;
        if (where == 1) {
            rt_clock_test_set(c, rt_clock_test_next(c));
        } else if (where == 2) {
            pthread_mutex_lock(&park_mu);
            park = PARK;
            pthread_mutex_unlock(&park_mu);
            rt_clock_test_set(c, rt_clock_test_next(c));
            pthread_mutex_lock(&park_mu);
            while (park != PARKED)
                pthread_cond_wait(&park_cv, &park_mu);
            pthread_mutex_unlock(&park_mu);
        }
        pid_t kid = fork();
        assert_true(kid >= 0);
        if (kid == 0) {
            alarm(10); /* a deadlock ends the child with SIGALRM */
            int bad = 0;
            if (rt_tracker_running(t) != 0)
                bad |= 1;
            uint64_t m = rt_tracker_count(t);
            /* no sampling thread here: a wait for 5 more samples returns at once */
            if (rt_tracker_count(t) != m || rt_tracker_wait(t, m + 5, 1.0) != m)
                bad |= 2;
            if (rt_tracker_summary(t)->samples != m)
                bad |= 4;
            if (rt_tracker_stop(t) != RT_OK)
                bad |= 8;
            if (where == 0 ? m != n : where == 1 ? m != n && m != n + 1 : m != n + 1)
                bad |= 16;
            rt_tracker_free(t);
            _exit(bad);
        }
        int st;
        assert_int_equal(waitpid(kid, &st, 0), kid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("fork %d (point %d): child status 0x%x", i, where, st);
        if (where == 2) {
            pthread_mutex_lock(&park_mu);
            park = GO;
            pthread_cond_broadcast(&park_cv);
            pthread_mutex_unlock(&park_mu);
        }
        settle(c);
        n += where != 0;
        assert_int_equal(rt_tracker_count(t), n);
    }
    assert_true(rt_tracker_running(t));
    next_sample(c);
    assert_int_equal(rt_tracker_count(t), n + 1);
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

static void summary_recommend_report(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.02);
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    assert_int_equal(rt_tracker_summary(t)->samples, rt_tracker_count(t));
    burn(0.1);
    clock_run_to(c, 1, 100.1);
    rt_tracker_stop(t);
    assert_int_equal(rt_tracker_count(t), 5);
    const rt_summary *s = rt_tracker_summary(t);
    assert_int_equal(s->samples, rt_tracker_count(t));
    assert_true(s->has_process);
    assert_true(s->process_cpu_secs > 0);
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_tracker_recommend(t, &rec), RT_OK);
    assert_true(rec.cpu >= 1);
    assert_true(rec.memory_mib >= 128);
    char tmpl[] = "/tmp/rt-embed-report-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    assert_int_equal(rt_tracker_report(t, NULL, fd), RT_OK);
    struct stat sb;
    fstat(fd, &sb);
    assert_true(sb.st_size > 1000);
    char head[64] = {0};
    assert_true(pread(fd, head, sizeof head - 1, 0) > 0);
    assert_non_null(strstr(head, "<!DOCTYPE html") ? head : strstr(head, "<html"));
    close(fd);
    unlink(tmpl);
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

/* ---- the 0.6 columns: the machine's pressure and the process's own cgroup ------------------ */

/* Whether the machine reports pressure: /proc/pressure/cpu has a line (a kernel booted with
 * psi=0 has the file, and reading it fails). */
static bool machine_has_psi(void)
{
    FILE *f = fopen("/proc/pressure/cpu", "r");
    char line[256];
    bool ok = f && fgets(line, sizeof line, f) != NULL;
    if (f)
        fclose(f);
    return ok;
}

/* Whether this process's memory is charged to a group of its own that has a peak: a v1 memory
 * group other than the root, or (pure v2) a v2 group other than the root with memory.peak. */
/* The directory of this process's own memory group (a v1 memory group, or a v2 group with
 * memory.peak where v2 is mounted at /sys/fs/cgroup) into dir; false without one. */
static bool own_memory_group(char *dir, size_t cap)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[4096];
    bool yes = false;
    while (f && !yes && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        ctl++;
        if (strcmp(path, "/") == 0)
            continue;
        if (*ctl == '\0') { /* v2: only where it is mounted at /sys/fs/cgroup (not hybrid) */
            char peak[4200];
            snprintf(peak, sizeof peak, "/sys/fs/cgroup%s/memory.peak", path);
            yes = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 && access(peak, R_OK) == 0;
            snprintf(dir, cap, "/sys/fs/cgroup%s", path);
        } else {
            for (char *c = strtok(ctl, ","); c && !yes; c = strtok(NULL, ","))
                yes = strcmp(c, "memory") == 0;
            snprintf(dir, cap, "/sys/fs/cgroup/memory%s", path);
        }
    }
    if (f)
        fclose(f);
    return yes;
}

/* Whether the group at dir holds this process alone (its cgroup.procs lists only getpid()). */
static bool group_is_mine(const char *dir)
{
    char path[4300], line[64];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    bool mine = f != NULL;
    while (f && fgets(line, sizeof line, f)) {
        n++;
        mine = mine && strtol(line, NULL, 10) == (long)getpid();
    }
    if (f)
        fclose(f);
    return mine && n == 1;
}

/* A tracker of this process (pid 0): the pressure columns hold the machine's pressure from the
 * second sample on (the baseline is the first reading) and the summary has their statistics;
 * in a memory group of its own, the group's peak charge is a column and in the summary. The
 * columns give the same figures as the records. */
/* rt_tracker_set_grid (0.15): the tracker's summary carries the carbon at the grid's intensity
 * (the grid copied with its strings), unknown again with NULL; a NULL tracker is invalid. */
static void grid_gives_carbon(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.02);
    rt_clock *c = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(c, &o);
    burn(0.1);
    clock_run_to(c, 1, 100.1);
    rt_tracker_stop(t);
    char zone[8] = "XY";
    rt_grid g = RT_GRID_INIT;
    g.g_per_kwh = 400;
    g.zone = zone;
    g.source = "given";
    assert_int_equal(rt_tracker_set_grid(NULL, &g), RT_ERR_INVALID);
    assert_int_equal(rt_tracker_set_grid(t, &g), RT_OK);
    zone[0] = '\0'; /* copied: the caller's buffer is its own */
    const rt_summary *s = rt_tracker_summary(t);
    assert_non_null(s->grid);
    assert_true(s->grid->g_per_kwh == 400);
    assert_string_equal(s->grid->zone, "XY");
    assert_non_null(s->process_energy_method); /* the estimate, where no counter can be read */
    assert_true(s->process_energy_joules > 0);
    assert_true(s->process_co2e_grams == rt_co2e_grams(s->process_energy_joules, 400));
    assert_true(s->co2e_grams == rt_co2e_grams(s->energy_joules, 400));
    assert_int_equal(rt_tracker_set_grid(t, NULL), RT_OK);
    s = rt_tracker_summary(t);
    assert_true(isnan(s->process_co2e_grams) && isnan(s->co2e_grams));
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

static void cgroup_and_pressure_columns(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.05);
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    burn(0.05);
    assert_true(rt_tracker_wait(t, 3, 10.0) >= 3);
    rt_tracker_stop(t);
    uint64_t n = rt_tracker_count(t);
    const rt_summary *s = rt_tracker_summary(t);
    static const int pressure[] = {RT_COL_PRESSURE_CPU_SOME_PCT, RT_COL_PRESSURE_MEMORY_SOME_PCT,
                                   RT_COL_PRESSURE_MEMORY_FULL_PCT, RT_COL_PRESSURE_IO_SOME_PCT,
                                   RT_COL_PRESSURE_IO_FULL_PCT};
    const rt_dist *dist[] = {&s->pressure_cpu_some_pct, &s->pressure_memory_some_pct, &s->pressure_memory_full_pct,
                             &s->pressure_io_some_pct, &s->pressure_io_full_pct};
    rt_record r;
    assert_int_equal(rt_tracker_record(t, 1, &r, sizeof r), RT_OK);
    const double from_record[] = {r.pressure_cpu_some_pct, r.pressure_memory_some_pct, r.pressure_memory_full_pct,
                                  r.pressure_io_some_pct, r.pressure_io_full_pct};
    if (machine_has_psi()) {
        for (size_t k = 0; k < sizeof pressure / sizeof pressure[0]; k++) {
            double v = NAN;
            assert_int_equal(rt_tracker_column(t, pressure[k], 1, 1, &v), 1);
            if (isnan(v) || v < 0 || v > 100 || v != from_record[k])
                fail_msg("%s of the second sample: %g (record %g)", rt_column_name(pressure[k]), v, from_record[k]);
            assert_true(dist[k]->mean >= 0 && dist[k]->peak >= dist[k]->mean && dist[k]->peak <= 100);
        }
        print_message("pressure: cpu some %.2f%% (peak %.2f%%), io some %.2f%% over %llu samples\n",
                      s->pressure_cpu_some_pct.mean, s->pressure_cpu_some_pct.peak, s->pressure_io_some_pct.mean,
                      (unsigned long long)n);
    } else {
        print_message("skipped the pressure part: this machine reports no pressure (/proc/pressure)\n");
    }
    char gdir[4200];
    if (own_memory_group(gdir, sizeof gdir) && !group_is_mine(gdir)) {
        /* a group shared with other processes: its peak is not this tree's */
        double peak = 0;
        assert_int_equal(rt_tracker_column(t, RT_COL_PROC_MEMORY_PEAK_MIB, n - 1, 1, &peak), 1);
        assert_true(isnan(peak));
        print_message("the process's memory group %s is shared: no peak of the tree's\n", gdir);
    } else if (own_memory_group(gdir, sizeof gdir)) {
        double peak = NAN;
        assert_int_equal(rt_tracker_column(t, RT_COL_PROC_MEMORY_PEAK_MIB, n - 1, 1, &peak), 1);
        assert_true(peak > 0);
        assert_true(s->process_memory_peak_mib >= peak);
        assert_int_equal(rt_tracker_record(t, n - 1, &r, sizeof r), RT_OK);
        assert_true(r.process_memory_peak_mib == peak);
        print_message("the process's memory group: peak %.3f MiB\n", peak);
    } else {
        print_message("skipped the cgroup part: this process is in no memory group of its own\n");
    }
    rt_tracker_free(t);
}

/* ---- concurrency: free while another thread waits, stop from two threads and from the
 * callback, fork from a log callback during a sample ---------------------------------------- */

static void *wait_forever(void *arg)
{
    uint64_t *got = arg;
    *got = rt_tracker_wait(*(rt_tracker **)(got + 1), UINT64_MAX, -1);
    return NULL;
}

static void *stop_it(void *arg)
{
    rt_tracker_stop(arg);
    return NULL;
}

static rt_error stop_in_cb;
static void stop_from_callback(void *user, const rt_sample *s)
{
    (void)s;
    rt_tracker *t = *(rt_tracker *volatile *)user;
    if (t)
        stop_in_cb = rt_tracker_stop(t); /* refused: it would join its own thread */
}

static void free_while_waiting_and_two_stops(void **state)
{
    (void)state;
    alarm(30); /* a deadlock ends the test */
    rt_tracker_options o = opts_at(0.01);
    rt_tracker *t;
    rt_clock *c = rt_clock_test_new(100.0);
    for (int free_at_once = 0; free_at_once < 2; free_at_once++) {
        t = start_on(c, &o);
        next_sample(c);
        uint64_t a1[2] = {0, 0}, a2[2] = {0, 0};
        memcpy(a1 + 1, &t, sizeof t);
        memcpy(a2 + 1, &t, sizeof t);
        pthread_t w1, w2, s1, s2;
        pthread_create(&w1, NULL, wait_forever, a1);
        pthread_create(&w2, NULL, wait_forever, a2);
        /* the thread and the two callers blocked in rt_tracker_wait all wait on the clock */
        if (!rt_clock_test_idle(c, 3, CLOCK_SETTLE_SECS))
            fail_msg("the two callers did not block in rt_tracker_wait");
        pthread_mutex_lock(&t->mu);
        assert_int_equal(t->waiters, 2);
        pthread_mutex_unlock(&t->mu);
        if (!free_at_once) { /* two stops at once, the waiters released */
            pthread_create(&s1, NULL, stop_it, t);
            pthread_create(&s2, NULL, stop_it, t);
            pthread_join(s1, NULL);
            pthread_join(s2, NULL);
            assert_false(rt_tracker_running(t));
        }
        rt_tracker_free(t); /* stops too; waits out the callers blocked in wait */
        pthread_join(w1, NULL);
        pthread_join(w2, NULL);
        assert_true(a1[0] >= 1 && a2[0] >= 1);
    }

    static rt_tracker *volatile tp;
    tp = NULL;
    stop_in_cb = RT_OK;
    o.on_sample = stop_from_callback;
    o.on_sample_user = (void *)&tp;
    t = start_on(c, &o);
    tp = t;
    next_sample(c);
    assert_true(rt_tracker_running(t));
    rt_tracker_free(t);
    rt_clock_test_free(c);
    assert_int_equal(stop_in_cb, RT_ERR_INVALID);
    alarm(0);
}

static pthread_t main_thread;
static pid_t forked_kid; /* atomic */
static int forked_pipe[2]; /* the kid's pid, written once it is forked */
static void fork_in_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    (void)msg;
    if (pthread_equal(pthread_self(), main_thread) || __atomic_load_n(&forked_kid, __ATOMIC_SEQ_CST))
        return;
    pid_t kid = fork(); /* on the tracker's thread, in the middle of a sample */
    if (kid == 0)
        _exit(7);
    __atomic_store_n(&forked_kid, kid, __ATOMIC_SEQ_CST);
    if (write(forked_pipe[1], &kid, sizeof kid) != sizeof kid)
        abort();
}

/* A log callback that forks while the tracker samples: the fork handlers do not wait for the
 * thread that forks (that deadlocked). The proc root has /proc/stat alone, emptied once the
 * tracker started, so that every sample logs. */
static void fork_from_log_callback(void **state)
{
    (void)state;
    alarm(30);
    char dir[] = "/tmp/rt-embed-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], buf[65536];
    snprintf(path, sizeof path, "%s/stat", dir);
    FILE *in = fopen("/proc/stat", "r"), *out = fopen(path, "w");
    size_t n = fread(buf, 1, sizeof buf, in);
    fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
    main_thread = pthread_self();
    __atomic_store_n(&forked_kid, 0, __ATOMIC_SEQ_CST);
    assert_int_equal(pipe(forked_pipe), 0);
    rt_tracker_options o = opts_at(0.01);
    o.pid = -1;
    o.proc_root = dir;
    o.sys_root = dir;
    o.log = fork_in_log;
    rt_clock *clk = rt_clock_test_new(100.0);
    rt_tracker *t = start_on(clk, &o);
    out = fopen(path, "w");
    fputs("intr 0\n", out);
    fclose(out);
    settle(clk);
    rt_clock_test_set(clk, rt_clock_test_next(clk));
    pid_t kid = 0; /* the sample logs, and forks (the alarm bounds the read) */
    assert_int_equal(read(forked_pipe[0], &kid, sizeof kid), sizeof kid);
    assert_true(kid > 0);
    close(forked_pipe[0]);
    close(forked_pipe[1]);
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    settle(clk);
    uint64_t c = rt_tracker_count(t);
    next_sample(clk); /* the parent's tracker goes on */
    next_sample(clk);
    assert_int_equal(rt_tracker_count(t), c + 2);
    rt_tracker_free(t);
    rt_clock_test_free(clk);
    unlink(path);
    rmdir(dir);
    alarm(0);
}

/* /proc/PID/stat utime + stime of pid (its own CPU, not its children's), in seconds. */
static double stat_cpu(pid_t pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    const char *p = strrchr(line, ')');
    assert_non_null(p);
    unsigned long long ut = 0, st = 0;
    /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st), 2);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* no_children against the kernel: a root that burns a little and has a child burning a lot
 * (alive, not reaped) reports the root's own utime + stime of /proc/PID/stat. */
static void root_only_against_kernel(void **state)
{
    (void)state;
    int go[2], ready[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t root = fork();
    assert_true(root >= 0);
    if (root == 0) {
        pid_t kid = fork();
        if (kid == 0) {
            for (;;)
                burn(10); /* until killed with its parent's group */
        }
        char c;
        if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(1);
        burn(0.2);
        if (write(ready[1], "b", 1) != 1 || read(go[0], &c, 1) != 1) /* then wait to be killed */
            _exit(1);
        kill(kid, SIGKILL);
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    rt_tracker_options o = opts_at(0.05);
    o.pid = root;
    o.no_children = 1;
    rt_tracker *t;
    double before = stat_cpu(root);
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    double after_start = stat_cpu(root);
    assert_int_equal(write(go[1], "g", 1), 1);
    assert_int_equal(read(ready[0], &c, 1), 1); /* the root burnt its 0.2 s; the child burns on */
    uint64_t n = rt_tracker_count(t); /* while 6 samples are taken (0.3 s of them) */
    assert_true(rt_tracker_wait(t, n + 6, 10.0) >= n + 6);
    double end_lo = stat_cpu(root);
    rt_tracker_stop(t);
    double end_hi = stat_cpu(root);
    double total = last_of(t, RT_COL_PROC_CPU_SECS_TOTAL);
    print_message("root alone: tracker %.3f s, kernel %.3f..%.3f s\n", total, end_lo - after_start, end_hi - before);
    assert_true(total >= end_lo - after_start - TICKS_TOL);
    assert_true(total <= end_hi - before + TICKS_TOL);
    assert_true(total < 0.5); /* the child's CPU (0.3 s and more) is not there */
    assert_true(last_of(t, RT_COL_PROC_CHILDREN) == 0);
    rt_tracker_free(t);
    assert_int_equal(write(go[1], "g", 1), 1);
    int st;
    waitpid(root, &st, 0);
    close(go[0]);
    close(go[1]);
    close(ready[0]);
    close(ready[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(self_cpu_matches_kernel),
        cmocka_unit_test(children_counted_or_not),
        cmocka_unit_test(machine_only_and_errors),
        cmocka_unit_test(reading_while_running),
        cmocka_unit_test(small_store_drops_oldest),
        cmocka_unit_test(callback_each_sample),
        cmocka_unit_test(grid_late_sample_and_stop),
        cmocka_unit_test(fork_while_running),
        cmocka_unit_test(summary_recommend_report),
        cmocka_unit_test(grid_gives_carbon),
        cmocka_unit_test(cgroup_and_pressure_columns),
        cmocka_unit_test(free_while_waiting_and_two_stops),
        cmocka_unit_test(fork_from_log_callback),
        cmocka_unit_test(root_only_against_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
