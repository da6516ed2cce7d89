/* curl.h - HTTP(S) requests through the system's libcurl, loaded with dlopen at first use so
 * that a run which never asks the network for anything does not map it (see curl.c); and a
 * percent-encoder for URL parts. Internal to the library. */
#ifndef RT_CURL_H
#define RT_CURL_H

#include "../core/core.h"

/* One request. Everything is borrowed for the duration of the call. */
typedef struct rt_fetch_request {
    const char *method;          /* "GET", "PUT", "POST", "DELETE", ...; NULL: GET */
    const char *url;             /* http:// or https:// only */
    const char *const *headers;  /* "Name: value" strings, NULL-terminated, or NULL */
    const void *body;            /* request body, or NULL for none */
    size_t body_len;             /* bytes of body */
    double timeout_secs;         /* the whole request, connection included; must be > 0 */
    size_t max_body;             /* the most reply body bytes accepted */
    const char *aws_sigv4;       /* libcurl's AWS Signature V4 (CURLOPT_AWS_SIGV4), e.g.
                                  * "aws:amz:eu-central-1:s3", with username/password as the key
                                  * pair; NULL: no signing. libcurl 7.88 signs every header given
                                  * in headers and takes x-amz-content-sha256's value as the
                                  * payload hash when that header is given (else it hashes body) */
    const char *username;        /* CURLOPT_USERNAME (with aws_sigv4: the access key), or NULL */
    const char *password;        /* CURLOPT_PASSWORD (the secret key), or NULL; never in err */
    const char *reply_header;    /* name of one reply header to keep in rt_fetch_reply.header
                                  * (case-insensitive), or NULL */
} rt_fetch_request;

/* What came back: any HTTP status (a 404 or 500 is a reply, not a failure). */
typedef struct rt_fetch_reply {
    long status;  /* HTTP status, e.g. 200 */
    rt_buf body;  /* the reply body, NUL-terminated (body.data may be NULL when empty);
                   * free with rt_fetch_reply_free */
    char header[256]; /* the value of req->reply_header in the final reply, trimmed; "" when
                       * absent or longer than 255 bytes */
    bool unsent;  /* the transfer failed before any byte of the request was sent (no connection,
                   * no name): the server cannot have acted on it. false when unknown */
    bool replied; /* an HTTP status line came back (the transfer may still have failed after it:
                   * a body too large, cut or too slow); false: no reply at all (no name, no
                   * connection, nothing in time, a TLS failure) */
} rt_fetch_reply;

/* Performs req and fills *out (zeroed first). Returns RT_OK with any status; RT_ERR_UNSUPPORTED
 * when libcurl cannot be loaded (err holds the dlerror text); RT_ERR_IO when the transfer failed,
 * ran past the timeout or the body exceeded max_body (err says which, in curl's words);
 * RT_ERR_INVALID for a NULL or unusable request (no URL, timeout <= 0, a scheme other than
 * http/https); RT_ERR_NOMEM. err (errlen bytes) always holds a message when the result is not
 * RT_OK. Free out with rt_fetch_reply_free whatever the result. Thread-safe. */
rt_error rt_fetch(const rt_fetch_request *req, rt_fetch_reply *out, char *err, size_t errlen);

/* rt_fetch made by a loader helper of its own (core/bridge.h) with the libcurl it loads: the
 * static build's rt_fetch, once rt_fetch_available said yes; the tests'. Results as rt_fetch, and
 * RT_ERR_UNSUPPORTED when no helper could start; the abort time of rt_fetch_abort_at holds. */
rt_error rt_fetch_bridged(const rt_fetch_request *req, rt_fetch_reply *out, char *err, size_t errlen);

/* The common case: GET url with headers, the status in *status and the body in *body (free with
 * rt_buf_free, whatever the result). Errors as rt_fetch. */
rt_error rt_fetch_get(const char *url, const char *const *headers, double timeout_secs, size_t max_body,
                      long *status, rt_buf *body, char *err, size_t errlen);

void rt_fetch_reply_free(rt_fetch_reply *r);

/* Every rt_fetch the calling thread makes from now on (until called again; NULL: none) ends early,
 * RT_ERR_IO "aborted at the caller's deadline", once rt_mono_secs() reaches *deadline: read
 * without a lock (another thread may move it) at each of libcurl's progress ticks, which come
 * often while data flows and about once a second while the peer is silent, so a request already
 * in flight ends within about a second of it. deadline must outlive those requests. */
void rt_fetch_abort_at(const _Atomic double *deadline);

/* Loads libcurl (once per process) and tells whether it is usable: RT_OK, or
 * RT_ERR_UNSUPPORTED with the reason in err. */
rt_error rt_fetch_available(char *err, size_t errlen);

/* Tries to open the library soname and resolve every function rt_fetch needs, then closes it
 * again (for tests: a missing or foreign library). Returns RT_OK or RT_ERR_UNSUPPORTED with the
 * dlerror text in err. */
rt_error rt_fetch_probe(const char *soname, char *err, size_t errlen);

/* Percent-encodes s for a URL path segment or query value (RFC 3986: everything but
 * A-Z a-z 0-9 - . _ ~ becomes %XX) into out[cap]. Returns true, or false (out empty) when the
 * result does not fit or s is NULL. */
bool rt_url_escape(const char *s, char *out, size_t cap);

#endif
