/* resource_tracker/schema.h - the sample's schema: every figure's name, unit and type
 * (rt_schema_field_*). Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_SCHEMA_H)
#define RESOURCE_TRACKER_SCHEMA_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sample's schema. EXPERIMENTAL: the figures' names, units and types stay, but these
 * calls may change in a minor version while the schema becomes one descriptor table per struct.
 * Every figure of the structs above (and of rt_host and rt_cloud),
 * listed once; the JSON line and the Prometheus families are made from the same list, and a
 * binding reads names, units and types from here. Field i (0 .. rt_schema_field_count() - 1)
 * is the member rt_schema_field_name(i) of struct rt_<rt_schema_field_struct(i)> ("process",
 * "process_part", "net_iface", ...); the member's name is its key in the JSON line (a few,
 * the interval's byte counts and the summed filesystem space, are not in it). Its unit is one
 * of "MiB", "bytes", "bytes/s", "s", "cores", "%", "usec", "count", "pid", "Celsius", "W",
 * "MHz", "Mbit/s", "GB" (10^9 bytes), "J", or "" (strings, flags); since is the version that
 * added it. Past the last: NULL, and -1 for the type. The order is fixed within a version;
 * later versions add fields. */
typedef enum rt_field_type {
    RT_FIELD_STRING = 0, /* const char *, NULL: null */
    RT_FIELD_U64 = 1,    /* uint64_t, RT_NULL_U64: null */
    RT_FIELD_I64 = 2,    /* int64_t, RT_NULL_I64: null */
    RT_FIELD_DOUBLE = 3, /* double, NaN: null */
    RT_FIELD_FLAG = 4    /* int, 0 or 1 */
} rt_field_type;

RT_API size_t rt_schema_field_count(void);
RT_API const char *rt_schema_field_struct(size_t i);
RT_API const char *rt_schema_field_name(size_t i);
RT_API int rt_schema_field_type(size_t i);
RT_API const char *rt_schema_field_unit(size_t i);
RT_API const char *rt_schema_field_since(size_t i);
RT_API const char *rt_schema_field_help(size_t i);

#ifdef __cplusplus
}
#endif
#endif
