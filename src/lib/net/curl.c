/* curl.c - HTTP(S) requests through Debian's libcurl without linking it: libcurl.so.4 is opened
 * with dlopen at the first request (its dlerror text kept, as nvml.c keeps NVML's), the few
 * functions used are resolved once per process, and each request is one easy handle with a
 * total deadline, no signals, a cap on the reply body, the system CA store and proxy settings;
 * a thread may set an abort time that another thread moves (rt_fetch_abort_at), checked at each
 * of libcurl's progress ticks, so that a request already in flight ends when its caller must. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h> /* types and constants only: every function comes through dlsym */

#include "../core/bridge.h"
#include "../core/dl.h"
#include "curl.h"
#include "fetch_wire.h"

#define RT_CURL_SONAME "libcurl.so.4"

/* The libcurl functions used, as resolved from the loaded library. */
typedef struct curl_api {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl_api;

/* The process-wide library: loaded once, never closed (libcurl keeps global state). */
static struct {
    pthread_once_t once;
    void *dl;
    curl_api api;
    bool ready;
    char err[256]; /* why it is not ready */
} lib = {.once = PTHREAD_ONCE_INIT};

/* Opens soname and resolves every function into *api. Returns the handle, or NULL with the
 * dlerror text in err (and nothing left open). */
#define CU(slot) RT_DL_SYM("curl_", curl_api, slot)
static void *load_api(const char *soname, curl_api *api, char *err, size_t errlen)
{
    static const rt_dl_sym syms[] = {
        CU(global_init), CU(easy_init), CU(easy_setopt), CU(easy_perform), CU(easy_getinfo), CU(easy_cleanup),
        CU(easy_strerror), CU(slist_append), CU(slist_free_all),
    };
    return rt_dl_load(soname, syms, RT_ARRAY_LEN(syms), api, err, errlen);
}

static void load_once(void)
{
#ifdef RT_STATIC_BUILD /* no loader here: the helper loads the target's libcurl (core/bridge.h) */
    char why[sizeof lib.err - 40];
    if (rt_bridge_probe("curl", why, sizeof why) == 0)
        lib.ready = true;
    else if (strncmp(why, "cannot load ", 12) == 0) /* the helper's own words */
        snprintf(lib.err, sizeof lib.err, "%s", why);
    else
        snprintf(lib.err, sizeof lib.err, "cannot load " RT_CURL_SONAME ": %s", why);
    return;
#endif
    lib.dl = load_api(RT_CURL_SONAME, &lib.api, lib.err, sizeof lib.err);
    if (!lib.dl)
        return;
    CURLcode rc = lib.api.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(lib.err, sizeof lib.err, "curl_global_init failed: %s", lib.api.easy_strerror(rc));
        return;
    }
    lib.ready = true;
}

rt_error rt_fetch_available(char *err, size_t errlen)
{
    pthread_once(&lib.once, load_once);
    if (lib.ready)
        return RT_OK;
#ifdef RT_STATIC_BUILD
    snprintf(err, errlen, "%s", lib.err);
#else
    snprintf(err, errlen, "cannot load %s (%s)", RT_CURL_SONAME, lib.err);
#endif
    return RT_ERR_UNSUPPORTED;
}

rt_error rt_fetch_probe(const char *soname, char *err, size_t errlen)
{
    curl_api api;
    char e[256] = "";
    void *dl = load_api(soname, &api, e, sizeof e);
    if (!dl) {
        snprintf(err, errlen, "cannot load %s (%s)", soname, e);
        return RT_ERR_UNSUPPORTED;
    }
    dlclose(dl);
    return RT_OK;
}

bool rt_url_escape(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!out || cap == 0)
        return false;
    out[0] = '\0';
    if (!s)
        return false;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                     *p == '-' || *p == '.' || *p == '_' || *p == '~';
        size_t need = plain ? 1 : 3;
        if (n + need >= cap) {
            out[0] = '\0';
            return false;
        }
        if (plain) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
    return true;
}

/* What the write callback fills. */
typedef struct sink {
    rt_buf *body;
    size_t max_body; /* the buffer may hold one byte more: the NUL */
    bool too_large, no_memory;
} sink;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    sink *s = user;
    size_t n = size * nmemb;
    if (n == 0)
        return 0;
    if (n > s->max_body || s->body->len > s->max_body - n) {
        s->too_large = true;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    if (rt_buf_reserve(s->body, s->body->len + n + 1) < 0) {
        s->no_memory = true;
        return 0;
    }
    memcpy(s->body->data + s->body->len, ptr, n);
    s->body->len += n;
    s->body->data[s->body->len] = '\0';
    return n;
}

/* What the header callback fills: the value of one named reply header. */
typedef struct header_sink {
    const char *name;
    size_t name_len;
    char *value; /* 256 bytes */
} header_sink;

/* Called by libcurl once per reply header line (not NUL-terminated, CRLF included). A status
 * line starts a new reply (a 100 Continue or a redirect before the final one): the value is
 * forgotten. Returns n (go on). */
static size_t on_header(char *line, size_t size, size_t nitems, void *user)
{
    header_sink *h = user;
    size_t n = size * nitems;
    if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        h->value[0] = '\0';
        return n;
    }
    if (n <= h->name_len || line[h->name_len] != ':' || strncasecmp(line, h->name, h->name_len) != 0)
        return n;
    size_t a = h->name_len + 1, b = n;
    while (a < b && (line[a] == ' ' || line[a] == '\t'))
        a++;
    while (b > a && (line[b - 1] == '\r' || line[b - 1] == '\n' || line[b - 1] == ' ' || line[b - 1] == '\t'))
        b--;
    if (b - a < 256) {
        memcpy(h->value, line + a, b - a);
        h->value[b - a] = '\0';
    } else {
        h->value[0] = '\0';
    }
    return n;
}

/* True when url starts with http:// or https:// (case-insensitive). */
static bool http_scheme(const char *url)
{
    return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

void rt_fetch_reply_free(rt_fetch_reply *r)
{
    if (r)
        rt_buf_free(&r->body);
}

/* Frees a header list made by slist_append, each entry wiped first: its copies of the headers
 * (an Authorization token, an S3 session token) are ours to clear. NULL is nothing. */
static void free_headers(const curl_api *api, struct curl_slist *hdrs)
{
    for (struct curl_slist *p = hdrs; p; p = p->next)
        if (p->data)
            explicit_bzero(p->data, strlen(p->data));
    api->slist_free_all(hdrs);
}

/* The calling thread's abort time (rt_fetch_abort_at), or NULL. */
static _Thread_local const _Atomic double *abort_at;

void rt_fetch_abort_at(const _Atomic double *deadline)
{
    abort_at = deadline;
}

/* libcurl's progress callback: non-zero (the transfer ends, CURLE_ABORTED_BY_CALLBACK) once the
 * thread's abort time has passed. */
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const _Atomic double *at = user;
    return rt_mono_secs() >= atomic_load_explicit(at, memory_order_relaxed);
}

/* The reply is awaited until the request's timeout and a margin, or the thread's abort time,
 * whichever comes first (the helper then ends its transfer when its socket closes). */
rt_error rt_fetch_bridged(const rt_fetch_request *req, rt_fetch_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    rt_wire q, a;
    rt_wire_init(&q);
    rt_wire_init(&a);
    rt_wire_put_i64(&q, RT_BRIDGE_FETCH);
    rt_fetch_wire_put_request(&q, req);
    rt_error rc = RT_ERR_IO;
    rt_bridge b;
    if (q.bad) {
        snprintf(err, errlen, "request too large for the helper (over %d headers or 1 GiB)", RT_FETCH_WIRE_HEADERS);
        rc = RT_ERR_INVALID;
    } else if (rt_bridge_start(&b, err, errlen) < 0) {
        rc = RT_ERR_UNSUPPORTED;
    } else {
        if (rt_bridge_call(&b, &q, &a, rt_mono_secs() + req->timeout_secs + 10, abort_at, err, errlen) == 0)
            rc = rt_fetch_wire_get_reply(&a, out, err, errlen);
        rt_bridge_stop(&b);
    }
    rt_wire_free(&q); /* wiped: a token or a key was in it */
    rt_wire_free(&a);
    return rc;
}

rt_error rt_fetch(const rt_fetch_request *req, rt_fetch_reply *out, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    if (!out) {
        snprintf(err, errlen, "no reply storage");
        return RT_ERR_INVALID;
    }
    memset(out, 0, sizeof *out);
    if (!req || !req->url || !(req->timeout_secs > 0) || !http_scheme(req->url) || (req->body_len && !req->body)) {
        snprintf(err, errlen, "invalid request (%s)", req && req->url ? req->url : "no URL");
        return RT_ERR_INVALID;
    }
    rt_error rc = rt_fetch_available(err, errlen);
    if (rc != RT_OK)
        return rc;
#ifdef RT_STATIC_BUILD
    return rt_fetch_bridged(req, out, err, errlen);
#endif
    const curl_api *api = &lib.api;
    /* the body may reach max_body bytes; its buffer holds one more for the NUL */
    size_t max = req->max_body < SIZE_MAX ? req->max_body + 1 : SIZE_MAX;
    rt_buf_init(&out->body, max);
    sink sk = {.body = &out->body, .max_body = req->max_body};
    header_sink hs = {.name = req->reply_header, .name_len = req->reply_header ? strlen(req->reply_header) : 0,
                      .value = out->header};

    CURL *h = api->easy_init();
    if (!h) {
        snprintf(err, errlen, "curl_easy_init failed");
        return RT_ERR_NOMEM;
    }
    struct curl_slist *hdrs = NULL;
    bool hdr_fail = false;
    for (const char *const *p = req->headers; p && *p && !hdr_fail; p++) {
        struct curl_slist *n = api->slist_append(hdrs, *p);
        hdr_fail = !n;
        hdrs = n ? n : hdrs;
    }
    /* no 100-continue round trip before the body; but not with SigV4: libcurl 7.88 signs the
     * blank "Expect:" as if it were sent (it only adds Expect itself above 1 MiB, unsigned) */
    if (req->body && !req->aws_sigv4 && !hdr_fail) {
        struct curl_slist *n = api->slist_append(hdrs, "Expect:");
        hdr_fail = !n;
        hdrs = n ? n : hdrs;
    }
    if (hdr_fail) {
        free_headers(api, hdrs);
        api->easy_cleanup(h);
        snprintf(err, errlen, "out of memory for headers");
        return RT_ERR_NOMEM;
    }
    double ms = ceil(req->timeout_secs * 1000.0);
    long timeout_ms = ms < 1 ? 1 : ms > 86400000.0 ? 86400000L : (long)ms;
    char curl_err[CURL_ERROR_SIZE] = "";
    const char *method = req->method ? req->method : "GET";

    CURLcode c = CURLE_OK;
#define SET(opt, val)                                      \
    do {                                                   \
        if (c == CURLE_OK)                                 \
            c = api->easy_setopt(h, opt, val);             \
    } while (0)
    SET(CURLOPT_URL, req->url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_TIMEOUT_MS, timeout_ms);
    SET(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    SET(CURLOPT_ERRORBUFFER, curl_err);
    const _Atomic double *at = abort_at;
    if (at) {
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, (void *)at);
        SET(CURLOPT_NOPROGRESS, 0L);
    }
    SET(CURLOPT_WRITEFUNCTION, on_data);
    SET(CURLOPT_WRITEDATA, &sk);
    SET(CURLOPT_USERAGENT, "resource-tracker/" RT_VERSION);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(req->max_body > (size_t)INT64_MAX ? INT64_MAX : req->max_body));
    if (hdrs)
        SET(CURLOPT_HTTPHEADER, hdrs);
    if (hs.name_len) {
        SET(CURLOPT_HEADERFUNCTION, on_header);
        SET(CURLOPT_HEADERDATA, &hs);
    }
    if (req->username)
        SET(CURLOPT_USERNAME, req->username);
    if (req->password)
        SET(CURLOPT_PASSWORD, req->password);
    if (req->aws_sigv4)
        SET(CURLOPT_AWS_SIGV4, req->aws_sigv4); /* libcurl 7.75 and later; older: CURLE_UNKNOWN_OPTION */
    if (strcmp(method, "GET") == 0) {
        SET(CURLOPT_HTTPGET, 1L);
    } else if (strcmp(method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else {
        if (strcmp(method, "POST") != 0)
            SET(CURLOPT_CUSTOMREQUEST, method);
        /* POSTFIELDS sends the body with any method; POST without one sends an empty body */
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        SET(CURLOPT_POSTFIELDS, req->body ? (const char *)req->body : "");
    }
    if (c == CURLE_OK) /* only http and https, redirects included (7.85 and later; older: the scheme check above) */
        (void)api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#undef SET
    if (c == CURLE_OK)
        c = api->easy_perform(h);
    long sent = 1; /* bytes of request headers sent; unknown: taken as sent */
    if (c != CURLE_OK && api->easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK)
        sent = 1;
    out->unsent = c != CURLE_OK && sent == 0;
    long code = 0; /* a failed transfer's status line, if one came before it failed */
    if (c != CURLE_OK && api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK)
        code = 0;
    out->replied = c == CURLE_OK || code > 0;
    if (c == CURLE_OK)
        c = api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
    free_headers(api, hdrs);
    api->easy_cleanup(h);

    if (sk.too_large || c == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, errlen, "reply body larger than %zu bytes", req->max_body);
        return RT_ERR_IO;
    }
    if (sk.no_memory) {
        snprintf(err, errlen, "out of memory for the reply body");
        return RT_ERR_NOMEM;
    }
    if (c == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(err, errlen, "aborted at the caller's deadline");
        return RT_ERR_IO;
    }
    if (c != CURLE_OK) {
        snprintf(err, errlen, "%s", curl_err[0] ? curl_err : api->easy_strerror(c));
        return c == CURLE_OUT_OF_MEMORY ? RT_ERR_NOMEM : RT_ERR_IO;
    }
    return RT_OK;
}

rt_error rt_fetch_get(const char *url, const char *const *headers, double timeout_secs, size_t max_body,
                      long *status, rt_buf *body, char *err, size_t errlen)
{
    rt_fetch_request req = {.url = url, .headers = headers, .timeout_secs = timeout_secs, .max_body = max_body};
    rt_fetch_reply rep;
    rt_error rc = rt_fetch(&req, &rep, err, errlen);
    if (status)
        *status = rep.status;
    if (body)
        *body = rep.body;
    else
        rt_fetch_reply_free(&rep);
    return rc;
}
