/* fault_proc.c - an LD_PRELOAD shim for the fault tests: per-process proc files (paths
 * relative to the proc root that start with a pid, "812/stat", "812/task/813/io") vanish or
 * come short as a process that exits mid-read would make them, deterministically: every Nth
 * such openat fails with ENOENT (FAULT_PROC_OPEN=N), every Nth pread of one fails with ESRCH
 * (FAULT_PROC_READ=N), every Nth returns half of what it read (FAULT_PROC_SHORT=N). 0 or unset:
 * never. At exit the counts of faults made go to the file FAULT_PROC_REPORT names, if any. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_FD 65536

static atomic_uchar marked[MAX_FD]; /* fds opened on a per-process file */
static atomic_ulong n_open, n_read, made_open, made_read, made_short;

/* The period the variable name sets (0: never). */
static unsigned long every(const char *name)
{
    const char *v = getenv(name);
    return v ? strtoul(v, NULL, 10) : 0;
}

/* Whether path names a per-process file: relative, a pid first. */
static int per_process(const char *path)
{
    if (!path || path[0] < '0' || path[0] > '9')
        return 0;
    while (*path >= '0' && *path <= '9')
        path++;
    return *path == '/';
}

/* openat(2), failing every FAULT_PROC_OPEN-th per-process open with ENOENT. */
int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    int pp = per_process(path);
    unsigned long k = every("FAULT_PROC_OPEN");
    if (pp && k && atomic_fetch_add(&n_open, 1) % k == k - 1) {
        atomic_fetch_add(&made_open, 1);
        errno = ENOENT;
        return -1;
    }
    int fd = (int)syscall(SYS_openat, dirfd, path, flags, mode);
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&marked[fd], (unsigned char)pp);
    return fd;
}

/* close(2), forgetting the mark. */
int close(int fd)
{
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&marked[fd], 0);
    return (int)syscall(SYS_close, fd);
}

/* pread(2) with the faults on marked descriptors. */
static ssize_t faulty_pread(int fd, void *buf, size_t n, off_t off)
{
    int m = fd >= 0 && fd < MAX_FD && atomic_load(&marked[fd]);
    if (m) {
        unsigned long r = every("FAULT_PROC_READ"), s = every("FAULT_PROC_SHORT");
        unsigned long i = atomic_fetch_add(&n_read, 1);
        if (r && i % r == r - 1) {
            atomic_fetch_add(&made_read, 1);
            errno = ESRCH;
            return -1;
        }
        ssize_t got = (ssize_t)syscall(SYS_pread64, fd, buf, n, off);
        if (got > 1 && s && i % s == s - 1) {
            atomic_fetch_add(&made_short, 1);
            return got / 2;
        }
        return got;
    }
    return (ssize_t)syscall(SYS_pread64, fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return faulty_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    return faulty_pread(fd, buf, n, off);
}

/* Writes the counts of faults made to FAULT_PROC_REPORT. */
__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("FAULT_PROC_REPORT");
    if (!path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "open %lu\nread %lu\nshort %lu\n", atomic_load(&made_open), atomic_load(&made_read),
            atomic_load(&made_short));
    fclose(f);
}
