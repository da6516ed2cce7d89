/* cloud.h - what each cloud vendor's metadata replies say, read by pure functions over a
 * reply body (the HTTP requests stay in cloud.c); each has unit tests and a fuzz target. And
 * the discovery handle shared: a part of the library that looks at the result from a thread of
 * its own holds a reference of its own, so the caller's handle need not outlive it. Not public. */
#ifndef RT_CLOUD_H
#define RT_CLOUD_H

#include <stdbool.h>
#include <stddef.h>

#include "resource_tracker.h"

/* d with one more reference (NULL for NULL); rt_cloud_free drops one, the last frees. */
rt_cloud_discovery *rt_cloud_ref(rt_cloud_discovery *d);
/* The references d has now: the caller's, each running probe's and each holder's (for tests). */
int rt_cloud_refs(rt_cloud_discovery *d);

/* What one vendor's probe learnt. Each string is "" or a plausible identifier: 1 to 100
 * characters of letters, digits and "-_.:/" (garbage answers are dropped, never copied). */
typedef struct rt_cloud_facts {
    bool found; /* the vendor's own evidence says this machine is its */
    char account[128], region[128], zone[128], type[128];
} rt_cloud_facts;

/* Every parser below takes a reply body: the bytes (not NUL-terminated; never read past len;
 * buf may be NULL when len is 0), a JSON reply through jansson. Fields are only ever set, never
 * cleared, and only to identifiers as above: a field the reply lacks, or holds with the wrong
 * type or a garbage value, stays as it was. */

/* A plain-text value (AWS and Alibaba meta-data leaves, GCP project-id, OVH instance-type),
 * surrounding whitespace trimmed: copies it into out (cap > 100) and returns true when it is
 * an identifier; else out is unchanged and false. */
bool rt_cloud_text_parse(const char *buf, size_t len, char *out, size_t cap);

/* AWS /latest/meta-data/services/domain: true for "amazonaws.com" or "amazonaws.com.cn". */
bool rt_cloud_aws_domain_parse(const char *buf, size_t len);

/* AWS /latest/dynamic/instance-identity/document (a JSON object): accountId, region,
 * availabilityZone and instanceType into account, region, zone and type. Returns false when
 * the body is not a JSON object. Sets no found flag: the services domain decides that. */
bool rt_cloud_aws_identity_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* GCP /computeMetadata/v1/instance/zone ("projects/NUMBER/zones/europe-west1-b"): the last
 * part as zone, and that up to its last '-' as region. Returns true (and sets found) when the
 * last part is an identifier. */
bool rt_cloud_gcp_zone_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* GCP /computeMetadata/v1/instance/machine-type ("projects/N/machineTypes/n2-standard-8"):
 * the last part, as rt_cloud_text_parse. */
bool rt_cloud_gcp_machine_type_parse(const char *buf, size_t len, char *out, size_t cap);

/* Azure /metadata/instance: a "compute" object with an identifier "location" and a string
 * "vmId" or "azEnvironment" sets found, region (location), zone, type (vmSize) and account
 * (subscriptionId). Returns found. */
bool rt_cloud_azure_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* Alibaba /latest/meta-data/region-id: an identifier with a '-' ("cn-hangzhou") sets found
 * and region. Returns found. */
bool rt_cloud_alicloud_region_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* Hetzner /hetzner/v1/metadata ("key: value" lines): both "instance-id" and
 * "availability-zone" identifiers (the last valid line of each) set found, zone ("fsn1-dc14")
 * and region (the zone before "-dc": "fsn1"). Returns found. */
bool rt_cloud_hcloud_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* UpCloud /metadata/v1.json: "cloud_name" "upcloud" and an identifier "region" set found,
 * region and zone (both the UpCloud zone, e.g. "fi-hel1"). Returns found. */
bool rt_cloud_upcloud_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* Vultr /v1.json: an identifier "instanceid" sets found; region.regioncode, lowercased, sets
 * region. Returns found. */
bool rt_cloud_vultr_parse(const char *buf, size_t len, rt_cloud_facts *out);

/* OVHcloud /openstack/latest/network_data.json: true (found, set by the caller) when its
 * "services" array lists OVH's resolver (type "dns", address "213.186.33.99"). */
bool rt_cloud_ovh_network_parse(const char *buf, size_t len);

/* OVHcloud /openstack/latest/meta_data.json: availability_zone (unless "nova") as region,
 * project_id as account. Returns false when the body is not a JSON object. */
bool rt_cloud_ovh_meta_parse(const char *buf, size_t len, rt_cloud_facts *out);

#endif
