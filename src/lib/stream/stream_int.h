/* stream_int.h - the uploader's seam for tests: the three network calls stream.c makes (POST
 * to the Sentinel API, PUT to S3, the bucket's region), so that a unit test can fake them and
 * check batching, sequence numbers, retries, spilling and the finish body. Internal. */
#ifndef RT_STREAM_INT_H
#define RT_STREAM_INT_H

#include "../core/core.h"
#include "../net/s3.h"

typedef struct rt_stream_net {
    /* POSTs body (len bytes, JSON; len 0: an empty body) to url with the bearer token. Returns
     * RT_OK with any HTTP status in *status and the reply in *reply (NUL-terminated; freed by
     * the caller with rt_buf_free whatever the result), or an error with err set (never the
     * token). */
    rt_error (*post)(void *user, const char *url, const char *token, const char *body, size_t len, double timeout,
                     long *status, rt_buf *reply, char *err, size_t errlen);
    /* As rt_s3_put with Content-Type application/gzip. */
    rt_error (*put)(void *user, const rt_s3_target *t, const rt_s3_credentials *c, const char *key, const void *body,
                    size_t len, double timeout, long *status, char *err, size_t errlen);
    /* As rt_s3_find_region. */
    void (*find_region)(void *user, rt_s3_target *t, const rt_s3_credentials *c, double timeout);
    void *user;
} rt_stream_net;

/* rt_stream_start with the network calls of net (copied) instead of libcurl's; libcurl is then
 * not loaded (zlib still is). Same results as rt_stream_start. */
rt_error rt_stream_start_net(const rt_stream_options *opts, const rt_stream_net *net, rt_stream **out);

/* Counters for tests: rows added, rows lost (not even spillable), batches closed, batches
 * uploaded, spill files written. Any pointer may be NULL. Thread-safe. */
void rt_stream_counts(rt_stream *st, uint64_t *rows, uint64_t *lost, unsigned *closed, unsigned *uploaded,
                      unsigned *spilled);

#endif
