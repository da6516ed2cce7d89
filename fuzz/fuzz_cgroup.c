/* fuzz_cgroup.c - libFuzzer target for the control-group parsers (cgroup.h): mountinfo's cgroup
 * mounts, /proc/PID/cgroup, keyed files, memory.stat, limits, cpu.max, pressure, io.stat, blkio and
 * cgroup.procs. Any input must parse or be rejected without a crash or an out-of-bounds read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* parsers get exactly the bytes read: not NUL-terminated at size */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    static rt_cg_mounts m;
    static rt_cg_paths p;
    rt_cg_mounts_parse(buf, size, &m);
    for (int h = 0; h < RT_CG_NHIER; h++)
        if (strlen(m.dir[h]) >= RT_CG_PATH_MAX || strlen(m.root[h]) >= RT_CG_PATH_MAX)
            abort();
    if (rt_cg_paths_parse(buf, size, &p) >= 0)
        for (int h = 0; h < RT_CG_NHIER; h++)
            if (p.has[h] && p.path[h][0] != '/')
                abort();
    uint64_t a, b;
    static const char *const keys[] = {"usage_usec", "nr_throttled", "oom_kill", "max", "hierarchical_memory_limit"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        rt_cg_keyed_u64(buf, size, keys[i], &a);
    rt_cg_parse_memory_stat(buf, size, &a);
    rt_cg_parse_limit(buf, size, &a);
    if (rt_cg_parse_cpu_max(buf, size, &a, &b) == 0 && b == 0)
        abort();
    rt_cg_psi_raw r;
    if (rt_cg_parse_pressure(buf, size, &r) < 0 && (r.has_some || r.has_full))
        abort();
    rt_cg_parse_io_stat(buf, size, &a, &b);
    rt_cg_parse_blkio(buf, size, &a, &b);
    rt_cg_devs disks = {.dev = {8ull << 32, 259ull << 32}, .n = 2};
    rt_cg_parse_io_stat_on(buf, size, &disks, &a, &b);
    rt_cg_parse_blkio_on(buf, size, &disks, &a, &b);
    int64_t pids[8];
    long n = rt_cg_parse_procs(buf, size, pids, 8);
    for (long i = 0; i < n && i < 8; i++)
        if (pids[i] <= 0)
            abort();
    free(buf);
    return 0;
}
