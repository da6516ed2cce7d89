/* resource_tracker/helper.h - the static build's loader helper, as the program that tracks a job
 * sees it: the helper processes it starts (to reach the target's libcurl and SQLite) are its own
 * children but not the job's, and whether the target's library can be had is asked of one.
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_HELPER_H)
#define RESOURCE_TRACKER_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * The loader helper (experimental: may change in a minor version)
 *
 * A static binary has no dynamic loader, so the library, built static (docs/install.md), starts
 * a small helper program the target's loader runs, one per use (an upload, a history session),
 * which opens the target's libcurl or SQLite and does the work on request. In any other build
 * no helper is ever started: the calls below then answer "not a helper" and "none left". */

/* For a program reaping its children (SIGCHLD, waitid with WNOWAIT): when pid is a helper the
 * library started and has not reaped, reaps it if it has ended (keeping its status for the
 * library) and returns true: not a process of the job, to be left out of its accounting.
 * False for any other pid. Thread-safe. */
RT_API bool rt_helper_reap(int64_t pid);

/* Whether every child the calling process has (every thread's, /proc/self/task/T/children) is
 * a running helper: a program that waits for its children to end is then done. False when no
 * helper runs or a list cannot be read. Thread-safe. */
RT_API bool rt_helper_only_left(void);

/* Whether the target's library what ("curl" or "sqlite") can be had through a helper: starts
 * one, asks it to load the library, stops it. Returns RT_OK, or RT_ERR_UNSUPPORTED with the
 * reason in err[errlen] (the helper's dlerror text, or why no helper could start; in a build
 * without a helper: that it has none). */
RT_API rt_error rt_helper_probe(const char *what, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
