/* glibc_floor.h - included first into every file of the loader helper (src/lib/bridge/, built with
 * the build machine's glibc): binds the few calls whose default symbol version is newer than
 * glibc 2.17 to their oldest version, which every later glibc still keeps (dlopen and
 * pthread_once moved into libc.so.6 in 2.34 under new versions; libdl.so.2 and libpthread.so.0,
 * linked too, hold them on older ones), and replaces explicit_bzero (2.25). The suite checks the
 * helper's symbol versions (tests/e2e/test_static.py). x86-64 only: the oldest version there is
 * GLIBC_2.2.5. */
#ifndef RT_BRIDGE_GLIBC_FLOOR_H
#define RT_BRIDGE_GLIBC_FLOOR_H

#if defined(__x86_64__)
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_mutex_lock,pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver pthread_mutex_unlock,pthread_mutex_unlock@GLIBC_2.2.5");
__asm__(".symver __libc_start_main,__libc_start_main@GLIBC_2.2.5");
#endif

#ifndef _GNU_SOURCE /* as the files that want it say it: before any header */
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <string.h> /* its explicit_bzero declared before the macro below */

/* explicit_bzero for glibc before 2.25: a wipe the compiler may not remove */
static inline void rt_bridge_wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}
#define explicit_bzero(p, n) rt_bridge_wipe((p), (n))

#endif
