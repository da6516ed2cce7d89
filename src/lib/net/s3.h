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
 * each key segment percent-encoded, into out[cap]. Returns true or false (does not fit). Pure. */
bool rt_s3_object_url(const rt_s3_target *t, const char *key, char *out, size_t cap);

/* Learns the bucket's region when t->region is empty: asks the bucket (HEAD, the
 * x-amz-bucket-region reply header), else "eu-central-1". Never fails; at most timeout_secs. */
void rt_s3_find_region(rt_s3_target *t, const rt_s3_credentials *c, double timeout_secs);

/* PUTs body as key with Content-Type, signed with SigV4 (X-Amz-Security-Token and
 * x-amz-content-sha256 sent). Returns RT_OK on a 2xx; RT_ERR_IO otherwise, with *status the HTTP
 * status (0: no reply) and err a message that never contains a secret or the token. */
rt_error rt_s3_put(const rt_s3_target *t, const rt_s3_credentials *c, const char *key, const void *body,
                   size_t len, const char *content_type, double timeout_secs, long *status, char *err, size_t errlen);

#endif
