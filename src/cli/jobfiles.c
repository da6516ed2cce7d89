/* jobfiles.c - `summary`, `report` and `recommend` over the files of a job that ran on several
 * nodes: a directory named in place of files stands for its run files, and the runs that name
 * one job (the library's rules: rt_job_group, and rt_job_pick for the one job report and
 * recommend answer for) are put together into the job's view (rt_job_view); summary prints the
 * others one by one as before, report and recommend leave them out. Which files were left out
 * of a job, and why, is said on stderr. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Whether name is a run file the tool or its peers write (JSON lines, CSV, a snapshot; gzipped or
 * not). */
static bool run_file_name(const char *name)
{
    static const char *const ends[] = {".jsonl", ".jsonl.gz", ".json", ".json.gz", ".csv", ".csv.gz", ".ndjson"};
    size_t n = strlen(name);
    if (name[0] == '.')
        return false;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t k = strlen(ends[i]);
        if (n > k && strcmp(name + n - k, ends[i]) == 0)
            return true;
    }
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends a copy of s to *v (n, cap). -1: no memory. */
static int push(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        char **t = realloc(*v, c * sizeof *t);
        if (!t)
            return -1;
        *v = t;
        *cap = c;
    }
    if (!((*v)[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

void cli_run_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

int cli_run_paths(const char *cmd, char *const *args, size_t nargs, char ***out, size_t *nout)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < nargs; i++) {
        struct stat sb;
        if (strcmp(args[i], "-") == 0 || stat(args[i], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            if (push(&v, &n, &cap, args[i]) < 0)
                goto nomem;
            continue;
        }
        DIR *d = opendir(args[i]);
        if (!d) {
            cli_say("%s: %s: %s", cmd, args[i], strerror(errno));
            cli_run_paths_free(v, n);
            return EXIT_USAGE;
        }
        size_t first = n;
        for (struct dirent *e; (e = readdir(d));) {
            char *path = NULL;
            if (!run_file_name(e->d_name))
                continue;
            size_t len = strlen(args[i]);
            if (asprintf(&path, "%s%s%s", args[i], len && args[i][len - 1] == '/' ? "" : "/", e->d_name) < 0) {
                closedir(d);
                goto nomem;
            }
            int r = push(&v, &n, &cap, path);
            free(path);
            if (r < 0) {
                closedir(d);
                goto nomem;
            }
        }
        closedir(d);
        if (n == first) {
            cli_say("%s: %s: a directory without run files (*.jsonl, *.csv, *.json, gzipped or not)", cmd, args[i]);
            cli_run_paths_free(v, n);
            return EXIT_USAGE;
        }
        qsort(v + first, n - first, sizeof *v, cmp_str);
    }
    *out = v;
    *nout = n;
    return 0;
nomem:
    cli_say("out of memory");
    cli_run_paths_free(v, n);
    return EXIT_FAIL;
}

/* The view of the job of runs idx[0..k) as text (each run's summary after with each) or one
 * JSON line (the view's members, then "runs": each run's summary). -1: not written. */
static int print_job(const rt_summary *const *sums, char *const *paths, const size_t *idx, size_t k,
                     const cli_jobs_options *jo)
{
    const rt_summary **runs = calloc(k, sizeof *runs);
    if (!runs)
        return -1;
    for (size_t i = 0; i < k; i++)
        runs[i] = sums[idx[i]];
    rt_job_view *v = NULL;
    int rc = rt_job_view_new(runs, k, &v) == RT_OK ? 0 : -1;
    if (rc == 0 && jo->json) {
        char small[16384], *buf = small;
        size_t n = 0;
        if (rt_format_job_view_json(v, buf, sizeof small, &n) != RT_OK ||
            (n >= sizeof small && (!(buf = malloc(n + 1)) || rt_format_job_view_json(v, buf, n + 1, &n) != RT_OK)))
            rc = -1;
        if (rc == 0 && n > 0) { /* the view's object, open: "runs" joins it */
            rc = fwrite(buf, 1, n - 1, stdout) == n - 1 && fputs(",\"runs\":[", stdout) >= 0 ? 0 : -1;
            for (size_t i = 0; i < k && rc == 0; i++)
                rc = (i == 0 || fputc(',', stdout) != EOF) ? cli_summary_json(stdout, runs[i], jo->memory_unit,
                                                                           jo->time_unit, false)
                                                            : -1;
            if (rc == 0 && fputs("]}\n", stdout) < 0)
                rc = -1;
        }
        if (buf && buf != small)
            free(buf);
    } else if (rc == 0) {
        rt_summary_text_options to = RT_SUMMARY_TEXT_OPTIONS_INIT;
        to.memory_unit = jo->memory_unit;
        to.time_unit = jo->time_unit;
        to.scheduler = cli_scheduler_of(NULL);
        to.width = cli_text_width(stdout);
        if (rt_job_view_write_text_cb(v, &to, cli_write_stdio, stdout) != RT_OK)
            rc = -1;
        for (size_t i = 0; i < k && rc == 0 && jo->each; i++) {
            printf("\n== %s\n", paths[idx[i]]);
            rc = cli_summary_print(stdout, runs[i], NULL, jo->memory_unit, jo->time_unit, false);
        }
    }
    rt_job_view_free(v);
    free(runs);
    return rc;
}

int cli_print_jobs(const rt_summary *const *sums, char *const *paths, size_t n, const cli_jobs_options *jo)
{
    /* group[i]: the first run of run i's job (i itself for a run of no job) */
    size_t *group = calloc(n ? n : 1, sizeof *group), *idx = calloc(n ? n : 1, sizeof *idx);
    if (!group || !idx) {
        free(group);
        free(idx);
        cli_say("out of memory");
        return EXIT_FAIL;
    }
    size_t jobs = rt_job_group(sums, n, group), members = 0;
    for (size_t i = 0; i < n; i++)
        members += sums[i]->member && sums[i]->member->job_id;
    if (members > 0 && members < n)
        for (size_t i = 0; i < n; i++)
            if (!sums[i]->member || !sums[i]->member->job_id)
                cli_say("summary: %s names no job (no --job-id, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...): summarized "
                        "on its own, not in a job's view",
                        paths[i]);
    if (jobs > 1)
        cli_say("summary: the files name %zu jobs: a view of each, never one of them all", jobs);
    int rc = 0;
    bool first = true;
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (group[j] == i)
                idx[k++] = j;
        if (group[i] != i) /* printed with its job's first run */
            continue;
        if (k >= 2) {
            if (!jo->json)
                printf("%s== job %s: %zu files\n", first ? "" : "\n", sums[i]->member->job_id, k);
            rc = print_job(sums, paths, idx, k, jo) < 0 ? EXIT_FAIL : 0;
        } else if (jo->json) {
            rc = cli_summary_json(stdout, sums[i], jo->memory_unit, jo->time_unit, true) < 0 ? EXIT_FAIL : 0;
        } else {
            printf("%s== %s\n", first ? "" : "\n", paths[i]);
            rc = cli_summary_print(stdout, sums[i], NULL, jo->memory_unit, jo->time_unit, false) < 0 ? EXIT_FAIL : 0;
        }
        first = false;
    }
    free(group);
    free(idx);
    return rc;
}

size_t cli_job_runs(const char *cmd, const rt_summary *const *sums, char *const *paths, size_t n, size_t *idx)
{
    size_t k = rt_job_pick(sums, n, 0, idx); /* the first job of two runs or more */
    if (k == 0)
        return 0;
    const char *id = sums[idx[0]]->member->job_id;
    for (size_t i = 0, at = 0; i < n; i++) {
        if (at < k && idx[at] == i) { /* idx is in order */
            at++;
            continue;
        }
        const rt_member *m = sums[i]->member;
        if (m && m->job_id)
            cli_say("%s: %s is of job %s, not %s: left out (one job at a time; give its files on their own)", cmd,
                    paths[i], m->job_id, id);
        else
            cli_say("%s: %s names no job (no --job-id, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...): left out of job %s's "
                    "view",
                    cmd, paths[i], id);
    }
    return k;
}

size_t cli_job_shown(const rt_job_view *v, const rt_summary *const *runs, size_t n)
{
    return rt_job_view_shown(v, runs, n);
}
