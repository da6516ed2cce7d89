/* clock.h - the monotonic clock that retry, backoff and deadline code reads and waits on: the
 * real one (CLOCK_MONOTONIC, condition variables made for it) or a test clock that a unit test
 * steps by hand, waking whoever waits on it, so no test sleeps to let time pass. Internal.
 *
 * A component holds an `rt_clock *`; NULL is the real clock (what every public constructor
 * uses). Its condition variables are made with rt_clock_cond_init, and it reads the time with
 * rt_clock_now, waits with rt_clock_wait and wakes its waiters with rt_clock_broadcast, whichever
 * clock it holds. */
#ifndef RT_CLOCK_H
#define RT_CLOCK_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>

typedef struct rt_clock rt_clock;

/* Initialises cv for rt_clock_wait under any clock (its waits measured on CLOCK_MONOTONIC, so a
 * jump of the wall clock moves no bound). */
void rt_clock_cond_init(pthread_cond_t *cv);

/* The monotonic time in seconds: rt_mono_secs() for the real clock (c NULL), the test clock's
 * own reading otherwise. Thread-safe. */
double rt_clock_now(rt_clock *c);

/* Waits on cv, with mu held (released while waiting, held again on return), until the time
 * `until` of c (INFINITY: no bound), until cv is signalled, or spuriously: callers loop on their
 * own condition. Returns true when c's time has reached until. cv must come from
 * rt_clock_cond_init. */
bool rt_clock_wait(rt_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu, double until);

/* pthread_cond_broadcast(cv), telling c too: a waiter so woken no longer counts as blocked
 * (rt_clock_test_idle) while it is on its way out of the wait. Call it where the component would
 * broadcast cv (its mutex held, as usual). */
void rt_clock_broadcast(rt_clock *c, pthread_cond_t *cv);

/* poll(2) on pfds until one is ready or the time `until` of c comes (INFINITY: no bound); with a
 * test clock, a step that reaches until wakes it by writing 1 to wake_fd (an eventfd among pfds,
 * which the caller reads to reset). Returns what poll returns. */
int rt_clock_poll(rt_clock *c, struct pollfd *pfds, nfds_t n, double until, int wake_fd);

/* Sleeps until the time `until` of c (returns at once when it has come). */
void rt_clock_sleep_until(rt_clock *c, double until);

/* ---- the test clock ----------------------------------------------------------------------------- */

/* A test clock reading start. NULL on no memory. Free with rt_clock_test_free once nothing
 * waits on it any longer. */
rt_clock *rt_clock_test_new(double start);
void rt_clock_test_free(rt_clock *c);

/* Moves c's time on by secs (>= 0) and wakes every waiter on it (each one's mutex taken while
 * it is woken, so no waiter misses a step). Thread-safe; must not be called holding a mutex a
 * waiter on c uses. */
void rt_clock_test_step(rt_clock *c, double secs);

/* Sets c's time to t when t is later (as rt_clock_test_step). */
void rt_clock_test_set(rt_clock *c, double t);

/* Waits (in real time, at most bound_secs) until at least n waits on c are blocked on a time
 * still to come (or on no time at all): the threads that wait on c are then idle until the next
 * step or signal. Returns true when they are. */
bool rt_clock_test_idle(rt_clock *c, int n, double bound_secs);

/* The earliest time a blocked waiter on c waits for (INFINITY: none waits on a time). Lets a test
 * step straight to the next thing that is due. */
double rt_clock_test_next(rt_clock *c);

#endif
