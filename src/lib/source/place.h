/* place.h - the parts of "where the job runs" (place.c reads the environment; place_query.c
 * runs scontrol or squeue and reads their answers): the pure parsers of SLURM's and
 * Kubernetes' values and the bounded command runner, apart for the unit tests. Internal. */
#ifndef RT_SOURCE_PLACE_H
#define RT_SOURCE_PLACE_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/core.h"
#include "../core/member.h"

/* The value of name in envp ("NAME=value" strings, NULL-terminated), or NULL when unset. */
const char *rt_place_getenv(const char *const *envp, const char *name);

/* A SLURM duration (sbatch --time, scontrol's TimeLimit, squeue's %l): "minutes",
 * "minutes:seconds", "hours:minutes:seconds", "days-hours", "days-hours:minutes",
 * "days-hours:minutes:seconds". Returns 1 and *secs; 0 for no limit (UNLIMITED, NOT_SET,
 * INFINITE, Partition_Limit, N/A, NONE); -1 when s is none of these. */
int rt_slurm_parse_duration(const char *s, double *secs);

/* A SLURM time stamp as scontrol and squeue print it ("2026-11-25T05:00:00", local time; a
 * date alone is midnight). Returns 1 and *unix_secs; 0 for none (N/A, Unknown, None, "");
 * -1 when s is none of these. */
int rt_slurm_parse_time(const char *s, double *unix_secs);

/* A Kubernetes quantity: a non-negative decimal ("2", "1.5", ".5"), an exponent ("129e6"),
 * and a suffix: m (1/1000), k M G T P E (powers of 1000), Ki Mi Gi Ti Pi Ei (powers of 1024).
 * Returns 0 and *out, or -1 (negative, empty, trailing text, not finite). */
int rt_k8s_parse_quantity(const char *s, double *out);

/* The answer of a query: a time limit and a start when said. */
typedef struct rt_slurm_times {
    int limit;        /* 1: limit_secs holds the limit; 0: none (unlimited, not set); -1: not read */
    double limit_secs;
    int start;        /* as limit, for start_secs (Unix time) */
    double start_secs;
} rt_slurm_times;

/* Reads `scontrol show job -o ID`'s first line (KEY=VALUE words): TimeLimit= and StartTime=.
 * Returns 0 when TimeLimit was found and understood (out->limit 0 or 1), -1 otherwise (the
 * answer is not scontrol's: out->limit -1). */
int rt_slurm_parse_scontrol(const char *text, rt_slurm_times *out);

/* Reads squeue's `-h -o "%l %S"` first line: the limit, then the start. Returns as
 * rt_slurm_parse_scontrol. */
int rt_slurm_parse_squeue(const char *text, rt_slurm_times *out);

/* Runs argv[0] (found on envp's PATH, else the process's; a name with a slash as it is) with
 * argv and envp (NULL: the process's environment), stdin and stderr /dev/null, stdout into out
 * (at most cap-1 bytes, NUL-terminated; the rest is not read), in a process group of its own
 * killed with SIGKILL after timeout_secs, always reaped with waitpid (never another child).
 * Returns 0 when it exited 0; 1 when argv[0] is not on the PATH (nothing run); -1 otherwise
 * with why set ("exited with status 1", "killed after 2 s", "could not be started: ..."). */
int rt_place_run(const char *const *argv, const char *const *envp, double timeout_secs, char *out, size_t cap,
                 char *why, size_t whylen);

/* Reads the launchers' variables of envp (NULL-terminated "NAME=value"; docs/where.md) into
 * out: set when a job id was found; what else was found (the node, ranks, from) either way, so
 * that a caller's --job-id makes it a member. A malformed number is one warning to log. */
void rt_member_detect(const char *const *envp, const rt_logger *log, rt_member_copy *out);

#endif
