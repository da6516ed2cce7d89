/* test_drm.c - the DRM backend: the fdinfo parser (amdgpu, i915, xe shapes; units; non-DRM
 * files), AMD and Intel cards found in the fixture sys tree (tests/fixtures/gpu-amd-intel) and
 * their readings, a process's DRM clients and the tree's figures per card. */
#include "gpu_test.h"

#include <errno.h>
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
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_drm *d = rt_drm_open(&r);
    assert_non_null(d);
    /* card0 (amdgpu) and card1 (i915); not the connector, the render node or virtio's card2 */
    assert_int_equal(rt_drm_count(d), 2);
    rt_gpu g[2];
    rt_drm_read(d, 0, &g[0]);
    rt_drm_read(d, 1, &g[1]);
    assert_string_equal(g[0].host_id, "0000:03:00.0");
    assert_string_equal(g[0].uuid, "a1b2c3d4e5f60718");
    assert_string_equal(g[0].device_type, "GPU");
    assert_string_equal(gpu_detail(&g[0], "driver"), "amdgpu");
    assert_string_equal(gpu_detail(&g[0], "card"), "card0");
    assert_true(g[0].utilization_pct == 87.0);
    assert_true(fabs(g[0].vram_used_pct - 31.2576) < 0.01);
    assert_true(g[0].power_watts == 231.0);
    assert_true(g[0].core_count == RT_NULL_I64);
    assert_string_equal(g[1].name, "Intel GPU 0x56a0");
    assert_string_equal(g[1].host_id, "0000:04:00.0"); /* from uevent's PCI_SLOT_NAME */
    assert_string_equal(gpu_detail(&g[1], "driver"), "i915");
    assert_null(g[1].uuid);
    assert_true(isnan(g[1].utilization_pct));
    assert_true(g[1].vram_total_bytes == RT_NULL_U64);
    rt_drm_close(d);
    rt_roots_close(&r);
}

static void no_sys_root(void **state)
{
    (void)state;
    rt_roots r;
    gpu_fixture_roots(&r, false);
    rt_drm *d = rt_drm_open(&r);
    assert_non_null(d);
    assert_int_equal(rt_drm_count(d), 0);
    rt_drm_tree(d, NULL, 0, 1.0); /* nothing to do, nothing to fail */
    rt_drm_close(d);
    rt_roots_close(&r);
}

static void count_client(void *user, const rt_drm_client *c)
{
    uint64_t *sum = user;
    *sum += c->client_id;
}

static void clients_of_a_pid(void **state)
{
    (void)state;
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_drm *d = rt_drm_open(&r);
    uint64_t ids = 0;
    /* fds 3 and 4 (one amdgpu client, dup'd), 5 (i915); 6 is a plain file */
    assert_int_equal(rt_drm_pid_clients(d, 700, count_client, &ids), 3);
    assert_int_equal(ids, 12 + 12 + 3);
    ids = 0;
    assert_int_equal(rt_drm_pid_clients(d, 701, count_client, &ids), 1);
    assert_int_equal(ids, 13);
    assert_int_equal(rt_drm_pid_clients(d, 99999, count_client, &ids), -ENOENT);
    rt_drm_close(d);
    rt_roots_close(&r);
}

static void tree_per_card(void **state)
{
    (void)state;
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_drm *d = rt_drm_open(&r);
    const int64_t pids[] = {700, 701};
    for (int round = 0; round < 2; round++) { /* the counters do not move: no time on the engines */
        rt_drm_tree(d, pids, 2, 100.0 + round);
        double u;
        uint64_t v;
        bool on;
        rt_drm_tree_card(d, 0, &u, &v, &on);
        assert_true(u == 0 && on);
        assert_int_equal(v, (1024 + 512) * 1024 * 1024ull); /* client 12 counted once */
        rt_drm_tree_card(d, 1, &u, &v, &on);
        assert_true(u == 0 && on);
        assert_int_equal(v, 256 * 1024 * 1024ull);
    }
    rt_drm_tree(d, pids, 1, 102.0); /* 701 gone */
    double u;
    uint64_t v;
    bool on;
    rt_drm_tree_card(d, 0, &u, &v, &on);
    assert_int_equal(v, 1024 * 1024 * 1024ull);
    rt_drm_tree(d, NULL, 0, 103.0);
    rt_drm_tree_card(d, 1, &u, &v, &on);
    assert_true(u == 0 && v == 0 && !on);
    rt_drm_close(d);
    rt_roots_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(amdgpu_old_keys), cmocka_unit_test(i915_capacity_and_regions),
        cmocka_unit_test(xe_cycles),       cmocka_unit_test(not_drm),
        cmocka_unit_test(cards_from_sysfs), cmocka_unit_test(no_sys_root),
        cmocka_unit_test(clients_of_a_pid), cmocka_unit_test(tree_per_card),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
