/* test_cores.c - the run under other core counts (cores.c) and the CPU answer made from it
 * (recommend.c): the interval model, the table against the model summed record by record, the
 * ask (fewest within the slowdown bound, the throttled floor, several runs), the price, the
 * SLURM time limit, the words, and an older caller's shorter struct. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"
#include "analysis/cores.h"
#include "blank_record.h"

#define assert_near(got, want, eps) near_((got), (want), (eps), #got, __LINE__)
static void near_(double got, double want, double eps, const char *what, int line)
{
    if (!(fabs(got - want) <= eps))
        fail_msg("line %d: %s = %.17g, want %.17g (within %g)", line, what, got, want, eps);
}

/* A record of dt seconds in which the tree used u cores, on a machine of had cores, with its
 * group's CPU pressure "some" at pct percent (NaN: none). */
static rt_record rec(double ts, double dt, double u, double had, double pct)
{
    rt_record r = blank_record(ts, dt);
    r.process_pid = 42;
    r.process_cores = u;
    r.process_cpu_secs = u * dt;
    r.process_pss_mib = 100;
    r.cpu_count = had;
    r.pressure_cpu_some_pct = pct;
    r.pressure_group = isnan(pct) ? NAN : 1;
    r.process_cpu_wait_cores = NAN; /* the pressure model (records before 0.20) */
    return r;
}

/* A record of the demand model: its tasks waited wc on average, other work used others of the
 * machine's cpus cores beside it. */
static rt_record rec_demand(double ts, double dt, double u, double wc, double cpus, double others)
{
    rt_record r = rec(ts, dt, u, cpus, 50); /* a pressure figure the demand model ignores */
    r.process_cpu_wait_cores = wc;
    r.cpu_cores = u + others;
    return r;
}

/* One interval under c cores: wider work slows by u / c, narrower is unchanged, and past the
 * cores the run had it is faster by its waits at most and never faster than its work spread. */
static void interval_model(void **state)
{
    (void)state;
    assert_near(rt_cores_interval(1, 1.5, 2, 0, 1), 1.5, 1e-12);
    assert_near(rt_cores_interval(2, 0.5, 2, 0, 1), 2, 1e-12);
    assert_near(rt_cores_interval(1, 2, 2, 0, 2), 1, 1e-12);
    assert_near(rt_cores_interval(1, 2, 2, 0.3, 3), 0.7, 1e-12);     /* the waits bound it */
    assert_near(rt_cores_interval(1, 2, 2, 0.9, 3), 2.0 / 3, 1e-12); /* the spread bounds it */
    assert_near(rt_cores_interval(1, 2, 2, NAN, 3), 1, 1e-12);       /* no pressure: no gain */
    assert_near(rt_cores_interval(1, 2, NAN, 0.5, 3), 1, 1e-12);     /* had unknown: no gain */
    assert_near(rt_cores_interval(1, 2.3, 2, 0, 2), 1, 1e-12);       /* above what it had: jitter */
    assert_near(rt_cores_interval(1, NAN, 2, 0, 1), 1, 1e-12);       /* nothing known: as it was */
    /* 0.20, from the job's own demand (p = used + waiting tasks) */
    assert_near(rt_cores_interval_demand(6.6, 0.38, 0.62, 1), 6.6 * 0.38, 1e-12); /* one task, other work's waits */
    assert_near(rt_cores_interval_demand(6.6, 0.38, 0.62, 3), 6.6 * 0.38, 1e-12); /* no faster: one task */
    assert_near(rt_cores_interval_demand(1, 1.2, 2.8, 2), 0.6, 1e-12);            /* four tasks on two cores */
    assert_near(rt_cores_interval_demand(1, 1.2, 2.8, 4), 0.3, 1e-12);            /* all four at once */
    assert_near(rt_cores_interval_demand(1, 1.2, 2.8, 9), 0.3, 1e-12);            /* never more than four */
    assert_near(rt_cores_interval_demand(1, 1.2, 2.8, 1), 1.2, 1e-12);            /* one after the other */
    assert_near(rt_cores_interval_demand(1.5, 1.0 / 3, 1.0 / 3, 1), 1.0, 1e-12);  /* half asleep: sleep stays */
    assert_near(rt_cores_interval_demand(1, 0, 1, 1), 0, 1e-12);                  /* starved: no work done */
    assert_near(rt_cores_interval_demand(1, 0.2, 0, 4), 1, 1e-12);                /* a light task: as it was */
}

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffff;
}

/* The table, made with its running sums, is the model summed interval by interval, for every
 * count, over records of every kind (narrow, wide, waiting throughout, no pressure, no figure). */
static void table_is_the_sum(void **state)
{
    (void)state;
    rt_cores_acc *a = malloc(sizeof *a);
    assert_non_null(a);
    rt_cores_init(a);
    enum { N = 400 };
    static double want[RT_CORES_MAX + 1];
    memset(want, 0, sizeof want);
    unsigned seed = 7;
    double secs = 0;
    for (int i = 0; i < N; i++) {
        double dt = 0.05 + lcg(&seed) / 65536.0;
        double had = (double)(1 + lcg(&seed) % 12);
        double u = had * lcg(&seed) / 65536.0 * 1.1;
        double pct = i % 7 == 0 ? NAN : i % 11 == 0 ? 100 : 100.0 * lcg(&seed) / 65536.0;
        if (i % 13 == 0)
            u = NAN;
        bool demand = i % 3 == 0 && !isnan(u) && i > 0; /* the first: the pressure model's "group" */
        double wc = 3.0 * lcg(&seed) / 65536.0;
        rt_record r = demand ? rec_demand(i, dt, u, wc, had, 0) : rec(i, dt, u, had, pct);
        rt_cores_add(a, &r, dt);
        secs += dt;
        double wait = isnan(pct) ? NAN : pct / 100 * dt;
        for (int c = 1; c <= RT_CORES_MAX; c++)
            want[c] += demand ? rt_cores_interval_demand(dt, fmin(u, had), wc, c) : rt_cores_interval(dt, u, had, wait, c);
    }
    const rt_cores_table *t = rt_cores_result(a);
    assert_non_null(t);
    assert_true(t->n >= 13); /* above the 12 cores it had, and past its tasks' demand */
    assert_near(t->duration_secs, secs, 1e-9);
    assert_near(t->cores_had, 12, 0);
    assert_string_equal(t->wait_from, "tasks");
    for (size_t c = 1; c <= t->n; c++) {
        assert_int_equal(t->rows[c - 1].cores, (int64_t)c);
        assert_near(t->rows[c - 1].duration_secs, want[c], 1e-9);
        assert_near(t->rows[c - 1].core_hours, (double)c * want[c] / 3600, 1e-12);
        assert_int_equal(t->rows[c - 1].wait_bound, c > 12);
    }
    rt_cores_free(a);
    free(a);
}

/* Issue 66's shared machine: a single-threaded job on a 2-core machine whose other work took
 * 1.6 cores (the job 0.38, its one task waiting the rest of the time): every count predicts the
 * job's own CPU time, the ask is 1 core, no count is cheaper than it, and the table says the
 * machine was shared. A 4-process job there: its own demand asks 2 (the machine's), the counts
 * above it are never cheaper in core-hours. */
static void shared_machine(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 33; i++) {
        rt_record x = rec_demand(i + 1, 0.2, 0.38, 0.62, 2, 1.6);
        rt_stats_add(st, &x);
    }
    const rt_summary *s = rt_stats_summary(st);
    const rt_cores_table *t = s->cores;
    assert_non_null(t);
    assert_near(t->duration_secs, 6.6, 1e-9);
    assert_near(t->own_secs, 6.6 * 0.38, 1e-9);
    assert_near(t->demand_cores, 1, 1e-12);
    assert_near(t->others_cores, 1.6, 1e-9);
    assert_near(t->machine_cores, 2, 0);
    for (size_t c = 1; c <= t->n; c++)
        assert_near(t->rows[c - 1].duration_secs, 6.6 * 0.38, 1e-9);
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    const rt_summary *runs[] = {s};
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.cpu, 1);
    char words[96];
    assert_true(rt_cores_shared_words(t, words, sizeof words) > 0);
    assert_string_equal(words, "other work used 1.6 of 2 cores");
    rt_note n[RT_NOTES_MAX];
    size_t k = rt_summary_notes(s, NULL, n, RT_NOTES_MAX), found = 0;
    for (size_t i = 0; i < k; i++)
        if (n[i].kind == RT_NOTE_CPU_SHARED) {
            found++;
            assert_non_null(strstr(n[i].text, "other work used 1.6 of 2 cores beside the job: the CPU answer's times "
                                              "are the job's own"));
        }
    assert_int_equal(found, 1);
    rt_stats_free(st);

    st = rt_stats_new(); /* four tasks, the machine's two cores shared with 1.2 of other work */
    for (int i = 0; i < 20; i++) {
        rt_record x = rec_demand(i + 1, 0.5, 0.8, 3.2, 2, 1.2);
        rt_stats_add(st, &x);
    }
    s = rt_stats_summary(st);
    t = s->cores;
    runs[0] = s;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.cpu, 2);
    assert_near(t->own_secs, 20 * 0.5 * 0.8 / 2, 1e-9);
    assert_int_equal(t->n, 5);
    for (size_t c = 3; c <= t->n; c++)
        assert_true(t->rows[c - 1].core_hours >= t->rows[1].core_hours - 1e-12);
    assert_near(t->rows[3].duration_secs, 20 * 0.5 * 0.8 / 4, 1e-9);
    assert_near(t->rows[4].duration_secs, 20 * 0.5 * 0.8 / 4, 1e-9); /* four tasks: no gain past 4 */
    /* quiet: nothing said */
    rt_stats_free(st);
    st = rt_stats_new();
    for (int i = 0; i < 5; i++) {
        rt_record x = rec_demand(i + 1, 1, 1, 0, 2, 0.1);
        rt_stats_add(st, &x);
    }
    assert_int_equal(rt_cores_shared_words(rt_stats_summary(st)->cores, words, sizeof words), 0);
    assert_string_equal(words, "");
    rt_stats_free(st);
}

/* A summary of records made by make(i, &r) for i = 0 .. n-1. */
static const rt_summary *run_of(rt_stats *st, int n, rt_record (*make)(int))
{
    for (int i = 0; i < n; i++) {
        rt_record r = make(i);
        rt_stats_add(st, &r);
    }
    return rt_stats_summary(st);
}

static rt_record phased(int i) /* 10 s on one core, then 10 s on two */
{
    return rec(i + 1, 1, i < 10 ? 1 : 2, 2, 0);
}
static rt_record single(int i)
{
    return rec(i + 1, 1, 0.98, 2, 0);
}
static rt_record idle(int i) /* I/O: little CPU */
{
    return rec(i + 1, 1, 0.05, 2, 0);
}
static rt_record throttled(int i) /* two threads held to a quota of one core */
{
    rt_record r = rec(i + 1, 1, 1, 2, 60);
    r.cgroup_cpu_quota_cores = 1;
    r.cgroup_cpu_periods = 10.0 * (i + 1);
    r.cgroup_cpu_throttled_periods = 8.0 * (i + 1);
    return r;
}

/* The ask: the fewest cores within the bound, with its predicted time, one fewer's, and the
 * time limit that goes with it. */
static void ask_follows_the_table(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    const rt_summary *s = run_of(st, 20, phased);
    assert_non_null(s->cores);
    assert_near(s->cores->rows[0].duration_secs, 30, 1e-9); /* the 2-core half takes twice */
    assert_near(s->cores->rows[1].duration_secs, 20, 1e-9);
    const rt_summary *runs[] = {s};
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.cpu, 2); /* not round(mean 1.5) = 2 by luck: 1 core is +50% */
    assert_string_equal(r.cpu_basis, "duration");
    assert_near(r.cpu_duration_secs, 20, 1e-9);
    assert_near(r.cpu_run_duration_secs, 20, 1e-9);
    assert_int_equal(r.cpu_fewer, 1);
    assert_near(r.cpu_fewer_duration_secs, 30, 1e-9);
    assert_near(r.time_limit_secs, 600, 0); /* at least 10 minutes */
    assert_near(r.max_slowdown_pct, 10, 0);
    assert_true(isnan(r.cpu_cost_usd));
    char line[256];
    rt_format_recommendation(&r, RT_SCHED_SLURM, line, sizeof line);
    assert_string_equal(line, "--cpus-per-task=2 --mem=128M --time=0:10:00\n");
    rt_recommendation_time_words(&r, line, sizeof line);
    assert_string_equal(line, "2 cores: about 20 s, as this run; 1 core: about 30 s (+50%)");
    /* a bound of 60%: one core will do, and the price is said */
    rt_recommend_options o = RT_RECOMMEND_OPTIONS_INIT;
    o.max_slowdown_pct = 60;
    o.usd_per_core_hour = 0.05;
    assert_int_equal(rt_recommend_with(&o, runs, 1, &r), RT_OK);
    assert_int_equal(r.cpu, 1);
    assert_near(r.cpu_duration_secs, 30, 1e-9);
    assert_near(r.cpu_cost_usd, 0.05 * 30 / 3600, 1e-12);
    assert_int_equal(r.cpu_fewer, 0);
    assert_true(isnan(r.cpu_fewer_duration_secs));
    rt_recommendation_time_words(&r, line, sizeof line);
    assert_string_equal(line, "1 core: about 30 s, +50% on this run's 20 s, $0.0004167 a run");
    /* bad options */
    o.max_slowdown_pct = -1;
    assert_int_equal(rt_recommend_with(&o, runs, 1, &r), RT_ERR_INVALID);
    o.max_slowdown_pct = NAN;
    assert_int_equal(rt_recommend_with(&o, runs, 1, &r), RT_ERR_INVALID);
    rt_stats_free(st);
}

/* A single-threaded run and an idle one ask for one core, as long as they took; a long run's
 * time limit is half again its prediction in whole minutes, in days past one. */
static void narrow_runs_and_long_limits(void **state)
{
    (void)state;
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    rt_record (*makers[])(int) = {single, idle};
    for (int k = 0; k < 2; k++) {
        rt_stats *st = rt_stats_new();
        const rt_summary *runs[] = {run_of(st, 30, makers[k])};
        assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
        assert_int_equal(r.cpu, 1);
        assert_near(r.cpu_duration_secs, 30, 1e-9);
        rt_stats_free(st);
    }
    char line[256];
    r.time_limit_secs = 90000;
    rt_format_recommendation(&r, RT_SCHED_SLURM, line, sizeof line);
    assert_string_equal(line, "--cpus-per-task=1 --mem=128M --time=1-01:00:00\n");
}

/* A run a quota throttled asks above the quota, and says so; two runs: each within the bound. */
static void throttled_and_several_runs(void **state)
{
    (void)state;
    rt_stats *a = rt_stats_new(), *b = rt_stats_new();
    const rt_summary *runs[] = {run_of(a, 10, throttled), run_of(b, 20, phased)};
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.cpu, 2); /* the quota of 1, plus one */
    assert_string_equal(r.cpu_basis, "throttled");
    /* above the quota it had, the run is faster by its waits (60%) at most, and no faster than its
     * work spread over the cores: half, on 2 */
    assert_near(runs[0]->cores->rows[1].duration_secs, 5, 1e-9);
    assert_int_equal(runs[0]->cores->n, 2); /* a little above the one core it had */
    assert_int_equal(runs[0]->cores->rows[1].wait_bound, 1);
    /* the throttled run wants 1 core by its table, the phased one 2: 2 for both */
    rt_recommend_options o = RT_RECOMMEND_OPTIONS_INIT;
    assert_int_equal(rt_recommend_with(&o, runs, 2, &r), RT_OK);
    assert_int_equal(r.cpu, 2);
    assert_near(r.cpu_duration_secs, 20, 1e-9); /* the slowest run's prediction */
    /* the note says how many runs agree: the throttled one asks for 2 by its floor, the phased
     * one by its table */
    rt_note notes[RT_NOTES_MAX];
    size_t n = rt_recommend_notes(runs, 2, &r, notes, RT_NOTES_MAX);
    bool said = false;
    for (size_t i = 0; i < n; i++)
        if (notes[i].kind == RT_NOTE_CPU_RUNS) {
            assert_string_equal(notes[i].text,
                                "all 2 runs ask for 2 cores on their own (predicted within 10% of each run)");
            said = true;
        }
    assert_true(said);
    /* with a bound of 60% the phased run alone asks for 1: one of the two agrees */
    o.max_slowdown_pct = 60;
    rt_stats *c = rt_stats_new();
    const rt_summary *two[] = {run_of(c, 20, phased), runs[0]};
    assert_int_equal(rt_recommend_with(&o, two, 2, &r), RT_OK);
    assert_int_equal(r.cpu, 2);
    n = rt_recommend_notes(two, 2, &r, notes, RT_NOTES_MAX);
    said = false;
    for (size_t i = 0; i < n; i++)
        if (notes[i].kind == RT_NOTE_CPU_RUNS) {
            assert_string_equal(notes[i].text,
                                "1 of the 2 runs ask for 2 cores on their own, 1 for fewer: the ask keeps "
                                "every run within 60% of its own duration");
            said = true;
        }
    assert_true(said);
    rt_stats_free(c);
    rt_stats_free(a);
    rt_stats_free(b);
}

/* A caller built before 0.18 gets none of the new fields written, no time in its SLURM words and
 * no time words; a summary without a table (an older history's) gets the mean rule. */
static void older_callers(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_summary s = *run_of(st, 20, phased);
    const rt_summary *runs[] = {&s};
    rt_recommendation old;
    memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(rt_recommendation, max_slowdown_pct);
    assert_int_equal(rt_recommend(runs, 1, &old), RT_OK);
    assert_int_equal(old.cpu, 2);
    assert_int_equal(old.cpu_fewer, 0x5a5a5a5a5a5a5a5aLL);
    char line[256];
    assert_int_equal(rt_recommendation_time_words(&old, line, sizeof line), 0);
    assert_string_equal(line, "");
    rt_format_recommendation(&old, RT_SCHED_SLURM, line, sizeof line);
    assert_string_equal(line, "--cpus-per-task=2 --mem=128M\n");
    s.cores = NULL;
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_string_equal(r.cpu_basis, "mean");
    assert_int_equal(r.cpu, 2); /* round(1.5) */
    assert_true(isnan(r.cpu_duration_secs));
    assert_true(isnan(r.time_limit_secs));
    rt_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interval_model),
        cmocka_unit_test(table_is_the_sum),
        cmocka_unit_test(shared_machine),
        cmocka_unit_test(ask_follows_the_table),
        cmocka_unit_test(narrow_runs_and_long_limits),
        cmocka_unit_test(throttled_and_several_runs),
        cmocka_unit_test(older_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
