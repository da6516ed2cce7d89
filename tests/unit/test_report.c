/* test_report.c - the report (analysis/report.c, report_html.c): bounded buckets that keep a
 * one-record spike in a day, gaps, the job's last reading, the page's size and chart count,
 * charts shown as text, the exit status in words, HTML escaping of every string, invalid
 * UTF-8, an older caller's shorter info struct, write errors, and the page's wording and the
 * run's status (0.18). */
#include "unit.h"

#include <errno.h>
#include <math.h>

#include "analysis/report_int.h"
#include "resource_tracker.h"

static rt_record rec(double t, double job_cores)
{
    rt_record r;
    memset(&r, 0, sizeof r);
    r.timestamp_secs = t;
    r.interval_secs = 1;
    r.cpu_cores = 0.6;
    r.process_cores = job_cores;
    r.process_pss_mib = 100;
    r.process_rss_mib = 120;
    r.memory_used_mib = 1000;
    r.disk_space_used_bytes = 1e9;
    r.gpu_usage = r.gpu_vram_mib = 0;
    r.process_gpu_usage = r.process_gpu_vram_mib = NAN;
    return r;
}

/* Writes the report into a temp file and returns its text (caller frees). */
static char *write_text(const rt_report *r, const rt_report_info *info, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(rt_report_write(r, info, fileno(f)), RT_OK);
    long n = ftell(f);
    assert_true(n > 0);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

/* the number of values in "var NAME=[...]" */
static size_t array_len(const char *html, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "var %s=[", name);
    const char *p = strstr(html, key);
    assert_non_null(p);
    p += strlen(key);
    size_t n = *p == ']' ? 0 : 1;
    for (; *p && *p != ']'; p++)
        n += *p == ',';
    return n;
}

/* The cgroup's marks in the page's data: OOM kills where the count rose, throttled stretches
 * (adjacent records joined), the lowest memory limit and quota; none without a cgroup. */
static void cgroup_marks(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    static const double oom[] = {0, 0, 0, 0, 0, 1, 1, 1, 2, 2};
    static const double thr[] = {0, 0, 1, 2, 2, 2, 2, 5, 5, 5};
    for (int i = 0; i < 10; i++) {
        rt_record x = rec(1000 + i, 1);
        x.cgroup_oom_kills = oom[i];
        x.cgroup_cpu_throttled_periods = thr[i];
        x.cgroup_memory_limit_mib = i < 5 ? 8192 : 4096;
        x.cgroup_cpu_quota_cores = 1.5;
        rt_report_add(r, &x);
    }
    rt_recommendation rc = RT_RECOMMENDATION_INIT;
    rc.cpu = 3;
    rc.memory_mib = 10240;
    rc.runs = 1;
    rc.oom_killed = 1;
    rc.cpu_quota_cores = 1.5;
    rc.cpu_throttled_pct = 40;
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.recommendation = &rc;
    char *html = write_text(r, &info, NULL);
    assert_non_null(strstr(html, "<th>memory above</th><td>the peak of a run the OOM killer ended</td>"));
    assert_null(strstr(html, "<th>memory floor</th>")); /* 0.20: no floor to learn in rc */
    assert_null(strstr(html, "<th>time floor</th>"));
    assert_non_null(strstr(html, "<th>cores above</th><td>the quota of 1.50 cores (throttled in 40% of its periods)"));
    const char *want = "var MK={oom:[[6.000,1],[9.000,1]],thr:[[2.000,4.000],[7.000,8.000]],limit:4096,quota:1.5};";
    if (!strstr(html, want))
        fail_msg("no %s in the page", want);
    assert_non_null(strstr(html, "underlayCallback:marks(c,div)"));
    free(html);
    rt_report_free(r);

    /* no cgroup (zero or NaN figures): nothing to mark */
    r = rt_report_new();
    for (int i = 0; i < 3; i++) {
        rt_record x = rec(1000 + i, 1);
        x.cgroup_oom_kills = x.cgroup_cpu_throttled_periods = NAN;
        x.cgroup_memory_limit_mib = i ? NAN : 0;
        rt_report_add(r, &x);
    }
    html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "var MK={oom:[],thr:[],limit:null,quota:null};"));
    free(html);
    rt_report_free(r);
}

/* Throttled every other record for a day: the stretches stay bounded, in order and apart,
 * from the first throttled record to the last; OOM marks stop at their cap. */
static void cgroup_marks_bounded(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    for (int i = 0; i < 86400; i++) {
        rt_record x = rec(1000 + i, 1);
        x.cgroup_cpu_throttled_periods = (i + 1) / 2; /* rises at odd i */
        x.cgroup_oom_kills = i;
        rt_report_add(r, &x);
    }
    assert_true(r->n_thr <= RPT_STRETCHES && r->n_thr > RPT_STRETCHES / 2);
    assert_int_equal(r->n_oom, RPT_MARKS);
    assert_true(r->thr[0].t0 == 1000 && r->thr[r->n_thr - 1].t1 == 1000 + 86399);
    for (size_t i = 1; i < r->n_thr; i++)
        assert_true(r->thr[i].t0 > r->thr[i - 1].t1);
    rt_report_free(r);
}

static void day_with_spike(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    assert_non_null(r);
    for (int i = 0; i < 86400; i++) {
        rt_record x = rec(1e9 + i + 1, i == 50000 ? 2.0 : 0.2);
        rt_report_add(r, &x);
        assert_true(r->n <= RPT_CAP);
    }
    assert_int_equal(r->records, 86400);
    assert_true(r->n >= RPT_CAP / 4 && r->n <= RPT_CAP);
    float top = 0;
    double weight = 0;
    for (size_t i = 0; i < r->n; i++) {
        top = fmaxf(top, r->b[i].c[RPT_JOB_CORES].max);
        weight += r->b[i].c[RPT_JOB_CORES].weight;
        assert_false(r->b[i].gap);
    }
    assert_true(top == 2.0f);                /* the spike survives as a max */
    assert_true(fabs(weight - 86400) < 1e-6); /* and every second is counted once */
    size_t len;
    char *html = write_text(r, NULL, &len);
    assert_true(len < 3u * 1024 * 1024);
    size_t points = array_len(html, "T");
    assert_true(points >= 500 && points <= RPT_POINTS);
    assert_int_equal(array_len(html, "G"), points);
    assert_non_null(strstr(html, "data-charts-expected=\"2\"")); /* CPU, memory; the rest is text: */
    assert_non_null(strstr(html, "<p class=\"chart-text\" id=\"t-disk\">Disk I/O: nothing read or written</p>"));
    assert_non_null(strstr(html, "<p class=\"chart-text\" id=\"t-network\">Network: nothing sent or received</p>"));
    assert_non_null(strstr(html, "<p class=\"chart-text\" id=\"t-space\">Disk space used: 953.7 MiB throughout</p>"));
    assert_non_null(strstr(html, "data-time-axis=\"clock\"")); /* a day: clock time */
    assert_non_null(strstr(html, ",EL=0;"));
    assert_null(strstr(html, "GPU utilization"));
    assert_non_null(strstr(html, "@media print"));
    assert_non_null(strstr(html, "@license")); /* dygraphs' licence header kept */
    assert_null(strstr(html, "sourceMappingURL"));
    assert_non_null(strstr(html, "<title>resource-tracker run"));
    free(html);
    rt_report_free(r);
}

static void short_run_and_gap(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    for (int i = 0; i < 10; i++) {
        rt_record x = rec(1e9 + i, 0.5);
        rt_report_add(r, &x);
    }
    rt_record later = rec(1e9 + 3600, 0.5); /* an hour later: the lines break */
    rt_report_add(r, &later);
    rt_record back = rec(1e9 + 5, 0.5); /* another file, earlier */
    rt_report_add(r, &back);
    rt_record bad = rec(NAN, 0.5); /* no time: ignored */
    rt_report_add(r, &bad);
    assert_int_equal(r->n, 12);
    assert_false(r->b[9].gap);
    assert_true(r->b[10].gap);
    assert_true(r->b[11].gap);
    char *html = write_text(r, NULL, NULL);
    assert_int_equal(array_len(html, "T"), 12);
    assert_non_null(strstr(html, "var G=[0,0,0,0,0,0,0,0,0,0,1,1]"));
    free(html);
    rt_report_free(r);
}

static void gpu_charts(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    for (int i = 0; i < 5; i++) {
        rt_record x = rec(1e9 + i, 0.5);
        x.gpu_count = 1;
        x.gpu_usage = 0.5;
        x.gpu_vram_mib = 1000;
        x.process_gpu_usage = 0.4;
        rt_report_add(r, &x);
    }
    char *html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "data-charts-expected=\"4\"")); /* CPU, memory, GPU, VRAM */
    assert_non_null(strstr(html, "GPU utilization"));
    assert_non_null(strstr(html, "data-time-axis=\"elapsed\"")); /* 5 s: time since the start */
    assert_non_null(strstr(html, ",EL=1;"));
    free(html);
    rt_report_free(r);
}

/* Series k's data in the page: the text between its brackets in "var S=[...]" (into buf). */
static const char *series_text(const char *html, int k, char *buf, size_t cap)
{
    const char *p = strstr(html, "var S=[");
    assert_non_null(p);
    p += strlen("var S=[");
    for (int i = 0; i <= k; i++) {
        p = strchr(p, '[');
        assert_non_null(p);
        p++;
        if (i < k)
            p = strchr(p, ']');
    }
    const char *e = strchr(p, ']');
    snprintf(buf, cap, "%.*s", (int)(e - p), p);
    return buf;
}

/* Five records of a job on one GPU (tree 0: the machine alone) whose GPM figures rise from a
 * small-matmul loop's to a bf16 matmul's at the third; shared: the devices' (1) or the job's (0);
 * gpm 0: the GPU gives no work figure. */
static rt_report *work_report(int tree, double shared, int gpm)
{
    rt_report *r = rt_report_new();
    for (int i = 0; i < 5; i++) {
        rt_record x = rec(1e9 + i, 0.5);
        x.gpu_count = 1;
        x.gpu_usage = i < 2 ? 0.4 : 0.99;
        x.process_pid = tree ? 42 : NAN;
        x.process_gpu_usage = tree ? x.gpu_usage : NAN;
        x.process_gpu_utilized = tree ? 1 : NAN;
        double hi = i >= 2;
        x.gpu_sm_active_pct = gpm ? (hi ? 98 : 15.9) : NAN;
        x.gpu_tensor_active_pct = gpm ? (hi ? 92 : 0) : NAN;
        x.gpu_dram_active_pct = gpm ? 0.5 : NAN;
        x.gpu_fp32_active_pct = gpm ? 2.3 : NAN;
        x.gpu_fp16_active_pct = gpm ? 0 : NAN;
        x.gpu_fp64_active_pct = NAN; /* not offered */
        x.gpu_work_shared = gpm && tree ? shared : NAN;
        rt_report_add(r, &x);
    }
    return r;
}

/* Issue 65: the GPU work chart beside the utilization chart: SM, tensor cores, DRAM and the FP
 * units that worked (an FP line of zeros, or of no figure, left out: its data too), NVML's
 * utilization of the same GPUs as a percent beside them; its caption says whose the figures are;
 * no chart and no data without a GPM figure. */
static void gpu_work_chart(void **state)
{
    (void)state;
    char buf[4096];
    rt_report *r = work_report(1, 0, 1);
    char *html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "data-charts-expected=\"4\"")); /* CPU, memory, GPU, GPU work (VRAM: none used) */
    const char *gpu = strstr(html, "<div class=\"chart-block\" id=\"b-gpu\">");
    const char *work = strstr(html, "<div class=\"chart-block\" id=\"b-gpuwork\"><h3>GPU work</h3>"
                                    "<p class=\"note\" id=\"cap-gpuwork\">The job&#39;s GPUs, the job&#39;s alone: its "
                                    "processes were the only ones on them.");
    assert_true(gpu && work && gpu < work && work < strstr(html, "id=\"t-vram\"")); /* beside the utilization */
    assert_non_null(strstr(html, "{id:3,title:\"GPU work\",unit:\"pct\",m:0,s:[[23,\"SM active\",\"#d62728\"],"
                                 "[24,\"tensor cores\",\"#9467bd\"],[25,\"DRAM bandwidth\",\"#2ca02c\"],"
                                 "[26,\"FP32\",\"#ff7f0e\"],[29,\"utilization (NVML)\",\"#7f7f7f\"]]}"));
    assert_int_equal(RPT_GPU_SM, 23); /* after the power parts */
    assert_string_equal(series_text(html, RPT_GPU_SM, buf, sizeof buf),
                        "15.9,15.9,15.9,15.9,15.9,15.9,98,98,98,98,98,98,98,98,98");
    assert_string_equal(series_text(html, RPT_GPU_UTIL, buf, sizeof buf), "40,40,40,40,40,40,99,99,99,99,99,99,99,99,99");
    assert_string_equal(series_text(html, RPT_GPU_FP16, buf, sizeof buf), ""); /* zeros: not drawn, not written */
    assert_string_equal(series_text(html, RPT_GPU_FP64, buf, sizeof buf), "");
    free(html);
    rt_report_free(r);

    r = work_report(1, 1, 1);
    html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "id=\"cap-gpuwork\">The job&#39;s GPUs, shared with other processes: the figures "
                                 "are the devices&#39;, not the job&#39;s alone."));
    free(html);
    rt_report_free(r);

    r = work_report(0, NAN, 1);
    html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "id=\"cap-gpuwork\">The machine&#39;s GPUs (no job tracked)"));
    free(html);
    rt_report_free(r);

    r = work_report(1, NAN, 0); /* no GPM: no chart, no data, and the utilization chart as before */
    html = write_text(r, NULL, NULL);
    assert_null(strstr(html, "gpuwork"));
    assert_non_null(strstr(html, "data-charts-expected=\"3\""));
    for (int k = RPT_GPU_SM; k < RPT_SERIES; k++)
        assert_string_equal(series_text(html, k, buf, sizeof buf), "");
    free(html);
    rt_report_free(r);
}

/* The power chart (0.15): each record's energy over its interval, the machine's and the job's, its
 * title naming the least exact method; a figure without its method is no point; a level as text. */
static void power_chart(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    for (int i = 0; i < 4; i++) {
        rt_record x = rec(1e9 + 0.5 * i, 0.5);
        x.interval_secs = 0.5;
        x.energy_joules = i == 2 ? 20 : 10; /* 20 W, one 40 W interval */
        x.process_energy_joules = 5;       /* 10 W */
        x.energy_method = x.process_energy_method = "measured";
        rt_report_add(r, &x);
    }
    rt_record odd = rec(1e9 + 2, 0.5); /* a figure without its method: absent */
    odd.interval_secs = 0.5;
    odd.energy_joules = 1e6;
    rt_report_add(r, &odd);
    char *html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "title:\"Power (measured)\",unit:\"watts\""));
    assert_non_null(strstr(html, "<h3>Power (measured)</h3>"));
    /* per point low, mean, high: the machine's 20, 20, 40, 20 W; the job's 10 W; the odd one null */
    char want[128];
    snprintf(want, sizeof want, "\n[20,20,20,20,20,20,40,40,40,20,20,20,null,null,null],\n[10,10,10,10,10,10,10,10,10,"
                                "10,10,10,null,null,null],\n[]"); /* 0.19: no part */
    assert_non_null(strstr(html, want));
    free(html);
    rt_report_free(r);

    /* one estimated record makes the chart estimated; a flat level is one line of text */
    r = rt_report_new();
    for (int i = 0; i < 3; i++) {
        rt_record x = rec(1e9 + i, 0.5);
        x.energy_joules = 7;
        x.energy_method = i == 1 ? "estimated" : "sampled";
        rt_report_add(r, &x);
    }
    html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "id=\"t-power\">Power (estimated): 7 W throughout</p>"));
    free(html);
    rt_report_free(r);
}

/* A record at t of 1 s whose energy is made of the domains d (n of them): the machine's and, with
 * job, the tree's figures summed. */
static rt_record part_rec(double t, const rt_energy *e, bool job)
{
    rt_record x = rec(t, 1);
    x.interval_secs = 1;
    x.energy = e;
    x.energy_joules = x.process_energy_joules = 0;
    for (size_t i = 0; i < e->domain_count; i++) {
        x.energy_joules += e->domain[i]->energy_joules;
        x.process_energy_joules += e->domain[i]->process_energy_joules;
    }
    x.energy_method = "estimated";
    x.process_energy_method = job ? "estimated" : NULL;
    if (!job)
        x.process_energy_joules = NAN;
    return x;
}

/* The power chart by source (0.19): a line per part of the energy (the job's share with a tree),
 * named by its method and source, the largest first, then the job's and the machine's; one part
 * without a tree: its line alone; at most RPT_POWER_PARTS parts; a file's source escaped. */
static void power_chart_by_part(void **state)
{
    (void)state;
    rt_energy_domain d[] = {
        {.name = "cpu", .kind = "cpu", .source = "model", .method = "estimated", .in_total = 1},
        {.name = "gpu-0", .kind = "gpu", .source = "nvml", .method = "measured", .in_total = 1},
        {.name = "gpu-1", .kind = "gpu", .source = "nvml", .method = "measured", .in_total = 1},
    };
    const rt_energy_domain *ptr[] = {&d[0], &d[1], &d[2]};
    rt_energy e = {.domain = ptr, .domain_count = 3};
    rt_report *r = rt_report_new();
    for (int i = 0; i < 4; i++) {
        d[0].energy_joules = 20, d[0].process_energy_joules = 10;
        d[1].energy_joules = d[1].process_energy_joules = 100 + 50 * (i % 2); /* not flat: drawn */
        d[2].energy_joules = 80, d[2].process_energy_joules = 0;
        rt_record x = part_rec(1e9 + i, &e, true);
        rt_report_add(r, &x);
    }
    char *html = write_text(r, NULL, NULL);
    char *power = strstr(html, "title:\"Power (by source)\",unit:\"watts\",m:0,s:[[");
    assert_non_null(power);
    assert_non_null(strstr(html, "<h3>Power (by source)</h3>"));
    char *gpu = strstr(power, ",\"job GPU (measured by NVML)\",\"#2ca02c\"]"); /* each kind its colour */
    char *cpu = strstr(power, ",\"job CPU (estimated)\",\"#ff7f0e\"]");
    char *job = strstr(power, ",\"job\",\"#d62728\"]");
    char *machine = strstr(power, ",\"machine\",\"#1f77b4\"]]}");
    assert_true(gpu && cpu && job && machine);
    assert_true(gpu < cpu && cpu < job && job < machine); /* the largest first */
    free(html);
    rt_report_free(r);

    /* one part, no tree: the part's line alone (the machine's is the same) */
    r = rt_report_new();
    e.domain_count = 1;
    for (int i = 0; i < 4; i++) {
        d[0].energy_joules = 10 + i;
        d[0].process_energy_joules = NAN;
        rt_record x = part_rec(1e9 + i, &e, false);
        rt_report_add(r, &x);
    }
    html = write_text(r, NULL, NULL);
    power = strstr(html, "title:\"Power (by source)\"");
    assert_non_null(power);
    assert_non_null(strstr(power, ",\"CPU (estimated)\",\"#ff7f0e\"]]}"));
    assert_null(strstr(power, ",\"machine\",\"#1f77b4\"]"));
    free(html);
    rt_report_free(r);

    /* seven sources: five lines of parts, the machine's; a source as a file spelled it, escaped */
    static const char *const sources[] = {"a", "b", "c", "d", "e", "f", "</script>\""};
    rt_energy_domain m[7];
    const rt_energy_domain *mp[7];
    for (size_t i = 0; i < 7; i++) {
        m[i] = (rt_energy_domain){.name = "x", .kind = "platform2", .source = sources[6 - i], .method = "sampled",
                                  .in_total = 1, .process_energy_joules = NAN};
        mp[i] = &m[i];
    }
    rt_energy many = {.domain = mp, .domain_count = 7};
    r = rt_report_new();
    for (int i = 0; i < 4; i++) {
        for (size_t k = 0; k < 7; k++)
            m[k].energy_joules = (double)(k + 1) * (1 + i % 2);
        rt_record x = part_rec(1e9 + i, &many, false);
        rt_report_add(r, &x);
    }
    html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, ",\"platform2 (sampled by \\u003c/script\\u003e\\\")\",\"#"));
    assert_null(strstr(html, "sampled by </script>"));
    assert_non_null(strstr(html, ",\"platform2 (sampled by c)\""));
    assert_null(strstr(html, "(sampled by b)\"")); /* the sixth and seventh seen: not kept */
    assert_null(strstr(html, "(sampled by a)\""));
    assert_non_null(strstr(html, ",\"machine\",\"#1f77b4\"]]}"));
    free(html);
    rt_report_free(r);
}

static void empty_report(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    char *html = write_text(r, NULL, NULL);
    assert_non_null(strstr(html, "data-charts-expected=\"0\""));
    assert_non_null(strstr(html, "No samples."));
    assert_null(strstr(html, "id=\"run\"")); /* nothing known of the run: no section */
    assert_non_null(strstr(html, "</html>"));
    free(html);
    rt_report_free(r);
    rt_report_free(NULL);
    rt_report_add(NULL, NULL);
}

static void strings_escaped(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    rt_record x = rec(1e9, 0.5);
    rt_report_add(r, &x);
    const char *tags[] = {"k=\"v\" & <b>", "bad=\xff\xfe"};
    rt_job job = RT_JOB_INIT;
    job.job_name = "<script>alert(1)</script>";
    job.team = "O'Brien";
    job.tags = tags;
    job.tag_count = 2;
    rt_host host = {.hostname = "h<1>", .vcpus = RT_NULL_I64, .memory_mib = NAN, .gpu_count = RT_NULL_I64,
                    .gpu_memory_mib = NAN, .storage_gb = NAN};
    rt_cloud cloud = {.vendor_id = "aws", .instance_type = "m5.large</td>"};
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.job = &job;
    info.host = &host;
    info.cloud = &cloud;
    info.command = "sh -c 'echo </script>'";
    info.keeper_note = "server lookup failed: <timeout>";
    info.exit_status = 3;
    char *html = write_text(r, &info, NULL);
    assert_null(strstr(html, "<script>alert"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(html, "O&#39;Brien"));
    assert_non_null(strstr(html, "k=&quot;v&quot; &amp; &lt;b&gt;"));
    assert_non_null(strstr(html, "bad=\xEF\xBF\xBD\xEF\xBF\xBD")); /* invalid UTF-8: U+FFFD */
    assert_non_null(strstr(html, "h&lt;1&gt;"));
    assert_non_null(strstr(html, "m5.large&lt;/td&gt;"));
    assert_non_null(strstr(html, "echo &lt;/script&gt;"));
    assert_non_null(strstr(html, "server lookup failed: &lt;timeout&gt;"));
    assert_non_null(strstr(html, "<th>exit status</th><td>3</td>"));
    free(html);

    /* a caller built against a shorter info struct: only the title is read */
    rt_report_info old = RT_REPORT_INFO_INIT;
    old.struct_size = offsetof(rt_report_info, job);
    old.title = "old & short";
    old.job = &job; /* past its struct_size: ignored */
    html = write_text(r, &old, NULL);
    assert_non_null(strstr(html, "<h1>old &amp; short</h1>"));
    assert_null(strstr(html, "alert(1)"));
    free(html);
    rt_report_free(r);
}

static void costs(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    rt_summary s;
    memset(&s, 0, sizeof s);
    s.samples = 1;
    s.duration_secs = 7200;
    s.start_secs = s.end_secs = NAN;
    rt_recommendation rec_ = RT_RECOMMENDATION_INIT;
    rec_.cpu = 2;
    rec_.memory_mib = 3072;
    rec_.runs = 1;
    rec_.duration_secs = 7200;
    rt_server sv = RT_SERVER_INIT;
    snprintf(sv.vendor_id, sizeof sv.vendor_id, "hcloud");
    snprintf(sv.api_reference, sizeof sv.api_reference, "cx22");
    sv.vcpus = 2;
    sv.memory_mib = 4096;
    sv.gpu_count = 0;
    sv.price_usd_per_hour = 0.01;
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = &s;
    info.recommendation = &rec_;
    info.cheapest = &sv;
    info.current_instance = "aws:m5.large";
    info.current_price_usd_per_hour = 0.1;
    char *html = write_text(r, &info, NULL);
    assert_non_null(strstr(html, "@resources(cpu=2, memory=3222)"));
    assert_non_null(strstr(html, "--cpus-per-task=2 --mem=3072M"));
    assert_non_null(strstr(html, "<td>$0.0200</td>")); /* 2 h on the cheapest */
    assert_non_null(strstr(html, "<td>$0.2000</td>")); /* 2 h where it ran */
    assert_non_null(strstr(html, "$0.1800 per run (90%)"));
    free(html);
    rt_report_free(r);
}

static void write_errors(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    errno = 0;
    assert_int_equal(rt_report_write(r, NULL, fd), RT_ERR_IO);
    assert_int_equal(errno, EBADF);
    close(fd);
    assert_int_equal(rt_report_write(r, NULL, -1), RT_ERR_INVALID);
    assert_int_equal(rt_report_write(NULL, NULL, 1), RT_ERR_INVALID);
    rt_report_info bad = RT_REPORT_INFO_INIT;
    bad.struct_size = 2;
    assert_int_equal(rt_report_write(r, &bad, 1), RT_ERR_INVALID);
    rt_report_free(r);
}

/* The script between "var T0=" and "var CH=" holds numbers, null, commas, brackets only: no
 * "inf" or "nan" that would stop the page's script. */
static void assert_data_is_js(const char *html)
{
    const char *a = strstr(html, "var T0="), *b = strstr(html, "var CH=");
    assert_non_null(a);
    assert_non_null(b);
    for (const char *p = a + 7; p < b; p++)
        if (!strchr("0123456789.,-+e[]null;\n var TGS=", *p))
            fail_msg("not a number in the page's data: ...%.40s", p);
}

static void absurd_times(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    const double times[] = {1e9, 1.5e308, 1e300, -1.7e308, 1e9 + 1, 1e9 + 2};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        rt_record x = rec(times[i], 0.5);
        x.interval_secs = i == 4 ? 1e300 : 1; /* an absurd interval: taken as unknown */
        rt_report_add(r, &x);
    }
    rt_summary s;
    memset(&s, 0, sizeof s);
    s.samples = 6;
    s.start_secs = -1e300; /* from a file: the summary's times are not checked either */
    s.end_secs = 1e300;
    s.duration_secs = 1e300;
    s.cpu_cores = (rt_dist){NAN, NAN, NAN, NAN};
    s.memory_used_mib = s.gpu_usage = s.gpu_vram_mib = s.cpu_cores;
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = &s;
    char *html = write_text(r, &info, NULL);
    assert_data_is_js(html);
    assert_int_equal(array_len(html, "T"), 3); /* the three records of this era */
    free(html);
    rt_report_free(r);
}


/* The job's last reading, a moment after it ended (a short interval, its root gone and nothing of
 * its tree left, memory 0): the end of the last bucket, and no memory level of the job. */
static void job_end(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    for (int i = 0; i < 5; i++) {
        rt_record x = rec(1e9 + i, 1);
        x.process_alive = 1;
        x.process_children = 1;
        rt_report_add(r, &x);
    }
    rt_record end = rec(1e9 + 4.012, 1);
    end.interval_secs = 0.012;
    end.process_alive = 0;
    end.process_children = 0;
    end.cgroup_pids = 0;
    end.process_pss_mib = end.process_rss_mib = 0;
    rt_report_add(r, &end);
    assert_int_equal(r->n, 5);                  /* no point of its own */
    assert_true(r->b[4].t1 == 1e9 + 4.012);     /* the last bucket ends with it */
    assert_true(r->b[4].c[RPT_JOB_PSS].min == 100); /* no false drop to 0 */
    assert_true(r->b[4].c[RPT_JOB_RSS].min == 120);
    assert_true(fabs(r->b[4].c[RPT_JOB_CORES].weight - 1.012) < 1e-9); /* its CPU counts */

    /* a tree that lives on past its root keeps its levels */
    rt_record more = rec(1e9 + 5.012, 1);
    more.process_alive = 0;
    more.process_children = 2;
    more.process_pss_mib = 50;
    rt_report_add(r, &more);
    assert_int_equal(r->n, 6);
    assert_true(r->b[5].c[RPT_JOB_PSS].max == 50);
    rt_report_free(r);
}

/* A summary of n one-second samples of a tracked tree, every figure zero. */
static void quiet_summary(rt_summary *s, int n)
{
    memset(s, 0, sizeof *s);
    s->samples = n;
    s->duration_secs = n;
    s->has_process = 1;
    s->start_secs = s->end_secs = NAN;
    rt_dist zero = {0, 0, 0, 0};
    s->process_cores = s->cpu_cores = s->memory_used_mib = s->gpu_usage = s->gpu_vram_mib = zero;
    s->process_gpu_usage = s->process_gpu_vram_mib = zero;
}

/* The exit status in the summary's words; no GPU row without a GPU. */
static void exit_words_and_gpu_rows(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    rt_record x = rec(1e9, 0.5);
    rt_report_add(r, &x);
    rt_summary s;
    quiet_summary(&s, 1);
    s.process_read_bytes = 1024;
    s.process_write_bytes = 2048;
    s.gpu_count = 0;
    s.gpu_vram_total_mib = 0;
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = &s;
    info.exit_status = 130;
    char *html = write_text(r, &info, NULL);
    assert_non_null(strstr(html, "id=\"answer-exit\"><b>130 (killed by signal 2, SIGINT)</b>"));
    assert_non_null(strstr(html, "<th>exit status</th><td>130 (killed by signal 2, SIGINT)</td>"));
    assert_non_null(strstr(html, "<b>1.0 KiB / 2.0 KiB</b><span>storage read / written</span>"));
    assert_null(strstr(html, "GPU (GPUs busy)"));
    assert_null(strstr(html, "VRAM"));
    assert_null(strstr(html, "<th>GPUs</th>"));
    assert_null(strstr(html, "<th>GPU memory</th>"));
    free(html);
    s.gpu_count = 1;
    info.exit_status = 0;
    html = write_text(r, &info, NULL);
    assert_non_null(strstr(html, "machine GPU (GPUs busy)"));
    assert_non_null(strstr(html, "id=\"answer-exit\"><b>0</b>"));
    free(html);
    rt_report_free(r);
}

/* The page's wording (0.18): its own chart titles and lines, or the Python tracker 0.5's; and
 * the run's status figure (run_state) in place of the exit status figure, in either wording;
 * an older caller's struct (without run_state and wording) and a state out of range get the
 * page as before. */
static void wording_and_status(void **state)
{
    (void)state;
    rt_report *r = rt_report_new();
    for (int i = 0; i < 20; i++) {
        rt_record x = rec(1e9 + i, i % 3 ? 0.25 : 1.5);
        x.disk_read_bytes = i % 2 ? 4096 : 0;
        x.process_read_bytes = i % 4 ? 1024 : 0;
        rt_report_add(r, &x);
    }
    rt_summary s;
    quiet_summary(&s, 20);
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = &s;
    info.exit_status = 0;

    /* its own words; no status said: the exit status figure */
    char *html = write_text(r, &info, NULL);
    assert_non_null(strstr(html, "<h3>CPU</h3>"));
    assert_non_null(strstr(html, "[0,\"job\",\"#d62728\"],[1,\"machine\",\"#1f77b4\"]"));
    assert_non_null(strstr(html, "id=\"t-space\">Disk space used: 953.7 MiB throughout</p>"));
    assert_null(strstr(html, "Process CPU usage"));
    assert_null(strstr(html, "answer-status"));
    assert_non_null(strstr(html, "id=\"answer-exit\"><b>0</b>"));
    free(html);

    /* 0.5's words: its titles over the same charts, its lines, after the answer */
    info.wording = RT_REPORT_WORDING_PY05;
    html = write_text(r, &info, NULL);
    const char *answer = strstr(html, "<section id=\"answer\">"), *cpu = strstr(html, "<h3>CPU Usage</h3>");
    assert_non_null(answer);
    assert_non_null(cpu);
    assert_true(answer < cpu);
    assert_null(strstr(html, "<h3>CPU</h3>"));
    assert_non_null(strstr(html, "<h3>Memory Usage</h3>"));
    assert_non_null(strstr(html, "<h3>Disk I/O Usage</h3>"));
    assert_non_null(strstr(html, "[0,\"Process CPU usage\",\"#d62728\"],[1,\"System CPU usage\",\"#1f77b4\"]"));
    assert_non_null(strstr(html, "[2,\"Process memory usage (PSS)\",\"#d62728\"],[3,\"Process memory usage (RSS)\","
                                 "\"#ff7f0e\"],[4,\"System used memory\",\"#1f77b4\",1]")); /* its own axis */
    assert_non_null(strstr(html, "\"Process disk read\""));
    assert_non_null(strstr(html, "\"System disk read\""));
    assert_non_null(strstr(html, "id=\"t-space\">Disk Space Usage: 953.7 MiB throughout</p>"));
    assert_non_null(strstr(html, "id=\"t-network\">Network Usage: nothing sent or received</p>"));
    assert_null(strstr(html, "answer-status"));
    free(html);

    /* the status, in each wording: one figure, with the exit status when known */
    static const struct {
        int wording, state, exit;
        const char *want;
    } cases[] = {
        {RT_REPORT_WORDING_PY05, RT_RUN_RUNNING, -1,
         "<div class=\"fig\" id=\"answer-status\"><b>Pending</b><span>status: still running, the figures so "
         "far</span>"},
        {RT_REPORT_WORDING_OWN, RT_RUN_RUNNING, -1,
         "<div class=\"fig\" id=\"answer-status\"><b>Running</b><span>status: still running, the figures so "
         "far</span>"},
        {RT_REPORT_WORDING_PY05, RT_RUN_FINISHED, -1,
         "<div class=\"fig\" id=\"answer-status\"><b>Finished</b><span>status</span>"},
        {RT_REPORT_WORDING_OWN, RT_RUN_FINISHED, 0,
         "<div class=\"fig\" id=\"answer-status\"><b>Finished</b><span>status, exit status 0</span>"},
        {RT_REPORT_WORDING_PY05, RT_RUN_FAILED, 1, "<div class=\"fig bad\" id=\"answer-status\"><b>Failed</b><span>"
                                                   "status, exit status 1: the figures may be incomplete</span>"},
        {RT_REPORT_WORDING_OWN, RT_RUN_FAILED, 137, "<div class=\"fig bad\" id=\"answer-status\"><b>Failed</b><span>"
                                                    "status, exit status 137 (killed by signal 9, SIGKILL): the "
                                                    "figures may be incomplete</span>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        info.wording = cases[i].wording;
        info.run_state = cases[i].state;
        info.exit_status = cases[i].exit;
        html = write_text(r, &info, NULL);
        if (!strstr(html, cases[i].want))
            fail_msg("case %zu: no %s in the page", i, cases[i].want);
        assert_null(strstr(html, "answer-exit"));
        const char *st = strstr(html, "answer-status");
        assert_null(strstr(st + 1, "answer-status")); /* one figure */
        assert_true(st < strstr(html, "<section id=\"charts\">"));
        assert_int_equal(strstr(html, "Pending") != NULL,
                         cases[i].state == RT_RUN_RUNNING && cases[i].wording == RT_REPORT_WORDING_PY05);
        assert_int_equal(strstr(html, "Failed") != NULL, cases[i].state == RT_RUN_FAILED);
        free(html);
    }

    /* a state out of range says nothing of the run: the exit status figure */
    info.run_state = 7;
    info.exit_status = 2;
    html = write_text(r, &info, NULL);
    assert_null(strstr(html, "answer-status"));
    assert_non_null(strstr(html, "id=\"answer-exit\"><b>2</b>"));
    free(html);

    /* an older caller's struct, without run_state and wording: the page as before */
    info.run_state = RT_RUN_FAILED;
    info.struct_size = offsetof(rt_report_info, run_state);
    html = write_text(r, &info, NULL);
    assert_null(strstr(html, "answer-status"));
    assert_non_null(strstr(html, "<h3>CPU</h3>"));
    assert_null(strstr(html, "Process CPU usage"));
    free(html);
    rt_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(day_with_spike), cmocka_unit_test(short_run_and_gap), cmocka_unit_test(gpu_charts), cmocka_unit_test(gpu_work_chart),
        cmocka_unit_test(empty_report),   cmocka_unit_test(strings_escaped),   cmocka_unit_test(costs),
        cmocka_unit_test(write_errors), cmocka_unit_test(absurd_times),
        cmocka_unit_test(cgroup_marks), cmocka_unit_test(cgroup_marks_bounded),
        cmocka_unit_test(job_end), cmocka_unit_test(exit_words_and_gpu_rows), cmocka_unit_test(power_chart), cmocka_unit_test(power_chart_by_part),
        cmocka_unit_test(wording_and_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
