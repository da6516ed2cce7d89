/* exec.c - starts the wrapped command (cli_spawn): forked, in the job's cgroup before anything
 * runs, with the signal mask, dispositions and open files limit it would have had without us,
 * and exec'd as execvp does, but for binaries of a format the kernel cannot run (exec_command);
 * or, where no child can be forked, in the tracker's own place (cli_exec_here). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "exec.h"

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

/* execv(path, argv) (path holds a '/'); when the kernel refuses the format of a text file,
 * execvp runs it as a script of /bin/sh with the same arguments, as it always did (glibc's
 * own fallback: no shell is named here). Returns only on failure, with errno set. */
static void exec_one(const char *path, char **argv)
{
    execv(path, argv);
    if (errno != ENOEXEC)
        return;
    if (looks_binary(path)) {
        errno = ENOEXEC;
        return;
    }
    execvp(path, argv);
}

/* Runs argv with execvp's PATH search (an empty entry is the current directory; without PATH,
 * /bin:/usr/bin; a name with a '/' is used as it is), except that a file the kernel cannot
 * execute goes on to execvp's script fallback (/bin/sh) only when it is text: a binary (ELF
 * magic, or a NUL byte before the first newline) fails with ENOEXEC, so the tool exits 126
 * with "Exec format error" as a shell does, instead of the fallback's "not found" and 127.
 * Between fork and exec: only async-signal-safe calls (the parent may have threads), no
 * allocation, no stdio. Returns only on failure: the errno (ENOENT: not found; EACCES: found,
 * not executable; ENOEXEC; ENAMETOOLONG: a name longer than NAME_MAX, as execvp says). */
static int exec_command(char **argv)
{
    const char *file = argv[0];
    if (!file || !*file)
        return ENOENT;
    if (strchr(file, '/')) {
        exec_one(file, argv);
        return errno;
    }
    size_t flen = strlen(file);
    if (flen > NAME_MAX)
        return ENAMETOOLONG;
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    bool denied = false;
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        char full[PATH_MAX];
        /* the directory and a '/' (an empty entry: "./"), the name, its NUL */
        size_t need = (dlen > 0 ? dlen + 1 : 2) + flen + 1;
        if (need <= sizeof full) {
            size_t k = 2;
            memcpy(full, "./", 2); /* an empty entry: the current directory */
            if (dlen > 0) {
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

/* Reads one int from the child's report pipe. Returns 1 with *v, or 0 at EOF (or an error). */
static int read_report(int fd, int *v)
{
    ssize_t n;
    do {
        n = read(fd, v, sizeof *v);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof *v;
}

/* The child's own word when exec failed and there is no report pipe: "resource-tracker: cannot
 * run 'NAME': REASON" on stderr with only async-signal-safe calls (strerrordesc_np is a table
 * lookup), and a shell's exit status. Never returns. */
static void child_failed(const char *name, int e) __attribute__((noreturn));
static void child_failed(const char *name, int e)
{
#ifdef __GLIBC__
    const char *why = strerrordesc_np(e);
#else
    const char *why = strerror(e); /* musl (the static build): a lookup in its fixed table too */
#endif
    const char *parts[] = {"resource-tracker: cannot run '", name, "': ", why ? why : "unknown error", "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t n = strnlen(parts[i], 256);
        if (write(STDERR_FILENO, parts[i], n) < 0)
            break;
    }
    _exit(e == ENOENT ? 127 : 126);
}

/* The child enters jcg between fork and exec and reports the result (0 or -errno) through
 * the pipe first, then the exec errno if exec fails. Without a pipe (out of descriptors) it
 * stays out of jcg (the caller could not know) and says itself why exec failed. */
pid_t cli_spawn(char **argv, const sigset_t *orig_mask, const struct rlimit *nofile, const rt_job_cgroup *jcg,
                bool *entered, int *exec_errno)
{
    int pfd[2] = {-1, -1};
    *exec_errno = 0;
    *entered = false;
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        if (errno != EMFILE && errno != ENFILE) {
            *exec_errno = errno;
            return -1;
        }
        pfd[0] = pfd[1] = -1; /* the command runs all the same */
        jcg = NULL;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        *exec_errno = errno;
        if (pfd[0] >= 0) {
            close(pfd[0]);
            close(pfd[1]);
        }
        return -2;
    }
    if (pid == 0) {
        /* the command dies with the tracker (SIGKILL, a crash); its descendants in the group
         * are the guardian's. Checked after: a tracker that died before this left us to init */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent)
            _exit(127);
        if (jcg) { /* first of all: nothing the command does escapes the group */
            int ce = rt_job_cgroup_join(jcg) == RT_OK ? 0 : -errno;
            if (write(pfd[1], &ce, sizeof ce) < 0) {
                /* the parent sees EOF: the group is not taken as the job's */
            }
        }
        if (pfd[0] >= 0)
            close(pfd[0]);
        signal(SIGPIPE, SIG_DFL);
        if (nofile && setrlimit(RLIMIT_NOFILE, nofile) < 0) {
            /* the command runs with the tracker's higher limit */
        }
        sigprocmask(SIG_SETMASK, orig_mask, NULL);
        int e = exec_command(argv);
        if (pfd[1] < 0)
            child_failed(argv[0] ? argv[0] : "", e);
        if (write(pfd[1], &e, sizeof e) < 0) {
            /* the parent sees EOF and a 127 exit */
        }
        _exit(127);
    }
    if (pfd[0] < 0)
        return pid; /* a failed exec is the child's to say */
    close(pfd[1]);
    int e = 0;
    if (jcg) {
        int ce = -EPIPE;
        if (!read_report(pfd[0], &ce) || ce != 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "the command runs outside its cgroup (it could not enter it: %s)",
                     strerror(ce < 0 ? -ce : EPIPE));
            cli_log(NULL, RT_LOG_DEBUG, msg);
        } else {
            *entered = true;
        }
    }
    int got = read_report(pfd[0], &e);
    close(pfd[0]);
    if (got) { /* exec failed: the child reported why and exits */
        *exec_errno = e;
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

int cli_exec_here(char **argv, const sigset_t *orig_mask, const struct rlimit *nofile)
{
    signal(SIGPIPE, SIG_DFL);
    if (nofile && setrlimit(RLIMIT_NOFILE, nofile) < 0) {
        /* the command runs with the tracker's higher limit */
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 0) < 0) {
        /* not one, or it stays one: only orphans would notice */
    }
    sigprocmask(SIG_SETMASK, orig_mask, NULL);
    return exec_command(argv);
}

bool cli_command_found(const char *name)
{
    if (!name || !*name)
        return false;
    if (strchr(name, '/'))
        return access(name, F_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        int dlen = (int)(end ? (size_t)(end - p) : strlen(p));
        char full[PATH_MAX];
        int n = snprintf(full, sizeof full, "%.*s/%s", dlen ? dlen : 1, dlen ? p : ".", name);
        if (n > 0 && (size_t)n < sizeof full && access(full, X_OK) == 0)
            return true;
        if (!end)
            return false;
        p = end + 1;
    }
}
