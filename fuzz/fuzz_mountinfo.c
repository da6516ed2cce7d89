/* fuzz_mountinfo.c - libFuzzer target for the mountinfo parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/sources.h"

static void touch(void *user, const rt_mountinfo_entry *e)
{
    size_t *total = user;
    *total += strlen(e->mount_point) + strlen(e->root) + strlen(e->fstype) + strlen(e->source) + e->major;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    size_t total = 0;
    rt_mountinfo_parse(buf, size, touch, &total);
    free(buf);
    return 0;
}
