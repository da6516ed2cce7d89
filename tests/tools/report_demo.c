/* report_demo.c - builds HTML reports through the library's rt_report for the tests and the
 * benchmark: from synthetic records (a long run with one one-record spike), or from the
 * tool's JSON lines (a minimal reading of the fields the charts use, with jansson).
 *   report-demo synth N SPIKE_INDEX OUT.html [--gpu]   N records 1 s apart; prints timings
 *   report-demo jsonl IN.jsonl OUT.html                 a recorded run */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "resource_tracker.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a mean-and-peak summary (percentiles left unknown), enough for the page's tables */
typedef struct acc {
    double sum, weight, peak;
} acc;

static void acc_add(acc *a, double v, double w)
{
    if (isnan(v))
        return;
    a->sum += v * w;
    a->weight += w;
    if (isnan(a->peak) || v > a->peak)
        a->peak = v;
}

static rt_dist acc_dist(const acc *a)
{
    rt_dist d = {NAN, NAN, NAN, NAN};
    if (a->weight > 0) {
        d.mean = a->sum / a->weight;
        d.peak = a->peak;
    }
    return d;
}

enum { A_JOB, A_CPU, A_PSS, A_RSS, A_MEM, A_GPU, A_JOBGPU, A_VRAM, A_JOBVRAM, A_N };

typedef struct demo {
    rt_report *rep;
    acc a[A_N];
    rt_summary s;
} demo;

static void demo_init(demo *d)
{
    memset(d, 0, sizeof *d);
    d->rep = rt_report_new();
    for (int i = 0; i < A_N; i++)
        d->a[i].peak = NAN;
    d->s.start_secs = NAN;
    d->s.process_cpu_secs = 0;
    d->s.disk_space_used_peak_bytes = d->s.disk_space_total_bytes = NAN;
    d->s.process_read_bytes = d->s.process_write_bytes = NAN;
    d->s.gpu_count = d->s.gpu_vram_total_mib = NAN;
}

static void demo_add(demo *d, const rt_record *r)
{
    rt_report_add(d->rep, r);
    double w = isnan(r->interval_secs) ? 1 : r->interval_secs;
    if (isnan(d->s.start_secs))
        d->s.start_secs = r->timestamp_secs - w;
    d->s.end_secs = r->timestamp_secs;
    d->s.duration_secs = d->s.end_secs - d->s.start_secs;
    d->s.samples++;
    const double v[A_N] = {r->process_cores, r->cpu_cores, r->process_pss_mib, r->process_rss_mib,
                           r->memory_used_mib, r->gpu_count > 0 ? r->gpu_usage : NAN, r->process_gpu_usage,
                           r->gpu_count > 0 ? r->gpu_vram_mib : NAN, r->process_gpu_vram_mib};
    for (int i = 0; i < A_N; i++)
        acc_add(&d->a[i], v[i], w);
    if (!isnan(r->process_cores)) {
        d->s.has_process = 1;
        d->s.process_cpu_secs += r->process_cores * w;
    }
    d->s.cpu_count = r->cpu_count;
    d->s.memory_total_mib = r->memory_total_mib;
    d->s.disk_read_bytes += r->disk_read_bytes;
    d->s.disk_write_bytes += r->disk_write_bytes;
    d->s.net_recv_bytes += r->net_recv_bytes;
    d->s.net_sent_bytes += r->net_sent_bytes;
    d->s.disk_space_total_bytes = r->disk_space_total_bytes;
    if (isnan(d->s.disk_space_used_peak_bytes) || r->disk_space_used_bytes > d->s.disk_space_used_peak_bytes)
        d->s.disk_space_used_peak_bytes = r->disk_space_used_bytes;
    if (r->gpu_count > 0) {
        d->s.gpu_count = r->gpu_count;
        d->s.gpu_vram_total_mib = r->gpu_vram_total_mib;
        d->s.process_gpus_used = fmax(d->s.process_gpus_used, r->process_gpu_utilized);
    }
}

/* writes the report with a summary and a recommendation; with `made_up`, also a made-up
 * host, cheapest server and costs (the Keeper lookup is another module's) */
static int demo_write(demo *d, const char *out, const char *title, bool made_up)
{
    rt_summary *s = &d->s;
    s->job_name = title;
    s->process_cores = acc_dist(&d->a[A_JOB]);
    s->cpu_cores = acc_dist(&d->a[A_CPU]);
    s->process_pss_mib = acc_dist(&d->a[A_PSS]);
    s->process_rss_mib = acc_dist(&d->a[A_RSS]);
    s->memory_used_mib = acc_dist(&d->a[A_MEM]);
    s->gpu_usage = acc_dist(&d->a[A_GPU]);
    s->process_gpu_usage = acc_dist(&d->a[A_JOBGPU]);
    s->gpu_vram_mib = acc_dist(&d->a[A_VRAM]);
    s->process_gpu_vram_mib = acc_dist(&d->a[A_JOBVRAM]);
    s->allocation = "dedicated";
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    const rt_summary *runs[1] = {s};
    bool have_rec = rt_recommend(runs, 1, &rec) == RT_OK;
    rt_server sv = RT_SERVER_INIT;
    snprintf(sv.vendor_id, sizeof sv.vendor_id, "hcloud");
    snprintf(sv.api_reference, sizeof sv.api_reference, "cx22");
    snprintf(sv.display_name, sizeof sv.display_name, "CX22 <demo>");
    sv.vcpus = 2;
    sv.memory_mib = 4096;
    sv.gpu_count = 0;
    sv.price_usd_per_hour = 0.0066;
    const char *tags[] = {"owner=ana", "note=<b>&\"'"};
    rt_job job = RT_JOB_INIT;
    job.job_name = title;
    job.project_name = "demo";
    job.tags = tags;
    job.tag_count = 2;
    rt_host host = {.hostname = "demo-host", .vcpus = 2, .cpu_model = "demo CPU", .memory_mib = 4096,
                    .gpu_count = 0, .gpu_memory_mib = NAN, .storage_gb = 256, .kernel = "6.1", .os = "Debian 12"};
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.title = title;
    info.job = &job;
    info.summary = s;
    info.recommendation = have_rec ? &rec : NULL;
    if (made_up) {
        info.command = "stress-ng --cpu 1 --timeout 2s";
        info.host = &host;
        info.exit_status = 0;
        info.cheapest = have_rec ? &sv : NULL;
        info.current_instance = "aws:m5.large";
        info.current_price_usd_per_hour = 0.096;
        info.keeper_note = "server and prices: a made-up example (report-demo)";
    } else {
        job.project_name = NULL;
        job.tag_count = 0;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(out);
        return 1;
    }
    rt_error e = rt_report_write(d->rep, &info, fd);
    if (close(fd) < 0 || e != RT_OK) {
        fprintf(stderr, "report-demo: %s: %s\n", out, rt_strerror(e));
        return 1;
    }
    return 0;
}

static int synth(long n, long spike, const char *out, bool gpu)
{
    demo d;
    demo_init(&d);
    double t_add = now();
    rt_record r;
    double t0 = 1767225600; /* 2026-01-01 00:00:00 UTC */
    for (long i = 0; i < n; i++) {
        double x = (double)i / 3600.0;
        memset(&r, 0, sizeof r);
        r.timestamp_secs = t0 + (double)i + 1;
        r.interval_secs = 1;
        r.cpu_count = 2;
        r.process_cores = i == spike ? 2.0 : 0.2;
        r.cpu_cores = 0.6;
        r.memory_total_mib = 4096;
        r.process_pss_mib = 800 + 200 * sin(x);
        r.process_rss_mib = r.process_pss_mib * 1.2;
        r.memory_used_mib = r.process_rss_mib + 300;
        r.disk_read_bytes = 1e5 * (1 + sin(x * 3));
        r.disk_write_bytes = 2e5;
        r.net_recv_bytes = 5e4;
        r.net_sent_bytes = 1e4;
        r.disk_space_total_bytes = 256e9;
        r.disk_space_used_bytes = 100e9 + (double)i * 1e5;
        r.process_read_bytes = r.disk_read_bytes / 2;
        r.process_write_bytes = r.disk_write_bytes / 2;
        r.gpu_count = gpu ? 1 : 0;
        r.gpu_usage = gpu ? 0.5 : 0;
        r.gpu_vram_mib = gpu ? 2000 : 0;
        r.gpu_vram_total_mib = gpu ? 16384 : NAN;
        r.process_gpu_usage = gpu ? 0.4 : NAN;
        r.process_gpu_vram_mib = gpu ? 1800 : NAN;
        r.process_gpu_utilized = gpu ? 1 : NAN;
        /* 0.19: the GPU's work (NVML GPM), a small-matmul loop's: SM activity well under its utilization */
        r.gpu_sm_active_pct = gpu ? 15 + 10 * sin(x * 5) : NAN;
        r.gpu_sm_occupancy_pct = gpu ? 0.85 : NAN;
        r.gpu_tensor_active_pct = r.gpu_fp16_active_pct = r.gpu_fp64_active_pct = gpu ? 0 : NAN;
        r.gpu_dram_active_pct = gpu ? 0.5 : NAN;
        r.gpu_fp32_active_pct = gpu ? 2.3 : NAN;
        r.gpu_pcie_bytes_per_sec = gpu ? 31457280 : NAN;
        r.gpu_nvlink_bytes_per_sec = NAN;
        r.gpu_work_shared = gpu ? 0 : NAN;
        r.process_pid = 42;
        r.process_children = 1;
        demo_add(&d, &r);
    }
    t_add = now() - t_add;
    double t_write = now();
    int rc = demo_write(&d, out, "synthetic run", true);
    t_write = now() - t_write;
    printf("records: %ld  add_ms: %.1f  write_ms: %.1f\n", n, t_add * 1e3, t_write * 1e3);
    rt_report_free(d.rep);
    return rc;
}

static double num(json_t *o, const char *key)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* one JSON line of the tool into a record (only what the charts and tables use) */
static void from_json(json_t *j, rt_record *r)
{
    memset(r, 0, sizeof *r);
    r->timestamp_secs = num(j, "timestamp_secs");
    r->interval_secs = num(j, "interval_secs");
    json_t *cpu = json_object_get(j, "cpu"), *mem = json_object_get(j, "memory"), *p = json_object_get(j, "process");
    r->cpu_cores = num(cpu, "utilization_pct");
    json_t *cores = json_object_get(cpu, "per_core_pct");
    r->cpu_count = json_is_array(cores) ? (double)json_array_size(cores) : NAN;
    r->memory_used_mib = num(mem, "used_mib");
    r->memory_total_mib = num(mem, "total_mib");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "disk"), i, e) {
        r->disk_read_bytes += num(e, "read_bytes_per_sec") * r->interval_secs;
        r->disk_write_bytes += num(e, "write_bytes_per_sec") * r->interval_secs;
        size_t k;
        json_t *m;
        json_array_foreach(json_object_get(e, "mounts"), k, m) {
            r->disk_space_total_bytes += num(m, "total_bytes");
            r->disk_space_used_bytes += num(m, "used_bytes");
        }
    }
    json_array_foreach(json_object_get(j, "network"), i, e) {
        r->net_recv_bytes += num(e, "rx_bytes_per_sec") * r->interval_secs;
        r->net_sent_bytes += num(e, "tx_bytes_per_sec") * r->interval_secs;
    }
    r->gpu_count = (double)json_array_size(json_object_get(j, "gpu"));
    r->gpu_usage = r->gpu_vram_mib = r->gpu_vram_total_mib = NAN;
    r->process_cores = num(p, "cores_used");
    r->process_pss_mib = num(p, "pss_mib");
    r->process_rss_mib = num(p, "rss_mib");
    r->process_read_bytes = num(p, "read_bytes_per_sec") * r->interval_secs;
    r->process_write_bytes = num(p, "write_bytes_per_sec") * r->interval_secs;
    r->process_gpu_usage = r->process_gpu_vram_mib = r->process_gpu_utilized = NAN;
}

static int jsonl(const char *in, const char *out)
{
    FILE *f = fopen(in, "r");
    if (!f) {
        perror(in);
        return 1;
    }
    demo d;
    demo_init(&d);
    char *line = NULL, title[256] = "recorded run";
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL);
        if (!j)
            continue;
        if (d.s.samples == 0 && json_is_string(json_object_get(j, "job_name")))
            snprintf(title, sizeof title, "%s", json_string_value(json_object_get(j, "job_name")));
        rt_record r;
        from_json(j, &r);
        demo_add(&d, &r);
        json_decref(j);
    }
    free(line);
    fclose(f);
    int rc = demo_write(&d, out, title, false);
    rt_report_free(d.rep);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "synth") == 0)
        return synth(strtol(argv[2], NULL, 10), strtol(argv[3], NULL, 10), argv[4],
                     argc > 5 && strcmp(argv[5], "--gpu") == 0);
    if (argc == 4 && strcmp(argv[1], "jsonl") == 0)
        return jsonl(argv[2], argv[3]);
    fprintf(stderr, "usage: report-demo synth N SPIKE_INDEX OUT.html [--gpu] | jsonl IN.jsonl OUT.html\n");
    return 2;
}
