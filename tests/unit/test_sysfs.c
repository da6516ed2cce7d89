/* test_sysfs.c - disk and interface discovery over fixture sys trees: which block devices are
 * disks, and how partitions, LVM, md and btrfs mounts resolve to them. */
#include "unit.h"
#include "source/sources.h"

static rt_roots open_case(const char *c)
{
    char p[1024], s[1024];
    snprintf(p, sizeof p, "%s/%s/proc", RT_FIXTURES, c);
    snprintf(s, sizeof s, "%s/%s/sys", RT_FIXTURES, c);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, s), RT_OK);
    return r;
}

static void physical_disks(void **state)
{
    (void)state;
    rt_roots r = open_case("server-nvme-lvm");
    assert_true(rt_block_is_physical_disk(&r, "nvme0n1"));
    assert_true(rt_block_is_physical_disk(&r, "sda"));
    assert_true(rt_block_is_physical_disk(&r, "sr0"));
    assert_false(rt_block_is_physical_disk(&r, "nvme0n1p1")); /* partition */
    assert_false(rt_block_is_physical_disk(&r, "dm-0"));      /* virtual */
    assert_false(rt_block_is_physical_disk(&r, "md0"));
    assert_false(rt_block_is_physical_disk(&r, "loop0"));
    assert_false(rt_block_is_physical_disk(&r, "zram0"));
    assert_false(rt_block_is_physical_disk(&r, "nosuch"));
    rt_roots_close(&r);
}

static void disk_info(void **state)
{
    (void)state;
    rt_roots r = open_case("server-nvme-lvm");
    rt_disk_info d;
    assert_int_equal(rt_disk_info_read(&r, "nvme0n1", &d), 0);
    assert_string_equal(d.model, "Samsung SSD 980 PRO 1TB");
    assert_string_equal(d.serial, "S5GXNF0R123456K");
    assert_string_equal(d.vendor, "0x144d");
    assert_string_equal(d.device_type, "nvme");
    assert_int_equal(d.capacity_bytes, 1953525168ull * 512);
    rt_disk_info_free(&d);
    assert_int_equal(rt_disk_info_read(&r, "sda", &d), 0);
    assert_string_equal(d.vendor, "ATA"); /* padded in sysfs, trimmed here */
    assert_string_equal(d.device_type, "hdd");
    assert_non_null(strstr(d.serial, "ZFN0ABCD")); /* the WWID stands in for a serial */
    rt_disk_info_free(&d);
    assert_int_equal(rt_disk_info_read(&r, "sdd", &d), 0);
    assert_null(d.serial);
    rt_disk_info_free(&d);
    rt_roots_close(&r);
}

typedef struct names {
    int n;
    char v[4][32];
} names;

static void add(void *user, const char *disk)
{
    names *n = user;
    if (n->n < 4)
        snprintf(n->v[n->n++], 32, "%s", disk);
}

static void resolve(void **state)
{
    (void)state;
    rt_roots r = open_case("server-nvme-lvm");
    names n = {0};
    /* LVM volume on a partition: the volume's own device first (listed, virtual), then the
     * one physical disk beneath it */
    assert_int_equal(rt_block_resolve_disks(&r, 253, 0, "/dev/mapper/vg0-root", add, &n), 1);
    assert_int_equal(n.n, 2);
    assert_string_equal(n.v[0], "dm-0");
    assert_string_equal(n.v[1], "nvme0n1");
    /* a volume spanning two disks */
    n = (names){0};
    assert_int_equal(rt_block_resolve_disks(&r, 253, 1, NULL, add, &n), 2);
    /* md RAID1 over two partitions */
    n = (names){0};
    assert_int_equal(rt_block_resolve_disks(&r, 9, 0, NULL, add, &n), 2);
    /* btrfs: anonymous device number, found through its source */
    n = (names){0};
    assert_int_equal(rt_block_resolve_disks(&r, 0, 45, "/dev/nvme1n1", add, &n), 1);
    assert_string_equal(n.v[0], "nvme1n1");
    /* a mapper name when there is no usable device number */
    n = (names){0};
    assert_int_equal(rt_block_resolve_disks(&r, 0, 99, "/dev/mapper/vg0-root", add, &n), 1);
    assert_string_equal(n.v[0], "dm-0");
    /* a loop device and tmpfs resolve to nothing */
    n = (names){0};
    assert_int_equal(rt_block_resolve_disks(&r, 7, 0, "/dev/loop0", add, &n), 0);
    assert_int_equal(rt_block_resolve_disks(&r, 0, 25, "tmpfs", add, &n), 0);
    rt_roots_close(&r);
}

static void netif(void **state)
{
    (void)state;
    rt_roots r = open_case("server-nvme-lvm");
    rt_netif_info n;
    assert_int_equal(rt_netif_info_open(&r, "eno1", &n), 0);
    assert_false(n.loopback);
    assert_string_equal(n.driver, "e1000e");
    assert_string_equal(n.mac_address, "3c:ec:ef:12:34:56");
    assert_true(n.speed_fd >= 0);
    rt_netif_info_free(&n);
    assert_int_equal(rt_netif_info_open(&r, "lo", &n), 0);
    assert_true(n.loopback);
    rt_netif_info_free(&n);
    assert_int_equal(rt_netif_info_open(&r, "tailscale0", &n), 0);
    assert_null(n.mac_address);
    assert_null(n.driver);
    assert_int_equal(n.speed_fd, -1);
    rt_netif_info_free(&n);
    rt_roots_close(&r);
    assert_int_equal(rt_parse_speed("1000\n", 5), 1000);
    assert_true(rt_parse_speed("-1\n", 3) == RT_NULL_I64);
    assert_true(rt_parse_speed("", -22) == RT_NULL_I64);
    assert_true(rt_parse_speed("4294967295\n", 11) == RT_NULL_I64);
}

static void no_sys_root_falls_back_on_names(void **state)
{
    (void)state;
    char p[1024];
    snprintf(p, sizeof p, "%s/vm-virtio/proc", RT_FIXTURES);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, "/nonexistent-sys-root"), RT_OK);
    assert_int_equal(r.sys_fd, -1);
    assert_true(rt_block_is_physical_disk(&r, "sda"));
    assert_true(rt_block_is_physical_disk(&r, "nvme0n1"));
    assert_true(rt_block_is_physical_disk(&r, "mmcblk0"));
    assert_false(rt_block_is_physical_disk(&r, "sda1"));
    assert_false(rt_block_is_physical_disk(&r, "nvme0n1p2"));
    assert_false(rt_block_is_physical_disk(&r, "loop3"));
    assert_false(rt_block_is_physical_disk(&r, "dm-0"));
    rt_roots_close(&r);
    assert_int_equal(rt_roots_open(&r, "/nonexistent-proc-root", NULL), RT_ERR_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(physical_disks), cmocka_unit_test(disk_info), cmocka_unit_test(resolve),
        cmocka_unit_test(netif), cmocka_unit_test(no_sys_root_falls_back_on_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
