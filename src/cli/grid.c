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
