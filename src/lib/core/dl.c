/* dl.c - loading an optional shared library and resolving its functions into a table (dl.h); in
 * the static build, saying that it cannot. And the once-only loading of a library loaded at first
 * use (rt_dl_lazy). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "dl.h"

void *rt_dl_load(const char *soname, const rt_dl_sym *syms, size_t n, void *api, char *err, size_t errlen)
{
#ifdef RT_STATIC_BUILD
    (void)soname, (void)syms, (void)n, (void)api;
    snprintf(err, errlen, "%s", RT_DL_STATIC_WHY);
    return NULL;
#else
    void *dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : soname);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        dlerror(); /* clear */
        void *p = dlsym(dl, syms[i].name);
        if (!p) {
            const char *e = dlerror();
            snprintf(err, errlen, "%s", e ? e : syms[i].name);
            dlclose(dl);
            return NULL;
        }
        memcpy((char *)api + syms[i].offset, &p, sizeof p); /* a data pointer into a function pointer slot */
    }
    return dl;
#endif
}

rt_error rt_dl_lazy_load(rt_dl_lazy *lazy, void (*load)(void), char *err, size_t cap)
{
    pthread_once(&lazy->once, load);
    if (rt_dl_lazy_calls(lazy))
        return RT_OK;
    snprintf(err, cap, "%s", lazy->error);
    return RT_ERR_UNSUPPORTED;
}

void rt_dl_lazy_done(rt_dl_lazy *lazy, const void *calls)
{
    atomic_store(&lazy->ready, calls);
}

const void *rt_dl_lazy_calls(rt_dl_lazy *lazy)
{
    return atomic_load(&lazy->ready);
}
