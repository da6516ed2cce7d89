/* test_since.c - `history --since WHEN` (since.c): ISO 8601 dates and times with and without a
 * zone, ages back from now, and what is neither (refused, never half read). */
#include "unit.h"
#include <math.h>

#include "cli.h"

static const double NOW = 1795000000.0; /* 2026-11-18T09:46:40Z */

static double since(const char *s)
{
    double t = NAN;
    return cli_since_parse(s, NOW, &t) == 0 ? t : NAN;
}

static void ages(void **state)
{
    (void)state;
    assert_true(since("90s") == NOW - 90);
    assert_true(since("30m") == NOW - 1800);
    assert_true(since("12h") == NOW - 43200);
    assert_true(since("7d") == NOW - 7 * 86400);
    assert_true(since("2w") == NOW - 14 * 86400);
    assert_true(since("1.5h") == NOW - 5400);
}

static void iso_times(void **state)
{
    (void)state;
    assert_true(since("2026-11-29") == 1795910400.0);
    assert_true(since("2026-11-29T07:30") == 1795910400.0 + 27000);
    assert_true(since("2026-11-29T07:30:15") == 1795910400.0 + 27015);
    assert_true(since("2026-11-29 07:30:15Z") == 1795910400.0 + 27015);
    assert_true(since("2026-11-29T07:30:15.25Z") == 1795910400.0 + 27015.25);
    assert_true(since("2026-11-29T07:30:15+01:00") == 1795910400.0 + 27015 - 3600);
    assert_true(since("2026-11-29T07:30:15-0230") == 1795910400.0 + 27015 + 9000);
    assert_true(since("2026-11-29T07:30+05") == 1795910400.0 + 27000 - 18000);
    assert_true(since("2024-02-29") == 1709164800.0); /* a leap day */
    assert_true(since("1970-01-01T00:00:00Z") == 0);
}

static void refused(void **state)
{
    (void)state;
    const char *bad[] = {"", "yesterday", "7", "7x", "7 d", "-7d", "0d", "d", "7dd", "1e400d", "2026-13-01",
                         "2026-02-30", "2025-02-29", "2026-11-31", "2026-11-29T24:00", "2026-11-29T07:60",
                         "2026-11-29T07", "2026-11-29T07:30:15.", "2026-11-29T07:30:15+25:00", "2026-11-29x",
                         "26-11-29", "2026-1-29", "2026-11-29T07:30 ", "2026/11/29", "nand", "infd"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double t = 42;
        if (cli_since_parse(bad[i], NOW, &t) == 0)
            fail_msg("'%s' was taken as %f", bad[i], t);
    }
    double t;
    assert_int_equal(cli_since_parse(NULL, NOW, &t), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ages),
        cmocka_unit_test(iso_times),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
