/* clock.c - the tool's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME in seconds (cli.h). */
#define _GNU_SOURCE
#include <time.h>

#include "cli.h"

double cli_mono_secs(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

double cli_real_secs(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
