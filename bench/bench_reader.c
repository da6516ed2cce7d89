/* bench_reader.c - how fast a recorded run is read back and summarized: writes a 24-hour run
 * at one sample a second (86,400 records) as JSON lines and as CSV from a real sample of this
 * machine (the tool's own process tracked), then times rt_reader_open + rt_reader_next over
 * every record feeding rt_stats_add. Prints figures; asserts nothing.
 *   bench-reader [RECORDS] [RUNS]   (defaults 86400 and 3) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "resource_tracker.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes n records made from the sample smp (timestamps one second apart, figures varied)
 * to a new temp file in format f. Returns its path (static storage per format). */
static const char *write_run(const rt_sample *smp, rt_format f, long n)
{
    static char paths[2][64];
    char *path = paths[f];
    snprintf(path, sizeof paths[0], "/tmp/bench-reader-XXXXXX");
    int fd = mkstemp(path);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        fprintf(stderr, "bench-reader: cannot write a temp file\n");
        exit(1);
    }
    if (f == RT_FORMAT_CSV)
        fputs(rt_csv_header(), out);
    rt_sample s = *smp;
    rt_cpu cpu = *smp->cpu;
    rt_process proc;
    if (smp->process) {
        proc = *smp->process;
        s.process = &proc;
    }
    s.cpu = &cpu;
    static char line[1 << 16];
    double t0 = 1.7e9;
    for (long i = 0; i < n; i++) {
        s.timestamp_secs = t0 + (double)i;
        s.interval_secs = 1.0;
        cpu.utilization_pct = (double)(i % 200) / 100.0;
        if (smp->process) {
            proc.cores_used = (double)(i % 100) / 100.0;
            proc.pss_mib = 100.0 + (double)(i % 1000);
            proc.read_bytes_total = (uint64_t)i * 4096;
            proc.read_bytes = 4096;
        }
        size_t len = rt_format_sample(f, &s, NULL, line, sizeof line);
        if (len >= sizeof line || fwrite(line, 1, len, out) != len) {
            fprintf(stderr, "bench-reader: cannot format or write\n");
            exit(1);
        }
    }
    fclose(out);
    return path;
}

/* Reads path through, summarizing; prints the figures of one run. */
static void read_run(const char *label, const char *path)
{
    FILE *f = fopen(path, "r");
    fseek(f, 0, SEEK_END);
    double mb = (double)ftell(f) / 1e6;
    fclose(f);
    double a = now();
    rt_reader *r;
    if (rt_reader_open(path, NULL, &r) != RT_OK) {
        fprintf(stderr, "bench-reader: cannot open %s\n", path);
        exit(1);
    }
    rt_stats *st = rt_stats_new();
    const rt_record *rec;
    while (rt_reader_next(r, &rec) == RT_OK && rec)
        if (st)
            rt_stats_add(st, rec);
    if (st)
        rt_stats_summary(st);
    double secs = now() - a;
    printf("%-5s size_mb: %.1f  records: %llu  skipped: %llu  seconds: %.3f  mb_per_s: %.0f\n", label, mb,
           (unsigned long long)rt_reader_records(r), (unsigned long long)rt_reader_skipped(r), secs, mb / secs);
    rt_stats_free(st);
    rt_reader_close(r);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 86400;
    long runs = argc > 2 ? strtol(argv[2], NULL, 10) : 3;
    if (n < 1 || n > 10000000 || runs < 1 || runs > 100) {
        fprintf(stderr, "usage: bench-reader [RECORDS 1..10000000] [RUNS 1..100]\n");
        return 2;
    }
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.pid = getpid();
    rt_sampler *s;
    const rt_sample *smp;
    if (rt_sampler_new(&o, &s) != RT_OK) {
        fprintf(stderr, "bench-reader: no sampler\n");
        return 1;
    }
    usleep(100000);
    rt_sampler_sample(s, &smp);
    const char *json = write_run(smp, RT_FORMAT_JSON, n);
    const char *csv = write_run(smp, RT_FORMAT_CSV, n);
    rt_sampler_free(s);
    printf("records per file: %ld (targets: JSONL <= 1 s, CSV <= 0.3 s)\n", n);
    for (int i = 0; i < runs; i++) {
        read_run("jsonl", json);
        read_run("csv", csv);
    }
    unlink(json);
    unlink(csv);
    return 0;
}
