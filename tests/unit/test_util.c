/* test_util.c - core/util.c: the number and line scanners, trimming and bounded copies, the
 * growable arrays, counter deltas, the name hash, options structs of other sizes, error
 * strings and the version. */
#include "unit.h"

#include "core/core.h"
#include "resource_tracker.h"

static void parse_u64(void **state)
{
    (void)state;
    uint64_t v = 0;
    const char *s = "  \t42 rest", *p = s;
    assert_true(rt_parse_u64(&p, s + strlen(s), &v));
    assert_int_equal(v, 42);
    assert_string_equal(p, " rest");

    s = "18446744073709551615";
    p = s;
    assert_true(rt_parse_u64(&p, s + strlen(s), &v));
    assert_true(v == UINT64_MAX);
    assert_true(p == s + strlen(s));

    /* overflow: false, *p and *out unchanged */
    v = 9;
    s = "18446744073709551616";
    p = s;
    assert_false(rt_parse_u64(&p, s + strlen(s), &v));
    assert_true(p == s);
    assert_int_equal(v, 9);
    s = "99999999999999999999999";
    p = s;
    assert_false(rt_parse_u64(&p, s + strlen(s), &v));
    assert_true(p == s);

    /* blanks only, nothing, no digit */
    const char *bad[] = {"", "   ", " \t ", "x1", "-1", "+1", " \n1"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        p = bad[i];
        assert_false(rt_parse_u64(&p, bad[i] + strlen(bad[i]), &v));
        assert_true(p == bad[i]);
    }
    /* the end bound is honoured: no reading past it */
    s = "12345";
    p = s;
    assert_true(rt_parse_u64(&p, s + 3, &v));
    assert_int_equal(v, 123);
    assert_true(p == s + 3);
    p = s;
    assert_false(rt_parse_u64(&p, s, &v));
    /* leading zeros, digits stopping at a colon */
    s = "007:8";
    p = s;
    assert_true(rt_parse_u64(&p, s + 5, &v));
    assert_int_equal(v, 7);
    assert_int_equal(*p, ':');
}

static void lines_and_tokens(void **state)
{
    (void)state;
    const char *buf = "a\nbb\n\nccc", *p = buf, *end = buf + strlen(buf), *l, *le;
    const char *want[] = {"a", "bb", "", "ccc"};
    for (size_t i = 0; i < 4; i++) {
        assert_true(rt_next_line(&p, end, &l, &le));
        assert_int_equal((size_t)(le - l), strlen(want[i]));
        assert_memory_equal(l, want[i], strlen(want[i]));
    }
    assert_false(rt_next_line(&p, end, &l, &le));
    /* a final newline does not make an empty last line */
    buf = "x\n";
    p = buf;
    assert_true(rt_next_line(&p, buf + 2, &l, &le));
    assert_int_equal(le - l, 1);
    assert_false(rt_next_line(&p, buf + 2, &l, &le));
    p = buf;
    assert_false(rt_next_line(&p, buf, &l, &le)); /* empty */

    buf = "  foo\tbar  \t";
    p = buf;
    end = buf + strlen(buf);
    const char *tok;
    size_t n;
    assert_true(rt_next_token(&p, end, &tok, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(tok, "foo", 3);
    assert_true(rt_next_token(&p, end, &tok, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(tok, "bar", 3);
    assert_false(rt_next_token(&p, end, &tok, &n));
    p = buf;
    assert_false(rt_next_token(&p, buf + 2, &tok, &n)); /* only blanks before the end */
    /* a token cut by the end bound */
    p = buf;
    assert_true(rt_next_token(&p, buf + 4, &tok, &n));
    assert_int_equal(n, 2);
}

static void copy_trim(void **state)
{
    (void)state;
    char d[8];
    assert_int_equal(rt_copy_trim(d, sizeof d, "  hi \n", 6), 2);
    assert_string_equal(d, "hi");
    assert_int_equal(rt_copy_trim(d, sizeof d, " \t\n ", 4), 0);
    assert_string_equal(d, "");
    assert_int_equal(rt_copy_trim(d, 3, "hello", 5), 2); /* truncated to cap-1 */
    assert_string_equal(d, "he");
    assert_int_equal(rt_copy_trim(d, sizeof d, "a b c", 3), 3); /* only n bytes of src */
    assert_string_equal(d, "a b");
    d[0] = 'z';
    assert_int_equal(rt_copy_trim(d, 0, "abc", 3), 0);
    assert_int_equal(d[0], 'z'); /* cap 0: nothing written */
    assert_int_equal(rt_copy_trim(d, sizeof d, "", 0), 0);
    assert_string_equal(d, "");
}

static void grow_zeroes(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0;
    assert_int_equal(rt_grow(&a, &cap, 3, sizeof *a), 0);
    assert_int_equal(cap, 8);
    for (size_t i = 0; i < cap; i++)
        assert_int_equal(a[i], 0);
    for (size_t i = 0; i < cap; i++)
        a[i] = (uint32_t)i + 100;
    assert_int_equal(rt_grow(&a, &cap, 8, sizeof *a), 0); /* already enough */
    assert_int_equal(cap, 8);
    assert_int_equal(rt_grow(&a, &cap, 20, sizeof *a), 0);
    assert_int_equal(cap, 32);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(a[i], i + 100); /* kept */
    for (size_t i = 8; i < cap; i++)
        assert_int_equal(a[i], 0); /* new: zeroed */
    /* an impossible size fails cleanly: the array stays as it was */
    assert_int_equal(rt_grow(&a, &cap, (size_t)1 << 62, sizeof *a), -1);
    assert_int_equal(rt_grow(&a, &cap, SIZE_MAX, 1), -1);
    assert_int_equal(cap, 32);
    assert_int_equal(a[7], 107);
    free(a);
}

static void bounded_formatting(void **state)
{
    (void)state;
    char b[8];
    assert_true(rt_pathf(b, sizeof b, "%s/%s", "ab", "cd"));
    assert_string_equal(b, "ab/cd");
    assert_true(rt_pathf(b, sizeof b, "%s", "1234567")); /* 7 + NUL: fits */
    assert_false(rt_pathf(b, sizeof b, "%s", "12345678"));
    assert_string_equal(b, "1234567"); /* snprintf's truncation, reported as false */
    assert_false(rt_pathf(b, 0, "%s", "x"));

    assert_true(rt_copy_str(b, sizeof b, "1234567"));
    assert_string_equal(b, "1234567");
    assert_false(rt_copy_str(b, sizeof b, "12345678"));
    assert_string_equal(b, ""); /* not a truncated copy: empty */
    assert_true(rt_copy_str(b, sizeof b, ""));
    b[0] = 'q';
    assert_false(rt_copy_str(b, 0, "a"));
    assert_int_equal(b[0], 'q');

    char *s = rt_strdup("abc");
    assert_string_equal(s, "abc");
    free(s);
    assert_null(rt_strdup(NULL));
    char *slot = NULL;
    assert_int_equal(rt_set_str(&slot, "one"), 0);
    assert_string_equal(slot, "one");
    assert_int_equal(rt_set_str(&slot, "two"), 0);
    assert_string_equal(slot, "two");
    assert_int_equal(rt_set_str(&slot, NULL), 0);
    assert_null(slot);
}

static void delta_and_hash(void **state)
{
    (void)state;
    assert_int_equal(rt_delta_u64(10, 3), 7);
    assert_int_equal(rt_delta_u64(3, 10), 0); /* backwards: 0, never a huge wrap */
    assert_int_equal(rt_delta_u64(5, 5), 0);
    assert_true(rt_delta_u64(UINT64_MAX, 0) == UINT64_MAX);
    assert_int_equal(rt_delta_u64(0, UINT64_MAX), 0);

    uint64_t h0 = 1469598103934665603ull;
    assert_true(rt_hash_str(h0, "sda") == rt_hash_str(h0, "sda"));
    assert_true(rt_hash_str(h0, "sda") != rt_hash_str(h0, "sdb"));
    assert_true(rt_hash_str(h0, "") != h0); /* even an empty name moves the hash */
    /* order and boundaries count: [a, b] != [b, a] != [ab] */
    uint64_t ab = rt_hash_str(rt_hash_str(h0, "a"), "b");
    uint64_t ba = rt_hash_str(rt_hash_str(h0, "b"), "a");
    assert_true(ab != ba);
    assert_true(ab != rt_hash_str(h0, "ab"));
    assert_true(rt_hash_str(rt_hash_str(h0, "a"), "") != rt_hash_str(h0, "a"));
}

/* An options struct as a newer library has it, and as an older caller compiled it. */
typedef struct opts_v2 {
    size_t struct_size;
    double a;
    const char *name;
    double b; /* added in v2 */
    int c;    /* added in v2 */
} opts_v2;
typedef struct opts_v1 {
    size_t struct_size;
    double a;
    const char *name;
} opts_v1;

static void struct_copy(void **state)
{
    (void)state;
    const opts_v2 defaults = {sizeof(opts_v2), 1.0, "def", 2.0, 3};
    /* an older, shorter caller struct: its fields, then the defaults */
    opts_v1 old = {sizeof old, 10.0, "old"};
    opts_v2 d = defaults;
    assert_int_equal(rt_struct_copy(&d, sizeof d, &old), 0);
    assert_int_equal(d.struct_size, sizeof d); /* describes itself */
    assert_true(d.a == 10.0);
    assert_string_equal(d.name, "old");
    assert_true(d.b == 2.0);
    assert_int_equal(d.c, 3);

    /* the same size: all taken */
    opts_v2 same = {sizeof same, 5.0, "same", 6.0, 7};
    d = defaults;
    assert_int_equal(rt_struct_copy(&d, sizeof d, &same), 0);
    assert_true(d.b == 6.0);
    assert_int_equal(d.c, 7);

    /* a newer, longer caller struct: only what we know is read */
    struct {
        opts_v2 v2;
        double future;
    } newer = {{sizeof newer, 8.0, "new", 9.0, 10}, 99.0};
    d = defaults;
    assert_int_equal(rt_struct_copy(&d, sizeof d, &newer), 0);
    assert_int_equal(d.struct_size, sizeof d);
    assert_true(d.a == 8.0);
    assert_int_equal(d.c, 10);

    /* only struct_size itself: all defaults */
    size_t bare = sizeof(size_t);
    d = defaults;
    assert_int_equal(rt_struct_copy(&d, sizeof d, &bare), 0);
    assert_true(d.a == 1.0);
    assert_string_equal(d.name, "def");

    /* struct_size smaller than a size_t: rejected, dst untouched */
    opts_v1 tiny = {sizeof(size_t) - 1, 10.0, "x"};
    d = defaults;
    assert_int_equal(rt_struct_copy(&d, sizeof d, &tiny), -1);
    assert_true(d.a == 1.0);
    assert_string_equal(d.name, "def");
    tiny.struct_size = 0;
    assert_int_equal(rt_struct_copy(&d, sizeof d, &tiny), -1);

    /* NULL: the defaults stay */
    d = defaults;
    assert_int_equal(rt_struct_copy(&d, sizeof d, NULL), 0);
    /* field by field: the trailing padding is no value (valgrind: uninitialised) */
    assert_true(d.struct_size == defaults.struct_size && d.a == defaults.a && d.name == defaults.name &&
                d.b == defaults.b && d.c == defaults.c);

    /* a copy that must hold its first members: 1 copied, 0 for NULL, -1 below them (untouched) */
    d = defaults;
    assert_int_equal(rt_struct_copy_least(&d, sizeof d, &old, sizeof old), 1);
    assert_string_equal(d.name, "old");
    d = defaults;
    assert_int_equal(rt_struct_copy_least(&d, sizeof d, NULL, sizeof old), 0);
    assert_int_equal(rt_struct_copy_least(&d, sizeof d, &old, sizeof old + 1), -1);
    assert_string_equal(d.name, "def");

    /* the public options go the same way: a too-small struct_size is RT_ERR_INVALID */
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.struct_size = 1;
    rt_sampler *s = (rt_sampler *)&so;
    assert_int_equal(rt_sampler_new(&so, &s), RT_ERR_INVALID);
    assert_null(s);
}

static void strerror_every_code(void **state)
{
    (void)state;
    const rt_error codes[] = {RT_OK,       RT_ERR_NOMEM,     RT_ERR_INVALID,     RT_ERR_IO,     RT_ERR_PARSE,
                              RT_ERR_NOT_FOUND, RT_ERR_UNSUPPORTED, RT_ERR_SYSTEM, RT_ERR_DISABLED};
    /* the numbers never change */
    for (size_t i = 0; i < RT_ARRAY_LEN(codes); i++)
        assert_int_equal((int)codes[i], (int)i);
    const char *unknown = rt_strerror((rt_error)99);
    assert_non_null(unknown);
    assert_string_equal(unknown, "unknown error");
    assert_string_equal(rt_strerror((rt_error)-1), "unknown error");
    for (size_t i = 0; i < RT_ARRAY_LEN(codes); i++) {
        const char *m = rt_strerror(codes[i]);
        assert_non_null(m);
        assert_true(strlen(m) > 0);
        assert_string_not_equal(m, unknown);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, rt_strerror(codes[j])); /* each its own text */
    }
    assert_string_equal(rt_strerror(RT_ERR_DISABLED), "turned off by the options");
    assert_string_equal(rt_strerror(RT_OK), "no error");
}

static void version(void **state)
{
    (void)state;
    assert_int_equal(rt_version_num(), RT_VERSION_NUM);
    assert_int_equal(RT_VERSION_NUM, (RT_VERSION_MAJOR << 16) | (RT_VERSION_MINOR << 8) | RT_VERSION_PATCH);
    assert_string_equal(rt_version(), RT_VERSION);
    char b[32];
    snprintf(b, sizeof b, "%d.%d.%d", RT_VERSION_MAJOR, RT_VERSION_MINOR, RT_VERSION_PATCH);
    assert_string_equal(rt_version(), b);
}

static int logged;
static char last_msg[2048];
static void log_cb(void *user, rt_log_level level, const char *msg)
{
    (void)level;
    *(int *)user += 1;
    snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static void logging(void **state)
{
    (void)state;
    rt_logger none = {0};
    rt_log(&none, RT_LOG_WARN, "dropped %d", 1);
    rt_log(NULL, RT_LOG_WARN, "dropped %d", 2);
    rt_logger lg = {log_cb, &logged};
    rt_log(&lg, RT_LOG_INFO, "x=%d", 5);
    assert_int_equal(logged, 1);
    assert_string_equal(last_msg, "x=5");
    static char longs[3000];
    memset(longs, 'a', sizeof longs - 1);
    rt_log(&lg, RT_LOG_INFO, "%s", longs);
    assert_int_equal(strlen(last_msg), 1023); /* cut, and marked */
    assert_string_equal(last_msg + 1020, "...");
    double m1 = rt_mono_secs(), m2 = rt_mono_secs();
    assert_true(m2 >= m1);
    assert_true(rt_real_secs() > 1.5e9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_u64),   cmocka_unit_test(lines_and_tokens),    cmocka_unit_test(copy_trim),
        cmocka_unit_test(grow_zeroes), cmocka_unit_test(bounded_formatting),  cmocka_unit_test(delta_and_hash),
        cmocka_unit_test(struct_copy), cmocka_unit_test(strerror_every_code), cmocka_unit_test(version),
        cmocka_unit_test(logging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
