/* units.c - the units figures are shown in (units.h): gpu_tracker's memory and time units and
 * the binary units, and their public lookup (rt_memory_unit_bytes, rt_time_unit_secs). */
#include <string.h>

#include "core.h"
#include "units.h"

#define MEM(n, size, dec)                                                                                              \
    {                                                                                                                  \
        n, "_" n, size, 1048576.0 / (size), dec                                                                        \
    }
#define TIME(n, size, dec)                                                                                             \
    {                                                                                                                  \
        n, "_" n, size, 1.0 / (size), dec                                                                              \
    }

const rt_gt_unit rt_gt_memory_units[RT_GT_MEMORY_UNITS] = {
    MEM("bytes", 1.0, 0),     MEM("kilobytes", 1e3, 3),  MEM("megabytes", 1e6, 6),
    MEM("gigabytes", 1e9, 9), MEM("terabytes", 1e12, 9),
};

const rt_gt_unit rt_gt_time_units[RT_GT_TIME_UNITS] = {
    TIME("seconds", 1.0, 3),
    TIME("minutes", 60.0, 6),
    TIME("hours", 3600.0, 9),
    TIME("days", 86400.0, 9),
};

const char *const rt_binary_units[RT_BINARY_UNITS] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

const rt_gt_unit *rt_gt_unit_find(const rt_gt_unit *table, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

double rt_memory_unit_bytes(const char *name)
{
    const rt_gt_unit *u = rt_gt_unit_find(rt_gt_memory_units, RT_GT_MEMORY_UNITS, name);
    return u ? u->size : 0;
}

double rt_time_unit_secs(const char *name)
{
    const rt_gt_unit *u = rt_gt_unit_find(rt_gt_time_units, RT_GT_TIME_UNITS, name);
    return u ? u->size : 0;
}
