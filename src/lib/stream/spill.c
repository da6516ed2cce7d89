/* spill.c - the uploader's spill files: a batch's gzip written atomically to
 * {spill_dir}/{key}-{seq:06d}.csv.gz (key: the run's local key, as its record's: record.c), read
 * back for upload, removed once sent; which batches are spilled and when memory copies are
 * dropped; the spill directory: the default one, the fallbacks of the user's own when it cannot
 * be ours, and the list of them a delivery looks in. */
#define _GNU_SOURCE
#include <dirent.h>
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

const char *rt_spill_tmp_root = "/tmp";

/* The fallbacks in order: the caller's (out[0] may stay NULL), /tmp/resource-tracker-EUID. */
static void fallbacks(const rt_stream *st, const char *out[2], char *tmpdir, size_t cap)
{
    out[0] = st->spill_fallback;
    out[1] = rt_pathf(tmpdir, cap, "%s/resource-tracker-%u", rt_spill_tmp_root, (unsigned)geteuid()) ? tmpdir : NULL;
}

bool rt_spill_dir_ready(rt_stream *st)
{
    bool made = make_dirs(st->spill_dir);
    int e = errno;
    if (made && private_dir(st->spill_dir))
        return true;
    bool refused = made;
    e = refused ? EPERM : e;
    errno = e;
    if (st->spill_moved || st->record_fd >= 0 || st->record_on)
        return false; /* the run has its files where it is: they stay together */
    const char *why = refused ? "not a directory of ours alone (a link planted in a shared directory, another owner, or "
                                "writable by others)"
                              : strerror(e);
    char tmpdir[4200], fresh[4200];
    const char *cand[2];
    fallbacks(st, cand, tmpdir, sizeof tmpdir);
    const char *use = NULL;
    for (size_t i = 0; i < 2 && !use; i++)
        if (cand[i] && strcmp(cand[i], st->spill_dir) != 0 && make_dirs(cand[i]) && private_dir(cand[i]))
            use = cand[i];
    if (!use && rt_pathf(fresh, sizeof fresh, "%s/resource-tracker-%u-XXXXXX", rt_spill_tmp_root, (unsigned)geteuid()) &&
        mkdtemp(fresh))
        use = fresh; /* mkdtemp makes it 0700, of an unpredictable name: ours */
    char *copy = use ? rt_strdup(use) : NULL;
    if (!copy) {
        rt_log(&st->lg, RT_LOG_WARN, "stream: cannot use the spill directory %s: %s; no directory of our own could "
               "be made instead", st->spill_dir, why);
        st->spill_moved = true;
        errno = e;
        return false;
    }
    rt_log(&st->lg, RT_LOG_WARN, "stream: cannot use the spill directory %s: %s; batches that cannot be sent are kept "
           "in %s instead (`resource-tracker upload` looks there too)", st->spill_dir, why, copy);
    free(st->spill_dir);
    st->spill_dir = copy;
    st->spill_moved = true;
    return true;
}

/* Adds a heap copy of dir to out when it is not there yet and is a directory of ours alone. */
static void add_dir(const char *dir, char **out, size_t cap, size_t *n)
{
    if (!dir || !*dir || *n >= cap || !private_dir(dir))
        return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(out[i], dir) == 0)
            return;
    if ((out[*n] = rt_strdup(dir)))
        (*n)++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rt_spill_dirs(const rt_stream_options *o, char **out, size_t cap, size_t *n)
{
    *n = 0;
    char *dflt = o->spill_dir && *o->spill_dir ? NULL : rt_spill_default_dir();
    if (*n < cap && (out[*n] = rt_strdup(dflt ? dflt : o->spill_dir ? o->spill_dir : "")))
        (*n)++; /* the first always (it may not exist yet) */
    free(dflt);
    add_dir(o->spill_fallback_dir, out, cap, n);
    char tmpdir[4200], prefix[64];
    if (rt_pathf(tmpdir, sizeof tmpdir, "%s/resource-tracker-%u", rt_spill_tmp_root, (unsigned)geteuid()))
        add_dir(tmpdir, out, cap, n);
    size_t first = *n, plen = (size_t)snprintf(prefix, sizeof prefix, "resource-tracker-%u-", (unsigned)geteuid());
    DIR *d = opendir(rt_spill_tmp_root);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[4200];
        if (strncmp(e->d_name, prefix, plen) == 0 && strlen(e->d_name) == plen + 6 &&
            rt_pathf(path, sizeof path, "%s/%s", rt_spill_tmp_root, e->d_name))
            add_dir(path, out, cap, n);
    }
    if (d)
        closedir(d);
    if (*n > first)
        qsort(out + first, *n - first, sizeof *out, cmp_str);
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
    int fd = -1;
    bool ready = rt_spill_dir_ready(st), refused = !ready && errno == EPERM;
    run_name(st, name, sizeof name);
    bool record = ready && st->record_on;
    if (ready && !record) { /* the record first: no batch is kept where a delivery could not tell whose it is */
        st->record_on = true;
        if (!(record = rt_record_save(st)))
            st->record_on = false;
    }
    if (ready && !record) {
        char why[128];
        snprintf(why, sizeof why, "%s", strerror(errno));
        rt_stream_failed(st, "cannot spill batch %06u to %s: %s (its run's record cannot be written; kept in memory)",
                         b->seq, st->spill_dir, why);
        if (!st->spill_warned)
            rt_log(&st->lg, RT_LOG_WARN, "stream: cannot spill batch %06u to %s: %s (its run's record cannot be "
                   "written; kept in memory)", b->seq, st->spill_dir, why);
        st->spill_warned = true;
        return false;
    }
    bool ok = ready && rt_pathf(path, sizeof path, "%s/%s-%06u.csv.gz", st->spill_dir, name, b->seq) &&
              rt_pathf(tmp, sizeof tmp, "%s.XXXXXX", path) && (fd = mkostemp(tmp, O_CLOEXEC)) >= 0 &&
              rt_write_all(fd, b->gz, b->gzlen) == 0;
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
        rt_stream_failed(st, "cannot spill batch %06u to %s: %s (kept in memory)", b->seq, st->spill_dir, why);
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
        rt_stream_failed(st, "%zu bytes of batches held in memory and none can be spilled: new rows are counted lost "
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

size_t rt_spill_run_keys(const char *dir, char ***out, size_t *stranded)
{
    *out = NULL;
    *stranded = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **keys = NULL, **orph = NULL;
    size_t n = 0, cap = 0, no = 0, ocap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        if (name[0] == '.')
            continue;
        if (len > 4 && strcmp(name + len - 4, ".run") == 0) {
            if ((n == cap && rt_grow(&keys, &cap, n + 1, sizeof *keys) < 0) || !(keys[n] = strndup(name, len - 4)))
                break;
            n++;
        } else if (len > 14 && strcmp(name + len - 7, ".csv.gz") == 0 && name[len - 14] == '-' &&
                   strspn(name + len - 13, "0123456789") == 6) { /* KEY-NNNNNN.csv.gz */
            char *k = strndup(name, len - 14);
            bool seen = false;
            for (size_t i = 0; k && i < no && !seen; i++)
                seen = strcmp(orph[i], k) == 0;
            if (!k || seen || (no == ocap && rt_grow(&orph, &ocap, no + 1, sizeof *orph) < 0)) {
                free(k);
                continue;
            }
            orph[no++] = k;
        }
    }
    closedir(d);
    for (size_t i = 0; i < no; i++) { /* spill files whose run has a record are its own */
        bool has = false;
        for (size_t j = 0; j < n && !has; j++)
            has = strcmp(keys[j], orph[i]) == 0;
        if (has || (n == cap && rt_grow(&keys, &cap, n + 1, sizeof *keys) < 0)) {
            free(orph[i]);
            continue;
        }
        keys[n++] = orph[i];
        (*stranded)++;
    }
    free(orph);
    if (n - *stranded > 1)
        qsort(keys, n - *stranded, sizeof *keys, cmp_str);
    *out = keys;
    return n;
}
