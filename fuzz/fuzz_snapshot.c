/* fuzz_snapshot.c - libFuzzer target for loading a saved run (rt_tracker_load_buffer): any
 * bytes (JSON, gzip) are loaded or refused with RT_ERR_PARSE without a crash, leak or read past
 * their end; a run that loads is saved again (plain and gzipped) and reloads with the same
 * number of samples. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "resource_tracker.h"

static void reload(rt_tracker *t, int flags)
{
    int fd = memfd_create("snap", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (rt_tracker_save(t, NULL, flags, fd) != RT_OK)
        abort();
    off_t len = lseek(fd, 0, SEEK_END);
    char *buf = malloc(len > 0 ? (size_t)len : 1);
    if (len <= 0 || !buf || pread(fd, buf, (size_t)len, 0) != len)
        abort();
    close(fd);
    rt_tracker *u = NULL;
    if (rt_tracker_load_buffer(buf, (size_t)len, NULL, NULL, &u) != RT_OK ||
        rt_tracker_count(u) - rt_tracker_first(u) != rt_tracker_count(t) - rt_tracker_first(t))
        abort();
    rt_tracker_free(u);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1); /* exactly size bytes: no NUL after them */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    rt_tracker *t = (rt_tracker *)buf;
    rt_error rc = rt_tracker_load_buffer(buf, size, NULL, NULL, &t);
    if (rc != RT_OK && (rc != RT_ERR_PARSE || t))
        abort();
    if (rc == RT_OK) {
        (void)rt_tracker_summary(t);
        reload(t, 0);
        reload(t, RT_SAVE_GZIP);
        rt_tracker_free(t);
    }
    free(buf);
    return 0;
}
