/* report_md.c - a run as GitHub-flavoured Markdown (the CI job summary). A placeholder until
 * it lands. */
#include "../core/core.h"

rt_error rt_report_write_markdown_cb(const rt_report *r, const rt_report_info *info, const rt_markdown_options *opts,
                                     rt_write_fn write, void *user)
{
    (void)r, (void)info, (void)opts, (void)write, (void)user;
    return RT_ERR_UNSUPPORTED;
}
