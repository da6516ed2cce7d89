/* resource_tracker/analysis.h - analysis of a run, its parts together: record.h (one record),
 * reader.h (recorded runs read back), stats.h (statistics, the cores table, gpu_tracker's view),
 * recommend.h (recommendations), notes.h (notes), keeper.h (the cheapest server), report.h
 * (the HTML report). Until 0.18 they were this one header; a program that includes it still
 * gets them all. Part of the public C API of libresource-tracker; include <resource_tracker.h>,
 * which includes every part.
 *
 * The same code serves a live run (records made from samples) and a recorded file (records
 * read back). Structs the library fills into caller storage (rt_recommendation, rt_server)
 * begin with struct_size like the options: the library fills only the fields within it. */
#ifndef RESOURCE_TRACKER_ANALYSIS_H
#define RESOURCE_TRACKER_ANALYSIS_H

#include "record.h"
#include "reader.h"
#include "stats.h"
#include "recommend.h"
#include "notes.h"
#include "keeper.h"
#include "report.h"

#endif
