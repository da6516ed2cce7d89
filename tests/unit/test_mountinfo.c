/* test_mountinfo.c - the mountinfo parser: escapes, optional fields, malformed lines. */
#include "unit.h"
#include "source/sources.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(server_capture),
        cmocka_unit_test(escapes_and_optional_fields),
        cmocka_unit_test(malformed_lines_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
