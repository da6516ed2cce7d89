/* server_energy.c - the energy a run would take on another server (rt_server_energy_estimate):
 * the CPU power model of the energy estimate (source/cpu_power.h: the TDP table, busy and idle
 * watts per logical core) for the CPU Spare Cores Keeper names for the server, over the run's
 * duration on the server's vCPUs with the run's CPU time. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/lasterr.h"
#include "../source/cpu_power.h"

rt_error rt_server_energy_estimate(const rt_server *sv, double cpu_secs, double duration_secs,
                                   rt_server_energy *out)
{
    rt_err_clear();
    if (!sv || !out || out->struct_size < sizeof *out || sv->struct_size < offsetof(rt_server, cpu_model) +
                                                                                 sizeof sv->cpu_model) {
        rt_err_set("rt_server_energy_estimate: %s", !sv || !out ? "a NULL argument" : "struct_size too small");
        return RT_ERR_INVALID;
    }
    size_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    out->energy_joules = out->tdp_watts = out->busy_watts = out->idle_watts = NAN;
    rt_cpu_power m;
    if (rt_cpu_power_of_part(sv->cpu_family, sv->cpu_model, &m) < 0) {
        rt_err_set("the server's CPU (%s %s) is not in the TDP table", sv->cpu_family, sv->cpu_model);
        return RT_ERR_NOT_FOUND;
    }
    if (!(cpu_secs >= 0) || !isfinite(cpu_secs) || !(duration_secs > 0) || !isfinite(duration_secs) ||
        !(sv->vcpus > 0) || sv->vcpus == RT_NULL_I64) {
        rt_err_set("the run's CPU time, its duration or the server's vCPUs are not known");
        return RT_ERR_NOT_FOUND;
    }
    double watts = rt_cpu_power_watts(&m, cpu_secs / duration_secs, (double)sv->vcpus);
    out->energy_joules = watts * duration_secs;
    out->method = "estimated";
    out->tdp_watts = m.tdp_watts;
    out->threads_per_package = m.threads_per_package;
    out->busy_watts = m.busy_watts;
    out->idle_watts = m.idle_watts;
    snprintf(out->cpu, sizeof out->cpu, "%.40s%s%.110s", sv->cpu_manufacturer, sv->cpu_manufacturer[0] ? " " : "",
             m.model);
    snprintf(out->words, sizeof out->words, "estimated: %s, %.4g W TDP / %d threads", out->cpu, m.tdp_watts,
             m.threads_per_package);
    return RT_OK;
}
