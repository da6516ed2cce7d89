/* test_cpu.c - the sampler's CPU part (sample/cpu.c) through the replay API on a hand-written
 * /proc/stat: machine figures from the per-core lines alone (whatever the aggregate line
 * says), cores without a tick, hotplug matched by core id, counters going backwards, and
 * more cores than first seen. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"
#include "sample/replay.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-cpu-XXXXXX");
    unit_tmpdir(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* One core's ticks: user nice system idle iowait (irq, softirq, steal 0). id -1: "cpu". */
typedef struct core {
    int id;
    unsigned long user, nice, sys, idle, iowait;
} core;

/* Writes <dir>/stat: the aggregate line agg, then the cores, then procs_running. */
static void write_stat(const core *agg, const core *c, size_t n)
{
    static char text[1 << 14];
    size_t len = 0;
    for (size_t i = 0; i <= n; i++) {
        const core *k = i == 0 ? agg : &c[i - 1];
        char name[16];
        snprintf(name, sizeof name, k->id < 0 ? "cpu " : "cpu%d", k->id);
        len += (size_t)snprintf(text + len, sizeof text - len, "%s %lu %lu %lu %lu %lu 0 0 0 0 0\n", name, k->user,
                                k->nice, k->sys, k->idle, k->iowait);
    }
    snprintf(text + len, sizeof text - len, "intr 1 2 3\nctxt 99\nprocs_running 3\nprocs_blocked 0\n");
    unit_put(dir, "stat", text);
}

/* The sum of the per-core lines, as the aggregate line should be. */
static core sum_of(const core *c, size_t n)
{
    core a = {.id = -1};
    for (size_t i = 0; i < n; i++) {
        a.user += c[i].user;
        a.nice += c[i].nice;
        a.sys += c[i].sys;
        a.idle += c[i].idle;
        a.iowait += c[i].iowait;
    }
    return a;
}

/* A sampler on dir whose baseline is the stat written now. */
static rt_sampler *open_sampler(void)
{
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = dir;
    o.sys_root = "/nonexistent";
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    return s;
}

/* The per-core sum, in the order the library adds them. */
static double sum_per_core(const rt_cpu *c)
{
    double sum = 0;
    for (size_t i = 0; i < c->core_count; i++)
        if (!isnan(c->per_core_pct[i]))
            sum += c->per_core_pct[i] / 100.0;
    return sum;
}

static void utilization_is_sum_of_cores(void **state)
{
    (void)state;
    core c0[] = {{0, 100, 0, 50, 1000, 10}, {1, 200, 10, 50, 900, 0}, {2, 5, 0, 5, 20, 0}, {3, 1, 1, 1, 1, 1}};
    core agg = sum_of(c0, 4);
    write_stat(&agg, c0, 4);
    rt_sampler *s = open_sampler();
    /* busy/total per core: 30/100, 75/100, 1/3, 2/7 */
    core c1[] = {{0, 120, 0, 60, 1060, 20}, {1, 250, 15, 70, 925, 0}, {2, 6, 0, 5, 22, 0}, {3, 2, 1, 2, 5, 2}};
    /* an aggregate line rounded apart from the cores (the kernel sums them separately) */
    core agg1 = sum_of(c1, 4);
    agg1.user += 37;
    agg1.idle -= 11;
    write_stat(&agg1, c1, 4);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp), RT_OK);
    const rt_cpu *c = smp->cpu;
    assert_int_equal(c->core_count, 4);
    assert_true(fabs(c->per_core_pct[0] - 30.0) < 1e-12);
    assert_true(fabs(c->per_core_pct[1] - 75.0) < 1e-12);
    assert_true(fabs(c->per_core_pct[2] - 100.0 / 3) < 1e-12);
    assert_true(fabs(c->per_core_pct[3] - 200.0 / 7) < 1e-12);
    assert_true(c->utilization_pct == sum_per_core(c)); /* exactly */
    assert_true(fabs(c->utilization_pct - (0.30 + 0.75 + 1.0 / 3 + 2.0 / 7)) < 1e-12);
    /* user+nice and system seconds from the cores too, not from the aggregate line */
    double tck = (double)sysconf(_SC_CLK_TCK);
    assert_true(fabs(c->utime_secs - (20 + 55 + 1 + 1) / tck) < 1e-12);
    assert_true(fabs(c->stime_secs - (10 + 20 + 0 + 1) / tck) < 1e-12);
    assert_int_equal(c->process_count, 3);
    assert_true(isnan(c->process_cores_used)); /* no tracked tree */
    assert_true(c->process_child_count == RT_NULL_I64);
    rt_sampler_free(s);
}

static void no_tick_is_null(void **state)
{
    (void)state;
    core c0[] = {{0, 10, 0, 10, 100, 0}, {1, 10, 0, 10, 100, 0}};
    core agg = sum_of(c0, 2);
    write_stat(&agg, c0, 2);
    rt_sampler *s = open_sampler();
    /* nothing moved on any core; the aggregate line alone moved: still nothing to tell */
    agg.user += 5;
    write_stat(&agg, c0, 2);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    assert_int_equal(smp->cpu->core_count, 2);
    assert_true(isnan(smp->cpu->utilization_pct));
    assert_true(isnan(smp->cpu->per_core_pct[0]));
    assert_true(isnan(smp->cpu->per_core_pct[1]));
    assert_true(smp->cpu->utime_secs == 0.0); /* the cores were there: zero seconds, known */
    /* one core ticks: utilization is that core alone, the other stays null */
    c0[1].idle += 50;
    c0[1].user += 50;
    write_stat(&agg, c0, 2);
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    assert_true(isnan(smp->cpu->per_core_pct[0]));
    assert_true(smp->cpu->per_core_pct[1] == 50.0);
    assert_true(smp->cpu->utilization_pct == 0.5);
    rt_sampler_free(s);
}

static void hotplug_by_core_id(void **state)
{
    (void)state;
    core c0[] = {{0, 100, 0, 0, 100, 0}, {1, 100, 0, 0, 100, 0}, {2, 100, 0, 0, 100, 0}};
    core agg = sum_of(c0, 3);
    write_stat(&agg, c0, 3);
    rt_sampler *s = open_sampler();
    /* core 1 goes offline, core 3 comes online: core 2 is now the second line */
    core c1[] = {{0, 110, 0, 0, 190, 0}, {2, 180, 0, 0, 120, 0}, {3, 7, 0, 0, 3, 0}};
    agg = sum_of(c1, 3);
    write_stat(&agg, c1, 3);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    const rt_cpu *c = smp->cpu;
    assert_int_equal(c->core_count, 3);
    assert_true(c->per_core_pct[0] == 10.0);  /* 10 of 100 */
    assert_true(c->per_core_pct[1] == 80.0);  /* core 2 against core 2: 80 of 100 */
    assert_true(isnan(c->per_core_pct[2]));   /* core 3: no previous reading */
    assert_true(fabs(c->utilization_pct - 0.9) < 1e-12);
    assert_true(c->utilization_pct == sum_per_core(c));
    assert_true(fabs(c->utime_secs - 90 / (double)sysconf(_SC_CLK_TCK)) < 1e-12); /* core 3 not counted */
    /* next interval: core 3 has its previous reading now */
    core c2[] = {{0, 110, 0, 0, 290, 0}, {2, 180, 0, 0, 220, 0}, {3, 57, 0, 0, 53, 0}};
    agg = sum_of(c2, 3);
    write_stat(&agg, c2, 3);
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    c = smp->cpu;
    assert_true(c->per_core_pct[0] == 0.0);
    assert_true(c->per_core_pct[1] == 0.0);
    assert_true(c->per_core_pct[2] == 50.0);
    assert_true(c->utilization_pct == 0.5);
    /* core 1 back, core 3 gone */
    core c3[] = {{0, 160, 0, 0, 340, 0}, {1, 500, 0, 0, 500, 0}, {2, 230, 0, 0, 270, 0}};
    agg = sum_of(c3, 3);
    write_stat(&agg, c3, 3);
    rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp);
    c = smp->cpu;
    assert_true(c->per_core_pct[0] == 50.0);
    assert_true(isnan(c->per_core_pct[1])); /* came back: starts afresh */
    assert_true(c->per_core_pct[2] == 50.0);
    assert_true(c->utilization_pct == 1.0);
    rt_sampler_free(s);
}

static void backwards_never_negative(void **state)
{
    (void)state;
    core c0[] = {{0, 100, 0, 100, 100, 0}, {1, 100, 0, 0, 100, 50}, {2, 0, 0, 0, 100, 0}};
    core agg = sum_of(c0, 3);
    write_stat(&agg, c0, 3);
    rt_sampler *s = open_sampler();
    /* core 0: busy went backwards while the total went on (0%); core 1: the total went
     * backwards (no data); core 2: idle went backwards, busy more than the total (100%) */
    core c1[] = {{0, 50, 0, 10, 400, 0}, {1, 110, 0, 0, 90, 0}, {2, 50, 0, 0, 60, 0}};
    agg = sum_of(c1, 3);
    write_stat(&agg, c1, 3);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    const rt_cpu *c = smp->cpu;
    assert_true(c->per_core_pct[0] == 0.0);
    assert_true(isnan(c->per_core_pct[1]));
    assert_true(c->per_core_pct[2] == 100.0);
    for (size_t i = 0; i < c->core_count; i++)
        assert_true(isnan(c->per_core_pct[i]) || (c->per_core_pct[i] >= 0.0 && c->per_core_pct[i] <= 100.0));
    assert_true(c->utilization_pct == 1.0);
    assert_true(c->utime_secs >= 0.0);
    assert_true(c->stime_secs == 0.0); /* core 0's system ticks went backwards: 0 */
    double tck = (double)sysconf(_SC_CLK_TCK);
    assert_true(fabs(c->utime_secs - (0 + 10 + 50) / tck) < 1e-12);
    /* from the lower values on, deltas count again */
    core c2[] = {{0, 60, 0, 10, 490, 0}, {1, 120, 0, 0, 180, 0}, {2, 50, 0, 0, 160, 0}};
    agg = sum_of(c2, 3);
    write_stat(&agg, c2, 3);
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    c = smp->cpu;
    assert_true(c->per_core_pct[0] == 10.0);
    assert_true(c->per_core_pct[1] == 10.0);
    assert_true(c->per_core_pct[2] == 0.0);
    rt_sampler_free(s);
}

static void more_cores_than_first_seen(void **state)
{
    (void)state;
    core c[40];
    for (int i = 0; i < 40; i++)
        c[i] = (core){i, 100, 0, 0, 100, 0};
    core agg = sum_of(c, 2);
    write_stat(&agg, c, 2);
    rt_sampler *s = open_sampler();
    const rt_sample *smp;
    /* 2 -> 12 -> 40 cores: the arrays grow, the first cores keep their previous readings */
    size_t counts[] = {12, 40, 40};
    for (size_t r = 0; r < 3; r++) {
        size_t n = counts[r];
        for (size_t i = 0; i < n; i++) {
            c[i].user += i % 2 ? 100 : 0;
            c[i].idle += i % 2 ? 0 : 100;
        }
        agg = sum_of(c, n);
        write_stat(&agg, c, n);
        rt_sampler_sample_at(s, 1000.0 + (double)r, 1.7e9 + (double)r, &smp);
        assert_int_equal(smp->cpu->core_count, n);
        size_t seen_before = r == 0 ? 2 : counts[r - 1];
        size_t busy = 0;
        for (size_t i = 0; i < n; i++) {
            double v = smp->cpu->per_core_pct[i];
            if (i >= seen_before) {
                assert_true(isnan(v)); /* new this interval */
                continue;
            }
            assert_true(v == (i % 2 ? 100.0 : 0.0));
            busy += i % 2;
        }
        assert_true(smp->cpu->utilization_pct == (double)busy);
        assert_true(smp->cpu->utilization_pct == sum_per_core(smp->cpu));
    }
    /* and fewer again: only those are listed */
    agg = sum_of(c, 3);
    write_stat(&agg, c, 3);
    rt_sampler_sample_at(s, 1010.0, 1.7e9 + 10, &smp);
    assert_int_equal(smp->cpu->core_count, 3);
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(utilization_is_sum_of_cores, setup, teardown),
        cmocka_unit_test_setup_teardown(no_tick_is_null, setup, teardown),
        cmocka_unit_test_setup_teardown(hotplug_by_core_id, setup, teardown),
        cmocka_unit_test_setup_teardown(backwards_never_negative, setup, teardown),
        cmocka_unit_test_setup_teardown(more_cores_than_first_seen, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
