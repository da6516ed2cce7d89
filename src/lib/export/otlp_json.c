/* otlp_json.c - the OTLP exporter's pure part: a sample copied into a compact row, the cumulative
 * series carried from push to push, and the ExportMetricsServiceRequest in OTLP/JSON (lowerCamelCase
 * fields, 64-bit integers as decimal strings, enums as integers) with the semantic conventions'
 * metric names where they exist and resource_tracker.* for the rest. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sink/sink.h"
#include "otlp_int.h"

#define MIB 1048576.0
#define MAX_BASES 4096 /* disks and interfaces remembered; past it the table starts afresh */

/* ---- the row ------------------------------------------------------------------------------------- */

static size_t str_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

size_t rt_otlp_row_size(const rt_sample *s)
{
    size_t n = sizeof(rt_otlp_row);
    for (size_t i = 0; s->disk && i < s->disk_count; i++)
        n += s->disk[i] ? sizeof(rt_otlp_dev) + str_bytes(s->disk[i]->device) : 0;
    for (size_t i = 0; s->network && i < s->network_count; i++)
        n += s->network[i] ? sizeof(rt_otlp_dev) + str_bytes(s->network[i]->interface) : 0;
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        n += g ? sizeof(rt_otlp_gpu) + str_bytes(g->uuid ? g->uuid : g->host_id) : 0;
    }
    return n;
}

/* Copies s into the row's string area at *p (NULL stays NULL). */
static const char *put_str(char **p, const char *s)
{
    if (!s)
        return NULL;
    size_t l = strlen(s) + 1;
    memcpy(*p, s, l);
    char *r = *p;
    *p += l;
    return r;
}

static void copy_cgroup(rt_otlp_row *r, const rt_cgroup *c)
{
    r->has_cg = c != NULL;
    if (!c)
        return;
    r->cg_cpu_total = c->cpu_secs_total;
    r->cg_mem = c->memory_mib;
    r->cg_mem_peak = c->memory_peak_mib;
    r->cg_mem_limit = c->memory_limit_mib;
    r->cg_quota = c->cpu_quota_cores;
    r->cg_throttled = c->cpu_throttled_secs;
    r->cg_pids = c->pids;
    r->cg_oom = c->oom_kills;
}

static void copy_process(rt_otlp_row *r, const rt_process *p)
{
    r->has_proc = p != NULL;
    if (!p)
        return;
    r->pid = p->pid;
    r->children = p->child_count;
    r->threads = p->thread_count;
    r->p_cores = p->cores_used;
    r->p_cpu_total = p->cpu_secs_total;
    r->p_rss = p->rss_mib;
    r->p_pss = p->pss_mib;
    r->p_swap = p->swap_mib;
    r->p_rss_peak = p->rss_peak_mib;
    r->p_mem_peak = p->memory_peak_mib;
    r->p_read_total = p->read_bytes_total;
    r->p_write_total = p->write_bytes_total;
    r->p_gpu_vram = p->gpu_vram_used_bytes;
    r->p_gpu_util_pct = p->gpu_utilization_pct;
    const rt_process_part *parts[3] = {p->main, p->descendants, p->combined};
    r->has_parts = parts[0] && parts[1] && parts[2];
    for (int i = 0; r->has_parts && i < 3; i++) {
        r->part_rss[i] = parts[i]->total_rss_mib;
        r->part_private[i] = parts[i]->private_rss_mib;
        r->part_shared[i] = parts[i]->shared_rss_mib;
        r->part_cores[i] = parts[i]->cores_used;
        r->part_threads[i] = parts[i]->thread_count;
        r->part_vram[i] = parts[i]->gpu_vram_used_bytes;
    }
}

rt_otlp_row *rt_otlp_row_new(const rt_sample *s)
{
    rt_otlp_row *r = malloc(rt_otlp_row_size(s));
    if (!r)
        return NULL;
    memset(r, 0, sizeof *r);
    r->ts = s->timestamp_secs;
    r->interval = s->interval_secs;
    const rt_cpu *c = s->cpu;
    r->cpu_cores = c ? c->utilization_pct : NAN;
    r->cores = c && c->core_count ? (int64_t)c->core_count : RT_NULL_I64;
    r->utime = c ? c->utime_secs : NAN;
    r->stime = c ? c->stime_secs : NAN;
    r->procs_running = c ? c->process_count : RT_NULL_I64;
    const rt_memory *m = s->memory;
    r->mem_total = m ? m->total_mib : NAN;
    r->mem_free = m ? m->free_mib : NAN;
    r->mem_used = m ? m->used_mib : NAN;
    r->mem_cached = m ? m->cached_mib : NAN;
    r->mem_buffers = m ? m->buffers_mib : NAN;
    r->mem_available = m ? m->available_mib : NAN;
    r->swap_total = m ? m->swap_total_mib : NAN;
    r->swap_used = m ? m->swap_used_mib : NAN;
    r->fs_used = s->disk_space_used_bytes;
    r->fs_free = s->disk_space_free_bytes;
    copy_process(r, s->process);
    copy_cgroup(r, s->process ? s->process->cgroup : s->cgroup);
    r->cpu_user_cum = r->cpu_system_cum = NAN;

    r->disk = (rt_otlp_dev *)(void *)(r + 1);
    for (size_t i = 0; s->disk && i < s->disk_count; i++)
        r->ndisk += s->disk[i] != NULL;
    r->net = r->disk + r->ndisk;
    for (size_t i = 0; s->network && i < s->network_count; i++)
        r->nnet += s->network[i] != NULL;
    r->gpu = (rt_otlp_gpu *)(void *)(r->net + r->nnet);
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++)
        r->ngpu += s->gpu[i] != NULL;
    char *p = (char *)(r->gpu + r->ngpu);
    size_t k = 0;
    for (size_t i = 0; s->disk && i < s->disk_count; i++) {
        const rt_disk *d = s->disk[i];
        if (d)
            r->disk[k++] = (rt_otlp_dev){.name = put_str(&p, d->device), .a = d->read_bytes_total,
                                         .b = d->write_bytes_total, .ia = d->read_bytes, .ib = d->write_bytes};
    }
    k = 0;
    for (size_t i = 0; s->network && i < s->network_count; i++) {
        const rt_net_iface *n = s->network[i];
        if (n)
            r->net[k++] = (rt_otlp_dev){.name = put_str(&p, n->interface), .a = n->rx_bytes_total,
                                        .b = n->tx_bytes_total, .ia = n->rx_bytes, .ib = n->tx_bytes};
    }
    k = 0;
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (g)
            r->gpu[k++] = (rt_otlp_gpu){.id = put_str(&p, g->uuid ? g->uuid : g->host_id),
                                        .util_pct = g->utilization_pct, .vram_used = g->vram_used_bytes,
                                        .vram_total = g->vram_total_bytes};
    }
    return r;
}

/* ---- the cumulative series ------------------------------------------------------------------------ */

static uint64_t unix_ns(double secs)
{
    if (!(secs > 0) || secs > 1e10)
        return 0;
    return (uint64_t)llround(secs * 1000.0) * 1000000u; /* timestamps have millisecond precision */
}

/* The remembered start of a device's series (NULL when it cannot be remembered). */
static rt_otlp_base *find_base(rt_otlp_state *st, int kind, const char *name, bool *fresh)
{
    *fresh = false;
    for (size_t i = 0; i < st->nbases; i++)
        if (st->bases[i].kind == kind && strcmp(st->bases[i].name, name) == 0)
            return &st->bases[i];
    if (st->nbases >= MAX_BASES) { /* interfaces that come and go (containers): start afresh */
        for (size_t i = 0; i < st->nbases; i++)
            free(st->bases[i].name);
        st->nbases = 0;
    }
    char *copy = rt_strdup(name);
    if (!copy || rt_grow(&st->bases, &st->cap_bases, st->nbases + 1, sizeof *st->bases) < 0) {
        free(copy);
        return NULL;
    }
    rt_otlp_base *b = &st->bases[st->nbases++];
    b->name = copy;
    b->kind = kind;
    *fresh = true;
    return b;
}

/* The counter c less its series' start a (RT_NULL_U64 when either is null). */
static uint64_t since(uint64_t c, uint64_t a)
{
    return c == RT_NULL_U64 || a == RT_NULL_U64 ? RT_NULL_U64 : rt_delta_u64(c, a);
}

/* The counter's value at the reading before this one: c less what the interval added. */
static uint64_t before(uint64_t c, uint64_t in_interval)
{
    if (c == RT_NULL_U64)
        return RT_NULL_U64;
    return in_interval != RT_NULL_U64 && in_interval <= c ? c - in_interval : c;
}

static rt_error accumulate_devs(rt_otlp_state *st, const rt_otlp_row *r, rt_otlp_dev *devs, size_t n, int kind)
{
    rt_error e = RT_OK;
    uint64_t prev_ns = unix_ns(r->ts - (r->interval > 0 ? r->interval : 0));
    for (size_t i = 0; i < n; i++) {
        rt_otlp_dev *d = &devs[i];
        bool fresh;
        rt_otlp_base *b = d->name ? find_base(st, kind, d->name, &fresh) : NULL;
        if (!b) {
            e = d->name ? RT_ERR_NOMEM : e;
            d->cum_a = d->cum_b = RT_NULL_U64;
            continue;
        }
        bool back = !fresh && ((d->a != RT_NULL_U64 && b->a != RT_NULL_U64 && d->a < b->a) ||
                               (d->b != RT_NULL_U64 && b->b != RT_NULL_U64 && d->b < b->b));
        if (fresh || back) { /* a new series: it starts at the reading before this one */
            b->a = before(d->a, d->ia);
            b->b = before(d->b, d->ib);
            b->start_ns = prev_ns;
        }
        d->cum_a = since(d->a, b->a);
        d->cum_b = since(d->b, b->b);
        d->start_ns = b->start_ns;
    }
    return e;
}

rt_error rt_otlp_accumulate(rt_otlp_state *st, rt_otlp_row *const *rows, size_t n)
{
    rt_error e = RT_OK;
    for (size_t i = 0; i < n; i++) {
        rt_otlp_row *r = rows[i];
        if (r->accumulated)
            continue;
        r->accumulated = true;
        if (!st->start_ns)
            st->start_ns = unix_ns(r->ts - (r->interval > 0 ? r->interval : 0));
        r->start_ns = st->start_ns;
        if (isfinite(r->utime)) {
            st->cpu_user += r->utime;
            r->cpu_user_cum = st->cpu_user;
        }
        if (isfinite(r->stime)) {
            st->cpu_system += r->stime;
            r->cpu_system_cum = st->cpu_system;
        }
        if (accumulate_devs(st, r, r->disk, r->ndisk, 0) != RT_OK ||
            accumulate_devs(st, r, r->net, r->nnet, 1) != RT_OK)
            e = RT_ERR_NOMEM;
    }
    return e;
}

void rt_otlp_state_free(rt_otlp_state *st)
{
    for (size_t i = 0; i < st->nbases; i++)
        free(st->bases[i].name);
    free(st->bases);
    memset(st, 0, sizeof *st);
}

/* ---- the JSON -------------------------------------------------------------------------------------- */

/* The data points of one metric being written. */
typedef struct pts {
    rt_ob *o;
    size_t n;
} pts;

/* Up to two attributes of a data point (key NULL: none). */
typedef struct attrs {
    const char *k1, *v1, *k2, *v2;
} attrs;

static void kv_str(rt_ob *o, const char *k, const char *v)
{
    rt_ob_lit(o, "{\"key\":");
    rt_ob_json_str(o, k);
    rt_ob_lit(o, ",\"value\":{\"stringValue\":");
    rt_ob_json_str(o, v ? v : "");
    rt_ob_lit(o, "}}");
}

/* Opens a data point: its attributes, start (0: none) and time. */
static void point_open(pts *p, const rt_otlp_row *r, uint64_t start_ns, attrs a)
{
    rt_ob *o = p->o;
    rt_ob_lit(o, p->n++ ? ",{" : "{");
    if (a.k1) {
        rt_ob_lit(o, "\"attributes\":[");
        kv_str(o, a.k1, a.v1);
        if (a.k2) {
            rt_ob_lit(o, ",");
            kv_str(o, a.k2, a.v2);
        }
        rt_ob_lit(o, "],");
    }
    if (start_ns) {
        rt_ob_lit(o, "\"startTimeUnixNano\":\"");
        rt_ob_u64(o, start_ns);
        rt_ob_lit(o, "\",");
    }
    rt_ob_lit(o, "\"timeUnixNano\":\"");
    rt_ob_u64(o, unix_ns(r->ts));
    rt_ob_lit(o, "\",");
}

/* A point of a double (none when v is null). */
static void pd(pts *p, const rt_otlp_row *r, uint64_t start_ns, attrs a, double v)
{
    if (!isfinite(v))
        return;
    point_open(p, r, start_ns, a);
    rt_ob_lit(p->o, "\"asDouble\":");
    rt_ob_fixed(p->o, v, 9, "0");
    rt_ob_lit(p->o, "}");
}

/* A point of an integer (none when v is RT_NULL_I64). */
static void pi(pts *p, const rt_otlp_row *r, uint64_t start_ns, attrs a, int64_t v)
{
    if (v == RT_NULL_I64)
        return;
    point_open(p, r, start_ns, a);
    rt_ob_lit(p->o, "\"asInt\":\"");
    rt_ob_i64(p->o, v);
    rt_ob_lit(p->o, "\"}");
}

static void pu(pts *p, const rt_otlp_row *r, uint64_t start_ns, attrs a, uint64_t v)
{
    if (v != RT_NULL_U64 && v <= (uint64_t)INT64_MAX)
        pi(p, r, start_ns, a, (int64_t)v);
}

/* MiB as whole bytes. */
static void pmib(pts *p, const rt_otlp_row *r, uint64_t start_ns, attrs a, double mib)
{
    if (isfinite(mib) && mib >= 0 && mib * MIB < 9e18)
        pi(p, r, start_ns, a, (int64_t)llround(mib * MIB));
}

static double ratio(double x, double of)
{
    return of > 0 ? x / of : NAN;
}

#define A0 ((attrs){0})
#define A1(k, v) ((attrs){.k1 = (k), .v1 = (v)})
#define A2(k, v, l, w) ((attrs){.k1 = (k), .v1 = (v), .k2 = (l), .v2 = (w)})

/* ---- the metrics, one emitter each ----------------------------------------------------------------- */

static void m_cpu_util(pts *p, const rt_otlp_row *r)
{
    pd(p, r, 0, A0, r->cores != RT_NULL_I64 ? ratio(r->cpu_cores, (double)r->cores) : NAN);
}
static void m_cpu_time(pts *p, const rt_otlp_row *r)
{
    pd(p, r, r->start_ns, A1("cpu.mode", "user"), r->cpu_user_cum);
    pd(p, r, r->start_ns, A1("cpu.mode", "system"), r->cpu_system_cum);
}
static void m_procs(pts *p, const rt_otlp_row *r)
{
    pi(p, r, r->start_ns, A1("process.status", "running"), r->procs_running);
}

static const char *const mem_states[] = {"used", "free", "cached", "buffers"};

static void mem_each(pts *p, const rt_otlp_row *r, bool util)
{
    const double v[] = {r->mem_used, r->mem_free, r->mem_cached, r->mem_buffers};
    for (size_t i = 0; i < RT_ARRAY_LEN(v); i++) {
        attrs a = A1("system.memory.state", mem_states[i]);
        if (util)
            pd(p, r, 0, a, ratio(v[i], r->mem_total));
        else
            pmib(p, r, r->start_ns, a, v[i]);
    }
}
static void m_mem_usage(pts *p, const rt_otlp_row *r)
{
    mem_each(p, r, false);
}
static void m_mem_util(pts *p, const rt_otlp_row *r)
{
    mem_each(p, r, true);
}
static void m_paging(pts *p, const rt_otlp_row *r)
{
    pmib(p, r, r->start_ns, A1("system.paging.state", "used"), r->swap_used);
    pmib(p, r, r->start_ns, A1("system.paging.state", "free"), r->swap_total - r->swap_used);
}
static void m_disk_io(pts *p, const rt_otlp_row *r)
{
    for (size_t i = 0; i < r->ndisk; i++) {
        const rt_otlp_dev *d = &r->disk[i];
        pu(p, r, d->start_ns, A2("system.device", d->name, "disk.io.direction", "read"), d->cum_a);
        pu(p, r, d->start_ns, A2("system.device", d->name, "disk.io.direction", "write"), d->cum_b);
    }
}
static void m_net_io(pts *p, const rt_otlp_row *r)
{
    for (size_t i = 0; i < r->nnet; i++) {
        const rt_otlp_dev *d = &r->net[i];
        pu(p, r, d->start_ns, A2("network.interface.name", d->name, "network.io.direction", "receive"), d->cum_a);
        pu(p, r, d->start_ns, A2("network.interface.name", d->name, "network.io.direction", "transmit"), d->cum_b);
    }
}
static void m_fs(pts *p, const rt_otlp_row *r)
{
    pu(p, r, r->start_ns, A1("system.filesystem.state", "used"), r->fs_used);
    pu(p, r, r->start_ns, A1("system.filesystem.state", "free"), r->fs_free);
}

/* Each GPU's figure what (0 utilization, 1 memory used, 2 memory total). */
static void gpu_each(pts *p, const rt_otlp_row *r, int what)
{
    for (size_t i = 0; i < r->ngpu; i++) {
        const rt_otlp_gpu *g = &r->gpu[i];
        char idx[24];
        snprintf(idx, sizeof idx, "gpu%zu", i);
        attrs a = A1("hw.id", g->id ? g->id : idx);
        if (what == 0)
            pd(p, r, 0, a, g->util_pct / 100.0);
        else
            pu(p, r, r->start_ns, a, what == 1 ? g->vram_used : g->vram_total);
    }
}
static void m_gpu_util(pts *p, const rt_otlp_row *r)
{
    gpu_each(p, r, 0);
}
static void m_gpu_mem(pts *p, const rt_otlp_row *r)
{
    gpu_each(p, r, 1);
}
static void m_gpu_limit(pts *p, const rt_otlp_row *r)
{
    gpu_each(p, r, 2);
}

/* The tree's figures (none without a tree). */
static void m_p_cpu_util(pts *p, const rt_otlp_row *r)
{
    if (!r->has_proc)
        return;
    pd(p, r, 0, A0, r->cores != RT_NULL_I64 ? ratio(r->p_cores, (double)r->cores) : NAN);
}
static void m_p_disk_io(pts *p, const rt_otlp_row *r)
{
    if (!r->has_proc)
        return;
    pu(p, r, r->start_ns, A1("disk.io.direction", "read"), r->p_read_total);
    pu(p, r, r->start_ns, A1("disk.io.direction", "write"), r->p_write_total);
}
static void m_p_gpu_util(pts *p, const rt_otlp_row *r)
{
    if (!r->has_proc)
        return;
    pd(p, r, 0, A0, r->p_gpu_util_pct / 100.0);
}

/* The tree's parts: a point per part, attribute resource_tracker.process.part. */
typedef enum part_fig { P_RSS, P_PRIVATE, P_SHARED, P_CORES, P_THREADS, P_VRAM } part_fig;

static void part_each(pts *p, const rt_otlp_row *r, part_fig what)
{
    static const char *const names[3] = {"main", "descendants", "combined"};
    if (!r->has_proc || !r->has_parts)
        return;
    for (int i = 0; i < 3; i++) {
        attrs a = A1("resource_tracker.process.part", names[i]);
        switch (what) {
        case P_RSS: pmib(p, r, r->start_ns, a, r->part_rss[i]); break;
        case P_PRIVATE: pmib(p, r, r->start_ns, a, r->part_private[i]); break;
        case P_SHARED: pmib(p, r, r->start_ns, a, r->part_shared[i]); break;
        case P_CORES: pd(p, r, 0, a, r->part_cores[i]); break;
        case P_THREADS: pi(p, r, r->start_ns, a, r->part_threads[i]); break;
        case P_VRAM: pu(p, r, r->start_ns, a, r->part_vram[i]); break;
        }
    }
}
/* One emitter per figure of the parts. */
#define PART_EMITTER(fn, fig)                                                                                       \
    static void fn(pts *p, const rt_otlp_row *r)                                                                    \
    {                                                                                                               \
        part_each(p, r, fig);                                                                                       \
    }
PART_EMITTER(m_part_rss, P_RSS)
PART_EMITTER(m_part_private, P_PRIVATE)
PART_EMITTER(m_part_shared, P_SHARED)
PART_EMITTER(m_part_cores, P_CORES)
PART_EMITTER(m_part_threads, P_THREADS)
PART_EMITTER(m_part_vram, P_VRAM)

typedef enum kind { GAUGE, COUNTER, UPDOWN } kind;
typedef enum vkind { V_DOUBLE, V_MIB, V_I64, V_U64 } vkind;
typedef enum owner { MACHINE, TREE, CGROUP } owner;

/* A metric: its emitter, or (emit NULL) the one figure of the row at offset `at`, of type v, a
 * point without attributes where the row has its owner (the tree, the cgroup). */
typedef struct mspec {
    const char *name, *unit, *desc;
    kind k;
    void (*emit)(pts *p, const rt_otlp_row *r);
    size_t at;
    vkind v;
    owner of;
} mspec;

#define F(field, type, who) offsetof(rt_otlp_row, field), type, who
#define E(fn) fn, 0, V_DOUBLE, MACHINE

/* The point of a one-figure metric m for row r. */
static void one_figure(pts *p, const mspec *m, const rt_otlp_row *r)
{
    if ((m->of == TREE && !r->has_proc) || (m->of == CGROUP && !r->has_cg))
        return;
    uint64_t start = m->k == GAUGE ? 0 : r->start_ns;
    const char *f = (const char *)r + m->at;
    double d;
    int64_t i;
    uint64_t u;
    switch (m->v) {
    case V_DOUBLE:
    case V_MIB:
        memcpy(&d, f, sizeof d);
        if (m->v == V_MIB)
            pmib(p, r, start, A0, d);
        else
            pd(p, r, start, A0, d);
        break;
    case V_I64:
        memcpy(&i, f, sizeof i);
        pi(p, r, start, A0, i);
        break;
    case V_U64:
        memcpy(&u, f, sizeof u);
        pu(p, r, start, A0, u);
        break;
    }
}

static const mspec metrics[] = {
    {"system.cpu.utilization", "1", "Busy share of all logical CPUs (0..1)", GAUGE, E(m_cpu_util)},
    {"system.cpu.time", "s", "CPU seconds of the machine by mode since tracking began", COUNTER, E(m_cpu_time)},
    {"system.cpu.logical.count", "{cpu}", "Online logical CPUs", UPDOWN, NULL, F(cores, V_I64, MACHINE)},
    {"system.process.count", "{process}", "Runnable processes", UPDOWN, E(m_procs)},
    {"system.memory.usage", "By", "Memory in use by state", UPDOWN, E(m_mem_usage)},
    {"system.memory.limit", "By", "Total memory", UPDOWN, NULL, F(mem_total, V_MIB, MACHINE)},
    {"system.memory.utilization", "1", "Share of total memory by state", GAUGE, E(m_mem_util)},
    {"system.paging.usage", "By", "Swap space by state", UPDOWN, E(m_paging)},
    {"system.disk.io", "By", "Bytes read and written by each disk since its series began", COUNTER, E(m_disk_io)},
    {"system.network.io", "By", "Bytes received and sent by each interface since its series began", COUNTER,
     E(m_net_io)},
    {"system.filesystem.usage", "By", "Filesystem space of the disks' filesystems by state", UPDOWN, E(m_fs)},
    {"hw.gpu.utilization", "1", "GPU utilization (0..1)", GAUGE, E(m_gpu_util)},
    {"hw.gpu.memory.usage", "By", "GPU memory in use", UPDOWN, E(m_gpu_mem)},
    {"hw.gpu.memory.limit", "By", "GPU memory in all", UPDOWN, E(m_gpu_limit)},
    {"process.cpu.time", "s", "CPU seconds of the tracked tree since tracking began", COUNTER, NULL, F(p_cpu_total, V_DOUBLE, TREE)},
    {"process.cpu.utilization", "1", "The tree's CPU use as a share of all logical CPUs", GAUGE, E(m_p_cpu_util)},
    {"process.memory.usage", "By", "Resident memory of the tree", UPDOWN, NULL, F(p_rss, V_MIB, TREE)},
    {"process.thread.count", "{thread}", "Threads of the tree", UPDOWN, NULL, F(threads, V_I64, TREE)},
    {"process.disk.io", "By", "Storage bytes of the tree since tracking began", COUNTER, E(m_p_disk_io)},
    {"resource_tracker.process.memory.pss", "By", "Proportional set size of the tree", UPDOWN, NULL, F(p_pss, V_MIB, TREE)},
    {"resource_tracker.process.memory.swap", "By", "Swapped-out memory of the tree", UPDOWN, NULL, F(p_swap, V_MIB, TREE)},
    {"resource_tracker.process.memory.rss_peak", "By", "The tree's highest resident memory so far", GAUGE,
     NULL, F(p_rss_peak, V_MIB, TREE)},
    {"resource_tracker.process.memory.peak", "By", "The kernel's peak memory charge of the job's cgroup", GAUGE,
     NULL, F(p_mem_peak, V_MIB, TREE)},
    {"resource_tracker.process.children", "{process}", "Live descendants of the tree's root", UPDOWN, NULL, F(children, V_I64, TREE)},
    {"resource_tracker.process.gpu.utilization", "1", "Busy GPUs of the tree", GAUGE, E(m_p_gpu_util)},
    {"resource_tracker.process.gpu.memory.usage", "By", "GPU memory of the tree", UPDOWN, NULL, F(p_gpu_vram, V_U64, TREE)},
    {"resource_tracker.process.part.memory.usage", "By",
     "Resident memory of a part of the tree (main: its root; descendants: the rest; combined: both)", UPDOWN,
     E(m_part_rss)},
    {"resource_tracker.process.part.memory.private", "By", "Private resident memory of a part of the tree", UPDOWN,
     E(m_part_private)},
    {"resource_tracker.process.part.memory.shared", "By", "Shared resident memory of a part, counted once", UPDOWN,
     E(m_part_shared)},
    {"resource_tracker.process.part.cpu.usage", "{cpu}", "A part's share of the tree's cores in the interval", GAUGE,
     E(m_part_cores)},
    {"resource_tracker.process.part.thread.count", "{thread}", "Threads of a part of the tree", UPDOWN,
     E(m_part_threads)},
    {"resource_tracker.process.part.gpu.memory.usage", "By", "GPU memory of a part of the tree", UPDOWN,
     E(m_part_vram)},
    {"resource_tracker.cgroup.cpu.time", "s", "CPU seconds of the cgroup since tracking began", COUNTER, NULL, F(cg_cpu_total, V_DOUBLE, CGROUP)},
    {"resource_tracker.cgroup.memory.usage", "By", "Memory charged to the cgroup", UPDOWN, NULL, F(cg_mem, V_MIB, CGROUP)},
    {"resource_tracker.cgroup.memory.peak", "By", "The cgroup's peak memory charge", GAUGE, NULL, F(cg_mem_peak, V_MIB, CGROUP)},
    {"resource_tracker.cgroup.memory.limit", "By", "The cgroup's memory limit", UPDOWN, NULL, F(cg_mem_limit, V_MIB, CGROUP)},
    {"resource_tracker.cgroup.cpu.quota", "{cpu}", "The cgroup's CPU quota in cores", GAUGE, NULL, F(cg_quota, V_DOUBLE, CGROUP)},
    {"resource_tracker.cgroup.cpu.throttled_time", "s", "Seconds the cgroup was throttled since tracking began",
     COUNTER, NULL, F(cg_throttled, V_DOUBLE, CGROUP)},
    {"resource_tracker.cgroup.pids", "{process}", "Tasks in the cgroup", UPDOWN, NULL, F(cg_pids, V_I64, CGROUP)},
    {"resource_tracker.cgroup.oom_kills", "{kill}", "Tasks the OOM killer killed in the cgroup since tracking began",
     COUNTER, NULL, F(cg_oom, V_U64, CGROUP)},
};

const char *rt_otlp_metric_name(size_t i)
{
    return i < RT_ARRAY_LEN(metrics) ? metrics[i].name : NULL;
}

/* Writes metric m over the rows, or nothing when no row has a point of it. */
static void metric(rt_ob *o, size_t *written, const mspec *m, rt_otlp_row *const *rows, size_t n)
{
    size_t mark = o->len;
    char last = o->last;
    rt_ob_lit(o, *written ? ",{\"name\":" : "{\"name\":");
    rt_ob_json_str(o, m->name);
    rt_ob_lit(o, ",\"description\":");
    rt_ob_json_str(o, m->desc);
    rt_ob_lit(o, ",\"unit\":");
    rt_ob_json_str(o, m->unit);
    if (m->k == GAUGE)
        rt_ob_lit(o, ",\"gauge\":{\"dataPoints\":[");
    else
        rt_ob_lit(o, m->k == COUNTER ? ",\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":true,\"dataPoints\":["
                                     : ",\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":false,\"dataPoints\":[");
    pts p = {.o = o};
    for (size_t i = 0; i < n; i++) {
        if (m->emit)
            m->emit(&p, rows[i]);
        else
            one_figure(&p, m, rows[i]);
    }
    rt_ob_lit(o, "]}}");
    if (p.n == 0) { /* rolled back: the text past mark is overwritten or never counted */
        o->len = mark;
        o->last = last;
    } else {
        ++*written;
    }
}

static void resource_attr(rt_ob *o, const rt_otlp_attr *a)
{
    rt_ob_lit(o, "{\"key\":");
    rt_ob_json_str(o, a->key);
    if (a->type == RT_OTLP_INT) {
        rt_ob_lit(o, ",\"value\":{\"intValue\":\"");
        rt_ob_i64(o, a->i);
        rt_ob_lit(o, "\"}}");
        return;
    }
    if (a->type == RT_OTLP_STR) {
        rt_ob_lit(o, ",\"value\":{\"stringValue\":");
        rt_ob_json_str(o, a->str ? a->str : "");
        rt_ob_lit(o, "}}");
        return;
    }
    rt_ob_lit(o, ",\"value\":{\"arrayValue\":{\"values\":[");
    for (size_t i = 0; a->strs && a->strs[i]; i++) {
        rt_ob_lit(o, i ? ",{\"stringValue\":" : "{\"stringValue\":");
        rt_ob_json_str(o, a->strs[i]);
        rt_ob_lit(o, "}");
    }
    rt_ob_lit(o, "]}}}");
}

size_t rt_otlp_format(const rt_otlp_attr *res, size_t nres, rt_otlp_row *const *rows, size_t n, char *buf,
                      size_t cap)
{
    rt_ob o = {.buf = buf, .cap = cap};
    rt_ob_lit(&o, "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[");
    for (size_t i = 0; i < nres; i++) {
        if (i)
            rt_ob_lit(&o, ",");
        resource_attr(&o, &res[i]);
    }
    rt_ob_lit(&o, "]},\"scopeMetrics\":[{\"scope\":{\"name\":\"resource-tracker\",\"version\":");
    rt_ob_json_str(&o, rt_version());
    rt_ob_lit(&o, "},\"metrics\":[");
    size_t written = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(metrics); i++)
        metric(&o, &written, &metrics[i], rows, n);
    rt_ob_lit(&o, "]}]}]}");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}
