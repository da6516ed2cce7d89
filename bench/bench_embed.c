/* bench_embed.c - what the embedded tracker costs the program that runs it: the tracker
 * thread's CPU per sample (the scheduler's on-CPU time of that thread, from
 * /proc/self/task/TID/schedstat), the RSS it adds (VmRSS before the start and after N
 * samples), the store's bytes per row and the thread's stack in use (the resident pages of
 * its stack mapping). At 10 ms, for this process alone and with 50 sleeping children.
 * Prints figures, asserts nothing. Usage: bench-embed [SAMPLES] */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "embed/tracker_int.h"
#include "resource_tracker.h"

static volatile pid_t tracker_tid;
static volatile uintptr_t tracker_sp;

static void on_sample(void *user, const rt_sample *s)
{
    (void)user;
    (void)s;
    int here;
    tracker_tid = gettid();
    tracker_sp = (uintptr_t)&here;
}

/* A "Key: N kB" figure of a /proc file, in KiB (-1 when absent). */
static long status_kib(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

static unsigned long long thread_run_ns(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
    FILE *f = fopen(path, "r");
    unsigned long long ns = 0;
    if (f) {
        if (fscanf(f, "%llu", &ns) != 1)
            ns = 0;
        fclose(f);
    }
    return ns;
}

/* Rss of the mapping of /proc/self/smaps that holds addr, in KiB. */
static long mapping_rss_kib(uintptr_t addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool in = false;
    long rss = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = addr >= lo && addr < hi;
            continue;
        }
        if (in && strncmp(line, "Rss:", 4) == 0) {
            rss = strtol(line + 4, NULL, 10);
            break;
        }
    }
    if (f)
        fclose(f);
    return rss;
}

static void run_case(const char *name, int kids, uint64_t samples)
{
    pid_t pids[64];
    for (int i = 0; i < kids; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            for (;;)
                pause();
        }
    }
    long rss0 = status_kib("/proc/self/status", "VmRSS");
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT;
    o.interval_secs = 0.01;
    o.on_sample = on_sample;
    rt_tracker *t;
    if (rt_tracker_start(&o, &t) != RT_OK) {
        fprintf(stderr, "cannot start\n");
        exit(1);
    }
    rt_tracker_wait(t, 5, 5.0);
    unsigned long long ns0 = thread_run_ns(tracker_tid);
    uint64_t n0 = rt_tracker_count(t);
    rt_tracker_wait(t, n0 + samples, -1);
    unsigned long long ns1 = thread_run_ns(tracker_tid);
    uint64_t n1 = rt_tracker_count(t);
    long rss1 = status_kib("/proc/self/status", "VmRSS");
    long stack = mapping_rss_kib(tracker_sp);
    rt_tracker_stop(t);
    double children = NAN;
    rt_tracker_column(t, RT_COL_PROC_CHILDREN, n1 - 1, 1, &children);
    printf("%s: children %.0f, samples %llu\n", name, children, (unsigned long long)(n1 - n0));
    printf("  embed_cpu_us_per_sample: %.1f (tracker thread, schedstat)\n", (double)(ns1 - ns0) / 1000.0 / (double)(n1 - n0));
    printf("  embed_rss_added_kib: %ld (VmRSS after %llu samples minus before start; stats, report, store, stack)\n",
           rss1 - rss0, (unsigned long long)n1);
    printf("  embed_store_bytes_per_row: %.1f (%zu bytes for %llu rows: one block of 4096 allocated)\n",
           (double)rt_store_bytes(t->store) / 4096.0, rt_store_bytes(t->store), (unsigned long long)n1);
    printf("  embed_thread_stack_resident_kib: %ld (of %u KiB reserved)\n", stack, 512u);
    rt_tracker_free(t);
    for (int i = 0; i < kids; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

int main(int argc, char **argv)
{
    uint64_t samples = argc > 1 ? strtoull(argv[1], NULL, 10) : 500;
    run_case("this process alone, -i 0.01", 0, samples);
    run_case("this process and 50 sleeping children, -i 0.01", 50, samples);
    return 0;
}
