/* net.c - the sampler's network part (see net.h). Interfaces are rediscovered only when the
 * names in net/dev change; an interface that stays keeps its state and kept-open files. They
 * are listed sorted by name, byte by byte (as the Rust tool lists them; net/dev's own
 * order is the order they were registered in). */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

void rt_net_part_open(rt_net_part *p, rt_sample_ctx *c)
{
    p->fd = rt_ctx_open_kept(c, "net/dev");
}

/* qsort comparison of two interfaces by name. */
static int by_name(const void *a, const void *b)
{
    const rt_iface_state *x = a, *y = b;
    return strcmp(x->info.name, y->info.name);
}

/* Rebuilds the interface list from the current parse, sorted by name; loopback is left out, a
 * new interface starts from its current counters. */
static void rediscover(rt_net_part *p, rt_sample_ctx *c)
{
    rt_iface_state *ni;
    rt_net_iface *oi;
    const rt_net_iface **op;
    if (rt_ctx_lists_new(c, "network", p->nnd, &ni, sizeof *ni, &oi, sizeof *oi, &op) < 0)
        return;
    size_t k = 0;
    for (size_t i = 0; i < p->nnd; i++) {
        rt_iface_state *f = &ni[k];
        bool reused = false;
        for (size_t j = 0; j < p->nifaces && !reused; j++) {
            rt_iface_state *old = &p->ifaces[j];
            if (old->info.name && strcmp(old->info.name, p->nd[i].name) == 0) {
                *f = *old;
                memset(old, 0, sizeof *old);
                old->info.operstate_fd = old->info.speed_fd = old->info.mtu_fd = -1;
                reused = true;
            }
        }
        if (!reused) {
            if (rt_netif_info_open(&c->roots, p->nd[i].name, &f->info) < 0)
                continue;
            f->prev_rx = p->nd[i].rx_bytes;
            f->prev_tx = p->nd[i].tx_bytes;
        }
        if (f->info.loopback) {
            rt_netif_info_free(&f->info);
            continue;
        }
        f->nd_index = i;
        op[k] = &oi[k];
        k++;
    }
    qsort(ni, k, sizeof *ni, by_name); /* each keeps its nd_index into this parse */
    for (size_t j = 0; j < p->nifaces; j++)
        rt_netif_info_free(&p->ifaces[j].info);
    rt_free_all(p->ifaces, p->out, p->out_ptrs);
    p->ifaces = ni;
    p->nifaces = k;
    p->out = oi;
    p->out_ptrs = op;
}

/* Reads an integer attribute through its kept fd. */
static int64_t read_int_attr(int fd)
{
    if (fd < 0)
        return RT_NULL_I64;
    char buf[32];
    return rt_parse_attr_int(buf, rt_pread_single(fd, buf, sizeof buf));
}

/* Reads the link's speed once: as rt_parse_speed (RT_NULL_I64 for -1) into *speed, and the
 * number as written into *reported. */
static void read_speed(int fd, int64_t *speed, int64_t *reported)
{
    char buf[32] = "";
    ssize_t n = fd >= 0 ? rt_pread_single(fd, buf, sizeof buf) : -1;
    *speed = rt_parse_speed(buf, n);
    *reported = rt_parse_attr_int(buf, n);
}

/* Re-reads f's operstate, speed and MTU. */
static void read_attrs(rt_iface_state *f)
{
    f->attrs_read = true;
    f->have_operstate = false;
    if (f->info.operstate_fd >= 0) {
        ssize_t m = rt_pread_single(f->info.operstate_fd, f->operstate, sizeof f->operstate);
        while (m > 0 && (f->operstate[m - 1] == '\n' || f->operstate[m - 1] == ' '))
            f->operstate[--m] = '\0';
        f->have_operstate = m > 0;
    }
    read_speed(f->info.speed_fd, &f->speed_mbps, &f->speed_reported);
    f->mtu = read_int_attr(f->info.mtu_fd);
}

static size_t parse_netdev(const char *text, size_t len, void *out, size_t cap)
{
    return rt_netdev_parse(text, len, out, cap);
}

bool rt_net_part_snapshot(rt_net_part *p, rt_sample_ctx *c, double mono)
{
    p->have_cur = false;
    uint64_t sig;
    if (!rt_ctx_read_list(c, p->fd, "net/dev", parse_netdev, &p->nd, &p->nd_cap, sizeof *p->nd,
                          offsetof(rt_netdev, name), &p->nnd, &sig))
        return false;
    if (sig != p->nd_sig || !p->ifaces) {
        p->nd_sig = sig;
        rediscover(p, c);
    }
    /* link state, speed and MTU change rarely: re-read every few seconds, not every sample */
    bool refresh = mono - p->attrs_mono >= RT_NET_ATTR_REFRESH_SECS || mono < p->attrs_mono;
    if (refresh)
        p->attrs_mono = mono;
    for (size_t i = 0; i < p->nifaces; i++)
        if (refresh || !p->ifaces[i].attrs_read)
            read_attrs(&p->ifaces[i]);
    p->have_cur = true;
    return true;
}

void rt_net_part_delta(rt_net_part *p, double elapsed)
{
    if (!p->have_cur)
        return;
    for (size_t i = 0; i < p->nifaces; i++) {
        const rt_iface_state *f = &p->ifaces[i];
        const rt_netdev *nd = &p->nd[f->nd_index];
        rt_net_iface *o = &p->out[i];
        o->interface = f->info.name;
        o->mac_address = f->info.mac_address;
        o->driver = f->info.driver;
        o->operstate = f->have_operstate ? f->operstate : NULL;
        o->speed_mbps = f->speed_mbps;
        o->speed_mbps_reported = f->speed_reported;
        o->mtu = f->mtu;
        o->rx_bytes_total = nd->rx_bytes;
        o->tx_bytes_total = nd->tx_bytes;
        o->rx_bytes = rt_delta_u64(nd->rx_bytes, f->prev_rx);
        o->tx_bytes = rt_delta_u64(nd->tx_bytes, f->prev_tx);
        o->rx_bytes_per_sec = elapsed > 0 ? (double)o->rx_bytes / elapsed : NAN;
        o->tx_bytes_per_sec = elapsed > 0 ? (double)o->tx_bytes / elapsed : NAN;
    }
}

void rt_net_part_commit(rt_net_part *p)
{
    if (!p->have_cur)
        return;
    for (size_t i = 0; i < p->nifaces; i++) {
        p->ifaces[i].prev_rx = p->nd[p->ifaces[i].nd_index].rx_bytes;
        p->ifaces[i].prev_tx = p->nd[p->ifaces[i].nd_index].tx_bytes;
    }
}

void rt_net_part_close(rt_net_part *p)
{
    rt_close(&p->fd);
    for (size_t i = 0; i < p->nifaces; i++)
        rt_netif_info_free(&p->ifaces[i].info);
    free(p->ifaces);
    free(p->out);
    free(p->out_ptrs);
    free(p->nd);
}
