/* views.c - test helper: every view the library makes of one sample, printed one after the
 * other so that a test can hold them byte for byte to a committed golden file (tests/golden/):
 * the JSON line, the Rust tool's JSON line (0.17) and the CSV row (rt_format_sample), the Prometheus text and OpenMetrics bodies
 * (rt_format_prometheus), the OTLP/JSON body of the sample as the one row of a push, the
 * embedded tracker's store row (rt_row_from_sample, by column name) and the analysis record
 * (rt_record_from_sample). Each view opens with a line "== NAME". The library's version is
 * written as @VERSION@, so that a release changes no golden file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"
#include "store/store.h"
#include "export/otlp_int.h"

static char buf[1 << 20];

/* s with every RT_VERSION written as @VERSION@. */
static void put_unversioned(FILE *out, const char *s)
{
    const size_t vl = strlen(RT_VERSION);
    for (const char *hit; (hit = strstr(s, RT_VERSION)) != NULL; s = hit + vl) {
        fwrite(s, 1, (size_t)(hit - s), out);
        fputs("@VERSION@", out);
    }
    fputs(s, out);
}

static void view_format(FILE *out, const char *name, rt_format fmt, const rt_sample *s, const rt_job *job)
{
    fprintf(out, "== %s\n", name);
    size_t n = rt_format_sample(fmt, s, job, buf, sizeof buf);
    if (n >= sizeof buf) {
        fprintf(out, "(too large: %zu bytes)\n", n);
        return;
    }
    put_unversioned(out, buf);
}

static void view_prom(FILE *out, const char *name, int openmetrics, const rt_sample *s, const rt_job *job)
{
    fprintf(out, "== %s\n", name);
    size_t n = rt_format_prometheus(s, job, NULL, NULL, openmetrics, buf, sizeof buf);
    if (n >= sizeof buf) {
        fprintf(out, "(too large: %zu bytes)\n", n);
        return;
    }
    put_unversioned(out, buf);
}

static void view_otlp(FILE *out, const rt_sample *s)
{
    fputs("== otlp\n", out);
    rt_otlp_row *row = rt_otlp_row_new(s);
    if (!row) {
        fputs("(no memory)\n", out);
        return;
    }
    rt_otlp_state st;
    memset(&st, 0, sizeof st);
    rt_otlp_accumulate(&st, &row, 1);
    const rt_otlp_attr res[] = {{.key = "service.name", .type = RT_OTLP_STR, .str = "resource-tracker"}};
    size_t n = rt_otlp_format(res, 1, &row, 1, buf, sizeof buf);
    if (n >= sizeof buf)
        fprintf(out, "(too large: %zu bytes)\n", n);
    else {
        put_unversioned(out, buf);
        fputc('\n', out);
    }
    rt_otlp_state_free(&st);
    free(row);
}

/* A figure exactly: %.17g, "null" when not finite. */
static void num(FILE *out, const char *name, double v)
{
    if (isfinite(v))
        fprintf(out, "%s=%.17g\n", name, v);
    else
        fprintf(out, "%s=null\n", name);
}

static void view_store(FILE *out, const rt_sample *s)
{
    fputs("== store\n", out);
    double row[RT_NCOLS];
    rt_row_from_sample(s, row);
    for (int c = 0; c < RT_NCOLS; c++)
        num(out, rt_column_name(c), row[c]);
}

static void record_part(FILE *out, const char *name, const rt_record_part *p)
{
    char k[64];
#define PART(m) (snprintf(k, sizeof k, "%s.%s", name, #m), num(out, k, p->m))
    PART(total_rss_mib);
    PART(private_rss_mib);
    PART(shared_rss_mib);
    PART(cores);
    PART(threads);
    PART(gpu_vram_mib);
#undef PART
}

static void view_record(FILE *out, const rt_sample *s)
{
    fputs("== record\n", out);
    rt_record r;
    memset(&r, 0, sizeof r);
    rt_record_from_sample(s, &r);
#define F(m) num(out, #m, r.m)
    F(timestamp_secs);
    F(interval_secs);
    fprintf(out, "job_name=%s\n", r.job_name ? r.job_name : "null");
    F(cpu_cores);
    F(cpu_count);
    F(memory_used_mib);
    F(memory_total_mib);
    F(disk_read_bytes);
    F(disk_write_bytes);
    F(net_recv_bytes);
    F(net_sent_bytes);
    F(disk_space_total_bytes);
    F(disk_space_used_bytes);
    F(gpu_usage);
    F(gpu_vram_mib);
    F(gpu_utilized);
    F(gpu_count);
    F(gpu_vram_total_mib);
    F(process_pid);
    F(process_children);
    F(process_cores);
    F(process_cpu_secs);
    F(process_cpu_secs_total);
    F(process_pss_mib);
    F(process_rss_mib);
    F(process_rss_peak_mib);
    F(process_read_bytes);
    F(process_write_bytes);
    F(process_gpu_usage);
    F(process_gpu_vram_mib);
    F(process_gpu_utilized);
    F(process_memory_peak_mib);
    F(cgroup_oom_kills);
    F(cgroup_memory_limit_mib);
    F(cgroup_memory_high_mib);
    F(cgroup_cpu_quota_cores);
    F(cgroup_cpu_periods);
    F(cgroup_cpu_throttled_periods);
    F(cgroup_cpu_throttled_secs);
    F(cgroup_pids_peak);
    F(cgroup_pids_limit);
    F(pressure_cpu_some_pct);
    F(pressure_memory_some_pct);
    F(pressure_memory_full_pct);
    F(pressure_io_some_pct);
    F(pressure_io_full_pct);
    record_part(out, "main", &r.main);
    record_part(out, "descendants", &r.descendants);
    record_part(out, "combined", &r.combined);
    fprintf(out, "gpu_n=%zu\n", r.gpu_n);
    F(process_rss_hwm_mib);
    F(process_unreclaimable_peak_mib);
    F(process_gpu_vram_peak_mib);
    F(process_cancelled_write_bytes_total);
    F(process_alive);
    F(process_cgroup_exclusive);
    F(cgroup_pids);
    F(energy_joules);
    F(process_energy_joules);
    fprintf(out, "energy_method=%s\n", r.energy_method ? r.energy_method : "null");
    fprintf(out, "process_energy_method=%s\n", r.process_energy_method ? r.process_energy_method : "null");
    F(idle_power_watts);
    F(gpu_power_throttled_secs);
    F(gpu_thermal_throttled_secs);
    fprintf(out, "energy_domains=%zu\n", r.energy ? r.energy->domain_count : (size_t)0);
#undef F
}

void print_views(FILE *out, const rt_sample *s, const rt_job *job)
{
    view_format(out, "json", RT_FORMAT_JSON, s, job);
    view_format(out, "json-rs", RT_FORMAT_JSON_RS, s, job);
    view_format(out, "csv", RT_FORMAT_CSV, s, job);
    view_prom(out, "prometheus", 0, s, job);
    view_prom(out, "openmetrics", 1, s, job);
    view_otlp(out, s);
    view_store(out, s);
    view_record(out, s);
    fputs("== end\n", out);
}
