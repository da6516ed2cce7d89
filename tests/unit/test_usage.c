/* test_usage.c - gpu_tracker's view of a run (analysis/usage.c through rt_stats, and its JSON in
 * rt_format_summary): hand-computed peaks and time-weighted means of the parts' memory, the sum
 * and hardware percentages with expected cores and chosen GPUs, thread peaks, the machine's
 * capacities; records without a per-GPU list; no GPUs; the options' errors. */
#include "unit.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>

#include "resource_tracker.h"

#define assert_near(got, want) near_((got), (want), #got, __LINE__)
static void near_(double got, double want, const char *what, int line)
{
    if (!(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)))
        fail_msg("line %d: %s = %.17g, want %.17g", line, what, got, want);
}

static rt_gpu gpu_a, gpu_b;
static const rt_gpu *gpus[2] = {&gpu_a, &gpu_b};

/* Record i of three (intervals 1, 1, 2 s) of a 4-core machine: the tree's parts busy and
 * holding memory, GPU A at 30%, GPU B at 70, 50, 90%. */
static rt_record rec(int i, bool gpu_list)
{
    static const double iv[3] = {1, 1, 2}, sys[3] = {1, 2, 3}, mc[3] = {0.5, 1, 1.5}, dc[3] = {0, 0.5, 1};
    static const double b_util[3] = {70, 50, 90};
    rt_record r;
    memset(&r, 0, sizeof r);
    r.timestamp_secs = 1000 + i;
    r.interval_secs = iv[i];
    r.cpu_cores = sys[i];
    r.cpu_count = 4;
    r.memory_total_mib = 16384;
    r.memory_used_mib = 1000 + 100 * i;
    r.gpu_count = 2;
    r.gpu_usage = (30 + b_util[i]) / 100;
    r.gpu_vram_mib = 2048 + i;
    r.gpu_vram_total_mib = 24576;
    r.process_pid = 42;
    r.process_cores = mc[i] + dc[i];
    r.main = (rt_record_part){300 + i, 290 + i, 10, mc[i], 2, 100};
    r.descendants = (rt_record_part){500 - 10 * i, 400 - 10 * i, 100, dc[i], 1 + i, 50 * i};
    r.combined = (rt_record_part){800, 690, 110 - i, mc[i] + dc[i], 3 + i, 100 + 50 * i};
    gpu_a.uuid = "GPU-a";
    gpu_a.utilization_pct = 30;
    gpu_b.uuid = "GPU-b";
    gpu_b.utilization_pct = b_util[i];
    r.gpu = gpu_list ? gpus : NULL;
    r.gpu_n = gpu_list ? 2 : 0;
    return r;
}

static const rt_usage *feed(rt_stats *st, bool gpu_list)
{
    for (int i = 0; i < 3; i++) {
        rt_record r = rec(i, gpu_list);
        rt_stats_add(st, &r);
    }
    return rt_stats_summary(st)->usage;
}

static void chosen_cores_and_gpu(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    const char *uuids[] = {"GPU-b"};
    rt_usage_options o = RT_USAGE_OPTIONS_INIT;
    o.expected_cores = 2;
    o.gpu_uuids = uuids;
    o.gpu_uuid_count = 1;
    assert_int_equal(rt_stats_set_usage(st, &o), RT_OK);
    const rt_usage *u = feed(st, true);
    assert_near(u->duration_secs, 4);
    assert_near(u->system_core_count, 4);
    assert_near(u->expected_cores, 2);
    /* main: 50%, 100%, 150% over 1, 1, 2 s */
    assert_near(u->cpu[0].max_sum_pct, 150);
    assert_near(u->cpu[0].max_hardware_pct, 75);
    assert_near(u->cpu[0].mean_sum_pct, (50 + 100 + 150 * 2) / 4.0);
    assert_near(u->cpu[0].mean_hardware_pct, (50 + 100 + 150 * 2) / 4.0 / 2);
    assert_near(u->cpu[1].max_sum_pct, 100);
    assert_near(u->cpu[2].max_hardware_pct, 125);
    /* the machine: always by all its cores */
    assert_near(u->cpu_system.max_sum_pct, 300);
    assert_near(u->cpu_system.max_hardware_pct, 75);
    assert_near(u->cpu_system.mean_sum_pct, (100 + 200 + 300 * 2) / 4.0);
    assert_near(u->cpu_system.mean_hardware_pct, (100 + 200 + 300 * 2) / 4.0 / 4);
    /* GPU B alone */
    assert_near(u->system_gpu_count, 2);
    assert_near(u->expected_gpus, 1);
    assert_near(u->gpu.max_sum_pct, 90);
    assert_near(u->gpu.max_hardware_pct, 90);
    assert_near(u->gpu.mean_sum_pct, (70 + 50 + 90 * 2) / 4.0);
    /* memory: each figure its own peak; means weighted by seconds */
    assert_near(u->ram_capacity_mib, 16384);
    assert_near(u->ram_system_peak_mib, 1200);
    assert_near(u->ram_system_mean_mib, (1000 + 1100 + 1200 * 2) / 4.0);
    assert_near(u->ram_peak[0].total_mib, 302);
    assert_near(u->ram_peak[0].private_mib, 292);
    assert_near(u->ram_peak[1].total_mib, 500);
    assert_near(u->ram_peak[1].private_mib, 400);
    assert_near(u->ram_peak[2].shared_mib, 110);
    assert_near(u->ram_mean[0].total_mib, (300 + 301 + 302 * 2) / 4.0);
    assert_near(u->ram_mean[1].private_mib, (400 + 390 + 380 * 2) / 4.0);
    assert_near(u->gpu_ram_capacity_mib, 24576);
    assert_near(u->gpu_ram_system_peak_mib, 2050);
    assert_near(u->gpu_ram_peak_mib[0], 100);
    assert_near(u->gpu_ram_peak_mib[1], 100);
    assert_near(u->gpu_ram_mean_mib[2], (100 + 150 + 200 * 2) / 4.0);
    assert_near(u->threads_peak[0], 2);
    assert_near(u->threads_peak[1], 3);
    assert_near(u->threads_peak[2], 5);
    /* options only before the first record */
    assert_int_equal(rt_stats_set_usage(st, &o), RT_ERR_INVALID);
    rt_stats_free(st);
}

static void every_core_and_gpu(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    const rt_usage *u = feed(st, true);
    assert_near(u->expected_cores, 4);
    assert_near(u->cpu[0].max_hardware_pct, 150 / 4.0);
    assert_near(u->expected_gpus, 2);
    assert_near(u->gpu.max_sum_pct, 120);
    assert_near(u->gpu.max_hardware_pct, 60);
    assert_near(u->gpu.mean_sum_pct, (100 + 80 + 120 * 2) / 4.0);
    rt_stats_free(st);
    /* without a per-GPU list (a CSV file, a tracker's kept samples): the total serves all... */
    st = rt_stats_new();
    u = feed(st, false);
    assert_near(u->gpu.max_sum_pct, 120);
    rt_stats_free(st);
    /* ...but cannot choose */
    st = rt_stats_new();
    const char *uuids[] = {"GPU-b"};
    rt_usage_options o = RT_USAGE_OPTIONS_INIT;
    o.gpu_uuids = uuids;
    o.gpu_uuid_count = 1;
    assert_int_equal(rt_stats_set_usage(st, &o), RT_OK);
    u = feed(st, false);
    assert_true(isnan(u->gpu.max_sum_pct));
    assert_near(u->expected_gpus, 1);
    rt_stats_free(st);
}

static void no_gpus_no_tree(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_record r = rec(0, false);
    r.gpu_count = 0;
    r.gpu_usage = 0;
    r.process_pid = r.process_cores = NAN;
    r.main = r.descendants = r.combined = (rt_record_part){NAN, NAN, NAN, NAN, NAN, NAN};
    rt_stats_add(st, &r);
    const rt_summary *s = rt_stats_summary(st);
    const rt_usage *u = s->usage;
    assert_near(u->system_gpu_count, 0);
    assert_near(u->expected_gpus, 0);
    assert_near(u->gpu.max_sum_pct, 0); /* no GPU: a true zero, as gpu_tracker has it */
    assert_near(u->gpu.max_hardware_pct, 0);
    assert_true(isnan(u->cpu[0].max_sum_pct));
    assert_true(isnan(u->ram_peak[2].total_mib));
    /* the JSON has no gpu_tracker member without a tree */
    char buf[16384];
    size_t n = rt_format_summary(s, NULL, NULL, buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    json_error_t err;
    json_t *j = json_loads(buf, 0, &err);
    assert_non_null(j);
    assert_true(json_is_null(json_object_get(j, "gpu_tracker")));
    json_decref(j);
    rt_stats_free(st);
}

static double jnum(json_t *root, const char *path)
{
    json_t *v = root;
    char key[64];
    for (const char *p = path; v && *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        snprintf(key, sizeof key, "%.*s", (int)len, p);
        v = json_object_get(v, key);
        p += len + (dot != NULL);
    }
    if (!json_is_number(v))
        fail_msg("%s is not a number", path);
    return json_number_value(v);
}

static void json_member(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_usage_options o = RT_USAGE_OPTIONS_INIT;
    o.expected_cores = 2;
    assert_int_equal(rt_stats_set_usage(st, &o), RT_OK);
    feed(st, true);
    const rt_summary *s = rt_stats_summary(st);
    char buf[16384];
    json_error_t err;
    /* gpu_tracker's defaults: gigabytes (decimal) and hours */
    size_t n = rt_format_summary(s, NULL, NULL, buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    json_t *j = json_loads(buf, 0, &err);
    if (!j)
        fail_msg("%s: %s", err.text, buf);
    json_t *g = json_object_get(j, "gpu_tracker");
    assert_string_equal(json_string_value(json_object_get(json_object_get(g, "max_ram"), "unit")), "gigabytes");
    assert_string_equal(json_string_value(json_object_get(json_object_get(g, "compute_time"), "unit")), "hours");
    assert_near(jnum(g, "max_ram.main.total_rss"), round(302 * 1048576.0 / 1e9 * 1e9) / 1e9);
    assert_near(jnum(g, "compute_time.time"), round(4 / 3600.0 * 1e9) / 1e9);
    assert_near(jnum(g, "cpu_utilization.n_expected_cores"), 2);
    assert_near(jnum(g, "cpu_utilization.main.max_sum_percent"), 150);
    assert_near(jnum(g, "cpu_utilization.main.max_hardware_percent"), 75);
    assert_near(jnum(g, "cpu_utilization.combined_n_threads"), 5);
    assert_near(jnum(g, "gpu_utilization.gpu_percentages.max_sum_percent"), 120);
    assert_near(jnum(g, "mean_ram.system"), round((1000 + 1100 + 1200 * 2) / 4.0 * 1048576.0) / 1e9);
    json_decref(j);
    /* bytes and seconds */
    n = rt_format_summary(s, "bytes", "seconds", buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    j = json_loads(buf, 0, &err);
    g = json_object_get(j, "gpu_tracker");
    assert_near(jnum(g, "max_ram.main.private_rss"), 292 * 1048576.0);
    assert_near(jnum(g, "max_gpu_ram.combined"), 200 * 1048576.0);
    assert_near(jnum(g, "compute_time.time"), 4);
    json_decref(j);
    rt_stats_free(st);
}

static void option_errors(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_usage_options o = RT_USAGE_OPTIONS_INIT;
    assert_int_equal(rt_stats_set_usage(NULL, &o), RT_ERR_INVALID);
    assert_int_equal(rt_stats_set_usage(st, NULL), RT_ERR_INVALID);
    o.expected_cores = -1;
    assert_int_equal(rt_stats_set_usage(st, &o), RT_ERR_INVALID);
    o.expected_cores = NAN;
    assert_int_equal(rt_stats_set_usage(st, &o), RT_ERR_INVALID);
    o.expected_cores = 0;
    o.gpu_uuid_count = 1; /* and no array */
    assert_int_equal(rt_stats_set_usage(st, &o), RT_ERR_INVALID);
    o.struct_size = 1;
    assert_int_equal(rt_stats_set_usage(st, &o), RT_ERR_INVALID);
    rt_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chosen_cores_and_gpu), cmocka_unit_test(every_core_and_gpu),
        cmocka_unit_test(no_gpus_no_tree),      cmocka_unit_test(json_member),
        cmocka_unit_test(option_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
