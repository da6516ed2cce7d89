/* fuzz_promhttp.c - libFuzzer target for the /metrics server's request parser: any bytes are
 * parsed, asked for more or rejected, never a crash or a read past the input; a whole head
 * stays whole whatever follows it, no shorter prefix of it is taken as whole, and a rejection
 * stands whatever follows. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/prom_http.h"

/* Checks what a parse that said DONE filled in. */
static void check_done(const char *buf, size_t size, const rt_prom_request *rq)
{
    if (rq->consumed == 0 || rq->consumed > size || rq->consumed > RT_PROM_HEAD_MAX)
        abort();
    if (rq->path_len == 0 || rq->path[0] != '/' || memchr(rq->path, '?', rq->path_len) ||
        memchr(rq->path, '#', rq->path_len))
        abort();
    if (!(rq->path_len == 1 || (rq->path >= buf && rq->path + rq->path_len <= buf + rq->consumed)))
        abort();
    if (rq->method_len == 0 || rq->method_str < buf || rq->method_str + rq->method_len > buf + rq->consumed)
        abort();
    if (rq->version_minor < 0 || rq->version_minor > 9 || (rq->openmetrics != 0 && rq->openmetrics != 1) ||
        (rq->keep_alive != 0 && rq->keep_alive != 1))
        abort();
    if ((rq->method == RT_PROM_GET) != (rq->method_len == 3 && memcmp(rq->method_str, "GET", 3) == 0))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1); /* exactly size bytes: no NUL after them */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    rt_prom_request rq, again;
    rt_prom_parse r = rt_prom_parse_request(buf, size, &rq);
    if (r != RT_PROM_MORE && r != RT_PROM_DONE && r != RT_PROM_BAD && r != RT_PROM_TOO_LARGE)
        abort();
    if (r == RT_PROM_MORE && size >= RT_PROM_HEAD_MAX)
        abort(); /* more is never wanted past the limit */
    if (r == RT_PROM_DONE) {
        check_done(buf, size, &rq);
        /* the head alone parses the same: nothing after it was looked at */
        if (rt_prom_parse_request(buf, rq.consumed, &again) != RT_PROM_DONE || again.consumed != rq.consumed ||
            again.openmetrics != rq.openmetrics || again.keep_alive != rq.keep_alive ||
            again.has_body != rq.has_body || again.path_len != rq.path_len)
            abort();
        /* one byte short of it is never whole */
        if (rt_prom_parse_request(buf, rq.consumed - 1, &again) == RT_PROM_DONE)
            abort();
    }
    if (size > 0) { /* one byte more never undoes a verdict */
        rt_prom_parse shorter = rt_prom_parse_request(buf, size - 1, &again);
        if ((shorter == RT_PROM_BAD && r != RT_PROM_BAD) ||
            (shorter == RT_PROM_DONE && (r != RT_PROM_DONE || again.consumed != rq.consumed)))
            abort();
    }
    free(buf);
    return 0;
}
