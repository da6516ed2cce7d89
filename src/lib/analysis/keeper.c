/* keeper.c - the cheapest server from the Spare Cores Keeper API (stub: being built). */
#include "../core/core.h"

rt_error rt_keeper_cheapest(const rt_keeper_options *opts, const rt_recommendation *rec, rt_server *out)
{
    (void)opts; (void)rec; (void)out;
    return RT_ERR_UNSUPPORTED;
}
rt_error rt_keeper_price(const rt_keeper_options *opts, const char *vendor_id, const char *api_reference, const char *region, double *usd_per_hour)
{
    (void)opts; (void)vendor_id; (void)api_reference; (void)region; (void)usd_per_hour;
    return RT_ERR_UNSUPPORTED;
}
