/* test_gpu.c - the DRM fdinfo parser (amdgpu, i915, xe shapes; units; non-DRM files) and the
 * discovery of AMD and Intel cards in a fixture sys tree. NVML is covered end to end with the
 * fake library (tests/e2e/test_gpu.py). */
#include "unit.h"

#include <math.h>

#include "source/drm.h"

static const rt_drm_engine *eng(const rt_drm_client *c, const char *name)
{
    for (size_t i = 0; i < c->nengines; i++)
        if (strcmp(c->engines[i].name, name) == 0)
            return &c->engines[i];
    return NULL;
}

static void amdgpu_old_keys(void **state)
{
    (void)state;
    const char *t = "pos:\t0\nflags:\t02100002\nmnt_id:\t26\ndrm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\n"
                    "drm-client-id:\t18\ndrm-memory-vram:\t1024 KiB\ndrm-memory-gtt: \t2048 KiB\n"
                    "drm-engine-gfx:\t52012903 ns\ndrm-engine-compute:\t0 ns\n";
    rt_drm_client c;
    assert_int_equal(rt_drm_fdinfo_parse(t, strlen(t), &c), 0);
    assert_string_equal(c.driver, "amdgpu");
    assert_string_equal(c.pdev, "0000:03:00.0");
    assert_int_equal(c.client_id, 18);
    assert_true(c.has_vram);
    assert_int_equal(c.vram_bytes, 1024 * 1024); /* gtt is system memory: not counted */
    assert_int_equal(eng(&c, "gfx")->busy_ns, 52012903);
    assert_true(eng(&c, "gfx")->has_ns);
    assert_int_equal(eng(&c, "compute")->capacity, 1);
}

static void i915_capacity_and_regions(void **state)
{
    (void)state;
    const char *t = "drm-driver: i915\ndrm-pdev: 0000:00:02.0\ndrm-client-id: 7\ndrm-engine-render: 9000 ns\n"
                    "drm-engine-video: 500 ns\ndrm-engine-capacity-video: 2\ndrm-total-system0: 4 KiB\n"
                    "drm-total-local0: 2 MiB\ndrm-resident-local0: 1 MiB\n";
    rt_drm_client c;
    assert_int_equal(rt_drm_fdinfo_parse(t, strlen(t), &c), 0);
    assert_int_equal(eng(&c, "video")->capacity, 2);
    assert_int_equal(eng(&c, "video")->busy_ns, 500);
    assert_int_equal(c.vram_bytes, 1024 * 1024); /* resident wins over total */
}

static void xe_cycles(void **state)
{
    (void)state;
    const char *t = "drm-driver:\txe\ndrm-client-id:\t42\ndrm-pdev:\t0000:03:00.0\ndrm-cycles-rcs:\t28257900\n"
                    "drm-total-cycles-rcs:\t7655183225\ndrm-resident-vram0:\t300 KiB\ndrm-total-vram0:\t400 KiB\n"
                    "drm-engine-capacity-vcs: 2\n";
    rt_drm_client c;
    assert_int_equal(rt_drm_fdinfo_parse(t, strlen(t), &c), 0);
    const rt_drm_engine *e = eng(&c, "rcs");
    assert_non_null(e);
    assert_true(e->has_cycles && !e->has_ns);
    assert_int_equal(e->cycles, 28257900);
    assert_int_equal(e->total_cycles, 7655183225ull);
    assert_int_equal(c.vram_bytes, 300 * 1024);
}

static void not_drm(void **state)
{
    (void)state;
    rt_drm_client c;
    const char *plain = "pos:\t0\nflags:\t0100002\nmnt_id:\t30\nino:\t1234\n";
    assert_int_equal(rt_drm_fdinfo_parse(plain, strlen(plain), &c), -1);
    const char *no_id = "drm-driver: amdgpu\ndrm-engine-gfx: 1 ns\n";
    assert_int_equal(rt_drm_fdinfo_parse(no_id, strlen(no_id), &c), -1);
    const char *bytes = "drm-driver: x\ndrm-client-id: 1\ndrm-memory-vram: 4096\ndrm-engine-a-very-long-engine-name-x: 5 ns\n";
    assert_int_equal(rt_drm_fdinfo_parse(bytes, strlen(bytes), &c), 0);
    assert_int_equal(c.vram_bytes, 4096); /* no unit: bytes */
    assert_int_equal(c.nengines, 0);      /* a name too long to keep is left out */
    assert_int_equal(rt_drm_fdinfo_parse("", 0, &c), -1);
}

static void cards_from_sysfs(void **state)
{
    (void)state;
    char p[1024], s[1024];
    snprintf(p, sizeof p, "%s/gpu-amd-intel/proc", RT_FIXTURES);
    snprintf(s, sizeof s, "%s/gpu-amd-intel/sys", RT_FIXTURES);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, s), RT_OK);
    rt_gpus *g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    assert_non_null(g);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, 2);
    assert_string_equal(d[0].host_id, "0000:03:00.0");
    assert_string_equal(d[0].uuid, "a1b2c3d4e5f60718");
    assert_true(d[0].utilization_pct == 87.0);
    assert_true(fabs(d[0].vram_used_pct - 31.2576) < 0.01);
    assert_true(d[0].power_watts == 231.0);
    assert_string_equal(d[1].name, "Intel GPU 0x56a0");
    assert_true(isnan(d[1].utilization_pct));
    assert_true(d[1].vram_total_bytes == RT_NULL_U64);
    rt_gpus_close(g);
    rt_roots_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(amdgpu_old_keys), cmocka_unit_test(i915_capacity_and_regions), cmocka_unit_test(xe_cycles),
        cmocka_unit_test(not_drm),         cmocka_unit_test(cards_from_sysfs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
