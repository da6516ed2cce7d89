/* powercap.c - the machine's energy counters (energy.h): powercap RAPL zones found under the sys
 * root with their wrap-around undone and each package counted once, the perf power PMU
 * (perf_power.c) where energy_uj is root-only, and hwmon platform meters ("power_meter"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "energy.h"
#include "perf_power.h"

enum { VIA_POWERCAP, VIA_PERF, VIA_HWMON_ENERGY, VIA_HWMON_POWER };

typedef struct energy_ctr {
    rt_energy_counter pub;
    int how;        /* VIA_* */
    int fd;         /* energy_uj, the perf event, or the hwmon file, kept open */
    uint64_t range; /* the counter wraps to 0 past this (max_energy_range_uj); 0: no wrap */
    uint64_t last;  /* the last good reading */
    bool have_last;
    uint64_t total; /* raw units since open (uJ, or perf counts) */
    double scale;   /* perf: joules per count */
} energy_ctr;

#define MAX_DENIED 32

struct rt_energy_src {
    const rt_roots *roots;
    const rt_logger *log;
    energy_ctr *c;
    size_t n, cap;
    /* zones whose energy_uj was root-only: their counter names, and their prefixes */
    char denied[MAX_DENIED][32];
    size_t ndenied;
    char denied_prefix[64];
    bool several_prefixes;
    char *missing;
};

/* ---- reading one number ------------------------------------------------------------------- */

/* Reads a decimal attribute from a kept-open fd. Returns false when the read fails or the file
 * does not hold a number (with nothing but blanks after it). */
static bool read_u64_fd(int fd, uint64_t *out)
{
    char buf[32];
    ssize_t n = rt_pread_single(fd, buf, sizeof buf);
    if (n <= 0)
        return false;
    const char *p = buf, *end = buf + n;
    uint64_t v;
    if (!rt_parse_u64(&p, end, &v))
        return false;
    while (p < end && (*p == '\n' || *p == ' '))
        p++;
    if (p != end)
        return false;
    *out = v;
    return true;
}

/* The counter's reading now into c->total (and c->last); false when it could not be read. */
static bool take(energy_ctr *c)
{
    uint64_t v;
    bool ok = c->how == VIA_PERF ? rt_perf_power_read(c->fd, &v) : read_u64_fd(c->fd, &v);
    if (!ok)
        return false;
    if (c->have_last) {
        if (v >= c->last)
            c->total += v - c->last;
        else if (c->range && c->last <= c->range && v <= c->range)
            c->total += c->range - c->last + v; /* wrapped once */
        /* else a reset (or a counter past its stated range): nothing counted */
    }
    c->last = v;
    c->have_last = true;
    return true;
}

/* ---- the list of counters ----------------------------------------------------------------- */

static const energy_ctr *find_name(const rt_energy_src *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->c[i].pub.name, name) == 0)
            return &e->c[i];
    return NULL;
}

/* Adds a counter (its fd taken over: closed when the list cannot grow) and takes its first
 * reading. Returns it, or NULL out of memory. */
static energy_ctr *add(rt_energy_src *e, const char *name, const char *kind, const char *source, const char *method,
                       int package, bool in_total, int how, int fd)
{
    if (rt_grow(&e->c, &e->cap, e->n + 1, sizeof *e->c) < 0) {
        close(fd);
        return NULL;
    }
    energy_ctr *c = &e->c[e->n++];
    memset(c, 0, sizeof *c);
    rt_copy_str(c->pub.name, sizeof c->pub.name, name);
    c->pub.kind = kind;
    c->pub.source = source;
    c->pub.method = method;
    c->pub.package = package;
    c->pub.in_total = in_total;
    c->how = how;
    c->fd = fd;
    c->scale = 1.0;
    return c;
}

/* ---- powercap ----------------------------------------------------------------------------- */

typedef struct zone_list {
    char (*name)[64];
    size_t n, cap;
    bool oom;
} zone_list;

/* The zone's control type rank: the MSR interface first, so that a package also shown by
 * intel-rapl-mmio (or another intel-rapl-* interface) is taken from it; -1 for other types. */
static int prefix_rank(const char *zone)
{
    size_t len = strcspn(zone, ":");
    if (len == 10 && strncmp(zone, "intel-rapl", 10) == 0)
        return 0;
    if (len == 8 && strncmp(zone, "amd-rapl", 8) == 0)
        return 1;
    if (strncmp(zone, "intel-rapl-", 11) == 0)
        return 2;
    return -1;
}

static int zone_entry(void *user, const char *name, unsigned char d_type)
{
    (void)d_type; /* class/powercap holds links */
    zone_list *z = user;
    if (!strchr(name, ':') || prefix_rank(name) < 0 || strlen(name) >= 64)
        return 0; /* control types (intel-rapl) and other kinds of zones (dtpm) */
    if (rt_grow(&z->name, &z->cap, z->n + 1, sizeof *z->name) < 0) {
        z->oom = true;
        return 1;
    }
    rt_copy_str(z->name[z->n++], 64, name);
    return 0;
}

/* Orders zones by rank, then prefix, then their numbers (intel-rapl:0 < :0:0 < :0:1 < :1). */
static int zone_cmp(const void *pa, const void *pb)
{
    const char *a = pa, *b = pb;
    int ra = prefix_rank(a), rb = prefix_rank(b);
    if (ra != rb)
        return ra - rb;
    size_t la = strcspn(a, ":"), lb = strcspn(b, ":");
    int c = strncmp(a, b, la < lb ? la : lb);
    if (c || la != lb)
        return c ? c : la < lb ? -1 : 1;
    a += la;
    b += lb;
    while (*a == ':' && *b == ':') {
        char *sa, *sb;
        unsigned long x = strtoul(a + 1, &sa, 10), y = strtoul(b + 1, &sb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = sa;
        b = sb;
    }
    return (*a == ':') - (*b == ':');
}

/* Reads class/powercap/ZONE/name into out. Returns false when missing or empty. */
static bool zone_name(const rt_energy_src *e, const char *zone, char *out, size_t cap)
{
    char path[160];
    return rt_pathf(path, sizeof path, "class/powercap/%s/name", zone) &&
           rt_read_line_at(e->roots->sys_fd, path, out, cap) > 0;
}

/* Remembers a zone whose energy_uj is root-only (its counter's name and its prefix). */
static void note_denied(rt_energy_src *e, const char *zone, const char *name)
{
    if (e->ndenied < MAX_DENIED)
        rt_copy_str(e->denied[e->ndenied++], sizeof e->denied[0], name);
    char prefix[64];
    size_t len = strcspn(zone, ":");
    rt_copy_trim(prefix, sizeof prefix, zone, len);
    if (!e->denied_prefix[0])
        rt_copy_str(e->denied_prefix, sizeof e->denied_prefix, prefix);
    else if (strcmp(e->denied_prefix, prefix) != 0)
        e->several_prefixes = true;
}


/* The package number at the start of s ("0" of "0-die-1"); -1 when there is none. */
static int package_id(const char *s)
{
    const char *p = s, *end = s + strlen(s);
    uint64_t v;
    return rt_parse_u64(&p, end, &v) && p != s && v < 4096 ? (int)v : -1;
}

/* Adds the zone's counter unless it is not an energy domain we know, or a counter of that
 * name (the same package's domain through another interface) is already there. */
static void add_zone(rt_energy_src *e, const char *zone)
{
    char zname[64], name[32], path[160];
    if (!zone_name(e, zone, zname, sizeof zname))
        return;
    const char *kind;
    int package = -1;
    bool in_total = false;
    if (strncmp(zname, "package-", 8) == 0) {
        kind = "package";
        package = package_id(zname + 8); /* "package-N" or "package-N-die-M" */
        in_total = true;
        if (!rt_copy_str(name, sizeof name, zname))
            return;
    } else if (strcmp(zname, "psys") == 0) {
        kind = "psys";
        rt_copy_str(name, sizeof name, "psys");
    } else if (strcmp(zname, "core") == 0 || strcmp(zname, "uncore") == 0 || strcmp(zname, "dram") == 0) {
        kind = zname[0] == 'c' ? "core" : zname[0] == 'u' ? "uncore" : "dram";
        in_total = zname[0] == 'd';
        /* a child zone (intel-rapl:N:M) takes its parent package's number: dram-N */
        char parent[64], pname[64];
        const char *cut = strrchr(zone, ':');
        const char *suffix = "";
        if (cut && strchr(zone, ':') != cut && rt_copy_trim(parent, sizeof parent, zone, (size_t)(cut - zone)) &&
            zone_name(e, parent, pname, sizeof pname) && strncmp(pname, "package-", 8) == 0) {
            package = package_id(pname + 8);
            suffix = pname + 7;
        }
        if (!rt_pathf(name, sizeof name, "%s%s", kind, suffix))
            return;
    } else {
        rt_log(e->log, RT_LOG_DEBUG, "energy: powercap zone %s (%s) is not a domain counted here", zone, zname);
        return;
    }
    if (find_name(e, name))
        return; /* intel-rapl-mmio:0 after intel-rapl:0: package-0 once */
    if (!rt_pathf(path, sizeof path, "class/powercap/%s/energy_uj", zone))
        return;
    int fd = rt_open_at(e->roots->sys_fd, path);
    if (fd == -EACCES || fd == -EPERM) {
        note_denied(e, zone, name);
        return;
    }
    if (fd < 0)
        return;
    int64_t range = 0;
    if (!rt_pathf(path, sizeof path, "class/powercap/%s/max_energy_range_uj", zone) ||
        rt_read_i64_at(e->roots->sys_fd, path, &range) < 0 || range < 0)
        range = 0;
    const char *source = strncmp(zone, "amd-rapl", 8) == 0 ? "amd-rapl" : "intel-rapl";
    energy_ctr *c = add(e, name, kind, source, "measured", package, in_total, VIA_POWERCAP, fd);
    if (c) {
        c->range = (uint64_t)range;
        take(c);
    }
}

static void find_powercap(rt_energy_src *e)
{
    zone_list z = {0};
    rt_dir_walk(e->roots->sys_fd, "class/powercap", zone_entry, &z);
    if (z.n)
        qsort(z.name, z.n, sizeof *z.name, zone_cmp);
    for (size_t i = 0; i < z.n; i++)
        add_zone(e, z.name[i]);
    free(z.name);
}

/* ---- perf, where energy_uj is root-only ----------------------------------------------------- */

static bool was_denied(const rt_energy_src *e, const char *name)
{
    for (size_t i = 0; i < e->ndenied; i++)
        if (strcmp(e->denied[i], name) == 0)
            return true;
    return false;
}

/* Opens the perf PMU's events for the domains found root-only. Returns 0 or the -errno of
 * what failed (-ENOENT: no PMU). */
static int find_perf(rt_energy_src *e)
{
    rt_perf_power_ctr p[64];
    int err;
    size_t n = rt_perf_power_open(e->roots->sys_fd, p, RT_ARRAY_LEN(p), &err);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        bool psys = strcmp(p[i].kind, "psys") == 0;
        if (psys)
            rt_copy_str(name, sizeof name, "psys");
        else
            rt_pathf(name, sizeof name, "%s-%d", p[i].kind, p[i].package);
        if (find_name(e, name) || !was_denied(e, name)) {
            close(p[i].fd); /* read through powercap already, or not a domain this machine shows */
            continue;
        }
        bool in_total = strcmp(p[i].kind, "package") == 0 || strcmp(p[i].kind, "dram") == 0;
        energy_ctr *c = add(e, name, p[i].kind, "perf", "measured", p[i].package, in_total, VIA_PERF, p[i].fd);
        if (c) {
            c->scale = p[i].scale;
            take(c);
        }
    }
    return err;
}

/* Builds the sentence saying what is root-only and how to grant it (perf_err: what opening
 * the PMU gave). */
static void say_missing(rt_energy_src *e, int perf_err)
{
    char perf[256] = "";
    if (perf_err == -ENOENT)
        snprintf(perf, sizeof perf, " and there is no perf power PMU to read it instead");
    else if (perf_err == -EACCES || perf_err == -EPERM) {
        char par[16];
        if (rt_read_line_at(e->roots->proc_fd, "sys/kernel/perf_event_paranoid", par, sizeof par) <= 0)
            rt_copy_str(par, sizeof par, "unknown");
        snprintf(perf, sizeof perf,
                 " and the perf power PMU is not permitted (kernel.perf_event_paranoid is %s and the process lacks "
                 "CAP_PERFMON)",
                 par);
    } else if (perf_err)
        snprintf(perf, sizeof perf, " and the perf power PMU failed to open (%s)", strerror(-perf_err));
    const char *glob = e->several_prefixes ? "*" : e->denied_prefix;
    char perf_fix[160] = "";
    if (perf_err && perf_err != -ENOENT)
        snprintf(perf_fix, sizeof perf_fix,
                 "; or let perf read it with `sysctl kernel.perf_event_paranoid=0` or `setcap cap_perfmon=ep` on the "
                 "tracker");
    char msg[2048];
    int n = snprintf(msg, sizeof msg,
                     "RAPL energy (%s/class/powercap/%s:*/energy_uj) is readable by root only (since Linux 5.10, "
                     "CVE-2020-8694)%s: grant it with `chmod o+r %s/class/powercap/%s:*/energy_uj` as root (lost at "
                     "reboot), or for good with the udev rule `SUBSYSTEM==\"powercap\", ACTION==\"add\", "
                     "KERNEL==\"%s:*\", RUN+=\"/bin/chmod o+r /sys%%p/energy_uj\"` in /etc/udev/rules.d/%s.",
                     e->roots->sys, glob, perf, e->roots->sys, glob, glob, perf_fix);
    if (n > 0)
        e->missing = rt_strdup(msg);
}

/* ---- hwmon platform meters ---------------------------------------------------------------- */

typedef struct hwmon_list {
    long *num;
    size_t n, cap;
} hwmon_list;

static int hwmon_entry(void *user, const char *name, unsigned char d_type)
{
    (void)d_type;
    hwmon_list *h = user;
    if (strncmp(name, "hwmon", 5) != 0 || !name[5] || strspn(name + 5, "0123456789") != strlen(name + 5))
        return 0;
    if (rt_grow(&h->num, &h->cap, h->n + 1, sizeof *h->num) < 0)
        return 1;
    h->num[h->n++] = strtol(name + 5, NULL, 10);
    return 0;
}

static int long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Whether hwmonN belongs to a GPU: its device has a drm/ folder (a DRM card) or is a PCI
 * display controller (class 0x03xxxx). GPUs' energy comes with the GPU set. */
static bool hwmon_is_gpu(const rt_energy_src *e, long num)
{
    char path[96], cls[32];
    rt_pathf(path, sizeof path, "class/hwmon/hwmon%ld/device/drm", num);
    int fd = openat(e->roots->sys_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return true;
    }
    rt_pathf(path, sizeof path, "class/hwmon/hwmon%ld/device/class", num);
    return rt_read_line_at(e->roots->sys_fd, path, cls, sizeof cls) > 0 && strncmp(cls, "0x03", 4) == 0;
}

/* Opens hwmonN's attribute (in hwmonN/, or in hwmonN/device/ where older drivers such as
 * acpi_power_meter put them). Returns the fd or -1. */
static int hwmon_open(const rt_energy_src *e, long num, const char *attr)
{
    char path[128];
    static const char *const where[] = {"", "device/"};
    for (size_t i = 0; i < RT_ARRAY_LEN(where); i++) {
        int fd;
        if (rt_pathf(path, sizeof path, "class/hwmon/hwmon%ld/%s%s", num, where[i], attr) &&
            (fd = rt_open_at(e->roots->sys_fd, path)) >= 0)
            return fd;
    }
    return -1;
}

static void find_hwmon(rt_energy_src *e)
{
    hwmon_list h = {0};
    rt_dir_walk(e->roots->sys_fd, "class/hwmon", hwmon_entry, &h);
    if (h.n)
        qsort(h.num, h.n, sizeof *h.num, long_cmp);
    int platforms = 0;
    for (size_t i = 0; i < h.n; i++) {
        char raw[64], name[64];
        int fd = hwmon_open(e, h.num[i], "name");
        ssize_t len = fd >= 0 ? rt_pread_single(fd, raw, sizeof raw) : -1;
        if (fd >= 0)
            close(fd);
        if (len <= 0 || rt_copy_trim(name, sizeof name, raw, (size_t)len) == 0 || strcmp(name, "power_meter") != 0 ||
            hwmon_is_gpu(e, h.num[i]))
            continue;
        char cname[32];
        rt_pathf(cname, sizeof cname, "platform-%d", platforms);
        int how = VIA_HWMON_ENERGY;
        fd = hwmon_open(e, h.num[i], "energy1_input");
        if (fd < 0) {
            how = VIA_HWMON_POWER;
            fd = hwmon_open(e, h.num[i], "power1_average");
        }
        if (fd < 0)
            fd = hwmon_open(e, h.num[i], "power1_input");
        if (fd < 0)
            continue;
        energy_ctr *c =
            add(e, cname, "platform", "hwmon", how == VIA_HWMON_ENERGY ? "measured" : "sampled", -1, false, how, fd);
        if (!c)
            break;
        platforms++;
        if (how == VIA_HWMON_ENERGY)
            take(c);
    }
    free(h.num);
}

/* ---- the handle --------------------------------------------------------------------------- */

rt_energy_src *rt_energy_src_open(const rt_roots *roots, const rt_logger *log)
{
    rt_energy_src *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->roots = roots;
    e->log = log;
    if (roots->sys_fd < 0)
        return e;
    find_powercap(e);
    if (e->ndenied) {
        int err = find_perf(e);
        bool all = true;
        for (size_t i = 0; i < e->ndenied; i++)
            all = all && find_name(e, e->denied[i]);
        if (!all) {
            say_missing(e, err);
            if (e->missing)
                rt_log(log, RT_LOG_WARN, "%s", e->missing);
        }
    }
    find_hwmon(e);
    for (size_t i = 0; i < e->n; i++)
        rt_log(log, RT_LOG_DEBUG, "energy: %s (%s, %s)", e->c[i].pub.name, e->c[i].pub.source, e->c[i].pub.method);
    return e;
}

size_t rt_energy_src_count(const rt_energy_src *e)
{
    return e ? e->n : 0;
}

const rt_energy_counter *rt_energy_src_counter(const rt_energy_src *e, size_t i)
{
    return e && i < e->n ? &e->c[i].pub : NULL;
}

void rt_energy_src_read(rt_energy_src *e, double *joules, double *watts)
{
    for (size_t i = 0; i < e->n; i++) {
        energy_ctr *c = &e->c[i];
        joules[i] = watts[i] = NAN;
        if (c->how == VIA_HWMON_POWER) {
            uint64_t uw;
            if (read_u64_fd(c->fd, &uw))
                watts[i] = (double)uw / 1e6;
        } else if (take(c))
            joules[i] = c->how == VIA_PERF ? (double)c->total * c->scale : (double)c->total / 1e6;
    }
}

const char *rt_energy_src_missing(const rt_energy_src *e)
{
    return e ? e->missing : NULL;
}

void rt_energy_src_close(rt_energy_src *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        rt_close(&e->c[i].fd);
    free(e->c);
    free(e->missing);
    free(e);
}
