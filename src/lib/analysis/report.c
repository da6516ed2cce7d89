/* report.c - the self-contained HTML report (stub: being built). */
#include <stdlib.h>
#include "../core/core.h"

struct rt_report { int n; };
rt_report *rt_report_new(void) { return calloc(1, sizeof(rt_report)); }
void rt_report_add(rt_report *r, const rt_record *rec) { (void)rec; r->n++; }
void rt_report_free(rt_report *r) { free(r); }
rt_error rt_report_write(const rt_report *r, const rt_report_info *info, int fd) { (void)r; (void)info; (void)fd; return RT_ERR_UNSUPPORTED; }
