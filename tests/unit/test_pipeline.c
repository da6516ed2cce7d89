/* test_pipeline.c - the pipeline and its sinks: each sample to every sink in the order
 * attached, the record made once and only for the sinks that read it, a sink that fails gets
 * nothing more, the host pushed to the sinks attached (nothing kept), ends in order then frees;
 * the record as the store keeps it, so that statistics fed live, by the embedded tracker and
 * from a record read back see the same figures; the textfile sink; exporters that keep their
 * own reference to the cloud discovery (the caller frees its handle at once); the checks. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <sched.h>

#include "../tools/synthetic.h"
#include "embed/tracker_int.h"
#include "source/cloud.h"
#include "store/store.h"

#define LOG_CAP 512 /* a test's shared log */

/* A sink that logs what it is given into a shared text. */
typedef struct probe {
    char name;
    char *log;   /* shared by the probes of one test: LOG_CAP bytes */
    int adds;
    int fail_at; /* the add that fails (1-based); 0: none */
    const rt_host *host;
    rt_record last; /* the last record given */
    bool had_record, had_sample;
    int64_t end_status;
} probe;

static void say(probe *p, const char *what)
{
    size_t n = strlen(p->log);
    snprintf(p->log + n, LOG_CAP - n, "%c:%s ", p->name, what);
}

static rt_error probe_add(void *self, const rt_sample *s, const rt_record *rec)
{
    probe *p = self;
    p->adds++;
    p->had_sample = s != NULL;
    p->had_record = rec != NULL;
    if (rec)
        p->last = *rec;
    say(p, "add");
    if (p->fail_at && p->adds == p->fail_at) {
        errno = EPIPE;
        return RT_ERR_IO;
    }
    return RT_OK;
}

static void probe_host(void *self, const rt_host *host, const rt_cloud *cloud)
{
    (void)cloud;
    probe *p = self;
    p->host = host;
    say(p, "host");
}

static rt_error probe_finish(void *self, const rt_run_end *end)
{
    probe *p = self;
    p->end_status = end->exit_status;
    say(p, "finish");
    return RT_OK;
}

static void probe_free(void *self)
{
    say(self, "free");
}

static rt_sink *probe_sink(probe *p, bool reads_record)
{
    rt_sink_ops ops = RT_SINK_OPS_INIT;
    ops.add = probe_add;
    ops.set_host = probe_host;
    ops.finish = probe_finish;
    ops.free = probe_free;
    ops.reads_record = reads_record;
    rt_sink *s = NULL;
    assert_int_equal(rt_sink_new(&ops, p, &s), RT_OK);
    return s;
}

static void order_records_failure_and_end(void **state)
{
    (void)state;
    make_full();
    char log[LOG_CAP] = "";
    probe a = {.name = 'a', .log = log}, b = {.name = 'b', .log = log, .fail_at = 2}, c = {.name = 'c', .log = log};
    rt_job job = RT_JOB_INIT;
    job.job_name = "train";
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(&job, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, probe_sink(&a, false)), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, probe_sink(&b, false)), RT_OK);
    rt_host host = {0};
    rt_pipeline_set_host(p, &host, NULL);
    assert_int_equal(rt_pipeline_attach(p, probe_sink(&c, true)), RT_OK); /* given nothing kept */
    assert_ptr_equal(a.host, &host);
    assert_null(c.host);
    assert_string_equal(log, "a:host b:host ");
    rt_pipeline_set_host(p, &host, NULL);
    assert_ptr_equal(c.host, &host);

    log[0] = '\0';
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    assert_string_equal(log, "a:add b:add c:add ");
    assert_true(a.had_sample && !a.had_record); /* a reads no records: none given */
    assert_true(c.had_sample && c.had_record);
    assert_string_equal(c.last.job_name, "train"); /* the pipeline's copy of the job */

    log[0] = '\0';
    errno = 0;
    assert_int_equal(rt_pipeline_add(p, &full), RT_ERR_IO); /* b fails: the error and its errno */
    assert_int_equal(errno, EPIPE);
    assert_string_equal(log, "a:add b:add c:add ");
    log[0] = '\0';
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK); /* b gets nothing more */
    assert_string_equal(log, "a:add c:add ");
    assert_int_equal(b.adds, 2);

    /* a record read back goes only to the sinks that read records, without a sample */
    log[0] = '\0';
    rt_record rec;
    rt_record_from_sample(&full, &rec);
    assert_int_equal(rt_pipeline_add_record(p, &rec, sizeof rec), RT_OK);
    assert_string_equal(log, "c:add ");
    assert_false(c.had_sample);

    log[0] = '\0';
    rt_run_end end = RT_RUN_END_INIT;
    end.exit_status = 3;
    rt_pipeline_finish(p, &end);
    assert_int_equal(rt_pipeline_add(p, &full), RT_ERR_INVALID); /* ended: no more samples */
    rt_pipeline_finish(p, &end);                                  /* once only */
    rt_pipeline_free(p);
    assert_string_equal(log, "a:finish b:finish c:finish a:free b:free c:free ");
    assert_int_equal(a.end_status, 3);
    assert_int_equal(b.end_status, 3);
}

/* Every double of two records, bit for bit (NaN equal to NaN). */
static void same_record(const rt_record *x, const rt_record *y, size_t skip_off)
{
    rt_record a = *x, b = *y;
    a.job_name = b.job_name = NULL;
    a.gpu = b.gpu = NULL;
    a.gpu_n = b.gpu_n = 0;
    a.energy = b.energy = NULL; /* the embedded tracker keeps rows: the figures, not the domains */
    const double *da = (const double *)&a, *db = (const double *)&b;
    for (size_t i = 0; i < sizeof a / sizeof(double); i++) {
        if (i * sizeof(double) == skip_off)
            continue;
        if (isnan(da[i]) && isnan(db[i]))
            continue;
        if (memcmp(&da[i], &db[i], sizeof(double)) != 0)
            fail_msg("record member at byte %zu: %.17g against %.17g", i * sizeof(double), da[i], db[i]);
    }
}

/* The record a pipeline hands a sink for sample s (or for a record read back: rec). */
static rt_record piped(const rt_sample *s, const rt_record *rec)
{
    char log[LOG_CAP] = "";
    probe c = {.name = 'c', .log = log};
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, probe_sink(&c, true)), RT_OK);
    assert_int_equal(s ? rt_pipeline_add(p, s) : rt_pipeline_add_record(p, rec, sizeof *rec), RT_OK);
    rt_pipeline_free(p);
    assert_true(c.had_record);
    return c.last;
}

static void record_as_the_store_keeps_it(void **state)
{
    (void)state;
    make_full();
    cpu.utilization_pct = 1.23456; /* not a float */
    proc.cores_used = 0.1;
    rt_record direct, live = piped(&full, NULL);
    rt_record_from_sample(&full, &direct);
    assert_true(direct.cpu_cores != (double)(float)direct.cpu_cores);
    assert_true(live.cpu_cores == (double)(float)direct.cpu_cores); /* a ratio: kept as a float */
    assert_true(live.process_cores == (double)(float)direct.process_cores);
    assert_true(live.process_cores != direct.process_cores);
    assert_true(live.memory_used_mib == direct.memory_used_mib); /* MiB: exact */
    assert_true(live.timestamp_secs == direct.timestamp_secs);
    assert_true(live.disk_read_bytes == direct.disk_read_bytes);
    /* every figure either the sample's or its float */
    const double *dl = (const double *)&live, *dd = (const double *)&direct;
    for (size_t i = 0; i < sizeof live / sizeof(double); i++) {
        size_t off = i * sizeof(double);
        if (off == offsetof(rt_record, job_name) || off == offsetof(rt_record, gpu) || off == offsetof(rt_record, gpu_n))
            continue;
        if (isnan(dl[i]) && isnan(dd[i]))
            continue;
        if (!(dl[i] == dd[i] || dl[i] == (double)(float)dd[i] ||
              off == offsetof(rt_record, process_cpu_secs))) /* a sum of two floats */
            fail_msg("record member at byte %zu: %.17g from %.17g", off, dl[i], dd[i]);
    }
    assert_ptr_equal(live.gpu, full.gpu); /* the GPUs one by one, for the usage's choice */
    assert_ptr_equal(live.energy, full.energy); /* the energy's domains and notes (0.15) */
    assert_non_null(live.energy_method);
    assert_int_equal(live.gpu_n, full.gpu_count);

    /* the embedded tracker: its store's row read back is the very record */
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_new_stopped(0, NULL, &t), RT_OK);
    double row[RT_NCOLS];
    rt_row_from_sample(&full, row);
    assert_int_equal(rt_tracker_add_row(t, row), 0);
    rt_record kept;
    assert_int_equal(rt_tracker_record(t, 0, &kept, sizeof kept), RT_OK);
    same_record(&live, &kept, SIZE_MAX);
    rt_tracker_free(t);

    /* a record read back: the same figures, but the interval's CPU seconds, which a record holds
     * only as a sum (of the two kept figures live; as it came here) */
    rt_record back = piped(NULL, &direct);
    same_record(&live, &back, offsetof(rt_record, process_cpu_secs));
    assert_true(back.process_cpu_secs == direct.process_cpu_secs);
    /* and a record already kept (a snapshot's, read back) is kept as it is, to the last bit */
    rt_record again = piped(NULL, &live);
    same_record(&live, &again, SIZE_MAX);
}

/* The statistics fed live through a pipeline and by the embedded tracker's rows: the same
 * summary to the last digit. */
static void same_statistics_live_and_embedded(void **state)
{
    (void)state;
    make_full();
    rt_stats *st = rt_stats_new();
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    rt_sink *sink = NULL;
    assert_int_equal(rt_stats_sink_new(st, &sink), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, sink), RT_OK);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_new_stopped(0, NULL, &t), RT_OK);
    for (int i = 0; i < 200; i++) {
        full.timestamp_secs = 1.7e9 + i;
        cpu.utilization_pct = 3.3 * (i % 61);
        mem.used_mib = 1000.1 + 7.7 * (i % 13);
        proc.cores_used = 0.01 * (i % 97);
        proc.rss_mib = 10.3 + i;
        assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
        double row[RT_NCOLS];
        rt_row_from_sample(&full, row);
        assert_int_equal(rt_tracker_add_row(t, row), 0);
    }
    const rt_summary *a = rt_stats_summary(st);
    const rt_summary *b = rt_tracker_summary(t);
    assert_non_null(a);
    assert_non_null(b);
    const rt_dist *da[] = {&a->cpu_cores, &a->memory_used_mib, &a->process_cores, &a->process_rss_mib};
    const rt_dist *db[] = {&b->cpu_cores, &b->memory_used_mib, &b->process_cores, &b->process_rss_mib};
    for (size_t i = 0; i < 4; i++)
        assert_memory_equal(da[i], db[i], sizeof(rt_dist));
    assert_true(a->process_cpu_secs == b->process_cpu_secs);
    assert_true(a->duration_secs == b->duration_secs);
    rt_pipeline_free(p);
    rt_stats_free(st);
    rt_tracker_free(t);
}

/* What the store keeps of a row is rt_store_keep's row, whatever the block. */
static void keep_is_what_the_store_keeps(void **state)
{
    (void)state;
    rt_store *s = rt_store_new(10);
    double row[RT_NCOLS], kept[RT_NCOLS], back[RT_NCOLS];
    for (int k = 0; k < 4; k++) {
        for (int c = 0; c < RT_NCOLS; c++)
            row[c] = k == 0 ? 0.1 * c : k == 1 ? NAN : k == 2 ? 1e39 * (c % 2 ? 1 : -1) : 16777217.0 + c / 3.0;
        memcpy(kept, row, sizeof row);
        rt_store_keep(kept);
        assert_int_equal(rt_store_append(s, row), 0);
        assert_int_equal(rt_store_row(s, (uint64_t)k, back), 0);
        for (int c = 0; c < RT_NCOLS; c++)
            if (!(isnan(kept[c]) && isnan(back[c])))
                assert_memory_equal(&kept[c], &back[c], sizeof(double));
    }
    rt_store_free(s);
}

static char warned[512];
static void log_to(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN)
        snprintf(warned + strlen(warned), sizeof warned - strlen(warned), "%s\n", msg);
}

static void textfile_sink(void **state)
{
    (void)state;
    make_full();
    char dir[] = "/tmp/rt-textfile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    rt_job job = RT_JOB_INIT;
    job.job_name = "etl";
    rt_textfile_options to = RT_TEXTFILE_OPTIONS_INIT;
    to.dir = dir;
    to.name = "etl";
    to.job = &job;
    to.every_secs = 3600; /* only the first sample's write, then the end's */
    rt_sink *s = NULL;
    assert_int_equal(rt_textfile_sink_new(&to, &s), RT_OK);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, s), RT_OK);
    proc.cpu_secs_total = 12.5;
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    char path[512], text[8192];
    snprintf(path, sizeof path, "%s/resource_tracker_etl.prom", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "resource_tracker_job_samples{job_name=\"etl\"} 1"));
    assert_non_null(strstr(text, "resource_tracker_job_cpu_seconds{job_name=\"etl\"} 12.5"));
    proc.cpu_secs_total = NAN; /* a null figure does not wipe the last known one */
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    rt_run_end end = RT_RUN_END_INIT;
    end.exit_status = 7;
    rt_pipeline_finish(p, &end);
    rt_pipeline_free(p);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "resource_tracker_job_samples{job_name=\"etl\"} 2"));
    assert_non_null(strstr(text, "resource_tracker_job_cpu_seconds{job_name=\"etl\"} 12.5"));
    assert_non_null(strstr(text, "resource_tracker_job_exit_status{job_name=\"etl\"} 7"));
    unlink(path);

    /* a directory that cannot be written: said once while running, and at the end */
    warned[0] = '\0';
    char gone[600];
    snprintf(gone, sizeof gone, "%s/missing", dir);
    to.dir = gone;
    to.label = "--prometheus-textfile";
    to.every_secs = 1e-9; /* a write at every sample */
    to.log = log_to;
    assert_int_equal(rt_textfile_sink_new(&to, &s), RT_OK);
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, s), RT_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    char want[800];
    snprintf(want, sizeof want, "--prometheus-textfile: cannot write in '%s': No such file or directory\n", gone);
    assert_string_equal(warned, want);
    rt_pipeline_finish(p, &end);
    rt_pipeline_free(p);
    snprintf(want + strlen(want), sizeof want - strlen(want),
             "--prometheus-textfile: cannot write in '%s': No such file or directory\n", gone);
    assert_string_equal(warned, want);
    rmdir(dir);
}

/* The /metrics server and the OTLP exporter keep a reference of their own to the discovery: the
 * caller's handle is freed once discovery ended (nothing else holds it then), and both still look
 * at the result (ASan and valgrind see a use after free otherwise). */
static void cloud_handle_freed_early(void **state)
{
    (void)state;
    make_full();
    rt_cloud_options co = RT_CLOUD_OPTIONS_INIT;
    co.metadata_url = "http://127.0.0.1:1"; /* refused at once: discovery ends with no cloud */
    rt_cloud_discovery *d = NULL;
    assert_int_equal(rt_cloud_start(&co, &d), RT_OK);
    rt_cloud_result(d, 5.0);
    while (rt_cloud_refs(d) > 1) /* each probe drops its reference right after its answer */
        sched_yield();
    rt_prom_options po = RT_PROM_OPTIONS_INIT;
    po.address = "127.0.0.1";
    po.port = 0;
    po.cloud = d;
    rt_prom_server *srv = NULL;
    assert_int_equal(rt_prom_start(&po, &srv), RT_OK);
    rt_otlp_options oo = RT_OTLP_OPTIONS_INIT;
    oo.url = "http://127.0.0.1:1/v1/metrics";
    oo.cloud = d;
    oo.finish_timeout_secs = 0.01;
    oo.timeout_secs = 0.01;
    rt_otlp *ex = NULL;
    rt_error e = rt_otlp_start(&oo, &ex); /* RT_ERR_UNSUPPORTED without libcurl */
    assert_int_equal(rt_cloud_refs(d), e == RT_OK ? 3 : 2); /* the caller's, the server's, the exporter's */
    rt_cloud_free(d);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    rt_sink *s = NULL;
    assert_int_equal(rt_prom_sink_new(srv, &s), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, s), RT_OK);
    if (e == RT_OK) {
        assert_int_equal(rt_otlp_sink_new(ex, &s), RT_OK);
        assert_int_equal(rt_pipeline_attach(p, s), RT_OK);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(rt_pipeline_add(p, &full), RT_OK); /* each publish looks at the cloud */
    rt_run_end end = RT_RUN_END_INIT;
    rt_pipeline_finish(p, &end);
    rt_pipeline_free(p);
}

static void arguments(void **state)
{
    (void)state;
    rt_sink *s = (rt_sink *)&s;
    rt_sink_ops ops = RT_SINK_OPS_INIT; /* no add */
    assert_int_equal(rt_sink_new(&ops, NULL, &s), RT_ERR_INVALID);
    assert_null(s);
    assert_int_equal(rt_sink_new(NULL, NULL, &s), RT_ERR_INVALID);
    assert_int_equal(rt_writer_sink_new(NULL, &s), RT_ERR_INVALID);
    assert_null(s);
    assert_int_equal(rt_stats_sink_new(NULL, &s), RT_ERR_INVALID);
    assert_int_equal(rt_stream_sink_new(NULL, &s), RT_ERR_INVALID);
    assert_int_equal(rt_prom_sink_new(NULL, &s), RT_ERR_INVALID);
    assert_int_equal(rt_otlp_sink_new(NULL, &s), RT_ERR_INVALID);
    rt_textfile_options to = RT_TEXTFILE_OPTIONS_INIT; /* no dir */
    assert_int_equal(rt_textfile_sink_new(&to, &s), RT_ERR_INVALID);
    assert_int_equal(rt_pipeline_new(NULL, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_pipeline_attach(NULL, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_pipeline_add(NULL, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_pipeline_add_record(NULL, NULL, 0), RT_ERR_INVALID);
    rt_pipeline_set_host(NULL, NULL, NULL);
    rt_pipeline_finish(NULL, NULL);
    rt_pipeline_free(NULL);
    rt_sink_free(NULL);
    /* a writer given to a sink is the sink's: freed with it (ASan and valgrind see a leak else) */
    rt_writer *w = NULL;
    assert_int_equal(rt_writer_new(RT_FORMAT_JSON, STDOUT_FILENO, NULL, &w), RT_OK);
    assert_int_equal(rt_writer_sink_new(w, &s), RT_OK);
    rt_sink_free(s);
    /* an ops struct from an older caller (smaller struct_size): reads_record is then 0 */
    rt_sink_ops old = RT_SINK_OPS_INIT;
    old.struct_size = offsetof(rt_sink_ops, reads_record);
    old.add = probe_add;
    old.reads_record = 1;
    assert_int_equal(rt_sink_new(&old, NULL, &s), RT_OK);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, s), RT_OK);
    rt_record rec;
    make_full();
    rt_record_from_sample(&full, &rec);
    assert_int_equal(rt_pipeline_add_record(p, &rec, sizeof rec), RT_OK); /* reads no records: nothing called */
    rt_pipeline_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_records_failure_and_end),
        cmocka_unit_test(record_as_the_store_keeps_it),
        cmocka_unit_test(same_statistics_live_and_embedded),
        cmocka_unit_test(keep_is_what_the_store_keeps),
        cmocka_unit_test(textfile_sink),
        cmocka_unit_test(cloud_handle_freed_early),
        cmocka_unit_test(arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
