/* report.c - resource-tracker report (not built yet). */
#include "cli.h"

int cli_report_main(cli_options *o)
{
    (void)o;
    cli_say("'report' is not available yet in this version");
    return EXIT_USAGE;
}
