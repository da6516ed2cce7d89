/* grid.c - the run's grid carbon intensity, chosen in one place: the intensity the user gives
 * (--grid-intensity, source "given"), else the zone the user names (--grid-zone), else the
 * cloud region discovery found ("vendor:region" in the shipped table), else unknown. Never a
 * world average: an unknown grid leaves the carbon unknown. */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "settings.h"

void cli_grid_choose(rt_grid *out, const char *zone, double g_per_kwh, const rt_cloud *cloud)
{
    *out = (rt_grid)RT_GRID_INIT;
    out->g_per_kwh = NAN;
    if (isfinite(g_per_kwh) && g_per_kwh > 0) {
        out->g_per_kwh = g_per_kwh;
        out->source = "given";
        out->zone = zone; /* said beside it, when the user named one too */
        return;
    }
    if (zone && rt_grid_lookup(zone, out) == RT_OK)
        return;
    char region[160];
    if (!zone && cloud && cloud->vendor_id && cloud->region_id &&
        snprintf(region, sizeof region, "%s:%s", cloud->vendor_id, cloud->region_id) < (int)sizeof region &&
        rt_grid_lookup(region, out) == RT_OK)
        return;
    *out = (rt_grid)RT_GRID_INIT; /* unknown */
    out->g_per_kwh = NAN;
}

const rt_grid *cli_grid_of_run(cli_options *o, const rt_cloud *cloud)
{
    cli_grid_choose(&o->grid, o->grid_zone, o->grid_intensity, cloud);
    return &o->grid;
}

int cli_grid_option(const char *cmd, const char *flag, const char *value, const char **zone, double *g_per_kwh)
{
    const cli_setting *s = cli_setting_by_flag(flag);
    char what[320];
    rt_grid g = RT_GRID_INIT;
    if (s->type == CLI_T_ZONE ? rt_grid_lookup(value, &g) == RT_OK : cli_setting_number(s, value, g_per_kwh) == 0) {
        if (s->type == CLI_T_ZONE)
            *zone = value;
        return 0;
    }
    cli_say("%s: --%s: '%s' is not %s", cmd, flag, value, cli_setting_what(s, false, what, sizeof what));
    return -1;
}
