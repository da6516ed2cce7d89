/* test_disks.c - the sampler's disk part (sample/disks.c) through the replay API on the
 * captured fixtures (proc copied to a temp dir and rewritten in place, sys as captured): disks
 * appearing and leaving between samples without losing the others' counters, rates over the
 * given elapsed time (null at 0), and each disk's mount pointers matching its mount_count; the
 * disks' own sysfs stat files read between two readings of diskstats (a copy of a fixture's sys
 * with stat files written in), and live, against the kernel's diskstats around each sample. */
#include "unit.h"

#include <fcntl.h>
#include <math.h>

#include "resource_tracker.h"
#include "sample/sampler_internal.h"
#include "unit_replay.h"

static char dir[64], proc[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-disks-XXXXXX");
    unit_tmpdir(dir);
    snprintf(proc, sizeof proc, "%s/proc", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* statvfs stand-in: the awkward fixture's two filesystems ("/fast" fails: null space); with
 * user non-NULL every mount point has 1000 blocks of 4096 bytes, 250 free, 200 available. */
static int fake_statvfs(void *user, const char *mount_point, struct statvfs *out)
{
    memset(out, 0, sizeof *out);
    out->f_frsize = 4096;
    if (user) {
        out->f_blocks = 1000;
        out->f_bfree = 250;
        out->f_bavail = 200;
        return 0;
    }
    if (strcmp(mount_point, "/") == 0) {
        out->f_blocks = 240000000;
        out->f_bfree = 120000000;
        out->f_bavail = 107800000;
        return 0;
    }
    if (strcmp(mount_point, "/var") == 0) {
        out->f_blocks = 35000000;
        out->f_bfree = 30000000;
        out->f_bavail = 28250000;
        return 0;
    }
    return -1;
}

/* A sampler on the fixture case's sys and the temp copy of its proc, with its baseline
 * sample taken at mono 1000. */
static rt_sampler *open_case(const char *name, void *statvfs_user)
{
    return unit_open_case(name, proc, fake_statvfs, statvfs_user);
}

static const rt_disk *find_disk(const rt_sample *smp, const char *name)
{
    for (size_t i = 0; i < smp->disk_count; i++)
        if (strcmp(smp->disk[i]->device, name) == 0)
            return smp->disk[i];
    return NULL;
}

/* Every disk's mounts[0..mount_count) are valid, distinct pointers to filled mounts. */
static void check_mounts(const rt_sample *smp)
{
    for (size_t i = 0; i < smp->disk_count; i++) {
        const rt_disk *d = smp->disk[i];
        assert_non_null(d);
        assert_non_null(d->device);
        if (d->mount_count)
            assert_non_null(d->mounts);
        for (size_t k = 0; k < d->mount_count; k++) {
            const rt_mount *m = d->mounts[k];
            assert_non_null(m);
            assert_non_null(m->mount_point);
            assert_non_null(m->filesystem);
            assert_true(m->mount_point[0] == '/');
            for (size_t j = 0; j < k; j++) {
                assert_true(d->mounts[j] != m);
                assert_string_not_equal(d->mounts[j]->mount_point, m->mount_point);
            }
            for (size_t e = 0; e < i; e++) /* no mount struct shared between disks */
                for (size_t j = 0; j < smp->disk[e]->mount_count; j++)
                    assert_true(smp->disk[e]->mounts[j] != m);
        }
    }
}

static const char *const awkward_stats =
    "   8       0 sda 1000 10 5000 500 2000 20 8000 800 0 900 1300\n"
    "   8      16 sdb 1000 10 7000 500 2000 20 9000 800 0 900 1300 5 0 80 1\n"
    " 104       0 cciss/c0d0 1000 10 100000 500 2000 20 200000 800 0 900 1300\n";

static void disk_appears_and_leaves(void **state)
{
    (void)state;
    /* sdc is not in diskstats yet */
    unit_copy_fixture("awkward/proc", proc);
    unit_put(proc, "diskstats", awkward_stats);
    rt_sampler *s = open_case("awkward", NULL);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    assert_int_equal(smp->disk_count, 3);
    assert_null(find_disk(smp, "sdc"));
    check_mounts(smp);

    /* sdc appears (with counters from before we saw it); sda and cciss move on */
    unit_put(proc, "diskstats",
             "   8       0 sda 1000 10 6024 500 2000 20 10048 800 0 900 1300\n"
             "   8      16 sdb 1000 10 7000 500 2000 20 9000 800 0 900 1300 5 0 80 1\n"
             "   8      32 sdc 1000 10 777 500 2000 20 888 800 0 900 1300 5 0 80 1 40 12\n"
             " 104       0 cciss/c0d0 1000 10 100512 500 2000 20 200000 800 0 900 1300\n");
    rt_sampler_sample_at(s, 1003.0, 1.7e9 + 3, &smp);
    assert_int_equal(smp->disk_count, 4);
    assert_string_equal(smp->disk[3]->device, "sdc"); /* by name: cciss/c0d0 sda sdb sdc */
    const rt_disk *sda = find_disk(smp, "sda"), *sdc = find_disk(smp, "sdc");
    const rt_disk *cc = find_disk(smp, "cciss/c0d0");
    assert_non_null(sda);
    assert_non_null(sdc);
    assert_non_null(cc);
    /* the disks that stayed keep their previous counters through the rediscovery */
    assert_int_equal(sda->read_bytes, 1024 * 512);
    assert_int_equal(sda->write_bytes, 2048 * 512);
    assert_true(sda->read_bytes_per_sec == 1024 * 512 / 2.0); /* over the given 2 s */
    assert_true(sda->write_bytes_per_sec == 2048 * 512 / 2.0);
    assert_int_equal(sda->read_bytes_total, 6024 * 512);
    assert_int_equal(cc->read_bytes, 512 * 512);
    /* the new disk counts from now: its totals, but nothing in this interval */
    assert_int_equal(sdc->read_bytes_total, 777 * 512);
    assert_int_equal(sdc->write_bytes_total, 888 * 512);
    assert_int_equal(sdc->read_bytes, 0);
    assert_true(sdc->read_bytes_per_sec == 0.0);
    assert_string_equal(sdc->model, "DISK SDC");
    check_mounts(smp);
    /* the mounts were laid out again for the new list */
    assert_int_equal(sda->mount_count, 1);
    assert_string_equal(sda->mounts[0]->mount_point, "/");
    assert_string_equal(sda->mounts[0]->filesystem, "ext3");
    assert_int_equal(sdc->mount_count, 0);
    assert_int_equal(cc->mount_count, 1);
    assert_string_equal(cc->mounts[0]->mount_point, "/var");

    /* sdc moves on from where it was first seen */
    unit_put(proc, "diskstats",
             "   8       0 sda 1000 10 6024 500 2000 20 10048 800 0 900 1300\n"
             "   8      16 sdb 1000 10 7000 500 2000 20 9000 800 0 900 1300 5 0 80 1\n"
             "   8      32 sdc 1000 10 787 500 2000 20 888 800 0 900 1300 5 0 80 1 40 12\n"
             " 104       0 cciss/c0d0 1000 10 100512 500 2000 20 200000 800 0 900 1300\n");
    rt_sampler_sample_at(s, 1004.0, 1.7e9 + 4, &smp);
    assert_int_equal(find_disk(smp, "sdc")->read_bytes, 10 * 512);
    assert_int_equal(find_disk(smp, "sda")->read_bytes, 0);

    /* sdb leaves (and its mount with it); the others keep counting */
    unit_put(proc, "diskstats",
             "   8       0 sda 1000 10 6124 500 2000 20 10048 800 0 900 1300\n"
             "   8      32 sdc 1000 10 787 500 2000 20 888 800 0 900 1300 5 0 80 1 40 12\n"
             " 104       0 cciss/c0d0 1000 10 100512 500 2000 20 200000 800 0 900 1300\n");
    rt_sampler_sample_at(s, 1005.0, 1.7e9 + 5, &smp);
    assert_int_equal(smp->disk_count, 3);
    assert_null(find_disk(smp, "sdb"));
    assert_int_equal(find_disk(smp, "sda")->read_bytes, 100 * 512);
    check_mounts(smp);
    for (size_t i = 0; i < smp->disk_count; i++)
        for (size_t k = 0; k < smp->disk[i]->mount_count; k++)
            assert_string_not_equal(smp->disk[i]->mounts[k]->mount_point, "/fast");
    rt_sampler_free(s);
}

static void rates_over_elapsed(void **state)
{
    (void)state;
    rt_sampler *s = open_case("awkward", NULL);
    unit_put(proc, "diskstats", "   8       0 sda 1000 10 6000 500 2000 20 8000 800 0 900 1300\n");
    const rt_sample *smp;
    /* elapsed 0 (the same clock reading): the bytes are known, a rate is not */
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    assert_int_equal(smp->disk_count, 1);
    assert_int_equal(smp->disk[0]->read_bytes, 1000 * 512);
    assert_true(isnan(smp->disk[0]->read_bytes_per_sec));
    assert_true(isnan(smp->disk[0]->write_bytes_per_sec));
    /* a clock going backwards counts as 0 too */
    unit_put(proc, "diskstats", "   8       0 sda 1000 10 6100 500 2000 20 8000 800 0 900 1300\n");
    rt_sampler_sample_at(s, 999.0, 1.7e9, &smp);
    assert_true(smp->interval_secs == 0.0);
    assert_true(isnan(smp->disk[0]->read_bytes_per_sec));
    /* 0.25 s */
    unit_put(proc, "diskstats", "   8       0 sda 1000 10 6200 500 2000 20 8004 800 0 900 1300\n");
    rt_sampler_sample_at(s, 999.25, 1.7e9, &smp);
    assert_true(smp->disk[0]->read_bytes_per_sec == 100 * 512 / 0.25);
    assert_true(smp->disk[0]->write_bytes_per_sec == 4 * 512 / 0.25);
    /* counters going backwards (a reset): 0, never negative, totals as the kernel says */
    unit_put(proc, "diskstats", "   8       0 sda 1000 10 10 500 2000 20 8004 800 0 900 1300\n");
    rt_sampler_sample_at(s, 1000.25, 1.7e9, &smp);
    assert_int_equal(smp->disk[0]->read_bytes, 0);
    assert_true(smp->disk[0]->read_bytes_per_sec == 0.0);
    assert_int_equal(smp->disk[0]->read_bytes_total, 10 * 512);
    rt_sampler_free(s);
}

static void space_and_mounts(void **state)
{
    (void)state;
    rt_sampler *s = open_case("awkward", NULL);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    check_mounts(smp);
    const rt_disk *sdb = find_disk(smp, "sdb");
    assert_int_equal(sdb->mount_count, 1);
    assert_true(sdb->mounts[0]->total_bytes == RT_NULL_U64); /* statvfs failed: null */
    assert_true(isnan(sdb->mounts[0]->used_pct));
    const rt_mount *root = find_disk(smp, "sda")->mounts[0];
    assert_int_equal(root->total_bytes, 240000000ull * 4096);
    assert_int_equal(root->used_bytes, 120000000ull * 4096);
    assert_int_equal(root->available_bytes, 107800000ull * 4096);
    assert_true(fabs(root->used_pct - 120000000.0 / 227800000.0 * 100) < 1e-9);
    /* sums over the filesystems that answered */
    assert_int_equal(smp->disk_space_total_bytes, (240000000ull + 35000000ull) * 4096);
    assert_int_equal(smp->disk_space_used_bytes, (120000000ull + 5000000ull) * 4096);
    assert_int_equal(smp->disk_space_free_bytes, (107800000ull + 28250000ull) * 4096);
    rt_sampler_free(s);
}

static void vm_virtio(void **state)
{
    (void)state;
    rt_sampler *s = open_case("vm-virtio", "any");
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    /* loop devices are not listed, zram is, flagged virtual (as the Rust tool lists it), with
     * nothing mounted; the bind mount of part of / is not listed again */
    assert_int_equal(smp->disk_count, 2);
    assert_string_equal(smp->disk[0]->device, "vda");
    assert_false(smp->disk[0]->is_virtual);
    assert_string_equal(smp->disk[1]->device, "zram0");
    assert_true(smp->disk[1]->is_virtual);
    assert_int_equal(smp->disk[1]->mount_count, 0);
    assert_int_equal(smp->disk[0]->mount_count, 1);
    assert_string_equal(smp->disk[0]->mounts[0]->mount_point, "/");
    assert_int_equal(smp->disk_space_total_bytes, 1000 * 4096);
    check_mounts(smp);
    /* the t1 capture, 1.022 s later */
    char t1[1024];
    snprintf(t1, sizeof t1, "cp '%s/vm-virtio/t1/proc/diskstats' '%s/diskstats'", RT_FIXTURES, proc);
    unit_system(t1);
    rt_sampler_sample_at(s, 1002.022, 1.7e9 + 2, &smp);
    assert_int_equal(smp->disk_count, 2); /* vda, zram0 */
    assert_true(smp->disk[0]->write_bytes > 0);
    assert_true(fabs(smp->interval_secs - 1.022) < 1e-9);
    assert_true(smp->disk[0]->write_bytes_per_sec == (double)smp->disk[0]->write_bytes / smp->interval_secs);
    rt_sampler_free(s);
}

static void server_nvme_lvm(void **state)
{
    (void)state;
    rt_sampler *s = open_case("server-nvme-lvm", "any");
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp);
    /* 7 physical disks and 4 virtual devices (dm-0, dm-1, md0, zram0; not loop0), by name */
    assert_int_equal(smp->disk_count, 11);
    static const char *const names[] = {"dm-0", "dm-1", "md0",  "nvme0n1", "nvme1n1", "sda",
                                        "sdb",  "sdc",  "sdd", "sr0",     "zram0"};
    for (size_t i = 0; i < 11; i++) {
        assert_string_equal(smp->disk[i]->device, names[i]);
        assert_int_equal(smp->disk[i]->is_virtual, i < 3 || i == 10);
    }
    check_mounts(smp);
    /* a volume's filesystem under its own device too, as the Rust tool lists it */
    assert_int_equal(find_disk(smp, "dm-0")->mount_count, 1);
    assert_string_equal(find_disk(smp, "dm-0")->mounts[0]->mount_point, "/");
    assert_string_equal(find_disk(smp, "dm-1")->mounts[0]->mount_point, "/home");
    assert_string_equal(find_disk(smp, "md0")->mounts[0]->mount_point, "/data");
    assert_int_equal(find_disk(smp, "zram0")->mount_count, 0);
    const rt_disk *nv = find_disk(smp, "nvme0n1"), *sda = find_disk(smp, "sda");
    assert_int_equal(nv->mount_count, 4);
    const char *want[] = {"/", "/boot", "/boot/efi", "/home"};
    for (size_t k = 0; k < 4; k++) {
        int found = 0;
        for (size_t j = 0; j < nv->mount_count; j++)
            found += strcmp(nv->mounts[j]->mount_point, want[k]) == 0;
        assert_int_equal(found, 1);
    }
    /* /home's volume spans nvme0n1 and sda: listed under both, counted once in the sums */
    assert_int_equal(sda->mount_count, 1);
    assert_string_equal(sda->mounts[0]->mount_point, "/home");
    assert_int_equal(find_disk(smp, "sr0")->mount_count, 0);
    assert_string_equal(find_disk(smp, "sdd")->mounts[0]->mount_point, "/media/usb stick");
    /* 7 distinct filesystems: / /boot /boot/efi /home /data /srv /media/usb stick */
    assert_int_equal(smp->disk_space_total_bytes, 7 * 1000 * 4096);
    assert_int_equal(smp->disk_space_used_bytes, 7 * 750 * 4096);
    assert_int_equal(smp->disk_space_free_bytes, 7 * 200 * 4096);
    for (size_t i = 0; i < smp->disk_count; i++)
        assert_true(smp->disk[i]->read_bytes_per_sec == 0.0); /* nothing moved in 2 s */
    rt_sampler_free(s);
}


/* ---- the disks' own stat files (0.18) ------------------------------------------------------ */

static char sys[128];

/* Writes <sys>/block/<disk>/stat with r sectors read and w written (15 fields, as 4.18+). */
static void put_stat(const char *disk, unsigned long r, unsigned long w)
{
    char text[160], rel[128];
    snprintf(text, sizeof text, "%8u %8u %8lu %8u %8u %8u %8lu %8u %8u %8u %8u %8u %8u %8u %8u\n", 1000, 10, r, 500,
             2000, 20, w, 800, 0, 900, 1300, 5, 0, 80, 1);
    snprintf(rel, sizeof rel, "block/%s/stat", disk);
    unit_put(sys, rel, text);
}

static void put_diskstats(unsigned long sda_r, unsigned long sda_w, bool with_sdb, bool with_sdc)
{
    char text[1024];
    snprintf(text, sizeof text,
             "   8       0 sda 1000 10 %lu 500 2000 20 %lu 800 0 900 1300\n"
             "%s%s"
             " 104       0 cciss/c0d0 1000 10 100000 500 2000 20 200000 800 0 900 1300\n",
             sda_r, sda_w, with_sdb ? "   8      16 sdb 1000 10 7000 500 2000 20 9000 800 0 900 1300 5 0 80 1\n" : "",
             with_sdc ? "   8      32 sdc 1000 10 777 500 2000 20 888 800 0 900 1300 5 0 80 1 40 12\n" : "");
    unit_put(proc, "diskstats", text);
}

static void stat_files_between_diskstats(void **state)
{
    (void)state;
    unit_copy_fixture("awkward/proc", proc);
    put_diskstats(5000, 8000, true, false);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    unit_copy_fixture("awkward/sys", sys);
    put_stat("sda", 5000, 8000);
    put_stat("sdb", 7000, 9000);
    put_stat("cciss!c0d0", 100000, 200000); /* '/' spelled '!' */
    put_stat("sdc", 777, 888);              /* there, but not in diskstats yet */
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = sys;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, fake_statvfs, NULL, &s), RT_OK);
    /* its first reading (at creation) was diskstats'; the test's clock starts well after it,
     * so this one is diskstats' too, and the test's times count from it */
    const double t0 = rt_mono_secs() + 1000;
    const rt_sample *smp;
    rt_sampler_sample_at(s, t0, 1.7e9, &smp);
    assert_int_equal(s->disks.ds_reads, 2);
    assert_true(s->disks.stat_files);

    /* the stat files move, diskstats does not: the sample follows the disks' own files */
    put_stat("sda", 6024, 10048);
    rt_sampler_sample_at(s, t0 + 2, 1.7e9 + 2, &smp);
    assert_int_equal(s->disks.ds_reads, 2);
    assert_int_equal(s->disks.stat_reads, 1);
    assert_int_equal(smp->disk_count, 3);
    const rt_disk *sda = find_disk(smp, "sda");
    assert_int_equal(sda->read_bytes, 1024 * 512);
    assert_int_equal(sda->write_bytes, 2048 * 512);
    assert_true(sda->read_bytes_per_sec == 1024 * 512 / 2.0);
    assert_int_equal(sda->read_bytes_total, 6024 * 512);
    assert_int_equal(find_disk(smp, "sdb")->read_bytes, 0);
    assert_int_equal(find_disk(smp, "cciss/c0d0")->write_bytes_total, 200000 * 512);
    check_mounts(smp);

    /* a disk added to diskstats shows at its next reading, RT_DISK_PROBE_SECS after the last */
    put_diskstats(6024, 10048, true, true);
    rt_sampler_sample_at(s, t0 + RT_DISK_PROBE_SECS - 0.5, 1.7e9 + 9, &smp);
    assert_int_equal(smp->disk_count, 3);
    assert_null(find_disk(smp, "sdc"));
    rt_sampler_sample_at(s, t0 + RT_DISK_PROBE_SECS, 1.7e9 + 10, &smp);
    assert_int_equal(s->disks.ds_reads, 3);
    assert_int_equal(smp->disk_count, 4);
    const rt_disk *sdc = find_disk(smp, "sdc");
    assert_non_null(sdc);
    assert_int_equal(sdc->read_bytes_total, 777 * 512);
    assert_int_equal(sdc->read_bytes, 0); /* counted from when it was seen */
    assert_int_equal(find_disk(smp, "sda")->read_bytes, 0);
    check_mounts(smp);

    /* from then on sdc's own file too */
    put_stat("sdc", 787, 888);
    rt_sampler_sample_at(s, t0 + 11, 1.7e9 + 11, &smp);
    assert_int_equal(s->disks.ds_reads, 3);
    assert_int_equal(find_disk(smp, "sdc")->read_bytes, 10 * 512);

    /* a stat file that cannot be read as one: the sample is diskstats', every counter intact,
     * and so each sample while it stays so */
    put_diskstats(6124, 10048, true, true);
    put_stat("sda", 6124, 10048);
    unit_put(sys, "block/sdb/stat", "gone\n");
    rt_sampler_sample_at(s, t0 + 12, 1.7e9 + 12, &smp);
    assert_int_equal(s->disks.ds_reads, 4);
    assert_int_equal(find_disk(smp, "sda")->read_bytes, 100 * 512);
    assert_int_equal(find_disk(smp, "sdb")->read_bytes_total, 7000 * 512);
    rt_sampler_sample_at(s, t0 + 13, 1.7e9 + 13, &smp);
    assert_int_equal(s->disks.ds_reads, 5);
    assert_int_equal(find_disk(smp, "sda")->read_bytes, 0);
    /* mended: the stat files again */
    put_stat("sdb", 7000, 9000);
    uint64_t stat_reads = s->disks.stat_reads;
    rt_sampler_sample_at(s, t0 + 14, 1.7e9 + 14, &smp);
    assert_int_equal(s->disks.ds_reads, 5);
    assert_int_equal(s->disks.stat_reads, stat_reads + 1);

    /* a disk gone from diskstats leaves at its next reading; the rest count on */
    put_diskstats(6124, 10148, false, true);
    put_stat("sda", 6124, 10148);
    rt_sampler_sample_at(s, t0 + 24, 1.7e9 + 24, &smp);
    assert_int_equal(s->disks.ds_reads, 6);
    assert_int_equal(smp->disk_count, 3);
    assert_null(find_disk(smp, "sdb"));
    assert_int_equal(find_disk(smp, "sda")->write_bytes, 100 * 512);
    check_mounts(smp);
    rt_sampler_free(s);
}

/* Reads the real /proc/diskstats into d (at most cap); returns how many. */
static size_t live_diskstats(rt_diskstat *d, size_t cap)
{
    static char text[1 << 16];
    int fd = open("/proc/diskstats", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    ssize_t n = read(fd, text, sizeof text);
    close(fd);
    assert_true(n >= 0);
    size_t k = rt_diskstats_parse(text, (size_t)n, d, cap);
    return k < cap ? k : cap;
}

static const rt_diskstat *find_stat(const rt_diskstat *d, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return &d[i];
    return NULL;
}

/* Live: every listed disk's totals in each sample lie between the kernel's diskstats read just
 * before and just after it, whether the sample read diskstats or the disks' own files, while
 * this test writes and syncs a file between the samples. */
static void live_stat_files_match_diskstats(void **state)
{
    (void)state;
    rt_sampler *s = NULL;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
    static rt_diskstat before[256], after[256];
    char path[128];
    snprintf(path, sizeof path, "%s/written", dir);
    static char block[1 << 16];
    memset(block, 'x', sizeof block);
    for (int round = 0; round < 8; round++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, block, sizeof block), (ssize_t)sizeof block);
        fsync(fd);
        close(fd);
        size_t nb = live_diskstats(before, 256);
        const rt_sample *smp;
        assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
        size_t na = live_diskstats(after, 256);
        for (size_t i = 0; i < smp->disk_count; i++) {
            const rt_disk *d = smp->disk[i];
            const rt_diskstat *b = find_stat(before, nb, d->device), *a = find_stat(after, na, d->device);
            if (!b || !a || d->read_bytes_total == RT_NULL_U64)
                continue; /* a ZFS pool, or a disk that came or went just then */
            assert_true(b->sectors_read * 512 <= d->read_bytes_total);
            assert_true(d->read_bytes_total <= a->sectors_read * 512);
            assert_true(b->sectors_written * 512 <= d->write_bytes_total);
            assert_true(d->write_bytes_total <= a->sectors_written * 512);
        }
    }
    /* a machine whose listed disks have their stat files read them after the first sample */
    bool files = s->disks.ndisks > 0;
    for (size_t i = 0; i < s->disks.ndisks; i++) {
        char rel[300], name[128];
        snprintf(name, sizeof name, "%s", s->disks.disks[i].info.name);
        for (char *c = name; *c; c++)
            *c = *c == '/' ? '!' : *c;
        snprintf(rel, sizeof rel, "/sys/block/%s/stat", name);
        files &= access(rel, R_OK) == 0;
    }
    if (files)
        assert_true(s->disks.stat_reads >= 6);
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(disk_appears_and_leaves, setup, teardown),
        cmocka_unit_test_setup_teardown(rates_over_elapsed, setup, teardown),
        cmocka_unit_test_setup_teardown(space_and_mounts, setup, teardown),
        cmocka_unit_test_setup_teardown(vm_virtio, setup, teardown),
        cmocka_unit_test_setup_teardown(server_nvme_lvm, setup, teardown),
        cmocka_unit_test_setup_teardown(stat_files_between_diskstats, setup, teardown),
        cmocka_unit_test_setup_teardown(live_stat_files_match_diskstats, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
