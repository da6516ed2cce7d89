/* workflow.c - --benchmark FILE: a tracking run's summary written at its end as Snakemake's
 * benchmark file (the library's rt_summary_write_workflow), replaced atomically: written to a
 * new file of its own beside FILE (FILE.PID.N.tmp, created exclusively: no file of the user's is
 * truncated, no link followed, two runs never share one), synced, then renamed over FILE. A
 * failure is one warning and leaves no temporary file; the job's status stands. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static long write_fd(void *user, const void *buf, size_t len)
{
    ssize_t n = write(*(int *)user, buf, len);
    return n > 0 ? (long)n : -1;
}

/* Creates a new temporary file beside path (its name into tmp); the fd, or -1 with errno. */
static int create_temp(const char *path, char *tmp, size_t cap)
{
    for (unsigned n = 0; n < 100; n++) {
        if (snprintf(tmp, cap, "%s.%ld.%u.tmp", path, (long)getpid(), n) >= (int)cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1; /* EEXIST */
}

int cli_benchmark_write(const char *path, const cli_run_result *run)
{
    char tmp[4096];
    int fd = create_temp(path, tmp, sizeof tmp);
    if (fd < 0) {
        cli_say("warning: --benchmark: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    rt_run_facts facts = RT_RUN_FACTS_INIT;
    facts.job = run->job;
    facts.command = (const char *const *)run->command;
    facts.pid = run->pid;
    facts.exit_status = run->exit_status;
    facts.start_secs = run->start_secs; /* s: the tool's start to its end, as Snakemake times a job */
    facts.end_secs = run->end_secs;
    rt_error e = rt_summary_write_workflow(run->summary, &facts, RT_WORKFLOW_SNAKEMAKE, write_fd, &fd);
    int saved = errno;
    if (e == RT_OK && fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
        e = RT_ERR_IO;
        saved = errno;
    }
    if (close(fd) < 0 && e == RT_OK) {
        e = RT_ERR_IO;
        saved = errno;
    }
    if (e == RT_OK && rename(tmp, path) < 0) {
        e = RT_ERR_IO;
        saved = errno;
    }
    if (e != RT_OK) {
        cli_say("warning: --benchmark: cannot write %s: %s", path,
                e == RT_ERR_IO ? strerror(saved) : rt_last_error_message());
        unlink(tmp);
        return -1;
    }
    return 0;
}
