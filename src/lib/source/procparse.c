/* procparse.c - pure parsers for the whole-machine procfs files: /proc/stat, /proc/meminfo,
 * /proc/diskstats and /proc/net/dev. Each works on a buffer, never reads a file itself, and
 * tolerates kernel variants (missing fields, extra fields, unknown lines). */
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
        unsigned nv = 0;
        bool ok = true;
        while (nv < 17) {
            const char *save = q;
            if (!rt_parse_u64(&q, le, &v[nv])) {
                q = save;
                break;
            }
            nv++;
        }
        /* Anything left must be more numbers (a future kernel's fields); junk means skip. */
        const char *rest;
        size_t rlen;
        unsigned extra = 0;
        while (rt_next_token(&q, le, &rest, &rlen)) {
            for (size_t i = 0; i < rlen; i++)
                if (rest[i] < '0' || rest[i] > '9')
                    ok = false;
            extra++;
        }
        if (!ok || nv < 11)
            continue;
        if (count < cap) {
            rt_diskstat *d = &out[count];
            d->major = (unsigned)major;
            d->minor = (unsigned)minor;
            memcpy(d->name, tok, tlen);
            d->name[tlen] = '\0';
            d->nfields = 3 + nv + extra;
            d->sectors_read = v[2];
            d->sectors_written = v[6];
        }
        count++;
    }
    return count;
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
