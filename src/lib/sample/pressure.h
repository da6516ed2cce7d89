/* pressure.h - the sampler's machine pressure part: /proc/pressure/{cpu,memory,io} kept open
 * and read each sample into an rt_psi, and the rule shared with the cgroup part that turns two
 * readings of a pressure file into the public figures. */
#ifndef RT_SAMPLE_PRESSURE_H
#define RT_SAMPLE_PRESSURE_H

#include "../source/cgroup.h"
#include "context.h"

/* Fills out from the reading cur (and prev, the previous one when have_prev): the kernel's
 * 10-second averages and totals as they are; some_pct/full_pct = the total's growth over the
 * interval, as a percent of elapsed seconds (held to 0..100: the files are read a moment
 * apart from the clock). NaN / RT_NULL_U64 where cur lacks the line, and the pct NaN without
 * a previous reading or without elapsed time. */
void rt_pressure_fill(rt_pressure *out, const rt_cg_psi_raw *cur, const rt_cg_psi_raw *prev, bool have_prev,
                      double elapsed);

/* Sets every figure of out to null. */
void rt_psi_null(rt_psi *out);

/* The rt_pressure of resource r (RT_PSI_CPU, RT_PSI_MEMORY, RT_PSI_IO) in ps. */
rt_pressure *rt_psi_at(rt_psi *ps, int r);

typedef struct rt_psi_part {
    int fd[RT_PSI_N]; /* -1: absent (PSI off, or an old kernel) */
    rt_cg_psi_raw cur[RT_PSI_N], prev[RT_PSI_N];
    bool have_cur[RT_PSI_N], have_prev[RT_PSI_N];
    bool any; /* a file could be read this sample */
    rt_psi out;
} rt_psi_part;

/* Opens the three files (missing ones are not an error: logged at debug level). */
void rt_psi_part_open(rt_psi_part *p, rt_sample_ctx *c);
/* Reads and parses them. Returns whether any could be. A file that exists but cannot be read
 * (psi=0 on the kernel's command line) is closed and not read again. */
bool rt_psi_part_snapshot(rt_psi_part *p, rt_sample_ctx *c);
/* Fills p->out for an interval of elapsed seconds; returns &p->out, or NULL when no file
 * was read (the sample's pressure is then null). */
const rt_psi *rt_psi_part_delta(rt_psi_part *p, double elapsed);
/* Makes the reading the previous one. */
void rt_psi_part_commit(rt_psi_part *p);
void rt_psi_part_close(rt_psi_part *p);

#endif
