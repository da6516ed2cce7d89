/* db_pg.c - the PostgreSQL engine of a history's database (db.c calls it for a postgresql://
 * URL): libpq (pg_dl.c) driven without ever blocking past the connection's deadline (the connect
 * made by pg_connect.c within it, each statement sent and its answer waited for with poll(2); past the
 * deadline the connection is dropped and the server rolls back what was begun), statements with
 * ?N made $N, rows read one at a time (single-row mode: a history of 100,000 runs is never held
 * whole), and PostgreSQL's errors made SQLite's codes. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/core.h"
#include "db_engine.h"

#define PQ (rt_pg_calls())
#define CONNECT_SECS 30.0 /* the connect's bound when the connection has no deadline */

int rt_db_pg_poll(int fd, short events, double by)
{
    for (;;) {
        int ms = -1;
        if (by > 0) {
            double left = by - rt_mono_secs();
            if (left <= 0)
                return 0;
            ms = (int)(left * 1000) + 1;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms);
        if (n > 0 || (n < 0 && errno != EINTR))
            return n;
    }
}

/* The message into db->msg: libpq's lines joined by "; ", the trailing newline gone. */
static void set_msg(rt_db *db, int code, const char *m)
{
    db->code = code;
    snprintf(db->msg, sizeof db->msg, "%s", m && *m ? m : "PostgreSQL error");
    size_t n = strlen(db->msg);
    while (n > 0 && (db->msg[n - 1] == '\n' || db->msg[n - 1] == ' '))
        db->msg[--n] = '\0';
    char joined[sizeof db->msg];
    size_t k = 0;
    for (const char *p = db->msg; *p && k + 3 < sizeof joined; p++) {
        if (*p != '\n') {
            joined[k++] = *p;
            continue;
        }
        joined[k++] = ';'; /* libpq's lines: one line of ours */
        joined[k++] = ' ';
        while (p[1] == ' ')
            p++;
    }
    joined[k] = '\0';
    memcpy(db->msg, joined, k + 1);
}

/* The connection dropped (the deadline passed, or the link broke): later calls fail at once. */
static int drop(rt_db *db, int code, const char *why)
{
    set_msg(db, code, why);
    if (db->pg)
        PQ->finish(db->pg);
    db->pg = NULL;
    return code;
}

/* Waits until the socket is ready for events (POLLIN or POLLOUT), or the deadline. Returns 0,
 * or -1 (the deadline passed, or poll failed: the connection is dropped). */
static int wait_socket(rt_db *db, short events, double deadline)
{
    int n = rt_db_pg_poll(PQ->socket(db->pg), events, deadline);
    if (n > 0)
        return 0;
    drop(db, n == 0 ? RT_DB_BUSY : RT_DB_CANTOPEN, n == 0 ? RT_PG_BEFORE_DEADLINE : strerror(errno));
    return -1;
}

int rt_db_pg_open(const char *url, double deadline, rt_db *db)
{
    db->deadline = deadline;
    char msg[512];
    int rc = rt_db_pg_connect(url, deadline > 0 ? deadline : rt_mono_secs() + CONNECT_SECS, &db->pg, msg, sizeof msg);
    if (rc != RT_DB_OK) {
        drop(db, rc, msg);
        return rc == RT_DB_BUSY ? RT_DB_CANTOPEN : rc; /* past the deadline: no connection */
    }
    PQ->setnonblocking(db->pg, 1); /* a statement is sent as the socket takes it (sent()) */
    /* no NOTICE on stderr (CREATE ... IF NOT EXISTS says one); the server gives up a statement at
     * the deadline too, so that a lock it waits on is let go of */
    char set[160];
    int n = snprintf(set, sizeof set, "SET client_min_messages = warning");
    if (deadline > 0) {
        double left = deadline - rt_mono_secs();
        snprintf(set + n, sizeof set - (size_t)n, "; SET statement_timeout = %ld",
                 left > 0.001 ? (long)(left * 1000) : 1L);
    }
    return rt_db_pg_exec(db, set);
}

void rt_db_pg_close(rt_db *db)
{
    if (db->pg)
        PQ->finish(db->pg);
    db->pg = NULL;
}

/* SQLite's code for a PostgreSQL error (its SQLSTATE; none: the link broke). */
static int code_of(const char *state)
{
    if (!state || strlen(state) != 5)
        return RT_DB_CANTOPEN;
    if (strncmp(state, "53", 2) == 0) /* insufficient resources: disk full, out of memory */
        return RT_DB_FULL;
    if (strcmp(state, "57014") == 0 || strcmp(state, "55P03") == 0 || strcmp(state, "40001") == 0 ||
        strcmp(state, "40P01") == 0) /* statement timeout, lock not available, serialization, deadlock */
        return RT_DB_BUSY;
    if (strncmp(state, "23", 2) == 0)
        return RT_DB_CONSTRAINT;
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "28", 2) == 0 || strncmp(state, "57P", 3) == 0)
        return RT_DB_CANTOPEN; /* connection, authorization, the server shutting down */
    if (strcmp(state, "25006") == 0)
        return RT_DB_READONLY;
    return RT_DB_ERROR;
}

/* The next result of the statement sent, waited for until the deadline; NULL at the end (or
 * when dropped: db->pg is then NULL). */
static PGresult *next_result(rt_db *db)
{
    while (db->pg && PQ->isBusy(db->pg)) {
        if (wait_socket(db, POLLIN, db->deadline) < 0)
            return NULL;
        if (!PQ->consumeInput(db->pg)) {
            drop(db, RT_DB_CANTOPEN, PQ->errorMessage(db->pg));
            return NULL;
        }
    }
    return db->pg ? PQ->getResult(db->pg) : NULL;
}

/* Reads what is left of the answer. */
static void drain(rt_db *db)
{
    PGresult *r;
    while ((r = next_result(db)) != NULL)
        PQ->clear(r);
}

/* An error result into db's code and message; returns the code. */
static int result_error(rt_db *db, const PGresult *r)
{
    const char *m = PQ->resultErrorMessage(r);
    set_msg(db, code_of(PQ->resultErrorField(r, PG_DIAG_SQLSTATE)), m && *m ? m : PQ->errorMessage(db->pg));
    return db->code;
}

/* After a send: what libpq holds of it written out as the socket takes it, until the deadline.
 * ok: the send's own answer. Returns RT_DB_OK, or the code (the connection dropped). */
static int sent(rt_db *db, int ok)
{
    if (!ok)
        return drop(db, RT_DB_CANTOPEN, PQ->errorMessage(db->pg));
    for (int f; (f = PQ->flush(db->pg)) != 0;) {
        if (f < 0)
            return drop(db, RT_DB_CANTOPEN, PQ->errorMessage(db->pg));
        if (wait_socket(db, POLLOUT | POLLIN, db->deadline) < 0)
            return db->code;
        if (!PQ->consumeInput(db->pg)) /* what the server said meanwhile (libpq's advice) */
            return drop(db, RT_DB_CANTOPEN, PQ->errorMessage(db->pg));
    }
    return RT_DB_OK;
}

static int not_connected(rt_db *db)
{
    return db->code ? db->code : (set_msg(db, RT_DB_CANTOPEN, "not connected"), RT_DB_CANTOPEN);
}

int rt_db_pg_exec(rt_db *db, const char *sql)
{
    if (!db->pg)
        return not_connected(db);
    int rc = sent(db, PQ->sendQuery(db->pg, sql));
    if (rc != RT_DB_OK)
        return rc;
    PGresult *r;
    while ((r = next_result(db)) != NULL) {
        int s = PQ->resultStatus(r);
        if (rc == RT_DB_OK && s != PG_RES_COMMAND_OK && s != PG_RES_TUPLES_OK && s != PG_RES_EMPTY_QUERY)
            rc = result_error(db, r);
        PQ->clear(r);
    }
    if (!db->pg)
        return db->code;
    if (rc == RT_DB_OK)
        db->code = 0;
    return rc;
}

/* The placeholders of sql outside quotes: ?N, or ? numbered in order after the last plain one.
 * Each one's N into nums[] (when not NULL); with out, sql copied into out[cap] with each made
 * $M, M dense[N] (cap: strlen(sql) + 12 a placeholder + 1 holds it). Returns how many there
 * are. */
static size_t placeholders(const char *sql, int *nums, char *out, size_t cap, const int *dense)
{
    char *end = out ? out + cap : NULL;
    size_t count = 0;
    int next = 0;
    char quote = 0;
    for (const char *p = sql; *p; p++) {
        if (quote || *p == '\'' || *p == '"' || *p != '?') {
            quote = quote ? (*p == quote ? 0 : quote) : (*p == '\'' || *p == '"') ? *p : 0;
            if (out && out < end - 1)
                *out++ = *p;
            continue;
        }
        int k;
        if (p[1] >= '0' && p[1] <= '9') {
            char *stop;
            long v = strtol(p + 1, &stop, 10);
            k = v > 0 && v <= 65535 ? (int)v : -1;
            p = stop - 1;
        } else {
            k = ++next;
        }
        if (nums)
            nums[count] = k;
        if (out) {
            int w = snprintf(out, (size_t)(end - out), "$%d", dense[k]);
            out += w > 0 && w < end - out ? w : 0;
        }
        count++;
    }
    if (out)
        *out = '\0';
    return count;
}

int rt_db_pg_prepare(rt_db *db, const char *sql, rt_db_stmt *st)
{
    if (!db->pg)
        return not_connected(db);
    /* ?N and ? (numbered in order) made $M, outside quotes: the numbers used, densely in
     * ascending order (a statement that binds ?1 and ?5 but not ?2 to ?4, a filter left out,
     * sends two parameters; the server types only those it sees) */
    size_t n = strlen(sql);
    int *nums = calloc(n + 1, sizeof *nums); /* each placeholder's N, in text order */
    if (!nums)
        return RT_DB_NOMEM;
    size_t count = placeholders(sql, nums, NULL, 0, NULL);
    int max = 0;
    for (size_t j = 0; j < count; j++) {
        if (nums[j] < 1 || nums[j] > 65535) { /* PostgreSQL's most parameters */
            free(nums);
            return RT_DB_MISUSE;
        }
        max = nums[j] > max ? nums[j] : max;
    }
    size_t cap = n + 12 * count + 1;
    st->sql = malloc(cap);
    st->nparams = max;
    st->values = max ? calloc((size_t)max, sizeof *st->values) : NULL;
    st->used = max ? calloc((size_t)max, sizeof *st->used) : NULL;
    int *dense = calloc((size_t)max + 1, sizeof *dense); /* N -> M */
    if (!st->sql || !dense || (max && (!st->values || !st->used))) {
        free(nums);
        free(dense);
        return RT_DB_NOMEM;
    }
    for (size_t j = 0; j < count; j++)
        dense[nums[j]] = 1;
    st->nused = 0;
    for (int k = 1; k <= max; k++)
        if (dense[k]) {
            st->used[st->nused] = k;
            dense[k] = ++st->nused;
        }
    placeholders(sql, NULL, st->sql, cap, dense);
    free(nums);
    free(dense);
    return RT_DB_OK;
}

int rt_db_pg_step(rt_db_stmt *st)
{
    rt_db *db = st->db;
    if (st->done)
        return RT_DB_DONE;
    if (!db->pg)
        return not_connected(db);
    if (!st->started) {
        const char **values = st->nused ? calloc((size_t)st->nused, sizeof *values) : NULL;
        if (st->nused && !values)
            return RT_DB_NOMEM;
        st->started = true;
        for (int j = 0; j < st->nused; j++)
            values[j] = st->values[st->used[j] - 1];
        int ok = PQ->sendQueryParams(db->pg, st->sql, st->nused, NULL, values, NULL, NULL, 0);
        free(values);
        if (ok)
            PQ->setSingleRowMode(db->pg); /* at once after the send, as libpq asks */
        int rc = sent(db, ok);
        if (rc != RT_DB_OK)
            return rc;
    }
    if (st->res)
        PQ->clear(st->res);
    st->res = next_result(db);
    if (!st->res) {
        st->done = true;
        return db->pg ? RT_DB_DONE : db->code;
    }
    int s = PQ->resultStatus(st->res);
    if (s == PG_RES_SINGLE_TUPLE)
        return RT_DB_ROW;
    st->done = true;
    int rc = s == PG_RES_TUPLES_OK || s == PG_RES_COMMAND_OK || s == PG_RES_EMPTY_QUERY ? RT_DB_DONE
                                                                                          : result_error(db, st->res);
    drain(db);
    if (rc == RT_DB_DONE && !db->pg)
        rc = db->code;
    if (rc == RT_DB_DONE)
        db->code = 0;
    return rc;
}

void rt_db_pg_finalize(rt_db_stmt *st)
{
    if (st->started && !st->done && st->db->pg) /* rows left unread: read to the end */
        drain(st->db);
    if (st->res)
        PQ->clear(st->res);
    for (int i = 0; i < st->nparams && st->values; i++)
        free(st->values[i]);
    free(st->values);
    free(st->used);
    free(st->sql);
}

int rt_db_pg_column_type(rt_db_stmt *st, int i)
{
    PGresult *r = st->res;
    if (!r || i < 0 || i >= PQ->nfields(r) || PQ->ntuples(r) < 1 || PQ->getisnull(r, 0, i))
        return RT_DB_NULL;
    switch (PQ->ftype(r, i)) { /* pg_type's oids: int8, int2, int4, oid; float4, float8, numeric */
    case 20:
    case 21:
    case 23:
    case 26: return RT_DB_INTEGER;
    case 700:
    case 701:
    case 1700: return RT_DB_FLOAT;
    default: return RT_DB_TEXT;
    }
}

bool rt_db_pg_in_transaction(rt_db *db)
{
    if (!db->pg)
        return false;
    int s = PQ->transactionStatus(db->pg);
    return s == PG_TRANS_INTRANS || s == PG_TRANS_INERROR;
}
