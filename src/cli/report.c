/* report.c - resource-tracker report (not built yet). */
#include "cli.h"

int cli_report_main(cli_options *o)
{
    (void)o;
    cli_say("'report' is not available yet in this version");
    return EXIT_USAGE;
}

int cli_report_run(cli_options *o, const char *path, rt_report *rep, const cli_run_result *run)
{
    (void)o; (void)path; (void)rep; (void)run;
    cli_say("warning: --report: not available yet in this version");
    return -1;
}
