/* energy.h - the machine's energy counters: powercap RAPL zones (intel-rapl, and amd-rapl since
 * Linux 5.8) with their wrap-around undone and each package counted once, the perf "power" PMU
 * where powercap's energy_uj is root-only, and hwmon platform meters (acpi_power_meter and
 * the like). GPUs are not here: their energy comes with the GPU set (gpu.h). Not public. */
#ifndef RT_SOURCE_ENERGY_H
#define RT_SOURCE_ENERGY_H

#include <stdbool.h>
#include <stddef.h>

#include "sources.h"

/* One counter or meter, found at open. */
typedef struct rt_energy_counter {
    char name[32];      /* "package-0", "core-0", "uncore-0", "dram-0" (the package's id),
                         * "psys", "platform-0" (the hwmon meter's order) */
    const char *kind;   /* static: "package", "core", "uncore", "dram", "psys", "platform" */
    const char *source; /* static: "intel-rapl", "amd-rapl", "perf", "hwmon" */
    const char *method; /* static: "measured" (an energy counter) or "sampled" (a power
                         * meter: its watts, which the caller multiplies by time) */
    int package;        /* the package (socket) id; -1 for psys and platform meters */
    bool in_total;      /* counted in the machine's total when no platform meter exists:
                         * packages and DRAM (core and uncore are inside their package) */
} rt_energy_counter;

typedef struct rt_energy_src rt_energy_src;

/* Finds the counters under the sys root (class/powercap, class/hwmon; bus/event_source/
 * devices/power for perf) and takes the first reading. Never fails for want of counters;
 * NULL only when out of memory. roots and log are borrowed and must outlive the handle. */
rt_energy_src *rt_energy_src_open(const rt_roots *roots, const rt_logger *log);

/* The counters found (stable for the handle's life; the i-th is rt_energy_src_counter(i)). */
size_t rt_energy_src_count(const rt_energy_src *e);
const rt_energy_counter *rt_energy_src_counter(const rt_energy_src *e, size_t i);

/* Reads every counter now. For a "measured" counter i, joules[i] is its energy since open in
 * joules (wrap-around at max_energy_range_uj undone: one wrap per reading assumed, which
 * holds for any interval under the range's duration, ~60 s at 4 kW), NaN when this read
 * failed (the next good read still counts the energy in between); watts[i] is NaN. For a
 * "sampled" meter, watts[i] is its power now and joules[i] NaN. Allocates nothing. */
void rt_energy_src_read(rt_energy_src *e, double *joules, double *watts);

/* What could not be read and how to grant it, one sentence (e.g. "RAPL energy is readable by
 * root only (since CVE-2020-8694): chmod o+r /sys/class/powercap/intel-rapl:*\/energy_uj, or a
 * udev rule ..."); NULL when nothing that exists was unreadable. Owned by e. */
const char *rt_energy_src_missing(const rt_energy_src *e);

/* Frees the handle (closes what it keeps open). NULL is ignored. */
void rt_energy_src_close(rt_energy_src *e);

#endif
