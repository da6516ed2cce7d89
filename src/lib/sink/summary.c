/* summary.c - a run's statistics as JSON (stub: being built). */
#include "../core/core.h"

size_t rt_format_summary(const rt_summary *s, const char *memory_unit, const char *time_unit, char *buf, size_t cap)
{
    (void)s; (void)memory_unit; (void)time_unit; (void)buf; (void)cap;
    return 0;
}
