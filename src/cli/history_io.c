/* history_io.c - `resource-tracker history --export FILE` and `--import FILE`: every run of a
 * history as JSON lines (one run a line, oldest first, every column of the history's table under
 * its name, its value as stored), and such lines added to the history the command names, each run
 * once: a run whose run_uuid the history holds already is skipped. A run recorded before the
 * history kept run_uuid (schema 12) is given one on export made of its start, pid and host (the
 * same one every time), so that importing it twice adds it once too. Plain SQL, values bound. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "history_db.h"

#define LINE_MAX_BYTES (64u << 20) /* a run's line: its summary JSON is the most of it */
/* import_line's answer for a line that is no run (no rt_db code has the number) */
#define IMPORT_NOT_A_RUN (-24)
/* the bound of a PostgreSQL import's every wait, all runs together */
#define IMPORT_SECS 600.0

/* Whether s is a run id: 32 lowercase hex digits. */
static bool uuid_ok(const char *s)
{
    if (!s || strlen(s) != 32)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

/* FNV-1a over s from the offset basis h. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The run id of the run o (a JSON object of columns): its run_uuid when that is one, else one made
 * of its start_secs, pid and host_hostname into out[33]. */
static const char *uuid_of(const json_t *o, char out[33])
{
    const char *u = json_string_value(json_object_get(o, "run_uuid"));
    if (uuid_ok(u))
        return u;
    char key[600];
    const json_t *start = json_object_get(o, "start_secs"), *pid = json_object_get(o, "pid");
    const char *host = json_string_value(json_object_get(o, "host_hostname"));
    snprintf(key, sizeof key, "%.17g|%lld|%.500s", json_is_number(start) ? json_number_value(start) : NAN,
             json_is_integer(pid) ? (long long)json_integer_value(pid) : -1LL, host ? host : "");
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)fnv1a(0xcbf29ce484222325ull, key),
             (unsigned long long)fnv1a(0x84222325cbf29ce4ull, key));
    return out;
}

/* Column i of the row of st as JSON (a new reference; NULL when out of memory). */
static json_t *column_json(rt_db_stmt *st, int i)
{
    switch (rt_db_column_type(st, i)) {
    case RT_DB_INTEGER: return json_integer(rt_db_column_int64(st, i));
    case RT_DB_FLOAT: {
        double d = rt_db_column_double(st, i);
        return isfinite(d) ? json_real(d) : json_null();
    }
    case RT_DB_TEXT: return history_json_str_lossy(rt_db_column_text(st, i));
    default: return json_null();
    }
}

/* Opens file ("-": stdout) to write the export to. NULL after saying why. */
static FILE *open_out(const char *file)
{
    if (strcmp(file, "-") == 0)
        return stdout;
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        cli_say("history: --export: cannot write '%s': %s", file, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return f;
}

int cli_history_export(const char *path, const char *file)
{
    rt_db *db = history_open_read(path);
    if (!db)
        return EXIT_FAIL;
    size_t n = history_ncols(), len = 0;
    char *sql = malloc(16384);
    int rc = sql ? RT_DB_OK : RT_DB_NOMEM;
    if (sql)
        sql[0] = '\0';
    for (size_t i = 0; rc == RT_DB_OK && i < n; i++) /* a column an older table lacks: NULL */
        if (history_put(sql, 16384, &len, i ? ", " : "SELECT ") < 0 ||
            history_put(sql, 16384, &len, history_has_column(db, history_col_name(i)) ? history_col_name(i) : "NULL") <
                0)
            rc = RT_DB_TOOBIG;
    if (rc == RT_DB_OK && history_put(sql, 16384, &len, " FROM runs ORDER BY id") < 0)
        rc = RT_DB_TOOBIG;
    FILE *out = rc == RT_DB_OK ? open_out(file) : NULL;
    if (rc == RT_DB_OK && !out) {
        free(sql);
        rt_db_close(db);
        return EXIT_USAGE;
    }
    rt_db_stmt *st = NULL;
    size_t runs = 0;
    bool failed = false;
    if (rc == RT_DB_OK)
        rc = rt_db_prepare(db, sql, &st);
    while (rc == RT_DB_OK && !failed && history_next_row(st, &rc)) {
        json_t *o = json_object();
        for (size_t i = 0; o && i < n; i++) {
            json_t *v = column_json(st, (int)i);
            if (!v || json_object_set_new(o, history_col_name(i), v) < 0) {
                json_decref(o);
                o = NULL;
            }
        }
        char made[33];
        const char *u = o ? uuid_of(o, made) : NULL;
        char *text = u && json_object_set_new(o, "run_uuid", json_string(u)) == 0
                         ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
                         : NULL;
        json_decref(o);
        failed = !text || fputs(text, out) < 0 || putc('\n', out) == EOF;
        free(text);
        runs++;
    }
    rt_db_finalize(st);
    if (rc != RT_DB_OK)
        cli_say("history %s: %s", history_shown(path), rc == RT_DB_NOMEM || rc == RT_DB_TOOBIG ? rt_db_errstr(rc) : rt_db_errmsg(db));
    rt_db_close(db);
    free(sql);
    if (out && (fflush(out) != 0 || ferror(out)))
        failed = true;
    if (out && out != stdout && fclose(out) != 0)
        failed = true;
    if (failed && rc == RT_DB_OK)
        cli_say("history: --export: cannot write '%s': %s", file, errno ? strerror(errno) : "out of memory");
    if (rc != RT_DB_OK || failed)
        return EXIT_FAIL;
    cli_say("history %s: %zu run%s exported to %s", history_shown(path), runs, runs == 1 ? "" : "s", strcmp(file, "-") ? file : "stdout");
    return 0;
}

/* Binds the value v of column i (kind 'T', 'I' or 'R') at k. Returns an rt_db result code, or
 * RT_DB_MISMATCH when v is not such a value (a text column takes a JSON array or object as its
 * compact text: `history --json` parses some). */
static int bind_value(rt_db_stmt *st, int k, char kind, const json_t *v)
{
    if (!v || json_is_null(v))
        return rt_db_bind_null(st, k);
    if (kind == 'T') {
        if (json_is_string(v))
            return rt_db_bind_text(st, k, json_string_value(v));
        if (!json_is_array(v) && !json_is_object(v))
            return RT_DB_MISMATCH;
        char *t = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        int rc = t ? rt_db_bind_text(st, k, t) : RT_DB_NOMEM;
        free(t);
        return rc;
    }
    if (kind == 'I' && json_is_integer(v))
        return rt_db_bind_int(st, k, json_integer_value(v));
    if (kind == 'I' && json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
        fabs(json_real_value(v)) < 9e15)
        return rt_db_bind_int(st, k, (int64_t)json_real_value(v));
    if (kind == 'R' && json_is_number(v))
        return rt_db_bind_real(st, k, json_number_value(v));
    return RT_DB_MISMATCH;
}

/* What an import has done so far. */
typedef struct import_state {
    rt_db *db;
    const char *insert;       /* the INSERT of a run, every column a parameter in table order
                               * (prepared a run at a time: the loaded SQLite's calls have no reset) */
    size_t added, skipped, line;
    const char *unknown;      /* the first key of no column seen (a newer tool's), said once */
    char unknown_buf[64];
    char why[300];            /* a bad line's reason */
} import_state;

/* Adds the run of the JSON line text unless its run id is there. Returns an rt_db result code;
 * IMPORT_NOT_A_RUN with im->why set when the line is no run. */
static int import_line(import_state *im, const char *text)
{
    json_error_t err;
    json_t *o = json_loads(text, 0, &err);
    if (!json_is_object(o)) {
        snprintf(im->why, sizeof im->why, "not a JSON object%s%s", o ? "" : ": ", o ? "" : err.text);
        json_decref(o);
        return IMPORT_NOT_A_RUN;
    }
    const char *given = json_string_value(json_object_get(o, "run_uuid"));
    if (json_object_get(o, "run_uuid") && !json_is_null(json_object_get(o, "run_uuid")) && !uuid_ok(given)) {
        snprintf(im->why, sizeof im->why, "run_uuid is not 32 lowercase hex digits");
        json_decref(o);
        return IMPORT_NOT_A_RUN;
    }
    char made[33];
    const char *u = uuid_of(o, made);
    rt_db_stmt *have = NULL, *add = NULL;
    int rc = rt_db_prepare(im->db, "SELECT 1 FROM runs WHERE run_uuid = ?1", &have);
    if (rc == RT_DB_OK)
        rc = rt_db_bind_text(have, 1, u);
    int step = rc == RT_DB_OK ? rt_db_step(have) : rc;
    rt_db_finalize(have);
    if (step == RT_DB_ROW) {
        im->skipped++;
        json_decref(o);
        return RT_DB_OK;
    }
    if (step != RT_DB_DONE) {
        json_decref(o);
        return step;
    }
    rc = rt_db_prepare(im->db, im->insert, &add);
    size_t n = history_ncols();
    for (size_t i = 0; rc == RT_DB_OK && i < n; i++) {
        const char *name = history_col_name(i);
        const json_t *v = json_object_get(o, name);
        if (!v && strcmp(name, "summary_json") == 0) /* history --json's line: the summary parsed */
            v = json_object_get(o, "summary");
        rc = strcmp(name, "run_uuid") == 0 ? rt_db_bind_text(add, (int)i + 1, u)
                                           : bind_value(add, (int)i + 1, history_col_kind(i), v);
        if (rc == RT_DB_MISMATCH)
            snprintf(im->why, sizeof im->why, "%s: not a %s", name,
                     history_col_kind(i) == 'T' ? "text" : history_col_kind(i) == 'I' ? "whole number" : "number");
    }
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        bool known = strcmp(key, "id") == 0 || strcmp(key, "summary") == 0; /* history --json's id and summary */
        for (size_t i = 0; !known && i < n; i++)
            known = strcmp(key, history_col_name(i)) == 0;
        if (!known && !im->unknown) {
            snprintf(im->unknown_buf, sizeof im->unknown_buf, "%s", key);
            im->unknown = im->unknown_buf;
        }
    }
    json_decref(o);
    if (rc == RT_DB_OK && (rc = rt_db_step(add)) == RT_DB_DONE) {
        rc = RT_DB_OK;
        im->added++;
    }
    rt_db_finalize(add);
    return rc == RT_DB_MISMATCH ? IMPORT_NOT_A_RUN : rc;
}

int cli_history_import(const char *path, const char *file)
{
    FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
    if (!in) {
        cli_say("history: --import: cannot read '%s': %s", file, strerror(errno));
        return EXIT_USAGE;
    }
    int rc;
    char why[600];
    rt_db *db = history_begin_write(path, "nothing imported", cli_mono_secs() + IMPORT_SECS, &rc, why, sizeof why);
    if (!db && rc != -1)
        cli_say("warning: history %s: %s (nothing imported)", history_shown(path), why);
    if (!db) {
        if (in != stdin)
            fclose(in);
        return EXIT_FAIL;
    }
    import_state im = {.db = db};
    size_t n = history_ncols(), len = 0;
    char names[8192], *sql = malloc(16384);
    if (!sql)
        rc = RT_DB_NOMEM;
    else if (history_col_names(names, sizeof names) < 0 || history_put(sql, 16384, &len, "INSERT INTO runs (") < 0 ||
             history_put(sql, 16384, &len, names) < 0 || history_put(sql, 16384, &len, ") VALUES (") < 0)
        rc = RT_DB_TOOBIG;
    for (size_t i = 0; rc == RT_DB_OK && i < n; i++) {
        char p[32];
        snprintf(p, sizeof p, "%s?%zu", i ? ", " : "", i + 1);
        if (history_put(sql, 16384, &len, p) < 0)
            rc = RT_DB_TOOBIG;
    }
    if (rc == RT_DB_OK && history_put(sql, 16384, &len, ")") < 0)
        rc = RT_DB_TOOBIG;
    im.insert = sql;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    bool bad = false, read_err = false;
    while (rc == RT_DB_OK && !bad && (errno = 0, got = getline(&line, &cap, in)) >= 0) {
        im.line++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = '\0';
        if (got == 0)
            continue;
        if ((size_t)got > LINE_MAX_BYTES) {
            snprintf(im.why, sizeof im.why, "a line of more than %u MiB", LINE_MAX_BYTES >> 20);
            bad = true;
            break;
        }
        rc = import_line(&im, line);
        if (rc == IMPORT_NOT_A_RUN) {
            bad = true;
            rc = RT_DB_OK;
        }
    }
    read_err = !bad && rc == RT_DB_OK && ferror(in);
    int saved = errno;
    free(line);
    if (in != stdin)
        fclose(in);
    free(sql);
    if (rc == RT_DB_OK && !bad && !read_err)
        rc = rt_db_exec(db, "COMMIT");
    int status = 0;
    if (bad) {
        cli_say("history: --import %s: line %zu: %s (nothing imported)", file, im.line, im.why);
        status = EXIT_USAGE;
    } else if (read_err) {
        cli_say("history: --import: cannot read '%s': %s (nothing imported)", file, strerror(saved));
        status = EXIT_FAIL;
    } else if (rc != RT_DB_OK) {
        cli_say("history %s: %s (nothing imported)", history_shown(path),
                rc == RT_DB_NOMEM || rc == RT_DB_TOOBIG ? rt_db_errstr(rc) : rt_db_errmsg(db));
        status = EXIT_FAIL;
    }
    if (status && rt_db_in_transaction(db))
        rt_db_exec(db, "ROLLBACK");
    rt_db_close(db);
    if (status)
        return status;
    if (im.unknown)
        cli_say("history: --import %s: columns this version does not know were left out ('%s', ...)", file,
                im.unknown);
    printf("history %s: %zu run%s added, %zu skipped (their run_uuid was there already)\n", history_shown(path), im.added,
           im.added == 1 ? "" : "s", im.skipped);
    return fflush(stdout) == 0 ? 0 : EXIT_FAIL;
}
