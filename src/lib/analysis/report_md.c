/* report_md.c - a run as GitHub-flavoured Markdown, what a CI job summary shows
 * (rt_report_write_markdown_cb): a heading, the answer (the summary text's first lines: used,
 * ask for, the efficiency against what the job was given, energy), a table of the main figures,
 * the recommendation in the schedulers' words, the notes, and Mermaid xychart-beta charts of the
 * job's cores and memory from the report's buckets. Bounded: at most chart_points points a chart, and past
 * max_bytes the charts, then the tables are left out (the answer always stays). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "../core/out.h"
#include "gpu_work_words.h"
#include "report_int.h"

#define MD_POINTS 200                     /* chart_points 0 */
#define MD_MAX_BYTES ((1u << 20) - 4096u) /* max_bytes 0: under GitHub's 1 MiB a step */
#define MD_PART_MAX (64u << 20)           /* the most one part may grow to (a bug's bound) */
#define MD_NAME_MAX 120                   /* bytes of a job name or command in the heading */

/* One part of the text (the answer, the tables, the charts), built in memory so that the bound
 * can choose what goes. */
typedef struct md_part {
    rt_buf b;
    bool nomem;
} md_part;

static void md_put(md_part *p, const char *s, size_t n)
{
    if (!p->nomem && rt_buf_append(&p->b, s, n) < 0)
        p->nomem = true;
}

static void md_lit(md_part *p, const char *s)
{
    md_put(p, s, strlen(s));
}

static void md_put_to(void *p, const char *s, size_t n)
{
    md_put(p, s, n);
}
#define md_fmt(p, ...) rt_putf(md_put_to, 1 ? (p) : (md_part *)0, __VA_ARGS__)

/* The length of the longest prefix of s within n bytes that ends on a UTF-8 character's end. */
static size_t utf8_cut(const char *s, size_t n)
{
    size_t len = strlen(s);
    if (len <= n)
        return len;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* n bytes of s as Markdown text that renders as itself: the characters Markdown, GitHub's
 * extensions (tables, strikethrough, math) and HTML give a meaning to are escaped (< > & as
 * entities, the rest with a backslash), line breaks and other control characters become
 * spaces. */
static void md_text_n(md_part *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '<')
            md_lit(p, "&lt;");
        else if (c == '>')
            md_lit(p, "&gt;");
        else if (c == '&')
            md_lit(p, "&amp;");
        else if (c < 0x20 || c == 0x7f)
            md_lit(p, " ");
        else if (strchr("\\`*_[]|$~#!", c)) {
            char e[2] = {'\\', (char)c};
            md_put(p, e, 2);
        } else
            md_put(p, (const char *)&c, 1);
    }
}

static void md_text(md_part *p, const char *s)
{
    md_text_n(p, s, strlen(s));
}

/* s as a Mermaid string's content (between double quotes): a quote, a backslash, a control
 * character or one Mermaid reads as markup (# starts an entity, % a comment, < > & HTML, ;
 * and backticks its syntax) becomes a space; at most max bytes, cut on a character's end. */
static void mermaid_label(md_part *p, const char *s, size_t max)
{
    size_t n = utf8_cut(s, max);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char o = c < 0x20 || c == 0x7f || strchr("\"\\#%<>&;`{}[]", c) ? ' ' : (char)c;
        md_put(p, &o, 1);
    }
}

/* ---- figures ----------------------------------------------------------------------------- */

static const char *mib_text(rpt_figure f, double mib)
{
    return rpt_fmt_bytes(f, mib * 1048576.0);
}

/* A figure that counts: finite. */
static bool known(double v)
{
    return isfinite(v);
}

/* ---- the answer ---------------------------------------------------------------------------- */

/* The summary text's lines, captured (rt_summary_write_text_cb hands whole lines). */
static long capture(void *user, const void *buf, size_t n)
{
    md_part *p = user;
    n = n > LONG_MAX ? LONG_MAX : n;
    md_put(p, buf, n);
    return p->nomem ? -1 : (long)n;
}

/* One line of the summary text, "Label       value", as "**Label:** value"; the scheduler's
 * words of "Ask for" ("1 core, 512 MiB: --cpus-per-task=1 --mem=512M (SLURM)") as code. */
static void answer_line(md_part *p, const char *label, const char *value)
{
    md_lit(p, "**");
    md_text(p, label);
    md_lit(p, ":** ");
    const char *colon = strstr(value, ": "), *paren = strrchr(value, '(');
    if (strcmp(label, "Ask for") == 0 && colon && paren && paren > colon + 2 && !strchr(value, '`')) {
        md_text_n(p, value, (size_t)(colon - value) + 2);
        md_lit(p, "`");
        md_put(p, colon + 2, (size_t)(paren - 1 - (colon + 2)));
        md_lit(p, "` ");
        md_text(p, paren);
    } else {
        md_text(p, value);
    }
    md_lit(p, "  \n"); /* a hard line break: the lines stay lines */
}

/* The answer's lines the summary text writes first (what the job used, what to ask for and what
 * its cores cost in time, its efficiency against what it was given, its energy and carbon, how long it ran), each as
 * answer_line; the notes are written apart. */
static rt_error answer_lines(md_part *p, const rt_summary *s, const rt_report_info *in, int scheduler)
{
    static const char *const keep[] = {"Used", "Ask for", "Time", "Efficiency", "Energy", "Carbon", "Ran"};
    md_part text = {0};
    rt_buf_init(&text.b, MD_PART_MAX);
    rt_summary_text_options to = RT_SUMMARY_TEXT_OPTIONS_INIT;
    to.scheduler = scheduler;
    to.width = INT_MAX; /* one line each: Markdown wraps */
    to.brief = 1;
    rt_run_facts facts = RT_RUN_FACTS_INIT;
    facts.job = in->job;
    facts.exit_status = in->exit_status;
    facts.cgroup_why = in->cgroup_why;
    rt_error e = rt_summary_write_text_cb(s, &facts, &to, capture, &text);
    if (e == RT_OK && !text.nomem && rt_buf_append(&text.b, "", 1) == 0) {
        for (char *line = text.b.data, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            if (strlen(line) <= 12 || line[0] == ' ')
                continue; /* the notes' lines after the first */
            char label[13];
            snprintf(label, sizeof label, "%.12s", line);
            for (size_t k = strlen(label); k > 0 && label[k - 1] == ' '; k--)
                label[k - 1] = '\0';
            for (size_t k = 0; k < RT_ARRAY_LEN(keep); k++)
                if (strcmp(label, keep[k]) == 0)
                    answer_line(p, label, line + 12);
        }
    }
    bool nomem = text.nomem || e == RT_ERR_NOMEM;
    rt_buf_free(&text.b);
    if (nomem)
        return RT_ERR_NOMEM;
    return e == RT_ERR_IO ? RT_OK : e; /* a failed capture is nomem, said above */
}

/* "### resource-tracker: NAME": the title, else the job's name, else the command, else "a run". */
static void heading(md_part *p, const rt_report_info *in)
{
    const char *name = in->title;
    if (!name && in->job && in->job->job_name)
        name = in->job->job_name;
    if (!name && in->summary && in->summary->job_name)
        name = in->summary->job_name;
    if (!name)
        name = in->command;
    md_lit(p, "### resource-tracker: ");
    if (!name || !*name) {
        md_lit(p, "a run\n\n");
        return;
    }
    size_t n = utf8_cut(name, MD_NAME_MAX);
    md_text_n(p, name, n);
    md_lit(p, n < strlen(name) ? "\xE2\x80\xA6\n\n" : "\n\n");
}

/* The notes as a list ("**Notes:** none" without one). */
static void notes_list(md_part *p, const rt_summary *s, const rt_report_info *in)
{
    rt_note notes[RT_NOTES_MAX];
    rt_notes_options no = RT_NOTES_OPTIONS_INIT;
    no.cgroup_why = in->cgroup_why;
    size_t n = rt_summary_notes(s, &no, notes, RT_NOTES_MAX);
    md_lit(p, n ? "**Notes:**\n\n" : "**Notes:** none\n\n");
    for (size_t i = 0; i < n; i++) {
        md_lit(p, "- ");
        md_text(p, notes[i].text);
        md_lit(p, "\n");
    }
    if (n)
        md_lit(p, "\n");
}

/* ---- the tables -------------------------------------------------------------------------- */

static void row(md_part *p, const char *key, const char *value)
{
    if (!value || !*value)
        return;
    md_lit(p, "| ");
    md_text(p, key);
    md_lit(p, " | ");
    md_text(p, value);
    md_lit(p, " |\n");
}

/* "a / b" of two figures into v; returns v. */
static const char *pair(char *v, size_t cap, const char *a, const char *b)
{
    snprintf(v, cap, "%s / %s", a, b);
    return v;
}

/* "2 cores (SLURM_CPUS_PER_TASK)": a requested figure and what said it; NULL when unknown. */
static const char *given_text(char *v, size_t cap, const char *figure, const char *from)
{
    if (!from)
        return NULL;
    snprintf(v, cap, "%s (%s)", figure, from);
    return v;
}

/* The main figures: the job's (or the machine's without one), what it was given, its GPUs,
 * energy, exit status and command. */
static void figures_table(md_part *p, const rt_summary *s, const rt_report_info *in)
{
    rpt_figure a, b;
    char v[256], g[96];
    md_lit(p, "| figure | value |\n| --- | --- |\n");
    row(p, "duration", rpt_fmt_duration(a, s->duration_secs));
    if (s->has_process) {
        const rt_need *m = &s->memory_need;
        double written = s->process_write_bytes - (s->process_cancelled_write_bytes > 0 ? s->process_cancelled_write_bytes : 0);
        row(p, "CPU time", rpt_fmt_duration(a, s->process_cpu_secs));
        snprintf(a, sizeof a, "%.2f", s->process_cores.mean);
        snprintf(b, sizeof b, "%.2f", s->process_cores.peak);
        row(p, "cores, mean / peak", pair(v, sizeof v, a, b));
        if (m->source != RT_NEED_UNKNOWN) {
            snprintf(v, sizeof v, "%s (%s%s)", mib_text(a, m->mib), rt_need_source_text(m->source),
                     m->sampled ? ", a lower bound" : "");
            row(p, "memory need", v);
        }
        if (known(s->process_rss_mib.peak))
            row(p, "RSS peak (the processes' summed)", mib_text(a, s->process_rss_mib.peak));
        if (known(s->process_read_bytes))
            row(p, "storage read / written",
                pair(v, sizeof v, rpt_fmt_bytes(a, s->process_read_bytes), rpt_fmt_bytes(b, written < 0 ? 0 : written)));
    } else {
        snprintf(a, sizeof a, "%.2f", s->cpu_cores.mean);
        snprintf(b, sizeof b, "%.2f", s->cpu_cores.peak);
        row(p, "machine cores busy, mean / peak (no job tracked)", pair(v, sizeof v, a, b));
        row(p, "machine memory used, peak", mib_text(a, s->memory_used_mib.peak));
        if (known(s->disk_read_bytes))
            row(p, "disks read / written",
                pair(v, sizeof v, rpt_fmt_bytes(a, s->disk_read_bytes), rpt_fmt_bytes(b, s->disk_write_bytes)));
    }
    snprintf(g, sizeof g, "%.4g core%s", s->requested_cpu_cores, s->requested_cpu_cores == 1 ? "" : "s");
    row(p, "cores given", given_text(v, sizeof v, g, s->requested_cpu_from));
    row(p, "memory given", given_text(v, sizeof v, mib_text(a, s->requested_memory_mib), s->requested_memory_from));
    snprintf(g, sizeof g, "%.4g", s->requested_gpus);
    row(p, "GPUs given", given_text(v, sizeof v, g, s->requested_gpus_from));
    row(p, "time limit", given_text(v, sizeof v, rpt_fmt_duration(a, s->time_limit_secs), s->time_limit_from));
    if (s->gpu_count > 0) {
        snprintf(a, sizeof a, "%.2f", s->has_process ? s->process_gpu_usage.mean : s->gpu_usage.mean);
        snprintf(b, sizeof b, "%.2f", s->has_process ? s->process_gpu_usage.peak : s->gpu_usage.peak);
        row(p, s->has_process ? "GPUs busy (the job's), mean / peak" : "GPUs busy, mean / peak", pair(v, sizeof v, a, b));
        double vram = s->has_process ? s->process_gpu_vram_mib.peak : s->gpu_vram_mib.peak;
        if (known(vram))
            row(p, "VRAM, peak", mib_text(a, vram));
        char work[512]; /* 0.19: what the GPUs did (SM, tensor, DRAM, ...), or utilization only */
        if (rt_gw_words(s, NULL, work, sizeof work))
            row(p, s->has_process ? "GPU work (the job's GPUs)" : "GPU work", work);
    }
    bool job = s->process_energy_method && known(s->process_energy_joules);
    if (job || (s->energy_method && known(s->energy_joules))) {
        char parts[600], e[700]; /* by part, each with its method and source; else the least exact method */
        rt_summary_energy_words(s, job, parts, sizeof parts, NULL);
        snprintf(e, sizeof e, "%s (%s)", rpt_fmt_joules(a, job ? s->process_energy_joules : s->energy_joules),
                 parts[0] ? parts : job ? s->process_energy_method : s->energy_method);
        row(p, job ? "energy (the job's)" : "energy (the machine's)", e);
    }
    if (in->exit_status >= 0)
        row(p, "exit status", rpt_fmt_exit(a, in->exit_status));
    if (in->command) {
        size_t n = utf8_cut(in->command, 400);
        snprintf(v, sizeof v, "%.*s%s", (int)(n < sizeof v - 4 ? n : sizeof v - 4), in->command,
                 n < strlen(in->command) ? "\xE2\x80\xA6" : "");
        row(p, "command", v);
    }
    md_lit(p, "\n");
}

/* The recommendation in each scheduler's words (the caller's, else this run's own), folded. */
static void recommendation(md_part *p, const rt_summary *s, const rt_report_info *in)
{
    rt_recommendation own = RT_RECOMMENDATION_INIT;
    const rt_recommendation *rec = in->recommendation;
    const rt_summary *runs[1] = {s};
    if (!rec && s->has_process && rt_recommend(runs, 1, &own) == RT_OK)
        rec = &own;
    if (!rec)
        return;
    md_lit(p, "<details><summary>Next time ask for (SLURM, Kubernetes, Metaflow)</summary>\n\n```text\n");
    static const rt_scheduler scheds[] = {RT_SCHED_SLURM, RT_SCHED_K8S, RT_SCHED_METAFLOW};
    static const char *const names[] = {"SLURM", "Kubernetes", "Metaflow"};
    for (size_t i = 0; i < RT_ARRAY_LEN(scheds); i++) {
        char line[512];
        size_t n = rt_format_recommendation(rec, scheds[i], line, sizeof line);
        if (n > 0 && n < sizeof line && !strstr(line, "```"))
            md_fmt(p, "%-11s %s", names[i], line);
    }
    char gw[180]; /* 0.19: the GPU ask, "1 GPU with >= 40 GiB (peak 33.1 GiB)" */
    if (rt_recommendation_gpu_words(rec, gw, sizeof gw) > 0)
        md_fmt(p, "%-11s %s\n", "GPUs", gw);
    md_lit(p, "```\n\n</details>\n\n");
}

/* ---- the charts ---------------------------------------------------------------------------- */

/* Whether any bucket has series k. */
static bool has_series(const rt_report *r, int k)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->b[i].c[k].weight > 0)
            return true;
    return false;
}

/* One xychart-beta of series k over the run: its buckets merged into at most points points
 * (each the time-weighted mean of the buckets it stands for; one without the figure repeats
 * the one before), on a time axis in seconds, minutes or hours since the start, y from 0. */
static void chart(md_part *p, const rt_report *r, int k, double scale, const char *title, const char *axis,
                  const char *job, size_t points, int decimals)
{
    size_t group = (r->n + points - 1) / points;
    double span = r->b[r->n - 1].t1 - r->b[0].t0, unit = 1;
    const char *uname = "seconds";
    if (span >= 7200)
        unit = 3600, uname = "hours";
    else if (span >= 120)
        unit = 60, uname = "minutes";
    double peak = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->b[i].c[k].weight > 0 && r->b[i].c[k].sum / r->b[i].c[k].weight * scale > peak)
            peak = r->b[i].c[k].sum / r->b[i].c[k].weight * scale;
    /* a wide, low chart and a line that shows on GitHub's light and dark pages alike */
    md_lit(p, "```mermaid\n%%{init: {\"xyChart\": {\"width\": 900, \"height\": 300}, \"themeVariables\": "
              "{\"xyChart\": {\"plotColorPalette\": \"#2f81f7\"}}}}%%\nxychart-beta\n    title \"");
    if (job) {
        mermaid_label(p, job, 60);
        md_lit(p, ": ");
    }
    mermaid_label(p, title, 80);
    md_fmt(p, "\"\n    x-axis \"%s since the start\" 0 --> %.4g\n    y-axis \"", uname,
           span > 0 && isfinite(span) ? span / unit : 1);
    mermaid_label(p, axis, 40);
    md_fmt(p, "\" 0 --> %.*f\n    line [", decimals, peak > 0 ? peak * 1.1 + 0.5 * pow(10, -decimals) : 1.0);
    double last = 0;
    for (size_t i = 0; i < r->n; i += group) {
        double sum = 0, weight = 0;
        for (size_t j = i; j < i + group && j < r->n; j++) {
            sum += r->b[j].c[k].sum;
            weight += r->b[j].c[k].weight;
        }
        if (weight > 0)
            last = sum / weight * scale;
        md_fmt(p, "%s%.*f", i ? ", " : "", decimals, last);
    }
    md_lit(p, "]\n```\n\n");
}

/* The job's cores, and its memory on a chart of its own (xychart has one y axis): PSS (shared
 * pages counted once, as the need counts them), else RSS (the processes' summed); the machine's
 * without a job (a job without a memory figure: no memory chart). Nothing without records. */
static void charts(md_part *p, const rt_report *r, const rt_report_info *in, size_t points)
{
    if (!r || r->n == 0)
        return;
    const char *job = in->job && in->job->job_name ? in->job->job_name
                      : in->summary && in->summary->job_name ? in->summary->job_name
                                                              : NULL;
    bool tree = has_series(r, RPT_JOB_CORES);
    md_lit(p, "<details open><summary>Over time</summary>\n\n");
    chart(p, r, tree ? RPT_JOB_CORES : RPT_CPU_CORES, 1, tree ? "CPU, the job's cores" : "CPU, the machine's busy cores",
          "cores", job, points, 2);
    int mem = has_series(r, RPT_JOB_PSS) ? RPT_JOB_PSS : has_series(r, RPT_JOB_RSS) ? RPT_JOB_RSS : RPT_MEM_USED;
    if (tree && mem == RPT_MEM_USED) {
        md_lit(p, "</details>\n\n");
        return;
    }
    double peak = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->b[i].c[mem].weight > 0)
            peak = fmax(peak, r->b[i].c[mem].max);
    bool gib = peak >= 2048;
    char title[64];
    snprintf(title, sizeof title, "memory, %s", mem == RPT_JOB_PSS ? "the job's PSS" : mem == RPT_JOB_RSS ? "the job's RSS"
                                                                                                   : "the machine's used");
    chart(p, r, mem, gib ? 1.0 / 1024 : 1, title, gib ? "GiB" : "MiB", job, points, gib || peak < 100 ? 1 : 0);
    md_lit(p, "</details>\n\n");
}

/* ---- the whole ------------------------------------------------------------------------------ */

rt_error rt_report_write_markdown_cb(const rt_report *r, const rt_report_info *info, const rt_markdown_options *opts,
                                     rt_write_fn write, void *user)
{
    rt_report_info in = RT_REPORT_INFO_INIT;
    rt_markdown_options mo = RT_MARKDOWN_OPTIONS_INIT;
    in.current_price_usd_per_hour = NAN;
    if (!write || (info && rt_struct_copy(&in, sizeof in, info) < 0) || rt_struct_copy(&mo, sizeof mo, opts) < 0)
        return RT_ERR_INVALID;
    if (mo.scheduler != RT_SCHED_METAFLOW && mo.scheduler != RT_SCHED_K8S && mo.scheduler != RT_SCHED_SLURM)
        return RT_ERR_INVALID;
    size_t points = mo.chart_points ? mo.chart_points : MD_POINTS;
    size_t max = mo.max_bytes ? mo.max_bytes : MD_MAX_BYTES;
    const rt_summary *s = in.summary && in.summary->samples > 0 ? in.summary : NULL;

    /* the answer (head: heading and lines; notes), the tables, the charts */
    md_part head = {0}, notes = {0}, tables = {0}, chart_part = {0};
    md_part *parts[] = {&head, &notes, &tables, &chart_part};
    for (size_t i = 0; i < RT_ARRAY_LEN(parts); i++)
        rt_buf_init(&parts[i]->b, MD_PART_MAX);
    rt_error e = RT_OK;
    heading(&head, &in);
    if (s) {
        e = answer_lines(&head, s, &in, mo.scheduler);
        md_lit(&head, "\n");
        notes_list(&notes, s, &in);
        figures_table(&tables, s, &in);
        recommendation(&tables, s, &in);
    } else {
        md_lit(&head, "No samples.\n\n");
    }
    charts(&chart_part, r, &in, points);
    for (size_t i = 0; i < RT_ARRAY_LEN(parts); i++)
        if (parts[i]->nomem)
            e = RT_ERR_NOMEM;

    /* what fits: the answer always; then the tables, then the charts, with a line saying what
     * was left out (its own bytes counted) */
    static const char left_out[] = "_Left out to keep this summary under %zu bytes: %s._\n\n";
    size_t answer = head.b.len + notes.b.len, note = sizeof left_out + 40;
    bool with_tables = answer + tables.b.len + chart_part.b.len <= max ||
                       answer + tables.b.len + note <= max;
    bool with_charts = with_tables && answer + tables.b.len + chart_part.b.len <= max;
    rt_out out = RT_OUT_CB(write, user);
    if (e == RT_OK) {
        char line[sizeof left_out + 64] = "";
        if (!with_charts && chart_part.b.len)
            snprintf(line, sizeof line, left_out, max, with_tables ? "the charts" : "the tables and the charts");
        else if (!with_tables && tables.b.len)
            snprintf(line, sizeof line, left_out, max, "the tables");
        struct {
            const md_part *part;
            bool on;
        } order[] = {{&head, true}, {&tables, with_tables}, {&notes, true}, {&chart_part, with_charts}};
        for (size_t i = 0; i < RT_ARRAY_LEN(order) && e == RT_OK; i++)
            if (order[i].on && order[i].part->b.len && rt_out_write(&out, order[i].part->b.data, order[i].part->b.len) < 0)
                e = RT_ERR_IO;
        if (e == RT_OK && line[0] && rt_out_write(&out, line, strlen(line)) < 0)
            e = RT_ERR_IO;
    }
    for (size_t i = 0; i < RT_ARRAY_LEN(parts); i++)
        rt_buf_free(&parts[i]->b);
    return e;
}
