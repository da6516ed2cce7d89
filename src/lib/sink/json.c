/* json.c - the JSON-lines view of one sample (docs/contracts.md §2), and of the host and cloud
 * facts (`resource-tracker info`, docs/contracts.md §10): members read from the structs
 * through the schema's tables (core/schema.h), which give their keys, order and decimals. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdbool.h>

#include "../core/core.h"
#include "../core/schema.h"
#include "sink.h"

/* Each member is written as "key":value followed by a comma; jclose() takes the last comma back
 * and closes the object or array. */

static void key(rt_ob *o, const char *k)
{
    rt_ob_put(o, "\"", 1);
    rt_ob_lit(o, k);
    rt_ob_put(o, "\":", 2);
}

/* Closes an object or array with c, replacing the trailing comma of its last member. */
static void jclose(rt_ob *o, char c)
{
    if (o->last == ',')
        o->len--; /* the byte stays in buf but is overwritten next */
    rt_ob_put(o, &c, 1);
    rt_ob_put(o, ",", 1);
}

/* "k":v with at most dec decimals, or "k":null when v is not finite; then a comma. */
static void jnum(rt_ob *o, const char *k, double v, int dec)
{
    rt_ob_member_num(o, k, v, dec);
}

/* "k":v, or "k":null for RT_NULL_U64; then a comma. */
static void ju64(rt_ob *o, const char *k, uint64_t v)
{
    key(o, k);
    rt_ob_u64_or(o, v, "null");
    rt_ob_put(o, ",", 1);
}

/* "k":v, or "k":null for RT_NULL_I64; then a comma. */
static void ji64(rt_ob *o, const char *k, int64_t v)
{
    key(o, k);
    rt_ob_i64_or(o, v, "null");
    rt_ob_put(o, ",", 1);
}

/* "k":"v" escaped, or "k":null for NULL; then a comma. */
static void jstr(rt_ob *o, const char *k, const char *v)
{
    rt_ob_member_str(o, k, v);
}

/* "k":true or "k":false; then a comma. */
static void jbool(rt_ob *o, const char *k, bool v)
{
    rt_ob_member_bool(o, k, v);
}

/* Writes the fields f[0..n) of the struct at base that the JSON line shows, without the
 * braces. */
static void jfields(rt_ob *o, const void *base, const rt_field *f, size_t n)
{
    const char *b = base;
    for (size_t i = 0; i < n; i++) {
        const void *at = b + f[i].off;
        if (f[i].jdec == RT_NO_JSON)
            continue;
        switch (f[i].type) {
        case RT_FIELD_STRING: jstr(o, f[i].name, *(const char *const *)at); break;
        case RT_FIELD_U64: ju64(o, f[i].name, *(const uint64_t *)at); break;
        case RT_FIELD_I64: ji64(o, f[i].name, *(const int64_t *)at); break;
        case RT_FIELD_DOUBLE: jnum(o, f[i].name, *(const double *)at, f[i].jdec); break;
        case RT_FIELD_FLAG: jbool(o, f[i].name, *(const int *)at != 0); break;
        }
    }
}

/* Every field of the schema's table st. */
static void jall(rt_ob *o, const void *base, const rt_fstruct *st)
{
    jfields(o, base, st->f, st->n);
}

/* The "cpu" member: its first field, the per-core figures, then the rest. */
static void json_cpu(rt_ob *o, const rt_cpu *c)
{
    rt_ob_lit(o, "\"cpu\":{");
    jfields(o, c, rt_schema_cpu.f, 1);
    rt_ob_lit(o, "\"per_core_pct\":[");
    for (size_t i = 0; i < c->core_count; i++) {
        rt_ob_fixed(o, c->per_core_pct[i], 2, "null");
        rt_ob_put(o, ",", 1);
    }
    jclose(o, ']');
    jfields(o, c, rt_schema_cpu.f + 1, rt_schema_cpu.n - 1);
    jclose(o, '}');
}

/* Writes "name":{ and returns true; nothing and false when p is NULL (a member left out). */
static bool jopen_if(rt_ob *o, const char *name, const void *p)
{
    if (!p)
        return false;
    key(o, name);
    rt_ob_put(o, "{", 1);
    return true;
}

/* Writes "name":{ and returns true; "name":null and false when p is NULL. */
static bool jopen(rt_ob *o, const char *name, const void *p)
{
    if (!p) {
        key(o, name);
        rt_ob_lit(o, "null,");
    }
    return jopen_if(o, name, p);
}

/* "name":{members}, or "name":null for a NULL base. */
static void jobject(rt_ob *o, const char *name, const void *base, const rt_fstruct *st)
{
    if (!jopen(o, name, base))
        return;
    jall(o, base, st);
    jclose(o, '}');
}

/* "name":[{members},...] over the n structs items[0..n) point to. */
static void jarray(rt_ob *o, const char *name, const void *const *items, size_t n, const rt_fstruct *st)
{
    key(o, name);
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < n; i++) {
        rt_ob_put(o, "{", 1);
        jall(o, items[i], st);
        jclose(o, '}');
    }
    jclose(o, ']');
}

/* The GPU's identity: the fields before its "detail" object. */
enum { GPU_IDENTITY = 4 };

/* The "gpu" array: each GPU with its "detail" object between its identity and its figures. */
static void json_gpus(rt_ob *o, const rt_sample *s)
{
    rt_ob_lit(o, "\"gpu\":[");
    for (size_t i = 0; i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        rt_ob_put(o, "{", 1);
        jfields(o, g, rt_schema_gpu.f, GPU_IDENTITY);
        rt_ob_lit(o, "\"detail\":{");
        for (size_t k = 0; k < g->detail_count; k++)
            jstr(o, g->detail[k].key, g->detail[k].value);
        jclose(o, '}');
        jfields(o, g, rt_schema_gpu.f + GPU_IDENTITY, rt_schema_gpu.n - GPU_IDENTITY);
        jarray(o, "mig", (const void *const *)g->mig, g->mig_count, &rt_schema_gpu_mig);
        jclose(o, '}');
    }
    jclose(o, ']');
}

/* The "disk" array: each disk with its "mounts". */
static void json_disks(rt_ob *o, const rt_sample *s)
{
    rt_ob_lit(o, "\"disk\":[");
    for (size_t i = 0; i < s->disk_count; i++) {
        const rt_disk *d = s->disk[i];
        rt_ob_put(o, "{", 1);
        jall(o, d, &rt_schema_disk);
        jarray(o, "mounts", (const void *const *)d->mounts, d->mount_count, &rt_schema_mount);
        jclose(o, '}');
    }
    jclose(o, ']');
}

/* Whether the kernel gave any figure of this pressure (a group without *.pressure files has
 * none: its member is null). */
static bool pressure_known(const rt_pressure *p)
{
    return p->some_total_usec != RT_NULL_U64 || p->full_total_usec != RT_NULL_U64 || !isnan(p->some_avg10) ||
           !isnan(p->full_avg10);
}

/* "name":{"cpu":P,"memory":P,"io":P}, or "name":null for NULL; each P null when unknown. */
static void json_psi(rt_ob *o, const char *name, const rt_psi *ps)
{
    if (!jopen(o, name, ps))
        return;
    const char *names[] = {"cpu", "memory", "io"};
    const rt_pressure *each[] = {&ps->cpu, &ps->memory, &ps->io};
    for (size_t i = 0; i < RT_ARRAY_LEN(each); i++)
        jobject(o, names[i], pressure_known(each[i]) ? each[i] : NULL, &rt_schema_pressure);
    jclose(o, '}');
}

/* "cgroup":{figures,"pressure":{..}}, or "cgroup":null for NULL. */
static void json_cgroup(rt_ob *o, const rt_cgroup *g)
{
    if (!jopen(o, "cgroup", g))
        return;
    jall(o, g, &rt_schema_cgroup);
    json_psi(o, "pressure", &g->pressure);
    jclose(o, '}');
}

/* The "process" member: the tree's figures, its "cgroup" (null without one), then its split
 * into "main", "descendants" and "combined". */
static void json_process(rt_ob *o, const rt_process *p)
{
    if (!jopen(o, "process", p))
        return;
    jall(o, p, &rt_schema_process);
    json_cgroup(o, p->cgroup);
    jobject(o, "main", p->main, &rt_schema_part);
    jobject(o, "descendants", p->descendants, &rt_schema_part);
    jobject(o, "combined", p->combined, &rt_schema_part);
    jclose(o, '}');
}

/* The name of a mark's cpu_source in the line (rt_phase_cpu_source). */
const char *rt_phase_cpu_source_name(int source)
{
    static const char *const names[] = {"none", "group", "schedstat", "ticks", "marker"};
    return source >= 0 && source < (int)(sizeof names / sizeof names[0]) ? names[source] : "none";
}

/* The phase marks' counts, in order. */
static const rt_obm count_members[] = {
    RT_OBM(rt_phase_counts, "accepted", accepted, 0), RT_OBM(rt_phase_counts, "unknown_stop", unknown_stop, 0),
    RT_OBM(rt_phase_counts, "unterminated", unterminated, 0), RT_OBM(rt_phase_counts, "too_long", too_long, 0),
    RT_OBM(rt_phase_counts, "malformed", malformed, 0), RT_OBM(rt_phase_counts, "flood", flood, 0),
    RT_OBM(rt_phase_counts, "dropped", dropped, 0), RT_OBM(rt_phase_counts, "too_many_names", too_many_names, 0),
    RT_OBM(rt_phase_counts, "too_deep", too_deep, 0), RT_OBM(rt_phase_counts, "refused", refused, 0),
};

/* "phases":{"open":[..],"marks":[{..},..],"counts":{..}}, nothing when ph is NULL (a run
 * before its first mark: the line is as it was before phases). */
static void json_phases(rt_ob *o, const rt_phases *ph)
{
    if (!ph)
        return;
    key(o, "phases");
    rt_ob_lit(o, "{\"open\":[");
    for (size_t i = 0; i < ph->open_count; i++) {
        rt_ob_json_str(o, ph->open[i]);
        rt_ob_put(o, ",", 1);
    }
    jclose(o, ']');
    key(o, "marks");
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < ph->mark_count; i++) {
        const rt_phase_mark *m = ph->marks[i];
        rt_ob_put(o, "{", 1);
        jstr(o, "event", m->kind == RT_PHASE_START ? "start" : "stop");
        jstr(o, "name", m->name);
        jnum(o, "timestamp_secs", m->timestamp_secs, 6);
        ji64(o, "pid", m->pid);
        jnum(o, "cpu_secs_total", m->cpu_source ? m->cpu_secs_total : NAN, 6);
        jstr(o, "cpu_source", rt_phase_cpu_source_name(m->cpu_source));
        jnum(o, "read_bytes_total", m->read_bytes_total, 0);
        jnum(o, "write_bytes_total", m->write_bytes_total, 0);
        jnum(o, "rss_mib", m->rss_mib, 3);
        jnum(o, "memory_peak_mib", m->memory_peak_mib, 3);
        jnum(o, "reading_lag_secs", m->reading_lag_secs, 6);
        jclose(o, '}');
    }
    jclose(o, ']');
    key(o, "counts");
    rt_ob_put(o, "{", 1);
    static const rt_phase_counts zero;
    const rt_phase_counts *c = ph->counts ? ph->counts : &zero;
    rt_ob_members(o, c, count_members, RT_OBM_N(count_members));
    jclose(o, '}');
    jclose(o, '}');
}

/* "energy":{figures,"domain":[{..},..]}, nothing when e is NULL (energy off). */
static void json_energy(rt_ob *o, const rt_energy *e)
{
    if (!jopen_if(o, "energy", e))
        return;
    jall(o, e, &rt_schema_energy);
    jarray(o, "domain", (const void *const *)e->domain, e->domain_count, &rt_schema_energy_domain);
    jclose(o, '}');
}

/* "request":{..}: what the job was given where it runs, a figure null when not said;
 * nothing when r is NULL. Written by hand: a figure's null comes from its *_from. */
static void json_request(rt_ob *o, const rt_request *r)
{
    if (!jopen_if(o, "request", r))
        return;
    jstr(o, "place", r->place);
    jnum(o, "cpu_cores", r->cpu_from ? r->cpu_cores : NAN, 4);
    jnum(o, "memory_mib", r->memory_from ? r->memory_mib : NAN, 3);
    jnum(o, "gpus", r->gpus_from ? r->gpus : NAN, 0);
    jnum(o, "time_limit_secs", r->time_limit_from ? r->time_limit_secs : NAN, 3);
    jnum(o, "job_start_secs", r->job_start_secs > 0 ? r->job_start_secs : NAN, 3);
    jstr(o, "cpu_from", r->cpu_from);
    jstr(o, "memory_from", r->memory_from);
    jstr(o, "gpus_from", r->gpus_from);
    jstr(o, "time_limit_from", r->time_limit_from);
    jclose(o, '}');
}

/* "member":{..}: the run's place in a job of several nodes, a number null when not
 * said; nothing when m is NULL. */
void rt_json_member_fields(rt_ob *o, const rt_member *m)
{
    jstr(o, "job_id", m->job_id);
    jstr(o, "step_id", m->step_id);
    jstr(o, "node", m->node);
    const int64_t nums[] = {m->rank, m->local_rank, m->ranks, m->nodes, m->node_index};
    const char *const names[] = {"rank", "local_rank", "ranks", "nodes", "node_index"};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        jnum(o, names[i], nums[i] >= 0 ? (double)nums[i] : NAN, 0);
    jstr(o, "from", m->from);
    rt_ob_member_bool(o, "per_node", m->struct_size > offsetof(rt_member, per_node) && m->per_node);
}

static void json_member(rt_ob *o, const rt_member *m)
{
    if (!jopen_if(o, "member", m))
        return;
    rt_json_member_fields(o, m);
    jclose(o, '}');
}

/* "clock":{"step_secs":..,"gap_secs":..} (0.20): only on a line whose interval had a step of
 * the wall clock or was a gap in the sampling (absent on every other line). */
static void json_clock(rt_ob *o, const rt_sample *s)
{
    if ((s->clock_step_secs == 0 && !(s->sampling_gap_secs > 0)) || !jopen_if(o, "clock", s))
        return;
    jnum(o, "step_secs", s->clock_step_secs, 3);
    jnum(o, "gap_secs", s->sampling_gap_secs, 3);
    jclose(o, '}');
}

void rt_json_sample(rt_ob *o, const rt_sample *s, const rt_job *job)
{
    rt_ob_put(o, "{", 1);
    jstr(o, "resource-tracker-version", RT_VERSION); /* first, the Rust tool's key */
    jall(o, s, &rt_schema_sample); /* the time and the interval (the summed space is not shown) */
    jstr(o, "job_name", job ? job->job_name : NULL);
    json_cpu(o, s->cpu);
    jobject(o, "memory", s->memory, &rt_schema_memory);
    jarray(o, "network", (const void *const *)s->network, s->network_count, &rt_schema_net_iface);
    json_disks(o, s);
    json_gpus(o, s);
    json_process(o, s->process);
    json_psi(o, "pressure", s->pressure);
    json_cgroup(o, s->cgroup); /* the tracker's own group (whole machine only) */
    json_phases(o, s->phases);
    json_energy(o, s->energy);
    json_request(o, s->request);
    json_member(o, s->member);
    json_clock(o, s);
    jclose(o, '}');
    o->len--; /* no comma after the sample: a newline */
    rt_ob_put(o, "\n", 1);
}

/* ---- host and cloud ----------------------------------------------------------------------- */

size_t rt_format_info(const rt_host *host, const rt_cloud *cloud, char *buf, size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_ob_put(&o, "{", 1);
    jobject(&o, "host", host, &rt_schema_host);
    jobject(&o, "cloud", cloud, &rt_schema_cloud);
    jclose(&o, '}');
    o.len--; /* the newline instead of the comma */
    rt_ob_put(&o, "\n", 1);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}
