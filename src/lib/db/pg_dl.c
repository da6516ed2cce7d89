/* pg_dl.c - libpq loaded at first use (resource_tracker/db.h: rt_pg_load): libpq.so.5 opened with
 * dlopen and the calls of pg_dl.h resolved into one table, so that the tool and its static build
 * start without PostgreSQL's client library and say what to install when a postgresql:// history
 * needs it. The static build loads nothing (a PostgreSQL history needs the dynamic tool). */
#include <stdio.h>
#include <string.h>

#include "../core/dl.h"
#include "pg_dl.h"
#include "resource_tracker.h"

static rt_pg_api calls;
static char load_error[800];
static rt_dl_lazy lib = RT_DL_LAZY_INIT("libpq.so.5", load_error);

void rt_pg_use(const char *name)
{
    lib.soname = name;
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
    if (!rt_dl_load(lib.soname, symbols, sizeof symbols / sizeof symbols[0], &t, why, sizeof why)) {
        snprintf(load_error, sizeof load_error,
                 "cannot load %s (%s): a PostgreSQL history needs PostgreSQL's client library, 9.2 or later "
                 "(Debian, Ubuntu: apt-get install libpq5; RHEL, Fedora: dnf install libpq)",
                 lib.soname, why);
        return;
    }
    calls = t;
    rt_dl_lazy_done(&lib, &calls);
}

rt_error rt_pg_load(char *err, size_t cap)
{
    return rt_dl_lazy_load(&lib, load, err, cap);
}

const rt_pg_api *rt_pg_calls(void)
{
    return rt_dl_lazy_calls(&lib);
}
