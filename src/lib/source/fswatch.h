/* fswatch.h - the peak of what memory filesystems hold between two walks (see fswatch.c): a
 * thread woken by the kernel's fanotify when a file of a marked filesystem is written, which
 * reads the filesystems' used blocks then (at most every RT_FSWATCH_GAP_MS). Root only. Not
 * public. */
#ifndef RT_FSWATCH_H
#define RT_FSWATCH_H

#include <stddef.h>
#include <stdint.h>

/* The least time between two readings of the thread (a write and its file's removal closer than
 * this after a reading can be missed). */
#define RT_FSWATCH_GAP_MS 20
#define RT_FSWATCH_PATHS 64

typedef struct rt_fswatch rt_fswatch;

/* A watch with no filesystem marked yet (its thread starts at the first mark); NULL where the
 * kernel refuses a fanotify group (not root: filesystem marks ask CAP_SYS_ADMIN) or on no memory. */
rt_fswatch *rt_fswatch_new(void);

/* Marks the filesystem path is on (its writes wake the thread). Returns 0, or -1 (refused: the
 * filesystem reports no file ids, or the thread could not start). */
int rt_fswatch_mark(rt_fswatch *w, const char *path);

/* The paths whose used blocks the thread reads at each reading (at most RT_FSWATCH_PATHS,
 * copied): the marked filesystems as the caller reaches them now, each in group groups[i] (below
 * RT_FSWATCH_GROUPS; NULL: all in group 0). A group's figure is the sum of its paths'. */
#define RT_FSWATCH_GROUPS 2
void rt_fswatch_set_paths(rt_fswatch *w, const char *const *paths, const unsigned *groups, size_t n);

/* The largest figure of group the thread read since the last call for it (KiB; 0: none), and
 * starts it again. */
uint64_t rt_fswatch_take_peak(rt_fswatch *w, unsigned group);
/* The same figure without starting it again (a look between takes: a test waits on it). */
uint64_t rt_fswatch_peak(rt_fswatch *w, unsigned group);

/* How many readings the thread made, and its CPU time (seconds), so far. */
void rt_fswatch_cost(rt_fswatch *w, uint64_t *readings, double *cpu_secs);

/* Stops the thread and closes the watch; NULL is fine. */
void rt_fswatch_free(rt_fswatch *w);

#endif
