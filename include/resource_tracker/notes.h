/* resource_tracker/notes.h - notes a person can act on (rt_note, rt_summary_notes,
 * rt_recommend_notes).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_NOTES_H
#define RESOURCE_TRACKER_NOTES_H

#include "recommend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- notes a person can act on ----------------------------------------------------------
 * One line each, made from the statistics: what went wrong, what was wasted, what may be
 * missing. rt_summary_notes speaks of one run (the summary, the report, the history);
 * rt_recommend_notes of a recommendation made from runs (recommend). */
typedef enum rt_note_kind {
    RT_NOTE_OOM_KILLED = 1,            /* the OOM killer killed tasks of the job */
    RT_NOTE_ACCOUNTING_INCOMPLETE = 2, /* no cgroup of the job's own: some CPU and I/O unseen */
    RT_NOTE_MEMORY_UNKNOWN = 3,        /* no memory figure at all */
    RT_NOTE_MEMORY_SAMPLED = 4,        /* the memory need is a lower bound from samples */
    RT_NOTE_MEMORY_OVERSIZED = 5,      /* the memory limit is far above the need */
    RT_NOTE_GPU_IDLE = 6,              /* GPUs on the machine, none used by the job */
    RT_NOTE_CPU_THROTTLED = 7,         /* a CPU quota throttled the job */
    RT_NOTE_PRESSURE = 8,              /* tasks stalled waiting for CPU, memory or I/O */
    RT_NOTE_LEFT_BEHIND = 9,           /* processes still ran after the command exited */
    RT_NOTE_FEW_RUNS = 10,             /* a recommendation from few runs */
    RT_NOTE_PHASE_MARKS = 11,          /* phase marks were refused, or phases left open */
    RT_NOTE_CPU_OVER_REQUESTED = 12,   /* the job used far fewer cores than it asked for */
    RT_NOTE_MEMORY_OVER_REQUESTED = 13, /* the job needed far less memory than it asked for */
    RT_NOTE_GPU_UNUSED = 14,           /* GPUs asked for and left unused */
    RT_NOTE_TIME_LIMIT = 15,           /* the job came near its time limit */
    RT_NOTE_MEMORY_SAFE_SIDE = 16,     /* a memory peak the readings could not place:
                                        * page cache taken as not there, and the ask grew */
    RT_NOTE_CPU_RUNS = 17,             /* how many of several runs ask for the same cores
                                        * on their own (rt_recommend_notes) */
    /* 0.19: what the job's GPUs did (NVML GPM, Hopper and newer; docs/answers.md "Notes") */
    RT_NOTE_GPU_BUSY_IDLE = 18,        /* utilization high, the SMs little active: small kernels */
    RT_NOTE_GPU_TENSOR_IDLE = 19,      /* tensor cores idle while the SMs did FP32 math */
    RT_NOTE_GPU_MEMORY_BOUND = 20,     /* device memory bandwidth high, the math units low */
    RT_NOTE_GPU_STARVED = 21,          /* the GPU idle much of the run while the job's CPU was
                                        * busy (an input pipeline that starves it) */
    RT_NOTE_GPU_HELD_UNUSED = 22,      /* VRAM held on a GPU the job never used */
    /* 0.20: after a kill, ask to learn (docs/answers.md "Notes"; an OOM kill is RT_NOTE_OOM_KILLED) */
    RT_NOTE_MEMORY_HIGH = 23,          /* held at its memory.high with reclaim stalls: the need
                                        * above it unknown, twice it asked */
    RT_NOTE_TIME_ENDED = 24,           /* ran to its time limit: its duration a floor, twice it
                                        * asked */
    RT_NOTE_MEMORY_REREAD = 25,        /* a memory limit the job lived under evicted the files it
                                        * read back: how much, and the limit that keeps them */
    RT_NOTE_CPU_SHARED = 28,           /* 0.20: other work used the machine's cores beside the job */
    RT_NOTE_CLOCK_JUMP = 29,           /* 0.21: the wall clock stepped during the run */
    RT_NOTE_SAMPLING_GAP = 30,         /* 0.21: the tracker took no sample for a while (stopped,
                                        * frozen, starved, or the machine suspended) */
    RT_NOTE_CPU_UNWAITED = 33,         /* 0.21: processes of the job ignored SIGCHLD and no exit
                                        * records were read: the CPU of children the kernel
                                        * reaped for them is a lower bound */
} rt_note_kind;

/* One note. This struct never grows. */
typedef struct rt_note {
    int kind;        /* rt_note_kind */
    char text[320];  /* one line, no newline, UTF-8 (cut to fit) */
} rt_note;

#define RT_NOTES_MAX 12 /* the most notes either function gives */

typedef struct rt_notes_options {
    size_t struct_size;     /* sizeof(rt_notes_options) as the caller compiled it */
    const char *cgroup_why; /* why the job had no cgroup of its own, in a few words (the tool:
                             * "not root, and no cgroup delegated to this user", "--cgroup off");
                             * NULL: not known */
} rt_notes_options;

#define RT_NOTES_OPTIONS_INIT {.struct_size = sizeof(rt_notes_options)}

/* The kind's name: "oom_killed", "accounting_incomplete", "memory_unknown", "memory_sampled",
 * "memory_oversized", "gpu_idle", "cpu_throttled", "pressure", "left_behind", "few_runs",
 * "phase_marks", "cpu_over_requested", "memory_over_requested", "gpu_unused", "time_limit",
 * "memory_safe_side", "cpu_runs", "gpu_busy_idle", "gpu_tensor_idle", "gpu_memory_bound",
 * "gpu_starved", "gpu_held_unused", "memory_high", "time_ended", "memory_reread", "cpu_shared",
 * "clock_jump", "sampling_gap", "cpu_unwaited"; "note" for another number. Static. */
RT_API const char *rt_note_kind_name(int kind);

/* The notes of one run into out[0..cap) (opts may be NULL). Returns how many were written (at
 * most RT_NOTES_MAX; 0 for a NULL s). Without a tracked tree only the machine-wide notes
 * (pressure, an OOM kill in the tracker's group) are given. */
RT_API size_t rt_summary_notes(const rt_summary *s, const rt_notes_options *opts, rt_note *out, size_t cap);

/* The notes of a recommendation rec made by rt_recommend from runs[0..n): few runs, a
 * memory need that is unknown or a lower bound, runs that left processes running after their
 * command (the ask covers the command only: --wait-all counts them), an OOM kill, a memory.high
 * stall or a time limit run to (the floor it puts under the ask, and why), or a CPU quota it
 * stays above. Returns how many were written (at most RT_NOTES_MAX). */
RT_API size_t rt_recommend_notes(const rt_summary *const *runs, size_t n, const rt_recommendation *rec,
                                 rt_note *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
