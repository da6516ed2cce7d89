/* prom_http.h - the /metrics server's request parser (one HTTP/1.x request head, pure) and the
 * server's internal hook that installs ready-made bodies (used by rt_prom_publish and tests).
 * Internal to the library. */
#ifndef RT_EXPORT_PROM_HTTP_H
#define RT_EXPORT_PROM_HTTP_H

#include <stddef.h>

#include "../core/clock.h"
#include "../core/core.h"

/* The most bytes a request head (request line, headers, the blank line) may take. */
#define RT_PROM_HEAD_MAX 8192

typedef enum rt_prom_parse {
    RT_PROM_MORE = 0,       /* the head is not complete yet: read more bytes */
    RT_PROM_DONE = 1,       /* a whole head: out is filled, out->consumed bytes were used */
    RT_PROM_BAD = -1,       /* not an HTTP/1.x request head (answer 400, close) */
    RT_PROM_TOO_LARGE = -2, /* the head would exceed RT_PROM_HEAD_MAX (answer 431, close) */
} rt_prom_parse;

typedef enum rt_prom_method { RT_PROM_GET, RT_PROM_HEAD, RT_PROM_OTHER } rt_prom_method;

/* One request head. method_str and path point into the parsed buffer (not NUL-terminated),
 * path to a static "/" for an absolute-form target without a path. */
typedef struct rt_prom_request {
    rt_prom_method method;
    const char *method_str; /* the method as sent, method_len bytes */
    size_t method_len;
    const char *path; /* the target's path: an origin-form target without its query or
                       * fragment (an absolute-form target without scheme and authority);
                       * always starts with '/' */
    size_t path_len;
    int version_minor; /* HTTP/1.<minor> */
    int openmetrics;   /* 1: Accept prefers application/openmetrics-text (q-values and
                        * specificity weighed against text/plain); 0: the text format */
    int keep_alive;    /* 1: the connection stays open after the reply (HTTP/1.1 unless
                        * "Connection: close"; HTTP/1.0 only with "Connection: keep-alive") */
    int has_body;      /* 1: Content-Length > 0 or Transfer-Encoding: the body is not read
                        * (the server answers, then closes) */
    size_t consumed;   /* bytes of the head, blank line included (leading empty lines too) */
} rt_prom_request;

/* Parses the request head at the start of buf[0..len) (not NUL-terminated; bytes after the
 * head, a pipelined request, are left alone). Lines end in CRLF or a bare LF; leading empty
 * lines are skipped. Returns RT_PROM_DONE with *out filled; RT_PROM_MORE when the head may
 * still complete (no byte so far is wrong); RT_PROM_BAD (a bad request line or header line,
 * folded headers, a control byte, an unknown HTTP version, conflicting Content-Length);
 * RT_PROM_TOO_LARGE when no complete head fits in RT_PROM_HEAD_MAX bytes. */
rt_prom_parse rt_prom_parse_request(const char *buf, size_t len, rt_prom_request *out);

/* Makes text (the Prometheus text format) and om (OpenMetrics) the bodies served from now on;
 * both are copied first (outside the lock). om NULL: the OpenMetrics body is made from text at
 * the first request for it, as after rt_prom_publish (which installs its text body so). For
 * tests, with synthetic bodies. Returns RT_OK, RT_ERR_NOMEM (the old ones stay),
 * RT_ERR_INVALID (NULL srv). */
rt_error rt_prom_set_bodies(rt_prom_server *srv, const char *text, size_t text_len, const char *om,
                            size_t om_len);

/* rt_prom_start with clock (NULL: the real one) for the clients' deadlines and the pauses after
 * a failed accept. For tests, with a test clock. */
rt_error rt_prom_start_clock(const rt_prom_options *opts, rt_clock *clock, rt_prom_server **out);

#endif
