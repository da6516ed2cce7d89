/* test_jobview.c - a job on several nodes put together (rt_job_view_new): each node's figures
 * are its runs' summed, the job's the nodes' summed, the ask per node the largest node's, the
 * node that decided it named; stragglers, idle nodes, a missing node, a rank claimed twice; runs
 * of another job refused; the text, the JSON and the report page say what the view holds. */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "resource_tracker.h"
#include "blank_record.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* One node's run: secs one-second records from t0 in which the tree used cores cores and held
 * pss MiB, as rank of the job "J" on node name. */
typedef struct run {
    rt_stats *st;
    rt_member m;
} run;

static const rt_summary *make_gpu(run *r, const char *job, const char *node, int64_t rank, int64_t nodes, double t0,
                                  int secs, double cores, double pss, double gpus, double gpu_busy)
{
    r->st = rt_stats_new();
    assert_non_null(r->st);
    rt_member m = RT_MEMBER_INIT;
    m.job_id = job;
    m.node = node;
    m.rank = rank;
    m.nodes = nodes;
    m.ranks = nodes;
    m.node_index = rank;
    m.step_id = "0";
    m.from = "slurm";
    r->m = m;
    for (int i = 0; i < secs; i++) {
        rt_record rec = blank_record(t0 + i + 1, 1);
        rec.process_pid = 42;
        rec.process_cores = cores;
        rec.process_cpu_secs = cores;
        rec.process_pss_mib = pss;
        rec.process_rss_mib = pss;
        rec.cpu_count = 8;
        if (gpus > 0) { /* gpu_busy GPUs busy of gpus on the node, all of it the tree's */
            rec.gpu_count = gpus;
            rec.gpu_usage = gpu_busy;
            rec.process_gpu_usage = gpu_busy;
            rec.gpu_vram_total_mib = 16384 * gpus;
            rec.gpu_vram_mib = rec.process_gpu_vram_mib = 1000;
        }
        rec.member = &r->m;
        rt_stats_add(r->st, &rec);
    }
    return rt_stats_summary(r->st);
}

/* text with each line break and the indent after it made one space (the answer's lines wrap). */
static void unwrap(char *text)
{
    char *w = text;
    for (const char *p = text; *p;) {
        if (*p == '\n' && p[1] == ' ') {
            *w++ = ' ';
            while (*++p == ' ')
                ;
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
}

static const rt_summary *make(run *r, const char *job, const char *node, int64_t rank, int64_t nodes, double t0,
                              int secs, double cores, double pss)
{
    return make_gpu(r, job, node, rank, nodes, t0, secs, cores, pss, 0, 0);
}

static long collect(void *user, const void *buf, size_t len)
{
    char *out = user;
    size_t have = strlen(out);
    if (have + len >= 8192)
        return -1;
    memcpy(out + have, buf, len);
    out[have + len] = '\0';
    return (long)len;
}

/* Three nodes: the third does twice the work and needs the most memory, and ends late. */
static void three_nodes(void **state)
{
    (void)state;
    run r[3];
    const rt_summary *s[3] = {
        make(&r[0], "J", "n1", 0, 3, 1000, 20, 1.0, 100),
        make(&r[1], "J", "n2", 1, 3, 1000, 20, 1.0, 200),
        make(&r[2], "J", "n3", 2, 3, 1000, 60, 1.9, 900),
    };
    assert_string_equal(s[2]->member->node, "n3"); /* the summary carries the record's member */
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(s, 3, &v), RT_OK);
    assert_string_equal(v->job_id, "J");
    assert_int_equal(v->node_count, 3);
    assert_int_equal(v->runs, 3);
    assert_near(v->cpu_secs, 20 + 20 + 114, 1e-6);
    assert_near(v->cpu_median_secs, 20, 1e-9);
    assert_string_equal(v->nodes[v->cpu_most].node, "n3");
    assert_near(v->cpu_imbalance_pct, (114.0 - 20) / 20 * 100, 1e-6);
    assert_string_equal(v->nodes[v->memory_most].node, "n3");
    /* each node's ask is its own run's; the job's per node the largest: n3's */
    for (size_t i = 0; i < 3; i++) {
        rt_recommendation rec = RT_RECOMMENDATION_INIT;
        const rt_summary *one[1] = {s[i]};
        assert_int_equal(rt_recommend(one, 1, &rec), RT_OK);
        assert_string_equal(v->nodes[i].node, s[i]->member->node);
        assert_int_equal(v->nodes[i].ask_cores, rec.cpu);
        assert_int_equal(v->nodes[i].ask_memory_mib, rec.memory_mib);
        assert_near(v->nodes[i].memory_need_mib, s[i]->memory_need.mib, 1e-9);
    }
    assert_int_equal(v->ask_memory_mib_per_node, v->nodes[2].ask_memory_mib);
    assert_int_equal(v->ask_cores_per_task, v->nodes[2].ask_cores);
    assert_int_equal(v->ask_nodes, 3);
    assert_int_equal(v->ask_tasks_per_node, 1);
    assert_true(v->nodes[2].straggler); /* 40 s after the median node's end */
    assert_near(v->nodes[2].late_secs, 40, 1e-9);
    assert_false(v->nodes[0].straggler);
    assert_false(v->nodes[0].idled); /* 1 core against the median's 1: not under half */
    assert_int_equal(v->duplicate_rank, -1);
    char ask[400];
    rt_job_view_ask(v, RT_SCHED_SLURM, ask, sizeof ask);
    char want[64];
    snprintf(want, sizeof want, "--nodes=3 --ntasks-per-node=1 --cpus-per-task=%lld --mem=%lldM",
             (long long)v->ask_cores_per_task, (long long)v->ask_memory_mib_per_node);
    if (strncmp(ask, want, strlen(want)) != 0)
        fail_msg("ask '%s', want it to begin '%s'", ask, want);
    /* the text names the node that decided the memory and the straggler */
    char text[8192] = "";
    assert_int_equal(rt_job_view_write_text_cb(v, NULL, collect, text), RT_OK);
    unwrap(text);
    assert_non_null(strstr(text, "memory sized by n3"));
    assert_non_null(strstr(text, "n3 ended 40.00 s after the median node"));
    assert_non_null(strstr(text, want));
    /* the JSON parses and holds the same */
    size_t n = 0;
    assert_int_equal(rt_format_job_view_json(v, NULL, 0, &n), RT_OK);
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    assert_int_equal(rt_format_job_view_json(v, buf, n + 1, &n), RT_OK);
    json_error_t err;
    json_t *j = json_loads(buf, 0, &err);
    if (!j)
        fail_msg("%s: %s", err.text, buf);
    assert_string_equal(json_string_value(json_object_get(j, "memory_most")), "n3");
    assert_int_equal(json_array_size(json_object_get(j, "nodes")), 3);
    json_t *a = json_object_get(j, "ask");
    assert_int_equal(json_integer_value(json_object_get(a, "memory_mib_per_node")), v->ask_memory_mib_per_node);
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "nodes"), 2), "straggler")));
    json_decref(j);
    free(buf);
    rt_job_view_free(v);
    for (size_t i = 0; i < 3; i++)
        rt_stats_free(r[i].st);
}

/* Two tasks on one node sum as the node's; a node missing and a rank twice are said; a node
 * that did far less idled. */
static void tasks_missing_and_twice(void **state)
{
    (void)state;
    run r[4];
    const rt_summary *s[4] = {
        make(&r[0], "J", "a", 0, 4, 1000, 30, 1.0, 100),
        make(&r[1], "J", "a", 1, 4, 1000, 30, 1.0, 100),
        make(&r[2], "J", "b", 1, 4, 1000, 30, 0.2, 50), /* rank 1 again, on b */
        make(&r[3], "J", "c", 3, 4, 1000, 30, 1.0, 100),
    };
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(s, 4, &v), RT_OK);
    assert_int_equal(v->node_count, 3);
    assert_int_equal(v->nodes[0].runs, 2);
    assert_near(v->nodes[0].cpu_secs, 60, 1e-9);
    assert_near(v->nodes[0].memory_need_mib, s[0]->memory_need.mib + s[1]->memory_need.mib, 1e-9);
    assert_int_equal(v->ask_tasks_per_node, 2);
    assert_int_equal(v->duplicate_rank, 1);
    assert_string_equal(v->duplicate_nodes[0], "a");
    assert_string_equal(v->duplicate_nodes[1], "b");
    assert_int_equal(v->nodes_said, 4);
    assert_int_equal(v->ranks_seen, 3);
    assert_true(v->nodes[1].idled); /* b: 0.2 cores against the median 1 */
    char text[8192] = "";
    assert_int_equal(rt_job_view_write_text_cb(v, NULL, collect, text), RT_OK);
    unwrap(text);
    assert_non_null(strstr(text, "1 of 4 nodes missing"));
    assert_non_null(strstr(text, "rank 1 claimed twice, by a and b"));
    assert_non_null(strstr(text, "b idled"));
    rt_job_view_free(v);
    for (size_t i = 0; i < 4; i++)
        rt_stats_free(r[i].st);
}

/* A node whose GPUs stayed idle is named; one that kept its GPUs busy is not. */
static void gpus_idle(void **state)
{
    (void)state;
    run r[2];
    const rt_summary *s[2] = {make_gpu(&r[0], "J", "g1", 0, 2, 1000, 20, 1, 100, 2, 1.6),
                              make_gpu(&r[1], "J", "g2", 1, 2, 1000, 20, 1, 100, 2, 0)};
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(s, 2, &v), RT_OK);
    assert_false(v->nodes[0].gpus_idle);
    assert_near(v->nodes[0].gpu_usage_mean, 1.6, 1e-9);
    assert_true(v->nodes[1].gpus_idle);
    assert_near(v->nodes[1].gpu_count, 2, 0);
    char text[8192] = "";
    assert_int_equal(rt_job_view_write_text_cb(v, NULL, collect, text), RT_OK);
    unwrap(text);
    assert_non_null(strstr(text, "g2's 2 GPUs idled: each busy 0.0% of the time"));
    assert_null(strstr(text, "g1's"));
    rt_job_view_free(v);
    for (size_t i = 0; i < 2; i++)
        rt_stats_free(r[i].st);
}

/* Runs of two jobs, or a run of none, are never put together. */
static void other_jobs_refused(void **state)
{
    (void)state;
    run r[2];
    const rt_summary *s[2] = {make(&r[0], "J", "a", 0, 2, 1000, 5, 1, 10), make(&r[1], "K", "b", 1, 2, 1000, 5, 1, 10)};
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(s, 2, &v), RT_ERR_INVALID);
    assert_null(v);
    assert_non_null(strstr(rt_last_error_message(), "another job"));
    rt_stats *plain = rt_stats_new();
    rt_record rec = blank_record(1, 1);
    rt_stats_add(plain, &rec);
    const rt_summary *t[2] = {s[0], rt_stats_summary(plain)};
    assert_null(t[1]->member);
    assert_int_equal(rt_job_view_new(t, 2, &v), RT_ERR_INVALID);
    assert_int_equal(rt_job_view_new(t, 0, &v), RT_ERR_INVALID);
    rt_stats_free(plain);
    for (size_t i = 0; i < 2; i++)
        rt_stats_free(r[i].st);
}

/* Which runs are one job (rt_job_group): runs of J, K, none and J again, each at its job's first
 * run, and which job is answered for (rt_job_pick); the run a view of J shows
 * (rt_job_view_shown) is the one that needs the most memory. */
static void runs_grouped(void **state)
{
    (void)state;
    run r[4];
    rt_stats *plain = rt_stats_new();
    rt_record rec = blank_record(1, 1);
    rt_stats_add(plain, &rec);
    const rt_summary *s[5] = {make(&r[0], "J", "a", 0, 2, 1000, 5, 1, 10), make(&r[1], "K", "b", 0, 2, 1000, 5, 1, 10),
                              rt_stats_summary(plain), make(&r[2], "J", "b", 1, 2, 1000, 5, 1, 90),
                              make(&r[3], "K", "a", 1, 2, 1000, 5, 1, 10)};
    size_t group[5];
    assert_int_equal(rt_job_group(s, 5, group), 2);
    size_t want[5] = {0, 1, 2, 0, 1};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(group[i], want[i]);
    assert_int_equal(rt_job_group(s, 3, group), 2); /* J and K once each: still two jobs named */
    assert_int_equal(rt_job_group(NULL, 5, group), 0);
    /* the job answered for (rt_job_pick): of files, the first job two runs name (J: 0, 3); of a
     * history, newest first, the newest run's (K: 1, 4; none when it names none) */
    size_t idx[5];
    assert_int_equal(rt_job_pick(s, 5, 0, idx), 2);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 3);
    assert_int_equal(rt_job_pick(s + 1, 4, 1, idx), 2);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 3);
    assert_int_equal(rt_job_pick(s + 2, 3, 1, idx), 0); /* the newest names no job */
    assert_int_equal(rt_job_pick(s + 2, 3, 0, idx), 0); /* J and K once each */
    assert_int_equal(rt_job_pick(s + 3, 2, 1, idx), 1); /* J once: the newest's job, alone */
    assert_int_equal(rt_job_pick(NULL, 5, 0, idx), 0);
    const rt_summary *j[2] = {s[0], s[3]};
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(j, 2, &v), RT_OK);
    assert_int_equal(rt_job_view_shown(v, j, 2), 1); /* node b's run needs 90 MiB, a's 10 */
    assert_int_equal(rt_job_view_shown(NULL, j, 2), 0);
    rt_job_view_free(v);
    rt_stats_free(plain);
    for (size_t i = 0; i < 4; i++)
        rt_stats_free(r[i].st);
}

/* Runs of the node's tasks (--per-node): two nodes of a job of four tasks, one run a node, each
 * standing for two tasks: no rank missing, two tasks a node asked, each its share of the node's
 * cores; the text and the JSON say so. */
static void per_node_runs(void **state)
{
    (void)state;
    run r[2];
    const rt_summary *s[2];
    for (int i = 0; i < 2; i++) {
        r[i].st = rt_stats_new();
        assert_non_null(r[i].st);
        rt_member m = RT_MEMBER_INIT;
        m.job_id = "P";
        m.node = i ? "p2" : "p1";
        m.rank = 2 * i;
        m.local_rank = 0;
        m.ranks = 4;
        m.nodes = 2;
        m.node_index = i;
        m.from = "slurm";
        m.per_node = 1;
        r[i].m = m;
        for (int k = 0; k < 30; k++) { /* the node's two tasks: 3.4 cores, asked 4: 2 a task */
            rt_record rec = blank_record(1000 + k + 1, 1);
            rec.process_pid = 42;
            rec.process_cores = rec.process_cpu_secs = 3.4;
            rec.process_pss_mib = rec.process_rss_mib = 100;
            rec.cpu_count = 8;
            rec.member = &r[i].m;
            rt_stats_add(r[i].st, &rec);
        }
        s[i] = rt_stats_summary(r[i].st);
        assert_true(s[i]->member->per_node);
    }
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(s, 2, &v), RT_OK);
    assert_true(v->per_node);
    assert_int_equal(v->ranks_said, 4);
    assert_int_equal(v->ranks_seen, 4);
    assert_int_equal(v->nodes[0].runs, 1);
    assert_int_equal(v->nodes[0].tasks, 2);
    assert_int_equal(v->ask_tasks_per_node, 2);
    assert_int_equal(v->ask_cores_per_task, (v->nodes[0].ask_cores + 1) / 2);
    assert_true(v->nodes[0].ask_cores >= 4);
    char text[8192] = "";
    assert_int_equal(rt_job_view_write_text_cb(v, NULL, collect, text), RT_OK);
    unwrap(text);
    assert_non_null(strstr(text, "2 nodes, 2 runs (a run a node: --per-node)"));
    assert_null(strstr(text, "ranks missing"));
    char words[400];
    rt_job_view_ask(v, RT_SCHED_SLURM, words, sizeof words);
    assert_non_null(strstr(words, "--nodes=2 --ntasks-per-node=2 "));
    char buf[16384];
    size_t len = 0;
    assert_int_equal(rt_format_job_view_json(v, buf, sizeof buf, &len), RT_OK);
    json_t *o = json_loads(buf, 0, NULL);
    assert_non_null(o);
    assert_true(json_is_true(json_object_get(o, "per_node")));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(o, "nodes"), 1), "tasks")), 2);
    json_decref(o);
    rt_job_view_free(v);
    for (int i = 0; i < 2; i++)
        rt_stats_free(r[i].st);
}

/* Collects a report page of any size. */
typedef struct page {
    char *p;
    size_t n;
} page;

static long collect_page(void *user, const void *buf, size_t len)
{
    page *g = user;
    char *t = realloc(g->p, g->n + len + 1);
    if (!t)
        return -1;
    memcpy(t + g->n, buf, len);
    g->n += len;
    t[g->n] = '\0';
    g->p = t;
    return (long)len;
}

static char *report_page(const rt_report_info *info)
{
    rt_report *rep = NULL;
    assert_int_equal(rt_report_new_with(NULL, &rep), RT_OK);
    page g = {0};
    assert_int_equal(rt_report_write_cb(rep, info, collect_page, &g), RT_OK);
    rt_report_free(rep);
    return g.p;
}

/* The report page of a job's nodes: the job's section before the answer (a row per node, the one
 * shown below marked, a node's name escaped), the ask per node in the three schedulers' words;
 * none without a view, nor for a caller compiled before 0.18. */
static void report_section(void **state)
{
    (void)state;
    run r[2];
    const rt_summary *s[2] = {
        make(&r[0], "J", "n<1>", 0, 2, 1000, 20, 1.0, 100),
        make(&r[1], "J", "n2", 1, 2, 1000, 20, 1.0, 900),
    };
    rt_job_view *v = NULL;
    assert_int_equal(rt_job_view_new(s, 2, &v), RT_OK);
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = s[1];
    info.job_view = v;
    info.node_shown = "n2";
    char *html = report_page(&info);
    assert_non_null(strstr(html, "<h1>job J on 2 nodes</h1>"));
    char *job = strstr(html, "<section id=\"job\"><h2>The job on 2 nodes</h2>");
    char *answer = strstr(html, "<section id=\"answer\"><h2>The answer for n2</h2>");
    assert_non_null(job);
    assert_non_null(answer);
    assert_true(job < answer);
    assert_non_null(strstr(job, "<tr><th>n&lt;1&gt;</th>"));
    assert_null(strstr(html, "n<1>"));
    assert_non_null(strstr(job, "<tr class=\"shown\"><th>n2</th>"));
    char words[400];
    rt_job_view_ask(v, RT_SCHED_SLURM, words, sizeof words);
    char *ask = strstr(job, "<tr id=\"job-ask\">");
    assert_non_null(ask);
    assert_non_null(strstr(ask, words));
    assert_non_null(strstr(ask, "@parallel(num_parallel=2)"));
    assert_non_null(strstr(ask, "memory sized by n2"));
    assert_non_null(strstr(job, "The rest of this page is of n2, the node the memory ask is sized by"));
    free(html);
    /* without a view; and a caller that knows no view: the page of one run */
    info.job_view = NULL;
    html = report_page(&info);
    assert_null(strstr(html, "id=\"job\""));
    assert_non_null(strstr(html, "<h2>The answer</h2>"));
    free(html);
    info.job_view = v;
    info.struct_size = offsetof(rt_report_info, job_view);
    html = report_page(&info);
    assert_null(strstr(html, "id=\"job\""));
    free(html);
    rt_job_view_free(v);
    for (size_t i = 0; i < 2; i++)
        rt_stats_free(r[i].st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_nodes),
        cmocka_unit_test(tasks_missing_and_twice),
        cmocka_unit_test(gpus_idle),
        cmocka_unit_test(other_jobs_refused),
        cmocka_unit_test(runs_grouped),
        cmocka_unit_test(report_section),
        cmocka_unit_test(per_node_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
