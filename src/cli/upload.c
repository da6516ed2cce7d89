/* upload.c - `resource-tracker upload`: delivers the runs left in the spill directory (runs that
 * could not register, or could not send every batch, by their end) through rt_stream_deliver,
 * for cron or for CI after an outage. Reads the streaming environment as a tracking run does
 * (SENTINEL_API_TOKEN, SENTINEL_API_URL, AWS_ENDPOINT_URL_S3, AWS_REGION, XDG_STATE_HOME,
 * TRACKER_FINISH_TIMEOUT: the time each run is given). Exit 0 when nothing is left, 1 when some
 * runs are left for a later try (each said on stderr), 2 on a usage error. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_upload_main(cli_options *o)
{
    if (o->nsub == 1 && (strcmp(o->sub_args[0], "--help") == 0 || strcmp(o->sub_args[0], "-h") == 0)) {
        fputs("Usage: resource-tracker upload\n"
              "\n"
              "Delivers the runs left in the spill directory ($XDG_STATE_HOME/resource-tracker, else\n"
              "~/.local/state/resource-tracker): registers each run that never could (with its own\n"
              "metadata), uploads its batches in order and finishes it with its own exit status and time;\n"
              "the rest of a run that was finished already goes to S3 under its run. A run that a live\n"
              "tracker or another upload holds is left alone. A spill file that is missing or damaged is\n"
              "skipped with a warning and kept as NAME.damaged. For cron, or CI after an outage.\n"
              "\n"
              "Options:\n"
              "  -h, --help   this text, exit 0\n"
              "\n"
              "Environment: SENTINEL_API_TOKEN (needed), SENTINEL_API_URL, AWS_ENDPOINT_URL_S3, AWS_REGION,\n"
              "XDG_STATE_HOME, TRACKER_FINISH_TIMEOUT (the seconds each run gets; default 10).\n"
              "\n"
              "Exit status: 0 nothing is left; 1 some runs are left for a later try (said on stderr);\n"
              "2 a usage error, or SENTINEL_API_TOKEN not set.\n",
              stdout);
        return 0;
    }
    if (o->nsub > 0) {
        cli_say("upload: unexpected argument '%s' (upload takes none)", o->sub_args[0]);
        return EXIT_USAGE;
    }
    char err[1024];
    if (cli_merge(o, err, sizeof err) < 0) { /* the environment, streaming's included (options.c) */
        cli_say("%s", err);
        return EXIT_USAGE;
    }
    if (!o->sentinel_token) {
        cli_say("upload: SENTINEL_API_TOKEN is not set");
        return EXIT_USAGE;
    }
    rt_stream_options so = RT_STREAM_OPTIONS_INIT;
    cli_stream_options(o, &so);
    unsigned delivered = 0, left = 0;
    rt_error e = rt_stream_deliver(&so, &delivered, &left);
    if (e == RT_OK || e == RT_ERR_IO) {
        if (left)
            cli_say("upload: %u run%s delivered, %u left for a later try", delivered, delivered == 1 ? "" : "s", left);
        return left ? EXIT_FAIL : 0;
    }
    cli_say("upload: %s", rt_strerror(e));
    return EXIT_FAIL;
}
