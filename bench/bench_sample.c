/* bench_sample.c - overhead benchmark of whole-machine sampling through the public API:
 * CPU microseconds per sample (reading + computing, and formatting the JSON line) over many
 * back-to-back samples, and the process's peak RSS; then what the cgroup part adds to a
 * tracked process (a sleeping child in a job group of its own, and the same child by pid),
 * against the same sampler with cgroup reading off; then what energy reading adds to a
 * whole-machine sample (the same sampler with energy on and off, interleaved): on this machine
 * (no counters: the CPU estimate), and with $BENCH_ENERGY_SYS (a sys root with RAPL zones, e.g.
 * tests/fixtures/energy/intel-server/sys) and $BENCH_FAKE_NVML (the fake NVML, given two GPUs
 * with energy counters). Prints figures; asserts nothing.
 *   bench-sample [SAMPLES]   (default 2000) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resource_tracker.h"

static double cpu_secs(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

/* CPU microseconds per sample of n back-to-back samples. */
static double us_per_sample(rt_sampler *s, long n)
{
    const rt_sample *smp;
    double c0 = cpu_secs();
    for (long i = 0; i < n; i++)
        rt_sampler_sample(s, &smp);
    return (cpu_secs() - c0) / (double)n * 1e6;
}

/* A sampler tracking pid (with own_children, as wrapper mode does, when own), reading the
 * group jg (NULL: the pid's own group) or no group at all (off). NULL when it cannot start. */
static rt_sampler *tree_sampler(pid_t pid, int own, const rt_job_cgroup *jg, int off)
{
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = pid;
    o.own_children = own;
    o.job_cgroup = jg;
    o.cgroup_off = off;
    rt_sampler *s = NULL;
    if (rt_sampler_new(&o, &s) != RT_OK)
        return NULL;
    const rt_sample *smp;
    for (int i = 0; i < 50; i++) /* warm up */
        rt_sampler_sample(s, &smp);
    return s;
}

/* Compares sampler on with sampler off over rounds of n samples each, interleaved; prints the
 * best round of each and the difference. */
static void compare(const char *what, rt_sampler *on, rt_sampler *off, long n)
{
    double best_on = 1e30, best_off = 1e30;
    for (int r = 0; r < 7; r++) {
        double a = us_per_sample(on, n), b = us_per_sample(off, n);
        best_on = a < best_on ? a : best_on;
        best_off = b < best_off ? b : best_off;
    }
    printf("cpu_us_per_sample_%s_cgroup_off: %.1f\n", what, best_off);
    printf("cpu_us_per_sample_%s_cgroup_on: %.1f\n", what, best_on);
    printf("cgroup_part_us_per_sample_%s: %.1f (best of 7 interleaved rounds each)\n", what, best_on - best_off);
}

/* The cgroup part's cost: a sleeping child in a job group of its own, tracked as wrapper mode
 * tracks it (the job's group, exclusive by construction) and by pid (the group it lives in,
 * checked for exclusiveness every sample), each against cgroup reading off. */
static void bench_cgroup(long n)
{
    rt_job_cgroup_options jo = RT_JOB_CGROUP_OPTIONS_INIT;
    rt_job_cgroup *jg = NULL;
    if (rt_job_cgroup_create(&jo, &jg) != RT_OK) {
        printf("cgroup part: skipped (no job cgroup can be made here)\n");
        return;
    }
    int ready[2];
    if (pipe(ready) < 0)
        exit(1);
    pid_t child = fork();
    if (child == 0) {
        close(ready[0]);
        char ok = rt_job_cgroup_enter(jg) == 0 ? 'y' : 'n';
        if (write(ready[1], &ok, 1) < 0)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char ok = 'n';
    if (read(ready[0], &ok, 1) != 1 || ok != 'y') {
        printf("cgroup part: skipped (the child could not enter the job group)\n");
    } else {
        rt_sampler *on = tree_sampler(child, 1, jg, 0), *off = tree_sampler(child, 1, NULL, 1);
        if (on && off)
            compare("job_group", on, off, n);
        rt_sampler_free(on);
        rt_sampler_free(off);
        on = tree_sampler(child, 0, NULL, 0);
        off = tree_sampler(child, 0, NULL, 1);
        if (on && off)
            compare("pid_group", on, off, n);
        rt_sampler_free(on);
        rt_sampler_free(off);
    }
    close(ready[0]);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    rt_job_cgroup_free(jg);
}

/* CPU microseconds per sample that energy reading adds: samplers alike but for energy_off,
 * measured in alternating rounds (the machine's noise falls on both alike). */
static void bench_energy(long n, const char *sys_root, const char *nvml, const char *what)
{
    rt_sampler *on = NULL, *off = NULL;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.sys_root = sys_root;
    o.nvml_library = nvml;
    o.cgroup_off = 1;
    if (rt_sampler_new(&o, &on) != RT_OK)
        return;
    o.energy_off = 1;
    if (rt_sampler_new(&o, &off) != RT_OK) {
        rt_sampler_free(on);
        return;
    }
    const rt_sample *smp;
    for (int i = 0; i < 50; i++) {
        rt_sampler_sample(on, &smp);
        rt_sampler_sample(off, &smp);
    }
    double t_on = 0, t_off = 0;
    for (int r = 0; r < 10; r++) {
        t_on += us_per_sample(on, n / 10);
        t_off += us_per_sample(off, n / 10);
    }
    rt_sampler_sample(on, &smp);
    size_t domains = smp->energy ? smp->energy->domain_count : 0;
    printf("energy (%s; %zu domains): cpu_us_per_sample on %.2f, off %.2f, added %.2f\n", what, domains, t_on / 10,
           t_off / 10, (t_on - t_off) / 10);
    rt_sampler_free(on);
    rt_sampler_free(off);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
    if (n <= 0)
        n = 2000;
    rt_sampler *s;
    if (rt_sampler_new(NULL, &s) != RT_OK) {
        fprintf(stderr, "bench-sample: cannot start the sampler\n");
        return 1;
    }
    const rt_sample *smp = NULL;
    for (int i = 0; i < 50; i++) /* warm up: discovery, buffers */
        rt_sampler_sample(s, &smp);
    double c0 = cpu_secs();
    for (long i = 0; i < n; i++)
        rt_sampler_sample(s, &smp);
    double c1 = cpu_secs();
    static char buf[1 << 16];
    size_t len = 0;
    for (long i = 0; i < n; i++)
        len = rt_format_sample(RT_FORMAT_JSON, smp, NULL, buf, sizeof buf);
    double c2 = cpu_secs();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("samples: %ld  cores: %zu  disks: %zu  interfaces: %zu  json bytes/sample: %zu\n", n, smp->cpu->core_count,
           smp->disk_count, smp->network_count, len);
    printf("cpu_us_per_sample_read: %.1f\n", (c1 - c0) / (double)n * 1e6);
    printf("cpu_us_per_sample_format_json: %.1f\n", (c2 - c1) / (double)n * 1e6);
    printf("cpu_us_per_sample_total: %.1f\n", (c2 - c0) / (double)n * 1e6);
    printf("peak_rss_kib: %ld\n", ru.ru_maxrss);
    rt_sampler_free(s);
    bench_cgroup(n / 5 > 0 ? n / 5 : 1);
    bench_energy(n, NULL, "/nonexistent/libnvidia-ml.so.1", "this machine");
    const char *esys = getenv("BENCH_ENERGY_SYS"), *fake = getenv("BENCH_FAKE_NVML");
    if (esys && fake) {
        char cfg[] = "/tmp/bench-nvml-XXXXXX";
        int fd = mkstemp(cfg);
        if (fd >= 0) {
            /* the library's own work: the fake's calls free (not the H200's CPU per call) */
            dprintf(fd, "gpus 2 util=50 mem_total=85899345920 mem_used=1073741824 power_mw=250000 energy_mj=1000000\n"
                        "cost off\n");
            close(fd);
            setenv("FAKE_NVML_CONFIG", cfg, 1);
            setenv("FAKE_NVML_LOAD_ONCE", "1", 1);
            bench_energy(n, esys, fake, "4 RAPL counters and 2 NVML GPUs with energy counters");
            unlink(cfg);
        }
    }
    return 0;
}
