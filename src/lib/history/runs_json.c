/* runs_json.c - the JSON text columns of a history's row read back (history.h's reader): a run's
 * table under other core counts ("cores"), its phases' names and tables ("phases") and its place
 * in a job of several nodes ("member"), as the summary's JSON wrote them; and the pool of strings
 * a reader gathers before it builds its block. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/cores.h"
#include "history/runs_json.h"

size_t history_pool_put(history_pool *p, const char *t)
{
    if (!t)
        return 0;
    size_t n = strlen(t) + 1;
    if (p->len + n > p->cap) {
        size_t c = (p->cap ? p->cap * 2 : 256) + n;
        char *q = realloc(p->text, c);
        if (!q) {
            p->oom = true;
            return 0;
        }
        p->text = q;
        p->cap = c;
    }
    memcpy(p->text + p->len, t, n);
    p->len += n;
    return p->len - n + 1;
}

void history_member_parse(const char *text, rt_member *m, size_t off[4], history_pool *p)
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
        off[i] = history_pool_put(p, json_string_value(json_object_get(o, keys[i])));
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
        r->core_hours = rt_core_hours((int64_t)c, r->duration_secs);
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
                                .wait_from = !from                        ? NULL
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

void history_cores_parse(const char *text, history_cores *h)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    history_cores_of(o, h);
    json_decref(o);
}

void history_phase_clear(rt_phase_summary *p)
{
    memset(p, 0, sizeof *p);
    double *d[] = {&p->first_start_secs, &p->duration_secs,     &p->call_min_secs,     &p->call_max_secs,
                   &p->call_mean_secs,   &p->cpu_secs,          &p->cores_mean,        &p->cores_peak,
                   &p->rss_peak_mib,     &p->pss_peak_mib,      &p->memory_peak_mib,   &p->gpu_usage_mean,
                   &p->gpu_usage_peak,   &p->gpu_vram_mean_mib, &p->gpu_vram_peak_mib, &p->read_bytes,
                   &p->write_bytes};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = NAN;
    p->memory_need.mib = NAN;
}

void history_phases_free(history_phases *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->names[i]);
        free(h->tabs[i].rows);
    }
    free(h->names);
    free(h->tabs);
    memset(h, 0, sizeof *h);
}

void history_phases_parse(const char *text, history_phases *h)
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
