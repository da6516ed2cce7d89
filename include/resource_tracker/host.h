/* resource_tracker/host.h - the host and the cloud it runs in (rt_host, rt_allocation, rt_cloud).
 * Part of the public C API of libresource-tracker; include <resource_tracker.h>, which includes
 * every part. */
#ifndef RESOURCE_TRACKER_HOST_H
#define RESOURCE_TRACKER_HOST_H

#include "sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * The host and the cloud it runs in. */

typedef struct rt_host {
    const char *hostname;
    const char *host_id;   /* /etc/machine-id */
    const char *ip;        /* the address of the interface of the default route */
    int64_t vcpus;         /* online logical CPUs */
    const char *cpu_model;
    double memory_mib;
    const char *gpu_model; /* the GPUs' name (the first one's when they differ); NULL without */
    int64_t gpu_count;
    double gpu_memory_mib; /* VRAM over all GPUs */
    double storage_gb;     /* capacity of the physical disks, in 10^9 bytes */
    const char *kernel, *os;
    const char *allocation; /* "dedicated" or "shared" to the tracked job (see rt_allocation);
                             * NULL when not known */
} rt_host;

typedef struct rt_host_options {
    size_t struct_size;       /* sizeof(rt_host_options) as the caller compiled it */
    const char *proc_root;    /* NULL: /proc */
    const char *sys_root;     /* NULL: /sys */
    rt_log_fn log;            /* NULL: messages are dropped */
    void *log_user;
    const char *nvml_library; /* NULL: libnvidia-ml.so.1 */
} rt_host_options;

#define RT_HOST_OPTIONS_INIT {.struct_size = sizeof(rt_host_options)}

/* Reads the host's facts (opts NULL for defaults). Missing facts are NULL / NaN /
 * RT_NULL_I64. Returns RT_OK and *out (free with rt_host_free), or RT_ERR_NOMEM,
 * RT_ERR_INVALID (struct_size too small) or RT_ERR_NOT_FOUND (no proc root); last error. */
RT_API rt_error rt_host_new(const rt_host_options *opts, rt_host **out);
RT_API void rt_host_free(rt_host *h);

/* Whether the machine looks dedicated to the tracked tree or shared with other work, from the
 * run's samples: shared when, on average, the rest of the machine used at least 0.5 cores and
 * a quarter of what the tree used, or 1 GiB of memory and a quarter of the tree's PSS, or the
 * like for GPU time (0.1 GPU) and VRAM (1 GiB). */
typedef struct rt_allocation rt_allocation;

/* Options of the accumulator: none yet but the size, room to grow. */
typedef struct rt_allocation_options {
    size_t struct_size; /* sizeof(rt_allocation_options) as the caller compiled it */
} rt_allocation_options;

#define RT_ALLOCATION_OPTIONS_INIT {.struct_size = sizeof(rt_allocation_options)}

/* A new, empty accumulator (opts NULL for defaults). Returns RT_OK and *out (free with
 * rt_allocation_free), RT_ERR_INVALID (out NULL, struct_size too small; last error),
 * RT_ERR_NOMEM. */
RT_API rt_error rt_allocation_new_with(const rt_allocation_options *opts, rt_allocation **out);
/* Adds one sample (one with a tracked process; others are ignored). */
RT_API void rt_allocation_add(rt_allocation *a, const rt_sample *s);
/* "dedicated" or "shared" (static strings), or NULL without samples. */
RT_API const char *rt_allocation_guess(const rt_allocation *a);
RT_API void rt_allocation_free(rt_allocation *a);

typedef struct rt_cloud {
    const char *vendor_id;     /* aws, gcp, azure, hcloud, upcloud, alicloud, ovh, vultr */
    const char *account_id, *region_id, *zone_id, *instance_type;
    double discovery_secs;     /* how long discovery took */
} rt_cloud;

typedef struct rt_cloud_options {
    size_t struct_size;       /* sizeof(rt_cloud_options) as the caller compiled it */
    int disabled;             /* non-zero: no discovery, no request at all
                               * (TRACKER_CLOUD_DISCOVERY=0 in the tool) */
    const char *metadata_url; /* replaces scheme, host and port of every endpoint (tests:
                               * TRACKER_CLOUD_METADATA_URL); NULL: the vendors' addresses */
    rt_log_fn log;            /* NULL: messages are dropped; called from the probe threads */
    void *log_user;
} rt_cloud_options;

#define RT_CLOUD_OPTIONS_INIT {.struct_size = sizeof(rt_cloud_options)}

typedef struct rt_cloud_discovery rt_cloud_discovery;

/* Starts asking every vendor's metadata service at once, in the background, for at most 2
 * seconds in all; returns at once. opts NULL for defaults. Returns RT_OK and *out (free with
 * rt_cloud_free); RT_ERR_DISABLED when opts turn discovery off (*out NULL, nothing asked);
 * RT_ERR_INVALID for a metadata_url that is not http:// or a struct_size too small;
 * RT_ERR_NOMEM. */
RT_API rt_error rt_cloud_start(const rt_cloud_options *opts, rt_cloud_discovery **out);

/* The result, waiting at most wait_secs for discovery to end (0: just look). NULL while it
 * runs (and for a NULL d). Once known it is cached: fields are NULL where a value was not
 * found, and all are NULL off a cloud. Valid until rt_cloud_free. */
RT_API const rt_cloud *rt_cloud_result(rt_cloud_discovery *d, double wait_secs);

/* Frees the discovery; probes still running finish on their own, within the 2 s bound.
 * NULL is allowed. */
RT_API void rt_cloud_free(rt_cloud_discovery *d);

/* Formats {"host": {...}, "cloud": {...}} with a newline into buf; either may be NULL (then
 * null). Returns the length needed, like snprintf. */
RT_API size_t rt_format_info(const rt_host *host, const rt_cloud *cloud, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
