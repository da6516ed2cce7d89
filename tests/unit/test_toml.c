/* test_toml.c - the config reader's own cases: values, table rules, and that errors carry
 * LINE:COL and name the problem, on a line of a few bytes or of 400 KiB (the toml-test suite
 * runs in the end-to-end tests). */
#include "unit.h"

#include <math.h>
#include "toml.h"

static toml_value *ok(const char *doc)
{
    char err[256];
    toml_value *v = toml_parse(doc, strlen(doc), err, sizeof err);
    if (!v)
        fail_msg("rejected: %s\n%s", err, doc);
    return v;
}

static void bad(const char *doc, const char *want)
{
    char err[256];
    toml_value *v = toml_parse(doc, strlen(doc), err, sizeof err);
    if (v) {
        toml_free(v);
        fail_msg("accepted: %s", doc);
    }
    if (!strstr(err, want))
        fail_msg("error '%s' does not contain '%s'", err, want);
}

static void values_good(void **state)
{
    (void)state;
    toml_value *r = ok("# comment\n"
                       "a = \"x\\u00e9\\n\"\n"
                       "b = 'c:\\path'\n"
                       "[t]\n"
                       "i = 1_000\n"
                       "h = 0xdead_beef\n"
                       "f = 6.02e+23\n"
                       "n = -inf\n"
                       "yes = true\n"
                       "arr = [1, 'two', [3.5], {k = 4},]\n"
                       "ml = \"\"\"\n  one \\\n   two\"\"\"\n"
                       "lit = '''\nraw\\n'''\n"
                       "min = -9223372036854775808\n");
    assert_string_equal(toml_find(r, "a")->val->u.str.s, "x\xc3\xa9\n");
    assert_string_equal(toml_find(r, "b")->val->u.str.s, "c:\\path");
    const toml_value *t = toml_find(r, "t")->val;
    assert_int_equal(toml_find(t, "i")->val->u.i, 1000);
    assert_int_equal(toml_find(t, "h")->val->u.i, 0xdeadbeef);
    assert_true(toml_find(t, "f")->val->u.f == 6.02e23);
    assert_true(isinf(toml_find(t, "n")->val->u.f) && toml_find(t, "n")->val->u.f < 0);
    assert_true(toml_find(t, "yes")->val->u.b);
    const toml_value *arr = toml_find(t, "arr")->val;
    assert_int_equal(arr->u.arr.n, 4);
    assert_int_equal(arr->u.arr.items[3]->type, TOML_TABLE);
    assert_string_equal(toml_find(t, "ml")->val->u.str.s, "  one two");
    assert_string_equal(toml_find(t, "lit")->val->u.str.s, "raw\\n");
    assert_true(toml_find(t, "min")->val->u.i == INT64_MIN);
    assert_int_equal(toml_find(t, "i")->line, 5);
    assert_int_equal(toml_find(t, "i")->col, 1);
    toml_free(r);
}

static void errors_have_positions(void **state)
{
    (void)state;
    bad("a = 1\nb = \n", "2:5: a value is missing");
    bad("a = 1\na = 2\n", "2:6: duplicate key 'a'");
    bad("x = 07\n", "1:5: leading zeros");
    bad("x = 1__0\n", "invalid number");
    bad("x = +0x10\n", "cannot have a sign");
    bad("x = 9223372036854775808\n", "out of range");
    bad("x = \"abc\n", "1:5: unterminated string");
    bad("x = \"\\q\"\n", "invalid escape sequence \\q");
    bad("x = \"\\uD800\"\n", "not a Unicode scalar value");
    bad("x = yes\n", "strings need quotes");
    bad("x = 1 y = 2\n", "1:7: expected the end of the line");
    bad("[a\n", "expected ']'");
    bad("x = \"a\x01\"\n", "control character U+0001");
    bad("# ok\x7f\n", "not allowed in a comment");
    bad("x = 1\ry = 2\n", "carriage return");
    bad("x = -0x10\n", "cannot have a sign");
}

static void unsupported_named(void **state)
{
    (void)state;
    bad("when = 1979-05-27T07:32:00Z\n", "dates and times are not supported");
    bad("t = 07:32:00\n", "dates and times are not supported");
    bad("[[servers]]\nname = 'a'\n", "arrays of tables ([[...]]) are not supported");
}

static void table_rules(void **state)
{
    (void)state;
    toml_free(ok("[a.b.c]\nx = 1\n[a]\ny = 2\n"));          /* implicit, then defined */
    toml_free(ok("[fruit]\napple.color = 'red'\n[fruit.apple.texture]\nsmooth = true\n"));
    toml_free(ok("a.b = 1\na.c = 2\n"));                     /* dotted keys in one section */
    bad("[a]\n[a]\n", "table [a] is defined more than once");
    bad("[fruit]\napple.color = 'red'\n[fruit.apple]\n", "defined more than once");
    bad("a = {b = 1}\n[a]\n", "defined more than once");
    bad("a = {b = 1}\na.c = 2\n", "inline table and cannot be extended");
    bad("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", "cannot be extended with dotted keys");
    bad("a = 1\n[a]\n", "already holds an integer");
    bad("a = {x = 1,}\n", "trailing comma");
    bad("a = {x = 1\n}\n", "on one line");
    char deep[400];
    memset(deep, '[', sizeof deep);
    memcpy(deep, "a = ", 4);
    deep[sizeof deep - 1] = '\0';
    bad(deep, "nested too deeply");
}

static void crlf_bom_and_empty(void **state)
{
    (void)state;
    toml_value *r = ok("\xef\xbb\xbf"
                       "a = 1\r\nb = \"\"\"x\r\ny\"\"\"\r\n");
    assert_string_equal(toml_find(r, "b")->val->u.str.s, "x\ny");
    toml_free(r);
    r = ok("");
    assert_int_equal(r->u.tab.n, 0);
    toml_free(r);
    char err[64];
    assert_null(toml_parse("a = \"\xc3\x28\"", 9, err, sizeof err));
    assert_non_null(strstr(err, "invalid UTF-8"));
}

/* A config of one long line (up to the 1 MiB a config may be: it took minutes, one count from
 * the line's start per value): every value's column right, counted in characters ("é" is one),
 * inline tables' (asked after their insides) as well, and an error at its end. */
static void long_line_columns(void **state)
{
    (void)state;
    size_t n = 40000, cap = 32 * n + 64, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    int *cols = malloc(n * sizeof *cols), col = 6;
    assert_non_null(cols);
    len += (size_t)snprintf(doc, cap, "x = [");
    for (size_t i = 0; i < n; i++) {
        cols[i] = col;
        const char *item = i % 2 ? "{a = \"é\"}, " : "\"é\", "; /* 11 and 5 characters */
        len += (size_t)snprintf(doc + len, cap - len, "%s", item);
        col += i % 2 ? 11 : 5;
    }
    len += (size_t)snprintf(doc + len, cap - len, "]\n");
    toml_value *r = ok(doc);
    const toml_value *x = toml_find(r, "x")->val;
    assert_int_equal(x->u.arr.n, n);
    for (size_t i = 0; i < n; i++) {
        const toml_value *v = x->u.arr.items[i];
        if (v->line != 1 || v->col != cols[i])
            fail_msg("item %zu at %d:%d, want 1:%d", i, v->line, v->col, cols[i]);
        if (i % 2 && (v->u.tab.kv[0].col != cols[i] + 1 || v->u.tab.kv[0].val->col != cols[i] + 5))
            fail_msg("item %zu: key at %d, value at %d", i, v->u.tab.kv[0].col, v->u.tab.kv[0].val->col);
    }
    toml_free(r);
    len -= 2; /* "] x\n": the error after the array, named where it is */
    snprintf(doc + len, cap - len, "] x\n");
    char want[64];
    snprintf(want, sizeof want, "1:%d: expected the end of the line", col + 2);
    bad(doc, want);
    free(cols);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_good),
        cmocka_unit_test(errors_have_positions), cmocka_unit_test(unsupported_named),
        cmocka_unit_test(table_rules),      cmocka_unit_test(crlf_bom_and_empty),
        cmocka_unit_test(long_line_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
