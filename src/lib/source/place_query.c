/* place_query.c - asking SLURM for a job's time limit: scontrol's and squeue's answers and
 * SLURM's duration and time formats parsed (pure functions), and the bounded runner of the
 * command (posix_spawn, a pipe read within a deadline, the command's process group killed past
 * it, the child reaped by its pid). Used by place.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "place.h"

extern char **environ;

const char *rt_place_getenv(const char *const *envp, const char *name)
{
    if (!envp)
        envp = (const char *const *)environ;
    if (!envp || !name)
        return NULL;
    size_t n = strlen(name);
    for (const char *const *e = envp; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* Whether s (n bytes) equals word, ignoring case. */
static bool word_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* Parses 1 to 3 unsigned decimals separated by ':' in [s, end) into v; returns how many, or -1. */
static int colon_fields(const char *s, const char *end, long v[3])
{
    int k = 0;
    while (s < end) {
        if (k == 3 || *s < '0' || *s > '9')
            return -1;
        long x = 0;
        while (s < end && *s >= '0' && *s <= '9') {
            x = x * 10 + (*s++ - '0');
            if (x > 100000000L)
                return -1;
        }
        v[k++] = x;
        if (s < end) {
            if (*s != ':' || s + 1 == end)
                return -1;
            s++;
        }
    }
    return k;
}

/* The length of s without its trailing blanks and newlines (a command's output line). */
static size_t trimmed_len(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t'))
        n--;
    return n;
}

int rt_slurm_parse_duration(const char *s, double *secs)
{
    if (!s)
        return -1;
    size_t n = trimmed_len(s);
    static const char *const none[] = {"UNLIMITED", "NOT_SET", "INFINITE", "Partition_Limit", "N/A", "NONE"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (word_is(s, n, none[i]))
            return 0;
    if (n == 0)
        return -1;
    const char *end = s + n, *dash = memchr(s, '-', n);
    long days = 0, v[3];
    int k;
    if (dash) {
        long d[3];
        if (colon_fields(s, dash, d) != 1)
            return -1;
        days = d[0];
        k = colon_fields(dash + 1, end, v);
        if (k < 1)
            return -1;
        /* days-hours, days-hours:minutes, days-hours:minutes:seconds */
        double t = (double)days * 86400 + (double)v[0] * 3600;
        if (k >= 2)
            t += (double)v[1] * 60;
        if (k == 3)
            t += (double)v[2];
        *secs = t;
        return 1;
    }
    k = colon_fields(s, end, v);
    if (k == 1) /* minutes */
        *secs = (double)v[0] * 60;
    else if (k == 2) /* minutes:seconds */
        *secs = (double)v[0] * 60 + (double)v[1];
    else if (k == 3) /* hours:minutes:seconds */
        *secs = (double)v[0] * 3600 + (double)v[1] * 60 + (double)v[2];
    else
        return -1;
    return 1;
}

int rt_slurm_parse_time(const char *s, double *unix_secs)
{
    if (!s)
        return -1;
    size_t n = trimmed_len(s);
    if (n == 0 || word_is(s, n, "N/A") || word_is(s, n, "Unknown") || word_is(s, n, "None"))
        return 0;
    struct tm tm = {0};
    int used = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &used) == 6 && (size_t)used == n) {
    } else if (used = 0, sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &used) == 3 &&
               (size_t)used == n) {
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    } else {
        return -1;
    }
    if (tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return -1;
    *unix_secs = (double)t;
    return 1;
}

/* The first non-blank line of text into line[cap]; its length. */
static size_t first_line(const char *text, char *line, size_t cap)
{
    while (*text == '\n' || *text == '\r' || *text == ' ' || *text == '\t')
        text++;
    size_t n = strcspn(text, "\r\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(line, text, n);
    line[n] = '\0';
    return n;
}

int rt_slurm_parse_scontrol(const char *text, rt_slurm_times *out)
{
    *out = (rt_slurm_times){.limit = -1, .start = -1};
    if (!text)
        return -1;
    char line[8192];
    first_line(text, line, sizeof line);
    char *save = NULL;
    for (char *w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (strncmp(w, "TimeLimit=", 10) == 0 && out->limit == -1) {
            int r = rt_slurm_parse_duration(w + 10, &out->limit_secs);
            if (r < 0)
                return -1;
            out->limit = r;
        } else if (strncmp(w, "StartTime=", 10) == 0 && out->start == -1) {
            int r = rt_slurm_parse_time(w + 10, &out->start_secs);
            out->start = r < 0 ? -1 : r;
        }
    }
    return out->limit >= 0 ? 0 : -1;
}

int rt_slurm_parse_squeue(const char *text, rt_slurm_times *out)
{
    *out = (rt_slurm_times){.limit = -1, .start = -1};
    if (!text)
        return -1;
    char line[1024];
    first_line(text, line, sizeof line);
    char *save = NULL, *lim = strtok_r(line, " \t", &save), *start = strtok_r(NULL, " \t", &save);
    if (!lim || strtok_r(NULL, " \t", &save))
        return -1;
    int r = rt_slurm_parse_duration(lim, &out->limit_secs);
    if (r < 0)
        return -1;
    out->limit = r;
    if (start) {
        r = rt_slurm_parse_time(start, &out->start_secs);
        out->start = r < 0 ? -1 : r;
    }
    return 0;
}

/* The executable name on the PATH (envp's, else the process's) into path[cap]; false when not found. */
static bool find_on_path(const char *name, const char *const *envp, char *path, size_t cap)
{
    if (strchr(name, '/'))
        return rt_copy_str(path, cap, name) && access(path, X_OK) == 0;
    const char *p = envp ? rt_place_getenv(envp, "PATH") : NULL;
    if (!p)
        p = getenv("PATH");
    if (!p)
        p = "/usr/local/bin:/usr/bin:/bin";
    while (*p) {
        size_t n = strcspn(p, ":");
        /* an empty entry (the current directory) is skipped: no ./scontrol is run */
        if (n > 0 && rt_pathf(path, cap, "%.*s/%s", (int)n, p, name)) {
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
                return true;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}

/* Waits for pid until deadline (rt_mono_secs), then kills its group and waits. Sets *status;
 * returns 1 when it had to be killed, 0 when it ended by itself, -1 when it could not be reaped. */
static int reap_by(pid_t pid, double deadline, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0 && errno == ECHILD) { /* a host process that ignores SIGCHLD: the kernel reaped it */
            *status = 0;                /* its status is lost: the answer is judged by its text */
            return 0;
        }
        if (r < 0 && errno != EINTR)
            return -1;
        double left = deadline - rt_mono_secs();
        if (left <= 0)
            break;
        struct timespec ts = {0, left < 0.005 ? (long)(left * 1e9) : 5000000L};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return errno == ECHILD ? 1 : -1; /* reaped by the kernel (SIGCHLD ignored): gone all the same */
    return 1;
}

int rt_place_run(const char *const *argv, const char *const *envp, double timeout_secs, char *out, size_t cap,
                 char *why, size_t whylen)
{
    if (cap)
        out[0] = '\0';
    if (why && whylen)
        why[0] = '\0';
    char path[4096];
    if (!argv || !argv[0] || !find_on_path(argv[0], envp, path, sizeof path))
        return 1;
    if (!(timeout_secs > 0))
        timeout_secs = 2.0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(why, whylen, "could not be started: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0); /* its own group: killed whole at the deadline */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    char *const *env = envp ? (char *const *)envp : environ;
    int err = posix_spawn(&pid, path, &fa, &attr, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (err != 0) {
        close(fds[0]);
        snprintf(why, whylen, "could not be started: %s", strerror(err));
        return -1;
    }
    double deadline = rt_mono_secs() + timeout_secs;
    size_t len = 0;
    bool timed_out = false;
    while (len + 1 < cap) {
        double left = deadline - rt_mono_secs();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue; /* the deadline is checked above */
        ssize_t n = read(fds[0], out + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    if (cap)
        out[len] = '\0';
    close(fds[0]);
    int status = 0;
    int killed;
    if (timed_out) {
        /* no answer in time: the whole group goes, even when the command itself has ended and
         * a child it left holds the pipe (its unreaped leader keeps the group's id ours) */
        kill(-pid, SIGKILL);
        killed = reap_by(pid, 0, &status) < 0 ? -1 : 1;
    } else {
        killed = reap_by(pid, deadline, &status);
    }
    if (killed < 0) {
        snprintf(why, whylen, "could not be waited for: %s", strerror(errno));
        return -1;
    }
    if (killed > 0) {
        snprintf(why, whylen, "gave no answer within %g s (killed)", timeout_secs);
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (len + 1 >= cap && ((WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) ||
                           (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGPIPE)))
        return 0; /* more than was read (a shell says its child's SIGPIPE as 141): what was read stands */
    if (WIFEXITED(status))
        snprintf(why, whylen, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(why, whylen, "ended by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return -1;
}
