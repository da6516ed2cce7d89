/* test_proctree_race.c - the process tree's totals when a child exits and its parent reaps
 * it between the readings of one scan, modelled on fixture /proc trees rewritten between
 * scans: the reaper's stale reading (the quick path), and a child whose stale reading (the
 * every-other-scan skip) is counted while its parent's fresh cutime already holds it. Each
 * scan's total must count every tick once: never twice, never missing. */
#include "unit.h"

#include "source/proctree.h"

#define TICK_NS 10000000ull

/* Writes process pid's stat (ppid, utime and cutime in ticks, state S), its children file
 * (kids) and its schedstat (run_ns, the on-CPU time the quick path compares). */
static void proc_files(const char *dir, int pid, int ppid, int ut, int cut, const char *kids, unsigned long run_ns)
{
    char rel[64], text[256];
    snprintf(rel, sizeof rel, "%d/stat", pid);
    snprintf(text, sizeof text, "%d (p) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %d 1000 10 0 0 0\n", pid, ppid,
             ut, cut, 7000 + pid);
    unit_put(dir, rel, text);
    snprintf(rel, sizeof rel, "%d/task/%d/children", pid, pid);
    unit_put(dir, rel, kids);
    snprintf(rel, sizeof rel, "%d/schedstat", pid);
    snprintf(text, sizeof text, "%lu 0 1\n", run_ns);
    unit_put(dir, rel, text);
}

/* Process pid is gone (reaped): its kept files no longer read. */
static void proc_gone(const char *dir, int pid)
{
    char rel[64];
    snprintf(rel, sizeof rel, "%d/stat", pid);
    unit_put(dir, rel, "");
    snprintf(rel, sizeof rel, "%d/schedstat", pid);
    unit_put(dir, rel, "");
}

/* The race seen under load (two busy children of bash, `wait; times`): the reaper had not
 * run since its last full reading as far as its schedstat shows (a task just woken on another
 * core has its run time brought up to date only at its next tick or switch), so the quick path
 * kept its old reading, cutime 0, while the children it had reaped were gone. The scan counted
 * neither: the total fell by their time, and came back at the next scan, where the sampler's
 * clamp counted it a second time (3.02 s for a 2.03 s run). The reaper is read again. */
static void reaper_on_the_quick_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-race-XXXXXX";
    unit_tmpdir(dir);
    proc_files(dir, 800, 1, 5, 0, "801 802 ", 1000);
    proc_files(dir, 801, 800, 60, 0, "", 5000);
    proc_files(dir, 802, 800, 70, 0, "", 6000);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    rt_proctree *t = rt_proctree_new(&r, 800, false, NULL, 100, 30.0);
    rt_tree_totals tt;
    rt_proctree_scan(t, 1.0, &tt);
    rt_proctree_scan(t, 1.1, &tt); /* the root's reading is now the quick path's */
    assert_int_equal(tt.utime_ns, 135 * TICK_NS);

    /* both children finish (61 and 72 ticks) and 800 reaps them; its schedstat lags */
    proc_gone(dir, 801);
    proc_gone(dir, 802);
    proc_files(dir, 800, 1, 5, 133, "", 1000);
    rt_proctree_scan(t, 1.2, &tt);
    assert_int_equal(tt.processes, 1);
    assert_int_equal(tt.utime_ns, 138 * TICK_NS); /* not 5: the reaper's cutime holds them */
    rt_proctree_scan(t, 1.3, &tt);
    assert_int_equal(tt.utime_ns, 138 * TICK_NS);

    /* one child gone, the other still running: only the gone one moved into cutime */
    rt_proctree_free(t);
    proc_files(dir, 800, 1, 5, 0, "801 802 ", 1000);
    proc_files(dir, 801, 800, 60, 0, "", 5000);
    proc_files(dir, 802, 800, 70, 0, "", 6000);
    t = rt_proctree_new(&r, 800, false, NULL, 100, 30.0);
    rt_proctree_scan(t, 1.0, &tt);
    rt_proctree_scan(t, 1.1, &tt);
    proc_gone(dir, 801);
    proc_files(dir, 800, 1, 5, 61, "802 ", 1000);
    proc_files(dir, 802, 800, 75, 0, "", 6500);
    rt_proctree_scan(t, 1.2, &tt);
    assert_int_equal(tt.processes, 2);
    assert_int_equal(tt.utime_ns, 141 * TICK_NS);
    rt_proctree_free(t);
    rt_roots_close(&r);
    unit_rmtree(dir);
}

/* A child asleep long enough is looked at every other scan only. It exits and its busy parent
 * reaps it before a scan that skips it: the parent's fresh cutime holds it, and its old
 * reading must not be counted beside it (that counted it twice, for good: the next scan's
 * lower total is clamped, not subtracted). */
static void skipped_child_reaped_by_its_parent(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-race-XXXXXX";
    unit_tmpdir(dir);
    proc_files(dir, 900, 1, 10, 0, "901 ", 100);
    proc_files(dir, 901, 900, 400, 0, "", 7000); /* it worked, and sleeps now */
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, dir, "/nonexistent"), RT_OK);
    for (int parity = 0; parity < 2; parity++) { /* the exit lands on a skipping scan in one of these */
        rt_proctree *t = rt_proctree_new(&r, 900, false, NULL, 100, 30.0);
        rt_tree_totals tt;
        int ut = 10;
        for (int i = 0; i < 20 + parity; i++) { /* the parent runs at every scan */
            proc_files(dir, 900, 1, ++ut, 0, "901 ", 100ul + (unsigned long)i);
            rt_proctree_scan(t, 1.0 + i * 0.01, &tt);
        }
        assert_int_equal(tt.utime_ns, (uint64_t)(ut + 400) * TICK_NS);
        proc_gone(dir, 901);
        proc_files(dir, 900, 1, ++ut, 401, "", 999);
        rt_proctree_scan(t, 2.0, &tt);
        assert_int_equal(tt.processes, 1);
        assert_int_equal(tt.utime_ns, (uint64_t)(ut + 401) * TICK_NS);
        rt_proctree_scan(t, 2.01, &tt);
        assert_int_equal(tt.utime_ns, (uint64_t)(ut + 401) * TICK_NS);
        rt_proctree_free(t);
        proc_files(dir, 901, 900, 400, 0, "", 7000);
    }
    rt_roots_close(&r);
    unit_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reaper_on_the_quick_path),
        cmocka_unit_test(skipped_child_reaped_by_its_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
