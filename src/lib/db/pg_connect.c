/* pg_connect.c - a PostgreSQL connection made within a deadline, whatever libpq does on the way:
 * PQconnectStartParams and PQconnectPoll look a host name up with getaddrinfo, which blocks (a
 * resolver that does not answer holds it for its whole timeout, 5 s a try and more), so the
 * connect runs in a thread of its own and the caller waits for it only until the deadline. A
 * thread given up on finishes its connection itself when libpq returns, and frees what it holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/core.h"
#include "db_engine.h"

#define PQ (rt_pg_calls())

/* What the caller and the connecting thread share; the last of the two to let go frees it. */
typedef struct pg_connecting {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled when done */
    char *url;
    double by; /* CLOCK_MONOTONIC seconds */
    PGconn *pg;
    int code; /* RT_DB_OK, or why not */
    char msg[512];
    bool done, given_up;
} pg_connecting;

static void connecting_free(pg_connecting *c)
{
    if (c->pg)
        PQ->finish(c->pg);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->url);
    free(c);
}

/* The connection c->url names, started and polled until made, failed or past c->by. */
static void connect_by(pg_connecting *c)
{
    /* the URL expanded (dbname), then ours: the client encoding, and a name the server shows */
    const char *const keys[] = {"dbname", "client_encoding", "fallback_application_name", NULL};
    const char *const vals[] = {c->url, "UTF8", "resource-tracker", NULL};
    c->pg = PQ->connectStartParams(keys, vals, 1);
    if (!c->pg) {
        c->code = RT_DB_NOMEM;
        snprintf(c->msg, sizeof c->msg, "out of memory");
        return;
    }
    c->code = RT_DB_CANTOPEN;
    if (PQ->status(c->pg) == PG_CONNECTION_BAD) {
        snprintf(c->msg, sizeof c->msg, "%s", PQ->errorMessage(c->pg));
        return;
    }
    for (int r = PG_POLLING_WRITING; r != PG_POLLING_OK; r = PQ->connectPoll(c->pg)) {
        if (r == PG_POLLING_FAILED) {
            snprintf(c->msg, sizeof c->msg, "%s", PQ->errorMessage(c->pg));
            return;
        }
        int n = rt_db_pg_poll(PQ->socket(c->pg), r == PG_POLLING_READING ? POLLIN : POLLOUT, c->by);
        if (n <= 0) {
            c->code = n == 0 ? RT_DB_BUSY : RT_DB_CANTOPEN;
            snprintf(c->msg, sizeof c->msg, "%s",
                     n == 0 ? RT_PG_BEFORE_DEADLINE : strerror(errno));
            return;
        }
    }
    c->code = RT_DB_OK;
}

static void *connect_thread(void *arg)
{
    pg_connecting *c = arg;
    connect_by(c);
    if (c->code != RT_DB_OK && c->pg) {
        PQ->finish(c->pg);
        c->pg = NULL;
    }
    pthread_mutex_lock(&c->mu);
    c->done = true;
    bool free_it = c->given_up;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (free_it) /* the caller has gone: its connection, made or not, is nobody's */
        connecting_free(c);
    return NULL;
}

int rt_db_pg_connect(const char *url, double by, PGconn **out, char *msg, size_t cap)
{
    *out = NULL;
    pg_connecting *c = calloc(1, sizeof *c);
    if (!c || !(c->url = strdup(url))) {
        free(c);
        snprintf(msg, cap, "out of memory");
        return RT_DB_NOMEM;
    }
    c->by = by;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old; /* the job's signals stay the caller's threads' */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int err = pthread_create(&t, &attr, connect_thread, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err) { /* no thread: the connect in this one, as libpq makes it */
        connect_by(c);
    } else {
        /* the thread keeps the deadline itself once it polls; still busy a little past it, the lookup is
         * what holds it */
        double w = by + 0.05;
        struct timespec until = {(time_t)w, (long)((w - (double)(time_t)w) * 1e9)};
        pthread_mutex_lock(&c->mu);
        while (!c->done && pthread_cond_timedwait(&c->cv, &c->mu, &until) != ETIMEDOUT)
            ;
        if (!c->done) {
            c->given_up = true;
            pthread_mutex_unlock(&c->mu);
            snprintf(msg, cap, "no answer before the deadline while the PostgreSQL server's address was looked up "
                               "(the connection is given up)");
            return RT_DB_BUSY;
        }
        pthread_mutex_unlock(&c->mu);
    }
    int code = c->code;
    snprintf(msg, cap, "%s", c->msg);
    *out = c->pg;
    c->pg = NULL;
    connecting_free(c);
    return code;
}
