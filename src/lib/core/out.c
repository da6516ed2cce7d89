/* out.c - writing all of a buffer to an output: a file descriptor (rt_write_all) or the
 * caller's rt_write_fn, called again with the rest until it took everything. */
#include <errno.h>

#include "out.h"

bool rt_out_ok(const rt_out *o)
{
    return o->fn || o->fd >= 0;
}

int rt_out_write(const rt_out *o, const void *p, size_t n)
{
    if (!o->fn)
        return rt_write_all(o->fd, p, n);
    const char *c = p;
    while (n > 0) {
        errno = 0;
        long k = o->fn(o->user, c, n);
        if (k <= 0 || (size_t)k > n) {
            if (errno == 0)
                errno = EIO;
            return -1;
        }
        c += k;
        n -= (size_t)k;
    }
    return 0;
}
