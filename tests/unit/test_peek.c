/* test_peek.c - the sampler's reading at a phase's mark (rt_sampler_peek, sample/peek.c): on a
 * copy of the proctree fixture, a peek reads the tree's CPU, I/O and RSS on the samples' basis
 * and changes nothing the next sample reports (a sampler that peeks and one that does not give
 * the same samples); live, a child that burned CPU and was reaped counts at the next peek. */
#include "unit.h"

#include <math.h>
#include <sys/wait.h>
#include <time.h>

#include "resource_tracker.h"
#include "sample/replay.h"

static char dir[64], proc[128];
static unsigned long ut101, st101, rd101;
static unsigned long m_busy, m_idle;

static int setup(void **state)
{
    (void)state;
    unit_proctree_copy("rt-peek", dir, sizeof dir, proc, sizeof proc);
    ut101 = 300;
    st101 = 30;
    rd101 = 101000;
    m_busy = 150;
    m_idle = 1010;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* Rewrites /proc/stat (one core), 101's stat and io with the current counters. */
static void write_counters(void)
{
    unit_proctree_counters(proc, m_busy, m_idle, ut101, st101, false);
    char text[512];
    snprintf(text, sizeof text,
             "rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: %lu\nwrite_bytes: 1010\ncancelled_write_bytes: 0\n",
             rd101);
    unit_put(proc, "101/io", text);
}

static rt_sampler *open_tree(void)
{
    write_counters();
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = "/nonexistent";
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    o.pid = 100;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    return s;
}

static rt_phase_mark peek(rt_sampler *s)
{
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    m.kind = RT_PHASE_START;
    m.name = "p";
    m.timestamp_secs = 1.0; /* long ago: the lag is large but known */
    assert_int_equal(rt_sampler_peek(s, &m), RT_OK);
    return m;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* The peek's figures are the next sample's when nothing else changes in between, and a peek
 * after the tree grew shows the growth (in ticks, at once, not at the next sample). */
static void peek_reads_on_the_samples_basis(void **state)
{
    (void)state;
    double tck = (double)sysconf(_SC_CLK_TCK);
    rt_sampler *s = open_tree();
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1e9, 1.7e9, &smp), RT_OK);
    double total0 = smp->process->cpu_secs_total;
    rt_phase_mark m = peek(s);
    assert_int_equal(m.cpu_source, RT_PHASE_CPU_TICKS);
    NEAR(m.cpu_secs_total, total0);
    assert_true(m.reading_lag_secs > 0);
    assert_true(isnan(m.memory_peak_mib)); /* no per-reader peak on a fixture */
    NEAR(m.read_bytes_total, (double)smp->process->read_bytes_total);
    NEAR(m.rss_mib, smp->process->rss_mib);

    ut101 += 50;
    st101 += 7;
    rd101 += 4096;
    write_counters();
    m = peek(s);
    NEAR(m.cpu_secs_total, total0 + 57 / tck);
    NEAR(m.read_bytes_total, (double)smp->process->read_bytes_total + 4096);
    rt_phase_mark again = peek(s); /* a second peek: the same (nothing was committed) */
    NEAR(again.cpu_secs_total, m.cpu_secs_total);
    m_busy += 100;
    write_counters();
    assert_int_equal(rt_sampler_sample_at(s, 1e9 + 1, 1.7e9 + 1, &smp), RT_OK);
    NEAR(smp->process->cpu_secs_total, m.cpu_secs_total);
    NEAR((double)smp->process->read_bytes_total, m.read_bytes_total);
    m = peek(s);
    NEAR(m.cpu_secs_total, smp->process->cpu_secs_total);
    /* without a tree there is nothing to peek */
    rt_phase_mark bad = RT_PHASE_MARK_INIT;
    bad.struct_size = 8;
    assert_int_equal(rt_sampler_peek(s, &bad), RT_ERR_INVALID);
    assert_int_equal(rt_sampler_peek(NULL, &m), RT_ERR_INVALID);
    rt_sampler_free(s);
}

/* Two samplers of the same tree, one peeking between its samples: every sample is the same. */
static void peek_changes_nothing_the_next_sample_reports(void **state)
{
    (void)state;
    rt_sampler *a = open_tree(), *b = open_tree();
    double mono = 1e9;
    unsigned long grow[][3] = {{0, 0, 0}, {80, 10, 100}, {200, 0, 0}, {0, 0, 5000}, {30, 30, 30}, {150, 5, 0}};
    for (size_t i = 0; i < sizeof grow / sizeof grow[0]; i++) {
        /* half the growth before the peek, half after it */
        ut101 += grow[i][0] / 2;
        st101 += grow[i][1] / 2;
        rd101 += grow[i][2] / 2;
        m_busy += 40;
        m_idle += 60;
        write_counters();
        peek(a);
        peek(a);
        ut101 += grow[i][0] - grow[i][0] / 2;
        st101 += grow[i][1] - grow[i][1] / 2;
        rd101 += grow[i][2] - grow[i][2] / 2;
        write_counters();
        mono += 1.0;
        const rt_sample *sa, *sb;
        assert_int_equal(rt_sampler_sample_at(a, mono, 1.7e9 + mono, &sa), RT_OK);
        assert_int_equal(rt_sampler_sample_at(b, mono, 1.7e9 + mono, &sb), RT_OK);
        const rt_process *pa = sa->process, *pb = sb->process;
        assert_true(pa->cpu_secs_total == pb->cpu_secs_total);
        assert_true(pa->utime_secs == pb->utime_secs && pa->stime_secs == pb->stime_secs);
        assert_true(pa->cores_used == pb->cores_used);
        assert_true(pa->read_bytes_total == pb->read_bytes_total && pa->read_bytes == pb->read_bytes);
        assert_true(pa->write_bytes_total == pb->write_bytes_total);
        assert_true(pa->rss_mib == pb->rss_mib && pa->rss_peak_mib == pb->rss_peak_mib);
        assert_true(pa->pss_mib == pb->pss_mib || (isnan(pa->pss_mib) && isnan(pb->pss_mib)));
        assert_true(pa->child_count == pb->child_count && pa->thread_count == pb->thread_count);
        assert_true(pa->main->cores_used == pb->main->cores_used);
    }
    rt_sampler_free(a);
    rt_sampler_free(b);
}

/* Burns about secs of CPU in this process. */
static void burn(double secs)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    volatile double x = 1;
    do {
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

/* Live: a child of the tracked process burns CPU and is reaped (by the tracked process, so its
 * time is in the root's reaped-children counters): the next peek counts it, before any
 * sample. */
static void peek_counts_a_reaped_child(void **state)
{
    (void)state;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = getpid();
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
    rt_phase_mark before = peek(s);
    /* the live /proc: the processes' own CPU clocks, unless the group holds only this process */
    assert_true(before.cpu_source == RT_PHASE_CPU_SCHEDSTAT || before.cpu_source == RT_PHASE_CPU_GROUP);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        burn(0.3);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    rt_phase_mark after = peek(s);
    assert_int_equal(after.cpu_source, before.cpu_source);
    /* 0.3 s in ticks (10 ms truncation each) */
    assert_true(after.cpu_secs_total - before.cpu_secs_total >= 0.25);
    assert_true(after.rss_mib > 0);
    /* and the sample that follows agrees, to the ticks' truncation (the clocks' basis is the
     * samples' at the first peek) */
    assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
    assert_true(fabs(smp->process->cpu_secs_total - after.cpu_secs_total) < 0.05);
    rt_sampler_free(s);
}

static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Live: the CPU this process burns between two peeks is the kernel's to well within a tick
 * (stat ticks would be off by up to 20 ms: 40% of 50 ms). */
static void peek_is_exact_for_a_live_process(void **state)
{
    (void)state;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = getpid();
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
    for (int round = 0; round < 3; round++) {
        double c0 = process_cpu();
        rt_phase_mark a = peek(s);
        burn(0.05);
        rt_phase_mark b = peek(s);
        double c1 = process_cpu();
        if (a.cpu_source == RT_PHASE_CPU_GROUP)
            skip(); /* this process alone in its group: the group's counter is exact too */
        assert_int_equal(a.cpu_source, RT_PHASE_CPU_SCHEDSTAT);
        assert_int_equal(b.cpu_source, RT_PHASE_CPU_SCHEDSTAT);
        double d = b.cpu_secs_total - a.cpu_secs_total;
        if (!(d > 0.045 && d <= c1 - c0 + 1e-6))
            fail_msg("round %d: peeks %.6f s apart, the kernel's %.6f s around them", round, d, c1 - c0);
        const rt_sample *smp; /* a sample in between changes nothing of the peeks' counter */
        assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
        rt_phase_mark after = peek(s);
        assert_true(after.cpu_secs_total >= b.cpu_secs_total);
        assert_true(fabs(after.cpu_secs_total - smp->process->cpu_secs_total) < 0.1);
    }
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(peek_reads_on_the_samples_basis, setup, teardown),
        cmocka_unit_test_setup_teardown(peek_changes_nothing_the_next_sample_reports, setup, teardown),
        cmocka_unit_test(peek_counts_a_reaped_child),
        cmocka_unit_test(peek_is_exact_for_a_live_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
