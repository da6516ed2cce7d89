/* test_gpu.c - the GPU front over its backends: NVIDIA (the fake NVML library) listed before
 * AMD/Intel (the fixture sys tree), no GPUs at all, and no cap on their number: 70 NVML GPUs
 * and a generated sys tree of 70 amdgpu cards, all listed and all counted in the tree's share;
 * NVML stuck mid-run while the AMD/Intel cards go on; the tree's VRAM peak from NVML's
 * accounting over two GPUs (the fake's acct_children: a child of the test), none without it;
 * every process's use (no tracked tree): NVML's lists whole, the DRM cards' own figures. */
#include "gpu_test.h"

#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Makes the fake NVML's config from the template path (mkstemp's XXXXXX, replaced) with text,
 * and points the fake at it. */
static void fake_nvml_config(char *path, const char *text)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_text(path, text);
    setenv("FAKE_NVML_CONFIG", path, 1);
}

static bool only_me(void *user, int64_t pid)
{
    (void)user;
    return pid == (int64_t)getpid();
}

static void cards_from_sysfs(void **state)
{
    (void)state;
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_gpus *g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    assert_non_null(g);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, 2);
    /* the cards' facts and readings are test_drm's; the front hands them on as they are */
    assert_string_equal(d[0].host_id, "0000:03:00.0");
    assert_true(d[0].utilization_pct == 87.0);
    assert_string_equal(d[1].name, "Intel GPU 0x56a0");
    const int64_t pids[] = {700, 701};
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_tree(g, only_me, NULL, pids, 2, 10.0, &u, &v, &used, 0, NULL);
    assert_true(u == 0 && used == 2);
    assert_int_equal(v, (1024 + 512 + 256) * 1024 * 1024ull);
    assert_true(rt_gpus_tree_vram_peak(g) == RT_NULL_U64); /* no NVML: no accounting */
    rt_gpus_close(g);
    rt_roots_close(&r);
}

/* rt_gpus_all: NVIDIA from every process in NVML's lists (not only the tree's), the DRM cards
 * from their own busy percent and VRAM in use (the Intel card says neither: left out). */
static void every_process(void **state)
{
    (void)state;
    char cfg[] = "/tmp/rt-gpu-cfg-XXXXXX";
    fake_nvml_config(cfg, "gpus 2 name=G util=1 mem_total=100 mem_used=1\npid 0 1 mem=4096 sm=30\n"
                          "pid 0 2 mem=1024 sm=10\n");
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_gpus *g = rt_gpus_open(&r, FAKE_NVML_PATH, NULL);
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_all(g, &u, &v, &used); /* before any reading: the DRM cards cannot say yet */
    assert_true(u == 40 && v == 5120 && used == 1);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, 4);
    assert_true(d[2].utilization_pct == 87.0 && d[2].vram_used_bytes != RT_NULL_U64);
    rt_gpus_all(g, &u, &v, &used);
    /* GPU 0's processes are all "every process": its own utilization is theirs, the per-process
     * samples not asked (only a GPU other processes share needs them); GPU 1 has no process,
     * the Intel card no figure */
    assert_true(u == 1 + 87);
    assert_true(v == 5120 + d[2].vram_used_bytes);
    assert_int_equal(used, 2);
    rt_gpus_close(g);
    rt_roots_close(&r);
    unsetenv("FAKE_NVML_CONFIG");
    unlink(cfg);
    /* no GPUs: nothing known */
    gpu_fixture_roots(&r, false);
    g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    rt_gpus_all(g, &u, &v, &used);
    assert_true(isnan(u) && v == RT_NULL_U64 && used == RT_NULL_I64);
    rt_gpus_close(g);
    rt_gpus_all(NULL, &u, &v, &used);
    assert_true(isnan(u));
    rt_roots_close(&r);
}

static void no_gpus(void **state)
{
    (void)state;
    rt_roots r;
    gpu_fixture_roots(&r, false);
    rt_gpus *g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    assert_non_null(g);
    size_t n = 9;
    assert_null(rt_gpus_read(g, &n));
    assert_int_equal(n, 0);
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_tree(g, only_me, NULL, NULL, 0, 1.0, &u, &v, &used, 0, NULL);
    assert_true(isnan(u) && v == RT_NULL_U64 && used == RT_NULL_I64);
    assert_true(rt_gpus_tree_vram_peak(g) == RT_NULL_U64);
    rt_gpus_close(g);
    rt_gpus_close(NULL);
    assert_true(rt_gpus_tree_vram_peak(NULL) == RT_NULL_U64);
    rt_roots_close(&r);
}

static void nvml_first_then_drm_beyond_64(void **state)
{
    (void)state;
    char cfg[] = "/tmp/rt-gpu-cfg-XXXXXX";
    char text[256];
    snprintf(text, sizeof text, "gpus 70 name=G util=1 mem_total=100 mem_used=1\npid 69 %d mem=4096 sm=30\n",
             (int)getpid());
    fake_nvml_config(cfg, text);
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_gpus *g = rt_gpus_open(&r, FAKE_NVML_PATH, NULL);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, 72);
    assert_string_equal(d[0].uuid, "GPU-fake-0");
    assert_string_equal(d[69].uuid, "GPU-fake-69");
    assert_string_equal(d[70].host_id, "0000:03:00.0");
    assert_string_equal(d[71].name, "Intel GPU 0x56a0");
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_tree(g, only_me, NULL, NULL, 0, 10.0, &u, &v, &used, 0, NULL);
    assert_true(u == 30); /* the 70th GPU counts */
    assert_int_equal(v, 4096);
    assert_int_equal(used, 1);
    rt_gpus_close(g);
    rt_roots_close(&r);
    unsetenv("FAKE_NVML_CONFIG");
    unlink(cfg);
}

enum { NCARDS = 70 };

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A sys tree of NCARDS amdgpu cards (PCI slots 0000:NN:00.0, NN the card number in hex), each
 * with a connector and a render node beside it, and a proc tree where pid 4242 has one DRM
 * client on the last card; under a new temporary directory written into dir. */
static void make_cards(char *dir)
{
    assert_non_null(mkdtemp(dir));
    char p[512], q[512];
    const char *dirs[] = {"sys", "sys/class", "sys/class/drm", "proc", "proc/4242", "proc/4242/fd", "proc/4242/fdinfo"};
    for (size_t i = 0; i < RT_ARRAY_LEN(dirs); i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(p, 0700), 0);
    }
    for (int i = NCARDS - 1; i >= 0; i--) {
        snprintf(p, sizeof p, "%s/sys/class/drm/card%d", dir, i);
        assert_int_equal(mkdir(p, 0700), 0);
        snprintf(p, sizeof p, "%s/sys/class/drm/card%d/device", dir, i);
        assert_int_equal(mkdir(p, 0700), 0);
        snprintf(p, sizeof p, "%s/sys/class/drm/card%d/device/driver", dir, i);
        assert_int_equal(symlink("../../../../bus/pci/drivers/amdgpu", p), 0);
        snprintf(p, sizeof p, "%s/sys/class/drm/card%d/device/uevent", dir, i);
        snprintf(q, sizeof q, "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:%02x:00.0\n", i);
        write_text(p, q);
        snprintf(p, sizeof p, "%s/sys/class/drm/card%d/device/gpu_busy_percent", dir, i);
        snprintf(q, sizeof q, "%d\n", i);
        write_text(p, q);
        snprintf(p, sizeof p, "%s/sys/class/drm/card%d-DP-1", dir, i);
        assert_int_equal(mkdir(p, 0700), 0);
        snprintf(p, sizeof p, "%s/sys/class/drm/renderD%d", dir, 128 + i);
        assert_int_equal(mkdir(p, 0700), 0);
    }
    snprintf(p, sizeof p, "%s/proc/4242/fd/3", dir);
    assert_int_equal(symlink("/dev/dri/renderD197", p), 0);
    snprintf(p, sizeof p, "%s/proc/4242/fd/4", dir);
    assert_int_equal(symlink("/dev/null", p), 0);
    snprintf(p, sizeof p, "%s/proc/4242/fdinfo/3", dir);
    snprintf(q, sizeof q, "drm-driver:\tamdgpu\ndrm-client-id:\t5\ndrm-pdev:\t0000:%02x:00.0\n"
                          "drm-engine-gfx:\t100 ns\ndrm-memory-vram:\t4 KiB\n", NCARDS - 1);
    write_text(p, q);
}

static void seventy_drm_cards(void **state)
{
    (void)state;
    char dir[] = "/tmp/rt-gpu-cards-XXXXXX", p[512], s[512];
    make_cards(dir);
    snprintf(p, sizeof p, "%s/proc", dir);
    snprintf(s, sizeof s, "%s/sys", dir);
    rt_roots r;
    assert_int_equal(rt_roots_open(&r, p, s), RT_OK);
    rt_gpus *g = rt_gpus_open(&r, "/nonexistent/libnvidia-ml.so.1", NULL);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, NCARDS); /* every card; no connector, no render node */
    for (int i = 0; i < NCARDS; i++) { /* in number order: card9 before card10 */
        char slot[32];
        snprintf(slot, sizeof slot, "0000:%02x:00.0", i);
        assert_string_equal(d[i].host_id, slot);
        assert_true(d[i].utilization_pct == i);
    }
    const int64_t pids[] = {4242};
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_tree(g, only_me, NULL, pids, 1, 5.0, &u, &v, &used, 0, NULL);
    assert_true(u == 0); /* first sight of the client: no interval yet */
    assert_int_equal(v, 4096); /* on the 70th card */
    assert_int_equal(used, 1);
    rt_gpus_close(g);
    rt_roots_close(&r);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* NVML stops answering: after its deadline its GPU keeps its facts with null figures, and the
 * AMD/Intel cards are read and counted as before. Last: NVML is not used again in the process. */
static void nvml_stuck_cards_go_on(void **state)
{
    (void)state;
    char cfg[] = "/tmp/rt-gpu-cfg-XXXXXX";
    fake_nvml_config(cfg, "gpu uuid=GPU-1 name=A util=40 mem_total=100 mem_used=1\n");
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_gpus *g = rt_gpus_open(&r, FAKE_NVML_PATH, NULL);
    size_t n;
    const rt_gpu *d = rt_gpus_read(g, &n);
    assert_int_equal(n, 3);
    assert_true(d[0].utilization_pct == 40 && d[1].utilization_pct == 87.0);
    write_text(cfg, "gpu uuid=GPU-1 name=A util=40 mem_total=100 mem_used=1\nhang util\n");
    const int64_t pids[] = {700, 701};
    for (int round = 0; round < 2; round++) { /* the first waits out the deadline, the second not */
        d = rt_gpus_read(g, &n);
        assert_int_equal(n, 3);
        assert_string_equal(d[0].uuid, "GPU-1");
        assert_true(isnan(d[0].utilization_pct) && d[0].vram_total_bytes == RT_NULL_U64);
        assert_string_equal(d[1].host_id, "0000:03:00.0");
        assert_true(d[1].utilization_pct == 87.0);
        double u;
        uint64_t v;
        int64_t used;
        rt_gpus_tree(g, only_me, NULL, pids, 2, 10.0 + round, &u, &v, &used, 0, NULL);
        assert_true(u == 0 && used == 2);
        assert_int_equal(v, (1024 + 512 + 256) * 1024 * 1024ull);
    }
    write_text(cfg, "gpu uuid=GPU-1 name=A\n"); /* lets the stuck call return, unseen */
    rt_gpus_close(g);
    rt_roots_close(&r);
    unsetenv("FAKE_NVML_CONFIG");
    unlink(cfg);
}

/* rt_pid_in_tree for one child (user: its pid). */
static bool is_child(void *user, int64_t pid)
{
    return pid == (int64_t)*(const pid_t *)user;
}

/* The tree's VRAM peak through the front: its processes on two NVIDIA GPUs with accounting on
 * (the fake's acct_children: this test's child), summed; the AMD/Intel cards are not in it. */
static void vram_peak_over_gpus(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    char cfg[] = "/tmp/rt-gpu-cfg-XXXXXX";
    fake_nvml_config(cfg, "gpus 3 name=G\naccounting 0 on\naccounting 1 on\nacct_children 0 mem=4096\n"
                          "acct_children 1 mem=1024 running=0 start=1\nacct 1 1 mem=7\n");
    rt_roots r;
    gpu_fixture_roots(&r, true);
    rt_gpus *g = rt_gpus_open(&r, FAKE_NVML_PATH, NULL);
    size_t n;
    rt_gpus_read(g, &n);
    assert_int_equal(n, 5);
    assert_true(rt_gpus_tree_vram_peak(g) == RT_NULL_U64); /* nothing asked yet */
    double u;
    uint64_t v;
    int64_t used;
    rt_gpus_tree(g, is_child, &child, NULL, 0, 10.0, &u, &v, &used, 0, NULL);
    /* GPU 1's record ended before tracking began: another process's, not counted */
    assert_int_equal(rt_gpus_tree_vram_peak(g), 4096);
    write_text(cfg, "gpus 3 name=G\naccounting 0 on\naccounting 1 on\nacct_children 0 mem=8192\n"
                    "acct_children 1 mem=1024\n");
    rt_gpus_tree(g, is_child, &child, NULL, 0, 11.0, &u, &v, &used, 0, NULL);
    assert_int_equal(rt_gpus_tree_vram_peak(g), 8192 + 1024);
    rt_gpus_close(g);
    rt_roots_close(&r);
    unsetenv("FAKE_NVML_CONFIG");
    unlink(cfg);
    kill(child, SIGKILL);
    assert_int_equal(waitpid(child, NULL, 0), child);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cards_from_sysfs),
        cmocka_unit_test(no_gpus),
        cmocka_unit_test(every_process),
        cmocka_unit_test(nvml_first_then_drm_beyond_64),
        cmocka_unit_test(seventy_drm_cards),
        cmocka_unit_test(vram_peak_over_gpus),
        cmocka_unit_test(nvml_stuck_cards_go_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
