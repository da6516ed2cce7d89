/* test_stats.c - statistics over records (analysis/stats.c, histogram.c): hand-computed means,
 * percentiles, totals and maxima on small sequences, NaN handling, the percentile error bound
 * against exact sorted percentiles on random data, the time to absorb a day of records, and
 * the 0.6 cgroup figures (OOM kills, throttling, several runs) with the recommendations on them,
 * and the 0.15 energy figures (sums, the least exact method, power, idle floor, carbon). */
#include "unit.h"

#include <math.h>
#include <time.h>

#include "resource_tracker.h"
#include "analysis/histogram.h"
#include "analysis/record.h"
#include "blank_record.h"

/* got within eps of want (this cmocka has no assert_double_equal) */
#define assert_near(got, want, eps) near_((got), (want), (eps), #got, __LINE__)
static void near_(double got, double want, double eps, const char *what, int line)
{
    if (!(fabs(got - want) <= eps))
        fail_msg("line %d: %s = %.17g, want %.17g (within %g)", line, what, got, want, eps);
}

/* A record with every figure NaN (no machine figure, no tree) at timestamp ts. */
static rt_record blank(double ts, double interval)
{
    return blank_record(ts, interval);
}

static void assert_nan(double v)
{
    assert_true(isnan(v));
}

static void assert_dist_nan(const rt_dist *d)
{
    assert_nan(d->mean);
    assert_nan(d->peak);
    assert_nan(d->p50);
    assert_nan(d->p95);
}

static void empty(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    const rt_summary *s = rt_stats_summary(st);
    assert_non_null(s);
    assert_int_equal(s->samples, 0);
    assert_nan(s->start_secs);
    assert_nan(s->end_secs);
    assert_null(s->job_name);
    assert_null(s->allocation);
    assert_int_equal(s->has_process, 0);
    assert_nan(s->process_cpu_secs);
    assert_dist_nan(&s->process_cores);
    assert_dist_nan(&s->process_rss_mib);
    assert_dist_nan(&s->cpu_cores);
    assert_dist_nan(&s->gpu_vram_mib);
    assert_nan(s->disk_read_bytes);
    assert_nan(s->cpu_count);
    assert_nan(s->disk_space_used_peak_bytes);
    assert_nan(s->end_signal); /* 0.21: not known until set */
    assert_int_equal(rt_stats_set_end_signal(st, 15), RT_OK);
    assert_true(rt_stats_summary(st)->end_signal == 15);
    assert_int_equal(rt_stats_set_end_signal(st, -1), RT_ERR_INVALID);
    assert_int_equal(rt_stats_set_end_signal(st, 65), RT_ERR_INVALID);
    assert_int_equal(rt_stats_set_end_signal(NULL, 0), RT_ERR_INVALID);
    assert_true(rt_stats_summary(st)->end_signal == 15);
    /* 0.21: a table's own duration, else (older) its records' */
    rt_cores_table t = {.duration_secs = 10, .own_secs = NAN};
    assert_true(rt_cores_own_secs(&t) == 10);
    t.own_secs = 8;
    assert_true(rt_cores_own_secs(&t) == 8);
    assert_nan(rt_cores_own_secs(NULL));
    rt_stats_add(st, NULL); /* ignored */
    rt_stats_add(NULL, NULL);
    assert_int_equal(rt_stats_summary(st)->samples, 0);
    assert_null(rt_stats_summary(NULL));
    rt_stats_free(st);
    rt_stats_free(NULL);
}

/* cores 1, 2, 3 over 1, 1 and 2 seconds: mean (1 + 2 + 6) / 4 = 2.25; half the time is at
 * most 2, 95% needs the 3. */
static void weighted(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    const double cores[] = {1, 2, 3}, iv[] = {1, 1, 2}, ts[] = {101, 102, 104};
    for (int i = 0; i < 3; i++) {
        rt_record r = blank(ts[i], iv[i]);
        r.cpu_cores = cores[i];
        r.cpu_count = 4 + i % 2; /* 4, 5, 4 */
        r.disk_read_bytes = 1000.0 * (i + 1);
        r.disk_space_used_bytes = 5e9 - 1e9 * i;
        r.disk_space_total_bytes = 1e10;
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_int_equal(s->samples, 3);
    assert_near(s->start_secs, 100, 1e-9);
    assert_near(s->end_secs, 104, 1e-9);
    assert_near(s->duration_secs, 4, 1e-9);
    assert_near(s->cpu_cores.mean, 2.25, 1e-12);
    assert_near(s->cpu_cores.peak, 3, 0);
    assert_near(s->cpu_cores.p50, 2, 2.0 / 256);
    assert_near(s->cpu_cores.p95, 3, 3.0 / 256);
    assert_near(s->cpu_count, 5, 0);
    assert_near(s->disk_read_bytes, 6000, 0);
    assert_nan(s->disk_write_bytes); /* no record had it */
    assert_near(s->disk_space_used_peak_bytes, 5e9, 0);
    assert_near(s->disk_space_total_bytes, 1e10, 0);
    assert_int_equal(s->has_process, 0);
    assert_dist_nan(&s->process_cores);
    assert_null(s->allocation); /* no tree: the rule says nothing */
    rt_stats_free(st);
}

/* A short record folds into its neighbour, and only into it: after a long first interval and a
 * short second (a slow start), the run's later intervals stay apart, so the peak is theirs (the
 * fold once compared each record with the window it had grown, and folded the whole run). */
static void fold_only_into_the_neighbour(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    const double cores[] = {0.9, 0.9, 1.0, 1.5, 1.0, 1.0}, iv[] = {0.186, 0.039, 0.1, 0.1, 0.1, 0.1};
    double t = 100;
    for (int i = 0; i < 6; i++) {
        t += iv[i];
        rt_record r = blank(t, iv[i]);
        r.cpu_cores = cores[i];
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_near(s->cpu_cores.peak, 1.5, 0);
    rt_stats_free(st);
}

/* Records without an interval count one second; NaN figures are left out of the mean. */
static void nan_handling(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_record r = blank(50, NAN);
    r.memory_used_mib = 1000;
    rt_stats_add(st, &r);
    r = blank(60, 10);
    r.memory_used_mib = NAN; /* a gap */
    rt_stats_add(st, &r);
    r = blank(62, 2);
    r.memory_used_mib = 4000;
    rt_stats_add(st, &r);
    r = blank(63, -1); /* nonsense interval: one second */
    r.memory_used_mib = 3000;
    rt_stats_add(st, &r);
    const rt_summary *s = rt_stats_summary(st);
    assert_near(s->start_secs, 50, 0); /* no interval: the timestamp */
    assert_near(s->end_secs, 63, 0);
    assert_near(s->duration_secs, 1 + 10 + 2 + 1, 1e-9);
    /* (1000*1 + 4000*2 + 3000*1) / 4 */
    assert_near(s->memory_used_mib.mean, 3000, 1e-9);
    assert_near(s->memory_used_mib.peak, 4000, 0);
    assert_near(s->memory_used_mib.p50, 3000, 3000.0 / 256);
    assert_dist_nan(&s->cpu_cores);
    rt_stats_free(st);
}

/* A tree that appears midway; its CPU seconds from the exact total when the records have it. */
static void process_midway(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 6; i++) {
        rt_record r = blank(1000 + i, 1);
        r.cpu_cores = 4;
        r.memory_used_mib = 8000;
        r.gpu_usage = 0;
        r.gpu_vram_mib = NAN;
        if (i >= 2) {
            r.process_pid = 42;
            r.process_cores = i; /* 2, 3, 4, 5 */
            r.process_cpu_secs = i;
            r.process_cpu_secs_total = 100 + i;
            r.process_pss_mib = 7000;
            r.process_rss_mib = 100.0 * i;
            r.process_rss_peak_mib = i == 3 ? 900 : NAN;
            r.process_read_bytes = 10;
            r.process_gpu_utilized = i == 4 ? 2 : 0;
        }
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_int_equal(s->has_process, 1);
    assert_near(s->process_cores.mean, 3.5, 1e-12);
    assert_near(s->process_cores.peak, 5, 0);
    assert_near(s->process_cpu_secs, 105, 0); /* the total, not 2+3+4+5 */
    assert_near(s->process_rss_mib.mean, 350, 1e-9);
    assert_near(s->process_rss_mib.peak, 900, 0); /* the kernel's peak */
    assert_near(s->process_read_bytes, 40, 0);
    assert_nan(s->process_write_bytes);
    assert_near(s->process_gpus_used, 2, 0);
    assert_dist_nan(&s->process_gpu_vram_mib);
    assert_string_equal(s->allocation, "dedicated"); /* 4 busy cores, the tree 3.5 of them */
    rt_stats_free(st);

    /* without the total: the sum of the intervals' CPU seconds */
    st = rt_stats_new();
    for (int i = 0; i < 3; i++) {
        rt_record r = blank(i, 1);
        r.process_cores = 0.5;
        r.process_cpu_secs = 0.5;
        r.process_rss_mib = 10;
        rt_stats_add(st, &r);
    }
    s = rt_stats_summary(st);
    assert_near(s->process_cpu_secs, 1.5, 1e-12);
    assert_near(s->process_rss_mib.peak, 10, 0);
    assert_int_equal(s->has_process, 1);
    rt_stats_free(st);
}

/* The allocation guess after ten one-second records of the machine's and the tree's cores
 * and memory. */
static const char *guess(double sys_cores, double proc_cores, double used_mib, double pss_mib)
{
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 10; i++) {
        rt_record r = blank(i, 1);
        r.cpu_cores = sys_cores;
        r.process_cores = proc_cores;
        r.memory_used_mib = used_mib;
        r.process_pss_mib = pss_mib;
        rt_stats_add(st, &r);
    }
    const char *g = rt_stats_summary(st)->allocation; /* static storage */
    rt_stats_free(st);
    return g;
}

/* The same rule as rt_allocation: others' cores or memory make the machine shared. */
static void allocation(void **state)
{
    (void)state;
    assert_string_equal(guess(6, 2, 9000, 8500), "shared");
    assert_string_equal(guess(1, 0.9, 30000, 2000), "shared"); /* 28 GiB used by others */
    assert_string_equal(guess(3.9, 3.8, 9000, 8500), "dedicated");
    assert_null(guess(4, NAN, 9000, NAN)); /* no tree: nothing said */
}

/* The first job name, copied (the record's string is gone after the call), cut at 255 bytes
 * without splitting a UTF-8 character. */
static void job_name(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    char name[16] = "first";
    rt_record r = blank(1, 1);
    rt_stats_add(st, &r);
    r.job_name = name;
    rt_stats_add(st, &r);
    memcpy(name, "gone", 5);
    r.job_name = "second";
    rt_stats_add(st, &r);
    assert_string_equal(rt_stats_summary(st)->job_name, "first");
    rt_stats_free(st);

    char long_name[400];
    memset(long_name, 'a', 254);
    memcpy(long_name + 254, "\xc3\xa9 and more", 12); /* e-acute straddles byte 255 */
    st = rt_stats_new();
    r.job_name = long_name;
    rt_stats_add(st, &r);
    const char *kept = rt_stats_summary(st)->job_name;
    assert_int_equal(strlen(kept), 254);
    assert_int_equal(strspn(kept, "a"), 254);
    rt_stats_free(st);
}

/* ---- the percentile bound ----------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15u;

static double uniform(void) /* (0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

typedef struct {
    double v, w;
} pair;

static int by_value(const void *a, const void *b)
{
    double x = ((const pair *)a)->v, y = ((const pair *)b)->v;
    return x < y ? -1 : x > y;
}

/* The exact weighted percentile of p (sorted): the smallest v with weight(<= v) >= q W. */
static double exact_percentile(const pair *p, size_t n, double total, double q)
{
    double cum = 0;
    for (size_t i = 0; i < n; i++) {
        cum += p[i].w;
        if (cum >= q * total && (i + 1 == n || p[i + 1].v != p[i].v))
            return p[i].v;
    }
    return p[n - 1].v;
}

static void check_bound(double est, double exact)
{
    double want = exact < 0 ? 0 : exact;
    if (want < RT_HIST_MIN) {
        assert_true(est < RT_HIST_MIN);
        return;
    }
    if (fabs(est - want) > want / 256 * (1 + 1e-12))
        fail_msg("percentile %.17g, exact %.17g: off by %.5f%%", est, want, 100 * fabs(est - want) / want);
}

enum { N_RANDOM = 20000 };

static double draw(int kind)
{
    switch (kind) {
    case 0: return 100 * uniform();                                   /* uniform cores/percent */
    case 1: return exp(3 + 2 * sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform())); /* log-normal MiB */
    case 2: return -0.01 * log(uniform());                            /* exponential, many below 0.001 */
    case 3: return floor(8 * uniform());                              /* few distinct values: ties */
    case 4: return pow(10, -4 + 13 * uniform());                      /* 1e-4 .. 1e9 */
    default: return 2 * uniform() - 0.5;                              /* some negative: clamp to 0 */
    }
}

static void percentile_bound(void **state)
{
    (void)state;
    static pair p[N_RANDOM];
    for (int kind = 0; kind < 6; kind++) {
        for (int weights = 0; weights < 3; weights++) {
            rt_stats *st = rt_stats_new();
            double total = 0;
            for (size_t i = 0; i < N_RANDOM; i++) {
                p[i].v = draw(kind);
                /* equal seconds; seconds varying 0.1 to 10; a few long intervals among short ones */
                p[i].w = weights == 0 ? 1 : weights == 1 ? 0.1 + 9.9 * uniform() : (uniform() < 0.01 ? 500 : 0.5);
                total += p[i].w;
                rt_record r = blank((double)i, p[i].w);
                r.memory_used_mib = p[i].v; /* a level: each record as it is (a rate's short ones fold) */
                rt_stats_add(st, &r);
            }
            const rt_summary *s = rt_stats_summary(st);
            qsort(p, N_RANDOM, sizeof p[0], by_value);
            for (size_t i = 0; i < N_RANDOM; i++)
                if (p[i].v < 0)
                    p[i].v = 0;
            check_bound(s->memory_used_mib.p50, exact_percentile(p, N_RANDOM, total, 0.50));
            check_bound(s->memory_used_mib.p95, exact_percentile(p, N_RANDOM, total, 0.95));
            assert_near(s->memory_used_mib.peak, p[N_RANDOM - 1].v, 0);
            assert_near(s->duration_secs, total, total * 1e-12);
            rt_stats_free(st);
        }
    }
}

/* Adds a record of interval iv in which the job used cores (and the machine as much). */
static void add_cores(rt_stats *st, double *t, double iv, double cores)
{
    *t += iv;
    rt_record r = blank(*t, iv);
    r.process_cores = r.cpu_cores = cores;
    r.combined.cores = cores;
    r.cpu_count = 2;
    rt_stats_add(st, &r);
}

/* A rate's short interval folds into its neighbour: the 2 ms after the job's end in which its
 * last process was reaped (3 cores for 2 ms) is no peak of 3 cores; a short first interval
 * folds into the next; a normal interval before a long stall stays its own; the mean is the
 * same either way, and reading the summary changes nothing. */
static void short_intervals_fold(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    double t = 0;
    add_cores(st, &t, 0.003, 4.0); /* the first tick, 3 ms after the start */
    for (int i = 0; i < 5; i++)
        add_cores(st, &t, 1.0, 0.5);
    add_cores(st, &t, 0.002, 3.0); /* the last one, after the exit */
    const rt_summary *s = rt_stats_summary(st);
    double mean = (0.003 * 4 + 5 * 0.5 + 0.002 * 3) / (0.003 + 5 + 0.002);
    assert_near(s->process_cores.mean, mean, 1e-9);
    double first = (0.003 * 4 + 0.5) / 1.003; /* the first second with the 3 ms before it: the peak */
    assert_true(first > (0.5 + 0.002 * 3) / 1.002);
    assert_near(s->process_cores.peak, first, 1e-9);
    assert_near(s->cpu_cores.peak, first, 1e-9);
    assert_near(s->usage->cpu[2].max_sum_pct, 100 * first, 1e-7);
    assert_near(s->usage->cpu_system.max_sum_pct, 100 * first, 1e-7);
    assert_near(s->process_cores.p95, 0.5, 0.5 / 256 + 0.01);
    /* read again: the same figures */
    double peak = s->process_cores.peak, p95 = s->process_cores.p95;
    s = rt_stats_summary(st);
    assert_near(s->process_cores.peak, peak, 0);
    assert_near(s->process_cores.p95, p95, 0);
    assert_near(s->process_cores.mean, mean, 1e-9);
    rt_stats_free(st);

    /* a normal second at 2 cores, then a 30 s stall at 0.1: the second keeps its peak */
    st = rt_stats_new();
    t = 0;
    add_cores(st, &t, 1.0, 0.2);
    add_cores(st, &t, 1.0, 2.0);
    add_cores(st, &t, 30.0, 0.1);
    s = rt_stats_summary(st);
    assert_near(s->process_cores.peak, 2.0, 0);
    assert_near(s->usage->cpu[2].max_sum_pct, 200.0, 0);
    /* and a short record in the middle folds into the one before it */
    add_cores(st, &t, 0.1, 9.0);
    add_cores(st, &t, 30.0, 0.1);
    s = rt_stats_summary(st);
    assert_near(s->process_cores.peak, (30 * 0.1 + 0.1 * 9) / 30.1 > 2.0 ? (30 * 0.1 + 0.1 * 9) / 30.1 : 2.0, 1e-9);
    rt_stats_free(st);
}

/* Percentiles of the histogram directly, at several q, and at the range's ends. */
static void histogram_edges(void **state)
{
    (void)state;
    static rt_hist h;
    rt_hist_init(&h);
    assert_nan(rt_hist_percentile(&h, 0.5));
    rt_hist_add(&h, NAN, 1);
    rt_hist_add(&h, INFINITY, 1);
    assert_nan(rt_hist_percentile(&h, 0.5));
    rt_hist_add(&h, 0.0005, 1);                  /* below 0.001: counts as 0 */
    assert_near(rt_hist_percentile(&h, 0.5), 0, 0);
    rt_hist_add(&h, 1e12, 1);                    /* beyond 2^31: the peak */
    assert_near(rt_hist_percentile(&h, 1.0), 1e12, 0);
    rt_hist_init(&h);
    for (int i = 1; i <= 128; i++)
        rt_hist_add(&h, i, 1);
    for (int q = 1; q <= 128; q++) /* q / 128 exact: no rounding at the boundaries */
        assert_near(rt_hist_percentile(&h, q / 128.0), q, q / 256.0);
    rt_hist_init(&h);
    rt_hist_add(&h, 7.3, 2);                     /* one value: exact (clamped to what was seen) */
    rt_dist d;
    rt_hist_dist(&h, &d);
    assert_near(d.p50, 7.3, 0);
    assert_near(d.p95, 7.3, 0);
    assert_near(d.mean, 7.3, 1e-12);
}

/* Not a pass/fail: prints how long a day of one-second records takes to absorb. */
static void speed(void **state)
{
    (void)state;
    enum { DAY = 86400 };
    static rt_record recs[DAY];
    for (int i = 0; i < DAY; i++) {
        rt_record r = blank(1.7e9 + i, 1);
        r.job_name = "bench";
        r.cpu_cores = 4 * uniform();
        r.cpu_count = 8;
        r.memory_used_mib = 4000 + 1000 * uniform();
        r.memory_total_mib = 16000;
        r.disk_read_bytes = r.disk_write_bytes = r.net_recv_bytes = r.net_sent_bytes = 1e5 * uniform();
        r.disk_space_total_bytes = 1e12;
        r.disk_space_used_bytes = 5e11;
        r.gpu_usage = uniform();
        r.gpu_vram_mib = 2000 * uniform();
        r.gpu_utilized = 1;
        r.gpu_count = 1;
        r.gpu_vram_total_mib = 24000;
        r.process_pid = 1234;
        r.process_children = 3;
        r.process_cores = 3 * uniform();
        r.process_cpu_secs = r.process_cores;
        r.process_cpu_secs_total = i;
        r.process_pss_mib = r.process_rss_mib = 3000 * uniform();
        r.process_rss_peak_mib = 3000;
        r.process_read_bytes = r.process_write_bytes = 1e4;
        r.process_gpu_usage = r.gpu_usage;
        r.process_gpu_vram_mib = r.gpu_vram_mib;
        r.process_gpu_utilized = 1;
        recs[i] = r;
    }
    rt_stats *st = rt_stats_new();
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < DAY; i++)
        rt_stats_add(st, &recs[i]);
    const rt_summary *s = rt_stats_summary(st);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(s->samples, DAY);
    print_message("86400 records absorbed and summarised in %.2f ms (rt_stats is %zu KiB)\n",
                  (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6,
                  sizeof(rt_hist) * 14 / 1024);
    rt_stats_free(st);
}

/* A file holding two runs one after the other: cpu_secs_total starts again from zero in the
 * second (and the pid changes), so the run's CPU time is the sum of each run's last total,
 * not the larger one. Start and end span both runs whatever their order. */
static void two_runs(void **state)
{
    (void)state;
    static const struct {
        double ts, pid, total;
    } recs[] = {
        {2000, 10, 1}, {2001, 10, 3}, {2002, 10, 5},   /* run A: 5 s */
        {1000, 20, 2}, {1001, 20, 4},                   /* run B, recorded earlier: 4 s */
        {3000, 30, 7},                                  /* run C: another pid, 7 s */
    };
    rt_stats *st = rt_stats_new();
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        rt_record r = blank(recs[i].ts, 1);
        r.process_pid = recs[i].pid;
        r.process_cpu_secs = 1;
        r.process_cpu_secs_total = recs[i].total;
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_near(s->process_cpu_secs, 5 + 4 + 7, 1e-9);
    assert_near(s->start_secs, 999, 1e-9);
    assert_near(s->end_secs, 3000, 1e-9);
    assert_near(s->duration_secs, 6, 1e-9);
    rt_stats_free(st);
}

/* A record of a tree in a cgroup: pid, OOM kills and throttling counters since tracking began,
 * a memory limit of 8 GiB and a quota of 2 cores. */
static rt_record cg_rec(double ts, double pid, double oom, double periods, double throttled)
{
    rt_record r = blank(ts, 1);
    r.process_pid = pid;
    r.process_cores = 2;
    r.cgroup_oom_kills = oom;
    r.cgroup_cpu_periods = periods;
    r.cgroup_cpu_throttled_periods = throttled;
    r.cgroup_cpu_throttled_secs = throttled * 0.05;
    r.cgroup_memory_limit_mib = 8192;
    r.cgroup_cpu_quota_cores = 2;
    r.cgroup_pids_peak = 3 + ts - 100;
    r.cgroup_pids_limit = 100;
    return r;
}

/* An OOM-killed run: kills 0, 0, 1, 1 (the third record saw it); throttled 4 of every 10
 * periods; the peak charge and the lowest limits kept; pressure as time-weighted dists. */
static void oom_killed_run(void **state)
{
    (void)state;
    static const double oom[] = {0, 0, 1, 1}, peak[] = {1000, 4000, 8100, 8100};
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 4; i++) {
        rt_record r = cg_rec(100 + i, 42, oom[i], 10 * (i + 1), 4 * (i + 1));
        r.process_memory_peak_mib = peak[i];
        r.pressure_cpu_some_pct = i == 0 ? NAN : 12;
        r.pressure_memory_some_pct = i == 0 ? NAN : 3 * i; /* 3, 6, 9 */
        if (i == 3) {
            r.cgroup_memory_limit_mib = 4096; /* lowered: the lowest counts */
            r.cgroup_pids_limit = 50;
        }
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_near(s->oom_kills, 1, 0);
    assert_near(s->oom_kill_secs, 102, 0);
    assert_near(s->process_memory_peak_mib, 8100, 0);
    assert_near(s->memory_limit_mib, 4096, 0);
    assert_nan(s->memory_high_mib);
    assert_near(s->cpu_quota_cores, 2, 0);
    assert_near(s->cpu_periods, 40, 0);
    assert_near(s->cpu_throttled_periods, 16, 0);
    assert_near(s->cpu_throttled_secs, 0.8, 1e-12);
    assert_near(s->pids_peak, 6, 0);
    assert_near(s->pids_limit, 50, 0);
    assert_near(s->pressure_cpu_some_pct.mean, 12, 1e-9);
    assert_near(s->pressure_memory_some_pct.mean, 6, 1e-9);
    assert_near(s->pressure_memory_some_pct.peak, 9, 0);
    assert_dist_nan(&s->pressure_io_some_pct);
    rt_stats_free(st);
}

/* Without a cgroup every 0.6 figure stays null; a run with no kill has oom_kills 0 and no
 * oom_kill_secs; a kill already counted at the first record is seen there. */
static void cgroup_nulls_and_first_record(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    rt_record r = blank(100, 1);
    r.process_pid = 1;
    rt_stats_add(st, &r);
    const rt_summary *s = rt_stats_summary(st);
    assert_nan(s->oom_kills);
    assert_nan(s->oom_kill_secs);
    assert_nan(s->process_memory_peak_mib);
    assert_nan(s->memory_limit_mib);
    assert_nan(s->cpu_quota_cores);
    assert_nan(s->cpu_periods);
    assert_nan(s->cpu_throttled_secs);
    assert_nan(s->pids_limit);
    assert_dist_nan(&s->pressure_cpu_some_pct);
    rt_stats_free(st);

    st = rt_stats_new();
    for (int i = 0; i < 3; i++) {
        r = cg_rec(100 + i, 7, 0, 10 * (i + 1), 0);
        rt_stats_add(st, &r);
    }
    s = rt_stats_summary(st);
    assert_near(s->oom_kills, 0, 0);
    assert_nan(s->oom_kill_secs);
    assert_near(s->cpu_throttled_periods, 0, 0);
    rt_stats_free(st);

    st = rt_stats_new();
    for (int i = 0; i < 2; i++) {
        r = cg_rec(100 + i, 7, 2, 10, 0);
        rt_stats_add(st, &r);
    }
    s = rt_stats_summary(st);
    assert_near(s->oom_kills, 2, 0);
    assert_near(s->oom_kill_secs, 100, 0);
    rt_stats_free(st);
}

/* Several runs in one file: each counter's last total per run, summed (a total going back or
 * another pid starts a run, as cpu_secs_total); the first kill is of whichever run saw it. */
static void cgroup_several_runs(void **state)
{
    (void)state;
    static const struct {
        double ts, pid, oom, periods, throttled;
    } recs[] = {
        {100, 10, 0, 10, 1}, {101, 10, 0, 20, 2}, {102, 10, 0, 30, 3}, /* run A: 3 of 30 */
        {200, 20, 0, 5, 5},  {201, 20, 1, 10, 10},                     /* run B: killed at 201, 10 of 10 */
        {300, 30, 1, 8, 0},                                            /* run C: another pid, 1 kill */
    };
    rt_stats *st = rt_stats_new();
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        rt_record r = cg_rec(recs[i].ts, recs[i].pid, recs[i].oom, recs[i].periods, recs[i].throttled);
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_near(s->oom_kills, 2, 0);
    assert_near(s->oom_kill_secs, 201, 0);
    assert_near(s->cpu_periods, 30 + 10 + 8, 0);
    assert_near(s->cpu_throttled_periods, 3 + 10 + 0, 0);
    assert_near(s->cpu_throttled_secs, (3 + 10) * 0.05, 1e-12);
    rt_stats_free(st);
}

/* The summary of a 4-record run in a cgroup: PSS peak pss, kills at the end, throttled
 * periods per 100 periods, quota and memory limit as given. */
static rt_summary cg_run(double pss, double kills, double throttled, double quota, double limit)
{
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 4; i++) {
        rt_record r = cg_rec(100 + i, 9, i == 3 ? kills : 0, 25 * (i + 1), throttled / 4 * (i + 1));
        r.process_cores = 1;
        r.process_pss_mib = pss;
        r.process_memory_peak_mib = pss + 10;
        r.cgroup_cpu_quota_cores = quota;
        r.cgroup_memory_limit_mib = limit;
        rt_stats_add(st, &r);
    }
    rt_summary s = *rt_stats_summary(st);
    rt_stats_free(st);
    s.usage = NULL; /* it lived in st */
    s.cores = NULL; /* so did this: the mean rule */
    return s;
}

/* Recommendations over cgroup runs: never below what got a run OOM-killed (strictly above its
 * limit), a core above a quota that throttled a run in 10% of its periods or more. */
static void recommend_cgroup(void **state)
{
    (void)state;
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    /* no kill, no throttling: the plain rule (1 core, 1000 MiB x 1.2 -> 2048) */
    rt_summary a = cg_run(1000, 0, 5, 2, 8192);
    const rt_summary *runs[] = {&a, NULL};
    assert_int_equal(rt_recommend(runs, 1, &rec), RT_OK);
    assert_int_equal(rec.cpu, 1);
    assert_int_equal(rec.memory_mib, 2048);
    assert_int_equal(rec.oom_killed, 0);
    assert_nan(rec.cpu_quota_cores);
    assert_nan(rec.cpu_throttled_pct);
    assert_int_equal(rec.memory_learn, 0);
    assert_nan(rec.memory_floor_mib);
    assert_nan(rec.time_floor_secs);
    /* killed at a limit of 8192 with a PSS of 7000: the need above the limit is unknown, and the
     * other run ran under no larger limit: twice the limit, to learn it (0.20) */
    rt_summary b = cg_run(7000, 1, 10, 1.5, 8192);
    runs[1] = &b;
    assert_int_equal(rt_recommend(runs, 2, &rec), RT_OK);
    assert_int_equal(rec.oom_killed, 1);
    assert_int_equal(rec.memory_mib, 16384);
    assert_near(rec.memory_floor_mib, 16384, 0);
    assert_int_equal(rec.memory_learn, 1);
    assert_int_equal(rec.cpu, 3); /* ceil(1.5) + 1 */
    assert_near(rec.cpu_quota_cores, 1.5, 0);
    assert_near(rec.cpu_throttled_pct, 10, 1e-9);
    /* a run not killed under a larger limit learned the need: the killed run's limit + 20% stays
     * the floor (never below it), the learned need + headroom above it asks */
    a = cg_run(9000, 0, 0, 2, 16384);
    assert_int_equal(rt_recommend(runs, 2, &rec), RT_OK);
    assert_int_equal(rec.memory_learn, 0);
    assert_near(rec.memory_floor_mib, rt_round_memory_mib(8192 * 1.2), 0);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(9010 * 1.15));
    a = cg_run(5000, 0, 0, 2, 16384); /* learned, and needed less: never below the killed run's limit */
    assert_int_equal(rt_recommend(runs, 2, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(8192 * 1.2));
    assert_true(rec.memory_mib > 8192);
    /* killed without a known limit (the machine's OOM killer): twice the most it reached (the
     * peak charge 3010); the other run needed less: no lesson */
    a = cg_run(1000, 0, 5, 2, 8192);
    b = cg_run(3000, 2, 0, NAN, NAN);
    assert_int_equal(rt_recommend(runs, 2, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(2 * 3010));
    assert_int_equal(rec.memory_learn, 1);
    assert_int_equal(rec.cpu, 1);
    /* ... a run that held more without being killed: its need, the floor the old rule's */
    a = cg_run(4000, 0, 0, NAN, NAN);
    assert_int_equal(rt_recommend(runs, 2, &rec), RT_OK);
    assert_int_equal(rec.memory_learn, 0);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(4010 * 1.15));
    /* an older caller's struct: the 0.6 fields are left alone */
    rt_recommendation old;
    memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(rt_recommendation, oom_killed);
    assert_int_equal(rt_recommend(runs, 2, &old), RT_OK);
    assert_int_equal(old.memory_mib, rt_round_memory_mib(4010 * 1.15));
    assert_int_equal(old.oom_killed, 0x5a5a5a5a);
}

/* "-0" in a file is 0: never a peak or percentile of -0 (printed "-0.00"). */
static void negative_zero(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    for (int i = 0; i < 3; i++) {
        rt_record r = blank(i, 1);
        r.cpu_cores = -0.0;
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_false(signbit(s->cpu_cores.peak));
    assert_false(signbit(s->cpu_cores.mean));
    assert_false(signbit(s->cpu_cores.p50));
    rt_stats_free(st);
}

/* A record of iv seconds at ts with the machine's and the tree's joules and their methods. */
static rt_record energy_rec(double ts, double iv, double j, const char *m, double pj, const char *pm, double idle)
{
    rt_record r;
    rt_record_null(&r);
    r.timestamp_secs = ts;
    r.interval_secs = iv;
    r.energy_joules = j;
    r.energy_method = m;
    r.process_energy_joules = pj;
    r.process_energy_method = pm;
    r.idle_power_watts = idle;
    return r;
}

static void energy_figures(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    const rt_summary *s = rt_stats_summary(st);
    assert_nan(s->energy_joules);
    assert_null(s->energy_method);
    assert_dist_nan(&s->power_watts);
    char model[32] = "model one", missing[32] = "chmod a+r energy_uj";
    rt_energy e1 = {.model = model, .missing = missing};
    rt_record r = energy_rec(10, 10, 100, "measured", 40, "sampled", 8);
    r.energy = &e1;
    r.gpu_power_throttled_secs = 1;
    r.gpu_thermal_throttled_secs = 2;
    rt_stats_add(st, &r);
    r = energy_rec(20, 10, 300, "sampled", 60, "estimated", 6);
    r.energy = &e1;
    r.gpu_power_throttled_secs = 3;
    r.gpu_thermal_throttled_secs = 4;
    rt_stats_add(st, &r);
    r = energy_rec(30, 10, NAN, NULL, NAN, NULL, NAN); /* no energy: nothing changes */
    rt_stats_add(st, &r);
    snprintf(model, sizeof model, "changed"); /* the records' strings may go: the summary keeps its copy */
    missing[0] = '\0';
    s = rt_stats_summary(st);
    assert_near(s->energy_joules, 400, 1e-9);
    assert_near(s->process_energy_joules, 100, 1e-9);
    assert_string_equal(s->energy_method, "sampled");
    assert_string_equal(s->process_energy_method, "estimated");
    assert_near(s->power_watts.mean, 20, 1e-9); /* 10 W and 30 W over 10 s each */
    assert_near(s->power_watts.peak, 30, 1e-9);
    assert_near(s->process_power_watts.mean, 5, 1e-9);
    assert_near(s->process_power_watts.peak, 6, 1e-9);
    assert_near(s->idle_power_watts, 6, 0);
    assert_near(s->gpu_power_throttled_secs, 3, 0);
    assert_near(s->gpu_thermal_throttled_secs, 4, 0);
    assert_string_equal(s->energy_model, "model one");
    assert_string_equal(s->energy_missing, "chmod a+r energy_uj");
    assert_nan(s->co2e_grams); /* no grid: unknown, never a world average */
    assert_null(s->grid);
    rt_stats_free(st);

    /* carbon by hand: 7.2e6 J = 2 kWh at 300 g/kWh = 600 g; the tree's 3.6e6 J = 300 g */
    st = rt_stats_new();
    r = energy_rec(10, 10, 7.2e6, "estimated", 3.6e6, "estimated", NAN);
    rt_stats_add(st, &r);
    char zone[8] = "FR";
    rt_grid g = RT_GRID_INIT;
    g.g_per_kwh = 300;
    g.zone = zone;
    g.source = "given";
    assert_int_equal(rt_stats_set_grid(st, &g), RT_OK);
    zone[0] = 'X';
    s = rt_stats_summary(st);
    assert_near(s->co2e_grams, 600, 1e-9);
    assert_near(s->process_co2e_grams, 300, 1e-9);
    assert_non_null(s->grid);
    assert_string_equal(s->grid->zone, "FR");
    assert_string_equal(s->grid->source, "given");
    assert_near(s->grid->g_per_kwh, 300, 0);
    g.g_per_kwh = NAN; /* an unknown intensity: carbon unknown */
    assert_int_equal(rt_stats_set_grid(st, &g), RT_OK);
    s = rt_stats_summary(st);
    assert_nan(s->co2e_grams);
    assert_nan(s->process_co2e_grams);
    assert_null(s->grid);
    assert_int_equal(rt_stats_set_grid(st, NULL), RT_OK);
    assert_nan(rt_stats_summary(st)->co2e_grams);
    assert_int_equal(rt_stats_set_grid(NULL, &g), RT_ERR_INVALID);
    rt_stats_free(st);
}

/* A domain of an energy part's test: in the total, with its interval's joules and the tree's. */
static rt_energy_domain part_dom(const char *name, const char *kind, const char *source, const char *method,
                                 int in_total, double j, double pj)
{
    return (rt_energy_domain){.name = name, .kind = kind, .source = source, .method = method, .in_total = in_total,
                              .energy_joules = j, .process_energy_joules = pj};
}

/* The energy by part (0.19): the records' domains summed by kind, source and method, exactly the
 * sums of the domains' figures; several GPUs one part, core and uncore inside their package, a
 * platform meter named apart; the largest (the job's) first; no domains, no parts. */
static void energy_parts(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    char rapl[16] = "intel-rapl";
    for (int i = 0; i < 3; i++) {
        rt_energy_domain d[] = {
            part_dom("package-0", "package", rapl, "measured", 1, 10.25 + i, 2.5),
            part_dom("core-0", "core", rapl, "measured", 0, 8, 2), /* inside package-0 */
            part_dom("package-1", "package", rapl, "measured", 1, 9.5, 1.25),
            part_dom("dram-0", "dram", rapl, "measured", 1, 3, 0.5),
            part_dom("gpu-0", "gpu", "nvml", "measured", 1, 250.5, 250.5),
            part_dom("gpu-1", "gpu", "nvml", "measured", 1, i == 1 ? NAN : 100, i == 1 ? NAN : 0), /* a failed read */
            part_dom("gpu-2", "gpu", "nvml", "sampled", 1, 70, 0), /* no counter: another part */
        };
        const rt_energy_domain *ptr[(sizeof d / sizeof d[0])];
        for (size_t k = 0; k < (sizeof d / sizeof d[0]); k++)
            ptr[k] = &d[k];
        rt_energy e = {.domain = ptr, .domain_count = (sizeof d / sizeof d[0])};
        rt_record r = energy_rec(10 + i, 1, 400, "sampled", 250, "sampled", NAN);
        r.energy = &e;
        rt_stats_add(st, &r);
    }
    snprintf(rapl, sizeof rapl, "gone"); /* the records' strings may go: the summary keeps its copy */
    const rt_summary *s = rt_stats_summary(st);
    assert_int_equal(s->energy_part_count, 4);
    assert_null(s->energy_meter_source);
    const rt_summary_energy_part *const *p = s->energy_parts;
    /* the job's largest first: GPUs (751.5), CPU (11.25), DRAM (1.5), the sampled GPU (0) */
    assert_string_equal(p[0]->kind, "gpu");
    assert_string_equal(p[0]->source, "nvml");
    assert_string_equal(p[0]->method, "measured");
    assert_near(p[0]->energy_joules, 3 * 250.5 + 2 * 100, 0);
    assert_near(p[0]->process_energy_joules, 3 * 250.5, 0);
    assert_near(p[0]->devices, 2, 0);
    assert_string_equal(p[1]->kind, "cpu");
    assert_string_equal(p[1]->source, "intel-rapl");
    assert_near(p[1]->energy_joules, 10.25 + 11.25 + 12.25 + 3 * 9.5, 0); /* no core-0 */
    assert_near(p[1]->process_energy_joules, 3 * (2.5 + 1.25), 0);
    assert_near(p[1]->devices, 2, 0);
    assert_string_equal(p[2]->kind, "dram");
    assert_near(p[2]->energy_joules, 9, 0);
    assert_near(p[2]->process_energy_joules, 1.5, 0);
    assert_string_equal(p[3]->kind, "gpu");
    assert_string_equal(p[3]->method, "sampled");
    assert_near(p[3]->energy_joules, 210, 0);
    char words[256];
    size_t len;
    assert_int_equal(rt_summary_energy_words(s, 1, words, sizeof words, &len), RT_OK);
    /* the job's: the GPU it never used is left out */
    assert_string_equal(words, "GPU 752 J measured by NVML, CPU 11.2 J measured by RAPL, memory 1.5 J measured "
                               "by RAPL");
    /* the machine's, in the list's order (the job's largest first) */
    assert_int_equal(rt_summary_energy_words(s, 0, words, sizeof words, &len), RT_OK);
    assert_string_equal(words, "2 GPUs 952 J measured by NVML, CPU 62.2 J measured by RAPL, memory 9.0 J measured by "
                               "RAPL, GPU 210 J sampled by NVML");
    assert_int_equal(len, strlen(words));
    assert_int_equal(rt_summary_energy_words(s, 0, words, 20, &len), RT_OK); /* cut, the length needed */
    assert_int_equal(strlen(words), 19);
    assert_true(len > 60);
    assert_int_equal(rt_summary_energy_words(NULL, 0, words, sizeof words, NULL), RT_ERR_INVALID);
    rt_stats_free(st);

    /* a platform meter gives the machine's total: named apart, the parts within it */
    st = rt_stats_new();
    rt_energy_domain d[] = {part_dom("psys", "psys", "intel-rapl", "measured", 1, 30, NAN),
                            part_dom("package-0", "package", "intel-rapl", "measured", 0, 20, 5)};
    const rt_energy_domain *ptr[] = {&d[0], &d[1]};
    rt_energy e = {.domain = ptr, .domain_count = 2};
    rt_record r = energy_rec(10, 1, 30, "measured", 5, "measured", NAN);
    r.energy = &e;
    rt_stats_add(st, &r);
    s = rt_stats_summary(st);
    assert_string_equal(s->energy_meter_source, "intel-rapl");
    assert_int_equal(s->energy_part_count, 1);
    assert_near(s->energy_parts[0]->energy_joules, 20, 0);
    rt_stats_free(st);

    /* records without domains (the embedded tracker's store): no parts, the words empty */
    st = rt_stats_new();
    r = energy_rec(10, 1, 30, "estimated", 5, "estimated", NAN);
    rt_stats_add(st, &r);
    s = rt_stats_summary(st);
    assert_int_equal(s->energy_part_count, 0);
    assert_null(s->energy_parts);
    assert_int_equal(rt_summary_energy_words(s, 1, words, sizeof words, &len), RT_OK);
    assert_string_equal(words, "");
    assert_int_equal(len, 0);
    rt_stats_free(st);
}

/* A wall clock set back an hour and forward again: the run's end is its start plus its
 * duration, the steps counted; a gap counted with its length; the notes say both. */
static void clock_steps_and_gap(void **state)
{
    (void)state;
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    double t = 1000.0;
    for (int i = 0; i < 30; i++) {
        rt_record r = blank(t + 1.0, 1.0);
        if (i == 10) {
            r.timestamp_secs -= 3600.0;
            r.clock_step_secs = -3600.0;
            t -= 3600.0;
        } else if (i == 20) {
            r.timestamp_secs += 3600.0;
            r.clock_step_secs = 3600.0;
            t += 3600.0;
        }
        if (i == 25) { /* 20 s without a sample */
            r.timestamp_secs += 20.0;
            r.interval_secs = 21.0;
            r.sampling_gap_secs = 21.0;
            t += 20.0;
        }
        t += 1.0;
        rt_stats_add(st, &r);
    }
    const rt_summary *s = rt_stats_summary(st);
    assert_near(s->duration_secs, 50.0, 1e-9);
    assert_near(s->start_secs, 1000.0, 1e-9);
    assert_near(s->end_secs, 1050.0, 1e-9);
    assert_near(s->clock_steps, 2, 0);
    assert_near(s->clock_step_secs, 0, 1e-9);
    assert_near(fabs(s->clock_step_largest_secs), 3600.0, 1e-9);
    assert_near(s->sampling_gaps, 1, 0);
    assert_near(s->sampling_gap_secs, 21.0, 1e-9);
    rt_note notes[RT_NOTES_MAX];
    size_t n = rt_summary_notes(s, NULL, notes, RT_NOTES_MAX);
    bool jump = false, gap = false;
    for (size_t i = 0; i < n; i++) {
        jump |= notes[i].kind == RT_NOTE_CLOCK_JUMP && strstr(notes[i].text, "set 2 times") &&
                strstr(notes[i].text, "3600.0 s");
        gap |= notes[i].kind == RT_NOTE_SAMPLING_GAP && strstr(notes[i].text, "no sample for 21.0 s");
    }
    assert_true(jump && gap);
    assert_string_equal(rt_note_kind_name(RT_NOTE_CLOCK_JUMP), "clock_jump");
    assert_string_equal(rt_note_kind_name(RT_NOTE_SAMPLING_GAP), "sampling_gap");
    rt_stats_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clock_steps_and_gap),
        cmocka_unit_test(empty),          cmocka_unit_test(weighted), cmocka_unit_test(fold_only_into_the_neighbour),         cmocka_unit_test(nan_handling),
        cmocka_unit_test(process_midway), cmocka_unit_test(allocation),       cmocka_unit_test(job_name),
        cmocka_unit_test(percentile_bound), cmocka_unit_test(short_intervals_fold), cmocka_unit_test(histogram_edges), cmocka_unit_test(speed),
        cmocka_unit_test(two_runs),       cmocka_unit_test(negative_zero),    cmocka_unit_test(oom_killed_run),
        cmocka_unit_test(cgroup_nulls_and_first_record), cmocka_unit_test(cgroup_several_runs),
        cmocka_unit_test(recommend_cgroup), cmocka_unit_test(energy_figures), cmocka_unit_test(energy_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
