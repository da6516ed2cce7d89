/* reader.c - recorded runs read back (stub: being built). */
#include "../core/core.h"

rt_error rt_reader_open(const char *path, const rt_reader_options *opts, rt_reader **out)
{
    (void)path; (void)opts; *out = NULL;
    return RT_ERR_UNSUPPORTED;
}
rt_error rt_reader_open_buffer(const char *name, const char *buf, size_t len, const rt_reader_options *opts, rt_reader **out)
{
    (void)name; (void)buf; (void)len; (void)opts; *out = NULL;
    return RT_ERR_UNSUPPORTED;
}
rt_error rt_reader_next(rt_reader *r, const rt_record **out) { (void)r; *out = NULL; return RT_ERR_IO; }
const char *rt_reader_format(const rt_reader *r) { (void)r; return "none"; }
uint64_t rt_reader_records(const rt_reader *r) { (void)r; return 0; }
uint64_t rt_reader_skipped(const rt_reader *r) { (void)r; return 0; }
void rt_reader_close(rt_reader *r) { (void)r; }
