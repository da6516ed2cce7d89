/* jobview.c - a job that ran on several nodes, put together from its runs' summaries
 * (rt_job_view_new): which runs are one job (rt_job_group: the same member job_id) and which
 * job the tool answers for (rt_job_pick), each node's
 * figures (its runs summed), the whole job's, the imbalance between the nodes, the nodes that
 * ended late or idled, the ask per node sized by the node that needs most (rt_job_view_ask) and
 * the run that stands for the job (rt_job_view_shown). The words for people and the JSON are
 * jobview_text.c's. */
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../core/lasterr.h"
#include "resource_tracker.h"

/* A view with its nodes' room. */
typedef struct view {
    rt_job_view v;
    rt_job_node *nodes;
} view;

/* x + y where NaN is "none" (NaN + NaN is NaN). */
static double add_known(double x, double y)
{
    return isnan(x) ? y : isnan(y) ? x : x + y;
}

/* Whether a and b say the same (both NULL, or equal strings). */
static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0; v is sorted in place). */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_node(const void *a, const void *b)
{
    const rt_job_node *x = a, *y = b;
    if (x->node_index >= 0 && y->node_index >= 0 && x->node_index != y->node_index)
        return x->node_index < y->node_index ? -1 : 1;
    if ((x->node_index >= 0) != (y->node_index >= 0))
        return x->node_index >= 0 ? -1 : 1;
    return strcmp(x->node, y->node);
}

/* The node named name among v's, made when not there yet (NULL: no room). */
static rt_job_node *node_of(view *w, size_t cap, const char *name)
{
    for (size_t i = 0; i < w->v.node_count; i++)
        if (strcmp(w->nodes[i].node, name) == 0)
            return &w->nodes[i];
    if (w->v.node_count == cap)
        return NULL;
    rt_job_node *n = &w->nodes[w->v.node_count++];
    memset(n, 0, sizeof *n);
    n->node = name;
    n->node_index = n->first_rank = -1;
    n->start_secs = n->end_secs = NAN;
    n->memory_need_mib = n->gpu_usage_mean = n->gpu_count = n->energy_joules = n->time_limit_secs = NAN;
    n->ask_memory_mib = 0;
    return n;
}

/* Adds run s (its recommendation rec), standing for tasks of the job's tasks, to node n. */
static void add_run(rt_job_node *n, const rt_summary *s, const rt_recommendation *rec, bool rec_ok, int64_t tasks)
{
    const rt_member *m = s->member;
    n->runs++;
    n->tasks += tasks;
    if (m->node_index >= 0 && n->node_index < 0)
        n->node_index = m->node_index;
    if (m->rank >= 0 && (n->first_rank < 0 || m->rank < n->first_rank))
        n->first_rank = m->rank;
    if (isnan(n->start_secs) || s->start_secs < n->start_secs)
        n->start_secs = s->start_secs;
    if (isnan(n->end_secs) || s->end_secs > n->end_secs)
        n->end_secs = s->end_secs;
    if (s->has_process) {
        n->cpu_secs += isfinite(s->process_cpu_secs) ? s->process_cpu_secs : 0;
        n->cores_peak += isfinite(s->process_cores.peak) ? s->process_cores.peak : 0;
        if (s->memory_need.source != RT_NEED_UNKNOWN && isfinite(s->memory_need.mib))
            n->memory_need_mib = add_known(n->memory_need_mib, s->memory_need.mib);
        n->memory_sampled |= s->memory_need.sampled;
        if (isfinite(s->process_gpu_usage.mean) && s->gpu_count > 0)
            n->gpu_usage_mean = add_known(n->gpu_usage_mean, s->process_gpu_usage.mean);
        if (isfinite(s->process_energy_joules))
            n->energy_joules = add_known(n->energy_joules, s->process_energy_joules);
    }
    if (s->gpu_count > 0 && !(n->gpu_count >= s->gpu_count))
        n->gpu_count = s->gpu_count;
    if (rec_ok) {
        n->ask_cores += rec->cpu;
        if (rec->cpu > n->ask_cores_task)
            n->ask_cores_task = rec->cpu;
        if (rec->memory_mib == RT_NULL_I64 || n->ask_memory_mib == RT_NULL_I64)
            n->ask_memory_mib = RT_NULL_I64;
        else
            n->ask_memory_mib += rec->memory_mib;
        n->ask_gpus += rec->gpu;
        if (isfinite(rec->time_limit_secs) && !(n->time_limit_secs >= rec->time_limit_secs))
            n->time_limit_secs = rec->time_limit_secs;
    } else {
        n->ask_memory_mib = RT_NULL_I64; /* a run with no answer (no tracked tree): the node's unknown */
    }
}

/* The figures over the nodes: medians, the most and least, stragglers, the ask. */
static void over_nodes(view *w, double *tmp)
{
    rt_job_view *v = &w->v;
    size_t nn = v->node_count;
    double first_start = NAN, last_start = NAN;
    for (size_t i = 0; i < nn; i++) {
        rt_job_node *n = &w->nodes[i];
        double dur = n->end_secs - n->start_secs;
        n->cores_mean = dur > 0 ? n->cpu_secs / dur : NAN;
        v->cpu_secs += n->cpu_secs;
        v->energy_joules = add_known(v->energy_joules, n->energy_joules);
        if (isnan(v->start_secs) || n->start_secs < v->start_secs)
            v->start_secs = n->start_secs;
        if (isnan(v->end_secs) || n->end_secs > v->end_secs)
            v->end_secs = n->end_secs;
        if (isnan(first_start) || n->start_secs < first_start)
            first_start = n->start_secs;
        if (isnan(last_start) || n->start_secs > last_start)
            last_start = n->start_secs;
        if (n->cpu_secs > w->nodes[v->cpu_most].cpu_secs)
            v->cpu_most = i;
        if (n->cpu_secs < w->nodes[v->cpu_least].cpu_secs)
            v->cpu_least = i;
        if (n->memory_need_mib > w->nodes[v->memory_most].memory_need_mib ||
            (isnan(w->nodes[v->memory_most].memory_need_mib) && !isnan(n->memory_need_mib)))
            v->memory_most = i;
        if (n->ask_cores > w->nodes[v->cores_most].ask_cores)
            v->cores_most = i;
        if (n->tasks > v->ask_tasks_per_node)
            v->ask_tasks_per_node = n->tasks;
        /* a run of the node's tasks (--per-node): its cores shared by them, rounded up */
        int64_t per_task = n->tasks > (int64_t)n->runs ? (n->ask_cores + n->tasks - 1) / n->tasks : n->ask_cores_task;
        if (per_task > v->ask_cores_per_task)
            v->ask_cores_per_task = per_task;
        if (n->ask_memory_mib == RT_NULL_I64 || v->ask_memory_mib_per_node == RT_NULL_I64)
            v->ask_memory_mib_per_node = RT_NULL_I64;
        else if (n->ask_memory_mib > v->ask_memory_mib_per_node)
            v->ask_memory_mib_per_node = n->ask_memory_mib;
        if (n->ask_gpus > v->ask_gpus_per_node)
            v->ask_gpus_per_node = n->ask_gpus;
        if (isfinite(n->time_limit_secs) && !(v->ask_time_limit_secs >= n->time_limit_secs))
            v->ask_time_limit_secs = n->time_limit_secs;
    }
    v->start_spread_secs = last_start - first_start;
    v->ask_nodes = (int64_t)nn;
    /* a node that idles (its cores' mean under half the median node's), by the medians */
    for (size_t i = 0; i < nn; i++)
        tmp[i] = w->nodes[i].cpu_secs;
    v->cpu_median_secs = median(tmp, nn);
    double most = w->nodes[v->cpu_most].cpu_secs;
    v->cpu_imbalance_pct = v->cpu_median_secs > 0 ? (most - v->cpu_median_secs) / v->cpu_median_secs * 100 : NAN;
    for (size_t i = 0; i < nn; i++)
        tmp[i] = isfinite(w->nodes[i].cores_mean) ? w->nodes[i].cores_mean : 0;
    double cores_median = median(tmp, nn);
    for (size_t i = 0; i < nn; i++)
        tmp[i] = w->nodes[i].end_secs;
    double end_median = median(tmp, nn);
    double span = v->end_secs - v->start_secs;
    for (size_t i = 0; i < nn; i++) {
        rt_job_node *n = &w->nodes[i];
        n->late_secs = n->end_secs - end_median;
        n->straggler = nn > 1 && n->late_secs > 10 && n->late_secs > 0.1 * span;
        n->idled = nn > 1 && cores_median > 0 && isfinite(n->cores_mean) && n->cores_mean < cores_median / 2;
        n->gpus_idle = n->gpu_count > 0 && !(n->gpu_usage_mean / n->gpu_count >= 0.05); /* each busy under 5% */
    }
    v->core_hours = (double)(v->ask_cores_per_task * v->ask_tasks_per_node * v->ask_nodes) * span / 3600;
}

rt_error rt_job_view_new(const rt_summary *const *runs, size_t n, rt_job_view **out)
{
    if (!out)
        return RT_ERR_INVALID;
    *out = NULL;
    if (!runs || n == 0)
        return RT_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!runs[i] || !runs[i]->member || !runs[i]->member->job_id ||
            strcmp(runs[i]->member->job_id, runs[0]->member->job_id) != 0) {
            rt_err_set("rt_job_view_new: run %zu %s", i, runs[i] && runs[i]->member && runs[i]->member->job_id
                                                            ? "names another job"
                                                            : "names no job");
            return RT_ERR_INVALID;
        }
    view *w = calloc(1, sizeof *w);
    double *tmp = calloc(n, sizeof *tmp);
    if (!w || !tmp || !(w->nodes = calloc(n, sizeof *w->nodes))) {
        free(w);
        free(tmp);
        return RT_ERR_NOMEM;
    }
    rt_job_view *v = &w->v;
    v->struct_size = sizeof *v;
    const rt_member *m0 = runs[0]->member;
    v->job_id = m0->job_id;
    v->step_id = m0->step_id;
    v->from = m0->from;
    v->runs = n;
    v->nodes_said = v->ranks_said = v->duplicate_rank = -1;
    v->start_secs = v->end_secs = v->energy_joules = v->ask_time_limit_secs = NAN;
    for (size_t i = 0; i < n; i++) {
        const rt_member *m = runs[i]->member;
        if (m->nodes > v->nodes_said)
            v->nodes_said = m->nodes;
        if (m->ranks > v->ranks_said)
            v->ranks_said = m->ranks;
    }
    for (size_t i = 0; i < n; i++) {
        const rt_member *m = runs[i]->member;
        bool node_run = m->struct_size > offsetof(rt_member, per_node) && m->per_node;
        int64_t tasks = 1; /* a --per-node run: the job's tasks over its nodes */
        if (node_run && v->ranks_said > 0 && v->nodes_said > 0)
            tasks = (v->ranks_said + v->nodes_said - 1) / v->nodes_said;
        v->per_node |= node_run;
        bool seen = false;
        for (size_t k = 0; k < i && m->rank >= 0; k++)
            if (runs[k]->member->rank == m->rank && same_text(runs[k]->member->step_id, m->step_id)) {
                seen = true;
                if (v->duplicate_rank < 0) {
                    v->duplicate_rank = m->rank;
                    v->duplicate_nodes[0] = runs[k]->member->node ? runs[k]->member->node : "?";
                    v->duplicate_nodes[1] = m->node ? m->node : "?";
                }
            }
        v->ranks_seen += m->rank >= 0 && !seen ? (size_t)tasks : 0;
        rt_job_node *nd = node_of(w, n, m->node ? m->node : "?");
        rt_recommendation rec = RT_RECOMMENDATION_INIT;
        const rt_summary *one[1] = {runs[i]};
        bool ok = runs[i]->has_process && rt_recommend(one, 1, &rec) == RT_OK;
        add_run(nd, runs[i], &rec, ok, tasks);
    }
    qsort(w->nodes, v->node_count, sizeof *w->nodes, cmp_node);
    over_nodes(w, tmp);
    v->nodes = w->nodes;
    free(tmp);
    *out = v;
    return RT_OK;
}

void rt_job_view_free(rt_job_view *v)
{
    if (!v)
        return;
    view *w = (view *)v; /* v is the view's first member */
    free(w->nodes);
    free(w);
}

/* The job run s names (its member's job_id), or NULL. */
static const char *job_of(const rt_summary *s)
{
    return s && s->member ? s->member->job_id : NULL;
}

size_t rt_job_group(const rt_summary *const *runs, size_t n, size_t *group)
{
    size_t jobs = 0;
    for (size_t i = 0; runs && group && i < n; i++) {
        const char *id = job_of(runs[i]);
        group[i] = i;
        if (!id)
            continue;
        for (size_t k = 0; k < i; k++)
            if (job_of(runs[k]) && strcmp(job_of(runs[k]), id) == 0) {
                group[i] = group[k];
                break;
            }
        jobs += group[i] == i;
    }
    return jobs;
}

size_t rt_job_pick(const rt_summary *const *runs, size_t n, int newest, size_t *idx)
{
    if (!runs || !idx || n == 0)
        return 0;
    rt_job_group(runs, n, idx);                       /* idx[i]: the first run of run i's job */
    size_t first = newest && job_of(runs[0]) ? 0 : n; /* the job's first run */
    for (size_t i = 0; !newest && i < n; i++)
        if (idx[i] != i && idx[i] < first) /* a job two runs name */
            first = idx[i];
    size_t k = 0;
    for (size_t i = 0; first < n && i < n; i++)
        if (idx[i] == first)
            idx[k++] = i; /* k <= i: the groups of the runs not yet seen are still there */
    return k;
}

size_t rt_job_view_shown(const rt_job_view *v, const rt_summary *const *runs, size_t n)
{
    if (!v || !runs || v->node_count == 0)
        return 0;
    const char *node = v->nodes[v->memory_most].node;
    size_t best = 0;
    double most = -1;
    for (size_t i = 0; i < n; i++) {
        const rt_member *m = runs[i]->member;
        const char *its = m && m->node ? m->node : "?";
        double need = runs[i]->memory_need.mib;
        if (strcmp(its, node) != 0)
            continue;
        if (most < 0 || (isfinite(need) && need > most)) {
            best = i;
            most = isfinite(need) ? need : 0;
        }
    }
    return best;
}

size_t rt_job_view_ask(const rt_job_view *v, rt_scheduler sched, char *buf, size_t cap)
{
    if (!v) {
        if (cap)
            buf[0] = '\0';
        return 0;
    }
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    rec.cpu = v->ask_cores_per_task;
    rec.memory_mib = v->ask_memory_mib_per_node;
    rec.gpu = v->ask_gpus_per_node;
    rec.time_limit_secs = v->ask_time_limit_secs;
    char one[256];
    rt_format_recommendation(&rec, sched, one, sizeof one);
    size_t k = strlen(one);
    while (k > 0 && one[k - 1] == '\n')
        one[--k] = '\0';
    int r;
    switch (sched) {
    case RT_SCHED_SLURM:
        r = snprintf(buf, cap, "--nodes=%lld --ntasks-per-node=%lld %s", (long long)v->ask_nodes,
                     (long long)v->ask_tasks_per_node, one);
        break;
    case RT_SCHED_K8S:
        r = snprintf(buf, cap, "completions: %lld, parallelism: %lld, completionMode: Indexed; each pod %s",
                     (long long)v->ask_nodes, (long long)v->ask_nodes, one);
        break;
    default: r = snprintf(buf, cap, "@parallel(num_parallel=%lld) with %s", (long long)v->ask_nodes, one); break;
    }
    return r < 0 ? 0 : (size_t)r;
}
