/* test_nvml.c - the NVML backend against the fake library (tests/stubs/fake_nvml.c): the
 * dlerror text kept for a missing library and for missing symbols, a failed start, every
 * field of a device, more than 64 GPUs and more than 64 processes of the tree, a lost GPU. */
#include "gpu_test.h"

#include <math.h>
#include <unistd.h>

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
    snprintf(cfg_path, sizeof cfg_path, "/tmp/rt-nvml-XXXXXX");
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

static void missing_library(void **state)
{
    (void)state;
    rt_nvml *nv = rt_nvml_open("/nonexistent/libnvidia-ml.so.1", NULL);
    assert_non_null(nv);
    assert_false(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    /* dlopen's own words, kept after the call */
    assert_non_null(strstr(rt_nvml_error(nv), "/nonexistent/libnvidia-ml.so.1"));
    assert_non_null(strstr(rt_nvml_error(nv), "No such file"));
    rt_nvml_close(nv);
    rt_nvml_close(NULL);
}

static void missing_entry_point(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_NOINIT_PATH, NULL);
    assert_false(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    /* the newest name is the one reported: neither nvmlInit_v2 nor nvmlInit is there */
    assert_non_null(strstr(rt_nvml_error(nv), "undefined symbol: nvmlInit_v2"));
    rt_nvml_close(nv);
}

static bool everyone(void *user, int64_t pid)
{
    (void)user;
    (void)pid;
    return true;
}

static void missing_optional_symbols(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=NVIDIA_A100 bus=00000000:3B:00.0 util=40 mem_total=1000 mem_used=250\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_MIN_PATH, NULL);
    assert_true(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 1);
    /* works without them, and says which one it missed last */
    assert_non_null(strstr(rt_nvml_error(nv), "undefined symbol: nvmlDevice"));
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_string_equal(g.name, "NVIDIA A100");
    assert_null(g.uuid);
    assert_null(g.host_id);
    assert_true(g.vram_total_bytes == 1000 && g.vram_used_pct == 25.0);
    assert_true(isnan(g.utilization_pct) && isnan(g.temperature_celsius) && isnan(g.power_watts));
    assert_int_equal(g.detail_count, 1);
    assert_string_equal(gpu_detail(&g, "driver"), "nvidia");
    uint64_t v = 7;
    bool v_ok = true, on = true;
    double u = 0;
    assert_true(rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
    assert_false(v_ok); /* no process lists */
    assert_true(isnan(u)); /* no per-process samples */
    rt_nvml_close(nv);
}

static void init_fails(void **state)
{
    (void)state;
    config("init_fail\ngpu uuid=GPU-1 name=A\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_false(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    assert_non_null(strstr(rt_nvml_error(nv), "nvmlInit failed (error 999)"));
    rt_nvml_close(nv);
}

static void every_field(void **state)
{
    (void)state;
    config("gpu uuid=GPU-11 name=NVIDIA_A100-SXM4-80GB bus=00000000:3B:00.0 util=40 mem_total=85899345920 "
           "mem_used=1073741824 temp=55 power_mw=210500 clock=1410 cores=6912 cc=8.0 serial=1324 "
           "power_limit_mw=400000\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_true(rt_nvml_ready(nv));
    assert_string_equal(rt_nvml_error(nv), "");
    assert_int_equal(rt_nvml_count(nv), 1);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_string_equal(g.uuid, "GPU-11");
    assert_string_equal(g.name, "NVIDIA A100-SXM4-80GB");
    assert_string_equal(g.host_id, "0000:3b:00.0");
    assert_string_equal(g.device_type, "GPU");
    assert_true(g.utilization_pct == 40 && g.vram_used_pct == 1.25 && g.temperature_celsius == 55);
    assert_true(g.power_watts == 210.5 && g.frequency_mhz == 1410 && g.core_count == 6912);
    const char *want[][2] = {{"driver", "nvidia"},         {"driver_version", "550.54.15"},
                             {"cuda_driver_version", "12.4"}, {"pci_device_id", "0x20b010de"},
                             {"pci_subsystem_id", "0x134f10de"}, {"compute_capability", "8.0"},
                             {"serial", "1324"},            {"power_limit_watts", "400.0"},
                             {"max_sm_clock_mhz", "1410"},  {"max_memory_clock_mhz", "1593"}};
    assert_int_equal(g.detail_count, RT_ARRAY_LEN(want));
    for (size_t i = 0; i < RT_ARRAY_LEN(want); i++) {
        assert_string_equal(g.detail[i].key, want[i][0]);
        assert_string_equal(g.detail[i].value, want[i][1]);
    }
    rt_nvml_close(nv);
}

static void seventy_gpus(void **state)
{
    (void)state;
    config("gpus 70 name=G util=5 mem_total=100 mem_used=1\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 70);
    for (size_t i = 0; i < 70; i++) {
        rt_gpu g;
        rt_nvml_read(nv, i, &g);
        char uuid[32], bus[32];
        snprintf(uuid, sizeof uuid, "GPU-fake-%zu", i);
        snprintf(bus, sizeof bus, "0000:%02zx:00.0", i);
        assert_string_equal(g.uuid, uuid);
        assert_string_equal(g.host_id, bus);
        assert_true(g.utilization_pct == 5);
    }
    rt_nvml_close(nv);
}

/* The tree: pids 1000..1089. */
static bool in_tree(void *user, int64_t pid)
{
    (void)user;
    return pid >= 1000 && pid < 1090;
}

static void more_than_64_processes(void **state)
{
    (void)state;
    static char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 1 mem=999 sm=20\n");
    for (int i = 0; i < 90; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "pid 0 %d mem=1 sm=1\n", 1000 + i);
    assert_true(n < sizeof text);
    config(text);
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 1);
    usleep(2000); /* the fake stamps its samples now: after the handle's start */
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_true(rt_nvml_tree(nv, 0, in_tree, NULL, &v, &v_ok, &on, &u));
    assert_true(v_ok && on);
    /* each of the 90 once, though both lists name them all; pid 1 is not the tree's */
    assert_int_equal(v, 90);
    assert_true(u == 90);
    rt_nvml_close(nv);
}

static void lost_gpu(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A util=10\ngpu uuid=GPU-2 name=B util=20\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 2);
    config("gpu uuid=GPU-1 name=A util=10\ngpu uuid=GPU-2 name=B util=20\nlost 1\n");
    rt_gpu g;
    rt_nvml_read(nv, 1, &g);
    assert_string_equal(g.uuid, "GPU-2"); /* still listed, with what is known */
    assert_true(isnan(g.utilization_pct) && g.vram_total_bytes == RT_NULL_U64);
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_false(rt_nvml_tree(nv, 1, everyone, NULL, &v, &v_ok, &on, &u));
    rt_nvml_read(nv, 0, &g);
    assert_true(g.utilization_pct == 10);
    rt_nvml_close(nv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_library),  cmocka_unit_test(missing_entry_point),
        cmocka_unit_test(missing_optional_symbols), cmocka_unit_test(init_fails),
        cmocka_unit_test(every_field),      cmocka_unit_test(seventy_gpus),
        cmocka_unit_test(more_than_64_processes), cmocka_unit_test(lost_gpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
