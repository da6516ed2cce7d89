/* resource_tracker.h - the public C API of libresource-tracker.
 * Samples CPU, memory, disk, network and GPUs of a Linux machine and of a process tree, and
 * formats each sample as a JSON line or a CSV row. The resource-tracker tool uses only this.
 * This header includes one header per part, under resource_tracker/; a program includes this
 * one (each part also compiles on its own, including what it needs).
 *
 * Contents (the parts, in order: resource_tracker/NAME.h):
 *   version.h   versions (RT_VERSION_*), RT_API, RT_DEPRECATED, errors, the last error
 *               message, logging, output callbacks, missing values ........... stable
 *   sample.h    one sample (rt_sample and the structs it points to) ......... stable
 *   schema.h    the sample's schema (rt_schema_field_*) ............... EXPERIMENTAL
 *   sampler.h   the sampler ................................................... stable
 *   counters.h  counters read now: a process tree's and the machine's ........ stable
 *   cgroup.h    a cgroup of the job's own ..................................... stable
 *   host.h      the host and the cloud it runs in (rt_host, rt_allocation,
 *               rt_cloud) ..................................................... stable
 *   job.h       job metadata (rt_job) ......................................... stable
 *   writer.h    output: the writer (JSON lines, CSV) .......................... stable
 *   record.h    one record: the figures of a sample the analysis uses ...... stable
 *   reader.h    recorded runs read back, one record at a time ............... stable
 *   stats.h     statistics over records: the summary, needs, the cores table,
 *               gpu_tracker's view ............................................ stable
 *   recommend.h recommendations: what to ask for next time ................. stable
 *   notes.h     notes a person can act on ..................................... stable
 *   keeper.h    the cheapest server (Spare Cores Keeper) ..................... stable
 *   report.h    the HTML report ............................................... stable
 *   analysis.h  the seven parts above together (one header until 0.18) ....... stable
 *   summary.h   a run for people (the text summary), any recorded run read back  stable
 *   jobview.h   a job on several nodes: its runs put together (rt_job_view)  EXPERIMENTAL
 *   stream.h    streaming a run to the Sentinel API and S3 ................... stable
 *   embed.h     embedding: a background tracker, its columns, saving, loading  stable
 *   export.h    export: Prometheus /metrics, node_exporter textfile, OTLP/HTTP  stable
 *   pipeline.h  sinks and the pipeline: where samples go, one fan-out .. EXPERIMENTAL
 *   phase.h     phases of a job: named stretches marked by the job ..... EXPERIMENTAL
 *   energy.h    energy and carbon: measured, sampled or estimated, and the job's
 *               share ........................................................ EXPERIMENTAL
 *   request.h   what the job was given (rt_request) and its place in a job of
 *               several nodes (rt_member), which samples and summaries point to  stable
 *   place.h     where the job runs: SLURM, Kubernetes, GitHub Actions (rt_place)  EXPERIMENTAL
 *   ci_summary.h  a run's summary for CI and workflow engines (Markdown,
 *               Snakemake, Nextflow) ........................................ EXPERIMENTAL
 *   helper.h    the static build's loader helper: its processes reaped and told
 *               from the job's, a library probed through it ............. EXPERIMENTAL
 *   sqlite.h    SQLite loaded at first use (dlopen, or through the helper)  EXPERIMENTAL
 *   db.h        a run history: SQLite or PostgreSQL (libpq at first use)    EXPERIMENTAL
 *   history.h   a run history read back: its runs as summaries, its columns EXPERIMENTAL
 *   deprecated.h  the names kept for older bindings (RT_DEPRECATED) ........ stable
 * Stable parts follow the ABI rules below. An EXPERIMENTAL part may change or go in a minor
 * version (0.x to 0.x+1): a binding looks each of its symbols up at load time and copes
 * without it.
 *
 * What is declared (define these before including this header, as zstd's
 * ZSTD_STATIC_LINKING_ONLY):
 *  - RT_EXPERIMENTAL_API: the EXPERIMENTAL parts too. Without it they are not declared, so a
 *    program that compiles without it uses the stable parts alone. (The library exports the
 *    experimental symbols either way.)
 *  - RT_NO_DEPRECATED: the deprecated names are not declared (deprecated.h is not included),
 *    so a program that compiles with it is sure to use none of them.
 *  - RT_NO_DEPRECATED_WARNINGS: the deprecated names are declared without the compiler's
 *    warning.
 *
 * ABI rules (what a binding compiled against an older copy of this header may rely on):
 *  - The shared library's SONAME is libresource-tracker.so.MAJOR. Within one MAJOR version the
 *    ABI only grows: functions, enum values and error codes are added, never removed, renamed
 *    or renumbered, and never change meaning. Anything else bumps MAJOR, and so the SONAME.
 *  - Structs the library fills and hands out by pointer (rt_sample and everything it points to,
 *    rt_host, rt_cloud) grow only at their end. Every struct of a sample is reached through a
 *    pointer, and its arrays are arrays of pointers, so a caller never depends on a size.
 *  - Structs the caller fills (the *_options structs, rt_job) begin with `size_t struct_size`,
 *    which the caller sets to sizeof as it was compiled (the *_INIT macros do this). The
 *    library reads only the fields within struct_size and takes the default for the rest.
 *  - Structs the library fills in the caller's memory take the caller's size: a struct_size
 *    member the caller sets (rt_recommendation, rt_server) or a size argument (rt_record:
 *    rt_record_from_sample_sized, rt_tracker_record). The library writes no byte past it. A
 *    record the caller hands in takes its size too (rt_stats_add_sized, rt_report_add_sized,
 *    rt_pipeline_add_record): the library reads no byte past it, and its newer members
 *    are null.
 *  - The library reads no environment variable: the front end (the tool, a binding) turns
 *    TRACKER_* variables into options.
 *
 * Conventions (the names from before them are deprecated aliases, see the last point):
 *  - Making a handle: `rt_error rt_X_new(..., rt_X **out)` makes it on the calling thread;
 *    `rt_X_start(...)` also starts a thread of its own; `rt_X_free(x)` releases it (NULL is
 *    allowed). On an error *out is NULL. Two verbs say what the argument is, as fopen and
 *    sqlite3_open do: `rt_reader_open` reads a recorded file or buffer, `rt_tracker_load` a
 *    saved snapshot. Where the pointer-returning `_new` of an accumulator came first
 *    (rt_stats_new, rt_report_new, rt_allocation_new), the conforming form is `_new_with`,
 *    which also takes the options (NULL: the defaults).
 *  - Errors: a call that can fail returns rt_error, never -errno nor a 0 that means "failed"
 *    (the two that did, rt_job_cgroup_enter and rt_format_summary, are deprecated). Only
 *    formatters into a caller's buffer return the length needed, like snprintf, and getters
 *    NULL or -1 where their contracts say. The calls whose contract says "last error" clear
 *    the calling thread's last error message when they begin and set it when they fail
 *    (rt_last_error_message: the file and line, the option, the reason in words, as the log
 *    callback also hears it); a reader keeps its own (rt_reader_errmsg), and a handle with a
 *    thread of its own the last failure that thread met (rt_otlp_errmsg, rt_stream_errmsg,
 *    rt_prom_errmsg: sqlite3_errmsg for handles whose failures come later than any call).
 *  - Output: every call that writes to a file descriptor has a `_cb` twin that hands the
 *    bytes to an rt_write_fn instead (a binding captures output without a temporary file).
 *  - Deprecated names are marked RT_DEPRECATED: the compiler warns where they are used,
 *    unless RT_NO_DEPRECATED_WARNINGS is defined before this header is included. They stay
 *    declared and exported, behaving as before, for the rest of the MAJOR version (the ABI
 *    rules), and go with the next MAJOR; they are declared in resource_tracker/deprecated.h,
 *    which RT_NO_DEPRECATED leaves out. */
#ifndef RESOURCE_TRACKER_H
#define RESOURCE_TRACKER_H

#include "resource_tracker/version.h"
#include "resource_tracker/sample.h"
#include "resource_tracker/schema.h"
#include "resource_tracker/sampler.h"
#include "resource_tracker/counters.h"
#include "resource_tracker/cgroup.h"
#include "resource_tracker/host.h"
#include "resource_tracker/job.h"
#include "resource_tracker/writer.h"
#include "resource_tracker/record.h"
#include "resource_tracker/reader.h"
#include "resource_tracker/stats.h"
#include "resource_tracker/recommend.h"
#include "resource_tracker/notes.h"
#include "resource_tracker/keeper.h"
#include "resource_tracker/report.h"
#include "resource_tracker/analysis.h"
#include "resource_tracker/summary.h"
#include "resource_tracker/jobview.h"
#include "resource_tracker/stream.h"
#include "resource_tracker/embed.h"
#include "resource_tracker/export.h"
#include "resource_tracker/pipeline.h"
#include "resource_tracker/phase.h"
#include "resource_tracker/energy.h"
#include "resource_tracker/request.h"
#include "resource_tracker/place.h"
#include "resource_tracker/ci_summary.h"
#include "resource_tracker/helper.h"
#include "resource_tracker/sqlite.h"
#include "resource_tracker/db.h"
#include "resource_tracker/history.h"
#ifndef RT_NO_DEPRECATED
#include "resource_tracker/deprecated.h"
#endif

#endif
