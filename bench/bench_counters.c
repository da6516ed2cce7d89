/* bench_counters.c - what one reading of the counters read now (rt_counters, 0.13) costs: CPU
 * per rt_counters_tree call for this process with 0, 10 and 100 sleeping children, with and
 * without its descendants, and per rt_counters_system call. Prints figures; asserts nothing.
 *   bench-counters [CALLS]   (default 2000) */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

static void tree_cost(rt_counters *c, int kids, int children, long calls)
{
    rt_tree_counters t = {.struct_size = sizeof t};
    rt_counters_tree(c, getpid(), children, &t); /* warm up */
    double t0 = cpu_ns();
    for (long i = 0; i < calls; i++)
        rt_counters_tree(c, getpid(), children, &t);
    printf("rt_counters_tree, %3d children, %-10s %8.1f us CPU per call\n", kids,
           children ? "the tree:" : "root only:", (cpu_ns() - t0) / calls / 1e3);
}

int main(int argc, char **argv)
{
    long calls = 2000;
    if (argc > 1) {
        char *end;
        errno = 0;
        calls = strtol(argv[1], &end, 10);
        if (errno || end == argv[1] || *end || calls < 1 || calls > 10000000) {
            fprintf(stderr, "usage: bench-counters [CALLS: 1 to 10000000, default 2000]\n");
            return 2;
        }
    }
    rt_counters_options o = RT_COUNTERS_OPTIONS_INIT;
    rt_counters *c;
    if (rt_counters_new(&o, &c) != RT_OK)
        return 1;
    pid_t pids[100];
    int n = 0;
    for (int want = 0; want <= 100; want = want ? want * 10 : 10) {
        for (; n < want; n++) {
            pids[n] = fork();
            if (pids[n] == 0)
                for (;;)
                    pause();
        }
        tree_cost(c, n, 1, calls);
        if (n == 0)
            tree_cost(c, n, 0, calls);
    }
    const rt_system_counters *s;
    rt_counters_system(c, &s);
    double t0 = cpu_ns();
    for (long i = 0; i < calls; i++)
        rt_counters_system(c, &s);
    printf("rt_counters_system (%zu disks, %zu mounts)  %8.1f us CPU per call\n", s->disk_count, s->mount_count,
           (cpu_ns() - t0) / calls / 1e3);
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
    rt_counters_free(c);
    return 0;
}
