/* bench_files.c - what each file of a whole-machine sample costs to read on this machine: CPU per
 * read (a descriptor kept open and read again from offset 0, as the sampler reads them) of
 * /proc/stat, /proc/meminfo, /proc/diskstats, /proc/net/dev, /proc/pressure/{cpu,memory,io},
 * /proc/vmstat and /proc/loadavg; statvfs of /; counting every process (a walk of /proc's
 * entries, what system_processes costs); and, for comparison, what vmstat reads a sample
 * (/proc/stat, /proc/meminfo, /proc/vmstat). Prints figures; asserts nothing (issue 31).
 * Warm: each file read ROUNDS times back to back. Cold (--cold SECS): ROUNDS rounds, each after
 * a sleep of SECS as between two samples, reading every file once in a sampler's order, each
 * read timed alone (the clock's own cost, measured around nothing, taken off): what a sample at
 * an interval of SECS pays, its caches gone cold.
 *   bench-files [ROUNDS] [--cold SECS]   (default 2000 warm, 100 cold) */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static const char *const files[] = {"/proc/stat",        "/proc/meminfo",        "/proc/diskstats",
                                    "/proc/net/dev",     "/proc/pressure/cpu",   "/proc/pressure/memory",
                                    "/proc/pressure/io", "/proc/vmstat",         "/proc/loadavg",
                                    "/proc/self/mountinfo"};
#define NFILES (sizeof files / sizeof *files)
#define MAX_DISKS 8

/* The stat files of the block devices a sample lists (every one of /sys/block but loop and
 * ram: the sampler reads these between two readings of diskstats, 0.18); how many (at most
 * MAX_DISKS) into paths. */
static size_t disk_stat_files(char paths[MAX_DISKS][300])
{
    DIR *d = opendir("/sys/block");
    size_t n = 0;
    struct dirent *e;
    while (d && n < MAX_DISKS && (e = readdir(d)))
        if (e->d_name[0] != '.' && strncmp(e->d_name, "loop", 4) != 0 && strncmp(e->d_name, "ram", 3) != 0)
            snprintf(paths[n++], 300, "/sys/block/%s/stat", e->d_name);
    if (d)
        closedir(d);
    return n;
}

/* Cold: rounds of (sleep secs, every file once, the disks' stat files, statvfs), each read
 * timed alone. */
static void cold(int rounds, double secs)
{
    int fds[NFILES], dfd[MAX_DISKS];
    char dpath[MAX_DISKS][300];
    size_t nd = disk_stat_files(dpath);
    double sum[NFILES + 1] = {0}, lo[NFILES + 1], hi[NFILES + 1] = {0}, clock_cost = 0, dsum = 0;
    for (size_t i = 0; i < NFILES; i++)
        fds[i] = open(files[i], O_RDONLY | O_CLOEXEC);
    for (size_t i = 0; i < nd; i++)
        dfd[i] = open(dpath[i], O_RDONLY | O_CLOEXEC);
    for (size_t i = 0; i <= NFILES; i++)
        lo[i] = 1e18;
    for (int i = 0; i < 1000; i++) { /* the clock read around nothing */
        double t0 = cpu_ns();
        clock_cost += cpu_ns() - t0;
    }
    clock_cost /= 1000;
    struct timespec nap = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    struct statvfs sv;
    for (int r = 0; r < rounds; r++) {
        nanosleep(&nap, NULL);
        for (size_t i = 0; i <= NFILES; i++) {
            double t0 = cpu_ns();
            if (i < NFILES && fds[i] >= 0)
                (void)!pread(fds[i], buf, sizeof buf, 0);
            else if (i == NFILES)
                statvfs("/", &sv);
            double t = (cpu_ns() - t0 - clock_cost) / 1000;
            sum[i] += t;
            lo[i] = t < lo[i] ? t : lo[i];
            hi[i] = t > hi[i] ? t : hi[i];
        }
        for (size_t i = 0; i < nd; i++) {
            double t0 = cpu_ns();
            if (dfd[i] >= 0)
                (void)!pread(dfd[i], buf, sizeof buf, 0);
            dsum += (cpu_ns() - t0 - clock_cost) / 1000;
        }
    }
    printf("cold: %d rounds, %g s apart (the clock's own %.2f us taken off each read)\n", rounds, secs,
           clock_cost / 1000);
    double vm = 0, all = 0;
    for (size_t i = 0; i <= NFILES; i++) {
        if (i < NFILES && fds[i] < 0) {
            printf("%-24s not here\n", files[i]);
            continue;
        }
        double mean = sum[i] / rounds;
        printf("%-24s %7.2f us/read mean  (%.2f-%.2f)\n", i < NFILES ? files[i] : "statvfs /", mean, lo[i], hi[i]);
        if (i == 0 || i == 1 || i == 7)
            vm += mean;
        if (i != 7 && i != NFILES - 1) /* the tool reads no vmstat, mountinfo only when flagged */
            all += mean;
    }
    printf("the disks' stat files     %7.2f us/sample cold (%zu:", dsum / rounds, nd);
    for (size_t i = 0; i < nd; i++)
        printf(" %s", dpath[i] + 11);
    printf(")\n");
    printf("vmstat's three files      %7.2f us/sample cold (stat, meminfo, vmstat)\n", vm);
    printf("the tool's machine files  %7.2f us/sample cold (all above but vmstat and mountinfo)\n", all);
    printf("  with the disks' files   %7.2f us/sample cold (0.18: diskstats every 10 s)\n",
           all - sum[2] / rounds + dsum / rounds);
    for (size_t i = 0; i < NFILES; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    for (size_t i = 0; i < nd; i++)
        if (dfd[i] >= 0)
            close(dfd[i]);
}

int main(int argc, char **argv)
{
    double cold_secs = 0;
    int rounds = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cold") == 0 && i + 1 < argc)
            cold_secs = strtod(argv[++i], NULL);
        else
            rounds = (int)strtol(argv[i], NULL, 10);
    }
    if (rounds < 1)
        rounds = cold_secs > 0 ? 100 : 2000;
    if (cold_secs > 0) {
        cold(rounds, cold_secs);
        return 0;
    }
    printf("rounds: %d\n", rounds);
    double vm = 0;
    for (size_t i = 0; i < NFILES; i++) {
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
