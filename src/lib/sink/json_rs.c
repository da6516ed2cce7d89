/* json_rs.c - the JSON line of the Rust resource-tracker 0.1.14 (`--format json-rs`,
 * docs/output.md): each object written by walking its table of the Rust tool's view
 * (core/schema_rs.c), which names our figure behind every member, its type and its unit; the
 * members a table cannot say (arrays, the GPU's detail map and ids, a link's speed as the
 * kernel wrote it, the version, the interval, the job's name) are written here at their place
 * in the table. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "../core/schema.h"
#include "sink.h"

/* Where the figures of the Rust tool's objects come from for one object being written. */
typedef struct rs_ctx {
    const rt_sample *s;
    const rt_job *job;
    const rt_rs_state *st;
    const rt_fstruct *item_st; /* the struct of the array item being written (NULL: none) */
    const void *item;
} rs_ctx;

/* The group whose CPU the cgroup members show: the tracker's own group without a tree, the
 * tree's with one. */
static const rt_cgroup *rs_cgroup(const rt_sample *s)
{
    if (s->cgroup)
        return s->cgroup;
    return s->process ? s->process->cgroup : NULL;
}

/* The struct of schema table t in this sample (NULL when the sample has none). */
static const void *rs_base(const rs_ctx *c, const rt_fstruct *t)
{
    if (t == c->item_st)
        return c->item;
    if (t == &rt_schema_sample)
        return c->s;
    if (t == &rt_schema_cpu)
        return c->s->cpu;
    if (t == &rt_schema_memory)
        return c->s->memory;
    if (t == &rt_schema_process)
        return c->s->process;
    if (t == &rt_schema_cgroup)
        return rs_cgroup(c->s);
    if (t == &rt_schema_gpu_use)
        return c->s->gpu_processes;
    return NULL;
}

static void rs_key(rt_ob *o, const char *k)
{
    rt_ob_json_str(o, k);
    rt_ob_put(o, ":", 1);
}

/* An integer figure exactly (a 64-bit counter is not taken through a double). */
static void rs_int(rt_ob *o, const rt_field *sf, const void *m, int option)
{
    uint64_t u;
    int64_t i;
    if (sf->type == RT_FIELD_U64) {
        memcpy(&u, m, sizeof u);
        rt_ob_u64_or(o, u, option ? "null" : "0");
        return;
    }
    if (sf->type == RT_FIELD_I64) {
        memcpy(&i, m, sizeof i);
        rt_ob_i64_or(o, i, option ? "null" : "0");
        return;
    }
    double d = rt_schema_num(sf->type, m);
    if (!isfinite(d))
        rt_ob_lit(o, option ? "null" : "0");
    else if (d >= 1.8e19)
        rt_ob_u64(o, UINT64_MAX); /* beyond u64: its largest, never an undefined conversion */
    else if (d >= 0)
        rt_ob_u64(o, (uint64_t)d); /* truncated, as the Rust tool's integer divisions */
    else
        rt_ob_i64(o, d > -9.2e18 ? (int64_t)d : INT64_MIN);
}

/* The change of a cumulative figure v since the previous sample (member index i of rt_rs_cpu),
 * as RS_DELTA or RS_RATE; NaN without a previous figure. */
static double rs_change(const rs_ctx *c, size_t i, double v, rt_rs_conv conv)
{
    if (!c->st || i >= RT_RS_PREV || isnan(c->st->prev[i]) || isnan(v))
        return NAN;
    double delta = v - c->st->prev[i];
    if (delta < 0)
        delta = 0;
    if (conv == RS_DELTA)
        return delta;
    return c->s->interval_secs > 0 ? delta / c->s->interval_secs : NAN;
}

/* Member i of table t: "key":value, */
static void rs_member(rt_ob *o, const rs_ctx *c, const rt_rs_object *t, size_t i)
{
    const rt_rs_field *f = &t->f[i];
    const rt_field *sf = rt_schema_at(f->st, f->off);
    const char *base = rs_base(c, f->st);
    size_t off = f->off;
    if (!base && f->alt) { /* the machine's processes where there is no tree */
        sf = rt_schema_at(f->alt, f->alt_off);
        base = rs_base(c, f->alt);
        off = f->alt_off;
    }
    rs_key(o, f->name);
    if (!sf || !base) {
        rt_ob_lit(o, f->option ? "null" : f->type == RS_STR ? "\"\"" : f->type == RS_FLOAT ? "0.0" : "0");
    } else if (f->type == RS_STR) {
        const char *v = *(const char *const *)(base + off);
        if (v || f->option)
            rt_ob_json_str(o, v);
        else
            rt_ob_lit(o, "\"\"");
    } else if (f->type == RS_INT && f->conv == RS_SAME) {
        rs_int(o, sf, base + off, f->option);
    } else {
        double v = rt_schema_num(sf->type, base + off);
        if (f->conv == RS_PER_100)
            v /= 100.0;
        else if (f->conv == RS_TO_MIB)
            v /= 1048576.0;
        else if (f->conv == RS_DELTA || f->conv == RS_RATE)
            v = t == &rt_rs_cpu ? rs_change(c, i, v, f->conv) : NAN;
        if (f->type == RS_INT) {
            double m = v; /* a converted integer: through a double, truncated */
            rs_int(o, &(rt_field){.type = RT_FIELD_DOUBLE}, &m, f->option);
        } else {
            rt_ob_shortest(o, v, "null");
        }
    }
    rt_ob_put(o, ",", 1);
}

/* Closes the object or array with ch, taking back the comma of its last member; then a comma. */
static void rs_close(rt_ob *o, char ch)
{
    if (o->last == ',')
        o->len--;
    rt_ob_put(o, &ch, 1);
    rt_ob_put(o, ",", 1);
}

static void rs_object(rt_ob *o, const rs_ctx *c, const rt_rs_object *t);

/* "name":[{..},..] of the n items of struct table ist, each written by table t. */
static void rs_array(rt_ob *o, const rs_ctx *c, const rt_rs_object *t, const rt_fstruct *ist, const void *const *items,
                     size_t n)
{
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < n; i++) {
        rs_ctx ic = *c;
        ic.item_st = ist;
        ic.item = items[i];
        rs_object(o, &ic, t);
    }
    rs_close(o, ']');
}

/* A GPU's fact named key (NULL: none). */
static const char *rs_fact(const rt_gpu *g, const char *key)
{
    for (size_t k = 0; k < g->detail_count; k++)
        if (g->detail[k].key && strcmp(g->detail[k].key, key) == 0)
            return g->detail[k].value;
    return NULL;
}

/* Whether g's driver is name: "nvidia" (read through NVML) or "amdgpu", the two kinds of GPU
 * the Rust tool reads. */
static bool rs_driver(const rt_gpu *g, const char *name)
{
    const char *d = rs_fact(g, "driver");
    return d && strcmp(d, name) == 0;
}

/* An NVIDIA GPU's index in NVML: the sample's, else its place among the sample's NVIDIA GPUs,
 * which come first and in NVML's order (the same for index 0; a sample built by a caller
 * before 0.18 has 0 there). */
static int64_t rs_nvml_index(const rt_sample *s, const rt_gpu *g)
{
    if (g->nvml_index != RT_NULL_I64 && g->nvml_index > 0)
        return g->nvml_index;
    int64_t index = 0;
    for (size_t i = 0; i < s->gpu_count && s->gpu[i] != g; i++)
        index += s->gpu[i] && rs_driver(s->gpu[i], "nvidia");
    return index;
}

/* "key":"value", (nothing when value is NULL) */
static void rs_str_member(rt_ob *o, const char *key, const char *value)
{
    if (!value)
        return;
    rs_key(o, key);
    rt_ob_json_str(o, value);
    rt_ob_put(o, ",", 1);
}

/* A GPU's "detail" map as the Rust tool fills it, its keys sorted as serde_json writes a map:
 * NVIDIA's driver_version and pci_bus_id (NVML's spelling of the address), AMD's pci_bus (the
 * PCI address; its rocm_version is not known here); another GPU's facts (Intel, which the Rust
 * tool does not list) as ours. A fact the GPU did not give is left out. */
static void rs_detail(rt_ob *o, const rt_gpu *g)
{
    rt_ob_put(o, "{", 1);
    if (rs_driver(g, "nvidia")) {
        rs_str_member(o, "driver_version", rs_fact(g, "driver_version"));
        rs_str_member(o, "pci_bus_id", g->nvml_bus_id);
    } else if (rs_driver(g, "amdgpu")) {
        rs_str_member(o, "pci_bus", g->host_id);
    } else {
        const char *last = NULL;
        for (;;) {
            const rt_kv *next = NULL;
            for (size_t k = 0; k < g->detail_count; k++) {
                const char *key = g->detail[k].key;
                if (key && (!last || strcmp(key, last) > 0) && (!next || strcmp(key, next->key) < 0))
                    next = &g->detail[k];
            }
            if (!next)
                break;
            rs_str_member(o, next->key, next->value ? next->value : "");
            last = next->key;
        }
    }
    rs_close(o, '}');
}

/* A GPU's host_id and uuid as the Rust tool gives them. NVIDIA: host_id its NVML index ("0"),
 * uuid NVML's (else "nvidia-INDEX"); AMD: both the PCI address (it has no stable UUID there);
 * another: ours. */
static void rs_gpu_id(rt_ob *o, const rt_sample *s, const rt_gpu *g, bool uuid)
{
    char buf[32];
    const char *v = uuid ? g->uuid : g->host_id;
    if (rs_driver(g, "nvidia") && !(uuid && v)) {
        snprintf(buf, sizeof buf, "%s%lld", uuid ? "nvidia-" : "", (long long)rs_nvml_index(s, g));
        v = buf;
    } else if (rs_driver(g, "amdgpu")) {
        v = g->host_id;
    }
    rt_ob_json_str(o, v ? v : "");
    rt_ob_put(o, ",", 1);
}

/* A member written by hand: "name":value, */
static void rs_hand(rt_ob *o, const rs_ctx *c, const char *name)
{
    const rt_sample *s = c->s;
    if (strcmp(name, "actual_interval_ms") == 0) {
        if ((c->st && !c->st->started) || !(s->interval_secs >= 0) || !isfinite(s->interval_secs))
            return; /* left out of the first sample, as serde's skip_serializing_if does */
        rs_key(o, name);
        double ms = s->interval_secs * 1000.0 + 1e-6; /* whole ms, truncated */
        if (ms < 1 && s->interval_secs > 0)
            ms = 1; /* the job's exit sample within a ms of the last: never 0, which a reader divides by */
        rs_int(o, &(rt_field){.type = RT_FIELD_DOUBLE}, &ms, 0);
    } else if (strcmp(name, "resource-tracker-version") == 0) {
        rs_key(o, name);
        rt_ob_json_str(o, RT_VERSION);
    } else if (strcmp(name, "job_name") == 0) {
        rs_key(o, name);
        rt_ob_json_str(o, c->job ? c->job->job_name : NULL);
    } else if (strcmp(name, "per_core_pct") == 0) {
        rs_key(o, name);
        rt_ob_put(o, "[", 1);
        for (size_t i = 0; s->cpu && i < s->cpu->core_count; i++) {
            rt_ob_shortest(o, s->cpu->per_core_pct[i], "null");
            rt_ob_put(o, ",", 1);
        }
        rs_close(o, ']');
        return;
    } else {
        rs_key(o, name);
        if (strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0) {
            rs_ctx ic = *c;
            ic.item_st = NULL;
            rs_object(o, &ic, name[0] == 'c' ? &rt_rs_cpu : &rt_rs_memory);
            return;
        }
        if (strcmp(name, "network") == 0) {
            rs_array(o, c, &rt_rs_network, &rt_schema_net_iface, (const void *const *)s->network, s->network_count);
        } else if (strcmp(name, "disk") == 0) {
            rs_array(o, c, &rt_rs_disk, &rt_schema_disk, (const void *const *)s->disk, s->disk_count);
        } else if (strcmp(name, "gpu") == 0) {
            rs_array(o, c, &rt_rs_gpu, &rt_schema_gpu, (const void *const *)s->gpu, s->gpu_count);
        } else if (strcmp(name, "mounts") == 0 && c->item_st == &rt_schema_disk) {
            const rt_disk *d = c->item;
            rs_array(o, c, &rt_rs_mount, &rt_schema_mount, (const void *const *)d->mounts, d->mount_count);
        } else if (strcmp(name, "detail") == 0 && c->item_st == &rt_schema_gpu) {
            rs_detail(o, c->item);
        } else if (strcmp(name, "speed_mbps") == 0 && c->item_st == &rt_schema_net_iface) {
            /* a known speed as ours; an unknown one as the file said it (-1), else null (0 there
             * is a struct filled before 0.18: the kernel's 0 would be a known speed) */
            const rt_net_iface *n = c->item;
            int64_t v = n->speed_mbps;
            if (v == RT_NULL_I64 && n->speed_mbps_reported != 0)
                v = n->speed_mbps_reported;
            rs_int(o, &(rt_field){.type = RT_FIELD_I64}, &v, 1);
            rt_ob_put(o, ",", 1);
        } else if ((strcmp(name, "host_id") == 0 || strcmp(name, "uuid") == 0) && c->item_st == &rt_schema_gpu) {
            rs_gpu_id(o, s, c->item, name[0] == 'u');
        } else {
            rt_ob_lit(o, "null,");
        }
        return;
    }
    rt_ob_put(o, ",", 1);
}

/* {members of table t}, then a comma. */
static void rs_object(rt_ob *o, const rs_ctx *c, const rt_rs_object *t)
{
    rt_ob_put(o, "{", 1);
    for (size_t i = 0; i < t->n; i++) {
        if (t->f[i].type == RS_HAND)
            rs_hand(o, c, t->f[i].name);
        else
            rs_member(o, c, t, i);
    }
    rs_close(o, '}');
}

void rt_json_rs_start(rt_rs_state *st)
{
    st->started = 0;
    for (size_t i = 0; i < RT_RS_PREV; i++)
        st->prev[i] = NAN;
}

void rt_json_rs_sample(rt_ob *o, const rt_sample *s, const rt_job *job, const rt_rs_state *st)
{
    rs_ctx c = {.s = s, .job = job, .st = st};
    rs_object(o, &c, &rt_rs_sample);
    o->len--; /* the newline instead of the comma */
    rt_ob_put(o, "\n", 1);
}

void rt_json_rs_next(rt_rs_state *st, const rt_sample *s)
{
    rs_ctx c = {.s = s};
    st->started = 1;
    for (size_t i = 0; i < rt_rs_cpu.n && i < RT_RS_PREV; i++) {
        const rt_rs_field *f = &rt_rs_cpu.f[i];
        if (f->conv != RS_DELTA && f->conv != RS_RATE)
            continue;
        const rt_field *sf = rt_schema_at(f->st, f->off);
        const char *base = rs_base(&c, f->st);
        st->prev[i] = sf && base ? rt_schema_num(sf->type, base + f->off) : NAN;
    }
}
