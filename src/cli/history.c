/* history.c - resource-tracker history (not built yet). */
#include "cli.h"

int cli_history_main(cli_options *o)
{
    (void)o;
    cli_say("'history' is not available yet in this version");
    return EXIT_USAGE;
}

int cli_history_append(const char *path, const cli_run_result *r)
{
    (void)path;
    (void)r;
    return -1;
}

int cli_history_summaries(const char *path, const char *job, int last, rt_summary **out, size_t *n)
{
    (void)path; (void)job; (void)last;
    *out = NULL;
    *n = 0;
    cli_say("history: not available yet in this version");
    return -1;
}
