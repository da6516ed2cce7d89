/* host.c - the host's facts: name, machine id, primary address, CPUs, memory, GPUs, storage
 * (the physical disks a sample lists), kernel and OS. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "gpu.h"
#include "../core/lasterr.h"
#include "sources.h"

typedef struct host_impl {
    rt_host pub;
    char *strs[10]; /* everything pub points to, for freeing */
    size_t nstrs;
} host_impl;

/* Hands heap string s to h (freed with it) and returns it; NULL stays NULL, and s is freed
 * (NULL returned) when h has no slot left. */
static const char *keep(host_impl *h, char *s)
{
    if (!s)
        return NULL;
    if (h->nstrs == RT_ARRAY_LEN(h->strs)) {
        free(s);
        return NULL;
    }
    h->strs[h->nstrs++] = s;
    return s;
}

/* A whole small file from an absolute path (not under /proc or /sys), trimmed. */
static char *slurp_line(const char *path)
{
    char buf[256], out[256];
    ssize_t n = rt_read_at(AT_FDCWD, path, buf, sizeof buf);
    if (n <= 0)
        return NULL;
    return rt_copy_trim(out, sizeof out, buf, (size_t)n) ? strdup(out) : NULL;
}

/* The start of the host parsers: empties out; false when there is nothing to parse or no room. */
static bool begin(const char *buf, size_t len, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    return buf && len && cap;
}

bool rt_os_release_parse(const char *buf, size_t len, char *out, size_t cap)
{
    if (!begin(buf, len, out, cap))
        return false;
    const char *p = buf, *end = buf + len, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        if (le - line > 12 && memcmp(line, "PRETTY_NAME=", 12) == 0) {
            const char *v = line + 12, *ve = le;
            if (ve > v && (*v == '"' || *v == '\'')) {
                v++;
                if (ve > v && (ve[-1] == '"' || ve[-1] == '\''))
                    ve--;
            }
            size_t n = (size_t)(ve - v);
            if (n > cap - 1)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

/* PRETTY_NAME of os-release, without its quotes. */
static char *os_name(void)
{
    static const char *const paths[] = {"/etc/os-release", "/usr/lib/os-release"};
    char buf[4096], name[4096];
    for (size_t i = 0; i < RT_ARRAY_LEN(paths); i++) {
        ssize_t n = rt_read_at(AT_FDCWD, paths[i], buf, sizeof buf);
        if (n > 0 && rt_os_release_parse(buf, (size_t)n, name, sizeof name))
            return strdup(name);
    }
    return NULL;
}

bool rt_cpuinfo_model_parse(const char *buf, size_t len, char *out, size_t cap)
{
    static const char *const keys[] = {"model name", "Model", "Hardware", "cpu model"};
    if (!begin(buf, len, out, cap))
        return false;
    for (size_t k = 0; k < RT_ARRAY_LEN(keys); k++) {
        const char *p = buf, *end = buf + len, *line, *le;
        size_t kl = strlen(keys[k]);
        while (rt_next_line(&p, end, &line, &le)) {
            const char *colon = memchr(line, ':', (size_t)(le - line));
            char key[64];
            if (!colon || rt_copy_trim(key, sizeof key, line, (size_t)(colon - line)) != kl ||
                memcmp(key, keys[k], kl) != 0)
                continue;
            if (rt_copy_trim(out, cap, colon + 1, (size_t)(le - colon - 1)))
                return true;
            break; /* the key is there but empty: try the next key */
        }
    }
    return false;
}

/* The CPU model from <proc>/cpuinfo. */
static char *cpu_model(const rt_roots *r)
{
    rt_buf b;
    rt_buf_init(&b, 1u << 20);
    int fd = rt_open_at(r->proc_fd, "cpuinfo");
    char *model = NULL, v[256];
    if (fd >= 0 && rt_read_fd_grow(fd, &b, RT_READ_TO_EOF) > 0 && rt_cpuinfo_model_parse(b.data, b.len, v, sizeof v))
        model = strdup(v);
    if (fd >= 0)
        close(fd);
    rt_buf_free(&b);
    return model;
}

/* The value of a hexadecimal token (the kernel's "%04X"; an optional 0x), as far as its hex
 * digits go, never past len: true when its lowest bit is set. */
static bool hex_low_bit(const char *tok, size_t len)
{
    if (len > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
        tok += 2;
        len -= 2;
    }
    int last = -1;
    for (size_t i = 0; i < len && isxdigit((unsigned char)tok[i]); i++)
        last = isdigit((unsigned char)tok[i]) ? tok[i] - '0' : tolower((unsigned char)tok[i]) - 'a' + 10;
    return last >= 0 && (last & 1);
}

bool rt_net_route_default_parse(const char *buf, size_t len, char *out, size_t cap)
{
    if (!begin(buf, len, out, cap))
        return false;
    const char *p = buf, *end = buf + len, *line, *le;
    while (rt_next_line(&p, end, &line, &le)) {
        const char *q = line, *tok[4];
        size_t tl[4];
        int k = rt_next_tokens(&q, le, tok, tl, 4);
        /* Iface Destination Gateway Flags: destination 0 and the route up (flag 1) */
        if (k == 4 && tl[1] == 8 && memcmp(tok[1], "00000000", 8) == 0 && hex_low_bit(tok[3], tl[3]) && tl[0] < cap) {
            memcpy(out, tok[0], tl[0]);
            out[tl[0]] = '\0';
            return true;
        }
    }
    return false;
}

/* The interface of the IPv4 default route, from <proc>/net/route. */
static bool default_iface(const rt_roots *r, char *out, size_t cap)
{
    char buf[8192];
    ssize_t n = rt_read_at(r->proc_fd, "net/route", buf, sizeof buf);
    return n > 0 && rt_net_route_default_parse(buf, (size_t)n, out, cap);
}

/* The address of the default route's interface; else the first global address of an
 * interface that is up and not loopback (IPv4 before IPv6). */
static char *primary_ip(const rt_roots *r)
{
    char dflt[IF_NAMESIZE + 1] = "";
    default_iface(r, dflt, sizeof dflt);
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0)
        return NULL;
    char best[INET6_ADDRSTRLEN] = "";
    int best_rank = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        int fam = i->ifa_addr->sa_family;
        char a[INET6_ADDRSTRLEN];
        int rank;
        if (fam == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof a);
            rank = strcmp(i->ifa_name, dflt) == 0 ? 4 : 2;
        } else if (fam == AF_INET6) {
            const struct in6_addr *x = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
            if (IN6_IS_ADDR_LINKLOCAL(x))
                continue;
            inet_ntop(AF_INET6, x, a, sizeof a);
            rank = strcmp(i->ifa_name, dflt) == 0 ? 3 : 1;
        } else {
            continue;
        }
        if (rank > best_rank) {
            best_rank = rank;
            memcpy(best, a, sizeof best);
        }
    }
    freeifaddrs(ifs);
    return best_rank ? strdup(best) : NULL;
}

rt_error rt_host_new(const rt_host_options *opts, rt_host **out)
{
    rt_err_clear();
    rt_error e = out ? rt_host_read(opts, out) : RT_ERR_INVALID;
    const char *proc =
        opts && opts->struct_size >= offsetof(rt_host_options, sys_root) && opts->proc_root && opts->proc_root[0]
            ? opts->proc_root
            : "/proc";
    if (e == RT_ERR_INVALID)
        rt_err_set("rt_host_new: out NULL, struct_size too small or a root path too long");
    else if (e == RT_ERR_NOT_FOUND)
        rt_err_set("the proc root %s cannot be opened", proc);
    return e;
}

rt_error rt_host_read(const rt_host_options *opts, rt_host **out)
{
    *out = NULL;
    rt_host_options o = RT_HOST_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0)
        return RT_ERR_INVALID;
    host_impl *h = calloc(1, sizeof *h);
    if (!h)
        return RT_ERR_NOMEM;
    rt_roots roots;
    rt_error err = rt_roots_open(&roots, o.proc_root, o.sys_root);
    if (err != RT_OK) {
        free(h);
        return err;
    }
    rt_logger lg = {o.log, o.log_user};
    rt_host *p = &h->pub;
    char name[256];
    p->hostname = gethostname(name, sizeof name) == 0 ? keep(h, strndup(name, sizeof name)) : NULL;
    p->host_id = keep(h, slurp_line("/etc/machine-id"));
    if (!p->host_id)
        p->host_id = keep(h, slurp_line("/var/lib/dbus/machine-id"));
    p->ip = keep(h, primary_ip(&roots));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    p->vcpus = cpus > 0 ? cpus : RT_NULL_I64;
    p->cpu_model = keep(h, cpu_model(&roots));
    char buf[4096];
    ssize_t n = rt_read_at(roots.proc_fd, "meminfo", buf, sizeof buf);
    rt_meminfo m;
    p->memory_mib = n > 0 && rt_meminfo_parse(buf, (size_t)n, &m) == 0 ? (double)m.kib[RT_MEM_TOTAL] / 1024.0 : NAN;
    struct utsname u;
    p->kernel = uname(&u) == 0 ? keep(h, strdup(u.release)) : NULL;
    p->os = keep(h, os_name());

    /* GPUs */
    p->gpu_count = 0;
    p->gpu_memory_mib = NAN;
    rt_gpus *g = rt_gpus_open(&roots, o.nvml_library, &lg);
    size_t ng = 0;
    const rt_gpu *gs = g ? rt_gpus_read(g, &ng) : NULL;
    p->gpu_count = (int64_t)ng;
    double vram = 0;
    bool vram_known = false;
    for (size_t i = 0; i < ng; i++) {
        if (i == 0 && gs[i].name)
            p->gpu_model = keep(h, strdup(gs[i].name));
        if (gs[i].vram_total_bytes != RT_NULL_U64) {
            vram += (double)gs[i].vram_total_bytes / 1048576.0;
            vram_known = true;
        }
    }
    if (vram_known)
        p->gpu_memory_mib = vram;
    else if (ng == 0)
        p->gpu_memory_mib = 0;
    rt_gpus_close(g);

    /* storage: the physical disks a sample lists */
    uint64_t bytes;
    size_t disks, known;
    p->storage_gb = NAN;
    if (rt_disks_capacity(&roots, &bytes, &disks, &known) == 0)
        p->storage_gb = known ? (double)bytes / 1e9 : disks == 0 ? 0 : NAN;
    rt_roots_close(&roots);
    *out = p;
    return RT_OK;
}

void rt_host_free(rt_host *pub)
{
    if (!pub)
        return;
    host_impl *h = (host_impl *)pub;
    for (size_t i = 0; i < h->nstrs; i++)
        free(h->strs[i]);
    free(h);
}
