/* fuzz_procparse.c - libFuzzer target for the /proc/stat, meminfo, diskstats and net/dev
 * parsers: any input must parse or be rejected without a crash or an out-of-bounds read. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/sources.h"

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
    rt_netdev n[4];
    rt_netdev_parse(buf, size, n, 4);
    free(buf);
    return 0;
}
