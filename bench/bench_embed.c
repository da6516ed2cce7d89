/* bench_embed.c - what the embedded tracker costs the program that runs it: the tracker
 * thread's CPU per sample (the scheduler's on-CPU time of that thread, from
 * /proc/self/task/TID/schedstat), the RSS it adds (VmRSS before the start and after N
 * samples), the store's bytes per row and the thread's stack in use (the resident pages of
 * its stack mapping). At 10 ms, for this process alone and with 50 sleeping children.
 * Also (bench-embed week [ROWS]) a week at 1 s: ROWS rows (604,800) saved and loaded, plain
 * and gzipped: the time and the peak memory each adds over the filled store (VmHWM after
 * clear_refs, in a child per case). Prints figures, asserts nothing. Usage: bench-embed
 * [SAMPLES] | bench-embed week [ROWS] */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A stopped tracker with rows real samples of this machine, their time moved on by 1 s each and
 * a few figures varied as a run would (so that the JSON and gzip see realistic numbers). */
static rt_tracker *filled(uint64_t rows)
{
    rt_tracker *t = NULL;
    rt_tracker_new_stopped(rows, NULL, &t);
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.pid = getpid();
    so.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    rt_sampler *sp;
    const rt_sample *s;
    if (!t || rt_sampler_new(&so, &sp) != RT_OK || rt_sampler_sample(sp, &s) != RT_OK)
        exit(1);
    double row[RT_NCOLS];
    rt_row_from_sample(s, row);
    rt_sampler_free(sp);
    double t0 = row[RT_COL_TIMESTAMP], total = 0;
    for (uint64_t i = 0; i < rows; i++) {
        row[RT_COL_TIMESTAMP] = t0 + (double)i + 0.000123 * (double)(i % 97);
        row[RT_COL_INTERVAL] = 1.0 + 1e-6 * (double)(i % 13);
        row[RT_COL_CPU_CORES] = (double)(i % 400) / 100.0;
        row[RT_COL_PROC_CORES] = (double)(i % 100) / 100.0;
        row[RT_COL_PROC_UTIME] = (double)(i % 100) / 100.0;
        total += row[RT_COL_PROC_UTIME];
        row[RT_COL_PROC_CPU_SECS_TOTAL] = total;
        row[RT_COL_MEM_USED_MIB] = 8000.0 + (double)(i % 1000) * 0.25;
        row[RT_COL_PROC_PSS_MIB] = 100.0 + (double)(i % 500) * 0.0625;
        row[RT_COL_NET_RECV_BYTES] = (double)(i * 7919 % 1000000);
        row[RT_COL_DISK_WRITE_BYTES] = (double)(i * 104729 % 10000000);
        /* the machine's pressure, percent of the interval (NaN stays NaN: no PSI) */
        if (!isnan(row[RT_COL_PRESSURE_CPU_SOME_PCT]))
            row[RT_COL_PRESSURE_CPU_SOME_PCT] = (double)(i * 31 % 2000) / 100.0 + 0.003;
        if (!isnan(row[RT_COL_PRESSURE_IO_SOME_PCT]))
            row[RT_COL_PRESSURE_IO_SOME_PCT] = (double)(i % 7 == 0) * (double)(i % 300) / 100.0;
        rt_tracker_add_row(t, row);
    }
    t->stop_time = row[RT_COL_TIMESTAMP];
    t->interval_secs = 1.0;
    t->pid = getpid();
    return t;
}

static void week_case(uint64_t rows, int flags, const char *path)
{
    pid_t kid = fork();
    if (kid == 0) {
        rt_tracker *t = filled(rows);
        long rss0 = status_kib("/proc/self/status", "VmRSS");
        int cr = open("/proc/self/clear_refs", O_WRONLY);
        if (cr < 0 || write(cr, "5", 1) != 1) /* VmHWM := VmRSS */
            fprintf(stderr, "clear_refs: cannot reset VmHWM\n");
        if (cr >= 0)
            close(cr);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        double a = mono();
        rt_error err = rt_tracker_save(t, NULL, flags, fd);
        double b = mono();
        close(fd);
        long save_peak = status_kib("/proc/self/status", "VmHWM") - rss0;
        long store_kib = (long)(rt_store_bytes(t->store) / 1024);
        rt_tracker_free(t);
        struct stat sb;
        stat(path, &sb);
        printf("week %s, %llu rows: store %ld KiB (VmRSS %ld KiB); save %s %.2f s, file %.1f MB, peak added %ld KiB (%.2fx the store)\n",
               flags ? "gzip" : "plain", (unsigned long long)rows, store_kib, rss0, rt_strerror(err), b - a,
               (double)sb.st_size / 1e6, save_peak, (double)save_peak / (double)store_kib);
        fflush(stdout);
        _exit(0);
    }
    waitpid(kid, NULL, 0);
    kid = fork();
    if (kid == 0) {
        long rss0 = status_kib("/proc/self/status", "VmRSS");
        double a = mono();
        rt_tracker *u = NULL;
        rt_error err = rt_tracker_load(path, NULL, NULL, &u);
        double b = mono();
        long peak = status_kib("/proc/self/status", "VmHWM") - rss0;
        long after = status_kib("/proc/self/status", "VmRSS") - rss0;
        printf("  load %s %.2f s, %llu rows, peak added %ld KiB, kept %ld KiB\n", rt_strerror(err), b - a,
               (unsigned long long)(u ? rt_tracker_count(u) : 0), peak, after);
        rt_tracker_free(u);
        fflush(stdout);
        _exit(0);
    }
    waitpid(kid, NULL, 0);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "week") == 0) {
        uint64_t rows = argc > 2 ? strtoull(argv[2], NULL, 10) : 604800;
        week_case(rows, 0, "/tmp/bench-embed-week.json");
        week_case(rows, RT_SAVE_GZIP, "/tmp/bench-embed-week.json.gz");
        return 0;
    }
    uint64_t samples = argc > 1 ? strtoull(argv[1], NULL, 10) : 500;
    run_case("this process alone, -i 0.01", 0, samples);
    run_case("this process and 50 sleeping children, -i 0.01", 50, samples);
    return 0;
}
