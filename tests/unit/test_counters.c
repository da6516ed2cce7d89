/* test_counters.c - the counters read now (rt_counters, sample/counters*.c): a process tree
 * and a machine from fixture trees (every figure against the files by hand), and the kernel's
 * own accounting on forked children: CPU seconds against times(2) while a child runs, as a
 * zombie and after it is reaped; bytes written and fsynced against their count; GPUs through
 * the fake NVML library. */
#include "unit.h"

#include <fcntl.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resource_tracker.h"

static rt_counters *open_on(const char *proc, const char *sys)
{
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = sys;
    o.gpu_off = 1;
    rt_counters *c = NULL;
    assert_int_equal(rt_counters_new(&o, &c), RT_OK);
    assert_non_null(c);
    return c;
}

static double tck(void)
{
    return (double)sysconf(_SC_CLK_TCK);
}

/* The proctree fixture: 100 -> 101 (thread 105 -> 103), 102 -> 104 (a zombie, no rollup),
 * 106 (listed, gone). */
static void test_tree_fixture(void **state)
{
    (void)state;
    rt_counters *c = open_on(RT_FIXTURES "/proctree/proc", "/nonexistent");
    rt_tree_counters t = {.struct_size = sizeof t};
    assert_int_equal(rt_counters_tree(c, 100, 1, &t), RT_OK);
    assert_int_equal(t.pid, 100);
    assert_int_equal(t.child_count, 4);                          /* 101 102 103 104 */
    assert_true(fabs(t.utime_secs - (210 + 300 + 8 + 50 + 4) / tck()) < 1e-9); /* utime+cutime */
    assert_true(fabs(t.stime_secs - (105 + 30 + 4 + 10 + 2) / tck()) < 1e-9);
    assert_true(fabs(t.pss_mib - (2000 + 10000 + 600 + 4000) / 1024.0) < 1e-9);
    assert_int_equal(t.read_bytes, 100000 + 101000 + 102000 + 103000 + 104000);
    assert_int_equal(t.write_bytes, 1000 + 1010 + 1020 + 1030 + 1040);
    assert_int_equal(t.unread_count, 1); /* 106 */
    assert_true(isnan(t.gpu_usage) && isnan(t.gpu_vram_mib) && t.gpu_utilized == RT_NULL_I64);
    assert_true(t.timestamp_secs > 1.5e9);

    /* the root alone: its own times, not what it reaped */
    rt_tree_counters r = {.struct_size = sizeof r};
    assert_int_equal(rt_counters_tree(c, 100, 0, &r), RT_OK);
    assert_int_equal(r.child_count, RT_NULL_I64);
    assert_true(fabs(r.utime_secs - 10 / tck()) < 1e-9 && fabs(r.stime_secs - 5 / tck()) < 1e-9);
    assert_true(fabs(r.pss_mib - 2000 / 1024.0) < 1e-9);
    assert_int_equal(r.read_bytes, 100000);
    assert_int_equal(r.unread_count, 0);

    /* a subtree; the same call again gives the same (nothing is kept between calls) */
    for (int k = 0; k < 2; k++) {
        rt_tree_counters s = {.struct_size = sizeof s};
        assert_int_equal(rt_counters_tree(c, 102, 1, &s), RT_OK);
        assert_int_equal(s.child_count, 1);
        assert_true(fabs(s.utime_secs - (8 + 4) / tck()) < 1e-9);
        assert_true(fabs(s.pss_mib - 600 / 1024.0) < 1e-9); /* the zombie holds none */
    }

    /* not there: the timestamp and pid, the rest null */
    rt_tree_counters g = {.struct_size = sizeof g};
    assert_int_equal(rt_counters_tree(c, 999, 1, &g), RT_ERR_NOT_FOUND);
    assert_int_equal(g.pid, 999);
    assert_true(isnan(g.utime_secs) && isnan(g.pss_mib) && g.child_count == RT_NULL_I64);
    assert_int_equal(g.read_bytes, RT_NULL_U64);
    assert_int_equal(rt_counters_tree(c, 0, 1, &g), RT_ERR_INVALID);

    /* a caller compiled against a shorter struct: no byte past its size is written */
    struct {
        rt_tree_counters head;
        char canary[16];
    } small;
    memset(&small, 0x5a, sizeof small);
    small.head.struct_size = offsetof(rt_tree_counters, pss_mib);
    assert_int_equal(rt_counters_tree(c, 100, 1, &small.head), RT_OK);
    assert_int_equal(small.head.child_count, 4);
    const unsigned char *p = (const unsigned char *)&small.head + offsetof(rt_tree_counters, pss_mib);
    for (size_t i = 0; i < sizeof small - offsetof(rt_tree_counters, pss_mib); i++)
        assert_int_equal(p[i], 0x5a);
    rt_counters_free(c);
}

/* A listed child whose stat names a parent outside the tree (its pid was taken by another
 * process after it went, or it was reparented away) is not the tree's; nor its children. */
static void test_tree_foreign_pid(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/rt-counters-XXXXXX");
    unit_tmpdir(dir);
    char proc[128];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    unit_copy_fixture("proctree/proc", proc);
    unit_put(proc, "101/stat",
             "101 (other) S 7 101 101 0 -1 4194560 100 0 0 0 300 30 0 0 20 0 2 0 9999 12345678 5000 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
    rt_counters *c = open_on(proc, "/nonexistent");
    rt_tree_counters t = {.struct_size = sizeof t};
    assert_int_equal(rt_counters_tree(c, 100, 1, &t), RT_OK);
    assert_int_equal(t.child_count, 2); /* 102 and its zombie 104: not 101 nor its child 103 */
    assert_true(fabs(t.utime_secs - (210 + 8 + 4) / tck()) < 1e-9);
    assert_true(fabs(t.pss_mib - (2000 + 600) / 1024.0) < 1e-9);
    assert_int_equal(t.read_bytes, 100000 + 102000 + 104000);
    rt_counters_free(c);
    unit_rmtree(dir);
}

/* The vm-virtio machine: /proc/stat, meminfo, diskstats, net/dev by hand. */
static void test_system_fixture(void **state)
{
    (void)state;
    rt_counters *c = open_on(RT_FIXTURES "/vm-virtio/proc", RT_FIXTURES "/vm-virtio/sys");
    const rt_system_counters *s = NULL;
    assert_int_equal(rt_counters_system(c, &s), RT_OK);
    assert_non_null(s);
    assert_int_equal(s->pid_count, 0); /* no process directories in the fixture */
    assert_true(fabs(s->utime_secs - 7327 / tck()) < 1e-9);
    assert_true(fabs(s->stime_secs - 3030 / tck()) < 1e-9);
    assert_true(fabs(s->memory_free_mib - 24425208 / 1024.0) < 1e-9);
    assert_true(fabs(s->memory_used_mib - (24684092 - 24389020) / 1024.0) < 1e-9);
    assert_true(fabs(s->memory_buffers_mib - 1776 / 1024.0) < 1e-9);
    assert_true(fabs(s->memory_cached_mib - (124888 + 50700) / 1024.0) < 1e-9);
    assert_true(fabs(s->memory_active_mib - 64316 / 1024.0) < 1e-9);
    assert_true(fabs(s->memory_inactive_mib - 65260 / 1024.0) < 1e-9);
    assert_int_equal(s->disk_count, 1); /* vda; loop and zram are not physical disks */
    assert_string_equal(s->disks[0]->device, "vda");
    assert_int_equal(s->disks[0]->read_bytes, 3187930ull * 512);
    assert_int_equal(s->disks[0]->write_bytes, 1368552ull * 512);
    assert_int_equal(s->net_rx_bytes, 21463139); /* eth0 (ifb0, ifb1 at 0), lo left out */
    assert_int_equal(s->net_tx_bytes, 29952);
    assert_true(isnan(s->gpu_usage) && s->gpu_utilized == RT_NULL_I64);
    for (size_t i = 0; i < s->mount_count; i++) {
        const rt_mount_space *m = s->mounts[i];
        assert_non_null(m->mount_point);
        if (m->total_bytes != RT_NULL_U64)
            assert_int_equal(m->used_bytes + m->free_bytes, m->total_bytes);
    }
    /* again: the same figures, the same struct */
    const rt_system_counters *s2 = NULL;
    assert_int_equal(rt_counters_system(c, &s2), RT_OK);
    assert_ptr_equal(s, s2);
    assert_int_equal(s2->disk_count, 1);
    rt_counters_free(c);

    rt_counters *bad = NULL;
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    o.proc_root = "/nonexistent/proc";
    assert_int_equal(rt_counters_new(&o, &bad), RT_ERR_NOT_FOUND);
    assert_null(bad);
    o.struct_size = 1;
    assert_int_equal(rt_counters_new(&o, &bad), RT_ERR_INVALID);
    rt_counters_free(NULL);
}

static volatile unsigned long sink; /* keeps the burning loop from being optimized away */

/* Burns about secs of CPU in user mode. */
static void burn(double secs)
{
    struct tms t0, t;
    times(&t0);
    do {
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i;
        times(&t);
    } while ((double)(t.tms_utime + t.tms_stime - t0.tms_utime - t0.tms_stime) / tck() < secs);
}

/* This process's CPU seconds as times(2) counts them: own plus reaped children. */
static double times_secs(void)
{
    struct tms t;
    times(&t);
    return (double)(t.tms_utime + t.tms_stime + t.tms_cutime + t.tms_cstime) / tck();
}

static double tree_secs(rt_counters *c, int64_t *children)
{
    rt_tree_counters t = {.struct_size = sizeof t};
    assert_int_equal(rt_counters_tree(c, getpid(), 1, &t), RT_OK);
    if (children)
        *children = t.child_count;
    return t.utime_secs + t.stime_secs;
}

/* A child that burns CPU: seen while it runs, as a zombie, and after it is reaped; the tree's
 * total then equals times(2)'s own + children to a tick or two (the readings are moments apart). */
static void test_tree_kernel_cpu(void **state)
{
    (void)state;
    rt_counters *c = open_on(NULL, NULL);
    double before = tree_secs(c, NULL);
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        burn(0.3);
        _exit(0); /* a zombie until the parent reaps it */
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0); /* exited, not reaped */
    int64_t kids = -1;
    double zombie = tree_secs(c, &kids);
    assert_int_equal(kids, 1); /* the zombie is still a descendant */
    assert_true(zombie - before >= 0.29);
    struct rusage ru;
    int st;
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    double child = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    double reaped = tree_secs(c, &kids);
    assert_int_equal(kids, 0);
    double kernel = times_secs();
    assert_true(fabs(reaped - kernel) <= 2.5 / tck()); /* the same counters, moments apart */
    assert_true(fabs(zombie - before - child) <= 0.05); /* the zombie counted once, not twice */
    assert_true(fabs(reaped - zombie) <= 0.05);
    close(go[0]);
    close(go[1]);
    rt_counters_free(c);
}

/* A live child that runs CPU and writes a file with fsync: its bytes and its time are in the
 * tree while it runs (read before it exits), and stay after it is reaped. */
static void test_tree_kernel_io(void **state)
{
    (void)state;
    char path[] = "rt-counters-io-XXXXXX"; /* in the build directory: storage, not tmpfs */
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    rt_counters *c = open_on(NULL, NULL);
    rt_tree_counters t0 = {.struct_size = sizeof t0};
    assert_int_equal(rt_counters_tree(c, getpid(), 1, &t0), RT_OK);
    int done[2], hold[2];
    assert_int_equal(pipe(done), 0);
    assert_int_equal(pipe(hold), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static char block[1 << 20];
        memset(block, 7, sizeof block);
        int ok = write(fd, block, sizeof block) == (ssize_t)sizeof block && fsync(fd) == 0;
        char b = ok ? 'y' : 'n';
        (void)!write(done[1], &b, 1);
        (void)!read(hold[0], &b, 1); /* stays alive until the parent has read the tree */
        _exit(0);
    }
    char b = 0;
    assert_int_equal(read(done[0], &b, 1), 1);
    assert_int_equal(b, 'y');
    rt_tree_counters t1 = {.struct_size = sizeof t1};
    assert_int_equal(rt_counters_tree(c, getpid(), 1, &t1), RT_OK);
    assert_int_equal(t1.child_count, 1);
    assert_true(t1.write_bytes - t0.write_bytes >= (1u << 20));
    assert_true(t1.pss_mib > 0);
    assert_int_equal(write(hold[1], "x", 1), 1);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    rt_tree_counters t2 = {.struct_size = sizeof t2};
    assert_int_equal(rt_counters_tree(c, getpid(), 1, &t2), RT_OK);
    assert_true(t2.write_bytes >= t1.write_bytes); /* reaped: folded into this process's io */
    assert_int_equal(t2.child_count, 0);
    close(fd);
    unlink(path);
    for (int i = 0; i < 2; i++) {
        close(done[i]);
        close(hold[i]);
    }
    rt_counters_free(c);
}

/* GPUs through the fake NVML library: the machine's busy GPUs, VRAM and the GPUs in use, and
 * this process's share. */
static void test_gpus_fake_nvml(void **state)
{
    (void)state;
    char cfg[] = "/tmp/rt-counters-nvml-XXXXXX";
    int fd = mkstemp(cfg);
    assert_true(fd >= 0);
    char text[256];
    int n = snprintf(text, sizeof text,
                     "gpu util=50 mem_total=%llu mem_used=%llu\ngpu util=0 mem_total=%llu mem_used=%llu\n"
                     "pid 0 %d mem=%llu sm=30\n",
                     1000ull << 20, 300ull << 20, 1000ull << 20, 100ull << 20, (int)getpid(), 64ull << 20);
    assert_int_equal(write(fd, text, (size_t)n), n);
    close(fd);
    setenv("FAKE_NVML_CONFIG", cfg, 1);
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    o.nvml_library = FAKE_NVML_PATH;
    rt_counters *c = NULL;
    assert_int_equal(rt_counters_new(&o, &c), RT_OK);
    const rt_system_counters *s;
    assert_int_equal(rt_counters_system(c, &s), RT_OK);
    assert_true(fabs(s->gpu_usage - 0.5) < 1e-9);
    assert_true(fabs(s->gpu_vram_mib - 400) < 1e-9);
    assert_int_equal(s->gpu_utilized, 1);
    rt_tree_counters t = {.struct_size = sizeof t};
    assert_int_equal(rt_counters_tree(c, getpid(), 1, &t), RT_OK);
    assert_true(fabs(t.gpu_usage - 0.3) < 1e-9);
    assert_true(fabs(t.gpu_vram_mib - 64) < 1e-9);
    assert_int_equal(t.gpu_utilized, 1);
    rt_counters_free(c);
    unsetenv("FAKE_NVML_CONFIG");
    unlink(cfg);
}

/* The live machine: what every reading must hold. */
static void test_system_live(void **state)
{
    (void)state;
    rt_counters *c = NULL;
    assert_int_equal(rt_counters_new(NULL, &c), RT_OK); /* the defaults: /proc, /sys, NVML */
    const rt_system_counters *s = NULL;
    assert_int_equal(rt_counters_system(c, &s), RT_OK);
    assert_true(s->pid_count >= 1);
    assert_true(s->utime_secs > 0 && s->stime_secs > 0);
    assert_true(s->memory_free_mib > 0 && s->memory_used_mib > 0);
    double u0 = s->utime_secs;
    burn(0.05);
    assert_int_equal(rt_counters_system(c, &s), RT_OK);
    assert_true(s->utime_secs >= u0);
    rt_counters_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_fixture),   cmocka_unit_test(test_tree_foreign_pid),
        cmocka_unit_test(test_system_fixture),
        cmocka_unit_test(test_tree_kernel_cpu), cmocka_unit_test(test_tree_kernel_io),
        cmocka_unit_test(test_gpus_fake_nvml), cmocka_unit_test(test_system_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
