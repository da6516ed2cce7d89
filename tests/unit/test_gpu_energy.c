/* test_gpu_energy.c - the GPUs' energy, throttled time and the tree's share (0.15): NVML's
 * energy counter as a running total checked exactly against the fake's (a failed reading, a
 * counter reset), the throttled seconds from the violation counters and else from the throttle
 * reasons times the time between readings (on a test clock), an old library without the calls
 * (NaN, no energy), the tree's share of a GPU (alone, by utilization, by VRAM, absent,
 * unknown), and the AMD/Intel cards: hwmon energy1_input from the fixture and from a sys tree
 * the test rewrites (growth, a reset, a failed read), their share through the front. */
#include "gpu_test.h"

#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "source/nvml.h"

static char cfg_path[64];

/* Writes the fake's config (FAKE_NVML_CONFIG) for the next calls. */
static void config(const char *text)
{
    write_text(cfg_path, text);
}

static int setup(void **state)
{
    (void)state;
    snprintf(cfg_path, sizeof cfg_path, "/tmp/rt-gpu-energy-XXXXXX");
    int fd = mkstemp(cfg_path);
    if (fd < 0)
        return -1;
    close(fd);
    return setenv("FAKE_NVML_CONFIG", cfg_path, 1);
}

static int teardown(void **state)
{
    (void)state;
    unlink(cfg_path);
    return 0;
}

/* Reads GPU 0 with its cumulative counters (a reading asked for them: rt_nvml_counters_due)
 * and returns whether it had an energy reading, in *j. */
static int read_energy(rt_nvml *nv, rt_gpu *g, double *j)
{
    rt_nvml_counters_due(nv);
    rt_nvml_read(nv, 0, g);
    *j = -1;
    return rt_nvml_energy(nv, 0, j);
}

/* Steps the clock by secs, writes the fake's energy counter (mJ) and power (W), and reads
 * GPU 0 (counters at their cadence); returns its energy (-1: none). */
static double energy_after(rt_nvml *nv, rt_clock *c, double secs, unsigned long long mj, unsigned w)
{
    char text[160];
    snprintf(text, sizeof text, "cost off\ngpu uuid=GPU-1 name=A energy_mj=%llu power_mw=%u\n", mj, w * 1000);
    config(text);
    rt_clock_test_step(c, secs);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    double j = -1;
    return rt_nvml_energy(nv, 0, &j) ? j : -1;
}

/* The energy counter (3.7-4.1 ms of CPU a call on an H200) is read at the first reading, every
 * RT_NVML_COUNTER_SECS after and at the reading after rt_nvml_counters_due; between, the
 * total grows by the power drawn times the time, and a reading of the counter makes it the
 * counter's: an estimate that ran ahead holds the total (it never goes back) and is taken off
 * the estimates that follow. */
static void energy_between_counter_readings(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(100.0);
    config("cost off\ngpu uuid=GPU-1 name=A energy_mj=1000000 power_mw=200000\n");
    char calls[] = "/tmp/rt-gpu-calls-XXXXXX";
    close(mkstemp(calls));
    setenv("FAKE_NVML_CALLS_OUT", calls, 1);
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, NULL, 5.0, 2.0, c);
    rt_gpu g;
    double j;
    rt_nvml_read(nv, 0, &g); /* the first reading: the counter's origin */
    assert_int_equal(rt_nvml_energy(nv, 0, &j), 1);
    assert_true(j == 0.0);
    /* 15/16 of 200 W x 10 s (the counter not read: the estimate stays short of it) */
    assert_true(energy_after(nv, c, 10, 1000000, 200) == 1875.0);
    assert_true(energy_after(nv, c, 10, 1000000, 200) == 3750.0);
    assert_true(energy_after(nv, c, 10, 7000000, 200) == 6000.0); /* 30 s: the counter's own */
    assert_true(energy_after(nv, c, 10, 7000000, 500) == 9281.25); /* 15/16 x (200 + 500) / 2 x 10 */
    assert_true(energy_after(nv, c, 10, 7000000, 500) == 13968.75);
    /* 30 s on, the counter says less (12750 J, half what the power said since the last
     * reading): the total stays, its surplus (1218.75 J) taken off the next estimates, which are
     * halved from now on */
    assert_true(energy_after(nv, c, 10, 13750000, 500) == 13968.75);
    assert_true(energy_after(nv, c, 1, 13750000, 500) == 13968.75); /* 234.375 J of it taken */
    assert_true(energy_after(nv, c, 6, 13750000, 500) == 14390.625); /* the other 984.375 J */
    assert_true(energy_after(nv, c, 1, 13750000, 500) == 14625.0);
    /* asked for: read now, whatever the cadence (a phase's mark, a run's end) */
    rt_nvml_counters_due(nv);
    assert_true(energy_after(nv, c, 1, 16000000, 500) == 15000.0);
    assert_true(energy_after(nv, c, 6, 16000000, 500) == 16406.25); /* 15/16 of 500 W x 6 s, halved */
    /* a reading below what the estimates gave: the total holds, never back (a run's last too) */
    rt_nvml_counters_due(nv);
    assert_true(energy_after(nv, c, 1, 17000000, 500) == 16406.25);
    rt_nvml_close(nv);
    /* the counter read at 0, 30, 60, 69 and 76 s: 5 of the 14 readings */
    FILE *f = fopen(calls, "r");
    assert_non_null(f);
    char name[32];
    long n = -1, energy = -1;
    while (fscanf(f, "%31s %ld", name, &n) == 2)
        if (!strcmp(name, "energy"))
            energy = n;
    fclose(f);
    unsetenv("FAKE_NVML_CALLS_OUT");
    unlink(calls);
    assert_int_equal(energy, 5);
    rt_clock_test_free(c);
}

static void energy_running_total(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A energy_mj=1000000\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 1);
    rt_gpu g;
    double j;
    assert_int_equal(rt_nvml_energy(nv, 0, &j), 0); /* nothing read yet */
    assert_int_equal(read_energy(nv, &g, &j), 1);
    assert_true(j == 0.0); /* the origin: the first reading */
    config("gpu uuid=GPU-1 name=A energy_mj=1250500\n");
    assert_int_equal(read_energy(nv, &g, &j), 1);
    assert_true(j == 250.5);
    config("gpu uuid=GPU-1 name=A energy_mj=1260000\nfail 0 999 energy\n");
    /* a failed reading of the counter: the total goes on by the power drawn times the time
     * (0 W here), the rest of the reading read */
    assert_int_equal(read_energy(nv, &g, &j), 2); /* 2: an estimate, not the counter's figure */
    assert_true(j == 250.5);
    assert_non_null(g.name);
    config("gpu uuid=GPU-1 name=A energy_mj=1300000\n");
    assert_int_equal(read_energy(nv, &g, &j), 1);
    assert_true(j == 300.0); /* from the last reading that gave it: nothing lost */
    config("gpu uuid=GPU-1 name=A energy_mj=500\n"); /* the driver reloaded: counts from 0 */
    assert_int_equal(read_energy(nv, &g, &j), 1);
    assert_true(j == 300.5);
    assert_int_equal(rt_nvml_energy(nv, 1, &j), 0); /* no such GPU */
    assert_int_equal(rt_nvml_energy(NULL, 0, &j), 0);
    rt_nvml_close(nv);
}

static void energy_unsupported(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A energy_mj=7 power_mw=1500\nunsupported 0 energy reasons violation\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    rt_gpu g;
    double j;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(read_energy(nv, &g, &j), 0);
        assert_true(g.power_watts == 1.5); /* what the caller multiplies by time instead */
        assert_true(isnan(g.power_throttled_secs) && isnan(g.thermal_throttled_secs));
    }
    rt_nvml_close(nv);
}

/* An old driver's library: no energy counter, throttle reasons or violation counters. */
static void minimal_library(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A energy_mj=1000 reasons=0x4 viol_power_ns=5\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_MIN_PATH, NULL);
    assert_true(rt_nvml_ready(nv));
    rt_gpu g;
    double j;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(read_energy(nv, &g, &j), 0);
        assert_true(isnan(g.power_throttled_secs) && isnan(g.thermal_throttled_secs));
        assert_true(isnan(g.power_watts));
    }
    rt_nvml_close(nv);
}

static void throttle_from_violation_counters(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(100.0);
    /* reasons say power capped all along: the counters win where the driver keeps them */
    config("gpu uuid=GPU-1 name=A reasons=0x24 viol_power_ns=2000000000 viol_thermal_ns=7\n");
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, NULL, 5.0, 2.0, c);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_true(g.power_throttled_secs == 0.0 && g.thermal_throttled_secs == 0.0);
    rt_clock_test_step(c, 10.0);
    config("gpu uuid=GPU-1 name=A reasons=0x24 viol_power_ns=3500000000 viol_thermal_ns=250000007\n");
    rt_nvml_read(nv, 0, &g); /* 10 s on: the counters are not read yet, their totals stay */
    assert_true(g.power_throttled_secs == 0.0 && g.thermal_throttled_secs == 0.0);
    rt_clock_test_step(c, 20.0);
    rt_nvml_read(nv, 0, &g); /* 30 s: read */
    assert_true(g.power_throttled_secs == 1.5 && g.thermal_throttled_secs == 0.25);
    rt_clock_test_step(c, 30.0);
    config("gpu uuid=GPU-1 name=A viol_power_ns=3500000000 viol_thermal_ns=250000007\nfail 0 999 violation\n");
    rt_nvml_read(nv, 0, &g); /* a failed reading keeps the total */
    assert_true(g.power_throttled_secs == 1.5 && g.thermal_throttled_secs == 0.25);
    rt_nvml_close(nv);
    rt_clock_test_free(c);
}

/* Sets the fake's throttle reasons, steps the clock by secs and reads GPU 0. */
static void reasons_then(rt_nvml *nv, rt_clock *c, const char *reasons, double secs, rt_gpu *g)
{
    char text[128];
    snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A reasons=%s\nunsupported 0 violation\n", reasons);
    config(text);
    rt_clock_test_step(c, secs);
    rt_nvml_read(nv, 0, g);
}

static void throttle_from_reasons(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(100.0);
    config("gpu uuid=GPU-1 name=A reasons=0x4\nunsupported 0 violation\n");
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, NULL, 5.0, 2.0, c);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_true(g.power_throttled_secs == 0.0 && g.thermal_throttled_secs == 0.0); /* no interval yet */
    reasons_then(nv, c, "0x4", 2.0, &g); /* SwPowerCap */
    assert_true(g.power_throttled_secs == 2.0 && g.thermal_throttled_secs == 0.0);
    reasons_then(nv, c, "0x40", 3.0, &g); /* HwThermalSlowdown */
    assert_true(g.power_throttled_secs == 2.0 && g.thermal_throttled_secs == 3.0);
    reasons_then(nv, c, "0x8", 1.0, &g); /* HwSlowdown alone: the cause untold, counted in neither */
    assert_true(g.power_throttled_secs == 2.0 && g.thermal_throttled_secs == 3.0);
    reasons_then(nv, c, "0x21", 0.5, &g); /* SwThermalSlowdown with GpuIdle */
    assert_true(g.power_throttled_secs == 2.0 && g.thermal_throttled_secs == 3.5);
    reasons_then(nv, c, "0x88", 0.25, &g); /* HwPowerBrakeSlowdown (with HwSlowdown) */
    assert_true(g.power_throttled_secs == 2.25 && g.thermal_throttled_secs == 3.5);
    reasons_then(nv, c, "0x0", 4.0, &g);
    assert_true(g.power_throttled_secs == 2.25 && g.thermal_throttled_secs == 3.5);
    rt_nvml_close(nv);
    rt_clock_test_free(c);
}

static bool only_me(void *user, int64_t pid)
{
    (void)user;
    return pid == (int64_t)getpid();
}

/* The tree's share of GPU 0 (the tree: this process) under config text. */
static double nvml_share(const char *text)
{
    config(text);
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_true(isnan(rt_nvml_tree_share(nv, 0))); /* no rt_nvml_tree yet */
    assert_true(rt_nvml_tree(nv, 0, only_me, NULL, &v, &v_ok, &on, &u));
    double share = rt_nvml_tree_share(nv, 0);
    assert_true(isnan(rt_nvml_tree_share(nv, 1)) && isnan(rt_nvml_tree_share(NULL, 0)));
    rt_nvml_close(nv);
    return share;
}

static void tree_share_nvml(void **state)
{
    (void)state;
    char text[512];
    int me = (int)getpid();
    snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 %d mem=3000 sm=30\n", me);
    assert_true(nvml_share(text) == 1.0); /* alone */
    snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 %d mem=0 sm=0\n", me);
    assert_true(nvml_share(text) == 1.0); /* alone, though idle and without VRAM */
    snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 %d mem=3000 sm=30\npid 0 1 mem=1000 sm=10\n", me);
    assert_true(nvml_share(text) == 0.75); /* by the per-process samples: 30 of 40 */
    snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 %d mem=1000 sm=0\npid 0 1 mem=3000 sm=0\n", me);
    assert_true(nvml_share(text) == 0.25); /* no sample above 0: by VRAM, 1000 of 4000 */
    snprintf(text, sizeof text,
             "gpu uuid=GPU-1 name=A\npid 0 %d mem=1000 sm=50\npid 0 1 mem=3000 sm=50\nunsupported 0 procutil\n", me);
    assert_true(nvml_share(text) == 0.25); /* no samples at all: by VRAM */
    assert_true(nvml_share("gpu uuid=GPU-1 name=A\npid 0 1 mem=3000 sm=50\n") == 0.0); /* absent */
    assert_true(nvml_share("gpu uuid=GPU-1 name=A\n") == 0.0); /* nobody there */
    snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 %d mem=1 sm=5\nunsupported 0 procs procutil\n", me);
    assert_true(isnan(nvml_share(text))); /* neither lists nor samples: unknown */
}

/* ---- AMD and Intel ---------------------------------------------------------------------------- */

static void fixture_energy_and_share(void **state)
{
    (void)state;
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_gpus *g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, 2);
    double j = -1;
    assert_int_equal(rt_gpus_energy(g, 0, &j), 0); /* amdgpu: no energy1_input, power1_average only */
    assert_true(d[0].power_watts == 231.0);
    assert_int_equal(rt_gpus_energy(g, 1, &j), 1); /* i915: the card's hwmon energy1_input */
    assert_true(j == 0.0);
    assert_true(isnan(d[1].power_watts)); /* i915's power1_max is a limit, not a draw */
    assert_int_equal(rt_gpus_energy(g, 2, &j), 0);
    assert_int_equal(rt_gpus_energy(NULL, 0, &j), 0);
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(d[i].power_throttled_secs) && isnan(d[i].thermal_throttled_secs));
    assert_true(isnan(rt_gpus_tree_share(g, 0))); /* before any rt_gpus_tree */
    const int64_t pids[] = {700, 701};
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_tree(g, only_me, NULL, pids, 2, 10.0, &u, &v, &used, 0, NULL);
    /* amdgpu, first sight of the clients (no interval): its VRAM over the card's, 1.5 of 20 GiB */
    assert_true(rt_gpus_tree_share(g, 0) == (double)(1536ull << 20) / 21474836480.0);
    assert_true(isnan(rt_gpus_tree_share(g, 1))); /* i915: no busy file, no VRAM figure */
    rt_gpus_tree(g, only_me, NULL, pids, 2, 12.0, &u, &v, &used, 0, NULL);
    assert_true(rt_gpus_tree_share(g, 0) == 0.0); /* an interval without engine time: none of 87% */
    assert_true(isnan(rt_gpus_tree_share(g, 2)) && isnan(rt_gpus_tree_share(NULL, 0)));
    rt_gpus_tree(g, only_me, NULL, NULL, 0, 14.0, &u, &v, &used, 0, NULL);
    assert_true(rt_gpus_tree_share(g, 0) == 0.0 && rt_gpus_tree_share(g, 1) == 0.0); /* no client: none */
    rt_gpus_close(g);
    rt_roots_close(&r);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A sys tree under a new temporary directory (written into dir) with one xe card, card0, whose
 * hwmon has energy1_input; its path into energy (cap 512). */
static void make_xe(char *dir, char *energy)
{
    assert_non_null(mkdtemp(dir));
    char p[512];
    const char *dirs[] = {"sys", "sys/class", "sys/class/drm", "sys/class/drm/card0", "sys/class/drm/card0/device",
                          "sys/class/drm/card0/device/hwmon", "sys/class/drm/card0/device/hwmon/hwmon4", "proc"};
    for (size_t i = 0; i < RT_ARRAY_LEN(dirs); i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(p, 0700), 0);
    }
    snprintf(p, sizeof p, "%s/sys/class/drm/card0/device/driver", dir);
    assert_int_equal(symlink("../../../../bus/pci/drivers/xe", p), 0);
    snprintf(p, sizeof p, "%s/sys/class/drm/card0/device/uevent", dir);
    write_text(p, "DRIVER=xe\nPCI_SLOT_NAME=0000:03:00.0\n");
    snprintf(p, sizeof p, "%s/sys/class/drm/card0/device/hwmon/hwmon4/name", dir);
    write_text(p, "xe\n");
    snprintf(energy, 512, "%s/sys/class/drm/card0/device/hwmon/hwmon4/energy1_input", dir);
    write_text(energy, "123456789\n");
}

/* Reads the cards and returns whether card 0 had an energy reading, in *j. */
static int card_energy(rt_gpus *g, double *j)
{
    size_t n;
    rt_gpus_read(g, &n);
    assert_int_equal(n, 1);
    *j = -1;
    return rt_gpus_energy(g, 0, j);
}

static void hwmon_energy_counter(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-gpu-xe-XXXXXX", energy[512], p[512], s[512];
    make_xe(dir, energy);
    snprintf(p, sizeof p, "%s/proc", dir);
    snprintf(s, sizeof s, "%s/sys", dir);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, s), RT_OK);
    rt_gpus *g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    double j;
    assert_int_equal(card_energy(g, &j), 1);
    assert_true(j == 0.0);
    write_text(energy, "223457289\n");
    assert_int_equal(card_energy(g, &j), 1);
    assert_true(j == 100.0005); /* 100000500 uJ */
    write_text(energy, "");
    assert_int_equal(card_energy(g, &j), 0); /* a failed reading */
    write_text(energy, "223458289\n");
    assert_int_equal(card_energy(g, &j), 1);
    assert_true(j == 100.0015);
    write_text(energy, "1000\n"); /* reset (the driver reloaded): counts again from 0 */
    assert_int_equal(card_energy(g, &j), 1);
    assert_true(j == 100.0025);
    rt_gpus_close(g);
    rt_roots_close(&r);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(energy_running_total, setup, teardown),
        cmocka_unit_test_setup_teardown(energy_between_counter_readings, setup, teardown),
        cmocka_unit_test_setup_teardown(energy_unsupported, setup, teardown),
        cmocka_unit_test_setup_teardown(minimal_library, setup, teardown),
        cmocka_unit_test_setup_teardown(throttle_from_violation_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(throttle_from_reasons, setup, teardown),
        cmocka_unit_test_setup_teardown(tree_share_nvml, setup, teardown),
        cmocka_unit_test(fixture_energy_and_share),
        cmocka_unit_test(hwmon_energy_counter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
