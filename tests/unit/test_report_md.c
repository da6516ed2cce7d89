/* test_report_md.c - the run as Markdown (analysis/report_md.c): the heading and answer, a
 * 10-hour run of 1 s samples bounded to chart_points points a chart, max_bytes leaving out the
 * charts then the tables but never the answer, Markdown and Mermaid escaping of user strings,
 * unknown efficiency figures left out and known ones said with what gave them, bad options. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"

/* One second of a job using job_cores and about 100 MiB (PSS), no GPU, no energy. */
static rt_record rec(double t, double job_cores)
{
    return (rt_record){.timestamp_secs = t, .interval_secs = 1, .cpu_cores = 0.6, .process_cores = job_cores,
                       .process_alive = 1, .process_pss_mib = 100 + fmod(t, 7), .process_rss_mib = 120,
                       .memory_used_mib = 1000, .process_gpu_usage = NAN, .process_gpu_vram_mib = NAN,
                       .process_cpu_secs = NAN, .energy_joules = NAN, .process_energy_joules = NAN};
}

/* A run of n one-second records fed to a report and statistics. */
typedef struct run {
    rt_report *r;
    rt_stats *st;
} run;

static run make_run(size_t n)
{
    run x;
    x.r = rt_report_new();
    assert_non_null(x.r);
    assert_int_equal(rt_stats_new_with(NULL, &x.st), RT_OK);
    for (size_t i = 0; i < n; i++) {
        rt_record a = rec(1.7e9 + (double)i, 1.0 + (double)(i % 3));
        rt_report_add(x.r, &a);
        rt_stats_add_sized(x.st, &a, sizeof a);
    }
    return x;
}

static void free_run(run *x)
{
    rt_report_free(x->r);
    rt_stats_free(x->st);
}

typedef struct text {
    char *s;
    size_t len;
} text;

static long collect(void *user, const void *buf, size_t n)
{
    text *t = user;
    t->s = realloc(t->s, t->len + n + 1);
    assert_non_null(t->s);
    memcpy(t->s + t->len, buf, n);
    t->len += n;
    t->s[t->len] = '\0';
    return (long)n;
}

static text md(const run *x, const rt_report_info *info, size_t points, size_t max)
{
    rt_markdown_options mo = RT_MARKDOWN_OPTIONS_INIT;
    mo.chart_points = points;
    mo.max_bytes = max;
    text t = {calloc(1, 1), 0};
    assert_int_equal(rt_report_write_markdown_cb(x->r, info, &mo, collect, &t), RT_OK);
    return t;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The values of the chart's line after "line [" at or after p. */
static size_t line_points(const char *p)
{
    p = strstr(p, "line [");
    assert_non_null(p);
    size_t n = 1;
    for (p += 6; *p && *p != ']'; p++)
        n += *p == ',';
    return n;
}

/* A 10-hour run of 1 s samples: each chart has at most chart_points points (the default 200,
 * and a smaller one), the whole text far under the default bound. */
static void ten_hours_bounded(void **state)
{
    (void)state;
    run x = make_run(36000);
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = rt_stats_summary(x.st);
    text t = md(&x, &info, 0, 0);
    assert_int_equal(count(t.s, "}}}}%%\nxychart-beta\n"), 2);
    const char *c1 = strstr(t.s, "```mermaid");
    const char *c2 = strstr(c1 + 1, "```mermaid");
    assert_true(line_points(c1) <= 200 && line_points(c1) >= 100);
    assert_true(line_points(c2) <= 200 && line_points(c2) >= 100);
    assert_non_null(strstr(t.s, "x-axis \"hours since the start\" 0 --> 10"));
    assert_true(t.len < 20000);
    free(t.s);
    t = md(&x, &info, 37, 0);
    c1 = strstr(t.s, "```mermaid");
    assert_true(line_points(c1) <= 37);
    assert_true(line_points(strstr(c1 + 1, "```mermaid")) <= 37);
    free(t.s);
    free_run(&x);
}

/* Past max_bytes: the charts go first, then the tables; the answer always stays, and a line
 * says what was left out. */
static void max_bytes_leaves_out(void **state)
{
    (void)state;
    run x = make_run(600);
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = rt_stats_summary(x.st);
    info.exit_status = 0;
    text all = md(&x, &info, 0, 0);
    const char *charts = strstr(all.s, "<details open>");
    const char *table = strstr(all.s, "| figure | value |");
    assert_non_null(charts);
    assert_non_null(table);
    assert_non_null(strstr(all.s, "**Used:**"));
    assert_null(strstr(all.s, "Left out"));

    text no_charts = md(&x, &info, 0, all.len - 1);
    assert_true(no_charts.len <= all.len - 1);
    assert_null(strstr(no_charts.s, "```mermaid"));
    assert_non_null(strstr(no_charts.s, "| figure | value |"));
    assert_non_null(strstr(no_charts.s, "Left out to keep this summary under"));
    assert_non_null(strstr(no_charts.s, "the charts"));

    text answer = md(&x, &info, 0, 300);
    assert_null(strstr(answer.s, "```mermaid"));
    assert_null(strstr(answer.s, "| figure | value |"));
    assert_non_null(strstr(answer.s, "### resource-tracker:"));
    assert_non_null(strstr(answer.s, "**Used:**"));
    assert_non_null(strstr(answer.s, "**Ask for:**"));
    assert_non_null(strstr(answer.s, "**Notes:**"));
    assert_non_null(strstr(answer.s, "the tables and the charts"));
    free(all.s);
    free(no_charts.s);
    free(answer.s);
    free_run(&x);
}

/* A job name and command with Markdown, HTML and Mermaid's syntax in them render as themselves:
 * pipes and backticks escaped, HTML as entities, the chart's title without a quote. */
static void escaping(void **state)
{
    (void)state;
    run x = make_run(30);
    rt_job job = RT_JOB_INIT;
    job.job_name = "a|b `c` <script>x</script> *d* \"q\"\n# h";
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = rt_stats_summary(x.st);
    info.job = &job;
    info.command = "grep -E 'a|b' file`whoami` & <x>";
    text t = md(&x, &info, 0, 0);
    assert_non_null(strstr(t.s, "### resource-tracker: a\\|b \\`c\\` &lt;script&gt;x&lt;/script&gt; \\*d\\* \"q\" \\# h\n"));
    assert_null(strstr(t.s, "<script>"));
    assert_non_null(strstr(t.s, "| command | grep -E 'a\\|b' file\\`whoami\\` &amp; &lt;x&gt; |"));
    /* every table row has exactly its three unescaped pipes */
    for (const char *p = strstr(t.s, "| figure"); p && *p == '|'; p = strchr(p, '\n') + 1) {
        size_t pipes = 0;
        for (const char *q = p; *q != '\n'; q++)
            pipes += *q == '|' && q[-1] != '\\';
        assert_int_equal(pipes, 3);
    }
    const char *title = strstr(t.s, "    title \"");
    assert_non_null(title);
    title += strlen("    title \"");
    const char *end = strchr(title, '\n');
    assert_true(end[-1] == '"');
    for (const char *q = title; q < end - 1; q++) /* no quote, #, <, >, ` inside the label */
        assert_null(strchr("\"#<>`", *q));
    free(t.s);
    free_run(&x);
}

/* The efficiency line: left out when nothing is known (NaN figures); with a request, each
 * figure with what gave it, an unknown one left out. */
static void efficiency(void **state)
{
    (void)state;
    run x = make_run(60);
    rt_report_info info = RT_REPORT_INFO_INIT;
    rt_summary s = *rt_stats_summary(x.st);
    s.cpu_efficiency_pct = s.memory_efficiency_pct = s.gpu_efficiency_pct = s.time_limit_used_pct = NAN;
    s.requested_cpu_cores = s.requested_memory_mib = s.requested_gpus = s.time_limit_secs = NAN;
    s.requested_cpu_from = s.requested_memory_from = s.requested_gpus_from = s.time_limit_from = NULL;
    info.summary = &s;
    text t = md(&x, &info, 0, 0);
    assert_null(strstr(t.s, "Efficiency"));
    assert_null(strstr(t.s, "nan"));
    assert_null(strstr(t.s, "given"));
    free(t.s);

    s.requested_cpu_cores = 4;
    s.requested_cpu_from = "SLURM_CPUS_PER_TASK";
    s.cpu_efficiency_pct = 45.2;
    s.requested_memory_mib = 8192;
    s.requested_memory_from = "SLURM_MEM_PER_NODE";
    s.memory_efficiency_pct = 6.04;
    s.time_limit_secs = 3600;
    s.time_limit_from = "scontrol";
    s.time_limit_used_pct = 95;
    t = md(&x, &info, 0, 0);
    assert_non_null(strstr(t.s, "**Efficiency:** CPU 45% of 4 cores (SLURM\\_CPUS\\_PER\\_TASK), memory 6% of 8 GiB "
                                "(SLURM\\_MEM\\_PER\\_NODE), time limit 95% of 60 min (scontrol)  \n"));
    assert_null(strstr(t.s, "GPU"));
    assert_non_null(strstr(t.s, "| cores given | 4 cores (SLURM\\_CPUS\\_PER\\_TASK) |"));
    assert_null(strstr(t.s, "nan"));
    free(t.s);
    free_run(&x);
}

/* Bad arguments: no callback, an unknown scheduler, a too small struct_size; no samples and no
 * report: a heading and "No samples." only. */
static void bad_options(void **state)
{
    (void)state;
    run x = make_run(0);
    rt_markdown_options mo = RT_MARKDOWN_OPTIONS_INIT;
    text t = {calloc(1, 1), 0};
    assert_int_equal(rt_report_write_markdown_cb(x.r, NULL, &mo, NULL, &t), RT_ERR_INVALID);
    mo.scheduler = 7;
    assert_int_equal(rt_report_write_markdown_cb(x.r, NULL, &mo, collect, &t), RT_ERR_INVALID);
    mo.scheduler = RT_SCHED_K8S;
    mo.struct_size = 2;
    assert_int_equal(rt_report_write_markdown_cb(x.r, NULL, &mo, collect, &t), RT_ERR_INVALID);
    assert_int_equal(t.len, 0);
    assert_int_equal(rt_report_write_markdown_cb(NULL, NULL, NULL, collect, &t), RT_OK);
    assert_string_equal(t.s, "### resource-tracker: a run\n\nNo samples.\n\n");
    free(t.s);
    free_run(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ten_hours_bounded), cmocka_unit_test(max_bytes_leaves_out), cmocka_unit_test(escaping),
        cmocka_unit_test(efficiency),        cmocka_unit_test(bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
