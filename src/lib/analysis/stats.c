/* stats.c - statistics of a run over its records (stub: being built). */
#include <stdlib.h>
#include "../core/core.h"

struct rt_stats { rt_summary s; };
rt_stats *rt_stats_new(void) { return calloc(1, sizeof(rt_stats)); }
void rt_stats_add(rt_stats *st, const rt_record *rec) { (void)rec; st->s.samples++; }
const rt_summary *rt_stats_summary(rt_stats *st) { return &st->s; }
void rt_stats_free(rt_stats *st) { free(st); }
