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

#define PG(slot) RT_DL_SYM("PQ", rt_pg_api, slot)
/* the calls: PQNAME into rt_pg_api's NAME */
static const rt_dl_sym symbols[] = {
    PG(connectStartParams), PG(connectPoll), PG(status), PG(socket), PG(errorMessage), PG(finish),
    PG(setnonblocking), PG(flush), PG(sendQuery), PG(sendQueryParams), PG(setSingleRowMode), PG(consumeInput),
    PG(isBusy), PG(getResult), PG(resultStatus), PG(resultErrorField), PG(resultErrorMessage), PG(clear),
    PG(ntuples), PG(nfields), PG(fname), PG(ftype), PG(getvalue), PG(getisnull), PG(transactionStatus),
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
