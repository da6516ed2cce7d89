/* bench_sample.c - overhead benchmark of whole-machine sampling through the public API:
 * CPU microseconds per sample (reading + computing, and formatting the JSON line) over many
 * back-to-back samples, and the process's peak RSS. Prints figures; asserts nothing.
 *   bench-sample [SAMPLES]   (default 2000) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "resource_tracker.h"

static double cpu_secs(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
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
    return 0;
}
