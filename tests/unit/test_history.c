/* test_history.c - the run history: what cli_history_append stores comes back whole from
 * cli_history_summaries (NaN stays NaN, the 0.6 cgroup figures too), only a job's successful
 * runs, newest first, at most the last N; a version-1 database is read as it is and migrated on
 * its next write; the 0.15 energy comes back with its methods (a figure without one stored as
 * NULL); unusable databases fail with -1 and leave the job alone. */
#include "unit.h"
#include <math.h>
#include <fcntl.h>
#include <sys/wait.h>

#include <jansson.h>

#include "cli.h"
#include "blank_record.h" /* after cli.h: it needs rt_record */
#include "sqlite_dl.h"

static char dir[] = "/tmp/rt-history-XXXXXX";

static int setup(void **state)
{
    (void)state;
    unit_tmpdir(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void db_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* A summary whose figures are all different, derived from k, with some left NaN. */
static rt_summary make_summary(double k)
{
    rt_summary s;
    memset(&s, 0, sizeof s);
    s.samples = (uint64_t)(10 * k);
    s.duration_secs = 60 * k;
    s.has_process = 1;
    s.process_cpu_secs = 30 * k;
    s.process_cores = (rt_dist){0.5 * k, 1.5 * k, 0.4 * k, 1.2 * k};
    s.process_pss_mib = (rt_dist){100 * k, 300 * k, 90 * k, 250 * k};
    s.process_rss_mib = (rt_dist){NAN, 400 * k, NAN, NAN};
    s.process_gpu_usage = (rt_dist){NAN, NAN, NAN, NAN};
    s.process_gpu_vram_mib = (rt_dist){NAN, NAN, NAN, NAN};
    s.process_gpus_used = NAN;
    s.process_read_bytes = 1e6 * k;
    s.process_write_bytes = 2e6 * k;
    s.cpu_count = 8;
    s.cpu_cores = (rt_dist){2 * k, 3 * k, 2.5 * k, 2.9 * k};
    s.memory_used_mib = (rt_dist){1000, 2000, 1100, 1900};
    s.memory_total_mib = 16000;
    s.gpu_usage = (rt_dist){NAN, NAN, NAN, NAN};
    s.gpu_vram_mib = (rt_dist){NAN, NAN, NAN, NAN};
    s.gpu_count = 0;
    s.gpu_vram_total_mib = NAN;
    s.disk_read_bytes = 5;
    s.disk_write_bytes = 6;
    s.net_recv_bytes = 7;
    s.net_sent_bytes = NAN;
    s.disk_space_used_peak_bytes = 8;
    s.disk_space_total_bytes = 9;
    s.allocation = "dedicated";
    /* no cgroup of its own: the 0.6 figures are missing */
    s.process_memory_peak_mib = s.oom_kills = s.oom_kill_secs = s.memory_limit_mib = s.memory_high_mib = NAN;
    s.cpu_quota_cores = s.cpu_periods = s.cpu_throttled_periods = s.cpu_throttled_secs = NAN;
    s.pids_peak = s.pids_limit = NAN;
    s.pressure_cpu_some_pct = s.pressure_memory_some_pct = s.pressure_memory_full_pct = (rt_dist){NAN, NAN, NAN, NAN};
    s.pressure_io_some_pct = s.pressure_io_full_pct = (rt_dist){NAN, NAN, NAN, NAN};
    /* 0.9: a process's peak above the PSS, no group, a few cancelled writes */
    s.process_rss_hwm_mib = 350 * k;
    s.process_unreclaimable_peak_mib = s.process_gpu_vram_peak_mib = NAN;
    s.process_cancelled_write_bytes = 4096;
    s.process_cgroup_exclusive = NAN;
    s.left_behind = 0;
    s.memory_need = (rt_need){350 * k, RT_NEED_PROCESS_PEAK, 0};
    s.vram_need = (rt_need){NAN, RT_NEED_UNKNOWN, 0};
    /* 0.19: the GPUs' work, one figure unknown (no NVLink) */
    s.gpu_sm_active_pct = (rt_dist){15.9 * k, 16.2 * k, 15.9 * k, 16 * k};
    s.gpu_tensor_active_pct = (rt_dist){0, 0, 0, 0};
    s.gpu_dram_active_pct = (rt_dist){0.5, 0.75, 0.5, 0.625};
    s.gpu_sm_occupancy_pct = s.gpu_fp64_active_pct = s.gpu_fp32_active_pct = s.gpu_fp16_active_pct = (rt_dist){1, 2, 1, 2};
    s.gpu_pcie_bytes_per_sec = (rt_dist){3e7, 4e7, 3e7, 4e7};
    s.gpu_nvlink_bytes_per_sec = (rt_dist){NAN, NAN, NAN, NAN};
    s.gpu_work_shared = 1;
    s.process_gpus_busy = 1;
    s.process_gpu_vram_per_gpu_peak_mib = 33894;
    s.gpu_idle_cpu_busy_secs = 2.5 * k;
    s.left_behind_mib = 12.5 * k;
    s.process_exits_counted = 3 * k;
    s.process_unwaited_parents = k;
    return s;
}

/* s as a run in its own cgroup, OOM-killed at 8100 MiB (limit 8192) and throttled in 40% of
 * its periods under a quota of 2 cores (the figures of tests/fixtures/runs/cgroup-oom.jsonl),
 * pressure figures all different, some NaN. */
static void set_cgroup(rt_summary *s)
{
    s->process_pss_mib.peak = 8000;
    s->process_memory_peak_mib = 8100;
    s->oom_kills = 1;
    s->oom_kill_secs = 1700000007;
    s->memory_limit_mib = 8192;
    s->memory_high_mib = NAN;
    s->cpu_quota_cores = 2;
    s->cpu_periods = 80;
    s->cpu_throttled_periods = 32;
    s->cpu_throttled_secs = 4;
    s->pids_peak = 5;
    s->pids_limit = 100;
    s->pressure_cpu_some_pct = (rt_dist){12, 13, 11, 12.5};
    s->pressure_memory_some_pct = (rt_dist){3, 4, NAN, 3.5};
    s->pressure_memory_full_pct = (rt_dist){1, 2, 0.5, 1.5};
    s->pressure_io_some_pct = (rt_dist){0, 0.25, 0, 0.125};
    s->pressure_io_full_pct = (rt_dist){NAN, NAN, NAN, NAN};
}

static int append(const char *path, const char *job_name, int exit_status, const rt_summary *s)
{
    static const char *const tags[] = {"a=b", "team=ml"};
    char *cmd[] = {"python3", "train.py", "--lr=0.1", NULL};
    rt_job job = RT_JOB_INIT;
    job.job_name = job_name;
    job.project_name = "proj";
    job.tags = tags;
    job.tag_count = 2;
    rt_host host = {.hostname = "h1", .host_id = "id", .vcpus = 8, .cpu_model = "cpu", .memory_mib = 16000,
                    .gpu_model = NULL, .gpu_count = RT_NULL_I64, .gpu_memory_mib = NAN, .storage_gb = 100};
    rt_cloud cloud = {.vendor_id = "aws", .region_id = "eu-central-1", .instance_type = "m5.large"};
    cli_run_result r = {.job = &job, .command = cmd, .exit_status = exit_status, .start_secs = 1000,
                        .end_secs = 1000 + s->duration_secs, .host = &host, .cloud = &cloud, .summary = s};
    return cli_history_append(path, &r);
}

static void assert_same(double a, double b)
{
    if (isnan(a) || isnan(b))
        assert_true(isnan(a) && isnan(b));
    else
        assert_true(a == b);
}

static void assert_dist(rt_dist a, rt_dist b)
{
    assert_same(a.mean, b.mean);
    assert_same(a.peak, b.peak);
    assert_same(a.p50, b.p50);
    assert_same(a.p95, b.p95);
}

/* a and b have the same 0.6 figures (NaN where the other has NaN). */
static void assert_cgroup(const rt_summary *a, const rt_summary *b)
{
    assert_same(a->process_memory_peak_mib, b->process_memory_peak_mib);
    assert_same(a->oom_kills, b->oom_kills);
    assert_same(a->oom_kill_secs, b->oom_kill_secs);
    assert_same(a->memory_limit_mib, b->memory_limit_mib);
    assert_same(a->memory_high_mib, b->memory_high_mib);
    assert_same(a->cpu_quota_cores, b->cpu_quota_cores);
    assert_same(a->cpu_periods, b->cpu_periods);
    assert_same(a->cpu_throttled_periods, b->cpu_throttled_periods);
    assert_same(a->cpu_throttled_secs, b->cpu_throttled_secs);
    assert_same(a->pids_peak, b->pids_peak);
    assert_same(a->pids_limit, b->pids_limit);
    assert_dist(a->pressure_cpu_some_pct, b->pressure_cpu_some_pct);
    assert_dist(a->pressure_memory_some_pct, b->pressure_memory_some_pct);
    assert_dist(a->pressure_memory_full_pct, b->pressure_memory_full_pct);
    assert_dist(a->pressure_io_some_pct, b->pressure_io_some_pct);
    assert_dist(a->pressure_io_full_pct, b->pressure_io_full_pct);
}

static void sql_text(const char *path, const char *sql, char *buf, size_t cap);

static void round_trip(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "rt.db");
    rt_summary s[4];
    for (int i = 0; i < 4; i++)
        s[i] = make_summary(i + 1);
    assert_int_equal(append(path, "train", 0, &s[0]), 0);
    assert_int_equal(append(path, "train", 0, &s[1]), 0);
    assert_int_equal(append(path, "other", 0, &s[2]), 0);
    assert_int_equal(append(path, "train", 1, &s[3]), 0); /* failed: never recommended from */

    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, "train", 5, &out, &n), 0);
    assert_int_equal(n, 2);
    /* newest first */
    const rt_summary *a = &out[0], *b = &s[1];
    assert_string_equal(a->job_name, "train");
    assert_string_equal(out[1].job_name, "train");
    assert_string_equal(a->allocation, "dedicated");
    assert_int_equal(a->samples, b->samples);
    assert_true(a->has_process);
    assert_same(a->start_secs, 1000);
    assert_same(a->end_secs, 1000 + b->duration_secs);
    assert_same(a->duration_secs, b->duration_secs);
    assert_same(a->process_cpu_secs, b->process_cpu_secs);
    assert_dist(a->process_cores, b->process_cores);
    assert_dist(a->process_pss_mib, b->process_pss_mib);
    assert_dist(a->process_rss_mib, b->process_rss_mib);
    assert_dist(a->process_gpu_usage, b->process_gpu_usage);
    assert_dist(a->process_gpu_vram_mib, b->process_gpu_vram_mib);
    assert_dist(a->cpu_cores, b->cpu_cores);
    assert_dist(a->memory_used_mib, b->memory_used_mib);
    assert_dist(a->gpu_usage, b->gpu_usage);
    assert_same(a->process_gpus_used, b->process_gpus_used);
    assert_same(a->process_read_bytes, b->process_read_bytes);
    assert_same(a->process_write_bytes, b->process_write_bytes);
    assert_same(a->cpu_count, 8);
    assert_same(a->memory_total_mib, 16000);
    assert_same(a->gpu_count, 0);
    assert_same(a->gpu_vram_total_mib, NAN);
    assert_same(a->net_recv_bytes, 7);
    assert_same(a->net_sent_bytes, NAN);
    assert_same(a->disk_space_total_bytes, 9);
    assert_cgroup(a, b); /* all NaN */
    assert_same(out[1].process_cores.mean, s[0].process_cores.mean);
    /* 0.9: the need with its source, and what it is made from */
    assert_same(a->process_rss_hwm_mib, b->process_rss_hwm_mib);
    assert_same(a->process_unreclaimable_peak_mib, NAN);
    assert_same(a->process_cancelled_write_bytes, 4096);
    assert_same(a->process_cgroup_exclusive, NAN);
    assert_same(a->left_behind, 0);
    assert_same(a->memory_need.mib, b->memory_need.mib);
    assert_int_equal(a->memory_need.source, RT_NEED_PROCESS_PEAK);
    assert_int_equal(a->memory_need.sampled, 0);
    assert_same(a->vram_need.mib, NAN);
    assert_int_equal(a->vram_need.source, RT_NEED_UNKNOWN);
    /* 0.19: the GPUs' work (schema version 9) */
    assert_dist(a->gpu_sm_active_pct, b->gpu_sm_active_pct);
    assert_dist(a->gpu_sm_occupancy_pct, b->gpu_sm_occupancy_pct);
    assert_dist(a->gpu_tensor_active_pct, b->gpu_tensor_active_pct);
    assert_dist(a->gpu_dram_active_pct, b->gpu_dram_active_pct);
    assert_dist(a->gpu_fp64_active_pct, b->gpu_fp64_active_pct);
    assert_dist(a->gpu_fp32_active_pct, b->gpu_fp32_active_pct);
    assert_dist(a->gpu_fp16_active_pct, b->gpu_fp16_active_pct);
    assert_dist(a->gpu_pcie_bytes_per_sec, b->gpu_pcie_bytes_per_sec);
    assert_dist(a->gpu_nvlink_bytes_per_sec, b->gpu_nvlink_bytes_per_sec);
    assert_same(a->gpu_work_shared, 1);
    assert_same(a->process_gpus_busy, 1);
    assert_same(a->process_gpu_vram_per_gpu_peak_mib, 33894);
    assert_same(a->gpu_idle_cpu_busy_secs, b->gpu_idle_cpu_busy_secs);
    assert_same(a->left_behind_mib, b->left_behind_mib);
    assert_same(a->process_exits_counted, b->process_exits_counted);
    assert_same(a->process_unwaited_parents, b->process_unwaited_parents);
    rt_history_free(out);
    /* the notes, as JSON: no cgroup of its own */
    char text[2048];
    sql_text(path, "SELECT notes FROM runs WHERE id = 1", text, sizeof text);
    assert_non_null(strstr(text, "\"kind\":\"accounting_incomplete\""));

    assert_int_equal(cli_history_summaries(path, "train", 1, &out, &n), 0);
    assert_int_equal(n, 1);
    assert_same(out[0].process_cores.mean, s[1].process_cores.mean);
    rt_history_free(out);

    assert_int_equal(cli_history_summaries(path, NULL, 0, &out, &n), 0); /* any job, no limit */
    assert_int_equal(n, 3);
    assert_string_equal(out[0].job_name, "other");
    rt_history_free(out);

    assert_int_equal(cli_history_summaries(path, "nobody", 5, &out, &n), 0);
    assert_int_equal(n, 0);
    assert_null(out);
}

/* A run without a tracked tree, host, cloud, tags or summary stores NULLs, and comes back
 * without has_process; an rt_job compiled shorter than ours is read only within its size. */
static void sparse_run(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "sparse.db");
    rt_job job = RT_JOB_INIT;
    job.job_name = "machine";
    job.team = "never read";
    job.struct_size = offsetof(rt_job, task_name) + sizeof(char *);
    cli_run_result r = {.job = &job, .exit_status = 0, .start_secs = 5, .end_secs = 6};
    assert_int_equal(cli_history_append(path, &r), 0);
    rt_summary s = make_summary(1);
    s.has_process = 0;
    s.process_cores = s.process_pss_mib = (rt_dist){NAN, NAN, NAN, NAN};
    s.process_cpu_secs = NAN;
    s.allocation = NULL;
    r.summary = &s;
    r.exit_status = -1; /* the machine, not a command: no exit status */
    assert_int_equal(cli_history_append(path, &r), 0);
    r.exit_status = 0;
    assert_int_equal(cli_history_append(path, &r), 0);
    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, "machine", 5, &out, &n), 0);
    assert_int_equal(n, 2); /* the one without an exit status is not a successful run */
    assert_false(out[0].has_process);
    assert_null(out[0].allocation);
    assert_same(out[0].memory_total_mib, 16000);
    assert_false(out[1].has_process); /* no summary at all */
    assert_int_equal(out[1].samples, 0);
    assert_same(out[1].duration_secs, NAN);
    rt_history_free(out);
}

static void unusable(void **state)
{
    (void)state;
    char path[512];
    rt_summary s = make_summary(1);
    /* a directory, a missing directory: one warning each, -1 */
    assert_int_equal(append(dir, "j", 0, &s), -1);
    db_path(path, sizeof path, "no/such/h.db");
    assert_int_equal(append(path, "j", 0, &s), -1);
    /* garbage content */
    unit_put(dir, "junk.db", "this is not an SQLite database, not even close..................................");
    db_path(path, sizeof path, "junk.db");
    assert_int_equal(append(path, "j", 0, &s), -1);
    rt_summary *out = (rt_summary *)&s;
    size_t n = 99;
    assert_int_equal(cli_history_summaries(path, "j", 5, &out, &n), -1);
    assert_null(out);
    assert_int_equal(n, 0);
    /* missing, and a database without the runs table */
    db_path(path, sizeof path, "missing.db");
    assert_int_equal(cli_history_summaries(path, "j", 5, &out, &n), -1);
    assert_int_equal(access(path, F_OK), -1); /* reading never creates */
    unit_put(dir, "empty.db", "");
    db_path(path, sizeof path, "empty.db");
    assert_int_equal(cli_history_summaries(path, "j", 5, &out, &n), -1);
}

/* Runs sql on the database at path (created when missing) through the loaded SQLite. */
static void sql_on(const char *path, const char *sql)
{
    char err[256];
    assert_int_equal(rt_sqlite_load(err, sizeof err), RT_OK);
    sqlite3 *db = NULL;
    assert_int_equal(rt_sqlite_calls()->open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    assert_int_equal(rt_sqlite_calls()->exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    rt_sqlite_calls()->close(db);
}

/* The first column of the first row of sql on the database at path, as text into buf. */
static void sql_text(const char *path, const char *sql, char *buf, size_t cap)
{
    char err[256];
    assert_int_equal(rt_sqlite_load(err, sizeof err), RT_OK);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(rt_sqlite_calls()->open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(rt_sqlite_calls()->prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(rt_sqlite_calls()->step(st), SQLITE_ROW);
    const unsigned char *t = rt_sqlite_calls()->column_text(st, 0);
    snprintf(buf, cap, "%s", t ? (const char *)t : "NULL");
    rt_sqlite_calls()->finalize(st);
    rt_sqlite_calls()->close(db);
}

static size_t runs_of(const char *path, const char *job)
{
    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, job, 0, &out, &n), 0);
    rt_history_free(out);
    return n;
}

/* A database stamped by a newer tool is read but never written: its columns may mean what
 * this version does not know. */
static void newer_schema(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "newer.db");
    rt_summary s = make_summary(1);
    assert_int_equal(append(path, "train", 0, &s), 0);
    sql_on(path, "PRAGMA user_version = 13");
    assert_int_equal(append(path, "train", 0, &s), -1);
    assert_int_equal(runs_of(path, "train"), 1);
    sql_on(path, "PRAGMA user_version = 12"); /* ours again: written */
    assert_int_equal(append(path, "train", 0, &s), 0);
    assert_int_equal(runs_of(path, "train"), 2);
}

/* The runs table exactly as schema version 1 (0.5) created it. */
static const char v1_schema[] =
    "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, start_secs REAL, end_secs REAL, "
    "tool_version TEXT, job_name TEXT, project_name TEXT, stage_name TEXT, task_name TEXT, team TEXT, "
    "env TEXT, language TEXT, orchestrator TEXT, executor TEXT, external_run_id TEXT, "
    "container_image TEXT, tags TEXT, command TEXT, pid INTEGER, exit_status INTEGER, "
    "host_hostname TEXT, host_id TEXT, host_vcpus INTEGER, host_cpu_model TEXT, host_memory_mib REAL, "
    "host_gpu_model TEXT, host_gpu_count INTEGER, host_gpu_memory_mib REAL, host_allocation TEXT, "
    "cloud_vendor_id TEXT, cloud_region_id TEXT, cloud_zone_id TEXT, cloud_instance_type TEXT, "
    "samples INTEGER, duration_secs REAL, process_cpu_secs REAL, process_cores_mean REAL, "
    "process_cores_peak REAL, process_cores_p50 REAL, process_cores_p95 REAL, process_pss_mib_mean REAL, "
    "process_pss_mib_peak REAL, process_pss_mib_p50 REAL, process_pss_mib_p95 REAL, "
    "process_rss_mib_mean REAL, process_rss_mib_peak REAL, process_rss_mib_p50 REAL, "
    "process_rss_mib_p95 REAL, process_gpu_usage_mean REAL, process_gpu_usage_peak REAL, "
    "process_gpu_usage_p50 REAL, process_gpu_usage_p95 REAL, process_gpu_vram_mib_mean REAL, "
    "process_gpu_vram_mib_peak REAL, process_gpu_vram_mib_p50 REAL, process_gpu_vram_mib_p95 REAL, "
    "process_gpus_used REAL, process_read_bytes REAL, process_write_bytes REAL, cpu_count REAL, "
    "cpu_cores_mean REAL, cpu_cores_peak REAL, cpu_cores_p50 REAL, cpu_cores_p95 REAL, "
    "memory_used_mib_mean REAL, memory_used_mib_peak REAL, memory_used_mib_p50 REAL, "
    "memory_used_mib_p95 REAL, memory_total_mib REAL, gpu_usage_mean REAL, gpu_usage_peak REAL, "
    "gpu_usage_p50 REAL, gpu_usage_p95 REAL, gpu_vram_mib_mean REAL, gpu_vram_mib_peak REAL, "
    "gpu_vram_mib_p50 REAL, gpu_vram_mib_p95 REAL, gpu_count REAL, gpu_vram_total_mib REAL, "
    "disk_read_bytes REAL, disk_write_bytes REAL, net_recv_bytes REAL, net_sent_bytes REAL, "
    "disk_space_used_peak_bytes REAL, disk_space_total_bytes REAL, allocation TEXT, summary_json TEXT);"
    "CREATE INDEX runs_job ON runs (job_name, exit_status, id);"
    "PRAGMA user_version = 1;";

/* The columns of the runs table at path, "name type,..." in table order, into buf. */
static void columns_of(const char *path, char *buf, size_t cap)
{
    sql_text(path, "SELECT group_concat(name || ' ' || type, ',') FROM pragma_table_info('runs')", buf, cap);
}

/* A run in its own cgroup, OOM-killed and throttled: its 0.6 figures come back whole, and the
 * recommendation from the history keeps the memory above the kill and a core above the quota. */
static void cgroup_round_trip(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "cgroup.db");
    rt_summary s = make_summary(1);
    set_cgroup(&s);
    assert_int_equal(append(path, "oom", 0, &s), 0);
    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, "oom", 1, &out, &n), 0);
    assert_int_equal(n, 1);
    assert_cgroup(&out[0], &s);
    assert_same(out[0].process_pss_mib.peak, 8000);
    const rt_summary *runs[] = {&out[0]};
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &rec), RT_OK);
    assert_true(rec.oom_killed);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(2 * 8192)); /* twice the limit it died at: to learn */
    assert_true(rec.memory_learn);
    assert_int_equal(rec.cpu, 3);                                       /* a core above the quota of 2 */
    assert_same(rec.cpu_quota_cores, 2);
    assert_same(rec.cpu_throttled_pct, 40);
    rt_history_free(out);
}

/* A version-1 database (0.5's): read as it is (the 0.6 figures NaN, nothing changed by
 * reading), then migrated by the next write: its columns become a new database's, its old row
 * is intact, the new row has the 0.6 figures. */
static void version1_migrates(void **state)
{
    (void)state;
    char path[512], fresh[512], text[8192], want[8192];
    db_path(path, sizeof path, "v1.db");
    db_path(fresh, sizeof fresh, "v2.db");
    sql_on(path, v1_schema);
    sql_on(path, "INSERT INTO runs (job_name, exit_status, samples, start_secs, end_secs, duration_secs,"
                 " process_cpu_secs, process_cores_mean, process_pss_mib_peak, allocation)"
                 " VALUES ('train', 0, 10, 1000, 1060, 60, 90, 1.5, 3000, 'shared')");
    columns_of(path, want, sizeof want);

    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, "train", 5, &out, &n), 0);
    assert_int_equal(n, 1);
    assert_true(out[0].has_process);
    assert_int_equal(out[0].samples, 10);
    assert_same(out[0].process_cores.mean, 1.5);
    assert_same(out[0].process_pss_mib.peak, 3000);
    assert_string_equal(out[0].allocation, "shared");
    rt_summary none = make_summary(1); /* the 0.6 figures all NaN */
    assert_cgroup(&out[0], &none);
    rt_history_free(out);
    sql_text(path, "PRAGMA user_version", text, sizeof text);
    assert_string_equal(text, "1");
    columns_of(path, text, sizeof text);
    assert_string_equal(text, want); /* reading added nothing */

    rt_summary s = make_summary(2);
    set_cgroup(&s);
    assert_int_equal(append(path, "train", 0, &s), 0);
    sql_text(path, "PRAGMA user_version", text, sizeof text);
    assert_string_equal(text, "12");
    columns_of(path, text, sizeof text); /* version 4's to 12's columns at the end */
    char *v4 = strstr(text, ",phases TEXT,phase_marks TEXT,energy_joules REAL,energy_method TEXT,");
    assert_non_null(v4);
    assert_non_null(strstr(text, ",grid_g_per_kwh REAL,grid_zone TEXT,grid_source TEXT,place TEXT,"));
    assert_non_null(strstr(text, ",time_limit_used_pct REAL,process_vms_peak_mib REAL,cores TEXT,member TEXT,"
                                 "gpu_sm_active_pct_mean REAL,gpu_sm_active_pct_peak REAL,"));
    const char *v6_end = ",gpu_work_shared REAL,process_gpus_busy REAL,process_gpu_vram_per_gpu_peak_mib REAL,"
                         "gpu_idle_cpu_busy_secs REAL,memory_refault_mib REAL,left_behind_mib REAL,process_exits_counted REAL,"
                         "process_unwaited_parents REAL,end_signal REAL,run_uuid TEXT,user_name TEXT,user_uid INTEGER,"
                         "node TEXT,job_id TEXT";
    size_t tl = strlen(text), sl = strlen(v6_end);
    assert_true(tl > sl);
    assert_string_equal(text + tl - sl, v6_end);
    assert_int_equal(append(fresh, "train", 0, &s), 0);
    columns_of(path, text, sizeof text);
    columns_of(fresh, want, sizeof want);
    assert_string_equal(text, want); /* the same columns in the same order as a new database */

    assert_int_equal(cli_history_summaries(path, "train", 5, &out, &n), 0);
    assert_int_equal(n, 2);
    assert_cgroup(&out[0], &s);
    assert_same(out[0].process_cores.mean, s.process_cores.mean);
    assert_same(out[1].process_cores.mean, 1.5); /* the old row */
    assert_same(out[1].process_pss_mib.peak, 3000);
    assert_same(out[1].duration_secs, 60);
    assert_cgroup(&out[1], &none);
    const rt_summary *runs[] = {&out[0], &out[1]};
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 2, &rec), RT_OK);
    assert_true(rec.oom_killed);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(2 * 8192)); /* the old run needed less: no lesson */
    assert_int_equal(rec.cpu, 3);
    rt_history_free(out);
}

/* Schema version 4: the run's phases and mark counts, taken from the summary's JSON (NULL for a
 * run without marks), and `history --json` gives them as JSON, not as strings. */
static void phases_columns(void **state)
{
    (void)state;
    char path[512], out[512], text[8192];
    db_path(path, sizeof path, "phases.db");
    db_path(out, sizeof out, "phases.out");
    rt_summary s = make_summary(1);
    assert_int_equal(append(path, "train", 0, &s), 0);
    sql_text(path, "SELECT coalesce(phases, 'null') || ' ' || coalesce(phase_marks, 'null') FROM runs", text,
             sizeof text);
    assert_string_equal(text, "null null"); /* no mark came: NULL, as the summary's null */
    sql_on(path, "UPDATE runs SET phases = '[{\"name\":\"train\",\"calls\":2}]', "
                 "phase_marks = '{\"accepted\":4,\"unknown_stop\":1}'");
    char *args[] = {"--json", "--history", path, NULL};
    cli_options o = {0};
    o.sub_args = args;
    o.nsub = 3;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    int rc = cli_history_main(&o);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(fd);
    assert_int_equal(rc, 0);
    json_t *row = json_load_file(out, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(row);
    json_t *ph = json_object_get(row, "phases"), *pm = json_object_get(row, "phase_marks");
    assert_true(json_is_array(ph));
    assert_string_equal(json_string_value(json_object_get(json_array_get(ph, 0), "name")), "train");
    assert_true(json_is_object(pm));
    assert_int_equal(json_integer_value(json_object_get(pm, "unknown_stop")), 1);
    json_decref(row);
}

/* Schema version 5: the run's energy with its methods, power, idle floor, GPU throttle time and
 * carbon with the grid come back whole; a figure whose method is missing is stored as NULL
 * (never a number without its method), and so is the grid when its intensity was unknown. */
static void energy_columns(void **state)
{
    (void)state;
    char path[512], text[512];
    db_path(path, sizeof path, "energy.db");
    rt_grid grid = RT_GRID_INIT;
    grid.g_per_kwh = 400;
    grid.zone = "FR";
    grid.source = "given";
    rt_summary s = make_summary(1);
    s.energy_joules = 7200;
    s.energy_method = "measured";
    s.process_energy_joules = 3600;
    s.process_energy_method = "estimated";
    s.power_watts = (rt_dist){120, 180, 110, 170};
    s.process_power_watts = (rt_dist){60, 90, NAN, 85};
    s.idle_power_watts = 40;
    s.gpu_power_throttled_secs = 3;
    s.gpu_thermal_throttled_secs = NAN;
    s.co2e_grams = 0.8;
    s.process_co2e_grams = 0.4;
    s.grid = &grid;
    assert_int_equal(append(path, "train", 0, &s), 0);
    rt_summary t = make_summary(2); /* a figure without its method, no grid */
    t.energy_joules = 5;
    t.energy_method = NULL;
    t.co2e_grams = 1;
    t.process_energy_joules = 2;
    t.process_energy_method = "sampled";
    t.process_co2e_grams = NAN;
    t.power_watts = t.process_power_watts = (rt_dist){NAN, NAN, NAN, NAN};
    t.idle_power_watts = t.gpu_power_throttled_secs = t.gpu_thermal_throttled_secs = NAN;
    assert_int_equal(append(path, "train", 0, &t), 0);

    sql_text(path, "SELECT grid_g_per_kwh || ' ' || grid_zone || ' ' || grid_source FROM runs WHERE id = 1", text,
             sizeof text);
    assert_string_equal(text, "400.0 FR given");
    sql_text(path,
             "SELECT coalesce(energy_joules, 'null') || ' ' || coalesce(co2e_grams, 'null') || ' ' ||"
             " coalesce(grid_g_per_kwh, 'null') || ' ' || coalesce(grid_source, 'null') FROM runs WHERE id = 2",
             text, sizeof text);
    assert_string_equal(text, "null null null null");

    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, "train", 5, &out, &n), 0);
    assert_int_equal(n, 2);
    const rt_summary *a = &out[1]; /* the first run (newest first) */
    assert_same(a->energy_joules, 7200);
    assert_string_equal(a->energy_method, "measured");
    assert_same(a->process_energy_joules, 3600);
    assert_string_equal(a->process_energy_method, "estimated");
    assert_dist(a->power_watts, s.power_watts);
    assert_dist(a->process_power_watts, s.process_power_watts);
    assert_same(a->idle_power_watts, 40);
    assert_same(a->gpu_power_throttled_secs, 3);
    assert_same(a->gpu_thermal_throttled_secs, NAN);
    assert_same(a->co2e_grams, 0.8);
    assert_same(a->process_co2e_grams, 0.4);
    assert_null(a->grid);
    const rt_summary *b = &out[0];
    assert_same(b->energy_joules, NAN);
    assert_null(b->energy_method);
    assert_same(b->co2e_grams, NAN);
    assert_same(b->process_energy_joules, 2);
    assert_string_equal(b->process_energy_method, "sampled");
    assert_same(b->idle_power_watts, NAN);
    rt_history_free(out);

    /* a method another writer spelled otherwise: the figure is not believed */
    sql_on(path, "UPDATE runs SET process_energy_method = 'guessed' WHERE id = 2");
    assert_int_equal(cli_history_summaries(path, "train", 1, &out, &n), 0);
    assert_int_equal(n, 1);
    assert_null(out[0].process_energy_method);
    assert_same(out[0].process_energy_joules, NAN);
    rt_history_free(out);
}

/* An infinite figure is stored as NULL (comes back NaN), like NaN. */
static void infinite_figures(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "inf.db");
    rt_summary s = make_summary(1);
    s.process_read_bytes = INFINITY;
    s.cpu_cores.peak = -INFINITY;
    assert_int_equal(append(path, "train", 0, &s), 0);
    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, "train", 1, &out, &n), 0);
    assert_int_equal(n, 1);
    assert_same(out[0].process_read_bytes, NAN);
    assert_same(out[0].cpu_cores.peak, NAN);
    assert_same(out[0].cpu_cores.mean, s.cpu_cores.mean);
    rt_history_free(out);
}

/* Without SQLite (another library named to the loader, in a fresh process: the load happens
 * once per process): appending is one warning and -1, and creates nothing; reading is -1. */
static int without_sqlite(const char *d)
{
    char path[512];
    snprintf(path, sizeof path, "%s/none.db", d);
    rt_sqlite_use("libno-such-sqlite3.so.0");
    rt_summary s = make_summary(1), *out = NULL;
    size_t n = 7;
    if (append(path, "j", 0, &s) != -1 || access(path, F_OK) == 0)
        return 1;
    unit_put(d, "there.db", "");
    snprintf(path, sizeof path, "%s/there.db", d);
    if (cli_history_summaries(path, "j", 5, &out, &n) != -1 || out || n != 0)
        return 2;
    rt_sqlite_use("libm.so.6"); /* no effect once loaded (failed): still -1 */
    return append(path, "j", 0, &s) == -1 ? 0 : 3;
}

/* This program, as started (under valgrind /proc/self/exe is valgrind). */
static const char *self_path = "/proc/self/exe";

static void loader_missing(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(self_path, "test_history", "--without-sqlite", dir, (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* got within eps of want */
static void near(double got, double want, double eps)
{
    if (!(fabs(got - want) <= eps))
        fail_msg("%.17g, want %.17g (within %g)", got, want, eps);
}

/* The run's table under other core counts (schema 7) comes back from the history row for row,
 * and the recommendation from the history is the file's: made from the table. */
static void cores_round_trip(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "cores.db");
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 20; i++) { /* 10 s on one core, then 10 s on two, on a machine of 4 */
        rt_record r = blank_record(1000 + i, 1);
        r.process_pid = 7;
        r.process_cores = i < 10 ? 1 : 2;
        r.process_pss_mib = 100;
        r.cpu_count = 4;
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_non_null(s->cores);
    assert_int_equal(append(path, "train", 0, s), 0);
    rt_summary *out = NULL;
    size_t n = 0;
    assert_int_equal(cli_history_summaries(path, "train", 5, &out, &n), 0);
    assert_int_equal(n, 1);
    const rt_cores_table *t = out[0].cores;
    assert_non_null(t);
    assert_int_equal(t->n, s->cores->n);
    near(t->duration_secs, s->cores->duration_secs, 1e-9);
    near(t->cores_had, 4, 0);
    for (size_t c = 0; c < t->n; c++) {
        assert_int_equal(t->rows[c].cores, (int64_t)c + 1);
        near(t->rows[c].duration_secs, s->cores->rows[c].duration_secs, 1e-6);
        assert_int_equal(t->rows[c].wait_bound, s->cores->rows[c].wait_bound);
    }
    rt_recommendation a = RT_RECOMMENDATION_INIT, b = RT_RECOMMENDATION_INIT;
    const rt_summary *from_file[] = {s}, *from_history[] = {&out[0]};
    assert_int_equal(rt_recommend(from_file, 1, &a), RT_OK);
    assert_int_equal(rt_recommend(from_history, 1, &b), RT_OK);
    assert_int_equal(b.cpu, 2);
    assert_int_equal(a.cpu, b.cpu);
    assert_string_equal(b.cpu_basis, "duration");
    near(b.cpu_fewer_duration_secs, 30, 1e-6);
    rt_history_free(out);
    rt_stats_free(st);
}

/* A node's place in a job of several (schema 8) comes back from the history: its member's strings
 * and numbers, per_node; a run of no such job has none. */
static void member_round_trip(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "member.db");
    rt_member m = RT_MEMBER_INIT;
    m.job_id = "4711";
    m.step_id = "0";
    m.node = "rtnode2";
    m.rank = 3;
    m.local_rank = 0;
    m.ranks = 4;
    m.nodes = 2;
    m.node_index = 1;
    m.from = "slurm";
    m.per_node = 1;
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 5; i++) {
        rt_record r = blank_record(1000 + i, 1);
        r.process_pid = 7;
        r.process_cores = 1;
        r.process_pss_mib = 100;
        r.member = &m;
        rt_stats_add(st, &r);
    }
    rt_summary plain = make_summary(1);
    assert_int_equal(append(path, "train", 0, &plain), 0);
    assert_int_equal(append(path, "train", 0, rt_stats_summary(st)), 0);
    rt_summary *out = NULL;
    size_t n = 0;
    assert_int_equal(cli_history_summaries(path, "train", 5, &out, &n), 0);
    assert_int_equal(n, 2);
    const rt_member *b = out[0].member; /* newest first */
    assert_non_null(b);
    assert_string_equal(b->job_id, "4711");
    assert_string_equal(b->step_id, "0");
    assert_string_equal(b->node, "rtnode2");
    assert_string_equal(b->from, "slurm");
    assert_int_equal(b->rank, 3);
    assert_int_equal(b->local_rank, 0);
    assert_int_equal(b->ranks, 4);
    assert_int_equal(b->nodes, 2);
    assert_int_equal(b->node_index, 1);
    assert_int_equal(b->per_node, 1);
    assert_null(out[1].member);
    rt_history_free(out);
    rt_stats_free(st);
}

/* What recommend --job asks of the job's last 5 runs in the history at path (into *rec); how many
 * runs it had. */
static size_t recommend_job(const char *path, const char *job, rt_recommendation *rec)
{
    rt_summary *out;
    size_t n;
    assert_int_equal(cli_history_summaries(path, job, 5, &out, &n), 0);
    assert_true(n > 0 && n <= 5);
    const rt_summary *runs[5];
    for (size_t i = 0; i < n; i++)
        runs[i] = &out[i];
    assert_int_equal(rt_recommend(runs, n, rec), RT_OK);
    rt_history_free(out);
    return n;
}

/* 0.20, recommend --job after a kill: a run OOM-killed at its 768 MiB limit puts twice the limit
 * under the ask while the later runs that finished ran under no larger limit; one that finished
 * under a larger limit sets the need (never below the killed run's limit + 20%). A run that ran to
 * its time limit (the scheduler's SIGTERM: 143) is among the runs given, its duration a floor; a
 * run that failed otherwise is not. */
static void kills_and_time_limits(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "kills.db");
    rt_summary k = make_summary(1), ok = make_summary(1), bad = make_summary(1), t = make_summary(1);
    k.oom_kills = 1;
    k.memory_limit_mib = 768;
    k.process_memory_peak_mib = 768;
    ok.oom_kills = bad.oom_kills = t.oom_kills = 0;
    ok.memory_limit_mib = 768;
    assert_int_equal(append(path, "heap", 137, &k), 0);
    assert_int_equal(append(path, "heap", 0, &ok), 0);
    assert_int_equal(append(path, "heap", 1, &bad), 0); /* failed: not a run to learn from */
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(recommend_job(path, "heap", &rec), 2);
    assert_int_equal(rec.memory_mib, 2048); /* 2 x 768, rounded: never the 1 GiB that kills it again */
    assert_true(rec.memory_learn);
    /* ran to its time limit of 60 s and was ended (SIGTERM, 143): given, asked twice its time */
    t.time_limit_secs = 60;
    t.time_limit_from = "SLURM_JOB_END_TIME";
    t.time_limit_used_pct = 100;
    assert_int_equal(append(path, "heap", 143, &t), 0);
    assert_int_equal(recommend_job(path, "heap", &rec), 3);
    assert_same(rec.time_floor_secs, 60);
    assert_true(rec.time_limit_secs >= 120);
    assert_int_equal(rec.memory_mib, 2048);
    /* 0.21: no limit known, ended by SIGTERM (a preemption): given too, its duration the floor;
     * one a person's SIGINT ended is not */
    rt_summary pre = make_summary(1), intr = make_summary(1);
    pre.oom_kills = intr.oom_kills = 0;
    pre.end_signal = 15;
    pre.duration_secs = 90;
    intr.end_signal = 2;
    intr.duration_secs = 500;
    assert_int_equal(append(path, "heap", 143, &pre), 0);
    assert_int_equal(append(path, "heap", 130, &intr), 0);
    assert_int_equal(recommend_job(path, "heap", &rec), 4);
    assert_same(rec.time_floor_secs, 90);
    assert_true(rec.time_limit_secs >= 180);
    /* a later run that finished under a larger limit (4096) and needed 2000 MiB: the need is known */
    rt_summary big = make_summary(1);
    big.oom_kills = 0;
    big.memory_limit_mib = 4096;
    big.memory_need = (rt_need){2000, RT_NEED_CGROUP, 0};
    assert_int_equal(append(path, "heap", 0, &big), 0);
    assert_int_equal(recommend_job(path, "heap", &rec), 5);
    assert_false(rec.memory_learn);
    assert_same(rec.memory_floor_mib, rt_round_memory_mib(768 * 1.2));
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(2000 * 1.125));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--without-sqlite") == 0)
        return without_sqlite(argv[2]);
    self_path = argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(sparse_run),
        cmocka_unit_test(unusable),
        cmocka_unit_test(newer_schema),
        cmocka_unit_test(infinite_figures),
        cmocka_unit_test(cgroup_round_trip),
        cmocka_unit_test(kills_and_time_limits),
        cmocka_unit_test(cores_round_trip),
        cmocka_unit_test(member_round_trip),
        cmocka_unit_test(version1_migrates),
        cmocka_unit_test(phases_columns),
        cmocka_unit_test(energy_columns),
        cmocka_unit_test(loader_missing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
