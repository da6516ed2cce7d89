/* prom_format.c - one sample as the body of /metrics: the Prometheus text format 0.0.4 or
 * OpenMetrics 1.0.0 (rt_format_prometheus), and the family writer both formats share
 * (prom_text.h). A pure function of its arguments: nothing is cached across calls. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../common/utf8.h"
#include "../core/schema.h"
#include "phase_label.h"
#include "prom_text.h"

/* ---- the family writer (prom_text.h) ------------------------------------------------------ */

void rt_prom_family(rt_prom_out *f, const char *name, rt_prom_kind kind, const char *help)
{
    f->name = name;
    f->kind = kind;
    f->help = help;
    f->head_done = false;
}

void rt_prom_label_value(rt_ob *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != '\\' && p[j] != '"' && p[j] != '\n' && p[j] < 0x80)
            j++;
        rt_ob_put(o, s + i, j - i);
        if (j >= n)
            break;
        i = j;
        unsigned char c = p[i];
        if (c == '\\' || c == '"' || c == '\n') {
            rt_ob_lit(o, c == '\\' ? "\\\\" : c == '"' ? "\\\"" : "\\n");
            i++;
            continue;
        }
        size_t l = rt_utf8_len(p + i, n - i);
        if (l == 0) {
            rt_ob_lit(o, "\xef\xbf\xbd"); /* U+FFFD: Prometheus refuses a scrape that is not UTF-8 */
            i++;
        } else {
            rt_ob_put(o, s + i, l);
            i += l;
        }
    }
}

/* What follows a family's name in its series' names, by kind. */
static const char *const kind_suffix[] = {"", "_total", "_info"};

/* The family's name as its HELP and TYPE lines give it, and its type's word. */
static void family_head(rt_prom_out *f)
{
    const char *sfx = f->openmetrics ? "" : kind_suffix[f->kind];
    const char *type = f->kind == RT_PROM_COUNTER ? "counter"
                       : f->kind == RT_PROM_INFO && f->openmetrics ? "info"
                                                                    : "gauge";
    for (int line = 0; line < 2; line++) {
        rt_ob_lit(f->o, line == 0 ? "# HELP " : "# TYPE ");
        rt_ob_lit(f->o, f->name);
        rt_ob_lit(f->o, sfx);
        rt_ob_put(f->o, " ", 1);
        rt_ob_lit(f->o, line == 0 ? f->help : type);
        rt_ob_put(f->o, "\n", 1);
    }
    f->head_done = true;
}

/* One label: key="value", preceded by a comma unless it is the first. */
static void label(rt_ob *o, bool *first, const char *key, const char *value)
{
    if (!*first)
        rt_ob_put(o, ",", 1);
    *first = false;
    rt_ob_lit(o, key);
    rt_ob_put(o, "=\"", 2);
    rt_prom_label_value(o, value ? value : "");
    rt_ob_put(o, "\"", 1);
}

/* The family's head (once), then a series' name and labels and the space before its value. */
static void series_start(rt_prom_out *f, const rt_kv *extra, size_t n)
{
    if (!f->head_done)
        family_head(f);
    rt_ob *o = f->o;
    rt_ob_lit(o, f->name);
    rt_ob_lit(o, kind_suffix[f->kind]);
    size_t nl = f->labels ? f->labels->count : 0;
    if (nl + n > 0) {
        bool first = true;
        rt_ob_put(o, "{", 1);
        for (size_t i = 0; i < nl; i++)
            label(o, &first, f->labels->kv[i].key, f->labels->kv[i].value);
        for (size_t i = 0; i < n; i++)
            label(o, &first, extra[i].key, extra[i].value);
        rt_ob_put(o, "}", 1);
    }
    rt_ob_put(o, " ", 1);
}

void rt_prom_num(rt_prom_out *f, const rt_kv *extra, size_t n, double v, int dec)
{
    if (!isfinite(v))
        return;
    series_start(f, extra, n);
    rt_ob_fixed(f->o, v, dec, "NaN");
    rt_ob_put(f->o, "\n", 1);
}

/* An integer's series: its sign (a minus when negative), then its magnitude. */
static void int_series(rt_prom_out *f, const rt_kv *extra, size_t n, bool negative, uint64_t magnitude)
{
    series_start(f, extra, n);
    if (negative)
        rt_ob_put(f->o, "-", 1);
    rt_ob_u64(f->o, magnitude);
    rt_ob_put(f->o, "\n", 1);
}

void rt_prom_u64(rt_prom_out *f, const rt_kv *extra, size_t n, uint64_t v)
{
    if (v != RT_NULL_U64)
        int_series(f, extra, n, false, v);
}

void rt_prom_i64(rt_prom_out *f, const rt_kv *extra, size_t n, int64_t v)
{
    if (v != RT_NULL_I64)
        int_series(f, extra, n, v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

/* ---- figures read from the structs through the schema's tables (core/schema.h) ----------- */

#define G RT_PROM_GAUGE
#define C RT_PROM_COUNTER

/* Seconds to the microsecond, ratios and cores to 10^-6. */
enum { DEC_FINE = 6 };

/* The series of field fd of the struct at base: MiB as bytes, percent as a ratio 0..1, a flag
 * as 1/0, microseconds as seconds, other figures as they are. */
static void put_field(rt_prom_out *f, const rt_kv *extra, size_t n, const void *base, const rt_field *fd)
{
    const char *at = (const char *)base + fd->off;
    switch (fd->type) {
    case RT_FIELD_DOUBLE: {
        double v = *(const double *)at;
        if (fd->unit == U_MIB)
            rt_prom_num(f, extra, n, v * 1048576.0, 0);
        else if (fd->unit == U_PCT)
            rt_prom_num(f, extra, n, v / 100.0, DEC_FINE);
        else
            rt_prom_num(f, extra, n, v, fd->prom.dec);
        break;
    }
    case RT_FIELD_U64: {
        uint64_t v = *(const uint64_t *)at;
        if (fd->unit == U_USEC) {
            if (v != RT_NULL_U64)
                rt_prom_num(f, extra, n, (double)v / 1e6, DEC_FINE);
        } else {
            rt_prom_u64(f, extra, n, v);
        }
        break;
    }
    case RT_FIELD_I64: rt_prom_i64(f, extra, n, *(const int64_t *)at); break;
    case RT_FIELD_FLAG: rt_prom_u64(f, extra, n, *(const int *)at != 0); break;
    case RT_FIELD_STRING: break; /* strings are labels (the info families) */
    }
}

/* The label value naming item i of a list (a disk, an interface, a GPU): name_of's answer, or
 * the index when it has none (so that two unnamed items never make one series). */
typedef const char *(*name_fn)(const void *item);

/* Which items a struct's families cover, and how their series are told apart. */
typedef struct items {
    const void *const *at; /* count items (NULL ones are skipped) */
    size_t count;
    const char *key;          /* the label naming each item; NULL: none */
    name_fn name_of;          /* its value, from the item */
    const char *const *names; /* or, when set, names[i] */
    const char *phase;        /* the label phase="..." on every series; NULL: none */
    const char *key2;         /* a second label naming each item (NULL: none), its value names2[i] */
    const char *const *names2;
} items;

/* One item and no label. */
#define ONE(p) ((items){.at = (const void *const *)&(p), .count = 1})

/* The families of st whose places are in [from, to), in order, each with a series per item. */
static void put_families(rt_prom_out *f, const rt_fstruct *st, size_t from, size_t to, items it)
{
    size_t order[RT_SCHEMA_MAX_FIELDS];
    size_t k = rt_schema_prom_order(st, order);
    const char *family = NULL;
    for (size_t j = from; j < k && j < to; j++) {
        const rt_field *fd = &st->f[order[j]];
        if (!family || (family != fd->prom.name && strcmp(family, fd->prom.name) != 0))
            rt_prom_family(f, fd->prom.name, fd->prom.counter ? C : G, fd->prom.help ? fd->prom.help : fd->help);
        family = fd->prom.name;
        for (size_t i = 0; i < it.count; i++) {
            if (!it.at[i])
                continue;
            char idx[24];
            rt_kv kv[4];
            size_t n = 0;
            if (it.key) {
                kv[n] = (rt_kv){it.key, it.names ? it.names[i] : it.name_of(it.at[i])};
                if (!kv[n].value) {
                    snprintf(idx, sizeof idx, "%zu", i);
                    kv[n].value = idx;
                }
                n++;
            }
            if (it.key2)
                kv[n++] = (rt_kv){it.key2, it.names2[i]};
            if (fd->prom.label)
                kv[n++] = (rt_kv){fd->prom.label, fd->prom.value};
            if (it.phase)
                kv[n++] = (rt_kv){"phase", it.phase};
            put_field(f, kv, n, it.at[i], fd);
        }
    }
}

/* Every family of st. */
static void put_all(rt_prom_out *f, const rt_fstruct *st, items it)
{
    put_families(f, st, 0, RT_SCHEMA_MAX_FIELDS, it);
}

/* ---- the machine -------------------------------------------------------------------------- */

static const char *disk_name(const void *d)
{
    return ((const rt_disk *)d)->device;
}

static const char *iface_name(const void *n)
{
    return ((const rt_net_iface *)n)->interface;
}

/* The pressure counters of ps (machine or group): NAME_some/full_seconds_total{resource=...}. */
static void put_psi(rt_prom_out *f, const rt_psi *ps, const char *some_name, const char *full_name, const char *whose)
{
    const char *res[] = {"cpu", "memory", "io"};
    const rt_pressure *each[] = {&ps->cpu, &ps->memory, &ps->io};
    char help[160];
    for (int full = 0; full < 2; full++) {
        snprintf(help, sizeof help,
                 "Seconds in which %s tasks of %s waited for the resource (pressure stall information).",
                 full ? "all non-idle" : "some", whose);
        rt_prom_family(f, full ? full_name : some_name, C, help);
        for (size_t i = 0; i < RT_ARRAY_LEN(each); i++) {
            uint64_t us = full ? each[i]->full_total_usec : each[i]->some_total_usec;
            rt_kv kv = {"resource", res[i]};
            if (us != RT_NULL_U64)
                rt_prom_num(f, &kv, 1, (double)us / 1e6, DEC_FINE);
        }
    }
}

/* ---- GPUs --------------------------------------------------------------------------------- */

static const char *gpu_name(const void *g)
{
    const rt_gpu *gpu = g;
    return gpu->uuid ? gpu->uuid : gpu->host_id;
}

/* resource_tracker_gpu_info{gpu, name}: the GPUs' models. */
static void put_gpu_info(rt_prom_out *f, const rt_sample *s)
{
    rt_prom_family(f, "resource_tracker_gpu", RT_PROM_INFO, "The GPU's model (value 1).");
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (!g)
            continue;
        char idx[24];
        rt_kv kv[2] = {{"gpu", gpu_name(g)}, {"name", g->name}};
        if (!kv[0].value) {
            snprintf(idx, sizeof idx, "%zu", i);
            kv[0].value = idx;
        }
        rt_prom_u64(f, kv, g->name ? 2 : 1, 1);
    }
}

/* The MIG instances' families (0.19: their work, NVML GPM per GPU instance), a series each
 * labelled gpu (its GPU, as the gpu families name it) and gpu_instance (NVML's GPU instance id);
 * nothing without one. At most 8 instances a GPU (a GPU has 7), 64 in all. */
static void put_migs(rt_prom_out *f, const rt_sample *s)
{
    enum { MAX = 64 };
    const void *at[MAX];
    const char *gpu[MAX], *gi[MAX];
    char ids[MAX][24], idx[MAX][24];
    size_t n = 0;
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        for (size_t k = 0; g && g->mig && k < g->mig_count && k < 8 && n < MAX; k++) {
            if (!g->mig[k])
                continue;
            snprintf(idx[n], sizeof idx[n], "%zu", i);
            snprintf(ids[n], sizeof ids[n], "%lld", (long long)g->mig[k]->gpu_instance_id);
            at[n] = g->mig[k];
            gpu[n] = gpu_name(g) ? gpu_name(g) : idx[n];
            gi[n] = ids[n];
            n++;
        }
    }
    if (n)
        put_all(f, &rt_schema_gpu_mig,
                (items){.at = at, .count = n, .key = "gpu", .names = gpu, .key2 = "gpu_instance", .names2 = gi});
}

/* ---- energy ------------------------------------------------------------------------ */

/* Joules to the microjoule, watts to the milliwatt (as the JSON line). */
enum { DEC_J = 6, DEC_W = 3 };

/* The labels of domain d: domain, kind, source, method, gpu (a GPU's domain: its uuid, else its
 * PCI address, as the gpu families' label), then phase when set. Returns their count. */
static size_t domain_labels(const rt_energy_domain *d, const char *phase, rt_kv kv[6])
{
    size_t n = 0;
    kv[n++] = (rt_kv){"domain", d->name};
    kv[n++] = (rt_kv){"kind", d->kind};
    kv[n++] = (rt_kv){"source", d->source};
    kv[n++] = (rt_kv){"method", d->method};
    if (d->device)
        kv[n++] = (rt_kv){"gpu", d->device};
    if (phase)
        kv[n++] = (rt_kv){"phase", phase};
    return n;
}

/* One family over the domains: the figure at offset off of each (a double), with dec decimals;
 * tree: the tree's series (phase label). A domain without its method leaves no line. */
static void put_domains(rt_prom_out *f, const rt_energy *e, const char *name, rt_prom_kind kind, const char *help,
                        size_t off, int dec, const char *phase)
{
    rt_prom_family(f, name, kind, help);
    for (size_t i = 0; e->domain && i < e->domain_count; i++) {
        const rt_energy_domain *d = e->domain[i];
        if (!d || !d->name || !d->method)
            continue;
        rt_kv kv[6];
        size_t n = domain_labels(d, phase, kv);
        double v;
        memcpy(&v, (const char *)d + off, sizeof v);
        rt_prom_num(f, kv, n, v, dec);
    }
}

/* One figure labelled method="..." (and phase); no line without a method. */
static void put_method_num(rt_prom_out *f, const char *name, rt_prom_kind kind, const char *help, const char *method,
                           const char *phase, double v, int dec)
{
    rt_prom_family(f, name, kind, help);
    if (!method)
        return;
    rt_kv kv[2] = {{"method", method}, {"phase", phase}};
    rt_prom_num(f, kv, phase ? 2 : 1, v, dec);
}

/* The machine's energy: each domain's counter and power, then the machine's total, power and
 * idle floor. */
static void put_energy(rt_prom_out *f, const rt_energy *e)
{
    put_domains(f, e, "resource_tracker_energy_joules", C,
                "Energy of the domain since tracking began (package, core, uncore, dram, psys, platform, gpu, cpu; "
                "domains overlap: a package holds its core and uncore, a platform meter the whole machine).",
                offsetof(rt_energy_domain, energy_joules_total), DEC_J, NULL);
    put_domains(f, e, "resource_tracker_power_watts", G, "Mean power of the domain over the last interval.",
                offsetof(rt_energy_domain, power_watts), DEC_W, NULL);
    put_method_num(f, "resource_tracker_machine_energy_joules", C,
                   "Energy of the machine since tracking began: a platform meter, else its packages, DRAM and GPUs "
                   "(method: the least exact of them).",
                   e->method, NULL, e->energy_joules_total, DEC_J);
    put_method_num(f, "resource_tracker_machine_power_watts", G, "Mean power of the machine over the last interval.",
                   e->method, NULL, e->power_watts, DEC_W);
    put_method_num(f, "resource_tracker_machine_idle_power_watts", G,
                   "The machine's floor: the least power of an interval so far (the model's idle when estimated).",
                   e->method, NULL, e->idle_power_watts, DEC_W);
}

/* The tracked tree's energy: its total and power, then its part of each domain. */
static void put_process_energy(rt_prom_out *f, const rt_energy *e, const char *phase)
{
    put_method_num(f, "resource_tracker_process_energy_joules", C,
                   "The tracked tree's energy since tracking began: its share of each domain, summed.",
                   e->process_method, phase, e->process_energy_joules_total, DEC_J);
    put_method_num(f, "resource_tracker_process_power_watts", G,
                   "The tracked tree's mean power over the last interval.", e->process_method, phase,
                   e->process_power_watts, DEC_W);
    put_domains(f, e, "resource_tracker_process_domain_energy_joules", C,
                "The tracked tree's part of the domain's energy since tracking began (its share of the busy CPU "
                "time for CPU domains, of the GPU for a GPU's).",
                offsetof(rt_energy_domain, process_energy_joules_total), DEC_J, phase);
}

/* ---- the tracked tree and its group ------------------------------------------------------- */

/* The tree's parts (rt_process_part), a series each labelled part="main|descendants|combined"
 * (and phase="..." while one is open). */
static void put_parts(rt_prom_out *f, const rt_process *p, const char *phase)
{
    static const char *const names[3] = {"main", "descendants", "combined"};
    const rt_process_part *parts[3] = {p->main, p->descendants, p->combined};
    put_all(f, &rt_schema_part,
            (items){.at = (const void *const *)parts, .count = 3, .key = "part", .names = names, .phase = phase});
}

/* The group's info (path, version, own, exclusive), figures and pressure. */
static void put_cgroup(rt_prom_out *f, const rt_cgroup *g)
{
    rt_prom_family(f, "resource_tracker_cgroup", RT_PROM_INFO,
                   "The control group the figures resource_tracker_cgroup_* come from (value 1).");
    rt_kv kv[4] = {{"cgroup", g->path}, {"version", g->version}, {"own", g->own ? "1" : "0"},
                   {"exclusive", g->exclusive ? "1" : "0"}};
    rt_prom_u64(f, kv, 4, 1);
    put_all(f, &rt_schema_cgroup, ONE(g));
    put_psi(f, &g->pressure, "resource_tracker_cgroup_pressure_some_seconds",
            "resource_tracker_cgroup_pressure_full_seconds", "the group");
}

/* ---- the whole body ----------------------------------------------------------------------- */

/* resource_tracker_info{version, host, cloud_*, instance_type} 1. */
static void put_info(rt_prom_out *f, const rt_host *host, const rt_cloud *cloud)
{
    rt_kv kv[6];
    size_t n = 0;
    kv[n++] = (rt_kv){"version", RT_VERSION};
    const char *vals[5] = {host ? host->hostname : NULL, cloud ? cloud->vendor_id : NULL,
                           cloud ? cloud->region_id : NULL, cloud ? cloud->zone_id : NULL,
                           cloud ? cloud->instance_type : NULL};
    const char *keys[5] = {"host", "cloud_vendor", "cloud_region", "cloud_zone", "instance_type"};
    for (size_t i = 0; i < 5; i++)
        if (vals[i])
            kv[n++] = (rt_kv){keys[i], vals[i]};
    rt_prom_family(f, "resource_tracker", RT_PROM_INFO,
                   "The tracker's version and the host and cloud it runs on (value 1).");
    rt_prom_u64(f, kv, n, 1);
}

/* The sample's families by place in its table: its time and interval, then (after the
 * machine's disks and interfaces) the summed filesystem space. */
enum { SAMPLE_TIME_END = 2 };

/* Everything of one sample, after the info metric; the tree's series labelled phase="..." when
 * phase is set. */
/* ---- what the job was given ------------------------------------------------------- */

/* One figure of the request labelled place and from; no line when it was not said. */
static void put_requested(rt_prom_out *f, const char *name, const char *help, const rt_request *r, const char *from,
                          double v, int dec)
{
    rt_prom_family(f, name, G, help);
    if (!from)
        return;
    rt_kv kv[2] = {{"from", from}, {"place", r->place}};
    rt_prom_num(f, kv, r->place ? 2 : 1, v, dec);
}

/* What the job was given where it runs: the efficiency is a query away, e.g.
 * rate(resource_tracker_process_cpu_seconds_total[5m]) / resource_tracker_requested_cpu_cores. */
static void put_request(rt_prom_out *f, const rt_request *r)
{
    put_requested(f, "resource_tracker_requested_cpu_cores", "Cores the job was given where it runs.", r, r->cpu_from,
                  r->cpu_cores, DEC_FINE);
    put_requested(f, "resource_tracker_requested_memory_bytes", "Memory the job was given where it runs.", r,
                  r->memory_from, r->memory_mib * 1048576.0, 0);
    put_requested(f, "resource_tracker_requested_gpus", "GPUs the job was given where it runs.", r, r->gpus_from,
                  r->gpus, 0);
    put_requested(f, "resource_tracker_time_limit_seconds", "The job's wall-time limit where it runs.", r,
                  r->time_limit_from, r->time_limit_secs, 3);
    put_requested(f, "resource_tracker_job_start_timestamp_seconds",
                  "Unix time the job began where it runs (its time limit counts from it).", r,
                  r->job_start_secs > 0 && r->time_limit_from ? r->time_limit_from : NULL, r->job_start_secs, 3);
}

static void put_sample(rt_prom_out *f, const rt_sample *s, const char *phase)
{
    put_families(f, &rt_schema_sample, 0, SAMPLE_TIME_END, ONE(s));
    if (s->cpu)
        put_all(f, &rt_schema_cpu, ONE(s->cpu));
    if (s->memory)
        put_all(f, &rt_schema_memory, ONE(s->memory));
    put_all(f, &rt_schema_disk,
            (items){.at = (const void *const *)s->disk, .count = s->disk_count, .key = "device", .name_of = disk_name});
    put_all(f, &rt_schema_net_iface, (items){.at = (const void *const *)s->network, .count = s->network_count,
                                             .key = "interface", .name_of = iface_name});
    put_families(f, &rt_schema_sample, SAMPLE_TIME_END, RT_SCHEMA_MAX_FIELDS, ONE(s));
    if (s->pressure)
        put_psi(f, s->pressure, "resource_tracker_pressure_some_seconds", "resource_tracker_pressure_full_seconds",
                "the machine");
    if (s->gpu_count) {
        put_gpu_info(f, s);
        put_all(f, &rt_schema_gpu,
                (items){.at = (const void *const *)s->gpu, .count = s->gpu_count, .key = "gpu", .name_of = gpu_name});
        put_migs(f, s);
    }
    if (s->energy)
        put_energy(f, s->energy);
    if (s->process) {
        items tree = ONE(s->process);
        tree.phase = phase;
        put_all(f, &rt_schema_process, tree);
        put_parts(f, s->process, phase);
        if (s->energy)
            put_process_energy(f, s->energy, phase);
    }
    const rt_cgroup *g = s->process ? s->process->cgroup : s->cgroup;
    if (g)
        put_cgroup(f, g);
    if (s->request)
        put_request(f, s->request);
}

/* Whether [s, s + n) ends with the NUL-terminated sfx. */
static bool ends_with(const char *s, size_t n, const char *sfx)
{
    size_t k = strlen(sfx);
    return n >= k && memcmp(s + n - k, sfx, k) == 0;
}

void rt_prom_openmetrics_of(const char *text, size_t len, rt_ob *o)
{
    size_t i = 0;
    while (i < len) {
        const char *line = text + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) : len - i;
        i += n + (nl ? 1 : 0);
        bool help = n > 7 && memcmp(line, "# HELP ", 7) == 0, type = n > 7 && memcmp(line, "# TYPE ", 7) == 0;
        if (!help && !type) {
            rt_ob_put(o, line, n);
            rt_ob_put(o, "\n", 1);
            continue;
        }
        const char *name = line + 7;
        const char *sp = memchr(name, ' ', n - 7);
        size_t nlen = sp ? (size_t)(sp - name) : n - 7;
        /* the family's type: this line's word, or for HELP the TYPE line after it */
        const char *tl = type ? line : text + i;
        size_t tn = type ? n : (memchr(tl, '\n', len - i) ? (size_t)((const char *)memchr(tl, '\n', len - i) - tl)
                                                          : len - i);
        bool counter = tn >= 8 && ends_with(tl, tn, " counter"), gauge = tn >= 6 && ends_with(tl, tn, " gauge");
        bool is_info = gauge && ends_with(name, nlen, "_info");
        size_t keep = counter && ends_with(name, nlen, "_total") ? nlen - 6 : is_info ? nlen - 5 : nlen;
        rt_ob_put(o, line, 7 + keep);
        if (type && is_info)
            rt_ob_lit(o, " info");
        else
            rt_ob_put(o, name + nlen, n - 7 - nlen);
        rt_ob_put(o, "\n", 1);
    }
    rt_ob_lit(o, "# EOF\n");
}

size_t rt_format_prometheus(const rt_sample *sample, const rt_job *job, const rt_host *host, const rt_cloud *cloud,
                            int openmetrics, char *buf, size_t cap)
{
    return rt_prom_format_phase(sample, job, host, cloud, openmetrics, rt_phase_innermost(sample), buf, cap);
}

size_t rt_prom_format_phase(const rt_sample *sample, const rt_job *job, const rt_host *host, const rt_cloud *cloud,
                            int openmetrics, const char *phase, char *buf, size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_labels labels;
    /* out of memory: the figures still go out, without the job's labels (nothing to report
     * the failure through) */
    if (rt_labels_from_job(job, &labels) != RT_OK)
        memset(&labels, 0, sizeof labels);
    rt_prom_out f = {.o = &o, .labels = &labels, .openmetrics = openmetrics != 0};
    put_info(&f, host, cloud);
    if (sample)
        put_sample(&f, sample, phase);
    if (f.openmetrics)
        rt_ob_lit(&o, "# EOF\n");
    rt_labels_free(&labels);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}
