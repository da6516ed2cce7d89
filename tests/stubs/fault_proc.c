/* fault_proc.c - an LD_PRELOAD shim for the fault tests: per-process proc files (paths
 * relative to the proc root that start with a pid, "812/stat", "812/task/813/io") vanish or
 * come short as a process that exits mid-read would make them, deterministically: every Nth
 * such openat fails with ENOENT (FAULT_PROC_OPEN=N), every Nth pread of one fails with ESRCH
 * (FAULT_PROC_READ=N), every Nth returns half of what it read (FAULT_PROC_SHORT=N). 0 or unset:
 * never. As for a process that really exited, a pid that met a fault has vanished for good:
 * its files open no more (ENOENT) and read no more (ESRCH). The caller's own children are
 * spared (the job's root: while it lives, its tree is seen through it). At exit the counts of
 * faults the tracker made go to the file FAULT_PROC_REPORT names, if any. */
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

#define MAX_GONE 4096

static atomic_int marked[MAX_FD]; /* the pid of the per-process file an fd is open on, else 0 */
static atomic_ulong n_open, n_read, made_open, made_read, made_short;
static atomic_int gone[MAX_GONE]; /* pids that met a fault (a ring: the oldest are forgotten) */
static atomic_uint ngone;

/* Records pid as vanished. */
static void vanish(int pid)
{
    atomic_store(&gone[atomic_fetch_add(&ngone, 1) % MAX_GONE], pid);
}

/* Whether pid met a fault before. */
static int vanished(int pid)
{
    for (unsigned i = 0; i < MAX_GONE; i++)
        if (atomic_load(&gone[i]) == pid)
            return 1;
    return 0;
}

/* The period the variable name sets (0: never). */
static unsigned long every(const char *name)
{
    const char *v = getenv(name);
    return v ? strtoul(v, NULL, 10) : 0;
}

/* The pid a per-process file's path starts with (relative, a pid first), else 0. */
static int per_process(const char *path)
{
    if (!path || path[0] < '0' || path[0] > '9')
        return 0;
    long pid = 0;
    while (*path >= '0' && *path <= '9' && pid < 1 << 30)
        pid = pid * 10 + (*path++ - '0');
    return *path == '/' ? (int)pid : 0;
}

/* Whether an access to pid's file fails: pid vanished before, or this access is a due fault
 * (counted in *made; pid vanishes from now on). Sets errno to err when it fails. */
static int fails(int pid, int due, atomic_ulong *made, int err)
{
    if (!vanished(pid)) {
        if (!due)
            return 0;
        atomic_fetch_add(made, 1);
        vanish(pid);
    }
    errno = err;
    return 1;
}

/* Whether pid is a child of ours, from its stat under dirfd (the proc root). */
static int our_child(int dirfd, int pid)
{
    char path[32], buf[512];
    snprintf(path, sizeof path, "%d/stat", pid);
    int fd = (int)syscall(SYS_openat, dirfd, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    ssize_t n = (ssize_t)syscall(SYS_read, fd, buf, sizeof buf - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    long ppid = 0;
    return close_paren && sscanf(close_paren + 1, " %*c %ld", &ppid) == 1 && ppid == (long)getpid();
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
    int pid = per_process(path);
    unsigned long k = every("FAULT_PROC_OPEN");
    if (pid && fails(pid, k && atomic_fetch_add(&n_open, 1) % k == k - 1 && !our_child(dirfd, pid), &made_open, ENOENT))
        return -1;
    int fd = (int)syscall(SYS_openat, dirfd, path, flags, mode);
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&marked[fd], pid && !our_child(dirfd, pid) ? pid : 0);
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
    int pid = fd >= 0 && fd < MAX_FD ? atomic_load(&marked[fd]) : 0;
    if (pid) {
        unsigned long r = every("FAULT_PROC_READ"), s = every("FAULT_PROC_SHORT");
        unsigned long i = atomic_fetch_add(&n_read, 1);
        if (fails(pid, r && i % r == r - 1, &made_read, ESRCH))
            return -1;
        ssize_t got = (ssize_t)syscall(SYS_pread64, fd, buf, n, off);
        if (got > 1 && s && i % s == s - 1) {
            atomic_fetch_add(&made_short, 1);
            vanish(pid); /* it exited while the kernel wrote its file */
            return got / 2;
        }
        return got;
    }
    return (ssize_t)syscall(SYS_pread64, fd, buf, n, off);
}

/* pread(2) and its 64-bit name: faulty_pread. */
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return faulty_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    return faulty_pread(fd, buf, n, off);
}

/* The first process that loads the shim (the tracker) names itself in FAULT_PROC_OWNER, which
 * the processes it starts inherit: only it writes the report. */
__attribute__((constructor)) static void claim(void)
{
    if (!getenv("FAULT_PROC_OWNER")) {
        char pid[24];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        setenv("FAULT_PROC_OWNER", pid, 1);
    }
}

/* Writes the counts of faults made to FAULT_PROC_REPORT, in the owner only (a process of the
 * job that outlives the tracker must not overwrite its counts). */
__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("FAULT_PROC_REPORT");
    const char *owner = getenv("FAULT_PROC_OWNER");
    if (!path || !owner || strtol(owner, NULL, 10) != (long)getpid())
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "open %lu\nread %lu\nshort %lu\n", atomic_load(&made_open), atomic_load(&made_read),
            atomic_load(&made_short));
    fclose(f);
}
