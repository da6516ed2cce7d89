/* out.h - where a library output goes: a file descriptor, or the caller's rt_write_fn (the
 * `_cb` twins of the fd calls). Not public. */
#ifndef RT_OUT_H
#define RT_OUT_H

#include "core.h"

typedef struct rt_out {
    int fd; /* used when fn is NULL */
    rt_write_fn fn;
    void *user;
} rt_out;

#define RT_OUT_FD(d) ((rt_out){.fd = (d)})
#define RT_OUT_CB(f, u) ((rt_out){.fd = -1, .fn = (f), .user = (u)})

/* Whether o can take output: a callback, or a non-negative fd. */
bool rt_out_ok(const rt_out *o);

/* Writes all n bytes of p to o: to the fd as rt_write_all; to the callback until it took
 * them all. Returns 0, or -1 with errno (EIO when nothing was taken and errno was not set). */
int rt_out_write(const rt_out *o, const void *p, size_t n);

#endif
