/* lasterr.h - the calling thread's last error message (rt_last_error_message): set by the
 * public calls whose contract says "last error", cleared when they begin. Not public. */
#ifndef RT_LASTERR_H
#define RT_LASTERR_H

#include "core.h"

/* Empties the thread's message (at the start of a call that sets it). */
void rt_err_clear(void);

/* Sets the thread's message (cut to 511 bytes). */
void rt_err_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sets the thread's message and hands the same words to the logger at level (the failures a
 * call both logs and reports). */
void rt_err_log(const rt_logger *lg, rt_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
