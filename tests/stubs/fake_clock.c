/* fake_clock.c - an LD_PRELOAD shim for the fault tests: shifts the real-time clock
 * (clock_gettime of CLOCK_REALTIME and its coarse twin, gettimeofday, time) by an offset in
 * seconds read from the file FAKE_CLOCK_FILE names, at every call, so a test jumps the clock by
 * rewriting that file. The monotonic clocks are left alone. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The offset the file holds now ("3600", "-7200.5"); 0 when it is missing or unreadable. */
static double offset_now(void)
{
    const char *path = getenv("FAKE_CLOCK_FILE");
    if (!path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    return end == buf ? 0 : v;
}

/* The kernel's clock (no vDSO: the shim must not call back into itself). */
static int real_clock(clockid_t id, struct timespec *ts)
{
    return (int)syscall(SYS_clock_gettime, id, ts);
}

/* ts shifted by secs, nanoseconds normalised. */
static void shift(struct timespec *ts, double secs)
{
    long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + (long long)(secs * 1e9);
    ts->tv_sec = (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000L;
        ts->tv_sec--;
    }
}

/* clock_gettime(2), with the real-time clocks shifted. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    int rc = real_clock(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
        shift(ts, offset_now());
    return rc;
}

/* gettimeofday(2) from the shifted clock. */
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz;
    struct timespec ts;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

/* time(2) from the shifted clock. */
time_t time(time_t *out)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}
