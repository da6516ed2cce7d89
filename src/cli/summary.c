/* summary.c - `resource-tracker summary FILE...` and the summary a tracking run prints at exit
 * (--summary): a run's statistics as the library's text for people (rt_summary_write_text_cb) or
 * JSON for scripts; and the reading of recorded runs that the other subcommands share
 * (rt_run_read, with the tool's messages and exit statuses). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "settings.h"
#include "status.h"

int cli_read_run(const char *path, rt_stats *const *st, size_t nst, rt_report *rep)
{
    rt_run_read_options ro = RT_RUN_READ_OPTIONS_INIT;
    ro.log = cli_log;
    rt_run_read_info info = {.struct_size = sizeof info};
    rt_error err = rt_run_read(path, &ro, st, nst, rep, &info);
    /* a failure while reading what had opened (a snapshot is read whole when it opens) */
    bool snapshot = info.format && strcmp(info.format, "snapshot") == 0;
    bool midway = err != RT_OK && err != RT_ERR_PARSE && info.opened && !snapshot;
    if (info.skipped > 0 && !midway)
        cli_say("warning: %s: %llu malformed line%s skipped", path, (unsigned long long)info.skipped,
                info.skipped == 1 ? "" : "s");
    if (err == RT_OK)
        return 0;
    if (info.message[0] && !info.logged)
        cli_say("%s", info.message);
    /* out of memory or midway: the tool failed; otherwise the file was not one to read */
    return err == RT_ERR_NOMEM || midway ? EXIT_FAIL : EXIT_USAGE;
}

long cli_write_stdio(void *user, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, user) == len ? (long)len : -1;
}

int cli_summary_print(FILE *f, const rt_summary *s, const cli_run_result *run, const char *memory_unit,
                      const char *time_unit, bool brief)
{
    rt_summary_text_options to = RT_SUMMARY_TEXT_OPTIONS_INIT;
    to.width = cli_text_width(f);
    to.brief = brief;
    to.memory_unit = memory_unit;
    to.time_unit = time_unit;
    to.scheduler = cli_scheduler_of(run ? run->job : NULL);
    rt_run_facts facts = RT_RUN_FACTS_INIT; /* the times stay the samples' */
    if (run) {
        facts.job = run->job;
        facts.command = (const char *const *)run->command;
        facts.pid = run->pid;
        facts.exit_status = run->exit_status;
        facts.host = run->host;
        facts.cloud = run->cloud;
        facts.cgroup_why = run->cgroup_why;
    }
    if (rt_summary_write_text_cb(s, run ? &facts : NULL, &to, cli_write_stdio, f) != RT_OK)
        return -1;
    return fflush(f) == 0 ? 0 : -1;
}

int cli_summary_json(FILE *f, const rt_summary *s, const char *mu, const char *tu, bool newline)
{
    char small[16384], *buf = small;
    size_t n = 0;
    if (rt_format_summary_json(s, mu, tu, buf, sizeof small, &n) != RT_OK)
        return -1;
    if (n >= sizeof small && (!(buf = malloc(n + 1)) || rt_format_summary_json(s, mu, tu, buf, n + 1, &n) != RT_OK)) {
        if (buf != small)
            free(buf);
        return -1;
    }
    while (!newline && n > 0 && buf[n - 1] == '\n')
        n--;
    int r = fwrite(buf, 1, n, f) == n ? 0 : -1;
    if (buf != small)
        free(buf);
    return r;
}

/* ---- the subcommand -------------------------------------------------------------------- */

/* --format's values, in the order of its row's choices (settings_table.c) */
enum { SUMMARY_TEXT, SUMMARY_JSON, SUMMARY_MARKDOWN, SUMMARY_SNAKEMAKE, SUMMARY_NEXTFLOW };

/* A recorded run as Markdown (from its report's buckets) or a workflow engine's file, to f. */
static rt_error summary_write_other(int format, const rt_report *rep, const rt_summary *s, FILE *f)
{
    rt_error e;
    if (format == SUMMARY_MARKDOWN) {
        rt_report_info info = RT_REPORT_INFO_INIT;
        info.summary = s;
        rt_markdown_options mo = RT_MARKDOWN_OPTIONS_INIT;
        mo.scheduler = cli_scheduler_of(NULL);
        e = rt_report_write_markdown_cb(rep, &info, &mo, cli_write_stdio, f);
    } else {
        e = rt_summary_write_workflow(s, NULL, format == SUMMARY_SNAKEMAKE ? RT_WORKFLOW_SNAKEMAKE : RT_WORKFLOW_NEXTFLOW,
                                      cli_write_stdio, f);
    }
    return e;
}

/* --help before its options: the same facts as docs/resource-tracker-summary.1. */
static const char summary_usage[] =
    "Usage: resource-tracker summary [--json | --format FORMAT] [--memory-unit UNIT] [--time-unit UNIT]\n"
    "                                [--expected-cores N] [--gpus UUID,...]\n"
    "                                [--grid-zone ZONE] [--grid-intensity G] [--each] FILE|DIR...\n"
    "\n"
    "Prints the statistics of each recorded run (the tool's JSON lines or CSV, the Python\n"
    "resource-tracker's CSV, or a saved snapshot, gzipped or not; \"-\" is stdin), the same text as\n"
    "--summary at the end of a run: what the job used, what to ask for next time in the scheduler's\n"
    "words, the notes, then the run, the job (CPU, cores, PSS, RSS, GPU: mean, peak, p50, p95), its\n"
    "parts (main, descendants, combined), its cgroup's limits and the machine. Means and\n"
    "percentiles are weighted by the time each sample covers. JSON lines and CSV are read as a\n"
    "stream, in under 64 MiB of memory whatever their size; a line over 16 MiB is an error naming\n"
    "the file and the line (exit 2). A snapshot is read whole: at most 2 GiB of JSON (a gzipped\n"
    "one, past 64 MiB, at most 256 times its size) and 1,209,600 samples.\n"
    "\n"
    "A job that ran on several nodes (each node's run wrote its file, naming the job: SLURM,\n"
    "torchrun, mpirun, --job-id) is put together: its files (or a DIR of them) print one view of\n"
    "the job, its CPU and energy over the nodes, a line per node, the imbalance, the nodes that\n"
    "ended late or idled, and the ask per node in the scheduler's words, sized by the node that\n"
    "needs most (docs/answers.md). Files of different jobs are never mixed.\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char summary_usage_tail[] =
    "\n"
    "Exit status: 0 printed; 1 out of memory or a read that failed midway; 2 a usage error, or a\n"
    "FILE that cannot be read, has no valid sample, has a line over 16 MiB or is a snapshot past\n"
    "its bounds.\n";

/* Reads every one of paths[0..n) (stopping at the first that cannot be read), then prints them
 * (cli_print_jobs): the runs of one job as its view. Returns the exit status. */
static int summarize_together(char *const *paths, size_t n, double expected, char **gpus, size_t ngpus,
                              const rt_grid *grid, const cli_jobs_options *jo)
{
    rt_stats **st = calloc(n, sizeof *st);
    const rt_summary **sums = calloc(n, sizeof *sums);
    bool nomem = !st || !sums;
    int rc = nomem ? EXIT_FAIL : 0;
    size_t got = 0;
    for (; got < n && rc == 0; got++) {
        if (rt_stats_new_with(NULL, &st[got]) != RT_OK || cli_gpuview_apply(expected, gpus, ngpus, st[got]) < 0) {
            rc = EXIT_FAIL;
            nomem = true;
            break;
        }
        rt_stats_set_grid(st[got], grid);
        if ((rc = cli_read_run(paths[got], &st[got], 1, NULL)) != 0)
            break;
        sums[got] = rt_stats_summary(st[got]);
    }
    if (nomem)
        cli_say("out of memory");
    /* what was read is printed, even when a later file stopped the reading */
    size_t ok = rc == 0 ? n : got;
    int prc = ok > 0 ? cli_print_jobs(sums, paths, ok, jo) : 0;
    for (size_t i = 0; st && i < n; i++)
        rt_stats_free(st[i]);
    free(st);
    free(sums);
    return rc ? rc : prc;
}

int cli_summary_main(cli_options *o)
{
    int format = SUMMARY_TEXT;
    const char *mu = NULL, *tu = NULL, *why = NULL;
    double expected = 0;
    char **gpus = NULL;
    size_t ngpus = 0;
    const char *grid_zone = NULL;
    double grid_intensity = 0;
    bool each = false;
    cli_args args;
    cli_args_init(&args, o, CMD_SUMMARY, CLI_ARGS_WORD_ENDS);
    int k, first = o->nsub; /* the first FILE */
    while ((k = cli_args_next(&args)) == CLI_ARG_OPTION) {
        const char *v = args.value;
        cli_value val;
        if (v && cli_args_value(&args, &val) < 0) { /* each value through its row */
            cli_gpu_list_free(gpus, ngpus);
            return EXIT_USAGE;
        }
        switch (args.opt->opt) {
        case CLI_O_JSON: format = SUMMARY_JSON; break;
        case CLI_O_FORMAT: format = val.choice; break; /* the row's choices are SUMMARY_*'s order */
        case CLI_O_MEMORY_UNIT: mu = v; break;
        case CLI_O_TIME_UNIT: tu = v; break;
        case CLI_O_EXPECTED_CORES: expected = val.num; break;
        case CLI_O_GPUS:
            cli_gpu_list_free(gpus, ngpus);
            if (cli_parse_gpu_list(v, &gpus, &ngpus, &why) < 0) { /* its row took it: out of memory */
                cli_say("summary: --gpus: %s", why);
                return EXIT_FAIL;
            }
            break;
        case CLI_O_GRID_ZONE: grid_zone = v; break;
        case CLI_O_GRID_INTENSITY: grid_intensity = val.num; break;
        case CLI_O_EACH: each = true; break;
        default:
            cli_gpu_list_free(gpus, ngpus);
            cli_settings_help_for(stdout, CMD_SUMMARY, summary_usage, summary_usage_tail);
            return 0; /* CLI_O_HELP */
        }
    }
    if (k == CLI_ARG_ERROR) {
        cli_gpu_list_free(gpus, ngpus);
        return EXIT_USAGE;
    }
    if (k == CLI_ARG_WORD)
        first = args.at;
    int argc = o->nsub - first + 1, from = 1;
    char **argv = o->sub_args + first - 1; /* argv[1..] are the FILEs */
    if (from >= argc) {
        cli_say("summary: no FILE given (a recorded run: JSON lines or CSV)");
        cli_gpu_list_free(gpus, ngpus);
        return EXIT_USAGE;
    }
    rt_grid grid;
    cli_grid_choose(&grid, grid_zone, grid_intensity, NULL); /* a recorded run: the user's only */
    char **paths = NULL;
    size_t npaths = 0;
    int rc = cli_run_paths("summary", argv + from, (size_t)(argc - from), &paths, &npaths);
    if (rc != 0) {
        cli_gpu_list_free(gpus, ngpus);
        return rc;
    }
    if ((format == SUMMARY_TEXT || format == SUMMARY_JSON) && npaths > 1) { /* a job's files together */
        cli_jobs_options jo = {.json = format == SUMMARY_JSON, .each = each, .memory_unit = mu, .time_unit = tu};
        rc = summarize_together(paths, npaths, expected, gpus, ngpus, &grid, &jo);
        cli_run_paths_free(paths, npaths);
        cli_gpu_list_free(gpus, ngpus);
        if (fflush(stdout) != 0 && rc == 0)
            rc = EXIT_FAIL;
        return rc;
    }
    argv = paths - 1; /* the loop below reads paths[0..npaths) as argv[1..] */
    from = 1;
    argc = (int)npaths + 1;
    for (int i = from; i < argc && rc == 0; i++) {
        rt_stats *st = NULL;
        if (rt_stats_new_with(NULL, &st) != RT_OK || cli_gpuview_apply(expected, gpus, ngpus, st) < 0) {
            cli_say("out of memory");
            rt_stats_free(st);
            cli_gpu_list_free(gpus, ngpus);
            return EXIT_FAIL;
        }
        rt_stats_set_grid(st, &grid);
        rt_report *rep = NULL;
        if (format == SUMMARY_MARKDOWN && rt_report_new_with(NULL, &rep) != RT_OK) {
            cli_say("out of memory");
            rt_stats_free(st);
            cli_gpu_list_free(gpus, ngpus);
            return EXIT_FAIL;
        }
        rc = cli_read_run(argv[i], &st, 1, rep);
        if (rc == 0) {
            const rt_summary *s = rt_stats_summary(st);
            if (format == SUMMARY_MARKDOWN || format == SUMMARY_SNAKEMAKE || format == SUMMARY_NEXTFLOW) {
                rt_error e = summary_write_other(format, rep, s, stdout);
                if (e != RT_OK) {
                    cli_say("summary: %s: %s", argv[i], rt_last_error_message()[0] ? rt_last_error_message() : rt_strerror(e));
                    rc = EXIT_FAIL;
                }
            } else if (format == SUMMARY_JSON) {
                if (cli_summary_json(stdout, s, mu, tu, true) < 0)
                    rc = EXIT_FAIL;
            } else {
                if (argc - from > 1)
                    printf("%s== %s\n", i > from ? "\n" : "", argv[i]);
                if (cli_summary_print(stdout, s, NULL, mu, tu, false) < 0)
                    rc = EXIT_FAIL;
            }
        }
        rt_report_free(rep);
        rt_stats_free(st);
    }
    cli_gpu_list_free(gpus, ngpus);
    cli_run_paths_free(paths, npaths);
    if (fflush(stdout) != 0 && rc == 0)
        rc = EXIT_FAIL;
    return rc;
}
