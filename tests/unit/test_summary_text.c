/* test_summary_text.c - rt_summary_write_text_cb (analysis/summary_text.c): the text of a recorded
 * fixture run line by line, the facts of a tracking run (command, exit status by signal, host,
 * cloud), forced units, the scheduler's words, the width the answer breaks at, a write callback
 * that takes a byte at a time or fails midway, the fd variant, the arguments refused, and the
 * energy and carbon lines (0.15). */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/mman.h>

#include "resource_tracker.h"
#include "analysis/gpu_work_words.h"
#include "analysis/record.h"

/* A write callback into a growing string; fail_at > 0: the fail_at-th call fails; one_byte:
 * takes one byte per call (a short count each time). */
typedef struct sink {
    char text[16384];
    size_t len;
    int calls;
    int fail_at;
    int one_byte;
    int ragged; /* calls whose bytes did not end a line */
} sink;

static long to_sink(void *user, const void *buf, size_t len)
{
    sink *k = user;
    k->calls++;
    if (k->fail_at && k->calls >= k->fail_at)
        return -1;
    size_t n = k->one_byte ? 1 : len;
    k->ragged += len == 0 || ((const char *)buf)[len - 1] != '\n';
    assert_true(k->len + n < sizeof k->text);
    memcpy(k->text + k->len, buf, n);
    k->len += n;
    k->text[k->len] = '\0';
    return (long)n;
}

/* The statistics of a fixture run (free with rt_stats_free). */
static rt_stats *fixture_stats(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", RT_FIXTURES, rel);
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    assert_int_equal(rt_run_read(path, NULL, &st, 1, NULL, NULL), RT_OK);
    return st;
}

static void recorded_run(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, NULL, to_sink, &k), RT_OK);
    /* the answer first, in SLURM's words by default; the cores from the predicted durations (1, 2
     * and 3 cores busy in turn: 2 cores would take the last second half again) */
    /* broken between words before column 100, the later rows under the first's text */
    assert_non_null(strstr(k.text, "Used        6.00 s CPU (mean 2.00 cores, peak 3.00); memory 350.0 MiB (RSS peak "
                                   "of the samples: a\n            lower bound)\n"
                                   "Ask for     3 cores, 512 MiB, 1 GPU with >= 15 GiB (peak 1.0 GiB): --cpus-per-task=3 "
                                   "--mem=512M\n            --gres=gpu:1 --time=0:10:00 (SLURM)\n"
                                   "Time        3 cores: about 3.0 s, as this run; 2 cores: about 3.5 s (+17%)\n"
                                   "GPU ask     GPUs with >= 15 GiB: T4 16GB, V100 16GB, A10G 24GB, A10 24GB (and "));
    assert_true(strncmp(k.text, "Used ", 5) == 0);
    assert_non_null(strstr(k.text, "\nRun\n  Job                        fixture-job\n"
                                   "  Started                    2023-11-14 22:13:20 UTC\n"
                                   "  Ended                      2023-11-14 22:13:23 UTC\n"
                                   "  Duration                   3.00 s\n  Samples                    3\n"));
    assert_non_null(strstr(k.text, "  PSS                        mean 200.0 MiB  peak 300.0 MiB  p50 200.5 MiB  p95 "
                                   "300.0 MiB\n"));
    assert_non_null(strstr(k.text, "  Network in / out           5.9 KiB / 600 B\n"));
    /* a recorded file: nothing of what only the one who ran it knows */
    assert_null(strstr(k.text, "Cloud"));
    assert_null(strstr(k.text, "Command"));
    assert_null(strstr(k.text, "Exit status"));
    assert_true(k.len > 0 && k.text[k.len - 1] == '\n');
    /* whole lines at a time: a call per line, or per note broken over lines */
    int lines = 0, later = 0; /* later: the rows of a line broken over several, after its first */
    for (size_t i = 0; i < k.len; i++)
        if (k.text[i] == '\n') {
            lines++;
            later += strncmp(k.text + i + 1, "            ", 12) == 0;
        }
    assert_int_equal(k.ragged, 0);
    assert_true(later > 0 && k.calls <= lines && k.calls >= lines - later);
    rt_stats_free(st);
}

static void facts(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    const char *argv[] = {"python", "train.py", "--epochs", "3", NULL};
    rt_job job = RT_JOB_INIT;
    job.job_name = "nightly";
    rt_host host = {.hostname = "node7", .vcpus = 16, .memory_mib = 65536, .cpu_model = "Xeon", .gpu_count = 0};
    rt_run_facts run = RT_RUN_FACTS_INIT;
    run.job = &job;
    run.command = argv;
    run.exit_status = 137;
    run.host = &host;
    run.start_secs = 1700000000; /* the caller's times before the samples' */
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), &run, NULL, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "  Job                        nightly\n"
                                   "  Command                    python train.py --epochs 3\n"
                                   "  Exit status                137 (killed by signal 9, SIGKILL)\n"
                                   "  Started                    2023-11-14 22:13:20 UTC\n"));
    assert_non_null(strstr(k.text, "  Host                       node7, 16 vCPUs, 64.0 GiB, Xeon\n"
                                   "  Cloud                      none found\n"));
    /* a pid without a command; a cloud found */
    rt_cloud cloud = {.vendor_id = "aws", .instance_type = "m5.large", .region_id = "us-east-1", .zone_id = "a"};
    run.command = NULL;
    run.pid = 4242;
    run.exit_status = -1;
    run.cloud = &cloud;
    run.start_secs = 0;
    k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), &run, NULL, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "  Process                    4242\n"));
    assert_null(strstr(k.text, "Exit status"));
    assert_non_null(strstr(k.text, "  Cloud                      aws m5.large us-east-1 a\n"));
    assert_non_null(strstr(k.text, "  Started                    2023-11-14 22:13:20 UTC\n"));
    rt_stats_free(st);
}

static void units_and_words(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    rt_summary_text_options o = RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.memory_unit = "gigabytes";
    o.time_unit = "minutes";
    o.scheduler = RT_SCHED_K8S;
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "  Duration                   0.0500 minutes\n"));
    assert_non_null(strstr(k.text, "  Memory                     8.389 gigabytes\n"));
    assert_non_null(strstr(k.text, "(Kubernetes)\n"));
    /* counters stay in readable units */
    assert_non_null(strstr(k.text, "  Network in / out           5.9 KiB / 600 B\n"));
    /* unknown names: refused before anything is written */
    const char *bad[][2] = {{"gibibytes", NULL}, {NULL, "weeks"}, {"", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.memory_unit = bad[i][0];
        o.time_unit = bad[i][1];
        k = (sink){0};
        assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, &k), RT_ERR_INVALID);
        assert_int_equal(k.calls, 0);
    }
    o = (rt_summary_text_options)RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.scheduler = 7;
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, &k), RT_ERR_INVALID);
    rt_stats_free(st);
}

/* brief: the answer and one line of the run (its exit status in words when known), nothing of
 * the sections after it. */
static void brief(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    rt_summary_text_options o = RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.brief = 1;
    rt_run_facts run = RT_RUN_FACTS_INIT;
    run.exit_status = 137;
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), &run, &o, to_sink, &k), RT_OK);
    assert_true(strncmp(k.text, "Used        ", 12) == 0);
    assert_non_null(strstr(k.text, "\nAsk for     "));
    assert_non_null(strstr(k.text, "\nNotes       "));
    assert_non_null(strstr(k.text, "\nRan         3.00 s, exit status 137 (killed by signal 9, SIGKILL)\n"));
    assert_null(strstr(k.text, "\nRun\n"));
    assert_null(strstr(k.text, "Machine"));
    /* without an exit status (a PID's tree, the machine): how long only */
    run.exit_status = -1;
    k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), &run, &o, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "\nRan         3.00 s\n"));
    /* and the whole summary without it */
    o.brief = 0;
    k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), &run, &o, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "\nRun\n"));
    assert_null(strstr(k.text, "\nRan "));
    rt_stats_free(st);
}

/* The notes break before the width asked for, and at 110 columns by default. */
static void width(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    for (int w = 0; w <= 60; w += 60) {
        rt_summary_text_options o = RT_SUMMARY_TEXT_OPTIONS_INIT;
        o.width = w;
        sink k = {0};
        assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, &k), RT_OK);
        const char *notes = strstr(k.text, "Notes");
        const char *end = strstr(k.text, "\nRun\n");
        assert_non_null(notes);
        assert_non_null(end);
        size_t longest = 0;
        int count = 0;
        for (const char *p = notes; p < end; count++) {
            const char *nl = strchr(p, '\n');
            if ((size_t)(nl - p) > longest)
                longest = (size_t)(nl - p);
            p = nl + 1;
        }
        assert_true(longest <= (size_t)(w ? w : 110));
        assert_true(longest > (size_t)(w ? w : 110) - 20);
        assert_true(count >= (w ? 8 : 4));
    }
    rt_stats_free(st);
}

/* A callback that takes one byte at a time gets the same text; one that fails midway stops
 * the writing: an error, and no call after the failed one. */
static void short_and_failing_writes(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/cgroup-oom.jsonl");
    const rt_summary *s = rt_stats_summary(st);
    static sink whole, bytes, failing;
    whole = (sink){0};
    bytes = (sink){.one_byte = 1};
    assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, to_sink, &whole), RT_OK);
    assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, to_sink, &bytes), RT_OK);
    assert_string_equal(bytes.text, whole.text);
    assert_int_equal(bytes.calls, (int)whole.len);
    for (int at = 1; at <= 5; at++) {
        failing = (sink){.fail_at = at};
        assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, to_sink, &failing), RT_ERR_IO);
        assert_int_equal(failing.calls, at);
        assert_true(strncmp(whole.text, failing.text, failing.len) == 0); /* what came before stays */
    }
    rt_stats_free(st);
}

static void to_fd(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    const rt_summary *s = rt_stats_summary(st);
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, to_sink, &k), RT_OK);
    int fd = memfd_create("summary", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(rt_summary_write_text(s, NULL, NULL, fd), RT_OK);
    char back[16384];
    ssize_t n = pread(fd, back, sizeof back - 1, 0);
    assert_int_equal(n, (ssize_t)k.len);
    back[n] = '\0';
    assert_string_equal(back, k.text);
    close(fd);
    /* a closed descriptor: a failed write; a negative one: refused */
    errno = 0;
    assert_int_equal(rt_summary_write_text(s, NULL, NULL, fd), RT_ERR_IO);
    assert_int_equal(errno, EBADF);
    assert_int_equal(rt_summary_write_text(s, NULL, NULL, -1), RT_ERR_INVALID);
    /* a full pipe's reader gone: EPIPE, no crash */
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(rt_summary_write_text(s, NULL, NULL, p[1]), RT_ERR_IO);
    close(p[1]);
    rt_stats_free(st);
}

static void refused(void **state)
{
    (void)state;
    rt_stats *st = fixture_stats("runs/tool.jsonl");
    const rt_summary *s = rt_stats_summary(st);
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(NULL, NULL, NULL, to_sink, &k), RT_ERR_INVALID);
    assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, NULL, &k), RT_ERR_INVALID);
    rt_summary_text_options o = {.struct_size = 0};
    assert_int_equal(rt_summary_write_text_cb(s, NULL, &o, to_sink, &k), RT_ERR_INVALID);
    rt_run_facts run = {.struct_size = 0};
    assert_int_equal(rt_summary_write_text_cb(s, &run, NULL, to_sink, &k), RT_ERR_INVALID);
    assert_int_equal(k.calls, 0);
    /* an older caller's shorter options: the rest take their defaults */
    o = (rt_summary_text_options)RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.struct_size = offsetof(rt_summary_text_options, scheduler);
    o.scheduler = 99;
    assert_int_equal(rt_summary_write_text_cb(s, NULL, &o, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "(SLURM)"));
    /* an empty accumulator: dashes, no crash */
    rt_stats *empty = rt_stats_new();
    k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(empty), NULL, NULL, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "  Samples                    0\n"));
    rt_stats_free(empty);
    rt_stats_free(st);
}

/* The i-th 10 s record of a tree on one core with the machine's joules j (method m), the tree's pj
 * (estimated) and the idle floor. */
static rt_record energy_record(int i, double j, const char *m, double pj, double idle)
{
    rt_record r;
    rt_record_null(&r);
    r.timestamp_secs = 1700000000 + 10 * i;
    r.interval_secs = 10;
    r.process_pid = 42;
    r.process_cores = 1;
    r.energy_joules = j;
    r.energy_method = m;
    r.process_energy_joules = pj;
    r.process_energy_method = "estimated";
    r.idle_power_watts = idle;
    return r;
}

/* The energy and carbon lines among the first ones (brief too), only when the run had energy. */
static void energy_lines(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    for (int i = 1; i <= 2; i++) {
        rt_record r = energy_record(i, 3.6e6, i == 1 ? "measured" : "sampled", 1.8e6, 180.4);
        rt_stats_add(st, &r);
    }
    rt_summary_text_options o = RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.brief = 1;
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "\nEnergy      3.6 MJ (estimated; machine 7.2 MJ sampled, idle floor 180 W)\n"
                                   "Carbon      unknown (set --grid-zone or --grid-intensity)\nRan "));
    rt_grid g = RT_GRID_INIT;
    g.g_per_kwh = 56;
    g.zone = "FR";
    g.source = "Ember yearly electricity data, 2023";
    g.year = 2023;
    assert_int_equal(rt_stats_set_grid(st, &g), RT_OK);
    k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, NULL, to_sink, &k), RT_OK);
    /* the job's 3.6e6 J = 1 kWh at 56 g/kWh = 56 g */
    assert_non_null(strstr(k.text, "\nCarbon      56.0 g CO2e (FR, 56 g/kWh, Ember yearly electricity data, 2023)\n"));
    rt_stats_free(st);

    st = fixture_stats("runs/tool.jsonl"); /* no energy: no such line */
    k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, NULL, to_sink, &k), RT_OK);
    assert_null(strstr(k.text, "Energy"));
    assert_null(strstr(k.text, "Carbon"));
    rt_stats_free(st);
}

/* The energy line by part (0.19): a measured GPU part and an estimated CPU part, each with its
 * figure, method and source, the largest first; then the machine's and its idle floor. */
static void energy_line_by_part(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    for (int i = 1; i <= 2; i++) {
        rt_energy_domain d[] = {
            {.name = "cpu", .kind = "cpu", .source = "model", .method = "estimated", .in_total = 1,
             .energy_joules = 350, .process_energy_joules = 200},
            {.name = "gpu-0", .kind = "gpu", .source = "nvml", .method = "measured", .in_total = 1,
             .energy_joules = 3400, .process_energy_joules = 3400},
        };
        const rt_energy_domain *ptr[] = {&d[0], &d[1]};
        rt_energy e = {.domain = ptr, .domain_count = 2};
        rt_record r = energy_record(i, 3750, "estimated", 3600, 60);
        r.energy = &e;
        rt_stats_add(st, &r);
    }
    rt_summary_text_options o = RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.brief = 1;
    o.width = 200; /* one line */
    sink k = {0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, &k), RT_OK);
    assert_non_null(strstr(k.text, "\nEnergy      7.2 kJ (GPU 6.8 kJ measured by NVML, CPU 400 J estimated; machine "
                                   "7.5 kJ, idle floor 60 W)\n"));
    rt_stats_free(st);
}

/* The text of three records of a tree whose pressure came from group (1), the machine (0);
 * with_limits: the group also told its OOM kills (a limits heading). */
static void pressure_text_of(double group, int with_limits, sink *k)
{
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    for (int i = 0; i < 3; i++) {
        rt_record r;
        rt_record_null(&r);
        r.timestamp_secs = 1700000000 + i;
        r.interval_secs = 1;
        r.process_pid = 42;
        r.process_cores = 1;
        r.process_rss_mib = 100;
        r.process_cgroup_exclusive = 1;
        r.pressure_cpu_some_pct = 4;
        r.pressure_group = group;
        if (with_limits)
            r.cgroup_oom_kills = 0;
        rt_stats_add(st, &r);
    }
    *k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, NULL, to_sink, k), RT_OK);
    rt_stats_free(st);
}

/* Issue 49, item 5: the heading over the pressure says whose it is, from where the records took
 * it: the job's group (a delegated v2 group with no controllers has its pressure files and no
 * limits), else the machine's; under a limits heading, the machine's pressure says so. */
static void pressure_headings(void **state)
{
    (void)state;
    sink k;
    pressure_text_of(1, 0, &k);
    assert_non_null(strstr(k.text, "\nPressure (the job's cgroup)\n  Pressure (mean)            CPU 4% (some)\n"));
    assert_null(strstr(k.text, "machine"));
    pressure_text_of(0, 0, &k);
    assert_non_null(strstr(k.text, "\nPressure (no cgroup of the job's: the machine's)\n"));
    pressure_text_of(0, 1, &k);
    assert_non_null(strstr(k.text, "\nLimits (the job's cgroup)\n  OOM                        no kill\n"
                                   "  Pressure (machine, mean)   CPU 4% (some)\n"));
    pressure_text_of(1, 1, &k);
    assert_non_null(strstr(k.text, "  Pressure (mean)            CPU 4% (some)\n"));
}

/* The text of four records of a tree on one GPU (with_gpm: its work figures, SM 15.9% then 16.2%,
 * the devices' when shared), at width columns; tree 0: the machine alone. */
static void gpu_text_of(int with_gpm, double shared, int tree, size_t width, sink *k)
{
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    for (int i = 0; i < 4; i++) {
        rt_record r;
        rt_record_null(&r);
        r.timestamp_secs = 1700000000 + i;
        r.interval_secs = 1;
        if (tree) {
            r.process_pid = 42;
            r.process_cores = 1;
            r.process_rss_mib = 100;
            r.process_gpu_usage = 0.42;
            r.process_gpu_vram_mib = 33894;
            r.process_gpu_utilized = 1;
        }
        r.gpu_count = 1;
        r.gpu_usage = 0.95;
        r.gpu_vram_mib = 33894;
        r.gpu_vram_total_mib = 143771;
        if (with_gpm) {
            double v[RT_RECORD_NWORK] = {i == 3 ? 16.2 : 15.9, 0.85, 0, 0.5, 0, 2.3, 0, 31457280, NAN};
            rt_record_set_gpu_work(&r, v);
            r.gpu_work_shared = shared;
        }
        rt_stats_add(st, &r);
    }
    rt_summary_text_options o = RT_SUMMARY_TEXT_OPTIONS_INIT;
    o.width = width;
    *k = (sink){0};
    assert_int_equal(rt_summary_write_text_cb(rt_stats_summary(st), NULL, &o, to_sink, k), RT_OK);
    rt_stats_free(st);
}

/* Issue 65: the GPU work line in the job's section (mean, p95 and peak of SM activity; the tensor
 * cores, DRAM and the FP units that worked; PCIe), broken under its column at the width; said to
 * be the devices' when shared; "utilization only" for a GPU without GPM; in the machine's section
 * without a tree. */
static void gpu_work_line(void **state)
{
    (void)state;
    sink k;
    gpu_text_of(1, 0, 1, 200, &k);
    assert_non_null(strstr(k.text, "\n  GPUs used                  1\n"
                                   "  GPU work                   SM 16.0% (p95 16.2, peak 16.2), tensor 0%, DRAM 0.5%, "
                                   "FP32 2.3%; PCIe 30 MiB/s\n"));
    gpu_text_of(1, 0, 1, 80, &k); /* a terminal of 80 columns: under its own column, a figure never cut */
    assert_non_null(strstr(k.text, "  GPU work                   SM 16.0% (p95 16.2, peak 16.2), tensor 0%,\n"
                                   "                             DRAM 0.5%, FP32 2.3%; PCIe 30 MiB/s\n"));
    assert_null(strchr(k.text, '\x1f'));
    gpu_text_of(1, 1, 1, 200, &k);
    assert_non_null(strstr(k.text, "FP32 2.3%; PCIe 30 MiB/s (the devices', shared with other processes)\n"));
    gpu_text_of(0, NAN, 1, 200, &k);
    assert_non_null(strstr(k.text, "\n  GPU work                   utilization only (a kernel was running): this GPU "
                                   "gives no SM or tensor figures (GPM: Hopper and newer)\n"));
    const char *once = strstr(k.text, "utilization only");
    assert_null(strstr(once + 1, "utilization only")); /* said once */
    gpu_text_of(1, NAN, 0, 200, &k); /* no tree: the machine's GPUs, in the machine's section */
    const char *machine = strstr(k.text, "\nMachine\n");
    assert_non_null(machine);
    assert_non_null(strstr(machine, "\n  VRAM used                  mean 33.1 GiB  peak 33.1 GiB\n"
                                    "  GPU work                   SM 16.0% (p95 16.2, peak 16.2)"));
    char b[32];
    assert_string_equal(rt_gw_rate(0, b, sizeof b), "0 B/s");
    assert_string_equal(rt_gw_rate(1536, b, sizeof b), "1.5 KiB/s");
    assert_string_equal(rt_gw_rate(3e9, b, sizeof b), "2.8 GiB/s");
    assert_string_equal(rt_gw_rate(1023.9 * 1048576, b, sizeof b), "1.0 GiB/s");
    assert_string_equal(rt_gw_pct(0, b, sizeof b), "0");
    assert_string_equal(rt_gw_pct(99.96, b, sizeof b), "100.0");
    assert_string_equal(rt_gw_pct(NAN, b, sizeof b), "-");
}

/* Text broken at spaces to a width counted in characters (UTF-8), the later lines indented; a
 * word longer than the width alone on its line; width 0: one line. */
static void text_wrap_at_width(void **state)
{
    (void)state;
    char out[256];
    rt_text_wrap("one two three four", 4, 2, 12, out, sizeof out);
    assert_string_equal(out, "one two\n  three four");
    rt_text_wrap("\xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3\xa9", 0, 0, 7, out, sizeof out); /* 3 columns a word */
    assert_string_equal(out, "\xc3\xa9t\xc3\xa9 \xc3\xa9t\xc3\xa9\n\xc3\xa9t\xc3\xa9");
    rt_text_wrap("a verylongword b", 0, 0, 5, out, sizeof out);
    assert_string_equal(out, "a\nverylongword\nb");
    rt_text_wrap("one two three", 0, 0, 0, out, sizeof out);
    assert_string_equal(out, "one two three");
    char small[8];
    assert_int_equal(rt_text_wrap("one two three", 0, 0, 0, small, sizeof small), 7);
    assert_string_equal(small, "one two");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recorded_run),
        cmocka_unit_test(text_wrap_at_width),
        cmocka_unit_test(facts),
        cmocka_unit_test(units_and_words),
        cmocka_unit_test(width), cmocka_unit_test(brief),
        cmocka_unit_test(short_and_failing_writes),
        cmocka_unit_test(to_fd),
        cmocka_unit_test(refused), cmocka_unit_test(energy_lines), cmocka_unit_test(energy_line_by_part), cmocka_unit_test(pressure_headings), cmocka_unit_test(gpu_work_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
