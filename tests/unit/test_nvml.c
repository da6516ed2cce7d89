/* test_nvml.c - the NVML backend against the fake library (tests/stubs/fake_nvml.c): the
 * dlerror text kept for a missing library and for missing symbols, a failed start, every
 * field of a device, more than 64 GPUs and more than 64 processes of the tree, a lost GPU;
 * calls that fail mid-run (told once per GPU and kind), a failed count or handle, the strings
 * NVML gives; a list that says more than fits, samples that arrive between size and fetch, the
 * library left loaded in a forked child; and a driver that hangs mid-run or at the start: left
 * behind after the deadline (on a test clock, stepped once the fake hangs), never waited for
 * again, NVML not used again in the process.
 * Accounting: the tree's VRAM peak (one process, two on a GPU, two GPUs; a process that ends
 * keeps its peak and is read until it has ended; a reused pid; an ended record of a pid from
 * before tracking; pids out of the tree; the table's bound), and no peak without accounting
 * (mode off, NOT_SUPPORTED, the symbols missing, a failing call), a hang while reading it. */
#include "gpu_test.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source/nvml.h"

static char cfg_path[64];

/* Writes the fake's config (FAKE_NVML_CONFIG) for the next calls. */
static void config(const char *text)
{
    write_text(cfg_path, text);
}

static int setup(void **state)
{
    (void)state;
    snprintf(cfg_path, sizeof cfg_path, "/tmp/rt-nvml-XXXXXX");
    int fd = mkstemp(cfg_path);
    if (fd < 0)
        return -1;
    close(fd);
    return setenv("FAKE_NVML_CONFIG", cfg_path, 1);
}

static int teardown(void **state)
{
    (void)state;
    unlink(cfg_path);
    return 0;
}

/* The threads of this process, as its status says. */
static int threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f) && sscanf(line, "Threads: %d", &n) != 1)
        ;
    fclose(f);
    return n;
}

static void missing_library(void **state)
{
    (void)state;
    int before = threads();
    rt_nvml *nv = rt_nvml_open("/nonexistent/libnvidia-ml.so.1", NULL);
    assert_int_equal(threads(), before); /* no thread without NVML */
    assert_non_null(nv);
    assert_false(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    /* dlopen's own words, kept after the call */
    assert_non_null(strstr(rt_nvml_error(nv), "/nonexistent/libnvidia-ml.so.1"));
    assert_non_null(strstr(rt_nvml_error(nv), "No such file"));
    rt_nvml_close(nv);
    rt_nvml_close(NULL);
}

static void missing_entry_point(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_NOINIT_PATH, NULL);
    assert_false(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    /* the newest name is the one reported: neither nvmlInit_v2 nor nvmlInit is there */
    assert_non_null(strstr(rt_nvml_error(nv), "undefined symbol: nvmlInit_v2"));
    rt_nvml_close(nv);
}

static bool everyone(void *user, int64_t pid)
{
    (void)user;
    (void)pid;
    return true;
}

static void missing_optional_symbols(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=NVIDIA_A100 bus=00000000:3B:00.0 util=40 mem_total=1000 mem_used=250\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_MIN_PATH, NULL);
    assert_true(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 1);
    /* works without them, and says which one it missed last */
    assert_non_null(strstr(rt_nvml_error(nv), "undefined symbol: nvmlDevice"));
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_string_equal(g.name, "NVIDIA A100");
    assert_null(g.uuid);
    assert_null(g.host_id);
    assert_true(g.vram_total_bytes == 1000 && g.vram_used_pct == 25.0);
    assert_true(isnan(g.utilization_pct) && isnan(g.temperature_celsius) && isnan(g.power_watts));
    assert_int_equal(g.detail_count, 1);
    assert_string_equal(gpu_detail(&g, "driver"), "nvidia");
    uint64_t v = 7;
    bool v_ok = true, on = true;
    double u = 0;
    assert_true(rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
    assert_false(v_ok); /* no process lists */
    assert_true(isnan(u)); /* no per-process samples */
    rt_nvml_close(nv);
}

static void init_fails(void **state)
{
    (void)state;
    config("init_fail\ngpu uuid=GPU-1 name=A\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_false(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    assert_non_null(strstr(rt_nvml_error(nv), "nvmlInit failed (error 999)"));
    rt_nvml_close(nv);
}

static void every_field(void **state)
{
    (void)state;
    config("gpu uuid=GPU-11 name=NVIDIA_A100-SXM4-80GB bus=00000000:3B:00.0 util=40 mem_total=85899345920 "
           "mem_used=1073741824 temp=55 power_mw=210500 clock=1410 cores=6912 cc=8.0 serial=1324 "
           "power_limit_mw=400000\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_true(rt_nvml_ready(nv));
    assert_string_equal(rt_nvml_error(nv), "");
    assert_int_equal(rt_nvml_count(nv), 1);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_string_equal(g.uuid, "GPU-11");
    assert_string_equal(g.name, "NVIDIA A100-SXM4-80GB");
    assert_string_equal(g.host_id, "0000:3b:00.0");
    assert_string_equal(g.device_type, "GPU");
    assert_true(g.utilization_pct == 40 && g.vram_used_pct == 1.25 && g.temperature_celsius == 55);
    assert_true(g.power_watts == 210.5 && g.frequency_mhz == 1410 && g.core_count == 6912);
    const char *want[][2] = {{"driver", "nvidia"},         {"driver_version", "550.54.15"},
                             {"cuda_driver_version", "12.4"}, {"pci_device_id", "0x20b010de"},
                             {"pci_subsystem_id", "0x134f10de"}, {"compute_capability", "8.0"},
                             {"serial", "1324"},            {"power_limit_watts", "400.0"},
                             {"max_sm_clock_mhz", "1410"},  {"max_memory_clock_mhz", "1593"}};
    assert_int_equal(g.detail_count, RT_ARRAY_LEN(want));
    for (size_t i = 0; i < RT_ARRAY_LEN(want); i++) {
        assert_string_equal(g.detail[i].key, want[i][0]);
        assert_string_equal(g.detail[i].value, want[i][1]);
    }
    rt_nvml_close(nv);
}

static void seventy_gpus(void **state)
{
    (void)state;
    config("gpus 70 name=G util=5 mem_total=100 mem_used=1\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 70);
    for (size_t i = 0; i < 70; i++) {
        rt_gpu g;
        rt_nvml_read(nv, i, &g);
        char uuid[32], bus[32];
        snprintf(uuid, sizeof uuid, "GPU-fake-%zu", i);
        snprintf(bus, sizeof bus, "0000:%02zx:00.0", i);
        assert_string_equal(g.uuid, uuid);
        assert_string_equal(g.host_id, bus);
        assert_true(g.utilization_pct == 5);
    }
    rt_nvml_close(nv);
}

/* The tree: pids 1000..1089. */
static bool in_tree(void *user, int64_t pid)
{
    (void)user;
    return pid >= 1000 && pid < 1090;
}

/* A handle on the one GPU of the config text (log may be NULL). */
static rt_nvml *open_one(const char *text, const rt_logger *log)
{
    config(text);
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, log);
    assert_int_equal(rt_nvml_count(nv), 1);
    return nv;
}

static void more_than_64_processes(void **state)
{
    (void)state;
    static char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\npid 0 1 mem=999 sm=20\n");
    for (int i = 0; i < 90; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "pid 0 %d mem=1 sm=1\n", 1000 + i);
    assert_true(n < sizeof text);
    rt_nvml *nv = open_one(text, NULL);
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_true(rt_nvml_tree(nv, 0, in_tree, NULL, &v, &v_ok, &on, &u));
    assert_true(v_ok && on);
    /* each of the 90 once, though both lists name them all; pid 1 is not the tree's */
    assert_int_equal(v, 90);
    assert_true(u == 90);
    rt_nvml_close(nv);
}

static void lost_gpu(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A util=10\ngpu uuid=GPU-2 name=B util=20\n");
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 2);
    config("gpu uuid=GPU-1 name=A util=10\ngpu uuid=GPU-2 name=B util=20\nlost 1\n");
    rt_gpu g;
    rt_nvml_read(nv, 1, &g);
    assert_string_equal(g.uuid, "GPU-2"); /* still listed, with what is known */
    assert_true(isnan(g.utilization_pct) && g.vram_total_bytes == RT_NULL_U64);
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_false(rt_nvml_tree(nv, 1, everyone, NULL, &v, &v_ok, &on, &u));
    rt_nvml_read(nv, 0, &g);
    assert_true(g.utilization_pct == 10);
    rt_nvml_close(nv);
}

/* A library whose process lists say more entries than fit: only the buffer is read. */
static void lists_overcount(void **state)
{
    (void)state;
    rt_nvml *nv = open_one("gpu uuid=GPU-1 name=A\npid 0 4242 mem=7 sm=30\novercount 0\n", NULL);
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_true(rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
    assert_true(v_ok && on);
    assert_int_equal(v, 7); /* the padding is pid 0 without VRAM */
    rt_nvml_close(nv);
}


static char logged[8192];

static void keep_log(void *user, rt_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s\n", msg);
}

static const rt_logger keeper = {keep_log, NULL};

/* How many times s occurs in the log. */
static int logged_count(const char *s)
{
    int n = 0;
    for (const char *p = strstr(logged, s); p; p = strstr(p + 1, s))
        n++;
    return n;
}

static void calls_fail_mid_run(void **state)
{
    (void)state;
    const char *gpus = "gpu uuid=GPU-1 name=A util=10 temp=50 mem_total=100 mem_used=5 power_mw=1000 clock=900\n"
                       "gpu uuid=GPU-2 name=B util=20 temp=60 mem_total=100 mem_used=5 power_mw=1000 clock=900\n"
                       "pid 0 4242 mem=7 sm=30\n";
    config(gpus);
    logged[0] = '\0';
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, &keeper);
    assert_int_equal(rt_nvml_count(nv), 2);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_true(g.utilization_pct == 10 && g.temperature_celsius == 50);
    char text[1024];
    snprintf(text, sizeof text, "%sfail 0 999 util temp procs procutil\nfail 1 10 memory\n", gpus);
    config(text);
    for (int round = 0; round < 3; round++) {
        rt_nvml_read(nv, 0, &g);
        assert_true(isnan(g.utilization_pct) && isnan(g.temperature_celsius));
        assert_true(g.vram_used_bytes == 5 && g.power_watts == 1.0 && g.frequency_mhz == 900);
        uint64_t v = 1;
        bool v_ok = true, on = true;
        double u = 0;
        assert_true(rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
        assert_false(v_ok);
        assert_true(isnan(u));
        rt_nvml_read(nv, 1, &g);
        assert_true(g.utilization_pct == 20 && g.vram_total_bytes == RT_NULL_U64 && isnan(g.vram_used_pct));
    }
    /* each failing kind told once per GPU, with NVML's code; never a lost GPU */
    assert_int_equal(logged_count("GPU GPU-1: NVML could not read its utilization (error 999)"), 1);
    assert_int_equal(logged_count("GPU GPU-1: NVML could not read its temperature (error 999)"), 1);
    assert_int_equal(logged_count("GPU GPU-1: NVML could not read its process list (error 999)"), 1);
    assert_int_equal(logged_count("GPU GPU-1: NVML could not read its per-process utilization (error 999)"), 1);
    assert_int_equal(logged_count("GPU GPU-2: NVML could not read its memory (error 10)"), 1);
    assert_int_equal(logged_count("\n"), 5);
    /* and back when the driver answers again */
    config(gpus);
    rt_nvml_read(nv, 0, &g);
    assert_true(g.utilization_pct == 10 && g.temperature_celsius == 50);
    rt_nvml_close(nv);
}

/* Samples that arrive between the size asked and the fetch: asked again, nothing told. */
static void samples_arrive_meanwhile(void **state)
{
    (void)state;
    logged[0] = '\0';
    rt_nvml *nv = open_one("gpu uuid=GPU-1 name=A\npid 0 4242 mem=7 sm=30\nsamples_after 1 0 20\n", &keeper);
    uint64_t v;
    bool v_ok, on;
    double u;
    assert_true(rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
    assert_true(u == 30); /* the 20 late samples are pid 0 at 0 % */
    assert_string_equal(logged, "");
    rt_nvml_close(nv);
}

static void count_or_handle_fails(void **state)
{
    (void)state;
    config("count_fail 999\ngpu uuid=GPU-1 name=A\n");
    logged[0] = '\0';
    int before = threads();
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, &keeper);
    assert_true(rt_nvml_ready(nv));
    assert_int_equal(rt_nvml_count(nv), 0);
    assert_int_equal(threads(), before); /* no GPU to ask: no thread kept */
    assert_int_equal(logged_count("NVML could not count the GPUs (error 999)"), 1);
    rt_nvml_close(nv);
    config("gpu uuid=GPU-1 name=A util=1\ngpu uuid=GPU-2 name=B util=2\nfail 0 999 handle\n");
    logged[0] = '\0';
    nv = rt_nvml_open(FAKE_NVML_PATH, &keeper);
    assert_int_equal(rt_nvml_count(nv), 1);
    assert_int_equal(logged_count("NVML: no handle for GPU 0"), 1);
    assert_int_equal(threads(), before + 1); /* the worker */
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_string_equal(g.uuid, "GPU-2");
    assert_true(g.utilization_pct == 2);
    rt_nvml_close(nv);
}

static void bus_ids_and_strings(void **state)
{
    (void)state;
    char out[64];
    assert_true(rt_nvml_norm_bus_id("00000000:3B:00.0", 32, out, sizeof out));
    assert_string_equal(out, "0000:3b:00.0");
    assert_true(rt_nvml_norm_bus_id("0000:AF:1f.7", 16, out, sizeof out)); /* the legacy form */
    assert_string_equal(out, "0000:af:1f.7");
    /* the whole buffer used, no NUL in it */
    assert_true(rt_nvml_norm_bus_id("00000000:3B:00.0XYZ", 16, out, sizeof out));
    assert_string_equal(out, "0000:3b:00.0");
    const char *odd[] = {"", "3B:00.0", "-1:-1:-1.-1", "0x0:3b:00.0", " 0000:3b:00.0", "0000:3b:00.0 ", "000000000:3b:00.0",
                         "0000:3b:00.00", "0000:3b:00"};
    for (size_t i = 0; i < RT_ARRAY_LEN(odd); i++) {
        assert_false(rt_nvml_norm_bus_id(odd[i], strlen(odd[i]) + 1, out, sizeof out));
        assert_string_equal(out, odd[i]); /* kept as it is */
    }
    assert_false(rt_nvml_norm_bus_id("bus\x01id", 7, out, 4));
    assert_string_equal(out, "bus"); /* truncated to fit */
    assert_false(rt_nvml_norm_bus_id("0000:3b:00.0", 12, out, 8)); /* too long for out */
    assert_string_equal(out, "0000:3b");
    char raw[8] = {'N', 'V', '\t', 'A', '1', '0', '0', 'X'}; /* no NUL */
    assert_int_equal(rt_nvml_text(raw, sizeof raw, out, sizeof out), 8);
    assert_string_equal(out, "NV?A100X");
    assert_int_equal(rt_nvml_text(raw, sizeof raw, out, 3), 2);
    assert_string_equal(out, "NV");
    assert_int_equal(rt_nvml_text("ab\0cd", 5, out, sizeof out), 2);
    assert_int_equal(rt_nvml_text(raw, 0, out, 1), 0);
    assert_string_equal(out, "");
}

/* ---- accounting: the tree's VRAM peak ---------------------------------------------------------- */

/* A tree of the pids [lo, hi). */
typedef struct pid_range {
    int64_t lo, hi;
} pid_range;

static bool in_range(void *user, int64_t pid)
{
    const pid_range *r = user;
    return pid >= r->lo && pid < r->hi;
}

/* rt_nvml_tree on every GPU of nv with the tree [lo, hi); then the VRAM peak. */
static uint64_t peak_after(rt_nvml *nv, int64_t lo, int64_t hi)
{
    pid_range r = {lo, hi};
    for (size_t i = 0; i < rt_nvml_count(nv); i++) {
        uint64_t v;
        bool v_ok, on;
        double u;
        rt_nvml_tree(nv, i, in_range, &r, &v, &v_ok, &on, &u);
    }
    return rt_nvml_tree_vram_peak(nv);
}

/* A handle on the GPUs of the config text (log may be NULL), logged emptied. */
static rt_nvml *open_cfg(const char *text, const rt_logger *log)
{
    config(text);
    logged[0] = '\0';
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, log);
    assert_true(rt_nvml_count(nv) > 0);
    return nv;
}

static void acct_processes_summed(void **state)
{
    (void)state;
    /* one process of the tree; pid 5 is not the tree's */
    rt_nvml *nv = open_cfg("gpu uuid=GPU-1 name=A\naccounting 0 on\nacct 0 1000 mem=500\nacct 0 5 mem=9999\n", NULL);
    assert_true(rt_nvml_tree_vram_peak(nv) == RT_NULL_U64); /* nothing asked yet */
    assert_int_equal(peak_after(nv, 1000, 1090), 500);
    rt_nvml_close(nv);
    /* two on one GPU */
    nv = open_cfg("gpu uuid=GPU-1 name=A\naccounting 0 on\nacct 0 1000 mem=500\nacct 0 1001 mem=300\n", NULL);
    assert_int_equal(peak_after(nv, 1000, 1090), 800);
    rt_nvml_close(nv);
    /* two GPUs; the third's accounting is off, and the tree's process there not counted */
    nv = open_cfg("gpus 3 name=G\naccounting 0 on\naccounting 1 on\nacct 0 1000 mem=500\nacct 1 1001 mem=300\n"
                  "acct 1 1002 mem=20\nacct 2 1003 mem=7000\n",
                  NULL);
    assert_int_equal(peak_after(nv, 1000, 1090), 820);
    rt_nvml_close(nv);
    /* accounting on, nothing of the tree there: a known zero */
    nv = open_cfg("gpu uuid=GPU-1 name=A\naccounting 0 on\nacct 0 5 mem=9999\n", NULL);
    assert_int_equal(peak_after(nv, 1000, 1090), 0);
    rt_nvml_close(nv);
}

/* A process's peak is the largest seen; once it has left the tree it is read again until the
 * driver says it has ended, then kept as it was, also when the driver forgets it. */
static void acct_process_ends(void **state)
{
    (void)state;
    const char *gpu = "gpu uuid=GPU-1 name=A\naccounting 0 on\nacct 0 2000 mem=9\n";
    char text[512];
    rt_nvml *nv = open_cfg(gpu, NULL);
    const struct {
        const char *acct;
        int64_t tree_hi; /* the tree is [1000, tree_hi) */
        uint64_t want;
    } steps[] = {
        {"acct 0 1000 mem=500", 1001, 500},
        {"acct 0 1000 mem=600", 1001, 600},
        {"acct 0 1000 mem=400", 1001, 600},           /* a peak never drops */
        {"acct 0 1000 mem=700", 1000, 700},           /* out of the tree, still running: read */
        {"acct 0 1000 mem=800 running=0", 1000, 800}, /* its end, with its last peak */
        {"acct 0 1000 mem=900 running=0", 1000, 800}, /* ended: not read again */
        {"", 1000, 800},                              /* the driver forgot it: kept */
    };
    for (size_t k = 0; k < RT_ARRAY_LEN(steps); k++) {
        snprintf(text, sizeof text, "%s%s\n", gpu, steps[k].acct);
        config(text);
        assert_int_equal(peak_after(nv, 1000, steps[k].tree_hi), steps[k].want);
    }
    rt_nvml_close(nv);
}

/* The microseconds since the epoch now, plus secs. */
static unsigned long long epoch_us(int secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((unsigned long long)ts.tv_sec + (unsigned long long)secs) * 1000000ull +
           (unsigned long long)ts.tv_nsec / 1000;
}

/* A pid is one process per start time; an ended record of a pid the tree has now counts only
 * when that process started after tracking began (else it was another process's). */
static void acct_pid_reuse(void **state)
{
    (void)state;
    const char *gpu = "gpu uuid=GPU-1 name=A\naccounting 0 on\n";
    char text[512];
    rt_nvml *nv = open_cfg(gpu, NULL);
    snprintf(text, sizeof text, "%sacct 0 1000 mem=500 start=10\n", gpu);
    config(text);
    assert_int_equal(peak_after(nv, 1000, 1001), 500);
    snprintf(text, sizeof text, "%sacct 0 1000 mem=300 start=20\n", gpu); /* the pid again: another process */
    config(text);
    assert_int_equal(peak_after(nv, 1000, 1001), 800);
    rt_nvml_close(nv);

    snprintf(text, sizeof text, "%sacct 0 1000 mem=500 start=1 running=0\n", gpu); /* before tracking */
    nv = open_cfg(text, NULL);
    assert_int_equal(peak_after(nv, 1000, 1001), 0);
    snprintf(text, sizeof text, "%sacct 0 1000 mem=500 start=%llu running=0\n", gpu, epoch_us(1)); /* after */
    config(text);
    assert_int_equal(peak_after(nv, 1000, 1001), 500);
    rt_nvml_close(nv);
}

/* No accounting, no peak: the mode off, NOT_SUPPORTED, an old library without the entry points,
 * no library; none of them told. A failing call is told once, and there is no peak either. */
static void acct_unavailable(void **state)
{
    (void)state;
    const char *off[] = {
        "gpu uuid=GPU-1 name=A\nacct 0 1000 mem=500\n",
        "gpu uuid=GPU-1 name=A\naccounting 0 off\nacct 0 1000 mem=500\n",
        "gpu uuid=GPU-1 name=A\naccounting 0 on\nacct 0 1000 mem=500\nunsupported 0 acct\n",
    };
    for (size_t k = 0; k < RT_ARRAY_LEN(off); k++) {
        rt_nvml *nv = open_cfg(off[k], &keeper);
        assert_true(peak_after(nv, 1000, 1090) == RT_NULL_U64);
        assert_string_equal(logged, "");
        rt_nvml_close(nv);
    }
    config(off[2]);
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_MIN_PATH, NULL);
    assert_int_equal(rt_nvml_count(nv), 1);
    assert_true(peak_after(nv, 1000, 1090) == RT_NULL_U64);
    rt_nvml_close(nv);
    nv = rt_nvml_open("/nonexistent/libnvidia-ml.so.1", NULL);
    assert_true(rt_nvml_tree_vram_peak(nv) == RT_NULL_U64);
    rt_nvml_close(nv);
    assert_true(rt_nvml_tree_vram_peak(NULL) == RT_NULL_U64);

    nv = open_cfg("gpu uuid=GPU-1 name=A\naccounting 0 on\nacct 0 1000 mem=500\nfail 0 999 acct\n", &keeper);
    for (int round = 0; round < 2; round++)
        assert_true(peak_after(nv, 1000, 1090) == RT_NULL_U64);
    assert_int_equal(logged_count("GPU GPU-1: NVML could not read its accounting (error 999)"), 1);
    assert_int_equal(logged_count("\n"), 1);
    rt_nvml_close(nv);
}

/* Past RT_NVML_ACCT_MAX processes, the largest peaks are kept. */
static void acct_bounded(void **state)
{
    (void)state;
    enum { N = RT_NVML_ACCT_MAX + 10 };
    static char text[N * 40 + 64];
    size_t n = (size_t)snprintf(text, sizeof text, "gpu uuid=GPU-1 name=A\naccounting 0 on\n");
    for (int k = 1; k <= N; k++) /* pid 100000 + k, peak k */
        n += (size_t)snprintf(text + n, sizeof text - n, "acct 0 %d mem=%d\n", 100000 + k, k);
    assert_true(n < sizeof text);
    setenv("FAKE_NVML_LOAD_ONCE", "1", 1); /* a config this long, read once */
    rt_nvml *nv = open_cfg(text, NULL);
    uint64_t want = (uint64_t)N * (N + 1) / 2 - (uint64_t)(N - RT_NVML_ACCT_MAX) * (N - RT_NVML_ACCT_MAX + 1) / 2;
    assert_int_equal(peak_after(nv, 100000, 200000), want);
    assert_int_equal(peak_after(nv, 100000, 200000), want); /* again: the same */
    rt_nvml_close(nv);
    unsetenv("FAKE_NVML_LOAD_ONCE");
}

/* In a child process (a hang leaves NVML unused in the process for good): a failed check
 * ends it with status 1. */
#define CHILD_CHECK(c)                                                                                                \
    do {                                                                                                              \
        if (!(c)) {                                                                                                   \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);                                                   \
            exit(1);                                                                                                  \
        }                                                                                                             \
    } while (0)

/* Runs fn in a child process; the test fails unless it exits 0. */
static void in_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fn();
        exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* A test run by in_child: name_child is its body. */
#define CHILD_TEST(name)                                                                                              \
    static void name(void **state)                                                                                    \
    {                                                                                                                 \
        (void)state;                                                                                                  \
        in_child(name##_child);                                                                                       \
    }

/* A forked child holds a copy of the handle but not its worker: figures null at once, nothing
 * waited for or told, and the copy freed without calling NVML; the parent's handle goes on. */
static void forked_child(void **state)
{
    (void)state;
    config("gpu uuid=GPU-1 name=A util=10\n");
    logged[0] = '\0';
    rt_nvml *nv = rt_nvml_open(FAKE_NVML_PATH, &keeper);
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    assert_true(g.utilization_pct == 10);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        rt_nvml_read(nv, 0, &g);
        CHILD_CHECK(strcmp(g.uuid, "GPU-1") == 0 && isnan(g.utilization_pct));
        uint64_t v;
        bool v_ok, on;
        double u;
        CHILD_CHECK(!rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
        rt_nvml_close(nv);
        CHILD_CHECK(logged[0] == '\0');
        /* the library stays loaded: its destructors would touch the parent's driver files */
        CHILD_CHECK(dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD) != NULL);
        exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    rt_nvml_read(nv, 0, &g);
    assert_true(g.utilization_pct == 10);
    rt_nvml_close(nv);
    assert_string_equal(logged, "");
    assert_null(dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD)); /* the parent unloads it */
}

/* Writes the config without the hang and waits (at most 10 s) until the worker left behind is
 * back from the stuck call and has ended: its late writes then happen under the test (and
 * TSan's) eyes. */
static void let_go(const char *text)
{
    config(text);
    CHILD_CHECK(rt_nvml_wait_left_behind(10.0));
}

/* The hang tests' deadlines run on a test clock, which moves only when a call hangs: a thread
 * armed before the request that is to hang waits until the fake says a call hangs and the
 * caller waits on the clock, then steps it to the caller's deadline. No request that answers
 * can miss its deadline, however slow the machine, and none waits for time to pass. */
static rt_clock *hang_clock;
static int (*fake_wait_hang)(int secs);
static pthread_t stepper;
static bool stepped;

/* In a child: the test clock, and the fake's own wait for a hang. */
static rt_clock *hang_setup(void)
{
    void *fake = dlopen(FAKE_NVML_PATH, RTLD_NOW); /* the library then loads the same copy */
    CHILD_CHECK(fake != NULL);
    *(void **)&fake_wait_hang = dlsym(fake, "fake_nvml_wait_hang");
    CHILD_CHECK(fake_wait_hang != NULL);
    hang_clock = rt_clock_test_new(100.0);
    CHILD_CHECK(hang_clock != NULL);
    return hang_clock;
}

static void *step_to_deadline(void *arg)
{
    (void)arg;
    stepped = fake_wait_hang(30) && rt_clock_test_idle(hang_clock, 1, 30.0);
    if (stepped)
        rt_clock_test_set(hang_clock, rt_clock_test_next(hang_clock));
    return NULL;
}

static void arm(void)
{
    stepped = false;
    CHILD_CHECK(pthread_create(&stepper, NULL, step_to_deadline, NULL) == 0);
}

/* After the request that hung: the clock was stepped to its deadline. */
static void disarm(void)
{
    pthread_join(stepper, NULL);
    CHILD_CHECK(stepped);
}

static void hang_mid_run_child(void)
{
    const char *gpus = "gpu uuid=GPU-1 name=A util=10 mem_total=100 mem_used=5\npid 0 4242 mem=7 sm=30\n";
    config(gpus);
    logged[0] = '\0';
    rt_clock *c = hang_setup();
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, &keeper, 5.0, 0.3, c);
    CHILD_CHECK(rt_nvml_count(nv) == 1);
    rt_gpu g;
    uint64_t v;
    bool v_ok, on;
    double u;
    for (int i = 0; i < 2; i++) {
        rt_nvml_read(nv, 0, &g);
        CHILD_CHECK(g.utilization_pct == 10);
        CHILD_CHECK(rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u) && v == 7 && on);
    }
    char text[512];
    snprintf(text, sizeof text, "%shang procs\n", gpus);
    config(text);
    arm();
    rt_nvml_read(nv, 0, &g); /* the poll that gathers the lists hangs: past its deadline */
    disarm();
    CHILD_CHECK(strcmp(g.uuid, "GPU-1") == 0 && isnan(g.utilization_pct) && g.vram_used_bytes == RT_NULL_U64);
    CHILD_CHECK(!rt_nvml_tree(nv, 0, everyone, NULL, &v, &v_ok, &on, &u));
    for (int i = 0; i < 3; i++) { /* no more waiting, and no more words */
        rt_nvml_read(nv, 0, &g);
        CHILD_CHECK(strcmp(g.uuid, "GPU-1") == 0 && isnan(g.utilization_pct));
    }
    CHILD_CHECK(logged_count("NVML did not answer within 0.3 s; NVIDIA GPUs are not tracked from now on") == 1);
    CHILD_CHECK(logged_count("\n") == 1);
    CHILD_CHECK(strstr(rt_nvml_error(nv), "did not answer") != NULL);
    let_go(gpus); /* the driver comes back: the worker ends without touching the handle */
    rt_nvml_close(nv);
    /* NVML is not loaded again in this process */
    nv = rt_nvml_open_timed(FAKE_NVML_PATH, &keeper, 5.0, 0.3, c);
    CHILD_CHECK(!rt_nvml_ready(nv) && rt_nvml_count(nv) == 0);
    CHILD_CHECK(strstr(rt_nvml_error(nv), "earlier in this process") != NULL);
    rt_nvml_close(nv);
}

CHILD_TEST(hang_mid_run)

static void hang_at_start_child(void)
{
    config("gpu uuid=GPU-1 name=A util=10\nhang init\n");
    logged[0] = '\0';
    rt_clock *c = hang_setup();
    arm();
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, &keeper, 0.3, 0.3, c);
    disarm();
    CHILD_CHECK(!rt_nvml_ready(nv) && rt_nvml_count(nv) == 0);
    CHILD_CHECK(logged_count("NVML did not answer within 0.3 s; NVIDIA GPUs are not tracked from now on") == 1);
    rt_nvml_close(nv); /* does not wait for the stuck start */
    let_go("gpu uuid=GPU-1 name=A util=10\n"); /* the start returns late, and lists its GPU unseen */
}

CHILD_TEST(hang_at_start)

/* In a child: a handle on one GPU with a 0.3 s call deadline over the config text, its first
 * reading checked, the log emptied. */
static rt_nvml *child_handle(const char *text)
{
    config(text);
    logged[0] = '\0';
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, &keeper, 5.0, 0.3, hang_setup());
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    CHILD_CHECK(g.utilization_pct == 10);
    return nv;
}

/* The shutdown hangs: the handle is freed all the same, the library left loaded. */
static void hang_at_shutdown_child(void)
{
    rt_nvml *nv = child_handle("gpu uuid=GPU-1 name=A util=10\n");
    config("gpu uuid=GPU-1 name=A util=10\nhang shutdown\n");
    arm();
    rt_nvml_close(nv);
    disarm();
    CHILD_CHECK(logged_count("NVML did not answer within 0.3 s") == 1);
}

CHILD_TEST(hang_at_shutdown)

/* hang_after: the first calls answer, a later one hangs. */
static void hang_after_calls_child(void)
{
    rt_nvml *nv = child_handle("gpu uuid=GPU-1 name=A util=10\nhang_after 2 util\n"); /* the first */
    rt_gpu g;
    rt_nvml_read(nv, 0, &g);
    CHILD_CHECK(g.utilization_pct == 10); /* the second */
    arm();
    rt_nvml_read(nv, 0, &g);
    disarm();
    CHILD_CHECK(isnan(g.utilization_pct));
    CHILD_CHECK(logged_count("NVML did not answer") == 1);
    rt_nvml_close(nv);
}

CHILD_TEST(hang_after_calls)

/* The driver hangs while the stats are read: the peak seen so far stays. */
static void hang_in_accounting_child(void)
{
    /* the first look: the mode (read with the counters, at the first poll and every 30 s), the
     * pid list, then the stats; the second look: the pid list, then the stats, which hang */
    config("gpu uuid=GPU-1 name=A util=10\naccounting 0 on\nacct 0 1000 mem=500\nhang_after 4 acct\n");
    logged[0] = '\0';
    rt_nvml *nv = rt_nvml_open_timed(FAKE_NVML_PATH, &keeper, 5.0, 0.3, hang_setup());
    CHILD_CHECK(peak_after(nv, 1000, 1001) == 500);
    arm();
    CHILD_CHECK(peak_after(nv, 1000, 1001) == 500);
    disarm();
    CHILD_CHECK(logged_count("NVML did not answer within 0.3 s") == 1);
    CHILD_CHECK(peak_after(nv, 1000, 1001) == 500);
    let_go("gpu uuid=GPU-1 name=A\n");
    rt_nvml_close(nv);
}

CHILD_TEST(hang_in_accounting)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_library),  cmocka_unit_test(missing_entry_point),
        cmocka_unit_test(missing_optional_symbols), cmocka_unit_test(init_fails),
        cmocka_unit_test(every_field),      cmocka_unit_test(seventy_gpus),
        cmocka_unit_test(more_than_64_processes), cmocka_unit_test(lost_gpu),
        cmocka_unit_test(calls_fail_mid_run), cmocka_unit_test(count_or_handle_fails),
        cmocka_unit_test(lists_overcount), cmocka_unit_test(samples_arrive_meanwhile),
        cmocka_unit_test(bus_ids_and_strings), cmocka_unit_test(forked_child), cmocka_unit_test(hang_mid_run),
        cmocka_unit_test(hang_at_start), cmocka_unit_test(hang_at_shutdown),
        cmocka_unit_test(hang_after_calls), cmocka_unit_test(acct_processes_summed),
        cmocka_unit_test(acct_process_ends), cmocka_unit_test(acct_pid_reuse), cmocka_unit_test(acct_unavailable),
        cmocka_unit_test(acct_bounded), cmocka_unit_test(hang_in_accounting),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
