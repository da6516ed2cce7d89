/* pg_dl.c - libpq loaded at first use (resource_tracker/db.h: rt_pg_load): libpq.so.5 opened with
 * dlopen and the calls of pg_dl.h resolved into one table, so that the tool and its static build
 * start without PostgreSQL's client library and say what to install when a postgresql:// history
 * needs it. The static build loads nothing (a PostgreSQL history needs the dynamic tool). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/dl.h"
#include "pg_dl.h"
#include "resource_tracker.h"

static rt_pg_api calls;
static const rt_pg_api *_Atomic ready; /* &calls once loaded */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[800];
static const char *soname = "libpq.so.5";

void rt_pg_use(const char *name)
{
    soname = name;
}

/* name -> offset of its pointer in rt_pg_api */
static const rt_dl_sym symbols[] = {
    {"PQconnectStartParams", offsetof(rt_pg_api, connectStartParams)},
    {"PQconnectPoll", offsetof(rt_pg_api, connectPoll)},
    {"PQstatus", offsetof(rt_pg_api, status)},
    {"PQsocket", offsetof(rt_pg_api, socket)},
    {"PQerrorMessage", offsetof(rt_pg_api, errorMessage)},
    {"PQfinish", offsetof(rt_pg_api, finish)},
    {"PQsetnonblocking", offsetof(rt_pg_api, setnonblocking)},
    {"PQflush", offsetof(rt_pg_api, flush)},
    {"PQsendQuery", offsetof(rt_pg_api, sendQuery)},
    {"PQsendQueryParams", offsetof(rt_pg_api, sendQueryParams)},
    {"PQsetSingleRowMode", offsetof(rt_pg_api, setSingleRowMode)},
    {"PQconsumeInput", offsetof(rt_pg_api, consumeInput)},
    {"PQisBusy", offsetof(rt_pg_api, isBusy)},
    {"PQgetResult", offsetof(rt_pg_api, getResult)},
    {"PQresultStatus", offsetof(rt_pg_api, resultStatus)},
    {"PQresultErrorField", offsetof(rt_pg_api, resultErrorField)},
    {"PQresultErrorMessage", offsetof(rt_pg_api, resultErrorMessage)},
    {"PQclear", offsetof(rt_pg_api, clear)},
    {"PQntuples", offsetof(rt_pg_api, ntuples)},
    {"PQnfields", offsetof(rt_pg_api, nfields)},
    {"PQfname", offsetof(rt_pg_api, fname)},
    {"PQftype", offsetof(rt_pg_api, ftype)},
    {"PQgetvalue", offsetof(rt_pg_api, getvalue)},
    {"PQgetisnull", offsetof(rt_pg_api, getisnull)},
    {"PQtransactionStatus", offsetof(rt_pg_api, transactionStatus)},
};

static void load(void)
{
#ifdef RT_STATIC_BUILD
    snprintf(load_error, sizeof load_error,
             "a PostgreSQL history needs the dynamically linked resource-tracker with libpq.so.5 "
             "(this is the static build: use an SQLite file here)");
    return;
#endif
    rt_pg_api t;
    char why[300];
    if (!rt_dl_load(soname, symbols, sizeof symbols / sizeof symbols[0], &t, why, sizeof why)) {
        snprintf(load_error, sizeof load_error,
                 "cannot load %s (%s): a PostgreSQL history needs PostgreSQL's client library, 9.2 or later "
                 "(Debian, Ubuntu: apt-get install libpq5; RHEL, Fedora: dnf install libpq)",
                 soname, why);
        return;
    }
    calls = t;
    atomic_store(&ready, &calls);
}

rt_error rt_pg_load(char *err, size_t cap)
{
    pthread_once(&once, load);
    if (atomic_load(&ready))
        return RT_OK;
    snprintf(err, cap, "%s", load_error);
    return RT_ERR_UNSUPPORTED;
}

const rt_pg_api *rt_pg_calls(void)
{
    return atomic_load(&ready);
}
