/* schema.h - the sample's schema: every figure of the public sample structs listed once, in
 * one table per struct, with its type (taken from the member itself), unit, the version that
 * added it, its help text and how each view shows it. The JSON line (sink/json.c), the
 * Prometheus families (export/prom_format.c), the OTLP metrics (export/otlp_json.c) and the
 * public listing (rt_schema_field_*) are made from these tables; a view writes by hand only what
 * a table cannot say (arrays of structs, the GPU's detail object, label fan-out over the
 * pressure resources, OTLP metrics of several structs or of the devices).
 * Internal to the library; the names, units and types are public through rt_schema_field_*. */
#ifndef RT_CORE_SCHEMA_H
#define RT_CORE_SCHEMA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "resource_tracker.h"

/* The type of a member, from its C type (size_t is uint64_t on the platforms we build for: a
 * test holds every field's size to its type). */
#define RT_FIELD_TYPE_OF(x)                                                                                            \
    _Generic((x), const char *: RT_FIELD_STRING, uint64_t: RT_FIELD_U64, int64_t: RT_FIELD_I64,                     \
             double: RT_FIELD_DOUBLE, int: RT_FIELD_FLAG)

/* A JSON decimals value meaning the figure is not in the JSON line (it is in other views). */
enum { RT_NO_JSON = -1 };

/* How the Prometheus view shows a figure. name NULL: not exported. Families follow each
 * other by seq (0, 1, 2, ... within a struct's table; see rt_schema_prom_order); consecutive
 * members with the same name make one family whose series carry label="value" (the
 * machine's memory by state). The series' value comes from the figure's type and unit: MiB
 * are written as bytes, percent as a ratio 0..1 (6 decimals), a flag as 1/0, other doubles
 * with dec decimals, integers as they are. */
typedef struct rt_fprom {
    const char *name;          /* the family, "resource_tracker_..." */
    int seq;                   /* its place among its struct's families */
    int counter;               /* 1: a counter (series named ..._total) */
    int dec;                   /* decimals of a double shown as it is */
    const char *help;          /* the family's HELP where it is not the field's help */
    const char *label, *value; /* the series' own label, for a family of several members */
} rt_fprom;

/* How the OTLP view shows a figure. name NULL: not exported. seq places the figure among all the
 * OTLP metrics' members (one numbering over every table and the metrics the exporter makes by
 * hand); consecutive members with the same name make one metric whose points carry key="value".
 * The point's value comes from the figure's type and unit as in Prometheus: MiB as whole bytes,
 * percent as a ratio, other doubles as they are, integers as integers; a GAUGE has no start time. */
typedef enum rt_otlp_kind { RT_OTLP_GAUGE = 1, RT_OTLP_COUNTER, RT_OTLP_UPDOWN } rt_otlp_kind;

typedef struct rt_fotlp {
    const char *name; /* the metric, a semantic-convention name or resource_tracker.* */
    int seq;
    rt_otlp_kind kind;
    const char *unit, *desc; /* UCUM unit; description (on the metric's first member) */
    const char *key, *value; /* the points' attribute, for a metric of several members */
} rt_fotlp;

/* The unit of a figure (rt_unit_name: its word in the public listing). */
typedef enum rt_unit {
    U_NONE,    /* strings and flags */
    U_MIB,     /* MiB (2^20 bytes) */
    U_BYTES,   /* bytes */
    U_BYTES_S, /* bytes per second */
    U_S,       /* seconds */
    U_CORES,   /* logical cores (CPU seconds per second) */
    U_PCT,     /* percent */
    U_USEC,    /* microseconds */
    U_COUNT,   /* a count of things */
    U_PID,     /* a process id */
    U_CELSIUS, /* degrees Celsius */
    U_W,       /* watts */
    U_MHZ,     /* MHz */
    U_MBIT_S,  /* Mbit/s */
    U_GB,      /* 10^9 bytes */
    U_J,       /* joules */
    U_COUNT_OF_UNITS
} rt_unit;

/* "MiB", "%", ..., "" for U_NONE; NULL for no unit of this list. */
const char *rt_unit_name(rt_unit u);

/* One member of a public struct. */
typedef struct rt_field {
    const char *name; /* the member's name, which is its key in the JSON line */
    size_t nlen;      /* strlen(name) */
    rt_field_type type;
    size_t off, size; /* offsetof and sizeof the member */
    rt_unit unit;
    const char *since; /* the version that added it: "0.1", "0.6", ... */
    int jdec;          /* decimals in the JSON line (doubles), or RT_NO_JSON */
    const char *help;
    rt_fprom prom;
    rt_fotlp otlp;
} rt_field;

/* The table of one struct: its name without "rt_" ("process", "net_iface") and its fields, in the
 * order of the JSON line. */
typedef struct rt_fstruct {
    const char *name;
    const rt_field *f;
    size_t n;
} rt_fstruct;

extern const rt_fstruct rt_schema_sample, rt_schema_cpu, rt_schema_memory, rt_schema_net_iface, rt_schema_disk,
    rt_schema_mount, rt_schema_gpu, rt_schema_pressure, rt_schema_cgroup, rt_schema_process, rt_schema_part,
    rt_schema_host, rt_schema_cloud, rt_schema_energy, rt_schema_energy_domain, rt_schema_request,
    rt_schema_gpu_use, rt_schema_gpu_mig;

/* The field of table st at offset off (a member's offsetof), or NULL. */
const rt_field *rt_schema_at(const rt_fstruct *st, size_t off);

/* The member at m, of type type, as a double: NaN for a null (RT_NULL_I64, RT_NULL_U64, NaN) and
 * for a string; a flag 1 or 0. Inline: record.c converts some forty members per sample with it. */
static inline double rt_schema_num(rt_field_type type, const void *m)
{
    double d;
    int64_t i;
    uint64_t u;
    int flag;
    switch (type) {
    case RT_FIELD_DOUBLE: memcpy(&d, m, sizeof d); return d;
    case RT_FIELD_I64: memcpy(&i, m, sizeof i); return i == RT_NULL_I64 ? NAN : (double)i;
    case RT_FIELD_U64: memcpy(&u, m, sizeof u); return u == RT_NULL_U64 ? NAN : (double)u;
    case RT_FIELD_FLAG: memcpy(&flag, m, sizeof flag); return flag ? 1 : 0;
    default: return NAN;
    }
}

/* ---- the Rust tool's view (schema_rs.c) ---------------------------------------------
 * The JSON line of the Rust resource-tracker 0.1.14 (`--format json-rs`, sink/json_rs.c) is an
 * annotation of the tables above: one table per object of the Rust tool's sample, each member
 * naming the schema figure it shows (by table and offset), how serde_json writes it and how its
 * unit converts. serde_json (without preserve_order) writes every object's keys sorted by their
 * bytes: each table is in that order (test_schema holds it so). A member the tables cannot say
 * (arrays and objects, the version, the interval, the job's name) is RS_HAND: the sink writes it
 * at its place in the table. */
typedef enum rt_rs_type {
    RS_HAND = 0, /* written by the sink by its name */
    RS_INT,      /* an integer (u64, u32, i64, i32): a double figure is truncated */
    RS_FLOAT,    /* an f64: the shortest text that reads back as the same double, as serde_json
                  * writes it (1.0, 0.25, 1e-7); NaN is null */
    RS_STR,      /* a String */
} rt_rs_type;

typedef enum rt_rs_conv {
    RS_SAME = 0, /* the figure as it is */
    RS_PER_100,  /* a percent as a fraction (a GPU's busy share: 50 % is 0.5 GPU) */
    RS_TO_MIB,   /* bytes as MiB */
    RS_DELTA,    /* a cumulative figure's change since the previous sample (never below 0) */
    RS_RATE,     /* that change per second of the interval */
} rt_rs_conv;

typedef struct rt_rs_field {
    const char *name;     /* its key in the Rust tool's object */
    const rt_fstruct *st; /* the schema table of the figure it shows (NULL for RS_HAND) */
    size_t off;           /* the figure's member (offsetof) in st's struct */
    rt_rs_type type;
    rt_rs_conv conv;
    int option; /* 1: an Option in the Rust struct, null when ours is null (or its struct is
                 * absent); 0: a plain value, its default (0, "") when ours is null; an f64 NaN
                 * is null either way, as serde_json writes it */
    const rt_fstruct *alt; /* where st's struct is absent (no tracked tree), the figure of this
                            * table at alt_off instead (the machine's processes), or NULL */
    size_t alt_off;
} rt_rs_field;

typedef struct rt_rs_object {
    const char *name; /* the Rust struct: Sample, CpuMetrics, ... */
    const rt_rs_field *f;
    size_t n;
} rt_rs_object;

extern const rt_rs_object rt_rs_sample, rt_rs_cpu, rt_rs_memory, rt_rs_network, rt_rs_disk, rt_rs_mount, rt_rs_gpu;

/* The largest table (for arrays sized by it). */
#define RT_SCHEMA_MAX_FIELDS 64

/* Fills order[0..k) with the indices of st's exported fields in family order and returns k. */
size_t rt_schema_prom_order(const rt_fstruct *st, size_t order[RT_SCHEMA_MAX_FIELDS]);

#endif
