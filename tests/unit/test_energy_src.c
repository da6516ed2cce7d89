/* test_energy_src.c - the machine's energy counters (source/energy.h) on the fixture trees of
 * tests/fixtures/energy copied to a temp dir: zones found and named, joules checked exactly
 * against the counters written between reads, wrap-around mid-run, each package once (the MMIO
 * duplicate), failed reads, root-only energy_uj as a non-root user (the sentence saying how to
 * grant it), the perf PMU's files parsed, and hwmon platform meters (GPUs' left out). */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <sys/wait.h>

#include "source/energy.h"
#include "source/perf_power.h"

#define PC "sys/devices/virtual/powercap/intel-rapl/"

typedef struct fx {
    char dir[64];
    rt_roots roots;
    rt_logger log;
    int warnings;
    char last_warning[2048];
    rt_energy_src *e;
    double j[16], w[16];
} fx;

static void on_log(void *user, rt_log_level level, const char *msg)
{
    fx *f = user;
    if (level == RT_LOG_WARN) {
        f->warnings++;
        snprintf(f->last_warning, sizeof f->last_warning, "%s", msg);
    }
}

/* Copies the fixture case's sys tree to a temp dir (f->dir/sys), without opening anything. */
static void copy_case(fx *f, const char *name)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rt-energy-XXXXXX");
    unit_tmpdir(f->dir);
    char rel[128], dst[128];
    snprintf(rel, sizeof rel, "energy/%s/sys", name);
    snprintf(dst, sizeof dst, "%s/sys", f->dir);
    unit_copy_fixture(rel, dst);
}

static void open_src(fx *f)
{
    char sys[128];
    snprintf(sys, sizeof sys, "%s/sys", f->dir);
    assert_int_equal(rt_roots_open(&f->roots, NULL, sys), RT_OK);
    f->log.fn = on_log;
    f->log.user = f;
    f->e = rt_energy_src_open(&f->roots, &f->log);
    assert_non_null(f->e);
    assert_true(rt_energy_src_count(f->e) <= 16);
}

static void open_case(fx *f, const char *name)
{
    copy_case(f, name);
    open_src(f);
}

static void done(fx *f)
{
    rt_energy_src_close(f->e);
    rt_roots_close(&f->roots);
    unit_rmtree(f->dir);
}

static void put_u64(fx *f, const char *rel, unsigned long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%llu\n", v);
    unit_put(f->dir, rel, t);
}

static size_t index_of(const fx *f, const char *name)
{
    for (size_t i = 0; i < rt_energy_src_count(f->e); i++)
        if (strcmp(rt_energy_src_counter(f->e, i)->name, name) == 0)
            return i;
    fail_msg("no counter %s", name);
    return 0;
}

static void server_zones(void **state)
{
    (void)state;
    fx f;
    open_case(&f, "intel-server");
    assert_int_equal(rt_energy_src_count(f.e), 4);
    static const char *const names[] = {"package-0", "dram-0", "package-1", "dram-1"};
    for (size_t i = 0; i < 4; i++) {
        const rt_energy_counter *c = rt_energy_src_counter(f.e, i);
        assert_string_equal(c->name, names[i]);
        assert_string_equal(c->kind, i % 2 ? "dram" : "package");
        assert_int_equal(c->package, (int)i / 2);
        assert_true(c->in_total);
        assert_string_equal(c->source, "intel-rapl");
        assert_string_equal(c->method, "measured");
    }
    assert_null(rt_energy_src_counter(f.e, 4));
    assert_null(rt_energy_src_missing(f.e));
    assert_int_equal(f.warnings, 0);
    done(&f);
}

static void server_joules_exact(void **state)
{
    (void)state;
    fx f;
    open_case(&f, "intel-server");
    rt_energy_src_read(f.e, f.j, f.w);
    for (size_t i = 0; i < 4; i++) {
        assert_true(f.j[i] == 0.0); /* nothing moved since open */
        assert_true(isnan(f.w[i]));
    }
    put_u64(&f, PC "intel-rapl:0/energy_uj", 84735917234ull + 123456789);
    put_u64(&f, PC "intel-rapl:0/intel-rapl:0:0/energy_uj", 19288340281ull + 7654321);
    put_u64(&f, PC "intel-rapl:1/energy_uj", 62001537812ull + 1);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[index_of(&f, "package-0")] == 123456789 / 1e6);
    assert_true(f.j[index_of(&f, "dram-0")] == 7654321 / 1e6);
    assert_true(f.j[index_of(&f, "package-1")] == 1 / 1e6);
    assert_true(f.j[index_of(&f, "dram-1")] == 0.0);
    put_u64(&f, PC "intel-rapl:0/energy_uj", 84735917234ull + 123456789 + 1000000000);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[index_of(&f, "package-0")] == 1123456789 / 1e6); /* since open */
    done(&f);
}

static void wrap_mid_run(void **state)
{
    (void)state;
    fx f;
    open_case(&f, "intel-server");
    const unsigned long long start = 84735917234ull, range = 262143328850ull;
    put_u64(&f, PC "intel-rapl:0/energy_uj", range - 1000);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[0] == (double)(range - 1000 - start) / 1e6);
    put_u64(&f, PC "intel-rapl:0/energy_uj", 5000); /* wrapped past max_energy_range_uj */
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[0] == (double)(range - start + 5000) / 1e6);
    put_u64(&f, PC "intel-rapl:0/energy_uj", 9000);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[0] == (double)(range - start + 9000) / 1e6);
    done(&f);
}

static void failed_read_then_right_total(void **state)
{
    (void)state;
    fx f;
    open_case(&f, "intel-server");
    const char *pkg1 = PC "intel-rapl:1/energy_uj";
    unit_put(f.dir, pkg1, "garbage\n");
    put_u64(&f, PC "intel-rapl:0/energy_uj", 84735917234ull + 10);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(isnan(f.j[2]));
    assert_true(f.j[0] == 10 / 1e6); /* one failing counter leaves the others */
    unit_put(f.dir, pkg1, "");       /* empty: a failed read too */
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(isnan(f.j[2]));
    unit_put(f.dir, pkg1, "62001537812 7\n"); /* trailing junk */
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(isnan(f.j[2]));
    put_u64(&f, pkg1, 62001537812ull + 2500000);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[2] == 2500000 / 1e6); /* the energy since the last good read counts */
    done(&f);
}

static void client_package_once(void **state)
{
    (void)state;
    fx f;
    open_case(&f, "intel-client");
    assert_int_equal(rt_energy_src_count(f.e), 4);
    static const char *const names[] = {"package-0", "core-0", "uncore-0", "psys"};
    static const char *const kinds[] = {"package", "core", "uncore", "psys"};
    for (size_t i = 0; i < 4; i++) {
        const rt_energy_counter *c = rt_energy_src_counter(f.e, i);
        assert_string_equal(c->name, names[i]);
        assert_string_equal(c->kind, kinds[i]);
        assert_int_equal(c->in_total, i == 0); /* core and uncore are inside the package; psys apart */
        assert_int_equal(c->package, i == 3 ? -1 : 0);
    }
    /* the MMIO duplicate moves: package-0 still counts the MSR zone's energy only */
    put_u64(&f, "sys/devices/virtual/powercap/intel-rapl-mmio/intel-rapl-mmio:0/energy_uj", 31244801002ull + 999999);
    put_u64(&f, PC "intel-rapl:0/energy_uj", 31244808119ull + 40);
    put_u64(&f, PC "intel-rapl:1/energy_uj", 58413190722ull + 70);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[0] == 40 / 1e6);
    assert_true(f.j[3] == 70 / 1e6);
    done(&f);
}

static void client_mmio_alone(void **state)
{
    (void)state;
    fx f;
    copy_case(&f, "intel-client");
    char cmd[256]; /* a machine whose package shows through MMIO only */
    snprintf(cmd, sizeof cmd, "rm -f %s/sys/class/powercap/intel-rapl:0*", f.dir);
    unit_system(cmd);
    open_src(&f);
    assert_int_equal(rt_energy_src_count(f.e), 2);
    assert_string_equal(rt_energy_src_counter(f.e, 0)->name, "psys");
    size_t i = index_of(&f, "package-0");
    assert_int_equal(i, 1);
    put_u64(&f, "sys/devices/virtual/powercap/intel-rapl-mmio/intel-rapl-mmio:0/energy_uj", 31244801002ull + 5);
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.j[i] == 5 / 1e6);
    done(&f);
}

static void amd_zones(void **state)
{
    (void)state;
    fx f;
    open_case(&f, "amd");
    assert_int_equal(rt_energy_src_count(f.e), 2);
    assert_string_equal(rt_energy_src_counter(f.e, 0)->name, "package-0");
    assert_string_equal(rt_energy_src_counter(f.e, 1)->name, "core-0");
    assert_string_equal(rt_energy_src_counter(f.e, 0)->source, "intel-rapl");
    assert_false(rt_energy_src_counter(f.e, 1)->in_total);
    done(&f);
}

static void amd_rapl_prefix(void **state)
{
    (void)state;
    fx f;
    copy_case(&f, "amd");
    char cmd[512];
    snprintf(
        cmd, sizeof cmd,
        "cd %s/sys && mv devices/virtual/powercap/intel-rapl devices/virtual/powercap/amd-rapl && "
        "mv devices/virtual/powercap/amd-rapl/intel-rapl:0 devices/virtual/powercap/amd-rapl/amd-rapl:0 && "
        "rm class/powercap/* && ln -s ../../devices/virtual/powercap/amd-rapl/amd-rapl:0 class/powercap/amd-rapl:0",
        f.dir);
    unit_system(cmd);
    open_src(&f);
    assert_int_equal(rt_energy_src_count(f.e), 1);
    assert_string_equal(rt_energy_src_counter(f.e, 0)->name, "package-0");
    assert_string_equal(rt_energy_src_counter(f.e, 0)->source, "amd-rapl");
    done(&f);
}

static void power_meter(void **state)
{
    (void)state;
    fx f;
    copy_case(&f, "power-meter");
    /* a newer driver's meter with its attributes in hwmonN/ and an energy counter, and a
     * GPU's hwmon that calls itself power_meter: left to the GPU set */
    unit_put(f.dir, "sys/devices/platform/meter.1/hwmon/hwmon3/name", "power_meter\n");
    unit_put(f.dir, "sys/devices/platform/meter.1/hwmon/hwmon3/energy1_input", "1000000\n");
    unit_put(f.dir, "sys/devices/pci0000:00/0000:00:03.1/0000:03:00.0/hwmon/hwmon4/name", "power_meter\n");
    unit_put(f.dir, "sys/devices/pci0000:00/0000:00:03.1/0000:03:00.0/hwmon/hwmon4/power1_average", "1\n");
    /* and one on a PCI display controller (class 0x0302xx, a 3D controller) with no DRM card */
    unit_put(f.dir, "sys/devices/pci0000:00/0000:00:04.0/class", "0x030200\n");
    unit_put(f.dir, "sys/devices/pci0000:00/0000:00:04.0/hwmon/hwmon5/name", "power_meter\n");
    unit_put(f.dir, "sys/devices/pci0000:00/0000:00:04.0/hwmon/hwmon5/power1_input", "1\n");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s/sys && ln -s ../../devices/platform/meter.1/hwmon/hwmon3 class/hwmon/hwmon3 && "
             "ln -s ../../devices/pci0000:00/0000:00:03.1/0000:03:00.0/hwmon/hwmon4 class/hwmon/hwmon4 && "
             "ln -s ../../../0000:03:00.0 devices/pci0000:00/0000:00:03.1/0000:03:00.0/hwmon/hwmon4/device && "
             "ln -s ../../devices/pci0000:00/0000:00:04.0/hwmon/hwmon5 class/hwmon/hwmon5 && "
             "ln -s ../../../0000:00:04.0 devices/pci0000:00/0000:00:04.0/hwmon/hwmon5/device",
             f.dir);
    unit_system(cmd);
    open_src(&f);
    assert_int_equal(rt_energy_src_count(f.e), 2);
    const rt_energy_counter *c = rt_energy_src_counter(f.e, 0);
    assert_string_equal(c->name, "platform-0");
    assert_string_equal(c->kind, "platform");
    assert_string_equal(c->source, "hwmon");
    assert_string_equal(c->method, "sampled");
    assert_int_equal(c->package, -1);
    assert_false(c->in_total);
    c = rt_energy_src_counter(f.e, 1);
    assert_string_equal(c->name, "platform-1");
    assert_string_equal(c->method, "measured");
    unit_put(f.dir, "sys/devices/platform/meter.1/hwmon/hwmon3/energy1_input", "3500000\n");
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(f.w[0] == 245.0);
    assert_true(isnan(f.j[0]));
    assert_true(f.j[1] == 2.5);
    assert_true(isnan(f.w[1]));
    unit_put(f.dir, "sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI000D:00/power1_average", "x\n");
    rt_energy_src_read(f.e, f.j, f.w);
    assert_true(isnan(f.w[0]));
    done(&f);
}

static void nothing_there(void **state)
{
    (void)state;
    fx f;
    copy_case(&f, "amd");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s/sys/class", f.dir);
    unit_system(cmd);
    open_src(&f);
    assert_int_equal(rt_energy_src_count(f.e), 0);
    assert_null(rt_energy_src_missing(f.e));
    rt_energy_src_read(f.e, f.j, f.w); /* nothing to read: no harm */
    done(&f);
    assert_int_equal(rt_energy_src_count(NULL), 0);
    assert_null(rt_energy_src_missing(NULL));
    rt_energy_src_close(NULL);
}

static void perf_files_parsed(void **state)
{
    (void)state;
    uint64_t cfg = 0;
    const char *t = "event=0x02\n";
    assert_true(rt_perf_event_config(t, strlen(t), &cfg));
    assert_int_equal(cfg, 2);
    t = "umask=0x1,event=0x05\n";
    assert_true(rt_perf_event_config(t, strlen(t), &cfg));
    assert_int_equal(cfg, 5);
    t = "event=\n";
    assert_false(rt_perf_event_config(t, strlen(t), &cfg));
    t = "event=0x0z";
    assert_false(rt_perf_event_config(t, strlen(t), &cfg));
    assert_false(rt_perf_event_config("", 0, &cfg));
    int cpus[4];
    t = "0,28\n";
    assert_int_equal(rt_perf_cpulist(t, strlen(t), cpus, 4), 2);
    assert_int_equal(cpus[0], 0);
    assert_int_equal(cpus[1], 28);
    t = "0-2,7";
    assert_int_equal(rt_perf_cpulist(t, strlen(t), cpus, 4), 4);
    assert_int_equal(cpus[2], 2);
    assert_int_equal(cpus[3], 7);
    t = "0-9";
    assert_int_equal(rt_perf_cpulist(t, strlen(t), cpus, 4), 10); /* only 4 stored */
    t = "3-1";
    assert_int_equal(rt_perf_cpulist(t, strlen(t), cpus, 4), -1);
    t = "0;1";
    assert_int_equal(rt_perf_cpulist(t, strlen(t), cpus, 4), -1);

    /* the server's PMU files: two packages' energy-pkg and energy-ram; the PMU itself is not in
     * this kernel (a type it does not have), so every open fails and nothing is left open */
    fx f;
    copy_case(&f, "intel-server");
    unit_put(f.dir, "sys/devices/power/type", "2000000000\n");
    char sys[128];
    snprintf(sys, sizeof sys, "%s/sys", f.dir);
    assert_int_equal(rt_roots_open(&f.roots, NULL, sys), RT_OK);
    rt_perf_power_ctr p[8];
    int err = 0;
    assert_int_equal(rt_perf_power_open(f.roots.sys_fd, p, 8, &err), 0);
    assert_true(err < 0);
    rt_roots_close(&f.roots);
    unit_rmtree(f.dir);

    copy_case(&f, "amd"); /* no PMU at all */
    snprintf(sys, sizeof sys, "%s/sys", f.dir);
    assert_int_equal(rt_roots_open(&f.roots, NULL, sys), RT_OK);
    assert_int_equal(rt_perf_power_open(f.roots.sys_fd, p, 8, &err), 0);
    assert_int_equal(err, -ENOENT);
    rt_roots_close(&f.roots);
    unit_rmtree(f.dir);
}

/* Chmods every energy_uj of the copy 0400 and runs the source as nobody in a child: nothing
 * readable, one warning, one sentence naming what and how. Returns the child's status. */
static int unreadable_as_nobody(const char *name, bool pmu)
{
    fx f;
    copy_case(&f, name);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "chmod 0755 %s && find %s/sys -name energy_uj -exec chmod 0400 {} +", f.dir, f.dir);
    unit_system(cmd);
    if (pmu) /* a PMU type this kernel lacks, so that the outcome is the same on any machine */
        unit_put(f.dir, "sys/devices/power/type", "2000000000\n");
    char paranoid[16] = "";
    FILE *pf = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (pf) {
        if (!fgets(paranoid, sizeof paranoid, pf))
            paranoid[0] = '\0';
        fclose(pf);
    }
    paranoid[strcspn(paranoid, "\n")] = '\0';
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(10);
        char sys[128];
        snprintf(sys, sizeof sys, "%s/sys", f.dir);
        if (rt_roots_open(&f.roots, NULL, sys) != RT_OK)
            _exit(12);
        f.log.fn = on_log;
        f.log.user = &f;
        f.e = rt_energy_src_open(&f.roots, &f.log);
        if (!f.e)
            _exit(13);
        const char *m = rt_energy_src_missing(f.e);
        char want[512];
        int bad = 0;
        if (rt_energy_src_count(f.e) != 0)
            bad |= 1 << 0;
        if (!m || f.warnings != 1 || strcmp(f.last_warning, m) != 0)
            _exit(11);
        snprintf(want, sizeof want, "chmod o+r %s/sys/class/powercap/intel-rapl:*/energy_uj", f.dir);
        if (!strstr(m, want))
            bad |= 1 << 1;
        if (!strstr(m, "SUBSYSTEM==\"powercap\", ACTION==\"add\", KERNEL==\"intel-rapl:*\", RUN+=\"/bin/chmod o+r "
                       "/sys%p/energy_uj\""))
            bad |= 1 << 2;
        if (!strstr(m, "CVE-2020-8694"))
            bad |= 1 << 3;
        if (!pmu || strtol(paranoid, NULL, 10) <= 0) {
            if (!strstr(m, "no perf power PMU") || strstr(m, "sysctl"))
                bad |= 1 << 4;
        } else {
            snprintf(want, sizeof want, "not permitted (kernel.perf_event_paranoid is %s", paranoid);
            if (!strstr(m, want) || !strstr(m, "sysctl kernel.perf_event_paranoid=0") || !strstr(m, "cap_perfmon"))
                bad |= 1 << 5;
        }
        if (strchr(m, '\n') || strstr(m, ". "))
            bad |= 1 << 6; /* one sentence */
        if (bad || getenv("SHOW"))
            fprintf(stderr, "missing: %s (failed checks 0x%x)\n", m, bad);
        rt_energy_src_read(f.e, f.j, f.w);
        rt_energy_src_close(f.e);
        rt_roots_close(&f.roots);
        _exit(bad ? 20 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    unit_rmtree(f.dir);
    return status;
}

static void unreadable_server_perf_not_permitted(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* becoming nobody takes root */
    int st = unreadable_as_nobody("intel-server", true);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void unreadable_amd_no_pmu(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    int st = unreadable_as_nobody("amd", false);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(server_zones),
        cmocka_unit_test(server_joules_exact),
        cmocka_unit_test(wrap_mid_run),
        cmocka_unit_test(failed_read_then_right_total),
        cmocka_unit_test(client_package_once),
        cmocka_unit_test(client_mmio_alone),
        cmocka_unit_test(amd_zones),
        cmocka_unit_test(amd_rapl_prefix),
        cmocka_unit_test(power_meter),
        cmocka_unit_test(nothing_there),
        cmocka_unit_test(perf_files_parsed),
        cmocka_unit_test(unreadable_server_perf_not_permitted),
        cmocka_unit_test(unreadable_amd_no_pmu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
