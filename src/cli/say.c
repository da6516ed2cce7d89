/* say.c - the tool's messages: one line on stderr per message, written with one write(2) (or
 * queued with the samples when they go to stderr too: outq.c; or, in the human view, after
 * erasing the status line: status.c), and the log callback that hands the library's warnings
 * to it. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "outq.h"
#include "status.h"

void cli_say(const char *fmt, ...)
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
    if (m <= 0)
        return;
    size_t len = (size_t)m < sizeof line ? (size_t)m : sizeof line - 1;
    if (!cli_outq_say(line, len) && !cli_status_say(line, len) && write(STDERR_FILENO, line, len) < 0) {
        /* nowhere left to report */
    }
}

void cli_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN)
        cli_say("%s: %s", level == RT_LOG_ERROR ? "error" : "warning", msg);
}
