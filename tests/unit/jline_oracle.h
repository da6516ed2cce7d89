/* jline_oracle.h - for test_reader and fuzz_reader: the rt_jline of one JSON line as jansson
 * reads it (the reference the non-allocating scanner of analysis/jsonscan.c is checked
 * against), and a field-by-field comparison of two rt_jline. Same type rules as the scanner:
 * a record is an object with a numeric timestamp_secs; the members read must have their
 * types (or be null). Include after jsonscan.h. */
#ifndef RT_JLINE_ORACLE_H
#define RT_JLINE_ORACLE_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "analysis/jsonscan.h"

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
        double v[4];
        static const char *const dk[] = {"read_bytes_total", "write_bytes_total", "read_bytes_per_sec",
                                         "write_bytes_per_sec"};
        static const char *const nk[] = {"rx_bytes_total", "tx_bytes_total", "rx_bytes_per_sec", "tx_bytes_per_sec"};
        if (!oracle_str(json_object_get(d, disk ? "device" : "interface"), name, sizeof name, &is_str, &whole))
            return false;
        for (int k = 0; k < 4; k++)
            if (!oracle_num(json_object_get(d, disk ? dk[k] : nk[k]), &v[k]))
                return false;
        if (disk) {
            json_t *mounts, *m;
            size_t mi;
            if (!oracle_array(d, "mounts", &mounts))
                return false;
            json_array_foreach(mounts, mi, m) {
                char point[RT_JL_POINT];
                bool ps, pw;
                double total, used;
                if (!json_is_object(m) || !oracle_str(json_object_get(m, "mount_point"), point, sizeof point, &ps, &pw) ||
                    !oracle_num(json_object_get(m, "total_bytes"), &total) ||
                    !oracle_num(json_object_get(m, "used_bytes"), &used))
                    return false;
                rt_jline_add_mount(jl, point, pw, total, used);
            }
        }
        rt_jline_add_dev(l, name, whole, v[0], v[1], v[2], v[3]);
    }
    return true;
}

/* A "pressure" member of o (0.6): the some/full shares and some_avg10 of cpu, memory, io. */
static inline bool oracle_psi(json_t *o, rt_jl_psi *psi)
{
    static const char *const res[] = {"cpu", "memory", "io"}, *const k[] = {"some_pct", "full_pct", "some_avg10"};
    json_t *p, *r;
    rt_jline_psi_reset(psi);
    if (!oracle_object(o, "pressure", &p))
        return false;
    for (size_t i = 0; p && i < 3; i++) {
        if (!oracle_object(p, res[i], &r))
            return false;
        for (size_t n = 0; r && n < 3; n++)
            if (!oracle_num(json_object_get(r, k[n]), &psi->pct[i][n]))
                return false;
    }
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

/* The "cgroup" member of o (0.6): the process's, or the top-level one. */
static inline bool oracle_cgroup(json_t *o, rt_jl_cgroup *cg)
{
    static const char *const k[] = {"oom_kills", "memory_limit_mib", "memory_high_mib", "cpu_quota_cores",
                                    "cpu_periods", "cpu_throttled_periods", "cpu_throttled_secs", "pids_peak",
                                    "pids_limit", "pids", "memory_unreclaimable_peak_mib"};
    double *const d[] = {&cg->oom_kills, &cg->mem_limit, &cg->mem_high, &cg->quota, &cg->periods,
                         &cg->throttled_periods, &cg->throttled_secs, &cg->pids_peak, &cg->pids_limit,
                         &cg->pids, &cg->unreclaimable_peak};
    json_t *c;
    if (!oracle_object(o, "cgroup", &c))
        return false;
    rt_jline_cgroup_reset(cg, c != NULL);
    for (size_t n = 0; c && n < sizeof k / sizeof k[0]; n++)
        if (!oracle_num(json_object_get(c, k[n]), d[n]))
            return false;
    if (c && (!oracle_flag(json_object_get(c, "own"), &cg->own) ||
              !oracle_flag(json_object_get(c, "exclusive"), &cg->exclusive)))
        return false;
    return !c || oracle_psi(c, &cg->psi);
}

static inline bool oracle_walk(json_t *root, rt_jline *jl)
{
    json_t *o, *a, *e;
    size_t i;
    bool whole;
    if (!oracle_num(json_object_get(root, "timestamp_secs"), &jl->timestamp) ||
        !oracle_num(json_object_get(root, "interval_secs"), &jl->interval) ||
        !oracle_str(json_object_get(root, "job_name"), jl->job, sizeof jl->job, &jl->has_job, &whole))
        return false;
    if (!oracle_object(root, "cpu", &o))
        return false;
    if (o) {
        if (!oracle_num(json_object_get(o, "utilization_pct"), &jl->cpu_util) || !oracle_array(o, "per_core_pct", &a))
            return false;
        jl->cpu_cores_listed = a ? (double)json_array_size(a) : NAN;
    }
    if (!oracle_object(root, "memory", &o))
        return false;
    if (o && (!oracle_num(json_object_get(o, "used_mib"), &jl->mem_used) ||
              !oracle_num(json_object_get(o, "total_mib"), &jl->mem_total)))
        return false;
    if (!oracle_devs(root, jl, false) || !oracle_devs(root, jl, true))
        return false;
    if (!oracle_array(root, "gpu", &a))
        return false;
    rt_jline_gpu_reset(jl, a != NULL);
    json_array_foreach(a, i, e) {
        double u, used, total;
        char uuid[RT_JL_UUID];
        bool is_str, uuid_whole;
        if (!json_is_object(e) || !oracle_num(json_object_get(e, "utilization_pct"), &u) ||
            !oracle_num(json_object_get(e, "vram_used_bytes"), &used) ||
            !oracle_num(json_object_get(e, "vram_total_bytes"), &total) ||
            !oracle_str(json_object_get(e, "uuid"), uuid, sizeof uuid, &is_str, &uuid_whole))
            return false;
        rt_jline_add_gpu(jl, uuid, uuid_whole, u, used, total);
    }
    if (!oracle_object(root, "process", &o))
        return false;
    rt_jline_process_reset(jl, o != NULL);
    if (o) {
        static const char *const k[] = {"pid", "child_count", "cores_used", "utime_secs", "stime_secs",
                                        "cpu_secs_total", "pss_mib", "rss_mib", "rss_peak_mib", "read_bytes_total",
                                        "write_bytes_total", "gpu_utilization_pct", "gpu_vram_used_bytes",
                                        "gpu_count_used", "rss_hwm_mib", "gpu_vram_peak_bytes",
                                        "cancelled_write_bytes_total"};
        double *const d[] = {&jl->p_pid, &jl->p_children, &jl->p_cores, &jl->p_utime, &jl->p_stime,
                             &jl->p_cpu_total, &jl->p_pss, &jl->p_rss, &jl->p_rss_peak, &jl->p_read_total,
                             &jl->p_write_total, &jl->p_gpu_util, &jl->p_gpu_vram_bytes, &jl->p_gpu_count,
                             &jl->p_rss_hwm, &jl->p_vram_peak_bytes, &jl->p_cancelled_total};
        for (size_t n = 0; n < sizeof k / sizeof k[0]; n++)
            if (!oracle_num(json_object_get(o, k[n]), d[n]))
                return false;
        if (!oracle_num(json_object_get(o, "memory_peak_mib"), &jl->p_mem_peak) || !oracle_cgroup(o, &jl->cg) ||
            !oracle_flag(json_object_get(o, "alive"), &jl->p_alive))
            return false;
        static const char *const parts[3] = {"main", "descendants", "combined"};
        static const char *const pk[RT_JL_NPART] = {"total_rss_mib", "private_rss_mib", "shared_rss_mib",
                                                    "cores_used",    "thread_count",    "gpu_vram_used_bytes"};
        for (size_t n = 0; n < 3; n++) {
            json_t *po;
            if (!oracle_object(o, parts[n], &po))
                return false;
            for (size_t f = 0; po && f < RT_JL_NPART; f++)
                if (!oracle_num(json_object_get(po, pk[f]), &jl->part[n][f]))
                    return false;
        }
    }
    return oracle_psi(root, &jl->psi) && oracle_cgroup(root, &jl->self_cg) && !isnan(jl->timestamp);
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

/* NULL when two "cgroup" members hold the same figures, else the name of the first that differs. */
static inline const char *same_cgroup(const rt_jl_cgroup *a, const rt_jl_cgroup *b)
{
#define SAME(f) if (!same_num(a->f, b->f)) return "cg." #f
    SAME(oom_kills); SAME(mem_limit); SAME(mem_high); SAME(quota); SAME(periods); SAME(throttled_periods);
    SAME(throttled_secs); SAME(pids_peak); SAME(pids_limit); SAME(pids); SAME(unreclaimable_peak); SAME(own);
    SAME(exclusive);
    for (size_t i = 0; i < 3; i++)
        for (size_t n = 0; n < 3; n++)
            SAME(psi.pct[i][n]);
#undef SAME
    return a->present != b->present ? "cg.present" : NULL;
}

/* Returns NULL when a and b hold the same figures, else the name of the first that differs. */
static inline const char *jline_diff(const rt_jline *a, const rt_jline *b)
{
#define SAME(f) if (!same_num(a->f, b->f)) return #f
    SAME(timestamp); SAME(interval); SAME(cpu_util); SAME(cpu_cores_listed); SAME(mem_used); SAME(mem_total);
    SAME(rest_space_total); SAME(rest_space_used); SAME(gpu_count); SAME(gpu_usage); SAME(gpu_utilized);
    SAME(gpu_vram_mib); SAME(gpu_vram_total_mib); SAME(p_pid); SAME(p_children); SAME(p_cores); SAME(p_utime);
    SAME(p_stime); SAME(p_cpu_total); SAME(p_pss); SAME(p_rss); SAME(p_rss_peak); SAME(p_read_total);
    SAME(p_write_total); SAME(p_gpu_util); SAME(p_gpu_vram_bytes); SAME(p_gpu_count);
    SAME(p_mem_peak); SAME(p_rss_hwm); SAME(p_vram_peak_bytes); SAME(p_cancelled_total); SAME(p_alive);
    for (size_t i = 0; i < 3; i++)
        for (size_t n = 0; n < 3; n++)
            SAME(psi.pct[i][n]);
    for (size_t i = 0; i < 3; i++)
        for (size_t n = 0; n < RT_JL_NPART; n++)
            SAME(part[i][n]);
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
