/* phase.h - a run's phases as the pipeline keeps them: the names (interned, capped), the open
 * instances (matched by name, the most recent first), the marks waiting for the next sample, and
 * the counts of marks taken and refused. Also the one rule for a phase's name, which every
 * way in (the embedded tracker's calls, the protocol's lines) checks. Internal. */
#ifndef RT_PHASE_PHASE_H
#define RT_PHASE_PHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resource_tracker.h"

#define RT_PHASE_NAME_MAX 255     /* bytes of a name */
#define RT_PHASE_MAX_NAMES 1024   /* distinct names in a run */
#define RT_PHASE_MAX_OPEN 256     /* phases open at once */
#define RT_PHASE_MAX_PENDING 4096 /* marks one sample carries */

/* Whether name (n bytes, not NUL-terminated) is a phase's name: 1..255 bytes of valid UTF-8
 * (no overlong forms, no surrogates) without control characters (below 0x20, 0x7f). */
bool rt_phase_name_ok(const char *name, size_t n);

/* A name's hash (FNV-1a), for the tables that look names up: the state's, the listener's, the
 * statistics' and the report's. */
uint32_t rt_phase_name_hash(const char *name);

typedef struct rt_phase_state rt_phase_state;

/* An empty state (nothing allocated until the first mark). NULL when out of memory. */
rt_phase_state *rt_phase_state_new(void);

/* Takes one mark (copied, its name interned): RT_OK, or the refusal counted (as
 * rt_pipeline_mark says). */
rt_error rt_phase_state_mark(rt_phase_state *st, const rt_phase_mark *m);

/* Adds n to the count of refusals of the kind why (rt_phase_refusal). */
void rt_phase_state_refused(rt_phase_state *st, int why, uint64_t n);

/* What the next sample carries: the marks taken since the last rt_phase_state_carried and the
 * phases open now; NULL when no mark was ever taken or refused. Valid until the next call on
 * st. */
const rt_phases *rt_phase_state_view(rt_phase_state *st);

/* The sample that carried the view went to the sinks: the marks it carried are let go. */
void rt_phase_state_carried(rt_phase_state *st);

const rt_phase_counts *rt_phase_state_counts(const rt_phase_state *st);

/* The run ended: the phases still open count as unterminated. */
void rt_phase_state_end(rt_phase_state *st);

void rt_phase_state_free(rt_phase_state *st);

#endif
