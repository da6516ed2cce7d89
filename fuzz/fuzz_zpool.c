/* fuzz_zpool.c - libFuzzer target for zpool's answer (rt_zpool_list_parse) and the pool's
 * mount lookup over the same bytes as mountinfo (rt_zfs_pool_mount, for each pool parsed). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/sources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    rt_zpool z[4];
    size_t bad = 0;
    size_t n = rt_zpool_list_parse(buf, size, z, 4, &bad);
    char mnt[64];
    for (size_t i = 0; i < n && i < 4; i++)
        if (rt_zfs_pool_mount(buf, size, z[i].name, mnt, sizeof mnt) && strlen(mnt) >= sizeof mnt)
            abort(); /* the mount point always fits what it was given */
    rt_zfs_pool_mount(buf, size, "tank", mnt, sizeof mnt);
    free(buf);
    return 0;
}
