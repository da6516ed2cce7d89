/* status.h - the human view of a tracking run on the terminal (status.c): which view a run
 * gets, its start line, the status line refreshed in place on a terminal, and the erasing of
 * that line before any other line of the tool's reaches stderr. */
#ifndef RT_CLI_STATUS_H
#define RT_CLI_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

/* The view o's run gets: CLI_VIEW_HUMAN or CLI_VIEW_SAMPLES. auto is human when samples would
 * go to a terminal (no -o, no --format in any layer, not -q, stderr a tty); -q is never human
 * (nothing on the terminal). */
cli_view cli_view_resolve(const cli_options *o);

/* The start of the human view: says in one line on stderr what is tracked (the command and its
 * tree, PID N's tree, or the whole machine), the interval, where samples go and how to stop;
 * with live (stderr is a terminal), the status line is drawn from then on by
 * cli_status_sample. Call once, before the command starts. */
void cli_status_start(const cli_options *o, bool live);

/* Hands the newest sample to the status line: its peaks kept, and the line drawn (on the
 * terminal's last row, kept for it; in place on a terminal of under 4 rows; cut to the
 * terminal's width) when a second has passed since the last drawing. Reads nothing but s and the clock, allocates nothing; does nothing
 * unless cli_status_start(live) was called. */
void cli_status_sample(const rt_sample *s);

/* Erases the status line for good and gives its row back (before the summary); nothing more
 * is drawn. */
void cli_status_end(void);

/* For cli_say: writes the tool's line (n bytes) to stderr, the status line erased first (it is
 * drawn again with the next sample). Returns true when written here, false when no status line
 * is live (the caller writes it). Thread-safe. */
bool cli_status_say(const char *line, size_t n);

/* Tests only: the line's clock (seconds, monotonic) is now() from here on; NULL: the real one. */
void cli_status_test_clock(double (*now)(void));

#endif
