/* resource_tracker/energy.h - energy and carbon: measured, sampled or estimated, and the job's
 * share (rt_energy, rt_grid). Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_ENERGY_H)
#define RESOURCE_TRACKER_ENERGY_H

#include "embed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Energy and carbon (experimental: may change in a minor version)
 *
 * Energy is read where the hardware counts it and every figure names how it was obtained:
 *   "measured"   a hardware energy counter: powercap RAPL (intel-rapl, amd-rapl), the perf
 *                power PMU, hwmon energy*_input (amdgpu, i915, xe), NVML's total energy;
 *   "sampled"    a power reading times the time (hwmon power*_average or power1_input,
 *                NVML's power draw on a GPU without the counter), the mean of the interval's
 *                two readings;
 *   "estimated"  a model, where no counter can be read (a virtual machine, a root-only
 *                energy_uj): the CPU's thermal design power from a table of models, or a
 *                per-core figure, scaled by the CPU time used (docs/energy.md states the model
 *                and its expected error).
 * A figure with no method is absent (NaN, NULL), never a number without its method.
 *
 * The job's share (docs/energy.md): in each interval a CPU domain's energy (package, its core
 * and uncore parts, DRAM, the estimate) is split by the tree's share of the machine's busy CPU
 * time; a GPU's by the tree's share of that GPU (all of it when only the tree's processes use
 * it; else its share of the per-process utilization, else of the VRAM used). The machine's
 * idle floor, the least power it drew over an interval of the run, is stated apart. */

typedef struct rt_energy_domain {
    const char *name;   /* unique in the sample and stable over the run: "package-0",
                         * "core-0", "uncore-0", "dram-0" (per package, its id), "psys",
                         * "platform-0" (hwmon power meters), "gpu-0" (the index in
                         * rt_sample.gpu), "cpu" (the estimate) */
    const char *kind;   /* "package", "core", "uncore", "dram", "psys", "platform", "gpu", "cpu" */
    const char *source; /* "intel-rapl", "amd-rapl", "perf", "hwmon", "nvml", "model" */
    const char *method; /* "measured", "sampled" or "estimated" (never NULL) */
    const char *device; /* a gpu domain's GPU: its uuid, else host_id; NULL for others */
    int in_total;       /* 1: counted in rt_energy.energy_joules (see there) */
    double energy_joules;       /* in the interval; NaN: not read this time (the first
                                 * reading, a failed read) */
    double energy_joules_total; /* since tracking began (a failed read adds nothing) */
    double power_watts;         /* mean power over the interval; NaN with energy_joules */
    double process_share;       /* the tree's share of the interval's energy, 0..1; NaN
                                 * without a tree, or when the share cannot be told */
    double process_energy_joules, process_energy_joules_total; /* the tree's part: in the
                                 * interval, and since tracking began (NaN until a share is known) */
} rt_energy_domain;

typedef struct rt_energy {
    const rt_energy_domain *const *domain;
    size_t domain_count;
    /* the machine: a platform meter's figure (psys, an ACPI power meter) where there is one,
     * else the sum of the packages, DRAM and GPUs (each counted once: a package's core and
     * uncore parts are inside it); the domains summed have in_total 1 */
    double energy_joules, energy_joules_total, power_watts;
    const char *method;  /* the least exact method of the domains summed (measured, then
                          * sampled, then estimated); NULL: no figure */
    /* the tracked tree's share: the process figures of the packages, DRAM, GPUs and the estimate
     * summed (a core or uncore part is inside its package; NaN without a tree) */
    double process_energy_joules, process_energy_joules_total, process_power_watts;
    const char *process_method;
    double idle_power_watts; /* the machine's floor: the least power_watts of a whole interval so
                              * far (every summed domain read over it), the estimate's part taken
                              * at the model's idle power; NaN before the first */
    const char *model;   /* the estimate's model in words (e.g. "AMD EPYC: not in the TDP
                          * table; 4.0 W per busy logical core"); NULL when nothing is estimated */
    const char *missing; /* what could not be read and how to grant it (one sentence: the
                          * files, the udev rule or chmod line); NULL when nothing is missing */
} rt_energy;

/* A grid's carbon intensity: grams of CO2-equivalent per kWh of electricity used there. The
 * table shipped with the library (data/grid-intensity.csv: its source and year in its first
 * lines) holds countries by ISO 3166-1 alpha-2 code ("FR"), some sub-national zones ("US-CA",
 * as the table names them) and the cloud regions of the vendors rt_cloud names, each mapped to
 * the zone it draws from ("aws:eu-west-3"). A value the user gives has source "given". */
typedef struct rt_grid {
    size_t struct_size;  /* sizeof(rt_grid) as the caller compiled it */
    double g_per_kwh;    /* NaN or <= 0: unknown */
    const char *zone;    /* the zone or region asked for, as the table spells it; NULL */
    const char *name;    /* the zone's name in words ("France"); NULL */
    const char *source;  /* "Ember yearly electricity data, 2023" (the table's), "given" */
    int year;            /* the table's year for the zone; 0: not known */
} rt_grid;

#define RT_GRID_INIT {.struct_size = sizeof(rt_grid)}

/* Looks zone up in the shipped table: a country code, a zone, or "vendor:region" (rt_cloud's
 * vendor_id and region_id), case-insensitive. Returns RT_OK with out filled (static strings),
 * RT_ERR_NOT_FOUND (out's g_per_kwh NaN, the rest NULL; last error names the zone),
 * RT_ERR_INVALID (NULL arguments, struct_size too small). */
RT_API rt_error rt_grid_lookup(const char *zone, rt_grid *out);

/* The carbon of a summary: every later rt_stats_summary gives co2e_grams from the energy and
 * grid->g_per_kwh (copied; NULL or an unknown intensity: carbon unknown). */
RT_API rt_error rt_stats_set_grid(rt_stats *st, const rt_grid *grid);

/* The same for a tracker's statistics (live or loaded): every later rt_tracker_summary
 * and rt_tracker_report gives the carbon at grid->g_per_kwh (copied, with its strings; NULL or
 * an unknown intensity: carbon unknown). Thread-safe against the tracker's thread. RT_OK,
 * RT_ERR_INVALID (t NULL, grid's struct_size too small). */
RT_API rt_error rt_tracker_set_grid(rt_tracker *t, const rt_grid *grid);

/* Grams of CO2e of joules at g_per_kwh (joules / 3.6e6 * g_per_kwh); NaN when either is
 * unknown (NaN, or an intensity <= 0). */
RT_API double rt_co2e_grams(double joules, double g_per_kwh);

/* The energy a run would take on another server: the estimate's CPU power model
 * (docs/energy.md) for the server's CPU (rt_server.cpu_family and cpu_model, Keeper's) found in
 * the TDP table, over the run's duration on the server's vCPUs with the run's CPU time:
 *   watts = vcpus x idle_watts + (cpu_secs / duration_secs) x (busy_watts - idle_watts)
 * (busy cores held to 0..vcpus), energy = watts x duration_secs; method "estimated". */
typedef struct rt_server_energy {
    size_t struct_size;      /* caller sets sizeof(rt_server_energy) */
    double energy_joules;    /* NaN: not known */
    const char *method;      /* "estimated" (static); NULL when not known */
    double tdp_watts;        /* per package, from the table */
    int threads_per_package;
    double busy_watts, idle_watts; /* per logical core in the model */
    char cpu[160];           /* the CPU as named: "Intel Xeon 8375C" */
    char words[256];         /* "estimated: Intel Xeon 8375C, 265 W TDP / 64 threads" */
} rt_server_energy;

#define RT_SERVER_ENERGY_INIT {.struct_size = sizeof(rt_server_energy)}

/* Fills out with the energy of a run of cpu_secs CPU seconds over duration_secs on sv.
 * Returns RT_OK; RT_ERR_NOT_FOUND (energy, TDP and watts NaN, method NULL, the rest 0 or "")
 * when the CPU is not in the table, or the CPU time or duration is not known (NaN, negative, a
 * duration of 0) or the server's vCPUs are; RT_ERR_INVALID for NULL arguments or a struct_size
 * too small. */
RT_API rt_error rt_server_energy_estimate(const rt_server *sv, double cpu_secs, double duration_secs,
                                          rt_server_energy *out);

#ifdef __cplusplus
}
#endif
#endif
