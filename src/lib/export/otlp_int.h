/* otlp_int.h - the OTLP/HTTP exporter's internals: the compact row a queued sample becomes, the
 * pure JSON builder (otlp_json.c) that turns rows into an ExportMetricsServiceRequest, and the
 * network seam a unit test fakes (otlp.c). Internal to the library. */
#ifndef RT_OTLP_INT_H
#define RT_OTLP_INT_H

#include "../core/clock.h"
#include "../core/core.h"
#include "../core/request.h"
#include "../net/curl.h"

/* ---- a queued sample ------------------------------------------------------------------------- */

/* A disk or an interface: its name and two counters since boot (read/write, receive/transmit),
 * and what the accumulation (rt_otlp_accumulate) made of them: the bytes since the series began,
 * and when it began (Unix nanoseconds). */
typedef struct rt_otlp_dev {
    const char *name;
    uint64_t a, b;         /* RT_NULL_U64: not reported */
    uint64_t ia, ib;       /* of them, in the sample's interval */
    uint64_t cum_a, cum_b; /* filled by rt_otlp_accumulate */
    uint64_t start_ns;
} rt_otlp_dev;

/* A MIG GPU instance of a GPU: its MIG device's UUID (NULL: none), instance id, work. */
typedef struct rt_otlp_mig {
    const char *uuid;
    int64_t gi;
    rt_gpu_work work;
} rt_otlp_mig;

typedef struct rt_otlp_gpu {
    const char *id;                 /* uuid, else the PCI address, else NULL (the index is used) */
    double util_pct;                /* 0..100; NaN */
    uint64_t vram_used, vram_total; /* RT_NULL_U64 */
    double power_thr, thermal_thr;  /* seconds throttled since tracking began; NaN */
    rt_gpu_work work;               /* 0.19: NVML GPM's figures, NaN without */
    size_t nmig;                    /* its MIG instances, mig[0..nmig) */
    const rt_otlp_mig *mig;
    /* filled by rt_otlp_accumulate: the PCIe and NVLink bytes (the work's rates times the
     * intervals) since the GPU's series began, as pcie_tx, pcie_rx, nvlink_tx, nvlink_rx (NaN
     * until a rate came), and when it began */
    double io_cum[4];
    uint64_t io_start_ns;
} rt_otlp_gpu;

/* An energy domain: its names (copied) and its figures since tracking began. */
typedef struct rt_otlp_edom {
    const char *name, *kind, *source, *method, *device; /* device: a GPU's uuid/address; NULL */
    double joules_total, watts, p_joules_total;         /* NaN: not known */
} rt_otlp_edom;

/* The sample's energy: the machine's and the tree's, with their methods (copied; NULL:
 * no figure), and the domains. */
typedef struct rt_otlp_energy {
    double joules_total, watts, p_joules_total, p_watts;
    const char *method, *p_method;
    size_t ndom;
    rt_otlp_edom *dom;
} rt_otlp_energy;

/* The structs whose figures a row carries (the tree's three parts are one schema table, three
 * times over). */
enum {
    RT_OT_SAMPLE,
    RT_OT_CPU,
    RT_OT_MEMORY,
    RT_OT_PROCESS,
    RT_OT_MAIN,
    RT_OT_DESC,
    RT_OT_COMB,
    RT_OT_CGROUP,
    RT_OT_TABLES
};

/* The figures of one sample the exporter sends, in one allocation with its arrays and strings
 * (free with free()): of each struct of the sample (have: the sample had it; the cgroup is the
 * tree's, else the tracker's own), the members the OTLP view names in the schema and those the
 * metrics made by hand read, each in an 8-byte slot as its type (otlp_json.c's plan). */
typedef struct rt_otlp_row {
    double ts, interval;
    bool have[RT_OT_TABLES];
    /* what the accumulation adds: the machine's CPU seconds by mode since the series began */
    double cpu_user_cum, cpu_system_cum;
    uint64_t start_ns; /* when tracking began: the start of every cumulative series of the tree */
    bool accumulated;  /* set by rt_otlp_accumulate: the row counted once */
    size_t ndisk, nnet, ngpu;
    rt_otlp_dev *disk, *net;
    rt_otlp_gpu *gpu;
    rt_otlp_mig *mig; /* every GPU's MIG instances, one after the other */
    size_t nmig;
    rt_gpu_work p_work; /* 0.19: the tree's GPU work (NaN without a tree) and whose it is: */
    int p_work_scope;   /* -1 no figure, 0 the job's, 1 the devices' (shared) */
    rt_otlp_energy energy; /* all null without the sample's energy (have_energy 0) */
    bool have_energy;
    rt_request_copy req; /* what the job was given: req.set false without */
    uint64_t *fig; /* the slots */
    const char *phase; /* the innermost phase open at the sample (the exporter's capped value,
                        * phase_label.h, valid as long as the exporter), the tree's points'
                        * attribute resource_tracker.phase; NULL: none open */
} rt_otlp_row;

/* The tracked tree's root in a row, 0 without a tree. */
int64_t rt_otlp_row_pid(const rt_otlp_row *row);

/* What is wrong with the numbering of the OTLP members (schema tables and the metrics made by
 * hand): "" when nothing; the metrics then follow it. For the unit test. */
const char *rt_otlp_plan_problem(void);

/* A row holding sample's figures (copied: names included), or NULL on no memory. */
rt_otlp_row *rt_otlp_row_new(const rt_sample *sample);

/* Bytes a row of sample takes (what the queue holds per sample). */
size_t rt_otlp_row_size(const rt_sample *sample);

/* ---- the body ------------------------------------------------------------------------------------ */

/* What the cumulative series remember between pushes: when tracking began, the CPU seconds by
 * mode so far, and each disk's and interface's counter at its series' start. */
typedef struct rt_otlp_base {
    char *name;
    int kind; /* 0 disk, 1 network, 2 a GPU's PCIe and NVLink bytes (io) */
    uint64_t a, b, start_ns;
    double io[4];
} rt_otlp_base;

typedef struct rt_otlp_state {
    uint64_t start_ns; /* 0 until the first row */
    double cpu_user, cpu_system;
    rt_otlp_base *bases;
    size_t nbases, cap_bases;
} rt_otlp_state;

/* Fills the accumulated fields of rows (in time order), advancing st: tracking began at the first
 * row's timestamp less its interval; system.cpu.time adds each row's utime/stime; a disk's or an
 * interface's series starts at the reading before the row it first appears in (its counters less
 * that row's interval bytes) and starts again when a counter goes back. A row already accumulated
 * (a row sent in a later request than it was accumulated for) is skipped. A GPU's PCIe and NVLink
 * bytes add each row's rates times its interval, from the reading before the row the GPU first
 * appears in. Returns RT_OK, or
 * RT_ERR_NOMEM (a device that could not be remembered gets no cumulative figures: RT_NULL_U64). */
rt_error rt_otlp_accumulate(rt_otlp_state *st, rt_otlp_row *const *rows, size_t n);

void rt_otlp_state_free(rt_otlp_state *st);

/* One resource attribute: a string, an integer or an array of strings. */
typedef enum rt_otlp_attr_type { RT_OTLP_STR = 0, RT_OTLP_INT = 1, RT_OTLP_STRS = 2 } rt_otlp_attr_type;

typedef struct rt_otlp_attr {
    const char *key;
    rt_otlp_attr_type type;
    const char *str;
    int64_t i;
    const char *const *strs; /* NULL-terminated */
} rt_otlp_attr;

/* Formats the ExportMetricsServiceRequest (OTLP/JSON) of n accumulated rows into buf (cap bytes,
 * NUL-terminated when cap > 0): one resourceMetrics with the attributes res, one scopeMetrics of
 * scope "resource-tracker" (version), a metric per name that has at least one data point, and a
 * data point per row (per device, state, direction) for each figure the row has: a null figure
 * has no point. Pure. Returns the length needed like snprintf. */
size_t rt_otlp_format(const rt_otlp_attr *res, size_t nres, rt_otlp_row *const *rows, size_t n, char *buf, size_t cap);

/* The name of metric i of those rt_otlp_format may write (static), NULL past the last. */
const char *rt_otlp_metric_name(size_t i);

/* ---- the seam for tests --------------------------------------------------------------------------- */

/* Performs req as rt_fetch does (same contract). */
typedef rt_error (*rt_otlp_fetch_fn)(void *user, const rt_fetch_request *req, rt_fetch_reply *out, char *err,
                                     size_t errlen);

/* rt_otlp_start with fetch (user its first argument) instead of libcurl, and clock (NULL: the real
 * one) for every wait, backoff and deadline; libcurl is then not loaded. Same results as
 * rt_otlp_start. */
rt_error rt_otlp_start_net(const rt_otlp_options *opts, rt_otlp_fetch_fn fetch, void *user, rt_clock *clock,
                           rt_otlp **out);

/* Counters for tests: samples added, delivered, dropped (the queue was full), rejected (a
 * push that was refused or given up), requests made. Any pointer may be NULL. Thread-safe. */
void rt_otlp_counts(rt_otlp *ex, uint64_t *added, uint64_t *delivered, uint64_t *dropped, uint64_t *rejected,
                    unsigned *requests);

/* Makes max (0: the built-in 64 MiB) the most JSON one request is built from, for the requests
 * built from now on. A push that would be larger carries fewer samples (the rest stay queued,
 * in order); a sample too large alone is dropped (counted refused, one warning). Thread-safe. */
void rt_otlp_set_body_max(rt_otlp *ex, size_t max);

/* The pause a Retry-After asks for: its value (delta seconds, or an HTTP-date against now_unix),
 * capped at cap. Returns seconds >= 0, or -1 when value holds no usable Retry-After. The exporter
 * waits the longer of this and its own backoff. Pure. */
double rt_otlp_retry_after(const char *value, double now_unix, double cap);

#endif
