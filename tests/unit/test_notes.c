/* test_notes.c - the answers people act on (need.c, recommend.c, notes.c): the memory need from
 * the figures a run has (the kernel's peaks before sampled ones, page cache never a need, a
 * lower bound said so, unknown never a number), the recommendation over runs (the highest need,
 * headroom that shrinks as runs agree, OOM kills and quotas as floors, unknown memory left out
 * of the schedulers' words), and every note: when it is given, when not, one line, cut safely. */
#include "unit.h"

#include <math.h>

#include "analysis/record.h"
#include "resource_tracker.h"

/* A record of a tree (pid 7) at ts covering 1 s, every figure null but those set after. */
static rt_record rec_at(double ts)
{
    rt_record r;
    rt_record_null(&r);
    r.timestamp_secs = ts;
    r.interval_secs = 1;
    r.process_pid = 7;
    r.process_alive = 1;
    r.process_cores = 1;
    return r;
}

/* The summary of the records rs[0..n) (st keeps it; free st after). */
static const rt_summary *summary_of(rt_stats **st, const rt_record *rs, size_t n)
{
    *st = rt_stats_new();
    assert_non_null(*st);
    for (size_t i = 0; i < n; i++)
        rt_stats_add(*st, &rs[i]);
    return rt_stats_summary(*st);
}

static void assert_need(const rt_need *n, double mib, int source, int sampled)
{
    if (isnan(mib))
        assert_true(isnan(n->mib));
    else
        assert_true(fabs(n->mib - mib) < 1e-9);
    assert_int_equal(n->source, source);
    assert_int_equal(n->sampled, sampled);
}

/* The memory need of the records rs[0..n), asserted as assert_need does. */
static void need_is(const rt_record *rs, size_t n, double mib, int source, int sampled)
{
    rt_stats *st;
    assert_need(&summary_of(&st, rs, n)->memory_need, mib, source, sampled);
    rt_stats_free(st);
}

/* ---- the need ----------------------------------------------------------------------------- */

static void need_prefers_the_kernel(void **state)
{
    (void)state;
    rt_stats *st;
    rt_record r[2] = {rec_at(100), rec_at(101)};
    /* samples only: the PSS peak, a lower bound */
    r[0].process_pss_mib = 100;
    r[1].process_pss_mib = 300;
    const rt_summary *s = summary_of(&st, r, 2);
    assert_need(&s->memory_need, 300, RT_NEED_PSS, 1);
    assert_string_equal(rt_need_source_name(s->memory_need.source), "pss");
    rt_stats_free(st);
    /* the combined RSS (shared pages once) above it; the sum of the processes' RSS is not used
     * while the parts are known (it counts shared pages in every process) */
    r[1].combined.total_rss_mib = 350;
    r[1].process_rss_mib = 900;
    s = summary_of(&st, r, 2);
    assert_need(&s->memory_need, 350, RT_NEED_RSS, 1);
    rt_stats_free(st);
    /* one process's kernel peak above everything sampled: the spike between samples; without
     * a cgroup still a lower bound (what other processes held then, tmpfs, kernel memory) */
    r[1].process_rss_hwm_mib = 610;
    s = summary_of(&st, r, 2);
    assert_need(&s->memory_need, 610, RT_NEED_PROCESS_PEAK, 1);
    rt_stats_free(st);
    /* the processes' peaks as if at once (issue 49): above one process's, without a cgroup */
    r[1].process_rss_hwm_tree_mib = 700;
    need_is(r, 2, 700, RT_NEED_PROCESS_PEAKS, 1);
    assert_string_equal(rt_need_source_name(RT_NEED_PROCESS_PEAKS), "process_peaks");
    /* with the job's cgroup its figure counts the tree exactly: the peaks are no candidate,
     * even above it (processes that peaked apart), and nothing is a lower bound */
    r[1].process_unreclaimable_peak_mib = 650;
    need_is(r, 2, 650, RT_NEED_CGROUP, 0);
    r[1].process_unreclaimable_peak_mib = 600;
    need_is(r, 2, 610, RT_NEED_PROCESS_PEAK, 0);
    /* the job cgroup's unreclaimable peak (shared memory no process maps) above that */
    r[1].process_unreclaimable_peak_mib = 1030;
    s = summary_of(&st, r, 2);
    assert_need(&s->memory_need, 1030, RT_NEED_CGROUP, 0);
    assert_string_equal(rt_need_source_name(RT_NEED_CGROUP), "cgroup");
    rt_stats_free(st);
    /* a cgroup that held little (a file streamed through the page cache, which is no need)
     * and a larger sampled figure: the larger, and the cgroup stands behind it: no lower bound */
    r[1].process_unreclaimable_peak_mib = 5;
    r[1].process_rss_hwm_mib = 9;
    r[1].process_memory_peak_mib = 2052; /* the charge, page cache included: never the need */
    s = summary_of(&st, r, 2);
    assert_need(&s->memory_need, 350, RT_NEED_RSS, 0);
    rt_stats_free(st);
    /* equal figures: the kernel's is named */
    r[1].process_unreclaimable_peak_mib = 350;
    s = summary_of(&st, r, 2);
    assert_need(&s->memory_need, 350, RT_NEED_CGROUP, 0);
    rt_stats_free(st);
}

static void need_unknown_and_vram(void **state)
{
    (void)state;
    rt_stats *st;
    rt_record r[1] = {rec_at(100)};
    const rt_summary *s = summary_of(&st, r, 1);
    assert_need(&s->memory_need, NAN, RT_NEED_UNKNOWN, 0);
    assert_need(&s->vram_need, NAN, RT_NEED_UNKNOWN, 0);
    assert_string_equal(rt_need_source_name(RT_NEED_UNKNOWN), "unknown");
    assert_string_equal(rt_need_source_name(99), "unknown");
    assert_non_null(rt_need_source_text(99));
    rt_stats_free(st);
    /* a file without the parts: the sum of the RSS (the kernel's ru_maxrss folded in) */
    r[0].process_rss_mib = 40;
    r[0].process_rss_peak_mib = 70;
    s = summary_of(&st, r, 1);
    assert_need(&s->memory_need, 70, RT_NEED_RSS, 1);
    rt_stats_free(st);
    /* VRAM: NVML's accounting peak over the sampled one */
    r[0].process_gpu_vram_mib = 900;
    s = summary_of(&st, r, 1);
    assert_need(&s->vram_need, 900, RT_NEED_VRAM, 1);
    rt_stats_free(st);
    r[0].process_gpu_vram_peak_mib = 2000;
    s = summary_of(&st, r, 1);
    assert_need(&s->vram_need, 2000, RT_NEED_NVML_PEAK, 0);
    rt_stats_free(st);
    /* no tree: no need at all */
    r[0] = rec_at(100);
    r[0].process_pid = r[0].process_cores = r[0].process_alive = NAN;
    r[0].memory_used_mib = 5000;
    s = summary_of(&st, r, 1);
    assert_false(s->has_process);
    assert_need(&s->memory_need, NAN, RT_NEED_UNKNOWN, 0);
    rt_stats_free(st);
}

/* ---- the recommendation ---------------------------------------------------------------------- */

/* A summary of one run that needed mib of memory (source src) with mean cores. */
static rt_summary run_needing(double mib, int src, double cores)
{
    rt_stats *st;
    rt_record r = rec_at(100);
    r.process_cores = cores;
    if (src == RT_NEED_CGROUP)
        r.process_unreclaimable_peak_mib = mib;
    else if (src == RT_NEED_PROCESS_PEAK)
        r.process_rss_hwm_mib = mib;
    else if (src == RT_NEED_PSS)
        r.process_pss_mib = mib;
    rt_summary s = *summary_of(&st, &r, 1);
    rt_stats_free(st);
    s.usage = NULL; /* freed with the stats */
    s.cores = NULL;
    return s;
}

static void recommend_headroom_and_highest_need(void **state)
{
    (void)state;
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    rt_summary a = run_needing(600, RT_NEED_PROCESS_PEAK, 0.4);
    const rt_summary *one[] = {&a};
    assert_int_equal(rt_recommend(one, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 1024); /* 600 x 1.2 = 720 */
    assert_true(fabs(rec.headroom_pct - 20) < 1e-9);
    assert_true(fabs(rec.memory_need_mib - 600) < 1e-9);
    assert_int_equal(rec.memory_source, RT_NEED_PROCESS_PEAK);
    assert_int_equal(rec.memory_sampled, 1); /* no cgroup figure: a lower bound */
    assert_int_equal(rec.cpu, 1);
    /* the highest need of the runs, never a mean; headroom 10 + 10/n */
    rt_summary b = run_needing(1000, RT_NEED_CGROUP, 1.6), c = run_needing(200, RT_NEED_PSS, 2.0);
    const rt_summary *three[] = {&a, &b, &c};
    assert_int_equal(rt_recommend(three, 3, &rec), RT_OK);
    assert_true(fabs(rec.headroom_pct - (10 + 10.0 / 3)) < 1e-9);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(1000 * (1.1 + 0.1 / 3)));
    assert_int_equal(rec.memory_source, RT_NEED_CGROUP);
    assert_int_equal(rec.cpu, 1); /* round((0.4 + 1.6 + 2.0) / 3) = 1 */
    assert_int_equal(rec.runs, 3);
    /* two runs: 15% */
    const rt_summary *two[] = {&a, &b};
    assert_int_equal(rt_recommend(two, 2, &rec), RT_OK);
    assert_true(fabs(rec.headroom_pct - 15) < 1e-9);
    assert_int_equal(rec.memory_mib, 2048); /* 1000 x 1.15 = 1150 */
    /* memory unknown: no number that looks measured, and the schedulers' words leave it out */
    rt_summary u = run_needing(NAN, RT_NEED_UNKNOWN, 1.0);
    const rt_summary *unk[] = {&u};
    assert_int_equal(rt_recommend(unk, 1, &rec), RT_OK);
    assert_true(rec.memory_mib == RT_NULL_I64);
    assert_int_equal(rec.memory_source, RT_NEED_UNKNOWN);
    char line[256];
    rt_format_recommendation(&rec, RT_SCHED_SLURM, line, sizeof line);
    assert_string_equal(line, "--cpus-per-task=1\n");
    rt_format_recommendation(&rec, RT_SCHED_K8S, line, sizeof line);
    assert_string_equal(line, "resources: {requests: {cpu: \"1\"}}\n");
    rt_format_recommendation(&rec, RT_SCHED_METAFLOW, line, sizeof line);
    assert_string_equal(line, "@resources(cpu=1)\n");
    /* unknown, but OOM-killed at a known limit: strictly above the limit */
    u.oom_kills = 1;
    u.memory_limit_mib = 1024;
    assert_int_equal(rt_recommend(unk, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 2048);
    assert_int_equal(rec.oom_killed, 1);
    /* killed above its need: the limit it died at wins, twice it (the need above it unknown) */
    a.oom_kills = 1;
    a.memory_limit_mib = 4096;
    assert_int_equal(rt_recommend(one, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 8192);
    assert_int_equal(rec.memory_learn, 1);
}

/* ---- the notes --------------------------------------------------------------------------------- */

/* The notes of s (opts may be NULL) into n[], and how many. */
static size_t notes_of(const rt_summary *s, const char *why, rt_note *n)
{
    rt_notes_options o = RT_NOTES_OPTIONS_INIT;
    o.cgroup_why = why;
    return rt_summary_notes(s, &o, n, RT_NOTES_MAX);
}

/* The note of kind in n[0..count), or NULL; never two of a kind. */
static const rt_note *find(const rt_note *n, size_t count, int kind)
{
    const rt_note *found = NULL;
    for (size_t i = 0; i < count; i++) {
        assert_null(strchr(n[i].text, '\n'));
        assert_true(strlen(n[i].text) > 0);
        if (n[i].kind == kind) {
            assert_null(found);
            found = &n[i];
        }
    }
    return found;
}

/* The note of that kind, which must be there (a test failure if not; never NULL, so that the
 * callers read its text without a check the optimizer cannot see through). */
static const rt_note *must(const rt_note *n, size_t count, int kind)
{
    static const rt_note missing = {.kind = -1};
    const rt_note *found = find(n, count, kind);
    if (!found)
        fail_msg("no note of kind %d", kind);
    return found ? found : &missing;
}

/* A run in the job's own group that went well: no note at all. */
static rt_summary quiet_run(void)
{
    rt_summary s = run_needing(600, RT_NEED_CGROUP, 1.0);
    s.process_cgroup_exclusive = 1;
    s.oom_kills = 0;
    s.memory_limit_mib = NAN;
    s.gpu_count = 0;
    s.left_behind = 0;
    return s;
}

static void notes_each_kind(void **state)
{
    (void)state;
    rt_note n[RT_NOTES_MAX];
    rt_summary s = quiet_run();
    assert_int_equal(notes_of(&s, NULL, n), 0);

    /* accounting: no group, with the tool's reason; a shared group */
    rt_summary t = s;
    t.process_cgroup_exclusive = NAN;
    size_t k = notes_of(&t, "not root, and no cgroup delegated to this user", n);
    const rt_note *a = must(n, k, RT_NOTE_ACCOUNTING_INCOMPLETE);
    assert_non_null(a);
    assert_non_null(strstr(a->text, "accounting may be incomplete: "));
    assert_non_null(strstr(a->text, "(not root, and no cgroup delegated to this user)"));
    assert_non_null(strstr(a->text, "SIGCHLD"));
    assert_string_equal(rt_note_kind_name(a->kind), "accounting_incomplete");
    t.process_cgroup_exclusive = 0;
    k = notes_of(&t, NULL, n);
    assert_non_null(strstr(must(n, k, RT_NOTE_ACCOUNTING_INCOMPLETE)->text, "holds other processes too"));
    t.process_exits_counted = 5; /* as root: the exit records count their CPU, not their I/O */
    assert_non_null(strstr(must(n, notes_of(&t, NULL, n), RT_NOTE_ACCOUNTING_INCOMPLETE)->text,
                           "the I/O of children the kernel reaps for a parent that ignores SIGCHLD is not counted "
                           "(their CPU is, from the kernel's exit records)"));
    t.process_exits_counted = NAN;

    /* an OOM kill at the peak charge, with the limit */
    t = s;
    t.oom_kills = 2;
    t.memory_limit_mib = 1024;
    t.process_memory_peak_mib = 1024;
    k = notes_of(&t, NULL, n);
    a = must(n, k, RT_NOTE_OOM_KILLED);
    assert_non_null(a);
    assert_non_null(strstr(a->text, "killed 2 tasks of the job at 1 GiB (limit 1 GiB)"));
    assert_null(find(n, k, RT_NOTE_MEMORY_OVERSIZED)); /* never "too much" for a killed run */

    /* memory: unknown; sampled; a limit far above the need */
    t = run_needing(NAN, RT_NEED_UNKNOWN, 1);
    t.process_cgroup_exclusive = 1;
    k = notes_of(&t, NULL, n);
    assert_non_null(find(n, k, RT_NOTE_MEMORY_UNKNOWN));
    t = run_needing(300, RT_NEED_PSS, 1);
    t.process_cgroup_exclusive = 1;
    k = notes_of(&t, NULL, n);
    assert_non_null(strstr(must(n, k, RT_NOTE_MEMORY_SAMPLED)->text, "lower bound from samples"));
    t = s; /* 600 MiB needed: 1024 asked; a 16 GiB limit */
    t.memory_limit_mib = 16384;
    k = notes_of(&t, NULL, n);
    assert_non_null(strstr(must(n, k, RT_NOTE_MEMORY_OVERSIZED)->text, "16 GiB is 27x what the job needed (600 MiB)"));
    t.memory_limit_mib = 1536; /* not far above: no note */
    assert_null(find(n, notes_of(&t, NULL, n), RT_NOTE_MEMORY_OVERSIZED));

    /* GPUs on the machine, none used (and none when the tree's use is not known) */
    t = s;
    t.gpu_count = 2;
    t.process_gpus_used = 0;
    assert_non_null(strstr(must(n, notes_of(&t, NULL, n), RT_NOTE_GPU_IDLE)->text, "2 GPUs on the machine"));
    t.process_gpus_used = NAN;
    assert_null(find(n, notes_of(&t, NULL, n), RT_NOTE_GPU_IDLE));
    t.process_gpus_used = 1;
    assert_null(find(n, notes_of(&t, NULL, n), RT_NOTE_GPU_IDLE));

    /* throttled in 40% of the periods by a quota of 1.5 cores; 5% is no note */
    t = s;
    t.cpu_quota_cores = 1.5;
    t.cpu_periods = 100;
    t.cpu_throttled_periods = 40;
    t.cpu_throttled_secs = 12.5;
    assert_non_null(strstr(must(n, notes_of(&t, NULL, n), RT_NOTE_CPU_THROTTLED)->text,
                           "1.5 cores throttled the job in 40% of its periods (12.5 s held back)"));
    t.cpu_throttled_periods = 5;
    assert_null(find(n, notes_of(&t, NULL, n), RT_NOTE_CPU_THROTTLED));

    /* pressure: only what passed its threshold, in one note */
    t = s;
    t.pressure_cpu_some_pct.mean = 25;
    t.pressure_memory_some_pct.mean = 3;
    t.pressure_io_some_pct.mean = 31;
    a = must(n, notes_of(&t, NULL, n), RT_NOTE_PRESSURE);
    assert_string_equal(a->text, "tasks waited for CPU 25%, for I/O 31% of the time (pressure stalls)");
    /* 0.18: with the run's table, what the CPU waits mean for the ask (never "tasks waited" beside
     * fewer cores without a word): the waits are in the run's own duration the ask is predicted
     * from, and more cores than it had save the waits at most */
    rt_cores_row rows[3] = {{1, 72, 0.02, 0}, {2, 70, 0.0389, 0}, {3, 60, 0.05, 1}};
    rt_cores_table tab = {.n = 3, .rows = rows, .duration_secs = 70, .cores_had = 2, .peak_cores = 1.6,
                          .wait_secs = 24, .wait_from = "machine"};
    t = s;
    t.pressure_cpu_some_pct.mean = 34;
    t.cores = &tab;
    a = must(n, notes_of(&t, NULL, n), RT_NOTE_PRESSURE);
    assert_non_null(a);
    assert_string_equal(a->text, "tasks waited for CPU 34% of the time (pressure stalls): the waits are in the run's "
                                 "own 70.0 s, from which 1 core is predicted at 72.0 s; more cores than the 2 it had "
                                 "would save 24.0 s at most (the machine's waits: fewer)");
    t.pressure_cpu_some_pct.mean = 3; /* below its threshold: no note, whatever the table */
    t.pressure_io_some_pct.mean = 31;
    assert_string_equal(must(n, notes_of(&t, NULL, n), RT_NOTE_PRESSURE)->text,
                        "tasks waited for I/O 31% of the time (pressure stalls)");

    /* left behind: the processes running at the end, the root gone */
    t = s;
    t.left_behind = 3;
    assert_non_null(strstr(must(n, notes_of(&t, NULL, n), RT_NOTE_LEFT_BEHIND)->text, "3 processes of the job"));

    /* a process ignoring SIGCHLD without the exit records nor a group of the job's: the CPU of
     * children the kernel reaps for it is a lower bound; with the records (root), none */
    t = s;
    t.process_cgroup_exclusive = NAN;
    t.process_unwaited_parents = 1;
    t.process_exits_counted = NAN;
    t.samples = 10;
    t.duration_secs = 20;
    a = must(n, notes_of(&t, NULL, n), RT_NOTE_CPU_UNWAITED);
    assert_string_equal(rt_note_kind_name(a->kind), "cpu_unwaited");
    assert_string_equal(a->text, "the CPU is a lower bound: 1 process of the job ignored SIGCHLD, so the kernel reaps "
                                 "its children without a wait: such a child counts to its last sample, one born and "
                                 "gone between two samples (about 2.0 s apart) not at all (as root the kernel's exit "
                                 "records count them)");
    t.process_exits_counted = 4;
    assert_null(find(n, notes_of(&t, NULL, n), RT_NOTE_CPU_UNWAITED));
    t.process_exits_counted = NAN;
    t.process_cgroup_exclusive = 1; /* the job's own group counts all of it */
    assert_null(find(n, notes_of(&t, NULL, n), RT_NOTE_CPU_UNWAITED));
}

static void notes_from_records(void **state)
{
    (void)state;
    /* the end of a run that left two processes in its own group */
    rt_stats *st;
    rt_record r[2] = {rec_at(100), rec_at(101)};
    for (int i = 0; i < 2; i++) {
        r[i].process_cgroup_exclusive = 1;
        r[i].process_unreclaimable_peak_mib = 50;
        r[i].cgroup_pids = 3;
        r[i].process_children = 2;
    }
    r[1].process_alive = 0;
    r[1].cgroup_pids = 2;
    const rt_summary *s = summary_of(&st, r, 2);
    assert_true(s->left_behind == 2);
    assert_true(s->process_cgroup_exclusive == 1);
    rt_note n[RT_NOTES_MAX];
    assert_non_null(find(n, notes_of(s, NULL, n), RT_NOTE_LEFT_BEHIND));
    assert_null(find(n, notes_of(s, NULL, n), RT_NOTE_ACCOUNTING_INCOMPLETE));
    rt_stats_free(st);
    /* records out of order: the latest stands (the root still ran then: nothing left) */
    rt_record o[2] = {r[1], r[0]};
    o[1].timestamp_secs = 102;
    s = summary_of(&st, o, 2);
    assert_true(isnan(s->left_behind));
    rt_stats_free(st);
    /* one record without a group: not every record's group held only the tree */
    r[0].process_cgroup_exclusive = 0;
    s = summary_of(&st, r, 2);
    assert_true(s->process_cgroup_exclusive == 0);
    rt_stats_free(st);
}

/* Re-reads (0.20, docs/answers.md "Re-reads"): a job that read a 300 MiB file 3 times through
 * a 160 MiB limit, as records give it (the group's refault total growing to 600 MiB, 300 MiB of
 * storage reads an interval): the note with the kernel's figures and the limit that keeps the
 * files, the ask raised to it (the re-reads were large); none where the file fit, without a
 * limit, for small re-reads, or after an OOM kill. */
static const rt_summary *reread_run(rt_stats **st, rt_record *r, double limit, double refault_step,
                                    double read_mib)
{
    for (int i = 0; i < 3; i++) {
        r[i] = rec_at(100 + i);
        r[i].process_cgroup_exclusive = 1;
        r[i].process_unreclaimable_peak_mib = 40;
        r[i].cgroup_memory_limit_mib = limit;
        r[i].process_read_bytes = read_mib * 1048576.0;
        r[i].cgroup_memory_refault_mib = refault_step * i; /* a total since tracking began */
        r[i].pressure_io_some_pct = 50;
        r[i].pressure_memory_some_pct = 4;
        r[i].pressure_group = 1;
    }
    return summary_of(st, r, 3);
}

static void notes_rereads(void **state)
{
    (void)state;
    rt_stats *st;
    rt_record r[3];
    rt_note n[RT_NOTES_MAX];
    const rt_summary *s = reread_run(&st, r, 160, 300, 300);
    assert_true(s->memory_refault_mib == 600);
    size_t k = notes_of(s, NULL, n);
    assert_string_equal(must(n, k, RT_NOTE_MEMORY_REREAD)->text,
                        "the job read back 600 MiB of files its 160 MiB memory limit had evicted, 67% of its 900 MiB "
                        "of storage reads; tasks waited for I/O 50%, memory 4% of the time: its need (40 MiB) and "
                        "those files (300 MiB at most) take 340 MiB, a limit of 512 MiB keeps them cached (the ask)");
    assert_string_equal(rt_note_kind_name(RT_NOTE_MEMORY_REREAD), "memory_reread");
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(&s, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 512); /* 40 MiB + 300 MiB of files, + 20% */
    assert_true(rec.memory_reread_files_mib == 300);
    k = rt_recommend_notes(&s, 1, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, k, RT_NOTE_MEMORY_REREAD)->text,
                        "the run read back 600 MiB of files its 160 MiB memory limit had evicted: the ask (512 MiB) "
                        "keeps them cached (300 MiB of files at most, above the need)");
    rt_stats_free(st);
    /* the file fit: no refault, no note, the ask the need's */
    s = reread_run(&st, r, 512, 0, 300);
    assert_null(find(n, notes_of(s, NULL, n), RT_NOTE_MEMORY_REREAD));
    assert_int_equal(rt_recommend(&s, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 128);
    assert_true(isnan(rec.memory_reread_files_mib));
    rt_stats_free(st);
    /* no limit: the evictions were the machine's, no limit to raise */
    s = reread_run(&st, r, NAN, 300, 300);
    assert_null(find(n, notes_of(s, NULL, n), RT_NOTE_MEMORY_REREAD));
    rt_stats_free(st);
    /* under RT_REREAD_MIN_MIB, and under RT_REREAD_MIN_PCT of the reads: no note */
    s = reread_run(&st, r, 160, 30, 300);
    assert_null(find(n, notes_of(s, NULL, n), RT_NOTE_MEMORY_REREAD));
    rt_stats_free(st);
    s = reread_run(&st, r, 160, 300, 3000); /* 600 of 9000 MiB: 6.7% */
    assert_null(find(n, notes_of(s, NULL, n), RT_NOTE_MEMORY_REREAD));
    rt_stats_free(st);
    /* a limit that holds the need and the files: the evictions were not the limit's */
    s = reread_run(&st, r, 1024, 300, 300);
    assert_null(find(n, notes_of(s, NULL, n), RT_NOTE_MEMORY_REREAD));
    rt_stats_free(st);
    /* small re-reads (less than the limit): the note, the ask stays the need's */
    s = reread_run(&st, r, 160, 75, 300); /* 150 of 900 MiB */
    k = notes_of(s, NULL, n);
    assert_non_null(strstr(must(n, k, RT_NOTE_MEMORY_REREAD)->text,
                           "the job read back 150 MiB of files its 160 MiB memory limit had evicted, 17% of its 900 MiB"));
    assert_non_null(strstr(must(n, k, RT_NOTE_MEMORY_REREAD)->text,
                           "(150 MiB at most) take 190 MiB, a limit of 256 MiB keeps them cached (not asked: the "
                           "re-reads were small)"));
    assert_int_equal(rt_recommend(&s, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 128);
    rt_stats_free(st);
    /* killed: the OOM notes speak */
    rt_summary killed = *reread_run(&st, r, 160, 300, 300); /* its pointers are st's */
    killed.oom_kills = 1;
    assert_null(find(n, notes_of(&killed, NULL, n), RT_NOTE_MEMORY_REREAD));
    rt_stats_free(st);
}

static void notes_bounds(void **state)
{
    (void)state;
    rt_summary s = quiet_run();
    s.process_cgroup_exclusive = NAN;
    s.oom_kills = 1;
    s.gpu_count = 1;
    s.process_gpus_used = 0;
    s.left_behind = 1;
    rt_note n[RT_NOTES_MAX];
    /* a reason far too long, with multi-byte characters at the cut: one line, valid UTF-8 */
    char why[600];
    size_t w = 0;
    while (w + 3 < sizeof why) {
        memcpy(why + w, "\xC3\xA9\n", 3); /* é and a newline */
        w += 3;
    }
    why[w] = '\0';
    size_t k = notes_of(&s, why, n);
    const rt_note *a = must(n, k, RT_NOTE_ACCOUNTING_INCOMPLETE);
    size_t len = strlen(a->text);
    assert_true(len < sizeof a->text);
    for (size_t i = 0; i < len;) { /* whole characters only */
        unsigned char c = (unsigned char)a->text[i];
        size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        assert_true(i + want <= len);
        i += want;
    }
    /* cap: no more than room */
    assert_int_equal(rt_summary_notes(&s, NULL, n, 2), 2);
    assert_int_equal(rt_summary_notes(&s, NULL, n, 0), 0);
    assert_int_equal(rt_summary_notes(NULL, NULL, n, RT_NOTES_MAX), 0);
    assert_string_equal(rt_note_kind_name(0), "note");
    assert_string_equal(rt_note_kind_name(RT_NOTE_FEW_RUNS), "few_runs");
}

static void recommend_notes(void **state)
{
    (void)state;
    rt_note n[RT_NOTES_MAX];
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    rt_summary a = run_needing(300, RT_NEED_PSS, 1), b = run_needing(400, RT_NEED_CGROUP, 1);
    const rt_summary *one[] = {&a};
    assert_int_equal(rt_recommend(one, 1, &rec), RT_OK);
    size_t k = rt_recommend_notes(one, 1, &rec, n, RT_NOTES_MAX);
    assert_non_null(strstr(must(n, k, RT_NOTE_FEW_RUNS)->text, "based on 1 run: 20% headroom"));
    assert_non_null(find(n, k, RT_NOTE_MEMORY_SAMPLED));
    const rt_summary *three[] = {&b, &b, &b};
    assert_int_equal(rt_recommend(three, 3, &rec), RT_OK);
    assert_int_equal(rt_recommend_notes(three, 3, &rec, n, RT_NOTES_MAX), 0);
    /* the OOM kill and the quota it stays above, in the words recommend has always used */
    b.oom_kills = 1;
    b.memory_limit_mib = 8192;
    b.process_memory_peak_mib = 8100;
    b.cpu_quota_cores = 2;
    b.cpu_periods = 100;
    b.cpu_throttled_periods = 40;
    assert_int_equal(rt_recommend(three, 3, &rec), RT_OK);
    k = rt_recommend_notes(three, 3, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, k, RT_NOTE_OOM_KILLED)->text,
                        "the job was OOM-killed at its 8 GiB limit (peak 7.9 GiB): its need is above that, unknown; "
                        "asking for 16 GiB (2x the limit) to learn it");
    assert_string_equal(must(n, k, RT_NOTE_CPU_THROTTLED)->text,
                        "the CPU quota of 2 cores held the job back: throttled in 40% of periods; asking for 3");
    /* an older caller's shorter struct: no notes */
    rt_recommendation old = rec;
    old.struct_size = offsetof(rt_recommendation, memory_need_mib);
    assert_int_equal(rt_recommend_notes(three, 3, &old, n, RT_NOTES_MAX), 0);
}

/* 0.20, after a kill, ask to learn: a 1500 MiB heap killed at its 768 MiB limit is asked twice
 * the limit (1536, rounded: 2048), not the limit + 20% (1 GiB) that gets it killed again; the
 * highest need of a run not killed where larger; a run held at its memory.high with reclaim
 * stalls likewise; a run that ran to its time limit is asked twice its duration. */
static void recommend_after_a_kill(void **state)
{
    (void)state;
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    rt_summary k = run_needing(767, RT_NEED_CGROUP, 1);
    k.oom_kills = 1;
    k.memory_limit_mib = 768;
    k.process_memory_peak_mib = 768;
    const rt_summary *one[] = {&k};
    assert_int_equal(rt_recommend(one, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 2048);
    assert_true(rec.memory_mib >= 1536);
    assert_true(rec.memory_floor_mib == 2048);
    assert_int_equal(rec.memory_learn, 1);
    assert_int_equal(rec.oom_killed, 1);
    rt_note n[RT_NOTES_MAX];
    size_t c = rt_recommend_notes(one, 1, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, c, RT_NOTE_OOM_KILLED)->text,
                        "the job was OOM-killed at its 768 MiB limit (peak 768 MiB): its need is above that, unknown; "
                        "asking for 2 GiB (at least 2x the limit, 1.5 GiB) to learn it");
    c = rt_summary_notes(&k, NULL, n, RT_NOTES_MAX);
    assert_string_equal(must(n, c, RT_NOTE_OOM_KILLED)->text,
                        "the OOM killer killed 1 task of the job at 768 MiB (limit 768 MiB): its need is above that, "
                        "unknown; asking for 2 GiB (at least 2x the limit, 1.5 GiB) to learn it");
    /* a run not killed that needed more (3000 MiB, under no limit): its need + headroom asks */
    rt_summary ok = run_needing(3000, RT_NEED_CGROUP, 1);
    const rt_summary *two[] = {&k, &ok};
    assert_int_equal(rt_recommend(two, 2, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(3000 * 1.15));
    assert_int_equal(rec.memory_learn, 0);
    c = rt_recommend_notes(two, 2, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, c, RT_NOTE_OOM_KILLED)->text,
                        "the job was OOM-killed at its 768 MiB limit (peak 768 MiB): a run under more memory "
                        "finished: asking for 4 GiB");
    /* ... one that needed less, under the same limit: no lesson, the floor stays */
    ok = run_needing(500, RT_NEED_CGROUP, 1);
    ok.memory_limit_mib = 768;
    assert_int_equal(rt_recommend(two, 2, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 2048);
    assert_int_equal(rec.memory_learn, 1);
    /* killed by the machine's OOM killer, no limit of its own: twice the most it reached */
    k.memory_limit_mib = NAN;
    k.process_memory_peak_mib = 700;
    assert_int_equal(rt_recommend(one, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(2 * 767));
    c = rt_recommend_notes(one, 1, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, c, RT_NOTE_OOM_KILLED)->text,
                        "the job was OOM-killed at 767 MiB with no memory limit of its own: its need is above that, "
                        "unknown; asking for 2 GiB (at least 2x that, 1.5 GiB) to learn it");

    /* held at its memory.high (1024) with reclaim stalls: twice it */
    rt_summary h = run_needing(1000, RT_NEED_CGROUP, 1);
    h.oom_kills = 0;
    h.memory_high_mib = 1024;
    h.pressure_memory_full_pct.mean = 40;
    const rt_summary *high[] = {&h};
    assert_int_equal(rt_recommend(high, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 2048);
    assert_int_equal(rec.memory_learn, 1);
    assert_int_equal(rec.oom_killed, 0);
    c = rt_recommend_notes(high, 1, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, c, RT_NOTE_MEMORY_HIGH)->text,
                        "the job was held at its memory.high of 1 GiB with reclaim stalls (memory pressure full 40% "
                        "of the time): its need is above that, unknown; asking for 2 GiB (2x memory.high) to learn "
                        "it");
    assert_string_equal(rt_note_kind_name(RT_NOTE_MEMORY_HIGH), "memory_high");
    h.memory_limit_mib = 16384; /* memory.max far above: held at memory.high, never "too much" */
    c = rt_summary_notes(&h, NULL, n, RT_NOTES_MAX);
    assert_non_null(strstr(must(n, c, RT_NOTE_MEMORY_HIGH)->text, "asking for 2 GiB (2x memory.high)"));
    assert_null(find(n, c, RT_NOTE_MEMORY_OVERSIZED));
    h.memory_limit_mib = NAN;
    /* stalls of the machine's (no pressure of the group's own): maybe other work's, no floor */
    h.pressure_group = 0;
    assert_int_equal(rt_recommend(high, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(1000 * 1.2));
    h.pressure_group = 1;
    assert_int_equal(rt_recommend(high, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, 2048);
    /* no stalls (a cache the kernel reclaims at no cost), or a need well under it: no floor */
    h.pressure_memory_full_pct.mean = 1;
    assert_int_equal(rt_recommend(high, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(1000 * 1.2));
    assert_null(find(n, rt_summary_notes(&h, NULL, n, RT_NOTES_MAX), RT_NOTE_MEMORY_HIGH));
    h.pressure_memory_full_pct.mean = 40;
    h.memory_high_mib = 4096;
    assert_int_equal(rt_recommend(high, 1, &rec), RT_OK);
    assert_int_equal(rec.memory_mib, rt_round_memory_mib(1000 * 1.2));

    /* ran to its time limit (SLURM's 10 min, all of it used): twice the run, whole minutes */
    rt_summary t = run_needing(100, RT_NEED_CGROUP, 1);
    t.duration_secs = 598;
    t.time_limit_secs = 600;
    t.time_limit_from = "SLURM_JOB_END_TIME";
    t.time_limit_used_pct = 100;
    const rt_summary *timed[] = {&t};
    assert_int_equal(rt_recommend(timed, 1, &rec), RT_OK);
    assert_true(fabs(rec.time_floor_secs - 600) < 1e-9);
    assert_true(rec.time_limit_secs == 1200);
    char line[256];
    rt_format_recommendation(&rec, RT_SCHED_SLURM, line, sizeof line);
    assert_non_null(strstr(line, "--time=0:20:00"));
    c = rt_recommend_notes(timed, 1, &rec, n, RT_NOTES_MAX);
    assert_string_equal(must(n, c, RT_NOTE_TIME_ENDED)->text,
                        "the job ran to its time limit (10.0 min, SLURM_JOB_END_TIME): it needs more than the 10.0 "
                        "min it ran, unknown how much; asking for 20.0 min (2x the run) to learn it");
    assert_string_equal(rt_note_kind_name(RT_NOTE_TIME_ENDED), "time_ended");
    c = rt_summary_notes(&t, NULL, n, RT_NOTES_MAX);
    assert_non_null(find(n, c, RT_NOTE_TIME_ENDED));
    assert_null(find(n, c, RT_NOTE_TIME_LIMIT)); /* one fact, one note */
    /* 95% of it: near, not ended: the old note, no floor */
    t.time_limit_used_pct = 95;
    assert_int_equal(rt_recommend(timed, 1, &rec), RT_OK);
    assert_true(isnan(rec.time_floor_secs));
    c = rt_summary_notes(&t, NULL, n, RT_NOTES_MAX);
    assert_null(find(n, c, RT_NOTE_TIME_ENDED));
    assert_non_null(find(n, c, RT_NOTE_TIME_LIMIT));

    /* 0.21: no limit known, ended by a scheduler's SIGTERM: its duration the floor */
    rt_summary g = run_needing(100, RT_NEED_CGROUP, 1);
    g.duration_secs = 150;
    g.end_signal = 15;
    const rt_summary *sig[] = {&g};
    assert_int_equal(rt_recommend(sig, 1, &rec), RT_OK);
    assert_true(fabs(rec.time_floor_secs - 150) < 1e-9);
    assert_true(rec.time_limit_secs >= 300);
    c = rt_recommend_notes(sig, 1, &rec, n, RT_NOTES_MAX);
    const rt_note *te = must(n, c, RT_NOTE_TIME_ENDED);
    assert_non_null(strstr(te->text, "the job was ended by SIGTERM after 2.5 min (a scheduler's time limit or a "
                                     "preemption): it needs more than that, unknown how much; asking for"));
    /* SIGXCPU: its CPU time limit; SIGKILL with no OOM kill: a floor; with one: the memory's */
    g.end_signal = 24;
    c = rt_summary_notes(&g, NULL, n, RT_NOTES_MAX);
    assert_non_null(strstr(must(n, c, RT_NOTE_TIME_ENDED)->text, "SIGXCPU after 2.5 min (its CPU time limit)"));
    g.end_signal = 9;
    assert_int_equal(rt_recommend(sig, 1, &rec), RT_OK);
    assert_true(rec.time_floor_secs > 0);
    g.oom_kills = 1;
    assert_int_equal(rt_recommend(sig, 1, &rec), RT_OK);
    assert_true(isnan(rec.time_floor_secs));
    g.oom_kills = 0;
    /* exited on its own, a person's Ctrl-C, or not known: none */
    static const double none[] = {0, 2, NAN};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        g.end_signal = none[i];
        assert_int_equal(rt_recommend(sig, 1, &rec), RT_OK);
        assert_true(isnan(rec.time_floor_secs));
        c = rt_summary_notes(&g, NULL, n, RT_NOTES_MAX);
        assert_null(find(n, c, RT_NOTE_TIME_ENDED));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(need_prefers_the_kernel),  cmocka_unit_test(need_unknown_and_vram),
        cmocka_unit_test(recommend_headroom_and_highest_need), cmocka_unit_test(recommend_after_a_kill),
        cmocka_unit_test(notes_each_kind),
        cmocka_unit_test(notes_from_records),       cmocka_unit_test(notes_bounds),
        cmocka_unit_test(recommend_notes),          cmocka_unit_test(notes_rereads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
