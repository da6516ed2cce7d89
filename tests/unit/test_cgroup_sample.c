/* test_cgroup_sample.c - the sampler's cgroup and pressure parts (sample/cgroup.c, pressure.c)
 * and the authority rule of the tree part: a hybrid layout written into a temp copy of the
 * proctree fixture and replayed with moved counters (deltas, percentages, the exclusive rule,
 * no group for a process in the root group; without a tree, the group the tracker itself runs
 * in), and live on this machine: a job's own group
 * counts the CPU of children nobody reaped, which the walk alone cannot see. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "resource_tracker.h"
#include "sample/pressure.h"
#include "sample/replay.h"
#include "sample/sampler_internal.h"

static char dir[64], proc[128], sys[128];
static double tck;

/* Everything the fixture's counters say; write_all() puts it in the files. */
typedef struct state {
    unsigned long m_busy, m_idle;                        /* the machine's 4 cores together, in ticks */
    unsigned long ut101, st101;                          /* process 101's CPU, in ticks */
    unsigned long long wr101;                            /* process 101's write_bytes */
    unsigned long long usage_us, user_us, sys_us;        /* the group's cpu.stat (v2) */
    unsigned long long periods, throttled, throttled_ns; /* v1 cpu.stat of the group (holds the quota) */
    unsigned long long gsome_us, gfull_us;               /* the group's pressure totals (every resource) */
    unsigned long long msome_us, mfull_us;               /* the machine's */
    unsigned long long mem, mem_peak, rbytes, wbytes;
    unsigned long long oom_kills;
    unsigned long long cache; /* of mem, page cache on the file lists (memory.stat); ~0: none said */
    unsigned long long refault; /* memory.stat's total_workingset_refault_file, pages */
    const char *procs; /* the group's cgroup.procs */
    bool no_split;     /* cpu.stat without user_usec/system_usec */
} state;

static state st;

static int setup(void **unused)
{
    (void)unused;
    snprintf(dir, sizeof dir, "/tmp/rt-cgs-XXXXXX");
    unit_tmpdir(dir);
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(sys, sizeof sys, "%s/sys", dir);
    unit_copy_fixture("proctree/proc", proc);
    mkdir(sys, 0755);
    tck = (double)sysconf(_SC_CLK_TCK);
    memset(&st, 0, sizeof st);
    st.m_busy = 1000;
    st.m_idle = 4000;
    st.ut101 = 300;
    st.st101 = 30;
    st.usage_us = 10000000; /* 10 s before tracking began: not counted with a pid */
    st.user_us = 8000000;
    st.sys_us = 2000000;
    st.periods = 500;
    st.throttled = 100;
    st.throttled_ns = 3000000000ull;
    st.gsome_us = 7000000;
    st.gfull_us = 3000000;
    st.msome_us = 90000000;
    st.mfull_us = 40000000;
    st.mem = 256ull << 20;
    st.mem_peak = 512ull << 20;
    st.rbytes = 1ull << 30;
    st.wbytes = 0;
    st.oom_kills = 1;
    st.cache = 200ull << 20;
    st.procs = "100\n101\n102\n";
    return 0;
}

static int teardown(void **unused)
{
    (void)unused;
    unit_rmtree(dir);
    return 0;
}

/* Writes file rel under the fixture's v1 or v2 group "/job" of hierarchy h. */
static void put_group(const char *h, const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "fs/cgroup/%s/job/%s", h, rel);
    unit_put(sys, path, text);
}

static void put_pressure(const char *root, const char *prefix, unsigned long long some, unsigned long long full)
{
    static const char *const res[] = {"cpu", "memory", "io"};
    char text[256], rel[128];
    snprintf(text, sizeof text,
             "some avg10=1.50 avg60=1.00 avg300=0.50 total=%llu\nfull avg10=0.25 avg60=0.00 avg300=0.00 total=%llu\n",
             some, full);
    for (int i = 0; i < 3; i++) {
        snprintf(rel, sizeof rel, "%s%s%s", prefix, res[i], root == sys ? ".pressure" : "");
        if (root == sys)
            put_group("unified", rel, text);
        else
            unit_put(root, rel, text);
    }
}

/* Rewrites every file of the fixture in place from st. */
static void write_all(void)
{
    char t[512];
    unsigned long b = st.m_busy / 4, i = st.m_idle / 4;
    snprintf(t, sizeof t,
             "cpu  %lu 0 0 %lu 0 0 0 0\ncpu0 %lu 0 0 %lu 0 0 0 0\ncpu1 %lu 0 0 %lu 0 0 0 0\n"
             "cpu2 %lu 0 0 %lu 0 0 0 0\ncpu3 %lu 0 0 %lu 0 0 0 0\nprocs_running 2\n",
             st.m_busy, st.m_idle, b, i, b, i, b, i, b, i);
    unit_put(proc, "stat", t);
    snprintf(t, sizeof t,
             "101 (python3) S 100 101 101 0 -1 4194560 100 0 0 0 %lu %lu 0 0 20 0 2 0 5010 12345678 5000 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             st.ut101, st.st101);
    unit_put(proc, "101/stat", t);
    snprintf(t, sizeof t,
             "rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: 101000\nwrite_bytes: %llu\n"
             "cancelled_write_bytes: 0\n",
             st.wr101);
    unit_put(proc, "101/io", t);
    put_pressure(proc, "pressure/", st.msome_us, st.mfull_us);

    if (st.no_split)
        snprintf(t, sizeof t, "usage_usec %llu\n", st.usage_us);
    else
        snprintf(t, sizeof t, "usage_usec %llu\nuser_usec %llu\nsystem_usec %llu\n", st.usage_us, st.user_us,
                 st.sys_us);
    put_group("unified", "cpu.stat", t);
    static const char *const hiers[] = {"unified", "cpu", "memory", "blkio", "pids"};
    for (size_t k = 0; k < sizeof hiers / sizeof hiers[0]; k++)
        put_group(hiers[k], "cgroup.procs", st.procs);
    put_pressure(sys, "", st.gsome_us, st.gfull_us);
    put_group("cpu", "cpu.cfs_quota_us", "150000\n");
    put_group("cpu", "cpu.cfs_period_us", "100000\n");
    snprintf(t, sizeof t, "nr_periods %llu\nnr_throttled %llu\nthrottled_time %llu\n", st.periods, st.throttled,
             st.throttled_ns);
    put_group("cpu", "cpu.stat", t);
    snprintf(t, sizeof t, "%llu\n", st.mem);
    put_group("memory", "memory.usage_in_bytes", t);
    snprintf(t, sizeof t, "%llu\n", st.mem_peak);
    put_group("memory", "memory.max_usage_in_bytes", t);
    put_group("memory", "memory.limit_in_bytes", "2147483648\n");
    char mstat[192];
    if (st.cache == ~0ull) {
        put_group("memory", "memory.stat", ""); /* read through the kept descriptor: no figures */
    } else {
        snprintf(mstat, sizeof mstat,
                 "total_cache %llu\ntotal_shmem 0\ntotal_inactive_file %llu\ntotal_active_file %llu\n"
                 "total_workingset_refault_file %llu\n",
                 st.cache, st.cache / 2, st.cache - st.cache / 2, st.refault);
        put_group("memory", "memory.stat", mstat);
    }
    put_group("memory", "memory.failcnt", "0\n");
    snprintf(t, sizeof t, "oom_kill_disable 0\nunder_oom 0\noom_kill %llu\n", st.oom_kills);
    put_group("memory", "memory.oom_control", t);
    put_group("pids", "pids.current", "3\n");
    put_group("pids", "pids.max", "max\n");
    snprintf(t, sizeof t, "8:0 Read %llu\n8:0 Write %llu\n8:0 Sync 0\n8:0 Async 0\n8:0 Total %llu\nTotal %llu\n",
             st.rbytes, st.wbytes, st.rbytes + st.wbytes, st.rbytes + st.wbytes);
    put_group("blkio", "blkio.throttle.io_service_bytes_recursive", t);
}

/* The hybrid layout's mounts, and process 100 in group path in every hierarchy but memory,
 * where it is in mem_path. */
static void write_layout2(const char *path, const char *mem_path)
{
    unit_put(proc, "self/mountinfo",
             "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
             "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
             "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
             "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
             "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
             "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
             "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    char t[512];
    snprintf(t, sizeof t, "8:pids:%s\n7:blkio:%s\n4:memory:%s\n2:cpuacct:%s\n1:cpu:%s\n0::%s\n", path, path, mem_path,
             path, path, path);
    unit_put(proc, "100/cgroup", t);
}

/* The tracker itself ("self" of the replayed proc root) in group path in every hierarchy of
 * the hybrid layout but memory, where it is in mem_path. */
static void write_self(const char *path, const char *mem_path)
{
    char t[512];
    snprintf(t, sizeof t, "9:name=systemd:/\n8:pids:%s\n7:blkio:%s\n4:memory:%s\n2:cpuacct:%s\n1:cpu:%s\n0::%s\n", path,
             path, mem_path, path, path, path);
    unit_put(proc, "self/cgroup", t);
}

/* The hybrid layout's mounts, and process 100 in group path everywhere. */
static void write_layout(const char *path)
{
    write_layout2(path, path);
}

/* A sampler replaying proc and sys_root, tracking the tree of pid (cgroup_off as given). */
static rt_sampler *replay_sampler(const char *sys_root, int64_t pid, int cgroup_off)
{
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = sys_root;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    o.pid = pid;
    o.cgroup_off = cgroup_off;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    return s;
}

/* A sampler on the fixture as st has it, tracking the tree of pid 100. */
static rt_sampler *open_sampler(int cgroup_off)
{
    write_all();
    return replay_sampler(sys, 100, cgroup_off);
}

/* One second later, after the counters moved as the caller set them in st. */
static const rt_sample *next(rt_sampler *s, double *mono)
{
    write_all();
    *mono += 1.0;
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, *mono, 1.7e9 + *mono, &smp), RT_OK);
    return smp;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-6)

/* The counters of one second in which the machine had 3 of 4 cores busy and the group used
 * 2 s of CPU (1.5 user), was throttled in 4 of 10 periods and stalled a quarter of it. */
static void one_busy_second(void)
{
    unsigned long t = (unsigned long)tck;
    st.m_busy += 3 * t;
    st.m_idle += t;
    st.usage_us += 2000000;
    st.user_us += 1500000;
    st.sys_us += 500000;
    st.periods += 10;
    st.throttled += 4;
    st.throttled_ns += 200000000;
    st.gsome_us += 250000;
    st.msome_us += 500000;
}

/* The memory the group could not give back: at each reading the charge less the page cache;
 * after a rise of the peak charge, that peak less the page cache now; never decreasing. With
 * a pid the group's peak from before tracking began is not the job's. */
static void unreclaimable_peak(void **unused)
{
    (void)unused;
    write_layout("/job");
    st.mem = 256ull << 20; /* of which 200 MiB cache: 56 held */
    st.mem_peak = 512ull << 20; /* from before tracking: not counted */
    rt_sampler *s = open_sampler(0);
    double mono = 1e9;
    const rt_sample *smp = next(s, &mono);
    const rt_cgroup *g = smp->process->cgroup;
    NEAR(g->memory_reclaimable_mib, 200.0);
    NEAR(g->memory_unreclaimable_peak_mib, 56.0);
    /* more held, the peak charge where it was */
    st.mem = 300ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 100.0);
    NEAR(smp->process->cgroup->memory_unreclaimable_unsure_mib, 0.0);
    /* a spike between the readings: the peak charge rose to 900 MiB, the charge is back at 300
     * MiB with 250 of cache, 50 more than at the last reading: that 50 may have come before
     * the peak or after it, and is taken as not there at the peak (the safe side): 700 held,
     * 50 of it unsure (650 if the cache had come first) */
    st.mem_peak = 900ull << 20;
    st.cache = 250ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 700.0);
    NEAR(smp->process->cgroup->memory_unreclaimable_unsure_mib, 50.0);
    NEAR(smp->process->cgroup->memory_reclaimable_mib, 250.0);
    /* a file streamed through the cache: the peak charge rises with the charge (the peak is
     * now: exact), all cache */
    st.mem = st.mem_peak = 2000ull << 20;
    st.cache = 1900ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 700.0);
    NEAR(smp->process->cgroup->memory_unreclaimable_unsure_mib, 50.0); /* still that peak's */
    /* shared memory (tmpfs) is no cache: it counts, exactly */
    st.mem = st.mem_peak = 2800ull << 20;
    st.cache = 1900ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 900.0);
    NEAR(smp->process->cgroup->memory_unreclaimable_unsure_mib, 0.0);
    /* the cache fell while the peak rose above the charge: the cache now is what the peak is
     * taken with (the figure only grows), and nothing is unsure */
    st.mem = 1000ull << 20;
    st.mem_peak = 3100ull << 20;
    st.cache = 900ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 2200.0);
    NEAR(smp->process->cgroup->memory_unreclaimable_unsure_mib, 0.0);
    /* a pid's group is not the job's own: nothing to watch between samples */
    assert_true(isinf(rt_sampler_watch(s, 1)));
    /* cache dropped and a lower charge: never decreasing */
    st.mem = 100ull << 20;
    st.cache = 10ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 2200.0);
    /* memory.stat changed, the charge and its peak did not (to the byte): what it said is kept
     * for up to RT_CG_MEMSTAT_MAX_AGE_SECS (a charge that holds is memory that neither grew nor
     * shrank), then read again */
    st.cache = 20ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_reclaimable_mib, 10.0);
    mono += RT_CG_MEMSTAT_MAX_AGE_SECS - 1.0; /* next() adds the last second */
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_reclaimable_mib, 20.0);
    /* and at once when the charge moves */
    st.cache = 30ull << 20;
    st.mem += 4096;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_reclaimable_mib, 30.0);
    NEAR(smp->process->cgroup->memory_refault_mib, 0.0); /* none since tracking began */
    /* a group at its limit reading its files back holds its charge to the byte: its storage
     * reads moved, so memory.stat is read at once, with the refaults (since tracking began) */
    const double page_mib = (double)sysconf(_SC_PAGESIZE) / 1048576.0;
    st.cache = 40ull << 20;
    st.refault = 2560;
    st.rbytes += 10ull << 20;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_reclaimable_mib, 40.0);
    NEAR(smp->process->cgroup->memory_refault_mib, 2560 * page_mib);
    /* and so when its memory stalls moved, the reads not */
    st.cache = 50ull << 20;
    st.refault = 5120;
    st.gsome_us += 1000;
    smp = next(s, &mono);
    NEAR(smp->process->cgroup->memory_reclaimable_mib, 50.0);
    NEAR(smp->process->cgroup->memory_refault_mib, 5120 * page_mib);
    /* memory.stat without its figures: nothing reclaimable known, the peak so far stays */
    st.cache = ~0ull;
    st.mem += 4096;
    smp = next(s, &mono);
    assert_true(isnan(smp->process->cgroup->memory_reclaimable_mib));
    NEAR(smp->process->cgroup->memory_unreclaimable_peak_mib, 2200.0);
    /* the record takes it as the job's only while the group holds nothing but the tree */
    rt_record rec;
    rt_record_from_sample(smp, &rec);
    NEAR(rec.process_unreclaimable_peak_mib, 2200.0);
    NEAR(rec.process_cgroup_exclusive, 1.0);
    st.procs = "100\n101\n999\n";
    smp = next(s, &mono);
    rt_record_from_sample(smp, &rec);
    assert_true(isnan(rec.process_unreclaimable_peak_mib));
    NEAR(rec.process_cgroup_exclusive, 0.0);
    rt_sampler_free(s);
}

/* The JSON line of smp in buf (of 16 KiB), asserted to fit. */
static const char *json_of(const rt_sample *smp, char *buf)
{
    size_t n = rt_format_sample(RT_FORMAT_JSON, smp, NULL, buf, 1 << 14);
    assert_true(n < 1 << 14);
    return buf;
}

static void moved_counters(void **unused)
{
    (void)unused;
    write_layout("/job");
    rt_sampler *s = open_sampler(0);
    double mono = 1e9;
    const rt_sample *smp = next(s, &mono); /* the first interval, from a far clock: nothing moved */
    assert_non_null(smp->process->cgroup);
    unsigned long t = (unsigned long)tck;

    /* 1 s: the machine 3 of 4 cores busy; the group 2 s of CPU (1.5 user), the walk 0.3 s */
    one_busy_second();
    st.ut101 += 3 * t / 10;
    st.gfull_us += 100000;
    st.rbytes += 1 << 20;
    st.wr101 += 4096; /* a buffered write: blkio (v1) never sees it */
    st.mem_peak = 768ull << 20;
    smp = next(s, &mono);
    const rt_process *p = smp->process;
    const rt_cgroup *g = p->cgroup;
    assert_non_null(g);
    assert_string_equal(g->path, "/job");
    assert_string_equal(g->version, "hybrid");
    assert_false(g->own);
    assert_true(g->exclusive);
    NEAR(g->cpu_secs_total, 2.0); /* since tracking began: the 10 s before are not counted */
    NEAR(g->memory_mib, 256.0);
    NEAR(g->memory_peak_mib, 768.0);
    NEAR(p->memory_peak_mib, 768.0);
    NEAR(g->cpu_quota_cores, 1.5);
    NEAR(g->cpu_period_secs, 0.1);
    NEAR(g->memory_limit_mib, 2048.0);
    assert_true(isnan(g->memory_high_mib));
    assert_true(g->pids_limit == RT_NULL_I64);
    assert_int_equal(g->pids, 3);
    assert_int_equal(g->pids_peak, 3); /* no pids.peak: the most sampled */
    assert_int_equal(g->cpu_periods, 10);
    assert_int_equal(g->cpu_throttled_periods, 4);
    NEAR(g->cpu_throttled_secs, 0.2);
    NEAR(g->cpu_throttled_pct, 40.0);
    assert_int_equal(g->oom_kills, 0);
    assert_int_equal(g->read_bytes_total, 1 << 20);
    assert_int_equal(g->write_bytes_total, 0);
    NEAR(g->pressure.cpu.some_pct, 25.0);
    NEAR(g->pressure.io.full_pct, 10.0);
    NEAR(g->pressure.memory.some_avg10, 1.5);
    NEAR(smp->pressure->cpu.some_pct, 50.0);
    NEAR(smp->pressure->io.full_pct, 0.0);
    assert_int_equal(smp->pressure->memory.some_total_usec, st.msome_us);
    /* the authority: the tree's CPU is the group's, split as the group splits it */
    NEAR(p->cpu_secs_total, 2.0);
    NEAR(p->utime_secs, 1.5);
    NEAR(p->stime_secs, 0.5);
    NEAR(p->cores_used, 2.0);
    /* I/O: the larger of the group's and the walk's, per counter */
    assert_int_equal(p->read_bytes_total, 1 << 20);
    assert_int_equal(p->write_bytes_total, 4096);
    assert_int_equal(p->write_bytes, 4096);

    /* 1 s: a process not in the tree joins the group: not exclusive, the walk's own figures */
    st.procs = "100\n101\n999\n";
    st.m_busy += 3 * t;
    st.m_idle += t;
    st.ut101 += t / 2;
    st.usage_us += 5000000;
    st.user_us += 5000000;
    smp = next(s, &mono);
    p = smp->process;
    assert_false(p->cgroup->exclusive);
    NEAR(p->cgroup->cpu_secs_total, 7.0);
    NEAR(p->cpu_secs_total, 2.5);
    NEAR(p->utime_secs, 0.5);
    assert_true(isnan(p->cgroup->cpu_throttled_pct)); /* no period passed */

    /* 1 s: exclusive again: a new stretch begins at this reading. This interval began with
     * the foreign process in the group, so the walk's own growth counts (none here): the
     * foreign process's 5 s and this second's group growth never land in the tree's total */
    st.procs = "101\n";
    st.m_busy += 3 * t;
    st.m_idle += t;
    st.usage_us += 1000000;
    st.user_us += 1000000;
    smp = next(s, &mono);
    p = smp->process;
    assert_true(p->cgroup->exclusive);
    NEAR(p->cpu_secs_total, 2.5);
    NEAR(p->cores_used, 0.0);

    /* 1 s within the stretch: the group's growth counts again (2 s; the walk saw none) */
    st.m_busy += 3 * t;
    st.m_idle += t;
    st.usage_us += 2000000;
    st.user_us += 2000000;
    smp = next(s, &mono);
    NEAR(smp->process->cpu_secs_total, 4.5);
    NEAR(smp->process->cores_used, 2.0);

    /* the group's counter going backwards never lowers the total */
    st.usage_us -= 4000000;
    smp = next(s, &mono);
    NEAR(smp->process->cpu_secs_total, 4.5);

    /* the JSON names of the cgroup work */
    char buf[1 << 14];
    json_of(smp, buf);
    assert_non_null(strstr(buf, ",\"memory_peak_mib\":768,\"rss_hwm_mib\":"));
    assert_non_null(strstr(buf, ",\"gpu_vram_peak_bytes\":null,\"unread_count\":0,\"vms_mib\":58.869,")); /* 5 x 12345678 bytes */
    assert_non_null(strstr(buf, ",\"cgroup\":{\"path\":\"/job\",\"version\":\"hybrid\","
                                "\"own\":false,\"exclusive\":true,\"cpu_secs_total\":6,"));
    assert_non_null(strstr(buf, "\"cpu_quota_cores\":1.5,\"cpu_period_secs\":0.1,\"memory_limit_mib\":2048,"
                                "\"memory_high_mib\":null,\"pids_limit\":null,"));
    assert_non_null(strstr(buf, "\"pressure\":{\"cpu\":{\"some_avg10\":1.5,\"full_avg10\":0.25,\"some_pct\":0,"
                                "\"full_pct\":0,\"some_total_usec\":7250000,\"full_total_usec\":3100000},"));
    assert_non_null(strstr(buf, "}},\"pressure\":{\"cpu\":{\"some_avg10\":1.5,"));
    rt_sampler_free(s);
}

/* A group that gives its CPU unsplit (no user_usec/system_usec): the interval's CPU is split
 * as the walk split its own; with the walk idle too, as everything since tracking began. */
static void unsplit_group_cpu(void **unused)
{
    (void)unused;
    write_layout("/job");
    st.no_split = true;
    rt_sampler *s = open_sampler(0);
    double mono = 1e9;
    next(s, &mono);
    unsigned long t = (unsigned long)tck;
    st.m_busy += 4 * t;
    st.ut101 += t / 4; /* the walk: 0.25 s user, 0.25 s system */
    st.st101 += t / 4;
    st.usage_us += 2000000;
    const rt_sample *smp = next(s, &mono);
    const rt_process *p = smp->process;
    NEAR(p->cpu_secs_total, 2.0);
    NEAR(p->utime_secs, 1.0);
    NEAR(p->stime_secs, 1.0);
    st.m_busy += 4 * t;
    st.usage_us += 1000000;
    smp = next(s, &mono);
    p = smp->process;
    NEAR(p->cpu_secs_total, 3.0);
    NEAR(p->utime_secs, 0.5);
    NEAR(p->stime_secs, 0.5);
    rt_sampler_free(s);
}

/* A sampler on the fixture (cgroup_off as given) whose second interval has the walk use 1 s
 * of CPU and the group 5 s, on a machine half busy; returns that sample. */
static const rt_sample *walk_one_second(rt_sampler **s, int cgroup_off)
{
    *s = open_sampler(cgroup_off);
    double mono = 1e9;
    next(*s, &mono);
    st.usage_us += 5000000;
    st.ut101 += (unsigned long)tck;
    st.m_busy += 2 * (unsigned long)tck;
    st.m_idle += 2 * (unsigned long)tck;
    return next(*s, &mono);
}

static void root_group_is_no_group(void **unused)
{
    (void)unused;
    write_layout("/");
    rt_sampler *s;
    const rt_sample *smp = walk_one_second(&s, 0);
    assert_null(smp->process->cgroup);
    assert_true(isnan(smp->process->memory_peak_mib));
    NEAR(smp->process->cpu_secs_total, 1.0); /* the walk's */
    assert_non_null(smp->pressure);          /* the machine's pressure is read still */
    char buf[1 << 14];
    rt_format_sample(RT_FORMAT_JSON, smp, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "\"memory_peak_mib\":null,\"rss_hwm_mib\":"));
    assert_non_null(strstr(buf, "\"gpu_vram_peak_bytes\":null,\"unread_count\":0,\"vms_mib\":58.869,")); /* 5 x 12345678 bytes */
    assert_non_null(strstr(buf, ",\"cgroup\":null,\"main\":{\"total_rss_mib\":"));
    assert_non_null(strstr(buf, "\"gpu_vram_used_bytes\":null}},\"pressure\":{\"cpu\":{"));
    rt_sampler_free(s);
}

/* In a v1 memory group and the root of every other hierarchy (as this shell is on a hybrid
 * machine): only the memory group is read (a root group's counters are the machine's); no CPU
 * figure, so the tree's CPU stays the walk's even though the group is exclusive. */
static void root_elsewhere_is_left_out(void **unused)
{
    (void)unused;
    write_layout2("/", "/job");
    rt_sampler *s;
    const rt_sample *smp = walk_one_second(&s, 0);
    const rt_cgroup *g = smp->process->cgroup;
    assert_non_null(g);
    assert_string_equal(g->path, "/job");
    assert_string_equal(g->version, "v1");
    assert_true(isnan(g->cpu_secs_total));
    assert_true(isnan(g->cpu_quota_cores));
    assert_true(isnan(g->pressure.cpu.some_avg10));
    NEAR(g->memory_peak_mib, 512.0);
    NEAR(g->memory_limit_mib, 2048.0);
    assert_true(g->exclusive); /* the memory group's cgroup.procs: 100, 101, 102 */
    NEAR(smp->process->cpu_secs_total, 1.0);
    rt_sampler_free(s);
}

static void cgroup_off_reads_none(void **unused)
{
    (void)unused;
    write_layout("/job");
    rt_sampler *s;
    const rt_sample *smp = walk_one_second(&s, 1);
    assert_null(smp->process->cgroup);
    NEAR(smp->process->cpu_secs_total, 1.0);
    rt_sampler_free(s);
}

static void no_pressure_files(void **unused)
{
    (void)unused;
    write_layout("/job");
    write_all();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -r '%s/pressure' '%s/fs/cgroup/unified/job/cpu.pressure'", proc, sys);
    unit_system(cmd);
    rt_sampler *s = replay_sampler(sys, 100, 0);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1e9, 1.7e9, &smp), RT_OK);
    assert_null(smp->pressure); /* no /proc/pressure: null, not zeros */
    const rt_cgroup *g = smp->process->cgroup;
    assert_non_null(g);
    assert_true(isnan(g->pressure.cpu.some_avg10) && g->pressure.cpu.some_total_usec == RT_NULL_U64);
    NEAR(g->pressure.memory.some_avg10, 1.5);
    char buf[1 << 14];
    rt_format_sample(RT_FORMAT_JSON, smp, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "\"pressure\":{\"cpu\":null,\"memory\":{\"some_avg10\":1.5,"));
    assert_non_null(strstr(buf, "\"gpu_vram_used_bytes\":null}},\"pressure\":null,\"cgroup\":null,\"energy\":{"));
    rt_sampler_free(s);
}

/* ---- the whole machine: the group the tracker itself runs in ----------------------------- */

/* No tree tracked, the tracker in the fixture's group "/job": the sample's own cgroup with the
 * group's limits, counters since tracking began and pressure; never own nor exclusive (the
 * group's other processes are the tracker's neighbours); the record and the JSON have it. */
static void machine_mode_reads_own_group(void **unused)
{
    (void)unused;
    write_layout("/job");
    write_self("/job", "/job");
    write_all();
    rt_sampler *s = replay_sampler(sys, 0, 0);
    double mono = 1e9;
    const rt_sample *smp = next(s, &mono);
    assert_null(smp->process);
    assert_non_null(smp->cgroup);
    one_busy_second();
    st.oom_kills += 1;
    smp = next(s, &mono);
    const rt_cgroup *g = smp->cgroup;
    assert_non_null(g);
    assert_null(smp->process);
    assert_string_equal(g->path, "/job");
    assert_string_equal(g->version, "hybrid");
    assert_false(g->own);
    assert_false(g->exclusive);
    NEAR(g->cpu_secs_total, 2.0); /* the 10 s before tracking began are not counted */
    NEAR(g->cpu_quota_cores, 1.5);
    NEAR(g->memory_limit_mib, 2048.0);
    NEAR(g->memory_peak_mib, 512.0);
    assert_true(g->pids_limit == RT_NULL_I64);
    assert_int_equal(g->pids, 3);
    assert_int_equal(g->cpu_throttled_periods, 4);
    NEAR(g->cpu_throttled_pct, 40.0);
    assert_int_equal(g->oom_kills, 1);
    NEAR(g->pressure.cpu.some_pct, 25.0);
    NEAR(smp->pressure->cpu.some_pct, 50.0);
    rt_record r;
    rt_record_from_sample(smp, &r);
    NEAR(r.cgroup_memory_limit_mib, 2048.0);
    NEAR(r.cgroup_cpu_quota_cores, 1.5);
    NEAR(r.cgroup_oom_kills, 1.0);
    NEAR(r.cgroup_cpu_throttled_periods, 4.0);
    NEAR(r.cgroup_cpu_throttled_secs, 0.2);
    assert_true(isnan(r.cgroup_pids_limit));
    assert_true(isnan(r.process_memory_peak_mib)); /* no tree */
    NEAR(r.pressure_cpu_some_pct, 50.0);           /* the machine's: the whole machine is tracked */
    char buf[1 << 14];
    json_of(smp, buf);
    assert_non_null(strstr(buf, "\"process\":null,\"pressure\":{\"cpu\":{"));
    assert_non_null(strstr(buf, "}},\"cgroup\":{\"path\":\"/job\",\"version\":\"hybrid\",\"own\":false,"
                                "\"exclusive\":false,\"cpu_secs_total\":2,"));
    assert_non_null(strstr(buf, "\"memory_limit_mib\":2048,"));
    rt_sampler_free(s);
}

/* The tracker in the root group everywhere (the whole machine's counters, no limits), reading
 * turned off, or a tree tracked (its group is process->cgroup): no top-level group. */
static void machine_mode_without_own_group(void **unused)
{
    (void)unused;
    write_layout("/job");
    write_self("/", "/");
    write_all();
    double mono = 1e9;
    rt_sampler *s = replay_sampler(sys, 0, 0);
    assert_null(next(s, &mono)->cgroup);
    rt_sampler_free(s);
    /* in a v1 memory group alone (as this shell on a hybrid machine): that group, as v1 */
    write_self("/", "/job");
    s = replay_sampler(sys, 0, 0);
    const rt_sample *smp = next(s, &mono);
    assert_non_null(smp->cgroup);
    assert_string_equal(smp->cgroup->version, "v1");
    assert_true(isnan(smp->cgroup->cpu_quota_cores));
    NEAR(smp->cgroup->memory_limit_mib, 2048.0);
    rt_sampler_free(s);
    write_self("/job", "/job");
    s = replay_sampler(sys, 0, 1);
    smp = next(s, &mono);
    assert_null(smp->cgroup);
    char buf[1 << 14];
    assert_non_null(strstr(json_of(smp, buf), ",\"cgroup\":null,\"energy\":{"));
    rt_sampler_free(s);
    /* pid mode: the tree's group, none at the top */
    s = replay_sampler(sys, 100, 0);
    smp = next(s, &mono);
    assert_null(smp->cgroup);
    assert_non_null(smp->process->cgroup);
    assert_non_null(strstr(json_of(smp, buf), ",\"cgroup\":null,\"energy\":{"));
    rt_sampler_free(s);
    /* wrapper mode (the caller's children; no job group made): none at the top either */
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc;
    o.sys_root = sys;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    o.own_children = 1;
    assert_int_equal(rt_sampler_new_replay(&o, NULL, NULL, &s), RT_OK);
    smp = next(s, &mono);
    assert_non_null(smp->process);
    assert_null(smp->cgroup);
    assert_null(smp->process->cgroup);
    rt_sampler_free(s);
}

/* Inside a container with a cgroup namespace (pure v2, Docker's default): /proc/self/cgroup
 * says "0::/" and the mount shows the container's own group as the root, with its limits
 * (the machine's real root group has no memory.max or cpu.max). That "/" is read; without
 * the limit files it is the machine's root and is not. */
static void namespace_root_is_the_container(void **unused)
{
    (void)unused;
    char v2[160];
    snprintf(v2, sizeof v2, "%s/ns", dir);
    mkdir(v2, 0755);
    unit_put(proc, "self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n");
    unit_put(proc, "self/cgroup", "0::/\n");
    unit_put(v2, "fs/cgroup/cpu.stat", "usage_usec 1000\nuser_usec 600\nsystem_usec 400\n");
    unit_put(v2, "fs/cgroup/cgroup.procs", "1\n");
    double mono = 1e9;
    rt_sampler *s = replay_sampler(v2, 0, 0);
    assert_null(next(s, &mono)->cgroup); /* no limit files: the machine's root */
    rt_sampler_free(s);
    unit_put(v2, "fs/cgroup/memory.max", "536870912\n");
    unit_put(v2, "fs/cgroup/cpu.max", "150000 100000\n");
    s = replay_sampler(v2, 0, 0);
    const rt_sample *smp = next(s, &mono);
    assert_non_null(smp->cgroup);
    assert_string_equal(smp->cgroup->version, "v2");
    assert_string_equal(smp->cgroup->path, "/");
    NEAR(smp->cgroup->memory_limit_mib, 512.0);
    NEAR(smp->cgroup->cpu_quota_cores, 1.5);
    rt_sampler_free(s);
}

/* Process pid (parent ppid) in a replayed proc tree, with children kids ("" for none). */
static void put_process(const char *root, int pid, int ppid, const char *kids)
{
    char rel[64], t[512];
    snprintf(t, sizeof t,
             "%d (work) S %d %d %d 0 -1 4194560 100 0 0 0 50 10 0 0 20 0 1 0 5000 12345678 1000 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             pid, ppid, pid, pid);
    snprintf(rel, sizeof rel, "%d/stat", pid);
    unit_put(root, rel, t);
    snprintf(rel, sizeof rel, "%d/task/%d/children", pid, pid);
    unit_put(root, rel, kids);
    snprintf(rel, sizeof rel, "%d/io", pid);
    unit_put(root, rel,
             "rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: 0\nwrite_bytes: 0\n"
             "cancelled_write_bytes: 0\n");
}

/* The v2 fixture of the group reader (tests/fixtures/cgroup/v2) through the sampler: pid 1201
 * in /jobs.slice/job1 with children 1202 and 1305, while the group also holds 1306: not
 * exclusive; then 1306 shows up as 1201's child and the group (1201, 1202, 1305, 1306) is
 * the tree's alone. Limits are the tightest of the group and its parent. */
static void v2_fixture_group(void **unused)
{
    (void)unused;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s/cgroup/v2/proc' '%s'", proc, RT_FIXTURES, proc);
    unit_system(cmd);
    unit_put(proc, "stat", "cpu  100 0 0 1000 0 0 0 0\ncpu0 100 0 0 1000 0 0 0 0\n");
    put_process(proc, 1201, 1, "1202 1305");
    unit_put(proc, "1201/cgroup", "0::/jobs.slice/job1\n"); /* as the fixture's 777 */
    put_process(proc, 1202, 1201, "");
    put_process(proc, 1305, 1201, "");
    put_process(proc, 1306, 1, "");
    char fsys[1024];
    snprintf(fsys, sizeof fsys, "%s/cgroup/v2/sys", RT_FIXTURES);
    rt_sampler *s = replay_sampler(fsys, 1201, 0);
    const rt_sample *smp;
    assert_int_equal(rt_sampler_sample_at(s, 1e9, 1.7e9, &smp), RT_OK);
    const rt_cgroup *g = smp->process->cgroup;
    assert_non_null(g);
    assert_string_equal(g->path, "/jobs.slice/job1");
    assert_string_equal(g->version, "v2");
    assert_true(!g->exclusive && !g->own);
    NEAR(g->cpu_secs_total, 0.0);  /* nothing since tracking began */
    NEAR(g->cpu_quota_cores, 1.5); /* the parent's quota: tighter than none */
    NEAR(g->memory_limit_mib, 1024.0);
    NEAR(g->memory_high_mib, 768.0);
    NEAR(g->memory_peak_mib, 200.0);
    assert_true(isnan(smp->process->memory_peak_mib)); /* a shared group's peak is not the tree's */
    assert_int_equal(g->pids_limit, 100);
    assert_int_equal(g->pids_peak, 9);
    assert_int_equal(g->oom_kills, 0);
    assert_int_equal(g->cpu_periods, 0);
    NEAR(g->pressure.cpu.some_avg10, 12.5);
    assert_int_equal(g->pressure.io.full_total_usec, 8000);
    NEAR(g->pressure.cpu.some_pct, 0.0); /* nothing stalled since the baseline */
    put_process(proc, 1201, 1, "1202 1305 1306");
    put_process(proc, 1306, 1201, "");
    assert_int_equal(rt_sampler_sample_at(s, 1e9 + 1, 1.7e9 + 1, &smp), RT_OK);
    assert_true(smp->process->cgroup->exclusive);
    NEAR(smp->process->cgroup->pressure.cpu.some_pct, 0.0);
    rt_sampler_free(s);
}

/* The pressure rule by itself: no previous reading or no elapsed time gives NaN, a missing
 * "full" line gives null figures, a total going backwards gives 0. */
static void pressure_rule(void **unused)
{
    (void)unused;
    rt_cg_psi_raw prev = {.has_some = true, .some_avg10 = 2.0, .some_total_usec = 1000000};
    rt_cg_psi_raw cur = prev;
    cur.some_total_usec = 1500000;
    rt_pressure o;
    rt_pressure_fill(&o, &cur, &prev, false, 1.0);
    assert_true(isnan(o.some_pct) && isnan(o.full_pct));
    assert_int_equal(o.some_total_usec, 1500000);
    assert_true(o.full_total_usec == RT_NULL_U64 && isnan(o.full_avg10));
    rt_pressure_fill(&o, &cur, &prev, true, 0.0);
    assert_true(isnan(o.some_pct));
    rt_pressure_fill(&o, &cur, &prev, true, 2.0);
    NEAR(o.some_pct, 25.0);
    rt_pressure_fill(&o, &prev, &cur, true, 2.0);
    NEAR(o.some_pct, 0.0);
    rt_pressure_fill(&o, &cur, &prev, true, 0.1); /* 0.5 s stalled in 0.1 s: held to 100 */
    NEAR(o.some_pct, 100.0);
    rt_psi ps;
    rt_psi_null(&ps);
    assert_true(isnan(ps.io.some_avg10) && ps.cpu.some_total_usec == RT_NULL_U64);
}

/* ---- live ---------------------------------------------------------------------------------- */

#define KIDS 4
#define KID_CPU_SECS 0.25

static double cputime(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The job: enters the group, says so on fd (-1) and waits for a byte on go; then ignores
 * SIGCHLD (so the kernel reaps its children and their CPU lands in no one's cutime), starts
 * KIDS busy children that each write their own CPU seconds to fd, waits for them to be gone
 * and exits. */
static void job(const rt_job_cgroup *jg, int fd, int go)
{
    double in = -1;
    char c;
    if (rt_job_cgroup_enter(jg) != 0 || write(fd, &in, sizeof in) != (ssize_t)sizeof in || read(go, &c, 1) != 1)
        _exit(3);
    signal(SIGCHLD, SIG_IGN);
    for (int k = 0; k < KIDS; k++) {
        if (fork() == 0) {
            volatile unsigned long spin = 0;
            while (cputime(CLOCK_PROCESS_CPUTIME_ID) < KID_CPU_SECS)
                spin++;
            double used = cputime(CLOCK_PROCESS_CPUTIME_ID);
            if (write(fd, &used, sizeof used) != (ssize_t)sizeof used)
                _exit(4);
            _exit(0);
        }
    }
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    _exit(0);
}

/* The job group's CPU seconds as the kernel counts them: cpu.stat usage_usec of the v2 tree
 * (found in our mountinfo), NaN when there is none. */
static double group_cpu_secs(const rt_job_cgroup *jg)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[1024], mnt[512] = "";
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1)
            break;
    if (f)
        fclose(f);
    char path[1024];
    snprintf(path, sizeof path, "%s%s/cpu.stat", mnt, rt_job_cgroup_path(jg));
    f = mnt[0] ? fopen(path, "r") : NULL;
    unsigned long long usec = 0;
    bool ok = false;
    while (f && fgets(line, sizeof line, f))
        ok |= sscanf(line, "usage_usec %llu", &usec) == 1;
    if (f)
        fclose(f);
    return ok ? (double)usec / 1e6 : NAN;
}

static void live_job_group(void **unused)
{
    (void)unused;
    if (access("/sys/fs/cgroup/cpuacct", W_OK) != 0 && access("/sys/fs/cgroup/cgroup.procs", W_OK) != 0)
        skip();
    rt_job_cgroup *jg = NULL;
    rt_job_cgroup_options jo = RT_JOB_CGROUP_OPTIONS_INIT;
    if (rt_job_cgroup_create(&jo, &jg) != RT_OK) {
        print_message("no job cgroup can be made here: skipped\n");
        skip();
    }
    /* the same tree twice: with the job's group, and the walk alone */
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.own_children = 1;
    o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    o.job_cgroup = jg;
    rt_sampler *with = NULL, *walk = NULL;
    assert_int_equal(rt_sampler_new(&o, &with), RT_OK);
    o.job_cgroup = NULL;
    o.cgroup_off = 1;
    assert_int_equal(rt_sampler_new(&o, &walk), RT_OK);
    int fds[2], go[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(pipe(go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        close(go[1]);
        job(jg, fds[1], go[0]);
    }
    close(fds[1]);
    close(go[0]);
    /* the job in its group: a third sampler tracks it by pid (the group it lives in, checked
     * for members not in the tree), then the job goes on */
    double used = 0;
    assert_int_equal(read(fds[0], &used, sizeof used), (ssize_t)sizeof used);
    assert_true(used == -1);
    rt_sampler_options po = RT_SAMPLER_OPTIONS_INIT;
    po.pid = pid;
    po.nvml_library = o.nvml_library;
    rt_sampler *by_pid = NULL;
    assert_int_equal(rt_sampler_new(&po, &by_pid), RT_OK);
    assert_int_equal(write(go[1], "g", 1), 1);
    close(go[1]);
    double kids = 0;
    int got = 0;
    while (read(fds[0], &used, sizeof used) == (ssize_t)sizeof used) {
        kids += used;
        got++;
    }
    close(fds[0]);
    assert_int_equal(got, KIDS);
    siginfo_t si; /* the job has exited: wait for it, leave it a zombie (the samplers see it) */
    memset(&si, 0, sizeof si);
    assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(si.si_status, 0);

    /* a caller compiled before 0.18 (its options end before walk_max_age_secs) has every
     * sample walk, as it did, its own group or not */
    rt_sampler_options old = o;
    old.struct_size = offsetof(rt_sampler_options, walk_max_age_secs);
    old.job_cgroup = jg;
    old.cgroup_off = 0;
    rt_sampler *before = NULL, *now = NULL;
    assert_int_equal(rt_sampler_new(&old, &before), RT_OK);
    old.struct_size = sizeof old; /* and one of today's: the walk keeps its own clock */
    assert_int_equal(rt_sampler_new(&old, &now), RT_OK);

    const rt_sample *a, *b;
    assert_int_equal(rt_sampler_sample(with, &a), RT_OK);
    assert_int_equal(rt_sampler_sample(walk, &b), RT_OK);
    for (int i = 0; i < 3; i++) {
        const rt_sample *d;
        assert_int_equal(rt_sampler_sample(before, &d), RT_OK);
        assert_non_null(d->process->cgroup);
        assert_true(d->process->cgroup->own);
        assert_true(d->process->walk_age_secs == 0);
        assert_int_equal(rt_sampler_sample(now, &d), RT_OK);
        assert_true(d->process->walk_age_secs > 0); /* walked when made, not due again so soon */
    }
    rt_sampler_free(before);
    rt_sampler_free(now);
    double kernel = group_cpu_secs(jg);
    const rt_cgroup *g = a->process->cgroup;
    assert_non_null(g);
    assert_true(g->own && g->exclusive);
    if (isnan(kernel))
        kernel = g->cpu_secs_total; /* no v2 tree: the group's cpuacct as the part read it */
    double total = a->process->cpu_secs_total, alone = b->process->cpu_secs_total;
    print_message("children's own CPU %.3f s, group %.3f s, tracked %.3f s, the walk alone %.3f s\n", kids, kernel,
                  total, alone);
    assert_true(kids >= KIDS * KID_CPU_SECS);
    assert_true(fabs(total - kernel) <= 0.02 * kernel);
    assert_true(total >= kids * 0.98);
    if (b->process->exits_counted == RT_NULL_I64)
        assert_true(alone < 0.5 * kids); /* the walk never saw the children */
    else
        /* as root their exit records count them: the walk alone reads the job as its group does
         * (the job's own parent among it: under valgrind its own CPU is 0.08 s of 1.09) */
        assert_true(fabs(alone - total) <= 0.02 * total + 0.02);
    assert_null(b->process->cgroup);
    char buf[1 << 15];
    size_t n = rt_format_sample(RT_FORMAT_JSON, a, NULL, buf, sizeof buf);
    assert_true(n < sizeof buf);
    assert_non_null(strstr(buf, "\"cgroup\":{\"path\":\""));
    bool hybrid = access("/sys/fs/cgroup/cpuacct", F_OK) == 0 && access("/sys/fs/cgroup/unified", F_OK) == 0;
    if (hybrid)
        assert_non_null(strstr(buf, "\"version\":\"hybrid\",\"own\":true,\"exclusive\":true,"));
    /* by pid: the job's group, not its own, and exclusive once the children are gone (the
     * walk's tree is the job alone, and it is no longer in the group) */
    const rt_sample *c;
    assert_int_equal(rt_sampler_sample(by_pid, &c), RT_OK);
    const rt_cgroup *pg = c->process->cgroup;
    assert_non_null(pg);
    assert_false(pg->own);
    assert_true(pg->exclusive);
    assert_string_equal(pg->path, g->path);
    print_message("by pid: group %.3f s since tracking began, tracked %.3f s\n", pg->cpu_secs_total,
                  c->process->cpu_secs_total);
    assert_true(pg->cpu_secs_total >= kids * 0.98 && pg->cpu_secs_total <= kernel * 1.02);
    assert_true(fabs(c->process->cpu_secs_total - pg->cpu_secs_total) <= 0.02 * pg->cpu_secs_total);
    rt_sampler_free(by_pid);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    rt_sampler_free(with);
    rt_sampler_free(walk);
    rt_job_cgroup_free(jg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(moved_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(unreclaimable_peak, setup, teardown),
        cmocka_unit_test_setup_teardown(unsplit_group_cpu, setup, teardown),
        cmocka_unit_test_setup_teardown(root_group_is_no_group, setup, teardown),
        cmocka_unit_test_setup_teardown(v2_fixture_group, setup, teardown),
        cmocka_unit_test_setup_teardown(root_elsewhere_is_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(cgroup_off_reads_none, setup, teardown),
        cmocka_unit_test_setup_teardown(no_pressure_files, setup, teardown),
        cmocka_unit_test_setup_teardown(machine_mode_reads_own_group, setup, teardown),
        cmocka_unit_test_setup_teardown(machine_mode_without_own_group, setup, teardown),
        cmocka_unit_test_setup_teardown(namespace_root_is_the_container, setup, teardown),
        cmocka_unit_test(pressure_rule),
        cmocka_unit_test(live_job_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
