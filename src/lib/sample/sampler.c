/* sampler.c - the sampler's lifecycle: options, opening the parts, and the order of one
 * reading: every part takes its snapshot, then computes its delta into the sample, then
 * commits its reading as the previous one. The parts themselves live in cpu.c, memory.c,
 * disks.c, net.c, gpu.c, pressure.c, cgroup.c, tree.c and energy.c; no allocation in the
 * steady state.
 * Without a tree, the cgroup part reads the group the tracker itself runs in. */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/lasterr.h"
#include "replay.h"
#include "sampler_internal.h"

/* The watch's clock (rt_sampler_watch): this often while the job's memory charge moves; twice
 * as long after each reading that finds it still, up to the slowest. */
#define WATCH_FAST_SECS 0.05
#define WATCH_SLOW_SECS 1.6

/* The next wait of the watch after a reading that found the charge moved or not. */
static double next_watch(double delay, bool moved)
{
    return moved || !(delay > 0) ? WATCH_FAST_SECS : fmin(delay * 2, WATCH_SLOW_SECS);
}

/* How often the table of each CPU's task clock offset (sched_open) is read again for the CPU the
 * sampling thread is on. */
#define SCHED_REFRESH_SECS 10.0

/* se.exec_start of pid's /proc/PID/sched (NULL: the calling thread's), seconds; NaN off the live
 * /proc or without it (clocks.h). */
static double exec_start(rt_sampler *s, const int64_t *pid)
{
    rt_sample_ctx *c = &s->ctx;
    char path[48], buf[4096];
    if (strcmp(c->roots.proc, "/proc") != 0)
        return NAN;
    if (pid)
        snprintf(path, sizeof path, "%lld/sched", (long long)*pid);
    ssize_t n = rt_read_at(c->roots.proc_fd, pid ? path : "thread-self/sched", buf, sizeof buf);
    return n > 0 ? rt_sched_exec_start(buf, (size_t)n) : NAN;
}

/* The scheduler's task clock's offset from the monotonic clock now (its own last accounting of
 * the calling thread, a tick ago at most: it runs), into *at the monotonic time and *cpu the
 * CPU it runs on. */
static double sched_offset(rt_sampler *s, double *at, int *cpu)
{
    double own = exec_start(s, NULL);
    *at = rt_mono_secs();
    *cpu = sched_getcpu();
    return *at - own;
}

/* The table of sched_offset's by CPU, for a command the caller started on the live /proc (its
 * end read at its reaping: rt_sampler_reap). */
static void sched_open(rt_sampler *s)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (!s->has_tree || !s->tree.from_zero || strcmp(s->ctx.roots.proc, "/proc") != 0 || n <= 0)
        return;
    n = n > 4096 ? 4096 : n;
    s->sched.off = malloc((size_t)n * sizeof(double));
    s->sched.at = malloc((size_t)n * sizeof(double));
    if (!s->sched.off || !s->sched.at) {
        free(s->sched.off);
        free(s->sched.at);
        s->sched = (rt_sched_offsets){0};
        return;
    }
    s->sched.ncpu = (int)n;
    for (long i = 0; i < n; i++)
        s->sched.off[i] = s->sched.at[i] = NAN;
}

/* One reading at (mono, real, boot: NaN when not read): snapshot, delta, commit. Returns RT_IO
 * when no machine-wide source could be read. */
static rt_error take_reading(rt_sampler *s, double mono, double real, double boot)
{
    rt_sample_ctx *c = &s->ctx;
    double step, gap;
    rt_clocks_read(&s->clocks, mono, real, boot, &step, &gap);
    /* snapshot: the machine's CPU first, the tree right after it (the tree's CPU is held to
     * the machine's over the same interval) */
    bool any = rt_cpu_part_snapshot(&s->cpu, c);
    rt_energy_part_snapshot(&s->energy, mono); /* the CPU's energy over the CPU's interval */
    /* the machine's memory before the tree: its page tables tell the walk whether processes
     * outside the tree may have moved the tree's PSS (RT_SHARERS_SHARE) */
    any |= rt_mem_part_snapshot(&s->mem, c);
    if (s->has_tree)
        rt_tree_part_page_tables(&s->tree, rt_mem_part_page_tables(&s->mem));
    if (s->has_tree && s->cg.group && s->cg.own && !s->cg.check_members) {
        /* the job's own group: its counters first, then the walk when its clock says so */
        rt_tree_clock k;
        rt_cg_part_snapshot(&s->cg, c, s->tree.tree, mono);
        rt_cg_part_clock(&s->cg, &k);
        rt_tree_part_snapshot(&s->tree, mono, rt_tree_part_walk_due(&s->tree, &k, mono), &k);
    } else if (s->has_tree) {
        rt_tree_part_walk_due(&s->tree, NULL, mono);
        rt_tree_part_snapshot(&s->tree, mono, true, NULL);
        rt_cg_part_snapshot(&s->cg, c, s->tree.tree, mono); /* right after the walk it is checked against */
    } else {
        rt_cg_part_snapshot(&s->cg, c, NULL, mono); /* the tracker's own group (none: nothing read) */
    }
    any |= rt_psi_part_snapshot(&s->psi, c);
    any |= rt_disk_part_snapshot(&s->disks, c, mono);
    any |= rt_net_part_snapshot(&s->net, c, mono);
    rt_gpu_part_snapshot(&s->gpu);

    /* a gap the tracked command ended in (the tracker stopped, woken after its end) with nothing
     * of its tree left (--wait-all's descendants, --per-node's tasks run on): the interval, and
     * the job's time, end where the command did */
    double end = s->ends_unknown ? NAN : s->root_end_mono;
    s->root_end_mono = NAN;
    s->ends_unknown = false;
    size_t live = 0;
    if (s->has_tree)
        rt_proctree_live(s->tree.tree, &live);
    double cut = gap > 0 && live == 0 && s->have_prev_time && end > s->prev_mono && end < mono ? mono - end : 0;
    double elapsed = s->have_prev_time ? mono - cut - s->prev_mono : 0.0;
    if (elapsed < 0)
        elapsed = 0;

    /* delta: the sample */
    rt_sample *o = &s->sample;
    o->timestamp_secs = real - cut;
    o->interval_secs = elapsed;
    o->clock_step_secs = step;
    o->sampling_gap_secs = gap;
    rt_cpu_part_delta(&s->cpu, c);
    rt_mem_part_delta(&s->mem);
    rt_disk_part_delta(&s->disks, elapsed);
    rt_net_part_delta(&s->net, elapsed);
    o->cpu = &s->cpu.out;
    o->memory = &s->mem.out;
    o->disk = s->disks.list;
    o->disk_count = s->disks.have_cur ? s->disks.nlist : 0;
    o->disk_space_total_bytes = s->disks.space_total;
    o->disk_space_used_bytes = s->disks.space_used;
    o->disk_space_free_bytes = s->disks.space_free;
    o->network = s->net.out_ptrs;
    o->network_count = s->net.have_cur ? s->net.nifaces : 0;
    o->gpu = s->gpu.ptrs;
    o->gpu_count = s->gpu.count;
    s->cpu.out.process_cores_used = NAN;
    s->cpu.out.process_child_count = RT_NULL_I64;
    o->process = NULL;
    o->cgroup = NULL;
    o->gpu_processes = NULL;
    o->pressure = rt_psi_part_delta(&s->psi, elapsed);
    if (s->has_tree) {
        const rt_tree_group *group = rt_cg_part_delta(&s->cg, elapsed);
        s->watch_delay = next_watch(s->watch_delay, s->cg.moved);
        rt_tree_part_delta(&s->tree, elapsed, &s->cpu.out, s->cpu.forks_delta, &s->gpu, mono, group);
        s->cpu.out.process_cores_used = s->tree.out.cores_used;
        s->cpu.out.process_child_count = s->tree.out.child_count;
        o->process = &s->tree.out;
    } else {
        const rt_tree_group *own = rt_cg_part_delta(&s->cg, elapsed);
        o->cgroup = own ? own->cgroup : NULL;
        o->gpu_processes = rt_gpu_part_all(&s->gpu);
    }
    o->energy = rt_energy_part_delta(&s->energy, elapsed, &s->cpu.out, &s->gpu, o->process);

    /* commit */
    rt_cpu_part_commit(&s->cpu);
    rt_disk_part_commit(&s->disks);
    rt_net_part_commit(&s->net);
    rt_psi_part_commit(&s->psi);
    if (s->has_tree)
        rt_tree_part_commit(&s->tree);
    rt_cg_part_commit(&s->cg);
    s->prev_mono = mono;
    s->have_prev_time = true;
    if (!isnan(boot) && s->sched.off) { /* live, the command our child: its end's clock */
        /* a CPU's offset drifts slowly, and the end reads its own CPU's afresh: the 4 KiB file is
         * read again for the CPU this thread is on at most every SCHED_REFRESH_SECS, not each
         * sample */
        int here = sched_getcpu();
        if (here >= 0 && here < s->sched.ncpu && !(rt_mono_secs() - s->sched.at[here] < SCHED_REFRESH_SECS)) {
            double at;
            int cpu;
            double off = sched_offset(s, &at, &cpu);
            rt_sched_offsets_put(&s->sched, cpu, off, at);
        }
    }
    return any ? RT_OK : RT_ERR_IO;
}

static rt_error sampler_new(const rt_sampler_options *opts, rt_statvfs_fn statvfs_fn, void *statvfs_user,
                            rt_sampler **out)
{
    rt_err_clear();
    *out = NULL;
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    if (rt_struct_copy(&o, sizeof o, opts) < 0 || o.pid < 0) {
        rt_err_set("rt_sampler_options: %s", o.pid < 0 ? "a negative pid" : "struct_size too small");
        return RT_ERR_INVALID;
    }
    size_t given = 0;
    if (opts)
        memcpy(&given, opts, sizeof given);
    if (opts && given < offsetof(rt_sampler_options, walk_max_age_secs) + sizeof o.walk_max_age_secs)
        o.walk_max_age_secs = 0; /* a caller compiled before 0.18: every sample walks, as it did */
    rt_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return RT_ERR_NOMEM;
    s->root_end_mono = NAN;
    rt_sample_ctx *c = &s->ctx;
    rt_error err = rt_ctx_open(c, o.proc_root, o.sys_root, (rt_logger){o.log, o.log_user});
    if (err != RT_OK) {
        free(s);
        return err;
    }
    s->mem.fd = s->disks.diskstats_fd = s->disks.mountinfo_fd = s->net.fd = -1;
    for (int r = 0; r < RT_PSI_N; r++)
        s->psi.fd[r] = -1;
    /* the lowest descriptors held while the other parts open theirs, given back just before
     * the group's: under a low open files limit its few counters (memory, CPU, tasks: what the
     * job is judged by) are kept open first, below the limit's share, and the parts opened now
     * read theirs by opening them each time where they are past it */
    int held[RT_CG_FIRST_FDS];
    rt_fds_hold(held, RT_CG_FIRST_FDS);
    if (rt_cpu_part_open(&s->cpu, c) < 0) {
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        rt_err_set("%s/stat cannot be read", c->roots.proc);
        rt_sampler_free(s);
        return RT_ERR_NOT_FOUND;
    }
    rt_mem_part_open(&s->mem, c);
    rt_disk_part_open(&s->disks, c);
    s->disks.statvfs_fn = statvfs_fn;
    s->disks.statvfs_user = statvfs_user;
    rt_net_part_open(&s->net, c);
    rt_psi_part_open(&s->psi, c);
    if (rt_gpu_part_open(&s->gpu, c, o.nvml_library) < 0) {
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        rt_sampler_free(s);
        return RT_ERR_NOMEM;
    }
    if (!o.energy_off && rt_energy_part_open(&s->energy, c, &s->gpu, o.cpu_tdp_watts) < 0) {
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        rt_sampler_free(s);
        return RT_ERR_NOMEM;
    }
    if (rt_request_keep(&s->request, o.request) < 0) {
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        rt_err_set("rt_sampler_options.request: struct_size too small");
        rt_sampler_free(s);
        return RT_ERR_INVALID;
    }
    s->sample.request = s->request.set && rt_request_any(&s->request.r) ? &s->request.r : NULL;
    if (rt_member_keep(&s->member, o.member) < 0) {
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        rt_err_set("rt_sampler_options.member: struct_size too small");
        rt_sampler_free(s);
        return RT_ERR_INVALID;
    }
    s->sample.member = s->member.set ? &s->member.m : NULL;
    if (o.pid > 0 || o.own_children || o.siblings_of > 0) {
        s->has_tree = true;
        if (rt_tree_part_open(&s->tree, c, o.pid, o.own_children != 0, o.pss_max_age_secs, o.walk_max_age_secs) < 0) {
            rt_fds_give_back(held, RT_CG_FIRST_FDS);
            rt_sampler_free(s);
            return RT_ERR_NOMEM;
        }
        if (o.root_only && o.pid > 0)
            rt_proctree_set_root_only(s->tree.tree);
        if (o.siblings_of > 0)
            rt_proctree_set_holder(s->tree.tree, o.siblings_of);
        /* the job's own group in wrapper mode, else the group the tracked process is in; none
         * for a tree of the node's tasks, which no group of the tree's holds */
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        if (!o.cgroup_off && o.siblings_of <= 0 &&
            rt_cg_part_open(&s->cg, c, o.job_cgroup, o.pid, o.root_only && o.pid > 0) < 0) {
            rt_sampler_free(s);
            return RT_ERR_NOMEM;
        }
    } else if (!o.cgroup_off) {
        /* the whole machine: the group the tracker itself runs in (a container, a SLURM step) */
        rt_fds_give_back(held, RT_CG_FIRST_FDS);
        rt_cg_part_open_self(&s->cg, c);
    }
    rt_fds_give_back(held, RT_CG_FIRST_FDS); /* no group to read (--cgroup off, --per-node) */
    s->clocks.nominal = o.interval_secs > 0 ? o.interval_secs : 0;
    sched_open(s);
    double now = rt_mono_secs();
    take_reading(s, now, rt_real_secs(), rt_boot_secs());
    /* wrapper mode: the first interval starts when the caller started the command, so the
     * CPU the tree used before this baseline is spread over the time it had */
    if (o.own_children && o.tree_start_mono_secs > 0 && o.tree_start_mono_secs < now)
        s->prev_mono = o.tree_start_mono_secs;
    if (o.pid > 0 && !rt_proctree_root_known(s->tree.tree)) {
        rt_err_set("process %lld does not exist", (long long)o.pid);
        rt_sampler_free(s);
        return RT_ERR_NOT_FOUND; /* no such process to track */
    }
    *out = s;
    return RT_OK;
}

rt_error rt_sampler_new(const rt_sampler_options *opts, rt_sampler **out)
{
    return sampler_new(opts, NULL, NULL, out);
}

rt_error rt_sampler_new_replay(const rt_sampler_options *opts, rt_statvfs_fn fn, void *user, rt_sampler **out)
{
    return sampler_new(opts, fn, user, out);
}

rt_error rt_sampler_sample_at(rt_sampler *s, double mono_secs, double real_secs, const rt_sample **out)
{
    if (!s || !out)
        return RT_ERR_INVALID;
    rt_error err = take_reading(s, mono_secs, real_secs, NAN);
    *out = &s->sample;
    return err;
}

rt_error rt_sampler_sample(rt_sampler *s, const rt_sample **out)
{
    if (!s || !out)
        return RT_ERR_INVALID;
    rt_error err = take_reading(s, rt_mono_secs(), rt_real_secs(), rt_boot_secs());
    *out = &s->sample;
    return err;
}

double rt_sampler_watch(rt_sampler *s, int read)
{
    if (!s || !s->has_tree || !rt_cg_part_watchable(&s->cg))
        return INFINITY;
    if (read)
        s->watch_delay = next_watch(s->watch_delay, rt_cg_part_watch(&s->cg, &s->ctx, rt_mono_secs()));
    return s->watch_delay;
}

/* A child's end (its zombie's, before the reaping) on the monotonic clock, from the scheduler's
 * last accounting of it (clocks.h); NaN off the live /proc or without it. */
static double root_end(rt_sampler *s, int64_t pid)
{
    double zombie = exec_start(s, &pid);
    char path[48], buf[1024];
    snprintf(path, sizeof path, "%lld/stat", (long long)pid);
    ssize_t n = isnan(zombie) ? -1 : rt_read_at(s->ctx.roots.proc_fd, path, buf, sizeof buf);
    if (n <= 0)
        return NAN;
    int cpu, zcpu = rt_stat_processor(buf, (size_t)n);
    double now, off = sched_offset(s, &now, &cpu);
    cpu_set_t was, one;
    if (zcpu >= 0 && zcpu != cpu && zcpu < CPU_SETSIZE && sched_getaffinity(0, sizeof was, &was) == 0) {
        /* the zombie's CPU's own offset now: this thread there for one reading (each CPU's task
         * clock has its own, 0.04-0.17 s apart on the test VM), then back where it may run */
        CPU_ZERO(&one);
        CPU_SET(zcpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) == 0) {
            off = sched_offset(s, &now, &cpu);
            sched_setaffinity(0, sizeof was, &was);
        }
    }
    return rt_sched_end_on(&s->sched, zombie, zcpu, off, cpu, now);
}

rt_error rt_sampler_reap(rt_sampler *s, int64_t pid, int *wstatus)
{
    if (!s || !s->has_tree)
        return RT_ERR_INVALID;
    /* wrapper mode: each of our children's end (the command's, the orphans' it left us) */
    double end = s->tree.from_zero ? root_end(s, pid) : NAN;
    if (rt_proctree_reap(s->tree.tree, pid, wstatus) < 0)
        return RT_ERR_NOT_FOUND;
    if (s->tree.from_zero && isnan(end))
        s->ends_unknown = true;
    else if (s->tree.from_zero && !(end <= s->root_end_mono))
        s->root_end_mono = end;
    if (pid == s->tree.root_pid) {
        s->tree.walk_now = true; /* the command's end: the next sample's figures are walked */
        rt_gpus_counters_due(s->gpu.gpus); /* and the GPUs' counters read */
    }
    return RT_OK;
}

void rt_sampler_read_counters(rt_sampler *s)
{
    if (s)
        rt_gpus_counters_due(s->gpu.gpus);
}

void rt_sampler_free(rt_sampler *s)
{
    if (!s)
        return;
    rt_cg_part_close(&s->cg);
    if (s->has_tree)
        rt_tree_part_close(&s->tree);
    rt_psi_part_close(&s->psi);
    rt_energy_part_close(&s->energy); /* before the GPUs it borrows */
    rt_gpu_part_close(&s->gpu);
    rt_net_part_close(&s->net);
    rt_disk_part_close(&s->disks);
    rt_mem_part_close(&s->mem);
    rt_cpu_part_close(&s->cpu);
    rt_buf_free(&s->ctx.rbuf);
    rt_roots_close(&s->ctx.roots);
    free(s->sched.off);
    free(s->sched.at);
    free(s);
}
