/* test_fake_nvml.c - the fake NVML's own answers (tests/stubs/fake_nvml.c), called as the
 * tracker calls the real library: GPM support and its versions, the metrics between two samples
 * (the config's value, a time-weighted mean across a rewrite, two samples at one instant, the
 * refused pairs, an unknown or missing metric), MIG (mode, slots, handles, their ids and UUIDs,
 * an instance's samples, the process lists' instance ids), v2 memory info against v1, each call's
 * CPU cost (of the thread's CPU clock: no wall time is judged), and the call counts file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* NVML's types as its header defines them (the test's own spelling). */
typedef void *dev_t_;
typedef void *sample_t;
typedef struct {
    unsigned version, isSupportedDevice;
} support_t;
typedef struct {
    unsigned metricId;
    int nvmlReturn;
    double value;
    struct {
        char *shortName, *longName, *unit;
    } metricInfo;
} metric_t;
typedef struct {
    unsigned version, numMetrics;
    sample_t sample1, sample2;
    metric_t metrics[333];
} metrics_get_t;
typedef struct {
    unsigned long long total, free, used;
} mem_v1_t;
typedef struct {
    unsigned version;
    unsigned long long total, reserved, free, used;
} mem_v2_t;
typedef struct {
    unsigned pid;
    unsigned long long used;
    unsigned gi, ci;
} proc_t;

enum { SM = 2, TENSOR = 5, DRAM = 10, PCIE_TX = 20 };

static void *lib;
static char cfg_path[64];
static int (*init)(void);
static int (*shutdown_)(void);
static int (*handle)(unsigned, dev_t_ *);
static int (*uuid)(dev_t_, char *, unsigned);
static int (*energy)(dev_t_, unsigned long long *);
static int (*mem_v1)(dev_t_, mem_v1_t *);
static int (*mem_v2)(dev_t_, mem_v2_t *);
static int (*procs)(dev_t_, unsigned *, proc_t *);
static int (*gpm_support)(dev_t_, support_t *);
static int (*alloc)(sample_t *);
static int (*sfree)(sample_t);
static int (*sample)(dev_t_, sample_t);
static int (*mig_sample)(dev_t_, unsigned, sample_t);
static int (*metrics)(metrics_get_t *);
static int (*mig_mode)(dev_t_, unsigned *, unsigned *);
static int (*mig_max)(dev_t_, unsigned *);
static int (*mig_handle)(dev_t_, unsigned, dev_t_ *);
static int (*gi_id)(dev_t_, unsigned *);

static void config(const char *text)
{
    FILE *f = fopen(cfg_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#define SYM(v, name) (*(void **)&(v) = dlsym(lib, name), (v) != NULL)

static int setup(void **state)
{
    (void)state;
    snprintf(cfg_path, sizeof cfg_path, "/tmp/rt-fake-nvml-XXXXXX");
    int fd = mkstemp(cfg_path);
    if (fd < 0)
        return -1;
    close(fd);
    setenv("FAKE_NVML_CONFIG", cfg_path, 1);
    unsetenv("FAKE_NVML_LOAD_ONCE");
    lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    return SYM(init, "nvmlInit_v2") && SYM(shutdown_, "nvmlShutdown") && SYM(handle, "nvmlDeviceGetHandleByIndex_v2") &&
                   SYM(uuid, "nvmlDeviceGetUUID") && SYM(energy, "nvmlDeviceGetTotalEnergyConsumption") &&
                   SYM(mem_v1, "nvmlDeviceGetMemoryInfo") && SYM(mem_v2, "nvmlDeviceGetMemoryInfo_v2") &&
                   SYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3") &&
                   SYM(gpm_support, "nvmlGpmQueryDeviceSupport") && SYM(alloc, "nvmlGpmSampleAlloc") &&
                   SYM(sfree, "nvmlGpmSampleFree") && SYM(sample, "nvmlGpmSampleGet") &&
                   SYM(mig_sample, "nvmlGpmMigSampleGet") && SYM(metrics, "nvmlGpmMetricsGet") &&
                   SYM(mig_mode, "nvmlDeviceGetMigMode") && SYM(mig_max, "nvmlDeviceGetMaxMigDeviceCount") &&
                   SYM(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex") && SYM(gi_id, "nvmlDeviceGetGpuInstanceId")
               ? 0
               : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(cfg_path);
    return 0;
}

static dev_t_ dev(unsigned i)
{
    dev_t_ h = NULL;
    assert_int_equal(handle(i, &h), 0);
    return h;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The metrics ids between two samples into m (version 1). Returns the call's answer. */
static int get_metrics(metrics_get_t *m, sample_t a, sample_t b, const unsigned *ids, unsigned n)
{
    memset(m, 0, sizeof *m);
    m->version = 1;
    m->numMetrics = n;
    m->sample1 = a;
    m->sample2 = b;
    for (unsigned i = 0; i < n; i++)
        m->metrics[i].metricId = ids[i];
    return metrics(m);
}

static void support_and_versions(void **state)
{
    (void)state;
    config("cost off\ngpu uuid=GPU-a\ngpu uuid=GPU-b\ngpu uuid=GPU-c\ngpu uuid=GPU-d\ngpm 1 sm=5\n"
           "unsupported 2 gpm\nfail 3 999 gpm\n");
    support_t s = {1, 7};
    assert_int_equal(gpm_support(dev(0), &s), 0);
    assert_int_equal(s.isSupportedDevice, 0);
    assert_int_equal(gpm_support(dev(1), &s), 0);
    assert_int_equal(s.isSupportedDevice, 1);
    s.version = 2;
    assert_int_equal(gpm_support(dev(1), &s), 25); /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
    s.version = 1;
    assert_int_equal(gpm_support(dev(2), &s), 3);
    assert_int_equal(gpm_support(dev(3), &s), 999);
    sample_t a;
    assert_int_equal(alloc(&a), 0);
    assert_int_equal(sample(dev(0), a), 3); /* not supported: no sample */
    assert_int_equal(sample(dev(2), a), 3);
    assert_int_equal(sample(dev(3), a), 999);
    assert_int_equal(sample(dev(1), a), 0);
    metrics_get_t m;
    memset(&m, 0, sizeof m);
    m.version = 2;
    m.numMetrics = 1;
    m.sample1 = m.sample2 = a;
    assert_int_equal(metrics(&m), 25);
    assert_int_equal(sfree(a), 0);
}

/* The mean of 42.5 from t1 to ts and 100 from ts to t2. */
static double switched_mean(double t1, double ts, double t2)
{
    return (42.5 * (ts - t1) + 100 * (t2 - ts)) / (t2 - t1);
}

/* The config text with the fake's clock at t (its `clock` line): time moves by a rewrite. */
static void config_at(double t, const char *text)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%sclock %.3f\n", text, t);
    config(buf);
}

#define GPM_A "cost off\ngpu uuid=GPU-a\ngpu uuid=GPU-b\ngpm 0 sm=42.5 tensor=20 pcie_tx=1000\ngpm 1 sm=1\n"
#define GPM_B "cost off\ngpu uuid=GPU-a\ngpu uuid=GPU-b\ngpm 0 sm=100 tensor=20 pcie_tx=1000\ngpm 1 dram=3\n"

static void metric_values(void **state)
{
    (void)state;
    /* the fake's clock, ahead of the real one that earlier calls brought its integrals to */
    double t0 = (double)(long)mono() + 1000;
    config_at(t0, GPM_A);
    sample_t a, b, c, other, empty;
    assert_int_equal(alloc(&a), 0);
    assert_int_equal(alloc(&b), 0);
    assert_int_equal(alloc(&c), 0);
    assert_int_equal(alloc(&other), 0);
    assert_int_equal(alloc(&empty), 0);
    assert_int_equal(sample(dev(0), a), 0);
    config_at(t0 + 1, GPM_A);
    assert_int_equal(sample(dev(0), b), 0);
    assert_int_equal(sample(dev(1), other), 0);
    metrics_get_t m;
    const unsigned ids[] = {SM, TENSOR, DRAM, PCIE_TX, 8, 999};
    assert_int_equal(get_metrics(&m, a, b, ids, 6), 0);
    assert_int_equal(m.metrics[0].nvmlReturn, 0);
    assert_float_equal(m.metrics[0].value, 42.5, 1e-6);
    assert_string_equal(m.metrics[0].metricInfo.unit, "%");
    assert_float_equal(m.metrics[1].value, 20, 1e-6);
    assert_int_equal(m.metrics[2].nvmlReturn, 3); /* not given */
    assert_int_equal(m.metrics[3].nvmlReturn, 0);
    assert_float_equal(m.metrics[3].value, 1000, 1e-6);
    assert_string_equal(m.metrics[3].metricInfo.unit, "MiB/s");
    assert_int_equal(m.metrics[4].nvmlReturn, 3); /* 8 is no metric's id */
    assert_int_equal(m.metrics[5].nvmlReturn, 3);
    /* one sample twice: the value held then */
    assert_int_equal(get_metrics(&m, b, b, ids, 1), 0);
    assert_float_equal(m.metrics[0].value, 42.5, 1e-6);
    /* refused: too many metrics, two devices, the later sample first, one never taken */
    assert_int_equal(get_metrics(&m, a, other, ids, 1), 2);
    assert_int_equal(get_metrics(&m, b, a, ids, 1), 2);
    assert_int_equal(get_metrics(&m, a, empty, ids, 1), 2);
    m.sample2 = b;
    m.numMetrics = 334;
    assert_int_equal(metrics(&m), 2);
    m.numMetrics = 333; /* NVML_GPM_METRIC_MAX is fine (the rest of the ids are 0: no metric) */
    assert_int_equal(metrics(&m), 0);
    assert_int_equal(m.metrics[332].nvmlReturn, 3);

    /* the config rewritten between two samples: the mean weighted by the time each value held.
     * The switch lands at the first call after the rewrite, at the clock the rewrite sets. */
    config_at(t0 + 10, GPM_A);
    assert_int_equal(sample(dev(0), c), 0);
    config_at(t0 + 15, GPM_B);
    dev(0); /* a call: the fake reads the new config */
    config_at(t0 + 20, GPM_B);
    assert_int_equal(sample(dev(0), a), 0);
    assert_int_equal(get_metrics(&m, c, a, ids, 2), 0);
    /* 42.5 from t1 to the switch, 100 from the switch to t2 */
    assert_float_equal(m.metrics[0].value, switched_mean(t0 + 10, t0 + 15, t0 + 20), 1e-6);
    assert_float_equal(m.metrics[0].value, 71.25, 1e-6);
    assert_float_equal(m.metrics[1].value, 20, 1e-6);
    /* a metric the device's line gives no more; a device whose line went away */
    assert_int_equal(sample(dev(1), b), 0);
    assert_int_equal(get_metrics(&m, other, b, ids, 1), 0);
    assert_int_equal(m.metrics[0].nvmlReturn, 3);
    config("cost off\ngpu uuid=GPU-a\ngpu uuid=GPU-b\n");
    assert_int_equal(sample(dev(1), b), 3);
    for (sample_t *s = (sample_t[]){a, b, c, other, empty}, *e = s + 5; s < e; s++)
        assert_int_equal(sfree(*s), 0);
}

static void mig(void **state)
{
    (void)state;
    config("cost off\ngpu uuid=GPU-1234\ngpu uuid=GPU-5678\nmig 0 3 sm=10\nmig 0 5 sm=20 dram=7\n"
           "pid 0 4242 mem=100 gi=5\npid 0 4243 mem=100\n");
    unsigned cur = 9, pend = 9, n = 0, id = 0;
    assert_int_equal(mig_mode(dev(0), &cur, &pend), 0);
    assert_true(cur == 1 && pend == 1);
    assert_int_equal(mig_mode(dev(1), &cur, &pend), 0);
    assert_true(cur == 0 && pend == 0);
    assert_int_equal(mig_max(dev(0), &n), 0);
    assert_int_equal(n, 7);
    assert_int_equal(mig_max(dev(1), &n), 0);
    assert_int_equal(n, 0);
    dev_t_ m0, m1, none;
    assert_int_equal(mig_handle(dev(0), 0, &m0), 0);
    assert_int_equal(mig_handle(dev(0), 1, &m1), 0);
    assert_int_equal(mig_handle(dev(0), 2, &none), 6); /* an empty slot: NOT_FOUND */
    assert_int_equal(mig_handle(dev(0), 7, &none), 2);
    assert_int_equal(gi_id(m0, &id), 0);
    assert_int_equal(id, 3);
    assert_int_equal(gi_id(m1, &id), 0);
    assert_int_equal(id, 5);
    assert_int_equal(gi_id(dev(0), &id), 2); /* a device's handle has no instance */
    char u[96];
    assert_int_equal(uuid(m1, u, sizeof u), 0);
    assert_string_equal(u, "MIG-1234-5");
    assert_int_equal(uuid(dev(0), u, sizeof u), 0);
    assert_string_equal(u, "GPU-1234");
    unsigned long long mj;
    assert_int_equal(energy(m1, &mj), 2); /* a MIG handle is no device handle */
    support_t s = {1, 0};
    assert_int_equal(gpm_support(dev(0), &s), 0);
    assert_int_equal(s.isSupportedDevice, 1);
    sample_t a, b;
    assert_int_equal(alloc(&a), 0);
    assert_int_equal(alloc(&b), 0);
    assert_int_equal(mig_sample(dev(0), 4, a), 6);
    assert_int_equal(mig_sample(dev(0), 5, a), 0);
    assert_int_equal(mig_sample(dev(0), 5, b), 0);
    metrics_get_t m;
    const unsigned ids[] = {SM, DRAM, TENSOR};
    assert_int_equal(get_metrics(&m, a, b, ids, 3), 0);
    assert_float_equal(m.metrics[0].value, 20, 1e-6);
    assert_float_equal(m.metrics[1].value, 7, 1e-6);
    assert_int_equal(m.metrics[2].nvmlReturn, 3);
    /* the whole device's sample (no gpm line: no metric) is not the instance's */
    assert_int_equal(sample(dev(0), a), 0);
    assert_int_equal(get_metrics(&m, a, b, ids, 1), 2);
    assert_int_equal(sample(dev(0), b), 0);
    assert_int_equal(get_metrics(&m, a, b, ids, 1), 0);
    assert_int_equal(m.metrics[0].nvmlReturn, 3);
    assert_int_equal(sfree(a), 0);
    assert_int_equal(sfree(b), 0);
    proc_t p[4];
    unsigned cnt = 4;
    assert_int_equal(procs(dev(0), &cnt, p), 0);
    assert_int_equal(cnt, 2);
    assert_true(p[0].pid == 4242 && p[0].gi == 5 && p[0].ci == 0);
    assert_true(p[1].pid == 4243 && p[1].gi == 0xFFFFFFFFu && p[1].ci == 0xFFFFFFFFu);
}

static void memory(void **state)
{
    (void)state;
    config("cost off\ngpu uuid=GPU-a mem_total=1000 mem_used=100 mem_reserved=30\ngpu uuid=GPU-b mem_total=1000 "
           "mem_used=100\nunsupported 1 memory\n");
    mem_v1_t m1;
    assert_int_equal(mem_v1(dev(0), &m1), 0);
    assert_true(m1.total == 1000 && m1.used == 130 && m1.free == 870);
    mem_v2_t m2 = {0};
    assert_int_equal(mem_v2(dev(0), &m2), 25);
    m2.version = (unsigned)(sizeof m2 | 2u << 24);
    assert_int_equal(mem_v2(dev(0), &m2), 0);
    assert_true(m2.total == 1000 && m2.used == 100 && m2.reserved == 30 && m2.free == 870);
    assert_int_equal(mem_v2(dev(1), &m2), 3);
    assert_int_equal(mem_v1(dev(1), &m1), 3);
}

/* The CPU of the calling thread a call of energy spends. */
static double energy_cpu(void)
{
    dev_t_ h = dev(0);
    unsigned long long mj;
    double c0 = thread_cpu();
    assert_int_equal(energy(h, &mj), 0);
    return thread_cpu() - c0;
}

static void costs(void **state)
{
    (void)state;
    config("gpu uuid=GPU-a energy_mj=5\n");
    assert_true(energy_cpu() >= 3900e-6); /* the H200's */
    config("gpu uuid=GPU-a energy_mj=5\ncost energy=8000\n");
    assert_true(energy_cpu() >= 8000e-6);
    config("gpu uuid=GPU-a energy_mj=5\ncost off\n");
    assert_true(energy_cpu() < 3900e-6);
    config("gpu uuid=GPU-a energy_mj=5\ncost off gpm=900\n");
    sample_t a;
    assert_int_equal(alloc(&a), 0);
    double c0 = thread_cpu();
    assert_int_equal(sample(dev(0), a), 3); /* no GPM here: the call costs all the same */
    assert_true(thread_cpu() - c0 >= 900e-6);
    assert_int_equal(sfree(a), 0);
}

/* The count of call in the counts file, or -1. */
static long count_of(const char *path, const char *call)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char name[64];
    long n, found = -1;
    while (fscanf(f, "%63s %ld", name, &n) == 2)
        if (!strcmp(name, call))
            found = n;
    fclose(f);
    return found;
}

static void call_counts(void **state)
{
    (void)state;
    char out[80];
    snprintf(out, sizeof out, "%s.calls", cfg_path);
    setenv("FAKE_NVML_CALLS_OUT", out, 1);
    config("cost off\ngpu uuid=GPU-a energy_mj=5\n");
    assert_int_equal(init(), 0);
    assert_int_equal(shutdown_(), 0);
    long e0 = count_of(out, "energy"), s0 = count_of(out, "shutdown");
    assert_true(e0 >= 0 && s0 >= 1);
    for (int i = 0; i < 3; i++)
        energy_cpu();
    assert_int_equal(shutdown_(), 0);
    assert_int_equal(count_of(out, "energy"), e0 + 3);
    assert_int_equal(count_of(out, "shutdown"), s0 + 1);
    assert_int_equal(count_of(out, "cuda"), 0); /* every call listed, zeros too */
    assert_true(count_of(out, "gpm_mig_sample") >= 0 && count_of(out, "memory_v2") >= 0);
    unsetenv("FAKE_NVML_CALLS_OUT");
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(support_and_versions), cmocka_unit_test(metric_values), cmocka_unit_test(mig),
        cmocka_unit_test(memory), cmocka_unit_test(costs), cmocka_unit_test(call_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
