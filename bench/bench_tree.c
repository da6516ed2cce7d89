/* bench_tree.c - what tracking a process tree costs: CPU per sample (whole machine plus the
 * tree) for trees of sleeping processes of several sizes, with PSS cached by its freshness
 * rule and with PSS re-read every sample; for a tree whose processes allocate and free memory
 * all the time (their fault counts outrun their RSS: each re-reads its peak RSS, VmHWM, every
 * sample); and the cost of tracking one process on a machine crowded with unrelated
 * processes. Prints figures; asserts nothing.
 *   bench-tree [SAMPLES]   (default 200) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "resource_tracker.h"

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Forks a root that forks n sleeping children (n - 1 plus itself make the tree of n). */
static pid_t start_tree(int n)
{
    int ready[2];
    if (pipe(ready) < 0)
        exit(1);
    pid_t root = fork();
    if (root == 0) {
        close(ready[0]);
        for (int i = 1; i < n; i++) {
            pid_t c = fork();
            if (c == 0) {
                close(ready[1]);
                for (;;)
                    pause();
            }
        }
        if (write(ready[1], "x", 1) < 0)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1)
        exit(1);
    close(ready[0]);
    return root;
}

/* Forks a root that forks n - 1 children, each (and the root) mapping, touching and unmapping
 * 4 MiB every 2 ms: memory that comes and goes between samples. */
static pid_t start_busy_tree(int n)
{
    pid_t root = fork();
    if (root == 0) {
        for (int i = 1; i < n; i++)
            if (fork() == 0)
                break;
        for (;;) {
            char *m = mmap(NULL, 4u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m != MAP_FAILED) {
                for (size_t k = 0; k < 4u << 20; k += 4096)
                    m[k] = 1;
                munmap(m, 4u << 20);
            }
            usleep(2000);
        }
    }
    usleep(200000); /* the children are forked and running */
    return root;
}

static void stop_tree(pid_t root)
{
    kill(-root, SIGKILL); /* not a group: kill children one by one through the root's death */
    char cmd[64];
    snprintf(cmd, sizeof cmd, "pkill -KILL -P %d", (int)root);
    if (system(cmd) < 0) {
    }
    kill(root, SIGKILL);
    waitpid(root, NULL, 0);
}

/* CPU microseconds per sample over n back-to-back samples (warm) and with a pause between
 * samples (cold caches, as at a real interval). */
static void measure(const char *label, pid_t pid, double pss_max_age, int samples)
{
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = pid;
    o.pss_max_age_secs = pss_max_age;
    rt_sampler *s;
    if (rt_sampler_new(&o, &s) != RT_OK) {
        fprintf(stderr, "bench-tree: cannot track %d\n", (int)pid);
        exit(1);
    }
    const rt_sample *smp;
    for (int i = 0; i < 5; i++)
        rt_sampler_sample(s, &smp);
    double a = cpu_ns();
    for (int i = 0; i < samples; i++)
        rt_sampler_sample(s, &smp);
    double warm = (cpu_ns() - a) / samples / 1000.0;
    int cold_n = samples / 4 > 20 ? 20 : samples / 4 + 1;
    double cold_sum = 0;
    for (int i = 0; i < cold_n; i++) {
        usleep(100000);
        double b = cpu_ns();
        rt_sampler_sample(s, &smp);
        cold_sum += cpu_ns() - b;
    }
    printf("%-44s procs=%-5lld warm_us=%8.1f cold_us=%8.1f pss_mib=%.1f\n", label,
           smp->process ? (long long)smp->process->child_count + 1 : 0, warm, cold_sum / cold_n / 1000.0,
           smp->process ? smp->process->pss_mib : 0.0);
    rt_sampler_free(s);
}

int main(int argc, char **argv)
{
    int samples = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 200;
    if (samples <= 0)
        samples = 200;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    measure("whole machine only", 0, 30, samples);
    static const int sizes[] = {1, 200, 1000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        pid_t root = start_tree(sizes[k]);
        char label[64];
        snprintf(label, sizeof label, "tree of %d sleeping, PSS by freshness rule", sizes[k]);
        measure(label, root, 30, samples);
        snprintf(label, sizeof label, "tree of %d sleeping, PSS every sample", sizes[k]);
        measure(label, root, 0, samples);
        stop_tree(root);
    }
    /* a tree whose memory comes and goes: the peak RSS (VmHWM) re-read for every process */
    pid_t busy = start_busy_tree(20);
    measure("tree of 20 allocating and freeing", busy, 30, samples);
    stop_tree(busy);
    /* one tracked process, with and without 2000 unrelated processes on the machine */
    pid_t one = start_tree(1);
    measure("1 process, idle machine", one, 30, samples);
    pid_t crowd = start_tree(2000);
    measure("1 process, 2000 unrelated processes running", one, 30, samples);
    stop_tree(crowd);
    stop_tree(one);
    return 0;
}
