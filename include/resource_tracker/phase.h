/* resource_tracker/phase.h - phases of a job: named stretches marked by the job (rt_phase_*).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_PHASE_H)
#define RESOURCE_TRACKER_PHASE_H

#include "sampler.h"
#include "embed.h"
#include "pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==========================================================================================
 * Phases of a job (experimental: may change in a minor version)
 *
 * A phase is a named stretch of a job ("load", "train", "write"), opened and closed by marks:
 * the embedded tracker's rt_tracker_phase_start/stop, a wrapped program's lines on the tool's
 * socket (docs/contracts.md §18), or a front end's own rt_pipeline_mark. Phases are matched by
 * name: a stop closes the most recent open instance of that name, from whichever thread or
 * process of the job it comes, so phases nest (outer, inner) and overlap freely. Each mark
 * carries the tree's cumulative counters read at it (rt_sampler_peek), so a phase's CPU
 * seconds and bytes are differences of two readings, exact also for a phase shorter than the
 * interval; memory and GPU figures come from the samples within the phase and the readings at
 * its marks. Marks travel with the samples through the pipeline (rt_sample.phases,
 * rt_record.phases) to every sink: the JSON lines, the statistics (rt_summary.phases), the
 * report, the exporters (a `phase` label while a phase is open). CSV carries none. */

typedef enum rt_phase_kind {
    RT_PHASE_START = 1,
    RT_PHASE_STOP = 2
} rt_phase_kind;

/* Where a mark's cpu_secs_total came from. */
typedef enum rt_phase_cpu_source {
    RT_PHASE_CPU_NONE = 0,      /* no reading: the analysis pro-rates the samples' figures */
    RT_PHASE_CPU_GROUP = 1,     /* the job's own cgroup's usage counter (ns or µs, exact) */
    RT_PHASE_CPU_SCHEDSTAT = 2, /* the tree's processes' schedstat run times (ns) */
    RT_PHASE_CPU_TICKS = 3,     /* the tree's /proc stat times (clock ticks: 10 ms truncation) */
    RT_PHASE_CPU_MARKER = 4     /* the marking process's own exact CPU (CLOCK_PROCESS_CPUTIME_ID
                                 * and its reaped children) plus the others' reading */
} rt_phase_cpu_source;

/* One mark. The caller fills kind, name, timestamp_secs and pid and starts from
 * RT_PHASE_MARK_INIT (every reading NaN: unknown); rt_sampler_peek fills the readings. The
 * library's marks (rt_sample.phases) have the same shape, names valid as the sample is. */
typedef struct rt_phase_mark {
    size_t struct_size;      /* sizeof(rt_phase_mark) as the caller compiled it */
    int kind;                /* rt_phase_kind */
    const char *name;        /* 1..255 bytes of UTF-8 without control characters */
    double timestamp_secs;   /* Unix time of the mark */
    int64_t pid;             /* who marked; RT_NULL_I64: unknown */
    /* the tracked tree's counters at the mark, since tracking began (NaN: unknown) */
    double cpu_secs_total;   /* on the basis of rt_process.cpu_secs_total, from cpu_source */
    int cpu_source;          /* rt_phase_cpu_source */
    double read_bytes_total, write_bytes_total; /* as rt_process's read/write totals */
    double rss_mib;          /* the tree's resident memory at the reading */
    double memory_peak_mib;  /* the job group's peak since the previous mark, where the kernel
                              * resets it per reader (cgroup v2 memory.peak): not read by the
                              * library (NaN); a caller's own figure is used as given */
    double reading_lag_secs; /* the reading's time less the mark's (>= 0): the bound on its
                              * error; NaN without a reading */
} rt_phase_mark;

/* NaN as a constant expression (GCC and clang), for RT_PHASE_MARK_INIT. */
#define RT_PHASE_NAN __builtin_nan("")

#define RT_PHASE_MARK_INIT                                                                         \
    {.struct_size = sizeof(rt_phase_mark), .pid = RT_NULL_I64, .cpu_secs_total = RT_PHASE_NAN,    \
     .read_bytes_total = RT_PHASE_NAN, .write_bytes_total = RT_PHASE_NAN, .rss_mib = RT_PHASE_NAN, \
     .memory_peak_mib = RT_PHASE_NAN, .reading_lag_secs = RT_PHASE_NAN}

/* The run's counts of marks: accepted, and refused by why. Library-filled, grows at its end. */
typedef struct rt_phase_counts {
    uint64_t accepted;       /* marks taken (starts and stops) */
    uint64_t unknown_stop;   /* a stop with no open phase of its name: ignored */
    uint64_t unterminated;   /* phases still open at the run's end: closed there */
    uint64_t too_long;       /* a protocol line over 512 bytes */
    uint64_t malformed;      /* a bad verb, an empty name, a name over 255 bytes, bad UTF-8, a
                              * control character, a half line at the end of a connection */
    uint64_t flood;          /* over the listener's rate (a start's stop goes with it) */
    uint64_t dropped;        /* no room to queue it (the embedded tracker's ring, the marks
                              * one sample can carry: 4096) */
    uint64_t too_many_names; /* a start of a new name past the run's 1024 names */
    uint64_t too_deep;       /* a start with 256 phases open */
    uint64_t refused;        /* a connection refused (over 64 at once, another user) */
} rt_phase_counts;

/* What rt_sample.phases and rt_record.phases point to, valid as the sample or record is. */
typedef struct rt_phases {
    const rt_phase_mark *const *marks; /* the marks since the previous sample, in order */
    size_t mark_count;
    const char *const *open;           /* the phases open at this reading, in the order they
                                        * opened (the innermost last) */
    size_t open_count;
    const rt_phase_counts *counts;     /* the run's counts so far */
} rt_phases;

/* A phase of the run, by name (rt_summary.phases). Library-filled, grows at its end. Figures are
 * NaN where unknown. A call is one start with its stop (or the run's end: unterminated). */
typedef struct rt_phase_summary {
    const char *name;
    uint64_t calls;          /* calls started */
    uint64_t unterminated;   /* of calls, those open at the run's end (closed there) */
    uint64_t samples;        /* records read within a call (gpu_tracker's timepoints) */
    uint64_t empty_calls;    /* calls with no record within them */
    double first_start_secs; /* Unix time of the first call's start */
    double duration_secs;    /* the sum of the calls' durations (a call of a name nested in
                              * another call of the same name counts too) */
    double call_min_secs, call_max_secs, call_mean_secs; /* one call's duration */
    double cpu_secs;         /* the tree's CPU seconds within the calls */
    int cpu_exact;           /* 1: every call's CPU is a difference of readings at its marks;
                              * 0: some were pro-rated from the samples */
    double cores_mean;       /* cpu_secs / duration_secs */
    double cores_peak;       /* the highest cores over the stretches between samples and marks */
    double rss_peak_mib, pss_peak_mib; /* the tree's, at the samples and marks within */
    double memory_peak_mib;  /* the job group's peak within (exact where the kernel resets it) */
    rt_need memory_need;     /* the memory the phase needed, rt_need's rules within the calls */
    double gpu_usage_mean, gpu_usage_peak;       /* GPUs' worth of utilization (samples) */
    double gpu_vram_mean_mib, gpu_vram_peak_mib; /* the tree's VRAM (samples) */
    double read_bytes, write_bytes;              /* the tree's, within the calls */
    /* the phase under 1, 2, ... cores (rt_cores_table's model over the stretches
     * between samples and marks within its calls: duration_secs there is theirs, which is the
     * calls' up to the last record); NULL without the tree's cores */
    const struct rt_cores_table *cores;
} rt_phase_summary;

/* Embedded tracker (rt_tracker_start): opens or closes the phase name. Any thread, no lock, no
 * allocation, async-signal-safe, and never waits for the tracker's thread: the mark is queued
 * and the tracker takes it within a few milliseconds, reading the tree's counters then (the
 * calling process's own CPU is stamped at the call). RT_OK (queued); RT_ERR_INVALID (t NULL, a
 * name NULL, empty, over 255 bytes, bad UTF-8 or with a control character: counted as
 * malformed); RT_ERR_NOMEM (the queue is full: dropped and counted); RT_ERR_DISABLED (the
 * tracker is stopped, was loaded, or is a forked child's copy). Async-signal-safe on Linux: it
 * makes system calls (clock_gettime, getrusage) and atomic operations only. But a call that
 * never returns (a signal handler that leaves it by siglongjmp, a thread cancelled
 * asynchronously in it) keeps its place in the queue: the marks after it wait behind it and
 * are dropped once the queue is full. A mark made while rt_tracker_stop runs may be lost though
 * RT_OK was returned; the calls must not race rt_tracker_free. Once the run has had a mark, the
 * tracker's thread wakes every phase_check_secs (10 ms) to take marks: about 100 wake-ups a
 * second, a few µs each. */
/* The CPU a mark carries (cpu_secs_total): when the tracker tracks the calling process (pid 0
 * or its own pid), RT_PHASE_CPU_MARKER: the caller's own CPU time stamped at the call
 * (CLOCK_PROCESS_CPUTIME_ID, plus RUSAGE_CHILDREN unless no_children: the children it reaped),
 * less the same at rt_tracker_start, plus the CPU of the tree's other processes (the
 * descendants, live and departed: stat ticks) read when the thread takes the mark, so a
 * single-process job's phase CPU is exact to the nanosecond; otherwise the tree's reading when
 * the thread takes it (rt_sampler_peek's sources). */
RT_API rt_error rt_tracker_phase_start(rt_tracker *t, const char *name);
RT_API rt_error rt_tracker_phase_stop(rt_tracker *t, const char *name);

/* Reads the tracked tree's cumulative counters now into m's readings (cpu_secs_total and
 * cpu_source, read/write totals, rss_mib, reading_lag_secs from m->timestamp_secs; it leaves
 * memory_peak_mib NaN), cheaply (no PSS, no GPU) and without changing what
 * the next rt_sampler_sample computes. RT_OK; RT_ERR_INVALID (NULL, struct_size too small, no
 * tracked tree); RT_ERR_IO (nothing could be read: the readings stay NaN). */
RT_API rt_error rt_sampler_peek(rt_sampler *s, rt_phase_mark *m);

/* Hands a mark to the pipeline (copied, its name kept): it travels with the next sample or row
 * added (rt_sample.phases, rt_record.phases). Marks must come in time order, each before the
 * first sample read after it. RT_OK (accepted); RT_ERR_INVALID (NULL, a bad name: counted as
 * malformed; a stop with no open phase of its name: counted as unknown_stop); RT_ERR_NOMEM
 * (too many names, phases open or marks before one sample: counted). */
RT_API rt_error rt_pipeline_mark(rt_pipeline *p, const rt_phase_mark *m);

/* Why a mark was refused before it reached the pipeline (a listener's, a ring's counts). */
typedef enum rt_phase_refusal {
    RT_PHASE_REFUSED_TOO_LONG = 1,
    RT_PHASE_REFUSED_MALFORMED = 2,
    RT_PHASE_REFUSED_FLOOD = 3,
    RT_PHASE_REFUSED_DROPPED = 4,
    RT_PHASE_REFUSED_CONNECTION = 5
} rt_phase_refusal;

/* Adds n refused marks of the kind why to the pipeline's counts (rt_phases.counts). */
RT_API void rt_pipeline_mark_refused(rt_pipeline *p, int why, uint64_t n);

/* The pipeline's counts of marks so far, into the caller's out of out_size bytes. RT_OK;
 * RT_ERR_INVALID (NULL). Zeros when no mark came. */
RT_API rt_error rt_pipeline_phase_counts(const rt_pipeline *p, rt_phase_counts *out, size_t out_size);

/* The listener for wrapped programs (the tool's TRACKER_PHASE_SOCKET; docs/contracts.md §18):
 * a unix stream socket taking lines `start NAME` / `stop NAME`. Its limits: 512 bytes a line,
 * 64 connections at once, a rate of marks (burst and per second), a connection idle for 60 s
 * closed. It never blocks: rt_phase_listener_poll_fd becomes readable when something waits. */
typedef struct rt_phase_listener rt_phase_listener;

typedef struct rt_phase_listener_options {
    size_t struct_size;  /* sizeof(rt_phase_listener_options) as the caller compiled it */
    const char *address; /* a path (its directory must exist), or "@name" for the abstract
                          * namespace; required; copied */
    double rate_per_sec; /* 0: 1000 marks a second */
    double burst;        /* 0: 1000 marks */
} rt_phase_listener_options;

#define RT_PHASE_LISTENER_OPTIONS_INIT {.struct_size = sizeof(rt_phase_listener_options)}

/* Called by rt_phase_listener_drain for each mark taken: kind, name (valid during the call),
 * timestamp_secs (Unix time: the sender's t= where given and sane, else receipt), pid (the
 * sender's, from its credentials). */
typedef void (*rt_phase_mark_fn)(void *user, const rt_phase_mark *m);

/* Binds and listens at opts->address (a path is unlinked first, and at rt_phase_listener_free).
 * RT_OK and *out; RT_ERR_INVALID (no address, too long for a unix socket); RT_ERR_SYSTEM
 * (errno: the bind failed); RT_ERR_NOMEM. */
RT_API rt_error rt_phase_listener_new(const rt_phase_listener_options *opts, rt_phase_listener **out);

/* A descriptor to poll for reading: readable when a connection or a line waits. -1 for NULL. */
RT_API int rt_phase_listener_poll_fd(const rt_phase_listener *l);

/* Accepts what waits and reads lines, handing at most max_marks marks to fn (0: no bound);
 * refusals are counted (rt_phase_listener_counts). Returns the number of marks handed. */
RT_API size_t rt_phase_listener_drain(rt_phase_listener *l, size_t max_marks, rt_phase_mark_fn fn,
                                      void *user);

/* The listener's counts of refusals (too_long, malformed, flood, refused), into out. */
RT_API rt_error rt_phase_listener_counts(const rt_phase_listener *l, rt_phase_counts *out,
                                         size_t out_size);

/* Closes every connection and the socket (a path is removed). NULL allowed. */
RT_API void rt_phase_listener_free(rt_phase_listener *l);

#ifdef __cplusplus
}
#endif
#endif
