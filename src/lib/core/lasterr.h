/* lasterr.h - the calling thread's last error message (rt_last_error_message): set by the
 * public calls whose contract says "last error", cleared when they begin; and a handle's last
 * failure (rt_otlp_errmsg and the like), set by the handle's own thread under the handle's lock
 * and copied out for the caller. Not public. */
#ifndef RT_LASTERR_H
#define RT_LASTERR_H

#include <pthread.h>

#include "core.h"

/* Empties the thread's message (at the start of a call that sets it). */
void rt_err_clear(void);

/* Sets the thread's message (cut to 511 bytes). */
void rt_err_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sets the thread's message and hands the same words to the logger at level (the failures a
 * call both logs and reports). */
void rt_err_log(const rt_logger *lg, rt_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A handle's last failure: msg under the handle's lock, out the caller's copy. Zeroed: "". */
typedef struct rt_handle_err {
    char msg[512];
    char out[512];
} rt_handle_err;

/* Sets e's message (cut to 511 bytes) under mu (not held by the caller). */
void rt_handle_err_set(rt_handle_err *e, pthread_mutex_t *mu, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies e's message under mu into e->out and returns it: valid until the next call on e. */
const char *rt_handle_err_get(rt_handle_err *e, pthread_mutex_t *mu);

#endif
