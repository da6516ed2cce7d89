/* clock.h - a clock's reading in seconds as a double, shared by the library's clocks
 * (core/util.c) and the tool's (cli/clock.c) (header-only, no state). */
#ifndef RT_COMMON_CLOCK_H
#define RT_COMMON_CLOCK_H

#include <time.h>

/* clock_gettime(id) in seconds; 0 when the clock cannot be read. */
static inline double rt_clock_secs(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
