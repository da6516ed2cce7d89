/* test_gzip.c - gzip members through the dlopen'd zlib (core/gzip.h): zlib not mapped before the
 * first use, round trips through rt_gunzip, concatenated members, the max_bytes bound (nothing
 * taken from a refused write, the member still finishes within it), empty members,
 * rt_gunzip's refusals (truncated, garbage, past max_out), and rt_gunzip_stream: a descriptor
 * read in pieces (with bytes already read handed over), its refusals, and a gzip bomb read
 * through in memory that does not grow; rt_gzip_fd: a file gzipped to another, a member a 4 MiB
 * piece, read back whole. */
#include "unit.h"

#include <errno.h>
#include <sys/resource.h>

#include "core/gzip.h"

/* True when a library whose path contains name is mapped into this process. */
static bool mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

/* CSV-like text of about n bytes, different on every row. */
static char *csv_text(size_t n, size_t *len)
{
    char *s = malloc(n + 256);
    assert_non_null(s);
    size_t k = 0;
    for (unsigned i = 0; k < n; i++) {
        int w = snprintf(s + k, n + 256 - k, "%u,%u.%03u,%u,%u,%.2f\n", 1700000000u + i, i % 97, i % 1000, i * 7919u % 65536,
                         i % 3, (double)(i % 1000) / 7.0);
        assert_true(w > 0);
        k += (size_t)w;
    }
    *len = k;
    return s;
}

/* Fills buf with bytes from a fixed xorshift sequence (incompressible). */
static void noise(unsigned char *buf, size_t n, uint32_t seed)
{
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)x;
    }
}

static void loaded_at_first_use(void **state)
{
    (void)state;
    assert_false(mapped("libz.so")); /* nothing has asked for gzip yet */
    char err[256];
    assert_int_equal(rt_gzip_available(err, sizeof err), RT_OK);
    assert_true(mapped("libz.so"));
}

static void round_trip(void **state)
{
    (void)state;
    size_t len;
    char *text = csv_text(200000, &len);
    rt_gzip *z;
    assert_int_equal(rt_gzip_new(1 << 20, &z), RT_OK);
    /* row by row, as a batch is built */
    for (size_t a = 0; a < len;) {
        const char *nl = memchr(text + a, '\n', len - a);
        size_t n = (size_t)(nl - (text + a)) + 1;
        assert_int_equal(rt_gzip_write(z, text + a, n), RT_OK);
        a += n;
    }
    assert_int_equal(rt_gzip_write(z, "", 0), RT_OK);
    assert_int_equal(rt_gzip_in_bytes(z), len);
    const void *data;
    size_t glen;
    assert_int_equal(rt_gzip_finish(z, &data, &glen), RT_OK);
    assert_int_equal(glen, rt_gzip_out_bytes(z));
    assert_true(glen < len / 2); /* CSV compresses */
    const unsigned char *g = data;
    assert_int_equal(g[0], 0x1f);
    assert_int_equal(g[1], 0x8b);
    /* one member: the trailer's ISIZE is the whole input */
    uint32_t isize = (uint32_t)g[glen - 4] | (uint32_t)g[glen - 3] << 8 | (uint32_t)g[glen - 2] << 16 | (uint32_t)g[glen - 1] << 24;
    assert_int_equal(isize, (uint32_t)len);
    /* finishing again hands out the same bytes; writing is refused */
    const void *again;
    size_t alen;
    assert_int_equal(rt_gzip_finish(z, &again, &alen), RT_OK);
    assert_ptr_equal(again, data);
    assert_int_equal(alen, glen);
    assert_int_equal(rt_gzip_write(z, "x", 1), RT_ERR_INVALID);

    rt_buf out;
    assert_int_equal(rt_gunzip(data, glen, len, &out), RT_OK);
    assert_int_equal(out.len, len);
    assert_memory_equal(out.data, text, len);
    assert_int_equal(out.data[len], '\0');
    rt_buf_free(&out);
    /* one byte less than the content: refused */
    assert_int_equal(rt_gunzip(data, glen, len - 1, &out), RT_ERR_NOMEM);
    rt_buf_free(&out);
    rt_gzip_free(z);
    free(text);
}

static void many_members(void **state)
{
    (void)state;
    const char *parts[] = {"time,cpu\n1,2\n", "", "3,4\n5,6\n", "7,8\n"};
    rt_buf all;
    rt_buf_init(&all, 1 << 20);
    char expect[64] = "";
    for (size_t i = 0; i < RT_ARRAY_LEN(parts); i++) {
        rt_gzip *z;
        assert_int_equal(rt_gzip_new(4096, &z), RT_OK);
        assert_int_equal(rt_gzip_write(z, parts[i], strlen(parts[i])), RT_OK);
        const void *d;
        size_t n;
        assert_int_equal(rt_gzip_finish(z, &d, &n), RT_OK);
        assert_int_equal(rt_buf_append(&all, d, n), 0);
        rt_gzip_free(z);
        strncat(expect, parts[i], sizeof expect - strlen(expect) - 1);
    }
    rt_buf out;
    assert_int_equal(rt_gunzip(all.data, all.len, 1024, &out), RT_OK);
    assert_string_equal(out.data, expect);
    rt_buf_free(&out);
    /* a member cut short at the end: refused */
    assert_int_equal(rt_gunzip(all.data, all.len - 3, 1024, &out), RT_ERR_PARSE);
    rt_buf_free(&out);
    /* garbage after a member, and garbage alone */
    assert_int_equal(rt_buf_append(&all, "junk", 4), 0);
    assert_int_equal(rt_gunzip(all.data, all.len, 1024, &out), RT_ERR_PARSE);
    rt_buf_free(&out);
    assert_int_equal(rt_gunzip("not gzip at all", 15, 1024, &out), RT_ERR_PARSE);
    rt_buf_free(&out);
    assert_int_equal(rt_gunzip("", 0, 1024, &out), RT_ERR_PARSE);
    rt_buf_free(&out);
    rt_buf_free(&all);
}

static void empty_member(void **state)
{
    (void)state;
    rt_gzip *z;
    assert_int_equal(rt_gzip_new(128, &z), RT_OK);
    const void *d;
    size_t n;
    assert_int_equal(rt_gzip_finish(z, &d, &n), RT_OK);
    assert_true(n >= 18 && n <= 128);
    assert_int_equal(rt_gzip_in_bytes(z), 0);
    rt_buf out;
    assert_int_equal(rt_gunzip(d, n, 0, &out), RT_OK); /* nothing inside: max_out 0 is enough */
    assert_int_equal(out.len, 0);
    rt_buf_free(&out);
    rt_gzip_free(z);
    /* a bound that cannot hold even an empty member */
    z = (rt_gzip *)1;
    assert_int_equal(rt_gzip_new(10, &z), RT_ERR_NOMEM);
    assert_null(z);
    rt_gzip_free(NULL);
}

/* Writes chunks of chunk bytes from src until the member refuses one; checks the bound and
 * that exactly what was taken comes back. */
static void fill_to_bound(const unsigned char *src, size_t srclen, size_t chunk, size_t max)
{
    rt_gzip *z;
    assert_int_equal(rt_gzip_new(max, &z), RT_OK);
    size_t taken = 0;
    rt_error rc = RT_OK;
    while (taken + chunk <= srclen && (rc = rt_gzip_write(z, src + taken, chunk)) == RT_OK)
        taken += chunk;
    assert_int_equal(rc, RT_ERR_NOMEM); /* the source is larger than the bound can hold */
    assert_int_equal(rt_gzip_in_bytes(z), taken);
    assert_true(taken > 0);
    /* a refused write leaves the member usable: a smaller one may still fit, and it finishes */
    const void *d;
    size_t n;
    assert_int_equal(rt_gzip_finish(z, &d, &n), RT_OK);
    assert_true(n <= max);
    rt_buf out;
    assert_int_equal(rt_gunzip(d, n, srclen, &out), RT_OK);
    assert_int_equal(out.len, taken);
    assert_memory_equal(out.data, src, taken);
    rt_buf_free(&out);
    rt_gzip_free(z);
}

static void bounded(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    unsigned char *rnd = malloc(n);
    assert_non_null(rnd);
    noise(rnd, n, 12345);
    fill_to_bound(rnd, n, 4096, 64 * 1024);  /* incompressible, page-sized writes */
    fill_to_bound(rnd, n, 1, 2048);          /* byte by byte against a small bound */
    fill_to_bound(rnd, n, 100000, 300000);   /* writes larger than zlib's window */
    size_t tl;
    char *text = csv_text(4u << 20, &tl);
    fill_to_bound((const unsigned char *)text, tl, 37, 32 * 1024); /* compressible, row-sized */
    fill_to_bound((const unsigned char *)text, tl, 50000, 100 * 1024);
    free(text);
    /* a write larger than the whole bound is refused at once, the member stays empty */
    rt_gzip *z;
    assert_int_equal(rt_gzip_new(1000, &z), RT_OK);
    assert_int_equal(rt_gzip_write(z, rnd, 5000), RT_ERR_NOMEM);
    assert_int_equal(rt_gzip_in_bytes(z), 0);
    assert_int_equal(rt_gzip_write(z, NULL, 5), RT_ERR_INVALID);
    const void *d;
    size_t dl;
    assert_int_equal(rt_gzip_finish(z, &d, &dl), RT_OK);
    rt_buf out;
    assert_int_equal(rt_gunzip(d, dl, 10, &out), RT_OK);
    assert_int_equal(out.len, 0);
    rt_buf_free(&out);
    rt_gzip_free(z);
    free(rnd);
}

/* ---- rt_gunzip_stream: a descriptor read as a stream ------------------------------------- */

/* A member (or several back to back) of text, into all. */
static void gz_members(rt_buf *all, const char *const *parts, size_t n)
{
    rt_buf_init(all, SIZE_MAX);
    for (size_t i = 0; i < n; i++) {
        rt_gzip *z;
        assert_int_equal(rt_gzip_new(strlen(parts[i]) + 4096, &z), RT_OK);
        assert_int_equal(rt_gzip_write(z, parts[i], strlen(parts[i])), RT_OK);
        const void *d;
        size_t dl;
        assert_int_equal(rt_gzip_finish(z, &d, &dl), RT_OK);
        assert_int_equal(rt_buf_append(all, d, dl), 0);
        rt_gzip_free(z);
    }
}

/* A temp file holding data[0..len), open for reading at offset skip (the rest handed as head). */
static int temp_fd(const void *data, size_t len, size_t skip)
{
    char path[] = "/tmp/rt-gzip-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_true(write(fd, data, len) == (ssize_t)len);
    assert_true(lseek(fd, (off_t)skip, SEEK_SET) == (off_t)skip);
    return fd;
}

/* Reads the whole stream in pieces of at most piece bytes into out; returns the last code (0
 * at the end, -1 or -2). */
static ssize_t read_stream(rt_gunzip_stream *z, size_t piece, rt_buf *out)
{
    char buf[8192];
    ssize_t k;
    while ((k = rt_gunzip_stream_read(z, buf, piece < sizeof buf ? piece : sizeof buf)) > 0)
        assert_int_equal(rt_buf_append(out, buf, (size_t)k), 0);
    return k;
}

/* Round trips in reads of 1 byte to 8 KiB, one member and several (an empty one among them),
 * with 0 to all of the compressed bytes handed over as already read; the counts. */
static void stream_round_trip(void **state)
{
    (void)state;
    size_t tl;
    char *text = csv_text(100000, &tl);
    const char *parts[] = {text, "", "time,cpu\n1,2\n"};
    static const size_t pieces[] = {1, 3, 100, 8192};
    for (size_t nparts = 1; nparts <= 3; nparts += 2) {
        rt_buf gz;
        gz_members(&gz, parts, nparts);
        size_t want = tl + (nparts == 3 ? strlen(parts[2]) : 0);
        size_t heads[] = {0, 1, 10, gz.len / 2, gz.len};
        for (size_t h = 0; h < RT_ARRAY_LEN(heads); h++)
            for (size_t p = 0; p < RT_ARRAY_LEN(pieces); p++) {
                if (pieces[p] == 1 && h > 0) /* byte by byte takes long: once */
                    continue;
                int fd = temp_fd(gz.data, gz.len, heads[h]);
                rt_gunzip_stream *z;
                assert_int_equal(rt_gunzip_stream_new(fd, gz.data, heads[h], &z), RT_OK);
                rt_buf out;
                rt_buf_init(&out, SIZE_MAX);
                assert_int_equal(read_stream(z, pieces[p], &out), 0);
                assert_int_equal(out.len, want);
                assert_memory_equal(out.data, text, tl);
                assert_int_equal(rt_gunzip_stream_out(z), want);
                assert_int_equal(rt_gunzip_stream_in(z), gz.len);
                char c;
                assert_int_equal(rt_gunzip_stream_read(z, &c, 1), 0); /* the end stays the end */
                rt_buf_free(&out);
                rt_gunzip_stream_free(z);
                close(fd);
            }
        rt_buf_free(&gz);
    }
    free(text);
    rt_gunzip_stream_free(NULL);
}

/* What is no whole gzip stream: cut short (the data before the cut comes out first), garbage
 * after a member, garbage alone, the magic alone, nothing at all; a descriptor that cannot be
 * read (-1, errno kept). Each bad end is said again by every later read. */
static void stream_refusals(void **state)
{
    (void)state;
    size_t tl;
    char *text = csv_text(100000, &tl);
    const char *parts[] = {text};
    rt_buf gz;
    gz_members(&gz, parts, 1);
    struct {
        const void *data;
        size_t len;
        size_t least; /* plain bytes that come out before the bad end, at least */
    } bad[] = {
        {gz.data, gz.len - 4, tl - 64}, /* the trailer cut: every byte, then -2 (no check) */
        {gz.data, gz.len / 2, 1000},                                /* cut in the middle */
        {"\x1f\x8b", 2, 0},                                          /* the magic alone */
        {"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", 18, 0}, /* a header, then garbage */
        {"not gzip at all", 15, 0},
        {"", 0, 0},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        int fd = temp_fd(bad[i].data, bad[i].len, 0);
        rt_gunzip_stream *z;
        assert_int_equal(rt_gunzip_stream_new(fd, NULL, 0, &z), RT_OK);
        rt_buf out;
        rt_buf_init(&out, SIZE_MAX);
        if (read_stream(z, 4096, &out) != -2)
            fail_msg("case %zu: not refused", i);
        assert_true(out.len >= bad[i].least && out.len <= tl);
        assert_memory_equal(out.data, text, out.len);
        char c;
        assert_int_equal(rt_gunzip_stream_read(z, &c, 1), -2);
        rt_buf_free(&out);
        rt_gunzip_stream_free(z);
        close(fd);
    }
    /* garbage after a whole member: the member, then -2 */
    rt_buf junk;
    rt_buf_init(&junk, SIZE_MAX);
    assert_int_equal(rt_buf_append(&junk, gz.data, gz.len), 0);
    assert_int_equal(rt_buf_append(&junk, "junk", 4), 0);
    int fd = temp_fd(junk.data, junk.len, 0);
    rt_gunzip_stream *z;
    assert_int_equal(rt_gunzip_stream_new(fd, NULL, 0, &z), RT_OK);
    rt_buf out;
    rt_buf_init(&out, SIZE_MAX);
    assert_int_equal(read_stream(z, 4096, &out), -2);
    assert_int_equal(out.len, tl);
    rt_buf_free(&out);
    rt_gunzip_stream_free(z);
    close(fd);
    rt_buf_free(&junk);
    /* a descriptor that cannot be read */
    assert_int_equal(rt_gunzip_stream_new(-1, NULL, 0, &z), RT_OK);
    char c;
    errno = 0;
    assert_int_equal(rt_gunzip_stream_read(z, &c, 1), -1);
    assert_int_equal(errno, EBADF);
    errno = 0;
    assert_int_equal(rt_gunzip_stream_read(z, &c, 1), -1);
    assert_int_equal(errno, EBADF);
    rt_gunzip_stream_free(z);
    rt_buf_free(&gz);
    free(text);
}

/* A gzip bomb (64 MiB of zeros in a few hundred KiB; a bigger one only takes longer) is read
 * through in 64 KiB pieces: every byte comes out, and nothing the stream holds grows with it
 * (the process's peak RSS grows by far less than the plain bytes). */
static void stream_bomb(void **state)
{
    (void)state;
    size_t block = 1u << 20, total = (size_t)64 << 20;
    char *zeros = calloc(1, block);
    assert_non_null(zeros);
    rt_gzip *g;
    assert_int_equal(rt_gzip_new_level(4u << 20, 1, &g), RT_OK);
    for (size_t at = 0; at < total; at += block)
        assert_int_equal(rt_gzip_write(g, zeros, block), RT_OK);
    const void *d;
    size_t dl;
    assert_int_equal(rt_gzip_finish(g, &d, &dl), RT_OK);
    assert_true(dl < total / 64);
    int fd = temp_fd(d, dl, 0);
    rt_gzip_free(g);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    rt_gunzip_stream *z;
    assert_int_equal(rt_gunzip_stream_new(fd, NULL, 0, &z), RT_OK);
    uint64_t n = 0;
    ssize_t k;
    while ((k = rt_gunzip_stream_read(z, zeros, 65536)) > 0) {
        assert_true(zeros[0] == 0 && zeros[k - 1] == 0);
        n += (uint64_t)k;
    }
    assert_int_equal(k, 0);
    assert_int_equal(n, total);
    getrusage(RUSAGE_SELF, &after);
    assert_true(after.ru_maxrss - before.ru_maxrss < 16 * 1024); /* KiB: far less than 1 GiB */
    rt_gunzip_stream_free(z);
    close(fd);
    free(zeros);
}

/* rt_gzip_fd: 9 MiB (noise and zeros) gzipped into three members that read back as the input;
 * an empty input, one empty member; a bad descriptor refused. */
static void whole_fd(void **state)
{
    (void)state;
    size_t n = 9u << 20;
    unsigned char *src = calloc(1, n);
    assert_non_null(src);
    noise(src, n / 3, 7); /* the rest zeros */
    FILE *in = tmpfile(), *out = tmpfile();
    assert_non_null(in);
    assert_non_null(out);
    assert_int_equal(fwrite(src, 1, n, in), n);
    fflush(in);
    lseek(fileno(in), 0, SEEK_SET);
    assert_int_equal(rt_gzip_fd(fileno(in), fileno(out)), RT_OK);
    off_t len = lseek(fileno(out), 0, SEEK_END);
    assert_true(len > 0 && len < (off_t)n / 2);
    unsigned char *gz = malloc((size_t)len);
    assert_non_null(gz);
    assert_int_equal(pread(fileno(out), gz, (size_t)len, 0), len);
    rt_buf back = {0};
    assert_int_equal(rt_gunzip(gz, (size_t)len, n + 1, &back), RT_OK);
    assert_int_equal(back.len, n);
    assert_memory_equal(back.data, src, n);
    size_t members = 0; /* a member's header: 1f 8b 08 */
    for (off_t i = 0; i + 2 < len; i++)
        members += gz[i] == 0x1f && gz[i + 1] == 0x8b && gz[i + 2] == 8;
    assert_true(members >= 3);
    rt_buf_free(&back);
    free(gz);
    /* empty: one empty member */
    FILE *none = tmpfile(), *none_gz = tmpfile();
    assert_int_equal(rt_gzip_fd(fileno(none), fileno(none_gz)), RT_OK);
    len = lseek(fileno(none_gz), 0, SEEK_END);
    assert_true(len >= 20);
    assert_int_equal(rt_gzip_fd(-1, fileno(out)), RT_ERR_INVALID);
    fclose(none);
    fclose(none_gz);
    fclose(in);
    fclose(out);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loaded_at_first_use), cmocka_unit_test(round_trip),  cmocka_unit_test(many_members),
        cmocka_unit_test(empty_member),        cmocka_unit_test(bounded),     cmocka_unit_test(stream_round_trip),
        cmocka_unit_test(stream_refusals),     cmocka_unit_test(stream_bomb),  cmocka_unit_test(whole_fd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
