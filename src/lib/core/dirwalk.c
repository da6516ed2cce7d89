/* dirwalk.c - the directory walker: getdents64 over a stack buffer, no allocation, no DIR
 * stream; every directory listing of the library goes through it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "dirwalk.h"

/* The kernel's record (linux_dirent64), declared here so no libc extension is needed. */
struct rt_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

long rt_dir_walk_fd(int fd, rt_dir_fn cb, void *user)
{
    if (lseek(fd, 0, SEEK_SET) < 0)
        return -errno;
    _Alignas(struct rt_dirent64) char buf[RT_DIR_WALK_BUF];
    long visited = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0)
            return -errno;
        if (n == 0)
            return visited;
        for (long off = 0; off < n;) {
            const struct rt_dirent64 *de = (const struct rt_dirent64 *)(buf + off);
            off += de->d_reclen;
            const char *name = de->d_name;
            if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
                continue;
            visited++;
            if (cb(user, name, de->d_type) != 0)
                return visited;
        }
    }
}

long rt_dir_walk(int dirfd, const char *path, rt_dir_fn cb, void *user)
{
    int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    long n = rt_dir_walk_fd(fd, cb, user);
    close(fd);
    return n;
}

typedef struct id_walk {
    rt_id_fn cb;
    void *user;
} id_walk;

/* rt_dir_fn over any directory: hands on the entries named by a decimal number. */
static int visit_id(void *user, const char *name, unsigned char d_type)
{
    (void)d_type;
    const id_walk *w = user;
    const char *q = name;
    uint64_t id;
    if (rt_parse_u64(&q, q + strlen(q), &id) && *q == '\0' && id <= INT64_MAX)
        return w->cb(w->user, (int64_t)id);
    return 0;
}

long rt_dir_walk_ids(int dirfd, const char *path, rt_id_fn cb, void *user)
{
    id_walk w = {cb, user};
    return rt_dir_walk(dirfd, path, visit_id, &w);
}

long rt_dir_walk_ids_fd(int fd, rt_id_fn cb, void *user)
{
    id_walk w = {cb, user};
    return rt_dir_walk_fd(fd, visit_id, &w);
}

/* rt_dir_count_ids's callback: counts one numbered entry. */
static int count_id(void *user, int64_t id)
{
    (void)id;
    ++*(int64_t *)user;
    return 0;
}

int64_t rt_dir_count_ids(int dirfd, const char *path)
{
    int64_t n = 0;
    return dirfd < 0 || rt_dir_walk_ids(dirfd, path, count_id, &n) < 0 ? -1 : n;
}

int64_t rt_dir_count_ids_fd(int fd)
{
    int64_t n = 0;
    return fd < 0 || rt_dir_walk_ids_fd(fd, count_id, &n) < 0 ? -1 : n;
}
