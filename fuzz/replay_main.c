/* replay_main.c - a plain main() for a fuzz target, without libFuzzer: runs the target's
 * LLVMFuzzerTestOneInput once on every file named, walking directories recursively, so that the
 * regression inputs (fuzz/regress/T) and seeds replay in the normal build and under the
 * sanitizers (CTest's fuzz.replay.T). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole regular file path into a heap buffer of exactly its size (1 byte for an empty
 * one), so that a read past the input is a finding as under libFuzzer. Returns the buffer with
 * *len, or NULL with errno set. */
static uint8_t *read_whole(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) == 0 && st.st_size >= 0 && (buf = malloc(st.st_size ? (size_t)st.st_size : 1))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        *len = got; /* a file that shrank meanwhile: what was read */
    }
    int e = errno;
    close(fd);
    errno = e;
    return buf;
}

/* Replays path: a regular file once, a directory's entries in name order (those whose name
 * starts with '.' left out: .keep markers; symbolic links inside a directory left out too: the
 * fixtures' sysfs links loop). top: path was named on the command line (followed when a link).
 * Adds the inputs run to *count. Returns 0, or -1 after a message for a path that cannot be
 * read. */
static int replay(const char *path, bool top, unsigned long *count)
{
    struct stat st;
    if ((top ? stat(path, &st) : lstat(path, &st)) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        struct dirent **names;
        int n = scandir(path, &names, NULL, alphasort);
        if (n < 0) {
            fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
            return -1;
        }
        int rc = 0;
        for (int i = 0; i < n; i++) {
            if (names[i]->d_name[0] != '.' && rc == 0) {
                size_t cap = strlen(path) + strlen(names[i]->d_name) + 2;
                char *sub = malloc(cap);
                if (!sub || snprintf(sub, cap, "%s/%s", path, names[i]->d_name) >= (int)cap)
                    rc = -1;
                else
                    rc = replay(sub, false, count);
                free(sub);
            }
            free(names[i]);
        }
        free(names);
        return rc;
    }
    if (!S_ISREG(st.st_mode))
        return 0; /* a link, socket or fifo among the fixtures: not an input */
    size_t len = 0;
    uint8_t *buf = read_whole(path, &len);
    if (!buf) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(stderr, "Running: %s\n", path); /* the last one named is the one that failed */
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    (*count)++;
    return 0;
}

/* Replays every argument; exits 0 when all were read and ran (a finding aborts before), 1 when
 * one could not be read, 2 without arguments. */
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    unsigned long count = 0;
    for (int i = 1; i < argc; i++)
        if (replay(argv[i], true, &count) != 0)
            return 1;
    fprintf(stderr, "replayed %lu inputs\n", count);
    return 0;
}
