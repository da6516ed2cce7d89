/* member.h - a copy of an rt_member (a run's place in a job of several nodes) that owns its
 * strings, for whoever keeps one past the caller's call: the sampler, the statistics, the JSON
 * lines reader. Internal. */
#ifndef RT_CORE_MEMBER_H
#define RT_CORE_MEMBER_H

#include <stdbool.h>

#include "resource_tracker.h"

typedef struct rt_member_copy {
    rt_member m; /* its strings point into the buffers below (or are NULL) */
    char job_id[128], step_id[32], node[128], from[16];
    bool set; /* what was copied in names a job (job_id): the run is a member */
} rt_member_copy;

/* Copies src (NULL: clears dst) into dst: the numbers within src's
 * struct_size (one below -1 read as -1), the strings into dst's buffers (cut without splitting
 * a UTF-8 character; an empty one is NULL). Returns 0, or -1 for a src whose struct_size is
 * too small (dst cleared). */
int rt_member_keep(rt_member_copy *dst, const rt_member *src);

#endif
