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

/* ---- reading a gzip file as a stream ---------------------------------------------------- */

/* The plain bytes of the gzip members (one or more, back to back) read from a descriptor, a
 * piece at a time: what it holds does not grow with the data (zlib's state and window, about
 * 45 KiB, and a 64 KiB input buffer), so a gzip bomb costs time, never memory. */
typedef struct rt_gunzip_stream rt_gunzip_stream;

/* A stream over fd (not closed by it), whose first bytes head[0..head_len) the caller has
 * already read (copied; head may be NULL when head_len is 0). RT_OK and *out,
 * RT_ERR_UNSUPPORTED (no zlib), RT_ERR_NOMEM. */
rt_error rt_gunzip_stream_new(int fd, const void *head, size_t head_len, rt_gunzip_stream **out);

/* Up to cap plain bytes into buf. Returns how many (> 0), 0 at the end of the last member where
 * the input ends, -1 when reading fd failed (errno kept), -2 when the input is no gzip stream
 * or is corrupt, or ends inside a member (cut short). After 0, -1 or -2 it returns the same. */
ssize_t rt_gunzip_stream_read(rt_gunzip_stream *z, void *buf, size_t cap);

/* Compressed bytes taken so far (head included), and plain bytes handed out so far. */
uint64_t rt_gunzip_stream_in(const rt_gunzip_stream *z);
uint64_t rt_gunzip_stream_out(const rt_gunzip_stream *z);

void rt_gunzip_stream_free(rt_gunzip_stream *z);

#endif
