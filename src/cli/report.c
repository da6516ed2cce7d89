/* report.c - resource-tracker report FILE... -o OUT.html [--instance VENDOR:TYPE]: reads one or
 * more recorded runs of a job, and writes the self-contained HTML report: charts of every
 * record in file order, the statistics, the recommendation from all runs, the cheapest server. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "settings.h"

typedef struct report_args {
    const char *out;
    const char *instance;      /* "vendor:type", or NULL */
    char vendor[CLI_VENDOR_CAP], type[CLI_TYPE_CAP]; /* instance split */
    char **files;
    int nfiles;
    const char *grid_zone; /* --grid-zone, --grid-intensity: the runs' grid (grid.c) */
    double grid_intensity;
} report_args;

static const char report_usage[] = "usage: resource-tracker report FILE... -o OUT.html [--instance VENDOR:TYPE] "
                                   "[--grid-zone ZONE] [--grid-intensity G]";

/* --help before its options: the same facts as docs/resource-tracker-report.1. */
static const char report_help[] =
    "Usage: resource-tracker report FILE... -o OUT.html [--instance VENDOR:TYPE]\n"
    "                               [--grid-zone ZONE] [--grid-intensity G]\n"
    "\n"
    "Writes one self-contained HTML report (no request: the chart library is embedded) of one or\n"
    "more recorded runs of a job: the answer first (what the job used, what to ask for next time in\n"
    "the words of Metaflow, Kubernetes and SLURM, the energy and its CO2e, the notes, the exit\n"
    "status), then charts over time of the job's and the machine's CPU, memory, GPU, disk, network\n"
    "and power (its method in the title; long runs reduced to about 2,000 points a series, with a\n"
    "min/max band), the summary, the cheapest cloud server that fits\n"
    "and the run's cost there (Spare Cores Keeper API: TRACKER_KEEPER_URL, 5 s at most), host,\n"
    "cloud, job and command. FILE is the tool's JSON lines or CSV, the Python resource-tracker's\n"
    "CSV, or a saved snapshot (gzipped or not), told by its content; \"-\" is stdin. Several files\n"
    "are several runs of one job; a directory stands for its run files. The files of a job that\n"
    "ran on several nodes make the job's page: the job on its nodes first (the ask per node, a row\n"
    "per node), then the page of the node whose memory sized the ask; files of another job are\n"
    "left out. A tracking run writes the same page with --report FILE. JSON\n"
    "lines and CSV are read as a stream, in under 64 MiB of memory; a line over 16 MiB is an\n"
    "error naming the file and the line (exit 2).\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char report_help_tail[] =
    "\n"
    "Exit status: 0 written (also when the price lookup fails: one line of the page says why); 1 the\n"
    "report could not be written; 2 a usage error, or a FILE that cannot be read or has no valid\n"
    "sample.\n";

/* Parses o->sub_args into *a (a->files points into them). Returns 0, 1 after --help
 * (printed), or -1 after saying what is wrong. */
static int parse(cli_options *o, report_args *a)
{
    cli_args args;
    cli_args_init(&args, o, CMD_REPORT, 0);
    for (int k; (k = cli_args_next(&args)) != CLI_ARG_END;) {
        const char *v = args.value;
        cli_value val;
        if (k == CLI_ARG_ERROR)
            return -1;
        if (k == CLI_ARG_WORD) { /* a file ("-": stdin) */
            a->files[a->nfiles++] = args.argv[args.at];
            continue;
        }
        if (v && cli_args_value(&args, &val) < 0) /* each value through its row */
            return -1;
        switch (args.opt->opt) {
        case CLI_O_HELP: cli_settings_help_for(stdout, CMD_REPORT, report_help, report_help_tail); return 1;
        case CLI_O_NO_PRICE_LOOKUP: o->keeper_url = "off"; break;
        case CLI_O_OUTPUT: a->out = v; break;
        case CLI_O_INSTANCE: /* VENDOR:TYPE, its parts fitting (CLI_T_INSTANCE) */
            cli_instance_split(v, a->vendor, a->type);
            a->instance = v;
            break;
        case CLI_O_GRID_ZONE: a->grid_zone = v; break;
        default: a->grid_intensity = val.num; break; /* CLI_O_GRID_INTENSITY */
        }
    }
    if (a->nfiles == 0) {
        cli_say("report: no FILE given (%s)", report_usage);
        return -1;
    }
    if (!a->out) {
        cli_say("report: no output file: add -o OUT.html (%s)", report_usage);
        return -1;
    }
    return 0;
}

/* Appends one sentence to the note (note[cap]), a space before it when the note has some. */
__attribute__((format(printf, 3, 4))) static void note_add(char *note, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(note);
    if (used > 0 && used + 1 < cap) {
        note[used++] = ' ';
        note[used] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + used, cap - used, fmt, ap); /* a cut note is still a note */
    va_end(ap);
}

/* The Keeper lookups: the cheapest server for rec (and, where a smaller GPU would do, the cheapest
 * with GPUs like the job's: *like), and the price of --instance, CLI_LOOKUP_SECS
 * at most in all; when the first finds Keeper down or unusable the second is not tried.
 * Failures become one quiet line in the report (note[cap]: cli_prices_line, "prices: offline
 * (...)" without a network), never an error nor a warning on stderr; none when the lookups are
 * off (TRACKER_KEEPER_URL=off). */
static void keeper_lookups(cli_options *o, const char *vendor, const char *type, const char *region,
                           const rt_recommendation *rec, rt_server *cheapest, bool *have_cheapest, rt_server *like,
                           bool *have_like, double *price, char *note, size_t cap)
{
    cli_lookup k;
    char line[1024], what[220];
    cli_keeper_lookup(o->keeper_url, NULL, NULL, rec, vendor, type, region, &k);
    bool failed = false;
    if (rec) {
        *cheapest = k.cheapest;
        *have_cheapest = k.cheapest_err == RT_OK;
        *like = k.like; /* 0.19: GPUs like the job's, where a smaller one would do */
        *have_like = k.like_err == RT_OK;
        if (k.cheapest_err == RT_ERR_NOT_FOUND)
            note_add(note, cap, "No server on offer fits the recommendation.");
        else if (k.cheapest_err != RT_OK && k.cheapest_err != RT_ERR_DISABLED) {
            note_add(note, cap, "%s", cli_prices_line(&k, "prices", k.cheapest_warning, k.cheapest_err, line, sizeof line));
            failed = true;
        }
    }
    if (k.price_late)
        note_add(note, cap, "No time left for the price of %s:%s.", vendor, type);
    else if (k.price_err != RT_ERR_DISABLED) {
        *price = k.price;
        if (k.price_err != RT_OK && !failed) {
            /* the cheapest server was found (or not asked): the line names what is missing */
            if (*have_cheapest)
                snprintf(what, sizeof what, "price of %s:%s", vendor, type);
            else
                snprintf(what, sizeof what, "prices");
            if (k.price_err == RT_ERR_NOT_FOUND)
                note_add(note, cap, "Spare Cores Keeper knows no on-demand Linux price of %s:%s.", vendor, type);
            else
                note_add(note, cap, "%s", cli_prices_line(&k, what, k.price_warning, k.price_err, line, sizeof line));
        }
    }
}

/* Writes the report of rep to out ("-": stdout): the recommendation from runs (read from the
 * files names, or NULL), the Keeper lookups (the price of vendor:type in region when given),
 * and what run tells of a tracking run (NULL for recorded files). Returns 0, or 1 after saying
 * why. */
static int write_report(cli_options *o, const char *out, rt_report *rep, const rt_summary *sum,
                        const rt_summary *const *runs, char *const *names, size_t nruns, const char *vendor, const char *type,
                        const char *region, const cli_run_result *run, const rt_job_view *view, const char *shown)
{
    /* the output first: a file that cannot be made fails now, not after the lookups. Never
     * blocking: a FIFO's reader is waited for, and then given what it takes, for
     * TRACKER_FINISH_TIMEOUT each (finish.c); a tracking run's failure is a warning */
    const char *warn = run ? "warning: " : "";
    bool to_stdout = strcmp(out, "-") == 0;
    bool refused = false; /* a symlink planted in a shared directory (secure.c) */
    double wait = o->finish_timeout > 0 ? o->finish_timeout : 10.0;
    char why[256];
    int fd = to_stdout ? STDOUT_FILENO
                       : cli_late_open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666, cli_mono_secs() + wait, &refused);
    if (fd < 0) {
        int e = errno;
        if (!cli_finish_cut()) /* else said once for every output left out */
            cli_say("%sreport: %s: %s", warn, out,
                    refused ? cli_refused_why() : cli_late_why(why, sizeof why, e, NULL, wait));
        return refused && !run ? EXIT_USAGE : EXIT_FAIL;
    }
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    bool have_rec = rt_recommend(runs, nruns, &rec) == RT_OK;
    rt_server cheapest = RT_SERVER_INIT, like = RT_SERVER_INIT;
    bool have_cheapest = false, have_like = false;
    double price = NAN;
    char note[1536] = "";
    if (!have_rec) {
        size_t i = 0;
        while (i + 1 < nruns && runs[i] && runs[i]->has_process)
            i++;
        if (names && nruns > 1)
            note_add(note, sizeof note, "No recommendation: %s has no tracked process tree.", names[i]);
        else
            note_add(note, sizeof note, "No recommendation: the run has no tracked process tree.");
    }
    keeper_lookups(o, vendor, type, region, have_rec ? &rec : NULL, &cheapest, &have_cheapest, &like, &have_like,
                   &price, note, sizeof note);

    rt_job job = RT_JOB_INIT;
    job.job_name = sum->job_name;
    char instance[200] = "", command[2048] = "";
    if (vendor && type)
        snprintf(instance, sizeof instance, "%s:%s", vendor, type);
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.job = run && run->job ? run->job : &job;
    info.summary = sum;
    info.recommendation = have_rec ? &rec : NULL;
    info.cheapest = have_cheapest ? &cheapest : NULL;
    info.gpu_like_this = have_like ? &like : NULL;
    info.keeper_note = *note ? note : NULL;
    info.current_instance = *instance ? instance : NULL;
    info.current_price_usd_per_hour = price;
    info.job_view = view;
    info.node_shown = shown;
    if (run) {
        info.host = run->host;
        info.cloud = run->cloud;
        info.exit_status = run->exit_status;
        info.cgroup_why = run->cgroup_why;
        size_t n = 0;
        for (char *const *w = run->command; w && *w && n < sizeof command - 1; w++) {
            int m = snprintf(command + n, sizeof command - n, "%s%s", n ? " " : "", *w);
            n = m < 0 ? n : n + (size_t)m;
        }
        info.command = *command ? command : NULL;
    }

    cli_late_file lf = {.fd = fd, .deadline = cli_mono_secs() + wait};
    rt_error e = to_stdout ? rt_report_write(rep, &info, fd) : rt_report_write_cb(rep, &info, cli_late_write, &lf);
    int err = errno;
    if (!to_stdout && close(fd) < 0 && e == RT_OK) {
        e = RT_ERR_IO;
        err = errno;
    }
    if (e != RT_OK) {
        if (!cli_finish_cut())
            cli_say("%sreport: %s: %s", warn, out,
                    e == RT_ERR_IO ? cli_late_why(why, sizeof why, err, &lf, wait) : rt_strerror(e));
        return EXIT_FAIL;
    }
    if (run && !to_stdout && !o->quiet && !cli_finish_cut()) /* where it went, as the start line says -o's */
        cli_say("report written to %s", out);
    return 0;
}

/* The job's page when runs[0..n) (read from paths) hold two runs or more of one job (the others
 * said left out): its view, and the run shown below it read again into a fresh rep and *all.
 * 0 and *view (NULL: not a job's files; rt_job_view_free), or the exit status after saying why. */
static int job_page(const rt_summary *const *runs, char *const *paths, size_t n, const rt_grid *grid, rt_report **rep,
                    rt_stats **all, rt_job_view **view, size_t *shown)
{
    *view = NULL;
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    const rt_summary **job = calloc(n ? n : 1, sizeof *job);
    int rc = idx && job ? 0 : EXIT_FAIL;
    size_t k = rc == 0 ? cli_job_runs("report", runs, paths, n, idx) : 0;
    for (size_t i = 0; i < k; i++)
        job[i] = runs[idx[i]];
    if (k >= 2 && rt_job_view_new(job, k, view) != RT_OK)
        rc = EXIT_FAIL;
    if (rc == 0 && *view) {
        *shown = idx[cli_job_shown(*view, job, k)];
        if (strcmp(paths[*shown], "-") == 0) {
            cli_say("report: the page shows the node %s's run over time, and it came from stdin: give its file by "
                    "name", (*view)->nodes[(*view)->memory_most].node);
            rc = EXIT_USAGE;
        }
    }
    if (rc == 0 && *view) { /* the charts and the summary below: the shown run's alone */
        rt_report_free(*rep);
        rt_stats_free(*all);
        *rep = NULL;
        *all = NULL;
        if (rt_report_new_with(NULL, rep) != RT_OK || rt_stats_new_with(NULL, all) != RT_OK)
            rc = EXIT_FAIL;
        else {
            rt_stats_set_grid(*all, grid);
            rc = cli_read_run(paths[*shown], all, 1, *rep);
        }
    }
    if (rc == EXIT_FAIL && !*rep)
        cli_say("report: out of memory");
    if (rc != 0) {
        rt_job_view_free(*view);
        *view = NULL;
    }
    free(idx);
    free(job);
    return rc;
}

int cli_report_main(cli_options *o)
{
    report_args a = {0};
    a.files = calloc((size_t)o->nsub + 1, sizeof *a.files);
    rt_stats **stats = NULL;
    const rt_summary **runs = NULL;
    char **paths = NULL;
    size_t np = 0;
    rt_report *rep = NULL;
    rt_stats *all = NULL;
    rt_job_view *view = NULL;
    rt_report_new_with(NULL, &rep);
    rt_stats_new_with(NULL, &all);
    int rc = EXIT_FAIL;
    if (!a.files || !rep || !all) {
        cli_say("report: out of memory");
        goto done;
    }
    int p = parse(o, &a);
    if (p != 0) {
        rc = p > 0 ? 0 : EXIT_USAGE;
        goto done;
    }
    if ((rc = cli_run_paths("report", a.files, (size_t)a.nfiles, &paths, &np)) != 0)
        goto done;
    rc = EXIT_FAIL;
    stats = calloc(np + 1, sizeof *stats);
    runs = calloc(np + 1, sizeof *runs);
    if (!stats || !runs) {
        cli_say("report: out of memory");
        goto done;
    }
    rt_grid grid;
    cli_grid_choose(&grid, a.grid_zone, a.grid_intensity, NULL); /* a recorded run: the user's only */
    rt_stats_set_grid(all, &grid);
    for (size_t i = 0; i < np; i++) {
        if (rt_stats_new_with(NULL, &stats[i]) != RT_OK) {
            cli_say("report: out of memory");
            goto done;
        }
        rt_stats_set_grid(stats[i], &grid);
        rt_stats *into[2] = {stats[i], all};
        int r = cli_read_run(paths[i], into, 2, rep);
        if (r != 0) {
            rc = r;
            goto done;
        }
        runs[i] = rt_stats_summary(stats[i]);
    }
    size_t shown = 0;
    if (np >= 2 && (rc = job_page(runs, paths, np, &grid, &rep, &all, &view, &shown)) != 0)
        goto done;
    if (view)
        rc = write_report(o, a.out, rep, rt_stats_summary(all), runs + shown, paths + shown, 1,
                          a.instance ? a.vendor : NULL, a.instance ? a.type : NULL, NULL, NULL, view,
                          view->nodes[view->memory_most].node);
    else
        rc = write_report(o, a.out, rep, rt_stats_summary(all), runs, paths, np, a.instance ? a.vendor : NULL,
                          a.instance ? a.type : NULL, NULL, NULL, NULL, NULL);
done:
    rt_job_view_free(view);
    for (size_t i = 0; stats && i < np; i++)
        if (stats[i])
            rt_stats_free(stats[i]);
    if (all)
        rt_stats_free(all);
    rt_report_free(rep);
    cli_run_paths_free(paths, np);
    free(runs);
    free(stats);
    free(a.files);
    return rc;
}

int cli_report_run(cli_options *o, const char *path, rt_report *rep, const cli_run_result *run)
{
    const rt_cloud *c = run->cloud;
    bool known = c && c->vendor_id && c->instance_type;
    const rt_summary *runs[1] = {run->summary};
    return write_report(o, path, rep, run->summary, runs, NULL, 1, known ? c->vendor_id : NULL,
                        known ? c->instance_type : NULL, known ? c->region_id : NULL, run, NULL, NULL) == 0 ? 0 : -1;
}
