/* recommend.c - resource-tracker recommend (not built yet). */
#include "cli.h"

int cli_recommend_main(cli_options *o)
{
    (void)o;
    cli_say("'recommend' is not available yet in this version");
    return EXIT_USAGE;
}
