/* step_summary.c - a tracking run's Markdown summary appended to GitHub Actions' job summary:
 * when GITHUB_ACTIONS=true and GITHUB_STEP_SUMMARY names a file (unless --step-summary off,
 * TRACKER_STEP_SUMMARY=off, [tracker] step_summary = false), the run as
 * rt_report_write_markdown_cb writes it, appended (never truncated) and kept under GitHub's
 * 1 MiB a step: past it a one-line note, or nothing. A file that cannot be written is one
 * warning; the job's exit status and every other output stand. Never blocking: a FIFO is
 * waited for within TRACKER_FINISH_TIMEOUT (finish.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <unistd.h>

#include "cli.h"

#define STEP_LIMIT (1u << 20) /* GitHub's bound on one step's summary */
#define STEP_MAX_TEXT ((size_t)(STEP_LIMIT - 4096u))

/* The file the step summary goes to, NULL when none is wanted. */
const char *cli_step_summary_path(const cli_options *o)
{
    const char *gha = getenv("GITHUB_ACTIONS"), *path = getenv("GITHUB_STEP_SUMMARY");
    if (o->step_summary_off || !gha || strcmp(gha, "true") != 0 || !path || !*path)
        return NULL;
    return path;
}

/* The text, gathered: the whole of it is known before a byte goes to the file. */
typedef struct gather {
    char *data;
    size_t len, cap;
} gather;

static long gather_write(void *user, const void *buf, size_t n)
{
    gather *g = user;
    if (n > STEP_LIMIT || g->len + n > 4 * (size_t)STEP_LIMIT) /* the library keeps far under it */
        return -1;
    if (g->len + n > g->cap) {
        size_t cap = g->cap ? g->cap : 16384;
        while (cap < g->len + n)
            cap *= 2;
        char *d = realloc(g->data, cap);
        if (!d)
            return -1;
        g->data = d;
        g->cap = cap;
    }
    memcpy(g->data + g->len, buf, n);
    g->len += n;
    return (long)n;
}

void cli_step_summary(const cli_options *o, const rt_report *rep, const cli_run_result *run)
{
    const char *path = cli_step_summary_path(o);
    if (!path || !run->summary)
        return;
    /* never blocking (finish.c): a FIFO's reader is waited for, then given what it takes, for
     * TRACKER_FINISH_TIMEOUT each, never a tracker that does not exit */
    double wait = o->finish_timeout > 0 ? o->finish_timeout : 10.0;
    char why[256];
    bool refused = false;
    int fd = cli_late_open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY, 0644, cli_mono_secs() + wait, &refused);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (!cli_finish_cut())
            cli_say("warning: GITHUB_STEP_SUMMARY: cannot append to %s: %s", path,
                    refused ? cli_refused_why() : cli_late_why(why, sizeof why, e, NULL, wait));
        if (fd >= 0)
            close(fd);
        return;
    }
    /* what is there already counts: a file that is not a plain one (a pipe) has no size */
    size_t used = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
    size_t sep = used > 0 ? 1 : 0; /* a blank line apart from what came before */
    size_t room = used + sep < STEP_LIMIT ? STEP_LIMIT - used - sep : 0;

    char command[2048] = "";
    size_t n = 0;
    for (char *const *w = run->command; w && *w && n < sizeof command - 1; w++) {
        int m = snprintf(command + n, sizeof command - n, "%s%s", n ? " " : "", *w);
        n = m < 0 ? n : n + (size_t)m;
    }
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.job = run->job;
    info.command = *command ? command : NULL;
    info.exit_status = run->exit_status;
    info.summary = run->summary;
    info.cgroup_why = run->cgroup_why;
    rt_markdown_options mo = RT_MARKDOWN_OPTIONS_INIT;
    mo.scheduler = cli_scheduler_of(run->job);
    mo.max_bytes = room < STEP_MAX_TEXT ? (room > 0 ? room : 1) : STEP_MAX_TEXT;
    gather g = {0};
    char kept[4400] = ""; /* where the samples are: the log view's file in the runner's temporary directory */
    if (o->output && strcmp(o->output, "-") != 0 && strlen(o->output) < 4000)
        snprintf(kept, sizeof kept, "\nSamples: `%s` (`resource-tracker summary FILE`, `resource-tracker report FILE -o "
                 "run.html`)\n", o->output);
    if (mo.max_bytes > strlen(kept) + 1)
        mo.max_bytes -= strlen(kept);
    rt_error e = rt_report_write_markdown_cb(rep, &info, &mo, gather_write, &g);
    if (e == RT_OK && *kept && gather_write(&g, kept, strlen(kept)) < 0)
        e = RT_ERR_NOMEM;
    const char *text = NULL; /* what is appended after the separator, len bytes */
    size_t len = 0;
    char line[256];
    if (e != RT_OK) {
        cli_say("warning: GITHUB_STEP_SUMMARY: no summary for this run: %s", rt_strerror(e));
    } else if (g.len + sep <= room) {
        text = g.data;
        len = g.len;
    } else {
        /* its answer alone would pass GitHub's bound: a line saying so, when even that fits */
        int k = snprintf(line, sizeof line,
                         "resource-tracker: this run's summary (%zu bytes) is left out: the step summary holds %zu of "
                         "GitHub's %u bytes.\n",
                         g.len, used, STEP_LIMIT);
        cli_say("warning: GITHUB_STEP_SUMMARY: %s holds %zu bytes: this run's summary (%zu bytes) would pass GitHub's "
                "1 MiB a step; %s",
                path, used, g.len, k > 0 && (size_t)k + sep <= room ? "a one-line note written instead" : "nothing written");
        if (k > 0 && (size_t)k + sep <= room) {
            text = line;
            len = (size_t)k;
        }
    }
    cli_late_file lf = {.fd = fd, .deadline = cli_mono_secs() + wait};
    int en = 0;
    if (text && (cli_late_write_all(&lf, "\n", sep) < 0 || cli_late_write_all(&lf, text, len) < 0))
        en = errno;
    free(g.data);
    if (close(fd) < 0 && text && !en && errno != EINTR)
        en = errno;
    if (en && !cli_finish_cut())
        cli_say("warning: GITHUB_STEP_SUMMARY: cannot append to %s: %s", path,
                cli_late_why(why, sizeof why, en, &lf, wait));
}
