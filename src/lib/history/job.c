/* job.c - the runs of a history that `recommend --job NAME` answers from (rt_history_job_runs,
 * history.h): the last runs of the job (rt_history_runs), and when the newest is a node of a job
 * of several, as many rows as that job had runs, so that its view has every node; and what an
 * answer from them is based on (rt_history_basis_of: runs, hosts, users), and which of them ran
 * the newest run's command line (rt_history_same_command). The tool and the Python package read
 * them here. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resource_tracker.h"

#define MOST_ROWS 4096 /* the rows read at most for a job of several nodes */

/* How many of runs[0..n) lead with the job id. */
static size_t leading(const rt_summary *runs, size_t n, const char *id)
{
    size_t k = 0;
    while (k < n && runs[k].member && runs[k].member->job_id && strcmp(runs[k].member->job_id, id) == 0)
        k++;
    return k;
}

int rt_history_job_runs(const char *target, const char *job, long last, int whole_job, rt_summary **runs, size_t *n,
                        rt_history_who **who, char *err, size_t cap)
{
    int rc = rt_history_runs(target, job, last, runs, n, who, err, cap);
    if (rc != RT_DB_OK || !whole_job || last <= 0 || *n == 0 || !(*runs)[0].member || !(*runs)[0].member->job_id)
        return rc;
    /* the newest run is a node of a job of several: read as many rows as the job had runs (its
     * tasks or nodes, and every step of it: rows are read, twice as many each time, until one of
     * another job or the history's first), at least as many as before */
    const rt_member *m = (*runs)[0].member;
    int64_t want = m->ranks > m->nodes ? m->ranks : m->nodes;
    size_t keep = want > (int64_t)*n && want <= MOST_ROWS ? (size_t)want : *n; /* what was read before */
    for (long lim = want > last ? (long)want : last; lim <= MOST_ROWS; lim *= 2) {
        rt_summary *more = NULL;
        rt_history_who *wmore = NULL;
        size_t nmore = 0;
        char why[8];
        if (rt_history_runs(target, job, lim, &more, &nmore, who ? &wmore : NULL, why, sizeof why) != RT_DB_OK ||
            nmore == 0) {
            rt_history_free(more); /* what was read first stands */
            break;
        }
        size_t lead = leading(more, nmore, m->job_id);
        if (lead < nmore || nmore < (size_t)lim) { /* the job's first row is in */
            rt_history_free(*runs);                /* who with it */
            *runs = more;
            if (who)
                *who = wmore;
            *n = lead > keep ? lead : keep < nmore ? keep : nmore;
            break;
        }
        rt_history_free(more); /* wmore with it */
    }
    return RT_DB_OK;
}

/* Whether s is among v[0..n) (NULL never is). */
static int seen(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(v[i], s) == 0)
            return 1;
    return 0;
}

rt_error rt_history_basis_of(const rt_history_who *who, const size_t *idx, size_t n, rt_history_basis *out)
{
    if (!out || (!who && n))
        return RT_ERR_INVALID;
    memset(out, 0, sizeof *out);
    out->runs = n;
    const char **hosts = calloc(n ? n : 1, sizeof *hosts), **users = calloc(n ? n : 1, sizeof *users);
    if (!hosts || !users) {
        free(hosts);
        free(users);
        return RT_ERR_NOMEM;
    }
    for (size_t k = 0; k < n; k++) {
        const rt_history_who *w = &who[idx ? idx[k] : k];
        if (w->host && !seen(hosts, out->hosts, w->host))
            hosts[out->hosts++] = w->host;
        if (!w->user)
            out->runs_without_user++;
        else if (!seen(users, out->users, w->user))
            users[out->users++] = w->user;
    }
    free(hosts);
    free(users);
    return RT_OK;
}

size_t rt_history_same_command(const rt_history_who *who, size_t n, size_t *idx)
{
    if (!who || !idx || n == 0)
        return 0;
    const char *newest = who[0].command;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = who[i].command;
        if ((!c && !newest) || (c && newest && strcmp(c, newest) == 0))
            idx[k++] = i;
    }
    return k;
}
