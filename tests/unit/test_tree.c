/* test_tree.c - the sampler's process-tree part (sample/tree.c) through the replay API on a
 * copy of the proctree fixture: the interval's CPU held to the machine's busy cores and core
 * count, the cut part carried into later intervals, and cpu_secs_total exact throughout; the
 * walk's clock, and the light I/O pass between walks. */
#include "unit.h"

#include <math.h>
#include <string.h>

#include "resource_tracker.h"
#include "sample/replay.h"
#include "sample/sampler_internal.h" /* the carried CPU, to check the books balance */

static char dir[64], proc[128];
static unsigned long m_busy, m_idle; /* the machine's one core, in ticks */
static unsigned long ut101 = 300, st101 = 30;
static bool tree_gone; /* the tree's stat files read empty: 101's counters stay away */

static int setup(void **state)
{
    (void)state;
    unit_proctree_copy("rt-tree", dir, sizeof dir, proc, sizeof proc);
    m_busy = 150;
    m_idle = 1010;
    ut101 = 300;
    st101 = 30;
    tree_gone = false;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* Rewrites /proc/stat (one core) and /proc/101/stat in place with the current counters. */
static void write_counters(void)
{
    unit_proctree_counters(proc, m_busy, m_idle, ut101, st101, tree_gone);
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static double tck;
static double reported_secs, counted_ticks;

/* One interval: the machine's core busy for busy of 100 ticks (or no tick at all when
 * busy < 0), the tree using dut/dst more ticks, elapsed seconds on the clock. Checks the
 * invariants and returns the sample's process. */
static const rt_process *interval(rt_sampler *s, double *mono, double elapsed, int busy, unsigned long dut,
                                  unsigned long dst)
{
    if (busy >= 0) {
        m_busy += (unsigned long)busy;
        m_idle += (unsigned long)(100 - busy);
    }
    ut101 += dut;
    st101 += dst;
    counted_ticks += (double)(dut + dst);
    write_counters();
    *mono += elapsed;
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, *mono, 1.7e9 + *mono, &smp), RT_OK);
    const rt_process *p = smp->process;
    const rt_cpu *c = smp->cpu;
    assert_non_null(p);
    assert_int_equal(c->core_count, 1);
    assert_true(p->utime_secs >= 0.0 && p->stime_secs >= 0.0);
    elapsed = smp->interval_secs; /* as given, but for the first reading after the baseline */
    if (elapsed > 0) {
        assert_true(p->cores_used <= (double)c->core_count + 1e-12);
        if (!isnan(c->utilization_pct))
            assert_true(p->cores_used <= c->utilization_pct + 1e-12);
        assert_true(fabs(p->cores_used - (p->utime_secs + p->stime_secs) / elapsed) < 1e-12);
    } else {
        assert_true(isnan(p->cores_used));
    }
    /* = the machine's copy of the figure */
    assert_true(c->process_cores_used == p->cores_used || (isnan(c->process_cores_used) && isnan(p->cores_used)));
    reported_secs += p->utime_secs + p->stime_secs;
    /* the books balance: what was reported plus what is still carried (plus what a tree with
     * nothing alive dropped) is the exact total */
    double carried = (s->tree.carry_ut_ns + s->tree.carry_st_ns) / 1e9;
    assert_true(carried >= -1e-9);
    assert_true(fabs(reported_secs + carried + s->tree.dropped_ns / 1e9 - p->cpu_secs_total) < 1e-9);
    if (s->tree.cur.running == 0)
        NEAR(carried, 0.0);
    assert_true(fabs(p->cpu_secs_total - counted_ticks / tck) < 1e-12);
    return p;
}

/* A sampler tracking the fixture's tree of pid 100, its baseline the counters written now. */
static rt_sampler *open_tree(void)
{
    tck = (double)sysconf(_SC_CLK_TCK);
    reported_secs = counted_ticks = 0;
    write_counters();
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = "/nonexistent";
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    o.pid = 100;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    return s;
}


static void cpu_held_to_machine(void **state)
{
    (void)state;
    rt_sampler *s = open_tree();
    /* a first reading far from the real clock, so every later interval is the given one */
    double mono = 1e9;
    const rt_process *p = interval(s, &mono, 0.0, -1, 0, 0);
    assert_int_equal(p->pid, 100);
    assert_true(p->alive);
    assert_int_equal(p->child_count, 3); /* 101 102 103: the zombie 104 runs no more */
    assert_true(p->cpu_secs_total == 0.0);
    unsigned long t = (unsigned long)tck; /* ticks in one second */

    /* 1 s: the tree shows a whole core, the machine only half of one: 0.5 reported */
    p = interval(s, &mono, 1.0, 50, t, 0);
    NEAR(p->cores_used, 0.5);
    NEAR(p->utime_secs, 0.5);
    NEAR(s->tree.carry_ut_ns, 0.5e9);
    /* 1 s: the machine fully busy, the tree idle: the carried 0.5 s shows now */
    p = interval(s, &mono, 1.0, 100, 0, 0);
    NEAR(p->cores_used, 0.5);
    NEAR(s->tree.carry_ut_ns, 0.0);
    /* no time on the clock: nothing can be shown, all is carried */
    p = interval(s, &mono, 0.0, -1, t / 2, 0);
    NEAR(p->utime_secs, 0.0);
    /* 2 s, no tick on the machine's core (utilization unknown): held to the core count;
     * 4.5 s wanted (3 user, 1 system, 0.5 carried), 2 shown in proportion */
    p = interval(s, &mono, 2.0, -1, 3 * t, t);
    NEAR(p->cores_used, 1.0);
    NEAR(p->utime_secs + p->stime_secs, 2.0);
    NEAR(p->utime_secs, 2.0 * 3.5 / 4.5);
    NEAR(p->stime_secs, 2.0 * 1.0 / 4.5);
    /* 1 s at 20% */
    p = interval(s, &mono, 1.0, 20, 0, 0);
    NEAR(p->cores_used, 0.2);
    /* 10 s fully busy: the last 2.3 s come out */
    p = interval(s, &mono, 10.0, 100, 0, 0);
    NEAR(p->cores_used, 0.23);
    NEAR(s->tree.carry_ut_ns + s->tree.carry_st_ns, 0.0);
    NEAR(reported_secs, p->cpu_secs_total);
    NEAR(p->cpu_secs_total, 5.5);
    /* steady: the tree within the machine, nothing cut */
    p = interval(s, &mono, 1.0, 80, 3 * t / 4, 0);
    NEAR(p->cores_used, 0.75);
    rt_sampler_free(s);
}

static void counters_backwards_keep_total(void **state)
{
    (void)state;
    rt_sampler *s = open_tree();
    double mono = 1e9;
    interval(s, &mono, 0.0, -1, 0, 0);
    unsigned long t = (unsigned long)tck;
    /* more than the machine can do, on a 1-core machine at 100%: 1 core shown, rest carried */
    const rt_process *p = interval(s, &mono, 1.0, 100, 3 * t, 0);
    NEAR(p->cores_used, 1.0);
    /* 101's counters go backwards (a scan that caught a process between two states): never
     * negative, the total stays */
    ut101 -= 2 * t;
    p = interval(s, &mono, 1.0, 100, 0, 0); /* the drop is not subtracted */
    NEAR(p->cpu_secs_total, 3.0);
    NEAR(p->cores_used, 1.0); /* the carried second */
    /* the climb back to the mark is not counted a second time ... */
    ut101 += 2 * t;
    p = interval(s, &mono, 1.0, 100, 0, 0);
    NEAR(p->cpu_secs_total, 3.0);
    /* ... what goes past it is */
    p = interval(s, &mono, 1.0, 100, t, 0);
    NEAR(p->cpu_secs_total, 4.0);
    rt_sampler_free(s);
}

/* The tree dies with CPU still carried: the interval that sees it gone shows what the
 * machine allows, the rest is dropped, and no later interval shows CPU (the total keeps it). */
static void dead_tree_shows_nothing_more(void **state)
{
    (void)state;
    rt_sampler *s = open_tree();
    double mono = 1e9;
    interval(s, &mono, 0.0, -1, 0, 0);
    unsigned long t = (unsigned long)tck;
    const rt_process *p = interval(s, &mono, 1.0, 50, t, 0);
    NEAR(p->cores_used, 0.5);
    NEAR(s->tree.carry_ut_ns, 0.5e9);
    /* the whole tree goes: the descendants reaped (a dead pid's stat reads empty through the
     * descriptor kept on it), the root a zombie its parent does not reap (still a process of
     * the tree, running no more); the machine busy for 20% of the interval that sees it */
    char rel[64];
    for (int pid = 101; pid <= 104; pid++) {
        snprintf(rel, sizeof rel, "%d/stat", pid);
        unit_put(proc, rel, "");
    }
    unit_put(proc, "100/stat",
             "100 (bash) Z 1 100 100 0 -1 4194560 100 0 0 0 10 5 200 100 20 0 1 0 5000 0 0 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
    tree_gone = true;
    p = interval(s, &mono, 1.0, 20, 0, 0);
    assert_false(p->alive);
    assert_int_equal(s->tree.cur.processes, 1);
    assert_int_equal(s->tree.cur.running, 0);
    NEAR(p->cores_used, 0.2);
    NEAR(s->tree.dropped_ns, 0.3e9);
    /* the machine fully busy later: nothing of the dead tree shows */
    p = interval(s, &mono, 1.0, 100, 0, 0);
    NEAR(p->cores_used, 0.0);
    NEAR(p->cpu_secs_total, 1.0);
    rt_sampler_free(s);
}

/* The walk's clock (rt_tree_part_walk_due): every reading walks without the job's own group or
 * with walk_max_age 0; with one, a walk is due once its figures are as old as the walk's cost
 * allows at RT_WALK_BUDGET, sooner at RT_WALK_MOVED_BUDGET once the group's tasks changed or its
 * memory moved by RT_WALK_MOVED_SHARE, at once when its memory rose RT_WALK_HIGH_SHARE above
 * the most any walk saw, after the root was reaped or when the group emptied, and never later
 * than walk_max_age. */
static void walk_clock(void **state)
{
    (void)state;
    rt_tree_part p;
    memset(&p, 0, sizeof p);
    p.walk_max_age = 60;
    rt_tree_clock k = {.group = true, .pids = 10, .memory_bytes = 1000};
    assert_true(rt_tree_part_walk_due(&p, &k, 0.0)); /* no walk yet */
    p.have_walk = true;
    p.walk_mono = 100.0;
    p.walk_cost_secs = 0.001; /* 1 ms a walk: every 2 s at 0.05% of a core, 0.2 s when moved */
    p.walk_pids = 10;
    p.walk_memory = p.walk_memory_high = 1000;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.1));
    NEAR(p.walk_period, 0.001 / RT_WALK_BUDGET);
    assert_false(rt_tree_part_walk_due(&p, &k, 101.9));
    assert_true(rt_tree_part_walk_due(&p, &k, 102.0));
    /* without the group's clock, or with no age allowed: every reading */
    assert_true(rt_tree_part_walk_due(&p, NULL, 100.1));
    assert_true(isnan(p.walk_period));
    k.group = false;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.1));
    k.group = true;
    p.walk_max_age = 0;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.1));
    /* the longest age caps a dear walk's cadence */
    p.walk_max_age = 60;
    p.walk_cost_secs = 0.5;
    assert_false(rt_tree_part_walk_due(&p, &k, 159.9));
    assert_true(rt_tree_part_walk_due(&p, &k, 160.0));
    p.walk_cost_secs = 0.001;
    /* the tasks changed: due once the moved budget allows (0.2 s), not before */
    k.pids = 11;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.19));
    assert_true(rt_tree_part_walk_due(&p, &k, 100.201));
    k.pids = 10;
    /* memory: 0.5% either way is no move; 1% or 4% either way is a move, due at the moved
     * budget; 5% above the most any walk saw walks at once, whatever the cost; 5% down is a
     * move, not a new high */
    k.memory_bytes = 1005;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.201));
    k.memory_bytes = 995;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.201));
    k.memory_bytes = 1010;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.19));
    assert_true(rt_tree_part_walk_due(&p, &k, 100.201));
    k.memory_bytes = 1040;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.001));
    assert_true(rt_tree_part_walk_due(&p, &k, 100.201));
    k.memory_bytes = 960;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.19));
    assert_true(rt_tree_part_walk_due(&p, &k, 100.201));
    k.memory_bytes = 1050;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.001));
    k.memory_bytes = 950;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.19));
    assert_true(rt_tree_part_walk_due(&p, &k, 100.201));
    /* a swing back up to what an earlier walk saw (the last walked at 950, the most 1050): a
     * move, not a new high; above 1050 by 5%, at once */
    p.walk_memory = 950;
    p.walk_memory_high = 1050;
    k.memory_bytes = 1050;
    assert_false(rt_tree_part_walk_due(&p, &k, 100.001));
    assert_true(rt_tree_part_walk_due(&p, &k, 100.201));
    k.memory_bytes = 1103;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.001));
    /* from nothing any growth; with no high yet any reading */
    p.walk_memory = p.walk_memory_high = 0;
    k.memory_bytes = 1;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.001));
    p.walk_memory_high = RT_NULL_U64;
    k.memory_bytes = 0;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.001));
    p.walk_memory = p.walk_memory_high = k.memory_bytes = 1000;
    /* the group emptied: at once, whatever the cost */
    p.walk_cost_secs = 10;
    k.pids = 0;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.001));
    p.walk_pids = 0; /* walked empty: nothing more to see */
    assert_false(rt_tree_part_walk_due(&p, &k, 100.002));
    /* the root reaped: at once */
    p.walk_now = true;
    assert_true(rt_tree_part_walk_due(&p, &k, 100.002));
    p.walk_now = false;
    /* a clock gone backwards walks */
    assert_true(rt_tree_part_walk_due(&p, &k, 99.0));

    /* the cost learned: the first walk's as it is; one dear walk raises the estimate twofold,
     * a second in a row is taken as it is; a cheaper one at once */
    memset(&p, 0, sizeof p);
    rt_tree_part_learn_cost(&p, 0.001);
    NEAR(p.walk_cost_secs, 0.001);
    p.have_walk = true;
    rt_tree_part_learn_cost(&p, 0.5); /* took in 10,000 new processes */
    NEAR(p.walk_cost_secs, 0.002);
    rt_tree_part_learn_cost(&p, 0.03); /* still dear: lasting */
    NEAR(p.walk_cost_secs, 0.03);
    rt_tree_part_learn_cost(&p, 0.05); /* within twice: as it is */
    NEAR(p.walk_cost_secs, 0.05);
    rt_tree_part_learn_cost(&p, 0.2);
    NEAR(p.walk_cost_secs, 0.1);
    rt_tree_part_learn_cost(&p, 0.01);
    NEAR(p.walk_cost_secs, 0.01);
    rt_tree_part_learn_cost(&p, 0.5); /* one dear walk after a cheap one: twofold again */
    NEAR(p.walk_cost_secs, 0.02);
}

/* A tree part driven by hand (rt_tree_part_delta on totals set in p.cur, the group's figures in
 * cg and grp), as the sampler drives it in wrapper mode: the job's own group, counted from zero,
 * a machine of 2 cores. */
typedef struct part_fx {
    rt_sample_ctx c;
    rt_gpu_part g;
    rt_tree_part p;
    rt_cgroup cg;
    rt_tree_group grp;
    rt_cpu m;
} part_fx;

static void fx_open(part_fx *f)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(rt_roots_open(&f->c.roots, proc, "/nonexistent"), RT_OK);
    f->c.clk_tck = 100;
    assert_int_equal(rt_gpu_part_open(&f->g, &f->c, "/nonexistent/libnvidia-ml.so.1"), 0);
    assert_int_equal(rt_tree_part_open(&f->p, &f->c, 0, true, 30.0, 60.0), 0);
    f->cg.own = f->cg.exclusive = true;
    f->grp = (rt_tree_group){.cgroup = &f->cg, .exclusive = true, .cpu_ns = 0, .user_share = 1.0};
    f->m.core_count = 2;
    f->p.group_first = true;
}

/* One reading of elapsed seconds: the group's CPU at group_ms, forks made meanwhile. */
static void fx_read(part_fx *f, double elapsed, uint64_t group_ms, uint64_t forks)
{
    f->grp.cpu_ns = group_ms * 1000000;
    rt_tree_part_delta(&f->p, elapsed, &f->m, forks, &f->g, 0.0, &f->grp);
    rt_tree_part_commit(&f->p);
}

/* A walk's reading: the walk's own CPU total at walk_ms, live processes of the tree running. */
static void fx_walk(part_fx *f, double elapsed, uint64_t group_ms, uint64_t walk_ms, int64_t running,
                    uint64_t forks)
{
    f->p.walked = true;
    f->p.cur.utime_ns = walk_ms * 1000000;
    f->p.cur.running = running;
    fx_read(f, elapsed, group_ms, forks);
    f->p.walked = false;
}

static void fx_close(part_fx *f)
{
    rt_tree_part_close(&f->p);
    rt_gpu_part_close(&f->g);
    rt_roots_close(&f->c.roots);
}

/* The job's own group read before the walk (the two clocks): a walk that ran later than the
 * group's read (the tracker preempted between the two, or a long walk) saw CPU that the group's
 * reading does not hold yet. That lead is no CPU of the interval: a process busy on one core
 * shows one core, walked or not; a lead the next reading of the group still falls short of
 * (what the group missed) counts then; and with nothing of the tree running the walk counts at
 * once. With the group read after the walk (a pid's exclusive group) the walk's total now is
 * the floor. */
static void walk_lead_not_booked(void **state)
{
    (void)state;
    part_fx f;
    fx_open(&f);
    f.m.utilization_pct = 2.0; /* the machine busy: no cap below 2 cores */
    fx_walk(&f, 0.0, 0, 0, 1, RT_NULL_U64); /* the baseline (counted from zero) */
    fx_walk(&f, 0.1, 100, 131, 1, RT_NULL_U64); /* the walk 31 ms after the group's read */
    NEAR(f.p.out.cores_used, 1.0);
    fx_read(&f, 0.1, 200, RT_NULL_U64);
    NEAR(f.p.out.cores_used, 1.0);
    fx_walk(&f, 0.1, 300, 340, 1, RT_NULL_U64);
    NEAR(f.p.out.cores_used, 1.0);
    NEAR(f.p.out.cpu_secs_total, 0.3);
    /* a walk ahead of every later reading of the group (CPU the group missed): counted one
     * reading late, and the total is the walk's */
    fx_walk(&f, 0.1, 400, 600, 1, RT_NULL_U64);
    NEAR(f.p.out.cores_used, 1.0);
    fx_read(&f, 0.1, 450, RT_NULL_U64);
    NEAR(f.p.out.cpu_secs_total, 0.6);
    NEAR(f.p.out.cores_used, 2.0);
    /* the tree ended: the walk's lead counts at once */
    fx_walk(&f, 0.1, 500, 700, 0, RT_NULL_U64);
    NEAR(f.p.out.cpu_secs_total, 0.7);
    NEAR(f.p.out.cores_used, 1.0);
    /* the group read after the walk */
    f.p.group_first = false;
    fx_walk(&f, 0.1, 800, 900, 1, RT_NULL_U64);
    NEAR(f.p.out.cpu_secs_total, 0.9);
    fx_close(&f);
}

/* A phase's mark between two walks: the samples since the last walk took the group's storage
 * I/O in, and the light walk's growth since that walk (the same bytes, per process) is held
 * against it, not added to it; where the walk sees more than the group (cgroup v1's blkio
 * misses buffered writes) the walk's count stands. */
static void peek_io_counted_once(void **state)
{
    (void)state;
    part_fx f;
    fx_open(&f);
    f.m.utilization_pct = 2.0;
    const uint64_t MB = 1000000;
    fx_walk(&f, 0.0, 0, 0, 1, RT_NULL_U64); /* the baseline */
    f.grp.read_bytes = f.grp.write_bytes = 100 * MB;
    f.p.cur.read_bytes = f.p.cur.write_bytes = 100 * MB;
    fx_walk(&f, 1.0, 100, 100, 1, RT_NULL_U64);
    f.grp.read_bytes = f.grp.write_bytes = 200 * MB; /* two samples between walks */
    fx_read(&f, 1.0, 200, RT_NULL_U64);
    f.grp.read_bytes = f.grp.write_bytes = 300 * MB;
    fx_read(&f, 1.0, 300, RT_NULL_U64);
    assert_int_equal(f.p.out.read_bytes_total, 300 * MB);
    rt_tree_peek k = {.io_ok = true, .root_ns = RT_NULL_U64, .root_exact_ns = RT_NULL_U64};
    k.read_bytes = 310 * MB; /* the light walk: 210 MB more than the last walk saw */
    k.write_bytes = 450 * MB; /* buffered writes the group's counter does not hold */
    rt_tree_reading r;
    rt_tree_part_peek(&f.p, &k, 300 * 1000000ull, &r);
    NEAR(r.read_bytes, 310.0 * MB);
    NEAR(r.write_bytes, 450.0 * MB);
    k.read_bytes = k.write_bytes = 250 * MB; /* the walk behind the group: the samples' total */
    rt_tree_part_peek(&f.p, &k, 300 * 1000000ull, &r);
    NEAR(r.read_bytes, 300.0 * MB);
    NEAR(r.write_bytes, 300.0 * MB);
    fx_close(&f);
}

/* A walk after the group's memory fell (reclaim or swap took pages from processes asleep since)
 * reads every process in full: the fixture's sleeping 102 lost 200 of its 300 pages without
 * running; a walk with the group's memory as before keeps its RSS as last read (the quick
 * path), one after a fall of 1% or more sees it. */
static void memory_fall_reads_all(void **state)
{
    (void)state;
    rt_sample_ctx c;
    memset(&c, 0, sizeof c);
    assert_int_equal(rt_roots_open(&c.roots, proc, "/nonexistent"), RT_OK);
    c.clk_tck = 100;
    rt_tree_part p;
    memset(&p, 0, sizeof p);
    assert_int_equal(rt_tree_part_open(&p, &c, 102, false, 30.0, 60.0), 0);
    unit_put(proc, "102/schedstat", "5000 0 3\n");
    rt_tree_clock k = {.group = true, .pids = 2, .memory_bytes = 100 << 20};
    rt_tree_part_snapshot(&p, 1.0, true, &k);
    uint64_t page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
    uint64_t before = p.cur.rss_kib;
    assert_true(before >= 300 * page_kib);
    unit_put(proc, "102/stat",
             "102 (sh) S 100 102 102 0 -1 4194560 100 0 0 0 1 1 7 3 20 0 1 0 5020 12345678 100 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
    k.memory_bytes = (100 << 20) - (100 << 20) / 200; /* 0.5% less: not a fall */
    rt_tree_part_snapshot(&p, 2.0, true, &k);
    assert_int_equal(p.cur.rss_kib, before);
    k.memory_bytes = 90 << 20;
    rt_tree_part_snapshot(&p, 3.0, true, &k);
    assert_int_equal(p.cur.rss_kib, before - 200 * page_kib);
    rt_tree_part_close(&p);
    rt_roots_close(&c.roots);
}

/* Writes 102's io file and its main thread's (task/102/io) with write_bytes at w (the other
 * counters as the fixture's). */
static void put_io102(uint64_t w)
{
    char text[256];
    snprintf(text, sizeof text,
             "rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: 102000\nwrite_bytes: %llu\n"
             "cancelled_write_bytes: 0\n",
             (unsigned long long)w);
    unit_put(proc, "102/io", text);
    unit_put(proc, "102/task/102/io", text);
}

/* Opens the fixture's context, a GPU part without a library and the tree of 102 (PSS at most
 * 30 s old, the walk at most walk_max_age). */
static void tree_102_open(rt_sample_ctx *c, rt_gpu_part *g, rt_tree_part *p, double walk_max_age)
{
    memset(c, 0, sizeof *c);
    assert_int_equal(rt_roots_open(&c->roots, proc, "/nonexistent"), RT_OK);
    c->clk_tck = 100;
    memset(g, 0, sizeof *g);
    assert_int_equal(rt_gpu_part_open(g, c, "/nonexistent/libnvidia-ml.so.1"), 0);
    memset(p, 0, sizeof *p);
    assert_int_equal(rt_tree_part_open(p, c, 102, false, 30.0, walk_max_age), 0);
}

/* One reading of the tree part as the sampler takes it: the machine's page tables (KiB), then
 * the clock, then the reading. Returns whether it re-read the exposed processes for sharers. */
static bool sharers_reading(rt_tree_part *p, const rt_tree_clock *k, double mono, uint64_t pt_kib)
{
    rt_tree_part_page_tables(p, pt_kib);
    bool walk = rt_tree_part_walk_due(p, k, mono);
    rt_tree_part_snapshot(p, mono, walk, k);
    return p->sharers_now;
}

/* Sharers outside the tree (RT_SHARERS_SHARE) and the machine's noise: 102 (PSS 600 KiB, all of
 * it exposed) and the machine's page tables. A move of the tables that could map 2.5% of the
 * PSS re-reads 102's rollup; one that finds the PSS where it was (a process starting or exiting
 * elsewhere) sets the noise floor: the same move again re-reads nothing, one above twice the
 * floor does, and the floor halves every 30 s. A re-read that finds the PSS moved (an outsider
 * mapping 102's file) leaves the floor; so does the one right after it (the tail of that
 * mapping, read before the walk). The re-reads stop once their debt reaches the burst (0.1 s,
 * or 8 of the last re-read's cost when more) and come back as 0.5% of a core pays it down. */
static void sharers_noise_and_debt(void **state)
{
    (void)state;
    rt_sample_ctx c;
    rt_gpu_part g;
    rt_tree_part p;
    tree_102_open(&c, &g, &p, 60.0);
    rt_tree_clock k = {.group = true, .pids = 2, .memory_bytes = 100 << 20};
    assert_false(sharers_reading(&p, &k, 1.0, 1000)); /* the first walk: the mark */
    uint64_t pss = p.cur.pss_kib;
    assert_true(pss >= 600);
    assert_false(sharers_reading(&p, &k, 2.0, 1000));
    /* a `sleep` started elsewhere: re-read, nothing found, the floor is its 52 KiB */
    assert_true(sharers_reading(&p, &k, 3.0, 1052));
    assert_int_equal(p.cur.pss_kib, pss);
    NEAR(p.sharers_noise, 52);
    assert_false(sharers_reading(&p, &k, 3.1, 1000)); /* it exits: the same move */
    assert_false(sharers_reading(&p, &k, 3.2, 1052 + 13));
    assert_false(sharers_reading(&p, &k, 3.25, 1052 + 100)); /* within twice the floor */
    assert_true(sharers_reading(&p, &k, 3.3, 1052 + 110)); /* above it */
    NEAR(p.sharers_noise, 110);
    /* the floor halves in 30 s: 80 KiB is within twice 55 KiB, not within twice 27.5 a minute on */
    assert_false(sharers_reading(&p, &k, 33.3, 1162 + 80));
    assert_true(sharers_reading(&p, &k, 63.3, 1162 + 80));
    NEAR(p.sharers_noise, 80);
    /* an outsider maps 102's file (102's share falls to half): found, the floor stays */
    unit_put(proc, "102/smaps_rollup", "00400000-7ffd0000 ---p 00000000 00:00 0 [rollup]\nRss: 1200 kB\nPss: 300 kB\n");
    assert_true(sharers_reading(&p, &k, 63.4, 1242 + 600));
    assert_int_equal(p.cur.pss_kib, pss - 300);
    assert_true(p.sharers_found);
    NEAR(p.sharers_noise, 80);
    /* its mapping went on while the walk read: the next move finds nothing, and is no noise */
    assert_true(sharers_reading(&p, &k, 63.5, 1842 + 400));
    assert_false(p.sharers_found);
    NEAR(p.sharers_noise, 80);
    /* a move that finds nothing after one that found nothing is */
    assert_true(sharers_reading(&p, &k, 63.6, 2242 + 400));
    NEAR(p.sharers_noise, 400);
    /* the debt: 2 ms over the burst after 0.4 s paid down no re-read, 1 s later (5 ms paid
     * down) one again */
    p.sharers_debt = RT_SHARERS_BURST + 0.004;
    p.sharers_cost = 0;
    assert_false(sharers_reading(&p, &k, 64.0, 2642 + 5000));
    assert_true(sharers_reading(&p, &k, 65.0, 2642 + 5000));
    NEAR(p.sharers_noise, 5000);
    /* a dear re-read (50 ms) makes the burst 8 of them */
    p.sharers_debt = 0.3;
    p.sharers_cost = 0.05;
    assert_true(sharers_reading(&p, &k, 65.1, 7642 + 12000));
    NEAR(p.sharers_noise, 12000);
    p.sharers_debt = 0.41;
    p.sharers_cost = 0.05;
    assert_false(sharers_reading(&p, &k, 65.2, 19642 + 50000)); /* past twice the floor: the debt stops it */
    rt_tree_part_close(&p);
    rt_gpu_part_close(&g);
    rt_roots_close(&c.roots);
}

/* Writes 102's stat with rss_pages resident and its rollup with that RSS and pss_kib. */
static void put_mem102(uint64_t rss_pages, uint64_t pss_kib)
{
    char text[512];
    uint64_t page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
    snprintf(text, sizeof text,
             "102 (sh) S 100 102 102 0 -1 4194560 100 0 0 0 1 1 7 3 20 0 1 0 5020 12345678 %llu "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             (unsigned long long)rss_pages);
    unit_put(proc, "102/stat", text);
    snprintf(text, sizeof text, "00400000-7ffd0000 ---p 00000000 00:00 0 [rollup]\nRss: %llu kB\nPss: %llu kB\n",
             (unsigned long long)(rss_pages * page_kib), (unsigned long long)pss_kib);
    unit_put(proc, "102/smaps_rollup", text);
}

/* Sharers and the tree's own memory (issue 68: a job mapping and unmapping 300 MiB of its own
 * again and again walked for sharers several times a second). A move of the machine's page
 * tables that the group's own memory explains (its anonymous plus shared memory moved since the
 * last walk, over the tables that needs: 600 KiB for 300 MiB in 4 KiB pages, less in huge pages)
 * re-reads nothing for sharers; a move beyond that need does. A re-read that finds the tree's
 * PSS moved only as far as its RSS did found no sharer: the move is the machine's noise. */
static void sharers_own_churn(void **state)
{
    (void)state;
    rt_sample_ctx c;
    rt_gpu_part g;
    rt_tree_part p;
    uint64_t page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
    if (page_kib != 4)
        skip(); /* the tables' sizes below are 4 KiB pages' */
    tree_102_open(&c, &g, &p, 60.0);
    uint64_t big = 300u * 1024 / page_kib; /* 300 MiB in pages */
    rt_tree_clock k = {.group = true, .pids = 2, .memory_bytes = 100u << 20};
    assert_false(sharers_reading(&p, &k, 1.0, 10000)); /* the first walk: the mark */
    /* 102 maps and writes 300 MiB of its own: the group's memory, its RSS, its PSS and the
     * tables move together; the clock walks, nothing is re-read for sharers */
    put_mem102(300 + big, 600 + 300 * 1024);
    k.memory_bytes = 400u << 20;
    assert_false(sharers_reading(&p, &k, 2.0, 10000 + 600));
    assert_true(p.walked);
    put_mem102(300, 600); /* and unmaps it */
    k.memory_bytes = 100u << 20;
    assert_false(sharers_reading(&p, &k, 3.0, 10000));
    /* in huge pages: fewer tables than 4 KiB pages would need */
    put_mem102(300 + big, 600 + 300 * 1024);
    k.memory_bytes = 400u << 20;
    assert_false(sharers_reading(&p, &k, 4.0, 10000 + 100));
    put_mem102(300, 600);
    k.memory_bytes = 100u << 20;
    assert_false(sharers_reading(&p, &k, 5.0, 10000));
    /* shmem written that nobody maps: the group's memory moves, the tables do not */
    k.memory_bytes = 400u << 20;
    assert_false(sharers_reading(&p, &k, 5.5, 10000));
    k.memory_bytes = 100u << 20;
    assert_false(sharers_reading(&p, &k, 5.6, 10000));
    /* an outsider maps beside the tree's own: 200 KiB of tables beyond its need re-reads */
    put_mem102(300 + big, 600 + 300 * 1024);
    k.memory_bytes = 400u << 20;
    assert_true(sharers_reading(&p, &k, 6.0, 10000 + 800));
    assert_int_equal(p.cur.pss_kib, 600 + 300 * 1024);
    /* the machine's noise (400 KiB of tables) while 102 grows by 10 MiB of its own: the re-read
     * finds PSS moved as RSS did, no sharer: the floor is the move left */
    put_mem102(300 + big + 10 * 1024 / page_kib, 600 + 310 * 1024);
    k.memory_bytes = 410u << 20;
    assert_true(sharers_reading(&p, &k, 7.0, 10800 + 400));
    assert_false(p.sharers_found);
    NEAR(p.sharers_noise, 380);
    assert_false(sharers_reading(&p, &k, 8.0, 11200 + 400)); /* within twice the floor */
    rt_tree_part_close(&p);
    rt_gpu_part_close(&g);
    rt_roots_close(&c.roots);
}

/* The light I/O pass. With the walk on the group's clock, the group's storage counters count a
 * buffered write at writeback (v2's io.stat), never (v1's blkio charges it to the root group)
 * or have none (v2 without io): between walks the processes whose I/O grew at the last walk are
 * read again, so a steady writer's 10 MB a second lands in the seconds it was written in (from
 * the walk, which takes its base), not 30 MB at the next walk; the walk adds
 * only what the pass had not counted, so the intervals add up to the total, exact at every
 * walk, and a mark between walks counts the pass once. A process whose I/O did not grow at the
 * last walk is not read again: what it writes comes at the next walk. Without the two clocks (no
 * clock given: every reading walks) no pass runs. */
static void light_io_spreads_writes(void **state)
{
    (void)state;
    const uint64_t MB = 1000000, w0 = 1020;
    for (int mode = 0; mode < 3; mode++) { /* v1 blkio, no io counters, no clock (walks only) */
        put_io102(w0);
        rt_sample_ctx c;
        rt_gpu_part g;
        rt_tree_part p;
        tree_102_open(&c, &g, &p, 60.0);
        rt_cgroup cg = {.own = true, .exclusive = true};
        uint64_t gio = mode == 1 ? RT_NULL_U64 : 0; /* the group's count stays put: it misses them */
        rt_tree_group grp = {.cgroup = &cg, .exclusive = true, .cpu_ns = 0, .user_share = 1.0, .read_bytes = gio,
                             .write_bytes = gio};
        rt_cpu m = {.core_count = 2, .utilization_pct = 2.0};
        rt_tree_clock k = {.group = true, .pids = 3, .memory_bytes = 100 << 20};
        /* (at, walks, 102's write_bytes then, the interval's bytes expected with the pass) */
        static const struct {
            bool walk;
            uint64_t w_mb, want_mb;
        } steps[] = {
            {true, 0, 0},    /* the baseline: 102 first seen, with I/O; the walk takes its base */
            {false, 10, 10}, /* between walks: 102's growth since the walk */
            {false, 20, 10},
            {false, 30, 10},
            {true, 40, 10},  /* the walk: the 10 MB the pass had not counted */
            {false, 40, 0},  /* 102 grew at the walk: read again */
            {false, 45, 5},
            {true, 45, 0},   /* it grew since the last walk: on the pass's list again */
            {true, 45, 0},   /* no growth at this walk: not read by the pass after it */
            {false, 50, 0},
            {true, 50, 5},   /* the next walk books it */
        };
        uint64_t sum = 0;
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            double at = 1.0 + (double)i;
            put_io102(w0 + steps[i].w_mb * MB);
            rt_tree_part_walk_due(&p, mode == 2 ? NULL : &k, at); /* the clock's cadence (walks as given) */
            rt_tree_part_snapshot(&p, at, steps[i].walk, mode == 2 ? NULL : &k);
            rt_tree_part_delta(&p, i ? 1.0 : 0.0, &m, 0, &g, at, &grp);
            rt_tree_part_commit(&p);
            if (i == 0)
                continue;
            uint64_t want = steps[i].want_mb * MB;
            if (mode == 2) {
                /* no clock: no pass, nothing grows between walks (not a real sampler's
                 * course: without a clock every reading walks), a walk books all since the walk
                 * before (the fixture's group count stands still) */
                size_t last = i;
                while (last-- > 0 && !steps[last].walk) {
                }
                want = steps[i].walk ? (steps[i].w_mb - steps[last].w_mb) * MB : 0;
            }
            assert_int_equal(p.out.write_bytes, want);
            NEAR(p.out.write_bytes_per_sec, (double)want);
            sum += p.out.write_bytes;
            assert_int_equal(p.out.write_bytes_total, sum);
            if (steps[i].walk)
                assert_int_equal(sum, steps[i].w_mb * MB); /* exact at every walk */
            if (i == 3 && mode != 2) {
                /* a mark between walks: the light walk's 35 MB since the last walk, of which the
                 * pass counted 30 already: 35 MB in all, counted once */
                rt_tree_peek pk = {.io_ok = true, .root_ns = RT_NULL_U64, .root_exact_ns = RT_NULL_U64};
                pk.read_bytes = p.prev.read_bytes;
                pk.write_bytes = p.prev.write_bytes + 35 * MB;
                rt_tree_reading r;
                rt_tree_part_peek(&p, &pk, RT_NULL_U64, &r);
                NEAR(r.write_bytes, 35.0 * MB);
            }
        }
        assert_int_equal(sum, 50 * MB);
        rt_tree_part_close(&p);
        rt_gpu_part_close(&g);
        rt_roots_close(&c.roots);
    }
}

/* The walk takes the light pass's bases (a file opened and read for each process on its list)
 * only when a pass can come before the next walk: the walk's cadence longer than the sampling
 * interval. With a cadence no longer than it (every reading walks) the walk opens nothing; a
 * pass forced in all the same takes its base at its own first reading, and the walk after it
 * books what the process wrote before. */
static void light_bases_only_when_passes_come(void **state)
{
    (void)state;
    const uint64_t MB = 1000000, w0 = 1020;
    for (int slow = 1; slow >= 0; slow--) {
        put_io102(w0);
        rt_sample_ctx c;
        rt_gpu_part g;
        rt_tree_part p;
        /* the walk's cadence: its cost over RT_WALK_BUDGET (a fixture's walk: some µs, so
         * some ms), at most 60 s; or at most 0.5 ms, below the 1 ms interval */
        tree_102_open(&c, &g, &p, slow ? 60.0 : 0.0005);
        rt_cgroup cg = {.own = true, .exclusive = true};
        rt_tree_group grp = {.cgroup = &cg, .exclusive = true, .cpu_ns = 0, .user_share = 1.0, .read_bytes = 0,
                             .write_bytes = 0};
        rt_cpu m = {.core_count = 2, .utilization_pct = 2.0};
        rt_tree_clock k = {.group = true, .pids = 3, .memory_bytes = 100 << 20};
        static const struct {
            bool walk;
            uint64_t w_mb;
        } steps[] = {{true, 0}, {true, 10}, {false, 20}, {true, 20}};
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            double at = 1.0 + 0.001 * (double)i;
            put_io102(w0 + steps[i].w_mb * MB);
            rt_tree_part_walk_due(&p, &k, at);
            rt_tree_part_snapshot(&p, at, steps[i].walk, &k);
            rt_tree_part_delta(&p, i ? 0.001 : 0.0, &m, 0, &g, at, &grp);
            rt_tree_part_commit(&p);
            if (i == 2) /* the pass: from the walk's base, or from its own first reading */
                assert_int_equal(p.out.write_bytes, slow ? 10 * MB : 0);
            if (i == 3) /* the walk after it: the total is exact either way */
                assert_int_equal(p.out.write_bytes, slow ? 0 : 10 * MB);
        }
        assert_int_equal(p.out.write_bytes_total, 20 * MB);
        rt_tree_part_close(&p);
        rt_gpu_part_close(&g);
        rt_roots_close(&c.roots);
    }
}

/* The interval's cores held to the tree's tasks: no more than the tree had at either end of the
 * interval plus every task the machine made in it. The kernel's counters take a running task's
 * time in at its next tick, so the last sample, taken 1 ms after the one before as a
 * single-threaded command ends, held 3 ms of CPU (1.93 cores before the cap, in CI's run): one
 * core shows, the rest is carried, and dropped once nothing of the tree runs (the total keeps
 * it). A fork in the interval raises the cap by one; unknown forks set no cap. */
static void tasks_hold_the_cores(void **state)
{
    (void)state;
    part_fx f;
    fx_open(&f);
    f.m.utilization_pct = NAN; /* no tick of the machine's in so short an interval */
    f.cg.pids = 1;
    fx_walk(&f, 0.0, 0, 0, 1, RT_NULL_U64); /* the baseline */
    fx_read(&f, 0.1, 100, 0);
    NEAR(f.p.out.cores_used, 1.0);
    /* without the fork, one core at most (the rest carried); with one, two */
    fx_read(&f, 0.01, 115, 0);
    NEAR(f.p.out.cores_used, 1.0);
    fx_read(&f, 0.01, 125, 1);
    NEAR(f.p.out.cores_used, 1.5);
    /* unknown forks: no cap of the tasks' (the machine's cores still hold) */
    fx_read(&f, 0.01, 143, RT_NULL_U64);
    NEAR(f.p.out.cores_used, 1.8);
    /* the command ended: the last reading 1 ms later holds 3 ms; one core shows, the rest is
     * dropped with nothing running, the total keeps it */
    f.cg.pids = 0;
    fx_walk(&f, 0.001, 146, 146, 0, 0);
    NEAR(f.p.out.cores_used, 1.0);
    NEAR(f.p.out.cpu_secs_total, 0.146);
    NEAR(f.p.dropped_ns, 2e6);
    fx_close(&f);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cpu_held_to_machine, setup, teardown),
        cmocka_unit_test_setup_teardown(counters_backwards_keep_total, setup, teardown),
        cmocka_unit_test_setup_teardown(dead_tree_shows_nothing_more, setup, teardown),
        cmocka_unit_test(walk_clock),
        cmocka_unit_test_setup_teardown(walk_lead_not_booked, setup, teardown),
        cmocka_unit_test_setup_teardown(tasks_hold_the_cores, setup, teardown),
        cmocka_unit_test_setup_teardown(peek_io_counted_once, setup, teardown),
        cmocka_unit_test_setup_teardown(memory_fall_reads_all, setup, teardown),
        cmocka_unit_test_setup_teardown(sharers_noise_and_debt, setup, teardown),
        cmocka_unit_test_setup_teardown(sharers_own_churn, setup, teardown),
        cmocka_unit_test_setup_teardown(light_io_spreads_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(light_bases_only_when_passes_come, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
