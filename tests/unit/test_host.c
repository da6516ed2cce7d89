/* test_host.c - the dedicated/shared guess from synthetic samples and the info JSON. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"

static rt_sample sample(double sys_cores, double proc_cores, double used_mib, double pss_mib, rt_process *p)
{
    rt_sample s;
    memset(&s, 0, sizeof s);
    memset(p, 0, sizeof *p);
    s.cpu.utilization_pct = sys_cores;
    s.memory.used_mib = used_mib;
    p->cores_used = proc_cores;
    p->pss_mib = pss_mib;
    p->gpu_utilization_pct = NAN;
    p->gpu_vram_used_bytes = RT_NULL_U64;
    s.process = p;
    return s;
}

static void allocation(void **state)
{
    (void)state;
    rt_allocation a;
    memset(&a, 0, sizeof a);
    assert_null(rt_allocation_guess(&a)); /* no samples: not known */
    rt_process p;
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(3.9, 3.8, 9000, 8500, &p); /* the job is nearly all of the machine */
        rt_allocation_add(&a, &s);
    }
    assert_string_equal(rt_allocation_guess(&a), "dedicated");
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(6.0, 2.0, 9000, 8500, &p); /* 4 more cores busy elsewhere */
        rt_allocation_add(&a, &s);
    }
    assert_string_equal(rt_allocation_guess(&a), "shared");
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(1.0, 0.9, 30000, 2000, &p); /* 28 GiB used by others */
        rt_allocation_add(&a, &s);
    }
    assert_string_equal(rt_allocation_guess(&a), "shared");
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(0.3, 0.05, 600, 100, &p); /* a tiny job on a quiet machine: 0.25 cores is noise */
        rt_allocation_add(&a, &s);
    }
    assert_string_equal(rt_allocation_guess(&a), "dedicated");
    rt_sample no_tree;
    memset(&no_tree, 0, sizeof no_tree);
    memset(&a, 0, sizeof a);
    rt_allocation_add(&a, &no_tree);
    assert_null(rt_allocation_guess(&a)); /* samples without a tree say nothing */
}

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
        cmocka_unit_test(allocation),
        cmocka_unit_test(info_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
