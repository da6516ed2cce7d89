/* guardian.c - wrapper mode's guardian: a tiny process, not the tracker's child, that waits on a
 * socket only the tracker holds the other end of. A tracker that ends normally says so with one
 * byte (and waits for the guardian to be gone); one that dies (SIGKILL, a crash) leaves EOF,
 * and the guardian kills the job's cgroup and removes it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* The guardian itself (in the grandchild): detaches, waits for the tracker's word on rfd, and
 * after a death without it kills and removes jcg. Never returns. */
static void guard(rt_job_cgroup *jcg, int rfd, int close_fd) __attribute__((noreturn));
static void guard(rt_job_cgroup *jcg, int rfd, int close_fd)
{
    prctl(PR_SET_NAME, "rt-guardian");
    setsid(); /* out of the tracker's process group: a kill of that group leaves us */
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP,
                                  SIGTTIN, SIGTTOU};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        signal(ignored[i], SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* hold nothing of the tracker's that someone waits on: its stdin, stdout, the output file,
     * the working directory (a mount that is to be unmounted); stderr stays for the one line */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        if (null > STDERR_FILENO)
            close(null);
    }
    if (close_fd > STDERR_FILENO)
        close(close_fd);
    if (chdir("/") < 0) {
        /* the working directory stays: nothing else depends on it */
    }
    char b = 0;
    ssize_t n;
    do {
        n = read(rfd, &b, 1);
    } while (n < 0 && errno == EINTR);
    if (n == 1)
        _exit(0); /* the tracker ended normally and cleaned up itself; it sees our end close */
    int64_t left = rt_job_cgroup_procs(jcg);
    rt_error err = rt_job_cgroup_kill(jcg);
    if (err != RT_OK)
        cli_say("the tracker died; its job's processes in %s could not all be killed: %s", rt_job_cgroup_path(jcg),
                rt_strerror(err));
    else if (left > 0)
        cli_say("the tracker died: killed the %lld process%s of its job left in %s", (long long)left,
                left == 1 ? "" : "es", rt_job_cgroup_path(jcg));
    rt_job_cgroup_free(jcg); /* removes the group's directories (emptied above) */
    _exit(0);
}

/* The one warning when there is no guardian (e: why). Returns -1. */
static int no_guardian(int e)
{
    cli_say("warning: no guardian for the job (%s): if the tracker is killed, the job runs on", strerror(e));
    return -1;
}

/* Starts the guardian of jcg (the contract: cli.h). */
int cli_guardian_start(rt_job_cgroup *jcg, int close_fd)
{
    int pfd[2]; /* [0] the guardian's end, [1] ours */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pfd) < 0)
        return no_guardian(errno);
    pid_t mid = fork();
    if (mid == 0) { /* the middle process: forks the guardian and exits, so that it is init's */
        close(pfd[1]);
        pid_t g = fork();
        if (g == 0)
            guard(jcg, pfd[0], close_fd);
        _exit(g < 0 ? errno & 0xff : 0); /* why the fork failed, as the exit status */
    }
    int e = errno, st = 0;
    close(pfd[0]);
    if (mid > 0) {
        while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
            ;
        e = WIFEXITED(st) ? WEXITSTATUS(st) : ECHILD;
    }
    if (mid < 0 || e != 0) {
        close(pfd[1]);
        return no_guardian(e);
    }
    return pfd[1];
}

/* The normal end: the guardian is told, and waited for (the contract: cli.h). */
void cli_guardian_release(int fd)
{
    if (fd < 0)
        return;
    ssize_t n;
    do {
        n = send(fd, "x", 1, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    /* until the guardian is gone (its end closes as it exits), at most 2 s: nobody who waits
     * for the tracker then finds a guardian still about */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;
    while (n == 1 && poll(&p, 1, 2000) > 0 && read(fd, &b, 1) > 0)
        ;
    close(fd);
}
