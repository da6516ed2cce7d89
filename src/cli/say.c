/* say.c - the tool's messages: one line on stderr per message, written with one write(2) (or
 * queued with the samples when they go to stderr too: outq.c; or, in the human view, after
 * erasing the status line: status.c), and the log callback that hands the library's warnings
 * to it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "outq.h"
#include "status.h"

void cli_say(const char *fmt, ...)
{
    static const char who[] = "resource-tracker: ";
    char line[2048 + sizeof who];
    memcpy(line, who, sizeof who - 1);
    char *msg = line + sizeof who - 1;
    size_t room = sizeof line - (sizeof who - 1) - 1; /* the newline's byte kept */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)(msg - line) + ((size_t)n < room ? (size_t)n : room - 1);
    line[len++] = '\n';
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
