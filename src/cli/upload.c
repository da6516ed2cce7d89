/* upload.c - `resource-tracker upload`: delivers the runs left in the spill directory and its
 * fallbacks (runs that could not register, or could not send every batch, by their end) through
 * rt_stream_deliver, for cron or for CI after an outage, naming each run it delivers; and
 * `upload --list`, what is left there (rt_stream_list). Reads the streaming environment as a
 * tracking run does (SENTINEL_API_TOKEN, SENTINEL_API_URL, AWS_ENDPOINT_URL_S3, AWS_REGION,
 * XDG_STATE_HOME, XDG_RUNTIME_DIR, TRACKER_FINISH_TIMEOUT: the time each run is given). Exit 0
 * when nothing is left, 1 when anything is left (each run said on stderr, with why), 2 on a
 * usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "settings.h"

static const char usage[] =
    "Usage: resource-tracker upload [--list]\n"
    "\n"
    "Delivers the runs left in the spill directory ($XDG_STATE_HOME/resource-tracker, else\n"
    "~/.local/state/resource-tracker; and where a run fell back to when that could not be its own:\n"
    "$XDG_RUNTIME_DIR/resource-tracker, /tmp/resource-tracker-UID, /tmp/resource-tracker-UID-XXXXXX):\n"
    "registers each run that never could (with its own metadata), uploads its batches in order and\n"
    "finishes it with its own exit status and time; the rest of a run that was finished already goes\n"
    "to S3 under its run. Each run delivered is named. Only the runs made with this\n"
    "SENTINEL_API_TOKEN and SENTINEL_API_URL are sent: another's are left alone (one line says how\n"
    "many). A run that a live tracker or another upload holds is left alone. A spill file that is\n"
    "missing or damaged is skipped with a warning (kept as NAME.damaged); a run whose record is\n"
    "damaged or missing is kept and said. A --history row that could not be written (the history\n"
    "locked by another writer past 10 s) and was kept in the state directory is written to its\n"
    "history, once (no token needed for that). For cron, or CI after an outage.\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char usage_tail[] =
    "\n"
    "Environment: SENTINEL_API_TOKEN (needed to send), SENTINEL_API_URL, AWS_ENDPOINT_URL_S3,\n"
    "AWS_REGION, XDG_STATE_HOME, XDG_RUNTIME_DIR, TRACKER_FINISH_TIMEOUT (the seconds each run gets;\n"
    "default 10).\n"
    "\n"
    "Exit status: 0 nothing is left (with --list: listed); 1 something is left for a later try or\n"
    "cannot be delivered (said on stderr); 2 a usage error, or SENTINEL_API_TOKEN not set.\n";

/* The deliveries' messages: what went (the library's "deliver: run ... delivered" lines) and
 * every warning. */
static void upload_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    if (level >= RT_LOG_WARN)
        cli_log(NULL, level, msg);
    else if (strncmp(msg, "deliver: ", 9) == 0)
        cli_say("upload: %s", msg + 9);
}

/* One line a run for --list. */
typedef struct listing {
    unsigned count;
    char dir[4096]; /* the directory of the runs listed last */
} listing;

static void list_one(const rt_spilled_run *r, void *user)
{
    listing *l = user;
    l->count++;
    if (strcmp(l->dir, r->dir) != 0) {
        printf("%s:\n", r->dir);
        snprintf(l->dir, sizeof l->dir, "%s", r->dir);
    }
    char end[64], missing[64] = "";
    if (r->ended)
        snprintf(end, sizeof end, "exit %d", r->exit_code);
    else
        snprintf(end, sizeof end, "no end recorded");
    if (r->missing)
        snprintf(missing, sizeof missing, ", %u missing", r->missing);
    const char *whose = r->damaged ? "its record is damaged or missing: cannot be delivered"
                        : r->held  ? "held by a live tracker or an upload"
                        : r->ours  ? "made with this token and API URL"
                                   : "made with another token or API URL";
    printf("  %s  %s%s  %u batch%s, %" PRIu64 " rows%s  %s%s  %s\n", r->key, r->run_id[0] ? "run " : "",
           r->run_id[0] ? r->run_id
           : r->damaged ? "?"
                        : "not registered",
           r->batches, r->batches == 1 ? "" : "es", r->rows, missing, end,
           r->finish_sent ? ", finished at the API" : "", whose);
}

int cli_upload_main(cli_options *o)
{
    bool list = false;
    int done = cli_args_switch(o, CMD_UPLOAD, &list, usage, usage_tail);
    if (done >= 0)
        return done;
    char err[1024];
    if (cli_merge(o, err, sizeof err) < 0) { /* the environment, streaming's included (options.c) */
        cli_say("%s", err);
        return EXIT_USAGE;
    }
    rt_stream_options so = RT_STREAM_OPTIONS_INIT;
    cli_stream_options(o, &so);
    so.log = upload_log;
    if (list) {
        listing n = {0};
        rt_error e = rt_stream_list(&so, list_one, &n);
        if (e != RT_OK) {
            cli_say("upload: %s", rt_strerror(e));
            return EXIT_FAIL;
        }
        if (!n.count)
            printf("nothing left in %s\n", so.spill_dir ? so.spill_dir : "the spill directory");
        return 0;
    }
    unsigned rows = 0, rows_left = 0; /* history rows kept for later: written, with or without a token */
    cli_history_deliver(NULL, &rows, &rows_left);
    if (!o->sentinel_token) {
        if (rows || rows_left)
            return rows_left ? EXIT_FAIL : 0;
        cli_say("upload: SENTINEL_API_TOKEN is not set");
        return EXIT_USAGE;
    }
    unsigned delivered = 0, left = 0;
    rt_error e = rt_stream_deliver(&so, &delivered, &left);
    if (e == RT_OK || e == RT_ERR_IO) {
        if (left)
            cli_say("upload: %u run%s delivered, %u left for a later try (`resource-tracker upload --list` shows them)",
                    delivered, delivered == 1 ? "" : "s", left);
        return left || rows_left ? EXIT_FAIL : 0;
    }
    cli_say("upload: %s", rt_strerror(e));
    return EXIT_FAIL;
}
