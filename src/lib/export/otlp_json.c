/* otlp_json.c - the OTLP exporter's pure part: a sample copied into a compact row, the cumulative
 * series carried from push to push, and the ExportMetricsServiceRequest in OTLP/JSON (lowerCamelCase
 * fields, 64-bit integers as decimal strings, enums as integers) with the semantic conventions'
 * metric names where they exist and resource_tracker.* for the rest. The metrics of one member
 * each come from the schema (core/schema.c: name, kind, unit, description, attribute, place);
 * those made of several structs' members or of the devices are made here, in the same order. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/schema.h"
#include "../core/ob.h"
#include "otlp_int.h"

#define MIB 1048576.0
#define MAX_BASES 4096 /* disks and interfaces remembered; past it the table starts afresh */

/* ---- the plan: which members a row carries, and the metrics in order ----------------------------- */

/* The schema table of each struct a row carries. */
static const rt_fstruct *const tables[RT_OT_TABLES] = {
    [RT_OT_SAMPLE] = &rt_schema_sample,   [RT_OT_CPU] = &rt_schema_cpu,       [RT_OT_MEMORY] = &rt_schema_memory,
    [RT_OT_PROCESS] = &rt_schema_process, [RT_OT_MAIN] = &rt_schema_part,     [RT_OT_DESC] = &rt_schema_part,
    [RT_OT_COMB] = &rt_schema_part,       [RT_OT_CGROUP] = &rt_schema_cgroup,
};

/* The members the metrics made by hand read (besides the devices), found by name. */
typedef enum input {
    IN_CPU_BUSY,
    IN_CORES,
    IN_UTIME,
    IN_STIME,
    IN_MEM_USED,
    IN_MEM_FREE,
    IN_MEM_CACHED,
    IN_MEM_BUFFERS,
    IN_MEM_TOTAL,
    IN_SWAP_USED,
    IN_SWAP_TOTAL,
    IN_P_CORES,
    IN_P_PID,
    N_INPUTS
} input;

static const struct {
    int t;
    const char *name;
} inputs[N_INPUTS] = {
    [IN_CPU_BUSY] = {RT_OT_CPU, "utilization_pct"},
    [IN_CORES] = {RT_OT_CPU, "core_count"},
    [IN_UTIME] = {RT_OT_CPU, "utime_secs"},
    [IN_STIME] = {RT_OT_CPU, "stime_secs"},
    [IN_MEM_USED] = {RT_OT_MEMORY, "used_mib"},
    [IN_MEM_FREE] = {RT_OT_MEMORY, "free_mib"},
    [IN_MEM_CACHED] = {RT_OT_MEMORY, "cached_mib"},
    [IN_MEM_BUFFERS] = {RT_OT_MEMORY, "buffers_mib"},
    [IN_MEM_TOTAL] = {RT_OT_MEMORY, "total_mib"},
    [IN_SWAP_USED] = {RT_OT_MEMORY, "swap_used_mib"},
    [IN_SWAP_TOTAL] = {RT_OT_MEMORY, "swap_total_mib"},
    [IN_P_CORES] = {RT_OT_PROCESS, "cores_used"},
    [IN_P_PID] = {RT_OT_PROCESS, "pid"},
};

struct pts;
typedef struct hand {
    int seq; /* its place among the members (the schema's numbering) */
    const char *name, *unit, *desc;
    rt_otlp_kind kind;
    void (*emit)(struct pts *p, const rt_otlp_row *r);
} hand;

enum { N_HANDS = 27, MAX_MEMBERS = 64, MAX_METRICS = 64 };
static const hand hands[N_HANDS]; /* the metrics made by hand, below */

/* A metric: made by hand, or the members fi[0..n) of table t (RT_OT_MAIN: the three parts). */
typedef struct mentry {
    const hand *h;
    int t;
    size_t fi[4], n;
} mentry;

/* A member at its place: of table t, field i, or a hand-made metric. */
typedef struct member {
    int used, t;
    size_t i;
    const hand *h;
} member;

static struct plan {
    int16_t slot[RT_OT_TABLES][RT_SCHEMA_MAX_FIELDS]; /* -1: not carried */
    size_t nslots;
    struct copy {
        size_t off, size; /* of the member in its struct */
        int16_t slot;
    } copy[RT_OT_TABLES * RT_SCHEMA_MAX_FIELDS]; /* the carried members, table by table */
    size_t copy_end[RT_OT_TABLES];               /* table t's are copy[copy_end[t - 1] .. copy_end[t]) */
    int16_t in[N_INPUTS];
    rt_field_type in_type[N_INPUTS];
    mentry m[MAX_METRICS];
    size_t nm;
    char problem[200];
} plan;

static pthread_once_t plan_once = PTHREAD_ONCE_INIT;

static void plan_problem(const char *what, const char *name)
{
    if (!plan.problem[0])
        snprintf(plan.problem, sizeof plan.problem, "%s: %s", what, name ? name : "(unnamed)");
}

static int16_t carry(int t, size_t i)
{
    if (plan.slot[t][i] < 0) {
        if (tables[t]->f[i].type == RT_FIELD_STRING)
            plan_problem("a string cannot be carried", tables[t]->f[i].name);
        else
            plan.slot[t][i] = (int16_t)plan.nslots++;
    }
    return plan.slot[t][i];
}

static void plan_build(void)
{
    memset(plan.slot, 0xff, sizeof plan.slot);
    /* the members, by their place: a schema member (t, i) or a hand-made metric */
    member at[MAX_MEMBERS] = {{0}};
    for (int t = 0; t < RT_OT_TABLES; t++)
        for (size_t i = 0; i < tables[t]->n && i < RT_SCHEMA_MAX_FIELDS; i++) {
            const rt_fotlp *o = &tables[t]->f[i].otlp;
            if (!o->name)
                continue;
            carry(t, i);
            if (t == RT_OT_DESC || t == RT_OT_COMB)
                continue; /* the parts are listed once, as main's */
            if (o->seq < 0 || o->seq >= MAX_MEMBERS || at[o->seq].used)
                plan_problem("a place taken twice or out of range", o->name);
            else
                at[o->seq] = (member){.used = 1, .t = t, .i = i};
        }
    for (size_t k = 0; k < N_HANDS; k++) {
        const hand *h = &hands[k];
        if (h->seq < 0 || h->seq >= MAX_MEMBERS || at[h->seq].used)
            plan_problem("a place taken twice or out of range", h->name);
        else
            at[h->seq] = (member){.used = 1, .h = h};
    }
    for (int k = 0; k < N_INPUTS; k++) {
        plan.in[k] = -1;
        const rt_fstruct *st = tables[inputs[k].t];
        for (size_t i = 0; i < st->n && i < RT_SCHEMA_MAX_FIELDS; i++)
            if (strcmp(st->f[i].name, inputs[k].name) == 0) {
                plan.in[k] = carry(inputs[k].t, i);
                plan.in_type[k] = st->f[i].type;
            }
        if (plan.in[k] < 0)
            plan_problem("an input not in the schema", inputs[k].name);
    }
    /* the places run 0, 1, 2, ...; consecutive members of one name make a metric */
    size_t places = 0;
    while (places < MAX_MEMBERS && at[places].used)
        places++;
    for (size_t s = places; s < MAX_MEMBERS; s++)
        if (at[s].used)
            plan_problem("a gap in the places before", at[s].h ? at[s].h->name : tables[at[s].t]->f[at[s].i].otlp.name);
    for (size_t s = 0; s < places; s++) {
        mentry *last = plan.nm ? &plan.m[plan.nm - 1] : NULL;
        if (at[s].h) {
            if (plan.nm < MAX_METRICS)
                plan.m[plan.nm++] = (mentry){.h = at[s].h};
            continue;
        }
        const rt_fotlp *o = &tables[at[s].t]->f[at[s].i].otlp;
        if (last && !last->h && last->t == at[s].t && last->n < RT_ARRAY_LEN(last->fi) &&
            strcmp(tables[last->t]->f[last->fi[0]].otlp.name, o->name) == 0) {
            const rt_fotlp *first = &tables[last->t]->f[last->fi[0]].otlp;
            if (o->kind != first->kind || strcmp(o->unit, first->unit) != 0 || !o->key || !first->key)
                plan_problem("members of one metric differ in kind or unit, or lack an attribute", o->name);
            last->fi[last->n++] = at[s].i;
        } else if (plan.nm < MAX_METRICS) {
            if (!o->unit || !o->desc || !o->kind)
                plan_problem("a metric without unit, description or kind", o->name);
            plan.m[plan.nm++] = (mentry){.t = at[s].t, .fi = {at[s].i}, .n = 1};
        } else {
            plan_problem("too many metrics", o->name);
        }
    }
    size_t n = 0; /* the copies a row makes, in table order */
    for (int t = 0; t < RT_OT_TABLES; t++) {
        for (size_t i = 0; i < tables[t]->n && i < RT_SCHEMA_MAX_FIELDS; i++)
            if (plan.slot[t][i] >= 0)
                plan.copy[n++] = (struct copy){tables[t]->f[i].off, tables[t]->f[i].size, plan.slot[t][i]};
        plan.copy_end[t] = n;
    }
}

static const struct plan *plan_get(void)
{
    pthread_once(&plan_once, plan_build);
    return &plan;
}

const char *rt_otlp_plan_problem(void)
{
    return plan_get()->problem;
}

/* ---- the row ------------------------------------------------------------------------------------- */

static size_t str_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

size_t rt_otlp_row_size(const rt_sample *s)
{
    size_t n = sizeof(rt_otlp_row) + plan_get()->nslots * sizeof(uint64_t);
    for (size_t i = 0; s->disk && i < s->disk_count; i++)
        n += s->disk[i] ? sizeof(rt_otlp_dev) + str_bytes(s->disk[i]->device) : 0;
    for (size_t i = 0; s->network && i < s->network_count; i++)
        n += s->network[i] ? sizeof(rt_otlp_dev) + str_bytes(s->network[i]->interface) : 0;
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        n += g ? sizeof(rt_otlp_gpu) + str_bytes(g->uuid ? g->uuid : g->host_id) : 0;
        for (size_t k = 0; g && g->mig && k < g->mig_count; k++)
            n += g->mig[k] ? sizeof(rt_otlp_mig) + str_bytes(g->mig[k]->uuid) : 0;
    }
    const rt_energy *e = s->energy;
    if (e) {
        n += str_bytes(e->method) + str_bytes(e->process_method);
        for (size_t i = 0; e->domain && i < e->domain_count; i++) {
            const rt_energy_domain *d = e->domain[i];
            if (d)
                n += sizeof(rt_otlp_edom) + str_bytes(d->name) + str_bytes(d->kind) + str_bytes(d->source) +
                     str_bytes(d->method) + str_bytes(d->device);
        }
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

/* The carried members of struct src (table t) into the row's slots. */
static void carry_struct(rt_otlp_row *r, int t, const void *src)
{
    r->have[t] = src != NULL;
    if (!src)
        return;
    for (size_t c = t ? plan.copy_end[t - 1] : 0; c < plan.copy_end[t]; c++) {
        const char *m = (const char *)src + plan.copy[c].off;
        if (plan.copy[c].size == sizeof(uint64_t)) /* doubles and 64-bit integers; else a flag (test_schema) */
            memcpy(&r->fig[plan.copy[c].slot], m, sizeof(uint64_t));
        else
            memcpy(&r->fig[plan.copy[c].slot], m, sizeof(int));
    }
}

/* A carried member as a double: NaN when null or when the row lacks its struct. */
static double fig_num(const rt_otlp_row *r, int t, int k, rt_field_type type)
{
    if (!r->have[t] || k < 0)
        return NAN;
    return rt_schema_num(type, &r->fig[k]);
}

/* What a hand-made metric reads. */
static double in(const rt_otlp_row *r, input x)
{
    return fig_num(r, inputs[x].t, plan.in[x], plan.in_type[x]);
}

int64_t rt_otlp_row_pid(const rt_otlp_row *r)
{
    double pid = in(r, IN_P_PID);
    return pid > 0 ? (int64_t)pid : 0;
}

rt_otlp_row *rt_otlp_row_new(const rt_sample *s)
{
    rt_otlp_row *r = malloc(rt_otlp_row_size(s));
    if (!r)
        return NULL;
    memset(r, 0, sizeof *r);
    r->ts = s->timestamp_secs;
    r->interval = s->interval_secs;
    r->fig = (uint64_t *)(void *)(r + 1);
    const rt_process *pr = s->process;
    carry_struct(r, RT_OT_SAMPLE, s);
    carry_struct(r, RT_OT_CPU, s->cpu);
    carry_struct(r, RT_OT_MEMORY, s->memory);
    carry_struct(r, RT_OT_PROCESS, pr);
    bool parts = pr && pr->main && pr->descendants && pr->combined;
    carry_struct(r, RT_OT_MAIN, parts ? pr->main : NULL);
    carry_struct(r, RT_OT_DESC, parts ? pr->descendants : NULL);
    carry_struct(r, RT_OT_COMB, parts ? pr->combined : NULL);
    carry_struct(r, RT_OT_CGROUP, pr ? pr->cgroup : s->cgroup);
    r->cpu_user_cum = r->cpu_system_cum = NAN;

    r->disk = (rt_otlp_dev *)(void *)(r->fig + plan.nslots);
    for (size_t i = 0; s->disk && i < s->disk_count; i++)
        r->ndisk += s->disk[i] != NULL;
    r->net = r->disk + r->ndisk;
    for (size_t i = 0; s->network && i < s->network_count; i++)
        r->nnet += s->network[i] != NULL;
    r->gpu = (rt_otlp_gpu *)(void *)(r->net + r->nnet);
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++)
        r->ngpu += s->gpu[i] != NULL;
    const rt_energy *e = s->energy;
    r->energy.dom = (rt_otlp_edom *)(void *)(r->gpu + r->ngpu);
    for (size_t i = 0; e && e->domain && i < e->domain_count; i++)
        r->energy.ndom += e->domain[i] != NULL;
    r->mig = (rt_otlp_mig *)(void *)(r->energy.dom + r->energy.ndom);
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++)
        for (size_t k = 0; s->gpu[i] && s->gpu[i]->mig && k < s->gpu[i]->mig_count; k++)
            r->nmig += s->gpu[i]->mig[k] != NULL;
    char *p = (char *)(r->mig + r->nmig);
    size_t k = 0;
    for (size_t i = 0; s->disk && i < s->disk_count; i++) {
        const rt_disk *d = s->disk[i];
        if (d)
            r->disk[k++] = (rt_otlp_dev){.name = put_str(&p, d->device),
                                         .a = d->read_bytes_total,
                                         .b = d->write_bytes_total,
                                         .ia = d->read_bytes,
                                         .ib = d->write_bytes};
    }
    k = 0;
    for (size_t i = 0; s->network && i < s->network_count; i++) {
        const rt_net_iface *n = s->network[i];
        if (n)
            r->net[k++] = (rt_otlp_dev){.name = put_str(&p, n->interface),
                                        .a = n->rx_bytes_total,
                                        .b = n->tx_bytes_total,
                                        .ia = n->rx_bytes,
                                        .ib = n->tx_bytes};
    }
    k = 0;
    size_t m = 0;
    for (size_t i = 0; s->gpu && i < s->gpu_count; i++) {
        const rt_gpu *g = s->gpu[i];
        if (!g)
            continue;
        rt_otlp_gpu *o = &r->gpu[k++];
        *o = (rt_otlp_gpu){.id = put_str(&p, g->uuid ? g->uuid : g->host_id),
                           .util_pct = g->utilization_pct,
                           .vram_used = g->vram_used_bytes,
                           .vram_total = g->vram_total_bytes,
                           .power_thr = g->power_throttled_secs,
                           .thermal_thr = g->thermal_throttled_secs,
                           .work = g->work,
                           .mig = r->mig + m,
                           .io_cum = {NAN, NAN, NAN, NAN}};
        for (size_t j = 0; g->mig && j < g->mig_count; j++)
            if (g->mig[j])
                r->mig[m++] = (rt_otlp_mig){put_str(&p, g->mig[j]->uuid), g->mig[j]->gpu_instance_id, g->mig[j]->work};
        o->nmig = (size_t)(r->mig + m - o->mig);
    }
    static const rt_gpu_work none = RT_GPU_WORK_NULL;
    r->p_work = pr ? pr->gpu_work : none;
    r->p_work_scope = !pr || !pr->gpu_work_scope ? -1 : strcmp(pr->gpu_work_scope, "device") == 0 ? 1 : 0;
    if (s->request)
        rt_request_keep(&r->req, s->request);
    r->have_energy = e != NULL;
    r->energy.joules_total = r->energy.watts = r->energy.p_joules_total = r->energy.p_watts = NAN;
    if (e) {
        r->energy.joules_total = e->energy_joules_total;
        r->energy.watts = e->power_watts;
        r->energy.p_joules_total = e->process_energy_joules_total;
        r->energy.p_watts = e->process_power_watts;
        r->energy.method = put_str(&p, e->method);
        r->energy.p_method = put_str(&p, e->process_method);
    }
    k = 0;
    for (size_t i = 0; e && e->domain && i < e->domain_count; i++) {
        const rt_energy_domain *d = e->domain[i];
        if (d)
            r->energy.dom[k++] = (rt_otlp_edom){.name = put_str(&p, d->name),
                                                .kind = put_str(&p, d->kind),
                                                .source = put_str(&p, d->source),
                                                .method = put_str(&p, d->method),
                                                .device = put_str(&p, d->device),
                                                .joules_total = d->energy_joules_total,
                                                .watts = d->power_watts,
                                                .p_joules_total = d->process_energy_joules_total};
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

/* The PCIe and NVLink bytes of each GPU of r since its series began: its rates (GPM) times the
 * row's interval added to what its base holds; NaN until a rate came. */
static rt_error accumulate_io(rt_otlp_state *st, rt_otlp_row *r)
{
    rt_error e = RT_OK;
    uint64_t prev_ns = unix_ns(r->ts - (r->interval > 0 ? r->interval : 0));
    for (size_t i = 0; i < r->ngpu; i++) {
        rt_otlp_gpu *g = &r->gpu[i];
        const double rate[4] = {g->work.pcie_tx_bytes_per_sec, g->work.pcie_rx_bytes_per_sec,
                                g->work.nvlink_tx_bytes_per_sec, g->work.nvlink_rx_bytes_per_sec};
        bool any = false;
        for (size_t k = 0; k < 4; k++)
            any |= isfinite(rate[k]);
        bool fresh;
        rt_otlp_base *b = g->id && any ? find_base(st, 2, g->id, &fresh) : NULL;
        if (!b) {
            e = g->id && any ? RT_ERR_NOMEM : e;
            continue;
        }
        if (fresh) {
            b->start_ns = prev_ns;
            for (size_t k = 0; k < 4; k++)
                b->io[k] = NAN;
        }
        for (size_t k = 0; k < 4; k++) {
            if (isfinite(rate[k]) && rate[k] >= 0 && r->interval > 0)
                b->io[k] = (isnan(b->io[k]) ? 0 : b->io[k]) + rate[k] * r->interval;
            g->io_cum[k] = b->io[k];
        }
        g->io_start_ns = b->start_ns;
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
        double utime = in(r, IN_UTIME), stime = in(r, IN_STIME);
        if (isfinite(utime)) {
            st->cpu_user += utime;
            r->cpu_user_cum = st->cpu_user;
        }
        if (isfinite(stime)) {
            st->cpu_system += stime;
            r->cpu_system_cum = st->cpu_system;
        }
        if (accumulate_devs(st, r, r->disk, r->ndisk, 0) != RT_OK ||
            accumulate_devs(st, r, r->net, r->nnet, 1) != RT_OK || accumulate_io(st, r) != RT_OK)
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

/* The attributes of a data point: kv[0..n), then up to two more (key NULL: none). */
typedef struct attrs {
    const char *k1, *v1, *k2, *v2;
    const rt_kv *kv;
    size_t n;
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
    if (a.k1 || a.n) {
        rt_ob_lit(o, "\"attributes\":[");
        for (size_t i = 0; i < a.n; i++) {
            if (i)
                rt_ob_lit(o, ",");
            kv_str(o, a.kv[i].key, a.kv[i].value);
        }
        if (a.k1) {
            if (a.n)
                rt_ob_lit(o, ",");
            kv_str(o, a.k1, a.v1);
        }
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

/* ---- the metrics made by hand: figures of several members, or of the devices --------------------- */

static void m_cpu_util(pts *p, const rt_otlp_row *r)
{
    pd(p, r, 0, A0, ratio(in(r, IN_CPU_BUSY), in(r, IN_CORES)));
}
static void m_cpu_time(pts *p, const rt_otlp_row *r)
{
    pd(p, r, r->start_ns, A1("cpu.mode", "user"), r->cpu_user_cum);
    pd(p, r, r->start_ns, A1("cpu.mode", "system"), r->cpu_system_cum);
}
static void m_cpu_count(pts *p, const rt_otlp_row *r)
{
    double n = in(r, IN_CORES); /* 0: not seen */
    if (n > 0)
        pi(p, r, r->start_ns, A0, (int64_t)n);
}
static void m_mem_util(pts *p, const rt_otlp_row *r)
{
    static const char *const states[] = {"used", "free", "cached", "buffers"};
    const input v[] = {IN_MEM_USED, IN_MEM_FREE, IN_MEM_CACHED, IN_MEM_BUFFERS};
    for (size_t i = 0; i < RT_ARRAY_LEN(v); i++)
        pd(p, r, 0, A1("system.memory.state", states[i]), ratio(in(r, v[i]), in(r, IN_MEM_TOTAL)));
}
static void m_paging(pts *p, const rt_otlp_row *r)
{
    double used = in(r, IN_SWAP_USED);
    pmib(p, r, r->start_ns, A1("system.paging.state", "used"), used);
    pmib(p, r, r->start_ns, A1("system.paging.state", "free"), in(r, IN_SWAP_TOTAL) - used);
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
/* GPU i's hw.id: its uuid or PCI address, else "gpuI" (written into idx). */
static const char *gpu_id(const rt_otlp_gpu *g, size_t i, char idx[24])
{
    snprintf(idx, 24, "gpu%zu", i);
    return g->id ? g->id : idx;
}

/* Each GPU's figure what (0 utilization, 1 memory used, 2 memory total). */
static void gpu_each(pts *p, const rt_otlp_row *r, int what)
{
    for (size_t i = 0; i < r->ngpu; i++) {
        const rt_otlp_gpu *g = &r->gpu[i];
        char idx[24];
        attrs a = A1("hw.id", gpu_id(g, i, idx));
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

/* a with the row's phase as one more attribute (the tree's points; nothing when none is open) */
static attrs with_phase(attrs a, const rt_otlp_row *r)
{
    if (!r->phase)
        return a;
    if (!a.k1) {
        a.k1 = "resource_tracker.phase";
        a.v1 = r->phase;
        return a;
    }
    a.k2 = "resource_tracker.phase";
    a.v2 = r->phase;
    return a;
}

static void m_p_cpu_util(pts *p, const rt_otlp_row *r)
{
    pd(p, r, 0, with_phase(A0, r), ratio(in(r, IN_P_CORES), in(r, IN_CORES)));
}

/* ---- energy: the hardware semantic conventions' hw.energy, hw.power, hw.host.* -------- */

#define K_METHOD "resource_tracker.energy.method"
#define K_SOURCE "resource_tracker.energy.source"

/* The semantic conventions' hw.type of a domain's kind: the CPU's domains "cpu", DRAM "memory", a
 * GPU "gpu", a meter of the whole machine (psys, platform) "enclosure". */
static const char *hw_type(const char *kind)
{
    if (!strcmp(kind, "dram"))
        return "memory";
    if (!strcmp(kind, "gpu"))
        return "gpu";
    if (!strcmp(kind, "psys") || !strcmp(kind, "platform"))
        return "enclosure";
    return "cpu"; /* package, core, uncore, cpu (the estimate) */
}

/* A domain's attributes into kv (5): hw.id (a GPU's: its id as hw.gpu.* have it, else the domain's
 * name), hw.type, hw.name (the domain's name), the method and the source. 0 for a domain that
 * lacks a name, kind or method (no point: never a number without its method). */
static size_t dom_attrs(const rt_otlp_edom *d, rt_kv kv[5])
{
    if (!d->name || !d->kind || !d->method)
        return 0;
    kv[0] = (rt_kv){"hw.id", d->device && !strcmp(d->kind, "gpu") ? d->device : d->name};
    kv[1] = (rt_kv){"hw.type", hw_type(d->kind)};
    kv[2] = (rt_kv){"hw.name", d->name};
    kv[3] = (rt_kv){K_METHOD, d->method};
    kv[4] = (rt_kv){K_SOURCE, d->source ? d->source : ""};
    return 5;
}

/* Each domain's figure what (0 energy, 1 power, 2 the tree's energy: with the phase). */
static void dom_each(pts *p, const rt_otlp_row *r, int what)
{
    for (size_t i = 0; i < r->energy.ndom; i++) {
        const rt_otlp_edom *d = &r->energy.dom[i];
        rt_kv kv[5];
        attrs a = {.kv = kv, .n = dom_attrs(d, kv)};
        if (!a.n)
            continue;
        if (what == 0)
            pd(p, r, r->start_ns, a, d->joules_total);
        else if (what == 1)
            pd(p, r, 0, a, d->watts);
        else
            pd(p, r, r->start_ns, with_phase(a, r), d->p_joules_total);
    }
}
static void m_energy(pts *p, const rt_otlp_row *r)
{
    dom_each(p, r, 0);
}
static void m_power(pts *p, const rt_otlp_row *r)
{
    dom_each(p, r, 1);
}
static void m_p_dom_energy(pts *p, const rt_otlp_row *r)
{
    dom_each(p, r, 2);
}
static void m_host_energy(pts *p, const rt_otlp_row *r)
{
    if (r->energy.method)
        pd(p, r, r->start_ns, A2("hw.id", "host", K_METHOD, r->energy.method), r->energy.joules_total);
}
static void m_host_power(pts *p, const rt_otlp_row *r)
{
    if (r->energy.method)
        pd(p, r, 0, A2("hw.id", "host", K_METHOD, r->energy.method), r->energy.watts);
}
static void m_p_energy(pts *p, const rt_otlp_row *r)
{
    if (r->energy.p_method)
        pd(p, r, r->start_ns, with_phase(A1(K_METHOD, r->energy.p_method), r), r->energy.p_joules_total);
}
static void m_p_power(pts *p, const rt_otlp_row *r)
{
    if (r->energy.p_method)
        pd(p, r, 0, with_phase(A1(K_METHOD, r->energy.p_method), r), r->energy.p_watts);
}
/* Each GPU's seconds at its power cap and too hot, since tracking began. */
static void m_gpu_throttle(pts *p, const rt_otlp_row *r)
{
    for (size_t i = 0; i < r->ngpu; i++) {
        const rt_otlp_gpu *g = &r->gpu[i];
        char idx[24];
        const char *id = gpu_id(g, i, idx);
        pd(p, r, r->start_ns, A2("hw.id", id, "resource_tracker.gpu.throttle.reason", "power"), g->power_thr);
        pd(p, r, r->start_ns, A2("hw.id", id, "resource_tracker.gpu.throttle.reason", "thermal"), g->thermal_thr);
    }
}

/* ---- what the GPUs did (0.19, NVML GPM) ------------------------------------------------- */

#define K_UNIT "resource_tracker.gpu.unit"

/* rt_gpu_work's percents in order, each one's unit as the attribute names it. */
static const char *const work_units[] = {"sm",          "sm_occupancy", "tensor", "tensor_hmma", "tensor_imma",
                                         "tensor_dfma", "dram",         "fp64",   "fp32",        "fp16"};

/* The figure k of w (rt_gpu_work's members in order). */
static double work_at(const rt_gpu_work *w, size_t k)
{
    double v[sizeof *w / sizeof(double)];
    memcpy(v, w, sizeof v);
    return v[k];
}

/* The points of w's percents as ratios (0..1), each with kv[0..n) and its unit. */
static void work_points(pts *p, const rt_otlp_row *r, const rt_gpu_work *w, rt_kv *kv, size_t n)
{
    for (size_t k = 0; k < RT_ARRAY_LEN(work_units); k++) {
        kv[n] = (rt_kv){K_UNIT, work_units[k]};
        pd(p, r, 0, (attrs){.kv = kv, .n = n + 1}, work_at(w, k) / 100.0);
    }
}

/* Each GPU's work, then each MIG instance's (hw.id its MIG UUID, hw.parent its GPU's). */
static void m_gpu_activity(pts *p, const rt_otlp_row *r)
{
    for (size_t i = 0; i < r->ngpu; i++) {
        const rt_otlp_gpu *g = &r->gpu[i];
        char idx[24];
        const char *id = gpu_id(g, i, idx);
        rt_kv kv[4] = {{"hw.id", id}};
        work_points(p, r, &g->work, kv, 1);
        for (size_t k = 0; k < g->nmig; k++) {
            char gi[24], mid[96]; /* gi: an int64 in decimal, 20 bytes at most */
            snprintf(gi, sizeof gi, "%lld", (long long)g->mig[k].gi);
            snprintf(mid, sizeof mid, "%.60s/gi%.20s", id, gi); /* a MIG device without a UUID */
            kv[0] = (rt_kv){"hw.id", g->mig[k].uuid ? g->mig[k].uuid : mid};
            kv[1] = (rt_kv){"hw.parent", id};
            kv[2] = (rt_kv){"resource_tracker.gpu.instance", gi};
            work_points(p, r, &g->mig[k].work, kv, 3);
        }
    }
}

static const char *const io_link[4] = {"pcie", "pcie", "nvlink", "nvlink"};
static const char *const io_dir[4] = {"transmit", "receive", "transmit", "receive"};

/* Each GPU's PCIe and NVLink bytes since its series began (hw.gpu.io), by direction and link. */
static void m_gpu_io(pts *p, const rt_otlp_row *r)
{
    for (size_t i = 0; i < r->ngpu; i++) {
        const rt_otlp_gpu *g = &r->gpu[i];
        for (size_t k = 0; g->id && k < 4; k++) {
            rt_kv kv[3] = {{"hw.id", g->id}, {"network.io.direction", io_dir[k]}, {"resource_tracker.gpu.link", io_link[k]}};
            pd(p, r, g->io_start_ns, (attrs){.kv = kv, .n = 3}, g->io_cum[k]);
        }
    }
}

/* The tree's GPUs' work, with whose it is (resource_tracker.gpu.work_scope: job, device) and the
 * phase. */
static void m_p_gpu_activity(pts *p, const rt_otlp_row *r)
{
    if (r->p_work_scope < 0)
        return;
    rt_kv kv[3] = {{"resource_tracker.gpu.work_scope", r->p_work_scope ? "device" : "job"}};
    size_t n = 1;
    if (r->phase)
        kv[n++] = (rt_kv){"resource_tracker.phase", r->phase};
    work_points(p, r, &r->p_work, kv, n);
}

/* The tree's GPUs' PCIe and NVLink rates (their mean over the GPUs), by direction and link. */
static void m_p_gpu_io(pts *p, const rt_otlp_row *r)
{
    if (r->p_work_scope < 0)
        return;
    const rt_gpu_work *w = &r->p_work;
    const double rate[4] = {w->pcie_tx_bytes_per_sec, w->pcie_rx_bytes_per_sec, w->nvlink_tx_bytes_per_sec,
                            w->nvlink_rx_bytes_per_sec};
    for (size_t k = 0; k < 4; k++) {
        rt_kv kv[4] = {{"network.io.direction", io_dir[k]}, {"resource_tracker.gpu.link", io_link[k]},
                       {"resource_tracker.gpu.work_scope", r->p_work_scope ? "device" : "job"},
                       {"resource_tracker.phase", r->phase}};
        pd(p, r, 0, (attrs){.kv = kv, .n = r->phase ? 4 : 3}, rate[k]);
    }
}

/* ---- what the job was given: each figure where it was said, with what said it ---------- */

static void requested(pts *p, const rt_otlp_row *r, const char *from, double v)
{
    if (r->req.set && from)
        pd(p, r, 0,
           r->req.r.place ? A2("resource_tracker.request.from", from, "resource_tracker.place", r->req.r.place)
                          : A1("resource_tracker.request.from", from),
           v);
}
static void m_req_cpu(pts *p, const rt_otlp_row *r)
{
    requested(p, r, r->req.r.cpu_from, r->req.r.cpu_cores);
}
static void m_req_mem(pts *p, const rt_otlp_row *r)
{
    requested(p, r, r->req.r.memory_from, r->req.r.memory_mib * 1048576.0);
}
static void m_req_gpu(pts *p, const rt_otlp_row *r)
{
    requested(p, r, r->req.r.gpus_from, r->req.r.gpus);
}
static void m_time_limit(pts *p, const rt_otlp_row *r)
{
    requested(p, r, r->req.r.time_limit_from, r->req.r.time_limit_secs);
}

static const hand hands[N_HANDS] = {
    {0, "system.cpu.utilization", "1", "Busy share of all logical CPUs (0..1)", RT_OTLP_GAUGE, m_cpu_util},
    {1, "system.cpu.time", "s", "CPU seconds of the machine by mode since tracking began", RT_OTLP_COUNTER, m_cpu_time},
    {2, "system.cpu.logical.count", "{cpu}", "Online logical CPUs", RT_OTLP_UPDOWN, m_cpu_count},
    {9, "system.memory.utilization", "1", "Share of total memory by state", RT_OTLP_GAUGE, m_mem_util},
    {10, "system.paging.usage", "By", "Swap space by state", RT_OTLP_UPDOWN, m_paging},
    {11, "system.disk.io", "By", "Bytes read and written by each disk since its series began", RT_OTLP_COUNTER,
     m_disk_io},
    {12, "system.network.io", "By", "Bytes received and sent by each interface since its series began", RT_OTLP_COUNTER,
     m_net_io},
    {15, "hw.gpu.utilization", "1", "GPU utilization (0..1)", RT_OTLP_GAUGE, m_gpu_util},
    {16, "hw.gpu.memory.usage", "By", "GPU memory in use", RT_OTLP_UPDOWN, m_gpu_mem},
    {17, "hw.gpu.memory.limit", "By", "GPU memory in all", RT_OTLP_UPDOWN, m_gpu_limit},
    {19, "process.cpu.utilization", "1", "The tree's CPU use as a share of all logical CPUs", RT_OTLP_GAUGE,
     m_p_cpu_util},
    {45, "hw.energy", "J", "Energy of each domain since tracking began (domains overlap: a package holds its core "
     "and uncore)", RT_OTLP_COUNTER, m_energy},
    {46, "hw.power", "W", "Mean power of each domain over the sample's interval", RT_OTLP_GAUGE, m_power},
    {47, "hw.host.energy", "J", "Energy of the machine since tracking began", RT_OTLP_COUNTER, m_host_energy},
    {48, "hw.host.power", "W", "Mean power of the machine over the sample's interval", RT_OTLP_GAUGE, m_host_power},
    {49, "resource_tracker.process.energy", "J", "The tracked tree's energy since tracking began", RT_OTLP_COUNTER,
     m_p_energy},
    {50, "resource_tracker.process.power", "W", "The tracked tree's mean power over the sample's interval",
     RT_OTLP_GAUGE, m_p_power},
    {51, "resource_tracker.process.domain.energy", "J", "The tracked tree's part of each domain's energy since "
     "tracking began", RT_OTLP_COUNTER, m_p_dom_energy},
    {52, "resource_tracker.gpu.throttle.time", "s", "Seconds each GPU's clocks were held down since tracking began, "
     "by reason (power cap, heat)", RT_OTLP_COUNTER, m_gpu_throttle},
    {53, "resource_tracker.request.cpu", "{cpu}", "Cores the job was given where it runs", RT_OTLP_GAUGE, m_req_cpu},
    {54, "resource_tracker.request.memory", "By", "Memory the job was given where it runs", RT_OTLP_GAUGE, m_req_mem},
    {55, "resource_tracker.request.gpu", "{gpu}", "GPUs the job was given where it runs", RT_OTLP_GAUGE, m_req_gpu},
    {56, "resource_tracker.time_limit", "s", "The job's wall-time limit where it runs", RT_OTLP_GAUGE, m_time_limit},
    {57, "resource_tracker.gpu.activity", "1", "Share of the interval each GPU's (and MIG instance's) units were busy, "
     "by unit (NVML GPM: sm, sm_occupancy, tensor, tensor_hmma, tensor_imma, tensor_dfma, dram: bandwidth used of its "
     "peak, fp64, fp32, fp16)", RT_OTLP_GAUGE, m_gpu_activity},
    {58, "hw.gpu.io", "By", "Bytes each GPU received and transmitted over PCIe and NVLink since its series began (NVML "
     "GPM's rates times the intervals)", RT_OTLP_COUNTER, m_gpu_io},
    {59, "resource_tracker.process.gpu.activity", "1", "Share of the interval the units of the tracked tree's GPUs were "
     "busy, their mean, by unit (the devices' figures when other processes shared them: work_scope device)",
     RT_OTLP_GAUGE, m_p_gpu_activity},
    {60, "resource_tracker.process.gpu.io.rate", "By/s", "PCIe and NVLink traffic of the tracked tree's GPUs per second, "
     "their mean, by direction and link", RT_OTLP_GAUGE, m_p_gpu_io},
};

/* ---- the metrics of the schema's members ---------------------------------------------------------- */

/* The point of member fi of table t, with attributes a. */
static void member_point(pts *p, const rt_otlp_row *r, int t, size_t fi, attrs a, uint64_t start)
{
    const rt_field *f = &tables[t]->f[fi];
    double v = fig_num(r, t, plan.slot[t][fi], f->type);
    int64_t i;
    uint64_t u;
    switch (f->type) {
    case RT_FIELD_DOUBLE:
        if (f->unit == U_MIB)
            pmib(p, r, start, a, v);
        else
            pd(p, r, start, a, f->unit == U_PCT ? v / 100.0 : v);
        break;
    case RT_FIELD_I64:
        memcpy(&i, &r->fig[plan.slot[t][fi]], sizeof i);
        pi(p, r, start, a, i);
        break;
    case RT_FIELD_FLAG: pi(p, r, start, a, (int64_t)v); break;
    case RT_FIELD_U64:
        memcpy(&u, &r->fig[plan.slot[t][fi]], sizeof u);
        pu(p, r, start, a, u);
        break;
    default: break;
    }
}

/* The points of a schema metric for row r: each member's, for each part where the table is the
 * parts'; none where the row lacks the struct. */
static void members(pts *p, const mentry *e, const rt_otlp_row *r)
{
    static const char *const parts[3] = {"main", "descendants", "combined"};
    const rt_fotlp *o = &tables[e->t]->f[e->fi[0]].otlp;
    uint64_t start = o->kind == RT_OTLP_GAUGE ? 0 : r->start_ns;
    int nt = e->t == RT_OT_MAIN ? 3 : 1;
    for (int k = 0; k < nt; k++)
        if (!r->have[e->t + k])
            return;
    for (int k = 0; k < nt; k++)
        for (size_t j = 0; j < e->n; j++) {
            const rt_fotlp *m = &tables[e->t]->f[e->fi[j]].otlp;
            attrs a = nt == 3 ? A1("resource_tracker.process.part", parts[k]) : m->key ? A1(m->key, m->value) : A0;
            if (e->t == RT_OT_PROCESS || nt == 3) /* the tree's and its parts' points */
                a = with_phase(a, r);
            member_point(p, r, e->t + k, e->fi[j], a, start);
        }
}

const char *rt_otlp_metric_name(size_t i)
{
    const struct plan *pl = plan_get();
    if (i >= pl->nm)
        return NULL;
    return pl->m[i].h ? pl->m[i].h->name : tables[pl->m[i].t]->f[pl->m[i].fi[0]].otlp.name;
}

/* Writes metric e over the rows, or nothing when no row has a point of it. */
static void metric(rt_ob *o, size_t *written, const mentry *e, rt_otlp_row *const *rows, size_t n)
{
    const char *name, *unit, *desc;
    rt_otlp_kind kind;
    if (e->h) {
        name = e->h->name, unit = e->h->unit, desc = e->h->desc, kind = e->h->kind;
    } else {
        const rt_fotlp *f = &tables[e->t]->f[e->fi[0]].otlp;
        name = f->name, unit = f->unit, desc = f->desc, kind = f->kind;
    }
    size_t mark = o->len;
    char last = o->last;
    rt_ob_lit(o, *written ? ",{\"name\":" : "{\"name\":");
    rt_ob_json_str(o, name);
    rt_ob_lit(o, ",\"description\":");
    rt_ob_json_str(o, desc);
    rt_ob_lit(o, ",\"unit\":");
    rt_ob_json_str(o, unit);
    if (kind == RT_OTLP_GAUGE)
        rt_ob_lit(o, ",\"gauge\":{\"dataPoints\":[");
    else
        rt_ob_lit(o, kind == RT_OTLP_COUNTER
                         ? ",\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":true,\"dataPoints\":["
                         : ",\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":false,\"dataPoints\":[");
    pts p = {.o = o};
    for (size_t i = 0; i < n; i++) {
        if (e->h)
            e->h->emit(&p, rows[i]);
        else
            members(&p, e, rows[i]);
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

size_t rt_otlp_format(const rt_otlp_attr *res, size_t nres, rt_otlp_row *const *rows, size_t n, char *buf, size_t cap)
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
    const struct plan *pl = plan_get();
    for (size_t i = 0; i < pl->nm; i++)
        metric(&o, &written, &pl->m[i], rows, n);
    rt_ob_lit(&o, "]}]}]}");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}
