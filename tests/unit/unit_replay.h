/* unit_replay.h - for the unit tests of the sampler's parts: a sampler replaying a fixture
 * case (its sys tree, and a temp copy of its proc tree the test may rewrite). Include after
 * unit.h. */
#ifndef RT_UNIT_REPLAY_H
#define RT_UNIT_REPLAY_H

#include "resource_tracker.h"
#include "sample/replay.h"

/* A sampler on fixture case name (proc copied to proc_dst), statvfs answered by fn (NULL:
 * statvfs(3)), with its baseline sample taken at mono 1000. Fails the test when it cannot. */
static inline rt_sampler *unit_open_case(const char *name, const char *proc_dst, rt_statvfs_fn fn, void *user)
{
    char sys[1024];
    unit_case_roots(name, proc_dst, sys, sizeof sys);
    rt_sampler_options o = RT_SAMPLER_OPTIONS_INIT;
    o.proc_root = proc_dst;
    o.sys_root = sys;
    rt_sampler *s = NULL;
    assert_int_equal(rt_sampler_new_replay(&o, fn, user, &s), RT_OK);
    const rt_sample *smp;
    rt_sampler_sample_at(s, 1000.0, 1.7e9, &smp);
    return s;
}

#endif
