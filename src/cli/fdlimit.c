/* fdlimit.c - the tracker's own open files limit: raised to the hard one for the run's setup
 * (the command gets back the limit it was given), and the descriptors still free under it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>

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

int cli_fds_free(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096)
        return INT_MAX;
    int n = 0;
    for (int fd = 0; fd < (int)rl.rlim_cur; fd++)
        n += fcntl(fd, F_GETFD) < 0 && errno == EBADF;
    return n;
}

bool cli_fds_short(int e)
{
    return e == EMFILE || e == ENFILE;
}
