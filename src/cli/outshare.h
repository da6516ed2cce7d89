/* outshare.h - the -o file that several trackers may write at once (a job script run twice,
 * srun without %t): appended to, each sample whole, emptied only by a tracker that finds no
 * other writing it, the CSV header once (docs/contracts.md §1, "One file, several trackers"). */
#ifndef RT_CLI_OUTSHARE_H
#define RT_CLI_OUTSHARE_H

#include <stdbool.h>
#include <stddef.h>

#include "resource_tracker.h"

/* Makes fd, the -o file just opened with O_APPEND and without O_TRUNC, this run's: a regular file
 * that no other tracker writes now is emptied (as O_TRUNC did), one that another tracker writes
 * is appended to; either way this run marks it as written (a shared lock, held until fd's last
 * copy is closed). Anything but a regular file is left as it is. Returns whether fd is such a
 * file (then cli_outshare_header applies). */
bool cli_outshare_open(int fd);

/* The CSV header of format (rt_format_header) goes to the file fd (one cli_outshare_open made
 * its own) only if the file is empty at the run's first write, decided under a lock that the
 * other trackers' first writes take too: call before the first sample, with the writer built on
 * cli_outshare_write. Formats without a header, or fd < 0, leave every line as it is. */
void cli_outshare_header(int fd, rt_format format);

/* cli_outq_write (user: the queue) that leaves the CSV header out of the run's first line when
 * cli_outshare_header says so. Returns len, or -1 with errno. */
long cli_outshare_write(void *user, const void *buf, size_t len);

#endif
