/* fuzz_wire.c - libFuzzer target for the messages between the static tool and its loader helper
 * (core/wire.c, net/fetch_wire.c): any payload is read as an HTTP request (the helper's side), as
 * a request's reply (the tool's side) and item by item in an order the input chooses; every read
 * stays inside the message, a short or mistyped one is refused, and what is accepted is written
 * again to the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"
#include "net/fetch_wire.h"

/* A message holding exactly the input: its own allocation, no byte past the end to lean on. */
static void load(rt_wire *w, const uint8_t *data, size_t size)
{
    rt_wire_init(w);
    if (size && rt_buf_append(&w->b, data, size) < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt_wire w, again;
    load(&w, data, size);
    rt_fetch_request req;
    const char *hdrs[RT_FETCH_WIRE_HEADERS + 1];
    if (rt_fetch_wire_get_request(&w, &req, hdrs)) {
        /* accepted: the same request writes the same bytes */
        rt_wire_init(&again);
        rt_fetch_wire_put_request(&again, &req);
        if (again.bad || again.b.len != size || memcmp(again.b.data, data, size) != 0)
            abort();
        rt_wire_free(&again);
    }
    rt_wire_free(&w);

    load(&w, data, size);
    rt_fetch_reply rep;
    char err[128];
    if (rt_fetch_wire_get_reply(&w, &rep, err, sizeof err) == RT_OK &&
        (w.bad || (rep.body.len && strlen(rep.body.data) > rep.body.len)))
        abort(); /* an accepted reply was read whole; its body is NUL-terminated at its length */
    rt_fetch_reply_free(&rep);
    rt_wire_free(&w);

    /* item by item, each byte of the input choosing the next read */
    load(&w, data, size);
    for (size_t i = 0; i < size && !w.bad; i++) {
        size_t n;
        const char *s;
        switch (data[i] % 3) {
        case 0: (void)rt_wire_get_i64(&w); break;
        case 1: (void)rt_wire_get_f64(&w); break;
        default:
            s = rt_wire_get_bytes(&w, &n);
            if (s && s[n] != '\0') /* a string is always NUL-terminated at its length */
                abort();
        }
        if (w.pos > w.b.len)
            abort();
    }
    rt_wire_free(&w);
    return 0;
}
