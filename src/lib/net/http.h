/* http.h - the small plain-HTTP client used for cloud metadata services (see http.c). */
#ifndef RT_HTTP_H
#define RT_HTTP_H

#include "../core/core.h"

typedef struct rt_url {
    char host[256];
    int port;
    char path[1024];
} rt_url;

/* Splits "http://host[:port][/path]" (host may be [IPv6]). Returns 0 or -1 (not http://,
 * malformed, too long). */
int rt_url_parse(const char *url, rt_url *out);

typedef struct rt_http_response {
    int status;
    char headers[4096]; /* the status line and headers, NUL-terminated (cut at 4 KiB) */
    size_t headers_len;
    rt_buf body; /* NUL-terminated; free with rt_http_response_free */
} rt_http_response;

/* Sends one request and reads the whole response, everything before deadline (monotonic
 * seconds). headers: "Name: value" strings, NULL-terminated, or NULL. A body larger than
 * max_body is an error. Returns 0 with *resp filled (any status), or -1 with a message in err.
 * Free resp with rt_http_response_free either way. */
int rt_http_request(const char *method, const char *url, const char *const *headers, const char *body,
                    double deadline, size_t max_body, rt_http_response *resp, char *err, size_t errlen);

/* The value of response header name (case-insensitive), trimmed into buf, or NULL. */
const char *rt_http_header(const rt_http_response *r, const char *name, char *buf, size_t cap);

void rt_http_response_free(rt_http_response *r);

#endif
