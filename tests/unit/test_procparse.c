/* test_procparse.c - the /proc/stat, /proc/meminfo, /proc/diskstats and /proc/net/dev parsers
 * against captured files and hand-made ugly ones (old kernels, truncation, junk). */
#include "unit.h"
#include "source/sources.h"

static void stat_from_vm_capture(void **state)
{
    (void)state;
    size_t len;
    const char *buf = fixture_text("vm-virtio/proc/stat", &len);
    rt_cpu_ticks cores[8];
    rt_stat st = {.cores = cores, .core_cap = 8};
    assert_int_equal(rt_stat_parse(buf, len, &st), 0);
    assert_true(st.has_total);
    assert_int_equal(st.core_count, 2);
    assert_int_equal(cores[0].id, 0);
    assert_int_equal(cores[1].id, 1);
    assert_true(st.has_procs_running);
    /* the aggregate equals the sum of the cores, field by field */
    for (int f = 0; f < RT_CPU_NFIELDS; f++)
        assert_true(st.total.t[f] >= cores[0].t[f]);
}

static void stat_old_kernel_and_overflowing_cores(void **state)
{
    (void)state;
    const char *s = "cpu  10 2 3 400\ncpu0 5 1 1 200\ncpu3 5 1 2 200\nintr 1 2 3\nprocs_running 7\n";
    rt_cpu_ticks cores[1];
    rt_stat st = {.cores = cores, .core_cap = 1};
    assert_int_equal(rt_stat_parse(s, strlen(s), &st), 0);
    assert_int_equal(st.core_count, 2); /* counted past the caller's capacity */
    assert_int_equal(cores[0].id, 0);
    assert_int_equal(st.total.t[RT_CPU_IDLE], 400);
    assert_int_equal(st.total.t[RT_CPU_STEAL], 0); /* missing on a 2.4-era line */
    assert_int_equal(rt_cpu_total(&st.total), 415);
    assert_int_equal(rt_cpu_busy(&st.total), 15);
    assert_int_equal(st.procs_running, 7);
}

static void stat_rejects_missing_or_truncated(void **state)
{
    (void)state;
    rt_cpu_ticks cores[4];
    rt_stat st = {.cores = cores, .core_cap = 4};
    const char *a = "cpu0 1 2 3 4\nprocs_running 1\n";
    assert_int_equal(rt_stat_parse(a, strlen(a), &st), -1);
    const char *b = "cpu  1 2";
    assert_int_equal(rt_stat_parse(b, strlen(b), &st), -1);
    assert_int_equal(rt_stat_parse("", 0, &st), -1);
    const char *c = "cpu  18446744073709551616 1 1 1\n"; /* overflows u64 */
    assert_int_equal(rt_stat_parse(c, strlen(c), &st), -1);
}

static void meminfo_fields(void **state)
{
    (void)state;
    size_t len;
    const char *buf = fixture_text("server-nvme-lvm/proc/meminfo", &len);
    rt_meminfo m;
    assert_int_equal(rt_meminfo_parse(buf, len, &m), 0);
    assert_int_equal(m.kib[RT_MEM_TOTAL], 65663364);
    assert_int_equal(m.kib[RT_MEM_SRECLAIMABLE], 901236);
    assert_int_equal(m.kib[RT_MEM_SWAP_FREE], 8126460);
    assert_true(m.present & (1u << RT_MEM_AVAILABLE));
    /* "SecPageTables" (Linux 6.0) is not taken for "PageTables" */
    const char *pt = "MemTotal: 100 kB\nSecPageTables: 9 kB\nPageTables: 3 kB\n";
    assert_int_equal(rt_meminfo_parse(pt, strlen(pt), &m), 0);
    assert_int_equal(m.kib[RT_MEM_PAGE_TABLES], 3);
    /* "Active(anon)" must not be taken for "Active" */
    const char *s = "MemTotal: 100 kB\nActive(anon): 5 kB\nActive: 7 kB\n";
    assert_int_equal(rt_meminfo_parse(s, strlen(s), &m), 0);
    assert_int_equal(m.kib[RT_MEM_ACTIVE], 7);
    assert_false(m.present & (1u << RT_MEM_AVAILABLE));
    const char *bad = "MemFree: 5 kB\n";
    assert_int_equal(rt_meminfo_parse(bad, strlen(bad), &m), -1);
}

static void diskstats_field_counts(void **state)
{
    (void)state;
    size_t len;
    const char *buf = fixture_text("awkward/proc/diskstats", &len);
    rt_diskstat d[8];
    size_t n = rt_diskstats_parse(buf, len, d, 8);
    assert_int_equal(n, 5); /* the junk line is skipped */
    assert_string_equal(d[0].name, "sda");
    assert_int_equal(d[0].nfields, 14);
    assert_int_equal(d[0].sectors_read, 5000);
    assert_int_equal(d[0].sectors_written, 8000);
    assert_int_equal(d[1].nfields, 18);
    assert_int_equal(d[2].nfields, 20);
    assert_string_equal(d[3].name, "cciss/c0d0");
    assert_int_equal(d[3].major, 104);
    /* capacity smaller than the file: the count still says how many there are */
    assert_int_equal(rt_diskstats_parse(buf, len, d, 2), 5);
}

static void diskstats_vm_capture(void **state)
{
    (void)state;
    size_t len;
    const char *buf = fixture_text("vm-virtio/proc/diskstats", &len);
    rt_diskstat d[16];
    size_t n = rt_diskstats_parse(buf, len, d, 16);
    assert_true(n >= 2);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, "vda") == 0) {
            found = 1;
            assert_int_equal(d[i].nfields, 20);
        }
    assert_true(found);
}

static void diskstats_short_and_junk(void **state)
{
    (void)state;
    /* 2.6-era partition line (7 fields), a line with letters in its counters, an empty name */
    const char *s = "   8    1 sda1 100 200 300 400\n   8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n\n 8 0\n";
    rt_diskstat d[4];
    assert_int_equal(rt_diskstats_parse(s, strlen(s), d, 4), 0);
}

/* A block device's sysfs stat file: diskstats' counters without the numbers and the name. */
static void blockstat_files(void **state)
{
    (void)state;
    uint64_t r = 0, w = 0;
    const char *v11 = "     100       10     5000      500     2000       20     8000      800        0      900"
                      "     1300\n";
    assert_int_equal(rt_blockstat_parse(v11, strlen(v11), &r, &w), 0);
    assert_int_equal(r, 5000);
    assert_int_equal(w, 8000);
    /* 15 and 17 fields (discards, flushes), and a future kernel's more: the same two */
    const char *v17 = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n";
    assert_int_equal(rt_blockstat_parse(v17, strlen(v17), &r, &w), 0);
    assert_int_equal(r, 3);
    assert_int_equal(w, 7);
    const char *v19 = "1 2 33 4 5 6 77 8 9 10 11 12 13 14 15 16 17 18 19";
    assert_int_equal(rt_blockstat_parse(v19, strlen(v19), &r, &w), 0); /* no newline at the end */
    assert_int_equal(r, 33);
    assert_int_equal(w, 77);
    /* too few, junk, a diskstats line (a name among the numbers), two lines, nothing */
    static const char *const bad[] = {"1 2 3 4 5 6 7 8 9 10\n", "1 2 3 4 5 6 7 8 9 10 x\n",
                                      "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n",
                                      "1 2 3 4 5 6 7 8 9 10 11\n1 2 3 4 5 6 7 8 9 10 11\n", "", "\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = w = 42;
        size_t len;
        const char *b = unit_body(bad[i], &len); /* no NUL after the bytes */
        assert_int_equal(rt_blockstat_parse(b, len, &r, &w), -1);
        assert_int_equal(r, 42); /* untouched */
        assert_int_equal(w, 42);
    }
    unit_body(NULL, NULL);
}

static void netdev_lines(void **state)
{
    (void)state;
    size_t len;
    const char *buf = fixture_text("server-nvme-lvm/proc/net/dev", &len);
    rt_netdev nd[16];
    size_t n = rt_netdev_parse(buf, len, nd, 16);
    assert_int_equal(n, 7);
    assert_string_equal(nd[0].name, "lo");
    assert_string_equal(nd[2].name, "enp65s0f0");
    assert_int_equal(nd[2].rx_bytes, 555000000000ull);
    assert_int_equal(nd[2].tx_bytes, 777000000000ull);
    /* a name glued to its counters, as the kernel prints long names */
    const char *s = "h1\nh2\nverylongname0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\nbad: 1 2 3\n";
    assert_int_equal(rt_netdev_parse(s, strlen(s), nd, 16), 1);
    assert_string_equal(nd[0].name, "verylongname0");
    assert_int_equal(nd[0].rx_bytes, 1);
    assert_int_equal(nd[0].tx_bytes, 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stat_from_vm_capture),   cmocka_unit_test(stat_old_kernel_and_overflowing_cores),
        cmocka_unit_test(stat_rejects_missing_or_truncated), cmocka_unit_test(meminfo_fields),
        cmocka_unit_test(diskstats_field_counts), cmocka_unit_test(diskstats_vm_capture),
        cmocka_unit_test(diskstats_short_and_junk),
        cmocka_unit_test(blockstat_files), cmocka_unit_test(netdev_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
