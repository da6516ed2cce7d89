/* finish.c - the end of a tracking run, once the job's status is settled, and the files written
 * at the end. A signal to stop (SIGINT, SIGTERM, SIGQUIT; not SIGHUP: a closed terminal leaves
 * the outputs to be written) that comes while the run finishes cuts what is left of it short: a
 * thread of its own reads the run's signalfd, wakes every wait below at once, and should the
 * finishing work still go on FINISH_GRACE later (a library's last push, say) ends the process
 * with the job's status. The files written at the end (--report, the step summary; the report
 * subcommand's -o too) are opened and written without ever blocking: a FIFO with no reader is
 * opened again until a deadline, and a reader that does not take what is written is waited for
 * until one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define FINISH_GRACE 1.0 /* seconds the cut-short end gets to close its files itself */
#define REOPEN_STEP 0.05 /* seconds between two tries to open a FIFO that has no reader yet */

static struct {
    pthread_mutex_t mu; /* held by the watcher while it ends the process; done under it */
    pthread_t thread;
    bool watching; /* the watcher runs (else cli_finish_cut reads sfd itself) */
    bool done;     /* cli_finish_end was reached: the watcher ends nothing */
    int sfd;       /* the run's signalfd; -1: none (no run, or cli_finish_end) */
    int wake;      /* eventfd, readable once the end is cut short (the waits below poll it) */
    int stop;      /* eventfd: cli_finish_end's word to the watcher */
    int status;    /* the tool's exit status, should the watcher end the process */
    rt_job_cgroup *jcg;
    atomic_int cut; /* the signal that cut the end short; 0 */
} fin = {.mu = PTHREAD_MUTEX_INITIALIZER, .sfd = -1, .wake = -1, .stop = -1};

static bool terminating(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGQUIT;
}

/* One signal read from sfd (readable): the end is cut short when it terminates. Returns true
 * when it is the second such signal. */
static bool take_signal(void)
{
    struct signalfd_siginfo si;
    if (read(fin.sfd, &si, sizeof si) != (ssize_t)sizeof si || !terminating((int)si.ssi_signo))
        return false; /* SIGCHLD of a process left behind, SIGHUP, SIGUSR1: nothing to do now */
    int none = 0;
    if (!atomic_compare_exchange_strong(&fin.cut, &none, (int)si.ssi_signo))
        return true;
    cli_say("signal %d: the end of the run is cut short (what was not written yet is left out)", (int)si.ssi_signo);
    uint64_t one = 1;
    if (fin.wake >= 0 && write(fin.wake, &one, sizeof one) < 0) {
        /* the counter is full: readable anyway */
    }
    return false;
}

/* Ends the process with the run's status, unless the main thread already reached its end (then
 * it closes what is open itself). The job's empty group goes first: nobody else removes it. */
static void end_now(void)
{
    pthread_mutex_lock(&fin.mu);
    if (fin.done) {
        pthread_mutex_unlock(&fin.mu);
        return;
    }
    rt_job_cgroup_free(fin.jcg); /* the main thread does not touch it before cli_finish_end */
    _exit(fin.status);
}

static void *watch(void *arg)
{
    (void)arg;
    double by = INFINITY; /* when the cut-short end is given up on */
    for (;;) {
        struct pollfd p[2] = {{.fd = fin.sfd, .events = POLLIN}, {.fd = fin.stop, .events = POLLIN}};
        double left = by - cli_mono_secs();
        int ms = isinf(by) ? -1 : left > 0 ? (int)ceil(left * 1000.0) : 0;
        int n = poll(p, 2, ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (p[1].revents & POLLIN))
            return NULL;
        if (n == 0) {
            end_now();
            return NULL;
        }
        if ((p[0].revents & POLLIN) && take_signal()) {
            end_now(); /* a second one: at once */
            return NULL;
        }
        if (atomic_load(&fin.cut) && isinf(by))
            by = cli_mono_secs() + FINISH_GRACE;
    }
}

void cli_finish_begin(int sfd, int status, rt_job_cgroup *jcg)
{
    fin.sfd = sfd;
    fin.status = status;
    fin.jcg = jcg;
    fin.done = false;
    atomic_store(&fin.cut, 0);
    if (sfd < 0)
        return;
    fin.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    fin.stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    /* no thread to be had: the waits below read the signals themselves (cli_finish_cut) */
    fin.watching = fin.wake >= 0 && fin.stop >= 0 && pthread_create(&fin.thread, NULL, watch, NULL) == 0;
}

bool cli_finish_cut(void)
{
    if (atomic_load(&fin.cut))
        return true;
    if (fin.watching || fin.sfd < 0)
        return false;
    struct pollfd p = {.fd = fin.sfd, .events = POLLIN};
    while (!atomic_load(&fin.cut) && poll(&p, 1, 0) > 0)
        take_signal();
    return atomic_load(&fin.cut) != 0;
}

void cli_finish_end(void)
{
    pthread_mutex_lock(&fin.mu);
    fin.done = true;
    pthread_mutex_unlock(&fin.mu);
    if (fin.watching) {
        uint64_t one = 1;
        if (write(fin.stop, &one, sizeof one) < 0) {
            /* full: readable anyway */
        }
        pthread_join(fin.thread, NULL);
        fin.watching = false;
    }
    if (fin.wake >= 0)
        close(fin.wake);
    if (fin.stop >= 0)
        close(fin.stop);
    fin.wake = fin.stop = fin.sfd = -1;
    fin.jcg = NULL;
}

/* Waits until fd (-1: none) is ready for events, or until the deadline (CLOCK_MONOTONIC
 * seconds). Returns 1 ready, 0 at the deadline, -1 when the end was cut short. */
static int wait_for(int fd, short events, double deadline)
{
    for (;;) {
        if (cli_finish_cut())
            return -1;
        double left = deadline - cli_mono_secs();
        if (left <= 0)
            return 0;
        struct pollfd p[2] = {{.fd = fd, .events = events},
                              {.fd = fin.watching ? fin.wake : fin.sfd, .events = POLLIN}};
        int n = poll(p, 2, (int)ceil(left * 1000.0));
        if (n < 0 && errno != EINTR)
            return 0;
        if (n > 0 && p[0].revents)
            return cli_finish_cut() ? -1 : 1;
    }
}

bool cli_is_fifo(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

int cli_late_open(const char *path, int flags, mode_t mode, double deadline, bool *refused)
{
    for (;;) {
        int fd = cli_open_create(path, flags | O_NONBLOCK, mode, refused);
        if (fd >= 0 || errno != ENXIO || !cli_is_fifo(path))
            return fd; /* ENXIO of something else (a device with nothing behind it) as it is */
        double now = cli_mono_secs();
        int w = now < deadline ? wait_for(-1, 0, fmin(deadline, now + REOPEN_STEP)) : 0;
        if (w < 0 || (w == 0 && cli_mono_secs() >= deadline)) {
            errno = w < 0 ? EINTR : ENXIO;
            return -1;
        }
    }
}

long cli_late_write(void *user, const void *buf, size_t len)
{
    cli_late_file *f = user;
    for (;;) {
        ssize_t k = write(f->fd, buf, len);
        if (k > 0) {
            f->written += (size_t)k;
            return (long)k;
        }
        if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        int w = errno == EINTR ? 1 : wait_for(f->fd, POLLOUT, f->deadline);
        if (w <= 0) {
            errno = w < 0 ? EINTR : ETIMEDOUT;
            return -1;
        }
    }
}

int cli_late_write_all(cli_late_file *f, const void *buf, size_t len)
{
    for (size_t off = 0; off < len;) {
        long k = cli_late_write(f, (const char *)buf + off, len - off);
        if (k < 0)
            return -1;
        off += (size_t)k;
    }
    return 0;
}

const char *cli_late_why(char *buf, size_t cap, int err, const cli_late_file *f, double waited)
{
    if (err == ENXIO)
        snprintf(buf, cap, "a FIFO that no reader opened within %g s: not written", waited);
    else if (err == ETIMEDOUT && f)
        snprintf(buf, cap, "its reader took %zu bytes and no more within %g s: cut short", f->written, waited);
    else
        snprintf(buf, cap, "%s", strerror(err));
    return buf;
}
