/* wire.h - the messages between the static tool and its loader bridge (core/bridge.c, the
 * program src/lib/bridge/): a message is a 4-byte little-endian length and that many bytes of items,
 * each a one-byte tag and its value: 'i' a 64-bit integer, 'd' a double (both little-endian), 's'
 * a 4-byte length, that many bytes and a NUL (so a reader's pointer into the message is a C
 * string), 'n' a NULL string. Both sides read with the rt_wire_get_*
 * calls, which never read past the message: a short or mistyped message sets bad and returns
 * zeros. Internal; written once, for both sides. */
#ifndef RT_CORE_WIRE_H
#define RT_CORE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* The most bytes one message may hold (a reply body, an upload's part: their own caps are lower). */
#define RT_WIRE_MAX ((size_t)1 << 30)

/* A message being written (out) or read (in: data is the message's payload, NUL-padded). */
typedef struct rt_wire {
    rt_buf b;   /* the payload, after its 4 length bytes (written by rt_wire_send) */
    size_t pos; /* reading: the next item */
    bool bad;   /* writing: out of memory; reading: short, mistyped or over-long */
} rt_wire;

void rt_wire_init(rt_wire *w);
void rt_wire_free(rt_wire *w);

void rt_wire_put_i64(rt_wire *w, int64_t v);
void rt_wire_put_f64(rt_wire *w, double v);
/* n bytes of p ('s'); p NULL: the NULL string ('n'). */
void rt_wire_put_bytes(rt_wire *w, const void *p, size_t n);
/* A NUL-terminated string, or NULL. */
void rt_wire_put_str(rt_wire *w, const char *s);

int64_t rt_wire_get_i64(rt_wire *w);
double rt_wire_get_f64(rt_wire *w);
/* The next string: a pointer into the message (NUL-terminated), its length in *n (may be NULL);
 * NULL for 'n' and for a bad message. The pointer lives as long as the message. */
const char *rt_wire_get_bytes(rt_wire *w, size_t *n);

/* Sends the payload of w on fd as one message, waiting for room until the monotonic time
 * deadline or *stop as rt_wire_recv does (a reader that stopped reading does not hold the sender
 * past them). Returns 0, or -1 with errno (EPIPE when the other side is gone; ETIMEDOUT; ENOMEM
 * when w is bad). Uses sendmsg(MSG_NOSIGNAL | MSG_DONTWAIT) on a socket. */
int rt_wire_send(int fd, rt_wire *w, double deadline, const _Atomic double *stop);

/* Receives one message from fd into w (reset first), waiting until the monotonic time deadline
 * (rt_mono_secs; INFINITY: no limit) or, when stop is not NULL, until *stop has passed (checked
 * about every 100 ms). Returns 0; -1 with errno: EPIPE (the other side closed), ETIMEDOUT (the
 * deadline or *stop passed), EMSGSIZE (over RT_WIRE_MAX), ENOMEM, or a read error. */
int rt_wire_recv(int fd, rt_wire *w, double deadline, const _Atomic double *stop);

#endif
