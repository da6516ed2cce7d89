/* gpu_work_words.c - a run's GPU work in words (gpu_work_words.h): the SM activity with its p95
 * and peak, the tensor cores, DRAM bandwidth, the FP units that worked, PCIe and NVLink traffic,
 * whose figures they are; or that the GPUs gave utilization only. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu_work_words.h"

int rt_gw_known(const rt_summary *s)
{
    const rt_dist *d[] = {&s->gpu_sm_active_pct,   &s->gpu_sm_occupancy_pct, &s->gpu_tensor_active_pct,
                          &s->gpu_dram_active_pct, &s->gpu_fp64_active_pct,  &s->gpu_fp32_active_pct,
                          &s->gpu_fp16_active_pct, &s->gpu_pcie_bytes_per_sec, &s->gpu_nvlink_bytes_per_sec};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (!isnan(d[i]->mean))
            return 1;
    return 0;
}

const char *rt_gw_pct(double v, char *b, size_t cap)
{
    if (isnan(v))
        snprintf(b, cap, "-");
    else if (v == 0)
        snprintf(b, cap, "0");
    else
        snprintf(b, cap, "%.1f", v);
    return b;
}

const char *rt_gw_rate(double v, char *b, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (!isfinite(v)) {
        snprintf(b, cap, "-");
        return b;
    }
    size_t u = 0;
    while (fabs(v) >= 1023.5 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1024;
        u++;
    }
    snprintf(b, cap, fabs(v) < 9.95 && v != round(v) ? "%.1f %s/s" : "%.0f %s/s", v, unit[u]);
    return b;
}

/* Appends printf's text to b (length *n, cap bytes), cut at the end. */
__attribute__((format(printf, 4, 5))) static void add(char *b, size_t cap, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b + *n, cap - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n = *n + (size_t)k < cap ? *n + (size_t)k : cap - 1;
}

/* A rate's "30 MiB/s" with glue between its figure and its unit, into b. */
static const char *glued(const char *rate, const char *glue, char *b, size_t cap)
{
    const char *sp = strchr(rate, ' ');
    snprintf(b, cap, "%.*s%s%s", sp ? (int)(sp - rate) : (int)strlen(rate), rate, sp ? glue : "", sp ? sp + 1 : "");
    return b;
}

/* The GPUs the run used: the tree's where its GPU usage is known, else the machine's when busy
 * (an old driver tells no process's usage). */
static double gpus_used(const rt_summary *s)
{
    if (s->has_process && (!isnan(s->process_gpus_used) || !isnan(s->process_gpu_usage.peak)))
        return s->process_gpus_used > 0 || s->process_gpu_usage.peak > 0 ? fmax(s->process_gpus_used, 1) : 0;
    return s->gpu_count > 0 && s->gpu_usage.peak > 0 ? s->gpu_count : 0;
}

size_t rt_gw_words(const rt_summary *s, const char *glue, char *b, size_t cap)
{
    size_t n = 0;
    if (cap)
        b[0] = '\0';
    if (!s || !cap)
        return 0;
    char x[32], y[32], z[32];
    const char *g = glue ? glue : " ";
    if (!rt_gw_known(s)) {
        double used = gpus_used(s);
        if (!(used > 0))
            return 0;
        add(b, cap, &n, "utilization only (a kernel was running): %s no SM or tensor figures (GPM: Hopper and newer)",
            used > 1 ? "these GPUs give" : "this GPU gives");
        return n;
    }
    const rt_dist *sm = &s->gpu_sm_active_pct;
    if (!isnan(sm->mean)) {
        add(b, cap, &n, "SM%s%s%%", g, rt_gw_pct(sm->mean, x, sizeof x));
        if (!isnan(sm->peak))
            add(b, cap, &n, "%s(p95%s%s,%speak%s%s)", g, g, rt_gw_pct(sm->p95, y, sizeof y), g, g,
                rt_gw_pct(sm->peak, z, sizeof z));
    }
    const struct {
        const char *name;
        const rt_dist *d;
        int if_any; /* shown only when it did some work (mean 0.05% or more) */
    } f[] = {{"tensor", &s->gpu_tensor_active_pct, 0}, {"DRAM", &s->gpu_dram_active_pct, 0},
             {"FP64", &s->gpu_fp64_active_pct, 1},     {"FP32", &s->gpu_fp32_active_pct, 1},
             {"FP16", &s->gpu_fp16_active_pct, 1}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        double v = f[i].d->mean;
        if (isnan(v) || (f[i].if_any && !(v >= 0.05)))
            continue;
        add(b, cap, &n, "%s%s%s%s%%", n ? ", " : "", f[i].name, g, rt_gw_pct(v, x, sizeof x));
    }
    const char *sep = n ? "; " : "";
    if (!isnan(s->gpu_pcie_bytes_per_sec.mean)) {
        add(b, cap, &n, "%sPCIe%s%s", sep, g, glued(rt_gw_rate(s->gpu_pcie_bytes_per_sec.mean, x, sizeof x), g, y, sizeof y));
        sep = ", ";
    }
    if (s->gpu_nvlink_bytes_per_sec.mean > 0)
        add(b, cap, &n, "%sNVLink%s%s", sep, g, glued(rt_gw_rate(s->gpu_nvlink_bytes_per_sec.mean, x, sizeof x), g, y, sizeof y));
    if (s->gpu_work_shared == 1)
        add(b, cap, &n, " (the devices', shared with other processes)");
    return n;
}
