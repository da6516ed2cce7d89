/* perf_power.h - the perf "power" PMU (bus/event_source/devices/power): its energy events'
 * files parsed, and the events opened as system-wide counters, one per package, for when
 * powercap's energy_uj is root-only. Used by powercap.c only. Not public. */
#ifndef RT_SOURCE_PERF_POWER_H
#define RT_SOURCE_PERF_POWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One energy event opened on one CPU of a package. */
typedef struct rt_perf_power_ctr {
    const char *kind; /* static: "package", "dram", "core", "uncore", "psys" */
    int package;      /* the CPU's physical package id */
    int fd;           /* the perf event */
    double scale;     /* joules per count (the event's .scale file) */
} rt_perf_power_ctr;

/* Parses an event file's text ("event=0x02", possibly with more terms after commas) into the
 * config value. Returns false when there is no event= term or its number is bad. Pure. */
bool rt_perf_event_config(const char *text, size_t len, uint64_t *config);

/* Parses a cpumask/cpulist file ("0", "0,28", "0-1,4") into cpus[0..cap). Returns the number
 * of CPUs listed (which may exceed cap: only cap stored), or -1 when malformed. Pure. */
int rt_perf_cpulist(const char *text, size_t len, int *cpus, size_t cap);

/* Finds the power PMU under the sys root (sys_fd) and opens each of its energy events
 * (energy-pkg, energy-ram, energy-cores, energy-gpu, energy-psys; psys once) on the first CPU
 * of each package in its cpumask, into out[0..cap). Returns the number opened. *err: 0 when
 * every event that exists opened; -ENOENT when the PMU or its events are absent; else the
 * -errno of the first perf_event_open that failed (-EACCES/-EPERM: not permitted). */
size_t rt_perf_power_open(int sys_fd, rt_perf_power_ctr *out, size_t cap, int *err);

/* Reads an opened event's count (a 64-bit counter the kernel keeps from its open). Returns
 * false when the read failed. Allocates nothing. */
bool rt_perf_power_read(int fd, uint64_t *count);

#endif
