/* exec.h - starting the wrapped command (exec.c); for sources built with _GNU_SOURCE (sigset_t). */
#ifndef RT_CLI_EXEC_H
#define RT_CLI_EXEC_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "resource_tracker.h"

/* Starts the command argv with the signal mask orig_mask and default dispositions, the open
 * files limit nofile when not NULL (the one it was given, before the tracker raised its own),
 * in the group jcg when not NULL. Returns the pid with *entered set (whether the child runs in
 * jcg); -1 with *exec_errno set when the command could not be run (ENOENT: not found; EACCES:
 * not executable; ENOEXEC: a binary of a format the kernel cannot run; ...); or -2 with
 * *exec_errno set when no child could be started (fork failed: EAGAIN, ENOMEM), where the
 * caller may still run the command in its own place (cli_exec_here). Out of descriptors for
 * its report pipe, the child reports a failed exec itself (one line on stderr, exit status 127
 * or 126, as a shell's) and does not enter jcg. */
pid_t cli_spawn(char **argv, const sigset_t *orig_mask, const struct rlimit *nofile, const rt_job_cgroup *jcg,
                bool *entered, int *exec_errno);

/* Runs the command argv in the calling process's place, as cli_spawn's child would (signal mask
 * orig_mask, SIGPIPE's default disposition, the open files limit nofile when not NULL, no longer
 * a child subreaper). Returns only on failure: the errno (as cli_spawn's *exec_errno). */
int cli_exec_here(char **argv, const sigset_t *orig_mask, const struct rlimit *nofile);

/* Whether the command name would be found (a name with '/' as it is; else an executable file
 * of that name in a PATH entry, execvp's search: the current directory for an empty entry,
 * /bin:/usr/bin without PATH). For the hint of a mistyped subcommand, before anything runs. */
bool cli_command_found(const char *name);

#endif
