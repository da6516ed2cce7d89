/* bench_export.c - what each exporter adds to a sample, through the public API: CPU
 * microseconds per call of rt_prom_publish (formatting both bodies), rt_format_prometheus
 * alone, rt_otlp_add (the copy into the queue; its thread pushes every hour here, to a port
 * nobody listens on) and rt_prom_textfile_write (one atomic replace in a temporary directory),
 * each with a sample of a sampler tracking a sleeping child; and the RSS the exporters add.
 * Interleaved rounds against the bare sample, best of each. Prints figures; asserts nothing.
 *   bench-export [CALLS]   (default 2000) */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* This process's resident set in KiB (VmRSS), or -1. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &v) == 1)
            break;
    fclose(f);
    return v;
}

enum { BARE, PUBLISH, FORMAT, OTLP_ADD, TEXTFILE, NKINDS };
static const char *const names[NKINDS] = {"sample_only", "prom_publish", "format_prometheus", "otlp_add",
                                          "textfile_write"};

typedef struct bench {
    rt_sampler *s;
    rt_prom_server *prom;
    rt_otlp *otlp;
    const char *dir;
    rt_job job;
    char *buf;
    size_t cap;
} bench;

/* CPU microseconds per round trip of n samples, each followed by the exporter call of kind. */
static double round_us(bench *b, int kind, long n)
{
    const rt_sample *smp;
    rt_job_status st = RT_JOB_STATUS_INIT;
    st.start_secs = 1.7e9;
    st.end_secs = NAN;
    st.duration_secs = 10;
    st.cpu_secs = 1.5;
    st.memory_peak_bytes = 1e8;
    st.exit_status = RT_NULL_I64;
    double c0 = cpu_secs();
    for (long i = 0; i < n; i++) {
        rt_sampler_sample(b->s, &smp);
        switch (kind) {
        case PUBLISH: rt_prom_publish(b->prom, smp); break;
        case FORMAT: rt_format_prometheus(smp, &b->job, NULL, NULL, 1, b->buf, b->cap); break;
        case OTLP_ADD: rt_otlp_add(b->otlp, smp); break;
        case TEXTFILE:
            st.samples = (uint64_t)i;
            rt_prom_textfile_write(b->dir, "bench", &b->job, &st, NULL, 0);
            break;
        default: break;
        }
    }
    return (cpu_secs() - c0) / (double)n * 1e6;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
    if (n <= 0)
        n = 2000;
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    static const char *const tags[] = {"team=ml", "owner=ana"};
    bench b = {.job = RT_JOB_INIT};
    b.job.job_name = "bench";
    b.job.tags = tags;
    b.job.tag_count = 2;
    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;
    so.pid = child;
    so.own_children = 1;
    if (rt_sampler_new(&so, &b.s) != RT_OK) {
        fprintf(stderr, "bench-export: cannot start a sampler\n");
        kill(child, SIGKILL);
        return 1;
    }
    const rt_sample *smp;
    for (int i = 0; i < 50; i++)
        rt_sampler_sample(b.s, &smp);
    long rss0 = rss_kib();
    rt_prom_options po = RT_PROM_OPTIONS_INIT;
    po.job = &b.job;
    rt_error e = rt_prom_start(&po, &b.prom);
    rt_otlp_options oo = RT_OTLP_OPTIONS_INIT;
    oo.url = "http://127.0.0.1:9/v1/metrics"; /* discard: nothing listens, and no push is due */
    oo.interval_secs = 3600;
    oo.job = &b.job;
    oo.max_queue_samples = (size_t)n * 8 + 64; /* every call is kept: the cost of the copy */
    oo.finish_timeout_secs = 1;
    rt_error e2 = rt_otlp_start(&oo, &b.otlp);
    char tmpl[] = "/tmp/bench-export-XXXXXX";
    b.dir = mkdtemp(tmpl);
    b.cap = 1 << 20;
    b.buf = malloc(b.cap);
    if (e != RT_OK || e2 != RT_OK || !b.dir || !b.buf) {
        fprintf(stderr, "bench-export: cannot start the exporters (%s, %s)\n", rt_strerror(e), rt_strerror(e2));
        kill(child, SIGKILL);
        return 1;
    }
    rt_sampler_sample(b.s, &smp);
    size_t body = rt_format_prometheus(smp, &b.job, NULL, NULL, 0, b.buf, b.cap);
    printf("prometheus_body_bytes: %zu (text format, this machine: %zu disks, %zu interfaces, %zu GPUs)\n", body,
           smp->disk_count, smp->network_count, smp->gpu_count);
    double best[NKINDS];
    for (int k = 0; k < NKINDS; k++)
        best[k] = 1e30;
    for (int r = 0; r < 7; r++) {
        for (int k = 0; k < NKINDS; k++) {
            double us = round_us(&b, k, k == TEXTFILE ? n / 10 + 1 : n);
            best[k] = us < best[k] ? us : best[k];
        }
    }
    for (int k = 0; k < NKINDS; k++)
        printf("cpu_us_per_sample_%s: %.1f\n", names[k], best[k]);
    for (int k = 1; k < NKINDS; k++)
        printf("added_cpu_us_%s: %.1f (best of 7 interleaved rounds)\n", names[k], best[k] - best[BARE]);
    printf("rss_added_kib_by_exporters: %ld (server thread, both bodies, %ld queued OTLP samples)\n",
           rss_kib() - rss0, 7 * n);
    rt_otlp_free(b.otlp); /* finishing: one push to a closed port, bounded by its timeout */
    rt_prom_free(b.prom);
    char path[4200];
    snprintf(path, sizeof path, "%s/resource_tracker_bench.prom", b.dir);
    unlink(path);
    rmdir(b.dir);
    free(b.buf);
    rt_sampler_free(b.s);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
