/* jobview_words.h - the sentences of a job on several nodes (rt_job_view) that its text
 * (jobview_text.c) and the report page (report_job.c) both say, made once. Internal. */
#ifndef RT_ANALYSIS_JOBVIEW_WORDS_H
#define RT_ANALYSIS_JOBVIEW_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "resource_tracker.h"
#include "text_out.h"

/* A node's ask: "2 cores, 512 MiB" ("memory unknown"), with its GPUs; into b. */
const char *rt_jv_node_ask(const rt_job_node *n, char *b, size_t cap);
/* How unevenly the nodes used CPU and memory, into text; false (nothing written) for one node. */
bool rt_jv_imbalance_words(const rt_text_out *o, const rt_job_view *v, char *text, size_t cap);
/* Which nodes decided the ask: "memory sized by NODE (it needs ...), cores by ...; N core-hours
 * reserved", into text. */
void rt_jv_decided_words(const rt_text_out *o, const rt_job_view *v, char *text, size_t cap);
/* Calls each(user, sentence) for every note (stragglers, idle nodes and GPUs, nodes or ranks
 * missing, a rank twice, starts apart); returns how many. */
size_t rt_jv_notes(const rt_text_out *o, const rt_job_view *v, void (*each)(void *user, const char *text), void *user);

#endif
