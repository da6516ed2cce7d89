/* history.c - the run history's database (SQLite): a tracking run with --history appends one
 * row per run (job metadata, command, exit status, host, cloud, statistics); runs are read back
 * as summaries (`recommend --job`) and for `resource-tracker history` (history_cmd.c).
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

#define SCHEMA_VERSION 12
#define BUSY_TIMEOUT_MS 10000
#define WRITE_SECS 10.0 /* a PostgreSQL write's bound outside a tracking run's end */

/* ---- the columns --------------------------------------------------------------------- */

typedef enum col_src { SRC_RUN, SRC_JOB, SRC_HOST, SRC_CLOUD, SRC_SUM } col_src;

/* Run-level columns that need code of their own (SRC_RUN; off holds which). */
enum {
    X_START, X_END, X_VERSION, X_TAGS, X_COMMAND, X_PID, X_EXIT, X_SAMPLES, X_ALLOCATION, X_SUMMARY_JSON, X_NOTES,
    X_PHASES, X_PHASE_MARKS, X_GRID_G, X_GRID_ZONE, X_GRID_SOURCE, X_PLACE, X_CPU_FROM, X_MEMORY_FROM, X_GPUS_FROM,
    X_TIME_LIMIT_FROM, X_CORES, X_MEMBER, X_RUN_UUID, X_USER_NAME, X_USER_UID, X_NODE, X_JOB_ID
};

/* One column of the runs table: its name, its type ('T' text, 'I' integer, 'R' real; of the
 * summary also 'N', an rt_need_source kept as its name, 'B', an int flag kept as 0 or 1, and
 * 'M', an energy method's name: "measured", "sampled" or "estimated"),
 * and where the value lives (the field at offset off in the rt_job, rt_host, rt_cloud or
 * rt_summary of the run). */
typedef struct col {
    const char *name;
    char type;
    col_src src;
    size_t off;
} col;

#define RUN(n, t, x) {n, t, SRC_RUN, x}
#define JOB(f) {#f, 'T', SRC_JOB, offsetof(rt_job, f)}
#define HOST(n, t, f) {n, t, SRC_HOST, offsetof(rt_host, f)}
#define CLOUD(f) {"cloud_" #f, 'T', SRC_CLOUD, offsetof(rt_cloud, f)}
#define SUM(f) {#f, 'R', SRC_SUM, offsetof(rt_summary, f)}
#define NEED(n, f) {n "_mib", 'R', SRC_SUM, offsetof(rt_summary, f.mib)}, \
        {n "_source", 'N', SRC_SUM, offsetof(rt_summary, f.source)}, {n "_sampled", 'B', SRC_SUM, offsetof(rt_summary, f.sampled)}
#define METHOD(f) {#f, 'M', SRC_SUM, offsetof(rt_summary, f)}
#define DIST(f)                                                                                                        \
    {#f "_mean", 'R', SRC_SUM, offsetof(rt_summary, f.mean)}, {#f "_peak", 'R', SRC_SUM, offsetof(rt_summary, f.peak)}, \
        {#f "_p50", 'R', SRC_SUM, offsetof(rt_summary, f.p50)}, {#f "_p95", 'R', SRC_SUM, offsetof(rt_summary, f.p95)}

/* Every column after id, in table order. The SRC_SUM ones are every double of rt_summary but
 * start_secs and end_secs (the run's own times stand for them), so a summary comes back whole.
 * New columns go at the end: ALTER TABLE appends them there, so a migrated table and a new one
 * have the same order. */
static const col cols[] = {
    RUN("start_secs", 'R', X_START), RUN("end_secs", 'R', X_END), RUN("tool_version", 'T', X_VERSION),
    JOB(job_name), JOB(project_name), JOB(stage_name), JOB(task_name), JOB(team), JOB(env), JOB(language),
    JOB(orchestrator), JOB(executor), JOB(external_run_id), JOB(container_image),
    RUN("tags", 'T', X_TAGS), RUN("command", 'T', X_COMMAND), RUN("pid", 'I', X_PID), RUN("exit_status", 'I', X_EXIT),
    HOST("host_hostname", 'T', hostname), HOST("host_id", 'T', host_id), HOST("host_vcpus", 'I', vcpus),
    HOST("host_cpu_model", 'T', cpu_model), HOST("host_memory_mib", 'R', memory_mib),
    HOST("host_gpu_model", 'T', gpu_model), HOST("host_gpu_count", 'I', gpu_count),
    HOST("host_gpu_memory_mib", 'R', gpu_memory_mib), HOST("host_allocation", 'T', allocation),
    CLOUD(vendor_id), CLOUD(region_id), CLOUD(zone_id), CLOUD(instance_type),
    RUN("samples", 'I', X_SAMPLES), SUM(duration_secs),
    SUM(process_cpu_secs), DIST(process_cores), DIST(process_pss_mib), DIST(process_rss_mib),
    DIST(process_gpu_usage), DIST(process_gpu_vram_mib), SUM(process_gpus_used),
    SUM(process_read_bytes), SUM(process_write_bytes),
    SUM(cpu_count), DIST(cpu_cores), DIST(memory_used_mib), SUM(memory_total_mib),
    DIST(gpu_usage), DIST(gpu_vram_mib), SUM(gpu_count), SUM(gpu_vram_total_mib),
    SUM(disk_read_bytes), SUM(disk_write_bytes), SUM(net_recv_bytes), SUM(net_sent_bytes),
    SUM(disk_space_used_peak_bytes), SUM(disk_space_total_bytes),
    RUN("allocation", 'T', X_ALLOCATION), RUN("summary_json", 'T', X_SUMMARY_JSON),
    /* schema version 2: the 0.6 figures */
    SUM(process_memory_peak_mib), SUM(oom_kills), SUM(oom_kill_secs), SUM(memory_limit_mib), SUM(memory_high_mib),
    SUM(cpu_quota_cores), SUM(cpu_periods), SUM(cpu_throttled_periods), SUM(cpu_throttled_secs), SUM(pids_peak),
    SUM(pids_limit), DIST(pressure_cpu_some_pct), DIST(pressure_memory_some_pct), DIST(pressure_memory_full_pct),
    DIST(pressure_io_some_pct), DIST(pressure_io_full_pct),
    /* schema version 3: the 0.9 figures */
    SUM(process_rss_hwm_mib), SUM(process_unreclaimable_peak_mib), SUM(process_gpu_vram_peak_mib),
    SUM(process_cancelled_write_bytes), SUM(process_cgroup_exclusive), SUM(left_behind),
    NEED("memory_need", memory_need), NEED("vram_need", vram_need), RUN("notes", 'T', X_NOTES),
    /* schema version 4: the 0.14 phases, as the summary's JSON has them (NULL: no mark came) */
    RUN("phases", 'T', X_PHASES), RUN("phase_marks", 'T', X_PHASE_MARKS),
    /* schema version 5: the 0.15 energy and carbon (a figure is NULL without its method) */
    SUM(energy_joules), METHOD(energy_method), SUM(process_energy_joules), METHOD(process_energy_method),
    DIST(power_watts), DIST(process_power_watts), SUM(idle_power_watts), SUM(gpu_power_throttled_secs),
    SUM(gpu_thermal_throttled_secs), SUM(co2e_grams), SUM(process_co2e_grams), RUN("grid_g_per_kwh", 'R', X_GRID_G),
    RUN("grid_zone", 'T', X_GRID_ZONE), RUN("grid_source", 'T', X_GRID_SOURCE),
    /* schema version 6: the 0.16 place, request and efficiencies */
    RUN("place", 'T', X_PLACE), SUM(requested_cpu_cores), RUN("requested_cpu_from", 'T', X_CPU_FROM),
    SUM(requested_memory_mib), RUN("requested_memory_from", 'T', X_MEMORY_FROM), SUM(requested_gpus),
    RUN("requested_gpus_from", 'T', X_GPUS_FROM), SUM(time_limit_secs), RUN("time_limit_from", 'T', X_TIME_LIMIT_FROM),
    SUM(cpu_efficiency_pct), SUM(memory_efficiency_pct), SUM(gpu_efficiency_pct), SUM(time_limit_used_pct),
    SUM(process_vms_peak_mib),
    /* schema version 7: the 0.18 run under other core counts, as the summary's JSON "cores" has
     * it (NULL: no tracked tree) */
    RUN("cores", 'T', X_CORES),
    /* schema version 8: the 0.18 member, as the summary's JSON has it (NULL: no job of nodes) */
    RUN("member", 'T', X_MEMBER),
    /* schema version 9: the 0.19 GPU work (NVML GPM; NULL without it), whose figures they are
     * (gpu_work_shared 1: the devices', shared with other processes; 0: the job's), the GPUs the
     * tree kept busy, its VRAM peak on one GPU, the seconds its GPUs idled while its CPU worked */
    DIST(gpu_sm_active_pct), DIST(gpu_sm_occupancy_pct), DIST(gpu_tensor_active_pct), DIST(gpu_dram_active_pct),
    DIST(gpu_fp64_active_pct), DIST(gpu_fp32_active_pct), DIST(gpu_fp16_active_pct), DIST(gpu_pcie_bytes_per_sec),
    DIST(gpu_nvlink_bytes_per_sec), SUM(gpu_work_shared), SUM(process_gpus_busy),
    SUM(process_gpu_vram_per_gpu_peak_mib), SUM(gpu_idle_cpu_busy_secs),
    /* schema version 10: the 0.20 re-reads (file data the job's group read back after its
     * memory evicted it) */
    SUM(memory_refault_mib),
    /* and what the processes left behind held at the end (NULL: none left) */
    SUM(left_behind_mib),
    /* and the tree's processes whose end the kernel told (NULL: not listened to) */
    SUM(process_exits_counted),
    /* schema version 11: the 0.21 tree's processes seen ignoring SIGCHLD, and the
     * signal that ended the command (0: none; NULL: not known) */
    SUM(process_unwaited_parents), /* the tree's processes seen ignoring SIGCHLD */
    SUM(end_signal),
    /* schema version 12: the run's own id (32 hex digits, unique: a row written twice, a kept
     * row delivered twice, a write whose COMMIT's answer was lost or a run imported twice, is
     * stored once) */
    RUN("run_uuid", 'T', X_RUN_UUID),
    /* and who ran what: the real uid's login name (NULL: no passwd entry) and the uid, the node
     * (the member's, SLURMD_NODENAME, else the short host name) and the job's id (the member's
     * job_id: SLURM_JOB_ID, ...; NULL: no job of a scheduler or launcher) */
    RUN("user_name", 'T', X_USER_NAME), RUN("user_uid", 'I', X_USER_UID), RUN("node", 'T', X_NODE),
    RUN("job_id", 'T', X_JOB_ID),
};
#define NCOLS (sizeof cols / sizeof cols[0])

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
 * ", ", then tail. only_sum keeps the statistics columns alone; have (NULL: all) says which
 * columns the table has, the others are written as NULL (for a SELECT). Returns 0, or -1 when
 * buf is too small (a bug: the buffers below are sized for the table). */
static int col_list(char *buf, size_t cap, const char *head, const rt_db *typed, bool only_sum, const bool *have,
                    const char *tail)
{
    size_t len = 0;
    buf[0] = '\0';
    if (history_put(buf, cap, &len, head) < 0)
        return -1;
    bool first = true;
    for (size_t i = 0; i < NCOLS; i++) {
        if (only_sum && cols[i].src != SRC_SUM)
            continue;
        const char *name = !have || have[i] ? cols[i].name : "NULL";
        if ((!first && history_put(buf, cap, &len, ", ") < 0) || history_put(buf, cap, &len, name) < 0 ||
            (typed && (history_put(buf, cap, &len, " ") < 0 || history_put(buf, cap, &len, col_type(typed, &cols[i])) < 0)))
            return -1;
        first = false;
    }
    return history_put(buf, cap, &len, tail);
}

/* A column name the runs table has: marked in have (table_columns' walk). */
static void mark_column(void *arg, const char *name)
{
    bool *have = arg;
    for (size_t i = 0; i < NCOLS; i++)
        if (strcmp(cols[i].name, name) == 0)
            have[i] = true;
    have[NCOLS] = true; /* the table is there */
}

/* Which of cols the runs table of db has, into have[NCOLS] (all false when there is no such
 * table), and have[NCOLS] whether the table is there. Returns an rt_db result code. */
static int table_columns(rt_db *db, bool have[NCOLS + 1])
{
    memset(have, 0, (NCOLS + 1) * sizeof *have);
    return rt_db_columns(db, "runs", mark_column, have);
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
    return col_list(buf, cap, "", false, false, NULL, "");
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

/* The value of a run-level column (SRC_RUN) bound at i, the JSON texts from x. Returns an SQLite
 * result code. */
static int bind_run(rt_db_stmt *st, int i, size_t which, const cli_run_result *r, const run_texts *x)
{
    const rt_summary *s = r->summary;
    const rt_grid *g = s && s->grid && s->grid->g_per_kwh > 0 ? s->grid : NULL; /* NULL: unknown */
    switch (which) {
    case X_START: return bind_real(st, i, r->start_secs);
    case X_END: return bind_real(st, i, r->end_secs);
    case X_VERSION: return bind_text(st, i, rt_version());
    case X_TAGS: return bind_text(st, i, x->tags);
    case X_COMMAND: return bind_text(st, i, x->command);
    case X_PID: return r->pid > 0 ? rt_db_bind_int(st, i, r->pid) : rt_db_bind_null(st, i);
    case X_EXIT: return r->exit_status >= 0 ? rt_db_bind_int(st, i, r->exit_status) : rt_db_bind_null(st, i);
    case X_SAMPLES: return s ? rt_db_bind_int(st, i, (int64_t)s->samples) : rt_db_bind_null(st, i);
    case X_ALLOCATION:
        return bind_text(st, i, s && s->allocation ? s->allocation : r->host ? r->host->allocation : NULL);
    case X_SUMMARY_JSON: return bind_text(st, i, x->sjson);
    case X_NOTES: return bind_text(st, i, x->notes);
    case X_PHASES: return bind_text(st, i, x->phases);
    case X_PHASE_MARKS: return bind_text(st, i, x->phase_marks);
    case X_CORES: return bind_text(st, i, x->cores);
    case X_MEMBER: return bind_text(st, i, x->member);
    case X_USER_NAME: return bind_text(st, i, x->who->user[0] ? x->who->user : NULL);
    case X_USER_UID: return rt_db_bind_int(st, i, x->who->uid);
    case X_NODE: return bind_text(st, i, x->who->node[0] ? x->who->node : NULL);
    case X_JOB_ID: return bind_text(st, i, x->who->job_id);
    case X_RUN_UUID: return bind_text(st, i, r->run_uuid[0] ? r->run_uuid : NULL);
    case X_GRID_G: return bind_real(st, i, g ? g->g_per_kwh : NAN);
    case X_GRID_ZONE: return bind_text(st, i, g ? g->zone : NULL);
    case X_GRID_SOURCE: return bind_text(st, i, g ? g->source : NULL);
    case X_PLACE: return bind_text(st, i, s && s->request ? s->request->place : NULL);
    case X_CPU_FROM: return bind_text(st, i, s ? s->requested_cpu_from : NULL);
    case X_MEMORY_FROM: return bind_text(st, i, s ? s->requested_memory_from : NULL);
    case X_GPUS_FROM: return bind_text(st, i, s ? s->requested_gpus_from : NULL);
    case X_TIME_LIMIT_FROM: return bind_text(st, i, s ? s->time_limit_from : NULL);
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
        const void *base = c->src == SRC_JOB     ? (const void *)r->job
                           : c->src == SRC_HOST  ? (const void *)r->host
                           : c->src == SRC_CLOUD ? (const void *)r->cloud
                           : c->src == SRC_SUM   ? (const void *)r->summary
                                                 : NULL;
        if (c->src == SRC_RUN)
            rc = bind_run(st, i, c->off, r, x);
        else if (!base || (c->src == SRC_JOB && c->off + sizeof(char *) > r->job->struct_size) ||
                 (c->src == SRC_SUM && without_method(r->summary, c->off)))
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
        if (col_list(sql, sizeof sql, head, db, false, NULL, ")") < 0)
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
    if (col_list(sql, sizeof sql, head, NULL, false, NULL, ") VALUES (") < 0)
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

/* Whether db has the runs table: 1 yes, 0 no, or an SQLite error code (negated). */
static int has_runs(rt_db *db)
{
    rt_db_stmt *st = NULL;
    int rc = rt_db_prepare(db,
                           rt_db_engine_of(db) == RT_DB_SQLITE
                               ? "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'"
                               : "SELECT 1 WHERE to_regclass('runs') IS NOT NULL",
                           &st);
    if (rc == RT_DB_OK) {
        rc = rt_db_step(st);
        rc = rc == RT_DB_ROW ? 1 : rc == RT_DB_DONE ? 0 : -rc;
    } else {
        rc = -rc;
    }
    rt_db_finalize(st);
    return rc;
}

const char *history_shown(const char *path)
{
    static char shown[4096];
    rt_db_redact(path, shown, sizeof shown);
    return shown;
}

rt_db *history_open_read(const char *path)
{
    bool pg = rt_db_is_url(path);
    struct stat sb;
    if (!pg && stat(path, &sb) < 0) {
        char why[300];
        if (rt_sqlite_load(why, sizeof why) != RT_OK)
            cli_say("history %s: %s", path, why);
        else
            cli_say("history %s: %s", path,
                    errno == ENOENT ? "no such file (no run has been recorded there yet)" : strerror(errno));
        return NULL;
    }
    rt_db *db = NULL;
    char why[600];
    for (int attempt = 0; attempt < 2; attempt++) {
        int flags = attempt == 0 ? RT_DB_OPEN_READONLY : RT_DB_OPEN_READWRITE;
        int rc = rt_db_open(path, flags, BUSY_TIMEOUT_MS, 0, &db, why, sizeof why);
        if (rc == RT_DB_OK) {
            int has = has_runs(db);
            if (has > 0)
                return db;
            if (has == 0) {
                cli_say("history %s: no runs recorded there (not a run history)", history_shown(path));
                rt_db_close(db);
                return NULL;
            }
            rc = -has;
            snprintf(why, sizeof why, "%s", rt_db_errmsg(db));
            rt_db_close(db);
            db = NULL;
        }
        if (attempt == 0 && !pg && rc == RT_DB_READONLY_ROLLBACK)
            continue; /* a hot journal: recover it with write access */
        cli_say("history %s: %s", history_shown(path), why);
        return NULL;
    }
    return NULL;
}

int history_query(rt_db *db, const char *sql, const char *job, long last, rt_db_stmt **st)
{
    int rc = rt_db_prepare(db, sql, st);
    if (rc == RT_DB_OK)
        rc = last > 0 ? rt_db_bind_int(*st, 1, last)
             : rt_db_engine_of(db) == RT_DB_SQLITE ? rt_db_bind_int(*st, 1, -1) /* SQLite: no limit */
                                                   : rt_db_bind_null(*st, 1);    /* PostgreSQL: no limit */
    if (rc == RT_DB_OK && job)
        rc = rt_db_bind_text(*st, 2, job);
    return rc;
}

bool history_next_row(rt_db_stmt *st, int *rc)
{
    int step = rt_db_step(st);
    if (step != RT_DB_ROW && step != RT_DB_DONE)
        *rc = step;
    return step == RT_DB_ROW;
}

/* All doubles of s to NaN, the rest zero (needs unknown). */
static void summary_clear(rt_summary *s)
{
    memset(s, 0, sizeof *s);
    s->start_secs = s->end_secs = NAN;
    /* figures no column keeps, unknown as an empty run's are (rt_stats_new): a run's own
     * slowdown bound 0 would make the job view's answer per run ask for cores no slower by a
     * millisecond (2 for a job of one busy thread, where its files ask for 1) */
    s->max_slowdown_pct = s->process_unreclaimable_unsure_mib = s->pressure_group = NAN;
    for (size_t i = 0; i < NCOLS; i++)
        if (cols[i].src == SRC_SUM && cols[i].type == 'R')
            *(double *)((char *)s + cols[i].off) = NAN;
}

/* The rt_need_source called name (as rt_need_source_name says it), RT_NEED_UNKNOWN for another. */
static int need_source_of(const char *name)
{
    for (int k = RT_NEED_CGROUP; name && k <= RT_NEED_VRAM; k++)
        if (strcmp(rt_need_source_name(k), name) == 0)
            return k;
    return RT_NEED_UNKNOWN;
}

/* The energy method called name, as the library's static string; NULL for another. */
static const char *method_of(const char *name)
{
    static const char *const methods[] = {"measured", "sampled", "estimated"};
    for (size_t k = 0; name && k < sizeof methods / sizeof methods[0]; k++)
        if (strcmp(methods[k], name) == 0)
            return methods[k];
    return NULL;
}

/* Column k of the row into the summary field of column c. */
static void read_sum_col(rt_db_stmt *st, int k, const col *c, rt_summary *s)
{
    if (rt_db_column_type(st, k) == RT_DB_NULL)
        return;
    void *at = (char *)s + c->off;
    if (c->type == 'N')
        *(int *)at = need_source_of(rt_db_column_text(st, k));
    else if (c->type == 'M')
        *(const char **)at = method_of(rt_db_column_text(st, k));
    else if (c->type == 'B')
        *(int *)at = (int)rt_db_column_int64(st, k) != 0;
    else
        *(double *)at = rt_db_column_double(st, k);
}

/* A copy of column i's text into a growing pool; returns the pool offset + 1, or 0 for NULL
 * (or out of memory, which *oom records). */
static size_t pool_put(char **pool, size_t *len, size_t *cap, const char *t, bool *oom)
{
    if (!t)
        return 0;
    size_t n = strlen(t) + 1;
    if (*len + n > *cap) {
        size_t c = (*cap ? *cap * 2 : 256) + n;
        char *p = realloc(*pool, c);
        if (!p) {
            *oom = true;
            return 0;
        }
        *pool = p;
        *cap = c;
    }
    memcpy(*pool + *len, t, n);
    *len += n;
    return *len - n + 1;
}

static size_t pool_add(char **pool, size_t *len, size_t *cap, rt_db_stmt *st, int i, bool *oom)
{
    return pool_put(pool, len, cap, rt_db_column_text(st, i), oom);
}

/* A run's member from its JSON text (NULL: none): its numbers into *m, its strings into the pool
 * (offsets + 1 into off: job_id, step_id, node, from; 0 for none). */
static void member_parse(const char *text, rt_member *m, size_t off[4], char **pool, size_t *len, size_t *cap,
                         bool *oom)
{
    *m = (rt_member)RT_MEMBER_INIT;
    off[0] = off[1] = off[2] = off[3] = 0;
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        return;
    }
    static const char *const keys[4] = {"job_id", "step_id", "node", "from"};
    for (int i = 0; i < 4; i++)
        off[i] = pool_put(pool, len, cap, json_string_value(json_object_get(o, keys[i])), oom);
    int64_t *nums[] = {&m->rank, &m->local_rank, &m->ranks, &m->nodes, &m->node_index};
    static const char *const nkeys[] = {"rank", "local_rank", "ranks", "nodes", "node_index"};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        json_t *v = json_object_get(o, nkeys[i]);
        if (json_is_integer(v) && json_integer_value(v) >= 0)
            *nums[i] = json_integer_value(v);
    }
    m->per_node = json_is_true(json_object_get(o, "per_node"));
    json_decref(o);
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
    int rc = history_query(db, sql, job, 1, &st);
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

/* A run's table read back from its "cores" column: the table, its rows on the heap. */
typedef struct history_cores {
    rt_cores_table t; /* n 0: none */
    rt_cores_row *rows;
} history_cores;

/* A number member of o, NaN when absent or null. */
static double json_num_or_nan(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Reads a table object of the summary's JSON (the run's "cores", or a phase: its
 * "durations_secs" in order, "duration_secs", and where there are "cores_had", "peak_cores",
 * "wait_secs", "wait_from", 0.20's "own_duration_secs", "others_cores", "machine_cores",
 * "demand_cores") into *h: n 0 when o is not such an object, or out of memory. */
static void history_cores_of(const json_t *o, history_cores *h)
{
    memset(h, 0, sizeof *h);
    const json_t *d = json_object_get(o, "durations_secs");
    size_t n = json_array_size(d);
    if (n > RT_CORES_MAX)
        n = RT_CORES_MAX;
    h->rows = n ? calloc(n, sizeof *h->rows) : NULL;
    double had = json_num_or_nan(o, "cores_had");
    for (size_t c = 1; h->rows && c <= n; c++) {
        const json_t *x = json_array_get(d, c - 1);
        rt_cores_row *r = &h->rows[c - 1];
        r->cores = (int64_t)c;
        r->duration_secs = json_is_number(x) ? json_number_value(x) : NAN;
        r->core_hours = (double)c * r->duration_secs / 3600.0;
        r->wait_bound = isfinite(had) && (double)c > had;
        if (!(r->duration_secs >= 0)) { /* a hole: no table */
            free(h->rows);
            h->rows = NULL;
        }
    }
    if (h->rows) {
        const char *from = json_string_value(json_object_get(o, "wait_from"));
        h->t = (rt_cores_table){.n = n,
                                .duration_secs = json_num_or_nan(o, "duration_secs"),
                                .cores_had = had,
                                .peak_cores = json_num_or_nan(o, "peak_cores"),
                                .wait_secs = json_num_or_nan(o, "wait_secs"),
                                .wait_from = !from                         ? NULL
                                             : strcmp(from, "group") == 0 ? "group"
                                             : strcmp(from, "tasks") == 0 ? "tasks"
                                                                          : "machine",
                                .own_secs = json_num_or_nan(o, "own_duration_secs"),
                                .others_cores = json_num_or_nan(o, "others_cores"),
                                .machine_cores = json_num_or_nan(o, "machine_cores"),
                                .demand_cores = json_num_or_nan(o, "demand_cores")};
        if (!(h->t.duration_secs > 0)) {
            free(h->rows);
            memset(h, 0, sizeof *h);
        }
    }
}

/* Reads the "cores" column text (the summary's JSON "cores", in seconds) into *h: n 0 when the
 * text is NULL, not such an object, or out of memory (the run then asks by the mean rule). */
static void history_cores_parse(const char *text, history_cores *h)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    history_cores_of(o, h);
    json_decref(o);
}

/* A phase summary with every figure null (NaN) but its name and table, set after. */
static void summary_phase_clear(rt_phase_summary *p)
{
    memset(p, 0, sizeof *p);
    double *d[] = {&p->first_start_secs, &p->duration_secs, &p->call_min_secs, &p->call_max_secs,
                   &p->call_mean_secs, &p->cpu_secs, &p->cores_mean, &p->cores_peak, &p->rss_peak_mib,
                   &p->pss_peak_mib, &p->memory_peak_mib, &p->gpu_usage_mean, &p->gpu_usage_peak,
                   &p->gpu_vram_mean_mib, &p->gpu_vram_peak_mib, &p->read_bytes, &p->write_bytes};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = NAN;
    p->memory_need.mib = NAN;
}

/* A run's phases as the history has them (the summary's JSON "phases", 0.14; each phase's
 * table since 0.18): the names and tables of those with a table. */
typedef struct history_phases {
    size_t n;
    char **names;
    history_cores *tabs;
    size_t rows, name_bytes; /* the tables' rows, and the names' bytes with their NULs */
} history_phases;

static void history_phases_free(history_phases *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->names[i]);
        free(h->tabs[i].rows);
    }
    free(h->names);
    free(h->tabs);
    memset(h, 0, sizeof *h);
}

/* Reads the "phases" column text into *h (n 0: none with a table, or out of memory: the run
 * then names no phase). */
static void history_phases_parse(const char *text, history_phases *h)
{
    memset(h, 0, sizeof *h);
    json_t *a = text ? json_loads(text, 0, NULL) : NULL;
    size_t n = json_array_size(a);
    h->names = n ? calloc(n, sizeof *h->names) : NULL;
    h->tabs = h->names ? calloc(n, sizeof *h->tabs) : NULL;
    for (size_t i = 0; h->tabs && i < n; i++) {
        const json_t *p = json_array_get(a, i);
        const char *name = json_string_value(json_object_get(p, "name"));
        history_cores t;
        history_cores_of(p, &t);
        char *copy = name && t.t.n ? strdup(name) : NULL;
        if (!copy) {
            free(t.rows);
            continue;
        }
        h->names[h->n] = copy;
        h->tabs[h->n++] = t;
        h->rows += t.t.n;
        h->name_bytes += strlen(copy) + 1;
    }
    if (!h->tabs) {
        free(h->names);
        memset(h, 0, sizeof *h);
    }
    json_decref(a);
}

/* What cli_history_summaries keeps of a row until its block is made: its strings (offsets + 1
 * into the pool: job_name, allocation, the member's job_id, step_id, node, from; who ran it: the
 * host (its node, else host_hostname), the user, the command) and member. */
typedef struct history_row {
    size_t s[9];
    rt_member m;
} history_row;

int cli_history_summaries(const char *path, const char *job, int last, rt_summary **out, size_t *n)
{
    return cli_history_summaries_who(path, job, last, out, n, NULL);
}

int cli_history_summaries_who(const char *path, const char *job, int last, rt_summary **out, size_t *n,
                              cli_history_who **who)
{
    *out = NULL;
    *n = 0;
    if (who)
        *who = NULL;
    rt_db *db = history_open_read(path);
    if (!db)
        return -1;
    char sql[8192];
    bool have[NCOLS + 1]; /* an older database lacks the newer columns until its next write: NULL */
    int rc = table_columns(db, have);
    if (rc != RT_DB_OK) {
        cli_say("history %s: %s", history_shown(path), rt_db_errmsg(db));
        rt_db_close(db);
        return -1;
    }
    /* the successful runs, and the runs the OOM killer hit (whatever their status: the killed
     * command exits 137), so that a recommendation never forgets the memory that killed a run;
     * and (0.20) the runs that ran to their time limit (the scheduler's SIGTERM: 143), so that it
     * never forgets the time either; (0.21) those a SIGTERM, SIGKILL or SIGXCPU ended where no
     * limit was known (their time a floor: floors.c) */
    bool has_oom = false, has_cores = false, has_phases = false, has_member = false, has_time = false,
         has_signal = false, has_node = false, has_user = false;
    for (size_t i = 0; i < NCOLS; i++) {
        if (have[i] && strcmp(cols[i].name, "oom_kills") == 0)
            has_oom = true;
        if (have[i] && strcmp(cols[i].name, "time_limit_used_pct") == 0)
            has_time = true;
        if (have[i] && strcmp(cols[i].name, "end_signal") == 0)
            has_signal = true;
        if (have[i] && strcmp(cols[i].name, "cores") == 0)
            has_cores = true;
        if (have[i] && strcmp(cols[i].name, "phases") == 0)
            has_phases = true;
        if (have[i] && strcmp(cols[i].name, "member") == 0)
            has_member = true;
        if (have[i] && strcmp(cols[i].name, "node") == 0)
            has_node = true;
        if (have[i] && strcmp(cols[i].name, "user_name") == 0)
            has_user = true;
    }
    char tail[500];
    snprintf(tail, sizeof tail,
             ", %s, %s, %s, %s, %s, command FROM runs WHERE (exit_status = 0%s%s%s)%s ORDER BY id DESC LIMIT ?1",
             has_cores ? "cores" : "NULL", has_phases ? "phases" : "NULL", has_member ? "member" : "NULL",
             has_node ? "COALESCE(node, host_hostname)" : "host_hostname", has_user ? "user_name" : "NULL",
             has_oom ? " OR oom_kills > 0" : "", has_time ? " OR time_limit_used_pct >= 99" : "",
             has_signal ? " OR end_signal IN (9, 15, 24)" : "", job ? " AND job_name = ?2" : "");
    if (col_list(sql, sizeof sql, "SELECT job_name, allocation, samples, start_secs, end_secs, ", NULL, true, have,
                 tail) < 0) {
        rt_db_close(db);
        return -1;
    }
    rt_db_stmt *st = NULL;
    rc = history_query(db, sql, job, last, &st);
    rt_summary *v = NULL;
    size_t nv = 0, capv = 0, plen = 0, pcap = 0;
    history_row *offs = NULL; /* each row's strings (pool offsets + 1) and member */
    char *pool = NULL;
    history_cores *tabs = NULL; /* each row's table (n 0: none) */
    history_phases *phs = NULL; /* each row's phases with a table */
    size_t nrows = 0;           /* the tables' rows in all */
    size_t nph = 0, nphrows = 0, nphbytes = 0; /* the phases in all, their rows, their names' bytes */
    bool oom = false;
    while (rc == RT_DB_OK && !oom && history_next_row(st, &rc)) {
        if (nv == capv) {
            capv = capv ? capv * 2 : 8;
            rt_summary *nvp = realloc(v, capv * sizeof *v);
            history_row *no = nvp ? realloc(offs, capv * sizeof *offs) : NULL;
            history_cores *nt = no ? realloc(tabs, capv * sizeof *tabs) : NULL;
            if (nt)
                tabs = nt;
            history_phases *np = nt ? realloc(phs, capv * sizeof *phs) : NULL;
            if (nvp)
                v = nvp;
            if (no)
                offs = no;
            if (!nvp || !no || !nt || !np) {
                oom = true;
                break;
            }
            phs = np;
        }
        rt_summary *s = &v[nv];
        summary_clear(s);
        offs[nv].s[0] = pool_add(&pool, &plen, &pcap, st, 0, &oom);
        offs[nv].s[1] = pool_add(&pool, &plen, &pcap, st, 1, &oom);
        s->samples = rt_db_column_type(st, 2) == RT_DB_NULL ? 0 : (uint64_t)rt_db_column_int64(st, 2);
        int k = 3;
        double *times[2] = {&s->start_secs, &s->end_secs};
        for (int t = 0; t < 2; t++, k++)
            if (rt_db_column_type(st, k) != RT_DB_NULL)
                *times[t] = rt_db_column_double(st, k);
        for (size_t i = 0; i < NCOLS; i++) {
            if (cols[i].src != SRC_SUM)
                continue;
            read_sum_col(st, k, &cols[i], s);
            k++;
        }
        history_cores_parse(rt_db_column_text(st, k), &tabs[nv]);
        nrows += tabs[nv].t.n;
        history_phases_parse(rt_db_column_text(st, k + 1), &phs[nv]);
        member_parse(rt_db_column_text(st, k + 2), &offs[nv].m, offs[nv].s + 2, &pool, &plen, &pcap,
                     &oom);
        for (int w = 0; w < 3; w++) /* who ran it: host, user, command */
            offs[nv].s[6 + w] = pool_add(&pool, &plen, &pcap, st, k + 3 + w, &oom);
        nph += phs[nv].n;
        nphrows += phs[nv].rows;
        nphbytes += phs[nv].name_bytes;
        if (!s->energy_method) /* never a figure without its method */
            s->energy_joules = s->co2e_grams = NAN;
        if (!s->process_energy_method)
            s->process_energy_joules = s->process_co2e_grams = NAN;
        s->has_process = !isnan(s->process_cores.mean) || !isnan(s->process_pss_mib.peak) ||
                         !isnan(s->process_cpu_secs);
        nv++;
    }
    if (rc != RT_DB_OK)
        cli_say("history %s: %s", history_shown(path), rt_db_errmsg(db));
    else if (oom)
        cli_say("history %s: out of memory", history_shown(path));
    rt_db_finalize(st);
    rt_db_close(db);
    rt_summary *block = NULL;
    cli_history_who *whos = who && nv > 0 && rc == RT_DB_OK && !oom ? calloc(nv, sizeof *whos) : NULL;
    if (who && nv > 0 && rc == RT_DB_OK && !oom && !whos) {
        oom = true;
        cli_say("history %s: out of memory", history_shown(path));
    }
    if (rc == RT_DB_OK && !oom && nv > 0) {
        /* one block: the summaries, their tables, the tables' rows, the phases (their summaries,
         * tables, rows and pointers), then the strings and the phases' names */
        block = malloc(nv * sizeof *block + nv * sizeof(rt_cores_table) + nrows * sizeof(rt_cores_row) +
                       nph * (sizeof(rt_phase_summary) + sizeof(rt_cores_table) + sizeof(rt_phase_summary *)) +
                       nphrows * sizeof(rt_cores_row) + nv * sizeof(rt_member) + plen + nphbytes);
        if (!block) {
            oom = true;
            cli_say("history %s: out of memory", history_shown(path));
        } else {
            rt_cores_table *tables = (rt_cores_table *)(block + nv);
            rt_cores_row *rows = (rt_cores_row *)(tables + nv);
            rt_phase_summary *ps = (rt_phase_summary *)(rows + nrows);
            rt_cores_table *ptables = (rt_cores_table *)(ps + nph);
            rt_cores_row *prows = (rt_cores_row *)(ptables + nph);
            const rt_phase_summary **pptrs = (const rt_phase_summary **)(prows + nphrows);
            rt_member *mems = (rt_member *)(pptrs + nph);
            char *strs = (char *)(mems + nv);
            char *names = strs + plen;
            if (plen)
                memcpy(strs, pool, plen);
            for (size_t i = 0; i < nv; i++) {
                block[i] = v[i];
                const size_t *o = offs[i].s;
                block[i].job_name = o[0] ? strs + o[0] - 1 : NULL;
                block[i].allocation = o[1] ? strs + o[1] - 1 : NULL;
                block[i].member = NULL;
                if (o[2]) { /* a job's node: its member, the strings in the block */
                    mems[i] = offs[i].m;
                    mems[i].job_id = strs + o[2] - 1;
                    mems[i].step_id = o[3] ? strs + o[3] - 1 : NULL;
                    mems[i].node = o[4] ? strs + o[4] - 1 : NULL;
                    mems[i].from = o[5] ? strs + o[5] - 1 : NULL;
                    block[i].member = &mems[i];
                }
                if (whos) {
                    whos[i].host = o[6] ? strs + o[6] - 1 : NULL;
                    whos[i].user = o[7] ? strs + o[7] - 1 : NULL;
                    whos[i].command = o[8] ? strs + o[8] - 1 : NULL;
                }
                block[i].cores = NULL;
                if (tabs[i].t.n) {
                    tables[i] = tabs[i].t;
                    memcpy(rows, tabs[i].rows, tabs[i].t.n * sizeof *rows);
                    tables[i].rows = rows;
                    rows += tabs[i].t.n;
                    block[i].cores = &tables[i];
                }
                /* its phases: a name and a table each (the rest of a phase's figures unread) */
                block[i].phases = phs[i].n ? (const rt_phase_summary *const *)pptrs : NULL;
                block[i].phase_count = phs[i].n;
                block[i].phase_counts = NULL;
                for (size_t k = 0; k < phs[i].n; k++) {
                    const history_cores *h = &phs[i].tabs[k];
                    size_t len = strlen(phs[i].names[k]) + 1;
                    memcpy(names, phs[i].names[k], len);
                    *ptables = h->t;
                    memcpy(prows, h->rows, h->t.n * sizeof *prows);
                    ptables->rows = prows;
                    prows += h->t.n;
                    summary_phase_clear(ps);
                    ps->name = names;
                    ps->duration_secs = h->t.duration_secs;
                    ps->cores = ptables++;
                    *pptrs++ = ps++;
                    names += len;
                }
            }
        }
    }
    for (size_t i = 0; i < nv; i++) {
        free(tabs[i].rows);
        history_phases_free(&phs[i]);
    }
    free(tabs);
    free(phs);
    free(v);
    free(offs);
    free(pool);
    if (rc != RT_DB_OK || oom) {
        free(whos);
        return -1;
    }
    *out = block;
    *n = nv;
    if (who)
        *who = whos;
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
    if (rc == RT_DB_OK && (col_list(names, sizeof names, "SELECT ", NULL, false, have, " FROM runs") < 0 ||
                           snprintf(sel, sizeof sel, "%s", names) >= (int)sizeof sel ||
                           col_list(sql, sizeof sql, head, NULL, false, NULL, ") VALUES (") < 0))
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
             (col_list(names, sizeof names, "", NULL, false, NULL, "") < 0 ||
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
