/* test_pidmap.c - the pid -> index map: put, get, replace, delete with probe chains kept
 * whole (colliding and wrapping pids), growth past half full, and bad keys (none, negative,
 * past 32 bits). */
#include "unit.h"

#include "core/pidmap.h"

static void basics(void **state)
{
    (void)state;
    rt_pidmap m;
    assert_int_equal(rt_pidmap_init(&m, 4), 0);
    assert_int_equal(m.nslots, 16);
    assert_true(rt_pidmap_get(&m, 42) == RT_PIDMAP_NONE);
    assert_int_equal(rt_pidmap_put(&m, 42, 7), 0);
    assert_int_equal(rt_pidmap_get(&m, 42), 7);
    assert_int_equal(rt_pidmap_put(&m, 42, 9), 0); /* replaced, not added */
    assert_int_equal(m.count, 1);
    assert_int_equal(rt_pidmap_get(&m, 42), 9);
    assert_int_equal(rt_pidmap_put(&m, 0, 1), -1);
    assert_int_equal(rt_pidmap_put(&m, -5, 1), -1);
    assert_true(rt_pidmap_get(&m, 0) == RT_PIDMAP_NONE);
    /* 8-byte slots: a pid or a value past 32 bits is refused (pid_max is at most 2^22) */
    assert_int_equal(rt_pidmap_put(&m, (int64_t)INT32_MAX + 1, 1), -1);
    assert_int_equal(rt_pidmap_put(&m, 44, (size_t)UINT32_MAX + 1), -1);
    assert_true(rt_pidmap_get(&m, (int64_t)INT32_MAX + 1) == RT_PIDMAP_NONE);
    assert_int_equal(rt_pidmap_put(&m, INT32_MAX, UINT32_MAX), 0);
    assert_int_equal(rt_pidmap_get(&m, INT32_MAX), UINT32_MAX);
    rt_pidmap_del(&m, INT32_MAX);
    assert_int_equal(m.count, 1);
    rt_pidmap_del(&m, 43); /* not there: nothing happens */
    rt_pidmap_del(&m, 42);
    assert_true(rt_pidmap_get(&m, 42) == RT_PIDMAP_NONE);
    assert_int_equal(m.count, 0);
    rt_pidmap_free(&m);
}

/* Many keys in a small table (collisions and wrap-around), half deleted in a scattered
 * order: every survivor is still found, every deleted one is not. */
static void chains_survive_deletes(void **state)
{
    (void)state;
    rt_pidmap m;
    assert_int_equal(rt_pidmap_init(&m, 16), 0);
    enum { N = 5000 };
    for (int64_t pid = 1; pid <= N; pid++)
        assert_int_equal(rt_pidmap_put(&m, pid * 7919 % 400009 + 1, (size_t)pid), 0);
    assert_int_equal(m.count, N);
    assert_true(m.nslots >= 2 * N); /* grew, never more than half full */
    for (int64_t pid = 1; pid <= N; pid += 2)
        rt_pidmap_del(&m, pid * 7919 % 400009 + 1);
    for (int64_t pid = 1; pid <= N; pid++) {
        size_t v = rt_pidmap_get(&m, pid * 7919 % 400009 + 1);
        if (pid % 2)
            assert_true(v == RT_PIDMAP_NONE);
        else
            assert_int_equal(v, (size_t)pid);
    }
    assert_int_equal(m.count, N / 2);
    rt_pidmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(basics),
        cmocka_unit_test(chains_survive_deletes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
