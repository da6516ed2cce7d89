/* fdlimit.h - the tracker's own open files limit: raised to the hard one for the run's setup
 * (the command gets back the limit it was given), and the descriptors still free under it. */
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

/* Descriptors the tracker may still open: free numbers under the soft limit, counted where the
 * limit is small (up to 4096); INT_MAX above it (the setup needs far fewer). */
int cli_fds_free(void);

/* Whether a setup failure's errno is a shortage of descriptors (EMFILE, ENFILE). */
bool cli_fds_short(int e);

#endif
