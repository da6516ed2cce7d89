/* bridge.c - starting, asking and stopping the static tool's loader helper (bridge.h): its image
 * (linked into the static binary by cmake/bridge-image.S) is copied once into a memory file
 * (memfd; a deleted temporary file on kernels before 3.17), reopened read-only so that the kernel
 * lets it run, and each helper is that file executed through the target's own dynamic loader,
 * with its end of a socket pair as descriptor 3. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "bridge.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: say that it runs, where memfds are noexec by default */
#endif

/* The helper's image, where the static build links one in (weak: absent elsewhere). */
extern const unsigned char rt_bridge_image_start[] __attribute__((weak));
extern const unsigned char rt_bridge_image_end[] __attribute__((weak));

/* The glibc loader the embedded helper names (PT_INTERP), for the message when it is missing. */
#if defined(__x86_64__)
#define LOADER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define LOADER "/lib/ld-linux-aarch64.so.1"
#else
#define LOADER "glibc's dynamic loader"
#endif

static const char *program; /* rt_bridge_use_program */

static struct {
    pthread_mutex_t lock;
    int fd;         /* the read-only copy to execute; -1 until made */
    char err[4200]; /* why it could not be made */
} image = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* The helpers started and not yet reaped: the tool's own reaping of its children (a child
 * subreaper's, which takes every exited child) leaves them to rt_helper_reap, so that a helper is
 * never taken for a process of the job. Registered under the lock held across the fork, before
 * the child can end. */
#define MAX_LIVE 64
static struct {
    pthread_mutex_t lock;
    pid_t pid[MAX_LIVE];
    int status[MAX_LIVE]; /* when reaped by rt_helper_reap before its owner asked */
    bool reaped[MAX_LIVE];
    bool abandoned[MAX_LIVE]; /* its owner waits no more: the slot is freed when it is reaped */
    int n;
} live = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Frees slot i (the last one moves into it). Under live.lock. */
static void free_slot_locked(int i)
{
    live.n--;
    live.pid[i] = live.pid[live.n];
    live.status[i] = live.status[live.n];
    live.reaped[i] = live.reaped[live.n];
    live.abandoned[i] = live.abandoned[live.n];
}

/* waitpid(pid, status, WNOHANG), again when interrupted. */
static pid_t wait_nohang(pid_t pid, int *status)
{
    pid_t r;
    while ((r = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR)
        ;
    return r;
}

/* Reaps pid, a registered helper, if it has ended: its slot freed and its status in *status.
 * Returns 1 (reaped: now or before), 0 (still running), -1 (not a registered helper). Under
 * live.lock. */
static int reap_locked(pid_t pid, int *status)
{
    for (int i = 0; i < live.n; i++) {
        if (live.pid[i] != pid)
            continue;
        int st = 0;
        if (!live.reaped[i]) {
            if (wait_nohang(pid, &st) == 0)
                return 0;
        } else {
            st = live.status[i];
        }
        if (status)
            *status = st;
        free_slot_locked(i);
        return 1;
    }
    return -1;
}

/* Frees the slots of abandoned helpers that have ended (reaped here, or gone: ECHILD), so that
 * a run without the tool's reaping loop (a subcommand, the library) never fills the registry
 * nor keeps their zombies. Under live.lock. */
static void sweep_locked(void)
{
    for (int i = 0; i < live.n; i++) {
        if (!live.abandoned[i])
            continue;
        if (wait_nohang(live.pid[i], NULL) == 0)
            continue;
        free_slot_locked(i);
        i--;
    }
}

bool rt_helper_reap(int64_t pid) /* resource_tracker/helper.h */
{
    /* under the lock even when none seems to run: a helper being started registers under it */
    pthread_mutex_lock(&live.lock);
    bool found = false;
    for (int i = 0; i < live.n; i++) {
        /* a slot already reaped holds a pid that may be another process's by now */
        if (live.pid[i] != (pid_t)pid || live.reaped[i])
            continue;
        found = true;
        if (live.abandoned[i]) { /* nobody asks for its status */
            reap_locked((pid_t)pid, NULL);
            break;
        }
        int st = 0;
        if (wait_nohang((pid_t)pid, &st) == (pid_t)pid) { /* kept for its owner, who frees the slot */
            live.reaped[i] = true;
            live.status[i] = st;
        }
        break;
    }
    pthread_mutex_unlock(&live.lock);
    return found;
}

bool rt_bridge_is_helper(int64_t pid)
{
    pthread_mutex_lock(&live.lock);
    bool yes = false;
    for (int i = 0; i < live.n && !yes; i++)
        yes = live.pid[i] == (pid_t)pid && !live.reaped[i];
    pthread_mutex_unlock(&live.lock);
    return yes;
}

/* Whether the children file of the tool's thread tid lists only helpers. */
static bool children_are_helpers(const char *tid)
{
    char path[64];
    if (!rt_pathf(path, sizeof path, "/proc/self/task/%s/children", tid))
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { /* a thread gone meanwhile has no children; a list unread may hold the job's */
        char dir[48];
        return rt_pathf(dir, sizeof dir, "/proc/self/task/%s", tid) && access(dir, F_OK) < 0 && errno == ENOENT;
    }
    char buf[4096];
    ssize_t n = rt_pread_all(fd, buf, sizeof buf);
    close(fd);
    if (n < 0 || (size_t)n >= sizeof buf - 1)
        return false; /* unread, or too many to be helpers alone */
    for (char *p = buf, *end; *p; p = end) {
        long long pid = strtoll(p, &end, 10);
        if (end == p)
            break;
        if (!rt_bridge_is_helper(pid))
            return false;
    }
    return true;
}

bool rt_helper_only_left(void) /* resource_tracker/helper.h */
{
    pthread_mutex_lock(&live.lock);
    int n = live.n;
    pthread_mutex_unlock(&live.lock);
    if (n == 0)
        return false;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    bool only = true;
    struct dirent *e;
    while (only && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        only = children_are_helpers(e->d_name);
    }
    closedir(d);
    return only;
}

/* Waits up to ms milliseconds for the registered helper pid to end and reaps it (its status in
 * *status). Returns whether it has ended; one still running stays registered, abandoned: the
 * tool's reaping (rt_helper_reap) takes it when it ends. */
static bool await_end(pid_t pid, int ms, int *status)
{
    for (int i = 0;; i++) {
        pthread_mutex_lock(&live.lock);
        int r = reap_locked(pid, status);
        sweep_locked();
        if (r == 0 && i >= ms)
            for (int k = 0; k < live.n; k++)
                if (live.pid[k] == pid)
                    live.abandoned[k] = true;
        pthread_mutex_unlock(&live.lock);
        if (r != 0)
            return r > 0;
        if (i >= ms)
            return false;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

void rt_bridge_use_program(const char *path)
{
    program = path;
}

bool rt_bridge_present(void)
{
    return program || (rt_bridge_image_start && (uintptr_t)rt_bridge_image_end > (uintptr_t)rt_bridge_image_start);
}

/* A read-only descriptor of the file at path (close-on-exec), the writable one closed. */
static int reopen_ro(int fd, const char *path)
{
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    int e = errno;
    close(fd);
    errno = e;
    return ro;
}

/* Makes image.fd: the embedded image in an executable, read-only file. Under image.lock. */
static int make_image(void)
{
    if (image.fd >= 0)
        return 0;
    size_t n = (size_t)((uintptr_t)rt_bridge_image_end - (uintptr_t)rt_bridge_image_start);
    char path[4096];
    int fd = memfd_create("resource-tracker-bridge", MFD_CLOEXEC | MFD_EXEC);
    if (fd < 0 && errno == EINVAL)
        fd = memfd_create("resource-tracker-bridge", MFD_CLOEXEC);
    if (fd >= 0) {
        if (rt_write_all(fd, rt_bridge_image_start, n) < 0 || !rt_pathf(path, sizeof path, "/proc/self/fd/%d", fd)) {
            snprintf(image.err, sizeof image.err, "cannot write the helper into memory: %s", strerror(errno));
            close(fd);
            return -1;
        }
        /* a file open for writing cannot be executed (ETXTBSY): a read-only one is */
        if ((image.fd = reopen_ro(fd, path)) < 0) {
            snprintf(image.err, sizeof image.err, "cannot reopen the helper's memory file: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    /* no memfd (Linux before 3.17): a temporary file, deleted once open read-only */
    const char *dir = getenv("TMPDIR");
    if (!rt_pathf(path, sizeof path, "%s/resource-tracker-bridge-XXXXXX", dir && *dir ? dir : "/tmp") ||
        (fd = mkostemp(path, O_CLOEXEC)) < 0) {
        snprintf(image.err, sizeof image.err, "cannot make a file for the helper in %s: %s", dir && *dir ? dir : "/tmp",
                 strerror(errno));
        return -1;
    }
    if (fchmod(fd, 0700) < 0 || rt_write_all(fd, rt_bridge_image_start, n) < 0 || (fd = reopen_ro(fd, path)) < 0) {
        snprintf(image.err, sizeof image.err, "cannot write the helper to %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(path);
        return -1;
    }
    unlink(path);
    image.fd = fd;
    return 0;
}

int rt_bridge_start(rt_bridge *b, char *err, size_t errlen)
{
    b->pid = -1;
    b->fd = -1;
    if (!rt_bridge_present()) {
        snprintf(err, errlen, "this build holds no loader helper");
        return -1;
    }
    int img = -1;
    if (!program) {
        pthread_mutex_lock(&image.lock);
        int r = make_image();
        img = image.fd;
        if (r < 0)
            snprintf(err, errlen, "%s", image.err);
        pthread_mutex_unlock(&image.lock);
        if (r < 0)
            return -1;
    }
    int sv[2], ep[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "cannot make the helper's socket: %s", strerror(errno));
        return -1;
    }
    if (pipe2(ep, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
        close(sv[0]), close(sv[1]);
        return -1;
    }
    /* every signal blocked across the fork: the child runs no handler of ours; the helper
     * unblocks them itself once it runs */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    char *const argv[] = {"resource-tracker-bridge", NULL};
    extern char **environ;
    pthread_mutex_lock(&live.lock);
    sweep_locked();
    pid_t pid = live.n < MAX_LIVE ? fork() : (errno = EAGAIN, -1);
    if (pid == 0) {
        setpgid(0, 0); /* a group of its own: a terminal's ^C for the job does not end a transfer */
        /* the image and the error pipe out of descriptor 3's way before the socket takes it */
        int exe = img == 3 ? fcntl(3, F_DUPFD_CLOEXEC, 4) : img;
        int errfd = ep[1] == 3 ? fcntl(3, F_DUPFD_CLOEXEC, 4) : ep[1];
        if ((program || exe >= 0) && errfd >= 0 && (sv[1] == 3 ? fcntl(3, F_SETFD, 0) == 0 : dup2(sv[1], 3) == 3)) {
            /* not the tool's stdin and stdout: a helper left in a transfer past the tool's end
             * would hold the reader of its output waiting (stderr kept, for its one-line words) */
            int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
            if (nul >= 0) {
                dup2(nul, 0), dup2(nul, 1);
                if (nul > 1)
                    close(nul);
            }
            if (program)
                execve(program, argv, environ);
            else
                fexecve(exe, argv, environ);
        }
        int e = errno;
        ssize_t w = write(errfd, &e, sizeof e);
        (void)w;
        _exit(127);
    }
    int fork_errno = errno;
    if (pid > 0) {
        live.reaped[live.n] = live.abandoned[live.n] = false;
        live.pid[live.n] = pid;
        live.n++;
    }
    pthread_mutex_unlock(&live.lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    close(ep[1]);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start the helper: %s", strerror(fork_errno));
        close(sv[0]), close(ep[0]);
        return -1;
    }
    int e = 0;
    ssize_t k;
    while ((k = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(ep[0]);
    if (k > 0) { /* exec failed: the child has ended (or is about to) */
        await_end(pid, 1000, NULL);
        close(sv[0]);
        if (e == ENOENT && !program)
            snprintf(err, errlen, "no glibc on this machine to load it with (%s)", LOADER);
        else
            snprintf(err, errlen, "cannot run the helper: %s", strerror(e));
        return -1;
    }
    b->pid = pid;
    b->fd = sv[0];
    return 0;
}

static void stop_within(rt_bridge *b, int ms);

/* What became of a helper that stopped answering: its exit, when it has ended. */
static void ended(pid_t pid, char *why, size_t cap)
{
    int st = 0;
    if (!await_end(pid, 200, &st))
        return;
    if (WIFEXITED(st))
        snprintf(why, cap, "exit status %d%s", WEXITSTATUS(st),
                 WEXITSTATUS(st) == 127 ? ": its libraries could not be loaded (glibc older than 2.17?)" : "");
    else if (WIFSIGNALED(st))
        snprintf(why, cap, "killed by signal %d", WTERMSIG(st));
}

int rt_bridge_call(rt_bridge *b, rt_wire *req, rt_wire *rep, double deadline, const _Atomic double *stop, char *err,
                   size_t errlen)
{
    if (b->fd < 0) {
        snprintf(err, errlen, "the helper is not running");
        return -1;
    }
    const char *step = "send to";
    if (rt_wire_send(b->fd, req, deadline, stop) == 0) {
        step = "hear from";
        if (rt_wire_recv(b->fd, rep, deadline, stop) == 0)
            return 0;
    }
    int e = errno;
    pid_t pid = b->pid;
    if (e == ETIMEDOUT) {
        snprintf(err, errlen,
                 stop && rt_mono_secs() >= atomic_load(stop) ? "aborted at the caller's deadline"
                                                             : "the helper did not answer in time");
        stop_within(b, 0); /* the caller's time is up: the helper ends on its own */
        return -1;
    }
    shutdown(b->fd, SHUT_RDWR); /* stopped, its end awaited below for the message */
    close(b->fd);
    b->fd = -1;
    b->pid = -1;
    char why[160] = "";
    if (e == EPIPE || e == ECONNRESET)
        ended(pid, why, sizeof why);
    else
        await_end(pid, 200, NULL);
    snprintf(err, errlen, "cannot %s the helper: %s%s%s", step, e == EPIPE ? "it ended" : strerror(e),
             why[0] ? ", " : "", why);
    return -1;
}

/* Closes b's socket and waits up to ms milliseconds for the helper to end (see rt_bridge_stop). */
static void stop_within(rt_bridge *b, int ms)
{
    if (b->fd < 0)
        return;
    shutdown(b->fd, SHUT_RDWR);
    close(b->fd);
    b->fd = -1;
    if (b->pid > 0)
        await_end(b->pid, ms, NULL);
    b->pid = -1;
}

void rt_bridge_stop(rt_bridge *b)
{
    /* an idle helper ends at once on the closed socket (within a millisecond or two); one in a
     * transfer within a second: not waited for past 200 ms (the tool's reaping takes it then) */
    stop_within(b, 200);
}

int rt_bridge_probe(const char *what, char *err, size_t errlen)
{
    rt_bridge b;
    if (rt_bridge_start(&b, err, errlen) < 0)
        return -1;
    rt_wire req, rep;
    rt_wire_init(&req);
    rt_wire_init(&rep);
    rt_wire_put_i64(&req, RT_BRIDGE_LOAD);
    rt_wire_put_str(&req, what);
    int rc = -1;
    if (rt_bridge_call(&b, &req, &rep, rt_mono_secs() + 30, NULL, err, errlen) == 0) {
        int64_t ok = rt_wire_get_i64(&rep);
        const char *why = rt_wire_get_bytes(&rep, NULL);
        if (rep.bad)
            snprintf(err, errlen, "the helper's answer is malformed");
        else if (!ok)
            snprintf(err, errlen, "%s", why ? why : "not loaded");
        else
            rc = 0;
    }
    rt_bridge_stop(&b);
    rt_wire_free(&req);
    rt_wire_free(&rep);
    return rc;
}

rt_error rt_helper_probe(const char *what, char *err, size_t errlen) /* resource_tracker/helper.h */
{
    return rt_bridge_probe(what, err, errlen) == 0 ? RT_OK : RT_ERR_UNSUPPORTED;
}
