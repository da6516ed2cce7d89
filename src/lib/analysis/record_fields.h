/* record_fields.h - the analysis record's figures listed once (htop's Process_fields[] is the
 * model): one row per double of rt_record with its offset, its store column, where it comes
 * from in the sample (a member of the tree, its cgroup or a part of its split, converted by the
 * schema's type; or made by record.c's own code) and how the statistics fold it into the
 * summary. record.c (the null record, a caller's record at its size, the members copied from a
 * sample), columns.c (a record as the store's row and back) and stats.c (the folds) walk it.
 * Not public. */
#ifndef RT_ANALYSIS_RECORD_FIELDS_H
#define RT_ANALYSIS_RECORD_FIELDS_H

#include <stddef.h>

#include "resource_tracker.h"

/* Where a figure comes from in a sample. */
typedef enum rt_rf_from {
    RT_RF_MADE = 0,    /* record.c's own code makes it (sums over devices, a choice, a rule) */
    RT_RF_PROCESS,     /* a member of the sample's rt_process (NaN without a tree) */
    RT_RF_GROUP,       /* a member of the record's rt_cgroup: the tree's, else (without one) the
                        * group the tracker runs in (NaN without either) */
    RT_RF_MAIN,        /* a member of the tree's rt_process_part main (NaN without) */
    RT_RF_DESCENDANTS, /* ... of its descendants part */
    RT_RF_COMBINED,    /* ... of its combined part */
} rt_rf_from;

/* How rt_stats folds a figure over the records into its rt_summary member. */
typedef enum rt_rf_fold {
    RT_FOLD_NONE = 0, /* not folded, or by stats.c's own code */
    RT_FOLD_LEVEL,    /* an rt_dist of a level read at the sample, weighted by the interval */
    RT_FOLD_RATE,     /* an rt_dist of a rate over the interval (a short one folded: fold.h) */
    RT_FOLD_SUM,      /* an amount in the interval: summed */
    RT_FOLD_MAX,      /* the largest */
    RT_FOLD_MIN,      /* the lowest (limits, floors) */
    RT_FOLD_TOTAL,    /* a counter since tracking began: the runs' last totals in a file summed */
} rt_rf_fold;

/* How the store keeps a column (store.c): a float where 24 bits are plenty (ratios, counts,
 * seconds in the interval, pressure percents); always a double (Unix time, the CPU total since
 * the start); or exact: a float while every value of a block round-trips through one
 * unchanged, else that block's column as doubles (MiB, bytes, counters, totals). */
typedef enum rt_keep { RT_KEEP_FLOAT = 0, RT_KEEP_DOUBLE = 1, RT_KEEP_EXACT = 2 } rt_keep;

typedef struct rt_record_field {
    const char *name;       /* the store's column name (rt_column_name), or the member's */
    size_t off;             /* of the double in rt_record */
    int col;                /* its store column (RT_COL_*), -1: none */
    rt_rf_from from;        /* RT_RF_MADE: src_off, src_type and div unused */
    size_t src_off;         /* of the member in its sample struct */
    rt_field_type src_type; /* the member's type: the schema's rule says its null (rt_schema_num) */
    double div;             /* the member divided by it (a unit's change), 0: taken as it is */
    rt_rf_fold fold;
    size_t sum_off;         /* of its rt_summary member (an rt_dist for LEVEL and RATE) */
    rt_keep keep;           /* how the store keeps its column */
} rt_record_field;

/* The rows, in the order of rt_record's members. */
extern const rt_record_field rt_record_fields[];
extern const size_t rt_record_field_count;

/* How many rows fold as a distribution (LEVEL or RATE) and as a TOTAL: the statistics' state
 * holds as many (a unit test holds the table to these). */
enum { RT_RECORD_NDIST = 23, RT_RECORD_NTOTAL = 8 };

/* The double at a row's offset. */
static inline double rt_record_get(const rt_record *r, const rt_record_field *f)
{
    return *(const double *)(const void *)((const char *)r + f->off);
}

static inline void rt_record_set(rt_record *r, const rt_record_field *f, double v)
{
    *(double *)(void *)((char *)r + f->off) = v;
}

#endif
