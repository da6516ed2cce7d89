/* views.h - test helper: print_views() writes every view the library makes of a sample (see
 * views.c) for the golden files of tests/golden/. */
#ifndef RT_TESTS_VIEWS_H
#define RT_TESTS_VIEWS_H

#include <stdio.h>

#include "resource_tracker.h"

/* Every view of s (job's labels and name where a view has them), each after "== NAME", then
 * "== end". */
void print_views(FILE *out, const rt_sample *s, const rt_job *job);

#endif
