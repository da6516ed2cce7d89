/* fetch_wire.c - an HTTP request and its reply as bridge messages, both ends (fetch_wire.h). */
#include <stdio.h>
#include <string.h>

#include "fetch_wire.h"

void rt_fetch_wire_put_request(rt_wire *w, const rt_fetch_request *req)
{
    size_t n = 0;
    while (req->headers && req->headers[n])
        n++;
    if (n > RT_FETCH_WIRE_HEADERS)
        w->bad = true;
    rt_wire_put_str(w, req->method);
    rt_wire_put_str(w, req->url);
    rt_wire_put_i64(w, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        rt_wire_put_str(w, req->headers[i]);
    rt_wire_put_bytes(w, req->body, req->body_len); /* NULL and "" are told apart, as rt_fetch tells them */
    rt_wire_put_f64(w, req->timeout_secs);
    rt_wire_put_i64(w, req->max_body > (size_t)INT64_MAX ? INT64_MAX : (int64_t)req->max_body);
    rt_wire_put_str(w, req->aws_sigv4);
    rt_wire_put_str(w, req->username);
    rt_wire_put_str(w, req->password);
    rt_wire_put_str(w, req->reply_header);
}

/* The next string as a C string: one with a NUL inside (which would be cut at it) makes the
 * message bad. */
static const char *get_str(rt_wire *w)
{
    size_t n;
    const char *s = rt_wire_get_bytes(w, &n);
    if (s && strlen(s) != n) {
        w->bad = true;
        return NULL;
    }
    return s;
}

bool rt_fetch_wire_get_request(rt_wire *w, rt_fetch_request *req, const char **hdrs)
{
    memset(req, 0, sizeof *req);
    req->method = get_str(w);
    req->url = get_str(w);
    int64_t n = rt_wire_get_i64(w);
    if (n < 0 || n > RT_FETCH_WIRE_HEADERS)
        return false;
    for (int64_t i = 0; i < n; i++)
        hdrs[i] = get_str(w);
    hdrs[n] = NULL;
    req->headers = hdrs;
    req->body = rt_wire_get_bytes(w, &req->body_len); /* bytes: a NUL is part of them */
    req->timeout_secs = rt_wire_get_f64(w);
    int64_t max = rt_wire_get_i64(w);
    if (max < 0)
        return false;
    req->max_body = (size_t)max;
    req->aws_sigv4 = get_str(w);
    req->username = get_str(w);
    req->password = get_str(w);
    req->reply_header = get_str(w);
    for (int64_t i = 0; i < n; i++)
        if (!hdrs[i])
            return false;
    return !w->bad && w->pos == w->b.len;
}

void rt_fetch_wire_put_reply(rt_wire *w, rt_error rc, const char *err, const rt_fetch_reply *r)
{
    rt_wire_put_i64(w, rc);
    rt_wire_put_str(w, err ? err : "");
    rt_wire_put_i64(w, r->status);
    rt_wire_put_bytes(w, r->body.data ? r->body.data : "", r->body.len);
    rt_wire_put_str(w, r->header);
    rt_wire_put_i64(w, r->replied);
}

rt_error rt_fetch_wire_get_reply(rt_wire *w, rt_fetch_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    rt_buf_init(&out->body, SIZE_MAX);
    int64_t rc = rt_wire_get_i64(w);
    const char *e = rt_wire_get_bytes(w, NULL);
    int64_t status = rt_wire_get_i64(w);
    size_t n;
    const char *body = rt_wire_get_bytes(w, &n);
    const char *header = rt_wire_get_bytes(w, NULL);
    int64_t replied = rt_wire_get_i64(w);
    if (w->bad || !e || !body || !header || w->pos != w->b.len) {
        snprintf(err, errlen, "the helper's reply is malformed");
        return RT_ERR_IO;
    }
    out->status = (long)status;
    out->replied = replied != 0;
    if (n && rt_buf_append(&out->body, body, n) < 0) {
        snprintf(err, errlen, "out of memory for the reply body");
        return RT_ERR_NOMEM;
    }
    rt_copy_str(out->header, sizeof out->header, header);
    if (errlen)
        snprintf(err, errlen, "%s", e);
    return (rt_error)rc;
}
