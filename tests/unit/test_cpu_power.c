/* test_cpu_power.c - the estimate's CPU power model (source/cpu_power.h): the TDP table's
 * lookup by model name (whole tokens, case-insensitive, the longest pattern), the three rules
 * on fake cpuinfo files, and the model's watts by hand. */
#include "unit.h"

#include <math.h>

/* a within eps of b (this cmocka has no assert_double_equal) */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#include "source/cpu_power.h"
#include "source/cpu_tdp.h"

/* A proc root holding cpuinfo text (NULL: no cpuinfo), opened into r; dir is rewritten. */
static void proc_with(char *dir, const char *cpuinfo, rt_roots *r)
{
    unit_tmpdir(dir);
    if (cpuinfo)
        unit_put(dir, "cpuinfo", cpuinfo);
    assert_int_equal(rt_roots_open(r, dir, "/nonexistent-sys"), RT_OK);
}

static void cleanup(char *dir, rt_roots *r)
{
    char p[512];
    rt_roots_close(r);
    snprintf(p, sizeof p, "%s/cpuinfo", dir);
    unlink(p);
    rmdir(dir);
}

/* two logical CPUs of one package, as an x86 VM shows them */
static const char *cpuinfo2(const char *model)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: %s\nphysical id\t: 0\nsiblings\t: 2\n"
             "cpu cores\t: 1\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: %s\nphysical id\t: 0\n"
             "siblings\t: 2\ncpu cores\t: 1\n\n",
             model, model);
    return buf;
}

static void table_lookup(void **state)
{
    (void)state;
    const rt_cpu_tdp_row *row = rt_cpu_tdp_find("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz");
    assert_non_null(row);
    assert_string_equal(row->pattern, "Platinum 8375C");
    assert_true(row->tdp_watts == 265 && row->threads == 64);
    /* case-insensitive, runs of spaces as one */
    row = rt_cpu_tdp_find("amd epyc   7r13 processor");
    assert_non_null(row);
    assert_string_equal(row->pattern, "EPYC 7R13");
    /* a token inside a longer token does not match: 8375CL is not 8375C, 16248R not 6248R */
    assert_null(rt_cpu_tdp_find("Intel(R) Xeon(R) Platinum 8375CL CPU"));
    assert_null(rt_cpu_tdp_find("Intel(R) Xeon(R) Gold 16248R CPU"));
    assert_null(rt_cpu_tdp_find("AMD EPYC 7R134"));
    /* the longest matching pattern wins: 6248R, not 6248; E5-2690 v4's own row */
    row = rt_cpu_tdp_find("Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz");
    assert_non_null(row);
    assert_string_equal(row->pattern, "Gold 6248R");
    row = rt_cpu_tdp_find("Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz");
    assert_non_null(row);
    assert_true(row->tdp_watts == 145 && row->threads == 36);
    assert_null(rt_cpu_tdp_find("AMD EPYC"));
    assert_null(rt_cpu_tdp_find(""));
    assert_null(rt_cpu_tdp_find(NULL));
    assert_true(strstr(rt_cpu_tdp_source, "ARK") != NULL);
}

static void rule_table(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cpu-power-XXXXXX";
    rt_roots r;
    proc_with(dir, cpuinfo2("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"), &r);
    rt_cpu_power m;
    assert_int_equal(rt_cpu_power_model(&r, 0, &m), 0);
    assert_string_equal(m.rule, "table");
    assert_string_equal(m.model, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz");
    /* 265 W over the package's 64 threads: 4.140625 W busy, 30% of it idle */
    assert_true(m.tdp_watts == 265);
    assert_int_equal(m.threads_per_package, 64);
    assert_near(m.busy_watts, 4.140625, 1e-12);
    assert_near(m.idle_watts, 1.2421875, 1e-12);
    assert_true(m.error_low_pct == -40 && m.error_high_pct == 50);
    assert_non_null(strstr(m.words, "TDP 265 W from the table, 64 threads"));
    /* 2 cores, 0.5 busy: 2 x 1.2421875 + 0.5 x (4.140625 - 1.2421875) = 3.93359375 */
    assert_near(rt_cpu_power_watts(&m, 0.5, 2), 3.93359375, 1e-12);
    /* busy held to 0..cores */
    assert_near(rt_cpu_power_watts(&m, 5, 2), 2 * 4.140625, 1e-12);
    assert_near(rt_cpu_power_watts(&m, -1, 2), 2 * 1.2421875, 1e-12);
    assert_true(isnan(rt_cpu_power_watts(&m, NAN, 2)));
    assert_true(isnan(rt_cpu_power_watts(&m, 1, NAN)));
    cleanup(dir, &r);
}

static void rule_given(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cpu-power-XXXXXX";
    rt_roots r;
    /* a model not in the table: the TDP is shared by cpuinfo's siblings (2) */
    proc_with(dir, cpuinfo2("AMD EPYC"), &r);
    rt_cpu_power m;
    assert_int_equal(rt_cpu_power_model(&r, 10, &m), 0);
    assert_string_equal(m.rule, "given");
    assert_true(m.tdp_watts == 10);
    assert_int_equal(m.threads_per_package, 2);
    assert_near(m.busy_watts, 5, 1e-12);
    assert_near(m.idle_watts, 1.5, 1e-12);
    /* 2 cores, 1 busy: 2 x 1.5 + 1 x 3.5 = 6.5 */
    assert_near(rt_cpu_power_watts(&m, 1, 2), 6.5, 1e-12);
    assert_non_null(strstr(m.words, "TDP 10 W given, 2 threads"));
    cleanup(dir, &r);
    /* a model in the table: the user's TDP wins, over the table's threads */
    char dir2[] = "/tmp/rt-cpu-power-XXXXXX";
    proc_with(dir2, cpuinfo2("AMD EPYC 7763 64-Core Processor"), &r);
    assert_int_equal(rt_cpu_power_model(&r, 256, &m), 0);
    assert_string_equal(m.rule, "given");
    assert_int_equal(m.threads_per_package, 128);
    assert_near(m.busy_watts, 2, 1e-12);
    cleanup(dir2, &r);
}

static void rule_per_core(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cpu-power-XXXXXX";
    rt_roots r;
    proc_with(dir, cpuinfo2("AMD EPYC"), &r);
    rt_cpu_power m;
    assert_int_equal(rt_cpu_power_model(&r, 0, &m), 0);
    assert_string_equal(m.rule, "per-core");
    assert_string_equal(m.model, "AMD EPYC");
    assert_true(isnan(m.tdp_watts));
    assert_int_equal(m.threads_per_package, 0);
    assert_near(m.busy_watts, 3.5, 1e-12);
    assert_near(m.idle_watts, 1.05, 1e-12);
    assert_true(m.error_low_pct == -55 && m.error_high_pct == 150);
    assert_string_equal(m.words, "AMD EPYC: not in the TDP table; 3.5 W per busy logical core (the TDP table's "
                                 "median per thread), 1.05 W idle; expect -55% to +150%");
    /* this VM's figures: 2 cores idle 2.1 W, both busy 7 W, one busy 4.55 W */
    assert_near(rt_cpu_power_watts(&m, 0, 2), 2.1, 1e-12);
    assert_near(rt_cpu_power_watts(&m, 2, 2), 7, 1e-12);
    assert_near(rt_cpu_power_watts(&m, 1, 2), 4.55, 1e-12);
    /* a model that matches nothing, a NaN or negative TDP: the same rule */
    assert_int_equal(rt_cpu_power_model(&r, NAN, &m), 0);
    assert_string_equal(m.rule, "per-core");
    assert_int_equal(rt_cpu_power_model(&r, -5, &m), 0);
    assert_string_equal(m.rule, "per-core");
    cleanup(dir, &r);
}

static void no_cpuinfo(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-cpu-power-XXXXXX";
    rt_roots r;
    proc_with(dir, NULL, &r);
    rt_cpu_power m;
    assert_int_equal(rt_cpu_power_model(&r, 0, &m), 0);
    assert_string_equal(m.rule, "per-core");
    assert_string_equal(m.model, "");
    assert_near(m.busy_watts, 3.5, 1e-12);
    assert_non_null(strstr(m.words, "unknown CPU: not in the TDP table"));
    /* a TDP given, but nothing says how many threads share it: per-core, said so */
    assert_int_equal(rt_cpu_power_model(&r, 100, &m), 0);
    assert_string_equal(m.rule, "per-core");
    assert_non_null(strstr(m.words, "threads per package unknown"));
    cleanup(dir, &r);
    assert_int_equal(rt_cpu_power_model(NULL, 0, &m), 0);
    assert_string_equal(m.rule, "per-core");
}

/* The per-core figure stays the table's typical TDP per thread: between its quartiles. */
static void per_core_is_typical(void **state)
{
    (void)state;
    double v[512];
    size_t n = 0;
    for (size_t i = 0; i < rt_cpu_tdp_count && n < 512; i++)
        v[n++] = rt_cpu_tdp[i].tdp_watts / rt_cpu_tdp[i].threads;
    assert_true(n >= 40);
    for (size_t i = 1; i < n; i++) /* insertion sort */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    assert_true(v[n / 4] <= 3.5 && 3.5 <= v[3 * n / 4]);
}

/* A part named by a catalog (Keeper's cpu_family, cpu_model): the full name, family + model, or
 * the model number alone; not in the table, or nothing named: -1 and nothing filled. */
static void by_part(void **state)
{
    (void)state;
    rt_cpu_power m;
    assert_int_equal(rt_cpu_power_of_part("Xeon", "8375C", &m), 0); /* the last word of "Platinum 8375C" */
    assert_string_equal(m.rule, "table");
    assert_string_equal(m.model, "Xeon 8375C");
    assert_true(m.tdp_watts == 265 && m.threads_per_package == 64);
    assert_near(m.busy_watts, 4.140625, 1e-12);
    assert_near(m.idle_watts, 1.2421875, 1e-12);
    assert_int_equal(rt_cpu_power_of_part("EPYC", "7543", &m), 0); /* "EPYC 7543" as the table spells it */
    assert_true(m.tdp_watts == 225 && m.threads_per_package == 64);
    assert_int_equal(rt_cpu_power_of_part(NULL, "Xeon Platinum 8375C", &m), 0); /* a full name */
    assert_true(m.tdp_watts == 265);
    assert_int_equal(rt_cpu_power_of_part("Xeon", "8273CL", &m), -1); /* not in the table */
    assert_true(m.rule == NULL && m.busy_watts == 0);
    assert_int_equal(rt_cpu_power_of_part("Xeon", NULL, &m), -1);
    assert_int_equal(rt_cpu_power_of_part("", "", &m), -1);
    assert_int_equal(rt_cpu_power_of_part("Xeon", "v4", &m), -1); /* the last word of many rows */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_lookup), cmocka_unit_test(rule_table),  cmocka_unit_test(rule_given),
        cmocka_unit_test(rule_per_core), cmocka_unit_test(no_cpuinfo), cmocka_unit_test(per_core_is_typical),
        cmocka_unit_test(by_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
