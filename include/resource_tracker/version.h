/* resource_tracker/version.h - the common base of every module header: the version, RT_API and
 * RT_DEPRECATED, errors, the last error message, logging, output callbacks and missing values.
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_VERSION_H
#define RESOURCE_TRACKER_VERSION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_VERSION_MAJOR 0
#define RT_VERSION_MINOR 23
#define RT_VERSION_PATCH 0
#define RT_VERSION "0.23.0"
/* 0xMMmmpp: compare with rt_version_num() to learn whether the loaded library is as new as
 * the header a binding was written for. */
#define RT_VERSION_NUM ((RT_VERSION_MAJOR << 16) | (RT_VERSION_MINOR << 8) | RT_VERSION_PATCH)

/* Symbols exported from the shared library; everything else stays internal. */
#if defined(RT_BUILDING_LIBRARY) && defined(__GNUC__)
#define RT_API __attribute__((visibility("default")))
#else
#define RT_API
#endif

/* Marks a name kept for bindings built before its replacement (resource_tracker/deprecated.h;
 * see Conventions in resource_tracker.h). */
#if defined(RT_BUILDING_LIBRARY) || defined(RT_NO_DEPRECATED_WARNINGS)
#define RT_DEPRECATED(replacement)
#elif defined(__GNUC__)
#define RT_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#else
#define RT_DEPRECATED(replacement)
#endif

/* The library declares, and so exports (RT_API), every part: the experimental and deprecated
 * names too. */
#if defined(RT_BUILDING_LIBRARY) && (!defined(RT_EXPERIMENTAL_API) || defined(RT_NO_DEPRECATED))
#error "the library is built with RT_EXPERIMENTAL_API and without RT_NO_DEPRECATED"
#endif

/* Error codes. The numbers never change; new codes are only added at the end. */
typedef enum rt_error {
    RT_OK = 0,
    RT_ERR_NOMEM = 1,       /* an allocation failed or a buffer reached its maximum */
    RT_ERR_INVALID = 2,     /* an argument is out of range or inconsistent */
    RT_ERR_IO = 3,          /* a read or write failed */
    RT_ERR_PARSE = 4,       /* a kernel file had an unexpected shape */
    RT_ERR_NOT_FOUND = 5,   /* a file, process or device does not exist */
    RT_ERR_UNSUPPORTED = 6, /* the machine lacks what the call needs */
    RT_ERR_SYSTEM = 7,      /* a system call failed; errno tells more */
    RT_ERR_DISABLED = 8,    /* the caller's options turned the feature off */
} rt_error;

/* Returns a static, never-NULL English description of err. */
RT_API const char *rt_strerror(rt_error err);

/* Returns the library version string, e.g. "0.2.0" (static storage). */
RT_API const char *rt_version(void);

/* Returns the library's RT_VERSION_NUM (the loaded library's, not the header's). */
RT_API unsigned rt_version_num(void);

/* Log levels passed to the log callback. */
typedef enum rt_log_level { RT_LOG_DEBUG = 0, RT_LOG_INFO = 1, RT_LOG_WARN = 2, RT_LOG_ERROR = 3 } rt_log_level;

/* The library never prints: it hands messages to this callback, if set. msg is valid only
 * during the call. The callback may be called from the cloud discovery's threads. */
typedef void (*rt_log_fn)(void *user, rt_log_level level, const char *msg);

/* The last error message of the calling thread (libgit2's git_error_last): what the
 * last failing call among those whose contract says "last error" could say beyond its code,
 * in one line for people ("run.jsonl:12: not a JSON object", "unknown memory unit \"mb\"").
 * Those calls clear it when they begin, so after one of them failed it is its own message, or
 * "" when it had nothing to add to rt_strerror. Never NULL; valid until the thread's next call
 * into the library. Read it only after such a call failed: other calls may leave it as it
 * was or change it. */
RT_API const char *rt_last_error_message(void);

/* Where a `_cb` output call sends its bytes, instead of a file descriptor: called on
 * the caller's thread, in order, with len > 0. Returns how many bytes of buf it took (it is
 * called again with the rest), or -1 to fail the output (errno, when set, is kept: the call
 * returns RT_ERR_IO). A return of 0 also fails it (as EIO). */
typedef long (*rt_write_fn)(void *user, const void *buf, size_t len);

/* ------------------------------------------------------------------------------------------
 * Missing values. A figure the machine cannot report is "null": NaN for doubles,
 * RT_NULL_U64 / RT_NULL_I64 for integers, NULL for strings. Never a made-up zero. */
#define RT_NULL_U64 UINT64_MAX
#define RT_NULL_I64 INT64_MIN

#ifdef __cplusplus
}
#endif
#endif
