/* phase.c - `resource-tracker phase start|stop NAME [-v]`: marks a phase in the tracker that
 * wraps the job, by one line on the socket named in TRACKER_PHASE_SOCKET (docs/contracts.md
 * §18). It never blocks and never fails the job: without the variable it does nothing, and
 * whatever happens to the mark it exits 0 (-v says on stderr why a mark could not be sent);
 * only a usage error exits 2. main() runs it before reading any setting, so nothing the job's
 * environment holds can make it fail. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "settings.h"

static const char phase_usage[] =
    "Usage: resource-tracker phase start|stop NAME [-v]\n"
    "\n"
    "Marks the start or the end of the phase NAME in the resource-tracker that runs this job:\n"
    "its summary, report and JSON lines then give each phase's time, CPU, memory, GPU and I/O.\n"
    "Run it anywhere inside the job (a script, a command a program runs, a child process).\n"
    "A stop closes the most recent open phase of its NAME; phases nest and overlap freely.\n"
    "NAME: 1 to 255 bytes of UTF-8 without control characters (spaces allowed).\n"
    "\n"
    "It writes one line to the socket named in TRACKER_PHASE_SOCKET, which the tracker sets for\n"
    "the command it runs (docs/contracts.md, \"Phase marks\", for writing it without this\n"
    "command). Without that variable (no tracker) it does nothing. It never waits for the\n"
    "tracker and always exits 0 once the words are right: a mark that cannot be sent is lost,\n"
    "never the job; the tracker counts the marks it refuses and says so at the run's end.\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char phase_usage_tail[] = "\nExit status: 0 (sent or not); 2 a usage error.\n";

#define SEND_SECS 0.002   /* how long a full backlog or buffer is retried */
#define RETRY_NSECS 200000L
#define NAME_SENT_MAX 600 /* longer names are cut here: the line is too long either way */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether to try again after errno e, within the deadline (a short sleep first). */
static bool retry(int e, double until)
{
    if (e == EINTR)
        return true;
    if ((e != EAGAIN && e != EWOULDBLOCK) || mono_now() >= until)
        return false;
    struct timespec ts = {0, RETRY_NSECS};
    nanosleep(&ts, NULL);
    return true;
}

/* Sends line[0..len) on a new connection to addr (a path, or "@name": abstract). Returns 0, or
 * -1 with why (words) filled. */
static int send_line(const char *addr, const char *line, size_t len, char *why, size_t cap)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t alen = strlen(addr);
    if (alen >= sizeof sa.sun_path || (addr[0] == '@' && alen < 2)) {
        snprintf(why, cap, "not a socket address: '%.200s'", addr);
        return -1;
    }
    socklen_t salen = (socklen_t)sizeof sa;
    if (addr[0] == '@') {
        memcpy(sa.sun_path + 1, addr + 1, alen - 1);
        salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + alen);
    } else {
        memcpy(sa.sun_path, addr, alen + 1);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, cap, "socket: %s", strerror(errno));
        return -1;
    }
    double until = mono_now() + SEND_SECS;
    int rc = -1;
    while (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
        if (!retry(errno, until)) {
            snprintf(why, cap, "cannot connect to %.200s: %s", addr, strerror(errno));
            goto out;
        }
    }
    for (size_t off = 0; off < len;) {
        ssize_t n = send(fd, line + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
        } else if (n < 0 && !retry(errno, until)) {
            snprintf(why, cap, "cannot send to %.200s: %s", addr, strerror(errno));
            goto out;
        }
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

int cli_phase_main(cli_options *o)
{
    const char *words[2] = {NULL, NULL};
    int nwords = 0;
    bool verbose = false;
    cli_args args;
    cli_args_init(&args, o, CMD_PHASE, CLI_ARGS_DASH_WORDS);
    for (int k; (k = cli_args_next(&args)) != CLI_ARG_END;) {
        if (k == CLI_ARG_ERROR)
            return EXIT_USAGE;
        if (k == CLI_ARG_OPTION && args.opt->opt == CLI_O_HELP) {
            cli_settings_help_for(stdout, CMD_PHASE, phase_usage, phase_usage_tail);
            return 0;
        }
        if (k == CLI_ARG_OPTION) {
            verbose = true; /* CLI_O_VERBOSE */
        } else if (nwords < 2) {
            words[nwords++] = args.value;
        } else {
            cli_say("phase: one NAME only (quote a name with spaces): "
                    "resource-tracker phase start|stop NAME [-v]");
            return EXIT_USAGE;
        }
    }
    if (nwords < 2) {
        cli_say("phase: usage: resource-tracker phase start|stop NAME [-v]");
        return EXIT_USAGE;
    }
    if (strcmp(words[0], "start") != 0 && strcmp(words[0], "stop") != 0) {
        cli_say("phase: '%.64s' is neither start nor stop", words[0]);
        return EXIT_USAGE;
    }
    const char *addr = getenv("TRACKER_PHASE_SOCKET");
    if (!addr || !addr[0])
        return 0; /* no tracker: the script runs the same */
    /* the line: a control character in the name (a LF or CR would end the line early, a TAB
     * the name) is sent as SUB (0x1a), which the tracker refuses like any control character
     * (counted malformed, one mark) */
    char line[NAME_SENT_MAX + 64];
    size_t n = (size_t)snprintf(line, sizeof line, "%s ", words[0]);
    for (const char *p = words[1]; *p && n < 6 + NAME_SENT_MAX; p++)
        line[n++] = ((unsigned char)*p < 0x20 || *p == 0x7f) ? '\x1a' : *p;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    n += (size_t)snprintf(line + n, sizeof line - n, "\tt=%llu\n",
                          (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
    char why[320];
    if (send_line(addr, line, n, why, sizeof why) < 0 && verbose)
        cli_say("phase: mark not sent: %s", why);
    return 0;
}
