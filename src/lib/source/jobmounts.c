/* jobmounts.c - memory the job keeps in files that no process maps, read where no cgroup of the
 * job's counts it: the tmpfs (and ramfs) mounts it made in a mount namespace of its own (a
 * process whose /proc/PID/ns/mnt is not the tracker's: its mountinfo's tmpfs whose device the
 * tracker's own mountinfo lacks, read through /proc/PID/root: a tmpfs's used blocks, a ramfs's
 * files' blocks, which its statfs does not count), and in /dev/shm the larger of
 * what its used blocks grew by since tracking began and what its files written since then hold
 * (files the job holds there; another process's count too: the safe side). At each walk; as
 * root, a tmpfs of the job's (and /dev/shm, for a command's tree) also at its writes between
 * walks (fswatch.c: its peak). */
#define _GNU_SOURCE /* openat, fstatat, O_CLOEXEC */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "../core/dirwalk.h"
#include "fswatch.h"
#include "jobmounts.h"
#include "sources.h"

#define NS_MAX 8       /* mount namespaces of the job followed (more: the first ones) */
#define NS_PIDS 4      /* processes of each through which its mounts are read */
#define DEVS_MAX 256   /* devices of the tracker's own mounts remembered */
#define COUNTED_MAX 64 /* job filesystems counted at one reading */
#define SHM_FILES_MAX 4096 /* /dev/shm entries looked at in one reading (more: the first ones) */
#define RAM_FILES_MAX 4096 /* entries of one ramfs looked at in one reading (more: the first ones) */
#define RAM_DEPTH 16       /* directories of a ramfs followed down (deeper: not counted) */

typedef struct job_ns {
    uint64_t ino;
    int64_t pids[NS_PIDS]; /* 0: free */
} job_ns;

struct rt_jobmounts {
    const rt_roots *roots;
    uint64_t own_ns;
    unsigned own_devs[DEVS_MAX];
    size_t nown;
    job_ns ns[NS_MAX];
    size_t nns;
    uint64_t shm_base; /* /dev/shm's used KiB at the start; UINT64_MAX: no /dev/shm */
    struct timespec start; /* when tracking began (CLOCK_REALTIME, as files' times are) */
    rt_buf buf;
    /* the watch of the job's tmpfs mounts between walks (root only; fswatch.c): made at the
     * first such mount, each filesystem marked once, and the paths it reads set again only when
     * they changed (a steady walk allocates nothing) */
    rt_fswatch *watch;
    bool watch_tried;
    bool watch_shm; /* /dev/shm is marked too, read in the watch's group 1 (the mounts: 0) */
    unsigned marked[COUNTED_MAX];
    size_t nmarked;
    char *wpaths[COUNTED_MAX];
    size_t nwpaths;
    /* one reading's */
    int64_t pid;
    unsigned counted[COUNTED_MAX];
    size_t ncounted;
    uint64_t kib;
    size_t nw;       /* the tmpfs paths of this reading in wpaths */
    bool wchanged;   /* and whether they differ from the last reading's */
};

static unsigned dev_of(unsigned major, unsigned minor)
{
    return major << 20 | minor;
}

static uint64_t used_kib(const char *path, bool *ok)
{
    struct statfs f;
    *ok = statfs(path, &f) == 0;
    if (!*ok || f.f_blocks < f.f_bfree)
        return 0;
    return (uint64_t)(f.f_blocks - f.f_bfree) * (uint64_t)f.f_bsize / 1024;
}

static bool memory_fs(const char *fstype)
{
    return strcmp(fstype, "tmpfs") == 0 || strcmp(fstype, "ramfs") == 0;
}

static void own_mount(void *user, const rt_mountinfo_entry *e)
{
    rt_jobmounts *m = user;
    if (memory_fs(e->fstype) && m->nown < DEVS_MAX)
        m->own_devs[m->nown++] = dev_of(e->major, e->minor);
}

/* The mount namespace's inode of pid ("self" for 0), or 0. */
static uint64_t ns_of(const rt_jobmounts *m, int64_t pid)
{
    char rel[64];
    if (pid > 0)
        snprintf(rel, sizeof rel, "%lld/ns/mnt", (long long)pid);
    else
        snprintf(rel, sizeof rel, "self/ns/mnt");
    struct stat st;
    return fstatat(m->roots->proc_fd, rel, &st, 0) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Reads the mountinfo of rel (under proc) into m->buf; its length, or -1. */
static ssize_t read_mountinfo(rt_jobmounts *m, const char *rel)
{
    int fd = openat(m->roots->proc_fd, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = rt_read_fd_grow(fd, &m->buf, RT_READ_TO_EOF);
    close(fd);
    return n;
}

/* Makes the watch, once (root only: NULL elsewhere, or where the kernel refuses it). */
static rt_fswatch *watch_of(rt_jobmounts *m)
{
    if (!m->watch_tried) {
        m->watch_tried = true;
        m->watch = geteuid() == 0 ? rt_fswatch_new() : NULL;
    }
    return m->watch;
}

/* Hands the watch the paths it reads: the job's tmpfs mounts (group 0), then /dev/shm (1). */
static void watch_paths(rt_jobmounts *m)
{
    const char *paths[COUNTED_MAX + 1];
    unsigned groups[COUNTED_MAX + 1];
    size_t n = 0;
    for (; n < m->nwpaths; n++) {
        paths[n] = m->wpaths[n];
        groups[n] = 0;
    }
    if (m->watch_shm) {
        paths[n] = "/dev/shm";
        groups[n++] = 1;
    }
    rt_fswatch_set_paths(m->watch, paths, groups, n);
}

rt_jobmounts *rt_jobmounts_new(const rt_roots *roots, bool watch_shm)
{
    if (strcmp(roots->proc, "/proc") != 0)
        return NULL; /* a fixture's /proc: its pids are not this machine's */
    rt_jobmounts *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->roots = roots;
    rt_buf_init(&m->buf, 4u << 20);
    m->own_ns = ns_of(m, 0);
    ssize_t n = read_mountinfo(m, "self/mountinfo");
    if (n > 0)
        rt_mountinfo_parse(m->buf.data, (size_t)n, own_mount, m);
    bool ok;
    m->shm_base = used_kib("/dev/shm", &ok);
    if (!ok)
        m->shm_base = UINT64_MAX;
    clock_gettime(CLOCK_REALTIME, &m->start);
    if (watch_shm && ok && watch_of(m) && rt_fswatch_mark(m->watch, "/dev/shm") == 0) {
        m->watch_shm = true;
        watch_paths(m);
    }
    return m;
}

void rt_jobmounts_see(rt_jobmounts *m, int64_t pid)
{
    if (!m || !m->own_ns)
        return;
    uint64_t ino = ns_of(m, pid);
    if (!ino || ino == m->own_ns)
        return; /* the tracker's own (most processes), or gone */
    job_ns *at = NULL;
    for (size_t i = 0; i < m->nns && !at; i++)
        if (m->ns[i].ino == ino)
            at = &m->ns[i];
    if (!at) {
        if (m->nns == NS_MAX)
            return;
        at = &m->ns[m->nns++];
        *at = (job_ns){.ino = ino};
    }
    for (size_t k = 0; k < NS_PIDS; k++)
        if (at->pids[k] == 0 || at->pids[k] == pid) {
            at->pids[k] = pid;
            return;
        }
}

/* One ramfs being listed: the directory, the filesystem's device (a mount inside it is not
 * its), how deep, and what was found so far (shared by the directories below). */
typedef struct ram_walk {
    int fd;
    dev_t dev;
    int depth;
    int *seen;
    uint64_t *kib;
} ram_walk;

/* rt_dir_fn: a regular file of the ramfs counts its blocks; a directory is listed in turn. */
static int ram_entry(void *user, const char *name, unsigned char d_type)
{
    ram_walk *w = user;
    (void)d_type;
    if (++*w->seen > RAM_FILES_MAX)
        return 1;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
        return 0;
    struct stat st;
    if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != w->dev)
        return 0;
    if (S_ISREG(st.st_mode)) {
        *w->kib += (uint64_t)st.st_blocks / 2; /* 512-byte blocks: its pages */
    } else if (S_ISDIR(st.st_mode) && w->depth < RAM_DEPTH) {
        ram_walk in = *w;
        in.depth++;
        in.fd = openat(w->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (in.fd >= 0) {
            (void)rt_dir_walk_fd(in.fd, ram_entry, &in);
            close(in.fd);
        }
    }
    return 0;
}

/* What a ramfs at path holds (KiB): its files' blocks, summed (its statfs counts no blocks).
 * Sets *ok when it could be opened. */
static uint64_t ramfs_kib(const char *path, bool *ok)
{
    uint64_t kib = 0;
    int seen = 0;
    struct stat st;
    ram_walk w = {.fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), .seen = &seen, .kib = &kib};
    *ok = w.fd >= 0 && fstat(w.fd, &st) == 0;
    if (*ok) {
        w.dev = st.st_dev;
        (void)rt_dir_walk_fd(w.fd, ram_entry, &w);
    }
    if (w.fd >= 0)
        close(w.fd);
    return kib;
}

/* A tmpfs of the job's counted at this reading: marked for the watch (once; as root), and its
 * path the watch's i-th. */
static void watch_mount(rt_jobmounts *m, unsigned dev, const char *path)
{
    if (!watch_of(m))
        return;
    bool marked = false;
    for (size_t i = 0; i < m->nmarked && !marked; i++)
        marked = m->marked[i] == dev;
    if (!marked && m->nmarked < COUNTED_MAX) {
        m->marked[m->nmarked++] = dev; /* tried once, whatever the kernel says */
        (void)rt_fswatch_mark(m->watch, path);
    }
    size_t i = m->nw;
    if (i < m->nwpaths && strcmp(m->wpaths[i], path) == 0) {
        m->nw++;
        return;
    }
    char *copy = strdup(path);
    if (!copy)
        return;
    if (i < m->nwpaths)
        free(m->wpaths[i]);
    else
        m->nwpaths++;
    m->wpaths[i] = copy;
    m->nw++;
    m->wchanged = true;
}

static void job_mount(void *user, const rt_mountinfo_entry *e)
{
    rt_jobmounts *m = user;
    if (!memory_fs(e->fstype))
        return;
    unsigned dev = dev_of(e->major, e->minor);
    for (size_t i = 0; i < m->nown; i++)
        if (m->own_devs[i] == dev)
            return; /* the tracker's too (/dev/shm, /run): not the job's making */
    for (size_t i = 0; i < m->ncounted; i++)
        if (m->counted[i] == dev)
            return; /* mounted twice: counted once */
    if (m->ncounted == COUNTED_MAX)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/%lld/root%s", m->roots->proc, (long long)m->pid, e->mount_point);
    bool ok;
    bool ramfs = strcmp(e->fstype, "ramfs") == 0;
    uint64_t kib = ramfs ? ramfs_kib(path, &ok) : used_kib(path, &ok);
    if (!ok)
        return;
    m->counted[m->ncounted++] = dev;
    m->kib += kib;
    if (!ramfs)
        watch_mount(m, dev, path);
}

/* One /dev/shm listing: its directory, when tracking began, what the files written since hold,
 * and how many entries were looked at. */
typedef struct shm_walk {
    int fd;
    const struct timespec *start;
    uint64_t kib;
    int seen;
} shm_walk;

/* rt_dir_fn: a regular file of /dev/shm modified since tracking began counts its blocks. */
static int shm_file(void *user, const char *name, unsigned char d_type)
{
    shm_walk *w = user;
    (void)d_type;
    if (++w->seen > SHM_FILES_MAX)
        return 1;
    struct stat st;
    if (name[0] == '.' || fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
        return 0;
    if (st.st_mtim.tv_sec > w->start->tv_sec ||
        (st.st_mtim.tv_sec == w->start->tv_sec && st.st_mtim.tv_nsec >= w->start->tv_nsec))
        w->kib += (uint64_t)st.st_blocks / 2; /* 512-byte blocks */
    return 0;
}

/* What the files of /dev/shm written since tracking began hold (KiB, their blocks): files of
 * the job's, or another process's made meanwhile (the safe side). The library's one listing
 * loop (dirwalk.c: getdents64 into a stack buffer, nothing allocated at a walk). */
static uint64_t shm_new_kib(rt_jobmounts *m)
{
    int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    shm_walk w = {.fd = fd, .start = &m->start};
    (void)rt_dir_walk_fd(fd, shm_file, &w);
    close(fd);
    return w.kib;
}

uint64_t rt_jobmounts_kib(rt_jobmounts *m)
{
    if (!m)
        return 0;
    m->ncounted = 0;
    m->kib = 0;
    m->nw = 0;
    m->wchanged = false;
    for (size_t i = 0; i < m->nns; i++) {
        job_ns *ns = &m->ns[i];
        for (size_t k = 0; k < NS_PIDS; k++) {
            if (ns->pids[k] == 0)
                continue;
            char rel[64];
            snprintf(rel, sizeof rel, "%lld/mountinfo", (long long)ns->pids[k]);
            ssize_t n = ns_of(m, ns->pids[k]) == ns->ino ? read_mountinfo(m, rel) : -1;
            if (n < 0) {
                ns->pids[k] = 0; /* gone (or moved on): another of its processes reads it */
                continue;
            }
            m->pid = ns->pids[k];
            rt_mountinfo_parse(m->buf.data, (size_t)n, job_mount, m);
            break;
        }
    }
    if (m->watch) {
        /* the paths the watch reads from now on, and the most it read since the last walk: a
         * file written and removed in between */
        if (m->wchanged || m->nw != m->nwpaths) {
            for (size_t i = m->nw; i < m->nwpaths; i++)
                free(m->wpaths[i]);
            m->nwpaths = m->nw;
            watch_paths(m);
        }
        uint64_t peak = rt_fswatch_take_peak(m->watch, 0);
        if (peak > m->kib)
            m->kib = peak;
    }
    if (m->shm_base != UINT64_MAX) {
        /* the larger of its growth (files the job wrote to that were there before too) and its
         * files written since tracking began (what another process removed meanwhile cannot
         * hide them) */
        bool ok;
        uint64_t now = used_kib("/dev/shm", &ok), peak = m->watch_shm ? rt_fswatch_take_peak(m->watch, 1) : 0;
        if (!ok)
            now = 0;
        if (peak > now)
            now = peak; /* the most the watch read since the last walk: a file written and removed */
        uint64_t grown = now > m->shm_base ? now - m->shm_base : 0;
        uint64_t fresh = shm_new_kib(m);
        m->kib += grown > fresh ? grown : fresh;
    }
    return m->kib;
}

void rt_jobmounts_free(rt_jobmounts *m)
{
    if (!m)
        return;
    rt_fswatch_free(m->watch);
    for (size_t i = 0; i < m->nwpaths; i++)
        free(m->wpaths[i]);
    rt_buf_free(&m->buf);
    free(m);
}
