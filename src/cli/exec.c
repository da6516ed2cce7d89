/* exec.c - runs the wrapped command in the forked child: execvp's PATH search (an empty entry
 * is the current directory; without PATH, /bin:/usr/bin; a name with a '/' is used as it is),
 * except that a file the kernel cannot execute goes to /bin/sh only when it is text: a binary
 * (ELF magic, or a NUL byte before the first newline) fails with ENOEXEC, so the tool exits 126
 * with "Exec format error" as a shell does, instead of /bin/sh's "not found" and 127. Only
 * async-signal-safe calls (the parent may have threads): no allocation, no stdio. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

/* Whether path starts like a binary: ELF magic, or a NUL before the first newline in its first
 * 80 bytes. An unreadable file counts as binary (nothing for sh to read either). */
static bool looks_binary(const char *path)
{
    unsigned char head[80];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    ssize_t n;
    do {
        n = read(fd, head, sizeof head);
    } while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0)
        return true;
    if (n >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F')
        return true;
    for (ssize_t i = 0; i < n; i++) {
        if (head[i] == '\n')
            return false;
        if (head[i] == '\0')
            return true;
    }
    return false;
}

/* execv(path, argv); when the kernel refuses the format of a text file, /bin/sh runs it with
 * the same arguments (as execvp does). Returns only on failure, with errno set. */
static void exec_one(const char *path, char **argv)
{
    execv(path, argv);
    if (errno != ENOEXEC)
        return;
    if (looks_binary(path)) {
        errno = ENOEXEC;
        return;
    }
    size_t argc = 0;
    while (argv[argc])
        argc++;
    /* room for "/bin/sh", the path, the arguments and the NULL: on the stack, or mapped */
    char *small[256];
    char **sh_argv = small;
    if (argc + 2 > sizeof small / sizeof small[0]) {
        void *m = mmap(NULL, (argc + 2) * sizeof *sh_argv, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            errno = ENOMEM;
            return;
        }
        sh_argv = m;
    }
    sh_argv[0] = (char *)"/bin/sh";
    sh_argv[1] = (char *)path;
    for (size_t i = 1; i <= argc; i++)
        sh_argv[i + 1] = argv[i]; /* argv[argc] is the NULL */
    execv("/bin/sh", sh_argv);
}

int cli_exec_command(char **argv)
{
    const char *file = argv[0];
    if (!file || !*file)
        return ENOENT;
    if (strchr(file, '/')) {
        exec_one(file, argv);
        return errno;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    size_t flen = strlen(file);
    bool denied = false;
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        char full[PATH_MAX];
        if (dlen + 1 + flen + 1 <= sizeof full) {
            size_t k = 0;
            if (dlen > 0) { /* an empty entry: the current directory */
                memcpy(full, p, dlen);
                full[dlen] = '/';
                k = dlen + 1;
            }
            memcpy(full + k, file, flen + 1);
            exec_one(full, argv);
            switch (errno) {
            case EACCES: denied = true; break; /* a later entry may still have it */
            case ENOENT:
            case ENOTDIR:
            case ESTALE:
            case ENODEV:
            case ETIMEDOUT:
            case ENAMETOOLONG: break;
            default: return errno; /* found, and it cannot run (ENOEXEC, E2BIG, ENOMEM, ...) */
            }
        }
        if (!end)
            break;
        p = end;
    }
    return denied ? EACCES : ENOENT;
}
