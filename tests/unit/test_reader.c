/* test_reader.c - the reader of recorded runs (analysis/reader.c) and its JSON scanner
 * (analysis/jsonline.c): every format mapped field by field against the hand values of
 * tests/fixtures/runs, a replayed sample written in both formats and read back against
 * rt_record_from_sample, malformed lines counted and logged as FILE:LINE, unknown files, long
 * lines, the scanner checked against jansson on every fixture line and many mutations, and a
 * sample's energy (0.15) written as a JSON line and as CSV and read back into the record, and a
 * CSV's columns named twice or unknown. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"
#include "analysis/jsonline.h"
#include "core/gzip.h"
#include "core/jsonscan.h"
#include "analysis/reader_test.h"
#include "jline_oracle.h"
#include "unit_replay.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define GB 1e9

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct logs {
    int n;
    char text[64][256];
} logs;

static void collect(void *user, rt_log_level level, const char *msg)
{
    logs *l = user;
    assert_true(level == RT_LOG_WARN || level == RT_LOG_ERROR); /* malformed lines warn; a file that cannot be read is an error */
    if (l->n < 64)
        snprintf(l->text[l->n], sizeof l->text[0], "%s", msg);
    l->n++;
}

/* Opens path with its messages into lg. */
static rt_error open_logged(const char *path, logs *lg, rt_reader **r)
{
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    o.log = collect;
    o.log_user = lg;
    return rt_reader_open(path, &o, r);
}

/* Reads the fixture runs/rel into recs (at most max). Returns the record count. */
static size_t read_all(const char *path, rt_record *recs, size_t max, logs *lg, const char **format,
                       uint64_t *skipped)
{
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    o.log = collect;
    o.log_user = lg;
    rt_reader *r;
    assert_int_equal(rt_reader_open(path, &o, &r), RT_OK);
    static char fmt[32];
    snprintf(fmt, sizeof fmt, "%s", rt_reader_format(r));
    if (format)
        *format = fmt;
    const rt_record *rec;
    size_t n = 0;
    static char jobs[16][64];
    while (rt_reader_next(r, &rec) == RT_OK && rec) {
        if (n < max) {
            recs[n] = *rec;
            if (rec->job_name) { /* valid only until the next call */
                snprintf(jobs[n % 16], sizeof jobs[0], "%s", rec->job_name);
                recs[n].job_name = jobs[n % 16];
            }
        }
        n++;
    }
    assert_int_equal(rt_reader_records(r), n);
    if (skipped)
        *skipped = rt_reader_skipped(r);
    rt_reader_close(r);
    return n;
}

static const char *fx(const char *rel)
{
    static char path[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[0], "%s/runs/%s", RT_FIXTURES, rel);
    return path[k];
}

#define assert_num(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1, fabs((double)(b))))
#define assert_nan(a) assert_true(isnan(a))

/* The figures both the JSON and the CSV fixture have, for sample i (1..3). */
static void check_common(const rt_record *r, int i)
{
    assert_num(r->timestamp_secs, 1700000000 + i);
    assert_num(r->cpu_cores, i);
    assert_num(r->memory_used_mib, 1000 * i);
    assert_num(r->disk_read_bytes, 1000 * i);
    assert_num(r->disk_write_bytes, 2000 * i);
    assert_num(r->net_recv_bytes, 1000 * i);
    assert_num(r->net_sent_bytes, 100 * i);
    assert_num(r->disk_space_total_bytes, 150 * GIB);
    assert_num(r->disk_space_used_bytes, 15 * GIB);
    assert_num(r->gpu_usage, 0.5);
    assert_num(r->gpu_vram_mib, 3072);
    assert_num(r->gpu_utilized, 1);
}

/* The process figures every format with a process has, for sample i. */
static void check_process(const rt_record *r, int i)
{
    static const double writes[] = {0, 1048576, 2097152};
    assert_num(r->process_pid, 4242);
    assert_num(r->process_children, i);
    assert_num(r->process_cores, i);
    assert_num(r->process_cpu_secs, i);
    assert_num(r->process_pss_mib, 100 * i);
    assert_num(r->process_read_bytes, 4096 * i);
    assert_num(r->process_write_bytes, writes[i - 1]);
    assert_num(r->process_gpu_usage, 0.5);
    assert_num(r->process_gpu_vram_mib, 1024);
    assert_num(r->process_gpu_utilized, 1);
}

/* ---- each format against the hand values ----------------------------------------------- */

static void test_json_fixture(void **state)
{
    (void)state;
    rt_record recs[4];
    logs lg = {0};
    const char *fmt;
    uint64_t skipped;
    assert_int_equal(read_all(fx("tool.jsonl"), recs, 4, &lg, &fmt, &skipped), 3);
    assert_string_equal(fmt, "json");
    assert_int_equal(skipped, 0);
    assert_int_equal(lg.n, 0);
    for (int i = 1; i <= 3; i++) {
        const rt_record *r = &recs[i - 1];
        check_common(r, i);
        check_process(r, i);
        assert_num(r->interval_secs, 1);
        assert_string_equal(r->job_name, "fixture-job");
        assert_num(r->cpu_count, 4);
        assert_num(r->memory_total_mib, 8000);
        assert_num(r->gpu_count, 2);
        assert_num(r->gpu_vram_total_mib, 32768);
        assert_num(r->process_cpu_secs_total, (double)(i * (i + 1) / 2));
        assert_num(r->process_rss_mib, 100 * i + 50);
        assert_num(r->process_rss_peak_mib, 100 * i + 50);
    }
}

/* The 0.6 figures of a run in its own cgroup (runs/cgroup-oom.jsonl, see the README): the
 * group's limits and totals as recorded, its pressure preferred to the machine's. */
static void test_json_cgroup_fixture(void **state)
{
    (void)state;
    static const double peak[] = {1000, 2000, 4000, 6000, 7000, 8100, 8100, 8100};
    rt_record recs[8];
    logs lg = {0};
    uint64_t skipped;
    assert_int_equal(read_all(fx("cgroup-oom.jsonl"), recs, 8, &lg, NULL, &skipped), 8);
    assert_int_equal(skipped, 0);
    for (int i = 0; i < 8; i++) {
        const rt_record *r = &recs[i];
        assert_num(r->process_memory_peak_mib, peak[i]);
        assert_num(r->cgroup_oom_kills, i >= 6 ? 1 : 0);
        assert_num(r->cgroup_memory_limit_mib, 8192);
        assert_nan(r->cgroup_memory_high_mib);
        assert_num(r->cgroup_cpu_quota_cores, 2);
        assert_num(r->cgroup_cpu_periods, 10 * (i + 1));
        assert_num(r->cgroup_cpu_throttled_periods, 4 * (i + 1));
        assert_num(r->cgroup_cpu_throttled_secs, 0.5 * (i + 1));
        assert_num(r->cgroup_pids_peak, 5);
        assert_num(r->cgroup_pids_limit, 100);
        if (i == 0) { /* the first reading has no share of an interval, the group's nor the machine's */
            assert_nan(r->pressure_cpu_some_pct);
            assert_nan(r->pressure_io_full_pct);
            continue;
        }
        assert_num(r->pressure_cpu_some_pct, 12); /* the group's; the machine's is 50 */
        assert_num(r->pressure_memory_some_pct, 3);
        assert_num(r->pressure_memory_full_pct, 1);
        assert_num(r->pressure_io_some_pct, 0);
        assert_num(r->pressure_io_full_pct, 0);
    }
}

/* Lines with pieces of the 0.6 members: the machine's pressure without a group (or with a
 * group that has none), null members, members of the wrong type (malformed), and the
 * top-level "cgroup" of a whole-machine run (the tree's group wins when both are there). */
static void test_json_cgroup_members(void **state)
{
    (void)state;
    static const char text[] =
        "{\"timestamp_secs\":1,\"process\":{\"pid\":5,\"memory_peak_mib\":null,\"cgroup\":null},"
        "\"pressure\":{\"cpu\":{\"some_pct\":7.5,\"full_pct\":null},\"memory\":null,"
        "\"io\":{\"some_pct\":2,\"full_pct\":1}}}\n"
        "{\"timestamp_secs\":2,\"process\":{\"pid\":5,\"memory_peak_mib\":10.5,\"cgroup\":{\"path\":\"/x\","
        "\"own\":true,\"oom_kills\":3,\"memory_limit_mib\":null,\"cpu_quota_cores\":1.5,\"pids_limit\":null,"
        "\"pressure\":{\"cpu\":null,\"memory\":{\"some_avg10\":0.5,\"some_pct\":null,\"full_pct\":null},"
        "\"io\":null}}},\"pressure\":{\"cpu\":{\"some_pct\":7.5},\"memory\":{\"some_pct\":9,\"full_pct\":8},"
        "\"io\":{\"some_pct\":2,\"full_pct\":1}}}\n"
        "{\"timestamp_secs\":3,\"process\":{\"cgroup\":{\"oom_kills\":\"1\"}}}\n"
        "{\"timestamp_secs\":4,\"process\":{\"cgroup\":[]}}\n"
        "{\"timestamp_secs\":5,\"pressure\":{\"cpu\":{\"some_pct\":true}}}\n"
        "{\"timestamp_secs\":6,\"pressure\":{\"cpu\":3}}\n"
        /* the whole machine in a group (0.6: the top-level "cgroup", the tracker's own) */
        "{\"timestamp_secs\":7,\"process\":null,\"pressure\":{\"cpu\":{\"some_pct\":4}},\"cgroup\":{"
        "\"path\":\"/docker/abc\",\"own\":false,\"exclusive\":false,\"memory_limit_mib\":512,\"oom_kills\":2,"
        "\"cpu_quota_cores\":null,\"cpu_throttled_periods\":6,\"pressure\":{\"cpu\":{\"some_pct\":50}}}}\n"
        "{\"timestamp_secs\":8,\"cgroup\":{\"memory_limit_mib\":512},\"process\":{\"pid\":5,"
        "\"cgroup\":{\"memory_limit_mib\":100}}}\n"
        "{\"timestamp_secs\":9,\"process\":null,\"cgroup\":[]}\n";
    logs lg = {0};
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    o.log = collect;
    o.log_user = &lg;
    rt_reader *r;
    const rt_record *rec;
    assert_int_equal(rt_reader_open_buffer("cg", text, sizeof text - 1, &o, &r), RT_OK);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_nan(rec->process_memory_peak_mib);
    assert_nan(rec->cgroup_oom_kills);
    assert_num(rec->pressure_cpu_some_pct, 7.5); /* no group: the machine's */
    assert_nan(rec->pressure_memory_some_pct);
    assert_num(rec->pressure_io_some_pct, 2);
    assert_num(rec->pressure_io_full_pct, 1);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_num(rec->process_memory_peak_mib, 10.5);
    assert_num(rec->cgroup_oom_kills, 3);
    assert_nan(rec->cgroup_memory_limit_mib);
    assert_num(rec->cgroup_cpu_quota_cores, 1.5);
    assert_nan(rec->cgroup_pids_limit);
    assert_nan(rec->cgroup_cpu_periods);
    assert_num(rec->pressure_cpu_some_pct, 7.5); /* the group has no cpu pressure: the machine's */
    assert_nan(rec->pressure_memory_some_pct);   /* the group has memory pressure (avg10), no share yet */
    assert_nan(rec->pressure_memory_full_pct);
    assert_num(rec->pressure_io_full_pct, 1);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_num(rec->timestamp_secs, 7); /* the tracker's group without a tree: its limits, the machine's pressure */
    assert_num(rec->cgroup_memory_limit_mib, 512);
    assert_num(rec->cgroup_oom_kills, 2);
    assert_nan(rec->cgroup_cpu_quota_cores);
    assert_num(rec->cgroup_cpu_throttled_periods, 6);
    assert_nan(rec->process_memory_peak_mib);
    assert_nan(rec->process_pid);
    assert_num(rec->pressure_cpu_some_pct, 4);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_num(rec->cgroup_memory_limit_mib, 100); /* the tree's group first, wherever the members are */
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_null(rec);
    assert_int_equal(rt_reader_skipped(r), 5);
    rt_reader_close(r);
}

static void test_csv_fixture(void **state)
{
    (void)state;
    rt_record recs[4];
    logs lg = {0};
    const char *fmt;
    assert_int_equal(read_all(fx("tool.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "csv");
    for (int i = 1; i <= 3; i++) {
        const rt_record *r = &recs[i - 1];
        check_common(r, i);
        check_process(r, i);
        assert_num(r->interval_secs, 1); /* the first: the second's */
        assert_null(r->job_name);
        assert_nan(r->cpu_count);
        assert_nan(r->memory_total_mib);
        assert_nan(r->gpu_count);
        assert_nan(r->gpu_vram_total_mib);
        assert_nan(r->process_cpu_secs_total);
        assert_nan(r->process_rss_mib);
        assert_nan(r->process_rss_peak_mib);
    }
}

static void check_no_process(const rt_record *r)
{
    assert_nan(r->process_pid);
    assert_nan(r->process_children);
    assert_nan(r->process_cores);
    assert_nan(r->process_cpu_secs);
    assert_nan(r->process_pss_mib);
    assert_nan(r->process_read_bytes);
    assert_nan(r->process_write_bytes);
    assert_nan(r->process_gpu_usage);
}

static void test_python_fixtures(void **state)
{
    (void)state;
    rt_record recs[4];
    logs lg = {0};
    const char *fmt;
    assert_int_equal(read_all(fx("python-process.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "python-process");
    for (int i = 1; i <= 3; i++) {
        check_process(&recs[i - 1], i);
        assert_num(recs[i - 1].interval_secs, 1);
        assert_nan(recs[i - 1].cpu_cores);
        assert_nan(recs[i - 1].memory_used_mib);
        assert_nan(recs[i - 1].disk_read_bytes);
        assert_nan(recs[i - 1].gpu_usage);
    }
    assert_int_equal(read_all(fx("python-system.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "python-system");
    for (int i = 1; i <= 3; i++) {
        check_common(&recs[i - 1], i);
        check_no_process(&recs[i - 1]);
    }
    assert_int_equal(read_all(fx("python-combined.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "python-combined");
    for (int i = 1; i <= 3; i++) {
        check_common(&recs[i - 1], i);
        check_process(&recs[i - 1], i);
    }
    assert_int_equal(lg.n, 0);
}

/* The Python tracker 0.5's CSV files (its names, MiB, GB): the same figures as the 0.4 ones. */
static void test_python05_fixtures(void **state)
{
    (void)state;
    rt_record recs[4];
    logs lg = {0};
    const char *fmt;
    assert_int_equal(read_all(fx("python05-process.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "python-process");
    for (int i = 1; i <= 3; i++) {
        check_process(&recs[i - 1], i);
        assert_nan(recs[i - 1].memory_used_mib);
    }
    assert_int_equal(read_all(fx("python05-system.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "python-system");
    for (int i = 1; i <= 3; i++) {
        check_common(&recs[i - 1], i);
        check_no_process(&recs[i - 1]);
    }
    assert_int_equal(read_all(fx("python05-combined.csv"), recs, 4, &lg, &fmt, NULL), 3);
    assert_string_equal(fmt, "python-combined");
    for (int i = 1; i <= 3; i++) {
        check_common(&recs[i - 1], i);
        check_process(&recs[i - 1], i);
    }
    assert_int_equal(lg.n, 0);
}

/* ---- malformed input ---------------------------------------------------------------------- */

static void test_malformed_json(void **state)
{
    (void)state;
    rt_record recs[4];
    logs lg = {0};
    uint64_t skipped;
    assert_int_equal(read_all(fx("malformed.jsonl"), recs, 4, &lg, NULL, &skipped), 2);
    assert_int_equal(skipped, 5);
    assert_int_equal(lg.n, 5);
    static const int lines[] = {2, 4, 5, 6, 8};
    for (int i = 0; i < 5; i++) {
        char want[1100];
        snprintf(want, sizeof want, "%s:%d: ", fx("malformed.jsonl"), lines[i]);
        assert_true(strncmp(lg.text[i], want, strlen(want)) == 0);
    }
    assert_non_null(strstr(lg.text[1], "cpu is not an object"));
    assert_non_null(strstr(lg.text[4], "truncated last line"));
    check_common(&recs[0], 1);
    check_common(&recs[1], 2);
    check_process(&recs[1], 2);
}

static void test_malformed_csv(void **state)
{
    (void)state;
    rt_record recs[4];
    logs lg = {0};
    uint64_t skipped;
    assert_int_equal(read_all(fx("malformed.csv"), recs, 4, &lg, NULL, &skipped), 2);
    assert_int_equal(skipped, 2);
    assert_int_equal(lg.n, 2);
    char want[1100];
    snprintf(want, sizeof want, "%s:3: 3 columns where the header has 32", fx("malformed.csv"));
    assert_string_equal(lg.text[0], want);
    snprintf(want, sizeof want, "%s:4: column 5 is not a number: \"abc\"", fx("malformed.csv"));
    assert_string_equal(lg.text[1], want);
    check_common(&recs[0], 1);
    assert_num(recs[0].interval_secs, 2); /* the first takes the second's, which spans the skipped rows */
    assert_num(recs[1].timestamp_secs, 1700000003);
    assert_num(recs[1].interval_secs, 2);
}

/* The tool's CSV with a column twice, one the reader does not know and a CPU split in two: the
 * later cell of a figure stands (an empty one too), an unknown column is not parsed, utime +
 * stime is the process's CPU, and what no column gives stays null. */
static void test_csv_columns(void **state)
{
    (void)state;
    static const char csv[] =
        "timestamp,system_cpu_usage,system_memory_used_mib,extra,system_cpu_usage,process_utime,process_stime,"
        "process_memory_mib\n"
        "1700000000,1.5,100,zzz,2.5,0.25,0.5,40\n"
        "1700000001,3,200,,,0.5,,41\n";
    rt_reader *r;
    assert_int_equal(rt_reader_open_buffer("cols.csv", csv, sizeof csv - 1, NULL, &r), RT_OK);
    assert_string_equal(rt_reader_format(r), "csv");
    const rt_record *rec;
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_num(rec->timestamp_secs, 1700000000);
    assert_num(rec->cpu_cores, 2.5);
    assert_num(rec->memory_used_mib, 100);
    assert_num(rec->process_cpu_secs, 0.75);
    assert_num(rec->process_pss_mib, 40);
    assert_nan(rec->gpu_usage);
    assert_nan(rec->process_pid);
    assert_nan(rec->disk_space_used_bytes);
    assert_nan(rec->energy_joules);
    assert_null(rec->energy_method);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_nan(rec->cpu_cores);
    assert_num(rec->memory_used_mib, 200);
    assert_nan(rec->process_cpu_secs);
    assert_num(rec->process_pss_mib, 41);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_null(rec);
    assert_int_equal(rt_reader_skipped(r), 0);
    rt_reader_close(r);
}

static void test_unknown_and_empty(void **state)
{
    (void)state;
    logs lg = {0};
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    o.log = collect;
    o.log_user = &lg;
    rt_reader *r = (rt_reader *)1;
    assert_int_equal(rt_reader_open(fx("unknown.txt"), &o, &r), RT_ERR_PARSE);
    assert_null(r);
    assert_int_equal(lg.n, 1);
    char want[1100];
    snprintf(want, sizeof want, "%s:1: not a resource-tracker JSON lines or CSV file", fx("unknown.txt"));
    assert_string_equal(lg.text[0], want);
    assert_int_equal(rt_reader_open(fx("no-such-file"), &o, &r), RT_ERR_NOT_FOUND);
    assert_int_equal(rt_reader_open_buffer("empty", "\n\n", 2, &o, &r), RT_ERR_PARSE);
    assert_int_equal(rt_reader_open_buffer("x", "a,b\n1,2\n", 8, NULL, &r), RT_ERR_PARSE);
    assert_int_equal(rt_reader_open(NULL, NULL, &r), RT_ERR_INVALID);
    /* a file that opens but cannot be read (a directory): RT_ERR_IO, the reason logged once */
    lg.n = 0;
    assert_int_equal(rt_reader_open("/", &o, &r), RT_ERR_IO);
    assert_null(r);
    assert_int_equal(lg.n, 1);
    assert_string_equal(lg.text[0], "/: cannot read: Is a directory");
}

/* More than 20 malformed lines: 20 shown, then one line saying the rest are not. */
static void test_many_malformed(void **state)
{
    (void)state;
    static char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s", rt_csv_header());
    for (int i = 0; i < 25; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%d,bad\n", i);
    logs lg = {0};
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    o.log = collect;
    o.log_user = &lg;
    rt_reader *r;
    assert_int_equal(rt_reader_open_buffer("many.csv", buf, n, &o, &r), RT_OK);
    const rt_record *rec;
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_null(rec);
    assert_int_equal(rt_reader_skipped(r), 25);
    assert_int_equal(lg.n, 21);
    assert_string_equal(lg.text[0], "many.csv:2: 2 columns where the header has 32");
    assert_string_equal(lg.text[20], "many.csv: further malformed lines are not shown");
    rt_reader_close(r);
}

/* Writes the header and first row of tool.csv, then line 3: junk bytes of '7' (a newline after
 * them when nl), then the rest of tool.csv, to a new temp file (path: its template). */
static void csv_with_junk(char *path, size_t junk_len, bool nl)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len;
    const char *csv = fixture_text("runs/tool.csv", &len);
    const char *row2 = strchr(csv, '\n') + 1;
    const char *row3 = strchr(row2, '\n') + 1;
    assert_true(write(fd, csv, (size_t)(row3 - csv)) == row3 - csv);
    char *junk = malloc(junk_len + 1);
    assert_non_null(junk);
    memset(junk, '7', junk_len);
    junk[junk_len] = '\n';
    assert_true(write(fd, junk, junk_len + nl) == (ssize_t)(junk_len + nl));
    assert_true(write(fd, row3, len - (size_t)(row3 - csv)) == (ssize_t)(len - (size_t)(row3 - csv)));
    close(fd);
    free(junk);
}

/* A line over the 16 MiB cap between good ones, read from a file: the records before it come
 * out, then the read ends with RT_ERR_PARSE and an error naming the file and the line (never
 * skipped, never "empty"); the same with no newline after it. One of 5 MiB (over the cap
 * before 0.18) is a line like any other: malformed here, skipped, and the read goes on. */
static void test_long_line(void **state)
{
    (void)state;
    for (int nl = 0; nl < 2; nl++) {
        char path[] = "/tmp/rt-reader-XXXXXX";
        csv_with_junk(path, (16u << 20) + 1, nl);
        logs lg = {0};
        rt_reader *r;
        assert_int_equal(open_logged(path, &lg, &r), RT_OK);
        const rt_record *rec;
        assert_int_equal(rt_reader_next(r, &rec), RT_OK);
        assert_non_null(rec);
        check_common(rec, 1);
        assert_int_equal(rt_reader_next(r, &rec), RT_ERR_PARSE);
        assert_null(rec);
        assert_int_equal(rt_reader_next(r, &rec), RT_ERR_PARSE); /* and it stays over */
        assert_int_equal(rt_reader_records(r), 1);
        assert_int_equal(rt_reader_skipped(r), 0);
        char want[1100];
        snprintf(want, sizeof want, "%s:3: a line longer than 16 MiB, which no recorded run has: not read further",
                 path);
        assert_int_equal(lg.n, 1);
        assert_string_equal(lg.text[0], want);
        assert_string_equal(rt_reader_errmsg(r), want);
        rt_reader_close(r);
        unlink(path);
    }
    char path[] = "/tmp/rt-reader-XXXXXX";
    csv_with_junk(path, 5u << 20, true);
    rt_record recs[4];
    logs lg = {0};
    uint64_t skipped;
    assert_int_equal(read_all(path, recs, 4, &lg, NULL, &skipped), 3);
    assert_int_equal(skipped, 1);
    char want[1100];
    snprintf(want, sizeof want, "%s:3: column 1 is not a number: \"777777777777777777777777\"", path);
    assert_string_equal(lg.text[0], want);
    check_common(&recs[2], 3);
    unlink(path);
}

static const char *temp_file(const char *text, size_t len);

/* A first line over the cap (a 200 MB line, here the test's cap of 1000 bytes): the open fails
 * with RT_ERR_PARSE naming line 1, from a file or a buffer, whatever the read size; a line of
 * exactly the cap is read. */
static void test_long_first_line(void **state)
{
    (void)state;
    static char text[4096];
    for (int over = 0; over < 2; over++) {
        size_t n = 1000 + (size_t)over; /* bytes before the newline */
        memset(text, ' ', n);
        text[0] = '{';
        memcpy(text + 1, "\"timestamp_secs\":5", 18);
        text[n - 1] = '}';
        text[n] = '\n';
        const char *path = temp_file(text, n + 1);
        for (int from_file = 0; from_file < 2; from_file++) {
            static const size_t chunks[] = {1, 7, 4096};
            for (size_t c = 0; c < 3; c++) {
                logs lg = {0};
                rt_reader_options o = RT_READER_OPTIONS_INIT;
                o.log = collect;
                o.log_user = &lg;
                rt_reader_test_limits(chunks[c], 1000);
                rt_reader *r = NULL;
                rt_error e = from_file ? rt_reader_open(path, &o, &r) : rt_reader_open_buffer("b", text, n + 1, &o, &r);
                rt_reader_test_limits(0, 0);
                if (!over) {
                    assert_int_equal(e, RT_OK);
                    const rt_record *rec;
                    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
                    assert_non_null(rec);
                    assert_num(rec->timestamp_secs, 5);
                    rt_reader_close(r);
                    continue;
                }
                assert_int_equal(e, RT_ERR_PARSE);
                assert_null(r);
                char want[1100];
                snprintf(want, sizeof want,
                         "%s:1: a line longer than 1000 bytes, which no recorded run has: not read further",
                         from_file ? path : "b");
                assert_int_equal(lg.n, 1);
                assert_string_equal(lg.text[0], want);
                assert_string_equal(rt_last_error_message(), want);
            }
        }
        unlink(path);
    }
}

/* Intervals from timestamps: a lone CSV row has none; the first takes the second's. */
static void test_intervals(void **state)
{
    (void)state;
    char buf[2048];
    size_t len;
    const char *csv = fixture_text("runs/tool.csv", &len);
    const char *row3 = strchr(strchr(csv, '\n') + 1, '\n') + 1;
    size_t hl = (size_t)(strchr(csv, '\n') + 1 - csv);
    memcpy(buf, csv, hl);
    memcpy(buf + hl, row3, (size_t)(strchr(row3, '\n') + 1 - row3));
    size_t n = hl + (size_t)(strchr(row3, '\n') + 1 - row3);
    rt_reader *r;
    const rt_record *rec;
    assert_int_equal(rt_reader_open_buffer("one.csv", buf, n, NULL, &r), RT_OK);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_non_null(rec);
    assert_nan(rec->interval_secs);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_null(rec);
    rt_reader_close(r);
    /* quoted cells and "" (None) in a Python CSV; a gap of 2 s */
    const char *py = "\"timestamp\",\"pid\",\"children\",\"utime\",\"stime\",\"cpu_usage\",\"memory\",\"read_bytes\","
                     "\"write_bytes\",\"gpu_usage\",\"gpu_vram\",\"gpu_utilized\"\r\n"
                     "10.5,7,\"\",0.1,0.1,0.2,1024,0,0,nan,,\r\n"
                     "12.5,7,1,0.1,0.1,0.2,2048,0,0,0,0,0\r\n";
    assert_int_equal(rt_reader_open_buffer("py.csv", py, strlen(py), NULL, &r), RT_OK);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_num(rec->interval_secs, 2);
    assert_nan(rec->process_children);
    assert_nan(rec->process_gpu_usage);
    assert_num(rec->process_pss_mib, 1);
    assert_num(rec->process_cpu_secs, 0.2);
    assert_int_equal(rt_reader_next(r, &rec), RT_OK);
    assert_num(rec->interval_secs, 2);
    assert_num(rec->process_children, 1);
    assert_int_equal(rt_reader_skipped(r), 0);
    rt_reader_close(r);
}

/* Reads the buffer text (name "t") into recs; returns the record count. */
static size_t read_text(const char *text, rt_record *recs, size_t max, uint64_t *skipped)
{
    rt_reader *r;
    assert_int_equal(rt_reader_open_buffer("t", text, strlen(text), NULL, &r), RT_OK);
    const rt_record *rec;
    size_t n = 0;
    while (rt_reader_next(r, &rec) == RT_OK && rec) {
        if (n < max) {
            recs[n] = *rec;
            recs[n].job_name = NULL;
        }
        n++;
    }
    if (skipped)
        *skipped = rt_reader_skipped(r);
    rt_reader_close(r);
    return n;
}

/* One JSON line with disk vda: timestamp, interval ("null" or a number), read rate and read
 * total (numbers or null, as text). */
static size_t disk_line(char *b, size_t cap, const char *ts, const char *iv, const char *rate, const char *total)
{
    return (size_t)snprintf(b, cap,
                            "{\"timestamp_secs\":%s,\"interval_secs\":%s,\"disk\":[{\"device\":\"vda\","
                            "\"read_bytes_per_sec\":%s,\"write_bytes_per_sec\":0,\"read_bytes_total\":%s,"
                            "\"write_bytes_total\":0}],\"network\":[]}\n",
                            ts, iv, rate, total);
}

/* Machine counters: the difference of totals only from the record the interval starts at;
 * after a reboot (a total going back), two runs in one file (a gap) or a skipped line, the
 * rate x interval; never negative. */
static void test_machine_counters(void **state)
{
    (void)state;
    static char buf[4096];
    size_t n = 0;
    n += disk_line(buf + n, sizeof buf - n, "100", "1", "1000", "5000000");
    n += disk_line(buf + n, sizeof buf - n, "101", "1", "1000", "5001000");  /* 1000 by totals */
    n += disk_line(buf + n, sizeof buf - n, "102", "1", "700", "300");      /* reboot: 700 */
    n += disk_line(buf + n, sizeof buf - n, "9000", "1", "20", "9000000");  /* another run: 20 */
    n += disk_line(buf + n, sizeof buf - n, "9001", "1", "30", "9000030");  /* 30 by totals */
    n += (size_t)snprintf(buf + n, sizeof buf - n, "{\"timestamp_secs\":9002,cut\n");
    n += disk_line(buf + n, sizeof buf - n, "9003", "1", "40", "9000100");  /* after a gap: 40 */
    n += disk_line(buf + n, sizeof buf - n, "9004", "-1", "-5", "null");    /* a negative rate: unknown */
    n += disk_line(buf + n, sizeof buf - n, "9005", "null", "50", "9000150"); /* interval from timestamps */
    n += disk_line(buf + n, sizeof buf - n, "9006", "1", "null", "5");      /* back, no rate: unknown */
    rt_record recs[16];
    uint64_t skipped;
    assert_int_equal(read_text(buf, recs, 16, &skipped), 9);
    assert_int_equal(skipped, 1);
    static const double want[] = {1000, 1000, 700, 20, 30, 40, NAN, 50, NAN};
    for (size_t i = 0; i < 9; i++) {
        if (isnan(want[i]) ? !isnan(recs[i].disk_read_bytes) : recs[i].disk_read_bytes != want[i])
            fail_msg("record %zu: %.17g bytes, want %.17g", i + 1, recs[i].disk_read_bytes, want[i]);
        assert_num(recs[i].disk_write_bytes, 0);
    }
}

/* Process counters: a total that is null for a while is differenced with the last known one
 * (not counted twice); a new tree (another pid, or totals going back: a second run in the
 * file) counts from zero. */
static void test_process_counters(void **state)
{
    (void)state;
    static const struct {
        int ts, pid;
        const char *read, *write;
        double want_read, want_write;
    } lines[] = {
        {1, 10, "1000", "0", 1000, 0},
        {2, 10, "1500", "100", 500, 100},
        {3, 10, "null", "null", NAN, NAN},    /* I/O not readable for a while */
        {4, 10, "1700", "150", 200, 50},      /* from the last known totals */
        {5, 20, "300", "400", 300, 400},      /* another run, another tree */
        {6, 20, "350", "400", 50, 0},
        {7, 20, "10", "20", 10, 20},          /* totals back: counts from zero */
    };
    static char buf[4096];
    size_t n = 0;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "{\"timestamp_secs\":%d,\"interval_secs\":1,\"process\":{\"pid\":%d,"
                              "\"read_bytes_total\":%s,\"write_bytes_total\":%s}}\n",
                              lines[i].ts, lines[i].pid, lines[i].read, lines[i].write);
    rt_record recs[8];
    assert_int_equal(read_text(buf, recs, 8, NULL), 7);
    for (size_t i = 0; i < 7; i++) {
        double r = recs[i].process_read_bytes, w = recs[i].process_write_bytes;
        bool ok_r = isnan(lines[i].want_read) ? isnan(r) : r == lines[i].want_read;
        bool ok_w = isnan(lines[i].want_write) ? isnan(w) : w == lines[i].want_write;
        if (!ok_r || !ok_w)
            fail_msg("record %zu: %.17g / %.17g bytes, want %.17g / %.17g", i + 1, r, w, lines[i].want_read,
                     lines[i].want_write);
    }
}

/* Timestamps that are no Unix time in seconds (negative, past year 5000, 1e300) make a line
 * malformed; an interval_secs that is negative or absurd is taken from the timestamps. */
static void test_out_of_range(void **state)
{
    (void)state;
    const char *json = "{\"timestamp_secs\":1e300,\"interval_secs\":1}\n"
                       "{\"timestamp_secs\":-5,\"interval_secs\":1}\n"
                       "{\"timestamp_secs\":100,\"interval_secs\":1e300}\n"
                       "{\"timestamp_secs\":102,\"interval_secs\":-3}\n"
                       "{\"timestamp_secs\":1e12,\"interval_secs\":1}\n";
    rt_record recs[8];
    uint64_t skipped;
    assert_int_equal(read_text(json, recs, 8, &skipped), 2);
    assert_int_equal(skipped, 3);
    assert_num(recs[0].timestamp_secs, 100);
    assert_num(recs[0].interval_secs, 2); /* the next record's, as when there is none */
    assert_num(recs[1].interval_secs, 2);
    /* the same in a Python CSV */
    const char *py = "\"timestamp\",\"pid\",\"memory\"\n1e20,1,1024\n-1,1,1024\n1000,1,1024\n";
    assert_int_equal(read_text(py, recs, 8, &skipped), 1);
    assert_int_equal(skipped, 2);
    assert_num(recs[0].timestamp_secs, 1000);
}

/* ---- the same records whatever the read sizes ------------------------------------------ */

typedef struct run_read {
    size_t n;
    uint64_t skipped;
    rt_record rec[8];
    char job[8][64];
} run_read;

/* Reads a file (path) or a buffer (text, len) with the given limits into *out. */
static void read_with(const char *path, const char *text, size_t len, size_t chunk, size_t max_line, run_read *out)
{
    rt_reader_test_limits(chunk, max_line);
    rt_reader *r;
    rt_error e = path ? rt_reader_open(path, NULL, &r) : rt_reader_open_buffer("b", text, len, NULL, &r);
    rt_reader_test_limits(0, 0);
    memset(out, 0, sizeof *out);
    if (e != RT_OK) {
        out->n = (size_t)-1;
        return;
    }
    const rt_record *rec;
    while (rt_reader_next(r, &rec) == RT_OK && rec) {
        if (out->n < 8) {
            out->rec[out->n] = *rec;
            snprintf(out->job[out->n], sizeof out->job[0], "%s", rec->job_name ? rec->job_name : "(none)");
            out->rec[out->n].job_name = NULL;
        }
        out->n++;
    }
    out->skipped = rt_reader_skipped(r);
    rt_reader_close(r);
}

/* Whether two reads gave the same records, figure by figure (NaN equal to NaN). */
static void same_reads(const run_read *a, const run_read *b, const char *what, size_t chunk)
{
    if (a->n != b->n || a->skipped != b->skipped)
        fail_msg("%s, chunk %zu: %zu records / %llu skipped, want %zu / %llu", what, chunk, b->n,
                 (unsigned long long)b->skipped, a->n, (unsigned long long)a->skipped);
    for (size_t i = 0; i < a->n && i < 8; i++) {
        assert_string_equal(a->job[i], b->job[i]);
        for (size_t off = offsetof(rt_record, cpu_cores); off <= offsetof(rt_record, process_gpu_utilized);
             off += sizeof(double)) {
            double x, y;
            memcpy(&x, (const char *)&a->rec[i] + off, sizeof x);
            memcpy(&y, (const char *)&b->rec[i] + off, sizeof y);
            if (!(x == y || (isnan(x) && isnan(y))))
                fail_msg("%s, chunk %zu, record %zu, offset %zu: %.17g, want %.17g", what, chunk, i, off, y, x);
        }
        assert_true(a->rec[i].timestamp_secs == b->rec[i].timestamp_secs);
        assert_true(a->rec[i].interval_secs == b->rec[i].interval_secs ||
                    (isnan(a->rec[i].interval_secs) && isnan(b->rec[i].interval_secs)));
    }
}

/* Writes len bytes of text to a new temp file; returns its path (static). */
static const char *temp_file(const char *text, size_t len)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/rt-reader-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, text, len) == (ssize_t)len);
    close(fd);
    return path;
}

/* Every fixture, and variants of it (CRLF, a byte order mark, no last newline, a NUL byte in
 * a line), read from a file in reads of 1 to 4096 bytes and with the longest line cut to
 * 100 and 1000 bytes (the buffer grows and discards): the same records and skips as read
 * from memory at once. */
static void test_chunk_boundaries(void **state)
{
    (void)state;
    static const char *const names[] = {"tool.jsonl", "tool.csv", "python-process.csv", "python-system.csv",
                                        "python-combined.csv", "malformed.jsonl", "malformed.csv"};
    static const size_t chunks[] = {1, 2, 3, 5, 7, 64, 333, 4096};
    static const size_t maxes[] = {0, 100, 1000};
    static char variant[65536];
    for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
        char rel[64];
        snprintf(rel, sizeof rel, "runs/%s", names[f]);
        size_t len;
        const char *text = fixture_text(rel, &len);
        assert_true(len * 2 + 8 < sizeof variant);
        for (int v = 0; v < 5; v++) {
            size_t vl = 0;
            if (v == 0) { /* as it is */
                memcpy(variant, text, len);
                vl = len;
            } else if (v == 1) { /* CRLF */
                for (size_t i = 0; i < len; i++) {
                    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r'))
                        variant[vl++] = '\r';
                    variant[vl++] = text[i];
                }
            } else if (v == 2) { /* a byte order mark */
                memcpy(variant, "\xEF\xBB\xBF", 3);
                memcpy(variant + 3, text, len);
                vl = len + 3;
            } else if (v == 3) { /* no newline at the end */
                memcpy(variant, text, len);
                vl = len;
                while (vl && (variant[vl - 1] == '\n' || variant[vl - 1] == '\r'))
                    vl--;
            } else { /* a NUL byte in the second line: that line is malformed */
                memcpy(variant, text, len);
                vl = len;
                char *nl = memchr(variant, '\n', vl);
                if (nl && nl + 3 < variant + vl)
                    nl[2] = '\0';
            }
            const char *path = temp_file(variant, vl);
            for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
                run_read ref, got;
                read_with(NULL, variant, vl, 0, maxes[m], &ref);
                if (m == 0 && v != 4)
                    assert_true(ref.n >= 2 && ref.n != (size_t)-1); /* every variant reads */
                for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                    read_with(path, NULL, 0, chunks[c], maxes[m], &got);
                    char what[128];
                    snprintf(what, sizeof what, "%s variant %d max %zu", names[f], v, maxes[m]);
                    same_reads(&ref, &got, what, chunks[c]);
                }
            }
            unlink(path);
        }
    }
}

/* Writes text[0..len) gzipped to a new temp file, as nmembers gzip members back to back (the
 * text cut in equal parts), the last cut_by bytes of the gzip left out; returns its path. */
static const char *gzip_file(const char *text, size_t len, size_t nmembers, size_t cut_by)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/rt-reader-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    rt_buf all;
    rt_buf_init(&all, SIZE_MAX);
    for (size_t m = 0, at = 0; m < nmembers; m++) {
        size_t part = m + 1 == nmembers ? len - at : len / nmembers;
        rt_gzip *z;
        assert_int_equal(rt_gzip_new_level(len + 65536, 1, &z), RT_OK);
        assert_int_equal(rt_gzip_write(z, text + at, part), RT_OK);
        const void *d;
        size_t dl;
        assert_int_equal(rt_gzip_finish(z, &d, &dl), RT_OK);
        assert_int_equal(rt_buf_append(&all, d, dl), 0);
        rt_gzip_free(z);
        at += part;
    }
    assert_true(cut_by < all.len);
    assert_true(write(fd, all.data, all.len - cut_by) == (ssize_t)(all.len - cut_by));
    close(fd);
    rt_buf_free(&all);
    return path;
}

/* Every fixture gzipped (one member, and three) reads from a file as it does plain, in reads of
 * 1 to 4096 bytes: gzip is told by its magic and read as a stream. */
static void test_gzip_input(void **state)
{
    (void)state;
    static const char *const names[] = {"tool.jsonl",      "tool.csv",      "python-process.csv", "python-combined.csv",
                                        "malformed.jsonl", "malformed.csv", "cgroup-oom.jsonl"};
    static const size_t chunks[] = {1, 7, 333, 4096, 0};
    for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
        char rel[64];
        snprintf(rel, sizeof rel, "runs/%s", names[f]);
        size_t len;
        const char *text = fixture_text(rel, &len);
        run_read ref, got;
        read_with(NULL, text, len, 0, 0, &ref);
        assert_true(ref.n >= 2 && ref.n != (size_t)-1);
        for (size_t members = 1; members <= 3; members += 2) {
            const char *path = gzip_file(text, len, members, 0);
            for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                read_with(path, NULL, 0, chunks[c], 0, &got);
                char what[128];
                snprintf(what, sizeof what, "%s gzipped, %zu members", names[f], members);
                same_reads(&ref, &got, what, chunks[c]);
            }
            rt_reader *r;
            assert_int_equal(rt_reader_open(path, NULL, &r), RT_OK);
            const char *want = strstr(names[f], "python-combined") ? "python-combined"
                               : strstr(names[f], "python")        ? "python-process"
                               : strstr(names[f], ".csv")          ? "csv"
                                                                   : "json";
            assert_string_equal(rt_reader_format(r), want);
            rt_reader_close(r);
            unlink(path);
        }
    }
}

/* A gzip file cut short (the last 100 bytes of its last member gone): what came before is read,
 * the line it broke in is one malformed line, logged as such. */
static void test_gzip_cut_short(void **state)
{
    (void)state;
    size_t len = 0, cap = 1 << 20;
    char *text = malloc(cap);
    assert_non_null(text);
    len = (size_t)snprintf(text, cap, "%s", rt_csv_header());
    size_t commas = 0;
    for (const char *c = rt_csv_header(); *c; c++)
        commas += *c == ',';
    for (int i = 0; len + 64 + 2 * commas < cap; i++) { /* rows that do not compress away: the cut lands mid-file */
        len += (size_t)snprintf(text + len, cap - len, "%d.%06d", 1700000000 + i, (i * 7919) % 1000003);
        for (size_t k = 0; k < commas; k++) /* figures in the first columns, the rest empty */
            len += k < 10 ? (size_t)snprintf(text + len, cap - len, ",%d", (int)((i * 31 + k * 17) % 10))
                          : (size_t)snprintf(text + len, cap - len, ",");
        text[len++] = '\n';
    }
    const char *path = gzip_file(text, len, 1, 100);
    logs lg = {0};
    rt_reader *r;
    assert_int_equal(open_logged(path, &lg, &r), RT_OK);
    const rt_record *rec;
    rt_error e;
    while ((e = rt_reader_next(r, &rec)) == RT_OK && rec)
        ;
    assert_int_equal(e, RT_OK);
    uint64_t n = rt_reader_records(r);
    if (n <= 1000)
        fail_msg("%llu records, %llu skipped: %s", (unsigned long long)n, (unsigned long long)rt_reader_skipped(r),
                 lg.n ? lg.text[0] : "");
    assert_int_equal(rt_reader_skipped(r), 1);
    char want[256];
    snprintf(want, sizeof want, "%s:%llu: gzip stream corrupt or cut short here: nothing further is read", path,
             (unsigned long long)n + 2); /* the header, n rows, then the broken one */
    assert_int_equal(lg.n, 1);
    assert_string_equal(lg.text[0], want);
    rt_reader_close(r);
    unlink(path);
    free(text);
}

/* A gzip bomb: 17 MiB of zeros (any amount: the read stops at the cap) makes no line the reader
 * takes; the open fails with line 1 named, after reading no more than the cap and one read. */
static void test_gzip_bomb(void **state)
{
    (void)state;
    size_t len = (17u << 20);
    char *zeros = calloc(1, len);
    assert_non_null(zeros);
    const char *path = gzip_file(zeros, len, 1, 0);
    free(zeros);
    logs lg = {0};
    rt_reader *r = NULL;
    assert_int_equal(open_logged(path, &lg, &r), RT_ERR_PARSE);
    assert_null(r);
    char want[256];
    snprintf(want, sizeof want, "%s:1: a line longer than 16 MiB, which no recorded run has: not read further", path);
    assert_int_equal(lg.n, 1);
    assert_string_equal(lg.text[0], want);
    unlink(path);
}

/* "-" reads standard input (here a pipe), named "<stdin>" in messages. */
static void test_stdin(void **state)
{
    (void)state;
    size_t len;
    const char *text = fixture_text("runs/malformed.csv", &len);
    int p[2], saved = dup(STDIN_FILENO);
    assert_true(saved >= 0 && pipe(p) == 0);
    assert_true(write(p[1], text, len) == (ssize_t)len); /* fits in the pipe's buffer */
    close(p[1]);
    assert_true(dup2(p[0], STDIN_FILENO) == STDIN_FILENO);
    close(p[0]);
    logs lg = {0};
    rt_reader_options o = RT_READER_OPTIONS_INIT;
    o.log = collect;
    o.log_user = &lg;
    rt_reader *r;
    assert_int_equal(rt_reader_open("-", &o, &r), RT_OK);
    const rt_record *rec;
    while (rt_reader_next(r, &rec) == RT_OK && rec)
        ;
    assert_int_equal(rt_reader_records(r), 2);
    assert_int_equal(rt_reader_skipped(r), 2);
    rt_reader_close(r);
    assert_true(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
    close(saved);
    assert_true(lg.n == 2 && strncmp(lg.text[0], "<stdin>:3: ", 11) == 0);
}

/* ---- a replayed sample written in both formats and read back -------------------------- */

/* all_statvfs's total - available as a share of total (1 - f_bavail / f_blocks), the same on
 * every filesystem of the replay */
#define CSV_USED_SHARE 0.8

static int all_statvfs(void *user, const char *mount_point, struct statvfs *out)
{
    (void)user;
    (void)mount_point;
    memset(out, 0, sizeof *out);
    out->f_frsize = 4096;
    out->f_blocks = 1000000;
    out->f_bfree = 250000;
    out->f_bavail = 200000;
    return 0;
}

/* |a - b| within the output's rounding (rel of b, or abs). */
static void near(double a, double b, double abs, const char *what)
{
    if (isnan(a) && isnan(b))
        return;
    if (!(fabs(a - b) <= abs + 1e-6 * fabs(b)))
        fail_msg("%s: read %.9g, sample %.9g", what, a, b);
}

static void compare(const rt_record *got, const rt_record *want, bool csv)
{
    near(got->timestamp_secs, want->timestamp_secs, 0.0005, "timestamp");
    near(got->cpu_cores, want->cpu_cores, 0.00005, "cpu_cores");
    near(got->memory_used_mib, want->memory_used_mib, 0.0005, "memory_used");
    near(got->disk_read_bytes, want->disk_read_bytes, csv ? 0 : 0.005 * 2 + 1, "disk_read");
    near(got->disk_write_bytes, want->disk_write_bytes, csv ? 0 : 1, "disk_write");
    near(got->net_recv_bytes, want->net_recv_bytes, csv ? 0 : 1, "net_recv");
    near(got->net_sent_bytes, want->net_sent_bytes, csv ? 0 : 1, "net_sent");
    near(got->disk_space_total_bytes, want->disk_space_total_bytes, csv ? 0.0005 * GB : 0, "space_total");
    if (!csv)
        near(got->disk_space_used_bytes, want->disk_space_used_bytes, 0, "space_used");
    else /* the CSV's used is total - available (root's reserve in it), as both peers take it */
        near(got->disk_space_used_bytes, want->disk_space_total_bytes * CSV_USED_SHARE, 0.0005 * GB, "space_used");
    near(got->gpu_usage, want->gpu_usage, 0.00005, "gpu_usage");
    near(got->gpu_vram_mib, want->gpu_vram_mib, 0.0005, "gpu_vram");
    near(got->gpu_utilized, want->gpu_utilized, 0, "gpu_utilized");
    near(got->process_pid, want->process_pid, 0, "pid");
    near(got->process_children, want->process_children, 0, "children");
    near(got->process_cores, want->process_cores, 0.00005, "process_cores");
    near(got->process_cpu_secs, want->process_cpu_secs, 0.001, "process_cpu_secs");
    near(got->process_pss_mib, want->process_pss_mib, 0.0005, "pss");
    near(got->process_read_bytes, want->process_read_bytes, 0, "process_read");
    near(got->process_write_bytes, want->process_write_bytes, 0, "process_write");
    near(got->process_gpu_usage, want->process_gpu_usage, 0.00005, "process_gpu_usage");
    near(got->process_gpu_vram_mib, want->process_gpu_vram_mib, 0.0005, "process_gpu_vram");
    near(got->process_gpu_utilized, want->process_gpu_utilized, 0, "process_gpu_utilized");
    if (!csv) {
        near(got->interval_secs, want->interval_secs, 0.0005, "interval");
        near(got->cpu_count, want->cpu_count, 0, "cpu_count");
        near(got->memory_total_mib, want->memory_total_mib, 0.0005, "memory_total");
        near(got->gpu_count, want->gpu_count, 0, "gpu_count");
        near(got->gpu_vram_total_mib, want->gpu_vram_total_mib, 0, "gpu_vram_total");
        near(got->process_cpu_secs_total, want->process_cpu_secs_total, 0.0005, "cpu_secs_total");
        near(got->process_rss_mib, want->process_rss_mib, 0.0005, "rss");
        near(got->process_rss_peak_mib, want->process_rss_peak_mib, 0.0005, "rss_peak");
        near(got->process_memory_peak_mib, want->process_memory_peak_mib, 0.0005, "memory_peak");
        near(got->cgroup_oom_kills, want->cgroup_oom_kills, 0, "oom_kills");
        near(got->cgroup_memory_limit_mib, want->cgroup_memory_limit_mib, 0.0005, "memory_limit");
        near(got->cgroup_memory_high_mib, want->cgroup_memory_high_mib, 0.0005, "memory_high");
        near(got->cgroup_cpu_quota_cores, want->cgroup_cpu_quota_cores, 0.0005, "cpu_quota");
        near(got->cgroup_cpu_periods, want->cgroup_cpu_periods, 0, "cpu_periods");
        near(got->cgroup_cpu_throttled_periods, want->cgroup_cpu_throttled_periods, 0, "throttled_periods");
        near(got->cgroup_cpu_throttled_secs, want->cgroup_cpu_throttled_secs, 0.0005, "throttled_secs");
        near(got->cgroup_pids_peak, want->cgroup_pids_peak, 0, "pids_peak");
        near(got->cgroup_pids_limit, want->cgroup_pids_limit, 0, "pids_limit");
        near(got->pressure_cpu_some_pct, want->pressure_cpu_some_pct, 0.005, "pressure_cpu_some");
        near(got->pressure_memory_some_pct, want->pressure_memory_some_pct, 0.005, "pressure_memory_some");
        near(got->pressure_memory_full_pct, want->pressure_memory_full_pct, 0.005, "pressure_memory_full");
        near(got->pressure_io_some_pct, want->pressure_io_some_pct, 0.005, "pressure_io_some");
        near(got->pressure_io_full_pct, want->pressure_io_full_pct, 0.005, "pressure_io_full");
    } else {
        assert_nan(got->process_memory_peak_mib); /* the CSV has no 0.6 column */
        assert_nan(got->cgroup_oom_kills);
        assert_nan(got->pressure_cpu_some_pct);
    }
}

static void test_replayed_sample(void **state)
{
    (void)state;
    static const char *const cases[] = {"gpu-amd-intel", "server-nvme-lvm", "vm-virtio"};
    for (size_t c = 0; c < 3; c++) {
        char dir[] = "/tmp/rt-reader-XXXXXX", proc[128], sys[1024], rel[256], cmd[2400];
        unit_tmpdir(dir);
        snprintf(proc, sizeof proc, "%s/proc", dir);
        unit_case_roots(cases[c], proc, sys, sizeof sys);
        rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
        o.proc_root = proc;
        o.sys_root = sys;
        snprintf(rel, sizeof rel, "%s/%s/pid", RT_FIXTURES, cases[c]);
        FILE *pf = fopen(rel, "r");
        long pid = 0;
        if (pf) {
            assert_int_equal(fscanf(pf, "%ld", &pid), 1);
            fclose(pf);
        }
        o.pid = pid;
        rt_sampler *s;
        assert_int_equal(rt_sampler_new_replay(&o, all_statvfs, NULL, &s), RT_OK);
        const rt_sample *smp;
        rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
        snprintf(cmd, sizeof cmd, "cp -a '%s/%s/t1/proc/.' '%s/'", RT_FIXTURES, cases[c], proc);
        unit_system(cmd);
        rt_sampler_sample_at(s, 1002.5, 1.7e9 + 2.5, &smp);
        rt_record want;
        rt_record_from_sample(smp, &want);
        static char buf[1 << 17];
        for (int f = 0; f < 2; f++) {
            size_t n = 0;
            if (f == 1)
                n = (size_t)snprintf(buf, sizeof buf, "%s", rt_csv_header());
            n += rt_format_sample(f ? RT_FORMAT_CSV : RT_FORMAT_JSON, smp, NULL, buf + n, sizeof buf - n);
            assert_true(n < sizeof buf);
            rt_reader *r;
            const rt_record *got;
            assert_int_equal(rt_reader_open_buffer("replay", buf, n, NULL, &r), RT_OK);
            assert_int_equal(rt_reader_next(r, &got), RT_OK);
            assert_non_null(got);
            compare(got, &want, f == 1);
            rt_reader_close(r);
        }
        rt_sampler_free(s);
        unit_rmtree(dir);
    }
}

/* ---- energy (0.15) ------------------------------------------------------------------------- */

static void same_str(const char *got, const char *want, const char *what)
{
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0))
        fail_msg("%s: read %s, written %s", what, got ? got : "NULL", want ? want : "NULL");
}

/* A sample with energy (a measured package, its dram, a sampled GPU) and a GPU that reports
 * its throttle time, written as a JSON line and as CSV, read back: the record is the sample's,
 * the reader's rt_energy has its domains, and the methods are the static strings. */
static void test_energy_round_trip(void **state)
{
    (void)state;
    rt_cpu cpu = {.utilization_pct = 1.5, .core_count = 0, .process_count = 2, .utime_secs = 1, .stime_secs = 0.5,
                  .process_cores_used = NAN, .process_child_count = RT_NULL_I64};
    rt_memory mem = {.total_mib = 100, .used_mib = 50, .available_mib = NAN};
    rt_gpu g0 = {.uuid = "GPU-1", .utilization_pct = 50, .vram_total_bytes = 1 << 20, .vram_used_bytes = 1 << 19,
                 .temperature_celsius = NAN, .power_watts = 200, .frequency_mhz = NAN, .core_count = RT_NULL_I64,
                 .power_throttled_secs = 1.5, .thermal_throttled_secs = 0.25};
    rt_gpu g1 = g0;
    g1.uuid = "GPU-2";
    g1.power_throttled_secs = g1.thermal_throttled_secs = NAN; /* reports none */
    const rt_gpu *gpus[] = {&g0, &g1};
    rt_energy_domain pkg = {.name = "package-0", .kind = "package", .source = "intel-rapl", .method = "measured",
                            .in_total = 1, .energy_joules = 30.125, .energy_joules_total = 300.5, .power_watts = 15.0625,
                            .process_share = 0.25, .process_energy_joules = 7.53125,
                            .process_energy_joules_total = 70.25};
    rt_energy_domain dram = {.name = "dram-0", .kind = "dram", .source = "intel-rapl", .method = "measured",
                             .in_total = 1, .energy_joules = 4, .energy_joules_total = 40, .power_watts = 2,
                             .process_share = 0.25, .process_energy_joules = 1, .process_energy_joules_total = 10};
    rt_energy_domain gpu = {.name = "gpu-0", .kind = "gpu", .source = "nvml", .method = "sampled", .device = "GPU-1",
                            .in_total = 1, .energy_joules = 400, .energy_joules_total = 4000, .power_watts = 200,
                            .process_share = NAN, .process_energy_joules = NAN, .process_energy_joules_total = NAN};
    const rt_energy_domain *doms[] = {&pkg, &dram, &gpu};
    rt_energy e = {.domain = doms, .domain_count = 3, .energy_joules = 434.125, .energy_joules_total = 4340.5,
                   .power_watts = 217.0625, .method = "sampled", .process_energy_joules = 8.53125,
                   .process_energy_joules_total = 80.25, .process_power_watts = 4.265625, .process_method = "measured",
                   .idle_power_watts = 150.5, .model = NULL, .missing = "chmod a+r /sys/class/powercap/*/energy_uj"};
    char method_copy[] = "sampled"; /* the sample's strings are not the static ones */
    e.method = method_copy;
    rt_sample smp = {.timestamp_secs = 1.7e9, .interval_secs = 2, .cpu = &cpu, .memory = &mem, .gpu = gpus,
                     .gpu_count = 2, .disk_space_total_bytes = RT_NULL_U64, .disk_space_used_bytes = RT_NULL_U64,
                     .disk_space_free_bytes = RT_NULL_U64, .energy = &e};
    rt_record want;
    rt_record_from_sample(&smp, &want);
    assert_string_equal(want.energy_method, "sampled");
    assert_true(want.energy_method != method_copy); /* the static string */
    assert_true(want.gpu_power_throttled_secs == 1.5 && want.gpu_thermal_throttled_secs == 0.25);
    static char buf[1 << 14];
    /* JSON; the CSV with the energy columns asked for; the plain CSV (0.18: the 32 columns) */
    const rt_format formats[3] = {RT_FORMAT_JSON, RT_FORMAT_CSV_ENERGY, RT_FORMAT_CSV};
    for (int f = 0; f < 3; f++) {
        size_t n = 0;
        if (f > 0)
            n = (size_t)snprintf(buf, sizeof buf, "%s", rt_format_header(formats[f]));
        n += rt_format_sample(formats[f], &smp, NULL, buf + n, sizeof buf - n);
        assert_true(n < sizeof buf);
        rt_reader *r;
        const rt_record *got;
        assert_int_equal(rt_reader_open_buffer(f ? "e.csv" : "e.jsonl", buf, n, NULL, &r), RT_OK);
        assert_int_equal(rt_reader_next(r, &got), RT_OK);
        assert_non_null(got);
        if (f == 2) { /* no energy columns: no energy, the rest read as ever */
            assert_nan(got->energy_joules);
            assert_nan(got->process_energy_joules);
            assert_null(got->energy_method);
            assert_null(got->process_energy_method);
            near(got->timestamp_secs, want.timestamp_secs, 0.0005, "timestamp");
            rt_reader_close(r);
            continue;
        }
        near(got->energy_joules, want.energy_joules, 0, "energy_joules");
        near(got->process_energy_joules, want.process_energy_joules, 0, "process_energy_joules");
        assert_ptr_equal(got->energy_method, want.energy_method); /* the same static strings */
        assert_ptr_equal(got->process_energy_method, want.process_energy_method);
        if (f == 1) { /* the CSV has the joules and methods only */
            assert_nan(got->idle_power_watts);
            assert_null(got->energy);
            rt_reader_close(r);
            continue;
        }
        near(got->idle_power_watts, 150.5, 0, "idle");
        near(got->gpu_power_throttled_secs, 1.5, 0, "gpu_power_throttled");
        near(got->gpu_thermal_throttled_secs, 0.25, 0, "gpu_thermal_throttled");
        const rt_energy *ge = got->energy;
        assert_non_null(ge);
        assert_ptr_equal(ge->method, want.energy_method);
        near(ge->energy_joules_total, e.energy_joules_total, 0, "energy_joules_total");
        near(ge->power_watts, e.power_watts, 0.0005, "power_watts"); /* 3 decimals */
        near(ge->process_energy_joules_total, e.process_energy_joules_total, 0, "process_total");
        near(ge->process_power_watts, e.process_power_watts, 0.0005, "process_power");
        assert_null(ge->model);
        same_str(ge->missing, e.missing, "missing");
        assert_int_equal(ge->domain_count, 3);
        for (size_t i = 0; i < 3; i++) {
            const rt_energy_domain *a = ge->domain[i], *b = doms[i];
            same_str(a->name, b->name, "name");
            same_str(a->kind, b->kind, "kind");
            same_str(a->source, b->source, "source");
            same_str(a->method, b->method, "method");
            same_str(a->device, b->device, "device");
            assert_int_equal(a->in_total, b->in_total);
            near(a->energy_joules, b->energy_joules, 0, "domain energy");
            near(a->energy_joules_total, b->energy_joules_total, 0, "domain total");
            near(a->power_watts, b->power_watts, 0.0005, "domain power");
            near(a->process_share, b->process_share, 0, "domain share");
            near(a->process_energy_joules, b->process_energy_joules, 0, "domain process");
            near(a->process_energy_joules_total, b->process_energy_joules_total, 0, "domain process total");
        }
        rt_reader_close(r);
    }
    /* without energy: none in the record, from either format */
    smp.energy = NULL;
    for (int f = 0; f < 2; f++) {
        size_t n = f ? (size_t)snprintf(buf, sizeof buf, "%s", rt_csv_header()) : 0;
        n += rt_format_sample(f ? RT_FORMAT_CSV : RT_FORMAT_JSON, &smp, NULL, buf + n, sizeof buf - n);
        assert_null(f ? NULL : strstr(buf, "\"energy\""));
        rt_reader *r;
        const rt_record *got;
        assert_int_equal(rt_reader_open_buffer("none", buf, n, NULL, &r), RT_OK);
        assert_int_equal(rt_reader_next(r, &got), RT_OK);
        assert_non_null(got);
        assert_nan(got->energy_joules);
        assert_null(got->energy_method);
        assert_null(got->energy);
        rt_reader_close(r);
    }
}

/* ---- the scanner against jansson ---------------------------------------------------------- */

typedef struct diffstats {
    unsigned lines, both_accept, scanner_stricter, both_reject;
} diffstats;

/* Checks one line: when the scanner accepts, jansson must too with the same figures; when
 * jansson rejects, the scanner must too. */
static void differential(const char *line, size_t len, locale_t loc, diffstats *st)
{
    static rt_jline a, b;
    const char *bad = rt_jline_scan(line, len, loc, &a);
    int o = oracle_jline(line, len, &b);
    st->lines++;
    if (!bad) {
        if (o != 0)
            fail_msg("scanner accepts what jansson does not (%d): %.*s", o, (int)(len > 300 ? 300 : len), line);
        const char *d = jline_diff(&a, &b);
        if (d)
            fail_msg("scanner and jansson differ in %s: %.*s", d, (int)(len > 300 ? 300 : len), line);
        st->both_accept++;
    } else if (o == 0) {
        st->scanner_stricter++;
    } else {
        st->both_reject++;
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* One random edit of src[0..len) into dst (cap bytes). Returns the new length. */
static size_t mutate(const char *src, size_t len, char *dst, size_t cap)
{
    static const char *const bits[] = {"{", "}", "[", "]", ",", ":", "\"", "\\", "0", "-", "1e400", ".5",
                                       "e", "null", "true", " ", "\\u0000", "\\ud800", "\\u00e9", "\xc3\xa9",
                                       "\xff", "\x01", "99999999999999999999", "-0", "01", "1.", "\"pss_mib\":7,",
                                       "\"process\":null,", "\"disk\":[],", "\"gpu\":[{}],", "\"cpu\":{},",
                                       "\"p\\u0073s_mib\":2,", "\"job_name\":\"\\u00e9\\n\","};
    size_t at = len ? rnd((unsigned)len) : 0, n = 0;
    unsigned kind = rnd(5);
    memcpy(dst, src, at);
    n = at;
    if (kind == 0 || kind == 1) { /* insert a fragment */
        const char *b = bits[rnd(sizeof bits / sizeof bits[0])];
        size_t bl = strlen(b);
        memcpy(dst + n, b, bl);
        n += bl;
        if (kind == 1 && at < len)
            at++; /* replace a byte */
    } else if (kind == 2) { /* delete a run */
        at += 1 + rnd(8);
    } else if (kind == 3) { /* a random byte */
        dst[n++] = (char)rnd(256);
        at++;
    } else { /* cut the line short */
        return n;
    }
    if (at < len && n + (len - at) < cap) {
        memcpy(dst + n, src + at, len - at);
        n += len - at;
    }
    return n;
}

static void test_scanner_vs_jansson(void **state)
{
    (void)state;
    locale_t loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    diffstats st = {0};
    static char lines[24][4096];
    size_t lens[24], nl = 0;
    static const char *const files[] = {"runs/tool.jsonl", "runs/malformed.jsonl", "runs/cgroup-oom.jsonl"};
    for (size_t f = 0; f < 3; f++) {
        size_t len;
        const char *t = fixture_text(files[f], &len);
        for (const char *p = t; p < t + len && nl < 22;) { /* two left for the extra lines */
            const char *e = memchr(p, '\n', (size_t)(t + len - p));
            e = e ? e : t + len;
            if ((size_t)(e - p) < sizeof lines[0]) {
                memcpy(lines[nl], p, (size_t)(e - p));
                lens[nl++] = (size_t)(e - p);
            }
            p = e + 1;
        }
    }
    /* a real line of the tool, with null figures and escapes */
    const char *extra = "{\"timestamp_secs\":1.7e9,\"interval_secs\":null,\"job_name\":\"a\\\"b\\u00e9\\ud83d\\ude00\","
                        "\"cpu\":{\"utilization_pct\":1.25e-3,\"per_core_pct\":[null,1]},\"network\":null,"
                        "\"disk\":[{\"device\":\"d\\u0061\",\"read_bytes_total\":-0,\"mounts\":[{\"mount_point\":\"/\"},"
                        "{\"mount_point\":\"/\",\"total_bytes\":9007199254740993}]}],\"gpu\":[{\"utilization_pct\":0.1}],"
                        "\"process\":{\"pid\":-9223372036854775808,\"pss_mib\":1.7976931348623157e308},"
                        "\"process\":{\"pid\":1,\"rss_mib\":0.1000000000000000055511151231257827}}";
    memcpy(lines[nl], extra, strlen(extra));
    lens[nl++] = strlen(extra);
    /* a whole-machine line with the tracker's own group (0.6) */
    const char *self = "{\"timestamp_secs\":2e9,\"process\":null,\"pressure\":{\"io\":{\"some_pct\":3,\"full_pct\":1}},"
                       "\"cgroup\":{\"path\":\"/slurm/job_7\",\"own\":false,\"memory_limit_mib\":1024.5,"
                       "\"cpu_quota_cores\":4,\"oom_kills\":0,\"pids_limit\":null,\"pressure\":{\"cpu\":{"
                       "\"some_avg10\":1,\"some_pct\":2,\"full_pct\":null},\"memory\":null,\"io\":null}}}";
    memcpy(lines[nl], self, strlen(self));
    lens[nl++] = strlen(self);
    static char m1[8192], m2[8192];
    for (size_t i = 0; i < nl; i++)
        differential(lines[i], lens[i], loc, &st);
    assert_int_equal(st.both_accept, 15); /* tool.jsonl 3, malformed.jsonl 2, cgroup-oom.jsonl 8, extras 2 */
    for (int k = 0; k < 40000; k++) {
        size_t i = rnd((unsigned)nl);
        size_t n1 = mutate(lines[i], lens[i], m1, sizeof m1);
        differential(m1, n1, loc, &st);
        size_t n2 = mutate(m1, n1, m2, sizeof m2);
        differential(m2, n2, loc, &st);
    }
    print_message("scanner vs jansson: %u lines, %u accepted by both, %u rejected by both, %u only by the scanner\n",
                  st.lines, st.both_accept, st.both_reject, st.scanner_stricter);
    assert_true(st.both_accept > 3000);
    assert_true(st.both_reject > 10000);
    freelocale(loc);
}

/* Numbers at the edges: converted exactly as strtod, integers as jansson keeps them. */
static void test_numbers(void **state)
{
    (void)state;
    locale_t loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    static const char *const ok[] = {"0", "-0", "1.5", "0.1", "123456789012345678", "9223372036854775807",
                                     "-9223372036854775808", "1e22", "1e23", "4.9e-324", "2.2250738585072014e-308",
                                     "1e-400", "0.30000000000000004", "1797693134862315708145274237317043567981e269",
                                     "1795338009.323", "17.65", "2.5E+3"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        rt_js j = {.p = ok[i], .end = ok[i] + strlen(ok[i]), .c_locale = loc};
        double v;
        assert_true(rt_js_number(&j, &v));
        char *end;
        double want = strchr(ok[i], '.') || strchr(ok[i], 'e') || strchr(ok[i], 'E')
                          ? strtod(ok[i], &end) : (double)strtoll(ok[i], &end, 10);
        if (v != want)
            fail_msg("%s: %.17g, want %.17g", ok[i], v, want);
    }
    static const char *const bad[] = {"01", "-", "1.", ".5", "1e", "+1", "9223372036854775808", "-9223372036854775809",
                                      "1e400", "-1e400", "0x10", "Infinity", "NaN"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rt_js j = {.p = bad[i], .end = bad[i] + strlen(bad[i]), .c_locale = loc};
        double v;
        bool r = rt_js_number(&j, &v) && rt_js_at_end(&j);
        if (r)
            fail_msg("%s accepted", bad[i]);
    }
    freelocale(loc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_fixture),      cmocka_unit_test(test_csv_fixture),
        cmocka_unit_test(test_json_cgroup_fixture), cmocka_unit_test(test_json_cgroup_members),
        cmocka_unit_test(test_python_fixtures),   cmocka_unit_test(test_python05_fixtures),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_malformed_csv),     cmocka_unit_test(test_unknown_and_empty),
        cmocka_unit_test(test_many_malformed),    cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_long_first_line),   cmocka_unit_test(test_gzip_input),
        cmocka_unit_test(test_gzip_cut_short),    cmocka_unit_test(test_gzip_bomb),
        cmocka_unit_test(test_intervals),         cmocka_unit_test(test_replayed_sample),
        cmocka_unit_test(test_scanner_vs_jansson), cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_machine_counters),
        cmocka_unit_test(test_process_counters),  cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_chunk_boundaries),  cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_energy_round_trip), cmocka_unit_test(test_csv_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
