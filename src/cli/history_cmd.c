/* history_cmd.c - `resource-tracker history`: its arguments, and the runs of the history
 * database (history.c) printed newest first as an aligned table (EXIT marked OOM for a run
 * with an OOM kill in its cgroup; the memory need, the job's energy marked ~ when estimated,
 * and the kinds of the run's notes) or, with --json, one JSON object per run and line. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "history_db.h"
#include "settings.h"

/* --help before its options: the same facts as docs/resource-tracker-history.1. */
static const char history_usage[] =
    "Usage: resource-tracker history [--job NAME] [--user NAME] [--host NAME] [--since WHEN] [--last N]\n"
    "                                [--json] [--history FILE]\n"
    "       resource-tracker history --export FILE|--import FILE [--history FILE]\n"
    "\n"
    "Lists the runs recorded with --history (an SQLite file), newest first, as a table: id, start\n"
    "(UTC), job (a node of a job of several: its job id, node and rank after the name), exit\n"
    "status (OOM for a run the OOM killer hit), duration, mean cores, memory need\n"
    "and where it came from, the job's GPUs (busy GPUs and their SM activity, means; a column\n"
    "shown when some run used a GPU), the job's energy (J, kJ, MJ; ending in ~ when estimated\n"
    "from a model, bare when read from the hardware), the kinds of the run's notes, and the\n"
    "command. --job, --user, --host and --since keep the runs that match all of them. --export\n"
    "writes every run as JSON lines and --import adds such lines to the history, each run once\n"
    "(by its run_uuid), to move a history to another file or engine.\n"
    "\n"
    "Options:\n";
/* --help after its options (cli_settings_help_for writes them from the settings table) */
static const char history_usage_tail[] =
    "\n"
    "Exit status: 0 listed (none recorded is an empty list); 1 the history cannot be read;\n"
    "2 a usage error, or no history named.\n";

/* "2024-05-01 12:00:03" in UTC for Unix time t into buf. */
static void fmt_time(char *buf, size_t cap, double t)
{
    if (!(fabs(t) <= 1e11)) { /* NaN, or no calendar date (and out of time_t's range) */
        snprintf(buf, cap, "-");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, cap, "-");
}

/* A duration for people: "12.3s", "4m05s", "3h02m". */
static void fmt_duration(char *buf, size_t cap, double s)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, cap, "-");
    else if (s > 1e11) /* past int hours */
        snprintf(buf, cap, "%.3gs", s);
    else if (s < 60)
        snprintf(buf, cap, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* The strings of the JSON array json_text (its elements, or with member their member of that
 * name) joined by sep into buf (as much as fits). Returns the length written. */
static size_t join_json(char *buf, size_t cap, const char *json_text, const char *member, const char *sep)
{
    size_t len = 0;
    buf[0] = '\0';
    json_t *a = json_text ? json_loads(json_text, 0, NULL) : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        const char *s = json_string_value(member ? json_object_get(v, member) : v);
        if (s && ((len && history_put(buf, cap, &len, sep) < 0) || history_put(buf, cap, &len, s) < 0))
            break;
    }
    json_decref(a);
    return len;
}

/* The command column: the argv joined by spaces, cut at max bytes (at a UTF-8 boundary) with
 * "..."; "pid N" when a --pid was tracked, "-" for the machine. */
static void fmt_command(char *buf, size_t cap, const char *json_text, int64_t pid, bool has_pid)
{
    const size_t max = 50;
    size_t len = join_json(buf, cap, json_text, NULL, " ");
    if (len == 0 && has_pid)
        snprintf(buf, cap, "pid %lld", (long long)pid);
    else if (len == 0)
        snprintf(buf, cap, "-");
    else if (len > max && cap > max + 4) {
        size_t cut = max - 3;
        while (cut > 0 && ((unsigned char)buf[cut] & 0xC0) == 0x80)
            cut--;
        memcpy(buf + cut, "...", 4);
    }
}

/* The column named name in the row of st, or -1. */
static int col_index(rt_db_stmt *st, const char *name)
{
    for (int i = 0; i < rt_db_column_count(st); i++)
        if (strcmp(rt_db_column_name(st, i), name) == 0)
            return i;
    return -1;
}

/* Column i of the row as a double: NaN when NULL or when there is no such column (i < 0). */
static double col_real(rt_db_stmt *st, int i)
{
    return i < 0 || rt_db_column_type(st, i) == RT_DB_NULL ? NAN : rt_db_column_double(st, i);
}

/* Prints the row as one JSON object: every column under its name, with tags, command and
 * summary_json (as "summary") parsed. Returns 0, or -1 when out of memory. */
static int print_json_row(rt_db_stmt *st)
{
    json_t *o = json_object();
    if (!o)
        return -1;
    for (int i = 0; i < rt_db_column_count(st); i++) {
        const char *name = rt_db_column_name(st, i);
        json_t *v = NULL;
        switch (rt_db_column_type(st, i)) {
        case RT_DB_INTEGER: v = json_integer(rt_db_column_int64(st, i)); break;
        case RT_DB_FLOAT: { /* an infinity (another writer's) is no JSON number: null */
            double d = rt_db_column_double(st, i);
            v = isfinite(d) ? json_real(d) : json_null();
            break;
        }
        case RT_DB_TEXT: {
            const char *t = rt_db_column_text(st, i);
            bool is_json = !strcmp(name, "tags") || !strcmp(name, "command") || !strcmp(name, "summary_json") ||
                           !strcmp(name, "notes") || !strcmp(name, "phases") || !strcmp(name, "phase_marks") ||
                           !strcmp(name, "cores") || !strcmp(name, "member");
            v = is_json ? json_loads(t, 0, NULL) : NULL;
            if (!v)
                v = history_json_str_lossy(t);
            break;
        }
        default: v = json_null(); break;
        }
        if (!strcmp(name, "summary_json"))
            name = "summary";
        if (!v || json_object_set_new(o, name, v) < 0) {
            json_decref(o);
            return -1;
        }
    }
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        return -1;
    puts(text);
    free(text);
    return 0;
}

/* The runs `history` lists: those matching every filter given (NULL, NaN: none). */
typedef struct run_filter {
    const char *job, *user, *host;
    double since; /* Unix time; NaN: none */
    long last;    /* <= 0: all */
} run_filter;

/* Prepares the query sql (history_query's ?1 and ?2, then ?3 the user, ?4 the host, ?5 the
 * time, as the filters say) into *st with f's values bound. Returns an rt_db result code. */
static int filter_query(rt_db *db, const char *sql, const run_filter *f, rt_db_stmt **st)
{
    int rc = rt_history_query(db, sql, f->job, f->last, st);
    if (rc == RT_DB_OK && f->user)
        rc = rt_db_bind_text(*st, 3, f->user);
    if (rc == RT_DB_OK && f->host)
        rc = rt_db_bind_text(*st, 4, f->host);
    if (rc == RT_DB_OK && !isnan(f->since))
        rc = rt_db_bind_real(*st, 5, f->since);
    return rc;
}

/* The SELECT of the runs f keeps, newest first, into sql[cap] (plain SQL, its values bound by
 * filter_query; a column an older database lacks until its next write stands as NULL, so that
 * no run of it matches that filter). Returns 0, or -1 when it does not fit (a bug). */
static int filter_sql(rt_db *db, const run_filter *f, char *sql, size_t cap)
{
    /* a history without user_name (before schema 12, until its next write) has no run of a user:
     * ?3 still stands in the statement (bound all the same), typed for engines that ask */
    const char *user = history_has_column(db, "user_name") ? " AND user_name = ?3"
                                                           : " AND 1 = 0 AND CAST(?3 AS TEXT) IS NOT NULL";
    const char *host = history_has_column(db, "node") ? " AND (host_hostname = ?4 OR node = ?4)"
                                                      : " AND host_hostname = ?4";
    size_t len = 0;
    sql[0] = '\0';
    return history_put(sql, cap, &len, "SELECT * FROM runs WHERE 1 = 1") < 0 ||
                   (f->job && history_put(sql, cap, &len, " AND job_name = ?2") < 0) ||
                   (f->user && history_put(sql, cap, &len, user) < 0) ||
                   (f->host && history_put(sql, cap, &len, host) < 0) ||
                   (!isnan(f->since) && history_put(sql, cap, &len, " AND start_secs >= ?5") < 0) ||
                   history_put(sql, cap, &len, " ORDER BY id DESC LIMIT ?1") < 0
               ? -1
               : 0;
}

enum { TC_ID, TC_START, TC_JOB, TC_EXIT, TC_DURATION, TC_CORES, TC_NEED, TC_GPU, TC_ENERGY, TC_NOTES, TC_COMMAND, TC_N };
#define CELL 128

/* Replaces in s, in place, what a terminal would act on rather than show: C0 controls, DEL,
 * and C1 controls in UTF-8 (U+0080 to U+009F: 0xC2 0x80-0x9F, both bytes), by '?'. A job name
 * or command in a shared history is anyone's text. */
static void printable(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++) {
        if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
            p[0] = p[1] = '?';
            p++;
        } else if (*p < 0x20 || *p == 0x7F) {
            *p = '?';
        }
    }
}

/* The energy cell: joules j in J, kJ, MJ, GJ or TJ with 3 significant digits ("1.13 kJ"), then
 * "~" when method is "estimated" (a model); bare when measured or sampled (the hardware's);
 * "-" without a figure or without its method (never a number without one). */
static void energy_cell(char *cell, double j, const char *method)
{
    static const char *const unit[] = {"J", "kJ", "MJ", "GJ", "TJ"};
    if (!isfinite(j) || j < 0 || !method || (strcmp(method, "measured") && strcmp(method, "sampled") &&
                                             strcmp(method, "estimated"))) {
        snprintf(cell, CELL, "-");
        return;
    }
    size_t u = 0;
    while (j >= 999.5 && u + 1 < sizeof unit / sizeof unit[0]) {
        j /= 1000;
        u++;
    }
    const char *mark = strcmp(method, "estimated") == 0 ? "~" : "";
    snprintf(cell, CELL, j < 9.995 ? "%.2f %s%s" : j < 99.95 ? "%.1f %s%s" : "%.0f %s%s", j, unit[u], mark);
}

/* The GPU cell (0.19): the job's busy GPUs (mean) and its GPUs' SM activity (mean, NVML GPM;
 * "(shared)" when the figures were the devices', shared with other processes): "0.42, 15.9%",
 * "0.42, -" without GPM; "-" when the job used no GPU and no GPU gave a work figure. */
static void gpu_cell(char *cell, double busy, double sm, double shared)
{
    char b[32] = "-", w[48] = "-";
    if (isfinite(busy))
        snprintf(b, sizeof b, "%.2f", busy);
    if (isfinite(sm))
        snprintf(w, sizeof w, "%.1f%%%s", sm, shared == 1 ? " (shared)" : "");
    if (!(busy > 0) && !isfinite(sm))
        snprintf(cell, CELL, "-");
    else
        snprintf(cell, CELL, "%s, %s", b, w);
}

/* The text of column i of the row of st; NULL when NULL or when there is no such column (i < 0). */
static const char *col_text(rt_db_stmt *st, int i)
{
    return i < 0 ? NULL : rt_db_column_text(st, i);
}

/* The kinds of the notes (a JSON array of {"kind", "text"}) joined by commas into cell; "-"
 * without any. */
static void notes_cell(char *cell, const char *json_text)
{
    if (!join_json(cell, CELL, json_text, "kind", ","))
        snprintf(cell, CELL, "-");
}

/* A job's node: " (JOB NODE rRANK)" after the job's name in cell, from the run's member
 * (its JSON text; NULL: none, nothing added). */
static void member_words(char *cell, const char *json_text)
{
    json_t *m = json_text ? json_loads(json_text, 0, NULL) : NULL;
    const char *id = json_string_value(json_object_get(m, "job_id")), *node = json_string_value(json_object_get(m, "node"));
    json_t *rank = json_object_get(m, "rank");
    size_t n = strlen(cell);
    if (id && n < CELL) {
        char r[32] = "";
        if (json_is_integer(rank))
            snprintf(r, sizeof r, " r%lld", (long long)json_integer_value(rank));
        snprintf(cell + n, CELL - n, " (%.40s%s%.40s%s)", id, node ? " " : "", node ? node : "", r);
    }
    json_decref(m);
}

/* The cells of the table row for the row of st into cells. */
static void table_row(rt_db_stmt *st, char cells[TC_N][CELL])
{
    snprintf(cells[TC_ID], CELL, "%lld", (long long)rt_db_column_int64(st, col_index(st, "id")));
    double start = col_real(st, col_index(st, "start_secs"));
    fmt_time(cells[TC_START], CELL, start);
    const char *job = rt_db_column_text(st, col_index(st, "job_name"));
    snprintf(cells[TC_JOB], CELL, "%.100s", job ? (const char *)job : "-");
    member_words(cells[TC_JOB], col_text(st, col_index(st, "member")));
    int ie = col_index(st, "exit_status");
    const char *oom = col_real(st, col_index(st, "oom_kills")) > 0 ? " OOM" : ""; /* a kill in its group */
    if (rt_db_column_type(st, ie) == RT_DB_NULL)
        snprintf(cells[TC_EXIT], CELL, "-%s", oom);
    else
        snprintf(cells[TC_EXIT], CELL, "%d%s", (int)rt_db_column_int64(st, ie), oom);
    fmt_duration(cells[TC_DURATION], CELL, col_real(st, col_index(st, "end_secs")) - start); /* the run's wall time */
    double cores = col_real(st, col_index(st, "process_cores_mean"));
    double need = col_real(st, col_index(st, "memory_need_mib"));
    double pss = col_real(st, col_index(st, "process_pss_mib_peak"));
    if (!isfinite(cores))
        snprintf(cells[TC_CORES], CELL, "-");
    else
        snprintf(cells[TC_CORES], CELL, "%.2f", cores);
    if (isfinite(need))
        snprintf(cells[TC_NEED], CELL, "%.0f MiB", need);
    else if (isfinite(pss)) /* a run recorded before the need was: its PSS peak, said so */
        snprintf(cells[TC_NEED], CELL, "%.0f MiB pss", pss);
    else
        snprintf(cells[TC_NEED], CELL, "-");
    gpu_cell(cells[TC_GPU], col_real(st, col_index(st, "process_gpu_usage_mean")),
             col_real(st, col_index(st, "gpu_sm_active_pct_mean")), col_real(st, col_index(st, "gpu_work_shared")));
    energy_cell(cells[TC_ENERGY], col_real(st, col_index(st, "process_energy_joules")),
                col_text(st, col_index(st, "process_energy_method")));
    notes_cell(cells[TC_NOTES], rt_db_column_text(st, col_index(st, "notes")));
    int ip = col_index(st, "pid");
    const char *cmd = rt_db_column_text(st, col_index(st, "command"));
    fmt_command(cells[TC_COMMAND], CELL, (const char *)cmd, rt_db_column_int64(st, ip),
                rt_db_column_type(st, ip) != RT_DB_NULL);
    for (int c = 0; c < TC_N; c++)
        printable(cells[c]);
}

static const char *const table_head[TC_N] = {"ID",    "START (UTC)", "JOB",           "EXIT",   "DURATION", "CORES",
                                             "MEMORY NEED", "GPU (BUSY, SM)", "ENERGY", "NOTES",    "COMMAND"};

/* The most bytes of s that show in cols columns, a cut one ending in "..." (as the COMMAND
 * cell's own cut): whole characters (a byte never splits one; bytes are columns or more). */
#define CUT_MARK "..."
static int shown_bytes(const char *s, int cols, bool *cut)
{
    int n = (int)strlen(s), mark = (int)strlen(CUT_MARK);
    *cut = n > cols;
    if (!*cut)
        return n;
    n = cols > mark ? cols - mark : 0;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* Prints one row of the table (numbers to the right), each column w[c] wide; a column of width
 * 0 is left out (the GPU column when no run has a GPU figure). A text column narrowed to fit the
 * terminal (NOTES, COMMAND) shows the start of its cell, cut with "...". */
static void print_row(const char *const cells[TC_N], const int w[TC_N])
{
    static const bool right[TC_N] = {true, false, false, true, true, true, true, true, true, false, false};
    for (int c = 0; c < TC_N; c++) {
        if (w[c] == 0)
            continue;
        bool cut;
        int len = right[c] ? (int)strlen(cells[c]) : shown_bytes(cells[c], w[c], &cut);
        if (c == TC_N - 1)
            printf("%.*s%s\n", len, cells[c], !right[c] && cut ? CUT_MARK : "");
        else if (right[c])
            printf("%*s  ", w[c], cells[c]);
        else
            printf("%.*s%s%*s  ", len, cells[c], cut ? CUT_MARK : "", w[c] - len - (cut ? (int)strlen(CUT_MARK) : 0), "");
    }
}

/* On a terminal, the text columns that can give room narrowed until the table fits its width:
 * COMMAND down to 16 columns, then NOTES down to 12 (the full text: --json, or a wider
 * terminal); elsewhere (a pipe, a file) the table stays whole. Returns whether it fits (else
 * each run is printed as a paragraph: print_stacked). */
static bool fit_terminal(int w[TC_N])
{
    if (!isatty(STDOUT_FILENO))
        return true;
    int width = cli_text_width(stdout), total = 0;
    for (int c = 0; c < TC_N; c++)
        total += w[c] ? w[c] + (c < TC_N - 1 ? 2 : 0) : 0;
    static const struct { int col, least; } give[] = {{TC_COMMAND, 16}, {TC_NOTES, 12}};
    for (size_t k = 0; k < sizeof give / sizeof give[0] && total > width; k++) {
        int c = give[k].col, less = total - width, can = w[c] - give[k].least;
        if (can > 0) {
            int take = less < can ? less : can;
            w[c] -= take;
            total -= take;
        }
    }
    return total <= width;
}

/* One run as a paragraph, for a terminal too narrow for the table: its id, start, job and exit
 * status; its figures; its command; each line folded at the terminal's width between words. */
static void print_stacked(const char *const cells[TC_N], bool gpu)
{
    size_t width = (size_t)cli_text_width(stdout);
    char line[4 * CELL + 64];
    snprintf(line, sizeof line, "%s  %s  %s  exit %s", cells[TC_ID], cells[TC_START], cells[TC_JOB], cells[TC_EXIT]);
    cli_fold_put(stdout, width, line);
    snprintf(line, sizeof line, "    %s, %s cores, need %s%s%s, %s; notes: %s", cells[TC_DURATION], cells[TC_CORES],
             cells[TC_NEED], gpu ? ", GPU " : "", gpu ? cells[TC_GPU] : "", cells[TC_ENERGY], cells[TC_NOTES]);
    cli_fold_put(stdout, width, line);
    snprintf(line, sizeof line, "    %s", cells[TC_COMMAND]);
    cli_fold_put(stdout, width, line);
}

/* The text table of the query sql (its values from f: filter_query's): the columns' widths from a
 * first pass over the rows, the rows printed by a second, so that memory does not grow with
 * the history (a million runs kept 1.2 GiB of cells). A run added between the passes may stand
 * out of line. Returns RT_DB_OK or the error, *n the rows printed. */
static int print_table(rt_db *db, const char *sql, const run_filter *f, size_t *n)
{
    int w[TC_N];
    bool gpu = false; /* some run has a GPU figure: the GPU column is shown */
    for (int c = 0; c < TC_N; c++)
        w[c] = (int)strlen(table_head[c]);
    char cells[TC_N][CELL];
    const char *row[TC_N];
    for (int c = 0; c < TC_N; c++)
        row[c] = cells[c];
    *n = 0;
    int rc = RT_DB_OK;
    bool fits = true;
    for (int pass = 0; pass < 2 && rc == RT_DB_OK && (pass == 0 || *n > 0); pass++) {
        rt_db_stmt *st = NULL;
        rc = filter_query(db, sql, f, &st);
        if (pass == 1 && rc == RT_DB_OK && fits)
            print_row(table_head, w);
        while (rc == RT_DB_OK && history_next_row(st, &rc)) {
            table_row(st, cells);
            if (pass == 1) {
                if (fits)
                    print_row(row, w);
                else
                    print_stacked(row, gpu);
                continue;
            }
            for (int c = 0; c < TC_N; c++)
                if ((int)strlen(cells[c]) > w[c])
                    w[c] = (int)strlen(cells[c]);
            gpu |= strcmp(cells[TC_GPU], "-") != 0;
            (*n)++;
        }
        rt_db_finalize(st);
        if (pass == 0 && !gpu)
            w[TC_GPU] = 0;
        if (pass == 0)
            fits = fit_terminal(w);
    }
    return rc;
}

int cli_history_main(cli_options *o)
{
    const char *file = NULL, *export_to = NULL, *import_from = NULL;
    run_filter f = {.since = NAN};
    bool json = false;
    cli_args args;
    cli_args_init(&args, o, CMD_HISTORY, CLI_ARGS_NO_WORDS);
    for (int k; (k = cli_args_next(&args)) != CLI_ARG_END;) {
        const char *v = args.value;
        cli_value val;
        if (k == CLI_ARG_ERROR || (v && cli_args_value(&args, &val) < 0)) /* each value through its row */
            return EXIT_USAGE;
        switch (args.opt->opt) {
        case CLI_O_JSON: json = true; break;
        case CLI_O_HELP: cli_settings_help_for(stdout, CMD_HISTORY, history_usage, history_usage_tail); return 0;
        case CLI_O_JOB: f.job = v; break;
        case CLI_O_USER: f.user = v; break;
        case CLI_O_HOST: f.host = v; break;
        case CLI_O_EXPORT: export_to = v; break;
        case CLI_O_IMPORT: import_from = v; break;
        case CLI_O_HISTORY: file = v; break;
        case CLI_O_SINCE: f.since = val.num; break;
        default: f.last = val.count; break; /* CLI_O_LAST */
        }
    }
    if ((export_to || import_from) && (export_to && import_from ? true : f.job || f.user || f.host || f.last || json || !isnan(f.since))) {
        cli_say("history: %s takes every run: not with %s", export_to ? "--export" : "--import",
                export_to && import_from ? "--import" : "--job, --user, --host, --since, --last or --json");
        return EXIT_USAGE;
    }
    const char *path = cli_history_path(o, file ? file : o->args.history);
    if (!path)
        return EXIT_USAGE;
    if (export_to)
        return cli_history_export(path, export_to);
    if (import_from)
        return cli_history_import(path, import_from);
    rt_db *db = history_open_read(path);
    if (!db)
        return EXIT_FAIL;
    char sql[512];
    if (filter_sql(db, &f, sql, sizeof sql) < 0) {
        cli_say("history %s: the query does not fit", history_shown(path));
        rt_db_close(db);
        return EXIT_FAIL;
    }
    rt_db_stmt *st = NULL;
    int rc = RT_DB_OK;
    size_t n = 0;
    bool oom = false;
    if (json) { /* a line per run, as it is read */
        rc = filter_query(db, sql, &f, &st);
        while (rc == RT_DB_OK && !oom && history_next_row(st, &rc))
            oom = print_json_row(st) < 0;
        rt_db_finalize(st);
    } else {
        rc = print_table(db, sql, &f, &n);
    }
    if (rc != RT_DB_OK)
        cli_say("history %s: %s", history_shown(path), rt_db_errmsg(db));
    else if (oom)
        cli_say("history %s: out of memory", history_shown(path));
    else if (!json && n == 0 && (f.user || f.host || !isnan(f.since)))
        cli_say("history %s: no runs%s%s%s match%s%s%s%s%s", history_shown(path), f.job ? " of job '" : "", f.job ? f.job : "",
                f.job ? "'" : "", f.user ? " --user " : "", f.user ? f.user : "", f.host ? " --host " : "",
                f.host ? f.host : "", isnan(f.since) ? "" : " --since");
    else if (!json && n == 0 && f.job)
        cli_say("history %s: no runs of job '%s' recorded", history_shown(path), f.job);
    else if (!json && n == 0)
        cli_say("history %s: no runs recorded", history_shown(path));
    rt_db_close(db);
    if (fflush(stdout) != 0 && rc == RT_DB_OK && !oom) {
        cli_say("history: cannot write the list: %s", strerror(errno));
        return EXIT_FAIL;
    }
    return rc == RT_DB_OK && !oom ? 0 : EXIT_FAIL;
}
