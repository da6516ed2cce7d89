/* test_efficiency.c - what the job was given against what it used (efficiency.c, request.c, the
 * notes of 0.16): the requested figure from the request where it says it, else the job's cgroup
 * limits, else a GitHub runner's machine; CPU, memory, GPU and time-limit efficiency as seff
 * counts them; a request carried by the records or set on the statistics; a figure without its
 * source never used; the notes for what was asked for and not used, and a time limit nearly hit,
 * each given exactly when it should be. */
#include "unit.h"

#include <math.h>
#include <string.h>

#include "analysis/efficiency.h"
#include "analysis/record.h"
#include "core/request.h"
#include "resource_tracker.h"

/* n records of a tree from t0, 1 s each, using `cores` cores and `pss` MiB; the last one
 * carries the CPU total. */
static void tree_records(rt_record *r, size_t n, double t0, double cores, double pss)
{
    for (size_t i = 0; i < n; i++) {
        rt_record_null(&r[i]);
        r[i].timestamp_secs = t0 + (double)i + 1;
        r[i].interval_secs = 1;
        r[i].process_pid = 7;
        r[i].process_alive = 1;
        r[i].process_cores = cores;
        r[i].process_cpu_secs = cores;
        r[i].process_cpu_secs_total = cores * (double)(i + 1);
        r[i].process_pss_mib = pss;
        r[i].cpu_count = 16;
        r[i].memory_total_mib = 65536;
    }
}

static const rt_summary *summary_of(rt_stats **st, const rt_record *r, size_t n, const rt_request *set)
{
    *st = rt_stats_new();
    assert_non_null(*st);
    if (set)
        assert_int_equal(rt_stats_set_request(*st, set), RT_OK);
    for (size_t i = 0; i < n; i++)
        rt_stats_add(*st, &r[i]);
    return rt_stats_summary(*st);
}

static void near(double got, double want)
{
    if (isnan(want)) {
        assert_true(isnan(got));
        return;
    }
    if (!(fabs(got - want) <= 1e-9 * fmax(1, fabs(want))))
        fail_msg("got %.12g, want %.12g", got, want);
}

/* The notes of s of kind k: how many, and the first one's text into text. */
static size_t notes_of(const rt_summary *s, int kind, char *text, size_t cap)
{
    rt_note notes[RT_NOTES_MAX];
    size_t n = rt_summary_notes(s, NULL, notes, RT_NOTES_MAX), k = 0;
    text[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (notes[i].kind == kind && k++ == 0)
            snprintf(text, cap, "%s", notes[i].text);
    return k;
}

static rt_request slurm_request(void)
{
    rt_request q = RT_REQUEST_INIT;
    q.place = "slurm";
    q.cpu_cores = 8;
    q.cpu_from = "SLURM_CPUS_PER_TASK";
    q.memory_mib = 1024;
    q.memory_from = "SLURM_MEM_PER_NODE";
    q.time_limit_secs = 100;
    q.time_limit_from = "scontrol";
    return q;
}

/* ---- the figures ----------------------------------------------------------------------------- */

static void request_figures(void **state)
{
    (void)state;
    rt_record r[10];
    tree_records(r, 10, 1000, 2, 61.44); /* 2 cores of 8 over 10 s; 61.44 MiB of 1 GiB */
    rt_request q = slurm_request();
    q.job_start_secs = 1000 - 85; /* the job began 85 s before the run: 95 of its 100 s used */
    rt_stats *st;
    const rt_summary *s = summary_of(&st, r, 10, &q);
    assert_non_null(s->request);
    assert_string_equal(s->request->place, "slurm");
    near(s->requested_cpu_cores, 8);
    assert_string_equal(s->requested_cpu_from, "SLURM_CPUS_PER_TASK");
    near(s->cpu_efficiency_pct, 25); /* 20 CPU seconds / (8 cores x 10 s) */
    near(s->requested_memory_mib, 1024);
    near(s->memory_efficiency_pct, 100.0 * s->memory_need.mib / 1024);
    near(s->memory_efficiency_pct, 6); /* 61.44 MiB: the PSS peak, the need */
    near(s->time_limit_secs, 100);
    near(s->time_limit_used_pct, 95);
    assert_null(s->requested_gpus_from); /* not said: no figure */
    assert_true(isnan(s->requested_gpus) && isnan(s->gpu_efficiency_pct));
    char words[400];
    assert_true(rt_efficiency_words(s, words, sizeof words) > 0);
    assert_string_equal(words, "CPU 25% of 8 cores (SLURM_CPUS_PER_TASK), memory 6% of 1 GiB (SLURM_MEM_PER_NODE), "
                               "time limit 95% of 100 s (scontrol)");
    rt_stats_free(st);
}

static void cgroup_limits_then_runner(void **state)
{
    (void)state;
    rt_record r[4];
    tree_records(r, 4, 1000, 1, 100);
    for (size_t i = 0; i < 4; i++) {
        r[i].cgroup_cpu_quota_cores = 2;
        r[i].cgroup_memory_limit_mib = i == 2 ? 3072 : 4096; /* the lowest counts */
    }
    rt_stats *st;
    const rt_summary *s = summary_of(&st, r, 4, NULL);
    assert_null(s->request);
    assert_string_equal(s->requested_cpu_from, "cgroup CPU quota");
    near(s->cpu_efficiency_pct, 50);
    assert_string_equal(s->requested_memory_from, "cgroup memory limit");
    near(s->requested_memory_mib, 3072);
    rt_stats_free(st);

    /* a request's figure wins over the limit; the runner's machine only where nothing else said */
    rt_request q = RT_REQUEST_INIT;
    q.place = "github-actions";
    q.memory_mib = 2048;
    q.memory_from = "MEMORY_REQUEST";
    s = summary_of(&st, r, 4, &q);
    assert_string_equal(s->requested_memory_from, "MEMORY_REQUEST");
    assert_string_equal(s->requested_cpu_from, "cgroup CPU quota");
    rt_stats_free(st);
    tree_records(r, 4, 1000, 1, 100);
    s = summary_of(&st, r, 4, &q);
    assert_string_equal(s->requested_cpu_from, "runner");
    near(s->requested_cpu_cores, 16);
    near(s->cpu_efficiency_pct, 100.0 / 16);
    rt_stats_free(st);

    /* no place, no request, no limit: nothing said, no efficiency */
    s = summary_of(&st, r, 4, NULL);
    assert_null(s->requested_cpu_from);
    assert_null(s->requested_memory_from);
    assert_true(isnan(s->cpu_efficiency_pct) && isnan(s->memory_efficiency_pct) && isnan(s->time_limit_used_pct));
    char words[64];
    assert_int_equal(rt_efficiency_words(s, words, sizeof words), 0);
    assert_string_equal(words, "");
    rt_stats_free(st);
}

static void request_from_records(void **state)
{
    (void)state;
    rt_record r[3];
    tree_records(r, 3, 1000, 1, 10);
    rt_request a = slurm_request(), b = slurm_request();
    b.cpu_cores = 2;
    r[1].request = &a; /* the first record that carries one */
    r[2].request = &b;
    rt_stats *st;
    const rt_summary *s = summary_of(&st, r, 3, NULL);
    near(s->requested_cpu_cores, 8);
    rt_stats_free(st);
    /* one set on the statistics wins over the records' */
    s = summary_of(&st, r, 3, &b);
    near(s->requested_cpu_cores, 2);
    rt_stats_free(st);
}

static void keep_drops_what_is_not_said(void **state)
{
    (void)state;
    rt_request q = RT_REQUEST_INIT;
    q.cpu_cores = 4; /* no cpu_from: not said */
    q.memory_mib = -5;
    q.memory_from = "SLURM_MEM_PER_NODE";
    q.gpus = 0; /* said: none */
    q.gpus_from = "SLURM_GPUS";
    q.time_limit_secs = NAN;
    q.time_limit_from = "squeue";
    char long_from[200];
    memset(long_from, 'x', sizeof long_from - 1);
    long_from[sizeof long_from - 1] = '\0';
    q.place = long_from;
    rt_request_copy c;
    assert_int_equal(rt_request_keep(&c, &q), 0);
    assert_true(c.set);
    assert_null(c.r.cpu_from);
    assert_null(c.r.memory_from);
    assert_null(c.r.time_limit_from);
    assert_string_equal(c.r.gpus_from, "SLURM_GPUS");
    assert_int_equal(strlen(c.r.place), RT_REQUEST_TEXT_CAP - 1);
    assert_true(rt_request_any(&c.r));
    rt_request small = {.struct_size = sizeof(size_t)};
    assert_int_equal(rt_request_keep(&c, &small), -1);
    assert_int_equal(rt_request_keep(&c, NULL), 0);
    assert_false(c.set);
    assert_false(rt_request_any(&c.r));
    rt_stats *st = rt_stats_new();
    assert_int_equal(rt_stats_set_request(st, &small), RT_ERR_INVALID);
    assert_int_equal(rt_stats_set_request(NULL, &q), RT_ERR_INVALID);
    rt_stats_free(st);
}

/* ---- the notes ------------------------------------------------------------------------------- */

static void notes_when_over_requested(void **state)
{
    (void)state;
    rt_record r[10];
    tree_records(r, 10, 1000, 0.9, 61.44);
    rt_request q = slurm_request();
    rt_stats *st;
    char text[320];
    const rt_summary *s = summary_of(&st, r, 10, &q);
    assert_int_equal(notes_of(s, RT_NOTE_MEMORY_OVER_REQUESTED, text, sizeof text), 1);
    assert_string_equal(text, "the job used 6% of the memory it asked for (61 MiB of 1 GiB, SLURM_MEM_PER_NODE): "
                              "128 MiB would do");
    assert_int_equal(notes_of(s, RT_NOTE_CPU_OVER_REQUESTED, text, sizeof text), 1);
    assert_string_equal(text, "the job used 0.9 of the 8 cores it asked for (CPU efficiency 11%, "
                              "SLURM_CPUS_PER_TASK): 1 core would do");
    assert_int_equal(notes_of(s, RT_NOTE_TIME_LIMIT, text, sizeof text), 0); /* 10 of 100 s */
    assert_string_equal(rt_note_kind_name(RT_NOTE_MEMORY_OVER_REQUESTED), "memory_over_requested");
    assert_string_equal(rt_note_kind_name(RT_NOTE_CPU_OVER_REQUESTED), "cpu_over_requested");
    assert_string_equal(rt_note_kind_name(RT_NOTE_GPU_UNUSED), "gpu_unused");
    assert_string_equal(rt_note_kind_name(RT_NOTE_TIME_LIMIT), "time_limit");
    rt_stats_free(st);

    /* a job that uses what it asked for: no note */
    tree_records(r, 10, 1000, 7.5, 900);
    s = summary_of(&st, r, 10, &q);
    assert_int_equal(notes_of(s, RT_NOTE_MEMORY_OVER_REQUESTED, text, sizeof text), 0);
    assert_int_equal(notes_of(s, RT_NOTE_CPU_OVER_REQUESTED, text, sizeof text), 0);
    rt_stats_free(st);

    /* a limit, not a request: the cgroup's own note (oversized), never an over-requested one */
    tree_records(r, 10, 1000, 0.9, 61.44);
    for (size_t i = 0; i < 10; i++)
        r[i].cgroup_memory_limit_mib = 8192;
    s = summary_of(&st, r, 10, NULL);
    assert_int_equal(notes_of(s, RT_NOTE_MEMORY_OVER_REQUESTED, text, sizeof text), 0);
    assert_int_equal(notes_of(s, RT_NOTE_MEMORY_OVERSIZED, text, sizeof text), 1);
    rt_stats_free(st);

    /* a runner's machine is not asked for: no note of cores over-requested */
    rt_request gh = RT_REQUEST_INIT;
    gh.place = "github-actions";
    tree_records(r, 10, 1000, 0.9, 61.44);
    s = summary_of(&st, r, 10, &gh);
    assert_string_equal(s->requested_cpu_from, "runner");
    assert_int_equal(notes_of(s, RT_NOTE_CPU_OVER_REQUESTED, text, sizeof text), 0);
    assert_int_equal(notes_of(s, RT_NOTE_MEMORY_OVER_REQUESTED, text, sizeof text), 0);
    rt_stats_free(st);
}

static void notes_time_limit(void **state)
{
    (void)state;
    rt_record r[10];
    tree_records(r, 10, 1000, 1, 10);
    rt_request q = slurm_request();
    rt_stats *st;
    char text[320];
    q.job_start_secs = 1000 - 85; /* 95 of 100 s */
    const rt_summary *s = summary_of(&st, r, 10, &q);
    assert_int_equal(notes_of(s, RT_NOTE_TIME_LIMIT, text, sizeof text), 1);
    assert_string_equal(text, "the job used 95% of its time limit (95.0 s of 100.0 s, scontrol): ask for more time");
    rt_stats_free(st);
    q.job_start_secs = 1000 - 79; /* 89%: no note */
    s = summary_of(&st, r, 10, &q);
    near(s->time_limit_used_pct, 89);
    assert_int_equal(notes_of(s, RT_NOTE_TIME_LIMIT, text, sizeof text), 0);
    rt_stats_free(st);
}

static void notes_gpus(void **state)
{
    (void)state;
    rt_record r[4];
    tree_records(r, 4, 1000, 1, 10);
    rt_request q = RT_REQUEST_INIT;
    q.gpus = 4;
    q.gpus_from = "SLURM_GPUS";
    rt_stats *st;
    char text[320];
    /* no GPU figure at all: nothing to say */
    const rt_summary *s = summary_of(&st, r, 4, &q);
    assert_int_equal(notes_of(s, RT_NOTE_GPU_UNUSED, text, sizeof text), 0);
    rt_stats_free(st);
    for (size_t i = 0; i < 4; i++) {
        r[i].gpu_count = 4;
        r[i].process_gpu_utilized = i == 2 ? 1 : 0;
        r[i].process_gpu_usage = i == 2 ? 0.8 : 0;
    }
    s = summary_of(&st, r, 4, &q);
    near(s->gpu_efficiency_pct, 100.0 * 0.2 / 4);
    assert_int_equal(notes_of(s, RT_NOTE_GPU_UNUSED, text, sizeof text), 1);
    assert_string_equal(text, "the job asked for 4 GPUs (SLURM_GPUS) and used at most 1 at once: ask for 1");
    rt_stats_free(st);
    for (size_t i = 0; i < 4; i++)
        r[i].process_gpu_utilized = r[i].process_gpu_usage = 0;
    s = summary_of(&st, r, 4, &q);
    assert_int_equal(notes_of(s, RT_NOTE_GPU_UNUSED, text, sizeof text), 1);
    assert_string_equal(text, "the job asked for 4 GPUs (SLURM_GPUS) and used none: ask for none");
    assert_int_equal(notes_of(s, RT_NOTE_GPU_IDLE, text, sizeof text), 0); /* said once */
    rt_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_figures),           cmocka_unit_test(cgroup_limits_then_runner),
        cmocka_unit_test(request_from_records),      cmocka_unit_test(keep_drops_what_is_not_said),
        cmocka_unit_test(notes_when_over_requested), cmocka_unit_test(notes_time_limit),
        cmocka_unit_test(notes_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
