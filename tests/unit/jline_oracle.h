/* jline_oracle.h - for test_reader and fuzz_reader: the rt_jline of one JSON line as jansson
 * reads it (the reference the non-allocating scanner of analysis/jsonline.c is checked
 * against), and a field-by-field comparison of two rt_jline. Same type rules as the scanner:
 * a record is an object with a numeric timestamp_secs; the members read must have their
 * types (or be null). The figures of a struct are the ones its schema table lists for the
 * JSON line (core/schema.h), as the scanner reads them. */
#ifndef RT_JLINE_ORACLE_H
#define RT_JLINE_ORACLE_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "analysis/jsonline.h"
#include "core/schema.h"

/* *out = the number v (NaN for null or absent). Returns false for another type. */
static inline bool oracle_num(json_t *v, double *out)
{
    if (!v || json_is_null(v)) {
        *out = NAN;
        return true;
    }
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

/* Copies the string v into dst[cap] (cut to fit; "" for null or absent). */
static inline bool oracle_str(json_t *v, char *dst, size_t cap, bool *is_str, bool *whole)
{
    *is_str = *whole = false;
    dst[0] = '\0';
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v))
        return false;
    size_t n = json_string_length(v), k = n < cap ? n : cap - 1;
    memcpy(dst, json_string_value(v), k);
    dst[k] = '\0';
    *is_str = true;
    *whole = n < cap;
    return true;
}

/* Sets *arr to the array member k of o (NULL for null or absent). False for another type. */
static inline bool oracle_array(json_t *o, const char *k, json_t **arr)
{
    *arr = json_object_get(o, k);
    if (*arr && json_is_null(*arr))
        *arr = NULL;
    return !*arr || json_is_array(*arr);
}

static inline bool oracle_object(json_t *o, const char *k, json_t **obj)
{
    *obj = json_object_get(o, k);
    if (*obj && json_is_null(*obj))
        *obj = NULL;
    return !*obj || json_is_object(*obj);
}

static inline bool oracle_figs(json_t *o, const rt_fstruct *st, double *v);

static inline bool oracle_devs(json_t *root, rt_jline *jl, bool disk)
{
    json_t *arr, *d;
    size_t i;
    rt_jl_list *l = disk ? &jl->disk : &jl->net;
    if (!oracle_array(root, disk ? "disk" : "network", &arr))
        return false;
    rt_jline_list_reset(l, arr != NULL);
    json_array_foreach(arr, i, d) {
        if (!json_is_object(d))
            return false;
        char name[RT_JL_NAME];
        bool is_str, whole;
        double f[RT_JL_SLOTS(rt_disk) > RT_JL_SLOTS(rt_net_iface) ? RT_JL_SLOTS(rt_disk) : RT_JL_SLOTS(rt_net_iface)];
        rt_jline_nan(f, sizeof f / sizeof f[0]);
        if (!oracle_str(json_object_get(d, disk ? "device" : "interface"), name, sizeof name, &is_str, &whole) ||
            !oracle_figs(d, disk ? &rt_schema_disk : &rt_schema_net_iface, f))
            return false;
        double v[4] = {f[RT_JL_SLOT(rt_net_iface, rx_bytes_total)], f[RT_JL_SLOT(rt_net_iface, tx_bytes_total)],
                       f[RT_JL_SLOT(rt_net_iface, rx_bytes_per_sec)], f[RT_JL_SLOT(rt_net_iface, tx_bytes_per_sec)]};
        if (disk) {
            double dv[4] = {f[RT_JL_SLOT(rt_disk, read_bytes_total)], f[RT_JL_SLOT(rt_disk, write_bytes_total)],
                            f[RT_JL_SLOT(rt_disk, read_bytes_per_sec)], f[RT_JL_SLOT(rt_disk, write_bytes_per_sec)]};
            memcpy(v, dv, sizeof v);
        }
        if (disk) {
            json_t *mounts, *m;
            size_t mi;
            if (!oracle_array(d, "mounts", &mounts))
                return false;
            json_array_foreach(mounts, mi, m) {
                char point[RT_JL_POINT];
                bool ps, pw;
                double mv[RT_JL_SLOTS(rt_mount)];
                rt_jline_nan(mv, RT_JL_SLOTS(rt_mount));
                if (!json_is_object(m) || !oracle_str(json_object_get(m, "mount_point"), point, sizeof point, &ps, &pw) ||
                    !oracle_figs(m, &rt_schema_mount, mv))
                    return false;
                rt_jline_add_mount(jl, point, pw, mv[RT_JL_SLOT(rt_mount, total_bytes)],
                                   mv[RT_JL_SLOT(rt_mount, used_bytes)]);
            }
        }
        rt_jline_add_dev(l, name, whole, v[0], v[1], v[2], v[3]);
    }
    return true;
}

/* A "pressure" member of o (0.6): the some/full shares and some_avg10 of cpu, memory, io. */
static inline bool oracle_psi(json_t *o, rt_jl_psi *psi)
{
    static const char *const res[] = {"cpu", "memory", "io"};
    json_t *p, *r;
    rt_jline_psi_reset(psi);
    if (!oracle_object(o, "pressure", &p))
        return false;
    for (size_t i = 0; p && i < 3; i++)
        if (!oracle_object(p, res[i], &r) || !oracle_figs(r, &rt_schema_pressure, psi->res[i]))
            return false;
    return true;
}

/* A member that is true, false, null or absent (1, 0, NaN, NaN); false for another type. */
static inline bool oracle_flag(json_t *v, double *out)
{
    if (!v || json_is_null(v)) {
        *out = NAN;
        return true;
    }
    if (!json_is_boolean(v))
        return false;
    *out = json_is_true(v) ? 1 : 0;
    return true;
}

/* The figures of table st in the object o (NULL: none) into their slots of v: each member the
 * schema lists for the JSON line, a flag as true/false/null, any other figure as a number or
 * null. */
static inline bool oracle_figs(json_t *o, const rt_fstruct *st, double *v)
{
    for (size_t i = 0; o && i < st->n; i++) {
        const rt_field *f = &st->f[i];
        if (f->jdec == RT_NO_JSON || f->type == RT_FIELD_STRING)
            continue;
        json_t *x = json_object_get(o, f->name);
        if (!(f->type == RT_FIELD_FLAG ? oracle_flag(x, &v[f->off / 4]) : oracle_num(x, &v[f->off / 4])))
            return false;
    }
    return true;
}

/* The "cgroup" member of o (0.6): the process's, or the top-level one. */
static inline bool oracle_cgroup(json_t *o, rt_jl_cgroup *cg)
{
    json_t *c;
    if (!oracle_object(o, "cgroup", &c))
        return false;
    rt_jline_cgroup_reset(cg, c != NULL);
    return !c || (oracle_figs(c, &rt_schema_cgroup, cg->f) && oracle_psi(c, &cg->psi));
}

static inline bool oracle_walk(json_t *root, rt_jline *jl)
{
    json_t *o, *a, *e;
    size_t i;
    bool whole;
    if (!oracle_figs(root, &rt_schema_sample, jl->top) ||
        !oracle_str(json_object_get(root, "job_name"), jl->job, sizeof jl->job, &jl->has_job, &whole))
        return false;
    if (!oracle_object(root, "cpu", &o))
        return false;
    if (o) {
        if (!oracle_figs(o, &rt_schema_cpu, jl->cpu) || !oracle_array(o, "per_core_pct", &a))
            return false;
        jl->cpu_cores_listed = a ? (double)json_array_size(a) : NAN;
    }
    if (!oracle_object(root, "memory", &o))
        return false;
    if (!oracle_figs(o, &rt_schema_memory, jl->mem))
        return false;
    if (!oracle_devs(root, jl, false) || !oracle_devs(root, jl, true))
        return false;
    if (!oracle_array(root, "gpu", &a))
        return false;
    rt_jline_gpu_reset(jl, a != NULL);
    json_array_foreach(a, i, e) {
        double v[RT_JL_SLOTS(rt_gpu)];
        char uuid[RT_JL_UUID];
        bool is_str, uuid_whole;
        rt_jline_nan(v, RT_JL_SLOTS(rt_gpu));
        if (!json_is_object(e) || !oracle_figs(e, &rt_schema_gpu, v) ||
            !oracle_str(json_object_get(e, "uuid"), uuid, sizeof uuid, &is_str, &uuid_whole))
            return false;
        rt_jline_add_gpu(jl, uuid, uuid_whole, v[RT_JL_SLOT(rt_gpu, utilization_pct)],
                         v[RT_JL_SLOT(rt_gpu, vram_used_bytes)], v[RT_JL_SLOT(rt_gpu, vram_total_bytes)]);
    }
    if (!oracle_object(root, "process", &o))
        return false;
    rt_jline_process_reset(jl, o != NULL);
    if (o) {
        if (!oracle_figs(o, &rt_schema_process, jl->proc) || !oracle_cgroup(o, &jl->cg))
            return false;
        static const char *const parts[RT_JL_NPARTS] = {"main", "descendants", "combined"};
        for (size_t n = 0; n < RT_JL_NPARTS; n++) {
            json_t *po;
            if (!oracle_object(o, parts[n], &po) || !oracle_figs(po, &rt_schema_part, jl->part[n]))
                return false;
        }
    }
    return oracle_psi(root, &jl->psi) && oracle_cgroup(root, &jl->self_cg) &&
           !isnan(RT_JL_TOP(jl, timestamp_secs));
}

/* Fills *jl from line[0..len) through jansson. Returns 0 when it is a record, 1 when jansson
 * rejects the text, 2 when it is valid JSON but not a record. */
static inline int oracle_jline(const char *line, size_t len, rt_jline *jl)
{
    json_error_t err;
    json_t *root = json_loadb(line, len, 0, &err);
    if (!root)
        return 1;
    rt_jline_reset(jl);
    int rc = json_is_object(root) && oracle_walk(root, jl) ? 0 : 2;
    json_decref(root);
    return rc;
}

/* Whether two figures are the same (NaN equals NaN). */
static inline bool same_num(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static inline bool same_list(const rt_jl_list *a, const rt_jl_list *b)
{
    if (a->present != b->present || a->n != b->n || !same_num(a->rest_rate_a, b->rest_rate_a) ||
        !same_num(a->rest_rate_b, b->rest_rate_b))
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const rt_jl_dev *x = &a->dev[i], *y = &b->dev[i];
        if (x->named != y->named || strcmp(x->name, y->name) != 0 || !same_num(x->total_a, y->total_a) ||
            !same_num(x->total_b, y->total_b) || !same_num(x->rate_a, y->rate_a) || !same_num(x->rate_b, y->rate_b))
            return false;
    }
    return true;
}

/* NULL when the slots a and b of table st's struct hold the same figures, else the name of the
 * first field that differs. */
static inline const char *same_figs(const rt_fstruct *st, const double *a, const double *b)
{
    for (size_t i = 0; i < st->n; i++)
        if (!same_num(a[st->f[i].off / 4], b[st->f[i].off / 4]))
            return st->f[i].name;
    return NULL;
}

static inline const char *same_psi(const rt_jl_psi *a, const rt_jl_psi *b)
{
    const char *d = NULL;
    for (size_t i = 0; i < 3 && !d; i++)
        d = same_figs(&rt_schema_pressure, a->res[i], b->res[i]);
    return d;
}

/* NULL when two "cgroup" members hold the same figures, else the name of the first that differs. */
static inline const char *same_cgroup(const rt_jl_cgroup *a, const rt_jl_cgroup *b)
{
    const char *d = same_figs(&rt_schema_cgroup, a->f, b->f);
    if (!d)
        d = same_psi(&a->psi, &b->psi);
    return d ? d : a->present != b->present ? "cg.present" : NULL;
}

/* Returns NULL when a and b hold the same figures, else the name of the first that differs. */
static inline const char *jline_diff(const rt_jline *a, const rt_jline *b)
{
    const char *d = same_figs(&rt_schema_sample, a->top, b->top);
    if (!d)
        d = same_figs(&rt_schema_cpu, a->cpu, b->cpu);
    if (!d)
        d = same_figs(&rt_schema_memory, a->mem, b->mem);
    if (!d)
        d = same_figs(&rt_schema_process, a->proc, b->proc);
    for (size_t i = 0; i < RT_JL_NPARTS && !d; i++)
        d = same_figs(&rt_schema_part, a->part[i], b->part[i]);
    if (!d)
        d = same_psi(&a->psi, &b->psi);
    if (d)
        return d;
#define SAME(f) if (!same_num(a->f, b->f)) return #f
    SAME(cpu_cores_listed); SAME(rest_space_total); SAME(rest_space_used); SAME(gpu_count); SAME(gpu_usage);
    SAME(gpu_utilized); SAME(gpu_vram_mib); SAME(gpu_vram_total_mib);
    if (a->ngpu != b->ngpu)
        return "ngpu";
    for (size_t i = 0; i < a->ngpu; i++) {
        SAME(gpu[i].util);
        SAME(gpu[i].used);
        SAME(gpu[i].total);
        if (a->gpu[i].named != b->gpu[i].named || strcmp(a->gpu[i].uuid, b->gpu[i].uuid) != 0)
            return "gpu[].uuid";
    }
#undef SAME
    const char *cg = same_cgroup(&a->cg, &b->cg);
    if (cg)
        return cg;
    if (same_cgroup(&a->self_cg, &b->self_cg))
        return "self_cg (the top-level cgroup)";
    if (a->has_job != b->has_job || strcmp(a->job, b->job) != 0)
        return "job";
    if (a->gpu_present != b->gpu_present || a->gpu_known != b->gpu_known)
        return "gpu_present";
    if (a->has_process != b->has_process)
        return "has_process";
    if (!same_list(&a->disk, &b->disk))
        return "disk";
    if (!same_list(&a->net, &b->net))
        return "net";
    if (a->nmount != b->nmount)
        return "nmount";
    for (size_t i = 0; i < a->nmount; i++)
        if (a->mount[i].named != b->mount[i].named || strcmp(a->mount[i].point, b->mount[i].point) != 0 ||
            !same_num(a->mount[i].total, b->mount[i].total) || !same_num(a->mount[i].used, b->mount[i].used))
            return "mount";
    return NULL;
}

#endif
