/* s3.c - one S3 object PUT signed with AWS Signature V4 by libcurl itself (CURLOPT_AWS_SIGV4),
 * the payload's SHA-256 from libcrypto (s3_sha256.c); s3:// URIs, object URLs with encoded keys,
 * and the bucket's region. Secrets never reach err. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curl.h"
#include "s3.h"

#define S3_DEFAULT_REGION "eu-central-1"
#define S3_MAX_REPLY (64 * 1024) /* an S3 reply to a PUT is a short XML document at most */

/* ---- pure helpers ------------------------------------------------------------------------- */

/* True for a character S3 allows in a bucket name (lower case, digits, '.', '-'; upper case and
 * '_' only in legacy us-east-1 names, accepted too). */
static bool bucket_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '-' || ch == '_';
}

bool rt_s3_parse_uri(const char *uri, rt_s3_target *t)
{
    if (!uri || !t || strncmp(uri, "s3://", 5) != 0)
        return false;
    const char *b = uri + 5, *e = b;
    while (*e && *e != '/') {
        if (!bucket_char(*e))
            return false;
        e++;
    }
    size_t blen = (size_t)(e - b);
    if (blen == 0 || blen >= sizeof t->bucket)
        return false;
    const char *p = e;
    while (*p == '/')
        p++;
    size_t plen = strlen(p);
    while (plen > 0 && p[plen - 1] == '/')
        plen--;
    if (plen >= sizeof t->prefix)
        return false;
    memcpy(t->bucket, b, blen);
    t->bucket[blen] = '\0';
    memcpy(t->prefix, p, plen);
    t->prefix[plen] = '\0';
    return true;
}

/* Appends s to out[cap] at *n. Returns false (nothing more written) when it does not fit. */
static bool put_str(char *out, size_t cap, size_t *n, const char *s)
{
    size_t l = strlen(s);
    if (l >= cap - *n)
        return false;
    memcpy(out + *n, s, l + 1);
    *n += l;
    return true;
}

/* Appends path (segments split on '/', each percent-encoded, the slashes kept) at *n. Returns
 * false when it does not fit. */
static bool put_path(char *out, size_t cap, size_t *n, const char *path)
{
    char seg[1024], enc[3 * sizeof seg];
    for (const char *p = path;;) {
        const char *slash = strchr(p, '/');
        size_t l = slash ? (size_t)(slash - p) : strlen(p);
        if (l >= sizeof seg)
            return false;
        memcpy(seg, p, l);
        seg[l] = '\0';
        if (!rt_url_escape(seg, enc, sizeof enc) || !put_str(out, cap, n, enc))
            return false;
        if (!slash)
            return true;
        if (!put_str(out, cap, n, "/"))
            return false;
        p = slash + 1;
    }
}

/* The full object key of key under t (prefix + '/' + key, or key alone) into out[cap]. */
static bool full_key(const rt_s3_target *t, const char *key, char *out, size_t cap)
{
    int w = snprintf(out, cap, "%s%s%s", t->prefix, t->prefix[0] ? "/" : "", key);
    return w >= 0 && (size_t)w < cap;
}

/* The URL of the bucket itself, ending in '/', into out[cap] at *n: ENDPOINT/BUCKET/ (path
 * style) or https://BUCKET.s3[.REGION].amazonaws.com/. Returns false when it does not fit. */
static bool bucket_url(const rt_s3_target *t, char *out, size_t cap, size_t *n)
{
    *n = 0;
    if (cap == 0)
        return false;
    out[0] = '\0';
    char ebucket[3 * sizeof t->bucket];
    if (!rt_url_escape(t->bucket, ebucket, sizeof ebucket))
        return false;
    int w;
    if (t->endpoint[0]) {
        size_t el = strlen(t->endpoint);
        while (el > 0 && t->endpoint[el - 1] == '/')
            el--;
        w = snprintf(out, cap, "%.*s/%s/", (int)el, t->endpoint, ebucket);
    } else {
        w = snprintf(out, cap, "https://%s.s3%s%s.amazonaws.com/", ebucket, t->region[0] ? "." : "", t->region);
    }
    if (w < 0 || (size_t)w >= cap)
        return false;
    *n = (size_t)w;
    return true;
}

bool rt_s3_object_url(const rt_s3_target *t, const char *key, char *out, size_t cap)
{
    if (!out || cap == 0)
        return false;
    out[0] = '\0';
    char k[2048];
    size_t n = 0;
    if (!t || !key || !key[0] || !full_key(t, key, k, sizeof k) || !bucket_url(t, out, cap, &n) ||
        !put_path(out, cap, &n, k)) {
        out[0] = '\0';
        return false;
    }
    return true;
}

bool rt_s3_object_uri(const rt_s3_target *t, const char *key, char *out, size_t cap)
{
    if (!out || cap == 0)
        return false;
    char k[2048];
    int w = -1;
    if (t && key && key[0] && full_key(t, key, k, sizeof k))
        w = snprintf(out, cap, "s3://%s/%s", t->bucket, k);
    if (w < 0 || (size_t)w >= cap) {
        out[0] = '\0';
        return false;
    }
    return true;
}

bool rt_s3_valid_region(const char *r)
{
    size_t n = r ? strlen(r) : 0;
    if (n == 0 || n >= sizeof((rt_s3_target *)0)->region)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9') || r[i] == '-'))
            return false;
    return true;
}

/* ---- requests ------------------------------------------------------------------------------ */

void rt_s3_find_region(rt_s3_target *t, const rt_s3_credentials *c, double timeout_secs)
{
    (void)c; /* the HEAD is unsigned: S3 names the region in its refusal too */
    if (!t || t->region[0])
        return;
    char url[1024];
    size_t n;
    if (!bucket_url(t, url, sizeof url, &n) || !(timeout_secs > 0)) {
        snprintf(t->region, sizeof t->region, "%s", S3_DEFAULT_REGION);
        return;
    }
    rt_fetch_request req = {.method = "HEAD", .url = url, .timeout_secs = timeout_secs, .max_body = 4096,
                            .reply_header = "x-amz-bucket-region"};
    rt_fetch_reply rep;
    char err[256];
    (void)rt_fetch(&req, &rep, err, sizeof err);
    const char *r = rt_s3_valid_region(rep.header) ? rep.header : S3_DEFAULT_REGION;
    memcpy(t->region, r, strlen(r) + 1); /* shorter than t->region: checked */
    rt_fetch_reply_free(&rep);
}

/* The text between the first <tag> in buf[0..len) and the first </tag> after it, into out[cap]
 * (cap >= 1; truncated), the five predefined XML entities decoded, every control byte a space.
 * Returns true when both tags were found (out may be empty), else false with out "". Reads
 * nothing past len. */
static bool xml_field(const char *buf, size_t len, const char *tag, char *out, size_t cap)
{
    static const struct {
        const char *name; /* "&amp;" */
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    char open[32], close[32];
    if (cap == 0)
        return false;
    out[0] = '\0';
    int ol = snprintf(open, sizeof open, "<%s>", tag);
    int cl = snprintf(close, sizeof close, "</%s>", tag);
    if (!buf || ol <= 0 || cl <= 0 || (size_t)ol >= sizeof open || (size_t)cl >= sizeof close)
        return false;
    const char *a = memmem(buf, len, open, (size_t)ol);
    if (!a)
        return false;
    a += ol;
    const char *b = memmem(a, len - (size_t)(a - buf), close, (size_t)cl);
    if (!b)
        return false;
    size_t n = 0;
    while (a < b && n + 1 < cap) {
        char c = *a++;
        if (c == '&') {
            for (size_t i = 0; i < RT_ARRAY_LEN(ents); i++) {
                size_t el = strlen(ents[i].name);
                if ((size_t)(b - (a - 1)) >= el && memcmp(a - 1, ents[i].name, el) == 0) {
                    c = ents[i].c;
                    a += el - 1;
                    break;
                }
            }
        }
        out[n++] = ((unsigned char)c < 0x20 || c == 0x7f) ? ' ' : c; /* one line */
    }
    out[n] = '\0';
    return true;
}

const char *rt_s3_error_words(const char *code)
{
    if (code && strcmp(code, "RequestTimeTooSkewed") == 0)
        return "refused for clock skew: this machine's clock is over 15 minutes from S3's";
    return NULL;
}

bool rt_s3_parse_error(const char *buf, size_t len, char *code, size_t ccap, char *msg, size_t mcap)
{
    bool c = xml_field(buf, len, "Code", code, ccap);
    bool m = xml_field(buf, len, "Message", msg, mcap);
    return c || m;
}

/* Writes "PUT url: what" into err[errlen] with every secret of c taken out first. */
static void put_error(const rt_s3_credentials *c, const char *url, const char *what, char *err, size_t errlen)
{
    char msg[1536];
    if (snprintf(msg, sizeof msg, "PUT %s: %s", url, what) >= (int)sizeof msg)
        memcpy(msg + sizeof msg - 4, "...", 4); /* a long URL: the message cut short */
    rt_redact(msg, c->secret_key);
    rt_redact(msg, c->session_token);
    snprintf(err, errlen, "%s", msg);
}

/* Judges the reply of a PUT that was answered: the object is stored when the status is 2xx, the
 * ETag header S3 gives every stored object is there, and the body is no error document (S3 may
 * answer 200 and still fail: an <Error> body). Otherwise returns false with what went wrong in
 * what[cap]: "HTTP 403 AccessDenied: Access Denied", "HTTP 200 InternalError: ... (an error
 * document)", "HTTP 200 without an ETag". rep's body is redacted of c's secrets in place (AWS's
 * SignatureDoesNotMatch echoes the canonical request, the token in it). */
static bool put_reply_stored(rt_fetch_reply *rep, const rt_s3_credentials *c, char *what, size_t cap)
{
    if (rep->body.data) {
        rt_redact(rep->body.data, c->secret_key);
        rt_redact(rep->body.data, c->session_token);
    }
    /* the body up to its first NUL: the part the redaction saw */
    size_t blen = rep->body.data ? strnlen(rep->body.data, rep->body.len) : 0;
    bool ok_status = rep->status >= 200 && rep->status < 300;
    bool error_doc = blen && memmem(rep->body.data, blen, "<Error>", 7);
    if (ok_status && !error_doc && rep->header[0])
        return true;
    char code[128], message[512];
    rt_s3_parse_error(rep->body.data, blen, code, sizeof code, message, sizeof message);
    const char *words = rt_s3_error_words(code); /* a clock skew named as such */
    snprintf(what, cap, "HTTP %ld%s%s%s%s%s%s%s%s", rep->status, code[0] ? " " : "", code, words ? " (" : "",
             words ? words : "", words ? ")" : "", message[0] ? ": " : "", message,
             !ok_status ? "" : error_doc ? " (an error document)" : " without an ETag");
    return false;
}

rt_error rt_s3_put(const rt_s3_target *t, const rt_s3_credentials *c, const char *key, const void *body,
                   size_t len, const char *content_type, double timeout_secs, long *status, char *err, size_t errlen)
{
    *status = 0;
    if (errlen)
        err[0] = '\0';
    char url[4096];
    if (!t || !c || !key || (len && !body) || !c->access_key[0] || !c->secret_key[0] ||
        !rt_s3_object_url(t, key, url, sizeof url)) {
        snprintf(err, errlen, "S3 PUT: invalid target, key or credentials");
        return RT_ERR_INVALID;
    }
    const char *region = t->region[0] ? t->region : S3_DEFAULT_REGION;
    if (!rt_s3_valid_region(region)) {
        snprintf(err, errlen, "S3 PUT: invalid region");
        return RT_ERR_INVALID;
    }
    char sha[65];
    rt_error rc = rt_s3_sha256_hex(body, len, sha, err, errlen);
    if (rc != RT_OK)
        return rc;

    char ctype[160], csha[96], sigv4[96];
    snprintf(ctype, sizeof ctype, "Content-Type: %s", content_type && content_type[0] ? content_type : "application/octet-stream");
    snprintf(csha, sizeof csha, "x-amz-content-sha256: %s", sha); /* libcurl 7.88 signs it and uses it as the payload hash */
    snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", region);
    size_t toklen = strnlen(c->session_token, sizeof c->session_token);
    if (toklen == sizeof c->session_token) {
        snprintf(err, errlen, "S3 PUT: session token not terminated");
        return RT_ERR_INVALID;
    }
    size_t tokcap = toklen + sizeof "X-Amz-Security-Token: ";
    char *tok = malloc(tokcap);
    if (!tok) {
        snprintf(err, errlen, "S3 PUT: out of memory");
        return RT_ERR_NOMEM;
    }
    snprintf(tok, tokcap, "X-Amz-Security-Token: %s", c->session_token);
    const char *headers[] = {ctype, csha, toklen ? tok : NULL, NULL};

    rt_fetch_request req = {.method = "PUT", .url = url, .headers = headers, .body = body ? body : "",
                            .body_len = len, .timeout_secs = timeout_secs, .max_body = S3_MAX_REPLY,
                            .aws_sigv4 = sigv4, .username = c->access_key, .password = c->secret_key,
                            .reply_header = "ETag"};
    rt_fetch_reply rep;
    char ferr[512];
    rc = rt_fetch(&req, &rep, ferr, sizeof ferr);
    explicit_bzero(tok, tokcap);
    free(tok);
    *status = rc != RT_OK && rep.unsent ? -1 : rep.status;
    if (rc != RT_OK) {
        put_error(c, url, ferr, err, errlen);
        rt_fetch_reply_free(&rep);
        return rc == RT_ERR_NOMEM ? RT_ERR_NOMEM : rc == RT_ERR_UNSUPPORTED ? RT_ERR_UNSUPPORTED : RT_ERR_IO;
    }
    char what[768];
    bool stored = put_reply_stored(&rep, c, what, sizeof what);
    if (!stored)
        put_error(c, url, what, err, errlen);
    rt_fetch_reply_free(&rep);
    return stored ? RT_OK : RT_ERR_IO;
}
