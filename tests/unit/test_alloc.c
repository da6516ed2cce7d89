/* test_alloc.c - the steady state allocates nothing: after a few warm-up samples, sampling
 * the whole machine and a tree of processes, and writing each sample as JSON and CSV, makes
 * no call to malloc, calloc or realloc (GPUs are left out: the fake NVML library re-reads its
 * config file with stdio, which allocates). Counted by replacing
 * the allocator in this executable (glibc lets a program interpose malloc; strdup and the
 * like inside libc come through here too). The counters read now (rt_counters) likewise. Not built under the sanitizers, which own malloc. */
#include "unit.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resource_tracker.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long allocations; /* counted atomically: the tracker's thread allocates too */

void *malloc(size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_SEQ_CST);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_SEQ_CST);
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    __atomic_add_fetch(&allocations, 1, __ATOMIC_SEQ_CST);
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}

/* Forks n children that sleep until killed; their pids go to kids. */
static void start_kids(pid_t *kids, int n)
{
    for (int i = 0; i < n; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            for (;;)
                pause();
        }
    }
}

static void steady_state_allocates_nothing(void **state)
{
    (void)state;
    pid_t kids[8];
    start_kids(kids, 8);
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = getpid();
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1"; /* the fake NVML allocates on its own */
    rt_sampler *s;
    assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    assert_true(null_fd >= 0);
    rt_job job = RT_JOB_INIT;
    job.job_name = "alloc";
    rt_writer *json, *csv;
    assert_int_equal(rt_writer_new(RT_FORMAT_JSON, null_fd, &job, &json), RT_OK);
    assert_int_equal(rt_writer_new(RT_FORMAT_CSV, null_fd, &job, &csv), RT_OK);
    const rt_sample *smp;
    for (int i = 0; i < 5; i++) { /* warm up: discovery, buffers grown to size */
        assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
        rt_writer_write(json, smp);
        rt_writer_write(csv, smp);
    }
    long before = __atomic_load_n(&allocations, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(rt_sampler_sample(s, &smp), RT_OK);
        assert_int_equal(rt_writer_write(json, smp), RT_OK);
        assert_int_equal(rt_writer_write(csv, smp), RT_OK);
    }
    long during = __atomic_load_n(&allocations, __ATOMIC_SEQ_CST) - before;
    assert_non_null(smp->process);
    assert_true(smp->process->child_count >= 8);
    rt_writer_free(json);
    rt_writer_free(csv);
    close(null_fd);
    rt_sampler_free(s);
    for (int i = 0; i < 8; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    if (during != 0)
        fail_msg("%ld allocations in 50 steady-state samples", during);
}

/* The embedded tracker's thread: after warm-up, 50 samples allocate nothing (its store block
 * of 4,096 rows is already there). The main thread only waits meanwhile. */
static void tracker_thread_allocates_nothing(void **state)
{
    (void)state;
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT;
    o.interval_secs = 0.01;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_tracker *t;
    assert_int_equal(rt_tracker_start(&o, &t), RT_OK);
    assert_true(rt_tracker_wait(t, 5, 10.0) >= 5);
    long before = __atomic_load_n(&allocations, __ATOMIC_SEQ_CST);
    uint64_t n = rt_tracker_wait(t, 55, 30.0);
    long during = __atomic_load_n(&allocations, __ATOMIC_SEQ_CST) - before;
    rt_tracker_free(t);
    assert_true(n >= 55);
    if (during != 0)
        fail_msg("%ld allocations in 50 steady-state tracker samples", during);
}

/* The counters read now (0.13): after a warm-up, 50 readings of a tree of 8 children and of
 * the machine allocate nothing. */
static void counters_allocate_nothing(void **state)
{
    (void)state;
    pid_t kids[8];
    start_kids(kids, 8);
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_counters *c;
    assert_int_equal(rt_counters_new(&o, &c), RT_OK);
    rt_tree_counters t = {.struct_size = sizeof t};
    const rt_system_counters *s;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rt_counters_tree(c, getpid(), 1, &t), RT_OK);
        assert_int_equal(rt_counters_system(c, &s), RT_OK);
    }
    long before = __atomic_load_n(&allocations, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(rt_counters_tree(c, getpid(), 1, &t), RT_OK);
        assert_int_equal(rt_counters_system(c, &s), RT_OK);
    }
    long during = __atomic_load_n(&allocations, __ATOMIC_SEQ_CST) - before;
    rt_counters_free(c);
    for (int i = 0; i < 8; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    assert_true(t.child_count >= 8);
    if (during != 0)
        fail_msg("%ld allocations in 50 readings of a tree and the machine", during);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(steady_state_allocates_nothing),
        cmocka_unit_test(tracker_thread_allocates_nothing),
        cmocka_unit_test(counters_allocate_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
