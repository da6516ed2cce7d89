/* http.h - the small plain-HTTP client used for cloud metadata services (see http.c): URL
 * splitting, the reply parser (pure, over a buffer) and the request itself. */
#ifndef RT_HTTP_H
#define RT_HTTP_H

#include "../core/core.h"

typedef struct rt_url {
    char host[256];
    int port;
    char path[1024];
} rt_url;

/* Splits "http://host[:port][/path]" (host may be [IPv6]); url is NUL-terminated. Returns 0,
 * or -1 (not http://, empty or odd characters in the host, a port that is not 1..65535 in
 * digits, a path with spaces or control characters, too long); *out is zeroed first. */
int rt_url_parse(const char *url, rt_url *out);

/* The most bytes the status line and headers (with the blank line) may take. */
#define RT_HTTP_MAX_HEADER_BYTES 16384

typedef struct rt_http_response {
    int status;                                  /* 100..999 */
    char headers[RT_HTTP_MAX_HEADER_BYTES + 1]; /* status line and headers, NUL-terminated */
    size_t headers_len;                         /* bytes in headers, blank line included */
    rt_buf body;                                /* decoded, NUL-terminated; free with rt_http_response_free */
} rt_http_response;

/* Tells from the first len bytes of a reply (buf need not be NUL-terminated) whether it is
 * whole: 1 when it is (headers done and Content-Length bytes there, or the chunked body's
 * last chunk and trailers there), 0 when more may come (a body without length runs to the
 * connection's close), -1 when it can never become a valid reply (the caller may stop
 * reading; rt_http_parse_response then says why). Reads nothing past buf[len-1]. */
int rt_http_response_complete(const char *buf, size_t len);

/* Parses a whole reply: buf[0..len) is everything received before the connection closed
 * (not NUL-terminated, not modified). Fills out (zeroed first): status, headers (copied),
 * and the body, decoded from Transfer-Encoding: chunked or cut at Content-Length, copied
 * into out->body. Returns 0, or -1 with a message in err: no HTTP/1.x status line, a status
 * outside 100..999, headers past RT_HTTP_MAX_HEADER_BYTES, a malformed header line, a bad,
 * overflowing or conflicting Content-Length, a body shorter than it, an unknown transfer
 * coding, malformed or truncated chunks (no last zero-size chunk), a body over max_body, or
 * no memory. Free out with rt_http_response_free either way. */
int rt_http_parse_response(const char *buf, size_t len, size_t max_body, rt_http_response *out, char *err,
                           size_t errlen);

/* Sends one request and reads the whole response, everything before deadline (monotonic
 * seconds). headers: "Name: value" strings, NULL-terminated, or NULL. A body larger than
 * max_body is an error. Returns 0 with *resp filled (any status), or -1 with a message in err.
 * Free resp with rt_http_response_free either way. */
int rt_http_request(const char *method, const char *url, const char *const *headers, const char *body,
                    double deadline, size_t max_body, rt_http_response *resp, char *err, size_t errlen);

/* The value of response header name (case-insensitive; the first such header), trimmed into
 * buf[cap] (cut to fit), and returns buf; NULL when the reply has no such header. */
const char *rt_http_header(const rt_http_response *r, const char *name, char *buf, size_t cap);

/* Frees the body; r may then be reused. */
void rt_http_response_free(rt_http_response *r);

#endif
