/* sqlite_serve.h - the loader helper's side of the static build's SQLite calls
 * (lib/sqlite/sqlite_bridge.h). */
#ifndef RT_BRIDGE_SQLITE_SERVE_H
#define RT_BRIDGE_SQLITE_SERVE_H

#include "../core/wire.h"

/* Reads one call from q (after RT_BRIDGE_SQLITE), makes it with the loaded SQLite
 * (rt_sqlite_load, resource_tracker/sqlite.h) and writes its answer into a. */
void rt_bridge_sqlite_serve(rt_wire *q, rt_wire *a);

#endif
