/* fswatch.c - the peak of what memory filesystems (the tmpfs mounts a job made) hold between two
 * walks: a file written and removed inside one interval is never there when a walk reads the
 * filesystem's used blocks. The kernel's fanotify, with a mark on each whole filesystem
 * (FAN_MARK_FILESYSTEM, FAN_MODIFY, file ids reported: no descriptor is opened for an event),
 * wakes a thread of the watch's when one of its files is written; the thread then reads the used
 * blocks of the filesystems (statfs through the paths the caller gives) and keeps the largest sum
 * until the next walk takes it, and waits RT_FSWATCH_GAP_MS before reading again (events of that
 * time merge into the next reading). No descriptor of a filesystem is kept (the job can still
 * unmount it: a mark does not hold a mount). Root only (filesystem marks ask CAP_SYS_ADMIN). */
#define _GNU_SOURCE /* eventfd, CLOCK_THREAD_CPUTIME_ID */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "fswatch.h"

struct rt_fswatch {
    int fan, stop; /* the fanotify group; an eventfd that ends the thread */
    pthread_t th;
    bool running;
    pthread_mutex_t mu; /* guards what follows */
    char *paths[RT_FSWATCH_PATHS];
    unsigned groups[RT_FSWATCH_PATHS];
    size_t npaths;
    uint64_t peak[RT_FSWATCH_GROUPS]; /* each group's largest sum since its last take */
    uint64_t readings;
    double cpu_secs;    /* the thread's CPU as of its last reading */
    char events[4096];  /* the thread's: events are read and dropped (their file does not matter) */
};

rt_fswatch *rt_fswatch_new(void)
{
    rt_fswatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_FID, O_RDONLY);
    w->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->fan < 0 || w->stop < 0 || pthread_mutex_init(&w->mu, NULL) != 0) {
        if (w->fan >= 0)
            close(w->fan);
        if (w->stop >= 0)
            close(w->stop);
        free(w);
        return NULL;
    }
    return w;
}

/* Reads the used blocks of the paths and raises each group's peak to its sum (under w->mu). */
static void read_now(rt_fswatch *w)
{
    uint64_t kib[RT_FSWATCH_GROUPS] = {0};
    for (size_t i = 0; i < w->npaths; i++) {
        struct statfs f;
        if (statfs(w->paths[i], &f) == 0 && f.f_blocks >= f.f_bfree)
            kib[w->groups[i]] += (uint64_t)(f.f_blocks - f.f_bfree) * (uint64_t)f.f_bsize / 1024;
    }
    for (unsigned g = 0; g < RT_FSWATCH_GROUPS; g++)
        if (kib[g] > w->peak[g])
            w->peak[g] = kib[g];
}

static void *watch_main(void *arg)
{
    rt_fswatch *w = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = w->fan, .events = POLLIN}, {.fd = w->stop, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        while (read(w->fan, w->events, sizeof w->events) > 0) {
        }
        struct timespec cpu;
        pthread_mutex_lock(&w->mu);
        read_now(w);
        w->readings++;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
            w->cpu_secs = (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9;
        pthread_mutex_unlock(&w->mu);
        struct pollfd s = {.fd = w->stop, .events = POLLIN};
        if (poll(&s, 1, RT_FSWATCH_GAP_MS) > 0)
            break;
    }
    return NULL;
}

int rt_fswatch_mark(rt_fswatch *w, const char *path)
{
    if (!w || fanotify_mark(w->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_MODIFY, AT_FDCWD, path) < 0)
        return -1;
    if (w->running)
        return 0;
    /* the thread takes no signal: the process's are the sampler's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    w->running = pthread_create(&w->th, NULL, watch_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (w->running)
        pthread_setname_np(w->th, "rt-fswatch");
    return w->running ? 0 : -1;
}

void rt_fswatch_set_paths(rt_fswatch *w, const char *const *paths, const unsigned *groups, size_t n)
{
    if (!w)
        return;
    if (n > RT_FSWATCH_PATHS)
        n = RT_FSWATCH_PATHS;
    char *copies[RT_FSWATCH_PATHS];
    unsigned in[RT_FSWATCH_PATHS];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned g = groups ? groups[i] : 0;
        if (g < RT_FSWATCH_GROUPS && (copies[k] = strdup(paths[i])) != NULL)
            in[k++] = g;
    }
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->npaths; i++)
        free(w->paths[i]);
    memcpy(w->paths, copies, k * sizeof *copies);
    memcpy(w->groups, in, k * sizeof *in);
    w->npaths = k;
    pthread_mutex_unlock(&w->mu);
}

/* group's peak since its last take; take: starts it again */
static uint64_t peak_of(rt_fswatch *w, unsigned group, bool take)
{
    if (!w || group >= RT_FSWATCH_GROUPS)
        return 0;
    pthread_mutex_lock(&w->mu);
    uint64_t kib = w->peak[group];
    if (take)
        w->peak[group] = 0;
    pthread_mutex_unlock(&w->mu);
    return kib;
}

uint64_t rt_fswatch_take_peak(rt_fswatch *w, unsigned group)
{
    return peak_of(w, group, true);
}

uint64_t rt_fswatch_peak(rt_fswatch *w, unsigned group)
{
    return peak_of(w, group, false);
}

void rt_fswatch_cost(rt_fswatch *w, uint64_t *readings, double *cpu_secs)
{
    *readings = 0;
    *cpu_secs = 0;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    *readings = w->readings;
    *cpu_secs = w->cpu_secs;
    pthread_mutex_unlock(&w->mu);
}

void rt_fswatch_free(rt_fswatch *w)
{
    if (!w)
        return;
    if (w->running) {
        uint64_t one = 1;
        ssize_t r = write(w->stop, &one, sizeof one);
        (void)r;
        pthread_join(w->th, NULL);
    }
    close(w->fan);
    close(w->stop);
    for (size_t i = 0; i < w->npaths; i++)
        free(w->paths[i]);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
