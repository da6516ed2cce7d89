/* test_cpu.c - the sampler's CPU part (sample/cpu.c) through the replay API on a hand-written
 * /proc/stat: machine figures from the per-core lines alone (whatever the aggregate line
 * says), cores without a tick, hotplug matched by core id, counters going backwards, and
 * more cores than first seen. The count of every process (all_process_count): walked again
 * whenever /proc/stat's `processes` or /proc/loadavg's tasks or last pid moved, carried while
 * none did, walked every sample without them; its walk budget (the part itself); and the
 * hidepid check of mountinfo. */
#include "unit.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>

#include "resource_tracker.h"
#include "sample/cpu.h"
#include "sample/replay.h"
#include "sample/sampler_internal.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rt-cpu-XXXXXX");
    unit_tmpdir(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unit_rmtree(dir);
    return 0;
}

/* One core's ticks: user nice system idle iowait (irq, softirq, steal 0). id -1: "cpu". */
typedef struct core {
    int id;
    unsigned long user, nice, sys, idle, iowait;
} core;

/* Writes <dir>/stat: the aggregate line agg, then the cores, then procs_running. */
static void write_stat(const core *agg, const core *c, size_t n)
{
    static char text[1 << 14];
    size_t len = 0;
    for (size_t i = 0; i <= n; i++) {
        const core *k = i == 0 ? agg : &c[i - 1];
        char name[16];
        snprintf(name, sizeof name, k->id < 0 ? "cpu " : "cpu%d", k->id);
        len += (size_t)snprintf(text + len, sizeof text - len, "%s %lu %lu %lu %lu %lu 0 0 0 0 0\n", name, k->user,
                                k->nice, k->sys, k->idle, k->iowait);
    }
    snprintf(text + len, sizeof text - len, "intr 1 2 3\nctxt 99\nprocs_running 3\nprocs_blocked 0\n");
    unit_put(dir, "stat", text);
}

/* The sum of the per-core lines, as the aggregate line should be. */
static core sum_of(const core *c, size_t n)
{
    core a = {.id = -1};
    for (size_t i = 0; i < n; i++) {
        a.user += c[i].user;
        a.nice += c[i].nice;
        a.sys += c[i].sys;
        a.idle += c[i].idle;
        a.iowait += c[i].iowait;
    }
    return a;
}

/* A sampler on dir whose baseline is the stat written now. */
static rt_sampler *open_sampler(void)
{
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = dir;
    o.sys_root = "/nonexistent";
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    return s;
}

/* The per-core sum, in the order the library adds them. */
static double sum_per_core(const rt_cpu *c)
{
    double sum = 0;
    for (size_t i = 0; i < c->core_count; i++)
        if (!isnan(c->per_core_pct[i]))
            sum += c->per_core_pct[i] / 100.0;
    return sum;
}

static void utilization_is_sum_of_cores(void **state)
{
    (void)state;
    core c0[] = {{0, 100, 0, 50, 1000, 10}, {1, 200, 10, 50, 900, 0}, {2, 5, 0, 5, 20, 0}, {3, 1, 1, 1, 1, 1}};
    core agg = sum_of(c0, 4);
    write_stat(&agg, c0, 4);
    rt_sampler *s = open_sampler();
    /* busy/total per core: 30/100, 75/100, 1/3, 2/7 */
    core c1[] = {{0, 120, 0, 60, 1060, 20}, {1, 250, 15, 70, 925, 0}, {2, 6, 0, 5, 22, 0}, {3, 2, 1, 2, 5, 2}};
    /* an aggregate line rounded apart from the cores (the kernel sums them separately) */
    core agg1 = sum_of(c1, 4);
    agg1.user += 37;
    agg1.idle -= 11;
    write_stat(&agg1, c1, 4);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp), RT_OK);
    const rt_cpu *c = smp->cpu;
    assert_int_equal(c->core_count, 4);
    assert_true(fabs(c->per_core_pct[0] - 30.0) < 1e-12);
    assert_true(fabs(c->per_core_pct[1] - 75.0) < 1e-12);
    assert_true(fabs(c->per_core_pct[2] - 100.0 / 3) < 1e-12);
    assert_true(fabs(c->per_core_pct[3] - 200.0 / 7) < 1e-12);
    assert_true(c->utilization_pct == sum_per_core(c)); /* exactly */
    assert_true(fabs(c->utilization_pct - (0.30 + 0.75 + 1.0 / 3 + 2.0 / 7)) < 1e-12);
    /* user+nice and system seconds from the cores too, not from the aggregate line */
    double tck = (double)sysconf(_SC_CLK_TCK);
    assert_true(fabs(c->utime_secs - (20 + 55 + 1 + 1) / tck) < 1e-12);
    assert_true(fabs(c->stime_secs - (10 + 20 + 0 + 1) / tck) < 1e-12);
    assert_int_equal(c->process_count, 3);
    assert_true(isnan(c->process_cores_used)); /* no tracked tree */
    assert_true(c->process_child_count == RT_NULL_I64);
    rt_sampler_free(s);
}

static void no_tick_is_null(void **state)
{
    (void)state;
    core c0[] = {{0, 10, 0, 10, 100, 0}, {1, 10, 0, 10, 100, 0}};
    core agg = sum_of(c0, 2);
    write_stat(&agg, c0, 2);
    rt_sampler *s = open_sampler();
    /* nothing moved on any core; the aggregate line alone moved: still nothing to tell */
    agg.user += 5;
    write_stat(&agg, c0, 2);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    assert_int_equal(smp->cpu->core_count, 2);
    assert_true(isnan(smp->cpu->utilization_pct));
    assert_true(isnan(smp->cpu->per_core_pct[0]));
    assert_true(isnan(smp->cpu->per_core_pct[1]));
    assert_true(smp->cpu->utime_secs == 0.0); /* the cores were there: zero seconds, known */
    /* one core ticks: utilization is that core alone, the other stays null */
    c0[1].idle += 50;
    c0[1].user += 50;
    write_stat(&agg, c0, 2);
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    assert_true(isnan(smp->cpu->per_core_pct[0]));
    assert_true(smp->cpu->per_core_pct[1] == 50.0);
    assert_true(smp->cpu->utilization_pct == 0.5);
    rt_sampler_free(s);
}

static void hotplug_by_core_id(void **state)
{
    (void)state;
    core c0[] = {{0, 100, 0, 0, 100, 0}, {1, 100, 0, 0, 100, 0}, {2, 100, 0, 0, 100, 0}};
    core agg = sum_of(c0, 3);
    write_stat(&agg, c0, 3);
    rt_sampler *s = open_sampler();
    /* core 1 goes offline, core 3 comes online: core 2 is now the second line */
    core c1[] = {{0, 110, 0, 0, 190, 0}, {2, 180, 0, 0, 120, 0}, {3, 7, 0, 0, 3, 0}};
    agg = sum_of(c1, 3);
    write_stat(&agg, c1, 3);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    const rt_cpu *c = smp->cpu;
    assert_int_equal(c->core_count, 3);
    assert_true(c->per_core_pct[0] == 10.0);  /* 10 of 100 */
    assert_true(c->per_core_pct[1] == 80.0);  /* core 2 against core 2: 80 of 100 */
    assert_true(isnan(c->per_core_pct[2]));   /* core 3: no previous reading */
    assert_true(fabs(c->utilization_pct - 0.9) < 1e-12);
    assert_true(c->utilization_pct == sum_per_core(c));
    assert_true(fabs(c->utime_secs - 90 / (double)sysconf(_SC_CLK_TCK)) < 1e-12); /* core 3 not counted */
    /* next interval: core 3 has its previous reading now */
    core c2[] = {{0, 110, 0, 0, 290, 0}, {2, 180, 0, 0, 220, 0}, {3, 57, 0, 0, 53, 0}};
    agg = sum_of(c2, 3);
    write_stat(&agg, c2, 3);
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    c = smp->cpu;
    assert_true(c->per_core_pct[0] == 0.0);
    assert_true(c->per_core_pct[1] == 0.0);
    assert_true(c->per_core_pct[2] == 50.0);
    assert_true(c->utilization_pct == 0.5);
    /* core 1 back, core 3 gone */
    core c3[] = {{0, 160, 0, 0, 340, 0}, {1, 500, 0, 0, 500, 0}, {2, 230, 0, 0, 270, 0}};
    agg = sum_of(c3, 3);
    write_stat(&agg, c3, 3);
    rt_sampler_sample_at(s, 1002.0, 1.7e9 + 2, &smp);
    c = smp->cpu;
    assert_true(c->per_core_pct[0] == 50.0);
    assert_true(isnan(c->per_core_pct[1])); /* came back: starts afresh */
    assert_true(c->per_core_pct[2] == 50.0);
    assert_true(c->utilization_pct == 1.0);
    rt_sampler_free(s);
}

static void backwards_never_negative(void **state)
{
    (void)state;
    core c0[] = {{0, 100, 0, 100, 100, 0}, {1, 100, 0, 0, 100, 50}, {2, 0, 0, 0, 100, 0}};
    core agg = sum_of(c0, 3);
    write_stat(&agg, c0, 3);
    rt_sampler *s = open_sampler();
    /* core 0: busy went backwards while the total went on (0%); core 1: the total went
     * backwards (no data); core 2: idle went backwards, busy more than the total (100%) */
    core c1[] = {{0, 50, 0, 10, 400, 0}, {1, 110, 0, 0, 90, 0}, {2, 50, 0, 0, 60, 0}};
    agg = sum_of(c1, 3);
    write_stat(&agg, c1, 3);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    const rt_cpu *c = smp->cpu;
    assert_true(c->per_core_pct[0] == 0.0);
    assert_true(isnan(c->per_core_pct[1]));
    assert_true(c->per_core_pct[2] == 100.0);
    for (size_t i = 0; i < c->core_count; i++)
        assert_true(isnan(c->per_core_pct[i]) || (c->per_core_pct[i] >= 0.0 && c->per_core_pct[i] <= 100.0));
    assert_true(c->utilization_pct == 1.0);
    assert_true(c->utime_secs >= 0.0);
    assert_true(c->stime_secs == 0.0); /* core 0's system ticks went backwards: 0 */
    double tck = (double)sysconf(_SC_CLK_TCK);
    assert_true(fabs(c->utime_secs - (0 + 10 + 50) / tck) < 1e-12);
    /* from the lower values on, deltas count again */
    core c2[] = {{0, 60, 0, 10, 490, 0}, {1, 120, 0, 0, 180, 0}, {2, 50, 0, 0, 160, 0}};
    agg = sum_of(c2, 3);
    write_stat(&agg, c2, 3);
    rt_sampler_sample_at(s, 1001.0, 1.7e9 + 1, &smp);
    c = smp->cpu;
    assert_true(c->per_core_pct[0] == 10.0);
    assert_true(c->per_core_pct[1] == 10.0);
    assert_true(c->per_core_pct[2] == 0.0);
    rt_sampler_free(s);
}

static void more_cores_than_first_seen(void **state)
{
    (void)state;
    core c[40];
    for (int i = 0; i < 40; i++)
        c[i] = (core){i, 100, 0, 0, 100, 0};
    core agg = sum_of(c, 2);
    write_stat(&agg, c, 2);
    rt_sampler *s = open_sampler();
    const rt_sample *smp;
    /* 2 -> 12 -> 40 cores: the arrays grow, the first cores keep their previous readings */
    size_t counts[] = {12, 40, 40};
    for (size_t r = 0; r < 3; r++) {
        size_t n = counts[r];
        for (size_t i = 0; i < n; i++) {
            c[i].user += i % 2 ? 100 : 0;
            c[i].idle += i % 2 ? 0 : 100;
        }
        agg = sum_of(c, n);
        write_stat(&agg, c, n);
        rt_sampler_sample_at(s, 1000.0 + (double)r, 1.7e9 + (double)r, &smp);
        assert_int_equal(smp->cpu->core_count, n);
        size_t seen_before = r == 0 ? 2 : counts[r - 1];
        size_t busy = 0;
        for (size_t i = 0; i < n; i++) {
            double v = smp->cpu->per_core_pct[i];
            if (i >= seen_before) {
                assert_true(isnan(v)); /* new this interval */
                continue;
            }
            assert_true(v == (i % 2 ? 100.0 : 0.0));
            busy += i % 2;
        }
        assert_true(smp->cpu->utilization_pct == (double)busy);
        assert_true(smp->cpu->utilization_pct == sum_per_core(smp->cpu));
    }
    /* and fewer again: only those are listed */
    agg = sum_of(c, 3);
    write_stat(&agg, c, 3);
    rt_sampler_sample_at(s, 1010.0, 1.7e9 + 10, &smp);
    assert_int_equal(smp->cpu->core_count, 3);
    rt_sampler_free(s);
}

/* ---- the count of every process ------------------------------------------------------------ */

/* Writes <dir>/stat (one core, `processes` forks unless 0: no such line) and, unless threads
 * is 0, <dir>/loadavg with threads tasks and last_pid. */
static void write_counters(unsigned long forks, unsigned long threads, unsigned long last_pid)
{
    char text[512];
    snprintf(text, sizeof text,
             "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 10 0 10 100 0 0 0 0 0 0\nintr 1 2\nctxt 99\nbtime 1\n"
             "%s%lu\nprocs_running 1\nprocs_blocked 0\n",
             forks ? "processes " : "no_processes_line ", forks);
    unit_put(dir, "stat", text);
    if (threads) {
        snprintf(text, sizeof text, "0.10 0.20 0.30 1/%lu %lu\n", threads, last_pid);
        unit_put(dir, "loadavg", text);
    }
}

/* Makes (or removes) the numbered entry <dir>/pid. */
static void process(const char *pid, bool there)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, pid);
    if (there)
        assert_int_equal(mkdir(path, 0755), 0);
    else
        assert_int_equal(rmdir(path), 0);
}

/* The sample's count at mono t. */
static int64_t count_at(rt_sampler *s, double t)
{
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, t, 1.7e9 + t, &smp), RT_OK);
    return smp->cpu->all_process_count;
}

/* Counted exactly through every kind of change the counters show: a fork of a process, of a
 * thread (no new entry), a release without a fork, a pid allocated; carried (no walk) while
 * nothing moved, which shows here as an entry added behind the counters' back staying uncounted
 * until they move. */
static void process_count_follows_counters(void **state)
{
    (void)state;
    write_counters(1000, 50, 400);
    process("1", true);
    process("42", true);
    process("self", true); /* not a number: never a process */
    rt_sampler *s = open_sampler();
    /* no walk budget in the way on a slow build (valgrind, -O0 with gcov: a first walk spent the
     * 0.5 ms burst, and the fork below was carried uncounted): the budget has tests of its own */
    s->cpu.walk_share = 1.0;
    s->cpu.walk_burst = s->cpu.walk_tokens = 1.0;
    assert_int_equal(count_at(s, 1000), 2);
    /* nothing moved: the count is carried; an entry the counters do not show is not seen */
    process("77", true);
    assert_int_equal(count_at(s, 1001), 2);
    assert_int_equal(count_at(s, 1002), 2);
    /* a fork (processes and tasks up): counted again, exactly */
    write_counters(1001, 51, 401);
    assert_int_equal(count_at(s, 1003), 3);
    /* a release without a fork (tasks down, processes as they were): counted again */
    process("42", false);
    write_counters(1001, 50, 401);
    assert_int_equal(count_at(s, 1004), 2);
    /* a process forked and another released in the same interval (tasks as they were): the
     * fork counter alone shows it */
    process("1", false);
    process("88", true);
    write_counters(1002, 50, 402);
    assert_int_equal(count_at(s, 1005), 2);
    /* a thread forked (no new entry): counted again, the same */
    write_counters(1003, 51, 403);
    assert_int_equal(count_at(s, 1006), 2);
    /* the last pid alone moved (a fork in a pid namespace below, as the reader's cursor shows): again */
    process("99", true);
    write_counters(1003, 51, 404);
    assert_int_equal(count_at(s, 1007), 3);
    /* the tasks alone moved (a thread released) */
    process("99", false);
    write_counters(1003, 50, 404);
    assert_int_equal(count_at(s, 1008), 2);
    rt_sampler_free(s);
}

/* Without /proc/loadavg, or without the `processes` line, nothing vouches for an old count:
 * every sample walks (what every sample did before the counters were read). */
static void process_count_walked_without_counters(void **state)
{
    (void)state;
    for (int kind = 0; kind < 2; kind++) {
        char path[128];
        snprintf(path, sizeof path, "%s/loadavg", dir);
        unlink(path);
        write_counters(kind == 0 ? 1000 : 0, kind == 0 ? 0 : 50, 400); /* no loadavg; no `processes` */
        process("1", true);
        rt_sampler *s = open_sampler();
        assert_int_equal(count_at(s, 1000), 1);
        process("2", true); /* the counters (where there are any) as they were */
        assert_int_equal(count_at(s, 1001), 2);
        process("3", true);
        assert_int_equal(count_at(s, 1002), 3);
        rt_sampler_free(s);
        process("1", false);
        process("2", false);
        process("3", false);
    }
}

/* A loadavg that cannot be parsed is as none: every sample walks. */
static void process_count_bad_loadavg(void **state)
{
    (void)state;
    write_counters(1000, 50, 400);
    unit_put(dir, "loadavg", "0.10 0.20 0.30 1-50 400\n");
    process("1", true);
    rt_sampler *s = open_sampler();
    assert_int_equal(count_at(s, 1000), 1);
    process("2", true);
    assert_int_equal(count_at(s, 1001), 2);
    rt_sampler_free(s);
}

/* The part on dir with its own context (the budget's fields are the part's). */
typedef struct part_env {
    rt_sample_ctx c;
    rt_cpu_part p;
} part_env;

static void part_open(part_env *e)
{
    memset(e, 0, sizeof *e);
    assert_int_equal(rt_roots_open(&e->c.roots, dir, "/nonexistent"), RT_OK);
    e->c.clk_tck = 100;
    rt_buf_init(&e->c.rbuf, 1u << 20);
    assert_int_equal(rt_cpu_part_open(&e->p, &e->c), 0);
    assert_false(e->p.walk_always); /* a fixture, not procfs: nothing hidden */
    assert_true(e->p.loadavg_fd >= 0);
}

static void part_close(part_env *e)
{
    rt_cpu_part_close(&e->p);
    rt_buf_free(&e->c.rbuf);
    rt_roots_close(&e->c.roots);
}

/* The walk's budget: with the bucket empty, a count the counters say moved is carried (and
 * counted as deferred) instead of walked; once there is budget, the next sample walks and is
 * exact again. Unchanged counters never walk, budget or not. */
static void process_count_budget(void **state)
{
    (void)state;
    write_counters(1000, 50, 400);
    process("1", true);
    part_env e;
    part_open(&e);
    assert_true(e.p.walk_share == RT_CPU_WALK_SHARE && e.p.walk_burst == RT_CPU_WALK_BURST_SECS);
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c));
    assert_int_equal(e.p.all_processes, 1);
    assert_int_equal(e.p.walks, 1);
    assert_true(e.p.walk_tokens < RT_CPU_WALK_BURST_SECS); /* the walk was charged */
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c));
    assert_int_equal(e.p.walks, 1); /* nothing moved: no walk */
    /* no budget left, none to come */
    e.p.walk_share = 0;
    e.p.walk_tokens = 0;
    process("2", true);
    write_counters(1001, 51, 401);
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c));
    assert_int_equal(e.p.walks, 1);
    assert_int_equal(e.p.walks_deferred, 1);
    assert_int_equal(e.p.all_processes, 1); /* carried: stale, as the budget allows */
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c));
    assert_int_equal(e.p.walks_deferred, 2); /* still measured against the walk's counters */
    /* budget again: walked, exact, and charged */
    e.p.walk_tokens = 1;
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c));
    assert_int_equal(e.p.walks, 2);
    assert_int_equal(e.p.all_processes, 2);
    assert_true(e.p.walk_tokens < 1);
    e.p.walk_tokens = 0;
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c)); /* as the walk left them: nothing to spend */
    assert_int_equal(e.p.walks, 2);
    assert_int_equal(e.p.walks_deferred, 2);
    /* the bucket fills at walk_share of the time passed, up to walk_burst */
    e.p.walk_share = 1.0;
    e.p.walk_burst = 0.5;
    e.p.walk_tokens = -1e-9;
    e.p.walk_tokens_mono -= 0.002; /* topped up 2 ms ago: at a whole core, 2 ms of walking */
    process("3", true);
    write_counters(1002, 52, 402);
    assert_true(rt_cpu_part_snapshot(&e.p, &e.c));
    assert_int_equal(e.p.walks, 3);
    assert_int_equal(e.p.all_processes, 3);
    assert_true(e.p.walk_tokens <= 0.5);
    part_close(&e);
}

/* hidepid=invisible or ptraceable (the listing follows credentials) or a procfs mount that is
 * not there: walked every sample; hidepid off or noaccess (a listing shows every process), or
 * no option: the counters vouch. Only the proc root's own device counts. */
static void hidepid_from_mountinfo(void **state)
{
    (void)state;
#define MOUNTS(opts)                                                                                     \
    "22 1 0:5 / /dev rw - devtmpfs udev rw,size=1k\n"                                                    \
    "23 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc " opts "\n"                 \
    "24 1 0:30 / /other/proc rw - proc proc rw,hidepid=invisible\n"
    static const struct {
        const char *text;
        bool hides;
    } cases[] = {{MOUNTS("rw"), false},
                 {MOUNTS("rw,hidepid=off"), false},
                 {MOUNTS("rw,hidepid=0"), false},
                 {MOUNTS("rw,hidepid=noaccess"), false},
                 {MOUNTS("rw,hidepid=1,gid=4"), false},
                 {MOUNTS("rw,hidepid=invisible"), true},
                 {MOUNTS("rw,hidepid=2"), true},
                 {MOUNTS("rw,hidepid=ptraceable,subset=pid"), true},
                 {MOUNTS("rw,gid=4,hidepid=4"), true}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(rt_mountinfo_hides_pids(cases[i].text, strlen(cases[i].text), "0:21"), cases[i].hides);
    const char *text = MOUNTS("rw");
#undef MOUNTS
    assert_true(rt_mountinfo_hides_pids(text, strlen(text), "0:30")); /* that mount hides */
    assert_true(rt_mountinfo_hides_pids(text, strlen(text), "0:99")); /* not there: take no chance */
    assert_true(rt_mountinfo_hides_pids(text, strlen(text), "0:5"));  /* not a procfs */
    assert_true(rt_mountinfo_hides_pids("", 0, "0:21"));
}

/* The live /proc's numbered entries now, or -1. */
static int64_t live_count(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
    closedir(d);
    return n;
}

/* On the live /proc (no hidepid): the counters are read, and a sample's count is the listing's
 * whenever the listing was the same right before and right after it; a child started between
 * two samples is counted. */
static void process_count_live(void **state)
{
    (void)state;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.sys_root = "/nonexistent";
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    if (s->cpu.walk_always) { /* this /proc hides pids: every sample walks, nothing to check here */
        rt_sampler_free(s);
        skip();
    }
    assert_true(s->cpu.loadavg_fd >= 0);
    s->cpu.walk_share = 1.0; /* no budget in the way on a busy test machine */
    s->cpu.walk_burst = s->cpu.walk_tokens = 1.0;
    int agreed = 0;
    for (int i = 0; i < 200 && agreed < 3; i++) {
        pid_t child = 0;
        if (i % 2) {
            child = fork();
            assert_true(child >= 0);
            if (child == 0) {
                pause();
                _exit(0);
            }
        }
        int64_t before = live_count();
        const rt_sample *smp;
        assert_int_equal(rt_sampler_sample_at(s, 1000.0 + i, 1.7e9 + i, &smp), RT_OK);
        int64_t got = smp->cpu->all_process_count, after = live_count();
        if (before == after) {
            assert_int_equal(got, before);
            agreed++;
        }
        if (child > 0) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
    }
    assert_true(agreed > 0);
    assert_true(s->cpu.key_valid);
    rt_sampler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(utilization_is_sum_of_cores, setup, teardown),
        cmocka_unit_test_setup_teardown(no_tick_is_null, setup, teardown),
        cmocka_unit_test_setup_teardown(hotplug_by_core_id, setup, teardown),
        cmocka_unit_test_setup_teardown(backwards_never_negative, setup, teardown),
        cmocka_unit_test_setup_teardown(more_cores_than_first_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(process_count_follows_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(process_count_walked_without_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(process_count_bad_loadavg, setup, teardown),
        cmocka_unit_test_setup_teardown(process_count_budget, setup, teardown),
        cmocka_unit_test(hidepid_from_mountinfo),
        cmocka_unit_test(process_count_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
