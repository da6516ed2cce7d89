/* test_proctree.c - the process tree walk on fixture trees: children of every thread, zombies,
 * a command name holding ") (", a child that vanished mid-scan, processes leaving the tree,
 * and a reused pid never taken for the root. */
#include "unit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/proctree.h"

static void fixture_tree(void **state)
{
    (void)state;
    char p[1024];
    snprintf(p, sizeof p, "%s/proctree/proc", RT_FIXTURES);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 100, false, NULL, 100);
    rt_tree_totals tt;
    assert_int_equal(rt_proctree_scan(t, 1.0, &tt), 0);
    assert_true(rt_proctree_root_known(t));
    assert_true(tt.root_alive);
    assert_int_equal(tt.processes, 5); /* 106 vanished: skipped */
    assert_int_equal(tt.children, 4);  /* 103 hangs under thread 105 of 101 */
    assert_int_equal(tt.threads, 6);
    assert_int_equal(tt.utime_ns, 572ull * 10000000ull); /* utime+cutime over the tree */
    assert_int_equal(tt.stime_ns, 151ull * 10000000ull);
    assert_int_equal(tt.read_bytes, 510000);
    assert_int_equal(tt.write_bytes, 5100);
    assert_true(tt.io_ok);
    assert_int_equal(tt.pss_kib, (1000 + 5000 + 300 + 2000) * 2); /* the zombie has none */
    assert_int_equal(tt.swap_kib, 0 + 1 + 2 + 3);
    /* the same again: nothing changed, nothing departed */
    rt_tree_totals t2;
    rt_proctree_scan(t, 2.0, &t2);
    assert_int_equal(t2.utime_ns, tt.utime_ns);
    assert_int_equal(t2.processes, 5);
    rt_proctree_free(t);

    /* a root that does not exist */
    t = rt_proctree_new(&r, 999, false, NULL, 100);
    rt_proctree_scan(t, 1.0, &tt);
    assert_false(rt_proctree_root_known(t));
    assert_int_equal(tt.processes, 0);
    rt_proctree_free(t);
    rt_roots_close(&r);
}

static void put(const char *dir, const char *rel, const char *text)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    /* rewrite in place (same inode), as a live process's file changes under a kept fd */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void stat_line(char *buf, size_t cap, int pid, int ppid, int ut, int cut, unsigned long start)
{
    snprintf(buf, cap, "%d (p) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %lu 1000 10 0 0 0\n", pid, ppid, ut, cut,
             start);
}

static void departures_and_reuse(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-tree-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char s[256];
    stat_line(s, sizeof s, 200, 1, 100, 0, 7000);
    put(dir, "200/stat", s);
    put(dir, "200/task/200/children", "201 ");
    stat_line(s, sizeof s, 201, 200, 40, 0, 7100);
    put(dir, "201/stat", s);
    put(dir, "201/task/201/children", "");
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 200, false, NULL, 100);
    rt_tree_totals a;
    rt_proctree_scan(t, 1.0, &a);
    assert_int_equal(a.processes, 2);
    assert_int_equal(a.utime_ns, 140ull * 10000000ull);
    assert_false(a.io_ok); /* no io files here: I/O is unknown, not zero */

    /* 201 exits and 200 reaps it: 201's 40 ticks (and 10 more) move into 200's cutime */
    put(dir, "201/stat", "");
    stat_line(s, sizeof s, 200, 1, 110, 50, 7000);
    put(dir, "200/stat", s);
    put(dir, "200/task/200/children", "");
    rt_tree_totals b;
    rt_proctree_scan(t, 2.0, &b);
    assert_int_equal(b.processes, 1);
    assert_int_equal(b.utime_ns, 160ull * 10000000ull); /* counted once, not twice */

    /* the root exits and is reaped by its own parent, outside the tree: its time stays */
    put(dir, "200/stat", "");
    rt_tree_totals c;
    rt_proctree_scan(t, 3.0, &c);
    assert_false(c.root_alive);
    assert_int_equal(c.processes, 0);
    assert_int_equal(c.utime_ns, 160ull * 10000000ull);

    /* the pid comes back as another process: never taken for the root */
    stat_line(s, sizeof s, 200, 1, 999, 0, 9999);
    put(dir, "200/stat", s);
    rt_tree_totals d;
    rt_proctree_scan(t, 4.0, &d);
    assert_false(d.root_alive);
    assert_int_equal(d.processes, 0);
    assert_int_equal(d.utime_ns, 160ull * 10000000ull);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void pidstat_parser(void **state)
{
    (void)state;
    rt_pidstat st;
    const char *a = "42 (we ird) (x) R 1 42 42 0 -1 4194304 10 5 3 6 7 3 2 1 20 -5 4 0 123456 999 77 0\n";
    assert_int_equal(rt_pidstat_parse(a, strlen(a), &st), 0);
    assert_int_equal(st.pid, 42);
    assert_int_equal(st.state, 'R');
    assert_int_equal(st.ppid, 1);
    assert_int_equal(st.utime, 7);
    assert_int_equal(st.cstime, 1);
    assert_int_equal(st.num_threads, 4);
    assert_int_equal(st.starttime, 123456);
    assert_int_equal(st.rss_pages, 77);
    assert_int_equal(st.minflt, 10); /* own faults, not the children's (5 and 6) */
    assert_int_equal(st.majflt, 3);
    const char *trunc = "42 (x) R 1 42 42 0 -1 4194304 10 0 0 0 7 3";
    assert_int_equal(rt_pidstat_parse(trunc, strlen(trunc), &st), -1);
    assert_int_equal(rt_pidstat_parse("42 (x", 5, &st), -1);
    uint64_t pss, swap;
    rt_pidio io;
    /* 300 MiB written then deleted before writeback: written and cancelled both */
    const char *iot = "rchar: 5\nwchar: 6\nread_bytes: 4096\nwrite_bytes: 314572800\ncancelled_write_bytes: 314572800\n";
    assert_int_equal(rt_pidio_parse(iot, strlen(iot), &io), 0);
    assert_int_equal(io.read_bytes, 4096);
    assert_int_equal(io.write_bytes, 314572800);
    assert_int_equal(io.cancelled_write_bytes, 314572800);
    assert_int_equal(rt_pidio_parse("rchar: 5\n", 9, &io), -1);
    /* only the two lines a hand-made file may hold: cancelled reads 0 */
    const char *two = "read_bytes: 1\nwrite_bytes: 2\n";
    assert_int_equal(rt_pidio_parse(two, strlen(two), &io), 0);
    assert_int_equal(io.write_bytes, 2);
    assert_int_equal(io.cancelled_write_bytes, 0);
    /* cut short inside the last line, without its newline; then a write_bytes that is not a number */
    const char *cut = "read_bytes: 7\nwrite_bytes: 9\ncancelled_write_bytes: 3";
    assert_int_equal(rt_pidio_parse(cut, strlen(cut), &io), 0);
    assert_int_equal(io.cancelled_write_bytes, 3);
    const char *bad = "read_bytes: 7\nwrite_bytes: x\ncancelled_write_bytes: 3\n";
    assert_int_equal(rt_pidio_parse(bad, strlen(bad), &io), -1);
    /* "cancelled_write_bytes" is not taken for "write_bytes" */
    const char *order = "cancelled_write_bytes: 5\nread_bytes: 1\n";
    assert_int_equal(rt_pidio_parse(order, strlen(order), &io), -1);
    const char *sm = "55-66 ---p 0 00:00 0 [rollup]\nRss: 10 kB\nPss: 7 kB\nPss_Anon: 5 kB\nSwap: 3 kB\n";
    assert_int_equal(rt_smaps_rollup_parse(sm, strlen(sm), &pss, &swap), 0);
    assert_int_equal(pss, 7);
    assert_int_equal(swap, 3);
}

static int64_t seen[8];
static int nseen;
static void collect(void *user, int64_t pid)
{
    (void)user;
    if (nseen < 8)
        seen[nseen++] = pid;
}

static void children_parser(void **state)
{
    (void)state;
    nseen = 0;
    assert_int_equal(rt_children_parse("12 345 6 ", 9, collect, NULL), 3);
    assert_int_equal(seen[1], 345);
    nseen = 0;
    assert_int_equal(rt_children_parse("", 0, collect, NULL), 0);
    assert_int_equal(rt_children_parse("7 x 8", 5, collect, NULL), 1); /* stops at junk */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_tree),
        cmocka_unit_test(departures_and_reuse),
        cmocka_unit_test(pidstat_parser),
        cmocka_unit_test(children_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
