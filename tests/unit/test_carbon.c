/* test_carbon.c - the grid intensity table's lookup (rt_grid_lookup: a country, a cloud region
 * mapped to its zone, case, an unknown zone), rt_co2e_grams by hand, and the tool's choice of a
 * run's grid (cli_grid_choose: the user's intensity, zone, the cloud region, else unknown). */
#include "unit.h"

#include <math.h>

/* a within eps of b (this cmocka has no assert_double_equal) */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#include "cli.h"
#include "resource_tracker.h"

static void country(void **state)
{
    (void)state;
    rt_grid g = RT_GRID_INIT;
    assert_int_equal(rt_grid_lookup("FR", &g), RT_OK);
    assert_true(g.g_per_kwh == 56); /* Ember 2023: 56.0 g/kWh */
    assert_string_equal(g.zone, "FR");
    assert_string_equal(g.name, "France");
    assert_int_equal(g.year, 2023);
    assert_non_null(strstr(g.source, "Ember"));
    assert_int_equal(g.struct_size, sizeof g);
}

static void region_maps_to_zone(void **state)
{
    (void)state;
    rt_grid g = RT_GRID_INIT;
    assert_int_equal(rt_grid_lookup("aws:eu-west-3", &g), RT_OK); /* Paris */
    assert_true(g.g_per_kwh == 56);
    assert_string_equal(g.zone, "aws:eu-west-3");
    assert_string_equal(g.name, "France");
    assert_int_equal(g.year, 2023);
    assert_int_equal(rt_grid_lookup("gcp:europe-north1", &g), RT_OK); /* Hamina */
    assert_string_equal(g.name, "Finland");
    assert_int_equal(rt_grid_lookup("hcloud:fsn1", &g), RT_OK);
    assert_string_equal(g.name, "Germany");
}

static void any_case(void **state)
{
    (void)state;
    rt_grid g = RT_GRID_INIT;
    assert_int_equal(rt_grid_lookup("fr", &g), RT_OK);
    assert_string_equal(g.zone, "FR"); /* as the table spells it */
    assert_int_equal(rt_grid_lookup("AWS:EU-West-3", &g), RT_OK);
    assert_string_equal(g.zone, "aws:eu-west-3");
    assert_true(g.g_per_kwh == 56);
}

static void unknown(void **state)
{
    (void)state;
    rt_grid g = RT_GRID_INIT;
    g.g_per_kwh = 1;
    g.name = "x";
    assert_int_equal(rt_grid_lookup("XX", &g), RT_ERR_NOT_FOUND);
    assert_true(isnan(g.g_per_kwh));
    assert_null(g.zone);
    assert_null(g.name);
    assert_null(g.source);
    assert_non_null(strstr(rt_last_error_message(), "'XX'"));
    assert_int_equal(rt_grid_lookup("aws:mars-north-1", &g), RT_ERR_NOT_FOUND);
    assert_non_null(strstr(rt_last_error_message(), "aws:mars-north-1"));
    assert_int_equal(rt_grid_lookup("", &g), RT_ERR_NOT_FOUND);
    /* a prefix of a zone is not the zone */
    assert_int_equal(rt_grid_lookup("aws:eu-west", &g), RT_ERR_NOT_FOUND);
    assert_int_equal(rt_grid_lookup(NULL, &g), RT_ERR_INVALID);
    assert_int_equal(rt_grid_lookup("FR", NULL), RT_ERR_INVALID);
    rt_grid small = {.struct_size = sizeof(size_t)};
    assert_int_equal(rt_grid_lookup("FR", &small), RT_ERR_INVALID);
}

static void co2e_by_hand(void **state)
{
    (void)state;
    /* 3.6e6 J is 1 kWh: at 400 g/kWh, 400 g */
    assert_near(rt_co2e_grams(3.6e6, 400), 400, 1e-9);
    /* 90 J at 56 g/kWh: 90 / 3.6e6 * 56 = 0.0014 g */
    assert_near(rt_co2e_grams(90, 56), 0.0014, 1e-15);
    assert_near(rt_co2e_grams(0, 56), 0, 0);
    assert_true(isnan(rt_co2e_grams(NAN, 400)));
    assert_true(isnan(rt_co2e_grams(3.6e6, NAN)));
    assert_true(isnan(rt_co2e_grams(3.6e6, 0)));
    assert_true(isnan(rt_co2e_grams(3.6e6, -1)));
}

/* Every region maps to a zone with a figure. */
static void every_region_resolves(void **state)
{
    (void)state;
    static const char *const some[] = {"azure:westeurope", "upcloud:fi-hel1", "alicloud:cn-hangzhou", "ovh:gra11",
                                       "vultr:ewr", "gcp:us-central1", "aws:us-east-1"};
    for (size_t i = 0; i < sizeof some / sizeof some[0]; i++) {
        rt_grid g = RT_GRID_INIT;
        assert_int_equal(rt_grid_lookup(some[i], &g), RT_OK);
        assert_true(g.g_per_kwh > 0 && g.year > 2000);
    }
}

/* The tool's one choice of the grid: given intensity > given zone > the cloud's region > unknown. */
static void tool_chooses_the_grid(void **state)
{
    (void)state;
    rt_cloud aws = {.vendor_id = "aws", .region_id = "eu-north-1"}; /* Stockholm: SE */
    rt_cloud mars = {.vendor_id = "aws", .region_id = "mars-1"};
    rt_grid g;
    cli_grid_choose(&g, "FR", 300, &aws);
    assert_true(g.g_per_kwh == 300);
    assert_string_equal(g.source, "given");
    assert_int_equal(g.struct_size, sizeof g);
    cli_grid_choose(&g, "FR", 0, &aws);
    assert_true(g.g_per_kwh == 56);
    assert_string_equal(g.zone, "FR");
    cli_grid_choose(&g, NULL, 0, &aws);
    assert_string_equal(g.zone, "aws:eu-north-1");
    assert_string_equal(g.name, "Sweden");
    /* unknown: no world average */
    cli_grid_choose(&g, NULL, 0, &mars);
    assert_true(isnan(g.g_per_kwh));
    assert_null(g.zone);
    assert_null(g.source);
    cli_grid_choose(&g, NULL, NAN, NULL);
    assert_true(isnan(g.g_per_kwh));
    cli_grid_choose(&g, NULL, -3, NULL);
    assert_true(isnan(g.g_per_kwh));
    /* the user's zone is not silently replaced by the cloud's: an unknown one stays unknown */
    cli_grid_choose(&g, "XX", 0, &aws);
    assert_true(isnan(g.g_per_kwh));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(country),      cmocka_unit_test(region_maps_to_zone), cmocka_unit_test(any_case),
        cmocka_unit_test(unknown),      cmocka_unit_test(co2e_by_hand),       cmocka_unit_test(every_region_resolves),
        cmocka_unit_test(tool_chooses_the_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
