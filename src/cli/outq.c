/* outq.c - the sample output's queue: whole lines in a preallocated ring under a bound, written
 * by a thread of their own (one write(2) per line while the reader keeps up, a backlog in one
 * go; to a pipe or terminal a line that finds the queue empty is written at once, without
 * blocking, and the thread starts only when one would have blocked), so a reader that stalls
 * never holds up sampling; at the end the reader is waited for up to a deadline, and what it
 * never took is counted as dropped. A regular file on a local file system (and /dev/null) is
 * written directly, one write(2) per line, with no thread: it never waits on a reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "outq.h"
#include "say.h"

#define MSG_ROOM (64u << 10)  /* the tool's own lines may go this far past the bound */
#define ENTRY_MSG 0x80000000u /* an entry's length with this bit: one of the tool's lines */
#define ENTRY_MAX 0x7fffffffu

enum { MODE_BLOCK, MODE_NONBLOCK, MODE_SOCKET, MODE_DIRECT };

struct cli_outq {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC; the thread waits for lines, the end for the thread */
    pthread_t thread;
    int fd;   /* the queue's own descriptor of the output */
    int mode; /* how it writes without blocking (MODE_BLOCK: it may block) */
    int wake; /* eventfd: wakes the thread from waiting for room in the output */
    char *ring;
    size_t cap, bound; /* the ring's bytes (bound + MSG_ROOM); the most bytes queued samples reach */
    size_t head, used; /* the oldest queued byte; bytes queued */
    uint32_t *ent;     /* each queued line's length (ENTRY_MSG: the tool's own) */
    size_t ent_cap, ent_head, ent_n;
    size_t done; /* bytes of the oldest line already written */
    uint64_t samples, delivered, dropped_bound;
    int err;       /* the errno that ended the output; 0 */
    bool err_told; /* a push returned it */
    bool stop;     /* ending: write what is queued, then return */
    bool quit;     /* the deadline passed: return now */
    bool started; /* the thread was started (MODE_BLOCK: at once; a pipe's: at its first wait) */
    bool thread_done, ended, stalled;
    cli_outq *next_left; /* in the list of queues whose thread was left behind */
};

/* Queues whose thread was left stuck in a blocking write: kept (and reachable) for the life of
 * the process, since that thread still uses them. */
static cli_outq *left_behind;
static pthread_mutex_t left_mu = PTHREAD_MUTEX_INITIALIZER;

/* Whether a regular file on the file system of fd may hang a write on something other than the
 * local disk: a network or FUSE file system (NFS, SMB/CIFS, Ceph, 9p, AFS, FUSE), or one that
 * cannot be told. */
static bool remote_fs(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0)
        return true;
    switch ((unsigned long)sf.f_type) {
    case 0x6969UL:     /* NFS */
    case 0x517BUL:     /* SMB */
    case 0xFF534D42UL: /* CIFS */
    case 0xFE534D42UL: /* SMB2 */
    case 0x00C36400UL: /* Ceph */
    case 0x01021997UL: /* 9p */
    case 0x5346414FUL: /* AFS */
    case 0x6B414653UL: /* kAFS */
    case 0x65735546UL: /* FUSE */
    case 0x47504653UL: /* GPFS */
    case 0x0BD00BD0UL: /* Lustre */
        return true;
    default: return false;
    }
}

/* The queue's own descriptor of fd (close-on-exec; fd's open file description is shared with the
 * wrapped command, so its flags are never changed): a pipe, FIFO or terminal opened anew without
 * blocking (/dev/fd/N opens the same pipe or terminal as a new description); a stream socket as a
 * duplicate written with MSG_DONTWAIT; a regular file on a local file system, or a character
 * device that is no terminal (/dev/null), a duplicate written directly; anything else (a file on
 * a network file system, a block device) a duplicate that may block, written by the thread. */
static int own_fd(int fd, int flags, int *mode)
{
    *mode = MODE_BLOCK;
    struct stat st;
    if (!(flags & CLI_OUTQ_BLOCKING) && fstat(fd, &st) == 0) {
        if ((S_ISREG(st.st_mode) && !remote_fs(fd)) || (S_ISCHR(st.st_mode) && !isatty(fd)))
            *mode = MODE_DIRECT;
        else if (S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && isatty(fd))) {
            char path[32];
            snprintf(path, sizeof path, "/dev/fd/%d", fd);
            int nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
            if (nfd >= 0) {
                *mode = MODE_NONBLOCK;
                return nfd;
            }
        } else if (S_ISSOCK(st.st_mode)) {
            int type = 0;
            socklen_t len = sizeof type;
            if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM)
                *mode = MODE_SOCKET;
        }
    }
    return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

static ssize_t put(const cli_outq *q, struct iovec *iov, int n)
{
    if (q->mode == MODE_SOCKET) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        return sendmsg(q->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    return n == 1 ? write(q->fd, iov[0].iov_base, iov[0].iov_len) : writev(q->fd, iov, n);
}

/* k bytes were written (under the lock): the lines they complete are delivered. */
static void consume(cli_outq *q, size_t k)
{
    q->head = (q->head + k) % q->cap;
    q->used -= k;
    while (k > 0 && q->ent_n > 0) {
        uint32_t e = q->ent[q->ent_head];
        size_t rest = (e & ENTRY_MAX) - q->done;
        if (k < rest) {
            q->done += k;
            break;
        }
        k -= rest;
        q->done = 0;
        q->ent_head = (q->ent_head + 1) % q->ent_cap;
        q->ent_n--;
        if (!(e & ENTRY_MSG))
            q->delivered++;
    }
    if (q->used == 0) /* start over: a reader that keeps up keeps the same few pages in use */
        q->head = q->ent_head = q->done = 0;
}

/* Waits (without the lock) until the output can take bytes, or the end wakes us. */
static void wait_room(cli_outq *q)
{
    struct pollfd p[2] = {{.fd = q->fd, .events = POLLOUT}, {.fd = q->wake, .events = POLLIN}};
    if (poll(p, 2, -1) > 0 && (p[1].revents & POLLIN)) {
        uint64_t v;
        if (read(q->wake, &v, sizeof v) < 0) {
            /* EAGAIN: another read took it */
        }
    }
}

static void *run(void *arg)
{
    cli_outq *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->used == 0 && !q->stop && !q->quit)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->quit || q->used == 0)
            break;
        /* everything queued, in one write: a line alone while the reader keeps up */
        struct iovec iov[2];
        size_t first = q->cap - q->head < q->used ? q->cap - q->head : q->used;
        iov[0] = (struct iovec){.iov_base = q->ring + q->head, .iov_len = first};
        iov[1] = (struct iovec){.iov_base = q->ring, .iov_len = q->used - first};
        int n = iov[1].iov_len ? 2 : 1;
        pthread_mutex_unlock(&q->mu); /* the bytes being written are not touched by a push */
        ssize_t k = put(q, iov, n);
        int e = errno;
        if (k < 0 && (e == EAGAIN || e == EWOULDBLOCK))
            wait_room(q);
        pthread_mutex_lock(&q->mu);
        if (k > 0) {
            consume(q, (size_t)k);
            pthread_cond_broadcast(&q->cv);
        } else if (k == 0 || (e != EAGAIN && e != EWOULDBLOCK && e != EINTR)) {
            q->err = k == 0 ? EIO : e;
            break;
        }
    }
    q->thread_done = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Starts the thread (signals blocked in it: the tool's arrive through its signalfd). Returns 0,
 * or the error. */
static int start_thread(cli_outq *q)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&q->thread, NULL, run, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e == 0) {
        q->started = true;
        q->thread_done = false;
    }
    return e;
}

static void free_parts(cli_outq *q)
{
    if (q->fd >= 0)
        close(q->fd);
    if (q->wake >= 0)
        close(q->wake);
    free(q->ring);
    free(q->ent);
    free(q);
}

cli_outq *cli_outq_new(int fd, size_t bound, int flags)
{
    if (fd < 0) {
        errno = EBADF;
        return NULL;
    }
    cli_outq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->fd = q->wake = -1;
    q->bound = bound ? bound : CLI_OUTQ_BOUND;
    if (q->bound > ENTRY_MAX - MSG_ROOM)
        q->bound = ENTRY_MAX - MSG_ROOM;
    q->cap = q->bound + MSG_ROOM;
    q->ent_cap = q->cap / 64 + 64; /* lines are longer than 64 bytes: the bytes fill up first */
    /* untouched pages cost nothing: a reader that keeps up uses the first few (consume) */
    q->ring = malloc(q->cap);
    q->ent = malloc(q->ent_cap * sizeof *q->ent);
    if (!q->ring || !q->ent) {
        free_parts(q);
        errno = ENOMEM;
        return NULL;
    }
    q->fd = own_fd(fd, flags, &q->mode);
    q->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (q->fd < 0 || q->wake < 0) {
        int e = errno;
        free_parts(q);
        errno = e;
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&q->mu, NULL);
    q->thread_done = true; /* no thread yet */
    /* only a queue that may block needs its thread from the start; a pipe's starts when a write
     * would have blocked, a local file's never (a thread is one more task of the job's user) */
    int e = q->mode == MODE_BLOCK ? start_thread(q) : 0;
    if (e != 0) {
        pthread_cond_destroy(&q->cv);
        pthread_mutex_destroy(&q->mu);
        free_parts(q);
        errno = e;
        return NULL;
    }
    return q;
}

int cli_outq_push(cli_outq *q, const void *p, size_t n, bool sample)
{
    pthread_mutex_lock(&q->mu);
    if (q->err && sample) {
        int e = q->err;
        q->err_told = true;
        pthread_mutex_unlock(&q->mu);
        errno = e;
        return -1;
    }
    if (sample)
        q->samples++;
    size_t limit = sample ? q->bound : q->cap;
    if (n == 0 || q->err || q->ended || n > limit || q->used + n > limit || q->ent_n == q->ent_cap) {
        if (sample && n > 0)
            q->dropped_bound++;
        pthread_mutex_unlock(&q->mu);
        return 0;
    }
    if (q->mode == MODE_DIRECT) { /* a local file: written here, whole, as before the queue */
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(q->fd, (const char *)p + off, n - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno == EINTR)
                continue;
            else
                break;
        }
        if (off == n) {
            if (sample)
                q->delivered++;
            pthread_mutex_unlock(&q->mu);
            return 0;
        }
        q->err = off < n && errno != 0 ? errno : EIO;
        if (sample) {
            q->samples--;
            q->err_told = true;
        }
        int e = q->err;
        pthread_mutex_unlock(&q->mu);
        errno = e;
        return sample ? -1 : 0;
    }
    ssize_t k = -1;
    if (q->used == 0 && q->mode != MODE_BLOCK) {
        /* nothing queued, so the thread is not writing: a write that cannot block, here, saves
         * waking it (the same one write of the line while the reader keeps up) */
        struct iovec iov = {.iov_base = (void *)p, .iov_len = n};
        k = put(q, &iov, 1);
        if (k == (ssize_t)n) {
            if (sample)
                q->delivered++;
            pthread_mutex_unlock(&q->mu);
            return 0;
        }
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            q->err = errno;
            if (sample) {
                q->samples--; /* not taken by a working output: as when the thread met the error */
                q->err_told = true;
            }
            pthread_mutex_unlock(&q->mu);
            errno = q->err;
            return sample ? -1 : 0;
        }
    }
    size_t at = (q->head + q->used) % q->cap;
    size_t first = q->cap - at < n ? q->cap - at : n;
    memcpy(q->ring + at, p, first);
    memcpy(q->ring, (const char *)p + first, n - first);
    q->used += n;
    q->ent[(q->ent_head + q->ent_n) % q->ent_cap] = (uint32_t)n | (sample ? 0 : ENTRY_MSG);
    q->ent_n++;
    if (k > 0) /* the start of it went: the thread writes the rest when there is room */
        consume(q, (size_t)k);
    if (!q->started && start_thread(q) != 0) {
        /* no thread to wait for room: what is queued stays, and counts as dropped at the end */
    }
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

long cli_outq_write(void *user, const void *buf, size_t len)
{
    return cli_outq_push(user, buf, len, true) == 0 ? (long)len : -1;
}

static struct timespec ts_mono(double secs)
{
    if (secs < 0)
        secs = 0;
    struct timespec t = {.tv_sec = (time_t)secs};
    t.tv_nsec = (long)((secs - (double)t.tv_sec) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

void cli_outq_end(cli_outq *q, double deadline_mono_secs, cli_outq_counts *c)
{
    struct timespec by = ts_mono(deadline_mono_secs);
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_broadcast(&q->cv);
    while (!q->thread_done && !q->quit)
        if (pthread_cond_timedwait(&q->cv, &q->mu, &by) == ETIMEDOUT && !q->thread_done)
            q->quit = true;
    if (!q->thread_done) {
        q->stalled = true;
        uint64_t one = 1;
        if (write(q->wake, &one, sizeof one) < 0) {
            /* the counter is full: it is readable anyway */
        }
        pthread_cond_broadcast(&q->cv);
        if (q->mode != MODE_BLOCK) /* it never blocks: it returns at once */
            while (!q->thread_done)
                pthread_cond_wait(&q->cv, &q->mu);
    }
    q->ended = true;
    if (c) {
        *c = (cli_outq_counts){.samples = q->samples,
                               .delivered = q->delivered,
                               .dropped = q->err ? 0 : q->samples - q->delivered,
                               .err = q->err,
                               .err_told = q->err_told,
                               .stalled = q->stalled};
    }
    pthread_mutex_unlock(&q->mu);
}

/* One of q's flags (ended, thread_done) as it stands, read under q's lock. */
static bool flag_of(cli_outq *q, const bool *flag)
{
    pthread_mutex_lock(&q->mu);
    bool v = *flag;
    pthread_mutex_unlock(&q->mu);
    return v;
}

void cli_outq_free(cli_outq *q)
{
    if (!q)
        return;
    if (!flag_of(q, &q->ended)) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        cli_outq_end(q, (double)now.tv_sec + (double)now.tv_nsec / 1e9, NULL);
    }
    if (!flag_of(q, &q->thread_done)) { /* stuck in write(2): it keeps the queue */
        pthread_detach(q->thread);
        pthread_mutex_lock(&left_mu);
        q->next_left = left_behind;
        left_behind = q;
        pthread_mutex_unlock(&left_mu);
        return;
    }
    if (q->started)
        pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free_parts(q);
}

/* ---- the tracking run's output ------------------------------------------------------------- */

/* Set and cleared by the main thread; cli_say may run on any thread (the library's log). */
static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;
static cli_outq *run_q;     /* the run's sample output; NULL: none (or written directly) */
static bool run_shares_err; /* it is stderr: the tool's own lines go through it */

/* cli_say's taker while the run's output shares stderr (installed by cli_outq_run_set, removed
 * with the output): the tool's lines are queued with the samples. Returns true when taken
 * (queued; or, once the output was given up at its deadline, tried once without blocking or
 * skipped), false when cli_say is to write it to stderr itself. */
static bool outq_say(const char *line, size_t n);

void cli_outq_run_set(cli_outq *q, bool shares_stderr)
{
    pthread_mutex_lock(&run_mu);
    run_q = q;
    run_shares_err = shares_stderr;
    pthread_mutex_unlock(&run_mu);
    cli_say_install(CLI_SAY_OUTQ, q && shares_stderr ? outq_say : NULL);
}

bool cli_outq_is_stderr(int fd)
{
    if (fd == STDERR_FILENO)
        return true;
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstat(STDERR_FILENO, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void cli_outq_run_end(double deadline_mono_secs)
{
    pthread_mutex_lock(&run_mu);
    cli_outq *q = run_q;
    bool shares = run_shares_err;
    pthread_mutex_unlock(&run_mu);
    if (!q)
        return;
    cli_outq_counts c;
    cli_outq_end(q, deadline_mono_secs, &c);
    if (c.err && !c.err_told && c.err != EPIPE)
        cli_say("cannot write samples: %s", strerror(c.err));
    else if (c.dropped)
        cli_say("warning: the output's reader stalled: %llu of %llu samples dropped", (unsigned long long)c.dropped,
                (unsigned long long)c.samples);
    if (c.stalled && shares)
        return; /* kept: the tool's lines from here on are tried without blocking, or skipped */
    pthread_mutex_lock(&run_mu);
    run_q = NULL;
    pthread_mutex_unlock(&run_mu);
    cli_say_install(CLI_SAY_OUTQ, NULL);
    cli_outq_free(q);
}

static bool outq_say(const char *line, size_t n)
{
    pthread_mutex_lock(&run_mu);
    cli_outq *q = run_q;
    bool taken = false;
    if (q && run_shares_err) {
        pthread_mutex_lock(&q->mu);
        bool ended = q->ended, stalled = q->stalled;
        if (ended && stalled && q->mode != MODE_BLOCK && q->thread_done && q->done == 0) {
            /* after the last whole line the reader may still take: one try, never blocking */
            struct iovec iov = {.iov_base = (void *)line, .iov_len = n};
            if (put(q, &iov, 1) < 0) {
                /* full: skipped */
            }
        }
        pthread_mutex_unlock(&q->mu);
        if (!ended)
            cli_outq_push(q, line, n, false);
        taken = !ended || stalled;
    }
    pthread_mutex_unlock(&run_mu);
    return taken;
}

static ssize_t err_write(void *cookie, const char *buf, size_t size)
{
    cli_outq_push(cookie, buf, size, false);
    return (ssize_t)size;
}

FILE *cli_outq_stderr(void)
{
    pthread_mutex_lock(&run_mu);
    cli_outq *q = run_shares_err ? run_q : NULL; /* the main thread's until cli_outq_run_end */
    pthread_mutex_unlock(&run_mu);
    if (!q)
        return stderr;
    FILE *f = fopencookie(q, "w", (cookie_io_functions_t){.write = err_write});
    if (!f)
        return stderr;
    setvbuf(f, NULL, _IOFBF, 1u << 16);
    return f;
}

void cli_outq_stderr_done(FILE *f)
{
    if (f == stderr)
        fflush(f);
    else
        fclose(f);
}
