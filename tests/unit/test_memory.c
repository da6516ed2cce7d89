/* test_memory.c - the sampler's memory part (sample/memory.c) through the replay API on a
 * hand-written meminfo: kB as MiB, used = total - MemAvailable (without MemAvailable: total -
 * free - buffers - (cached + SReclaimable)), and missing lines as null, never zero. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"
#include "sample/replay.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-mem-XXXXXX");
    unit_tmpdir(dir);
    unit_put(dir, "stat", "cpu  1 0 1 10 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* Writes meminfo, opens a sampler on dir and returns its second sample's memory figures. */
static const rt_memory *sample_of(const char *meminfo, rt_sampler **s)
{
    unit_put(dir, "meminfo", meminfo);
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = dir;
    o.sys_root = "/nonexistent";
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, s), RT_OK);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(*s, 1000.0, 1.7e9, &smp), RT_OK);
    return smp->memory;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void full_meminfo(void **state)
{
    (void)state;
    rt_sampler *s;
    const rt_memory *m = sample_of("MemTotal:       16777216 kB\n"
                                   "MemFree:         1048576 kB\n"
                                   "MemAvailable:    8388608 kB\n"
                                   "Buffers:          524288 kB\n"
                                   "Cached:          4194304 kB\n"
                                   "SwapCached:         1024 kB\n"
                                   "Active:          6291456 kB\n"
                                   "Inactive:        3145728 kB\n"
                                   "Active(anon):    1000000 kB\n"
                                   "SwapTotal:       2097152 kB\n"
                                   "SwapFree:        1572864 kB\n"
                                   "SReclaimable:     262144 kB\n"
                                   "SUnreclaim:       100000 kB\n"
                                   "HugePages_Total:       0\n",
                                   &s);
    NEAR(m->total_mib, 16384.0);
    NEAR(m->free_mib, 1024.0);
    NEAR(m->available_mib, 8192.0);
    NEAR(m->buffers_mib, 512.0);
    NEAR(m->cached_mib, 4096.0 + 256.0); /* Cached + SReclaimable, as free(1) */
    NEAR(m->active_mib, 6144.0);         /* not Active(anon) */
    NEAR(m->inactive_mib, 3072.0);
    NEAR(m->used_mib, 16384.0 - 8192.0); /* total - available, not total - free - buffers - cached */
    NEAR(m->used_pct, m->used_mib / 16384.0 * 100.0);
    NEAR(m->swap_total_mib, 2048.0);
    NEAR(m->swap_used_mib, 512.0);
    NEAR(m->swap_used_pct, 25.0);
    rt_sampler_free(s);
}

static void fractions_of_mib(void **state)
{
    (void)state;
    rt_sampler *s;
    const rt_memory *m = sample_of("MemTotal: 1000 kB\nMemFree: 1 kB\nBuffers: 0 kB\nCached: 3 kB\n", &s);
    NEAR(m->total_mib, 1000.0 / 1024.0);
    NEAR(m->free_mib, 1.0 / 1024.0);
    NEAR(m->cached_mib, 3.0 / 1024.0); /* no SReclaimable: Cached alone */
    NEAR(m->used_mib, 996.0 / 1024.0);
    rt_sampler_free(s);
}

static void missing_lines_are_null(void **state)
{
    (void)state;
    rt_sampler *s;
    /* no MemAvailable (kernels before 3.14), no swap lines, no Active/Inactive */
    const rt_memory *m =
        sample_of("MemTotal: 2048000 kB\nMemFree: 512000 kB\nBuffers: 64000 kB\nCached: 256000 kB\n", &s);
    NEAR(m->total_mib, 2000.0);
    assert_true(isnan(m->available_mib));
    assert_true(isnan(m->active_mib));
    assert_true(isnan(m->inactive_mib));
    assert_true(isnan(m->swap_total_mib));
    assert_true(isnan(m->swap_used_mib));
    assert_true(isnan(m->swap_used_pct));
    NEAR(m->used_mib, 2000.0 - 500.0 - 62.5 - 250.0);
    rt_sampler_free(s);

    /* SwapTotal without SwapFree: the used figures are null, the total known */
    m = sample_of("MemTotal: 1024 kB\nMemFree: 512 kB\nBuffers: 0 kB\nCached: 0 kB\nSwapTotal: 1024 kB\n", &s);
    NEAR(m->swap_total_mib, 1.0);
    assert_true(isnan(m->swap_used_mib));
    assert_true(isnan(m->swap_used_pct));
    rt_sampler_free(s);

    /* no swap configured: zero, known (not null), and 0% rather than 0/0 */
    m = sample_of("MemTotal: 1024 kB\nMemFree: 512 kB\nBuffers: 0 kB\nCached: 0 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
                  &s);
    assert_true(m->swap_total_mib == 0.0);
    assert_true(m->swap_used_mib == 0.0);
    assert_true(m->swap_used_pct == 0.0);
    rt_sampler_free(s);

    /* no MemAvailable and no Buffers: used cannot be computed, so it is null, not a guess */
    m = sample_of("MemTotal: 1024 kB\nMemFree: 512 kB\nCached: 0 kB\n", &s);
    assert_true(isnan(m->buffers_mib));
    assert_true(isnan(m->used_mib));
    assert_true(isnan(m->used_pct));
    NEAR(m->free_mib, 0.5);
    rt_sampler_free(s);

    /* no MemTotal: the file is not meminfo; everything null */
    m = sample_of("MemFree: 512 kB\nBuffers: 0 kB\nCached: 0 kB\n", &s);
    assert_true(isnan(m->total_mib));
    assert_true(isnan(m->free_mib));
    assert_true(isnan(m->used_mib));
    rt_sampler_free(s);
}

static void odd_values_clamped(void **state)
{
    (void)state;
    rt_sampler *s;
    /* caches larger than total - free (it happens mid-update): used 0, never negative;
     * swap free above its total: used 0 */
    const rt_memory *m = sample_of("MemTotal: 1024 kB\nMemFree: 512 kB\nBuffers: 256 kB\nCached: 512 kB\n"
                                   "SwapTotal: 100 kB\nSwapFree: 200 kB\n",
                                   &s);
    assert_true(m->used_mib == 0.0);
    assert_true(m->used_pct == 0.0);
    assert_true(m->swap_used_mib == 0.0);
    assert_true(m->swap_used_pct == 0.0);
    rt_sampler_free(s);
    /* MemAvailable above MemTotal (never seen, but a figure is no promise): used 0 */
    m = sample_of("MemTotal: 1024 kB\nMemFree: 512 kB\nMemAvailable: 2048 kB\n", &s);
    assert_true(m->used_mib == 0.0);
    assert_true(m->used_pct == 0.0);
    rt_sampler_free(s);
}

static void rewritten_between_samples(void **state)
{
    (void)state;
    rt_sampler *s;
    const rt_memory *m = sample_of("MemTotal: 2048 kB\nMemFree: 1024 kB\nBuffers: 0 kB\nCached: 0 kB\n", &s);
    NEAR(m->used_mib, 1.0);
    /* the kept-open file is re-read: a change in place shows in the next sample */
    unit_put(dir, "meminfo", "MemTotal: 2048 kB\nMemFree: 512 kB\nBuffers: 0 kB\nCached: 0 kB\n");
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    NEAR(smp->memory->used_mib, 1.5);
    NEAR(smp->memory->used_pct, 75.0);
    /* gone bad: null again, nothing kept from before */
    unit_put(dir, "meminfo", "garbage\n");
    rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp);
    assert_true(isnan(smp->memory->total_mib));
    assert_true(isnan(smp->memory->used_mib));
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(full_meminfo, setup, teardown),
        cmocka_unit_test_setup_teardown(fractions_of_mib, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_lines_are_null, setup, teardown),
        cmocka_unit_test_setup_teardown(odd_values_clamped, setup, teardown),
        cmocka_unit_test_setup_teardown(rewritten_between_samples, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
