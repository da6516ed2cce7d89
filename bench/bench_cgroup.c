/* bench_cgroup.c - what reading a cgroup costs: the CPU time of one rt_cg_group_read of the job's
 * own group (rt_job_cgroup_create + rt_cg_group_of_job, a child moved into it) and of this
 * process's own group, per read over N reads (CLOCK_PROCESS_CPUTIME_ID); and, to show why the
 * reader keeps its files open, one cgroup file re-read with pread against openat+read+close.
 * Prints figures, asserts nothing. Usage: bench-cgroup [READS] (default 10000). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "resource_tracker.h"
#include "source/cgroup.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Microseconds of CPU per rt_cg_group_read of g over n reads (every file). */
static double per_read_us(rt_cg_group *g, rt_buf *b, long n)
{
    rt_cg_reading r;
    rt_cg_group_read(g, b, &r); /* grows the buffer */
    double t0 = cpu_now();
    for (long i = 0; i < n; i++)
        rt_cg_group_read(g, b, &r);
    return (cpu_now() - t0) / (double)n * 1e6;
}

/* The same as the sampler reads at 10 samples a second: rt_cg_group_read_at, the limits
 * re-read once every 10 reads. */
static double per_sample_read_us(rt_cg_group *g, rt_buf *b, long n)
{
    rt_cg_reading r;
    double t0 = cpu_now();
    for (long i = 0; i < n; i++)
        rt_cg_group_read_at(g, b, 1000.0 + (double)i * 0.1, &r);
    return (cpu_now() - t0) / (double)n * 1e6;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    if (n <= 0)
        n = 10000;
    rt_buf b;
    rt_buf_init(&b, 1 << 20);
    rt_roots roots;
    if (rt_roots_open(&roots, NULL, NULL) != RT_OK)
        return 1;

    rt_job_cgroup *jg = NULL;
    if (rt_job_cgroup_create(NULL, &jg) == RT_OK) {
        pid_t c = fork();
        if (c == 0) {
            rt_job_cgroup_enter(jg);
            pause();
            _exit(0);
        }
        while (rt_job_cgroup_procs(jg) < 1)
            usleep(1000);
        rt_cg_group *g = rt_cg_group_of_job(jg, NULL);
        if (g) {
            printf("cgroup_read_job_us: %.2f (%s %s, %ld reads, CPU time per read, every file)\n",
                   per_read_us(g, &b, n), rt_cg_group_version(g), rt_cg_group_path(g), n);
            printf("cgroup_read_job_at_0.1s_us: %.2f (as the sampler at -i 0.1: the limits every 10 s)\n",
                   per_sample_read_us(g, &b, n));
            double t0 = cpu_now();
            for (long i = 0; i < n; i++)
                rt_cg_group_procs(g, &b, NULL, 0);
            printf("cgroup_procs_job_us: %.2f (cgroup.procs, one process)\n", (cpu_now() - t0) / (double)n * 1e6);
            rt_cg_group_free(g);
        }
        kill(c, SIGKILL);
        waitpid(c, NULL, 0);
        rt_job_cgroup_free(jg);
    } else {
        printf("cgroup_read_job_us: skipped (no job group can be made here)\n");
    }

    rt_cg_group *own = rt_cg_group_of_pid(&roots, getpid(), NULL);
    if (own) {
        printf("cgroup_read_self_us: %.2f (%s %s, the group this process lives in)\n", per_read_us(own, &b, n),
               rt_cg_group_version(own), rt_cg_group_path(own));
        rt_cg_group_free(own);
    }

    /* one file: kept open and re-read with pread, against opened, read and closed each time */
    rt_cg_mounts m;
    rt_cg_paths p;
    int h = RT_CG_UNIFIED;
    if (rt_cg_locate(&roots, 0, &m, &p) > 0 && p.has[h] && m.dir[h][0]) {
        int dfd = rt_cg_open_dir(&roots, &m, (rt_cg_hier)h, p.path[h]);
        int fd = dfd >= 0 ? openat(dfd, "cpu.stat", O_RDONLY | O_CLOEXEC) : -1;
        if (fd >= 0) {
            double t0 = cpu_now();
            for (long i = 0; i < n; i++)
                rt_read_fd_grow(fd, &b, RT_READ_SINGLE);
            double t1 = cpu_now();
            for (long i = 0; i < n; i++)
                rt_read_at(dfd, "cpu.stat", b.data, b.cap);
            double t2 = cpu_now();
            printf("cgroup_file_pread_us: %.2f  cgroup_file_open_read_close_us: %.2f (cpu.stat)\n",
                   (t1 - t0) / (double)n * 1e6, (t2 - t1) / (double)n * 1e6);
            close(fd);
        }
        if (dfd >= 0)
            close(dfd);
    }
    rt_roots_close(&roots);
    rt_buf_free(&b);
    return 0;
}
