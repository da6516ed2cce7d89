/* say.c - the tool's messages: one line on stderr per message, written with one write(2) (or
 * handed to the part that holds stderr meanwhile, which installed its taker here: say.h), and
 * the log callback that hands the library's warnings to it. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "say.h"

static _Atomic(cli_say_taker) takers[CLI_SAY_SLOTS];

void cli_say_install(cli_say_slot slot, cli_say_taker taker)
{
    if (slot < CLI_SAY_SLOTS)
        atomic_store(&takers[slot], taker);
}

/* Hands the line to the takers installed, in their order; false when none took it. */
static bool taken(const char *line, size_t len)
{
    for (size_t i = 0; i < CLI_SAY_SLOTS; i++) {
        cli_say_taker t = atomic_load(&takers[i]);
        if (t && t(line, len))
            return true;
    }
    return false;
}

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
    if (!taken(line, len) && write(STDERR_FILENO, line, len) < 0) {
        /* nowhere left to report */
    }
}

void cli_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN)
        cli_say("%s: %s", level == RT_LOG_ERROR ? "error" : "warning", msg);
}
