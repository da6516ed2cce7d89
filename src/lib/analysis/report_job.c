/* report_job.c - the report page's opening for a job that ran on several nodes
 * (rt_report_info.job_view): the job, what it used over its nodes, the ask per node in the
 * three schedulers' words and the nodes that decided it, the imbalance and the notes, a row per
 * node; and which node the rest of the page is of. The sentences are the job view's own
 * (jobview_words.h), written through the page's buffer (rpt_hw, report_html.c). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jobview_words.h"
#include "report_int.h"

/* The row key: value, value as HTML text. */
static void kv(rpt_hw *w, const char *id, const char *key, const char *value)
{
    rpt_hw_lit(w, "<tr");
    if (id) {
        rpt_hw_lit(w, " id=\"");
        rpt_hw_lit(w, id);
        rpt_hw_lit(w, "\"");
    }
    rpt_hw_lit(w, "><th>");
    rpt_hw_html(w, key);
    rpt_hw_lit(w, "</th><td>");
    rpt_hw_html(w, value);
    rpt_hw_lit(w, "</td></tr>\n");
}

static void note_item(void *user, const char *text)
{
    rpt_hw *w = user;
    rpt_hw_lit(w, "<li>");
    rpt_hw_html(w, text);
    rpt_hw_lit(w, "</li>");
}

/* A sink for the text writer the words are made with: nothing is written through it. */
static long nowhere(void *user, const void *buf, size_t len)
{
    (void)user;
    (void)buf;
    return (long)len;
}

/* The job's head: its id, where it said it, nodes and runs, when and how long. */
static void head_row(rpt_hw *w, const rt_text_out *o, const rt_job_view *v)
{
    char line[512], step[80] = "", span[64];
    rpt_figure when;
    if (v->step_id)
        snprintf(step, sizeof step, ", step %s", v->step_id);
    snprintf(line, sizeof line, "%s (%s%s): %zu node%s, %zu run%s; from %s, %s", v->job_id,
             v->from ? v->from : "given", step, v->node_count, v->node_count == 1 ? "" : "s", v->runs,
             v->runs == 1 ? "" : "s", rpt_fmt_time(when, v->start_secs),
             rt_tx_dur(o, v->end_secs - v->start_secs, span, sizeof span));
    kv(w, "job-id", "Job", line);
}

/* What the job used over its nodes. */
static void used_row(rpt_hw *w, const rt_text_out *o, const rt_job_view *v)
{
    char line[256], cpu[64], energy[96] = "";
    rpt_figure j;
    if (isfinite(v->energy_joules))
        snprintf(energy, sizeof energy, "; energy %s", rpt_fmt_joules(j, v->energy_joules));
    snprintf(line, sizeof line, "%s CPU over the nodes%s", rt_tx_dur(o, v->cpu_secs, cpu, sizeof cpu), energy);
    kv(w, "job-used", "Used", line);
}

/* The ask per node: in figures, in each scheduler's words, and the nodes that decided it. */
static void ask_row(rpt_hw *w, const rt_text_out *o, const rt_job_view *v)
{
    char line[800], mem[48] = "memory unknown", gpu[32] = "";
    if (v->ask_memory_mib_per_node != RT_NULL_I64)
        snprintf(mem, sizeof mem, "%lld MiB", (long long)v->ask_memory_mib_per_node);
    if (v->ask_gpus_per_node > 0)
        snprintf(gpu, sizeof gpu, ", %lld GPU%s", (long long)v->ask_gpus_per_node, v->ask_gpus_per_node == 1 ? "" : "s");
    snprintf(line, sizeof line, "%lld node%s, %lld task%s each of %lld core%s, %s a node%s", (long long)v->ask_nodes,
             v->ask_nodes == 1 ? "" : "s", (long long)v->ask_tasks_per_node, v->ask_tasks_per_node == 1 ? "" : "s",
             (long long)v->ask_cores_per_task, v->ask_cores_per_task == 1 ? "" : "s", mem, gpu);
    rpt_hw_lit(w, "<tr id=\"job-ask\"><th>Ask per node</th><td>");
    rpt_hw_html(w, line);
    static const rt_scheduler scheds[] = {RT_SCHED_SLURM, RT_SCHED_K8S, RT_SCHED_METAFLOW};
    for (size_t i = 0; i < sizeof scheds / sizeof scheds[0]; i++) {
        size_t n = rt_job_view_ask(v, scheds[i], line, sizeof line);
        if (n == 0 || n >= sizeof line)
            continue;
        rpt_hw_lit(w, "<br>");
        rpt_hw_html(w, rt_tx_scheduler_name(scheds[i]));
        rpt_hw_lit(w, " <code>");
        rpt_hw_html(w, line);
        rpt_hw_lit(w, "</code>");
    }
    rt_jv_decided_words(o, v, line, sizeof line);
    rpt_hw_lit(w, "<br>");
    rpt_hw_html(w, line);
    rpt_hw_lit(w, "</td></tr>\n");
}

/* A row per node; the node the rest of the page is of marked. */
static void nodes_table(rpt_hw *w, const rt_text_out *o, const rt_job_view *v, const char *shown)
{
    bool gpus = false;
    for (size_t i = 0; i < v->node_count; i++)
        gpus |= isfinite(v->nodes[i].gpu_count);
    rpt_hw_lit(w, "<div class=\"wide\"><table class=\"dist\" id=\"job-nodes\">\n<tr><th style=\"text-align:left\">"
                  "node</th><th>rank</th><th>runs</th><th>ran</th><th>ended after the median</th><th>CPU</th>"
                  "<th>cores mean</th><th>cores peak</th><th>memory need</th>");
    if (gpus)
        rpt_hw_lit(w, "<th>GPUs busy</th><th>GPUs</th>");
    rpt_hw_lit(w, "<th>energy</th><th style=\"text-align:left\">ask</th><th style=\"text-align:left\">"
                  "notes</th></tr>\n");
    for (size_t i = 0; i < v->node_count; i++) {
        const rt_job_node *n = &v->nodes[i];
        char f[160], a[64];
        rpt_figure j;
        bool is_shown = shown && strcmp(shown, n->node) == 0;
        rpt_hw_lit(w, is_shown ? "<tr class=\"shown\"><th>" : "<tr><th>");
        rpt_hw_html(w, n->node);
        rpt_hw_lit(w, "</th>");
        if (n->first_rank >= 0)
            snprintf(f, sizeof f, "%lld%s", (long long)n->first_rank, n->runs > 1 ? "+" : "");
        else
            snprintf(f, sizeof f, "-");
        rpt_td(w, f);
        snprintf(f, sizeof f, "%zu", n->runs);
        rpt_td(w, f);
        rpt_td(w, rt_tx_dur(o, n->end_secs - n->start_secs, f, sizeof f));
        rpt_td(w, isfinite(n->late_secs) && n->late_secs > 0 ? rt_tx_dur(o, n->late_secs, f, sizeof f) : "-");
        rpt_td(w, rt_tx_dur(o, n->cpu_secs, f, sizeof f));
        rpt_td(w, rt_tx_number(n->cores_mean, 2, "", f, sizeof f));
        rpt_td(w, rt_tx_number(n->cores_peak, 2, "", f, sizeof f));
        rt_tx_mem(o, n->memory_need_mib, a, sizeof a);
        snprintf(f, sizeof f, "%s%s", a, n->memory_sampled ? " (sampled)" : "");
        rpt_td(w, f);
        if (gpus) {
            rpt_td(w, rt_tx_number(n->gpu_usage_mean, 2, "", f, sizeof f));
            rpt_td(w, rt_tx_number(n->gpu_count, 0, "", f, sizeof f));
        }
        rpt_td(w, isfinite(n->energy_joules) ? rpt_fmt_joules(j, n->energy_joules) : "-");
        rpt_hw_lit(w, "<td style=\"text-align:left\">");
        rpt_hw_html(w, rt_jv_node_ask(n, f, sizeof f));
        rpt_hw_lit(w, "</td><td style=\"text-align:left\">");
        const char *marks[6];
        size_t k = 0;
        if (i == v->memory_most)
            marks[k++] = "sizes the memory";
        if (n->straggler)
            marks[k++] = "straggler";
        if (n->idled)
            marks[k++] = "idled";
        if (n->gpus_idle)
            marks[k++] = "GPUs idle";
        if (is_shown)
            marks[k++] = "shown below";
        for (size_t m = 0; m < k; m++) {
            if (m)
                rpt_hw_lit(w, ", ");
            rpt_hw_html(w, marks[m]);
        }
        rpt_hw_lit(w, "</td></tr>\n");
    }
    rpt_hw_lit(w, "</table></div>\n");
}

void rpt_job_section(rpt_hw *w, const rt_report_info *in)
{
    const rt_job_view *v = in->job_view;
    if (!v || v->struct_size < sizeof *v || v->node_count == 0 || !v->nodes)
        return;
    rt_text_out o;
    if (rt_tx_open(&o, RT_OUT_CB(nowhere, NULL), NULL) < 0)
        return;
    char line[800];
    snprintf(line, sizeof line, "<section id=\"job\"><h2>The job on %zu node%s</h2>\n<table class=\"kv\">\n",
             v->node_count, v->node_count == 1 ? "" : "s");
    rpt_hw_lit(w, line);
    head_row(w, &o, v);
    used_row(w, &o, v);
    ask_row(w, &o, v);
    if (rt_jv_imbalance_words(&o, v, line, sizeof line))
        kv(w, "job-imbalance", "Imbalance", line);
    rpt_hw_lit(w, "<tr id=\"job-notes\"><th>Notes</th><td><ul>");
    if (rt_jv_notes(&o, v, note_item, w) == 0)
        rpt_hw_lit(w, "<li>none</li>");
    rpt_hw_lit(w, "</ul></td></tr>\n</table>\n");
    nodes_table(w, &o, v, in->node_shown);
    if (in->node_shown) {
        rpt_hw_lit(w, "<p class=\"note\" id=\"job-shown\">The rest of this page is of ");
        rpt_hw_html(w, in->node_shown);
        rpt_hw_lit(w, v->memory_most < v->node_count && strcmp(in->node_shown, v->nodes[v->memory_most].node) == 0
                          ? ", the node the memory ask is sized by"
                          : "");
        rpt_hw_lit(w, ": its answer, charts and tables. Each node's own report: resource-tracker report "
                      "NODE-FILE -o OUT.html.</p>\n");
    }
    rpt_hw_lit(w, "</section>\n");
}
