/* bridge.h - how the static tool reaches the target machine's own libcurl and SQLite: a static
 * binary has no dynamic loader, so it starts a small helper program (src/lib/bridge/, built against
 * glibc 2.17's symbol versions and embedded in the static binary) that the target's loader runs,
 * which opens the libraries with dlopen and does the work on request, over a socket pair
 * (messages: core/wire.h). A helper is started per use (a request, a history session) and ends
 * when its socket closes, so no helper outlives the work nor keeps a --wait-all job waiting.
 * Internal to the library and its helper program (src/lib/bridge/); a program reaps helpers, tells
 * they alone are left and probes a library through resource_tracker/helper.h (rt_helper_*,
 * defined in bridge.c), and has SQLite through resource_tracker/sqlite.h (sqlite/). */
#ifndef RT_CORE_BRIDGE_H
#define RT_CORE_BRIDGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "wire.h"

/* The first item of every request: what is asked. */
enum {
    RT_BRIDGE_LOAD = 1,   /* str "curl" or "sqlite" -> i ok (1/0), str why not */
    RT_BRIDGE_FETCH = 2,  /* net/fetch_wire.h */
    RT_BRIDGE_SQLITE = 3, /* i the call (sqlite/sqlite_bridge.h), then its arguments */
    RT_BRIDGE_SHA256 = 4, /* bytes -> i rt_error, str 64 hex digits or why not (net/s3_sha256.c) */
};

/* A running helper. */
typedef struct rt_bridge {
    pid_t pid;
    int fd; /* our end of the socket pair; -1 when stopped */
} rt_bridge;

/* Whether this binary holds a helper at all (the static build on x86-64). */
bool rt_bridge_present(void);

/* Starts a helper into *b. Returns 0, or -1 with the reason in err ("no dynamic loader for it on
 * this machine (/lib64/ld-linux-x86-64.so.2)" when the target has no glibc). */
int rt_bridge_start(rt_bridge *b, char *err, size_t errlen);

/* Sends req and receives the reply into rep before the monotonic deadline (or *stop: see
 * rt_wire_recv). Returns 0, or -1 with the reason in err, the helper then stopped. */
int rt_bridge_call(rt_bridge *b, rt_wire *req, rt_wire *rep, double deadline, const _Atomic double *stop, char *err,
                   size_t errlen);

/* Closes the socket (the helper ends: at once when idle, within a second of libcurl's progress
 * when in a transfer) and reaps it when it has ended within a short wait; a helper still ending
 * is left to the tool's reaping of its children. Safe on a stopped bridge. */
void rt_bridge_stop(rt_bridge *b);

/* Whether pid is a running helper (started here, not yet reaped): the process tree's walk of
 * the tool's own children leaves helpers out of the job. Thread-safe. */
bool rt_bridge_is_helper(int64_t pid);

/* Starts a helper, asks it to load what ("curl" or "sqlite"), stops it. Returns 0, or -1 with
 * the reason in err (the helper's dlerror text, or why no helper could start). */
int rt_bridge_probe(const char *what, char *err, size_t errlen);

/* For tests and the dynamic build's checks: the helper program at path is run instead of the
 * embedded one (path must outlive its use; NULL: the embedded one). */
void rt_bridge_use_program(const char *path);

#endif
