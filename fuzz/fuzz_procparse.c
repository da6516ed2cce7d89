/* fuzz_procparse.c - libFuzzer target for the procfs parsers (/proc/stat, meminfo, diskstats, sysfs block stat,
 * net/dev, /proc/PID/{stat,io,smaps_rollup,status,schedstat}, children lists), DRM fdinfo and sysfs
 * speed values: any input must parse or be rejected without a crash or an out-of-bounds read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/drm.h"
#include "source/sources.h"

static void count_pid(void *user, int64_t pid)
{
    *(uint64_t *)user += (uint64_t)pid;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* parsers get exactly the bytes read: not NUL-terminated at size */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    rt_cpu_ticks cores[4];
    rt_stat st = {.cores = cores, .core_cap = 4};
    rt_stat_parse(buf, size, &st);
    rt_meminfo m;
    rt_meminfo_parse(buf, size, &m);
    rt_diskstat d[4];
    rt_diskstats_parse(buf, size, d, 4);
    uint64_t sr, sw;
    rt_blockstat_parse(buf, size, &sr, &sw);
    rt_netdev n[4];
    rt_netdev_parse(buf, size, n, 4);
    rt_pidstat ps;
    rt_pidstat_parse(buf, size, &ps);
    uint64_t a;
    rt_pidio io;
    rt_pidio_parse(buf, size, &io);
    rt_rollup ro;
    rt_smaps_rollup_parse(buf, size, &ro);
    rt_status_hwm_parse(buf, size, &a);
    rt_children_parse(buf, size, count_pid, &a);
    const char *q = buf; /* /proc/PID/schedstat: its first number */
    if (rt_parse_u64(&q, buf + size, &a) && (q <= buf || q > buf + size))
        abort();
    rt_drm_client c;
    rt_drm_fdinfo_parse(buf, size, &c);
    /* a sysfs speed value: rt_pread_single hands it over NUL-terminated */
    char *speed = malloc(size + 1);
    if (speed) {
        memcpy(speed, data, size);
        speed[size] = '\0';
        rt_parse_speed(speed, (ssize_t)size);
        free(speed);
    }
    free(buf);
    return 0;
}
