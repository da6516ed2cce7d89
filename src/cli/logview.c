/* logview.c - where a person reads a log rather than a terminal (docs/contracts.md §1, the log
 * view): a CI service's job log (GitHub Actions, GitLab CI, Jenkins, Buildkite) or a SLURM job's
 * output file, told by the variables each sets; and the file the run's samples go to there,
 * created anew so that no run's file takes another's: on a CI runner in its temporary directory
 * (RUNNER_TEMP, GitLab's RUNNER_TEMP_PROJECT_DIR or $CI_PROJECT_DIR.tmp, Jenkins' WORKSPACE_TMP;
 * else TMPDIR, else /tmp), never the checkout, and gzipped at the run's end (cli_log_gzip); in a
 * SLURM job in the working directory, as it is written. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Each place: its name, the variable that says a job runs there (with the value it must have;
 * NULL: any value but empty), whether it is a CI runner (the samples in its temporary directory,
 * gzipped), the variable naming that directory, and the variable naming a directory whose
 * sibling "DIR.tmp" is it (GitLab's runner makes $CI_PROJECT_DIR.tmp). */
static const struct {
    const char *name, *var, *value;
    bool ci;
    const char *tmp, *beside;
} places[] = {
    {"GitHub Actions", "GITHUB_ACTIONS", "true", true, "RUNNER_TEMP", NULL},
    {"GitLab CI", "GITLAB_CI", "true", true, "RUNNER_TEMP_PROJECT_DIR", "CI_PROJECT_DIR"},
    {"Jenkins", "JENKINS_URL", NULL, true, "WORKSPACE_TMP", NULL},
    {"Buildkite", "BUILDKITE", "true", true, NULL, NULL},
    {"a SLURM job", "SLURM_JOB_ID", NULL, false, NULL, NULL},
};

/* Whether d is an existing absolute directory. */
static bool is_dir(const char *d)
{
    struct stat st;
    return d && d[0] == '/' && stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *cli_log_place(const char **dir)
{
    static char beside[4096];
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        const char *v = getenv(places[i].var);
        if (!v || !*v || (places[i].value && strcmp(v, places[i].value) != 0))
            continue;
        if (dir) {
            const char *d = places[i].tmp ? getenv(places[i].tmp) : NULL;
            const char *b = places[i].beside ? getenv(places[i].beside) : NULL;
            if (!is_dir(d) && b && snprintf(beside, sizeof beside, "%s.tmp", b) < (int)sizeof beside)
                d = beside;
            if (!is_dir(d) && places[i].ci)
                d = getenv("TMPDIR");
            if (!is_dir(d) && places[i].ci)
                d = "/tmp";
            *dir = places[i].ci && is_dir(d) ? d : NULL;
        }
        return places[i].name;
    }
    if (dir)
        *dir = NULL;
    return NULL;
}

int cli_log_output(cli_options *o)
{
    const char *dir = NULL;
    cli_log_place(&dir);
    bool ci = dir != NULL;
    char cwd[4096];
    if (!dir)
        dir = getcwd(cwd, sizeof cwd) ? cwd : ".";
    char name[512];
    cli_run_file_name(o, name, sizeof name);
    const char *ext = o->format == RT_FORMAT_CSV ? "csv" : "jsonl";
    const char *slash = dir[strlen(dir) - 1] == '/' ? "" : "/";
    int e = 0;
    /* a name of its own: a second run of the same job and node (a batch script's two runs) gets
     * "-2", and so on; an existing file is never written over */
    for (int n = 1; n <= 99; n++) {
        char *path = NULL;
        char suffix[8] = "";
        if (n > 1)
            snprintf(suffix, sizeof suffix, "-%d", n);
        if (asprintf(&path, "%s%sresource-tracker-%s%s.%s", dir, slash, name, suffix, ext) < 0) {
            cli_say("warning: out of memory: the samples are not kept (-o FILE keeps them)");
            return -1;
        }
        char gz[4200];
        snprintf(gz, sizeof gz, "%s.gz", path); /* nor the name it will have gzipped */
        struct stat st;
        int fd = ci && lstat(gz, &st) == 0 ? (errno = EEXIST, -1)
                                            : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            close(fd);
            free(o->output_named);
            o->output_named = path;
            o->output = path;
            o->output_gzip = ci; /* a CI runner's: gzipped at the end */
            return 0;
        }
        e = errno;
        free(path);
        if (e != EEXIST)
            break;
    }
    cli_say("warning: cannot make a file for the samples in %s (%s): they are not kept (-o FILE keeps them)", dir,
            strerror(e));
    return -1;
}

void cli_log_gzip(cli_options *o)
{
    if (!o->output_gzip || !o->output)
        return;
    o->output_gzip = false;
    char *gz = NULL;
    if (asprintf(&gz, "%s.gz", o->output) < 0)
        return;
    int in = open(o->output, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int out = in < 0 ? -1 : open(gz, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    rt_error e = out < 0 ? RT_ERR_IO : rt_gzip_fd(in, out);
    int err = errno;
    if (out >= 0 && close(out) < 0 && e == RT_OK) {
        e = RT_ERR_IO;
        err = errno;
    }
    if (in >= 0)
        close(in);
    if (e != RT_OK) { /* the plain file stays, and is named */
        if (out >= 0)
            unlink(gz);
        cli_say("warning: samples left as they are in %s: cannot gzip them (%s)", o->output,
                e == RT_ERR_IO ? strerror(err) : rt_strerror(e));
        free(gz);
        return;
    }
    unlink(o->output);
    free(o->output_named);
    o->output_named = gz;
    o->output = gz;
    cli_say("samples gzipped to %s", gz);
}
