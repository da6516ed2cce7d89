/* locked.h - a flag that a handle's thread and its caller share, read under the handle's lock
 * (the finishing flags that rt_otlp_free and rt_stream_free check before they finish). Not
 * public. */
#ifndef RT_LOCKED_H
#define RT_LOCKED_H

#include <pthread.h>
#include <stdbool.h>

/* *flag as it stands, read under mu (not held by the caller). */
static inline bool rt_locked_flag(pthread_mutex_t *mu, const bool *flag)
{
    pthread_mutex_lock(mu);
    bool v = *flag;
    pthread_mutex_unlock(mu);
    return v;
}

#endif
