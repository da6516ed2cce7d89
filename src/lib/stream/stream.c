/* stream.c - streaming a run to the Sentinel API and S3 (stub: being built). */
#include "../core/core.h"

rt_error rt_stream_start(const rt_stream_options *opts, rt_stream **out) { (void)opts; *out = NULL; return RT_ERR_UNSUPPORTED; }
rt_error rt_stream_add(rt_stream *st, const rt_sample *sample) { (void)st; (void)sample; return RT_ERR_UNSUPPORTED; }
rt_error rt_stream_finish(rt_stream *st, int exit_code, int failed) { (void)st; (void)exit_code; (void)failed; return RT_ERR_UNSUPPORTED; }
void rt_stream_free(rt_stream *st) { (void)st; }
