/* phase_label.h - the `phase` label (Prometheus) and attribute (OTLP) an exporter puts on the
 * tree's figures while a phase is open (docs/contracts.md §11): the innermost open phase's name,
 * one value per name, never per call, and at most RT_PHASE_LABEL_NAMES distinct values per
 * exporter (later names are "other"). Not public. */
#ifndef RT_EXPORT_PHASE_LABEL_H
#define RT_EXPORT_PHASE_LABEL_H

#include <stddef.h>

#include "resource_tracker.h"

#define RT_PHASE_LABEL_NAMES 64

typedef struct rt_phase_label {
    char *names[RT_PHASE_LABEL_NAMES]; /* the values given so far (owned copies) */
    size_t n;
} rt_phase_label;

/* The innermost phase open at sample s (the last of rt_phases.open), NULL when none is (or s
 * has no phases). */
const char *rt_phase_innermost(const rt_sample *s);

/* The label value for s: rt_phase_innermost(s) when it is one of the first RT_PHASE_LABEL_NAMES
 * names pl has given (kept), "other" past them (or when out of memory); NULL when no phase is
 * open. Valid until rt_phase_label_free. pl zeroed: empty. */
const char *rt_phase_label_of(rt_phase_label *pl, const rt_sample *s);

void rt_phase_label_free(rt_phase_label *pl);

#endif
