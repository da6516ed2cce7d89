/* tracker_int.h - the embedded tracker's state, shared by tracker.c (the thread and the
 * public calls) and snapshot.c (saving and loading a run). Internal. */
#ifndef RT_EMBED_TRACKER_INT_H
#define RT_EMBED_TRACKER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "../core/clock.h"
#include "../analysis/energy_words.h"
#include "../core/core.h"
#include "../store/store.h"

/* A mark the run took, as the snapshot saves it (marks.c keeps them, under the tracker's lock). */
typedef struct rt_mark_entry {
    int kind, cpu_source;
    unsigned name;   /* index into the log's names */
    int64_t pid;
    double timestamp, cpu, read_bytes, write_bytes, rss_mib, memory_peak_mib, lag;
    uint64_t before; /* the index of the sample it came before (the store's count then) */
} rt_mark_entry;

#define RT_MARK_LOG_MAX 262144u /* marks kept for the snapshot (the statistics take every one) */

typedef struct rt_mark_log {
    rt_mark_entry *e;
    size_t n, cap;
    char **names; /* RT_PHASE_MAX_NAMES slots, allocated at the first mark; never moved */
    size_t nnames;
} rt_mark_log;

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
    rt_cores_table cores_copy;        /* and its table under other core counts, */
    rt_cores_row *cores_rows;         /* whose rows are here (cap_cores_rows) */
    size_t cap_cores_rows;
    rt_energy_parts_copy parts_copy;  /* and its energy by part (analysis/energy_words.h) */
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
    /* phases (marks.c) */
    struct rt_mark_ring *ring; /* the queue of rt_tracker_phase_start/stop (NULL: loaded) */
    atomic_int marks_open;     /* the calls queue marks: running, in the process that started it */
    int64_t owner_pid;         /* that process */
    bool stamp_cpu;            /* the tree's root is that process: marks stamp its exact CPU */
    bool stamp_children;       /* ... with the children it reaped (descendants tracked) */
    int64_t stamp_base_ns;     /* the stamp at rt_tracker_start */
    double phase_check_secs;   /* how often the thread takes marks once there was one */
    bool marks_pending;        /* marks went to the pipeline since the last sample */
    rt_mark_log marks;         /* the marks taken (under mu), for the snapshot */
};

/* ---- marks.c: the phase marks of an embedded tracker --------------------------------------- */

/* Makes t's ring of marks and its stamp's base (rt_tracker_start, before the thread): RT_OK,
 * RT_ERR_NOMEM. */
rt_error rt_tracker_marks_open(rt_tracker *t, bool stamp_cpu, bool stamp_children);
/* Whether the run has had a mark (the thread then checks every phase_check_secs). */
bool rt_tracker_marks_used(const rt_tracker *t);
/* On the tracker's thread with t->mu held: takes the marks queued now, reads the tree once for
 * them (the lock released meanwhile, t->sampling set) and hands them to the pipeline, with
 * the refusals counted since the last drain. */
void rt_tracker_marks_drain_locked(rt_tracker *t);
/* Under t->mu: hands m to the pipeline and, when it takes it, keeps it for the snapshot (before
 * the next sample to come). Returns what rt_pipeline_mark returns. */
rt_error rt_tracker_mark_locked(rt_tracker *t, const rt_phase_mark *m);
/* Frees the ring and the marks kept (rt_tracker_free). */
void rt_tracker_marks_close(rt_tracker *t);

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
