/* outq.h - the sample output's queue: whole lines kept in a bounded ring and written by a thread
 * of their own, so that a reader that stalls never holds up sampling or the end of the run
 * (docs/contracts.md §1, "Output"). */
#ifndef RT_CLI_OUTQ_H
#define RT_CLI_OUTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The default bound: samples queued past it are dropped (and counted). */
#define CLI_OUTQ_BOUND (8u << 20)

/* Flags of cli_outq_new. */
enum {
    CLI_OUTQ_BLOCKING = 1, /* write fd itself, blocking (the tests' stand-in for a hung NFS file);
                            * otherwise a pipe, FIFO or terminal is written through a descriptor of
                            * the queue's own that does not block, a stream socket with
                            * MSG_DONTWAIT */
};

typedef struct cli_outq cli_outq;

/* What became of the samples when the queue ended. */
typedef struct cli_outq_counts {
    uint64_t samples;   /* handed to cli_outq_push as samples (before the output failed) */
    uint64_t delivered; /* written whole */
    uint64_t dropped;   /* samples - delivered when the output did not fail: dropped past the
                         * bound, or left queued (or half written) at the deadline */
    int err;            /* the errno that ended the output (EPIPE: its reader went away); 0 */
    bool err_told;      /* a push of a sample returned err */
    bool stalled;       /* the deadline passed with lines still queued */
} cli_outq_counts;

/* Starts the queue for fd (the caller keeps fd; the queue writes through a descriptor of its
 * own, close-on-exec, and never changes fd's flags): a regular file on a local file system or
 * /dev/null is written directly by cli_outq_push, with no thread; a pipe, FIFO, terminal or
 * socket gets its thread when a write would first have blocked; anything else (a network file
 * system's file, CLI_OUTQ_BLOCKING) at once. bound: the most bytes of
 * samples kept (0: CLI_OUTQ_BOUND); the tool's own lines may go 64 KiB past it. Returns the
 * queue, or NULL with errno (ENOMEM, or the thread could not start: EAGAIN). */
cli_outq *cli_outq_new(int fd, size_t bound, int flags);

/* Queues one whole line (n bytes of p, copied) without blocking: a sample (sample true) or one of
 * the tool's own lines. A line that does not fit under the bound is dropped whole and counted.
 * Returns 0 (queued or dropped), or -1 with errno once the output failed for good (a sample only:
 * the same error each time). Thread-safe. */
int cli_outq_push(cli_outq *q, const void *p, size_t n, bool sample);

/* cli_outq_push of one sample as an rt_write_fn (user: the queue) for rt_writer_new_cb: returns
 * len, or -1 with errno. */
long cli_outq_write(void *user, const void *buf, size_t len);

/* Ends the queue: waits until every queued line is written, the output failed, or
 * deadline_mono_secs (CLOCK_MONOTONIC seconds) passed, then stops the thread; *c says what became
 * of the samples (c may be NULL). A thread that cannot be stopped (stuck in a blocking write) is
 * left behind: the queue then stays allocated for the life of the process. Call once. */
void cli_outq_end(cli_outq *q, double deadline_mono_secs, cli_outq_counts *c);

/* Frees the queue (ended first at once if cli_outq_end was not called), unless its thread was
 * left behind. NULL is allowed. */
void cli_outq_free(cli_outq *q);

/* ---- the tracking run's output ------------------------------------------------------------- */

/* Makes q the run's sample output. shares_stderr: the output is stderr (or the same pipe or file):
 * the tool's own lines (cli_say, the summary) then go through q too, in order with the samples,
 * so they never block either. */
void cli_outq_run_set(cli_outq *q, bool shares_stderr);

/* Whether descriptor fd is stderr, or the same pipe, socket, terminal or file. */
bool cli_outq_is_stderr(int fd);

/* The end of the run's output (nothing without one): cli_outq_end by deadline_mono_secs, then
 * the one warning when samples were dropped ("the output's reader stalled: N of M samples
 * dropped"), or the write error no sample was left to report; then cli_outq_free. */
void cli_outq_run_end(double deadline_mono_secs);

/* Where the tool's longer texts for stderr go (the summary): stderr, or a stream into the run's
 * output when it shares stderr. Give it back with cli_outq_stderr_done. */
FILE *cli_outq_stderr(void);
void cli_outq_stderr_done(FILE *f);

#endif
