/* s3.c - S3 PUT with SigV4 (stub: being built). */
#include <stdio.h>

#include "s3.h"

bool rt_s3_parse_uri(const char *uri, rt_s3_target *t) { (void)uri; (void)t; return false; }
bool rt_s3_object_url(const rt_s3_target *t, const char *key, char *out, size_t cap) { (void)t; (void)key; (void)out; (void)cap; return false; }
void rt_s3_find_region(rt_s3_target *t, const rt_s3_credentials *c, double timeout_secs) { (void)t; (void)c; (void)timeout_secs; }
rt_error rt_s3_put(const rt_s3_target *t, const rt_s3_credentials *c, const char *key, const void *body, size_t len,
                   const char *content_type, double timeout_secs, long *status, char *err, size_t errlen)
{
    (void)t; (void)c; (void)key; (void)body; (void)len; (void)content_type; (void)timeout_secs;
    *status = 0;
    snprintf(err, errlen, "not built yet");
    return RT_ERR_UNSUPPORTED;
}
