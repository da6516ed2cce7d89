/* test_tracker.c - the embedded background tracker, run for real on this process: its CPU
 * total against the kernel's own (getrusage), children counted or not, the machine alone,
 * bad arguments, reading while it runs, a small store, the callback, fork while it runs, and
 * the summary, recommendation and report of the run. */
#include "unit.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "resource_tracker.h"

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
    double before = self_and_children();
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    double after_start = self_and_children();
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        burn(0.4);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    rt_tracker_wait(t, rt_tracker_count(t) + 2, 5.0);
    rt_tracker_stop(t);
    double end = self_and_children();
    double total = last_of(t, RT_COL_PROC_CPU_SECS_TOTAL);
    *kernel_lo = end - after_start;
    *kernel_hi = end - before;
    rt_tracker_free(t);
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
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    assert_true(rt_tracker_wait(t, 3, 10.0) >= 3);
    rt_tracker_stop(t);
    for (int c = RT_COL_PROC_PID; c <= RT_COL_PROC_GPU_UTILIZED; c++)
        assert_true(isnan(last_of(t, c)));
    assert_false(isnan(last_of(t, RT_COL_CPU_COUNT)));
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_tracker_recommend(t, &rec), RT_ERR_INVALID); /* no tree */
    rt_tracker_free(t);

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
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    assert_int_equal(rt_tracker_wait(t, 1, 0), rt_tracker_count(t)); /* just a look */
    assert_true(rt_tracker_wait(t, 5, 10.0) >= 5);
    assert_int_equal(rt_tracker_first(t), 0);
    double ts[5], iv[5];
    assert_int_equal(rt_tracker_column(t, RT_COL_TIMESTAMP, 0, 5, ts), 5);
    assert_int_equal(rt_tracker_column(t, RT_COL_INTERVAL, 0, 5, iv), 5);
    for (int i = 1; i < 5; i++)
        assert_true(ts[i] > ts[i - 1]);
    assert_true(iv[0] > 0);
    assert_int_equal(rt_tracker_column(t, 99, 0, 5, ts), 0);
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
}

static void small_store_drops_oldest(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.01);
    o.max_samples = 4;
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    assert_true(rt_tracker_wait(t, 20, 30.0) >= 20);
    rt_tracker_stop(t);
    uint64_t n = rt_tracker_count(t), first = rt_tracker_first(t);
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
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    tp = t;
    rt_tracker_wait(t, 10, 10.0);
    rt_tracker_stop(t);
    assert_int_equal(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), (int)rt_tracker_count(t));
    assert_false(pthread_equal(cb_thread, pthread_self()));
    rt_tracker_free(t);
}

/* Forks again and again while the tracker samples every 10 ms: each child holds a stopped
 * copy (running 0, a frozen count, stop and free work, nothing deadlocks); the parent goes on. */
static void fork_while_running(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.01);
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    rt_tracker_wait(t, 2, 10.0);
    for (int i = 0; i < 30; i++) {
        pid_t kid = fork();
        assert_true(kid >= 0);
        if (kid == 0) {
            alarm(10); /* a deadlock ends the child with SIGALRM */
            int bad = 0;
            if (rt_tracker_running(t) != 0)
                bad |= 1;
            uint64_t n = rt_tracker_count(t);
            usleep(30000);
            if (rt_tracker_count(t) != n || rt_tracker_wait(t, n + 5, 1.0) != n)
                bad |= 2;
            if (rt_tracker_summary(t)->samples != n)
                bad |= 4;
            if (rt_tracker_stop(t) != RT_OK)
                bad |= 8;
            rt_tracker_free(t);
            _exit(bad);
        }
        int st;
        assert_int_equal(waitpid(kid, &st, 0), kid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("fork %d: child status 0x%x", i, st);
        usleep(3000 + (i % 7) * 1000);
    }
    uint64_t n = rt_tracker_count(t);
    assert_true(rt_tracker_running(t));
    assert_true(rt_tracker_wait(t, n + 3, 10.0) >= n + 3);
    rt_tracker_free(t);
}

static void summary_recommend_report(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.02);
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    assert_int_equal(rt_tracker_summary(t)->samples, rt_tracker_count(t));
    burn(0.1);
    rt_tracker_wait(t, 5, 10.0);
    rt_tracker_stop(t);
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
        cmocka_unit_test(fork_while_running),
        cmocka_unit_test(summary_recommend_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
