/* bench_energy.c - what reading the machine's energy counters (source/energy.h) costs: CPU per
 * rt_energy_src_read on a fixture sys tree (default the 2-socket server's 4 RAPL counters;
 * with "+meter" its ACPI power meter joined in a temp copy: 5 counters). Prints figures;
 * asserts nothing. On a fixture the files are plain files: a real energy_uj read also costs
 * the kernel's MSR read (an IPI when the package is another CPU's).
 *   bench-energy [CALLS] [SYS_ROOT | +meter]   (default 200000, the server fixture) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "source/energy.h"

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long calls = 200000;
    if (argc > 1) {
        char *end;
        errno = 0;
        calls = strtol(argv[1], &end, 10);
        if (errno || end == argv[1] || *end || calls < 1 || calls > 100000000) {
            fprintf(stderr, "usage: bench-energy [CALLS: 1 to 100000000] [SYS_ROOT | +meter]\n");
            return 2;
        }
    }
    const char *sys = RT_FIXTURES "/energy/intel-server/sys";
    char tmp[] = "/tmp/bench-energy-XXXXXX", joined[64] = "";
    if (argc > 2 && strcmp(argv[2], "+meter") == 0) {
        if (!mkdtemp(tmp))
            return 1;
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s/sys' && cp -a '%s/energy/power-meter/sys/.' '%s/sys/'", sys, tmp,
                 RT_FIXTURES, tmp);
        if (system(cmd) != 0)
            return 1;
        snprintf(joined, sizeof joined, "%s/sys", tmp);
        sys = joined;
    } else if (argc > 2)
        sys = argv[2];
    rt_roots roots;
    if (rt_roots_open(&roots, NULL, sys) != RT_OK)
        return 1;
    rt_logger log = {0};
    rt_energy_src *e = rt_energy_src_open(&roots, &log);
    if (!e)
        return 1;
    size_t n = rt_energy_src_count(e);
    double *j = calloc(n ? n : 1, sizeof *j), *w = calloc(n ? n : 1, sizeof *w);
    if (!j || !w)
        return 1;
    rt_energy_src_read(e, j, w); /* warm up */
    double t0 = cpu_ns();
    for (long i = 0; i < calls; i++)
        rt_energy_src_read(e, j, w);
    double per = (cpu_ns() - t0) / (double)calls;
    printf("rt_energy_src_read, %zu counters (%s): %.2f us CPU per call, %.2f us per counter\n", n, sys, per / 1e3,
           n ? per / 1e3 / (double)n : 0.0);
    free(j);
    free(w);
    rt_energy_src_close(e);
    rt_roots_close(&roots);
    if (joined[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
            return 1;
    }
    return 0;
}
