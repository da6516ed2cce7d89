/* test_sampler.c - the sampler through the public API: fixture roots, missing sources giving
 * nulls instead of failures, rates over the given elapsed time, no negative rates; live, the
 * group the tracker itself runs in. */
#include "unit.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resource_tracker.h"
#include "sample/replay.h"
#include "sample/clocks.h"

static rt_sampler *open_fixture(const char *c)
{
    char p[1024], s[1024];
    snprintf(p, sizeof p, "%s/%s/proc", RT_FIXTURES, c);
    snprintf(s, sizeof s, "%s/%s/sys", RT_FIXTURES, c);
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = p;
    o.sys_root = s;
    rt_sampler *sm = NULL;
    assert_int_equal(rt_sampler_new(&o, &sm), RT_OK);
    return sm;
}

static void same_state_gives_zero_rates(void **state)
{
    (void)state;
    rt_sampler *s = open_fixture("server-nvme-lvm");
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 100.0, 1.7e9, &smp), RT_OK);
    assert_int_equal(rt_sampler_sample_at(s, 102.5, 1.7e9 + 2.5, &smp), RT_OK);
    assert_true(fabs(smp->interval_secs - 2.5) < 1e-9);
    assert_true(isnan(smp->cpu->utilization_pct)); /* no ticks passed: cannot tell, null */
    assert_int_equal(smp->cpu->core_count, 4);
    assert_int_equal(smp->disk_count, 11); /* 7 physical disks, dm-0, dm-1, md0, zram0 */
    for (size_t i = 0; i < smp->disk_count; i++) {
        assert_true(smp->disk[i]->write_bytes_per_sec == 0.0);
        assert_int_equal(smp->disk[i]->write_bytes, 0);
    }
    assert_int_equal(smp->network_count, 6);
    assert_true(smp->memory->total_mib > 64000);
    assert_null(smp->pressure); /* the capture has no /proc/pressure: null, not zeros */
    assert_null(smp->cgroup);   /* nor a self/cgroup: the tracker's own group is none */
    rt_sampler_free(s);
}

static void zero_elapsed_gives_null_rates(void **state)
{
    (void)state;
    rt_sampler *s = open_fixture("vm-virtio");
    const rt_sample *smp;
    rt_sampler_sample_at(s, 50.0, 1.0, &smp);
    rt_sampler_sample_at(s, 50.0, 1.0, &smp);
    assert_true(smp->network_count > 0);
    assert_true(isnan(smp->network[0]->rx_bytes_per_sec));
    assert_true(isnan(smp->disk[0]->read_bytes_per_sec));
    rt_sampler_free(s);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void missing_sources_are_null_not_fatal(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-unit-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "stat", "cpu  1 0 1 10 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0\n");
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = dir;
    o.sys_root = "/nonexistent";
    rt_sampler *s;
    assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
    write_file(dir, "stat", "cpu  3 0 1 12 0 0 0 0\ncpu0 3 0 1 12 0 0 0 0\n");
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 10.0, 1.0, &smp), RT_OK);
    assert_int_equal(rt_sampler_sample_at(s, 11.0, 2.0, &smp), RT_OK);
    assert_true(isnan(smp->memory->total_mib)); /* no meminfo: null */
    assert_int_equal(smp->disk_count, 0);
    assert_int_equal(smp->network_count, 0);
    assert_true(smp->cpu->process_count == RT_NULL_I64);
    assert_true(smp->disk_space_total_bytes == RT_NULL_U64);
    rt_sampler_free(s);
    /* without /proc/stat there is nothing to sample */
    char p[1024];
    snprintf(p, sizeof p, "%s/stat", dir);
    unlink(p);
    assert_int_equal(rt_sampler_new(&o, &s), RT_ERR_NOT_FOUND);
    rmdir(dir);
}

static void counters_backwards_never_negative(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-unit-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char net[1100];
    snprintf(net, sizeof net, "%s/net", dir);
    mkdir(net, 0755);
    write_file(dir, "stat", "cpu  100 0 100 1000 0 0 0 0\ncpu0 100 0 100 1000 0 0 0 0\n");
    write_file(dir, "net/dev", "a\nb\n  eth9: 5000 1 0 0 0 0 0 0 7000 1 0 0 0 0 0 0\n");
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = dir;
    o.sys_root = "/nonexistent";
    rt_sampler *s;
    assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1.0, 1.0, &smp);
    write_file(dir, "stat", "cpu  50 0 100 1100 0 0 0 0\ncpu0 50 0 100 1100 0 0 0 0\n");
    write_file(dir, "net/dev", "a\nb\n  eth9: 10 1 0 0 0 0 0 0 20 1 0 0 0 0 0 0\n");
    rt_sampler_sample_at(s, 2.0, 2.0, &smp);
    assert_int_equal(smp->network_count, 1);
    assert_true(smp->network[0]->rx_bytes_per_sec == 0.0);
    assert_true(smp->network[0]->tx_bytes_per_sec == 0.0);
    assert_true(smp->cpu->utime_secs == 0.0);
    assert_true(smp->cpu->utilization_pct >= 0.0);
    /* from the lower values on, deltas are counted again */
    write_file(dir, "net/dev", "a\nb\n  eth9: 1010 1 0 0 0 0 0 0 20 1 0 0 0 0 0 0\n");
    rt_sampler_sample_at(s, 3.0, 3.0, &smp);
    assert_true(smp->network[0]->rx_bytes_per_sec == 1000.0);
    rt_sampler_free(s);
    char p[1100];
    snprintf(p, sizeof p, "%s/net/dev", dir);
    unlink(p);
    rmdir(net);
    snprintf(p, sizeof p, "%s/stat", dir);
    unlink(p);
    rmdir(dir);
}

static void live_machine(void **state)
{
    (void)state;
    rt_sampler *s;
    assert_int_equal(rt_sampler_new(NULL, &s), RT_OK);
    const rt_sample *smp;
    /* a second after the start on the clock given to it: no waiting for one to pass */
    assert_int_equal(rt_sampler_sample_at(s, rt_mono_secs() + 1, rt_real_secs() + 1, &smp), RT_OK);
    assert_true(smp->cpu->core_count == (size_t)sysconf(_SC_NPROCESSORS_ONLN));
    assert_true(smp->memory->total_mib > 0);
    assert_true(smp->interval_secs > 0.0);
    assert_null(smp->process); /* no tree: no process */
    /* the tracker's own group: none when this process is in the root group everywhere; else
     * (when its hierarchies are mounted here) one of the paths /proc/self/cgroup gives */
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024];
    bool all_root = true, listed = false;
    while (f && fgets(line, sizeof line, f)) {
        char *ctrl = strchr(line, ':'), *path = ctrl ? strchr(ctrl + 1, ':') : NULL; /* ID:CTRL:PATH */
        if (!path || strncmp(ctrl + 1, "name=", 5) == 0)
            continue; /* a named hierarchy (name=systemd) is never read */
        path++;
        path[strcspn(path, "\n")] = '\0';
        all_root &= strcmp(path, "/") == 0;
        listed |= smp->cgroup && strcmp(path, smp->cgroup->path) == 0;
    }
    if (f)
        fclose(f);
    if (all_root)
        assert_null(smp->cgroup);
    if (smp->cgroup) {
        print_message("the tracker's own group: %s (%s)\n", smp->cgroup->path, smp->cgroup->version);
        assert_true(listed);
        assert_false(smp->cgroup->own || smp->cgroup->exclusive);
    }
    if (access("/proc/pressure/cpu", R_OK) == 0) { /* the machine's pressure, from the second reading on */
        assert_non_null(smp->pressure);
        assert_true(smp->pressure->cpu.some_total_usec != RT_NULL_U64);
        assert_true(smp->pressure->memory.some_pct >= 0.0 && smp->pressure->memory.some_pct <= 100.0);
    }
    rt_sampler_free(s);
    rt_sampler_free(NULL);
}

/* The clocks between readings (clocks.c): a wall clock set back or forward by over a second is
 * a step (the boot clock's progress is the time that passed, so a suspended machine's time is
 * no step); a reading over 4 intervals and 2 s more than one after the last is a gap, against
 * the caller's interval or, without one, the intervals seen. */
static void clock_steps_and_gaps(void **state)
{
    (void)state;
    rt_clocks c = {.nominal = 0.1};
    double step, gap;
    rt_clocks_read(&c, 100.0, 1000.0, 200.0, &step, &gap); /* the first: nothing to compare */
    assert_true(step == 0 && gap == 0);
    rt_clocks_read(&c, 100.1, 1000.1, 200.1, &step, &gap);
    assert_true(step == 0 && gap == 0);
    rt_clocks_read(&c, 100.2, 1000.2 - 3600.0, 200.2, &step, &gap); /* set back an hour */
    assert_true(fabs(step + 3600.0) < 1e-6 && gap == 0);
    rt_clocks_read(&c, 100.3, 1000.3, 200.3, &step, &gap); /* and forward again */
    assert_true(fabs(step - 3600.0) < 1e-6 && gap == 0);
    rt_clocks_read(&c, 100.4, 1000.4 + 0.9, 200.4, &step, &gap); /* under a second: NTP's slew, no step */
    assert_true(step == 0 && gap == 0);
    rt_clocks_read(&c, 120.4, 1021.3, 220.4, &step, &gap); /* stopped 20 s: a gap, no step */
    assert_true(step == 0 && fabs(gap - 20.0) < 1e-6);
    rt_clocks_read(&c, 120.5, 1021.4 + 30.0, 250.5, &step, &gap); /* suspended 30 s: a gap, no step */
    assert_true(step == 0 && fabs(gap - 30.1) < 1e-6);
    rt_clocks_read(&c, 122.5, 1053.4, 252.5, &step, &gap); /* 2 s late: under 2 s more than one, no gap */
    assert_true(step == 0 && gap == 0);
    /* without the caller's interval: the intervals seen tell it (1 s here), the first none */
    rt_clocks u = {0};
    rt_clocks_read(&u, 0, 0, NAN, &step, &gap);
    rt_clocks_read(&u, 10, 10, NAN, &step, &gap); /* the first interval: nothing seen yet */
    assert_true(gap == 0);
    for (int i = 1; i <= 20; i++)
        rt_clocks_read(&u, 10 + i, 10 + i, NAN, &step, &gap);
    assert_true(gap == 0 && step == 0);
    rt_clocks_read(&u, 40, 40, NAN, &step, &gap); /* 10 s after: a gap (boot NaN: the monotonic clock's) */
    assert_true(fabs(gap - 10.0) < 1e-6 && step == 0);
}

/* A zombie's end from the scheduler's clock (clocks.c): se.exec_start read in milliseconds; the
 * offset to the monotonic clock taken between the one before and the one now, so that steal
 * time spread over the gap does not move the end. */
static void zombie_end(void **state)
{
    (void)state;
    static const char sched[] = "sleep (4242, #threads: 1)\n-------------------------------------------\n"
                                "se.exec_start                                :      11828654.313226\n"
                                "se.vruntime                                  :         22552.031574\n";
    assert_true(fabs(rt_sched_exec_start(sched, sizeof sched - 1) - 11828.654313226) < 1e-9);
    assert_true(isnan(rt_sched_exec_start("se.vruntime : 1.0\n", 18)));
    assert_true(isnan(rt_sched_exec_start("se.exec_start_x : 1.0\n", 22)));
    /* the offset 4.0 s at t 100, 4.4 s at t 110 (0.4 s of steal in 10 s): the zombie's task
     * clock read 101 at its end, at t 105.0 (its offset then 4.2) */
    assert_true(fabs(rt_sched_end_mono(100.8, 4.0, 100.0, 4.4, 110.0) - 105.0) < 1e-9);
    assert_true(fabs(rt_sched_end_mono(100.8, NAN, NAN, 4.4, 110.0) - 105.2) < 1e-9); /* no earlier offset */
    assert_true(isnan(rt_sched_end_mono(NAN, 4.0, 100.0, 4.4, 110.0)));
    assert_true(isnan(rt_sched_end_mono(106.0, 4.0, 100.0, 4.4, 110.0))); /* after now: none */
    /* by CPU: CPU 1's clock 0.17 s off CPU 0's; the zombie last ran on CPU 1, the caller now on
     * CPU 0, whose offset grew 0.4 s in 10 s: CPU 1's grown alike */
    double off[2] = {4.0, 4.17}, at[2] = {100.0, 100.0};
    rt_sched_offsets o = {off, at, 2};
    assert_true(fabs(rt_sched_end_on(&o, 100.63, 1, 4.4, 0, 110.0) - 105.0) < 1e-9);
    assert_true(fabs(rt_sched_end_on(&o, 100.8, 0, 4.4, 0, 110.0) - 105.0) < 1e-9);
    off[1] = NAN; /* CPU 1 never seen: the caller's own */
    assert_true(fabs(rt_sched_end_on(&o, 100.8, 1, 4.4, 0, 110.0) - 105.0) < 1e-9);
    rt_sched_offsets_put(&o, 1, 4.2, 101.0);
    assert_true(off[1] == 4.2 && at[1] == 101.0);
    rt_sched_offsets_put(&o, 2, 4.2, 101.0); /* out of range: nothing */
    static const char stat[] = "4242 (a (b) c) Z 1 4242 4242 0 -1 4194316 93 0 0 0 0 0 0 0 20 0 1 0 1182865 0 0 "
                               "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    assert_int_equal(rt_stat_processor(stat, sizeof stat - 1), 3);
    assert_int_equal(rt_stat_processor("4242 (x) Z 1 2", 14), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clock_steps_and_gaps), cmocka_unit_test(zombie_end),
        cmocka_unit_test(same_state_gives_zero_rates), cmocka_unit_test(zero_elapsed_gives_null_rates),
        cmocka_unit_test(missing_sources_are_null_not_fatal), cmocka_unit_test(counters_backwards_never_negative),
        cmocka_unit_test(live_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
