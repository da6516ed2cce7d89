/* units.h - the units the library and the CLI show figures in, listed once: gpu_tracker's
 * memory and time units (their names, sizes and the JSON summary's key suffixes and decimals),
 * and the binary units of readable byte counts (B, KiB, ... PiB). Public through
 * rt_memory_unit_bytes and rt_time_unit_secs. Not public. */
#ifndef RT_CORE_UNITS_H
#define RT_CORE_UNITS_H

#include <stddef.h>

/* A gpu_tracker unit. Its memory units are decimal: gpu_tracker's RAM coefficients are
 * kilobytes 1e-3, megabytes 1e-6, gigabytes 1e-9, terabytes 1e-12 per byte (tracker.py,
 * _ram_unit2coefficient), so 1 MiB = 1048576 bytes = 1.048576 megabytes. */
typedef struct rt_gt_unit {
    const char *name;   /* gpu_tracker's name: "bytes" .. "terabytes", "seconds" .. "days" */
    const char *suffix; /* the JSON summary's key suffix: "_" and the name */
    double size;        /* bytes (memory) or seconds (time) in one unit */
    double factor;      /* from MiB (memory) or seconds (time) to the unit */
    int decimals;       /* decimals the JSON summary shows */
} rt_gt_unit;

enum { RT_GT_MEMORY_UNITS = 5, RT_GT_TIME_UNITS = 4 };
/* bytes, kilobytes, megabytes, gigabytes, terabytes; seconds, minutes, hours, days. */
extern const rt_gt_unit rt_gt_memory_units[RT_GT_MEMORY_UNITS], rt_gt_time_units[RT_GT_TIME_UNITS];
/* gpu_tracker's defaults: gigabytes and hours. */
#define RT_GT_DEFAULT_MEMORY (&rt_gt_memory_units[3])
#define RT_GT_DEFAULT_TIME (&rt_gt_time_units[2])

/* The unit called name in table (n entries), or NULL (name NULL or not listed). */
const rt_gt_unit *rt_gt_unit_find(const rt_gt_unit *table, size_t n, const char *name);

/* The binary units of a byte count shown readably, each 1024 of the one before. */
enum { RT_BINARY_UNITS = 6 };
extern const char *const rt_binary_units[RT_BINARY_UNITS]; /* "B", "KiB", "MiB", "GiB", "TiB", "PiB" */

#endif
