/* replay.h - for tests only: replaying captured /proc and /sys trees through the sampler with
 * given clock readings and a stand-in for statvfs(3). Not installed and not exported from the
 * shared library; test tools link the static library. */
#ifndef RT_SAMPLE_REPLAY_H
#define RT_SAMPLE_REPLAY_H

#include "disks.h"

/* As rt_sampler_new, with fn (and user) answering every statvfs of a mount point. */
rt_error rt_sampler_new_replay(const rt_sampler_options *opts, rt_statvfs_fn fn, void *user, rt_sampler **out);

/* As rt_sampler_sample, with the clock readings given: mono_secs on a monotonic clock,
 * real_secs as Unix time. */
rt_error rt_sampler_sample_at(rt_sampler *s, double mono_secs, double real_secs, const rt_sample **out);

#endif
