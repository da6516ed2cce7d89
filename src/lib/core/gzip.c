/* gzip.c - gzip through zlib loaded at first use (stub: being built). */
#include <stdio.h>

#include "gzip.h"

rt_error rt_gzip_available(char *err, size_t errlen) { snprintf(err, errlen, "not built yet"); return RT_ERR_UNSUPPORTED; }
rt_error rt_gzip_new(size_t max_bytes, rt_gzip **out) { (void)max_bytes; *out = NULL; return RT_ERR_UNSUPPORTED; }
rt_error rt_gzip_write(rt_gzip *z, const void *data, size_t len) { (void)z; (void)data; (void)len; return RT_ERR_UNSUPPORTED; }
rt_error rt_gzip_finish(rt_gzip *z, const void **data, size_t *len) { (void)z; *data = NULL; *len = 0; return RT_ERR_UNSUPPORTED; }
size_t rt_gzip_in_bytes(const rt_gzip *z) { (void)z; return 0; }
size_t rt_gzip_out_bytes(const rt_gzip *z) { (void)z; return 0; }
void rt_gzip_free(rt_gzip *z) { (void)z; }
rt_error rt_gunzip(const void *data, size_t len, size_t max_out, rt_buf *out) { (void)data; (void)len; (void)max_out; (void)out; return RT_ERR_UNSUPPORTED; }
