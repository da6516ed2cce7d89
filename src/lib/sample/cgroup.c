/* cgroup.c (sample) - the sampler's cgroup part. PLACEHOLDER. */
#include "../source/cgroup.h"
