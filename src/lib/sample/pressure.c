/* pressure.c - the sampler's machine pressure part (see pressure.h): /proc/pressure files
 * parsed with rt_cg_parse_pressure, the interval's share of stalled time from the growth of
 * the kernel's microsecond totals. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <string.h>

#include "pressure.h"

static const char *const psi_files[RT_PSI_N] = {"pressure/cpu", "pressure/memory", "pressure/io"};

rt_pressure *rt_psi_at(rt_psi *ps, int r)
{
    return r == RT_PSI_CPU ? &ps->cpu : r == RT_PSI_MEMORY ? &ps->memory : &ps->io;
}

void rt_psi_null(rt_psi *out)
{
    static const rt_cg_psi_raw none; /* no line: every figure null */
    for (int r = 0; r < RT_PSI_N; r++)
        rt_pressure_fill(rt_psi_at(out, r), &none, &none, false, 0.0);
}

/* The growth of a total over elapsed seconds as a percent, held to 0..100; NaN when it
 * cannot be told. */
static double pct_of(bool has_cur, uint64_t cur, bool has_prev, uint64_t prev, double elapsed)
{
    if (!has_cur || !has_prev || !(elapsed > 0))
        return NAN;
    double pct = (double)rt_delta_u64(cur, prev) / (elapsed * 1e6) * 100.0;
    return pct > 100.0 ? 100.0 : pct;
}

void rt_pressure_fill(rt_pressure *out, const rt_cg_psi_raw *cur, const rt_cg_psi_raw *prev, bool have_prev,
                      double elapsed)
{
    bool ps = have_prev && prev->has_some, pf = have_prev && prev->has_full;
    out->some_avg10 = cur->has_some ? cur->some_avg10 : NAN;
    out->full_avg10 = cur->has_full ? cur->full_avg10 : NAN;
    out->some_total_usec = cur->has_some ? cur->some_total_usec : RT_NULL_U64;
    out->full_total_usec = cur->has_full ? cur->full_total_usec : RT_NULL_U64;
    out->some_pct = pct_of(cur->has_some, cur->some_total_usec, ps, prev->some_total_usec, elapsed);
    out->full_pct = pct_of(cur->has_full, cur->full_total_usec, pf, prev->full_total_usec, elapsed);
}

void rt_psi_part_open(rt_psi_part *p, rt_sample_ctx *c)
{
    for (int r = 0; r < RT_PSI_N; r++) {
        p->fd[r] = rt_open_keep(c->roots.proc_fd, psi_files[r]);
        if (p->fd[r] == -EMFILE || p->fd[r] == -ENFILE) {
            p->fd[r] = RT_CTX_REOPEN; /* descriptors short: opened for each read */
        } else if (p->fd[r] < 0) {
            rt_log(&c->log, RT_LOG_DEBUG, "no %s/%s: %s", c->roots.proc, psi_files[r], strerror(-p->fd[r]));
            p->fd[r] = -1;
        }
    }
}

bool rt_psi_part_snapshot(rt_psi_part *p, rt_sample_ctx *c)
{
    p->any = false;
    for (int r = 0; r < RT_PSI_N; r++) {
        p->have_cur[r] = false;
        if (p->fd[r] == -1)
            continue;
        int fd = p->fd[r], once = -1;
        if (fd == RT_CTX_REOPEN && (fd = once = rt_open_at(c->roots.proc_fd, psi_files[r])) < 0)
            continue; /* none for this read */
        ssize_t n = rt_read_fd_grow(fd, &c->rbuf, RT_READ_SINGLE);
        rt_close(&once);
        if (n < 0) { /* EOPNOTSUPP with psi=0: it will not change, stop asking */
            rt_log(&c->log, RT_LOG_DEBUG, "cannot read %s/%s: %s", c->roots.proc, psi_files[r], strerror((int)-n));
            rt_close(&p->fd[r]);
            p->fd[r] = -1;
            continue;
        }
        p->have_cur[r] = rt_cg_parse_pressure(c->rbuf.data, (size_t)n, &p->cur[r]) == 0;
        p->any |= p->have_cur[r];
    }
    return p->any;
}

const rt_psi *rt_psi_part_delta(rt_psi_part *p, double elapsed)
{
    static const rt_cg_psi_raw none;
    for (int r = 0; r < RT_PSI_N; r++)
        rt_pressure_fill(rt_psi_at(&p->out, r), p->have_cur[r] ? &p->cur[r] : &none, &p->prev[r],
                         p->have_cur[r] && p->have_prev[r], elapsed);
    return p->any ? &p->out : NULL;
}

void rt_psi_part_commit(rt_psi_part *p)
{
    for (int r = 0; r < RT_PSI_N; r++) {
        p->have_prev[r] = p->have_cur[r];
        if (p->have_cur[r])
            p->prev[r] = p->cur[r];
    }
}

void rt_psi_part_close(rt_psi_part *p)
{
    for (int r = 0; r < RT_PSI_N; r++)
        rt_close(&p->fd[r]);
}
