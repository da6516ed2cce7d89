/* test_tracker_phase.c - the embedded tracker's phase marks (embed/marks.c), on this process:
 * the marks reach the pipeline with the next sample, a single-process phase's CPU is the
 * kernel's to well within a tick (the caller's exact stamp, RT_PHASE_CPU_MARKER); marks from
 * several threads at once are all accounted for; a forked child's copy, a stopped tracker and
 * bad names are refused (bad names counted); the ring full drops and counts; the thread drains
 * the ring every phase_check_secs once a mark came, without a sample (on a test clock). */
#include "unit.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "embed/tracker_int.h"
#include "resource_tracker.h"
#include "unit_clock.h"

#define NO_NVML "/nonexistent/libnvidia-ml.so.1"

/* ---- a sink that keeps the marks it is handed ----------------------------------------------- */

#define MAX_SEEN 64
typedef struct seen_mark {
    int kind, source;
    char name[64];
    double cpu, ts;
    int64_t pid;
} seen_mark;

static seen_mark seen[MAX_SEEN];
static size_t nseen;

static rt_error keep_marks(void *self, const rt_sample *sample, const rt_record *rec)
{
    (void)self;
    (void)rec;
    const rt_phases *ph = sample ? sample->phases : NULL;
    for (size_t i = 0; ph && i < ph->mark_count && nseen < MAX_SEEN; i++) {
        const rt_phase_mark *m = ph->marks[i];
        seen_mark *s = &seen[nseen++];
        s->kind = m->kind;
        s->source = m->cpu_source;
        snprintf(s->name, sizeof s->name, "%s", m->name);
        s->cpu = m->cpu_secs_total;
        s->ts = m->timestamp_secs;
        s->pid = m->pid;
    }
    return RT_OK;
}

static void attach_keeper(rt_tracker *t)
{
    rt_sink_ops ops = RT_SINK_OPS_INIT;
    ops.add = keep_marks;
    rt_sink *k = NULL;
    assert_int_equal(rt_sink_new(&ops, NULL, &k), RT_OK);
    pthread_mutex_lock(&t->mu);
    nseen = 0;
    assert_int_equal(rt_pipeline_attach(t->pipe, k), RT_OK);
    pthread_mutex_unlock(&t->mu);
}

static rt_phase_counts counts_of(rt_tracker *t)
{
    rt_phase_counts c;
    pthread_mutex_lock(&t->mu);
    assert_int_equal(rt_pipeline_phase_counts(t->pipe, &c, sizeof c), RT_OK);
    pthread_mutex_unlock(&t->mu);
    return c;
}

static double cpu_of(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static volatile double burn_sink;

static void burn(double secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    double end = (double)ts.tv_sec + ts.tv_nsec / 1e9 + secs, now;
    double x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x += i * 0.5;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    } while (now < end);
    burn_sink = x;
}

static rt_tracker_options opts_at(double interval)
{
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT;
    o.interval_secs = interval;
    o.nvml_library = NO_NVML;
    return o;
}

/* ---- live ------------------------------------------------------------------------------------ */

/* A phase of this process: its marks come with the samples after them, carry its pid and the
 * marker's CPU, and the phase's CPU (stop - start) is what the kernel counted in between: this
 * process's own (all threads) and its reaped child's. */
static void marks_carry_exact_cpu(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.05);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    attach_keeper(t);
    assert_int_equal(rt_tracker_phase_start(t, "work"), RT_OK);
    double k0 = cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN);
    burn(0.2);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        burn(0.1);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    double k1 = cpu_of(RUSAGE_SELF) + cpu_of(RUSAGE_CHILDREN);
    assert_int_equal(rt_tracker_phase_stop(t, "work"), RT_OK);
    uint64_t n = rt_tracker_count(t);
    rt_tracker_wait(t, n + 2, -1);
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    assert_int_equal(nseen, 2);
    assert_int_equal(seen[0].kind, RT_PHASE_START);
    assert_int_equal(seen[1].kind, RT_PHASE_STOP);
    assert_string_equal(seen[0].name, "work");
    assert_int_equal(seen[0].pid, getpid());
    assert_int_equal(seen[0].source, RT_PHASE_CPU_MARKER);
    assert_int_equal(seen[1].source, RT_PHASE_CPU_MARKER);
    assert_true(seen[1].ts >= seen[0].ts);
    double phase = seen[1].cpu - seen[0].cpu, truth = k1 - k0;
    /* the kernel's rusage is to the microsecond; the marks bracket it by two calls and the
     * tracker's thread's work in between (a few samples) */
    if (!(fabs(phase - truth) < 0.01))
        fail_msg("phase CPU %.6f s, the kernel's %.6f s", phase, truth);
    rt_phase_counts c = counts_of(t);
    assert_int_equal(c.accepted, 2);
    /* stopped: refused */
    assert_int_equal(rt_tracker_phase_start(t, "late"), RT_ERR_DISABLED);
    rt_tracker_free(t);
}

#define THREADS 4
#define PAIRS 1000

static void *mark_many(void *arg)
{
    rt_tracker *t = arg;
    char name[16];
    snprintf(name, sizeof name, "t%lu", (unsigned long)(pthread_self() % 1000));
    for (int i = 0; i < PAIRS; i++) {
        rt_error a = rt_tracker_phase_start(t, name), b = rt_tracker_phase_stop(t, name);
        if ((a != RT_OK && a != RT_ERR_NOMEM) || (b != RT_OK && b != RT_ERR_NOMEM))
            return (void *)1;
    }
    return NULL;
}

/* Several threads mark at once: every mark is taken or counted (a dropped start makes its stop
 * an unknown one; a dropped stop leaves its phase open, and once 256 are open a start is refused
 * as too deep, which a loaded machine reaches: the ring fills while the tracker's thread waits
 * for a core), none is malformed. */
static void marks_from_threads(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.01);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, mark_many, t), 0);
    for (int i = 0; i < THREADS; i++) {
        void *rc;
        pthread_join(th[i], &rc);
        assert_null(rc);
    }
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    rt_phase_counts c = counts_of(t);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(c.accepted + c.dropped + c.unknown_stop + c.too_deep + c.too_many_names, 2 * THREADS * PAIRS);
    assert_true(c.accepted > 0);
    rt_tracker_free(t);
}

/* A forked child's copy refuses marks (they are not the run's), the parent's still take them. */
static void forked_child_refused(void **state)
{
    (void)state;
    rt_tracker_options o = opts_at(0.05);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0)
        _exit(rt_tracker_phase_start(t, "child") == RT_ERR_DISABLED &&
                      rt_tracker_phase_stop(t, "child") == RT_ERR_DISABLED
                  ? 0
                  : 1);
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(rt_tracker_phase_start(t, "parent"), RT_OK);
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    rt_phase_counts c = counts_of(t);
    assert_int_equal(c.accepted, 1);
    rt_tracker_free(t);
}

/* ---- on a test clock: when marks are taken --------------------------------------------------- */

static void settle(rt_clock *c)
{
    if (!rt_clock_test_idle(c, 1, CLOCK_SETTLE_SECS))
        fail_msg("the tracker's thread did not wait on the clock within %.0f s", CLOCK_SETTLE_SECS);
}

/* Steps the clock to the thread's next wake-up and lets it settle. */
static void next_wake(rt_clock *c)
{
    settle(c);
    rt_clock_test_set(c, rt_clock_test_next(c));
    settle(c);
}

/* Bad names are refused and counted as malformed; the first mark does not wake the thread; once
 * a mark came the thread takes the marks every phase_check_secs, between samples; a full ring
 * drops (counted) and takes marks again once drained. */
static void drains_ring_full_and_bad_names(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(1000.0);
    assert_non_null(c);
    rt_tracker_options o = opts_at(10.0);
    o.phase_check_secs = 0.5;
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start_clock(&o, c, &t), RT_OK);
    settle(c);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(rt_tracker_phase_start(NULL, "a"), RT_ERR_INVALID);
    assert_int_equal(rt_tracker_phase_start(t, NULL), RT_ERR_INVALID);
    assert_int_equal(rt_tracker_phase_start(t, ""), RT_ERR_INVALID);
    assert_int_equal(rt_tracker_phase_start(t, longname), RT_ERR_INVALID);
    assert_int_equal(rt_tracker_phase_stop(t, "tab\there"), RT_ERR_INVALID);
    assert_int_equal(rt_tracker_phase_start(t, "\xff"), RT_ERR_INVALID);
    longname[255] = '\0'; /* 255 bytes: fine */
    assert_int_equal(rt_tracker_phase_start(t, longname), RT_OK);
    assert_int_equal(rt_tracker_phase_stop(t, longname), RT_OK);
    /* the first mark wakes nothing: the thread still waits for its sample, and takes the marks
     * before it */
    assert_true(rt_clock_test_next(c) >= 1010.0 - 1e-9);
    next_wake(c);
    assert_int_equal(rt_tracker_count(t), 1);
    rt_phase_counts n = counts_of(t);
    assert_int_equal(n.accepted, 2);
    assert_int_equal(n.malformed, 5);
    /* from now on it looks every phase_check_secs, between samples */
    assert_true(fabs(rt_clock_test_next(c) - 1010.5) < 1e-6);
    assert_int_equal(rt_tracker_phase_start(t, "c"), RT_OK);
    next_wake(c);
    assert_int_equal(rt_tracker_count(t), 1);
    assert_int_equal(counts_of(t).accepted, 3);

    /* fill the ring: 4096 marks fit, the next is dropped */
    int ok = 0;
    for (int i = 0; i < 4096; i++)
        ok += rt_tracker_phase_start(t, (i & 1) ? "b" : "a") == RT_OK;
    assert_int_equal(ok, 4096); /* nothing was taken meanwhile: the thread waits on the clock */
    assert_int_equal(rt_tracker_phase_stop(t, "a"), RT_ERR_NOMEM);
    next_wake(c);
    n = counts_of(t);
    assert_int_equal(n.dropped, 1);
    assert_int_equal(rt_tracker_count(t), 1); /* taken without a sample */
    assert_int_equal(rt_tracker_phase_stop(t, "a"), RT_OK); /* room again */
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

/* A mark just before stop, within 10 ms of the last sample, still gets a last sample to ride. */
static void stop_takes_a_last_sample_for_marks(void **state)
{
    (void)state;
    rt_clock *c = rt_clock_test_new(1000.0);
    rt_tracker_options o = opts_at(1.0);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start_clock(&o, c, &t), RT_OK);
    attach_keeper(t);
    next_wake(c);
    assert_int_equal(rt_tracker_count(t), 1);
    assert_int_equal(rt_tracker_phase_start(t, "end"), RT_OK);
    assert_int_equal(rt_tracker_stop(t), RT_OK); /* no time passed on the clock since */
    assert_int_equal(rt_tracker_count(t), 2);
    assert_int_equal(nseen, 1);
    assert_string_equal(seen[0].name, "end");
    rt_tracker_free(t);
    rt_clock_test_free(c);
}

/* The saved run (rt_tracker_save to a temporary file), read back whole (malloc'd). */
static char *saved(rt_tracker *t, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(rt_tracker_save(t, NULL, 0, fd), RT_OK);
    close(fd);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

static void snapshot_keeps_marks(void **state)
{
    (void)state;
    char path[] = "/tmp/rt-phase-snap-XXXXXX";
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    close(tmp);
    rt_clock *c = rt_clock_test_new(1000.0);
    rt_tracker_options o = opts_at(1.0);
    rt_tracker *t = NULL;
    assert_int_equal(rt_tracker_start_clock(&o, c, &t), RT_OK);
    settle(c);
    next_wake(c); /* sample 0, no mark */
    char *none = saved(t, path);
    assert_null(strstr(none, "\"phases\"")); /* a run without marks saves none */
    free(none);
    assert_int_equal(rt_tracker_phase_start(t, "load \"data\""), RT_OK);
    assert_int_equal(rt_tracker_phase_start(t, ""), RT_ERR_INVALID);
    next_wake(c); /* sample 1 carries the start */
    assert_int_equal(rt_tracker_count(t), 2);
    assert_int_equal(rt_tracker_phase_stop(t, "load \"data\""), RT_OK);
    assert_int_equal(rt_tracker_phase_start(t, "train"), RT_OK);
    next_wake(c); /* a drain (phase_check_secs: 0.01) takes them */
    while (rt_tracker_count(t) < 3)
        next_wake(c); /* sample 2 carries the stop and the start */
    assert_int_equal(rt_tracker_stop(t), RT_OK);
    rt_phase_counts live = counts_of(t);
    assert_int_equal(live.accepted, 3);
    assert_int_equal(live.malformed, 1);
    char *text = saved(t, path);
    assert_non_null(strstr(text, "\"phases\":{\"names\":[\"load \\\"data\\\"\",\"train\"]"));
    free(text);

    rt_tracker *back = NULL;
    assert_int_equal(rt_tracker_load(path, NULL, NULL, &back), RT_OK);
    assert_int_equal(rt_tracker_phase_start(back, "more"), RT_ERR_DISABLED); /* a loaded run */
    rt_phase_counts got = counts_of(back);
    assert_int_equal(got.accepted, live.accepted);
    assert_int_equal(got.malformed, live.malformed);
    assert_int_equal(back->marks.n, t->marks.n);
    for (size_t i = 0; i < t->marks.n; i++) {
        const rt_mark_entry *a = &t->marks.e[i], *b = &back->marks.e[i];
        assert_int_equal(a->kind, b->kind);
        assert_string_equal(t->marks.names[a->name], back->marks.names[b->name]);
        assert_int_equal(a->before, b->before); /* before the same sample */
        assert_true(a->timestamp == b->timestamp);
        assert_int_equal(a->cpu_source, b->cpu_source);
        assert_true(a->cpu == b->cpu || (isnan(a->cpu) && isnan(b->cpu)));
        assert_int_equal(a->pid, b->pid);
    }
    assert_int_equal(t->marks.e[0].before, 1);
    assert_int_equal(t->marks.e[1].before, 2);
    assert_int_equal(t->marks.e[2].before, 2);
    /* saved again, the loaded run gives the same file */
    char *again = saved(back, path), *first = saved(t, path);
    char *pa = strstr(again, "\"phases\""), *pb = strstr(first, "\"phases\"");
    assert_non_null(pa);
    assert_non_null(pb);
    assert_int_equal(strcspn(pa, "}"), strcspn(pb, "}"));
    assert_true(strncmp(pa, pb, strcspn(pb, "}")) == 0);
    free(again);
    free(first);
    rt_tracker_free(back);
    rt_tracker_free(t);
    rt_clock_test_free(c);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(marks_carry_exact_cpu),
        cmocka_unit_test(marks_from_threads),
        cmocka_unit_test(forked_child_refused),
        cmocka_unit_test(drains_ring_full_and_bad_names),
        cmocka_unit_test(snapshot_keeps_marks),
        cmocka_unit_test(stop_takes_a_last_sample_for_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
