/* main.c - the resource-tracker tool: reads options and config, then samples on an absolute
 * monotonic grid (sample k at t0 + k*interval) and writes each sample at once, until SIGINT
 * or SIGTERM, when it writes one last sample for the partial interval and exits 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "resource_tracker.h"

#define EXIT_USAGE 2
#define EXIT_FAIL 1

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof msg)
        n = sizeof msg - 1;
    char line[2200];
    int m = snprintf(line, sizeof line, "resource-tracker: %.*s\n", n, msg);
    if (m > 0 && write(STDERR_FILENO, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1) < 0) {
        /* nowhere left to report */
    }
}

static void log_cb(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN)
        say("%s: %s", level == RT_LOG_ERROR ? "error" : "warning", msg);
}

/* Opens where samples go: stderr by default, stdout for "-", else the file (truncated). */
static int open_output(const char *path)
{
    if (!path)
        return STDERR_FILENO;
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static struct timespec ts_of(double secs)
{
    struct timespec t;
    t.tv_sec = (time_t)floor(secs);
    t.tv_nsec = (long)((secs - floor(secs)) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

typedef struct run_state {
    rt_sampler *sampler;
    rt_writer *writer; /* NULL with --quiet */
    bool output_dead;
} run_state;

/* Takes one sample and writes it. Returns false when output failed for good. */
static bool emit(run_state *rs)
{
    const rt_sample *s;
    if (rt_sampler_sample(rs->sampler, &s) != RT_OK)
        return true;
    if (!rs->writer || rs->output_dead)
        return true;
    if (rt_writer_write(rs->writer, s) != RT_OK) {
        int e = errno;
        rs->output_dead = true;
        if (e != EPIPE)
            say("cannot write samples: %s", strerror(e));
        return false;
    }
    return true;
}

static int track(cli_options *o)
{
    int out_fd = -1;
    if (!o->quiet) {
        out_fd = open_output(o->output);
        if (out_fd < 0) {
            say("--output: cannot open '%s': %s", o->output, strerror(errno));
            return EXIT_USAGE;
        }
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
        say("cannot block signals: %s", strerror(errno));
        return EXIT_FAIL;
    }
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (sfd < 0 || tfd < 0) {
        say("cannot set up the sampling clock: %s", strerror(errno));
        return EXIT_FAIL;
    }

    /* The grid starts at the baseline reading: sample k at t0 + k*interval, with no drift,
     * as the kernel's periodic timer keeps absolute expiry times. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t0 = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    run_state rs = {0};
    rt_sampler_options so = {.log = log_cb};
    rt_error err = rt_sampler_new(&so, &rs.sampler);
    if (err != RT_OK) {
        say("cannot start sampling: %s", rt_strerror(err));
        return EXIT_FAIL;
    }
    if (out_fd >= 0 && (err = rt_writer_new(o->format, out_fd, &o->job, &rs.writer)) != RT_OK) {
        say("cannot set up output: %s", rt_strerror(err));
        rt_sampler_free(rs.sampler);
        return EXIT_FAIL;
    }

    struct itimerspec its = {.it_value = ts_of(t0 + o->interval), .it_interval = ts_of(o->interval)};
    if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
        say("cannot start the sampling clock: %s", strerror(errno));
        return EXIT_FAIL;
    }

    int status = 0;
    for (;;) {
        struct pollfd pfd[2] = {{.fd = tfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        int n = poll(pfd, 2, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            say("poll: %s", strerror(errno));
            status = EXIT_FAIL;
            break;
        }
        if (pfd[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                emit(&rs); /* the partial last interval */
                break;
            }
        }
        if (pfd[0].revents & POLLIN) {
            uint64_t expirations;
            if (read(tfd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
                continue;
            if (!emit(&rs))
                break; /* output gone (e.g. the reading end of a pipe closed): nothing left to do */
        }
    }
    rt_writer_free(rs.writer);
    rt_sampler_free(rs.sampler);
    close(tfd);
    close(sfd);
    if (out_fd > STDERR_FILENO)
        close(out_fd);
    return status;
}

int main(int argc, char **argv)
{
    cli_options o = {0};
    char err[1024];
    int rc;
    if (cli_parse_args(&o, argc, argv, err, sizeof err) < 0) {
        say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.help) {
        fputs(cli_usage, stdout);
        cli_options_free(&o);
        return 0;
    }
    if (o.version) {
        printf("resource-tracker %s\n", rt_version());
        cli_options_free(&o);
        return 0;
    }
    if (o.cmd != CMD_TRACK) {
        static const char *const names[] = {"", "summary", "recommend", "report", "info"};
        say("'%s' is not available yet in this version", names[o.cmd]);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (cli_load_config(&o, err, sizeof err) < 0 || cli_merge(&o, err, sizeof err) < 0) {
        say("%s", err);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.command) {
        say("running a command (%s) is not available yet in this version", o.command[0]);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    if (o.pid && kill((pid_t)o.pid, 0) < 0 && errno == ESRCH) {
        say("--pid: there is no process %ld", o.pid);
        cli_options_free(&o);
        return EXIT_USAGE;
    }
    rc = track(&o);
    cli_options_free(&o);
    return rc;
}
