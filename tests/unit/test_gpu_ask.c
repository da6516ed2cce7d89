/* test_gpu_ask.c - the GPU ask (gpu_ask.c, recommend.c): the table of GPU models read whole from
 * data/gpu-models.csv against the one compiled in, the size rule at its boundaries, the ask of a
 * run on one GPU and of runs holding several, the words, the notes, Kubernetes' node affinity and
 * SLURM's words, and an older caller's shorter struct. */
#include "unit.h"

#include <math.h>

#include "resource_tracker.h"
#include "analysis/gpu_ask.h"

/* ---- the table ----------------------------------------------------------------------------- */

/* The CSV file as shipped, every row's fields checked, each against the compiled row of the same
 * place; the models the GPU ask names are all there. */
static void table_whole(void **state)
{
    (void)state;
    size_t len;
    const char *csv = fixture_text("../../data/gpu-models.csv", &len);
    assert_true(len > 0);
    char *copy = strdup(csv), *save = NULL;
    size_t row = 0;
    bool header = false, source_line = false;
    for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        if (strncmp(ln, "# source: ", 10) == 0)
            source_line = true;
        if (ln[0] == '#' || !ln[0])
            continue;
        char *f[8] = {0}, *fs = NULL;
        size_t n = 0;
        for (char *t = strtok_r(ln, ",", &fs); t && n < 8; t = strtok_r(NULL, ",", &fs))
            f[n++] = t;
        assert_int_equal(n, 6);
        if (!header) {
            assert_string_equal(f[0], "vendor");
            assert_string_equal(f[3], "memory_mib");
            header = true;
            continue;
        }
        assert_true(row < rt_gpu_models_count);
        const rt_gpu_model_row *r = &rt_gpu_models[row++];
        assert_true(strcmp(f[0], "NVIDIA") == 0 || strcmp(f[0], "AMD") == 0);
        assert_string_equal(f[0], r->vendor);
        assert_string_equal(f[1], r->model);
        char *end;
        double gb = strtod(f[2], &end), mib = strtod(f[3], NULL);
        assert_true(*end == '\0' && gb == r->memory_gb && mib == r->memory_mib);
        assert_true(gb >= 8 && gb <= 512 && gb == floor(gb));
        /* the model as sold names its memory: "A100 40GB" */
        char tail[32];
        snprintf(tail, sizeof tail, " %.0fGB", gb);
        assert_true(strlen(r->model) > strlen(tail));
        assert_string_equal(r->model + strlen(r->model) - strlen(tail), tail);
        /* what the driver reports is the marketed size in GB or GiB, less what it keeps: between
         * 90% of the GB as MiB and the GB as GiB */
        double as_mib = gb * 1e9 / 1048576.0;
        assert_true(mib == floor(mib) && mib >= 0.9 * as_mib && mib <= gb * 1024);
        assert_true(strcmp(r->mib_from, "nvidia-smi") == 0 || strcmp(r->mib_from, "rocm-smi") == 0 ||
                    strcmp(r->mib_from, "marketed") == 0);
        if (strcmp(r->mib_from, "marketed") == 0)
            assert_true(mib == floor(as_mib));
        if (strcmp(r->mib_from, "nvidia-smi") == 0)
            assert_string_equal(r->vendor, "NVIDIA");
        assert_true(strncmp(r->source, "https://", 8) == 0 && strlen(r->source) > 20 && !strchr(r->source, ' '));
        for (size_t k = 0; k + 1 < row; k++) /* one row per model and memory size */
            assert_true(strcmp(rt_gpu_models[k].model, r->model) != 0);
    }
    free(copy);
    assert_true(header && source_line && rt_gpu_models_source[0]);
    assert_int_equal(row, rt_gpu_models_count);
    static const char *const want[] = {
        "T4 16GB",        "L4 24GB",           "A10 24GB",        "A10G 24GB",      "A30 24GB",       "A40 48GB",
        "L40 48GB",       "L40S 48GB",         "V100 16GB",       "V100 32GB",      "A100 40GB",      "A100 80GB",
        "H100 PCIe 80GB", "H100 SXM 80GB",     "H100 NVL 94GB",   "H200 141GB",     "GH200 96GB",     "B200 180GB",
        "RTX 6000 Ada 48GB", "RTX A6000 48GB", "MI210 64GB",      "MI250X GCD 64GB", "MI300X 192GB"};
    for (size_t i = 0; i < RT_ARRAY_LEN(want); i++) {
        bool found = false;
        for (size_t k = 0; k < rt_gpu_models_count; k++)
            found |= strcmp(rt_gpu_models[k].model, want[i]) == 0;
        if (!found)
            fail_msg("%s is not in data/gpu-models.csv", want[i]);
    }
}

/* A few figures as nvidia-smi shows them, as the issue gives them. */
static double mib_of(const char *model)
{
    for (size_t k = 0; k < rt_gpu_models_count; k++)
        if (strcmp(rt_gpu_models[k].model, model) == 0)
            return rt_gpu_models[k].memory_mib;
    return NAN;
}

static void table_figures(void **state)
{
    (void)state;
    assert_true(mib_of("A100 40GB") == 40960 && mib_of("A100 80GB") == 81920 && mib_of("H100 SXM 80GB") == 81559);
    assert_true(mib_of("H200 141GB") == 143771 && mib_of("L40S 48GB") == 46068 && mib_of("L4 24GB") == 23034);
    assert_true(mib_of("A10G 24GB") == 23028 && mib_of("T4 16GB") == 15360);
    assert_true(mib_of("H200 141GB") * 1048576.0 == 150754820096.0); /* the fake H200's mem_total */
}

/* ---- the size rule ------------------------------------------------------------------------- */

static void size_rule(void **state)
{
    (void)state;
    const char *m[4];
    size_t count;
    /* exactly at a size: that size; a hair above: the next one */
    assert_int_equal(rt_gpu_ask_size(40960, m, 4, &count), 40960);
    assert_string_equal(m[0], "A100 40GB");
    assert_string_equal(m[1], "L40S 48GB"); /* then the 48 GB ones, in the table's order */
    assert_string_equal(m[2], "L40 48GB");
    assert_string_equal(m[3], "A40 48GB");
    size_t bigger = 0;
    for (size_t k = 0; k < rt_gpu_models_count; k++)
        bigger += rt_gpu_models[k].memory_mib >= 40960;
    assert_int_equal(count, bigger);
    assert_int_equal(rt_gpu_ask_size(40960.5, m, 4, &count), 46068);
    assert_string_equal(m[0], "L40S 48GB");
    assert_int_equal(rt_gpu_ask_size(40959.9995, m, 4, NULL), 40960); /* a product of doubles, a hair over */
    assert_int_equal(rt_gpu_ask_size(46068.01, m, 4, NULL), 49140);
    assert_string_equal(m[0], "RTX 6000 Ada 48GB");
    /* the smallest: the T4's; the largest: the MI300X's */
    assert_int_equal(rt_gpu_ask_size(1, m, 4, NULL), 15360);
    assert_string_equal(m[0], "T4 16GB");
    assert_int_equal(rt_gpu_ask_size(196592, m, 4, &count), 196592);
    assert_int_equal(count, 1);
    assert_string_equal(m[0], "MI300X 192GB");
    assert_null(m[1]);
    /* above the table: the need rounded up to whole GiB, and no model */
    assert_int_equal(rt_gpu_ask_size(196593, m, 4, &count), 196608); /* 192 GiB */
    assert_int_equal(count, 0);
    assert_null(m[0]);
    assert_int_equal(rt_gpu_ask_size(0, m, 4, &count), 0);
    assert_int_equal(rt_gpu_ask_size(NAN, m, 4, &count), 0);
    assert_int_equal(count, 0);
    /* one model wanted */
    assert_int_equal(rt_gpu_ask_size(81560, m, 1, &count), 81920);
    assert_string_equal(m[0], "A100 80GB");
}

/* ---- the recommendation ---------------------------------------------------------------------- */

/* A run on gpus GPUs of had MiB each, busy on busy of them (NaN: unknown), whose tree's VRAM need
 * was need MiB and held per_gpu MiB at most on one GPU, its SMs sm% active (NaN: no GPM) and its
 * GPU usage usage GPUs on the mean. */
static rt_summary gpu_run(double gpus, double busy, double need, double per_gpu, double had, double sm, double usage)
{
    rt_summary s;
    memset(&s, 0, sizeof s);
    s.samples = 10;
    s.duration_secs = 10;
    s.has_process = 1;
    s.process_cores.mean = 1;
    s.memory_need = (rt_need){1000, RT_NEED_PSS, 1};
    s.vram_need = (rt_need){need, RT_NEED_NVML_PEAK, 0};
    s.cpu_quota_cores = NAN;
    s.max_slowdown_pct = NAN;
    s.process_gpus_used = gpus;
    s.process_gpus_busy = busy;
    s.process_gpu_vram_per_gpu_peak_mib = per_gpu;
    s.gpu_count = gpus;
    s.gpu_vram_total_mib = had * gpus;
    s.gpu_sm_active_pct.mean = sm;
    s.process_gpu_usage.mean = usage;
    return s;
}

#define H200_MIB 143771.0
#define JOB_MIB (35540000000.0 / 1048576.0) /* 33.1 GiB: the fake's children mem=35540000000 */

/* The job: 33.1 GiB at its peak on a 141 GiB H200, its SMs 15.9% active. */
static void one_gpu(void **state)
{
    (void)state;
    rt_summary s = gpu_run(1, 1, JOB_MIB, JOB_MIB - 100, H200_MIB, 15.9, 0.95);
    const rt_summary *runs[] = {&s};
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu, 1);
    assert_int_equal(r.gpu_held, 1);
    assert_int_equal(r.gpu_busy, 1);
    /* accounting's peak (the need) beats the sampled one on one GPU */
    assert_true(r.vram_per_gpu_need_mib == JOB_MIB);
    assert_int_equal(r.vram_per_gpu_source, RT_NEED_NVML_PEAK);
    /* 33.1 GiB x 1.2 = 39.7 GiB: within the A100 40GB's 40960 MiB */
    assert_true(JOB_MIB * 1.2 <= 40960 && JOB_MIB * 1.2 > 32768);
    assert_int_equal(r.vram_per_gpu_mib, 40960);
    assert_true(r.vram_per_gpu_gib == 40);
    assert_string_equal(r.gpu_models[0], "A100 40GB");
    assert_string_equal(r.gpu_models[1], "L40S 48GB");
    assert_true(r.gpu_memory_had_mib == H200_MIB);
    assert_true(r.gpu_smaller);
    char line[1024];
    size_t len = rt_recommendation_gpu_words(&r, line, sizeof line);
    assert_int_equal(len, strlen(line));
    assert_string_equal(line, "1 GPU with >= 40 GiB (peak 33.1 GiB)");
    rt_format_recommendation(&r, RT_SCHED_K8S, line, sizeof line);
    assert_string_equal(line, "resources: {requests: {cpu: \"1\", memory: \"2048Mi\", nvidia.com/gpu: \"1\"}, limits: "
                              "{nvidia.com/gpu: \"1\"}}; affinity: {nodeAffinity: "
                              "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
                              "[{key: nvidia.com/gpu.memory, operator: Gt, values: [\"40959\"]}]}]}}}\n");
    rt_format_recommendation(&r, RT_SCHED_SLURM, line, sizeof line);
    assert_string_equal(line, "--cpus-per-task=1 --mem=2048M --gres=gpu:1\n");
    rt_format_recommendation(&r, RT_SCHED_METAFLOW, line, sizeof line);
    assert_string_equal(line, "@resources(cpu=1, memory=2148, gpu=1)\n");
    /* the notes: the models, SLURM's way to a GPU of that memory, the smaller GPU */
    size_t n = rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line);
    assert_int_equal(n, strlen(line));
    size_t larger = 0;
    for (size_t k = 0; k < rt_gpu_models_count; k++)
        larger += rt_gpu_models[k].memory_mib >= 40960;
    char want[256];
    snprintf(want, sizeof want,
             "GPUs with >= 40 GiB: A100 40GB, L40S 48GB, L40 48GB, A40 48GB (and %zu larger)\n"
             "the job held 33.1 GiB of its GPU's 140.4 GiB, its SMs 15.9%% active: a 40 GiB GPU would do\n",
             larger - 4);
    assert_string_equal(line, want);
    /* each scheduler's way to the memory */
    n = rt_recommendation_gpu_scheduler_note(&r, RT_SCHED_SLURM, line, sizeof line);
    assert_int_equal(n, strlen(line));
    assert_string_equal(line, "--gres=gpu:1 takes any GPU: add --constraint=FEATURE (the site's feature name for GPUs "
                              "with >= 40 GiB) or ask --gres=gpu:TYPE:1 (sinfo -o \"%G %f\" lists both)");
    rt_recommendation_gpu_scheduler_note(&r, RT_SCHED_METAFLOW, line, sizeof line);
    assert_non_null(strstr(line, "@resources(gpu=1) has no GPU memory knob"));
    rt_recommendation_gpu_scheduler_note(&r, RT_SCHED_K8S, line, sizeof line);
    assert_non_null(strstr(line, "nvidia.com/gpu.memory"));
    assert_int_equal(rt_recommendation_gpu_scheduler_note(&r, (rt_scheduler)7, line, sizeof line), 0);
    /* with the prices of the smaller GPU's cheapest server and of one like this */
    rt_server small = RT_SERVER_INIT, like = RT_SERVER_INIT;
    strcpy(small.vendor_id, "aws");
    strcpy(small.api_reference, "g6e.xlarge");
    small.price_usd_per_hour = 1.861;
    strcpy(like.vendor_id, "nebius");
    strcpy(like.api_reference, "gpu-h200x1");
    like.price_usd_per_hour = 3.5;
    rt_recommendation_gpu_notes(&r, &small, &like, line, sizeof line);
    assert_non_null(strstr(line, "a 40 GiB GPU would do: the cheapest server with one, aws g6e.xlarge, costs $1.861/h "
                                 "against $3.50/h for one like this (-47%)\n"));
    like.price_usd_per_hour = NAN; /* no price for one like this: only the smaller GPU */
    rt_recommendation_gpu_notes(&r, &small, &like, line, sizeof line);
    assert_non_null(strstr(line, "a 40 GiB GPU would do\n"));
    like.price_usd_per_hour = 3.5;
    /* a busy GPU is no smaller one's: the SMs 60% active */
    s.gpu_sm_active_pct.mean = 60;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_false(r.gpu_smaller);
    rt_recommendation_gpu_notes(&r, &small, &like, line, sizeof line);
    assert_null(strstr(line, "would do"));
    /* without GPM, the GPU's usage decides: 0.2 GPUs on the mean is 20% */
    s.gpu_sm_active_pct.mean = NAN;
    s.process_gpu_usage.mean = 0.2;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_true(r.gpu_smaller);
    rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line);
    assert_non_null(strstr(line, "its GPU 20.0% active: a 40 GiB GPU would do\n"));
    /* more than half the GPU's memory: no smaller one */
    s.gpu_vram_total_mib = 60000;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_false(r.gpu_smaller);
}

/* Two GPUs held, memory on both: the work decides how many are asked, the larger one's memory
 * each's. */
static void several_gpus(void **state)
{
    (void)state;
    rt_summary s = gpu_run(2, 1, 30000, 20000, 81559, 40, 0.5);
    const rt_summary *runs[] = {&s};
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu_held, 2);
    assert_int_equal(r.gpu_busy, 1);
    assert_int_equal(r.gpu, 1);
    assert_true(r.vram_per_gpu_need_mib == 20000); /* the most on one GPU, not the tree's 30000 */
    assert_int_equal(r.vram_per_gpu_source, RT_NEED_VRAM);
    assert_int_equal(r.vram_per_gpu_mib, 24576); /* 20000 x 1.2 = 24000: the A30's 24 GiB */
    char line[1024];
    rt_recommendation_gpu_words(&r, line, sizeof line);
    assert_string_equal(line, "1 GPU with >= 24 GiB (peak 19.5 GiB)");
    rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line);
    assert_non_null(strstr(line, "2 GPUs held, 1 did work: ask for 1\n"));
    /* busy on both: both asked, each with the larger one's memory */
    s.process_gpus_busy = 2;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu, 2);
    rt_recommendation_gpu_words(&r, line, sizeof line);
    assert_string_equal(line, "2 GPUs with >= 24 GiB each (peak 19.5 GiB on one)");
    rt_format_recommendation(&r, RT_SCHED_SLURM, line, sizeof line);
    assert_string_equal(line, "--cpus-per-task=1 --mem=2048M --gres=gpu:2\n");
    rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line);
    assert_null(strstr(line, "did work"));
    /* none busy: one asked all the same, and said */
    s.process_gpus_busy = 0;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu, 1);
    rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line);
    assert_non_null(strstr(line, "2 GPUs held, none did work: ask for 1\n"));
    /* busy unknown (a recording before 0.19): as many as held; no figure per GPU: the whole need */
    s.process_gpus_busy = NAN;
    s.process_gpu_vram_per_gpu_peak_mib = NAN;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu, 2);
    assert_int_equal(r.gpu_busy, 2);
    assert_true(r.vram_per_gpu_need_mib == 30000);
    assert_int_equal(r.vram_per_gpu_mib, 40960); /* 36000 */
    /* two runs: the larger of each's figures */
    rt_summary t = gpu_run(1, 1, 35000, NAN, 81559, 40, 0.5);
    const rt_summary *two[] = {&s, &t};
    assert_int_equal(rt_recommend(two, 2, &r), RT_OK);
    assert_true(r.vram_per_gpu_need_mib == 35000);
    assert_int_equal(r.gpu, 2);
    assert_true(r.headroom_pct == 15);
    assert_int_equal(r.vram_per_gpu_mib, 40960); /* 35000 x 1.15 = 40250 */
}

/* No GPU, no VRAM figure, and an older caller's struct. */
static void without(void **state)
{
    (void)state;
    rt_summary s = gpu_run(0, 0, NAN, NAN, NAN, NAN, NAN);
    s.vram_need.source = RT_NEED_UNKNOWN;
    const rt_summary *runs[] = {&s};
    rt_recommendation r = RT_RECOMMENDATION_INIT;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu, 0);
    assert_int_equal(r.vram_per_gpu_mib, 0);
    assert_null(r.gpu_models[0]);
    char line[512] = "x";
    assert_int_equal(rt_recommendation_gpu_words(&r, line, sizeof line), 0);
    assert_string_equal(line, "");
    assert_int_equal(rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line), 0);
    assert_int_equal(rt_recommendation_gpu_scheduler_note(&r, RT_SCHED_SLURM, line, sizeof line), 0);
    /* a GPU but no VRAM figure: the count alone */
    s = gpu_run(1, 1, NAN, NAN, 81559, NAN, NAN);
    s.vram_need.source = RT_NEED_UNKNOWN;
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.gpu, 1);
    assert_int_equal(r.vram_per_gpu_mib, 0);
    rt_recommendation_gpu_words(&r, line, sizeof line);
    assert_string_equal(line, "1 GPU");
    rt_format_recommendation(&r, RT_SCHED_K8S, line, sizeof line);
    assert_null(strstr(line, "affinity"));
    /* a 0.18 caller's struct: no GPU ask read or written past its end */
    s = gpu_run(1, 1, JOB_MIB, NAN, H200_MIB, 10, 0.5);
    rt_recommendation old;
    memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(rt_recommendation, gpu_held);
    assert_int_equal(rt_recommend(runs, 1, &old), RT_OK);
    assert_int_equal(old.gpu, 1);
    assert_int_equal(old.gpu_held, 0x5a5a5a5a5a5a5a5a); /* untouched */
    assert_int_equal(rt_recommendation_gpu_words(&old, line, sizeof line), 0);
    rt_format_recommendation(&old, RT_SCHED_K8S, line, sizeof line);
    assert_null(strstr(line, "affinity"));
    /* GiB rounded down: an L40S class reads 44.9 GiB, never 45 */
    s = gpu_run(1, 1, 38000, NAN, H200_MIB, 10, 0.5);
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.vram_per_gpu_mib, 46068);
    rt_recommendation_gpu_words(&r, line, sizeof line);
    assert_string_equal(line, "1 GPU with >= 44.9 GiB (peak 37.1 GiB)");
    rt_format_recommendation(&r, RT_SCHED_K8S, line, sizeof line);
    assert_non_null(strstr(line, "values: [\"46067\"]"));
    /* above every GPU of the table */
    s = gpu_run(1, 1, 180000, NAN, H200_MIB, 10, 0.5);
    assert_int_equal(rt_recommend(runs, 1, &r), RT_OK);
    assert_int_equal(r.vram_per_gpu_mib, rt_round_memory_mib(180000 * 1.2));
    assert_int_equal(r.gpu_models_count, 0);
    assert_false(r.gpu_smaller);
    rt_recommendation_gpu_notes(&r, NULL, NULL, line, sizeof line);
    assert_non_null(strstr(line, "no GPU model of the table"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_whole), cmocka_unit_test(table_figures), cmocka_unit_test(size_rule),
        cmocka_unit_test(one_gpu),     cmocka_unit_test(several_gpus),  cmocka_unit_test(without),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
