/* test_gzip.c - gzip members through the dlopen'd zlib (core/gzip.h): zlib not mapped before the
 * first use, round trips through rt_gunzip, concatenated members, the max_bytes bound (nothing
 * taken from a refused write, the member still finishes within it), empty members, and
 * rt_gunzip's refusals (truncated, garbage, past max_out). */
#include "unit.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loaded_at_first_use), cmocka_unit_test(round_trip), cmocka_unit_test(many_members),
        cmocka_unit_test(empty_member),        cmocka_unit_test(bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
