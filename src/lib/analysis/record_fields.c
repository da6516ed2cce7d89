/* record_fields.c - the table of rt_record's figures, made of record_fields.h's list of rows
 * (RT_RECORD_ROWS): a row per double, in the order of the struct. A figure that reaches the
 * record from one member of the tree, its group or a part of its split is a row alone: record.c
 * copies it, the store keeps it in its column, the statistics fold it as the row says. */
#include <stddef.h>

#include "../core/schema.h"
#include "record_fields.h"

#define SRC(kind, type, m, d)                                                                                          \
    .from = (kind), .src_off = offsetof(type, m), .src_type = RT_FIELD_TYPE_OF(((type *)0)->m), .div = (d)
#define FROM_MADE .from = RT_RF_MADE
#define FROM_PROC(m, d) SRC(RT_RF_PROCESS, rt_process, m, d)
#define FROM_GROUP(m) SRC(RT_RF_GROUP, rt_cgroup, m, 0)
#define FROM_PART(k, m, d) SRC(RT_RF_##k, rt_process_part, m, d)
#define MIB 1048576.0
/* a fold's rt_summary member: none for NONE */
#define SUM_OFF_NONE(s) 0
#define SUM_OFF_LEVEL(s) offsetof(rt_summary, s)
#define SUM_OFF_RATE(s) offsetof(rt_summary, s)
#define SUM_OFF_SUM(s) offsetof(rt_summary, s)
#define SUM_OFF_MAX(s) offsetof(rt_summary, s)
#define SUM_OFF_MIN(s) offsetof(rt_summary, s)
#define SUM_OFF_TOTAL(s) offsetof(rt_summary, s)
#define ROW(m, n, c, from, k, f, s, j, h)                                                                              \
    {.name = n, .off = offsetof(rt_record, m), .col = (c), from, .keep = RT_KEEP_##k, .fold = RT_FOLD_##f,           \
     .sum_off = SUM_OFF_##f(s), .json = j, .history = h},

const rt_record_field rt_record_fields[] = {RT_RECORD_ROWS(ROW)};

const size_t rt_record_field_count = RT_RECORD_NROWS;

/* The rows and rt_record's other members (the job's name, gpu and gpu_n, the phases, the energy
 * methods and the energy, the request, the member) are the whole struct: a new member of
 * rt_record is a new row (or, not a double, handled like gpu in record.c). No padding on the
 * platforms the library builds for. */
_Static_assert(RT_RECORD_NROWS * sizeof(double) + sizeof(const char *) +
                       sizeof(const rt_gpu *const *) + sizeof(size_t) + sizeof(const rt_phases *) +
                       2 * sizeof(const char *) + sizeof(const rt_energy *) + sizeof(const rt_request *) +
                       sizeof(const rt_member *) ==
                   sizeof(rt_record),
               "rt_record gained a member: give it a row in RT_RECORD_ROWS (or handle it like gpu)");
