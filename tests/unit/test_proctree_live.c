/* test_proctree_live.c - the process tree on real forked processes: PSS through fork and
 * copy-on-write (against the kernel's own smaps_rollup), and a short job never caught by a
 * scan whose reaping brings its peak RSS and cancelled writes; children reaped between two
 * readings of one scan; a buffer that lived between two scans of a live process, seen through
 * its kernel-kept peak (VmHWM) while neither scan's RSS had it; a tree far larger than the
 * descriptors there are, every process still counted (read one file at a time); the files
 * kept open between scans within the tree's allowance; a vfork child's borrowed memory counted
 * once; the sharers' probe following a process outside the tree that maps and unmaps a memfd
 * the tree maps. */
#include "unit.h"
#include "unit_wait.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source/proctree.h"

#define COW_MIB 64

static void touch_pages(char *m, size_t n, char v)
{
    for (size_t i = 0; i < n; i += 4096)
        ((volatile char *)m)[i] = v;
}

static void read_byte(int fd)
{
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR) {
    }
}

static void write_byte(int fd, char c)
{
    while (write(fd, &c, 1) < 0 && errno == EINTR) {
    }
}

static pid_t family = -1; /* the process group forked by a test, killed by its teardown */

static int kill_family(void **state)
{
    (void)state;
    if (family > 0) {
        kill(-family, SIGKILL); /* a group when the test made one */
        kill(family, SIGKILL);
        waitpid(family, NULL, 0);
        family = -1;
    }
    return 0;
}

/* Opens the roots of the real /proc and a tree rooted at root. */
static rt_proctree *live_open(rt_roots *r, pid_t root)
{
    assert_int_equal(rt_roots_open(r, "/proc", "/nonexistent"), RT_OK);
    return rt_proctree_new(r, root, false, NULL, sysconf(_SC_CLK_TCK), 30.0);
}

/* The kernel's PSS of the tree's live processes, read now (the test's ground truth). */
static uint64_t pss_now_kib(rt_proctree *t)
{
    size_t n;
    const int64_t *live = rt_proctree_live(t, &n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%lld/smaps_rollup", (long long)live[i]);
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        ssize_t k = read(fd, buf, sizeof buf);
        close(fd);
        rt_rollup r;
        assert_true(k > 0);
        assert_int_equal(rt_smaps_rollup_parse(buf, (size_t)k, &r), 0);
        sum += r.pss_kib;
    }
    return sum;
}

static void assert_within_5pct(uint64_t measured, uint64_t truth)
{
    uint64_t d = measured > truth ? measured - truth : truth - measured;
    if (d * 20 > truth)
        fail_msg("PSS %llu KiB, the kernel says %llu KiB", (unsigned long long)measured, (unsigned long long)truth);
}

/* Reads /proc/pid/name into buf, NUL-terminated; returns its length, -1 when unreadable. */
static ssize_t read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_RDONLY);
    ssize_t k = fd >= 0 ? read(fd, buf, size - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[k > 0 ? k : 0] = '\0';
    return k;
}

/* The state letter of /proc/pid/stat ('S': asleep), 0 when it cannot be read. */
static char proc_state(pid_t pid)
{
    char buf[512];
    if (read_proc(pid, "stat", buf, sizeof buf) <= 0)
        return 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

/* The children of pid now (its main thread's: /proc/PID/task/PID/children, pids each followed by
 * a space) into buf, NUL-terminated; their text's length, or -1. */
static ssize_t children_text(pid_t pid, char *buf, size_t cap)
{
    char name[48];
    snprintf(name, sizeof name, "task/%d/children", (int)pid);
    return read_proc(pid, name, buf, cap);
}

/* Whether parent and its kids children are all asleep now (blocked in read() or pause()). */
static bool all_asleep(pid_t parent, int kids)
{
    char buf[256];
    if (children_text(parent, buf, sizeof buf) < 0 || proc_state(parent) != 'S')
        return false;
    int n = 0, asleep = 0;
    for (char *p = buf, *end; *p; p = end) {
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        n++;
        asleep += proc_state((pid_t)pid) == 'S';
    }
    return n == kids && asleep == kids;
}

/* Waits (10 s at most: a guard) until parent and its kids children are all asleep (their memory
 * settled). */
static void wait_asleep(pid_t parent, int kids)
{
    UNIT_WAIT_UNTIL(all_asleep(parent, kids), 10);
    if (!all_asleep(parent, kids))
        fail_msg("the processes did not fall asleep within 10 s");
}

/* In a forked child: leads a process group of its own, dies with the test, and holds len bytes
 * of private memory, touched. */
static char *holding(size_t len)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        _exit(1);
    touch_pages(m, len, 1);
    return m;
}

/* A parent holding 64 MiB forks 3 children that share it, then write their own copies while
 * it sleeps: neither step changes anyone's RSS, yet the tree's PSS goes 64 -> 64 -> 256 MiB. */
static void pss_follows_fork_and_cow(void **state)
{
    (void)state;
    int cmd[2], ack[2], go[2];
    assert_int_equal(pipe(cmd), 0);
    assert_int_equal(pipe(ack), 0);
    assert_int_equal(pipe(go), 0);
    size_t len = (size_t)COW_MIB << 20;
    pid_t parent = fork();
    assert_true(parent >= 0);
    if (parent == 0) {
        char *m = holding(len);
        write_byte(ack[1], 'r');
        read_byte(cmd[0]); /* fork */
        for (int i = 0; i < 3; i++)
            if (fork() == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                read_byte(go[0]);
                touch_pages(m, len, 2); /* each page a copy-on-write break */
                write_byte(ack[1], 'd');
                for (;;)
                    pause();
            }
        write_byte(ack[1], 'f');
        for (;;)
            pause();
    }
    family = parent;
    setpgid(parent, parent); /* whichever of the two runs first */
    read_byte(ack[0]);
    rt_roots r;
    rt_proctree *t = live_open(&r, parent);
    rt_tree_totals tt;
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.processes, 1);
    assert_within_5pct(tt.pss_kib, pss_now_kib(t));

    write_byte(cmd[1], 'f');
    read_byte(ack[0]);
    wait_asleep(parent, 3); /* the children settle into read() */
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.processes, 4);
    uint64_t truth = pss_now_kib(t);
    assert_true(truth >= (uint64_t)COW_MIB * 1024 && truth < (uint64_t)COW_MIB * 1024 * 3 / 2);
    assert_within_5pct(tt.pss_kib, truth); /* not 64 + 3 x 16 */

    for (int i = 0; i < 3; i++)
        write_byte(go[1], 'g');
    for (int i = 0; i < 3; i++)
        read_byte(ack[0]);
    wait_asleep(parent, 3); /* into pause() */
    for (double mono = 3.0; mono <= 5.0; mono += 1.0) {
        rt_proctree_scan(t, mono, &tt);
        truth = pss_now_kib(t);
        assert_true(truth >= (uint64_t)COW_MIB * 1024 * 4 * 95 / 100);
        assert_within_5pct(tt.pss_kib, truth); /* not stuck where the shared phase left it */
    }
    rt_proctree_free(t);
    rt_roots_close(&r);
    close(cmd[0]), close(cmd[1]), close(ack[0]), close(ack[1]), close(go[0]), close(go[1]);
}

/* The kernel's resident KiB of pid (VmRSS), 0 when it cannot be read. */
static uint64_t vmrss_kib(pid_t pid)
{
    char buf[4096];
    if (read_proc(pid, "status", buf, sizeof buf) <= 0)
        return 0;
    const char *v = strstr(buf, "VmRSS:");
    return v ? strtoull(v + 6, NULL, 10) : 0;
}

/* The kernel's PSS of pid alone (its smaps_rollup). */
static uint64_t pss_of(pid_t pid)
{
    char buf[4096];
    rt_rollup r;
    assert_true(read_proc(pid, "smaps_rollup", buf, sizeof buf) > 0);
    assert_int_equal(rt_smaps_rollup_parse(buf, strlen(buf), &r), 0);
    return r.pss_kib;
}

/* A parent holding 64 MiB vforks (as CPython's subprocess and glibc's posix_spawn do) and its
 * child waits before it exits: until then it runs in the parent's memory, and its stat shows
 * the parent's RSS. The tree counts that memory once (RSS and PSS), as the kernel holds it;
 * once the child is gone the parent alone holds it, as before. */
static void vfork_child_counted_once(void **state)
{
    (void)state;
    if (syscall(SYS_kcmp, getpid(), getpid(), KCMP_VM, 0L, 0L) != 0)
        skip(); /* no kcmp here (a container's seccomp, gVisor): the memory is counted twice */
    int ack[2], go[2];
    assert_int_equal(pipe(ack), 0);
    assert_int_equal(pipe(go), 0);
    size_t len = (size_t)COW_MIB << 20;
    pid_t parent = fork();
    assert_true(parent >= 0);
    if (parent == 0) {
        holding(len);
        pid_t c = vfork();
        if (c == 0) {
            /* in the parent's memory, the parent suspended: bare system calls only (no
             * sanitizer's interceptor, no exit handler) */
            char b = 'v';
            long rc = syscall(SYS_write, ack[1], &b, 1) == 1 && syscall(SYS_read, go[0], &b, 1) == 1 ? 0 : 2;
            syscall(SYS_exit, rc);
        }
        waitpid(c, NULL, 0);
        write_byte(ack[1], 'p');
        for (;;)
            pause();
    }
    family = parent;
    setpgid(parent, parent);
    read_byte(ack[0]); /* the child runs, the parent waits for it */
    rt_roots r;
    rt_proctree *t = live_open(&r, parent);
    rt_tree_totals tt;
    rt_proctree_scan(t, 1.0, &tt);
    assert_int_equal(tt.processes, 2);
    uint64_t held = vmrss_kib(parent);
    assert_true(held >= (uint64_t)COW_MIB * 1024);
    assert_true(tt.rss_kib >= held * 95 / 100 && tt.rss_kib <= held * 105 / 100); /* not twice */
    assert_within_5pct(tt.pss_kib, pss_of(parent)); /* the parent's, once */
    write_byte(go[1], 'g'); /* the child exits, the parent goes on */
    read_byte(ack[0]); /* reaped */
    rt_proctree_scan(t, 2.0, &tt);
    assert_int_equal(tt.processes, 1);
    held = vmrss_kib(parent);
    assert_true(tt.rss_kib >= held * 95 / 100 && tt.rss_kib <= held * 105 / 100);
    assert_within_5pct(tt.pss_kib, pss_of(parent));
    rt_proctree_free(t);
    rt_roots_close(&r);
    close(ack[0]), close(ack[1]), close(go[0]), close(go[1]);
}

#define JOB_MIB 64
#define JOB_WRITE_MIB 8

/* A short job, never caught by a scan while it ran: it writes 8 MiB to a file it deletes
 * before writeback, holds 64 MiB, and exits. Reaping it closes its books: the kernel's
 * ru_maxrss raises the peak, its zombie's I/O counters bring the cancelled writes. */
static void reaped_job_peak_and_cancelled(void **state)
{
    (void)state;
    char path[] = "rt-cancel-XXXXXX"; /* in the working directory: storage, unlike /tmp's tmpfs */
    int ffd = mkstemp(path);
    assert_true(ffd >= 0);
    struct statfs sf;
    bool on_storage = fstatfs(ffd, &sf) == 0 && sf.f_type != TMPFS_MAGIC;
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t job = fork();
    assert_true(job >= 0);
    if (job == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        read_byte(go[0]);
        static char block[1 << 16];
        memset(block, 'w', sizeof block);
        for (int i = 0; i < (JOB_WRITE_MIB << 20) / (int)sizeof block; i++)
            if (write(ffd, block, sizeof block) != (ssize_t)sizeof block)
                _exit(2);
        close(ffd);
        unlink(path); /* the last reference: its dirty pages are dropped, not written */
        size_t len = (size_t)JOB_MIB << 20;
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            _exit(1);
        touch_pages(m, len, 1);
        _exit(0);
    }
    family = job;
    close(ffd);
    rt_roots r;
    rt_proctree *t = live_open(&r, job);
    rt_tree_totals a;
    rt_proctree_scan(t, 1.0, &a);
    assert_int_equal(a.processes, 1);
    assert_true(a.rss_peak_kib < (uint64_t)JOB_MIB * 1024 / 2);
    write_byte(go[1], 'g');
    siginfo_t si;
    memset(&si, 0, sizeof si);
    assert_int_equal(waitid(P_PID, (id_t)job, &si, WEXITED | WNOWAIT), 0);
    int status = -1;
    assert_int_equal(rt_proctree_reap(t, job, &status), 0);
    family = -1;
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rt_tree_totals b;
    rt_proctree_scan(t, 2.0, &b);
    assert_int_equal(b.processes, 0);
    assert_true(b.rss_peak_kib >= (uint64_t)JOB_MIB * 1024);
    assert_true(b.io_ok);
    if (on_storage) {
        assert_true(b.write_bytes >= (uint64_t)JOB_WRITE_MIB << 20);
        assert_true(b.cancelled_write_bytes >= (uint64_t)JOB_WRITE_MIB << 20);
    }
    rt_proctree_free(t);
    rt_roots_close(&r);
    unlink(path);
    close(go[0]), close(go[1]);
}

/* Counts the tree's warnings (the logger of reaped_between_reads). */
static void count_warning(void *user, rt_log_level level, const char *msg)
{
    (void)msg;
    if (level == RT_LOG_WARN)
        *(int *)user += 1;
}

/* Children reaped the moment they exit, scanned without pause: one reaped between the reading
 * of its stat and of its I/O counters (the I/O file answers ESRCH then) is gone, not "not
 * readable": no warning, and the tree's I/O stays known (seen under the soak's churn). */
static void reaped_between_reads(void **state)
{
    (void)state;
    family = fork();
    assert_true(family >= 0);
    if (family == 0) {
        for (;;) {
            pid_t c = fork();
            if (c == 0)
                _exit(0);
            if (c > 0)
                while (waitpid(c, NULL, 0) < 0 && errno == EINTR) {
                }
        }
    }
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, "/proc", "/nonexistent"), RT_OK);
    int warnings = 0;
    rt_logger lg = {count_warning, &warnings};
    rt_proctree *t = rt_proctree_new(&r, family, false, &lg, sysconf(_SC_CLK_TCK), 30.0);
    rt_tree_totals tt;
    int io_known = 0, scans = 0;
    for (double until = rt_mono_secs() + 1.5; rt_mono_secs() < until; scans++) {
        rt_proctree_scan(t, rt_mono_secs(), &tt);
        io_known += tt.io_ok;
    }
    assert_int_equal(warnings, 0);
    assert_int_equal(io_known, scans);
    rt_proctree_free(t);
    rt_roots_close(&r);
}

/* A live process maps, touches and frees 64 MiB between two scans: neither scan's RSS has it,
 * its VmHWM does; a third scan after only a few faults keeps the peak. */
static void peak_between_scans(void **state)
{
    (void)state;
    int go[2], done[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(done), 0);
    pid_t c = fork();
    if (c == 0) {
        for (;;) {
            read_byte(go[0]);
            char *m = mmap(NULL, (size_t)COW_MIB << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                _exit(1);
            touch_pages(m, (size_t)COW_MIB << 20, 1);
            munmap(m, (size_t)COW_MIB << 20);
            write_byte(done[1], 'd');
        }
    }
    family = c;
    rt_roots r;
    rt_proctree *t = live_open(&r, c);
    rt_tree_totals a, b;
    assert_int_equal(rt_proctree_scan(t, 1.0, &a), 0);
    assert_true(a.rss_hwm_kib >= a.rss_kib);
    assert_true(a.rss_hwm_kib < (uint64_t)COW_MIB * 1024);
    write_byte(go[1], 'g');
    read_byte(done[0]);
    memset(&b, 0, sizeof b);
    assert_int_equal(rt_proctree_scan(t, 2.0, &b), 0);
    assert_true(b.rss_kib < (uint64_t)COW_MIB * 1024); /* the buffer is gone */
    assert_true(b.rss_hwm_kib >= (uint64_t)COW_MIB * 1024); /* the kernel's peak saw it */
    uint64_t peak = b.rss_hwm_kib;
    memset(&b, 0, sizeof b);
    assert_int_equal(rt_proctree_scan(t, 3.0, &b), 0);
    assert_true(b.rss_hwm_kib == peak); /* never decreasing */
    rt_proctree_free(t);
    rt_roots_close(&r);
    close(go[0]);
    close(go[1]);
    close(done[0]);
    close(done[1]);
}

/* The sharers' probe (as root it reads /proc/kpagecount; flags_only: as an ordinary user's, the
 * pages' exclusive flags): a process of the tree maps a memfd of COW_MIB and touches it; this
 * test, outside the tree, maps the same pages and unmaps them. Each time the probe's move is
 * about half the mapping (the tree's one mapper of each page went from all of it to half, and
 * back), and next to nothing while nobody maps or unmaps; a re-read (reread) makes the counts
 * read last the base. */
/* A memfd of size for the probe's tests, and a pipe for its mappers' word (ready). */
static int probe_memfd(size_t size, int ready[2])
{
    int mfd = (int)syscall(SYS_memfd_create, "probe", 0);
    assert_true(mfd >= 0);
    assert_int_equal(ftruncate(mfd, (off_t)size), 0);
    assert_int_equal(pipe(ready), 0);
    return mfd;
}

static void probe_outsider(bool flags_only)
{
    size_t size = (size_t)COW_MIB << 20;
    int ready[2];
    int mfd = probe_memfd(size, ready);
    pid_t c = fork();
    if (c == 0) {
        char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
        if (m == MAP_FAILED)
            _exit(1);
        touch_pages(m, size, 1);
        write_byte(ready[1], 'r');
        for (;;)
            pause();
    }
    family = c;
    read_byte(ready[0]);
    rt_roots r;
    rt_proctree *t = live_open(&r, c);
    if (flags_only)
        rt_proctree_probe_flags_only(t);
    rt_tree_totals a;
    assert_true(rt_proctree_probe_move(t) < 0); /* nothing chosen before a scan */
    assert_int_equal(rt_proctree_scan(t, 1.0, &a), 0);
    rt_proctree_probe_arm(t, false);
    double half = (double)COW_MIB * 1024 / 2;
    double noise = 0.05 * half; /* the libraries' pages move with the machine's other processes */
    assert_true(rt_proctree_probe_move(t) < noise);
    char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, mfd, 0);
    assert_true(m != MAP_FAILED);
    for (size_t i = 0; i < size; i += 4096)
        (void)((volatile char *)m)[i];
    double moved = rt_proctree_probe_move(t);
    print_message("probe%s: %.0f KiB moved by the outsider's map of %d MiB\n", flags_only ? " (flags)" : "", moved,
                  COW_MIB);
    assert_true(moved >= 0.8 * half && moved <= 1.2 * half);
    for (int turn = 1; turn < 4; turn++) { /* the other pages, in turns: still about half, until a re-read */
        double again = rt_proctree_probe_move(t);
        assert_true(again >= 0.8 * half && again <= 1.2 * half);
    }
    assert_int_equal(rt_proctree_scan(t, 2.0, &a), 0);
    rt_proctree_probe_arm(t, true);
    assert_true(rt_proctree_probe_move(t) < noise);
    munmap(m, size);
    moved = rt_proctree_probe_move(t);
    assert_true(moved >= 0.8 * half && moved <= 1.2 * half);
    rt_proctree_free(t);
    rt_roots_close(&r);
    close(mfd);
    close(ready[0]);
    close(ready[1]);
}

static void probe_follows_an_outsider(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    probe_outsider(false);
}

static void probe_flags_follow_an_outsider(void **state)
{
    (void)state;
    probe_outsider(true);
}

/* The probe's move as the sentinel's next read of its rollup makes it (that read comes when its
 * budget allows: rt_proctree_probe_move reads it then, and keeps its last figure meanwhile). */
static double sentinel_next_move(rt_proctree *t)
{
    uint64_t reads = rt_proctree_probe_flags_only(t);
    double moved = -1;
    UNIT_WAIT_UNTIL((moved = rt_proctree_probe_move(t), rt_proctree_probe_flags_only(t) > reads), UNIT_WAIT_SECS);
    assert_true(rt_proctree_probe_flags_only(t) > reads);
    return moved;
}

/* The sentinel (an ordinary user's probe): two processes of the tree map a memfd of COW_MIB and
 * touch it, so every page is shared (no exclusive flag to flip); this test maps the same pages
 * (the tree's share falls from all of it to two thirds) and unmaps them: each time the probe's
 * move is about a third of the mapping, read from the sentinel's rollup, and next to nothing
 * after a re-read made it the base. */
static void probe_sentinel_follows_an_outsider(void **state)
{
    (void)state;
    size_t size = (size_t)COW_MIB << 20;
    int ready[2];
    int mfd = probe_memfd(size, ready);
    pid_t c = fork();
    if (c == 0) {
        setpgid(0, 0);
        char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
        if (m == MAP_FAILED)
            _exit(1);
        touch_pages(m, size, 1);
        if (fork() == 0) /* the second mapper: a shared mapping's pages are faulted in anew */
            touch_pages(m, size, 2);
        write_byte(ready[1], 'r'); /* each mapper when its pages are in: the test waits for both */
        for (;;)
            pause();
    }
    family = c;
    read_byte(ready[0]);
    read_byte(ready[0]);
    rt_roots r;
    rt_proctree *t = live_open(&r, c);
    rt_proctree_probe_flags_only(t);
    rt_tree_totals a;
    assert_int_equal(rt_proctree_scan(t, 1.0, &a), 0);
    assert_int_equal(a.processes, 2);
    rt_proctree_probe_arm(t, false);
    double third = (double)COW_MIB * 1024 / 3;
    double noise = 0.05 * third;
    assert_true(rt_proctree_probe_move(t) < noise);
    char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, mfd, 0);
    assert_true(m != MAP_FAILED);
    for (size_t i = 0; i < size; i += 4096)
        (void)((volatile char *)m)[i];
    double moved = sentinel_next_move(t); /* its budget: a read of its rollup each 20 times its cost */
    print_message("sentinel: %.0f KiB moved by the outsider's map of %d MiB\n", moved, COW_MIB);
    assert_true(moved >= 0.8 * third && moved <= 1.2 * third);
    assert_int_equal(rt_proctree_scan(t, 2.0, &a), 0);
    rt_proctree_probe_arm(t, true);
    assert_true(sentinel_next_move(t) < noise);
    munmap(m, size);
    moved = sentinel_next_move(t);
    assert_true(moved >= 0.8 * third && moved <= 1.2 * third);
    assert_true(rt_proctree_probe_flags_only(t) >= 3);
    rt_proctree_free(t);
    rt_roots_close(&r);
    close(mfd);
    close(ready[0]);
    close(ready[1]);
}

/* The checks of short_of_descriptors, in a child whose limit can be lowered for good: a tree of
 * 1 + kids processes under a limit of 48 descriptors (soft and hard: none to raise) is counted
 * in full, nothing unread; with every descriptor taken, the scan counts the processes it cannot
 * read as unread, keeps their last readings (no total goes down) and says so once; with them
 * back, all is read again. Returns 0, or the number of the check that failed. */
static int check_short(pid_t root, int kids)
{
    struct rlimit rl = {48, 48};
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 1;
    rt_roots r;
    if (rt_roots_open(&r, "/proc", "/nonexistent") != RT_OK)
        return 2;
    int warnings = 0;
    rt_logger log = {count_warning, &warnings};
    rt_proctree *t = rt_proctree_new(&r, root, false, &log, sysconf(_SC_CLK_TCK), 30.0);
    rt_tree_totals a, b;
    for (int i = 0; i < 3; i++) {
        if (rt_proctree_scan(t, 1.0 + i, &a) != 0 || a.processes != 1 + kids || a.children != kids ||
            a.unread != 0 || !a.io_ok)
            return 10 + i;
    }
    int held[64], nheld = 0;
    while (nheld < 64 && (held[nheld] = dup(0)) >= 0)
        nheld++;
    if (rt_proctree_scan(t, 4.0, &b) != 0 || b.unread == 0 || b.utime_ns + b.stime_ns < a.utime_ns + a.stime_ns ||
        b.processes != 1 + kids)
        return 20;
    if (rt_proctree_scan(t, 5.0, &b) != 0 || b.unread == 0 || warnings != 1)
        return 21;
    while (nheld > 0)
        close(held[--nheld]);
    if (rt_proctree_scan(t, 6.0, &b) != 0 || b.processes != 1 + kids || b.unread != 0)
        return 30;
    rt_proctree_free(t);
    rt_roots_close(&r);
    return 0;
}

/* How many children pid has now. */
static int children_of(pid_t pid)
{
    char buf[8192];
    ssize_t k = children_text(pid, buf, sizeof buf);
    int n = 0;
    for (ssize_t j = 0; j < k; j++)
        n += buf[j] == ' ';
    return n;
}

/* Forks family: a parent of kids children, all asleep in pause() (dying with it), and waits
 * until all are forked (10 s at most). */
static void start_sleepers(int kids)
{
    family = fork();
    assert_true(family >= 0);
    if (family == 0) {
        for (int i = 0; i < kids; i++)
            if (fork() == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                    pause();
            }
        for (;;)
            pause();
    }
    int n;
    UNIT_WAIT_UNTIL((n = children_of(family)) >= kids, 10);
    assert_int_equal(n, kids);
}

/* 200 sleeping children under a limit of 48 descriptors (see check_short). */
static void short_of_descriptors(void **state)
{
    (void)state;
    enum { KIDS = 200 };
    start_sleepers(KIDS);
    pid_t checker = fork();
    assert_true(checker >= 0);
    if (checker == 0)
        _exit(check_short(family, KIDS));
    int st = 0;
    assert_int_equal(waitpid(checker, &st, 0), checker);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* This process's open descriptors. */
static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the listing's own */
}

/* The files the tree keeps open between scans stay within its allowance (each holds a page of
 * the kernel's memory): 300 sleeping processes keep up to 4 files each by the default
 * allowance (1,024), at most 100 once it is lowered to 100 (closed at once, not at the next
 * scan), and more again when it is raised; every process is counted at every scan, with the
 * same CPU, whatever it keeps. */
static void kept_files_bounded(void **state)
{
    (void)state;
    enum { KIDS = 300 };
    start_sleepers(KIDS);
    int base = open_fds();
    rt_roots r;
    rt_proctree *t = live_open(&r, family);
    int base_tree = open_fds(); /* the roots' and the tree's own */
    assert_true(base_tree >= base);
    rt_tree_totals a, b;
    assert_int_equal(rt_proctree_scan(t, 1.0, &a), 0);
    assert_int_equal(a.processes, 1 + KIDS);
    int kept = open_fds() - base_tree;
    print_message("kept files: %d for %d processes by default\n", kept, 1 + KIDS);
    assert_true(kept > 1 + KIDS && kept <= RT_PROCTREE_KEEP_MAX);
    rt_proctree_set_keep_max(t, 100);
    kept = open_fds() - base_tree;
    assert_true(kept <= 100);
    assert_int_equal(rt_proctree_scan(t, 2.0, &b), 0);
    assert_true(open_fds() - base_tree <= 100);
    assert_int_equal(b.processes, 1 + KIDS);
    assert_int_equal(b.unread, 0);
    assert_true(b.utime_ns + b.stime_ns >= a.utime_ns + a.stime_ns);
    rt_proctree_set_keep_max(t, 0);
    assert_int_equal(open_fds(), base_tree);
    assert_int_equal(rt_proctree_scan(t, 3.0, &b), 0);
    assert_int_equal(open_fds(), base_tree);
    assert_int_equal(b.processes, 1 + KIDS);
    assert_true(b.io_ok);
    rt_proctree_set_keep_max(t, RT_PROCTREE_KEEP_MAX);
    assert_int_equal(rt_proctree_scan(t, 40.0, &b), 0); /* past the PSS age: every file read */
    assert_true(open_fds() - base_tree > 100);
    assert_int_equal(b.processes, 1 + KIDS);
    rt_proctree_free(t);
    rt_roots_close(&r);
    assert_int_equal(open_fds(), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(pss_follows_fork_and_cow, kill_family),
        cmocka_unit_test_teardown(vfork_child_counted_once, kill_family),
        cmocka_unit_test_teardown(reaped_job_peak_and_cancelled, kill_family),
        cmocka_unit_test_teardown(reaped_between_reads, kill_family),
        cmocka_unit_test_teardown(peak_between_scans, kill_family),
        cmocka_unit_test_teardown(short_of_descriptors, kill_family),
        cmocka_unit_test_teardown(kept_files_bounded, kill_family),
        cmocka_unit_test_teardown(probe_follows_an_outsider, kill_family),
        cmocka_unit_test_teardown(probe_flags_follow_an_outsider, kill_family),
        cmocka_unit_test_teardown(probe_sentinel_follows_an_outsider, kill_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
