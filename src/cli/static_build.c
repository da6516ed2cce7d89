/* static_build.c - what the static build says before anything starts (cmake -DRT_STATIC=ON,
 * docs/install.md): it has no dynamic loader, so libcurl (streaming, OTLP, price lookups), SQLite
 * (the run history) and zlib cannot be loaded. A feature that needs one, asked for on the command
 * line or in the config file, or a subcommand that is nothing but such a feature, is a usage error
 * (exit 2); one set only in the environment (which a whole machine or CI may set for every run) is
 * said once as a warning and left off, and the job runs. In the dynamic build: nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

#define STATIC_ONLY "this static build of resource-tracker cannot load "
#define DYNAMIC_HINT "use the dynamically linked build for it (docs/install.md)"

int cli_static_check(cli_options *o, char *err, size_t errlen)
{
#ifndef RT_STATIC_BUILD
    (void)o, (void)err, (void)errlen;
    return 0;
#else
    if (o->cmd == CMD_HISTORY || o->cmd == CMD_UPLOAD) {
        snprintf(err, errlen, "%s: " STATIC_ONLY "%s: " DYNAMIC_HINT, o->cmd == CMD_HISTORY ? "history" : "upload",
                 o->cmd == CMD_HISTORY ? "SQLite (the run history)" : "libcurl (the uploads)");
        return -1;
    }
    if (o->cmd != CMD_TRACK)
        return 0;
    if (o->args.history || o->file.history) {
        snprintf(err, errlen, "%s: " STATIC_ONLY "SQLite (the run history): " DYNAMIC_HINT,
                 o->args.history ? "--history" : "[history] path");
        return -1;
    }
    if (o->args.otlp || o->file.otlp) {
        snprintf(err, errlen, "%s: " STATIC_ONLY "libcurl (OTLP pushes): " DYNAMIC_HINT,
                 o->args.otlp ? "--otlp" : "[export] otlp");
        return -1;
    }
    if (o->history) {
        cli_say("warning: TRACKER_HISTORY: " STATIC_ONLY "SQLite: the run is not recorded in %s", o->history);
        o->history = NULL;
    }
    if (o->otlp_url) { /* the metrics' own variable first, as export.c takes them */
        const char *m = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
        cli_say("warning: %s: " STATIC_ONLY "libcurl: no OTLP metrics are pushed",
                m && *m ? "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT");
        free(o->otlp_url);
        o->otlp_url = NULL;
        o->otlp_warning[0] = '\0';
    }
    if (o->sentinel_token) {
        cli_say("warning: SENTINEL_API_TOKEN: " STATIC_ONLY "libcurl: not streaming to the Sentinel API (the "
                "samples go only where -o says)");
        cli_free_secret(o->sentinel_token);
        o->sentinel_token = NULL;
    }
    return 0;
#endif
}
