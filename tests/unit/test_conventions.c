/* test_conventions.c - the header's conventions of 0.10: the thread's last error message (set
 * by the calls that say so, cleared when they begin), the reader's own message, the `_cb`
 * twins of the fd outputs (the same bytes as the fd; short takes; a failing callback), the
 * sized record (no byte past the caller's size, written or read: the members past it null), and
 * the new-convention constructors beside their deprecated names. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>

#include "resource_tracker.h"

/* ---- a callback that collects what it is given --------------------------------------- */

typedef struct sink {
    char *buf;
    size_t len, cap;
    size_t most;    /* takes at most this many bytes a call (0: all) */
    int fail_errno; /* non-zero: fails every call with this errno */
    size_t calls;
} sink;

static long collect(void *user, const void *p, size_t n)
{
    sink *k = user;
    k->calls++;
    assert_true(n > 0);
    if (k->fail_errno) {
        errno = k->fail_errno;
        return -1;
    }
    if (k->most && n > k->most)
        n = k->most;
    if (k->len + n > k->cap) {
        k->cap = (k->len + n) * 2;
        k->buf = realloc(k->buf, k->cap);
        assert_non_null(k->buf);
    }
    memcpy(k->buf + k->len, p, n);
    k->len += n;
    return (long)n;
}

/* Reads what was written to f (from its start). */
static char *file_text(FILE *f, size_t *len)
{
    long n = ftell(f);
    assert_true(n >= 0);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    *len = (size_t)n;
    return buf;
}

static rt_sampler *fixture_sampler(void)
{
    char p[1024], s[1024];
    snprintf(p, sizeof p, "%s/server-nvme-lvm/proc", RT_FIXTURES);
    snprintf(s, sizeof s, "%s/server-nvme-lvm/sys", RT_FIXTURES);
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = p;
    o.sys_root = s;
    rt_sampler *sm = NULL;
    assert_int_equal(rt_sampler_new(&o, &sm), RT_OK);
    return sm;
}

/* ---- the last error message ------------------------------------------------------------ */

static void reader_open_sets_and_clears_the_last_error(void **state)
{
    (void)state;
    rt_reader *r = NULL;
    assert_int_equal(rt_reader_open("/nonexistent/run.jsonl", NULL, &r), RT_ERR_NOT_FOUND);
    assert_null(r);
    assert_non_null(strstr(rt_last_error_message(), "/nonexistent/run.jsonl: cannot open: "));
    const char junk[] = "hello\nworld\n";
    assert_int_equal(rt_reader_open_buffer("junk.txt", junk, sizeof junk - 1, NULL, &r), RT_ERR_PARSE);
    assert_string_equal(rt_last_error_message(), "junk.txt:1: not a resource-tracker JSON lines or CSV file");
    /* a call that succeeds clears it */
    const char run[] =
        "{\"timestamp_secs\": 1.0, \"interval_secs\": 1.0}\n{\"timestamp_secs\": 2.0, \"interval_secs\": 1.0}\n";
    assert_int_equal(rt_reader_open_buffer("run.jsonl", run, sizeof run - 1, NULL, &r), RT_OK);
    assert_string_equal(rt_last_error_message(), "");
    rt_reader_free(r);
    rt_reader_free(NULL);
}

static void *other_thread(void *arg)
{
    (void)arg;
    return (void *)rt_last_error_message();
}

static void last_error_is_the_threads_own(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(rt_format_summary_json(NULL, "mb", NULL, buf, sizeof buf, NULL), RT_ERR_INVALID);
    pthread_t th;
    void *theirs = NULL;
    assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(th, &theirs), 0);
    assert_string_equal((const char *)theirs, "");
    assert_non_null(strstr(rt_last_error_message(), "\"mb\""));
}

static void reader_errmsg_names_the_skipped_line(void **state)
{
    (void)state;
    const char run[] = "{\"timestamp_secs\": 1.0, \"interval_secs\": 1.0}\nnot json\n{\"timestamp_secs\": 3.0, "
                       "\"interval_secs\": 1.0}\n";
    rt_reader *r = NULL;
    assert_int_equal(rt_reader_open_buffer("run.jsonl", run, sizeof run - 1, NULL, &r), RT_OK);
    assert_string_equal(rt_reader_errmsg(r), "");
    const rt_record *rec;
    while (rt_reader_next(r, &rec) == RT_OK && rec)
        ;
    assert_int_equal(rt_reader_skipped(r), 1);
    assert_non_null(strstr(rt_reader_errmsg(r), "run.jsonl:2: "));
    rt_reader_free(r);
    assert_string_equal(rt_reader_errmsg(NULL), "");
}

/* ---- the summary's JSON ------------------------------------------------------------------ */

static void format_summary_json_says_which_unit(void **state)
{
    (void)state;
    rt_stats *st = NULL;
    assert_int_equal(rt_stats_new_with(NULL, &st), RT_OK);
    const rt_summary *s = rt_stats_summary(st);
    char buf[16384], old[16384];
    size_t n = 1;
    assert_int_equal(rt_format_summary_json(s, "megabytes", "furlongs", buf, sizeof buf, &n), RT_ERR_INVALID);
    assert_int_equal(n, 0);
    assert_string_equal(buf, "");
    assert_string_equal(rt_last_error_message(), "unknown time unit \"furlongs\" (seconds, minutes, hours, days)");
    assert_int_equal(rt_format_summary_json(s, "mb", NULL, buf, sizeof buf, &n), RT_ERR_INVALID);
    assert_non_null(strstr(rt_last_error_message(), "unknown memory unit \"mb\""));
    assert_int_equal(rt_format_summary_json(s, "gigabytes", "hours", buf, sizeof buf, &n), RT_OK);
    assert_string_equal(rt_last_error_message(), "");
    assert_int_equal(n, rt_format_summary(s, "gigabytes", "hours", old, sizeof old));
    assert_string_equal(buf, old);
    /* too small: the length needed, as snprintf */
    assert_int_equal(rt_format_summary_json(s, NULL, NULL, buf, 8, &n), RT_OK);
    assert_true(n > 8);
    assert_int_equal(strlen(buf), 7);
    rt_stats_free(st);
}

/* ---- constructors ------------------------------------------------------------------------ */

static void new_with_constructors(void **state)
{
    (void)state;
    rt_stats *st = (rt_stats *)1;
    rt_usage_options bad = RT_USAGE_OPTIONS_INIT;
    bad.expected_cores = -1;
    assert_int_equal(rt_stats_new_with(&bad, &st), RT_ERR_INVALID);
    assert_null(st);
    assert_non_null(strstr(rt_last_error_message(), "expected_cores"));
    assert_int_equal(rt_stats_new_with(NULL, NULL), RT_ERR_INVALID);
    rt_usage_options u = RT_USAGE_OPTIONS_INIT;
    u.expected_cores = 2;
    assert_int_equal(rt_stats_new_with(&u, &st), RT_OK);
    assert_true(rt_stats_summary(st)->usage->expected_cores == 2);
    rt_stats_free(st);

    rt_report *rep = NULL;
    rt_report_options ro = RT_REPORT_OPTIONS_INIT;
    assert_int_equal(rt_report_new_with(&ro, &rep), RT_OK);
    rt_report_free(rep);
    ro.struct_size = 1;
    rep = (rt_report *)1;
    assert_int_equal(rt_report_new_with(&ro, &rep), RT_ERR_INVALID);
    assert_null(rep);
    assert_string_equal(rt_last_error_message(), "rt_report_new_with: rt_report_options.struct_size is too small");
    assert_int_equal(rt_report_new_with(NULL, &rep), RT_OK);
    rt_report_free(rep);

    rt_allocation *a = NULL;
    rt_allocation_options ao = RT_ALLOCATION_OPTIONS_INIT;
    assert_int_equal(rt_allocation_new_with(&ao, &a), RT_OK);
    assert_null(rt_allocation_guess(a));
    rt_allocation_free(a);
    assert_int_equal(rt_allocation_new_with(NULL, NULL), RT_ERR_INVALID);
    assert_string_equal(rt_last_error_message(), "rt_allocation_new_with: out is NULL");

    /* the deprecated names still work */
    st = rt_stats_new();
    assert_non_null(st);
    rt_stats_free(st);
    rep = rt_report_new();
    assert_non_null(rep);
    rt_report_free(rep);
    a = rt_allocation_new();
    assert_non_null(a);
    rt_allocation_free(a);
}

static void host_new_and_job_cgroup_join(void **state)
{
    (void)state;
    rt_host_options o = RT_HOST_OPTIONS_INIT;
    o.proc_root = "/nonexistent-proc";
    rt_host *h = (rt_host *)1;
    assert_int_equal(rt_host_new(&o, &h), RT_ERR_NOT_FOUND);
    assert_null(h);
    assert_string_equal(rt_last_error_message(), "the proc root /nonexistent-proc cannot be opened");
    assert_int_equal(rt_host_new(NULL, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_job_cgroup_join(NULL), RT_ERR_INVALID);
}

static void sampler_and_writer_say_why(void **state)
{
    (void)state;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = "/nonexistent-proc";
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new(&o, &s), RT_ERR_NOT_FOUND);
    assert_string_equal(rt_last_error_message(), "the proc root /nonexistent-proc cannot be opened");
    o.proc_root = NULL;
    o.pid = -3;
    assert_int_equal(rt_sampler_new(&o, &s), RT_ERR_INVALID);
    assert_string_equal(rt_last_error_message(), "rt_sampler_options: a negative pid");
    char p[1024];
    snprintf(p, sizeof p, "%s/server-nvme-lvm/proc", RT_FIXTURES);
    o.proc_root = p;
    o.pid = 999999999; /* no such process in the fixture */
    assert_int_equal(rt_sampler_new(&o, &s), RT_ERR_NOT_FOUND);
    assert_string_equal(rt_last_error_message(), "process 999999999 does not exist");
    rt_writer *w = NULL;
    assert_int_equal(rt_writer_new((rt_format)7, 1, NULL, &w), RT_ERR_INVALID);
    assert_string_equal(rt_last_error_message(), "rt_writer_new: unknown format 7");
    assert_int_equal(rt_writer_new(RT_FORMAT_JSON, -1, NULL, &w), RT_ERR_INVALID);
    assert_string_equal(rt_last_error_message(), "rt_writer_new: a negative fd");
    assert_int_equal(rt_writer_new(RT_FORMAT_JSON, 1, NULL, &w), RT_OK);
    assert_string_equal(rt_last_error_message(), "");
    rt_writer_free(w);
}

/* ---- the sized record -------------------------------------------------------------------- */

static void record_from_sample_writes_no_more_than_asked(void **state)
{
    (void)state;
    rt_sampler *sm = fixture_sampler();
    const rt_sample *s;
    assert_int_equal(rt_sampler_sample(sm, &s), RT_OK);
    rt_record full;
    rt_record_from_sample(s, &full);
    /* an older binding's record: up to gpu_vram_total_mib (0.3's machine part) */
    size_t old_size = offsetof(rt_record, gpu_vram_total_mib) + sizeof(double);
    unsigned char mem[sizeof(rt_record) + 64];
    memset(mem, 0xAB, sizeof mem);
    assert_int_equal(rt_record_from_sample_sized(s, (rt_record *)(void *)mem, old_size), RT_OK);
    assert_memory_equal(mem, &full, old_size);
    for (size_t i = old_size; i < sizeof mem; i++)
        assert_int_equal(mem[i], 0xAB);
    /* a newer binding's larger record: its tail is left alone */
    memset(mem, 0xAB, sizeof mem);
    assert_int_equal(rt_record_from_sample_sized(s, (rt_record *)(void *)mem, sizeof mem), RT_OK);
    assert_memory_equal(mem, &full, sizeof full);
    for (size_t i = sizeof full; i < sizeof mem; i++)
        assert_int_equal(mem[i], 0xAB);
    assert_int_equal(rt_record_from_sample_sized(s, &full, 0), RT_ERR_INVALID);
    assert_int_equal(rt_record_from_sample_sized(NULL, &full, sizeof full), RT_ERR_INVALID);
    rt_sampler_free(sm);
}

/* ---- a caller's record read at the caller's size ------------------------------------------- */

/* How a record is handed in: the three readers of a caller's record. */
typedef enum { BY_STATS, BY_REPORT, BY_PIPELINE } record_path;

/* What the library made of recs[0..n) of size bytes each (taken at stride bytes apart): the
 * summary's JSON (statistics and pipeline) or the report's page. */
static char *made_of(record_path how, const unsigned char *recs, size_t stride, size_t n, size_t size)
{
    rt_stats *st = NULL;
    rt_report *rep = NULL;
    rt_pipeline *p = NULL;
    assert_int_equal(rt_stats_new_with(NULL, &st), RT_OK);
    assert_int_equal(rt_report_new_with(NULL, &rep), RT_OK);
    if (how == BY_PIPELINE) {
        rt_sink *sk = NULL;
        assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
        assert_int_equal(rt_stats_sink_new(st, &sk), RT_OK);
        assert_int_equal(rt_pipeline_attach(p, sk), RT_OK);
    }
    for (size_t i = 0; i < n; i++) {
        const rt_record *r = (const rt_record *)(const void *)(recs + i * stride);
        if (how == BY_STATS)
            rt_stats_add_sized(st, r, size);
        else if (how == BY_REPORT)
            rt_report_add_sized(rep, r, size);
        else
            assert_int_equal(rt_pipeline_add_record(p, r, size), RT_OK);
    }
    rt_pipeline_finish(p, NULL);
    rt_pipeline_free(p);
    sink k = {0};
    if (how == BY_REPORT) {
        rt_report_info info = RT_REPORT_INFO_INIT;
        info.title = "sized";
        assert_int_equal(rt_report_write_cb(rep, &info, collect, &k), RT_OK);
    } else {
        size_t len = 0;
        char buf[1];
        assert_int_equal(rt_format_summary_json(rt_stats_summary(st), NULL, NULL, buf, 0, &len), RT_OK);
        k.buf = malloc(len + 1);
        assert_non_null(k.buf);
        assert_int_equal(rt_format_summary_json(rt_stats_summary(st), NULL, NULL, k.buf, len + 1, &k.len), RT_OK);
    }
    k.buf = realloc(k.buf, k.len + 1);
    assert_non_null(k.buf);
    k.buf[k.len] = '\0';
    rt_stats_free(st);
    rt_report_free(rep);
    return k.buf;
}

static void record_read_at_the_callers_size(void **state)
{
    (void)state;
    enum { N = 3 };
    /* records of a tree that set the newer members too: the split of 0.8 and the 0.9 figures */
    rt_record full[N], older[N];
    for (size_t i = 0; i < N; i++) {
        rt_record *r = &full[i];
        memset(r, 0, sizeof *r);
        r->timestamp_secs = 1700000000.0 + (double)i;
        r->interval_secs = 1;
        r->job_name = "sized";
        r->cpu_cores = 1.5;
        r->cpu_count = 4;
        r->memory_used_mib = r->memory_total_mib = 1000;
        r->process_pid = 7;
        r->process_children = 2;
        r->process_cores = 1 + (double)i;
        r->process_cpu_secs = 1;
        r->process_pss_mib = r->process_rss_mib = 100 + (double)i;
        r->cgroup_pids = 3;
        r->cgroup_oom_kills = 0;
        r->cgroup_memory_limit_mib = 4096;
        rt_record_part part = {50, 40, 10, 0.5, 4, 0};
        r->main = r->descendants = r->combined = part;
        r->process_rss_hwm_mib = 900;
        r->process_unreclaimable_peak_mib = 800;
        r->process_gpu_vram_peak_mib = 0;
        r->process_cancelled_write_bytes_total = 0;
        r->process_alive = i + 1 < N;
        r->process_cgroup_exclusive = 1;
        /* the same record as a caller of 0.6/0.7 has it, its newer members null, set by hand */
        older[i] = *r;
        rt_record_part nan_part = {NAN, NAN, NAN, NAN, NAN, NAN};
        older[i].main = older[i].descendants = older[i].combined = nan_part;
        older[i].gpu = NULL;
        older[i].gpu_n = 0;
        older[i].process_rss_hwm_mib = older[i].process_unreclaimable_peak_mib = NAN;
        older[i].process_gpu_vram_peak_mib = older[i].process_cancelled_write_bytes_total = NAN;
        older[i].process_alive = older[i].process_cgroup_exclusive = older[i].cgroup_pids = NAN;
        older[i].process_vms_mib = NAN;       /* 0.16 */
        older[i].process_walk_age_secs = NAN; /* 0.18 */
        older[i].process_rss_hwm_tree_mib = NAN;
        older[i].gpu_sm_active_pct = older[i].gpu_sm_occupancy_pct = older[i].gpu_tensor_active_pct = NAN; /* 0.19 */
        older[i].gpu_dram_active_pct = older[i].gpu_fp64_active_pct = older[i].gpu_fp32_active_pct = NAN;
        older[i].gpu_fp16_active_pct = older[i].gpu_pcie_bytes_per_sec = older[i].gpu_nvlink_bytes_per_sec = NAN;
        older[i].gpu_work_shared = older[i].process_gpus_busy = older[i].process_gpu_vram_per_gpu_mib = NAN;
        older[i].process_cpu_wait_cores = NAN; /* 0.20 */
        older[i].cgroup_memory_refault_mib = NAN; /* 0.20 */
        older[i].process_exits_counted = NAN; /* 0.20 */
        older[i].process_unwaited_parents = NAN; /* 0.20 */
    }
    const size_t old_size = offsetof(rt_record, main); /* the record of 0.6 and 0.7 */
    /* the old records in a larger buffer, every byte past each one's size poisoned: read as a
     * double it is a large number, as gpu a pointer nowhere, as gpu_n a huge count */
    const size_t stride = sizeof(rt_record) + 16;
    unsigned char *poisoned = malloc(N * stride);
    assert_non_null(poisoned);
    memset(poisoned, 0x41, N * stride);
    /* and each in a heap block of exactly its size, for ASan and valgrind */
    unsigned char *exact = malloc(N * old_size);
    assert_non_null(exact);
    for (size_t i = 0; i < N; i++) {
        memcpy(poisoned + i * stride, &full[i], old_size);
        memcpy(exact + i * old_size, &full[i], old_size);
    }
    for (record_path how = BY_STATS; how <= BY_PIPELINE; how++) {
        char *want = made_of(how, (const unsigned char *)older, sizeof(rt_record), N, sizeof(rt_record));
        char *whole = made_of(how, (const unsigned char *)full, sizeof(rt_record), N, sizeof(rt_record));
        char *cut = made_of(how, poisoned, stride, N, old_size);
        char *tight = made_of(how, exact, old_size, N, old_size);
        assert_string_equal(cut, want);
        assert_string_equal(tight, want);
        if (how != BY_REPORT) /* the report draws nothing of the newer members */
            assert_string_not_equal(whole, want); /* the newer members count when they are there */
        /* a size cut inside a member leaves that member null too */
        char *mid = made_of(how, poisoned, stride, N, old_size + 3);
        assert_string_equal(mid, want);
        /* a newer caller's larger record: the library reads its own part */
        unsigned char *larger = malloc(N * stride);
        assert_non_null(larger);
        memset(larger, 0x41, N * stride);
        for (size_t i = 0; i < N; i++)
            memcpy(larger + i * stride, &full[i], sizeof(rt_record));
        char *newer = made_of(how, larger, stride, N, stride);
        assert_string_equal(newer, whole);
        free(larger);
        free(want);
        free(whole);
        free(cut);
        free(tight);
        free(mid);
        free(newer);
    }
    /* a size 0 or a NULL record adds nothing */
    rt_stats *st = NULL;
    assert_int_equal(rt_stats_new_with(NULL, &st), RT_OK);
    rt_stats_add_sized(st, &full[0], 0);
    rt_stats_add_sized(st, NULL, sizeof full[0]);
    assert_int_equal(rt_stats_summary(st)->samples, 0);
    rt_stats_add_sized(st, &full[0], sizeof full[0]);
    assert_int_equal(rt_stats_summary(st)->samples, 1);
    rt_stats_free(st);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_add_record(p, &full[0], 0), RT_ERR_INVALID);
    rt_pipeline_free(p);
    free(poisoned);
    free(exact);
}

/* ---- the `_cb` outputs -------------------------------------------------------------------- */

static void writer_cb_writes_what_the_fd_gets(void **state)
{
    (void)state;
    rt_sampler *sm = fixture_sampler();
    const rt_sample *s;
    assert_int_equal(rt_sampler_sample(sm, &s), RT_OK);
    for (int f = RT_FORMAT_JSON; f <= RT_FORMAT_CSV; f++) {
        FILE *tf = tmpfile();
        assert_non_null(tf);
        rt_writer *wf = NULL, *wc = NULL;
        sink k = {.most = 7}; /* short takes: the writer hands over the rest */
        assert_int_equal(rt_writer_new((rt_format)f, fileno(tf), NULL, &wf), RT_OK);
        assert_int_equal(rt_writer_new_cb((rt_format)f, collect, &k, NULL, &wc), RT_OK);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(rt_writer_write(wf, s), RT_OK);
            assert_int_equal(rt_writer_write(wc, s), RT_OK);
        }
        size_t n;
        char *text = file_text(tf, &n);
        assert_int_equal(k.len, n);
        assert_memory_equal(k.buf, text, n);
        assert_true(k.calls > 2);
        free(text);
        free(k.buf);
        fclose(tf);
        rt_writer_free(wf);
        rt_writer_free(wc);
    }
    /* a failing callback: RT_ERR_IO with its errno */
    sink bad = {.fail_errno = EPIPE};
    rt_writer *w = NULL;
    assert_int_equal(rt_writer_new_cb(RT_FORMAT_JSON, collect, &bad, NULL, &w), RT_OK);
    errno = 0;
    assert_int_equal(rt_writer_write(w, s), RT_ERR_IO);
    assert_int_equal(errno, EPIPE);
    rt_writer_free(w);
    assert_int_equal(rt_writer_new_cb(RT_FORMAT_JSON, NULL, NULL, NULL, &w), RT_ERR_INVALID);
    assert_null(w);
    rt_sampler_free(sm);
}

static void report_cb_writes_what_the_fd_gets(void **state)
{
    (void)state;
    rt_report *rep = NULL;
    assert_int_equal(rt_report_new_with(NULL, &rep), RT_OK);
    const char run[] =
        "{\"timestamp_secs\": 1.0, \"interval_secs\": 1.0}\n{\"timestamp_secs\": 2.0, \"interval_secs\": 1.0}\n";
    rt_reader *r = NULL;
    assert_int_equal(rt_reader_open_buffer("run.jsonl", run, sizeof run - 1, NULL, &r), RT_OK);
    const rt_record *rec;
    while (rt_reader_next(r, &rec) == RT_OK && rec)
        rt_report_add(rep, rec);
    rt_reader_free(r);
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.title = "conventions";
    FILE *tf = tmpfile();
    assert_non_null(tf);
    assert_int_equal(rt_report_write(rep, &info, fileno(tf)), RT_OK);
    sink k = {0};
    assert_int_equal(rt_report_write_cb(rep, &info, collect, &k), RT_OK);
    size_t n;
    char *text = file_text(tf, &n);
    assert_true(n > 100000); /* the page carries its scripts: several 64 KiB pieces */
    assert_int_equal(k.len, n);
    assert_memory_equal(k.buf, text, n);
    assert_true(k.calls > 1);
    free(text);
    free(k.buf);
    fclose(tf);
    sink bad = {.fail_errno = ENOSPC};
    errno = 0;
    assert_int_equal(rt_report_write_cb(rep, &info, collect, &bad), RT_ERR_IO);
    assert_int_equal(errno, ENOSPC);
    assert_int_equal(bad.calls, 1); /* nothing more after the first failure */
    assert_int_equal(rt_report_write_cb(rep, &info, NULL, NULL), RT_ERR_INVALID);
    rt_report_free(rep);
}

static void tracker_save_and_report_cb(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/snapshots/libresource-tracker-0.5.json.gz", RT_FIXTURES);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_load(path, NULL, NULL, &t), RT_OK);
    for (int flags = 0; flags <= RT_SAVE_GZIP; flags++) {
        FILE *tf = tmpfile();
        assert_non_null(tf);
        assert_int_equal(rt_tracker_save(t, "{\"server_info\": {}}", flags, fileno(tf)), RT_OK);
        sink k = {.most = 4096};
        assert_int_equal(rt_tracker_save_cb(t, "{\"server_info\": {}}", flags, collect, &k), RT_OK);
        size_t n;
        char *text = file_text(tf, &n);
        assert_int_equal(k.len, n);
        assert_memory_equal(k.buf, text, n);
        free(text);
        free(k.buf);
        fclose(tf);
    }
    sink k = {0};
    assert_int_equal(rt_tracker_save_cb(t, "[1]", 0, collect, &k), RT_ERR_INVALID);
    assert_non_null(strstr(rt_last_error_message(), "extra_json is not a JSON object"));
    assert_int_equal(k.calls, 0);
    assert_int_equal(rt_tracker_report_cb(t, NULL, collect, &k), RT_OK);
    assert_true(k.len > 1000);
    assert_non_null(memmem(k.buf, k.len, "<html", 5));
    free(k.buf);
    assert_int_equal(rt_tracker_report_cb(t, NULL, NULL, NULL), RT_ERR_INVALID);
    rt_tracker_free(t);
    /* the load says why a file is no snapshot */
    const char junk[] = "{\"metadata\": 3}";
    assert_int_equal(rt_tracker_load_buffer(junk, sizeof junk - 1, NULL, NULL, &t), RT_ERR_PARSE);
    assert_true(strncmp(rt_last_error_message(), "snapshot: ", 10) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader_open_sets_and_clears_the_last_error),
        cmocka_unit_test(last_error_is_the_threads_own),
        cmocka_unit_test(reader_errmsg_names_the_skipped_line),
        cmocka_unit_test(format_summary_json_says_which_unit),
        cmocka_unit_test(new_with_constructors),
        cmocka_unit_test(host_new_and_job_cgroup_join),
        cmocka_unit_test(sampler_and_writer_say_why),
        cmocka_unit_test(record_from_sample_writes_no_more_than_asked),
        cmocka_unit_test(record_read_at_the_callers_size),
        cmocka_unit_test(writer_cb_writes_what_the_fd_gets),
        cmocka_unit_test(report_cb_writes_what_the_fd_gets),
        cmocka_unit_test(tracker_save_and_report_cb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
