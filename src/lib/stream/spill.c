/* spill.c - the uploader's spill files: a batch's gzip written atomically to
 * {spill_dir}/{key}-{seq:06d}.csv.gz (key: the run's local key, as its record's: record.c), read
 * back for upload, removed once sent; which batches are spilled and when memory copies are
 * dropped; the default spill directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream_int.h"

/* mkdir -p path (0700). Returns true when it exists as a directory. */
static bool make_dirs(const char *path)
{
    char p[4096];
    if (!rt_copy_str(p, sizeof p, path))
        return false;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return false;
        *s = '/';
    }
    struct stat sb;
    return (mkdir(p, 0700) == 0 || errno == EEXIST) && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Whether path's last component is a symlink that the kernel's fs.protected_symlinks rule would
 * not follow: in a world-writable sticky directory (such as /tmp), owned by neither the euid nor
 * the directory's owner. Checked here too, as the sysctl may be off. */
static bool planted_link(const char *path)
{
    char dir[4096];
    struct stat lst, dst;
    if (!rt_copy_str(dir, sizeof dir, path) || lstat(path, &lst) < 0 || !S_ISLNK(lst.st_mode))
        return false;
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0'; /* "/x" keeps "/" */
    if (stat(slash ? dir : ".", &dst) < 0)
        return false;
    return (dst.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) && lst.st_uid != geteuid() &&
           lst.st_uid != dst.st_uid;
}

/* Whether the directory path (made by make_dirs, or found there) is ours alone: no link planted
 * in a shared directory, owned by the euid, writable by no other user (group-writable only when
 * its group is our egid: a user-private group, as umask 002 makes), so that no one else can
 * plant, replace or remove spill files there. errno EPERM when not. */
static bool private_dir(const char *path)
{
    struct stat sb;
    if (planted_link(path)) {
        errno = EPERM;
        return false;
    }
    if (stat(path, &sb) < 0)
        return false;
    if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & S_IWOTH) ||
        ((sb.st_mode & S_IWGRP) && sb.st_gid != getegid())) {
        errno = EPERM;
        return false;
    }
    return true;
}

/* The run's name in spill file names: its local key (characters outside [A-Za-z0-9._-] made
 * '_'), the same before and after registration, as its record's ({key}.run, record.c). */
static void run_name(const rt_stream *st, char *out, size_t cap)
{
    const char *src = st->local_key;
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) {
        char c = src[i];
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_';
        out[i] = keep && !(i == 0 && c == '.') ? c : '_';
    }
    out[i] = '\0';
}

/* Writes all of len bytes to fd. Returns true or false (errno set). */
static bool write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

bool rt_spill_dir_ready(const rt_stream *st)
{
    return make_dirs(st->spill_dir) && private_dir(st->spill_dir);
}

/* Writes b's gzip into its spill file (mode 0600, in a directory of ours alone: private_dir; a
 * temporary file of an unpredictable name, made with O_EXCL, renamed into place, so that a file
 * there is whole; b->spill then owns its path). Returns true when b has a spill file, false when
 * it has no bytes in memory or the write failed (the first failure is logged). */
bool rt_spill_batch(rt_stream *st, rt_batch *b)
{
    if (b->spill)
        return true;
    if (!b->gz)
        return false;
    char name[256], path[4096], tmp[4200];
    run_name(st, name, sizeof name);
    int fd = -1;
    bool made = make_dirs(st->spill_dir), refused = made && !private_dir(st->spill_dir);
    bool ok = made && !refused && rt_pathf(path, sizeof path, "%s/%s-%06u.csv.gz", st->spill_dir, name, b->seq) &&
              rt_pathf(tmp, sizeof tmp, "%s.XXXXXX", path) && (fd = mkostemp(tmp, O_CLOEXEC)) >= 0 &&
              write_all(fd, b->gz, b->gzlen);
    int e = errno;
    if (fd >= 0 && close(fd) < 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && rename(tmp, path) < 0) {
        ok = false;
        e = errno;
    }
    if (ok && !(b->spill = rt_strdup(path)))
        e = ENOMEM, ok = false;
    if (!ok) {
        if (fd >= 0)
            unlink(tmp);
        const char *why = refused && e == EPERM ? "not a directory of ours alone (a link planted in a shared "
                                                  "directory, another owner, or writable by others)"
                                                : strerror(e);
        rt_upload_failed(st, "cannot spill batch %06u to %s: %s (kept in memory)", b->seq, st->spill_dir, why);
        if (!st->spill_warned)
            rt_log(&st->lg, RT_LOG_WARN, "stream: cannot spill batch %06u to %s: %s (kept in memory)", b->seq,
                   st->spill_dir, why);
        st->spill_warned = true;
        return false;
    }
    pthread_mutex_lock(&st->mu);
    st->spilled++;
    pthread_mutex_unlock(&st->mu);
    return true;
}

/* The gzip bytes of b: from memory (owned by b), or read back from its spill file into *tmp.
 * *tmp is initialised either way: free it with rt_buf_free. Returns false when neither is there
 * (or the file is not the batch's length). */
bool rt_spill_read(const rt_batch *b, rt_buf *tmp, const void **data, size_t *len)
{
    rt_buf_init(tmp, b->gzlen + 4096); /* room for the reader's first 4 KiB and the NUL */
    if (b->gz) {
        *data = b->gz;
        *len = b->gzlen;
        return true;
    }
    int fd = b->spill ? open(b->spill, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0)
        return false;
    ssize_t n = rt_read_fd_grow(fd, tmp, RT_READ_TO_EOF);
    close(fd);
    if (n < 0 || (size_t)n != b->gzlen)
        return false;
    *data = tmp->data;
    *len = tmp->len;
    return true;
}

void rt_spill_drop(rt_stream *st, rt_batch *b)
{
    if (b->spill)
        unlink(b->spill);
    if (b->gz)
        st->mem_bytes -= b->gzlen;
    rt_batch_free(b);
}

/* Spills what must be spilled: every pending batch while S3 fails (one failed) or the run is not
 * registered (or all with everything), and drops the memory copies of spilled batches,
 * oldest first, while the memory held passes the bound. */
void rt_spill_persist(rt_stream *st, bool everything)
{
    for (rt_batch *b = st->pending; b; b = b->next)
        if (everything || st->s3_backoff > 0 || b->tries > 0 || !st->registered)
            rt_spill_batch(st, b);
    for (rt_batch *b = st->pending; b && st->mem_bytes > st->mem_limit; b = b->next) {
        if (b->gz && rt_spill_batch(st, b)) {
            st->mem_bytes -= b->gzlen;
            rt_gzip_free(b->z);
            b->z = NULL;
            b->gz = NULL;
        }
    }
    if (!st->record_on)
        rt_record_save(st); /* a run with spill files has its record beside them */
    /* what could not be spilled stays in memory; past the bound new rows are counted lost (the
     * batches kept keep their seq, so none is skipped) until spilling or uploading frees room */
    bool full = st->mem_bytes > st->mem_limit;
    pthread_mutex_lock(&st->mu);
    bool was = st->mem_full;
    st->mem_full = full;
    pthread_mutex_unlock(&st->mu);
    if (full && !was) /* logged outside the lock: rt_stream_add never waits on a log callback */
        rt_upload_failed(st, "%zu bytes of batches held in memory and none can be spilled: new rows are counted lost "
                         "until they can", st->mem_bytes);
    if (full && !was)
        rt_log(&st->lg, RT_LOG_WARN, "stream: %zu bytes of batches held in memory and none can be spilled: new rows "
               "are counted lost until they can", st->mem_bytes);
}

/* The default spill directory: $XDG_STATE_HOME is the caller's to pass (the library reads no
 * environment), so this is the home directory's .local/state/resource-tracker, or
 * /tmp/resource-tracker-EUID without one (one per user: another's is not ours alone). Returns a
 * heap string (NULL on no memory). */
char *rt_spill_default_dir(void)
{
    struct passwd pw, *res = NULL;
    char buf[4096], path[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_dir &&
        rt_pathf(path, sizeof path, "%s/.local/state/resource-tracker", res->pw_dir))
        return rt_strdup(path);
    return rt_pathf(path, sizeof path, "/tmp/resource-tracker-%u", (unsigned)geteuid()) ? rt_strdup(path) : NULL;
}
