/* fetch_wire.h - one HTTP request and its reply as bridge messages (core/wire.h): what the static
 * tool's rt_fetch sends to its loader helper, which performs it with the target's libcurl
 * (core/bridge.h, src/lib/bridge/). Both ends. Internal. */
#ifndef RT_NET_FETCH_WIRE_H
#define RT_NET_FETCH_WIRE_H

#include "../core/wire.h"
#include "curl.h"

/* The most request headers carried. */
#define RT_FETCH_WIRE_HEADERS 64

/* Appends req (after the caller's RT_BRIDGE_FETCH). Sets w->bad when it has more headers than
 * RT_FETCH_WIRE_HEADERS. */
void rt_fetch_wire_put_request(rt_wire *w, const rt_fetch_request *req);

/* Reads a request from w into *req: its strings point into w, its headers into hdrs (cap
 * RT_FETCH_WIRE_HEADERS + 1, NULL-terminated). Returns false for a malformed message. */
bool rt_fetch_wire_get_request(rt_wire *w, rt_fetch_request *req, const char **hdrs);

/* Appends rt_fetch's result: rc, err and the reply. */
void rt_fetch_wire_put_reply(rt_wire *w, rt_error rc, const char *err, const rt_fetch_reply *r);

/* Reads what rt_fetch_wire_put_reply wrote into *out (zeroed first; its body a copy) and err.
 * Returns the helper's rt_fetch result, RT_ERR_IO for a malformed message, RT_ERR_NOMEM. */
rt_error rt_fetch_wire_get_reply(rt_wire *w, rt_fetch_reply *out, char *err, size_t errlen);

#endif
