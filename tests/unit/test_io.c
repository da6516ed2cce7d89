/* test_io.c - core/io.c: whole-file reads from offset 0 into caller buffers (truncation,
 * -errno, pipes, procfs read twice), the small open/read helpers, the bounded rt_buf and
 * rt_read_fd_grow on files larger than the first buffer and than the maximum, and a destructor's
 * rt_close_all and rt_free_all. */
#include "unit.h"

#include <errno.h>

#include "core/core.h"

static char dir[] = "/tmp/rt-io-XXXXXX";
static int dfd = -1;

static int setup(void **state)
{
    (void)state;
    unit_tmpdir(dir);
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    rt_close(&dfd);
    unit_rmtree(dir);
    return 0;
}

/* A string of n bytes, "0123456789" repeated, with no newline (heap; the caller frees). */
static char *pattern(size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('0' + i % 10);
    s[n] = '\0';
    return s;
}

static void pread_whole_and_truncated(void **state)
{
    (void)state;
    unit_put(dir, "f", "hello world\n");
    int fd = rt_open_at(dfd, "f");
    assert_true(fd >= 0);
    char buf[64];
    assert_int_equal(rt_pread_all(fd, buf, sizeof buf), 12);
    assert_string_equal(buf, "hello world\n");
    assert_int_equal(rt_pread_single(fd, buf, sizeof buf), 12);
    assert_string_equal(buf, "hello world\n");
    /* read again: always from offset 0, never where the last read stopped */
    assert_int_equal(rt_pread_all(fd, buf, sizeof buf), 12);
    /* a buffer too small: cap-1 bytes, NUL-terminated */
    assert_int_equal(rt_pread_all(fd, buf, 6), 5);
    assert_string_equal(buf, "hello");
    assert_int_equal(rt_pread_single(fd, buf, 6), 5);
    assert_string_equal(buf, "hello");
    assert_int_equal(rt_pread_all(fd, buf, 1), 0);
    assert_string_equal(buf, "");
    assert_int_equal(rt_pread_all(fd, buf, 0), -EINVAL);
    /* the file rewritten in place under the open fd: the next read sees the new text */
    unit_put(dir, "f", "bye");
    assert_int_equal(rt_pread_all(fd, buf, sizeof buf), 3);
    assert_string_equal(buf, "bye");
    rt_close(&fd);
    assert_int_equal(fd, -1);
    rt_close(&fd); /* already closed: nothing happens */
    assert_int_equal(fd, -1);
    /* a closed descriptor: -EBADF, the buffer still terminated */
    buf[0] = 'x';
    assert_int_equal(rt_pread_all(-1, buf, sizeof buf), -EBADF);
    assert_string_equal(buf, "");
}

static void pipe_is_not_seekable(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "abc", 3), 3);
    char buf[16];
    assert_int_equal(rt_pread_all(p[0], buf, sizeof buf), -ESPIPE);
    assert_string_equal(buf, "");
    assert_int_equal(rt_pread_single(p[0], buf, sizeof buf), -ESPIPE);
    close(p[0]);
    close(p[1]);
}

static void procfs_read_twice(void **state)
{
    (void)state;
    int pfd = rt_open_at(AT_FDCWD, "/proc/self/mountinfo");
    assert_true(pfd >= 0);
    static char a[1 << 18], b[1 << 18];
    ssize_t n1 = rt_pread_all(pfd, a, sizeof a);
    ssize_t n2 = rt_pread_all(pfd, b, sizeof b);
    assert_true(n1 > 0);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, (size_t)n1);
    /* the whole file, as stdio reads it (mountinfo comes a page or so per read) */
    FILE *f = fopen("/proc/self/mountinfo", "r");
    assert_non_null(f);
    static char c[1 << 18];
    size_t n3 = fread(c, 1, sizeof c - 1, f);
    fclose(f);
    assert_int_equal((size_t)n1, n3);
    assert_memory_equal(a, c, n3);
    rt_close(&pfd);

    /* a one-record procfs file through a kept fd, twice */
    pfd = rt_open_at(AT_FDCWD, "/proc/version");
    assert_true(pfd >= 0);
    n1 = rt_pread_single(pfd, a, sizeof a);
    n2 = rt_pread_single(pfd, b, sizeof b);
    assert_true(n1 > 0);
    assert_int_equal(n1, n2);
    assert_string_equal(a, b);
    rt_close(&pfd);
}

static void read_at_helpers(void **state)
{
    (void)state;
    char buf[64];
    unit_put(dir, "line", "  value \t\r\n\n");
    assert_int_equal(rt_read_at(dfd, "line", buf, sizeof buf), 12);
    assert_int_equal(rt_read_line_at(dfd, "line", buf, sizeof buf), 7);
    assert_string_equal(buf, "  value"); /* only trailing whitespace goes */
    assert_int_equal(rt_read_at(dfd, "line", buf, 4), 3);
    assert_string_equal(buf, "  v");

    buf[0] = 'x';
    assert_int_equal(rt_read_at(dfd, "missing", buf, sizeof buf), -ENOENT);
    assert_string_equal(buf, "");
    assert_int_equal(rt_read_line_at(dfd, "missing", buf, sizeof buf), -ENOENT);
    assert_int_equal(rt_open_at(dfd, "missing"), -ENOENT);
    assert_int_equal(rt_open_at(-1, "line"), -ENOENT); /* a root that could not be opened */
    assert_int_equal(rt_read_at(-1, "line", buf, sizeof buf), -ENOENT);

    int64_t v = 7;
    unit_put(dir, "num", "123456789012\n");
    assert_int_equal(rt_read_i64_at(dfd, "num", &v), 0);
    assert_true(v == 123456789012LL);
    unit_put(dir, "neg", "-5");
    assert_int_equal(rt_read_i64_at(dfd, "neg", &v), 0);
    assert_true(v == -5);
    v = 7;
    unit_put(dir, "junk", "12x\n");
    assert_int_equal(rt_read_i64_at(dfd, "junk", &v), -EINVAL);
    unit_put(dir, "empty", "\n");
    assert_int_equal(rt_read_i64_at(dfd, "empty", &v), -EINVAL);
    unit_put(dir, "big", "99999999999999999999999\n");
    assert_int_equal(rt_read_i64_at(dfd, "big", &v), -EINVAL);
    assert_true(v == 7); /* untouched on failure */
    assert_int_equal(rt_read_i64_at(dfd, "missing", &v), -ENOENT);
    /* a directory: opened, but reading it fails with -EISDIR */
    snprintf(buf, sizeof buf, "%s/sub", dir);
    assert_int_equal(mkdir(buf, 0755), 0);
    assert_int_equal(rt_read_at(dfd, "sub", buf, sizeof buf), -EISDIR);
}

static void buf_bounds(void **state)
{
    (void)state;
    rt_buf b;
    rt_buf_init(&b, 16);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(rt_buf_reserve(&b, 17), -1); /* past the maximum */
    assert_null(b.data);
    assert_int_equal(rt_buf_reserve(&b, 16), 0); /* exactly the maximum */
    assert_true(b.cap <= b.max);
    assert_int_equal(rt_buf_append(&b, "0123456789", 10), 0);
    assert_int_equal(rt_buf_append(&b, "abcde", 5), 0);
    assert_int_equal(b.len, 15);
    assert_string_equal(b.data, "0123456789abcde");
    assert_int_equal(rt_buf_append(&b, "X", 1), -1); /* content and NUL would pass the maximum */
    assert_true(b.len <= b.max);
    assert_int_equal(rt_buf_append(&b, "YZ", 2), -1); /* past max: fails whatever the cap */
    assert_true(b.len <= b.max);
    assert_memory_equal(b.data, "0123456789abcde", 15);
    assert_int_equal(rt_buf_append(&b, "", 0), 0);
    rt_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.cap, 0);

    /* growth by doubling, never past max */
    rt_buf_init(&b, 1000);
    assert_int_equal(rt_buf_reserve(&b, 1), 0);
    assert_int_equal(b.cap, 256);
    assert_int_equal(rt_buf_reserve(&b, 600), 0);
    assert_int_equal(b.cap, 1000); /* 512 would be too small, 1024 too large: capped */
    for (int i = 0; i < 99; i++)
        assert_int_equal(rt_buf_append(&b, "0123456789", 10), 0);
    assert_int_equal(rt_buf_append(&b, "012345678", 9), 0);
    assert_int_equal(b.len, 999);
    assert_int_equal(rt_buf_append(&b, "0", 1), -1); /* the NUL needs the last byte */
    assert_int_equal(b.len, 999);
    assert_true(b.cap <= b.max);
    /* a huge append does not overflow the length check */
    assert_int_equal(rt_buf_append(&b, "0", SIZE_MAX), -1);
    rt_buf_free(&b);
    rt_buf_free(&b); /* twice: harmless */
}

static void read_fd_grow(void **state)
{
    (void)state;
    /* larger than the first buffer (4096): grows and reads the whole file */
    char *big = pattern(10000);
    unit_put(dir, "big", big);
    int fd = rt_open_at(dfd, "big");
    assert_true(fd >= 0);
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    assert_int_equal(rt_read_fd_grow(fd, &b, RT_READ_TO_EOF), 10000);
    assert_int_equal(b.len, 10000);
    assert_string_equal(b.data, big);
    /* again through the same buffer: the same, from offset 0 */
    assert_int_equal(rt_read_fd_grow(fd, &b, RT_READ_SINGLE), 10000);
    assert_string_equal(b.data, big);
    rt_buf_free(&b);

    /* larger than the maximum: -EFBIG, what fitted is there */
    rt_buf_init(&b, 8192);
    assert_int_equal(rt_read_fd_grow(fd, &b, RT_READ_TO_EOF), -EFBIG);
    assert_int_equal(b.len, 8191);
    assert_memory_equal(b.data, big, 8191);
    rt_buf_free(&b);
    /* a maximum below the first buffer: no buffer at all */
    rt_buf_init(&b, 100);
    assert_int_equal(rt_read_fd_grow(fd, &b, RT_READ_TO_EOF), -ENOMEM);
    rt_buf_free(&b);
    rt_close(&fd);

    /* a small file: one read */
    unit_put(dir, "small", "abc");
    fd = rt_open_at(dfd, "small");
    rt_buf_init(&b, 1 << 20);
    assert_int_equal(rt_read_fd_grow(fd, &b, RT_READ_SINGLE), 3);
    assert_string_equal(b.data, "abc");
    assert_int_equal(b.cap, 4096);
    rt_close(&fd);
    /* a bad descriptor: its -errno */
    assert_int_equal(rt_read_fd_grow(-1, &b, RT_READ_TO_EOF), -EBADF);
    rt_buf_free(&b);

    /* a file of exactly max-1 bytes fits (with its NUL) */
    char *edge = pattern(8191);
    unit_put(dir, "edge", edge);
    fd = rt_open_at(dfd, "edge");
    rt_buf_init(&b, 8192);
    ssize_t n = rt_read_fd_grow(fd, &b, RT_READ_TO_EOF);
    assert_int_equal(n, 8191);
    assert_int_equal(b.len, 8191);
    assert_memory_equal(b.data, edge, 8191);
    rt_buf_free(&b);
    rt_close(&fd);
    free(edge);
    free(big);
}

static void missing_file(void **state)
{
    (void)state;
    int fd = rt_open_at(dfd, "nothing/here");
    assert_int_equal(fd, -ENOENT);
    rt_buf b;
    rt_buf_init(&b, 1 << 16);
    assert_int_equal(rt_read_fd_grow(fd, &b, RT_READ_TO_EOF), -EBADF);
    rt_buf_free(&b);
}

/* rt_close_all closes each descriptor it is given and sets it to -1 (one already -1 is left);
 * rt_free_all frees each block it is given, NULL among them (a block it missed is a leak the
 * asan section reports). */
static void close_all_and_free_all(void **state)
{
    (void)state;
    int p[2], q[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(q), 0);
    int was[3] = {p[0], p[1], q[0]}, none = -1;
    rt_close_all(&p[0], &p[1], &none, &q[0]);
    assert_int_equal(p[0], -1);
    assert_int_equal(p[1], -1);
    assert_int_equal(q[0], -1);
    assert_int_equal(none, -1);
    for (size_t i = 0; i < RT_ARRAY_LEN(was); i++) {
        errno = 0;
        assert_int_equal(fcntl(was[i], F_GETFD), -1);
        assert_int_equal(errno, EBADF);
    }
    assert_true(fcntl(q[1], F_GETFD) >= 0); /* not named: still open */
    rt_close(&q[1]);

    char *a = strdup("a"), *b = malloc(64);
    const char *c = strdup("c");
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    rt_free_all(a, NULL, b, (void *)c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pread_whole_and_truncated), cmocka_unit_test(pipe_is_not_seekable),
        cmocka_unit_test(procfs_read_twice),         cmocka_unit_test(read_at_helpers),
        cmocka_unit_test(buf_bounds),                cmocka_unit_test(read_fd_grow),
        cmocka_unit_test(missing_file),              cmocka_unit_test(close_all_and_free_all),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
