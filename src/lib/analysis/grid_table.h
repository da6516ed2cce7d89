/* grid_table.h - the shipped table of grid carbon intensities (data/grid-intensity.csv,
 * compiled in at build time by cmake/csv-table.cmake into the build directory's
 * grid_table.c): countries and zones with their figure, cloud regions with the zone they draw
 * from. Read by carbon.c. Not public. */
#ifndef RT_ANALYSIS_GRID_TABLE_H
#define RT_ANALYSIS_GRID_TABLE_H

#include <stddef.h>

typedef struct rt_grid_row {
    const char *zone;     /* "FR", "aws:eu-west-3" */
    double g_per_kwh;     /* 0 for a region (its figure is its zone's) */
    int year;             /* the figure's year; 0 for a region */
    const char *name;     /* the country's name, or the region's place */
    const char *maps_to;  /* a region's zone; "" for a zone */
} rt_grid_row;

extern const rt_grid_row rt_grid_rows[];
extern const size_t rt_grid_rows_count;
extern const char rt_grid_rows_source[]; /* the table's "# source:" line */

#endif
