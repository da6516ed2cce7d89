/* summary.c - a run's statistics (rt_summary) as one JSON object with a newline
 * (rt_format_summary), memory and time figures in gpu_tracker's units (core/units.h), into a
 * caller's buffer through the output builder (core/ob.c); and the recommendation's one table of
 * members, which writes both its object in the summary and recommend --json's
 * (rt_format_recommendation_json), and the run's table under other core counts likewise
 * (rt_format_cores_json). */
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "../core/units.h"
#include "sink.h"

/* A unit: gpu_tracker's (core/units.h), or the summary's own MiB and seconds (no name). */
typedef rt_gt_unit unit;

static const unit mib = {NULL, "_mib", 1.0, 1.0, 3};
static const unit secs = {NULL, "_secs", 1.0, 1.0, 3};
/* value()'s decimals for recommend --json (members()'s full): the double a parser reads back the
 * same, a real with its point (rt_ob_shortest) */
enum { DEC_REAL = -1 };
static const unit full_mib = {NULL, "_mib", 1.0, 1.0, DEC_REAL};
static const unit full_secs = {NULL, "_secs", 1.0, 1.0, DEC_REAL};

/* The unit called name in table (n entries), fallback for NULL, or NULL when unknown. */
static const unit *find_unit(const unit *table, size_t n, const unit *fallback, const char *name)
{
    return name ? rt_gt_unit_find(table, n, name) : fallback;
}

/* "name<suffix>": (suffix may be NULL). */
static void key(rt_ob *o, const char *name, const char *suffix)
{
    rt_ob_put(o, "\"", 1);
    rt_ob_lit(o, name);
    if (suffix)
        rt_ob_lit(o, suffix);
    rt_ob_put(o, "\":", 2);
}

/* v with dec decimals (null when not finite). From 1e15 on, the shortest %g that reads back
 * as v: fixed notation of 1e300 would be cut, and an integer of 2^63 or more is one that
 * jansson (and other parsers) refuse. */
static void value(rt_ob *o, double v, int dec)
{
    if (dec == DEC_REAL) {
        rt_ob_shortest(o, v, "null");
        return;
    }
    if (!isfinite(v) || fabs(v) < 1e15) {
        rt_ob_fixed(o, v, dec, "null");
        return;
    }
    char tmp[40];
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) /* both in the current locale */
            break;
    }
    for (char *c = tmp; *c; c++) /* a locale's decimal comma: JSON wants a point */
        if (!(*c >= '0' && *c <= '9') && *c != 'e' && *c != '+' && *c != '-')
            *c = '.';
    rt_ob_put(o, tmp, n > 0 && (size_t)n < sizeof tmp ? (size_t)n : 0);
}

/* "name<suffix>":v*factor with u's decimals (null for NaN), then a comma. u NULL: v as is
 * with dec decimals and no suffix. */
static void num(rt_ob *o, const char *name, const unit *u, double v, int dec)
{
    key(o, name, u ? u->suffix : NULL);
    value(o, u ? v * u->factor : v, u ? u->decimals : dec);
    rt_ob_put(o, ",", 1);
}

/* "name":"v" escaped or null, then a comma. */
static void str(rt_ob *o, const char *name, const char *v)
{
    key(o, name, NULL);
    rt_ob_json_str(o, v);
    rt_ob_put(o, ",", 1);
}

/* One member of an object of the summary, in the object's order (the order is the contract:
 * docs/contracts.md's summary JSON): its key, what it shows of the struct the object is written
 * from (kind: the member's C type), its unit (none: dec decimals as it is) and, for SF_PCT and
 * SF_OBJ, what else it is made from. */
typedef enum {
    SF_NUM,  /* a double */
    SF_DIST, /* an rt_dist: {"mean","peak","p50","p95"} */
    SF_BOOL, /* a double: NaN null, 1 true, else false */
    SF_FLAG, /* an int: true or false */
    SF_STR,  /* a const char *: a JSON string, or null for NULL */
    SF_TEXT, /* a char array: a JSON string, or null when empty */
    SF_I64,  /* an int64_t: RT_NULL_I64 null */
    SF_U64,  /* a uint64_t */
    SF_PCT,  /* 100 x the double at off / the double at off2, null unless the latter is > 0 */
    SF_OBJ,  /* {the doubles of sub by their keys}: converted as SF_NUM, the suffix on the
              * member's key only */
    SF_NEED, /* an rt_need: {"need<unit>","source","sampled"} */
    SF_SOURCE, /* an int rt_need_source: its name */
    SF_SIZE,   /* a size_t */
    SF_WORDS,  /* a string the row's words() makes of the struct, or null when it makes none */
    SF_CALL,   /* what the row's call() writes of the struct (a value, its comma after) */
} sf_kind;
typedef enum { SU_NONE, SU_MEM, SU_TIME } sf_unit;
struct writing;
typedef struct summary_field {
    const char *key;
    sf_kind kind;
    sf_unit unit;
    size_t off; /* of the member in the struct */
    int dec;
    size_t off2;                       /* SF_PCT: of the denominator */
    const struct summary_field *sub;   /* SF_OBJ: its members (SF_NUM) */
    size_t n_sub;
    int in_summary;                    /* rt_recommendation's: its place in the summary's object
                                        * (1 first), 0: recommend --json's alone */
    size_t (*words)(const void *base, char *buf, size_t cap); /* SF_WORDS */
    void (*call)(rt_ob *o, const void *base, const struct writing *w); /* SF_CALL */
} summary_field;

/* How members() writes: memory in mem, time in tm; full: every number as the double a JSON
 * parser reads back the same (a real with its point, an integer as an integer), whatever the
 * row's decimals (recommend --json, which its jansson then writes); what SF_CALL rows need. */
typedef struct writing {
    const rt_gt_unit *mem, *tm;
    bool full;
    const rt_server *smaller, *like; /* the GPU ask's notes' prices (rt_recommendation_gpu_notes) */
} writing;

#define N_OF(a) (sizeof(a) / sizeof *(a))
#define FIELD(type, k, kd, un, member, d) {.key = k, .kind = kd, .unit = un, .off = offsetof(type, member), .dec = d}
#define SF(k, kind, u, member, dec) FIELD(rt_summary, k, kind, u, member, dec)
#define SF_OF(k, un, s, d) {.key = k, .kind = SF_OBJ, .unit = un, .dec = d, .sub = s, .n_sub = N_OF(s)}

/* An rt_dist's members (SF_DIST). */
static const summary_field dist_members[] = {
    FIELD(rt_dist, "mean", SF_NUM, SU_NONE, mean, 0), FIELD(rt_dist, "peak", SF_NUM, SU_NONE, peak, 0),
    FIELD(rt_dist, "p50", SF_NUM, SU_NONE, p50, 0), FIELD(rt_dist, "p95", SF_NUM, SU_NONE, p95, 0),
};

/* The run's own members, after "samples". */
static const summary_field run_fields[] = {
    SF("start_secs", SF_NUM, SU_NONE, start_secs, 3), SF("end_secs", SF_NUM, SU_NONE, end_secs, 3),
    SF("duration", SF_NUM, SU_TIME, duration_secs, 0), SF("job_name", SF_STR, SU_NONE, job_name, 0),
    SF("allocation", SF_STR, SU_NONE, allocation, 0),
};

static const summary_field process_fields[] = {
    SF("cpu", SF_NUM, SU_TIME, process_cpu_secs, 0),
    SF("cores", SF_DIST, SU_NONE, process_cores, 4),
    SF("pss", SF_DIST, SU_MEM, process_pss_mib, 0),
    SF("rss", SF_DIST, SU_MEM, process_rss_mib, 0),
    SF("gpu_usage", SF_DIST, SU_NONE, process_gpu_usage, 4),
    SF("gpu_vram", SF_DIST, SU_MEM, process_gpu_vram_mib, 0),
    SF("gpus_used", SF_NUM, SU_NONE, process_gpus_used, 0),
    SF("read_bytes", SF_NUM, SU_NONE, process_read_bytes, 0),
    SF("write_bytes", SF_NUM, SU_NONE, process_write_bytes, 0),
    SF("memory_peak", SF_NUM, SU_MEM, process_memory_peak_mib, 0),
    SF("rss_hwm", SF_NUM, SU_MEM, process_rss_hwm_mib, 0),
    SF("unreclaimable_peak", SF_NUM, SU_MEM, process_unreclaimable_peak_mib, 0),
    SF("gpu_vram_peak", SF_NUM, SU_MEM, process_gpu_vram_peak_mib, 0),
    SF("cancelled_write_bytes", SF_NUM, SU_NONE, process_cancelled_write_bytes, 0),
    SF("cgroup_exclusive", SF_BOOL, SU_NONE, process_cgroup_exclusive, 0),
    SF("left_behind", SF_NUM, SU_NONE, left_behind, 0),
    SF("vms_peak", SF_NUM, SU_MEM, process_vms_peak_mib, 0),
    SF("walk_age_max_secs", SF_NUM, SU_NONE, process_walk_age_max_secs, 3),
    SF("rss_hwm_tree", SF_NUM, SU_MEM, process_rss_hwm_tree_mib, 0),
    SF("unreclaimable_unsure", SF_NUM, SU_MEM, process_unreclaimable_unsure_mib, 0),
    SF("gpus_busy", SF_NUM, SU_NONE, process_gpus_busy, 0),
    SF("gpu_vram_per_gpu_peak", SF_NUM, SU_MEM, process_gpu_vram_per_gpu_peak_mib, 0),
    SF("gpu_idle_cpu_busy", SF_NUM, SU_TIME, gpu_idle_cpu_busy_secs, 0),
    SF("left_behind", SF_NUM, SU_MEM, left_behind_mib, 0),
    SF("exits_counted", SF_NUM, SU_NONE, process_exits_counted, 0),
    SF("unwaited_parents", SF_NUM, SU_NONE, process_unwaited_parents, 0),
};

static const summary_field machine_fields[] = {
    SF("cpu_count", SF_NUM, SU_NONE, cpu_count, 0),
    SF("cores", SF_DIST, SU_NONE, cpu_cores, 4),
    SF("memory_used", SF_DIST, SU_MEM, memory_used_mib, 0),
    SF("memory_total", SF_NUM, SU_MEM, memory_total_mib, 0),
    SF("gpu_usage", SF_DIST, SU_NONE, gpu_usage, 4),
    SF("gpu_vram", SF_DIST, SU_MEM, gpu_vram_mib, 0),
    SF("gpu_count", SF_NUM, SU_NONE, gpu_count, 0),
    SF("gpu_vram_total", SF_NUM, SU_MEM, gpu_vram_total_mib, 0),
    SF("disk_read_bytes", SF_NUM, SU_NONE, disk_read_bytes, 0),
    SF("disk_write_bytes", SF_NUM, SU_NONE, disk_write_bytes, 0),
    SF("net_recv_bytes", SF_NUM, SU_NONE, net_recv_bytes, 0),
    SF("net_sent_bytes", SF_NUM, SU_NONE, net_sent_bytes, 0),
    SF("disk_space_used_peak_bytes", SF_NUM, SU_NONE, disk_space_used_peak_bytes, 0),
    SF("disk_space_total_bytes", SF_NUM, SU_NONE, disk_space_total_bytes, 0),
};

static const summary_field cgroup_fields[] = {
    SF("oom_kills", SF_NUM, SU_NONE, oom_kills, 0),
    SF("oom_kill_secs", SF_NUM, SU_NONE, oom_kill_secs, 3),
    SF("memory_limit", SF_NUM, SU_MEM, memory_limit_mib, 0),
    SF("memory_high", SF_NUM, SU_MEM, memory_high_mib, 0),
    SF("cpu_quota_cores", SF_NUM, SU_NONE, cpu_quota_cores, 3),
    SF("cpu_periods", SF_NUM, SU_NONE, cpu_periods, 0),
    SF("cpu_throttled_periods", SF_NUM, SU_NONE, cpu_throttled_periods, 0),
    {.key = "cpu_throttled_pct", .kind = SF_PCT, .off = offsetof(rt_summary, cpu_throttled_periods), .dec = 2,
     .off2 = offsetof(rt_summary, cpu_periods)},
    SF("cpu_throttled", SF_NUM, SU_TIME, cpu_throttled_secs, 0),
    SF("pids_peak", SF_NUM, SU_NONE, pids_peak, 0),
    SF("pids_limit", SF_NUM, SU_NONE, pids_limit, 0),
    SF("memory_refault", SF_NUM, SU_MEM, memory_refault_mib, 0), /* 0.20 */
};

/* Each a time-weighted distribution, percent. */
static const summary_field pressure_fields[] = {
    SF("cpu_some_pct", SF_DIST, SU_NONE, pressure_cpu_some_pct, 2),
    SF("memory_some_pct", SF_DIST, SU_NONE, pressure_memory_some_pct, 2),
    SF("memory_full_pct", SF_DIST, SU_NONE, pressure_memory_full_pct, 2),
    SF("io_some_pct", SF_DIST, SU_NONE, pressure_io_some_pct, 2),
    SF("io_full_pct", SF_DIST, SU_NONE, pressure_io_full_pct, 2),
};

#define CT(k, kind, u, member, dec) FIELD(rt_cores_table, k, kind, u, member, dec)
static const summary_field cores_fields[] = {
    CT("duration", SF_NUM, SU_TIME, duration_secs, 0), CT("cores_had", SF_NUM, SU_NONE, cores_had, 3),
    CT("peak_cores", SF_NUM, SU_NONE, peak_cores, 4), CT("wait", SF_NUM, SU_TIME, wait_secs, 0),
    CT("wait_from", SF_STR, SU_NONE, wait_from, 0),
    /* 0.20 */
    CT("own_duration", SF_NUM, SU_TIME, own_secs, 0), CT("others_cores", SF_NUM, SU_NONE, others_cores, 3),
    CT("machine_cores", SF_NUM, SU_NONE, machine_cores, 0), CT("demand_cores", SF_NUM, SU_NONE, demand_cores, 3),
};

/* The recommendation's words and lists (rt_recommendation_*_words, _gpu_notes, the GPU ask's
 * models and each scheduler's way to the GPUs' memory), as its table's rows write them. */
static size_t time_words(const void *rec, char *buf, size_t cap)
{
    return rt_recommendation_time_words(rec, buf, cap);
}

static size_t gpu_words(const void *rec, char *buf, size_t cap)
{
    return rt_recommendation_gpu_words(rec, buf, cap);
}

static void gpu_models(rt_ob *o, const void *base, const writing *w)
{
    (void)w;
    const rt_recommendation *rec = base;
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < N_OF(rec->gpu_models) && rec->gpu_models[i]; i++) {
        rt_ob_put(o, ",", i > 0);
        rt_ob_json_str(o, rec->gpu_models[i]);
    }
    rt_ob_put(o, "],", 2);
}

static void gpu_notes(rt_ob *o, const void *base, const writing *w)
{
    char text[2048];
    rt_recommendation_gpu_notes(base, w->smaller, w->like, text, sizeof text);
    rt_ob_put(o, "[", 1);
    for (char *p = text, *nl; *p && (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        rt_ob_put(o, ",", p > text);
        rt_ob_json_str(o, p);
    }
    rt_ob_put(o, "],", 2);
}

static void gpu_scheduler_notes(rt_ob *o, const void *base, const writing *w)
{
    (void)w;
    static const char *const keys[3] = {"metaflow", "kubernetes", "slurm"}; /* rt_scheduler's order */
    char text[512];
    rt_ob_put(o, "{", 1);
    for (int i = 0; i < 3; i++)
        str(o, keys[i],
            rt_recommendation_gpu_scheduler_note(base, (rt_scheduler)i, text, sizeof text) > 0 ? text : NULL);
    o->len--;
    rt_ob_put(o, "},", 2);
}

/* rt_recommendation's members, listed once, in recommend --json's order (docs/contracts.md §8,
 * rt_format_recommendation_json); the last number is the member's place in the summary's
 * "recommendation" object (docs/contracts.md's summary JSON), 0: recommend --json's alone. */
#define RF(k, kd, un, member, d, sum)                                                                                  \
    {.key = k, .kind = kd, .unit = un, .off = offsetof(rt_recommendation, member), .dec = d, .in_summary = sum}
#define RW(k, fn, sum) {.key = k, .kind = SF_WORDS, .in_summary = sum, .words = fn}
#define RC(k, fn) {.key = k, .kind = SF_CALL, .call = fn}
static const summary_field recommendation_fields[] = {
    RF("cpu", SF_I64, SU_NONE, cpu, 0, 1),
    RF("memory", SF_I64, SU_MEM, memory_mib, 0, 2),
    RF("gpu", SF_I64, SU_NONE, gpu, 0, 3),
    RF("vram", SF_I64, SU_MEM, vram_mib, 0, 4),
    RF("oom_killed", SF_FLAG, SU_NONE, oom_killed, 0, 0),
    RF("cpu_quota_cores", SF_NUM, SU_NONE, cpu_quota_cores, 0, 0),
    RF("cpu_throttled_pct", SF_NUM, SU_NONE, cpu_throttled_pct, 0, 0),
    RF("memory_need", SF_NUM, SU_MEM, memory_need_mib, 0, 0),
    RF("memory_source", SF_SOURCE, SU_NONE, memory_source, 0, 0),
    RF("memory_sampled", SF_FLAG, SU_NONE, memory_sampled, 0, 0),
    RF("headroom_pct", SF_NUM, SU_NONE, headroom_pct, 1, 5),
    RF("vram_need", SF_NUM, SU_MEM, vram_need_mib, 0, 0),
    RF("vram_source", SF_SOURCE, SU_NONE, vram_source, 0, 0),
    RF("max_slowdown_pct", SF_NUM, SU_NONE, max_slowdown_pct, 4, 7),
    RF("cpu_duration", SF_NUM, SU_TIME, cpu_duration_secs, 0, 8),
    RF("cpu_run_duration", SF_NUM, SU_TIME, cpu_run_duration_secs, 0, 0),
    RF("cpu_fewer", SF_I64, SU_NONE, cpu_fewer, 0, 9),
    RF("cpu_fewer_duration", SF_NUM, SU_TIME, cpu_fewer_duration_secs, 0, 10),
    RF("cpu_cost_usd", SF_NUM, SU_NONE, cpu_cost_usd, 0, 0),
    RF("time_limit", SF_NUM, SU_TIME, time_limit_secs, 0, 11),
    RF("cpu_basis", SF_STR, SU_NONE, cpu_basis, 0, 6),
    RF("cpu_phase", SF_TEXT, SU_NONE, cpu_phase, 0, 12),
    RF("cpu_phase_fewer", SF_NUM, SU_TIME, cpu_phase_fewer_secs, 0, 13),
    /* 0.19: the GPU ask */
    RW("gpu_words", gpu_words, 19),
    RF("gpu_held", SF_I64, SU_NONE, gpu_held, 0, 15),
    RF("gpu_busy", SF_I64, SU_NONE, gpu_busy, 0, 16),
    RF("vram_per_gpu_need", SF_NUM, SU_MEM, vram_per_gpu_need_mib, 0, 17),
    RF("vram_per_gpu_source", SF_SOURCE, SU_NONE, vram_per_gpu_source, 0, 0),
    RF("vram_per_gpu", SF_I64, SU_MEM, vram_per_gpu_mib, 0, 18),
    RF("vram_per_gpu_gib", SF_NUM, SU_NONE, vram_per_gpu_gib, 0, 0),
    RC("gpu_models", gpu_models),
    RF("gpu_models_count", SF_SIZE, SU_NONE, gpu_models_count, 0, 0),
    RF("gpu_memory_had", SF_NUM, SU_MEM, gpu_memory_had_mib, 0, 0),
    RF("gpu_sm_active_pct", SF_NUM, SU_NONE, gpu_sm_active_pct, 0, 0),
    RF("gpu_busy_pct", SF_NUM, SU_NONE, gpu_busy_pct, 0, 0),
    RF("gpu_smaller", SF_FLAG, SU_NONE, gpu_smaller, 0, 0),
    RC("gpu_notes", gpu_notes),
    RC("gpu_scheduler_notes", gpu_scheduler_notes),
    /* 0.20: the floors of a run stopped at a limit (after a kill, ask to learn) */
    RF("memory_floor", SF_NUM, SU_MEM, memory_floor_mib, 0, 20),
    RF("memory_learn", SF_FLAG, SU_NONE, memory_learn, 0, 0),
    RF("time_floor", SF_NUM, SU_TIME, time_floor_secs, 0, 21),
    RW("time_words", time_words, 14),
    RF("memory_reread_files", SF_NUM, SU_MEM, memory_reread_files_mib, 0, 0),
};

#define PF(k, kind, u, member, dec) FIELD(rt_phase_summary, k, kind, u, member, dec)
static const summary_field phase_call[] = {PF("min", SF_NUM, SU_NONE, call_min_secs, 0),
                                           PF("max", SF_NUM, SU_NONE, call_max_secs, 0),
                                           PF("mean", SF_NUM, SU_NONE, call_mean_secs, 0)};
static const summary_field phase_cores[] = {PF("mean", SF_NUM, SU_NONE, cores_mean, 0),
                                            PF("peak", SF_NUM, SU_NONE, cores_peak, 0)};
static const summary_field phase_gpu_usage[] = {PF("mean", SF_NUM, SU_NONE, gpu_usage_mean, 0),
                                                PF("peak", SF_NUM, SU_NONE, gpu_usage_peak, 0)};
static const summary_field phase_gpu_vram[] = {PF("mean", SF_NUM, SU_NONE, gpu_vram_mean_mib, 0),
                                               PF("peak", SF_NUM, SU_NONE, gpu_vram_peak_mib, 0)};
/* A phase's members, but its fewest cores and its durations (which the writer works out). */
static const summary_field phase_fields[] = {
    PF("name", SF_STR, SU_NONE, name, 0),
    PF("calls", SF_U64, SU_NONE, calls, 0),
    PF("unterminated", SF_U64, SU_NONE, unterminated, 0),
    PF("duration", SF_NUM, SU_TIME, duration_secs, 0),
    SF_OF("call", SU_TIME, phase_call, 0),
    PF("samples", SF_U64, SU_NONE, samples, 0),
    PF("empty_calls", SF_U64, SU_NONE, empty_calls, 0),
    PF("cpu", SF_NUM, SU_TIME, cpu_secs, 0),
    PF("cpu_exact", SF_FLAG, SU_NONE, cpu_exact, 0),
    SF_OF("cores", SU_NONE, phase_cores, 4),
    PF("rss_peak", SF_NUM, SU_MEM, rss_peak_mib, 0),
    PF("pss_peak", SF_NUM, SU_MEM, pss_peak_mib, 0),
    PF("memory_peak", SF_NUM, SU_MEM, memory_peak_mib, 0),
    PF("memory_need", SF_NEED, SU_MEM, memory_need, 0),
    SF_OF("gpu_usage", SU_NONE, phase_gpu_usage, 4),
    SF_OF("gpu_vram", SU_MEM, phase_gpu_vram, 0),
    PF("read_bytes", SF_NUM, SU_NONE, read_bytes, 0),
    PF("write_bytes", SF_NUM, SU_NONE, write_bytes, 0),
    PF("first_start_secs", SF_NUM, SU_NONE, first_start_secs, 3),
};

/* The energy's members but its carbon (from the grid). */
static const summary_field energy_fields[] = {
    SF("joules", SF_NUM, SU_NONE, energy_joules, 3),
    SF("method", SF_STR, SU_NONE, energy_method, 0),
    SF("process_joules", SF_NUM, SU_NONE, process_energy_joules, 3),
    SF("process_method", SF_STR, SU_NONE, process_energy_method, 0),
    SF("power_watts", SF_DIST, SU_NONE, power_watts, 3),
    SF("process_power_watts", SF_DIST, SU_NONE, process_power_watts, 3),
    SF("idle_power_watts", SF_NUM, SU_NONE, idle_power_watts, 3),
    SF("model", SF_STR, SU_NONE, energy_model, 0),
    SF("missing", SF_STR, SU_NONE, energy_missing, 0),
    SF("gpu_power_throttled", SF_NUM, SU_TIME, gpu_power_throttled_secs, 0),
    SF("gpu_thermal_throttled", SF_NUM, SU_TIME, gpu_thermal_throttled_secs, 0),
};

/* The efficiency's members between "place" and "job_start_secs" (the request's). */
static const summary_field efficiency_fields[] = {
    SF("cpu_pct", SF_NUM, SU_NONE, cpu_efficiency_pct, 2),
    SF("memory_pct", SF_NUM, SU_NONE, memory_efficiency_pct, 2),
    SF("gpu_pct", SF_NUM, SU_NONE, gpu_efficiency_pct, 2),
    SF("time_limit_pct", SF_NUM, SU_NONE, time_limit_used_pct, 2),
    SF("requested_cpu_cores", SF_NUM, SU_NONE, requested_cpu_cores, 4),
    SF("requested_cpu_from", SF_STR, SU_NONE, requested_cpu_from, 0),
    SF("requested_memory", SF_NUM, SU_MEM, requested_memory_mib, 0),
    SF("requested_memory_from", SF_STR, SU_NONE, requested_memory_from, 0),
    SF("requested_gpus", SF_NUM, SU_NONE, requested_gpus, 0),
    SF("requested_gpus_from", SF_STR, SU_NONE, requested_gpus_from, 0),
    SF("time_limit", SF_NUM, SU_TIME, time_limit_secs, 0),
    SF("time_limit_from", SF_STR, SU_NONE, time_limit_from, 0),
};

/* What the GPUs did (0.19, NVML GPM): each a time-weighted distribution, percent or bytes per
 * second, then whether the figures were the devices', shared with other processes. */
/* 0.20: the clocks (docs/answers.md "Clocks"): the wall clock's steps, the sampling's gaps. */
static const summary_field clock_fields[] = {
    SF("steps", SF_NUM, SU_NONE, clock_steps, 0), SF("step_secs", SF_NUM, SU_NONE, clock_step_secs, 3),
    SF("step_largest_secs", SF_NUM, SU_NONE, clock_step_largest_secs, 3),
    SF("gaps", SF_NUM, SU_NONE, sampling_gaps, 0), SF("gap_secs", SF_NUM, SU_NONE, sampling_gap_secs, 3),
    SF("gap_longest_secs", SF_NUM, SU_NONE, sampling_gap_longest_secs, 3),
};

static const summary_field gpu_work_fields[] = {
    SF("sm_active_pct", SF_DIST, SU_NONE, gpu_sm_active_pct, 2),
    SF("sm_occupancy_pct", SF_DIST, SU_NONE, gpu_sm_occupancy_pct, 2),
    SF("tensor_active_pct", SF_DIST, SU_NONE, gpu_tensor_active_pct, 2),
    SF("dram_active_pct", SF_DIST, SU_NONE, gpu_dram_active_pct, 2),
    SF("fp64_active_pct", SF_DIST, SU_NONE, gpu_fp64_active_pct, 2),
    SF("fp32_active_pct", SF_DIST, SU_NONE, gpu_fp32_active_pct, 2),
    SF("fp16_active_pct", SF_DIST, SU_NONE, gpu_fp16_active_pct, 2),
    SF("pcie_bytes_per_sec", SF_DIST, SU_NONE, gpu_pcie_bytes_per_sec, 0),
    SF("nvlink_bytes_per_sec", SF_DIST, SU_NONE, gpu_nvlink_bytes_per_sec, 0),
    SF("shared", SF_BOOL, SU_NONE, gpu_work_shared, 0),
};

/* The summary's objects of rt_summary's own members, by name: rt_summary_json_key's walk. */
static const struct {
    const char *name;
    const summary_field *f;
    size_t n;
} summary_objects[] = {
    {"process", process_fields, N_OF(process_fields)},    {"machine", machine_fields, N_OF(machine_fields)},
    {"cgroup", cgroup_fields, N_OF(cgroup_fields)},       {"pressure", pressure_fields, N_OF(pressure_fields)},
    {"energy", energy_fields, N_OF(energy_fields)},       {"efficiency", efficiency_fields, N_OF(efficiency_fields)},
    {"gpu_work", gpu_work_fields, N_OF(gpu_work_fields)}, {"clock", clock_fields, N_OF(clock_fields)},
};

size_t rt_summary_json_key(size_t off, char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < N_OF(summary_objects); i++)
        for (size_t k = 0; k < summary_objects[i].n; k++) {
            const summary_field *f = &summary_objects[i].f[k];
            if (f->off == off && (f->kind == SF_NUM || f->kind == SF_DIST || f->kind == SF_BOOL)) {
                int n = snprintf(buf, cap, "%s.%s", summary_objects[i].name, f->key);
                return n < 0 ? 0 : (size_t)n;
            }
        }
    return 0;
}

/* The double at off in base. */
static double at(const char *base, size_t off)
{
    double v;
    memcpy(&v, base + off, sizeof v);
    return v;
}

/* "name<suffix>":{the doubles of sub (n) in the struct at base, each v*factor with u's
 * decimals, no suffix (u NULL: as it is with dec decimals)}, then a comma. */
static void sub_object(rt_ob *o, const char *name, const unit *u, const char *base, const summary_field *sub,
                       size_t n, int dec)
{
    key(o, name, u ? u->suffix : NULL);
    rt_ob_put(o, "{", 1);
    for (size_t k = 0; k < n; k++) {
        double v = at(base, sub[k].off);
        num(o, sub[k].key, NULL, u ? v * u->factor : v, u ? u->decimals : dec);
    }
    o->len--; /* the last member's comma: overwritten by the brace */
    rt_ob_put(o, "},", 2);
}

/* "need<unit>":..,"source":"..","sampled":.., (an rt_need's members, each with its comma). */
static void need_members(rt_ob *o, const rt_need *n, const unit *mem)
{
    num(o, "need", mem, n->mib, 0);
    str(o, "source", rt_need_source_name(n->source));
    key(o, "sampled", NULL);
    rt_ob_lit(o, n->sampled ? "true," : "false,");
}

/* The members of fields (n) of the struct at base, in order, each with its comma, as w says. */
static void members_w(rt_ob *o, const void *at_base, const summary_field *f, size_t n, const writing *w)
{
    const char *base = at_base;
    const unit *mem = w->mem;
    for (size_t i = 0; i < n; i++) {
        const unit *u = f[i].unit == SU_MEM ? w->mem : f[i].unit == SU_TIME ? w->tm : NULL;
        const char *p = base + f[i].off;
        int dec = w->full ? DEC_REAL : f[i].dec;
        switch (f[i].kind) {
        case SF_NUM:
            num(o, f[i].key, u, at(base, f[i].off), dec);
            break;
        case SF_DIST:
            sub_object(o, f[i].key, u, p, dist_members, N_OF(dist_members), dec);
            break;
        case SF_BOOL: {
            double v = at(base, f[i].off);
            key(o, f[i].key, NULL);
            rt_ob_lit(o, isnan(v) ? "null," : v == 1 ? "true," : "false,");
            break;
        }
        case SF_FLAG: {
            int v;
            memcpy(&v, p, sizeof v);
            key(o, f[i].key, NULL);
            rt_ob_lit(o, v ? "true," : "false,");
            break;
        }
        case SF_STR: {
            const char *v;
            memcpy(&v, p, sizeof v);
            str(o, f[i].key, v);
            break;
        }
        case SF_TEXT:
            str(o, f[i].key, *p ? p : NULL);
            break;
        case SF_I64: {
            int64_t v;
            memcpy(&v, p, sizeof v);
            if (w->full) { /* an integer as an integer */
                key(o, f[i].key, u ? u->suffix : NULL);
                rt_ob_i64_or(o, v, "null");
                rt_ob_put(o, ",", 1);
            } else {
                num(o, f[i].key, u, v == RT_NULL_I64 ? NAN : (double)v, dec);
            }
            break;
        }
        case SF_U64:
        case SF_SIZE: {
            uint64_t v;
            if (f[i].kind == SF_SIZE) {
                size_t z;
                memcpy(&z, p, sizeof z);
                v = z;
            } else {
                memcpy(&v, p, sizeof v);
            }
            if (w->full) {
                key(o, f[i].key, u ? u->suffix : NULL);
                rt_ob_u64(o, v);
                rt_ob_put(o, ",", 1);
            } else {
                num(o, f[i].key, u, (double)v, dec);
            }
            break;
        }
        case SF_SOURCE: {
            int v;
            memcpy(&v, p, sizeof v);
            str(o, f[i].key, rt_need_source_name(v));
            break;
        }
        case SF_WORDS: {
            char text[512];
            str(o, f[i].key, f[i].words(base, text, sizeof text) > 0 ? text : NULL);
            break;
        }
        case SF_CALL:
            key(o, f[i].key, NULL);
            f[i].call(o, base, w);
            break;
        case SF_PCT: {
            double of = at(base, f[i].off2);
            num(o, f[i].key, u, of > 0 ? 100.0 * at(base, f[i].off) / of : NAN, dec);
            break;
        }
        case SF_OBJ:
            sub_object(o, f[i].key, u, base, f[i].sub, f[i].n_sub, dec);
            break;
        case SF_NEED:
            key(o, f[i].key, NULL);
            rt_ob_put(o, "{", 1);
            need_members(o, (const rt_need *)(const void *)p, mem);
            o->len--;
            rt_ob_put(o, "},", 2);
            break;
        }
    }
}

/* The members of fields (n) of the struct at base, in order, each with its comma; memory in
 * mem, time in tm. */
static void members(rt_ob *o, const void *base, const summary_field *f, size_t n, const unit *mem, const unit *tm)
{
    const writing w = {.mem = mem, .tm = tm};
    members_w(o, base, f, n, &w);
}

/* "name":{members of fields, in order}, then a comma (the caller closes the run). */
static void fields_object(rt_ob *o, const char *name, const rt_summary *s, const summary_field *f, size_t n,
                          const unit *mem, const unit *tm)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    members(o, s, f, n, mem, tm);
    o->len--; /* the last member's comma: overwritten by the brace */
    rt_ob_put(o, "},", 2);
}

static void process_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    if (!s->has_process) {
        key(o, "process", NULL);
        rt_ob_lit(o, "null,");
        return;
    }
    fields_object(o, "process", s, process_fields, N_OF(process_fields), mem, tm);
}

/* Whether some record had a cgroup: any double of cgroup_fields is known (the throttled share
 * is worked out from two of them; the first OOM kill's time only comes with a count). */
static bool had_cgroup(const rt_summary *s)
{
    for (size_t i = 0; i < N_OF(cgroup_fields); i++)
        if (cgroup_fields[i].kind == SF_NUM && !isnan(at((const char *)s, cgroup_fields[i].off)))
            return true;
    return false;
}

/* ,"name": then "{" and true when present, else null and false (the caller then writes the
 * members and closes with close_object). */
static bool open_object(rt_ob *o, const char *name, bool present)
{
    rt_ob_put(o, ",", 1);
    key(o, name, NULL);
    rt_ob_lit(o, present ? "{" : "null");
    return present;
}

/* Closes an object opened with open_object over its last member's comma. */
static void close_object(rt_ob *o)
{
    o->len--;
    rt_ob_put(o, "}", 1);
}

/* ,"name":{"need<unit>":..,"source":"..","sampled":..}: a need (rt_need) of the run. */
static void need_part(rt_ob *o, const char *name, const rt_need *n, const unit *mem)
{
    open_object(o, name, true);
    need_members(o, n, mem);
    close_object(o);
}

/* "durations<t>":[1 core, 2 cores, ..], (table t's rows' predicted durations in order; null
 * without a table). */
static void durations(rt_ob *o, const rt_cores_table *t, const unit *tm)
{
    key(o, "durations", tm->suffix);
    if (!t) {
        rt_ob_lit(o, "null,");
        return;
    }
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < t->n; i++) {
        if (i)
            rt_ob_put(o, ",", 1);
        value(o, t->rows[i].duration_secs * tm->factor, tm->decimals);
    }
    rt_ob_put(o, "],", 2);
}

/* ,"cores":{"duration<t>":..,"cores_had":..,"peak_cores":..,"wait<t>":..,"wait_from":..,
 * "own_duration<t>":..,"others_cores":..,"machine_cores":..,"demand_cores":..,
 * "durations<t>":[1 core, 2 cores, ..]}: the run under other core counts (rt_cores_table, its
 * rows' durations in order), or null without one. */
static void cores_part(rt_ob *o, const rt_summary *s, const unit *tm)
{
    const rt_cores_table *t = s->cores;
    if (!open_object(o, "cores", t != NULL))
        return;
    members(o, t, cores_fields, N_OF(cores_fields), NULL, tm);
    durations(o, t, tm);
    close_object(o);
}

/* ,"recommendation":{..} (rt_recommend of this run alone; null without a tracked tree) and
 * ,"notes":[{"kind":..,"text":..},..] (rt_summary_notes). */
static void answer_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    const rt_summary *runs[1] = {s};
    if (open_object(o, "recommendation", s->has_process && rt_recommend(runs, 1, &rec) == RT_OK)) {
        for (int place = 1;; place++) { /* the summary's members of the recommendation, in its order */
            size_t i = 0;
            while (i < N_OF(recommendation_fields) && recommendation_fields[i].in_summary != place)
                i++;
            if (i == N_OF(recommendation_fields))
                break;
            members(o, &rec, &recommendation_fields[i], 1, mem, tm);
        }
        close_object(o);
    }
    rt_note notes[RT_NOTES_MAX];
    size_t n = rt_summary_notes(s, NULL, notes, RT_NOTES_MAX);
    rt_ob_lit(o, ",\"notes\":[");
    for (size_t i = 0; i < n; i++) {
        rt_ob_lit(o, i ? ",{" : "{");
        str(o, "kind", rt_note_kind_name(notes[i].kind));
        str(o, "text", notes[i].text);
        close_object(o);
    }
    rt_ob_put(o, "]", 1);
}

/* ,"cgroup":{...} (the limits and what they did over the run), or null without a cgroup. */
static void cgroup_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    if (!open_object(o, "cgroup", had_cgroup(s)))
        return;
    members(o, s, cgroup_fields, N_OF(cgroup_fields), mem, tm);
    close_object(o);
}

/* ,"pressure":{...} (each a time-weighted distribution, percent), or null when no record
 * had pressure. */
static void pressure_part(rt_ob *o, const rt_summary *s)
{
    bool any = false;
    for (size_t i = 0; i < N_OF(pressure_fields); i++)
        any |= !isnan(at((const char *)s, pressure_fields[i].off + offsetof(rt_dist, mean)));
    if (!open_object(o, "pressure", any))
        return;
    members(o, s, pressure_fields, N_OF(pressure_fields), NULL, NULL);
    close_object(o);
}

/* ---- gpu_tracker's view (rt_usage) in the shape of its to_json() ---------------------- */

/* "name":v*u->factor with u's decimals (null for NaN), then a comma: no suffix (gpu_tracker
 * names the unit in a "unit" member instead). */
static void gt_num(rt_ob *o, const char *name, const unit *u, double v)
{
    key(o, name, NULL);
    value(o, u ? v * u->factor : v, u ? u->decimals : 3);
    rt_ob_put(o, ",", 1);
}

/* "name":v as gpu_tracker has counts: an integer when it is whole (null for NaN), then a
 * comma. */
static void gt_count(rt_ob *o, const char *name, double v)
{
    key(o, name, NULL);
    value(o, v, isfinite(v) && v != floor(v) ? 3 : 0);
    rt_ob_put(o, ",", 1);
}

/* "name":{"total_rss":..,"private_rss":..,"shared_rss":..}, */
static void gt_rss(rt_ob *o, const char *name, const unit *u, const rt_usage_rss *r)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    gt_num(o, "total_rss", u, r->total_mib);
    gt_num(o, "private_rss", u, r->private_mib);
    gt_num(o, "shared_rss", u, r->shared_mib);
    o->len--;
    rt_ob_put(o, "},", 2);
}

/* "name":{"max_sum_percent":..,...}, */
static void gt_pct(rt_ob *o, const char *name, const rt_usage_pct *p)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    gt_num(o, "max_sum_percent", NULL, p->max_sum_pct);
    gt_num(o, "max_hardware_percent", NULL, p->max_hardware_pct);
    gt_num(o, "mean_sum_percent", NULL, p->mean_sum_pct);
    gt_num(o, "mean_hardware_percent", NULL, p->mean_hardware_pct);
    o->len--;
    rt_ob_put(o, "},", 2);
}

static const char *const part_names[3] = {"main", "descendants", "combined"};

/* "name":{"unit":..,"system_capacity":..,"system":..,"main":..,..}, of RAM (each part an
 * RSS object) or of GPU RAM (each part a number), as peaks or means. */
static void gt_ram(rt_ob *o, const char *name, const unit *u, const rt_usage *g, bool peak, bool gpu)
{
    key(o, name, NULL);
    rt_ob_put(o, "{", 1);
    str(o, "unit", u->name);
    gt_num(o, "system_capacity", u, gpu ? g->gpu_ram_capacity_mib : g->ram_capacity_mib);
    double sys_peak = gpu ? g->gpu_ram_system_peak_mib : g->ram_system_peak_mib;
    double sys_mean = gpu ? g->gpu_ram_system_mean_mib : g->ram_system_mean_mib;
    gt_num(o, "system", u, peak ? sys_peak : sys_mean);
    for (int i = 0; i < 3; i++) {
        if (gpu)
            gt_num(o, part_names[i], u, peak ? g->gpu_ram_peak_mib[i] : g->gpu_ram_mean_mib[i]);
        else
            gt_rss(o, part_names[i], u, peak ? &g->ram_peak[i] : &g->ram_mean[i]);
    }
    o->len--;
    rt_ob_put(o, "},", 2);
}

/* ,"gpu_tracker":{...}: the run as gpu_tracker's to_json() has it (max_ram, max_gpu_ram,
 * cpu_utilization, gpu_utilization, compute_time), plus mean_ram and mean_gpu_ram; memory in
 * mem (gigabytes when the caller named none, gpu_tracker's default), time in tm (hours when
 * none). null without a tracked tree. */
static void gpu_tracker_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    const rt_usage *g = s->usage;
    if (!open_object(o, "gpu_tracker", s->has_process && g))
        return;
    const unit *u = mem->name ? mem : RT_GT_DEFAULT_MEMORY, *t = tm->name ? tm : RT_GT_DEFAULT_TIME;
    gt_ram(o, "max_ram", u, g, true, false);
    gt_ram(o, "mean_ram", u, g, false, false);
    gt_ram(o, "max_gpu_ram", u, g, true, true);
    gt_ram(o, "mean_gpu_ram", u, g, false, true);
    key(o, "cpu_utilization", NULL);
    rt_ob_put(o, "{", 1);
    gt_count(o, "system_core_count", g->system_core_count);
    gt_count(o, "n_expected_cores", g->expected_cores);
    gt_pct(o, "system", &g->cpu_system);
    for (int i = 0; i < 3; i++)
        gt_pct(o, part_names[i], &g->cpu[i]);
    gt_count(o, "main_n_threads", g->threads_peak[0]);
    gt_count(o, "descendants_n_threads", g->threads_peak[1]);
    gt_count(o, "combined_n_threads", g->threads_peak[2]);
    o->len--;
    rt_ob_put(o, "},", 2);
    key(o, "gpu_utilization", NULL);
    rt_ob_put(o, "{", 1);
    gt_count(o, "system_gpu_count", g->system_gpu_count);
    gt_count(o, "n_expected_gpus", g->expected_gpus);
    gt_pct(o, "gpu_percentages", &g->gpu);
    o->len--;
    rt_ob_put(o, "},", 2);
    key(o, "compute_time", NULL);
    rt_ob_put(o, "{", 1);
    str(o, "unit", t->name);
    gt_num(o, "time", t, g->duration_secs);
    o->len--;
    rt_ob_put(o, "},", 2);
    close_object(o);
}

/* ,"phases":[{..},..] (one object per name, in the order each first started; rt_phase_summary)
 * and ,"phase_marks":{..} (the counts of marks): both null when the run had no mark. */
static void phases_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    const rt_phase_counts *c = s->phase_counts;
    rt_ob_lit(o, ",\"phases\":");
    if (!c) {
        rt_ob_lit(o, "null,\"phase_marks\":null");
        return;
    }
    rt_ob_put(o, "[", 1);
    for (size_t i = 0; i < s->phase_count; i++) {
        const rt_phase_summary *p = s->phases[i];
        rt_ob_lit(o, i ? ",{" : "{");
        members(o, p, phase_fields, N_OF(phase_fields), mem, tm);
        /* 0.18: the phase under 1, 2, ... cores, and the fewest within 10% of its own */
        int64_t asked = rt_cores_fewest(p->cores, s->max_slowdown_pct >= 0 ? s->max_slowdown_pct : 10);
        num(o, "cores_asked", NULL, asked > 0 ? (double)asked : NAN, 0);
        num(o, "own_duration", tm, p->cores ? p->cores->own_secs : NAN, 0); /* 0.20: its table's own */
        durations(o, p->cores, tm);
        close_object(o);
    }
    rt_ob_lit(o, "],\"phase_marks\":{");
    const struct {
        const char *name;
        uint64_t n;
    } k[] = {{"accepted", c->accepted}, {"unknown_stop", c->unknown_stop}, {"unterminated", c->unterminated},
             {"too_long", c->too_long}, {"malformed", c->malformed},       {"flood", c->flood},
             {"dropped", c->dropped},   {"too_many_names", c->too_many_names}, {"too_deep", c->too_deep},
             {"refused", c->refused}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        key(o, k[i].name, NULL);
        rt_ob_u64(o, k[i].n);
        rt_ob_put(o, ",", 1);
    }
    close_object(o);
}

/* One part of the energy's (rt_summary_energy_part). */
static const summary_field energy_part_fields[] = {
    FIELD(rt_summary_energy_part, "kind", SF_STR, SU_NONE, kind, 0),
    FIELD(rt_summary_energy_part, "source", SF_STR, SU_NONE, source, 0),
    FIELD(rt_summary_energy_part, "method", SF_STR, SU_NONE, method, 0),
    FIELD(rt_summary_energy_part, "joules", SF_NUM, SU_NONE, energy_joules, 3),
    FIELD(rt_summary_energy_part, "process_joules", SF_NUM, SU_NONE, process_energy_joules, 3),
    FIELD(rt_summary_energy_part, "devices", SF_NUM, SU_NONE, devices, 0),
};

/* The energy's "parts":[{..},..] (the largest first; null when the records carried no domains)
 * and "meter_source" (a platform meter's source when one gave the machine's figure), each with
 * its comma (0.19). */
static void energy_parts(rt_ob *o, const rt_summary *s)
{
    key(o, "parts", NULL);
    if (!s->energy_parts || !s->energy_part_count) {
        rt_ob_lit(o, "null,");
    } else {
        for (size_t i = 0; i < s->energy_part_count; i++) {
            rt_ob_lit(o, i ? ",{" : "[{");
            members(o, s->energy_parts[i], energy_part_fields, N_OF(energy_part_fields), NULL, NULL);
            close_object(o);
        }
        rt_ob_lit(o, "],");
    }
    str(o, "meter_source", s->energy_meter_source);
}

/* ,"energy":{..}: the run's energy with its methods, power, the idle floor, the notes, the
 * GPUs' throttle time and "carbon" ({..}, or null when the grid's intensity is unknown); null
 * when the run had no energy figure, no note and no GPU throttle time. */
static void energy_part(rt_ob *o, const rt_summary *s, const unit *tm)
{
    bool any = s->energy_method || s->process_energy_method || s->energy_model || s->energy_missing ||
               s->gpu_power_throttled_secs > 0 || s->gpu_thermal_throttled_secs > 0;
    if (!open_object(o, "energy", any))
        return;
    members(o, s, energy_fields, N_OF(energy_fields), NULL, tm);
    const rt_grid *g = s->grid;
    key(o, "carbon", NULL);
    if (!g || !(g->g_per_kwh > 0)) {
        rt_ob_lit(o, "null,");
    } else {
        rt_ob_put(o, "{", 1);
        num(o, "co2e_grams", NULL, s->co2e_grams, 6); /* micrograms: a short job's carbon is not 0 */
        num(o, "process_co2e_grams", NULL, s->process_co2e_grams, 6);
        num(o, "g_per_kwh", NULL, g->g_per_kwh, 1);
        str(o, "zone", g->zone);
        str(o, "name", g->name);
        str(o, "source", g->source);
        num(o, "year", NULL, g->year > 0 ? (double)g->year : NAN, 0);
        o->len--;
        rt_ob_put(o, "},", 2);
    }
    energy_parts(o, s);
    close_object(o);
}

/* ,"efficiency":{..}: what the job was given (the request, else its cgroup limits, else a
 * runner's machine) and how much of it it used, as seff counts; null when nothing said what
 * the job was given. */
static void efficiency_part(rt_ob *o, const rt_summary *s, const unit *mem, const unit *tm)
{
    bool any = s->request || s->requested_cpu_from || s->requested_memory_from || s->requested_gpus_from ||
               s->time_limit_from;
    if (!open_object(o, "efficiency", any))
        return;
    str(o, "place", s->request ? s->request->place : NULL);
    members(o, s, efficiency_fields, N_OF(efficiency_fields), mem, tm);
    double start = s->request && s->request->job_start_secs > 0 ? s->request->job_start_secs : NAN;
    num(o, "job_start_secs", NULL, start, 3);
    close_object(o);
}

/* ,"member":{..}: the run's place in a job of several nodes (a number null when not
 * said); null when the run names no job. */
static void member_part(rt_ob *o, const rt_summary *s)
{
    const rt_member *m = s->member;
    if (!open_object(o, "member", m != NULL))
        return;
    rt_json_member_fields(o, m); /* the JSON line's members, as the line writes them */
    close_object(o);
}

/* ,"gpu_work":{..}: what the GPUs did (the tree's GPUs, else the machine's), or null when no
 * record had such a figure (GPUs without GPM, or none). */
static void gpu_work_part(rt_ob *o, const rt_summary *s)
{
    bool any = false;
    for (size_t i = 0; i < N_OF(gpu_work_fields); i++)
        any |= gpu_work_fields[i].kind == SF_DIST &&
               !isnan(at((const char *)s, gpu_work_fields[i].off + offsetof(rt_dist, mean)));
    if (!open_object(o, "gpu_work", any))
        return;
    members(o, s, gpu_work_fields, N_OF(gpu_work_fields), NULL, NULL);
    close_object(o);
}

/* ,"clock":{..}: the wall clock's steps and the sampling's gaps, or null when the run had
 * neither. */
static void clock_part(rt_ob *o, const rt_summary *s)
{
    if (!open_object(o, "clock", s->clock_steps > 0 || s->sampling_gaps > 0))
        return;
    members(o, s, clock_fields, N_OF(clock_fields), NULL, NULL);
    close_object(o);
}

static void machine_part(rt_ob *o, const rt_summary *s, const unit *mem)
{
    fields_object(o, "machine", s, machine_fields, N_OF(machine_fields), mem, NULL);
    o->len--; /* the last object of all: no comma after it */
}

/* Returns the length the object needs (its newline included, the NUL not), like snprintf;
 * buf (cap bytes) holds as much as fits, NUL-terminated when cap > 0. 0 for a NULL s or an
 * unknown unit (buf then holds ""). */
size_t rt_format_summary(const rt_summary *s, const char *memory_unit, const char *time_unit, char *buf, size_t cap)
{
    const unit *mem = find_unit(rt_gt_memory_units, RT_GT_MEMORY_UNITS, &mib, memory_unit);
    const unit *tm = find_unit(rt_gt_time_units, RT_GT_TIME_UNITS, &secs, time_unit);
    if (cap)
        buf[0] = '\0';
    if (!s || !mem || !tm)
        return 0;
    rt_ob o = {.buf = buf, .cap = cap};
    rt_ob_lit(&o, "{\"samples\":");
    rt_ob_u64(&o, s->samples);
    rt_ob_put(&o, ",", 1);
    members(&o, s, run_fields, N_OF(run_fields), mem, tm);
    process_part(&o, s, mem, tm);
    machine_part(&o, s, mem);
    cgroup_part(&o, s, mem, tm);
    pressure_part(&o, s);
    need_part(&o, "memory_need", &s->memory_need, mem);
    need_part(&o, "vram_need", &s->vram_need, mem);
    answer_part(&o, s, mem, tm);
    cores_part(&o, s, tm);
    gpu_tracker_part(&o, s, mem, tm);
    phases_part(&o, s, mem, tm);
    energy_part(&o, s, tm);
    efficiency_part(&o, s, mem, tm);
    member_part(&o, s);
    gpu_work_part(&o, s);
    rt_ob_put(&o, ",", 1); /* 0.21: how the command ended */
    key(&o, "end_signal", NULL);
    value(&o, s->end_signal, 0);
    clock_part(&o, s);
    rt_ob_lit(&o, "}\n");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

size_t rt_format_recommendation_json(const rt_recommendation *rec, const rt_server *smaller, const rt_server *like,
                                     char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    if (!rec || rec->struct_size < sizeof *rec)
        return 0;
    rt_ob o = {.buf = buf, .cap = cap};
    const writing w = {.mem = &full_mib, .tm = &full_secs, .full = true, .smaller = smaller, .like = like};
    rt_ob_put(&o, "{", 1);
    members_w(&o, rec, recommendation_fields, N_OF(recommendation_fields), &w);
    close_object(&o);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

/* A row of the run under other core counts, as recommend --json's "rows" has it (its cost after). */
#define CR(k, kd, un, member) FIELD(rt_cores_row, k, kd, un, member, 0)
static const summary_field cores_row_fields[] = {
    CR("cores", SF_I64, SU_NONE, cores), CR("duration", SF_NUM, SU_TIME, duration_secs),
    CR("core_hours", SF_NUM, SU_NONE, core_hours), CR("wait_bound", SF_FLAG, SU_NONE, wait_bound),
};

size_t rt_format_cores_json(const rt_cores_table *t, double usd_per_core_hour, char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    if (!t)
        return 0;
    rt_ob o = {.buf = buf, .cap = cap};
    const writing w = {.mem = &full_mib, .tm = &full_secs, .full = true};
    rt_ob_put(&o, "{", 1);
    members_w(&o, t, cores_fields, N_OF(cores_fields), &w);
    rt_ob_lit(&o, "\"rows\":[");
    for (size_t i = 0; i < t->n; i++) {
        rt_ob_lit(&o, i ? ",{" : "{");
        members_w(&o, &t->rows[i], cores_row_fields, N_OF(cores_row_fields), &w);
        num(&o, "cost_usd", NULL, t->rows[i].core_hours * usd_per_core_hour, DEC_REAL);
        close_object(&o);
    }
    rt_ob_lit(&o, "]}");
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

rt_error rt_format_summary_json(const rt_summary *s, const char *memory_unit, const char *time_unit, char *buf,
                                size_t cap, size_t *len)
{
    rt_err_clear();
    if (len)
        *len = 0;
    if (cap)
        buf[0] = '\0';
    if (!find_unit(rt_gt_memory_units, RT_GT_MEMORY_UNITS, &mib, memory_unit)) {
        rt_err_set("unknown memory unit \"%s\" (bytes, kilobytes, megabytes, gigabytes, terabytes)", memory_unit);
        return RT_ERR_INVALID;
    }
    if (!find_unit(rt_gt_time_units, RT_GT_TIME_UNITS, &secs, time_unit)) {
        rt_err_set("unknown time unit \"%s\" (seconds, minutes, hours, days)", time_unit);
        return RT_ERR_INVALID;
    }
    if (!s) {
        rt_err_set("rt_format_summary_json: the summary is NULL");
        return RT_ERR_INVALID;
    }
    size_t n = rt_format_summary(s, memory_unit, time_unit, buf, cap);
    if (len)
        *len = n;
    return RT_OK;
}
