/* test_allocation.c - the dedicated/shared guess (analysis/allocation.c) from synthetic
 * samples: a job that has the machine, others' CPU, others' memory, noise on a quiet machine,
 * others' GPU time and VRAM, and samples without a tree. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"

static rt_cpu cpu;
static rt_memory memory;

static rt_sample sample(double sys_cores, double proc_cores, double used_mib, double pss_mib, rt_process *p)
{
    rt_sample s;
    memset(&s, 0, sizeof s);
    memset(p, 0, sizeof *p);
    s.cpu = &cpu;
    s.memory = &memory;
    cpu.utilization_pct = sys_cores;
    memory.used_mib = used_mib;
    p->cores_used = proc_cores;
    p->pss_mib = pss_mib;
    p->gpu_utilization_pct = NAN;
    p->gpu_vram_used_bytes = RT_NULL_U64;
    s.process = p;
    return s;
}

static void allocation(void **state)
{
    (void)state;
    rt_allocation *a = rt_allocation_new();
    assert_non_null(a);
    assert_null(rt_allocation_guess(a)); /* no samples: not known */
    rt_process p;
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(3.9, 3.8, 9000, 8500, &p); /* the job is nearly all of the machine */
        rt_allocation_add(a, &s);
    }
    assert_string_equal(rt_allocation_guess(a), "dedicated");
    rt_allocation_free(a);
    a = rt_allocation_new();
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(6.0, 2.0, 9000, 8500, &p); /* 4 more cores busy elsewhere */
        rt_allocation_add(a, &s);
    }
    assert_string_equal(rt_allocation_guess(a), "shared");
    rt_allocation_free(a);
    a = rt_allocation_new();
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(1.0, 0.9, 30000, 2000, &p); /* 28 GiB used by others */
        rt_allocation_add(a, &s);
    }
    assert_string_equal(rt_allocation_guess(a), "shared");
    rt_allocation_free(a);
    a = rt_allocation_new();
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(0.3, 0.05, 600, 100, &p); /* a tiny job on a quiet machine: 0.25 cores is noise */
        rt_allocation_add(a, &s);
    }
    assert_string_equal(rt_allocation_guess(a), "dedicated");
    rt_allocation_free(a);
    a = rt_allocation_new();
    for (int i = 0; i < 10; i++) {
        /* others use 2 GiB, but half the samples have no PSS: the memory mean counts only the
         * samples that have it (divided by all, it read 1 GiB: dedicated) */
        rt_sample s = sample(1.0, 0.9, 4000, i % 2 ? NAN : 2000, &p);
        rt_allocation_add(a, &s);
    }
    assert_string_equal(rt_allocation_guess(a), "shared");
    rt_sample no_tree;
    memset(&no_tree, 0, sizeof no_tree);
    rt_allocation_free(a);
    a = rt_allocation_new();
    rt_allocation_add(a, &no_tree);
    assert_null(rt_allocation_guess(a)); /* samples without a tree say nothing */
    rt_allocation_free(a);
    rt_allocation_free(NULL);
}

/* The guess after ten samples with one GPU: the machine's and the tree's GPU use and VRAM. */
static const char *gpu_guess(double sys_pct, double proc_pct, uint64_t sys_vram, uint64_t proc_vram)
{
    rt_gpu g;
    memset(&g, 0, sizeof g);
    g.utilization_pct = sys_pct;
    g.vram_used_bytes = sys_vram;
    g.vram_total_bytes = 24ull << 30;
    const rt_gpu *gpus[1] = {&g};
    rt_allocation *a = rt_allocation_new();
    rt_process p;
    for (int i = 0; i < 10; i++) {
        rt_sample s = sample(2.0, 1.9, 9000, 8500, &p);
        s.gpu = gpus;
        s.gpu_count = 1;
        p.gpu_utilization_pct = proc_pct;
        p.gpu_vram_used_bytes = proc_vram;
        rt_allocation_add(a, &s);
    }
    const char *guess = rt_allocation_guess(a);
    rt_allocation_free(a);
    return guess;
}

static void gpus(void **state)
{
    (void)state;
    assert_string_equal(gpu_guess(90, 88, 8ull << 30, 8ull << 30), "dedicated");
    assert_string_equal(gpu_guess(90, 20, 8ull << 30, 7ull << 30), "shared");      /* others' GPU time */
    assert_string_equal(gpu_guess(50, 50, 20ull << 30, 4ull << 30), "shared");     /* others' VRAM */
    assert_string_equal(gpu_guess(NAN, NAN, RT_NULL_U64, RT_NULL_U64), "dedicated"); /* GPU unreadable */
    rt_allocation_add(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allocation),
        cmocka_unit_test(gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
