/* phase_label.c - the capped `phase` label value of a sample for the exporters (phase_label.h):
 * the innermost open phase's name, among the first 64 names an exporter labelled, else "other". */
#define _GNU_SOURCE /* strdup */
#include <stdlib.h>
#include <string.h>

#include "phase_label.h"

const char *rt_phase_innermost(const rt_sample *s)
{
    const rt_phases *ph = s ? s->phases : NULL;
    return ph && ph->open_count && ph->open ? ph->open[ph->open_count - 1] : NULL;
}

const char *rt_phase_label_of(rt_phase_label *pl, const rt_sample *s)
{
    const char *name = rt_phase_innermost(s);
    if (!name)
        return NULL;
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->names[i], name) == 0)
            return pl->names[i];
    if (pl->n < RT_PHASE_LABEL_NAMES && (pl->names[pl->n] = strdup(name)))
        return pl->names[pl->n++];
    return "other";
}

void rt_phase_label_free(rt_phase_label *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->names[i]);
    pl->n = 0;
}
