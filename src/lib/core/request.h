/* request.h - a copy of an rt_request ("Where the job runs") that owns its strings, for whoever
 * keeps one past the caller's call: the sampler (rt_sampler_options.request), the statistics
 * and the tracker (rt_*_set_request), the JSON lines reader. Internal. */
#ifndef RT_CORE_REQUEST_H
#define RT_CORE_REQUEST_H

#include <stdbool.h>

#include "resource_tracker.h"

#define RT_REQUEST_TEXT_CAP 64 /* each string is kept up to 63 bytes */

typedef struct rt_request_copy {
    rt_request r; /* its strings point into the buffers below (or are NULL) */
    char place[RT_REQUEST_TEXT_CAP], cpu_from[RT_REQUEST_TEXT_CAP], memory_from[RT_REQUEST_TEXT_CAP];
    char gpus_from[RT_REQUEST_TEXT_CAP], time_limit_from[RT_REQUEST_TEXT_CAP];
    bool set; /* a request was copied in */
} rt_request_copy;

/* Copies src (NULL: clears dst) into dst: the figures within src's struct_size, the strings
 * into dst's buffers (cut without splitting a UTF-8 character), a figure without its *_from
 * (or not finite, or negative) dropped to not said (0, NULL). Returns 0, or -1 for a src whose
 * struct_size is too small (dst cleared). */
int rt_request_keep(rt_request_copy *dst, const rt_request *src);

/* Whether req says anything: a place or a figure. */
bool rt_request_any(const rt_request *req);

#endif
