/* test_clock.c - the clock seam (core/clock.h): the real clock's waits end at their time; a test
 * clock's waiters wake when a step reaches their time and not before, are counted blocked while
 * they wait (and not once signalled), and a poll is woken through its eventfd. */
#include "unit.h"
#include "unit_clock.h"

#include <math.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "core/core.h"

#define T0 1000.0

static void real_clock(void **state)
{
    (void)state;
    double a = rt_clock_now(NULL), b = rt_clock_now(NULL);
    assert_true(b >= a && fabs(a - rt_mono_secs()) < 1.0);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    rt_clock_cond_init(&cv);
    pthread_mutex_lock(&mu);
    double until = rt_clock_now(NULL) + 0.01;
    while (!rt_clock_wait(NULL, &cv, &mu, until))
        ;
    pthread_mutex_unlock(&mu);
    assert_true(rt_clock_now(NULL) >= until);
    rt_clock_sleep_until(NULL, rt_clock_now(NULL) + 0.001);
    pthread_cond_destroy(&cv);
}

/* A thread waiting on a test clock: until `until`, or until flag is set (under mu, signalled). */
typedef struct waiter_arg {
    rt_clock *c;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double until;
    bool flag, reached;
    int wake_fd, polled;
} waiter_arg;

static void *wait_thread(void *p)
{
    waiter_arg *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->flag && !(w->reached = rt_clock_wait(w->c, &w->cv, &w->mu, w->until)))
        ;
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void *poll_thread(void *p)
{
    waiter_arg *w = p;
    struct pollfd pfd = {.fd = w->wake_fd, .events = POLLIN};
    w->polled = rt_clock_poll(w->c, &pfd, 1, w->until, w->wake_fd);
    return NULL;
}

static void *sleep_thread(void *p)
{
    waiter_arg *w = p;
    rt_clock_sleep_until(w->c, w->until);
    return NULL;
}

static void arg_init(waiter_arg *w, rt_clock *c, double until)
{
    memset(w, 0, sizeof *w);
    w->c = c;
    w->until = until;
    pthread_mutex_init(&w->mu, NULL);
    rt_clock_cond_init(&w->cv);
}

static void arg_destroy(waiter_arg *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

static void test_clock_steps(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(T0);
    assert_true(rt_clock_now(c) == T0);
    assert_true(isinf(rt_clock_test_next(c)));
    waiter_arg w;
    arg_init(&w, c, T0 + 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
    assert_true(rt_clock_test_idle(c, 1, 30));
    assert_true(rt_clock_test_next(c) == T0 + 1);
    rt_clock_test_step(c, 0.5); /* not yet: still blocked */
    assert_true(rt_clock_test_idle(c, 1, 30));
    pthread_mutex_lock(&w.mu);
    assert_false(w.reached);
    pthread_mutex_unlock(&w.mu);
    rt_clock_test_step(c, 0.5);
    pthread_join(th, NULL);
    assert_true(w.reached);
    assert_false(rt_clock_test_idle(c, 1, 0));
    rt_clock_test_set(c, T0); /* never backwards */
    assert_true(rt_clock_now(c) == T0 + 1);
    arg_destroy(&w);

    /* a wait on no time, ended by a signal: no longer counted blocked once signalled */
    arg_init(&w, c, INFINITY);
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
    assert_true(rt_clock_test_idle(c, 1, 30));
    assert_true(isinf(rt_clock_test_next(c)));
    pthread_mutex_lock(&w.mu);
    w.flag = true;
    rt_clock_broadcast(c, &w.cv);
    assert_false(rt_clock_test_idle(c, 1, 0));
    pthread_mutex_unlock(&w.mu);
    pthread_join(th, NULL);
    assert_false(w.reached);
    arg_destroy(&w);
    rt_clock_test_free(c);
}

static void test_clock_poll_and_sleep(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(T0);
    waiter_arg w;
    arg_init(&w, c, T0 + 2);
    w.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    assert_true(w.wake_fd >= 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, poll_thread, &w), 0);
    clock_run_to(c, 1, T0 + 1.5); /* blocked before and after: its time not reached */
    clock_run_to(c, 0, T0 + 2.5);
    pthread_join(th, NULL);
    assert_int_equal(w.polled, 1); /* woken through its eventfd */
    close(w.wake_fd);
    arg_destroy(&w);

    arg_init(&w, c, T0 + 4);
    assert_int_equal(pthread_create(&th, NULL, sleep_thread, &w), 0);
    assert_true(rt_clock_test_idle(c, 1, 30));
    assert_true(rt_clock_test_next(c) == T0 + 4);
    rt_clock_test_set(c, T0 + 4);
    pthread_join(th, NULL);
    rt_clock_sleep_until(c, T0 + 3); /* passed: at once */
    arg_destroy(&w);
    rt_clock_test_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_clock),
        cmocka_unit_test(test_clock_steps),
        cmocka_unit_test(test_clock_poll_and_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
