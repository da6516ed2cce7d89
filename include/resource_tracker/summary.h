/* resource_tracker/summary.h - a run for people (the text summary) and any recorded run read back
 * (rt_run_read). Part of the public C API of libresource-tracker; include <resource_tracker.h>,
 * which includes
 * every part. */
#ifndef RESOURCE_TRACKER_SUMMARY_H
#define RESOURCE_TRACKER_SUMMARY_H

#include "analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a run for people, and any recorded run read back -----------------------------------
 * rt_summary_write_text_cb: the summary `resource-tracker summary` and --summary print.
 * rt_run_read: a recorded run of any kind the library writes or reads (JSON lines, CSV, the
 * Python resource-tracker's CSV files, a saved tracker snapshot), told apart by its content,
 * fed to statistics and a report. */

/* Text goes to an rt_write_fn (above): a short count is called again with the rest; -1 or 0
 * fails the output (nothing more is written). */

/* What the one who ran a job knows of it that its statistics do not hold. The caller fills it
 * (the pointers are only read during the call). */
typedef struct rt_run_facts {
    size_t struct_size;         /* sizeof(rt_run_facts) as the caller compiled it */
    const rt_job *job;          /* NULL: none; its job_name is shown before the statistics' */
    const char *const *command; /* the command's argv, NULL-terminated; NULL: none */
    int64_t pid;                /* the process tracked (shown when there is no command); 0: none */
    int exit_status;            /* -1: none (a --pid or the machine); above 128: killed by
                                 * signal exit_status - 128 */
    double start_secs;          /* Unix time; 0 or NaN: the first sample's */
    double end_secs;            /* Unix time; 0 or NaN: the last sample's */
    const rt_host *host;        /* NULL: not read */
    const rt_cloud *cloud;      /* NULL (or no vendor_id): said to be "none found" */
    const char *cgroup_why;     /* as rt_notes_options.cgroup_why; NULL: not known */
} rt_run_facts;

#define RT_RUN_FACTS_INIT {.struct_size = sizeof(rt_run_facts), .exit_status = -1}

typedef struct rt_summary_text_options {
    size_t struct_size;      /* sizeof(rt_summary_text_options) as the caller compiled it */
    const char *memory_unit; /* gpu_tracker's names as rt_format_summary; NULL: B, KiB, MiB,
                              * GiB, TiB as fits each figure */
    const char *time_unit;   /* gpu_tracker's names; NULL: "12.34 s", "3 min 04.5 s", ... */
    int scheduler;           /* rt_scheduler whose words the "Ask for" line takes */
    int width;               /* the answer's lines break before this column; 0: 100 */
    int brief;               /* nonzero: the answer and one line of the run only (how long it
                              * ran, its exit status): the end of the tool's view on a terminal */
} rt_summary_text_options;

#define RT_SUMMARY_TEXT_OPTIONS_INIT {.struct_size = sizeof(rt_summary_text_options), .scheduler = RT_SCHED_SLURM}

/* Writes the summary of s as aligned text, UTF-8, lines ending in a newline: the answer (what
 * the job used, what to ask for, the notes), the run (with run's facts; NULL run: a recorded
 * file, whose job, command, host and cloud are not known), the job's process tree,
 * gpu_tracker's parts, the cgroup's limits and pressure, the machine (with opts->brief: the
 * answer and a line "Ran DURATION, exit status N" only). write is handed whole
 * lines (a line, or a note broken over a few; more than 1 KiB in pieces). opts may be NULL. Returns RT_OK;
 * RT_ERR_INVALID for a NULL s or write, an unknown unit or scheduler, a struct_size smaller
 * than a size_t (nothing written); RT_ERR_IO when write failed (what came before stays
 * written). */
RT_API rt_error rt_summary_write_text_cb(const rt_summary *s, const rt_run_facts *run,
                                         const rt_summary_text_options *opts, rt_write_fn write, void *user);

/* The same to a file descriptor (short writes and EINTR retried); RT_ERR_IO with errno set
 * when a write failed, RT_ERR_INVALID for a negative fd. */
RT_API rt_error rt_summary_write_text(const rt_summary *s, const rt_run_facts *run,
                                      const rt_summary_text_options *opts, int fd);

/* text written after used columns into out[cap], broken at spaces so that no line passes
 * width columns (UTF-8 characters, not bytes; 0: never broken; a word longer than a line stands
 * alone on its line; a '\x1f' byte is a space no line is broken at, written as a space), each line
 * after the first starting with indent spaces: how the summary's
 * answer breaks its lines (rt_summary_text_options.width), for a caller's lines beside it.
 * Returns the bytes written; out is always terminated (cut at cap). */
RT_API size_t rt_text_wrap(const char *text, size_t used, size_t indent, size_t width, char *out, size_t cap);


typedef struct rt_run_read_options {
    size_t struct_size; /* sizeof(rt_run_read_options) as the caller compiled it */
    rt_log_fn log;      /* the reader's "FILE:LINE: problem" warnings and errors; NULL: dropped */
    void *log_user;
} rt_run_read_options;

#define RT_RUN_READ_OPTIONS_INIT {.struct_size = sizeof(rt_run_read_options)}

/* What rt_run_read found; the library fills it (the caller sets struct_size). */
typedef struct rt_run_read_info {
    size_t struct_size; /* caller sets sizeof(rt_run_read_info) */
    const char *format; /* rt_reader_format's names, or "snapshot"; NULL until known (static) */
    uint64_t records;   /* samples fed to the statistics */
    uint64_t skipped;   /* malformed lines skipped (each logged as a warning) */
    int opened;         /* 1 once the file was open and its kind known: a failure after that
                         * is one while reading (a snapshot is read whole when it opens) */
    int logged;         /* 1: message was handed to opts->log as well (the reader's own) */
    char message[512];  /* why it failed, "FILE: problem" or "FILE:LINE: problem"; "" on RT_OK */
} rt_run_read_info;

/* Reads the recorded run at path ("-": stdin, never a snapshot) and feeds every sample to
 * each of stats[0..nstats) and to report (NULL: none). A snapshot is known as a JSON document
 * opening with "metadata", gzipped or not;
 * anything else goes to the reader (rt_reader_open), which streams it, gzipped or not.
 * Malformed lines are skipped and logged, never fatal; a line longer than 16 MiB ends the read
 * (RT_ERR_PARSE, what came before fed). info may be NULL. Returns RT_OK (at least one sample
 * read); RT_ERR_NOT_FOUND or RT_ERR_IO when the file cannot be opened;
 * RT_ERR_PARSE for no format known, a line too long or no valid sample at all (a snapshot
 * that does not load: rt_tracker_load's error);
 * RT_ERR_IO when reading failed midway (info->opened 1: the statistics hold what came
 * before); RT_ERR_NOMEM; RT_ERR_INVALID (a NULL path, stats NULL with nstats > 0, a
 * struct_size smaller than a size_t). */
RT_API rt_error rt_run_read(const char *path, const rt_run_read_options *opts, rt_stats *const *stats,
                            size_t nstats, rt_report *report, rt_run_read_info *info);

#ifdef __cplusplus
}
#endif
#endif
