/* clock.c - the tool's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME in seconds (cli.h). */
#define _GNU_SOURCE
#include "../common/clock.h"
#include "cli.h"

double cli_mono_secs(void)
{
    return rt_clock_secs(CLOCK_MONOTONIC);
}

double cli_real_secs(void)
{
    return rt_clock_secs(CLOCK_REALTIME);
}
