/* unit_wait.h - waiting in a unit test for a condition another process, thread or the kernel
 * brings about (a child's exit, a file's state, a thread's end), polled within a bound: the one
 * place in tests/unit that sleeps (scripts/check-unit-sleeps holds it so). A test never sleeps
 * to let time pass (the clock seam, unit_clock.h, moves time) nor for "long enough": it waits
 * for what it needs, and asserts it after. Include after unit.h. */
#ifndef RT_UNIT_WAIT_H
#define RT_UNIT_WAIT_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#define UNIT_WAIT_SECS 30.0 /* the bound a test uses unless it has a reason for another */

typedef struct unit_wait {
    double until; /* CLOCK_MONOTONIC seconds */
    long step_ns; /* the next pause: 0.1 ms, doubling up to 10 ms */
} unit_wait;

static inline double unit_wait_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline unit_wait unit_wait_begin(double bound_secs)
{
    return (unit_wait){.until = unit_wait_mono() + bound_secs, .step_ns = 100000};
}

/* Pauses before the condition is looked at again; false (no pause) once the bound has passed. */
static inline bool unit_wait_step(unit_wait *w)
{
    if (unit_wait_mono() >= w->until)
        return false;
    struct timespec ts = {0, w->step_ns};
    nanosleep(&ts, NULL);
    if (w->step_ns < 10000000)
        w->step_ns *= 2;
    return true;
}

/* Evaluates cond (an expression, which may act, e.g. reap or read, each time) until it is true or
 * bound_secs have passed; the test then asserts what it needs (the condition, usually). */
#define UNIT_WAIT_UNTIL(cond, bound_secs)                                                                 \
    do {                                                                                                  \
        unit_wait unit_w_ = unit_wait_begin(bound_secs);                                                  \
        while (!(cond) && unit_wait_step(&unit_w_)) {                                                     \
        }                                                                                                 \
    } while (0)

/* The threads of this process now (/proc/self/status's Threads), -1 when it cannot be read: a test
 * waits for a thread it cannot join (detached, or left behind on purpose) to end. */
static inline int unit_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

#endif
