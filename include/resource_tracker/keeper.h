/* resource_tracker/keeper.h - the cheapest server: the Spare Cores Keeper API (rt_keeper_*,
 * rt_server).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_KEEPER_H
#define RESOURCE_TRACKER_KEEPER_H

#include "recommend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the cheapest server: Spare Cores Keeper API (docs/contracts.md §6) --------------- */

typedef struct rt_keeper_options {
    size_t struct_size;  /* sizeof(rt_keeper_options) as the caller compiled it */
    const char *url;     /* NULL: https://keeper.sparecores.net (TRACKER_KEEPER_URL); "off":
                          * no lookup at all (RT_ERR_DISABLED, no log line) */
    double timeout_secs; /* the whole lookup; 0: 5 s */
    rt_log_fn log;
    void *log_user;
    /* NULL, or room for offline_why_cap bytes, which the call sets to "" and,
     * when the lookup failed for want of any reply from Keeper (no name, no connection, nothing
     * in time: the machine is offline or Keeper is down), to the reason in curl's words,
     * without the URL ("Could not resolve host: keeper.sparecores.net"). A Keeper that replied
     * wrongly (an HTTP error, not a list) leaves it "": only the log line says so. */
    char *offline_why;
    size_t offline_why_cap;
} rt_keeper_options;

#define RT_KEEPER_OPTIONS_INIT {.struct_size = sizeof(rt_keeper_options)}

typedef struct rt_server {
    size_t struct_size;      /* caller sets sizeof(rt_server) */
    char vendor_id[64];
    char api_reference[128]; /* instance type */
    char display_name[128];
    int64_t vcpus;
    double memory_mib;
    int64_t gpu_count;
    double price_usd_per_hour; /* NaN when unknown */
    /* Keeper's facts of the server's primary CPU, "" when it has none: the
     * manufacturer ("Intel"), the product line ("Xeon") and the model number ("8375C"); the
     * energy of a run there (rt_server_energy_estimate) comes from them */
    char cpu_manufacturer[64];
    char cpu_family[64];
    char cpu_model[128];
} rt_server;

#define RT_SERVER_INIT {.struct_size = sizeof(rt_server)}

/* The cheapest on-demand server that fits rec. Returns RT_OK and fills *out, RT_ERR_NOT_FOUND
 * when none fits, RT_ERR_IO (with a log line) when the API is down, slow past the timeout or
 * replies nonsense (not reached at all: opts->offline_why says why), RT_ERR_UNSUPPORTED
 * when no HTTPS client can be loaded, RT_ERR_DISABLED (nothing asked, nothing logged) when
 * opts->url is "off". */
RT_API rt_error rt_keeper_cheapest(const rt_keeper_options *opts, const rt_recommendation *rec, rt_server *out);

/* The on-demand Linux price of one instance type (the lowest over regions, or the region's
 * when region is not NULL), in USD per hour. Errors as rt_keeper_cheapest. */
RT_API rt_error rt_keeper_price(const rt_keeper_options *opts, const char *vendor_id, const char *api_reference,
                                const char *region, double *usd_per_hour);

#ifdef __cplusplus
}
#endif

#endif
