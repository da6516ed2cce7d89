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

/* The most any procfs file may take in memory. */
#define RT_CTX_FILE_MAX (4u << 20)

/* Sets up c (zeroed before): the roots (NULL: /proc and /sys), the logger, the clock tick and
 * the read buffer (its owner frees roots and rbuf). Returns RT_OK, or rt_roots_open's error (the
 * last error set; nothing to free). */
rt_error rt_ctx_open(rt_sample_ctx *c, const char *proc_root, const char *sys_root, rt_logger log);

/* A kept file's descriptor when descriptors are short: the file is opened for each read. */
#define RT_CTX_REOPEN (-2)

/* Opens <proc root>/path to be kept open and re-read. Returns the fd; RT_CTX_REOPEN when it
 * opens but keeping it would eat into the descriptors left to the rest (rt_fds_keep_below), or
 * the process is out of descriptors now; -1 when it cannot be opened (logged). */
int rt_ctx_open_kept(rt_sample_ctx *c, const char *path);

/* Reads the kept file fd (RT_CTX_REOPEN: <proc root>/path opened for this read and closed)
 * whole into c->rbuf (mode: how its end is known). Returns the length, or -1 (logged as "cannot
 * read <what>") when fd is -1 or the read failed. */
ssize_t rt_ctx_read_kept(rt_sample_ctx *c, int fd, const char *path, rt_read_mode mode, const char *what);

/* Parses a list file's text into out (at most cap entries); returns how many it holds, which is
 * more than cap when out was too small (rt_netdev_parse, rt_diskstats_parse). */
typedef size_t (*rt_list_parse_fn)(const char *text, size_t len, void *out, size_t cap);

/* One reading of a list file (/proc/net/dev, /proc/diskstats): the kept file fd read as
 * rt_ctx_read_kept does (short lines), parsed into *list (entries of elem bytes), grown to hold
 * every entry. Sets *n and *sig, a signature of the entries' names (a char array at name_off in
 * each): it changes when a name comes, goes or moves, so the part rediscovers its devices.
 * Returns false when the file could not be read or the list not grown (*list, *n unchanged). */
bool rt_ctx_read_list(rt_sample_ctx *c, int fd, const char *path, rt_list_parse_fn parse, void *list, size_t *cap,
                      size_t elem, size_t name_off, size_t *n, uint64_t *sig);

/* The arrays a list part rebuilds for n devices (at least one element each, zeroed): its states
 * (state_size bytes each) into *states, the public structs the sample shows (out_size bytes
 * each) into *outs, the pointers to them into *ptrs (each argument the address of the caller's
 * pointer). All or none: returns 0, or -1 (logged as "<who>: out of memory", nothing set). */
int rt_ctx_lists_new(rt_sample_ctx *c, const char *who, size_t n, void *states, size_t state_size, void *outs,
                     size_t out_size, void *ptrs);

#endif
