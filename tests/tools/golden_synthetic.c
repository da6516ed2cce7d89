/* golden_synthetic.c - test helper: every view (views.c) of the synthetic samples of
 * synthetic.h, for tests/golden/synthetic.txt: the full sample, one without a process tree but
 * with the machine's cgroup, one whose tree has no parts, no group and no pressure, and one
 * that knows almost nothing (no energy either). Each opens with a line "#### NAME". The full
 * sample carries what the job was given (0.16), with a figure not said (the GPUs). */
#include <math.h>
#include <stdio.h>

#include "synthetic.h"
#include "views.h"

static const char *const golden_tags[] = {"team=ml", "dup=first", "dup=second", "noeq", "quote=\"x\"\n"};

static const rt_request golden_request = {.struct_size = sizeof(rt_request),
                                          .place = "slurm",
                                          .cpu_cores = 4,
                                          .memory_mib = 16384,
                                          .gpus = 2, /* not said: no gpus_from */
                                          .time_limit_secs = 7200,
                                          .job_start_secs = 1699999000.5,
                                          .cpu_from = "SLURM_CPUS_PER_TASK",
                                          .memory_from = "SLURM_MEM_PER_NODE",
                                          .time_limit_from = "scontrol"};

int main(void)
{
    rt_job job = RT_JOB_INIT;
    job.job_name = "train";
    job.project_name = "proj";
    job.stage_name = "fit";
    job.task_name = "7";
    job.team = "ml";
    job.env = "prod";
    job.language = "python";
    job.orchestrator = "slurm";
    job.executor = "node-1";
    job.external_run_id = "run/42";
    job.container_image = "img:1";
    job.tags = golden_tags;
    job.tag_count = sizeof golden_tags / sizeof golden_tags[0];

    make_full();
    full.request = &golden_request;
    puts("#### full");
    print_views(stdout, &full, &job);

    make_full();
    full.process = NULL;
    full.cgroup = &cg;
    cg.own = 0;
    cg.exclusive = 0;
    energy.process_energy_joules = energy.process_energy_joules_total = energy.process_power_watts = NAN;
    energy.process_method = NULL; /* no tree: no share of the energy */
    dom_pkg.process_share = dom_pkg.process_energy_joules = dom_pkg.process_energy_joules_total = NAN;
    dom_dram.process_share = dom_dram.process_energy_joules = dom_dram.process_energy_joules_total = NAN;
    dom_gpu.process_share = dom_gpu.process_energy_joules = dom_gpu.process_energy_joules_total = NAN;
    puts("#### machine-cgroup");
    print_views(stdout, &full, &job);

    make_full();
    proc.main = proc.descendants = proc.combined = NULL;
    proc.cgroup = NULL;
    full.pressure = NULL;
    puts("#### bare-tree");
    print_views(stdout, &full, &job);

    make_full();
    cpu = (rt_cpu){.utilization_pct = NAN, .per_core_pct = NULL, .core_count = 0, .utime_secs = NAN,
                   .stime_secs = NAN, .process_count = RT_NULL_I64, .process_cores_used = NAN,
                   .process_child_count = RT_NULL_I64};
    mem.available_mib = mem.used_pct = mem.swap_used_pct = NAN;
    full.network_count = full.disk_count = full.gpu_count = 0;
    full.disk_space_total_bytes = full.disk_space_used_bytes = full.disk_space_free_bytes = RT_NULL_U64;
    full.process = NULL;
    full.pressure = NULL;
    full.energy = NULL;
    rt_job bare = RT_JOB_INIT;
    puts("#### unknowns");
    print_views(stdout, &full, &bare);
    return 0;
}
