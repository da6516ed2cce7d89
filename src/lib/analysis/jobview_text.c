/* jobview_text.c - a job on several nodes (jobview.c's rt_job_view) in words for people
 * (rt_job_view_write_text_cb: the job, what it used, the ask per node and what decided it, a
 * line per node, what held the job up or is missing) and as one JSON object
 * (rt_format_job_view_json, docs/contracts.md section 8). */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/core.h"
#include "../core/ob.h"
#include "jobview_words.h"
#include "text_out.h"

/* ---- text ----------------------------------------------------------------------------------- */

const char *rt_jv_node_ask(const rt_job_node *n, char *b, size_t cap)
{
    char mem[48] = "memory unknown", gpu[32] = "";
    if (n->ask_memory_mib != RT_NULL_I64)
        snprintf(mem, sizeof mem, "%lld MiB", (long long)n->ask_memory_mib);
    if (n->ask_gpus > 0)
        snprintf(gpu, sizeof gpu, ", %lld GPU%s", (long long)n->ask_gpus, n->ask_gpus == 1 ? "" : "s");
    snprintf(b, cap, "%lld core%s, %s%s", (long long)n->ask_cores, n->ask_cores == 1 ? "" : "s", mem, gpu);
    return b;
}

/* The head line: the job, where it said it, its nodes and runs, when and how long. */
static void head_part(rt_text_out *o, const rt_job_view *v)
{
    char step[64] = "", when[40] = "-", span[64];
    if (v->step_id)
        snprintf(step, sizeof step, " step %s", v->step_id);
    time_t t = isfinite(v->start_secs) && fabs(v->start_secs) < 1e11 ? (time_t)v->start_secs : 0;
    struct tm tm;
    if (isfinite(v->start_secs) && gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    rt_tx_say(o, "%-12s%s (%s%s): %zu node%s, %zu run%s%s; from %s, %s\n", "Job", v->job_id,
              v->from ? v->from : "given", step, v->node_count, v->node_count == 1 ? "" : "s", v->runs,
              v->runs == 1 ? "" : "s", v->per_node ? " (a run a node: --per-node)" : "", when,
              rt_tx_dur(o, v->end_secs - v->start_secs, span, sizeof span));
}

bool rt_jv_imbalance_words(const rt_text_out *o, const rt_job_view *v, char *text, size_t cap)
{
    if (v->node_count < 2)
        return false;
    char a[64], b[64], c[64], d[64];
    const rt_job_node *most = &v->nodes[v->cpu_most], *least = &v->nodes[v->cpu_least];
    char mem_lo[64] = "-", mem_hi[64] = "-";
    double lo = NAN, hi = NAN;
    for (size_t i = 0; i < v->node_count; i++) {
        double m = v->nodes[i].memory_need_mib;
        if (isfinite(m) && !(m >= lo))
            lo = m;
        if (isfinite(m) && !(m <= hi))
            hi = m;
    }
    rt_tx_mem(o, lo, mem_lo, sizeof mem_lo);
    rt_tx_mem(o, hi, mem_hi, sizeof mem_hi);
    snprintf(text, cap,
             "CPU %s%% over the median node on the busiest: %s used %s, the median %s, the least %s (%s); memory "
             "need %s to %s a node",
             rt_tx_number(v->cpu_imbalance_pct, 0, "", b, sizeof b), most->node, rt_tx_dur(o, most->cpu_secs, a, sizeof a),
             rt_tx_dur(o, v->cpu_median_secs, c, sizeof c), least->node, rt_tx_dur(o, least->cpu_secs, d, sizeof d),
             mem_lo, mem_hi);
    return true;
}

/* What the job used over its nodes, and how unevenly. */
static void used_part(rt_text_out *o, const rt_job_view *v)
{
    char a[64], e[64], text[600], energy[96] = "";
    if (isfinite(v->energy_joules))
        snprintf(energy, sizeof energy, "; energy %s", rt_tx_joules(v->energy_joules, e, sizeof e));
    snprintf(text, sizeof text, "%s CPU over the nodes%s", rt_tx_dur(o, v->cpu_secs, a, sizeof a), energy);
    rt_tx_say(o, "%-12s", "Used");
    rt_tx_wrapped(o, 12, 12, text);
    if (!rt_jv_imbalance_words(o, v, text, sizeof text))
        return;
    rt_tx_say(o, "%-12s", "Imbalance");
    rt_tx_wrapped(o, 12, 12, text);
}

void rt_jv_decided_words(const rt_text_out *o, const rt_job_view *v, char *text, size_t cap)
{
    char a[64];
    const rt_job_node *m = &v->nodes[v->memory_most], *c = &v->nodes[v->cores_most];
    char need[64], cores[160];
    rt_tx_mem(o, m->memory_need_mib, need, sizeof need);
    bool same = true; /* every node asks the same cores: no node decided them */
    for (size_t i = 0; i < v->node_count; i++)
        same &= v->nodes[i].ask_cores == c->ask_cores;
    if (same && v->node_count > 1)
        snprintf(cores, sizeof cores, "every node asks %lld core%s", (long long)c->ask_cores, c->ask_cores == 1 ? "" : "s");
    else
        snprintf(cores, sizeof cores, "cores by %s (%lld)", c->node, (long long)c->ask_cores);
    snprintf(text, cap, "memory sized by %s (it needs %s%s), %s; %s core-hours reserved", m->node, need,
             m->memory_sampled ? ", a lower bound" : "", cores, rt_tx_number(v->core_hours, 3, "", a, sizeof a));
}

/* The ask per node in the scheduler's words, and the nodes that decided it. */
static void ask_part(rt_text_out *o, const rt_job_view *v)
{
    char words[400], mem[48] = "memory unknown", text[800], gpu[32] = "";
    rt_job_view_ask(v, o->scheduler, words, sizeof words);
    if (v->ask_memory_mib_per_node != RT_NULL_I64)
        snprintf(mem, sizeof mem, "%lld MiB", (long long)v->ask_memory_mib_per_node);
    if (v->ask_gpus_per_node > 0)
        snprintf(gpu, sizeof gpu, ", %lld GPU%s", (long long)v->ask_gpus_per_node, v->ask_gpus_per_node == 1 ? "" : "s");
    snprintf(text, sizeof text, "%lld node%s, %lld task%s each of %lld core%s, %s a node%s: %s (%s)",
             (long long)v->ask_nodes, v->ask_nodes == 1 ? "" : "s", (long long)v->ask_tasks_per_node,
             v->ask_tasks_per_node == 1 ? "" : "s", (long long)v->ask_cores_per_task,
             v->ask_cores_per_task == 1 ? "" : "s", mem, gpu, words, rt_tx_scheduler_name(o->scheduler));
    rt_tx_say(o, "%-12s", "Ask for");
    rt_tx_wrapped(o, 12, 12, text);
    rt_jv_decided_words(o, v, text, sizeof text);
    rt_tx_say(o, "%-12s", "");
    rt_tx_wrapped(o, 12, 12, text);
}

enum { NODE_COLS = 7 };

/* Node i's cells (node, rank, ran, CPU, cores mean / peak, memory need, ask) into cell[]. */
static void node_cells(rt_text_out *o, const rt_job_node *n, char cell[NODE_COLS][96])
{
    char mean[32], peak[32];
    snprintf(cell[0], 96, "%.40s", n->node);
    snprintf(cell[1], 96, "-");
    if (n->first_rank >= 0)
        snprintf(cell[1], 96, "%lld%s", (long long)n->first_rank, n->runs > 1 ? "+" : "");
    rt_tx_dur(o, n->end_secs - n->start_secs, cell[2], 96);
    rt_tx_dur(o, n->cpu_secs, cell[3], 96);
    snprintf(cell[4], 96, "%s / %s", rt_tx_number(n->cores_mean, 2, "", mean, sizeof mean),
             rt_tx_number(n->cores_peak, 2, "", peak, sizeof peak));
    rt_tx_mem(o, n->memory_need_mib, cell[5], 96);
    rt_jv_node_ask(n, cell[6], 96);
}

/* A line per node: its name, first rank, how long it ran, its CPU, cores, memory need, its
 * ask; each column as wide as its widest cell. Where the table would pass the width, each node
 * is a paragraph of its own instead ("node0 (rank 0): ran 2.07 s, ..."), broken between
 * words. */
static void nodes_part(rt_text_out *o, const rt_job_view *v)
{
    static const char *const head[NODE_COLS] = {"node", "rank", "ran", "CPU", "cores mean/pk", "memory need", "ask"};
    char cell[NODE_COLS][96];
    size_t w[NODE_COLS], total = 12;
    for (int c = 0; c < NODE_COLS; c++)
        w[c] = strlen(head[c]);
    for (size_t i = 0; i < v->node_count; i++) {
        node_cells(o, &v->nodes[i], cell);
        for (int c = 0; c < NODE_COLS; c++)
            w[c] = strlen(cell[c]) > w[c] ? strlen(cell[c]) : w[c];
    }
    for (int c = 0; c < NODE_COLS; c++)
        total += w[c] + (c + 1 < NODE_COLS ? 2 : 0);
    if (total <= o->width) {
        rt_tx_say(o, "%-12s%-*s  %*s  %-*s  %-*s  %-*s  %-*s  %s\n", "Nodes", (int)w[0], head[0], (int)w[1], head[1],
                  (int)w[2], head[2], (int)w[3], head[3], (int)w[4], head[4], (int)w[5], head[5], head[6]);
        for (size_t i = 0; i < v->node_count; i++) {
            node_cells(o, &v->nodes[i], cell);
            rt_tx_say(o, "%-12s%-*s  %*s  %-*s  %-*s  %-*s  %-*s  %s\n", "", (int)w[0], cell[0], (int)w[1], cell[1],
                      (int)w[2], cell[2], (int)w[3], cell[3], (int)w[4], cell[4], (int)w[5], cell[5], cell[6]);
        }
        return;
    }
    for (size_t i = 0; i < v->node_count; i++) {
        char text[900];
        node_cells(o, &v->nodes[i], cell);
        for (int c = 2; c < NODE_COLS; c++) /* "2.06 s", "0.44 / 0.51", "1 core, 128 MiB" kept whole */
            for (char *g = cell[c]; *g; g++)
                *g = *g == ' ' && g > cell[c] && g[-1] != ',' ? '\x1f' : *g;
        snprintf(text, sizeof text, "%s (rank %s): ran %s, CPU %s, cores %s (mean\x1f/\x1fpeak), memory need %s, ask %s",
                 cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6]);
        rt_tx_say(o, "%-12s", i ? "" : "Nodes");
        rt_tx_wrapped(o, 12, 14, text);
    }
}

size_t rt_jv_notes(const rt_text_out *o, const rt_job_view *v, void (*each)(void *user, const char *text), void *user)
{
    char text[600], a[64], b[64];
    size_t said = 0;
#define NOTE()                                                                                                         \
    do {                                                                                                               \
        each(user, text);                                                                                              \
        said++;                                                                                                        \
    } while (0)
    for (size_t i = 0; i < v->node_count; i++) {
        const rt_job_node *n = &v->nodes[i];
        if (n->straggler) {
            snprintf(text, sizeof text, "%s ended %s after the median node: a straggler (the job's end waited for it)",
                     n->node, rt_tx_dur(o, n->late_secs, a, sizeof a));
            NOTE();
        }
        if (n->idled) {
            snprintf(text, sizeof text,
                     "%s idled: its cores' mean %s, under half the median node's (it waited for the others, or had "
                     "less to do)",
                     n->node, rt_tx_number(n->cores_mean, 2, "", a, sizeof a));
            NOTE();
        }
        if (n->gpus_idle) {
            double busy = isfinite(n->gpu_usage_mean) ? n->gpu_usage_mean / n->gpu_count * 100 : 0;
            snprintf(text, sizeof text, "%s's %s GPU%s idled: each busy %s%% of the time on average", n->node,
                     rt_tx_number(n->gpu_count, 0, "", a, sizeof a), n->gpu_count == 1 ? "" : "s",
                     rt_tx_number(busy, 1, "", b, sizeof b));
            NOTE();
        }
    }
    if (v->nodes_said > 0 && (size_t)v->nodes_said > v->node_count) {
        snprintf(text, sizeof text, "%lld of %lld nodes missing: the runs say %lld nodes, %zu sent a file (the job's "
                 "figures are of those there)",
                 (long long)v->nodes_said - (long long)v->node_count, (long long)v->nodes_said,
                 (long long)v->nodes_said, v->node_count);
        NOTE();
    }
    if (v->ranks_said > 0 && (size_t)v->ranks_said > v->ranks_seen && v->ranks_seen > 0) {
        snprintf(text, sizeof text, "%lld of %lld ranks missing (%zu seen)",
                 (long long)v->ranks_said - (long long)v->ranks_seen, (long long)v->ranks_said, v->ranks_seen);
        NOTE();
    }
    if (v->duplicate_rank >= 0) {
        snprintf(text, sizeof text, "rank %lld claimed twice, by %s and %s: both runs counted", (long long)v->duplicate_rank,
                 v->duplicate_nodes[0], v->duplicate_nodes[1]);
        NOTE();
    }
    if (v->node_count > 1 && v->start_spread_secs > 2) {
        snprintf(text, sizeof text,
                 "the nodes started %s apart (their launch, or their clocks: each node's figures are by its own clock)",
                 rt_tx_dur(o, v->start_spread_secs, a, sizeof a));
        NOTE();
    }
#undef NOTE
    return said;
}

typedef struct note_line {
    rt_text_out *o;
    size_t n;
} note_line;

static void note_said(void *user, const char *text)
{
    note_line *l = user;
    rt_tx_say(l->o, "%-12s- ", l->n++ == 0 ? "Notes" : "");
    rt_tx_wrapped(l->o, 14, 14, text);
}

/* The notes: stragglers, idle nodes and GPUs, nodes missing, a rank twice, starts apart. */
static void notes_part(rt_text_out *o, const rt_job_view *v)
{
    note_line l = {.o = o};
    if (rt_jv_notes(o, v, note_said, &l) == 0)
        rt_tx_say(o, "%-12snone\n", "Notes");
}


rt_error rt_job_view_write_text_cb(const rt_job_view *v, const rt_summary_text_options *opts, rt_write_fn write,
                                   void *user)
{
    rt_text_out o;
    if (!v || !write || v->node_count == 0 || rt_tx_open(&o, RT_OUT_CB(write, user), opts) < 0)
        return RT_ERR_INVALID;
    static void (*const parts[])(rt_text_out *, const rt_job_view *) = {head_part, used_part, ask_part, nodes_part,
                                                                         notes_part}; /* in the text's order */
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        parts[i](&o, v);
    rt_tx_flush(&o);
    return o.err;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* A node's members, in order (docs/contracts.md's job view JSON). */
static const rt_obm node_members[] = {
    RT_OBM(rt_job_node, "node", node, 0),
    RT_OBM(rt_job_node, "runs", runs, 0),
    RT_OBM(rt_job_node, "node_index", node_index, 0),
    RT_OBM(rt_job_node, "first_rank", first_rank, 0),
    RT_OBM(rt_job_node, "start_secs", start_secs, 3),
    RT_OBM(rt_job_node, "end_secs", end_secs, 3),
    RT_OBM(rt_job_node, "cpu_secs", cpu_secs, 3),
    RT_OBM(rt_job_node, "cores_mean", cores_mean, 4),
    RT_OBM(rt_job_node, "cores_peak", cores_peak, 4),
    RT_OBM(rt_job_node, "memory_need_mib", memory_need_mib, 3),
    RT_OBM(rt_job_node, "memory_sampled", memory_sampled, 0),
    RT_OBM(rt_job_node, "gpu_usage_mean", gpu_usage_mean, 4),
    RT_OBM(rt_job_node, "gpu_count", gpu_count, 0),
    RT_OBM(rt_job_node, "energy_joules", energy_joules, 3),
    RT_OBM(rt_job_node, "ask_cores", ask_cores, 0),
    RT_OBM(rt_job_node, "ask_memory_mib", ask_memory_mib, 0),
    RT_OBM(rt_job_node, "ask_gpus", ask_gpus, 0),
    RT_OBM(rt_job_node, "time_limit_secs", time_limit_secs, 0),
    RT_OBM(rt_job_node, "late_secs", late_secs, 3),
    RT_OBM(rt_job_node, "straggler", straggler, 0),
    RT_OBM(rt_job_node, "idled", idled, 0),
    RT_OBM(rt_job_node, "gpus_idle", gpus_idle, 0),
    RT_OBM(rt_job_node, "tasks", tasks, 0),
};

/* The view's own members up to its nodes by role, in order. */
static const rt_obm view_members[] = {
    RT_OBM(rt_job_view, "job_id", job_id, 0),
    RT_OBM(rt_job_view, "step_id", step_id, 0),
    RT_OBM(rt_job_view, "from", from, 0),
    RT_OBM(rt_job_view, "run_count", runs, 0),
    RT_OBM(rt_job_view, "node_count", node_count, 0),
    RT_OBM(rt_job_view, "nodes_said", nodes_said, 0),
    RT_OBM(rt_job_view, "ranks_said", ranks_said, 0),
    RT_OBM(rt_job_view, "ranks_seen", ranks_seen, 0),
    RT_OBM(rt_job_view, "duplicate_rank", duplicate_rank, 0),
    RT_OBM(rt_job_view, "per_node", per_node, 0),
    RT_OBM(rt_job_view, "start_secs", start_secs, 3),
    RT_OBM(rt_job_view, "end_secs", end_secs, 3),
    RT_OBM(rt_job_view, "start_spread_secs", start_spread_secs, 3),
    RT_OBM(rt_job_view, "cpu_secs", cpu_secs, 3),
    RT_OBM(rt_job_view, "core_hours", core_hours, 4),
    RT_OBM(rt_job_view, "energy_joules", energy_joules, 3),
    RT_OBM(rt_job_view, "cpu_median_secs", cpu_median_secs, 3),
    RT_OBM(rt_job_view, "cpu_imbalance_pct", cpu_imbalance_pct, 2),
};

/* The "ask" object's members but its SLURM line. */
static const rt_obm ask_members[] = {
    RT_OBM(rt_job_view, "nodes", ask_nodes, 0),
    RT_OBM(rt_job_view, "tasks_per_node", ask_tasks_per_node, 0),
    RT_OBM(rt_job_view, "cores_per_task", ask_cores_per_task, 0),
    RT_OBM(rt_job_view, "memory_mib_per_node", ask_memory_mib_per_node, 0),
    RT_OBM(rt_job_view, "gpus_per_node", ask_gpus_per_node, 0),
    RT_OBM(rt_job_view, "time_limit_secs", ask_time_limit_secs, 0),
};

rt_error rt_format_job_view_json(const rt_job_view *v, char *buf, size_t cap, size_t *len)
{
    if (!v || (!buf && cap) || v->node_count == 0)
        return RT_ERR_INVALID;
    rt_ob ob = {.buf = buf, .cap = cap}, *o = &ob;
    rt_ob_put(o, "{", 1);
    rt_ob_members(o, v, view_members, RT_OBM_N(view_members));
    rt_ob_member_str(o, "cpu_most", v->nodes[v->cpu_most].node);
    rt_ob_member_str(o, "cpu_least", v->nodes[v->cpu_least].node);
    rt_ob_member_str(o, "memory_most", v->nodes[v->memory_most].node);
    rt_ob_member_str(o, "cores_most", v->nodes[v->cores_most].node);
    rt_ob_lit(o, "\"ask\":{");
    rt_ob_members(o, v, ask_members, RT_OBM_N(ask_members));
    char slurm[400];
    rt_job_view_ask(v, RT_SCHED_SLURM, slurm, sizeof slurm);
    rt_ob_member_str(o, "slurm", slurm);
    rt_ob_close(o, '}');
    rt_ob_put(o, ",", 1);
    rt_ob_lit(o, "\"nodes\":[");
    for (size_t i = 0; i < v->node_count; i++) {
        rt_ob_put(o, "{", 1);
        rt_ob_members(o, &v->nodes[i], node_members, RT_OBM_N(node_members));
        rt_ob_close(o, '}');
        rt_ob_put(o, ",", 1);
    }
    rt_ob_close(o, ']');
    rt_ob_put(o, "}", 1);
    if (len)
        *len = ob.len;
    if (cap)
        buf[ob.len < cap ? ob.len : cap - 1] = '\0';
    return RT_OK;
}
