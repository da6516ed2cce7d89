/* summary.c - resource-tracker summary (not built yet). */
#include "cli.h"

int cli_summary_main(cli_options *o)
{
    (void)o;
    cli_say("'summary' is not available yet in this version");
    return EXIT_USAGE;
}
