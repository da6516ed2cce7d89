/* fdlimit.h - the tracker's own open files limit: raised to the hard one for the run's setup
 * (the command gets back the limit it was given), the descriptors still free under it, and a
 * few of the lowest held for the job group's counters while the rest of the setup opens its. */
#ifndef RT_CLI_FDLIMIT_H
#define RT_CLI_FDLIMIT_H

#include <stdbool.h>
#include <sys/resource.h>

/* Raises the soft RLIMIT_NOFILE to the hard one, keeping the limit as it was given for the
 * command (cli_nofile_given). Once: later calls do nothing. */
void cli_nofile_raise(void);

/* The limit the tracker was given (to be restored in the command before exec); NULL when it
 * could not be read or cli_nofile_raise was not called. */
const struct rlimit *cli_nofile_given(void);

/* Descriptors the tracker may still open: free numbers under the soft limit (and those
 * cli_fds_hold holds for the sampler), counted where the limit is small (up to 4096); INT_MAX
 * above it (the setup needs far fewer). */
int cli_fds_free(void);

/* Whether a setup failure's errno is a shortage of descriptors (EMFILE, ENFILE). */
bool cli_fds_short(int e);

/* How many descriptors cli_fds_hold holds: the sampler's roots, the directories it opens the
 * job group's files through, and the group's counters it keeps first (memory's peak and charge,
 * tasks' peak and count, CPU time). */
#define CLI_FDS_HELD 12

/* Under a small open files limit (cli_fds_free counts), holds the CLI_FDS_HELD lowest free
 * descriptors (close-on-exec), so that what the setup opens before the sampler (the job's
 * group, the guardian, the servers) takes the numbers above them; cli_fds_release gives them
 * back just before the sampler opens the group's counters first, below the share of the limit
 * that files may be kept open in. Once; nothing under a large limit. */
void cli_fds_hold(void);

/* Closes what cli_fds_hold holds (nothing held: nothing done). */
void cli_fds_release(void);

#endif
