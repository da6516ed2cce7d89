/* s3.h - putting one object into S3 with AWS Signature V4 (service s3) and temporary
 * credentials, through rt_fetch (libcurl). Internal to the library. */
#ifndef RT_S3_H
#define RT_S3_H

#include "../core/core.h"

typedef struct rt_s3_credentials {
    char access_key[128];
    char secret_key[256];    /* never logged, never in an error message */
    char session_token[4096];
    double expires_unix;     /* NaN: unknown */
} rt_s3_credentials;

/* Where objects go: an "s3://bucket/prefix" URI parsed, plus the endpoint and region. */
typedef struct rt_s3_target {
    char bucket[256];
    char prefix[1024];       /* without leading or trailing '/' (may be empty) */
    char endpoint[512];      /* AWS_ENDPOINT_URL_S3 (path style: ENDPOINT/BUCKET/KEY), or "" for
                              * https://BUCKET.s3.REGION.amazonaws.com/KEY */
    char region[64];         /* "" until known */
} rt_s3_target;

/* Parses "s3://bucket/some/prefix" into t->bucket and t->prefix. Returns true, or false for a
 * URI that is not s3://BUCKET[/PREFIX] or does not fit. Pure. */
bool rt_s3_parse_uri(const char *uri, rt_s3_target *t);

/* The object URL of key under the target (path-style with an endpoint, else virtual-hosted),
 * each key segment percent-encoded, into out[cap]. Returns true or false (does not fit). Pure.
 * Here and in rt_s3_put, key is relative to t->prefix: the object is "PREFIX/KEY" (or "KEY" with
 * an empty prefix). Virtual-hosted URLs name t->region (s3.amazonaws.com while it is ""). */
bool rt_s3_object_url(const rt_s3_target *t, const char *key, char *out, size_t cap);

/* Learns the bucket's region when t->region is empty: asks the bucket (HEAD, the
 * x-amz-bucket-region reply header), else "eu-central-1". Never fails; at most timeout_secs.
 * The HEAD is not signed (S3 names the region in a refusal too): c is not used. */
void rt_s3_find_region(rt_s3_target *t, const rt_s3_credentials *c, double timeout_secs);

/* PUTs body as key with Content-Type, signed with SigV4 (X-Amz-Security-Token and
 * x-amz-content-sha256 sent; region "eu-central-1" while t->region is ""). Signed by libcurl
 * (CURLOPT_AWS_SIGV4, 7.75 or later), the payload hash from libcrypto.so.3 (RT_ERR_UNSUPPORTED
 * when either cannot be loaded). RT_ERR_INVALID for a bad target, key, region or credentials.
 * Returns RT_OK on a 2xx that carries an ETag and no <Error> document (the object stored);
 * RT_ERR_IO otherwise (a 200 without an ETag or with an error body too), with *status the HTTP
 * status (0: no reply, so the object may have been stored; -1: the request never left, nothing
 * was stored) and err a message that never contains a secret or the token. */
rt_error rt_s3_put(const rt_s3_target *t, const rt_s3_credentials *c, const char *key, const void *body,
                   size_t len, const char *content_type, double timeout_secs, long *status, char *err, size_t errlen);

/* "s3://BUCKET/PREFIX/KEY" of key under t into out[cap] (as the finish call's data_uris name the
 * objects). Returns true, or false (out empty) when it does not fit. Pure. */
bool rt_s3_object_uri(const rt_s3_target *t, const char *key, char *out, size_t cap);

/* True when r looks like an AWS region name (lower case, digits, '-'; 1 to 63 bytes). Pure. */
bool rt_s3_valid_region(const char *r);

/* Reads an S3 error reply body (buf[0..len), not NUL-terminated; XML such as
 * "<Error><Code>AccessDenied</Code><Message>Access Denied</Message>...</Error>"): the text of the
 * first <Code>...</Code> into code[ccap] and of the first <Message>...</Message> into msg[mcap]
 * (each truncated to fit, "" when its tags are missing; &amp; &lt; &gt; &quot; &apos; decoded,
 * control bytes turned into spaces). Returns true when either was found. Never reads past len.
 * Pure. */
bool rt_s3_parse_error(const char *buf, size_t len, char *code, size_t ccap, char *msg, size_t mcap);

/* What an S3 error code means where its name alone would not tell a person what to do
 * ("RequestTimeTooSkewed": the signature refused for clock skew), else NULL. Pure. */
const char *rt_s3_error_words(const char *code);

/* The SHA-256 of len bytes of data as 64 lower-case hex digits, through libcrypto.so.3 (dlopen'd
 * at first use). Returns RT_OK, or RT_ERR_UNSUPPORTED with the reason in err. */
rt_error rt_s3_sha256_hex(const void *data, size_t len, char hex[65], char *err, size_t errlen);

#endif
