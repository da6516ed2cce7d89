/* outshare.c - the -o file that several trackers may write at once (a job script run twice,
 * srun without %t; docs/contracts.md §1, "One file, several trackers"). The file is opened with
 * O_APPEND and each sample is one write(2) (outq.c), so lines from several trackers land whole
 * and in turn, as through the shell's `>>`. Each tracker holds a shared flock(2) on the file for
 * its run: one that gets the exclusive lock at its open writes alone and empties the file (what
 * O_TRUNC did); one that does not appends. The CSV header goes first into an empty file only:
 * the size is read and the first line written under an open file description lock on byte 0
 * (independent of flock), which every tracker's first write takes. No wait here is unbounded: a
 * lock held by something else for over a second is gone past (then the file is not emptied, and
 * the header goes by the size alone). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "outq.h"
#include "outshare.h"

#define LOCK_TRIES 500 /* of 2 ms each: a second */

static void pause_2ms(void)
{
    struct timespec t = {0, 2000000L};
    nanosleep(&t, NULL);
}

/* flock(fd, how | LOCK_NB) until it is had or a second passed. Returns 0, or -1 with errno
 * (EWOULDBLOCK: held by another all along). */
static int flock_bounded(int fd, int how)
{
    for (int i = 0;; i++) {
        if (flock(fd, how | LOCK_NB) == 0)
            return 0;
        if ((errno != EWOULDBLOCK && errno != EINTR) || i == LOCK_TRIES)
            return -1;
        pause_2ms();
    }
}

bool cli_outshare_open(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return false;
    /* alone (no tracker holds its shared lock), or on a file system without flock: emptied */
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) {
        if (ftruncate(fd, 0) < 0) {
            /* an append-only file: appended to */
        }
    }
    /* written by this run from here: the exclusive lock (ours, had above, or another's while it
     * empties the file) gives way to it; a conversion is not atomic, but a tracker that slips in
     * between empties a file nothing was written to yet */
    if (flock_bounded(fd, LOCK_SH) < 0) {
        /* something else holds the file locked: written all the same, each line whole */
    }
    return true;
}

static struct {
    int fd;          /* the -o file; -1: no header to decide */
    const char *hdr; /* the CSV header */
    size_t hlen;
} share = {.fd = -1};

void cli_outshare_header(int fd, rt_format format)
{
    share.fd = -1;
    if (fd < 0 || (format != RT_FORMAT_CSV && format != RT_FORMAT_CSV_ENERGY))
        return;
    share.hdr = rt_format_header(format);
    share.hlen = share.hdr ? strlen(share.hdr) : 0;
    if (share.hlen)
        share.fd = fd;
}

/* An open file description lock on byte 0 of fd (type F_WRLCK or F_UNLCK), waited for at most a
 * second. Returns 0, or -1. */
static int byte0_lock(int fd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    for (int i = 0;; i++) {
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
            return 0;
        if ((errno != EAGAIN && errno != EACCES && errno != EINTR) || i == LOCK_TRIES || type == F_UNLCK)
            return -1;
        pause_2ms();
    }
}

long cli_outshare_write(void *user, const void *buf, size_t len)
{
    if (share.fd < 0 || len < share.hlen || memcmp(buf, share.hdr, share.hlen) != 0)
        return cli_outq_write(user, buf, len);
    int fd = share.fd;
    share.fd = -1; /* the first line only */
    bool locked = byte0_lock(fd, F_WRLCK) == 0;
    struct stat st;
    size_t skip = fstat(fd, &st) == 0 && st.st_size > 0 ? share.hlen : 0;
    long r = cli_outq_write(user, (const char *)buf + skip, len - skip);
    if (locked)
        byte0_lock(fd, F_UNLCK);
    return r < 0 ? r : (long)len;
}
