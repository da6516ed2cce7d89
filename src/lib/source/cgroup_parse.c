/* cgroup_parse.c - the pure parsers of control-group files (see cgroup.h): the cgroup mounts of
 * mountinfo, /proc/PID/cgroup, flat keyed files, limits, cpu.max, pressure, io.stat, blkio and
 * cgroup.procs. Each takes exactly the bytes read (not NUL-terminated) and never reads past them. */
#include <math.h>
#include <string.h>

#include "cgroup.h"
#include "sources.h"

/* Blanks between tokens: the kernel writes spaces (and ends a value with a newline); tabs and
 * a stray CR are taken as blanks too. */
static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Sets the next blank-separated token of [*p, end) and advances past it; false at the end. */
static bool tok(const char **p, const char *end, const char **t, size_t *n)
{
    const char *s = *p;
    while (s < end && is_blank(*s))
        s++;
    if (s >= end)
        return false;
    const char *e = s;
    while (e < end && !is_blank(*e))
        e++;
    *t = s;
    *n = (size_t)(e - s);
    *p = e;
    return true;
}

/* The next max tokens at most (tok) into t[] and n[]; returns how many. */
static int toks(const char **p, const char *end, const char **t, size_t *n, int max)
{
    int k = 0;
    while (k < max && tok(p, end, &t[k], &n[k]))
        k++;
    return k;
}

/* True when the token [t, t+n) is the NUL-terminated word w. */
static bool tok_is(const char *t, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(t, w, n) == 0;
}

/* A walk over the lines of [p, end): q and le bound the rest of the current line. */
typedef struct lines {
    const char *p, *end, *q, *le;
} lines;

/* Moves to the next line holding a token, sets that first token and leaves q after it; false
 * at the end. */
static bool next_first(lines *lc, const char **t, size_t *n)
{
    const char *line;
    while (rt_next_line(&lc->p, lc->end, &line, &lc->le)) {
        lc->q = line;
        if (tok(&lc->q, lc->le, t, n))
            return true;
    }
    return false;
}

/* Parses the whole token as an unsigned decimal. */
static bool tok_u64(const char *t, size_t n, uint64_t *out)
{
    const char *p = t;
    return rt_parse_u64(&p, t + n, out) && p == t + n;
}

/* Parses "I[.F]" (the kernel's "%lu.%02lu") as a double; false on anything else. */
static bool tok_decimal(const char *t, size_t n, double *out)
{
    const char *p = t, *end = t + n;
    uint64_t ip;
    if (!rt_parse_u64(&p, end, &ip))
        return false;
    double v = (double)ip, scale = 0.1;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return false;
        for (; p < end && *p >= '0' && *p <= '9'; p++, scale /= 10)
            v += (*p - '0') * scale;
    }
    if (p != end)
        return false;
    *out = v;
    return true;
}

/* ---- mountinfo ------------------------------------------------------------------------------ */

/* The v1 hierarchy a controller name stands for, or -1 for one not read. */
static int v1_hier(const char *t, size_t n)
{
    static const struct {
        const char *name;
        rt_cg_hier h;
    } map[] = {{"cpu", RT_CG_CPU}, {"cpuacct", RT_CG_CPUACCT}, {"memory", RT_CG_MEMORY}, {"blkio", RT_CG_BLKIO},
               {"pids", RT_CG_PIDS}};
    for (size_t i = 0; i < RT_ARRAY_LEN(map); i++)
        if (tok_is(t, n, map[i].name))
            return (int)map[i].h;
    return -1;
}

/* Records hierarchy h at the mount (root, mp) unless it already has one. Returns 1 when new. */
static int take_mount(rt_cg_mounts *out, int h, const char *root, size_t rl, const char *mp, size_t ml)
{
    if (h < 0 || out->dir[h][0])
        return 0;
    if (!rt_mountinfo_unescape(out->dir[h], RT_CG_PATH_MAX, mp, ml) ||
        !rt_mountinfo_unescape(out->root[h], RT_CG_PATH_MAX, root, rl)) {
        out->dir[h][0] = out->root[h][0] = '\0';
        return 0;
    }
    return 1;
}

int rt_cg_mounts_parse(const char *buf, size_t len, rt_cg_mounts *out)
{
    memset(out, 0, sizeof *out);
    const char *p = buf, *end = buf + len, *line, *le;
    int found = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *q = line, *f[5], *t;
        size_t fl[5], tl;
        int n = toks(&q, le, f, fl, 5);
        if (n < 5)
            continue;
        /* skip the mount options and the optional fields up to "-" */
        bool sep = false;
        while (!sep && tok(&q, le, &t, &tl))
            sep = tl == 1 && t[0] == '-';
        const char *fs, *src, *opts;
        size_t fsl, srcl, optsl;
        if (!sep || !tok(&q, le, &fs, &fsl) || !tok(&q, le, &src, &srcl))
            continue;
        if (tok_is(fs, fsl, "cgroup2")) {
            found += take_mount(out, RT_CG_UNIFIED, f[3], fl[3], f[4], fl[4]);
            continue;
        }
        if (!tok_is(fs, fsl, "cgroup") || !tok(&q, le, &opts, &optsl))
            continue;
        /* super options: "rw,cpu,cpuacct" name the controllers of the hierarchy */
        const char *o = opts, *oend = opts + optsl;
        while (o < oend) {
            const char *c = memchr(o, ',', (size_t)(oend - o));
            const char *ce = c ? c : oend;
            found += take_mount(out, v1_hier(o, (size_t)(ce - o)), f[3], fl[3], f[4], fl[4]);
            o = ce + 1;
        }
    }
    return found;
}

/* ---- /proc/PID/cgroup ------------------------------------------------------------------------- */

int rt_cg_paths_parse(const char *buf, size_t len, rt_cg_paths *out)
{
    memset(out, 0, sizeof *out);
    const char *p = buf, *end = buf + len, *line, *le;
    int found = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        while (le > line && is_blank(le[-1]))
            le--;
        if (le == line)
            continue;
        const char *c1 = memchr(line, ':', (size_t)(le - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
        uint64_t id;
        if (!c2 || !tok_u64(line, (size_t)(c1 - line), &id) || c2 + 1 >= le || c2[1] != '/')
            return -1;
        const char *path = c2 + 1, *ctl = c1 + 1;
        size_t pl = (size_t)(le - path);
        int hs[RT_CG_NHIER], nh = 0;
        if (id == 0 && ctl == c2) {
            hs[nh++] = RT_CG_UNIFIED;
        } else {
            for (const char *o = ctl; o < c2;) {
                const char *c = memchr(o, ',', (size_t)(c2 - o));
                const char *ce = c ? c : c2;
                int h = v1_hier(o, (size_t)(ce - o));
                if (h >= 0 && nh < RT_CG_NHIER)
                    hs[nh++] = h;
                o = ce + 1;
            }
        }
        for (int i = 0; i < nh; i++) {
            int h = hs[i];
            if (out->has[h] || pl >= RT_CG_PATH_MAX)
                continue;
            memcpy(out->path[h], path, pl);
            out->path[h][pl] = '\0';
            out->has[h] = true;
            found++;
        }
    }
    return found;
}

/* ---- a group's files ---------------------------------------------------------------------------- */

int rt_cg_keyed_u64(const char *buf, size_t len, const char *key, uint64_t *out)
{
    lines lc = {buf, buf + len, NULL, NULL};
    const char *k, *v;
    size_t kl, vl;
    while (next_first(&lc, &k, &kl))
        if (tok_is(k, kl, key))
            return tok(&lc.q, lc.le, &v, &vl) && tok_u64(v, vl, out) ? 0 : -1;
    return -1;
}

int rt_cg_parse_memory_stat(const char *buf, size_t len, uint64_t *reclaimable_bytes)
{
    uint64_t active, inactive, slab = 0;
    if (rt_cg_keyed_u64(buf, len, "total_active_file", &active) < 0 ||
        rt_cg_keyed_u64(buf, len, "total_inactive_file", &inactive) < 0) {
        if (rt_cg_keyed_u64(buf, len, "active_file", &active) < 0 ||
            rt_cg_keyed_u64(buf, len, "inactive_file", &inactive) < 0)
            return -1;
        if (rt_cg_keyed_u64(buf, len, "slab_reclaimable", &slab) < 0)
            slab = 0; /* v1, or a v2 before slab accounting: none known */
    }
    if (active > UINT64_MAX - inactive || active + inactive > UINT64_MAX - slab)
        return -1;
    *reclaimable_bytes = active + inactive + slab;
    return 0;
}

void rt_cg_parse_memory_kinds(const char *buf, size_t len, uint64_t *anon, uint64_t *file, uint64_t *shmem)
{
    /* v2 names, v1's own, v1's hierarchical: a later kind of name replaces an earlier one */
    static const char *const names[3][3] = {
        {"anon", "rss", "total_rss"}, {"file", "cache", "total_cache"}, {"shmem", "shmem", "total_shmem"}};
    uint64_t *outs[3] = {anon, file, shmem};
    int rank[3] = {-1, -1, -1};
    *anon = *file = *shmem = RT_NULL_U64;
    lines lc = {buf, buf + len, NULL, NULL};
    const char *k, *v;
    size_t kl, vl;
    while (next_first(&lc, &k, &kl)) {
        for (int i = 0; i < 3; i++)
            for (int r = 2; r > rank[i]; r--) {
                uint64_t x;
                if (tok_is(k, kl, names[i][r]) && tok(&lc.q, lc.le, &v, &vl) && tok_u64(v, vl, &x)) {
                    *outs[i] = x;
                    rank[i] = r;
                    break;
                }
            }
    }
}

int rt_cg_parse_memory_refault(const char *buf, size_t len, uint64_t *pages)
{
    /* the oldest name first: a later one replaces an earlier one */
    static const char *const names[] = {"workingset_refault", "workingset_refault_file",
                                        "total_workingset_refault_file"};
    int rank = -1;
    lines lc = {buf, buf + len, NULL, NULL};
    const char *k, *v;
    size_t kl, vl;
    while (next_first(&lc, &k, &kl))
        for (int r = (int)RT_ARRAY_LEN(names) - 1; r > rank; r--) {
            uint64_t x;
            if (tok_is(k, kl, names[r]) && tok(&lc.q, lc.le, &v, &vl) && tok_u64(v, vl, &x)) {
                *pages = x;
                rank = r;
                break;
            }
        }
    return rank < 0 ? -1 : 0;
}

/* At or above this a v1 limit means none (PAGE_COUNTER_MAX in bytes is 2^63 rounded down to a
 * page, LONG_MAX for others). */
#define V1_UNLIMITED (UINT64_C(1) << 62)

int rt_cg_parse_limit(const char *buf, size_t len, uint64_t *out)
{
    const char *p = buf, *t;
    size_t n;
    if (!tok(&p, buf + len, &t, &n))
        return -1;
    const char *rest = p, *extra;
    size_t xl;
    if (tok(&rest, buf + len, &extra, &xl))
        return -1; /* a second token: not a single value */
    uint64_t v;
    if (tok_is(t, n, "max") || tok_is(t, n, "-1"))
        *out = RT_NULL_U64;
    else if (tok_u64(t, n, &v))
        *out = v >= V1_UNLIMITED ? RT_NULL_U64 : v;
    else
        return -1;
    return 0;
}

int rt_cg_parse_cpu_max(const char *buf, size_t len, uint64_t *quota_usec, uint64_t *period_usec)
{
    const char *p = buf, *end = buf + len, *q, *per, *extra;
    size_t ql, pl, xl;
    uint64_t quota = RT_NULL_U64, period;
    if (!tok(&p, end, &q, &ql) || !tok(&p, end, &per, &pl) || tok(&p, end, &extra, &xl))
        return -1;
    if (!tok_u64(per, pl, &period) || period == 0)
        return -1;
    if (!tok_is(q, ql, "max") && !tok_u64(q, ql, &quota))
        return -1;
    *quota_usec = quota;
    *period_usec = period;
    return 0;
}

int rt_cg_parse_pressure(const char *buf, size_t len, rt_cg_psi_raw *out)
{
    memset(out, 0, sizeof *out);
    out->some_avg10 = out->full_avg10 = (double)NAN;
    out->some_total_usec = out->full_total_usec = RT_NULL_U64;
    lines lc = {buf, buf + len, NULL, NULL};
    const char *t;
    size_t n;
    while (next_first(&lc, &t, &n)) {
        bool some = tok_is(t, n, "some");
        if (!some && !tok_is(t, n, "full"))
            continue;
        double avg10 = (double)NAN;
        uint64_t total = RT_NULL_U64;
        while (tok(&lc.q, lc.le, &t, &n)) {
            if (n > 6 && memcmp(t, "avg10=", 6) == 0 && !tok_decimal(t + 6, n - 6, &avg10))
                avg10 = (double)NAN;
            else if (n > 6 && memcmp(t, "total=", 6) == 0 && !tok_u64(t + 6, n - 6, &total))
                total = RT_NULL_U64;
        }
        if (avg10 != avg10 && total == RT_NULL_U64)
            continue; /* a line with neither figure */
        if (some) {
            out->has_some = true;
            out->some_avg10 = avg10;
            out->some_total_usec = total;
        } else {
            out->has_full = true;
            out->full_avg10 = avg10;
            out->full_total_usec = total;
        }
    }
    return out->has_some || out->has_full ? 0 : -1;
}

/* a + b, false on overflow */
static bool add_u64(uint64_t *acc, uint64_t v)
{
    if (v > UINT64_MAX - *acc)
        return false;
    *acc += v;
    return true;
}

/* True when [t, t+n) is "MAJ:MIN". */
/* Parses "MAJ:MIN" into *dev (major << 32 | minor). */
static bool devno(const char *t, size_t n, uint64_t *dev)
{
    const char *c = memchr(t, ':', n);
    uint64_t ma, mi;
    if (!c || !tok_u64(t, (size_t)(c - t), &ma) || !tok_u64(c + 1, (size_t)(t + n - c - 1), &mi) ||
        ma > UINT32_MAX || mi > UINT32_MAX)
        return false;
    *dev = ma << 32 | mi;
    return true;
}

bool rt_cg_devs_has(const rt_cg_devs *only, uint64_t dev)
{
    if (!only || only->n == 0)
        return true;
    for (size_t i = 0; i < only->n; i++)
        if (only->dev[i] == dev)
            return true;
    return false;
}

int rt_cg_parse_io_stat(const char *buf, size_t len, uint64_t *read_bytes, uint64_t *write_bytes)
{
    return rt_cg_parse_io_stat_on(buf, len, NULL, read_bytes, write_bytes);
}

int rt_cg_parse_io_stat_on(const char *buf, size_t len, const rt_cg_devs *only, uint64_t *read_bytes,
                           uint64_t *write_bytes)
{
    uint64_t r = 0, w = 0;
    lines lc = {buf, buf + len, NULL, NULL};
    const char *t;
    size_t n;
    while (next_first(&lc, &t, &n)) {
        uint64_t dev;
        if (!devno(t, n, &dev))
            return -1;
        bool counted = rt_cg_devs_has(only, dev);
        while (tok(&lc.q, lc.le, &t, &n)) {
            const char *eq = memchr(t, '=', n);
            uint64_t v;
            if (!eq)
                return -1;
            size_t kl = (size_t)(eq - t);
            bool rb = kl == 6 && memcmp(t, "rbytes", 6) == 0, wb = kl == 6 && memcmp(t, "wbytes", 6) == 0;
            if (!rb && !wb)
                continue; /* rios, dbytes, cost.* ...: not read */
            if (!tok_u64(eq + 1, (size_t)(t + n - eq - 1), &v) || (counted && !add_u64(rb ? &r : &w, v)))
                return -1;
        }
    }
    *read_bytes = r;
    *write_bytes = w;
    return 0;
}

int rt_cg_parse_blkio(const char *buf, size_t len, uint64_t *read_bytes, uint64_t *write_bytes)
{
    return rt_cg_parse_blkio_on(buf, len, NULL, read_bytes, write_bytes);
}

int rt_cg_parse_blkio_on(const char *buf, size_t len, const rt_cg_devs *only, uint64_t *read_bytes,
                         uint64_t *write_bytes)
{
    uint64_t r = 0, w = 0;
    const char *p = buf, *end = buf + len, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *q = line, *f[3];
        size_t fl[3];
        int n = toks(&q, le, f, fl, 3);
        if (n == 0)
            continue;
        const char *x;
        size_t xl;
        if (tok(&q, le, &x, &xl))
            return -1; /* a fourth field */
        uint64_t v;
        if (tok_is(f[0], fl[0], "Total")) {
            if (n != 2 || !tok_u64(f[1], fl[1], &v))
                return -1;
            continue; /* the sum over the devices: summed here instead */
        }
        uint64_t dev;
        if (n != 3 || !devno(f[0], fl[0], &dev) || !tok_u64(f[2], fl[2], &v))
            return -1;
        if (!rt_cg_devs_has(only, dev))
            continue;
        if (tok_is(f[1], fl[1], "Read") ? !add_u64(&r, v) : tok_is(f[1], fl[1], "Write") ? !add_u64(&w, v) : false)
            return -1;
    }
    *read_bytes = r;
    *write_bytes = w;
    return 0;
}

long rt_cg_parse_procs(const char *buf, size_t len, int64_t *out, size_t cap)
{
    long count = 0;
    lines lc = {buf, buf + len, NULL, NULL};
    const char *t, *x;
    size_t n, xn;
    while (next_first(&lc, &t, &n)) {
        uint64_t pid;
        if (!tok_u64(t, n, &pid) || pid == 0 || pid > INT64_MAX || tok(&lc.q, lc.le, &x, &xn))
            return -1;
        if ((size_t)count < cap)
            out[count] = (int64_t)pid;
        count++;
    }
    return count;
}
