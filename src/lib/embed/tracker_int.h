/* tracker_int.h - the embedded tracker's state, shared by tracker.c (the thread and the
 * public calls) and snapshot.c (saving and loading a run). Internal. */
#ifndef RT_EMBED_TRACKER_INT_H
#define RT_EMBED_TRACKER_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "../core/clock.h"
#include "../store/store.h"

struct rt_tracker {
    pthread_mutex_t mu;  /* guards everything below that the thread changes */
    pthread_cond_t cv;   /* signalled after each sample and when the thread ends */
    pthread_t thread;
    bool thread_started; /* a thread was created and not yet joined */
    bool running;        /* the thread samples; false once stopping, loaded or forked */
    bool stop_asked;
    rt_sampler *sampler; /* used by the thread only (and by start/stop around it) */
    rt_store *store;
    rt_stats *stats;
    rt_report *report;
    rt_pipeline *pipe;   /* the samples' fan-out: to the statistics and the report */
    rt_summary summary_copy; /* what rt_tracker_summary hands out */
    rt_usage usage_copy;     /* and its usage */
    struct rt_phase_copy *phase_copy; /* and its phases (analysis/phases.h) */
    /* what the run was asked for, and when */
    int64_t pid;         /* the root's pid; 0 without a tracked tree */
    bool children;       /* descendants tracked */
    double interval_secs;
    uint64_t max_samples;
    double start_time;   /* Unix time of the baseline reading */
    double stop_time;    /* Unix time of rt_tracker_stop (the last sample's); 0 while running */
    rt_job job;          /* copied: strings and tags in job_block (rt_job_dup) */
    void *job_block;
    rt_log_fn log;
    void *log_user;
    rt_sample_fn on_sample;
    void *on_sample_user;
    char *saved_info;    /* loaded trackers: {"metadata", "server_info", "cloud_info"} */
    struct rt_tracker *next_live; /* the list pthread_atfork walks (tracker.c) */
    /* tracker.c's own (the thread's clock; fork waits while the thread is in the sampler) */
    rt_clock *clock;     /* the grid's and the waits' clock (NULL: the real one); borrowed */
    double mono_start;   /* clock's time of the baseline reading: the grid's origin */
    double mono_last;    /* of the last reading */
    bool sampling;       /* the thread is reading (outside the lock) */
    pthread_t self;      /* the tracker's thread, as it set it itself (valid while running) */
    unsigned waiters;    /* callers blocked in rt_tracker_wait / rt_tracker_stop: free waits them out */
};

/* A stopped tracker with an empty store, its statistics and report fed by its pipeline, the
 * records carrying job's job_name (job copied; may be NULL): for rt_tracker_start, which then
 * starts the thread, and rt_tracker_load; pid, children, interval, start and stop times set by
 * the caller afterwards. RT_OK and *out; RT_ERR_NOMEM; RT_ERR_INVALID (job's struct_size). */
rt_error rt_tracker_new_stopped(uint64_t max_samples, const rt_job *job, rt_tracker **out);

/* rt_tracker_start with the thread's grid, its waits and rt_tracker_wait's timeout on clock
 * (NULL: the real clock, as rt_tracker_start), which must outlive the tracker: for the tests,
 * which step it. A forked child's copy goes back to the real clock (it waits on none). */
rt_error rt_tracker_start_clock(const rt_tracker_options *opts, rt_clock *clock, rt_tracker **out);

/* Adds one row as a sample: the store, the statistics and the report (takes the lock).
 * 0, or -1 when the store is out of memory (the statistics and the report still have it). */
int rt_tracker_add_row(rt_tracker *t, const double row[RT_NCOLS]);

#endif
