/* lookup.c - the Spare Cores Keeper lookups that recommend and report make, under one deadline:
 * the cheapest server for a recommendation, the cheapest with GPUs like the job's where a smaller
 * GPU would do (the saving of the GPU ask), and the price of a known instance, in CLI_LOOKUP_SECS
 * at most in all; the others are not asked once the first lookup found Keeper down or unusable.
 * A failure is one quiet line in the answer (cli_prices_line), never a warning on stderr: the
 * price is an extra, and offline it fails every time. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Keeps the last warning of a lookup in msg, and passes every message on to fwd (when set). */
typedef struct capture {
    rt_log_fn fwd;
    void *fwd_user;
    char *msg;
    size_t cap;
} capture;

static void capture_log(void *user, rt_log_level level, const char *msg)
{
    capture *c = user;
    if (level >= RT_LOG_WARN && c->msg)
        snprintf(c->msg, c->cap, "%s", msg);
    if (c->fwd)
        c->fwd(c->fwd_user, level, msg);
}

/* When a smaller GPU would do and the cheapest server for rec was found: the cheapest with as
 * many GPUs of the memory the job's had (its whole memory, MiB), what the saving is against; no
 * warning of its own (the first lookup said whether Keeper answers). */
static void like_lookup(rt_keeper_options *ko, double deadline, const rt_recommendation *rec, cli_lookup *out)
{
    if (out->cheapest_err != RT_OK || rec->struct_size < sizeof *rec || !rec->gpu_smaller ||
        !(rec->gpu_memory_had_mib > 0))
        return;
    ko->timeout_secs = deadline - cli_mono_secs();
    if (ko->timeout_secs < 0.01)
        return;
    rt_recommendation like = *rec;
    like.vram_per_gpu_mib = (int64_t)floor(rec->gpu_memory_had_mib);
    rt_keeper_options quiet = *ko; /* a failure here leaves the saving out, and says nothing */
    quiet.log = NULL;
    quiet.offline_why = NULL;
    quiet.offline_why_cap = 0;
    out->like_err = rt_keeper_cheapest(&quiet, &like, &out->like);
}

void cli_keeper_lookup(const char *url, rt_log_fn log, void *log_user, const rt_recommendation *rec,
                       const char *vendor, const char *type, const char *region, cli_lookup *out)
{
    memset(out, 0, sizeof *out);
    out->cheapest = (rt_server)RT_SERVER_INIT;
    out->cheapest_err = out->price_err = out->like_err = RT_ERR_DISABLED;
    out->like = (rt_server)RT_SERVER_INIT;
    out->price = NAN;
    double deadline = cli_mono_secs() + CLI_LOOKUP_SECS;
    capture c = {log, log_user, out->cheapest_warning, sizeof out->cheapest_warning};
    rt_keeper_options ko = RT_KEEPER_OPTIONS_INIT;
    ko.url = url;
    ko.timeout_secs = CLI_LOOKUP_SECS;
    ko.log = capture_log;
    ko.log_user = &c;
    ko.offline_why = out->offline;
    ko.offline_why_cap = sizeof out->offline;
    if (rec) {
        out->cheapest_err = rt_keeper_cheapest(&ko, rec, &out->cheapest);
        if (out->cheapest_err != RT_OK && out->cheapest_err != RT_ERR_NOT_FOUND)
            return; /* Keeper is down or unusable: do not wait on it twice */
        like_lookup(&ko, deadline, rec, out);
    }
    if (!vendor || !type)
        return;
    ko.timeout_secs = deadline - cli_mono_secs();
    if (ko.timeout_secs < 0.01) {
        out->price_late = true;
        return;
    }
    c.msg = out->price_warning;
    c.cap = sizeof out->price_warning;
    out->price_err = rt_keeper_price(&ko, vendor, type, region, &out->price);
    if (out->price_err != RT_OK)
        out->price = NAN;
}

const char *cli_prices_line(const cli_lookup *k, const char *what, const char *warning, rt_error err, char *buf,
                            size_t cap)
{
    if (k->offline[0])
        snprintf(buf, cap, "%s: offline (Keeper not reached: %s; " CLI_PRICES_STOP ")", what, k->offline);
    else
        snprintf(buf, cap, "%s: unavailable (%s; " CLI_PRICES_STOP ")", what,
                 warning && *warning ? warning : rt_strerror(err));
    return buf;
}
