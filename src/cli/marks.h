/* marks.h - the phase marks of a tracked command (marks.c): the listener whose address the
 * command finds in TRACKER_PHASE_SOCKET, its drains into the pipeline, the run's last word. */
#ifndef CLI_MARKS_H
#define CLI_MARKS_H

#include <stdbool.h>

#include "resource_tracker.h"

typedef struct cli_marks cli_marks;

/* Descriptors the marks keep: the socket, its epoll set and bell, a spare. Connections (at most
 * 64, each for as long as its sender keeps it) are taken while descriptors last: past them the
 * spare refuses one (counted). */
#define CLI_MARKS_FDS 4

/* Listens (a private directory's socket, else the abstract namespace) and sets
 * TRACKER_PHASE_SOCKET for the command to inherit. NULL when it cannot (one warning said why;
 * the variable is left as it was). */
cli_marks *cli_marks_start(void);

/* What to poll for reading; -1 for NULL. */
int cli_marks_fd(const cli_marks *m);

/* The address in TRACKER_PHASE_SOCKET. */
const char *cli_marks_address(const cli_marks *m);

/* How many batches of 64 lines a drain takes at most: one per turn of the loop (the rest waits),
 * before a sample (1024 lines: more than the flood limit lets through in a second), at the end
 * (and before each sample once the command ended). */
#define CLI_MARKS_BATCH 1
#define CLI_MARKS_SAMPLE 16
#define CLI_MARKS_ALL 1024

/* Takes waiting lines 64 at a time until none wait or most batches were taken, reading the tree
 * once for each batch (rt_sampler_peek; s may be NULL), and hands them to pipe (NULL: dropped) at times
 * not before not_before (the last sample's), with the listener's new refusals. NULL m: nothing. */
void cli_marks_drain(cli_marks *m, rt_sampler *s, rt_pipeline *pipe, double not_before, size_t most);

/* After the pipeline's finish: one warning line when marks were refused or phases left open. */
void cli_marks_say(const rt_pipeline *pipe);

/* Closes the listener (its socket file removed); restore: TRACKER_PHASE_SOCKET as it was. */
void cli_marks_free(cli_marks *m, bool restore);

#endif
