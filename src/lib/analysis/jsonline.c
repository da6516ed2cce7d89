/* jsonline.c - the walk over one of the tool's JSON lines (docs/contracts.md §2) that picks
 * out the figures the reader maps to an rt_record (rt_jline), skipping (but validating)
 * everything else; built on the tokenizer of jsonscan.c. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>

#include "../core/core.h"
#include "jsonscan.h"

/* Records the first problem of the walk (msg: static text). Returns false. */
static bool fail(rt_js *j, const char *msg)
{
    if (!j->err)
        j->err = msg;
    return false;
}

/* ---- rt_jline: shared by the scanner and the tests' jansson oracle ----------------------- */

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
}

void rt_jline_process_reset(rt_jline *jl, bool present)
{
    jl->has_process = present;
    jl->p_pid = jl->p_children = jl->p_cores = jl->p_utime = jl->p_stime = jl->p_cpu_total = NAN;
    jl->p_pss = jl->p_rss = jl->p_rss_peak = jl->p_read_total = jl->p_write_total = NAN;
    jl->p_gpu_util = jl->p_gpu_vram_bytes = jl->p_gpu_count = jl->p_mem_peak = NAN;
    jl->p_rss_hwm = jl->p_vram_peak_bytes = jl->p_cancelled_total = jl->p_alive = NAN;
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < RT_JL_NPART; k++)
            jl->part[i][k] = NAN;
    rt_jline_cgroup_reset(&jl->cg, false);
}

void rt_jline_cgroup_reset(rt_jl_cgroup *cg, bool present)
{
    cg->present = present;
    cg->oom_kills = cg->mem_limit = cg->mem_high = cg->quota = cg->periods = NAN;
    cg->throttled_periods = cg->throttled_secs = cg->pids_peak = cg->pids_limit = NAN;
    cg->pids = cg->unreclaimable_peak = cg->own = cg->exclusive = NAN;
    rt_jline_psi_reset(&cg->psi);
}

void rt_jline_psi_reset(rt_jl_psi *psi)
{
    for (size_t i = 0; i < 3; i++)
        psi->pct[i][0] = psi->pct[i][1] = psi->pct[i][2] = NAN;
}

void rt_jline_reset(rt_jline *jl)
{
    jl->timestamp = jl->interval = NAN;
    jl->has_job = false;
    jl->job[0] = '\0';
    jl->cpu_util = jl->cpu_cores_listed = NAN;
    jl->mem_used = jl->mem_total = NAN;
    rt_jline_list_reset(&jl->disk, false);
    rt_jline_list_reset(&jl->net, false);
    jl->nmount = 0;
    jl->rest_space_total = jl->rest_space_used = NAN;
    rt_jline_gpu_reset(jl, false);
    rt_jline_process_reset(jl, false);
    rt_jline_psi_reset(&jl->psi);
    rt_jline_cgroup_reset(&jl->self_cg, false);
}

void rt_jline_add_dev(rt_jl_list *l, const char *name, bool named, double ta, double tb, double ra, double rb)
{
    if (l->n >= RT_JL_MAX_DEV) {
        l->rest_rate_a = rt_add_known(l->rest_rate_a, ra);
        l->rest_rate_b = rt_add_known(l->rest_rate_b, rb);
        return;
    }
    rt_jl_dev *d = &l->dev[l->n++];
    d->named = named && strlen(name) < sizeof d->name;
    if (d->named)
        memcpy(d->name, name, strlen(name) + 1);
    else
        d->name[0] = '\0';
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
    m->named = named && strlen(point) < sizeof m->point;
    if (m->named)
        memcpy(m->point, point, strlen(point) + 1);
    else
        m->point[0] = '\0';
    m->total = total;
    m->used = used;
}

void rt_jline_add_gpu(rt_jline *jl, const char *uuid, bool named, double util_pct, double vram_used,
                      double vram_total)
{
    if (jl->ngpu < RT_JL_MAX_GPU) {
        rt_jl_gpu *g = &jl->gpu[jl->ngpu++];
        g->named = uuid && named && strlen(uuid) < sizeof g->uuid;
        if (g->named)
            memcpy(g->uuid, uuid, strlen(uuid) + 1);
        else
            g->uuid[0] = '\0';
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
#define JK(x) {x, sizeof(x) - 1}
#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* Whether the raw key k[0..n) is name (decoding escapes when there are any). */
static bool key_is(const char *k, size_t n, const jkey *name)
{
    if (n == name->n && memcmp(k, name->s, n) == 0)
        return true;
    if (n <= name->n || !memchr(k, '\\', n))
        return false;
    char buf[64];
    size_t d = rt_js_unescape(k, n, buf, sizeof buf);
    return d == name->n && memcmp(buf, name->s, d) == 0;
}

/* The index in names[0..n) of the raw key k[0..kl), or n. The search starts at *hint (the
 * member after the last one found, as the tool writes members in a fixed order). */
static size_t which(const char *k, size_t kl, const jkey *names, size_t n, size_t *hint)
{
    for (size_t c = 0, i = *hint < n ? *hint : 0; c < n; c++, i = i + 1 < n ? i + 1 : 0)
        if (key_is(k, kl, &names[i])) {
            *hint = i + 1;
            return i;
        }
    return n;
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

/* Reads the members of an open object: each named in names[0..n) as a number or null into
 * *dst[i], the rest skipped. */
static bool number_members(rt_js *j, const jkey *names, double *const *dst, size_t n)
{
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, n, &hint);
        if (!(i < n ? num_or_null(j, dst[i]) : rt_js_skip(j)))
            return false;
    }
    return r == 0;
}

/* Counts the elements of per_core_pct (any values) into *count; NaN for null. */
static bool count_elements(rt_js *j, double *count)
{
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
    static const jkey names[] = {JK("utilization_pct"), JK("per_core_pct")};
    jl->cpu_util = jl->cpu_cores_listed = NAN;
    int o = open_or_null(j, '{', "cpu is not an object");
    if (o <= 0)
        return o == 0;
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, 2, &hint);
        bool ok = i == 0 ? num_or_null(j, &jl->cpu_util) : i == 1 ? count_elements(j, &jl->cpu_cores_listed)
                                                                  : rt_js_skip(j);
        if (!ok)
            return false;
    }
    return r == 0;
}

static bool scan_memory(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("used_mib"), JK("total_mib")};
    jl->mem_used = jl->mem_total = NAN;
    int o = open_or_null(j, '{', "memory is not an object");
    if (o <= 0)
        return o == 0;
    double *const dst[] = {&jl->mem_used, &jl->mem_total};
    return number_members(j, names, dst, 2);
}

/* The "mounts" of one disk: appended to jl's mount list. */
static bool scan_mounts(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("mount_point"), JK("total_bytes"), JK("used_bytes")};
    int o = open_or_null(j, '[', "mounts is not an array");
    if (o <= 0)
        return o == 0;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, "a mount is not an object");
        rt_js_open(j, '{');
        char point[RT_JL_POINT];
        bool is_str, whole = false, f2 = true;
        double total = NAN, used = NAN;
        const char *k;
        size_t kl, hint = 0;
        int m;
        point[0] = '\0';
        while ((m = rt_js_member(j, &f2, &k, &kl)) == 1) {
            size_t i = which(k, kl, names, 3, &hint);
            bool ok = i == 0 ? str_or_null(j, point, sizeof point, &is_str, &whole)
                    : i == 1 ? num_or_null(j, &total)
                    : i == 2 ? num_or_null(j, &used)
                             : rt_js_skip(j);
            if (!ok)
                return false;
        }
        if (m < 0)
            return false;
        rt_jline_add_mount(jl, point, whole, total, used);
    }
    return r == 0;
}

/* The "disk" or "network" array (disk: with mounts). */
static bool scan_devs(rt_js *j, rt_jline *jl, bool disk)
{
    static const jkey disk_names[] = {JK("device"), JK("read_bytes_total"), JK("write_bytes_total"),
                                      JK("read_bytes_per_sec"), JK("write_bytes_per_sec"), JK("mounts")};
    static const jkey net_names[] = {JK("interface"), JK("rx_bytes_total"), JK("tx_bytes_total"),
                                     JK("rx_bytes_per_sec"), JK("tx_bytes_per_sec")};
    rt_jl_list *l = disk ? &jl->disk : &jl->net;
    rt_jline_list_reset(l, false);
    if (disk) {
        jl->nmount = 0;
        jl->rest_space_total = jl->rest_space_used = NAN;
    }
    int o = open_or_null(j, '[', disk ? "disk is not an array" : "network is not an array");
    if (o <= 0)
        return o == 0;
    l->present = true;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, disk ? "a disk is not an object" : "an interface is not an object");
        rt_js_open(j, '{');
        char name[RT_JL_NAME];
        bool is_str, whole = false, f2 = true, had_mounts = false;
        double v[4] = {NAN, NAN, NAN, NAN};
        size_t mount0 = jl->nmount;
        double rest_t = jl->rest_space_total, rest_u = jl->rest_space_used;
        const char *k;
        size_t kl, hint = 0;
        int m;
        name[0] = '\0';
        while ((m = rt_js_member(j, &f2, &k, &kl)) == 1) {
            size_t i = disk ? which(k, kl, disk_names, 6, &hint) : which(k, kl, net_names, 5, &hint);
            bool ok;
            if (i == 0) {
                ok = str_or_null(j, name, sizeof name, &is_str, &whole);
            } else if (i <= 4) {
                ok = num_or_null(j, &v[i - 1]);
            } else if (i == 5 && disk) {
                if (had_mounts) { /* a repeated member: the last one counts */
                    jl->nmount = mount0;
                    jl->rest_space_total = rest_t;
                    jl->rest_space_used = rest_u;
                }
                had_mounts = true;
                ok = scan_mounts(j, jl);
            } else {
                ok = rt_js_skip(j);
            }
            if (!ok)
                return false;
        }
        if (m < 0)
            return false;
        rt_jline_add_dev(l, name, whole, v[0], v[1], v[2], v[3]);
    }
    return r == 0;
}

static bool scan_gpus(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {JK("utilization_pct"), JK("vram_used_bytes"), JK("vram_total_bytes"), JK("uuid")};
    rt_jline_gpu_reset(jl, false);
    int o = open_or_null(j, '[', "gpu is not an array");
    if (o <= 0)
        return o == 0;
    jl->gpu_present = true;
    bool first = true;
    int r;
    while ((r = rt_js_element(j, &first)) == 1) {
        if (rt_js_peek(j) != RT_JS_OBJECT)
            return fail(j, "a GPU is not an object");
        rt_js_open(j, '{');
        double v[3] = {NAN, NAN, NAN};
        char uuid[RT_JL_UUID];
        bool is_str, whole = false, f2 = true;
        const char *k;
        size_t kl, hint = 0;
        int m;
        uuid[0] = '\0';
        while ((m = rt_js_member(j, &f2, &k, &kl)) == 1) {
            size_t i = which(k, kl, names, NKEYS(names), &hint);
            bool ok = i < 3 ? num_or_null(j, &v[i]) : i == 3 ? str_or_null(j, uuid, sizeof uuid, &is_str, &whole)
                                                            : rt_js_skip(j);
            if (!ok)
                return false;
        }
        if (m < 0)
            return false;
        rt_jline_add_gpu(jl, uuid, whole, v[0], v[1], v[2]);
    }
    return r == 0;
}

/* A "pressure" object (the machine's, or a group's) or null: the some/full percentages. */
static bool scan_psi(rt_js *j, rt_jl_psi *psi)
{
    static const jkey names[] = {JK("cpu"), JK("memory"), JK("io")};
    static const jkey pct_names[] = {JK("some_pct"), JK("full_pct"), JK("some_avg10")};
    rt_jline_psi_reset(psi);
    int o = open_or_null(j, '{', "pressure is not an object");
    if (o <= 0)
        return o == 0;
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, NKEYS(names), &hint);
        if (i == NKEYS(names)) {
            if (!rt_js_skip(j))
                return false;
            continue;
        }
        psi->pct[i][0] = psi->pct[i][1] = psi->pct[i][2] = NAN;
        int p = open_or_null(j, '{', "a pressure figure is not an object");
        if (p < 0)
            return false;
        double *const dst[] = {&psi->pct[i][0], &psi->pct[i][1], &psi->pct[i][2]};
        if (p == 1 && !number_members(j, pct_names, dst, NKEYS(pct_names)))
            return false;
    }
    return r == 0;
}

/* A "cgroup" object or null (docs/contracts.md §2, 0.6: the limits and what they did): the
 * process's, or the top-level one (the tracker's own group). */
static bool scan_cgroup(rt_js *j, rt_jl_cgroup *cg)
{
    static const jkey names[] = {
        JK("cpu_quota_cores"), JK("memory_limit_mib"), JK("memory_high_mib"), JK("pids_limit"),
        JK("pids_peak"),       JK("cpu_periods"),      JK("cpu_throttled_periods"), JK("cpu_throttled_secs"),
        JK("oom_kills"),       JK("pids"),             JK("memory_unreclaimable_peak_mib"),
        JK("pressure"),        JK("own"),              JK("exclusive"),
    };
    rt_jline_cgroup_reset(cg, false);
    int o = open_or_null(j, '{', "cgroup is not an object");
    if (o <= 0)
        return o == 0;
    cg->present = true;
    double *const dst[] = {
        &cg->quota,     &cg->mem_limit, &cg->mem_high,          &cg->pids_limit,
        &cg->pids_peak, &cg->periods,   &cg->throttled_periods, &cg->throttled_secs,
        &cg->oom_kills, &cg->pids,      &cg->unreclaimable_peak,
    };
    double *const flags[] = {&cg->own, &cg->exclusive};
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, NKEYS(names), &hint);
        bool ok = i < NKEYS(dst)               ? num_or_null(j, dst[i])
                : i == NKEYS(dst)              ? scan_psi(j, &cg->psi)
                : i < NKEYS(names)             ? flag_or_null(j, flags[i - NKEYS(dst) - 1])
                                               : rt_js_skip(j);
        if (!ok)
            return false;
    }
    return r == 0;
}

/* A part of the tree (0.8: process.main, .descendants, .combined) or null into part[]. */
static bool scan_part(rt_js *j, double *part)
{
    static const jkey names[RT_JL_NPART] = {JK("total_rss_mib"), JK("private_rss_mib"), JK("shared_rss_mib"),
                                            JK("cores_used"),    JK("thread_count"),    JK("gpu_vram_used_bytes")};
    for (size_t k = 0; k < RT_JL_NPART; k++)
        part[k] = NAN;
    int o = open_or_null(j, '{', "a part of the process is not an object");
    if (o <= 0)
        return o == 0;
    double *const dst[RT_JL_NPART] = {&part[0], &part[1], &part[2], &part[3], &part[4], &part[5]};
    return number_members(j, names, dst, RT_JL_NPART);
}

static bool scan_process(rt_js *j, rt_jline *jl)
{
    static const jkey names[] = {
        JK("pid"),          JK("child_count"),      JK("cores_used"),        JK("utime_secs"),
        JK("stime_secs"),   JK("cpu_secs_total"),   JK("pss_mib"),           JK("rss_mib"),
        JK("rss_peak_mib"), JK("read_bytes_total"), JK("write_bytes_total"), JK("gpu_utilization_pct"),
        JK("gpu_vram_used_bytes"), JK("gpu_count_used"), JK("memory_peak_mib"), JK("rss_hwm_mib"),
        JK("gpu_vram_peak_bytes"), JK("cancelled_write_bytes_total"), JK("cgroup"),
        JK("main"),         JK("descendants"),      JK("combined"),     JK("alive"),
    };
    rt_jline_process_reset(jl, false);
    int o = open_or_null(j, '{', "process is not an object");
    if (o <= 0)
        return o == 0;
    jl->has_process = true;
    double *const dst[] = {
        &jl->p_pid,       &jl->p_children,   &jl->p_cores,      &jl->p_utime,       &jl->p_stime,
        &jl->p_cpu_total, &jl->p_pss,        &jl->p_rss,        &jl->p_rss_peak,    &jl->p_read_total,
        &jl->p_write_total, &jl->p_gpu_util, &jl->p_gpu_vram_bytes, &jl->p_gpu_count, &jl->p_mem_peak,
        &jl->p_rss_hwm,   &jl->p_vram_peak_bytes, &jl->p_cancelled_total,
    };
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(j, &first, &k, &kl)) == 1) {
        size_t i = which(k, kl, names, NKEYS(names), &hint);
        bool ok = i < NKEYS(dst)          ? num_or_null(j, dst[i])
                : i == NKEYS(dst)         ? scan_cgroup(j, &jl->cg)
                : i < NKEYS(dst) + 4      ? scan_part(j, jl->part[i - NKEYS(dst) - 1])
                : i == NKEYS(dst) + 4     ? flag_or_null(j, &jl->p_alive)
                                          : rt_js_skip(j);
        if (!ok)
            return false;
    }
    return r == 0;
}

enum { K_TS, K_INTERVAL, K_JOB, K_CPU, K_MEMORY, K_NETWORK, K_DISK, K_GPU, K_PROCESS, K_PRESSURE, K_CGROUP, K_COUNT };

static bool scan_top_member(rt_js *j, rt_jline *jl, size_t key)
{
    bool whole;
    switch (key) {
    case K_TS: return num_or_null(j, &jl->timestamp);
    case K_INTERVAL: return num_or_null(j, &jl->interval);
    case K_JOB: return str_or_null(j, jl->job, sizeof jl->job, &jl->has_job, &whole);
    case K_CPU: return scan_cpu(j, jl);
    case K_MEMORY: return scan_memory(j, jl);
    case K_NETWORK: return scan_devs(j, jl, false);
    case K_DISK: return scan_devs(j, jl, true);
    case K_GPU: return scan_gpus(j, jl);
    case K_PROCESS: return scan_process(j, jl);
    case K_PRESSURE: return scan_psi(j, &jl->psi);
    case K_CGROUP: return scan_cgroup(j, &jl->self_cg);
    default: return rt_js_skip(j);
    }
}

const char *rt_jline_scan(const char *line, size_t len, locale_t c_locale, rt_jline *jl)
{
    static const jkey names[K_COUNT] = {JK("timestamp_secs"), JK("interval_secs"), JK("job_name"),
                                        JK("cpu"), JK("memory"), JK("network"), JK("disk"), JK("gpu"),
                                        JK("process"), JK("pressure"), JK("cgroup")};
    rt_js j = {.p = line, .end = line + len, .c_locale = c_locale};
    rt_jline_reset(jl);
    if (rt_js_peek(&j) != RT_JS_OBJECT || !rt_js_open(&j, '{'))
        return j.err ? j.err : "not a JSON object";
    bool first = true;
    const char *k;
    size_t kl, hint = 0;
    int r;
    while ((r = rt_js_member(&j, &first, &k, &kl)) == 1)
        if (!scan_top_member(&j, jl, which(k, kl, names, K_COUNT, &hint)))
            return j.err ? j.err : "malformed";
    if (r < 0 || !rt_js_at_end(&j))
        return j.err ? j.err : "malformed";
    if (isnan(jl->timestamp))
        return "no timestamp_secs";
    return NULL;
}
