/* test_notes_gpu.c - the notes of what a job's GPUs did (notes.c, 0.19): busy but idle, tensor
 * cores idle, memory-bound, starved by the CPU, held and never used; each on the run's figures as
 * the H200 measured them (the loads of issue 65), each threshold from both sides, a figure
 * missing (no GPM) or shared with other processes, and never two notes for one fact. */
#include "unit.h"

#include <math.h>

#include "analysis/record.h"
#include "resource_tracker.h"

/* What one GPU showed under a load: NVML utilization, SM activity, tensor, DRAM, FP32 (percent). */
typedef struct load {
    double util, sm, tensor, dram, fp32;
} load;

/* The H200's figures (../shared/gpu-check's table). */
static const load BF16_MATMUL = {99, 95.1, 92.4, 16.0, 0};
static const load DEVICE_COPY = {100, 98.9, 0, 88.3, 0};
static const load SMALL_MATMULS = {42, 15.9, 0, 0.5, 2.3};

/* A record of a tree (pid 7) at ts covering 1 s on one GPU showing l, holding 2 GiB there, its
 * own group's memory known (no memory note): every other figure null. */
static rt_record gpu_rec(double ts, load l, double cores)
{
    rt_record r;
    rt_record_null(&r);
    r.timestamp_secs = ts;
    r.interval_secs = 1;
    r.process_pid = 7;
    r.process_alive = 1;
    r.process_cores = cores;
    r.process_cgroup_exclusive = 1;
    r.process_unreclaimable_peak_mib = 600;
    r.gpu_count = 1;
    r.process_gpu_usage = l.util / 100;
    r.process_gpu_utilized = 1;
    r.process_gpus_busy = l.util > 0;
    r.process_gpu_vram_mib = 2048;
    r.gpu_sm_active_pct = l.sm;
    r.gpu_tensor_active_pct = l.tensor;
    r.gpu_dram_active_pct = l.dram;
    r.gpu_fp32_active_pct = l.fp32;
    r.gpu_fp16_active_pct = 0;
    r.gpu_fp64_active_pct = 0;
    r.gpu_work_shared = 0;
    return r;
}

/* The summary of the records rs[0..n), copied out of the stats (its pointers cleared). */
static rt_summary summary_of(const rt_record *rs, size_t n)
{
    rt_stats *st = rt_stats_new();
    assert_non_null(st);
    for (size_t i = 0; i < n; i++)
        rt_stats_add(st, &rs[i]);
    rt_summary s = *rt_stats_summary(st);
    rt_stats_free(st);
    s.usage = NULL;
    s.cores = NULL;
    return s;
}

/* A 10 s job whose GPU showed l all along, its CPU at 0.2 core. */
static rt_summary gpu_run(load l)
{
    rt_record r[10];
    for (int i = 0; i < 10; i++)
        r[i] = gpu_rec(100 + i, l, 0.2);
    return summary_of(r, 10);
}

/* The notes of s into n[], and how many. */
static size_t notes_of(const rt_summary *s, rt_note *n)
{
    return rt_summary_notes(s, NULL, n, RT_NOTES_MAX);
}

/* The note of kind in n[0..count), or NULL; never two of a kind, each one line. */
static const rt_note *find(const rt_note *n, size_t count, int kind)
{
    const rt_note *found = NULL;
    for (size_t i = 0; i < count; i++) {
        assert_null(strchr(n[i].text, '\n'));
        if (n[i].kind == kind) {
            assert_null(found);
            found = &n[i];
        }
    }
    return found;
}

/* The text of s's note of kind, or NULL. */
static const char *note_text(const rt_summary *s, int kind)
{
    static rt_note n[RT_NOTES_MAX];
    const rt_note *a = find(n, notes_of(s, n), kind);
    return a ? a->text : NULL;
}

/* How many of s's notes are of the five GPU work kinds. */
static size_t gpu_work_notes(const rt_summary *s)
{
    rt_note n[RT_NOTES_MAX];
    size_t k = notes_of(s, n), count = 0;
    for (size_t i = 0; i < k; i++)
        count += n[i].kind >= RT_NOTE_GPU_BUSY_IDLE && n[i].kind <= RT_NOTE_GPU_HELD_UNUSED;
    return count;
}

static void names(void **state)
{
    (void)state;
    assert_string_equal(rt_note_kind_name(RT_NOTE_GPU_BUSY_IDLE), "gpu_busy_idle");
    assert_string_equal(rt_note_kind_name(RT_NOTE_GPU_TENSOR_IDLE), "gpu_tensor_idle");
    assert_string_equal(rt_note_kind_name(RT_NOTE_GPU_MEMORY_BOUND), "gpu_memory_bound");
    assert_string_equal(rt_note_kind_name(RT_NOTE_GPU_STARVED), "gpu_starved");
    assert_string_equal(rt_note_kind_name(RT_NOTE_GPU_HELD_UNUSED), "gpu_held_unused");
    assert_string_equal(rt_note_kind_name(1000), "note");
}

static void busy_but_idle(void **state)
{
    (void)state;
    rt_summary s = gpu_run(SMALL_MATMULS);
    assert_string_equal(note_text(&s, RT_NOTE_GPU_BUSY_IDLE),
                        "the GPU was busy 42% of the time (a kernel running) but its SMs were active 16%: many small "
                        "kernels; batch them or use CUDA graphs");
    /* the H200's other loads keep their SMs as busy as their kernels */
    rt_summary t = gpu_run(BF16_MATMUL);
    assert_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    t = gpu_run(DEVICE_COPY);
    assert_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    /* busy from 25% of the time */
    t = s;
    t.process_gpu_usage.mean = 0.25;
    t.gpu_sm_active_pct.mean = 12.4;
    assert_non_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    t.process_gpu_usage.mean = 0.249;
    assert_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    /* the SMs active under half of it */
    t.process_gpu_usage.mean = 0.25;
    t.gpu_sm_active_pct.mean = 12.5;
    assert_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    /* two GPUs: the utilization per GPU (0.8 GPU of 2: 40% each) */
    t = s;
    t.process_gpus_used = 2;
    t.process_gpu_usage.mean = 0.8;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_BUSY_IDLE), "busy 40% of the time"));
    /* no GPM: no SM figure, no note (the summary's "utilization only" line says it) */
    t = s;
    t.gpu_sm_active_pct.mean = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    t = s;
    t.process_gpu_usage.mean = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_BUSY_IDLE));
    /* shared: the device's SM activity, never below the job's own: the note stands, said so */
    t = s;
    t.gpu_work_shared = 1;
    assert_string_equal(note_text(&t, RT_NOTE_GPU_BUSY_IDLE),
                        "the GPU was busy 42% of the time (a kernel running) but its SMs were active 16% (the "
                        "device's figure: other processes shared it; the job's own is at most that): many small "
                        "kernels; batch them or use CUDA graphs");
    /* no tracked tree: the notes speak of a job */
    t = s;
    t.has_process = 0;
    assert_int_equal(gpu_work_notes(&t), 0);
}

static void tensor_idle(void **state)
{
    (void)state;
    rt_summary s = gpu_run(SMALL_MATMULS);
    assert_string_equal(note_text(&s, RT_NOTE_GPU_TENSOR_IDLE),
                        "tensor cores idle (0%) while the SMs did FP32 math (FP32 units 2.3% busy, SMs 16% active): "
                        "mixed precision (bf16/fp16 autocast, TF32) would use them");
    /* the bf16 matmuls use them; the copy does no math at all (SMs 99% active, FP32 0) */
    rt_summary t = gpu_run(BF16_MATMUL);
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t = gpu_run(DEVICE_COPY);
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    /* large fp32 matmuls (scripted: SMs and FP32 units busy, no tensor): the note alone */
    t = gpu_run((load){100, 96, 0, 30, 70});
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE), "FP32 units 70% busy, SMs 96% active"));
    assert_int_equal(gpu_work_notes(&t), 1);
    /* idle under 1%; FP32 math from 1% */
    t = s;
    t.gpu_tensor_active_pct.mean = 0.99;
    assert_non_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t.gpu_tensor_active_pct.mean = 1.0;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t = s;
    t.gpu_fp32_active_pct.mean = 1.0;
    assert_non_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t.gpu_fp32_active_pct.mean = 0.99;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    /* FP32 not the busiest math unit: an FP64 (or FP16) code is no case for mixed precision */
    t = s;
    t.gpu_fp64_active_pct.mean = 30;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t = s;
    t.gpu_fp16_active_pct.mean = 3;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    /* FP16 and FP64 unknown: FP32's figure decides; no SM figure: the text leaves it out */
    t = s;
    t.gpu_fp16_active_pct.mean = NAN;
    t.gpu_fp64_active_pct.mean = NAN;
    t.gpu_sm_active_pct.mean = NAN;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE), "(FP32 units 2.3% busy): "));
    /* a figure missing, a GPU never used, a shared GPU (the FP32 work may be another's): none */
    t = s;
    t.gpu_tensor_active_pct.mean = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t = s;
    t.gpu_fp32_active_pct.mean = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t = s;
    t.process_gpu_usage.peak = 0;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
    t = s;
    t.gpu_work_shared = 1;
    assert_null(note_text(&t, RT_NOTE_GPU_TENSOR_IDLE));
}

static void memory_bound(void **state)
{
    (void)state;
    /* the copy: DRAM 88% with the SMs 99% active (waiting on memory) and no math: memory-bound */
    rt_summary s = gpu_run(DEVICE_COPY);
    assert_string_equal(note_text(&s, RT_NOTE_GPU_MEMORY_BOUND),
                        "device memory bandwidth at 88% with the math units at most 0% busy (tensor cores, FP32, "
                        "FP16, FP64): memory-bound; fuse kernels, use larger batches, or a GPU with more bandwidth");
    assert_int_equal(gpu_work_notes(&s), 1);
    rt_summary t = gpu_run(BF16_MATMUL);
    assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    assert_int_equal(gpu_work_notes(&t), 0);
    t = gpu_run(SMALL_MATMULS);
    assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    /* high bandwidth from 50% */
    t = s;
    t.gpu_dram_active_pct.mean = 50;
    assert_non_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    t.gpu_dram_active_pct.mean = 49.9;
    assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    /* the busiest math unit under half the bandwidth: each unit in turn */
    double *unit[] = {&t.gpu_tensor_active_pct.mean, &t.gpu_fp32_active_pct.mean, &t.gpu_fp16_active_pct.mean,
                      &t.gpu_fp64_active_pct.mean};
    for (size_t i = 0; i < sizeof unit / sizeof unit[0]; i++) {
        t = s;
        t.gpu_dram_active_pct.mean = 80;
        *unit[i] = 39.9;
        assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND), "at 80% with the math units at most 40% busy"));
        *unit[i] = 40;
        assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    }
    /* FP16 and FP64 unknown: tensor and FP32 decide; either of those unknown: none */
    t = s;
    t.gpu_fp16_active_pct.mean = NAN;
    t.gpu_fp64_active_pct.mean = NAN;
    assert_non_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    t.gpu_tensor_active_pct.mean = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    t = s;
    t.gpu_dram_active_pct.mean = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
    /* shared: the bandwidth may be another process's */
    t = s;
    t.gpu_work_shared = 1;
    assert_null(note_text(&t, RT_NOTE_GPU_MEMORY_BOUND));
}

static void starved(void **state)
{
    (void)state;
    /* 6 s of a core and a half with the GPU idle (held, nothing running), then 4 s of bf16
     * matmuls with the CPU quiet: the spine's seconds, 60% of the run */
    const load idle = {0, 0, 0, 0, 0};
    rt_record r[10];
    for (int i = 0; i < 10; i++)
        r[i] = i < 6 ? gpu_rec(100 + i, idle, 1.5) : gpu_rec(100 + i, BF16_MATMUL, 0.1);
    rt_summary s = summary_of(r, 10);
    assert_true(s.gpu_idle_cpu_busy_secs == 6);
    assert_string_equal(note_text(&s, RT_NOTE_GPU_STARVED),
                        "the job's GPU idled 60% of the run (6.0 s of 10.0 s) while its CPU was busy (a quarter of a "
                        "core or more): the input pipeline starves it (more DataLoader workers, pin_memory, prefetch)");
    assert_null(note_text(&s, RT_NOTE_GPU_HELD_UNUSED)); /* it used its GPU */
    /* the CPU busy from a quarter of a core (a single-threaded pipeline reads 0.73-1.15 a record
     * on a quiet machine, 0.3-0.6 on a loaded one) */
    r[0].process_cores = 0.25;
    r[1].process_cores = 0.24;
    assert_true(summary_of(r, 10).gpu_idle_cpu_busy_secs == 5);
    /* the same CPU with the GPU busy all along: none */
    for (int i = 0; i < 6; i++)
        r[i] = gpu_rec(100 + i, BF16_MATMUL, 1.5);
    rt_summary t = summary_of(r, 10);
    assert_true(t.gpu_idle_cpu_busy_secs == 0);
    assert_null(note_text(&t, RT_NOTE_GPU_STARVED));
    /* from 30% of the run */
    t = s;
    t.gpu_idle_cpu_busy_secs = 3;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_STARVED), "idled 30% of the run (3.0 s of 10.0 s)"));
    t.gpu_idle_cpu_busy_secs = 2.99;
    assert_null(note_text(&t, RT_NOTE_GPU_STARVED));
    /* several GPUs */
    t = s;
    t.process_gpus_used = 2;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_STARVED), "GPUs idled 60%"));
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_STARVED), "starves them"));
    /* only a job that used a GPU (one that held it only: the held note); the seconds unknown */
    t = s;
    t.process_gpus_busy = 0;
    assert_null(note_text(&t, RT_NOTE_GPU_STARVED));
    t.process_gpus_busy = NAN; /* an older file: its GPU usage says it */
    assert_non_null(note_text(&t, RT_NOTE_GPU_STARVED));
    t.process_gpu_usage.peak = 0;
    assert_null(note_text(&t, RT_NOTE_GPU_STARVED));
    t = s;
    t.gpu_idle_cpu_busy_secs = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_STARVED));
}

static void held_unused(void **state)
{
    (void)state;
    const load idle = {0, 0, 0, 0, 0};
    rt_summary s = gpu_run(idle);
    assert_string_equal(note_text(&s, RT_NOTE_GPU_HELD_UNUSED),
                        "the job held 2 GiB of VRAM on a GPU and never used it (GPU usage and SM activity 0 all "
                        "run): drop the GPU (or the CUDA init in a process that needs none)");
    assert_int_equal(gpu_work_notes(&s), 1);
    assert_null(note_text(&s, RT_NOTE_GPU_IDLE));
    /* used: none */
    rt_summary t = gpu_run(SMALL_MATMULS);
    assert_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    t = s;
    t.process_gpu_usage.peak = 0.01;
    assert_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    t = s;
    t.process_gpus_busy = 1;
    assert_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    /* the SMs: under 1% at their peak */
    t = s;
    t.gpu_sm_active_pct.peak = 0.99;
    assert_non_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    t.gpu_sm_active_pct.peak = 1;
    assert_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    /* no GPM, or a GPU shared (its SMs busy with another's work): the job's usage says it */
    t.gpu_work_shared = 1;
    t.gpu_sm_active_pct.peak = 60;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_HELD_UNUSED), "(GPU usage 0 all run)"));
    t = s;
    t.gpu_sm_active_pct.peak = NAN;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_HELD_UNUSED), "(GPU usage 0 all run)"));
    /* nothing held, or the usage unknown: none */
    t = s;
    t.process_gpu_vram_mib.peak = 0;
    assert_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    t = s;
    t.process_gpu_usage.peak = NAN;
    assert_null(note_text(&t, RT_NOTE_GPU_HELD_UNUSED));
    /* two GPUs held */
    t = s;
    t.process_gpus_used = 2;
    t.process_gpu_vram_mib.peak = 1536;
    assert_non_null(strstr(note_text(&t, RT_NOTE_GPU_HELD_UNUSED),
                           "held 1.5 GiB of VRAM on 2 GPUs and never used them (GPU usage and SM activity 0 all run): "
                           "drop the GPUs"));
    /* asked for: one note, this one, never "ask for 1" beside it */
    t = s;
    t.requested_gpus = 2;
    t.requested_gpus_from = "SLURM_GPUS";
    rt_note n[RT_NOTES_MAX];
    size_t k = notes_of(&t, n);
    assert_string_equal(find(n, k, RT_NOTE_GPU_HELD_UNUSED)->text,
                        "the job asked for 2 GPUs (SLURM_GPUS) and held 2 GiB of VRAM on a GPU and never used it (GPU "
                        "usage and SM activity 0 all run): ask for none (or the CUDA init in a process that needs "
                        "none)");
    assert_null(find(n, k, RT_NOTE_GPU_UNUSED));
    /* a job on no GPU of the machine's: the idle note, not this one */
    t = s;
    t.process_gpus_used = 0;
    t.process_gpu_vram_mib.peak = 0;
    k = notes_of(&t, n);
    assert_non_null(find(n, k, RT_NOTE_GPU_IDLE));
    assert_null(find(n, k, RT_NOTE_GPU_HELD_UNUSED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),        cmocka_unit_test(busy_but_idle), cmocka_unit_test(tensor_idle),
        cmocka_unit_test(memory_bound), cmocka_unit_test(starved),       cmocka_unit_test(held_unused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
