/* clocks.c - a wall clock's step and a sampling gap between two readings (clocks.h). */
#include "clocks.h"

#include <math.h>

void rt_clocks_read(rt_clocks *c, double mono, double real, double boot, double *step, double *gap)
{
    *step = *gap = 0;
    if (isnan(boot))
        boot = mono;
    if (c->have) {
        double passed = boot - c->boot; /* the time that passed, a suspended machine's too */
        double moved = real - c->real;
        if (isfinite(moved - passed) && fabs(moved - passed) >= RT_CLOCK_STEP_MIN_SECS)
            *step = moved - passed;
        double every = c->nominal > 0 ? c->nominal : c->typical;
        if (every > 0 && passed > RT_GAP_INTERVALS * every && passed > every + RT_GAP_EXTRA_SECS)
            *gap = passed;
        else if (mono > c->mono) /* the intervals seen, a gap's left out */
            c->typical = c->typical > 0 ? 0.8 * c->typical + 0.2 * (mono - c->mono) : mono - c->mono;
    }
    c->mono = mono;
    c->real = real;
    c->boot = boot;
    c->have = true;
}
