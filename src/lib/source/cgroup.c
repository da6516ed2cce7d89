/* cgroup.c - control groups: the mounts, a process's group, one group's counters, limits and
 * pressure (see cgroup.h). PLACEHOLDER: being written. */
#include "cgroup.h"
