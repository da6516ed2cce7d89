/* fdlimit.c - the tracker's own open files limit: raised to the hard one for the run's setup
 * (the command gets back the limit it was given), the descriptors still free under it, and a
 * few of the lowest held for the job group's counters while the rest of the setup opens its. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <unistd.h>

#include "fdlimit.h"

/* The limit the tracker was given, and whether it was read. */
static struct rlimit nofile_given;
static bool nofile_known;

void cli_nofile_raise(void)
{
    if (nofile_known)
        return;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    nofile_given = rl;
    nofile_known = true;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
            /* the walk reads what it cannot keep open one file at a time */
        }
    }
}

const struct rlimit *cli_nofile_given(void)
{
    return nofile_known ? &nofile_given : NULL;
}

/* The lowest descriptors held (cli_fds_hold), -1 where none. */
static int held[CLI_FDS_HELD] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

int cli_fds_free(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096)
        return INT_MAX;
    int n = 0;
    for (int fd = 0; fd < (int)rl.rlim_cur; fd++)
        n += fcntl(fd, F_GETFD) < 0 && errno == EBADF;
    for (int i = 0; i < CLI_FDS_HELD; i++)
        n += held[i] >= 0; /* held for the sampler: free for the run */
    return n;
}

bool cli_fds_short(int e)
{
    return e == EMFILE || e == ENFILE;
}

void cli_fds_hold(void)
{
    if (held[0] >= 0 || cli_fds_free() == INT_MAX)
        return; /* held already, or a limit with room for everything */
    for (int i = 0; i < CLI_FDS_HELD; i++)
        held[i] = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3); /* the lowest free from 3; -1: none left */
}

void cli_fds_release(void)
{
    for (int i = 0; i < CLI_FDS_HELD; i++)
        if (held[i] >= 0) {
            close(held[i]);
            held[i] = -1;
        }
}
