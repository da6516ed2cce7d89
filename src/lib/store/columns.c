/* columns.c - the embedded tracker's columns: each one's public name and where its figure comes
 * from (a member of the analysis record: its row in record_fields.h names the column; or one of
 * the store's own, store.h's RT_STORE_OWN_COLUMNS: a sample member the record lacks, known to the
 * schema); one sample turned into a row of them, and a row turned back into the record (the same
 * figures that rt_record_from_sample makes of the sample, so the tracker's statistics match the
 * tool's). */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "../core/methods.h"
#include "../analysis/record_fields.h"
#include "../core/schema.h"
#include "store.h"

/* Where a column's figure comes from: a member of rt_record (REC_: both directions, the record
 * read back from a row is the record the sample made; rt_record_fields[] lists those), or a
 * member of one of the sample's structs that the record does not carry (the schema's field: its
 * type says what null is), or an energy method of the record (a string member kept as its rank:
 * 1 measured, 2 sampled, 3 estimated). */
typedef enum src { REC_ = 0, SRC_SAMPLE, SRC_CPU, SRC_MEMORY, SRC_PROCESS, SRC_METHOD } src;

typedef struct column {
    const char *name;
    src from;
    size_t off;         /* of the member in its struct (or of the method in rt_record) */
    rt_field_type type; /* the member's */
    rt_keep keep;       /* how the store keeps it (record_fields.h) */
} column;

#define SMP_KEEP(st, m, n, k)                                                                                          \
    {                                                                                                                  \
        .name = n, .from = SRC_##st, .off = offsetof(RT_STRUCT_##st, m),                                               \
        .type = RT_FIELD_TYPE_OF(((RT_STRUCT_##st *)0)->m), .keep = RT_KEEP_##k                                        \
    }
#define SMP(st, m, n) SMP_KEEP(st, m, n, FLOAT)
#define RT_STRUCT_sample rt_sample
#define RT_STRUCT_cpu rt_cpu
#define RT_STRUCT_memory rt_memory
#define RT_STRUCT_process rt_process
#define SRC_sample SRC_SAMPLE
#define SRC_cpu SRC_CPU
#define SRC_memory SRC_MEMORY
#define SRC_process SRC_PROCESS

#define METHOD(m, n) {.name = n, .from = SRC_METHOD, .off = offsetof(rt_record, m)}
#define OWN_ROW(c, row) [c] = row,

static const column cols[RT_NCOLS] = {RT_STORE_OWN_COLUMNS(OWN_ROW)};

/* RT_NCOLS (store.h) counts the record's columns and the store's own; each one within it (a column
 * past RT_NCOLS does not compile; which column is whose, each once, test_record_fields walks). */
#define COLUMN_FITS(m, n, c, ...) _Static_assert((int)(c) < (int)RT_NCOLS, "the column of " n " is past RT_NCOLS");
RT_RECORD_ROWS(COLUMN_FITS)

static const rt_fstruct *const src_table[] = {[SRC_SAMPLE] = &rt_schema_sample,
                                              [SRC_CPU] = &rt_schema_cpu,
                                              [SRC_MEMORY] = &rt_schema_memory,
                                              [SRC_PROCESS] = &rt_schema_process};

const rt_field *rt_column_field(int c)
{
    if (c < 0 || c >= RT_NCOLS || cols[c].from == REC_ || cols[c].from == SRC_METHOD)
        return NULL;
    return rt_schema_at(src_table[cols[c].from], cols[c].off);
}

int rt_column_count(void)
{
    return RT_NCOLS;
}

/* The record's row whose column is col, NULL: the column is cols[]'s. */
static const rt_record_field *record_row(int col)
{
    for (size_t i = 0; i < rt_record_field_count; i++)
        if (rt_record_fields[i].col == col)
            return &rt_record_fields[i];
    return NULL;
}

/* How the store keeps each column, from its row: the record's (record_fields.c) or cols[]'s. */
static unsigned char keeps[RT_NCOLS];
static pthread_once_t keeps_once = PTHREAD_ONCE_INIT;

static void keeps_fill(void)
{
    for (int c = 0; c < RT_NCOLS; c++) {
        const rt_record_field *f = cols[c].from == REC_ ? record_row(c) : NULL;
        keeps[c] = (unsigned char)(f ? f->keep : cols[c].keep);
    }
}

const unsigned char *rt_column_keeps(void)
{
    pthread_once(&keeps_once, keeps_fill);
    return keeps;
}

const char *rt_column_name(int col)
{
    if (col < 0 || col >= RT_NCOLS)
        return NULL;
    if (cols[col].from != REC_)
        return cols[col].name;
    const rt_record_field *f = record_row(col);
    return f ? f->name : NULL;
}

int rt_column_by_name(const char *name)
{
    if (!name)
        return -1;
    for (int c = 0; c < RT_NCOLS; c++)
        if (cols[c].from != REC_ && strcmp(cols[c].name, name) == 0)
            return c;
    for (size_t i = 0; i < rt_record_field_count; i++)
        if (rt_record_fields[i].col >= 0 && strcmp(rt_record_fields[i].name, name) == 0)
            return rt_record_fields[i].col;
    return -1;
}

/* A sample member as a double: NaN when null or when the sample lacks its struct. */
static double member(const rt_sample *s, const column *c)
{
    const void *st = c->from == SRC_SAMPLE   ? (const void *)s
                     : c->from == SRC_CPU    ? (const void *)s->cpu
                     : c->from == SRC_MEMORY ? (const void *)s->memory
                                             : (const void *)s->process;
    if (!st)
        return NAN;
    return rt_schema_num(c->type, (const char *)st + c->off);
}

/* A method member of the record as its rank (NaN: none). */
static double method_rank(const rt_record *r, const column *c)
{
    const char *m;
    memcpy(&m, (const char *)r + c->off, sizeof m);
    int rank = rt_energy_method_rank(m);
    return rank ? rank : NAN;
}

/* The record's figures into their columns (the table's rows with one). */
static void record_into_row(const rt_record *r, double row[RT_NCOLS])
{
    for (size_t i = 0; i < rt_record_field_count; i++)
        if (rt_record_fields[i].col >= 0)
            row[rt_record_fields[i].col] = rt_record_get(r, &rt_record_fields[i]);
}

/* The figures the record has, taken from the record itself (so that rt_row_to_record gives back
 * exactly what rt_record_from_sample gave), and the rest from the sample. */
void rt_row_from_sample(const rt_sample *s, double row[RT_NCOLS])
{
    rt_record r;
    rt_record_from_sample(s, &r);
    record_into_row(&r, row);
    for (int c = 0; c < RT_NCOLS; c++) {
        if (cols[c].from == SRC_METHOD)
            row[c] = method_rank(&r, &cols[c]);
        else if (cols[c].from != REC_)
            row[c] = member(s, &cols[c]);
    }
}

void rt_row_from_record(const rt_record *r, double row[RT_NCOLS])
{
    record_into_row(r, row);
    for (int c = 0; c < RT_NCOLS; c++) {
        if (cols[c].from == SRC_METHOD)
            row[c] = method_rank(r, &cols[c]);
        else if (cols[c].from != REC_)
            row[c] = NAN;
    }
}

void rt_row_to_record(const double row[RT_NCOLS], rt_record *r)
{
    memset(r, 0, sizeof *r);
    r->job_name = NULL;
    rt_row_onto_record(row, r);
    /* as rt_record_from_sample: utime + stime of the interval (NaN without a tree) */
    r->process_cpu_secs = row[RT_COL_PROC_UTIME] + row[RT_COL_PROC_STIME];
}

void rt_row_onto_record(const double row[RT_NCOLS], rt_record *r)
{
    for (size_t i = 0; i < rt_record_field_count; i++)
        if (rt_record_fields[i].col >= 0)
            rt_record_set(r, &rt_record_fields[i], row[rt_record_fields[i].col]);
    for (int c = 0; c < RT_NCOLS; c++)
        if (cols[c].from == SRC_METHOD) {
            const char *m = row[c] == row[c] ? rt_energy_method_of_rank((int)row[c]) : NULL;
            memcpy((char *)r + cols[c].off, &m, sizeof m);
        }
}
