/* secure.c - the tool's files and secrets: files it creates are opened without following a
 * symlink planted in a shared (sticky, world-writable) directory (the kernel's protected_symlinks
 * rule, kept in user space for the last path component), and the API token is taken out of the
 * environment the wrapped command inherits, wiped when freed, and kept out of core dumps. The
 * paths a run will write are checked before it starts, creating nothing (cli_path_check). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Splits path into its directory (opened O_PATH into *dfd) and its last component (*base
 * points into path). Returns 0, or -1 with errno. */
static int open_parent(const char *path, int *dfd, const char **base)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        dir[0] = '.', dir[1] = '\0';
        *base = path;
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= sizeof dir) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
        *base = slash + 1;
    }
    *dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return *dfd < 0 ? -1 : 0;
}

/* Whether the link lst in the directory dst may be followed by us (the kernel's rule for
 * fs.protected_symlinks = 1): always outside a sticky world-writable directory; inside one only
 * when the link is ours (euid) or the directory owner's. */
static bool may_follow(const struct stat *lst, const struct stat *dst)
{
    if ((dst->st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
        return true;
    return lst->st_uid == geteuid() || lst->st_uid == dst->st_uid;
}

/* What base in the directory dfd is, from one look: a symlink that may not be followed, one that
 * may, or no link (also nothing there, or it cannot be looked at). */
static cli_path_kind look_at(int dfd, const char *base)
{
    struct stat lst, dst;
    if (fstatat(dfd, base, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode) || fstat(dfd, &dst) < 0)
        return CLI_PATH_OTHER;
    return may_follow(&lst, &dst) ? CLI_PATH_LINK : CLI_PATH_REFUSED;
}

int cli_open_create(const char *path, int flags, mode_t mode, bool *refused)
{
    if (refused)
        *refused = false;
    /* the plain case first, with no gap: a symlink as the last component fails with ELOOP (some
     * kernels answer EACCES for another's link in a sticky directory, O_CREAT given) */
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0 || (errno != ELOOP && errno != EACCES))
        return fd;
    int first = errno, dfd;
    const char *base;
    if (open_parent(path, &dfd, &base) < 0) {
        errno = first;
        return -1;
    }
    /* in a sticky directory only the link's owner or the directory's (or root) may replace the
     * link, and the rule lets us follow only links of theirs: the link cannot change between the
     * look and the open (both relative to the directory held open) */
    struct stat lst, dst;
    if (fstatat(dfd, base, &lst, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(lst.st_mode) || fstat(dfd, &dst) < 0) {
        close(dfd);
        errno = first; /* no link: the first answer stands */
        return -1;
    }
    if (!may_follow(&lst, &dst)) {
        close(dfd);
        if (refused)
            *refused = true;
        errno = EACCES;
        return -1;
    }
    fd = openat(dfd, base, flags | O_CLOEXEC, mode);
    int e = errno;
    close(dfd);
    errno = e;
    return fd;
}

cli_path_kind cli_path_look(const char *path)
{
    int dfd;
    const char *base;
    if (!path || open_parent(path, &dfd, &base) < 0)
        return CLI_PATH_OTHER; /* nothing there to follow: opening it will say what is wrong */
    cli_path_kind k = look_at(dfd, base);
    close(dfd);
    return k;
}

int cli_path_refused(const char *path)
{
    return path && strcmp(path, "-") != 0 && cli_path_look(path) == CLI_PATH_REFUSED;
}

const char *cli_refused_why(void)
{
    return "it is a symlink in a world-writable sticky directory, owned by neither us nor the directory's owner "
           "(not followed, as the kernel's fs.protected_symlinks does)";
}

char *cli_take_secret(const char *name)
{
    char *v = getenv(name);
    if (!v)
        return NULL;
    char *copy = *v ? strdup(v) : NULL;
    /* every NAME= entry (an environment may hold it twice; getenv sees the first, unsetenv
     * removes all), wiped in place: also out of /proc/PID/environ, which shows the initial block */
    size_t n = strlen(name);
    for (char **e = environ; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            explicit_bzero(*e + n + 1, strlen(*e + n + 1));
    unsetenv(name); /* the wrapped command is not ours to hand it to */
    if (copy) /* no core dump and no /proc/PID/mem, environ or maps for others while we hold it */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return copy;
}

void cli_free_secret(char *secret)
{
    if (!secret)
        return;
    explicit_bzero(secret, strlen(secret));
    free(secret);
}

const char *cli_path_message(char *buf, size_t cap, const char *flag, const char *path, bool refused, int err)
{
    if (refused)
        snprintf(buf, cap, "--%s: refusing '%s': %s", flag, path, cli_refused_why());
    else
        snprintf(buf, cap, "--%s: cannot open '%s': %s", flag, path, strerror(err));
    return buf;
}

/* Whether we (the euid) may create files in the directory dir: 0, or an errno. */
static int dir_writable(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) < 0)
        return errno;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0 ? errno : 0;
}

/* Whether path can be written as kind asks: 0, or an errno. Nothing is created. */
static int path_writable(const char *path, cli_write_kind kind)
{
    size_t len = strlen(path);
    if (len > 0 && path[len - 1] == '/') /* -o DIR/: a file of the run's own in DIR; a file is no DIR/ */
        return kind == CLI_WRITE_FILE_OR_DIR ? dir_writable(path) : EISDIR;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return errno; /* a component is no directory, or cannot be searched */
    if (exists && S_ISDIR(st.st_mode))
        return EISDIR;
    if (exists && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0)
        return errno;
    if (exists && kind != CLI_WRITE_FILE_BESIDE)
        return 0;
    /* the directory it is (to be) created in */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir)
        return ENAMETOOLONG;
    if (n == 0)
        dir[n++] = '.';
    else
        memcpy(dir, path, n);
    dir[n] = '\0';
    return dir_writable(dir);
}

int cli_path_check(const char *flag, const char *path, cli_write_kind kind, char *err, size_t errlen)
{
    if (!path || strcmp(path, "-") == 0)
        return 0;
    bool refused = cli_path_refused(path);
    if (!refused && kind == CLI_WRITE_FILE_BESIDE && cli_is_fifo(path)) {
        /* SQLite reads and seeks its file: a FIFO can hold no history */
        snprintf(err, errlen, "--%s: '%s' is a FIFO, not a file (SQLite keeps the history in a file)", flag, path);
        return -1;
    }
    int e = refused ? EACCES : path_writable(path, kind);
    if (e == 0)
        return 0;
    cli_path_message(err, errlen, flag, path, refused, e);
    size_t used = strlen(err);
    if (e == EISDIR && kind == CLI_WRITE_FILE_OR_DIR && used < errlen) /* -o DIR/ was meant */
        snprintf(err + used, errlen - used, "; to write into it, end it with '/': -o %s/", path);
    return -1;
}
