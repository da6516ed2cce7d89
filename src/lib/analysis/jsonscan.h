/* jsonscan.h - a small validating JSON tokenizer that allocates nothing (strict RFC 8259 as
 * jansson reads it, never laxer), and on top of it the extraction of the figures the reader
 * needs from one of the tool's JSON lines (rt_jline). Internal to the library. Include it
 * with _GNU_SOURCE (or _POSIX_C_SOURCE >= 200809L) defined, for locale_t. */
#ifndef RT_JSONSCAN_H
#define RT_JSONSCAN_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the tokenizer ----------------------------------------------------------------------- */

typedef struct rt_js {
    const char *p, *end; /* what is left to read */
    int depth;           /* open objects and arrays */
    const char *err;     /* static text of the first problem, NULL while all is well */
    locale_t c_locale;   /* "C" for strtod_l on numbers the fast path cannot convert exactly;
                          * (locale_t)0: such numbers are rejected */
} rt_js;

/* Deepest nesting accepted (jansson allows 2048; being stricter keeps the scanner's
 * acceptance a subset of jansson's). */
#define RT_JS_MAX_DEPTH 64
/* Longest number token accepted (a longer one is rejected, also stricter than jansson). */
#define RT_JS_MAX_NUMBER 320

typedef enum rt_js_type {
    RT_JS_BAD = 0, RT_JS_OBJECT, RT_JS_ARRAY, RT_JS_STRING, RT_JS_NUMBER, RT_JS_TRUE, RT_JS_FALSE, RT_JS_NULL
} rt_js_type;

/* Skips blanks and returns the type of the value that starts there (not consumed), or
 * RT_JS_BAD (j->err set) at the end or on a byte no value starts with. */
rt_js_type rt_js_peek(rt_js *j);

/* Consumes '{' or '['. Returns false (err set) when it is not there or nesting is too deep. */
bool rt_js_open(rt_js *j, char c);

/* The next member of an open object: returns 1 with *key / *klen the raw (still escaped) key
 * and the ':' consumed, 0 at its '}' (consumed), -1 on a syntax error (err set). first is
 * the caller's flag, true before the first member (it is updated). */
int rt_js_member(rt_js *j, bool *first, const char **key, size_t *klen);

/* The next element of an open array: 1 when a value follows, 0 at its ']' (consumed), -1 on
 * a syntax error. first as for rt_js_member. */
int rt_js_element(rt_js *j, bool *first);

/* A string value: validates it (escapes, UTF-8, no control characters) and sets *raw / *len
 * to its bytes between the quotes, still escaped. Returns false (err set) when malformed. */
bool rt_js_string(rt_js *j, const char **raw, size_t *len);

/* A number value, converted exactly as strtod (correctly rounded) would; an integer token
 * as jansson stores it ((double) of a 64-bit integer; out of range is an error). Returns
 * false (err set) when malformed or out of range. */
bool rt_js_number(rt_js *j, double *out);

/* Skips and validates any one value. Returns false (err set) when it is malformed. */
bool rt_js_skip(rt_js *j);

/* Whether nothing but blanks is left (err set otherwise). */
bool rt_js_at_end(rt_js *j);

/* Decodes the raw string raw[0..len) (validated by rt_js_string) into dst[cap], NUL-ended.
 * Returns the decoded length; when it is >= cap, dst holds the first cap-1 bytes. */
size_t rt_js_unescape(const char *raw, size_t len, char *dst, size_t cap);

/* Converts the number text p[0..n) (digits with an optional sign, fraction and exponent,
 * already checked to be that shape) to the nearest double: exactly with integers up to 2^53
 * and powers of ten up to 22, else strtod_l in loc. Returns false on overflow to infinity or
 * when loc is needed but (locale_t)0. */
bool rt_decimal_to_double(const char *p, size_t n, locale_t loc, double *out);

/* ---- one JSON line of the tool (docs/contracts.md §2), as far as the reader uses it ---- */

#define RT_JL_NAME 64      /* device and interface names kept for matching (longer: not kept) */
#define RT_JL_POINT 256    /* mount points kept for de-duplication */
#define RT_JL_JOB 1024     /* job names are cut to this many bytes, less one */
#define RT_JL_MAX_DEV 128  /* disks and interfaces listed one by one; the rest are summed */
#define RT_JL_MAX_MOUNT 256
#define RT_JL_MAX_GPU 64   /* GPUs kept one by one (uuid, utilization) for choosing by uuid */
#define RT_JL_UUID 96      /* GPU uuids kept (longer: not kept, so never chosen) */

/* A disk (a = read, b = write) or an interface (a = received, b = sent). NaN: null/absent. */
typedef struct rt_jl_dev {
    char name[RT_JL_NAME];
    bool named; /* name holds the whole name */
    double total_a, total_b, rate_a, rate_b;
} rt_jl_dev;

typedef struct rt_jl_mount {
    char point[RT_JL_POINT];
    bool named; /* point holds the whole mount point */
    double total, used;
} rt_jl_mount;

typedef struct rt_jl_list {
    bool present;      /* the member was in the line (as an array) */
    size_t n;          /* entries in dev[] (at most RT_JL_MAX_DEV) */
    double rest_rate_a, rest_rate_b; /* sums of the rates of the entries past the cap */
    rt_jl_dev dev[RT_JL_MAX_DEV];
} rt_jl_list;

/* A GPU as listed (0.8, for choosing GPUs by uuid): NaN when null or absent. */
typedef struct rt_jl_gpu {
    char uuid[RT_JL_UUID];
    bool named; /* uuid holds the whole uuid */
    double util, used, total;
} rt_jl_gpu;

/* The figures of a part of the tree (process.main, .descendants, .combined), in the order
 * of RT_JL_PART_NAMES: NaN when null or absent. */
enum { RT_JL_TOTAL, RT_JL_PRIVATE, RT_JL_SHARED, RT_JL_CORES, RT_JL_THREADS, RT_JL_VRAM, RT_JL_NPART };

/* Pressure of cpu, memory and io (in that order): [resource][0: some_pct, 1: full_pct,
 * 2: some_avg10], NaN when null or absent. */
typedef struct rt_jl_psi {
    double pct[3][3];
} rt_jl_psi;

/* A "cgroup" object (0.6): the limits and what they did, NaN when null or absent. */
typedef struct rt_jl_cgroup {
    bool present; /* the member was an object */
    double oom_kills, mem_limit, mem_high, quota, periods, throttled_periods, throttled_secs;
    double pids_peak, pids_limit;
    /* 0.9: tasks now, the unreclaimable peak; own and exclusive (1 true, 0 false, NaN) */
    double pids, unreclaimable_peak, own, exclusive;
    rt_jl_psi psi;
} rt_jl_cgroup;

typedef struct rt_jline {
    double timestamp, interval;
    bool has_job;
    char job[RT_JL_JOB];
    double cpu_util, cpu_cores_listed; /* NaN: no cpu object / no per_core_pct */
    double mem_used, mem_total;
    rt_jl_list disk, net;
    size_t nmount;
    double rest_space_total, rest_space_used; /* mounts past the cap, summed (NaN: none) */
    rt_jl_mount mount[RT_JL_MAX_MOUNT];
    /* GPUs, summed as record.c sums a sample's */
    bool gpu_present;
    double gpu_count, gpu_usage, gpu_utilized, gpu_vram_mib, gpu_vram_total_mib;
    bool gpu_known;
    size_t ngpu; /* entries in gpu[] (the first RT_JL_MAX_GPU GPUs) */
    rt_jl_gpu gpu[RT_JL_MAX_GPU];
    /* the tracked tree (NaN without) */
    bool has_process;
    double p_pid, p_children, p_cores, p_utime, p_stime, p_cpu_total, p_pss, p_rss, p_rss_peak;
    double p_read_total, p_write_total, p_gpu_util, p_gpu_vram_bytes, p_gpu_count;
    /* 0.6: the tree's peak charge and its cgroup (process.cgroup; NaN without), the machine's
     * pressure, and the top-level "cgroup" (the tracker's own group, whole-machine runs) */
    double p_mem_peak;
    /* 0.8: process.main, .descendants, .combined (RT_JL_* figures; NaN without) */
    double part[3][RT_JL_NPART];
    /* 0.9: the one-process peak RSS, the NVML VRAM peak (bytes), the cancelled writes' total,
     * and whether the root was alive (1, 0, NaN) */
    double p_rss_hwm, p_vram_peak_bytes, p_cancelled_total, p_alive;
    rt_jl_cgroup cg;
    rt_jl_psi psi;
    rt_jl_cgroup self_cg;
} rt_jline;

/* Empties jl (everything null, no lists). */
void rt_jline_reset(rt_jline *jl);
/* Empties one list / the mounts / the GPUs (for a repeated member: the last one counts). */
void rt_jline_list_reset(rt_jl_list *l, bool present);
void rt_jline_gpu_reset(rt_jline *jl, bool present);
void rt_jline_process_reset(rt_jline *jl, bool present); /* the cgroup too */
void rt_jline_cgroup_reset(rt_jl_cgroup *cg, bool present);
void rt_jline_psi_reset(rt_jl_psi *psi);
/* Appends a disk or an interface (name NUL-ended, named: it is whole). */
void rt_jline_add_dev(rt_jl_list *l, const char *name, bool named, double ta, double tb, double ra, double rb);
/* Appends a mount (point NUL-ended, named: it is whole). */
void rt_jline_add_mount(rt_jline *jl, const char *point, bool named, double total, double used);
/* Adds a GPU: utilization in %, VRAM in bytes (NaN: null); uuid NUL-ended (NULL: none),
 * named: it is whole. */
void rt_jline_add_gpu(rt_jline *jl, const char *uuid, bool named, double util_pct, double vram_used,
                      double vram_total);

/* Fills *jl from one line (without its newline). Returns NULL, or a static description of
 * why the line is not a record (bad JSON, a member of the wrong type, no timestamp). */
const char *rt_jline_scan(const char *line, size_t len, locale_t c_locale, rt_jline *jl);

#endif
