/* rereads.c - what a run's re-reads say (see rereads.h): from the kernel's refaults of the
 * job's group, its storage reads, its limit and its memory need, the memory that keeps the files
 * it read back cached. */
#include <math.h>

#include "rereads.h"

bool rt_rereads_of(const rt_summary *s, double need_mib, rt_rereads *out)
{
    double r = s->memory_refault_mib, lim = s->memory_limit_mib;
    if (isnan(lim) || s->memory_high_mib < lim)
        lim = s->memory_high_mib;
    double read = s->process_read_bytes / 1048576.0;
    if (!(read >= r)) /* unknown, or other reads than those the refaults came with */
        read = NAN;
    double files = isnan(read) ? r : fmin(r, read - r);
    *out = (rt_rereads){
        .reread_mib = r,
        .read_mib = read,
        .share_pct = read > 0 ? 100.0 * r / read : NAN,
        .limit_mib = lim,
        .files_mib = files,
        .need_mib = need_mib,
        .keep_mib = need_mib + files,
    };
    bool note = s->has_process && lim > 0 && r >= RT_REREAD_MIN_MIB && !(out->share_pct < RT_REREAD_MIN_PCT) &&
                out->keep_mib > lim;
    out->large = note && r >= lim && out->share_pct >= RT_REREAD_LARGE_PCT;
    return note;
}
