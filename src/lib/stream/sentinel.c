/* sentinel.c - the Sentinel API's bodies and replies (stub: being built). */
#include <math.h>
#include "sentinel.h"

rt_error rt_sentinel_register_body(const rt_sentinel_run *run, rt_buf *out) { (void)run; (void)out; return RT_ERR_UNSUPPORTED; }
bool rt_sentinel_parse_register(const char *buf, size_t len, char *run_id, size_t run_id_cap, rt_s3_target *target,
                                rt_s3_credentials *creds, char *err, size_t errlen)
{
    (void)buf; (void)len; (void)run_id; (void)run_id_cap; (void)target; (void)creds; (void)err; (void)errlen;
    return false;
}
bool rt_sentinel_parse_refresh(const char *buf, size_t len, rt_s3_credentials *creds, char *err, size_t errlen)
{
    (void)buf; (void)len; (void)creds; (void)err; (void)errlen;
    return false;
}
rt_error rt_sentinel_finish_body(int exit_code, bool failed, double finished_unix, const char *const *uris, size_t n,
                                 const char *csv, size_t csv_len, rt_buf *out)
{
    (void)exit_code; (void)failed; (void)finished_unix; (void)uris; (void)n; (void)csv; (void)csv_len; (void)out;
    return RT_ERR_UNSUPPORTED;
}
double rt_iso8601_parse(const char *s) { (void)s; return NAN; }
