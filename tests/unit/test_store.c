/* test_store.c - the embedded tracker's store and columns: rows kept exactly where they must
 * be (time, bytes, MiB, pid, totals) and as floats elsewhere, NaN kept, blocks dropped past
 * max_rows; column names; a sample's row gives back the very record rt_record_from_sample
 * makes of it. */
#include "unit.h"

#include <math.h>

#include "core/schema.h"
#include "sample/replay.h"
#include "analysis/record_fields.h"
#include "store/store.h"
#include "resource_tracker.h"

static void fill(double row[RT_NCOLS], uint64_t i)
{
    for (int c = 0; c < RT_NCOLS; c++)
        row[c] = (double)i * 0.37 + c;
    row[RT_COL_TIMESTAMP] = 1.7e9 + (double)i * 0.001;
    row[RT_COL_MEM_TOTAL_MIB] = 64213.27734375; /* kB / 1024 of 64 GiB-ish: needs a double */
    row[RT_COL_PROC_CPU_SECS_TOTAL] = 12345.678901234 + (double)i;
    row[RT_COL_PROC_PID] = 4194303;
    row[RT_COL_DISK_READ_BYTES] = 123456789012.0 + (double)i;
    row[RT_COL_GPU_USAGE] = NAN;
}

static void exact_and_float_columns(void **state)
{
    (void)state;
    rt_store *s = rt_store_new(100);
    assert_non_null(s);
    double row[RT_NCOLS], back[RT_NCOLS];
    for (uint64_t i = 0; i < 10; i++) {
        fill(row, i);
        assert_int_equal(rt_store_append(s, row), 0);
    }
    assert_int_equal(rt_store_count(s), 10);
    assert_int_equal(rt_store_first(s), 0);
    fill(row, 7);
    assert_int_equal(rt_store_row(s, 7, back), 0);
    assert_true(back[RT_COL_TIMESTAMP] == row[RT_COL_TIMESTAMP]);
    assert_true(back[RT_COL_MEM_TOTAL_MIB] == row[RT_COL_MEM_TOTAL_MIB]);
    assert_true(back[RT_COL_PROC_CPU_SECS_TOTAL] == row[RT_COL_PROC_CPU_SECS_TOTAL]);
    assert_true(back[RT_COL_PROC_PID] == row[RT_COL_PROC_PID]);
    assert_true(back[RT_COL_DISK_READ_BYTES] == row[RT_COL_DISK_READ_BYTES]);
    assert_true(isnan(back[RT_COL_GPU_USAGE]));
    assert_true(back[RT_COL_PROC_CORES] == (double)(float)row[RT_COL_PROC_CORES]); /* a float */
    assert_int_equal(rt_store_row(s, 10, back), -1);
    double col[20];
    assert_int_equal(rt_store_column(s, RT_COL_PROC_PID, 3, 20, col), 7);
    assert_true(col[0] == 4194303);
    assert_int_equal(rt_store_column(s, RT_NCOLS, 0, 20, col), 0);
    assert_int_equal(rt_store_column(s, 0, 10, 20, col), 0);
    /* an exact column that fits a float stays one until a value does not */
    rt_store *e = rt_store_new(10);
    size_t small = rt_store_bytes(e);
    fill(row, 0);
    row[RT_COL_MEM_TOTAL_MIB] = 1024.5;
    rt_store_append(e, row);
    size_t one = rt_store_bytes(e);
    assert_true(one > small);
    row[RT_COL_MEM_TOTAL_MIB] = 1024.0 + 1.0 / 1024.0 + 65536.0; /* 27 bits: a double */
    rt_store_append(e, row);
    assert_true(rt_store_bytes(e) > one);
    assert_int_equal(rt_store_row(e, 0, back), 0);
    assert_true(back[RT_COL_MEM_TOTAL_MIB] == 1024.5);
    assert_int_equal(rt_store_row(e, 1, back), 0);
    assert_true(back[RT_COL_MEM_TOTAL_MIB] == row[RT_COL_MEM_TOTAL_MIB]);
    rt_store_free(e);
    rt_store_free(s);
}

static void oldest_blocks_dropped(void **state)
{
    (void)state;
    /* small store: blocks of max_rows rows, two of them; between 10 and 20 rows kept */
    rt_store *s = rt_store_new(10);
    double row[RT_NCOLS], back[RT_NCOLS];
    for (uint64_t i = 0; i < 35; i++) {
        fill(row, i);
        assert_int_equal(rt_store_append(s, row), 0);
        uint64_t kept = rt_store_count(s) - rt_store_first(s);
        assert_true(kept >= (i + 1 < 10 ? i + 1 : 10) && kept <= 20);
    }
    assert_int_equal(rt_store_first(s), 20);
    assert_int_equal(rt_store_row(s, 19, back), -1);
    assert_int_equal(rt_store_row(s, 34, back), 0);
    fill(row, 34);
    assert_true(back[RT_COL_TIMESTAMP] == row[RT_COL_TIMESTAMP]);
    size_t bytes = rt_store_bytes(s);
    for (uint64_t i = 35; i < 200; i++) { /* recycled blocks: no growth */
        fill(row, i);
        rt_store_append(s, row);
    }
    assert_int_equal(rt_store_bytes(s), bytes);
    rt_store_free(s);

    /* full blocks of RT_STORE_BLOCK rows */
    s = rt_store_new(5000); /* 2 blocks + 1: 8192 to 12288 kept */
    for (uint64_t i = 0; i < 3 * RT_STORE_BLOCK + 5; i++) {
        fill(row, i);
        rt_store_append(s, row);
    }
    assert_int_equal(rt_store_first(s), RT_STORE_BLOCK);
    assert_int_equal(rt_store_row(s, RT_STORE_BLOCK, back), 0);
    fill(row, RT_STORE_BLOCK);
    assert_true(back[RT_COL_PROC_CPU_SECS_TOTAL] == row[RT_COL_PROC_CPU_SECS_TOTAL]);
    print_message("store: %.1f bytes per row (3 blocks of %u rows, exact MiB columns as doubles)\n",
                  (double)rt_store_bytes(s) / (3.0 * RT_STORE_BLOCK), RT_STORE_BLOCK);
    rt_store_free(s);
}

/* The first block is small (RT_STORE_FIRST_ROWS rows: a short run's store touches a page of a
 * few columns, not one of every column) and its rows move into a full block when it fills:
 * every row reads back as appended across that move, a column that needed doubles in the first
 * block still has them, and the blocks after it are full ones (a store of 300 rows holds the
 * bytes of one full block); a store whose max_rows is between the two grows to max_rows. */
static void first_block_grows(void **state)
{
    (void)state;
    double row[RT_NCOLS], back[RT_NCOLS];
    uint64_t maxes[] = {100000, 200};
    for (size_t k = 0; k < 2; k++) {
        rt_store *s = rt_store_new(maxes[k]);
        size_t small = 0;
        for (uint64_t i = 0; i < 300; i++) {
            fill(row, i);
            if (i == 5)
                row[RT_COL_MEM_TOTAL_MIB] = 1024.0 + 1.0 / 1024.0 + 65536.0; /* widened in the first block */
            assert_int_equal(rt_store_append(s, row), 0);
            if (i == 0)
                small = rt_store_bytes(s);
        }
        for (uint64_t i = rt_store_first(s); i < 300; i++) {
            fill(row, i);
            if (i == 5)
                row[RT_COL_MEM_TOTAL_MIB] = 1024.0 + 1.0 / 1024.0 + 65536.0;
            assert_int_equal(rt_store_row(s, i, back), 0);
            for (int c = 0; c < RT_NCOLS; c++) {
                double want = rt_column_keeps()[c] == RT_KEEP_FLOAT ? (double)(float)row[c] : row[c];
                assert_true((isnan(want) && isnan(back[c])) || back[c] == want);
            }
        }
        if (k == 0) { /* one full block holds the 300 rows: more bytes than the small one had */
            assert_int_equal(rt_store_first(s), 0);
            assert_true(rt_store_bytes(s) > 20 * small);
        } else { /* blocks of 200 rows: between 200 and 400 kept */
            assert_true(300 - rt_store_first(s) >= 200 || rt_store_first(s) == 0);
        }
        rt_store_free(s);
    }
}

/* The columns that copy a sample member are the schema's fields: 15 of them, their names' units
 * the fields' units (_mib MiB, _bytes bytes, utime/stime seconds), a count for the rest. */
static void columns_of_the_schema(void **state)
{
    (void)state;
    int n = 0;
    for (int c = 0; c < RT_NCOLS; c++) {
        const rt_field *f = rt_column_field(c);
        if (!f)
            continue;
        n++;
        const char *name = rt_column_name(c);
        size_t len = strlen(name);
        rt_unit want = len > 4 && strcmp(name + len - 4, "_mib") == 0     ? U_MIB
                       : len > 6 && strcmp(name + len - 6, "_bytes") == 0 ? U_BYTES
                       : strstr(name, "time")                             ? U_S
                                                                          : U_COUNT;
        if (f->unit != want)
            fail_msg("column %s is %s.%s in %s", name, f->name, rt_unit_name(f->unit), rt_unit_name(want));
        assert_true(f->type != RT_FIELD_STRING && f->type != RT_FIELD_FLAG);
    }
    assert_int_equal(n, 15);
    assert_string_equal(rt_column_field(RT_COL_CPU_RUNNABLE)->name, "process_count");
    assert_string_equal(rt_column_field(RT_COL_DISK_SPACE_FREE_BYTES)->name, "disk_space_free_bytes");
    assert_null(rt_column_field(RT_COL_CPU_CORES)); /* the record's */
    assert_null(rt_column_field(RT_NCOLS));
}

static void column_names(void **state)
{
    (void)state;
    assert_int_equal(rt_column_count(), RT_NCOLS);
    assert_string_equal(rt_column_name(RT_COL_TIMESTAMP), "timestamp");
    assert_string_equal(rt_column_name(RT_COL_CPU_CORES), "cpu_cores");
    assert_string_equal(rt_column_name(RT_COL_PROC_PSS_MIB), "process_pss_mib");
    assert_string_equal(rt_column_name(RT_COL_PROC_GPU_UTILIZED), "process_gpu_utilized");
    assert_null(rt_column_name(RT_NCOLS));
    assert_null(rt_column_name(-1));
    for (int c = 0; c < RT_NCOLS; c++) {
        assert_non_null(rt_column_name(c));
        assert_int_equal(rt_column_by_name(rt_column_name(c)), c);
    }
    assert_int_equal(rt_column_by_name("nope"), -1);
    assert_int_equal(rt_column_by_name(NULL), -1);
}

/* The record of a row equals the record of the sample, byte for byte (NaN bits included), but
 * for the GPUs one by one, which a row does not keep. */
static void check_record(const rt_sample *smp)
{
    double row[RT_NCOLS];
    rt_row_from_sample(smp, row);
    rt_record a, b;
    rt_record_from_sample(smp, &a);
    memset(&b, 0xab, sizeof b);
    rt_row_to_record(row, &b);
    assert_memory_equal(&a, &b, offsetof(rt_record, gpu));
    assert_null(b.gpu);
    assert_int_equal(b.gpu_n, 0);
    assert_int_equal(a.gpu_n, smp->gpu_count);
}

static void row_gives_the_record(void **state)
{
    (void)state;
    /* a real sample of this process, then one of the machine alone */
    for (int with_tree = 1; with_tree >= 0; with_tree--) {
        rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
        o.pid = with_tree ? getpid() : 0;
        o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
        rt_sampler *s;
        assert_int_equal(rt_sampler_new(&o, &s), RT_OK);
        const rt_sample *smp;
        rt_sampler_sample_at(s, rt_mono_secs() + 1, rt_real_secs() + 1, &smp); /* a second on: no sleep */
        check_record(smp);
        double row[RT_NCOLS];
        rt_row_from_sample(smp, row);
        assert_true(row[RT_COL_TIMESTAMP] == smp->timestamp_secs);
        if (with_tree) {
            assert_true(row[RT_COL_PROC_PID] == (double)getpid());
            assert_true(row[RT_COL_PROC_ALIVE] == 1.0);
            assert_true(row[RT_COL_PROC_THREADS] >= 1);
        } else { /* the tree's columns null, the cgroup's the tracker's own group's (null without
                  * one: sample->cgroup); the pressure the machine's */
            for (int c = RT_COL_PROC_PID; c <= RT_COL_PROC_MEMORY_PEAK_MIB; c++)
                assert_true(isnan(row[c]));
            for (int c = RT_COL_CGROUP_OOM_KILLS; !smp->cgroup && c <= RT_COL_CGROUP_PIDS_LIMIT; c++)
                assert_true(isnan(row[c]));
            assert_true(!smp->cgroup || row[RT_COL_CGROUP_OOM_KILLS] == (double)smp->cgroup->oom_kills);
        }
        rt_sampler_free(s);
    }
    /* a made-up sample with GPUs, nulls and a tree */
    rt_cpu cpu = {.utilization_pct = 1.25, .core_count = 4, .utime_secs = 0.5, .stime_secs = 0.25,
                  .process_count = RT_NULL_I64};
    rt_memory mem = {.total_mib = 1000, .used_mib = NAN, .free_mib = 3};
    rt_gpu g1 = {.utilization_pct = 50, .vram_used_bytes = 1 << 20, .vram_total_bytes = RT_NULL_U64};
    rt_gpu g2 = {.utilization_pct = NAN, .vram_used_bytes = RT_NULL_U64, .vram_total_bytes = 8u << 20};
    const rt_gpu *gpus[] = {&g1, &g2};
    rt_process p = {.pid = 77, .alive = 0, .child_count = RT_NULL_I64, .thread_count = 3, .cores_used = 0.3,
                    .utime_secs = 0.1, .stime_secs = 0.2, .cpu_secs_total = 9.75, .pss_mib = NAN, .rss_mib = 5,
                    .read_bytes = 4096, .write_bytes = 0, .gpu_utilization_pct = NAN,
                    .gpu_vram_used_bytes = RT_NULL_U64, .gpu_count_used = RT_NULL_I64, .rss_peak_mib = 6,
                    .rss_hwm_mib = 6.5, .gpu_vram_peak_bytes = RT_NULL_U64, .cancelled_write_bytes_total = 4096};
    rt_sample smp = {.timestamp_secs = 1.7e9, .interval_secs = 1, .cpu = &cpu, .memory = &mem, .gpu = gpus,
                     .gpu_count = 2, .disk_space_total_bytes = RT_NULL_U64, .disk_space_used_bytes = 5,
                     .disk_space_free_bytes = RT_NULL_U64, .process = &p};
    check_record(&smp);
    double row[RT_NCOLS];
    rt_row_from_sample(&smp, row);
    assert_true(isnan(row[RT_COL_CPU_RUNNABLE]));
    assert_true(isnan(row[RT_COL_DISK_SPACE_FREE_BYTES]));
    assert_true(row[RT_COL_PROC_ALIVE] == 0.0);
    assert_true(isnan(row[RT_COL_PROC_CHILDREN]));
    assert_true(row[RT_COL_GPU_USAGE] == 0.5);
    for (int c = RT_COL_PROC_MEMORY_PEAK_MIB; c < RT_COL_PROC_RSS_HWM_MIB; c++) /* no cgroup, no PSI */
        assert_true(isnan(row[c]));
    /* 0.9: the tree's own figures, and nothing of a group */
    assert_true(row[RT_COL_PROC_RSS_HWM_MIB] == 6.5);
    assert_true(row[RT_COL_PROC_CANCELLED_WRITE_BYTES_TOTAL] == 4096);
    assert_true(isnan(row[RT_COL_PROC_GPU_VRAM_PEAK_MIB]) && isnan(row[RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB]));
    assert_true(isnan(row[RT_COL_PROC_CGROUP_EXCLUSIVE]) && isnan(row[RT_COL_CGROUP_PIDS]));

    /* the same with a cgroup (counters past a float's 24 bits) and pressure: the group's where
     * it has it (memory), else the machine's */
    rt_cgroup g = {.path = "/job", .version = "v2", .memory_peak_mib = 123.45, .pids_peak = 17,
                   .cpu_quota_cores = 1.5, .memory_limit_mib = 2048, .memory_high_mib = NAN,
                   .pids_limit = RT_NULL_I64, .cpu_periods = 123456789, .cpu_throttled_periods = 16777217,
                   .cpu_throttled_secs = 3.000001, .oom_kills = 2, .exclusive = 1, .pids = 3,
                   .memory_unreclaimable_peak_mib = 100.25};
    g.pressure.cpu = (rt_pressure){NAN, NAN, NAN, NAN, RT_NULL_U64, RT_NULL_U64};
    g.pressure.memory = (rt_pressure){1, 0.5, 2.25, 1.125, 10, 5};
    g.pressure.io = g.pressure.cpu;
    rt_psi machine = {.cpu = {3, NAN, 4.5, NAN, 100, RT_NULL_U64}, .memory = {9, 9, 9, 9, 9, 9},
                      .io = {0.5, 0.25, 0.75, 0.375, 7, 3}};
    p.memory_peak_mib = g.memory_peak_mib;
    p.cgroup = &g;
    smp.pressure = &machine;
    check_record(&smp);
    rt_row_from_sample(&smp, row);
    static const struct {
        int col;
        double v;
    } want[] = {{RT_COL_PROC_MEMORY_PEAK_MIB, 123.45}, {RT_COL_CGROUP_OOM_KILLS, 2},
                {RT_COL_CGROUP_MEMORY_LIMIT_MIB, 2048}, {RT_COL_CGROUP_CPU_QUOTA_CORES, 1.5},
                {RT_COL_CGROUP_CPU_PERIODS, 123456789}, {RT_COL_CGROUP_CPU_THROTTLED_PERIODS, 16777217},
                {RT_COL_CGROUP_CPU_THROTTLED_SECS, 3.000001}, {RT_COL_CGROUP_PIDS_PEAK, 17},
                {RT_COL_PRESSURE_CPU_SOME_PCT, 4.5}, {RT_COL_PRESSURE_MEMORY_SOME_PCT, 2.25},
                {RT_COL_PRESSURE_MEMORY_FULL_PCT, 1.125}, {RT_COL_PRESSURE_IO_SOME_PCT, 0.75},
                {RT_COL_PRESSURE_IO_FULL_PCT, 0.375}, {RT_COL_PROC_CGROUP_EXCLUSIVE, 1},
                {RT_COL_CGROUP_PIDS, 3}, {RT_COL_PROC_UNRECLAIMABLE_PEAK_MIB, 100.25}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_true(row[want[i].col] == want[i].v);
    assert_true(isnan(row[RT_COL_CGROUP_MEMORY_HIGH_MIB]) && isnan(row[RT_COL_CGROUP_PIDS_LIMIT]));
    /* through the store: the exact columns come back exact (the counters past 2^24, the
     * throttled seconds), so the stored row still gives the sample's record */
    rt_store *st = rt_store_new(10);
    double back[RT_NCOLS];
    assert_int_equal(rt_store_append(st, row), 0);
    assert_int_equal(rt_store_row(st, 0, back), 0);
    for (int c = RT_COL_PROC_MEMORY_PEAK_MIB; c < RT_NCOLS; c++)
        assert_true(back[c] == row[c] || (isnan(back[c]) && isnan(row[c])));
    rt_store_free(st);
}

/* A huge max_rows (no overflow in the block count: the store keeps everything, and reserves
 * nothing up front); a pinned store drops nothing, and drops the excess after unpinning; a
 * figure beyond a float's range in a float column is infinite. */
static void huge_pinned_and_overflowing(void **state)
{
    (void)state;
    double row[RT_NCOLS], back[RT_NCOLS];
    rt_store *h = rt_store_new(UINT64_MAX);
    assert_non_null(h);
    assert_true(rt_store_bytes(h) < 1024);
    for (uint64_t i = 0; i < 3 * RT_STORE_BLOCK + 5; i++) {
        fill(row, i);
        assert_int_equal(rt_store_append(h, row), 0);
    }
    assert_int_equal(rt_store_first(h), 0);
    assert_int_equal(rt_store_row(h, 0, back), 0);
    rt_store_free(h);

    rt_store *s = rt_store_new(10);
    rt_store_pin(s, true);
    rt_store_pin(s, true);
    for (uint64_t i = 0; i < 95; i++) {
        fill(row, i);
        assert_int_equal(rt_store_append(s, row), 0);
    }
    assert_int_equal(rt_store_first(s), 0);
    fill(row, 3);
    assert_int_equal(rt_store_row(s, 3, back), 0);
    assert_true(back[RT_COL_TIMESTAMP] == row[RT_COL_TIMESTAMP]);
    rt_store_pin(s, false);
    fill(row, 95);
    rt_store_append(s, row);
    assert_int_equal(rt_store_first(s), 0); /* still pinned once */
    rt_store_pin(s, false);
    rt_store_pin(s, false); /* one more unpin than pins: ignored */
    for (uint64_t i = 96; i < 101; i++) {
        fill(row, i);
        assert_int_equal(rt_store_append(s, row), 0);
    }
    uint64_t kept = rt_store_count(s) - rt_store_first(s);
    assert_true(kept >= 10 && kept <= 20);
    fill(row, 100);
    assert_int_equal(rt_store_row(s, 100, back), 0);
    assert_true(back[RT_COL_TIMESTAMP] == row[RT_COL_TIMESTAMP]);

    fill(row, 101);
    row[RT_COL_CPU_CORES] = 1e300;
    row[RT_COL_PROC_CORES] = -1e300;
    rt_store_append(s, row);
    assert_int_equal(rt_store_row(s, 101, back), 0);
    assert_true(isinf(back[RT_COL_CPU_CORES]) && back[RT_COL_CPU_CORES] > 0);
    assert_true(isinf(back[RT_COL_PROC_CORES]) && back[RT_COL_PROC_CORES] < 0);
    rt_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_and_float_columns),
        cmocka_unit_test(oldest_blocks_dropped),
        cmocka_unit_test(first_block_grows),
        cmocka_unit_test(column_names),
        cmocka_unit_test(columns_of_the_schema),
        cmocka_unit_test(row_gives_the_record),
        cmocka_unit_test(huge_pinned_and_overflowing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
