/* gzip.h - gzip streams through the system's zlib, loaded with dlopen at first use (a run
 * without streaming never maps it). One gzip member per batch, built incrementally. Internal. */
#ifndef RT_GZIP_H
#define RT_GZIP_H

#include "core.h"

typedef struct rt_gzip rt_gzip;

/* Loads zlib once per process: RT_OK, or RT_ERR_UNSUPPORTED with the dlerror text in err. */
rt_error rt_gzip_available(char *err, size_t errlen);

/* A new gzip member writing into an internal growing buffer of at most max_bytes compressed
 * bytes. Returns RT_OK and *out, RT_ERR_UNSUPPORTED (no zlib), RT_ERR_NOMEM. */
rt_error rt_gzip_new(size_t max_bytes, rt_gzip **out);
/* As rt_gzip_new at compression level (1 fastest .. 9 smallest; -1 or out of range: zlib's
 * default, 6). */
rt_error rt_gzip_new_level(size_t max_bytes, int level, rt_gzip **out);

/* Compresses len bytes of data into the member. RT_OK, or RT_ERR_NOMEM when the compressed
 * output would pass max_bytes (nothing of data is then taken). */
rt_error rt_gzip_write(rt_gzip *z, const void *data, size_t len);

/* Ends the member (trailer written) and hands out the bytes: *data stays owned by z until
 * rt_gzip_free. RT_OK or RT_ERR_NOMEM. No write after finish. */
rt_error rt_gzip_finish(rt_gzip *z, const void **data, size_t *len);

/* Uncompressed bytes taken so far, and compressed bytes produced so far. */
size_t rt_gzip_in_bytes(const rt_gzip *z);
size_t rt_gzip_out_bytes(const rt_gzip *z);

void rt_gzip_free(rt_gzip *z);

/* Gunzips a whole buffer (one or more members) into *out, at most max_out bytes (free with
 * rt_buf_free): the uploader's inline CSV at the end of a run, and the tests. */
rt_error rt_gunzip(const void *data, size_t len, size_t max_out, rt_buf *out);

#endif
