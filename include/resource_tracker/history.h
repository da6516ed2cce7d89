/* resource_tracker/history.h - a run history read back: the runs table's columns (one table for
 * the tool that writes a history and for whoever reads one), and a history's runs, by path or
 * postgresql:// URL (rt_db, db.h), as the rt_summary records `resource-tracker recommend --job`
 * answers from (so that rt_recommend_with or rt_job_view_new give its answer).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. EXPERIMENTAL: declared only where RT_EXPERIMENTAL_API is defined before the
 * include; it may change or go in a minor version (see resource_tracker.h). */
#if defined(RT_EXPERIMENTAL_API) && !defined(RESOURCE_TRACKER_HISTORY_H)
#define RESOURCE_TRACKER_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "db.h"
#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the runs table (experimental) --------------------------------------------------------- */

/* Where a column's value lives: a run's own figure (off: one of RT_HISTORY_RUN_*), a field of the
 * run's rt_job, rt_host or rt_cloud, or of its rt_summary (off: the field's offset). */
typedef enum rt_history_source {
    RT_HISTORY_FROM_RUN,
    RT_HISTORY_FROM_JOB,
    RT_HISTORY_FROM_HOST,
    RT_HISTORY_FROM_CLOUD,
    RT_HISTORY_FROM_SUMMARY
} rt_history_source;

/* The run's own figures (RT_HISTORY_FROM_RUN columns), as docs/contracts.md's history names them. */
enum {
    RT_HISTORY_RUN_START,
    RT_HISTORY_RUN_END,
    RT_HISTORY_RUN_VERSION,
    RT_HISTORY_RUN_TAGS,
    RT_HISTORY_RUN_COMMAND,
    RT_HISTORY_RUN_PID,
    RT_HISTORY_RUN_EXIT,
    RT_HISTORY_RUN_SAMPLES,
    RT_HISTORY_RUN_ALLOCATION,
    RT_HISTORY_RUN_SUMMARY_JSON,
    RT_HISTORY_RUN_NOTES,
    RT_HISTORY_RUN_PHASES,
    RT_HISTORY_RUN_PHASE_MARKS,
    RT_HISTORY_RUN_GRID_G,
    RT_HISTORY_RUN_GRID_ZONE,
    RT_HISTORY_RUN_GRID_SOURCE,
    RT_HISTORY_RUN_PLACE,
    RT_HISTORY_RUN_CPU_FROM,
    RT_HISTORY_RUN_MEMORY_FROM,
    RT_HISTORY_RUN_GPUS_FROM,
    RT_HISTORY_RUN_TIME_LIMIT_FROM,
    RT_HISTORY_RUN_CORES,
    RT_HISTORY_RUN_MEMBER,
    RT_HISTORY_RUN_UUID,
    RT_HISTORY_RUN_USER_NAME,
    RT_HISTORY_RUN_USER_UID,
    RT_HISTORY_RUN_NODE,
    RT_HISTORY_RUN_JOB_ID
};

/* One column of the runs table after its id: its name; what it holds ('T' text, 'I' integer,
 * 'R' real; of a summary also 'N', an rt_need_source kept as its name, 'B', an int flag kept as
 * 0 or 1, and 'M', an energy method's name: "measured", "sampled" or "estimated"); where the
 * value lives. */
typedef struct rt_history_column {
    const char *name;
    char type;
    rt_history_source src;
    size_t off;
} rt_history_column;

/* The columns of the runs table after id, in table order (new ones only ever appended): an array
 * of RT_HISTORY_NCOLS, static. */
#define RT_HISTORY_NCOLS 217
RT_API const rt_history_column *rt_history_columns(void);

/* The schema version the history of this library writes (SQLite's user_version; PostgreSQL's
 * rt_schema). */
#define RT_HISTORY_SCHEMA_VERSION 12

/* Which of rt_history_columns the runs table of db has, into have[RT_HISTORY_NCOLS] (all false
 * when there is no such table: an older history lacks the newer columns until its next write),
 * and have[RT_HISTORY_NCOLS] whether the table is there. Returns an RT_DB_* result code. */
RT_API int rt_history_have(rt_db *db, bool have[RT_HISTORY_NCOLS + 1]);

/* ---- reading a history (experimental) ------------------------------------------------------ */

/* Opens the history at target (an SQLite file, or a postgresql:// URL) for reading: a file
 * read-only, or read-write (never creating) when a crashed writer's journal must be rolled back
 * first. Returns RT_DB_OK with *out (close with rt_db_close), or a code with *out NULL and why
 * in err[cap] (no such file, not a database, no runs table, no server; never a password). */
RT_API int rt_history_open(const char *target, rt_db **out, char *err, size_t cap);

/* Prepares sql (a SELECT of runs, with ?1 the row limit and ?2 the job when job is not NULL)
 * into *st and binds last (<= 0: no limit) and job (not copied: it must outlive *st). Returns an
 * RT_DB_* result code; *st is to be finalized either way. */
RT_API int rt_history_query(rt_db *db, const char *sql, const char *job, long last, rt_db_stmt **st);

/* Who ran a run (schema version 12); NULL where the row does not say. */
typedef struct rt_history_who {
    const char *host;    /* the node the run ran on (its node column), else its host_hostname */
    const char *user;    /* the real uid's login name */
    const char *command; /* the argv as the history keeps it (a JSON list); NULL: none (--pid) */
} rt_history_who;

/* The runs of the history at target that `recommend --job` answers from, newest first: those
 * of job (NULL: every job) that succeeded, or that the OOM killer hit, that ran to their time
 * limit, or that a SIGTERM, SIGKILL or SIGXCPU ended; the last `last` of them (<= 0: all).
 * Each as an rt_summary with its figures, its table under other core counts, its phases' names
 * and tables, its member (a job of several nodes); job_name and allocation set; the other
 * strings NULL. *runs: an array of *n, with everything it points to, freed with
 * rt_history_free only (not free(); NULL when *n is 0); who (NULL: not wanted): who ran each,
 * an array of *n freed with the runs. Returns RT_DB_OK (*n may be 0), or a code with why in err[cap] (as
 * rt_history_open; "out of memory": RT_DB_NOMEM). */
RT_API int rt_history_runs(const char *target, const char *job, long last, rt_summary **runs, size_t *n,
                           rt_history_who **who, char *err, size_t cap);
RT_API void rt_history_free(rt_summary *runs);
/* What an answer from a history's runs is based on (`recommend --job`'s "based on 6 runs on 3
 * hosts by 1 user"): the runs, the distinct hosts they ran on and users who ran them (as their
 * rt_history_who says), and the runs whose user the history does not say. */
typedef struct rt_history_basis {
    size_t runs, hosts, users, runs_without_user;
} rt_history_basis;

/* The basis of the runs who[idx[0..n)] (idx NULL: who[0..n)) into *out. Returns RT_OK,
 * RT_ERR_INVALID (who or out NULL), RT_ERR_NOMEM. (0.23) */
RT_API rt_error rt_history_basis_of(const rt_history_who *who, const size_t *idx, size_t n, rt_history_basis *out);

/* The runs of who[0..n) whose command line is the newest run's (who[0]'s; two runs without one
 * count as the same): their indexes into idx[0..count), in order. `recommend --job` answers from
 * these unless --any-command. Returns the count (0 for n 0 or NULL). (0.23) */
RT_API size_t rt_history_same_command(const rt_history_who *who, size_t n, size_t *idx);

/* The runs `recommend --job JOB` answers from: rt_history_runs's, and with whole_job (the tool
 * without --last) when the newest run is a node of a job of several (its member), as many of the
 * newest as that job had runs, so that its view has every node: rows are read, twice as many each
 * time (at most 4096), until the first of another job or the history's first is in; then *n is
 * the job's runs, or its tasks or nodes as its member says them, or `last`, the most of them
 * (no more than were read). A read after the first that fails keeps the first's runs. Returns as
 * rt_history_runs. (0.23) */
RT_API int rt_history_job_runs(const char *target, const char *job, long last, int whole_job, rt_summary **runs,
                               size_t *n, rt_history_who **who, char *err, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
