/* fuzz_http.c - libFuzzer target for the metadata client's reply parser and URL splitter: any
 * bytes are parsed or rejected with a message, never a crash, leak or read past the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1); /* exactly size bytes: no NUL after them */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    size_t max_body = size > 0 ? (size_t)data[0] * 64 : 0; /* small caps too */
    int whole = rt_http_response_complete(buf, size);
    rt_http_response r;
    char err[160] = "";
    int rc = rt_http_parse_response(buf, size, max_body, &r, err, sizeof err);
    if (rc < 0 && err[0] == '\0')
        abort(); /* a rejection always says why */
    if (whole == -1 && rc == 0)
        abort(); /* never valid, yet parsed */
    if (rc == 0) {
        char v[64];
        if (r.status < 100 || r.status > 999 || r.body.len > max_body || !r.body.data ||
            r.body.data[r.body.len] != '\0' || r.headers_len > RT_HTTP_MAX_HEADER_BYTES ||
            strlen(r.headers) != r.headers_len)
            abort();
        rt_http_header(&r, "Content-Length", v, sizeof v);
        rt_http_header(&r, "metadata-flavor", v, sizeof v);
    }
    rt_http_response_free(&r);
    rc = rt_http_parse_response(buf, size, SIZE_MAX, &r, err, sizeof err);
    if (whole == 1 && rc != 0)
        abort(); /* whole, yet not parsed (with no cap on the body) */
    rt_http_response_free(&r);
    free(buf);

    char *url = malloc(size + 1); /* the URL splitter takes a string */
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    rt_url u;
    if (rt_url_parse(url, &u) == 0 && (u.port < 1 || u.port > 65535 || u.host[0] == '\0' || u.path[0] != '/'))
        abort();
    free(url);
    return 0;
}
