/* taskstats.c - the kernel's record of every exiting task (generic netlink family "TASKSTATS",
 * registered for every CPU's exits with TASKSTATS_CMD_ATTR_REGISTER_CPUMASK): its peak RSS
 * (hiwater_rss), CPU, start and lifetime, parent. The protocol is small (a family lookup, one
 * registration, then one message per exit), spoken here over a raw socket. The socket is read
 * without waiting at each walk of the tree; its buffer bounds what waits between two walks, and
 * an overflow (exits lost) is said once, never blocking the sampler. Root only (the kernel asks
 * CAP_NET_ADMIN, and the initial pid namespace). */
#define _GNU_SOURCE /* SO_RCVBUFFORCE, struct timeval */
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "taskstats.h"

/* What a socket buffer holds of exits between two walks: about 1 KiB of the kernel's memory
 * each (a message of ~450 bytes in its buffer), so some 8,000 at 8 MiB. */
#define RCVBUF_BYTES (8 << 20)
/* Messages taken by one recvmmsg (one exit's message is some 600 bytes, a thread group's last
 * exit twice that): a syscall for 16 exits, not one each. */
#define BATCH 16
#define SLOT 4096

struct rt_taskstats {
    int fd;
    uint16_t family;
    uint32_t seq;
    rt_logger log;
    uint64_t lost;
    char mask[256]; /* the CPUs registered, as the kernel's list ("0-15") */
    rt_exit_rec *recs;
    size_t nrecs, cap;
    char *buf; /* BATCH * SLOT bytes, not zeroed: a page of it is touched only when a message
                * lands there (a tracker that sees few exits holds few of its 64 KiB in RSS: the
                * embedded tracker's footprint test) */
};

/* ---- parsing -------------------------------------------------------------------------------- */

/* The attributes of [p, p+len): calls fn for each with its type and payload. */
typedef void (*attr_fn)(void *user, uint16_t type, const char *data, size_t len);

static void each_attr(const char *p, size_t len, attr_fn fn, void *user)
{
    while (len >= NLA_HDRLEN) {
        struct nlattr a;
        memcpy(&a, p, sizeof a);
        if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
            return; /* malformed: the rest cannot be trusted */
        fn(user, (uint16_t)(a.nla_type & NLA_TYPE_MASK), p + NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
        size_t step = NLA_ALIGN(a.nla_len);
        if (step >= len)
            return;
        p += step;
        len -= step;
    }
}

static uint32_t u32_of(const char *data, size_t len)
{
    uint32_t v = 0;
    if (len >= sizeof v)
        memcpy(&v, data, sizeof v);
    return v;
}

/* One AGGR_PID or AGGR_TGID nest being read. */
typedef struct nest {
    rt_exit_rec rec;
    bool have_id, have_stats;
} nest;

static void nest_attr(void *user, uint16_t type, const char *data, size_t len)
{
    nest *n = user;
    if ((type == TASKSTATS_TYPE_PID || type == TASKSTATS_TYPE_TGID) && len >= 4) {
        uint32_t id = u32_of(data, len);
        if (type == TASKSTATS_TYPE_PID)
            n->rec.pid = id;
        else
            n->rec.tgid = id;
        n->have_id = true;
    } else if (type == TASKSTATS_TYPE_STATS && len >= offsetof(struct taskstats, ac_uid)) {
        /* any version: the struct only grows, at its end; what an older kernel lacks reads 0 */
        struct taskstats ts;
        memset(&ts, 0, sizeof ts);
        memcpy(&ts, data, len < sizeof ts ? len : sizeof ts);
        rt_exit_rec *r = &n->rec;
        r->ppid = ts.ac_ppid;
        r->exitcode = ts.ac_exitcode;
        r->hiwater_rss_kib = ts.hiwater_rss;
        r->hiwater_vm_kib = ts.hiwater_vm;
        r->coremem = ts.coremem;
        r->btime = ts.ac_btime64 ? ts.ac_btime64 : ts.ac_btime;
        r->etime_us = ts.ac_etime;
        r->utime_us = ts.ac_utime;
        r->stime_us = ts.ac_stime;
        r->run_ns = ts.cpu_run_virtual_total;
        if (!r->group && ts.ac_tgid)
            r->tgid = ts.ac_tgid;
        n->have_stats = true;
    }
}

typedef struct parse_ctx {
    rt_exit_rec *out;
    size_t max, n;
} parse_ctx;

static void top_attr(void *user, uint16_t type, const char *data, size_t len)
{
    parse_ctx *c = user;
    if ((type != TASKSTATS_TYPE_AGGR_PID && type != TASKSTATS_TYPE_AGGR_TGID) || c->n >= c->max)
        return;
    nest n;
    memset(&n, 0, sizeof n);
    n.rec.group = type == TASKSTATS_TYPE_AGGR_TGID;
    each_attr(data, len, nest_attr, &n);
    if (!n.have_id || !n.have_stats)
        return;
    if (n.rec.group)
        n.rec.pid = n.rec.tgid; /* the group's record: its figures are the group's (delays) */
    else if (!n.rec.tgid)
        n.rec.tgid = n.rec.pid; /* a kernel before ac_tgid: each task stands for its process */
    c->out[c->n++] = n.rec;
}

size_t rt_taskstats_parse(const void *buf, size_t len, uint16_t family_id, rt_exit_rec *out, size_t max)
{
    parse_ctx c = {out, max, 0};
    const char *p = buf;
    while (len >= NLMSG_HDRLEN) {
        struct nlmsghdr h;
        memcpy(&h, p, sizeof h);
        if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
            break;
        if (h.nlmsg_type == family_id && h.nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN)) {
            struct genlmsghdr g;
            memcpy(&g, p + NLMSG_HDRLEN, sizeof g);
            if (g.cmd == TASKSTATS_CMD_NEW)
                each_attr(p + NLMSG_LENGTH(GENL_HDRLEN), h.nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), top_attr, &c);
        }
        size_t step = NLMSG_ALIGN(h.nlmsg_len);
        if (step >= len)
            break;
        p += step;
        len -= step;
    }
    return c.n;
}

/* ---- the socket ----------------------------------------------------------------------------- */

/* Sends one generic netlink request: cmd of family with one string or u16 attribute. */
static int send_req(rt_taskstats *ts, uint16_t family, uint8_t cmd, uint8_t version, uint16_t attr, const void *val,
                    size_t vlen, bool ack)
{
    char msg[512];
    size_t alen = NLA_HDRLEN + vlen;
    size_t total = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(alen);
    if (total > sizeof msg)
        return -1;
    memset(msg, 0, sizeof msg);
    struct nlmsghdr h = {.nlmsg_len = (uint32_t)total,
                         .nlmsg_type = family,
                         .nlmsg_flags = (uint16_t)(NLM_F_REQUEST | (ack ? NLM_F_ACK : 0)),
                         .nlmsg_seq = ++ts->seq};
    struct genlmsghdr g = {.cmd = cmd, .version = version};
    struct nlattr a = {.nla_len = (uint16_t)alen, .nla_type = attr};
    memcpy(msg, &h, sizeof h);
    memcpy(msg + NLMSG_HDRLEN, &g, sizeof g);
    memcpy(msg + NLMSG_LENGTH(GENL_HDRLEN), &a, sizeof a);
    memcpy(msg + NLMSG_LENGTH(GENL_HDRLEN) + NLA_HDRLEN, val, vlen);
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};
    ssize_t w = sendto(ts->fd, msg, total, 0, (struct sockaddr *)&to, sizeof to);
    return w == (ssize_t)total ? 0 : -1;
}

static void family_attr(void *user, uint16_t type, const char *data, size_t len)
{
    if (type == CTRL_ATTR_FAMILY_ID && len >= 2)
        memcpy(user, data, 2);
}

/* Waits (the socket's receive timeout) for the answer to request seq: the family's id into
 * *family when asked, or the acknowledgement. Returns 0, or an errno. Exit messages that come
 * first are dropped (the registration's own moment). */
static int await(rt_taskstats *ts, uint32_t seq, uint16_t *family)
{
    for (int tries = 0; tries < 64; tries++) {
        struct sockaddr_nl from;
        socklen_t flen = sizeof from;
        ssize_t r = recvfrom(ts->fd, ts->buf, (size_t)BATCH * SLOT, 0, (struct sockaddr *)&from, &flen);
        if (r < 0) {
            if (errno == EINTR || errno == ENOBUFS)
                continue;
            return errno;
        }
        size_t len = (size_t)r;
        const char *p = ts->buf;
        while (len >= NLMSG_HDRLEN) {
            struct nlmsghdr h;
            memcpy(&h, p, sizeof h);
            if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
                break;
            if (h.nlmsg_seq == seq && from.nl_pid == 0) {
                if (h.nlmsg_type == NLMSG_ERROR) {
                    struct nlmsgerr e;
                    if (h.nlmsg_len < NLMSG_LENGTH(sizeof e))
                        return EPROTO;
                    memcpy(&e, p + NLMSG_HDRLEN, sizeof e);
                    return e.error ? -e.error : 0;
                }
                if (family && h.nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN)) {
                    *family = 0;
                    each_attr(p + NLMSG_LENGTH(GENL_HDRLEN), h.nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), family_attr,
                              family);
                    return *family ? 0 : EPROTO;
                }
            }
            size_t step = NLMSG_ALIGN(h.nlmsg_len);
            if (step >= len)
                break;
            p += step;
            len -= step;
        }
    }
    return ETIMEDOUT;
}

/* The CPUs to register: every possible one (hotplugged ones too), else the online ones. */
static bool cpu_mask(char *out, size_t cap)
{
    const char *files[] = {"/sys/devices/system/cpu/possible", "/sys/devices/system/cpu/online"};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "re");
        if (!f)
            continue;
        bool ok = fgets(out, (int)cap, f) != NULL;
        fclose(f);
        if (ok) {
            out[strcspn(out, "\n")] = '\0';
            if (out[0])
                return true;
        }
    }
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n < 1)
        return false;
    snprintf(out, cap, "0-%ld", n - 1);
    return true;
}

rt_taskstats *rt_taskstats_open(const rt_logger *log)
{
    rt_taskstats *ts = calloc(1, sizeof *ts);
    if (!ts)
        return NULL;
    if (!(ts->buf = malloc((size_t)BATCH * SLOT))) {
        free(ts);
        return NULL;
    }
    if (log)
        ts->log = *log;
    const char *why = NULL;
    int err = 0;
    ts->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    struct sockaddr_nl me = {.nl_family = AF_NETLINK};
    struct timeval tv = {.tv_sec = 1};
    if (ts->fd < 0 || bind(ts->fd, (struct sockaddr *)&me, sizeof me) < 0 ||
        setsockopt(ts->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
        why = "no generic netlink socket";
        err = errno;
        goto fail;
    }
    int bytes = RCVBUF_BYTES;
    if (setsockopt(ts->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) < 0)
        (void)setsockopt(ts->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    static const char name[] = TASKSTATS_GENL_NAME;
    if (send_req(ts, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, CTRL_ATTR_FAMILY_NAME, name, sizeof name, false) < 0 ||
        (err = await(ts, ts->seq, &ts->family)) != 0) {
        why = "no TASKSTATS family";
        err = err ? err : errno;
        goto fail;
    }
    if (!cpu_mask(ts->mask, sizeof ts->mask)) {
        why = "no CPU list";
        goto fail;
    }
    if (send_req(ts, ts->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
                 ts->mask, strlen(ts->mask) + 1, true) < 0 ||
        (err = await(ts, ts->seq, NULL)) != 0) {
        why = "registration refused";
        err = err ? err : errno;
        goto fail;
    }
    int fl = fcntl(ts->fd, F_GETFL);
    if (fl < 0 || fcntl(ts->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        why = "no non-blocking socket";
        err = errno;
        rt_taskstats_close(ts); /* registered: deregister */
        rt_log(log, RT_LOG_DEBUG, "taskstats: %s (%s): exits are not counted at their peak", why, strerror(err));
        return NULL;
    }
    ts->recs = malloc(256 * sizeof *ts->recs); /* now: a steady sampler allocates nothing */
    ts->cap = ts->recs ? 256 : 0;
    rt_log(log, RT_LOG_DEBUG, "taskstats: listening to the exits of CPUs %s (family %u)", ts->mask, ts->family);
    return ts;
fail:
    rt_log(log, RT_LOG_DEBUG, "taskstats: %s%s%s%s: exits are not counted at their peak", why, err ? " (" : "",
           err ? strerror(err) : "", err ? ")" : "");
    if (ts->fd >= 0)
        close(ts->fd);
    free(ts->buf);
    free(ts);
    return NULL;
}

void rt_taskstats_drain(rt_taskstats *ts, const rt_exit_rec **out, size_t *n)
{
    ts->nrecs = 0;
    for (;;) {
        if (ts->cap - ts->nrecs < 2 * BATCH + 8) {
            if (ts->cap >= RT_TASKSTATS_MAX_DRAIN)
                break; /* the rest at the next call */
            size_t cap = ts->cap ? ts->cap * 2 : 256;
            rt_exit_rec *r = realloc(ts->recs, cap * sizeof *r);
            if (!r)
                break;
            ts->recs = r;
            ts->cap = cap;
        }
        struct sockaddr_nl from[BATCH];
        struct iovec iov[BATCH];
        struct mmsghdr msgs[BATCH];
        for (size_t i = 0; i < BATCH; i++) {
            iov[i] = (struct iovec){ts->buf + i * SLOT, SLOT};
            msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &from[i], .msg_namelen = sizeof from[i],
                                                   .msg_iov = &iov[i], .msg_iovlen = 1}};
        }
        int got = recvmmsg(ts->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) {
                if (ts->lost++ == 0)
                    rt_log(&ts->log, RT_LOG_WARN,
                           "taskstats: more processes ended between two samples than its buffer holds: some were "
                           "lost, and the memory need may miss their peaks");
                continue;
            }
            break; /* EAGAIN: nothing more now */
        }
        for (int i = 0; i < got; i++)
            if (from[i].nl_pid == 0) /* only the kernel speaks here */
                ts->nrecs += rt_taskstats_parse(ts->buf + (size_t)i * SLOT, msgs[i].msg_len, ts->family,
                                                ts->recs + ts->nrecs, ts->cap - ts->nrecs);
        if (got < BATCH)
            break; /* none left */
    }
    *out = ts->recs;
    *n = ts->nrecs;
}

uint64_t rt_taskstats_lost(const rt_taskstats *ts)
{
    return ts ? ts->lost : 0;
}

void rt_taskstats_close(rt_taskstats *ts)
{
    if (!ts)
        return;
    if (ts->fd >= 0) {
        (void)send_req(ts, ts->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
                       TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, ts->mask, strlen(ts->mask) + 1, false);
        close(ts->fd);
    }
    free(ts->recs);
    free(ts->buf);
    free(ts);
}
