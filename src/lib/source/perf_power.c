/* perf_power.c - the perf "power" PMU: its event files parsed (event=0x.., .scale, cpumask) and
 * its energy events opened system-wide on one CPU per package with perf_event_open, the way
 * to RAPL where powercap's energy_uj is root-only but perf is permitted (perf_event_paranoid
 * <= 0 or CAP_PERFMON). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/core.h"
#include "perf_power.h"

#define PMU_DIR "bus/event_source/devices/power"

bool rt_perf_event_config(const char *text, size_t len, uint64_t *config)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *term = p;
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *term_end = comma ? comma : end;
        while (term < term_end && (*term == ' ' || *term == '\t' || *term == '\n'))
            term++;
        if (term_end - term > 6 && memcmp(term, "event=", 6) == 0) {
            char num[32];
            size_t n = rt_copy_trim(num, sizeof num, term + 6, (size_t)(term_end - term - 6));
            if (n == 0 || n >= sizeof num - 1)
                return false;
            char *stop;
            errno = 0;
            unsigned long long v = strtoull(num, &stop, 0);
            if (errno || *stop || num[0] == '-')
                return false;
            *config = v;
            return true;
        }
        p = comma ? comma + 1 : end;
    }
    return false;
}

int rt_perf_cpulist(const char *text, size_t len, int *cpus, size_t cap)
{
    const char *p = text, *end = text + len;
    while (end > p && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    size_t n = 0;
    while (p < end) {
        uint64_t a, b;
        if (!rt_parse_u64(&p, end, &a) || a > 1u << 20)
            return -1;
        b = a;
        if (p < end && *p == '-') {
            p++;
            if (!rt_parse_u64(&p, end, &b) || b < a || b > 1u << 20)
                return -1;
        }
        for (uint64_t c = a; c <= b; c++, n++)
            if (n < cap)
                cpus[n] = (int)c;
        if (p < end) {
            if (*p != ',')
                return -1;
            p++;
        }
    }
    return n > (size_t)1 << 20 ? -1 : (int)n;
}

/* The events tried, with the kind each measures (energy-gpu is RAPL's PP1, which powercap
 * names "uncore"). */
static const struct {
    const char *event, *kind;
} events[] = {
    {"energy-pkg", "package"}, {"energy-ram", "dram"},  {"energy-cores", "core"},
    {"energy-gpu", "uncore"},  {"energy-psys", "psys"},
};

static long perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

size_t rt_perf_power_open(int sys_fd, rt_perf_power_ctr *out, size_t cap, int *err)
{
    *err = -ENOENT;
    char buf[512], path[128];
    int64_t type;
    if (sys_fd < 0 || rt_read_i64_at(sys_fd, PMU_DIR "/type", &type) < 0 || type < 0 || type > UINT32_MAX)
        return 0;
    ssize_t n = rt_read_at(sys_fd, PMU_DIR "/cpumask", buf, sizeof buf);
    int cpus[64];
    int ncpu = n > 0 ? rt_perf_cpulist(buf, (size_t)n, cpus, RT_ARRAY_LEN(cpus)) : -1;
    if (ncpu <= 0)
        return 0;
    if (ncpu > (int)RT_ARRAY_LEN(cpus))
        ncpu = (int)RT_ARRAY_LEN(cpus);
    int pkg[64];
    for (int c = 0; c < ncpu; c++) {
        int64_t id;
        pkg[c] = rt_pathf(path, sizeof path, "devices/system/cpu/cpu%d/topology/physical_package_id", cpus[c]) &&
                         rt_read_i64_at(sys_fd, path, &id) == 0 && id >= 0 && id < 1 << 20
                     ? (int)id
                     : c;
    }
    size_t found = 0, opened = 0;
    int first_err = 0;
    for (size_t e = 0; e < RT_ARRAY_LEN(events); e++) {
        uint64_t config;
        if (!rt_pathf(path, sizeof path, PMU_DIR "/events/%s", events[e].event) ||
            (n = rt_read_at(sys_fd, path, buf, sizeof buf)) <= 0 || !rt_perf_event_config(buf, (size_t)n, &config))
            continue;
        double scale = 1.0; /* the kernel's default when there is no .scale file */
        if (rt_pathf(path, sizeof path, PMU_DIR "/events/%s.scale", events[e].event) &&
            (n = rt_read_line_at(sys_fd, path, buf, sizeof buf)) > 0) {
            char *stop;
            double s = strtod(buf, &stop);
            if (stop != buf && *stop == '\0' && s > 0 && s < 1)
                scale = s;
        }
        bool psys = strcmp(events[e].kind, "psys") == 0;
        for (int c = 0; c < ncpu && !(psys && c > 0); c++) {
            found++;
            struct perf_event_attr a;
            memset(&a, 0, sizeof a);
            a.size = sizeof a;
            a.type = (uint32_t)type;
            a.config = config;
            long fd = perf_event_open(&a, -1, cpus[c], -1, PERF_FLAG_FD_CLOEXEC);
            if (fd < 0) {
                if (!first_err)
                    first_err = -errno;
                continue;
            }
            if (opened == cap) {
                close((int)fd);
                continue;
            }
            out[opened++] = (rt_perf_power_ctr){events[e].kind, psys ? -1 : pkg[c], (int)fd, scale};
        }
    }
    *err = found == 0 ? -ENOENT : first_err;
    return opened;
}

bool rt_perf_power_read(int fd, uint64_t *count)
{
    uint64_t v;
    ssize_t n;
    do
        n = read(fd, &v, sizeof v);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof v)
        return false;
    *count = v;
    return true;
}
