/* report_int.h - the report's internals shared by the collector (report.c: records into
 * bounded time buckets, each with a mean, min and max per series) and the HTML writer
 * (report_html.c). Not public. */
#ifndef RT_REPORT_INT_H
#define RT_REPORT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "resource_tracker.h"
#include "../core/out.h"

/* The series the charts draw, in the order of their data in the page. */
enum {
    RPT_JOB_CORES, RPT_CPU_CORES,             /* cores */
    RPT_JOB_PSS, RPT_JOB_RSS, RPT_MEM_USED,   /* MiB */
    RPT_GPU, RPT_JOB_GPU,                     /* busy GPUs */
    RPT_VRAM, RPT_JOB_VRAM,                   /* MiB */
    RPT_DISK_READ, RPT_DISK_WRITE, RPT_JOB_READ, RPT_JOB_WRITE, /* bytes/s */
    RPT_NET_RECV, RPT_NET_SENT,               /* bytes/s */
    RPT_DISK_SPACE,                           /* bytes */
    RPT_POWER, RPT_JOB_POWER,                 /* watts: the machine's, the job's share */
    RPT_POWER_PART,                           /* watts: RPT_POWER_PARTS series, one per part of
                                               * the energy (rt_report.parts) */
    /* 0.19: what the GPUs did (NVML GPM: the job's GPUs, else the machine's), percent, and NVML's
     * utilization of the same GPUs beside it */
    RPT_GPU_SM = RPT_POWER_PART + 5, RPT_GPU_TENSOR, RPT_GPU_DRAM, RPT_GPU_FP32, RPT_GPU_FP16, RPT_GPU_FP64,
    RPT_GPU_UTIL,
    RPT_SERIES
};
#define RPT_POWER_PARTS (RPT_GPU_SM - RPT_POWER_PART) /* the parts the power chart draws at most */

/* Buckets kept at most: past it, neighbours merge pairwise and the bucket width doubles, so a
 * run of any length keeps between RPT_CAP/2 and RPT_CAP buckets (once it has that many
 * records). The page gets at most RPT_POINTS points per series. */
#define RPT_CAP 4000
#define RPT_POINTS 2000
/* Times (Unix seconds) and intervals beyond this (about the year 5100) are not taken: a record
 * from 1e300 would make figures the page cannot hold (inf, 300-digit numbers). */
#define RPT_MAX_SECS 1e11

/* One series within one bucket: the time-weighted sum (mean = sum / weight), and the least
 * and greatest value of the records it stands for. weight 0: no record had the figure. */
typedef struct rpt_cell {
    double sum, weight;
    float min, max;
} rpt_cell;

typedef struct rpt_bucket {
    double t0, t1; /* Unix time: the start of its first record, the end of its last */
    bool gap;      /* a gap in time (or time going back) before it: the lines break there */
    rpt_cell c[RPT_SERIES];
} rpt_bucket;

/* The cgroup's marks: OOM kills marked at most (the first ones), and throttled stretches
 * kept at most (adjacent ones merge; past the cap the two closest merge). */
#define RPT_MARKS 64
#define RPT_STRETCHES 256

typedef struct rpt_mark {
    double t;     /* Unix time of the record that saw the kill */
    double kills; /* how many it saw */
} rpt_mark;

typedef struct rpt_span {
    double t0, t1; /* Unix time: a stretch of records whose throttled periods rose */
} rpt_span;

/* The job's phases: each call a shaded, labelled band on every chart. Spans kept at most
 * (past it, the spans of each name merge pairwise, the count saying how many calls a band
 * stands for), names kept by index (past RPT_PHASE_NAMES: "other"), calls open at once. */
#define RPT_PHASE_SPANS 512
#define RPT_PHASE_NAMES 64
#define RPT_PHASE_OPEN 256

typedef struct rpt_pspan {
    double t0, t1;   /* Unix time: the call's start and stop (merged: the first start, last stop) */
    uint16_t name;   /* index in names (RPT_PHASE_NAMES: other) */
    uint16_t depth;  /* phases open when it started */
    uint32_t count;  /* calls it stands for */
} rpt_pspan;

typedef struct rpt_popen {
    double t0;
    uint32_t hash;   /* of its full name: a stop closes the most recent call of its name */
    uint16_t name, depth;
} rpt_popen;

typedef struct rpt_phases {
    char *names[RPT_PHASE_NAMES];
    size_t n_names;
    bool other;      /* a name past the cap was seen */
    rpt_pspan spans[RPT_PHASE_SPANS];
    size_t n_spans;
    rpt_popen open[RPT_PHASE_OPEN];
    size_t n_open;
    double last_t;   /* the latest record's time: open calls are drawn up to it */
} rpt_phases;

struct rt_report {
    rpt_bucket *b; /* RPT_CAP buckets, allocated once */
    size_t n;
    double width;  /* seconds a bucket may span; 0 until the first merge: one record each */
    uint64_t records;
    bool gpu_seen; /* some record had a GPU */
    double last_weight; /* the seconds the latest record stood for; 0: none yet */
    /* the cgroup */
    rpt_mark oom[RPT_MARKS];
    size_t n_oom;
    rpt_span thr[RPT_STRETCHES];
    size_t n_thr;
    double oom_prev, thr_prev; /* the last oom_kills / cpu_throttled_periods seen, NaN: none */
    double mem_limit, cpu_quota; /* the lowest seen, NaN: none */
    rpt_phases *ph; /* NULL until a record carries phases */
    int power_method; /* the least exact method of the power series' records: 0 none,
                       * 1 measured, 2 sampled, 3 estimated (rpt_method_word) */
    /* 0.19: the parts of the energy (as rt_summary_energy_part: the records' domains of one
     * kind, source and method), in the order first seen; their power is the job's share in a
     * record with a tree (parts_job), else the machine's */
    struct {
        char kind[32], source[32];
        bool has_source;
        int method;     /* rank, as power_method */
        double devices; /* the most domains of the part in one record */
    } parts[RPT_POWER_PARTS];
    size_t n_parts;
    bool parts_job;
    /* 0.19: whose the GPU work figures were: a record with a tree had them (work_job), the
     * most of gpu_work_shared (1: some were the devices', shared; 0: the job's alone; NaN) */
    bool work_job;
    double work_shared;
};

/* The word of a power_method rank: "measured", "sampled", "estimated"; NULL for 0. */
const char *rpt_method_word(int rank);

/* Folds bucket src into dst (dst keeps its start and gap flag). */
void rpt_bucket_merge(rpt_bucket *dst, const rpt_bucket *src);

/* ---- the page (report_html.c) and its tables (report_tables.c) ---------------------------- */

/* The page's output: one buffer, flushed to the fd or callback when full. */
typedef struct rpt_hw {
    rt_out out;
    int err; /* errno of the first failed write; later output is dropped */
    size_t len;
    char buf[1 << 16];
} rpt_hw;

/* Appends n bytes of s; s as is; s as HTML text (& < > " ' escaped, control characters but tab
 * and newline dropped, invalid UTF-8 as U+FFFD). */
void rpt_hw_put(rpt_hw *w, const char *s, size_t n);
void rpt_hw_lit(rpt_hw *w, const char *s);
void rpt_hw_html(rpt_hw *w, const char *s);

/* A readable figure, written into f and returned. */
typedef char rpt_figure[64];
const char *rpt_fmt_duration(rpt_figure f, double secs);
const char *rpt_fmt_time(rpt_figure f, double unix_secs);
/* The exit status in the summary's words (summary_text.c): "0", "3", "130 (killed by signal 2,
 * SIGINT)" for a status above 128 (128 + the signal's number). */
const char *rpt_fmt_exit(rpt_figure f, int status);
/* bytes in B, KiB, MiB, ... as fits: "17.9 GiB" */
const char *rpt_fmt_bytes(rpt_figure f, double v);
/* joules as J, kJ, MJ or GJ with 3 significant digits: "363 J" */
const char *rpt_fmt_joules(rpt_figure f, double j);

/* The tables: the answer first (what the job used, what to ask for, the notes), the run's
 * statistics, the recommendation, the run's facts. */
void rpt_answer_section(rpt_hw *w, const rt_report_info *in);
void rpt_summary_section(rpt_hw *w, const rt_summary *s);
void rpt_recommendation_section(rpt_hw *w, const rt_report_info *in);
void rpt_run_section(rpt_hw *w, const rt_report_info *in);
/* One table cell: <td>text as HTML</td> (report_tables.c). */
void rpt_td(rpt_hw *w, const char *text);
/* The job on its nodes (report_job.c), only when info has a job view: before the answer. */
void rpt_job_section(rpt_hw *w, const rt_report_info *in);
/* The per-phase table, only when the run had phases. */
void rpt_phase_section(rpt_hw *w, const rt_summary *s);

#endif
