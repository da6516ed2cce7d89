/* context.h - what every part of the sampler shares: the path roots, the logger, the clock
 * tick, and the one buffer every kept-open procfs file is read through. Not public.
 * Each part (cpu.c, memory.c, disks.c, net.c, tree.c, gpu.c) owns its reading, its previous
 * reading and the delta between them, in three steps the sampler calls in order:
 * snapshot (read and parse), delta (fill the public struct), commit (current -> previous). */
#ifndef RT_SAMPLE_CONTEXT_H
#define RT_SAMPLE_CONTEXT_H

#include "../core/core.h"
#include "../source/sources.h"

typedef struct rt_sample_ctx {
    rt_roots roots;
    rt_logger log;
    long clk_tck; /* clock ticks per second of /proc/stat */
    rt_buf rbuf;  /* reused by every part; its contents are valid until the next read */
} rt_sample_ctx;

/* Opens <proc root>/path to be kept open and re-read. Returns the fd, or -1 (logged). */
int rt_ctx_open_kept(rt_sample_ctx *c, const char *path);

/* Reads the kept file fd whole into c->rbuf (mode: how its end is known). Returns the length,
 * or -1 (logged as "cannot read <what>") when fd is -1 or the read failed. */
ssize_t rt_ctx_read_kept(rt_sample_ctx *c, int fd, rt_read_mode mode, const char *what);

#endif
