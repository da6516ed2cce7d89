/* taskstats.h - every exiting task's record from the kernel's taskstats (see taskstats.c): its
 * peak RSS and the rest of its accounting, so that a process born and gone between two walks of
 * the tree is counted at its peak. Not public. */
#ifndef RT_TASKSTATS_H
#define RT_TASKSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

/* One exiting task, as the kernel's struct taskstats tells (times as it counts them). */
typedef struct rt_exit_rec {
    int64_t pid, tgid, ppid;     /* the task (thread), its process, its parent process */
    uint64_t hiwater_rss_kib;    /* the peak RSS of its memory (the process's: threads share it) */
    uint64_t hiwater_vm_kib;     /* the peak of its virtual memory */
    uint64_t coremem;            /* RSS over time, MiB-microseconds */
    uint64_t btime;              /* when it began, seconds since the epoch */
    uint64_t etime_us;           /* how long it lived */
    uint64_t utime_us, stime_us; /* its CPU, as the ticks sampled it */
    uint64_t run_ns;             /* its CPU, as the scheduler counted it (cpu_run_virtual_total:
                                    its sum_exec_runtime, exact; filled whether or not delay
                                    accounting is on); 0 where the kernel has no delay accounting
                                    built in */
    uint32_t exitcode;
    bool group;                  /* the whole thread group's record (the last thread's exit) */
} rt_exit_rec;

typedef struct rt_taskstats rt_taskstats;

/* Opens a listener of every CPU's exits (generic netlink family TASKSTATS): NULL, with a debug
 * message, where it cannot (not root: the kernel asks CAP_NET_ADMIN; a kernel without the
 * family; another pid namespace). log is borrowed and must outlive the listener. */
rt_taskstats *rt_taskstats_open(const rt_logger *log);

/* The records received since the last call, without waiting: *n of them in *out (valid until
 * the next call). At most RT_TASKSTATS_MAX_DRAIN a call (the rest is read at the next). A
 * socket buffer that overflowed (exits lost) is said once as a warning and counted in lost. */
#define RT_TASKSTATS_MAX_DRAIN 65536
void rt_taskstats_drain(rt_taskstats *ts, const rt_exit_rec **out, size_t *n);

/* How many times the socket's buffer overflowed since the open (0: no exit was lost). */
uint64_t rt_taskstats_lost(const rt_taskstats *ts);

/* Deregisters and closes; NULL is fine. */
void rt_taskstats_close(rt_taskstats *ts);

/* Parses one datagram of netlink messages from the family family_id (taskstats' exit messages:
 * TASKSTATS_TYPE_AGGR_PID and TASKSTATS_TYPE_AGGR_TGID, each a pid or tgid with its struct
 * taskstats of any version) into out, at most max records; messages of another family, errors
 * and malformed attributes are skipped. Returns how many were written. Pure. */
size_t rt_taskstats_parse(const void *buf, size_t len, uint16_t family_id, rt_exit_rec *out, size_t max);

#endif
