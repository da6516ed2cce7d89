/* test_mountinfo.c - the mountinfo parser: escapes, optional fields, malformed lines; and what it
 * tells of an SQLite file's place (rt_sqlite_network_fs): the longest mount point holding it. */
#include "unit.h"
#include <limits.h>
#include "source/sources.h"
#include "resource_tracker.h" /* rt_sqlite_network_fs (the tests see the experimental parts) */

typedef struct seen {
    int n;
    char mp[8][256];
    char fstype[8][32];
    char source[8][64];
    char root[8][64];
    unsigned major[8], minor[8];
} seen;

static void collect(void *user, const rt_mountinfo_entry *e)
{
    seen *s = user;
    if (s->n >= 8)
        return;
    snprintf(s->mp[s->n], sizeof s->mp[0], "%s", e->mount_point);
    snprintf(s->fstype[s->n], sizeof s->fstype[0], "%s", e->fstype);
    snprintf(s->source[s->n], sizeof s->source[0], "%s", e->source);
    snprintf(s->root[s->n], sizeof s->root[0], "%s", e->root);
    s->major[s->n] = e->major;
    s->minor[s->n] = e->minor;
    s->n++;
}

static void server_capture(void **state)
{
    (void)state;
    size_t len;
    const char *buf = fixture_text("server-nvme-lvm/proc/self/mountinfo", &len);
    seen s = {0};
    assert_int_equal(rt_mountinfo_parse(buf, len, collect, &s), 0);
    assert_int_equal(s.n, 8); /* collect keeps 8 */
    assert_string_equal(s.mp[0], "/");
    assert_int_equal(s.major[0], 253);
    assert_string_equal(s.source[0], "/dev/mapper/vg0-root");
    assert_string_equal(s.fstype[0], "ext4");
}

static void escapes_and_optional_fields(void **state)
{
    (void)state;
    const char *t = "36 35 8:49 /a\\134b /media/usb\\040stick\\011x rw shared:1 master:2 unbindable - exfat /dev/sdd1 rw\n";
    seen s = {0};
    assert_int_equal(rt_mountinfo_parse(t, strlen(t), collect, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.mp[0], "/media/usb stick\tx");
    assert_string_equal(s.root[0], "/a\\b");
    assert_string_equal(s.source[0], "/dev/sdd1");
    assert_int_equal(s.minor[0], 49);
}

static void malformed_lines_are_counted(void **state)
{
    (void)state;
    const char *t = "1 2 3\n"                                /* too short */
                    "22 1 253:0 / / rw - \n"                 /* no fstype */
                    "22 1 x:0 / / rw - ext4 /dev/a rw\n"     /* bad device */
                    "22 1 8:0 / / rw ext4 /dev/a rw\n"       /* no separator */
                    "22 1 8:0 / /ok rw - ext4 /dev/a rw\n";  /* fine */
    seen s = {0};
    assert_int_equal(rt_mountinfo_parse(t, strlen(t), collect, &s), 4);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.mp[0], "/ok");
    /* a truncated escape is kept literally */
    const char *u = "1 1 8:0 / /a\\04 rw - ext4 /dev/a rw";
    seen s2 = {0};
    assert_int_equal(rt_mountinfo_parse(u, strlen(u), collect, &s2), 0);
    assert_string_equal(s2.mp[0], "/a\\04");
}

/* rt_sqlite_network_fs over a mount table written for the test: dir (a real directory, its
 * files not there) under mount points of several types. */
static void network_fs_longest_mount(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-netfs-XXXXXX", mi[64], type[64], mount[4096], path[256], text[8192];
    unit_tmpdir(dir);
    char real[PATH_MAX];
    assert_non_null(realpath(dir, real));
    snprintf(mi, sizeof mi, "%s/mountinfo", dir);
    snprintf(text, sizeof text,
             "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
             "21 20 0:40 / %.900s/nfs rw shared:2 - nfs4 srv:/export rw,vers=4.2\n"
             "22 21 8:2 / %.900s/nfs/local rw - xfs /dev/sdb rw\n"
             "23 20 0:41 / %.900s/nfs2 rw - lustre 10.0.0.1@tcp:/fs rw\n"
             "24 20 0:42 / %.900s/with\\040space rw - cifs //srv/share rw\n"
             "25 20 0:43 / %.900s/over rw - nfs srv:/a rw\n"
             "26 20 0:44 / %.900s/over rw - ext4 /dev/sdc rw\n",
             real, real, real, real, real, real);
    unit_put(dir, "mountinfo", text);
    const char *subs[] = {"nfs", "nfs/local", "nfs2", "with space", "over", "nfs/deeper/still"};
    const char *want_type[] = {"nfs4", "xfs", "lustre", "cifs", "ext4", "nfs4"};
    const char *want_mount[] = {"nfs", "nfs/local", "nfs2", "with space", "over", "nfs"};
    const int want_net[] = {1, 0, 1, 1, 0, 1};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, subs[i]);
        if (strcmp(subs[i], "nfs/deeper/still") != 0)
            mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/%s/h.db", dir, subs[i]);
        assert_int_equal(rt_sqlite_network_fs(path, mi, type, sizeof type, mount, sizeof mount), want_net[i]);
        assert_string_equal(type, want_type[i]);
        char m[4200];
        snprintf(m, sizeof m, "%s/%s", real, want_mount[i]);
        assert_string_equal(mount, m);
    }
    /* the root's own file system; a relative name; no table to read: not known, local */
    assert_int_equal(rt_sqlite_network_fs("/h.db", mi, type, sizeof type, NULL, 0), 0);
    assert_string_equal(type, "ext4");
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(rt_sqlite_network_fs("h.db", path, type, sizeof type, mount, sizeof mount), 0);
    assert_string_equal(type, "");
    assert_int_equal(rt_sqlite_network_fs(NULL, mi, NULL, 0, NULL, 0), 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(network_fs_longest_mount),
        cmocka_unit_test(server_capture),
        cmocka_unit_test(escapes_and_optional_fields),
        cmocka_unit_test(malformed_lines_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
