/* test_dirwalk.c - the directory walker: a directory larger than one getdents buffer listed
 * whole, "." and ".." left out, stopping early, a missing path, a file, d_type values, a
 * kept-open directory fd walked twice, and the walk of numbered entries only (rt_dir_walk_ids)
 * and their count (rt_dir_count_ids, rt_dir_count_ids_fd). */
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dirwalk.h"

enum { MANY = 600 }; /* 600 entries of ~56 bytes: several RT_DIR_WALK_BUF fills */

typedef struct {
    long seen;
    long stop_after;
    unsigned char hits[MANY];
    int dot, bad, dir, reg, lnk;
} walk_state;

static int count_cb(void *user, const char *name, unsigned char d_type)
{
    walk_state *w = user;
    w->seen++;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        w->dot++;
    unsigned idx;
    char tail;
    if (sscanf(name, "entry-with-a-rather-long-name-%u%c", &idx, &tail) == 1 && idx < MANY)
        w->hits[idx]++;
    if (strcmp(name, "subdir") == 0)
        w->dir += d_type == DT_DIR;
    else if (strcmp(name, "link") == 0)
        w->lnk += d_type == DT_LNK;
    else if (strncmp(name, "entry", 5) == 0)
        w->reg += d_type == DT_REG;
    else
        w->bad++;
    return w->stop_after && w->seen >= w->stop_after;
}

static char tmp[64];

static int make_tree(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/rt-dirwalk-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    int dfd = open(tmp, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < MANY; i++) {
        char name[64];
        snprintf(name, sizeof name, "entry-with-a-rather-long-name-%d", i);
        int fd = openat(dfd, name, O_CREAT | O_WRONLY, 0600);
        if (fd < 0)
            return -1;
        close(fd);
    }
    if (mkdirat(dfd, "subdir", 0700) < 0 || symlinkat("subdir", dfd, "link") < 0)
        return -1;
    close(dfd);
    return 0;
}

static int remove_tree(void **state)
{
    (void)state;
    int dfd = open(tmp, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < MANY; i++) {
        char name[64];
        snprintf(name, sizeof name, "entry-with-a-rather-long-name-%d", i);
        unlinkat(dfd, name, 0);
    }
    unlinkat(dfd, "link", 0);
    unlinkat(dfd, "subdir", AT_REMOVEDIR);
    close(dfd);
    rmdir(tmp);
    return 0;
}

static void lists_every_entry(void **state)
{
    (void)state;
    static walk_state w;
    memset(&w, 0, sizeof w);
    assert_true((long)MANY * 56 > 2 * RT_DIR_WALK_BUF);
    long n = rt_dir_walk(AT_FDCWD, tmp, count_cb, &w);
    assert_int_equal(n, MANY + 2);
    assert_int_equal(w.seen, MANY + 2);
    assert_int_equal(w.dot, 0);
    assert_int_equal(w.bad, 0);
    for (int i = 0; i < MANY; i++)
        assert_int_equal(w.hits[i], 1);
    /* d_type as the file system reports it (tmpfs, ext4, xfs and overlayfs all do) */
    assert_int_equal(w.dir, 1);
    assert_int_equal(w.lnk, 1);
    assert_int_equal(w.reg, MANY);
}

static void stops_when_told(void **state)
{
    (void)state;
    static walk_state w;
    memset(&w, 0, sizeof w);
    w.stop_after = 5;
    assert_int_equal(rt_dir_walk(AT_FDCWD, tmp, count_cb, &w), 5);
    assert_int_equal(w.seen, 5);
    /* past the first buffer too */
    memset(&w, 0, sizeof w);
    w.stop_after = MANY - 3;
    assert_int_equal(rt_dir_walk(AT_FDCWD, tmp, count_cb, &w), MANY - 3);
}

static void relative_to_dirfd(void **state)
{
    (void)state;
    static walk_state w;
    memset(&w, 0, sizeof w);
    int root = open("/", O_RDONLY | O_DIRECTORY);
    assert_true(root >= 0);
    assert_int_equal(rt_dir_walk(root, tmp + 1 /* "tmp/rt-dirwalk-..." */, count_cb, &w), MANY + 2);
    close(root);
    /* an empty directory: nothing handed over */
    memset(&w, 0, sizeof w);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/subdir", tmp);
    assert_int_equal(rt_dir_walk(AT_FDCWD, sub, count_cb, &w), 0);
    assert_int_equal(w.seen, 0);
}

static void errors(void **state)
{
    (void)state;
    walk_state w = {0};
    char p[128];
    snprintf(p, sizeof p, "%s/no-such-dir", tmp);
    assert_int_equal(rt_dir_walk(AT_FDCWD, p, count_cb, &w), -ENOENT);
    snprintf(p, sizeof p, "%s/entry-with-a-rather-long-name-0", tmp);
    assert_int_equal(rt_dir_walk(AT_FDCWD, p, count_cb, &w), -ENOTDIR);
    assert_int_equal(rt_dir_walk(-1, "relative", count_cb, &w), -EBADF);
    int fd = open(p, O_RDONLY);
    assert_int_equal(rt_dir_walk_fd(fd, count_cb, &w), -ENOTDIR);
    close(fd);
    assert_int_equal(w.seen, 0);
}

static void kept_open_fd_walked_again(void **state)
{
    (void)state;
    static walk_state w;
    int fd = open(tmp, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int round = 0; round < 2; round++) {
        memset(&w, 0, sizeof w);
        assert_int_equal(rt_dir_walk_fd(fd, count_cb, &w), MANY + 2);
    }
    /* a walk stopped half way does not leave the next one short */
    memset(&w, 0, sizeof w);
    w.stop_after = 3;
    assert_int_equal(rt_dir_walk_fd(fd, count_cb, &w), 3);
    memset(&w, 0, sizeof w);
    assert_int_equal(rt_dir_walk_fd(fd, count_cb, &w), MANY + 2);
    close(fd);
}

typedef struct {
    int64_t count, small_sum, max, stop_after;
} id_state;

static int note_id(void *user, int64_t id)
{
    id_state *w = user;
    w->count++;
    if (id < 1000)
        w->small_sum += id;
    if (id > w->max)
        w->max = id;
    return w->stop_after && w->count >= w->stop_after;
}

static void numbered_entries_only(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/rt-dirwalk-ids-XXXXXX");
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    /* ids, and names that only look like them: a sign, a suffix, a space, a letter, too large */
    const char *names[] = {"1", "42", "007", "9223372036854775807", "-3", "12a", "1 ", "x1",
                           "9223372036854775808", "99999999999999999999"};
    const size_t n = sizeof names / sizeof *names;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mkdirat(dfd, names[i], 0700), 0);
    id_state all = {0};
    assert_int_equal(rt_dir_walk_ids(AT_FDCWD, dir, note_id, &all), (long)n); /* entries read */
    assert_int_equal(all.count, 4);
    assert_int_equal(all.small_sum, 1 + 42 + 7);
    assert_true(all.max == INT64_MAX);
    id_state again = {0};
    assert_int_equal(rt_dir_walk_ids_fd(dfd, note_id, &again), (long)n);
    assert_int_equal(again.count, 4);
    id_state first = {.stop_after = 1};
    assert_true(rt_dir_walk_ids_fd(dfd, note_id, &first) > 0);
    assert_int_equal(first.count, 1);
    /* the count, by path and over the kept fd (after a walk stopped half way), and again after
     * an entry came and one went */
    assert_int_equal(rt_dir_count_ids(dfd, "."), 4);
    assert_int_equal(rt_dir_count_ids_fd(dfd), 4);
    assert_int_equal(mkdirat(dfd, "5", 0700), 0);
    assert_int_equal(unlinkat(dfd, "42", AT_REMOVEDIR), 0);
    assert_int_equal(mkdirat(dfd, "6", 0700), 0);
    assert_int_equal(rt_dir_count_ids_fd(dfd), 5);
    assert_int_equal(unlinkat(dfd, "5", AT_REMOVEDIR), 0);
    assert_int_equal(unlinkat(dfd, "6", AT_REMOVEDIR), 0);
    assert_int_equal(mkdirat(dfd, "42", 0700), 0);
    assert_int_equal(rt_dir_count_ids_fd(-1), -1);
    assert_int_equal(rt_dir_count_ids(dfd, "nonexistent"), -1);
    assert_int_equal(rt_dir_walk_ids(AT_FDCWD, "/nonexistent-rt-dirwalk", note_id, &all), -ENOENT);
    for (size_t i = 0; i < n; i++)
        unlinkat(dfd, names[i], AT_REMOVEDIR);
    close(dfd);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_every_entry), cmocka_unit_test(stops_when_told),
        cmocka_unit_test(relative_to_dirfd), cmocka_unit_test(errors),
        cmocka_unit_test(kept_open_fd_walked_again), cmocka_unit_test(numbered_entries_only),
    };
    return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
