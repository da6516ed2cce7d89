/* resource_tracker/sqlite.h - SQLite loaded at first use (rt_sqlite_load): the machine's
 * libsqlite3.so.0 opened with dlopen, so that neither the library nor a program built on it links
 * SQLite, nor pays its memory when it keeps no database; in the static build (docs/install.md)
 * every call is a request to the loader helper (helper.h) that holds the target's SQLite. The
 * resource-tracker tool keeps its run history with it.
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_SQLITE_H)
#define RESOURCE_TRACKER_SQLITE_H

#include <stddef.h>

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * SQLite at first use (experimental: may change in a minor version)
 *
 * The calls have SQLite's own names, arguments and meaning (sqlite3_open_v2 is open_v2, and so
 * on); struct sqlite3 and struct sqlite3_stmt are <sqlite3.h>'s types, long long its
 * sqlite3_int64. Through the helper, a handle is the library's own (holding the helper's), only
 * the default VFS is opened, and a text bound is copied at once. */

struct sqlite3;
struct sqlite3_stmt;

/* The calls, filled by the library: grows only at its end. */
typedef struct rt_sqlite_api {
    int (*open_v2)(const char *, struct sqlite3 **, int, const char *);
    int (*close)(struct sqlite3 *);
    int (*busy_timeout)(struct sqlite3 *, int);
    int (*exec)(struct sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);
    int (*prepare_v2)(struct sqlite3 *, const char *, int, struct sqlite3_stmt **, const char **);
    int (*step)(struct sqlite3_stmt *);
    int (*finalize)(struct sqlite3_stmt *);
    int (*bind_double)(struct sqlite3_stmt *, int, double);
    int (*bind_int)(struct sqlite3_stmt *, int, int);
    int (*bind_int64)(struct sqlite3_stmt *, int, long long);
    int (*bind_null)(struct sqlite3_stmt *, int);
    int (*bind_text)(struct sqlite3_stmt *, int, const char *, int, void (*)(void *));
    int (*column_count)(struct sqlite3_stmt *);
    double (*column_double)(struct sqlite3_stmt *, int);
    int (*column_int)(struct sqlite3_stmt *, int);
    long long (*column_int64)(struct sqlite3_stmt *, int);
    const char *(*column_name)(struct sqlite3_stmt *, int);
    const unsigned char *(*column_text)(struct sqlite3_stmt *, int);
    int (*column_bytes)(struct sqlite3_stmt *, int);
    int (*column_type)(struct sqlite3_stmt *, int);
    int (*errcode)(struct sqlite3 *);
    const char *(*errmsg)(struct sqlite3 *);
    const char *(*errstr)(int);
    int (*extended_result_codes)(struct sqlite3 *, int);
    int (*get_autocommit)(struct sqlite3 *);
} rt_sqlite_api;

/* Loads SQLite and fills the calls, once per process (later calls give the first answer).
 * Returns RT_OK, or RT_ERR_UNSUPPORTED with the reason in err[errlen] ("cannot load
 * libsqlite3.so.0 (the dlerror text)", a symbol it lacks, or why no helper could load it).
 * Thread-safe. */
RT_API rt_error rt_sqlite_load(char *err, size_t errlen);

/* The calls once rt_sqlite_load has returned RT_OK; NULL before, or when it failed. */
RT_API const rt_sqlite_api *rt_sqlite_calls(void);

/* For tests: the library the first rt_sqlite_load opens instead of libsqlite3.so.0 (soname must
 * outlive it; no effect once loaded, nor in the static build, whose helper opens the target's
 * libsqlite3.so.0). */
RT_API void rt_sqlite_use(const char *soname);

/* Whether the database file at path lies on a network file system (NFS, CIFS/SMB, Lustre, GPFS,
 * 9p, Ceph, AFS, GlusterFS, BeeGFS, sshfs), where SQLite's locking cannot be trusted and several
 * machines writing at once can corrupt the file. Decided for path, or where it is not there yet
 * the nearest directory above it that is, from the mount table (the longest mount point that
 * holds it) and, when mountinfo is NULL, statfs's f_type as well. mountinfo: a file in
 * /proc/self/mountinfo's format to read instead of it (tests), or NULL. The file system's type
 * goes into fstype[fcap] ("nfs4"; "" when not known) and its mount point into mount[mcap] (""
 * when not known); either may be NULL. Returns 1 for a network file system, 0 for a local one or
 * one not known. Thread-safe. */
RT_API int rt_sqlite_network_fs(const char *path, const char *mountinfo, char *fstype, size_t fcap, char *mount,
                                size_t mcap);

#ifdef __cplusplus
}
#endif

#endif
