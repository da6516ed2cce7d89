/* unit_clock.h - driving the library's test clock (core/clock.h) from a unit test: run it on to a
 * time, stepping to each wait that falls due on the way and letting the component's threads
 * settle after each step; or let it run on by itself (in a thread of its own) while the test's
 * thread is blocked in a call that waits on it, such as a component's finish. Nothing here
 * sleeps: every wait is for a thread to block on the clock, within a bound. */
#ifndef RT_UNIT_CLOCK_H
#define RT_UNIT_CLOCK_H

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "core/clock.h"

#define CLOCK_SETTLE_SECS 30.0 /* the most a test waits for threads to block on the clock */

/* Runs c on to time t: each time n waits on c are blocked, steps to the earliest time one of
 * them waits for, while that is not after t; then to t, and waits for the n to block again. */
static inline void clock_run_to(rt_clock *c, int n, double t)
{
    for (;;) {
        if (!rt_clock_test_idle(c, n, CLOCK_SETTLE_SECS))
            fail_msg("%d threads did not block on the clock within %.0f s", n, CLOCK_SETTLE_SECS);
        double next = rt_clock_test_next(c);
        if (next > t)
            break;
        rt_clock_test_set(c, next);
    }
    rt_clock_test_set(c, t);
    if (!rt_clock_test_idle(c, n, CLOCK_SETTLE_SECS))
        fail_msg("%d threads did not block on the clock within %.0f s", n, CLOCK_SETTLE_SECS);
}

/* A thread that moves c on to the next time waited for whenever n waits are blocked on it. */
typedef struct clock_driver {
    rt_clock *c;
    int n;
    atomic_bool stop;
    pthread_t th;
} clock_driver;

static inline void *clock_drive(void *arg)
{
    clock_driver *d = arg;
    while (!atomic_load(&d->stop)) {
        if (!rt_clock_test_idle(d->c, d->n, 0.01))
            continue;
        double next = rt_clock_test_next(d->c);
        if (isfinite(next))
            rt_clock_test_set(d->c, next);
        else
            sched_yield(); /* all wait on a signal, none on a time */
    }
    return NULL;
}

/* Starts moving c on by itself whenever n waits are blocked on it (the component's threads and
 * the test's own, blocked in a call). */
static inline void clock_drive_start(clock_driver *d, rt_clock *c, int n)
{
    d->c = c;
    d->n = n;
    atomic_init(&d->stop, false);
    assert_int_equal(pthread_create(&d->th, NULL, clock_drive, d), 0);
}

static inline void clock_drive_stop(clock_driver *d)
{
    atomic_store(&d->stop, true);
    pthread_join(d->th, NULL);
}

#endif
