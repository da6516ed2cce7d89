/* test_phase_stats.c - the per-phase figures of a run (rt_summary.phases, analysis/phases.c) from
 * synthetic records carrying marks: CPU and bytes from the readings at the marks (exact, also for
 * a 0.3 s phase inside one 1 s interval), pro-rated from the intervals without readings, peak
 * cores over the stretches between marks and samples, memory within the calls (and the kernel's
 * peak where it rose in an interval wholly within), GPU overlap-weighted, nested and same-name
 * calls, an unterminated call closed at the last record, a run without marks has none, the
 * embedded tracker's copy; and the same run through the pipeline's marks; the summary JSON's
 * members; a run written as JSON lines and read back gives the same figures. */
#include "unit.h"

#include <math.h>
#include <stdbool.h>

#include "../tools/synthetic.h"
#include "analysis/phases.h"
#include "analysis/record.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* A run under construction: marks wait for the next record, as the pipeline carries them. */
typedef struct run {
    rt_stats *st;
    rt_phase_mark marks[32];
    const rt_phase_mark *ptrs[32];
    size_t n;
    rt_phase_counts counts;
    rt_phases ph;
    double total; /* the CPU seconds since the start, at the latest record */
} run;

static void run_new(run *r)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(rt_stats_new_with(NULL, &r->st), RT_OK);
}

/* A mark at t; readings (cpu_total, rd, rss) when src is not NONE (else NaN). */
static void mk(run *r, int kind, const char *name, double t, int src, double cpu_total, double rd, double rss)
{
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    m.kind = kind;
    m.name = name;
    m.timestamp_secs = t;
    m.pid = 7;
    if (src != RT_PHASE_CPU_NONE) {
        m.cpu_source = src;
        m.cpu_secs_total = cpu_total;
        m.read_bytes_total = rd;
        m.write_bytes_total = rd / 2;
        m.rss_mib = rss;
        m.reading_lag_secs = 0.0001;
    }
    r->marks[r->n++] = m;
    r->counts.accepted++;
}

/* What the next records carry of the processes' peaks at once and the job group's unreclaimable
 * peak (NaN: none; rec() leaves both null unless a test sets them). */
static double rec_tree = NAN, rec_cg = NAN;

/* A record at t covering iv seconds with cpu CPU seconds in it. */
static void rec(run *r, double t, double iv, double secs, double rss, double hwm, double rd, double gpu)
{
    rt_record x;
    memset(&x, 0, sizeof x);
    x.timestamp_secs = t;
    x.interval_secs = iv;
    x.process_pid = 42;
    x.process_cpu_secs = secs;
    r->total += secs;
    x.process_cpu_secs_total = r->total;
    x.process_cores = secs / iv;
    x.process_rss_mib = rss;
    x.process_pss_mib = rss * 0.9;
    x.process_rss_hwm_mib = hwm;
    x.process_read_bytes = rd;
    x.process_write_bytes = rd / 2;
    x.process_gpu_usage = gpu;
    x.process_gpu_vram_mib = gpu * 1000;
    /* the rest null */
    double *d[] = {&x.cpu_cores, &x.cpu_count, &x.memory_used_mib, &x.memory_total_mib, &x.gpu_usage,
                   &x.process_memory_peak_mib, &x.process_unreclaimable_peak_mib, &x.combined.total_rss_mib,
                   &x.process_gpu_vram_peak_mib, &x.process_alive, &x.process_cgroup_exclusive};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = NAN;
    x.process_alive = 1;
    x.process_rss_hwm_tree_mib = rec_tree;
    x.process_unreclaimable_peak_mib = rec_cg;
    for (size_t i = 0; i < r->n; i++)
        r->ptrs[i] = &r->marks[i];
    r->ph = (rt_phases){.marks = r->ptrs, .mark_count = r->n, .counts = &r->counts};
    x.phases = &r->ph;
    rt_stats_add_sized(r->st, &x, sizeof x);
    r->n = 0;
}

static const rt_phase_summary *find(const rt_summary *s, const char *name)
{
    for (size_t i = 0; i < s->phase_count; i++)
        if (strcmp(s->phases[i]->name, name) == 0)
            return s->phases[i];
    fail_msg("no phase %s", name);
    return NULL;
}

/* The run of the exactness tests: 1 s records from 100 to 105 using 0.2, 1.2, 2.0, 1.0, 0.3 CPU
 * seconds; "long" from 101.5 to 103.5 and "short" from 104.2 to 104.5 (inside one interval). With
 * readings the marks carry the CPU seconds since the start as the job spent them:
 * 0.3 at 101.5, 4.3 at 103.5 (2 s of a 2-core phase), 4.41 at 104.2 and 4.68 at 104.5. */
static const rt_summary *exactness_run(run *r, int src)
{
    run_new(r);
    rec(r, 101, 1, 0.2, 100, 100, 1000, 0);
    mk(r, RT_PHASE_START, "long", 101.5, src, 0.3, 10000, 150);
    rec(r, 102, 1, 1.2, 200, 200, 1000, 0);
    rec(r, 103, 1, 2.0, 500, 520, 1000, 0.5);
    mk(r, RT_PHASE_STOP, "long", 103.5, src, 4.3, 14000, 400);
    rec(r, 104, 1, 1.0, 300, 520, 1000, 0);
    mk(r, RT_PHASE_START, "short", 104.2, src, 4.41, 20000, 250);
    mk(r, RT_PHASE_STOP, "short", 104.5, src, 4.68, 20300, 260);
    rec(r, 105, 1, 0.3, 100, 520, 1000, 0);
    return rt_stats_summary(r->st);
}

static void exact_at_marks(void **state)
{
    (void)state;
    run r;
    const rt_summary *s = exactness_run(&r, RT_PHASE_CPU_GROUP);
    assert_int_equal(s->phase_count, 2);
    assert_string_equal(s->phases[0]->name, "long"); /* in first-start order */
    const rt_phase_summary *l = find(s, "long"), *sh = find(s, "short");
    assert_int_equal(l->calls, 1);
    assert_int_equal(l->unterminated, 0);
    NEAR(l->duration_secs, 2.0);
    NEAR(l->first_start_secs, 101.5);
    NEAR(l->cpu_secs, 4.0); /* the readings' difference, not the intervals' 3.1 */
    assert_int_equal(l->cpu_exact, 1);
    NEAR(l->cores_mean, 2.0);
    NEAR(l->cores_peak, 2.2); /* 101.5..102: 1.1 CPU seconds in 0.5 s */
    assert_int_equal(l->samples, 2); /* the records at 102 and 103 */
    assert_int_equal(l->empty_calls, 0);
    NEAR(l->rss_peak_mib, 500);
    NEAR(l->pss_peak_mib, 450);
    /* the kernel's peak rose (200 -> 520) in 102..103, wholly within the call; no cgroup
     * figure in the records: a lower bound (the run's rule) */
    NEAR(l->memory_need.mib, 520);
    assert_int_equal(l->memory_need.source, RT_NEED_PROCESS_PEAK);
    assert_int_equal(l->memory_need.sampled, 1);
    NEAR(l->gpu_usage_mean, 0.25); /* 0.5 over 1 s of the 2 */
    NEAR(l->gpu_usage_peak, 0.5);
    NEAR(l->gpu_vram_peak_mib, 500);
    NEAR(l->read_bytes, 4000);
    NEAR(l->write_bytes, 2000);

    NEAR(sh->duration_secs, 0.3);
    NEAR(sh->cpu_secs, 0.27); /* inside one interval: still the readings' (the interval's share: 0.09) */
    assert_int_equal(sh->cpu_exact, 1);
    NEAR(sh->cores_mean, 0.9);
    NEAR(sh->cores_peak, 0.9); /* shorter than half an interval: its mean */
    assert_int_equal(sh->samples, 0);
    assert_int_equal(sh->empty_calls, 1);
    NEAR(sh->rss_peak_mib, 260); /* the marks' readings */
    assert_int_equal(sh->memory_need.source, RT_NEED_RSS);
    assert_int_equal(sh->memory_need.sampled, 1);
    NEAR(sh->read_bytes, 300);
    assert_non_null(s->phase_counts);
    assert_int_equal(s->phase_counts->accepted, 4);
    assert_int_equal(s->phase_counts->unterminated, 0);
    rt_stats_free(r.st);
}

static void pro_rated(void **state)
{
    (void)state;
    run r;
    const rt_summary *s = exactness_run(&r, RT_PHASE_CPU_NONE);
    const rt_phase_summary *l = find(s, "long"), *sh = find(s, "short");
    NEAR(l->duration_secs, 2.0); /* durations are the marks' own: exact either way */
    NEAR(l->cpu_secs, 0.6 + 2.0 + 0.5);
    assert_int_equal(l->cpu_exact, 0);
    NEAR(l->cores_peak, 2.0);
    NEAR(l->read_bytes, 2000);
    NEAR(sh->cpu_secs, 0.09);
    assert_int_equal(sh->cpu_exact, 0);
    NEAR(sh->read_bytes, 300);
    rt_stats_free(r.st);

    /* the readings of different sources are never subtracted: pro-rated */
    run_new(&r);
    rec(&r, 101, 1, 1, 100, 100, 0, 0);
    mk(&r, RT_PHASE_START, "mixed", 101.2, RT_PHASE_CPU_GROUP, 50, 0, 100);
    mk(&r, RT_PHASE_STOP, "mixed", 101.7, RT_PHASE_CPU_TICKS, 60, 0, 100);
    rec(&r, 102, 1, 1, 100, 100, 0, 0);
    s = rt_stats_summary(r.st);
    assert_int_equal(s->phases[0]->cpu_exact, 0);
    assert_true(s->phases[0]->cpu_secs < 1.0);
    rt_stats_free(r.st);
}

static void nested_recursive_unterminated(void **state)
{
    (void)state;
    run r;
    run_new(&r);
    rec(&r, 100, 1, 1, 100, 100, 0, 0);
    mk(&r, RT_PHASE_START, "outer", 100.5, RT_PHASE_CPU_NONE, 0, 0, 0);
    rec(&r, 101, 1, 1, 100, 100, 0, 0);
    mk(&r, RT_PHASE_START, "inner", 101.0, RT_PHASE_CPU_NONE, 0, 0, 0);
    rec(&r, 102, 1, 1, 100, 100, 0, 0);
    mk(&r, RT_PHASE_STOP, "inner", 102.0, RT_PHASE_CPU_NONE, 0, 0, 0);
    mk(&r, RT_PHASE_START, "r", 102.2, RT_PHASE_CPU_NONE, 0, 0, 0);
    mk(&r, RT_PHASE_START, "r", 102.4, RT_PHASE_CPU_NONE, 0, 0, 0);
    mk(&r, RT_PHASE_STOP, "r", 102.6, RT_PHASE_CPU_NONE, 0, 0, 0);
    mk(&r, RT_PHASE_STOP, "r", 102.8, RT_PHASE_CPU_NONE, 0, 0, 0);
    rec(&r, 103, 1, 1, 100, 100, 0, 0);
    mk(&r, RT_PHASE_STOP, "outer", 103.5, RT_PHASE_CPU_NONE, 0, 0, 0);
    mk(&r, RT_PHASE_START, "tail", 103.6, RT_PHASE_CPU_NONE, 0, 0, 0);
    rec(&r, 104, 1, 1, 100, 100, 0, 0);
    rec(&r, 105, 1, 1, 100, 100, 0, 0);
    const rt_summary *s = rt_stats_summary(r.st);
    assert_int_equal(s->phase_count, 4);
    const char *order[] = {"outer", "inner", "r", "tail"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(s->phases[i]->name, order[i]);
    const rt_phase_summary *o = find(s, "outer"), *in = find(s, "inner"), *rr = find(s, "r"), *t = find(s, "tail");
    NEAR(o->duration_secs, 3.0);
    NEAR(o->cpu_secs, 3.0);
    assert_int_equal(o->samples, 3); /* 101, 102, 103 */
    NEAR(in->duration_secs, 1.0);
    assert_int_equal(in->samples, 1); /* 102 */
    assert_int_equal(rr->calls, 2);
    NEAR(rr->duration_secs, 0.8); /* 0.2 (the inner call) + 0.6: both count */
    NEAR(rr->call_min_secs, 0.2);
    NEAR(rr->call_max_secs, 0.6);
    NEAR(rr->call_mean_secs, 0.4);
    assert_int_equal(rr->empty_calls, 2);
    assert_int_equal(t->calls, 1);
    assert_int_equal(t->unterminated, 1);
    NEAR(t->duration_secs, 1.4); /* closed at the last record */
    NEAR(t->cpu_secs, 1.4);
    assert_int_equal(t->cpu_exact, 0);
    assert_int_equal(s->phase_counts->unterminated, 1);
    /* closed in the result only: the call goes on with the next record */
    rec(&r, 106, 1, 1, 100, 100, 0, 0);
    s = rt_stats_summary(r.st);
    NEAR(find(s, "tail")->duration_secs, 2.4);
    assert_int_equal(find(s, "tail")->calls, 1);
    rt_stats_free(r.st);

    /* a run without marks has no phases; one with refusals only has the counts */
    run_new(&r);
    rt_record x;
    rt_record_null(&x);
    x.timestamp_secs = 1;
    rt_stats_add_sized(r.st, &x, sizeof x);
    s = rt_stats_summary(r.st);
    assert_int_equal(s->phase_count, 0);
    assert_null(s->phases);
    assert_null(s->phase_counts);
    rt_phase_counts c = {.flood = 3};
    rt_phases ph = {.counts = &c};
    x.phases = &ph;
    rt_stats_add_sized(r.st, &x, sizeof x);
    s = rt_stats_summary(r.st);
    assert_int_equal(s->phase_count, 0);
    assert_non_null(s->phase_counts);
    assert_int_equal(s->phase_counts->flood, 3);
    rt_stats_free(r.st);
}

/* The pipeline's own marks (rt_pipeline_mark) reach the statistics' sink with the next sample. */
static void through_pipeline(void **state)
{
    (void)state;
    make_full();
    rt_stats *st = NULL;
    assert_int_equal(rt_stats_new_with(NULL, &st), RT_OK);
    rt_sink *sink = NULL;
    assert_int_equal(rt_stats_sink_new(st, &sink), RT_OK);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, sink), RT_OK);
    full.interval_secs = 1;
    full.timestamp_secs = 1000;
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    m.kind = RT_PHASE_START;
    m.name = "load";
    m.timestamp_secs = 1000.25;
    assert_int_equal(rt_pipeline_mark(p, &m), RT_OK);
    m.kind = RT_PHASE_STOP;
    m.timestamp_secs = 1000.5;
    assert_int_equal(rt_pipeline_mark(p, &m), RT_OK);
    full.timestamp_secs = 1001;
    assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    const rt_summary *s = rt_stats_summary(st);
    assert_int_equal(s->phase_count, 1);
    assert_string_equal(s->phases[0]->name, "load");
    NEAR(s->phases[0]->duration_secs, 0.25);
    assert_int_equal(s->phase_counts->accepted, 2);
    rt_pipeline_free(p);
    rt_stats_free(st);
}

/* Each phase's duration under 1, 2, ... cores: the model over its stretches, each at its own
 * rate. "long" (101.5 to 103.5) is three: 0.5 s at 2.2 cores (1.1 of the 1.2 s of CPU of the
 * record at 102 after the mark's 0.1), 1 s at 2.0, 0.5 s at 1.8 (0.9 s of CPU before the stop
 * mark's reading): 1.1 + 2 + 0.9 = 4.0 s under 1 core, 0.55 + 1 + 0.5 = 2.05 under 2, its own
 * 2 s from 3 (no core count known: no wait claimed). "short", 0.3 s at 0.9 cores: 0.3 s under
 * any. The fewest within 10%: 2 and 1; the run's ask (2 cores: 1 core makes the run's 5 s 7.0)
 * is decided by "long", which one core fewer slows by 4.0 - 2.05 = 1.95 s. The run's own
 * table is made of the same stretches (a record split by marks is not one interval). */
static void phase_tables(void **state)
{
    (void)state;
    run r;
    const rt_summary *s = exactness_run(&r, RT_PHASE_CPU_GROUP);
    const rt_phase_summary *l = find(s, "long"), *sh = find(s, "short");
    assert_non_null(l->cores);
    assert_int_equal(l->cores->n, 4); /* ceil(2.2) + 1 */
    const double want[] = {4.0, 2.05, 2.0, 2.0};
    for (size_t c = 0; c < 4; c++) {
        NEAR(l->cores->rows[c].duration_secs, want[c]);
        assert_int_equal(l->cores->rows[c].cores, (int64_t)c + 1);
        assert_int_equal(l->cores->rows[c].wait_bound, 0);
    }
    NEAR(l->cores->duration_secs, l->duration_secs); /* the stretches cover the call */
    NEAR(l->cores->peak_cores, 2.2);
    assert_int_equal(rt_cores_fewest(l->cores, 10), 2);
    assert_int_equal(rt_cores_fewest(l->cores, 200), 1);
    assert_int_equal(rt_cores_fewest(l->cores, 0), 3);
    assert_int_equal(rt_cores_fewest(l->cores, NAN), 0);
    assert_int_equal(rt_cores_fewest(NULL, 10), 0);
    assert_non_null(sh->cores);
    assert_int_equal(sh->cores->n, 2);
    NEAR(sh->cores->rows[0].duration_secs, 0.3);
    assert_int_equal(rt_cores_fewest(sh->cores, 10), 1);

    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    const rt_summary *runs[1] = {s};
    assert_int_equal(rt_recommend(runs, 1, &rec), RT_OK);
    assert_int_equal(rec.cpu, 2);
    assert_string_equal(rec.cpu_phase, "long");
    NEAR(rec.cpu_phase_fewer_secs, 1.95);
    char words[300];
    assert_true(rt_recommendation_time_words(&rec, words, sizeof words) > 0);
    /* the run's own table by the same stretches: 5 s, and 7.0 under 1 core (the 1.95 of "long",
     * 0.05 of the rest: the stretches of 0.2 cores and below take as long as they did) */
    NEAR(s->cores->duration_secs, 5.0);
    NEAR(s->cores->rows[0].duration_secs, 7.0);
    NEAR(s->cores->rows[1].duration_secs, 5.05);
    assert_non_null(strstr(words, "2 cores: about 5.0 s, as this run; 1 core: about 7.0 s (+40%: phase \"long\" +1.9 s)"));
    /* a bound the slower count meets: nothing decided by a phase */
    rt_recommend_options o = RT_RECOMMEND_OPTIONS_INIT;
    o.max_slowdown_pct = 50;
    assert_int_equal(rt_recommend_with(&o, runs, 1, &rec), RT_OK);
    assert_int_equal(rec.cpu, 1);
    assert_string_equal(rec.cpu_phase, "");
    assert_true(isnan(rec.cpu_phase_fewer_secs));
    rt_stats_free(r.st);
}

static void summary_json(void **state)
{
    (void)state;
    run r;
    const rt_summary *s = exactness_run(&r, RT_PHASE_CPU_GROUP);
    static char buf[1 << 16];
    size_t n = rt_format_summary(s, NULL, NULL, buf, sizeof buf);
    assert_true(n < sizeof buf);
    const char *p = strstr(buf, ",\"phases\":[{\"name\":\"long\",\"calls\":1,\"unterminated\":0,\"duration_secs\":2,"
                                "\"call_secs\":{\"min\":2,\"max\":2,\"mean\":2},\"samples\":2,\"empty_calls\":0,"
                                "\"cpu_secs\":4,\"cpu_exact\":true,\"cores\":{\"mean\":2,\"peak\":2.2},"
                                "\"rss_peak_mib\":500,\"pss_peak_mib\":450,\"memory_peak_mib\":null,"
                                "\"memory_need\":{\"need_mib\":520,\"source\":\"process_peak\",\"sampled\":true},"
                                "\"gpu_usage\":{\"mean\":0.25,\"peak\":0.5},\"gpu_vram_mib\":{\"mean\":250,"
                                "\"peak\":500},\"read_bytes\":4000,\"write_bytes\":2000,\"first_start_secs\":101.5,"
                                "\"cores_asked\":2,\"own_duration_secs\":2,\"durations_secs\":[4,2.05,2,2]},{\"name\":\"short\",");
    if (!p)
        fail_msg("%s", strstr(buf, ",\"phases\""));
    assert_non_null(strstr(buf, "],\"phase_marks\":{\"accepted\":4,\"unknown_stop\":0,\"unterminated\":0,"
                                "\"too_long\":0,\"malformed\":0,\"flood\":0,\"dropped\":0,\"too_many_names\":0,"
                                "\"too_deep\":0,\"refused\":0},\"energy\":null,\"efficiency\":null,\"member\":null,\"gpu_work\":")); /* no energy (0.15) */
    /* units as the rest of the summary */
    rt_format_summary(s, "gigabytes", "minutes", buf, sizeof buf);
    assert_non_null(strstr(buf, "\"duration_minutes\":0.033333,\"call_minutes\":{"));
    assert_non_null(strstr(buf, "\"rss_peak_gigabytes\":0.524288,"));
    rt_stats_free(r.st);

    /* no mark: both null */
    run_new(&r);
    rt_record x;
    rt_record_null(&x);
    x.timestamp_secs = 1;
    rt_stats_add_sized(r.st, &x, sizeof x);
    rt_format_summary(rt_stats_summary(r.st), NULL, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, ",\"phases\":null,\"phase_marks\":null,\"energy\":null,\"efficiency\":null,\"member\":null,\"gpu_work\":null,\"end_signal\":null,\"clock\":null}\n"));
    rt_stats_free(r.st);
}

/* The JSON line's phases member, to the byte; absent without phases. */
static void line_member(void **state)
{
    (void)state;
    make_full();
    full.energy = NULL; /* "energy" (0.15) would follow "phases" */
    static char buf[1 << 16];
    rt_format_sample(RT_FORMAT_JSON, &full, NULL, buf, sizeof buf);
    assert_null(strstr(buf, "phases"));
    rt_phase_mark m = RT_PHASE_MARK_INIT;
    m.kind = RT_PHASE_STOP;
    m.name = "load \"x\"";
    m.timestamp_secs = 1700000000.1234567;
    m.pid = 42;
    m.cpu_source = RT_PHASE_CPU_SCHEDSTAT;
    m.cpu_secs_total = 1.5;
    m.read_bytes_total = 4096;
    m.rss_mib = 12.3456;
    m.reading_lag_secs = 0.000021;
    const rt_phase_mark *marks[1] = {&m};
    const char *open[2] = {"outer", "inner"};
    rt_phase_counts c = {.accepted = 3, .flood = 2};
    rt_phases ph = {.marks = marks, .mark_count = 1, .open = open, .open_count = 2, .counts = &c};
    full.phases = &ph;
    rt_format_sample(RT_FORMAT_JSON, &full, NULL, buf, sizeof buf);
    full.phases = NULL;
    const char *want = ",\"phases\":{\"open\":[\"outer\",\"inner\"],\"marks\":[{\"event\":\"stop\",\"name\":\"load "
                       "\\\"x\\\"\",\"timestamp_secs\":1700000000.123457,\"pid\":42,\"cpu_secs_total\":1.5,"
                       "\"cpu_source\":\"schedstat\",\"read_bytes_total\":4096,\"write_bytes_total\":null,"
                       "\"rss_mib\":12.346,\"memory_peak_mib\":null,\"reading_lag_secs\":0.000021}],\"counts\":{"
                       "\"accepted\":3,\"unknown_stop\":0,\"unterminated\":0,\"too_long\":0,\"malformed\":0,"
                       "\"flood\":2,\"dropped\":0,\"too_many_names\":0,\"too_deep\":0,\"refused\":0}}}\n";
    const char *got = strstr(buf, ",\"phases\":");
    if (!got || strcmp(got, want) != 0)
        fail_msg("got %s", got ? got : buf);
}

/* ---- written as JSON lines, read back ---- */

typedef struct membuf {
    char *p;
    size_t n, cap;
} membuf;

static long to_mem(void *user, const void *buf, size_t len)
{
    membuf *m = user;
    if (m->n + len > m->cap) {
        m->cap = (m->n + len) * 2;
        m->p = realloc(m->p, m->cap);
        assert_non_null(m->p);
    }
    memcpy(m->p + m->n, buf, len);
    m->n += len;
    return (long)len;
}

static void same_figure(double a, double b, const char *what)
{
    if (isnan(a) && isnan(b))
        return;
    if (!(fabs(a - b) <= 1e-6 * (1 + fabs(a))))
        fail_msg("%s: live %.9g, read back %.9g", what, a, b);
}

static void read_back(void **state)
{
    (void)state;
    make_full();
    sda.read_bytes_total = 1000; /* the synthetic sample's 2^64-ish total is out of a reader's range */
    membuf mb = {0};
    rt_writer *w = NULL;
    assert_int_equal(rt_writer_new_cb(RT_FORMAT_JSON, to_mem, &mb, NULL, &w), RT_OK);
    rt_stats *live = NULL, *back = NULL;
    assert_int_equal(rt_stats_new_with(NULL, &live), RT_OK);
    assert_int_equal(rt_stats_new_with(NULL, &back), RT_OK);
    rt_sink *ws = NULL, *ss = NULL;
    assert_int_equal(rt_writer_sink_new(w, &ws), RT_OK);
    assert_int_equal(rt_stats_sink_new(live, &ss), RT_OK);
    rt_pipeline *p = NULL;
    assert_int_equal(rt_pipeline_new(NULL, &p), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, ws), RT_OK);
    assert_int_equal(rt_pipeline_attach(p, ss), RT_OK);
    /* ten 1 s samples, the tree's CPU growing by 0.1 s more each second; phases at odd times */
    const struct {
        double t;
        int kind;
        const char *name;
    } marks[] = {{1002.25, RT_PHASE_START, "load \"data\""}, {1002.75, RT_PHASE_STOP, "load \"data\""},
                 {1003.1, RT_PHASE_START, "train"},          {1004.5, RT_PHASE_START, "step"},
                 {1004.8, RT_PHASE_STOP, "step"},            {1005.5, RT_PHASE_START, "step"},
                 {1007.3, RT_PHASE_STOP, "step"},            {1008.2, RT_PHASE_START, "été"}};
    size_t next = 0;
    double total = 0;
    for (int i = 1; i <= 10; i++) {
        double t = 1000 + i;
        while (next < sizeof marks / sizeof marks[0] && marks[next].t <= t) {
            rt_phase_mark m = RT_PHASE_MARK_INIT;
            m.kind = marks[next].kind;
            m.name = marks[next].name;
            m.timestamp_secs = marks[next].t;
            m.pid = 99;
            if (next % 3 != 2) { /* some with readings, some without */
                m.cpu_source = RT_PHASE_CPU_GROUP;
                m.cpu_secs_total = total + 0.1 * i * (marks[next].t - (t - 1));
                m.read_bytes_total = 1000.0 * next;
                m.write_bytes_total = 10.0 * next;
                m.rss_mib = 50 + next;
                m.reading_lag_secs = 0.000012;
            }
            assert_int_equal(rt_pipeline_mark(p, &m), RT_OK);
            next++;
        }
        full.timestamp_secs = t;
        full.interval_secs = 1;
        proc.utime_secs = 0.1 * i;
        proc.stime_secs = 0;
        total += 0.1 * i;
        proc.cpu_secs_total = total;
        proc.cores_used = 0.1 * i;
        proc.rss_mib = 100 + 10 * i;
        proc.pss_mib = 90 + 10 * i;
        proc.read_bytes = 1000;
        proc.write_bytes = 10;
        proc.read_bytes_total = 1000u * (unsigned)i;
        proc.write_bytes_total = 10u * (unsigned)i;
        assert_int_equal(rt_pipeline_add(p, &full), RT_OK);
    }
    rt_run_end end = RT_RUN_END_INIT;
    rt_pipeline_finish(p, &end);
    rt_pipeline_free(p);
    /* the lines before the first mark have no phases member: as before phases */
    assert_null(memmem(mb.p, (size_t)(strchr(mb.p, '\n') - mb.p), "\"phases\"", 8));
    assert_non_null(memmem(mb.p, mb.n, ",\"phases\":{\"open\":[\"train\"],\"marks\":[{\"event\":\"start\",\"name\":\"step\",", 60));

    rt_reader *rd = NULL;
    assert_int_equal(rt_reader_open_buffer("run.jsonl", mb.p, mb.n, NULL, &rd), RT_OK);
    const rt_record *rec;
    while (rt_reader_next(rd, &rec) == RT_OK && rec)
        rt_stats_add_sized(back, rec, sizeof *rec);
    if (rt_reader_skipped(rd))
        fail_msg("%s", rt_reader_errmsg(rd));
    rt_reader_free(rd);

    const rt_summary *a = rt_stats_summary(live), *b = rt_stats_summary(back);
    assert_int_equal(a->phase_count, 4);
    assert_int_equal(b->phase_count, a->phase_count);
    for (size_t i = 0; i < a->phase_count; i++) {
        const rt_phase_summary *x = a->phases[i], *y = b->phases[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->calls, y->calls);
        assert_int_equal(x->unterminated, y->unterminated);
        assert_int_equal(x->samples, y->samples);
        assert_int_equal(x->empty_calls, y->empty_calls);
        assert_int_equal(x->cpu_exact, y->cpu_exact);
        const double fx[] = {x->duration_secs, x->call_min_secs, x->cpu_secs, x->cores_mean, x->cores_peak,
                             x->rss_peak_mib, x->pss_peak_mib, x->memory_need.mib, x->read_bytes, x->write_bytes,
                             x->first_start_secs};
        const double fy[] = {y->duration_secs, y->call_min_secs, y->cpu_secs, y->cores_mean, y->cores_peak,
                             y->rss_peak_mib, y->pss_peak_mib, y->memory_need.mib, y->read_bytes, y->write_bytes,
                             y->first_start_secs};
        for (size_t k = 0; k < sizeof fx / sizeof fx[0]; k++) {
            char what[64];
            snprintf(what, sizeof what, "%s figure %zu", x->name, k);
            same_figure(fx[k], fy[k], what);
        }
    }
    const rt_phase_summary *st = find(a, "step");
    assert_int_equal(st->calls, 2);
    NEAR(st->duration_secs, 0.3 + 1.8);
    assert_int_equal(find(a, "été")->unterminated, 1);
    assert_int_equal(find(b, "train")->unterminated, 1);
    assert_int_equal(b->phase_counts->accepted, 8);
    assert_int_equal(b->phase_counts->unterminated, 2);
    rt_stats_free(live);
    rt_stats_free(back);
    free(mb.p);
}

/* The text summary's Phases block and the note of refused marks. */
static void text_and_note(void **state)
{
    (void)state;
    run r;
    exactness_run(&r, RT_PHASE_CPU_GROUP);
    mk(&r, RT_PHASE_START, "left open", 105.5, RT_PHASE_CPU_NONE, 0, 0, 0);
    r.counts.unknown_stop = 2;
    r.counts.flood = 5;
    rec(&r, 106, 1, 1, 100, 520, 0, 0);
    const rt_summary *s = rt_stats_summary(r.st);
    membuf mb = {0};
    assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, to_mem, &mb), RT_OK);
    to_mem(&mb, "", 1);
    /* the detail section at 80 columns (issue 70 item 4), a phase's figures under its name */
    if (!strstr(mb.p, "Phases (by name, in the order they first started)\n"
                      "  long                       1 call, 2.00 s, CPU 4.00 s, cores mean 2.00 peak 2.20, memory peak\n"
                      "                             520.0 MiB, asks 2 cores\n"
                      "  short                      1 call, 0.30 s, CPU 0.27 s, cores mean 0.90 peak 0.90, memory peak\n"
                      "                             260.0 MiB, asks 1 core\n"
                      "  left open                  1 call (open at the end), 0.50 s, CPU 0.50 s (pro-rated), cores mean\n"))
    {
        fprintf(stderr, "%s", mb.p);
        fail();
    }
    rt_note notes[RT_NOTES_MAX];
    size_t n = rt_summary_notes(s, NULL, notes, RT_NOTES_MAX);
    bool seen = false;
    for (size_t i = 0; i < n; i++)
        if (notes[i].kind == RT_NOTE_PHASE_MARKS) {
            seen = true;
            assert_string_equal(notes[i].text, "7 phase marks refused (2 a stop with no open phase of its name, 5 over "
                                               "the rate limit); 1 phase left open at the end, closed there");
        }
    assert_true(seen);
    assert_string_equal(rt_note_kind_name(RT_NOTE_PHASE_MARKS), "phase_marks");
    free(mb.p);
    rt_stats_free(r.st);

    /* no mark: no block, no note */
    run_new(&r);
    rt_record x;
    rt_record_null(&x);
    x.timestamp_secs = 1;
    x.process_pid = 1;
    rt_stats_add_sized(r.st, &x, sizeof x);
    s = rt_stats_summary(r.st);
    mb = (membuf){0};
    assert_int_equal(rt_summary_write_text_cb(s, NULL, NULL, to_mem, &mb), RT_OK);
    to_mem(&mb, "", 1);
    assert_null(strstr(mb.p, "Phases"));
    n = rt_summary_notes(s, NULL, notes, RT_NOTES_MAX);
    for (size_t i = 0; i < n; i++)
        assert_int_not_equal(notes[i].kind, RT_NOTE_PHASE_MARKS);
    free(mb.p);
    rt_stats_free(r.st);
}

/* The report: a band per call on every chart (MK.ph, names escaped for script), bounded (a
 * name's spans merge past the cap, the count kept), and the per-phase table; none of it for a
 * run without phases. */
static void report(void **state)
{
    (void)state;
    rt_report *rp = NULL;
    assert_int_equal(rt_report_new_with(NULL, &rp), RT_OK);
    rt_stats *st = NULL;
    assert_int_equal(rt_stats_new_with(NULL, &st), RT_OK);
    run r;
    memset(&r, 0, sizeof r);
    r.st = st;
    const char *evil = "a</script><b>\"q\\\xe2\x80\xa8";
    double t = 1000;
    for (int i = 0; i < 1500; i++) { /* 3000 calls of "step" inside "train" */
        if (i == 0)
            mk(&r, RT_PHASE_START, "train", t + 0.1, RT_PHASE_CPU_NONE, 0, 0, 0);
        if (i == 1)
            mk(&r, RT_PHASE_START, evil, t + 0.1, RT_PHASE_CPU_NONE, 0, 0, 0);
        if (i == 2)
            mk(&r, RT_PHASE_STOP, evil, t + 0.1, RT_PHASE_CPU_NONE, 0, 0, 0);
        mk(&r, RT_PHASE_START, "step", t + 0.2, RT_PHASE_CPU_NONE, 0, 0, 0);
        mk(&r, RT_PHASE_STOP, "step", t + 0.4, RT_PHASE_CPU_NONE, 0, 0, 0);
        mk(&r, RT_PHASE_START, "step", t + 0.6, RT_PHASE_CPU_NONE, 0, 0, 0);
        mk(&r, RT_PHASE_STOP, "step", t + 0.8, RT_PHASE_CPU_NONE, 0, 0, 0);
        t += 1;
        for (size_t k = 0; k < r.n; k++)
            r.ptrs[k] = &r.marks[k];
        rt_record x;
        rt_record_null(&x);
        x.timestamp_secs = t;
        x.interval_secs = 1;
        x.process_pid = 1;
        x.process_cores = 0.5;
        x.process_cpu_secs = 0.5;
        x.process_rss_mib = 100;
        r.ph = (rt_phases){.marks = r.ptrs, .mark_count = r.n, .counts = &r.counts};
        x.phases = &r.ph;
        rt_report_add_sized(rp, &x, sizeof x);
        rt_stats_add_sized(st, &x, sizeof x);
        r.n = 0;
    }
    rt_report_info info = RT_REPORT_INFO_INIT;
    info.summary = rt_stats_summary(st);
    assert_int_equal(find(info.summary, "step")->calls, 3000);
    membuf mb = {0};
    assert_int_equal(rt_report_write_cb(rp, &info, to_mem, &mb), RT_OK);
    to_mem(&mb, "", 1);
    char *ph = strstr(mb.p, ",ph:[[");
    assert_non_null(ph);
    assert_non_null(strstr(ph, "],pn:[\"train\",\"step\",\"a\\u003c/script\\u003e\\u003cb\\u003e\\\"q\\\\\\u2028\"]};"));
    /* the spans: at most the cap (and the open train), their calls adding up to every call */
    unsigned long calls = 0, spans = 0;
    for (char *q = ph + 5; *q == '['; spans++) {
        double a, b;
        unsigned name, depth, count;
        int used = 0;
        assert_int_equal(sscanf(q, "[%lf,%lf,%u,%u,%u]%n", &a, &b, &name, &depth, &count, &used), 5);
        if (name == 1) {
            calls += count;
            assert_int_equal(depth, 1); /* inside train */
        }
        q += used;
        if (*q == ',')
            q++;
    }
    assert_true(spans <= 512 + 1);
    assert_int_equal(calls, 3000);
    assert_non_null(strstr(mb.p, "<table class=\"dist\" id=\"phase-table\">"));
    assert_non_null(strstr(mb.p, "<tr><th>step</th><td>3000</td><td>10 min 0 s</td>"));
    assert_non_null(strstr(mb.p, "<tr><th>train</th><td>1 (open at end)</td>"));
    assert_non_null(strstr(mb.p, "<tr><th>a&lt;/script&gt;&lt;b&gt;&quot;q\\\xe2\x80\xa8</th>"));
    free(mb.p);
    rt_report_free(rp);
    rt_stats_free(st);

    /* no phases: no bands, no table */
    assert_int_equal(rt_report_new_with(NULL, &rp), RT_OK);
    assert_int_equal(rt_stats_new_with(NULL, &st), RT_OK);
    rt_record x;
    rt_record_null(&x);
    x.timestamp_secs = 5;
    x.interval_secs = 1;
    x.process_pid = 1;
    x.process_cores = 1;
    rt_report_add_sized(rp, &x, sizeof x);
    rt_stats_add_sized(st, &x, sizeof x);
    info.summary = rt_stats_summary(st);
    mb = (membuf){0};
    assert_int_equal(rt_report_write_cb(rp, &info, to_mem, &mb), RT_OK);
    to_mem(&mb, "", 1);
    assert_null(strstr(mb.p, ",ph:["));
    assert_non_null(strstr(mb.p, ",quota:null};"));
    assert_null(strstr(mb.p, "phase-table"));
    free(mb.p);
    rt_report_free(rp);
    rt_stats_free(st);
}

/* The embedded tracker's copy of a summary (rt_tracker_summary): its phases stay as they were
 * when the statistics go on. */
static void holder_copy(void **state)
{
    (void)state;
    run r;
    exactness_run(&r, RT_PHASE_CPU_GROUP);
    mk(&r, RT_PHASE_START, "later", 105.5, RT_PHASE_CPU_NONE, 0, 0, 0);
    rec(&r, 106, 1, 1, 100, 520, 0, 0);
    rt_summary copy = *rt_stats_summary(r.st);
    rt_phase_copy *keep = NULL;
    rt_phase_copy_into(&keep, &copy);
    assert_int_equal(copy.phase_count, 3);
    /* the tables are the copy's own: "later" (0.5 s at 1 core) grows in the statistics */
    assert_non_null(copy.phases[2]->cores);
    assert_ptr_not_equal(copy.phases[2]->cores, rt_stats_summary(r.st)->phases[2]->cores);
    NEAR(copy.phases[2]->cores->duration_secs, 0.5);
    NEAR(copy.phases[0]->cores->rows[0].duration_secs, 4.0);
    for (int i = 0; i < 5; i++) /* the statistics go on, names and all */
        rec(&r, 107 + i, 1, 8.0, 100, 520, 0, 0); /* 8 cores: its table grows to 9 rows */
    mk(&r, RT_PHASE_START, "more", 111.5, RT_PHASE_CPU_NONE, 0, 0, 0);
    rec(&r, 112, 1, 1, 100, 520, 0, 0);
    assert_int_equal(rt_stats_summary(r.st)->phase_count, 4);
    assert_int_equal(copy.phase_count, 3);
    assert_string_equal(copy.phases[2]->name, "later");
    NEAR(copy.phases[2]->duration_secs, 0.5);
    NEAR(copy.phases[2]->cores->duration_secs, 0.5);
    assert_int_equal(copy.phases[2]->cores->n, 2);
    NEAR(copy.phases[2]->cores->rows[0].duration_secs, 0.5);
    NEAR(copy.phases[0]->cores->rows[1].duration_secs, 2.05);
    assert_int_equal(rt_stats_summary(r.st)->phases[2]->cores->n, 9);
    assert_int_equal(copy.phase_counts->accepted, 5);
    rt_phase_copy_into(&keep, &copy); /* again: the copy of the copy holds */
    assert_string_equal(copy.phases[0]->name, "long");
    NEAR(copy.phases[0]->cores->rows[1].duration_secs, 2.05);
    NEAR(copy.phases[2]->cores->rows[0].duration_secs, 0.5);
    rt_phase_copy_free(keep);
    rt_stats_free(r.st);
}

/* Issue 49: without the job's cgroup a phase's need takes the processes' peaks at once where
 * they rose within it (process_peaks, a lower bound); with the cgroup's figure they are no
 * candidate, as for the run. */
static void peaks_at_once(void **state)
{
    (void)state;
    for (int with_cg = 0; with_cg < 2; with_cg++) {
        run r;
        run_new(&r);
        rec_cg = with_cg ? 100 : NAN;
        rec_tree = 60;
        rec(&r, 101, 1, 0.2, 50, 50, 0, 0);
        mk(&r, RT_PHASE_START, "pool", 101.5, RT_PHASE_CPU_NONE, 0, 0, 0);
        rec(&r, 102, 1, 0.2, 50, 50, 0, 0);
        rec_tree = 700; /* 16 workers at their peaks together between 102 and 103 */
        rec_cg = with_cg ? 300 : NAN; /* the group saw them exactly */
        rec(&r, 103, 1, 0.2, 50, 52, 0, 0);
        mk(&r, RT_PHASE_STOP, "pool", 103.5, RT_PHASE_CPU_NONE, 0, 0, 0);
        rec(&r, 104, 1, 0.2, 50, 52, 0, 0);
        const rt_phase_summary *p = find(rt_stats_summary(r.st), "pool");
        if (with_cg) {
            NEAR(p->memory_need.mib, 300);
            assert_int_equal(p->memory_need.source, RT_NEED_CGROUP);
            assert_int_equal(p->memory_need.sampled, 0);
        } else {
            NEAR(p->memory_need.mib, 700);
            assert_int_equal(p->memory_need.source, RT_NEED_PROCESS_PEAKS);
            assert_int_equal(p->memory_need.sampled, 1);
        }
        rt_stats_free(r.st);
    }
    rec_tree = rec_cg = NAN;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_at_marks),
        cmocka_unit_test(pro_rated),
        cmocka_unit_test(nested_recursive_unterminated),
        cmocka_unit_test(through_pipeline),
        cmocka_unit_test(phase_tables),
        cmocka_unit_test(summary_json),
        cmocka_unit_test(line_member),
        cmocka_unit_test(read_back),
        cmocka_unit_test(text_and_note),
        cmocka_unit_test(report),
        cmocka_unit_test(holder_copy),
        cmocka_unit_test(peaks_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
