/* test_fswatch.c - the watch of memory filesystems between walks (fswatch.c), on /dev/shm (a
 * tmpfs): a file written and removed between two takes is seen at its size, a take without
 * writes since reads nothing, and what the thread cost (printed). Root only (filesystem marks ask
 * CAP_SYS_ADMIN): skipped otherwise, and where the kernel refuses the mark. */
#include "unit.h"
#include "unit_wait.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "source/fswatch.h"

static void written_and_removed_between_takes(void **state)
{
    (void)state;
    if (geteuid() != 0 || access("/dev/shm", W_OK) != 0)
        skip();
    rt_fswatch *w = rt_fswatch_new();
    if (!w || rt_fswatch_mark(w, "/dev/shm") < 0) {
        rt_fswatch_free(w);
        skip();
    }
    const char *paths[] = {"/dev/shm"};
    rt_fswatch_set_paths(w, paths, NULL, 1);
    (void)rt_fswatch_take_peak(w, 0);
    char name[64];
    snprintf(name, sizeof name, "/dev/shm/rt-fswatch-%d", (int)getpid());
    static char chunk[1 << 20];
    memset(chunk, 5, sizeof chunk);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    for (int i = 0; i < 64; i++)
        assert_int_equal(write(fd, chunk, sizeof chunk), (ssize_t)sizeof chunk);
    close(fd);
    /* the thread's reading after the last write (woken by it, RT_FSWATCH_GAP_MS later at most) */
    UNIT_WAIT_UNTIL(rt_fswatch_peak(w, 0) >= 64 * 1024, UNIT_WAIT_SECS);
    unlink(name);
    uint64_t peak = rt_fswatch_take_peak(w, 0);
    assert_true(peak >= 64 * 1024); /* /dev/shm's other files count too */
    uint64_t readings;
    double cpu;
    rt_fswatch_cost(w, &readings, &cpu);
    assert_true(readings >= 1);
    printf("fswatch: 64 MiB written: %llu readings, %.3f ms of the thread's CPU\n", (unsigned long long)readings,
           cpu * 1e3);
    rt_fswatch_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_and_removed_between_takes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
