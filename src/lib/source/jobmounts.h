/* jobmounts.h - memory the job keeps in files that no process maps, without a cgroup to count
 * it (see jobmounts.c): the tmpfs mounts it made in a mount namespace of its own, and what it
 * put in /dev/shm. Not public. */
#ifndef RT_JOBMOUNTS_H
#define RT_JOBMOUNTS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/core.h"

typedef struct rt_jobmounts rt_jobmounts;

/* Starts from the tracker's own mount namespace and mounts, and /dev/shm's used blocks now (the
 * base of its growth); with watch_shm, as root, /dev/shm is also read at its writes between
 * walks (fswatch.c: a thread from now on; the job's tmpfs mounts are, as root, from the first
 * one found). NULL on no memory, or where proc is not the live /proc. roots is borrowed and must
 * outlive it. */
rt_jobmounts *rt_jobmounts_new(const rt_roots *roots, bool watch_shm);

/* A process of the job that ran since it was last seen (it may have entered a namespace of its
 * own: unshare(2)): its mount namespace is looked at, and followed when it is not the tracker's
 * (the mounts made there are read at each rt_jobmounts_kib). */
void rt_jobmounts_see(rt_jobmounts *m, int64_t pid);

/* What the job holds now in those files (KiB): the used blocks of each tmpfs mounted in a
 * namespace of the job's that the tracker's own namespace does not have (of a ramfs, whose statfs
 * counts none, its files' blocks: 4,096 entries and 16 directories deep at most; each filesystem
 * once),
 * plus, of /dev/shm, the larger of what its used blocks grew by since rt_jobmounts_new (0 when
 * they fell) and the blocks of its files written since then. */
uint64_t rt_jobmounts_kib(rt_jobmounts *m);

void rt_jobmounts_free(rt_jobmounts *m);

#endif
