/* procparse.c - pure parsers for the procfs files: /proc/stat, /proc/meminfo, /proc/diskstats,
 * /proc/net/dev and the per-process stat, io, smaps_rollup and children files. Each works on a
 * buffer, never reads a file itself, and tolerates kernel variants (missing or extra fields). */
#include <string.h>

#include "sources.h"

/* Parses up to RT_CPU_NFIELDS counters after a "cpu" label; needs at least 4 (2.4 kernels). */
static bool parse_cpu_fields(const char *p, const char *end, rt_cpu_ticks *c)
{
    int n = 0;
    memset(c->t, 0, sizeof c->t);
    while (n < RT_CPU_NFIELDS) {
        uint64_t v;
        if (!rt_parse_u64(&p, end, &v))
            break;
        c->t[n++] = v;
    }
    return n >= 4;
}

int rt_stat_parse(const char *buf, size_t len, rt_stat *out)
{
    const char *p = buf, *end = buf + len, *line, *le;
    out->has_total = false;
    out->has_procs_running = false;
    out->core_count = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        size_t n = (size_t)(le - line);
        if (n >= 4 && memcmp(line, "cpu", 3) == 0) {
            if (line[3] == ' ') {
                out->total.id = -1;
                out->has_total = parse_cpu_fields(line + 3, le, &out->total);
            } else if (line[3] >= '0' && line[3] <= '9') {
                const char *q = line + 3;
                uint64_t id;
                rt_cpu_ticks c;
                if (!rt_parse_u64(&q, le, &id) || id > 1u << 20 || !parse_cpu_fields(q, le, &c))
                    continue;
                c.id = (int)id;
                if (out->core_count < out->core_cap)
                    out->cores[out->core_count] = c;
                out->core_count++;
            }
        } else if (n > 14 && memcmp(line, "procs_running ", 14) == 0) {
            const char *q = line + 14;
            out->has_procs_running = rt_parse_u64(&q, le, &out->procs_running);
        }
    }
    return out->has_total ? 0 : -1;
}

uint64_t rt_cpu_total(const rt_cpu_ticks *c)
{
    uint64_t s = 0;
    for (int i = 0; i < RT_CPU_NFIELDS; i++)
        s += c->t[i];
    return s;
}

uint64_t rt_cpu_busy(const rt_cpu_ticks *c)
{
    return rt_cpu_total(c) - c->t[RT_CPU_IDLE] - c->t[RT_CPU_IOWAIT];
}

static const struct {
    const char *key;
    size_t len;
} mem_keys[RT_MEM_NFIELDS] = {
    [RT_MEM_TOTAL] = {"MemTotal", 8},         [RT_MEM_FREE] = {"MemFree", 7},
    [RT_MEM_AVAILABLE] = {"MemAvailable", 12}, [RT_MEM_BUFFERS] = {"Buffers", 7},
    [RT_MEM_CACHED] = {"Cached", 6},           [RT_MEM_SRECLAIMABLE] = {"SReclaimable", 12},
    [RT_MEM_ACTIVE] = {"Active", 6},           [RT_MEM_INACTIVE] = {"Inactive", 8},
    [RT_MEM_SWAP_TOTAL] = {"SwapTotal", 9},    [RT_MEM_SWAP_FREE] = {"SwapFree", 8},
    [RT_MEM_PAGE_TABLES] = {"PageTables", 10},
};

int rt_meminfo_parse(const char *buf, size_t len, rt_meminfo *out)
{
    const char *p = buf, *end = buf + len, *line, *le;
    out->present = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        for (int i = 0; i < RT_MEM_NFIELDS; i++) {
            if (klen == mem_keys[i].len && memcmp(line, mem_keys[i].key, klen) == 0) {
                const char *q = colon + 1;
                uint64_t v;
                if (rt_parse_u64(&q, le, &v)) {
                    out->kib[i] = v;
                    out->present |= 1u << i;
                }
                break;
            }
        }
    }
    return (out->present & (1u << RT_MEM_TOTAL)) ? 0 : -1;
}

/* The block counters of a diskstats line after its name, or of a sysfs block stat file, from
 * *q to le: the first 17 into v. Returns how many there are (more than 17 on a future kernel),
 * or -1 when anything but numbers is there. */
static int block_counters(const char **q, const char *le, uint64_t v[17])
{
    int nv = 0;
    while (nv < 17) {
        const char *save = *q;
        if (!rt_parse_u64(q, le, &v[nv])) {
            *q = save;
            break;
        }
        nv++;
    }
    /* anything left must be more numbers (a future kernel's fields) */
    const char *rest;
    size_t rlen;
    while (rt_next_token(q, le, &rest, &rlen)) {
        for (size_t i = 0; i < rlen; i++)
            if (rest[i] < '0' || rest[i] > '9')
                return -1;
        nv++;
    }
    return nv;
}

size_t rt_diskstats_parse(const char *buf, size_t len, rt_diskstat *out, size_t cap)
{
    const char *p = buf, *end = buf + len, *line, *le;
    size_t count = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *q = line, *tok;
        size_t tlen;
        uint64_t major, minor, v[17];
        if (!rt_parse_u64(&q, le, &major) || !rt_parse_u64(&q, le, &minor) || major > UINT32_MAX ||
            minor > UINT32_MAX || !rt_next_token(&q, le, &tok, &tlen) || tlen == 0 || tlen >= sizeof out->name)
            continue;
        int nv = block_counters(&q, le, v);
        if (nv < 11)
            continue;
        if (count < cap) {
            rt_diskstat *d = &out[count];
            d->major = (unsigned)major;
            d->minor = (unsigned)minor;
            memcpy(d->name, tok, tlen);
            d->name[tlen] = '\0';
            d->nfields = 3 + (unsigned)nv;
            d->sectors_read = v[2];
            d->sectors_written = v[6];
        }
        count++;
    }
    return count;
}

int rt_blockstat_parse(const char *buf, size_t len, uint64_t *sectors_read, uint64_t *sectors_written)
{
    const char *p = buf, *end = buf + len, *line, *le;
    uint64_t v[17];
    if (!rt_next_line(&p, end, &line, &le))
        return -1;
    const char *q = line;
    if (block_counters(&q, le, v) < 11)
        return -1;
    /* one line only: a second one is no stat file */
    const char *l2, *le2;
    if (rt_next_line(&p, end, &l2, &le2) && l2 != le2)
        return -1;
    *sectors_read = v[2];
    *sectors_written = v[6];
    return 0;
}

size_t rt_netdev_parse(const char *buf, size_t len, rt_netdev *out, size_t cap)
{
    const char *p = buf, *end = buf + len, *line, *le;
    size_t count = 0;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon)
            continue; /* the two header lines have '|' but no ':' */
        const char *name = line;
        while (name < colon && (*name == ' ' || *name == '\t'))
            name++;
        size_t nlen = (size_t)(colon - name);
        if (nlen == 0 || nlen >= sizeof out->name || memchr(name, ' ', nlen))
            continue;
        const char *q = colon + 1;
        uint64_t v[9];
        int nv = 0;
        while (nv < 9 && rt_parse_u64(&q, le, &v[nv]))
            nv++;
        if (nv < 9)
            continue;
        if (count < cap) {
            memcpy(out[count].name, name, nlen);
            out[count].name[nlen] = '\0';
            out[count].rx_bytes = v[0];
            out[count].tx_bytes = v[8];
        }
        count++;
    }
    return count;
}

int rt_pidstat_parse(const char *buf, size_t len, rt_pidstat *out)
{
    const char *end = buf + len;
    const char *p = buf;
    uint64_t pid;
    if (!rt_parse_u64(&p, end, &pid))
        return -1;
    /* the command name: from the first '(' to the last ')' (it may contain ") (") */
    const char *close = NULL;
    for (const char *q = end; q > p; q--)
        if (q[-1] == ')') {
            close = q - 1;
            break;
        }
    if (!close)
        return -1;
    p = close + 1;
    /* fields from 3 (state) on, counted from 0 here */
    const char *tok;
    size_t tl;
    if (!rt_next_token(&p, end, &tok, &tl) || tl != 1)
        return -1;
    out->state = tok[0];
    uint64_t f[22];
    for (int i = 1; i < 22; i++) {
        /* negative values appear in priority/nice (fields 18, 19): read them as tokens */
        if (!rt_next_token(&p, end, &tok, &tl))
            return -1;
        const char *t = tok;
        if (*t == '-') {
            f[i] = 0;
            continue;
        }
        if (!rt_parse_u64(&t, tok + tl, &f[i]) || t != tok + tl)
            return -1;
    }
    out->pid = (int64_t)pid;
    out->ppid = (int64_t)f[1];
    out->utime = f[11];
    out->stime = f[12];
    out->cutime = f[13];
    out->cstime = f[14];
    out->num_threads = (int64_t)f[17];
    out->starttime = f[19];
    out->vsize_bytes = f[20];
    out->rss_pages = f[21];
    out->minflt = f[7];
    out->majflt = f[9];
    /* then rsslim, startcode, endcode, startstack, kstkesp, kstkeip, signal, blocked, sigignore:
     * optional (a fixture's line may stop here) */
    uint64_t g[9] = {0};
    for (int i = 0; i < 9 && rt_next_token(&p, end, &tok, &tl); i++) {
        const char *t = tok;
        if (!rt_parse_u64(&t, tok + tl, &g[i]) || t != tok + tl)
            g[i] = 0;
    }
    out->start_code = g[1];
    out->start_stack = g[3];
    out->sigignore = g[8];
    return 0;
}

/* A "Key:" at a line start, with its length. */
typedef struct line_key {
    const char *key;
    size_t len;
} line_key;

/* Parses, in one pass, the number after each of keys[0..n) (n <= 32) into v: the first line
 * of each key counts. Returns the mask of the keys found with a number. */
static unsigned keyed_u64s(const char *buf, size_t len, const line_key *keys, unsigned n, uint64_t *v)
{
    unsigned found = 0;
    const char *p = buf, *end = buf + len, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        for (unsigned k = 0; k < n; k++) {
            if ((size_t)(le - line) > keys[k].len && memcmp(line, keys[k].key, keys[k].len) == 0) {
                const char *q = line + keys[k].len;
                if (!(found & (1u << k)) && rt_parse_u64(&q, le, &v[k]))
                    found |= 1u << k;
                break;
            }
        }
    }
    return found;
}

int rt_pidio_parse(const char *buf, size_t len, rt_pidio *out)
{
    static const line_key keys[3] = {{"read_bytes:", 11}, {"write_bytes:", 12}, {"cancelled_write_bytes:", 22}};
    uint64_t v[3] = {0, 0, 0};
    if ((keyed_u64s(buf, len, keys, 3, v) & 3u) != 3u)
        return -1;
    out->read_bytes = v[0];
    out->write_bytes = v[1];
    out->cancelled_write_bytes = v[2];
    return 0;
}

int rt_smaps_rollup_parse(const char *buf, size_t len, rt_rollup *out)
{
    static const line_key keys[8] = {{"Pss:", 4},           {"Swap:", 5},          {"Private_Clean:", 14},
                                     {"Private_Dirty:", 14}, {"Shared_Clean:", 13}, {"Shared_Dirty:", 13},
                                     {"Rss:", 4},            {"Anonymous:", 10}};
    uint64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    unsigned found = keyed_u64s(buf, len, keys, 8, v);
    if (!(found & 1u))
        return -1;
    out->pss_kib = v[0];
    out->swap_kib = v[1];
    out->private_kib = v[2] + v[3];
    out->shared_kib = v[4] + v[5];
    out->split_ok = (found & 0x3cu) == 0x3cu;
    /* private anonymous pages are at least Anonymous less every shared page (an anonymous page
     * is shared only by a fork); no other process can come to map them */
    uint64_t rss = (found & 0x40u) ? v[6] : out->private_kib + out->shared_kib;
    uint64_t anon_private = (found & 0x80u) && v[7] > out->shared_kib ? v[7] - out->shared_kib : 0;
    out->exposed_kib = rss > anon_private ? rss - anon_private : 0;
    return 0;
}

int rt_status_hwm_parse(const char *buf, size_t len, uint64_t *hwm_kib)
{
    static const line_key keys[1] = {{"VmHWM:", 6}};
    return keyed_u64s(buf, len, keys, 1, hwm_kib) == 1u ? 0 : -1;
}

size_t rt_children_parse(const char *buf, size_t len, void (*cb)(void *user, int64_t pid), void *user)
{
    const char *p = buf, *end = buf + len;
    size_t n = 0;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n'))
            p++;
        uint64_t v;
        if (p >= end || !rt_parse_u64(&p, end, &v))
            break;
        if (v > 0 && v < (1u << 30)) {
            cb(user, (int64_t)v);
            n++;
        }
    }
    return n;
}
