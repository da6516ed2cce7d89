/* exec.h - starting the wrapped command (exec.c); for sources built with _GNU_SOURCE (sigset_t). */
#ifndef RT_CLI_EXEC_H
#define RT_CLI_EXEC_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "resource_tracker.h"

/* Starts the command argv with the signal mask orig_mask and default dispositions, in the
 * group jcg when not NULL. Returns the pid with *entered set (whether the child runs in jcg),
 * or -1 with *exec_errno set when the command could not be run (ENOENT: not found; EACCES:
 * not executable; ENOEXEC: a binary of a format the kernel cannot run; ...). */
pid_t cli_spawn(char **argv, const sigset_t *orig_mask, const rt_job_cgroup *jcg, bool *entered, int *exec_errno);

#endif
