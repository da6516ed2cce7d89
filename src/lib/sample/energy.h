/* energy.h - the sampler's energy part: the machine's counters (source/energy.h), the GPUs'
 * energy (source/gpu.h) and, where no CPU counter can be read, the estimate of the CPU power
 * model (source/cpu_power.h), turned each interval into the sample's rt_energy: every domain's
 * energy, power and method, the machine's total, the tree's share and the idle floor.
 * The rules are docs/energy.md's. */
#ifndef RT_SAMPLE_ENERGY_H
#define RT_SAMPLE_ENERGY_H

#include "../source/cpu_power.h"
#include "../source/energy.h"
#include "context.h"
#include "gpu.h"

/* The state of one domain between readings. */
typedef struct rt_energy_track {
    int src;            /* the counter's index in the source; -1: a GPU or the estimate */
    int gpu;            /* the GPU's index; -1: not a GPU */
    bool counter;       /* an energy counter (measured): else power readings (sampled) or
                         * the model (estimated) */
    bool part;          /* one of the machine's parts that do not overlap (packages, DRAM,
                         * GPUs, the estimate; not a package's core and uncore, not a platform
                         * meter): the tree's total sums these */
    double last_j;      /* the counter at the last good reading (NaN: none yet) */
    double last_mono;   /* when that reading was taken */
    double prev_w;      /* the power at the previous reading (sampled), NaN: none */
    double cur_j, cur_w; /* this reading */
    /* a GPU's counter read every 30 s (NVML's), estimated between: the seconds since its last
     * reading and the tree's share times them (where known), for the share of a reading's
     * energy, which settles the whole stretch since the last; read_now: this reading was the
     * counter's */
    double stretch_secs, stretch_share_secs;
    bool read_now;
    char name[32];
} rt_energy_track;

typedef struct rt_energy_part {
    bool on;
    rt_energy_src *src;     /* NULL: off */
    rt_gpus *gpus;          /* borrowed from the GPU part */
    rt_cpu_power model;
    bool estimate;          /* no CPU counter could be read at open: the "cpu" domain */
    bool built;             /* the domains are made (at the first reading) */
    size_t n;               /* domains */
    rt_energy_track *track; /* n entries */
    rt_energy_domain *dom;  /* n entries */
    const rt_energy_domain **ptrs;
    double *src_j, *src_w;  /* one reading of the source's counters */
    double idle_w;          /* the least machine power of an interval so far (NaN: none) */
    double mono;            /* when this reading was taken */
    rt_energy out;
} rt_energy_part;

/* Opens the counters and reads the CPU model (tdp_given > 0: the user's TDP); the GPUs (g's
 * set, borrowed) are looked at in the first delta, after their first reading. Returns 0, or -1
 * on no memory. */
int rt_energy_part_open(rt_energy_part *p, rt_sample_ctx *c, rt_gpu_part *g, double tdp_given);
/* Reads the counters at mono (right after the CPU's reading). */
void rt_energy_part_snapshot(rt_energy_part *p, double mono);
/* Fills p->out for the interval of elapsed seconds, from the sample's CPU (busy cores), the GPUs
 * and the tree (proc NULL: none; its GPU share as the GPU part last computed it). Returns
 * &p->out, or NULL when the part is off. */
const rt_energy *rt_energy_part_delta(rt_energy_part *p, double elapsed, const rt_cpu *cpu, const rt_gpu_part *g,
                                      const rt_process *proc);
void rt_energy_part_close(rt_energy_part *p);

#endif
