/* clocks.h - what the clocks say between two readings of the sampler: a step of the wall clock
 * (its progress against the boot clock's: a clock set by hand, NTP's step, a VM's resync) and a
 * gap in the sampling (the boot clock's progress against the interval: the tracker stopped,
 * frozen or starved, or the machine suspended). Pure; internal (rt_sample.clock_step_secs and
 * .sampling_gap_secs are what it finds). */
#ifndef RT_SAMPLE_CLOCKS_H
#define RT_SAMPLE_CLOCKS_H

#include <stdbool.h>
#include <stddef.h>

/* A step of the wall clock counts from this many seconds either way. */
#define RT_CLOCK_STEP_MIN_SECS 1.0
/* A gap: over this many intervals, and this many seconds more than one. */
#define RT_GAP_INTERVALS 4.0
#define RT_GAP_EXTRA_SECS 2.0

/* The previous reading's clocks, and the interval the readings come at. */
typedef struct rt_clocks {
    double mono, real, boot;
    bool have;
    double nominal; /* the caller's interval (0: not given) */
    double typical; /* without it, the intervals seen so far (0: none yet) */
} rt_clocks;

/* The reading at mono, real and boot (CLOCK_MONOTONIC, _REALTIME, _BOOTTIME seconds; boot NaN:
 * not read, the monotonic clock stands for it): into *step the wall clock's step since the
 * previous reading (0 under RT_CLOCK_STEP_MIN_SECS), into *gap the boot clock's time since it
 * when that is a gap (else 0). The first reading has neither. */
void rt_clocks_read(rt_clocks *c, double mono, double real, double boot, double *step, double *gap);

/* se.exec_start of a /proc/PID/sched (buf[0..n)), in seconds: when the scheduler last accounted
 * the task's time, on its CPU's task clock; NaN when the file has none (a kernel without
 * CONFIG_SCHED_DEBUG). Of a zombie, the moment it ended. */
double rt_sched_exec_start(const char *buf, size_t n);

/* A zombie's end on CLOCK_MONOTONIC from its se.exec_start (zombie). The scheduler's task clock
 * runs behind the monotonic clock by an offset (monotonic less task clock) that grows with the
 * interrupt and steal time its CPU has (a VM's steal: a third of a busy shared machine's time),
 * and differs a little between CPUs (38 ms on the 2-vCPU test VM): off_now is the caller's own
 * offset at t_now (its own se.exec_start just read), off_prev at t_prev (an earlier reading's;
 * NaN: none). The offset at the end is taken on the straight line between the two (the steal
 * spread evenly over the time between), else off_now. NaN when zombie or off_now is NaN or the
 * end would come after t_now. */
double rt_sched_end_mono(double zombie, double off_prev, double t_prev, double off_now, double t_now);

/* The task clock's offsets by CPU (each CPU's clock has its own: its own steal and interrupts),
 * as the caller saw them at its readings: off[cpu] at at[cpu] (NaN: not seen). */
typedef struct rt_sched_offsets {
    double *off, *at;
    int ncpu;
} rt_sched_offsets;

/* Notes the caller's offset off on cpu at t (a cpu out of range: nothing). */
void rt_sched_offsets_put(rt_sched_offsets *o, int cpu, double off, double t);

/* The end on CLOCK_MONOTONIC of a zombie whose se.exec_start is zombie, last run on zcpu, with
 * the caller's offset off_now on cpu now at t_now: rt_sched_end_mono with zcpu's offsets, its
 * offset now taken as its last seen one grown as the caller's own CPU's grew since it was seen
 * (zcpu unseen: the caller's own CPU's offsets). */
double rt_sched_end_on(const rt_sched_offsets *o, double zombie, int zcpu, double off_now, int cpu, double t_now);

/* The CPU a process last ran on (field 39 of /proc/PID/stat, buf[0..n)); -1 when missing. */
int rt_stat_processor(const char *buf, size_t n);

#endif
