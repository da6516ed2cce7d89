/* static_build.c - what the static build says before anything starts (cmake -DRT_STATIC=ON,
 * docs/install.md): it has no dynamic loader of its own, so libcurl (streaming, OTLP, uploads,
 * price lookups) and SQLite (the run history) are the target machine's, reached through the
 * loader helper (resource_tracker/helper.h, sqlite.h), which needs the target's glibc and the
 * library. A feature that needs one the target lacks, asked for on the command line or in the
 * config file, or a subcommand that is nothing but such a feature, is a usage error (exit 2)
 * naming what is missing; one set only in the environment (which a whole machine or CI may set
 * for every run) is said once as a warning and left off, and the job runs. In the dynamic build:
 * nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "settings.h"

#define STATIC_ONLY "this static build of resource-tracker uses the machine's own "
#define DYNAMIC_HINT "docs/install.md"

#ifdef RT_STATIC_BUILD
/* Whether the target's libcurl can be had (asked of a helper once); why not in why. */
static bool have_curl(char *why, size_t cap)
{
    static int known; /* 0 unknown, 1 yes, -1 no */
    static char reason[300];
    if (!known) {
        char e[260] = "";
        known = rt_helper_probe("curl", e, sizeof e) == RT_OK ? 1 : -1;
        if (strncmp(e, "cannot load ", 12) == 0) /* the helper's own words */
            snprintf(reason, sizeof reason, "%s", e);
        else
            snprintf(reason, sizeof reason, "cannot load libcurl.so.4: %s", e);
    }
    snprintf(why, cap, "%s", reason);
    return known > 0;
}

static bool have_sqlite(char *why, size_t cap)
{
    return rt_sqlite_load(why, cap) == RT_OK;
}
#endif

int cli_static_check(cli_options *o, char *err, size_t errlen)
{
#ifndef RT_STATIC_BUILD
    (void)o, (void)err, (void)errlen;
    return 0;
#else
    char why[300];
    if ((o->cmd == CMD_HISTORY && !have_sqlite(why, sizeof why)) ||
        (o->cmd == CMD_UPLOAD && !have_curl(why, sizeof why))) {
        snprintf(err, errlen, "%s: " STATIC_ONLY "%s, and here it %s (" DYNAMIC_HINT ")",
                 o->cmd == CMD_HISTORY ? "history" : "upload",
                 o->cmd == CMD_HISTORY ? "SQLite (the run history)" : "libcurl (the uploads)", why);
        return -1;
    }
    if (o->cmd != CMD_TRACK)
        return 0;
    if ((o->args.history || o->file.history) && !have_sqlite(why, sizeof why)) {
        snprintf(err, errlen, "%s: " STATIC_ONLY "SQLite (the run history), and here it %s (" DYNAMIC_HINT ")",
                 o->args.history ? "--history" : "[history] path", why);
        return -1;
    }
    if ((o->args.otlp || o->file.otlp) && !have_curl(why, sizeof why)) {
        snprintf(err, errlen, "%s: " STATIC_ONLY "libcurl (OTLP pushes), and here it %s (" DYNAMIC_HINT ")",
                 o->args.otlp ? "--otlp" : "[export] otlp", why);
        return -1;
    }
    if (o->history && !have_sqlite(why, sizeof why)) {
        cli_say("warning: TRACKER_HISTORY: " STATIC_ONLY "SQLite, and here it %s: the run is not recorded in %s", why,
                o->history);
        o->history = NULL;
    }
    if (o->otlp_url && !have_curl(why, sizeof why)) { /* the metrics' own variable first, as export.c takes them */
        const char *var;
        cli_setting_getenv(cli_setting_by_env("OTEL_EXPORTER_OTLP_ENDPOINT"), &var);
        cli_say("warning: %s: " STATIC_ONLY "libcurl, and here it %s: no OTLP metrics are pushed", var, why);
        free(o->otlp_url);
        o->otlp_url = NULL;
        o->otlp_warning[0] = '\0';
    }
    if (o->sentinel_token && !have_curl(why, sizeof why)) {
        cli_say("warning: SENTINEL_API_TOKEN: " STATIC_ONLY "libcurl, and here it %s: not streaming to the Sentinel "
                "API (the samples go only where -o says)",
                why);
        cli_free_secret(o->sentinel_token);
        o->sentinel_token = NULL;
    }
    return 0;
#endif
}
