/* test_otlp.c - the OTLP/HTTP exporter: the JSON of synthetic samples parsed back with jansson and
 * checked field by field (names, units, types, int64s as strings, cumulative start times, nulls
 * left out), Retry-After parsing, and the live exporter against a fake network (otlp_int.h):
 * 503 with Retry-After then 200, a refused push, a receiver that hangs or echoes the headers'
 * values, a full queue, requests split under a size limit, a cloud discovery that does not
 * end, the last failure (rt_otlp_errmsg); and the cost of rt_otlp_add. The exporter runs on a test clock (unit_clock.h) that the
 * test steps: no test sleeps to let time pass, and the counts asserted after a step are the ones
 * the clock makes certain (the exporter's thread is blocked on it again when they are read). */
#include "unit.h"
#include "unit_clock.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <strings.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "core/gzip.h"
#include "export/otlp_int.h"

#include "../tools/synthetic.h"

#define MIB 1048576.0
#define WAIT_SECS 30.0 /* the most a test waits for the exporter's thread to do something */
#define T0 1000.0      /* the test clock's start */

/* A header value the fake receiver echoes back in its replies (longer than a message's quote). */
#define ECHOED "k3y-0123456789abcdefghijklmnopqrstuvwxyz"

/* ---- a synthetic sample ------------------------------------------------------------------------ */

typedef struct synth {
    rt_cpu cpu;
    rt_memory mem;
    rt_disk disk;
    const rt_disk *disks[1];
    rt_net_iface net;
    const rt_net_iface *nets[1];
    rt_gpu gpu;
    const rt_gpu *gpus[1];
    rt_cgroup cg;
    rt_process proc;
    rt_process_part parts[3];
    rt_sample s;
} synth;

/* Sample k (0, 1, ...): timestamps 1700000000.5 + k, 2 cores, a disk, an interface, a GPU and a
 * tree whose swap and GPU figures are null. */
static void synth_make(synth *x, int k, bool with_proc)
{
    memset(x, 0, sizeof *x);
    x->cpu = (rt_cpu){.utilization_pct = 1.5, .core_count = 2, .utime_secs = 1.0 + k, .stime_secs = 0.25,
                      .process_count = 3, .process_cores_used = 0.5, .process_child_count = 1};
    x->mem = (rt_memory){.total_mib = 1024, .free_mib = 256, .available_mib = 512, .used_mib = 512,
                         .buffers_mib = 16, .cached_mib = 240, .swap_total_mib = NAN, .swap_used_mib = NAN};
    x->disk = (rt_disk){.device = "sda", .read_bytes_total = 10000 + 100 * (uint64_t)k,
                        .write_bytes_total = 20000 + 200 * (uint64_t)k, .read_bytes = 100, .write_bytes = 200};
    x->disks[0] = &x->disk;
    x->net = (rt_net_iface){.interface = "eth0", .rx_bytes_total = 5000 + 50 * (uint64_t)k,
                            .tx_bytes_total = 7000 + 70 * (uint64_t)k, .rx_bytes = 50, .tx_bytes = 70};
    x->nets[0] = &x->net;
    x->gpu = (rt_gpu){.uuid = "GPU-1234", .utilization_pct = 40, .vram_total_bytes = 8ull << 30,
                      .vram_used_bytes = 1ull << 30, .core_count = RT_NULL_I64, .work = RT_GPU_WORK_NULL};
    x->gpus[0] = &x->gpu;
    x->cg = (rt_cgroup){.cpu_secs_total = 2.5 + k, .memory_mib = 100, .memory_peak_mib = 120,
                        .memory_limit_mib = NAN, .cpu_quota_cores = NAN, .cpu_throttled_secs = 0,
                        .pids = 4, .oom_kills = 0, .pids_limit = RT_NULL_I64};
    x->proc = (rt_process){.pid = 4242, .alive = 1, .child_count = 1, .thread_count = 5, .cores_used = 0.5,
                           .cpu_secs_total = 1.25 + k, .pss_mib = 10, .rss_mib = 12, .swap_mib = NAN,
                           .read_bytes_total = 4096, .write_bytes_total = 8192, .gpu_utilization_pct = NAN,
                           .gpu_vram_used_bytes = RT_NULL_U64, .gpu_count_used = RT_NULL_I64,
                           .rss_peak_mib = 13, .memory_peak_mib = NAN, .cgroup = &x->cg,
                           .gpu_work = RT_GPU_WORK_NULL};
    /* its parts: main 8 MiB (6 private, 2 shared) and 0.125 cores, descendants 4 MiB with no
     * rollup; no GPU data */
    x->parts[0] = (rt_process_part){.total_rss_mib = 8, .private_rss_mib = 6, .shared_rss_mib = 2, .cores_used = 0.125,
                                    .thread_count = 4, .gpu_vram_used_bytes = RT_NULL_U64};
    x->parts[1] = (rt_process_part){.total_rss_mib = 4, .private_rss_mib = NAN, .shared_rss_mib = NAN,
                                    .cores_used = 0.375, .thread_count = 1, .gpu_vram_used_bytes = RT_NULL_U64};
    x->parts[2] = (rt_process_part){.total_rss_mib = 12, .private_rss_mib = 10, .shared_rss_mib = 2,
                                    .cores_used = 0.5, .thread_count = 5, .gpu_vram_used_bytes = RT_NULL_U64};
    x->proc.main = &x->parts[0];
    x->proc.descendants = &x->parts[1];
    x->proc.combined = &x->parts[2];
    x->s = (rt_sample){.timestamp_secs = 1700000000.5 + k, .interval_secs = 1.0, .cpu = &x->cpu,
                       .memory = &x->mem, .network = x->nets, .network_count = 1, .disk = x->disks,
                       .disk_count = 1, .gpu = x->gpus, .gpu_count = 1, .disk_space_total_bytes = 3000,
                       .disk_space_used_bytes = 1000, .disk_space_free_bytes = 2000,
                       .process = with_proc ? &x->proc : NULL};
}

/* ---- reading the JSON back --------------------------------------------------------------------- */

static json_t *metric_named(json_t *req, const char *name)
{
    json_t *ms = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(req,
                 "resourceMetrics"), 0), "scopeMetrics"), 0), "metrics");
    assert_true(json_is_array(ms));
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m) if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0) return m;
    return NULL;
}

/* The data points of a metric, checking its shape: gauge or sum (cumulative; monotonic as told). */
static json_t *points_of(json_t *m, const char *unit, int sum, int monotonic)
{
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "unit")), unit);
    json_t *body = json_object_get(m, sum ? "sum" : "gauge");
    assert_non_null(body);
    assert_null(json_object_get(m, sum ? "gauge" : "sum"));
    if (sum) {
        assert_int_equal(json_integer_value(json_object_get(body, "aggregationTemporality")), 2);
        assert_true(json_is_boolean(json_object_get(body, "isMonotonic")));
        assert_int_equal(json_is_true(json_object_get(body, "isMonotonic")), monotonic);
    }
    json_t *dp = json_object_get(body, "dataPoints");
    assert_true(json_is_array(dp) && json_array_size(dp) > 0);
    return dp;
}

/* A string of decimal digits as a number (fails on anything else). */
static unsigned long long digits(json_t *v)
{
    assert_true(json_is_string(v));
    const char *s = json_string_value(v);
    assert_true(*s);
    for (const char *p = s; *p; p++)
        assert_true(*p >= '0' && *p <= '9');
    return strtoull(s, NULL, 10);
}

/* The value of data point p: asDouble, or asInt (a string) as a double; exactly one of them. */
static double value_of(json_t *p)
{
    json_t *d = json_object_get(p, "asDouble"), *i = json_object_get(p, "asInt");
    assert_true((d != NULL) != (i != NULL));
    if (d) {
        assert_true(json_is_number(d));
        return json_number_value(d);
    }
    return (double)digits(i);
}

/* The attribute key of point p (a stringValue), or NULL. */
static const char *attr_of(json_t *p, const char *key)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(p, "attributes"), i, a) if (strcmp(json_string_value(json_object_get(a, "key")),
                                                                          key) == 0) return json_string_value(
        json_object_get(json_object_get(a, "value"), "stringValue"));
    return NULL;
}

/* The point of metric name at row k (timeUnixNano of sample k) with attribute key=val (key NULL:
 * any), or NULL. */
static json_t *point_at(json_t *dp, int k, const char *key, const char *val)
{
    unsigned long long want = 1700000000500000000ull + 1000000000ull * (unsigned long long)k;
    size_t i;
    json_t *p;
    json_array_foreach(dp, i, p)
    {
        if (digits(json_object_get(p, "timeUnixNano")) != want)
            continue;
        const char *v = key ? attr_of(p, key) : NULL;
        if (!key || (v && strcmp(v, val) == 0))
            return p;
    }
    return NULL;
}

static json_t *format_rows(synth *xs, int n, rt_otlp_state *st, const rt_otlp_attr *res, size_t nres)
{
    rt_otlp_row *rows[8];
    for (int i = 0; i < n; i++)
        assert_non_null(rows[i] = rt_otlp_row_new(&xs[i].s));
    assert_int_equal(rt_otlp_accumulate(st, rows, (size_t)n), RT_OK);
    size_t need = rt_otlp_format(res, nres, rows, (size_t)n, NULL, 0);
    char *buf = malloc(need + 1);
    assert_int_equal(rt_otlp_format(res, nres, rows, (size_t)n, buf, need + 1), need);
    assert_int_equal(strlen(buf), need);
    json_error_t je;
    json_t *j = json_loads(buf, 0, &je);
    if (!j)
        fail_msg("not JSON: %s at %d: %.300s", je.text, je.position, buf);
    free(buf);
    for (int i = 0; i < n; i++)
        free(rows[i]);
    return j;
}

static void test_json_fields(void **state)
{
    (void)state;
    synth xs[2];
    synth_make(&xs[0], 0, true);
    synth_make(&xs[1], 1, true);
    static const char *const argv[] = {"python", "train.py", NULL};
    rt_otlp_attr res[] = {{.key = "service.name", .type = RT_OTLP_STR, .str = "svc \"q\""},
                          {.key = "process.pid", .type = RT_OTLP_INT, .i = 4242},
                          {.key = "process.command_args", .type = RT_OTLP_STRS, .strs = argv}};
    rt_otlp_state st = {0};
    json_t *j = format_rows(xs, 2, &st, res, 3);
    /* the resource and the scope */
    json_t *rm = json_array_get(json_object_get(j, "resourceMetrics"), 0);
    json_t *attrs = json_object_get(json_object_get(rm, "resource"), "attributes");
    assert_int_equal(json_array_size(attrs), 3);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(attrs, 0), "value"),
                                                          "stringValue")), "svc \"q\"");
    assert_int_equal(digits(json_object_get(json_object_get(json_array_get(attrs, 1), "value"), "intValue")), 4242);
    json_t *arr = json_object_get(json_object_get(json_object_get(json_array_get(attrs, 2), "value"), "arrayValue"),
                                  "values");
    assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 1), "stringValue")), "train.py");
    json_t *scope = json_object_get(json_array_get(json_object_get(rm, "scopeMetrics"), 0), "scope");
    assert_string_equal(json_string_value(json_object_get(scope, "name")), "resource-tracker");
    assert_string_equal(json_string_value(json_object_get(scope, "version")), rt_version());

    /* the machine */
    json_t *dp = points_of(metric_named(j, "system.cpu.utilization"), "1", 0, 0);
    assert_int_equal(json_array_size(dp), 2);
    assert_null(json_object_get(point_at(dp, 0, NULL, NULL), "startTimeUnixNano"));
    assert_true(fabs(value_of(point_at(dp, 1, NULL, NULL)) - 0.75) < 1e-9);
    dp = points_of(metric_named(j, "system.cpu.time"), "s", 1, 1);
    assert_int_equal(json_array_size(dp), 4);
    assert_true(fabs(value_of(point_at(dp, 0, "cpu.mode", "user")) - 1.0) < 1e-9);
    assert_true(fabs(value_of(point_at(dp, 1, "cpu.mode", "user")) - 3.0) < 1e-9); /* 1 + 2: accumulated */
    assert_true(fabs(value_of(point_at(dp, 1, "cpu.mode", "system")) - 0.5) < 1e-9);
    unsigned long long start = digits(json_object_get(point_at(dp, 0, "cpu.mode", "user"), "startTimeUnixNano"));
    assert_int_equal(start, 1699999999500000000ull); /* the first sample less its interval */
    assert_int_equal(digits(json_object_get(point_at(dp, 1, "cpu.mode", "system"), "startTimeUnixNano")), start);
    dp = points_of(metric_named(j, "system.memory.usage"), "By", 1, 0);
    json_t *used = point_at(dp, 0, "system.memory.state", "used");
    assert_true(json_is_string(json_object_get(used, "asInt")));
    assert_true(value_of(used) == 512 * MIB);
    assert_true(value_of(point_at(dp, 0, "system.memory.state", "cached")) == 240 * MIB);
    assert_true(value_of(point_at(points_of(metric_named(j, "system.memory.limit"), "By", 1, 0), 1, NULL, NULL)) ==
                1024 * MIB);
    assert_true(fabs(value_of(point_at(points_of(metric_named(j, "system.memory.utilization"), "1", 0, 0), 0,
                                       "system.memory.state", "free")) - 0.25) < 1e-9);
    assert_null(metric_named(j, "system.paging.usage")); /* swap null: no metric at all */
    dp = points_of(metric_named(j, "system.disk.io"), "By", 1, 1);
    assert_int_equal(json_array_size(dp), 4);
    json_t *rd = point_at(dp, 0, "disk.io.direction", "read");
    assert_string_equal(attr_of(rd, "system.device"), "sda");
    assert_true(value_of(rd) == 100); /* the series starts at the reading before the first sample */
    assert_true(value_of(point_at(dp, 1, "disk.io.direction", "read")) == 200);
    assert_true(value_of(point_at(dp, 1, "disk.io.direction", "write")) == 400);
    assert_int_equal(digits(json_object_get(rd, "startTimeUnixNano")), start);
    dp = points_of(metric_named(j, "system.network.io"), "By", 1, 1);
    assert_string_equal(attr_of(point_at(dp, 1, "network.io.direction", "transmit"), "network.interface.name"),
                        "eth0");
    assert_true(value_of(point_at(dp, 1, "network.io.direction", "receive")) == 100);
    dp = points_of(metric_named(j, "system.filesystem.usage"), "By", 1, 0);
    assert_true(value_of(point_at(dp, 0, "system.filesystem.state", "free")) == 2000);
    assert_true(value_of(point_at(dp, 0, NULL, NULL)) >= 0);
    dp = points_of(metric_named(j, "hw.gpu.utilization"), "1", 0, 0);
    assert_string_equal(attr_of(point_at(dp, 0, NULL, NULL), "hw.id"), "GPU-1234");
    assert_true(fabs(value_of(point_at(dp, 0, NULL, NULL)) - 0.4) < 1e-9);
    assert_true(value_of(point_at(points_of(metric_named(j, "hw.gpu.memory.limit"), "By", 1, 0), 0, NULL, NULL)) ==
                8.0 * 1024 * MIB);
    assert_int_equal(digits(json_object_get(point_at(points_of(metric_named(j, "system.cpu.logical.count"), "{cpu}",
                                                               1, 0), 0, NULL, NULL), "asInt")), 2);

    /* the tree */
    dp = points_of(metric_named(j, "process.cpu.time"), "s", 1, 1);
    assert_int_equal(json_array_size(dp), 2);
    assert_null(json_object_get(point_at(dp, 0, NULL, NULL), "attributes"));
    assert_true(value_of(point_at(dp, 1, NULL, NULL)) == 2.25); /* cpu_secs_total exactly */
    assert_int_equal(digits(json_object_get(point_at(dp, 1, NULL, NULL), "startTimeUnixNano")), start);
    assert_true(fabs(value_of(point_at(points_of(metric_named(j, "process.cpu.utilization"), "1", 0, 0), 0, NULL,
                                       NULL)) - 0.25) < 1e-9);
    assert_true(value_of(point_at(points_of(metric_named(j, "process.memory.usage"), "By", 1, 0), 0, NULL, NULL)) ==
                12 * MIB);
    assert_true(value_of(point_at(points_of(metric_named(j, "process.thread.count"), "{thread}", 1, 0), 0, NULL,
                                  NULL)) == 5);
    assert_true(value_of(point_at(points_of(metric_named(j, "process.disk.io"), "By", 1, 1), 0, "disk.io.direction",
                                  "write")) == 8192);
    assert_true(value_of(point_at(points_of(metric_named(j, "resource_tracker.process.memory.pss"), "By", 1, 0), 0,
                                  NULL, NULL)) == 10 * MIB);
    assert_true(value_of(point_at(points_of(metric_named(j, "resource_tracker.cgroup.cpu.time"), "s", 1, 1), 1, NULL,
                                  NULL)) == 3.5);
    /* its parts, a point per part */
    dp = points_of(metric_named(j, "resource_tracker.process.part.memory.usage"), "By", 1, 0);
    assert_int_equal(json_array_size(dp), 6);
    assert_true(value_of(point_at(dp, 0, "resource_tracker.process.part", "main")) == 8 * MIB);
    assert_true(value_of(point_at(dp, 1, "resource_tracker.process.part", "descendants")) == 4 * MIB);
    assert_true(value_of(point_at(dp, 1, "resource_tracker.process.part", "combined")) == 12 * MIB);
    assert_int_equal(digits(json_object_get(point_at(dp, 1, "resource_tracker.process.part", "main"),
                                            "startTimeUnixNano")), start);
    dp = points_of(metric_named(j, "resource_tracker.process.part.memory.private"), "By", 1, 0);
    assert_int_equal(json_array_size(dp), 4); /* the descendants' null: no point */
    assert_null(point_at(dp, 0, "resource_tracker.process.part", "descendants"));
    assert_true(value_of(point_at(dp, 0, "resource_tracker.process.part", "combined")) == 10 * MIB);
    dp = points_of(metric_named(j, "resource_tracker.process.part.memory.shared"), "By", 1, 0);
    assert_true(value_of(point_at(dp, 0, "resource_tracker.process.part", "main")) == 2 * MIB);
    dp = points_of(metric_named(j, "resource_tracker.process.part.cpu.usage"), "{cpu}", 0, 0);
    assert_null(json_object_get(point_at(dp, 0, "resource_tracker.process.part", "main"), "startTimeUnixNano"));
    assert_true(fabs(value_of(point_at(dp, 0, "resource_tracker.process.part", "main")) - 0.125) < 1e-9);
    assert_true(fabs(value_of(point_at(dp, 0, "resource_tracker.process.part", "descendants")) - 0.375) < 1e-9);
    dp = points_of(metric_named(j, "resource_tracker.process.part.thread.count"), "{thread}", 1, 0);
    assert_true(value_of(point_at(dp, 1, "resource_tracker.process.part", "main")) == 4);
    assert_true(value_of(point_at(dp, 1, "resource_tracker.process.part", "combined")) == 5);
    /* nulls of the tree: no point, no metric */
    static const char *const absent[] = {"resource_tracker.process.part.gpu.memory.usage","resource_tracker.process.memory.swap", "resource_tracker.process.memory.peak",
                                         "resource_tracker.process.gpu.utilization",
                                         "resource_tracker.process.gpu.memory.usage",
                                         "resource_tracker.cgroup.memory.limit"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        if (metric_named(j, absent[i]))
            fail_msg("%s is there, though the sample has no figure of it", absent[i]);
    json_decref(j);

    /* the next push: the cumulative series go on from where they were, with the same start */
    synth x2;
    synth_make(&x2, 2, false);
    j = format_rows(&x2, 1, &st, NULL, 0);
    dp = points_of(metric_named(j, "system.cpu.time"), "s", 1, 1);
    assert_true(fabs(value_of(point_at(dp, 2, "cpu.mode", "user")) - 6.0) < 1e-9);
    assert_int_equal(digits(json_object_get(point_at(dp, 2, "cpu.mode", "user"), "startTimeUnixNano")), start);
    assert_true(value_of(point_at(points_of(metric_named(j, "system.disk.io"), "By", 1, 1), 2, "disk.io.direction",
                                  "read")) == 300);
    assert_null(metric_named(j, "process.cpu.time")); /* no tree in this sample */
    assert_null(metric_named(j, "process.memory.usage"));
    assert_null(metric_named(j, "resource_tracker.process.part.memory.usage"));
    assert_null(metric_named(j, "resource_tracker.cgroup.cpu.time")); /* nor a cgroup */
    json_decref(j);

    /* a counter that went back (a device replaced): a new series from that reading */
    synth x3;
    synth_make(&x3, 3, false);
    x3.disk.read_bytes_total = 50;
    x3.disk.read_bytes = 10;
    j = format_rows(&x3, 1, &st, NULL, 0);
    rd = point_at(points_of(metric_named(j, "system.disk.io"), "By", 1, 1), 3, "disk.io.direction", "read");
    assert_true(value_of(rd) == 10);
    assert_int_equal(digits(json_object_get(rd, "startTimeUnixNano")), 1700000002500000000ull);
    json_decref(j);
    rt_otlp_state_free(&st);

    /* a tree without the split (a sample from before 0.8): its figures, no part metric */
    synth x4;
    synth_make(&x4, 0, true);
    x4.proc.main = x4.proc.descendants = x4.proc.combined = NULL;
    rt_otlp_state st4 = {0};
    j = format_rows(&x4, 1, &st4, NULL, 0);
    assert_non_null(metric_named(j, "process.memory.usage"));
    for (size_t i = 0; rt_otlp_metric_name(i); i++)
        if (strncmp(rt_otlp_metric_name(i), "resource_tracker.process.part.", 30) == 0)
            assert_null(metric_named(j, rt_otlp_metric_name(i)));
    json_decref(j);
    rt_otlp_state_free(&st4);

    for (size_t i = 0; rt_otlp_metric_name(i); i++)
        assert_true(strncmp(rt_otlp_metric_name(i), "system.", 7) == 0 || strncmp(rt_otlp_metric_name(i), "process.",
                    8) == 0 || strncmp(rt_otlp_metric_name(i), "hw.", 3) == 0 ||
                    strncmp(rt_otlp_metric_name(i), "resource_tracker.", 17) == 0);
}

/* The metrics come from the schema's OTLP members and the hand-made ones, one numbering: no place
 * taken twice, none skipped, members of one metric alike; 40 metrics, each named once. */
/* The tree's and its parts' points carry resource_tracker.phase while a phase is open (the
 * row's, captured at add time), the machine's never. */
static void test_phase_attribute(void **state)
{
    (void)state;
    synth xs[2];
    synth_make(&xs[0], 0, true);
    synth_make(&xs[1], 1, true);
    rt_otlp_row *rows[2];
    for (int i = 0; i < 2; i++)
        assert_non_null(rows[i] = rt_otlp_row_new(&xs[i].s));
    rows[0]->phase = "train \"x\"";
    rt_otlp_state st = {0};
    assert_int_equal(rt_otlp_accumulate(&st, rows, 2), RT_OK);
    size_t need = rt_otlp_format(NULL, 0, rows, 2, NULL, 0);
    char *buf = malloc(need + 1);
    assert_int_equal(rt_otlp_format(NULL, 0, rows, 2, buf, need + 1), need);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    json_t *dp = points_of(metric_named(j, "process.memory.usage"), "By", 1, 0);
    assert_string_equal(attr_of(point_at(dp, 0, NULL, NULL), "resource_tracker.phase"), "train \"x\"");
    assert_null(attr_of(point_at(dp, 1, NULL, NULL), "resource_tracker.phase")); /* none open */
    dp = points_of(metric_named(j, "resource_tracker.process.part.memory.usage"), "By", 1, 0);
    json_t *p = point_at(dp, 0, "resource_tracker.process.part", "main");
    assert_string_equal(attr_of(p, "resource_tracker.phase"), "train \"x\"");
    dp = points_of(metric_named(j, "process.cpu.time"), "s", 1, 1);
    assert_string_equal(attr_of(point_at(dp, 0, NULL, NULL), "resource_tracker.phase"), "train \"x\"");
    dp = points_of(metric_named(j, "process.disk.io"), "By", 1, 1); /* a member with an attribute of its own */
    p = point_at(dp, 0, "disk.io.direction", "read");
    assert_string_equal(attr_of(p, "resource_tracker.phase"), "train \"x\"");
    dp = points_of(metric_named(j, "process.cpu.utilization"), "1", 0, 0);
    assert_string_equal(attr_of(point_at(dp, 0, NULL, NULL), "resource_tracker.phase"), "train \"x\"");
    dp = points_of(metric_named(j, "system.memory.usage"), "By", 1, 0);
    assert_null(attr_of(point_at(dp, 0, "system.memory.state", "used"), "resource_tracker.phase"));
    json_decref(j);
    free(buf);
    free(rows[0]);
    free(rows[1]);
    rt_otlp_state_free(&st);
}

static void test_plan(void **state)
{
    (void)state;
    assert_string_equal(rt_otlp_plan_problem(), "");
    size_t n = 0;
    while (rt_otlp_metric_name(n))
        n++;
    assert_int_equal(n, 56);
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++)
            assert_string_not_equal(rt_otlp_metric_name(i), rt_otlp_metric_name(k));
    assert_string_equal(rt_otlp_metric_name(0), "system.cpu.utilization");
    assert_string_equal(rt_otlp_metric_name(4), "system.memory.usage");
    assert_string_equal(rt_otlp_metric_name(39), "resource_tracker.cgroup.oom_kills");
    assert_string_equal(rt_otlp_metric_name(40), "hw.energy");
    assert_string_equal(rt_otlp_metric_name(47), "resource_tracker.gpu.throttle.time");
    assert_string_equal(rt_otlp_metric_name(52), "resource_tracker.gpu.activity"); /* 0.19 */
    assert_string_equal(rt_otlp_metric_name(53), "hw.gpu.io");
    assert_string_equal(rt_otlp_metric_name(55), "resource_tracker.process.gpu.io.rate");
}

/* ---- GPU work (0.19) ------------------------------------------------------------------------- */

/* resource_tracker.gpu.activity per GPU and per MIG instance (hw.parent the GPU), each unit a ratio;
 * hw.gpu.io the PCIe and NVLink bytes since the GPU's series began (the rates times the intervals,
 * from the reading before the first); the tree's activity and rates with whose they are; no point
 * of a figure the GPU does not give. */
static void test_gpu_work(void **state)
{
    (void)state;
    synth xs[3];
    rt_gpu_mig mig = {.gpu_instance_id = 3, .uuid = "MIG-1234-3", .work = RT_GPU_WORK_NULL};
    const rt_gpu_mig *migs[1] = {&mig};
    for (int k = 0; k < 3; k++) {
        synth_make(&xs[k], k, true);
        rt_gpu_work w = RT_GPU_WORK_NULL;
        w.sm_active_pct = 15.9;
        w.tensor_active_pct = 0;
        w.dram_active_pct = 0.5;
        w.fp32_active_pct = 2.3;
        w.pcie_tx_bytes_per_sec = 1048576;
        w.pcie_rx_bytes_per_sec = k == 0 ? NAN : 2097152; /* the first sample had no rate */
        xs[k].gpu.work = w;
        xs[k].proc.gpu_work = w;
        xs[k].proc.gpu_work_scope = k == 2 ? "device" : "job";
    }
    mig.work.sm_active_pct = 42;
    xs[1].gpu.mig = migs;
    xs[1].gpu.mig_count = 1;
    rt_otlp_state st = {0};
    json_t *j = format_rows(xs, 3, &st, NULL, 0);
    json_t *dp = points_of(metric_named(j, "resource_tracker.gpu.activity"), "1", 0, 0);
    /* 4 units with a figure a GPU a sample, and the MIG instance's SM at the second */
    assert_int_equal(json_array_size(dp), 3 * 4 + 1);
    json_t *p = point_at(dp, 0, "resource_tracker.gpu.unit", "sm");
    assert_true(fabs(value_of(p) - 0.159) < 1e-12);
    assert_string_equal(attr_of(p, "hw.id"), "GPU-1234");
    assert_true(value_of(point_at(dp, 0, "resource_tracker.gpu.unit", "fp32")) == 0.023);
    assert_null(point_at(dp, 0, "resource_tracker.gpu.unit", "fp16")); /* not offered: no point */
    p = point_at(dp, 1, "hw.id", "MIG-1234-3");
    assert_non_null(p);
    assert_string_equal(attr_of(p, "hw.parent"), "GPU-1234");
    assert_string_equal(attr_of(p, "resource_tracker.gpu.instance"), "3");
    assert_string_equal(attr_of(p, "resource_tracker.gpu.unit"), "sm");
    assert_true(value_of(p) == 0.42);
    dp = points_of(metric_named(j, "hw.gpu.io"), "By", 1, 1);
    /* transmit: 1 MiB/s x 1 s each sample, from the reading before the first */
    for (int k = 0; k < 3; k++) {
        json_t *io = NULL;
        size_t i;
        json_t *q;
        json_array_foreach(dp, i, q) if (digits(json_object_get(q, "timeUnixNano")) == 1700000000500000000ull +
                                                                                         1000000000ull * (unsigned)k &&
                                         !strcmp(attr_of(q, "network.io.direction"), "transmit")) io = q;
        assert_non_null(io);
        assert_string_equal(attr_of(io, "resource_tracker.gpu.link"), "pcie");
        assert_true(value_of(io) == 1048576.0 * (k + 1));
        assert_int_equal(digits(json_object_get(io, "startTimeUnixNano")), 1699999999500000000ull);
    }
    assert_null(point_at(dp, 0, "network.io.direction", "receive")); /* no rate yet */
    assert_true(value_of(point_at(dp, 2, "network.io.direction", "receive")) == 2 * 2097152.0);
    dp = points_of(metric_named(j, "resource_tracker.process.gpu.activity"), "1", 0, 0);
    p = point_at(dp, 0, "resource_tracker.gpu.unit", "dram");
    assert_true(value_of(p) == 0.005);
    assert_string_equal(attr_of(p, "resource_tracker.gpu.work_scope"), "job");
    assert_string_equal(attr_of(point_at(dp, 2, "resource_tracker.gpu.unit", "sm"), "resource_tracker.gpu.work_scope"),
                        "device");
    dp = points_of(metric_named(j, "resource_tracker.process.gpu.io.rate"), "By/s", 0, 0);
    assert_true(value_of(point_at(dp, 1, "network.io.direction", "receive")) == 2097152.0);
    json_decref(j);
    rt_otlp_state_free(&st);

    /* no GPM anywhere: none of these metrics */
    synth_make(&xs[0], 0, true);
    j = format_rows(xs, 1, &st, NULL, 0);
    assert_null(metric_named(j, "resource_tracker.gpu.activity"));
    assert_null(metric_named(j, "hw.gpu.io"));
    assert_null(metric_named(j, "resource_tracker.process.gpu.activity"));
    json_decref(j);
    rt_otlp_state_free(&st);
}

/* ---- energy (0.15) ----------------------------------------------------------------------------- */

/* The request of one row of s (its phase: phase), parsed. */
static json_t *one_row(const rt_sample *s, const char *phase)
{
    rt_otlp_row *r = rt_otlp_row_new(s);
    assert_non_null(r);
    assert_true(rt_otlp_row_size(s) >= sizeof *r);
    r->phase = phase;
    rt_otlp_state st = {0};
    assert_int_equal(rt_otlp_accumulate(&st, &r, 1), RT_OK);
    size_t need = rt_otlp_format(NULL, 0, &r, 1, NULL, 0);
    char *buf = malloc(need + 1);
    assert_int_equal(rt_otlp_format(NULL, 0, &r, 1, buf, need + 1), need);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    free(buf);
    free(r);
    rt_otlp_state_free(&st);
    return j;
}

/* The point of dp whose attribute key is val, checking that it has every attribute of the list
 * (key, value, ..., NULL) and its value is v. */
static json_t *point_is(json_t *dp, const char *key, const char *val, double v, ...)
{
    size_t i;
    json_t *p;
    json_array_foreach(dp, i, p)
    {
        const char *a = attr_of(p, key);
        if (!a || strcmp(a, val) != 0)
            continue;
        va_list ap;
        va_start(ap, v);
        for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
            const char *want = va_arg(ap, const char *), *have = attr_of(p, k);
            if (!have || strcmp(have, want) != 0)
                fail_msg("%s=%s: %s is %s, not %s", key, val, k, have ? have : "absent", want);
        }
        va_end(ap);
        if (fabs(value_of(p) - v) > 1e-9)
            fail_msg("%s=%s: %.9g, not %.9g", key, val, value_of(p), v);
        return p;
    }
    fail_msg("no point %s=%s", key, val);
    return NULL;
}

#define METHOD "resource_tracker.energy.method"
#define SOURCE "resource_tracker.energy.source"

/* hw.energy and hw.power per domain (hw.id, hw.type, hw.name, the method and source), the
 * machine's hw.host.*, the tree's energy and power and its part per domain, the GPUs' throttled
 * seconds; no point without its method; the phase on the tree's points only. */
static void test_energy(void **state)
{
    (void)state;
    make_full();
    json_t *j = one_row(&full, NULL);
    unsigned long long t0 = 1699999999923000000ull; /* tracking began: the sample's time less its interval */
    json_t *dp = points_of(metric_named(j, "hw.energy"), "J", 1, 1);
    assert_int_equal(json_array_size(dp), 3);
    json_t *p = point_is(dp, "hw.id", "package-0", 1220.5, "hw.type", "cpu", "hw.name", "package-0", METHOD,
                         "measured", SOURCE, "intel-rapl", NULL);
    assert_int_equal(digits(json_object_get(p, "startTimeUnixNano")), t0);
    point_is(dp, "hw.id", "dram-0", 170.25, "hw.type", "memory", METHOD, "measured", NULL);
    point_is(dp, "hw.id", "GPU-aaaa", 2001, "hw.type", "gpu", "hw.name", "gpu-0", METHOD, "sampled", SOURCE, "nvml",
             NULL);
    dp = points_of(metric_named(j, "hw.power"), "W", 0, 0);
    p = point_is(dp, "hw.id", "package-0", 152.5, METHOD, "measured", NULL);
    assert_null(json_object_get(p, "startTimeUnixNano"));
    point_is(dp, "hw.id", "GPU-aaaa", 250.125, "hw.type", "gpu", NULL);
    point_is(points_of(metric_named(j, "hw.host.energy"), "J", 1, 1), METHOD, "sampled", 3391.75, "hw.id", "host",
             NULL);
    point_is(points_of(metric_named(j, "hw.host.power"), "W", 0, 0), METHOD, "sampled", 423.875, NULL);
    point_is(points_of(metric_named(j, "resource_tracker.process.energy"), "J", 1, 1), METHOD, "sampled", 2557.3,
             NULL);
    point_is(points_of(metric_named(j, "resource_tracker.process.power"), "W", 0, 0), METHOD, "sampled", 319.625,
             NULL);
    dp = points_of(metric_named(j, "resource_tracker.process.domain.energy"), "J", 1, 1);
    point_is(dp, "hw.id", "package-0", 488.2, METHOD, "measured", NULL);
    point_is(dp, "hw.id", "dram-0", 68.1, NULL);
    dp = points_of(metric_named(j, "resource_tracker.gpu.throttle.time"), "s", 1, 1);
    assert_int_equal(json_array_size(dp), 2); /* the second GPU knows nothing: no point */
    point_is(dp, "resource_tracker.gpu.throttle.reason", "power", 12.5, "hw.id", "GPU-aaaa", NULL);
    point_is(dp, "resource_tracker.gpu.throttle.reason", "thermal", 0.25, "hw.id", "GPU-aaaa", NULL);
    assert_null(attr_of(json_array_get(dp, 0), "resource_tracker.phase"));
    json_decref(j);

    /* a phase: on the tree's points, never the machine's */
    j = one_row(&full, "train");
    point_is(points_of(metric_named(j, "resource_tracker.process.energy"), "J", 1, 1), "resource_tracker.phase",
             "train", 2557.3, METHOD, "sampled", NULL);
    point_is(points_of(metric_named(j, "resource_tracker.process.domain.energy"), "J", 1, 1), "hw.id", "package-0",
             488.2, "resource_tracker.phase", "train", NULL);
    assert_null(attr_of(json_array_get(points_of(metric_named(j, "hw.energy"), "J", 1, 1), 0),
                        "resource_tracker.phase"));
    json_decref(j);

    /* no number without its method; a domain not read (NaN) has no point */
    dom_dram.method = NULL;
    dom_pkg.power_watts = NAN;
    energy.method = NULL;
    energy.process_method = NULL;
    j = one_row(&full, NULL);
    dp = points_of(metric_named(j, "hw.energy"), "J", 1, 1);
    assert_int_equal(json_array_size(dp), 2);
    assert_int_equal(json_array_size(points_of(metric_named(j, "hw.power"), "W", 0, 0)), 1);
    assert_null(metric_named(j, "hw.host.energy"));
    assert_null(metric_named(j, "hw.host.power"));
    assert_null(metric_named(j, "resource_tracker.process.energy"));
    json_decref(j);

    /* energy off: no energy metric at all */
    make_full();
    full.energy = NULL;
    j = one_row(&full, NULL);
    for (size_t i = 0; rt_otlp_metric_name(i); i++)
        if (strstr(rt_otlp_metric_name(i), "energy") || strstr(rt_otlp_metric_name(i), "power"))
            assert_null(metric_named(j, rt_otlp_metric_name(i)));
    json_decref(j);
}

/* A sample without anything (all null): a valid request with no metrics. */
static void test_json_empty(void **state)
{
    (void)state;
    rt_sample s = {.timestamp_secs = 1700000000.0, .interval_secs = NAN, .disk_space_total_bytes = RT_NULL_U64,
                   .disk_space_used_bytes = RT_NULL_U64, .disk_space_free_bytes = RT_NULL_U64};
    s.cpu = &(rt_cpu){.utime_secs = 2.0, .stime_secs = NAN, .utilization_pct = NAN};
    rt_otlp_row *r = rt_otlp_row_new(&s);
    rt_otlp_state st = {0};
    assert_int_equal(rt_otlp_accumulate(&st, &r, 1), RT_OK);
    assert_true(r->accumulated && r->cpu_user_cum == 2.0);
    assert_int_equal(rt_otlp_accumulate(&st, &r, 1), RT_OK); /* a row counts once */
    assert_true(r->cpu_user_cum == 2.0 && st.cpu_user == 2.0);
    s.cpu = NULL;
    free(r);
    r = rt_otlp_row_new(&s);
    rt_otlp_state_free(&st);
    assert_int_equal(rt_otlp_accumulate(&st, &r, 1), RT_OK);
    char buf[4096];
    size_t n = rt_otlp_format(NULL, 0, &r, 1, buf, sizeof buf);
    assert_true(n < sizeof buf);
    json_t *j = json_loads(buf, 0, NULL);
    assert_non_null(j);
    json_t *ms = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(j,
                 "resourceMetrics"), 0), "scopeMetrics"), 0), "metrics");
    assert_true(json_is_array(ms));
    assert_int_equal(json_array_size(ms), 0);
    json_decref(j);
    /* too small a buffer: cut, NUL-terminated, the length still told */
    char small[32];
    assert_int_equal(rt_otlp_format(NULL, 0, &r, 1, small, sizeof small), n);
    assert_int_equal(strlen(small), sizeof small - 1);
    free(r);
    rt_otlp_state_free(&st);
}

static void test_retry_after(void **state)
{
    (void)state;
    assert_true(rt_otlp_retry_after("3", 0, 60) == 3);
    assert_true(rt_otlp_retry_after(" 5 ", 0, 60) == 5);
    assert_true(rt_otlp_retry_after("999", 0, 60) == 60);
    assert_true(rt_otlp_retry_after("", 0, 60) < 0);
    assert_true(rt_otlp_retry_after(NULL, 0, 60) < 0);
    assert_true(rt_otlp_retry_after("2s", 0, 60) < 0);
    assert_true(rt_otlp_retry_after("-1", 0, 60) < 0);
    /* Sun, 06 Nov 1994 08:49:37 GMT is 784111777 */
    assert_true(rt_otlp_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111770.0, 60) == 7);
    assert_true(rt_otlp_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111790.0, 60) == 0);
    assert_true(rt_otlp_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 0, 60) == 60);
    assert_true(rt_otlp_retry_after("Sun, 06 Nov 1994 08:49:37", 0, 60) < 0);
}

/* ---- the live exporter against a fake network ---------------------------------------------------- */

#define MAXREQ 256

typedef struct fake {
    pthread_mutex_t mu;
    rt_clock *clk;         /* the exporter's clock: the requests' times and a hang's length */
    int fail_first;        /* the first N requests answer fail_status */
    long fail_status;
    const char *retry_after; /* with them */
    const char *fail_body;   /* and this body */
    int hang_first;        /* the first N requests take their whole timeout, then fail */
    bool partial;          /* a 200 with a partialSuccess */
    const char *partial_msg; /* its errorMessage ("x" when NULL) */
    int nreq;
    int active;            /* requests being answered */
    pthread_cond_t ended;  /* signalled (under mu) when a request's answer is done */
    int order[4096];       /* samples delivered, in the order they arrived */
    int norder;
    size_t maxlen;         /* the largest JSON body accepted (before gzip) */
    double at[MAXREQ];     /* the clock's time of each request */
    double timeout[MAXREQ];
    bool gz[MAXREQ];
    int seen[4096];        /* samples (by timestamp) delivered in accepted requests */
    bool header_ok;
    char bad[256];         /* the first thing found wrong */
} fake;

static void fake_bad(fake *f, const char *what)
{
    if (!f->bad[0])
        snprintf(f->bad, sizeof f->bad, "%s", what);
}

/* Counts the samples of an accepted body: the timeUnixNano of its system.memory.limit points. */
static void fake_count(fake *f, const rt_fetch_request *req)
{
    rt_buf raw = {0};
    const char *text = req->body;
    size_t len = req->body_len;
    if (f->gz[f->nreq - 1]) {
        if (rt_gunzip(req->body, req->body_len, 1 << 26, &raw) != RT_OK) {
            fake_bad(f, "not gzip");
            return;
        }
        text = raw.data;
        len = raw.len;
    }
    if (len > f->maxlen)
        f->maxlen = len;
    json_t *j = json_loadb(text, len, 0, NULL);
    rt_buf_free(&raw);
    if (!j) {
        fake_bad(f, "not JSON");
        return;
    }
    json_t *ms = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(j,
                 "resourceMetrics"), 0), "scopeMetrics"), 0), "metrics");
    size_t i, k;
    json_t *m, *p;
    json_array_foreach(ms, i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), "system.memory.limit") != 0)
            continue;
        json_array_foreach(json_object_get(json_object_get(m, "sum"), "dataPoints"), k, p)
        {
            unsigned long long ns = strtoull(json_string_value(json_object_get(p, "timeUnixNano")), NULL, 10);
            long idx = (long)((ns - 1700000000500000000ull) / 1000000000ull);
            if (idx < 0 || idx >= 4096) {
                fake_bad(f, "unknown timestamp");
            } else {
                f->seen[idx]++;
                if (f->norder < 4096)
                    f->order[f->norder++] = (int)idx;
            }
        }
    }
    json_decref(j);
}

static rt_error fake_fetch(void *user, const rt_fetch_request *req, rt_fetch_reply *out, char *err, size_t errlen)
{
    fake *f = user;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&f->mu);
    int n = f->nreq;
    if (n >= MAXREQ) {
        pthread_mutex_unlock(&f->mu);
        snprintf(err, errlen, "too many");
        return RT_ERR_IO;
    }
    f->nreq++;
    f->active++;
    double at = f->at[n] = rt_clock_now(f->clk);
    f->timeout[n] = req->timeout_secs;
    bool ct = false, auth = false;
    for (const char *const *h = req->headers; h && *h; h++) {
        ct |= strcmp(*h, "Content-Type: application/json") == 0;
        auth |= strcmp(*h, "Authorization: Bearer s3cret") == 0;
        f->gz[n] |= strcmp(*h, "Content-Encoding: gzip") == 0;
    }
    f->header_ok = ct && auth;
    if (strcmp(req->method, "POST") != 0 || strcmp(req->url, "http://127.0.0.1:9/v1/metrics") != 0 ||
        !req->reply_header || strcasecmp(req->reply_header, "Retry-After") != 0)
        fake_bad(f, "method, URL or reply header");
    bool hang = n < f->hang_first;
    bool fail = n < f->fail_first;
    pthread_mutex_unlock(&f->mu);
    if (hang) {
        rt_clock_sleep_until(f->clk, at + req->timeout_secs); /* the whole timeout, on the clock */
        snprintf(err, errlen, "Timeout was reached");
        pthread_mutex_lock(&f->mu);
        f->active--;
        pthread_cond_broadcast(&f->ended);
        pthread_mutex_unlock(&f->mu);
        return RT_ERR_IO;
    }
    pthread_mutex_lock(&f->mu);
    if (fail) {
        out->status = f->fail_status;
        snprintf(out->header, sizeof out->header, "%s", f->retry_after ? f->retry_after : "");
        if (f->fail_body) {
            rt_buf_init(&out->body, 1 << 20);
            rt_buf_append(&out->body, f->fail_body, strlen(f->fail_body) + 1);
            out->body.len--;
        }
    } else {
        out->status = 200;
        fake_count(f, req);
        if (f->partial) {
            json_t *reply = json_pack("{s:{s:s,s:s}}", "partialSuccess", "rejectedDataPoints", "3", "errorMessage",
                                      f->partial_msg ? f->partial_msg : "x");
            char *text = json_dumps(reply, 0);
            rt_buf_init(&out->body, 1 << 20);
            rt_buf_append(&out->body, text, strlen(text) + 1);
            out->body.len--;
            free(text);
            json_decref(reply);
        }
    }
    f->active--;
    pthread_cond_broadcast(&f->ended);
    pthread_mutex_unlock(&f->mu);
    return RT_OK;
}

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int warns;
static char last_warn[1024];
static char all_warns[16384]; /* every warning since live_start, one a line */

/* Fails when msg holds 8 bytes or more of the start of value. */
static void assert_no_prefix(const char *msg, const char *value)
{
    char pre[64];
    for (size_t k = 8; k <= strlen(value) && k < sizeof pre; k++) {
        snprintf(pre, sizeof pre, "%.*s", (int)k, value);
        if (strstr(msg, pre))
            fail_msg("a message holds \"%s\" of a header's value: %s", pre, msg);
    }
}

static void count_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (getenv("OTLP_TEST_LOG"))
        fprintf(stderr, "log %d: %s\n", (int)level, msg);
    assert_null(strstr(msg, "s3cret")); /* no message, whatever its level, holds a header's value */
    assert_no_prefix(msg, ECHOED);
    if (level < RT_LOG_WARN)
        return;
    pthread_mutex_lock(&log_mu);
    warns++;
    snprintf(last_warn, sizeof last_warn, "%s", msg);
    size_t used = strlen(all_warns);
    snprintf(all_warns + used, sizeof all_warns - used, "%s\n", msg);
    pthread_mutex_unlock(&log_mu);
}

static int warn_count(void)
{
    pthread_mutex_lock(&log_mu);
    int n = warns;
    pthread_mutex_unlock(&log_mu);
    return n;
}

typedef struct live {
    fake f;
    rt_otlp *ex;
    rt_clock *clk;
    synth x;
    int added;
} live;

static void live_start_cloud(live *l, double interval, size_t max_queue, double finish_timeout, int no_gzip,
                             rt_cloud_discovery *cloud)
{
    pthread_mutex_init(&l->f.mu, NULL);
    pthread_cond_init(&l->f.ended, NULL);
    static const char *const headers[] = {"Authorization: Bearer s3cret", "X-Api-Key: " ECHOED, NULL};
    static const rt_kv res[] = {{"service.name", "unit-svc"}, {"deployment.environment", "test"}};
    static const char *const tags[] = {"team=ml"};
    static rt_job job = RT_JOB_INIT;
    job.job_name = "unit-job";
    job.tags = tags;
    job.tag_count = 1;
    rt_otlp_options o = RT_OTLP_OPTIONS_INIT;
    o.url = "http://127.0.0.1:9/v1/metrics";
    o.headers = headers;
    o.resource = res;
    o.resource_count = 2;
    o.interval_secs = interval;
    o.timeout_secs = 1;
    o.no_gzip = no_gzip;
    o.max_queue_samples = max_queue;
    o.finish_timeout_secs = finish_timeout;
    o.job = &job;
    o.cloud = cloud;
    o.log = count_log;
    pthread_mutex_lock(&log_mu);
    warns = 0;
    all_warns[0] = '\0';
    pthread_mutex_unlock(&log_mu);
    assert_non_null(l->clk = l->f.clk = rt_clock_test_new(T0));
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, &l->f, l->clk, &l->ex), RT_OK);
}

static void live_start(live *l, double interval, size_t max_queue, double finish_timeout, int no_gzip)
{
    live_start_cloud(l, interval, max_queue, finish_timeout, no_gzip, NULL);
}

/* Frees the exporter (finishing it), then the fake network and the clock. */
static void live_end(live *l)
{
    rt_otlp_free(l->ex);
    rt_clock_test_free(l->clk);
    pthread_cond_destroy(&l->f.ended);
    pthread_mutex_destroy(&l->f.mu);
}

/* Runs the exporter's clock on to T0 + t (its thread blocked on the clock again after). */
static void live_run_to(live *l, double t)
{
    clock_run_to(l->clk, 1, T0 + t);
}

/* rt_otlp_finish, the clock running on by itself meanwhile (to each retry and to the deadline). */
static rt_error live_finish(live *l)
{
    clock_driver d;
    clock_drive_start(&d, l->clk, 2); /* the exporter's thread and this one */
    rt_error e = rt_otlp_finish(l->ex);
    clock_drive_stop(&d);
    return e;
}

/* Requests the fake network has seen. */
static int fake_nreq(fake *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->nreq;
    pthread_mutex_unlock(&f->mu);
    return n;
}

static uint64_t live_rejected(live *l)
{
    uint64_t n;
    rt_otlp_counts(l->ex, NULL, NULL, NULL, &n, NULL);
    return n;
}

/* Waits (at most WAIT_SECS) until no request is being answered. */
static void wait_idle(fake *f)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)WAIT_SECS;
    pthread_mutex_lock(&f->mu);
    while (f->active > 0 && pthread_cond_timedwait(&f->ended, &f->mu, &ts) == 0)
        ;
    int active = f->active;
    pthread_mutex_unlock(&f->mu);
    assert_int_equal(active, 0);
}

static void live_add(live *l, int n)
{
    for (int i = 0; i < n; i++) {
        synth_make(&l->x, l->added++, true);
        assert_int_equal(rt_otlp_add(l->ex, &l->x.s), RT_OK);
    }
}

/* Each of the first n samples delivered once, none after. */
static void assert_each_once(fake *f, int from, int n)
{
    for (int i = 0; i < 4096; i++)
        if (f->seen[i] != (i >= from && i < n))
            fail_msg("sample %d delivered %d times", i, f->seen[i]);
}

static void test_delivers_all_once(void **state)
{
    (void)state;
    live l = {0};
    live_start(&l, 0.1, 0, 5, 0);
    live_add(&l, 15);
    live_run_to(&l, 0.05);
    assert_int_equal(fake_nreq(&l.f), 0); /* nothing before the first interval */
    live_run_to(&l, 0.15);
    assert_int_equal(fake_nreq(&l.f), 1); /* pushed at the interval, not only at the end */
    live_add(&l, 15);
    live_run_to(&l, 0.25);
    assert_int_equal(fake_nreq(&l.f), 2);
    assert_int_equal(live_finish(&l), RT_OK);
    uint64_t added, delivered, dropped, rejected;
    unsigned reqs;
    rt_otlp_counts(l.ex, &added, &delivered, &dropped, &rejected, &reqs);
    assert_int_equal(added, 30);
    assert_int_equal(delivered, 30);
    assert_int_equal(reqs, 2); /* nothing was left for the end */
    for (int i = 0; i < 30; i++)
        assert_int_equal(l.f.order[i], i); /* in order */
    assert_string_equal(l.f.bad, "");
    assert_true(l.f.header_ok && l.f.gz[0]);
    assert_each_once(&l.f, 0, 30);
    assert_int_equal(warn_count(), 0);
    assert_int_equal(rt_otlp_add(l.ex, &l.x.s), RT_ERR_INVALID); /* after the end */
    live_end(&l);
}

static void test_uncompressed(void **state)
{
    (void)state;
    live l = {0};
    live_start(&l, 10, 0, 5, 1);
    live_add(&l, 3);
    assert_int_equal(live_finish(&l), RT_OK); /* pushed at the end */
    assert_int_equal(l.f.nreq, 1);
    assert_false(l.f.gz[0]);
    assert_string_equal(l.f.bad, "");
    assert_each_once(&l.f, 0, 3);
    live_end(&l);
}

static void test_503_retry_after(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 2;
    l.f.fail_status = 503;
    l.f.retry_after = "1";
    live_start(&l, 0.1, 0, 5, 0);
    live_add(&l, 10);
    live_run_to(&l, 0.15); /* the first push (at 0.1) fails: its retry is at 1.1 */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_add(&l, 10);
    live_run_to(&l, 1.05); /* the intervals meanwhile push nothing: the retry waits */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_add(&l, 10);
    live_run_to(&l, 1.15); /* the second fails: the backoff (1 to 2 s) is longer than Retry-After */
    assert_int_equal(fake_nreq(&l.f), 2);
    live_add(&l, 10);
    live_run_to(&l, 2.05);
    assert_int_equal(fake_nreq(&l.f), 2);
    live_run_to(&l, 3.15); /* the third goes through (the first ten), then the queue in one more */
    assert_int_equal(fake_nreq(&l.f), 4);
    assert_int_equal(live_finish(&l), RT_OK);
    assert_string_equal(l.f.bad, "");
    assert_each_once(&l.f, 0, 40);
    assert_int_equal(l.f.nreq, 4);
    assert_true(l.f.at[1] - l.f.at[0] >= 1.0 - 1e-9); /* Retry-After: 1 kept */
    assert_true(l.f.at[2] - l.f.at[1] >= 1.0 - 1e-9);
    assert_int_equal(warn_count(), 0); /* a short outage that lost nothing: not warned about */
    live_end(&l);
}

static void test_429_backoff_then_ok(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 1;
    l.f.fail_status = 429; /* no Retry-After: the backoff (0.5..1 s) */
    live_start(&l, 0.1, 0, 5, 0);
    live_add(&l, 5);
    live_run_to(&l, 0.15); /* the first push failed */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_run_to(&l, 0.55); /* not retried before half a second */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_run_to(&l, 1.15); /* retried within a second, and through */
    assert_int_equal(fake_nreq(&l.f), 2);
    assert_int_equal(live_finish(&l), RT_OK);
    assert_each_once(&l.f, 0, 5);
    assert_int_equal(l.f.nreq, 2);
    live_end(&l);
}

/* An outage of 10 s and more is warned about, once; samples wait in the queue meanwhile. */
static void test_outage_warned_once(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 1000;
    l.f.fail_status = 502;
    l.f.retry_after = "1";
    live_start(&l, 0.1, 0, 1, 0);
    double t = 0;
    for (; warn_count() == 0 && t < 20; t += 0.5) { /* a sample every 0.5 s until the warning */
        live_add(&l, 1);
        live_run_to(&l, t + 0.5);
    }
    assert_int_equal(warn_count(), 1);
    assert_true(t >= 10 && t <= 11.5); /* the first failure at 0.1; checked every interval */
    const char *num = strstr(last_warn, "cannot push metrics for ");
    assert_non_null(num);
    assert_true(atof(num + strlen("cannot push metrics for ")) >= 10);
    assert_non_null(strstr(last_warn, "HTTP 502"));
    /* backing off: each pause at least the Retry-After (1 s) and the backoff's lower half
     * (0.5, 1, 2, 4 ... s) */
    pthread_mutex_lock(&l.f.mu);
    int nreq = l.f.nreq;
    assert_true(nreq >= 4 && nreq <= 6); /* 0.1, then pauses of 1, 1..2, 2..4, 4..8 s */
    for (int i = 0; i + 1 < nreq; i++)
        if (l.f.at[i + 1] - l.f.at[i] < fmax(1.0, fmin(0.5 * ldexp(1.0, i), 15.0)) - 1e-9)
            fail_msg("the pause after try %d was %.3f s", i + 1, l.f.at[i + 1] - l.f.at[i]);
    pthread_mutex_unlock(&l.f.mu);
    assert_int_equal(live_finish(&l), RT_ERR_IO);
    assert_int_equal(warn_count(), 2);
    char want[64];
    snprintf(want, sizeof want, "%d of %d samples were not delivered", l.added, l.added);
    assert_non_null(strstr(last_warn, want));
    live_end(&l);
}

/* "Retry-After: 0" is no licence to hammer: the backoff still applies. */
static void test_retry_after_zero_backs_off(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 2;
    l.f.fail_status = 503;
    l.f.retry_after = "0";
    live_start(&l, 0.1, 0, 5, 0);
    live_add(&l, 4);
    live_run_to(&l, 0.55); /* the first push (at 0.1) failed; the backoff is 0.5 to 1 s */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_run_to(&l, 1.15); /* the second failed: 1 to 2 s */
    assert_int_equal(fake_nreq(&l.f), 2);
    live_run_to(&l, 3.15);
    assert_int_equal(fake_nreq(&l.f), 3);
    assert_int_equal(live_finish(&l), RT_OK);
    assert_each_once(&l.f, 0, 4);
    assert_int_equal(l.f.nreq, 3);
    assert_true(l.f.at[1] - l.f.at[0] >= 0.5 - 1e-9);
    assert_true(l.f.at[2] - l.f.at[1] >= 1.0 - 1e-9);
    live_end(&l);
}

static void test_400_drops(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 1;
    l.f.fail_status = 400;
    l.f.fail_body = "bad request from Authorization: Bearer s3cret"; /* an echo: never logged */
    live_start(&l, 0.2, 0, 5, 0);
    live_add(&l, 3);
    live_run_to(&l, 0.25); /* the first push (at 0.2) is refused */
    assert_int_equal(fake_nreq(&l.f), 1);
    assert_int_equal(live_rejected(&l), 3);
    live_run_to(&l, 2.25); /* and never retried */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_add(&l, 2);
    assert_int_equal(live_finish(&l), RT_ERR_IO);
    uint64_t rejected, delivered;
    rt_otlp_counts(l.ex, NULL, &delivered, NULL, &rejected, NULL);
    assert_int_equal(rejected, 3);
    assert_int_equal(delivered, 2);
    assert_each_once(&l.f, 3, 5);
    assert_int_equal(l.f.nreq, 2);
    assert_int_equal(warn_count(), 2); /* the refusal, and the end's count */
    assert_non_null(strstr(last_warn, "3 of 5") ? last_warn : NULL);
    live_end(&l);
}

static void test_partial_success_warns_once(void **state)
{
    (void)state;
    live l = {0};
    l.f.partial = true;
    live_start(&l, 0.1, 0, 5, 0);
    live_add(&l, 5);
    live_run_to(&l, 0.15);
    assert_int_equal(fake_nreq(&l.f), 1);
    live_add(&l, 5);
    assert_int_equal(live_finish(&l), RT_OK);
    assert_int_equal(l.f.nreq, 2);
    assert_int_equal(warn_count(), 1);
    assert_non_null(strstr(last_warn, "rejected 3 data points"));
    live_end(&l);
}

static void test_hang_bounded(void **state)
{
    (void)state;
    live l = {0};
    l.f.hang_first = 1000;
    live_start(&l, 0.1, 0, 1.5, 0);
    live_add(&l, 5);
    live_run_to(&l, 0.15); /* a request is hanging (its timeout is 1 s) when the end comes */
    assert_int_equal(fake_nreq(&l.f), 1);
    assert_int_equal(live_finish(&l), RT_ERR_IO);
    /* the end kept to its deadline, the requests to their own timeouts */
    assert_true(rt_clock_now(l.clk) <= T0 + 0.15 + 1.5 + 1e-9);
    pthread_mutex_lock(&l.f.mu);
    assert_int_equal(l.f.nreq, 2); /* the one hanging (until 1.1), one more until the end */
    for (int i = 0; i < l.f.nreq; i++)
        assert_true(l.f.timeout[i] <= 1.0 + 1e-9);
    assert_true(l.f.at[1] + l.f.timeout[1] <= T0 + 0.15 + 1.5 + 1e-9);
    pthread_mutex_unlock(&l.f.mu);
    assert_true(warn_count() >= 1);
    assert_non_null(strstr(last_warn, "not delivered"));
    wait_idle(&l.f);
    live_end(&l);
}

/* A receiver that echoes a header's value across the cut of the quote in a message, in a refusal's
 * body and in a partialSuccess's errorMessage: no message holds 8 bytes of it (count_log), yet
 * the rest of the receiver's words are quoted. */
static void test_echo_redacted(void **state)
{
    (void)state;
    live l = {0};
    char body[512], emsg[512];
    char pad[151];
    memset(pad, 'z', 150);
    pad[150] = '\0';
    snprintf(body, sizeof body, "%s" ECHOED " and Bearer s3cret", pad); /* straddles byte 159 */
    memset(pad, 'y', 150);
    snprintf(emsg, sizeof emsg, "%s" ECHOED, pad);
    l.f.fail_first = 1;
    l.f.fail_status = 400;
    l.f.fail_body = body;
    l.f.partial = true;
    l.f.partial_msg = emsg;
    live_start(&l, 0.1, 0, 5, 0);
    live_add(&l, 2);
    live_run_to(&l, 0.15);
    assert_int_equal(fake_nreq(&l.f), 1);
    live_add(&l, 2);
    assert_int_equal(live_finish(&l), RT_ERR_IO); /* the first two were refused */
    pthread_mutex_lock(&log_mu);
    assert_int_equal(warns, 3); /* the refusal, the partial success, the end's count */
    assert_non_null(strstr(all_warns, "HTTP 400: zzzzzzzzzz"));
    assert_non_null(strstr(all_warns, "zzz[redac"));
    assert_non_null(strstr(all_warns, "yyy[redac"));
    pthread_mutex_unlock(&log_mu);
    live_end(&l);
}

/* A request whose JSON would pass the most one may be goes in several, each within it, every
 * sample once and in order; a sample too large alone is dropped, with one warning. */
static void test_body_split(void **state)
{
    (void)state;
    /* the size of a request of one sample and of two (no push before the end: one request
     * each): the envelope and metric heads every request has, and what a sample adds */
    size_t len[2];
    live l;
    for (int k = 0; k < 2; k++) {
        memset(&l, 0, sizeof l);
        live_start(&l, 3600, 0, 10, 1);
        live_add(&l, k + 1);
        assert_int_equal(live_finish(&l), RT_OK);
        assert_int_equal(l.f.nreq, 1);
        len[k] = l.f.maxlen;
        live_end(&l);
    }
    size_t one = len[0], per = len[1] - len[0];
    assert_true(one > per && per > 0);

    memset(&l, 0, sizeof l);
    live_start(&l, 3600, 0, 10, 1); /* one batch of 40 to split */
    size_t max = one + 2 * per + per / 2; /* room for 3 samples, not 4 */
    rt_otlp_set_body_max(l.ex, max);
    live_add(&l, 40);
    assert_int_equal(live_finish(&l), RT_OK);
    uint64_t delivered, rejected, dropped;
    rt_otlp_counts(l.ex, NULL, &delivered, &dropped, &rejected, NULL);
    assert_int_equal(delivered, 40);
    assert_int_equal(rejected + dropped, 0);
    assert_string_equal(l.f.bad, "");
    assert_true(l.f.maxlen <= max);
    assert_true(l.f.nreq >= 14 && l.f.nreq <= 40); /* at most 3 samples a request */
    assert_each_once(&l.f, 0, 40);
    for (int i = 0; i < 40; i++)
        assert_int_equal(l.f.order[i], i);
    assert_int_equal(warn_count(), 0);
    live_end(&l);

    memset(&l, 0, sizeof l);
    live_start(&l, 3600, 0, 10, 1);
    rt_otlp_set_body_max(l.ex, one / 2); /* no sample fits */
    live_add(&l, 5);
    assert_int_equal(live_finish(&l), RT_ERR_IO);
    rt_otlp_counts(l.ex, NULL, &delivered, NULL, &rejected, NULL);
    assert_int_equal(delivered, 0);
    assert_int_equal(rejected, 5);
    assert_int_equal(l.f.nreq, 0);
    assert_int_equal(warn_count(), 2); /* once for the samples too large, once at the end */
    assert_non_null(strstr(all_warns, "alone makes a request larger"));
    live_end(&l);
}

/* A listening socket that never accepts: the cloud's probes wait on it until their 2 s bound. */
static int listen_silent(int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, n) == 0 && listen(fd, 16) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &n) == 0;
    assert_true(ok);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A cloud discovery that has not ended when the end comes holds neither the end nor the
 * exporter's thread: rt_otlp_finish returns with everything delivered (not orphaning a thread
 * waiting on the discovery), and the discovery is freed right after (the sanitizers would see a
 * thread still using it). */
static void test_cloud_not_awaited_past_finish(void **state)
{
    (void)state;
    char err[256];
    if (rt_fetch_available(err, sizeof err) != RT_OK)
        skip();
    int port;
    int fd = listen_silent(&port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    rt_cloud_options co = RT_CLOUD_OPTIONS_INIT;
    co.metadata_url = url;
    rt_cloud_discovery *d = NULL;
    assert_int_equal(rt_cloud_start(&co, &d), RT_OK);
    live l = {0};
    live_start_cloud(&l, 0.05, 0, 1.5, 0, d);
    live_add(&l, 3);
    live_run_to(&l, 0.1); /* the first push is due (0.05): the thread waits for the cloud (at most 2 s) */
    assert_int_equal(fake_nreq(&l.f), 0);
    assert_int_equal(live_finish(&l), RT_OK);
    assert_true(rt_clock_now(l.clk) < T0 + 0.1 + 1.5); /* within its deadline, not waiting for the cloud */
    rt_otlp_free(l.ex);
    rt_cloud_free(d);
    close(fd);
    assert_each_once(&l.f, 0, 3);
    rt_clock_test_free(l.clk);
    pthread_cond_destroy(&l.f.ended);
    pthread_mutex_destroy(&l.f.mu);
}

static void test_queue_drops_oldest(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 1;
    l.f.fail_status = 503;
    l.f.retry_after = "1";
    live_start(&l, 0.05, 8, 5, 0);
    live_add(&l, 1);
    live_run_to(&l, 0.075); /* the first push (sample 0, at 0.05 s) failed; its retry is a second away */
    assert_int_equal(fake_nreq(&l.f), 1);
    live_add(&l, 20);
    assert_int_equal(live_finish(&l), RT_ERR_IO);
    uint64_t dropped, delivered;
    rt_otlp_counts(l.ex, NULL, &delivered, &dropped, NULL, NULL);
    assert_int_equal(dropped, 12);
    assert_int_equal(delivered, 9);
    assert_int_equal(l.f.seen[0], 1); /* the push in flight is kept */
    for (int i = 1; i < 13; i++)
        assert_int_equal(l.f.seen[i], 0); /* the oldest queued were dropped */
    for (int i = 13; i < 21; i++)
        assert_int_equal(l.f.seen[i], 1);
    assert_int_equal(warn_count(), 2); /* the full queue, the end's count */
    live_end(&l);
}

/* rt_otlp_errmsg: "" until a push fails, then the receiver's words (its echo of a header's value
 * redacted), kept after a later success; a transport failure in libcurl's words. */
static void test_errmsg_says_the_last_failure(void **state)
{
    (void)state;
    live l = {0};
    l.f.fail_first = 1;
    l.f.fail_status = 400;
    l.f.fail_body = "bad request from Authorization: Bearer s3cret";
    live_start(&l, 0.2, 0, 5, 0);
    assert_string_equal(rt_otlp_errmsg(l.ex), "");
    assert_string_equal(rt_otlp_errmsg(NULL), "");
    live_add(&l, 3);
    live_run_to(&l, 0.25); /* the first push (at 0.2) is refused */
    assert_int_equal(fake_nreq(&l.f), 1);
    const char *m = rt_otlp_errmsg(l.ex);
    assert_true(strncmp(m, "HTTP 400: bad request from Authorization: ", 42) == 0);
    assert_null(strstr(m, "s3cret"));
    live_add(&l, 2);
    live_run_to(&l, 0.45); /* the next goes through: the failure stays the last */
    assert_int_equal(fake_nreq(&l.f), 2);
    assert_true(strncmp(rt_otlp_errmsg(l.ex), "HTTP 400: ", 10) == 0);
    assert_int_equal(live_finish(&l), RT_ERR_IO);
    assert_true(strncmp(rt_otlp_errmsg(l.ex), "HTTP 400: ", 10) == 0);
    live_end(&l);

    live h = {0};
    h.f.hang_first = 1; /* the first request takes its whole timeout (1 s), then fails */
    live_start(&h, 0.1, 0, 5, 0);
    live_add(&h, 2);
    live_run_to(&h, 0.15);
    assert_string_equal(rt_otlp_errmsg(h.ex), ""); /* still waiting for the answer */
    live_run_to(&h, 1.15);
    assert_string_equal(rt_otlp_errmsg(h.ex), "Timeout was reached");
    assert_int_equal(live_finish(&h), RT_OK); /* retried and delivered */
    assert_string_equal(rt_otlp_errmsg(h.ex), "Timeout was reached");
    live_end(&h);
}

static void test_bad_options(void **state)
{
    (void)state;
    rt_otlp *ex = (rt_otlp *)1;
    rt_otlp_options o = RT_OTLP_OPTIONS_INIT;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    assert_null(ex);
    o.url = "ftp://x/v1/metrics";
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    o.url = "http://127.0.0.1:9/v1/metrics";
    static const char *const bad1[] = {"NoColon", NULL};
    static const char *const bad2[] = {"X-A: b\r\nX-B: c", NULL};
    static const char *const bad3[] = {": empty name", NULL};
    o.headers = bad1;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    o.headers = bad2;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    o.headers = bad3;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    o.headers = NULL;
    o.interval_secs = -1;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    o.interval_secs = NAN;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    o.interval_secs = 0;
    o.struct_size = 1;
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, NULL, NULL, &ex), RT_ERR_INVALID);
    assert_int_equal(rt_otlp_add(NULL, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_otlp_finish(NULL), RT_ERR_INVALID);
    rt_otlp_free(NULL);
    /* no samples at all: nothing to push, nothing lost */
    o.struct_size = sizeof o;
    fake f = {0};
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.ended, NULL);
    assert_int_equal(rt_otlp_start_net(&o, fake_fetch, &f, NULL, &ex), RT_OK);
    assert_int_equal(rt_otlp_finish(ex), RT_OK);
    assert_int_equal(rt_otlp_finish(ex), RT_ERR_INVALID); /* once */
    rt_otlp_free(ex);
    assert_int_equal(f.nreq, 0);
    pthread_cond_destroy(&f.ended);
    pthread_mutex_destroy(&f.mu);
}

/* The caller's cost: rt_otlp_add's time per call and the queue's memory per sample (printed). */
static void test_add_cost(void **state)
{
    (void)state;
    live l = {0};
    live_start(&l, 3600, 100000, 60, 0); /* the end pushes 4,000 samples: time enough under valgrind */
    synth_make(&l.x, 0, true);
    size_t row = rt_otlp_row_size(&l.x.s);
    enum { N = 4000 };
    double t0 = rt_mono_secs();
    for (int i = 0; i < N; i++) {
        l.x.s.timestamp_secs = 1700000000.5 + i;
        assert_int_equal(rt_otlp_add(l.ex, &l.x.s), RT_OK);
    }
    double us = (rt_mono_secs() - t0) / N * 1e6;
    printf("otlp: rt_otlp_add %.2f us per call; a queued sample takes %zu bytes (+%zu for its queue slot) with 1 "
           "disk, 1 interface, 1 GPU\n", us, row, sizeof(void *));
    assert_int_equal(live_finish(&l), RT_OK); /* pushed at the end in batches of 512 */
    assert_int_equal(l.f.nreq, (N + 511) / 512);
    assert_each_once(&l.f, 0, N);
    live_end(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_phase_attribute),        cmocka_unit_test(test_json_empty), cmocka_unit_test(test_plan), cmocka_unit_test(test_gpu_work),
        cmocka_unit_test(test_energy),
        cmocka_unit_test(test_retry_after),        cmocka_unit_test(test_delivers_all_once),
        cmocka_unit_test(test_uncompressed),       cmocka_unit_test(test_503_retry_after),
        cmocka_unit_test(test_429_backoff_then_ok), cmocka_unit_test(test_retry_after_zero_backs_off),
        cmocka_unit_test(test_400_drops),          cmocka_unit_test(test_outage_warned_once),
        cmocka_unit_test(test_partial_success_warns_once), cmocka_unit_test(test_hang_bounded),
        cmocka_unit_test(test_queue_drops_oldest), cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_echo_redacted),      cmocka_unit_test(test_body_split),
        cmocka_unit_test(test_cloud_not_awaited_past_finish),
        cmocka_unit_test(test_errmsg_says_the_last_failure),
        cmocka_unit_test(test_add_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
