/* summary.c - a run's statistics (rt_summary) as one JSON object with a newline
 * (rt_format_summary), memory and time figures in gpu_tracker's units (core/units.h), into a
 * caller's buffer through the output builder (core/ob.c). */
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "../core/units.h"
#include "sink.h"

/* A unit: gpu_tracker's (core/units.h), or the summary's own MiB and seconds (no name). */
typedef rt_gt_unit unit;

static const unit mib = {NULL, "_mib", 1.0, 1.0, 3};
static const unit secs = {NULL, "_secs", 1.0, 1.0, 3};

/* The unit called name in table (n entries), fallback for NULL, or NULL when unknown. */
static const unit *find_unit(const unit *table, size_t n, const unit *fallback, const char *name)
{
    return name ? rt_gt_unit_find(table, n, name) : fallback;
}

/* "name<suffix>": (suffix may be NULL). */
static void key(rt_ob *o, const char *name, const char *suffix)
{
    rt_ob_put(o, "\"", 1);
    rt_ob_lit(o, name);
    if (suffix)
        rt_ob_lit(o, suffix);
    rt_ob_put(o, "\":", 2);
}

/* v with dec decimals (null when not finite). From 1e15 on, the shortest %g that reads back
 * as v: fixed notation of 1e300 would be cut, and an integer of 2^63 or more is one that
 * jansson (and other parsers) refuse. */
static void value(rt_ob *o, double v, int dec)
{
    if (!isfinite(v) || fabs(v) < 1e15) {
        rt_ob_fixed(o, v, dec, "null");
        return;
    }
    char tmp[40];
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) /* both in the current locale */
            break;
    }
    for (char *c = tmp; *c; c++) /* a locale's decimal comma: JSON wants a point */
        if (!(*c >= '0' && *c <= '9') && *c != 'e' && *c != '+' && *c != '-')
            *c = '.';
    rt_ob_put(o, tmp, n > 0 && (size_t)n < sizeof tmp ? (size_t)n : 0);
}

/* "name<suffix>":v*factor with u's decimals (null for NaN), then a comma. u NULL: v as is
 * with dec decimals and no suffix. */
static void num(rt_ob *o, const char *name, const unit *u, double v, int dec)
{
    key(o, name, u ? u->suffix : NULL);
    value(o, u ? v * u->factor : v, u ? u->decimals : dec);
    rt_ob_put(o, ",", 1);
}

/* "name<suffix>":{"mean":..,"peak":..,"p50":..,"p95":..}, then a comma; converted by u as num. */
static void dist(rt_ob *o, const char *name, const unit *u, const rt_dist *d, int dec)
{
    key(o, name, u ? u->suffix : NULL);
    rt_ob_put(o, "{", 1);
    num(o, "mean", NULL, u ? d->mean * u->factor : d->mean, u ? u->decimals : dec);
    num(o, "peak", NULL, u ? d->peak * u->factor : d->peak, u ? u->decimals : dec);
    num(o, "p50", NULL, u ? d->p50 * u->factor : d->p50, u ? u->decimals : dec);
    num(o, "p95", NULL, u ? d->p95 * u->factor : d->p95, u ? u->decimals : dec);
    o->len--; /* the last member's comma: overwritten by the brace */
    rt_ob_put(o, "},", 2);
}

/* "name":"v" escaped or null, then a comma. */
static void str(rt_ob *o, const char *name, const char *v)
{
    key(o, name, NULL);
    rt_ob_json_str(o, v);
    rt_ob_put(o, ",", 1);
}

/* One member of the summary's "process" or "machine" object, in the object's order (the order
 * is the contract: docs/contracts.md's summary JSON): its key, what of rt_summary it shows (a
 * double, an rt_dist or a yes/no double) and its unit (none: dec decimals as it is). */
typedef enum { SF_NUM, SF_DIST, SF_BOOL } sf_kind;
typedef enum { SU_NONE, SU_MEM, SU_TIME } sf_unit;
typedef struct summary_field {
    const char *key;
    sf_kind kind;
    sf_unit unit;
    size_t off; /* of a double (SF_NUM, SF_BOOL: NaN null, 1 true) or an rt_dist in rt_summary */
    int dec;
} summary_field;

#define SF(k, kind, u, member, dec) {k, kind, u, offsetof(rt_summary, member), dec}

static const summary_field process_fields[] = {
    SF("cpu", SF_NUM, SU_TIME, process_cpu_secs, 0),
    SF("cores", SF_DIST, SU_NONE, process_cores, 4),
    SF("pss", SF_DIST, SU_MEM, process_pss_mib, 0),
    SF("rss", SF_DIST, SU_MEM, process_rss_mib, 0),
    SF("gpu_usage", SF_DIST, SU_NONE, process_gpu_usage, 4),
    SF("gpu_vram", SF_DIST, SU_MEM, process_gpu_vram_mib, 0),
    SF("gpus_used", SF_NUM, SU_NONE, process_gpus_used, 0),
    SF("read_bytes", SF_NUM, SU_NONE, process_read_bytes, 0),
    SF("write_bytes", SF_NUM, SU_NONE, process_write_bytes, 0),
    SF("memory_peak", SF_NUM, SU_MEM, process_memory_peak_mib, 0),
    SF("rss_hwm", SF_NUM, SU_MEM, process_rss_hwm_mib, 0),
    SF("unreclaimable_peak", SF_NUM, SU_MEM, process_unreclaimable_peak_mib, 0),
    SF("gpu_vram_peak", SF_NUM, SU_MEM, process_gpu_vram_peak_mib, 0),
    SF("cancelled_write_bytes", SF_NUM, SU_NONE, process_cancelled_write_bytes, 0),
    SF("cgroup_exclusive", SF_BOOL, SU_NONE, process_cgroup_exclusive, 0),
    SF("left_behind", SF_NUM, SU_NONE, left_behind, 0),
    SF("vms_peak", SF_NUM, SU_MEM, process_vms_peak_mib, 0),
    SF("walk_age_max_secs", SF_NUM, SU_NONE, process_walk_age_max_secs, 3),
    SF("rss_hwm_tree", SF_NUM, SU_MEM, process_rss_hwm_tree_mib, 0),
    SF("unreclaimable_unsure", SF_NUM, SU_MEM, process_unreclaimable_unsure_mib, 0),
};

static const summary_field machine_fields[] = {
    SF("cpu_count", SF_NUM, SU_NONE, cpu_count, 0),
    SF("cores", SF_DIST, SU_NONE, cpu_cores, 4),
    SF("memory_used", SF_DIST, SU_MEM, memory_used_mib, 0),
    SF("memory_total", SF_NUM, SU_MEM, memory_total_mib, 0),
    SF("gpu_usage", SF_DIST, SU_NONE, gpu_usage, 4),
    SF("gpu_vram", SF_DIST, SU_MEM, gpu_vram_mib, 0),
    SF("gpu_count", SF_NUM, SU_NONE, gpu_count, 0),
    SF("gpu_vram_total", SF_NUM, SU_MEM, gpu_vram_total_mib, 0),
    SF("disk_read_bytes", SF_NUM, SU_NONE, disk_read_bytes, 0),
    SF("disk_write_bytes", SF_NUM, SU_NONE, disk_write_bytes, 0),
    SF("net_recv_bytes", SF_NUM, SU_NONE, net_recv_bytes, 0),
    SF("net_sent_bytes", SF_NUM, SU_NONE, net_sent_bytes, 0),
    SF("disk_space_used_peak_bytes", SF_NUM, SU_NONE, disk_space_used_peak_bytes, 0),
    SF("disk_space_total_bytes", SF_NUM, SU_NONE, disk_space_total_bytes, 0),
};

/* "name":{members of fields, in order}, then a comma (the caller closes the run). */
static void fields_object(rt_ob *o, const char *name, const rt_summary *s, const summary_field *f, size_t n,
                          const unit *mem, const unit *tm)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    const char *base = (const char *)s;
    for (size_t i = 0; i < n; i++) {
        const unit *u = f[i].unit == SU_MEM ? mem : f[i].unit == SU_TIME ? tm : NULL;
        if (f[i].kind == SF_DIST) {
            dist(o, f[i].key, u, (const rt_dist *)(const void *)(base + f[i].off), f[i].dec);
            continue;
        }
        double v;
        memcpy(&v, base + f[i].off, sizeof v);
        if (f[i].kind == SF_NUM) {
            num(o, f[i].key, u, v, f[i].dec);
        } else {
            key(o, f[i].key, NULL);
            rt_ob_lit(o, isnan(v) ? "null," : v == 1 ? "true," : "false,");
        }
    }
    o->len--; /* the last member's comma: overwritten by the brace */
    rt_ob_put(o, "},", 2);
}

static void process_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    if (!s->has_process) {
        key(o, "process", NULL);
        rt_ob_lit(o, "null,");
        return;
    }
    fields_object(o, "process", s, process_fields, sizeof process_fields / sizeof *process_fields, mem, tm);
}

/* Whether some record had a cgroup: any of its figures is known. */
static bool had_cgroup(const rt_summary *s)
{
    const double v[] = {s->oom_kills,   s->memory_limit_mib,      s->memory_high_mib,    s->cpu_quota_cores,
                        s->cpu_periods, s->cpu_throttled_periods, s->cpu_throttled_secs, s->pids_peak,
                        s->pids_limit};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isnan(v[i]))
            return true;
    return false;
}

/* ,"name": then "{" and true when present, else null and false (the caller then writes the
 * members and closes with close_object). */
static bool open_object(rt_ob *o, const char *name, bool present)
{
    rt_ob_put(o, ",", 1);
    key(o, name, NULL);
    rt_ob_lit(o, present ? "{" : "null");
    return present;
}

/* Closes an object opened with open_object over its last member's comma. */
static void close_object(rt_ob *o)
{
    o->len--;
    rt_ob_put(o, "}", 1);
}

/* ,"name":{"need<unit>":..,"source":"..","sampled":..}: a need (rt_need) of the run. */
static void need_part(rt_ob *o, const char *name, const rt_need *n, const unit *mem)
{
    open_object(o, name, true);
    num(o, "need", mem, n->mib, 0);
    str(o, "source", rt_need_source_name(n->source));
    key(o, "sampled", NULL);
    rt_ob_lit(o, n->sampled ? "true," : "false,");
    close_object(o);
}

/* "durations<t>":[1 core, 2 cores, ..], (table t's rows' predicted durations in order; null
 * without a table). */
static void durations(rt_ob *o, const rt_cores_table *t, const unit *tm)
{
    key(o, "durations", tm->suffix);
    if (!t) {
        rt_ob_lit(o, "null,");
        return;
    }
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < t->n; i++) {
        if (i)
            rt_ob_put(o, ",", 1);
        value(o, t->rows[i].duration_secs * tm->factor, tm->decimals);
    }
    rt_ob_put(o, "],", 2);
}

/* ,"cores":{"duration<t>":..,"cores_had":..,"peak_cores":..,"wait<t>":..,"wait_from":..,
 * "durations<t>":[1 core, 2 cores, ..]}: the run under other core counts (rt_cores_table, its
 * rows' durations in order), or null without one. */
static void cores_part(rt_ob *o, const rt_summary *s, const unit *tm)
{
    const rt_cores_table *t = s->cores;
    if (!open_object(o, "cores", t != NULL))
        return;
    num(o, "duration", tm, t->duration_secs, 0);
    num(o, "cores_had", NULL, t->cores_had, 3);
    num(o, "peak_cores", NULL, t->peak_cores, 4);
    num(o, "wait", tm, t->wait_secs, 0);
    str(o, "wait_from", t->wait_from);
    durations(o, t, tm);
    close_object(o);
}

/* ,"recommendation":{..} (rt_recommend of this run alone; null without a tracked tree) and
 * ,"notes":[{"kind":..,"text":..},..] (rt_summary_notes). */
static void answer_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    const rt_summary *runs[1] = {s};
    if (open_object(o, "recommendation", s->has_process && rt_recommend(runs, 1, &rec) == RT_OK)) {
        num(o, "cpu", NULL, (double)rec.cpu, 0);
        num(o, "memory", mem, rec.memory_mib == RT_NULL_I64 ? NAN : (double)rec.memory_mib, 0);
        num(o, "gpu", NULL, (double)rec.gpu, 0);
        num(o, "vram", mem, (double)rec.vram_mib, 0);
        num(o, "headroom_pct", NULL, rec.headroom_pct, 1);
        /* 0.18: the cores' time */
        str(o, "cpu_basis", rec.cpu_basis);
        num(o, "max_slowdown_pct", NULL, rec.max_slowdown_pct, 4);
        num(o, "cpu_duration", tm, rec.cpu_duration_secs, 0);
        num(o, "cpu_fewer", NULL, (double)rec.cpu_fewer, 0);
        num(o, "cpu_fewer_duration", tm, rec.cpu_fewer_duration_secs, 0);
        num(o, "time_limit", tm, rec.time_limit_secs, 0);
        str(o, "cpu_phase", rec.cpu_phase[0] ? rec.cpu_phase : NULL);
        num(o, "cpu_phase_fewer", tm, rec.cpu_phase_fewer_secs, 0);
        char words[300];
        str(o, "time_words", rt_recommendation_time_words(&rec, words, sizeof words) > 0 ? words : NULL);
        close_object(o);
    }
    rt_note notes[RT_NOTES_MAX];
    size_t n = rt_summary_notes(s, NULL, notes, RT_NOTES_MAX);
    rt_ob_lit(o, ",\"notes\":[");
    for (size_t i = 0; i < n; i++) {
        rt_ob_lit(o, i ? ",{" : "{");
        str(o, "kind", rt_note_kind_name(notes[i].kind));
        str(o, "text", notes[i].text);
        close_object(o);
    }
    rt_ob_put(o, "]", 1);
}

/* ,"cgroup":{...} (the limits and what they did over the run), or null without a cgroup. */
static void cgroup_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    if (!open_object(o, "cgroup", had_cgroup(s)))
        return;
    double pct = s->cpu_periods > 0 ? 100.0 * s->cpu_throttled_periods / s->cpu_periods : NAN;
    num(o, "oom_kills", NULL, s->oom_kills, 0);
    num(o, "oom_kill_secs", NULL, s->oom_kill_secs, 3);
    num(o, "memory_limit", mem, s->memory_limit_mib, 0);
    num(o, "memory_high", mem, s->memory_high_mib, 0);
    num(o, "cpu_quota_cores", NULL, s->cpu_quota_cores, 3);
    num(o, "cpu_periods", NULL, s->cpu_periods, 0);
    num(o, "cpu_throttled_periods", NULL, s->cpu_throttled_periods, 0);
    num(o, "cpu_throttled_pct", NULL, pct, 2);
    num(o, "cpu_throttled", tm, s->cpu_throttled_secs, 0);
    num(o, "pids_peak", NULL, s->pids_peak, 0);
    num(o, "pids_limit", NULL, s->pids_limit, 0);
    close_object(o);
}

/* ,"pressure":{...} (each a time-weighted distribution, percent), or null when no record
 * had pressure. */
static void pressure_part(rt_ob *o, const rt_summary *s)
{
    const struct {
        const char *name;
        const rt_dist *d;
    } p[] = {{"cpu_some_pct", &s->pressure_cpu_some_pct},
             {"memory_some_pct", &s->pressure_memory_some_pct},
             {"memory_full_pct", &s->pressure_memory_full_pct},
             {"io_some_pct", &s->pressure_io_some_pct},
             {"io_full_pct", &s->pressure_io_full_pct}};
    bool any = false;
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        any |= !isnan(p[i].d->mean);
    if (!open_object(o, "pressure", any))
        return;
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        dist(o, p[i].name, NULL, p[i].d, 2);
    close_object(o);
}

/* ---- gpu_tracker's view (rt_usage) in the shape of its to_json() ---------------------- */

/* "name":v*u->factor with u's decimals (null for NaN), then a comma: no suffix (gpu_tracker
 * names the unit in a "unit" member instead). */
static void gt_num(rt_ob *o, const char *name, const unit *u, double v)
{
    key(o, name, NULL);
    value(o, u ? v * u->factor : v, u ? u->decimals : 3);
    rt_ob_put(o, ",", 1);
}

/* "name":v as gpu_tracker has counts: an integer when it is whole (null for NaN), then a
 * comma. */
static void gt_count(rt_ob *o, const char *name, double v)
{
    key(o, name, NULL);
    value(o, v, isfinite(v) && v != floor(v) ? 3 : 0);
    rt_ob_put(o, ",", 1);
}

/* "name":{"total_rss":..,"private_rss":..,"shared_rss":..}, */
static void gt_rss(rt_ob *o, const char *name, const unit *u, const rt_usage_rss *r)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    gt_num(o, "total_rss", u, r->total_mib);
    gt_num(o, "private_rss", u, r->private_mib);
    gt_num(o, "shared_rss", u, r->shared_mib);
    o->len--;
    rt_ob_put(o, "},", 2);
}

/* "name":{"max_sum_percent":..,...}, */
static void gt_pct(rt_ob *o, const char *name, const rt_usage_pct *p)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    gt_num(o, "max_sum_percent", NULL, p->max_sum_pct);
    gt_num(o, "max_hardware_percent", NULL, p->max_hardware_pct);
    gt_num(o, "mean_sum_percent", NULL, p->mean_sum_pct);
    gt_num(o, "mean_hardware_percent", NULL, p->mean_hardware_pct);
    o->len--;
    rt_ob_put(o, "},", 2);
}

static const char *const part_names[3] = {"main", "descendants", "combined"};

/* "name":{"unit":..,"system_capacity":..,"system":..,"main":..,..}, of RAM (each part an
 * RSS object) or of GPU RAM (each part a number), as peaks or means. */
static void gt_ram(rt_ob *o, const char *name, const unit *u, const rt_usage *g, bool peak, bool gpu)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    str(o, "unit", u->name);
    gt_num(o, "system_capacity", u, gpu ? g->gpu_ram_capacity_mib : g->ram_capacity_mib);
    double sys_peak = gpu ? g->gpu_ram_system_peak_mib : g->ram_system_peak_mib;
    double sys_mean = gpu ? g->gpu_ram_system_mean_mib : g->ram_system_mean_mib;
    gt_num(o, "system", u, peak ? sys_peak : sys_mean);
    for (int i = 0; i < 3; i++) {
        if (gpu)
            gt_num(o, part_names[i], u, peak ? g->gpu_ram_peak_mib[i] : g->gpu_ram_mean_mib[i]);
        else
            gt_rss(o, part_names[i], u, peak ? &g->ram_peak[i] : &g->ram_mean[i]);
    }
    o->len--;
    rt_ob_put(o, "},", 2);
}

/* ,"gpu_tracker":{...}: the run as gpu_tracker's to_json() has it (max_ram, max_gpu_ram,
 * cpu_utilization, gpu_utilization, compute_time), plus mean_ram and mean_gpu_ram; memory in
 * mem (gigabytes when the caller named none, gpu_tracker's default), time in tm (hours when
 * none). null without a tracked tree. */
static void gpu_tracker_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    const rt_usage *g = s->usage;
    if (!open_object(o, "gpu_tracker", s->has_process && g))
        return;
    const unit *u = mem->name ? mem : RT_GT_DEFAULT_MEMORY, *t = tm->name ? tm : RT_GT_DEFAULT_TIME;
    gt_ram(o, "max_ram", u, g, true, false);
    gt_ram(o, "mean_ram", u, g, false, false);
    gt_ram(o, "max_gpu_ram", u, g, true, true);
    gt_ram(o, "mean_gpu_ram", u, g, false, true);
    key(o, "cpu_utilization", NULL);
    rt_ob_put(o, "{", 1);
    gt_count(o, "system_core_count", g->system_core_count);
    gt_count(o, "n_expected_cores", g->expected_cores);
    gt_pct(o, "system", &g->cpu_system);
    for (int i = 0; i < 3; i++)
        gt_pct(o, part_names[i], &g->cpu[i]);
    gt_count(o, "main_n_threads", g->threads_peak[0]);
    gt_count(o, "descendants_n_threads", g->threads_peak[1]);
    gt_count(o, "combined_n_threads", g->threads_peak[2]);
    o->len--;
    rt_ob_put(o, "},", 2);
    key(o, "gpu_utilization", NULL);
    rt_ob_put(o, "{", 1);
    gt_count(o, "system_gpu_count", g->system_gpu_count);
    gt_count(o, "n_expected_gpus", g->expected_gpus);
    gt_pct(o, "gpu_percentages", &g->gpu);
    o->len--;
    rt_ob_put(o, "},", 2);
    key(o, "compute_time", NULL);
    rt_ob_put(o, "{", 1);
    str(o, "unit", t->name);
    gt_num(o, "time", t, g->duration_secs);
    o->len--;
    rt_ob_put(o, "},", 2);
    close_object(o);
}

/* "name<suffix>":{"mean":..,"peak":..}, then a comma; converted by u as num. */
static void mean_peak(rt_ob *o, const char *name, const unit *u, double mean, double peak, int dec)
{
    key(o, name, u ? u->suffix : NULL);
    rt_ob_put(o, "{", 1);
    num(o, "mean", NULL, u ? mean * u->factor : mean, u ? u->decimals : dec);
    num(o, "peak", NULL, u ? peak * u->factor : peak, u ? u->decimals : dec);
    o->len--;
    rt_ob_put(o, "},", 2);
}

/* ,"phases":[{..},..] (one object per name, in the order each first started; rt_phase_summary)
 * and ,"phase_marks":{..} (the counts of marks): both null when the run had no mark. */
static void phases_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    const rt_phase_counts *c = s->phase_counts;
    rt_ob_lit(o, ",\"phases\":");
    if (!c) {
        rt_ob_lit(o, "null,\"phase_marks\":null");
        return;
    }
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < s->phase_count; i++) {
        const rt_phase_summary *p = s->phases[i];
        rt_ob_lit(o, i ? ",{" : "{");
        str(o, "name", p->name);
        num(o, "calls", NULL, (double)p->calls, 0);
        num(o, "unterminated", NULL, (double)p->unterminated, 0);
        num(o, "duration", tm, p->duration_secs, 0);
        key(o, "call", tm->suffix);
        rt_ob_put(o, "{", 1);
        num(o, "min", NULL, p->call_min_secs * tm->factor, tm->decimals);
        num(o, "max", NULL, p->call_max_secs * tm->factor, tm->decimals);
        num(o, "mean", NULL, p->call_mean_secs * tm->factor, tm->decimals);
        o->len--;
        rt_ob_put(o, "},", 2);
        num(o, "samples", NULL, (double)p->samples, 0);
        num(o, "empty_calls", NULL, (double)p->empty_calls, 0);
        num(o, "cpu", tm, p->cpu_secs, 0);
        key(o, "cpu_exact", NULL);
        rt_ob_lit(o, p->cpu_exact ? "true," : "false,");
        mean_peak(o, "cores", NULL, p->cores_mean, p->cores_peak, 4);
        num(o, "rss_peak", mem, p->rss_peak_mib, 0);
        num(o, "pss_peak", mem, p->pss_peak_mib, 0);
        num(o, "memory_peak", mem, p->memory_peak_mib, 0);
        o->len--; /* need_part writes its own leading comma */
        need_part(o, "memory_need", &p->memory_need, mem);
        rt_ob_put(o, ",", 1);
        mean_peak(o, "gpu_usage", NULL, p->gpu_usage_mean, p->gpu_usage_peak, 4);
        mean_peak(o, "gpu_vram", mem, p->gpu_vram_mean_mib, p->gpu_vram_peak_mib, 0);
        num(o, "read_bytes", NULL, p->read_bytes, 0);
        num(o, "write_bytes", NULL, p->write_bytes, 0);
        num(o, "first_start_secs", NULL, p->first_start_secs, 3);
        /* 0.18: the phase under 1, 2, ... cores, and the fewest within 10% of its own */
        int64_t asked = rt_cores_fewest(p->cores, s->max_slowdown_pct >= 0 ? s->max_slowdown_pct : 10);
        num(o, "cores_asked", NULL, asked > 0 ? (double)asked : NAN, 0);
        durations(o, p->cores, tm);
        close_object(o);
    }
    rt_ob_lit(o, "],\"phase_marks\":{");
    const struct {
        const char *name;
        uint64_t n;
    } k[] = {{"accepted", c->accepted}, {"unknown_stop", c->unknown_stop}, {"unterminated", c->unterminated},
             {"too_long", c->too_long}, {"malformed", c->malformed},       {"flood", c->flood},
             {"dropped", c->dropped},   {"too_many_names", c->too_many_names}, {"too_deep", c->too_deep},
             {"refused", c->refused}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        key(o, k[i].name, NULL);
        rt_ob_u64(o, k[i].n);
        rt_ob_put(o, ",", 1);
    }
    close_object(o);
}

/* ,"energy":{..}: the run's energy with its methods, power, the idle floor, the notes, the
 * GPUs' throttle time and "carbon" ({..}, or null when the grid's intensity is unknown); null
 * when the run had no energy figure, no note and no GPU throttle time. */
static void energy_part(rt_ob *o, const rt_summary *s, const unit *tm)
{
    bool any = s->energy_method || s->process_energy_method || s->energy_model || s->energy_missing ||
               s->gpu_power_throttled_secs > 0 || s->gpu_thermal_throttled_secs > 0;
    if (!open_object(o, "energy", any))
        return;
    num(o, "joules", NULL, s->energy_joules, 3);
    str(o, "method", s->energy_method);
    num(o, "process_joules", NULL, s->process_energy_joules, 3);
    str(o, "process_method", s->process_energy_method);
    dist(o, "power_watts", NULL, &s->power_watts, 3);
    dist(o, "process_power_watts", NULL, &s->process_power_watts, 3);
    num(o, "idle_power_watts", NULL, s->idle_power_watts, 3);
    str(o, "model", s->energy_model);
    str(o, "missing", s->energy_missing);
    num(o, "gpu_power_throttled", tm, s->gpu_power_throttled_secs, 0);
    num(o, "gpu_thermal_throttled", tm, s->gpu_thermal_throttled_secs, 0);
    const rt_grid *g = s->grid;
    key(o, "carbon", NULL);
    if (!g || !(g->g_per_kwh > 0)) {
        rt_ob_lit(o, "null,");
    } else {
        rt_ob_put(o, "{", 1);
        num(o, "co2e_grams", NULL, s->co2e_grams, 6); /* micrograms: a short job's carbon is not 0 */
        num(o, "process_co2e_grams", NULL, s->process_co2e_grams, 6);
        num(o, "g_per_kwh", NULL, g->g_per_kwh, 1);
        str(o, "zone", g->zone);
        str(o, "name", g->name);
        str(o, "source", g->source);
        num(o, "year", NULL, g->year > 0 ? (double)g->year : NAN, 0);
        o->len--;
        rt_ob_put(o, "},", 2);
    }
    close_object(o);
}

/* ,"efficiency":{..}: what the job was given (the request, else its cgroup limits, else a
 * runner's machine) and how much of it it used, as seff counts; null when nothing said what
 * the job was given. */
static void efficiency_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    bool any = s->request || s->requested_cpu_from || s->requested_memory_from || s->requested_gpus_from ||
               s->time_limit_from;
    if (!open_object(o, "efficiency", any))
        return;
    str(o, "place", s->request ? s->request->place : NULL);
    num(o, "cpu_pct", NULL, s->cpu_efficiency_pct, 2);
    num(o, "memory_pct", NULL, s->memory_efficiency_pct, 2);
    num(o, "gpu_pct", NULL, s->gpu_efficiency_pct, 2);
    num(o, "time_limit_pct", NULL, s->time_limit_used_pct, 2);
    num(o, "requested_cpu_cores", NULL, s->requested_cpu_cores, 4);
    str(o, "requested_cpu_from", s->requested_cpu_from);
    num(o, "requested_memory", mem, s->requested_memory_mib, 0);
    str(o, "requested_memory_from", s->requested_memory_from);
    num(o, "requested_gpus", NULL, s->requested_gpus, 0);
    str(o, "requested_gpus_from", s->requested_gpus_from);
    num(o, "time_limit", tm, s->time_limit_secs, 0);
    str(o, "time_limit_from", s->time_limit_from);
    double start = s->request && s->request->job_start_secs > 0 ? s->request->job_start_secs : NAN;
    num(o, "job_start_secs", NULL, start, 3);
    close_object(o);
}

/* ,"member":{..}: the run's place in a job of several nodes (a number null when not
 * said); null when the run names no job. */
static void member_part(rt_ob *o, const rt_summary *s)
{
    const rt_member *m = s->member;
    if (!open_object(o, "member", m != NULL))
        return;
    rt_json_member_fields(o, m); /* the JSON line's members, as the line writes them */
    close_object(o);
}

static void machine_part(rt_ob *o, const rt_summary *s, const unit *mem)
{
    fields_object(o, "machine", s, machine_fields, sizeof machine_fields / sizeof *machine_fields, mem, NULL);
    o->len--; /* the last object of all: no comma after it */
}

/* Returns the length the object needs (its newline included, the NUL not), like snprintf;
 * buf (cap bytes) holds as much as fits, NUL-terminated when cap > 0. 0 for a NULL s or an
 * unknown unit (buf then holds ""). */
size_t rt_format_summary(const rt_summary *s, const char *memory_unit, const char *time_unit, char *buf, size_t cap)
{
    const unit *mem = find_unit(rt_gt_memory_units, RT_GT_MEMORY_UNITS, &mib, memory_unit);
    const unit *tm = find_unit(rt_gt_time_units, RT_GT_TIME_UNITS, &secs, time_unit);
    if (cap)
        buf[0] = '\0';
    if (!s || !mem || !tm)
        return 0;
    rt_ob o = {.buf = buf, .cap = cap};
    rt_ob_lit(&o, "{\"samples\":");
    rt_ob_u64(&o, s->samples);
    rt_ob_put(&o, ",", 1);
    num(&o, "start_secs", NULL, s->start_secs, 3);
    num(&o, "end_secs", NULL, s->end_secs, 3);
    num(&o, "duration", tm, s->duration_secs, 0);
    str(&o, "job_name", s->job_name);
    str(&o, "allocation", s->allocation);
    process_part(&o, s, mem, tm);
    machine_part(&o, s, mem);
    cgroup_part(&o, s, mem, tm);
    pressure_part(&o, s);
    need_part(&o, "memory_need", &s->memory_need, mem);
    need_part(&o, "vram_need", &s->vram_need, mem);
    answer_part(&o, s, mem, tm);
    cores_part(&o, s, tm);
    gpu_tracker_part(&o, s, mem, tm);
    phases_part(&o, s, mem, tm);
    energy_part(&o, s, tm);
    efficiency_part(&o, s, mem, tm);
    member_part(&o, s);
    rt_ob_lit(&o, "}\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

rt_error rt_format_summary_json(const rt_summary *s, const char *memory_unit, const char *time_unit, char *buf,
                                size_t cap, size_t *len)
{
    rt_err_clear();
    if (len)
        *len = 0;
    if (cap)
        buf[0] = '\0';
    if (!find_unit(rt_gt_memory_units, RT_GT_MEMORY_UNITS, &mib, memory_unit)) {
        rt_err_set("unknown memory unit \"%s\" (bytes, kilobytes, megabytes, gigabytes, terabytes)", memory_unit);
        return RT_ERR_INVALID;
    }
    if (!find_unit(rt_gt_time_units, RT_GT_TIME_UNITS, &secs, time_unit)) {
        rt_err_set("unknown time unit \"%s\" (seconds, minutes, hours, days)", time_unit);
        return RT_ERR_INVALID;
    }
    if (!s) {
        rt_err_set("rt_format_summary_json: the summary is NULL");
        return RT_ERR_INVALID;
    }
    size_t n = rt_format_summary(s, memory_unit, time_unit, buf, cap);
    if (len)
        *len = n;
    return RT_OK;
}
