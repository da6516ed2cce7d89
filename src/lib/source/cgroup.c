/* cgroup.c - control groups: finding a process's group and reading one group's counters, limits
 * and pressure on v1, v2 and hybrid layouts (see cgroup.h). Every file is opened once when the
 * group is opened and re-read from offset 0 each sample; the parsers are in cgroup_parse.c. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cgroup.h"

/* Mount points under the machine's sysfs are looked up under the sys root (rt_roots): the
 * prefix mountinfo shows for them. */
static const char SYS_MOUNT_PREFIX[] = "/sys/";

/* The most levels (the group and its ancestors) whose limits are read. */
#define CG_DEPTH 16

/* Files read at every level from the group up to the mount's root, per hierarchy. */
enum { LV_0, LV_1, LV_2, LV_3, LV_4, LV_N };
#define V2_CPU_MAX LV_0
#define V2_CPU_STAT LV_1
#define V2_MEM_MAX LV_2
#define V2_MEM_HIGH LV_3
#define V2_PIDS_MAX LV_4
#define V1_CFS_QUOTA LV_0
#define V1_CPU_STAT LV_1
#define V1_CFS_PERIOD LV_2
#define V1_MEM_LIMIT LV_0
#define V1_PIDS_MAX LV_0
static const char *const level_files[RT_CG_NHIER][LV_N] = {
    [RT_CG_UNIFIED] = {"cpu.max", "cpu.stat", "memory.max", "memory.high", "pids.max"},
    [RT_CG_CPU] = {"cpu.cfs_quota_us", "cpu.stat", "cpu.cfs_period_us"},
    [RT_CG_MEMORY] = {"memory.limit_in_bytes"},
    [RT_CG_PIDS] = {"pids.max"},
};

/* Files of the group itself. */
enum {
    F_V2_MEM_CUR,
    F_V2_MEM_PEAK,
    F_V2_MEM_STAT,
    F_V2_MEM_EVENTS,
    F_V2_PIDS_CUR,
    F_V2_PIDS_PEAK,
    F_V2_IO,
    F_V2_PSI_CPU,
    F_V2_PSI_MEM,
    F_V2_PSI_IO, /* in RT_PSI_* order */
    F_ACCT_USAGE,
    F_ACCT_USER,
    F_ACCT_SYS,
    F_V1_MEM_USAGE,
    F_V1_MEM_PEAK,
    F_V1_MEM_STAT,
    F_V1_OOM,
    F_V1_FAILCNT,
    F_V1_BLKIO,
    F_V1_PIDS_CUR,
    F_V1_PIDS_PEAK,
    F_PROCS,
    F_N
};
static const struct {
    rt_cg_hier h;
    const char *name;
} own_files[F_PROCS] = {
    [F_V2_MEM_CUR] = {RT_CG_UNIFIED, "memory.current"},
    [F_V2_MEM_PEAK] = {RT_CG_UNIFIED, "memory.peak"},
    [F_V2_MEM_STAT] = {RT_CG_UNIFIED, "memory.stat"},
    [F_V2_MEM_EVENTS] = {RT_CG_UNIFIED, "memory.events"},
    [F_V2_PIDS_CUR] = {RT_CG_UNIFIED, "pids.current"},
    [F_V2_PIDS_PEAK] = {RT_CG_UNIFIED, "pids.peak"},
    [F_V2_IO] = {RT_CG_UNIFIED, "io.stat"},
    [F_V2_PSI_CPU] = {RT_CG_UNIFIED, "cpu.pressure"},
    [F_V2_PSI_MEM] = {RT_CG_UNIFIED, "memory.pressure"},
    [F_V2_PSI_IO] = {RT_CG_UNIFIED, "io.pressure"},
    [F_ACCT_USAGE] = {RT_CG_CPUACCT, "cpuacct.usage"},
    [F_ACCT_USER] = {RT_CG_CPUACCT, "cpuacct.usage_user"},
    [F_ACCT_SYS] = {RT_CG_CPUACCT, "cpuacct.usage_sys"},
    [F_V1_MEM_USAGE] = {RT_CG_MEMORY, "memory.usage_in_bytes"},
    [F_V1_MEM_PEAK] = {RT_CG_MEMORY, "memory.max_usage_in_bytes"},
    [F_V1_MEM_STAT] = {RT_CG_MEMORY, "memory.stat"},
    [F_V1_OOM] = {RT_CG_MEMORY, "memory.oom_control"},
    [F_V1_FAILCNT] = {RT_CG_MEMORY, "memory.failcnt"},
    [F_V1_BLKIO] = {RT_CG_BLKIO, NULL}, /* the first of blkio_files */
    [F_V1_PIDS_CUR] = {RT_CG_PIDS, "pids.current"},
    [F_V1_PIDS_PEAK] = {RT_CG_PIDS, "pids.peak"},
};
static const char *const blkio_files[] = {"blkio.throttle.io_service_bytes_recursive",
                                          "blkio.io_service_bytes_recursive", "blkio.throttle.io_service_bytes",
                                          "blkio.io_service_bytes"};

struct rt_cg_group {
    bool in[RT_CG_NHIER];
    bool no_mem_stat;                    /* memory.stat is not read (rt_cg_group_read_memory_stat) */
    int depth[RT_CG_NHIER];              /* levels open: the group, then its ancestors */
    int lv[RT_CG_NHIER][CG_DEPTH][LV_N]; /* level files, -1 where absent */
    int f[F_N];                          /* the group's own files, -1 where absent */
    char path[RT_CG_PATH_MAX];
    const char *version;
    rt_cg_devs disks;            /* the disks whose I/O counts (none found: every device's) */
    int more_procs[RT_CG_NHIER]; /* cgroup.procs of each other path the group has (v1 groups
                                  * of another path than the first hierarchy's), -1 */
    int nmore;
    /* the limits as last read (rt_cg_group_read_at re-reads them once a second) */
    bool have_limits;
    double limits_mono;
    int quota_h, quota_l; /* the level holding the tightest quota; quota_h -1: none */
    uint64_t quota_usec, period_usec, mem_limit, mem_high;
    uint64_t pids_limit;
    /* memory.stat as last read (rt_cg_group_read_at reads it again only when the charge or its
     * peak moved, or RT_CG_MEMSTAT_MAX_AGE_SECS passed): the charge and peak it was read at, and
     * what it said */
    bool have_mem_stat;
    double mem_stat_mono;
    uint64_t mem_stat_charge, mem_stat_peak;
    uint64_t mem_stat_read, mem_stat_stall; /* the storage reads and the memory pressure's total
                                             * then (RT_NULL_U64: not known, not compared) */
    rt_cg_memstat mem_stat;
    long page_size; /* what a refault counts, in bytes */
};

/* ---- locating a group ------------------------------------------------------------------------ */

/* The path of group path relative to the mount of hierarchy h ("" for its root), or NULL when
 * the group lies outside the mount. Sets *depth to its number of components. */
static const char *rel_path(const rt_cg_mounts *m, rt_cg_hier h, const char *path, int *depth)
{
    const char *root = m->root[h];
    size_t rl = strlen(root);
    while (rl > 0 && root[rl - 1] == '/')
        rl--;
    if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
        return NULL;
    const char *rel = path + rl;
    while (*rel == '/')
        rel++;
    int d = 0;
    for (const char *c = rel; *c;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if ((n == 2 && c[0] == '.' && c[1] == '.') || (n == 1 && c[0] == '.'))
            return NULL; /* above the mount (another cgroup namespace) */
        d += n > 0;
        c += n;
        while (*c == '/')
            c++;
    }
    *depth = d;
    return rel;
}

/* As rt_cg_open_dir, also giving the group's depth below the mount's root. */
static int open_dir_depth(const rt_roots *roots, const rt_cg_mounts *m, rt_cg_hier h, const char *path, int *depth)
{
    const char *dir = m->dir[h];
    size_t pl = sizeof SYS_MOUNT_PREFIX - 1;
    if (!dir[0])
        return -ENOENT;
    if (roots->sys_fd < 0 || strncmp(dir, SYS_MOUNT_PREFIX, pl) != 0)
        return -EXDEV;
    const char *rel = rel_path(m, h, path, depth);
    if (!rel)
        return -EXDEV;
    char full[2 * RT_CG_PATH_MAX];
    if (!rt_pathf(full, sizeof full, "%s%s%s", dir + pl, *rel ? "/" : "", rel))
        return -ENAMETOOLONG;
    int fd;
    do {
        fd = openat(roots->sys_fd, full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : fd;
}

int rt_cg_open_dir(const rt_roots *roots, const rt_cg_mounts *mounts, rt_cg_hier h, const char *path)
{
    int depth;
    return open_dir_depth(roots, mounts, h, path, &depth);
}

ssize_t rt_cg_read_file(int dirfd, const char *rel, rt_buf *b)
{
    int fd = rt_open_at(dirfd, rel);
    if (fd < 0)
        return fd;
    ssize_t n = rt_read_fd_grow(fd, b, RT_READ_TO_EOF);
    close(fd);
    return n;
}

int rt_cg_locate(const rt_roots *roots, int64_t pid, rt_cg_mounts *mounts, rt_cg_paths *paths)
{
    char rel[64];
    rt_buf b;
    rt_buf_init(&b, 4u << 20);
    ssize_t n = rt_cg_read_file(roots->proc_fd, "self/mountinfo", &b);
    if (n >= 0)
        rt_cg_mounts_parse(b.data, (size_t)n, mounts);
    if (n >= 0 && !(pid > 0 ? rt_pathf(rel, sizeof rel, "%lld/cgroup", (long long)pid)
                            : rt_copy_str(rel, sizeof rel, "self/cgroup")))
        n = -EINVAL;
    if (n >= 0)
        n = rt_cg_read_file(roots->proc_fd, rel, &b);
    if (n >= 0 && rt_cg_paths_parse(b.data, (size_t)n, paths) < 0)
        n = -EINVAL;
    rt_buf_free(&b);
    if (n < 0)
        return (int)n;
    int found = 0;
    for (int h = 0; h < RT_CG_NHIER; h++)
        found += paths->has[h] && mounts->dir[h][0];
    return found;
}

/* ---- opening a group -------------------------------------------------------------------------- */

/* What could not be kept open for want of descriptors while a group was opened: said once,
 * as one warning, when the group is open. */
typedef struct shortfall {
    int own, levels;  /* the group's own files, and its and its ancestors' limit files */
    char names[320];  /* the own files as HIER/NAME, comma-separated (cut short with "...") */
    const char *hier; /* the hierarchy whose files are being opened (its mount's last name) */
} shortfall;

/* Counts in sf a file that could not be kept open: by name (HIER/NAME) when own is true. */
static void short_of(shortfall *sf, const char *name, bool own)
{
    if (!own) {
        sf->levels++;
    } else if (sf->own++ < 6) {
        size_t n = strlen(sf->names);
        (void)rt_pathf(sf->names + n, sizeof sf->names - n, "%s%s/%s", n ? ", " : "", sf->hier, name);
    }
}

/* Opens name in dirfd read-only to be kept; -1 when it cannot be, or when keeping it would eat
 * into the descriptors left to the rest (rt_fds_keep_below: the figure is then null, and the
 * file is counted in sf); *short_now (if given) tells which. */
static int open_file(int dirfd, const char *name, shortfall *sf, bool own, bool *short_now)
{
    int fd = rt_open_keep(dirfd, name);
    bool s = fd == -EMFILE || fd == -ENFILE;
    if (s)
        short_of(sf, name, own);
    if (short_now)
        *short_now = s;
    return fd < 0 ? -1 : fd;
}

/* The own files kept first, in this order: those a run is judged by (memory's peak and charge,
 * tasks' peak and count, CPU time), before the rest (pressure, events, I/O, members). V2's
 * cpu.stat (kept as its level 0's) comes before them all, and cpuacct's only without it. */
static const int first_kept[] = {F_V2_MEM_PEAK,  F_V1_MEM_PEAK, F_V2_MEM_CUR,  F_V1_MEM_USAGE, F_V2_PIDS_PEAK,
                                 F_V1_PIDS_PEAK, F_V2_PIDS_CUR, F_V1_PIDS_CUR, F_ACCT_USAGE};

/* Whether own file i is read at all: cpuacct's files are read only when v2's cpu.stat is not
 * there (the unified tree has it even without controllers). */
static bool own_read(const rt_cg_group *g, int i)
{
    return own_files[i].h != RT_CG_CPUACCT || g->lv[RT_CG_UNIFIED][0][V2_CPU_STAT] < 0;
}

/* Opens own file i (in its hierarchy's directory dfd) to be kept; blkio's under the first name
 * that is there. */
static void open_own(rt_cg_group *g, int i, int dfd, shortfall *sf)
{
    if (own_files[i].name) {
        g->f[i] = open_file(dfd, own_files[i].name, sf, true, NULL);
        return;
    }
    bool s = false; /* short of descriptors: the other names are not tried */
    for (size_t k = 0; g->f[i] < 0 && !s && k < RT_ARRAY_LEN(blkio_files); k++)
        g->f[i] = open_file(dfd, blkio_files[k], sf, true, &s);
}

/* Opens the group's own files in hierarchy h (its directory dfd) not among first_kept (v1's
 * cpu.stat too, kept as its level 0's), and its cgroup.procs (a second one when more is true:
 * the members of another path). */
static void open_rest(rt_cg_group *g, rt_cg_hier h, int dfd, bool more, shortfall *sf)
{
    if (h != RT_CG_UNIFIED && level_files[h][LV_1])
        g->lv[h][0][LV_1] = open_file(dfd, level_files[h][LV_1], sf, true, NULL);
    for (int i = 0; i < F_PROCS; i++) {
        bool first = false;
        for (size_t k = 0; k < RT_ARRAY_LEN(first_kept) && !first; k++)
            first = first_kept[k] == i;
        if (own_files[i].h == h && !first && own_read(g, i))
            open_own(g, i, dfd, sf);
    }
    if (g->f[F_PROCS] < 0)
        g->f[F_PROCS] = open_file(dfd, "cgroup.procs", sf, true, NULL);
    if (more)
        g->more_procs[g->nmore++] = open_file(dfd, "cgroup.procs", sf, true, NULL);
}

/* Opens the group's directory in hierarchy h for one pass of opening its files (its depth
 * below the mount into *depth); -errno when it cannot be, counted in sf when short of
 * descriptors (as an own file when own is true, else as a limit file). */
static int pass_dir(const rt_roots *roots, const rt_cg_mounts *mounts, const rt_cg_paths *paths, int h, int *depth,
                    bool own, shortfall *sf)
{
    const char *slash = strrchr(mounts->dir[h], '/');
    sf->hier = slash ? slash + 1 : mounts->dir[h];
    int dfd = open_dir_depth(roots, mounts, (rt_cg_hier)h, paths->path[h], depth);
    if (dfd == -EMFILE || dfd == -ENFILE)
        short_of(sf, "*", own);
    return dfd;
}

/* Opens the limit files of the group and its ancestors in hierarchy h (the group's directory
 * dfd, depth levels below the mount). With top false the mount's root is the hierarchy's
 * root, which holds no limit (the kernel offers none there, or one always unlimited): its
 * level is left out, unless it is the group. */
static void open_levels(rt_cg_group *g, rt_cg_hier h, int dfd, int depth, bool top, shortfall *sf)
{
    int dirs[CG_DEPTH];
    int n = 1, levels = top || depth == 0 ? depth + 1 : depth;
    dirs[0] = dfd;
    for (; n < CG_DEPTH && n < levels; n++) {
        int up;
        do {
            up = openat(dirs[n - 1], "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        } while (up < 0 && errno == EINTR);
        if (up < 0) {
            if (errno == EMFILE || errno == ENFILE) /* the levels above: none read */
                for (int k = 0; k < LV_N; k++)
                    sf->levels += level_files[h][k] ? levels - n : 0;
            break;
        }
        dirs[n] = up;
    }
    g->depth[h] = n;
    for (int l = 0; l < n; l++)
        for (int k = 0; k < LV_N; k++)
            if (l > 0 || k != LV_1) /* the group's cpu.stat: opened with its own files */
                g->lv[h][l][k] = level_files[h][k] ? open_file(dirs[l], level_files[h][k], sf, false, NULL) : -1;
    for (int l = 1; l < n; l++)
        close(dirs[l]);
}

/* The open files limit at which sf would have been kept too: the soft limit now, raised until
 * rt_fds_keep_below leaves room for every file missed (the headroom grows with the limit). */
static long long limit_for(const shortfall *sf, long long soft)
{
    long long want = soft, room = (long long)rt_fds_keep_below_at(soft) + sf->own + sf->levels;
    while (want < INT_MAX / 2 && rt_fds_keep_below_at(want) < room)
        want++;
    return want;
}

/* Says, once for the group, what it could not keep open and so never reads (sf not empty). */
static void say_shortfall(const rt_cg_group *g, const shortfall *sf, const rt_logger *log)
{
    struct rlimit rl;
    char limit[96] = "";
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= 16 &&
        rl.rlim_cur < INT_MAX / 2)
        (void)rt_pathf(limit, sizeof limit, " %lld: it takes %lld at least", (long long)rl.rlim_cur,
                       limit_for(sf, (long long)rl.rlim_cur));
    char levels[96] = "";
    if (sf->levels)
        (void)rt_pathf(levels, sizeof levels, "%s%d limit file%s of the group and its ancestors",
                       sf->own ? ", and " : "", sf->levels, sf->levels == 1 ? "" : "s");
    bool one = sf->own + sf->levels == 1;
    rt_log(log, RT_LOG_WARN,
           "cgroup %s: too few file descriptors to keep open %s%s%s (the open files limit%s): what %s hold%s is "
           "null for the whole run (raise the hard limit: the tracker takes its soft one up to it)",
           g->path, sf->names, sf->own > 6 ? ", ..." : "", levels, limit, one ? "it" : "they", one ? "s" : "");
}

rt_cg_group *rt_cg_group_open(const rt_roots *roots, const rt_cg_mounts *mounts, const rt_cg_paths *paths,
                              const rt_logger *log)
{
    rt_cg_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    memset(g->lv, 0xff, sizeof g->lv); /* -1 everywhere */
    memset(g->f, 0xff, sizeof g->f);
    g->mem_stat_read = g->mem_stat_stall = RT_NULL_U64;
    g->page_size = sysconf(_SC_PAGESIZE);
    int open_count = 0, v1 = 0;
    const char *first = NULL;
    /* the group's own files first (read every sample: v2's cpu.stat, first_kept, then the
     * rest), then the limits (read every few seconds): under a low open files limit, the first
     * to be kept are those read first. The directories are opened again for each pass, one at a
     * time (at startup only), leaving the files kept the lowest descriptors */
    int depth[RT_CG_NHIER];
    bool more[RT_CG_NHIER];
    shortfall sf = {0};
    for (int h = 0; h < RT_CG_NHIER; h++) {
        if (!paths->has[h] || !mounts->dir[h][0])
            continue;
        int dfd = pass_dir(roots, mounts, paths, h, &depth[h], true, &sf);
        if (dfd < 0) {
            rt_log(log, RT_LOG_DEBUG, "cgroup: %s%s: %s", mounts->dir[h], paths->path[h], strerror(-dfd));
            continue;
        }
        bool seen = !first;
        for (int k = 0; k < h && !seen; k++)
            seen = g->in[k] && strcmp(paths->path[k], paths->path[h]) == 0;
        more[h] = !seen;
        g->in[h] = true;
        open_count++;
        v1 += h != RT_CG_UNIFIED;
        if (!first)
            first = paths->path[h];
        if (h == RT_CG_UNIFIED)
            g->lv[h][0][V2_CPU_STAT] = open_file(dfd, level_files[h][V2_CPU_STAT], &sf, true, NULL);
        close(dfd);
    }
    for (size_t k = 0; k < RT_ARRAY_LEN(first_kept); k++) {
        int i = first_kept[k], h = (int)own_files[i].h, dfd;
        if (g->in[h] && own_read(g, i) && (dfd = pass_dir(roots, mounts, paths, h, &depth[h], true, &sf)) >= 0) {
            open_own(g, i, dfd, &sf);
            close(dfd);
        }
    }
    for (int h = 0, dfd; h < RT_CG_NHIER; h++)
        if (g->in[h] && (dfd = pass_dir(roots, mounts, paths, h, &depth[h], true, &sf)) >= 0) {
            open_rest(g, (rt_cg_hier)h, dfd, more[h], &sf);
            close(dfd);
        }
    for (int h = 0, dfd; h < RT_CG_NHIER; h++)
        if (g->in[h] && (dfd = pass_dir(roots, mounts, paths, h, &depth[h], false, &sf)) >= 0) {
            const char *root = mounts->root[h];
            open_levels(g, (rt_cg_hier)h, dfd, depth[h], !(root[0] == '/' && root[1] == '\0'), &sf);
            close(dfd);
        }
    if (!open_count) {
        rt_log(log, RT_LOG_DEBUG, "cgroup: no group of the process could be opened");
        free(g);
        return NULL;
    }
    const char *path = g->in[RT_CG_UNIFIED]  ? paths->path[RT_CG_UNIFIED]
                       : g->in[RT_CG_MEMORY] ? paths->path[RT_CG_MEMORY]
                                             : first;
    rt_copy_str(g->path, sizeof g->path, path);
    g->version = !v1 ? "v2" : g->in[RT_CG_UNIFIED] ? "hybrid" : "v1";
    rt_cg_disks(roots, &g->disks);
    if (sf.own || sf.levels)
        say_shortfall(g, &sf, log);
    return g;
}

rt_cg_group *rt_cg_group_of_pid(const rt_roots *roots, int64_t pid, const rt_logger *log)
{
    rt_cg_mounts *m = malloc(sizeof *m);
    rt_cg_paths *p = malloc(sizeof *p);
    rt_cg_group *g = NULL;
    if (m && p) {
        int n = rt_cg_locate(roots, pid, m, p);
        if (n > 0)
            g = rt_cg_group_open(roots, m, p, log);
        else
            rt_log(log, RT_LOG_DEBUG, "cgroup: process %lld: %s", (long long)pid,
                   n < 0 ? strerror(-n) : "no group in a mounted hierarchy");
    }
    free(m);
    free(p);
    return g;
}

size_t rt_cg_disks(const rt_roots *roots, rt_cg_devs *out)
{
    out->n = 0;
    int bfd = roots->sys_fd < 0 ? -1 : openat(roots->sys_fd, "block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = bfd >= 0 ? fdopendir(bfd) : NULL;
    if (!d) {
        if (bfd >= 0)
            close(bfd);
        return 0;
    }
    struct dirent *e;
    while (out->n < RT_CG_MAX_DISKS && (e = readdir(d)) != NULL) {
        char rel[300], dev[64];
        const char *p, *end;
        uint64_t ma, mi;
        if (e->d_name[0] == '.' || !rt_pathf(rel, sizeof rel, "%s/device", e->d_name) ||
            faccessat(bfd, rel, F_OK, 0) != 0 || !rt_pathf(rel, sizeof rel, "%s/dev", e->d_name) ||
            rt_read_line_at(bfd, rel, dev, sizeof dev) <= 0)
            continue;
        p = dev;
        end = dev + strlen(dev);
        if (!rt_parse_u64(&p, end, &ma) || p >= end || *p++ != ':' || !rt_parse_u64(&p, end, &mi) || p != end ||
            ma > UINT32_MAX || mi > UINT32_MAX)
            continue;
        out->dev[out->n++] = ma << 32 | mi;
    }
    closedir(d);
    return out->n;
}

/* ---- reading ------------------------------------------------------------------------------------ */

/* Reads the file fd whole into b; false when absent or unreadable. */
static bool rd(int fd, rt_buf *b)
{
    return fd >= 0 && rt_read_fd_grow(fd, b, RT_READ_SINGLE) >= 0;
}

/* The value of a single-value file (a limit: none as RT_NULL_U64); RT_NULL_U64 without one. */
static uint64_t rd_limit(int fd, rt_buf *b)
{
    uint64_t v;
    return rd(fd, b) && rt_cg_parse_limit(b->data, b->len, &v) == 0 ? v : RT_NULL_U64;
}

/* The value of key in the keyed file fd; RT_NULL_U64 without one. */
static uint64_t rd_key(int fd, rt_buf *b, const char *key)
{
    uint64_t v;
    return rd(fd, b) && rt_cg_keyed_u64(b->data, b->len, key, &v) == 0 ? v : RT_NULL_U64;
}

static uint64_t key_or_null(const rt_buf *b, const char *key)
{
    uint64_t v;
    return rt_cg_keyed_u64(b->data, b->len, key, &v) == 0 ? v : RT_NULL_U64;
}

static uint64_t times_1000(uint64_t v)
{
    return v == RT_NULL_U64 || v > UINT64_MAX / 1000 ? RT_NULL_U64 : v * 1000;
}

static uint64_t div_1000(uint64_t v)
{
    return v == RT_NULL_U64 ? v : v / 1000;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b; /* RT_NULL_U64 (none) is the largest */
}

static int64_t to_i64(uint64_t v)
{
    return v == RT_NULL_U64 || v > INT64_MAX ? RT_NULL_I64 : (int64_t)v;
}

/* Throttling figures of a cpu.stat in b (v2: throttled_usec; v1: throttled_time in ns). */
typedef struct throttle {
    uint64_t periods, throttled, usec;
} throttle;

static throttle parse_throttle(const rt_buf *b, bool v2)
{
    throttle t = {key_or_null(b, "nr_periods"), key_or_null(b, "nr_throttled"),
                  v2 ? key_or_null(b, "throttled_usec") : div_1000(key_or_null(b, "throttled_time"))};
    return t;
}

static throttle no_throttle(void)
{
    throttle t = {RT_NULL_U64, RT_NULL_U64, RT_NULL_U64};
    return t;
}

/* The tightest CPU quota of the group and its ancestors (v2 cpu.max, v1 cfs quota/period),
 * kept in g with the level that holds it. */
static void find_quota(rt_cg_group *g, rt_buf *buf)
{
    double best = INFINITY;
    g->quota_h = -1;
    g->quota_l = 0;
    g->quota_usec = g->period_usec = RT_NULL_U64;
    for (int h = RT_CG_UNIFIED; h <= RT_CG_CPU; h++) {
        for (int l = 0; g->in[h] && l < g->depth[h]; l++) {
            const int *lv = g->lv[h][l];
            uint64_t quota = RT_NULL_U64, period = RT_NULL_U64;
            if (h == RT_CG_UNIFIED) {
                if (!rd(lv[V2_CPU_MAX], buf) || rt_cg_parse_cpu_max(buf->data, buf->len, &quota, &period) < 0)
                    continue;
            } else {
                quota = rd_limit(lv[V1_CFS_QUOTA], buf);
                period = quota == RT_NULL_U64 ? quota : rd_limit(lv[V1_CFS_PERIOD], buf);
            }
            if (quota == RT_NULL_U64 || period == RT_NULL_U64 || period == 0)
                continue;
            double cores = (double)quota / (double)period;
            if (cores < best) {
                best = cores;
                g->quota_h = h;
                g->quota_l = l;
                g->quota_usec = quota;
                g->period_usec = period;
            }
        }
    }
}

/* The throttling of the group holding the quota (the group's own without a quota). */
static void read_throttle(rt_cg_group *g, rt_buf *buf, const throttle *own_v2, rt_cg_reading *out)
{
    int h = g->quota_h, l = g->quota_l;
    throttle t = no_throttle();
    if (h == RT_CG_UNIFIED && l == 0)
        t = *own_v2;
    else if (h >= 0 && rd(g->lv[h][l][h == RT_CG_UNIFIED ? V2_CPU_STAT : V1_CPU_STAT], buf))
        t = parse_throttle(buf, h == RT_CG_UNIFIED);
    else if (h < 0 && own_v2->periods != RT_NULL_U64)
        t = *own_v2;
    else if (h < 0 && g->in[RT_CG_CPU] && rd(g->lv[RT_CG_CPU][0][V1_CPU_STAT], buf))
        t = parse_throttle(buf, false);
    out->cpu_periods = t.periods;
    out->cpu_throttled_periods = t.throttled;
    out->cpu_throttled_usec = t.usec;
}

/* The smallest limit in file k of every level of hierarchy h. */
static uint64_t min_limit(rt_cg_group *g, rt_buf *buf, rt_cg_hier h, int k)
{
    uint64_t v = RT_NULL_U64;
    for (int l = 0; g->in[h] && l < g->depth[h]; l++)
        v = min_u64(v, rd_limit(g->lv[h][l][k], buf));
    return v;
}

/* The first of v2 file a (or v1 file b) that reads as a single value. */
static uint64_t first_value(rt_cg_group *g, rt_buf *buf, int a, int b)
{
    uint64_t v = rd_limit(g->f[a], buf);
    return v != RT_NULL_U64 ? v : rd_limit(g->f[b], buf);
}

/* Re-reads the limits of the group and its ancestors into g. */
static void read_limits(rt_cg_group *g, rt_buf *buf)
{
    find_quota(g, buf);
    g->mem_limit = min_u64(min_limit(g, buf, RT_CG_UNIFIED, V2_MEM_MAX), min_limit(g, buf, RT_CG_MEMORY, V1_MEM_LIMIT));
    g->mem_high = min_limit(g, buf, RT_CG_UNIFIED, V2_MEM_HIGH);
    g->pids_limit = min_u64(min_limit(g, buf, RT_CG_UNIFIED, V2_PIDS_MAX), min_limit(g, buf, RT_CG_PIDS, V1_PIDS_MAX));
}

/* memory.stat not read. */
static const rt_cg_memstat NO_MEMSTAT = {RT_NULL_U64, RT_NULL_U64, RT_NULL_U64, RT_NULL_U64, RT_NULL_U64};

/* Whether counter now (RT_NULL_U64: not read this time) moved from then (RT_NULL_U64: not
 * known then): a counter not read now is not compared. */
static bool counter_moved(uint64_t now, uint64_t then)
{
    return now != RT_NULL_U64 && now != then;
}

/* memory.stat's reclaimable memory, kinds and refaults into out (whose charge and peak are
 * read; read_io, stall: its storage read bytes and its memory pressure's some total, or
 * RT_NULL_U64 when not read this time): read again when the charge, its peak or those counters
 * moved since it last was, RT_CG_MEMSTAT_MAX_AGE_SECS passed, time went back or is not told
 * (mono NaN); else what it said then. A group whose charge holds to the byte (the kernel
 * charges in batches of pages) is one whose memory did not grow or shrink; at its limit it may
 * hold while it evicts and reads back its files, which its reads and stalls show; what its
 * kinds may trade among themselves meanwhile shows within the age. */
static void read_memory_stat(rt_cg_group *g, rt_buf *buf, double mono, uint64_t read_io, uint64_t stall,
                             rt_cg_reading *out)
{
    if (g->no_mem_stat)
        return;
    if (g->have_mem_stat && !isnan(mono) && mono >= g->mem_stat_mono &&
        mono - g->mem_stat_mono < RT_CG_MEMSTAT_MAX_AGE_SECS && out->memory_bytes != RT_NULL_U64 &&
        out->memory_bytes == g->mem_stat_charge && out->memory_peak_bytes == g->mem_stat_peak &&
        !counter_moved(read_io, g->mem_stat_read) && !counter_moved(stall, g->mem_stat_stall)) {
        out->memory_stat = g->mem_stat;
        return;
    }
    g->have_mem_stat = false;
    uint64_t reclaimable;
    if (!rd(g->f[F_V2_MEM_STAT], buf) && !rd(g->f[F_V1_MEM_STAT], buf))
        return;
    if (rt_cg_parse_memory_stat(buf->data, buf->len, &reclaimable) == 0)
        out->memory_stat.reclaimable_bytes = reclaimable;
    rt_cg_parse_memory_kinds(buf->data, buf->len, &out->memory_stat.anon_bytes, &out->memory_stat.file_bytes,
                             &out->memory_stat.shmem_bytes);
    uint64_t pages;
    if (rt_cg_parse_memory_refault(buf->data, buf->len, &pages) == 0 && g->page_size > 0 &&
        pages <= UINT64_MAX / (uint64_t)g->page_size)
        out->memory_stat.refault_file_bytes = pages * (uint64_t)g->page_size;
    g->have_mem_stat = !isnan(mono);
    g->mem_stat_mono = mono;
    g->mem_stat_charge = out->memory_bytes;
    g->mem_stat_peak = out->memory_peak_bytes;
    if (read_io != RT_NULL_U64)
        g->mem_stat_read = read_io;
    if (stall != RT_NULL_U64)
        g->mem_stat_stall = stall;
    g->mem_stat = out->memory_stat;
}

void rt_cg_group_read(rt_cg_group *g, rt_buf *buf, rt_cg_reading *out)
{
    rt_cg_group_read_at(g, buf, NAN, out);
}

void rt_cg_group_read_at(rt_cg_group *g, rt_buf *buf, double mono, rt_cg_reading *out)
{
    if (!g->have_limits || isnan(mono) || mono < g->limits_mono || mono - g->limits_mono >= RT_CG_LIMITS_EVERY_SECS) {
        read_limits(g, buf);
        g->have_limits = true;
        g->limits_mono = isnan(mono) ? 0 : mono;
    }
    out->cpu_usage_ns = out->cpu_user_ns = out->cpu_system_ns = RT_NULL_U64;
    out->io_read_bytes = out->io_write_bytes = RT_NULL_U64;
    out->memory_bytes = out->memory_peak_bytes = RT_NULL_U64;
    out->memory_stat = NO_MEMSTAT;
    out->pids = out->pids_peak = out->pids_limit = RT_NULL_I64;
    out->cpu_quota_usec = out->cpu_period_usec = RT_NULL_U64;
    out->memory_limit_bytes = out->memory_high_bytes = RT_NULL_U64;
    out->cpu_periods = out->cpu_throttled_periods = out->cpu_throttled_usec = RT_NULL_U64;
    out->oom_kills = out->memory_max_events = RT_NULL_U64;
    for (int i = 0; i < RT_PSI_N; i++)
        rt_cg_parse_pressure("", 0, &out->psi[i]);

    /* CPU time: v2 cpu.stat (the unified tree has it even without controllers), else cpuacct */
    throttle own_v2 = no_throttle();
    if (g->in[RT_CG_UNIFIED] && rd(g->lv[RT_CG_UNIFIED][0][V2_CPU_STAT], buf)) {
        out->cpu_usage_ns = times_1000(key_or_null(buf, "usage_usec"));
        out->cpu_user_ns = times_1000(key_or_null(buf, "user_usec"));
        out->cpu_system_ns = times_1000(key_or_null(buf, "system_usec"));
        own_v2 = parse_throttle(buf, true);
    }
    if (out->cpu_usage_ns == RT_NULL_U64) {
        out->cpu_usage_ns = rd_limit(g->f[F_ACCT_USAGE], buf);
        out->cpu_user_ns = rd_limit(g->f[F_ACCT_USER], buf);
        out->cpu_system_ns = rd_limit(g->f[F_ACCT_SYS], buf);
    }
    out->cpu_quota_usec = g->quota_usec;
    out->cpu_period_usec = g->period_usec;
    read_throttle(g, buf, &own_v2, out);

    /* memory */
    out->memory_bytes = first_value(g, buf, F_V2_MEM_CUR, F_V1_MEM_USAGE);
    out->memory_peak_bytes = first_value(g, buf, F_V2_MEM_PEAK, F_V1_MEM_PEAK);
    out->memory_limit_bytes = g->mem_limit;
    out->memory_high_bytes = g->mem_high;
    if (rd(g->f[F_V2_MEM_EVENTS], buf)) {
        out->oom_kills = key_or_null(buf, "oom_kill");
        out->memory_max_events = key_or_null(buf, "max");
    } else {
        out->oom_kills = rd_key(g->f[F_V1_OOM], buf, "oom_kill");
        out->memory_max_events = rd_limit(g->f[F_V1_FAILCNT], buf);
    }

    /* tasks */
    out->pids = to_i64(first_value(g, buf, F_V2_PIDS_CUR, F_V1_PIDS_CUR));
    out->pids_peak = to_i64(first_value(g, buf, F_V2_PIDS_PEAK, F_V1_PIDS_PEAK));
    out->pids_limit = to_i64(g->pids_limit);

    /* storage I/O */
    uint64_t r, w;
    if (rd(g->f[F_V2_IO], buf) && rt_cg_parse_io_stat_on(buf->data, buf->len, &g->disks, &r, &w) == 0) {
        out->io_read_bytes = r;
        out->io_write_bytes = w;
    } else if (rd(g->f[F_V1_BLKIO], buf) && rt_cg_parse_blkio_on(buf->data, buf->len, &g->disks, &r, &w) == 0) {
        out->io_read_bytes = r;
        out->io_write_bytes = w;
    }

    /* pressure */
    for (int i = 0; i < RT_PSI_N; i++)
        if (rd(g->f[F_V2_PSI_CPU + i], buf))
            rt_cg_parse_pressure(buf->data, buf->len, &out->psi[i]);

    /* memory.stat last: whether it is read again follows the reads and the stalls */
    const rt_cg_psi_raw *mem = &out->psi[RT_PSI_MEMORY];
    read_memory_stat(g, buf, mono, out->io_read_bytes, mem->has_some ? mem->some_total_usec : RT_NULL_U64, out);
}

void rt_cg_group_read_memory(rt_cg_group *g, rt_buf *buf, double mono, rt_cg_reading *out)
{
    out->memory_stat = NO_MEMSTAT;
    out->memory_bytes = first_value(g, buf, F_V2_MEM_CUR, F_V1_MEM_USAGE);
    out->memory_peak_bytes = first_value(g, buf, F_V2_MEM_PEAK, F_V1_MEM_PEAK);
    read_memory_stat(g, buf, mono, RT_NULL_U64, RT_NULL_U64, out);
}

uint64_t rt_cg_group_read_cpu(rt_cg_group *g, rt_buf *buf)
{
    uint64_t ns = RT_NULL_U64;
    if (g->in[RT_CG_UNIFIED] && rd(g->lv[RT_CG_UNIFIED][0][V2_CPU_STAT], buf))
        ns = times_1000(key_or_null(buf, "usage_usec"));
    if (ns == RT_NULL_U64)
        ns = rd_limit(g->f[F_ACCT_USAGE], buf);
    return ns;
}

long rt_cg_group_procs(rt_cg_group *g, rt_buf *buf, int64_t *out, size_t cap)
{
    return rt_cg_group_procs_at(g, 0, buf, out, cap);
}

const char *rt_cg_group_path(const rt_cg_group *g)
{
    return g->path;
}

const char *rt_cg_group_version(const rt_cg_group *g)
{
    return g->version;
}

int rt_cg_group_memberships(const rt_cg_group *g)
{
    return 1 + g->nmore;
}

long rt_cg_group_procs_at(rt_cg_group *g, int k, rt_buf *buf, int64_t *out, size_t cap)
{
    int fd = k == 0 ? g->f[F_PROCS] : k <= g->nmore ? g->more_procs[k - 1] : -1;
    if (fd < 0 || rt_read_fd_grow(fd, buf, RT_READ_TO_EOF) < 0)
        return -1;
    return rt_cg_parse_procs(buf->data, buf->len, out, cap);
}

void rt_cg_group_read_memory_stat(rt_cg_group *g, bool on)
{
    if (g->no_mem_stat == on)
        g->have_mem_stat = false; /* turned on or off: nothing kept holds */
    g->no_mem_stat = !on;
}

void rt_cg_group_free(rt_cg_group *g)
{
    if (!g)
        return;
    for (int h = 0; h < RT_CG_NHIER; h++)
        for (int l = 0; l < g->depth[h]; l++)
            for (int k = 0; k < LV_N; k++)
                rt_close(&g->lv[h][l][k]);
    for (int i = 0; i < F_N; i++)
        rt_close(&g->f[i]);
    for (int k = 0; k < g->nmore; k++)
        rt_close(&g->more_procs[k]);
    free(g);
}
