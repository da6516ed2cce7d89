/* embed.c - tracking your own program from inside it: a background tracker on a thread of
 * this process watches it (and the child it starts) do some real work, then prints the run's
 * summary and recommendation and writes its HTML report.
 * Build: cmake --build build --target example-embed; run: build/example-embed [REPORT.html] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "resource_tracker.h"

static volatile double cpu_sink;

/* About secs of CPU on this thread. */
static void cpu_work(double secs)
{
    clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
    double x = 0;
    while (clock() < end)
        for (int i = 0; i < 100000; i++)
            x += i * 0.5;
    cpu_sink = x; /* the loop's result is used: the compiler keeps it */
}

/* Prints the last n samples' time, process cores and RSS, read from the running tracker. */
static void print_recent(rt_tracker *t, size_t n)
{
    uint64_t count = rt_tracker_count(t);
    uint64_t first = count > n ? count - n : 0;
    double ts[8], cores[8], rss[8];
    size_t got = rt_tracker_column(t, RT_COL_TIMESTAMP, first, n, ts);
    rt_tracker_column(t, RT_COL_PROC_CORES, first, n, cores);
    rt_tracker_column(t, RT_COL_PROC_RSS_MIB, first, n, rss);
    for (size_t i = 0; i < got; i++)
        printf("  sample %llu: t=%.2f cores=%.2f rss=%.1f MiB\n", (unsigned long long)(first + i), ts[i],
               cores[i], rss[i]);
}

int main(int argc, char **argv)
{
    const char *report_path = argc > 1 ? argv[1] : "embed-report.html";
    rt_job job = RT_JOB_INIT;
    job.job_name = "example-embed";
    rt_tracker_options o = RT_TRACKER_OPTIONS_INIT; /* pid 0: this process, with children */
    o.interval_secs = 0.1;
    o.job = &job;
    rt_tracker *t;
    rt_error err = rt_tracker_start(&o, &t);
    if (err != RT_OK) {
        fprintf(stderr, "cannot start the tracker: %s\n", rt_strerror(err));
        return 1;
    }

    printf("working: CPU on this thread\n");
    cpu_work(0.5);
    print_recent(t, 3);

    printf("working: 64 MiB of memory\n");
    size_t len = (size_t)64 << 20;
    volatile char *mem = malloc(len); /* volatile: the compiler may not skip the writes */
    for (size_t i = 0; mem && i < len; i += 4096)
        mem[i] = 1;
    rt_tracker_wait(t, rt_tracker_count(t) + 3, 2.0);
    print_recent(t, 3);
    free((void *)mem);

    printf("working: a child process that uses CPU\n");
    pid_t kid = fork();
    if (kid == 0) {
        cpu_work(0.5);
        _exit(0);
    }
    if (kid > 0)
        waitpid(kid, NULL, 0);
    print_recent(t, 3);

    rt_tracker_stop(t);
    printf("%llu samples\n", (unsigned long long)rt_tracker_count(t));

    char buf[8192];
    const rt_summary *s = rt_tracker_summary(t);
    size_t n = 0;
    if (rt_format_summary_json(s, NULL, NULL, buf, sizeof buf, &n) == RT_OK && n < sizeof buf)
        printf("summary: %s", buf);
    rt_recommendation rec = RT_RECOMMENDATION_INIT;
    if (rt_tracker_recommend(t, &rec) == RT_OK &&
        rt_format_recommendation(&rec, RT_SCHED_METAFLOW, buf, sizeof buf) < sizeof buf)
        printf("recommendation: %s", buf);

    int status = 0;
    int fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || rt_tracker_report(t, NULL, fd) != RT_OK) {
        fprintf(stderr, "cannot write %s\n", report_path);
        status = 1;
    } else {
        printf("report: %s\n", report_path);
    }
    if (fd >= 0)
        close(fd);
    rt_tracker_free(t);
    return status;
}
