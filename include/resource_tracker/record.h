/* resource_tracker/record.h - one record: the figures of one sample that the analysis uses
 * (rt_record, rt_record_part, rt_record_from_sample_sized).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_RECORD_H
#define RESOURCE_TRACKER_RECORD_H

#include "sample.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A part of the tree in a record: rt_process_part's figures as doubles (NaN: null). */
typedef struct rt_record_part {
    double total_rss_mib, private_rss_mib, shared_rss_mib;
    double cores;       /* CPU seconds per second over the interval */
    double threads;
    double gpu_vram_mib;
} rt_record_part;

/* ---- one record: the figures of one sample that the analysis uses ----------------------
 * Every figure is a double; NaN is null (not reported, or not in the file). Amounts "in the
 * interval" cover the interval_secs before timestamp_secs. Library-owned, grows at its end. */
typedef struct rt_record {
    double timestamp_secs;  /* Unix time of the reading */
    double interval_secs;   /* seconds the record covers; the reader fills it from the previous
                             * timestamp when the file has none (the first record: the second's) */
    const char *job_name;   /* NULL when none */
    /* the machine */
    double cpu_cores;              /* busy cores, fractional */
    double cpu_count;              /* online cores */
    double memory_used_mib, memory_total_mib;
    double disk_read_bytes, disk_write_bytes; /* in the interval, all disks */
    double net_recv_bytes, net_sent_bytes;    /* in the interval, all interfaces */
    double disk_space_total_bytes, disk_space_used_bytes;
    double gpu_usage;       /* busy GPUs: the sum of utilizations / 100 */
    double gpu_vram_mib;    /* VRAM used, all GPUs */
    double gpu_utilized;    /* GPUs with utilization > 0 */
    double gpu_count;       /* GPUs present (0 without) */
    double gpu_vram_total_mib;
    /* the tracked process tree: all NaN without one */
    double process_pid;
    double process_children;
    double process_cores;           /* CPU seconds per second over the interval */
    double process_cpu_secs;        /* user+system CPU seconds in the interval */
    double process_cpu_secs_total;  /* since tracking began (NaN when the file lacks it) */
    double process_pss_mib, process_rss_mib;
    double process_rss_peak_mib;    /* the kernel's peak so far (NaN when the file lacks it) */
    double process_read_bytes, process_write_bytes; /* in the interval */
    double process_gpu_usage;       /* busy GPUs of the tree */
    double process_gpu_vram_mib;
    double process_gpu_utilized;    /* GPUs the tree used */
    /* the tree's cgroup, else (no tree) the group the tracker runs in; NaN without
     * one, or when the file lacks it */
    double process_memory_peak_mib;  /* the kernel's peak charge so far */
    double cgroup_oom_kills;         /* OOM kills in the group since tracking began */
    double cgroup_memory_limit_mib;  /* NaN: no limit */
    double cgroup_memory_high_mib;
    double cgroup_cpu_quota_cores;   /* NaN: no quota */
    double cgroup_cpu_periods;       /* quota periods since tracking began */
    double cgroup_cpu_throttled_periods; /* of them, throttled */
    double cgroup_cpu_throttled_secs;    /* since tracking began */
    double cgroup_pids_peak, cgroup_pids_limit;
    /* pressure in the interval, percent: per resource the group's where the group has it (its
     * some_pct or some_avg10 is known), else the machine's */
    double pressure_cpu_some_pct, pressure_memory_some_pct, pressure_memory_full_pct;
    double pressure_io_some_pct, pressure_io_full_pct;
    /* gpu_tracker's split of the tree (all NaN without a tree, or when the file
     * lacks it), and the machine's GPUs one by one, for choosing some of them by uuid: pointers
     * into the sample, or the reader's own with uuid, utilization_pct, vram_used_bytes and
     * vram_total_bytes set (the rest null); NULL and 0 when the source has no such list (CSV,
     * a tracker's kept samples) */
    rt_record_part main, descendants, combined;
    const rt_gpu *const *gpu;
    size_t gpu_n;
    /* what the memory need and the notes are made from (NaN without a tree, or
     * when the file lacks it) */
    double process_rss_hwm_mib;            /* rt_process.rss_hwm_mib */
    double process_unreclaimable_peak_mib; /* the tree's group's memory_unreclaimable_peak_mib,
                                            * when the group holds only the tree */
    double process_gpu_vram_peak_mib;      /* rt_process.gpu_vram_peak_bytes in MiB */
    double process_cancelled_write_bytes_total; /* written bytes whose writeback was cancelled
                                            * (the file was deleted or truncated first), since
                                            * tracking began */
    double process_alive;                  /* 1 while the root runs, 0 after it exited */
    double process_cgroup_exclusive;       /* the tree's group: 1 it holds only the tree (or is
                                            * the job's own), 0 it holds other processes too;
                                            * NaN without one */
    double cgroup_pids;                    /* tasks in the tree's group now */
    /* as rt_sample.phases (NULL before the run's first mark, and past a caller's
     * rec_size) */
    const struct rt_phases *phases;
    /* "Energy and carbon": rt_sample.energy's figures (NaN, NULL where the
     * sample had no energy, and in files without them) */
    double energy_joules;            /* the machine's, in the interval */
    double process_energy_joules;    /* the tree's share, in the interval */
    const char *energy_method, *process_energy_method; /* "measured", "sampled", "estimated" */
    double idle_power_watts;         /* the machine's floor so far */
    double gpu_power_throttled_secs, gpu_thermal_throttled_secs; /* since tracking began,
                                      * summed over the GPUs that report them */
    const struct rt_energy *energy;  /* the sample's (or the reader's, with its domains);
                                      * NULL without */
    /* "Where the job runs" */
    const struct rt_request *request; /* the sample's, or the reader's from a line that holds
                                       * one (a JSON line file has it on its run's first line);
                                       * NULL without */
    double process_vms_mib;           /* rt_process.vms_mib (NaN without a tree, or when the
                                       * file lacks it) */
    double process_walk_age_secs; /* rt_process.walk_age_secs (NaN without a tree, or when the
                                   * file lacks it) */
    double process_rss_hwm_tree_mib; /* rt_process.rss_hwm_tree_mib (NaN without a tree, or when
                                      * the file lacks it) */
    double process_unreclaimable_unsure_mib; /* the tree's group's memory_unreclaimable_unsure_mib,
                                      * when the group holds only the tree */
    double pressure_group;           /* 1: every pressure figure of the record is the group's (the
                                      * tree's, else the tracker's own), 0: some are the machine's;
                                      * NaN: the record has none */
    const struct rt_member *member;  /* the sample's, or the reader's from a line that holds one;
                                      * NULL without */
    /* 0.19: the work of the tree's GPUs (rt_process.gpu_work; without a tree the mean over
     * the machine's GPUs' rt_gpu.work), percent of the interval; the PCIe and NVLink traffic
     * in bytes per second, both directions; NaN without GPM figures */
    double gpu_sm_active_pct, gpu_sm_occupancy_pct, gpu_tensor_active_pct, gpu_dram_active_pct;
    double gpu_fp64_active_pct, gpu_fp32_active_pct, gpu_fp16_active_pct;
    double gpu_pcie_bytes_per_sec, gpu_nvlink_bytes_per_sec;
    double gpu_work_shared;           /* 1: those figures are the devices', other processes shared
                                       * them (gpu_work_scope "device"); 0: the job's alone; NaN */
    double process_gpus_busy;         /* rt_process.gpu_count_busy */
    double process_gpu_vram_per_gpu_mib; /* rt_process.gpu_vram_per_gpu_max_bytes in MiB */
    double process_cpu_wait_cores;    /* 0.20: rt_process.cpu_wait_cores */
    /* 0.20: the group's rt_cgroup.memory_refault_mib (file data read back after its memory
     * evicted it, since tracking began); NaN without it */
    double cgroup_memory_refault_mib;
    double process_exits_counted;     /* 0.20: rt_process.exits_counted (NaN: not listened to) */
    double process_unwaited_parents;  /* 0.21: rt_process.unwaited_parents */
    double clock_step_secs;           /* 0.21: rt_sample.clock_step_secs (0: none, NaN: unknown) */
    double sampling_gap_secs;         /* 0.21: rt_sample.sampling_gap_secs (0: none, NaN: unknown) */
} rt_record;
/* rt_record has no struct_size: where it crosses between caller and library, a size argument
 * says how much of it the caller has, sizeof(rt_record) as the caller compiled it. The
 * library writes into a caller's record (rt_record_from_sample_sized, rt_tracker_record) and
 * reads one (rt_stats_add_sized, rt_report_add_sized, rt_pipeline_add_record) no byte past
 * that size. A record it reads is taken member by member: what lies wholly within the size is the
 * caller's, the members past it (newer than the caller's header) are null: NaN, job_name and gpu
 * NULL, gpu_n 0 (gpu and gpu_n count only together). A caller that fills records itself sets
 * what it does not know to null the same way. */

/* Fills the record at out from a sample. out_size is the caller's storage,
 * sizeof(rt_record) as it compiled it: the library writes no more than that, nor more than
 * its own rt_record (a newer caller's tail is left as it was). job_name points into the
 * sample, or is NULL. RT_OK; RT_ERR_INVALID (s or out NULL, out_size 0). */
RT_API rt_error rt_record_from_sample_sized(const rt_sample *s, rt_record *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif
