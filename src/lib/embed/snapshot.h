/* snapshot.h - what saving (snapshot.c) and loading (snapshot_load.c) a run share: the
 * snapshot's version, the units of the Python tracker's rows, and the run's metadata. Internal. */
#ifndef RT_EMBED_SNAPSHOT_H
#define RT_EMBED_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#define RT_SNAP_VERSION 1
#define RT_SNAP_KIB_PER_MIB 1024.0
#define RT_SNAP_GIB 1073741824.0 /* the Python tracker 0.4's disk_space_*_gb: bytes / 1024**3 */
#define RT_SNAP_GB 1e9           /* the Python tracker 0.5's disk_space_*_gb: bytes / 1000**3 */

/* The run's metadata as saved and loaded. */
typedef struct rt_snap_meta {
    int64_t pid; /* 0: no tracked tree */
    bool children;
    double interval, start, stop;
} rt_snap_meta;

#endif
