/* status.h - the human view of a tracking run on the terminal (status.c): which view a run
 * gets, its start line, the status line refreshed in place on a terminal, and the erasing of
 * that line before any other line of the tool's reaches stderr. */
#ifndef RT_CLI_STATUS_H
#define RT_CLI_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

/* The view o's run gets: CLI_VIEW_HUMAN, CLI_VIEW_LOG or CLI_VIEW_SAMPLES. auto is samples
 * with -q, or with --format (in any layer) and no -o; else human when stderr is a tty (and the
 * samples do not come to the terminal on stdout: -o - with stdout a tty is samples), log where
 * stderr goes to a CI's or SLURM job's log (cli_log_place), samples elsewhere. */
cli_view cli_view_resolve(const cli_options *o);

/* The terminal's columns at fd; 0 when fd is not a terminal or does not say. */
int cli_term_width(int fd);

/* The start of the human or the log view: says on stderr what is tracked (the command and its
 * tree, PID N's tree, or the whole machine), the interval, where samples go and how to stop
 * (in the log view, what the log gets), broken at the terminal's width; with live (stderr is a
 * terminal), the status line is drawn from then on by cli_status_sample, and in the log view
 * a progress line is written once a minute and at each phase mark. Call once, before the
 * command starts. */
void cli_status_start(const cli_options *o, cli_view view, bool live);

/* Hands the newest sample to the status line: its peaks kept, and the line drawn (on the
 * terminal's last row, kept for it; in place on a terminal of under 4 rows; cut to the
 * terminal's width) when a second has passed since the last drawing; in the log view, written
 * as a line of its own when a minute has passed or phase marks came since the last line
 * (cli_status_mark). Reads nothing but s and the clock, allocates nothing; does nothing unless
 * cli_status_start was called live or for the log view. */
void cli_status_sample(const rt_sample *s);

/* The log view: a phase mark of the job's (start or stop), said in the next progress line, which
 * the next sample writes at once (" | phase train started"). Nothing in the other views. */
void cli_status_mark(const rt_phase_mark *m);

/* Erases the status line for good and gives its row back (before the summary); nothing more
 * is drawn (nor written in the log view). */
void cli_status_end(void);

/* Tests only: the line's clock (seconds, monotonic) is now() from here on; NULL: the real one. */
void cli_status_test_clock(double (*now)(void));

#endif
