/* net.h - the sampler's network part: /proc/net/dev counters per non-loopback interface, with
 * the interface's facts from sysfs (MAC, driver) and its state, speed and MTU re-read every
 * few seconds through kept-open attribute files. */
#ifndef RT_SAMPLE_NET_H
#define RT_SAMPLE_NET_H

#include "context.h"

/* How often an interface's operstate, speed and MTU are re-read. */
#define RT_NET_ATTR_REFRESH_SECS 5.0

typedef struct rt_iface_state {
    rt_netif_info info;
    size_t nd_index;        /* its line in the current net/dev parse */
    uint64_t prev_rx, prev_tx; /* bytes at the previous reading */
    char operstate[32];
    bool have_operstate;
    int64_t speed_mbps, mtu;
    int64_t speed_reported; /* the speed file's integer as written (-1 too); RT_NULL_I64: unread */
    bool attrs_read; /* operstate, speed and mtu read at least once */
} rt_iface_state;

typedef struct rt_net_part {
    int fd; /* /proc/net/dev, kept open */
    rt_netdev *nd; /* the current parse */
    size_t nnd, nd_cap;
    uint64_t nd_sig; /* hash of the interface names: rediscovery when it changes */
    bool have_cur;
    rt_iface_state *ifaces;
    size_t nifaces;
    double attrs_mono; /* when the attributes were last re-read */
    rt_net_iface *out;
    const rt_net_iface **out_ptrs;
} rt_net_part;

/* Opens /proc/net/dev (a missing file leaves the network list empty). */
void rt_net_part_open(rt_net_part *p, rt_sample_ctx *c);
/* Reads net/dev (rediscovering the interfaces when the list changed) and, every
 * RT_NET_ATTR_REFRESH_SECS of mono, the interfaces' state, speed and MTU. Returns whether
 * net/dev could be read. */
bool rt_net_part_snapshot(rt_net_part *p, rt_sample_ctx *c, double mono);
/* Fills the interface structs for an interval of elapsed seconds (rates null at 0). */
void rt_net_part_delta(rt_net_part *p, double elapsed);
/* Makes the current byte counts the previous ones. */
void rt_net_part_commit(rt_net_part *p);
void rt_net_part_close(rt_net_part *p);

#endif
