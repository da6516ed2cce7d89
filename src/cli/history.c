/* history.c - the run history's database (SQLite or PostgreSQL), the tool's side: a tracking run
 * with --history appends one row per run (job metadata, command, exit status, host, cloud,
 * statistics: the library's column table, rt_history_columns), migrating the schema; a row that
 * cannot be written is kept for later. Runs are read back as summaries (`recommend --job`)
 * through the library's reader (rt_history_runs, src/lib/history/) and for `resource-tracker
 * history` (history_cmd.c).
 *
 * Storage and concurrency. The database keeps SQLite's default rollback journal (DELETE mode)
 * with synchronous=FULL, and each run is one INSERT in a BEGIN IMMEDIATE transaction:
 *  - two writers at once both land: BEGIN IMMEDIATE takes the write lock before anything is
 *    read, so writers queue on it (sqlite3_busy_timeout, 10 s) instead of failing with a lock
 *    upgrade deadlock; the table is created inside the same transaction, so two first runs
 *    cannot both create it;
 *  - a crash mid-write loses nothing already stored: the journal holds the original pages,
 *    synced before the database file is touched; the next connection that finds it "hot"
 *    rolls it back. cli_history_summaries and `history` open read-only, and a read-only
 *    connection cannot roll back, so they retry once read-write (never creating) to recover;
 *  - WAL was not chosen: it needs shared memory (no network file systems, and a read-only
 *    reader needs the -shm file writable or present), leaves -wal/-shm files beside the
 *    database, and buys concurrency between readers and writers that one row per run does
 *    not need.
 * The file is created with SQLite's 0644 less the umask. The directory must be writable (the
 * journal is created beside the database). Schema: PRAGMA user_version 5 (2 added the 0.6
 * summary figures: the cgroup's OOM kills, limits, throttling, pids and pressure). An older
 * database gains the columns it lacks on its next write (ALTER TABLE inside the write
 * transaction, so writers still queue), and is read as it is until then: a column it lacks
 * reads as NULL (NaN). Schema version 3 added the 0.9 figures: the memory and VRAM needs with
 * their sources, what they are made from, the end's leftovers, and the run's notes (JSON).
 * Schema version 4 (0.14) added the run's phases and its counts of phase marks: the summary
 * JSON's `phases` and `phase_marks` members as JSON text (NULL for a run without marks).
 * Schema version 5 (0.15) added the run's energy and carbon: the machine's and the job's
 * energy with their methods (a figure is NULL without one), the power, the idle floor, the
 * GPUs' throttle time, the grams of CO2e and the grid's intensity, zone and source (NULL when
 * the intensity was unknown). Read back as a summary, the grid stays NULL.
 * Schema version 6 (0.16) added where the job ran and what it was given: the place, the
 * requested cores, memory, GPUs and time limit with what said each, the CPU, memory, GPU and
 * time-limit efficiencies, and the tree's virtual memory peak. Read back as a summary, the
 * place and the *_from texts stay NULL (the figures come back).
 * Schema version 7 (0.18) added the run's durations under 1, 2, ... cores: the summary JSON's
 * `cores` member as JSON text (NULL without a tracked tree), read back as the summary's table,
 * so that `recommend --job` predicts from the runs it has (a run stored before asks by the mean).
 * Schema version 8 (0.18) added the run's place in a job of several nodes: the summary JSON's
 * `member` as JSON text (NULL for a run of no such job), read back as the summary's member, so
 * that `recommend --job` answers a job's newest nodes with the ask per node.
 * Schema version 9 (0.19) added the GPUs' work (NVML GPM: SM activity and occupancy, tensor
 * cores, DRAM bandwidth, FP64/32/16, PCIe and NVLink traffic, each as mean, peak, p50 and p95),
 * whose figures they are (gpu_work_shared), the GPUs the tree kept busy at once, its VRAM peak on
 * one GPU and the seconds its GPUs idled while its CPU was busy.
 * Schema version 10 (0.20) added the file data the job's group read back after its memory
 * evicted it (memory_refault_mib: the re-reads a memory limit caused).
 * Schema version 11 (0.21) added the tree's processes seen ignoring SIGCHLD and the signal that
 * ended the command. Schema version 12 added who ran what: user_name, user_uid, node, job_id
 * (run_who below), so that `history` filters by user and host and `recommend --job` says on how
 * many hosts and by how many users its runs ran.
 * A database stamped with a higher version was made by a newer tool: it is
 * read (by the column names this version knows) but never written, since its columns may no
 * longer mean what this version thinks. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "history_db.h"

#define SCHEMA_VERSION RT_HISTORY_SCHEMA_VERSION
#define BUSY_TIMEOUT_MS 10000
#define WRITE_SECS 10.0 /* a PostgreSQL write's bound outside a tracking run's end */

/* ---- the columns: the library's table (rt_history_columns, resource_tracker/history.h) ---- */

typedef rt_history_column col;
#define cols (rt_history_columns())
#define NCOLS RT_HISTORY_NCOLS

int history_put(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n >= cap)
        return -1;
    memcpy(buf + *len, s, n + 1);
    *len += n;
    return 0;
}

/* The SQL type of column c in db's dialect. */
static const char *col_type(const rt_db *db, const col *c)
{
    return rt_db_sql_type(db, c->type == 'T' || c->type == 'N' || c->type == 'M' ? 'T'
                              : c->type == 'I' || c->type == 'B'                 ? 'I'
                                                                                   : 'R');
}

/* Writes into buf: head, then every column's name (with its SQL type in the dialect of typed when
 * not NULL), joined by
 * ", ", then tail. have (NULL: all) says which
 * columns the table has, the others are written as NULL (for a SELECT). Returns 0, or -1 when
 * buf is too small (a bug: the buffers below are sized for the table). */
static int col_list(char *buf, size_t cap, const char *head, const rt_db *typed, const bool *have, const char *tail)
{
    size_t len = 0;
    buf[0] = '\0';
    if (history_put(buf, cap, &len, head) < 0)
        return -1;
    bool first = true;
    for (size_t i = 0; i < NCOLS; i++) {
        const char *name = !have || have[i] ? cols[i].name : "NULL";
        if ((!first && history_put(buf, cap, &len, ", ") < 0) || history_put(buf, cap, &len, name) < 0 ||
            (typed && (history_put(buf, cap, &len, " ") < 0 || history_put(buf, cap, &len, col_type(typed, &cols[i])) < 0)))
            return -1;
        first = false;
    }
    return history_put(buf, cap, &len, tail);
}

/* Which of cols the runs table of db has (rt_history_have). */
static int table_columns(rt_db *db, bool have[NCOLS + 1])
{
    return rt_history_have(db, have);
}

size_t history_ncols(void)
{
    return NCOLS;
}

const char *history_col_name(size_t i)
{
    return i < NCOLS ? cols[i].name : NULL;
}

char history_col_kind(size_t i)
{
    return i >= NCOLS ? 0 : cols[i].type == 'I' || cols[i].type == 'B' ? 'I' : cols[i].type == 'R' ? 'R' : 'T';
}

int history_col_names(char *buf, size_t cap)
{
    return col_list(buf, cap, "", NULL, NULL, "");
}

bool history_has_column(rt_db *db, const char *name)
{
    bool have[NCOLS + 1];
    if (table_columns(db, have) != RT_DB_OK)
        return false;
    for (size_t i = 0; i < NCOLS; i++)
        if (strcmp(cols[i].name, name) == 0)
            return have[i];
    return false;
}

/* ---- values to store ------------------------------------------------------------------ */

json_t *history_json_str_lossy(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

/* A JSON array of the n strings v (or of v up to its NULL when n is SIZE_MAX), as compact
 * text. Returns malloc'd text (the caller frees it), or NULL for no v or out of memory. */
static char *json_str_array(const char *const *v, size_t n)
{
    if (!v)
        return NULL;
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (size_t i = 0; i < n && v[i]; i++)
        if (json_array_append_new(a, history_json_str_lossy(v[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    char *text = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return text;
}

/* The summary as JSON text from rt_format_summary_json. Returns malloc'd text, or NULL when
 * there is none (no summary, the formatter declined, out of memory). */
static char *summary_json(const rt_summary *s)
{
    if (!s)
        return NULL;
    char probe[1];
    size_t n = 0, again = 0;
    if (rt_format_summary_json(s, NULL, NULL, probe, sizeof probe, &n) != RT_OK || n == 0)
        return NULL;
    char *buf = malloc(n + 1);
    if (buf && (rt_format_summary_json(s, NULL, NULL, buf, n + 1, &again) != RT_OK || again != n)) {
        free(buf);
        return NULL;
    }
    if (buf) { /* the formatter ends the object with a newline: not part of the value */
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
            buf[--n] = '\0';
    }
    return buf;
}

/* The member name of the summary's JSON text sjson as compact JSON text; NULL when sjson is
 * NULL, the member is missing or null, or out of memory. Malloc'd. */
static char *summary_member(const char *sjson, const char *name)
{
    if (!sjson)
        return NULL;
    json_t *o = json_loads(sjson, 0, NULL);
    json_t *v = json_object_get(o, name);
    char *text = v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
    json_decref(o);
    return text;
}

/* The run's notes (rt_summary_notes, with the tool's reason for a missing cgroup) as a JSON
 * array of {"kind", "text"}. Returns malloc'd text, or NULL without a summary or memory. */
static char *run_notes(const cli_run_result *r)
{
    if (!r->summary)
        return NULL;
    rt_note notes[RT_NOTES_MAX];
    json_t *a = cli_notes_json(notes, cli_run_notes(r->summary, r->cgroup_why, notes));
    char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return text;
}

/* Bind s, v or v at i, or NULL for a missing value (NULL, NaN or infinite, RT_NULL_I64). Return an SQLite
 * result code. */
static int bind_text(rt_db_stmt *st, int i, const char *s)
{
    return s ? rt_db_bind_text(st, i, s) : rt_db_bind_null(st, i);
}

static int bind_real(rt_db_stmt *st, int i, double v) /* inf too: SQLite would keep it, JSON cannot */
{
    return isfinite(v) ? rt_db_bind_real(st, i, v) : rt_db_bind_null(st, i);
}

static int bind_int(rt_db_stmt *st, int i, int64_t v)
{
    return v == RT_NULL_I64 ? rt_db_bind_null(st, i) : rt_db_bind_int(st, i, v);
}

/* The JSON texts of a run made before its INSERT (each NULL when missing). */
typedef struct run_texts {
    const char *tags, *command, *sjson, *notes, *phases, *phase_marks, *cores, *member;
    const struct run_who *who;
} run_texts;

/* Who ran the run and where, for the columns of schema version 12. */
typedef struct run_who {
    char user[256]; /* the real uid's login name; "" when it has no passwd entry */
    long long uid;
    char node[256];    /* the member's node, SLURMD_NODENAME, else the short host name; "" unknown */
    const char *job_id; /* the member's job_id, else SLURM_JOB_ID; NULL */
} run_who;

/* Fills *w for the run r (the process's real uid and environment: the run's own). */
static void run_who_of(const cli_run_result *r, run_who *w)
{
    memset(w, 0, sizeof *w);
    uid_t uid = getuid();
    w->uid = (long long)uid;
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found && found->pw_name)
        snprintf(w->user, sizeof w->user, "%s", found->pw_name);
    const rt_member *m = r->summary ? r->summary->member : NULL;
    const char *node = m && m->node && *m->node ? m->node : getenv("SLURMD_NODENAME");
    char host[256] = "";
    if (!node || !*node) {
        if (r->host && r->host->hostname)
            snprintf(host, sizeof host, "%s", r->host->hostname);
        else if (gethostname(host, sizeof host) != 0)
            host[0] = '\0';
        host[sizeof host - 1] = '\0';
        host[strcspn(host, ".")] = '\0'; /* the short name */
        node = host;
    }
    snprintf(w->node, sizeof w->node, "%s", node);
    w->job_id = m && m->job_id && *m->job_id ? m->job_id : getenv("SLURM_JOB_ID");
    if (w->job_id && !*w->job_id)
        w->job_id = NULL;
}

/* The value of a run-level column (RT_HISTORY_FROM_RUN) bound at i, the JSON texts from x. Returns an SQLite
 * result code. */
static int bind_run(rt_db_stmt *st, int i, size_t which, const cli_run_result *r, const run_texts *x)
{
    const rt_summary *s = r->summary;
    const rt_grid *g = s && s->grid && s->grid->g_per_kwh > 0 ? s->grid : NULL; /* NULL: unknown */
    switch (which) {
    case RT_HISTORY_RUN_START: return bind_real(st, i, r->start_secs);
    case RT_HISTORY_RUN_END: return bind_real(st, i, r->end_secs);
    case RT_HISTORY_RUN_VERSION: return bind_text(st, i, rt_version());
    case RT_HISTORY_RUN_TAGS: return bind_text(st, i, x->tags);
    case RT_HISTORY_RUN_COMMAND: return bind_text(st, i, x->command);
    case RT_HISTORY_RUN_PID: return r->pid > 0 ? rt_db_bind_int(st, i, r->pid) : rt_db_bind_null(st, i);
    case RT_HISTORY_RUN_EXIT:
        return r->exit_status >= 0 ? rt_db_bind_int(st, i, r->exit_status) : rt_db_bind_null(st, i);
    case RT_HISTORY_RUN_SAMPLES: return s ? rt_db_bind_int(st, i, (int64_t)s->samples) : rt_db_bind_null(st, i);
    case RT_HISTORY_RUN_ALLOCATION:
        return bind_text(st, i, s && s->allocation ? s->allocation : r->host ? r->host->allocation : NULL);
    case RT_HISTORY_RUN_SUMMARY_JSON: return bind_text(st, i, x->sjson);
    case RT_HISTORY_RUN_NOTES: return bind_text(st, i, x->notes);
    case RT_HISTORY_RUN_PHASES: return bind_text(st, i, x->phases);
    case RT_HISTORY_RUN_PHASE_MARKS: return bind_text(st, i, x->phase_marks);
    case RT_HISTORY_RUN_CORES: return bind_text(st, i, x->cores);
    case RT_HISTORY_RUN_MEMBER: return bind_text(st, i, x->member);
    case RT_HISTORY_RUN_USER_NAME: return bind_text(st, i, x->who->user[0] ? x->who->user : NULL);
    case RT_HISTORY_RUN_USER_UID: return rt_db_bind_int(st, i, x->who->uid);
    case RT_HISTORY_RUN_NODE: return bind_text(st, i, x->who->node[0] ? x->who->node : NULL);
    case RT_HISTORY_RUN_JOB_ID: return bind_text(st, i, x->who->job_id);
    case RT_HISTORY_RUN_UUID: return bind_text(st, i, r->run_uuid[0] ? r->run_uuid : NULL);
    case RT_HISTORY_RUN_GRID_G: return bind_real(st, i, g ? g->g_per_kwh : NAN);
    case RT_HISTORY_RUN_GRID_ZONE: return bind_text(st, i, g ? g->zone : NULL);
    case RT_HISTORY_RUN_GRID_SOURCE: return bind_text(st, i, g ? g->source : NULL);
    case RT_HISTORY_RUN_PLACE: return bind_text(st, i, s && s->request ? s->request->place : NULL);
    case RT_HISTORY_RUN_CPU_FROM: return bind_text(st, i, s ? s->requested_cpu_from : NULL);
    case RT_HISTORY_RUN_MEMORY_FROM: return bind_text(st, i, s ? s->requested_memory_from : NULL);
    case RT_HISTORY_RUN_GPUS_FROM: return bind_text(st, i, s ? s->requested_gpus_from : NULL);
    case RT_HISTORY_RUN_TIME_LIMIT_FROM: return bind_text(st, i, s ? s->time_limit_from : NULL);
    default: return rt_db_bind_null(st, i);
    }
}

/* Whether the summary field at off is an energy figure (or its carbon) whose method s lacks:
 * stored as NULL, never a number without its method. */
static bool without_method(const rt_summary *s, size_t off)
{
    if (off == offsetof(rt_summary, energy_joules) || off == offsetof(rt_summary, co2e_grams))
        return !s->energy_method;
    if (off == offsetof(rt_summary, process_energy_joules) || off == offsetof(rt_summary, process_co2e_grams))
        return !s->process_energy_method;
    return false;
}

/* Binds every column of the INSERT. Returns RT_DB_OK or the first error. */
static int bind_all(rt_db_stmt *st, const cli_run_result *r, const run_texts *x)
{
    int rc = RT_DB_OK;
    for (size_t k = 0; k < NCOLS && rc == RT_DB_OK; k++) {
        const col *c = &cols[k];
        int i = (int)k + 1;
        const void *base = c->src == RT_HISTORY_FROM_JOB       ? (const void *)r->job
                           : c->src == RT_HISTORY_FROM_HOST    ? (const void *)r->host
                           : c->src == RT_HISTORY_FROM_CLOUD   ? (const void *)r->cloud
                           : c->src == RT_HISTORY_FROM_SUMMARY ? (const void *)r->summary
                                                               : NULL;
        if (c->src == RT_HISTORY_FROM_RUN)
            rc = bind_run(st, i, c->off, r, x);
        else if (!base || (c->src == RT_HISTORY_FROM_JOB && c->off + sizeof(char *) > r->job->struct_size) ||
                 (c->src == RT_HISTORY_FROM_SUMMARY && without_method(r->summary, c->off)))
            rc = rt_db_bind_null(st, i);
        else if (c->type == 'T' || c->type == 'M')
            rc = bind_text(st, i, *(const char *const *)((const char *)base + c->off));
        else if (c->type == 'I')
            rc = bind_int(st, i, *(const int64_t *)((const char *)base + c->off));
        else if (c->type == 'N')
            rc = bind_text(st, i, rt_need_source_name(*(const int *)((const char *)base + c->off)));
        else if (c->type == 'B')
            rc = rt_db_bind_int(st, i, *(const int *)((const char *)base + c->off) != 0);
        else
            rc = bind_real(st, i, *(const double *)((const char *)base + c->off));
    }
    return rc;
}

/* ---- writing -------------------------------------------------------------------------- */

/* Runs sql (no rows wanted). Returns an rt_db result code. */
static int exec(rt_db *db, const char *sql)
{
    return rt_db_exec(db, sql);
}

/* Inside the write transaction: reads the schema version into *version and, unless it is a
 * newer one than this tool's (left untouched: the caller refuses to write), creates the table
 * when missing, adds the columns an older table lacks (ALTER TABLE ... ADD COLUMN, NULL in its
 * rows), makes the indexes (the job's runs newest first for `recommend --job` and `history
 * --job`; the run's own id, unique, so that a row written twice is stored once) and stamps this
 * version on a new or older database. The same statements for both engines, in the dialect of
 * db. Returns an rt_db result code. */
static int ensure_schema(rt_db *db, int *version)
{
    int rc = rt_db_get_version(db, version);
    if (rc != RT_DB_OK || *version > SCHEMA_VERSION)
        return rc;
    bool have[NCOLS + 1];
    rc = table_columns(db, have);
    bool all = have[NCOLS];
    for (size_t i = 0; i < NCOLS; i++)
        all = all && have[i];
    if (rc == RT_DB_OK && all && *version == SCHEMA_VERSION)
        return RT_DB_OK; /* nothing to do: a writer of a current history changes no schema */
    char sql[8192], head[128];
    snprintf(head, sizeof head, "CREATE TABLE IF NOT EXISTS runs (%s, ", rt_db_sql_id(db));
    if (rc == RT_DB_OK && !have[NCOLS]) {
        if (col_list(sql, sizeof sql, head, db, NULL, ")") < 0)
            return RT_DB_TOOBIG;
        rc = exec(db, sql);
        if (rc == RT_DB_OK)
            rc = table_columns(db, have);
    }
    for (size_t i = 0; rc == RT_DB_OK && i < NCOLS; i++) {
        if (have[i])
            continue;
        int n = snprintf(sql, sizeof sql, "ALTER TABLE runs ADD COLUMN %s %s", cols[i].name, col_type(db, &cols[i]));
        if (n < 0 || (size_t)n >= sizeof sql)
            return RT_DB_TOOBIG;
        rc = exec(db, sql);
    }
    if (rc == RT_DB_OK)
        rc = exec(db, "CREATE INDEX IF NOT EXISTS runs_job ON runs (job_name, exit_status, id)");
    if (rc == RT_DB_OK) /* schema version 12: `history --job` newest first without a sort */
        rc = exec(db, "CREATE INDEX IF NOT EXISTS runs_job_id ON runs (job_name, id)");
    if (rc == RT_DB_OK)
        rc = exec(db, "CREATE UNIQUE INDEX IF NOT EXISTS runs_uuid ON runs (run_uuid)");
    if (rc == RT_DB_OK && *version < SCHEMA_VERSION)
        rc = rt_db_set_version(db, SCHEMA_VERSION);
    return rc;
}

/* The INSERT of the run, prepared, bound and stepped. Returns an SQLite result code. */
static int insert_run(rt_db *db, const cli_run_result *r)
{
    char sql[8192];
    size_t len = 0;
    char head[64];
    snprintf(head, sizeof head, "%s runs (", rt_db_sql_insert_head(db)); /* a run stored already: left */
    if (col_list(sql, sizeof sql, head, NULL, NULL, ") VALUES (") < 0)
        return RT_DB_TOOBIG;
    len = strlen(sql);
    for (size_t i = 0; i < NCOLS; i++)
        if (history_put(sql, sizeof sql, &len, i ? ", ?" : "?") < 0)
            return RT_DB_TOOBIG;
    if (history_put(sql, sizeof sql, &len, ")") < 0 || history_put(sql, sizeof sql, &len, rt_db_sql_insert_tail(db)) < 0)
        return RT_DB_TOOBIG;
    char *tags = r->job ? json_str_array(r->job->tags, r->job->tag_count) : NULL;
    char *command = json_str_array((const char *const *)r->command, SIZE_MAX);
    char *sjson = summary_json(r->summary);
    char *notes = run_notes(r);
    char *phases = summary_member(sjson, "phases"), *phase_marks = summary_member(sjson, "phase_marks");
    char *cores = summary_member(sjson, "cores"), *member = summary_member(sjson, "member");
    run_who who;
    run_who_of(r, &who);
    run_texts x = {tags, command, sjson, notes, phases, phase_marks, cores, member, &who};
    rt_db_stmt *st = NULL;
    int rc = rt_db_prepare(db, sql, &st);
    if (rc == RT_DB_OK)
        rc = bind_all(st, r, &x);
    if (rc == RT_DB_OK) {
        rc = rt_db_step(st);
        if (rc == RT_DB_DONE)
            rc = RT_DB_OK;
    }
    rt_db_finalize(st);
    free(tags);
    free(command);
    free(sjson);
    free(notes);
    free(phases);
    free(phase_marks);
    free(cores);
    free(member);
    return rc;
}

static int keep_row(const char *path, const cli_run_result *r, char *out, size_t cap);

static double write_by; /* CLOCK_MONOTONIC seconds by which a PostgreSQL write ends; 0: unset */

void cli_history_deadline(double mono_secs)
{
    write_by = mono_secs;
}

/* The deadline of a PostgreSQL connection that writes: the run's (TRACKER_FINISH_TIMEOUT after
 * its end began), else WRITE_SECS from now (`upload`). */
static double write_deadline(void)
{
    return write_by > 0 ? write_by : cli_mono_secs() + WRITE_SECS;
}

/* The environment variable naming a file read in place of /proc/self/mountinfo to tell whether
 * the history lies on a network file system: for the tests alone (docs/contracts.md). */
#define MOUNTINFO_SEAM "TRACKER_TEST_MOUNTINFO"

void cli_history_fs_warn(const char *path)
{
    static bool said; /* once a run */
    char type[64], mount[4096];
    const char *seam = getenv(MOUNTINFO_SEAM);
    if (said || rt_db_is_url(path) ||
        !rt_sqlite_network_fs(path, seam && *seam ? seam : NULL, type, sizeof type, mount, sizeof mount))
        return;
    said = true;
    cli_say("warning: history %s: lies on %s%s%s, a network file system: SQLite's locking over network file "
            "systems is unreliable, and many nodes writing at once can corrupt the file; keep it on a local disk, or "
            "keep a team's or a cluster's history in PostgreSQL: --history postgresql://USER@HOST/DB",
            path, type, mount[0] ? " at " : "", mount);
}

rt_db *history_begin_write(const char *path, const char *what, double deadline, int *rc_out, char *why,
                           size_t whycap)
{
    bool pg = rt_db_is_url(path);
    int flags = RT_DB_OPEN_READWRITE | RT_DB_OPEN_CREATE;
    *rc_out = -1;
    why[0] = '\0';
    cli_history_fs_warn(path);
    if (!pg) {
        /* SQLite opens the file itself. One look decides (no gap between two): a link planted in
         * a shared directory is refused here, an allowed link is followed (in a sticky directory
         * only its owner or the directory's may replace it), and anything else (no link, or
         * nothing there yet) is opened with SQLite told not to follow one (one put there after
         * this look is refused by it) */
        cli_path_kind kind = cli_path_look(path);
        if (kind == CLI_PATH_REFUSED) {
            cli_say("warning: history %s: refusing it: %s (%s)", path, cli_refused_why(), what);
            return NULL;
        }
        flags |= kind == CLI_PATH_LINK ? 0 : RT_DB_OPEN_NOFOLLOW;
    }
    rt_db *db = NULL;
    int rc = rt_db_open(path, flags, BUSY_TIMEOUT_MS, pg ? deadline : 0, &db, why, whycap);
    if (!db) {
        *rc_out = rc != RT_DB_OK ? rc : RT_DB_ERROR;
        return NULL;
    }
    if (rc == RT_DB_OK && !pg)
        rc = exec(db, "PRAGMA synchronous = FULL");
    if (rc == RT_DB_OK)
        rc = rt_db_begin_write(db);
    int version = 0;
    if (rc == RT_DB_OK)
        rc = ensure_schema(db, &version);
    if (rc == RT_DB_OK && version > SCHEMA_VERSION) { /* its columns may mean what ours do not */
        cli_say("warning: history %s: made by a newer resource-tracker (schema version %d; this one writes %d): %s",
                history_shown(path), version, SCHEMA_VERSION, what);
        exec(db, "ROLLBACK");
        rt_db_close(db);
        return NULL;
    }
    *rc_out = rc;
    return db;
}

int cli_history_append(const char *path, const cli_run_result *r)
{
    bool pg = rt_db_is_url(path);
    char shown[4096]; /* the history as messages say it: a URL without its password */
    rt_db_redact(path, shown, sizeof shown);
    char why[600];
    int rc;
    rt_db *db = history_begin_write(path, "the run was not recorded", write_deadline(), &rc, why, sizeof why);
    if (!db && rc == -1)
        return -1; /* refused, or a newer tool's: said */
    if (rc == RT_DB_OK)
        rc = insert_run(db, r);
    if (rc == RT_DB_OK)
        rc = exec(db, "COMMIT");
    char kept[4400];
    if (rc != RT_DB_OK) {
        /* the message before the rollback: it would replace it */
        const char *msg = !db ? why : rt_db_errcode(db) != RT_DB_OK ? rt_db_errmsg(db) : rt_db_errstr(rc);
        int code = db && rt_db_errcode(db) != RT_DB_OK ? rt_db_errcode(db) : rc;
        /* a file another writer held past the timeout; a server that is down, slow, full or
         * refusing us: the row waits in the state directory */
        if (!pg && (code & 0xff) != RT_DB_BUSY && (code & 0xff) != RT_DB_LOCKED)
            cli_say("warning: history %s: %s (the run was not recorded)", shown, msg);
        else if (keep_row(shown, r, kept, sizeof kept) == 0)
            cli_say("warning: history %s: %s: the run's row is kept in %s, written by the next run with this "
                    "history or `resource-tracker upload`", shown, msg, kept);
        else
            cli_say("warning: history %s: %s, and the row cannot be kept for later (the run was not recorded)", shown,
                    msg);
        if (db && rt_db_in_transaction(db))
            exec(db, "ROLLBACK");
    }
    rt_db_close(db);
    return rc == RT_DB_OK ? 0 : -1;
}

/* ---- reading -------------------------------------------------------------------------- */

const char *history_shown(const char *path)
{
    static char shown[4096];
    rt_db_redact(path, shown, sizeof shown);
    return shown;
}

rt_db *history_open_read(const char *path)
{
    rt_db *db = NULL;
    char why[600];
    if (rt_history_open(path, &db, why, sizeof why) != RT_DB_OK)
        cli_say("history %s: %s", history_shown(path), why);
    return db;
}

bool history_next_row(rt_db_stmt *st, int *rc)
{
    int step = rt_db_step(st);
    if (step != RT_DB_ROW && step != RT_DB_DONE)
        *rc = step;
    return step == RT_DB_ROW;
}

int cli_history_instance(const char *path, const char *job, char *vendor, size_t vcap, char *type, size_t tcap,
                         char *region, size_t rcap)
{
    vendor[0] = type[0] = region[0] = '\0';
    rt_db *db = history_open_read(path);
    if (!db)
        return -1;
    static const char sql[] = "SELECT cloud_vendor_id, cloud_instance_type, cloud_region_id FROM runs"
                              " WHERE exit_status = 0 AND job_name = ?2 AND cloud_vendor_id IS NOT NULL"
                              " AND cloud_instance_type IS NOT NULL ORDER BY id DESC LIMIT ?1";
    rt_db_stmt *st = NULL;
    int rc = rt_history_query(db, sql, job, 1, &st);
    if (rc == RT_DB_OK && history_next_row(st, &rc)) {
        const char *v = rt_db_column_text(st, 0), *t = rt_db_column_text(st, 1),
                            *r = rt_db_column_text(st, 2);
        snprintf(vendor, vcap, "%s", v ? (const char *)v : "");
        snprintf(type, tcap, "%s", t ? (const char *)t : "");
        snprintf(region, rcap, "%s", r ? (const char *)r : "");
    }
    if (rc != RT_DB_OK)
        cli_say("history %s: %s", history_shown(path), rt_db_errmsg(db));
    rt_db_finalize(st);
    rt_db_close(db);
    return rc == RT_DB_OK ? 0 : -1;
}

int cli_history_summaries(const char *path, const char *job, int last, rt_summary **out, size_t *n)
{
    char why[600];
    if (rt_history_runs(path, job, last, out, n, NULL, why, sizeof why) != RT_DB_OK) {
        cli_say("history %s: %s", history_shown(path), why);
        return -1;
    }
    return 0;
}

/* ---- a row kept for later -------------------------------------------------------------- */

/* A row that could not be written because another writer held the history past the busy
 * timeout (a PostgreSQL history: any failure, the server down, slow, full or refusing us) is
 * kept in the state directory (cli_state_dir) as an SQLite database of its own,
 * history-START-PID.pending: a runs table as the history's holding the one row, and the
 * history's path (a URL without its password) in kept_for. The next run that writes that
 * history, or `resource-tracker upload`, copies it in (cli_history_deliver) and removes the
 * file; a row whose run (its run_uuid; before schema 12 start, pid, host) is in the history
 * already is not copied again, so a copy whose file could not be removed is never written
 * twice. */

#define KEPT_PREFIX "history-"
#define KEPT_SUFFIX ".pending"

/* The state directory, made (0700, with its parents) when missing, into dir[cap]. Returns 0, or
 * -1 when it cannot be had or is not a directory of ours that only we may write. */
static int kept_dir(char *dir, size_t cap)
{
    int n = cli_state_dir(dir, cap);
    if (n <= 0 || (size_t)n >= cap)
        return -1;
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            (void)mkdir(dir, 0700); /* the parents: there, or made */
            *p = '/';
        }
    (void)mkdir(dir, 0700);
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) ? 0 : -1;
}

/* Runs sql with text bound to its one parameter. Returns an SQLite result code. */
static int exec_text(rt_db *db, const char *sql, const char *text)
{
    rt_db_stmt *st = NULL;
    int rc = rt_db_prepare(db, sql, &st);
    if (rc == RT_DB_OK && (rc = bind_text(st, 1, text)) == RT_DB_OK && (rc = rt_db_step(st)) == RT_DB_DONE)
        rc = RT_DB_OK;
    rt_db_finalize(st);
    return rc;
}

/* Writes r and path as a kept row into a new file of the state directory (written under a
 * temporary name, then renamed: a half-written one is never taken). Returns 0 with its path
 * in out[cap], or -1. */
static int keep_row(const char *path, const cli_run_result *r, char *out, size_t cap)
{
    char dir[4096], tmp[4200];
    if (kept_dir(dir, sizeof dir) < 0)
        return -1;
    double start = r->summary ? r->summary->start_secs : NAN;
    int n = snprintf(out, cap, "%s/" KEPT_PREFIX "%.0f-%ld" KEPT_SUFFIX, dir, isfinite(start) ? start * 1000 : 0.0,
                     (long)getpid());
    if (n < 0 || (size_t)n >= cap || snprintf(tmp, sizeof tmp, "%s.tmp", out) >= (int)sizeof tmp)
        return -1;
    unlink(tmp);
    rt_db *db = NULL;
    int version = 0;
    char why[300];
    int rc = rt_db_open(tmp, RT_DB_OPEN_READWRITE | RT_DB_OPEN_CREATE | RT_DB_OPEN_NOFOLLOW, BUSY_TIMEOUT_MS, 0, &db, why,
                        sizeof why);
    if (rc == RT_DB_OK)
        rc = exec(db, "BEGIN IMMEDIATE");
    if (rc == RT_DB_OK)
        rc = ensure_schema(db, &version);
    if (rc == RT_DB_OK)
        rc = insert_run(db, r);
    if (rc == RT_DB_OK)
        rc = exec(db, "CREATE TABLE kept_for (path TEXT)");
    if (rc == RT_DB_OK)
        rc = exec_text(db, "INSERT INTO kept_for (path) VALUES (?)", path);
    if (rc == RT_DB_OK)
        rc = exec(db, "COMMIT");
    rt_db_close(db);
    if (rc != RT_DB_OK || rename(tmp, out) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* The history path a kept file is for, into out[cap]. Returns 0, or -1 (not a kept file). */
static int kept_for(rt_db *db, char *out, size_t cap)
{
    rt_db_stmt *st = NULL;
    int rc = rt_db_prepare(db, "SELECT path FROM kept_for", &st);
    const char *p = rc == RT_DB_OK && rt_db_step(st) == RT_DB_ROW ? rt_db_column_text(st, 0) : NULL;
    int n = p ? snprintf(out, cap, "%s", p) : -1;
    rt_db_finalize(st);
    return n >= 0 && (size_t)n < cap ? 0 : -1;
}

/* Copies the runs of kept (a kept row's SQLite file) into db, each bound by its value's type, an
 * INSERT that leaves out a run db has already (its run_uuid). Returns an rt_db result code. */
static int copy_rows(rt_db *kept, rt_db *db)
{
    bool have[NCOLS + 1];
    char names[8192], sel[9000], sql[20000], head[64];
    int rc = table_columns(kept, have);
    snprintf(head, sizeof head, "%s runs (", rt_db_sql_insert_head(db));
    size_t len;
    if (rc == RT_DB_OK && (col_list(names, sizeof names, "SELECT ", NULL, have, " FROM runs") < 0 ||
                           snprintf(sel, sizeof sel, "%s", names) >= (int)sizeof sel ||
                           col_list(sql, sizeof sql, head, NULL, NULL, ") VALUES (") < 0))
        rc = RT_DB_TOOBIG;
    len = strlen(sql);
    for (size_t i = 0; rc == RT_DB_OK && i < NCOLS; i++)
        if (history_put(sql, sizeof sql, &len, i ? ", ?" : "?") < 0)
            rc = RT_DB_TOOBIG;
    if (rc == RT_DB_OK &&
        (history_put(sql, sizeof sql, &len, ")") < 0 || history_put(sql, sizeof sql, &len, rt_db_sql_insert_tail(db)) < 0))
        rc = RT_DB_TOOBIG;
    rt_db_stmt *from = NULL;
    if (rc == RT_DB_OK)
        rc = rt_db_prepare(kept, sel, &from);
    while (rc == RT_DB_OK && (rc = rt_db_step(from)) == RT_DB_ROW) {
        rt_db_stmt *to = NULL;
        rc = rt_db_prepare(db, sql, &to);
        for (int i = 0; rc == RT_DB_OK && i < (int)NCOLS; i++) {
            switch (rt_db_column_type(from, i)) {
            case RT_DB_INTEGER: rc = rt_db_bind_int(to, i + 1, rt_db_column_int64(from, i)); break;
            case RT_DB_FLOAT: rc = rt_db_bind_real(to, i + 1, rt_db_column_double(from, i)); break;
            case RT_DB_NULL: rc = rt_db_bind_null(to, i + 1); break;
            default: rc = rt_db_bind_text(to, i + 1, rt_db_column_text(from, i)); break;
            }
        }
        if (rc == RT_DB_OK && (rc = rt_db_step(to)) == RT_DB_DONE)
            rc = RT_DB_OK;
        rt_db_finalize(to);
    }
    rt_db_finalize(from);
    return rc == RT_DB_DONE ? RT_DB_OK : rc;
}

/* Copies the kept row of file into the history at path (its own transaction, the history's
 * busy timeout; a PostgreSQL history's within the write deadline), unless its run is there
 * already. Returns an rt_db result code, the message in why[cap]. */
static int copy_kept(const char *path, const char *file, char *why, size_t cap)
{
    rt_db *db = NULL, *kept = NULL;
    int version = 0;
    bool pg = rt_db_is_url(path);
    int rc = rt_db_open(path, RT_DB_OPEN_READWRITE | RT_DB_OPEN_CREATE, BUSY_TIMEOUT_MS, pg ? write_deadline() : 0,
                        &db, why, cap);
    if (rc == RT_DB_OK && pg)
        rc = rt_db_open(file, RT_DB_OPEN_READONLY | RT_DB_OPEN_NOFOLLOW, BUSY_TIMEOUT_MS, 0, &kept, why, cap);
    if (rc == RT_DB_OK && !pg)
        rc = exec_text(db, "ATTACH DATABASE ? AS kept", file);
    if (rc == RT_DB_OK && !pg)
        rc = exec(db, "PRAGMA synchronous = FULL");
    if (rc == RT_DB_OK)
        rc = rt_db_begin_write(db);
    if (rc == RT_DB_OK)
        rc = ensure_schema(db, &version);
    if (rc == RT_DB_OK && version > SCHEMA_VERSION)
        rc = RT_DB_MISMATCH; /* a newer tool's history: left for it */
    char names[8192], sql[20000];
    if (rc == RT_DB_OK && pg)
        rc = copy_rows(kept, db);
    else if (rc == RT_DB_OK &&
             (col_list(names, sizeof names, "", NULL, NULL, "") < 0 ||
              snprintf(sql, sizeof sql,
                       "INSERT OR IGNORE INTO main.runs (%s) SELECT %s FROM kept.runs k WHERE NOT EXISTS (SELECT 1 "
                       "FROM main.runs h WHERE h.start_secs IS k.start_secs AND h.pid IS k.pid AND "
                       "h.host_hostname IS k.host_hostname)",
                       names, names) >= (int)sizeof sql))
        rc = RT_DB_TOOBIG;
    else if (rc == RT_DB_OK)
        rc = exec(db, sql);
    if (rc == RT_DB_OK)
        rc = exec(db, "COMMIT");
    if (rc != RT_DB_OK && db)
        snprintf(why, cap, "%s", rt_db_errcode(db) != RT_DB_OK ? rt_db_errmsg(db) : rt_db_errstr(rc));
    else if (rc != RT_DB_OK && kept)
        snprintf(why, cap, "%s", rt_db_errmsg(kept));
    if (rc != RT_DB_OK && db && rt_db_in_transaction(db))
        exec(db, "ROLLBACK");
    rt_db_close(kept);
    rt_db_close(db);
    return rc;
}

int cli_history_deliver(const char *only, unsigned *written, unsigned *left)
{
    *written = *left = 0;
    char dir[4096];
    int n = cli_state_dir(dir, sizeof dir);
    DIR *d = n > 0 && (size_t)n < sizeof dir ? opendir(dir) : NULL;
    if (!d)
        return 0;
    char only_shown[4096]; /* a URL is kept without its password: compared so */
    if (only)
        rt_db_redact(only, only_shown, sizeof only_shown);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, KEPT_PREFIX, strlen(KEPT_PREFIX)) != 0 || len <= strlen(KEPT_SUFFIX) ||
            strcmp(e->d_name + len - strlen(KEPT_SUFFIX), KEPT_SUFFIX) != 0)
            continue;
        char file[4400], path[4096], why[600];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        rt_db *db = NULL;
        int rc = rt_db_open(file, RT_DB_OPEN_READONLY | RT_DB_OPEN_NOFOLLOW, BUSY_TIMEOUT_MS, 0, &db, why, sizeof why);
        if (rc == RT_DB_CANTOPEN && !db && strncmp(why, "cannot load", 11) == 0)
            break; /* no SQLite here */
        rc = rc == RT_DB_OK && kept_for(db, path, sizeof path) == 0 ? RT_DB_OK : RT_DB_CORRUPT;
        rt_db_close(db);
        if (rc != RT_DB_OK || (only && strcmp(only_shown, path) != 0)) {
            *left += rc != RT_DB_OK; /* another history's row waits for its own run, or upload */
            continue;
        }
        /* the run's own history with its password, when it gave one; else libpq's usual places */
        rc = copy_kept(only ? only : path, file, why, sizeof why);
        if (rc == RT_DB_OK && unlink(file) == 0) {
            ++*written;
            cli_say("history %s: the row kept in %s was written", path, file);
        } else {
            ++*left;
            cli_say("warning: history %s: the row kept in %s is not written yet (%s)", path, file,
                    rc == RT_DB_OK ? strerror(errno) : why);
        }
    }
    closedir(d);
    return *left ? -1 : 0;
}
