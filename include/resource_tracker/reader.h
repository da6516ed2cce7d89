/* resource_tracker/reader.h - the reader: recorded runs, one record at a time, in constant memory
 * (rt_reader_*).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_READER_H
#define RESOURCE_TRACKER_READER_H

#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the reader: recorded runs, one record at a time, in constant memory --------------
 * Reads the tool's JSON lines and CSV (docs/contracts.md §2, §3) and the Python
 * resource-tracker's CSV files (ProcessTracker, SystemTracker, and the combined process_* /
 * system_* columns: docs/contracts.md §13), recognised by their first line. A malformed line is
 * logged once as "FILE:LINE: problem" (RT_LOG_WARN) and skipped. */
typedef struct rt_reader rt_reader;

typedef struct rt_reader_options {
    size_t struct_size; /* sizeof(rt_reader_options) as the caller compiled it */
    rt_log_fn log;      /* NULL: messages are dropped */
    void *log_user;
} rt_reader_options;

#define RT_READER_OPTIONS_INIT {.struct_size = sizeof(rt_reader_options)}

/* Opens path ("-" is stdin; gzip, told by its magic, is read through zlib as a stream).
 * Returns RT_OK and *out (free with rt_reader_free), RT_ERR_NOT_FOUND / RT_ERR_IO when it
 * cannot be opened, RT_ERR_PARSE when the first line is no format the reader knows or is
 * longer than 16 MiB, RT_ERR_UNSUPPORTED for gzip when zlib cannot be loaded, RT_ERR_NOMEM,
 * RT_ERR_INVALID. Every failure but the last two is also logged (RT_LOG_ERROR) with the file's
 * name and the reason, which is the last error (and so for rt_reader_open_buffer, which reads
 * no gzip). `_open`, not `_new`: it opens a file, as fopen. Memory does not grow with the
 * file: at most the longest line and 1 MiB more (docs/contracts.md §2). */
RT_API rt_error rt_reader_open(const char *path, const rt_reader_options *opts, rt_reader **out);

/* The same over a buffer in memory (name is used in messages; buf must outlive the reader). */
RT_API rt_error rt_reader_open_buffer(const char *name, const char *buf, size_t len,
                                      const rt_reader_options *opts, rt_reader **out);

/* The next record: RT_OK with *out set (valid until the next call), RT_OK with *out NULL at
 * the end, RT_ERR_IO when reading failed, RT_ERR_PARSE at a line longer than 16 MiB
 * (logged as "FILE:LINE: a line longer than 16 MiB ...", rt_reader_errmsg: no recorded run has
 * one, so the rest is not read), RT_ERR_NOMEM. Each comes after the records before it, and
 * stays: every later call returns it again. */
RT_API rt_error rt_reader_next(rt_reader *r, const rt_record **out);

/* "json", "csv" (docs/contracts.md §3), "python-process", "python-system" or "python-combined";
 * "json-rs" for the Rust resource-tracker's JSON lines (ours with --format json-rs) once
 * a line of them was read. */
RT_API const char *rt_reader_format(const rt_reader *r);

/* Records returned so far, and malformed lines skipped so far. */
RT_API uint64_t rt_reader_records(const rt_reader *r);
RT_API uint64_t rt_reader_skipped(const rt_reader *r);

/* The reader's own last problem (sqlite3_errmsg): "FILE:LINE: problem" of the last
 * malformed line skipped, or the error of rt_reader_next; "" when none. Valid until the
 * next call on r. */
RT_API const char *rt_reader_errmsg(const rt_reader *r);

/* Closes the file and frees the reader. NULL is allowed. */
RT_API void rt_reader_free(rt_reader *r);

#ifdef __cplusplus
}
#endif

#endif
