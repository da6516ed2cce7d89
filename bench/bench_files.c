/* bench_files.c - what each file of a whole-machine sample costs to read on this machine: CPU per
 * read (a descriptor kept open and read again from offset 0, as the sampler reads them) of
 * /proc/stat, /proc/meminfo, /proc/diskstats, /proc/net/dev, /proc/pressure/{cpu,memory,io},
 * /proc/vmstat and /proc/loadavg; statvfs of /; counting every process (a walk of /proc's
 * entries, what system_processes costs); and, for comparison, what vmstat reads a sample
 * (/proc/stat, /proc/meminfo, /proc/vmstat). Prints figures; asserts nothing (issue 31).
 *   bench-files [ROUNDS]   (default 2000) */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static char buf[1 << 17];

/* CPU µs per read of path from offset 0 (-1 when it cannot be opened), and its size. */
static double per_read(const char *path, int rounds, ssize_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    *size = pread(fd, buf, sizeof buf, 0);
    double t0 = cpu_ns();
    for (int i = 0; i < rounds; i++)
        if (pread(fd, buf, sizeof buf, 0) < 0)
            break;
    double t = (cpu_ns() - t0) / rounds / 1000;
    close(fd);
    return t;
}

static int count_processes(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 2000;
    if (rounds < 1)
        rounds = 1;
    static const char *const files[] = {"/proc/stat",         "/proc/meminfo",         "/proc/diskstats",
                                        "/proc/net/dev",      "/proc/pressure/cpu",    "/proc/pressure/memory",
                                        "/proc/pressure/io",  "/proc/vmstat",          "/proc/loadavg",
                                        "/proc/self/mountinfo"};
    printf("rounds: %d\n", rounds);
    double vm = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        ssize_t size = 0;
        double us = per_read(files[i], rounds, &size);
        if (us < 0) {
            printf("%-24s not here\n", files[i]);
            continue;
        }
        printf("%-24s %7.2f us/read  %6zd bytes\n", files[i], us, size);
        if (i == 0 || i == 1 || i == 7)
            vm += us;
    }
    struct statvfs sv;
    double t0 = cpu_ns();
    for (int i = 0; i < rounds; i++)
        statvfs("/", &sv);
    printf("%-24s %7.2f us/call\n", "statvfs /", (cpu_ns() - t0) / rounds / 1000);
    int n = 0, walks = rounds / 10 > 0 ? rounds / 10 : 1;
    t0 = cpu_ns();
    for (int i = 0; i < walks; i++)
        n = count_processes();
    double walk = (cpu_ns() - t0) / walks / 1000;
    printf("%-24s %7.2f us/walk  %d processes (%.3f us each)\n", "count of /proc", walk, n, n > 0 ? walk / n : 0);
    printf("vmstat's three files      %7.2f us/sample (stat, meminfo, vmstat)\n", vm);
    return 0;
}
