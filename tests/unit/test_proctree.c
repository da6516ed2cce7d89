/* test_proctree.c - the process tree walk on fixture trees: children of every thread, zombies,
 * a command name holding ") (", a child that vanished mid-scan, processes leaving the tree,
 * a reused pid never taken for the root, the root alone, the quick path's every-other-scan
 * check of long sleepers, when PSS is re-read (an exiting process's memory released: none),
 * the peak RSS and cancelled writes, the light I/O pass between scans, a child in its parent's
 * memory counted once; and the stat and children parsers it reads with. Real forked processes:
 * test_proctree_live.c. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source/proctree.h"

/* Opens the roots of the fixture tree (tests/fixtures/proctree) and a tree rooted at 100. */
static rt_proctree *fixture_open(rt_roots *r)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/proctree/proc", RT_FIXTURES);
    assert_int_equal(rt_roots_open(r, p, "/nonexistent"), RT_OK);
    return rt_proctree_new(r, 100, false, NULL, 100, 30.0);
}

static void fixture_tree(void **state)
{
    (void)state;
    rt_roots r;
    rt_proctree *t = fixture_open(&r);
    rt_tree_totals tt;
    assert_int_equal(rt_proctree_scan(t, 1.0, &tt), 0);
    assert_true(rt_proctree_root_known(t));
    assert_true(tt.root_alive);
    assert_int_equal(tt.processes, 5); /* 106 vanished: skipped */
    assert_int_equal(tt.children, 3);  /* 101 102 103 (under thread 105 of 101); 104 a zombie */
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
    t = rt_proctree_new(&r, 999, false, NULL, 100, 30.0);
    rt_proctree_scan(t, 1.0, &tt);
    assert_false(rt_proctree_root_known(t));
    assert_int_equal(tt.processes, 0);
    rt_proctree_free(t);
    rt_roots_close(&r);
}

/* The same tree with the root alone: no descendant, its own CPU time (utime 10, stime 5
 * ticks; not its reaped children's 200 and 100), its own files' I/O and memory. */
static void fixture_root_only(void **state)
{
    (void)state;
    rt_roots r;
    rt_proctree *t = fixture_open(&r);
    rt_proctree_set_root_only(t);
    rt_tree_totals tt;
    for (double mono = 1.0; mono <= 2.0; mono += 1.0) {
        assert_int_equal(rt_proctree_scan(t, mono, &tt), 0);
        assert_true(tt.root_alive);
        assert_int_equal(tt.processes, 1);
        assert_int_equal(tt.children, 0);
        assert_int_equal(tt.threads, 1);
        assert_int_equal(tt.utime_ns, 10ull * 10000000ull);
        assert_int_equal(tt.stime_ns, 5ull * 10000000ull);
        assert_int_equal(tt.read_bytes, 100000);
        assert_int_equal(tt.write_bytes, 1000);
        assert_int_equal(tt.pss_kib, 1000 * 2);
        assert_int_equal(tt.rss_kib, 1000 * 4);
    }
    size_t n;
    rt_proctree_live(t, &n);
    assert_int_equal(n, 1);
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
    rt_proctree *t = rt_proctree_new(&r, 200, false, NULL, 100, 30.0);
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

/* A process asleep for many checks is looked at every other scan only: when it wakes, its
 * CPU time is counted at most one scan late, and then exactly; the root is always looked at. */
static void long_sleepers_checked_every_other_scan(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-sleep-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char s[256];
    stat_line(s, sizeof s, 700, 1, 10, 0, 7000);
    put(dir, "700/stat", s);
    put(dir, "700/task/700/children", "701 ");
    put(dir, "700/schedstat", "100 0 1\n");
    stat_line(s, sizeof s, 701, 700, 20, 0, 7100);
    put(dir, "701/stat", s);
    put(dir, "701/task/701/children", "");
    put(dir, "701/schedstat", "200 0 1\n");
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 700, false, NULL, 100, 30.0);
    rt_tree_totals tt;
    for (int i = 0; i < 20; i++)
        rt_proctree_scan(t, 1.0 + i * 0.1, &tt);
    assert_int_equal(tt.utime_ns, 30ull * 10000000ull);
    /* 701 wakes and runs 50 ticks */
    stat_line(s, sizeof s, 701, 700, 70, 0, 7100);
    put(dir, "701/stat", s);
    put(dir, "701/schedstat", "900 0 2\n");
    rt_proctree_scan(t, 3.1, &tt);
    uint64_t first = tt.utime_ns;
    rt_proctree_scan(t, 3.2, &tt);
    assert_true(first == 30ull * 10000000ull || first == 80ull * 10000000ull); /* now or one scan late */
    assert_int_equal(tt.utime_ns, 80ull * 10000000ull);
    /* the root is never skipped: its exit is seen at the next scan */
    put(dir, "700/stat", "");
    put(dir, "700/schedstat", "");
    rt_proctree_scan(t, 3.3, &tt);
    assert_false(tt.root_alive);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A stat line with the fields the PSS rule looks at: state, minor faults and RSS pages. */
static void stat_mem(char *buf, size_t cap, int pid, int ppid, char state, unsigned long minflt, unsigned long rss)
{
    snprintf(buf, cap, "%d (p) %c %d 1 1 0 -1 0 %lu 0 0 0 1 0 0 0 20 0 1 0 %d 1000 %lu 0 0 0\n", pid, state, ppid,
             minflt, 7000 + pid, rss);
}

static void pss_file(const char *dir, int pid, int kib)
{
    char rel[64], text[128];
    snprintf(rel, sizeof rel, "%d/smaps_rollup", pid);
    snprintf(text, sizeof text, "00-ff ---p 0 00:00 0 [rollup]\nRss: 9999 kB\nPss: %d kB\nSwap: 0 kB\n", kib);
    put(dir, rel, text);
}

/* A stat line with threads, own and reaped-children ticks and RSS pages. */
static void stat_split(char *buf, size_t cap, int pid, int ppid, int threads, int ut, int cut, unsigned long rss)
{
    snprintf(buf, cap, "%d (p) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 %d 0 %d 1000 %lu 0 0 0\n", pid, ppid, ut, cut,
             threads, 7000 + pid, rss);
}

/* A whole rollup: Pss, and private / shared split into their clean and dirty halves. */
static void rollup_file(const char *dir, int pid, int pss, int priv, int shared)
{
    char rel[64], text[400];
    snprintf(rel, sizeof rel, "%d/smaps_rollup", pid);
    snprintf(text, sizeof text,
             "00-ff ---p 0 00:00 0 [rollup]\nRss: %d kB\nPss: %d kB\nPss_Dirty: 1 kB\nShared_Clean: %d kB\n"
             "Shared_Dirty: %d kB\nPrivate_Clean: %d kB\nPrivate_Dirty: %d kB\nSwap: 0 kB\nSwapPss: 0 kB\n",
             priv + shared, pss, shared / 2, shared - shared / 2, priv / 4, priv - priv / 4);
    put(dir, rel, text);
}

static void run_time(const char *dir, int pid, unsigned long ns)
{
    char rel[64], text[64];
    snprintf(rel, sizeof rel, "%d/schedstat", pid);
    snprintf(text, sizeof text, "%lu 0 1\n", ns);
    put(dir, rel, text);
}

/* A sleeping root 300 (50 pages, PSS 100 KiB) and its sleeping single-threaded child 301 (rss
 * pages, PSS pss KiB), each with its run time. */
static void root_and_child(const char *dir, unsigned long rss, int pss)
{
    char s[256];
    stat_mem(s, sizeof s, 300, 1, 'S', 10, 50);
    put(dir, "300/stat", s);
    put(dir, "300/task/300/children", "301 ");
    run_time(dir, 300, 1000);
    pss_file(dir, 300, 100);
    stat_mem(s, sizeof s, 301, 300, 'S', 20, rss);
    put(dir, "301/stat", s);
    put(dir, "301/task/301/children", "");
    run_time(dir, 301, 500);
    pss_file(dir, 301, pss);
}

/* Memory taken from a sleeping process (reclaim, swap: its RSS fell without its running) is not
 * seen by the quick path until its full read is due; a scan asked to read all sees it at once,
 * its PSS re-read with it, and the scan after it takes the quick path again. */
static void read_all_sees_reclaim(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-reclaim-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char s[256];
    root_and_child(dir, 1000, 4000);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 600.0);
    rt_tree_totals tt;
    rt_proctree_scan(t, 0.0, &tt);
    uint64_t page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
    assert_int_equal(tt.rss_kib, (50 + 1000) * page_kib);
    assert_int_equal(tt.pss_kib, 4100);
    /* 301 swapped out to 200 pages, asleep all the while */
    stat_mem(s, sizeof s, 301, 300, 'S', 20, 200);
    put(dir, "301/stat", s);
    pss_file(dir, 301, 800);
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.rss_kib, (50 + 1000) * page_kib); /* the quick path: as last read */
    rt_proctree_read_all_next(t);
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.rss_kib, (50 + 200) * page_kib);
    assert_int_equal(tt.pss_kib, 900);
    /* once: the next scan takes the quick path again */
    stat_mem(s, sizeof s, 301, 300, 'S', 20, 100);
    put(dir, "301/stat", s);
    rt_proctree_scan(t, 3.0, &tt);
    assert_int_equal(tt.rss_kib, (50 + 200) * page_kib);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The records a test hands the tree at its next scan (rt_proctree_set_exits_source). */
typedef struct exits_feed {
    const rt_exit_rec *recs;
    size_t n;
} exits_feed;

static void feed_exits(void *user, const rt_exit_rec **out, size_t *n)
{
    exits_feed *f = user;
    *out = f->recs;
    *n = f->n;
    f->n = 0; /* once */
}

/* The kernel's exit records between two scans of root 300 and its child 301: a child of 301 born
 * and gone between them (400), its own child (401: a chain within the records, the grandchild's
 * record first), each counted once at its peak on top of what the walk bounds; a thread of the
 * live 301 that ended (its process's memory is the walk's); another process of the machine
 * (500, left out). The next scan without records keeps the figure (it never decreases). */
static void exits_between_scans(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-exits-XXXXXX";
    assert_non_null(mkdtemp(dir));
    root_and_child(dir, 1000, 4000);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 600.0);
    exits_feed feed = {NULL, 0};
    rt_proctree_set_exits_source(t, feed_exits, &feed);
    rt_tree_totals tt;
    rt_proctree_scan(t, 0.0, &tt);
    uint64_t walk = tt.rss_hwm_tree_kib, one = tt.rss_hwm_kib;
    assert_int_equal(tt.exits_seen, 0);
    const rt_exit_rec recs[] = {
        {.pid = 401, .tgid = 401, .ppid = 400, .hiwater_rss_kib = 20000},
        {.pid = 500, .tgid = 500, .ppid = 1, .hiwater_rss_kib = 99999},
        {.pid = 402, .tgid = 400, .ppid = 301, .hiwater_rss_kib = 9000}, /* a thread of 400 */
        {.pid = 400, .tgid = 400, .ppid = 301, .hiwater_rss_kib = 10000},
        {.pid = 302, .tgid = 301, .ppid = 300, .hiwater_rss_kib = 3000}, /* a thread of the live 301 */
    };
    feed = (exits_feed){recs, sizeof recs / sizeof recs[0]};
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.rss_hwm_tree_kib, walk + 30000);
    assert_int_equal(tt.rss_hwm_kib, one > 20000 ? one : 20000);
    assert_int_equal(tt.exits_seen, 2);
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.rss_hwm_tree_kib, walk + 30000);
    assert_int_equal(tt.exits_seen, 2);
    rt_proctree_free(t);
    /* without a source: nothing counted, exits_seen -1 */
    t = rt_proctree_new(&r, 300, false, NULL, 100, 600.0);
    rt_proctree_scan(t, 0.0, &tt);
    assert_int_equal(tt.exits_seen, -1);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A stat line of pid whose SIGCHLD disposition is ignore (sigign) or the default: field 33. */
static void stat_sig(char *buf, size_t cap, int pid, int ppid, int ut, int cut, unsigned long start, bool sigign)
{
    snprintf(buf, cap,
             "%d (p) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %lu 1000 10 0 0 0 0 0 0 0 0 %d 0\n", pid, ppid, ut,
             cut, start, sigign ? 1 << 16 : 0);
}

/* CPU of children the kernel reaps without a wait (their parent ignores SIGCHLD: it never reaches
 * the parent's cutime). Root 200 and its child 201 (40 ticks) seen by a walk; then 201 ends
 * (45 ticks by its record) and 202, born and gone between the walks, ends (30 ticks): with a
 * parent that ignores SIGCHLD, 201's last reading and the 5 ticks it ran since, and 202's 30, are
 * the job's; with a parent that waits, both are in its cutime (75 ticks), counted once. Without
 * records, the ignoring parent's child counts to its last reading (a lower bound). */
static void exits_cpu_of_unwaited_children(void **state)
{
    (void)state;
    const rt_exit_rec recs[] = {
        {.pid = 201, .tgid = 201, .ppid = 200, .utime_us = 450000},
        {.pid = 202, .tgid = 202, .ppid = 200, .utime_us = 200000, .stime_us = 100000},
        {.pid = 202, .tgid = 202, .group = true}, /* the group's record: no CPU of its own */
    };
    for (int mode = 0; mode < 3; mode++) { /* ignoring with records, waiting, ignoring without */
        bool ign = mode != 1, records = mode != 2;
        char dir[] = "/tmp/rt-unwaited-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char s[256];
        stat_sig(s, sizeof s, 200, 1, 100, 0, 7000, ign);
        put(dir, "200/stat", s);
        put(dir, "200/task/200/children", "201 ");
        stat_sig(s, sizeof s, 201, 200, 40, 0, 7100, false);
        put(dir, "201/stat", s);
        put(dir, "201/task/201/children", "");
        rt_roots r;
        assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
        rt_proctree *t = rt_proctree_new(&r, 200, false, NULL, 100, 30.0);
        exits_feed feed = {NULL, 0};
        if (records)
            rt_proctree_set_exits_source(t, feed_exits, &feed);
        rt_tree_totals a;
        rt_proctree_scan(t, 1.0, &a);
        assert_int_equal(a.utime_ns, 140ull * 10000000ull);
        put(dir, "201/stat", "");
        stat_sig(s, sizeof s, 200, 1, 110, ign ? 0 : 75, 7000, ign);
        put(dir, "200/stat", s);
        put(dir, "200/task/200/children", "");
        feed = (exits_feed){recs, sizeof recs / sizeof recs[0]};
        rt_tree_totals b;
        rt_proctree_scan(t, 2.0, &b);
        uint64_t want = mode == 0 ? 110 + 45 + 20 : mode == 1 ? 110 + 75 : 110 + 40;
        assert_int_equal(b.utime_ns, want * 10000000ull);
        assert_int_equal(b.stime_ns, mode == 0 ? 10ull * 10000000ull : 0);
        rt_proctree_free(t);
        rt_roots_close(&r);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* The PSS re-read rule, on a root 300 and its single-threaded child 301 whose smaps_rollup
 * files change behind RSS's back: the age bound holds on the quick path, and a fault or a
 * process joining or leaving re-reads its relatives' (here: everyone's). */
static void pss_rereads(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-pss-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char s[256];
    root_and_child(dir, 10, 10);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 4.0); /* max_age: 3 to 4 s */
    rt_tree_totals tt;
    rt_proctree_scan(t, 0.0, &tt);
    assert_true(tt.pss_ok);
    assert_int_equal(tt.pss_kib, 110);

    /* 301 ran (a full read) without faulting or changing RSS: no reason to re-read yet */
    run_time(dir, 301, 600);
    pss_file(dir, 301, 20);
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.pss_kib, 110);
    /* asleep since (the quick path), but its PSS is 4.5 s old: past any max_age */
    rt_proctree_scan(t, 4.5, &tt);
    assert_int_equal(tt.pss_kib, 120);

    /* 301 faults (a copy-on-write break): the sleeping root's share changed too */
    pss_file(dir, 300, 200);
    stat_mem(s, sizeof s, 301, 300, 'S', 70, 10);
    put(dir, "301/stat", s);
    run_time(dir, 301, 700);
    rt_proctree_scan(t, 5.0, &tt);
    assert_int_equal(tt.pss_kib, 220);

    /* 302 joins under 301 (no faults anywhere): everyone's share moved */
    stat_mem(s, sizeof s, 302, 301, 'S', 5, 10);
    put(dir, "302/stat", s);
    put(dir, "302/task/302/children", "");
    run_time(dir, 302, 100);
    pss_file(dir, 302, 5);
    put(dir, "301/task/301/children", "302 ");
    run_time(dir, 301, 800);
    pss_file(dir, 300, 150);
    rt_proctree_scan(t, 6.0, &tt);
    assert_int_equal(tt.processes, 3);
    assert_int_equal(tt.pss_kib, 150 + 20 + 5);

    /* 302 exits and 301 reaps it: the others' shares grow back */
    put(dir, "302/stat", "");
    put(dir, "302/schedstat", "");
    put(dir, "301/task/301/children", "");
    run_time(dir, 301, 900);
    pss_file(dir, 300, 160);
    pss_file(dir, 301, 30);
    rt_proctree_scan(t, 6.5, &tt);
    assert_int_equal(tt.processes, 2);
    assert_int_equal(tt.pss_kib, 160 + 30);

    /* nothing moved: nothing re-read (the files' new figures stay unseen) */
    pss_file(dir, 300, 1);
    pss_file(dir, 301, 2);
    rt_proctree_scan(t, 7.0, &tt);
    assert_int_equal(tt.pss_kib, 160 + 30);
    /* and at no scan is a PSS older than max_age, whichever path a process took */
    for (double mono = 7.5; mono < 30.0; mono += 0.5) {
        rt_proctree_scan(t, mono, &tt);
        if (mono >= 6.5 + 4.0)
            assert_int_equal(tt.pss_kib, 1 + 2);
    }
    /* 301 is exiting: the kernel released its memory (RSS 0 in its stat, still running) and its
     * rollup cannot be read: it holds no PSS, not its last rollup's 2 */
    stat_mem(s, sizeof s, 301, 300, 'R', 70, 0);
    put(dir, "301/stat", s);
    put(dir, "301/smaps_rollup", "");
    run_time(dir, 301, 1000);
    rt_proctree_scan(t, 30.0, &tt);
    assert_int_equal(tt.processes, 2);
    assert_true(tt.pss_ok);
    assert_int_equal(tt.pss_kib, 1);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A rollup with Rss and Anonymous: what of it others can share (rt_rollup.exposed_kib). */
static void exposed_file(const char *dir, int pid, int pss, int rss, int anon, int shared)
{
    char rel[64], text[400];
    snprintf(rel, sizeof rel, "%d/smaps_rollup", pid);
    snprintf(text, sizeof text,
             "00-ff ---p 0 00:00 0 [rollup]\nRss: %d kB\nPss: %d kB\nShared_Clean: %d kB\nShared_Dirty: 0 kB\n"
             "Private_Clean: 0 kB\nPrivate_Dirty: %d kB\nAnonymous: %d kB\nSwap: 0 kB\n",
             rss, pss, shared, rss - shared, anon);
    put(dir, rel, text);
}

/* Sharers outside the tree (rt_proctree_reread_exposed): a process's share of a file it maps
 * moves when another process maps it, with nothing in the tree changing. The exposed pages are
 * all but private anonymous memory; a re-read asked for re-reads the most exposed processes
 * until what is left is at most the share of the tree's PSS asked, and only those. */
static void pss_rereads_for_sharers(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-sharers-XXXXXX";
    assert_non_null(mkdtemp(dir));
    root_and_child(dir, 10, 10);
    /* 300 maps 800 MiB of a file with 4 others (its PSS 160 MiB) and holds 40 MiB of its own
     * anonymous memory; 301 holds 100 MiB of anonymous memory, 2 MiB of it shared with 300 by
     * the fork (exposed: those 2 MiB) */
    exposed_file(dir, 300, 200 << 10, 840 << 10, 40 << 10, 800 << 10);
    exposed_file(dir, 301, 99 << 10, 100 << 10, 100 << 10, 2 << 10);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 30.0);
    rt_tree_totals tt;
    rt_proctree_scan(t, 0.0, &tt);
    assert_int_equal(tt.pss_kib, 299 << 10);
    assert_int_equal(tt.exposed_kib, (840 + 2) << 10); /* 840 - 0 (no anonymous beyond the shared); 100 - (100 - 2) */

    /* a fifth process maps the file: 300's share falls to 128 MiB; nothing in the tree moved */
    exposed_file(dir, 300, 168 << 10, 840 << 10, 40 << 10, 800 << 10);
    exposed_file(dir, 301, 98 << 10, 100 << 10, 100 << 10, 2 << 10);
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.pss_kib, 299 << 10); /* no rule re-reads them */
    /* 2.5% of the tree's PSS: 301's 2 MiB of exposure may stay unread, 300's may not */
    assert_int_equal(rt_proctree_reread_exposed(t, 0.025), 1);
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.pss_kib, (168 + 99) << 10);
    assert_true(rt_proctree_sharers_secs(t) >= 0.0);
    assert_true(rt_proctree_sharers_secs(t) == 0.0); /* taken: reset */
    /* asked to leave nothing: both */
    assert_int_equal(rt_proctree_reread_exposed(t, 0.0), 2);
    rt_proctree_scan(t, 3.0, &tt);
    assert_int_equal(tt.pss_kib, (168 + 98) << 10);
    /* marks do not outlive the scan that used them */
    exposed_file(dir, 300, 1, 840 << 10, 40 << 10, 800 << 10);
    rt_proctree_scan(t, 4.0, &tt);
    assert_int_equal(tt.pss_kib, (168 + 98) << 10);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Adds a sleeping single-threaded process pid under ppid with the given PSS and children. */
static void family_member(const char *dir, int pid, int ppid, unsigned long minflt, int pss, const char *kids)
{
    char s[256], rel[64];
    stat_mem(s, sizeof s, pid, ppid, 'S', minflt, 10);
    snprintf(rel, sizeof rel, "%d/stat", pid);
    put(dir, rel, s);
    snprintf(rel, sizeof rel, "%d/task/%d/children", pid, pid);
    put(dir, rel, kids);
    run_time(dir, pid, 100);
    pss_file(dir, pid, pss);
}

/* A fault that un-shares pages (faults without RSS growth) re-reads the PSS of the faulting
 * process's relatives (children, siblings, ancestors), with whom it may share copy-on-write
 * pages, and not that of a process in another branch: 500 -> {501, 502 -> 503}; 503 faults.
 * Faults that only add fresh pages re-read the process itself. */
static void pss_rereads_follow_the_family(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-family-XXXXXX";
    assert_non_null(mkdtemp(dir));
    family_member(dir, 500, 1, 1, 100, "501 502 ");
    family_member(dir, 501, 500, 1, 10, "");
    family_member(dir, 502, 500, 1, 20, "503 ");
    family_member(dir, 503, 502, 1, 30, "");
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 500, false, NULL, 100, 30.0);
    rt_tree_totals tt;
    rt_proctree_scan(t, 0.0, &tt);
    assert_int_equal(tt.pss_kib, 160);
    /* every file says something new; only 503's relatives are re-read */
    pss_file(dir, 500, 200);
    pss_file(dir, 501, 11);
    pss_file(dir, 502, 40);
    pss_file(dir, 503, 60);
    char s[256];
    stat_mem(s, sizeof s, 503, 502, 'S', 9, 10);
    put(dir, "503/stat", s);
    run_time(dir, 503, 200);
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.processes, 4);
    assert_int_equal(tt.pss_kib, 200 + 10 + 40 + 60); /* 501, in the other branch, kept */
    /* 501 faults in fresh pages (its RSS grows as much): its own PSS is re-read, its
     * relatives' are not: nothing of theirs was un-shared */
    pss_file(dir, 500, 300);
    pss_file(dir, 501, 50);
    stat_mem(s, sizeof s, 501, 500, 'S', 41, 50);
    put(dir, "501/stat", s);
    run_time(dir, 501, 300);
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.pss_kib, 200 + 50 + 40 + 60);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void io_file(const char *dir, int pid, int wr, int cancelled)
{
    char rel[64], text[160];
    snprintf(rel, sizeof rel, "%d/io", pid);
    snprintf(text, sizeof text, "rchar: 1\nwchar: 1\nread_bytes: 0\nwrite_bytes: %d\ncancelled_write_bytes: %d\n", wr,
             cancelled);
    put(dir, rel, text);
}

/* A process's main thread's own io file (task/PID/io), write_bytes at wr. */
static void task_io(const char *dir, int pid, int wr)
{
    char rel[64], text[160];
    snprintf(rel, sizeof rel, "%d/task/%d/io", pid, pid);
    snprintf(text, sizeof text, "rchar: 1\nwchar: 1\nread_bytes: 0\nwrite_bytes: %d\ncancelled_write_bytes: 0\n", wr);
    put(dir, rel, text);
}

/* The light I/O pass (rt_proctree_io_light, between scans): it reads again only the processes
 * whose I/O grew at their last full read (one that slept through a scan, the quick path, did
 * none), through their main thread's own counters, so a child's lifetime I/O that a process's
 * own io file takes in when it reaps the child (the scan counted it through the child) is never
 * counted again; its growth is from the scan (which takes the base), kept by the tree until the
 * next scan, which it never changes, also once the process reads no more. (The start time read
 * after the file's open guards a pid reused between the scan's read and the open: fixture
 * files cannot show that.) */
static void io_light_pass(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-iolight-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char s[256];
    root_and_child(dir, 100, 400);
    io_file(dir, 300, 1000, 0);
    task_io(dir, 300, 1000);
    io_file(dir, 301, 0, 0);
    task_io(dir, 301, 0);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 600.0);
    rt_proctree_io_light_on(t, true);
    rt_tree_totals tt;
    uint64_t rd, wr;
    rt_proctree_scan(t, 0.0, &tt); /* 300's I/O grew (first seen with 1000), 301's did not */
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 1); /* its base, taken by the scan */
    assert_int_equal(wr, 0);
    task_io(dir, 300, 5000);
    io_file(dir, 300, 95000, 0); /* and a reaped child's lifetime 90,000 bytes: not the pass's */
    io_file(dir, 301, 700, 0);
    task_io(dir, 301, 700);
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 1);
    assert_int_equal(wr, 4000);
    assert_int_equal(rd, 0);
    assert_int_equal(rt_proctree_io_light(t, 0, &rd, &wr), 0); /* none read, what it grew stands */
    assert_int_equal(wr, 4000);
    rt_proctree_scan(t, 0.5, &tt);
    assert_int_equal(tt.write_bytes, 1000); /* neither ran: the scan's books as they were */
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 0); /* asleep: the quick path */
    assert_int_equal(wr, 0);
    run_time(dir, 300, 2000);
    run_time(dir, 301, 600);
    rt_proctree_scan(t, 1.0, &tt); /* both read in full, both grew */
    assert_int_equal(tt.write_bytes, 95700);
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 2);
    assert_int_equal(wr, 0);
    task_io(dir, 301, 900);
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 2);
    assert_int_equal(wr, 200);
    /* passes that read fewer than the list take it in turns: 300, then 301 */
    task_io(dir, 300, 5100);
    task_io(dir, 301, 950);
    assert_int_equal(rt_proctree_io_light(t, 1, &rd, &wr), 1);
    assert_int_equal(wr, 100 + 200); /* 300 read, 301 as last read */
    assert_int_equal(rt_proctree_io_light(t, 1, &rd, &wr), 1);
    assert_int_equal(wr, 100 + 250); /* 301's turn */
    /* 300's file below its base: another thread took the pid over (an exec from a thread) */
    task_io(dir, 300, 10);
    task_io(dir, 301, 1000);
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 1);
    assert_int_equal(wr, 100 + 300); /* what 300 grew before stands */
    task_io(dir, 300, 90000);
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 1);
    assert_int_equal(wr, 100 + 300); /* and 300 is read no more: not the base's counters */
    run_time(dir, 300, 3000);
    run_time(dir, 301, 700);
    io_file(dir, 301, 1000, 0);
    task_io(dir, 301, 1000);
    rt_proctree_scan(t, 2.0, &tt); /* 301 grew, 300 did not; 301's base is taken now */
    task_io(dir, 301, 1300);
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 1);
    assert_int_equal(wr, 300);
    put(dir, "301/task/301/io", ""); /* 301 gone: its file reads no more */
    assert_int_equal(rt_proctree_io_light(t, 8, &rd, &wr), 0);
    assert_int_equal(wr, 300); /* what it grew stands until the next scan */
    (void)s;
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* In a child process: the light pass under RLIMIT_NOFILE 32 (the tree may keep descriptors
 * below 16), with the descriptors below `filled` taken (0: one more at most; fd 0 is open under ctest). Exits with the processes the pass read. */
static void light_under_limit(const char *dir, int filled)
{
    struct rlimit rl = {32, 32};
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        _exit(100);
    for (int fd = dup(0); fd >= 0 && fd < filled - 1; fd = dup(0))
        ;
    rt_roots r;
    if (rt_roots_open(&r, dir, "/nonexistent") != RT_OK)
        _exit(101);
    rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 600.0);
    rt_proctree_io_light_on(t, true);
    rt_tree_totals tt;
    uint64_t rd, wr;
    rt_proctree_scan(t, 0.0, &tt);
    _exit(rt_proctree_io_light(t, 8, &rd, &wr));
}

/* The light pass keeps its files only within the descriptors the tree may keep: past them
 * (the limit's headroom is the rest of the process's) the scans alone count its processes. */
static void io_light_within_descriptors(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-iolightfd-XXXXXX";
    assert_non_null(mkdtemp(dir));
    root_and_child(dir, 100, 400);
    io_file(dir, 300, 1000, 0);
    task_io(dir, 300, 1000);
    io_file(dir, 301, 0, 0);
    task_io(dir, 301, 0);
    int want[2][2] = {{0, 1}, {16, 0}}; /* {descriptors taken, processes the pass reads} */
    for (int i = 0; i < 2; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            light_under_limit(dir, want[i][0]);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), want[i][1]);
    }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A stat line of pid (asleep) with RSS pages rss and its memory's code and stack at code and
 * stack (fields 26 and 28). */
static void stat_vm(const char *dir, int pid, int ppid, unsigned long rss, unsigned long code, unsigned long stack)
{
    char rel[32], s[256];
    snprintf(rel, sizeof rel, "%d/stat", pid);
    snprintf(s, sizeof s, "%d (p) S %d 1 1 0 -1 0 10 0 0 0 1 0 0 0 20 0 1 0 %d 1000 %lu 99 %lu %lu %lu\n", pid, ppid,
             7000 + pid, rss, code, code + 4096, stack);
    put(dir, rel, s);
}

typedef struct vm_fixture {
    const char *dir;
    int mode; /* 0: shared; 1: its own, after an exec since the walk read it; 2: EPERM */
    int calls;
} vm_fixture;

/* The fixture's memory comparison (kcmp(2)'s part). */
static long fixture_vm_cmp(void *user, int64_t parent, int64_t pid)
{
    vm_fixture *f = user;
    f->calls++;
    assert_int_equal(parent, 300);
    assert_int_equal(pid, 301);
    if (f->mode == 0)
        return 0;
    if (f->mode == 1) {
        stat_vm(f->dir, 301, 300, 30, 0x5000, 0x7ff0); /* its exec came after the walk's read */
        return 1;
    }
    errno = EPERM;
    return -1;
}

/* A child that runs in its parent's memory (a vfork child before its exec: its stat shows the
 * parent's RSS and the parent's code and stack) counts no RSS or PSS of its own; one whose
 * memory is its own counts a reading taken after the comparison (the walk may have read it
 * still in the parent's memory, its exec in between), and so does one that may not be
 * compared (EPERM); once found with its own, it is not compared again. */
static void child_in_parents_memory(void **state)
{
    (void)state;
    long page_kib = sysconf(_SC_PAGESIZE) / 1024;
    for (int mode = 0; mode < 3; mode++) {
        char dir[] = "/tmp/rt-vm-XXXXXX";
        assert_non_null(mkdtemp(dir));
        root_and_child(dir, 50, 70);
        stat_vm(dir, 300, 1, 50, 0x1000, 0x7000);
        stat_vm(dir, 301, 300, 50, 0x1000, 0x7000); /* the parent's memory, as a vfork child's */
        rt_roots r;
        assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
        rt_proctree *t = rt_proctree_new(&r, 300, false, NULL, 100, 600.0);
        vm_fixture f = {dir, mode, 0};
        rt_proctree_set_vm_cmp(t, fixture_vm_cmp, &f);
        rt_tree_totals tt;
        rt_proctree_scan(t, 0.0, &tt);
        assert_int_equal(tt.processes, 2);
        assert_int_equal(f.calls, 1);
        uint64_t child = mode == 0 ? 0 : mode == 1 ? 30 : 50;
        assert_int_equal(tt.rss_kib, (50 + child) * (uint64_t)page_kib);
        assert_int_equal(tt.pss_kib, mode == 0 ? 100 : 170);
        assert_int_equal(tt.vms_bytes, 2000); /* vsize summed as Snakemake sums it */
        run_time(dir, 301, 600); /* read again in full */
        rt_proctree_scan(t, 1.0, &tt);
        assert_int_equal(f.calls, mode == 0 ? 2 : 1); /* shared: compared at each scan */
        rt_proctree_free(t);
        rt_roots_close(&r);
        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* The peak RSS never decreases, and cancelled writes are kept like write_bytes when
 * processes leave: the root reaped outside the tree, then its orphaned child gone. */
static void peak_rss_and_cancelled_writes(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-peak-XXXXXX";
    assert_non_null(mkdtemp(dir));
    uint64_t pk = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
    char s[256];
    stat_mem(s, sizeof s, 400, 1, 'S', 1, 1000);
    put(dir, "400/stat", s);
    put(dir, "400/task/400/children", "401 ");
    io_file(dir, 400, 300, 100);
    stat_mem(s, sizeof s, 401, 400, 'S', 1, 500);
    put(dir, "401/stat", s);
    put(dir, "401/task/401/children", "");
    io_file(dir, 401, 50, 30);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 400, false, NULL, 100, 30.0);
    rt_tree_totals a;
    rt_proctree_scan(t, 1.0, &a);
    assert_true(a.io_ok);
    assert_int_equal(a.write_bytes, 350);
    assert_int_equal(a.cancelled_write_bytes, 130);
    assert_int_equal(a.rss_kib, 1500 * pk);
    assert_int_equal(a.rss_peak_kib, 1500 * pk);

    /* the root is gone (reaped by its own parent), 401 lives on as an orphan using less */
    put(dir, "400/stat", "");
    stat_mem(s, sizeof s, 401, 1, 'S', 1, 200);
    put(dir, "401/stat", s);
    rt_tree_totals b;
    rt_proctree_scan(t, 2.0, &b);
    assert_int_equal(b.processes, 1);
    assert_int_equal(b.cancelled_write_bytes, 130);
    assert_int_equal(b.rss_kib, 200 * pk);
    assert_int_equal(b.rss_peak_kib, 1500 * pk);

    /* 401 goes too: everything stays counted */
    put(dir, "401/stat", "");
    rt_tree_totals c;
    rt_proctree_scan(t, 3.0, &c);
    assert_int_equal(c.processes, 0);
    assert_int_equal(c.write_bytes, 350);
    assert_int_equal(c.cancelled_write_bytes, 130);
    assert_int_equal(c.rss_peak_kib, 1500 * pk);
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
    assert_int_equal(st.vsize_bytes, 999); /* field 23, in bytes */
    assert_int_equal(st.minflt, 10); /* own faults, not the children's (5 and 6) */
    assert_int_equal(st.majflt, 3);
    const char *trunc = "42 (x) R 1 42 42 0 -1 4194304 10 0 0 0 7 3";
    assert_int_equal(rt_pidstat_parse(trunc, strlen(trunc), &st), -1);
    assert_int_equal(rt_pidstat_parse("42 (x", 5, &st), -1);
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
    rt_rollup r;
    const char *sm = "55-66 ---p 0 00:00 0 [rollup]\nRss: 10 kB\nPss: 7 kB\nPss_Anon: 5 kB\nSwap: 3 kB\n";
    assert_int_equal(rt_smaps_rollup_parse(sm, strlen(sm), &r), 0);
    assert_int_equal(r.pss_kib, 7);
    assert_int_equal(r.swap_kib, 3);
    assert_false(r.split_ok); /* no Private_ / Shared_ lines */
    /* a whole rollup as Linux 6.x prints it: Pss_Dirty, SwapPss are not taken for Pss, Swap */
    const char *full = "55-66 ---p 00000000 00:00 0 [rollup]\nRss: 1716 kB\nPss: 308 kB\nPss_Dirty: 112 kB\n"
                       "Pss_Anon: 112 kB\nPss_File: 196 kB\nShared_Clean: 1604 kB\nShared_Dirty: 4 kB\n"
                       "Private_Clean: 8 kB\nPrivate_Dirty: 100 kB\nReferenced: 1716 kB\nSwapPss: 9 kB\n"
                       "Swap: 0 kB\nLocked: 0 kB\n";
    assert_int_equal(rt_smaps_rollup_parse(full, strlen(full), &r), 0);
    assert_int_equal(r.pss_kib, 308);
    assert_int_equal(r.swap_kib, 0);
    assert_int_equal(r.private_kib, 108);
    assert_int_equal(r.shared_kib, 1608);
    assert_true(r.split_ok);
    assert_int_equal(r.exposed_kib, 1716); /* no Anonymous line: all of Rss */
    /* anonymous memory beyond the shared pages is private: no one else can come to map it */
    const char *anon = "Rss: 1000 kB\nPss: 900 kB\nShared_Clean: 100 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\n"
                       "Private_Dirty: 900 kB\nAnonymous: 700 kB\n";
    assert_int_equal(rt_smaps_rollup_parse(anon, strlen(anon), &r), 0);
    assert_int_equal(r.exposed_kib, 1000 - (700 - 100));
    /* no Rss line: private + shared stand for it */
    const char *norss = "Pss: 9 kB\nShared_Clean: 4 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 5 kB\n";
    assert_int_equal(rt_smaps_rollup_parse(norss, strlen(norss), &r), 0);
    assert_int_equal(r.exposed_kib, 10);
    /* no Pss line: not a rollup */
    assert_int_equal(rt_smaps_rollup_parse("Rss: 4 kB\nSwap: 1 kB\n", 21, &r), -1);
}

static void status_hwm_parser(void **state)
{
    (void)state;
    uint64_t v = 0;
    /* as Linux 6.x prints it: VmPeak before VmHWM, a tab and padding before the number */
    const char *st = "Name:\tpython3\nVmPeak:\t  812344 kB\nVmSize:\t  20000 kB\nVmHWM:\t  614400 kB\n"
                     "VmRSS:\t    9000 kB\n";
    assert_int_equal(rt_status_hwm_parse(st, strlen(st), &v), 0);
    assert_int_equal(v, 614400);
    /* a zombie or a kernel thread has no Vm lines */
    const char *z = "Name:\tsh\nState:\tZ (zombie)\nThreads:\t1\n";
    assert_int_equal(rt_status_hwm_parse(z, strlen(z), &v), -1);
    /* the value cut off at the end of the read, and junk */
    assert_int_equal(rt_status_hwm_parse("VmHWM:\t  ", 9, &v), -1);
    assert_int_equal(rt_status_hwm_parse("VmHWM: x kB\n", 13, &v), -1);
    /* the number ends at the buffer's end (not NUL-terminated past it) */
    assert_int_equal(rt_status_hwm_parse("VmHWM: 12", 9, &v), 0);
    assert_int_equal(v, 12);
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

/* gpu_tracker's split: root 400 (two threads, 5 ticks of its own and 20 reaped) with children
 * 401 and 402 that share 100 MiB with each other only and 8 MiB of libraries with everyone.
 * Then 402 maps 2 MiB more of what 401 maps (its RSS grows; 401's does not): 401's rollup is
 * re-read in the same scan, its shared pages having moved with 402's. */
static void split_into_parts(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-split-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char s[256];
    stat_split(s, sizeof s, 400, 1, 2, 5, 20, 1000);
    put(dir, "400/stat", s);
    put(dir, "400/task/400/children", "401 402 ");
    put(dir, "400/task/405/children", "");
    rollup_file(dir, 400, 307200 + 1000, 307200, 8192); /* 300 MiB own, 8 MiB libraries */
    for (int pid = 401; pid <= 402; pid++) {
        stat_split(s, sizeof s, pid, 400, 1, 3, 0, 100);
        put(dir, pid == 401 ? "401/stat" : "402/stat", s);
        put(dir, pid == 401 ? "401/task/401/children" : "402/task/402/children", "");
        /* 200 MiB own; 100 MiB shared by the two (half each) and the libraries (a sliver) */
        rollup_file(dir, pid, 204800 + 51200 + 1000, 204800, 102400 + 8192);
    }
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 400, false, NULL, 100, 30.0);
    rt_tree_totals tt;
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.processes, 3);
    assert_true(tt.main.mem_ok && tt.descendants.mem_ok && tt.combined.mem_ok);
    assert_int_equal(tt.main.private_kib, 307200);
    assert_int_equal(tt.main.shared_kib, 8192); /* one process: its shared pages exactly */
    assert_int_equal(tt.main.threads, 2);
    assert_int_equal(tt.root_own_ns, 5ull * 10000000ull); /* its own ticks, not the reaped 20 */
    assert_int_equal(tt.descendants.private_kib, 2 * 204800);
    /* the larger of the biggest member's shared (110,592) and the share sum (2 x 52,200) */
    assert_int_equal(tt.descendants.shared_kib, 102400 + 8192);
    assert_int_equal(tt.descendants.threads, 2);
    assert_int_equal(tt.combined.private_kib, 307200 + 2 * 204800);
    assert_int_equal(tt.combined.shared_kib, 102400 + 8192);
    assert_int_equal(tt.combined.threads, 4);
    assert_int_equal(tt.threads, 4);

    /* 402 maps 2 MiB more of 401's pages; only 402's RSS moved */
    stat_split(s, sizeof s, 402, 400, 1, 3, 0, 612);
    put(dir, "402/stat", s);
    rollup_file(dir, 402, 204800 + 52224 + 1000, 204800, 102400 + 2048 + 8192);
    rollup_file(dir, 401, 204800 + 52224 + 1000, 204800, 102400 + 2048 + 8192);
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.descendants.shared_kib, 102400 + 2048 + 8192);
    assert_int_equal(tt.pss_kib, 307200 + 1000 + 2 * (204800 + 52224 + 1000)); /* 401's re-read too */

    /* a rollup without the Private_/Shared_ lines (an old kernel): the split's memory is null */
    put(dir, "401/smaps_rollup", "00-ff ---p 0 00:00 0 [rollup]\nRss: 9 kB\nPss: 7 kB\n");
    stat_split(s, sizeof s, 401, 400, 1, 3, 0, 101);
    put(dir, "401/stat", s);
    rt_proctree_scan(t, 3.0, &tt);
    assert_false(tt.descendants.mem_ok);
    assert_false(tt.combined.mem_ok);
    assert_true(tt.main.mem_ok);
    rt_proctree_free(t);
    rt_roots_close(&r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_tree),
        cmocka_unit_test(fixture_root_only),
        cmocka_unit_test(departures_and_reuse),
        cmocka_unit_test(long_sleepers_checked_every_other_scan),
        cmocka_unit_test(pss_rereads),
        cmocka_unit_test(pss_rereads_for_sharers),
        cmocka_unit_test(read_all_sees_reclaim),
        cmocka_unit_test(exits_between_scans),
        cmocka_unit_test(exits_cpu_of_unwaited_children),
        cmocka_unit_test(split_into_parts),
        cmocka_unit_test(pss_rereads_follow_the_family),
        cmocka_unit_test(peak_rss_and_cancelled_writes),
        cmocka_unit_test(io_light_pass),
        cmocka_unit_test(io_light_within_descriptors),
        cmocka_unit_test(child_in_parents_memory),
        cmocka_unit_test(pidstat_parser),
        cmocka_unit_test(children_parser), cmocka_unit_test(status_hwm_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
