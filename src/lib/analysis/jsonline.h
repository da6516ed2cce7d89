/* jsonline.h - one of the tool's JSON lines (docs/contracts.md §2) as far as the reader uses it
 * (rt_jline), filled by jsonline.c. The figures of a sample struct are kept by the schema
 * (core/schema.h): a member the schema lists for the JSON line is read by its name into the slot
 * of that member (RT_JL_SLOT), so a figure added to the schema is read without a line here.
 * What a table cannot say (the lists of disks, interfaces, mounts and GPUs, per_core_pct, the
 * job's name, the pressure and cgroup objects and the parts of the tree) is kept by hand.
 * Internal to the library; include it with _GNU_SOURCE defined, for locale_t. */
#ifndef RT_JSONLINE_H
#define RT_JSONLINE_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>

#include "../core/request.h"
#include "../core/member.h"
#include "resource_tracker.h"

/* The figures of one public struct type as read from a line: one double per 4 bytes of the
 * struct, the member m's at RT_JL_SLOT(type, m) (every member is 4-byte aligned and at least 4
 * bytes long, so no two share a slot: test_schema holds it); NaN when null or absent, a flag 1
 * or 0. Slots of members the line does not carry stay NaN. */
#define RT_JL_SLOTS(type) (sizeof(type) / 4)
#define RT_JL_NWORK 9 /* the record's GPU work figures (record.h's RT_RECORD_NWORK) */
#define RT_JL_SLOT(type, m) (offsetof(type, m) / 4)

#define RT_JL_NAME 64     /* device and interface names kept for matching (longer: not kept) */
#define RT_JL_POINT 256   /* mount points kept for de-duplication */
#define RT_JL_JOB 1024    /* job names are cut to this many bytes, less one */
#define RT_JL_MAX_DEV 128 /* disks and interfaces listed one by one; the rest are summed */
#define RT_JL_MAX_MOUNT 256
#define RT_JL_MAX_GPU 64 /* GPUs kept one by one (uuid, utilization) for choosing by uuid */
#define RT_JL_UUID 96    /* GPU uuids kept (longer: not kept, so never chosen) */

/* A disk (a = read, b = write) or an interface (a = received, b = sent). NaN: null/absent. */
typedef struct rt_jl_dev {
    char name[RT_JL_NAME];
    bool named; /* name holds the whole name */
    double total_a, total_b, rate_a, rate_b;
} rt_jl_dev;

typedef struct rt_jl_mount {
    char point[RT_JL_POINT];
    bool named; /* point holds the whole mount point */
    double total, used;
} rt_jl_mount;

typedef struct rt_jl_list {
    bool present;                    /* the member was in the line (as an array) */
    size_t n;                        /* entries in dev[] (at most RT_JL_MAX_DEV) */
    double rest_rate_a, rest_rate_b; /* sums of the rates of the entries past the cap */
    rt_jl_dev dev[RT_JL_MAX_DEV];
} rt_jl_list;

/* A GPU as listed (for choosing GPUs by uuid): NaN when null or absent. */
typedef struct rt_jl_gpu {
    char uuid[RT_JL_UUID];
    bool named; /* uuid holds the whole uuid */
    double util, used, total;
    rt_gpu_work work; /* 0.19: its work figures (NaN where the line has none) */
} rt_jl_gpu;

/* The parts of the tree (process.main, .descendants, .combined), in this order. */
enum { RT_JL_MAIN, RT_JL_DESCENDANTS, RT_JL_COMBINED, RT_JL_NPARTS };

/* Pressure of cpu, memory and io (in that order), each an rt_pressure's slots. */
typedef struct rt_jl_psi {
    double res[3][RT_JL_SLOTS(rt_pressure)];
} rt_jl_psi;

/* A "cgroup" object: rt_cgroup's slots, and its pressure. */
typedef struct rt_jl_cgroup {
    bool present; /* the member was an object */
    double f[RT_JL_SLOTS(rt_cgroup)];
    rt_jl_psi psi;
} rt_jl_cgroup;

/* The "phases" member: the marks and open phases of a line, names kept (at most 255 bytes:
 * a longer one is no phase's name, and its mark is skipped), at most RT_JL_MAX_MARKS marks (the
 * rest skipped) and RT_JL_MAX_OPEN open names. view is what the record points to. */
#define RT_JL_PH_NAME 256
#define RT_JL_MAX_MARKS 4096
#define RT_JL_MAX_OPEN 256
typedef struct rt_jl_mark {
    rt_phase_mark m;
    char name[RT_JL_PH_NAME];
} rt_jl_mark;

typedef struct rt_jl_phases {
    bool present;        /* the line had a "phases" object */
    size_t n, cap;       /* marks kept, and room */
    rt_jl_mark *marks;
    const rt_phase_mark **ptrs;
    size_t n_open;
    char open[RT_JL_MAX_OPEN][RT_JL_PH_NAME];
    const char *open_ptrs[RT_JL_MAX_OPEN];
    rt_phase_counts counts;
    rt_phases view;
} rt_jl_phases;

/* Frees what a line's phases hold (NULL allowed). */
void rt_jline_phases_free(rt_jl_phases *ph);

/* The "energy" member: its figures in rt_energy's slots, its strings and its domains (at
 * most RT_JL_MAX_DOMAIN; the rest skipped), and view, the rt_energy a record points to (its
 * methods the static strings). Made by rt_jline_scan at the first line with energy. */
#define RT_JL_MAX_DOMAIN 64
#define RT_JL_EN_TEXT 1024 /* the model and missing notes are cut to this many bytes, less one */
#define RT_JL_WORD 32      /* a domain's kind and source */
typedef struct rt_jl_domain {
    double f[RT_JL_SLOTS(rt_energy_domain)];
    char name[RT_JL_NAME], kind[RT_JL_WORD], source[RT_JL_WORD], device[RT_JL_UUID];
    bool has_name, has_kind, has_source, has_device; /* a whole string was given */
    int method;                                       /* 1 measured, 2 sampled, 3 estimated; 0 */
} rt_jl_domain;

typedef struct rt_jl_energy {
    bool present; /* the line had an "energy" object */
    double f[RT_JL_SLOTS(rt_energy)];
    int method, process_method;
    char model[RT_JL_EN_TEXT], missing[RT_JL_EN_TEXT];
    bool has_model, has_missing;
    size_t n;         /* domains kept */
    rt_jl_domain cur; /* the domain being read */
    rt_jl_domain dom[RT_JL_MAX_DOMAIN];
    rt_energy_domain dview[RT_JL_MAX_DOMAIN];
    const rt_energy_domain *dptr[RT_JL_MAX_DOMAIN];
    rt_energy view;
} rt_jl_energy;

typedef struct rt_jline {
    double top[RT_JL_SLOTS(rt_sample)]; /* timestamp_secs, interval_secs */
    bool has_job;
    char job[RT_JL_JOB];
    double cpu[RT_JL_SLOTS(rt_cpu)];    /* NaN without a cpu object */
    double cpu_cores_listed;            /* the elements of per_core_pct; NaN: none */
    double mem[RT_JL_SLOTS(rt_memory)]; /* NaN without a memory object */
    rt_jl_list disk, net;
    size_t nmount;
    double rest_space_total, rest_space_used; /* mounts past the cap, summed (NaN: none) */
    rt_jl_mount mount[RT_JL_MAX_MOUNT];
    /* GPUs, summed as record.c sums a sample's */
    bool gpu_present;
    double gpu_count, gpu_usage, gpu_utilized, gpu_vram_mib, gpu_vram_total_mib;
    bool gpu_known;
    size_t ngpu; /* entries in gpu[] (the first RT_JL_MAX_GPU GPUs) */
    rt_jl_gpu gpu[RT_JL_MAX_GPU];
    double gpu_power_throttled, gpu_thermal_throttled; /* 0.15: summed over the GPUs (NaN: none) */
    /* 0.19: the GPUs' work as the record has it (rt_record_work_of), summed over the GPUs that
     * give each figure (gpu_work_n of them) */
    double gpu_work_sum[RT_JL_NWORK];
    unsigned gpu_work_n[RT_JL_NWORK];
    /* the tracked tree (NaN without), its parts and its cgroup */
    bool has_process;
    double proc[RT_JL_SLOTS(rt_process)];
    int proc_work_scope; /* 0.19: process.gpu_work_scope: 1 "device", 0 "job", -1 null or absent */
    double part[RT_JL_NPARTS][RT_JL_SLOTS(rt_process_part)];
    rt_jl_cgroup cg;
    /* 0.6: the machine's pressure, and the top-level "cgroup" (the tracker's own group,
     * whole-machine runs) */
    rt_jl_psi psi;
    rt_jl_cgroup self_cg;
    /* 0.14: the job's phases; NULL until a line has them (made by rt_jline_scan: set it NULL
     * before the first scan, free it with rt_jline_phases_free) */
    rt_jl_phases *ph;
    /* 0.15: the energy; NULL until a line has it (made by rt_jline_scan: set it NULL before the
     * first scan, free it with free()) */
    rt_jl_energy *en;
    /* 0.16: the "request" member (what the job was given), kept as request.h's copy; the
     * figures read into rq_f first (rt_request's slots) */
    bool rq_present;
    double rq_f[RT_JL_SLOTS(rt_request)];
    char rq_text[5][RT_REQUEST_TEXT_CAP]; /* place, cpu_from, memory_from, gpus_from, time_limit_from */
    bool rq_has[5];
    rt_request_copy rq;
    /* 0.18: the "member" member (the run's place in a job of several nodes), kept as member.h's
     * copy: mb.set when the line names a job */
    char mb_text[4][128]; /* job_id, step_id, node, from */
    bool mb_has[4];
    double mb_num[6];     /* rank, local_rank, ranks, nodes, node_index, per_node (1, 0); NaN: null */
    rt_member_copy mb;
    double clock[2];      /* 0.20: "clock"'s step_secs, gap_secs (0: absent, NaN: null) */
} rt_jline;

/* The figure m of the line's sample, cpu, memory, tree, part i of the tree, or a cgroup. */
#define RT_JL_TOP(jl, m) ((jl)->top[RT_JL_SLOT(rt_sample, m)])
#define RT_JL_CPU(jl, m) ((jl)->cpu[RT_JL_SLOT(rt_cpu, m)])
#define RT_JL_MEM(jl, m) ((jl)->mem[RT_JL_SLOT(rt_memory, m)])
#define RT_JL_PROC(jl, m) ((jl)->proc[RT_JL_SLOT(rt_process, m)])

/* The rt_gpu_work embedded at offset off of a struct read into slots v, as the struct. */
rt_gpu_work rt_jline_work(const double *v, size_t off);
#define RT_JL_PART(jl, i, m) ((jl)->part[i][RT_JL_SLOT(rt_process_part, m)])
#define RT_JL_CG(cg, m) ((cg)->f[RT_JL_SLOT(rt_cgroup, m)])
#define RT_JL_PSI(psi, i, m) ((psi)->res[i][RT_JL_SLOT(rt_pressure, m)])

/* Sets every slot of v[0..n) to NaN. */
void rt_jline_nan(double *v, size_t n);
/* Empties jl (everything null, no lists). */
void rt_jline_reset(rt_jline *jl);
/* Empties one list / the mounts / the GPUs (for a repeated member: the last one counts). */
void rt_jline_list_reset(rt_jl_list *l, bool present);
void rt_jline_gpu_reset(rt_jline *jl, bool present);
void rt_jline_process_reset(rt_jline *jl, bool present); /* the cgroup and the parts too */
void rt_jline_cgroup_reset(rt_jl_cgroup *cg, bool present);
void rt_jline_psi_reset(rt_jl_psi *psi);
/* Appends a disk or an interface (name NUL-ended, named: it is whole). */
void rt_jline_add_dev(rt_jl_list *l, const char *name, bool named, double ta, double tb, double ra, double rb);
/* Appends a mount (point NUL-ended, named: it is whole). */
void rt_jline_add_mount(rt_jline *jl, const char *point, bool named, double total, double used);
/* Adds a GPU: utilization in %, VRAM in bytes (NaN: null); uuid NUL-ended (NULL: none),
 * named: it is whole. */
void rt_jline_add_gpu(rt_jline *jl, const char *uuid, bool named, double util_pct, double vram_used, double vram_total);

/* Fills *jl from one line (without its newline). Returns NULL, or a static description of
 * why the line is not a record (bad JSON, a member of the wrong type, no timestamp). */
const char *rt_jline_scan(const char *line, size_t len, locale_t c_locale, rt_jline *jl);

/* The Rust tool's JSON line (jsonline_rs.c): when line is one (it has "tracked_pid"), puts
 * into *jl (already scanned by rt_jline_scan) its interval and the tracked tree's figures, and
 * returns true; false for any other line (jl untouched). */
bool rt_jline_rs(const char *line, size_t len, locale_t c_locale, rt_jline *jl);

#endif
