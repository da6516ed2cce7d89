/* test_cgroup.c - control groups: every parser (fixtures captured on a hybrid machine, hand-made
 * v2 and v1 trees, malformed input), a group read on each layout, the job group on a fake tree
 * (stale cleanup, no hierarchy) and live on this machine (exact CPU time against wait4; a
 * kill of the whole group). */
#include "unit.h"
#include "unit_wait.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "source/cgroup.h"

/* Parser input: a heap copy without the NUL, so a read past the end is an ASan finding. */
#define BODY(s) unit_body((s), &len)

/* ---- mounts --------------------------------------------------------------------------------- */

static void mounts_hybrid_capture(void **state)
{
    (void)state;
    size_t len;
    const char *t = fixture_text("cgroup/hybrid/proc/self/mountinfo", &len);
    rt_cg_mounts m;
    assert_int_equal(rt_cg_mounts_parse(t, len, &m), 6);
    assert_string_equal(m.dir[RT_CG_UNIFIED], "/sys/fs/cgroup/unified");
    assert_string_equal(m.dir[RT_CG_CPU], "/sys/fs/cgroup/cpu");
    assert_string_equal(m.dir[RT_CG_CPUACCT], "/sys/fs/cgroup/cpuacct");
    assert_string_equal(m.dir[RT_CG_MEMORY], "/sys/fs/cgroup/memory");
    assert_string_equal(m.dir[RT_CG_BLKIO], "/sys/fs/cgroup/blkio");
    assert_string_equal(m.dir[RT_CG_PIDS], "/sys/fs/cgroup/pids");
    assert_string_equal(m.root[RT_CG_MEMORY], "/");
}

static void mounts_v1_comounted_subtree(void **state)
{
    (void)state;
    size_t len;
    const char *t = fixture_text("cgroup/v1/proc/self/mountinfo", &len);
    rt_cg_mounts m;
    assert_int_equal(rt_cg_mounts_parse(t, len, &m), 5);
    assert_string_equal(m.dir[RT_CG_UNIFIED], "");
    assert_string_equal(m.dir[RT_CG_CPU], "/sys/fs/cgroup/cpu,cpuacct");
    assert_string_equal(m.dir[RT_CG_CPUACCT], "/sys/fs/cgroup/cpu,cpuacct");
    assert_string_equal(m.root[RT_CG_MEMORY], "/docker/abc");
}

static void mounts_malformed(void **state)
{
    (void)state;
    size_t len;
    rt_cg_mounts m;
    const char *t = BODY("1 2 3\n"                                                   /* short */
                         "30 1 0:26 / /sys/fs/cgroup/a rw - cgroup2\n"              /* no source */
                         "31 1 0:26 / /sys/fs/cgroup/b rw cgroup2 cgroup2 rw\n"     /* no "-" */
                         "32 1 0:27 / /sys/fs/cgroup/mem\\040x rw shared:3 - cgroup cgroup rw,memory\r\n"
                         "33 1 0:28 / /sys/fs/cgroup/mem2 rw - cgroup cgroup rw,memory\n" /* second: ignored */
                         "34 1 0:29 / /sys/fs/cgroup/x rw - cgroup cgroup\n"        /* no super options */
                         "35 1 0:30 /\\134a /sys/fs/cgroup/u rw - cgroup2 none rw");  /* no newline */
    assert_int_equal(rt_cg_mounts_parse(t, len, &m), 2);
    assert_string_equal(m.dir[RT_CG_MEMORY], "/sys/fs/cgroup/mem x");
    assert_string_equal(m.dir[RT_CG_UNIFIED], "/sys/fs/cgroup/u");
    assert_string_equal(m.root[RT_CG_UNIFIED], "/\\a");
    t = BODY("");
    assert_int_equal(rt_cg_mounts_parse(t, len, &m), 0);
    char big[RT_CG_PATH_MAX + 100];
    memset(big, 'a', sizeof big);
    memcpy(big, "1 1 0:1 / /", 11);
    memcpy(big + sizeof big - 20, " rw - cgroup2 x rw\n", 19);
    assert_int_equal(rt_cg_mounts_parse(big, sizeof big - 1, &m), 0); /* too long: left out */
}

/* ---- /proc/PID/cgroup ----------------------------------------------------------------------- */

static void paths_parse(void **state)
{
    (void)state;
    size_t len;
    const char *t = fixture_text("cgroup/hybrid/proc/4242/cgroup", &len);
    rt_cg_paths p;
    assert_int_equal(rt_cg_paths_parse(t, len, &p), 6);
    assert_string_equal(p.path[RT_CG_UNIFIED], "/rtfix");
    assert_string_equal(p.path[RT_CG_MEMORY], "/process_api/818eaf1ee71d523a88d79b44cf24c41c/rtfix");
    assert_true(p.has[RT_CG_PIDS]);
    t = fixture_text("cgroup/v1/proc/55/cgroup", &len);
    assert_int_equal(rt_cg_paths_parse(t, len, &p), 5);
    assert_false(p.has[RT_CG_UNIFIED]);
    assert_string_equal(p.path[RT_CG_CPU], "/job");
    assert_string_equal(p.path[RT_CG_CPUACCT], "/job");
    t = BODY("0::/a:b/c\r\n\n3:memory:/m");
    assert_int_equal(rt_cg_paths_parse(t, len, &p), 2);
    assert_string_equal(p.path[RT_CG_UNIFIED], "/a:b/c");
    assert_string_equal(p.path[RT_CG_MEMORY], "/m");
    t = BODY("");
    assert_int_equal(rt_cg_paths_parse(t, len, &p), 0);
    const char *bad[] = {"0:/x\n", "x::/\n", "::/\n", "0::\n", "0::relative\n", "4:memory\n", "-1::/\n"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        t = BODY(bad[i]);
        assert_int_equal(rt_cg_paths_parse(t, len, &p), -1);
    }
}

/* ---- a group's files ------------------------------------------------------------------------ */

static void keyed(void **state)
{
    (void)state;
    size_t len;
    uint64_t v = 7;
    const char *t = BODY("max_usage 5\nmax 3\noom_kill 18446744073709551615\r\nlast 9");
    assert_int_equal(rt_cg_keyed_u64(t, len, "max", &v), 0);
    assert_int_equal(v, 3);
    assert_int_equal(rt_cg_keyed_u64(t, len, "oom_kill", &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(rt_cg_keyed_u64(t, len, "last", &v), 0);
    assert_int_equal(v, 9);
    assert_int_equal(rt_cg_keyed_u64(t, len, "ma", &v), -1);
    assert_int_equal(rt_cg_keyed_u64(t, len, "missing", &v), -1);
    t = BODY("a 18446744073709551616\nb x\nc\nd 12x\n");
    assert_int_equal(rt_cg_keyed_u64(t, len, "a", &v), -1); /* overflows */
    assert_int_equal(rt_cg_keyed_u64(t, len, "b", &v), -1);
    assert_int_equal(rt_cg_keyed_u64(t, len, "c", &v), -1);
    assert_int_equal(rt_cg_keyed_u64(t, len, "d", &v), -1);
    t = BODY("");
    assert_int_equal(rt_cg_keyed_u64(t, len, "a", &v), -1);
}

static void memory_stat(void **state)
{
    (void)state;
    size_t len;
    uint64_t v = 7;
    /* v2: the file LRU lists and reclaimable slab; shmem (on the anon lists) is not reclaimable */
    const char *t = BODY("anon 100\nfile 300\nshmem 50\ninactive_anon 60\nactive_anon 90\ninactive_file 120\n"
                         "active_file 130\nslab_reclaimable 40\nslab_unreclaimable 9\n");
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), 0);
    assert_int_equal(v, 120 + 130 + 40);
    /* v1: the hierarchical total_* lines win over the group's own */
    t = BODY("cache 10\nactive_file 1\ninactive_file 2\ntotal_inactive_file 300\ntotal_active_file 400\n");
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), 0);
    assert_int_equal(v, 700);
    /* a v2 before slab accounting: the LRU alone */
    t = BODY("inactive_file 5\nactive_file 6\n");
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), 0);
    assert_int_equal(v, 11);
    /* without the file lists (or with one of them malformed): nothing known */
    v = 7;
    t = BODY("anon 100\nshmem 50\nslab_reclaimable 40\n");
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), -1);
    t = BODY("inactive_file 5\nactive_file x\n");
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), -1);
    t = BODY("inactive_file 18446744073709551615\nactive_file 1\n"); /* a sum past 2^64 */
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), -1);
    t = BODY("");
    assert_int_equal(rt_cg_parse_memory_stat(t, len, &v), -1);
    assert_int_equal(v, 7);
}

/* rt_cg_parse_memory_kinds of t: anon, file and shmem as expected. */
static void kinds_are(const char *t, size_t len, uint64_t anon, uint64_t file, uint64_t shmem)
{
    uint64_t a = 7, f = 7, s = 7;
    rt_cg_parse_memory_kinds(t, len, &a, &f, &s);
    assert_int_equal(a, anon);
    assert_int_equal(f, file);
    assert_int_equal(s, shmem);
}

static void memory_kinds(void **state)
{
    (void)state;
    size_t len;
    const char *t = BODY("anon 100\nfile 300\nkernel 9\nshmem 50\nfile_mapped 20\nanon_thp 0\n"); /* v2 */
    kinds_are(t, len, 100, 300, 50);
    /* v1: the hierarchical total_* lines win over the group's own, in either order */
    t = BODY("total_rss 4000\ncache 10\nrss 20\nrss_huge 99\nshmem 3\ntotal_cache 5000\ntotal_shmem 600\n");
    kinds_are(t, len, 4000, 5000, 600);
    t = BODY("cache 10\nrss 20\nshmem 3\nmapped_file 1\n"); /* v1 without hierarchy lines: the group's own */
    kinds_are(t, len, 20, 10, 3);
    t = BODY("anon x\nfile 300\n"); /* missing or malformed lines: unknown, the others kept */
    kinds_are(t, len, RT_NULL_U64, 300, RT_NULL_U64);
    t = BODY("");
    kinds_are(t, len, RT_NULL_U64, RT_NULL_U64, RT_NULL_U64);
}

/* rt_cg_parse_memory_refault: file refaults in pages, v1's hierarchical line first, then
 * v2's (and v1's own) workingset_refault_file, then the older kernels' workingset_refault. */
static void memory_refault(void **state)
{
    (void)state;
    size_t len;
    uint64_t v = 7;
    const char *t = BODY("workingset_refault_anon 5\nworkingset_refault_file 153599\nworkingset_activate_file 9\n");
    assert_int_equal(rt_cg_parse_memory_refault(t, len, &v), 0);
    assert_int_equal(v, 153599);
    t = BODY("total_workingset_refault_file 400\nworkingset_refault_file 100\n"); /* v1: the total wins */
    assert_int_equal(rt_cg_parse_memory_refault(t, len, &v), 0);
    assert_int_equal(v, 400);
    t = BODY("workingset_refault 77\nworkingset_activate 3\n"); /* v2 before 5.9: file pages only */
    assert_int_equal(rt_cg_parse_memory_refault(t, len, &v), 0);
    assert_int_equal(v, 77);
    t = BODY("workingset_refault 77\nworkingset_refault_file 80\n");
    assert_int_equal(rt_cg_parse_memory_refault(t, len, &v), 0);
    assert_int_equal(v, 80);
    v = 7; /* none (v1 before 5.9), or malformed: -1, v untouched */
    t = BODY("cache 10\nrss 20\n");
    assert_int_equal(rt_cg_parse_memory_refault(t, len, &v), -1);
    t = BODY("workingset_refault_file x\n");
    assert_int_equal(rt_cg_parse_memory_refault(t, len, &v), -1);
    assert_int_equal(v, 7);
}

static void limits(void **state)
{
    (void)state;
    size_t len;
    uint64_t v;
    struct {
        const char *in;
        int rc;
        uint64_t v;
    } cases[] = {
        {"max\n", 0, RT_NULL_U64},
        {"536870912\n", 0, 536870912},
        {"9223372036854771712\n", 0, RT_NULL_U64}, /* v1 unlimited */
        {"4611686018427387903", 0, 4611686018427387903ull},
        {"-1\n", 0, RT_NULL_U64}, /* cfs_quota_us */
        {"123\r\n", 0, 123},
        {"", -1, 0},
        {"\n", -1, 0},
        {"abc\n", -1, 0},
        {"12 34\n", -1, 0},
        {"18446744073709551616\n", -1, 0},
        {"-2\n", -1, 0},
        {"maxi\n", -1, 0},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        const char *t = BODY(cases[i].in);
        v = 1;
        assert_int_equal(rt_cg_parse_limit(t, len, &v), cases[i].rc);
        if (cases[i].rc == 0)
            assert_true(v == cases[i].v);
    }
}

static void cpu_max(void **state)
{
    (void)state;
    size_t len;
    uint64_t q, p;
    const char *t = BODY("max 100000\n");
    assert_int_equal(rt_cg_parse_cpu_max(t, len, &q, &p), 0);
    assert_true(q == RT_NULL_U64);
    assert_int_equal(p, 100000);
    t = BODY("150000 100000");
    assert_int_equal(rt_cg_parse_cpu_max(t, len, &q, &p), 0);
    assert_int_equal(q, 150000);
    const char *bad[] = {"", "100000\n", "x 1\n", "1 0\n", "1 2 3\n", "1 max\n", "-1 100\n"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        t = BODY(bad[i]);
        assert_int_equal(rt_cg_parse_cpu_max(t, len, &q, &p), -1);
    }
}

static void pressure(void **state)
{
    (void)state;
    size_t len;
    rt_cg_psi_raw r;
    const char *t = fixture_text("cgroup/v2/sys/fs/cgroup/jobs.slice/job1/cpu.pressure", &len);
    assert_int_equal(rt_cg_parse_pressure(t, len, &r), 0);
    assert_true(r.has_some && r.has_full);
    assert_float_equal(r.some_avg10, 12.5, 1e-9);
    assert_float_equal(r.full_avg10, 1.0, 1e-9);
    assert_int_equal(r.some_total_usec, 1234567);
    assert_int_equal(r.full_total_usec, 45678);
    /* an old kernel's machine-wide cpu: "some" only; no trailing newline */
    t = BODY("some avg10=0.07 avg60=0.10 avg300=0.05 total=98765");
    assert_int_equal(rt_cg_parse_pressure(t, len, &r), 0);
    assert_true(r.has_some && !r.has_full);
    assert_float_equal(r.some_avg10, 0.07, 1e-9);
    assert_true(isnan(r.full_avg10) && r.full_total_usec == RT_NULL_U64);
    /* a missing total, a broken average, CRLF */
    t = BODY("some avg10=1.5 avg60=0.00\r\nfull avg10=x total=12\r\n");
    assert_int_equal(rt_cg_parse_pressure(t, len, &r), 0);
    assert_true(r.some_total_usec == RT_NULL_U64);
    assert_float_equal(r.some_avg10, 1.5, 1e-9);
    assert_true(isnan(r.full_avg10));
    assert_int_equal(r.full_total_usec, 12);
    const char *bad[] = {"", "garbage\n", "some\n", "some avg10=1. total=-3\n", "other avg10=1 total=2\n"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        t = BODY(bad[i]);
        assert_int_equal(rt_cg_parse_pressure(t, len, &r), -1);
        assert_false(r.has_some || r.has_full);
    }
}

static void io_stat(void **state)
{
    (void)state;
    size_t len;
    uint64_t r = 1, w = 1;
    const char *t = fixture_text("cgroup/v2/sys/fs/cgroup/jobs.slice/job1/io.stat", &len);
    assert_int_equal(rt_cg_parse_io_stat(t, len, &r, &w), 0);
    assert_int_equal(r, 1048576 + 512);
    assert_int_equal(w, 4096 + 2048);
    t = BODY("");
    assert_int_equal(rt_cg_parse_io_stat(t, len, &r, &w), 0);
    assert_int_equal(r + w, 0);
    t = BODY("8:0 rbytes=5 wbytes=7 cost.usage=3"); /* no newline; other keys */
    assert_int_equal(rt_cg_parse_io_stat(t, len, &r, &w), 0);
    assert_int_equal(r, 5);
    assert_int_equal(w, 7);
    const char *bad[] = {"8:0 rbytes\n", "sda rbytes=1\n", "8: rbytes=1\n", "8:0 rbytes=x\n",
                         "8:0 rbytes=18446744073709551615\n8:1 rbytes=1\n"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        t = BODY(bad[i]);
        assert_int_equal(rt_cg_parse_io_stat(t, len, &r, &w), -1);
    }
    /* LVM: the dm device (253:0) and the disk under it (259:0) both list the same bytes; only
     * the disk counts; an empty set counts every line */
    rt_cg_devs disks = {.dev = {259ull << 32 | 0}, .n = 1}, none = {.n = 0};
    t = BODY("253:0 rbytes=100 wbytes=200\n259:0 rbytes=100 wbytes=200 rios=1\n");
    assert_int_equal(rt_cg_parse_io_stat_on(t, len, &disks, &r, &w), 0);
    assert_int_equal(r, 100);
    assert_int_equal(w, 200);
    assert_int_equal(rt_cg_parse_io_stat_on(t, len, &none, &r, &w), 0);
    assert_int_equal(r, 200);
    t = BODY("253:0 rbytes=1\nnot a line\n");
    assert_int_equal(rt_cg_parse_io_stat_on(t, len, &disks, &r, &w), -1); /* still checked */
    assert_true(rt_cg_devs_has(NULL, 1) && rt_cg_devs_has(&none, 1) && !rt_cg_devs_has(&disks, 253ull << 32));
}

static void blkio(void **state)
{
    (void)state;
    size_t len;
    uint64_t r = 1, w = 1;
    const char *t = fixture_text("cgroup/v1/sys/fs/cgroup/blkio/job/blkio.throttle.io_service_bytes_recursive", &len);
    assert_int_equal(rt_cg_parse_blkio(t, len, &r, &w), 0);
    assert_int_equal(r, 4096 + 1000);
    assert_int_equal(w, 8192 + 24);
    t = fixture_text("cgroup/hybrid/sys/fs/cgroup/blkio/rtfix/blkio.throttle.io_service_bytes_recursive", &len);
    assert_int_equal(rt_cg_parse_blkio(t, len, &r, &w), 0);
    assert_int_equal(r + w, 0);
    t = BODY("8:0 Read 3\r\n8:0 Write 4"); /* CR, no newline */
    assert_int_equal(rt_cg_parse_blkio(t, len, &r, &w), 0);
    assert_int_equal(r, 3);
    assert_int_equal(w, 4);
    const char *bad[] = {"8:0 Read\n", "Total\n", "Total x\n", "x:0 Read 1\n", "8:0 Read 1 2\n",
                         "8:0 Read 18446744073709551615\n8:1 Read 1\n"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        t = BODY(bad[i]);
        assert_int_equal(rt_cg_parse_blkio(t, len, &r, &w), -1);
    }
    rt_cg_devs disks = {.dev = {254ull << 32 | 0}, .n = 1};
    t = BODY("7:3 Read 50\n7:3 Write 60\n254:0 Read 3\n254:0 Write 4\nTotal 117\n");
    assert_int_equal(rt_cg_parse_blkio_on(t, len, &disks, &r, &w), 0);
    assert_int_equal(r, 3);
    assert_int_equal(w, 4);
}

static void procs(void **state)
{
    (void)state;
    size_t len;
    int64_t pids[3];
    const char *t = BODY("1201\n1202\n1305\n1306");
    assert_int_equal(rt_cg_parse_procs(t, len, pids, 3), 4);
    assert_int_equal(pids[2], 1305);
    assert_int_equal(rt_cg_parse_procs(t, len, NULL, 0), 4);
    t = BODY("");
    assert_int_equal(rt_cg_parse_procs(t, len, pids, 3), 0);
    t = BODY("7\r\n\n");
    assert_int_equal(rt_cg_parse_procs(t, len, pids, 3), 1);
    const char *bad[] = {"12 13\n", "abc\n", "0\n", "-4\n", "99999999999999999999\n"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        t = BODY(bad[i]);
        assert_int_equal(rt_cg_parse_procs(t, len, pids, 3), -1);
    }
}

/* ---- one group, on each layout -------------------------------------------------------------- */

/* Opens the group of pid in fixture case name (its proc and sys roots). */
static rt_cg_group *fixture_group(const char *name, int64_t pid, rt_roots *roots)
{
    char proc[1024], sys[1024];
    snprintf(proc, sizeof proc, "%s/cgroup/%s/proc", RT_FIXTURES, name);
    snprintf(sys, sizeof sys, "%s/cgroup/%s/sys", RT_FIXTURES, name);
    assert_int_equal(rt_roots_open(roots, proc, sys), RT_OK);
    rt_cg_group *g = rt_cg_group_of_pid(roots, pid, NULL);
    assert_non_null(g);
    return g;
}

/* Frees what a fixture group test holds. */
static void fixture_done(rt_cg_group *g, rt_buf *b, rt_roots *roots)
{
    rt_cg_group_free(g);
    rt_buf_free(b);
    rt_roots_close(roots);
}

static void group_v2(void **state)
{
    (void)state;
    rt_roots roots;
    rt_cg_group *g = fixture_group("v2", 777, &roots);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading r;
    rt_cg_group_read(g, &b, &r);
    assert_string_equal(rt_cg_group_path(g), "/jobs.slice/job1");
    assert_string_equal(rt_cg_group_version(g), "v2");
    assert_int_equal(r.cpu_usage_ns, 3200500000ull);
    assert_int_equal(r.cpu_user_ns, 3000000000ull);
    assert_int_equal(r.cpu_system_ns, 200500000ull);
    /* the parent's quota is the tightest (the group's own is "max"), and its throttling */
    assert_int_equal(r.cpu_quota_usec, 150000);
    assert_int_equal(r.cpu_period_usec, 100000);
    assert_int_equal(r.cpu_periods, 420);
    assert_int_equal(r.cpu_throttled_periods, 17);
    assert_int_equal(r.cpu_throttled_usec, 250000);
    assert_int_equal(r.memory_limit_bytes, 1073741824ull); /* the parent's, tighter */
    assert_int_equal(r.memory_high_bytes, 805306368ull);
    assert_int_equal(r.memory_bytes, 104857600ull);
    assert_int_equal(r.memory_peak_bytes, 209715200ull);
    assert_int_equal(r.memory_stat.reclaimable_bytes, 20971520ull + 10485760 + 1048576);
    assert_int_equal(r.memory_stat.refault_file_bytes, 2500ull * (uint64_t)sysconf(_SC_PAGESIZE));
    assert_int_equal(r.oom_kills, 1);
    assert_int_equal(r.memory_max_events, 3);
    assert_int_equal(r.pids, 4);
    assert_int_equal(r.pids_peak, 9);
    assert_int_equal(r.pids_limit, 100);
    assert_int_equal(r.io_read_bytes, 1048576 + 512);
    assert_int_equal(r.io_write_bytes, 4096 + 2048);
    assert_true(r.psi[RT_PSI_CPU].has_some && r.psi[RT_PSI_IO].has_full);
    assert_float_equal(r.psi[RT_PSI_CPU].some_avg10, 12.5, 1e-9);
    assert_int_equal(r.psi[RT_PSI_MEMORY].full_total_usec, 50);
    assert_int_equal(r.psi[RT_PSI_IO].some_total_usec, 9000);
    int64_t pids[8];
    assert_int_equal(rt_cg_group_procs(g, &b, pids, 8), 4);
    assert_int_equal(pids[3], 1306);
    /* a second read through the grown buffer gives the same */
    rt_cg_reading r2;
    rt_cg_group_read(g, &b, &r2);
    assert_memory_equal(&r, &r2, sizeof r);
    fixture_done(g, &b, &roots);
}

static void group_v1(void **state)
{
    (void)state;
    rt_roots roots;
    rt_cg_group *g = fixture_group("v1", 55, &roots);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading r;
    rt_cg_group_read(g, &b, &r);
    assert_string_equal(rt_cg_group_path(g), "/docker/abc/job"); /* the memory controller's */
    assert_string_equal(rt_cg_group_version(g), "v1");
    assert_int_equal(r.cpu_usage_ns, 2500000000ull);
    assert_int_equal(r.cpu_user_ns, 2000000000ull);
    assert_int_equal(r.cpu_system_ns, 500000000ull);
    assert_int_equal(r.cpu_quota_usec, 25000);
    assert_int_equal(r.cpu_period_usec, 50000);
    assert_int_equal(r.cpu_periods, 200);
    assert_int_equal(r.cpu_throttled_periods, 40);
    assert_int_equal(r.cpu_throttled_usec, 1500000); /* throttled_time 1.5 s in ns */
    assert_int_equal(r.memory_limit_bytes, 268435456);
    assert_true(r.memory_high_bytes == RT_NULL_U64);
    assert_int_equal(r.memory_bytes, 52428800);
    assert_int_equal(r.memory_peak_bytes, 67108864);
    assert_int_equal(r.memory_stat.reclaimable_bytes, 12582912 + 4194304);
    assert_int_equal(r.memory_stat.refault_file_bytes, 300ull * (uint64_t)sysconf(_SC_PAGESIZE)); /* the total */
    assert_int_equal(r.oom_kills, 2);
    assert_int_equal(r.memory_max_events, 57);
    assert_int_equal(r.pids, 2);
    assert_true(r.pids_peak == RT_NULL_I64);
    assert_int_equal(r.pids_limit, 512);
    assert_int_equal(r.io_read_bytes, 5096);
    assert_int_equal(r.io_write_bytes, 8216);
    for (int i = 0; i < RT_PSI_N; i++)
        assert_false(r.psi[i].has_some || r.psi[i].has_full);
    assert_int_equal(rt_cg_group_procs(g, &b, NULL, 0), 2);
    fixture_done(g, &b, &roots);
}

static void group_hybrid(void **state)
{
    (void)state;
    rt_roots roots;
    rt_cg_group *g = fixture_group("hybrid", 4242, &roots);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading r;
    rt_cg_group_read(g, &b, &r);
    assert_string_equal(rt_cg_group_path(g), "/rtfix");
    assert_string_equal(rt_cg_group_version(g), "hybrid");
    /* CPU time from the unified tree's cpu.stat, not cpuacct */
    size_t len;
    const char *t = fixture_text("cgroup/hybrid/sys/fs/cgroup/unified/rtfix/cpu.stat", &len);
    uint64_t usec;
    assert_int_equal(rt_cg_keyed_u64(t, len, "usage_usec", &usec), 0);
    assert_int_equal(r.cpu_usage_ns, usec * 1000);
    /* the quota and throttling of the v1 cpu hierarchy */
    assert_int_equal(r.cpu_quota_usec, 50000);
    assert_int_equal(r.cpu_period_usec, 100000);
    assert_int_equal(r.cpu_periods, 9);
    assert_int_equal(r.cpu_throttled_periods, 6);
    assert_int_equal(r.cpu_throttled_usec, 299381);
    assert_int_equal(r.memory_limit_bytes, 536870912);
    assert_true(r.memory_high_bytes == RT_NULL_U64);
    assert_int_equal(r.memory_bytes, 819200);
    assert_int_equal(r.memory_peak_bytes, 2117632);
    assert_int_equal(r.oom_kills, 0);
    assert_int_equal(r.memory_max_events, 0);
    assert_int_equal(r.pids, 1);
    assert_int_equal(r.pids_peak, 3);
    assert_int_equal(r.pids_limit, 64);
    assert_int_equal(r.io_read_bytes, 0);
    assert_int_equal(r.io_write_bytes, 0);
    assert_true(r.psi[RT_PSI_CPU].has_some && r.psi[RT_PSI_MEMORY].has_full && r.psi[RT_PSI_IO].has_some);
    assert_int_equal(rt_cg_group_procs(g, &b, NULL, 0), 1);
    fixture_done(g, &b, &roots);
}

/* What a logger was handed: every message counted, the last kept; the warnings (and errors)
 * counted apart, the last of them kept. */
typedef struct logs {
    int n, warns;
    char last[512], last_warn[1024];
} logs;

static void keep_log(void *user, rt_log_level level, const char *msg)
{
    logs *l = user;
    l->n++;
    snprintf(l->last, sizeof l->last, "%s", msg);
    if (level >= RT_LOG_WARN) {
        l->warns++;
        snprintf(l->last_warn, sizeof l->last_warn, "%s", msg);
    }
}

/* The lowest descriptor number free now. */
static int lowest_free_fd(void)
{
    int fd = dup(0);
    assert_true(fd >= 0);
    close(fd);
    return fd;
}

/* The open files limit group_few_descriptors changes, put back by its teardown even when it
 * fails. */
static struct rlimit few_was;

static int few_descriptors_done(void **state)
{
    (void)state;
    return setrlimit(RLIMIT_NOFILE, &few_was);
}

/* Under an open files limit that leaves room to keep only `room` more descriptors (the
 * headroom is 16: rt_fds_keep_below), a group keeps the files a run is judged by first (v2's
 * cpu.stat, the memory peak, the charge, the tasks' peak and count), reads those to the same
 * figures as with every file kept and the rest as null, and says so once, at its opening, with
 * the limit and the files named; with room for all, nothing is said. The directory being read
 * holds one descriptor while its files are opened. */
static void group_few_descriptors(void **state)
{
    (void)state;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &few_was), 0);
    rt_roots roots;
    rt_cg_group *kept = fixture_group("hybrid", 4242, &roots);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading want, got;
    rt_cg_group_read(kept, &b, &want);
    rt_cg_group_free(kept);
    assert_true(want.cpu_usage_ns != RT_NULL_U64 && want.memory_peak_bytes != RT_NULL_U64);
    assert_true(want.memory_bytes != RT_NULL_U64 && want.pids_peak != RT_NULL_I64 && want.pids != RT_NULL_I64);
    assert_true(want.memory_limit_bytes != RT_NULL_U64 && want.cpu_quota_usec != RT_NULL_U64);
    int lo = lowest_free_fd();
    bool open_before[80]; /* descriptors above the lowest free one, inherited maybe */
    for (int fd = lo; fd < lo + 80; fd++)
        open_before[fd - lo] = fcntl(fd, F_GETFD) >= 0;
    for (int room = 0; room <= 64; room++) {
        struct rlimit few = {(rlim_t)(lo + room + 16), few_was.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &few), 0);
        logs w = {0};
        rt_logger log = {keep_log, &w};
        rt_cg_group *g = rt_cg_group_of_pid(&roots, 4242, &log);
        assert_non_null(g);
        rt_cg_group_read(g, &b, &got);
        int files = 0; /* kept: open now and not before */
        for (int fd = lo; fd < lo + 80; fd++)
            files += fcntl(fd, F_GETFD) >= 0 && !open_before[fd - lo];
        rt_cg_group_free(g);
        assert_int_equal(lowest_free_fd(), lo);
        /* the first kept, in order; each either the same figure or null */
        int k = -1; /* the descriptors free below the limit's headroom, less the directory's */
        for (int fd = lo; fd < lo + room; fd++)
            k += !open_before[fd - lo];
        k = k < 0 ? 0 : k;
        assert_true(got.cpu_usage_ns == (k >= 1 ? want.cpu_usage_ns : RT_NULL_U64));
        assert_true(got.memory_peak_bytes == (k >= 2 ? want.memory_peak_bytes : RT_NULL_U64));
        assert_true(got.memory_bytes == (k >= 3 ? want.memory_bytes : RT_NULL_U64));
        assert_true(got.pids_peak == (k >= 4 ? want.pids_peak : RT_NULL_I64));
        assert_true(got.pids == (k >= 5 ? want.pids : RT_NULL_I64));
        assert_true(got.memory_limit_bytes == RT_NULL_U64 || got.memory_limit_bytes == want.memory_limit_bytes);
        assert_true(files <= k);
        if (w.warns == 0) { /* room for all: nothing said, every figure there */
            assert_memory_equal(&got, &want, sizeof want);
            assert_true(room > 5);
            break;
        }
        assert_int_equal(w.warns, 1);
        char limit[64];
        snprintf(limit, sizeof limit, "the open files limit %d:", lo + room + 16);
        assert_non_null(strstr(w.last_warn, "too few file descriptors to keep open"));
        assert_non_null(strstr(w.last_warn, limit));
        assert_non_null(strstr(w.last_warn, "cgroup /rtfix:"));
        const char *takes = strstr(w.last_warn, "it takes ");
        assert_non_null(takes); /* a limit past this one: never one at which it would fit */
        char *end;
        errno = 0;
        long at_least = strtol(takes + 9, &end, 10);
        assert_true(errno == 0 && end > takes + 9 && *end == ' ');
        assert_true(at_least > lo + room + 16 && at_least <= lo + 64 + 16 + 16);
        if (k == 0)
            assert_non_null(strstr(w.last_warn, "unified/cpu.stat, memory/memory.max_usage_in_bytes, "));
        assert_true(room < 64);
    }
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &few_was), 0);
    rt_buf_free(&b);
    rt_roots_close(&roots);
}

/* A group with a single file: every other figure null, nothing fails. Mounts outside /sys and
 * paths outside the mount are not opened. */
static void group_sparse_and_unreachable(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cg-XXXXXX";
    unit_tmpdir(dir);
    char proc[256], sys[256];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    mkdir(proc, 0755);
    mkdir(sys, 0755);
    unit_put(proc, "self/mountinfo",
             "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
             "31 1 0:27 / /cgroup/memory rw - cgroup cgroup rw,memory\n");
    unit_put(proc, "9/cgroup", "0::/g\n4:memory:/g\n");
    unit_put(proc, "10/cgroup", "0::/../outside\n");
    unit_put(proc, "11/cgroup", "4:memory:/g\n");
    unit_put(proc, "12/cgroup", "not a cgroup file\n");
    unit_put(sys, "fs/cgroup/g/cpu.stat", "usage_usec 10\n");
    rt_roots roots;
    assert_int_equal(rt_roots_open(&roots, proc, sys), RT_OK);
    rt_cg_group *g = rt_cg_group_of_pid(&roots, 9, NULL);
    assert_non_null(g);
    assert_string_equal(rt_cg_group_version(g), "v2"); /* memory's mount lies outside the sys root */
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading r;
    rt_cg_group_read(g, &b, &r);
    assert_int_equal(r.cpu_usage_ns, 10000);
    assert_true(r.cpu_user_ns == RT_NULL_U64 && r.memory_bytes == RT_NULL_U64 && r.cpu_quota_usec == RT_NULL_U64);
    assert_true(r.cpu_periods == RT_NULL_U64 && r.oom_kills == RT_NULL_U64 && r.io_read_bytes == RT_NULL_U64);
    assert_true(r.pids == RT_NULL_I64 && r.pids_limit == RT_NULL_I64 && r.memory_limit_bytes == RT_NULL_U64);
    assert_false(r.psi[RT_PSI_CPU].has_some);
    assert_int_equal(rt_cg_group_procs(g, &b, NULL, 0), -1);
    rt_cg_group_free(g);
    assert_null(rt_cg_group_of_pid(&roots, 10, NULL));
    assert_null(rt_cg_group_of_pid(&roots, 11, NULL));
    assert_null(rt_cg_group_of_pid(&roots, 12, NULL));
    assert_null(rt_cg_group_of_pid(&roots, 13, NULL)); /* no such process */
    rt_buf_free(&b);
    rt_roots_close(&roots);
    unit_rmtree(dir);
}

/* rt_cg_group_read_at keeps the limits RT_CG_LIMITS_EVERY_SECS (counters are read every time),
 * re-reads them once that has passed or time went back; rt_cg_group_read always re-reads. */
static void limits_kept_a_second(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cg-XXXXXX";
    unit_tmpdir(dir);
    char proc[256], sys[256];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    mkdir(proc, 0755);
    mkdir(sys, 0755);
    unit_put(proc, "self/mountinfo", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    unit_put(proc, "9/cgroup", "0::/g\n");
    unit_put(sys, "fs/cgroup/g/cpu.stat", "usage_usec 10\n");
    unit_put(sys, "fs/cgroup/g/memory.max", "1048576\n");
    unit_put(sys, "fs/cgroup/g/cpu.max", "50000 100000\n");
    rt_roots roots;
    assert_int_equal(rt_roots_open(&roots, proc, sys), RT_OK);
    rt_cg_group *g = rt_cg_group_of_pid(&roots, 9, NULL);
    assert_non_null(g);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading r;
    rt_cg_group_read_at(g, &b, 100.0, &r);
    assert_int_equal(r.memory_limit_bytes, 1048576);
    assert_int_equal(r.cpu_quota_usec, 50000);
    unit_put(sys, "fs/cgroup/g/memory.max", "2097152\n");
    unit_put(sys, "fs/cgroup/g/cpu.max", "max 100000\n");
    unit_put(sys, "fs/cgroup/g/cpu.stat", "usage_usec 20\n");
    rt_cg_group_read_at(g, &b, 100.0 + RT_CG_LIMITS_EVERY_SECS / 2, &r);
    assert_int_equal(r.cpu_usage_ns, 20000);         /* counters: now */
    assert_int_equal(r.memory_limit_bytes, 1048576); /* limits: as read at 100 */
    assert_int_equal(r.cpu_quota_usec, 50000);
    rt_cg_group_read_at(g, &b, 100.0 + RT_CG_LIMITS_EVERY_SECS, &r);
    assert_int_equal(r.memory_limit_bytes, 2097152);
    assert_true(r.cpu_quota_usec == RT_NULL_U64);
    unit_put(sys, "fs/cgroup/g/memory.max", "max\n");
    rt_cg_group_read_at(g, &b, 50.0, &r); /* time went back */
    assert_true(r.memory_limit_bytes == RT_NULL_U64);
    unit_put(sys, "fs/cgroup/g/memory.max", "4096\n");
    rt_cg_group_read_at(g, &b, 50.1, &r);
    assert_true(r.memory_limit_bytes == RT_NULL_U64);
    rt_cg_group_read(g, &b, &r); /* no clock: always */
    assert_int_equal(r.memory_limit_bytes, 4096);
    rt_cg_group_free(g);
    rt_buf_free(&b);
    rt_roots_close(&roots);
    unit_rmtree(dir);
}

/* A group at different paths in different hierarchies has a membership per path, each read
 * from its own cgroup.procs; the same path twice counts once. */
static void memberships_per_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cg-XXXXXX";
    unit_tmpdir(dir);
    char proc[256], sys[256];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    mkdir(proc, 0755);
    mkdir(sys, 0755);
    unit_put(proc, "self/mountinfo",
             "30 1 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
             "31 1 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
             "32 1 0:28 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n");
    unit_put(proc, "9/cgroup", "0::/a\n4:memory:/b\n8:pids:/a\n");
    unit_put(sys, "fs/cgroup/unified/a/cgroup.procs", "9\n");
    unit_put(sys, "fs/cgroup/pids/a/cgroup.procs", "9\n");
    unit_put(sys, "fs/cgroup/memory/b/cgroup.procs", "9\n77\n");
    rt_roots roots;
    assert_int_equal(rt_roots_open(&roots, proc, sys), RT_OK);
    rt_cg_group *g = rt_cg_group_of_pid(&roots, 9, NULL);
    assert_non_null(g);
    assert_int_equal(rt_cg_group_memberships(g), 2);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    int64_t pids[4];
    assert_int_equal(rt_cg_group_procs_at(g, 0, &b, pids, 4), 1);
    assert_int_equal(rt_cg_group_procs_at(g, 1, &b, pids, 4), 2);
    assert_int_equal(pids[1], 77);
    assert_int_equal(rt_cg_group_procs_at(g, 2, &b, pids, 4), -1);
    rt_cg_group_free(g);
    rt_buf_free(&b);
    rt_roots_close(&roots);
    unit_rmtree(dir);
}

/* ---- the job group -------------------------------------------------------------------------- */

/* A pid that no longer exists: a child reaped at once. */
static pid_t dead_pid(void)
{
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

/* Holds the owner's lock on the directory path (as a live tracker in another PID namespace
 * would) on a descriptor of its own; returns it (close it to let go). */
static int hold_lock(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    return fd;
}

/* On a fake tree: stale groups of dead trackers are removed when empty and unlocked, others
 * stay (one whose lock is held, a file of that name, one holding a file); a group named after
 * the caller's own pid but not locked is not the caller's (a dead tracker that had the pid in
 * another PID namespace): removed. The new directory has no cgroup.procs (not a cgroup), so
 * nothing is made: one debug line says why. */
static void job_fake_tree(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cgjob-XXXXXX";
    unit_tmpdir(dir);
    char proc[256], sys[256], path[512];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    mkdir(proc, 0755);
    mkdir(sys, 0755);
    unit_put(proc, "self/mountinfo", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    unit_put(proc, "self/cgroup", "0::/user\n");
    pid_t dead = dead_pid();
    char stale_empty[128], stale_busy[128], alive[128];
    snprintf(stale_empty, sizeof stale_empty, "fs/cgroup/user/resource-tracker-%d-1", (int)dead);
    snprintf(stale_busy, sizeof stale_busy, "fs/cgroup/user/resource-tracker-%d-2/cgroup.procs", (int)dead);
    snprintf(alive, sizeof alive, "fs/cgroup/user/resource-tracker-%d-1/x", (int)getppid());
    unit_put(sys, "fs/cgroup/user/cgroup.procs", "");
    unit_put(sys, stale_busy, "1\n");
    unit_put(sys, alive, "");
    unit_put(sys, "fs/cgroup/user/resource-tracker-x-1/y", "");
    snprintf(path, sizeof path, "%s/%s", sys, stale_empty);
    assert_int_equal(mkdir(path, 0755), 0);
    char locked[512], mine[512], plain[128];
    snprintf(locked, sizeof locked, "%s/fs/cgroup/user/resource-tracker-%d-3", sys, (int)dead);
    snprintf(mine, sizeof mine, "%s/fs/cgroup/user/resource-tracker-%d-999", sys, (int)getpid());
    snprintf(plain, sizeof plain, "fs/cgroup/user/resource-tracker-%d-4", (int)dead);
    assert_int_equal(mkdir(locked, 0755), 0);
    assert_int_equal(mkdir(mine, 0755), 0);
    unit_put(sys, plain, "");
    int lock_fd = hold_lock(locked);

    logs l = {0};
    rt_job_cgroup_options o = RT_JOB_CGROUP_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = sys;
    o.log = keep_log;
    o.log_user = &l;
    rt_job_cgroup *jg = (rt_job_cgroup *)0x1;
    assert_int_equal(rt_job_cgroup_create(&o, &jg), RT_ERR_UNSUPPORTED);
    assert_null(jg);
    assert_non_null(strstr(l.last, "no group of its own"));
    assert_non_null(strstr(l.last, "cgroup.procs"));
    assert_int_not_equal(access(path, F_OK), 0); /* the empty stale one is gone */
    snprintf(path, sizeof path, "%s/%s", sys, stale_busy);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/%s", sys, alive);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(access(locked, F_OK), 0); /* its owner lives */
    assert_int_not_equal(access(mine, F_OK), 0);
    snprintf(path, sizeof path, "%s/%s", sys, plain);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/fs/cgroup/user/resource-tracker-%d-1", sys, (int)getpid());
    assert_int_not_equal(access(path, F_OK), 0); /* the attempt left nothing */
    /* two removals logged at debug level, the busy one that stays, then the one line on why
     * nothing was made */
    assert_int_equal(l.n, 4);
    /* its owner gone, the locked one goes with the next start */
    close(lock_fd);
    assert_int_equal(rt_job_cgroup_create(&o, &jg), RT_ERR_UNSUPPORTED);
    assert_int_not_equal(access(locked, F_OK), 0);

    /* no mounts at all: one line */
    unit_put(proc, "self/mountinfo", "28 1 259:2 / / rw - ext4 /dev/x rw\n");
    l.n = 0;
    assert_int_equal(rt_job_cgroup_create(&o, &jg), RT_ERR_UNSUPPORTED);
    assert_int_equal(l.n, 1);
    assert_non_null(strstr(l.last, "no cgroup hierarchy"));
    rt_job_cgroup_options small = {.struct_size = 1};
    assert_int_equal(rt_job_cgroup_create(&small, &jg), RT_ERR_INVALID);
    rt_job_cgroup_free(NULL);
    unit_rmtree(dir);
}

static volatile uint64_t burn_sink;

/* Burns CPU until the process has used secs of it. */
static void burn(double secs)
{
    struct timespec ts;
    do {
        for (int i = 0; i < 100000; i++)
            burn_sink += (uint64_t)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while (ts.tv_sec + ts.tv_nsec / 1e9 < secs);
}

/* The directories of the job group name in each hierarchy the caller's group is in. */
static int job_dirs(const char *name, char dirs[][1100], int cap)
{
    rt_roots roots;
    rt_cg_mounts *m = malloc(sizeof *m);
    rt_cg_paths *p = malloc(sizeof *p);
    assert_int_equal(rt_roots_open(&roots, NULL, NULL), RT_OK);
    int n = 0;
    if (rt_cg_locate(&roots, 0, m, p) > 0)
        for (int h = 0; h < RT_CG_NHIER && n < cap; h++)
            if (p->has[h] && m->dir[h][0])
                snprintf(dirs[n++], 1100, "%s%s/%s", m->dir[h], strcmp(p->path[h], "/") ? p->path[h] : "", name);
    rt_roots_close(&roots);
    free(m);
    free(p);
    return n;
}

/* The job group live: made (through proc_root, NULL for the real one), entered by a child that
 * burns 0.3 s of CPU, read (version want, NULL: any), removed. */
static void job_live_run(const char *proc_root, const char *want_version)
{
    logs l = {0};
    rt_job_cgroup_options o = RT_JOB_CGROUP_OPTIONS_INIT;
    o.proc_root = proc_root;
    o.log = keep_log;
    o.log_user = &l;
    rt_job_cgroup *jg = NULL;
    rt_error rc = rt_job_cgroup_create(&o, &jg);
    if (rc == RT_ERR_UNSUPPORTED) {
        print_message("skipped: no writable cgroup hierarchy (%s)\n", l.last);
        skip();
    }
    assert_int_equal(rc, RT_OK);
    const char *path = rt_job_cgroup_path(jg);
    char want[64];
    snprintf(want, sizeof want, "resource-tracker-%d-", (int)getpid());
    assert_non_null(strstr(path, want));
    const char *name = strrchr(path, '/') + 1;
    char dirs[RT_CG_NHIER][1100];
    int nd = job_dirs(name, dirs, RT_CG_NHIER), existed = 0;
    for (int i = 0; i < nd; i++)
        existed += access(dirs[i], F_OK) == 0;
    assert_true(existed > 0);

    rt_cg_group *g = rt_cg_group_of_job(jg, NULL);
    assert_non_null(g);
    if (want_version)
        assert_string_equal(rt_cg_group_version(g), want_version);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_cg_reading r0;
    rt_cg_group_read(g, &b, &r0);
    if (r0.cpu_usage_ns == RT_NULL_U64) {
        print_message("skipped: the job's group has no CPU time file\n");
        rt_cg_group_free(g);
        rt_job_cgroup_free(jg);
        rt_buf_free(&b);
        skip();
    }
    assert_int_equal(rt_job_cgroup_procs(jg), 0);

    int in[2], go[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(go), 0);
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        /* the CPU time the child used before it entered is in its rusage, not (all) in the group */
        char x = rt_job_cgroup_enter(jg) == 0 ? 'y' : 'n';
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        double before = ts.tv_sec * 1e9 + ts.tv_nsec;
        if (write(in[1], &x, 1) != 1 || write(in[1], &before, sizeof before) != sizeof before ||
            read(go[0], &x, 1) != 1)
            _exit(2);
        burn(0.3);
        _exit(0);
    }
    char x = 0;
    assert_int_equal(read(in[0], &x, 1), 1);
    assert_int_equal(x, 'y');
    double before_ns = 0;
    assert_int_equal(read(in[0], &before_ns, sizeof before_ns), sizeof before_ns);
    assert_int_equal(rt_job_cgroup_procs(jg), 1);
    int64_t pids[4];
    assert_int_equal(rt_cg_group_procs(g, &b, pids, 4), 1);
    assert_int_equal(pids[0], c);
    assert_int_equal(write(go[1], &x, 1), 1);
    int st;
    struct rusage ru;
    assert_int_equal(wait4(c, &st, 0, &ru), c);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(in[0]);
    close(in[1]);
    close(go[0]);
    close(go[1]);
    assert_int_equal(rt_job_cgroup_procs(jg), 0);

    rt_cg_reading r;
    rt_cg_group_read(g, &b, &r);
    double ru_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
    double cg_ns = (double)(r.cpu_usage_ns - r0.cpu_usage_ns);
    print_message("job group %s (%s): cgroup %.3f ms, rusage %.3f ms (%.3f ms of it before entering)\n", path,
                  rt_cg_group_version(g), cg_ns / 1e6, ru_ns / 1e6, before_ns / 1e6);
    /* the run time not yet accounted when the child moved is charged to the group it moved to:
     * the group's figure lies between the rusage less what ran before entering and the whole */
    assert_true(cg_ns >= 0.98 * (ru_ns - before_ns) && cg_ns <= 1.02 * ru_ns);
    if (r.pids_peak != RT_NULL_I64)
        assert_true(r.pids_peak >= 1);
    if (r.memory_peak_bytes != RT_NULL_U64)
        assert_true(r.memory_peak_bytes > 0);
    /* the group goes while a reader still holds its files: they read as gone, nothing breaks */
    rt_job_cgroup_free(jg);
    for (int i = 0; i < nd; i++)
        if (access(dirs[i], F_OK) == 0)
            fail_msg("%s is still there", dirs[i]);
    rt_cg_group_read(g, &b, &r);
    assert_true(r.cpu_usage_ns == RT_NULL_U64 || r.cpu_usage_ns >= r0.cpu_usage_ns);
    rt_cg_group_free(g);
    rt_buf_free(&b);
}

static void job_live(void **state)
{
    (void)state;
    job_live_run(NULL, NULL);
}

/* Writes a proc root to dir/proc holding only the lines of the real self/mountinfo and
 * self/cgroup that keep: the machine seen as pure v2 or pure v1. Returns false when none is. */
static bool fake_proc(const char *dir, bool v2)
{
    char path[512], line[4096];
    snprintf(path, sizeof path, "%s/proc", dir);
    mkdir(path, 0755);
    const char *src[] = {"/proc/self/mountinfo", "/proc/self/cgroup"}, *dst[] = {"self/mountinfo", "self/cgroup"};
    int kept = 0;
    for (int i = 0; i < 2; i++) {
        FILE *in = fopen(src[i], "r");
        assert_non_null(in);
        char text[1 << 14] = "";
        size_t used = 0;
        while (fgets(line, sizeof line, in)) {
            bool is_v2 = i == 0 ? strstr(line, " - cgroup2 ") != NULL : strncmp(line, "0::", 3) == 0;
            bool is_v1 = i == 0 ? strstr(line, " - cgroup ") != NULL : !is_v2;
            if ((v2 ? is_v2 : is_v1) && used + strlen(line) < sizeof text) {
                memcpy(text + used, line, strlen(line) + 1);
                used += strlen(line);
                kept += i == 0;
            }
        }
        fclose(in);
        unit_put(path, dst[i], text);
    }
    return kept > 0;
}

/* The same on this machine seen as pure v2 (the unified tree alone) and as pure v1 (the v1
 * hierarchies alone: CPU time from cpuacct). */
static void job_live_layouts(void **state)
{
    (void)state;
    for (int v2 = 1; v2 >= 0; v2--) {
        char dir[] = "/tmp/rt-cglive-XXXXXX", proc[64];
        unit_tmpdir(dir);
        snprintf(proc, sizeof proc, "%s/proc", dir);
        if (fake_proc(dir, v2))
            job_live_run(proc, v2 ? "v2" : "v1");
        unit_rmtree(dir);
    }
}

/* rt_job_cgroup_kill live (proc_root NULL: the real layout): a child in the group with a
 * grandchild it left (double-forked, in a session of its own) and one of its own; the kill
 * empties the group (v2 cgroup.kill, v1 SIGKILL over cgroup.procs), the child dies of SIGKILL,
 * and the group's directories then go. We are a subreaper meanwhile to reap the orphan. */
static void job_kill_run(const char *proc_root)
{
    rt_job_cgroup_options o = RT_JOB_CGROUP_OPTIONS_INIT;
    o.proc_root = proc_root;
    rt_job_cgroup *jg = NULL;
    if (rt_job_cgroup_create(&o, &jg) != RT_OK) {
        print_message("skipped: no writable cgroup hierarchy\n");
        skip();
    }
    const char *path = rt_job_cgroup_path(jg);
    char dirs[RT_CG_NHIER][1100];
    int nd = job_dirs(strrchr(path, '/') + 1, dirs, RT_CG_NHIER);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        if (rt_job_cgroup_enter(jg) != 0)
            _exit(3);
        if (fork() == 0) { /* the orphan: double-forked away */
            setsid();
            if (fork() == 0) {
                pause();
                _exit(0);
            }
            _exit(0);
        }
        if (fork() == 0) {
            pause();
            _exit(0);
        }
        char x = 'y';
        if (write(ready[1], &x, 1) != 1)
            _exit(4);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char x = 0;
    assert_int_equal(read(ready[0], &x, 1), 1);
    close(ready[0]);
    int64_t seen; /* the middle one's exit (4 until then) */
    UNIT_WAIT_UNTIL((seen = rt_job_cgroup_procs(jg)) == 3, UNIT_WAIT_SECS);
    /* killed before anything is asserted: a failed test leaves no process behind (they would
     * hold CTest's pipe open) */
    rt_error killed = rt_job_cgroup_kill(jg);
    assert_int_equal(seen, 3);
    assert_int_equal(killed, RT_OK);
    assert_int_equal(rt_job_cgroup_procs(jg), 0);
    int st = 0;
    assert_int_equal(waitpid(c, &st, 0), c);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    while (waitpid(-1, NULL, 0) > 0) /* the orphans, killed too */
        ;
    assert_int_equal(errno, ECHILD);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
    assert_int_equal(rt_job_cgroup_kill(jg), RT_OK); /* empty already: at once */
    rt_job_cgroup_free(jg);
    for (int i = 0; i < nd; i++)
        if (access(dirs[i], F_OK) == 0)
            fail_msg("%s is still there", dirs[i]);
}

/* rt_job_cgroup_kill on the real layout, then seen as pure v2 (cgroup.kill) and pure v1 (no
 * cgroup.kill: SIGKILL over the lists); NULL is invalid. */
static void job_kill(void **state)
{
    (void)state;
    assert_int_equal(rt_job_cgroup_kill(NULL), RT_ERR_INVALID);
    job_kill_run(NULL);
    for (int v2 = 1; v2 >= 0; v2--) {
        char dir[] = "/tmp/rt-cgkill-XXXXXX", proc[64];
        unit_tmpdir(dir);
        snprintf(proc, sizeof proc, "%s/proc", dir);
        if (fake_proc(dir, v2))
            job_kill_run(proc);
        unit_rmtree(dir);
    }
}

/* A stale group of a dead tracker is removed by the next create; one holding a process stays. */
static void job_live_stale(void **state)
{
    (void)state;
    rt_job_cgroup *jg = NULL;
    if (rt_job_cgroup_create(NULL, &jg) != RT_OK)
        skip();
    char dirs[RT_CG_NHIER][1100], name[64];
    const char *path = rt_job_cgroup_path(jg);
    int nd = job_dirs(strrchr(path, '/') + 1, dirs, RT_CG_NHIER), pick = -1;
    for (int i = 0; i < nd && pick < 0; i++)
        if (access(dirs[i], F_OK) == 0)
            pick = i;
    rt_job_cgroup_free(jg);
    assert_true(pick >= 0);
    char parent[1100], empty[1200], busy[1200], procs[1300];
    memcpy(parent, dirs[pick], sizeof parent);
    *strrchr(parent, '/') = '\0';
    pid_t dead = dead_pid();
    snprintf(name, sizeof name, "resource-tracker-%d-7", (int)dead);
    snprintf(empty, sizeof empty, "%s/%s", parent, name);
    snprintf(busy, sizeof busy, "%s/resource-tracker-%d-8", parent, (int)dead);
    assert_int_equal(mkdir(empty, 0755), 0);
    assert_int_equal(mkdir(busy, 0755), 0);
    pid_t sleeper = fork();
    assert_true(sleeper >= 0);
    if (sleeper == 0) {
        pause();
        _exit(0);
    }
    snprintf(procs, sizeof procs, "%s/cgroup.procs", busy);
    FILE *f = fopen(procs, "w");
    assert_non_null(f);
    fprintf(f, "%d\n", (int)sleeper);
    assert_int_equal(fclose(f), 0);

    assert_int_equal(rt_job_cgroup_create(NULL, &jg), RT_OK);
    assert_int_not_equal(access(empty, F_OK), 0);
    assert_int_equal(access(busy, F_OK), 0);
    rt_job_cgroup_free(jg);
    kill(sleeper, SIGKILL);
    waitpid(sleeper, NULL, 0);
    UNIT_WAIT_UNTIL(rmdir(busy) == 0, UNIT_WAIT_SECS); /* the kernel frees the group a moment after the exit */
    assert_int_not_equal(access(busy, F_OK), 0);
}

/* The N of a group's path ".../resource-tracker-P-N". */
static unsigned name_n(const char *path)
{
    return (unsigned)strtoul(strrchr(path, '-') + 1, NULL, 10);
}

/* Ownership on the real cgroup file system: a group of a dead pid whose lock is held (a live
 * tracker in another PID namespace) stays, empty, through the next create, and goes with the
 * one after its lock is let go; the group made holds its own lock in every hierarchy (seen
 * from another descriptor) until freed; a name taken by a locked group makes the next one be
 * used, and the hierarchies already made under the taken name are removed again. */
static void job_live_owner(void **state)
{
    (void)state;
    rt_job_cgroup *jg = NULL;
    if (rt_job_cgroup_create(NULL, &jg) != RT_OK)
        skip();
    char dirs[RT_CG_NHIER][1100], name[64], parent[1100], other[1200], taken[1200];
    const char *path = rt_job_cgroup_path(jg);
    unsigned n = name_n(path);
    int nd = job_dirs(strrchr(path, '/') + 1, dirs, RT_CG_NHIER), pick = -1, made = 0;
    for (int i = 0; i < nd; i++)
        if (access(dirs[i], F_OK) == 0) {
            if (pick < 0)
                pick = i;
            made++;
            /* the owner's lock, in every hierarchy */
            int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            assert_true(fd >= 0);
            assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
            assert_int_equal(errno, EWOULDBLOCK);
            close(fd);
        }
    rt_job_cgroup_free(jg);
    assert_true(pick >= 0);
    memcpy(parent, dirs[pick], sizeof parent);
    *strrchr(parent, '/') = '\0';

    /* another namespace's live tracker: its pid means nothing here */
    snprintf(name, sizeof name, "resource-tracker-%d-5", (int)dead_pid());
    snprintf(other, sizeof other, "%s/%s", parent, name);
    assert_int_equal(mkdir(other, 0755), 0);
    int lock_fd = hold_lock(other);
    assert_int_equal(rt_job_cgroup_create(NULL, &jg), RT_OK);
    assert_int_equal(name_n(rt_job_cgroup_path(jg)), n + 1);
    assert_int_equal(access(other, F_OK), 0);
    rt_job_cgroup_free(jg);
    close(lock_fd);
    assert_int_equal(rt_job_cgroup_create(NULL, &jg), RT_OK);
    assert_int_not_equal(access(other, F_OK), 0);
    rt_job_cgroup_free(jg);

    /* the next name (n + 3) taken and locked in one hierarchy: n + 4 is made, in as many as
     * before, and nothing of n + 3 is left but the taken one */
    snprintf(taken, sizeof taken, "%s/resource-tracker-%d-%u", parent, (int)getpid(), n + 3);
    assert_int_equal(mkdir(taken, 0755), 0);
    lock_fd = hold_lock(taken);
    assert_int_equal(rt_job_cgroup_create(NULL, &jg), RT_OK);
    path = rt_job_cgroup_path(jg);
    assert_int_equal(name_n(path), n + 4);
    char now[RT_CG_NHIER][1100], then[RT_CG_NHIER][1100];
    snprintf(name, sizeof name, "resource-tracker-%d-%u", (int)getpid(), n + 3);
    assert_int_equal(job_dirs(strrchr(path, '/') + 1, now, RT_CG_NHIER), nd);
    assert_int_equal(job_dirs(name, then, RT_CG_NHIER), nd);
    int made_now = 0;
    for (int i = 0; i < nd; i++) {
        made_now += access(now[i], F_OK) == 0;
        if (i != pick && access(then[i], F_OK) == 0)
            fail_msg("%s is left", then[i]);
    }
    assert_int_equal(made_now, made);
    rt_job_cgroup_free(jg);
    assert_int_equal(access(taken, F_OK), 0);
    close(lock_fd);
    assert_int_equal(rmdir(taken), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mounts_hybrid_capture),
        cmocka_unit_test(mounts_v1_comounted_subtree),
        cmocka_unit_test(mounts_malformed),
        cmocka_unit_test(paths_parse),
        cmocka_unit_test(keyed),
        cmocka_unit_test(memory_stat),
        cmocka_unit_test(memory_kinds),
        cmocka_unit_test(memory_refault),
        cmocka_unit_test(limits),
        cmocka_unit_test(cpu_max),
        cmocka_unit_test(pressure),
        cmocka_unit_test(io_stat),
        cmocka_unit_test(blkio),
        cmocka_unit_test(procs),
        cmocka_unit_test(group_v2),
        cmocka_unit_test(group_v1),
        cmocka_unit_test(group_hybrid),
        cmocka_unit_test_teardown(group_few_descriptors, few_descriptors_done),
        cmocka_unit_test(group_sparse_and_unreachable),
        cmocka_unit_test(limits_kept_a_second),
        cmocka_unit_test(memberships_per_path),
        cmocka_unit_test(job_fake_tree),
        cmocka_unit_test(job_live),
        cmocka_unit_test(job_live_layouts),
        cmocka_unit_test(job_live_stale),
        cmocka_unit_test(job_live_owner),
        cmocka_unit_test(job_kill),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unit_body(NULL, NULL);
    return rc;
}
