/* test_zfs.c - ZFS pools (source/zfs.c and their place in sample/disks.c): zpool's answer
 * parsed (good lines, "-" and empty pools left out, garbage and a cut line counted), a pool's
 * shallowest mount, the module's presence from <proc>/spl/kstat/zfs, and the sampler on the
 * zfs-pools fixture (the kernel module's layout) with a stand-in zpool first on the PATH: two
 * pools listed as disks in name order with their space in the sums; a zpool that hangs, fails,
 * prints garbage or is missing warns once and never stalls or breaks a sample; the module asked
 * after at each sample only while it is loaded (else on a mount change or every
 * RT_ZFS_PROBE_SECS). */
#include "unit.h"
#include <signal.h>

#include <math.h>

#include "resource_tracker.h"
#include "source/sources.h"
#include "sample/sampler_internal.h"
#include "unit_replay.h"

static char dir[64], proc[128], bin[128];
static char saved_path[8192];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-zfs-XXXXXX");
    unit_tmpdir(dir);
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(bin, sizeof bin, "%s/bin", dir);
    mkdir(bin, 0755);
    const char *p = getenv("PATH");
    snprintf(saved_path, sizeof saved_path, "%s", p ? p : "/usr/bin:/bin");
    char path[8400];
    snprintf(path, sizeof path, "%s:%s", bin, saved_path);
    setenv("PATH", path, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    setenv("PATH", saved_path, 1);
    unit_rmtree(dir);
    return 0;
}

/* Puts the fixture's stand-in bin/zpool-<kind> first on the PATH as zpool. */
static void use_zpool(const char *kind)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp '%s/zfs-pools/bin/zpool-%s' '%s/zpool'", RT_FIXTURES, kind, bin);
    unit_system(cmd);
}

static void parse_lines(void **state)
{
    (void)state;
    rt_zpool z[4];
    size_t bad = 99;
    const char *text = "rpool\t494927872000\t123731968000\t371195904000\n"
                       "tank\t7971459301376\t2391437790412\t5580021510964\textra\n"
                       "faulted\t-\t-\t-\n"
                       "empty\t0\t0\t0\n";
    assert_int_equal(rt_zpool_list_parse(text, strlen(text), z, 4, &bad), 2);
    assert_int_equal(bad, 0);
    assert_string_equal(z[0].name, "rpool");
    assert_true(z[0].size == 494927872000ull && z[0].allocated == 123731968000ull && z[0].free == 371195904000ull);
    assert_string_equal(z[1].name, "tank");
    assert_true(z[1].free == 5580021510964ull);
    /* more pools than room: counted, only cap stored */
    assert_int_equal(rt_zpool_list_parse(text, strlen(text), z, 1, NULL), 2);
    /* garbage: the table zpool prints without -Hp, human sizes, too few fields, a cut line */
    const char *junk = "NAME   SIZE  ALLOC   FREE\n"
                       "tank\t7.25T\t2.17T\t5.07T\n"
                       "tank\t1\t2\n"
                       "tank\t12x\t1\t2\n"
                       "\t1\t2\t3\n"
                       "cut\t100\t50\t5";
    assert_int_equal(rt_zpool_list_parse(junk, strlen(junk), z, 4, &bad), 0);
    assert_int_equal(bad, 6);
    assert_int_equal(rt_zpool_list_parse("", 0, z, 4, &bad), 0);
    assert_int_equal(bad, 0);
    /* a name longer than ZFS allows is not one */
    char longname[400];
    memset(longname, 'a', 300);
    snprintf(longname + 300, 100, "\t1\t1\t0\n");
    assert_int_equal(rt_zpool_list_parse(longname, strlen(longname), z, 4, &bad), 0);
    assert_int_equal(bad, 1);
}

static void pool_mount(void **state)
{
    (void)state;
    size_t len;
    const char *mi = fixture_text("zfs-pools/proc/self/mountinfo", &len);
    char out[256];
    /* rpool/home (2 levels) over rpool/ROOT/debian (3), as the Rust tool picks */
    assert_true(rt_zfs_pool_mount(mi, len, "rpool", out, sizeof out));
    assert_string_equal(out, "/home");
    assert_true(rt_zfs_pool_mount(mi, len, "tank", out, sizeof out));
    assert_string_equal(out, "/tank"); /* not tank/data, not tankish/x */
    assert_false(rt_zfs_pool_mount(mi, len, "tan", out, sizeof out));
    assert_string_equal(out, "");
    assert_false(rt_zfs_pool_mount(mi, len, "backup", out, sizeof out));
    assert_false(rt_zfs_pool_mount(NULL, 0, "tank", out, sizeof out));
    char tiny[4];
    assert_false(rt_zfs_pool_mount(mi, len, "tank", tiny, sizeof tiny)); /* "/tank" does not fit */
}

static void module_loaded(void **state)
{
    (void)state;
    rt_roots r;
    char p[512];
    snprintf(p, sizeof p, "%s/zfs-pools/proc", RT_FIXTURES);
    assert_int_equal(rt_roots_open(&r, p, "/nonexistent"), RT_OK);
    assert_true(rt_zfs_loaded(&r));
    rt_roots_close(&r);
    snprintf(p, sizeof p, "%s/vm-virtio/proc", RT_FIXTURES);
    assert_int_equal(rt_roots_open(&r, p, "/nonexistent"), RT_OK);
    assert_false(rt_zfs_loaded(&r));
    rt_roots_close(&r);
}

typedef struct log_count {
    int warnings;
    char last[512];
} log_count;

static void count_log(void *user, rt_log_level level, const char *msg)
{
    log_count *lc = user;
    if (level >= RT_LOG_WARN && strstr(msg, "zpool")) {
        lc->warnings++;
        snprintf(lc->last, sizeof lc->last, "%s", msg);
    }
}

/* A sampler on the zfs-pools fixture (no sys root: disks by name), statvfs never called (no
 * block filesystem in its mountinfo), its baseline at mono 1000. */
static rt_sampler *open_zfs(log_count *lc)
{
    if (access(proc, F_OK) != 0)
        unit_copy_fixture("zfs-pools/proc", proc);
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = "/nonexistent-sys";
    o.log = count_log;
    o.log_user = lc;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    return s;
}

static const rt_disk *find_disk(const rt_sample *smp, const char *name)
{
    for (size_t i = 0; i < smp->disk_count; i++)
        if (strcmp(smp->disk[i]->device, name) == 0)
            return smp->disk[i];
    return NULL;
}

static void two_pools(void **state)
{
    (void)state;
    use_zpool("two");
    log_count lc = {0};
    rt_sampler *s = open_zfs(&lc);
    const rt_sample *smp;
    for (int k = 1; k <= 2; k++) {
        assert_int_equal(rt_sampler_sample_at(s, 1000.0 + k, 1.7e9 + k, &smp), RT_OK);
        assert_int_equal(smp->disk_count, 5);
        static const char *const order[] = {"nvme0n1", "sda", "sdb", "zfs:rpool", "zfs:tank"};
        for (size_t i = 0; i < 5; i++)
            assert_string_equal(smp->disk[i]->device, order[i]);
        const rt_disk *t = find_disk(smp, "zfs:tank");
        assert_true(t->capacity_bytes == 7971459301376ull);
        assert_true(t->is_virtual);
        assert_null(t->device_type);
        assert_null(t->model);
        assert_true(t->read_bytes_total == 0 && t->write_bytes_total == 0 && t->read_bytes == 0);
        assert_true(t->read_bytes_per_sec == 0 && t->write_bytes_per_sec == 0);
        assert_int_equal(t->mount_count, 1);
        const rt_mount *m = t->mounts[0];
        assert_string_equal(m->mount_point, "/tank");
        assert_string_equal(m->filesystem, "zfs");
        assert_true(m->total_bytes == 7971459301376ull && m->used_bytes == 2391437790412ull &&
                    m->available_bytes == 5580021510964ull);
        assert_true(fabs(m->used_pct - 2391437790412.0 / 7971459301376.0 * 100) < 1e-9);
        assert_string_equal(find_disk(smp, "zfs:rpool")->mounts[0]->mount_point, "/home");
        /* the sums: the pools alone (the datasets, mounted without a block device, never) */
        assert_true(smp->disk_space_total_bytes == 494927872000ull + 7971459301376ull);
        assert_true(smp->disk_space_used_bytes == 123731968000ull + 2391437790412ull);
        assert_true(smp->disk_space_free_bytes == 371195904000ull + 5580021510964ull);
        /* the physical disks' I/O stays theirs */
        assert_false(find_disk(smp, "sda")->is_virtual);
    }
    assert_int_equal(lc.warnings, 0);
    rt_sampler_free(s);
}

/* A host process that ignores SIGCHLD (the kernel reaps zpool before waitpid can): the pools are
 * still read from zpool's answer, with no warning and ZFS not turned off. */
static void sigchld_ignored(void **state)
{
    (void)state;
    use_zpool("two");
    log_count lc = {0};
    rt_sampler *s = open_zfs(&lc); /* its fixture is copied with system(), which needs SIGCHLD */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGCHLD, &ign, &old);
    const rt_sample *smp;
    for (int k = 1; k <= 2; k++) {
        assert_int_equal(rt_sampler_sample_at(s, 1000.0 + k, 1.7e9 + k, &smp), RT_OK);
        assert_non_null(find_disk(smp, "zfs:tank"));
        assert_non_null(find_disk(smp, "zfs:rpool"));
    }
    sigaction(SIGCHLD, &old, NULL); /* (a failed assertion above leaves it ignored: later tests fail too) */
    assert_int_equal(lc.warnings, 0);
    rt_sampler_free(s);
}

/* A zpool that does not give its list: one warning, pools left out, every sample still taken;
 * after the first failure zpool is never run again (a hung one would cost each interval). */
static void failing_zpool(const char *kind, const char *why)
{
    unit_copy_fixture("zfs-pools/proc", proc);
    if (kind)
        use_zpool(kind);
    else
        setenv("PATH", bin, 1); /* only the empty folder: no zpool anywhere */
    log_count lc = {0};
    rt_sampler *s = open_zfs(&lc);
    const rt_sample *smp;
    for (int k = 1; k <= 3; k++) {
        if (k == 2) { /* a zpool that would answer now is not asked again */
            char path[8400];
            snprintf(path, sizeof path, "%s:%s", bin, saved_path);
            setenv("PATH", path, 1);
            use_zpool("two");
        }
        assert_int_equal(rt_sampler_sample_at(s, 1000.0 + k, 1.7e9 + k, &smp), RT_OK);
        assert_int_equal(smp->disk_count, 3);
        assert_null(find_disk(smp, "zfs:tank"));
        assert_true(smp->disk_space_total_bytes == RT_NULL_U64);
    }
    assert_int_equal(lc.warnings, 1);
    assert_non_null(strstr(lc.last, why));
    rt_sampler_free(s);
}

static void hanging_zpool(void **state)
{
    (void)state;
    failing_zpool("hang", "no answer within");
}

static void failed_zpool(void **state)
{
    (void)state;
    failing_zpool("fail", "exited with status 1");
}

static void garbage_zpool(void **state)
{
    (void)state;
    failing_zpool("garbage", "not a list of pools");
}

static void missing_zpool(void **state)
{
    (void)state;
    failing_zpool(NULL, "not on the PATH");
}

/* Without the module (no spl/kstat/zfs), zpool is never run, even when it is there. */
static void no_module(void **state)
{
    (void)state;
    use_zpool("two");
    unit_copy_fixture("zfs-pools/proc", proc);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/spl'", proc);
    unit_system(cmd);
    log_count lc = {0};
    rt_sampler *s = open_zfs(&lc);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1001.0, 1.7e9, &smp), RT_OK);
    assert_int_equal(smp->disk_count, 3);
    assert_null(find_disk(smp, "zfs:tank"));
    assert_int_equal(lc.warnings, 0);
    rt_sampler_free(s);
}

/* The module's presence is asked at each sample while it is loaded, else again when the mounts
 * change (an imported pool mounts its datasets) or RT_ZFS_PROBE_SECS after the last asking, not
 * every sample (a failed procfs lookup each time); once loaded, its pools are listed, and once
 * gone they are left out at the next sample. */
static void module_loaded_later(void **state)
{
    (void)state;
    use_zpool("two");
    unit_copy_fixture("zfs-pools/proc", proc);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mv '%s/spl' '%s/spl-later'", proc, dir);
    unit_system(cmd);
    log_count lc = {0};
    rt_sampler *s = open_zfs(&lc);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp), RT_OK);
    assert_null(find_disk(smp, "zfs:tank"));
    assert_false(s->disks.zfs_loaded);
    double asked = s->disks.zfs_probe_mono;
    assert_true(asked > 0);
    snprintf(cmd, sizeof cmd, "mv '%s/spl-later' '%s/spl'", dir, proc); /* the module loads */
    unit_system(cmd);
    assert_int_equal(rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp), RT_OK);
    assert_null(find_disk(smp, "zfs:tank")); /* not asked again yet */
    assert_true(s->disks.zfs_probe_mono == asked);
    s->disks.zfs_probe_mono -= RT_ZFS_PROBE_SECS; /* the cadence's time has passed */
    assert_int_equal(rt_sampler_sample_at(s, 1003.0, 1.7e9 + 3, &smp), RT_OK);
    assert_non_null(find_disk(smp, "zfs:tank"));
    assert_non_null(find_disk(smp, "zfs:rpool"));
    /* gone: seen at the next sample (asked every sample while loaded) */
    snprintf(cmd, sizeof cmd, "mv '%s/spl' '%s/spl-later'", proc, dir);
    unit_system(cmd);
    assert_int_equal(rt_sampler_sample_at(s, 1004.0, 1.7e9 + 4, &smp), RT_OK);
    assert_null(find_disk(smp, "zfs:tank"));
    /* back, with the mounts changed: asked at once, whatever the cadence */
    snprintf(cmd, sizeof cmd, "mv '%s/spl-later' '%s/spl'", dir, proc);
    unit_system(cmd);
    s->disks.mounts_dirty = true; /* as mountinfo's POLLPRI would flag it */
    assert_int_equal(rt_sampler_sample_at(s, 1005.0, 1.7e9 + 5, &smp), RT_OK);
    assert_non_null(find_disk(smp, "zfs:tank"));
    assert_int_equal(lc.warnings, 0);
    rt_sampler_free(s);
}

/* The counters API (the Python package's get_system_stats) keys a pool "zfs:<pool>" among
 * the filesystems, as the Python tracker 0.5 keys it in its disk_spaces. */
static void counters_pools(void **state)
{
    (void)state;
    use_zpool("two");
    unit_copy_fixture("zfs-pools/proc", proc);
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = "/nonexistent-sys";
    o.gpu_off = 1;
    rt_counters *c = NULL;
    assert_int_equal(rt_counters_new(&o, &c), RT_OK);
    const rt_system_counters *sc;
    assert_int_equal(rt_counters_system(c, &sc), RT_OK);
    assert_int_equal(sc->mount_count, 2);
    assert_string_equal(sc->mounts[0]->mount_point, "zfs:rpool");
    assert_string_equal(sc->mounts[1]->mount_point, "zfs:tank");
    const rt_mount_space *t = sc->mounts[1];
    assert_true(t->total_bytes == 7971459301376ull && t->used_bytes == 2391437790412ull &&
                t->free_bytes == 5580021510964ull);
    assert_int_equal(sc->disk_count, 3); /* the physical disks: no pool among them */
    rt_counters_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_lines),
        cmocka_unit_test(pool_mount),
        cmocka_unit_test(module_loaded),
        cmocka_unit_test_setup_teardown(two_pools, setup, teardown),
        cmocka_unit_test_setup_teardown(sigchld_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(hanging_zpool, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_zpool, setup, teardown),
        cmocka_unit_test_setup_teardown(garbage_zpool, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_zpool, setup, teardown),
        cmocka_unit_test_setup_teardown(no_module, setup, teardown),
        cmocka_unit_test_setup_teardown(module_loaded_later, setup, teardown),
        cmocka_unit_test_setup_teardown(counters_pools, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
