/* logview.c - where a person reads a log rather than a terminal (docs/contracts.md §1, the log
 * view): a CI service's job log (GitHub Actions, GitLab CI, Jenkins, Buildkite) or a SLURM job's
 * output file, told by the variables each sets; and the file the run's samples go to there (the
 * CI's workspace, else the working directory: a SLURM job's), created anew so that no run's file
 * takes another's. */
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
 * NULL: any value but empty), and the variable naming its workspace (NULL: the working
 * directory). */
static const struct {
    const char *name, *var, *value, *dir;
} places[] = {
    {"GitHub Actions", "GITHUB_ACTIONS", "true", "GITHUB_WORKSPACE"},
    {"GitLab CI", "GITLAB_CI", "true", "CI_PROJECT_DIR"},
    {"Jenkins", "JENKINS_URL", NULL, "WORKSPACE"},
    {"Buildkite", "BUILDKITE", "true", "BUILDKITE_BUILD_CHECKOUT_PATH"},
    {"a SLURM job", "SLURM_JOB_ID", NULL, NULL},
};

const char *cli_log_place(const char **dir)
{
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        const char *v = getenv(places[i].var);
        if (!v || !*v || (places[i].value && strcmp(v, places[i].value) != 0))
            continue;
        if (dir) {
            const char *d = places[i].dir ? getenv(places[i].dir) : NULL;
            struct stat st;
            *dir = d && d[0] == '/' && stat(d, &st) == 0 && S_ISDIR(st.st_mode) ? d : NULL;
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
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            close(fd);
            free(o->output_named);
            o->output_named = path;
            o->output = path;
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
