/* clocks.c - a wall clock's step and a sampling gap between two readings (clocks.h). */
#include "clocks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

double rt_sched_exec_start(const char *buf, size_t n)
{
    static const char key[] = "se.exec_start";
    for (const char *p = buf, *end = buf + n; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if ((size_t)(eol - p) > sizeof key && memcmp(p, key, sizeof key - 1) == 0 &&
            (p[sizeof key - 1] == ' ' || p[sizeof key - 1] == ':')) {
            const char *colon = memchr(p, ':', (size_t)(eol - p));
            char num[64];
            size_t len = colon ? (size_t)(eol - colon - 1) : 0;
            if (!colon || len == 0 || len >= sizeof num)
                return NAN;
            memcpy(num, colon + 1, len);
            num[len] = '\0';
            /* milliseconds, "12345.678901": whole and fraction apart (no locale's decimal point) */
            char *stop;
            unsigned long long whole = strtoull(num, &stop, 10);
            if (stop == num)
                return NAN;
            double frac = 0, scale = 0.1;
            if (*stop == '.')
                for (const char *d = stop + 1; *d >= '0' && *d <= '9'; d++, scale /= 10)
                    frac += (*d - '0') * scale;
            return ((double)whole + frac) / 1000.0;
        }
        p = eol + 1;
    }
    return NAN;
}

double rt_sched_end_mono(double zombie, double off_prev, double t_prev, double off_now, double t_now)
{
    if (!isfinite(zombie) || !isfinite(off_now) || !isfinite(t_now))
        return NAN;
    double end = zombie + off_now;
    if (isfinite(off_prev) && isfinite(t_prev) && t_now > t_prev) {
        /* t = zombie + off_prev + k (t - t_prev), k the offset's growth per second */
        double k = fmin(fmax((off_now - off_prev) / (t_now - t_prev), 0), 0.9);
        end = (zombie + off_prev - k * t_prev) / (1 - k);
    }
    return end <= t_now ? end : NAN;
}

void rt_sched_offsets_put(rt_sched_offsets *o, int cpu, double off, double t)
{
    if (o->off && cpu >= 0 && cpu < o->ncpu && isfinite(off)) {
        o->off[cpu] = off;
        o->at[cpu] = t;
    }
}

/* Whether cpu's offset was seen. */
static bool seen(const rt_sched_offsets *o, int cpu)
{
    return o->off && cpu >= 0 && cpu < o->ncpu && isfinite(o->off[cpu]);
}

double rt_sched_end_on(const rt_sched_offsets *o, double zombie, int zcpu, double off_now, int cpu, double t_now)
{
    if (!seen(o, zcpu) || zcpu == cpu)
        return seen(o, cpu) ? rt_sched_end_mono(zombie, o->off[cpu], o->at[cpu], off_now, t_now)
                            : rt_sched_end_mono(zombie, NAN, NAN, off_now, t_now);
    double grown = 0; /* the caller's CPU's growth per second since it was seen, zcpu's alike */
    if (seen(o, cpu) && t_now > o->at[cpu])
        grown = fmax((off_now - o->off[cpu]) / (t_now - o->at[cpu]), 0);
    double z_now = o->off[zcpu] + grown * (t_now - o->at[zcpu]);
    return rt_sched_end_mono(zombie, o->off[zcpu], o->at[zcpu], z_now, t_now);
}

int rt_stat_processor(const char *buf, size_t n)
{
    const char *p = NULL;
    for (size_t i = n; i > 0; i--)
        if (buf[i - 1] == ')') {
            p = buf + i;
            break;
        }
    if (!p)
        return -1;
    const char *end = buf + n;
    for (int field = 2; field < 39; field++) { /* p is after field 2 (the name): to field 39 */
        while (p < end && *p == ' ')
            p++;
        if (field == 38)
            break;
        while (p < end && *p != ' ')
            p++;
    }
    long cpu = 0;
    bool any = false;
    for (; p < end && *p >= '0' && *p <= '9'; p++, any = true)
        cpu = cpu * 10 + (*p - '0');
    return any && cpu < 1 << 20 ? (int)cpu : -1;
}
