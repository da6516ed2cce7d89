/* clock.c - the monotonic clock seam (clock.h): the real clock (CLOCK_MONOTONIC and timed
 * condition waits) and the test clock a unit test steps by hand. */
#define _GNU_SOURCE
#include "clock.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* One blocked rt_clock_wait or rt_clock_poll on a test clock (on the waiter's stack, listed under
 * the clock's mu). */
typedef struct waiter {
    struct waiter *next, *prev;
    pthread_cond_t *cv; /* NULL: a poll, woken through wake_fd */
    pthread_mutex_t *mu;
    int wake_fd;
    double until;
    unsigned woken; /* the step that last woke it */
    bool signalled; /* woken by rt_clock_broadcast: no longer blocked */
} waiter;

struct rt_clock {
    pthread_mutex_t mu;
    pthread_cond_t changed; /* a waiter came or went, or the time moved */
    double now;
    unsigned step;
    waiter *list;
};

/* The absolute CLOCK_MONOTONIC time t as a timespec (for pthread_cond_timedwait). */
static struct timespec mono_ts(double t)
{
    double whole;
    double frac = modf(t > 0 ? t : 0, &whole);
    struct timespec ts = {.tv_sec = (time_t)whole, .tv_nsec = (long)(frac * 1e9)};
    if (ts.tv_nsec > 999999999L)
        ts.tv_nsec = 999999999L;
    return ts;
}

void rt_clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

double rt_clock_now(rt_clock *c)
{
    if (!c)
        return rt_mono_secs();
    pthread_mutex_lock(&c->mu);
    double t = c->now;
    pthread_mutex_unlock(&c->mu);
    return t;
}

/* Lists w (c->mu held). */
static void list_add(rt_clock *c, waiter *w)
{
    w->woken = c->step;
    w->next = c->list;
    if (c->list)
        c->list->prev = w;
    c->list = w;
    pthread_cond_broadcast(&c->changed);
}

/* Takes w off the list. Returns whether c's time has reached w's. */
static bool list_remove(rt_clock *c, waiter *w)
{
    pthread_mutex_lock(&c->mu);
    if (w->prev)
        w->prev->next = w->next;
    else
        c->list = w->next;
    if (w->next)
        w->next->prev = w->prev;
    bool reached = c->now >= w->until;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->mu);
    return reached;
}

bool rt_clock_wait(rt_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu, double until)
{
    if (!c) {
        if (isinf(until) && until > 0) {
            pthread_cond_wait(cv, mu);
            return false;
        }
        struct timespec ts = mono_ts(until);
        pthread_cond_timedwait(cv, mu, &ts);
        return rt_mono_secs() >= until;
    }
    pthread_mutex_lock(&c->mu);
    if (c->now >= until) {
        pthread_mutex_unlock(&c->mu);
        return true;
    }
    /* listed while mu is held: a step wakes it only holding mu, so only once it waits on cv */
    waiter w = {.cv = cv, .mu = mu, .wake_fd = -1, .until = until};
    list_add(c, &w);
    pthread_mutex_unlock(&c->mu);
    pthread_cond_wait(cv, mu);
    return list_remove(c, &w);
}

int rt_clock_poll(rt_clock *c, struct pollfd *pfds, nfds_t n, double until, int wake_fd)
{
    if (!c) {
        double ms = (until - rt_mono_secs()) * 1000.0 + 1.0; /* at most an hour: poll again then */
        return poll(pfds, n, !(ms < 3600e3) ? 3600000 : ms < 0 ? 0 : (int)ms);
    }
    pthread_mutex_lock(&c->mu);
    if (c->now >= until) {
        pthread_mutex_unlock(&c->mu);
        return poll(pfds, n, 0);
    }
    waiter w = {.wake_fd = wake_fd, .until = until};
    list_add(c, &w);
    pthread_mutex_unlock(&c->mu);
    int r = poll(pfds, n, -1);
    int e = errno;
    list_remove(c, &w);
    errno = e;
    return r;
}

void rt_clock_broadcast(rt_clock *c, pthread_cond_t *cv)
{
    if (c) {
        pthread_mutex_lock(&c->mu);
        for (waiter *w = c->list; w; w = w->next)
            if (w->cv == cv)
                w->signalled = true;
        pthread_cond_broadcast(&c->changed);
        pthread_mutex_unlock(&c->mu);
    }
    pthread_cond_broadcast(cv);
}

void rt_clock_sleep_until(rt_clock *c, double until)
{
    if (!c) {
        struct timespec ts = mono_ts(until);
        while (rt_mono_secs() < until && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        return;
    }
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    rt_clock_cond_init(&cv);
    pthread_mutex_lock(&mu);
    while (!rt_clock_wait(c, &cv, &mu, until))
        ;
    pthread_mutex_unlock(&mu);
    pthread_cond_destroy(&cv);
    pthread_mutex_destroy(&mu);
}

rt_clock *rt_clock_test_new(double start)
{
    rt_clock *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    rt_clock_cond_init(&c->changed);
    c->now = start;
    return c;
}

void rt_clock_test_free(rt_clock *c)
{
    if (!c)
        return;
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void rt_clock_test_set(rt_clock *c, double t)
{
    pthread_mutex_lock(&c->mu);
    if (t > c->now)
        c->now = t;
    c->step++;
    for (;;) {
        /* each waiter now due is woken holding its mutex (tried, never waited for: its holder may
         * be asking this clock the time) */
        bool busy = false;
        for (waiter *w = c->list; w; w = w->next) {
            if (w->woken == c->step || w->until > c->now || w->signalled)
                continue;
            if (!w->cv) { /* a poll: its eventfd keeps the wake until it is read */
                uint64_t one = 1;
                ssize_t k = write(w->wake_fd, &one, sizeof one);
                (void)k;
                w->woken = c->step;
                continue;
            }
            if (pthread_mutex_trylock(w->mu) != 0) {
                busy = true;
                continue;
            }
            pthread_cond_broadcast(w->cv);
            pthread_mutex_unlock(w->mu);
            w->woken = c->step;
        }
        pthread_cond_broadcast(&c->changed);
        if (!busy)
            break;
        pthread_mutex_unlock(&c->mu);
        sched_yield();
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
}

void rt_clock_test_step(rt_clock *c, double secs)
{
    rt_clock_test_set(c, rt_clock_now(c) + (secs > 0 ? secs : 0));
}

/* Waits blocked on a time still to come, or on none (c->mu held). */
static int idle_count(const rt_clock *c, double *next)
{
    int n = 0;
    *next = INFINITY;
    for (const waiter *w = c->list; w; w = w->next)
        if (w->until > c->now && !w->signalled) {
            n++;
            if (w->until < *next)
                *next = w->until;
        }
    return n;
}

bool rt_clock_test_idle(rt_clock *c, int n, double bound_secs)
{
    struct timespec ts = mono_ts(rt_mono_secs() + bound_secs);
    double next;
    pthread_mutex_lock(&c->mu);
    while (idle_count(c, &next) < n)
        if (pthread_cond_timedwait(&c->changed, &c->mu, &ts) == ETIMEDOUT)
            break;
    bool ok = idle_count(c, &next) >= n;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

double rt_clock_test_next(rt_clock *c)
{
    double next;
    pthread_mutex_lock(&c->mu);
    idle_count(c, &next);
    pthread_mutex_unlock(&c->mu);
    return next;
}
