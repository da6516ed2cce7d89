/* sqlite_fs.c - whether an SQLite database file lies on a network file system
 * (resource_tracker/sqlite.h: rt_sqlite_network_fs), where SQLite's own documentation says its
 * file locking is not to be trusted: the file system of the longest mount point of the mount
 * table that holds the file (or the nearest directory above it that is there), and statfs's
 * f_type. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/core.h"
#include "resource_tracker.h"
#include "source/sources.h"

/* The network file systems' types as the mount table names them. */
static const char *const net_types[] = {"nfs",       "nfs4",     "cifs",          "smb3",        "smbfs",
                                        "lustre",    "gpfs",     "9p",            "ceph",        "fuse.ceph",
                                        "fuse.sshfs", "sshfs",   "afs",           "glusterfs",   "fuse.glusterfs",
                                        "beegfs",    "panfs",    "pvfs2",         "orangefs",    "fuse.s3fs"};

/* ... and their statfs magic numbers, with the name said for each. */
static const struct {
    unsigned long magic;
    const char *name;
} net_magic[] = {{0x6969, "nfs"},           {0x517B, "smbfs"},     {0xFF534D42, "cifs"}, {0xFE534D42, "smb3"},
                 {0x0BD00BD0, "lustre"},    {0x47504653, "gpfs"},  {0x00C36400, "ceph"}, {0x01021997, "9p"},
                 {0x5346414F, "afs"},       {0x19830326, "beegfs"}, {0xAAD7AAEA, "panfs"}};

static bool net_type(const char *t)
{
    for (size_t i = 0; i < sizeof net_types / sizeof net_types[0]; i++)
        if (strcmp(net_types[i], t) == 0)
            return true;
    return false;
}

/* The mount of the mount table holding dir: the longest mount point that is dir or above it (a
 * later one of the same point wins: it is mounted over the earlier). */
typedef struct holder {
    const char *dir;
    size_t best; /* the mount point's length + 1; 0: none yet */
    char fstype[64], mount[PATH_MAX];
} holder;

static void hold(void *user, const rt_mountinfo_entry *e)
{
    holder *h = user;
    size_t n = strlen(e->mount_point);
    bool above = (n == 1 && e->mount_point[0] == '/') ||
                 (strncmp(h->dir, e->mount_point, n) == 0 && (h->dir[n] == '/' || h->dir[n] == '\0'));
    if (!above || n + 1 < h->best || n >= sizeof h->mount)
        return;
    h->best = n + 1;
    snprintf(h->fstype, sizeof h->fstype, "%s", e->fstype);
    memcpy(h->mount, e->mount_point, n + 1);
}

/* The real path of path, or of the nearest directory above it that is there, into out (PATH_MAX).
 * Returns 0, or -1. */
static int existing_real(const char *path, char *out)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (;;) {
        if (realpath(buf[0] ? buf : "/", out))
            return 0;
        char *slash = strrchr(buf, '/');
        if (!slash) { /* a name in the working directory */
            if (strcmp(buf, ".") == 0)
                return -1;
            snprintf(buf, sizeof buf, ".");
        } else if (slash == buf) {
            buf[1] = '\0';
            if (!realpath("/", out))
                return -1;
            return 0;
        } else {
            *slash = '\0';
        }
    }
}

int rt_sqlite_network_fs(const char *path, const char *mountinfo, char *fstype, size_t fcap, char *mount,
                         size_t mcap)
{
    if (fstype && fcap)
        fstype[0] = '\0';
    if (mount && mcap)
        mount[0] = '\0';
    char dir[PATH_MAX];
    if (!path || existing_real(path, dir) < 0)
        return 0;
    holder h = {.dir = dir};
    int fd = open(mountinfo ? mountinfo : "/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        rt_buf b;
        rt_buf_init(&b, 16u << 20);
        ssize_t n = rt_read_fd_grow(fd, &b, RT_READ_TO_EOF);
        if (n > 0)
            rt_mountinfo_parse(b.data, (size_t)n, hold, &h);
        rt_buf_free(&b);
        close(fd);
    }
    bool net = h.best && net_type(h.fstype);
    struct statfs sf;
    if (!net && !mountinfo && statfs(dir, &sf) == 0) /* the kernel's word, where the table said none */
        for (size_t i = 0; i < sizeof net_magic / sizeof net_magic[0]; i++)
            if ((unsigned long)sf.f_type == net_magic[i].magic) {
                net = true;
                snprintf(h.fstype, sizeof h.fstype, "%s", net_magic[i].name);
            }
    if (fstype && fcap)
        snprintf(fstype, fcap, "%s", h.fstype);
    if (mount && mcap)
        snprintf(mount, mcap, "%s", h.mount);
    return net;
}
