/* resource_tracker/report.h - the HTML report (rt_report_*).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_REPORT_H
#define RESOURCE_TRACKER_REPORT_H

#include "notes.h"
#include "keeper.h"
#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the HTML report ------------------------------------------------------------------- */

/* Collects a run's records for the charts in bounded memory: long runs are reduced to about
 * 2,000 points per series, each with the min and max of what it stands for, so that a
 * one-second spike in a day still shows. */
typedef struct rt_report rt_report;

/* Options of the report's collection: none yet but the size, room to grow. */
typedef struct rt_report_options {
    size_t struct_size; /* sizeof(rt_report_options) as the caller compiled it */
} rt_report_options;

#define RT_REPORT_OPTIONS_INIT {.struct_size = sizeof(rt_report_options)}

/* A new, empty collection (opts NULL for defaults). Returns RT_OK and *out (free with
 * rt_report_free), RT_ERR_INVALID (out NULL, struct_size too small; last error),
 * RT_ERR_NOMEM. */
RT_API rt_error rt_report_new_with(const rt_report_options *opts, rt_report **out);
/* Adds one record of rec_size bytes, sizeof(rt_record) as the caller compiled it (see
 * rt_record for what is read of it). A record whose time or interval is beyond 1e11 s (past the
 * year 5000, or nonsense) is ignored, and so is a NULL r or rec or a rec_size 0. A record
 * shorter than half the one before (the reading as the job ended) ends the last point instead
 * of making one; the reading after the job's end (process_alive 0, nothing of its tree left,
 * its memory 0) adds no memory or GPU level of the job. */
RT_API void rt_report_add_sized(rt_report *r, const rt_record *rec, size_t rec_size);
RT_API void rt_report_free(rt_report *r);

/* What the report shows besides the charts; any pointer may be NULL (then left out). */
typedef struct rt_report_info {
    size_t struct_size;                /* sizeof(rt_report_info) as the caller compiled it */
    const char *title;                 /* NULL: the job name or "resource-tracker run" */
    const rt_job *job;
    const char *command;               /* the wrapped command as one line */
    const rt_host *host;
    const rt_cloud *cloud;
    int exit_status;                   /* -1: unknown */
    const rt_summary *summary;
    const rt_recommendation *recommendation;
    const rt_server *cheapest;         /* with its price */
    const char *keeper_note;           /* e.g. why the lookup failed */
    double current_price_usd_per_hour; /* where the run ran; NaN: unknown */
    const char *current_instance;      /* "vendor:type" */
    const char *cgroup_why;            /* why the job had no cgroup of its own, for the notes
                                        * (rt_notes_options.cgroup_why); NULL: not known */
    const struct rt_job_view *job_view; /* the runs are a job's nodes (rt_job_view_new): the page
                                        * opens with the job on its nodes, and the rest of it
                                        * (summary, recommendation, charts) is of node_shown */
    const char *node_shown;            /* the node the rest of the page is of; NULL: not said */
    /* the Python package's report */
    int run_state;                     /* how the run stands (rt_run_state), a figure of the answer
                                        * that takes in the exit status; 0: not said */
    int wording;                       /* the page's words (rt_report_wording); 0: its own */
    /* 0.19: where a smaller GPU would do (rt_recommendation.gpu_smaller), the cheapest server with
     * GPUs like the one the job had, with its price: the GPU ask's saving against cheapest */
    const rt_server *gpu_like_this;
} rt_report_info;

#define RT_REPORT_INFO_INIT {.struct_size = sizeof(rt_report_info), .exit_status = -1}

/* How the run stands when its report is written (rt_report_info.run_state): the answer's
 * status figure, "Running" (or "Pending"; the figures are those so far), "Finished" or "Failed"
 * (in red; its figures may be incomplete), with the exit status when known, in place of the
 * exit status figure. RT_RUN_UNSAID: no status figure (the exit status figure alone). */
typedef enum rt_run_state {
    RT_RUN_UNSAID = 0,
    RT_RUN_RUNNING = 1,
    RT_RUN_FINISHED = 2,
    RT_RUN_FAILED = 3,
} rt_run_state;

/* The HTML page's words (rt_report_info.wording). RT_REPORT_WORDING_PY05: those the
 * Python resource-tracker 0.5's report shows, which its users know: the charts titled "CPU
 * Usage", "Memory Usage", "Disk I/O Usage", "Network Usage", "Disk Space Usage", "GPU Usage",
 * "VRAM Usage" (and "Power Usage"), their lines "Process CPU usage", "System CPU usage",
 * "Process memory usage (PSS)", ..., and the status "Pending" for a run still running (the
 * Python package sets it; the tool keeps its own words: "CPU", "job", "machine", "Running"). */
typedef enum rt_report_wording {
    RT_REPORT_WORDING_OWN = 0,
    RT_REPORT_WORDING_PY05 = 1,
} rt_report_wording;

/* Writes the report, one self-contained HTML file that makes no request, to fd: the answer
 * first (what the job used, its exit status or how it stands, what to ask for, the cost, the
 * notes), then the charts (a run under an hour in time since its start, a longer one in UTC
 * clock time; a chart of zeros or of a flat level as one line of text), then the tables; in
 * info's wording. Returns RT_OK, RT_ERR_IO (errno set), RT_ERR_NOMEM or RT_ERR_INVALID. */
RT_API rt_error rt_report_write(const rt_report *r, const rt_report_info *info, int fd);
/* The same to write(user, ...), in pieces of at most 64 KiB. */
RT_API rt_error rt_report_write_cb(const rt_report *r, const rt_report_info *info, rt_write_fn write, void *user);

#ifdef __cplusplus
}
#endif

#endif
