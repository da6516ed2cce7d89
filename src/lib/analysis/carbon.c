/* carbon.c - the carbon side of energy: a grid zone's carbon intensity looked up in the
 * shipped table (grid_table.h: countries, zones, and cloud regions mapped to the zone they draw
 * from), and grams of CO2e from joules at an intensity. Unknown stays unknown: no world
 * average anywhere. */
#include <math.h>
#include <stddef.h>
#include <strings.h>

#include "../core/lasterr.h"
#include "grid_table.h"

/* The row spelt zone (case-insensitive); NULL for none. */
static const rt_grid_row *find_row(const char *zone)
{
    for (size_t i = 0; i < rt_grid_rows_count; i++)
        if (strcasecmp(rt_grid_rows[i].zone, zone) == 0)
            return &rt_grid_rows[i];
    return NULL;
}

rt_error rt_grid_lookup(const char *zone, rt_grid *out)
{
    rt_err_clear();
    if (!zone || !out || out->struct_size < sizeof(rt_grid)) {
        rt_err_set("rt_grid_lookup: %s", !zone || !out ? "a NULL argument" : "struct_size too small");
        return RT_ERR_INVALID;
    }
    size_t size = out->struct_size;
    out->g_per_kwh = NAN;
    out->zone = out->name = out->source = NULL;
    out->year = 0;
    const rt_grid_row *row = find_row(zone), *at = row;
    if (row && row->maps_to[0]) /* a region: its zone's figure */
        at = find_row(row->maps_to);
    if (!row || !at || at->maps_to[0] || !(at->g_per_kwh > 0)) {
        rt_err_set("grid zone '%s' is not in the table of carbon intensities (a country code such as \"FR\", "
                   "or vendor:region such as \"aws:eu-west-3\")", zone);
        return RT_ERR_NOT_FOUND;
    }
    out->struct_size = size;
    out->g_per_kwh = at->g_per_kwh;
    out->zone = row->zone;
    out->name = at->name;
    out->source = rt_grid_rows_source;
    out->year = at->year;
    return RT_OK;
}

double rt_co2e_grams(double joules, double g_per_kwh)
{
    if (isnan(joules) || isnan(g_per_kwh) || !(g_per_kwh > 0))
        return NAN;
    return joules / 3.6e6 * g_per_kwh;
}
