/* test_prom_format.c - /metrics' body (rt_format_prometheus: families, nulls, escaping, the job's
 * labels, OpenMetrics, the snprintf contract) and the node_exporter textfile
 * (rt_prom_textfile_write: content, atomic replacement, failures that leave nothing). */
#include "unit.h"
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <math.h>
#include <sys/wait.h>

#include "export/labels.h"
#include "export/phase_label.h"
#include "export/prom_text.h"

#include "../tools/synthetic.h"

static void null_pressure(rt_pressure *p)
{
    p->some_avg10 = p->full_avg10 = p->some_pct = p->full_pct = NAN;
    p->some_total_usec = p->full_total_usec = RT_NULL_U64;
}

static const char *const tags[] = {"team-x=ml", "a.b=1", "dup=first", "dup=second", "noeq"};

static rt_job test_job(void)
{
    rt_job j = RT_JOB_INIT;
    j.job_name = "train";
    j.env = "prod";
    j.tags = tags;
    j.tag_count = RT_ARRAY_LEN(tags);
    return j;
}

static rt_host test_host(void)
{
    rt_host h;
    memset(&h, 0, sizeof h);
    h.hostname = "node-1";
    return h;
}

/* rt_format_prometheus into a heap buffer of exactly the size it asks for (freed by the next call). */
static const char *fmt(const rt_sample *s, const rt_job *job, const rt_host *host, const rt_cloud *cloud, int om)
{
    static char *held;
    free(held);
    size_t n = rt_format_prometheus(s, job, host, cloud, om, NULL, 0);
    held = malloc(n + 1);
    assert_non_null(held);
    size_t n2 = rt_format_prometheus(s, job, host, cloud, om, held, n + 1);
    assert_int_equal(n, n2);
    assert_int_equal(strlen(held), n);
    return held;
}

/* Whether text holds line (without its newline) as a whole line. */
static bool has_line(const char *text, const char *line)
{
    size_t l = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && p[l] == '\n')
            return true;
    return false;
}

#define assert_line(text, line)                                                                              \
    do {                                                                                                     \
        if (!has_line(text, line))                                                                           \
            fail_msg("missing line: %s\n--- in:\n%s", line, text);                                           \
    } while (0)

/* Checks the exposition's structure: every series follows its family's HELP and TYPE, which
 * appear once per family, every family has a series, and each series name is the family's
 * (with _total for a counter, _info for an info). Returns the number of families. */
static int check_structure(const char *text, int om)
{
    char fams[128][128];
    int nf = 0;
    char cur[128] = "", type[16] = "";
    bool had_series = true;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        size_t l = (size_t)(e - p);
        static char line[1 << 15];
        assert_true(l < sizeof line);
        memcpy(line, p, l);
        line[l] = '\0';
        p = e + 1;
        if (strncmp(line, "# HELP ", 7) == 0) {
            if (!had_series)
                fail_msg("family %s has no series", cur);
            char name[128];
            assert_int_equal(sscanf(line + 7, "%127s", name), 1);
            for (int i = 0; i < nf; i++)
                if (strcmp(fams[i], name) == 0)
                    fail_msg("family %s twice", name);
            assert_true(nf < 128);
            snprintf(fams[nf++], sizeof fams[0], "%s", name);
            snprintf(cur, sizeof cur, "%s", name);
            had_series = false;
            type[0] = '\0';
        } else if (strncmp(line, "# TYPE ", 7) == 0) {
            char name[128];
            assert_int_equal(sscanf(line + 7, "%127s %15s", name, type), 2);
            assert_string_equal(name, cur);
        } else if (strcmp(line, "# EOF") == 0) {
            assert_true(om);
            assert_string_equal(p, ""); /* the last line */
        } else {
            assert_true(type[0] != '\0');
            char want[160];
            if (om) /* the family without its suffix */
                snprintf(want, sizeof want, "%s%s", cur,
                         strcmp(type, "counter") == 0 ? "_total" : strcmp(type, "info") == 0 ? "_info" : "");
            else /* the series are named as the family; a counter's name ends in _total */
                snprintf(want, sizeof want, "%s", cur);
            size_t cl = strlen(cur);
            bool total = cl > 6 && strcmp(cur + cl - 6, "_total") == 0;
            if (!om && (strcmp(type, "counter") == 0) != total)
                fail_msg("family %s of type %s", cur, type);
            size_t wl = strlen(want);
            if (strncmp(line, want, wl) != 0 || (line[wl] != '{' && line[wl] != ' '))
                fail_msg("series %s outside its family %s", line, cur);
            assert_null(strstr(line, "NaN"));
            had_series = true;
        }
    }
    if (!had_series)
        fail_msg("family %s has no series", cur);
    return nf;
}

#define JL "job_name=\"train\",env=\"prod\",tag_team_x=\"ml\",tag_a_b=\"1\",tag_dup=\"second\",tag_noeq=\"\""

static void every_family(void **state)
{
    (void)state;
    make_full();
    rt_job job = test_job();
    rt_host host = test_host();
    rt_cloud cloud = {.vendor_id = "aws", .region_id = "eu-west-1", .zone_id = NULL, .instance_type = "m5.large"};
    const char *t = fmt(&full, &job, &host, &cloud, 0);
    int nf = check_structure(t, 0);
    assert_true(nf >= 50);
    assert_line(t, "# TYPE resource_tracker_info gauge");
    assert_line(t, "resource_tracker_info{" JL ",version=\"" RT_VERSION
                   "\",host=\"node-1\",cloud_vendor=\"aws\",cloud_region=\"eu-west-1\",instance_type=\"m5.large\"} 1");
    /* the machine */
    assert_line(t, "resource_tracker_sample_timestamp_seconds{" JL "} 1700000000.123");
    assert_line(t, "resource_tracker_sample_interval_seconds{" JL "} 0.2");
    assert_line(t, "resource_tracker_cpu_usage_cores{" JL "} 1.25");
    assert_line(t, "resource_tracker_cpu_cores{" JL "} 2");
    assert_line(t, "resource_tracker_processes_running{" JL "} 3");
    assert_line(t, "resource_tracker_memory_total_bytes{" JL "} 2147483648");
    assert_line(t, "resource_tracker_memory_bytes{" JL ",state=\"used\"} 1049100288");
    assert_line(t, "resource_tracker_memory_bytes{" JL ",state=\"available\"} 1073741824");
    assert_line(t, "resource_tracker_memory_bytes{" JL ",state=\"inactive\"} 41943040");
    assert_line(t, "resource_tracker_swap_total_bytes{" JL "} 104857600");
    assert_line(t, "resource_tracker_swap_used_bytes{" JL "} 1048576");
    assert_line(t, "# TYPE resource_tracker_disk_read_bytes_total counter");
    assert_line(t, "resource_tracker_disk_read_bytes_total{" JL ",device=\"sda\"} 18446744073709551000");
    assert_line(t, "resource_tracker_disk_written_bytes_total{" JL ",device=\"sda\"} 7");
    assert_line(t, "resource_tracker_disk_capacity_bytes{" JL ",device=\"sda\"} 1000000");
    assert_line(t, "resource_tracker_network_receive_bytes_total{" JL ",interface=\"eth0\"} 1000");
    assert_line(t, "resource_tracker_network_transmit_bytes_total{" JL ",interface=\"eth1\"} 4");
    assert_line(t, "resource_tracker_filesystem_size_bytes{" JL "} 500");
    assert_line(t, "resource_tracker_filesystem_used_bytes{" JL "} 300");
    assert_line(t, "resource_tracker_filesystem_free_bytes{" JL "} 200");
    assert_line(t, "resource_tracker_pressure_some_seconds_total{" JL ",resource=\"cpu\"} 1.234567");
    assert_line(t, "resource_tracker_pressure_full_seconds_total{" JL ",resource=\"io\"} 1");
    assert_line(t, "resource_tracker_pressure_full_seconds_total{" JL ",resource=\"memory\"} 0.000003");
    /* GPUs: the second has no uuid nor PCI address: its index */
    assert_line(t, "resource_tracker_gpu_info{" JL ",gpu=\"GPU-aaaa\",name=\"Fake A100\"} 1");
    assert_line(t, "resource_tracker_gpu_info{" JL ",gpu=\"1\"} 1");
    assert_line(t, "resource_tracker_gpu_utilization_ratio{" JL ",gpu=\"GPU-aaaa\"} 0.425");
    assert_line(t, "resource_tracker_gpu_memory_used_bytes{" JL ",gpu=\"GPU-aaaa\"} 1234");
    assert_line(t, "resource_tracker_gpu_memory_total_bytes{" JL ",gpu=\"GPU-aaaa\"} 80000");
    assert_line(t, "resource_tracker_gpu_temperature_celsius{" JL ",gpu=\"GPU-aaaa\"} 61");
    assert_line(t, "resource_tracker_gpu_power_watts{" JL ",gpu=\"GPU-aaaa\"} 250.125");
    /* its work (GPM): percents as ratios, the traffic in bytes per second; a figure it lacks left out */
    assert_line(t, "resource_tracker_gpu_sm_active_ratio{" JL ",gpu=\"GPU-aaaa\"} 0.159");
    assert_line(t, "resource_tracker_gpu_fp32_active_ratio{" JL ",gpu=\"GPU-aaaa\"} 0.023");
    assert_line(t, "resource_tracker_gpu_pcie_receive_bytes_per_second{" JL ",gpu=\"GPU-aaaa\"} 2097152.5");
    assert_null(strstr(t, "resource_tracker_gpu_tensor_dfma_active_ratio{"));
    assert_line(t, "resource_tracker_gpu_memory_reserved_bytes{" JL ",gpu=\"GPU-aaaa\"} 615");
    assert_line(t, "resource_tracker_process_gpu_sm_active_ratio{" JL "} 0.159");
    assert_line(t, "resource_tracker_process_gpus_busy{" JL "} 1");
    assert_null(strstr(t, "gpu=\"1\"} 0")); /* its null figures are left out */
    /* the tree */
    assert_line(t, "# TYPE resource_tracker_process_cpu_seconds_total counter");
    assert_line(t, "resource_tracker_process_cpu_seconds_total{" JL "} 12.345679");
    assert_line(t, "resource_tracker_process_cpu_usage_cores{" JL "} 0.987654");
    assert_line(t, "resource_tracker_process_rss_bytes{" JL "} 2097152");
    assert_line(t, "resource_tracker_process_pss_bytes{" JL "} 1572864");
    assert_line(t, "resource_tracker_process_swap_bytes{" JL "} 0");
    assert_line(t, "resource_tracker_process_rss_peak_bytes{" JL "} 3145728");
    assert_line(t, "resource_tracker_process_memory_peak_bytes{" JL "} 4194304");
    assert_line(t, "resource_tracker_process_threads{" JL "} 7");
    assert_line(t, "resource_tracker_process_children{" JL "} 2");
    assert_line(t, "resource_tracker_process_alive{" JL "} 1");
    assert_line(t, "resource_tracker_process_read_bytes_total{" JL "} 4096");
    assert_line(t, "resource_tracker_process_written_bytes_total{" JL "} 8192");
    assert_line(t, "resource_tracker_process_cancelled_written_bytes_total{" JL "} 0");
    assert_line(t, "resource_tracker_process_gpu_utilization_ratio{" JL "} 0.425");
    assert_line(t, "resource_tracker_process_gpu_memory_used_bytes{" JL "} 1234");
    assert_line(t, "resource_tracker_process_gpus_used{" JL "} 1");
    /* its parts: a series each, null figures left out */
    assert_line(t, "# TYPE resource_tracker_process_part_rss_bytes gauge");
    assert_line(t, "resource_tracker_process_part_rss_bytes{" JL ",part=\"main\"} 1572864");
    assert_line(t, "resource_tracker_process_part_rss_bytes{" JL ",part=\"descendants\"} 524288");
    assert_line(t, "resource_tracker_process_part_rss_bytes{" JL ",part=\"combined\"} 2097152");
    assert_line(t, "resource_tracker_process_part_private_rss_bytes{" JL ",part=\"main\"} 1048576");
    assert_line(t, "resource_tracker_process_part_private_rss_bytes{" JL ",part=\"combined\"} 1310720");
    assert_null(strstr(t, "resource_tracker_process_part_private_rss_bytes{" JL ",part=\"descendants\"}"));
    assert_null(strstr(t, "resource_tracker_process_part_shared_rss_bytes{" JL ",part=\"descendants\"}"));
    assert_line(t, "resource_tracker_process_part_shared_rss_bytes{" JL ",part=\"main\"} 524288");
    assert_line(t, "resource_tracker_process_part_cpu_usage_cores{" JL ",part=\"main\"} 0.25");
    assert_line(t, "resource_tracker_process_part_cpu_usage_cores{" JL ",part=\"descendants\"} 0.737654");
    assert_line(t, "resource_tracker_process_part_cpu_usage_cores{" JL ",part=\"combined\"} 0.987654");
    assert_line(t, "resource_tracker_process_part_threads{" JL ",part=\"main\"} 2");
    assert_line(t, "resource_tracker_process_part_threads{" JL ",part=\"combined\"} 7");
    assert_line(t, "resource_tracker_process_part_gpu_memory_used_bytes{" JL ",part=\"main\"} 1000");
    assert_line(t, "resource_tracker_process_part_gpu_memory_used_bytes{" JL ",part=\"descendants\"} 234");
    assert_null(strstr(t, "resource_tracker_process_part_gpu_memory_used_bytes{" JL ",part=\"combined\"}"));
    /* its group */
    assert_line(t, "resource_tracker_cgroup_info{" JL
                   ",cgroup=\"/resource-tracker-1-1\",version=\"v2\",own=\"1\",exclusive=\"1\"} 1");
    assert_line(t, "resource_tracker_cgroup_cpu_seconds_total{" JL "} 12.345679");
    assert_line(t, "resource_tracker_cgroup_memory_bytes{" JL "} 67108864");
    assert_line(t, "resource_tracker_cgroup_memory_peak_bytes{" JL "} 134217728");
    assert_line(t, "resource_tracker_cgroup_pids{" JL "} 3");
    assert_line(t, "resource_tracker_cgroup_pids_peak{" JL "} 9");
    assert_line(t, "resource_tracker_cgroup_read_bytes_total{" JL "} 11");
    assert_line(t, "resource_tracker_cgroup_written_bytes_total{" JL "} 22");
    assert_line(t, "resource_tracker_cgroup_cpu_quota_cores{" JL "} 1.5");
    assert_line(t, "resource_tracker_cgroup_cpu_period_seconds{" JL "} 0.1");
    assert_line(t, "resource_tracker_cgroup_memory_limit_bytes{" JL "} 1073741824");
    assert_line(t, "resource_tracker_cgroup_pids_limit{" JL "} 100");
    assert_line(t, "resource_tracker_cgroup_cpu_periods_total{" JL "} 50");
    assert_line(t, "resource_tracker_cgroup_cpu_throttled_periods_total{" JL "} 5");
    assert_line(t, "resource_tracker_cgroup_cpu_throttled_seconds_total{" JL "} 0.25");
    assert_line(t, "resource_tracker_cgroup_oom_kills_total{" JL "} 1");
    assert_line(t, "resource_tracker_cgroup_memory_max_events_total{" JL "} 2");
    assert_line(t, "resource_tracker_cgroup_pressure_some_seconds_total{" JL ",resource=\"io\"} 2");
    assert_null(strstr(t, "memory_high_bytes")); /* NaN: no limit, no line, no family */
    assert_null(strstr(t, "# EOF"));
    /* no per-process label */
    assert_null(strstr(t, "pid=\""));
}

/* The MIG instances' work (0.19): a family per figure, a series per instance labelled with its GPU
 * and its GPU instance id; a figure an instance lacks left out; no family without MIG. */
static void mig_families(void **state)
{
    (void)state;
    make_full();
    rt_gpu_mig m[2] = {{.gpu_instance_id = 1, .uuid = "MIG-aaaa-1", .work = RT_GPU_WORK_NULL},
                       {.gpu_instance_id = 2, .uuid = NULL, .work = RT_GPU_WORK_NULL}};
    m[0].work.sm_active_pct = 42;
    m[0].work.tensor_active_pct = 12.5;
    m[1].work.sm_active_pct = 0;
    m[1].work.pcie_rx_bytes_per_sec = 1024;
    const rt_gpu_mig *migs[2] = {&m[0], &m[1]};
    gpu0.mig = migs;
    gpu0.mig_count = 2;
    const char *t = fmt(&full, NULL, NULL, NULL, 0);
    check_structure(t, 0);
    assert_line(t, "# TYPE resource_tracker_gpu_mig_sm_active_ratio gauge");
    assert_line(t, "resource_tracker_gpu_mig_sm_active_ratio{gpu=\"GPU-aaaa\",gpu_instance=\"1\"} 0.42");
    assert_line(t, "resource_tracker_gpu_mig_sm_active_ratio{gpu=\"GPU-aaaa\",gpu_instance=\"2\"} 0");
    assert_line(t, "resource_tracker_gpu_mig_tensor_active_ratio{gpu=\"GPU-aaaa\",gpu_instance=\"1\"} 0.125");
    assert_line(t, "resource_tracker_gpu_mig_pcie_receive_bytes_per_second{gpu=\"GPU-aaaa\",gpu_instance=\"2\"} 1024");
    assert_null(strstr(t, "resource_tracker_gpu_mig_tensor_active_ratio{gpu=\"GPU-aaaa\",gpu_instance=\"2\"}"));
    assert_null(strstr(t, "resource_tracker_gpu_mig_dram_active_ratio{")); /* no instance has it */
    /* the families come after the GPUs' own, each one's series together */
    assert_true(strstr(t, "resource_tracker_gpu_mig_") > strstr(t, "resource_tracker_gpu_memory_reserved_bytes{"));
    gpu0.mig = NULL;
    gpu0.mig_count = 0;
    t = fmt(&full, NULL, NULL, NULL, 0);
    assert_null(strstr(t, "resource_tracker_gpu_mig_"));
}

static void nulls_left_out(void **state)
{
    (void)state;
    make_full();
    rt_memory m = mem;
    m.available_mib = NAN;
    m.swap_total_mib = NAN;
    m.swap_used_mib = NAN;
    rt_process p = proc;
    p.cpu_secs_total = NAN;
    p.gpu_utilization_pct = NAN;
    p.gpu_vram_used_bytes = RT_NULL_U64;
    p.gpu_count_used = RT_NULL_I64;
    p.gpu_work = (rt_gpu_work)RT_GPU_WORK_NULL;
    p.gpu_count_busy = RT_NULL_I64;
    p.gpu_vram_per_gpu_max_bytes = RT_NULL_U64;
    p.exits_counted = RT_NULL_I64;
    p.memory_peak_mib = NAN;
    p.cgroup = NULL;
    p.main = p.descendants = p.combined = NULL; /* a sample without the split */
    rt_psi ps;
    null_pressure(&ps.cpu);
    null_pressure(&ps.memory);
    null_pressure(&ps.io);
    rt_sample s = full;
    s.memory = &m;
    s.process = &p;
    s.pressure = &ps;
    s.gpu_count = 0;
    s.energy = NULL; /* energy off */
    s.disk_space_total_bytes = s.disk_space_used_bytes = s.disk_space_free_bytes = RT_NULL_U64;
    const char *t = fmt(&s, NULL, NULL, NULL, 0);
    check_structure(t, 0);
    assert_line(t, "resource_tracker_info{version=\"" RT_VERSION "\"} 1");
    assert_null(strstr(t, "state=\"available\""));
    assert_null(strstr(t, "resource_tracker_swap_"));
    assert_null(strstr(t, "process_cpu_seconds"));
    assert_null(strstr(t, "process_gpu"));
    assert_null(strstr(t, "gpus_used"));
    assert_null(strstr(t, "process_memory_peak"));
    assert_null(strstr(t, "pressure"));
    assert_null(strstr(t, "filesystem"));
    assert_null(strstr(t, "gpu"));
    assert_null(strstr(t, "cgroup"));
    assert_null(strstr(t, "process_part"));
    assert_null(strstr(t, "energy"));
    assert_null(strstr(t, "power_watts"));
    assert_line(t, "resource_tracker_process_rss_bytes 2097152"); /* no labels: no braces */
    assert_line(t, "resource_tracker_memory_bytes{state=\"used\"} 1049100288");

    /* no sample at all: the info metric only; the tracker's own group without a tree */
    t = fmt(NULL, NULL, NULL, NULL, 0);
    assert_string_equal(t, "# HELP resource_tracker_info The tracker's version and the host and cloud it runs on "
                           "(value 1).\n# TYPE resource_tracker_info gauge\nresource_tracker_info{version=\"" RT_VERSION
                           "\"} 1\n");
    s = full;
    s.process = NULL;
    s.cgroup = &cg;
    t = fmt(&s, NULL, NULL, NULL, 0);
    check_structure(t, 0);
    assert_null(strstr(t, "process_"));
    assert_line(t, "resource_tracker_cgroup_cpu_seconds_total 12.345679");
}

static void escaping(void **state)
{
    (void)state;
    make_full();
    rt_job job = RT_JOB_INIT;
    job.job_name = "a\"b\\c\nd";
    job.team = "caf\xc3\xa9 \xff\xfe x";
    const char *const bad_tags[] = {"k\xc3\xa9y=v\"1", "=empty key", "9lives=yes"};
    job.tags = bad_tags;
    job.tag_count = 3;
    rt_host host = test_host();
    host.hostname = "h\"1\n";
    const char *t = fmt(NULL, &job, &host, NULL, 0);
    assert_line(t, "resource_tracker_info{job_name=\"a\\\"b\\\\c\\nd\",team=\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd x\","
                   "tag_k__y=\"v\\\"1\",tag_=\"empty key\",tag_9lives=\"yes\",version=\"" RT_VERSION
                   "\",host=\"h\\\"1\\n\"} 1");
    /* the labels themselves (labels.c): metadata in order, then the tags sanitized */
    rt_labels l;
    rt_job j2 = test_job();
    assert_int_equal(rt_labels_from_job(&j2, &l), RT_OK);
    assert_int_equal(l.count, 6);
    const char *keys[] = {"job_name", "env", "tag_team_x", "tag_a_b", "tag_dup", "tag_noeq"};
    const char *vals[] = {"train", "prod", "ml", "1", "second", ""};
    for (size_t i = 0; i < 6; i++) {
        assert_string_equal(l.kv[i].key, keys[i]);
        assert_string_equal(l.kv[i].value, vals[i]);
    }
    rt_labels_free(&l);
    assert_int_equal(rt_labels_from_job(NULL, &l), RT_OK);
    assert_int_equal(l.count, 0);
}

/* rt_prom_u64 / rt_prom_i64: the integer whole (a negative one with its sign, the extremes too),
 * nothing for the null marks. */
static void integer_series(void **state)
{
    (void)state;
    char buf[512];
    rt_ob ob = {.buf = buf, .cap = sizeof buf};
    rt_prom_out f = {.o = &ob};
    rt_prom_family(&f, "x", RT_PROM_GAUGE, "h");
    rt_prom_i64(&f, NULL, 0, -42);
    rt_prom_i64(&f, NULL, 0, INT64_MIN + 1);
    rt_prom_i64(&f, NULL, 0, RT_NULL_I64);
    rt_prom_i64(&f, NULL, 0, 7);
    rt_prom_u64(&f, NULL, 0, UINT64_MAX - 1);
    rt_prom_u64(&f, NULL, 0, RT_NULL_U64);
    rt_prom_u64(&f, NULL, 0, 0);
    assert_true(ob.len < sizeof buf);
    buf[ob.len] = '\0';
    assert_string_equal(buf, "# HELP x h\n# TYPE x gauge\nx -42\nx -9223372036854775807\nx 7\n"
                             "x 18446744073709551614\nx 0\n");
}

/* The `phase` label (0.14): the innermost open phase on the tree's and its parts' series only,
 * none when no phase is open; the server's value capped at 64 names ("other" past them). */
/* The energy families (0.15): each domain's counter and power with its method, the machine's and
 * the tree's; a figure without its method leaves no line; the GPUs' throttled seconds. */
static void energy_families(void **state)
{
    (void)state;
    make_full();
    const char *t = fmt(&full, NULL, NULL, NULL, 0);
    check_structure(t, 0);
#define PKG "domain=\"package-0\",kind=\"package\",source=\"intel-rapl\",method=\"measured\""
#define DRAM "domain=\"dram-0\",kind=\"dram\",source=\"intel-rapl\",method=\"measured\""
#define GPU0 "domain=\"gpu-0\",kind=\"gpu\",source=\"nvml\",method=\"sampled\",gpu=\"GPU-aaaa\""
    assert_line(t, "# TYPE resource_tracker_energy_joules_total counter");
    assert_line(t, "resource_tracker_energy_joules_total{" PKG "} 1220.5");
    assert_line(t, "resource_tracker_energy_joules_total{" DRAM "} 170.25");
    assert_line(t, "resource_tracker_energy_joules_total{" GPU0 "} 2001");
    assert_line(t, "# TYPE resource_tracker_power_watts gauge");
    assert_line(t, "resource_tracker_power_watts{" PKG "} 152.5");
    assert_line(t, "resource_tracker_power_watts{" DRAM "} 21.25");
    assert_line(t, "resource_tracker_power_watts{" GPU0 "} 250.125");
    assert_line(t, "# TYPE resource_tracker_machine_energy_joules_total counter");
    assert_line(t, "resource_tracker_machine_energy_joules_total{method=\"sampled\"} 3391.75");
    assert_line(t, "resource_tracker_machine_power_watts{method=\"sampled\"} 423.875");
    assert_line(t, "resource_tracker_machine_idle_power_watts{method=\"sampled\"} 180.5");
    assert_line(t, "# TYPE resource_tracker_process_energy_joules_total counter");
    assert_line(t, "resource_tracker_process_energy_joules_total{method=\"sampled\"} 2557.3");
    assert_line(t, "resource_tracker_process_power_watts{method=\"sampled\"} 319.625");
    assert_line(t, "# TYPE resource_tracker_process_domain_energy_joules_total counter");
    assert_line(t, "resource_tracker_process_domain_energy_joules_total{" PKG "} 488.2");
    assert_line(t, "resource_tracker_process_domain_energy_joules_total{" DRAM "} 68.1");
    assert_line(t, "resource_tracker_process_domain_energy_joules_total{" GPU0 "} 2001");
    assert_line(t, "# TYPE resource_tracker_gpu_power_throttled_seconds_total counter");
    assert_line(t, "resource_tracker_gpu_power_throttled_seconds_total{gpu=\"GPU-aaaa\"} 12.5");
    assert_line(t, "resource_tracker_gpu_thermal_throttled_seconds_total{gpu=\"GPU-aaaa\"} 0.25");
    assert_null(strstr(t, "throttled_seconds_total{gpu=\"1\"}")); /* NaN: no line */

    /* no number without its method: a domain without one and a machine without one leave no line;
     * a domain not read this time (NaN) neither */
    dom_dram.method = NULL;
    dom_pkg.power_watts = NAN;
    energy.method = NULL;
    energy.process_method = NULL;
    t = fmt(&full, NULL, NULL, NULL, 0);
    check_structure(t, 0);
    assert_null(strstr(t, "dram-0"));
    assert_null(strstr(t, "resource_tracker_power_watts{" PKG "}"));
    assert_line(t, "resource_tracker_energy_joules_total{" PKG "} 1220.5");
    assert_null(strstr(t, "machine_"));
    assert_null(strstr(t, "resource_tracker_process_energy_joules"));
    assert_null(strstr(t, "resource_tracker_process_power_watts"));

    /* the tree's energy carries the phase label; the machine's never does */
    make_full();
    const char *open[] = {"train"};
    rt_phases ph = {.open = open, .open_count = 1};
    full.phases = &ph;
    t = fmt(&full, NULL, NULL, NULL, 0);
    assert_line(t, "resource_tracker_process_energy_joules_total{method=\"sampled\",phase=\"train\"} 2557.3");
    assert_line(t, "resource_tracker_process_domain_energy_joules_total{" PKG ",phase=\"train\"} 488.2");
    assert_line(t, "resource_tracker_energy_joules_total{" PKG "} 1220.5");
    assert_line(t, "resource_tracker_machine_energy_joules_total{method=\"sampled\"} 3391.75");
    full.phases = NULL;
    /* OpenMetrics: the same families, counters' TYPE without _total */
    t = fmt(&full, NULL, NULL, NULL, 1);
    check_structure(t, 1);
    assert_line(t, "# TYPE resource_tracker_energy_joules counter");
    assert_line(t, "resource_tracker_energy_joules_total{" PKG "} 1220.5");
#undef PKG
#undef DRAM
#undef GPU0
}

static void phase_label(void **state)
{
    (void)state;
    make_full();
    const char *open[] = {"train", "step \"x\""};
    rt_phases ph = {.open = open, .open_count = 2};
    full.phases = &ph;
    const char *t = fmt(&full, NULL, NULL, NULL, 0);
    assert_line(t, "resource_tracker_process_rss_bytes{phase=\"step \\\"x\\\"\"} 2097152");
    assert_line(t, "resource_tracker_process_part_rss_bytes{part=\"main\",phase=\"step \\\"x\\\"\"} 1572864");
    assert_line(t, "resource_tracker_memory_total_bytes 2147483648"); /* the machine's: never */
    assert_null(strstr(t, "phase=\"train\""));                     /* only the innermost */
    ph.open_count = 0; /* phases marked, none open: no label */
    t = fmt(&full, NULL, NULL, NULL, 0);
    assert_null(strstr(t, "phase="));
    assert_line(t, "resource_tracker_process_rss_bytes 2097152");
    full.phases = NULL;

    /* the server's values: the first 64 names, then "other"; the same name keeps its value */
    rt_phase_label pl = {0};
    char name[32];
    const char *one[1] = {name};
    rt_phases p1 = {.open = one, .open_count = 1};
    rt_sample s = full;
    s.phases = &p1;
    for (int i = 0; i < 70; i++) {
        snprintf(name, sizeof name, "n%d", i);
        const char *v = rt_phase_label_of(&pl, &s);
        if (i < RT_PHASE_LABEL_NAMES)
            assert_string_equal(v, name);
        else
            assert_string_equal(v, "other");
    }
    snprintf(name, sizeof name, "n3");
    assert_string_equal(rt_phase_label_of(&pl, &s), "n3");
    assert_int_equal(pl.n, RT_PHASE_LABEL_NAMES);
    s.phases = NULL;
    assert_null(rt_phase_label_of(&pl, &s));
    rt_phase_label_free(&pl);
}

static void openmetrics(void **state)
{
    (void)state;
    make_full();
    rt_job job = test_job();
    const char *t = fmt(&full, &job, NULL, NULL, 1);
    check_structure(t, 1);
    char *om = strdup(t);
    size_t n = strlen(t);
    assert_true(n > 6 && strcmp(t + n - 6, "# EOF\n") == 0);
    assert_line(t, "# TYPE resource_tracker info");
    assert_line(t, "# HELP resource_tracker The tracker's version and the host and cloud it runs on (value 1).");
    assert_line(t, "resource_tracker_info{" JL ",version=\"" RT_VERSION "\"} 1");
    assert_line(t, "# TYPE resource_tracker_process_cpu_seconds counter");
    assert_line(t, "resource_tracker_process_cpu_seconds_total{" JL "} 12.345679");
    assert_line(t, "# TYPE resource_tracker_cgroup info");
    assert_line(t, "# TYPE resource_tracker_gpu info");
    assert_line(t, "# TYPE resource_tracker_process_rss_bytes gauge");
    assert_null(strstr(t, "# TYPE resource_tracker_process_cpu_seconds_total"));
    /* the same series as the text format, in the same order */
    char *text = strdup(fmt(&full, &job, NULL, NULL, 0));
    const char *a = text, *b = om;
    while (*a && *b) {
        while (*a == '#')
            a = strchr(a, '\n') + 1;
        while (*b == '#' && strncmp(b, "# EOF", 5) != 0)
            b = strchr(b, '\n') + 1;
        if (!*a)
            break;
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        assert_int_equal(ea - a, eb - b);
        assert_memory_equal(a, b, (size_t)(ea - a));
        a = ea + 1;
        b = eb + 1;
    }
    assert_string_equal(a, "");
    assert_string_equal(b, "# EOF\n");
    free(text);
    free(om);
    t = fmt(NULL, NULL, NULL, NULL, 1);
    assert_string_equal(t, "# HELP resource_tracker The tracker's version and the host and cloud it runs on (value 1).\n"
                           "# TYPE resource_tracker info\nresource_tracker_info{version=\"" RT_VERSION "\"} 1\n# EOF\n");
}

/* The server's OpenMetrics body, made from the text body per request (rt_prom_openmetrics_of),
 * is byte for byte the formatter's own OpenMetrics: a full sample with host, cloud and tags, only
 * the info, and a sample whose families are all null but for a few. */
static void openmetrics_of_text(void **state)
{
    (void)state;
    make_full();
    rt_job job = test_job();
    rt_host host = test_host();
    rt_cloud cloud = {.vendor_id = "aws", .region_id = "eu-west-1", .instance_type = "m5.large", .discovery_secs = NAN};
    rt_sample empty = {.timestamp_secs = 1.7e9, .interval_secs = NAN};
    const rt_sample *samples[] = {&full, NULL, &empty};
    for (size_t k = 0; k < 3; k++) {
        char *text = strdup(fmt(samples[k], &job, &host, &cloud, 0));
        char *om = strdup(fmt(samples[k], &job, &host, &cloud, 1));
        size_t cap = strlen(text) + 64;
        char *conv = malloc(cap);
        assert_non_null(conv);
        rt_ob o = {.buf = conv, .cap = cap};
        rt_prom_openmetrics_of(text, strlen(text), &o);
        assert_true(o.len < cap);
        conv[o.len] = '\0';
        assert_string_equal(conv, om);
        free(conv);
        free(om);
        free(text);
    }
}

static void snprintf_contract(void **state)
{
    (void)state;
    make_full();
    rt_job job = test_job();
    char *whole = strdup(fmt(&full, &job, NULL, NULL, 0));
    size_t n = strlen(whole);
    char small[64];
    memset(small, 'x', sizeof small);
    assert_int_equal(rt_format_prometheus(&full, &job, NULL, NULL, 0, small, 10), n);
    assert_int_equal(small[9], '\0');
    assert_memory_equal(small, whole, 9);
    assert_int_equal(small[10], 'x'); /* nothing past cap */
    assert_int_equal(rt_format_prometheus(&full, &job, NULL, NULL, 0, small, 1), n);
    assert_int_equal(small[0], '\0');
    char *exact = malloc(n);
    assert_non_null(exact);
    assert_int_equal(rt_format_prometheus(&full, &job, NULL, NULL, 0, exact, n), n); /* one byte short */
    assert_int_equal(exact[n - 1], '\0');
    assert_memory_equal(exact, whole, n - 1);
    free(exact);
    free(whole);
}

/* ---- the textfile ------------------------------------------------------------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 18];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir other than . and .., sorted, each followed by a space, into out. */
static const char *listing(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        assert_true(n < 64);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(out + len, cap - len, "%s ", names[i]);
        assert_true(len < cap);
        free(names[i]);
    }
    return out;
}

static void textfile_content(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-textfile-XXXXXX";
    unit_tmpdir(dir);
    rt_job job = test_job();
    rt_job_status st = RT_JOB_STATUS_INIT;
    st.start_secs = 1700000000.5;
    st.end_secs = NAN;
    st.duration_secs = 2.25;
    st.cpu_secs = 1.234567;
    st.memory_peak_bytes = 1048576;
    st.exit_status = RT_NULL_I64;
    st.samples = 12;
    char path[4096];
    mode_t old = umask(022);
    assert_int_equal(rt_prom_textfile_write(dir, "my job/1", &job, &st, path, sizeof path), RT_OK);
    char want[4200];
    snprintf(want, sizeof want, "%s/resource_tracker_my_job_1.prom", dir);
    assert_string_equal(path, want);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);
    const char *t = slurp(path);
    assert_non_null(t);
    int nf = check_structure(t, 0);
    assert_int_equal(nf, 7); /* no end time nor exit status while it runs */
    assert_line(t, "# TYPE resource_tracker_job_start_time_seconds gauge");
    assert_line(t, "resource_tracker_job_start_time_seconds{" JL "} 1700000000.5");
    assert_line(t, "resource_tracker_job_duration_seconds{" JL "} 2.25");
    assert_line(t, "resource_tracker_job_cpu_seconds{" JL "} 1.234567");
    assert_line(t, "resource_tracker_job_memory_peak_bytes{" JL "} 1048576");
    assert_line(t, "resource_tracker_job_running{" JL "} 1");
    assert_line(t, "resource_tracker_job_samples{" JL "} 12");
    assert_non_null(strstr(t, "resource_tracker_job_last_update_time_seconds{" JL "} 1"));
    assert_null(strstr(t, "end_time"));
    assert_null(strstr(t, "exit_status"));
    assert_null(strstr(t, "energy")); /* INIT's NULL method: no energy line */

    /* ended: replaced, with its end and status; the umask is honoured */
    umask(077);
    st.end_secs = 1700000003;
    st.exit_status = 3;
    st.cpu_secs = NAN; /* no tree: no line */
    st.energy_joules = 2557.3; /* 0.15: the tree's energy with its method */
    st.energy_method = "sampled";
    assert_int_equal(rt_prom_textfile_write(dir, "my job/1", &job, &st, NULL, 0), RT_OK);
    assert_int_equal(stat(want, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);
    t = slurp(want);
    check_structure(t, 0);
    assert_line(t, "resource_tracker_job_end_time_seconds{" JL "} 1700000003");
    assert_line(t, "resource_tracker_job_exit_status{" JL "} 3");
    assert_line(t, "resource_tracker_job_running{" JL "} 0");
    assert_null(strstr(t, "cpu_seconds"));
    assert_line(t, "# TYPE resource_tracker_job_energy_joules gauge");
    assert_line(t, "resource_tracker_job_energy_joules{" JL ",method=\"sampled\"} 2557.3");
    /* a caller built against 0.14's struct: accepted, its (absent) energy not read */
    st.struct_size = offsetof(rt_job_status, samples) + sizeof st.samples;
    assert_int_equal(rt_prom_textfile_write(dir, "my job/1", &job, &st, NULL, 0), RT_OK);
    t = slurp(want);
    assert_null(strstr(t, "energy"));
    st.struct_size = offsetof(rt_job_status, samples); /* too small */
    assert_int_equal(rt_prom_textfile_write(dir, "my job/1", &job, &st, NULL, 0), RT_ERR_INVALID);
    st.struct_size = sizeof st;
    umask(old);
    char names[1024];
    assert_string_equal(listing(dir, names, sizeof names), "resource_tracker_my_job_1.prom ");

    /* NULL or empty name: "job"; long labels go through a buffer of their own */
    char longv[10000];
    memset(longv, 'v', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    rt_job lj = RT_JOB_INIT;
    lj.job_name = longv;
    assert_int_equal(rt_prom_textfile_write(dir, NULL, &lj, &st, path, sizeof path), RT_OK);
    snprintf(want, sizeof want, "%s/resource_tracker_job.prom", dir);
    assert_string_equal(path, want);
    t = slurp(path);
    check_structure(t, 0);
    assert_non_null(strstr(t, longv));
    assert_int_equal(rt_prom_textfile_write(dir, "", NULL, &st, NULL, 0), RT_OK);
    t = slurp(path);
    assert_line(t, "resource_tracker_job_exit_status 3");

    /* invalid: no dir, no status, old struct, a path that does not fit */
    assert_int_equal(rt_prom_textfile_write(NULL, "x", NULL, &st, NULL, 0), RT_ERR_INVALID);
    assert_int_equal(rt_prom_textfile_write(dir, "x", NULL, NULL, NULL, 0), RT_ERR_INVALID);
    rt_job_status old_st = st;
    old_st.struct_size = 8;
    assert_int_equal(rt_prom_textfile_write(dir, "x", NULL, &old_st, NULL, 0), RT_ERR_INVALID);
    assert_int_equal(rt_prom_textfile_write(dir, "x", NULL, &st, path, 10), RT_ERR_INVALID);
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(rt_prom_textfile_write(dir, longname, NULL, &st, NULL, 0), RT_ERR_INVALID);
    assert_string_equal(listing(dir, names, sizeof names), "resource_tracker_job.prom resource_tracker_my_job_1.prom ");
    unit_rmtree(dir);
}

static void textfile_atomic(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-textfile-XXXXXX";
    unit_tmpdir(dir);
    rt_job_status st = RT_JOB_STATUS_INIT;
    st.start_secs = 1;
    st.end_secs = NAN;
    st.duration_secs = 1;
    st.cpu_secs = 1;
    st.memory_peak_bytes = NAN;
    st.exit_status = RT_NULL_I64;
    char victim[512], target[512];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(target, sizeof target, "%s/resource_tracker_j.prom", dir);
    unit_put(dir, "victim", "untouched\n");
    assert_int_equal(symlink(victim, target), 0);
    /* a symlink at the target is replaced, never followed */
    assert_int_equal(rt_prom_textfile_write(dir, "j", NULL, &st, NULL, 0), RT_OK);
    struct stat sb;
    assert_int_equal(lstat(target, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_string_equal(slurp(victim), "untouched\n");
    char names[1024];
    assert_string_equal(listing(dir, names, sizeof names), "resource_tracker_j.prom victim ");
    assert_int_equal(unlink(victim), 0);

    /* a failure after the temporary file was written (a directory at the target): RT_ERR_IO,
     * errno set, nothing left behind */
    assert_int_equal(unlink(target), 0);
    assert_int_equal(mkdir(target, 0755), 0);
    unit_put(dir, "resource_tracker_j.prom/keep", "x");
    errno = 0;
    assert_int_equal(rt_prom_textfile_write(dir, "j", NULL, &st, NULL, 0), RT_ERR_IO);
    assert_true(errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST);
    assert_string_equal(listing(dir, names, sizeof names), "resource_tracker_j.prom ");
    unit_rmtree(target);

    /* a directory that does not exist */
    char missing[512];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    errno = 0;
    assert_int_equal(rt_prom_textfile_write(missing, "j", NULL, &st, NULL, 0), RT_ERR_IO);
    assert_int_equal(errno, ENOENT);

    /* a read-only directory: RT_ERR_IO (EACCES), nothing left. Root writes anywhere, so the
     * check runs in a child that gives up root first. */
    assert_int_equal(chmod(dir, 0555), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
            _exit(10);
        errno = 0;
        rt_error rc = rt_prom_textfile_write(dir, "j", NULL, &st, NULL, 0);
        _exit(rc == RT_ERR_IO && errno == EACCES ? 0 : 11);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    assert_string_equal(listing(dir, names, sizeof names), "");
    assert_int_equal(chmod(dir, 0700), 0);
    unit_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_family),      cmocka_unit_test(nulls_left_out), cmocka_unit_test(mig_families),
        cmocka_unit_test(escaping),          cmocka_unit_test(openmetrics), cmocka_unit_test(openmetrics_of_text),
        cmocka_unit_test(snprintf_contract), cmocka_unit_test(textfile_content),
        cmocka_unit_test(textfile_atomic),   cmocka_unit_test(phase_label), cmocka_unit_test(energy_families),
        cmocka_unit_test(integer_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
