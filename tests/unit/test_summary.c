/* test_summary.c - rt_format_summary (sink/summary.c): the JSON parsed back with jansson and
 * checked key by key, null for missing figures and for a run without a tree, gpu_tracker's
 * memory and time units (decimal powers) and the key names they give, unknown units, and the
 * snprintf-like truncation contract. */
#include "unit.h"

#include <jansson.h>
#include <math.h>

#include "resource_tracker.h"

static rt_dist dist(double mean, double peak, double p50, double p95)
{
    rt_dist d = {.mean = mean, .peak = peak, .p50 = p50, .p95 = p95};
    return d;
}

static const rt_dist none = {NAN, NAN, NAN, NAN};

/* A run with a tree, one GPU, and some figures missing. */
static rt_summary full(void)
{
    rt_summary s;
    memset(&s, 0, sizeof s);
    s.samples = 3600;
    s.start_secs = 1700000000.25;
    s.end_secs = 1700003600.25;
    s.duration_secs = 3600;
    s.job_name = "train \"big\"";
    s.has_process = 1;
    s.process_cpu_secs = 7200;
    s.process_cores = dist(2, 3.5, 2.1, 3.4);
    s.process_pss_mib = dist(1024, 2048, 1000, 2000);
    s.process_rss_mib = dist(1100, 4096, 1050, 2100);
    s.process_gpu_usage = dist(0.5, 1, 0.5, 0.9);
    s.process_gpu_vram_mib = none;
    s.process_gpus_used = 1;
    s.process_read_bytes = 12345;
    s.process_write_bytes = NAN;
    s.cpu_count = 8;
    s.cpu_cores = dist(2.5, 4, 2.4, 3.9);
    s.memory_used_mib = dist(8000, 9000, 8100, 8900);
    s.memory_total_mib = 16384;
    s.gpu_usage = dist(0.6, 1, 0.6, 0.95);
    s.gpu_vram_mib = dist(3000, 4000, 3100, 3900);
    s.gpu_count = 1;
    s.gpu_vram_total_mib = 24576;
    s.disk_read_bytes = 1e9;
    s.disk_write_bytes = 2e9;
    s.net_recv_bytes = 3;
    s.net_sent_bytes = 0;
    s.disk_space_used_peak_bytes = 5e11;
    s.disk_space_total_bytes = 1e12;
    s.allocation = "dedicated";
    /* no cgroup, no pressure */
    s.process_memory_peak_mib = s.oom_kills = s.oom_kill_secs = s.memory_limit_mib = s.memory_high_mib = NAN;
    s.cpu_quota_cores = s.cpu_periods = s.cpu_throttled_periods = s.cpu_throttled_secs = NAN;
    s.pids_peak = s.pids_limit = NAN;
    s.memory_refault_mib = NAN; /* 0.20 */
    s.pressure_cpu_some_pct = s.pressure_memory_some_pct = s.pressure_memory_full_pct = none;
    s.pressure_io_some_pct = s.pressure_io_full_pct = none;
    /* 0.9: a process's kernel peak above the sampled figures, no group */
    s.process_rss_hwm_mib = 2100;
    s.process_rss_hwm_tree_mib = 2300;
    s.process_unreclaimable_unsure_mib = 12.5;
    s.process_unreclaimable_peak_mib = s.process_gpu_vram_peak_mib = NAN;
    s.process_cancelled_write_bytes = 0;
    s.process_cgroup_exclusive = s.left_behind = NAN;
    s.process_vms_peak_mib = 3072.25; /* 0.16 */
    s.memory_need = (rt_need){2100, RT_NEED_PROCESS_PEAK, 0};
    s.vram_need = (rt_need){NAN, RT_NEED_UNKNOWN, 0};
    /* 0.19: a GPU without GPM (no work figures); its busy count and VRAM on one GPU known */
    s.gpu_sm_active_pct = s.gpu_sm_occupancy_pct = s.gpu_tensor_active_pct = s.gpu_dram_active_pct = none;
    s.gpu_fp64_active_pct = s.gpu_fp32_active_pct = s.gpu_fp16_active_pct = none;
    s.gpu_pcie_bytes_per_sec = s.gpu_nvlink_bytes_per_sec = none;
    s.gpu_work_shared = NAN;
    s.process_gpus_busy = 1;
    s.process_gpu_vram_per_gpu_peak_mib = 2048.5;
    s.gpu_idle_cpu_busy_secs = 120;
    s.left_behind_mib = 300.5;
    s.process_exits_counted = 42;
    s.process_unwaited_parents = 2;
    s.end_signal = NAN; /* 0.21: not known */
    return s;
}

/* full() in a cgroup: OOM-killed, throttled in 40% of its periods, with pressure. */
static rt_summary in_cgroup(void)
{
    rt_summary s = full();
    s.process_memory_peak_mib = 8100;
    s.oom_kills = 1;
    s.oom_kill_secs = 1700000007.5;
    s.memory_limit_mib = 8192;
    s.cpu_quota_cores = 2;
    s.cpu_periods = 80;
    s.cpu_throttled_periods = 32;
    s.cpu_throttled_secs = 7200;
    s.pids_peak = 5;
    s.pids_limit = 100;
    s.memory_refault_mib = 600; /* 0.20: re-reads */
    s.pressure_cpu_some_pct = dist(12, 40, 10, 30);
    s.pressure_memory_some_pct = dist(3, 9, 2, 8);
    s.pressure_memory_full_pct = dist(1, 4, 0.5, 3);
    return s;
}

/* Formats s and parses it back; fails unless it is exactly one object and a newline. */
static json_t *format_parse(const rt_summary *s, const char *mu, const char *tu)
{
    static char buf[8192];
    size_t n = rt_format_summary(s, mu, tu, buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    assert_int_equal(strlen(buf), n);
    assert_int_equal(buf[n - 1], '\n');
    assert_null(memchr(buf, '\n', n - 1));
    json_error_t err;
    json_t *j = json_loads(buf, 0, &err);
    if (!j)
        fail_msg("not JSON (%s): %s", err.text, buf);
    assert_true(json_is_object(j));
    return j;
}

static void near(const json_t *v, double want, double rel, const char *what)
{
    if (!json_is_number(v))
        fail_msg("%s: not a number", what);
    double got = json_number_value(v);
    if (!(fabs(got - want) <= rel * fabs(want) + 1e-12))
        fail_msg("%s = %.17g, want %.17g", what, got, want);
}

static void is_null(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (!v || !json_is_null(v))
        fail_msg("%s: want null", k);
}

static void check_dist(const json_t *o, const char *k, rt_dist d, double f, double rel)
{
    const json_t *v = json_object_get(o, k);
    if (!json_is_object(v))
        fail_msg("%s: not an object", k);
    assert_int_equal(json_object_size(v), 4);
    near(json_object_get(v, "mean"), d.mean * f, rel, k);
    near(json_object_get(v, "peak"), d.peak * f, rel, k);
    near(json_object_get(v, "p50"), d.p50 * f, rel, k);
    near(json_object_get(v, "p95"), d.p95 * f, rel, k);
}

static void defaults(void **state)
{
    (void)state;
    rt_summary s = full();
    json_t *j = format_parse(&s, NULL, NULL);
    assert_int_equal(json_object_size(j), 24);
    is_null(j, "gpu_work"); /* 0.19: no GPU work figure */
    is_null(j, "clock");    /* 0.20: no step of the wall clock, no gap */
    is_null(j, "cores");
    is_null(j, "member"); /* 0.18: a run that names no job of several */ /* a summary made by hand: no table of the run under other core counts */
    is_null(j, "energy"); /* no energy figure */
    is_null(j, "efficiency"); /* nothing said what the job was given */
    is_null(j, "phases"); /* no mark: both null */
    is_null(j, "phase_marks");
    is_null(j, "cgroup");
    is_null(j, "pressure");
    is_null(j, "gpu_tracker"); /* a summary made by hand: no usage */
    assert_int_equal(json_integer_value(json_object_get(j, "samples")), 3600);
    near(json_object_get(j, "start_secs"), 1700000000.25, 0, "start_secs");
    near(json_object_get(j, "end_secs"), 1700003600.25, 0, "end_secs");
    near(json_object_get(j, "duration_secs"), 3600, 0, "duration_secs");
    assert_string_equal(json_string_value(json_object_get(j, "job_name")), "train \"big\"");
    assert_string_equal(json_string_value(json_object_get(j, "allocation")), "dedicated");

    const json_t *p = json_object_get(j, "process");
    assert_true(json_is_object(p));
    assert_int_equal(json_object_size(p), 26);
    near(json_object_get(p, "gpus_busy"), 1, 0, "gpus_busy"); /* 0.19 */
    near(json_object_get(p, "gpu_vram_per_gpu_peak_mib"), 2048.5, 0, "gpu_vram_per_gpu_peak_mib");
    near(json_object_get(p, "gpu_idle_cpu_busy_secs"), 120, 0, "gpu_idle_cpu_busy_secs");
    near(json_object_get(p, "left_behind_mib"), 300.5, 0, "left_behind_mib"); /* 0.19 */
    near(json_object_get(p, "exits_counted"), 42, 0, "exits_counted");
    near(json_object_get(p, "unwaited_parents"), 2, 0, "unwaited_parents");
    is_null(p, "memory_peak_mib");
    near(json_object_get(p, "rss_hwm_mib"), 2100, 0, "rss_hwm_mib");
    near(json_object_get(p, "rss_hwm_tree_mib"), 2300, 0, "rss_hwm_tree_mib");
    near(json_object_get(p, "unreclaimable_unsure_mib"), 12.5, 0, "unreclaimable_unsure_mib");
    is_null(p, "unreclaimable_peak_mib");
    is_null(p, "gpu_vram_peak_mib");
    near(json_object_get(p, "cancelled_write_bytes"), 0, 0, "cancelled_write_bytes");
    is_null(p, "cgroup_exclusive");
    is_null(p, "left_behind");
    near(json_object_get(p, "vms_peak_mib"), 3072.25, 0, "vms_peak_mib");
    near(json_object_get(p, "cpu_secs"), 7200, 0, "cpu_secs");
    check_dist(p, "cores", s.process_cores, 1, 0);
    check_dist(p, "pss_mib", s.process_pss_mib, 1, 0);
    check_dist(p, "rss_mib", s.process_rss_mib, 1, 0);
    check_dist(p, "gpu_usage", s.process_gpu_usage, 1, 0);
    const json_t *vram = json_object_get(p, "gpu_vram_mib");
    is_null(vram, "mean");
    is_null(vram, "peak");
    is_null(vram, "p50");
    is_null(vram, "p95");
    near(json_object_get(p, "gpus_used"), 1, 0, "gpus_used");
    near(json_object_get(p, "read_bytes"), 12345, 0, "read_bytes");
    is_null(p, "write_bytes");

    const json_t *m = json_object_get(j, "machine");
    assert_true(json_is_object(m));
    assert_int_equal(json_object_size(m), 14);
    check_dist(m, "cores", s.cpu_cores, 1, 0);
    check_dist(m, "memory_used_mib", s.memory_used_mib, 1, 0);
    check_dist(m, "gpu_usage", s.gpu_usage, 1, 0);
    check_dist(m, "gpu_vram_mib", s.gpu_vram_mib, 1, 0);
    static const struct {
        const char *key;
        double want;
    } plain[] = {{"cpu_count", 8}, {"memory_total_mib", 16384}, {"gpu_count", 1}, {"gpu_vram_total_mib", 24576},
                 {"disk_read_bytes", 1e9}, {"disk_write_bytes", 2e9}, {"net_recv_bytes", 3}, {"net_sent_bytes", 0},
                 {"disk_space_used_peak_bytes", 5e11}, {"disk_space_total_bytes", 1e12}};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        near(json_object_get(m, plain[i].key), plain[i].want, 0, plain[i].key);

    /* the answer: the need and where it came from, the recommendation, the notes */
    const json_t *need = json_object_get(j, "memory_need");
    assert_int_equal(json_object_size(need), 3);
    near(json_object_get(need, "need_mib"), 2100, 0, "need_mib");
    assert_string_equal(json_string_value(json_object_get(need, "source")), "process_peak");
    assert_true(json_is_false(json_object_get(need, "sampled")));
    const json_t *vneed = json_object_get(j, "vram_need");
    is_null(vneed, "need_mib");
    assert_string_equal(json_string_value(json_object_get(vneed, "source")), "unknown");
    const json_t *rec = json_object_get(j, "recommendation");
    near(json_object_get(rec, "cpu"), 2, 0, "cpu");
    near(json_object_get(rec, "memory_mib"), 3072, 0, "memory_mib"); /* 2100 x 1.2 = 2520 -> 3 GiB */
    near(json_object_get(rec, "gpu"), 1, 0, "gpu");
    near(json_object_get(rec, "headroom_pct"), 20, 0, "headroom_pct");
    /* without a table, the cores by the mean rule, and no time (0.18) */
    assert_string_equal(json_string_value(json_object_get(rec, "cpu_basis")), "mean");
    is_null(rec, "cpu_duration_secs");
    is_null(rec, "time_limit_secs");
    is_null(rec, "time_words");
    const json_t *notes = json_object_get(j, "notes");
    assert_true(json_is_array(notes));
    assert_int_equal(json_array_size(notes), 1); /* no group: the accounting may be incomplete */
    assert_string_equal(json_string_value(json_object_get(json_array_get(notes, 0), "kind")), "accounting_incomplete");
    json_decref(j);

    /* in other units: the need's key says the unit */
    j = format_parse(&s, "gigabytes", NULL);
    near(json_object_get(json_object_get(j, "memory_need"), "need_gigabytes"), 2100 * 1.048576e-3, 1e-9,
         "need_gigabytes");
    near(json_object_get(json_object_get(j, "recommendation"), "memory_gigabytes"), 3072 * 1.048576e-3, 1e-9,
         "memory_gigabytes");
    json_decref(j);
}

/* The GPU work object (0.19): its distributions in order, percent with 2 decimals and bytes per
 * second whole, null for a figure no record had, "shared" true when the figures were the
 * devices'; the process's idle seconds in the time unit. */
static void gpu_work_members(void **state)
{
    (void)state;
    rt_summary s = full();
    s.gpu_sm_active_pct = dist(15.9, 16.2, 15.9, 16.004);
    s.gpu_sm_occupancy_pct = dist(0.85, 0.9, 0.85, 0.9);
    s.gpu_tensor_active_pct = dist(0, 0, 0, 0);
    s.gpu_dram_active_pct = dist(0.5, 0.5, 0.5, 0.5);
    s.gpu_fp32_active_pct = dist(2.3, 2.5, 2.3, 2.5);
    s.gpu_pcie_bytes_per_sec = dist(31457280.4, 4e7, 3e7, 4e7);
    s.gpu_work_shared = 1;
    static char buf[8192];
    size_t n = rt_format_summary(&s, NULL, "hours", buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    /* the last member, in the contract's order */
    assert_non_null(strstr(buf, ",\"gpu_work\":{\"sm_active_pct\":{\"mean\":15.9,\"peak\":16.2,\"p50\":15.9,\"p95\":16},"
                                "\"sm_occupancy_pct\":{\"mean\":0.85,\"peak\":0.9,\"p50\":0.85,\"p95\":0.9},"
                                "\"tensor_active_pct\":{\"mean\":0,\"peak\":0,\"p50\":0,\"p95\":0},"));
    assert_non_null(strstr(buf, "\"fp64_active_pct\":{\"mean\":null,\"peak\":null,\"p50\":null,\"p95\":null},"
                                "\"fp32_active_pct\":{\"mean\":2.3,"));
    assert_non_null(strstr(buf, "\"pcie_bytes_per_sec\":{\"mean\":31457280,\"peak\":40000000,"));
    assert_non_null(strstr(buf, "\"nvlink_bytes_per_sec\":{\"mean\":null,\"peak\":null,\"p50\":null,\"p95\":null},"
                                "\"shared\":true},\"end_signal\":null,\"clock\":null}\n"));
    assert_non_null(strstr(buf, "\"gpu_idle_cpu_busy_hours\":0.033333333,\"left_behind_mib\":300.5,\"exits_counted\":42,\"unwaited_parents\":2}"));
    s.gpu_work_shared = 0;
    s.end_signal = 0; /* 0.21: it exited on its own */
    rt_format_summary(&s, NULL, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "\"shared\":false},\"end_signal\":0,\"clock\":null}\n"));
    /* 0.21: the clocks, the last member */
    s.clock_steps = 2, s.clock_step_secs = 0, s.clock_step_largest_secs = -3600;
    s.sampling_gaps = 1, s.sampling_gap_secs = s.sampling_gap_longest_secs = 20.125;
    rt_format_summary(&s, NULL, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",\"clock\":{\"steps\":2,\"step_secs\":0,\"step_largest_secs\":-3600,\"gaps\":1,"
                                "\"gap_secs\":20.125,\"gap_longest_secs\":20.125}}\n"));
    s.gpu_work_shared = NAN;
    s.end_signal = 15; /* a scheduler's SIGTERM */
    rt_format_summary(&s, NULL, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "\"shared\":null},\"end_signal\":15,\"clock\":{"));
}

/* The cgroup and pressure objects: names, units (memory in the memory unit, the throttled
 * time in the time unit), the throttled share over the run, null for a missing figure. */
static void cgroup_members(void **state)
{
    (void)state;
    rt_summary s = in_cgroup();
    json_t *j = format_parse(&s, NULL, NULL);
    near(json_object_get(json_object_get(j, "process"), "memory_peak_mib"), 8100, 0, "memory_peak_mib");
    const json_t *c = json_object_get(j, "cgroup");
    assert_true(json_is_object(c));
    assert_int_equal(json_object_size(c), 12);
    static const struct {
        const char *key;
        double want;
    } want[] = {{"oom_kills", 1},   {"oom_kill_secs", 1700000007.5}, {"memory_limit_mib", 8192},
                {"cpu_quota_cores", 2}, {"cpu_periods", 80},          {"cpu_throttled_periods", 32},
                {"cpu_throttled_pct", 40}, {"cpu_throttled_secs", 7200}, {"pids_peak", 5},
                {"pids_limit", 100}, {"memory_refault_mib", 600}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        near(json_object_get(c, want[i].key), want[i].want, 0, want[i].key);
    is_null(c, "memory_high_mib");
    const json_t *p = json_object_get(j, "pressure");
    assert_true(json_is_object(p));
    assert_int_equal(json_object_size(p), 5);
    check_dist(p, "cpu_some_pct", s.pressure_cpu_some_pct, 1, 0);
    check_dist(p, "memory_some_pct", s.pressure_memory_some_pct, 1, 0);
    check_dist(p, "memory_full_pct", s.pressure_memory_full_pct, 1, 0);
    is_null(json_object_get(p, "io_some_pct"), "mean");
    json_decref(j);

    j = format_parse(&s, "gigabytes", "hours");
    c = json_object_get(j, "cgroup");
    near(json_object_get(c, "memory_limit_gigabytes"), 8192 * 1.048576e-3, 1e-9, "memory_limit_gigabytes");
    is_null(c, "memory_high_gigabytes");
    near(json_object_get(c, "cpu_throttled_hours"), 2, 0, "cpu_throttled_hours");
    near(json_object_get(json_object_get(j, "process"), "memory_peak_gigabytes"), 8100 * 1.048576e-3, 1e-9,
         "memory_peak_gigabytes");
    assert_null(json_object_get(c, "memory_limit_mib"));
    json_decref(j);

    /* no period yet: no share */
    s.cpu_periods = 0;
    s.cpu_throttled_periods = 0;
    j = format_parse(&s, NULL, NULL);
    is_null(json_object_get(j, "cgroup"), "cpu_throttled_pct");
    json_decref(j);
}

/* A run without a tree (and without anything else, as from an empty accumulator). */
static void no_process(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    json_t *j = format_parse(rt_stats_summary(st), NULL, NULL);
    assert_int_equal(json_integer_value(json_object_get(j, "samples")), 0);
    is_null(j, "process");
    is_null(j, "job_name");
    is_null(j, "allocation");
    is_null(j, "start_secs");
    near(json_object_get(j, "duration_secs"), 0, 0, "duration_secs");
    const json_t *m = json_object_get(j, "machine");
    is_null(m, "cpu_count");
    is_null(m, "disk_read_bytes");
    is_null(json_object_get(m, "cores"), "p95");
    is_null(j, "cgroup");
    is_null(j, "pressure");
    json_decref(j);
    rt_stats_free(st);
}

/* gpu_tracker's units are decimal: 1 MiB = 1048576 bytes = 1.048576 megabytes. */
static void units(void **state)
{
    (void)state;
    rt_summary s = full();
    static const struct {
        const char *name;
        double per_mib;
    } mem[] = {{"bytes", 1048576.0}, {"kilobytes", 1048.576}, {"megabytes", 1.048576},
               {"gigabytes", 1.048576e-3}, {"terabytes", 1.048576e-6}};
    static const struct {
        const char *name;
        double per_sec;
    } tm[] = {{"seconds", 1}, {"minutes", 1 / 60.0}, {"hours", 1 / 3600.0}, {"days", 1 / 86400.0}};
    char key[64];
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        size_t t = i % (sizeof tm / sizeof tm[0]);
        json_t *j = format_parse(&s, mem[i].name, tm[t].name);
        const json_t *p = json_object_get(j, "process"), *m = json_object_get(j, "machine");
        double rel = 1e-6; /* terabytes shown with 9 decimals */
        snprintf(key, sizeof key, "duration_%s", tm[t].name);
        near(json_object_get(j, key), 3600 * tm[t].per_sec, rel, key);
        assert_null(json_object_get(j, "duration_secs"));
        near(json_object_get(j, "start_secs"), s.start_secs, 0, "start_secs"); /* timestamps stay */
        snprintf(key, sizeof key, "cpu_%s", tm[t].name);
        near(json_object_get(p, key), 7200 * tm[t].per_sec, rel, key);
        snprintf(key, sizeof key, "pss_%s", mem[i].name);
        check_dist(p, key, s.process_pss_mib, mem[i].per_mib, rel);
        snprintf(key, sizeof key, "rss_%s", mem[i].name);
        check_dist(p, key, s.process_rss_mib, mem[i].per_mib, rel);
        snprintf(key, sizeof key, "memory_used_%s", mem[i].name);
        check_dist(m, key, s.memory_used_mib, mem[i].per_mib, rel);
        snprintf(key, sizeof key, "gpu_vram_%s", mem[i].name);
        check_dist(m, key, s.gpu_vram_mib, mem[i].per_mib, rel);
        snprintf(key, sizeof key, "memory_total_%s", mem[i].name);
        near(json_object_get(m, key), 16384 * mem[i].per_mib, rel, key);
        snprintf(key, sizeof key, "gpu_vram_total_%s", mem[i].name);
        near(json_object_get(m, key), 24576 * mem[i].per_mib, rel, key);
        assert_null(json_object_get(p, "pss_mib"));
        assert_null(json_object_get(m, "memory_total_mib"));
        /* byte counters and cores are not converted */
        near(json_object_get(p, "read_bytes"), 12345, 0, "read_bytes");
        near(json_object_get(m, "disk_space_total_bytes"), 1e12, 0, "disk_space_total_bytes");
        check_dist(m, "cores", s.cpu_cores, 1, 0);
        json_decref(j);
    }
    /* one unit given, the other default */
    json_t *j = format_parse(&s, "gigabytes", NULL);
    near(json_object_get(j, "duration_secs"), 3600, 0, "duration_secs");
    near(json_object_get(json_object_get(j, "machine"), "memory_total_gigabytes"), 16384 * 1.048576e-3, 1e-9,
         "memory_total_gigabytes");
    json_decref(j);
    j = format_parse(&s, NULL, "hours");
    near(json_object_get(j, "duration_hours"), 1, 0, "duration_hours");
    check_dist(json_object_get(j, "process"), "pss_mib", s.process_pss_mib, 1, 0);
    json_decref(j);
}

static void unknown_units(void **state)
{
    (void)state;
    rt_summary s = full();
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(rt_format_summary(&s, "mebibytes", NULL, buf, sizeof buf), 0);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(rt_format_summary(&s, NULL, "weeks", buf, sizeof buf), 0);
    assert_int_equal(rt_format_summary(&s, "MiB", "secs", buf, sizeof buf), 0);
    assert_int_equal(rt_format_summary(NULL, NULL, NULL, buf, sizeof buf), 0);
}

/* Like snprintf: the length needed whatever cap is, as much as fits, NUL-terminated. */
static void truncation(void **state)
{
    (void)state;
    rt_summary s = full();
    char full_buf[8192], small[64];
    size_t n = rt_format_summary(&s, "gigabytes", "hours", full_buf, sizeof full_buf);
    assert_true(n > 100 && n < sizeof full_buf);
    assert_int_equal(rt_format_summary(&s, "gigabytes", "hours", NULL, 0), n);
    for (size_t cap = 1; cap <= sizeof small; cap++) {
        memset(small, 'x', sizeof small);
        assert_int_equal(rt_format_summary(&s, "gigabytes", "hours", small, cap), n);
        assert_int_equal(small[cap - 1], '\0');
        assert_memory_equal(small, full_buf, cap - 1);
        if (cap < sizeof small)
            assert_int_equal(small[cap], 'x'); /* nothing written past cap */
    }
    /* exactly n bytes: all but the newline; n + 1: all */
    char *exact = malloc(n + 1);
    assert_non_null(exact);
    assert_int_equal(rt_format_summary(&s, "gigabytes", "hours", exact, n), n);
    assert_int_equal(strlen(exact), n - 1);
    assert_int_equal(rt_format_summary(&s, "gigabytes", "hours", exact, n + 1), n);
    assert_string_equal(exact, full_buf);
    free(exact);
}

/* Figures too large for fixed notation (a hostile file) come out as the same number in
 * exponent notation, not as their first 63 digits (1e300 printed as 1e62). */
static void huge_numbers(void **state)
{
    (void)state;
    rt_summary s = full();
    s.disk_read_bytes = 1e300;
    s.end_secs = 1.5e200;
    s.process_pss_mib = dist(1e250, 2e250, 1e250, 2e250);
    json_t *j = format_parse(&s, NULL, NULL);
    const json_t *m = json_object_get(j, "machine"), *p = json_object_get(j, "process");
    near(json_object_get(m, "disk_read_bytes"), 1e300, 1e-15, "disk_read_bytes");
    near(json_object_get(j, "end_secs"), 1.5e200, 1e-15, "end_secs");
    check_dist(p, "pss_mib", s.process_pss_mib, 1, 1e-15);
    json_decref(j);
    j = format_parse(&s, "kilobytes", NULL);
    check_dist(json_object_get(j, "process"), "pss_kilobytes", s.process_pss_mib, 1048576.0 / 1e3, 1e-15);
    json_decref(j);
}

/* The run's energy (0.15): figures with their methods, power, notes, throttle time, and carbon
 * with its grid, or null when the intensity is unknown. */
static void energy_members(void **state)
{
    (void)state;
    rt_summary s = full();
    s.energy_joules = 7.2e6;
    s.energy_method = "sampled";
    s.process_energy_joules = 3.6e6;
    s.process_energy_method = "estimated";
    s.power_watts = dist(2000, 2500, 1900, 2400);
    s.process_power_watts = dist(1000, 1200, 950, 1150);
    s.idle_power_watts = 180;
    s.energy_model = "Fake CPU: 4.0 W per busy logical core";
    s.energy_missing = NULL;
    s.gpu_power_throttled_secs = 12.5;
    s.gpu_thermal_throttled_secs = NAN;
    s.co2e_grams = 600;
    s.process_co2e_grams = 300;
    rt_grid g = RT_GRID_INIT;
    g.g_per_kwh = 300;
    g.zone = "FR";
    g.source = "given";
    s.grid = &g;
    json_t *j = format_parse(&s, NULL, "hours");
    json_t *e = json_object_get(j, "energy");
    assert_true(json_is_object(e));
    assert_int_equal(json_object_size(e), 14);
    is_null(e, "parts"); /* 0.19: no domains, no parts */
    is_null(e, "meter_source");
    near(json_object_get(e, "joules"), 7.2e6, 0, "joules");
    assert_string_equal(json_string_value(json_object_get(e, "method")), "sampled");
    near(json_object_get(e, "process_joules"), 3.6e6, 0, "process_joules");
    assert_string_equal(json_string_value(json_object_get(e, "process_method")), "estimated");
    check_dist(e, "power_watts", s.power_watts, 1, 0);
    check_dist(e, "process_power_watts", s.process_power_watts, 1, 0);
    near(json_object_get(e, "idle_power_watts"), 180, 0, "idle");
    assert_string_equal(json_string_value(json_object_get(e, "model")), s.energy_model);
    is_null(e, "missing");
    near(json_object_get(e, "gpu_power_throttled_hours"), 12.5 / 3600, 1e-3, "power throttled");
    is_null(e, "gpu_thermal_throttled_hours");
    json_t *c = json_object_get(e, "carbon");
    assert_true(json_is_object(c));
    assert_int_equal(json_object_size(c), 7);
    near(json_object_get(c, "co2e_grams"), 600, 0, "co2e");
    near(json_object_get(c, "process_co2e_grams"), 300, 0, "process co2e");
    near(json_object_get(c, "g_per_kwh"), 300, 0, "g_per_kwh");
    assert_string_equal(json_string_value(json_object_get(c, "zone")), "FR");
    is_null(c, "name");
    assert_string_equal(json_string_value(json_object_get(c, "source")), "given");
    is_null(c, "year");
    json_decref(j);

    /* 0.19: the parts, each with its kind, source, method and figures; a platform meter's source */
    rt_summary_energy_part gpu = {"gpu", "nvml", "measured", 6.8e6, 6.8e6, 2}, cpu = {"cpu", "model", "estimated", 4e5, NAN, 1};
    const rt_summary_energy_part *parts[] = {&gpu, &cpu};
    s.energy_parts = parts;
    s.energy_part_count = 2;
    s.energy_meter_source = "hwmon";
    j = format_parse(&s, NULL, NULL);
    e = json_object_get(j, "energy");
    json_t *a = json_object_get(e, "parts");
    assert_int_equal(json_array_size(a), 2);
    json_t *p0 = json_array_get(a, 0), *p1 = json_array_get(a, 1);
    assert_int_equal(json_object_size(p0), 6);
    assert_string_equal(json_string_value(json_object_get(p0, "kind")), "gpu");
    assert_string_equal(json_string_value(json_object_get(p0, "source")), "nvml");
    assert_string_equal(json_string_value(json_object_get(p0, "method")), "measured");
    near(json_object_get(p0, "joules"), 6.8e6, 0, "gpu joules");
    near(json_object_get(p0, "process_joules"), 6.8e6, 0, "gpu process joules");
    near(json_object_get(p0, "devices"), 2, 0, "gpus");
    assert_string_equal(json_string_value(json_object_get(p1, "source")), "model");
    is_null(p1, "process_joules");
    assert_string_equal(json_string_value(json_object_get(e, "meter_source")), "hwmon");
    json_decref(j);
    s.energy_parts = NULL;
    s.energy_part_count = 0;
    s.energy_meter_source = NULL;

    s.grid = NULL; /* unknown intensity */
    s.co2e_grams = s.process_co2e_grams = NAN;
    j = format_parse(&s, NULL, NULL);
    is_null(json_object_get(j, "energy"), "carbon");
    json_decref(j);
}

/* rec as rt_format_recommendation_json writes it, parsed (n: its length). */
static json_t *recommendation_parse(const rt_recommendation *rec, size_t *n)
{
    static char text[8192];
    *n = rt_format_recommendation_json(rec, NULL, NULL, NULL, 0);
    assert_true(*n > 100 && *n < sizeof text);
    assert_int_equal(rt_format_recommendation_json(rec, NULL, NULL, text, sizeof text), *n);
    assert_int_equal(strlen(text), *n);
    json_error_t err;
    json_t *r = json_loads(text, 0, &err);
    if (!r)
        fail_msg("not JSON: %s in %s", err.text, text);
    return r;
}

/* 0.22: the recommendation's one table writes both objects: recommend --json's
 * (rt_format_recommendation_json: every number read back as the double it is, integers as
 * integers) and the summary's, whose keys are recommend's, in their own order, with the same
 * values at the summary's decimals. */
static void recommendation_one_writer(void **state)
{
    (void)state;
    rt_summary s = full();
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    const rt_summary *runs[1] = {&s};
    assert_int_equal(rt_recommend(runs, 1, &rec), RT_OK);
    size_t n;
    json_t *r = recommendation_parse(&rec, &n);
    assert_int_equal(json_object_size(r), 43);
    /* the summary's object: recommend's keys (a unit's suffix on the same name), the same values */
    json_t *j = format_parse(&s, NULL, NULL);
    json_t *sr = json_object_get(j, "recommendation");
    assert_int_equal(json_object_size(sr), 21);
    const char *k;
    json_t *v;
    json_object_foreach(sr, k, v) {
        json_t *w = json_object_get(r, k);
        if (!w)
            fail_msg("the summary's recommendation has %s, recommend --json not", k);
        if (json_is_number(v))
            near(v, json_number_value(w), 1e-3, k);
        else if (!json_equal(v, w))
            fail_msg("%s differs", k);
    }
    json_decref(j);
    assert_true(json_is_integer(json_object_get(r, "cpu")) && json_is_integer(json_object_get(r, "memory_mib")));
    assert_true(json_is_real(json_object_get(r, "max_slowdown_pct"))); /* 10.0: a real */
    assert_string_equal(json_string_value(json_object_get(r, "memory_source")), "process_peak");
    assert_true(json_is_array(json_object_get(r, "gpu_notes")));
    assert_true(json_is_object(json_object_get(r, "gpu_scheduler_notes")));
    json_decref(r);
    /* every digit: the double itself read back */
    rec.headroom_pct = 20.0625 + 1e-9;
    r = recommendation_parse(&rec, &n);
    assert_true(json_real_value(json_object_get(r, "headroom_pct")) == 20.0625 + 1e-9);
    json_decref(r);
    /* a short buffer: cut, NUL-terminated, the length needed said */
    char small[16];
    assert_int_equal(rt_format_recommendation_json(&rec, NULL, NULL, small, sizeof small), n);
    assert_int_equal(strlen(small), sizeof small - 1);
    /* none, or a caller's older struct: nothing */
    assert_int_equal(rt_format_recommendation_json(NULL, NULL, NULL, small, sizeof small), 0);
    assert_string_equal(small, "");
    rec.struct_size = offsetof(rt_recommendation, memory_reread_files_mib);
    assert_int_equal(rt_format_recommendation_json(&rec, NULL, NULL, small, sizeof small), 0);
}

/* 0.22: the run's table under other core counts, recommend --json's (rt_format_cores_json): the
 * summary's "cores" members, each number the double it is, and its rows with their money; the
 * core-hours past the table's last row are that row's duration under more cores. */
static void cores_one_writer(void **state)
{
    (void)state;
    rt_cores_row rows[2] = {{1, 10, 10 / 3600.0, 0}, {2, 5.5, 11 / 3600.0, 1}};
    rt_cores_table t = {.n = 2, .rows = rows, .duration_secs = 10, .cores_had = 1, .peak_cores = 1.75,
                        .wait_secs = NAN, .own_secs = 10, .others_cores = 0.25, .machine_cores = 2,
                        .demand_cores = NAN};
    char buf[2048];
    size_t n = rt_format_cores_json(&t, 0.5, buf, sizeof buf);
    assert_true(n > 0 && n < sizeof buf);
    json_error_t err;
    json_t *o = json_loads(buf, 0, &err);
    if (!o)
        fail_msg("not JSON: %s in %s", err.text, buf);
    rt_summary s = full();
    s.cores = &t;
    json_t *j = format_parse(&s, NULL, NULL), *sc = json_object_get(j, "cores");
    assert_int_equal(json_object_size(o), json_object_size(sc)); /* "rows" for "durations_secs" */
    const char *k;
    json_t *v;
    json_object_foreach(sc, k, v) {
        json_t *w = json_object_get(o, k);
        if (strcmp(k, "durations_secs") == 0)
            continue;
        if (json_is_number(v) ? json_number_value(v) != json_number_value(w) : !json_equal(v, w))
            fail_msg("%s differs", k);
    }
    json_t *r = json_array_get(json_object_get(o, "rows"), 1);
    assert_int_equal(json_integer_value(json_object_get(r, "cores")), 2);
    assert_true(json_real_value(json_object_get(r, "core_hours")) == 11 / 3600.0);
    assert_true(json_real_value(json_object_get(r, "cost_usd")) == 11 / 3600.0 * 0.5);
    assert_true(json_is_true(json_object_get(r, "wait_bound")));
    json_decref(j);
    json_decref(o);
    /* no price: no money */
    rt_format_cores_json(&t, NAN, buf, sizeof buf);
    assert_non_null(strstr(buf, "\"cost_usd\":null}]}"));
    assert_int_equal(rt_format_cores_json(NULL, 1, buf, sizeof buf), 0);
    assert_true(rt_cores_core_hours(&t, 3) == 3 * 5.5 / 3600.0);
    assert_true(rt_cores_core_hours(&t, 1) == rows[0].core_hours);
    assert_true(isnan(rt_cores_core_hours(&t, 0)) && isnan(rt_cores_core_hours(NULL, 1)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(gpu_work_members), cmocka_unit_test(cgroup_members), cmocka_unit_test(no_process),
        cmocka_unit_test(units),
        cmocka_unit_test(unknown_units), cmocka_unit_test(truncation), cmocka_unit_test(huge_numbers),
        cmocka_unit_test(energy_members),
        cmocka_unit_test(recommendation_one_writer),
        cmocka_unit_test(cores_one_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
