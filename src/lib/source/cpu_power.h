/* cpu_power.h - the CPU power model of the energy estimate, used where no energy counter can be
 * read (a virtual machine, a root-only energy_uj): the CPU's model name from /proc/cpuinfo
 * looked up in the shipped table of thermal design powers (data/cpu-tdp.csv), a TDP the user
 * gives, or else a per-core figure; the model is stated in words with its expected error.
 * Not public. */
#ifndef RT_SOURCE_CPU_POWER_H
#define RT_SOURCE_CPU_POWER_H

#include "sources.h"

typedef struct rt_cpu_power {
    char model[128];          /* /proc/cpuinfo's first "model name", "" when none */
    const char *rule;         /* static: "table" (the model's TDP from the table), "given" (the
                               * user's TDP), "per-core" (neither) */
    double tdp_watts;         /* per package (the table's or the user's); NaN under "per-core" */
    int threads_per_package;  /* logical cores per package the TDP is shared by (the table's,
                               * else cpuinfo's "siblings"); 0 under "per-core" */
    double busy_watts;        /* what one fully busy logical core draws in the model */
    double idle_watts;        /* what one idle logical core draws in the model */
    double error_low_pct, error_high_pct; /* the expected error of the estimate, e.g. -50, +100 */
    char words[200];          /* the model in words, for rt_energy.model (e.g. "AMD EPYC: not in
                               * the TDP table; 4.0 W per busy logical core, 1.0 W idle;
                               * expect -50% to +100%") */
} rt_cpu_power;

/* Reads <proc>/cpuinfo and fills out: tdp_given > 0 is the user's TDP per package (rule
 * "given"; the per-core rule when nothing tells the threads per package: no table row, no
 * "siblings", no "processor" lines); else the table's TDP for the model name (rule "table");
 * else the per-core rule.
 * Returns 0 (out always filled, also without a cpuinfo). Allocates nothing it keeps. */
int rt_cpu_power_model(const rt_roots *r, double tdp_given, rt_cpu_power *out);

/* The model of a CPU named by a catalog rather than /proc/cpuinfo (Spare Cores Keeper's
 * cpu_family and cpu_model of a server: "Xeon", "8375C"; either may be NULL or ""): the table's
 * row for model itself ("Xeon Platinum 8375C"), else for "family model", else the one row whose
 * pattern's last word is model (a model number with a digit: "8375C" -> "Platinum 8375C").
 * Returns 0 with out filled as under rule "table" (out->model: "family model"), -1 when the
 * part is not in the table (out zeroed). Reads no file; allocates nothing. */
int rt_cpu_power_of_part(const char *family, const char *model, rt_cpu_power *out);

/* The model's CPU power in watts for busy_cores busy logical cores of cores online:
 * cores * idle_watts + busy_cores * (busy_watts - idle_watts), busy_cores held to 0..cores;
 * NaN when either is NaN. */
double rt_cpu_power_watts(const rt_cpu_power *m, double busy_cores, double cores);

#endif
