/* jsonline.c - the walk over one of the tool's JSON lines (docs/contracts.md §2) that picks
 * out the figures the reader maps to an rt_record (rt_jline, jsonline.h), skipping (but
 * validating) everything else; built on the tokenizer of core/jsonscan.c. A member that the
 * schema (core/schema.c) lists for the JSON line is read by its name into its slot, typed by
 * the schema (a flag as true/false/null, any other figure as a number or null); the nested
 * objects and arrays are walked here by hand. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/jsonscan.h"
#include "../core/methods.h"
#include "../core/schema.h"
#include "../phase/phase.h"
#include "jsonline.h"
#include "record.h"

/* Records the first problem of the walk (msg: static text). Returns false. */
static bool fail(rt_js *j, const char *msg)
{
    if (!j->err)
        j->err = msg;
    return false;
}

/* ---- rt_jline: shared by the scanner and the tests' jansson oracle ----------------------- */

void rt_jline_nan(double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
}

void rt_jline_list_reset(rt_jl_list *l, bool present)
{
    l->present = present;
    l->n = 0;
    l->rest_rate_a = l->rest_rate_b = NAN;
}

void rt_jline_gpu_reset(rt_jline *jl, bool present)
{
    jl->gpu_present = present;
    jl->gpu_count = 0;
    jl->gpu_usage = jl->gpu_vram_mib = jl->gpu_vram_total_mib = NAN;
    jl->gpu_utilized = 0;
    jl->gpu_known = false;
    jl->ngpu = 0;
    jl->gpu_power_throttled = jl->gpu_thermal_throttled = NAN;
    for (size_t k = 0; k < RT_JL_NWORK; k++) {
        jl->gpu_work_sum[k] = 0;
        jl->gpu_work_n[k] = 0;
    }
}

rt_gpu_work rt_jline_work(const double *v, size_t off)
{
    double w[sizeof(rt_gpu_work) / sizeof(double)];
    for (size_t k = 0; k < RT_ARRAY_LEN(w); k++)
        w[k] = v[(off + k * sizeof(double)) / 4];
    rt_gpu_work out;
    memcpy(&out, w, sizeof out);
    return out;
}

void rt_jline_process_reset(rt_jline *jl, bool present)
{
    jl->has_process = present;
    jl->proc_work_scope = -1;
    rt_jline_nan(jl->proc, RT_ARRAY_LEN(jl->proc));
    for (size_t i = 0; i < RT_JL_NPARTS; i++)
        rt_jline_nan(jl->part[i], RT_ARRAY_LEN(jl->part[i]));
    rt_jline_cgroup_reset(&jl->cg, false);
}

void rt_jline_cgroup_reset(rt_jl_cgroup *cg, bool present)
{
    cg->present = present;
    rt_jline_nan(cg->f, RT_ARRAY_LEN(cg->f));
    rt_jline_psi_reset(&cg->psi);
}

void rt_jline_psi_reset(rt_jl_psi *psi)
{
    for (size_t i = 0; i < 3; i++)
        rt_jline_nan(psi->res[i], RT_ARRAY_LEN(psi->res[i]));
}

void rt_jline_reset(rt_jline *jl)
{
    rt_jline_nan(jl->top, RT_ARRAY_LEN(jl->top));
    jl->has_job = false;
    jl->job[0] = '\0';
    rt_jline_nan(jl->cpu, RT_ARRAY_LEN(jl->cpu));
    jl->cpu_cores_listed = NAN;
    rt_jline_nan(jl->mem, RT_ARRAY_LEN(jl->mem));
    rt_jline_list_reset(&jl->disk, false);
    rt_jline_list_reset(&jl->net, false);
    jl->nmount = 0;
    jl->rest_space_total = jl->rest_space_used = NAN;
    rt_jline_gpu_reset(jl, false);
    rt_jline_process_reset(jl, false);
    rt_jline_psi_reset(&jl->psi);
    rt_jline_cgroup_reset(&jl->self_cg, false);
    if (jl->ph) {
        jl->ph->present = false;
        jl->ph->n = jl->ph->n_open = 0;
    }
    if (jl->en)
        jl->en->present = false;
    jl->rq_present = false;
    jl->mb.set = false;
    jl->clock[0] = jl->clock[1] = 0;
}

/* A device's name kept in dst[cap] when it is named and fits: whether it was (else dst empty). */
static bool keep_name(char *dst, size_t cap, const char *name, bool named)
{
    dst[0] = '\0';
    return named && name && rt_copy_str(dst, cap, name);
}

void rt_jline_add_dev(rt_jl_list *l, const char *name, bool named, double ta, double tb, double ra, double rb)
{
    if (l->n >= RT_JL_MAX_DEV) {
        l->rest_rate_a = rt_add_known(l->rest_rate_a, ra);
        l->rest_rate_b = rt_add_known(l->rest_rate_b, rb);
        return;
    }
    rt_jl_dev *d = &l->dev[l->n++];
    d->named = keep_name(d->name, sizeof d->name, name, named);
    d->total_a = ta;
    d->total_b = tb;
    d->rate_a = ra;
    d->rate_b = rb;
}

void rt_jline_add_mount(rt_jline *jl, const char *point, bool named, double total, double used)
{
    if (jl->nmount >= RT_JL_MAX_MOUNT) {
        if (!isnan(total)) {
            jl->rest_space_total = rt_add_known(jl->rest_space_total, total);
            jl->rest_space_used = rt_add_known(jl->rest_space_used, used);
        }
        return;
    }
    rt_jl_mount *m = &jl->mount[jl->nmount++];
    m->named = keep_name(m->point, sizeof m->point, point, named);
    m->total = total;
    m->used = used;
}

void rt_jline_add_gpu(rt_jline *jl, const char *uuid, bool named, double util_pct, double vram_used, double vram_total)
{
    if (jl->ngpu < RT_JL_MAX_GPU) {
        rt_jl_gpu *g = &jl->gpu[jl->ngpu++];
        for (size_t w = 0; w < sizeof g->work / sizeof(double); w++)
            ((double *)(void *)&g->work)[w] = NAN;
        g->named = keep_name(g->uuid, sizeof g->uuid, uuid, named);
        g->util = util_pct;
        g->used = vram_used;
        g->total = vram_total;
    }
    jl->gpu_count += 1;
    if (!isnan(util_pct)) {
        jl->gpu_usage = rt_add_known(jl->gpu_usage, util_pct / 100.0);
        jl->gpu_utilized += util_pct > 0;
        jl->gpu_known = true;
    }
    jl->gpu_vram_mib = rt_add_known(jl->gpu_vram_mib, vram_used / 1048576.0);
    jl->gpu_vram_total_mib = rt_add_known(jl->gpu_vram_total_mib, vram_total / 1048576.0);
}

/* ---- the walk over one line ---------------------------------------------------------------- */

/* A member name and its length. */
typedef struct jkey {
    const char *s;
    size_t n;
} jkey;
#define JK(x)                                                                                                          \
    {                                                                                                                  \
        x, sizeof(x) - 1                                                                                               \
    }
#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the raw key k[0..n) is name[0..nn) (decoding escapes when there are any). */
static bool key_is(const char *k, size_t n, const char *name, size_t nn)
{
    if (n == nn && memcmp(k, name, n) == 0)
        return true;
    if (n <= nn || !memchr(k, '\\', n))
        return false;
    char buf[64];
    size_t d = rt_js_unescape(k, n, buf, sizeof buf);
    return d == nn && memcmp(buf, name, d) == 0;
}

/* The index in names[0..n) of the raw key k[0..kl), or n. The search starts at *hint (the
 * member after the last one found, as the tool writes members in a fixed order). */
static size_t which(const char *k, size_t kl, const jkey *names, size_t n, size_t *hint)
{
    for (size_t c = 0, i = *hint < n ? *hint : 0; c < n; c++, i = i + 1 < n ? i + 1 : 0)
        if (key_is(k, kl, names[i].s, names[i].n)) {
            *hint = i + 1;
            return i;
        }
    return n;
}

/* The field of table st (NULL: none) that the JSON line carries as a figure (a number or a
 * flag) under the raw key k[0..kl), or NULL. The search starts at *hint as which()'s does. */
static const rt_field *figure(const rt_fstruct *st, const char *k, size_t kl, size_t *hint)
{
    size_t n = st ? st->n : 0;
    for (size_t c = 0, i = *hint < n ? *hint : 0; c < n; c++, i = i + 1 < n ? i + 1 : 0) {
        const rt_field *f = &st->f[i];
        if (key_is(k, kl, f->name, f->nlen)) {
            *hint = i + 1;
            return f->jdec == RT_NO_JSON || f->type == RT_FIELD_STRING ? NULL : f;
        }
    }
    return NULL;
}

/* A number or null into *out (NaN for null). Other types fail with "not a number". */
static bool num_or_null(rt_js *j, double *out)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NULL) {
        *out = NAN;
        return rt_js_skip(j);
    }
    if (t == RT_JS_NUMBER)
        return rt_js_number(j, out);
    if (t != RT_JS_BAD)
        fail(j, "a figure is neither a number nor null");
    return false;
}

/* true, false or null into *out (1, 0, NaN). Other types fail with "not a flag". */
static bool flag_or_null(rt_js *j, double *out)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NULL || t == RT_JS_TRUE || t == RT_JS_FALSE) {
        *out = t == RT_JS_NULL ? NAN : t == RT_JS_TRUE ? 1 : 0;
        return rt_js_skip(j);
    }
    if (t != RT_JS_BAD)
        fail(j, "a flag is neither true, false nor null");
    return false;
}

/* A string or null, decoded into dst[cap] (cut to fit; "" for null). Returns false on error;
 * *is_str tells whether it was a string, *whole whether it fit. */
static bool str_or_null(rt_js *j, char *dst, size_t cap, bool *is_str, bool *whole)
{
    rt_js_type t = rt_js_peek(j);
    *is_str = *whole = false;
    dst[0] = '\0';
    if (t == RT_JS_NULL)
        return rt_js_skip(j);
    if (t != RT_JS_STRING) {
        if (t != RT_JS_BAD)
            fail(j, "a name is neither a string nor null");
        return false;
    }
    const char *raw;
    size_t len;
    if (!rt_js_string(j, &raw, &len))
        return false;
    *is_str = true;
    *whole = rt_js_unescape(raw, len, dst, cap) < cap;
    return true;
}

/* Opens an object ('{') or array ('[') member that may be null: returns 1 when open, 0 for
 * null (consumed), -1 on error (another type: the message what). */
static int open_or_null(rt_js *j, char c, const char *what)
{
    rt_js_type t = rt_js_peek(j);
    if (t == RT_JS_NULL)
        return rt_js_skip(j) ? 0 : -1;
    if (t != (c == '{' ? RT_JS_OBJECT : RT_JS_ARRAY)) {
        if (t != RT_JS_BAD)
            fail(j, what);
        return -1;
    }
    return rt_js_open(j, c) ? 1 : -1;
}

/* A member named in a walk's hand[] list: reads the value of hand[i] into ctx. */
typedef bool (*hand_fn)(rt_js *j, size_t i, void *ctx);

/* Reads the members of an open object: a figure of table st (NULL: none) into its slot of v
 * (the slots of st's struct), typed by the schema; a member named in hand[0..nh) through fn;
 * the rest skipped (but validated). */
static bool members(rt_js *j, const rt_fstruct *st, double *v, const jkey *hand, size_t nh, hand_fn fn, void *ctx)
{
    bool first = true;
    const char *k;
    size_t kl, hint = 0, hhint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        const rt_field *f = figure(st, k, kl, &hint);
        size_t i = f || !nh ? nh : which(k, kl, hand, nh, &hhint);
        bool ok = f        ? (f->type == RT_FIELD_FLAG ? flag_or_null : num_or_null)(j, &v[f->off / 4])
                  : i < nh ? fn(j, i, ctx)
                           : rt_js_skip(j);
        if (!ok)
            return false;
    }
    return r == 0;
}

/* The members of an object that may be null (the message what for another type): as
 * members(). *present tells whether it was an object. */
static bool object(rt_js *j, const char *what, bool *present, const rt_fstruct *st, double *v, const jkey *hand,
                   size_t nh, hand_fn fn, void *ctx)
{
    int o = open_or_null(j, '{', what);
    if (present)
        *present = o == 1;
    if (o <= 0)
        return o == 0;
    return members(j, st, v, hand, nh, fn, ctx);
}

/* The objects of an array that may be null (what: its message for another type; not_obj: for
 * an element that is no object): each element's members as members() (its slots v, reset to
 * NaN first, nv of them), then done(ctx) to keep it. *present tells whether it was an array. */
static bool objects(rt_js *j, const char *what, const char *not_obj, bool *present, const rt_fstruct *st, double *v,
                    size_t nv, const jkey *hand, size_t nh, hand_fn fn, void (*done)(void *ctx), void *ctx)
{
    int o = open_or_null(j, '[', what);
    if (present)
        *present = o == 1;
    if (o <= 0)
        return o == 0;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, not_obj);
        rt_js_open(j, '{');
        rt_jline_nan(v, nv);
        if (!members(j, st, v, hand, nh, fn, ctx))
            return false;
        done(ctx);
    }
    return r == 0;
}

/* A name member of an element of a list (a disk, an interface, a mount, a GPU). */
typedef struct named {
    char *s;
    size_t cap;
    bool whole;
} named;

static bool read_name(rt_js *j, named *n)
{
    bool is_str;
    return str_or_null(j, n->s, n->cap, &is_str, &n->whole);
}

/* ---- cpu -------------------------------------------------------------------------------- */

/* per_core_pct: counts its elements (any values) into *count; NaN for null. */
static bool count_elements(rt_js *j, size_t i, void *count_)
{
    double *count = count_;
    (void)i;
    *count = NAN;
    int a = open_or_null(j, '[', "per_core_pct is not an array");
    if (a <= 0)
        return a == 0;
    bool first = true;
    double n = 0;
    while ((a = rt_js_element(j, &first)) == 1) {
        if (!rt_js_skip(j))
            return false;
        n++;
    }
    *count = n;
    return a == 0;
}

static bool scan_cpu(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("per_core_pct")};
    rt_jline_nan(jl->cpu, RT_ARRAY_LEN(jl->cpu));
    jl->cpu_cores_listed = NAN;
    return object(j, "cpu is not an object", NULL, &rt_schema_cpu, jl->cpu, hand, NKEYS(hand), count_elements,
                  &jl->cpu_cores_listed);
}

static bool scan_memory(rt_js *j, rt_jline *jl)
{
    rt_jline_nan(jl->mem, RT_ARRAY_LEN(jl->mem));
    return object(j, "memory is not an object", NULL, &rt_schema_memory, jl->mem, NULL, 0, NULL, NULL);
}

/* ---- disks, interfaces and mounts ------------------------------------------------------- */

/* A mount of a disk being read. */
typedef struct mount_walk {
    rt_jline *jl;
    double v[RT_JL_SLOTS(rt_mount)];
    char point[RT_JL_POINT];
    named name;
} mount_walk;

static bool mount_hand(rt_js *j, size_t i, void *ctx)
{
    (void)i;
    return read_name(j, &((mount_walk *)ctx)->name);
}

static void mount_done(void *ctx)
{
    mount_walk *m = ctx;
    rt_jline_add_mount(m->jl, m->point, m->name.whole, m->v[RT_JL_SLOT(rt_mount, total_bytes)],
                       m->v[RT_JL_SLOT(rt_mount, used_bytes)]);
    m->point[0] = '\0';
    m->name.whole = false;
}

/* The "mounts" of one disk: appended to jl's mount list. */
static bool scan_mounts(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("mount_point")};
    mount_walk m = {.jl = jl};
    m.name = (named){m.point, sizeof m.point, false};
    return objects(j, "mounts is not an array", "a mount is not an object", NULL, &rt_schema_mount, m.v,
                   RT_ARRAY_LEN(m.v), hand, NKEYS(hand), mount_hand, mount_done, &m);
}

/* A disk or an interface being read (disk: with mounts). */
typedef struct dev_walk {
    rt_jline *jl;
    bool disk, had_mounts;
    double v[RT_JL_SLOTS(rt_disk) > RT_JL_SLOTS(rt_net_iface) ? RT_JL_SLOTS(rt_disk) : RT_JL_SLOTS(rt_net_iface)];
    char name[RT_JL_NAME];
    named nm;
    size_t mount0; /* the mounts before this disk's */
    double rest_t, rest_u;
} dev_walk;

static bool dev_hand(rt_js *j, size_t i, void *ctx)
{
    dev_walk *d = ctx;
    if (i == 0)
        return read_name(j, &d->nm);
    if (d->had_mounts) { /* a repeated member: the last one counts */
        d->jl->nmount = d->mount0;
        d->jl->rest_space_total = d->rest_t;
        d->jl->rest_space_used = d->rest_u;
    }
    d->had_mounts = true;
    return scan_mounts(j, d->jl);
}

/* Whether a disk named so is virtual, for a line without is_virtual (the Rust tool's, which lists
 * them too): device-mapper, md, zram and nbd devices and ZFS pools, as the sampler flags them. */
static bool virtual_by_name(const char *n)
{
    return strncmp(n, "dm-", 3) == 0 || (strncmp(n, "md", 2) == 0 && n[2] >= '0' && n[2] <= '9') ||
           strncmp(n, "zram", 4) == 0 || strncmp(n, "nbd", 3) == 0 || strncmp(n, "zfs:", 4) == 0;
}

static void dev_done(void *ctx)
{
    dev_walk *d = ctx;
    const double *v = d->v;
    double virt = d->disk ? v[RT_JL_SLOT(rt_disk, is_virtual)] : 0;
    if (d->disk && (virt > 0 || (isnan(virt) && virtual_by_name(d->name))))
        ; /* a virtual device: its bytes are counted on the disks beneath it */
    else if (d->disk)
        rt_jline_add_dev(&d->jl->disk, d->name, d->nm.whole, v[RT_JL_SLOT(rt_disk, read_bytes_total)],
                         v[RT_JL_SLOT(rt_disk, write_bytes_total)], v[RT_JL_SLOT(rt_disk, read_bytes_per_sec)],
                         v[RT_JL_SLOT(rt_disk, write_bytes_per_sec)]);
    else
        rt_jline_add_dev(&d->jl->net, d->name, d->nm.whole, v[RT_JL_SLOT(rt_net_iface, rx_bytes_total)],
                         v[RT_JL_SLOT(rt_net_iface, tx_bytes_total)], v[RT_JL_SLOT(rt_net_iface, rx_bytes_per_sec)],
                         v[RT_JL_SLOT(rt_net_iface, tx_bytes_per_sec)]);
    /* ready for the next element */
    d->name[0] = '\0';
    d->nm.whole = d->had_mounts = false;
    d->mount0 = d->jl->nmount;
    d->rest_t = d->jl->rest_space_total;
    d->rest_u = d->jl->rest_space_used;
}

/* The "disk" or "network" array (disk: with mounts). */
static bool scan_devs(rt_js *j, rt_jline *jl, bool disk)
{
    static const jkey disk_hand[] = {JK("device"), JK("mounts")}, net_hand[] = {JK("interface")};
    rt_jl_list *l = disk ? &jl->disk : &jl->net;
    rt_jline_list_reset(l, false);
    if (disk) {
        jl->nmount = 0;
        jl->rest_space_total = jl->rest_space_used = NAN;
    }
    dev_walk d = {.jl = jl, .disk = disk, .mount0 = jl->nmount};
    d.nm = (named){d.name, sizeof d.name, false};
    d.rest_t = jl->rest_space_total;
    d.rest_u = jl->rest_space_used;
    return objects(j, disk ? "disk is not an array" : "network is not an array",
                   disk ? "a disk is not an object" : "an interface is not an object", &l->present,
                   disk ? &rt_schema_disk : &rt_schema_net_iface, d.v, RT_ARRAY_LEN(d.v), disk ? disk_hand : net_hand,
                   disk ? NKEYS(disk_hand) : NKEYS(net_hand), dev_hand, dev_done, &d);
}

/* ---- GPUs ------------------------------------------------------------------------------- */

typedef struct gpu_walk {
    rt_jline *jl;
    double v[RT_JL_SLOTS(rt_gpu)];
    char uuid[RT_JL_UUID];
    named nm;
} gpu_walk;

static bool gpu_hand(rt_js *j, size_t i, void *ctx)
{
    if (i == 1)
        return rt_js_skip(j);
    return read_name(j, &((gpu_walk *)ctx)->nm);
}

static void gpu_done(void *ctx)
{
    gpu_walk *g = ctx;
    size_t had = g->jl->ngpu;
    rt_jline_add_gpu(g->jl, g->uuid, g->nm.whole, g->v[RT_JL_SLOT(rt_gpu, utilization_pct)],
                     g->v[RT_JL_SLOT(rt_gpu, vram_used_bytes)], g->v[RT_JL_SLOT(rt_gpu, vram_total_bytes)]);
    g->jl->gpu_power_throttled = rt_add_known(g->jl->gpu_power_throttled, g->v[RT_JL_SLOT(rt_gpu, power_throttled_secs)]);
    g->jl->gpu_thermal_throttled =
        rt_add_known(g->jl->gpu_thermal_throttled, g->v[RT_JL_SLOT(rt_gpu, thermal_throttled_secs)]);
    rt_gpu_work w = rt_jline_work(g->v, offsetof(rt_gpu, work));
    if (g->jl->ngpu > had)
        g->jl->gpu[had].work = w;
    double fig[RT_JL_NWORK];
    rt_record_work_of(&w, fig);
    for (size_t k = 0; k < RT_JL_NWORK; k++)
        if (!isnan(fig[k])) {
            g->jl->gpu_work_sum[k] += fig[k];
            g->jl->gpu_work_n[k]++;
        }
    g->uuid[0] = '\0';
    g->nm.whole = false;
}

static bool scan_gpus(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("uuid"), JK("mig")}; /* the MIG instances are not read back */
    rt_jline_gpu_reset(jl, false);
    gpu_walk g = {.jl = jl};
    g.nm = (named){g.uuid, sizeof g.uuid, false};
    return objects(j, "gpu is not an array", "a GPU is not an object", &jl->gpu_present, &rt_schema_gpu, g.v,
                   RT_ARRAY_LEN(g.v), hand, NKEYS(hand), gpu_hand, gpu_done, &g);
}

/* ---- pressure, cgroups and the tree ------------------------------------------------------ */

/* One resource of a "pressure" object: the figures of rt_pressure. */
static bool psi_hand(rt_js *j, size_t i, void *psi_)
{
    rt_jl_psi *psi = psi_;
    rt_jline_nan(psi->res[i], RT_ARRAY_LEN(psi->res[i]));
    return object(j, "a pressure figure is not an object", NULL, &rt_schema_pressure, psi->res[i], NULL, 0, NULL, NULL);
}

/* A "pressure" object (the machine's, or a group's) or null: cpu, memory and io. */
static bool scan_psi(rt_js *j, rt_jl_psi *psi)
{
    static const jkey hand[] = {JK("cpu"), JK("memory"), JK("io")};
    rt_jline_psi_reset(psi);
    return object(j, "pressure is not an object", NULL, NULL, NULL, hand, NKEYS(hand), psi_hand, psi);
}

static bool cgroup_hand(rt_js *j, size_t i, void *cg)
{
    (void)i;
    return scan_psi(j, &((rt_jl_cgroup *)cg)->psi);
}

/* A "cgroup" object or null (docs/contracts.md §2, 0.6: the limits and what they did): the
 * process's, or the top-level one (the tracker's own group). */
static bool scan_cgroup(rt_js *j, rt_jl_cgroup *cg)
{
    static const jkey hand[] = {JK("pressure")};
    rt_jline_cgroup_reset(cg, false);
    return object(j, "cgroup is not an object", &cg->present, &rt_schema_cgroup, cg->f, hand, NKEYS(hand), cgroup_hand,
                  cg);
}

/* process.cgroup, a part of the tree (process.main, .descendants, .combined) or null, or
 * process.gpu_work_scope. */
static bool process_hand(rt_js *j, size_t i, void *jl_)
{
    rt_jline *jl = jl_;
    if (i == 0)
        return scan_cgroup(j, &jl->cg);
    if (i == 4) {
        char scope[16];
        bool is_str, whole;
        if (!str_or_null(j, scope, sizeof scope, &is_str, &whole))
            return false;
        jl->proc_work_scope = !is_str ? -1 : strcmp(scope, "device") == 0 ? 1 : strcmp(scope, "job") == 0 ? 0 : -1;
        return true;
    }
    double *part = jl->part[i - 1];
    rt_jline_nan(part, RT_ARRAY_LEN(jl->part[0]));
    return object(j, "a part of the process is not an object", NULL, &rt_schema_part, part, NULL, 0, NULL, NULL);
}

static bool scan_process(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("cgroup"), JK("main"), JK("descendants"), JK("combined"), JK("gpu_work_scope")};
    rt_jline_process_reset(jl, false);
    return object(j, "process is not an object", &jl->has_process, &rt_schema_process, jl->proc, hand, NKEYS(hand),
                  process_hand, jl);
}

/* ---- the phases ------------------------------------------------------------------- */

void rt_jline_phases_free(rt_jl_phases *ph)
{
    if (!ph)
        return;
    free(ph->marks);
    free(ph->ptrs);
    free(ph);
}

/* A string member into dst[RT_JL_PH_NAME]; *ok false when it is no string or too long. */
static bool ph_name(rt_js *j, char *dst, bool *ok)
{
    bool is_str, whole;
    if (!str_or_null(j, dst, RT_JL_PH_NAME, &is_str, &whole))
        return false;
    *ok = is_str && whole && rt_phase_name_ok(dst, strlen(dst)); /* the rule every way in checks */
    return true;
}

/* One element of "marks": kept when it has an event, a name and a timestamp. */
static bool ph_mark(rt_js *j, rt_jl_phases *ph)
{
    if (rt_js_peek(j) != RT_JS_OBJECT)
        return fail(j, "a phase mark is not an object");
    rt_js_open(j, '{');
    rt_jl_mark tmp = {.m = RT_PHASE_MARK_INIT};
    rt_jl_mark *k = ph->n < ph->cap ? &ph->marks[ph->n] : &tmp;
    *k = tmp;
    char word[16];
    bool has_name = false, is_str, whole;
    double pid = NAN;
    bool first = true;
    const char *key;
    size_t kl;
    int r;
    while ((r = rt_js_member(j, &first, &key, &kl)) == 1) {
        bool ok;
#define IS(name) key_is(key, kl, name, sizeof(name) - 1)
        if (IS("event")) {
            ok = str_or_null(j, word, sizeof word, &is_str, &whole);
            k->m.kind = strcmp(word, "start") == 0 ? RT_PHASE_START : strcmp(word, "stop") == 0 ? RT_PHASE_STOP : 0;
        } else if (IS("name")) {
            ok = ph_name(j, k->name, &has_name);
        } else if (IS("timestamp_secs")) {
            ok = num_or_null(j, &k->m.timestamp_secs);
        } else if (IS("pid")) {
            ok = num_or_null(j, &pid);
        } else if (IS("cpu_secs_total")) {
            ok = num_or_null(j, &k->m.cpu_secs_total);
        } else if (IS("cpu_source")) {
            static const char *const src[] = {"none", "group", "schedstat", "ticks", "marker"};
            ok = str_or_null(j, word, sizeof word, &is_str, &whole);
            for (int i = 0; i < (int)NKEYS(src); i++)
                if (strcmp(word, src[i]) == 0)
                    k->m.cpu_source = i;
        } else if (IS("read_bytes_total")) {
            ok = num_or_null(j, &k->m.read_bytes_total);
        } else if (IS("write_bytes_total")) {
            ok = num_or_null(j, &k->m.write_bytes_total);
        } else if (IS("rss_mib")) {
            ok = num_or_null(j, &k->m.rss_mib);
        } else if (IS("memory_peak_mib")) {
            ok = num_or_null(j, &k->m.memory_peak_mib);
        } else if (IS("reading_lag_secs")) {
            ok = num_or_null(j, &k->m.reading_lag_secs);
        } else {
            ok = rt_js_skip(j);
        }
#undef IS
        if (!ok)
            return false;
    }
    if (r != 0)
        return false;
    k->m.pid = pid >= -9.2e18 && pid <= 9.2e18 ? (int64_t)pid : RT_NULL_I64;
    if (isnan(k->m.cpu_secs_total))
        k->m.cpu_source = RT_PHASE_CPU_NONE;
    if (k != &tmp && k->m.kind && has_name && isfinite(k->m.timestamp_secs))
        ph->n++;
    return true;
}

/* "phases":{"open":[..],"marks":[..],"counts":{..}} or null. */
static bool scan_phases(rt_js *j, rt_jline *jl)
{
    int o = open_or_null(j, '{', "phases is not an object");
    if (o <= 0)
        return o == 0;
    rt_jl_phases *ph = jl->ph;
    if (!ph && !(ph = jl->ph = calloc(1, sizeof *ph)))
        return fail(j, "out of memory");
    ph->present = true;
    ph->n = ph->n_open = 0;
    memset(&ph->counts, 0, sizeof ph->counts);
    bool first = true;
    const char *key;
    size_t kl;
    int r;
    while ((r = rt_js_member(j, &first, &key, &kl)) == 1) {
        bool ok = true, efirst = true;
        int e;
        if (key_is(key, kl, "open", 4)) {
            if ((e = open_or_null(j, '[', "phases.open is not an array")) < 0)
                return false;
            while (e == 1 && (e = rt_js_element(j, &efirst)) == 1) {
                bool has_name = false;
                char past[sizeof ph->open[0]]; /* a name past the cap is read and let go */
                char *dst = ph->n_open < RT_JL_MAX_OPEN ? ph->open[ph->n_open] : past;
                if (!ph_name(j, dst, &has_name))
                    return false;
                if (has_name && ph->n_open < RT_JL_MAX_OPEN)
                    ph->n_open++;
            }
            ok = e == 0;
        } else if (key_is(key, kl, "marks", 5)) {
            if ((e = open_or_null(j, '[', "phases.marks is not an array")) < 0)
                return false;
            while (e == 1 && (e = rt_js_element(j, &efirst)) == 1) {
                if (ph->n == ph->cap && ph->cap < RT_JL_MAX_MARKS) {
                    size_t cap = ph->cap ? ph->cap * 4 : 16;
                    cap = cap > RT_JL_MAX_MARKS ? RT_JL_MAX_MARKS : cap;
                    if (rt_resize(&ph->marks, cap, sizeof *ph->marks) == 0 &&
                        rt_resize(&ph->ptrs, cap, sizeof *ph->ptrs) == 0)
                        ph->cap = cap;
                }
                if (!ph_mark(j, ph))
                    return false;
            }
            ok = e == 0;
        } else if (key_is(key, kl, "counts", 6)) {
            if ((e = open_or_null(j, '{', "phases.counts is not an object")) < 0)
                return false;
            static const jkey names[] = {JK("accepted"),  JK("unknown_stop"), JK("unterminated"),   JK("too_long"),
                                         JK("malformed"), JK("flood"),        JK("dropped"),        JK("too_many_names"),
                                         JK("too_deep"),  JK("refused")};
            uint64_t *slot[] = {&ph->counts.accepted,  &ph->counts.unknown_stop, &ph->counts.unterminated,
                                &ph->counts.too_long,  &ph->counts.malformed,    &ph->counts.flood,
                                &ph->counts.dropped,   &ph->counts.too_many_names, &ph->counts.too_deep,
                                &ph->counts.refused};
            const char *ck;
            size_t ckl, hint = 0;
            while (e == 1 && (e = rt_js_member(j, &efirst, &ck, &ckl)) == 1) {
                size_t i = which(ck, ckl, names, NKEYS(names), &hint);
                double v = NAN;
                if (!(i < NKEYS(names) ? num_or_null(j, &v) : rt_js_skip(j)))
                    return false;
                if (i < NKEYS(names) && v >= 0 && v < 1.8e19)
                    *slot[i] = (uint64_t)v;
            }
            ok = e == 0;
        } else {
            ok = rt_js_skip(j);
        }
        if (!ok)
            return false;
    }
    if (r != 0)
        return false;
    for (size_t i = 0; i < ph->n; i++) {
        ph->marks[i].m.name = ph->marks[i].name;
        ph->ptrs[i] = &ph->marks[i].m;
    }
    for (size_t i = 0; i < ph->n_open; i++)
        ph->open_ptrs[i] = ph->open[i];
    ph->view = (rt_phases){.marks = (const rt_phase_mark *const *)ph->ptrs, .mark_count = ph->n,
                           .open = (const char *const *)ph->open_ptrs, .open_count = ph->n_open, .counts = &ph->counts};
    return true;
}

/* ---- the energy -------------------------------------------------------------------- */

/* A string member into dst[cap]: *has true when it was a string that fit. */
static bool en_text(rt_js *j, char *dst, size_t cap, bool *has)
{
    bool is_str, whole;
    if (!str_or_null(j, dst, cap, &is_str, &whole))
        return false;
    *has = is_str && whole;
    return true;
}

/* A method word into *rank (0 for null or a word that is none of the three). */
static bool en_method(rt_js *j, int *rank)
{
    char w[RT_JL_WORD];
    bool has;
    if (!en_text(j, w, sizeof w, &has))
        return false;
    *rank = has ? rt_energy_method_rank(w) : 0;
    return true;
}

static void domain_clear(rt_jl_domain *d)
{
    d->has_name = d->has_kind = d->has_source = d->has_device = false;
    d->method = 0;
}

static bool domain_hand(rt_js *j, size_t i, void *ctx)
{
    rt_jl_domain *d = &((rt_jl_energy *)ctx)->cur;
    switch (i) {
    case 0: return en_text(j, d->name, sizeof d->name, &d->has_name);
    case 1: return en_text(j, d->kind, sizeof d->kind, &d->has_kind);
    case 2: return en_text(j, d->source, sizeof d->source, &d->has_source);
    case 3: return en_method(j, &d->method);
    default: return en_text(j, d->device, sizeof d->device, &d->has_device);
    }
}

static void domain_done(void *ctx)
{
    rt_jl_energy *en = ctx;
    if (en->n < RT_JL_MAX_DOMAIN)
        en->dom[en->n++] = en->cur;
    domain_clear(&en->cur);
}

static bool energy_hand(rt_js *j, size_t i, void *ctx)
{
    static const jkey dhand[] = {JK("name"), JK("kind"), JK("source"), JK("method"), JK("device")};
    rt_jl_energy *en = ctx;
    switch (i) {
    case 0: return en_method(j, &en->method);
    case 1: return en_method(j, &en->process_method);
    case 2: return en_text(j, en->model, sizeof en->model, &en->has_model);
    case 3: return en_text(j, en->missing, sizeof en->missing, &en->has_missing);
    default:
        en->n = 0;
        domain_clear(&en->cur);
        return objects(j, "energy.domain is not an array", "an energy domain is not an object", NULL,
                       &rt_schema_energy_domain, en->cur.f, RT_ARRAY_LEN(en->cur.f), dhand, NKEYS(dhand), domain_hand,
                       domain_done, en);
    }
}

#define EN_F(en, m) ((en)->f[RT_JL_SLOT(rt_energy, m)])
#define DOM_F(d, m) ((d)->f[RT_JL_SLOT(rt_energy_domain, m)])

/* en->view from what was read: a figure only with its method. */
static void energy_view(rt_jl_energy *en)
{
    for (size_t i = 0; i < en->n; i++) {
        const rt_jl_domain *d = &en->dom[i];
        en->dview[i] = (rt_energy_domain){
            .name = d->has_name ? d->name : NULL,
            .kind = d->has_kind ? d->kind : NULL,
            .source = d->has_source ? d->source : NULL,
            .method = rt_energy_method_of_rank(d->method),
            .device = d->has_device ? d->device : NULL,
            .in_total = DOM_F(d, in_total) == 1,
            .energy_joules = DOM_F(d, energy_joules),
            .energy_joules_total = DOM_F(d, energy_joules_total),
            .power_watts = DOM_F(d, power_watts),
            .process_share = DOM_F(d, process_share),
            .process_energy_joules = DOM_F(d, process_energy_joules),
            .process_energy_joules_total = DOM_F(d, process_energy_joules_total),
        };
        en->dptr[i] = &en->dview[i];
    }
    en->view = (rt_energy){
        .domain = en->dptr,
        .domain_count = en->n,
        .energy_joules = EN_F(en, energy_joules),
        .energy_joules_total = EN_F(en, energy_joules_total),
        .power_watts = EN_F(en, power_watts),
        .method = rt_energy_method_of_rank(en->method),
        .process_energy_joules = EN_F(en, process_energy_joules),
        .process_energy_joules_total = EN_F(en, process_energy_joules_total),
        .process_power_watts = EN_F(en, process_power_watts),
        .process_method = rt_energy_method_of_rank(en->process_method),
        .idle_power_watts = EN_F(en, idle_power_watts),
        .model = en->has_model ? en->model : NULL,
        .missing = en->has_missing ? en->missing : NULL,
    };
}

/* "energy":{figures,"domain":[..]} or null. */
static bool scan_energy(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("method"), JK("process_method"), JK("model"), JK("missing"), JK("domain")};
    int o = open_or_null(j, '{', "energy is not an object");
    if (o <= 0)
        return o == 0;
    rt_jl_energy *en = jl->en;
    if (!en && !(en = jl->en = malloc(sizeof *en)))
        return fail(j, "out of memory");
    en->present = true;
    rt_jline_nan(en->f, RT_ARRAY_LEN(en->f));
    en->method = en->process_method = 0;
    en->has_model = en->has_missing = false;
    en->n = 0;
    domain_clear(&en->cur);
    if (!members(j, &rt_schema_energy, en->f, hand, NKEYS(hand), energy_hand, en))
        return false;
    energy_view(en);
    return true;
}

/* ---- what the job was given -------------------------------------------------------- */

static bool request_hand(rt_js *j, size_t i, void *jl_)
{
    rt_jline *jl = jl_;
    return en_text(j, jl->rq_text[i], sizeof jl->rq_text[i], &jl->rq_has[i]);
}

#define RQ_F(jl, m) ((jl)->rq_f[RT_JL_SLOT(rt_request, m)])

/* "request":{..} or null, into jl->rq (a figure not said without its *_from, as request.h keeps it). */
static bool scan_request(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("place"), JK("cpu_from"), JK("memory_from"), JK("gpus_from"), JK("time_limit_from")};
    rt_jline_nan(jl->rq_f, RT_ARRAY_LEN(jl->rq_f));
    for (size_t i = 0; i < NKEYS(hand); i++)
        jl->rq_has[i] = false;
    if (!object(j, "request is not an object", &jl->rq_present, &rt_schema_request, jl->rq_f, hand, NKEYS(hand),
                request_hand, jl))
        return false;
    if (!jl->rq_present)
        return true;
    const char *t[5];
    for (size_t i = 0; i < 5; i++)
        t[i] = jl->rq_has[i] ? jl->rq_text[i] : NULL;
    rt_request r = {
        .struct_size = sizeof r,
        .place = t[0],
        .cpu_cores = RQ_F(jl, cpu_cores),
        .memory_mib = RQ_F(jl, memory_mib),
        .gpus = RQ_F(jl, gpus),
        .time_limit_secs = RQ_F(jl, time_limit_secs),
        .job_start_secs = RQ_F(jl, job_start_secs),
        .cpu_from = t[1],
        .memory_from = t[2],
        .gpus_from = t[3],
        .time_limit_from = t[4],
    };
    rt_request_keep(&jl->rq, &r);
    jl->rq_present = rt_request_any(&jl->rq.r);
    return true;
}

/* ---- the run's place in a job of several nodes --------------------------------------- */

static bool member_hand(rt_js *j, size_t i, void *jl_)
{
    rt_jline *jl = jl_;
    if (i < 4)
        return en_text(j, jl->mb_text[i], sizeof jl->mb_text[i], &jl->mb_has[i]);
    if (i == 9)
        return flag_or_null(j, &jl->mb_num[5]);
    return num_or_null(j, &jl->mb_num[i - 4]);
}

/* "member":{..} or null, into jl->mb (a number that is not a whole one from 0 is not said). */
static bool scan_member(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("job_id"), JK("step_id"),  JK("node"),  JK("from"),       JK("rank"),
                                JK("local_rank"), JK("ranks"), JK("nodes"), JK("node_index"), JK("per_node")};
    for (size_t i = 0; i < 4; i++)
        jl->mb_has[i] = false;
    rt_jline_nan(jl->mb_num, RT_ARRAY_LEN(jl->mb_num));
    bool present;
    if (!object(j, "member is not an object", &present, NULL, NULL, hand, NKEYS(hand), member_hand, jl))
        return false;
    if (!present)
        return true;
    rt_member m = RT_MEMBER_INIT;
    const char **t[] = {&m.job_id, &m.step_id, &m.node, &m.from};
    for (size_t i = 0; i < 4; i++)
        *t[i] = jl->mb_has[i] ? jl->mb_text[i] : NULL;
    int64_t *n[] = {&m.rank, &m.local_rank, &m.ranks, &m.nodes, &m.node_index};
    for (size_t i = 0; i < 5; i++) {
        double v = jl->mb_num[i];
        *n[i] = v >= 0 && v <= 1e9 && v == floor(v) ? (int64_t)v : -1;
    }
    m.per_node = jl->mb_num[5] == 1;
    rt_member_keep(&jl->mb, &m);
    return true;
}

static bool clock_hand(rt_js *j, size_t i, void *jl_)
{
    rt_jline *jl = jl_;
    return num_or_null(j, &jl->clock[i]);
}

/* "clock":{"step_secs":..,"gap_secs":..} (0.20) or null, into jl->clock (0 when absent). */
static bool scan_clock(rt_js *j, rt_jline *jl)
{
    static const jkey hand[] = {JK("step_secs"), JK("gap_secs")};
    bool present;
    return object(j, "clock is not an object", &present, NULL, NULL, hand, NKEYS(hand), clock_hand, jl);
}

/* ---- the line ---------------------------------------------------------------------------- */

enum { K_JOB, K_CPU, K_MEMORY, K_NETWORK, K_DISK, K_GPU, K_PROCESS, K_PRESSURE, K_CGROUP, K_PHASES, K_ENERGY, K_REQUEST,
       K_MEMBER, K_CLOCK, K_COUNT };

static bool top_hand(rt_js *j, size_t key, void *jl_)
{
    rt_jline *jl = jl_;
    bool whole;
    switch (key) {
    case K_JOB: return str_or_null(j, jl->job, sizeof jl->job, &jl->has_job, &whole);
    case K_CPU: return scan_cpu(j, jl);
    case K_MEMORY: return scan_memory(j, jl);
    case K_NETWORK: return scan_devs(j, jl, false);
    case K_DISK: return scan_devs(j, jl, true);
    case K_GPU: return scan_gpus(j, jl);
    case K_PROCESS: return scan_process(j, jl);
    case K_PRESSURE: return scan_psi(j, &jl->psi);
    case K_PHASES: return scan_phases(j, jl);
    case K_ENERGY: return scan_energy(j, jl);
    case K_REQUEST: return scan_request(j, jl);
    case K_MEMBER: return scan_member(j, jl);
    case K_CLOCK: return scan_clock(j, jl);
    default: return scan_cgroup(j, &jl->self_cg);
    }
}

const char *rt_jline_scan(const char *line, size_t len, locale_t c_locale, rt_jline *jl)
{
    static const jkey hand[K_COUNT] = {JK("job_name"), JK("cpu"),     JK("memory"),   JK("network"), JK("disk"),
                                       JK("gpu"),      JK("process"), JK("pressure"), JK("cgroup"),
                                       JK("phases"),   JK("energy"),  JK("request"), JK("member"),
                                       JK("clock")};
    rt_js j = {.p = line, .end = line + len, .c_locale = c_locale};
    rt_jline_reset(jl);
    if (rt_js_peek(&j) != RT_JS_OBJECT || !rt_js_open(&j, '{'))
        return j.err ? j.err : "not a JSON object";
    if (!members(&j, &rt_schema_sample, jl->top, hand, K_COUNT, top_hand, jl) || !rt_js_at_end(&j))
        return j.err ? j.err : "malformed";
    if (isnan(RT_JL_TOP(jl, timestamp_secs)))
        return "no timestamp_secs";
    return NULL;
}
