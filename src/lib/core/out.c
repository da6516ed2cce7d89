/* out.c - writing all of a buffer to an output: a file descriptor (rt_write_all) or the
 * caller's rt_write_fn, called again with the rest until it took everything. */
#include "out.h"

bool rt_out_ok(const rt_out *o)
{
    return o->fn || o->fd >= 0;
}

int rt_out_write(const rt_out *o, const void *p, size_t n)
{
    return o->fn ? rt_write_fn_all(o->fn, o->user, p, n) : rt_write_all(o->fd, p, n);
}
