/* test_energy.c - the sampler's energy part (sample/energy.c) through the replay API: a
 * hand-written powercap tree (two packages with DRAM, a core zone, psys) and /proc/stat on one
 * core, the fixture's process tree: every domain's energy equal to its counters' difference,
 * power over the interval, the machine's total (packages and DRAM, or the platform meter), the
 * tree's share of the busy CPU time exactly, a failed read that loses nothing, the idle floor,
 * the estimate where no counter exists, and energy_off. */
#include "unit.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "resource_tracker.h"
#include "sample/replay.h"

static char dir[64], proc[128], sys[128];
static unsigned long m_busy, m_idle, ut101;

static int setup(void **state)
{
    (void)state;
    unit_proctree_copy("rt-energy", dir, sizeof dir, proc, sizeof proc);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    m_busy = 100;
    m_idle = 1000;
    ut101 = 300;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

static void write_counters(void)
{
    unit_proctree_counters(proc, m_busy, m_idle, ut101, 0, false);
}

/* A powercap zone: <sys>/class/powercap/<zone>/{name,energy_uj,max_energy_range_uj,enabled}. */
static void zone(const char *z, const char *name, unsigned long long uj)
{
    char rel[256], text[64], cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/class/powercap/%s'", sys, z);
    unit_system(cmd);
    snprintf(rel, sizeof rel, "class/powercap/%s/name", z);
    snprintf(text, sizeof text, "%s\n", name);
    unit_put(sys, rel, text);
    snprintf(rel, sizeof rel, "class/powercap/%s/energy_uj", z);
    snprintf(text, sizeof text, "%llu\n", uj);
    unit_put(sys, rel, text);
    snprintf(rel, sizeof rel, "class/powercap/%s/max_energy_range_uj", z);
    unit_put(sys, rel, "262143328850\n");
    snprintf(rel, sizeof rel, "class/powercap/%s/enabled", z);
    unit_put(sys, rel, "1\n");
}

/* Sets a zone's counter (the file rewritten in place, as the kernel's changes). */
static void set_uj(const char *z, unsigned long long uj)
{
    char rel[256], text[64];
    snprintf(rel, sizeof rel, "class/powercap/%s/energy_uj", z);
    snprintf(text, sizeof text, "%llu\n", uj);
    unit_put(sys, rel, text);
}

static rt_sampler *open_sampler(int64_t pid, int energy_off)
{
    write_counters();
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = sys;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    o.pid = pid;
    o.cgroup_off = 1;
    o.energy_off = energy_off;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    return s;
}

static const rt_energy_domain *domain(const rt_energy *e, const char *name)
{
    for (size_t i = 0; i < e->domain_count; i++)
        if (!strcmp(e->domain[i]->name, name))
            return e->domain[i];
    fail_msg("no domain %s", name);
    return NULL;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static const rt_sample *step(rt_sampler *s, double *mono, double secs, int busy_ticks, unsigned long tree_ticks)
{
    m_busy += (unsigned long)busy_ticks;
    m_idle += (unsigned long)(100 * secs) - (unsigned long)busy_ticks;
    ut101 += tree_ticks;
    write_counters();
    *mono += secs;
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, *mono, 1.7e9 + *mono, &smp), RT_OK);
    return smp;
}

static void measured_domains_and_share(void **state)
{
    (void)state;
    zone("intel-rapl:0", "package-0", 1000000);
    zone("intel-rapl:0:0", "core", 500000);
    zone("intel-rapl:0:1", "dram", 200000);
    zone("intel-rapl:1", "package-1", 7000000);
    rt_sampler *s = open_sampler(100, 0);
    /* the first interval about 1 s after the baseline (taken on the real clock), the packages
     * drawing some 100 W: more than any interval below, so it is not the floor */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double mono = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    set_uj("intel-rapl:0", 1000000 + 100000000);
    const rt_sample *smp = step(s, &mono, 1.0, 0, 0);
    assert_non_null(smp->energy);
    const rt_energy *e = smp->energy;
    NEAR(e->energy_joules, 100.0);
    assert_null(e->model);                /* nothing estimated */
    long tck = sysconf(_SC_CLK_TCK);
    assert_int_equal(tck, 100);

    /* 2 s: package-0 12.5 J, its core 4 J, DRAM 3.25 J, package-1 20 J; the machine's one
     * core busy 80 of 200 ticks, the tree 40 of them: its share 0.5 */
    set_uj("intel-rapl:0", 101000000 + 12500000);
    set_uj("intel-rapl:0:0", 500000 + 4000000);
    set_uj("intel-rapl:0:1", 200000 + 3250000);
    set_uj("intel-rapl:1", 7000000 + 20000000);
    smp = step(s, &mono, 2.0, 80, 40);
    e = smp->energy;
    const rt_energy_domain *p0 = domain(e, "package-0"), *c0 = domain(e, "core-0"), *d0 = domain(e, "dram-0"),
                           *p1 = domain(e, "package-1");
    NEAR(p0->energy_joules, 12.5);
    NEAR(p0->power_watts, 6.25);
    NEAR(c0->energy_joules, 4.0);
    NEAR(d0->energy_joules, 3.25);
    NEAR(p1->energy_joules, 20.0);
    assert_string_equal(p0->method, "measured");
    assert_true(p0->in_total && d0->in_total && p1->in_total && !c0->in_total);
    NEAR(e->energy_joules, 12.5 + 3.25 + 20.0);
    NEAR(e->power_watts, (12.5 + 3.25 + 20.0) / 2);
    assert_string_equal(e->method, "measured");
    NEAR(p0->process_share, 0.5);
    NEAR(p0->process_energy_joules, 6.25);
    NEAR(c0->process_energy_joules, 2.0);
    /* the tree's: its share of the packages and DRAM (the core zone is inside its package: its
     * own figure, not added again) */
    NEAR(e->process_energy_joules, 0.5 * (12.5 + 3.25 + 20.0));
    assert_string_equal(e->process_method, "measured");
    NEAR(e->idle_power_watts, e->power_watts);

    /* a failed read of package-0 (the file empty): its interval null, the others go on; the
     * next good read counts all the energy since the last good one */
    set_uj("intel-rapl:0", 0);
    unit_put(sys, "class/powercap/intel-rapl:0/energy_uj", "");
    set_uj("intel-rapl:1", 7000000 + 21000000);
    smp = step(s, &mono, 1.0, 100, 0);
    e = smp->energy;
    assert_true(isnan(domain(e, "package-0")->energy_joules));
    NEAR(domain(e, "package-1")->energy_joules, 1.0);
    NEAR(domain(e, "package-0")->energy_joules_total, 112.5);
    set_uj("intel-rapl:0", 101000000 + 12500000 + 9000000);
    smp = step(s, &mono, 1.0, 100, 0);
    e = smp->energy;
    NEAR(domain(e, "package-0")->energy_joules, 9.0);
    NEAR(domain(e, "package-0")->power_watts, 4.5); /* over the 2 s since its last good read */
    NEAR(e->power_watts, 4.5);                      /* so the machine's: not its 9 J over 1 s */
    NEAR(e->energy_joules, 9.0);
    NEAR(domain(e, "package-0")->energy_joules_total, 121.5);
    /* the idle floor: the least machine power of a whole interval (not the one with a failed
     * read, nor the catch-up after it) */
    NEAR(e->idle_power_watts, (12.5 + 3.25 + 20.0) / 2);
    rt_sampler_free(s);
}

static void platform_meter_is_the_total(void **state)
{
    (void)state;
    zone("intel-rapl:0", "package-0", 0);
    zone("intel-rapl:1", "psys", 0);
    rt_sampler *s = open_sampler(0, 0);
    double mono = 1e9;
    step(s, &mono, 0, 0, 0);
    set_uj("intel-rapl:0", 3000000);
    set_uj("intel-rapl:1", 10000000);
    const rt_sample *smp = step(s, &mono, 1.0, 50, 0);
    const rt_energy *e = smp->energy;
    assert_true(domain(e, "psys")->in_total);
    assert_false(domain(e, "package-0")->in_total);
    NEAR(e->energy_joules, 10.0);
    assert_true(isnan(e->process_energy_joules)); /* no tree */
    assert_null(e->process_method);
    rt_sampler_free(s);
}

static void estimate_without_counters(void **state)
{
    (void)state;
    unit_put(proc, "cpuinfo", "processor\t: 0\nmodel name\t: Imaginary CPU 1234\nsiblings\t: 1\n\n");
    rt_sampler *s = open_sampler(100, 0);
    double mono = 1e9;
    step(s, &mono, 0, 0, 0);
    const rt_sample *smp = step(s, &mono, 2.0, 100, 50);
    const rt_energy *e = smp->energy;
    assert_int_equal(e->domain_count, 1);
    const rt_energy_domain *d = domain(e, "cpu");
    assert_string_equal(d->method, "estimated");
    assert_string_equal(d->source, "model");
    assert_non_null(e->model);
    assert_string_equal(e->method, "estimated");
    assert_true(d->energy_joules > 0);
    /* the model's power at 0.5 busy cores of 1, times 2 s */
    assert_true(d->power_watts > 0);
    NEAR(d->energy_joules, d->power_watts * 2.0);
    NEAR(d->process_share, 0.5);
    NEAR(e->process_energy_joules, d->energy_joules * 0.5);
    /* the per-core rule (docs/energy.md): 3.5 W a busy logical core, 30% of it idle; the floor
     * is the model's idle, not the least power seen */
    NEAR(d->power_watts, 1.05 + 0.5 * (3.5 - 1.05));
    NEAR(e->idle_power_watts, 1.05);
    assert_string_equal(e->process_method, "estimated");
    /* an interval in which no core ticked (/proc/stat moves at the tick: a short job's only
     * sample, under load): the machine busy at least as the tree (here idle), not unknown */
    smp = step(s, &mono, 0.004, 0, 0);
    e = smp->energy;
    d = domain(e, "cpu");
    assert_true(isnan(smp->cpu->utilization_pct));
    NEAR(d->power_watts, 1.05);
    assert_true(fabs(d->energy_joules - 1.05 * 0.004) < 1e-6); /* the clock near 1e9 s: 1e-7 s apart */
    assert_string_equal(e->method, "estimated");
    assert_string_equal(e->process_method, "estimated");
    rt_sampler_free(s);
}

static void energy_off(void **state)
{
    (void)state;
    zone("intel-rapl:0", "package-0", 0);
    rt_sampler *s = open_sampler(0, 1);
    double mono = 1e9;
    const rt_sample *smp = step(s, &mono, 1.0, 10, 0);
    assert_null(smp->energy);
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(measured_domains_and_share, setup, teardown),
        cmocka_unit_test_setup_teardown(platform_meter_is_the_total, setup, teardown),
        cmocka_unit_test_setup_teardown(estimate_without_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(energy_off, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
