/* read.c - a run history read back (history.h): opening one for reading by path or URL
 * (rt_history_open), selecting its runs (rt_history_query), and the runs `recommend --job`
 * answers from as rt_summary records, with what they point to, in one block of typed arrays
 * (rt_history_runs, rt_history_free): each row's statistics columns into its summary
 * (rt_history_columns), its JSON text columns parsed (runs_json.c), who ran it. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "history/runs_json.h"

#define BUSY_TIMEOUT_MS 10000 /* the wait for a writer's lock (the tool's writers' too) */
#define cols (rt_history_columns())
#define NCOLS RT_HISTORY_NCOLS

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
        if (cols[i].src == RT_HISTORY_FROM_SUMMARY && cols[i].type == 'R')
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
static void read_sum_col(rt_db_stmt *st, int k, const rt_history_column *c, rt_summary *s)
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

int rt_history_open(const char *target, rt_db **out, char *err, size_t cap)
{
    *out = NULL;
    err[0] = '\0';
    bool pg = rt_db_is_url(target);
    struct stat sb;
    if (!pg && stat(target, &sb) < 0) {
        int e = errno;
        if (rt_sqlite_load(err, cap) == RT_OK)
            snprintf(err, cap, "%s", e == ENOENT ? "no such file (no run has been recorded there yet)" : strerror(e));
        return RT_DB_CANTOPEN;
    }
    rt_db *db = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        int flags = attempt == 0 ? RT_DB_OPEN_READONLY : RT_DB_OPEN_READWRITE;
        int rc = rt_db_open(target, flags, BUSY_TIMEOUT_MS, 0, &db, err, cap);
        if (rc == RT_DB_OK) {
            int has = has_runs(db);
            if (has > 0) {
                *out = db;
                return RT_DB_OK;
            }
            if (has == 0) {
                snprintf(err, cap, "no runs recorded there (not a run history)");
                rt_db_close(db);
                return RT_DB_ERROR;
            }
            rc = -has;
            snprintf(err, cap, "%s", rt_db_errmsg(db));
            rt_db_close(db);
            db = NULL;
        }
        if (attempt == 0 && !pg && rc == RT_DB_READONLY_ROLLBACK)
            continue; /* a hot journal: recover it with write access */
        return rc;
    }
    return RT_DB_ERROR;
}

int rt_history_query(rt_db *db, const char *sql, const char *job, long last, rt_db_stmt **st)
{
    int rc = rt_db_prepare(db, sql, st);
    if (rc == RT_DB_OK)
        rc = last > 0                              ? rt_db_bind_int(*st, 1, last)
             : rt_db_engine_of(db) == RT_DB_SQLITE ? rt_db_bind_int(*st, 1, -1) /* SQLite: no limit */
                                                   : rt_db_bind_null(*st, 1);   /* PostgreSQL: no limit */
    if (rc == RT_DB_OK && job)
        rc = rt_db_bind_text(*st, 2, job);
    return rc;
}

/* What rt_history_runs keeps of a row until its block is made: its strings (offsets + 1 into
 * the pool: job_name, allocation, the member's job_id, step_id, node, from; who ran it: the host
 * (its node, else host_hostname), the user, the command) and member. */
typedef struct history_row {
    size_t s[9];
    rt_member m;
} history_row;

/* The SELECT of the runs rt_history_runs reads into buf[cap] (the columns the table lacks as
 * NULL): the successful runs, and the runs the OOM killer hit (whatever their status: the killed
 * command exits 137), so that a recommendation never forgets the memory that killed a run; and
 * (0.20) the runs that ran to their time limit (the scheduler's SIGTERM: 143), so that it never
 * forgets the time either; (0.21) those a SIGTERM, SIGKILL or SIGXCPU ended where no limit was
 * known (their time a floor: floors.c). Returns 0, or -1 when buf is too small. */
static int runs_select(char *buf, size_t cap, const bool *have, bool job)
{
    bool has_oom = false, has_cores = false, has_phases = false, has_member = false, has_time = false,
         has_signal = false, has_node = false, has_user = false;
    size_t len = 0;
    int n = snprintf(buf, cap, "SELECT job_name, allocation, samples, start_secs, end_secs");
    for (size_t i = 0; n >= 0 && i < NCOLS; i++) {
        const char *name = cols[i].name;
        if (have[i]) {
            has_oom = has_oom || strcmp(name, "oom_kills") == 0;
            has_time = has_time || strcmp(name, "time_limit_used_pct") == 0;
            has_signal = has_signal || strcmp(name, "end_signal") == 0;
            has_cores = has_cores || strcmp(name, "cores") == 0;
            has_phases = has_phases || strcmp(name, "phases") == 0;
            has_member = has_member || strcmp(name, "member") == 0;
            has_node = has_node || strcmp(name, "node") == 0;
            has_user = has_user || strcmp(name, "user_name") == 0;
        }
        if (cols[i].src != RT_HISTORY_FROM_SUMMARY)
            continue;
        len += (size_t)n;
        n = len < cap ? snprintf(buf + len, cap - len, ", %s", have[i] ? name : "NULL") : -1;
    }
    if (n < 0 || (len += (size_t)n) >= cap)
        return -1;
    n = snprintf(buf + len, cap - len,
                 ", %s, %s, %s, %s, %s, command FROM runs WHERE (exit_status = 0%s%s%s)%s ORDER BY id DESC LIMIT ?1",
                 has_cores ? "cores" : "NULL", has_phases ? "phases" : "NULL", has_member ? "member" : "NULL",
                 has_node ? "COALESCE(node, host_hostname)" : "host_hostname", has_user ? "user_name" : "NULL",
                 has_oom ? " OR oom_kills > 0" : "", has_time ? " OR time_limit_used_pct >= 99" : "",
                 has_signal ? " OR end_signal IN (9, 15, 24)" : "", job ? " AND job_name = ?2" : "");
    return n < 0 || (size_t)n >= cap - len ? -1 : 0;
}

/* What a read gathers before its block is made: each row's summary, strings and member, table and
 * phases, and the counts the block is sized by. */
typedef struct history_read {
    rt_summary *v;
    history_row *offs;   /* each row's strings (pool offsets + 1) and member */
    history_cores *tabs; /* each row's table (n 0: none) */
    history_phases *phs; /* each row's phases with a table */
    size_t nv, capv;
    size_t nrows;                  /* the tables' rows in all */
    size_t nph, nphrows, nphbytes; /* the phases in all, their rows, their names' bytes */
    history_pool pool;
} history_read;

/* Room for one more row; false when out of memory. */
static bool read_grow(history_read *r)
{
    if (r->nv < r->capv)
        return true;
    size_t capv = r->capv ? r->capv * 2 : 8;
    rt_summary *v = realloc(r->v, capv * sizeof *v);
    if (v)
        r->v = v;
    history_row *o = v ? realloc(r->offs, capv * sizeof *o) : NULL;
    if (o)
        r->offs = o;
    history_cores *t = o ? realloc(r->tabs, capv * sizeof *t) : NULL;
    if (t)
        r->tabs = t;
    history_phases *p = t ? realloc(r->phs, capv * sizeof *p) : NULL;
    if (!p)
        return false;
    r->phs = p;
    r->capv = capv;
    return true;
}

/* The row st stands on into r (room made by read_grow). */
static void read_row(history_read *r, rt_db_stmt *st)
{
    size_t nv = r->nv;
    rt_summary *s = &r->v[nv];
    summary_clear(s);
    r->offs[nv].s[0] = history_pool_put(&r->pool, rt_db_column_text(st, 0));
    r->offs[nv].s[1] = history_pool_put(&r->pool, rt_db_column_text(st, 1));
    s->samples = rt_db_column_type(st, 2) == RT_DB_NULL ? 0 : (uint64_t)rt_db_column_int64(st, 2);
    int k = 3;
    double *times[2] = {&s->start_secs, &s->end_secs};
    for (int t = 0; t < 2; t++, k++)
        if (rt_db_column_type(st, k) != RT_DB_NULL)
            *times[t] = rt_db_column_double(st, k);
    for (size_t i = 0; i < NCOLS; i++) {
        if (cols[i].src != RT_HISTORY_FROM_SUMMARY)
            continue;
        read_sum_col(st, k, &cols[i], s);
        k++;
    }
    history_cores_parse(rt_db_column_text(st, k), &r->tabs[nv]);
    r->nrows += r->tabs[nv].t.n;
    history_phases_parse(rt_db_column_text(st, k + 1), &r->phs[nv]);
    history_member_parse(rt_db_column_text(st, k + 2), &r->offs[nv].m, r->offs[nv].s + 2, &r->pool);
    for (int w = 0; w < 3; w++) /* who ran it: host, user, command */
        r->offs[nv].s[6 + w] = history_pool_put(&r->pool, rt_db_column_text(st, k + 3 + w));
    r->nph += r->phs[nv].n;
    r->nphrows += r->phs[nv].rows;
    r->nphbytes += r->phs[nv].name_bytes;
    if (!s->energy_method) /* never a figure without its method */
        s->energy_joules = s->co2e_grams = NAN;
    if (!s->process_energy_method)
        s->process_energy_joules = s->process_co2e_grams = NAN;
    s->has_process = !isnan(s->process_cores.mean) || !isnan(s->process_pss_mib.peak) || !isnan(s->process_cpu_secs);
    r->nv++;
}

/* What rt_history_runs gives: the runs (the caller's pointer: runs, at the end) and everything
 * they point to, each array an allocation of its own; rt_history_free finds the block from its
 * runs. */
typedef struct history_block {
    rt_cores_table *tables;              /* each run's table under other core counts */
    rt_cores_row *rows;                  /* the tables' rows */
    rt_phase_summary *phases;            /* the runs' phases (a name and a table each) */
    rt_cores_table *phase_tables;        /* the phases' tables */
    rt_cores_row *phase_rows;            /* their rows */
    const rt_phase_summary **phase_ptrs; /* each run's phases as its summary points to them */
    rt_member *members;                  /* each run's member (a job of several nodes) */
    rt_history_who *who;                 /* who ran each run; NULL: not asked */
    char *strings;                       /* the read's strings (its pool) */
    char *names;                         /* the phases' names */
    rt_summary runs[];
} history_block;

/* The block whose runs these are. */
static history_block *block_of(rt_summary *runs)
{
    return (history_block *)(void *)((char *)runs - offsetof(history_block, runs));
}

/* Frees b and its arrays (NULL: nothing). */
static void block_free(history_block *b)
{
    if (!b)
        return;
    void *parts[] = {b->tables,  b->rows,  b->phases, b->phase_tables, b->phase_rows, b->phase_ptrs, b->members, b->who,
                     b->strings, b->names, b};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        free(parts[i]);
}

/* n zeroed elements of size bytes (one when n is 0, so that NULL means out of memory). */
static void *zeroed(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* The block of r's runs: the summaries, their tables, the tables' rows, the phases (their
 * summaries, tables, rows and pointers), the members, who ran each (when who is not NULL: into
 * *who), the strings (r's pool, taken) and the phases' names. NULL when out of memory. */
static history_block *read_block(history_read *r, rt_history_who **who)
{
    size_t nv = r->nv;
    if (nv > (SIZE_MAX - sizeof(history_block)) / sizeof(rt_summary))
        return NULL;
    history_block *b = calloc(1, sizeof *b + nv * sizeof b->runs[0]);
    if (!b)
        return NULL;
    b->tables = zeroed(nv, sizeof *b->tables);
    b->rows = zeroed(r->nrows, sizeof *b->rows);
    b->phases = zeroed(r->nph, sizeof *b->phases);
    b->phase_tables = zeroed(r->nph, sizeof *b->phase_tables);
    b->phase_rows = zeroed(r->nphrows, sizeof *b->phase_rows);
    b->phase_ptrs = zeroed(r->nph, sizeof *b->phase_ptrs);
    b->members = zeroed(nv, sizeof *b->members);
    b->who = who ? zeroed(nv, sizeof *b->who) : NULL;
    b->names = zeroed(r->nphbytes, sizeof *b->names);
    if (!b->tables || !b->rows || !b->phases || !b->phase_tables || !b->phase_rows || !b->phase_ptrs || !b->members ||
        (who && !b->who) || !b->names) {
        block_free(b);
        return NULL;
    }
    b->strings = r->pool.text; /* the block's now */
    r->pool.text = NULL;
    const char *strs = b->strings;
    rt_cores_row *rows = b->rows, *prows = b->phase_rows;
    rt_phase_summary *ps = b->phases;
    rt_cores_table *ptables = b->phase_tables;
    const rt_phase_summary **pptrs = b->phase_ptrs;
    char *names = b->names;
    for (size_t i = 0; i < nv; i++) {
        rt_summary *s = &b->runs[i];
        *s = r->v[i];
        const size_t *o = r->offs[i].s;
        s->job_name = o[0] ? strs + o[0] - 1 : NULL;
        s->allocation = o[1] ? strs + o[1] - 1 : NULL;
        s->member = NULL;
        if (o[2]) { /* a job's node: its member, the strings in the block */
            rt_member *m = &b->members[i];
            *m = r->offs[i].m;
            m->job_id = strs + o[2] - 1;
            m->step_id = o[3] ? strs + o[3] - 1 : NULL;
            m->node = o[4] ? strs + o[4] - 1 : NULL;
            m->from = o[5] ? strs + o[5] - 1 : NULL;
            s->member = m;
        }
        if (b->who) {
            b->who[i].host = o[6] ? strs + o[6] - 1 : NULL;
            b->who[i].user = o[7] ? strs + o[7] - 1 : NULL;
            b->who[i].command = o[8] ? strs + o[8] - 1 : NULL;
        }
        s->cores = NULL;
        const history_cores *tab = &r->tabs[i];
        if (tab->t.n) {
            b->tables[i] = tab->t;
            memcpy(rows, tab->rows, tab->t.n * sizeof *rows);
            b->tables[i].rows = rows;
            rows += tab->t.n;
            s->cores = &b->tables[i];
        }
        /* its phases: a name and a table each (the rest of a phase's figures unread) */
        const history_phases *ph = &r->phs[i];
        s->phases = ph->n ? pptrs : NULL;
        s->phase_count = ph->n;
        s->phase_counts = NULL;
        for (size_t k = 0; k < ph->n; k++) {
            const history_cores *h = &ph->tabs[k];
            size_t len = strlen(ph->names[k]) + 1;
            memcpy(names, ph->names[k], len);
            *ptables = h->t;
            memcpy(prows, h->rows, h->t.n * sizeof *prows);
            ptables->rows = prows;
            prows += h->t.n;
            history_phase_clear(ps);
            ps->name = names;
            ps->duration_secs = h->t.duration_secs;
            ps->cores = ptables++;
            *pptrs++ = ps++;
            names += len;
        }
    }
    if (who)
        *who = b->who;
    return b;
}

int rt_history_runs(const char *target, const char *job, long last, rt_summary **runs, size_t *n, rt_history_who **who,
                    char *err, size_t cap)
{
    *runs = NULL;
    *n = 0;
    if (who)
        *who = NULL;
    rt_db *db = NULL;
    int rc = rt_history_open(target, &db, err, cap);
    if (rc != RT_DB_OK)
        return rc;
    char sql[8192];
    bool have[NCOLS + 1]; /* an older database lacks the newer columns until its next write: NULL */
    rc = rt_history_have(db, have);
    if (rc == RT_DB_OK && runs_select(sql, sizeof sql, have, job != NULL) < 0)
        rc = RT_DB_TOOBIG; /* a bug: the buffer is sized for the table */
    rt_db_stmt *st = NULL;
    if (rc == RT_DB_OK)
        rc = rt_history_query(db, sql, job, last, &st);
    history_read r;
    memset(&r, 0, sizeof r);
    bool oom = false;
    while (rc == RT_DB_OK && !oom && !r.pool.oom) {
        int step = rt_db_step(st);
        if (step != RT_DB_ROW) {
            rc = step == RT_DB_DONE ? RT_DB_OK : step;
            break;
        }
        if (!read_grow(&r))
            oom = true;
        else
            read_row(&r, st);
    }
    oom = oom || r.pool.oom;
    if (rc != RT_DB_OK)
        snprintf(err, cap, "%s", rt_db_errmsg(db));
    rt_db_finalize(st);
    rt_db_close(db);
    history_block *block = NULL;
    if (rc == RT_DB_OK && !oom && r.nv > 0) {
        block = read_block(&r, who);
        oom = !block;
    }
    for (size_t i = 0; i < r.nv; i++) {
        free(r.tabs[i].rows);
        history_phases_free(&r.phs[i]);
    }
    free(r.tabs);
    free(r.phs);
    free(r.v);
    free(r.offs);
    free(r.pool.text);
    if (rc == RT_DB_OK && oom) {
        snprintf(err, cap, "out of memory");
        rc = RT_DB_NOMEM;
    }
    if (rc != RT_DB_OK) {
        if (who)
            *who = NULL;
        block_free(block);
        return rc;
    }
    *runs = block ? block->runs : NULL;
    *n = r.nv;
    return RT_DB_OK;
}

void rt_history_free(rt_summary *runs)
{
    if (runs)
        block_free(block_of(runs));
}
