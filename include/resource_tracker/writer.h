/* resource_tracker/writer.h - output: the writer of JSON lines and CSV (rt_writer,
 * rt_format_sample). Part of the public C API of libresource-tracker; include
 * <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_WRITER_H
#define RESOURCE_TRACKER_WRITER_H

#include "sample.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Output: JSON lines (one object per sample) or CSV (header once, one row per sample). */

/* RT_FORMAT_CSV: the 32 columns the Python and Rust trackers share (docs/contracts.md §3:
 * only those, as the Rust tool writes them). RT_FORMAT_JSON_RS: the JSON line of the Rust
 * resource-tracker 0.1.14 (its sample's names, nesting, key order, types and units; docs/output.md
 * "The Rust tool's JSON lines"). RT_FORMAT_CSV_ENERGY: the 32 columns, then the four
 * energy columns (system_energy_joules, system_energy_method, process_energy_joules,
 * process_energy_method), as earlier versions wrote every CSV (CHANGELOG.md). Values are only ever added at
 * the end. */
typedef enum rt_format {
    RT_FORMAT_JSON = 0,
    RT_FORMAT_CSV = 1,
    RT_FORMAT_JSON_RS = 2,
    RT_FORMAT_CSV_ENERGY = 3
} rt_format;

typedef struct rt_writer rt_writer;

/* Creates a writer that writes each sample to fd with a single write(2) (so a reader sees
 * whole lines at once). The fd stays owned by the caller. job may be NULL; it is copied, but
 * the strings it points to must outlive the writer. Returns RT_OK and *out, or RT_ERR_NOMEM /
 * RT_ERR_INVALID (a bad format or fd, a job struct_size too small; the last error says which). */
RT_API rt_error rt_writer_new(rt_format format, int fd, const rt_job *job, rt_writer **out);
/* The same handing each sample (the CSV header with the first) to write(user, ...) in one
 * call; write must not be NULL. */
RT_API rt_error rt_writer_new_cb(rt_format format, rt_write_fn write, void *user, const rt_job *job,
                                 rt_writer **out);

/* Formats and writes one sample (the CSV header first, once). Returns RT_OK, or RT_ERR_IO
 * with errno set when the write failed (EPIPE for a closed pipe). */
RT_API rt_error rt_writer_write(rt_writer *w, const rt_sample *sample);

/* Frees the writer (does not close the fd). NULL is allowed. */
RT_API void rt_writer_free(rt_writer *w);

/* Formats one sample into buf (NUL-terminated, with the trailing newline). Returns the length
 * it needs, excluding the NUL, like snprintf: a result >= cap means buf was too small. With
 * RT_FORMAT_CSV this is one row without the header. job may be NULL. It keeps no state: with
 * RT_FORMAT_JSON_RS, actual_interval_ms comes from the sample's interval (a writer leaves it out
 * of its first sample, as the Rust tool does) and the per-interval cgroup figures, which need
 * the previous sample, are null (a writer has them from its second sample on). */
RT_API size_t rt_format_sample(rt_format format, const rt_sample *sample, const rt_job *job, char *buf, size_t cap);

/* Returns the CSV header line of docs/contracts.md §3, with its newline (static storage): the 32
 * shared columns (RT_FORMAT_CSV_ENERGY adds the four energy columns). */
RT_API const char *rt_csv_header(void);

/* The header line of a CSV format: rt_csv_header() for RT_FORMAT_CSV, the 32 columns and
 * the four energy columns for RT_FORMAT_CSV_ENERGY; NULL for the JSON formats. */
RT_API const char *rt_format_header(rt_format format);

#ifdef __cplusplus
}
#endif
#endif
