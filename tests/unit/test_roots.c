/* test_roots.c - core/roots.c: the proc and sys roots opened as directory fds: given roots,
 * NULL or "" meaning the standard mounts, a missing proc root (an error) or sys root (not
 * one), a path too long, and no TRACKER_*_ROOT read from the environment. */
#include "unit.h"

#include <errno.h>

#include "core/core.h"
#include "resource_tracker.h"

static void given_roots(void **state)
{
    (void)state;
    char p[] = "/tmp/rt-roots-XXXXXX", s[] = "/tmp/rt-roots-XXXXXX";
    unit_tmpdir(p);
    unit_tmpdir(s);
    unit_put(p, "stat", "cpu  1 2 3 4\n");
    unit_put(s, "class/net/x", "1\n");
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, s), RT_OK);
    assert_true(r.proc_fd >= 0);
    assert_true(r.sys_fd >= 0);
    assert_string_equal(r.proc, p);
    assert_string_equal(r.sys, s);
    char buf[64];
    assert_int_equal(rt_read_at(r.proc_fd, "stat", buf, sizeof buf), 13); /* relative to the root */
    assert_int_equal(rt_read_line_at(r.sys_fd, "class/net/x", buf, sizeof buf), 1);
    rt_roots_close(&r);
    assert_int_equal(r.proc_fd, -1);
    assert_int_equal(r.sys_fd, -1);
    rt_roots_close(&r); /* twice: harmless */
    unit_rmtree(p);
    unit_rmtree(s);
}

static void null_and_empty_mean_standard(void **state)
{
    (void)state;
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, NULL, NULL), RT_OK);
    assert_string_equal(r.proc, "/proc");
    assert_string_equal(r.sys, "/sys");
    assert_true(r.proc_fd >= 0);
    int64_t v;
    char buf[4096];
    assert_true(rt_read_at(r.proc_fd, "stat", buf, sizeof buf) > 0);
    rt_roots_close(&r);
    assert_int_equal(rt_roots_open(&r, "", ""), RT_OK);
    assert_string_equal(r.proc, "/proc");
    assert_string_equal(r.sys, "/sys");
    assert_int_equal(rt_read_i64_at(r.proc_fd, "sys/kernel/pid_max", &v), 0);
    assert_true(v > 0);
    rt_roots_close(&r);
}

static void missing_roots(void **state)
{
    (void)state;
    char d[] = "/tmp/rt-roots-XXXXXX";
    unit_tmpdir(d);
    char gone[1100], file[1100];
    snprintf(gone, sizeof gone, "%s/gone", d);
    snprintf(file, sizeof file, "%s/file", d);
    unit_put(d, "file", "x");
    rt_roots r;
    /* no proc root: nothing to read, an error; no fd is left open (proc_fd holds -ENOENT,
     * not -1: any negative value reads as "not open" to rt_close and rt_open_at) */
    assert_int_equal(rt_roots_open(&r, gone, d), RT_ERR_NOT_FOUND);
    assert_true(r.proc_fd < 0);
    assert_int_equal(r.sys_fd, -1);
    rt_roots_close(&r);
    /* a file is not a root */
    assert_int_equal(rt_roots_open(&r, file, d), RT_ERR_NOT_FOUND);
    rt_roots_close(&r);
    /* no sys root: fine, sysfs details become null (sys_fd -1) */
    assert_int_equal(rt_roots_open(&r, d, gone), RT_OK);
    assert_true(r.proc_fd >= 0);
    assert_int_equal(r.sys_fd, -1);
    char buf[8];
    assert_int_equal(rt_read_at(r.sys_fd, "x", buf, sizeof buf), -ENOENT);
    rt_roots_close(&r);
    unit_rmtree(d);
}

static void path_too_long(void **state)
{
    (void)state;
    static char longp[5000];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, longp, NULL), RT_ERR_INVALID);
    assert_int_equal(r.proc_fd, -1);
    rt_roots_close(&r);
    assert_int_equal(rt_roots_open(&r, NULL, longp), RT_ERR_INVALID);
    assert_int_equal(r.sys_fd, -1);
    rt_roots_close(&r);
    /* 4095 characters still fit (then it is just missing) */
    longp[4095] = '\0';
    assert_int_equal(rt_roots_open(&r, longp, NULL), RT_ERR_NOT_FOUND);
    rt_roots_close(&r);
}

static void environment_not_read(void **state)
{
    (void)state;
    char d[] = "/tmp/rt-roots-XXXXXX";
    unit_tmpdir(d);
    /* a bogus root with a /proc/stat of 37 cores: taken only if the library read the variable */
    char stat[8192] = "cpu  1 0 1 10 0 0 0 0\n";
    for (int i = 0; i < 37; i++) {
        size_t n = strlen(stat);
        snprintf(stat + n, sizeof stat - n, "cpu%d 1 0 1 10 0 0 0 0\n", i);
    }
    unit_put(d, "stat", stat);
    setenv("TRACKER_PROC_ROOT", d, 1);
    setenv("TRACKER_SYS_ROOT", d, 1);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, NULL, NULL), RT_OK);
    assert_string_equal(r.proc, "/proc");
    assert_string_equal(r.sys, "/sys");
    rt_roots_close(&r);
    rt_sampler *s;
    assert_int_equal(rt_sampler_new(NULL, &s), RT_OK);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
    assert_int_equal(smp->cpu->core_count, (size_t)sysconf(_SC_NPROCESSORS_ONLN));
    rt_sampler_free(s);
    unsetenv("TRACKER_PROC_ROOT");
    unsetenv("TRACKER_SYS_ROOT");
    unit_rmtree(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(given_roots),   cmocka_unit_test(null_and_empty_mean_standard),
        cmocka_unit_test(missing_roots), cmocka_unit_test(path_too_long),
        cmocka_unit_test(environment_not_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
