/* dl.h - loading an optional shared library at run time (zlib, libcurl, libcrypto): open it,
 * resolve a table of functions, or say why not (in the static build: that it cannot); and the
 * state of one loaded at first use (libpq, SQLite). Internal to the library. */
#ifndef RT_CORE_DL_H
#define RT_CORE_DL_H

#include <pthread.h>
#include <stddef.h>

#include "resource_tracker.h"

/* Why nothing is loaded in the static build (cmake -DRT_STATIC=ON, docs/install.md): it has no
 * dynamic loader, so rt_dl_load (and NVML's loading) fail at once with these words. */
#define RT_DL_STATIC_WHY "this static build of resource-tracker cannot load shared libraries"

/* One function to resolve: its name, and where its pointer goes in the caller's table. */
typedef struct rt_dl_sym {
    const char *name;
    size_t offset; /* offsetof(the table's type, the slot) */
} rt_dl_sym;

/* The row of the function PREFIX SLOT, whose pointer goes in the table's member SLOT (libpq's
 * PQstatus in rt_pg_api's status: RT_DL_SYM("PQ", rt_pg_api, status)). */
#define RT_DL_SYM(prefix, type, slot) {prefix #slot, offsetof(type, slot)}

/* Opens soname (RTLD_NOW | RTLD_LOCAL) and stores each of the n symbols into the table api.
 * Returns the handle (the caller keeps or dlcloses it), or NULL with the dlerror text in err and
 * nothing left open. */
void *rt_dl_load(const char *soname, const rt_dl_sym *syms, size_t n, void *api, char *err, size_t errlen);

/* A library loaded at first use (pg_dl.c, sqlite_dl.c): its soname (rt_pg_use, rt_sqlite_use
 * change it before the first use), its loading done once, the table of its calls once loaded,
 * and the loader's words why not (error_cap bytes at error). */
typedef struct rt_dl_lazy {
    pthread_once_t once;
    const char *soname;
    const void *_Atomic ready; /* the table of calls, once loaded */
    char *error;
    size_t error_cap;
} rt_dl_lazy;
#define RT_DL_LAZY_INIT(soname, error) {PTHREAD_ONCE_INIT, soname, NULL, error, sizeof(error)}

/* Runs load once (lazy->once); load sets lazy->ready (rt_dl_lazy_done) or writes lazy->error.
 * Returns RT_OK when loaded, else RT_ERR_UNSUPPORTED with the error copied into err[cap]. */
rt_error rt_dl_lazy_load(rt_dl_lazy *lazy, void (*load)(void), char *err, size_t cap);
/* Marks lazy loaded with its table of calls (what rt_dl_lazy_calls answers from now). */
void rt_dl_lazy_done(rt_dl_lazy *lazy, const void *calls);
/* The table of calls once loaded, else NULL. */
const void *rt_dl_lazy_calls(rt_dl_lazy *lazy);

#endif
