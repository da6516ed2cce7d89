/* lasterr.c - the calling thread's last error message (rt_last_error_message, libgit2's
 * git_error_last): one thread-local line, set by the failing calls that can say more than
 * their rt_error, read by the caller right after; and a handle's last failure (rt_handle_err),
 * one line under the handle's lock. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lasterr.h"

static _Thread_local char last_msg[512];

const char *rt_last_error_message(void)
{
    return last_msg;
}

void rt_err_clear(void)
{
    last_msg[0] = '\0';
}

static void set_v(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void set_v(const char *fmt, va_list ap)
{
    if (vsnprintf(last_msg, sizeof last_msg, fmt, ap) < 0)
        last_msg[0] = '\0';
}

void rt_err_set(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_v(fmt, ap);
    va_end(ap);
}

void rt_err_log(const rt_logger *lg, rt_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_v(fmt, ap);
    va_end(ap);
    rt_log(lg, level, "%s", last_msg);
}

void rt_handle_err_set(rt_handle_err *e, pthread_mutex_t *mu, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(mu);
    if (vsnprintf(e->msg, sizeof e->msg, fmt, ap) < 0)
        e->msg[0] = '\0';
    pthread_mutex_unlock(mu);
    va_end(ap);
}

const char *rt_handle_err_get(rt_handle_err *e, pthread_mutex_t *mu)
{
    pthread_mutex_lock(mu);
    memcpy(e->out, e->msg, sizeof e->out);
    pthread_mutex_unlock(mu);
    return e->out;
}
