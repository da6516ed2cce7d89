/* test_host.c - the info JSON of the host and the cloud. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"

static void info_json(void **state)
{
    (void)state;
    rt_host h;
    memset(&h, 0, sizeof h);
    h.hostname = "box";
    h.vcpus = 8;
    h.memory_mib = 32000.5;
    h.gpu_count = 0;
    h.gpu_memory_mib = NAN;
    h.storage_gb = NAN;
    char buf[2048];
    size_t n = rt_format_info(&h, NULL, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    assert_non_null(strstr(buf, "{\"host\":{\"hostname\":\"box\",\"host_id\":null,"));
    assert_non_null(strstr(buf, "\"vcpus\":8,"));
    assert_non_null(strstr(buf, "\"memory_mib\":32000.5,"));
    assert_non_null(strstr(buf, "\"allocation\":null},\"cloud\":null}\n"));
    rt_cloud c = {.vendor_id = "aws", .region_id = "eu-west-1", .discovery_secs = 0.25};
    rt_format_info(NULL, &c, buf, sizeof buf);
    assert_string_equal(buf, "{\"host\":null,\"cloud\":{\"vendor_id\":\"aws\",\"account_id\":null,\"region_id\":"
                             "\"eu-west-1\",\"zone_id\":null,\"instance_type\":null,\"discovery_secs\":0.25}}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(info_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
