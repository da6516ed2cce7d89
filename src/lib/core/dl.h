/* dl.h - loading an optional shared library at run time (zlib, libcurl, libcrypto): open it,
 * resolve a table of functions, or say why not (in the static build: that it cannot). Internal to
 * the library. */
#ifndef RT_CORE_DL_H
#define RT_CORE_DL_H

#include <stddef.h>

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

#endif
