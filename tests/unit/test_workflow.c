/* test_workflow.c - rt_summary_write_workflow (analysis/summary_workflow.c): Snakemake's benchmark
 * TSV byte for byte (the rows below are what snakemake 7.21's BenchmarkRecord.to_tsv writes for
 * the same figures: two decimals, MiB, "-" for a missing figure, "NA" when nothing was measured,
 * the days of a long run, seconds rounded as timedelta keeps them), a Nextflow trace header and
 * row (MemoryUnit's "107.4 MB", Duration's "1.2s" and "1h 2m 5s", "99.8%", "-"), the arguments
 * refused and a failing write. */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "resource_tracker.h"

typedef struct sink {
    char text[8192];
    size_t len;
    int one_byte; /* takes one byte a call */
    int fail;     /* every call fails */
} sink;

static long to_sink(void *user, const void *buf, size_t len)
{
    sink *k = user;
    if (k->fail)
        return -1;
    size_t n = k->one_byte ? 1 : len;
    assert_true(k->len + n < sizeof k->text);
    memcpy(k->text + k->len, buf, n);
    k->len += n;
    k->text[k->len] = '\0';
    return (long)n;
}

static rt_usage usage;

static rt_dist peak(double p)
{
    return (rt_dist){p / 2, p, p / 2, p};
}

/* A run of 1 h 2 min 5.5 s with every figure of the Snakemake row known. */
static rt_summary known(void)
{
    rt_summary s;
    memset(&s, 0, sizeof s);
    memset(&usage, 0, sizeof usage);
    s.samples = 100;
    s.start_secs = 1700000000.25;
    s.end_secs = 1700003725.75;
    s.duration_secs = 3725.5;
    s.has_process = 1;
    s.process_rss_mib = peak(1024.125); /* exactly between: rounded to even, as Python does */
    s.process_vms_peak_mib = 2048.5;
    usage.ram_peak[2].private_mib = 900.004;
    s.usage = &usage;
    s.process_pss_mib = peak(950.25);
    s.process_read_bytes = 10.5 * 1048576;
    s.process_write_bytes = 0;
    s.process_cpu_secs = 7200;
    return s;
}

static const char sm_header[] = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n";

static void write_to(const rt_summary *s, const rt_run_facts *run, int format, sink *k)
{
    memset(k->text, 0, sizeof k->text);
    k->len = 0;
    assert_int_equal(rt_summary_write_workflow(s, run, format, to_sink, k), RT_OK);
}

static void snakemake_row(void **state)
{
    (void)state;
    rt_summary s = known();
    sink k = {.one_byte = 1}; /* short writes are taken up again */
    write_to(&s, NULL, RT_WORKFLOW_SNAKEMAKE, &k);
    char want[512];
    snprintf(want, sizeof want, "%s%s", sm_header,
             "3725.5000\t1:02:05\t1024.12\t2048.50\t900.00\t950.25\t10.50\t0.00\t193.26\t7200.00\n");
    assert_string_equal(k.text, want);

    /* the caller's start and end make the duration (a tracking run: the tool's own times) */
    rt_run_facts run = RT_RUN_FACTS_INIT;
    run.start_secs = 1700000000;
    run.end_secs = 1700000001.5;
    k.one_byte = 0;
    write_to(&s, &run, RT_WORKFLOW_SNAKEMAKE, &k);
    assert_non_null(strstr(k.text, "\n1.5000\t0:00:01\t1024.12\t"));
    assert_non_null(strstr(k.text, "\t480000.00\t7200.00\n")); /* 7200 s of CPU in 1.5 s */
}

static void snakemake_missing(void **state)
{
    (void)state;
    rt_summary s = known();
    s.duration_secs = 90061.25; /* a day and more: Python's timedelta words */
    s.process_vms_peak_mib = NAN;
    usage.ram_peak[2].private_mib = NAN;
    s.process_pss_mib = peak(NAN);
    s.process_read_bytes = s.process_write_bytes = NAN;
    s.process_rss_mib = peak(1.0);
    s.process_cpu_secs = 0.5;
    sink k = {0};
    write_to(&s, NULL, RT_WORKFLOW_SNAKEMAKE, &k);
    assert_string_equal(k.text + strlen(sm_header), "90061.2500\t1 day, 1:01:01\t1.00\t-\t-\t-\t-\t-\t0.00\t0.50\n");
    s.usage = NULL; /* no usage view: no USS */
    write_to(&s, NULL, RT_WORKFLOW_SNAKEMAKE, &k);
    assert_non_null(strstr(k.text, "\t1.00\t-\t-\t-\t"));

    /* no tracked tree: what Snakemake writes when it collected nothing; the seconds rounded to
     * microseconds first, as timedelta keeps them */
    s.has_process = 0;
    s.duration_secs = 2 * 86400 + 0.9999996;
    write_to(&s, NULL, RT_WORKFLOW_SNAKEMAKE, &k);
    assert_string_equal(k.text + strlen(sm_header), "172801.0000\t2 days, 0:00:01\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n");
    s.duration_secs = NAN;
    write_to(&s, NULL, RT_WORKFLOW_SNAKEMAKE, &k);
    assert_string_equal(k.text + strlen(sm_header), "-\t-\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n");
}

static const char nf_header[] = "name\tstatus\texit\tstart\tcomplete\tduration\trealtime\t%cpu\tpeak_rss\tpeak_vmem\t"
                                "rchar\twchar\tread_bytes\twrite_bytes\n";

static void nextflow_row(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    rt_summary s = known();
    s.process_rss_mib = peak(107.4);
    s.process_vms_peak_mib = 2048;
    s.process_read_bytes = 1536;
    s.process_write_bytes = 512;
    sink k = {0};
    write_to(&s, NULL, RT_WORKFLOW_NEXTFLOW, &k);
    char want[1024];
    snprintf(want, sizeof want, "%s%s", nf_header,
             "-\t-\t-\t2023-11-14 22:13:20.250\t2023-11-14 23:15:25.750\t1h 2m 6s\t1h 2m 6s\t193.3%\t107.4 MB\t2 GB\t-\t-\t"
             "1.5 KB\t512 B\n");
    assert_string_equal(k.text, want);

    /* a tracking run's facts: the command (a tab in it becomes a space), its status */
    const char *const argv[] = {"python3", "-c", "a\tb", NULL};
    rt_run_facts run = RT_RUN_FACTS_INIT;
    run.command = argv;
    run.exit_status = 0;
    run.start_secs = 1700000000;
    run.end_secs = 1700000001.25;
    s.process_cpu_secs = 1.2475; /* 99.8% */
    s.process_write_bytes = 0;
    write_to(&s, &run, RT_WORKFLOW_NEXTFLOW, &k);
    assert_string_equal(k.text + strlen(nf_header), "python3 -c a b\tCOMPLETED\t0\t2023-11-14 22:13:20.000\t"
                                                    "2023-11-14 22:13:21.250\t1.3s\t1.3s\t99.8%\t107.4 MB\t2 GB\t-\t-\t"
                                                    "1.5 KB\t0\n");
    /* the job's name before the command; killed by SIGKILL: 137, failed; under a second */
    rt_job job = {.struct_size = sizeof job, .job_name = "align"};
    run.job = &job;
    run.exit_status = 137;
    run.end_secs = 1700000000.85;
    write_to(&s, &run, RT_WORKFLOW_NEXTFLOW, &k);
    assert_non_null(strstr(k.text, "\nalign\tFAILED\t137\t"));
    assert_non_null(strstr(k.text, "\t850ms\t850ms\t"));
    /* 59.99 s is "60s" (tenths rounded half up), a minute and a half "1m 30s" */
    run.end_secs = 1700000059.99;
    write_to(&s, &run, RT_WORKFLOW_NEXTFLOW, &k);
    assert_non_null(strstr(k.text, "\t60s\t60s\t"));
    run.end_secs = 1700000090;
    write_to(&s, &run, RT_WORKFLOW_NEXTFLOW, &k);
    assert_non_null(strstr(k.text, "\t1m 30s\t1m 30s\t"));
    run.end_secs = 1700000000 + 2 * 86400 + 7;
    write_to(&s, &run, RT_WORKFLOW_NEXTFLOW, &k);
    assert_non_null(strstr(k.text, "\t2d 7s\t2d 7s\t"));

    /* no tree: its figures are "-" */
    s.has_process = 0;
    write_to(&s, NULL, RT_WORKFLOW_NEXTFLOW, &k);
    assert_non_null(strstr(k.text, "\t1h 2m 6s\t1h 2m 6s\t-\t-\t-\t-\t-\t-\t-\n"));
}

static void refused(void **state)
{
    (void)state;
    rt_summary s = known();
    sink k = {0};
    assert_int_equal(rt_summary_write_workflow(NULL, NULL, RT_WORKFLOW_SNAKEMAKE, to_sink, &k), RT_ERR_INVALID);
    assert_int_equal(rt_summary_write_workflow(&s, NULL, RT_WORKFLOW_SNAKEMAKE, NULL, &k), RT_ERR_INVALID);
    assert_int_equal(rt_summary_write_workflow(&s, NULL, 7, to_sink, &k), RT_ERR_INVALID);
    assert_int_equal(k.len, 0);
    assert_true(strlen(rt_last_error_message()) > 0);
    k.fail = 1;
    assert_int_equal(rt_summary_write_workflow(&s, NULL, RT_WORKFLOW_NEXTFLOW, to_sink, &k), RT_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snakemake_row),
        cmocka_unit_test(snakemake_missing),
        cmocka_unit_test(nextflow_row),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
