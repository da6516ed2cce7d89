/* test_format.c - number formatting, JSON escaping, the CSV header and row, and the writer. */
#include "unit.h"
#include <math.h>
#include <signal.h>
#include <unistd.h>

#include "sink/sink.h"

static const char *fx(double v, int d)
{
    static char buf[64];
    rt_ob o = {.buf = buf, .cap = sizeof buf - 1};
    rt_ob_fixed(&o, v, d, "null");
    buf[o.len] = '\0';
    return buf;
}

static void numbers(void **state)
{
    (void)state;
    assert_string_equal(fx(0, 3), "0");
    assert_string_equal(fx(1.5, 3), "1.5");
    assert_string_equal(fx(1.23456, 3), "1.235");
    assert_string_equal(fx(-1.23456, 2), "-1.23");
    assert_string_equal(fx(-0.0001, 2), "0"); /* no "-0" */
    assert_string_equal(fx(99.999, 2), "100");
    assert_string_equal(fx(1795315369.2814, 3), "1795315369.281");
    assert_string_equal(fx(NAN, 2), "null");
    assert_string_equal(fx(INFINITY, 2), "null");
    assert_string_equal(fx(1e20, 2), "100000000000000000000.00");
    assert_string_equal(fx(7, 0), "7");
}

/* A struct of every kind rt_ob_members writes, and its table. */
typedef struct {
    double d;
    int64_t count;
    uint64_t u;
    int flag;
    const char *str;
} kinds;
static const rt_obm kinds_members[] = {
    RT_OBM(kinds, "d", d, 2), RT_OBM(kinds, "count", count, 0), RT_OBM(kinds, "u", u, 0),
    RT_OBM(kinds, "flag", flag, 0), RT_OBM(kinds, "str", str, 0),
};

static const char *members_of(const kinds *k)
{
    static char buf[256];
    rt_ob o = {.buf = buf, .cap = sizeof buf - 1};
    rt_ob_put(&o, "{", 1);
    rt_ob_members(&o, k, kinds_members, RT_OBM_N(kinds_members));
    rt_ob_close(&o, '}');
    buf[o.len] = '\0';
    return buf;
}

static void member_tables(void **state)
{
    (void)state;
    assert_int_equal(kinds_members[0].kind, RT_OBM_DOUBLE); /* kinds from the members' C types */
    assert_int_equal(kinds_members[1].kind, RT_OBM_COUNT);
    assert_int_equal(kinds_members[2].kind, RT_OBM_U64);
    assert_int_equal(kinds_members[3].kind, RT_OBM_FLAG);
    assert_int_equal(kinds_members[4].kind, RT_OBM_STR);
    kinds k = {1.005, 3, UINT64_MAX - 1, 2, "a\"b"};
    assert_string_equal(members_of(&k), "{\"d\":1,\"count\":3,\"u\":18446744073709551614,\"flag\":true,\"str\":\"a\\\"b\"}");
    kinds nulls = {NAN, -1, RT_NULL_U64, 0, NULL}; /* every kind's null; a count below 0 is none */
    assert_string_equal(members_of(&nulls), "{\"d\":null,\"count\":null,\"u\":null,\"flag\":false,\"str\":null}");
    kinds zero = {0};
    rt_ob_members(&(rt_ob){0}, &zero, kinds_members, 0); /* no members: nothing written */
}

static const char *js(const char *s)
{
    static char buf[256];
    rt_ob o = {.buf = buf, .cap = sizeof buf - 1};
    rt_ob_json_str(&o, s);
    buf[o.len] = '\0';
    return buf;
}

static void json_strings(void **state)
{
    (void)state;
    assert_string_equal(js(NULL), "null");
    assert_string_equal(js("plain"), "\"plain\"");
    assert_string_equal(js("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
    assert_string_equal(js("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
    assert_string_equal(js("bad\xff"), "\"bad\\ufffd\"");
    assert_string_equal(js("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate is not UTF-8 */
}

static rt_sample blank_sample(void)
{
    static rt_cpu cpu;
    static rt_memory memory;
    memset(&cpu, 0, sizeof cpu);
    memset(&memory, 0, sizeof memory);
    rt_sample s;
    memset(&s, 0, sizeof s);
    s.cpu = &cpu;
    s.memory = &memory;
    s.timestamp_secs = 1700000000.1234;
    s.interval_secs = 1.0;
    cpu.utilization_pct = 1.25;
    cpu.process_count = 1;     /* runnable */
    cpu.all_process_count = 3; /* every process: the CSV's processes column */
    memory.total_mib = 100;
    memory.available_mib = NAN;
    s.disk_space_total_bytes = s.disk_space_used_bytes = s.disk_space_free_bytes = RT_NULL_U64;
    return s;
}

static int commas_in(const char *p)
{
    int n = 0;
    for (; *p; p++)
        n += *p == ',';
    return n;
}

static void csv_header_and_row(void **state)
{
    (void)state;
    /* the 32 shared columns alone (0.18: the Rust tool's exact header) */
    const char *h = rt_csv_header();
    assert_int_equal(commas_in(h), 31);
    assert_true(strncmp(h, "timestamp,system_processes,", 27) == 0);
    assert_non_null(strstr(h, ",process_gpu_usage,process_gpu_vram_mib,process_gpu_utilized\n"));
    assert_null(strstr(h, "energy"));
    assert_ptr_equal(rt_format_header(RT_FORMAT_CSV), h);
    assert_null(rt_format_header(RT_FORMAT_JSON));
    assert_null(rt_format_header(RT_FORMAT_JSON_RS));
    /* with the energy columns asked for: the 32, then the 4 of energy */
    const char *he = rt_format_header(RT_FORMAT_CSV_ENERGY);
    assert_int_equal(commas_in(he), 35);
    assert_true(strncmp(he, h, strlen(h) - 1) == 0);
    assert_non_null(strstr(he, ",process_gpu_utilized,system_energy_joules,system_energy_method,"
                               "process_energy_joules,process_energy_method\n"));
    rt_sample s = blank_sample();
    char buf[512];
    size_t n = rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    assert_int_equal(commas_in(buf), 31);
    assert_true(strncmp(buf, "1700000000.123,3,0,0,1.25,", 26) == 0);
    assert_non_null(strstr(buf, ",,,,,,,,,,,\n")); /* empty process columns */
    n = rt_format_sample(RT_FORMAT_CSV_ENERGY, &s, NULL, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    assert_int_equal(commas_in(buf), 35);
    assert_non_null(strstr(buf, ",,,,,,,,,,,,,,,\n")); /* empty process and energy columns */
    /* energy: each figure with its method; a figure without a method is no figure */
    rt_energy e = {.energy_joules = 123.4567891, .method = "measured", .process_energy_joules = 40.5,
                   .process_method = "estimated"};
    s.energy = &e;
    rt_format_sample(RT_FORMAT_CSV_ENERGY, &s, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",,,,,,,,,,,,123.456789,measured,40.5,estimated\n"));
    rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf); /* not asked: not written */
    assert_int_equal(commas_in(buf), 31);
    assert_null(strstr(buf, "measured"));
    e.process_method = NULL;
    rt_format_sample(RT_FORMAT_CSV_ENERGY, &s, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",123.456789,measured,,\n"));
    s.energy = NULL;
    /* the timestamp always has 3 decimals (docs/contracts.md §3), trailing zeros included */
    static const struct {
        double ts;
        const char *text;
    } stamps[] = {{1700000000.5, "1700000000.500,"}, {1700000000.0, "1700000000.000,"},
                  {1700000000.81, "1700000000.810,"}, {1700000000.9996, "1700000001.000,"}};
    for (size_t i = 0; i < sizeof stamps / sizeof stamps[0]; i++) {
        s.timestamp_secs = stamps[i].ts;
        rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
        assert_true(strncmp(buf, stamps[i].text, strlen(stamps[i].text)) == 0);
    }
    /* disk space in 10^9 bytes, used = total - available (the space kept for root counts as
     * used), as the Python tracker and the Rust tool write them */
    s.timestamp_secs = 1700000000.0;
    s.disk_space_total_bytes = 270550000000ull;
    s.disk_space_used_bytes = 20000000000ull; /* used blocks: not what the column shows */
    s.disk_space_free_bytes = 83000000000ull;
    rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",270.55,187.55,83,"));
    s.disk_space_free_bytes = RT_NULL_U64; /* no free figure: used unknown too */
    rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",270.55,,,"));
    /* the I/O sums count the physical disks only: a volume's bytes are its disk's already */
    s.disk_space_free_bytes = 83000000000ull;
    rt_disk sda = {.device = "sda", .read_bytes = 4096, .write_bytes = 8192};
    rt_disk dm0 = {.device = "dm-0", .read_bytes = 4096, .write_bytes = 8192, .is_virtual = 1};
    rt_disk zram = {.device = "zram0", .read_bytes = 100, .write_bytes = 100, .is_virtual = 1};
    const rt_disk *disks[] = {&dm0, &sda, &zram};
    s.disk = disks;
    s.disk_count = 3;
    rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",4096,8192,270.55,187.55,83,"));
    s.disk = NULL;
    s.disk_count = 0;
    s.cpu = &(rt_cpu){.all_process_count = RT_NULL_I64, .process_count = 5};
    rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
    assert_true(strncmp(buf, "1700000000.000,,", 16) == 0); /* never the runnable count instead */
}

static void json_row_and_truncation(void **state)
{
    (void)state;
    rt_sample s = blank_sample();
    rt_job job = RT_JOB_INIT;
    job.job_name = "train \"v2\"";
    char buf[2048];
    size_t n = rt_format_sample(RT_FORMAT_JSON, &s, &job, buf, sizeof buf);
    assert_true(n < sizeof buf);
    const char *head = "{\"resource-tracker-version\":\"" RT_VERSION "\",\"timestamp_secs\":1700000000.123,"
                       "\"interval_secs\":1,\"job_name\":\"train \\\"v2\\\"\",";
    assert_memory_equal(buf, head, strlen(head));
    assert_non_null(strstr(buf, "\"available_mib\":null"));
    assert_non_null(strstr(buf, "\"gpu\":[],\"process\":null,\"pressure\":null,\"cgroup\":null}\n"));
    char small[16];
    size_t m = rt_format_sample(RT_FORMAT_JSON, &s, &job, small, sizeof small);
    assert_int_equal(m, n); /* the size it needs, like snprintf */
    assert_int_equal(strlen(small), sizeof small - 1);
}

/* A pressure reading with every figure given (or, when none, all null). */
static rt_pressure pressure_of(double avg, uint64_t total)
{
    rt_pressure p = {avg, NAN, avg * 2, NAN, total, RT_NULL_U64};
    return p;
}

/* The 0.19 members of a tree whose GPUs give no work figures, as the JSON line writes them. */
#define GPU_WORK_NULLS "\"gpu_sm_active_pct\":null,\"gpu_sm_occupancy_pct\":null,\"gpu_tensor_active_pct\":null,\"gpu_tensor_hmma_active_pct\":null,\"gpu_tensor_imma_active_pct\":null,\"gpu_tensor_dfma_active_pct\":null,\"gpu_dram_active_pct\":null,\"gpu_fp64_active_pct\":null,\"gpu_fp32_active_pct\":null,\"gpu_fp16_active_pct\":null,\"gpu_pcie_tx_bytes_per_sec\":null,\"gpu_pcie_rx_bytes_per_sec\":null,\"gpu_nvlink_tx_bytes_per_sec\":null,\"gpu_nvlink_rx_bytes_per_sec\":null,\"gpu_work_scope\":null,\"gpu_count_busy\":null,\"gpu_vram_per_gpu_max_bytes\":null,\"cpu_wait_cores\":0.25,\"exits_counted\":null,\"unwaited_parents\":0,"

static void json_cgroup_and_pressure(void **state)
{
    (void)state;
    rt_sample s = blank_sample();
    rt_process p = {.pid = 42, .alive = 1, .gpu_utilization_pct = NAN, .gpu_vram_used_bytes = RT_NULL_U64,
                    .gpu_count_used = RT_NULL_I64, .memory_peak_mib = 1536.25, .rss_hwm_mib = 700.125,
                    .gpu_vram_peak_bytes = RT_NULL_U64, .vms_mib = 2048.1234,
                    .walk_age_secs = 1.25, .walk_period_secs = 2.5, .rss_hwm_tree_mib = 900.5,
                    .gpu_work = RT_GPU_WORK_NULL, .gpu_count_busy = RT_NULL_I64,
                    .gpu_vram_per_gpu_max_bytes = RT_NULL_U64, .cpu_wait_cores = 0.25,
                    .exits_counted = RT_NULL_I64};
    rt_cgroup g = {.path = "/resource-tracker-812-1", .version = "hybrid", .own = 1, .exclusive = 1,
                   .cpu_secs_total = 12.3456, .memory_mib = 1024.5, .memory_peak_mib = 1536.25, .pids = 5,
                   .pids_peak = 9, .read_bytes_total = 4096, .write_bytes_total = RT_NULL_U64,
                   .cpu_quota_cores = 1.5, .cpu_period_secs = 0.1, .memory_limit_mib = NAN, .memory_high_mib = NAN,
                   .pids_limit = RT_NULL_I64, .cpu_periods = 100, .cpu_throttled_periods = 7,
                   .cpu_throttled_secs = 0.25, .cpu_throttled_pct = 12.345, .oom_kills = 1, .memory_max_events = 3,
                   .memory_reclaimable_mib = 512.25, .memory_unreclaimable_peak_mib = NAN,
                   .memory_anon_mib = 300.5, .memory_file_mib = 600.25, .memory_shmem_mib = NAN,
                   .memory_unreclaimable_unsure_mib = NAN, .memory_refault_mib = 600.5};
    g.pressure.cpu = pressure_of(1.5, 100);
    g.pressure.memory = pressure_of(NAN, RT_NULL_U64); /* no file: null */
    g.pressure.io = pressure_of(0, 0);
    p.cgroup = &g;
    s.process = &p;
    rt_psi machine = {pressure_of(3.25, 7), pressure_of(0, 8), pressure_of(0.5, 9)};
    s.pressure = &machine;
    char buf[4096];
    size_t n = rt_format_sample(RT_FORMAT_JSON, &s, NULL, buf, sizeof buf);
    assert_true(n < sizeof buf);
    const char *want =
        "\"gpu_count_used\":null,\"memory_peak_mib\":1536.25,\"rss_hwm_mib\":700.125,\"gpu_vram_peak_bytes\":null,\"unread_count\":0,"
        "\"vms_mib\":2048.123,\"walk_age_secs\":1.25,\"walk_period_secs\":2.5,\"rss_hwm_tree_mib\":900.5," GPU_WORK_NULLS "\"cgroup\":{\"path\":\"/resource-tracker-812-1\",\"version\":\"hybrid\",\"own\":true,\"exclusive\":true,"
        "\"cpu_secs_total\":12.346,\"memory_mib\":1024.5,\"memory_peak_mib\":1536.25,\"pids\":5,\"pids_peak\":9,"
        "\"read_bytes_total\":4096,\"write_bytes_total\":null,\"cpu_quota_cores\":1.5,\"cpu_period_secs\":0.1,"
        "\"memory_limit_mib\":null,\"memory_high_mib\":null,\"pids_limit\":null,\"cpu_periods\":100,"
        "\"cpu_throttled_periods\":7,\"cpu_throttled_secs\":0.25,\"cpu_throttled_pct\":12.35,\"oom_kills\":1,"
        "\"memory_max_events\":3,\"memory_reclaimable_mib\":512.25,\"memory_unreclaimable_peak_mib\":null,"
        "\"memory_anon_mib\":300.5,\"memory_file_mib\":600.25,\"memory_shmem_mib\":null,"
        "\"memory_unreclaimable_unsure_mib\":null,\"memory_refault_mib\":600.5,"
        "\"pressure\":{\"cpu\":{\"some_avg10\":1.5,\"full_avg10\":null,\"some_pct\":3,\"full_pct\":null,\"some_total_usec\":100,"
        "\"full_total_usec\":null},\"memory\":null,"
        "\"io\":{\"some_avg10\":0,\"full_avg10\":null,\"some_pct\":0,\"full_pct\":null,\"some_total_usec\":0,"
        "\"full_total_usec\":null}}},\"main\":null,\"descendants\":null,\"combined\":null},"
        "\"pressure\":{\"cpu\":{\"some_avg10\":3.25,\"full_avg10\":null,\"some_pct\":6.5,\"full_pct\":null,"
        "\"some_total_usec\":7,\"full_total_usec\":null},\"memory\":{\"some_avg10\":0,";
    assert_non_null(strstr(buf, want));
    assert_non_null(strstr(buf, "\"some_total_usec\":9,\"full_total_usec\":null}},\"cgroup\":null}\n"));
    /* a tree without a group */
    p.cgroup = NULL;
    p.memory_peak_mib = NAN;
    s.pressure = NULL;
    rt_format_sample(RT_FORMAT_JSON, &s, NULL, buf, sizeof buf);
    assert_non_null(
        strstr(buf, "\"gpu_count_used\":null,\"memory_peak_mib\":null,\"rss_hwm_mib\":700.125,"
                    "\"gpu_vram_peak_bytes\":null,\"unread_count\":0,\"vms_mib\":2048.123,\"walk_age_secs\":1.25,\"walk_period_secs\":2.5,"
                    "\"rss_hwm_tree_mib\":900.5," GPU_WORK_NULLS "\"cgroup\":null,\"main\":null,"
                    "\"descendants\":null,\"combined\":null},\"pressure\":null,\"cgroup\":null}\n"));
    /* the whole machine: the tracker's own group as the top-level "cgroup", after "pressure" */
    s.process = NULL;
    g.own = g.exclusive = 0;
    g.path = "/docker/abc";
    g.version = "v2";
    s.cgroup = &g;
    rt_format_sample(RT_FORMAT_JSON, &s, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "\"process\":null,\"pressure\":null,\"cgroup\":{\"path\":\"/docker/abc\","
                                "\"version\":\"v2\",\"own\":false,\"exclusive\":false,\"cpu_secs_total\":12.346,"));
    assert_non_null(strstr(buf, "\"oom_kills\":1,\"memory_max_events\":3,\"memory_reclaimable_mib\":512.25,"
                                "\"memory_unreclaimable_peak_mib\":null,\"memory_anon_mib\":300.5,"
                                "\"memory_file_mib\":600.25,\"memory_shmem_mib\":null,"
                                "\"memory_unreclaimable_unsure_mib\":null,\"memory_refault_mib\":600.5,"
                                "\"pressure\":{\"cpu\":{\"some_avg10\":1.5,"));
    assert_non_null(strstr(buf, "\"full_total_usec\":null}}}}\n"));
    /* CSV is unchanged: the 32 columns (and the 4 of energy where asked) */
    rt_format_sample(RT_FORMAT_CSV, &s, NULL, buf, sizeof buf);
    assert_int_equal(commas_in(buf), 31);
    rt_format_sample(RT_FORMAT_CSV_ENERGY, &s, NULL, buf, sizeof buf);
    assert_int_equal(commas_in(buf), 35);
}

static void writer_header_once(void **state)
{
    (void)state;
    const rt_format formats[2] = {RT_FORMAT_CSV, RT_FORMAT_CSV_ENERGY};
    for (size_t f = 0; f < 2; f++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        rt_writer *w;
        assert_int_equal(rt_writer_new(formats[f], fds[1], NULL, &w), RT_OK);
        rt_sample s = blank_sample();
        assert_int_equal(rt_writer_write(w, &s), RT_OK);
        assert_int_equal(rt_writer_write(w, &s), RT_OK);
        rt_writer_free(w);
        close(fds[1]);
        char buf[4096];
        ssize_t n = read(fds[0], buf, sizeof buf - 1);
        close(fds[0]);
        assert_true(n > 0);
        buf[n] = '\0';
        int headers = 0, lines = 0;
        for (char *p = buf; (p = strstr(p, "timestamp,")) != NULL; p++)
            headers++;
        for (char *p = buf; *p; p++)
            lines += *p == '\n';
        assert_int_equal(headers, 1);
        assert_int_equal(lines, 3);
        const char *h = rt_format_header(formats[f]);
        assert_true(strncmp(buf, h, strlen(h)) == 0); /* the format's own header */
        char *row2 = strchr(strchr(buf, '\n') + 1, '\n') + 1; /* each row as many cells as it */
        *strchr(row2, '\n') = '\0';
        assert_int_equal(commas_in(row2), commas_in(h));
    }
    rt_writer *w;
    assert_int_equal(rt_writer_new(RT_FORMAT_JSON, -1, NULL, &w), RT_ERR_INVALID);
    assert_int_equal(rt_writer_new((rt_format)4, 1, NULL, &w), RT_ERR_INVALID);
}

static void writer_reports_closed_pipe(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    rt_writer *w;
    assert_int_equal(rt_writer_new(RT_FORMAT_JSON, fds[1], NULL, &w), RT_OK);
    rt_sample s = blank_sample();
    assert_int_equal(rt_writer_write(w, &s), RT_ERR_IO);
    rt_writer_free(w);
    close(fds[1]);
    assert_string_equal(rt_strerror(RT_ERR_IO), "input/output error");
    assert_string_equal(rt_strerror((rt_error)99), "unknown error");
    assert_string_equal(rt_version(), RT_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers),          cmocka_unit_test(json_strings),
        cmocka_unit_test(csv_header_and_row), cmocka_unit_test(json_row_and_truncation),
        cmocka_unit_test(writer_header_once), cmocka_unit_test(writer_reports_closed_pipe),
        cmocka_unit_test(json_cgroup_and_pressure), cmocka_unit_test(member_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
